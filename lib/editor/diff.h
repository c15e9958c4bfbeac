/*
 * diff.h: what differs between two graphs, op by op.
 *
 * Ops are matched by name.  An op only in the first graph is removed, one
 * only in the second added, and one in both is changed when its type, its
 * data inputs (in order, "x" and "x:0" being the same tensor), its
 * control inputs (as a set), its device or any attr (compared by its
 * encoded bytes) differ.  Inputs are compared by the names they read, so
 * two graphs loaded from different files compare as expected.
 *
 * Ops are also paired by provenance: the names an op of the second graph
 * lists in NodeDef.experimental_debug_info.original_node_names (its
 * origins) are the ops it was made from.  An op of the second graph that
 * the first graph does not name, and whose origins name ops of the first
 * that are gone, is moved (renamed, folded, fused): it pairs with the
 * first of them.  An op of the first graph that is gone but named in the
 * origins of an op of the second was merged into that op: it is still
 * removed, and its entry names the op it went into.
 */
#ifndef GE_DIFF_H
#define GE_DIFF_H

#include "graph/graph.h"

enum {
	GE_DIFF_TYPE = 1 << 0,
	GE_DIFF_INPUTS = 1 << 1,
	GE_DIFF_CONTROL = 1 << 2,
	GE_DIFF_DEVICE = 1 << 3,
	GE_DIFF_ATTRS = 1 << 4,
};

typedef enum ge_diff_kind {
	GE_DIFF_REMOVED,
	GE_DIFF_ADDED,
	GE_DIFF_CHANGED,
	GE_DIFF_MOVED,
} ge_diff_kind;

typedef struct ge_diff_entry {
	ge_diff_kind kind;
	ge_opid a;     /* the op in the first graph; for an added op the op
			  it is a copy of (its provenance names an op both
			  graphs hold), or GE_NOOP */
	ge_opid b;     /* the op in the second graph; for a removed op the
			  op it was merged into, or GE_NOOP */
	unsigned what; /* GE_DIFF_* bits, for a changed or moved op */
} ge_diff_entry;

/* Compares graph a with graph b.  Stores a malloc'd array of entries in
 * *out (the caller frees it) and returns how many: removed ops in a's node
 * order, then added ops in b's node order, then changed ops in b's node
 * order, then moved ops in b's node order.  Returns 0 (and *out NULL)
 * when the graphs have the same ops. */
size_t ge_graph_diff(const ge_graph *a, const ge_graph *b,
		     ge_diff_entry **out);

/* The names of the attrs that differ between op ia of a and op ib of b:
 * added, removed or with other bytes, in the order of ib's attrs then
 * the ones only ia has.  Appends them to names, '\n' after each, and
 * returns how many. */
size_t ge_op_diff_attrs(const ge_graph *a, ge_opid ia, const ge_graph *b,
			ge_opid ib, ge_buf *names);

#endif
