/*
 * exec/k_pool.c: MaxPool, MaxPoolV2, AvgPool, MaxPoolGrad and
 * FusedBatchNorm (V1, V2, V3).
 *
 * Pools run in NHWC (NCHW is transposed around them) over the contiguous
 * channels of each pixel, which is what bounds them: they read each input
 * element kh*kw/(stride^2) times and do one comparison or addition per
 * read.  As TensorFlow's CPU kernels do, SAME padding never enters a
 * window: MaxPool takes the maximum of the elements inside the input,
 * AvgPool divides by their count.
 */
#include "exec/k_nn_impl.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct pool {
	knn_layout l;
	knn_dim dh, dw;
} pool;

/* ksize and strides as attrs (MaxPool, AvgPool, MaxPoolGrad) or inputs
 * 1 and 2 (MaxPoolV2), in data_format order. */
static int pool_setup(ge_kctx *k, pool *p, int v2)
{
	int64_t ks[4], st[4], a[4];
	int rc, mode;
	if ((rc = ge_knn_in_f32(k, 0, 4, "input")) ||
	    (rc = ge_knn_layout_of(k, k->in[0], &p->l)))
		return rc;
	if (!v2) {
		/* MaxPool takes EXPLICIT padding too, as Conv2D does */
		if ((rc = ge_knn_attr4(k, "ksize", &p->l, ks, 0)))
			return rc;
		if (ks[0] != 1 || ks[3] != 1)
			return ge_k_fail(k, "pooling over the batch or depth "
					 "dimension is not supported (ksize "
					 "there must be 1)");
		if ((rc = ge_knn_window2(k, &p->l, ks[1], ks[2], NULL,
				      !strcmp(k->type, "MaxPool"), &p->dh,
				      &p->dw)))
			return rc;
		return ge_k_work(k, ge_knn_mul(ge_knn_mul(p->l.n * p->dh.out,
						    p->dw.out),
					    ge_knn_mul(p->l.c, p->dh.k * p->dw.k)));
	}
	if (ge_k_ints(k, 1, a, 4) != 4)
		return ge_k_fail(k, "ksize must have 4 values");
	ks[0] = a[0], ks[1] = a[p->l.nchw ? 2 : 1];
	ks[2] = a[p->l.nchw ? 3 : 2], ks[3] = a[p->l.nchw ? 1 : 3];
	if (ge_k_ints(k, 2, a, 4) != 4)
		return ge_k_fail(k, "strides must have 4 values");
	st[0] = a[0], st[1] = a[p->l.nchw ? 2 : 1];
	st[2] = a[p->l.nchw ? 3 : 2], st[3] = a[p->l.nchw ? 1 : 3];
	if (ks[0] != 1 || ks[3] != 1 || st[0] != 1 || st[3] != 1)
		return ge_k_fail(k, "pooling over the batch or depth dimension "
				 "is not supported (ksize and strides there "
				 "must be 1)");
	if ((mode = ge_knn_padding(k, 0)) < 0)
		return GE_EINVAL;
	p->dh = (knn_dim){.in = p->l.h, .k = ks[1], .stride = st[1], .dil = 1};
	p->dw = (knn_dim){.in = p->l.w, .k = ks[2], .stride = st[2], .dil = 1};
	if ((rc = ge_knn_window(k, &p->dh, mode, NULL, "height")) ||
	    (rc = ge_knn_window(k, &p->dw, mode, NULL, "width")))
		return rc;
	return ge_k_work(k, ge_knn_mul(ge_knn_mul(p->l.n * p->dh.out, p->dw.out),
				    ge_knn_mul(p->l.c, p->dh.k * p->dw.k)));
}

/* The window of output (oh, ow) clipped to the input. */
static void clip(const pool *p, int64_t oh, int64_t ow, int64_t *h0,
		 int64_t *h1, int64_t *w0, int64_t *w1)
{
	*h0 = oh * p->dh.stride - p->dh.pad, *h1 = *h0 + p->dh.k;
	*w0 = ow * p->dw.stride - p->dw.pad, *w1 = *w0 + p->dw.k;
	if (*h0 < 0) *h0 = 0;
	if (*w0 < 0) *w0 = 0;
	if (*h1 > p->l.h) *h1 = p->l.h;
	if (*w1 > p->l.w) *w1 = p->l.w;
}

static KNN_VEC void max_pool(const pool *p, const float *x, float *y)
{
	int64_t C = p->l.c;
	for (int64_t b = 0; b < p->l.n; b++)
		for (int64_t oh = 0; oh < p->dh.out; oh++)
			for (int64_t ow = 0; ow < p->dw.out; ow++, y += C) {
				int64_t h0, h1, w0, w1;
				clip(p, oh, ow, &h0, &h1, &w0, &w1);
				for (int64_t c = 0; c < C; c++)
					y[c] = -FLT_MAX;
				for (int64_t ih = h0; ih < h1; ih++)
					for (int64_t iw = w0; iw < w1; iw++) {
						const float *xp = x + ((b *
							p->l.h + ih) * p->l.w
							+ iw) * C;
						for (int64_t c = 0; c < C; c++)
							y[c] = xp[c] > y[c] ?
								xp[c] : y[c];
					}
			}
}

static KNN_VEC void avg_pool(const pool *p, const float *x, float *y)
{
	int64_t C = p->l.c;
	for (int64_t b = 0; b < p->l.n; b++)
		for (int64_t oh = 0; oh < p->dh.out; oh++)
			for (int64_t ow = 0; ow < p->dw.out; ow++, y += C) {
				int64_t h0, h1, w0, w1;
				float inv;
				clip(p, oh, ow, &h0, &h1, &w0, &w1);
				memset(y, 0, C * sizeof(float));
				for (int64_t ih = h0; ih < h1; ih++)
					for (int64_t iw = w0; iw < w1; iw++) {
						const float *xp = x + ((b *
							p->l.h + ih) * p->l.w
							+ iw) * C;
						for (int64_t c = 0; c < C; c++)
							y[c] += xp[c];
					}
				inv = (float)((h1 - h0) * (w1 - w0));
				for (int64_t c = 0; c < C; c++)
					y[c] /= inv;
			}
}

static int pool_run(ge_kctx *k, int v2, int avg)
{
	pool p;
	const float *x;
	float *xs, *y;
	uint64_t xb, yb;
	int rc;
	if ((rc = ge_k_need(k, v2 ? 3 : 1)) || (rc = pool_setup(k, &p, v2)))
		return rc;
	if (!(x = ge_knn_nhwc_in(k, &p.l, k->in[0], &xb, &xs)))
		return GE_EINVAL;
	if (!(y = ge_knn_out_nhwc(k, &p.l, p.dh.out, p.dw.out, p.l.c, &yb)))
		rc = GE_EINVAL;
	else if (k->out[0]->n == 0) /* nothing to loop over */
		ge_knn_out_done(k, &p.l, y, yb, 0, 0);
	else {
		if (avg)
			avg_pool(&p, x, y);
		else
			max_pool(&p, x, y);
		ge_knn_out_done(k, &p.l, y, yb, p.dh.out * p.dw.out, p.l.c);
	}
	ge_knn_scratch_free(k, xs, xb);
	return rc;
}

static int k_max_pool(ge_kctx *k) { return pool_run(k, 0, 0); }
static int k_max_pool_v2(ge_kctx *k) { return pool_run(k, 1, 0); }
static int k_avg_pool(ge_kctx *k) { return pool_run(k, 0, 1); }

/* MaxPoolGrad(orig_input, orig_output, grad): the gradient goes to the
 * first maximum of each window (in window order), as TensorFlow's CPU
 * kernel routes it. */
static int k_max_pool_grad(ge_kctx *k)
{
	pool p;
	const ge_xt *gr;
	float *dx;
	int64_t C;
	char buf[96];
	int rc;
	if ((rc = ge_k_need(k, 3)) || (rc = pool_setup(k, &p, 0)))
		return rc;
	gr = k->in[2];
	if (p.l.nchw)
		return ge_k_fail(k, "MaxPoolGrad supports NHWC only");
	if (gr->dtype != DT_FLOAT || gr->rank != 4 ||
	    gr->dims[0] != p.l.n || gr->dims[1] != p.dh.out ||
	    gr->dims[2] != p.dw.out || gr->dims[3] != p.l.c)
		return ge_k_fail(k, "grad must be float32[%lld,%lld,%lld,%lld]"
				 ", not %s", (long long)p.l.n,
				 (long long)p.dh.out, (long long)p.dw.out,
				 (long long)p.l.c,
				 ge_xt_describe(gr, buf, sizeof buf));
	if (!ge_k_out(k, 0, DT_FLOAT, 4, k->in[0]->dims))
		return GE_EINVAL;
	if (k->in[0]->n == 0 || gr->n == 0)
		return GE_OK;
	dx = k->out[0]->data;
	C = p.l.c;
	for (int64_t b = 0; b < p.l.n; b++)
		for (int64_t oh = 0; oh < p.dh.out; oh++)
			for (int64_t ow = 0; ow < p.dw.out; ow++)
				for (int64_t c = 0; c < C; c++) {
					const float *x = k->in[0]->data;
					int64_t h0, h1, w0, w1, best = -1;
					float m = -FLT_MAX;
					clip(&p, oh, ow, &h0, &h1, &w0, &w1);
					for (int64_t ih = h0; ih < h1; ih++)
						for (int64_t iw = w0; iw < w1;
						     iw++) {
							int64_t at = ((b * p.l.h
								+ ih) * p.l.w
								+ iw) * C + c;
							if (best < 0 ||
							    x[at] > m)
								m = x[at],
								best = at;
						}
					if (best >= 0)
						dx[best] += ((const float *)
							gr->data)[((b *
							p.dh.out + oh) *
							p.dw.out + ow) * C + c];
				}
	return GE_OK;
}

/* ---------------------------------------------------------------- batch norm */

/* Per-channel statistics of x (NHWC as n*h*w rows of c) when training:
 * mean and biased variance, in double then rounded. */
static void bn_stats(const float *x, int64_t rows, int64_t c, float *mean,
		     float *var)
{
	for (int64_t j = 0; j < c; j++) {
		double s = 0, q = 0;
		for (int64_t r = 0; r < rows; r++)
			s += x[r * c + j];
		s = rows ? s / rows : 0;
		for (int64_t r = 0; r < rows; r++) {
			double d = x[r * c + j] - s;
			q += d * d;
		}
		mean[j] = (float)s;
		var[j] = (float)(rows ? q / rows : 0);
	}
}

/* Outputs 1.. of a FusedBatchNorm: batch_mean, batch_variance,
 * reserve_space_1, reserve_space_2 (and V3's reserve_space_3, empty). */
static int bn_side(ge_kctx *k, int64_t c, const float *m, const float *v,
		   const float *sm, const float *sv)
{
	const float *src[4] = {m, v, sm, sv};
	int64_t zero = 0;
	for (int i = 1; i < k->nout; i++) {
		ge_xt *o = ge_k_out(k, i, DT_FLOAT, 1, i <= 4 ? &c : &zero);
		if (!o)
			return GE_EINVAL;
		if (i <= 4 && c)
			memcpy(o->data, src[i - 1], c * sizeof(float));
	}
	return GE_OK;
}

static void bn_unset(ge_kctx *k)
{
	for (int i = 0; i < k->nout; i++) {
		ge_xt_unref(k->out[i]);
		k->out[i] = NULL;
	}
}

static int bn_check(ge_kctx *k, int64_t c, int training)
{
	static const char *names[] = {"scale", "offset", "mean", "variance"};
	char buf[96];
	for (int i = 1; i <= 4; i++) {
		const ge_xt *t = k->in[i];
		if (t->dtype != DT_FLOAT || t->rank != 1 ||
		    (t->dims[0] != c && !(training && i >= 3 &&
					  t->dims[0] == 0)))
			return ge_k_fail(k, "%s must be float32[%lld], not %s",
					 names[i - 1], (long long)c,
					 ge_xt_describe(t, buf, sizeof buf));
	}
	return GE_OK;
}

/* y = (x - mean) * s + offset, s = 1 / sqrt(var + epsilon) * scale, per
 * channel, in TensorFlow's order of operations; training computes mean and var from the batch and reports the
 * unbiased variance (blended by exponential_avg_factor). */
static int k_batch_norm(ge_kctx *k)
{
	knn_layout l;
	int training, rc;
	double eps, f;
	int64_t rows, c;
	const float *x, *scale, *off, *mean, *var;
	float *xs, *y, *st = NULL;
	uint64_t xb, yb, sb = 0;
	if ((rc = ge_k_need(k, 5)) || (rc = ge_knn_in_f32(k, 0, 4, "x")) ||
	    (rc = ge_knn_layout_of(k, k->in[0], &l)))
		return rc;
	training = ge_k_attr_bool(k, "is_training", 1);
	eps = ge_k_attr_float(k, "epsilon", 0.0001);
	f = ge_k_attr_float(k, "exponential_avg_factor", 1.0);
	c = l.c, rows = l.n * l.h * l.w;
	if ((rc = bn_check(k, c, training)))
		return rc;
	if (!(eps >= 0) || !(f >= 0 && f <= 1))
		return ge_k_fail(k, "epsilon must be >= 0 and "
				 "exponential_avg_factor in [0, 1]");
	if ((rc = ge_k_work(k, ge_knn_mul(k->in[0]->n, training ? 4 : 2))))
		return rc;
	scale = k->in[1]->data, off = k->in[2]->data;
	mean = k->in[3]->data, var = k->in[4]->data;
	if (!(x = ge_knn_nhwc_in(k, &l, k->in[0], &xb, &xs)))
		return GE_EINVAL;
	sb = (uint64_t)(4 * c + 1) * sizeof(float);
	if (!(st = ge_knn_scratch(k, sb))) {
		ge_knn_scratch_free(k, xs, xb);
		return GE_EINVAL;
	}
	if (training) {
		bn_stats(x, rows, c, st, st + c);
		mean = st, var = st + c;
	}
	for (int64_t j = 0; j < c; j++)
		st[2 * c + j] = 1.0f / sqrtf(var[j] + (float)eps) * scale[j];
	if (!(y = ge_knn_out_nhwc(k, &l, l.h, l.w, c, &yb)))
		rc = GE_EINVAL;
	else if (k->out[0]->n == 0)
		ge_knn_out_done(k, &l, y, yb, 0, 0);
	else {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t j = 0; j < c; j++)
				y[r * c + j] = (x[r * c + j] - mean[j]) *
					st[2 * c + j] + off[j];
		ge_knn_out_done(k, &l, y, yb, l.h * l.w, c);
	}
	ge_knn_scratch_free(k, xs, xb);
	if (!rc && training) {
		/* the unbiased variance, blended into the running values */
		float adj = rows > 1 ? (float)rows / (float)(rows - 1) : 1;
		float *bm = st + 2 * c, *bv = st + 3 * c;
		int blend = f != 1 && k->in[3]->dims[0] == c &&
			    k->in[4]->dims[0] == c;
		for (int64_t j = 0; j < c; j++) {
			bm[j] = st[j], bv[j] = st[c + j] * adj;
			if (blend) {
				bm[j] = (float)((1 - f) *
					((const float *)k->in[3]->data)[j] +
					f * bm[j]);
				bv[j] = (float)((1 - f) *
					((const float *)k->in[4]->data)[j] +
					f * bv[j]);
			}
		}
		rc = bn_side(k, c, bm, bv, st, st + c);
	} else if (!rc)
		rc = bn_side(k, c, mean, var, mean, var);
	ge_knn_scratch_free(k, st, sb);
	if (rc)
		bn_unset(k);
	return rc;
}

const ge_kdef ge_kernels_pool[] = {
	{"AvgPool", k_avg_pool, 0},
	{"FusedBatchNorm", k_batch_norm, 0},
	{"FusedBatchNormV2", k_batch_norm, 0},
	{"FusedBatchNormV3", k_batch_norm, 0},
	{"MaxPool", k_max_pool, 0},
	{"MaxPoolGrad", k_max_pool_grad, 0},
	{"MaxPoolV2", k_max_pool_v2, 0},
	{NULL, NULL, 0},
};
