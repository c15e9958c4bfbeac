/*
 * model.h: model files in and out.
 *
 * ge_load reads a GraphDef (binary or text), a MetaGraphDef (binary or
 * text), a SavedModel directory (saved_model.pb or saved_model.pbtxt) or a
 * TensorFlow.js model.json, deciding by content, never by extension alone.
 * The graph remembers where it came from: a MetaGraphDef's other fields
 * (meta_info_def, collections, signatures, saver_def, object graph) and a
 * SavedModel's other meta graphs are kept as they were read and written
 * back unchanged unless edited, so a load/save round trip of an unedited
 * binary file is byte-identical.
 *
 * Saves are atomic (temp file, fsync, rename; for a SavedModel or a
 * TensorFlow.js model, a temp directory swapped into place) and refuse to overwrite the file the graph
 * was loaded from unless overwrite is set.
 */
#ifndef GE_MODEL_H
#define GE_MODEL_H

#include "base/base.h"
#include "graph/graph.h"

typedef enum ge_format {
	GE_FMT_AUTO = 0,
	GE_FMT_GRAPHDEF,        /* binary GraphDef (.pb) */
	GE_FMT_GRAPHDEF_TEXT,   /* text GraphDef (.pbtxt) */
	GE_FMT_META,            /* binary MetaGraphDef (.meta) */
	GE_FMT_META_TEXT,       /* text MetaGraphDef */
	GE_FMT_SAVEDMODEL,      /* SavedModel directory, binary saved_model.pb */
	GE_FMT_SAVEDMODEL_TEXT, /* SavedModel directory, saved_model.pbtxt */
	GE_FMT_TFJS,            /* TensorFlow.js model.json and shards */
} ge_format;

/* "graphdef", "graphdef-text" (alias "pbtxt", "text"), "meta",
 * "meta-text", "savedmodel", "savedmodel-text", "tfjs". */
const char *ge_format_name(ge_format f);
int ge_format_from_name(const char *name, ge_format *out);
int ge_format_is_text(ge_format f);

typedef struct ge_load_opts {
	ge_format format;  /* GE_FMT_AUTO: sniff */
	const char *tags;  /* SavedModel: comma-separated tag set; NULL =
			      "serve", or the only meta graph */
	int no_check;      /* skip the attr checks of ge_graph_check_attrs
			      (load a graph TensorFlow would refuse) */
} ge_load_opts;

typedef struct ge_save_opts {
	ge_format format;  /* GE_FMT_AUTO: the format it was loaded in, or
			      decided by the path's extension for new graphs */
	int overwrite;     /* allow replacing the file the graph came from */
	const char *checkpoint; /* MetaGraphDef: the bundle prefix its
			      checkpoint goes to (default: the path minus
			      .meta), when the graph has values to write */
	/* tfjs only (tfjs.h): */
	size_t shard_size; /* bytes per weight shard; 0: 4 MiB */
	int quantize;      /* a ge_tfjs_quant; 0 keeps how weights were
			      stored */
	const char *const *quantize_names; /* fnmatch patterns of the weights
			      to quantize; NULL: every float32 weight */
	size_t n_quantize_names;
} ge_save_opts;

/* Errors name the file and, where one is at fault, the node. */
int ge_load(const char *path, const ge_load_opts *opts, ge_graph **out,
	    ge_error *err);
/* Parses bytes in a given format (GE_FMT_AUTO sniffs; SavedModel formats
 * parse a SavedModel message, without a variables directory). */
int ge_parse(const uint8_t *data, size_t len, ge_format fmt, const char *name,
	     const ge_load_opts *opts, ge_graph **out, ge_error *err);
int ge_save(ge_graph *g, const char *path, const ge_save_opts *opts,
	    ge_error *err);
/* Checks a SavedModel directory's checkpoint, if it has one: the index
 * reads (table structure, block checksums) and every entry lies inside
 * its data shard; errors name the entry.  Saves of a SavedModel run it
 * unless ge_set_verify(0). */
int ge_savedmodel_verify(const char *dir, ge_error *err);
/* Encodes the whole message (GraphDef, MetaGraphDef or SavedModel) into
 * out.  fmt GE_FMT_AUTO: the loaded format. */
int ge_serialize(const ge_graph *g, ge_format fmt, ge_buf *out, ge_error *err);

/* What the graph was loaded from (GE_FMT_GRAPHDEF for new graphs). */
ge_format ge_graph_format(const ge_graph *g);
/* The SavedModel directory a graph came from, or NULL. */
const char *ge_graph_savedmodel_dir(const ge_graph *g);

/* Guesses the format of bytes: one of the GE_FMT_* values, or GE_FMT_AUTO
 * when the bytes are not a model. */
ge_format ge_sniff(const uint8_t *data, size_t len);

/* Removes a directory tree (used for temp directories). */
int ge_remove_tree(const char *path);

#endif
