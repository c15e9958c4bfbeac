/*
 * exec/xgemm.c: matrix products through OpenBLAS on the pool's threads
 * (exec/xgemm.h).
 *
 * A split product is cut into row blocks of its result, two per thread
 * (a block held up by a busy core leaves the others to the rest); each
 * block is one BLAS call with a's rows (or, transposed, its columns) and
 * c's rows of the block, and b whole.  Every block packs b again, which
 * costs kk * n per block against 2 * rows * kk * n for its product.
 */
#include "exec/xgemm.h"

#include "exec/blas.h"
#include "exec/xpool.h"

#define MIN_ROWS 32 /* rows of a block */

void ge_xgemm_here(int f64, int ta, int tb, int64_t m, int64_t n, int64_t kk,
		   const void *a, int64_t lda, const void *b, int64_t ldb,
		   double beta, void *c, int64_t ldc)
{
	enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans;
	enum CBLAS_TRANSPOSE bt = tb ? CblasTrans : CblasNoTrans;
	if (m == 0 || n == 0)
		return;
	const ge_blas_fns *blas = ge_blas();
	if (f64)
		blas->dgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)kk,
			    1.0, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
	else
		blas->sgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)kk,
			    1.0f, a, (int)lda, b, (int)ldb, (float)beta, c,
			    (int)ldc);
}

typedef struct gemm_job {
	int f64, ta, tb;
	int64_t m, n, kk, rows;
	const char *a, *b;
	char *c;
	int64_t lda, ldb, ldc;
	double beta;
	size_t es;
} gemm_job;

static void gemm_part(void *arg, int64_t part, int slot)
{
	const gemm_job *j = arg;
	int64_t i0 = part * j->rows;
	int64_t i1 = i0 + j->rows < j->m ? i0 + j->rows : j->m;
	/* row i of op(a): a's row i, or its column i when transposed */
	const char *a = j->a + (size_t)(j->ta ? i0 : i0 * j->lda) * j->es;
	(void)slot;
	ge_xgemm_here(j->f64, j->ta, j->tb, i1 - i0, j->n, j->kk, a, j->lda,
		      j->b, j->ldb, j->beta, j->c + (size_t)(i0 * j->ldc) * j->es,
		      j->ldc);
}

void ge_xgemm(int f64, int ta, int tb, int64_t m, int64_t n, int64_t kk,
	      const void *a, int64_t lda, const void *b, int64_t ldb,
	      double beta, void *c, int64_t ldc)
{
	/* first: the pool takes OpenBLAS's threads over */
	int threads = ge_xpool_threads();
	double work = (double)m * (double)n * (double)kk;
	if (threads < 2 || work < GE_XGEMM_SPLIT || m < 2 * MIN_ROWS) {
		ge_xgemm_here(f64, ta, tb, m, n, kk, a, lda, b, ldb, beta, c,
			      ldc);
		return;
	}
	gemm_job j = {f64, ta, tb, m, n, kk, 0, a, b, c, lda, ldb, ldc, beta,
		      f64 ? sizeof(double) : sizeof(float)};
	j.rows = (m + 2 * threads - 1) / (2 * threads);
	if (j.rows < MIN_ROWS)
		j.rows = MIN_ROWS;
	ge_xpool_run((m + j.rows - 1) / j.rows, threads, gemm_part, &j);
}
