/*
 * exec/k_misc.c: the rest of the plain kernels: the Identity family
 * (passing tensors on), EnsureShape, CheckNumerics, Assert, InvertPermutation, DynamicStitch,
 * UnsortedSegmentSum, Unique, ReverseSequence, ScatterNd, ConcatOffset,
 * Bitcast, L2Loss, and the string kernels StringJoin, ReduceJoin and
 * StringSplit.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel_impl.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* Identity, IdentityN, StopGradient, PreventGradient, Snapshot: each
 * output is the input of the same index, passed on. */
static int k_identity(ge_kctx *k)
{
	if (ge_k_need(k, k->nin > 1 ? k->nin : 1))
		return GE_EINVAL;
	int n = !strcmp(k->type, "IdentityN") ? k->nin : 1;
	if (n > k->nout)
		return ge_k_fail(k, "has %d inputs but %d outputs", n, k->nout);
	for (int i = 0; i < n; i++)
		ge_k_forward(k, i, i);
	return ge_kall_set(k);
}

/* EnsureShape: the input passed on when its shape fits the shape attr
 * (an unknown rank or dimension fits anything). */
static int k_ensure_shape(ge_kctx *k)
{
	char s1[128];
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	const Tensorflow__AttrValue *a = ge_op_attr(k->g, k->id, "shape", NULL);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    !a->shape)
		return ge_k_fail(k, "has no shape attr");
	const Tensorflow__TensorShapeProto *s = a->shape;
	int fits = s->unknown_rank || (int)s->n_dim == x->rank;
	for (size_t i = 0; fits && !s->unknown_rank && i < s->n_dim; i++)
		fits = !s->dim[i] || s->dim[i]->size < 0 ||
		       s->dim[i]->size == x->dims[i];
	if (!fits)
		return ge_k_fail(k, "input %s does not have the shape the "
				 "shape attr requires",
				 ge_xt_describe(x, s1, sizeof s1));
	ge_k_forward(k, 0, 0);
	return GE_OK;
}

/* CheckNumerics, CheckNumericsV2: the input passed on when no element is
 * NaN or infinite; else a failure with the op's message attr. */
static int k_check_numerics(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT_FLOATS))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int nan = 0, inf = 0;
	for (int64_t i = 0; i < x->n; i++) {
		double v = ge_xt_get_double(x, i);
		nan |= isnan(v);
		inf |= isinf(v);
	}
	if (nan || inf) {
		const char *m = "";
		size_t len = 0;
		if (ge_op_attr_string(k->g, k->id, "message", &m, &len))
			len = 0;
		return ge_k_fail(k, "%.*s%stensor had %s values", (int)len, m,
				 len ? ": " : "",
				 nan && inf ? "NaN and Inf" : nan ? "NaN" : "Inf");
	}
	ge_k_forward(k, 0, 0);
	return GE_OK;
}

/* Assert: fails the op when the condition is false, with the first values
 * of the data inputs in the message. */
static int k_assert(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *c = k->in[0];
	if (c->dtype != DT_BOOL || c->n != 1)
		return ge_k_fail(k, "condition must be a bool scalar");
	if (((const uint8_t *)c->data)[0])
		return GE_OK;
	char msg[512];
	size_t len = 0;
	msg[0] = 0;
	for (int i = 1; i < k->nin && len < sizeof msg - 1; i++) {
		const ge_xt *t = k->in[i];
		for (int64_t j = 0; t && j < t->n && j < 3 && len < sizeof msg - 1;
		     j++) {
			const char *sep = len ? " " : "";
			if (t->dtype == DT_STRING) {
				const ge_xstr *s = &((const ge_xstr *)t->data)[j];
				len += (size_t)snprintf(msg + len, sizeof msg - len,
							"%s%.*s", sep,
							(int)(s->len > 200 ? 200
								: s->len),
							s->len ? s->p : "");
			} else if (dt_is_number(t->dtype) || t->dtype == DT_BOOL) {
				len += (size_t)snprintf(msg + len, sizeof msg - len,
							"%s%g", sep,
							ge_xt_get_double(t, j));
			}
		}
	}
	return ge_k_fail(k, "assertion failed%s%s", msg[0] ? ": " : "", msg);
}

static int k_invert_permutation(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT(DT_INT32) | KDT(DT_INT64)))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->rank != 1)
		return ge_k_fail(k, "input must be a vector");
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, 1, x->dims);
	if (!o)
		return GE_EINVAL;
	for (int64_t i = 0; i < x->n; i++)
		kst_i(o, i, -1);
	for (int64_t i = 0; i < x->n; i++) {
		int64_t v = kld_i(x, i);
		if (v < 0 || v >= x->n || kld_i(o, v) != -1)
			return ge_k_fail(k, "input is not a permutation of "
					 "0..%" PRId64, x->n - 1);
		kst_i(o, v, i);
	}
	return GE_OK;
}

/* DynamicStitch(indices[N], data[N]): merged[indices[m][i]] = data[m][i],
 * later inputs winning. */
static int k_dynamic_stitch(ge_kctx *k)
{
	int n = k->nin / 2;
	if (n < 1 || k->nin != 2 * n || ge_k_need(k, 2 * n))
		return ge_k_fail(k, "needs as many data inputs as indices");
	const ge_xt *d0 = k->in[n], *i0 = k->in[0];
	int64_t max = -1, inner = 1;
	if (d0->rank < i0->rank || 1 + d0->rank - i0->rank > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "data 0 %s does not fit indices 0",
				 d0->rank < i0->rank ? "has a lower rank"
						     : "has too high a rank");
	for (int r = i0->rank; r < d0->rank; r++)
		inner *= d0->dims[r];
	for (int m = 0; m < n; m++) {
		const ge_xt *ix = k->in[m], *d = k->in[n + m];
		if (ix->dtype != DT_INT32 && ix->dtype != DT_INT64)
			return ge_k_fail(k, "indices %d must be int32", m);
		if (d->dtype != d0->dtype || d->rank != ix->rank + d0->rank -
		    i0->rank || d->rank > GE_SHAPE_MAXRANK)
			return ge_k_fail(k, "data %d does not fit its indices", m);
		for (int r = 0; r < ix->rank; r++)
			if (d->dims[r] != ix->dims[r])
				return ge_k_fail(k, "data %d does not fit its "
						 "indices", m);
		for (int r = ix->rank; r < d->rank; r++)
			if (d->dims[r] != d0->dims[r - ix->rank + i0->rank])
				return ge_k_fail(k, "data %d's inner shape "
						 "differs", m);
		for (int64_t j = 0; j < ix->n; j++) {
			int64_t v = kld_i(ix, j);
			if (v < 0 || v > (int64_t)1 << 40)
				return ge_k_fail(k, "index %" PRId64 " is out of "
						 "range", v);
			if (v > max)
				max = v;
		}
	}
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = 1 + d0->rank - i0->rank;
	dims[0] = max + 1;
	for (int q = 1; q < r; q++)
		dims[q] = d0->dims[i0->rank + q - 1];
	int64_t total = kcount(r, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, d0->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	for (int m = 0; m < n; m++) {
		const ge_xt *ix = k->in[m];
		for (int64_t j = 0; j < ix->n && inner; j++)
			if (ge_kcopy_elems(o, kld_i(ix, j) * inner, k->in[n + m],
					j * inner, inner))
				return ge_k_fail(k, "out of memory");
	}
	return GE_OK;
}

/* UnsortedSegmentSum(data, segment_ids, num_segments): negative ids are
 * dropped, as TensorFlow does. */
static int k_segment_sum(ge_kctx *k)
{
	int64_t ns;
	if (ge_k_need(k, 3) || ge_k_dtype_in(k, 0, KDT_NUMBERS) ||
	    ge_k_scalar_int(k, 2, &ns))
		return GE_EINVAL;
	const ge_xt *d = k->in[0], *ids = k->in[1];
	if (ids->dtype != DT_INT32 && ids->dtype != DT_INT64)
		return ge_k_fail(k, "segment_ids must be int32 or int64");
	if (ids->rank > d->rank)
		return ge_k_fail(k, "segment_ids' rank is over the data's");
	if (1 + d->rank - ids->rank > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "the result's rank is over %d",
				 GE_SHAPE_MAXRANK);
	for (int r = 0; r < ids->rank; r++)
		if (ids->dims[r] != d->dims[r])
			return ge_k_fail(k, "segment_ids' shape is not a prefix "
					 "of the data's");
	if (ns < 0)
		return ge_k_fail(k, "num_segments is negative");
	int64_t dims[GE_SHAPE_MAXRANK], inner = 1;
	int r = 1 + d->rank - ids->rank;
	dims[0] = ns;
	for (int q = ids->rank; q < d->rank; q++) {
		dims[q - ids->rank + 1] = d->dims[q];
		inner *= d->dims[q];
	}
	for (int64_t j = 0; j < ids->n; j++)
		if (kld_i(ids, j) >= ns)
			return ge_k_fail(k, "segment id %" PRId64 " is not below "
					 "num_segments %" PRId64, kld_i(ids, j), ns);
	int64_t total = kcount(r, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total + (uint64_t)d->n))
		return GE_EINVAL;
	int dt = d->dtype;
	ge_xt *w = ge_kwiden(k, (ge_xt *)d);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, r, dims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	for (int64_t j = 0; j < ids->n; j++) {
		int64_t s = kld_i(ids, j);
		if (s < 0)
			continue;
		for (int64_t q = 0; q < inner; q++) {
			int64_t a = s * inner + q, b = j * inner + q;
			if (dt == DT_DOUBLE)
				((double *)o->data)[a] += ((double *)w->data)[b];
			else if (dt_is_float(dt))
				((float *)o->data)[a] += ((float *)w->data)[b];
			else
				kst_i(o, a, (int64_t)((uint64_t)kld_i(o, a) +
						      (uint64_t)kld_i(w, b)));
		}
	}
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- unique */

static const ge_xt *uq_x; /* for the qsort comparison */

static int val_cmp(int64_t a, int64_t b)
{
	if (uq_x->dtype == DT_STRING) {
		const ge_xstr *s = uq_x->data;
		size_t n = s[a].len < s[b].len ? s[a].len : s[b].len;
		int c = n ? memcmp(s[a].p, s[b].p, n) : 0;
		return c ? c : (s[a].len > s[b].len) - (s[a].len < s[b].len);
	}
	size_t es = ge_xt_elem_size(uq_x->dtype);
	return memcmp((const char *)uq_x->data + (size_t)a * es,
		      (const char *)uq_x->data + (size_t)b * es, es);
}

static int uq_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	int c = val_cmp(a, b);
	return c ? c : (a > b) - (a < b);
}

/* Unique of a vector: y the distinct values in order of first
 * appearance, idx each element's place in y.  Values are equal when their
 * bytes are (so -0.0 is not 0.0, and a NaN equals a NaN of the same
 * bits). */
static int k_unique(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT_NUMBERS | KDT(DT_BOOL) |
					  KDT(DT_STRING)))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int it = ge_k_attr_type(k, "out_idx", DT_INT32);
	if (x->rank != 1)
		return ge_k_fail(k, "input must be a vector");
	if (it != DT_INT32 && it != DT_INT64)
		return ge_k_fail(k, "out_idx must be int32 or int64");
	if (k->nout < 2)
		return ge_k_fail(k, "has fewer than 2 outputs");
	int64_t n = x->n;
	if (ge_k_work(k, (uint64_t)n * 40 + 1))
		return GE_EINVAL;
	int64_t *ord = malloc((size_t)(n ? n : 1) * 4 * sizeof *ord);
	if (!ord)
		return ge_k_fail(k, "out of memory");
	int64_t *grp = ord + n, *first = ord + 2 * n, *rank = ord + 3 * n;
	for (int64_t i = 0; i < n; i++) {
		ord[i] = i;
		rank[i] = -1;
	}
	uq_x = x;
	qsort(ord, (size_t)n, sizeof *ord, uq_cmp);
	int64_t ng = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!i || val_cmp(ord[i - 1], ord[i]))
			first[ng++] = ord[i]; /* the lowest index leads */
		grp[ord[i]] = ng - 1;
	}
	/* number the groups by where they first appear */
	int64_t next = 0;
	for (int64_t i = 0; i < n; i++)
		if (rank[grp[i]] < 0)
			rank[grp[i]] = next++;
	ge_xt *y = ge_k_out(k, 0, x->dtype, 1, &ng);
	ge_xt *ix = y ? ge_k_out(k, 1, it, 1, &n) : NULL;
	int rc = ix ? GE_OK : GE_EINVAL;
	for (int64_t g = 0; rc == GE_OK && g < ng; g++)
		if (ge_kcopy_elem(y, rank[g], x, first[g]))
			rc = ge_k_fail(k, "out of memory");
	for (int64_t i = 0; rc == GE_OK && i < n; i++)
		kst_i(ix, i, rank[grp[i]]);
	free(ord);
	return rc ? rc : ge_kall_set(k);
}

/* ReverseSequence: for each batch entry b, the first seq_lengths[b]
 * elements along seq_dim reversed. */
static int k_reverse_sequence(ge_kctx *k)
{
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0], *sl = k->in[1];
	int64_t sd = ge_k_attr_int(k, "seq_dim", -1),
		bd = ge_k_attr_int(k, "batch_dim", 0);
	if (sd < 0 || sd >= x->rank || bd < 0 || bd >= x->rank || sd == bd)
		return ge_k_fail(k, "seq_dim %" PRId64 " and batch_dim %" PRId64
				 " do not fit rank %d", sd, bd, x->rank);
	if ((sl->dtype != DT_INT32 && sl->dtype != DT_INT64) || sl->rank != 1 ||
	    sl->dims[0] != x->dims[bd])
		return ge_k_fail(k, "seq_lengths must be an integer vector of "
				 "the batch's size");
	for (int64_t b = 0; b < sl->n; b++)
		if (kld_i(sl, b) < 0 || kld_i(sl, b) > x->dims[sd])
			return ge_k_fail(k, "seq_lengths[%" PRId64 "] = %" PRId64
					 " is out of range", b, kld_i(sl, b));
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, x->dims);
	if (!o)
		return GE_EINVAL;
	int64_t st[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(x->rank, x->dims, st);
	for (int64_t i = 0; i < x->n; i++) {
		int64_t len = kld_i(sl, idx[bd]), src = i;
		if (idx[sd] < len)
			src = i + (len - 1 - 2 * idx[sd]) * st[sd];
		if (ge_kcopy_elem(o, i, x, src))
			return ge_k_fail(k, "out of memory");
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++idx[d] < x->dims[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* ScatterNd(indices, updates, shape): zeros of shape, updates added at
 * indices (duplicates add up). */
static int k_scatter_nd(ge_kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 3) || ge_k_dtype_in(k, 1, KDT_NUMBERS))
		return GE_EINVAL;
	const ge_xt *ix = k->in[0], *u = k->in[1];
	int r = ge_k_ints(k, 2, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return GE_EINVAL;
	if ((ix->dtype != DT_INT32 && ix->dtype != DT_INT64) || ix->rank < 1)
		return ge_k_fail(k, "indices must be integers of rank 1 or more");
	int64_t kk = ix->dims[ix->rank - 1], nidx = ix->n / (kk ? kk : 1);
	if (kk > r || kk < 1)
		return ge_k_fail(k, "index depth %" PRId64 " does not fit rank "
				 "%d", kk, r);
	for (int i = 0; i < r; i++)
		if (dims[i] < 0)
			return ge_k_fail(k, "shape has a negative dimension");
	int64_t total = kcount(r, dims), inner = 1;
	if (total < 0)
		return ge_k_fail(k, "the shape's size overflows");
	for (int i = (int)kk; i < r; i++)
		inner *= dims[i];
	if (u->rank != ix->rank - 1 + r - kk)
		return ge_k_fail(k, "updates' rank does not fit");
	for (int i = 0; i < ix->rank - 1; i++)
		if (u->dims[i] != ix->dims[i])
			return ge_k_fail(k, "updates' shape does not fit");
	for (int i = ix->rank - 1; i < u->rank; i++)
		if (u->dims[i] != dims[i - (ix->rank - 1) + kk])
			return ge_k_fail(k, "updates' shape does not fit");
	int64_t st[GE_SHAPE_MAXRANK];
	kstrides(r, dims, st);
	for (int64_t j = 0; j < nidx; j++)
		for (int64_t c = 0; c < kk; c++) {
			int64_t v = kld_i(ix, j * kk + c);
			if (v < 0 || v >= dims[c])
				return ge_k_fail(k, "index %" PRId64 " is out of "
						 "bounds", v);
		}
	if (ge_k_work(k, (uint64_t)total + (uint64_t)u->n))
		return GE_EINVAL;
	int dt = u->dtype;
	ge_xt *w = ge_kwiden(k, (ge_xt *)u);
	ge_xt *o = w ? ge_kout_f(k, 0, dt, r, dims) : NULL;
	if (!o) {
		ge_xt_unref(w);
		return GE_EINVAL;
	}
	for (int64_t j = 0; j < nidx; j++) {
		int64_t base = 0;
		for (int64_t c = 0; c < kk; c++)
			base += kld_i(ix, j * kk + c) * st[c];
		for (int64_t q = 0; q < inner; q++) {
			int64_t a = base + q, b = j * inner + q;
			if (dt == DT_DOUBLE)
				((double *)o->data)[a] += ((double *)w->data)[b];
			else if (dt_is_float(dt))
				((float *)o->data)[a] += ((float *)w->data)[b];
			else
				kst_i(o, a, (int64_t)((uint64_t)kld_i(o, a) +
						      (uint64_t)kld_i(w, b)));
		}
	}
	ge_xt_unref(w);
	return ge_kfinish_f(k, 0, dt);
}

/* ConcatOffset(concat_dim, shapes...): where each input starts along the
 * concatenation axis. */
static int k_concat_offset(ge_kctx *k)
{
	int64_t a, s0[GE_SHAPE_MAXRANK], s[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, k->nin > 2 ? k->nin : 2) || ge_k_scalar_int(k, 0, &a))
		return GE_EINVAL;
	int r = ge_k_ints(k, 1, s0, GE_SHAPE_MAXRANK);
	if (r < 0 || ge_k_axis(k, a, r, &a))
		return GE_EINVAL;
	int64_t off = 0;
	for (int i = 1; i < k->nin; i++) {
		if (ge_k_ints(k, i, s, GE_SHAPE_MAXRANK) != r)
			return k->out[0] ? GE_EINVAL
			       : ge_k_fail(k, "shape %d has another rank", i - 1);
		int64_t len = r;
		ge_xt *o = ge_k_out(k, i - 1, k->in[i]->dtype, 1, &len);
		if (!o)
			return GE_EINVAL;
		for (int d = 0; d < r; d++) {
			if (d != a && s[d] != s0[d])
				return ge_k_fail(k, "shape %d differs off the "
						 "axis", i - 1);
			kst_i(o, d, d == a ? off : 0);
		}
		off += s[a];
	}
	return ge_kall_set(k);
}

/* Bitcast: the same bytes as another dtype; a wider type eats the last
 * dimension, a narrower one adds one. */
static int k_bitcast(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int dt = ge_k_attr_type(k, "type", -1);
	uint64_t ok = KDT_NUMBERS | KDT(DT_COMPLEX64) | KDT(DT_COMPLEX128) |
		      KDT(DT_QINT8) | KDT(DT_QUINT8) | KDT(DT_QINT32) |
		      KDT(DT_QINT16) | KDT(DT_QUINT16);
	if (dt < 0 || dt >= 64 || !(ok & KDT(dt)) || ge_k_dtype_in(k, 0, ok))
		return ge_k_fail(k, "cannot bitcast %s to %s", kdt(x->dtype),
				 kdt(dt));
	size_t si = ge_xt_elem_size(x->dtype), so = ge_xt_elem_size(dt);
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = x->rank;
	memcpy(dims, x->dims, sizeof dims);
	if (si > so) {
		if (r >= GE_SHAPE_MAXRANK)
			return ge_k_fail(k, "rank %d is the most already", r);
		dims[r++] = (int64_t)(si / so);
	} else if (si < so) {
		if (r < 1 || dims[r - 1] != (int64_t)(so / si))
			return ge_k_fail(k, "the last dimension must be %zu",
					 so / si);
		r--;
	}
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, dt, r, dims);
	if (!o)
		return GE_EINVAL;
	if (x->n)
		memcpy(o->data, x->data, (size_t)x->n * si);
	return GE_OK;
}

/* L2Loss: sum(t * t) / 2. */
static int k_l2loss(ge_kctx *k)
{
	if (ge_k_need(k, 1) || ge_k_dtype_in(k, 0, KDT_FLOATS))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int dt = x->dtype;
	ge_xt *o = ge_kout_f(k, 0, dt, 0, NULL);
	if (!o)
		return GE_EINVAL;
	double s = 0;
	for (int64_t i = 0; i < x->n; i++) {
		double v = dt == DT_DOUBLE ? ((const double *)x->data)[i]
					   : kget_f(x, i);
		s += v * v;
	}
	if (dt == DT_DOUBLE)
		((double *)o->data)[0] = s / 2;
	else
		((float *)o->data)[0] = (float)(s / 2);
	return ge_kfinish_f(k, 0, dt);
}

/* ---------------------------------------------------------------- strings */

/* Appends len bytes to the string element s. */
static int str_add(ge_xstr *s, const char *p, size_t len)
{
	if (!len)
		return GE_OK;
	char *q = realloc(s->p, s->len + len + 1);
	if (!q)
		return GE_EINVAL;
	memcpy(q + s->len, p, len);
	s->len += len;
	q[s->len] = 0;
	s->p = q;
	return GE_OK;
}

/* StringJoin: the inputs joined element by element with the separator;
 * scalars stretch. */
static int k_string_join(ge_kctx *k)
{
	const char *sep = "";
	size_t seplen = 0;
	if (ge_k_need(k, k->nin > 1 ? k->nin : 1))
		return GE_EINVAL;
	if (ge_op_attr_string(k->g, k->id, "separator", &sep, &seplen))
		seplen = 0;
	const ge_xt *shape = NULL;
	for (int i = 0; i < k->nin; i++) {
		const ge_xt *t = k->in[i];
		if (t->dtype != DT_STRING)
			return ge_k_fail(k, "input %d is not a string", i);
		if (t->rank == 0)
			continue;
		if (shape && (shape->rank != t->rank ||
			      memcmp(shape->dims, t->dims,
				     sizeof(int64_t) * (size_t)t->rank)))
			return ge_k_fail(k, "inputs of different shapes");
		shape = t;
	}
	if (!shape)
		shape = k->in[0];
	if (ge_k_work(k, (uint64_t)shape->n * (uint64_t)k->nin))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_STRING, shape->rank, shape->dims);
	if (!o)
		return GE_EINVAL;
	ge_xstr *d = o->data;
	for (int64_t j = 0; j < o->n; j++)
		for (int i = 0; i < k->nin; i++) {
			const ge_xstr *s = (const ge_xstr *)k->in[i]->data +
					   (k->in[i]->rank ? j : 0);
			if ((i && str_add(&d[j], sep, seplen)) ||
			    str_add(&d[j], s->p, s->len))
				return ge_k_fail(k, "out of memory");
		}
	return GE_OK;
}

/* ReduceJoin(inputs, reduction_indices): strings joined along axes, in
 * row-major order, with the separator. */
static int k_reduce_join(ge_kctx *k)
{
	int64_t ax[GE_SHAPE_MAXRANK];
	const char *sep = "";
	size_t seplen = 0;
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->dtype != DT_STRING)
		return ge_k_fail(k, "inputs must be strings");
	int na = ge_k_ints(k, 1, ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		return GE_EINVAL;
	if (ge_op_attr_string(k->g, k->id, "separator", &sep, &seplen))
		seplen = 0;
	int keep = ge_k_attr_bool(k, "keep_dims", 0);
	int red[GE_SHAPE_MAXRANK] = {0};
	for (int i = 0; i < na; i++) {
		int64_t a;
		if (ge_k_axis(k, ax[i], x->rank, &a))
			return GE_EINVAL;
		if (red[a])
			return ge_k_fail(k, "axis %" PRId64 " is given twice", a);
		red[a] = 1;
	}
	int64_t odims[GE_SHAPE_MAXRANK], ost[GE_SHAPE_MAXRANK];
	int64_t full[GE_SHAPE_MAXRANK];
	int orank = 0;
	for (int i = 0; i < x->rank; i++) {
		full[i] = red[i] ? 1 : x->dims[i];
		if (!red[i] || keep)
			odims[orank++] = full[i];
	}
	kstrides(x->rank, full, ost);
	if (ge_k_work(k, (uint64_t)x->n + 1))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_STRING, orank, odims);
	if (!o)
		return GE_EINVAL;
	/* each input element, in row-major order, goes to its output */
	uint8_t *started = calloc((size_t)(o->n ? o->n : 1), 1);
	if (!started)
		return ge_k_fail(k, "out of memory");
	int64_t idx[GE_SHAPE_MAXRANK] = {0};
	const ge_xstr *s = x->data;
	ge_xstr *d = o->data;
	int rc = GE_OK;
	for (int64_t i = 0; i < x->n && rc == GE_OK; i++) {
		int64_t t = 0;
		for (int q = 0; q < x->rank; q++)
			t += red[q] ? 0 : idx[q] * ost[q];
		if ((started[t] && str_add(&d[t], sep, seplen)) ||
		    str_add(&d[t], s[i].p, s[i].len))
			rc = ge_k_fail(k, "out of memory");
		started[t] = 1;
		for (int q = x->rank - 1; q >= 0; q--) {
			if (++idx[q] < x->dims[q])
				break;
			idx[q] = 0;
		}
	}
	free(started);
	return rc;
}

/* One token of StringSplit: bytes [b, e) of string s. */
typedef struct token {
	int64_t s;
	size_t b, e;
} token;

/* The number of tokens of s, split at any byte of delim (at each byte when
 * delim is empty), empty tokens dropped when skip; stored in out when it
 * is not NULL. */
static size_t tokens(const ge_xstr *s, const char *delim, size_t dlen,
		     int skip, token *out, int64_t si)
{
	size_t n = 0, start = 0;
	if (!dlen) {
		for (size_t i = 0; i < s->len; i++, n++)
			if (out)
				out[n] = (token){si, i, i + 1};
		return n;
	}
	for (size_t i = 0; i <= s->len; i++) {
		if (i < s->len && !memchr(delim, s->p[i], dlen))
			continue;
		if (!skip || i > start) {
			if (out)
				out[n] = (token){si, start, i};
			n++;
		}
		start = i + 1;
	}
	return n;
}

/* StringSplit(input, delimiter): the tokens as a sparse tensor
 * (indices [n,2], values [n], dense_shape [2]). */
static int k_string_split(ge_kctx *k)
{
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0], *d = k->in[1];
	if (x->dtype != DT_STRING || x->rank != 1 || d->dtype != DT_STRING ||
	    d->n != 1)
		return ge_k_fail(k, "needs a string vector and a string "
				 "delimiter");
	if (k->nout < 3)
		return ge_k_fail(k, "has fewer than 3 outputs");
	int skip = ge_k_attr_bool(k, "skip_empty", 1);
	const ge_xstr *in = x->data, *dl = d->data;
	uint64_t total = 0, bytes = 0;
	int64_t widest = 0;
	for (int64_t i = 0; i < x->n; i++) {
		size_t c = tokens(&in[i], dl->p, dl->len, skip, NULL, i);
		total += c;
		bytes += in[i].len;
		if ((int64_t)c > widest)
			widest = (int64_t)c;
	}
	if (ge_k_work(k, bytes + total + 1))
		return GE_EINVAL;
	token *t = malloc((size_t)(total ? total : 1) * sizeof *t);
	if (!t)
		return ge_k_fail(k, "out of memory");
	int64_t n = (int64_t)total, two = 2, id[2] = {n, 2};
	ge_xt *oi = ge_k_out(k, 0, DT_INT64, 2, id);
	ge_xt *ov = oi ? ge_k_out(k, 1, DT_STRING, 1, &n) : NULL;
	ge_xt *os = ov ? ge_k_out(k, 2, DT_INT64, 1, &two) : NULL;
	int rc = os ? GE_OK : GE_EINVAL;
	int64_t at = 0;
	for (int64_t i = 0; rc == GE_OK && i < x->n; i++) {
		size_t c = tokens(&in[i], dl->p, dl->len, skip, t + at, i);
		for (size_t j = 0; j < c; j++, at++) {
			((int64_t *)oi->data)[2 * at] = i;
			((int64_t *)oi->data)[2 * at + 1] = (int64_t)j;
			ge_xstr *v = &((ge_xstr *)ov->data)[at];
			if (str_add(v, in[i].p + t[at].b, t[at].e - t[at].b))
				rc = ge_k_fail(k, "out of memory");
		}
	}
	if (rc == GE_OK) {
		((int64_t *)os->data)[0] = x->n;
		((int64_t *)os->data)[1] = widest;
	}
	free(t);
	return rc ? rc : ge_kall_set(k);
}

const ge_kdef ge_kernels_misc[] = {
	{"Identity", k_identity, GE_K_FORWARD},
	{"IdentityN", k_identity, GE_K_FORWARD},
	{"StopGradient", k_identity, GE_K_FORWARD},
	{"PreventGradient", k_identity, GE_K_FORWARD},
	{"Snapshot", k_identity, GE_K_FORWARD},
	{"Assert", k_assert, 0},
	{"EnsureShape", k_ensure_shape, GE_K_FORWARD},
	{"CheckNumerics", k_check_numerics, GE_K_FORWARD},
	{"CheckNumericsV2", k_check_numerics, GE_K_FORWARD},
	{"InvertPermutation", k_invert_permutation, 0},
	{"DynamicStitch", k_dynamic_stitch, 0},
	{"ParallelDynamicStitch", k_dynamic_stitch, 0},
	{"UnsortedSegmentSum", k_segment_sum, 0},
	{"Unique", k_unique, 0},
	{"ReverseSequence", k_reverse_sequence, 0},
	{"ScatterNd", k_scatter_nd, 0},
	{"ConcatOffset", k_concat_offset, 0},
	{"Bitcast", k_bitcast, 0},
	{"L2Loss", k_l2loss, 0},
	{"StringJoin", k_string_join, 0},
	{"ReduceJoin", k_reduce_join, 0},
	{"StringSplit", k_string_split, 0},
	{NULL, NULL, 0},
};
