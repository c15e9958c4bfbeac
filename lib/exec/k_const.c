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

const ge_kdef ge_kernels_const[] = {
	{"Const", k_const, 0},
	{NULL, NULL, 0},
};
