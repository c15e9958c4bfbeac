/*
 * ckarith.h: checked size arithmetic, the one place where dimensions,
 * element counts, offsets, ends and strides of a hostile model are
 * computed.
 *
 * Every shape rule and kernel that adds, multiplies or offsets sizes a
 * model declares goes through these helpers: each returns 0 with the
 * result, or -1 when the exact result does not fit an int64 (or breaks
 * the rule it checks), and writes nothing else.  A caller that gets -1
 * refuses the op with a message naming it.  Base layer: no graph, usable
 * by every kernel (lib/eval*.c, lib/shapes*.c, lib/exec/).
 */
#ifndef GE_CKARITH_H
#define GE_CKARITH_H

#include <stddef.h>
#include <stdint.h>

/* a + b, a - b, a * b. */
static inline int ge_ck_add(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r) ? -1 : 0;
}

static inline int ge_ck_sub(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_sub_overflow(a, b, r) ? -1 : 0;
}

static inline int ge_ck_mul(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}

/* a * b + c. */
static inline int ge_ck_madd(int64_t a, int64_t b, int64_t c, int64_t *r)
{
	int64_t t;
	return ge_ck_mul(a, b, &t) || ge_ck_add(t, c, r) ? -1 : 0;
}

/* a * b for a, b >= 0, INT64_MAX when it does not fit: for extents of
 * a value with no elements (one dim 0, others as large as declared),
 * which no loop walks. */
static inline int64_t ge_ck_mul_sat(int64_t a, int64_t b)
{
	int64_t r;
	return ge_ck_mul(a, b, &r) ? INT64_MAX : r;
}

/* Unsigned counts (work units, bytes): a + b, a * b. */
static inline int ge_ck_uadd(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_add_overflow(a, b, r) ? -1 : 0;
}

static inline int ge_ck_umul(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}

/* A dimension grown by two non-negative amounts (Pad: before and after):
 * dim + a + b, each operand >= 0. */
static inline int ge_ck_dim_grow(int64_t dim, int64_t a, int64_t b,
				 int64_t *r)
{
	int64_t t;
	if (dim < 0 || a < 0 || b < 0)
		return -1;
	return ge_ck_add(dim, a, &t) || ge_ck_add(t, b, r) ? -1 : 0;
}

/* A window [begin, begin + size) inside [0, dim): both non-negative and
 * the end, computed without overflow, at most dim.  *end when given. */
static inline int ge_ck_window(int64_t begin, int64_t size, int64_t dim,
			       int64_t *end)
{
	int64_t e;
	if (begin < 0 || size < 0 || dim < 0 || ge_ck_add(begin, size, &e) ||
	    e > dim)
		return -1;
	if (end)
		*end = e;
	return 0;
}

/* Elements of a shape of rank dims, every dim >= 0, product at most
 * limit (pass INT64_MAX for no limit beyond int64). */
static inline int ge_ck_count(int rank, const int64_t *dims, int64_t limit,
			      int64_t *n)
{
	int64_t c = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || ge_ck_mul(c, dims[i], &c))
			return -1;
	}
	if (c > limit)
		return -1;
	*n = c;
	return 0;
}

/* Row-major strides of a shape (st[rank-1] = 1), every dim >= 0: the
 * product of all dims must fit, so every stride and offset inside the
 * shape does. */
static inline int ge_ck_strides(int rank, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = s;
		if (dims[i] < 0 || ge_ck_mul(s, dims[i], &s))
			return -1;
	}
	return 0;
}

/* Sum of n non-negative sizes (a concatenation, a split's parts). */
static inline int ge_ck_sum(const int64_t *x, size_t n, int64_t *r)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		if (x[i] < 0 || ge_ck_add(s, x[i], &s))
			return -1;
	*r = s;
	return 0;
}

#endif
