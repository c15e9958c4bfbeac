/* select.c: see select.h. */
#include "editor/select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"

static int tensor_ok(const ge_graph *g, ge_tref t)
{
	return t.op != GE_NOOP && t.op < ge_graph_capacity(g) &&
	       ge_op_alive(g, t.op) && t.index >= 0;
}

/* A few tensors (one, most often: a reroute of one tensor): each one's
 * producer's uses are read directly, with no maps, in the same order the
 * general path gives. */
#define TUSES_SMALL 4

static void tuses_small(ge_tuses *u, const ge_graph *g, const ge_tref *ts,
			size_t n)
{
	size_t canon[TUSES_SMALL], total = 0;
	u->n = n;
	u->off = ge_xcalloc(n ? n : 1, sizeof *u->off);
	u->len = ge_xcalloc(n ? n : 1, sizeof *u->len);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			canon[i] = i;
			if (!tensor_ok(g, ts[i]))
				continue;
			for (size_t j = 0; j < i && canon[i] == i; j++)
				if (ge_tref_eq(ts[j], ts[i]))
					canon[i] = j;
			if (canon[i] != i)
				continue;
			size_t nu, k0 = u->off[i];
			const ge_use *us = ge_op_uses(g, ts[i].op, &nu);
			for (size_t k = 0; k < nu; k++) {
				if (ge_op_input(g, us[k].op, us[k].slot).index !=
				    ts[i].index)
					continue;
				if (pass == 0)
					u->len[i]++;
				else
					u->uses[k0++] = us[k];
			}
		}
		if (pass == 1)
			break;
		for (size_t i = 0; i < n; i++)
			if (canon[i] == i) {
				u->off[i] = total;
				total += u->len[i];
			}
		u->uses = ge_xmalloc((total ? total : 1) * sizeof *u->uses);
	}
	for (size_t i = 0; i < n; i++) {
		u->off[i] = u->off[canon[i]];
		u->len[i] = u->len[canon[i]];
	}
}

/* Two passes over the uses of each distinct producer: count, then fill,
 * so the result is one array with no per-tensor allocation. */
void ge_tuses_compute(ge_tuses *u, const ge_graph *g, const ge_tref *ts,
		      size_t n)
{
	if (n <= TUSES_SMALL) {
		tuses_small(u, g, ts, n);
		return;
	}
	ge_tmap idx, prod;
	size_t *canon = ge_xmalloc((n ? n : 1) * sizeof *canon);
	size_t *fill;
	u->n = n;
	u->off = ge_xcalloc(n ? n : 1, sizeof *u->off);
	u->len = ge_xcalloc(n ? n : 1, sizeof *u->len);
	ge_tmap_init(&idx, n);
	ge_tmap_init(&prod, n);
	for (size_t i = 0; i < n; i++) {
		canon[i] = i;
		if (!tensor_ok(g, ts[i]))
			continue;
		if (!ge_tmap_put(&idx, ts[i], i))
			ge_tmap_get(&idx, ts[i], &canon[i]);
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			size_t total = 0;
			for (size_t i = 0; i < n; i++) {
				if (canon[i] != i)
					continue;
				u->off[i] = total;
				total += u->len[i];
			}
			u->uses = ge_xmalloc((total ? total : 1) *
					     sizeof *u->uses);
			ge_tmap_free(&prod);
			ge_tmap_init(&prod, n);
		}
		fill = pass ? ge_xcalloc(n ? n : 1, sizeof *fill) : NULL;
		for (size_t i = 0; i < n; i++) {
			if (canon[i] != i || !tensor_ok(g, ts[i]))
				continue;
			ge_opid p = ts[i].op;
			if (!ge_tmap_put(&prod, (ge_tref){p, 0}, 0))
				continue;
			size_t nu;
			const ge_use *us = ge_op_uses(g, p, &nu);
			for (size_t k = 0; k < nu; k++) {
				ge_tref in = ge_op_input(g, us[k].op, us[k].slot);
				size_t j;
				if (!ge_tmap_get(&idx, (ge_tref){p, in.index}, &j))
					continue;
				if (pass == 0)
					u->len[j]++;
				else
					u->uses[u->off[j] + fill[j]++] = us[k];
			}
		}
		free(fill);
	}
	for (size_t i = 0; i < n; i++) {
		u->off[i] = u->off[canon[i]];
		u->len[i] = u->len[canon[i]];
	}
	ge_tmap_free(&idx);
	ge_tmap_free(&prod);
	free(canon);
}

void ge_tuses_free(ge_tuses *u)
{
	free(u->off);
	free(u->len);
	free(u->uses);
	memset(u, 0, sizeof *u);
}

/* ------------------------------------------------------------ util */

void ge_opvec_unique(const ge_graph *g, ge_opvec *v)
{
	ge_opset s;
	size_t k = 0;
	ge_opset_init(&s, g);
	for (size_t i = 0; i < v->n; i++)
		if (ge_opset_insert(&s, v->v[i]))
			v->v[k++] = v->v[i];
	v->n = k;
	ge_opset_free(&s);
}

void ge_tvec_unique(ge_tvec *v)
{
	ge_tset m;
	size_t k = 0;
	ge_tset_init(&m, NULL);
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].op == GE_NOOP || ge_tset_insert(&m, v->v[i]))
			v->v[k++] = v->v[i];
	v->n = k;
	ge_tset_free(&m);
}

void ge_opvec_concat_unique(const ge_graph *g, ge_opvec *a, const ge_opid *b,
			    size_t n)
{
	ge_opset s;
	ge_opset_init(&s, g);
	ge_opset_add_list(&s, a->v, a->n);
	for (size_t i = 0; i < n; i++)
		if (ge_opset_insert(&s, b[i]))
			ge_opvec_push(a, b[i]);
	ge_opset_free(&s);
}

void ge_graph_all_ops(const ge_graph *g, ge_opvec *out)
{
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id))
			ge_opvec_push(out, (ge_opid)id);
}

static void push_outputs(const ge_graph *g, ge_opid id, ge_tvec *out)
{
	int n = ge_op_num_outputs(g, id);
	for (int i = 0; i < n; i++)
		ge_tvec_push(out, (ge_tref){id, i});
}

void ge_graph_all_ts(const ge_graph *g, ge_tvec *out)
{
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id))
			push_outputs(g, (ge_opid)id, out);
}

void ge_get_generating_ops(const ge_tref *ts, size_t n, ge_opvec *out)
{
	for (size_t i = 0; i < n; i++)
		if (ts[i].op != GE_NOOP)
			ge_opvec_push(out, ts[i].op);
}

void ge_get_consuming_ops(const ge_graph *g, const ge_tref *ts, size_t n,
			  ge_opvec *out)
{
	ge_tuses u;
	ge_opset seen;
	ge_tuses_compute(&u, g, ts, n);
	ge_opset_init(&seen, g);
	ge_opset_add_list(&seen, out->v, out->n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < u.len[i]; k++) {
			ge_opid c = u.uses[u.off[i] + k].op;
			if (ge_opset_insert(&seen, c))
				ge_opvec_push(out, c);
		}
	ge_opset_free(&seen);
	ge_tuses_free(&u);
}

char *ge_scope_finalize(const char *scope)
{
	size_t n = strlen(scope);
	if (!n || scope[n - 1] == '/')
		return ge_xstrdup(scope);
	char *s = ge_xmalloc(n + 2);
	memcpy(s, scope, n);
	s[n] = '/';
	s[n + 1] = 0;
	return s;
}

char *ge_scope_dirname(const char *name)
{
	const char *p = strrchr(name, '/');
	return p ? ge_xstrndup(name, (size_t)(p - name) + 1) : ge_xstrdup("");
}

char *ge_scope_basename(const char *name)
{
	const char *p = strrchr(name, '/');
	return ge_xstrdup(p ? p + 1 : name);
}

char *ge_placeholder_name(const ge_graph *g, const ge_tref *t,
			  const char *scope, const char *prefix)
{
	ge_buf b = GE_BUF_INIT;
	char *sc;
	if (!prefix)
		prefix = GE_PH_PREFIX;
	if (!t) {
		sc = ge_scope_finalize(scope ? scope : "");
		ge_buf_printf(&b, "%s%s", sc, prefix);
		free(sc);
		return (char *)ge_buf_steal(&b, NULL);
	}
	const char *name = ge_op_name(g, t->op);
	sc = scope ? ge_scope_finalize(scope) : ge_scope_dirname(name);
	char *base = ge_scope_basename(name);
	size_t pl = strlen(prefix);
	if (strncmp(base, prefix, pl) == 0 && strncmp(base + pl, "__", 2) == 0)
		ge_buf_printf(&b, "%s%s", sc, base);
	else
		ge_buf_printf(&b, "%s%s__%s_%d", sc, prefix, base, t->index);
	free(sc);
	free(base);
	return (char *)ge_buf_steal(&b, NULL);
}

/* AttrValue field numbers: type = 6, shape = 7.  TensorShapeProto: dim = 2
 * (Dim: size = 1), unknown_rank = 3.  The attrs are written as bytes so
 * the placeholder costs no protobuf-c message building. */
static void set_ph_attrs(ge_graph *g, ge_opid id, int dtype,
			 const int64_t *dims, int rank)
{
	ge_buf a = GE_BUF_INIT, shape = GE_BUF_INIT, dim = GE_BUF_INIT;
	if (dtype > 0) {
		ge_buf_tag(&a, 6, 0);
		ge_buf_varint(&a, (uint64_t)dtype);
		ge_op_set_attr_raw(g, id, "dtype", a.data, a.len);
	}
	if (rank < 0) {
		ge_buf_tag(&shape, 3, 0);
		ge_buf_varint(&shape, 1);
	} else {
		for (int i = 0; i < rank; i++) {
			dim.len = 0;
			if (dims[i] != 0) {
				ge_buf_tag(&dim, 1, 0);
				ge_buf_varint(&dim, (uint64_t)dims[i]);
			}
			ge_buf_lenfield(&shape, 2, dim.data, dim.len);
		}
	}
	a.len = 0;
	ge_buf_lenfield(&a, 7, shape.data, shape.len);
	ge_op_set_attr_raw(g, id, "shape", a.data, a.len);
	ge_buf_free(&a);
	ge_buf_free(&shape);
	ge_buf_free(&dim);
}

static ge_opid add_placeholder(ge_graph *g, const char *want, int dtype,
			       const int64_t *dims, int rank, ge_error *err)
{
	const char *name = ge_graph_unique_name(g, want);
	ge_opid id = ge_graph_add_op(g, name, "Placeholder", err);
	if (id != GE_NOOP)
		set_ph_attrs(g, id, dtype, dims, rank);
	return id;
}

ge_opid ge_make_placeholder(ge_graph *g, int dtype, const int64_t *dims,
			    int rank, const char *scope, const char *prefix,
			    ge_error *err)
{
	if (rank > 0 && !dims) {
		ge_err(err, GE_EINVAL, "placeholder of rank %d without dims",
		       rank);
		return GE_NOOP;
	}
	char *want = ge_placeholder_name(g, NULL, scope, prefix);
	ge_opid id = add_placeholder(g, want, dtype, dims, rank, err);
	free(want);
	return id;
}

ge_opid ge_make_placeholder_from_tensor(ge_graph *g, const ge_graph *src,
					ge_tref t, const char *scope,
					const char *prefix, ge_error *err)
{
	int64_t small[16], *dims = small;
	if (!src)
		src = g;
	if (!tensor_ok(src, t)) {
		ge_err(err, GE_EINVAL, "%s: no tensor to make a placeholder from",
		       ge_graph_name(src));
		return GE_NOOP;
	}
	/* A placeholder cannot be a reference: take the base type. */
	int dtype = ge_op_output_dtype(src, t.op, t.index);
	if (dtype > 100)
		dtype -= 100;
	int rank = ge_op_output_shape(src, t.op, t.index, small, 16);
	if (rank > 16) {
		dims = ge_xmalloc((size_t)rank * sizeof *dims);
		rank = ge_op_output_shape(src, t.op, t.index, dims, rank);
	}
	char *want = ge_placeholder_name(src, &t, scope, prefix);
	ge_opid id = add_placeholder(g, want, dtype, dims, rank, err);
	free(want);
	if (dims != small)
		free(dims);
	return id;
}

/* ------------------------------------------------------------ select */

static int cb_failed(ge_error *err)
{
	return ge_err(err, GE_EINVAL, "callback failed");
}

const ge_opid ge_all_ops_[1] = {GE_NOOP};

/* Iteration over "ops, or the whole graph for GE_ALL_OPS". */
static size_t list_len(const ge_graph *g, const ge_opid *ops, size_t n)
{
	return ops != GE_ALL_OPS ? n : ge_graph_capacity(g);
}

static int list_at(const ge_graph *g, const ge_opid *ops, size_t i,
		   ge_opid *id)
{
	if (ops != GE_ALL_OPS) {
		*id = ops[i];
		return 1;
	}
	*id = (ge_opid)i;
	return ge_op_alive(g, *id);
}

static void input_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		     ge_tset *seen, ge_tvec *out)
{
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		size_t ni = ge_op_num_inputs(g, id);
		for (size_t k = 0; k < ni; k++) {
			ge_tref t = ge_op_input(g, id, k);
			if (t.op != GE_NOOP && ge_tset_insert(seen, t))
				ge_tvec_push(out, t);
		}
	}
}

void ge_get_input_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		     ge_tvec *out)
{
	ge_tset seen;
	ge_tset_init(&seen, g);
	input_ts(g, ops, n, &seen, out);
	ge_tset_free(&seen);
}

void ge_get_output_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		      ge_tvec *out)
{
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (list_at(g, ops, i, &id))
			push_outputs(g, id, out);
	}
}

/* filter_ts's candidate list: unique inputs, then outputs not seen. */
static void candidate_ts(const ge_graph *g, const ge_opid *ops, size_t n,
			 ge_tvec *out)
{
	ge_tset seen;
	ge_tset_init(&seen, g);
	input_ts(g, ops, n, &seen, out);
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		int no = ge_op_num_outputs(g, id);
		for (int k = 0; k < no; k++)
			if (ge_tset_insert(&seen, (ge_tref){id, k}))
				ge_tvec_push(out, (ge_tref){id, k});
	}
	ge_tset_free(&seen);
}

int ge_filter_ops(const ge_graph *g, const ge_opid *ops, size_t n,
		  ge_op_pred pred, void *ud, ge_opvec *out, ge_error *err)
{
	size_t len = list_len(g, ops, n), start = out->n;
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		int r = pred ? pred(g, id, ud) : 1;
		if (r < 0) {
			out->n = start;
			return cb_failed(err);
		}
		if (r)
			ge_opvec_push(out, id);
	}
	return GE_OK;
}

int ge_filter_ts(const ge_graph *g, const ge_opid *ops, size_t n,
		 ge_t_pred pred, void *ud, ge_tvec *out, ge_error *err)
{
	ge_tvec c = GE_VEC_INIT;
	int rc = GE_OK;
	candidate_ts(g, ops, n, &c);
	for (size_t i = 0; i < c.n; i++) {
		int r = pred ? pred(g, c.v[i], ud) : 1;
		if (r < 0) {
			rc = cb_failed(err);
			break;
		}
		if (r)
			ge_tvec_push(out, c.v[i]);
	}
	ge_tvec_free(&c);
	return rc;
}

static int op_matches(const ge_graph *g, ge_opid id, ge_regex *re,
		      ge_error *err)
{
	const char *name = ge_op_name(g, id);
	return ge_regex_search(re, name, strlen(name), err);
}

int ge_filter_ops_from_regex(const ge_graph *g, const ge_opid *ops, size_t n,
			     const char *regex, ge_opvec *out, ge_error *err)
{
	ge_regex *re = ge_regex_cached(regex, err);
	if (!re)
		return GE_EINVAL;
	size_t len = list_len(g, ops, n), start = out->n;
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		int r = op_matches(g, id, re, err);
		if (r < 0) {
			out->n = start;
			return r;
		}
		if (r)
			ge_opvec_push(out, id);
	}
	return GE_OK;
}

static int ts_matching(const ge_graph *g, const ge_tvec *c, ge_regex *re,
		       ge_tvec *out, ge_error *err)
{
	ge_buf s = GE_BUF_INIT;
	size_t start = out->n;
	int rc = GE_OK;
	for (size_t i = 0; i < c->n; i++) {
		ge_tensor_fmt(g, c->v[i], &s);
		int r = ge_regex_search(re, (const char *)s.data, s.len, err);
		if (r < 0) {
			out->n = start;
			rc = r;
			break;
		}
		if (r)
			ge_tvec_push(out, c->v[i]);
	}
	ge_buf_free(&s);
	return rc;
}

int ge_filter_ts_from_regex(const ge_graph *g, const ge_opid *ops, size_t n,
			    const char *regex, ge_tvec *out, ge_error *err)
{
	ge_regex *re = ge_regex_cached(regex, err);
	if (!re)
		return GE_EINVAL;
	ge_tvec c = GE_VEC_INIT;
	candidate_ts(g, ops, n, &c);
	int rc = ts_matching(g, &c, re, out, err);
	ge_tvec_free(&c);
	return rc;
}

void ge_get_name_scope_ops(const ge_graph *g, const ge_opid *ops, size_t n,
			   const char *scope, ge_opvec *out)
{
	size_t sl = strlen(scope);
	if (sl && scope[sl - 1] == '/')
		sl--;
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		const char *name = ge_op_name(g, id);
		if (strncmp(name, scope, sl) == 0 &&
		    (name[sl] == 0 || name[sl] == '/'))
			ge_opvec_push(out, id);
	}
}

/* The consumers of an op's outputs, output by output, each output's
 * consumers in node order (repeats possible across outputs).  uses are
 * sorted by consumer, so a stable sort by output index is all it takes. */
typedef struct idx_use {
	int32_t index;
	uint32_t pos;
	ge_opid op;
} idx_use;

static int cmp_idx_use(const void *a, const void *b)
{
	const idx_use *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void consumers_by_output(const ge_graph *g, ge_opid id, idx_use **buf,
				size_t *cap, size_t *n)
{
	size_t nu;
	const ge_use *us = ge_op_uses(g, id, &nu);
	int sorted = 1;
	if (nu > *cap) {
		*cap = nu * 2;
		*buf = ge_xrealloc(*buf, *cap * sizeof **buf);
	}
	for (size_t k = 0; k < nu; k++) {
		idx_use *e = &(*buf)[k];
		e->index = ge_op_input(g, us[k].op, us[k].slot).index;
		e->pos = (uint32_t)k;
		e->op = us[k].op;
		if (k && e->index < (*buf)[k - 1].index)
			sorted = 0;
	}
	if (!sorted)
		qsort(*buf, nu, sizeof **buf, cmp_idx_use);
	*n = nu;
}

void ge_get_ops_ios(const ge_graph *g, const ge_opid *ops, size_t n,
		    int control_inputs, int control_outputs, ge_opvec *out)
{
	ge_opset seen;
	idx_use *buf = NULL;
	size_t cap = 0;
	ge_opset_init(&seen, g);
	ge_opset_add_list(&seen, out->v, out->n);
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id))
			continue;
		size_t ni = ge_op_num_inputs(g, id), nc;
		for (size_t k = 0; k < ni; k++) {
			ge_opid p = ge_op_input(g, id, k).op;
			if (p != GE_NOOP && ge_opset_insert(&seen, p))
				ge_opvec_push(out, p);
		}
		consumers_by_output(g, id, &buf, &cap, &nc);
		for (size_t k = 0; k < nc; k++)
			if (ge_opset_insert(&seen, buf[k].op))
				ge_opvec_push(out, buf[k].op);
		if (control_outputs) {
			const ge_opid *co = ge_op_control_outputs(g, id, &nc);
			for (size_t k = 0; k < nc; k++)
				if (ge_opset_insert(&seen, co[k]))
					ge_opvec_push(out, co[k]);
		}
		if (control_inputs) {
			nc = ge_op_num_control_inputs(g, id);
			for (size_t k = 0; k < nc; k++) {
				ge_opid c = ge_op_control_input(g, id, k);
				if (c != GE_NOOP && ge_opset_insert(&seen, c))
					ge_opvec_push(out, c);
			}
		}
	}
	free(buf);
	ge_opset_free(&seen);
}

/* One pass over the inputs of the ops and one over the uses of their
 * outputs: a tensor is "only inside" when an op of the set reads it and
 * no op outside does. */
void ge_compute_boundary_ts(const ge_graph *g, const ge_opid *ops, size_t n,
			    ge_tvec *in, ge_tvec *out, ge_tvec *inside)
{
	ge_opset set, done;
	ge_tset read_in, read_out;
	ge_tvec inputs = GE_VEC_INIT;
	size_t len = list_len(g, ops, n);

	ge_opset_init(&set, g);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (list_at(g, ops, i, &id))
			ge_opset_add(&set, id);
	}
	ge_tset_init(&read_in, g);
	input_ts(g, ops, n, &read_in, &inputs);

	ge_tset_init(&read_out, g);
	ge_opset_init(&done, g);
	for (size_t i = 0; out && i < len; i++) {
		ge_opid id;
		if (!list_at(g, ops, i, &id) || !ge_opset_insert(&done, id))
			continue;
		size_t nu;
		const ge_use *us = ge_op_uses(g, id, &nu);
		for (size_t k = 0; k < nu; k++)
			if (!ge_opset_has(&set, us[k].op))
				ge_tset_insert(&read_out,
					       ge_op_input(g, us[k].op, us[k].slot));
	}
	if (out) {
		memset(done.bits, 0, (done.cap / 64 + 1) * sizeof *done.bits);
		for (size_t i = 0; i < len; i++) {
			ge_opid id;
			if (!list_at(g, ops, i, &id) ||
			    !ge_opset_insert(&done, id))
				continue;
			int no = ge_op_num_outputs(g, id);
			for (int k = 0; k < no; k++) {
				ge_tref t = {id, k};
				if (!ge_tset_has(&read_in, t) ||
				    ge_tset_has(&read_out, t))
					ge_tvec_push(out, t);
			}
		}
	}
	for (size_t i = 0; i < inputs.n; i++) {
		int ins = ge_opset_has(&set, inputs.v[i].op);
		if (ins && inside)
			ge_tvec_push(inside, inputs.v[i]);
		else if (!ins && in)
			ge_tvec_push(in, inputs.v[i]);
	}
	ge_tvec_free(&inputs);
	ge_tset_free(&read_in);
	ge_tset_free(&read_out);
	ge_opset_free(&set);
	ge_opset_free(&done);
}

int ge_get_within_boundary_ops(const ge_graph *g, const ge_opid *ops,
			       size_t n, const ge_opid *seeds, size_t n_seeds,
			       const ge_opid *boundary, size_t n_boundary,
			       int inclusive, int control_inputs,
			       int control_outputs, ge_opvec *out,
			       ge_error *err)
{
	ge_opset res, bnd;
	ge_opvec queue = GE_VEC_INIT;
	ge_opset_init(&res, g);
	ge_opset_init(&bnd, g);
	ge_opset_add_list(&bnd, boundary, n_boundary);
	for (size_t i = 0; i < n_seeds; i++) {
		if (ge_opset_has(&bnd, seeds[i])) {
			ge_opset_free(&res);
			ge_opset_free(&bnd);
			return ge_err(err, GE_EINVAL,
				      "Boundary is intersecting with the seeds.");
		}
		if (ge_opset_insert(&res, seeds[i]))
			ge_opvec_push(&queue, seeds[i]);
	}
	/* The order of the fill does not matter: the result is filtered in
	 * the order of ops. */
	for (size_t qi = 0; qi < queue.n; qi++) {
		ge_opid id = queue.v[qi];
		size_t k, nn;
#define VISIT(x)                                                        \
	do {                                                            \
		ge_opid nb_ = (x);                                      \
		if (nb_ == GE_NOOP || ge_opset_has(&res, nb_))          \
			break;                                          \
		if (ge_opset_has(&bnd, nb_)) {                          \
			if (inclusive)                                  \
				ge_opset_add(&res, nb_);                \
		} else {                                                \
			ge_opset_add(&res, nb_);                        \
			ge_opvec_push(&queue, nb_);                     \
		}                                                       \
	} while (0)
		nn = ge_op_num_inputs(g, id);
		for (k = 0; k < nn; k++)
			VISIT(ge_op_input(g, id, k).op);
		const ge_use *us = ge_op_uses(g, id, &nn);
		for (k = 0; k < nn; k++)
			VISIT(us[k].op);
		if (control_outputs) {
			const ge_opid *co = ge_op_control_outputs(g, id, &nn);
			for (k = 0; k < nn; k++)
				VISIT(co[k]);
		}
		if (control_inputs) {
			nn = ge_op_num_control_inputs(g, id);
			for (k = 0; k < nn; k++)
				VISIT(ge_op_control_input(g, id, k));
		}
#undef VISIT
	}
	size_t len = list_len(g, ops, n);
	for (size_t i = 0; i < len; i++) {
		ge_opid id;
		if (list_at(g, ops, i, &id) && ge_opset_has(&res, id))
			ge_opvec_push(out, id);
	}
	ge_opvec_free(&queue);
	ge_opset_free(&res);
	ge_opset_free(&bnd);
	return GE_OK;
}

/* ------------------------------------------------------------ walks */

typedef struct walker {
	const ge_graph *g;
	const ge_walk_opts *o;
	ge_opset seen, within, asked, answer;
	ge_tmap stop;
	ge_opvec next;
	int failed;
} walker;

/* within_ops and within_ops_fn; the callback's answer is remembered so it
 * runs at most once per op. */
static int admit(walker *w, ge_opid id)
{
	if (id == GE_NOOP || ge_opset_has(&w->seen, id))
		return 0;
	if (w->o->within_ops && !ge_opset_has(&w->within, id))
		return 0;
	if (w->o->within_fn) {
		if (!ge_opset_has(&w->asked, id)) {
			int r = w->o->within_fn(w->g, id, w->o->within_ud);
			if (r < 0) {
				w->failed = 1;
				return 0;
			}
			ge_opset_add(&w->asked, id);
			if (r)
				ge_opset_add(&w->answer, id);
		}
		if (!ge_opset_has(&w->answer, id))
			return 0;
	}
	ge_opset_add(&w->seen, id);
	ge_opvec_push(&w->next, id);
	return 1;
}

static int walk(const ge_graph *g, const ge_seeds *s, const ge_walk_opts *o,
		int forward, ge_opvec *out, ge_error *err)
{
	walker w;
	ge_opvec wave = GE_VEC_INIT, tmp;
	size_t start = out->n;
	memset(&w, 0, sizeof w);
	w.g = g;
	w.o = o;
	ge_opset_init(&w.seen, g);
	ge_opset_init(&w.within, g);
	ge_opset_init(&w.asked, o->within_fn ? g : NULL);
	ge_opset_init(&w.answer, o->within_fn ? g : NULL);
	ge_tmap_init(&w.stop, o->n_stop);
	for (size_t i = 0; i < o->n_stop; i++)
		ge_tmap_put(&w.stop, o->stop_at_ts[i], 0);
	if (o->within_ops)
		ge_opset_add_list(&w.within, o->within_ops, o->n_within);

	/* seeds */
	if (s->n_ts) {
		if (forward)
			ge_get_consuming_ops(g, s->ts, s->n_ts, &wave);
		else
			ge_get_generating_ops(s->ts, s->n_ts, &wave);
	}
	for (size_t i = 0; i < s->n_ops; i++)
		ge_opvec_push(&wave, s->ops[i]);
	size_t k = 0;
	for (size_t i = 0; i < wave.n; i++) {
		ge_opid id = wave.v[i];
		if (id == GE_NOOP || id >= ge_graph_capacity(g) ||
		    !ge_op_alive(g, id))
			continue;
		if (o->within_ops && o->n_within &&
		    !ge_opset_has(&w.within, id))
			continue;
		if (ge_opset_insert(&w.seen, id))
			wave.v[k++] = id;
	}
	wave.n = k;
	if (wave.n > 1)
		qsort(wave.v, wave.n, sizeof *wave.v, ge_opid_cmp);
	for (size_t i = 0; i < wave.n; i++)
		ge_opvec_push(out, wave.v[i]);
	size_t n_seeds = wave.n;

	while (wave.n && !w.failed) {
		w.next.n = 0;
		for (size_t i = 0; i < wave.n && !w.failed; i++) {
			ge_opid id = wave.v[i];
			size_t nn, j;
			if (forward) {
				const ge_use *us = ge_op_uses(g, id, &nn);
				for (j = 0; j < nn; j++) {
					if (ge_opset_has(&w.seen, us[j].op))
						continue;
					if (o->n_stop) {
						ge_tref t = ge_op_input(
							g, us[j].op, us[j].slot);
						if (ge_tmap_get(&w.stop, t, NULL))
							continue;
					}
					admit(&w, us[j].op);
				}
				if (o->control) {
					const ge_opid *co =
						ge_op_control_outputs(g, id, &nn);
					for (j = 0; j < nn; j++)
						admit(&w, co[j]);
				}
			} else {
				nn = ge_op_num_inputs(g, id);
				for (j = 0; j < nn; j++) {
					ge_tref t = ge_op_input(g, id, j);
					if (t.op == GE_NOOP ||
					    ge_opset_has(&w.seen, t.op))
						continue;
					if (o->n_stop &&
					    ge_tmap_get(&w.stop, t, NULL))
						continue;
					admit(&w, t.op);
				}
				if (o->control) {
					nn = ge_op_num_control_inputs(g, id);
					for (j = 0; j < nn; j++)
						admit(&w, ge_op_control_input(
								  g, id, j));
				}
			}
		}
		if (w.next.n > 1)
			qsort(w.next.v, w.next.n, sizeof *w.next.v, ge_opid_cmp);
		for (size_t i = 0; i < w.next.n; i++)
			ge_opvec_push(out, w.next.v[i]);
		tmp = wave;
		wave = w.next;
		w.next = tmp;
	}
	int rc = GE_OK;
	if (w.failed) {
		out->n = start;
		rc = cb_failed(err);
	} else if (!o->inclusive && n_seeds) {
		memmove(out->v + start, out->v + start + n_seeds,
			(out->n - start - n_seeds) * sizeof *out->v);
		out->n -= n_seeds;
	}
	ge_opvec_free(&wave);
	ge_opvec_free(&w.next);
	ge_opset_free(&w.seen);
	ge_opset_free(&w.within);
	ge_opset_free(&w.asked);
	ge_opset_free(&w.answer);
	ge_tmap_free(&w.stop);
	return rc;
}

int ge_get_forward_walk_ops(const ge_graph *g, const ge_seeds *seeds,
			    const ge_walk_opts *o, ge_opvec *out,
			    ge_error *err)
{
	return walk(g, seeds, o, 1, out, err);
}

int ge_get_backward_walk_ops(const ge_graph *g, const ge_seeds *seeds,
			     const ge_walk_opts *o, ge_opvec *out,
			     ge_error *err)
{
	return walk(g, seeds, o, 0, out, err);
}

static int walks_combine(const ge_graph *g, const ge_seeds *fwd,
			 const ge_seeds *bwd, const ge_walk_opts *fo,
			 const ge_walk_opts *bo, int intersect, ge_opvec *out,
			 ge_error *err)
{
	ge_opvec f = GE_VEC_INIT, b = GE_VEC_INIT;
	ge_opset set;
	int rc = walk(g, fwd, fo, 1, &f, err);
	if (rc == GE_OK)
		rc = walk(g, bwd, bo, 0, &b, err);
	if (rc == GE_OK) {
		ge_opset_init(&set, g);
		if (intersect) {
			ge_opset_add_list(&set, b.v, b.n);
			for (size_t i = 0; i < f.n; i++)
				if (ge_opset_has(&set, f.v[i]))
					ge_opvec_push(out, f.v[i]);
		} else {
			for (size_t i = 0; i < f.n; i++)
				if (ge_opset_insert(&set, f.v[i]))
					ge_opvec_push(out, f.v[i]);
			for (size_t i = 0; i < b.n; i++)
				if (ge_opset_insert(&set, b.v[i]))
					ge_opvec_push(out, b.v[i]);
		}
		ge_opset_free(&set);
	}
	ge_opvec_free(&f);
	ge_opvec_free(&b);
	return rc;
}

int ge_get_walks_intersection_ops(const ge_graph *g, const ge_seeds *fwd,
				  const ge_seeds *bwd,
				  const ge_walk_opts *fo,
				  const ge_walk_opts *bo, ge_opvec *out,
				  ge_error *err)
{
	return walks_combine(g, fwd, bwd, fo, bo, 1, out, err);
}

int ge_get_walks_union_ops(const ge_graph *g, const ge_seeds *fwd,
			   const ge_seeds *bwd, const ge_walk_opts *fo,
			   const ge_walk_opts *bo, ge_opvec *out,
			   ge_error *err)
{
	return walks_combine(g, fwd, bwd, fo, bo, 0, out, err);
}

/* ------------------------------------------------------------ select_* */

static int has_marker(const char *pattern, const char *marker)
{
	return strncmp(pattern, marker, strlen(marker)) == 0;
}

static int need_graph(const ge_graph *g, const char *what, ge_error *err)
{
	if (g)
		return GE_OK;
	return ge_err(err, GE_EINVAL,
		      "%s: a regex needs a graph (use the graph option)", what);
}

int ge_select_ops(const ge_graph *g, const ge_sel_arg *args, size_t n,
		  const ge_select_opts *o, ge_opvec *out, ge_error *err)
{
	static const ge_select_opts none;
	ge_opset seen;
	size_t start = out->n;
	int rc = GE_OK;
	if (!o)
		o = &none;
	for (size_t i = 0; i < n; i++)
		if (args[i].kind == GE_SEL_REGEX &&
		    (rc = need_graph(g, "select_ops", err)))
			return rc;
	ge_opset_init(&seen, g);
	ge_opset_add_list(&seen, out->v, out->n);
	for (size_t i = 0; i < n && rc == GE_OK; i++) {
		const ge_sel_arg *a = &args[i];
		if (a->kind == GE_SEL_REGEX) {
			if (has_marker(a->regex, "(?#ts)"))
				continue;
			if (o->restrict_ops_regex &&
			    !has_marker(a->regex, "(?#ops)"))
				continue;
			ge_regex *re = ge_regex_cached(a->regex, err);
			if (!re) {
				rc = GE_EINVAL;
				break;
			}
			size_t cap = ge_graph_capacity(g);
			for (size_t id = 0; id < cap; id++) {
				if (!ge_op_alive(g, (ge_opid)id) ||
				    ge_opset_has(&seen, (ge_opid)id))
					continue;
				int r = op_matches(g, (ge_opid)id, re, err);
				if (r > 0 && o->op_filter) {
					r = o->op_filter(g, (ge_opid)id,
							 o->op_filter_ud);
					if (r < 0)
						r = cb_failed(err);
				}
				if (r < 0) {
					rc = r;
					break;
				}
				if (r) {
					ge_opset_add(&seen, (ge_opid)id);
					ge_opvec_push(out, (ge_opid)id);
				}
			}
		} else {
			for (size_t k = 0; k < a->n_ops; k++) {
				ge_opid id = a->ops[k];
				if (ge_opset_has(&seen, id))
					continue;
				int r = o->op_filter ?
					o->op_filter(g, id, o->op_filter_ud) : 1;
				if (r < 0) {
					rc = cb_failed(err);
					break;
				}
				if (r) {
					ge_opset_add(&seen, id);
					ge_opvec_push(out, id);
				}
			}
		}
	}
	if (rc != GE_OK)
		out->n = start;
	ge_opset_free(&seen);
	return rc;
}

int ge_select_ts(const ge_graph *g, const ge_sel_arg *args, size_t n,
		 const ge_select_opts *o, ge_tvec *out, ge_error *err)
{
	static const ge_select_opts none;
	ge_tset seen;
	ge_tvec all = GE_VEC_INIT, hits = GE_VEC_INIT;
	size_t start = out->n;
	int rc = GE_OK, have_all = 0;
	if (!o)
		o = &none;
	for (size_t i = 0; i < n; i++)
		if (args[i].kind == GE_SEL_REGEX &&
		    (rc = need_graph(g, "select_ts", err)))
			return rc;
	ge_tset_init(&seen, g);
	for (size_t i = 0; i < out->n; i++)
		ge_tset_insert(&seen, out->v[i]);
	for (size_t i = 0; i < n && rc == GE_OK; i++) {
		const ge_sel_arg *a = &args[i];
		const ge_tref *ts;
		size_t nts;
		if (a->kind == GE_SEL_REGEX) {
			if (has_marker(a->regex, "(?#ops)"))
				continue;
			if (o->restrict_ts_regex &&
			    !has_marker(a->regex, "(?#ts)"))
				continue;
			ge_regex *re = ge_regex_cached(a->regex, err);
			if (!re) {
				rc = GE_EINVAL;
				break;
			}
			if (!have_all) {
				candidate_ts(g, GE_ALL_OPS, 0, &all);
				have_all = 1;
			}
			hits.n = 0;
			if ((rc = ts_matching(g, &all, re, &hits, err)))
				break;
			ts = hits.v;
			nts = hits.n;
		} else {
			ts = a->ts;
			nts = a->n_ts;
		}
		for (size_t k = 0; k < nts; k++) {
			if (ge_tset_has(&seen, ts[k]))
				continue;
			int r = o->t_filter ?
				o->t_filter(g, ts[k], o->t_filter_ud) : 1;
			if (r < 0) {
				rc = cb_failed(err);
				break;
			}
			if (r) {
				ge_tset_insert(&seen, ts[k]);
				ge_tvec_push(out, ts[k]);
			}
		}
	}
	if (rc != GE_OK)
		out->n = start;
	ge_tset_free(&seen);
	ge_tvec_free(&all);
	ge_tvec_free(&hits);
	return rc;
}

int ge_select_ops_and_ts(const ge_graph *g, const ge_sel_arg *args, size_t n,
			 const ge_select_opts *o, ge_opvec *ops, ge_tvec *ts,
			 ge_error *err)
{
	ge_select_opts so = {0};
	if (o)
		so = *o;
	so.restrict_ops_regex = 0;
	int rc = ge_select_ops(g, args, n, &so, ops, err);
	if (rc != GE_OK)
		return rc;
	so.restrict_ts_regex = 1;
	return ge_select_ts(g, args, n, &so, ts, err);
}

/* ------------------------------------------------------------ colocation */

void ge_colocation_targets(const ge_graph *g, ge_opvec *out)
{
	ge_opset seen;
	ge_opset_init(&seen, g);
	size_t cap = ge_graph_capacity(g);
	char *name = NULL;
	size_t name_cap = 0;
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || !ge_op_may_have_attr(g, id, "_class"))
			continue;
		const Tensorflow__AttrValue *v = ge_op_attr(g, id, "_class", NULL);
		if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
			continue;
		for (size_t k = 0; k < v->list->n_s; k++) {
			const ProtobufCBinaryData *s = &v->list->s[k];
			if (s->len <= 5 || memcmp(s->data, "loc:@", 5) ||
			    memchr(s->data + 5, 0, s->len - 5))
				continue;
			if (s->len - 5 + 1 > name_cap) {
				name_cap = s->len - 5 + 1;
				name = ge_xrealloc(name, name_cap);
			}
			memcpy(name, s->data + 5, s->len - 5);
			name[s->len - 5] = 0;
			ge_opid t = ge_graph_find(g, name);
			if (t != GE_NOOP && ge_opset_insert(&seen, t))
				ge_opvec_push(out, t);
		}
	}
	free(name);
	ge_opset_free(&seen);
}
