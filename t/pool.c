/*
 * t/pool.c: the small-block allocator (lib/base/pool.c) against its
 * contract: lua_Alloc's rules, every block 16-aligned, a block's bytes
 * kept through resizes (within and across size classes, into and out of
 * malloc's sizes and big arrays'), and no two live blocks sharing a byte, over a long
 * random sequence checked against a model of what each block holds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/pool.h"

#define SLOTS 512
#define STEPS 200000

static struct {
	unsigned char *p;
	size_t n;
	unsigned char fill;
} slot[SLOTS];

/* Whether block k still holds its fill byte everywhere. */
static int intact(int k)
{
	for (size_t i = 0; i < slot[k].n; i++)
		if (slot[k].p[i] != slot[k].fill)
			return 0;
	return 1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A size: mostly small, now and then past GE_POOL_MAX (malloc's), once
 * in a while past GE_POOL_LARGE or GE_POOL_BIG (a big array's). */
static size_t some_size(void)
{
	uint64_t r = next();
	if (r % 2048 == 0)
		return GE_POOL_BIG + (size_t)(r >> 16) % 5000;
	if (r % 2048 == 1)
		return GE_POOL_LARGE + (size_t)(r >> 16) % 300000;
	return r % 8 ? 1 + (size_t)(r >> 8) % GE_POOL_MAX
		     : GE_POOL_MAX + 1 + (size_t)(r >> 8) % 700;
}

static void rules(void)
{
	ge_pool p = GE_POOL_INIT;
	char *a = ge_pool_realloc(&p, NULL, 77, 10);
	ok(a != NULL && (uintptr_t)a % 16 == 0,
	   "NULL and a size make a block (osize ignored), 16-aligned");
	memcpy(a, "012345678", 10);
	ok(ge_pool_realloc(&p, a, 10, 16) == a,
	   "a resize within its class keeps the block");
	char *b = ge_pool_realloc(&p, a, 16, 40);
	ok(b && !memcmp(b, "012345678", 10),
	   "across classes it moves with its bytes");
	char *c = ge_pool_realloc(&p, NULL, 0, 16);
	ok(c == a, "the freed block is the next of its class");
	char *big = ge_pool_realloc(&p, b, 40, 5000);
	ok(big && !memcmp(big, "012345678", 10), "into malloc's sizes");
	char *large = ge_pool_realloc(&p, big, 5000, GE_POOL_LARGE);
	ok(large && !memcmp(large, "012345678", 10) &&
	   (uintptr_t)large % 16 == 0, "into a big array's from "
	   "GE_POOL_LARGE");
	big = ge_pool_realloc(&p, large, GE_POOL_LARGE, 5000);
	char *huge = ge_pool_realloc(&p, big, 5000, GE_POOL_BIG + 1);
	ok(huge && !memcmp(huge, "012345678", 10) &&
	   (uintptr_t)huge % 16 == 0, "into a big array's");
	huge[GE_POOL_BIG] = 1;
	char *back = ge_pool_realloc(&p, huge, GE_POOL_BIG + 1, 12);
	ok(back && !memcmp(back, "012345678", 10),
	   "and back, the first bytes kept");
	ok(ge_pool_realloc(&p, back, 12, 0) == NULL, "a size 0 frees");
	ok(ge_pool_realloc(&p, c, 16, 0) == NULL, "every block");
	ok(p.slab_bytes == GE_POOL_SLAB, "one slab held (%zu bytes)",
	   p.slab_bytes);
	ge_pool_destroy(&p);
	ok(p.slabs == NULL && p.slab_bytes == 0, "destroy gives it back");
}

static void random_run(void)
{
	ge_pool p = GE_POOL_INIT;
	int bad = 0, aligned = 1;
	size_t live_max = 0;
	for (long s = 0; s < STEPS && !bad; s++) {
		int k = (int)(next() % SLOTS);
		if (!slot[k].p) {
			size_t n = some_size();
			slot[k].p = ge_pool_realloc(&p, NULL, 0, n);
			slot[k].n = n;
		} else if (next() % 3 == 0) {
			if (!intact(k))
				bad = 1;
			ge_pool_realloc(&p, slot[k].p, slot[k].n, 0);
			slot[k].p = NULL;
			continue;
		} else {
			if (!intact(k))
				bad = 1;
			size_t n = some_size();
			slot[k].p = ge_pool_realloc(&p, slot[k].p, slot[k].n,
						    n);
			size_t keep = n < slot[k].n ? n : slot[k].n;
			for (size_t i = 0; i < keep; i++)
				if (slot[k].p[i] != slot[k].fill)
					bad = 1;
			slot[k].n = n;
		}
		if (!slot[k].p) {
			bad = 1;
			break;
		}
		aligned = aligned && (uintptr_t)slot[k].p % 16 == 0;
		/* a new fill: a block overlapping another spoils it */
		slot[k].fill = (unsigned char)next();
		memset(slot[k].p, slot[k].fill, slot[k].n);
		size_t live = 0;
		if (s % 1000 == 0) {
			for (int i = 0; i < SLOTS; i++) {
				if (slot[i].p && !intact(i))
					bad = 1;
				live += slot[i].p ? slot[i].n : 0;
			}
			if (live > live_max)
				live_max = live;
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (slot[i].p && !intact(i))
			bad = 1;
	ok(!bad, "%d steps of alloc, resize and free: every block kept its "
	   "bytes and no two shared one", STEPS);
	ok(aligned, "every block 16-aligned");
	ok(p.slab_bytes <= 4 * live_max + 4 * GE_POOL_SLAB,
	   "the slabs (%zu bytes) stay within a few times what was live at "
	   "most (%zu bytes)", p.slab_bytes, live_max);
	for (int i = 0; i < SLOTS; i++)
		if (slot[i].p)
			ge_pool_realloc(&p, slot[i].p, slot[i].n, 0);
	ge_pool_destroy(&p);
}

int main(void)
{
	rules();
	random_run();
	return tap_done();
}
