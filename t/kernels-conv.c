/*
 * kernels-conv: the fast paths of the convolution kernels (exec/k_conv.c)
 * against a reference computed here in double with plain loops, each
 * shape run on one thread and on two (exec/xpool.h):
 *
 * - depthwise: the register-tiled path (blocks of 8 channels, the 3x3
 *   stride-1 and 3x3 forms and the general one) and its edges, over
 *   channel counts that are not a multiple of 8, strides, dilations,
 *   SAME/VALID/EXPLICIT padding, batch > 1, a 1x1 image, empty tensors,
 *   a channel multiplier of 2 and the fused epilogue; the two thread
 *   counts must give the same bits;
 * - Conv2D: bands of patches split over the threads, with strides,
 *   dilations, EXPLICIT padding, a strided 1x1 and a residual Add whose
 *   offset each band must find.
 *
 * ge_kconv_count counts what ran, so that each case checks it reached
 * the path it is there for.  The pool itself (exec/xpool.h) must run
 * every part once, on a slot below its thread count, and a run from
 * inside a part on that part's thread.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "exec/kernel.h"
#include "exec/xpool.h"
#include "exec/xtensor.h"
#include "tap.h"
#include "testutil.h"

#define TOL 2e-5

static ge_xbudget budget;
static char errmsg[1024];

static uint64_t seed = 4242;
static double urand(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
}

/* A float32 tensor of random values in [-1, 1]. */
static ge_xt *rnd(int rank, const int64_t *d)
{
	ge_error err;
	ge_xt *t = ge_xt_new(1, rank, d, &budget, "test", &err);
	if (!t) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	for (int64_t i = 0; i < t->n; i++)
		((float *)t->data)[i] = (float)urand();
	return t;
}

static ge_xt *rnd4(int a, int b, int c, int d)
{
	int64_t dims[4] = {a, b, c, d};
	return rnd(4, dims);
}

/* Frees a block of n floats of NaN, which the output allocated next is
 * likely to reuse: an element the kernel fails to write then shows. */
static void poison(int64_t n)
{
	int64_t d[1] = {n};
	ge_error err;
	ge_xt *t = ge_xt_new(1, 1, d, &budget, "poison", &err);
	for (int64_t i = 0; t && i < n; i++)
		((float *)t->data)[i] = NAN;
	ge_xt_unref(t);
}

/* Runs a one-output op on in[0..nin) (borrowed) on `threads` threads;
 * n is the size of the output expected. */
static ge_xt *run1(const char *type, const char *attrs, ge_xt **in, int nin,
		   int threads, int64_t n)
{
	char txt[4096];
	ge_error err = {0};
	ge_xt *out[1] = {NULL};
	snprintf(txt, sizeof txt, "node { name: \"op\" op: \"%s\" %s }", type,
		 attrs);
	ge_graph *g = parse(txt);
	const ge_kdef *d = ge_kernel_find(type);
	ge_kctx k = {g, OP(g, "op"), type, "op", in, nin, out, 1, &budget,
		     NULL, &err};
	ge_xpool_set_threads(threads);
	poison(n);
	errmsg[0] = 0;
	if (!d || d->fn(&k)) {
		snprintf(errmsg, sizeof errmsg, "%s", d ? err.msg : "no kernel");
		ge_xt_unref(out[0]);
		out[0] = NULL;
	}
	ge_xpool_set_threads(0);
	ge_graph_free(g);
	return out[0];
}

/* ---------------------------------------------------------------- geometry */

typedef struct geo {
	int n, h, w, c, kh, kw, co;   /* co: the filter's last dim */
	int sh, sw, dh, dw;
	int mode;                     /* 0 VALID, 1 SAME, 2 EXPLICIT */
	int pt, pb, pl, pr;
	int oh, ow, ph, pw;           /* worked out by geo_solve */
} geo;

static void geo_solve(geo *g)
{
	int eh = (g->kh - 1) * g->dh + 1, ew = (g->kw - 1) * g->dw + 1;
	if (g->mode == 1) {
		g->oh = (g->h + g->sh - 1) / g->sh;
		g->ow = (g->w + g->sw - 1) / g->sw;
		int th = (g->oh - 1) * g->sh + eh - g->h;
		int tw = (g->ow - 1) * g->sw + ew - g->w;
		g->ph = th > 0 ? th / 2 : 0, g->pw = tw > 0 ? tw / 2 : 0;
	} else {
		int ph = g->mode ? g->pt + g->pb : 0;
		int pw = g->mode ? g->pl + g->pr : 0;
		g->oh = (g->h + ph - eh) / g->sh + 1;
		g->ow = (g->w + pw - ew) / g->sw + 1;
		g->ph = g->mode ? g->pt : 0, g->pw = g->mode ? g->pl : 0;
	}
}

static int64_t out_count(const geo *g, int depthwise)
{
	return (int64_t)g->n * g->oh * g->ow * (depthwise ? g->c * g->co : g->co);
}

/* The convolution (depthwise: multiplier co) in NHWC, in double. */
static double *ref_conv(const geo *g, const ge_xt *x, const ge_xt *f,
			int depthwise)
{
	int oc = depthwise ? g->c * g->co : g->co;
	double *y = calloc((size_t)out_count(g, depthwise) + 1, sizeof *y);
	const float *X = x->data, *Fl = f->data;
	for (int b = 0; b < g->n; b++)
	for (int oh = 0; oh < g->oh; oh++)
	for (int ow = 0; ow < g->ow; ow++)
	for (int o = 0; o < oc; o++) {
		double s = 0;
		for (int i = 0; i < g->kh; i++)
		for (int j = 0; j < g->kw; j++) {
			int ih = oh * g->sh - g->ph + i * g->dh;
			int iw = ow * g->sw - g->pw + j * g->dw;
			if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
				continue;
			const float *xp = X + ((b * g->h + ih) * g->w + iw) * g->c;
			const float *fp = Fl + (i * g->kw + j) * g->c * g->co;
			if (depthwise)
				s += xp[o / g->co] * (double)fp[o];
			else
				for (int q = 0; q < g->c; q++)
					s += xp[q] * (double)fp[q * g->co + o];
		}
		y[((b * g->oh + oh) * g->ow + ow) * oc + o] = s;
	}
	return y;
}

static char *ring(void)
{
	static char bufs[8][1024];
	static int turn;
	return bufs[turn++ & 7];
}

/* The op's attrs from g (NHWC), plus `extra`. */
static const char *attrs(const geo *g, const char *extra)
{
	static const char *pad[] = {"VALID", "SAME", "EXPLICIT"};
	char *b = ring();
	int len = snprintf(b, 1024,
		"attr { key: \"strides\" value { list { i: 1 i: %d i: %d i: 1 } } } "
		"attr { key: \"dilations\" value { list { i: 1 i: %d i: %d i: 1 } } } "
		"attr { key: \"padding\" value { s: \"%s\" } } ",
		g->sh, g->sw, g->dh, g->dw, pad[g->mode]);
	if (g->mode == 2)
		len += snprintf(b + len, 1024 - len,
			"attr { key: \"explicit_paddings\" value { list { i: 0 "
			"i: 0 i: %d i: %d i: %d i: %d i: 0 i: 0 } } } ",
			g->pt, g->pb, g->pl, g->pr);
	snprintf(b + len, 1024 - len, "%s", extra);
	return b;
}

static const char *name(const geo *g)
{
	static const char *pad[] = {"VALID", "SAME", "EXPLICIT"};
	char *b = ring();
	snprintf(b, 1024, "x[%d,%d,%d,%d] f[%d,%d,%d,%d] s%d,%d d%d,%d %s",
		 g->n, g->h, g->w, g->c, g->kh, g->kw, g->c, g->co, g->sh,
		 g->sw, g->dh, g->dw, pad[g->mode]);
	return b;
}

/* Max |got - want| / (1 + |want|); infinity when got is missing or of
 * the wrong size. */
static double err_of(const ge_xt *got, const double *want, int64_t n)
{
	double e = 0;
	if (!got || got->n != n)
		return INFINITY;
	for (int64_t i = 0; i < n; i++) {
		double d = fabs(((float *)got->data)[i] - want[i]) /
			   (1 + fabs(want[i]));
		e = d > e || d != d ? d : e;
	}
	return e;
}

/* ---------------------------------------------------------------- depthwise */

enum { FAST = 1, SPLIT = 2 }; /* what a case must reach */

static const struct dcase {
	geo g;
	int reach;
} dcases[] = {
	/* n h w c kh kw co sh sw dh dw mode pads: 13 channels, one block
	 * and a tail of 5 */
	{{1, 9, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* stride 2, batch 2, 21 channels */
	{{2, 10, 9, 21, 3, 3, 1, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* stride 2 in width only, on an odd width */
	{{1, 8, 15, 16, 3, 3, 1, 1, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* dilation 2, VALID */
	{{1, 12, 13, 16, 3, 3, 1, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* EXPLICIT, uneven pads, stride 2 in width */
	{{2, 8, 10, 24, 3, 3, 1, 1, 2, 1, 1, 2, 1, 2, 0, 3, 0, 0, 0, 0}, FAST},
	/* dilation 2 under odd EXPLICIT pads: the first tap inside is the
	 * second */
	{{1, 11, 10, 16, 3, 3, 1, 1, 1, 2, 2, 2, 1, 2, 3, 0, 0, 0, 0, 0}, FAST},
	/* 5x5: weights past the registers */
	{{1, 9, 9, 8, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* 1x3 with dilation 3, VALID */
	{{1, 7, 30, 9, 1, 3, 1, 1, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* stride 1, SAME: spans of 16 (two groups of eight pixels) and 5
	 * (pixel by pixel), two blocks and a tail of 3 */
	{{1, 4, 18, 19, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	{{1, 4, 7, 19, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* a 1x1 image under SAME: only the edges */
	{{1, 1, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* VALID 3x3 on 3x3: one output pixel, all inside */
	{{1, 3, 3, 9, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, FAST},
	/* large enough to run on two threads */
	{{3, 20, 20, 21, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	 FAST | SPLIT},
	{{2, 33, 17, 32, 3, 3, 1, 2, 1, 1, 2, 2, 2, 0, 1, 1, 0, 0, 0, 0},
	 FAST | SPLIT},
	/* fewer channels than a block; a multiplier of 2 */
	{{1, 6, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
	{{2, 16, 16, 24, 3, 3, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, SPLIT},
	/* empty: no image, no channel, no row */
	{{0, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
	{{1, 5, 5, 0, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
	{{1, 0, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
};

static void test_depthwise(void)
{
	for (size_t t = 0; t < sizeof dcases / sizeof dcases[0]; t++) {
		geo g = dcases[t].g;
		geo_solve(&g);
		ge_xt *in[2] = {rnd4(g.n, g.h, g.w, g.c),
				rnd4(g.kh, g.kw, g.c, g.co)};
		double *want = ref_conv(&g, in[0], in[1], 1);
		int64_t n = out_count(&g, 1);
		ge_kconv_counts s0 = ge_kconv_count;
		ge_xt *o1 = run1("DepthwiseConv2dNative", attrs(&g, ""), in, 2,
				 1, n);
		ge_kconv_counts s1 = ge_kconv_count;
		ge_xt *o2 = run1("DepthwiseConv2dNative", attrs(&g, ""), in, 2,
				 2, n);
		double e1 = err_of(o1, want, n), e2 = err_of(o2, want, n);
		ok(e1 < TOL && e2 < TOL, "depthwise %s: 1 thread %.2g, 2 "
		   "threads %.2g %s", name(&g), e1, e2, errmsg);
		ok(o1 && o2 && (!n || !memcmp(o1->data, o2->data,
					       n * sizeof(float))),
		   "depthwise %s: the same bits on 1 and 2 threads", name(&g));
		if (dcases[t].reach & FAST)
			ok(s1.dw_fast > s0.dw_fast, "depthwise %s: the tiled "
			   "path ran", name(&g));
		if (dcases[t].reach & SPLIT)
			ok(s1.dw_split == s0.dw_split &&
			   ge_kconv_count.dw_split > s1.dw_split,
			   "depthwise %s: split over 2 threads", name(&g));
		free(want);
		ge_xt_unref(o1), ge_xt_unref(o2);
		ge_xt_unref(in[0]), ge_xt_unref(in[1]);
	}
}

/* FusedDepthwiseConv2dNative's BiasAdd and Relu6 on the rows of each
 * thread. */
static void test_fused_depthwise(void)
{
	geo g = dcases[10].g;
	geo_solve(&g);
	int64_t bd[1] = {g.c}, n = out_count(&g, 1);
	ge_xt *in[3] = {rnd4(g.n, g.h, g.w, g.c), rnd4(g.kh, g.kw, g.c, 1),
			rnd(1, bd)};
	for (int64_t i = 0; i < in[1]->n; i++)
		((float *)in[1]->data)[i] *= 4;
	double *want = ref_conv(&g, in[0], in[1], 1);
	for (int64_t i = 0; i < n; i++) {
		double v = want[i] + ((float *)in[2]->data)[i % g.c];
		want[i] = v < 0 ? 0 : v > 6 ? 6 : v;
	}
	const char *fu = "attr { key: \"fused_ops\" value { list { s: "
			 "\"BiasAdd\" s: \"Relu6\" } } } attr { key: "
			 "\"num_args\" value { i: 1 } } ";
	for (int th = 1; th <= 2; th++) {
		ge_xt *o = run1("FusedDepthwiseConv2dNative", attrs(&g, fu),
				in, 3, th, n);
		double e = err_of(o, want, n);
		ok(e < TOL, "FusedDepthwiseConv2dNative BiasAdd Relu6 %s on %d "
		   "thread(s): %.2g %s", name(&g), th, e, errmsg);
		ge_xt_unref(o);
	}
	free(want);
	for (int i = 0; i < 3; i++)
		ge_xt_unref(in[i]);
}

/* ---------------------------------------------------------------- Conv2D */

static const geo ccases[] = {
	/* n h w c kh kw co sh sw dh dw mode pads */
	{1, 24, 24, 32, 3, 3, 32, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	{2, 33, 31, 13, 3, 3, 48, 2, 1, 2, 1, 2, 1, 0, 2, 1, 0, 0, 0, 0},
	{4, 48, 48, 32, 1, 1, 64, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{3, 23, 29, 21, 5, 3, 37, 1, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
};

static void test_conv2d(void)
{
	for (size_t t = 0; t < sizeof ccases / sizeof ccases[0]; t++) {
		geo g = ccases[t];
		geo_solve(&g);
		ge_xt *in[2] = {rnd4(g.n, g.h, g.w, g.c),
				rnd4(g.kh, g.kw, g.c, g.co)};
		double *want = ref_conv(&g, in[0], in[1], 0);
		int64_t n = out_count(&g, 0);
		for (int th = 1; th <= 2; th++) {
			ge_kconv_counts s0 = ge_kconv_count;
			ge_xt *o = run1("Conv2D", attrs(&g, ""), in, 2, th, n);
			double e = err_of(o, want, n);
			ok(e < TOL, "Conv2D %s on %d thread(s): %.2g %s",
			   name(&g), th, e, errmsg);
			ok((ge_kconv_count.conv_split > s0.conv_split) == (th == 2),
			   "Conv2D %s: %s", name(&g), th == 2 ?
			   "bands split over 2 threads" : "one thread");
			ge_xt_unref(o);
		}
		free(want);
		ge_xt_unref(in[0]), ge_xt_unref(in[1]);
	}
}

/* _FusedConv2D's BiasAdd, Add and Relu: each band adds the residual at
 * its own offset. */
static void test_fused_conv2d(void)
{
	geo g = ccases[3];
	geo_solve(&g);
	int64_t bd[1] = {g.co}, n = out_count(&g, 0);
	ge_xt *in[4] = {rnd4(g.n, g.h, g.w, g.c), rnd4(g.kh, g.kw, g.c, g.co),
			rnd(1, bd), rnd4(g.n, g.oh, g.ow, g.co)};
	double *want = ref_conv(&g, in[0], in[1], 0);
	for (int64_t i = 0; i < n; i++) {
		double v = want[i] + ((float *)in[2]->data)[i % g.co] +
			   ((float *)in[3]->data)[i];
		want[i] = v > 0 ? v : 0;
	}
	const char *fu = "attr { key: \"fused_ops\" value { list { s: "
			 "\"BiasAdd\" s: \"Add\" s: \"Relu\" } } } attr { key: "
			 "\"num_args\" value { i: 2 } } ";
	for (int th = 1; th <= 2; th++) {
		ge_xt *o = run1("_FusedConv2D", attrs(&g, fu), in, 4, th, n);
		double e = err_of(o, want, n);
		ok(e < TOL, "_FusedConv2D BiasAdd Add Relu %s on %d thread(s): "
		   "%.2g %s", name(&g), th, e, errmsg);
		ge_xt_unref(o);
	}
	free(want);
	for (int i = 0; i < 4; i++)
		ge_xt_unref(in[i]);
}

/* ---------------------------------------------------------------- pool */

#define NPARTS 1000
static int ran[NPARTS], bad_slot, inner_ran;

static void inner_part(void *arg, int64_t p, int slot)
{
	(void)arg, (void)p;
	if (slot != 0)
		bad_slot = 1;
	__atomic_add_fetch(&inner_ran, 1, __ATOMIC_RELAXED);
}

static void pool_part(void *arg, int64_t p, int slot)
{
	int threads = *(int *)arg;
	if (slot < 0 || slot >= threads)
		bad_slot = 1;
	__atomic_add_fetch(&ran[p], 1, __ATOMIC_RELAXED);
	if (p % 100 == 0) /* nested: runs on this thread alone */
		ge_xpool_run(3, 2, inner_part, NULL);
}

/* Every part runs once, on a slot below the thread count, and a run
 * from inside a part completes on its own thread. */
static void test_pool(void)
{
	for (int threads = 1; threads <= 3; threads++) {
		int once = 1;
		memset(ran, 0, sizeof ran);
		bad_slot = 0, inner_ran = 0;
		ge_xpool_set_threads(threads);
		ge_xpool_run(NPARTS, threads, pool_part, &threads);
		ge_xpool_set_threads(0);
		for (int p = 0; p < NPARTS; p++)
			once &= ran[p] == 1;
		ok(once && !bad_slot && inner_ran == 30, "pool of %d "
		   "thread(s): %d parts each run once, slots in range, nested "
		   "runs serial (%d of 30)", threads, NPARTS, inner_ran);
	}
}

/* With no count set, the pool takes OpenBLAS's thread count when first
 * asked and sets OpenBLAS to one thread; a Conv2D then hands its bands
 * to the pool's threads, and a MatMul its rows. */
static void test_default_threads(void)
{
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(2);
	if (openblas_get_num_threads() != 2) {
		/* as it was, for what follows */
		tap_skip(4, "OpenBLAS does not take a second thread");
		openblas_set_num_threads(blas);
		return;
	}
	geo g = ccases[3];
	geo_solve(&g);
	ge_xt *in[2] = {rnd4(g.n, g.h, g.w, g.c),
			rnd4(g.kh, g.kw, g.c, g.co)};
	int pool = ge_xpool_threads(), now = openblas_get_num_threads();
	ok(pool == 2 && now == 1, "the pool's default: OpenBLAS's 2 threads "
	   "(%d); OpenBLAS now runs on %d", pool, now);
	for (int i = 0; i < 2; i++) {
		unsigned long r0 = ge_xpool_threaded_runs();
		ge_xt *o = run1("Conv2D", attrs(&g, ""), in, 2, 0,
				out_count(&g, 0));
		ok(o && ge_xpool_threaded_runs() == r0 + 1,
		   "Conv2D %s on the default threads, call %d: its bands ran "
		   "on 2 threads %s", name(&g), i + 1, errmsg);
		ge_xt_unref(o);
	}
	ge_xt_unref(in[0]), ge_xt_unref(in[1]);
	int64_t md[2] = {256, 128}, nd[2] = {128, 96};
	ge_xt *mm[2] = {rnd(2, md), rnd(2, nd)};
	unsigned long r0 = ge_xpool_threaded_runs();
	ge_xt *o = run1("MatMul", "", mm, 2, 0, 256 * 96);
	double e = 0;
	for (int i = 0; o && i < 256; i++)
		for (int j = 0; j < 96; j++) {
			double s = 0;
			for (int p = 0; p < 128; p++)
				s += (double)((float *)mm[0]->data)[i * 128 + p] *
				     ((float *)mm[1]->data)[p * 96 + j];
			double d = fabs(s - ((float *)o->data)[i * 96 + j]);
			e = d > e ? d : e;
		}
	ok(o && e < 1e-4 && ge_xpool_threaded_runs() == r0 + 1, "MatMul "
	   "256x128 by 128x96 on the default threads: split by rows over 2, "
	   "error %.2g %s", e, errmsg);
	ge_xt_unref(o), ge_xt_unref(mm[0]), ge_xt_unref(mm[1]);
}

int main(void)
{
	ge_xbudget_init(&budget);
	/* first: the pool reads OpenBLAS's count when first asked */
	test_default_threads();
	test_pool();
	test_depthwise();
	test_fused_depthwise();
	test_conv2d();
	test_fused_conv2d();
	ok(budget.mem_live == 0, "every tensor and scratch was released (%llu "
	   "bytes live)", (unsigned long long)budget.mem_live);
	return tap_done();
}
