/*
 * eval_nn.c: MatMul, BatchMatMul, Conv2D, DepthwiseConv2dNative, the
 * inference form of FusedBatchNorm and BatchNormWithGlobalNormalization,
 * Softmax.  Sums run in double and round once to the dtype: results are
 * within float rounding of TensorFlow's.
 */
#include <math.h>
#include <string.h>

#include "base/ckarith.h"
#include "analyses/eval_impl.h"

static int k_matmul(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *a = &k->in[0], *b = &k->in[1];
	if (a->rank != 2 || b->rank != 2 || a->dtype != b->dtype ||
	    a->dtype == DT_BOOL)
		return ge_eval_k_fail(k, "MatMul needs two rank-2 inputs of one dtype");
	int ta = ge_eval_k_attr_bool(k, "transpose_a", 0);
	int tb = ge_eval_k_attr_bool(k, "transpose_b", 0);
	int64_t m = a->dims[ta ? 1 : 0], kk = a->dims[ta ? 0 : 1];
	int64_t k2 = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
	if (kk != k2)
		return ge_eval_k_fail(k, "inner dimensions differ (%lld and %lld)",
			      (long long)kk, (long long)k2);
	int64_t od[2] = {m, n}, work;
	if (ge_shape_count(2, od) < 0 || ge_ck_mul(m * n, kk, &work))
		return ge_eval_k_fail(k, "MatMul: result too large");
	if (ge_eval_k_work(k, (uint64_t)work))
		return GE_EINVAL;
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, a->dtype, 2, od))
		return GE_EINVAL;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			uint64_t si = 0;
			for (int64_t p = 0; p < kk; p++) {
				int64_t ia = ta ? p * m + i : i * kk + p;
				int64_t ib = tb ? j * kk + p : p * n + j;
				if (a->d)
					s += a->d[ia] * b->d[ib];
				else
					si += (uint64_t)a->i[ia] * (uint64_t)b->i[ib];
			}
			if (o->d)
				o->d[i * n + j] = s;
			else
				o->i[i * n + j] = (int64_t)si;
		}
	ge_value_normalize(o);
	return GE_OK;
}

/* Output size and the padding before, as TensorFlow's GetWindowedOutputSize
 * computes them. */
static int window(int64_t in, int64_t f, int64_t s, int64_t d, int same,
		  int64_t *out, int64_t *before)
{
	if (s <= 0 || d <= 0 || f <= 0 || f > (1 << 30) || d > (1 << 30) ||
	    s > (1 << 30) || in > ((int64_t)1 << 40))
		return -1;
	int64_t eff = (f - 1) * d + 1;
	if (same) {
		*out = (in + s - 1) / s;
		int64_t total = (*out - 1) * s + eff - in;
		*before = total > 0 ? total / 2 : 0;
	} else {
		if (in < eff)
			return -1;
		*out = (in - eff) / s + 1;
		*before = 0;
	}
	return 0;
}

static int k_conv(kctx *k)
{
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0], *f = &k->in[1];
	int depthwise = !strcmp(k->type, "DepthwiseConv2dNative");
	if (x->rank != 4 || f->rank != 4 || x->dtype != f->dtype || !x->d)
		return ge_eval_k_fail(k, "needs 4-D float input and filter");
	int nchw = ge_eval_k_attr_str_is(k, "data_format", "NCHW", 0);
	int same = ge_eval_k_attr_str_is(k, "padding", "SAME", 0);
	if (!same && !ge_eval_k_attr_str_is(k, "padding", "VALID", 0))
		return ge_eval_k_fail(k, "padding other than SAME or VALID");
	int64_t st[4] = {1, 1, 1, 1}, dl[4] = {1, 1, 1, 1};
	ge_eval_k_attr_ints(k, "strides", st, 4);
	ge_eval_k_attr_ints(k, "dilations", dl, 4);
	int hi = nchw ? 2 : 1, wi = nchw ? 3 : 2, ci = nchw ? 1 : 3;
	int64_t N = x->dims[0], H = x->dims[hi], W = x->dims[wi], C = x->dims[ci];
	int64_t FH = f->dims[0], FW = f->dims[1], FC = f->dims[2], M = f->dims[3];
	if (depthwise ? FC != C : (FC <= 0 || C % FC))
		return ge_eval_k_fail(k, "input depth %lld does not fit the filter's %lld",
			      (long long)C, (long long)FC);
	if (!depthwise && C != FC)
		return ge_eval_k_fail(k, "grouped convolution is not supported");
	int64_t OH, OW, ph, pw;
	if (window(H, FH, st[hi], dl[hi], same, &OH, &ph) ||
	    window(W, FW, st[wi], dl[wi], same, &OW, &pw))
		return ge_eval_k_fail(k, "the window does not fit the input");
	int64_t OC = depthwise ? C * M : M;
	int64_t od[4];
	od[0] = N;
	od[hi] = OH;
	od[wi] = OW;
	od[ci] = OC;
	/* multiply-adds: every output element sums a window of FH*FW taps
	 * over C channels (one, depthwise) */
	int64_t wd[4] = {ge_shape_count(4, od), FH, FW, depthwise ? 1 : C}, work;
	if (wd[0] < 0 || ge_ck_count(4, wd, INT64_MAX, &work))
		return ge_eval_k_fail(k, "%s: result too large", k->type);
	if (ge_eval_k_work(k, (uint64_t)work))
		return GE_EINVAL;
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, 4, od))
		return GE_EINVAL;
#define XI(n, h, w, c) (nchw ? (((n) * C + (c)) * H + (h)) * W + (w) \
			     : (((n) * H + (h)) * W + (w)) * C + (c))
#define OI(n, h, w, c) (nchw ? (((n) * OC + (c)) * OH + (h)) * OW + (w) \
			     : (((n) * OH + (h)) * OW + (w)) * OC + (c))
	for (int64_t n = 0; n < N; n++)
		for (int64_t oh = 0; oh < OH; oh++)
			for (int64_t ow = 0; ow < OW; ow++)
				for (int64_t oc = 0; oc < OC; oc++) {
					double s = 0;
					int64_t c0 = depthwise ? oc / M : 0;
					int64_t c1 = depthwise ? c0 + 1 : C;
					for (int64_t fh = 0; fh < FH; fh++) {
						int64_t ih = oh * st[hi] + fh * dl[hi] - ph;
						if (ih < 0 || ih >= H)
							continue;
						for (int64_t fw = 0; fw < FW; fw++) {
							int64_t iw = ow * st[wi] + fw * dl[wi] - pw;
							if (iw < 0 || iw >= W)
								continue;
							for (int64_t c = c0; c < c1; c++) {
								int64_t fi = depthwise
									? ((fh * FW + fw) * C + c) * M + oc % M
									: ((fh * FW + fw) * C + c) * M + oc;
								s += x->d[XI(n, ih, iw, c)] * f->d[fi];
							}
						}
					}
					o->d[OI(n, oh, ow, oc)] = s;
				}
#undef XI
#undef OI
	ge_value_normalize(o);
	return GE_OK;
}

/* y = (x - mean) * scale / sqrt(var + eps) + offset along the channels. */
static int k_batch_norm(kctx *k)
{
	int old = !strcmp(k->type, "BatchNormWithGlobalNormalization");
	if (ge_eval_k_need(k, 5))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	const ge_value *scale, *offset, *mean, *var;
	int after = 1;
	if (old) {
		mean = &k->in[1];
		var = &k->in[2];
		offset = &k->in[3];
		scale = &k->in[4];
		after = ge_eval_k_attr_bool(k, "scale_after_normalization", 1);
	} else {
		scale = &k->in[1];
		offset = &k->in[2];
		mean = &k->in[3];
		var = &k->in[4];
		if (ge_eval_k_attr_bool(k, "is_training", 1))
			return ge_eval_k_fail(k, "training batch norm is not folded");
	}
	double eps = ge_eval_k_attr_float(k, old ? "variance_epsilon" : "epsilon",
				 old ? 0 : 0.0001);
	int nchw = ge_eval_k_attr_str_is(k, "data_format", "NCHW", 0) ||
		   ge_eval_k_attr_str_is(k, "data_format", "NCDHW", 0);
	if (!x->d)
		return ge_eval_k_fail(k, "%s needs a float input", k->type);
	/* the channels' dim must exist for the data_format (dim 1 for
	 * NCHW and NCDHW, the last for NHWC) and not be empty */
	if (x->rank < (nchw ? 3 : 1) || x->rank > 5)
		return ge_eval_k_fail(k, "%s: a %d-D input does not fit data_format %s",
			      k->type, x->rank, nchw ? "NCHW" : "NHWC");
	int ci = nchw ? 1 : x->rank - 1;
	int64_t C = x->dims[ci];
	if (C <= 0 && x->n > 0)
		return ge_eval_k_fail(k, "%s: no channels", k->type);
	if (scale->n != C || offset->n != C || mean->n != C || var->n != C)
		return ge_eval_k_fail(k, "parameters do not match %lld channels",
			      (long long)C);
	ge_value *o = &k->out[0];
	if (ge_eval_k_copy(k, o, x))
		return GE_EINVAL;
	int64_t inner = 1;
	for (int d = ci + 1; d < x->rank; d++)
		inner = ge_ck_mul_sat(inner, x->dims[d]);
	for (int64_t n = 0; n < x->n; n++) {
		int64_t c = (n / inner) % C;
		double sc = after ? ge_value_get(scale, c) : 1;
		o->d[n] = (x->d[n] - ge_value_get(mean, c)) * sc /
				  sqrt(ge_value_get(var, c) + eps) +
			  ge_value_get(offset, c);
	}
	ge_value_normalize(o);
	for (int j = 1; j < k->nout; j++) {
		const ge_value *src = j == 1 || j == 3 ? mean : var;
		if (ge_eval_k_copy(k, &k->out[j], src))
			return GE_EINVAL;
	}
	return GE_OK;
}

static int k_softmax(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (!x->d || x->rank < 1)
		return ge_eval_k_fail(k, "needs a float input");
	int logsm = !strcmp(k->type, "LogSoftmax");
	ge_value *o = &k->out[0];
	if (ge_eval_k_copy(k, o, x) || ge_eval_k_work(k, 3 * (uint64_t)x->n))
		return GE_EINVAL;
	int64_t len = x->dims[x->rank - 1];
	for (int64_t p = 0; len && p < x->n; p += len) {
		double mx = -INFINITY, s = 0;
		for (int64_t j = 0; j < len; j++)
			mx = x->d[p + j] > mx ? x->d[p + j] : mx;
		for (int64_t j = 0; j < len; j++)
			s += exp(x->d[p + j] - mx);
		for (int64_t j = 0; j < len; j++)
			o->d[p + j] = logsm ? x->d[p + j] - mx - log(s)
					    : exp(x->d[p + j] - mx) / s;
	}
	ge_value_normalize(o);
	return GE_OK;
}

/* Dequantize of quint8: MIN_FIRST with one range (TensorFlow's
 * QuantizedToFloat), or MIN_COMBINED with one range or one per slice
 * along `axis` (what quantize_weights writes per channel). */
static int k_dequantize(kctx *k)
{
	if (ge_eval_k_need(k, 3))
		return GE_EINVAL;
	const ge_value *q = &k->in[0];
	int first = ge_eval_k_attr_str_is(k, "mode", "MIN_FIRST", 0);
	int combined = !first && ge_eval_k_attr_str_is(k, "mode", "MIN_COMBINED", 1);
	int64_t axis = ge_eval_k_attr_int(k, "axis", -1);
	if (axis < -1 || axis >= q->rank)
		return ge_eval_k_fail(k, "axis out of range");
	int64_t ns = axis < 0 ? 1 : q->dims[axis], post = 1;
	/* saturates only for a value with no element, which no loop walks */
	for (int d = (int)axis + 1; axis >= 0 && d < q->rank; d++)
		post = ge_ck_mul_sat(post, q->dims[d]);
	if (q->dtype != DT_QUINT8 || k->in[1].n != ns || k->in[2].n != ns ||
	    !(first || combined) || (first && axis >= 0))
		return ge_eval_k_fail(k, "only quint8 MIN_FIRST, or MIN_COMBINED with "
			      "one range or one per slice, is supported");
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, DT_FLOAT, q->rank, q->dims))
		return GE_EINVAL;
	for (int64_t n = 0; n < q->n; n++) {
		int64_t c = axis < 0 ? 0 : (n / post) % ns;
		double mn = ge_value_get(&k->in[1], c);
		double mx = ge_value_get(&k->in[2], c);
		if (combined) {
			o->d[n] = mn + (double)q->i[n] * (mx - mn) / 255.0;
			continue;
		}
		double range = (mx - mn) * (256.0 / 255.0), step = range / 256.0;
		double base = mn == mx ? mn
				    : round(mn / (float)step) * (float)step;
		o->d[n] = mn == mx ? mn : base + (double)q->i[n] * step;
	}
	ge_value_normalize(o);
	return GE_OK;
}

const struct ge_kernel ge_nn_kernels[] = {
	{"Dequantize", k_dequantize},
	{"MatMul", k_matmul}, {"Conv2D", k_conv},
	{"DepthwiseConv2dNative", k_conv},
	{"FusedBatchNorm", k_batch_norm}, {"FusedBatchNormV2", k_batch_norm},
	{"FusedBatchNormV3", k_batch_norm},
	{"BatchNormWithGlobalNormalization", k_batch_norm},
	{"Softmax", k_softmax}, {"LogSoftmax", k_softmax},
	{NULL, NULL},
};
