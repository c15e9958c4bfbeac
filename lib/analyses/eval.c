/*
 * eval.c: values, the kernel table, element-wise kernels with
 * TensorFlow's broadcasting, casts and reductions (eval.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/ckarith.h"
#include "analyses/eval_impl.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* ------------------------------------------------------------ values */

int ge_eval_dtype_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF ||
	       dt == DT_BFLOAT16;
}

int ge_eval_dtype_ok(int dt)
{
	switch (dt) {
	case DT_FLOAT: case DT_DOUBLE: case DT_HALF: case DT_BFLOAT16:
	case DT_INT32: case DT_INT64: case DT_UINT8: case DT_INT8:
	case DT_INT16: case DT_UINT16: case DT_UINT32: case DT_BOOL:
	case DT_QUINT8:
		return 1;
	default:
		return 0;
	}
}

/* The same rule as ge_eval_k_new's (ge_ck_count): a shape a kernel may
 * make must have a count here, or a value of it would claim -1 elements.
 * A dim of 0 after a large one ({2^31, 0}) is an empty value, not a
 * large one. */
int64_t ge_shape_count(int rank, const int64_t *dims)
{
	int64_t n;
	return ge_ck_count(rank, dims, EVAL_MAX_ELEMS, &n) ? -1 : n;
}

void ge_value_init(ge_value *v, int dtype, int rank, const int64_t *dims)
{
	memset(v, 0, sizeof *v);
	v->dtype = dtype;
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
	v->n = ge_shape_count(rank, dims);
	/* big arrays: a large value's memory goes back to the system when
	 * it is freed, whatever malloc's heap does (a fold of a chain of
	 * large values frees one at each step); n is within the
	 * evaluator's element limit (ge_shape_count) */
	size_t n = v->n > 0 ? (size_t)v->n : 1;
	if (ge_eval_dtype_float(dtype))
		v->d = ge_big_alloc(n * sizeof *v->d);
	else
		v->i = ge_big_alloc(n * sizeof *v->i);
}

void ge_value_free(ge_value *v)
{
	ge_big_free(v->d);
	ge_big_free(v->i);
	v->d = NULL;
	v->i = NULL;
}

void ge_value_copy(ge_value *dst, const ge_value *src)
{
	ge_value_init(dst, src->dtype, src->rank, src->dims);
	if (src->d)
		memcpy(dst->d, src->d, (size_t)src->n * sizeof *src->d);
	else
		memcpy(dst->i, src->i, (size_t)src->n * sizeof *src->i);
}

double ge_value_get(const ge_value *v, int64_t k)
{
	return v->d ? v->d[k] : (double)v->i[k];
}

int64_t ge_value_geti(const ge_value *v, int64_t k)
{
	return v->i ? v->i[k] : (int64_t)v->d[k];
}

static int64_t wrap(int dt, int64_t x)
{
	switch (dt) {
	case DT_INT32: return (int32_t)(uint32_t)(uint64_t)x;
	case DT_UINT8: case DT_QUINT8: return (uint8_t)(uint64_t)x;
	case DT_INT8: return (int8_t)(uint8_t)(uint64_t)x;
	case DT_INT16: return (int16_t)(uint16_t)(uint64_t)x;
	case DT_UINT16: return (uint16_t)(uint64_t)x;
	case DT_UINT32: return (uint32_t)(uint64_t)x;
	case DT_BOOL: return x != 0;
	default: return x;
	}
}

static double round_to(int dt, double x)
{
	switch (dt) {
	case DT_FLOAT: return (double)(float)x;
	case DT_HALF: return ge_half_to_float(ge_half_from_double(x));
	case DT_BFLOAT16: return ge_bf16_to_float(ge_bf16_from_double(x));
	default: return x;
	}
}

void ge_value_normalize(ge_value *v)
{
	if (v->d) {
		if (v->dtype != DT_DOUBLE)
			for (int64_t k = 0; k < v->n; k++)
				v->d[k] = round_to(v->dtype, v->d[k]);
	} else if (v->dtype != DT_INT64) {
		for (int64_t k = 0; k < v->n; k++)
			v->i[k] = wrap(v->dtype, v->i[k]);
	}
}

int ge_value_from_tensor(const Tensorflow__TensorProto *t, ge_value *v,
			 ge_error *err)
{
	int dt = (int)t->dtype;
	if (!ge_eval_dtype_ok(dt))
		return ge_err(err, GE_EINVAL, "dtype %s is not supported",
			      ge_dtype_name(dt) ? ge_dtype_name(dt) : "?");
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = 0;
	if (t->tensor_shape) {
		if (t->tensor_shape->unknown_rank ||
		    t->tensor_shape->n_dim > GE_SHAPE_MAXRANK)
			return ge_err(err, GE_EINVAL, "tensor shape not supported");
		for (size_t i = 0; i < t->tensor_shape->n_dim; i++)
			dims[rank++] = t->tensor_shape->dim[i]->size;
	}
	if (ge_shape_count(rank, dims) < 0)
		return ge_err(err, GE_EINVAL, "tensor too large or malformed");
	ge_value_init(v, dt, rank, dims);
	for (int64_t k = 0; k < v->n; k++) {
		int rc = v->d ? ge_tensor_get_double(t, k, &v->d[k], err)
			      : ge_tensor_get_int64(t, k, &v->i[k], err);
		if (rc != GE_OK) {
			ge_value_free(v);
			return rc;
		}
	}
	return GE_OK;
}

void ge_value_to_tensor(const ge_value *v, ge_buf *out)
{
	ge_tenc e;
	/* one value fills the shape when all are equal, as TensorFlow writes
	 * splats */
	int64_t nv = v->n;
	int same = v->n > 1;
	for (int64_t k = 1; same && k < v->n; k++)
		same = v->d ? !memcmp(&v->d[k], &v->d[0], sizeof v->d[0])
			    : v->i[k] == v->i[0];
	if (same)
		nv = 1;
	ge_tenc_begin(&e, out, v->dtype, v->rank, v->dims, nv);
	for (int64_t k = 0; k < nv; k++) {
		if (v->d)
			ge_tenc_double(&e, v->d[k], 0);
		else if (v->dtype == DT_BOOL)
			ge_tenc_bool(&e, v->i[k] != 0);
		else
			ge_tenc_int(&e, v->i[k]);
	}
	ge_tenc_end(&e);
}

int ge_value_from_const(const ge_graph *g, ge_opid id, ge_value *v,
			ge_error *err)
{
	const Tensorflow__AttrValue *a = ge_op_attr(g, id, "value", err);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !a->tensor)
		return ge_err(err, GE_EINVAL, "Const without a tensor value");
	return ge_value_from_tensor(a->tensor, v, err);
}

/* ------------------------------------------------------------ budgets */

void ge_eval_budget_init(ge_eval_budget *b)
{
	uint64_t m = ge_max_memory();
	b->work = 0;
	b->max_work = ge_max_work();
	if (!ge_max_work_given() && b->max_work > GE_EVAL_DEFAULT_WORK)
		b->max_work = GE_EVAL_DEFAULT_WORK;
	b->live = 0;
	b->max_live = ge_max_memory_given() || m < GE_EVAL_DEFAULT_LIVE
			      ? m
			      : GE_EVAL_DEFAULT_LIVE;
}

uint64_t ge_value_bytes(const ge_value *v)
{
	return (uint64_t)(v->n > 0 ? v->n : 1) * 8;
}

int ge_eval_budget_take(ge_eval_budget *b, uint64_t bytes)
{
	uint64_t t;
	if (ge_ck_uadd(b->live, bytes, &t) || t > b->max_live)
		return -1;
	b->live = t;
	return 0;
}

void ge_eval_budget_release(ge_eval_budget *b, uint64_t bytes)
{
	b->live = bytes > b->live ? 0 : b->live - bytes;
}

static int over_work(ge_eval_budget *b, uint64_t units)
{
	uint64_t t;
	if (ge_ck_uadd(b->work, units, &t) || t > b->max_work)
		return 1;
	b->work = t;
	return 0;
}

static int over_work_err(ge_error *err, const char *type, uint64_t units,
			 const ge_eval_budget *b)
{
	return ge_err(err, GE_EINVAL,
		      "%s needs %llu units of work, over what is left of the "
		      "work budget of %llu (--max-work, GEREWRITE_MAX_WORK)",
		      type, (unsigned long long)units,
		      (unsigned long long)b->max_work);
}

static int over_live_err(ge_error *err, const char *type, uint64_t bytes,
			 const ge_eval_budget *b)
{
	char x[32], m[32];
	return ge_err(err, GE_EINVAL,
		      "%s needs %s more for its values, over the memory "
		      "budget of %s (--max-memory, GEREWRITE_MAX_MEMORY)",
		      type, ge_format_size(bytes, x, sizeof x),
		      ge_format_size(b->max_live, m, sizeof m));
}

int ge_value_from_const_budget(const ge_graph *g, ge_opid id, ge_value *v,
			       ge_eval_budget *b, ge_error *err)
{
	const Tensorflow__AttrValue *a = ge_op_attr(g, id, "value", err);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !a->tensor)
		return ge_err(err, GE_EINVAL, "Const without a tensor value");
	const Tensorflow__TensorShapeProto *sp = a->tensor->tensor_shape;
	int64_t n = 1;
	if (sp && !sp->unknown_rank) {
		for (size_t i = 0; i < sp->n_dim; i++)
			if (sp->dim[i]->size < 0 ||
			    ge_ck_mul(n, sp->dim[i]->size, &n) ||
			    n > EVAL_MAX_ELEMS)
				return ge_err(err, GE_EINVAL,
					      "tensor too large or malformed");
	}
	uint64_t bytes = (uint64_t)(n > 0 ? n : 1) * 8;
	char what[160];
	snprintf(what, sizeof what, "Const '%.120s'", ge_op_name(g, id));
	if (over_work(b, (uint64_t)n))
		return over_work_err(err, what, (uint64_t)n, b);
	if (ge_eval_budget_take(b, bytes))
		return over_live_err(err, what, bytes, b);
	int rc = ge_value_from_tensor(a->tensor, v, err);
	if (rc != GE_OK)
		ge_eval_budget_release(b, bytes);
	return rc;
}

/* ------------------------------------------------------------ context */

int ge_eval_k_work(kctx *k, uint64_t units)
{
	if (over_work(k->b, units))
		return over_work_err(k->err, k->type, units, k->b);
	return GE_OK;
}

int ge_eval_k_dtype_int(int dtype)
{
	return ge_eval_dtype_ok(dtype) && !ge_eval_dtype_float(dtype);
}

int ge_eval_k_new(kctx *k, ge_value *o, int dtype, int rank, const int64_t *dims)
{
	int64_t n;
	if (rank < 0 || rank > GE_SHAPE_MAXRANK ||
	    ge_ck_count(rank, dims, EVAL_MAX_ELEMS, &n))
		return ge_eval_k_fail(k, "%s: result too large or malformed", k->type);
	if (!ge_eval_dtype_ok(dtype))
		return ge_eval_k_fail(k, "%s: output dtype %s is not supported",
			      k->type,
			      ge_dtype_name(dtype) ? ge_dtype_name(dtype) : "?");
	uint64_t bytes = (uint64_t)(n > 0 ? n : 1) * 8, t;
	if (ge_ck_uadd(k->b->live, k->out_bytes, &t) ||
	    ge_ck_uadd(t, bytes, &t) || t > k->b->max_live)
		return over_live_err(k->err, k->type, bytes, k->b);
	if (ge_eval_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	k->out_bytes += bytes;
	ge_value_init(o, dtype, rank, dims);
	return GE_OK;
}

int ge_eval_k_copy(kctx *k, ge_value *o, const ge_value *src)
{
	if (ge_eval_k_new(k, o, src->dtype, src->rank, src->dims))
		return GE_EINVAL;
	if (src->d && o->d)
		memcpy(o->d, src->d, (size_t)src->n * sizeof *src->d);
	else if (src->i && o->i)
		memcpy(o->i, src->i, (size_t)src->n * sizeof *src->i);
	return GE_OK;
}

int ge_eval_k_fail(kctx *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ge_verr(k->err, GE_EINVAL, fmt, ap);
	va_end(ap);
	return GE_EINVAL;
}

int ge_eval_k_need(kctx *k, int nin)
{
	if (k->nin < nin)
		return ge_eval_k_fail(k, "needs %d inputs, has %d", nin, k->nin);
	return GE_OK;
}

int64_t ge_eval_k_attr_int(kctx *k, const char *name, int64_t def)
{
	int64_t v;
	return ge_op_attr_int(k->g, k->id, name, &v) == 0 ? v : def;
}

int ge_eval_k_attr_bool(kctx *k, const char *name, int def)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_B)
		return def;
	return v->b != 0;
}

double ge_eval_k_attr_float(kctx *k, const char *name, double def)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_F)
		return def;
	return v->f;
}

int ge_eval_k_attr_type(kctx *k, const char *name, int def)
{
	int t;
	return ge_op_attr_type(k->g, k->id, name, &t) == 0 ? t : def;
}

int ge_eval_k_attr_str_is(kctx *k, const char *name, const char *s, int def)
{
	const char *p;
	size_t len;
	if (ge_op_attr_string(k->g, k->id, name, &p, &len))
		return def;
	return len == strlen(s) && !memcmp(p, s, len);
}

int ge_eval_k_attr_ints(kctx *k, const char *name, int64_t *out, int cap)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    v->list->n_i > (size_t)cap)
		return -1;
	for (size_t i = 0; i < v->list->n_i; i++)
		out[i] = v->list->i[i];
	return (int)v->list->n_i;
}

int ge_eval_k_ints(kctx *k, int i, int64_t *out, int cap)
{
	if (i >= k->nin || !k->in[i].i || k->in[i].dtype == DT_BOOL ||
	    k->in[i].n > cap)
		return -1;
	for (int64_t j = 0; j < k->in[i].n; j++)
		out[j] = k->in[i].i[j];
	return (int)k->in[i].n;
}

int ge_eval_k_scalar_int(kctx *k, int i, int64_t *out)
{
	return ge_eval_k_ints(k, i, out, 1) == 1 ? 0 : -1;
}

int ge_eval_k_axis(kctx *k, int64_t a, int rank, int64_t *out)
{
	if (a < -rank || a >= rank)
		return ge_eval_k_fail(k, "axis %lld out of range for rank %d",
			      (long long)a, rank);
	*out = a < 0 ? a + rank : a;
	return GE_OK;
}

/* ------------------------------------------------------------ unary */

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double relu(double x) { return x > 0 ? x : 0; }
static double relu6(double x) { return x < 0 ? 0 : x > 6 ? 6 : x; }
static double elu(double x) { return x < 0 ? expm1(x) : x; }
static double selu(double x)
{
	return 1.0507009873554804934193349852946 *
	       (x < 0 ? 1.6732632423543772848170429916717 * expm1(x) : x);
}
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double softsign(double x) { return x / (1 + fabs(x)); }
static double neg(double x) { return -x; }
static double square(double x) { return x * x; }
static double rsqrt(double x) { return 1 / sqrt(x); }
static double recip(double x) { return 1 / x; }
static double sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }
static double ident(double x) { return x; }

static const struct ufn {
	const char *name;
	double (*f)(double);
} ufns[] = {
	{"Abs", fabs}, {"Ceil", ceil}, {"Cos", cos}, {"Elu", elu},
	{"Erf", erf}, {"Erfc", erfc}, {"Exp", exp}, {"Expm1", expm1},
	{"Floor", floor}, {"Identity", ident}, {"Inv", recip}, {"Log", log},
	{"Log1p", log1p}, {"Neg", neg}, {"Reciprocal", recip}, {"Relu", relu},
	{"Relu6", relu6}, {"Rint", rint}, {"Round", rint}, {"Rsqrt", rsqrt},
	{"Selu", selu}, {"Sigmoid", sigmoid}, {"Sign", sign}, {"Sin", sin},
	{"Snapshot", ident}, {"Softplus", softplus}, {"Softsign", softsign},
	{"Sqrt", sqrt}, {"Square", square}, {"StopGradient", ident},
	{"Tan", tan}, {"Tanh", tanh}, {"PreventGradient", ident},
	{"Atan", atan}, {"Asin", asin}, {"Acos", acos},
	{NULL, NULL},
};

static int k_unary(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	const struct ufn *u = ufns;
	while (u->name && strcmp(u->name, k->type))
		u++;
	ge_value *o = &k->out[0];
	if (ge_eval_k_copy(k, o, x))
		return GE_EINVAL;
	if (x->d) {
		for (int64_t i = 0; i < o->n; i++)
			o->d[i] = u->f(x->d[i]);
	} else if (u->f != ident) {
		/* integers: the few unary kernels TensorFlow has for them */
		for (int64_t i = 0; i < o->n; i++) {
			int64_t v = x->i[i];
			if (u->f == neg)
				v = (int64_t)(0 - (uint64_t)v);
			else if (u->f == fabs)
				v = v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
			else if (u->f == square)
				v = (int64_t)((uint64_t)v * (uint64_t)v);
			else if (u->f == sign)
				v = v > 0 ? 1 : v < 0 ? -1 : 0;
			else if (u->f == relu)
				v = v > 0 ? v : 0;
			else if (u->f == relu6)
				v = v < 0 ? 0 : v > 6 ? 6 : v;
			else {
				ge_value_free(o);
				return ge_eval_k_fail(k, "%s is not defined for %s",
					      k->type, ge_dtype_name(x->dtype));
			}
			o->i[i] = v;
		}
	}
	ge_value_normalize(o);
	return GE_OK;
}

static int k_logical_not(kctx *k)
{
	if (ge_eval_k_need(k, 1) || k->in[0].dtype != DT_BOOL)
		return ge_eval_k_fail(k, "LogicalNot needs a bool input");
	if (ge_eval_k_copy(k, &k->out[0], &k->in[0]))
		return GE_EINVAL;
	for (int64_t i = 0; i < k->out[0].n; i++)
		k->out[0].i[i] = !k->out[0].i[i];
	return GE_OK;
}

static int k_fill_like(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (ge_eval_k_new(k, &k->out[0], x->dtype, x->rank, x->dims))
		return GE_EINVAL;
	if (!strcmp(k->type, "OnesLike"))
		for (int64_t i = 0; i < x->n; i++) {
			if (k->out[0].d)
				k->out[0].d[i] = 1;
			else
				k->out[0].i[i] = 1;
		}
	return GE_OK;
}

static int k_cast(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int dt = ge_eval_k_attr_type(k, "DstT", 0);
	if (!ge_eval_dtype_ok(dt))
		return ge_eval_k_fail(k, "Cast to %s is not supported",
			      ge_dtype_name(dt) ? ge_dtype_name(dt) : "?");
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, dt, x->rank, x->dims))
		return GE_EINVAL;
	for (int64_t i = 0; i < x->n; i++) {
		if (o->d) {
			o->d[i] = ge_value_get(x, i);
			continue;
		}
		if (dt == DT_BOOL) {
			o->i[i] = ge_value_get(x, i) != 0;
			continue;
		}
		if (x->i) {
			o->i[i] = x->i[i];
			continue;
		}
		/* float to integer: truncation toward zero; what C leaves
		 * undefined (NaN, out of range) is refused */
		double v = trunc(x->d[i]);
		if (!(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18)) {
			ge_value_free(o);
			return ge_eval_k_fail(k, "Cast of %g to %s is out of range",
				      x->d[i], ge_dtype_name(dt));
		}
		o->i[i] = (int64_t)v;
	}
	ge_value_normalize(o);
	return GE_OK;
}

/* ------------------------------------------------------------ binary */

enum {
	B_ADD, B_SUB, B_MUL, B_DIV, B_REALDIV, B_FLOORDIV, B_FLOORMOD,
	B_TRUNCDIV, B_TRUNCMOD, B_MAX, B_MIN, B_POW, B_SQDIFF, B_DIVNONAN,
	B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_AND, B_OR, B_BIASADD,
};

static const struct {
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
	{"LogicalAnd", B_AND}, {"LogicalOr", B_OR},
	{NULL, 0},
};

static double fbin(int op, double x, double y)
{
	switch (op) {
	case B_ADD: return x + y;
	case B_SUB: return x - y;
	case B_MUL: return x * y;
	case B_DIV: case B_REALDIV: case B_TRUNCDIV: return x / y;
	case B_FLOORDIV: return floor(x / y);
	case B_FLOORMOD: {
		double r = fmod(x, y);
		if (r != 0 && ((r < 0) != (y < 0)))
			r += y;
		return r;
	}
	case B_TRUNCMOD: return fmod(x, y);
	case B_MAX: return x > y || isnan(x) ? x : y;
	case B_MIN: return x < y || isnan(x) ? x : y;
	case B_POW: return pow(x, y);
	case B_SQDIFF: return (x - y) * (x - y);
	case B_DIVNONAN: return y == 0 ? 0 : x / y;
	case B_EQ: return x == y;
	case B_NE: return x != y;
	case B_LT: return x < y;
	case B_LE: return x <= y;
	case B_GT: return x > y;
	case B_GE: return x >= y;
	default: return 0;
	}
}

/* Integer kernels; division by zero and the one overflowing quotient are
 * errors (TensorFlow fails the kernel on the first). */
static int ibin(int op, int64_t x, int64_t y, int64_t *r)
{
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	switch (op) {
	case B_ADD: *r = (int64_t)(ux + uy); return 0;
	case B_SUB: *r = (int64_t)(ux - uy); return 0;
	case B_MUL: *r = (int64_t)(ux * uy); return 0;
	case B_MAX: *r = x > y ? x : y; return 0;
	case B_MIN: *r = x < y ? x : y; return 0;
	case B_SQDIFF: *r = (int64_t)((ux - uy) * (ux - uy)); return 0;
	case B_EQ: *r = x == y; return 0;
	case B_NE: *r = x != y; return 0;
	case B_LT: *r = x < y; return 0;
	case B_LE: *r = x <= y; return 0;
	case B_GT: *r = x > y; return 0;
	case B_GE: *r = x >= y; return 0;
	case B_AND: *r = x && y; return 0;
	case B_OR: *r = x || y; return 0;
	case B_POW: {
		if (y < 0)
			return -1;
		uint64_t acc = 1, b = ux;
		for (int64_t e = y; e; e >>= 1, b *= b)
			if (e & 1)
				acc *= b;
		*r = (int64_t)acc;
		return 0;
	}
	case B_DIVNONAN:
		if (y == 0) {
			*r = 0;
			return 0;
		}
		/* fall through */
	default:
		break;
	}
	if (y == 0 || (x == INT64_MIN && y == -1))
		return -1;
	int64_t q = x / y, m = x % y;
	switch (op) {
	case B_DIV: case B_REALDIV: case B_TRUNCDIV: case B_DIVNONAN:
		*r = q;
		return 0;
	case B_TRUNCMOD:
		*r = m;
		return 0;
	case B_FLOORDIV:
		*r = (m != 0 && ((m < 0) != (y < 0))) ? q - 1 : q;
		return 0;
	case B_FLOORMOD:
		*r = (m != 0 && ((m < 0) != (y < 0))) ? m + y : m;
		return 0;
	default:
		return -1;
	}
}

/* Broadcast shape of a and b into o (TensorFlow's rules); -1 if they do
 * not broadcast. */
static int bshape(const ge_value *a, const ge_value *b, int *rank,
		  int64_t *dims)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < r; i++) {
		int ia = a->rank - r + i, ib = b->rank - r + i;
		int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
		if (x != y && x != 1 && y != 1)
			return -1;
		dims[i] = x == 1 ? y : x;
	}
	*rank = r;
	return 0;
}

/* Strides of v read as a value of `rank` dims broadcast to dims. */
static void bstrides(const ge_value *v, int rank, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		int iv = v->rank - rank + i;
		if (iv < 0 || v->dims[iv] == 1) {
			st[i] = 0;
		} else {
			st[i] = s;
		}
		if (iv >= 0)
			s = ge_ck_mul_sat(s, v->dims[iv]);
	}
}

static int binary_apply(kctx *k, int op, const ge_value *a, const ge_value *b,
			int out_dtype)
{
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK], sa[GE_SHAPE_MAXRANK],
		sb[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	if (bshape(a, b, &rank, dims))
		return ge_eval_k_fail(k, "shapes do not broadcast");
	if ((a->d != NULL) != (b->d != NULL))
		return ge_eval_k_fail(k, "%s: inputs are %s and %s", k->type,
			      ge_dtype_name(a->dtype), ge_dtype_name(b->dtype));
	bstrides(a, rank, sa);
	bstrides(b, rank, sb);
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, out_dtype, rank, dims))
		return GE_EINVAL;
	int fl = a->d != NULL;
	int64_t pa = 0, pb = 0;
	for (int64_t n = 0; n < o->n; n++) {
		if (fl) {
			double r = fbin(op, a->d[pa], b->d[pb]);
			if (o->d)
				o->d[n] = r;
			else
				o->i[n] = r != 0;
		} else {
			int64_t r;
			if (ibin(op, a->i[pa], b->i[pb], &r)) {
				ge_value_free(o);
				return ge_eval_k_fail(k, "integer division by zero or "
						 "overflow");
			}
			o->i[n] = r;
		}
		for (int d = rank - 1; d >= 0; d--) {
			pa += sa[d];
			pb += sb[d];
			if (++idx[d] < dims[d])
				break;
			pa -= sa[d] * dims[d];
			pb -= sb[d] * dims[d];
			idx[d] = 0;
		}
	}
	ge_value_normalize(o);
	return GE_OK;
}

static int k_binary(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *a = &k->in[0], *b = &k->in[1];
	if (a->dtype != b->dtype)
		return ge_eval_k_fail(k, "inputs are %s and %s", ge_dtype_name(a->dtype),
			      ge_dtype_name(b->dtype));
	int op = 0;
	for (int i = 0; bops[i].name; i++)
		if (!strcmp(bops[i].name, k->type))
			op = bops[i].op;
	int cmp = op >= B_EQ && op <= B_GE;
	if ((op == B_AND || op == B_OR) && a->dtype != DT_BOOL)
		return ge_eval_k_fail(k, "%s needs bool inputs", k->type);
	if (a->dtype == DT_BOOL && !cmp && op != B_AND && op != B_OR)
		return ge_eval_k_fail(k, "%s is not defined for bool", k->type);
	return binary_apply(k, op, a, b, cmp ? DT_BOOL : a->dtype);
}

static int k_bias_add(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0], *b = &k->in[1];
	if (b->rank != 1 || x->rank < 2 || x->dtype != b->dtype)
		return ge_eval_k_fail(k, "BiasAdd needs a 1-D bias of the input's dtype");
	if (ge_eval_k_attr_str_is(k, "data_format", "NCHW", 0)) {
		/* the bias runs along dim 1: view it as [C,1,...,1] */
		ge_value bb = *b;
		bb.rank = x->rank - 1;
		bb.dims[0] = b->dims[0];
		for (int i = 1; i < bb.rank; i++)
			bb.dims[i] = 1;
		if (bb.dims[0] != x->dims[1])
			return ge_eval_k_fail(k, "bias size differs from the channels");
		return binary_apply(k, B_ADD, x, &bb, x->dtype);
	}
	if (b->dims[0] != x->dims[x->rank - 1])
		return ge_eval_k_fail(k, "bias size differs from the channels");
	return binary_apply(k, B_ADD, x, b, x->dtype);
}

/* AddN: inputs of one dtype and one shape (TensorFlow's rule). */
static int k_add_n(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *f = &k->in[0];
	if (f->dtype == DT_BOOL)
		return ge_eval_k_fail(k, "AddN is not defined for bool");
	for (int i = 1; i < k->nin; i++) {
		const ge_value *x = &k->in[i];
		if (x->dtype != f->dtype || x->rank != f->rank ||
		    memcmp(x->dims, f->dims, (size_t)f->rank * sizeof f->dims[0]))
			return ge_eval_k_fail(k, "AddN: input %d is %s of another shape "
					 "or dtype than input 0", i,
				      ge_dtype_name(x->dtype));
	}
	ge_value *o = &k->out[0];
	if (ge_eval_k_copy(k, o, f))
		return GE_EINVAL;
	for (int i = 1; i < k->nin; i++)
		for (int64_t n = 0; n < o->n; n++) {
			if (o->d)
				o->d[n] += k->in[i].d[n];
			else
				o->i[n] = (int64_t)((uint64_t)o->i[n] +
						    (uint64_t)k->in[i].i[n]);
		}
	ge_value_normalize(o);
	return GE_OK;
}

static int k_select(kctx *k)
{
	if (ge_eval_k_need(k, 3))
		return GE_EINVAL;
	const ge_value *c = &k->in[0], *x = &k->in[1], *y = &k->in[2];
	if (c->dtype != DT_BOOL || x->dtype != y->dtype)
		return ge_eval_k_fail(k, "Select needs a bool condition and equal dtypes");
	int v2 = !strcmp(k->type, "SelectV2");
	if (!v2 && !(c->rank == x->rank ||
		     (c->rank == 1 && x->rank >= 1 && c->dims[0] == x->dims[0])))
		return ge_eval_k_fail(k, "condition shape does not fit");
	/* x and y broadcast; the condition broadcasts (V2) or selects rows */
	ge_value cond = *c;
	if (!v2 && c->rank == 1 && x->rank > 1) {
		cond.rank = x->rank;
		for (int i = 1; i < x->rank; i++)
			cond.dims[i] = 1;
	}
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK], t[GE_SHAPE_MAXRANK];
	ge_value sx = *x;
	if (bshape(x, y, &rank, dims))
		return ge_eval_k_fail(k, "then and else do not broadcast");
	sx.rank = rank;
	memcpy(sx.dims, dims, sizeof dims);
	if (bshape(&cond, &sx, &rank, t))
		return ge_eval_k_fail(k, "condition does not broadcast");
	int64_t sc[GE_SHAPE_MAXRANK], s1[GE_SHAPE_MAXRANK], s2[GE_SHAPE_MAXRANK],
		idx[GE_SHAPE_MAXRANK] = {0};
	bstrides(&cond, rank, sc);
	bstrides(x, rank, s1);
	bstrides(y, rank, s2);
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, rank, t))
		return GE_EINVAL;
	int64_t pc = 0, p1 = 0, p2 = 0;
	for (int64_t n = 0; n < o->n; n++) {
		if (c->i[pc])
			val_move(o, n, x, p1);
		else
			val_move(o, n, y, p2);
		for (int d = rank - 1; d >= 0; d--) {
			pc += sc[d];
			p1 += s1[d];
			p2 += s2[d];
			if (++idx[d] < t[d])
				break;
			pc -= sc[d] * t[d];
			p1 -= s1[d] * t[d];
			p2 -= s2[d] * t[d];
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* ------------------------------------------------------------ reductions */

static int k_reduce(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int64_t ax[GE_SHAPE_MAXRANK];
	int na = ge_eval_k_ints(k, 1, ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		return ge_eval_k_fail(k, "reduction axes are not a small integer list");
	uint8_t red[GE_SHAPE_MAXRANK] = {0};
	for (int i = 0; i < na; i++) {
		int64_t a = 0;
		if (ge_eval_k_axis(k, ax[i], x->rank, &a))
			return GE_EINVAL;
		red[a] = 1;
	}
	int keep = ge_eval_k_attr_bool(k, "keep_dims", 0);
	int64_t od[GE_SHAPE_MAXRANK], kd[GE_SHAPE_MAXRANK];
	int orank = 0;
	for (int i = 0; i < x->rank; i++) {
		kd[i] = red[i] ? 1 : x->dims[i];
		if (!red[i] || keep)
			od[orank++] = kd[i];
	}
	char t = k->type[1]; /* Sum, Mean, Max, Min, Prod, All, Any */
	int is_bool = k->type[0] == 'A';
	if (is_bool != (x->dtype == DT_BOOL))
		return ge_eval_k_fail(k, "%s on %s", k->type, ge_dtype_name(x->dtype));
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, orank, od))
		return GE_EINVAL;
	int64_t *cnt = ge_xcalloc((size_t)(o->n ? o->n : 1), sizeof *cnt);
	/* each input element adds to the output element at its index with
	 * the reduced dims dropped: ks are those strides, 0 on reduced dims */
	int64_t ks[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	int64_t s = 1;
	for (int i = x->rank - 1; i >= 0; i--) {
		ks[i] = red[i] ? 0 : s;
		s = ge_ck_mul_sat(s, kd[i]);
	}
	int64_t po = 0;
	for (int64_t n = 0; n < x->n; n++) {
		if (x->d) {
			double v = x->d[n], *r = &o->d[po];
			if (!cnt[po])
				*r = v;
			else if (t == 'u' || t == 'e')
				*r += v;
			else if (t == 'r')
				*r *= v;
			else if (t == 'a')
				*r = (v > *r || isnan(v)) ? v : *r;
			else if (t == 'i')
				*r = (v < *r || isnan(v)) ? v : *r;
		} else {
			int64_t v = x->i[n], *r = &o->i[po];
			if (!cnt[po])
				*r = v;
			else if (t == 'u' || t == 'e')
				*r = (int64_t)((uint64_t)*r + (uint64_t)v);
			else if (t == 'r')
				*r = (int64_t)((uint64_t)*r * (uint64_t)v);
			else if (t == 'a')
				*r = v > *r ? v : *r;
			else if (t == 'i')
				*r = v < *r ? v : *r;
			else if (t == 'l')
				*r = *r && v;
			else if (t == 'n')
				*r = *r || v;
		}
		cnt[po]++;
		for (int d = x->rank - 1; d >= 0; d--) {
			po += ks[d];
			if (++idx[d] < x->dims[d])
				break;
			po -= ks[d] * x->dims[d];
			idx[d] = 0;
		}
	}
	for (int64_t n = 0; n < o->n; n++) {
		if (cnt[n] && t == 'e') {
			if (o->d)
				o->d[n] /= (double)cnt[n];
			else
				o->i[n] /= cnt[n];
		} else if (!cnt[n]) {
			/* the identity of each reduction */
			double id = t == 'r' ? 1 : t == 'a' ? -INFINITY
				  : t == 'i' ? INFINITY : t == 'l' ? 1 : 0;
			if (o->d)
				o->d[n] = id;
			else
				o->i[n] = t == 'a' ? INT64_MIN
					  : t == 'i' ? INT64_MAX : (int64_t)id;
		}
	}
	free(cnt);
	ge_value_normalize(o);
	return GE_OK;
}

static int k_argmax(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int64_t a = 0;
	if (ge_eval_k_scalar_int(k, 1, &a) || ge_eval_k_axis(k, a, x->rank, &a))
		return ge_eval_k_fail(k, "dimension is not a valid scalar");
	if (x->dims[a] <= 0)
		return ge_eval_k_fail(k, "%s: reduction axis %lld is empty", k->type,
			      (long long)a);
	int64_t od[GE_SHAPE_MAXRANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (i != a)
			od[r++] = x->dims[i];
	int dt = ge_eval_k_attr_type(k, "output_type", DT_INT64);
	if (dt != DT_INT32 && dt != DT_INT64 && dt != DT_INT16 &&
	    dt != DT_UINT16)
		return ge_eval_k_fail(k, "%s: output_type %s is not an index dtype",
			      k->type, ge_dtype_name(dt) ? ge_dtype_name(dt) : "?");
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, dt, r, od))
		return GE_EINVAL;
	int64_t outer = 1, inner = 1, len = x->dims[a];
	for (int i = 0; i < a; i++)
		outer = ge_ck_mul_sat(outer, x->dims[i]);
	for (int i = (int)a + 1; i < x->rank; i++)
		inner = ge_ck_mul_sat(inner, x->dims[i]);
	int mx = !strcmp(k->type, "ArgMax");
	/* an empty result walks nothing (outer may be any size then) */
	for (int64_t p = 0; o->n > 0 && p < outer; p++)
		for (int64_t q = 0; q < inner; q++) {
			int64_t best = 0;
			double bv = ge_value_get(x, p * len * inner + q);
			for (int64_t j = 1; j < len; j++) {
				double v = ge_value_get(x, (p * len + j) * inner + q);
				if (mx ? v > bv : v < bv) {
					bv = v;
					best = j;
				}
			}
			o->i[p * inner + q] = best;
		}
	ge_value_normalize(o);
	return GE_OK;
}

/* ------------------------------------------------------------ table */

static const struct ge_kernel core[] = {
	{"Cast", k_cast}, {"LogicalNot", k_logical_not},
	{"ZerosLike", k_fill_like}, {"OnesLike", k_fill_like},
	{"BiasAdd", k_bias_add}, {"BiasAddV1", k_bias_add},
	{"AddN", k_add_n}, {"Select", k_select}, {"SelectV2", k_select},
	{"Sum", k_reduce}, {"Mean", k_reduce}, {"Max", k_reduce},
	{"Min", k_reduce}, {"Prod", k_reduce}, {"All", k_reduce},
	{"Any", k_reduce}, {"ArgMax", k_argmax}, {"ArgMin", k_argmax},
	{NULL, NULL},
};

static kernel_fn find_kernel(const char *type)
{
	for (int i = 0; ufns[i].name; i++)
		if (!strcmp(ufns[i].name, type))
			return k_unary;
	for (int i = 0; bops[i].name; i++)
		if (!strcmp(bops[i].name, type))
			return k_binary;
	const struct ge_kernel *tabs[] = {core, ge_layout_kernels,
					  ge_nn_kernels};
	for (size_t t = 0; t < sizeof tabs / sizeof tabs[0]; t++)
		for (const struct ge_kernel *e = tabs[t]; e->name; e++)
			if (!strcmp(e->name, type))
				return e->fn;
	return NULL;
}

static ge_eval_front_run front_run;
static int (*front_supported)(const char *type);

void ge_eval_set_front(ge_eval_front_run run,
		       int (*supported)(const char *type))
{
	front_run = run;
	front_supported = supported;
}

int ge_eval_supported(const char *type)
{
	return find_kernel(type) != NULL ||
	       (front_supported && type && front_supported(type));
}

int ge_eval_op(const ge_graph *g, ge_opid id, const ge_value *in, int nin,
	       ge_value *out, int nout, ge_error *err)
{
	ge_eval_budget b;
	ge_eval_budget_init(&b);
	for (int i = 0; i < nin; i++)
		b.live += ge_value_bytes(&in[i]);
	if (b.live > b.max_live)
		b.max_live = b.live;
	return ge_eval_op_budget(g, id, in, nin, out, nout, &b, err);
}

int ge_eval_op_budget(const ge_graph *g, ge_opid id, const ge_value *in,
		      int nin, ge_value *out, int nout, ge_eval_budget *b,
		      ge_error *err)
{
	kctx k = {g, id, ge_op_type(g, id), in, nin, out, nout, err, b, 0};
	int declined = 0;
	if (front_run && k.type) { /* it declines a type it lacks */
		int rc = front_run(g, id, in, nin, out, nout, b, err);
		if (rc != GE_EVAL_DECLINE)
			return rc;
		declined = 1;
	}
	kernel_fn fn = find_kernel(k.type);
	if (!fn && declined)
		return ge_err(err, GE_EINVAL, "no kernel for this op type gives "
			      "a constant value of it (the runner's holds "
			      "strings, lists or resources, or refused)");
	if (!fn)
		return ge_err(err, GE_EINVAL, "no kernel for op type %s", k.type);
	if (nout < 0 || nout > GE_EVAL_MAX_OUTPUTS)
		return ge_err(err, GE_EINVAL, "%s declares %d outputs, more than "
			      "the evaluator computes (%d)", k.type, nout,
			      GE_EVAL_MAX_OUTPUTS);
	/* every kernel reads its inputs once at least */
	uint64_t touched = 0;
	for (int i = 0; i < nin; i++)
		if (in[i].n > 0)
			touched += (uint64_t)in[i].n;
	if (ge_eval_k_work(&k, touched))
		return GE_EINVAL;
	for (int i = 0; i < nin; i++)
		if (!ge_eval_dtype_ok(in[i].dtype))
			return ge_err(err, GE_EINVAL,
				      "input %d: dtype %s is not supported", i,
				      ge_dtype_name(in[i].dtype)
					      ? ge_dtype_name(in[i].dtype)
					      : "?");
	for (int i = 0; i < nout; i++)
		memset(&out[i], 0, sizeof out[i]);
	int rc = fn(&k);
	/* a kernel fills every output the op declares, or fails */
	for (int i = 0; rc == GE_OK && i < nout; i++)
		if (!out[i].d && !out[i].i)
			rc = ge_err(err, GE_EINVAL, "%s makes %d outputs, not "
				    "the %d it declares", k.type, i, nout);
	if (rc != GE_OK) {
		for (int i = 0; i < nout; i++)
			ge_value_free(&out[i]);
		return rc;
	}
	b->live += k.out_bytes;
	return GE_OK;
}
