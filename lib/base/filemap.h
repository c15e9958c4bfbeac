/*
 * filemap.h: a model file mapped instead of read, safely.
 *
 * A loaded GraphDef's ops point into the file's bytes for as long as the
 * graph lives, so a mapping must never change under them: the file may
 * be truncated (the next read of a lost page would raise SIGBUS) or
 * rewritten in place by another program (`cp new.pb model.pb`) while a
 * session still holds the graph.  A file is therefore mapped only under
 * a read lease (fcntl F_SETLEASE): before any other opener may write or
 * truncate it, the kernel signals this process, whose handler copies the
 * mapped bytes into private memory at the same address (mremap) and
 * gives the lease up.  The graph keeps the bytes it loaded, as a read()
 * would have kept them.  Where the lease cannot be had (a file of another
 * user, a file system without leases, a program with its own SIGIO
 * handler, too many mappings) the file is read as before.
 *
 * Saving over the loaded file is safe either way: saves write a
 * temporary file and rename it over the path, so the mapped inode lives
 * on, untouched, until the graph unmaps it.
 */
#ifndef GE_FILEMAP_H
#define GE_FILEMAP_H

#include <stddef.h>
#include <stdint.h>

/* Maps the regular file path read-only under a read lease when it is at
 * least min bytes long (GEREWRITE_MAP_MIN overrides min, for tests).
 * Returns 1 and the bytes when mapped, 0 when the caller should read the
 * file instead (nothing is reported: the reason is the read's to give). */
int ge_file_map(const char *path, size_t min, uint8_t **data, size_t *len);

/* Gives a mapping back (the lease too, if still held). */
void ge_file_unmap(uint8_t *data, size_t len);

/* 1 while data is a mapping that still reads the file, 2 once it was
 * copied into private memory because the file was about to change (3 if
 * that copy failed for want of memory: the bytes may then change), 0 if
 * data is no mapping of this module.  For tests and diagnostics. */
int ge_file_map_state(const uint8_t *data);

#endif
