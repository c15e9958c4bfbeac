/*
 * exec/k_binary.c: elementwise kernels of two inputs with TensorFlow's
 * broadcasting (arithmetic, comparisons, logic), BiasAdd, AddN, Select,
 * SelectV2 and ClipByValue.
 *
 * float32 is computed in float32, float64 in float64, half and bfloat16
 * in float32 rounded back; integers in 64 bits, wrapping at their width
 * when stored.  Maximum and Minimum propagate NaN from either side.
 * Integer division and modulo by zero fail the op, as TensorFlow's do.
 * Add of strings joins them; Equal and NotEqual compare strings.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel_impl.h"

enum {
	B_ADD, B_SUB, B_MUL, B_DIV, B_REALDIV, B_FLOORDIV, B_FLOORMOD,
	B_TRUNCDIV, B_TRUNCMOD, B_MAX, B_MIN, B_POW, B_SQDIFF, B_DIVNONAN,
	B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_AND, B_OR, B_NOPS
};

static const struct bop {
	const char *name;
	int op;
} bops[] = {
	{"Add", B_ADD}, {"AddV2", B_ADD}, {"Sub", B_SUB}, {"Mul", B_MUL},
	{"Div", B_DIV}, {"RealDiv", B_REALDIV}, {"FloorDiv", B_FLOORDIV},
	{"FloorMod", B_FLOORMOD}, {"TruncateDiv", B_TRUNCDIV},
	{"TruncateMod", B_TRUNCMOD}, {"Mod", B_TRUNCMOD},
	{"Maximum", B_MAX}, {"Minimum", B_MIN}, {"Pow", B_POW},
	{"SquaredDifference", B_SQDIFF}, {"DivNoNan", B_DIVNONAN},
	{"Equal", B_EQ}, {"NotEqual", B_NE}, {"Less", B_LT},
	{"LessEqual", B_LE}, {"Greater", B_GT}, {"GreaterEqual", B_GE},
	{"LogicalAnd", B_AND}, {"LogicalOr", B_OR}, {"BiasAdd", B_ADD},
	{"BiasAddV1", B_ADD},
	{NULL, 0},
};

static int op_of(const char *type)
{
	for (const struct bop *b = bops; b->name; b++)
		if (!strcmp(b->name, type))
			return b->op;
	return -1;
}

static int is_cmp(int op) { return op >= B_EQ && op <= B_GE; }

/* ---------------------------------------------------------------- floats */

/* One row of a float op: o[i] = EXPR(x, y) with x, y stepping 0 or 1.
 * Spelled out per op so that the contiguous case vectorizes. */
#define FROW(NAME, T, OT, EXPR) \
	static void NAME(OT *restrict o, const T *restrict a, int64_t da, \
			 const T *restrict b, \
			 int64_t db, int64_t n) \
	{ \
		if (da && db) \
			for (int64_t i = 0; i < n; i++) { \
				T x = a[i], y = b[i]; \
				o[i] = (OT)(EXPR); \
			} \
		else if (da) { \
			T y = b[0]; \
			for (int64_t i = 0; i < n; i++) { \
				T x = a[i]; \
				o[i] = (OT)(EXPR); \
			} \
		} else if (db) { \
			T x = a[0]; \
			for (int64_t i = 0; i < n; i++) { \
				T y = b[i]; \
				o[i] = (OT)(EXPR); \
			} \
		} else { \
			T x = a[0], y = b[0]; \
			for (int64_t i = 0; i < n; i++) \
				o[i] = (OT)(EXPR); \
		} \
	}

static float fmodf_floor(float x, float y)
{
	float r = fmodf(x, y);
	return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
static double fmod_floor(double x, double y)
{
	double r = fmod(x, y);
	return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

#define FOPS(S, T, FLOOR, TRUNC, POW, FMOD, FLMOD) \
	FROW(S##_add, T, T, x + y) \
	FROW(S##_sub, T, T, x - y) \
	FROW(S##_mul, T, T, x * y) \
	FROW(S##_div, T, T, x / y) \
	FROW(S##_floordiv, T, T, FLOOR(x / y)) \
	FROW(S##_floormod, T, T, FLMOD(x, y)) \
	FROW(S##_truncdiv, T, T, TRUNC(x / y)) \
	FROW(S##_truncmod, T, T, FMOD(x, y)) \
	FROW(S##_max, T, T, (x > y || x != x) ? x : y) \
	FROW(S##_min, T, T, (x < y || x != x) ? x : y) \
	FROW(S##_pow, T, T, POW(x, y)) \
	FROW(S##_sqdiff, T, T, (x - y) * (x - y)) \
	FROW(S##_divnonan, T, T, y == 0 ? 0 : x / y) \
	FROW(S##_eq, T, uint8_t, x == y) \
	FROW(S##_ne, T, uint8_t, x != y) \
	FROW(S##_lt, T, uint8_t, x < y) \
	FROW(S##_le, T, uint8_t, x <= y) \
	FROW(S##_gt, T, uint8_t, x > y) \
	FROW(S##_ge, T, uint8_t, x >= y)

FOPS(f32, float, floorf, truncf, powf, fmodf, fmodf_floor)
FOPS(f64, double, floor, trunc, pow, fmod, fmod_floor)

typedef void (*frow32)(void *, const float *, int64_t, const float *,
		       int64_t, int64_t);
typedef void (*frow64)(void *, const double *, int64_t, const double *,
		       int64_t, int64_t);

#define FTABLE(S) { \
	[B_ADD] = (void *)S##_add, [B_SUB] = (void *)S##_sub, \
	[B_MUL] = (void *)S##_mul, [B_DIV] = (void *)S##_div, \
	[B_REALDIV] = (void *)S##_div, [B_FLOORDIV] = (void *)S##_floordiv, \
	[B_FLOORMOD] = (void *)S##_floormod, \
	[B_TRUNCDIV] = (void *)S##_truncdiv, \
	[B_TRUNCMOD] = (void *)S##_truncmod, [B_MAX] = (void *)S##_max, \
	[B_MIN] = (void *)S##_min, [B_POW] = (void *)S##_pow, \
	[B_SQDIFF] = (void *)S##_sqdiff, [B_DIVNONAN] = (void *)S##_divnonan, \
	[B_EQ] = (void *)S##_eq, [B_NE] = (void *)S##_ne, \
	[B_LT] = (void *)S##_lt, [B_LE] = (void *)S##_le, \
	[B_GT] = (void *)S##_gt, [B_GE] = (void *)S##_ge }

static void *const f32_rows[B_NOPS] = FTABLE(f32);
static void *const f64_rows[B_NOPS] = FTABLE(f64);

struct fwalk {
	void *row;
	int dbl;
	char *o;
	size_t os;
	const char *a, *b;
};

static void frow(void *ud, int64_t o, int64_t ia, int64_t da, int64_t ib,
		 int64_t db, int64_t len)
{
	struct fwalk *w = ud;
	size_t es = w->dbl ? sizeof(double) : sizeof(float);
	void *op = w->o + (size_t)o * w->os;
	const void *ap = w->a + (size_t)ia * es, *bp = w->b + (size_t)ib * es;
	if (w->dbl)
		((frow64)w->row)(op, ap, da, bp, db, len);
	else
		((frow32)w->row)(op, ap, da, bp, db, len);
}

/* ---------------------------------------------------------------- ints */

struct iwalk {
	int op, dt, uns;
	ge_xt *o;
	const ge_xt *a, *b;
	int bad; /* 1: division by zero, 2: negative power */
};

static int64_t ipow(int64_t x, int64_t y)
{
	uint64_t acc = 1, b = (uint64_t)x;
	for (uint64_t e = (uint64_t)y; e; e >>= 1, b *= b)
		if (e & 1)
			acc *= b;
	return (int64_t)acc;
}

/* x op y for integers of dtype dt, wrapped at its width by the store. */
static int64_t ibin(struct iwalk *w, int64_t x, int64_t y)
{
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	int u = w->uns;
	switch (w->op) {
	case B_ADD: return (int64_t)(ux + uy);
	case B_SUB: return (int64_t)(ux - uy);
	case B_MUL: return (int64_t)(ux * uy);
	case B_SQDIFF: return (int64_t)((ux - uy) * (ux - uy));
	case B_MAX: return (u ? ux > uy : x > y) ? x : y;
	case B_MIN: return (u ? ux < uy : x < y) ? x : y;
	case B_EQ: return x == y;
	case B_NE: return x != y;
	case B_LT: return u ? ux < uy : x < y;
	case B_LE: return u ? ux <= uy : x <= y;
	case B_GT: return u ? ux > uy : x > y;
	case B_GE: return u ? ux >= uy : x >= y;
	case B_AND: return x && y;
	case B_OR: return x || y;
	case B_POW:
		if (!u && y < 0) {
			w->bad = 2;
			return 0;
		}
		return ipow(x, y);
	case B_DIVNONAN:
		if (y == 0)
			return 0;
		break;
	default:
		break;
	}
	if (y == 0) {
		w->bad = 1;
		return 0;
	}
	if (u) {
		switch (w->op) {
		case B_FLOORMOD: case B_TRUNCMOD: return (int64_t)(ux % uy);
		default: return (int64_t)(ux / uy);
		}
	}
	if (x == INT64_MIN && y == -1) /* the quotient wraps, no remainder */
		return w->op == B_FLOORMOD || w->op == B_TRUNCMOD ? 0 : x;
	int64_t q = x / y, m = x % y;
	switch (w->op) {
	case B_FLOORDIV:
		return m != 0 && ((m < 0) != (y < 0)) ? q - 1 : q;
	case B_FLOORMOD:
		return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
	case B_TRUNCMOD:
		return m;
	default:
		return q;
	}
}

static void irow(void *ud, int64_t o, int64_t ia, int64_t da, int64_t ib,
		 int64_t db, int64_t len)
{
	struct iwalk *w = ud;
	for (int64_t i = 0; i < len; i++) {
		int64_t x = kld_i(w->a, ia + i * da), y = kld_i(w->b, ib + i * db);
		kst_i(w->o, o + i, ibin(w, x, y));
	}
}

struct swalk {
	int ne;
	ge_xt *o;
	const ge_xt *a, *b;
	int oom;
};

/* Add of strings: the two joined. */
static void scat(void *ud, int64_t o, int64_t ia, int64_t da, int64_t ib,
		 int64_t db, int64_t len)
{
	struct swalk *w = ud;
	const ge_xstr *a = w->a->data, *b = w->b->data;
	ge_xstr *out = w->o->data;
	for (int64_t i = 0; i < len && !w->oom; i++) {
		const ge_xstr *x = &a[ia + i * da], *y = &b[ib + i * db];
		size_t n = x->len + y->len;
		if (!n)
			continue;
		char *p = malloc(n + 1);
		if (!p) {
			w->oom = 1;
			return;
		}
		if (x->len)
			memcpy(p, x->p, x->len);
		if (y->len)
			memcpy(p + x->len, y->p, y->len);
		p[n] = 0;
		out[o + i].p = p;
		out[o + i].len = n;
	}
}

static void srow(void *ud, int64_t o, int64_t ia, int64_t da, int64_t ib,
		 int64_t db, int64_t len)
{
	struct swalk *w = ud;
	const ge_xstr *a = w->a->data, *b = w->b->data;
	uint8_t *out = w->o->data;
	for (int64_t i = 0; i < len; i++) {
		const ge_xstr *x = &a[ia + i * da], *y = &b[ib + i * db];
		int eq = x->len == y->len &&
			 (!x->len || !memcmp(x->p, y->p, x->len));
		out[o + i] = (uint8_t)(w->ne ? !eq : eq);
	}
}

/* ---------------------------------------------------------------- driver */

/* Which dtypes an op takes. */
static uint64_t op_dtypes(int op)
{
	switch (op) {
	case B_AND: case B_OR:
		return KDT(DT_BOOL);
	case B_EQ: case B_NE:
		return KDT_NUMBERS | KDT(DT_BOOL) | KDT(DT_STRING);
	case B_REALDIV: case B_DIVNONAN:
		return KDT_FLOATS | KDT_INTS;
	default:
		return KDT_NUMBERS;
	}
}

/* a op b over the broadcast bc into output 0. */
static int binary(ge_kctx *k, int op, ge_xt *a, ge_xt *b, const kbcast *bc)
{
	int dt = a->dtype;
	int odt = is_cmp(op) ? DT_BOOL : dt;
	if (ge_k_work(k, (uint64_t)bc->n))
		return GE_EINVAL;
	if (dt == DT_STRING || dt == DT_BOOL || dt_is_int(dt)) {
		ge_xt *o = ge_k_out(k, 0, odt, bc->rank, bc->dims);
		if (!o)
			return GE_EINVAL;
		if (dt == DT_STRING) {
			struct swalk w = {op == B_NE, o, a, b, 0};
			ge_kbcast_rows(bc, op == B_ADD ? scat : srow, &w);
			return w.oom ? ge_k_fail(k, "out of memory") : GE_OK;
		}
		struct iwalk w = {op, dt, dt_is_unsigned(dt), o, a, b, 0};
		ge_kbcast_rows(bc, irow, &w);
		if (w.bad == 1)
			return ge_k_fail(k, "integer division by zero");
		if (w.bad == 2)
			return ge_k_fail(k, "integers to negative integer powers "
					 "are not allowed");
		return GE_OK;
	}
	ge_xt *wa = ge_kwiden(k, a);
	ge_xt *wb = wa ? ge_kwiden(k, b) : NULL;
	ge_xt *o = wb ? (is_cmp(op) ? ge_k_out(k, 0, DT_BOOL, bc->rank, bc->dims)
				   : ge_kout_f(k, 0, dt, bc->rank, bc->dims))
		      : NULL;
	int rc = GE_EINVAL;
	if (o) {
		struct fwalk w = {dt == DT_DOUBLE ? f64_rows[op] : f32_rows[op],
				  dt == DT_DOUBLE, o->data,
				  ge_xt_elem_size(o->dtype), wa->data, wb->data};
		ge_kbcast_rows(bc, frow, &w);
		rc = is_cmp(op) ? GE_OK : ge_kfinish_f(k, 0, dt);
	}
	ge_xt_unref(wa);
	ge_xt_unref(wb);
	return rc;
}

static int k_binary(ge_kctx *k)
{
	int op = op_of(k->type);
	if (op < 0)
		return ge_k_fail(k, "is not a binary op");
	uint64_t dts = op_dtypes(op);
	if (!strcmp(k->type, "Add")) /* Add (not AddV2) joins strings */
		dts |= KDT(DT_STRING);
	if (ge_k_need(k, 2) || ge_k_dtype_in(k, 0, dts))
		return GE_EINVAL;
	ge_xt *a = k->in[0], *b = k->in[1];
	if (a->dtype != b->dtype)
		return ge_k_fail(k, "inputs of dtypes %s and %s", kdt(a->dtype),
				 kdt(b->dtype));
	kbcast bc;
	if (ge_kbcast_make(k, a, b, &bc))
		return GE_EINVAL;
	return binary(k, op, a, b, &bc);
}

/* BiasAdd: bias [C] added along the last dimension (NHWC) or dimension 1
 * (NCHW) of value. */
static int k_bias_add(ge_kctx *k)
{
	if (ge_k_need(k, 2) || ge_k_dtype_in(k, 0, KDT_NUMBERS))
		return GE_EINVAL;
	ge_xt *v = k->in[0], *b = k->in[1];
	if (v->dtype != b->dtype)
		return ge_k_fail(k, "inputs of dtypes %s and %s", kdt(v->dtype),
				 kdt(b->dtype));
	int nchw = ge_k_attr_str_is(k, "data_format", "NCHW", 0);
	if (v->rank < 2)
		return ge_k_fail(k, "value must have rank 2 or more, has %d",
				 v->rank);
	if (b->rank != 1)
		return ge_k_fail(k, "bias must be a vector, has rank %d",
				 b->rank);
	int axis = nchw ? 1 : v->rank - 1;
	if (b->dims[0] != v->dims[axis])
		return ge_k_fail(k, "bias has %" PRId64 " elements, the value's "
				 "channel dimension %" PRId64, b->dims[0],
				 v->dims[axis]);
	int64_t bd[GE_SHAPE_MAXRANK];
	int br = v->rank - axis;
	bd[0] = b->dims[0];
	for (int i = 1; i < br; i++)
		bd[i] = 1;
	kbcast bc;
	if (ge_kbcast_shapes(k, v->rank, v->dims, br, bd, &bc))
		return GE_EINVAL;
	return binary(k, B_ADD, v, b, &bc);
}

/* AddN: the sum of N tensors of one shape, added left to right. */
static int k_addn(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT_NUMBERS))
		return GE_EINVAL;
	ge_xt *a = k->in[0];
	char s1[128], s2[128];
	for (int i = 1; i < k->nin; i++) {
		ge_xt *b = k->in[i];
		if (!b || b->dtype != a->dtype || b->rank != a->rank ||
		    memcmp(b->dims, a->dims, sizeof(int64_t) * (size_t)a->rank))
			return ge_k_fail(k, "input %d is %s, input 0 %s", i,
					 b ? ge_xt_describe(b, s1, sizeof s1)
					   : "missing",
					 ge_xt_describe(a, s2, sizeof s2));
	}
	if (ge_k_work(k, (uint64_t)a->n * (uint64_t)k->nin))
		return GE_EINVAL;
	int dt = a->dtype;
	if (dt_is_int(dt)) {
		ge_xt *o = ge_k_out(k, 0, dt, a->rank, a->dims);
		if (!o)
			return GE_EINVAL;
		for (int64_t j = 0; j < a->n; j++) {
			uint64_t s = 0;
			for (int i = 0; i < k->nin; i++)
				s += (uint64_t)kld_i(k->in[i], j);
			kst_i(o, j, (int64_t)s);
		}
		return GE_OK;
	}
	ge_xt *o = ge_kout_f(k, 0, dt, a->rank, a->dims);
	if (!o)
		return GE_EINVAL;
	for (int i = 0; i < k->nin; i++) {
		ge_xt *w = ge_kwiden(k, k->in[i]);
		if (!w)
			return GE_EINVAL;
		if (dt == DT_DOUBLE) {
			double *d = o->data;
			const double *s = w->data;
			for (int64_t j = 0; j < a->n; j++)
				d[j] = i ? d[j] + s[j] : s[j];
		} else {
			float *d = o->data;
			const float *s = w->data;
			for (int64_t j = 0; j < a->n; j++)
				d[j] = i ? d[j] + s[j] : s[j];
		}
		ge_xt_unref(w);
	}
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- select */

/* Select (v1): cond of x's shape, a scalar, or a vector over x's first
 * dimension; SelectV2: the three broadcast. */
static int k_select(ge_kctx *k)
{
	if (ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *c = k->in[0], *x = k->in[1], *y = k->in[2];
	char s1[128], s2[128], s3[128];
	int v2 = !strcmp(k->type, "SelectV2");
	if (c->dtype != DT_BOOL)
		return ge_k_fail(k, "condition must be bool, is %s",
				 kdt(c->dtype));
	if (x->dtype != y->dtype)
		return ge_k_fail(k, "t and e have dtypes %s and %s",
				 kdt(x->dtype), kdt(y->dtype));
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
	int64_t cs[GE_SHAPE_MAXRANK] = {0}, xs[GE_SHAPE_MAXRANK] = {0},
		ys[GE_SHAPE_MAXRANK] = {0};
	if (!v2) {
		int ok = x->rank == y->rank &&
			 !memcmp(x->dims, y->dims, sizeof(int64_t) *
				 (size_t)x->rank);
		int cok = c->rank == 0 || (c->rank == x->rank &&
			  !memcmp(c->dims, x->dims,
				  sizeof(int64_t) * (size_t)x->rank)) ||
			  (c->rank == 1 && x->rank >= 1 &&
			   c->dims[0] == x->dims[0]);
		if (!ok || !cok)
			return ge_k_fail(k, "condition %s, t %s and e %s do not "
					 "fit",
					 ge_xt_describe(c, s1, sizeof s1),
					 ge_xt_describe(x, s2, sizeof s2),
					 ge_xt_describe(y, s3, sizeof s3));
		rank = x->rank;
		memcpy(dims, x->dims, sizeof dims);
		kstrides(rank, dims, xs);
		kstrides(rank, dims, ys);
		if (c->rank == x->rank && c->rank > 0)
			kstrides(rank, dims, cs);
		else if (c->rank == 1)
			cs[0] = 1;
	} else {
		kbcast b1, b2;
		if (ge_kbcast_make(k, x, y, &b1) ||
		    ge_kbcast_shapes(k, c->rank, c->dims, b1.rank, b1.dims, &b2))
			return GE_EINVAL;
		rank = b2.rank;
		memcpy(dims, b2.dims, sizeof dims);
		const ge_xt *t3[3] = {c, x, y};
		int64_t *s3p[3] = {cs, xs, ys};
		for (int j = 0; j < 3; j++) {
			int64_t st = 1;
			const ge_xt *t = t3[j];
			for (int i = rank - 1; i >= 0; i--) {
				int ti = i - (rank - t->rank);
				int64_t d = ti >= 0 ? t->dims[ti] : 1;
				s3p[j][i] = d == 1 ? 0 : st;
				st *= d;
			}
		}
	}
	int64_t n = kcount(rank, dims);
	if (n < 0 || ge_k_work(k, (uint64_t)n))
		return n < 0 ? ge_k_fail(k, "size overflows") : GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, rank, dims);
	if (!o)
		return GE_EINVAL;
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, pc = 0, px = 0, py = 0;
	const uint8_t *cv = c->data;
	size_t es = ge_xt_elem_size(x->dtype);
	int deep = x->dtype == DT_STRING || x->dtype == DT_RESOURCE ||
		   x->dtype == DT_VARIANT;
	for (int64_t i = 0; i < n; i++) {
		if (deep) {
			if (ge_kcopy_elem(o, i, cv[pc] ? x : y, cv[pc] ? px : py))
				return ge_k_fail(k, "out of memory");
		} else {
			memcpy((char *)o->data + (size_t)i * es,
			       (const char *)(cv[pc] ? x : y)->data +
				       (size_t)(cv[pc] ? px : py) * es, es);
		}
		for (int d = rank - 1; d >= 0; d--) {
			pc += cs[d];
			px += xs[d];
			py += ys[d];
			if (++idx[d] < dims[d])
				break;
			pc -= cs[d] * dims[d];
			px -= xs[d] * dims[d];
			py -= ys[d] * dims[d];
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* ClipByValue: min(max(t, lo), hi), lo and hi scalars or t's shape. */
static int k_clip(ge_kctx *k)
{
	if (ge_k_need(k, 3) || ge_k_dtype_in(k, 0, KDT_NUMBERS))
		return GE_EINVAL;
	ge_xt *t = k->in[0], *lo = k->in[1], *hi = k->in[2];
	for (int i = 1; i < 3; i++) {
		const ge_xt *b = k->in[i];
		if (b->dtype != t->dtype)
			return ge_k_fail(k, "input %d is %s, t is %s", i,
					 kdt(b->dtype), kdt(t->dtype));
		if (b->n != 1 && (b->rank != t->rank ||
				  memcmp(b->dims, t->dims, sizeof(int64_t) *
					 (size_t)t->rank)))
			return ge_k_fail(k, "clip bound %d must be a scalar or "
					 "of t's shape", i);
	}
	kbcast b1;
	if (ge_kbcast_make(k, t, lo, &b1) || binary(k, B_MAX, t, lo, &b1))
		return GE_EINVAL;
	ge_xt *m = k->out[0];
	k->out[0] = NULL;
	kbcast b2;
	int rc = ge_kbcast_make(k, m, hi, &b2);
	if (rc == GE_OK)
		rc = binary(k, B_MIN, m, hi, &b2);
	ge_xt_unref(m);
	return rc;
}

const ge_kdef ge_kernels_binary[] = {
	{"Add", k_binary, 0}, {"AddV2", k_binary, 0},
	{"Sub", k_binary, 0}, {"Mul", k_binary, 0},
	{"Div", k_binary, 0}, {"RealDiv", k_binary, 0},
	{"FloorDiv", k_binary, 0}, {"FloorMod", k_binary, 0},
	{"TruncateDiv", k_binary, 0}, {"TruncateMod", k_binary, 0},
	{"Mod", k_binary, 0}, {"Maximum", k_binary, 0},
	{"Minimum", k_binary, 0}, {"Pow", k_binary, 0},
	{"SquaredDifference", k_binary, 0}, {"DivNoNan", k_binary, 0},
	{"Equal", k_binary, 0}, {"NotEqual", k_binary, 0},
	{"Less", k_binary, 0}, {"LessEqual", k_binary, 0},
	{"Greater", k_binary, 0}, {"GreaterEqual", k_binary, 0},
	{"LogicalAnd", k_binary, 0}, {"LogicalOr", k_binary, 0},
	{"BiasAdd", k_bias_add, 0}, {"BiasAddV1", k_bias_add, 0},
	{"AddN", k_addn, 0}, {"Select", k_select, 0},
	{"SelectV2", k_select, 0}, {"ClipByValue", k_clip, 0},
	{NULL, NULL, 0},
};
