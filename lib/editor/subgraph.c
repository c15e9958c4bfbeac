/* subgraph.c: see subgraph.h. */
#include "editor/subgraph.h"
#include "graph/graph_copy.h"

#include <stdlib.h>
#include <string.h>

static void tvec_copy(ge_tvec *dst, const ge_tvec *src)
{
	dst->n = dst->cap = src->n;
	dst->v = src->n ? ge_xmalloc(src->n * sizeof *src->v) : NULL;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof *src->v);
}

static void opvec_copy(ge_opvec *dst, const ge_opvec *src)
{
	dst->n = dst->cap = src->n;
	dst->v = src->n ? ge_xmalloc(src->n * sizeof *src->v) : NULL;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof *src->v);
}

static void tvec_append(ge_tvec *dst, const ge_tvec *src)
{
	for (size_t i = 0; i < src->n; i++)
		ge_tvec_push(dst, src->v[i]);
}

static int op_ok(const ge_graph *g, ge_opid id)
{
	return id != GE_NOOP && id < ge_graph_capacity(g) && ge_op_alive(g, id);
}

static int check_op(const ge_graph *g, ge_opid id, ge_error *err)
{
	if (id != GE_NOOP && id < ge_graph_capacity(g) && !ge_op_alive(g, id))
		return ge_err(err, GE_EINVAL, "op '%s' was removed from the graph",
			      ge_op_name(g, id));
	if (!op_ok(g, id))
		return ge_err(err, GE_EINVAL, "%s: no op with id %u in the graph",
			      ge_graph_name(g), (unsigned)id);
	return GE_OK;
}

static int check_t(const ge_graph *g, ge_tref t, ge_error *err)
{
	int rc = check_op(g, t.op, err);
	if (rc == GE_OK && t.index < 0)
		rc = ge_err(err, GE_EINVAL, "'%s': a control edge is not a tensor",
			    ge_op_name(g, t.op));
	return rc;
}

/* Whether ops (each a live op of g) are every live op of g in id order:
 * n distinct live ops are all of them. */
static int whole_graph(const ge_graph *g, const ge_opid *ops, size_t n)
{
	if (n != ge_graph_num_ops(g))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (ops[i] <= ops[i - 1])
			return 0;
	return 1;
}

int ge_view_init(ge_view *v, ge_graph *g, const ge_opid *ops, size_t n,
		 const ge_tref *pass, size_t n_pass, ge_error *err)
{
	static const ge_view empty = GE_VIEW_INIT;
	int rc;
	*v = empty;
	if (!n && !n_pass)
		return GE_OK;
	if (!g)
		return ge_err(err, GE_EINVAL, "a view of ops needs their graph");
	/* one pass when every op is live (the common case); op by op, for
	 * the message, when one is not */
	if (!ge_graph_all_alive(g, ops, n, sizeof *ops))
		for (size_t i = 0; i < n; i++)
			if ((rc = check_op(g, ops[i], err)))
				return rc;
	for (size_t i = 0; i < n_pass; i++)
		if ((rc = check_t(g, pass[i], err)))
			return rc;
	/* the fast path: every op in id order (ge.sgv(g:ops())) is the
	 * view of the graph, made by one walk of the op table instead of a
	 * set of the ops and their boundary (t/fast-paths holds it to the
	 * general path) */
	if (!n_pass && whole_graph(g, ops, n)) {
		ge_view_init_graph(v, g);
		return GE_OK;
	}
	v->graph = g;
	v->version = ge_graph_version(g);
	for (size_t i = 0; i < n; i++)
		ge_opvec_push(&v->ops, ops[i]);
	ge_opvec_unique(g, &v->ops);

	ge_tvec inside = GE_VEC_INIT;
	ge_compute_boundary_ts(g, v->ops.v, v->ops.n, &v->inputs, &v->outputs,
			       n_pass ? &inside : NULL);
	if (n_pass) {
		ge_tset all;
		ge_tset_init(&all, g);
		for (size_t i = 0; i < v->inputs.n; i++)
			ge_tset_insert(&all, v->inputs.v[i]);
		for (size_t i = 0; i < v->outputs.n; i++)
			ge_tset_insert(&all, v->outputs.v[i]);
		for (size_t i = 0; i < inside.n; i++)
			ge_tset_insert(&all, inside.v[i]);
		for (size_t i = 0; i < n_pass; i++)
			if (!ge_tset_has(&all, pass[i]))
				ge_tvec_push(&v->passthroughs, pass[i]);
		ge_tset_free(&all);
	}
	tvec_append(&v->inputs, &v->passthroughs);
	tvec_append(&v->outputs, &v->passthroughs);
	ge_tvec_free(&inside);
	return GE_OK;
}

void ge_view_init_graph(ge_view *v, ge_graph *g)
{
	static const ge_view empty = GE_VIEW_INIT;
	*v = empty;
	if (!ge_graph_num_ops(g))
		return;
	v->graph = g;
	v->version = ge_graph_version(g);
	v->ops.v = ge_xmalloc(ge_graph_num_ops(g) * sizeof *v->ops.v);
	v->ops.cap = ge_graph_num_ops(g);
	ge_prefault(v->ops.v, v->ops.cap * sizeof *v->ops.v);
	ge_graph_walk_unread(g, &v->ops, &v->outputs);
}

void ge_view_init_known(ge_view *v, ge_graph *g, ge_opvec *ops,
			ge_tvec *ins, ge_tvec *outs, ge_tvec *pass)
{
	static const ge_view empty = GE_VIEW_INIT;
	static const ge_opvec no_ops = GE_VEC_INIT;
	static const ge_tvec no_ts = GE_VEC_INIT;
	*v = empty;
	v->graph = g;
	v->version = ge_graph_version(g);
	v->ops = *ops;
	v->inputs = *ins;
	v->outputs = *outs;
	v->passthroughs = *pass;
	*ops = no_ops;
	*ins = *outs = *pass = no_ts;
}

void ge_view_free(ge_view *v)
{
	static const ge_view empty = GE_VIEW_INIT;
	ge_opvec_free(&v->ops);
	ge_tvec_free(&v->inputs);
	ge_tvec_free(&v->outputs);
	ge_tvec_free(&v->passthroughs);
	*v = empty;
}

void ge_view_copy(ge_view *dst, const ge_view *src)
{
	dst->graph = src->graph;
	dst->version = src->version;
	opvec_copy(&dst->ops, &src->ops);
	tvec_copy(&dst->inputs, &src->inputs);
	tvec_copy(&dst->outputs, &src->outputs);
	tvec_copy(&dst->passthroughs, &src->passthroughs);
}

void ge_view_assign(ge_view *dst, const ge_view *src)
{
	ge_view tmp;
	if (dst == src)
		return;
	ge_view_copy(&tmp, src);
	ge_view_free(dst);
	*dst = tmp;
}

static int ts_alive(const ge_graph *g, const ge_tvec *v)
{
	return !v->n || ge_graph_all_alive(g, &v->v[0].op, v->n, sizeof *v->v);
}

static int check_ts(const ge_graph *g, const ge_tvec *v, ge_error *err)
{
	for (size_t i = 0; i < v->n; i++)
		if (check_op(g, v->v[i].op, err))
			return GE_EINVAL;
	return GE_OK;
}

int ge_view_check(ge_view *v, ge_error *err)
{
	ge_graph *g = v->graph;
	if (!g || v->version == ge_graph_version(g))
		return GE_OK;
	/* the loops below, for their error only */
	if (ge_graph_all_alive(g, v->ops.v, v->ops.n, sizeof *v->ops.v) &&
	    ts_alive(g, &v->inputs) && ts_alive(g, &v->outputs) &&
	    ts_alive(g, &v->passthroughs)) {
		v->version = ge_graph_version(g);
		return GE_OK;
	}
	for (size_t i = 0; i < v->ops.n; i++)
		if (check_op(g, v->ops.v[i], err))
			return GE_EINVAL;
	if (check_ts(g, &v->inputs, err) || check_ts(g, &v->outputs, err) ||
	    check_ts(g, &v->passthroughs, err))
		return GE_EINVAL;
	v->version = ge_graph_version(g);
	return GE_OK;
}

static void without_passthroughs(const ge_view *v, const ge_tvec *from,
				 ge_tvec *out)
{
	ge_tmap pt;
	ge_tmap_init(&pt, v->passthroughs.n);
	for (size_t i = 0; i < v->passthroughs.n; i++)
		ge_tmap_put(&pt, v->passthroughs.v[i], 0);
	for (size_t i = 0; i < from->n; i++)
		if (!ge_tmap_get(&pt, from->v[i], NULL))
			ge_tvec_push(out, from->v[i]);
	ge_tmap_free(&pt);
}

void ge_view_connected_inputs(const ge_view *v, ge_tvec *out)
{
	without_passthroughs(v, &v->inputs, out);
}

void ge_view_connected_outputs(const ge_view *v, ge_tvec *out)
{
	without_passthroughs(v, &v->outputs, out);
}

void ge_view_remap_default(ge_view *v, int inputs, int outputs)
{
	ge_tvec in = GE_VEC_INIT, out = GE_VEC_INIT;
	if (!v->graph || (!inputs && !outputs))
		return;
	ge_compute_boundary_ts(v->graph, v->ops.v, v->ops.n, &in, &out, NULL);
	if (inputs) {
		tvec_append(&in, &v->passthroughs);
		ge_tvec_free(&v->inputs);
		v->inputs = in;
	} else {
		ge_tvec_free(&in);
	}
	if (outputs) {
		tvec_append(&out, &v->passthroughs);
		ge_tvec_free(&v->outputs);
		v->outputs = out;
	} else {
		ge_tvec_free(&out);
	}
}

static int check_map(const char *what, const int64_t *idx, size_t n,
		     size_t len, int repetition, ge_error *err)
{
	uint8_t *used = repetition ? NULL : ge_xcalloc(len ? len : 1, 1);
	int rc = GE_OK;
	for (size_t i = 0; i < n; i++) {
		if (idx[i] < 0 || (uint64_t)idx[i] >= len) {
			rc = ge_err(err, GE_EINVAL,
				    "%s: index %lld out of the range [0, %zu)",
				    what, (long long)idx[i], len);
			break;
		}
		if (used) {
			if (used[idx[i]]) {
				rc = ge_err(err, GE_EINVAL,
					    "%s: index %lld is repeated", what,
					    (long long)idx[i]);
				break;
			}
			used[idx[i]] = 1;
		}
	}
	free(used);
	return rc;
}

static void apply_map(ge_tvec *v, const int64_t *idx, size_t n)
{
	ge_tvec r = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++)
		ge_tvec_push(&r, v->v[idx[i]]);
	ge_tvec_free(v);
	*v = r;
}

/* A non-NULL stand-in for an empty index list (NULL means "no map"). */
static const int64_t no_idx[1];

int ge_view_remap_inputs(ge_view *v, const int64_t *idx, size_t n,
			 ge_error *err)
{
	return ge_view_remap(v, idx ? idx : no_idx, n, NULL, 0, err);
}

int ge_view_remap_outputs(ge_view *v, const int64_t *idx, size_t n,
			  ge_error *err)
{
	return ge_view_remap(v, NULL, 0, idx ? idx : no_idx, n, err);
}

int ge_view_remap(ge_view *v, const int64_t *in_idx, size_t n_in,
		  const int64_t *out_idx, size_t n_out, ge_error *err)
{
	int rc;
	if (in_idx && (rc = check_map("remap_inputs", in_idx, n_in,
				      v->inputs.n, 0, err)))
		return rc;
	if (out_idx && (rc = check_map("remap_outputs", out_idx, n_out,
				       v->outputs.n, 1, err)))
		return rc;
	if (in_idx)
		apply_map(&v->inputs, in_idx, n_in);
	if (out_idx)
		apply_map(&v->outputs, out_idx, n_out);
	return GE_OK;
}

void ge_view_remap_outputs_make_unique(ge_view *v)
{
	ge_tvec_unique(&v->outputs);
}

void ge_view_remap_outputs_to_consumers(ge_view *v)
{
	ge_tvec r = GE_VEC_INIT;
	ge_tuses u;
	if (!v->graph)
		return;
	ge_tvec_unique(&v->outputs);
	ge_tuses_compute(&u, v->graph, v->outputs.v, v->outputs.n);
	for (size_t i = 0; i < v->outputs.n; i++) {
		/* uses are sorted by consumer: count distinct ops */
		const ge_use *us = u.uses + u.off[i];
		for (size_t k = 0; k < u.len[i]; k++)
			if (k == 0 || us[k].op != us[k - 1].op)
				ge_tvec_push(&r, v->outputs.v[i]);
	}
	ge_tuses_free(&u);
	ge_tvec_free(&v->outputs);
	v->outputs = r;
}

int ge_view_remove_unused_ops(ge_view *v, int control_inputs, ge_error *err)
{
	ge_tvec ci = GE_VEC_INIT, co = GE_VEC_INIT;
	ge_opvec keep = GE_VEC_INIT;
	int rc;
	if (!v->graph)
		return GE_OK;
	if ((rc = ge_view_check(v, err)))
		return rc;
	ge_view_connected_inputs(v, &ci);
	ge_view_connected_outputs(v, &co);
	ge_seeds fs = {NULL, 0, ci.v, ci.n}, bs = {NULL, 0, co.v, co.n};
	ge_walk_opts fo = GE_WALK_OPTS_INIT, bo = GE_WALK_OPTS_INIT;
	/* within_ops must be non-NULL even for a view without ops */
	static const ge_opid no_ops[1];
	fo.within_ops = bo.within_ops = v->ops.v ? v->ops.v : no_ops;
	fo.n_within = bo.n_within = v->ops.n;
	bo.control = control_inputs;
	rc = ge_get_walks_union_ops(v->graph, &fs, &bs, &fo, &bo, &keep, err);
	if (rc == GE_OK) {
		ge_opset set;
		size_t k = 0;
		ge_opset_init(&set, v->graph);
		ge_opset_add_list(&set, keep.v, keep.n);
		for (size_t i = 0; i < v->ops.n; i++)
			if (ge_opset_has(&set, v->ops.v[i]))
				v->ops.v[k++] = v->ops.v[i];
		v->ops.n = k;
		ge_opset_free(&set);
	}
	ge_tvec_free(&ci);
	ge_tvec_free(&co);
	ge_opvec_free(&keep);
	return rc;
}

void ge_view_consumers(const ge_view *v, ge_opvec *out)
{
	ge_opset inside, seen;
	ge_tuses u;
	if (!v->graph)
		return;
	ge_opset_init(&inside, v->graph);
	ge_opset_init(&seen, v->graph);
	ge_opset_add_list(&inside, v->ops.v, v->ops.n);
	ge_opset_add_list(&seen, out->v, out->n);
	ge_tuses_compute(&u, v->graph, v->outputs.v, v->outputs.n);
	for (size_t i = 0; i < v->outputs.n; i++)
		for (size_t k = 0; k < u.len[i]; k++) {
			ge_opid c = u.uses[u.off[i] + k].op;
			if (!ge_opset_has(&inside, c) &&
			    ge_opset_insert(&seen, c))
				ge_opvec_push(out, c);
		}
	ge_tuses_free(&u);
	ge_opset_free(&inside);
	ge_opset_free(&seen);
}

int ge_view_find_op_by_name(const ge_view *v, const char *name,
			    ge_opid *out, ge_error *err)
{
	size_t found = 0;
	for (size_t i = 0; i < v->ops.n; i++)
		if (strcmp(ge_op_name(v->graph, v->ops.v[i]), name) == 0) {
			if (!found++)
				*out = v->ops.v[i];
		}
	if (!found)
		return ge_err(err, GE_ENOTFOUND, "no op named '%s' in the view",
			      name);
	if (found > 1)
		return ge_err(err, GE_EINVAL,
			      "more than one op named '%s' in the view", name);
	return GE_OK;
}

static int t_index(const ge_view *v, const ge_tvec *list, const char *what,
		   ge_tref t, ge_error *err)
{
	for (size_t i = 0; i < list->n; i++)
		if (ge_tref_eq(list->v[i], t))
			return (int)i;
	if (!v->graph)
		return ge_err(err, GE_ENOTFOUND,
			      "the empty view has no %s", what);
	ge_buf s = GE_BUF_INIT;
	ge_err(err, GE_ENOTFOUND, "tensor '%s' is not an %s of the view",
	       ge_tensor_fmt(v->graph, t, &s), what);
	ge_buf_free(&s);
	return GE_ENOTFOUND;
}

int ge_view_input_index(const ge_view *v, ge_tref t, ge_error *err)
{
	return t_index(v, &v->inputs, "input", t, err);
}

int ge_view_output_index(const ge_view *v, ge_tref t, ge_error *err)
{
	return t_index(v, &v->outputs, "output", t, err);
}

int ge_view_is_passthrough(const ge_view *v, ge_tref t)
{
	for (size_t i = 0; i < v->passthroughs.n; i++)
		if (ge_tref_eq(v->passthroughs.v[i], t))
			return 1;
	return 0;
}

static void format_ts(const ge_view *v, const char *what, const ge_tvec *l,
		      const ge_tmap *pt, ge_buf *out)
{
	ge_buf s = GE_BUF_INIT;
	if (!l->n) {
		ge_buf_printf(out, "** %s: empty\n", what);
		return;
	}
	ge_buf_printf(out, "** %s[%zu]:\n", what, l->n);
	for (size_t i = 0; i < l->n; i++)
		ge_buf_printf(out, "  %s%s\n",
			      ge_tensor_fmt(v->graph, l->v[i], &s),
			      ge_tmap_get(pt, l->v[i], NULL) ? " *" : "");
	ge_buf_free(&s);
}

void ge_view_format(const ge_view *v, ge_buf *out)
{
	ge_tmap pt;
	if (!v->graph) {
		ge_buf_adds(out, "SubGraphView: empty");
		return;
	}
	/* graph_editor prints id(graph); the graph's name is as useful and
	 * the same from run to run */
	ge_buf_printf(out, "SubGraphView (graph=\"%s\"):\n",
		      ge_graph_name(v->graph));
	if (!v->ops.n) {
		ge_buf_adds(out, "** ops: empty\n");
	} else {
		ge_buf_printf(out, "** ops[%zu]:\n", v->ops.n);
		for (size_t i = 0; i < v->ops.n; i++)
			ge_buf_printf(out, "  %s\n",
				      ge_op_name(v->graph, v->ops.v[i]));
	}
	ge_tmap_init(&pt, v->passthroughs.n);
	for (size_t i = 0; i < v->passthroughs.n; i++)
		ge_tmap_put(&pt, v->passthroughs.v[i], 0);
	format_ts(v, "inputs", &v->inputs, &pt, out);
	format_ts(v, "outputs", &v->outputs, &pt, out);
	ge_tmap_free(&pt);
}

void ge_view_summary(const ge_view *v, ge_buf *out)
{
	if (!v->graph) {
		ge_buf_adds(out, "empty view");
		return;
	}
	ge_buf_printf(out, "view of %zu op%s (%zu input%s, %zu output%s)",
		      v->ops.n, v->ops.n == 1 ? "" : "s", v->inputs.n,
		      v->inputs.n == 1 ? "" : "s", v->outputs.n,
		      v->outputs.n == 1 ? "" : "s");
}

int ge_make_view(ge_graph *g, const ge_sel_arg *args, size_t n,
		 const ge_select_opts *o, ge_view *v, ge_error *err)
{
	ge_opvec ops = GE_VEC_INIT;
	ge_tvec ts = GE_VEC_INIT;
	static const ge_view empty = GE_VIEW_INIT;
	*v = empty;
	int rc = ge_select_ops_and_ts(g, args, n, o, &ops, &ts, err);
	if (rc == GE_OK)
		rc = ge_view_init(v, g, ops.v, ops.n, ts.v, ts.n, err);
	ge_opvec_free(&ops);
	ge_tvec_free(&ts);
	return rc;
}

int ge_make_view_from_scope(ge_graph *g, const char *scope, ge_view *v,
			    ge_error *err)
{
	ge_opvec ops = GE_VEC_INIT;
	ge_get_name_scope_ops(g, GE_ALL_OPS, 0, scope, &ops);
	int rc = ge_view_init(v, g, ops.v, ops.n, NULL, 0, err);
	ge_opvec_free(&ops);
	return rc;
}
