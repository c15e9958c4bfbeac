/* edit.c: see edit.h. */
#include "editor/edit.h"

#include <stdlib.h>
#include <string.h>

#include "editor/reroute.h"
#include "editor/select.h"

static void touch(ge_view *v)
{
	if (v->graph)
		v->version = ge_graph_version(v->graph);
}

int ge_detach_control_inputs(ge_view *v, ge_error *err)
{
	ge_opset inside;
	ge_opvec cops = GE_VEC_INIT;
	int rc;
	if ((rc = ge_view_check(v, err)) || !v->graph)
		return rc;
	ge_graph *g = v->graph;
	ge_opset_init(&inside, g);
	ge_opset_add_list(&inside, v->ops.v, v->ops.n);
	for (size_t i = 0; i < v->ops.n && rc == GE_OK; i++) {
		ge_opid op = v->ops.v[i];
		size_t nc = ge_op_num_control_inputs(g, op);
		cops.n = 0;
		for (size_t k = 0; k < nc; k++) {
			ge_opid c = ge_op_control_input(g, op, k);
			if (c != GE_NOOP && !ge_opset_has(&inside, c))
				ge_opvec_push(&cops, c);
		}
		if (cops.n)
			rc = ge_remove_control_inputs(g, op, cops.v, cops.n, err);
	}
	ge_opvec_free(&cops);
	ge_opset_free(&inside);
	touch(v);
	return rc;
}

int ge_detach_control_outputs(ge_view *v, ge_error *err)
{
	ge_opset inside;
	ge_opvec outs = GE_VEC_INIT;
	int rc;
	if ((rc = ge_view_check(v, err)) || !v->graph)
		return rc;
	ge_graph *g = v->graph;
	ge_opset_init(&inside, g);
	ge_opset_add_list(&inside, v->ops.v, v->ops.n);
	for (size_t i = 0; i < v->ops.n && rc == GE_OK; i++) {
		ge_opid op = v->ops.v[i];
		size_t nc;
		/* copied: removing an edge edits the list being read */
		const ge_opid *co = ge_op_control_outputs(g, op, &nc);
		outs.n = 0;
		for (size_t k = 0; k < nc; k++)
			if (!ge_opset_has(&inside, co[k]))
				ge_opvec_push(&outs, co[k]);
		for (size_t k = 0; k < outs.n && rc == GE_OK; k++)
			rc = ge_op_remove_control_input(g, outs.v[k], op, err);
	}
	ge_opvec_free(&outs);
	ge_opset_free(&inside);
	touch(v);
	return rc;
}

/* One placeholder per tensor, named after it (placeholder_name with the
 * producer's scope), with its dtype and static shape. */
static int make_phs(ge_graph *g, const ge_tref *ts, size_t n, ge_opvec *ops,
		    ge_tvec *phts, ge_error *err)
{
	for (size_t i = 0; i < n; i++) {
		ge_opid p = ge_make_placeholder_from_tensor(g, NULL, ts[i], NULL,
							    NULL, err);
		if (p == GE_NOOP)
			return GE_EINVAL;
		ge_opvec_push(ops, p);
		ge_tvec_push(phts, (ge_tref){p, 0});
	}
	return GE_OK;
}

int ge_detach_inputs(ge_view *v, int control_inputs, ge_opvec *phs,
		     ge_error *err)
{
	ge_opvec ops = GE_VEC_INIT;
	ge_tvec phts = GE_VEC_INIT;
	ge_view pv;
	int rc;
	if ((rc = ge_view_check(v, err)) || !v->graph)
		return rc;
	ge_graph *g = v->graph;
	rc = make_phs(g, v->inputs.v, v->inputs.n, &ops, &phts, err);
	/* graph_editor swaps the inputs with a view of the placeholders'
	 * tensors: the same steps give the same view afterwards. */
	if (rc == GE_OK)
		rc = ge_view_init(&pv, g, NULL, 0, phts.v, phts.n, err);
	if (rc == GE_OK) {
		rc = ge_swap_inputs(v, &pv, err);
		ge_view_free(&pv);
		if (rc > 0)
			rc = GE_OK;
	}
	if (rc == GE_OK && control_inputs)
		rc = ge_detach_control_inputs(v, err);
	if (phs)
		for (size_t i = 0; i < ops.n; i++)
			ge_opvec_push(phs, ops.v[i]);
	ge_opvec_free(&ops);
	ge_tvec_free(&phts);
	touch(v);
	return rc;
}

int ge_detach_outputs(ge_view *v, int control_outputs, ge_view *out,
		      ge_opvec *phs, ge_error *err)
{
	static const ge_view empty = GE_VIEW_INIT;
	ge_view w;
	ge_tuses u;
	ge_opset inside;
	ge_tmap seen;
	ge_tvec targets = GE_VEC_INIT, phts = GE_VEC_INIT;
	ge_opvec ops = GE_VEC_INIT;
	int rc;
	if (out)
		*out = empty;
	if ((rc = ge_view_check(v, err)))
		return rc;
	if (!v->graph)
		return GE_OK;
	ge_graph *g = v->graph;

	/* The view remapped to the outputs that have data consumers. */
	ge_view_copy(&w, v);
	ge_tuses_compute(&u, g, w.outputs.v, w.outputs.n);
	size_t k = 0;
	for (size_t i = 0; i < w.outputs.n; i++)
		if (u.len[i])
			w.outputs.v[k++] = w.outputs.v[i];
	w.outputs.n = k;
	ge_tuses_free(&u);

	/* Each distinct one read from outside gets a placeholder: pairing
	 * placeholders with outputs by name fixes the reference, which paired
	 * them by position in two differently ordered lists. */
	ge_opset_init(&inside, g);
	ge_opset_add_list(&inside, w.ops.v, w.ops.n);
	ge_tmap_init(&seen, w.outputs.n);
	ge_tuses_compute(&u, g, w.outputs.v, w.outputs.n);
	for (size_t i = 0; i < w.outputs.n; i++) {
		size_t j;
		for (j = 0; j < u.len[i]; j++)
			if (!ge_opset_has(&inside, u.uses[u.off[i] + j].op))
				break;
		if (j < u.len[i] && ge_tmap_put(&seen, w.outputs.v[i], 0))
			ge_tvec_push(&targets, w.outputs.v[i]);
	}
	ge_tuses_free(&u);
	ge_tmap_free(&seen);

	rc = make_phs(g, targets.v, targets.n, &ops, &phts, err);
	if (rc == GE_OK && targets.n) {
		rc = ge_reroute_ts_mode(g, targets.v, targets.n, phts.v, phts.n,
					GE_REROUTE_SWAP, NULL, &inside, err);
		if (rc > 0)
			rc = GE_OK;
	}
	ge_opset_free(&inside);
	touch(&w);
	if (rc == GE_OK && control_outputs)
		rc = ge_detach_control_outputs(&w, err);
	if (phs)
		for (size_t i = 0; i < ops.n; i++)
			ge_opvec_push(phs, ops.v[i]);
	if (out && rc == GE_OK)
		*out = w;
	else
		ge_view_free(&w);
	ge_opvec_free(&ops);
	ge_tvec_free(&targets);
	ge_tvec_free(&phts);
	return rc;
}

int ge_detach(ge_view *v, int control_inputs, int control_outputs,
	      ge_opvec *in_phs, ge_opvec *out_phs, ge_error *err)
{
	int rc = ge_detach_inputs(v, control_inputs, in_phs, err);
	if (rc == GE_OK)
		rc = ge_detach_outputs(v, control_outputs, NULL, out_phs, err);
	return rc;
}

static int same_graph(ge_view *a, ge_view *b, ge_error *err)
{
	int rc;
	if ((rc = ge_view_check(a, err)) || (rc = ge_view_check(b, err)))
		return rc;
	if (a->graph && b->graph && a->graph != b->graph)
		return ge_err(err, GE_EINVAL,
			      "the views are of different graphs ('%s' and '%s')",
			      ge_graph_name(a->graph), ge_graph_name(b->graph));
	return GE_OK;
}

/* The checks of a reroute between two lists (lengths, dtypes, shapes),
 * run before anything changes. */
static int pair_check(ge_graph *g, const ge_tvec *a, const ge_tvec *b,
		      ge_error *err)
{
	/* an empty can_modify set: every check runs, nothing moves */
	ge_opset none;
	ge_opset_init(&none, NULL);
	int rc = ge_reroute_ts_mode(g, a->v, a->n, b->v, b->n, GE_REROUTE_A2B,
				    &none, NULL, err);
	ge_opset_free(&none);
	return rc < 0 ? rc : GE_OK;
}

int ge_connect(ge_view *a, ge_view *b, int disconnect_first, ge_error *err)
{
	ge_view pv;
	int rc;
	if ((rc = same_graph(a, b, err)))
		return rc;
	ge_graph *g = a->graph ? a->graph : b->graph;
	if (!g)
		return GE_OK;
	if ((rc = pair_check(g, &a->outputs, &b->inputs, err)))
		return rc;
	if (disconnect_first &&
	    (rc = ge_detach_outputs(a, 0, NULL, NULL, err)))
		return rc;
	if ((rc = ge_view_init(&pv, g, NULL, 0, a->outputs.v, a->outputs.n,
			       err)))
		return rc;
	rc = ge_reroute_inputs(&pv, b, err);
	ge_view_free(&pv);
	touch(a);
	return rc < 0 ? rc : GE_OK;
}

int ge_bypass(ge_view *v, ge_opvec *phs, ge_error *err)
{
	ge_tvec orig = GE_VEC_INIT;
	int rc;
	if ((rc = ge_view_check(v, err)) || !v->graph)
		return rc;
	ge_graph *g = v->graph;
	if ((rc = pair_check(g, &v->inputs, &v->outputs, err)))
		return rc;
	for (size_t i = 0; i < v->inputs.n; i++)
		ge_tvec_push(&orig, v->inputs.v[i]);
	rc = ge_detach_inputs(v, 0, phs, err);
	if (rc == GE_OK) {
		rc = ge_reroute_ts(g, orig.v, orig.n, v->outputs.v,
				   v->outputs.n, NULL, NULL, err);
		if (rc > 0)
			rc = GE_OK;
	}
	ge_tvec_free(&orig);
	touch(v);
	return rc;
}
