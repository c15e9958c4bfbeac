/*
 * edit.h: graph_editor's edit module: detaching subgraph views from the
 * rest of the graph, connecting views, bypassing a view.
 *
 * Views passed in are updated in place so they describe the graph after
 * the edit (as graph_editor does).  Placeholders are Placeholder ops with
 * `dtype` and `shape` attrs, named with placeholder_name (select.h):
 * "<producer dirname>geph__<producer basename>_<index>", uniquified.  The
 * placeholder lists hold op ids; each placeholder's tensor is output 0.
 *
 * On error a negative GE_E* code is returned with err set; edits made
 * before the failure are not undone (the checks that can fail run first).
 */
#ifndef GE_EDIT_H
#define GE_EDIT_H

#include "base/base.h"
#include "graph/graph.h"
#include "editor/subgraph.h"

/* Removes the control inputs of the view's ops that come from outside the
 * view. */
int ge_detach_control_inputs(ge_view *v, ge_error *err);
/* Removes the control edges from the view's ops to ops outside it. */
int ge_detach_control_outputs(ge_view *v, ge_error *err);

/* One placeholder per input of the view (dtype and static shape of the
 * input when known), then swap_inputs(view, placeholders): the view's ops
 * read the placeholders, and the view's inputs (and, as in graph_editor,
 * its passthrough list) become the placeholders' tensors.  Optionally
 * detaches the control inputs too.  phs (may be NULL) receives the
 * placeholders in input order. */
int ge_detach_inputs(ge_view *v, int control_inputs, ge_opvec *phs,
		     ge_error *err);
/* The view remapped to the outputs that have consumers goes to *out
 * (may be NULL; v itself is unchanged).  Each distinct such output that is
 * read by an op outside the view gets a placeholder (same dtype and shape,
 * named after that output) and its outside consumers read the placeholder
 * instead.  phs receives the placeholders in output order. */
int ge_detach_outputs(ge_view *v, int control_outputs, ge_view *out,
		      ge_opvec *phs, ge_error *err);
/* detach_inputs then detach_outputs. */
int ge_detach(ge_view *v, int control_inputs, int control_outputs,
	      ge_opvec *in_phs, ge_opvec *out_phs, ge_error *err);

/* connect(a, b): b's ops read a's outputs, pairwise with b's inputs
 * (counts, dtypes and shapes must match).  With disconnect_first, a's
 * outputs are first detached from their current consumers. */
int ge_connect(ge_view *a, ge_view *b, int disconnect_first, ge_error *err);

/* bypass(v): detaches the inputs of v, then the consumers of output i read
 * what was input i.  GE_EINVAL (graph unchanged) unless the view has as
 * many inputs as outputs with compatible pairs. */
int ge_bypass(ge_view *v, ge_opvec *phs, ge_error *err);

#endif
