/* reroute.c: see reroute.h. */
#include "editor/reroute.h"

#include <stdlib.h>
#include <string.h>

static int tensor_check(const ge_graph *g, ge_tref t, ge_error *err)
{
	return ge_graph_check_tensor(g, t, err);
}

static int base_dtype(int d)
{
	return d > 100 ? d - 100 : d;
}

/* The static shape of a tensor, dims in *dims (caller frees when it is
 * not buf).  Returns the rank, -1 when unknown. */
static int shape_of(const ge_graph *g, ge_tref t, int64_t *buf, int cap,
		    int64_t **dims)
{
	*dims = buf;
	int r = ge_op_output_shape(g, t.op, t.index, buf, cap);
	if (r > cap) {
		*dims = ge_xmalloc((size_t)r * sizeof **dims);
		r = ge_op_output_shape(g, t.op, t.index, *dims, r);
	}
	return r;
}

static void describe(const ge_graph *g, ge_tref t, int dtype, int rank,
		     const int64_t *dims, ge_buf *out)
{
	ge_buf s = GE_BUF_INIT;
	const char *dn = ge_dtype_name(dtype);
	ge_buf_printf(out, "'%s' (%s", ge_tensor_fmt(g, t, &s),
		      dtype ? (dn ? dn : "?") : "unknown dtype");
	if (rank < 0) {
		ge_buf_adds(out, ", unknown shape)");
	} else {
		ge_buf_addc(out, '[');
		for (int i = 0; i < rank; i++) {
			if (i)
				ge_buf_addc(out, ',');
			if (dims[i] < 0)
				ge_buf_addc(out, '?');
			else
				ge_buf_printf(out, "%lld", (long long)dims[i]);
		}
		ge_buf_adds(out, "])");
	}
	ge_buf_free(&s);
}

static int check_pair(const ge_graph *g, ge_tref a, ge_tref b, ge_error *err)
{
	int64_t ba[8], bb[8], *da, *db;
	int ta = ge_op_output_dtype(g, a.op, a.index);
	int tb = ge_op_output_dtype(g, b.op, b.index);
	int ra = shape_of(g, a, ba, 8, &da);
	int rb = shape_of(g, b, bb, 8, &db);
	const char *what = NULL;
	if (ta && tb && base_dtype(ta) != base_dtype(tb))
		what = "dtypes";
	else if (ra >= 0 && rb >= 0) {
		if (ra != rb)
			what = "shapes";
		for (int i = 0; !what && i < ra; i++)
			if (da[i] >= 0 && db[i] >= 0 && da[i] != db[i])
				what = "shapes";
	}
	int rc = GE_OK;
	if (what) {
		ge_buf m = GE_BUF_INIT;
		describe(g, a, ta, ra, da, &m);
		ge_buf_adds(&m, " and ");
		describe(g, b, tb, rb, db, &m);
		rc = ge_err(err, GE_EINVAL, "tensors %s have incompatible %s",
			    (char *)m.data, what);
		ge_buf_free(&m);
	}
	if (da != ba)
		free(da);
	if (db != bb)
		free(db);
	return rc;
}

/* The checks every reroute runs before it changes anything. */
static int check_lists(const ge_graph *g, const ge_tref *ts0, size_t n0,
		       const ge_tref *ts1, size_t n1, ge_error *err)
{
	int rc;
	if (n0 != n1)
		return ge_err(err, GE_EINVAL,
			      "ts0 and ts1 have different sizes: %zu != %zu",
			      n0, n1);
	for (size_t i = 0; i < n0; i++)
		if ((rc = tensor_check(g, ts0[i], err)) ||
		    (rc = tensor_check(g, ts1[i], err)) ||
		    (rc = check_pair(g, ts0[i], ts1[i], err)))
			return rc;
	return GE_OK;
}

typedef struct change {
	ge_opid op;
	uint32_t slot;
	ge_tref t;
} change;

typedef struct plan {
	change *v;
	size_t n, cap;
	ge_tmap claimed; /* (consumer, slot) already scheduled */
} plan;

/* A can_modify or cannot_modify argument: an op set, or a list of ops
 * (sorted copy, looked up by bisection, so a filter of k ops costs
 * O(k log k) and not a bitmap over the whole graph). */
typedef struct opfilter {
	const ge_opset *set;
	ge_opid *sorted;
	size_t n;
} opfilter;

static void filter_of_list(opfilter *f, const ge_opvec *v)
{
	f->set = NULL;
	f->n = v->n;
	f->sorted = ge_xmalloc((v->n ? v->n : 1) * sizeof *f->sorted);
	if (v->n)
		memcpy(f->sorted, v->v, v->n * sizeof *f->sorted);
	qsort(f->sorted, f->n, sizeof *f->sorted, ge_opid_cmp);
}

static int filter_has(const opfilter *f, ge_opid op)
{
	if (f->set)
		return ge_opset_has(f->set, op);
	return bsearch(&op, f->sorted, f->n, sizeof *f->sorted,
		       ge_opid_cmp) != NULL;
}

static void plan_moves(plan *p, const ge_tuses *u, size_t i, ge_tref to,
		       const opfilter *can, const opfilter *cannot)
{
	for (size_t k = 0; k < u->len[i]; k++) {
		ge_use us = u->uses[u->off[i] + k];
		if (can && !filter_has(can, us.op))
			continue;
		if (cannot && filter_has(cannot, us.op))
			continue;
		if (!ge_tmap_put(&p->claimed, (ge_tref){us.op, (int32_t)us.slot},
				 0))
			continue;
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 16;
			p->v = ge_xrealloc(p->v, p->cap * sizeof *p->v);
		}
		p->v[p->n++] = (change){us.op, us.slot, to};
	}
}

static int reroute_filtered(ge_graph *g, const ge_tref *ts0, size_t n0,
			    const ge_tref *ts1, size_t n1, int mode,
			    const opfilter *can_modify,
			    const opfilter *cannot_modify, ge_error *err)
{
	int rc, a2b, b2a;
	switch (mode) {
	case GE_REROUTE_A2B: a2b = 1, b2a = 0; break;
	case GE_REROUTE_B2A: a2b = 0, b2a = 1; break;
	case GE_REROUTE_SWAP: a2b = 1, b2a = 1; break;
	default:
		return ge_err(err, GE_EINVAL, "unknown reroute mode %d", mode);
	}
	if ((rc = check_lists(g, ts0, n0, ts1, n1, err)))
		return rc;

	/* Every slot to move is read off the graph before the first edit. */
	ge_tuses u0, u1;
	plan p = {NULL, 0, 0, {NULL, 0, 0}};
	ge_tuses_compute(&u0, g, ts0, n0);
	ge_tuses_compute(&u1, g, ts1, n1);
	ge_tmap_init(&p.claimed, 16);
	for (size_t i = 0; i < n0; i++) {
		if (ge_tref_eq(ts0[i], ts1[i]))
			continue;
		if (a2b)
			plan_moves(&p, &u1, i, ts0[i], can_modify, cannot_modify);
		if (b2a)
			plan_moves(&p, &u0, i, ts1[i], can_modify, cannot_modify);
	}
	/* one batch: moving all N readers of a tensor stays O(N) */
	ge_input_edit *ed = ge_xmalloc((p.n + 1) * sizeof *ed);
	for (size_t i = 0; i < p.n; i++)
		ed[i] = (ge_input_edit){p.v[i].op, (uint32_t)p.v[i].slot,
					p.v[i].t};
	rc = ge_graph_set_inputs(g, ed, p.n, err);
	free(ed);
	if (rc == GE_OK)
		rc = p.n > (size_t)INT32_MAX ? INT32_MAX : (int)p.n;
	free(p.v);
	ge_tmap_free(&p.claimed);
	ge_tuses_free(&u0);
	ge_tuses_free(&u1);
	return rc;
}

int ge_reroute_ts_mode(ge_graph *g, const ge_tref *ts0, size_t n0,
		       const ge_tref *ts1, size_t n1, int mode,
		       const ge_opset *can_modify,
		       const ge_opset *cannot_modify, ge_error *err)
{
	opfilter c = {can_modify, NULL, 0}, n = {cannot_modify, NULL, 0};
	return reroute_filtered(g, ts0, n0, ts1, n1, mode,
				can_modify ? &c : NULL,
				cannot_modify ? &n : NULL, err);
}

int ge_reroute_ts_lists(ge_graph *g, const ge_tref *ts0, size_t n0,
			const ge_tref *ts1, size_t n1, int mode,
			const ge_opvec *can_modify,
			const ge_opvec *cannot_modify, ge_error *err)
{
	opfilter c, n;
	if (can_modify)
		filter_of_list(&c, can_modify);
	if (cannot_modify)
		filter_of_list(&n, cannot_modify);
	int rc = reroute_filtered(g, ts0, n0, ts1, n1, mode,
				  can_modify ? &c : NULL,
				  cannot_modify ? &n : NULL, err);
	if (can_modify)
		free(c.sorted);
	if (cannot_modify)
		free(n.sorted);
	return rc;
}

int ge_swap_ts(ge_graph *g, const ge_tref *ts0, size_t n0, const ge_tref *ts1,
	       size_t n1, const ge_opset *can_modify,
	       const ge_opset *cannot_modify, ge_error *err)
{
	return ge_reroute_ts_mode(g, ts0, n0, ts1, n1, GE_REROUTE_SWAP,
				  can_modify, cannot_modify, err);
}

int ge_reroute_ts(ge_graph *g, const ge_tref *ts0, size_t n0,
		  const ge_tref *ts1, size_t n1, const ge_opset *can_modify,
		  const ge_opset *cannot_modify, ge_error *err)
{
	return ge_reroute_ts_mode(g, ts0, n0, ts1, n1, GE_REROUTE_A2B,
				  can_modify, cannot_modify, err);
}

/* graph_editor's _reroute_sgv_remap: after rerouting inputs, the views'
 * input and passthrough lists follow the tensors, and an output of one
 * view that was a passthrough of the other follows its input. */
static void passthrough_outputs(const ge_view *a, ge_view *b)
{
	ge_tmap pt, first;
	ge_tmap_init(&pt, a->passthroughs.n);
	ge_tmap_init(&first, a->inputs.n);
	for (size_t i = 0; i < a->passthroughs.n; i++)
		ge_tmap_put(&pt, a->passthroughs.v[i], 0);
	for (size_t i = 0; i < a->inputs.n; i++)
		ge_tmap_put(&first, a->inputs.v[i], i);
	for (size_t i = 0; i < b->outputs.n; i++) {
		size_t ii;
		if (ge_tmap_get(&pt, b->outputs.v[i], NULL) &&
		    ge_tmap_get(&first, b->outputs.v[i], &ii) &&
		    ii < b->inputs.n)
			b->outputs.v[i] = b->inputs.v[ii];
	}
	ge_tmap_free(&pt);
	ge_tmap_free(&first);
}

static void tvec_set(ge_tvec *dst, const ge_tvec *src)
{
	dst->n = 0;
	for (size_t i = 0; i < src->n; i++)
		ge_tvec_push(dst, src->v[i]);
}

static void remap_views(ge_view *a, ge_view *b, int a2b, int b2a)
{
	ge_view a_, b_;
	ge_tvec tmp;
	ge_view_copy(&a_, a);
	ge_view_copy(&b_, b);
	if (a2b && b2a) {
		tmp = a_.inputs, a_.inputs = b_.inputs, b_.inputs = tmp;
		tmp = a_.passthroughs, a_.passthroughs = b_.passthroughs,
		b_.passthroughs = tmp;
	} else if (a2b) {
		tvec_set(&b_.inputs, &a_.inputs);
		tvec_set(&b_.passthroughs, &a_.passthroughs);
	} else if (b2a) {
		tvec_set(&a_.inputs, &b_.inputs);
		tvec_set(&a_.passthroughs, &b_.passthroughs);
	}
	if (a2b)
		passthrough_outputs(&a_, &b_);
	if (b2a)
		passthrough_outputs(&b_, &a_);
	ge_view_assign(a, &a_);
	ge_view_assign(b, &b_);
	ge_view_free(&a_);
	ge_view_free(&b_);
}

int ge_reroute_views(ge_view *a, ge_view *b, int mode, int inputs,
		     int outputs, ge_error *err)
{
	int rc, total = 0;
	if ((rc = ge_view_check(a, err)) || (rc = ge_view_check(b, err)))
		return rc;
	ge_graph *g = a->graph ? a->graph : b->graph;
	if (a->graph && b->graph && a->graph != b->graph)
		return ge_err(err, GE_EINVAL,
			      "the views are of different graphs ('%s' and '%s')",
			      ge_graph_name(a->graph), ge_graph_name(b->graph));
	if (!g)
		return 0;
	if (mode < GE_REROUTE_A2B || mode > GE_REROUTE_SWAP)
		return ge_err(err, GE_EINVAL, "unknown reroute mode %d", mode);
	/* Both lists are checked first so a failure leaves the graph as it
	 * was, even for swap_ios / reroute_ios. */
	if (outputs && (rc = check_lists(g, a->outputs.v, a->outputs.n,
					 b->outputs.v, b->outputs.n, err)))
		return rc;
	if (inputs && (rc = check_lists(g, a->inputs.v, a->inputs.n,
					b->inputs.v, b->inputs.n, err)))
		return rc;
	if (outputs) {
		ge_opset cannot;
		ge_opset_init(&cannot, g);
		ge_opset_add_list(&cannot, a->ops.v, a->ops.n);
		ge_opset_add_list(&cannot, b->ops.v, b->ops.n);
		rc = ge_reroute_ts_mode(g, a->outputs.v, a->outputs.n,
					b->outputs.v, b->outputs.n, mode, NULL,
					&cannot, err);
		ge_opset_free(&cannot);
		if (rc < 0)
			return rc;
		total += rc;
	}
	if (inputs) {
		ge_opset can;
		ge_opvec pc = GE_VEC_INIT;
		ge_opset_init(&can, g);
		ge_opset_add_list(&can, a->ops.v, a->ops.n);
		ge_opset_add_list(&can, b->ops.v, b->ops.n);
		ge_get_consuming_ops(g, a->passthroughs.v, a->passthroughs.n,
				     &pc);
		ge_get_consuming_ops(g, b->passthroughs.v, b->passthroughs.n,
				     &pc);
		ge_opset_add_list(&can, pc.v, pc.n);
		ge_opvec_free(&pc);
		rc = ge_reroute_ts_mode(g, a->inputs.v, a->inputs.n,
					b->inputs.v, b->inputs.n, mode, &can,
					NULL, err);
		ge_opset_free(&can);
		if (rc < 0)
			return rc;
		total += rc;
		remap_views(a, b, mode != GE_REROUTE_B2A,
			    mode != GE_REROUTE_A2B);
	}
	if (a->graph)
		a->version = ge_graph_version(g);
	if (b->graph)
		b->version = ge_graph_version(g);
	return total;
}

int ge_swap_inputs(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_SWAP, 1, 0, err);
}

int ge_reroute_inputs(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_A2B, 1, 0, err);
}

int ge_swap_outputs(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_SWAP, 0, 1, err);
}

int ge_reroute_outputs(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_A2B, 0, 1, err);
}

int ge_swap_ios(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_SWAP, 1, 1, err);
}

int ge_reroute_ios(ge_view *a, ge_view *b, ge_error *err)
{
	return ge_reroute_views(a, b, GE_REROUTE_A2B, 1, 1, err);
}

static int op_check(const ge_graph *g, ge_opid op, ge_error *err)
{
	if (op == GE_NOOP || op >= ge_graph_capacity(g))
		return ge_err(err, GE_EINVAL, "%s: not an op of the graph",
			      ge_graph_name(g));
	if (!ge_op_alive(g, op))
		return ge_err(err, GE_EINVAL, "op '%s' was removed from the graph",
			      ge_op_name(g, op));
	return GE_OK;
}

/* Checks op and the n ops of cops, then fills s (which the caller frees)
 * with the control inputs op has now; s is left alone on an error. */
static int control_set(const ge_graph *g, ge_opid op, const ge_opid *cops,
		       size_t n, ge_opset *s, ge_error *err)
{
	int rc;
	if ((rc = op_check(g, op, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if ((rc = op_check(g, cops[i], err)))
			return rc;
	size_t k = ge_op_num_control_inputs(g, op);
	ge_opset_init(s, g);
	for (size_t i = 0; i < k; i++) {
		ge_opid c = ge_op_control_input(g, op, i);
		if (c != GE_NOOP)
			ge_opset_add(s, c);
	}
	return GE_OK;
}

int ge_add_control_inputs(ge_graph *g, ge_opid op, const ge_opid *cops,
			  size_t n, ge_error *err)
{
	ge_opset have;
	int rc = control_set(g, op, cops, n, &have, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && rc == GE_OK; i++)
		if (!ge_opset_insert(&have, cops[i]))
			rc = ge_err(err, GE_EINVAL,
				    "'%s' is already a control input of '%s'",
				    ge_op_name(g, cops[i]), ge_op_name(g, op));
	ge_opset_free(&have);
	for (size_t i = 0; i < n && rc == GE_OK; i++)
		rc = ge_op_add_control_input(g, op, cops[i], err);
	return rc;
}

int ge_remove_control_inputs(ge_graph *g, ge_opid op, const ge_opid *cops,
			     size_t n, ge_error *err)
{
	ge_opset have;
	int rc = control_set(g, op, cops, n, &have, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && rc == GE_OK; i++)
		if (!ge_opset_has(&have, cops[i]))
			rc = ge_err(err, GE_EINVAL,
				    "'%s' is not a control input of '%s'",
				    ge_op_name(g, cops[i]), ge_op_name(g, op));
	ge_opset_free(&have);
	/* a cop listed twice is removed once */
	for (size_t i = 0; i < n && rc == GE_OK; i++) {
		rc = ge_op_remove_control_input(g, op, cops[i], NULL);
		if (rc == GE_ENOTFOUND)
			rc = GE_OK;
	}
	return rc;
}
