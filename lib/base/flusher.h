/*
 * base/flusher.h: makes a file durable piece by piece while it is still
 * being written, so that the fsync ending an atomic save (base.h's
 * ge_writer) waits for the last piece rather than for the whole file.
 *
 * On a virtual disk the fsync of a large new file is mostly the host's
 * flush of its own cache, and that takes time in proportion to the bytes
 * written since the last flush: starting the writeback early
 * (sync_file_range) does not shorten it, flushing early does.  A helper
 * thread calls fdatasync on the file each time GE_FLUSH_PIECE more bytes
 * have been written, while the writer goes on encoding; the writer's own
 * fsync then finds little left.  The helper only waits on the disk; it
 * neither reads nor writes the file's bytes.
 *
 * Its first failure is kept and returned by ge_flusher_stop: an fsync
 * after a failed fdatasync on the same file may report success, so a
 * writer must take the helper's answer as its own.
 */
#ifndef GE_BASE_FLUSHER_H
#define GE_BASE_FLUSHER_H

#include <stddef.h>

/* Bytes written between the helper's flushes (and the least a file has
 * before a helper is worth its thread). */
#define GE_FLUSH_PIECE ((size_t)8 << 20)

typedef struct ge_flusher ge_flusher;

/* A helper flushing fd, or NULL when no thread could be made (the
 * writer then does without: its fsync is as it was). */
ge_flusher *ge_flusher_start(int fd);
/* Reports that `total` bytes of the file have now been written. */
void ge_flusher_wrote(ge_flusher *f, size_t total);
/* How many bytes the helper's flushes have covered so far. */
size_t ge_flusher_synced(ge_flusher *f);
/* Stops the helper, waiting for a flush it is in, frees it, and returns
 * the errno of its first failed fdatasync (0 if none).  NULL: 0. */
int ge_flusher_stop(ge_flusher *f);

/* What a writer of a file keeps to have it flushed as it grows: the
 * helper is started once the file passes GE_FLUSH_PIECE (a file that
 * stays small never starts one), and not again when it could not be.
 * Zeroed, then fd set, before the first write. */
typedef struct ge_flushing {
	int fd;
	size_t total;         /* bytes written to fd */
	int tried;            /* a helper was started, or could not be */
	ge_flusher *helper;
} ge_flushing;

/* Reports n more bytes written to s->fd. */
void ge_flushing_wrote(ge_flushing *s, size_t n);
/* Stops the helper, if any (ge_flusher_stop), and returns its answer. */
int ge_flushing_end(ge_flushing *s);

#endif
