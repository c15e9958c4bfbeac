/*
 * fsutil.h: the file system seen from an untrusted model.
 *
 * Paths a model names (TensorFlow.js weight shards, SavedModel assets and
 * variables) are resolved inside the model's directory: no "..", no
 * absolute path, no symlink leading out, no FIFO or device.  Saves of
 * files and directories go through temporary names that carry the
 * process id, so that a later save to the same path can tell a dead
 * process's leftovers from a live one's, and a directory is swapped in
 * whole (renameat2 RENAME_EXCHANGE where the kernel has it).
 */
#ifndef GE_FSUTIL_H
#define GE_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Resolves rel inside dir into out (dir/rel): rel must be relative,
 * without ".." components, and name a regular file whose real path lies
 * under dir's real path.  file and what name the model and the entry for
 * the error ("<file>: <what>: path '<rel>' ..."). */
int ge_path_inside(const char *dir, const char *rel, const char *file,
		   const char *what, char *out, size_t cap, ge_error *err);

/* ge_path_inside, then reads at most max bytes of the file (an error if
 * it is longer). */
int ge_read_inside(const char *dir, const char *rel, const char *file,
		   const char *what, uint64_t max, uint8_t **data,
		   size_t *len, ge_error *err);

/* Copies a directory tree: directories and regular files are copied,
 * symlinks are recreated as symlinks (never followed), FIFOs, devices and
 * sockets are refused with an error naming them. */
int ge_copy_tree(const char *from, const char *to, ge_error *err);
/* One regular file (opened without following a symlink, never a FIFO). */
int ge_copy_file(const char *from, const char *to, ge_error *err);

/* For tests of killed saves: sleeps $GEREWRITE_TEST_SAVE_PAUSE_MS at the
 * steps of a save (each file copied or written, before a swap, between
 * the fallback's two renames), so that kills at random moments land at
 * each of them; does nothing without it. */
void ge_save_pause(void);

/* Removes a file or a directory tree without following symlinks. */
int ge_remove_tree(const char *path);

/* ---- temporary names and atomic saves ---- */

/* Removes what dead processes left of saves to path ("<path>.tmp-<pid>-*",
 * "<path>.old-<pid>-*"), first putting a directory back at path when a
 * save was killed between moving the old one away and the new one in. */
void ge_tmp_clean(const char *path);

/* Creates a temp file (dir 0: a file, 1: a directory) next to path named
 * "<path>.tmp-<pid>-XXXXXX" into out, and registers it so that SIGINT,
 * SIGTERM and SIGHUP remove it.  Returns an fd (files) or 0, or -1 with
 * errno. */
int ge_tmp_create(const char *path, int dir, char *out, size_t cap);
/* Forgets a temp name (it was renamed or removed). */
void ge_tmp_forget(const char *tmp);
/* Removes every registered temp; async-signal-safe, for a handler that
 * ends the process (a batch worker's timeout). */
void ge_tmp_remove_all(void);

/* Puts the directory tmp at path so that at every instant path holds the
 * old directory or the new one: renameat2(RENAME_EXCHANGE), then the old
 * one is removed; where the kernel or file system cannot exchange, the old
 * one is moved to "<path>.old-<pid>-*" only once tmp is complete, and
 * ge_tmp_clean puts it back if the process dies before the new one is in
 * place. */
int ge_dir_swap(const char *tmp, const char *path, ge_error *err);

#endif
