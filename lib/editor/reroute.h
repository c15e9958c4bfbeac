/*
 * reroute.h: graph_editor's reroute module: moving the consumers of
 * tensors from one tensor to another.
 *
 * The core is ge_reroute_ts_mode.  For pairs (ts0[i], ts1[i]) it changes
 * which tensor consumers read; producers and control edges are never
 * touched.  Every slot to change is decided from the graph as it was when
 * the call started (consumers are computed before any change), so repeated
 * tensors and swaps of tensors read by one op come out right; a slot is
 * changed at most once, by the first pair that claims it.
 *
 * All functions return the number of input slots changed (>= 0), or a
 * negative GE_E* code with err set; on error the graph is unchanged.
 * Every change bumps the graph version (graph.h).
 */
#ifndef GE_REROUTE_H
#define GE_REROUTE_H

#include "base/base.h"
#include "graph/graph.h"
#include "editor/select.h"
#include "editor/subgraph.h"

enum ge_reroute_mode {
	GE_REROUTE_A2B,  /* consumers of ts1 now read ts0 */
	GE_REROUTE_B2A,  /* consumers of ts0 now read ts1 */
	GE_REROUTE_SWAP, /* both */
};

/* Only consumers in can_modify (when non-NULL) and not in cannot_modify
 * (when non-NULL) are changed.  GE_EINVAL if the lists differ in length,
 * a tensor is not an output of a live op, or a pair has incompatible
 * dtypes (ref and non-ref of one type are compatible; unknown matches
 * anything) or incompatible static shapes (unknown rank or dims match
 * anything).  A pair of identical tensors is skipped. */
int ge_reroute_ts_mode(ge_graph *g, const ge_tref *ts0, size_t n0,
		       const ge_tref *ts1, size_t n1, int mode,
		       const ge_opset *can_modify,
		       const ge_opset *cannot_modify, ge_error *err);

/* ge_reroute_ts_mode with can_modify and cannot_modify given as lists of
 * ops (NULL: absent; an empty list is an empty set): what the Lua binding
 * calls, since a filter of k ops then costs O(k log k) where an op set
 * costs a bitmap over the whole graph. */
int ge_reroute_ts_lists(ge_graph *g, const ge_tref *ts0, size_t n0,
			const ge_tref *ts1, size_t n1, int mode,
			const ge_opvec *can_modify,
			const ge_opvec *cannot_modify, ge_error *err);

/* swap_ts: the consumers of each pair are exchanged. */
int ge_swap_ts(ge_graph *g, const ge_tref *ts0, size_t n0, const ge_tref *ts1,
	       size_t n1, const ge_opset *can_modify,
	       const ge_opset *cannot_modify, ge_error *err);
/* reroute_ts(ts0, ts1): the consumers of ts1 now read ts0 (the reference's
 * argument order; ts1 is left without consumers). */
int ge_reroute_ts(ge_graph *g, const ge_tref *ts0, size_t n0,
		  const ge_tref *ts1, size_t n1, const ge_opset *can_modify,
		  const ge_opset *cannot_modify, ge_error *err);

/* swap_inputs / reroute_inputs(a, b): reroutes a's inputs against b's
 * inputs, changing only the ops of both views and the consumers of their
 * passthroughs (reroute_inputs: b's ops now read a's inputs).  The views'
 * input and passthrough lists are then swapped (or copied from a to b) in
 * place.  The views must be of one graph (an empty view fits any). */
int ge_swap_inputs(ge_view *a, ge_view *b, ge_error *err);
int ge_reroute_inputs(ge_view *a, ge_view *b, ge_error *err);
/* swap_outputs / reroute_outputs(a, b): reroutes a's outputs against b's,
 * changing only ops outside both views (reroute_outputs: the outside
 * consumers of b's outputs now read a's).  The views are not changed. */
int ge_swap_outputs(ge_view *a, ge_view *b, ge_error *err);
int ge_reroute_outputs(ge_view *a, ge_view *b, ge_error *err);
/* Outputs first, then inputs. */
int ge_swap_ios(ge_view *a, ge_view *b, ge_error *err);
int ge_reroute_ios(ge_view *a, ge_view *b, ge_error *err);
/* The general form of the six above. */
int ge_reroute_views(ge_view *a, ge_view *b, int mode, int inputs,
		     int outputs, ge_error *err);

/* add_control_inputs: GE_EINVAL (nothing added) if a cop is already a
 * control input of op or appears twice.  remove_control_inputs: GE_EINVAL
 * (nothing removed) if a cop is not a control input; the others keep their
 * order. */
int ge_add_control_inputs(ge_graph *g, ge_opid op, const ge_opid *cops,
			  size_t n, ge_error *err);
int ge_remove_control_inputs(ge_graph *g, ge_opid op, const ge_opid *cops,
			     size_t n, ge_error *err);

#endif
