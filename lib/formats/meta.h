/*
 * meta.h: what a MetaGraphDef carries besides the graph: collections,
 * signatures and the saver, kept consistent with the graph's ops.
 *
 * A graph loaded from a plain GraphDef has none of these; adding to a
 * collection gives it an empty container, which a save in a container
 * format (meta, savedmodel) writes out.
 *
 * Messages returned here are owned by the graph.  A caller that changes
 * one must call the matching *_touch function so the save re-encodes it;
 * everything not touched is written back byte for byte.
 */
#ifndef GE_META_H
#define GE_META_H

#include "graph/graph.h"

struct Tensorflow__CollectionDef;
struct Tensorflow__SignatureDef;
struct Tensorflow__SaverDef;

/* Collections, in file order. */
size_t ge_collection_count(const ge_graph *g);
const char *ge_collection_name(const ge_graph *g, size_t i);
/* The decoded collection, or NULL if there is none by that name. */
struct Tensorflow__CollectionDef *ge_collection_get(ge_graph *g,
						    const char *name);
void ge_collection_touch(ge_graph *g, const char *name);
/* Appends a value to a node_list collection (made if absent).  GE_EINVAL
 * if the collection exists with another kind. */
int ge_collection_add_node(ge_graph *g, const char *name, const char *value,
			   ge_error *err);
/* Appends bytes to a bytes_list collection (made if absent). */
int ge_collection_add_bytes(ge_graph *g, const char *name, const void *p,
			    size_t n, ge_error *err);
int ge_collection_remove(ge_graph *g, const char *name);
/* Whether a collection's bytes_list holds VariableDefs (by its name:
 * variables, trainable_variables, local_variables, ...). */
int ge_collection_holds_variables(const char *name);

/* Signatures (SignatureDef map), in file order. */
size_t ge_signature_count(const ge_graph *g);
const char *ge_signature_name(const ge_graph *g, size_t i);
struct Tensorflow__SignatureDef *ge_signature_get(ge_graph *g,
						  const char *name);
void ge_signature_touch(ge_graph *g, const char *name);
/* Drops the SignatureDef `name` (GE_ENOTFOUND when absent). */
int ge_signature_remove(ge_graph *g, const char *name);
/* Renames its key: GE_ENOTFOUND when `from` is absent, GE_EINVAL when
 * `to` is taken.  The object graph is sigedit.h's business. */
int ge_signature_rename(ge_graph *g, const char *from, const char *to);

/* The MetaInfoDef, or NULL. */
struct Tensorflow__MetaGraphDef__MetaInfoDef *ge_meta_info_def(ge_graph *g);
/* Adds a field to g's MetaGraphDef (made if g has none): GE_META_INFO (a
 * MetaInfoDef), GE_META_SAVER (a SaverDef) or GE_META_SIGNATURE (a
 * SignatureDefEntry).  The graph takes msg, which must be unpacked by
 * protobuf-c.  Returns -1 (msg not taken) when g already has a MetaInfoDef
 * or SaverDef. */
enum { GE_META_INFO = 1, GE_META_SAVER = 3, GE_META_SIGNATURE = 5 };
struct ProtobufCMessage;
int ge_meta_add(ge_graph *g, int field, struct ProtobufCMessage *msg);

/* The SaverDef, or NULL. */
struct Tensorflow__SaverDef *ge_saver_def(ge_graph *g);
void ge_saver_def_touch(ge_graph *g);

/* The SavedObjectGraph of a SavedModel's meta graph, or NULL. */
struct Tensorflow__SavedObjectGraph;
struct Tensorflow__SavedObjectGraph *ge_object_graph(ge_graph *g);
void ge_object_graph_touch(ge_graph *g);

/* Whether the graph carries a MetaGraphDef container. */
int ge_graph_has_meta(const ge_graph *g);

/* Registers the container's message types for text-format Any expansion. */
void ge_meta_register_types(void);

#endif
