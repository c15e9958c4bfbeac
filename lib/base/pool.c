/*
 * base/pool.c: the small-block allocator (base/pool.h).
 */
#include "base/pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* A slab's first 16 bytes: a link to the slab before it. */
enum { SLAB_HEAD = 16 };

/* The class of a block of n bytes (1 <= n <= GE_POOL_MAX): its size
 * rounded up to GE_POOL_STEP, over GE_POOL_STEP. */
static size_t class_of(size_t n)
{
	return (n + GE_POOL_STEP - 1) / GE_POOL_STEP;
}

/* A block of class c, from its free list or the newest slab. */
static void *take(ge_pool *p, size_t c)
{
	void *b = p->free[c];
	if (b) {
		memcpy(&p->free[c], b, sizeof(void *));
		return b;
	}
	size_t sz = c * GE_POOL_STEP;
	if (p->left < sz) {
		/* the rest of the old slab goes to the free list of its size
		 * (at most one block of one class: a waste under 256 bytes) */
		if (p->left >= GE_POOL_STEP) {
			size_t rc = p->left / GE_POOL_STEP;
			memcpy(p->cur, &p->free[rc], sizeof(void *));
			p->free[rc] = p->cur;
		}
		/* past GE_POOL_BIG held, a slab fills a huge page (a big
		 * array: one fault for 2 MiB of blocks where the kernel
		 * gives huge pages, not 512) */
		size_t len = p->slab_bytes < GE_POOL_BIG
				     ? GE_POOL_SLAB
				     : ge_big_fit(GE_POOL_BIG);
		char *s = ge_big_try(len);
		if (!s)
			return NULL;
		memcpy(s, &p->slabs, sizeof(void *));
		p->slabs = s;
		p->slab_bytes += len;
		p->cur = s + SLAB_HEAD;
		p->left = (len - SLAB_HEAD) / GE_POOL_STEP * GE_POOL_STEP;
	}
	b = p->cur;
	p->cur += sz;
	p->left -= sz;
	return b;
}

static void give(ge_pool *p, void *b, size_t c)
{
	memcpy(b, &p->free[c], sizeof(void *));
	p->free[c] = b;
}

/* Where a block of n bytes (n > 0) lives. */
enum { IN_POOL, IN_MALLOC, IN_BIG };
static int home_of(size_t n)
{
	return n <= GE_POOL_MAX ? IN_POOL : n < GE_POOL_LARGE ? IN_MALLOC : IN_BIG;
}

static void *get(ge_pool *p, size_t n)
{
	int h = home_of(n);
	return h == IN_POOL ? take(p, class_of(n)) : h == IN_MALLOC
		? malloc(n) : ge_big_try(n);
}

static void put(ge_pool *p, void *b, size_t n)
{
	int h = home_of(n);
	if (h == IN_POOL)
		give(p, b, class_of(n));
	else if (h == IN_MALLOC)
		free(b);
	else
		ge_big_free(b);
}

void *ge_pool_realloc(ge_pool *p, void *ptr, size_t old, size_t n)
{
	if (!ptr)
		return n ? get(p, n) : NULL;
	if (old == 0) /* a block has a byte at least: it was made so */
		old = 1;
	if (n == 0) {
		put(p, ptr, old);
		return NULL;
	}
	int ho = home_of(old), hn = home_of(n);
	if (ho == IN_POOL && hn == IN_POOL && class_of(old) == class_of(n))
		return ptr;
	if (ho == IN_MALLOC && hn == IN_MALLOC)
		return realloc(ptr, n);
	void *b = get(p, n);
	if (b) {
		memcpy(b, ptr, old < n ? old : n);
		put(p, ptr, old);
	}
	return b;
}

void ge_pool_destroy(ge_pool *p)
{
	void *s = p->slabs;
	while (s) {
		void *next;
		memcpy(&next, s, sizeof next);
		ge_big_free(s);
		s = next;
	}
	*p = (ge_pool)GE_POOL_INIT;
}
