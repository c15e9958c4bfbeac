/*
 * exec/k_const.c: kernels that make tensors from attrs and shapes: Const,
 * Fill, ZerosLike, OnesLike, Range.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "exec/kernel_impl.h"
#include "exec/xconvert.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* Const: the value attr, which must agree with the dtype attr. */
static int k_const(ge_kctx *k)
{
	char what[256];
	const Tensorflow__AttrValue *a = ge_op_attr(k->g, k->id, "value", NULL);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !a->tensor)
		return ge_k_fail(k, "has no tensor value attr");
	int dt = ge_k_attr_type(k, "dtype", -1);
	int vdt = a->tensor->dtype;
	if (dt >= 0 && dt != vdt)
		return ge_k_fail(k, "its value is %s, its dtype attr %s",
				 kdt(vdt), kdt(dt));
	if (k->nout < 1)
		return ge_k_fail(k, "has no output");
	ge_xt *t;
	if (ge_xt_from_proto(a->tensor, k->budget,
			     ge_k_what(k, what, sizeof what), &t, k->err))
		return GE_EINVAL;
	if (ge_k_work(k, (uint64_t)t->n)) {
		ge_xt_unref(t);
		return GE_EINVAL;
	}
	ge_xt_unref(k->out[0]);
	k->out[0] = t;
	return GE_OK;
}

/* Fill: dims, value (a scalar). */
static int k_fill(ge_kctx *k)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *v = k->in[1];
	if (k->in[0]->rank != 1)
		return ge_k_fail(k, "dims must be a vector, has rank %d",
				 k->in[0]->rank);
	int r = ge_k_ints(k, 0, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return GE_EINVAL;
	if (v->rank != 0)
		return ge_k_fail(k, "value must be a scalar, has rank %d",
				 v->rank);
	for (int i = 0; i < r; i++)
		if (dims[i] < 0)
			return ge_k_fail(k, "dimension %d is %" PRId64, i,
					 dims[i]);
	int64_t n = kcount(r, dims);
	if (n < 0)
		return ge_k_fail(k, "the shape's size overflows");
	if (ge_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, v->dtype, r, dims);
	if (!o)
		return GE_EINVAL;
	for (int64_t i = 0; i < n; i++)
		if (ge_kcopy_elem(o, i, v, 0))
			return ge_k_fail(k, "out of memory");
	return GE_OK;
}

/* ZerosLike, OnesLike. */
static int k_like(ge_kctx *k)
{
	if (ge_k_need(k, 1))
		return GE_EINVAL;
	const ge_xt *x = k->in[0];
	int ones = !strcmp(k->type, "OnesLike");
	uint64_t ok = KDT_NUMBERS | KDT(DT_BOOL);
	if (!ones)
		ok |= KDT(DT_STRING) | KDT(DT_COMPLEX64) | KDT(DT_COMPLEX128);
	if (ge_k_dtype_in(k, 0, ok) || ge_k_work(k, (uint64_t)x->n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, x->dtype, x->rank, x->dims);
	if (!o || !ones)
		return o ? GE_OK : GE_EINVAL;
	for (int64_t i = 0; i < o->n; i++) {
		switch (o->dtype) {
		case DT_FLOAT: ((float *)o->data)[i] = 1; break;
		case DT_DOUBLE: ((double *)o->data)[i] = 1; break;
		case DT_HALF: ((uint16_t *)o->data)[i] = 0x3c00; break;
		case DT_BFLOAT16: ((uint16_t *)o->data)[i] = 0x3f80; break;
		default: kst_i(o, i, 1); break;
		}
	}
	return GE_OK;
}

/* Range: start, start + delta, ... short of limit, each value the one
 * before plus delta (as TensorFlow accumulates it). */
static int k_range(ge_kctx *k)
{
	if (ge_k_need(k, 3))
		return GE_EINVAL;
	int dt = k->in[0]->dtype;
	for (int i = 0; i < 3; i++) {
		if (k->in[i]->dtype != dt)
			return ge_k_fail(k, "inputs of different dtypes");
		if (k->in[i]->n != 1)
			return ge_k_fail(k, "input %d must be a scalar", i);
	}
	if (ge_k_dtype_in(k, 0, KDT(DT_INT32) | KDT(DT_INT64) | KDT(DT_FLOAT) |
		       KDT(DT_DOUBLE) | KDT(DT_INT16) | KDT(DT_INT8) |
		       KDT(DT_UINT16) | KDT(DT_UINT32)))
		return GE_EINVAL;
	int64_t n;
	if (dt_is_int(dt)) {
		int64_t s = kld_i(k->in[0], 0), l = kld_i(k->in[1], 0),
			d = kld_i(k->in[2], 0);
		if (d == 0)
			return ge_k_fail(k, "delta must not be 0");
		if ((d > 0 && s > l) || (d < 0 && s < l))
			return ge_k_fail(k, "start %" PRId64 " cannot reach "
					 "limit %" PRId64 " by %" PRId64, s, l, d);
		/* |l - s| and |d| fit a uint64 */
		uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s
				      : (uint64_t)s - (uint64_t)l;
		uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
		uint64_t un = span / step + (span % step != 0);
		if (un > (uint64_t)INT64_MAX)
			return ge_k_fail(k, "the range's size overflows");
		n = (int64_t)un;
	} else {
		double s = ge_xt_get_double(k->in[0], 0),
		       l = ge_xt_get_double(k->in[1], 0),
		       d = ge_xt_get_double(k->in[2], 0);
		if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
			return ge_k_fail(k, "start, limit and delta must be "
					 "finite and delta not 0");
		if ((d > 0 && s > l) || (d < 0 && s < l))
			return ge_k_fail(k, "start %g cannot reach limit %g by "
					 "%g", s, l, d);
		double c = ceil(fabs((l - s) / d));
		if (!(c < 9.0e18))
			return ge_k_fail(k, "the range's size overflows");
		n = (int64_t)c;
	}
	if (ge_k_work(k, (uint64_t)n))
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, dt, 1, &n);
	if (!o)
		return GE_EINVAL;
	if (dt == DT_FLOAT) {
		float v = ((const float *)k->in[0]->data)[0],
		      d = ((const float *)k->in[2]->data)[0];
		for (int64_t i = 0; i < n; i++, v += d)
			((float *)o->data)[i] = v;
	} else if (dt == DT_DOUBLE) {
		double v = ((const double *)k->in[0]->data)[0],
		       d = ((const double *)k->in[2]->data)[0];
		for (int64_t i = 0; i < n; i++, v += d)
			((double *)o->data)[i] = v;
	} else {
		uint64_t v = (uint64_t)kld_i(k->in[0], 0),
			 d = (uint64_t)kld_i(k->in[2], 0);
		for (int64_t i = 0; i < n; i++, v += d)
			kst_i(o, i, (int64_t)v);
	}
	return GE_OK;
}

const ge_kdef ge_kernels_const[] = {
	{"Const", k_const, 0}, {"Fill", k_fill, 0},
	{"ZerosLike", k_like, 0}, {"OnesLike", k_like, 0},
	{"Range", k_range, 0},
	{NULL, NULL, 0},
};
