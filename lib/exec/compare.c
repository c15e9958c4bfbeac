/* exec/compare.c: how far one tensor is from another (compare.h). */
#include "exec/compare.h"

#include <math.h>
#include <string.h>

enum { DT_STRING = 7, DT_COMPLEX64 = 8, DT_COMPLEX128 = 18,
       DT_RESOURCE = 20, DT_VARIANT = 21 };

static int has_values(int dt)
{
	return ge_xt_elem_size(dt) && dt != DT_RESOURCE && dt != DT_VARIANT;
}

/* Element k as a double; complex numbers compare by their real part
 * and imaginary part as two elements (k over 2n). */
static double num(const ge_xt *t, int64_t k)
{
	if (t->dtype == DT_COMPLEX64)
		return ((const float *)t->data)[k];
	if (t->dtype == DT_COMPLEX128)
		return ((const double *)t->data)[k];
	return ge_xt_get_double(t, k);
}

static int64_t count(const ge_xt *t)
{
	return t->dtype == DT_COMPLEX64 || t->dtype == DT_COMPLEX128
		       ? 2 * t->n : t->n;
}

static int compare_strings(const ge_xt *a, const ge_xt *b, ge_xcmp *r)
{
	const ge_xstr *x = a->data, *y = b->data;
	for (int64_t k = 0; k < a->n; k++)
		if (x[k].len != y[k].len ||
		    (x[k].len && memcmp(x[k].p, y[k].p, x[k].len)))
			r->outside++;
	r->cosine = r->outside ? 0 : 1;
	return GE_OK;
}

int ge_xcompare(const ge_xt *a, const ge_xt *b, double atol, double rtol,
		ge_xcmp *r, ge_error *err)
{
	memset(r, 0, sizeof *r);
	r->worst = -1;
	r->atol = atol;
	r->rtol = rtol;
	char da[256], db[256];
	int same = a->rank == b->rank && a->n == b->n;
	for (int i = 0; same && i < a->rank; i++)
		same = a->dims[i] == b->dims[i];
	if (!same || (a->dtype == DT_STRING) != (b->dtype == DT_STRING) ||
	    !has_values(a->dtype) || !has_values(b->dtype) ||
	    ((a->dtype == DT_COMPLEX64 || a->dtype == DT_COMPLEX128) !=
	     (b->dtype == DT_COMPLEX64 || b->dtype == DT_COMPLEX128)))
		return ge_err(err, GE_EINVAL, "%s: %s against %s",
			      same ? "cannot compare" : "shapes differ",
			      ge_xt_describe(a, da, sizeof da),
			      ge_xt_describe(b, db, sizeof db));
	r->n = a->n;
	if (a->dtype == DT_STRING)
		return compare_strings(a, b, r);
	int64_t n = count(a), used = 0;
	double sum = 0, dot = 0, na = 0, nb = 0;
	for (int64_t k = 0; k < n; k++) {
		double x = num(a, k), y = num(b, k);
		if (isnan(x) || isnan(y)) {
			if (isnan(x) != isnan(y)) {
				r->nan_mismatch++;
				r->outside++;
			}
			continue;
		}
		double ay = fabs(y);
		if (ay > r->b_max_abs)
			r->b_max_abs = ay;
		double d = x == y ? 0 : fabs(x - y);
		/* an infinite d is outside whatever |b| is (inf * rtol) */
		if (d > atol + (rtol > 0 ? rtol * ay : 0) || isinf(d))
			r->outside++;
		if (d > r->max_abs || r->worst < 0) {
			r->max_abs = d;
			r->worst = k;
			r->a_worst = x;
			r->b_worst = y;
		}
		double rel = d == 0 ? 0 : ay > 0 && !isinf(d) ? d / ay : INFINITY;
		if (rel > r->max_rel)
			r->max_rel = rel;
		sum += d;
		used++;
		if (isfinite(x) && isfinite(y)) {
			dot += x * y;
			na += x * x;
			nb += y * y;
		}
	}
	r->mean_abs = used ? sum / (double)used : 0;
	if (na == 0 && nb == 0)
		r->cosine = 1;
	else if (na == 0 || nb == 0)
		r->cosine = 0;
	else
		r->cosine = dot / (sqrt(na) * sqrt(nb));
	return GE_OK;
}

int ge_xstats_of(const ge_xt *t, ge_xstats *s)
{
	memset(s, 0, sizeof *s);
	if (t->dtype == DT_STRING || !has_values(t->dtype))
		return 0;
	double sum = 0;
	int64_t n = count(t);
	for (int64_t k = 0; k < n; k++) {
		double v = num(t, k);
		if (isnan(v)) {
			s->nan++;
			continue;
		}
		if (!s->counted || v < s->min)
			s->min = v;
		if (!s->counted || v > s->max)
			s->max = v;
		s->counted++;
		sum += v;
	}
	s->mean = s->counted ? sum / (double)s->counted : 0;
	return 1;
}
