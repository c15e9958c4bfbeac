/*
 * exec/xpool.c: the runner's worker threads (exec/xpool.h).
 *
 * One job at a time: the caller publishes it under the mutex, bumps the
 * generation and wakes the workers; every thread, the caller included,
 * then takes the next part number under the mutex until the job has none
 * left, and the caller waits for the parts still running.  The workers
 * block all signals, so that a signal meant for the program (SIGINT
 * stopping a script) reaches its main thread.
 */
#include "exec/xpool.h"

#include <cblas.h>
#include <pthread.h>
#include <signal.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int started;        /* workers running */
static int wanted;         /* ge_xpool_set_threads, 0 for the default */
static int busy;           /* a job is in progress */
static int atfork_done;
static unsigned long gen;  /* bumped for each job */

static struct {
	ge_xpool_fn fn;
	void *arg;
	int64_t parts, next;   /* parts of the job; the next to take */
	int64_t running;       /* taken and not finished */
	int threads;           /* workers of slot < threads may join */
} job;

int ge_xpool_threads(void)
{
	int n = __atomic_load_n(&wanted, __ATOMIC_RELAXED);
	if (n <= 0)
		n = openblas_get_num_threads();
	if (n < 1)
		n = 1;
	return n > GE_XPOOL_MAX ? GE_XPOOL_MAX : n;
}

void ge_xpool_set_threads(int n)
{
	__atomic_store_n(&wanted, n < 0 ? 0 : n, __ATOMIC_RELAXED);
}

/* Takes and runs parts of the current job until none is left; called
 * and returns with mu held. */
static void take_parts(int slot)
{
	while (job.next < job.parts) {
		int64_t p = job.next++;
		ge_xpool_fn fn = job.fn;
		void *arg = job.arg;
		job.running++;
		pthread_mutex_unlock(&mu);
		fn(arg, p, slot);
		pthread_mutex_lock(&mu);
		if (--job.running == 0 && job.next >= job.parts)
			pthread_cond_broadcast(&idle);
	}
}

static void *worker(void *v)
{
	int slot = (int)(intptr_t)v;
	unsigned long seen;
	pthread_mutex_lock(&mu);
	seen = gen;
	for (;;) {
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
	start_workers(threads);
	job.fn = fn, job.arg = arg, job.parts = parts, job.next = 0;
	job.running = 0, job.threads = threads;
	gen++;
	pthread_cond_broadcast(&wake);
	take_parts(0);
	while (job.running > 0)
		pthread_cond_wait(&idle, &mu);
	busy = 0;
	pthread_mutex_unlock(&mu);
}
