/*
 * exec/xpool.c: the runner's worker threads (exec/xpool.h).
 *
 * One job at a time: the caller publishes it under the mutex, bumps the
 * generation and wakes the workers; every thread, the caller included,
 * then takes the next part number from an atomic counter until the job
 * has none left, and the caller waits for the parts still running.  A
 * thread out of parts looks for the next job for SPIN_NS before it
 * sleeps on the condition variable.  The workers block all signals, so
 * that a signal meant for the program (SIGINT stopping a script) reaches
 * its main thread.
 */
#include "exec/xpool.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "exec/blas.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long a thread that has run out of parts looks for more before it
 * sleeps: the runner's ops follow each other within microseconds, and a
 * thread woken from sleep (a core woken from idle) costs tens of them or
 * more. */
#define SPIN_NS 200000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int started;        /* workers running */
static int wanted;         /* ge_xpool_set_threads, 0 for the default */
static int busy;           /* a job is in progress */
static int atfork_done;
static int64_t gen;        /* bumped for each job */
static unsigned long threaded; /* runs handed to more than one thread */

static struct {
	ge_xpool_fn fn;
	void *arg;
	int64_t parts, next;   /* parts of the job; the next to take */
	int64_t inside;        /* threads in take_parts */
	int threads;           /* workers of slot < threads may join */
} job;

/* OpenBLAS's thread count as the pool first found it, after which
 * OpenBLAS runs each product on the thread that calls it: the pool's
 * threads are the runner's (exec/xgemm.h says why). */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static int blas_threads;

static void take_blas_threads(void)
{
	const ge_blas_fns *blas = ge_blas();
	blas_threads = blas->get_num_threads();
	blas->set_num_threads(1);
}

int ge_xpool_threads(void)
{
	pthread_once(&blas_once, take_blas_threads);
	int n = __atomic_load_n(&wanted, __ATOMIC_RELAXED);
	if (n <= 0)
		n = blas_threads;
	if (n < 1)
		n = 1;
	return n > GE_XPOOL_MAX ? GE_XPOOL_MAX : n;
}

void ge_xpool_set_threads(int n)
{
	__atomic_store_n(&wanted, n < 0 ? 0 : n, __ATOMIC_RELAXED);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits up to SPIN_NS, without mu, for *v to differ from old; called
 * and returns with mu held.  The caller then checks under mu, and sleeps
 * if it must. */
static void spin_while(const int64_t *v, int64_t old)
{
	pthread_mutex_unlock(&mu);
	int64_t end = now_ns() + SPIN_NS;
	for (int i = 1; __atomic_load_n(v, __ATOMIC_ACQUIRE) == old; i++) {
		cpu_relax();
		if (i % 256 == 0 && now_ns() > end)
			break;
	}
	pthread_mutex_lock(&mu);
}

/* Takes and runs parts of the current job until none is left; called
 * and returns with mu held.  Parts are taken by an atomic counter, not
 * under mu: an op of 50 microseconds in eight parts is not slowed by
 * their hand-out.  A thread counts itself in job.inside while it takes
 * parts, and no job is published while one is inside the last. */
static void take_parts(int slot)
{
	ge_xpool_fn fn = job.fn;
	void *arg = job.arg;
	int64_t parts = job.parts, p;
	/* atomic: the caller may be reading it without mu (spin_while) */
	__atomic_store_n(&job.inside, job.inside + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mu);
	while ((p = __atomic_fetch_add(&job.next, 1, __ATOMIC_RELAXED)) <
	       parts)
		fn(arg, p, slot);
	pthread_mutex_lock(&mu);
	__atomic_store_n(&job.inside, job.inside - 1, __ATOMIC_RELEASE);
	if (job.inside == 0)
		pthread_cond_broadcast(&idle);
}

static void *worker(void *v)
{
	int slot = (int)(intptr_t)v;
	int64_t seen;
	pthread_mutex_lock(&mu);
	seen = gen;
	for (;;) {
		if (gen == seen)
			spin_while(&gen, seen);
		while (gen == seen)
			pthread_cond_wait(&wake, &mu);
		seen = gen;
		if (slot < job.threads)
			take_parts(slot);
	}
	return NULL;
}

/* A forked child has none of its parent's threads: it starts afresh. */
static void after_fork(void)
{
	pthread_mutex_init(&mu, NULL);
	pthread_cond_init(&wake, NULL);
	pthread_cond_init(&idle, NULL);
	started = 0, busy = 0;
	job.inside = 0;
}

/* Workers up to slot n-1; with mu held.  Stops at the first failure:
 * the job then runs on fewer threads. */
static void start_workers(int n)
{
	sigset_t all, old;
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, after_fork);
		atfork_done = 1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started + 1 < n) {
		pthread_t t;
		pthread_attr_t a;
		int rc;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &a, worker,
				    (void *)(intptr_t)(started + 1));
		pthread_attr_destroy(&a);
		if (rc)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ge_xpool_run(int64_t parts, int threads, ge_xpool_fn fn, void *arg)
{
	int max = ge_xpool_threads();
	if (threads > max)
		threads = max;
	if (threads > parts)
		threads = (int)parts;
	pthread_mutex_lock(&mu);
	if (threads <= 1 || busy) {
		pthread_mutex_unlock(&mu);
		for (int64_t p = 0; p < parts; p++)
			fn(arg, p, 0);
		return;
	}
	busy = 1;
	threaded++;
	start_workers(threads);
	/* a worker late for the last job may still be leaving it */
	while (job.inside > 0)
		pthread_cond_wait(&idle, &mu);
	job.fn = fn, job.arg = arg, job.parts = parts, job.next = 0;
	job.threads = threads;
	__atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&wake);
	take_parts(0);
	/* every part is taken; wait for those still running */
	if (job.inside > 0)
		spin_while(&job.inside, job.inside);
	while (job.inside > 0)
		pthread_cond_wait(&idle, &mu);
	busy = 0;
	pthread_mutex_unlock(&mu);
}

unsigned long ge_xpool_threaded_runs(void)
{
	pthread_mutex_lock(&mu);
	unsigned long n = threaded;
	pthread_mutex_unlock(&mu);
	return n;
}
