/*
 * eval_layout.c: kernels that move elements without arithmetic (reshape,
 * transpose, concat, pack, slices, gathers, pad, tile) and those that make
 * shapes and sequences (Shape, Size, Rank, Fill, Range).  All are exact.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckarith.h"
#include "analyses/eval_impl.h"
#include "analyses/shapes_impl.h"

static int result_ok(kctx *k, int rank, const int64_t *dims)
{
	if (rank > GE_SHAPE_MAXRANK || ge_shape_count(rank, dims) < 0)
		return ge_eval_k_fail(k, "%s: result too large", k->type);
	return GE_OK;
}

/* Shape, ShapeN and Size produce int32 or int64 (TensorFlow's out_type). */
static int k_index_dtype(kctx *k, int dt)
{
	if (dt != DT_INT32 && dt != DT_INT64)
		return ge_eval_k_fail(k, "%s: out_type %s is not int32 or int64",
			      k->type, ge_dtype_name(dt) ? ge_dtype_name(dt) : "?");
	return GE_OK;
}

static int k_shape(kctx *k)
{
	int n = !strcmp(k->type, "ShapeN") ? k->nin : 1;
	int dt = ge_eval_k_attr_type(k, "out_type", DT_INT32);
	if (ge_eval_k_need(k, 1) || k_index_dtype(k, dt))
		return GE_EINVAL;
	if (n > k->nout)
		return ge_eval_k_fail(k, "%s: %d inputs for %d outputs", k->type, n,
			      k->nout);
	for (int j = 0; j < n; j++) {
		const ge_value *x = &k->in[j];
		int64_t r = x->rank;
		if (ge_eval_k_new(k, &k->out[j], dt, 1, &r))
			return GE_EINVAL;
		for (int i = 0; i < x->rank; i++)
			k->out[j].i[i] = x->dims[i];
		ge_value_normalize(&k->out[j]);
	}
	return GE_OK;
}

static int k_size_rank(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	int size = !strcmp(k->type, "Size");
	int dt = size ? ge_eval_k_attr_type(k, "out_type", DT_INT32) : DT_INT32;
	if (k_index_dtype(k, dt) || ge_eval_k_new(k, &k->out[0], dt, 0, NULL))
		return GE_EINVAL;
	k->out[0].i[0] = size ? k->in[0].n : k->in[0].rank;
	ge_value_normalize(&k->out[0]);
	return GE_OK;
}

static int k_fill(kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	int r = ge_eval_k_ints(k, 0, dims, GE_SHAPE_MAXRANK);
	if (r < 0 || k->in[1].n != 1 || result_ok(k, r, dims))
		return ge_eval_k_fail(k, "Fill needs a shape and a scalar");
	for (int i = 0; i < r; i++)
		if (dims[i] < 0)
			return ge_eval_k_fail(k, "negative dimension");
	if (ge_eval_k_new(k, &k->out[0], k->in[1].dtype, r, dims))
		return GE_EINVAL;
	for (int64_t i = 0; i < k->out[0].n; i++)
		val_move(&k->out[0], i, &k->in[1], 0);
	return GE_OK;
}

static int k_range(kctx *k)
{
	if (ge_eval_k_need(k, 3))
		return GE_EINVAL;
	const ge_value *a = &k->in[0];
	if (a->n != 1 || k->in[1].n != 1 || k->in[2].n != 1)
		return ge_eval_k_fail(k, "Range needs scalars");
	if (k->in[1].dtype != a->dtype || k->in[2].dtype != a->dtype ||
	    a->dtype == DT_BOOL)
		return ge_eval_k_fail(k, "Range: start, limit and delta are %s, %s and "
				 "%s, not one numeric dtype",
			      ge_dtype_name(a->dtype),
			      ge_dtype_name(k->in[1].dtype),
			      ge_dtype_name(k->in[2].dtype));
	double s = ge_value_get(a, 0), l = ge_value_get(&k->in[1], 0),
	       d = ge_value_get(&k->in[2], 0);
	if (d == 0 || (d > 0 && s > l) || (d < 0 && s < l))
		return ge_eval_k_fail(k, "Range with delta %g from %g to %g", d, s, l);
	int64_t n;
	if (a->i) {
		int64_t si = a->i[0], li = k->in[1].i[0], di = k->in[2].i[0];
		int64_t span;
		if (di == INT64_MIN ||
		    __builtin_sub_overflow(di > 0 ? li : si, di > 0 ? si : li, &span))
			return ge_eval_k_fail(k, "Range too long");
		int64_t ad = di > 0 ? di : -di;
		n = span / ad + (span % ad != 0);
	} else {
		double c = ceil(fabs((l - s) / d));
		if (!(c < 9.2e18))
			return ge_eval_k_fail(k, "Range too long");
		n = (int64_t)c;
	}
	if (result_ok(k, 1, &n))
		return GE_EINVAL;
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, a->dtype, 1, &n))
		return GE_EINVAL;
	/* TensorFlow's kernel accumulates in the dtype: so does this */
	double v = s;
	for (int64_t i = 0; i < n; i++) {
		if (o->d) {
			o->d[i] = v;
			v = a->dtype == DT_FLOAT ? (double)(float)(v + d) : v + d;
		} else {
			o->i[i] = a->i[0] + i * k->in[2].i[0];
		}
	}
	ge_value_normalize(o);
	return GE_OK;
}

static int k_reshape(kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int r = ge_eval_k_ints(k, 1, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return ge_eval_k_fail(k, "shape is not a small integer list");
	int infer = -1;
	int64_t known = 1;
	for (int i = 0; i < r; i++) {
		if (dims[i] == -1 && infer < 0)
			infer = i;
		else if (dims[i] < 0)
			return ge_eval_k_fail(k, "bad dimension %lld", (long long)dims[i]);
		else if (__builtin_mul_overflow(known, dims[i], &known))
			return ge_eval_k_fail(k, "shape too large");
	}
	if (infer >= 0) {
		if (known == 0 || x->n % known)
			return ge_eval_k_fail(k, "cannot reshape %lld elements",
				      (long long)x->n);
		dims[infer] = x->n / known;
	} else if (known != x->n) {
		return ge_eval_k_fail(k, "cannot reshape %lld elements into %lld",
			      (long long)x->n, (long long)known);
	}
	if (ge_eval_k_copy(k, &k->out[0], x))
		return GE_EINVAL;
	k->out[0].rank = r;
	memcpy(k->out[0].dims, dims, (size_t)r * sizeof dims[0]);
	return GE_OK;
}

static int k_squeeze_expand(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int64_t d[GE_SHAPE_MAXRANK];
	int r = 0;
	if (!strcmp(k->type, "ExpandDims")) {
		int64_t a = 0;
		if (ge_eval_k_scalar_int(k, 1, &a) || x->rank >= GE_SHAPE_MAXRANK ||
		    ge_eval_k_axis(k, a, x->rank + 1, &a))
			return ge_eval_k_fail(k, "bad axis");
		for (int i = 0, j = 0; i <= x->rank; i++)
			d[r++] = i == a ? 1 : x->dims[j++];
	} else {
		int64_t ax[GE_SHAPE_MAXRANK];
		uint8_t drop[GE_SHAPE_MAXRANK] = {0};
		int na = ge_eval_k_attr_ints(k, "squeeze_dims", ax, GE_SHAPE_MAXRANK);
		for (int i = 0; i < na; i++) {
			int64_t a = 0;
			if (ge_eval_k_axis(k, ax[i], x->rank, &a))
				return GE_EINVAL;
			if (x->dims[a] != 1)
				return ge_eval_k_fail(k, "cannot squeeze a dim of %lld",
					      (long long)x->dims[a]);
			drop[a] = 1;
		}
		for (int i = 0; i < x->rank; i++)
			if (!(na > 0 ? drop[i] : x->dims[i] == 1))
				d[r++] = x->dims[i];
	}
	if (ge_eval_k_copy(k, &k->out[0], x))
		return GE_EINVAL;
	k->out[0].rank = r;
	memcpy(k->out[0].dims, d, (size_t)r * sizeof d[0]);
	return GE_OK;
}

static int k_transpose(kctx *k)
{
	int64_t p[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (ge_eval_k_ints(k, 1, p, GE_SHAPE_MAXRANK) != x->rank)
		return ge_eval_k_fail(k, "perm does not fit the input");
	int64_t od[GE_SHAPE_MAXRANK], xs[GE_SHAPE_MAXRANK], st[GE_SHAPE_MAXRANK],
		idx[GE_SHAPE_MAXRANK] = {0};
	uint8_t seen[GE_SHAPE_MAXRANK] = {0};
	val_strides(x, xs);
	for (int i = 0; i < x->rank; i++) {
		if (ge_eval_k_axis(k, p[i], x->rank, &p[i]) || seen[p[i]]++)
			return ge_eval_k_fail(k, "perm is not a permutation");
		od[i] = x->dims[p[i]];
		st[i] = xs[p[i]];
	}
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, x->rank, od))
		return GE_EINVAL;
	int64_t ps = 0;
	for (int64_t n = 0; n < o->n; n++) {
		val_move(o, n, x, ps);
		for (int d = x->rank - 1; d >= 0; d--) {
			ps += st[d];
			if (++idx[d] < od[d])
				break;
			ps -= st[d] * od[d];
			idx[d] = 0;
		}
	}
	return GE_OK;
}

/* Concatenation of vals along axis into o (shapes checked). */
static int concat(kctx *k, const ge_value *vals, int n, int64_t axis,
		  ge_value *o)
{
	if (n < 1)
		return ge_eval_k_fail(k, "nothing to concatenate");
	const ge_value *f = &vals[0];
	int64_t a = 0;
	if (ge_eval_k_axis(k, axis, f->rank, &a))
		return GE_EINVAL;
	int64_t od[GE_SHAPE_MAXRANK];
	memcpy(od, f->dims, sizeof od);
	od[a] = 0;
	for (int i = 0; i < n; i++) {
		if (vals[i].rank != f->rank || vals[i].dtype != f->dtype)
			return ge_eval_k_fail(k, "input %d does not match", i);
		for (int d = 0; d < f->rank; d++)
			if (d != a && vals[i].dims[d] != f->dims[d])
				return ge_eval_k_fail(k, "input %d does not match", i);
		if (ge_ck_add(od[a], vals[i].dims[a], &od[a]))
			return ge_eval_k_fail(k, "%s: concatenated size overflows",
				      k->type);
	}
	if (result_ok(k, f->rank, od) || ge_eval_k_new(k, o, f->dtype, f->rank, od))
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < a; d++)
		outer = ge_ck_mul_sat(outer, od[d]);
	for (int d = (int)a + 1; d < f->rank; d++)
		inner = ge_ck_mul_sat(inner, od[d]);
	int64_t pos = 0;
	/* an empty result walks nothing (outer may be any size then) */
	for (int64_t p = 0; o->n > 0 && p < outer; p++)
		for (int i = 0; i < n; i++) {
			int64_t m = vals[i].dims[a] * inner;
			for (int64_t j = 0; j < m; j++)
				val_move(o, pos++, &vals[i], p * m + j);
		}
	return GE_OK;
}

static int k_concat(kctx *k)
{
	int v2 = !strcmp(k->type, "ConcatV2");
	int64_t ax;
	if (ge_eval_k_need(k, 2) || ge_eval_k_scalar_int(k, v2 ? k->nin - 1 : 0, &ax))
		return ge_eval_k_fail(k, "axis is not a scalar");
	return concat(k, k->in + (v2 ? 0 : 1), k->nin - 1, ax, &k->out[0]);
}

static int k_pack(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *f = &k->in[0];
	if (f->rank >= GE_SHAPE_MAXRANK)
		return ge_eval_k_fail(k, "rank too large");
	int64_t a = ge_eval_k_attr_int(k, "axis", 0);
	if (ge_eval_k_axis(k, a, f->rank + 1, &a))
		return GE_EINVAL;
	/* each input viewed with a 1 at axis, then concatenated */
	ge_value *v = ge_xcalloc((size_t)k->nin, sizeof *v);
	for (int i = 0; i < k->nin; i++) {
		v[i] = k->in[i];
		if (v[i].rank != f->rank) {
			free(v);
			return ge_eval_k_fail(k, "input %d has another shape", i);
		}
		v[i].rank = f->rank + 1;
		for (int d = 0, j = 0; d <= f->rank; d++)
			v[i].dims[d] = d == a ? 1 : k->in[i].dims[j++];
	}
	int rc = concat(k, v, k->nin, a, &k->out[0]);
	free(v);
	return rc;
}

/* Output j of a split along axis a: elements [off, off+len) of that dim
 * (the caller checked the window with ge_ck_window). */
static int take(kctx *k, const ge_value *x, int64_t a, int64_t off,
		int64_t len, ge_value *o)
{
	int64_t od[GE_SHAPE_MAXRANK];
	memcpy(od, x->dims, sizeof od);
	od[a] = len;
	if (ge_eval_k_new(k, o, x->dtype, x->rank, od))
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < a; d++)
		outer = ge_ck_mul_sat(outer, x->dims[d]);
	for (int d = (int)a + 1; d < x->rank; d++)
		inner = ge_ck_mul_sat(inner, x->dims[d]);
	int64_t pos = 0;
	for (int64_t p = 0; o->n > 0 && p < outer; p++)
		for (int64_t j = 0; j < len * inner; j++)
			val_move(o, pos++, x, (p * x->dims[a] + off) * inner + j);
	return GE_OK;
}

static int k_unpack(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int64_t a = ge_eval_k_attr_int(k, "axis", 0);
	if (ge_eval_k_axis(k, a, x->rank, &a) || x->dims[a] != k->nout)
		return ge_eval_k_fail(k, "num does not match the dimension");
	for (int j = 0; j < k->nout; j++) {
		if (take(k, x, a, j, 1, &k->out[j]))
			return GE_EINVAL;
		k->out[j].rank--;
		memmove(k->out[j].dims + a, k->out[j].dims + a + 1,
			(size_t)(k->out[j].rank - a) * sizeof x->dims[0]);
	}
	return GE_OK;
}

static int k_split(kctx *k)
{
	int v = !strcmp(k->type, "SplitV");
	int64_t a, sizes[SH_MAXV];
	if (ge_eval_k_need(k, v ? 3 : 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[v ? 0 : 1];
	if (ge_eval_k_scalar_int(k, v ? 2 : 0, &a) || ge_eval_k_axis(k, a, x->rank, &a))
		return ge_eval_k_fail(k, "bad axis");
	int n = k->nout;
	if (v) {
		if (ge_eval_k_ints(k, 1, sizes, SH_MAXV) != n)
			return ge_eval_k_fail(k, "size_splits does not fit");
		int64_t known = 0;
		int inf = -1;
		for (int j = 0; j < n; j++) {
			if (sizes[j] == -1 && inf < 0)
				inf = j;
			else if (sizes[j] < 0 ||
				 ge_ck_add(known, sizes[j], &known))
				return ge_eval_k_fail(k, "SplitV: size_splits do not "
						 "fit the dimension");
		}
		if (inf >= 0)
			sizes[inf] = x->dims[a] - known;
	} else {
		if (n <= 0 || x->dims[a] % n || n > SH_MAXV)
			return ge_eval_k_fail(k, "dimension does not split evenly");
		for (int j = 0; j < n; j++)
			sizes[j] = x->dims[a] / n;
	}
	int64_t off = 0;
	for (int j = 0; j < n; j++) {
		if (ge_ck_window(off, sizes[j], x->dims[a], NULL))
			return ge_eval_k_fail(k, "%s: sizes do not fit the dimension",
				      k->type);
		if (take(k, x, a, off, sizes[j], &k->out[j]))
			return GE_EINVAL;
		off += sizes[j];
	}
	return GE_OK;
}

/* Gathers a box: for each dim a begin, a stride and a size. */
static void box(const ge_value *x, const int64_t *beg, const int64_t *str,
		const int64_t *size, ge_value *o)
{
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	if (o->n <= 0)
		return;
	val_strides(x, xs);
	int64_t base = 0;
	for (int d = 0; d < x->rank; d++)
		base += beg[d] * xs[d];
	int64_t p = base;
	for (int64_t n = 0; n < o->n; n++) {
		val_move(o, n, x, p);
		for (int d = x->rank - 1; d >= 0; d--) {
			p += str[d] * xs[d];
			if (++idx[d] < size[d])
				break;
			p -= str[d] * xs[d] * size[d];
			idx[d] = 0;
		}
	}
}

static int k_slice(kctx *k)
{
	int64_t b[GE_SHAPE_MAXRANK], s[GE_SHAPE_MAXRANK], one[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 3))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (ge_eval_k_ints(k, 1, b, GE_SHAPE_MAXRANK) != x->rank ||
	    ge_eval_k_ints(k, 2, s, GE_SHAPE_MAXRANK) != x->rank)
		return ge_eval_k_fail(k, "begin and size must have one entry per dim");
	for (int d = 0; d < x->rank; d++) {
		if (s[d] == -1 && b[d] >= 0 && b[d] <= x->dims[d])
			s[d] = x->dims[d] - b[d];
		if (ge_ck_window(b[d], s[d], x->dims[d], NULL))
			return ge_eval_k_fail(k, "Slice: begin %lld size %lld out of "
					 "bounds of dim %d (%lld)",
				      (long long)b[d], (long long)s[d], d,
				      (long long)x->dims[d]);
		one[d] = 1;
	}
	if (ge_eval_k_new(k, &k->out[0], x->dtype, x->rank, s))
		return GE_EINVAL;
	box(x, b, one, s, &k->out[0]);
	return GE_OK;
}

static int k_strided_slice(kctx *k)
{
	int64_t b[SH_MAXV], e[SH_MAXV], s[SH_MAXV];
	int64_t beg[GE_SHAPE_MAXRANK], str[GE_SHAPE_MAXRANK],
		size[GE_SHAPE_MAXRANK], od[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 4))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	int n = ge_eval_k_ints(k, 1, b, SH_MAXV);
	if (n < 0 || ge_eval_k_ints(k, 2, e, SH_MAXV) != n ||
	    ge_eval_k_ints(k, 3, s, SH_MAXV) != n)
		return ge_eval_k_fail(k, "begin, end and strides must be equal lists");
	int64_t masks[5] = {
		ge_eval_k_attr_int(k, "begin_mask", 0), ge_eval_k_attr_int(k, "end_mask", 0),
		ge_eval_k_attr_int(k, "ellipsis_mask", 0),
		ge_eval_k_attr_int(k, "new_axis_mask", 0),
		ge_eval_k_attr_int(k, "shrink_axis_mask", 0)};
	int orank;
	char msg[200];
	if (ge_sslice_plan(x->rank, x->dims, n, b, e, s, masks, beg, str, size,
			   &orank, od, msg, sizeof msg))
		return ge_eval_k_fail(k, "StridedSlice: %s", msg);
	/* a dim of one element is never stepped: its stride (any int64)
	 * must not enter box's offsets; a dim of two or more steps at most
	 * by its own extent */
	for (int d = 0; d < x->rank; d++)
		if (size[d] <= 1)
			str[d] = 1;
	if (ge_eval_k_new(k, &k->out[0], x->dtype, x->rank, size))
		return GE_EINVAL;
	box(x, beg, str, size, &k->out[0]);
	k->out[0].rank = orank;
	memcpy(k->out[0].dims, od, (size_t)orank * sizeof od[0]);
	return GE_OK;
}

static int k_gather(kctx *k)
{
	int64_t a = 0;
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *p = &k->in[0], *ix = &k->in[1];
	if (!strcmp(k->type, "GatherV2") &&
	    (ge_eval_k_scalar_int(k, 2, &a) || ge_eval_k_attr_int(k, "batch_dims", 0) != 0))
		return ge_eval_k_fail(k, "axis must be a scalar, batch_dims 0");
	if (p->rank < 1 || ge_eval_k_axis(k, a, p->rank, &a) || !ix->i ||
	    ix->dtype == DT_BOOL)
		return ge_eval_k_fail(k, "bad params or indices");
	int r = (int)a + ix->rank + p->rank - (int)a - 1;
	int64_t od[GE_SHAPE_MAXRANK];
	if (r > GE_SHAPE_MAXRANK)
		return ge_eval_k_fail(k, "rank too large");
	int q = 0;
	for (int d = 0; d < a; d++)
		od[q++] = p->dims[d];
	for (int d = 0; d < ix->rank; d++)
		od[q++] = ix->dims[d];
	for (int d = (int)a + 1; d < p->rank; d++)
		od[q++] = p->dims[d];
	if (result_ok(k, r, od))
		return GE_EINVAL;
	int64_t outer = 1, inner = 1, len = p->dims[a];
	for (int d = 0; d < a; d++)
		outer = ge_ck_mul_sat(outer, p->dims[d]);
	for (int d = (int)a + 1; d < p->rank; d++)
		inner = ge_ck_mul_sat(inner, p->dims[d]);
	for (int64_t j = 0; j < ix->n; j++)
		if (ix->i[j] < 0 || ix->i[j] >= len)
			return ge_eval_k_fail(k, "index %lld out of range [0, %lld)",
				      (long long)ix->i[j], (long long)len);
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, p->dtype, r, od))
		return GE_EINVAL;
	int64_t pos = 0;
	for (int64_t u = 0; o->n > 0 && u < outer; u++)
		for (int64_t j = 0; j < ix->n; j++)
			for (int64_t v = 0; v < inner; v++)
				val_move(o, pos++, p,
					 (u * len + ix->i[j]) * inner + v);
	return GE_OK;
}

static int k_tile(kctx *k)
{
	int64_t m[GE_SHAPE_MAXRANK], od[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (ge_eval_k_ints(k, 1, m, GE_SHAPE_MAXRANK) != x->rank)
		return ge_eval_k_fail(k, "multiples must have one entry per dim");
	for (int d = 0; d < x->rank; d++) {
		if (m[d] < 0 || ge_ck_mul(x->dims[d], m[d], &od[d]))
			return ge_eval_k_fail(k, "Tile: multiple %lld of dim %d does "
					 "not hold", (long long)m[d], d);
	}
	if (result_ok(k, x->rank, od))
		return GE_EINVAL;
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, x->rank, od))
		return GE_EINVAL;
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	val_strides(x, xs);
	for (int64_t n = 0; n < o->n; n++) {
		int64_t p = 0;
		for (int d = 0; d < x->rank; d++)
			p += (idx[d] % x->dims[d]) * xs[d];
		val_move(o, n, x, p);
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++idx[d] < od[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

static int k_pad(kctx *k)
{
	int64_t p[2 * GE_SHAPE_MAXRANK], od[GE_SHAPE_MAXRANK];
	if (ge_eval_k_need(k, 2))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (ge_eval_k_ints(k, 1, p, 2 * GE_SHAPE_MAXRANK) != 2 * x->rank)
		return ge_eval_k_fail(k, "paddings must be [rank, 2]");
	for (int d = 0; d < x->rank; d++)
		if (ge_ck_dim_grow(x->dims[d], p[2 * d], p[2 * d + 1], &od[d]))
			return ge_eval_k_fail(k, "%s: paddings %lld, %lld of dim %d do "
					 "not hold", k->type,
				      (long long)p[2 * d],
				      (long long)p[2 * d + 1], d);
	const ge_value *cv = NULL;
	if (!strcmp(k->type, "PadV2") && k->nin > 2) {
		cv = &k->in[2];
		if (cv->n != 1 || cv->dtype != x->dtype)
			return ge_eval_k_fail(k, "PadV2: constant_values is %s[%lld], "
					 "not a %s scalar",
				      ge_dtype_name(cv->dtype),
				      (long long)cv->n,
				      ge_dtype_name(x->dtype));
	}
	if (result_ok(k, x->rank, od))
		return GE_EINVAL;
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, x->rank, od))
		return GE_EINVAL;
	if (cv)
		for (int64_t n = 0; n < o->n; n++)
			val_move(o, n, cv, 0);
	int64_t os[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	val_strides(o, os);
	for (int64_t n = 0; n < x->n; n++) {
		int64_t q = 0;
		for (int d = 0; d < x->rank; d++)
			q += (idx[d] + p[2 * d]) * os[d];
		val_move(o, q, x, n);
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++idx[d] < x->dims[d])
				break;
			idx[d] = 0;
		}
	}
	return GE_OK;
}

static int k_invert_permutation(kctx *k)
{
	if (ge_eval_k_need(k, 1))
		return GE_EINVAL;
	const ge_value *x = &k->in[0];
	if (x->rank != 1 || !x->i || x->dtype == DT_BOOL)
		return ge_eval_k_fail(k, "needs a 1-D integer input");
	ge_value *o = &k->out[0];
	if (ge_eval_k_new(k, o, x->dtype, 1, x->dims))
		return GE_EINVAL;
	for (int64_t j = 0; j < x->n; j++)
		o->i[j] = -1;
	for (int64_t j = 0; j < x->n; j++) {
		int64_t p = x->i[j];
		if (p < 0 || p >= x->n || o->i[p] != -1) {
			ge_value_free(o);
			return ge_eval_k_fail(k, "not a permutation");
		}
		o->i[p] = j;
	}
	return GE_OK;
}

const struct ge_kernel ge_layout_kernels[] = {
	{"InvertPermutation", k_invert_permutation},
	{"Shape", k_shape}, {"ShapeN", k_shape}, {"Size", k_size_rank},
	{"Rank", k_size_rank}, {"Fill", k_fill}, {"Range", k_range},
	{"Reshape", k_reshape}, {"Squeeze", k_squeeze_expand},
	{"ExpandDims", k_squeeze_expand}, {"Transpose", k_transpose},
	{"ConcatV2", k_concat}, {"Concat", k_concat}, {"Pack", k_pack},
	{"Unpack", k_unpack}, {"Split", k_split}, {"SplitV", k_split},
	{"Slice", k_slice}, {"StridedSlice", k_strided_slice},
	{"Gather", k_gather}, {"GatherV2", k_gather}, {"Tile", k_tile},
	{"Pad", k_pad}, {"PadV2", k_pad},
	{NULL, NULL},
};
