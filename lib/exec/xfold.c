/*
 * exec/xfold.c: the runner's kernels in front of the constant evaluator
 * (exec/xfold.h).
 *
 * A value (analyses/eval.h) holds floating elements as doubles that are
 * exactly their dtype's (the evaluator rounds every output to it) and
 * integer elements as int64; a runner tensor holds them in their own
 * storage.  The conversion each way is therefore exact, and the only
 * arithmetic is the kernel's.
 */
#include "exec/xfold.h"

#include <stdlib.h>

#include "base/tensor.h"
#include "exec/kernel_impl.h"

int ge_xfold_supported(const char *type)
{
	const ge_kdef *d = ge_kernel_find(type);
	return d && !(d->flags & GE_K_STATEFUL);
}

void ge_xfold_install(void)
{
	ge_eval_set_front(ge_xfold_run, ge_xfold_supported);
}

/* A runner tensor holding value v, charged to xb; NULL when v's dtype
 * is not one both hold, v has a shape but no elements (folding hands
 * Shape, Size and Rank an input known by its shape alone) or xb
 * refuses. */
static ge_xt *to_xt(const ge_value *v, ge_xbudget *xb, const char *what)
{
	ge_error err;
	if (!ge_eval_dtype_ok(v->dtype) || v->n < 0 ||
	    v->rank < 0 || v->rank > GE_SHAPE_MAXRANK ||
	    !(ge_eval_dtype_float(v->dtype) ? (const void *)v->d
					     : (const void *)v->i))
		return NULL;
	ge_xt *t = ge_xt_new_raw(v->dtype, v->rank, v->dims, xb, what, &err);
	if (!t)
		return NULL;
	void *p = t->data;
	/* one loop per dtype, the switch outside it */
#define FILL(T, x)                                                          \
	do {                                                                \
		T *q = p;                                                   \
		for (int64_t k = 0; k < v->n; k++)                          \
			q[k] = (x);                                         \
	} while (0)
	switch (v->dtype) {
	case DT_FLOAT: FILL(float, (float)v->d[k]); break;
	case DT_DOUBLE: FILL(double, v->d[k]); break;
	case DT_HALF: FILL(uint16_t, ge_half_from_double(v->d[k])); break;
	case DT_BFLOAT16: FILL(uint16_t, ge_bf16_from_double(v->d[k])); break;
	case DT_INT64: FILL(int64_t, v->i[k]); break;
	case DT_INT32: FILL(int32_t, (int32_t)v->i[k]); break;
	case DT_UINT32: FILL(uint32_t, (uint32_t)v->i[k]); break;
	case DT_INT16: FILL(int16_t, (int16_t)v->i[k]); break;
	case DT_UINT16: FILL(uint16_t, (uint16_t)v->i[k]); break;
	case DT_INT8: FILL(int8_t, (int8_t)v->i[k]); break;
	case DT_UINT8: case DT_QUINT8: FILL(uint8_t, (uint8_t)v->i[k]); break;
	case DT_BOOL: FILL(uint8_t, v->i[k] != 0); break;
	default:
		ge_xt_unref(t);
		return NULL;
	}
#undef FILL
	return t;
}

/* Tensor t's elements into value o, made with t's dtype and shape. */
static void to_value(const ge_xt *t, ge_value *o)
{
	ge_value_init(o, t->dtype, t->rank, t->dims);
	if (o->d) {
		if (t->dtype == DT_FLOAT)
			for (int64_t k = 0; k < t->n; k++)
				o->d[k] = ((const float *)t->data)[k];
		else
			for (int64_t k = 0; k < t->n; k++)
				o->d[k] = ge_xt_get_double(t, k);
	} else {
		for (int64_t k = 0; k < t->n; k++)
			o->i[k] = ge_xt_get_int64(t, k);
	}
}

/* Whether a tensor a kernel returned can become a value: a dtype the
 * evaluator holds and a shape within its element limit. */
static int value_fits(const ge_xt *t)
{
	return t && ge_eval_dtype_ok(t->dtype) &&
	       ge_shape_count(t->rank, t->dims) == t->n;
}

int ge_xfold_run(const ge_graph *g, ge_opid id, const ge_value *in, int nin,
		 ge_value *out, int nout, ge_eval_budget *b, ge_error *err)
{
	const char *type = ge_op_type(g, id);
	const ge_kdef *d = ge_kernel_find(type);
	ge_xt **xin, **xout;
	ge_error kerr;
	ge_xbudget xb = {0};
	int rc = GE_EVAL_DECLINE, nxin = 0;
	uint64_t bytes = 0;

	if (!d || (d->flags & GE_K_STATEFUL) || nin < 0 || nout < 0 ||
	    nout > GE_EVAL_MAX_OUTPUTS)
		return GE_EVAL_DECLINE;
	/* the kernel may use what the evaluator's budget has left */
	xb.mem_limit = b->max_live > b->live ? b->max_live - b->live : 0;
	xb.work_limit = b->max_work > b->work ? b->max_work - b->work : 0;
	xin = ge_xcalloc((size_t)(nin ? nin : 1), sizeof *xin);
	xout = ge_xcalloc((size_t)(nout ? nout : 1), sizeof *xout);
	for (; nxin < nin; nxin++)
		if (!(xin[nxin] = to_xt(&in[nxin], &xb, ge_op_name(g, id))))
			goto done;
	ge_kctx k = {g, id, type, ge_op_name(g, id), xin, nin, xout, nout,
		     &xb, NULL, &kerr};
	if (d->fn(&k) == GE_OK) {
		int fits = 1;
		for (int i = 0; i < nout && fits; i++)
			if (!value_fits(xout[i]))
				fits = 0;
			else
				bytes += (uint64_t)(xout[i]->n > 0 ?
						    xout[i]->n : 1) * 8;
		/* the values are charged as the evaluator charges its own;
		 * over its budget, the evaluator gives the error */
		if (fits && ge_eval_budget_take(b, bytes) == 0) {
			for (int i = 0; i < nout; i++)
				to_value(xout[i], &out[i]);
			b->work += xb.work_used;
			rc = GE_OK;
		}
	}
done:
	for (int i = 0; i < nout; i++)
		ge_xt_unref(xout[i]);
	for (int i = 0; i < nxin; i++)
		ge_xt_unref(xin[i]);
	free(xout);
	free(xin);
	(void)err; /* a refusal is the evaluator's to explain */
	return rc;
}
