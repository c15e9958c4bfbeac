/*
 * exec/k_reduce.c: reductions (Sum, Mean, Prod, Max, Min, All, Any, with
 * keep_dims), ArgMax, ArgMin, Softmax, LogSoftmax, Cumsum, TopKV2.
 *
 * Float sums accumulate in float64 and round once to the dtype: closer to
 * the exact sum than any float32 order, TensorFlow's vectorized order
 * included, which they may differ from by an ulp.  Cumsum and Cumprod
 * scan in the dtype, one rounding per step, as TensorFlow's scan does.  Integer sums and
 * products wrap at the dtype's width; Max and Min propagate NaN.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel_impl.h"

enum { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_ALL, R_ANY };

static int red_op(const char *t)
{
	static const char *names[] = {"Sum", "Mean", "Prod", "Max", "Min",
				      "All", "Any"};
	for (int i = 0; i < 7; i++)
		if (!strcmp(t, names[i]))
			return i;
	return -1;
}

/* A reduction's plan: which dims are reduced, the output's shape, and the
 * strides of kept and reduced dims in the input. */
typedef struct rplan {
	int nk, nr;
	int64_t kd[GE_SHAPE_MAXRANK], ks[GE_SHAPE_MAXRANK];
	int64_t rd[GE_SHAPE_MAXRANK], rs[GE_SHAPE_MAXRANK];
	int64_t rn; /* elements reduced into each output */
	int orank;
	int64_t odims[GE_SHAPE_MAXRANK];
	int red[GE_SHAPE_MAXRANK]; /* dimension i is reduced */
} rplan;

static int plan(ge_kctx *k, const ge_xt *x, const int64_t *axes, int na,
		int keep, rplan *p)
{
	int red[GE_SHAPE_MAXRANK] = {0};
	int64_t st[GE_SHAPE_MAXRANK];
	memset(p, 0, sizeof *p);
	for (int i = 0; i < na; i++) {
		int64_t a;
		if (ge_k_axis(k, axes[i], x->rank, &a))
			return GE_EINVAL;
		if (red[a])
			return ge_k_fail(k, "axis %" PRId64 " is given twice",
					 a);
		red[a] = 1;
	}
	kstrides(x->rank, x->dims, st);
	memcpy(p->red, red, sizeof red);
	p->rn = 1;
	for (int i = 0; i < x->rank; i++) {
		if (red[i]) {
			p->rd[p->nr] = x->dims[i];
			p->rs[p->nr++] = st[i];
			p->rn *= x->dims[i];
			if (keep)
				p->odims[p->orank++] = 1;
		} else {
			p->kd[p->nk] = x->dims[i];
			p->ks[p->nk++] = st[i];
			p->odims[p->orank++] = x->dims[i];
		}
	}
	return GE_OK;
}

/* Calls f over each output element o with the offsets of the elements it
 * reduces, walked by odometers (no division per element). */
typedef struct rwalk {
	const rplan *p;
	const ge_xt *x;
	ge_xt *o;
	int op;
} rwalk;

static double fred(const rwalk *w, int64_t base)
{
	const rplan *p = w->p;
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, off = base;
	int op = w->op, dbl = w->x->dtype == DT_DOUBLE;
	double acc = op == R_PROD ? 1 : op == R_MAX ? -INFINITY
		   : op == R_MIN ? INFINITY : 0;
	if (p->rn == 0)
		return op == R_MEAN ? NAN : acc;
	int last = p->nr - 1;
	int64_t len = last >= 0 ? p->rd[last] : 1, ls = last >= 0 ? p->rs[last] : 0;
	for (;;) {
		for (int64_t j = 0; j < len; j++) {
			int64_t e = off + j * ls;
			double v = dbl ? ((const double *)w->x->data)[e]
				       : ((const float *)w->x->data)[e];
			switch (op) {
			case R_SUM: case R_MEAN: acc += v; break;
			case R_PROD: acc *= v; break;
			case R_MAX:
				if (v > acc || isnan(v))
					acc = v;
				break;
			default:
				if (v < acc || isnan(v))
					acc = v;
				break;
			}
			if (isnan(acc) && (op == R_MAX || op == R_MIN))
				return acc;
		}
		int d = last - 1;
		for (; d >= 0; d--) {
			off += p->rs[d];
			if (++idx[d] < p->rd[d])
				break;
			off -= p->rs[d] * p->rd[d];
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
	if (op == R_MEAN)
		acc /= (double)p->rn;
	return acc;
}

static int64_t ired(const rwalk *w, int64_t base, int uns)
{
	const rplan *p = w->p;
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, off = base;
	int op = w->op;
	uint64_t acc = op == R_PROD || op == R_ALL ? 1 : 0;
	int first = 1;
	for (int64_t c = 0; c < p->rn; c++) {
		int64_t v = kld_i(w->x, off);
		switch (op) {
		case R_SUM: case R_MEAN: acc += (uint64_t)v; break;
		case R_PROD: acc *= (uint64_t)v; break;
		case R_ALL: acc = acc && v; break;
		case R_ANY: acc = acc || v; break;
		case R_MAX:
			if (first || (uns ? (uint64_t)v > acc
					  : v > (int64_t)acc))
				acc = (uint64_t)v;
			break;
		default:
			if (first || (uns ? (uint64_t)v < acc
					  : v < (int64_t)acc))
				acc = (uint64_t)v;
			break;
		}
		first = 0;
		for (int d = p->nr - 1; d >= 0; d--) {
			off += p->rs[d];
			if (++idx[d] < p->rd[d])
				break;
			off -= p->rs[d] * p->rd[d];
			idx[d] = 0;
		}
	}
	if (first && (op == R_MAX || op == R_MIN)) {
		/* an empty Max is the lowest value, an empty Min the highest */
		int64_t lo, hi;
		ge_dtype_int_range(ge_dtype_info(w->x->dtype), &lo, &hi);
		if (uns)
			return op == R_MAX ? 0 : -1;
		return op == R_MAX ? lo : hi;
	}
	if (op == R_MEAN) {
		int64_t s = kwrap_i(w->x->dtype, (int64_t)acc);
		return uns ? (int64_t)((uint64_t)s / (uint64_t)p->rn)
			   : s / p->rn;
	}
	return (int64_t)acc;
}

/* Sum and Mean of floats over one run of dimensions [i, j) followed by
 * kept ones (a global pooling, NHWC): x seen as [A, R, C], each row of C
 * added into float64 accumulators, r in order, which is the order and
 * the rounding of fred.  0 when the reduction is not of that form. */
static int sum_rows(const rplan *p, const ge_xt *x, ge_xt *o, int op,
		    ge_kctx *k, int *rc)
{
	int i = 0, j, r = x->rank;
	/* an empty input (no data to point into) takes the general path */
	if ((op != R_SUM && op != R_MEAN) || p->rn == 0 || x->n == 0)
		return 0;
	while (i < r && !p->red[i])
		i++;
	for (j = i; j < r && p->red[j]; j++)
		;
	for (int q = j; q < r; q++)
		if (p->red[q])
			return 0;
	if (i == r || j == r)
		return 0;
	int64_t A = 1, R = p->rn, C = 1;
	for (int q = 0; q < i; q++)
		A *= x->dims[q];
	for (int q = j; q < r; q++)
		C *= x->dims[q];
	double *acc = malloc((size_t)(C ? C : 1) * sizeof *acc);
	if (!acc) {
		*rc = ge_k_fail(k, "out of memory");
		return 1;
	}
	int dbl = x->dtype == DT_DOUBLE;
	for (int64_t a = 0; a < A; a++) {
		memset(acc, 0, (size_t)C * sizeof *acc);
		for (int64_t q = 0; q < R; q++) {
			int64_t off = (a * R + q) * C;
			if (dbl) {
				const double *row = (const double *)x->data + off;
				for (int64_t c = 0; c < C; c++)
					acc[c] += row[c];
			} else {
				const float *row = (const float *)x->data + off;
				for (int64_t c = 0; c < C; c++)
					acc[c] += row[c];
			}
		}
		for (int64_t c = 0; c < C; c++) {
			double v = op == R_MEAN ? acc[c] / (double)R : acc[c];
			if (dbl)
				((double *)o->data)[a * C + c] = v;
			else
				((float *)o->data)[a * C + c] = (float)v;
		}
	}
	free(acc);
	*rc = GE_OK;
	return 1;
}

static int k_reduce(ge_kctx *k)
{
	int op = red_op(k->type);
	int64_t axes[GE_SHAPE_MAXRANK * 4];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	uint64_t ok = op == R_ALL || op == R_ANY ? KDT(DT_BOOL) : KDT_NUMBERS;
	if (ge_k_dtype_in(k, 0, ok))
		return GE_EINVAL;
	int na = ge_k_ints(k, 1, axes, GE_SHAPE_MAXRANK * 4);
	if (na < 0)
		return GE_EINVAL;
	rplan p;
	if (plan(k, x, axes, na, ge_k_attr_bool(k, "keep_dims", 0), &p))
		return GE_EINVAL;
	if (op == R_MEAN && p.rn == 0 && dt_is_int(x->dtype))
		return ge_k_fail(k, "the mean of no integers");
	if (ge_k_work(k, (uint64_t)x->n + 1))
		return GE_EINVAL;
	int dt = x->dtype;
	ge_xt *w = ge_kwiden(k, x);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, p.orank, p.odims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	int rc;
	if (dt_is_float(dt) && sum_rows(&p, w, o, op, k, &rc)) {
		ge_xt_unref(w);
		return rc ? rc : ge_kfinish_f(k, 0, dt);
	}
	rwalk rw = {&p, w, o, op};
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, base = 0;
	int uns = dt_is_unsigned(dt);
	for (int64_t i = 0; i < o->n; i++) {
		if (dt_is_float(dt)) {
			double v = fred(&rw, base);
			if (dt == DT_DOUBLE)
				((double *)o->data)[i] = v;
			else
				((float *)o->data)[i] = (float)v;
		} else {
			kst_i(o, i, ired(&rw, base, uns));
		}
		for (int d = p.nk - 1; d >= 0; d--) {
			base += p.ks[d];
			if (++idx[d] < p.kd[d])
				break;
			base -= p.ks[d] * p.kd[d];
			idx[d] = 0;
		}
	}
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- arg */

/* The outer, axis and inner extents of x around axis a. */
static void split3(const ge_xt *x, int a, int64_t *outer, int64_t *mid,
		   int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int i = 0; i < a; i++)
		*outer *= x->dims[i];
	*mid = x->dims[a];
	for (int i = a + 1; i < x->rank; i++)
		*inner *= x->dims[i];
}

static int k_argmax(ge_kctx *k)
{
	int64_t a;
	if (ge_k_need(k, 2) || ge_k_dtype_in(k, 0, KDT_NUMBERS | KDT(DT_BOOL)) ||
	    ge_k_scalar_int(k, 1, &a))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	int odt = ge_k_attr_type(k, "output_type", DT_INT64);
	int mx = !strcmp(k->type, "ArgMax");
	if (odt != DT_INT32 && odt != DT_INT64 && odt != DT_INT16 &&
	    odt != DT_UINT16)
		return ge_k_fail(k, "output_type %s is not an index type",
				 kdt(odt));
	if (x->rank == 0)
		return ge_k_fail(k, "input must have rank 1 or more");
	if (ge_k_axis(k, a, x->rank, &a))
		return GE_EINVAL;
	if (x->dims[a] == 0)
		return ge_k_fail(k, "reduction axis %" PRId64 " is empty", a);
	int64_t dims[GE_SHAPE_MAXRANK], outer, mid, inner;
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (i != a)
			dims[r++] = x->dims[i];
	split3(x, (int)a, &outer, &mid, &inner);
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, odt, r, dims);
	if (!o)
		return GE_EINVAL;
	int fl = dt_is_float(x->dtype), uns = dt_is_unsigned(x->dtype);
	for (int64_t p = 0; p < outer; p++)
		for (int64_t q = 0; q < inner; q++) {
			int64_t best = 0, base = p * mid * inner + q;
			for (int64_t j = 1; j < mid; j++) {
				int64_t e = base + j * inner, b = base + best * inner;
				int better;
				if (fl) {
					double v = ge_xt_get_double(x, e),
					       bv = ge_xt_get_double(x, b);
					better = mx ? v > bv : v < bv;
				} else if (uns) {
					uint64_t v = (uint64_t)kld_i(x, e),
						 bv = (uint64_t)kld_i(x, b);
					better = mx ? v > bv : v < bv;
				} else {
					int64_t v = kld_i(x, e), bv = kld_i(x, b);
					better = mx ? v > bv : v < bv;
				}
				if (better)
					best = j;
			}
			kst_i(o, p * inner + q, best);
		}
	return GE_OK;
}

/* ---------------------------------------------------------------- softmax */

static int k_softmax(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT_FLOATS))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	int logsm = !strcmp(k->type, "LogSoftmax");
	if (x->rank < 1)
		return ge_k_fail(k, "logits must have rank 1 or more");
	if (ge_k_work(k, (uint64_t)x->n * 3))
		return GE_EINVAL;
	int dt = x->dtype;
	ge_xt *w = ge_kwiden(k, x);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, x->rank, x->dims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	int64_t c = x->dims[x->rank - 1], rows = c ? x->n / c : 0;
	for (int64_t r = 0; r < rows; r++) {
		if (dt == DT_DOUBLE) {
			const double *in = (const double *)w->data + r * c;
			double *out = (double *)o->data + r * c, m = in[0], s = 0;
			for (int64_t j = 1; j < c; j++)
				m = in[j] > m || isnan(in[j]) ? in[j] : m;
			for (int64_t j = 0; j < c; j++) {
				double e = exp(in[j] - m);
				s += e;
				out[j] = logsm ? in[j] - m : e;
			}
			double ls = log(s), inv = 1 / s;
			for (int64_t j = 0; j < c; j++)
				out[j] = logsm ? out[j] - ls : out[j] * inv;
		} else {
			const float *in = (const float *)w->data + r * c;
			float *out = (float *)o->data + r * c, m = in[0];
			double s = 0;
			for (int64_t j = 1; j < c; j++)
				m = in[j] > m || isnan(in[j]) ? in[j] : m;
			for (int64_t j = 0; j < c; j++) {
				float e = expf(in[j] - m);
				s += e;
				out[j] = logsm ? in[j] - m : e;
			}
			float ls = logf((float)s), inv = 1 / (float)s;
			for (int64_t j = 0; j < c; j++)
				out[j] = logsm ? out[j] - ls : out[j] * inv;
		}
	}
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- cumsum */

static int k_cumsum(ge_kctx *k)
{
	int64_t a;
	if (ge_k_need(k, 2) || ge_k_dtype_in(k, 0, KDT_NUMBERS) ||
	    ge_k_scalar_int(k, 1, &a))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	int prod = !strcmp(k->type, "Cumprod");
	int excl = ge_k_attr_bool(k, "exclusive", 0);
	int rev = ge_k_attr_bool(k, "reverse", 0);
	if (x->rank < 1)
		return ge_k_fail(k, "input must have rank 1 or more");
	if (ge_k_axis(k, a, x->rank, &a) || ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int dt = x->dtype;
	ge_xt *w = ge_kwiden(k, x);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, x->rank, x->dims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	int64_t outer, mid, inner;
	split3(x, (int)a, &outer, &mid, &inner);
	for (int64_t p = 0; p < outer; p++)
		for (int64_t q = 0; q < inner; q++) {
			double facc = prod;
			uint64_t iacc = (uint64_t)prod;
			for (int64_t jj = 0; jj < mid; jj++) {
				int64_t j = rev ? mid - 1 - jj : jj;
				int64_t e = p * mid * inner + j * inner + q;
				if (dt_is_int(dt)) {
					uint64_t v = (uint64_t)kld_i(w, e);
					if (!excl)
						iacc = prod ? iacc * v : iacc + v;
					kst_i(o, e, (int64_t)iacc);
					if (excl)
						iacc = prod ? iacc * v : iacc + v;
					continue;
				}
				double v = dt == DT_DOUBLE
					? ((const double *)w->data)[e]
					: ((const float *)w->data)[e];
				if (!excl)
					facc = prod ? facc * v : facc + v;
				if (dt != DT_DOUBLE) /* a float32 scan, as Eigen's */
					facc = (float)facc;
				if (dt == DT_DOUBLE)
					((double *)o->data)[e] = facc;
				else
					((float *)o->data)[e] = (float)facc;
				if (excl)
					facc = prod ? facc * v : facc + v;
				if (dt != DT_DOUBLE)
					facc = (float)facc;
			}
		}
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- top k */

struct tkctx {
	const ge_xt *x;
	int64_t base;
};
static struct tkctx tk; /* qsort's comparison has no user pointer */

static int tk_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	double va = ge_xt_get_double(tk.x, tk.base + a),
	       vb = ge_xt_get_double(tk.x, tk.base + b);
	if (dt_is_int(tk.x->dtype) && !dt_is_unsigned(tk.x->dtype)) {
		int64_t ia = kld_i(tk.x, tk.base + a),
			ib = kld_i(tk.x, tk.base + b);
		if (ia != ib)
			return ia > ib ? -1 : 1;
	} else if (va != vb) {
		if (isnan(va) != isnan(vb))
			return isnan(va) ? -1 : 1; /* NaN first, as largest */
		if (!isnan(va))
			return va > vb ? -1 : 1;
	}
	return a < b ? -1 : a > b; /* ties: the lower index first */
}

static int k_topk(ge_kctx *k)
{
	int64_t kk;
	if (ge_k_need(k, 2) || ge_k_dtype_in(k, 0, KDT_NUMBERS) ||
	    ge_k_scalar_int(k, 1, &kk))
		return GE_EINVAL;
	ge_xt *x = k->in[0];
	if (x->rank < 1)
		return ge_k_fail(k, "input must have rank 1 or more");
	int64_t c = x->dims[x->rank - 1];
	if (kk < 0 || kk > c)
		return ge_k_fail(k, "k = %" PRId64 " is outside [0, %" PRId64
				 "]", kk, c);
	int64_t dims[GE_SHAPE_MAXRANK];
	memcpy(dims, x->dims, sizeof dims);
	dims[x->rank - 1] = kk;
	int64_t rows = c ? x->n / c : 0;
	if (ge_k_work(k, (uint64_t)x->n * 20 + 1))
		return GE_EINVAL;
	ge_xt *ov = ge_k_out(k, 0, x->dtype, x->rank, dims);
	ge_xt *oi = ov ? ge_k_out(k, 1, DT_INT32, x->rank, dims) : NULL;
	if (!oi)
		return GE_EINVAL;
	int64_t *perm = c ? malloc((size_t)c * sizeof *perm) : NULL;
	if (c && !perm)
		return ge_k_fail(k, "out of memory");
	tk.x = x;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t j = 0; j < c; j++)
			perm[j] = j;
		tk.base = r * c;
		qsort(perm, (size_t)c, sizeof *perm, tk_cmp);
		for (int64_t j = 0; j < kk; j++) {
			ge_kcopy_elem(ov, r * kk + j, x, r * c + perm[j]);
			((int32_t *)oi->data)[r * kk + j] = (int32_t)perm[j];
		}
	}
	free(perm);
	return ge_kall_set(k);
}

const ge_kdef ge_kernels_reduce[] = {
	{"Sum", k_reduce, 0}, {"Mean", k_reduce, 0}, {"Prod", k_reduce, 0},
	{"Max", k_reduce, 0}, {"Min", k_reduce, 0}, {"All", k_reduce, 0},
	{"Any", k_reduce, 0}, {"ArgMax", k_argmax, 0},
	{"ArgMin", k_argmax, 0}, {"Softmax", k_softmax, 0},
	{"LogSoftmax", k_softmax, 0}, {"Cumsum", k_cumsum, 0},
	{"Cumprod", k_cumsum, 0}, {"TopKV2", k_topk, 0},
	{NULL, NULL, 0},
};
