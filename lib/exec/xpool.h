/*
 * exec/xpool.h: the runner's worker threads, for kernels that split their
 * work (the convolutions: doc/runner.md, "Threads").
 *
 * A kernel cuts its work into parts, numbered 0 to parts-1, and hands a
 * function of one part to ge_xpool_run; the calling thread and the
 * workers take parts in order until none is left, so a part delayed by a
 * busy core does not hold the others up.  The function also gets the
 * slot of the thread running it (0 for the caller, 1 to threads-1 for the
 * workers), so that each thread can own a scratch buffer.
 *
 * The pool uses as many threads as OpenBLAS had when the pool was first
 * asked (one per core by default; OPENBLAS_NUM_THREADS sets it), at most
 * GE_XPOOL_MAX, and from then on OpenBLAS runs each product on the thread
 * that calls it (exec/xgemm.h).  Workers
 * are started on first use and then sleep on a condition variable
 * between runs; a forked child starts its own.  A run that finds the pool
 * in use (a second thread of the program, or a part that itself calls
 * ge_xpool_run) runs its parts one after another on its own thread.
 */
#ifndef GE_EXEC_XPOOL_H
#define GE_EXEC_XPOOL_H

#include <stdint.h>

#define GE_XPOOL_MAX 16

/* Runs part `part` of a job on the thread of slot `slot`. */
typedef void (*ge_xpool_fn)(void *arg, int64_t part, int slot);

/* Threads a run may use (>= 1): the override of ge_xpool_set_threads,
 * or OpenBLAS's thread count when first asked, capped at GE_XPOOL_MAX.
 * The first call sets OpenBLAS to one thread. */
int ge_xpool_threads(void);
/* Sets the thread count (n >= 1), or back to the default (n = 0).  For
 * tests and benchmarks. */
void ge_xpool_set_threads(int n);
/* Calls fn(arg, p, slot) once for every p in [0, parts), on at most
 * `threads` threads (the caller's among them; slot < threads); returns
 * when all have returned.  threads is capped at ge_xpool_threads(). */
void ge_xpool_run(int64_t parts, int threads, ge_xpool_fn fn, void *arg);
/* Runs so far that were handed to more than one thread (for tests). */
unsigned long ge_xpool_threaded_runs(void);

#endif
