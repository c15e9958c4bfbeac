/*
 * exec/k_shape.c: kernels about shapes and layout without arithmetic:
 * Shape, ShapeN, Size, Rank, Reshape, ExpandDims, Squeeze, Transpose,
 * BroadcastTo, BroadcastArgs.
 *
 * A kernel never changes its input: Reshape and its kin copy the
 * elements under the new shape.
 */
#include <inttypes.h>
#include <string.h>

#include "exec/kernel_impl.h"

/* Writes v as element i of an int32 or int64 tensor; int32 refuses a
 * value it cannot hold. */
static int put_index(ge_kctx *k, ge_xt *o, int64_t i, int64_t v)
{
	if (o->dtype == DT_INT32) {
		if (v > INT32_MAX || v < INT32_MIN)
			return ge_k_fail(k, "%" PRId64 " does not fit int32", v);
		((int32_t *)o->data)[i] = (int32_t)v;
	} else {
		((int64_t *)o->data)[i] = v;
	}
	return GE_OK;
}

static int index_type(ge_kctx *k, const char *attr, int *dt)
{
	*dt = ge_k_attr_type(k, attr, DT_INT32);
	if (*dt != DT_INT32 && *dt != DT_INT64)
		return ge_k_fail(k, "%s must be int32 or int64, is %s", attr,
				 kdt(*dt));
	return GE_OK;
}

static int k_shape(ge_kctx *k)
{
	int dt;
	int n = !strcmp(k->type, "ShapeN") ? k->nin : 1;
	if (ge_k_need(k, n > 1 ? n : 1) || index_type(k, "out_type", &dt))
		return GE_EINVAL;
	if (n > k->nout)
		return ge_k_fail(k, "has %d inputs but %d outputs", n, k->nout);
	for (int j = 0; j < n; j++) {
		const ge_xt *x = k->in[j];
		int64_t r = x->rank;
		ge_xt *o = ge_k_out(k, j, dt, 1, &r);
		if (!o)
			return GE_EINVAL;
		for (int i = 0; i < x->rank; i++)
			if (put_index(k, o, i, x->dims[i]))
				return GE_EINVAL;
	}
	return ge_kall_set(k);
}

static int k_size(ge_kctx *k)
{
	int dt;
	if (ge_k_need(k, 1) || index_type(k, "out_type", &dt))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, dt, 0, NULL);
	return o ? put_index(k, o, 0, k->in[0]->n) : GE_EINVAL;
}

static int k_rank(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_INT32, 0, NULL);
	if (!o)
		return GE_EINVAL;
	((int32_t *)o->data)[0] = k->in[0]->rank;
	return GE_OK;
}

/* Output 0: input 0's elements under shape dims. */
static int reshaped(ge_kctx *k, int rank, const int64_t *dims)
{
	const ge_xt *x = k->in[0];
	char s1[128], s2[128];
	int64_t n = kcount(rank, dims);
	if (n != x->n)
		return ge_k_fail(k, "cannot reshape %s into %s",
				 ge_xt_describe(x, s1, sizeof s1),
				 ge_kshape(rank, dims, s2, sizeof s2));
	if (ge_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, rank, dims);
	if (!o)
		return GE_EINVAL;
	if (ge_kcopy_elems(o, 0, x, 0, n))
		return ge_k_fail(k, "out of memory");
	return GE_OK;
}

static int k_reshape(ge_kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK + 1];
	char s1[128];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (k->in[1]->rank != 1 && !(k->in[1]->rank == 0 && k->in[1]->n == 1))
		return ge_k_fail(k, "shape must be a vector, has rank %d",
				 k->in[1]->rank);
	int r = ge_k_ints(k, 1, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return GE_EINVAL;
	int unknown = -1;
	int64_t known = 1;
	for (int i = 0; i < r; i++) {
		if (dims[i] == -1) {
			if (unknown >= 0)
				return ge_k_fail(k, "shape has two -1 dimensions");
			unknown = i;
			continue;
		}
		if (dims[i] < 0)
			return ge_k_fail(k, "shape dimension %d is %" PRId64, i,
					 dims[i]);
		if (dims[i] && known > INT64_MAX / dims[i])
			return ge_k_fail(k, "shape's size overflows");
		known *= dims[i];
	}
	if (unknown >= 0) {
		if (known == 0 || x->n % known)
			return ge_k_fail(k, "cannot reshape %s into a shape with "
					 "%" PRId64 " known elements",
					 ge_xt_describe(x, s1, sizeof s1), known);
		dims[unknown] = x->n / known;
	}
	return reshaped(k, r, dims);
}

static int k_expand_dims(ge_kctx *k)
{
	int64_t a, dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2) || ge_k_scalar_int(k, 1, &a))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	if (x->rank >= GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "rank %d is already the most", x->rank);
	if (ge_k_axis(k, a, x->rank + 1, &a))
		return GE_EINVAL;
	int r = 0;
	for (int i = 0; i <= x->rank; i++) {
		if (i == a)
			dims[r++] = 1;
		if (i < x->rank)
			dims[r++] = x->dims[i];
	}
	return reshaped(k, r, dims);
}

static int k_squeeze(ge_kctx *k)
{
	int64_t ax[GE_SHAPE_MAXRANK], dims[GE_SHAPE_MAXRANK];
	int drop[GE_SHAPE_MAXRANK] = {0};
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int na = ge_k_attr_ints(k, "squeeze_dims", ax, GE_SHAPE_MAXRANK);
	if (na < 0)
		na = ge_k_attr_ints(k, "axis", ax, GE_SHAPE_MAXRANK);
	for (int i = 0; i < na; i++) {
		int64_t a;
		if (ge_k_axis(k, ax[i], x->rank, &a))
			return GE_EINVAL;
		if (x->dims[a] != 1)
			return ge_k_fail(k, "cannot squeeze dimension %" PRId64
					 " of size %" PRId64, a, x->dims[a]);
		drop[a] = 1;
	}
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (na > 0 ? !drop[i] : x->dims[i] != 1)
			dims[r++] = x->dims[i];
	return reshaped(k, r, dims);
}

/* ---------------------------------------------------------------- transpose */

/* A transpose of 4-byte elements where the input's last dimension lands
 * at output dimension p, not last: the other dimensions walked by an
 * odometer, and for each, the plane (p, last) copied in 32x32 tiles so
 * that both reads and writes stay in cache lines. */
static void transpose_tiled(const ge_xt *x, ge_xt *o, const int64_t *ps,
			    int p)
{
	int r = o->rank, last = r - 1;
	int64_t os[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(r, o->dims, os);
	int64_t A = o->dims[p], B = o->dims[last], sb = ps[last];
	const uint32_t *in = x->data;
	uint32_t *out = o->data;
	for (;;) {
		int64_t bi = 0, bo = 0;
		for (int d = 0; d < r; d++)
			if (d != p && d != last) {
				bi += idx[d] * ps[d];
				bo += idx[d] * os[d];
			}
		for (int64_t a0 = 0; a0 < A; a0 += 32)
			for (int64_t b0 = 0; b0 < B; b0 += 32) {
				int64_t a1 = a0 + 32 < A ? a0 + 32 : A,
					b1 = b0 + 32 < B ? b0 + 32 : B;
				for (int64_t a = a0; a < a1; a++)
					for (int64_t b = b0; b < b1; b++)
						out[bo + a * os[p] + b] =
							in[bi + a + b * sb];
			}
		int d = last - 1;
		for (; d >= 0; d--) {
			if (d == p)
				continue;
			if (++idx[d] < o->dims[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			return;
	}
}

/* o = x with its dimensions permuted: o's dim i is x's dim perm[i]. */
int ge_ktranspose(ge_kctx *k, const ge_xt *x, const int64_t *perm, int oi)
{
	int r = x->rank;
	int64_t dims[GE_SHAPE_MAXRANK], xs[GE_SHAPE_MAXRANK],
		ps[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0};
	kstrides(r, x->dims, xs);
	for (int i = 0; i < r; i++) {
		dims[i] = x->dims[perm[i]];
		ps[i] = xs[perm[i]];
	}
	if (ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, oi, x->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	size_t es = ge_xt_elem_size(x->dtype);
	int deep = x->dtype == DT_STRING || x->dtype == DT_RESOURCE ||
		   x->dtype == DT_VARIANT;
	if (es == 4 && r >= 2 && perm[r - 1] != r - 1 && o->n > 0) {
		int p = 0;
		while (perm[p] != r - 1)
			p++;
		transpose_tiled(x, o, ps, p);
		return GE_OK;
	}
	int64_t src = 0;
	int last = r - 1;
	for (int64_t i = 0; i < o->n;) {
		int64_t len = r ? dims[last] : 1, st = r ? ps[last] : 0;
		if (deep) {
			for (int64_t j = 0; j < len; j++)
				if (ge_kcopy_elem(o, i + j, x, src + j * st))
					return ge_k_fail(k, "out of memory");
		} else if (es == 4) {
			uint32_t *d = (uint32_t *)o->data + i;
			const uint32_t *s = (const uint32_t *)x->data + src;
			for (int64_t j = 0; j < len; j++)
				d[j] = s[j * st];
		} else {
			for (int64_t j = 0; j < len; j++)
				memcpy((char *)o->data + (size_t)(i + j) * es,
				       (const char *)x->data +
					       (size_t)(src + j * st) * es, es);
		}
		i += len;
		int d = last - 1;
		for (; d >= 0; d--) {
			src += ps[d];
			if (++idx[d] < dims[d])
				break;
			src -= ps[d] * dims[d];
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
	return GE_OK;
}

static int k_transpose(ge_kctx *k)
{
	int64_t perm[GE_SHAPE_MAXRANK];
	int seen[GE_SHAPE_MAXRANK] = {0};
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int n = ge_k_ints(k, 1, perm, GE_SHAPE_MAXRANK);
	if (n < 0)
		return GE_EINVAL;
	if (n != x->rank)
		return ge_k_fail(k, "perm has %d elements, the input rank %d",
				 n, x->rank);
	for (int i = 0; i < n; i++) {
		if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
			return ge_k_fail(k, "perm is not a permutation of 0..%d",
					 n - 1);
		seen[perm[i]] = 1;
	}
	return ge_ktranspose(k, x, perm, 0);
}

/* ---------------------------------------------------------------- broadcast */

static int k_broadcast_to(ge_kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	char s1[128], s2[128];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int r = ge_k_ints(k, 1, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return GE_EINVAL;
	if (r < x->rank)
		goto bad;
	for (int i = 0; i < r; i++) {
		if (dims[i] < 0)
			goto bad;
		int xi = i - (r - x->rank);
		if (xi >= 0 && x->dims[xi] != 1 && x->dims[xi] != dims[i])
			goto bad;
	}
	int64_t n = kcount(r, dims);
	if (n < 0)
		return ge_k_fail(k, "the shape's size overflows");
	if (ge_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	int64_t xs[GE_SHAPE_MAXRANK], idx[GE_SHAPE_MAXRANK] = {0}, src = 0;
	int64_t st = 1;
	for (int i = r - 1; i >= 0; i--) {
		int xi = i - (r - x->rank);
		int64_t d = xi >= 0 ? x->dims[xi] : 1;
		xs[i] = d == 1 ? 0 : st;
		st *= d;
	}
	for (int64_t i = 0; i < n; i++) {
		if (ge_kcopy_elem(o, i, x, src))
			return ge_k_fail(k, "out of memory");
		for (int d = r - 1; d >= 0; d--) {
			src += xs[d];
			if (++idx[d] < dims[d])
				break;
			src -= xs[d] * dims[d];
			idx[d] = 0;
		}
	}
	return GE_OK;
bad:
	return ge_k_fail(k, "cannot broadcast %s to %s",
			 ge_xt_describe(x, s1, sizeof s1),
			 ge_kshape(r, dims, s2, sizeof s2));
}

static int k_broadcast_args(ge_kctx *k)
{
	int64_t a[GE_SHAPE_MAXRANK], b[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	int ra = ge_k_ints(k, 0, a, GE_SHAPE_MAXRANK);
	int rb = ra < 0 ? -1 : ge_k_ints(k, 1, b, GE_SHAPE_MAXRANK);
	if (rb < 0)
		return GE_EINVAL;
	for (int i = 0; i < ra; i++)
		if (a[i] < 0)
			return ge_k_fail(k, "s0 has a negative dimension");
	for (int i = 0; i < rb; i++)
		if (b[i] < 0)
			return ge_k_fail(k, "s1 has a negative dimension");
	kbcast bc;
	if (ge_kbcast_shapes(k, ra, a, rb, b, &bc))
		return GE_EINVAL;
	int64_t r = bc.rank;
	ge_xt *o = ge_k_out(k, 0, k->in[0]->dtype, 1, &r);
	if (!o)
		return GE_EINVAL;
	for (int i = 0; i < bc.rank; i++)
		if (put_index(k, o, i, bc.dims[i]))
			return GE_EINVAL;
	return GE_OK;
}

const ge_kdef ge_kernels_shape[] = {
	{"Shape", k_shape, 0}, {"ShapeN", k_shape, 0}, {"Size", k_size, 0},
	{"Rank", k_rank, 0}, {"Reshape", k_reshape, 0},
	{"ExpandDims", k_expand_dims, 0}, {"Squeeze", k_squeeze, 0},
	{"Transpose", k_transpose, 0}, {"BroadcastTo", k_broadcast_to, 0},
	{"BroadcastArgs", k_broadcast_args, 0},
	{NULL, NULL, 0},
};
