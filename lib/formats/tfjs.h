/*
 * tfjs.h: TensorFlow.js graph models (model.json and weight shards) in and
 * out.  Reading is lib/formats/tfjs.c (through ge_load), writing lib/formats/tfjs_write.c
 * (through ge_save with GE_FMT_TFJS, or a path ending in ".json").
 */
#ifndef GE_TFJS_H
#define GE_TFJS_H

#include "base/base.h"
#include "base/jsonpb.h"

struct ge_graph;
struct ge_save_opts;

/* What a loaded model.json held beyond the graph, kept for a save as tfjs.
 * Shared (reference counted) between a graph and its clones; never
 * changed after the load. */
typedef struct ge_tfjs_meta {
	int refs;
	json_t *top;          /* the members but modelTopology and
				 weightsManifest: format, generatedBy,
				 convertedBy, signature, userDefinedMetadata,
				 modelInitializer, and any others */
	json_t *quant;        /* weight name -> its "quantization" object,
				 for the weights that were stored quantized */
	json_t *extra_specs;  /* manifest entries of the weights no Const of
				 the graph took (modelInitializer's) */
	ge_buf extra_data;    /* their bytes, one after the other */
} ge_tfjs_meta;

/* What the model.json g was loaded from held, or NULL. */
ge_tfjs_meta *ge_graph_tfjs(const struct ge_graph *g);
ge_tfjs_meta *ge_tfjs_meta_ref(ge_tfjs_meta *m);
void ge_tfjs_meta_release(ge_tfjs_meta *m);

/* Quantization of a save: what the TensorFlow.js converter offers. */
typedef enum ge_tfjs_quant {
	GE_TFJS_Q_KEEP = 0,   /* as loaded: quantized weights stay so, with
				 their min and scale while the values fit */
	GE_TFJS_Q_NONE,       /* every weight in its own dtype */
	GE_TFJS_Q_UINT8,
	GE_TFJS_Q_UINT16,
	GE_TFJS_Q_FLOAT16,
} ge_tfjs_quant;

int ge_tfjs_quant_from_name(const char *name, ge_tfjs_quant *out);

#define GE_TFJS_SHARD_SIZE (4u << 20)

/* What the save wrote, for messages and tests. */
typedef struct ge_tfjs_save_info {
	size_t n_weights;
	size_t n_quantized;
	size_t n_shards;
	size_t weight_bytes;
} ge_tfjs_save_info;

/*
 * Writes g as a TensorFlow.js graph model: path is the model.json; its
 * directory receives group1-shard<K>of<N>.bin.  Every Const whose value
 * TensorFlow.js can hold becomes a weight (float32, int32, bool, string,
 * complex64; other float and integer dtypes are converted as the converter
 * does).  The directory is written whole under a temporary name beside it
 * and swapped in: it appears complete or not at all.  A graph with
 * variable ops is refused ("freeze first").
 */
int ge_tfjs_save(struct ge_graph *g, const char *path,
		 const struct ge_save_opts *opts, ge_tfjs_save_info *info,
		 ge_error *err);

#endif
