/*
 * t/xcompare.c: comparing two tensors (lib/exec/compare.c): the figures,
 * NaN and infinity, shapes and dtypes.
 */
#include <math.h>
#include <string.h>

#include "tap.h"

#include "exec/compare.h"

static ge_xt *f32(int n, const float *v)
{
	int64_t d = n;
	ge_xt *t = ge_xt_new(1, 1, &d, NULL, "t", NULL);
	memcpy(t->data, v, (size_t)n * 4);
	return t;
}

int main(void)
{
	ge_error err;
	ge_xcmp c;
	ge_xt *a = f32(4, (const float[]){1, 2, 3, 4});
	ge_xt *b = f32(4, (const float[]){1, 2, 3, 4});
	ok(ge_xcompare(a, b, 0, 0, &c, &err) == GE_OK && c.max_abs == 0 &&
		   c.outside == 0 && c.cosine == 1 && ge_xcmp_ok(&c),
	   "equal tensors: within a zero tolerance");
	ge_xt_unref(a);
	a = f32(4, (const float[]){1, 2.5f, 3, 3});
	ok(ge_xcompare(a, b, 0.1, 0, &c, &err) == GE_OK, "compared");
	ok(c.max_abs == 1 && c.worst == 3 && c.a_worst == 3 && c.b_worst == 4,
	   "max abs diff 1 at element 3");
	ok(fabs(c.max_rel - 0.25) < 1e-12, "max rel diff 0.25 (%g)", c.max_rel);
	ok(fabs(c.mean_abs - 0.375) < 1e-12, "mean abs diff 0.375");
	ok(c.outside == 2 && !ge_xcmp_ok(&c), "2 outside atol 0.1");
	double dot = 1 + 5 + 9 + 12, na = sqrt(1 + 6.25 + 9 + 9),
	       nb = sqrt(30);
	ok(fabs(c.cosine - dot / (na * nb)) < 1e-12, "cosine %g", c.cosine);
	ok(c.b_max_abs == 4, "the reference's scale");
	ge_xcompare(a, b, 0, 0.25, &c, &err);
	ok(c.outside == 0, "rtol 0.25 takes in 0.5 from 2 and 1 from 4");
	ge_xcompare(a, b, 0, 0.2, &c, &err);
	ok(c.outside == 2, "rtol 0.2 does not");
	ge_xt_unref(a);
	ge_xt_unref(b);

	a = f32(3, (const float[]){NAN, NAN, 1});
	b = f32(3, (const float[]){NAN, 2, 1});
	ge_xcompare(a, b, 1e-5, 1e-5, &c, &err);
	ok(c.nan_mismatch == 1 && c.outside == 1 && c.max_abs == 0,
	   "NaN against NaN is equal, against a number outside");
	ge_xt_unref(a);
	ge_xt_unref(b);
	a = f32(2, (const float[]){INFINITY, 0});
	b = f32(2, (const float[]){INFINITY, 0});
	ge_xcompare(a, b, 0, 0, &c, &err);
	ok(c.outside == 0 && c.cosine == 1, "the same infinity is equal");
	ge_xt_unref(b);
	b = f32(2, (const float[]){-INFINITY, 1});
	ge_xcompare(a, b, 0, 0, &c, &err);
	ok(c.outside == 2 && isinf(c.max_abs) && isinf(c.max_rel),
	   "opposite infinities: infinitely far");
	ge_xt_unref(a);
	ge_xt_unref(b);
	a = f32(2, (const float[]){0, 0});
	b = f32(2, (const float[]){0, 0});
	ge_xcompare(a, b, 0, 0, &c, &err);
	ok(c.cosine == 1, "zeros against zeros: cosine 1");
	ge_xt_unref(b);
	b = f32(2, (const float[]){1, 0});
	ge_xcompare(a, b, 0, 0, &c, &err);
	ok(c.cosine == 0 && isinf(c.max_rel) == 0 && c.max_rel == 1,
	   "zeros against a vector: cosine 0, rel 1");
	ge_xt_unref(b);

	b = f32(3, (const float[]){1, 2, 3});
	ok(ge_xcompare(a, b, 0, 0, &c, &err) == GE_EINVAL &&
		   strstr(err.msg, "shapes differ") &&
		   strstr(err.msg, "float32[2]") && strstr(err.msg, "[3]"),
	   "%s", err.msg);
	ge_xt_unref(b);
	int64_t d = 2;
	b = ge_xt_new(3, 1, &d, NULL, "t", NULL); /* int32 zeros */
	ok(ge_xcompare(a, b, 0, 0, &c, &err) == GE_OK && c.outside == 0,
	   "float32 against int32 compares values");
	ge_xt_unref(b);
	ge_xt_unref(a);

	a = ge_xt_new(7, 1, &d, NULL, "t", NULL);
	b = ge_xt_new(7, 1, &d, NULL, "t", NULL);
	((ge_xstr *)a->data)[0] = (ge_xstr){1, strdup("a")};
	ge_xcompare(a, b, 0, 0, &c, &err);
	ok(c.outside == 1 && c.n == 2, "strings: one unequal");
	ge_xt_unref(a);
	ge_xt_unref(b);

	ge_xstats s;
	a = f32(4, (const float[]){-1, NAN, 3, 1});
	ok(ge_xstats_of(a, &s) && s.min == -1 && s.max == 3 && s.mean == 1 &&
		   s.nan == 1,
	   "stats: min, max, mean of the numbers, NaNs counted");
	ge_xt_unref(a);
	return tap_done();
}
