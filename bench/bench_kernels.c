/*
 * bench_kernels: the runner's heavy kernels against OpenBLAS's sgemm.
 *
 *   bench_kernels [REPS]
 *
 * Measures, in the same run, the GFLOP/s (2 flops per multiply-add) of
 * cblas_sgemm on a 1024 x 1024 x 1024 product, then of the MatMul
 * kernel on the same product, Conv2D (3x3, 64 to 64 channels, 56x56,
 * batch 1, SAME) and DepthwiseConv2dNative (3x3, 64 channels, 56x56),
 * each the best of REPS runs (default 10; depthwise, which takes a
 * tenth of a millisecond, the best of 20 runs in each of those), and
 * prints each kernel's ratio to sgemm.  The target for each is at least
 * half of sgemm's rate (doc/performance.md, "Runner kernels").  The
 * kernels use as many threads as OpenBLAS: OPENBLAS_NUM_THREADS=1
 * measures one core.
 *
 * The reference sgemm runs on OpenBLAS's threads, which the runner never
 * uses (exec/xgemm.h): after it the bench sleeps past OpenBLAS's
 * THREAD_TIMEOUT, as OpenBLAS's threads spin until then on the core the
 * kernels measured next would use.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/kernel.h"
#include "exec/xpool.h"
#include "exec/xtensor.h"
#include "formats/model.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ge_xbudget budget;

static ge_xt *filled(int rank, const int64_t *dims)
{
	ge_error err;
	ge_xt *t = ge_xt_new(1, rank, dims, &budget, "bench", &err);
	if (!t) {
		fprintf(stderr, "bench_kernels: %s\n", err.msg);
		exit(2);
	}
	for (int64_t i = 0; i < t->n; i++)
		((float *)t->data)[i] = (float)((i * 7919) % 1000) / 1000 - 0.5f;
	return t;
}

/* Best time of reps runs of op `type` (attrs in NodeDef text) on in. */
static double time_op(const char *type, const char *attrs, ge_xt **in,
		      int nin, int reps)
{
	char txt[1024];
	ge_graph *g = NULL;
	ge_error err;
	double best = 1e30;
	snprintf(txt, sizeof txt, "node { name: \"op\" op: \"%s\" %s }", type,
		 attrs);
	if (ge_parse((const uint8_t *)txt, strlen(txt), GE_FMT_GRAPHDEF_TEXT,
		     "bench", NULL, &g, &err)) {
		fprintf(stderr, "bench_kernels: %s\n", err.msg);
		exit(2);
	}
	const ge_kdef *d = ge_kernel_find(type);
	for (int r = 0; r < reps; r++) {
		ge_xt *out[1] = {NULL};
		ge_kctx k = {g, ge_graph_find(g, "op"), type, "op", in, nin,
			     out, 1, &budget, NULL, &err};
		double t0 = now();
		if (!d || d->fn(&k)) {
			fprintf(stderr, "bench_kernels: %s: %s\n", type,
				d ? err.msg : "no kernel");
			exit(2);
		}
		double t = now() - t0;
		best = t < best ? t : best;
		ge_xt_unref(out[0]);
		budget.work_used = 0;
	}
	ge_graph_free(g);
	return best;
}

#define CONV_ATTRS \
	"attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } " \
	"attr { key: \"padding\" value { s: \"SAME\" } } " \
	"attr { key: \"data_format\" value { s: \"NHWC\" } } "

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	if (reps < 1)
		reps = 1;
	ge_xbudget_init(&budget);
	/* OpenBLAS's count, for the reference; the pool then takes it */
	int blas = openblas_get_num_threads();
	ge_xpool_threads();

	/* the four measurements interleaved, so that a busy spell of the
	 * machine touches all of them alike; the best of each */
	int64_t md[2] = {1024, 1024};
	int64_t xd[4] = {1, 56, 56, 64}, fd[4] = {3, 3, 64, 64};
	int64_t dd[4] = {3, 3, 64, 1};
	ge_xt *a = filled(2, md), *b = filled(2, md), *c = filled(2, md);
	ge_xt *x = filled(4, xd), *f = filled(4, fd), *df = filled(4, dd);
	ge_xt *mm[2] = {a, b}, *cv[2] = {x, f}, *dw[2] = {x, df};
	double best[4] = {1e30, 1e30, 1e30, 1e30};
	for (int r = 0; r < reps; r++) {
		openblas_set_num_threads(blas);
		double t0 = now(), t;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1024,
			    1024, 1024, 1.0f, a->data, 1024, b->data, 1024,
			    0.0f, c->data, 1024);
		t = now() - t0;
		best[0] = t < best[0] ? t : best[0];
		openblas_set_num_threads(1);
		/* 2^28 cycles of OpenBLAS's spin, with room */
		if (blas > 1)
			usleep(300000);
		t = time_op("MatMul", "", mm, 2, 1);
		best[1] = t < best[1] ? t : best[1];
		t = time_op("Conv2D", CONV_ATTRS, cv, 2, 5);
		best[2] = t < best[2] ? t : best[2];
		t = time_op("DepthwiseConv2dNative", CONV_ATTRS, dw, 2, 20);
		best[3] = t < best[3] ? t : best[3];
	}
	double fl[4] = {2.0 * 1024 * 1024 * 1024, 2.0 * 1024 * 1024 * 1024,
			2.0 * 56 * 56 * 64 * 64 * 9, 2.0 * 56 * 56 * 64 * 9};
	static const char *what[4] = {
		"cblas_sgemm 1024x1024x1024", "MatMul 1024x1024 by 1024x1024",
		"Conv2D 3x3 64->64 56x56 SAME", "DepthwiseConv2dNative 3x3 64 56x56",
	};
	double ref = fl[0] / best[0] / 1e9;
	printf("== runner kernels (%d threads, best of %d)\n",
	       ge_xpool_threads(), reps);
	for (int i = 0; i < 4; i++) {
		double g = fl[i] / best[i] / 1e9;
		printf("%-36s %7.2f GFLOP/s %8.3f ms", what[i], g,
		       best[i] * 1e3);
		if (i)
			printf("  %.2f of sgemm", g / ref);
		if (i == 3) /* what it must move: input, output, filter */
			printf("  (%.1f GB/s)", (2.0 * 56 * 56 * 64 + 9 * 64) *
			       4 / best[i] / 1e9);
		printf("\n");
	}

	ge_xt_unref(a), ge_xt_unref(b), ge_xt_unref(c);
	ge_xt_unref(x), ge_xt_unref(f), ge_xt_unref(df);
	return 0;
}
