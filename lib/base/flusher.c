/*
 * base/flusher.c: the helper thread of base/flusher.h.
 *
 * The writer adds to `written` under the mutex and wakes the helper once
 * GE_FLUSH_PIECE bytes lie beyond `synced`; the helper notes how far the
 * file had been written, calls fdatasync outside the mutex (the writer is
 * never held up by the disk), and records that point as `synced`.  The
 * helper blocks every signal, so that a signal meant for the program
 * (SIGINT stopping a script) reaches its main thread.
 */
#include "config.h"

#include "base/flusher.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

struct ge_flusher {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more;
	int fd;
	int stop;     /* set by ge_flusher_stop */
	int err;      /* errno of the first failed fdatasync */
	size_t written, synced;
};

static void *flusher_main(void *arg)
{
	ge_flusher *f = arg;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->stop && f->written - f->synced < GE_FLUSH_PIECE)
			pthread_cond_wait(&f->more, &f->mu);
		if (f->stop)
			break;
		size_t upto = f->written;
		pthread_mutex_unlock(&f->mu);
		int rc = fdatasync(f->fd), e = errno;
		pthread_mutex_lock(&f->mu);
		if (rc < 0 && !f->err)
			f->err = e;
		f->synced = upto;
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

ge_flusher *ge_flusher_start(int fd)
{
	ge_flusher *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->fd = fd;
	pthread_attr_t attr;
	sigset_t all, old;
	int ok = pthread_mutex_init(&f->mu, NULL) == 0;
	if (ok && pthread_cond_init(&f->more, NULL) != 0) {
		pthread_mutex_destroy(&f->mu);
		ok = 0;
	}
	if (!ok) {
		free(f);
		return NULL;
	}
	/* the thread inherits the mask: every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_attr_init(&attr) == 0;
	if (ok) {
		/* it calls fdatasync and waits: a small stack is plenty */
		pthread_attr_setstacksize(&attr, (size_t)64 << 10);
		ok = pthread_create(&f->thread, &attr, flusher_main, f) == 0;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ok) {
		pthread_cond_destroy(&f->more);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return NULL;
	}
	return f;
}

void ge_flusher_wrote(ge_flusher *f, size_t total)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->written = total;
	if (total - f->synced >= GE_FLUSH_PIECE)
		pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->mu);
}

size_t ge_flusher_synced(ge_flusher *f)
{
	pthread_mutex_lock(&f->mu);
	size_t n = f->synced;
	pthread_mutex_unlock(&f->mu);
	return n;
}

int ge_flusher_stop(ge_flusher *f)
{
	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thread, NULL);
	int err = f->err;
	pthread_cond_destroy(&f->more);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return err;
}

void ge_flushing_wrote(ge_flushing *s, size_t n)
{
	s->total += n;
	if (!s->tried && s->total >= GE_FLUSH_PIECE) {
		s->tried = 1;
		s->helper = ge_flusher_start(s->fd);
	}
	ge_flusher_wrote(s->helper, s->total);
}

int ge_flushing_end(ge_flushing *s)
{
	int err = ge_flusher_stop(s->helper);
	s->helper = NULL;
	return err;
}
