/*
 * shapes.h: static shape and dtype inference, without TensorFlow.
 *
 * Every op output gets a shape (rank -1 for unknown rank, dims -1 for
 * unknown dims, as TensorFlow's partial shapes) and a dtype (from the
 * OpDef's type attrs).  Shapes come from per-op shape functions written
 * from TensorFlow's documented shape rules; small integer tensors (shapes,
 * axes, sizes) are followed by value so that Shape -> StridedSlice -> Pack
 * -> Reshape chains resolve as TensorFlow resolves them.
 *
 * Results are cached on the graph and recomputed when ge_graph_version
 * moves.  `_output_shapes` attrs are read: where they agree with the
 * inferred shape they fill its unknown dims, where they contradict it the
 * inferred shape wins and ge_shapes_validate reports the op.
 *
 * Input overrides (ge_shapes_set_inputs) stay on the graph's cache across
 * recomputations until replaced; they are assumptions of the analysis, not
 * edits of the Placeholders.
 */
#ifndef GE_SHAPES_H
#define GE_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

#define GE_SHAPE_MAXRANK 32

/* Why an output stayed (partly) unknown. */
enum {
	GE_SHAPE_KNOWN = 0,    /* fully known */
	GE_SHAPE_INPUT = 1,    /* an input was not fully known */
	GE_SHAPE_NOFN = 2,     /* no shape function for the op type */
	GE_SHAPE_DATA = 3,     /* depends on tensor values not known statically */
	GE_SHAPE_ERROR = 4,    /* the op's shape cannot hold (see ge_shapes_error) */
};

typedef struct ge_shape_stats {
	size_t outputs;        /* outputs of live ops */
	size_t known;          /* fully known shape */
	size_t partial;        /* rank known, some dim unknown */
	size_t unknown_rank;
	size_t by_reason[5];   /* not fully known, by reason (GE_SHAPE_*) */
	/* op types without a shape function, "Type:count" comma-separated,
	 * owned by the cache (valid until the next recomputation) */
	const char *nofn_types;
	size_t contradictions; /* _output_shapes entries the inference contradicts */
} ge_shape_stats;

/* One input override: op name (a Placeholder) and the shape it takes
 * (rank -1: unknown rank). */
typedef struct ge_shape_input {
	const char *name;
	int rank;
	const int64_t *dims;
} ge_shape_input;

/* Replaces the graph's input overrides (n = 0 clears them).  Names that are
 * not live ops are GE_ENOTFOUND, ops that are not Placeholders GE_EINVAL,
 * with a message. */
int ge_shapes_set_inputs(ge_graph *g, const ge_shape_input *in, size_t n,
			 ge_error *err);

/* Runs inference if the cache is stale.  Fills st if given.  Returns GE_OK,
 * or GE_EGRAPH when some op's shape cannot hold (a Reshape of 10 elements
 * into 3x3, mismatched MatMul dims): err names the first such op; every
 * other output is still inferred. */
int ge_shapes_infer(ge_graph *g, ge_shape_stats *st, ge_error *err);

/* Inferred shape of an output: returns the rank (>= 0) and writes up to cap
 * dims, or -1 for unknown rank.  Runs inference if stale; never fails (an
 * op in error gives unknown). */
int ge_shapes_get(ge_graph *g, ge_tref t, int64_t *dims, int cap);
/* The static shape (ge_op_output_shape) when it is fully known, else the
 * inferred one: what t.shape, info and dot show. */
int ge_shapes_best(ge_graph *g, ge_tref t, int64_t *dims, int cap);
/* Inferred dtype (TensorFlow DataType; 0 when unknown). */
int ge_shapes_dtype(ge_graph *g, ge_tref t);
/* Why output t is not fully known (GE_SHAPE_*). */
int ge_shapes_reason(ge_graph *g, ge_tref t);
/* The inferred values of a small integer tensor (a shape, an axis): returns
 * the element count and writes up to cap values (INT64_MIN for an unknown
 * element), or -1 when the value is not followed. */
int ge_shapes_value(ge_graph *g, ge_tref t, int64_t *vals, int cap);

/* Appends one line per op whose `_output_shapes` contradicts inference, and
 * per op whose shape cannot hold; returns how many. */
size_t ge_shapes_validate(ge_graph *g, ge_buf *report);

/* Writes `_output_shapes` on every live op from the inferred shapes, as
 * TensorFlow's add_shapes=True does (unknown rank as unknown_rank: true,
 * unknown dims as -1).  Returns the number of ops written. */
size_t ge_shapes_write_attrs(ge_graph *g);

/* The live ops in an execution order (producers first, NextIteration's
 * back edges left out; ops on a cycle come last in node order).  The
 * caller frees the array. */
ge_opid *ge_shapes_topo_order(ge_graph *g, size_t *n);

/* Formats a shape as "[1,224,224,3]" ("?" for unknown dims, "<unknown>"
 * for unknown rank). */
void ge_shape_format(ge_buf *b, int rank, const int64_t *dims);
/* Parses "1x224x224x3", "?x10", "-1x10" or "" (scalar), or "*" (unknown
 * rank).  Returns the rank, -1 for "*", -2 on a syntax error. */
int ge_shape_parse(const char *s, int64_t *dims, int cap);

#endif
