/*
 * exec/k_quant.c: Dequantize, what quantize_weights and transform_graph's
 * quantized graphs read their weights through (quint8 and its kin back
 * to float32), per tensor, in the modes MIN_COMBINED, MIN_FIRST and
 * SCALED, with TensorFlow's formulas:
 *   MIN_COMBINED  out = (q + half) * (max - min) / (highest - lowest) + min
 *                 (half: (highest - lowest + 1) / 2 for signed types)
 *   MIN_FIRST     out = min + (q - lowest) * (max - min) / (2^bits - 1)
 *   SCALED        out = q * s, s = max / highest, or for signed types
 *                 the larger of min / lowest' and max / highest (lowest'
 *                 = lowest + 1 with narrow_range)
 */
#include <math.h>
#include <string.h>

#include "exec/kernel_impl.h"

enum { QINT8 = 11, QUINT8 = 12, QINT32 = 13, QINT16 = 15, QUINT16 = 16 };

static int qrange(int dt, double *lo, double *hi, int *bits)
{
	switch (dt) {
	case QINT8: *lo = -128; *hi = 127; *bits = 8; return 0;
	case QUINT8: *lo = 0; *hi = 255; *bits = 8; return 0;
	case QINT16: *lo = -32768; *hi = 32767; *bits = 16; return 0;
	case QUINT16: *lo = 0; *hi = 65535; *bits = 16; return 0;
	case QINT32:
		*lo = -2147483648.0; *hi = 2147483647.0; *bits = 32;
		return 0;
	default: return -1;
	}
}

static int scalar_f(ge_kctx *k, int i, double *out)
{
	const ge_xt *t = k->in[i];
	if (t->n != 1 || t->dtype != DT_FLOAT)
		return ge_k_fail(k, "input %d must be one float32 (per-axis "
				 "ranges are not read), is %s with %lld "
				 "elements", i, kdt(t->dtype),
				 (long long)t->n);
	*out = ((const float *)t->data)[0];
	return GE_OK;
}

static int k_dequantize(ge_kctx *k)
{
	if (ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *q = k->in[0];
	double lo, hi, mn, mx;
	int bits;
	if (qrange(q->dtype, &lo, &hi, &bits))
		return ge_k_fail(k, "input is %s, not a quantized type",
				 kdt(q->dtype));
	if (scalar_f(k, 1, &mn) || scalar_f(k, 2, &mx))
		return GE_EINVAL;
	if (ge_k_attr_int(k, "axis", -1) != -1)
		return ge_k_fail(k, "per-axis dequantization is not supported");
	if (ge_k_attr_type(k, "dtype", DT_FLOAT) != DT_FLOAT)
		return ge_k_fail(k, "only float32 outputs are supported");
	int narrow = ge_k_attr_bool(k, "narrow_range", 0);
	double scale, offset = 0, add = 0;
	if (ge_k_attr_str_is(k, "mode", "MIN_FIRST", 0)) {
		double steps = ldexp(1.0, bits);
		scale = mn == mx ? 0 : (mx - mn) * (steps / (steps - 1)) / steps;
		offset = -lo;
		add = mn;
	} else if (ge_k_attr_str_is(k, "mode", "SCALED", 0)) {
		double low = lo + (narrow ? 1 : 0);
		scale = lo < 0 ? fmax(mn / low, mx / hi) : mx / hi;
	} else if (ge_k_attr_str_is(k, "mode", "MIN_COMBINED", 1)) {
		offset = lo < 0 ? (hi - lo + 1) / 2 : 0;
		scale = (mx - mn) / (hi - lo);
		add = mn;
	} else {
		return ge_k_fail(k, "unknown mode");
	}
	if (ge_k_work(k, (uint64_t)q->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_FLOAT, q->rank, q->dims);
	if (!o)
		return GE_EINVAL;
	float *y = o->data;
	for (int64_t i = 0; i < q->n; i++) {
		double v = (double)ge_xt_get_int64(q, i);
		y[i] = (float)((v + offset) * scale + add);
	}
	return GE_OK;
}

const ge_kdef ge_kernels_quant[] = {
	{"Dequantize", k_dequantize, 0},
	{NULL, NULL, 0},
};
