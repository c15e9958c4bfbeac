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
 *
 * And the fake quantization of quantization-aware training, float32 in
 * and out: FakeQuantWithMinMaxArgs (the range in attrs), ...Vars (in
 * scalar inputs) and ...VarsPerChannel (vectors along the last dim).
 * The range is first nudged so that 0 falls on the grid, in float32 as
 * TensorFlow computes it: with qmin = narrow_range ? 1 : 0 and qmax =
 * 2^num_bits - 1,
 *   scale = (max - min) / (qmax - qmin)
 *   zero  = qmin - min / scale, clamped to [qmin, qmax], rounded half
 *           away from zero
 *   lo = (qmin - zero) * scale, hi = (qmax - zero) * scale
 *   out = floor((clamp(x, lo, hi) - lo) / scale + 0.5) * scale + lo
 * (Args multiplies by 1 / scale, as TensorFlow's kernel does; a
 * per-channel vector input rounds with round() rather than floor(+0.5),
 * as its kernel does).
 *
 * QuantizeAndDequantizeV2, V3 (num_bits an input) and V4, float32: the
 * range is input_min and input_max when range_given, else the input's
 * own minimum and maximum (per slice along `axis` when it is not -1);
 * with qmin, qmax the signed or unsigned num_bits range (qmin + 1 with
 * narrow_range), the side of the range that allows the smaller scale
 * keeps its end and the other is moved to fit:
 *   scale = min(qmin / min, qmax / max), each side only when its
 *           product is positive, else FLT_MAX
 *   out = round(x * scale) / scale, x clamped to the moved range when
 *         range_given; round half to even, or half up (round_mode)
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
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

/* ---------------------------------------------------------------- fake */

struct nudged {
	float lo, hi, scale;
};

static struct nudged nudge(float mn, float mx, int qmin, int qmax)
{
	struct nudged r;
	const float fqmin = (float)qmin, fqmax = (float)qmax;
	r.scale = (mx - mn) / (fqmax - fqmin);
	const float zfrom = fqmin - mn / r.scale;
	float zero;
	if (zfrom < fqmin)
		zero = fqmin;
	else if (zfrom > fqmax)
		zero = fqmax;
	else
		zero = roundf(zfrom);
	r.lo = (fqmin - zero) * r.scale;
	r.hi = (fqmax - zero) * r.scale;
	return r;
}

/* How the grid point of a value is found (see the top of the file). */
enum { FQ_DIV, FQ_MUL_INV, FQ_ROUND };

static float fake_one(float x, struct nudged n, int how)
{
	float c = x < n.hi ? x : n.hi;
	c = c > n.lo ? c : n.lo;
	if (x != x)
		c = x;
	const float shifted = c - n.lo;
	float q;
	if (how == FQ_MUL_INV)
		q = floorf(shifted * (1.0f / n.scale) + 0.5f);
	else if (how == FQ_ROUND)
		q = roundf(shifted / n.scale);
	else
		q = floorf(shifted / n.scale + 0.5f);
	return q * n.scale + n.lo;
}

/* qmin, qmax of the op's num_bits and narrow_range. */
static int fake_grid(ge_kctx *k, int *qmin, int *qmax)
{
	int64_t bits = ge_k_attr_int(k, "num_bits", 8);
	if (bits < 2 || bits > 16)
		return ge_k_fail(k, "num_bits is %lld, not between 2 and 16",
				 (long long)bits);
	*qmin = ge_k_attr_bool(k, "narrow_range", 0) ? 1 : 0;
	*qmax = (1 << bits) - 1;
	return GE_OK;
}

static ge_xt *fake_out(ge_kctx *k)
{
	const ge_xt *x = k->in[0];
	if (x->dtype != DT_FLOAT) {
		ge_k_fail(k, "input is %s, not float32", kdt(x->dtype));
		return NULL;
	}
	if (ge_k_work(k, (uint64_t)x->n))
		return NULL;
	return ge_k_out(k, 0, DT_FLOAT, x->rank, x->dims);
}

static int k_fake_quant_args(ge_kctx *k)
{
	int qmin, qmax;
	if (ge_k_need(k, 1) || fake_grid(k, &qmin, &qmax))
		return GE_EINVAL;
	float mn = (float)ge_k_attr_float(k, "min", -6),
	      mx = (float)ge_k_attr_float(k, "max", 6);
	if (!(mn < mx))
		return ge_k_fail(k, "min %g must be smaller than max %g",
				 (double)mn, (double)mx);
	ge_xt *o = fake_out(k);
	if (!o)
		return GE_EINVAL;
	struct nudged n = nudge(mn, mx, qmin, qmax);
	const float *x = k->in[0]->data;
	float *y = o->data;
	for (int64_t i = 0; i < o->n; i++)
		y[i] = fake_one(x[i], n, FQ_MUL_INV);
	return GE_OK;
}

/* min and max: float32 of n elements each (n 1: scalars). */
static int fake_ranges(ge_kctx *k, int64_t n)
{
	for (int i = 1; i <= 2; i++) {
		const ge_xt *t = k->in[i];
		if (t->dtype != DT_FLOAT || t->n != n ||
		    (n > 1 && t->rank != 1))
			return ge_k_fail(k, "input %d (%s) must be float32 with "
					 "%lld element%s, is %s with %lld", i,
					 i == 1 ? "min" : "max", (long long)n,
					 n == 1 ? "" : "s", kdt(t->dtype),
					 (long long)t->n);
	}
	return GE_OK;
}

static int k_fake_quant_vars(ge_kctx *k)
{
	int qmin, qmax;
	if (ge_k_need(k, 3) || fake_grid(k, &qmin, &qmax) ||
	    fake_ranges(k, 1))
		return GE_EINVAL;
	ge_xt *o = fake_out(k);
	if (!o)
		return GE_EINVAL;
	struct nudged n = nudge(*(const float *)k->in[1]->data,
				*(const float *)k->in[2]->data, qmin, qmax);
	const float *x = k->in[0]->data;
	float *y = o->data;
	for (int64_t i = 0; i < o->n; i++)
		y[i] = fake_one(x[i], n, FQ_DIV);
	return GE_OK;
}

static int k_fake_quant_per_channel(ge_kctx *k)
{
	int qmin, qmax;
	if (ge_k_need(k, 3) || fake_grid(k, &qmin, &qmax))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->rank < 1)
		return ge_k_fail(k, "the input is a scalar: its last dim holds "
				 "the channels");
	int64_t d = x->dims[x->rank - 1];
	if (fake_ranges(k, d))
		return GE_EINVAL;
	ge_xt *o = fake_out(k);
	if (!o)
		return GE_EINVAL;
	const float *mn = k->in[1]->data, *mx = k->in[2]->data;
	const float *xv = x->data;
	float *y = o->data;
	int how = x->rank == 1 ? FQ_ROUND : FQ_DIV;
	for (int64_t c = 0; c < d; c++) {
		struct nudged n = nudge(mn[c], mx[c], qmin, qmax);
		for (int64_t i = c; i < o->n; i += d)
			y[i] = fake_one(xv[i], n, how);
	}
	return GE_OK;
}

/* ---------------------------------------------------------------- qdq */

/* The scale and the range of one slice (ComputeQuantizationRange). */
static void qdq_range(int sig, int bits, int narrow, float *mn, float *mx,
		      float *scale, float *inv)
{
	const int64_t qmin = sig ? (narrow ? -(INT64_C(1) << (bits - 1)) + 1
					   : -(INT64_C(1) << (bits - 1)))
				 : 0;
	const int64_t qmax = sig ? (INT64_C(1) << (bits - 1)) - 1
				 : (INT64_C(1) << bits) - 1;
	const float from_min = ((float)qmin * *mn > 0) ? (float)qmin / *mn
							: FLT_MAX;
	const float from_max = ((float)qmax * *mx > 0) ? (float)qmax / *mx
							: FLT_MAX;
	if (from_min < from_max) {
		*scale = from_min;
		*inv = *mn / (float)qmin;
		*mx = (float)qmax * *inv;
	} else {
		*scale = from_max;
		*inv = *mx / (float)qmax;
		*mn = (float)qmin * *inv;
	}
}

static int k_qdq(ge_kctx *k)
{
	int v3 = !strcmp(k->type, "QuantizeAndDequantizeV3");
	if (ge_k_need(k, v3 ? 4 : 3))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->dtype != DT_FLOAT)
		return ge_k_fail(k, "input is %s; only float32 is supported",
				 kdt(x->dtype));
	int sig = ge_k_attr_bool(k, "signed_input", 1);
	int narrow = ge_k_attr_bool(k, "narrow_range", 0);
	int given = ge_k_attr_bool(k, "range_given", v3);
	int half_up = ge_k_attr_str_is(k, "round_mode", "HALF_UP", 0);
	int64_t bits = ge_k_attr_int(k, "num_bits", 8);
	if (v3) {
		if (k->in[3]->n != 1 || k->in[3]->rank != 0)
			return ge_k_fail(k, "num_bits must be a scalar");
		bits = ge_xt_get_int64(k->in[3], 0);
	}
	if (bits < 1 || bits > (sig ? 61 : 62))
		return ge_k_fail(k, "num_bits is %lld, not in [1, %d]",
				 (long long)bits, sig ? 61 : 62);
	int64_t axis = ge_k_attr_int(k, "axis", -1);
	if (axis < -1 || axis >= x->rank)
		return ge_k_fail(k, "axis %lld is out of range for rank %d",
				 (long long)axis, x->rank);
	int64_t ns = axis < 0 ? 1 : x->dims[axis], post = 1;
	for (int d = (int)axis + 1; axis >= 0 && d < x->rank; d++)
		post = ge_ck_mul_sat(post, x->dims[d]);
	for (int i = 1; i <= 2; i++) {
		const ge_xt *t = k->in[i];
		if (t->dtype != DT_FLOAT ||
		    (given && t->n != ns) || (axis >= 0 && given && t->rank != 1))
			return ge_k_fail(k, "input %d must be float32 with %lld "
					 "element%s", i, (long long)ns,
					 ns == 1 ? "" : "s");
	}
	if (ge_k_work(k, (uint64_t)x->n * 2))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_FLOAT, x->rank, x->dims);
	if (!o)
		return GE_EINVAL;
	const float *xv = x->data;
	float *y = o->data;
	float *lo = ge_xcalloc((size_t)(ns ? ns : 1), 2 * sizeof *lo);
	float *hi = lo + (ns ? ns : 1);
	for (int64_t c = 0; c < ns; c++) {
		if (given) {
			lo[c] = ((const float *)k->in[1]->data)[c];
			hi[c] = ((const float *)k->in[2]->data)[c];
		} else {
			lo[c] = FLT_MAX;
			hi[c] = -FLT_MAX;
		}
	}
	for (int64_t i = 0; !given && i < x->n; i++) {
		int64_t c = axis < 0 ? 0 : (i / post) % ns;
		lo[c] = fminf(lo[c], xv[i]);
		hi[c] = fmaxf(hi[c], xv[i]);
	}
	int rc = GE_OK;
	for (int64_t c = 0; c < ns && !rc; c++)
		if (given && lo[c] > hi[c])
			rc = ge_k_fail(k, "the range [%g, %g] is empty",
				       (double)lo[c], (double)hi[c]);
	float *sc = ge_xcalloc((size_t)(ns ? ns : 1), 2 * sizeof *sc);
	for (int64_t c = 0; c < ns && !rc; c++)
		qdq_range(sig, (int)bits, narrow, &lo[c], &hi[c], &sc[2 * c],
			  &sc[2 * c + 1]);
	for (int64_t i = 0; i < x->n && !rc; i++) {
		int64_t c = axis < 0 ? 0 : (i / post) % ns;
		float v = xv[i];
		if (given)
			v = fmaxf(fminf(v, hi[c]), lo[c]);
		v *= sc[2 * c];
		v = half_up ? floorf(v + 0.5f) : rintf(v);
		y[i] = v * sc[2 * c + 1];
	}
	free(sc);
	free(lo);
	return rc;
}

const ge_kdef ge_kernels_quant[] = {
	{"QuantizeAndDequantizeV2", k_qdq, 0},
	{"QuantizeAndDequantizeV3", k_qdq, 0},
	{"QuantizeAndDequantizeV4", k_qdq, 0},
	{"Dequantize", k_dequantize, 0},
	{"FakeQuantWithMinMaxArgs", k_fake_quant_args, 0},
	{"FakeQuantWithMinMaxVars", k_fake_quant_vars, 0},
	{"FakeQuantWithMinMaxVarsPerChannel", k_fake_quant_per_channel, 0},
	{NULL, NULL, 0},
};
