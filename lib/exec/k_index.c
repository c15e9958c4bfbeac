/*
 * exec/k_index.c: kernels that read by index: GatherV2 (with batch_dims),
 * Gather, GatherNd, OneHot, Where.
 *
 * An index outside its dimension fails the op with a message naming the
 * index, as TensorFlow's CPU kernels do.
 */
#include <inttypes.h>
#include <string.h>

#include "exec/kernel_impl.h"

static int is_index(const ge_xt *t)
{
	return t->dtype == DT_INT32 || t->dtype == DT_INT64 ||
	       t->dtype == DT_INT16 || t->dtype == DT_UINT16 ||
	       t->dtype == DT_INT8 || t->dtype == DT_UINT8;
}

static int prod(const int64_t *d, int from, int to, int64_t *out)
{
	int64_t n = 1;
	for (int i = from; i < to; i++) {
		if (d[i] && n > INT64_MAX / d[i])
			return -1;
		n *= d[i];
	}
	*out = n;
	return 0;
}

static int gather(ge_kctx *k, const ge_xt *p, const ge_xt *ix, int64_t axis,
		  int64_t bd)
{
	char s1[128], s2[128];
	if (!is_index(ix))
		return ge_k_fail(k, "indices must be integers, are %s",
				 kdt(ix->dtype));
	if (bd < 0)
		bd += ix->rank;
	if (bd < 0 || bd > ix->rank)
		return ge_k_fail(k, "batch_dims is out of range");
	if (p->rank < 1)
		return ge_k_fail(k, "params must have rank 1 or more");
	if (ge_k_axis(k, axis, p->rank, &axis))
		return GE_EINVAL;
	if (axis < bd)
		return ge_k_fail(k, "axis %" PRId64 " is below batch_dims %"
				 PRId64, axis, bd);
	for (int i = 0; i < bd; i++)
		if (p->dims[i] != ix->dims[i])
			return ge_k_fail(k, "params %s and indices %s differ in "
					 "batch dimension %d",
					 ge_xt_describe(p, s1, sizeof s1),
					 ge_xt_describe(ix, s2, sizeof s2), i);
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = 0;
	if (p->rank - 1 + ix->rank - bd > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "the result's rank is over %d",
				 GE_SHAPE_MAXRANK);
	for (int i = 0; i < axis; i++)
		dims[r++] = p->dims[i];
	for (int i = (int)bd; i < ix->rank; i++)
		dims[r++] = ix->dims[i];
	for (int i = (int)axis + 1; i < p->rank; i++)
		dims[r++] = p->dims[i];
	int64_t batch, outer, inner, nidx, total;
	if (prod(p->dims, 0, (int)bd, &batch) ||
	    prod(p->dims, (int)bd, (int)axis, &outer) ||
	    prod(p->dims, (int)axis + 1, p->rank, &inner) ||
	    prod(ix->dims, (int)bd, ix->rank, &nidx) ||
	    (total = kcount(r, dims)) < 0)
		return ge_k_fail(k, "the result's size overflows");
	int64_t g = p->dims[axis];
	for (int64_t j = 0; j < ix->n; j++) {
		int64_t v = kld_i(ix, j);
		if (v < 0 || v >= g)
			return ge_k_fail(k, "indices[%" PRId64 "] = %" PRId64
					 " is not in [0, %" PRId64 ")", j, v, g);
	}
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, p->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	int64_t d = 0;
	for (int64_t b = 0; b < batch; b++)
		for (int64_t q = 0; q < outer; q++)
			for (int64_t j = 0; j < nidx; j++, d += inner) {
				int64_t v = kld_i(ix, b * nidx + j);
				if (inner && ge_kcopy_elems(o, d, p,
					((b * outer + q) * g + v) * inner, inner))
					return ge_k_fail(k, "out of memory");
			}
	return GE_OK;
}

static int k_gather(ge_kctx *k)
{
	int64_t axis = 0, bd = 0;
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	if (!strcmp(k->type, "GatherV2")) {
		if (ge_k_need(k, 3) || ge_k_scalar_int(k, 2, &axis))
			return GE_EINVAL;
		bd = ge_k_attr_int(k, "batch_dims", 0);
	}
	return gather(k, k->in[0], k->in[1], axis, bd);
}

static int k_gather_nd(ge_kctx *k)
{
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *p = k->in[0], *ix = k->in[1];
	if (ge_k_attr_int(k, "batch_dims", 0) != 0)
		return ge_k_fail(k, "batch_dims other than 0 is not supported");
	if (!is_index(ix))
		return ge_k_fail(k, "indices must be integers, are %s",
				 kdt(ix->dtype));
	if (ix->rank < 1)
		return ge_k_fail(k, "indices must have rank 1 or more");
	int64_t kk = ix->dims[ix->rank - 1];
	if (kk > p->rank)
		return ge_k_fail(k, "index depth %" PRId64 " is over the params' "
				 "rank %d", kk, p->rank);
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = 0;
	if (ix->rank - 1 + p->rank - kk > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "the result's rank is over %d",
				 GE_SHAPE_MAXRANK);
	for (int i = 0; i < ix->rank - 1; i++)
		dims[r++] = ix->dims[i];
	for (int i = (int)kk; i < p->rank; i++)
		dims[r++] = p->dims[i];
	int64_t nidx, inner, total, ps[GE_SHAPE_MAXRANK];
	if (prod(ix->dims, 0, ix->rank - 1, &nidx) ||
	    prod(p->dims, (int)kk, p->rank, &inner) ||
	    (total = kcount(r, dims)) < 0)
		return ge_k_fail(k, "the result's size overflows");
	kstrides(p->rank, p->dims, ps);
	if (ge_k_work(k, (uint64_t)total + (uint64_t)ix->n))
		return GE_EINVAL;
	for (int64_t j = 0; j < nidx; j++)
		for (int64_t c = 0; c < kk; c++) {
			int64_t v = kld_i(ix, j * kk + c);
			if (v < 0 || v >= p->dims[c])
				return ge_k_fail(k, "index %" PRId64 " of entry %"
						 PRId64 " is not in [0, %" PRId64
						 ")", v, j, p->dims[c]);
		}
	if (nidx && inner && p->n == 0)
		return ge_k_fail(k, "gathers from empty params");
	ge_xt *o = ge_k_out(k, 0, p->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	for (int64_t j = 0; j < nidx && inner; j++) {
		int64_t src = 0;
		for (int64_t c = 0; c < kk; c++)
			src += kld_i(ix, j * kk + c) * ps[c];
		if (ge_kcopy_elems(o, j * inner, p, src, inner))
			return ge_k_fail(k, "out of memory");
	}
	return GE_OK;
}

static int k_one_hot(ge_kctx *k)
{
	int64_t depth;
	if (ge_k_need(k, 4) || ge_k_scalar_int(k, 1, &depth))
		return GE_EINVAL;
	const ge_xt *ix = k->in[0], *on = k->in[2], *off = k->in[3];
	if (!is_index(ix))
		return ge_k_fail(k, "indices must be integers, are %s",
				 kdt(ix->dtype));
	if (on->n != 1 || off->n != 1 || on->dtype != off->dtype)
		return ge_k_fail(k, "on_value and off_value must be scalars of "
				 "one dtype");
	if (depth < 0)
		return ge_k_fail(k, "depth %" PRId64 " is negative", depth);
	if (ix->rank >= GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "indices' rank is the most already");
	int64_t a = ge_k_attr_int(k, "axis", -1);
	if (a == -1)
		a = ix->rank;
	if (a < 0 || a > ix->rank)
		return ge_k_fail(k, "axis %" PRId64 " is out of range", a);
	int64_t dims[GE_SHAPE_MAXRANK];
	int r = 0;
	for (int i = 0; i <= ix->rank; i++) {
		if (i == a)
			dims[r++] = depth;
		if (i < ix->rank)
			dims[r++] = ix->dims[i];
	}
	int64_t total = kcount(r, dims);
	if (total < 0)
		return ge_k_fail(k, "the result's size overflows");
	if (ge_k_work(k, (uint64_t)total))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, on->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	int64_t outer = 1, inner = 1;
	for (int i = 0; i < a; i++)
		outer *= ix->dims[i];
	for (int i = (int)a; i < ix->rank; i++)
		inner *= ix->dims[i];
	for (int64_t p = 0; p < outer; p++)
		for (int64_t d = 0; d < depth; d++)
			for (int64_t q = 0; q < inner; q++) {
				int64_t v = kld_i(ix, p * inner + q);
				if (ge_kcopy_elem(o, (p * depth + d) * inner + q,
					       v == d ? on : off, 0))
					return ge_k_fail(k, "out of memory");
			}
	return GE_OK;
}

/* Where (one input): the coordinates of the true (non-zero) elements, in
 * row-major order, as int64 [count, rank]. */
static int k_where(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	if (k->nin > 1)
		return ge_k_fail(k, "Where of three inputs is Select");
	const ge_xt *x = k->in[0];
	if (ge_k_dtype_in(k, 0, KDT_NUMBERS | KDT(DT_BOOL)) ||
	    ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	int64_t cnt = 0;
	for (int64_t i = 0; i < x->n; i++)
		cnt += dt_is_float(x->dtype) ? ge_xt_get_double(x, i) != 0
					     : kld_i(x, i) != 0;
	int64_t dims[2] = {cnt, x->rank};
	ge_xt *o = ge_k_out(k, 0, DT_INT64, 2, dims);
	if (!o)
		return GE_EINVAL;
	int64_t idx[GE_SHAPE_MAXRANK] = {0}, *d = o->data;
	for (int64_t i = 0; i < x->n; i++) {
		int nz = dt_is_float(x->dtype) ? ge_xt_get_double(x, i) != 0
					       : kld_i(x, i) != 0;
		if (nz && x->rank) {
			memcpy(d, idx, sizeof(int64_t) * (size_t)x->rank);
			d += x->rank;
		}
		for (int j = x->rank - 1; j >= 0; j--) {
			if (++idx[j] < x->dims[j])
				break;
			idx[j] = 0;
		}
	}
	return GE_OK;
}

const ge_kdef ge_kernels_index[] = {
	{"GatherV2", k_gather, 0}, {"Gather", k_gather, 0},
	{"GatherNd", k_gather_nd, 0}, {"OneHot", k_one_hot, 0},
	{"Where", k_where, 0},
	{NULL, NULL, 0},
};
