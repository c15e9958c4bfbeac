/*
 * meta_impl.h: a container (MetaGraphDef or SavedModel) as model.c keeps
 * it, shared by model.c (reading, writing) and meta.c (collections,
 * signatures, saver).  Only those two files include this.
 */
#ifndef GE_META_IMPL_H
#define GE_META_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "graph/graph_impl.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* MetaGraphDef fields */
enum { MG_INFO = 1, MG_GRAPH = 2, MG_SAVER = 3, MG_COLLECTION = 4,
       MG_SIGNATURE = 5 };
/* SavedModel fields */
enum { SM_META = 2 };
/* MetaInfoDef.tags */
enum { MI_TAGS = 4 };

typedef struct seg seg;
struct seg {
	uint32_t field;
	const uint8_t *p;    /* the whole field: tag, length, payload */
	size_t len;
	const uint8_t *body; /* payload of a length-delimited field */
	size_t body_len;
	ProtobufCMessage *msg; /* decoded payload, when something read it */
	int dirty;            /* msg changed: re-pack on save */
};

struct ge_meta {
	uint8_t *buf;        /* the outer message's bytes; segs point here */
	size_t len;
	int savedmodel;
	seg *sm;             /* SavedModel top level */
	size_t n_sm, sm_sel;
	seg *mg;             /* the (selected) MetaGraphDef's top level */
	size_t n_mg;
	Tensorflow__MetaGraphDef__MetaInfoDef *info; /* decoded, read-only */
	char *dir;           /* SavedModel directory */
};

/* The container's part of a graph (model.c): freed and cloned with the
 * graph, told of renames and removals (meta.c) so that collections and
 * signatures stay consistent.  Installed on every graph that has one. */
extern const ge_graph_hooks ge_meta_hooks;
ge_meta *ge_meta_clone(const ge_meta *m);
void ge_meta_free(ge_meta *m);
void ge_meta_on_rename(ge_graph *g, const char *from, const char *to);
void ge_meta_on_remove(ge_graph *g, const char *name);
/* Every collection_def and signature_def entry decodes (meta.c): checked
 * at load, so that a name looked up later is never missing. */
int ge_meta_check_entries(ge_meta *m, const char *name, ge_error *err);
/* The function library's hooks: the SavedObjectGraph follows a function
 * renamed or removed, says which functions its objects stand for, and
 * lists its concrete functions as entry points. */
void ge_meta_on_func_rename(ge_graph *g, const char *from, const char *to);
int ge_meta_func_pinned(ge_graph *g, const char *name, char *why, size_t cap);
void ge_meta_func_roots(ge_graph *g, void (*add)(void *ud, const char *name),
			void *ud);
/* Points g->oplist / oplist_idx at the container's stripped_op_list. */
void ge_meta_attach(ge_graph *g);

#endif
