/*
 * t/flusher.c: the helper that flushes a file while it is written
 * (lib/base/flusher.h) and the atomic writer that uses it (base.h's
 * ge_writer): a writer of a large file starts the helper and a small one
 * does not, the file committed holds every byte in order, an abort
 * leaves nothing and stops the helper, a file copy (ge_copy_file) is
 * whole, and a failure of the helper's fdatasync is the writer's
 * failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "base/base.h"
#include "base/flusher.h"
#include "base/fsutil.h"

static char dir[] = "/tmp/ge-flusher-XXXXXX";

/* The byte at offset i of the test file: no two pieces alike. */
static uint8_t byte_at(size_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

/* Writes n bytes in pieces of varied sizes, some past the writer's
 * buffer; returns whether a helper was running before the commit. */
static int write_file(ge_writer *w, size_t n)
{
	static uint8_t piece[(size_t)1 << 19];
	size_t at = 0, k = 0;
	int helper = 0;
	while (at < n) {
		size_t len = (k++ % 3 == 2 ? sizeof piece : 1000 + k * 37 % 70000);
		if (len > n - at)
			len = n - at;
		for (size_t i = 0; i < len; i++)
			piece[i] = byte_at(at + i);
		ge_writer_put(w, piece, len);
		at += len;
		helper |= w->flush.helper != NULL;
	}
	return helper;
}

static int file_holds(const char *path, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t i = 0;
	int c, good = 1;
	while ((c = getc(f)) != EOF) {
		if (i >= n || (uint8_t)c != byte_at(i))
			good = 0;
		i++;
	}
	fclose(f);
	return good && i == n;
}

static void writer(void)
{
	char path[64];
	ge_writer w;
	ge_error err;
	snprintf(path, sizeof path, "%s/big", dir);
	size_t n = 3 * GE_FLUSH_PIECE + 12345;
	ok(ge_writer_open(&w, path, &err) == GE_OK, "a writer opens");
	ok(write_file(&w, n), "a file past GE_FLUSH_PIECE starts the helper");
	ok(ge_writer_commit(&w, &err) == GE_OK, "and commits");
	ok(file_holds(path, n), "the file holds every byte, in order");

	snprintf(path, sizeof path, "%s/small", dir);
	ok(ge_writer_open(&w, path, &err) == GE_OK &&
		   !write_file(&w, GE_FLUSH_PIECE / 2) &&
		   ge_writer_commit(&w, &err) == GE_OK &&
		   file_holds(path, GE_FLUSH_PIECE / 2),
	   "a small file never starts one, and is written whole");

	snprintf(path, sizeof path, "%s/aborted", dir);
	struct stat st;
	ok(ge_writer_open(&w, path, &err) == GE_OK &&
		   write_file(&w, 2 * GE_FLUSH_PIECE), "an aborted write: "
	   "the helper running");
	ge_writer_abort(&w);
	ok(stat(path, &st) < 0 && w.flush.helper == NULL,
	   "the abort stops it and leaves no file");
}

/* Waits (up to 10 s) for the helper to have flushed n bytes. */
static int flushed(ge_flusher *f, size_t n)
{
	for (int i = 0; f && i < 1000; i++) {
		if (ge_flusher_synced(f) >= n)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* ge_copy_file flushes a large copy the same way: every byte copied */
static void copy(void)
{
	char from[64], to[64];
	ge_writer w;
	ge_error err;
	size_t n = 2 * GE_FLUSH_PIECE + 777;
	snprintf(from, sizeof from, "%s/copy-from", dir);
	snprintf(to, sizeof to, "%s/copy-to", dir);
	int made = ge_writer_open(&w, from, &err) == GE_OK;
	if (made) {
		write_file(&w, n);
		made = ge_writer_commit(&w, &err) == GE_OK;
	}
	ok(made && ge_copy_file(from, to, &err) == GE_OK && file_holds(to, n),
	   "ge_copy_file of a file past GE_FLUSH_PIECE copies every byte");
}

static void helper_alone(void)
{
	char path[64];
	snprintf(path, sizeof path, "%s/alone", dir);
	FILE *f = fopen(path, "wb");
	ge_flusher *fl = f ? ge_flusher_start(fileno(f)) : NULL;
	ok(fl != NULL, "a helper starts on a file");
	ge_flusher_wrote(fl, GE_FLUSH_PIECE - 1);
	usleep(20000);
	ok(fl && ge_flusher_synced(fl) == 0, "less than a piece: no flush");
	for (size_t i = 1; fl && i <= 3; i++)
		ge_flusher_wrote(fl, i * GE_FLUSH_PIECE); /* each wakes it */
	ok(flushed(fl, 3 * GE_FLUSH_PIECE), "a piece written: a flush");
	ok(ge_flusher_stop(fl) == 0, "its flushes succeed, and it stops");
	if (f)
		fclose(f);
	ok(ge_flusher_stop(NULL) == 0, "stopping no helper is 0");

	/* fdatasync on a pipe fails (EINVAL): the failure comes back */
	int p[2];
	fl = pipe(p) == 0 ? ge_flusher_start(p[1]) : NULL;
	ge_flusher_wrote(fl, GE_FLUSH_PIECE);
	flushed(fl, GE_FLUSH_PIECE);
	int e = ge_flusher_stop(fl);
	ok(e == EINVAL || e == EROFS, "a failed flush is returned by the stop "
	   "(%s)", strerror(e));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	tap_plan(14);
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	writer();
	copy();
	helper_alone();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
