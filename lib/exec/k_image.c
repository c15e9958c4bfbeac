/*
 * exec/k_image.c: ResizeBilinear, ResizeNearestNeighbor,
 * NonMaxSuppression (V2 to V5), SpaceToBatchND, BatchToSpaceND,
 * DepthToSpace and SpaceToDepth.
 *
 * The resizes follow TensorFlow's sampling rules exactly, in float: the
 * scale is in/out (or (in-1)/(out-1) with align_corners), a pixel's
 * source is i*scale, or (i+0.5)*scale-0.5 with half_pixel_centers
 * ((i+0.5)*scale for nearest), clamped to the image.  Non-max
 * suppression is TensorFlow's greedy selection: candidates above
 * score_threshold by score (the lower index first on ties), dropped when
 * their IoU with a selected box is over iou_threshold, or, with
 * soft_nms_sigma > 0, scaled by exp(-iou^2 / (2 sigma)) and put back.
 * The block rearrangements move whole runs of channels (memcpy), for any
 * dtype of fixed size.
 */
#include "exec/k_nn_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- resize */

typedef struct rsz {
	int64_t n, ih, iw, c, oh, ow;
	float sh, sw;
	int align, half;
} rsz;

static int rsz_setup(ge_kctx *k, rsz *r)
{
	const ge_xt *x;
	int64_t sz[2];
	int rc;
	char buf[96];
	if ((rc = ge_k_need(k, 2)))
		return rc;
	x = k->in[0];
	if (x->rank != 4 || !dt_is_number(x->dtype))
		return ge_k_fail(k, "images must be a 4-D tensor of numbers, "
				 "not %s", ge_xt_describe(x, buf, sizeof buf));
	if (k->in[1]->dtype != DT_INT32 || k->in[1]->rank != 1 ||
	    ge_k_ints(k, 1, sz, 2) != 2)
		return ge_k_fail(k, "size must be int32[2]");
	if (sz[0] <= 0 || sz[1] <= 0 || sz[0] > INT32_MAX ||
	    sz[1] > INT32_MAX)
		return ge_k_fail(k, "size %lld x %lld must be positive",
				 (long long)sz[0], (long long)sz[1]);
	r->align = ge_k_attr_bool(k, "align_corners", 0);
	r->half = ge_k_attr_bool(k, "half_pixel_centers", 0);
	if (r->align && r->half)
		return ge_k_fail(k, "align_corners and half_pixel_centers "
				 "cannot both be true");
	r->n = x->dims[0], r->ih = x->dims[1], r->iw = x->dims[2];
	r->c = x->dims[3], r->oh = sz[0], r->ow = sz[1];
	if ((r->ih == 0 || r->iw == 0) && r->n && r->c)
		return ge_k_fail(k, "an image of %lld x %lld cannot be resized",
				 (long long)r->ih, (long long)r->iw);
	r->sh = r->align && r->oh > 1 ? (float)(r->ih - 1) / (float)(r->oh - 1)
				      : (float)r->ih / (float)r->oh;
	r->sw = r->align && r->ow > 1 ? (float)(r->iw - 1) / (float)(r->ow - 1)
				      : (float)r->iw / (float)r->ow;
	return ge_k_work(k, ge_knn_mul(ge_knn_mul(r->n * r->oh, r->ow),
				    ge_knn_mul(r->c, 4)));
}

/* Source rows (or columns) and weights of the bilinear resize. */
static void bl_weights(int64_t out, int64_t in, float scale, int half,
		       int64_t *lo, int64_t *hi, float *lerp)
{
	for (int64_t i = 0; i < out; i++) {
		float s = half ? ((float)i + 0.5f) * scale - 0.5f
			       : (float)i * scale;
		float f = floorf(s);
		int64_t c = (int64_t)ceilf(s);
		lo[i] = (int64_t)f > 0 ? (int64_t)f : 0;
		hi[i] = c < in - 1 ? c : in - 1;
		lerp[i] = s - f;
	}
}

/* The elements of x as float32: x's own data, or a converted scratch
 * of *bytes. */
static const float *as_f32(ge_kctx *k, const ge_xt *x, float **owned,
			   uint64_t *bytes)
{
	*owned = NULL, *bytes = 0;
	if (x->dtype == DT_FLOAT)
		return x->data;
	*bytes = (uint64_t)x->n * sizeof(float);
	if (!(*owned = ge_knn_scratch(k, *bytes)))
		return NULL;
	if (dt_is_float(x->dtype))
		for (int64_t i = 0; i < x->n; i++)
			(*owned)[i] = kget_f(x, i);
	else
		for (int64_t i = 0; i < x->n; i++)
			(*owned)[i] = (float)ge_xt_get_int64(x, i);
	return *owned;
}

static void bilinear(const rsz *r, const float *x, const int64_t *lo,
		     const int64_t *hi, const float *lerp, float *y)
{
	for (int64_t b = 0; b < r->n; b++)
		for (int64_t i = 0; i < r->oh; i++)
			for (int64_t j = 0; j < r->ow; j++) {
				const float *t = x + ((b * r->ih + lo[i]) *
						      r->iw) * r->c;
				const float *u = x + ((b * r->ih + hi[i]) *
						      r->iw) * r->c;
				int64_t l = lo[r->oh + j] * r->c;
				int64_t h = hi[r->oh + j] * r->c;
				float xl = lerp[r->oh + j], yl = lerp[i];
				for (int64_t c = 0; c < r->c; c++, y++) {
					float top = t[l + c] + (t[h + c] -
							t[l + c]) * xl;
					float bot = u[l + c] + (u[h + c] -
							u[l + c]) * xl;
					*y = top + (bot - top) * yl;
				}
			}
}

static int k_resize_bilinear(ge_kctx *k)
{
	rsz r;
	int64_t od[4], *lo, *hi;
	float *lerp, *xs;
	const float *x;
	uint64_t bytes, xb;
	int rc;
	if ((rc = rsz_setup(k, &r)))
		return rc;
	od[0] = r.n, od[1] = r.oh, od[2] = r.ow, od[3] = r.c;
	bytes = ge_knn_mul((uint64_t)(r.oh + r.ow), 2 * sizeof(int64_t) +
			sizeof(float));
	if (!ge_k_out(k, 0, DT_FLOAT, 4, od))
		return GE_EINVAL;
	if (!r.n || !r.c)
		return GE_OK;
	if (!(lo = (int64_t *)ge_knn_scratch(k, bytes)))
		return GE_EINVAL;
	hi = lo + r.oh + r.ow;
	lerp = (float *)(hi + r.oh + r.ow);
	bl_weights(r.oh, r.ih, r.sh, r.half, lo, hi, lerp);
	bl_weights(r.ow, r.iw, r.sw, r.half, lo + r.oh, hi + r.oh, lerp + r.oh);
	if (!(x = as_f32(k, k->in[0], &xs, &xb))) {
		ge_knn_scratch_free(k, (float *)lo, bytes);
		return GE_EINVAL;
	}
	bilinear(&r, x, lo, hi, lerp, k->out[0]->data);
	ge_knn_scratch_free(k, xs, xb);
	ge_knn_scratch_free(k, (float *)lo, bytes);
	return GE_OK;
}

/* Source index of output i of the nearest-neighbour resize. */
static int64_t nn_src(int64_t i, int64_t in, float scale, int align, int half)
{
	float s = half ? ((float)i + 0.5f) * scale : (float)i * scale;
	int64_t v = align ? (int64_t)roundf(s) : (int64_t)floorf(s);
	if (v > in - 1)
		v = in - 1;
	if (half && v < 0)
		v = 0;
	return v;
}

static int k_resize_nearest(ge_kctx *k)
{
	rsz r;
	int64_t od[4];
	const ge_xt *x;
	size_t es;
	char *y;
	int rc;
	if ((rc = rsz_setup(k, &r)))
		return rc;
	x = k->in[0];
	es = ge_xt_elem_size(x->dtype);
	od[0] = r.n, od[1] = r.oh, od[2] = r.ow, od[3] = r.c;
	if (!ge_k_out(k, 0, x->dtype, 4, od))
		return GE_EINVAL;
	if (!r.n || !r.c)
		return GE_OK;
	y = k->out[0]->data;
	for (int64_t b = 0; b < r.n; b++)
		for (int64_t i = 0; i < r.oh; i++) {
			int64_t si = nn_src(i, r.ih, r.sh, r.align, r.half);
			for (int64_t j = 0; j < r.ow; j++, y += r.c * es) {
				int64_t sj = nn_src(j, r.iw, r.sw, r.align,
						    r.half);
				memcpy(y, (const char *)x->data +
				       ((b * r.ih + si) * r.iw + sj) * r.c * es,
				       r.c * es);
			}
		}
	return GE_OK;
}

/* ---------------------------------------------------------------- NMS */

typedef struct cand {
	int64_t box;
	float score;
	int64_t from;   /* selected boxes before this one were compared */
} cand;

/* The heap's order: higher score first, the lower index on ties. */
static int before(const cand *a, const cand *b)
{
	return a->score > b->score ||
	       (a->score == b->score && a->box < b->box);
}

static void heap_push(cand *h, int64_t *n, cand c)
{
	int64_t i = (*n)++;
	while (i > 0 && before(&c, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = c;
}

static cand heap_pop(cand *h, int64_t *n)
{
	cand top = h[0], last = h[--*n];
	int64_t i = 0;
	for (;;) {
		int64_t l = 2 * i + 1, m = l;
		if (l >= *n)
			break;
		if (l + 1 < *n && before(&h[l + 1], &h[l]))
			m = l + 1;
		if (!before(&h[m], &last))
			break;
		h[i] = h[m];
		i = m;
	}
	if (*n > 0)
		h[i] = last;
	return top;
}

/* Intersection over union of boxes i and j (corners in any order). */
static float iou(const float *bx, int64_t i, int64_t j)
{
	const float *a = bx + 4 * i, *b = bx + 4 * j;
	float ay0 = fminf(a[0], a[2]), ax0 = fminf(a[1], a[3]);
	float ay1 = fmaxf(a[0], a[2]), ax1 = fmaxf(a[1], a[3]);
	float by0 = fminf(b[0], b[2]), bx0 = fminf(b[1], b[3]);
	float by1 = fmaxf(b[0], b[2]), bx1 = fmaxf(b[1], b[3]);
	float aa = (ay1 - ay0) * (ax1 - ax0), ab = (by1 - by0) * (bx1 - bx0);
	float ih, iw, inter;
	if (aa <= 0 || ab <= 0)
		return 0;
	ih = fmaxf(fminf(ay1, by1) - fmaxf(ay0, by0), 0);
	iw = fmaxf(fminf(ax1, bx1) - fmaxf(ax0, bx0), 0);
	inter = ih * iw;
	return inter / (aa + ab - inter);
}

typedef struct nms {
	int64_t n, max_out;
	float iou_thr, score_thr, sigma;
	const float *boxes, *scores;
} nms;

/* The selection: indices into sel and their scores into ssc (max_out of
 * each); returns the count.  h holds n candidates. */
static int64_t nms_run(const nms *p, cand *h, int32_t *sel, float *ssc)
{
	int64_t nh = 0, ns = 0;
	float scale = p->sigma > 0 ? -0.5f / p->sigma : 0;
	for (int64_t i = 0; i < p->n; i++)
		if (p->scores[i] > p->score_thr)
			heap_push(h, &nh, (cand){i, p->scores[i], 0});
	while (ns < p->max_out && nh > 0) {
		cand c = heap_pop(h, &nh);
		float orig = c.score;
		int hard = 0;
		for (int64_t j = ns - 1; j >= c.from; j--) {
			float v = iou(p->boxes, c.box, sel[j]);
			float w = expf(scale * v * v);
			c.score *= p->sigma > 0 || v <= p->iou_thr ? w : 0;
			if (p->sigma <= 0 && v > p->iou_thr) {
				hard = 1;
				break;
			}
			if (c.score <= p->score_thr)
				break;
		}
		c.from = ns;
		if (hard)
			continue;
		if (c.score == orig) {
			sel[ns] = (int32_t)c.box;
			ssc[ns++] = c.score;
		} else if (c.score > p->score_thr)
			heap_push(h, &nh, c);
	}
	return ns;
}

/* Scalar float input i (float32 or half) into *v. */
static int scalar_f(ge_kctx *k, int i, float *v, const char *what)
{
	const ge_xt *t = k->in[i];
	if (t->n != 1 || t->rank > 1 ||
	    (t->dtype != DT_FLOAT && t->dtype != DT_HALF))
		return ge_k_fail(k, "%s must be a float32 scalar", what);
	*v = kget_f(t, 0);
	return GE_OK;
}

static int nms_inputs(ge_kctx *k, int version, nms *p)
{
	char buf[96];
	const ge_xt *b, *s;
	int64_t mo;
	int rc;
	if ((rc = ge_k_need(k, version >= 5 ? 6 : version >= 3 ? 5 : 4)))
		return rc;
	b = k->in[0], s = k->in[1];
	if (b->dtype != DT_FLOAT || b->rank != 2 || b->dims[1] != 4)
		return ge_k_fail(k, "boxes must be float32[n,4], not %s",
				 ge_xt_describe(b, buf, sizeof buf));
	if (s->dtype != DT_FLOAT || s->rank != 1 || s->dims[0] != b->dims[0])
		return ge_k_fail(k, "scores must be float32[%lld], not %s",
				 (long long)b->dims[0],
				 ge_xt_describe(s, buf, sizeof buf));
	if (b->dims[0] > INT32_MAX)
		return ge_k_fail(k, "over 2^31-1 boxes");
	if ((rc = ge_k_scalar_int(k, 2, &mo)))
		return rc;
	if (mo < 0 || mo > INT32_MAX)
		return ge_k_fail(k, "max_output_size %lld must be in "
				 "[0, 2^31)", (long long)mo);
	p->n = b->dims[0], p->max_out = mo;
	p->boxes = b->data, p->scores = s->data;
	p->score_thr = -INFINITY, p->sigma = 0;
	if ((rc = scalar_f(k, 3, &p->iou_thr, "iou_threshold")) ||
	    (version >= 3 &&
	     (rc = scalar_f(k, 4, &p->score_thr, "score_threshold"))) ||
	    (version >= 5 &&
	     (rc = scalar_f(k, 5, &p->sigma, "soft_nms_sigma"))))
		return rc;
	if (!(p->iou_thr >= 0 && p->iou_thr <= 1))
		return ge_k_fail(k, "iou_threshold must be in [0, 1]");
	if (!(p->sigma >= 0))
		return ge_k_fail(k, "soft_nms_sigma must be non-negative");
	return ge_k_work(k, ge_knn_mul(p->n, (uint64_t)mo + 32));
}

static int nms_kernel(ge_kctx *k, int version)
{
	nms p;
	cand *h;
	int32_t *sel;
	float *ssc;
	int64_t ns, len;
	uint64_t bytes;
	int pad, rc;
	if ((rc = nms_inputs(k, version, &p)))
		return rc;
	pad = version >= 4 && ge_k_attr_bool(k, "pad_to_max_output_size", 0);
	bytes = ge_knn_mul(p.n, sizeof(cand)) +
		ge_knn_mul(p.max_out < p.n ? p.max_out : p.n, 8) + 8;
	if (!(h = (cand *)ge_knn_scratch(k, bytes)))
		return GE_EINVAL;
	sel = (int32_t *)(h + p.n);
	ssc = (float *)(sel + (p.max_out < p.n ? p.max_out : p.n));
	{
		nms q = p;
		if (q.max_out > q.n)
			q.max_out = q.n;
		ns = nms_run(&q, h, sel, ssc);
	}
	len = pad ? p.max_out : ns;
	if (!ge_k_out(k, 0, DT_INT32, 1, &len) ||
	    (version >= 5 && !ge_k_out(k, 1, DT_FLOAT, 1, &len)) ||
	    (version >= 4 && !ge_k_out(k, version >= 5 ? 2 : 1, DT_INT32, 0,
				       NULL))) {
		ge_knn_scratch_free(k, (float *)h, bytes);
		return GE_EINVAL;
	}
	memcpy(k->out[0]->data, sel, ns * sizeof(int32_t));
	if (version >= 5)
		memcpy(k->out[1]->data, ssc, ns * sizeof(float));
	if (version >= 4)
		*(int32_t *)k->out[version >= 5 ? 2 : 1]->data = (int32_t)ns;
	ge_knn_scratch_free(k, (float *)h, bytes);
	return GE_OK;
}

static int k_nms2(ge_kctx *k) { return nms_kernel(k, 2); }
static int k_nms3(ge_kctx *k) { return nms_kernel(k, 3); }
static int k_nms4(ge_kctx *k) { return nms_kernel(k, 4); }
static int k_nms5(ge_kctx *k) { return nms_kernel(k, 5); }

/* ---------------------------------------------------------------- blocks */

/* SpaceToBatchND and BatchToSpaceND: the block geometry. */
typedef struct blocks {
	int m;                              /* block dims */
	int64_t block[GE_SHAPE_MAXRANK];
	int64_t pad[GE_SHAPE_MAXRANK][2];   /* paddings, or crops */
	int64_t nblock;                     /* product of block */
	int64_t rest;                       /* elements after the block dims */
} blocks;

static int blocks_read(ge_kctx *k, const ge_xt *x, blocks *g,
		       const char *pads)
{
	int64_t v[2 * GE_SHAPE_MAXRANK];
	const ge_xt *pt = k->in[2];
	int n;
	if (!dt_is_number(x->dtype) && x->dtype != DT_BOOL)
		return ge_k_fail(k, "input must hold numbers or bools");
	if ((n = ge_k_ints(k, 1, g->block, GE_SHAPE_MAXRANK)) < 0)
		return GE_EINVAL;
	g->m = n;
	if (n < 1 || x->rank < n + 1)
		return ge_k_fail(k, "block_shape has %d values for a %d-D "
				 "input", n, x->rank);
	if (pt->rank != 2 || pt->dims[0] != n || pt->dims[1] != 2)
		return ge_k_fail(k, "%s must be [%d, 2]", pads, n);
	{
		ge_xt flat = *pt;
		ge_kctx k2 = *k;
		ge_xt *ins[3] = {k->in[0], k->in[1], &flat};
		flat.rank = 1, flat.dims[0] = pt->n;
		k2.in = ins;
		if (ge_k_ints(&k2, 2, v, 2 * GE_SHAPE_MAXRANK) != 2 * n)
			return ge_k_fail(k, "%s must be int32 or int64", pads);
	}
	g->nblock = 1;
	for (int i = 0; i < n; i++) {
		g->pad[i][0] = v[2 * i], g->pad[i][1] = v[2 * i + 1];
		if (g->block[i] < 1 || g->block[i] > INT32_MAX)
			return ge_k_fail(k, "block_shape[%d] = %lld must be "
					 "positive", i,
					 (long long)g->block[i]);
		if (g->pad[i][0] < 0 || g->pad[i][1] < 0 ||
		    g->pad[i][0] > INT32_MAX || g->pad[i][1] > INT32_MAX)
			return ge_k_fail(k, "%s must be in [0, 2^31)", pads);
		g->nblock = (int64_t)ge_knn_mul(g->nblock, g->block[i]);
		if (g->nblock > INT32_MAX)
			return ge_k_fail(k, "the block is over 2^31-1");
	}
	g->rest = 1;
	for (int i = n + 1; i < x->rank; i++)
		g->rest *= x->dims[i];
	return GE_OK;
}

/* Walks every (batch, block offset, position) of the batched tensor bt
 * and moves its run of elements from or to the spatial tensor sp:
 * to_batch copies sp -> dst (bt's storage), else bt -> dst (sp's). */
static void blocks_move(const blocks *g, const ge_xt *sp, const ge_xt *bt,
			char *dst, int to_batch)
{
	size_t es = ge_xt_elem_size(sp->dtype), run = g->rest * es;
	int64_t B = sp->dims[0], nb = bt->dims[0];
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, off[GE_SHAPE_MAXRANK];
	const char *src = to_batch ? sp->data : bt->data;
	int64_t per = 1;
	if (bt->n == 0 || sp->n == 0)
		return;
	for (int i = 0; i < g->m; i++)
		per *= bt->dims[i + 1];
	for (int64_t ob = 0; ob < nb; ob++) {
		int64_t b = ob % B, o = ob / B;
		for (int i = g->m - 1; i >= 0; i--) {
			off[i] = o % g->block[i];
			o /= g->block[i];
		}
		for (int i = 0; i < g->m; i++)
			idx[i] = 0;
		for (int64_t p = 0;; p++) {
			/* the spatial element of batched position idx */
			int64_t s = b, inside = 1;
			for (int i = 0; i < g->m; i++) {
				int64_t x = idx[i] * g->block[i] + off[i] -
					    g->pad[i][0];
				if (x < 0 || x >= sp->dims[i + 1])
					inside = 0;
				s = s * sp->dims[i + 1] + x;
			}
			if (inside) {
				int64_t bi = ob * per + p;
				if (to_batch)
					memcpy(dst + bi * run,
					       src + s * run, run);
				else
					memcpy(dst + s * run,
					       src + bi * run, run);
			}
			{
				int i = g->m - 1;
				while (i >= 0 && ++idx[i] == bt->dims[i + 1])
					idx[i--] = 0;
				if (i < 0)
					break;
			}
		}
	}
}

static int k_space_to_batch(ge_kctx *k)
{
	blocks g;
	const ge_xt *x;
	int64_t od[GE_SHAPE_MAXRANK];
	ge_xt *o;
	int rc;
	if ((rc = ge_k_need(k, 3)))
		return rc;
	x = k->in[0];
	if ((rc = blocks_read(k, x, &g, "paddings")))
		return rc;
	memcpy(od, x->dims, sizeof(int64_t) * x->rank);
	od[0] = (int64_t)ge_knn_mul(x->dims[0], g.nblock);
	for (int i = 0; i < g.m; i++) {
		int64_t p = x->dims[i + 1] + g.pad[i][0] + g.pad[i][1];
		if (p % g.block[i])
			return ge_k_fail(k, "padded dimension %d (%lld) is not "
					 "a multiple of block_shape[%d] = %lld",
					 i + 1, (long long)p, i,
					 (long long)g.block[i]);
		od[i + 1] = p / g.block[i];
	}
	if ((rc = ge_k_work(k, (uint64_t)x->n)) ||
	    !(o = ge_k_out(k, 0, x->dtype, x->rank, od)))
		return rc ? rc : GE_EINVAL;
	blocks_move(&g, x, o, o->data, 1);
	return GE_OK;
}

static int k_batch_to_space(ge_kctx *k)
{
	blocks g;
	const ge_xt *x;
	int64_t od[GE_SHAPE_MAXRANK];
	ge_xt *o;
	int rc;
	if ((rc = ge_k_need(k, 3)))
		return rc;
	x = k->in[0];
	if ((rc = blocks_read(k, x, &g, "crops")))
		return rc;
	if (x->dims[0] % g.nblock)
		return ge_k_fail(k, "batch %lld is not a multiple of the block "
				 "size %lld", (long long)x->dims[0],
				 (long long)g.nblock);
	memcpy(od, x->dims, sizeof(int64_t) * x->rank);
	od[0] = x->dims[0] / g.nblock;
	for (int i = 0; i < g.m; i++) {
		int64_t full = (int64_t)ge_knn_mul(x->dims[i + 1], g.block[i]);
		if (full > INT64_MAX / 2 || g.pad[i][0] + g.pad[i][1] > full)
			return ge_k_fail(k, "crops of dimension %d exceed its "
					 "size %lld", i + 1, (long long)full);
		od[i + 1] = full - g.pad[i][0] - g.pad[i][1];
	}
	if ((rc = ge_k_work(k, (uint64_t)x->n)) ||
	    !(o = ge_k_out(k, 0, x->dtype, x->rank, od)))
		return rc ? rc : GE_EINVAL;
	blocks_move(&g, o, x, o->data, 0);
	return GE_OK;
}

/* Moves runs of `run` bytes between the depth side sm (the small image)
 * and the spatial side big: to_space copies src (sm's) into dst (big's),
 * else src (big's) into dst (sm's). */
static void ds_move(const ge_xt *sm, const ge_xt *big, int64_t bs,
		    int64_t run, char *dst, const char *src, int to_space)
{
	int64_t H = sm->dims[1], W = sm->dims[2];
	for (int64_t n = 0; n < sm->dims[0]; n++)
		for (int64_t h = 0; h < H; h++)
			for (int64_t w = 0; w < W; w++) {
				int64_t d0 = ((n * H + h) * W + w) * bs * bs;
				for (int64_t i = 0; i < bs; i++)
					for (int64_t j = 0; j < bs; j++) {
						int64_t d = (d0 + i * bs + j) *
							    run;
						int64_t s = ((n * big->dims[1] +
							h * bs + i) *
							big->dims[2] + w * bs +
							j) * run;
						if (to_space)
							memcpy(dst + s, src + d,
							       run);
						else
							memcpy(dst + d, src + s,
							       run);
					}
			}
}

/* DepthToSpace (to_space) and SpaceToDepth, NHWC: depth index
 * (i * bs + j) * c + q of a pixel is pixel (h * bs + i, w * bs + j),
 * channel q, of the other side. */
static int depth_space(ge_kctx *k, int to_space)
{
	const ge_xt *x;
	int64_t bs = ge_k_attr_int(k, "block_size", 0), od[4], c;
	size_t es;
	ge_xt *o;
	const ge_xt *big;
	char buf[96];
	int rc;
	if ((rc = ge_k_need(k, 1)))
		return rc;
	x = k->in[0];
	if (!ge_k_attr_str_is(k, "data_format", "NHWC", 1))
		return ge_k_fail(k, "only data_format NHWC is supported");
	if (x->rank != 4 || (!dt_is_number(x->dtype) && x->dtype != DT_BOOL))
		return ge_k_fail(k, "input must be 4-D numbers, not %s",
				 ge_xt_describe(x, buf, sizeof buf));
	if (bs < 2 || bs > 65536)
		return ge_k_fail(k, "block_size %lld must be at least 2",
				 (long long)bs);
	if (to_space) {
		if (x->dims[3] % (bs * bs))
			return ge_k_fail(k, "depth %lld is not a multiple of "
					 "block_size^2 = %lld",
					 (long long)x->dims[3],
					 (long long)(bs * bs));
		od[0] = x->dims[0], od[3] = x->dims[3] / (bs * bs);
		od[1] = (int64_t)ge_knn_mul(x->dims[1], bs);
		od[2] = (int64_t)ge_knn_mul(x->dims[2], bs);
	} else {
		if (x->dims[1] % bs || x->dims[2] % bs)
			return ge_k_fail(k, "height and width must be "
					 "multiples of block_size %lld",
					 (long long)bs);
		od[0] = x->dims[0], od[1] = x->dims[1] / bs;
		od[2] = x->dims[2] / bs;
		od[3] = (int64_t)ge_knn_mul(x->dims[3], bs * bs);
	}
	if ((rc = ge_k_work(k, (uint64_t)x->n)) ||
	    !(o = ge_k_out(k, 0, x->dtype, 4, od)))
		return rc ? rc : GE_EINVAL;
	if (o->n == 0)
		return GE_OK;
	big = to_space ? o : x;
	c = to_space ? od[3] : x->dims[3];
	es = ge_xt_elem_size(x->dtype);
	ds_move(to_space ? x : o, big, bs, (int64_t)(c * es), o->data,
		x->data, to_space);
	return GE_OK;
}

static int k_depth_to_space(ge_kctx *k) { return depth_space(k, 1); }
static int k_space_to_depth(ge_kctx *k) { return depth_space(k, 0); }

const ge_kdef ge_kernels_image[] = {
	{"BatchToSpaceND", k_batch_to_space, 0},
	{"DepthToSpace", k_depth_to_space, 0},
	{"NonMaxSuppressionV2", k_nms2, 0},
	{"NonMaxSuppressionV3", k_nms3, 0},
	{"NonMaxSuppressionV4", k_nms4, 0},
	{"NonMaxSuppressionV5", k_nms5, 0},
	{"ResizeBilinear", k_resize_bilinear, 0},
	{"ResizeNearestNeighbor", k_resize_nearest, 0},
	{"SpaceToBatchND", k_space_to_batch, 0},
	{"SpaceToDepth", k_space_to_depth, 0},
	{NULL, NULL, 0},
};
