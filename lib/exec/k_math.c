/*
 * exec/k_math.c: elementwise kernels of one input (Abs, Exp, Relu, ...,
 * IsNan, LogicalNot) and Cast.
 *
 * float32 in float32 (the C library's float functions; Tanh as Eigen's
 * rational approximation, which TensorFlow uses), float64 in
 * float64, half and bfloat16 through float32.  The integer kernels
 * TensorFlow has (Abs, Neg, Sign, Square, Relu, Relu6, Round, Floor and
 * Ceil as identities are not among them) wrap at their width.  Relu and
 * Relu6 keep NaN, as TensorFlow's max and min do.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "exec/kernel_impl.h"

enum {
	U_ABS, U_NEG, U_SQRT, U_RSQRT, U_EXP, U_EXPM1, U_LOG, U_LOG1P, U_TANH,
	U_SIGMOID, U_RELU, U_RELU6, U_ELU, U_SELU, U_LEAKY, U_SOFTPLUS,
	U_SOFTSIGN, U_SQUARE, U_RECIP, U_FLOOR, U_CEIL, U_ROUND, U_RINT,
	U_SIGN, U_SIN, U_COS, U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH,
	U_ASINH, U_ACOSH, U_ATANH, U_ERF, U_ERFC, U_ISNAN, U_ISINF,
	U_ISFINITE, U_NOT,
};

static const struct uop {
	const char *name;
	int op;
	int ints; /* defined for integers too */
} uops[] = {
	{"Abs", U_ABS, 1}, {"Neg", U_NEG, 1}, {"Sqrt", U_SQRT, 0},
	{"Rsqrt", U_RSQRT, 0}, {"Exp", U_EXP, 0}, {"Expm1", U_EXPM1, 0},
	{"Log", U_LOG, 0}, {"Log1p", U_LOG1P, 0}, {"Tanh", U_TANH, 0},
	{"Sigmoid", U_SIGMOID, 0}, {"Relu", U_RELU, 1}, {"Relu6", U_RELU6, 1},
	{"Elu", U_ELU, 0}, {"Selu", U_SELU, 0}, {"LeakyRelu", U_LEAKY, 0},
	{"Softplus", U_SOFTPLUS, 0}, {"Softsign", U_SOFTSIGN, 0},
	{"Square", U_SQUARE, 1}, {"Reciprocal", U_RECIP, 0},
	{"Inv", U_RECIP, 0}, {"Floor", U_FLOOR, 0}, {"Ceil", U_CEIL, 0},
	{"Round", U_ROUND, 1}, {"Rint", U_RINT, 0}, {"Sign", U_SIGN, 1},
	{"Sin", U_SIN, 0}, {"Cos", U_COS, 0}, {"Tan", U_TAN, 0},
	{"Asin", U_ASIN, 0}, {"Acos", U_ACOS, 0}, {"Atan", U_ATAN, 0},
	{"Sinh", U_SINH, 0}, {"Cosh", U_COSH, 0}, {"Asinh", U_ASINH, 0},
	{"Acosh", U_ACOSH, 0}, {"Atanh", U_ATANH, 0}, {"Erf", U_ERF, 0},
	{"Erfc", U_ERFC, 0}, {"IsNan", U_ISNAN, 0}, {"IsInf", U_ISINF, 0},
	{"IsFinite", U_ISFINITE, 0}, {"LogicalNot", U_NOT, 0},
	{NULL, 0, 0},
};

#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_ALPHA 1.6732632423543772848170429916717

/* Softplus as TensorFlow computes it: x past a threshold of the dtype's
 * epsilon, exp(x) below its negative, log1p(exp(x)) between. */
static float softplusf(float x)
{
	const float th = logf(1.1920929e-07f) + 2.0f;
	if (x > -th)
		return x;
	if (x < th)
		return expf(x);
	return log1pf(expf(x));
}
static double softplus(double x)
{
	const double th = log(2.220446049250313e-16) + 2.0;
	if (x > -th)
		return x;
	if (x < th)
		return exp(x);
	return log1p(exp(x));
}

/* tanh of a float32 as TensorFlow's CPU kernel computes it: Eigen's
 * rational approximation (odd degree-13 numerator over even degree-6
 * denominator) on x clamped to +-7.90531110763549805, x itself below
 * 0.0004.  Within a few ulp of tanh, and far faster than tanhf. */
static float tanh_tf(float x)
{
	if (fabsf(x) < 0.0004f)
		return x;
	if (isnan(x))
		return x;
	float c = x > 7.90531110763549805f ? 7.90531110763549805f
		: x < -7.90531110763549805f ? -7.90531110763549805f : x;
	float x2 = c * c;
	float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
	p = x2 * p + -8.60467152213735e-11f;
	p = x2 * p + 5.12229709037114e-08f;
	p = x2 * p + 1.48572235717979e-05f;
	p = x2 * p + 6.37261928875436e-04f;
	p = x2 * p + 4.89352455891786e-03f;
	p = c * p;
	float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
	q = x2 * q + 2.26843463243900e-03f;
	q = x2 * q + 4.89352518554385e-03f;
	return p / q;
}

#define UROW(NAME, T, EXPR) \
	static void NAME(T *restrict o, const T *restrict in, int64_t n, \
			 T alpha) \
	{ \
		(void)alpha; \
		for (int64_t i = 0; i < n; i++) { \
			T x = in[i]; \
			o[i] = (EXPR); \
		} \
	}

#define UOPS(S, T, F) \
	UROW(S##_abs, T, F(fabs)(x)) \
	UROW(S##_neg, T, -x) \
	UROW(S##_sqrt, T, F(sqrt)(x)) \
	UROW(S##_rsqrt, T, 1 / F(sqrt)(x)) \
	UROW(S##_exp, T, F(exp)(x)) \
	UROW(S##_expm1, T, F(expm1)(x)) \
	UROW(S##_log, T, F(log)(x)) \
	UROW(S##_log1p, T, F(log1p)(x)) \
	UROW(S##_tanh, T, F(tanh)(x)) \
	UROW(S##_sigmoid, T, 1 / (1 + F(exp)(-x))) \
	UROW(S##_relu, T, x < 0 ? 0 : x) \
	UROW(S##_relu6, T, x < 0 ? 0 : x > 6 ? 6 : x) \
	UROW(S##_elu, T, x < 0 ? F(expm1)(x) : x) \
	UROW(S##_selu, T, x < 0 ? (T)(SELU_SCALE * SELU_ALPHA) * F(expm1)(x) \
				: (T)SELU_SCALE * x) \
	UROW(S##_leaky, T, x > 0 ? x : x * alpha) \
	UROW(S##_softsign, T, x / (1 + F(fabs)(x))) \
	UROW(S##_square, T, x * x) \
	UROW(S##_recip, T, 1 / x) \
	UROW(S##_floor, T, F(floor)(x)) \
	UROW(S##_ceil, T, F(ceil)(x)) \
	UROW(S##_rint, T, F(rint)(x)) \
	UROW(S##_sign, T, x > 0 ? 1 : x < 0 ? -1 : x) \
	UROW(S##_sin, T, F(sin)(x)) \
	UROW(S##_cos, T, F(cos)(x)) \
	UROW(S##_tan, T, F(tan)(x)) \
	UROW(S##_asin, T, F(asin)(x)) \
	UROW(S##_acos, T, F(acos)(x)) \
	UROW(S##_atan, T, F(atan)(x)) \
	UROW(S##_sinh, T, F(sinh)(x)) \
	UROW(S##_cosh, T, F(cosh)(x)) \
	UROW(S##_asinh, T, F(asinh)(x)) \
	UROW(S##_acosh, T, F(acosh)(x)) \
	UROW(S##_atanh, T, F(atanh)(x)) \
	UROW(S##_erf, T, F(erf)(x)) \
	UROW(S##_erfc, T, F(erfc)(x))

#define FN32(fn) fn##f
#define FN64(fn) fn
UOPS(f32, float, FN32)
UOPS(f64, double, FN64)
UROW(f32_tanh_tf, float, tanh_tf(x))
UROW(f32_softplus, float, softplusf(x))
UROW(f64_softplus, double, softplus(x))

typedef void (*urow32)(float *, const float *, int64_t, float);
typedef void (*urow64)(double *, const double *, int64_t, double);

#define UTABLE(S) { \
	[U_ABS] = (void *)S##_abs, [U_NEG] = (void *)S##_neg, \
	[U_SQRT] = (void *)S##_sqrt, [U_RSQRT] = (void *)S##_rsqrt, \
	[U_EXP] = (void *)S##_exp, [U_EXPM1] = (void *)S##_expm1, \
	[U_LOG] = (void *)S##_log, [U_LOG1P] = (void *)S##_log1p, \
	[U_TANH] = (void *)S##_tanh, [U_SIGMOID] = (void *)S##_sigmoid, \
	[U_RELU] = (void *)S##_relu, [U_RELU6] = (void *)S##_relu6, \
	[U_ELU] = (void *)S##_elu, [U_SELU] = (void *)S##_selu, \
	[U_LEAKY] = (void *)S##_leaky, [U_SOFTPLUS] = (void *)S##_softplus, \
	[U_SOFTSIGN] = (void *)S##_softsign, [U_SQUARE] = (void *)S##_square, \
	[U_RECIP] = (void *)S##_recip, [U_FLOOR] = (void *)S##_floor, \
	[U_CEIL] = (void *)S##_ceil, [U_ROUND] = (void *)S##_rint, \
	[U_RINT] = (void *)S##_rint, [U_SIGN] = (void *)S##_sign, \
	[U_SIN] = (void *)S##_sin, [U_COS] = (void *)S##_cos, \
	[U_TAN] = (void *)S##_tan, [U_ASIN] = (void *)S##_asin, \
	[U_ACOS] = (void *)S##_acos, [U_ATAN] = (void *)S##_atan, \
	[U_SINH] = (void *)S##_sinh, [U_COSH] = (void *)S##_cosh, \
	[U_ASINH] = (void *)S##_asinh, [U_ACOSH] = (void *)S##_acosh, \
	[U_ATANH] = (void *)S##_atanh, [U_ERF] = (void *)S##_erf, \
	[U_ERFC] = (void *)S##_erfc }

static void *const f32_u[U_NOT + 1] = UTABLE(f32);
/* float32 Tanh as TensorFlow computes it (tanh_tf) */
#define F32_TANH ((void *)f32_tanh_tf)
static void *const f64_u[U_NOT + 1] = UTABLE(f64);

static int64_t iunary(int op, int64_t v, int uns)
{
	uint64_t u = (uint64_t)v;
	if (uns) /* Relu, Relu6, Square and Round of unsigned kinds */
		return op == U_RELU6 ? (int64_t)(u > 6 ? 6 : u)
		       : op == U_SQUARE ? (int64_t)(u * u) : v;
	switch (op) {
	case U_ABS: return v < 0 ? (int64_t)(0 - u) : v;
	case U_NEG: return (int64_t)(0 - u);
	case U_SQUARE: return (int64_t)(u * u);
	case U_SIGN: return v > 0 ? 1 : v < 0 ? -1 : 0;
	case U_RELU: return v > 0 ? v : 0;
	case U_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
	default: return v; /* Round */
	}
}

/* IsNan, IsInf, IsFinite and LogicalNot: bool results. */
static int unary_bool(ge_kctx *k, int op, ge_xt *x)
{
	if (op == U_NOT ? x->dtype != DT_BOOL : !dt_is_float(x->dtype))
		return ge_k_fail(k, "input 0 has dtype %s, which this op does "
				 "not take", kdt(x->dtype));
	ge_xt *o = ge_k_out(k, 0, DT_BOOL, x->rank, x->dims);
	if (!o)
		return GE_EINVAL;
	uint8_t *d = o->data;
	for (int64_t i = 0; i < x->n; i++) {
		if (op == U_NOT) {
			d[i] = !((const uint8_t *)x->data)[i];
			continue;
		}
		double v = x->dtype == DT_DOUBLE ? ((const double *)x->data)[i]
						 : kget_f(x, i);
		d[i] = (uint8_t)(op == U_ISNAN ? isnan(v)
				 : op == U_ISINF ? isinf(v) : isfinite(v));
	}
	return GE_OK;
}

static int k_unary(ge_kctx *k)
{
	const struct uop *u = uops;
	while (u->name && strcmp(u->name, k->type))
		u++;
	if (!u->name)
		return ge_k_fail(k, "is not a unary op");
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	if (u->op >= U_ISNAN)
		return unary_bool(k, u->op, x);
	int dt = x->dtype;
	if (dt_is_int(dt) && u->ints) {
		if (dt_is_unsigned(dt) && (u->op == U_NEG || u->op == U_ABS ||
					   u->op == U_SIGN))
			return ge_k_fail(k, "input 0 has dtype %s, which this op "
					 "does not take", kdt(dt));
		ge_xt *o = ge_k_out(k, 0, dt, x->rank, x->dims);
		if (!o)
			return GE_EINVAL;
		for (int64_t i = 0; i < x->n; i++)
			kst_i(o, i, iunary(u->op, kld_i(x, i),
					   dt_is_unsigned(dt)));
		return GE_OK;
	}
	if (!dt_is_float(dt))
		return ge_k_fail(k, "input 0 has dtype %s, which this op does "
				 "not take", kdt(dt));
	double alpha = ge_k_attr_float(k, "alpha", 0.2);
	ge_xt *w = ge_kwiden(k, x);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, x->rank, x->dims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	if (dt == DT_DOUBLE)
		((urow64)f64_u[u->op])(o->data, w->data, x->n, alpha);
	else
		((urow32)(u->op == U_TANH ? F32_TANH : f32_u[u->op]))(
			o->data, w->data, x->n, (float)alpha);
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- Cast */

/* A float to an integer of dtype dt as TensorFlow's CPU kernel does on
 * x86-64: truncation toward zero; NaN and values out of the 32- or 64-bit
 * range give the most negative value of that conversion, narrower types
 * take the low bits of the 32-bit conversion. */
static int64_t f2i(double v, int dt)
{
	if (dt == DT_INT64 || dt == DT_UINT32 || dt == DT_UINT64) {
		if (dt == DT_UINT64 && v >= 9223372036854775808.0 &&
		    v < 18446744073709551616.0)
			return (int64_t)((uint64_t)(v - 9223372036854775808.0) +
					 ((uint64_t)1 << 63));
		if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
			return INT64_MIN;
		return (int64_t)v;
	}
	if (!(v > -2147483649.0 && v < 2147483648.0))
		return INT32_MIN;
	return (int64_t)v;
}

static void cast_elem(ge_xt *o, int64_t i, const ge_xt *x)
{
	int sd = x->dtype, dd = o->dtype;
	if (dd == DT_BOOL) {
		((uint8_t *)o->data)[i] = dt_is_float(sd)
			? (sd == DT_DOUBLE ? ((const double *)x->data)[i] != 0
					   : kget_f(x, i) != 0)
			: kld_i(x, i) != 0;
		return;
	}
	if (dt_is_float(dd)) {
		double v;
		if (sd == DT_DOUBLE)
			v = ((const double *)x->data)[i];
		else if (dt_is_float(sd))
			v = kget_f(x, i);
		else if (sd == DT_UINT64)
			v = (double)(uint64_t)kld_i(x, i);
		else
			v = (double)kld_i(x, i);
		switch (dd) {
		case DT_FLOAT:
			/* int64 to float32 rounds once, from the integer */
			((float *)o->data)[i] =
				sd == DT_INT64 ? (float)kld_i(x, i)
				: sd == DT_UINT64 ? (float)(uint64_t)kld_i(x, i)
				: (float)v;
			break;
		case DT_DOUBLE: ((double *)o->data)[i] = v; break;
		case DT_HALF:
			((uint16_t *)o->data)[i] = sd == DT_DOUBLE
				? ge_half_from_double(v)
				: ge_half_from_double((float)v);
			break;
		default:
			((uint16_t *)o->data)[i] = ge_bf16_from_double(v);
			break;
		}
		return;
	}
	if (dt_is_float(sd)) {
		double v = sd == DT_DOUBLE ? ((const double *)x->data)[i]
					   : kget_f(x, i);
		kst_i(o, i, f2i(v, dd));
		return;
	}
	kst_i(o, i, kld_i(x, i));
}

static int k_cast(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	int dt = ge_k_attr_type(k, "DstT", -1);
	uint64_t ok = KDT_NUMBERS | KDT(DT_BOOL);
	if (dt < 0)
		return ge_k_fail(k, "has no DstT attr");
	if (dt >= 64 || !(ok & KDT(dt)) || !(ok & KDT(x->dtype))) {
		if (dt == x->dtype) { /* strings, complex: a copy */
			ge_k_forward(k, 0, 0);
			return GE_OK;
		}
		return ge_k_fail(k, "cannot cast %s to %s", kdt(x->dtype),
				 kdt(dt));
	}
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	if (dt == x->dtype) {
		ge_k_forward(k, 0, 0);
		return GE_OK;
	}
	ge_xt *o = ge_k_out(k, 0, dt, x->rank, x->dims);
	if (!o)
		return GE_EINVAL;
	if (x->dtype == DT_FLOAT && dt == DT_INT32) {
		const float *s = x->data;
		int32_t *d = o->data;
		for (int64_t i = 0; i < x->n; i++)
			d[i] = (int32_t)f2i(s[i], DT_INT32);
		return GE_OK;
	}
	if (dt_is_int(x->dtype) && x->dtype != DT_UINT64 && dt == DT_FLOAT) {
		float *d = o->data;
		for (int64_t i = 0; i < x->n; i++)
			d[i] = (float)kld_i(x, i);
		return GE_OK;
	}
	for (int64_t i = 0; i < x->n; i++)
		cast_elem(o, i, x);
	return GE_OK;
}

const ge_kdef ge_kernels_math[] = {
	{"Abs", k_unary, 0}, {"Neg", k_unary, 0}, {"Sqrt", k_unary, 0},
	{"Rsqrt", k_unary, 0}, {"Exp", k_unary, 0}, {"Expm1", k_unary, 0},
	{"Log", k_unary, 0}, {"Log1p", k_unary, 0}, {"Tanh", k_unary, 0},
	{"Sigmoid", k_unary, 0}, {"Relu", k_unary, 0}, {"Relu6", k_unary, 0},
	{"Elu", k_unary, 0}, {"Selu", k_unary, 0}, {"LeakyRelu", k_unary, 0},
	{"Softplus", k_unary, 0}, {"Softsign", k_unary, 0},
	{"Square", k_unary, 0}, {"Reciprocal", k_unary, 0},
	{"Inv", k_unary, 0}, {"Floor", k_unary, 0}, {"Ceil", k_unary, 0},
	{"Round", k_unary, 0}, {"Rint", k_unary, 0}, {"Sign", k_unary, 0},
	{"Sin", k_unary, 0}, {"Cos", k_unary, 0}, {"Tan", k_unary, 0},
	{"Asin", k_unary, 0}, {"Acos", k_unary, 0}, {"Atan", k_unary, 0},
	{"Sinh", k_unary, 0}, {"Cosh", k_unary, 0}, {"Asinh", k_unary, 0},
	{"Acosh", k_unary, 0}, {"Atanh", k_unary, 0}, {"Erf", k_unary, 0},
	{"Erfc", k_unary, 0}, {"IsNan", k_unary, 0}, {"IsInf", k_unary, 0},
	{"IsFinite", k_unary, 0}, {"LogicalNot", k_unary, 0},
	{"Cast", k_cast, GE_K_FORWARD},
	{NULL, NULL, 0},
};
