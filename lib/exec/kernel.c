/*
 * exec/kernel.c: the kernel registry and the helpers every kernel uses.
 *
 * Each file of kernels keeps a table of its own (ge_kdef, ended by an
 * entry whose type is NULL); KERNEL_TABLES below lists them.  On the
 * first lookup the tables are merged into one array sorted by op type,
 * which ge_kernel_find searches by bisection.  An op type given by two
 * tables keeps the entry of the table listed first.
 */
#include "exec/kernel.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel_impl.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* ---------------------------------------------------------------- registry */

/* The kernel tables, one line each: a file of kernels adds its own. */
#define KERNEL_TABLES(X) \
	X(ge_kernels_const) \
	X(ge_kernels_binary) \
	X(ge_kernels_math) \
	X(ge_kernels_reduce) \
	X(ge_kernels_shape) \
	X(ge_kernels_array) \
	X(ge_kernels_index) \
	X(ge_kernels_misc) \
	X(ge_kernels_list) \
	X(ge_kernels_tarray) \
	X(ge_kernels_random) \
	X(ge_kernels_table) \
	X(ge_kernels_parse) \
	X(ge_kernels_quant) \
	X(ge_kernels_matmul) \
	X(ge_kernels_conv) \
	X(ge_kernels_pool) \
	X(ge_kernels_image)

#define DECLARE_TABLE(t) extern const ge_kdef t[];
#define LIST_TABLE(t) t,
KERNEL_TABLES(DECLARE_TABLE)
static const ge_kdef *const tables[] = {KERNEL_TABLES(LIST_TABLE)};
#define NTABLES (sizeof tables / sizeof tables[0])

static const ge_kdef **sorted; /* every kernel, by type */
static const char **types;     /* their types, NULL-terminated */
static size_t nsorted;
static int built;

static int by_type(const void *a, const void *b)
{
	const ge_kdef *x = *(const ge_kdef *const *)a;
	const ge_kdef *y = *(const ge_kdef *const *)b;
	return strcmp(x->type, y->type);
}

/* The table index of a kernel entry, for the tie rule. */
static size_t table_of(const ge_kdef *d)
{
	for (size_t t = 0; t < NTABLES; t++) {
		const ge_kdef *p = tables[t];
		while (p->type && p != d)
			p++;
		if (p == d)
			return t;
	}
	return NTABLES;
}

static void build(void)
{
	size_t n = 0;
	built = 1;
	for (size_t t = 0; t < NTABLES; t++)
		for (const ge_kdef *p = tables[t]; p->type; p++)
			n++;
	sorted = malloc((n ? n : 1) * sizeof *sorted);
	types = malloc((n + 1) * sizeof *types);
	if (!sorted || !types) {
		free(sorted);
		free(types);
		sorted = NULL;
		types = NULL;
		return;
	}
	n = 0;
	for (size_t t = 0; t < NTABLES; t++)
		for (const ge_kdef *p = tables[t]; p->type; p++)
			sorted[n++] = p;
	qsort(sorted, n, sizeof *sorted, by_type);
	/* drop duplicates, keeping the entry of the first table */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(sorted[m - 1]->type, sorted[i]->type)) {
			if (table_of(sorted[i]) < table_of(sorted[m - 1]))
				sorted[m - 1] = sorted[i];
			continue;
		}
		sorted[m++] = sorted[i];
	}
	nsorted = m;
	for (size_t i = 0; i < m; i++)
		types[i] = sorted[i]->type;
	types[m] = NULL;
}

const ge_kdef *ge_kernel_find(const char *type)
{
	if (!built)
		build();
	if (!type)
		return NULL;
	if (!sorted) { /* no memory for the index: search the tables */
		for (size_t t = 0; t < NTABLES; t++)
			for (const ge_kdef *p = tables[t]; p->type; p++)
				if (!strcmp(p->type, type))
					return p;
		return NULL;
	}
	size_t lo = 0, hi = nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(type, sorted[mid]->type);
		if (!c)
			return sorted[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *const *ge_kernel_types(void)
{
	static const char *none[] = {NULL};
	if (!built)
		build();
	return types ? (const char *const *)types : none;
}

/* ---------------------------------------------------------------- helpers */

const char *ge_k_what(ge_kctx *k, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s (%s)", k->name ? k->name : "?",
		 k->type ? k->type : "?");
	return buf;
}

void ge_k_drop(ge_kctx *k)
{
	if (!k->out)
		return;
	for (int i = 0; i < k->nout; i++) {
		ge_xt_unref(k->out[i]);
		k->out[i] = NULL;
	}
}

int ge_k_fail(ge_kctx *k, const char *fmt, ...)
{
	char what[256], msg[sizeof k->err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ge_k_drop(k);
	return ge_err(k->err, GE_EINVAL, "%s: %s",
		      ge_k_what(k, what, sizeof what), msg);
}

int ge_k_need(ge_kctx *k, int nin)
{
	if (k->nin < nin)
		return ge_k_fail(k, "needs %d inputs, has %d", nin, k->nin);
	for (int i = 0; i < nin; i++)
		if (!k->in[i])
			return ge_k_fail(k, "input %d is missing", i);
	return GE_OK;
}

static ge_xt *k_out(ge_kctx *k, int i, int dtype, int rank,
		    const int64_t *dims, int raw)
{
	char what[256];
	if (i < 0 || i >= k->nout) {
		ge_k_fail(k, "has no output %d", i);
		return NULL;
	}
	ge_xt *t = (raw ? ge_xt_new_raw : ge_xt_new)(dtype, rank, dims,
		k->budget, ge_k_what(k, what, sizeof what), k->err);
	if (!t) {
		ge_k_drop(k);
		return NULL;
	}
	ge_xt_unref(k->out[i]);
	k->out[i] = t;
	return t;
}

ge_xt *ge_k_out(ge_kctx *k, int i, int dtype, int rank, const int64_t *dims)
{
	return k_out(k, i, dtype, rank, dims, 0);
}

ge_xt *ge_k_out_raw(ge_kctx *k, int i, int dtype, int rank,
		    const int64_t *dims)
{
	return k_out(k, i, dtype, rank, dims, 1);
}

void ge_k_forward(ge_kctx *k, int i, int j)
{
	ge_xt_unref(k->out[i]);
	k->out[i] = ge_xt_ref(k->in[j]);
}

int ge_k_work(ge_kctx *k, uint64_t units)
{
	char what[256];
	if (ge_xbudget_work(k->budget, units, ge_k_what(k, what, sizeof what),
			    k->err)) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	return GE_OK;
}

/* ---------------------------------------------------------------- attrs */

int64_t ge_k_attr_int(ge_kctx *k, const char *name, int64_t def)
{
	int64_t v;
	return ge_op_attr_int(k->g, k->id, name, &v) == 0 ? v : def;
}

int ge_k_attr_bool(ge_kctx *k, const char *name, int def)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_B)
		return def;
	return v->b != 0;
}

int ge_k_attr_type(ge_kctx *k, const char *name, int def)
{
	int t;
	return ge_op_attr_type(k->g, k->id, name, &t) == 0 ? t : def;
}

double ge_k_attr_float(ge_kctx *k, const char *name, double def)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_F)
		return def;
	return v->f;
}

int ge_k_attr_str_is(ge_kctx *k, const char *name, const char *s, int def)
{
	const char *p;
	size_t len;
	if (ge_op_attr_string(k->g, k->id, name, &p, &len))
		return def;
	return len == strlen(s) && !memcmp(p, s, len);
}

int ge_k_attr_ints(ge_kctx *k, const char *name, int64_t *out, int cap)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list || v->list->n_i > (size_t)cap)
		return -1;
	for (size_t i = 0; i < v->list->n_i; i++)
		out[i] = v->list->i[i];
	return (int)v->list->n_i;
}

/* ---------------------------------------------------------------- inputs */

int ge_kall_set(ge_kctx *k)
{
	int n = 0;
	for (int i = 0; i < k->nout; i++)
		n += k->out[i] != NULL;
	if (n < k->nout)
		return ge_k_fail(k, "makes %d outputs, the op has %d", n,
				 k->nout);
	return GE_OK;
}

int ge_kints_any(ge_kctx *k, int i, int64_t *out, int cap)
{
	if (i >= k->nin || !k->in[i]) {
		ge_k_fail(k, "input %d is missing", i);
		return -1;
	}
	const ge_xt *t = k->in[i];
	if (t->dtype != DT_INT32 && t->dtype != DT_INT64) {
		ge_k_fail(k, "input %d must be int32 or int64, is %s", i,
			  kdt(t->dtype));
		return -1;
	}
	if (t->n > cap) {
		ge_k_fail(k, "input %d has %" PRId64 " elements, at most %d "
			  "allowed", i, t->n, cap);
		return -1;
	}
	for (int64_t j = 0; j < t->n; j++)
		out[j] = t->dtype == DT_INT32 ? ((const int32_t *)t->data)[j]
					      : ((const int64_t *)t->data)[j];
	return (int)t->n;
}

int ge_k_ints(ge_kctx *k, int i, int64_t *out, int cap)
{
	if (i < k->nin && k->in[i] && k->in[i]->rank > 1) {
		ge_k_fail(k, "input %d must be a scalar or a vector, has rank "
			  "%d", i, k->in[i]->rank);
		return -1;
	}
	return ge_kints_any(k, i, out, cap);
}

int ge_k_scalar_int(ge_kctx *k, int i, int64_t *out)
{
	int64_t v[2];
	int n = ge_k_ints(k, i, v, 2);
	if (n < 0)
		return GE_EINVAL;
	if (n != 1)
		return ge_k_fail(k, "input %d must hold one integer, has %d", i,
				 n);
	*out = v[0];
	return GE_OK;
}

int ge_k_axis(ge_kctx *k, int64_t a, int rank, int64_t *out)
{
	if (a < -(int64_t)rank || a >= rank)
		return ge_k_fail(k, "axis %" PRId64 " is out of range for "
				 "rank %d", a, rank);
	*out = a < 0 ? a + rank : a;
	return GE_OK;
}

/* ---------------------------------------------------------------- shared */

const char *ge_kshape(int rank, const int64_t *dims, char *buf, size_t cap)
{
	size_t len = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < rank && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64,
					i ? "," : "", dims[i]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

int ge_k_dtype_in(ge_kctx *k, int i, uint64_t mask)
{
	int dt = k->in[i]->dtype;
	if (dt < 0 || dt >= 64 || !(mask & KDT(dt)))
		return ge_k_fail(k, "input %d has dtype %s, which this op does "
				 "not take", i, kdt(dt));
	return GE_OK;
}

int ge_kbcast_shapes(ge_kctx *k, int ra, const int64_t *da, int rb,
		  const int64_t *db, kbcast *bc)
{
	char s1[128], s2[128];
	int r = ra > rb ? ra : rb;
	int64_t ea[GE_SHAPE_MAXRANK], eb[GE_SHAPE_MAXRANK];
	memset(bc, 0, sizeof *bc);
	for (int i = 0; i < r; i++) {
		ea[i] = i < r - ra ? 1 : da[i - (r - ra)];
		eb[i] = i < r - rb ? 1 : db[i - (r - rb)];
		if (ea[i] != eb[i] && ea[i] != 1 && eb[i] != 1)
			return ge_k_fail(k, "shapes %s and %s do not broadcast",
					 ge_kshape(ra, da, s1, sizeof s1),
					 ge_kshape(rb, db, s2, sizeof s2));
		bc->dims[i] = ea[i] == 1 ? eb[i] : ea[i];
	}
	bc->rank = r;
	bc->n = kcount(r, bc->dims);
	if (bc->n < 0)
		return ge_k_fail(k, "the broadcast shape's size overflows");
	int64_t na = kcount(r, ea), nb = kcount(r, eb);
	bc->a_one = na == 1;
	bc->b_one = nb == 1;
	bc->same = na == bc->n && nb == bc->n;
	/* collapse runs of dims with the same stretch pattern into one */
	int cr = 0;
	int64_t cd[GE_SHAPE_MAXRANK], ca[GE_SHAPE_MAXRANK], cb[GE_SHAPE_MAXRANK];
	for (int i = 0; i < r; i++) {
		int fa = ea[i] != 1 || bc->dims[i] == 1;
		int fb = eb[i] != 1 || bc->dims[i] == 1;
		if (bc->dims[i] == 1)
			continue; /* a dim of 1 moves nothing */
		if (cr && ((ca[cr - 1] != 0) == fa) && ((cb[cr - 1] != 0) == fb)) {
			cd[cr - 1] *= bc->dims[i];
			continue;
		}
		cd[cr] = bc->dims[i];
		ca[cr] = fa;
		cb[cr] = fb;
		cr++;
	}
	/* strides over the collapsed shape: 0 where the input stretches */
	int64_t sa = 1, sb = 1;
	for (int i = cr - 1; i >= 0; i--) {
		int64_t ha = ca[i], hb = cb[i];
		ca[i] = ha ? sa : 0;
		cb[i] = hb ? sb : 0;
		if (ha)
			sa *= cd[i];
		if (hb)
			sb *= cd[i];
	}
	bc->crank = cr;
	for (int i = 0; i < cr; i++) {
		bc->cdims[i] = cd[i];
		bc->sa[i] = ca[i];
		bc->sb[i] = cb[i];
	}
	return GE_OK;
}

int ge_kbcast_make(ge_kctx *k, const ge_xt *a, const ge_xt *b, kbcast *bc)
{
	return ge_kbcast_shapes(k, a->rank, a->dims, b->rank, b->dims, bc);
}

void ge_kbcast_rows(const kbcast *bc, krow_fn f, void *ud)
{
	if (bc->n == 0)
		return;
	if (bc->crank == 0) {
		f(ud, 0, 0, 0, 0, 0, 1);
		return;
	}
	int last = bc->crank - 1;
	int64_t len = bc->cdims[last];
	int64_t idx[GE_SHAPE_MAXRANK] = {0};
	int64_t o = 0, ia = 0, ib = 0;
	for (;;) {
		f(ud, o, ia, bc->sa[last] ? 1 : 0, ib, bc->sb[last] ? 1 : 0,
		  len);
		o += len;
		int d = last - 1;
		for (; d >= 0; d--) {
			ia += bc->sa[d];
			ib += bc->sb[d];
			if (++idx[d] < bc->cdims[d])
				break;
			ia -= bc->sa[d] * bc->cdims[d];
			ib -= bc->sb[d] * bc->cdims[d];
			idx[d] = 0;
		}
		if (d < 0)
			return;
	}
}

int ge_kcopy_elems(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s,
		int64_t n)
{
	size_t es = ge_xt_elem_size(src->dtype);
	if (n <= 0)
		return GE_OK;
	if (src->dtype == DT_STRING) {
		ge_xstr *o = (ge_xstr *)dst->data + d;
		const ge_xstr *i = (const ge_xstr *)src->data + s;
		for (int64_t j = 0; j < n; j++) {
			free(o[j].p);
			o[j].p = NULL;
			o[j].len = 0;
			if (!i[j].len)
				continue;
			o[j].p = malloc(i[j].len + 1);
			if (!o[j].p)
				return GE_EINVAL;
			memcpy(o[j].p, i[j].p, i[j].len + 1);
			o[j].len = i[j].len;
		}
		return GE_OK;
	}
	if (src->dtype == DT_RESOURCE || src->dtype == DT_VARIANT) {
		ge_xobj **o = (ge_xobj **)dst->data + d;
		ge_xobj *const *i = (ge_xobj *const *)src->data + s;
		for (int64_t j = 0; j < n; j++) {
			ge_xobj *old = o[j];
			o[j] = ge_xobj_ref(i[j]);
			ge_xobj_unref(old);
		}
		return GE_OK;
	}
	memcpy((char *)dst->data + (size_t)d * es,
	       (const char *)src->data + (size_t)s * es, (size_t)n * es);
	return GE_OK;
}

int ge_kcopy_elem(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s)
{
	return ge_kcopy_elems(dst, d, src, s, 1);
}

ge_xt *ge_kwiden(ge_kctx *k, ge_xt *t)
{
	char what[256];
	if (t->dtype != DT_HALF && t->dtype != DT_BFLOAT16)
		return ge_xt_ref(t);
	ge_xt *f = ge_xt_new(DT_FLOAT, t->rank, t->dims, k->budget,
			     ge_k_what(k, what, sizeof what), k->err);
	if (!f)
		return NULL;
	const uint16_t *s = t->data;
	float *d = f->data;
	for (int64_t i = 0; i < t->n; i++)
		d[i] = t->dtype == DT_HALF ? ge_half_to_float(s[i])
					   : ge_bf16_to_float(s[i]);
	return f;
}

void ge_knarrow(ge_xt *dst, const ge_xt *src)
{
	const float *s = src->data;
	uint16_t *d = dst->data;
	for (int64_t i = 0; i < src->n; i++)
		d[i] = dst->dtype == DT_HALF ? ge_half_from_double(s[i])
					     : ge_bf16_from_double(s[i]);
}

ge_xt *ge_kout_f(ge_kctx *k, int i, int dt, int rank, const int64_t *dims)
{
	return ge_k_out(k, i, dt == DT_HALF || dt == DT_BFLOAT16 ? DT_FLOAT
								   : dt,
			rank, dims);
}

int ge_kfinish_f(ge_kctx *k, int i, int dt)
{
	if (dt != DT_HALF && dt != DT_BFLOAT16)
		return GE_OK;
	ge_xt *f = k->out[i];
	k->out[i] = NULL;
	ge_xt *h = ge_k_out(k, i, dt, f->rank, f->dims);
	if (!h) {
		ge_xt_unref(f);
		return GE_EINVAL;
	}
	ge_knarrow(h, f);
	ge_xt_unref(f);
	return GE_OK;
}
