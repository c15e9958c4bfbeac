/*
 * subgraph.h: graph_editor's SubGraphView as a C struct.
 *
 * A view is a list of ops of one graph plus its input and output tensors
 * and its passthrough tensors (tensors that go straight from input to
 * output).  A view never changes the graph.  The remap functions work in
 * place; graph_editor's methods that return a new view are a ge_view_copy
 * followed by the in-place call.
 *
 * The view remembers the graph version it was last checked at.  Functions
 * that edit the graph through views (reroute.h, edit.h) call
 * ge_view_check first, so a view whose ops were removed since is refused
 * with "op 'x' was removed from the graph" instead of editing garbage.
 *
 * Ownership: the view owns its four vectors; the graph is borrowed and
 * must outlive the view.
 */
#ifndef GE_SUBGRAPH_H
#define GE_SUBGRAPH_H

#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "editor/select.h"

typedef struct ge_view {
	ge_graph *graph;       /* NULL for the empty view */
	ge_opvec ops;          /* in the order given */
	ge_tvec inputs;        /* outside inputs, then passthroughs */
	ge_tvec outputs;       /* outside outputs, then passthroughs */
	ge_tvec passthroughs;
	uint64_t version;      /* graph version at the last check */
} ge_view;

#define GE_VIEW_INIT {NULL, GE_VEC_INIT, GE_VEC_INIT, GE_VEC_INIT, \
		      GE_VEC_INIT, 0}

/* SubGraphView(ops, passthrough_ts).  Repeated ops are kept once.  The
 * given tensors that are inputs, outputs or inside tensors of ops are
 * dropped; the others become passthroughs (repeats kept, as in the
 * reference, so a view of a list of tensors has one slot per entry).
 * With no ops and no tensors the view is empty (graph NULL; g is then not
 * needed).  GE_EINVAL if an op or tensor is not a live op of g. *v must
 * not hold a view (it is overwritten). */
int ge_view_init(ge_view *v, ge_graph *g, const ge_opid *ops, size_t n,
		 const ge_tref *pass, size_t n_pass, ge_error *err);
/* ge_view_init over every live op of g in id order, without the list: a
 * whole graph has no inputs, and its outputs are the tensors no op reads.
 * A graph without ops gives the empty view. */
void ge_view_init_graph(ge_view *v, ge_graph *g);
/* A view of ops (n > 0, live ops of g, no repeats) with the given
 * boundary, taken over from ins and outs (left empty): for a caller
 * that knows it, such as a copy that maps its source's boundary. */
void ge_view_init_known(ge_view *v, ge_graph *g, ge_opvec *ops,
			ge_tvec *ins, ge_tvec *outs, ge_tvec *pass);
void ge_view_free(ge_view *v);
/* dst receives a copy of src (dst must not hold a view). */
void ge_view_copy(ge_view *dst, const ge_view *src);
/* Replaces the content of dst by a copy of src (graph_editor's
 * _assign_from). */
void ge_view_assign(ge_view *dst, const ge_view *src);

static inline int ge_view_is_empty(const ge_view *v)
{
	return v->graph == NULL;
}

/* If the graph changed since the view was last checked, verifies that its
 * ops and the producers of its tensors are still alive.  GE_EINVAL with
 * "op 'x' was removed from the graph" otherwise. */
int ge_view_check(ge_view *v, ge_error *err);

/* Inputs / outputs that are not passthroughs. */
void ge_view_connected_inputs(const ge_view *v, ge_tvec *out);
void ge_view_connected_outputs(const ge_view *v, ge_tvec *out);

/* remap_default: recomputes the default inputs and/or outputs from the ops
 * (the passthroughs are kept). */
void ge_view_remap_default(ge_view *v, int inputs, int outputs);
/* remap_inputs: the new inputs are inputs[idx[0]], inputs[idx[1]], ...
 * Indices are 0-based; GE_EINVAL (view unchanged) when one is out of
 * range or, for inputs, repeated. */
int ge_view_remap_inputs(ge_view *v, const int64_t *idx, size_t n,
			 ge_error *err);
/* remap_outputs: the same, repetitions allowed. */
int ge_view_remap_outputs(ge_view *v, const int64_t *idx, size_t n,
			  ge_error *err);
/* remap: either list may be NULL (not remapped).  Nothing changes on
 * error. */
int ge_view_remap(ge_view *v, const int64_t *in_idx, size_t n_in,
		  const int64_t *out_idx, size_t n_out, ge_error *err);
void ge_view_remap_outputs_make_unique(ge_view *v);
/* The outputs made unique, then each repeated once per data consumer op
 * (inside or outside the view); an output without consumers goes away. */
void ge_view_remap_outputs_to_consumers(ge_view *v);
/* Keeps the ops on a walk from the connected inputs (forward) or to the
 * connected outputs (backward, following control inputs if asked), within
 * the view. */
int ge_view_remove_unused_ops(ge_view *v, int control_inputs, ge_error *err);

/* The ops outside the view that consume an output, output by output, each
 * output's consumers in node order, without repeats. */
void ge_view_consumers(const ge_view *v, ge_opvec *out);

/* GE_ENOTFOUND: "no op named 'x' in the view". */
int ge_view_find_op_by_name(const ge_view *v, const char *name,
			    ge_opid *out, ge_error *err);
/* The first index of t in the inputs / outputs, or GE_ENOTFOUND with
 * "tensor 'x:0' is not an input of the view". */
int ge_view_input_index(const ge_view *v, ge_tref t, ge_error *err);
int ge_view_output_index(const ge_view *v, ge_tref t, ge_error *err);
int ge_view_is_passthrough(const ge_view *v, ge_tref t);

/* graph_editor's __str__ layout: "SubGraphView (graphid=N):", then
 * "** ops[N]:", "** inputs[N]:", "** outputs[N]:" blocks with one
 * two-space-indented name per line ("** ops: empty" for an empty list;
 * passthrough tensors get " *"), or "SubGraphView: empty". */
void ge_view_format(const ge_view *v, ge_buf *out);
/* One line: "view of 4 ops (2 inputs, 1 output)", or "empty view". */
void ge_view_summary(const ge_view *v, ge_buf *out);

/* make_view: SubGraphView(select_ops_and_ts(args)).  g may be NULL when
 * no argument is a regex and a list names a graph-less nothing (then the
 * view is empty). */
int ge_make_view(ge_graph *g, const ge_sel_arg *args, size_t n,
		 const ge_select_opts *o, ge_view *v, ge_error *err);
/* make_view_from_scope: the view of get_name_scope_ops(graph, scope). */
int ge_make_view_from_scope(ge_graph *g, const char *scope, ge_view *v,
			    ge_error *err);

#endif
