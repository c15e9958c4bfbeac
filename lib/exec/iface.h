/*
 * exec/iface.h: a model's interface: which tensors are its inputs and
 * its outputs, with their dtypes and static shapes, as eval and verify
 * feed and fetch them.
 *
 * Where it comes from, in order:
 *   - a SignatureDef of the MetaGraphDef or SavedModel (TF1, and TF2,
 *     whose signatures name the graph's serving_default_* placeholders
 *     and its StatefulPartitionedCall outputs): the one asked for, else
 *     serving_default, else the only one (keys starting "__", such as
 *     TF2's __saved_model_init_op, are not signatures to run);
 *   - a TensorFlow.js model.json's "signature" member;
 *   - the graph itself: its Placeholder and PlaceholderWithDefault ops
 *     are the inputs, in node order, and its likely outputs
 *     (ge_likely_outputs) the outputs.
 * Ports are sorted by key for the first two (a signature is a map).
 *
 * An input that is the output of a PlaceholderWithDefault (from the graph
 * or named by a signature, as TF2's serving_default_x may be) has a
 * default: not given, it is not fed, and the model computes with its
 * default value, as TensorFlow does; eval and verify seed only the
 * inputs without one.
 */
#ifndef GE_EXEC_IFACE_H
#define GE_EXEC_IFACE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "analyses/shapes.h"

typedef struct ge_xport {
	char *key;     /* the signature's key, or the tensor's name */
	char *tensor;  /* "op:0" */
	int dtype;     /* 0 when unknown */
	int rank;      /* -1 when unknown */
	int64_t dims[GE_SHAPE_MAXRANK]; /* -1 for an unknown dim */
	int has_default; /* a PlaceholderWithDefault's output (inputs) */
} ge_xport;

typedef struct ge_xiface {
	ge_xport *in, *out;
	size_t nin, nout;
	char *signature;  /* the signature's key, or NULL */
	const char *from; /* "signature", "tfjs signature" or "graph" */
} ge_xiface;

/* Fills f.  signature NULL: the default above; a name: that signature,
 * or GE_ENOTFOUND naming the ones there are.  GE_EINVAL for several
 * signatures and none chosen or default, or a sparse or composite
 * tensor in the signature. */
int ge_xiface_get(ge_graph *g, const char *signature, ge_xiface *f,
		  ge_error *err);
void ge_xiface_free(ge_xiface *f);
/* The port named by key or tensor ("x" also finds "x:0"); NULL if none. */
const ge_xport *ge_xiface_find(const ge_xport *v, size_t n,
			       const char *name);
/* "x, y, z" (the keys) into buf, for messages. */
const char *ge_xiface_names(const ge_xport *v, size_t n, char *buf,
			    size_t cap);

/* The likely output ops of g: the signatures' outputs (returns 1), else
 * the unread ops that are not training, saver, summary or bookkeeping
 * machinery (returns 0, with *left_out how many unread ops were set
 * aside). */
int ge_likely_outputs(ge_graph *g, ge_opvec *outs, size_t *left_out);

#endif
