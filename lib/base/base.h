/*
 * base.h: errors, growable buffers, arenas and hashing shared by all of
 * libgerewrite.
 *
 * Error convention: a function that can fail on bad input returns int
 * (GE_OK on success, a negative GE_E* code on failure) and, when given a
 * non-NULL ge_error, fills it with one line that names the file and the node
 * concerned.  lib/ never aborts on bad input; it aborts only when malloc
 * fails (ge_xmalloc), as jq and git do, because no caller can recover there.
 */
#ifndef GE_BASE_H
#define GE_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/flusher.h"

#if defined(__GNUC__)
#define GE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GE_UNUSED __attribute__((unused))
#else
#define GE_PRINTF(f, a)
#define GE_UNUSED
#endif

/* A build with AddressSanitizer, whose leak check wants everything freed
 * before the exit and whose shadow memory does not fit an address-space
 * limit. */
#if defined(__SANITIZE_ADDRESS__)
#define GE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GE_ASAN 1
#endif
#endif

enum {
	GE_OK = 0,
	GE_EINVAL = -1,   /* caller misuse: bad argument, wrong kind of object */
	GE_EIO = -2,      /* the outside world failed: open, read, write, rename */
	GE_EFORMAT = -3,  /* the input is not what it claims: corrupt, truncated */
	GE_ENOTFOUND = -4,/* a name, tag or file that is not there */
	GE_EGRAPH = -5,   /* the graph is inconsistent: dangling input, cycle */
};

typedef struct ge_error {
	int code;
	char msg[1024];
} ge_error;

/* Sets err (if non-NULL) and returns code, so callers write
 * `return ge_err(err, GE_EIO, "%s: %s", path, strerror(errno));`. */
int ge_err(ge_error *err, int code, const char *fmt, ...) GE_PRINTF(3, 4);
int ge_verr(ge_error *err, int code, const char *fmt, va_list ap);
/* Prepends "prefix: " to an error already set (e.g. the file name). */
void ge_err_prefix(ge_error *err, const char *fmt, ...) GE_PRINTF(2, 3);

void *ge_xmalloc(size_t n);
void *ge_xcalloc(size_t n, size_t size);
void *ge_xrealloc(void *p, size_t n);
char *ge_xstrdup(const char *s);
char *ge_xstrndup(const char *s, size_t n);

/* Growable byte buffer.  data is always NUL-terminated past len. */
typedef struct ge_buf {
	uint8_t *data;
	size_t len, cap;
} ge_buf;

#define GE_BUF_INIT {NULL, 0, 0}
void ge_buf_reserve(ge_buf *b, size_t extra);
void ge_buf_add(ge_buf *b, const void *p, size_t n);
void ge_buf_addc(ge_buf *b, int c);
void ge_buf_adds(ge_buf *b, const char *s);
void ge_buf_printf(ge_buf *b, const char *fmt, ...) GE_PRINTF(2, 3);
void ge_buf_free(ge_buf *b);
/* Detaches the data (caller frees) and resets the buffer. */
uint8_t *ge_buf_steal(ge_buf *b, size_t *len);

/* Varints written into room already reserved (at most 10 bytes each), for
 * encoders that reserve once for many fields. */
static inline size_t ge_uvarint_size(uint64_t v)
{
	size_t n = 1;
	for (; v >= 0x80; v >>= 7)
		n++;
	return n;
}

static inline uint8_t *ge_put_uvarint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	return p;
}

/* Protobuf wire helpers on a buffer. */
void ge_buf_varint(ge_buf *b, uint64_t v);
void ge_buf_tag(ge_buf *b, uint32_t field, int wiretype);
void ge_buf_lenfield(ge_buf *b, uint32_t field, const void *p, size_t n);
/* Makes the bytes from `start` to the end of b the body of length-delimited
 * field `field`, inserting its tag and length before them: nested messages
 * are written in place and get their header once their length is known. */
void ge_buf_wrap(ge_buf *b, size_t start, uint32_t field);

/* Reads a varint at *p (< end); returns 0 and advances *p, or -1.  Most
 * varints in a graph (tags, short lengths) are one byte: that case is
 * inline. */
int ge_read_varint_slow(const uint8_t **p, const uint8_t *end, uint64_t *v);
static inline int ge_read_varint(const uint8_t **p, const uint8_t *end,
				 uint64_t *v)
{
	if (*p < end && !(**p & 0x80)) {
		*v = **p;
		(*p)++;
		return 0;
	}
	return ge_read_varint_slow(p, end, v);
}
/* Fields are walked by lib/base/wire.h. */

/* Large growing arrays (a graph's ops and name index, big arena chunks):
 * from 1 MiB they are mapped on their own, 2 MiB aligned and advised
 * huge, so that filling them faults once per 2 MiB where the kernel gives
 * huge pages, and they grow by moving page tables (mremap), not by a copy
 * into fresh pages.  From 64 KiB they are mappings made resident at once
 * (ge_prefault).  Smaller ones, and every one in a sanitizer build (whose
 * leak and bounds checks see malloc only), come from malloc.
 * ge_big_alloc's memory reads as zero; ge_big_realloc leaves the bytes
 * past the old size undefined.  Out of memory aborts, as ge_xmalloc. */
void *ge_big_alloc(size_t n);
void *ge_big_realloc(void *p, size_t n);
void ge_big_free(void *p);
/* A big array of `have` entries of `size` bytes (p, or NULL when have is
 * 0) made `want` long, the new entries reading zero: the first one is
 * ge_big_alloc's, whose pages are not touched here, a later one
 * ge_big_realloc's with its new part cleared.  For tables by op id that
 * grow as ops come. */
void *ge_big_grow_zeroed(void *p, size_t have, size_t want, size_t size);
/* ge_big_alloc for an array written in few places (an index by op id
 * of a few ops): from 64 KiB a mapping of its own, whose pages come as
 * they are first written, never made resident ahead nor huge (no
 * ge_big_realloc).  Freed by ge_big_free. */
void *ge_big_sparse(size_t n);
/* ge_big_alloc, or NULL when there is no memory for it. */
void *ge_big_try(size_t n);
/* A size of at least n for a big array that fills whole huge pages (an
 * arena chunk or a pool slab, filled from the start to the end). */
size_t ge_big_fit(size_t n);

/* Makes the pages of [p, p + len) resident in one call, for a range of
 * malloc'd memory about to be written whole: fresh pages would otherwise
 * fault one at a time as they are first written (base.c says what that
 * costs).  Does nothing under 64 KiB, or where the kernel cannot. */
void ge_prefault(void *p, size_t len);

/* Arena: many small allocations freed in one call.  Chunks grow with
 * what the arena holds; past 1 MiB they are big arrays (above). */
typedef struct ge_arena_chunk ge_arena_chunk;
typedef struct ge_arena {
	ge_arena_chunk *head;
	size_t used, size;
} ge_arena;

void ge_arena_init(ge_arena *a);
void *ge_arena_alloc(ge_arena *a, size_t n);   /* 8-byte aligned */
char *ge_arena_strndup(ge_arena *a, const char *s, size_t n);
char *ge_arena_strdup(ge_arena *a, const char *s);
void ge_arena_free(ge_arena *a);

/* In-memory hashes (never stored): ge_hash is FNV-1a; ge_hash_ci gives
 * names that strncasecmp finds equal (TensorFlow's name rule) one value. */
uint32_t ge_hash(const void *p, size_t n);
uint32_t ge_hash_ci(const void *p, size_t n);

/* The Levenshtein distance of two byte strings (insertions, deletions
 * and substitutions), for "did you mean" suggestions. */
size_t ge_edit_distance(const char *a, size_t na, const char *b, size_t nb);

/* Whole-file I/O.  ge_file_read returns a malloc'd buffer (NUL-terminated). */
int ge_file_read(const char *path, uint8_t **data, size_t *len, ge_error *err);
/* Writes atomically: temp file in the same directory, fsync, rename. */
int ge_file_write_atomic(const char *path, const void *data, size_t len,
			 ge_error *err);

/* Streaming atomic writer: output appears whole at commit or not at all.
 * Writes are buffered; the first failure sticks and is reported by commit. */
typedef struct ge_writer {
	int fd;
	int failed;        /* errno of the first failure, 0 if none */
	char *path, *tmp;
	ge_buf buf;
	size_t unsent;     /* bytes written since writeback was last started */
	ge_flushing flush; /* flushing it while it grows (flusher.h) */
} ge_writer;

int ge_writer_open(ge_writer *w, const char *path, ge_error *err);
void ge_writer_put(ge_writer *w, const void *p, size_t n);
/* The buffer ge_writer_put gathers into, for a caller that encodes its
 * pieces there itself (saving a copy of each); ge_writer_spill writes it
 * out once it holds enough. */
ge_buf *ge_writer_buf(ge_writer *w);
void ge_writer_spill(ge_writer *w);
/* Flushes, fsyncs, renames over path.  Always releases w. */
int ge_writer_commit(ge_writer *w, ge_error *err);
/* Removes the temp file and releases w. */
void ge_writer_abort(ge_writer *w);

#endif
