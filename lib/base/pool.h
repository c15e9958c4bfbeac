/*
 * base/pool.h: a small-block allocator for an owner that says each
 * block's size when it frees or resizes it, as Lua's allocator interface
 * does (lua_Alloc's osize).
 *
 * Why: making a Lua object (an op userdata, a table, a string) costs a
 * malloc, and a script that asks for every op of a large graph makes
 * hundreds of thousands of them in a row, each carved by glibc from the
 * top of its heap (about 175 instructions of malloc's slow path, a third
 * of an op userdata's cost).  Here a block of at most GE_POOL_MAX bytes is
 * taken from a free list of its size class, or carved from a 64 KiB slab,
 * in a few instructions; a freed block goes back on its list.  Once the
 * pool holds 2 MiB, a slab is a big array of a huge page (base.h), so that
 * a list of every op faults once per 2 MiB of userdata, not per 4 KiB
 * (on the bench machine, a fresh page costs 12 us).  Larger blocks go to
 * malloc, and from GE_POOL_LARGE on they are big arrays (a table of every
 * op's userdata: made resident at once, base.h).  Slabs are given back by
 * ge_pool_destroy alone: the pool keeps what its owner once held at the
 * same time, as Lua's own heap does.
 *
 * The contract: a block is freed or resized with the pool that gave it and
 * the size it was last given with (the owner keeps that; the pool has no
 * header to read it from).  Blocks are aligned to 16 bytes, as malloc's.
 * A failed allocation returns NULL and changes nothing.  Not thread-safe:
 * one owner (one Lua state) uses it.  t/pool checks it against a model
 * of every block's bytes.
 */
#ifndef GE_BASE_POOL_H
#define GE_BASE_POOL_H

#include <stddef.h>

#define GE_POOL_STEP 16  /* size classes: 16, 32, ... GE_POOL_MAX */
#define GE_POOL_MAX 256
#define GE_POOL_SLAB 65536  /* a slab while the pool holds less than */
#define GE_POOL_BIG (2u << 20) /* this, then slabs of a huge page */
#define GE_POOL_LARGE (64u << 10) /* blocks from this size: big arrays */

typedef struct ge_pool {
	void *free[GE_POOL_MAX / GE_POOL_STEP + 1]; /* by class */
	void *slabs;     /* each slab's first word links the next */
	char *cur;       /* the part of the newest slab not carved yet */
	size_t left;
	size_t slab_bytes; /* held in slabs */
} ge_pool;

#define GE_POOL_INIT {{0}, NULL, NULL, 0, 0}

/* lua_Alloc's rules: ptr NULL makes a block of n bytes; n 0 frees ptr
 * (returns NULL); else ptr, of old bytes, becomes a block of n bytes
 * holding its first min(old, n) bytes, maybe moved.  NULL when there is
 * no memory (the block given stays as it was). */
void *ge_pool_realloc(ge_pool *p, void *ptr, size_t old, size_t n);

/* Gives back every slab; blocks of the pool are then gone, the larger
 * ones (malloc's) are the owner's to have freed. */
void ge_pool_destroy(ge_pool *p);

#endif
