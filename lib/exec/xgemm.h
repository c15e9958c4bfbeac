/*
 * exec/xgemm.h: the runner's matrix products (float32 and float64,
 * row-major), the only place the runner calls BLAS.
 *
 * The pool (exec/xpool.h) owns the runner's threads: from its first use
 * OpenBLAS runs every product on the thread that calls it, and a large
 * product is cut by rows of its result into parts the pool's threads
 * take.  OpenBLAS's own threads are then never handed work; handed work,
 * they spin for a while after each product (OpenBLAS's THREAD_TIMEOUT,
 * 2^28 cycles, about 0.1 s) on the core the pool's next op needs.
 */
#ifndef GE_EXEC_XGEMM_H
#define GE_EXEC_XGEMM_H

#include <stdint.h>

/* c[m, n] = op(a)[m, kk] x op(b)[kk, n] + beta * c, where op transposes
 * when ta (tb) is set, in float64 when f64 is set, else float32; lda,
 * ldb and ldc are the row lengths of a, b and c as stored.  Dims fit in
 * int (callers check).  A product of at least GE_XGEMM_SPLIT
 * multiply-adds and 64 rows is split over the pool's threads; inside a
 * part of a pool job it runs on that part's thread. */
#define GE_XGEMM_SPLIT (1u << 21)
void ge_xgemm(int f64, int ta, int tb, int64_t m, int64_t n, int64_t kk,
	      const void *a, int64_t lda, const void *b, int64_t ldb,
	      double beta, void *c, int64_t ldc);

/* The same product on the calling thread alone (a part of a pool job:
 * a convolution's band). */
void ge_xgemm_here(int f64, int ta, int tb, int64_t m, int64_t n, int64_t kk,
		   const void *a, int64_t lda, const void *b, int64_t ldb,
		   double beta, void *c, int64_t ldc);

#endif
