/*
 * exec/compare.h: how far one tensor is from another.
 *
 * ge_xcompare(a, b) measures a against b, the reference (b is the
 * output of the model a rewrite started from): per element d = |a - b|,
 *   max_abs   the largest d (at element `worst`),
 *   max_rel   the largest d / |b| (d != 0 where b is 0 counts as
 *             infinity),
 *   mean_abs  the mean of d,
 *   cosine    the cosine similarity of a and b as vectors (1 when both
 *             are all zeros, 0 when only one is),
 *   outside   the elements with d > atol + rtol * |b|, the test of
 *             numpy.allclose.
 * NaN: a NaN where the other has one too is equal; a NaN against a
 * number is outside (counted in nan_mismatch) and leaves max_abs,
 * max_rel, mean_abs and cosine to the other elements.  Infinities are
 * equal when they are the same; otherwise d is infinite.  Strings are
 * equal or not (outside counts the unequal ones), bools and integers
 * compare as numbers.  The dtypes may differ (a float16 rewrite against
 * its float32 model); the shapes may not.
 */
#ifndef GE_EXEC_COMPARE_H
#define GE_EXEC_COMPARE_H

#include <stdint.h>

#include "base/base.h"
#include "exec/xtensor.h"

typedef struct ge_xcmp {
	int64_t n;            /* elements compared */
	double max_abs, max_rel, mean_abs, cosine;
	int64_t outside;      /* elements outside atol + rtol * |b| */
	int64_t nan_mismatch; /* NaN in one only (included in outside) */
	int64_t worst;        /* element of max_abs, -1 if none */
	double a_worst, b_worst;
	double b_max_abs;     /* the largest |b|, the scale of the output */
	double atol, rtol;    /* what the test used */
} ge_xcmp;

/* Fills r; GE_EINVAL (with err "shapes differ: float32[2] against
 * float32[3]") when the shapes differ, or one is a string tensor and the
 * other not, or a dtype holds no values (resource, variant). */
int ge_xcompare(const ge_xt *a, const ge_xt *b, double atol, double rtol,
		ge_xcmp *r, ge_error *err);

/* Whether r is within tolerance (nothing outside). */
static inline int ge_xcmp_ok(const ge_xcmp *r) { return r->outside == 0; }

/* min, max and mean of a numeric tensor's finite elements, for printing;
 * count of NaNs.  0 for strings and objects (nothing filled). */
typedef struct ge_xstats {
	double min, max, mean;
	int64_t nan, counted; /* NaNs, and the other elements */
} ge_xstats;
int ge_xstats_of(const ge_xt *t, ge_xstats *s);

#endif
