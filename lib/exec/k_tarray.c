/*
 * exec/k_tarray.c: the TensorArray*V3 kernels, as TF1 while loops
 * (tf.nn.dynamic_rnn, tf.map_fn, tf.while_loop with TensorArrays) use
 * them.
 *
 * TensorArrayV3 makes an array object each time it runs and gives it as
 * a resource handle, with a float "flow" scalar that orders the ops on
 * the array in the graph (its value is 0 and means nothing).  The array
 * has reference semantics: writes change the object every holder of the
 * handle sees, as in TensorFlow.  Each index is written at most once; a
 * read of an array made with clear_after_read (the default) empties the
 * index, so a second read is an error as in TensorFlow; an index never
 * written reads as zeros when the element shape is fully known.  With
 * dynamic_size a write past the end grows the array.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kstate.h"

enum { UNWRITTEN, WRITTEN, CLEARED };

typedef struct karray {
	ge_xobj o;
	int dtype;
	kps shape;       /* the element shape as far as known */
	int dynamic, clear, identical, closed;
	int64_t n, cap;
	ge_xt **t;
	uint8_t *st;
	ge_xbudget *budget;
	uint64_t charged;
} karray;

static void array_destroy(ge_xobj *o)
{
	karray *a = (karray *)o;
	for (int64_t i = 0; i < a->n; i++)
		ge_xt_unref(a->t[i]);
	ge_xbudget_release(a->budget, a->charged);
	free(a->t);
	free(a->st);
	free(a);
}

static int array_room(ge_kctx *k, karray *a, int64_t cap)
{
	char what[256];
	if (cap <= a->cap)
		return GE_OK;
	if (cap > (int64_t)(SIZE_MAX / 4 / sizeof *a->t))
		return ge_k_fail(k, "an array of %" PRId64 " items is too "
				 "long", cap);
	int64_t ncap = a->cap * 2 > cap ? a->cap * 2 : cap;
	uint64_t more = (uint64_t)(ncap - a->cap) * (sizeof *a->t + 1);
	if (ge_xbudget_mem(a->budget, more, ge_k_what(k, what, sizeof what),
			   k->err)) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	ge_xt **nt = realloc(a->t, (size_t)ncap * sizeof *nt);
	if (nt)
		a->t = nt;
	uint8_t *ns = nt ? realloc(a->st, (size_t)ncap) : NULL;
	if (!ns) {
		ge_xbudget_release(a->budget, more);
		return ge_k_fail(k, "out of memory for an array of %" PRId64
				 " items", ncap);
	}
	a->st = ns;
	memset(a->t + a->cap, 0, (size_t)(ncap - a->cap) * sizeof *a->t);
	memset(a->st + a->cap, 0, (size_t)(ncap - a->cap));
	a->cap = ncap;
	a->charged += more;
	return GE_OK;
}

/* The array of input 0, open, its dtype checked against attr dtype. */
static karray *array_in(ge_kctx *k)
{
	karray *a = (karray *)ge_kst_obj(k, 0, DT_RESOURCE, GE_XOBJ_TARRAY,
				      "TensorArray");
	if (!a)
		return NULL;
	if (a->closed) {
		ge_k_fail(k, "the TensorArray was closed");
		return NULL;
	}
	int want = ge_k_attr_type(k, "dtype", a->dtype);
	if (want != a->dtype) {
		ge_k_fail(k, "the TensorArray holds %s, the op reads %s",
			  kdt(a->dtype), kdt(want));
		return NULL;
	}
	return a;
}

/* Whether value v may go at index i (growing a dynamic array). */
static int write_check(ge_kctx *k, karray *a, int64_t i, const ge_xt *v)
{
	char s1[96], s2[96];
	if (v->dtype != a->dtype)
		return ge_k_fail(k, "writes %s into a TensorArray of %s",
				 kdt(v->dtype), kdt(a->dtype));
	if (i < 0 || (i >= a->n && !a->dynamic) || i >= KST_MAX_ITEMS)
		return ge_k_fail(k, "index %" PRId64 " is out of range for a "
				 "TensorArray of %" PRId64, i, a->n);
	if (i < a->n && a->st[i] != UNWRITTEN)
		return ge_k_fail(k, "index %" PRId64 " was written already",
				 i);
	kps s, m = a->shape;
	ge_kps_of(v, 0, &s);
	if (ge_kps_merge(&m, &s))
		return ge_k_fail(k, "a value of shape %s does not fit the "
				 "element shape %s", ge_kps_str(&s, s1, sizeof s1),
				 ge_kps_str(&a->shape, s2, sizeof s2));
	return GE_OK;
}

/* Puts v (the reference is taken over) at index i. */
static int write_at(ge_kctx *k, karray *a, int64_t i, ge_xt *v)
{
	if (i >= a->n) {
		if (array_room(k, a, i + 1)) {
			ge_xt_unref(v);
			return GE_EINVAL;
		}
		a->n = i + 1;
	}
	a->t[i] = v;
	a->st[i] = WRITTEN;
	if (a->identical && !ge_kps_full(&a->shape))
		ge_kps_of(v, 0, &a->shape);
	return GE_OK;
}

/* Copies item i (or zeros) into out at element `at`; clears it after
 * when the array says so. */
static int read_into(ge_kctx *k, karray *a, int64_t i, ge_xt *out,
		     int64_t at, int64_t per)
{
	if (i < 0 || i >= a->n)
		return ge_k_fail(k, "index %" PRId64 " is out of range for a "
				 "TensorArray of %" PRId64, i, a->n);
	if (a->st[i] == CLEARED)
		return ge_k_fail(k, "index %" PRId64 " was read already and "
				 "cleared (clear_after_read)", i);
	if (a->st[i] == WRITTEN) {
		if (a->t[i]->n != per)
			return ge_k_fail(k, "index %" PRId64 " holds %" PRId64
					 " elements, not %" PRId64, i,
					 a->t[i]->n, per);
		if (ge_kst_copy(out, at, a->t[i], 0, per))
			return ge_k_fail(k, "out of memory");
	}
	return GE_OK;
}

static void clear_read(karray *a, int64_t i)
{
	if (a->clear && i >= 0 && i < a->n && a->st[i] == WRITTEN) {
		ge_xt_unref(a->t[i]);
		a->t[i] = NULL;
		a->st[i] = CLEARED;
	}
}

/* The element shape reads use: the array's, merged with attr, then
 * (when items) with the items written. */
static int elem_shape(ge_kctx *k, karray *a, const char *attr, int items,
		      kps *es)
{
	char s1[96];
	kps at;
	*es = a->shape;
	ge_kps_attr(k, attr, &at);
	if (ge_kps_merge(es, &at))
		return ge_k_fail(k, "element_shape %s does not match the "
				 "array's", ge_kps_str(&at, s1, sizeof s1));
	for (int64_t i = 0; items && i < a->n && !ge_kps_full(es); i++)
		if (a->st[i] == WRITTEN) {
			kps s;
			ge_kps_of(a->t[i], 0, &s);
			if (ge_kps_merge(es, &s))
				return ge_k_fail(k, "items of different "
						 "shapes");
		}
	if (!ge_kps_full(es))
		return ge_k_fail(k, "the element shape %s is not fully known "
				 "and nothing was written to say it",
				 ge_kps_str(es, s1, sizeof s1));
	return GE_OK;
}

/* ---------------------------------------------------------------- kernels */

/* TensorArrayV3(size) -> handle, flow. */
static int k_array(ge_kctx *k)
{
	int64_t n;
	if (ge_k_need(k, 1) || ge_k_scalar_int(k, 0, &n))
		return GE_EINVAL;
	if (n < 0)
		return ge_k_fail(k, "size %" PRId64 " is negative", n);
	int dt = ge_k_attr_type(k, "dtype", 0);
	if (!ge_xt_elem_size(dt))
		return ge_k_fail(k, "dtype %s is not one the runner holds",
				 kdt(dt));
	karray *a = calloc(1, sizeof *a);
	if (!a)
		return ge_k_fail(k, "out of memory");
	a->o.refs = 1;
	a->o.kind = GE_XOBJ_TARRAY;
	a->o.destroy = array_destroy;
	a->dtype = dt;
	ge_kps_attr(k, "element_shape", &a->shape);
	a->dynamic = ge_k_attr_bool(k, "dynamic_size", 0);
	a->clear = ge_k_attr_bool(k, "clear_after_read", 1);
	a->identical = ge_k_attr_bool(k, "identical_element_shapes", 0);
	a->budget = k->budget;
	if (array_room(k, a, n > 4 ? n : 4)) {
		free(a);
		return GE_EINVAL;
	}
	a->n = n;
	if (ge_kst_out_obj(k, 0, DT_RESOURCE, &a->o))
		return GE_EINVAL;
	return ge_k_out(k, 1, DT_FLOAT, 0, NULL) ? GE_OK : GE_EINVAL;
}

/* TensorArrayWriteV3(handle, index, value, flow_in) -> flow_out. */
static int k_write(ge_kctx *k)
{
	int64_t i;
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 4) || ge_k_scalar_int(k, 1, &i) ||
	    write_check(k, a, i, k->in[2]) ||
	    write_at(k, a, i, ge_xt_ref(k->in[2])))
		return GE_EINVAL;
	ge_k_forward(k, 0, 3);
	return GE_OK;
}

/* TensorArrayReadV3(handle, index, flow_in) -> value. */
static int k_read(ge_kctx *k)
{
	int64_t i;
	kps es;
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 3) || ge_k_scalar_int(k, 1, &i))
		return GE_EINVAL;
	if (i >= 0 && i < a->n && a->st[i] == WRITTEN) {
		ge_xt_unref(k->out[0]);
		k->out[0] = ge_xt_ref(a->t[i]);
		clear_read(a, i);
		return GE_OK;
	}
	if (i >= 0 && i < a->n && a->st[i] == UNWRITTEN) {
		if (elem_shape(k, a, "element_shape", 0, &es))
			return GE_EINVAL;
		return ge_k_out(k, 0, a->dtype, es.rank, es.dims) ? GE_OK
								   : GE_EINVAL;
	}
	return read_into(k, a, i, NULL, 0, 0);
}

/* The output [m] + element shape for a gather or a stack. */
static ge_xt *stacked(ge_kctx *k, karray *a, int64_t m, int64_t *per)
{
	kps es;
	if (elem_shape(k, a, "element_shape", 1, &es))
		return NULL;
	int64_t dims[GE_SHAPE_MAXRANK];
	if (es.rank + 1 > GE_SHAPE_MAXRANK ||
	    (*per = kcount(es.rank, es.dims)) < 0) {
		ge_k_fail(k, "items of rank %d are too deep or too large",
			  es.rank);
		return NULL;
	}
	dims[0] = m;
	for (int i = 0; i < es.rank; i++)
		dims[i + 1] = es.dims[i];
	ge_xt *out = ge_k_out(k, 0, a->dtype, es.rank + 1, dims);
	if (out && ge_k_work(k, (uint64_t)out->n))
		return NULL;
	return out;
}

/* TensorArrayGatherV3(handle, indices, flow_in) -> value. */
static int k_gather(ge_kctx *k)
{
	int64_t per;
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 3))
		return GE_EINVAL;
	const ge_xt *ix = k->in[1];
	if ((ix->dtype != DT_INT32 && ix->dtype != DT_INT64) || ix->rank != 1)
		return ge_k_fail(k, "indices must be an integer vector");
	ge_xt *out = stacked(k, a, ix->n, &per);
	if (!out)
		return GE_EINVAL;
	for (int64_t j = 0; j < ix->n; j++)
		if (read_into(k, a, ge_xt_get_int64(ix, j), out, j * per, per))
			return GE_EINVAL;
	for (int64_t j = 0; j < ix->n; j++)
		clear_read(a, ge_xt_get_int64(ix, j));
	return GE_OK;
}

/* TensorArrayScatterV3(handle, indices, value, flow_in) -> flow_out. */
static int k_scatter(ge_kctx *k)
{
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 4))
		return GE_EINVAL;
	const ge_xt *ix = k->in[1], *v = k->in[2];
	if ((ix->dtype != DT_INT32 && ix->dtype != DT_INT64) || ix->rank != 1)
		return ge_k_fail(k, "indices must be an integer vector");
	if (v->rank < 1 || v->dims[0] != ix->n)
		return ge_k_fail(k, "the value has %" PRId64 " rows for %"
				 PRId64 " indices", v->rank ? v->dims[0] : 0,
				 ix->n);
	int64_t dims[GE_SHAPE_MAXRANK];
	memcpy(dims, v->dims + 1, (size_t)(v->rank - 1) * sizeof *dims);
	int64_t per = ix->n ? v->n / ix->n : 0;
	ge_xt probe = *v;
	probe.rank = v->rank - 1;
	memcpy(probe.dims, dims, sizeof dims);
	for (int64_t j = 0; j < ix->n; j++) {
		int64_t i = ge_xt_get_int64(ix, j);
		for (int64_t q = 0; q < j; q++)
			if (ge_xt_get_int64(ix, q) == i)
				return ge_k_fail(k, "index %" PRId64 " is "
						 "scattered twice", i);
		if (write_check(k, a, i, &probe))
			return GE_EINVAL;
	}
	if (ge_k_work(k, (uint64_t)v->n))
		return GE_EINVAL;
	for (int64_t j = 0; j < ix->n; j++) {
		ge_xt *r = ge_xt_new(v->dtype, v->rank - 1, dims, k->budget,
				     k->name, k->err);
		if (!r)
			return GE_EINVAL;
		if (ge_kst_copy(r, 0, v, j * per, per)) {
			ge_xt_unref(r);
			return ge_k_fail(k, "out of memory");
		}
		if (write_at(k, a, ge_xt_get_int64(ix, j), r))
			return GE_EINVAL;
	}
	ge_k_forward(k, 0, 3);
	return GE_OK;
}

/* TensorArraySizeV3(handle, flow_in) -> int32. */
static int k_size(ge_kctx *k)
{
	karray *a = (karray *)ge_kst_obj(k, 0, DT_RESOURCE, GE_XOBJ_TARRAY,
				      "TensorArray");
	if (!a)
		return GE_EINVAL;
	ge_xt *t = ge_k_out(k, 0, DT_INT32, 0, NULL);
	if (!t)
		return GE_EINVAL;
	((int32_t *)t->data)[0] = (int32_t)a->n;
	return GE_OK;
}

/* TensorArrayCloseV3(handle). */
static int k_close(ge_kctx *k)
{
	karray *a = (karray *)ge_kst_obj(k, 0, DT_RESOURCE, GE_XOBJ_TARRAY,
				      "TensorArray");
	if (!a)
		return GE_EINVAL;
	for (int64_t i = 0; i < a->n; i++) {
		ge_xt_unref(a->t[i]);
		a->t[i] = NULL;
	}
	a->closed = 1;
	return GE_OK;
}

/* TensorArrayConcatV3(handle, flow_in) -> value, lengths. */
static int k_concat(ge_kctx *k)
{
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 2))
		return GE_EINVAL;
	kps tail;
	ge_kps_attr(k, "element_shape_except0", &tail);
	int64_t rows = 0;
	for (int64_t i = 0; i < a->n; i++) {
		if (a->st[i] != WRITTEN)
			return ge_k_fail(k, "index %" PRId64 " was not written "
					 "(or was read and cleared)", i);
		const ge_xt *t = a->t[i];
		if (t->rank < 1)
			return ge_k_fail(k, "concatenates scalars");
		kps s;
		ge_kps_of(t, 1, &s);
		if (ge_kps_merge(&tail, &s))
			return ge_k_fail(k, "item %" PRId64 " differs from the "
					 "others past its first dimension", i);
		rows += t->dims[0];
	}
	if (!ge_kps_full(&tail))
		return ge_k_fail(k, "concatenates an empty array of unknown "
				 "element shape");
	int64_t dims[GE_SHAPE_MAXRANK], nl = a->n;
	dims[0] = rows;
	memcpy(dims + 1, tail.dims, (size_t)tail.rank * sizeof *dims);
	ge_xt *out = ge_k_out(k, 0, a->dtype, tail.rank + 1, dims);
	ge_xt *lo = out ? ge_k_out(k, 1, DT_INT64, 1, &nl) : NULL;
	if (!lo || ge_k_work(k, (uint64_t)out->n))
		return GE_EINVAL;
	for (int64_t i = 0, at = 0; i < a->n; i++) {
		((int64_t *)lo->data)[i] = a->t[i]->dims[0];
		if (ge_kst_copy(out, at, a->t[i], 0, a->t[i]->n))
			return ge_k_fail(k, "out of memory");
		at += a->t[i]->n;
	}
	for (int64_t i = 0; i < a->n; i++)
		clear_read(a, i);
	return GE_OK;
}

/* TensorArraySplitV3(handle, value, lengths, flow_in) -> flow_out. */
static int k_split(ge_kctx *k)
{
	karray *a = array_in(k);
	if (!a || ge_k_need(k, 4))
		return GE_EINVAL;
	const ge_xt *v = k->in[1], *len = k->in[2];
	if (v->rank < 1 || len->rank != 1 || len->dtype != DT_INT64)
		return ge_k_fail(k, "needs a value of rank 1 or more and int64 "
				 "lengths");
	int64_t sum = 0, per = v->dims[0] ? v->n / v->dims[0] : 0;
	for (int64_t i = 0; i < len->n; i++) {
		int64_t l = ((const int64_t *)len->data)[i];
		if (l < 0 || l > v->dims[0] - sum)
			return ge_k_fail(k, "the lengths do not add up to the "
					 "value's %" PRId64 " rows",
					 v->dims[0]);
		sum += l;
	}
	if (sum != v->dims[0])
		return ge_k_fail(k, "the lengths add up to %" PRId64 ", the "
				 "value has %" PRId64 " rows", sum,
				 v->dims[0]);
	if (len->n > a->n && !a->dynamic)
		return ge_k_fail(k, "splits into %" PRId64 " items, the array "
				 "has %" PRId64, len->n, a->n);
	for (int64_t i = 0; i < len->n; i++)
		if (i < a->n && a->st[i] != UNWRITTEN)
			return ge_k_fail(k, "index %" PRId64 " was written "
					 "already", i);
	if (ge_k_work(k, (uint64_t)v->n))
		return GE_EINVAL;
	for (int64_t i = 0, at = 0; i < len->n; i++) {
		int64_t dims[GE_SHAPE_MAXRANK];
		memcpy(dims, v->dims, sizeof dims);
		dims[0] = ((const int64_t *)len->data)[i];
		ge_xt *r = ge_xt_new(v->dtype, v->rank, dims, k->budget,
				     k->name, k->err);
		if (!r)
			return GE_EINVAL;
		if (ge_kst_copy(r, 0, v, at, dims[0] * per)) {
			ge_xt_unref(r);
			return ge_k_fail(k, "out of memory");
		}
		if (write_at(k, a, i, r))
			return GE_EINVAL;
		at += dims[0] * per;
	}
	ge_k_forward(k, 0, 3);
	return GE_OK;
}

const ge_kdef ge_kernels_tarray[] = {
	{"TensorArrayCloseV3", k_close, GE_K_STATEFUL},
	{"TensorArrayConcatV3", k_concat, GE_K_STATEFUL},
	{"TensorArrayGatherV3", k_gather, GE_K_STATEFUL},
	{"TensorArrayReadV3", k_read, GE_K_STATEFUL},
	{"TensorArrayScatterV3", k_scatter, GE_K_STATEFUL | GE_K_FORWARD},
	{"TensorArraySizeV3", k_size, GE_K_STATEFUL},
	{"TensorArraySplitV3", k_split, GE_K_STATEFUL | GE_K_FORWARD},
	{"TensorArrayV3", k_array, GE_K_STATEFUL},
	{"TensorArrayWriteV3", k_write, GE_K_STATEFUL | GE_K_FORWARD},
	{NULL, NULL, 0},
};
