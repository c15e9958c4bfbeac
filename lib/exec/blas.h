/*
 * exec/blas.h: OpenBLAS, opened the first time the runner needs it.
 *
 * The program does not link OpenBLAS: linked, the library (with
 * libgfortran and libquadmath) costs every start of the program about
 * ten million instructions of relocations and a thread, and only the
 * runner's products (exec/xgemm.h) and its pool (exec/xpool.h) call it;
 * a load, a recipe and a save never do.  ge_blas() opens GE_BLAS_SONAME
 * (configure finds it) once, from any thread, and hands out the four
 * functions the runner calls.  When the library cannot be opened the
 * program stops with one line naming it and the loader's reason: it is a
 * dependency of the build, like the others.
 */
#ifndef GE_EXEC_BLAS_H
#define GE_EXEC_BLAS_H

#include <cblas.h>

typedef struct ge_blas_fns {
	__typeof__(cblas_sgemm) *sgemm;
	__typeof__(cblas_dgemm) *dgemm;
	__typeof__(openblas_get_num_threads) *get_num_threads;
	__typeof__(openblas_set_num_threads) *set_num_threads;
} ge_blas_fns;

/* The functions, all set; never NULL. */
const ge_blas_fns *ge_blas(void);

#endif
