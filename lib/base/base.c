/* base.c: see base.h. */
#include "base/base.h"
#include "base/bounds.h"
#include "base/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int ge_verr(ge_error *err, int code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	}
	return code;
}

int ge_err(ge_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ge_verr(err, code, fmt, ap);
	va_end(ap);
	return code;
}

void ge_err_prefix(ge_error *err, const char *fmt, ...)
{
	char pre[512], old[sizeof err->msg];
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	size_t n = strlen(pre);
	if (n > sizeof err->msg - 3)
		n = sizeof err->msg - 3;
	memcpy(err->msg, pre, n);
	memcpy(err->msg + n, ": ", 2);
	size_t rest = sizeof err->msg - n - 3;
	size_t m = strnlen(old, rest);
	memcpy(err->msg + n + 2, old, m);
	err->msg[n + 2 + m] = 0;
}

static void oom(size_t n)
{
	fprintf(stderr, "gerewrite: out of memory allocating %zu bytes\n", n);
	abort();
}

void *ge_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *ge_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

/* ---- big arrays ---- */

/* A page the kernel maps on its first touch costs a fault, and a fault
 * costs far more than clearing the page (on the bench machine, whose
 * faults leave the virtual machine, about 11 us against 0.6): a range
 * about to be written whole is made resident by one call instead of up
 * to 256 faults.  Pages already resident are left as they are.  Before
 * Linux 5.14 (no MADV_POPULATE_WRITE) the call fails and the pages fault
 * as before. */
enum { PREFAULT_MIN = 1u << 16 };

void ge_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	static uintptr_t pg;
	if (len < PREFAULT_MIN)
		return;
	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);
		pg = v > 0 ? (uintptr_t)v : 4096;
	}
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t z = ((uintptr_t)p + len) & ~(pg - 1);
	if (z > a)
		madvise((void *)a, z - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

#if defined(GE_ASAN) || !(defined(MREMAP_MAYMOVE) && \
	defined(MREMAP_FIXED) && defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE))
#define BIG_MALLOC_ONLY 1
#endif

#ifdef BIG_MALLOC_ONLY

void *ge_big_try(size_t n)
{
	return calloc(1, n ? n : 1);
}

void *ge_big_alloc(size_t n)
{
	return ge_xcalloc(1, n);
}

void *ge_big_sparse(size_t n)
{
	return ge_xcalloc(1, n);
}

void *ge_big_realloc(void *p, size_t n)
{
	return ge_xrealloc(p, n);
}

void ge_big_free(void *p)
{
	free(p);
}

size_t ge_big_fit(size_t n)
{
	return n;
}

#else

/* Before each block: the length of its mapping (0: from malloc) and the
 * bytes asked for (what a move out of malloc copies). */
struct big {
	size_t map, n;
};

/* From BIG_MIN bytes a block is a mapping advised huge; below, from
 * PREFAULT_MIN, a mapping made resident at once (not page by page as it
 * is first written, and fresh: no clearing). */
enum { BIG_MIN = 1u << 20 };
#define HUGE_SZ ((size_t)2 << 20)

/* The length of the mapping for n bytes.  The kernel gives a huge page
 * only to a whole aligned 2 MiB of the mapping, and then all of it is
 * resident: a last part under 1 MiB past the last 2 MiB boundary is left
 * to small pages (fewer than 256 faults), a larger one gets a huge page
 * (less than 1 MiB unused), so that the resident size stays near what is
 * used. */
static size_t map_round(size_t n)
{
	static size_t pg;
	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);
		pg = v > 0 ? (size_t)v : 4096;
	}
	if (n > SIZE_MAX / 2)
		oom(n);
	n += sizeof(struct big);
	if ((n & (HUGE_SZ - 1)) >= HUGE_SZ / 2)
		return (n + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
	return (n + pg - 1) / pg * pg;
}

/* len bytes at a HUGE_SZ boundary: the kernel gives huge pages only to
 * aligned 2 MiB ranges. */
static void *map_aligned(size_t len)
{
	size_t span = len + HUGE_SZ;
	uint8_t *q = mmap(NULL, span, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)q + HUGE_SZ - 1) &
				 ~(uintptr_t)(HUGE_SZ - 1));
	if (a > q)
		munmap(q, (size_t)(a - q));
	if (q + span > a + len)
		munmap(a + len, (size_t)(q + span - (a + len)));
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

/* len bytes, resident. */
static void *map_resident(size_t len)
{
	void *q = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return NULL;
	ge_prefault(q, len);
	return q;
}

/* A size of at least n for a block that fills whole huge pages (an
 * arena chunk, filled from the start to the end). */
size_t ge_big_fit(size_t n)
{
	if (n < BIG_MIN || n > SIZE_MAX / 2)
		return n;
	return ((n + sizeof(struct big) + HUGE_SZ - 1) & ~(HUGE_SZ - 1)) -
	       sizeof(struct big);
}

void *ge_big_try(size_t n)
{
	struct big *h = NULL;
	if (n > SIZE_MAX / 2)
		return NULL;
	if (n >= PREFAULT_MIN) {
		size_t len = map_round(n);
		if ((h = n >= BIG_MIN ? map_aligned(len) : map_resident(len)))
			h->map = len;
	}
	if (!h && (h = calloc(1, sizeof *h + n)))
		h->map = 0;
	if (!h)
		return NULL;
	h->n = n;
	return h + 1;
}

void *ge_big_alloc(size_t n)
{
	void *p = ge_big_try(n);
	if (!p)
		oom(n);
	return p;
}

void *ge_big_sparse(size_t n)
{
	if (n < PREFAULT_MIN)
		return ge_big_alloc(n);
	/* a mapping of its own, whose pages come as they are written:
	 * malloc may hand out memory it had, which calloc clears whole */
	size_t len = (sizeof(struct big) + n + 4095) & ~(size_t)4095;
	if (len < n)
		oom(n);
	struct big *h = mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		oom(n);
	h->map = len;
	h->n = n;
	return h + 1;
}

void *ge_big_realloc(void *p, size_t n)
{
	if (!p)
		return ge_big_alloc(n);
	struct big *h = (struct big *)p - 1;
	if (h->map) {
		size_t len = map_round(n);
		if (len <= h->map) {
			h->n = n;
			return p;
		}
		/* in place when the address space after it is free, else
		 * its pages move to a new aligned range; a mapping of small
		 * pages becoming huge is copied below (its pages, moved,
		 * would keep the huge page they lie in from being made) */
		size_t was = h->map;
		uint8_t *a = NULL;
		if (n >= BIG_MIN && was < HUGE_SZ)
			a = NULL;
		else if (mremap(h, was, len, 0) != MAP_FAILED)
			a = (uint8_t *)h;
		else if ((a = map_aligned(len)) &&
			 mremap(h, was, was, MREMAP_MAYMOVE | MREMAP_FIXED, a) ==
				 MAP_FAILED) {
			munmap(a, len);
			a = NULL;
		}
		if (a) {
			/* the new part as ge_big_try makes it */
			if (n >= BIG_MIN)
				madvise(a + was, len - was, MADV_HUGEPAGE);
			else
				ge_prefault(a + was, len - was);
			h = (struct big *)a;
			h->map = len;
			h->n = n;
			return h + 1;
		}
	} else if (n < PREFAULT_MIN) {
		if (n > SIZE_MAX - sizeof *h)
			oom(n);
		h = ge_xrealloc(h, sizeof *h + n);
		h->n = n;
		return h + 1;
	}
	void *q = ge_big_alloc(n);
	memcpy(q, p, h->n < n ? h->n : n);
	ge_big_free(p);
	return q;
}

void ge_big_free(void *p)
{
	if (!p)
		return;
	struct big *h = (struct big *)p - 1;
	if (h->map)
		munmap(h, h->map);
	else
		free(h);
}

#endif

void *ge_big_grow_zeroed(void *p, size_t have, size_t want, size_t size)
{
	if (want > SIZE_MAX / size)
		oom(SIZE_MAX);
	if (!p)
		return ge_big_alloc(want * size);
	uint8_t *q = ge_big_realloc(p, want * size);
	if (want > have)
		memset(q + have * size, 0, (want - have) * size);
	return q;
}

void *ge_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *ge_xstrndup(const char *s, size_t n)
{
	char *p = ge_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *ge_xstrdup(const char *s)
{
	return ge_xstrndup(s, strlen(s));
}

/* ---- buffers ---- */

void ge_buf_reserve(ge_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->data = ge_xrealloc(b->data, cap);
	b->cap = cap;
}

void ge_buf_add(ge_buf *b, const void *p, size_t n)
{
	ge_buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void ge_buf_addc(ge_buf *b, int c)
{
	ge_buf_reserve(b, 1);
	b->data[b->len++] = (uint8_t)c;
	b->data[b->len] = 0;
}

void ge_buf_adds(ge_buf *b, const char *s)
{
	ge_buf_add(b, s, strlen(s));
}

void ge_buf_printf(ge_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ge_buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ge_buf_free(ge_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

uint8_t *ge_buf_steal(ge_buf *b, size_t *len)
{
	uint8_t *d = b->data;
	if (!d)
		d = ge_xcalloc(1, 1);
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

void ge_buf_varint(ge_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		tmp[n++] = c | (v ? 0x80 : 0);
	} while (v);
	ge_buf_add(b, tmp, n);
}

void ge_buf_tag(ge_buf *b, uint32_t field, int wiretype)
{
	ge_buf_varint(b, ((uint64_t)field << 3) | (uint64_t)wiretype);
}

/* One reserve for tag, length and bytes: every field of an encoded op
 * passes here. */
void ge_buf_lenfield(ge_buf *b, uint32_t field, const void *p, size_t n)
{
	ge_buf_reserve(b, n + 20);
	uint8_t *d = b->data + b->len;
	d = ge_put_uvarint(d, (uint64_t)field << 3 | 2);
	d = ge_put_uvarint(d, n);
	if (n)
		memcpy(d, p, n);
	b->len = (size_t)(d - b->data) + n;
	b->data[b->len] = 0;
}

void ge_buf_wrap(ge_buf *b, size_t start, uint32_t field)
{
	uint8_t hdr[20];
	size_t h = 0, n = b->len - start;
	uint64_t v = (uint64_t)field << 3 | 2;
	for (int pass = 0; pass < 2; pass++) {
		do {
			uint8_t c = v & 0x7f;
			v >>= 7;
			hdr[h++] = c | (v ? 0x80 : 0);
		} while (v);
		v = n;
	}
	ge_buf_reserve(b, h);
	memmove(b->data + start + h, b->data + start, n);
	memcpy(b->data + start, hdr, h);
	b->len += h;
	b->data[b->len] = 0;
}

int ge_read_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return -1;
		uint8_t c = *p++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* ---- arenas ---- */

struct ge_arena_chunk {
	ge_arena_chunk *next;
	size_t size;
	max_align_t data[];
};

void ge_arena_init(ge_arena *a)
{
	a->head = NULL;
	a->used = a->size = 0;
}

/* Chunks double from 4 KiB, so that a small graph stays small, up to
 * 64 MiB: a big graph's names and edges (hundreds of MiB for a million
 * nodes) then take a few big arrays, whose unused tail costs address
 * space only, instead of hundreds of 1 MiB blocks faulted in 4 KiB at a
 * time. */
enum { ARENA_MAX_CHUNK = 64u << 20 };

void *ge_arena_alloc(ge_arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (!a->head || a->used + n > a->size) {
		size_t sz = a->head ? a->size * 2 : 4096;
		if (sz > ARENA_MAX_CHUNK)
			sz = ARENA_MAX_CHUNK;
		if (sz < n)
			sz = n;
		if (sz > SIZE_MAX / 2)
			oom(sz);
		sz = ge_big_fit(sizeof(ge_arena_chunk) + sz) -
		     sizeof(ge_arena_chunk);
		ge_arena_chunk *c = ge_big_try(sizeof *c + sz);
		/* under an address-space limit the doubling may not fit
		 * where what is asked for does */
		while (!c && sz > n) {
			sz = sz / 2 > n ? sz / 2 : n;
			c = ge_big_try(sizeof *c + sz);
		}
		if (!c)
			oom(sizeof *c + sz);
		c->next = a->head;
		c->size = sz;
		a->head = c;
		a->size = sz;
		a->used = 0;
	}
	void *p = (char *)a->head->data + a->used;
	a->used += n;
	return p;
}

char *ge_arena_strndup(ge_arena *a, const char *s, size_t n)
{
	char *p = ge_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *ge_arena_strdup(ge_arena *a, const char *s)
{
	return ge_arena_strndup(a, s, strlen(s));
}

void ge_arena_free(ge_arena *a)
{
	ge_arena_chunk *c = a->head;
	while (c) {
		ge_arena_chunk *n = c->next;
		ge_big_free(c);
		c = n;
	}
	ge_arena_init(a);
}

/* ---- hashing ---- */

/* FNV-1a spreads names that differ in their last characters poorly over
 * the low bits a power-of-two table uses; a final avalanche (the murmur3
 * finalizer) fixes that. */
static uint32_t fmix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

size_t ge_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t *row = ge_xcalloc(nb + 1, sizeof *row);
	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	size_t d = row[nb];
	free(row);
	return d;
}

uint32_t ge_hash(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return fmix(h);
}

/* Eight bytes with bit 5 of each set: upper and lower case ASCII
 * letters give the same value, so names equal but for case hash alike
 * (a few other bytes fold too, as '_' with DEL: the index compares the
 * names anyway, and a byte or two less per mix is what matters). */
static uint64_t fold8(uint64_t w)
{
	return w | 0x2020202020202020ull;
}

/* Names are hashed once per op at every load: eight bytes a step, not
 * one (the index keeps only these values, never on disk). */
uint32_t ge_hash_ci(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	int whole = n >= 8;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ fold8(w)) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	(void)whole;
	if (n) {
		uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the last eight bytes, shifted: the value a copy of the n
		 * left gives, without a call for a copy of variable size */
		if (whole) {
			memcpy(&w, s + n - 8, 8);
			w >>= 8 * (8 - n);
		} else
#endif
			memcpy(&w, s, n);
		h = (h ^ fold8(w)) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 32;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h >> 32);
}

/* ---- files ---- */

int ge_file_read(const char *path, uint8_t **data, size_t *len, ge_error *err)
{
	/* O_NONBLOCK: opening a FIFO nobody writes to must not hang */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return ge_err(err, GE_EIO, "%s: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return ge_err(err, GE_EIO, "%s: is a directory", path);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	/* a pipe or a device (/dev/zero) may never end: the memory budget
	 * bounds what is read */
	uint64_t max = ge_max_memory();
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size * 2 + 4096 > max)
		max = (uint64_t)st.st_size * 2 + 4096;
	size_t cap = st.st_size > 0 ? (size_t)st.st_size : 4096, n = 0;
	uint8_t *buf = ge_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			/* the file is read whole: only a file that grew since
			 * the stat needs a bigger buffer, so the end is probed
			 * first rather than the buffer doubled for nothing */
			uint8_t probe;
			ssize_t r = read(fd, &probe, 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				int e = errno;
				free(buf);
				close(fd);
				return ge_err(err, GE_EIO, "%s: %s", path,
					      strerror(e));
			}
			if (r == 0)
				break;
			if (cap >= max) {
				free(buf);
				close(fd);
				return ge_budget_check(UINT64_MAX, path,
						       "reading the file", err);
			}
			cap = cap * 2 < max ? cap * 2 : (size_t)max;
			buf = ge_xrealloc(buf, cap + 1);
			buf[n++] = probe;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			return ge_err(err, GE_EIO, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*data = buf;
	*len = n;
	return GE_OK;
}

int ge_writer_open(ge_writer *w, const char *path, ge_error *err)
{
	memset(w, 0, sizeof *w);
	size_t n = strlen(path);
	w->path = ge_xstrdup(path);
	w->tmp = ge_xmalloc(n + 64);
	/* what killed saves to this path left behind goes first */
	ge_tmp_clean(path);
	w->fd = ge_tmp_create(path, 0, w->tmp, n + 64);
	w->flush.fd = w->fd;
	if (w->fd < 0) {
		int e = errno;
		free(w->path);
		free(w->tmp);
		w->path = w->tmp = NULL;
		return ge_err(err, GE_EIO, "%s: cannot create: %s", path,
			      strerror(e));
	}
	/* mkstemp makes 0600; outputs should look like any other file. */
	mode_t um = umask(0);
	umask(um);
	fchmod(w->fd, 0666 & ~um);
	return GE_OK;
}

/* Every WRITEBACK_PIECE bytes written, the disk is asked to start on
 * them (without waiting); from GE_FLUSH_PIECE bytes on, a helper thread
 * also flushes what has been written (base/flusher.h), so that the
 * commit's fsync has only the last piece left to wait for rather than
 * the whole file. */
enum { WRITER_BUF = 1u << 18, WRITEBACK_PIECE = 4u << 20 };

static void writer_write(ge_writer *w, const uint8_t *s, size_t n)
{
	while (!w->failed && n) {
		size_t k = n < WRITEBACK_PIECE ? n : WRITEBACK_PIECE;
		ssize_t r = write(w->fd, s, k);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			w->failed = errno;
			break;
		}
		s += r;
		n -= (size_t)r;
		w->unsent += (size_t)r;
		ge_flushing_wrote(&w->flush, (size_t)r);
		if (w->unsent >= WRITEBACK_PIECE) {
#ifdef SYNC_FILE_RANGE_WRITE
			sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
			w->unsent = 0;
		}
	}
}

static void writer_flush(ge_writer *w)
{
	writer_write(w, w->buf.data, w->buf.len);
	w->buf.len = 0;
}

void ge_writer_put(ge_writer *w, const void *p, size_t n)
{
	if (w->failed)
		return;
	if (n >= WRITER_BUF) {
		writer_flush(w);
		writer_write(w, p, n);
		return;
	}
	if (w->buf.len + n > WRITER_BUF)
		writer_flush(w);
	ge_buf_add(&w->buf, p, n);
}

ge_buf *ge_writer_buf(ge_writer *w)
{
	return &w->buf;
}

void ge_writer_spill(ge_writer *w)
{
	if (w->buf.len >= WRITER_BUF)
		writer_flush(w);
}

static void writer_release(ge_writer *w)
{
	if (w->tmp)
		ge_tmp_forget(w->tmp);
	ge_buf_free(&w->buf);
	free(w->path);
	free(w->tmp);
	w->path = w->tmp = NULL;
	w->fd = -1;
}

void ge_writer_abort(ge_writer *w)
{
	ge_flushing_end(&w->flush);
	if (w->fd >= 0) {
		close(w->fd);
		unlink(w->tmp);
	}
	writer_release(w);
}

int ge_writer_commit(ge_writer *w, ge_error *err)
{
	writer_flush(w);
	if (!w->failed && fsync(w->fd) < 0)
		w->failed = errno;
	/* after the fsync, which has found the helper's work done: a flush
	 * the helper saw fail may not fail again here */
	int ferr = ge_flushing_end(&w->flush);
	if (ferr && !w->failed)
		w->failed = ferr;
	if (close(w->fd) < 0 && !w->failed)
		w->failed = errno;
	w->fd = -1;
	ge_save_pause();
	if (!w->failed && rename(w->tmp, w->path) < 0)
		w->failed = errno;
	if (w->failed) {
		int e = w->failed;
		unlink(w->tmp);
		ge_err(err, GE_EIO, "%s: cannot write: %s", w->path, strerror(e));
		writer_release(w);
		return GE_EIO;
	}
	writer_release(w);
	return GE_OK;
}

int ge_file_write_atomic(const char *path, const void *data, size_t len,
			 ge_error *err)
{
	ge_writer w;
	int rc = ge_writer_open(&w, path, err);
	if (rc)
		return rc;
	ge_writer_put(&w, data, len);
	return ge_writer_commit(&w, err);
}
