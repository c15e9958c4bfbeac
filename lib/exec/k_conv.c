/*
 * exec/k_conv.c: Conv2D, _FusedConv2D, Conv2DBackpropInput,
 * Conv2DBackpropFilter, DepthwiseConv2dNative, FusedDepthwiseConv2dNative.
 *
 * Convolutions run in NHWC (an NCHW op is transposed in and out around
 * it).  Conv2D is one sgemm per band of output rows of one image: the
 * band's patches are packed (im2col) into a scratch matrix of
 * rows x (kh*kw*cin), whose column order is the HWIO filter's row order,
 * so the filter is the right-hand matrix as it is stored.  A band holds
 * at most BAND_FLOATS (1 MB) of patches, in cache while sgemm reads
 * them; above CONV_SPLIT_WORK the bands are cut smaller, at least
 * CONV_PARTS_PER_THREAD per thread, and the pool's threads (exec/xpool.h)
 * take them in turn, each into its own band of scratch, each band's
 * sgemm on the thread that packed it (exec/xgemm.h).  The scratch
 * (threads x one band) is charged to the memory budget while it lives.
 * A 1x1 convolution with stride 1 and no padding is the sgemm of the
 * input itself, split by rows over the pool.  The backprops are the same
 * products turned around: dX = col2im(dY x W^T), dW = sum over bands of
 * patches^T x dY, band by band, each product split by rows.
 *
 * Depthwise convolutions have no product to hand to BLAS (each channel
 * is its own filter of kh*kw taps: a product of k = 9 at most, which no
 * sgemm runs well).  Their output rows are split over the pool's
 * threads; with a multiplier of 1 and at least 8 channels, each block of
 * 8 channels is summed in vector registers over the tap rows inside the
 * input (the register-tiled path, dw_row_fast): a 3x3 filter with stride
 * and dilation 1 eight output pixels at a time, each group over all the
 * blocks before the next; other filters block by block, the 3x3's
 * weights held in registers; the rest
 * checks every tap (dw_row_general).  Both are compiled for AVX2 and FMA,
 * taken when the processor has them, and for the baseline.  Conv2D and
 * depthwise write every element of their output, which is allocated
 * unzeroed.
 */
#include "exec/k_nn_impl.h"

#include <assert.h>
#include <string.h>

#include "exec/xgemm.h"
#include "exec/xpool.h"

#define BAND_FLOATS (1u << 18) /* ~1 MB of patches per sgemm */

/* Everything a 2-D convolution needs, in NHWC terms. */
typedef struct conv {
	knn_layout l;           /* the activation (x, or dX for backprop) */
	int64_t kh, kw, cin, cout;
	knn_dim dh, dw;
	int64_t kdim;           /* kh * kw * cin */
} conv;

/* Checks a filter [kh, kw, cin, cout] against the activation's depth and
 * fills the geometry from the op's attrs. */
static int conv_setup(ge_kctx *k, const ge_xt *x, const ge_xt *f, conv *c,
		      int depthwise)
{
	char buf[96];
	int rc;
	if ((rc = ge_knn_layout_of(k, x, &c->l)))
		return rc;
	if (f->dtype != DT_FLOAT || f->rank != 4)
		return ge_k_fail(k, "filter must be float32 4-D, not %s",
				 ge_xt_describe(f, buf, sizeof buf));
	c->kh = f->dims[0], c->kw = f->dims[1];
	c->cin = f->dims[2], c->cout = f->dims[3];
	if (c->cin != c->l.c)
		return ge_k_fail(k, "filter's input depth %lld differs from "
				 "the input's %lld%s", (long long)c->cin,
				 (long long)c->l.c, depthwise ? "" :
				 " (grouped convolution is not supported)");
	if (c->kh > INT32_MAX || c->kw > INT32_MAX || c->cin > INT32_MAX ||
	    c->cout > INT32_MAX)
		return ge_k_fail(k, "filter dimension over 2^31-1");
	if ((rc = ge_knn_window2(k, &c->l, c->kh, c->kw, "dilations", 1, &c->dh,
			      &c->dw)))
		return rc;
	c->kdim = c->kh * c->kw * c->cin;
	if (c->kdim > INT32_MAX)
		return ge_k_fail(k, "filter of %lld x %lld x %lld is too large",
				 (long long)c->kh, (long long)c->kw,
				 (long long)c->cin);
	return GE_OK;
}

/* Output rows [oh0, oh1) of image b: their patches into p, one row of
 * kdim floats per output pixel, zero where the window leaves the input. */
static void im2col(const conv *c, const float *x, int64_t b, int64_t oh0,
		   int64_t oh1, float *p)
{
	int64_t H = c->l.h, W = c->l.w, C = c->cin;
	size_t cb = (size_t)C * sizeof(float);
	for (int64_t oh = oh0; oh < oh1; oh++)
		for (int64_t ow = 0; ow < c->dw.out; ow++) {
			for (int64_t i = 0; i < c->kh; i++) {
				int64_t ih = oh * c->dh.stride - c->dh.pad +
					     i * c->dh.dil;
				for (int64_t j = 0; j < c->kw; j++, p += C) {
					int64_t iw = ow * c->dw.stride -
						     c->dw.pad + j * c->dw.dil;
					if (ih < 0 || ih >= H || iw < 0 ||
					    iw >= W)
						memset(p, 0, cb);
					else
						memcpy(p, x + ((b * H + ih) * W +
							       iw) * C, cb);
				}
			}
		}
}

/* The inverse: adds the band's patch rows back into dx (col2im). */
static void col2im(const conv *c, const float *p, int64_t b, int64_t oh0,
		   int64_t oh1, float *dx)
{
	int64_t H = c->l.h, W = c->l.w, C = c->cin;
	for (int64_t oh = oh0; oh < oh1; oh++)
		for (int64_t ow = 0; ow < c->dw.out; ow++)
			for (int64_t i = 0; i < c->kh; i++) {
				int64_t ih = oh * c->dh.stride - c->dh.pad +
					     i * c->dh.dil;
				for (int64_t j = 0; j < c->kw; j++, p += C) {
					int64_t iw = ow * c->dw.stride -
						     c->dw.pad + j * c->dw.dil;
					float *d;
					if (ih < 0 || ih >= H || iw < 0 ||
					    iw >= W)
						continue;
					d = dx + ((b * H + ih) * W + iw) * C;
					for (int64_t q = 0; q < C; q++)
						d[q] += p[q];
				}
			}
}

/* Output rows per band: at least one. */
static int64_t band_rows(const conv *c)
{
	uint64_t per = ge_knn_mul((uint64_t)c->dw.out, (uint64_t)c->kdim);
	int64_t r = per ? (int64_t)(BAND_FLOATS / per) : c->dh.out;
	if (r < 1)
		r = 1;
	return r > c->dh.out ? c->dh.out : r;
}

static int pointwise(const conv *c)
{
	return c->kh == 1 && c->kw == 1 && c->dh.stride == 1 &&
	       c->dw.stride == 1 && c->dh.pad == 0 && c->dw.pad == 0 &&
	       c->dh.out == c->l.h && c->dw.out == c->l.w;
}

ge_kconv_counts ge_kconv_count;

/* A forward convolution cut into bands, each band a part of the pool's
 * job: rows output rows of one image, packed into the scratch of the
 * thread that runs it. */
typedef struct conv_job {
	const conv *c;
	const float *x, *f;
	float *y;
	const knn_epi *e;
	int64_t rows, nb;   /* rows per band, bands per image */
	float *scratch;     /* one band of patches per thread slot */
	uint64_t band;      /* floats of one band */
} conv_job;

static void conv_band(void *arg, int64_t part, int slot)
{
	const conv_job *j = arg;
	const conv *c = j->c;
	int64_t OW = c->dw.out, OH = c->dh.out;
	int64_t b = part / j->nb, oh = part % j->nb * j->rows;
	int64_t oh1 = oh + j->rows < OH ? oh + j->rows : OH;
	int64_t m = (oh1 - oh) * OW, off = (b * OH + oh) * OW;
	float *p = j->scratch + (uint64_t)slot * j->band, *yb = j->y + off * c->cout;

	/* the band lies in one image and fits its scratch */
	assert(b < c->l.n && oh < oh1 && (uint64_t)(m * c->kdim) <= j->band);
	im2col(c, j->x, b, oh, oh1, p);
	ge_xgemm_here(0, 0, 0, m, c->cout, c->kdim, p, c->kdim, j->f,
		      c->cout, 0.0, yb, c->cout);
	if (j->e)
		ge_knn_epi_apply(j->e, yb, m, c->cout, off * c->cout);
}

/* Bands and threads for a convolution of `work` multiply-adds: one
 * thread below CONV_SPLIT_WORK; otherwise bands of at most BAND_FLOATS
 * of patches, at least CONV_PARTS_PER_THREAD of them per thread when the
 * image has the rows. */
#define CONV_SPLIT_WORK (1u << 22)
#define CONV_PARTS_PER_THREAD 4
static int conv_plan(const conv *c, uint64_t work, int64_t *rows)
{
	int threads = work < CONV_SPLIT_WORK ? 1 : ge_xpool_threads();
	int64_t r = band_rows(c), want;
	if (threads > 1) {
		want = (c->l.n * c->dh.out + CONV_PARTS_PER_THREAD * threads -
			1) / (CONV_PARTS_PER_THREAD * threads);
		if (want < r)
			r = want < 1 ? 1 : want;
	}
	*rows = r;
	return threads;
}

/* y (NHWC, n x oh x ow x cout) = conv(x (NHWC), f) then the epilogue. */
static int conv_fwd(ge_kctx *k, const conv *c, const float *x,
		    const float *f, float *y, const knn_epi *e)
{
	int64_t OW = c->dw.out, OH = c->dh.out;
	conv_job j = {c, x, f, y, e, 0, 0, NULL, 0};
	uint64_t bytes;
	int threads;
	if (OH == 0 || OW == 0 || c->cout == 0 || c->l.n == 0)
		return GE_OK;
	if (c->kdim == 0) {
		memset(y, 0, ge_knn_mul(ge_knn_mul(c->l.n * OH, OW), c->cout) *
		       sizeof(float));
		if (e)
			ge_knn_epi_apply(e, y, c->l.n * OH * OW, c->cout, 0);
		return GE_OK;
	}
	if (pointwise(c)) {
		/* one product, split over the pool's threads */
		int64_t m = c->l.n * OH * OW;
		if (m > INT32_MAX)
			return ge_k_fail(k, "over 2^31-1 output pixels");
		ge_xgemm(0, 0, 0, m, c->cout, c->cin, x, c->cin, f, c->cout,
			 0.0, y, c->cout);
		if (e)
			ge_knn_epi_apply(e, y, m, c->cout, 0);
		return GE_OK;
	}
	threads = conv_plan(c, ge_knn_mul(ge_knn_mul(c->l.n * OH, OW),
				       ge_knn_mul(c->cout, c->kdim)), &j.rows);
	j.nb = (OH + j.rows - 1) / j.rows;
	j.band = ge_knn_mul(ge_knn_mul(j.rows, OW), c->kdim);
	bytes = ge_knn_mul(ge_knn_mul(j.band, threads), sizeof(float));
	if (!(j.scratch = ge_knn_scratch(k, bytes)))
		return GE_EINVAL;
	if (threads > 1)
		ge_kconv_count.conv_split++;
	/* each band's product on the thread that packed it */
	ge_xpool_run(c->l.n * j.nb, threads, conv_band, &j);
	ge_knn_scratch_free(k, j.scratch, bytes);
	return GE_OK;
}

static int conv2d(ge_kctx *k, int fused)
{
	conv c;
	knn_epi epi = {0};
	const float *x;
	float *xs, *y;
	uint64_t xb, yb;
	int rc;
	if ((rc = ge_k_need(k, 2)) || (rc = ge_knn_in_f32(k, 0, 4, "input")) ||
	    (rc = conv_setup(k, k->in[0], k->in[1], &c, 0)))
		return rc;
	if (fused && (rc = ge_knn_epi_parse(k, 2, c.cout, 1, &epi)))
		return rc;
	if (epi.add && (c.l.nchw || epi.add->dtype != DT_FLOAT ||
			(uint64_t)epi.add->n != ge_knn_mul(ge_knn_mul(c.l.n,
			c.dh.out * c.dw.out), c.cout))) {
		ge_knn_epi_done(&epi);
		return ge_k_fail(k, "the fused Add's input must be NHWC "
				 "float32 of the output's shape");
	}
	if ((rc = ge_k_work(k, ge_knn_mul(ge_knn_mul(c.l.n * c.dh.out, c.dw.out),
				       ge_knn_mul(c.cout, c.kdim))))) {
		ge_knn_epi_done(&epi);
		return rc;
	}
	if (!(x = ge_knn_nhwc_in(k, &c.l, k->in[0], &xb, &xs))) {
		ge_knn_epi_done(&epi);
		return GE_EINVAL;
	}
	if (!(y = ge_knn_out_nhwc_raw(k, &c.l, c.dh.out, c.dw.out, c.cout, &yb)))
		rc = GE_EINVAL;
	else if ((rc = conv_fwd(k, &c, x, k->in[1]->data, y,
				fused ? &epi : NULL))) {
		if (c.l.nchw)
			ge_knn_scratch_free(k, y, yb);
		ge_k_drop(k);
	} else
		ge_knn_out_done(k, &c.l, y, yb, c.dh.out * c.dw.out, c.cout);
	ge_knn_scratch_free(k, xs, xb);
	ge_knn_epi_done(&epi);
	return rc;
}

static int k_conv2d(ge_kctx *k) { return conv2d(k, 0); }
static int k_fused_conv2d(ge_kctx *k) { return conv2d(k, 1); }

/* ---------------------------------------------------------------- backprop */

/* The activation shape of a backprop from its input_sizes (or
 * filter_sizes) input as a fake tensor header, for conv_setup. */
static int sizes_in(ge_kctx *k, int i, int64_t d[4], const char *what)
{
	int n = ge_k_ints(k, i, d, 4);
	if (n < 0)
		return GE_EINVAL;
	if (n != 4)
		return ge_k_fail(k, "%s must have 4 values, has %d", what, n);
	for (int j = 0; j < 4; j++)
		if (d[j] < 0 || d[j] > INT32_MAX)
			return ge_k_fail(k, "%s[%d] = %lld is out of range",
					 what, j, (long long)d[j]);
	return GE_OK;
}

/* dy must be [n, oh, ow, cout] in data_format order. */
static int check_dy(ge_kctx *k, const conv *c, const ge_xt *dy)
{
	int64_t want[4] = {c->l.n, c->dh.out, c->dw.out, c->cout};
	char buf[96];
	if (c->l.nchw)
		want[1] = c->cout, want[2] = c->dh.out, want[3] = c->dw.out;
	if (dy->dtype != DT_FLOAT || dy->rank != 4 ||
	    memcmp(dy->dims, want, sizeof want))
		return ge_k_fail(k, "out_backprop must be float32[%lld,%lld,"
				 "%lld,%lld], not %s", (long long)want[0],
				 (long long)want[1], (long long)want[2],
				 (long long)want[3],
				 ge_xt_describe(dy, buf, sizeof buf));
	return GE_OK;
}

/* out_backprop (input 2) in NHWC: itself, or a transposed scratch. */
static int dy_nhwc(ge_kctx *k, const conv *c, const float **dy, float **s,
		   uint64_t *bytes)
{
	*dy = k->in[2]->data, *s = NULL, *bytes = 0;
	if (!c->l.nchw)
		return GE_OK;
	*bytes = (uint64_t)k->in[2]->n * sizeof(float);
	if (!(*s = ge_knn_scratch(k, *bytes)))
		return GE_EINVAL;
	ge_knn_to_nhwc(k->in[2]->data, *s, c->l.n, c->cout,
		    c->dh.out * c->dw.out);
	*dy = *s;
	return GE_OK;
}

/* dx (NHWC, zeroed) = col2im(dy x f^T), band by band. */
static int conv_bwd_input(ge_kctx *k, const conv *c, const float *dy,
			  const float *f, float *dx)
{
	int64_t OW = c->dw.out, OH = c->dh.out, rows = band_rows(c);
	uint64_t bytes = ge_knn_mul(ge_knn_mul(rows, OW), c->kdim * sizeof(float));
	float *p;
	if (OH == 0 || OW == 0 || c->kdim == 0 || c->l.n == 0)
		return GE_OK;
	if (!(p = ge_knn_scratch(k, bytes)))
		return GE_EINVAL;
	for (int64_t b = 0; b < c->l.n; b++)
		for (int64_t oh = 0; oh < OH; oh += rows) {
			int64_t oh1 = oh + rows < OH ? oh + rows : OH;
			int64_t m = (oh1 - oh) * OW;
			memset(p, 0, m * c->kdim * sizeof(float));
			if (c->cout)
				ge_xgemm(0, 0, 1, m, c->kdim, c->cout,
					 dy + (b * OH + oh) * OW * c->cout,
					 c->cout, f, c->cout, 0.0, p,
					 c->kdim);
			col2im(c, p, b, oh, oh1, dx);
		}
	ge_knn_scratch_free(k, p, bytes);
	return GE_OK;
}

static int k_conv_bwd_input(ge_kctx *k)
{
	int64_t d[4];
	ge_xt hdr = {0};
	conv c;
	const float *dy;
	float *dys, *dx;
	uint64_t dyb, dxb;
	int rc;
	if ((rc = ge_k_need(k, 3)) ||
	    (rc = sizes_in(k, 0, d, "input_sizes")))
		return rc;
	hdr.dtype = DT_FLOAT, hdr.rank = 4;
	memcpy(hdr.dims, d, sizeof d);
	if ((rc = conv_setup(k, &hdr, k->in[1], &c, 0)) ||
	    (rc = check_dy(k, &c, k->in[2])) ||
	    (rc = ge_k_work(k, ge_knn_mul(ge_knn_mul(c.l.n * c.dh.out, c.dw.out),
				       ge_knn_mul(c.cout, c.kdim)))))
		return rc;
	if ((rc = dy_nhwc(k, &c, &dy, &dys, &dyb)))
		return rc;
	if (!(dx = ge_knn_out_nhwc(k, &c.l, c.l.h, c.l.w, c.cin, &dxb)))
		rc = GE_EINVAL;
	else {
		if (c.l.nchw)
			memset(dx, 0, dxb);
		if ((rc = conv_bwd_input(k, &c, dy, k->in[1]->data, dx))) {
			if (c.l.nchw)
				ge_knn_scratch_free(k, dx, dxb);
			ge_k_drop(k);
		} else
			ge_knn_out_done(k, &c.l, dx, dxb, c.l.h * c.l.w, c.cin);
	}
	ge_knn_scratch_free(k, dys, dyb);
	return rc;
}

/* dw [kh, kw, cin, cout] (zeroed) = sum over bands of patches^T x dy. */
static int conv_bwd_filter(ge_kctx *k, const conv *c, const float *x,
			   const float *dy, float *dw)
{
	int64_t OW = c->dw.out, OH = c->dh.out, rows = band_rows(c);
	uint64_t bytes = ge_knn_mul(ge_knn_mul(rows, OW), c->kdim * sizeof(float));
	float *p;
	if (OH == 0 || OW == 0 || c->kdim == 0 || c->cout == 0 ||
	    c->l.n == 0)
		return GE_OK;
	if (!(p = ge_knn_scratch(k, bytes)))
		return GE_EINVAL;
	for (int64_t b = 0; b < c->l.n; b++)
		for (int64_t oh = 0; oh < OH; oh += rows) {
			int64_t oh1 = oh + rows < OH ? oh + rows : OH;
			int64_t m = (oh1 - oh) * OW;
			im2col(c, x, b, oh, oh1, p);
			ge_xgemm(0, 1, 0, c->kdim, c->cout, m, p, c->kdim,
				 dy + (b * OH + oh) * OW * c->cout, c->cout,
				 1.0, dw, c->cout);
		}
	ge_knn_scratch_free(k, p, bytes);
	return GE_OK;
}

static int k_conv_bwd_filter(ge_kctx *k)
{
	int64_t d[4];
	ge_xt hdr = {0};
	conv c;
	const float *x, *dy;
	float *xs = NULL, *dys = NULL;
	uint64_t xb = 0, dyb = 0;
	ge_xt *o;
	int rc;
	if ((rc = ge_k_need(k, 3)) || (rc = ge_knn_in_f32(k, 0, 4, "input")) ||
	    (rc = sizes_in(k, 1, d, "filter_sizes")))
		return rc;
	hdr.dtype = DT_FLOAT, hdr.rank = 4;
	memcpy(hdr.dims, d, sizeof d);
	if ((rc = conv_setup(k, k->in[0], &hdr, &c, 0)) ||
	    (rc = check_dy(k, &c, k->in[2])) ||
	    (rc = ge_k_work(k, ge_knn_mul(ge_knn_mul(c.l.n * c.dh.out, c.dw.out),
				       ge_knn_mul(c.cout, c.kdim)))))
		return rc;
	if (!(x = ge_knn_nhwc_in(k, &c.l, k->in[0], &xb, &xs)))
		return GE_EINVAL;
	if ((rc = dy_nhwc(k, &c, &dy, &dys, &dyb))) {
		ge_knn_scratch_free(k, xs, xb);
		return rc;
	}
	if (!(o = ge_k_out(k, 0, DT_FLOAT, 4, d)))
		rc = GE_EINVAL;
	else if ((rc = conv_bwd_filter(k, &c, x, dy, o->data)))
		ge_k_drop(k);
	ge_knn_scratch_free(k, dys, dyb);
	ge_knn_scratch_free(k, xs, xb);
	return rc;
}

/* ---------------------------------------------------------------- depthwise */

/* The depthwise loops are compiled vectorized (-O2 leaves loops of
 * unknown length scalar) and, on x86-64 with GCC, twice: for AVX2 with
 * FMA, taken when the processor has them, and for the baseline. */
#if defined(__GNUC__) && !defined(__clang__)
#define DW_OPT __attribute__((optimize("O3")))
#define DW_INLINE __attribute__((always_inline, optimize("O3")))
#else
#define DW_OPT
#define DW_INLINE
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define DW_AVX2 1
#endif

/* Eight floats: vector registers on any target GCC or clang knows (two
 * SSE registers on the x86-64 baseline, one AVX register with AVX2). */
typedef float dw_vec __attribute__((vector_size(32)));
#define DW_V 8

/* Below this many multiply-adds a depthwise op runs on one thread. */
#define DW_SPLIT_WORK (1u << 17)
#define DW_PARTS_PER_THREAD 4

/* A depthwise run: the op's geometry, its tensors (NHWC), and the
 * output columns [lo, hi) whose taps all fall inside the input's width. */
typedef struct dw_job {
	const conv *c;
	int64_t mult;
	const float *x, *f;
	float *y;
	const knn_epi *e;   /* or NULL */
	int64_t lo, hi;
	int64_t rows, per;  /* output rows (n * oh); rows per part */
	void (*row)(const struct dw_job *, int64_t, int64_t, float *);
} dw_job;

/* Unaligned loads and stores of eight floats (GCC and clang let a
 * vector of floats alias floats). */
typedef float dw_uvec __attribute__((vector_size(32), aligned(4)));
#define dw_ld(p) (*(const dw_uvec *)(p))
#define dw_st(p, v) (*(dw_uvec *)(p) = (v))

/* The general path for one channel: channel q of output pixel (oh, ow)
 * of image b with multiplier 1, each tap checked against the input's
 * bounds (the channels past the last block of 8, or all of them when
 * there are fewer than 8). */
static inline DW_INLINE void dw_pixel1(const conv *c, const float *x,
				       const float *f, int64_t b, int64_t oh,
				       int64_t ow, int64_t q, float *y)
{
	float acc = 0;
	for (int64_t i = 0; i < c->kh; i++) {
		int64_t ih = oh * c->dh.stride - c->dh.pad + i * c->dh.dil;
		if (ih < 0 || ih >= c->l.h)
			continue;
		for (int64_t j = 0; j < c->kw; j++) {
			int64_t iw = ow * c->dw.stride - c->dw.pad +
				     j * c->dw.dil;
			if (iw < 0 || iw >= c->l.w)
				continue;
			acc += x[((b * c->l.h + ih) * c->l.w + iw) * c->cin +
				 q] * f[(i * c->kw + j) * c->cin + q];
		}
	}
	y[q] = acc;
}

/* The register-tiled path, for one block of 8 channels of output
 * columns [ow0, ow1), whose taps are all inside the input's width, over
 * the tap rows inside its height.  x is the input at the block's
 * channel, on the first of those tap rows and at column 0; rstep the
 * distance between tap rows; f the filter's first of those tap rows and
 * y the output row, both at the block's channel.  Each output pixel sums its
 * taps in the reference order (row by row, left to right), so that any
 * split of the rows gives the same bits. */

/* One tap row of eight neighbouring output pixels of a 3x3 filter with
 * stride and dilation 1, for one block of 8 channels: ten input columns
 * (r, a pixel C floats from the next), each loaded once, and the row's
 * three weights (f).  Eight sums, so that eight independent chains of
 * multiply-adds keep both pipes busy (each waits four cycles for the one
 * before it in its pixel's sum). */
static inline DW_INLINE void dw_row8(const float *r, int64_t C,
				     const float *f, dw_vec a[8])
{
	dw_vec wa = dw_ld(f), wb = dw_ld(f + C), wc = dw_ld(f + 2 * C);
	dw_vec x0 = dw_ld(r), x1 = dw_ld(r + C);
	for (int o = 0; o < 8; o++) {
		dw_vec x2 = dw_ld(r + (o + 2) * C);
		a[o] += x0 * wa, a[o] += x1 * wb, a[o] += x2 * wc;
		x0 = x1, x1 = x2;
	}
}

/* One output pixel of a 3x3 filter at p (its tap (0, 0)); dc is the
 * dilation times C. */
static inline DW_INLINE void dw_px3(const float *p, int64_t rstep,
				    int64_t dc, const dw_vec w[9], float *y)
{
	dw_vec a = {0};
	for (int i = 0; i < 3; i++, p += rstep) {
		a += dw_ld(p) * w[3 * i];
		a += dw_ld(p + dc) * w[3 * i + 1];
		a += dw_ld(p + 2 * dc) * w[3 * i + 2];
	}
	dw_st(y, a);
}

/* A 3x3 filter with stride and dilation 1, over every whole block of 8
 * channels (x, f and y at channel 0): eight output pixels at a time, and
 * for each group all the blocks, so that the group's ten input columns
 * of three rows (7.5 KB at 64 channels) stay in the first-level cache
 * from one block to the next; the input walked block by block fell out
 * of it between blocks and took half as long again.  A span not a
 * multiple of 8 ends with a group overlapping the one before, whose
 * pixels are computed again the same way, to the same bits. */
static inline DW_INLINE void dw_span3_s1(const float *x, int64_t rstep,
					 const float *f, int64_t C,
					 int64_t ow0, int64_t ow1,
					 int64_t pad, float *y)
{
	int64_t nb = C / DW_V * DW_V;
	if (ow1 - ow0 < 8) {
		for (int64_t q = 0; q < nb; q += DW_V) {
			dw_vec w[9];
			for (int t = 0; t < 9; t++)
				w[t] = dw_ld(f + t * C + q);
			for (int64_t ow = ow0; ow < ow1; ow++)
				dw_px3(x + (ow - pad) * C + q, rstep, C, w,
				       y + ow * C + q);
		}
		return;
	}
	for (int64_t ow = ow0; ow < ow1; ow += 8) {
		if (ow + 8 > ow1)
			ow = ow1 - 8;
		const float *r = x + (ow - pad) * C;
		float *yo = y + ow * C;
		for (int64_t q = 0; q < nb; q += DW_V) {
			dw_vec a[8] = {{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}};
			dw_row8(r + q, C, f + q, a);
			dw_row8(r + rstep + q, C, f + 3 * C + q, a);
			dw_row8(r + 2 * rstep + q, C, f + 6 * C + q, a);
			for (int o = 0; o < 8; o++)
				dw_st(yo + o * C + q, a[o]);
		}
	}
}

/* A 3x3 filter with any stride or dilation, one block of 8 channels:
 * its nine weights in registers for the whole span. */
static inline DW_INLINE void dw_span3(const float *x, int64_t rstep,
				      const float *f, int64_t C, int64_t ow0,
				      int64_t ow1, int64_t s, int64_t d,
				      int64_t pad, float *y)
{
	dw_vec w[9];
	const float *r = x + (ow0 * s - pad) * C;
	for (int t = 0; t < 9; t++)
		w[t] = dw_ld(f + t * C);
	for (int64_t ow = ow0; ow < ow1; ow++, r += s * C)
		dw_px3(r, rstep, d * C, w, y + ow * C);
}

/* Any other filter size: the weights read from the filter (in cache). */
static inline DW_INLINE void dw_span(const float *x, int64_t rstep,
				     const float *f, int64_t C, int64_t ow0,
				     int64_t ow1, int64_t s, int64_t d,
				     int64_t pad, int64_t kh, int64_t kw,
				     float *y)
{
	const float *r = x + (ow0 * s - pad) * C;
	for (int64_t ow = ow0; ow < ow1; ow++, r += s * C) {
		dw_vec a = {0};
		const float *p = r, *fp = f;
		for (int64_t i = 0; i < kh; i++, p += rstep)
			for (int64_t j = 0; j < kw; j++, fp += C)
				a += dw_ld(p + j * d * C) * dw_ld(fp);
		dw_st(y + ow * C, a);
	}
}

/* The tap rows [*i0, *i1) of output row oh that fall inside the
 * input; *i0 == *i1 when none does. */
static void dw_tap_rows(const conv *c, int64_t oh, int64_t *i0, int64_t *i1)
{
	int64_t h0 = oh * c->dh.stride - c->dh.pad, dl = c->dh.dil;
	*i0 = h0 >= 0 ? 0 : (-h0 + dl - 1) / dl;
	*i1 = h0 >= c->l.h ? 0 : (c->l.h - 1 - h0) / dl + 1;
	*i1 = *i1 < c->kh ? *i1 : c->kh;
	*i0 = *i0 < *i1 ? *i0 : *i1;
}

/* Edge column ow of a block: x and f at tap row i0 as for dw_span, ni
 * tap rows, the taps left or right of the input skipped. */
static inline DW_INLINE void dw_edge(const conv *c, const float *x,
				     int64_t rstep, const float *f, int64_t ni,
				     int64_t ow, float *y)
{
	int64_t C = c->cin, W = c->l.w, d = c->dw.dil;
	int64_t w0 = ow * c->dw.stride - c->dw.pad;
	int64_t j0 = w0 >= 0 ? 0 : (-w0 + d - 1) / d;
	int64_t j1 = w0 >= W ? 0 : (W - 1 - w0) / d + 1;
	dw_vec a = {0};
	j1 = j1 < c->kw ? j1 : c->kw;
	for (int64_t i = 0; i < ni; i++)
		for (int64_t j = j0; j < j1; j++)
			a += dw_ld(x + i * rstep + (w0 + j * d) * C) *
			     dw_ld(f + (i * c->kw + j) * C);
	dw_st(y + ow * C, a);
}

/* Output row oh of image b with multiplier 1 and at least one block of
 * channels: the columns [lo, hi) by dw_span3_s1 (all tap rows inside,
 * 3x3, stride and dilation 1; all blocks at once), or for each block of
 * 8 by dw_span3 (all tap rows inside, 3x3) or dw_span (the tap rows
 * inside); then for each block of 8 the edge
 * columns by dw_edge; the channels past the last block one by one. */
static inline DW_INLINE void dw_row_fast(const dw_job *j, int64_t b,
					 int64_t oh, float *y)
{
	const conv *c = j->c;
	int64_t C = c->cin, H = c->l.h, W = c->l.w, q = 0, i0, i1, ni;
	int64_t s = c->dw.stride, d = c->dw.dil, pad = c->dw.pad;
	int64_t h0 = oh * c->dh.stride - c->dh.pad, rstep = c->dh.dil * W * C;
	const float *xr, *fr;
	int sq;

	dw_tap_rows(c, oh, &i0, &i1);
	if (i0 == i1) {
		memset(y, 0, c->dw.out * C * sizeof(float));
		return;
	}
	ni = i1 - i0;
	xr = j->x + (b * H + h0 + i0 * c->dh.dil) * W * C;
	fr = j->f + i0 * c->kw * C;
	sq = ni == 3 && c->kh == 3 && c->kw == 3;
	/* the entry conditions of the tiled path */
	assert(j->mult == 1 && C >= DW_V && 0 <= i0 && i1 <= c->kh);
	assert(h0 + i0 * c->dh.dil >= 0 && h0 + (i1 - 1) * c->dh.dil < H);
	assert(0 <= j->lo && j->lo <= j->hi && j->hi <= c->dw.out);
	assert(j->lo == j->hi || (j->lo * s - pad >= 0 &&
				  (j->hi - 1) * s - pad + (c->kw - 1) * d < W));
	int s1 = sq && s == 1 && d == 1;
	if (s1) /* all the blocks at once */
		dw_span3_s1(xr, rstep, fr, C, j->lo, j->hi, pad, y);
	for (; q + DW_V <= C; q += DW_V) {
		if (s1)
			; /* summed above */
		else if (sq)
			dw_span3(xr + q, rstep, fr + q, C, j->lo, j->hi, s, d,
				 pad, y + q);
		else
			dw_span(xr + q, rstep, fr + q, C, j->lo, j->hi, s, d,
				pad, ni, c->kw, y + q);
		for (int64_t ow = 0; ow < j->lo; ow++)
			dw_edge(c, xr + q, rstep, fr + q, ni, ow, y + q);
		for (int64_t ow = j->hi; ow < c->dw.out; ow++)
			dw_edge(c, xr + q, rstep, fr + q, ni, ow, y + q);
	}
	for (; q < C; q++)
		for (int64_t ow = 0; ow < c->dw.out; ow++)
			dw_pixel1(c, j->x, j->f, b, oh, ow, q, y + ow * C);
}

/* The general path: any row, any multiplier. */
static inline DW_INLINE void dw_row_general(const dw_job *j, int64_t b,
					    int64_t oh, float *y)
{
	const conv *c = j->c;
	int64_t C = c->cin, mult = j->mult, CO = C * mult;
	for (int64_t ow = 0; ow < c->dw.out; ow++, y += CO) {
		if (mult == 1) {
			for (int64_t q = 0; q < C; q++)
				dw_pixel1(c, j->x, j->f, b, oh, ow, q, y);
			continue;
		}
		memset(y, 0, CO * sizeof(float));
		for (int64_t i = 0; i < c->kh; i++) {
			int64_t ih = oh * c->dh.stride - c->dh.pad +
				     i * c->dh.dil;
			if (ih < 0 || ih >= c->l.h)
				continue;
			for (int64_t t = 0; t < c->kw; t++) {
				int64_t iw = ow * c->dw.stride - c->dw.pad +
					     t * c->dw.dil;
				const float *xp, *fp;
				if (iw < 0 || iw >= c->l.w)
					continue;
				xp = j->x + ((b * c->l.h + ih) * c->l.w + iw) *
				     C;
				fp = j->f + (i * c->kw + t) * CO;
				for (int64_t q = 0; q < C; q++)
					for (int64_t m = 0; m < mult; m++)
						y[q * mult + m] += xp[q] *
							fp[q * mult + m];
			}
		}
	}
}

/* Whether the job takes the tiled path. */
static int dw_fast(const dw_job *j)
{
	return j->mult == 1 && j->c->cin >= DW_V;
}

static inline DW_INLINE void dw_row_body(const dw_job *j, int64_t b,
					 int64_t oh, float *y)
{
	if (dw_fast(j))
		dw_row_fast(j, b, oh, y);
	else
		dw_row_general(j, b, oh, y);
}

static DW_OPT void dw_row_base(const dw_job *j, int64_t b, int64_t oh,
			       float *y)
{
	dw_row_body(j, b, oh, y);
}

#ifdef DW_AVX2
__attribute__((target("avx2,fma")))
static DW_OPT void dw_row_avx2(const dw_job *j, int64_t b, int64_t oh,
			       float *y)
{
	dw_row_body(j, b, oh, y);
}
#endif

static void (*dw_row_pick(void))(const dw_job *, int64_t, int64_t, float *)
{
#ifdef DW_AVX2
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return dw_row_avx2;
#endif
	return dw_row_base;
}

/* Part p of the job: output rows [p * per, (p + 1) * per) of all the
 * images, then their epilogue. */
static void dw_part(void *arg, int64_t p, int slot)
{
	const dw_job *j = arg;
	int64_t OH = j->c->dh.out, co = j->c->cin * j->mult;
	int64_t r1 = (p + 1) * j->per < j->rows ? (p + 1) * j->per : j->rows;
	(void)slot;
	for (int64_t r = p * j->per; r < r1; r++) {
		float *yr = j->y + r * j->c->dw.out * co;
		j->row(j, r / OH, r % OH, yr);
		if (j->e)
			ge_knn_epi_apply(j->e, yr, j->c->dw.out, co, 0);
	}
}

/* The columns [lo, hi) whose taps are all inside the input's width. */
static void dw_columns(const conv *c, int64_t *lo, int64_t *hi)
{
	int64_t s = c->dw.stride, ow = c->dw.out;
	int64_t num = c->l.w - 1 + c->dw.pad - (c->kw - 1) * c->dw.dil;
	*lo = (c->dw.pad + s - 1) / s;
	*hi = num < 0 ? 0 : num / s + 1;
	*lo = *lo < ow ? *lo : ow;
	*hi = *hi < ow ? *hi : ow;
	*hi = *hi < *lo ? *lo : *hi;
}

/* Runs the depthwise job over the pool's threads. */
static void dw_run(dw_job *j, uint64_t work)
{
	int threads = work < DW_SPLIT_WORK ? 1 : ge_xpool_threads();
	int64_t parts = threads * DW_PARTS_PER_THREAD;
	dw_columns(j->c, &j->lo, &j->hi);
	j->row = dw_row_pick();
	j->rows = j->c->l.n * j->c->dh.out;
	parts = parts < j->rows ? parts : j->rows;
	j->per = (j->rows + parts - 1) / parts;
	if (dw_fast(j))
		ge_kconv_count.dw_fast += j->rows * (j->c->cin / DW_V);
	else
		ge_kconv_count.dw_general += j->rows;
	if (threads > 1)
		ge_kconv_count.dw_split++;
	ge_xpool_run((j->rows + j->per - 1) / j->per, threads, dw_part, j);
}

static int depthwise(ge_kctx *k, int fused)
{
	conv c;
	knn_epi epi = {0};
	const float *x;
	float *xs, *y;
	uint64_t xb, yb, work;
	int64_t mult, co;
	int rc;
	if ((rc = ge_k_need(k, 2)) || (rc = ge_knn_in_f32(k, 0, 4, "input")) ||
	    (rc = conv_setup(k, k->in[0], k->in[1], &c, 1)))
		return rc;
	mult = c.cout;
	if (ge_knn_mul(c.cin, mult) > INT32_MAX)
		return ge_k_fail(k, "output depth over 2^31-1");
	co = c.cin * mult;
	if (fused && (rc = ge_knn_epi_parse(k, 2, co, 0, &epi)))
		return rc;
	work = ge_knn_mul(ge_knn_mul(c.l.n * c.dh.out, c.dw.out),
		       ge_knn_mul(co, c.kh * c.kw));
	if ((rc = ge_k_work(k, work))) {
		ge_knn_epi_done(&epi);
		return rc;
	}
	if (!(x = ge_knn_nhwc_in(k, &c.l, k->in[0], &xb, &xs))) {
		ge_knn_epi_done(&epi);
		return GE_EINVAL;
	}
	if (!(y = ge_knn_out_nhwc_raw(k, &c.l, c.dh.out, c.dw.out, co, &yb)))
		rc = GE_EINVAL;
	else if (k->out[0]->n == 0)
		ge_knn_out_done(k, &c.l, y, yb, 0, 0);
	else {
		dw_job j = {&c, mult, x, k->in[1]->data, y,
			    fused ? &epi : NULL, 0, 0, 0, 0, NULL};
		dw_run(&j, work);
		ge_knn_out_done(k, &c.l, y, yb, c.dh.out * c.dw.out, co);
	}
	ge_knn_scratch_free(k, xs, xb);
	ge_knn_epi_done(&epi);
	return rc;
}

static int k_depthwise(ge_kctx *k) { return depthwise(k, 0); }
static int k_fused_depthwise(ge_kctx *k) { return depthwise(k, 1); }

const ge_kdef ge_kernels_conv[] = {
	{"Conv2D", k_conv2d, 0},
	{"Conv2DBackpropFilter", k_conv_bwd_filter, 0},
	{"Conv2DBackpropInput", k_conv_bwd_input, 0},
	{"DepthwiseConv2dNative", k_depthwise, 0},
	{"FusedDepthwiseConv2dNative", k_fused_depthwise, 0},
	{"_FusedConv2D", k_fused_conv2d, 0},
	{NULL, NULL, 0},
};
