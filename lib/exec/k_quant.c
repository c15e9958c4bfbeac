/*
 * exec/k_quant.c: Dequantize, what quantize_weights and transform_graph's
 * quantized graphs read their weights through (quint8 and its kin back
 * to float32), per tensor or per slice along `axis` (one range per
 * slice, MIN_COMBINED and SCALED only, as in TensorFlow), in the modes
 * MIN_COMBINED, MIN_FIRST and SCALED, with TensorFlow's formulas:
 *   MIN_COMBINED  out = (q + half) * (max - min) / (highest - lowest) + min
 *                 (half: (highest - lowest + 1) / 2 for signed types)
 *   MIN_FIRST     out = min' + (q - lowest) * (max - min) / (2^bits - 1),
 *                 min' = min rounded to a multiple of that step (the
 *                 step as a float), where FloatToQuantized put it
 *   SCALED        out = q * s, s = max / highest, or for signed types
 *                 the larger of min / lowest' and max / highest (lowest'
 *                 = lowest + 1 with narrow_range)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckarith.h"
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

/* The ranges: one float32 each, or with axis >= 0 one per slice along
 * it (TensorFlow's per-channel Dequantize). */
static int ranges(ge_kctx *k, int64_t axis, int64_t nslices)
{
	for (int i = 1; i <= 2; i++) {
		const ge_xt *t = k->in[i];
		int64_t want = axis < 0 ? 1 : nslices;
		if (t->dtype != DT_FLOAT || t->n != want ||
		    (axis >= 0 && t->rank != 1))
			return ge_k_fail(k, "input %d must be %s float32, is "
					 "%s with %lld elements", i,
					 axis < 0 ? "one" : "a vector of the "
					 "axis' size in", kdt(t->dtype),
					 (long long)t->n);
	}
	return GE_OK;
}

/* scale and offset of one slice: out = (q + offset) * scale + add */
static int slice_params(ge_kctx *k, int dt, double mn, double mx, int axis,
			double *scale, double *offset, double *add)
{
	double lo = 0, hi = 0;
	int bits = 8;
	qrange(dt, &lo, &hi, &bits);
	int narrow = ge_k_attr_bool(k, "narrow_range", 0);
	*offset = 0;
	*add = 0;
	if (ge_k_attr_str_is(k, "mode", "MIN_FIRST", 0)) {
		if (axis >= 0)
			return ge_k_fail(k, "MIN_FIRST has no per-axis "
					 "ranges (as in TensorFlow)");
		double steps = ldexp(1.0, bits);
		*scale = mn == mx ? 0 : (mx - mn) * (steps / (steps - 1)) / steps;
		*offset = -lo;
		/* the minimum on the grid of steps, as the quantizer put it
		 * (round(x * s) - round(min * s)); the step as a float */
		*add = *scale == 0 ? mn
				   : round(mn / (float)*scale) * (float)*scale;
	} else if (ge_k_attr_str_is(k, "mode", "SCALED", 0)) {
		double low = lo + (narrow ? 1 : 0);
		*scale = lo < 0 ? fmax(mn / low, mx / hi) : mx / hi;
	} else if (ge_k_attr_str_is(k, "mode", "MIN_COMBINED", 1)) {
		*offset = lo < 0 ? (hi - lo + 1) / 2 : 0;
		*scale = (mx - mn) / (hi - lo);
		*add = mn;
	} else {
		return ge_k_fail(k, "unknown mode");
	}
	return GE_OK;
}

static int k_dequantize(ge_kctx *k)
{
	if (ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *q = k->in[0];
	double lo, hi;
	int bits;
	if (qrange(q->dtype, &lo, &hi, &bits))
		return ge_k_fail(k, "input is %s, not a quantized type",
				 kdt(q->dtype));
	int64_t axis = ge_k_attr_int(k, "axis", -1);
	if (axis < -1 || axis >= q->rank)
		return ge_k_fail(k, "axis %lld is out of range for rank %d",
				 (long long)axis, q->rank);
	int64_t ns = axis < 0 ? 1 : q->dims[axis], post = 1;
	/* saturates only for a value with no element, which no loop walks */
	for (int d = (int)axis + 1; axis >= 0 && d < q->rank; d++)
		post = ge_ck_mul_sat(post, q->dims[d]);
	if (ranges(k, axis, ns))
		return GE_EINVAL;
	if (ge_k_attr_type(k, "dtype", DT_FLOAT) != DT_FLOAT)
		return ge_k_fail(k, "only float32 outputs are supported");
	if (ge_k_work(k, (uint64_t)q->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_FLOAT, q->rank, q->dims);
	if (!o)
		return GE_EINVAL;
	const float *mns = k->in[1]->data, *mxs = k->in[2]->data;
	double *sc = ge_xcalloc((size_t)(ns ? ns : 1), 3 * sizeof *sc);
	for (int64_t c = 0; c < ns; c++)
		if (slice_params(k, q->dtype, mns[c], mxs[c], (int)axis,
				 &sc[3 * c], &sc[3 * c + 1], &sc[3 * c + 2])) {
			free(sc);
			return GE_EINVAL;
		}
	float *y = o->data;
	for (int64_t i = 0; i < q->n; i++) {
		const double *p = &sc[3 * (axis < 0 ? 0 : (i / post) % ns)];
		double v = (double)ge_xt_get_int64(q, i);
		y[i] = (float)((v + p[1]) * p[0] + p[2]);
	}
	free(sc);
	return GE_OK;
}

const ge_kdef ge_kernels_quant[] = {
	{"Dequantize", k_dequantize, 0},
	{NULL, NULL, 0},
};
