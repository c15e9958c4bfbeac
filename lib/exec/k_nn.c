/* exec/k_nn.c: layouts, windows, scratch and fused epilogues of the
 * heavy kernels (exec/k_nn_impl.h). */
#include "exec/k_nn_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"

int ge_knn_in_f32(ge_kctx *k, int i, int rank, const char *what)
{
	const ge_xt *t;
	char buf[96];
	if (i >= k->nin)
		return ge_k_fail(k, "%s: input %d missing", what, i);
	t = k->in[i];
	if (t->dtype != DT_FLOAT)
		return ge_k_fail(k, "%s must be float32, not %s", what,
				 ge_xt_describe(t, buf, sizeof buf));
	if (rank >= 0 && t->rank != rank)
		return ge_k_fail(k, "%s must be %d-D, not %s", what, rank,
				 ge_xt_describe(t, buf, sizeof buf));
	return GE_OK;
}

uint64_t ge_knn_mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

/* ---------------------------------------------------------------- layout */

int ge_knn_layout_of(ge_kctx *k, const ge_xt *x, knn_layout *l)
{
	memset(l, 0, sizeof *l);
	if (ge_k_attr_str_is(k, "data_format", "NCHW", 0))
		l->nchw = 1;
	else if (!ge_k_attr_str_is(k, "data_format", "NHWC", 1))
		return ge_k_fail(k, "data_format must be NHWC or NCHW");
	if (x->rank != 4)
		return ge_k_fail(k, "input must be 4-D (%s), not %d-D",
				 l->nchw ? "NCHW" : "NHWC", x->rank);
	l->n = x->dims[0];
	l->h = x->dims[l->nchw ? 2 : 1];
	l->w = x->dims[l->nchw ? 3 : 2];
	l->c = x->dims[l->nchw ? 1 : 3];
	return GE_OK;
}

int ge_knn_attr4(ge_kctx *k, const char *name, const knn_layout *l,
	      int64_t v[4], int64_t def)
{
	int64_t a[4];
	int n = ge_k_attr_ints(k, name, a, 4);
	if (n < 0 || (n == 0 && def > 0)) {
		if (def <= 0)
			return ge_k_fail(k, "attr %s must be a list of 4 ints",
					 name);
		v[0] = v[1] = v[2] = v[3] = def;
		return GE_OK;
	}
	if (n != 4)
		return ge_k_fail(k, "attr %s must have 4 values, has %d", name,
				 n);
	v[0] = a[0];
	v[1] = a[l->nchw ? 2 : 1];
	v[2] = a[l->nchw ? 3 : 2];
	v[3] = a[l->nchw ? 1 : 3];
	return GE_OK;
}

void ge_knn_to_nhwc(const float *src, float *dst, int64_t n, int64_t c,
		 int64_t hw)
{
	if (!c || !hw) /* no element: n may be anything */
		return;
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++) {
			const float *s = src + (b * c + ch) * hw;
			float *d = dst + b * c * hw + ch;
			for (int64_t p = 0; p < hw; p++)
				d[p * c] = s[p];
		}
}

void ge_knn_to_nchw(const float *src, float *dst, int64_t n, int64_t c,
		 int64_t hw)
{
	if (!c || !hw) /* no element: n may be anything */
		return;
	for (int64_t b = 0; b < n; b++)
		for (int64_t p = 0; p < hw; p++) {
			const float *s = src + (b * hw + p) * c;
			float *d = dst + b * c * hw + p;
			for (int64_t ch = 0; ch < c; ch++)
				d[ch * hw] = s[ch];
		}
}

/* What the two below give for a tensor of no element (whose data may be
 * NULL), so that NULL always means a failure. */
static float no_element[1];

/* The NHWC copy of x (x itself when it is NHWC); *bytes the scratch. */
const float *ge_knn_nhwc_in(ge_kctx *k, const knn_layout *l, const ge_xt *x,
			    uint64_t *bytes, float **owned)
{
	*owned = NULL, *bytes = 0;
	if (!x->n)
		return no_element;
	if (!l->nchw)
		return x->data;
	*bytes = (uint64_t)x->n * sizeof(float);
	if (!(*owned = ge_knn_scratch(k, *bytes)))
		return NULL;
	ge_knn_to_nhwc(x->data, *owned, l->n, l->c, l->h * l->w);
	return *owned;
}

/* The output [n, oh, ow, ch] in data_format order, and where to write it
 * in NHWC (the output, or a scratch transposed into it by out_done). */
static float *out_nhwc(ge_kctx *k, const knn_layout *l, int64_t oh,
		       int64_t ow, int64_t ch, uint64_t *bytes, int raw)
{
	int64_t d[4] = {l->n, oh, ow, ch};
	ge_xt *o;
	*bytes = 0;
	if (l->nchw)
		d[1] = ch, d[2] = oh, d[3] = ow;
	if (!(o = (raw ? ge_k_out_raw : ge_k_out)(k, 0, DT_FLOAT, 4, d)))
		return NULL;
	if (!o->n)
		return no_element;
	if (!l->nchw)
		return o->data;
	*bytes = (uint64_t)o->n * sizeof(float);
	return ge_knn_scratch(k, *bytes);
}

float *ge_knn_out_nhwc(ge_kctx *k, const knn_layout *l, int64_t oh,
		   int64_t ow, int64_t ch, uint64_t *bytes)
{
	return out_nhwc(k, l, oh, ow, ch, bytes, 0);
}

float *ge_knn_out_nhwc_raw(ge_kctx *k, const knn_layout *l, int64_t oh,
			int64_t ow, int64_t ch, uint64_t *bytes)
{
	return out_nhwc(k, l, oh, ow, ch, bytes, 1);
}

void ge_knn_out_done(ge_kctx *k, const knn_layout *l, float *y,
		     uint64_t bytes, int64_t hw, int64_t ch)
{
	if (!l->nchw || y == no_element)
		return;
	ge_knn_to_nchw(y, k->out[0]->data, l->n, ch, hw);
	ge_knn_scratch_free(k, y, bytes);
}

/* ---------------------------------------------------------------- windows */

int ge_knn_padding(ge_kctx *k, int allow_explicit)
{
	if (ge_k_attr_str_is(k, "padding", "VALID", 0))
		return KNN_VALID;
	if (ge_k_attr_str_is(k, "padding", "SAME", 0))
		return KNN_SAME;
	if (allow_explicit && ge_k_attr_str_is(k, "padding", "EXPLICIT", 0))
		return KNN_EXPLICIT;
	ge_k_fail(k, "padding must be SAME or VALID%s",
		  allow_explicit ? " or EXPLICIT" : "");
	return -1;
}

int ge_knn_window(ge_kctx *k, knn_dim *d, int mode, const int64_t pads[2],
	       const char *axis)
{
	int64_t eff, padded, total;
	if (d->stride < 1 || d->dil < 1 || d->stride > INT32_MAX ||
	    d->dil > INT32_MAX)
		return ge_k_fail(k, "%s stride %lld and dilation %lld must be "
				 "in [1, 2^31)", axis, (long long)d->stride,
				 (long long)d->dil);
	if (d->k < 1 || d->k > (INT32_MAX / d->dil))
		return ge_k_fail(k, "%s window of %lld is not usable", axis,
				 (long long)d->k);
	eff = (d->k - 1) * d->dil + 1;
	padded = d->in;
	d->pad = 0;
	if (mode == KNN_EXPLICIT) {
		if (pads[0] < 0 || pads[1] < 0 || pads[0] > INT32_MAX ||
		    pads[1] > INT32_MAX)
			return ge_k_fail(k, "%s explicit paddings %lld, %lld "
					 "must be in [0, 2^31)", axis,
					 (long long)pads[0],
					 (long long)pads[1]);
		d->pad = pads[0];
		padded += pads[0] + pads[1];
	}
	if (mode == KNN_SAME) {
		d->out = (d->in + d->stride - 1) / d->stride;
		total = (d->out - 1) * d->stride + eff - d->in;
		d->pad = total > 0 ? total / 2 : 0;
	} else {
		/* TensorFlow's rule: a negative size is an error, a window
		 * one short of fitting gives an empty output */
		d->out = (padded - eff + d->stride) / d->stride;
		if (padded - eff + d->stride < 0 || d->out < 0)
			return ge_k_fail(k, "%s window of %lld (dilated) does "
					 "not fit the %sinput's %lld", axis,
					 (long long)eff,
					 mode ? "padded " : "",
					 (long long)padded);
	}
	return GE_OK;
}

int ge_knn_window2(ge_kctx *k, const knn_layout *l, int64_t kh, int64_t kw,
		const char *dil_attr, int allow_explicit, knn_dim *dh,
		knn_dim *dw)
{
	int64_t s[4], d[4] = {1, 1, 1, 1}, ep[8] = {0}, pads[2][2] = {{0}};
	int mode, rc;
	if ((rc = ge_knn_attr4(k, "strides", l, s, 0)))
		return rc;
	if (dil_attr && (rc = ge_knn_attr4(k, dil_attr, l, d, 1)))
		return rc;
	if (s[0] != 1 || s[3] != 1)
		return ge_k_fail(k, "strides in the batch and depth dimensions "
				 "must be 1");
	if (d[0] != 1 || d[3] != 1)
		return ge_k_fail(k, "dilations in the batch and depth "
				 "dimensions must be 1");
	if ((mode = ge_knn_padding(k, allow_explicit)) < 0)
		return GE_EINVAL;
	if (mode == KNN_EXPLICIT) {
		int n = ge_k_attr_ints(k, "explicit_paddings", ep, 8);
		int hi = l->nchw ? 4 : 2, wi = l->nchw ? 6 : 4;
		int ci = l->nchw ? 2 : 6;
		if (n != 8)
			return ge_k_fail(k, "explicit_paddings must have 8 "
					 "values, has %d", n);
		if (ep[0] || ep[1] || ep[ci] || ep[ci + 1])
			return ge_k_fail(k, "explicit_paddings in the batch "
					 "and depth dimensions must be 0");
		pads[0][0] = ep[hi], pads[0][1] = ep[hi + 1];
		pads[1][0] = ep[wi], pads[1][1] = ep[wi + 1];
	}
	*dh = (knn_dim){.in = l->h, .k = kh, .stride = s[1], .dil = d[1]};
	*dw = (knn_dim){.in = l->w, .k = kw, .stride = s[2], .dil = d[2]};
	if ((rc = ge_knn_window(k, dh, mode, pads[0], "height")))
		return rc;
	return ge_knn_window(k, dw, mode, pads[1], "width");
}

/* ---------------------------------------------------------------- scratch */

float *ge_knn_scratch(ge_kctx *k, uint64_t bytes)
{
	float *p;
	char what[160];
	snprintf(what, sizeof what, "%s (%s) scratch", k->name, k->type);
	if (bytes > SIZE_MAX - 64)
		bytes = UINT64_MAX;
	if (ge_xbudget_mem(k->budget, bytes, what, k->err)) {
		ge_k_drop(k);
		return NULL;
	}
	p = ge_xt_storage(bytes ? (bytes + 63) / 64 * 64 : 64, 0);
	if (!p) {
		ge_xbudget_release(k->budget, bytes);
		ge_k_fail(k, "out of memory for %llu bytes of scratch",
			  (unsigned long long)bytes);
	}
	return p;
}

void ge_knn_scratch_free(ge_kctx *k, float *p, uint64_t bytes)
{
	if (!p || p == no_element)
		return;
	ge_xt_storage_free(p);
	ge_xbudget_release(k->budget, bytes);
}

/* ---------------------------------------------------------------- epilogue */

static int epi_act(const char *s)
{
	static const struct { const char *name; int act; } acts[] = {
		{"Relu", KNN_EPI_RELU}, {"Relu6", KNN_EPI_RELU6},
		{"Elu", KNN_EPI_ELU}, {"LeakyRelu", KNN_EPI_LEAKY},
		{"Sigmoid", KNN_EPI_SIGMOID}, {"Tanh", KNN_EPI_TANH},
		{"GeluExact", KNN_EPI_GELU_EXACT},
		{"GeluApproximate", KNN_EPI_GELU_APPROX},
	};
	for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
		if (!strcmp(s, acts[i].name))
			return acts[i].act;
	return KNN_EPI_NONE;
}

/* A list(string) attr into out (at most cap names of under 32 bytes):
 * the count (0 when absent), or -1. */
static int attr_strs(ge_kctx *k, const char *name, char out[][32], int cap)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v)
		return 0;
	if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list)
		return -1;
	if (v->list->n_s > (size_t)cap)
		return -1;
	for (size_t i = 0; i < v->list->n_s; i++) {
		size_t n = v->list->s[i].len;
		if (n >= 32)
			return -1;
		memcpy(out[i], v->list->s[i].data, n);
		out[i][n] = 0;
	}
	return (int)v->list->n_s;
}

/* Extra input `i` must be float32[c]. */
static const float *epi_vec(ge_kctx *k, int i, int64_t c, const char *what)
{
	char buf[96];
	if (i >= k->nin) {
		ge_k_fail(k, "%s: input %d missing", what, i);
		return NULL;
	}
	if (k->in[i]->dtype != DT_FLOAT || k->in[i]->rank != 1 ||
	    k->in[i]->dims[0] != c) {
		ge_k_fail(k, "%s must be float32[%lld], not %s", what,
			  (long long)c,
			  ge_xt_describe(k->in[i], buf, sizeof buf));
		return NULL;
	}
	return c ? k->in[i]->data : no_element; /* never NULL on success */
}

static int epi_bn(ge_kctx *k, int first, int64_t c, knn_epi *e)
{
	const float *scale = epi_vec(k, first, c, "FusedBatchNorm scale");
	const float *var;
	double eps = ge_k_attr_float(k, "epsilon", 0.0001);
	if (!scale || !(e->bn_offset = epi_vec(k, first + 1, c,
					       "FusedBatchNorm offset")) ||
	    !(e->bn_mean = epi_vec(k, first + 2, c, "FusedBatchNorm mean")) ||
	    !(var = epi_vec(k, first + 3, c, "FusedBatchNorm variance")))
		return GE_EINVAL;
	if (!(eps >= 0))
		return ge_k_fail(k, "epsilon must not be negative");
	if (!(e->bn_scale = malloc((size_t)(c ? c : 1) * sizeof(float))))
		return ge_k_fail(k, "out of memory");
	for (int64_t i = 0; i < c; i++)
		e->bn_scale[i] = 1.0f / sqrtf(var[i] + (float)eps) * scale[i];
	return GE_OK;
}

int ge_knn_epi_parse(ge_kctx *k, int first, int64_t c, int conv, knn_epi *e)
{
	char ops[4][32];
	int nops = 0, nargs = (int)ge_k_attr_int(k, "num_args", 0), i = 0;
	int used = 0;
	memset(e, 0, sizeof *e);
	e->alpha = (float)ge_k_attr_float(k, "leakyrelu_alpha", 0.2);
	nops = attr_strs(k, "fused_ops", ops, 4);
	if (nops < 0)
		return ge_k_fail(k, "fused_ops must list at most 4 ops");
	if (nargs < 0 || first + nargs > k->nin)
		return ge_k_fail(k, "num_args %d but %d inputs", nargs, k->nin);
	if (nops > 0 && strcmp(ops[0], "BiasAdd") &&
	    (!conv || strcmp(ops[0], "FusedBatchNorm")))
		return ge_k_fail(k, "fused_ops must start with BiasAdd%s, not "
				 "%s", conv ? " or FusedBatchNorm" : "",
				 ops[0]);
	if (i < nops && !strcmp(ops[i], "BiasAdd")) {
		if (!(e->bias = epi_vec(k, first + used, c, "bias")))
			return GE_EINVAL;
		used++, i++;
	} else if (conv && i < nops && !strcmp(ops[i], "FusedBatchNorm")) {
		if (epi_bn(k, first + used, c, e))
			return GE_EINVAL;
		used += 4, i++;
	}
	if (conv && i < nops && !strcmp(ops[i], "Add")) {
		if (first + used >= k->nin)
			return ge_k_fail(k, "Add: input %d missing",
					 first + used);
		e->add = k->in[first + used];
		used++, i++;
	}
	if (i < nops && !strcmp(ops[i], "Prelu")) {
		/* TensorFlow.js's converter: its alphas are the next arg */
		const ge_xt *a = first + used < k->nin ? k->in[first + used]
						       : NULL;
		if (!a || a->dtype != DT_FLOAT || (a->n != c && a->n != 1)) {
			ge_knn_epi_done(e);
			return ge_k_fail(k, "Prelu's alphas must be float32 of "
					 "1 or %lld elements", (long long)c);
		}
		e->act = KNN_EPI_PRELU, e->prelu = a->data, e->nprelu = a->n;
		used++, i++;
	} else if (i < nops && (e->act = epi_act(ops[i])) != KNN_EPI_NONE)
		i++;
	if (i < nops) {
		ge_knn_epi_done(e);
		return ge_k_fail(k, "fused op %s is not supported here",
				 ops[i]);
	}
	if (used != nargs) {
		ge_knn_epi_done(e);
		return ge_k_fail(k, "num_args is %d, the fused ops take %d",
				 nargs, used);
	}
	return GE_OK;
}

void ge_knn_epi_done(knn_epi *e)
{
	free(e->bn_scale);
	e->bn_scale = NULL;
}

static float act1(int act, float v, float alpha)
{
	switch (act) {
	case KNN_EPI_RELU: return v > 0 ? v : 0;
	case KNN_EPI_RELU6: return v > 0 ? (v < 6 ? v : 6) : 0;
	case KNN_EPI_ELU: return v < 0 ? expf(v) - 1 : v;
	case KNN_EPI_LEAKY: return v < 0 ? v * alpha : v;
	case KNN_EPI_SIGMOID: return 1 / (1 + expf(-v));
	case KNN_EPI_TANH: return tanhf(v);
	case KNN_EPI_GELU_EXACT:
		return 0.5f * v * (1 + erff(v * (float)M_SQRT1_2));
	case KNN_EPI_GELU_APPROX:
		return 0.5f * v * (1 + tanhf(0.7978845608f *
					     (v + 0.044715f * v * v * v)));
	default: return v;
	}
}

void ge_knn_epi_apply(const knn_epi *e, float *rows, int64_t nrows, int64_t c,
		   int64_t off)
{
	const float *add;
	if (!c || !nrows) /* no element: nrows may be anything */
		return;
	add = e->add ? (const float *)e->add->data + off : NULL;
	for (int64_t r = 0; r < nrows; r++) {
		float *row = rows + r * c;
		if (e->bias)
			for (int64_t i = 0; i < c; i++)
				row[i] += e->bias[i];
		if (e->bn_scale)
			for (int64_t i = 0; i < c; i++)
				row[i] = (row[i] - e->bn_mean[i]) *
					e->bn_scale[i] + e->bn_offset[i];
		if (add) {
			for (int64_t i = 0; i < c; i++)
				row[i] += add[i];
			add += c;
		}
		if (e->act == KNN_EPI_RELU)
			for (int64_t i = 0; i < c; i++)
				row[i] = row[i] > 0 ? row[i] : 0;
		else if (e->act == KNN_EPI_RELU6)
			for (int64_t i = 0; i < c; i++)
				row[i] = row[i] > 0 ? (row[i] < 6 ? row[i] : 6)
					: 0;
		else if (e->act == KNN_EPI_PRELU)
			for (int64_t i = 0; i < c; i++) {
				float a = e->prelu[e->nprelu == 1 ? 0 : i];
				row[i] = row[i] < 0 ? row[i] * a : row[i];
			}
		else if (e->act != KNN_EPI_NONE)
			for (int64_t i = 0; i < c; i++)
				row[i] = act1(e->act, row[i], e->alpha);
	}
}
