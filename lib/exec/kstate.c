/* exec/kstate.c: partial shapes, element copies and object inputs for the
 * stateful kernels (kstate.h). */
#include "exec/kstate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

void ge_kps_of(const ge_xt *t, int skip, kps *out)
{
	out->rank = t->rank - skip;
	for (int i = skip; i < t->rank; i++)
		out->dims[i - skip] = t->dims[i];
}

int ge_kps_input(ge_kctx *k, int i, kps *out)
{
	if (ge_k_need(k, i + 1))
		return GE_EINVAL;
	const ge_xt *t = k->in[i];
	if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
		return ge_k_fail(k, "input %d (a shape) must be int32 or "
				 "int64, is %s", i, kdt(t->dtype));
	if (t->rank == 0) {
		if (ge_xt_get_int64(t, 0) != -1)
			return ge_k_fail(k, "input %d: a scalar shape must be "
					 "-1 (unknown rank)", i);
		out->rank = -1;
		return GE_OK;
	}
	if (t->rank != 1 || t->n > GE_SHAPE_MAXRANK)
		return ge_k_fail(k, "input %d (a shape) must be a vector of "
				 "at most %d dims", i, GE_SHAPE_MAXRANK);
	out->rank = (int)t->n;
	for (int64_t j = 0; j < t->n; j++) {
		int64_t d = ge_xt_get_int64(t, j);
		if (d < -1)
			return ge_k_fail(k, "input %d: dimension %" PRId64
					 " is %" PRId64, i, j, d);
		out->dims[j] = d;
	}
	return GE_OK;
}

void ge_kps_attr(ge_kctx *k, const char *name, kps *out)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	out->rank = -1;
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    !v->shape || v->shape->unknown_rank ||
	    v->shape->n_dim > GE_SHAPE_MAXRANK)
		return;
	out->rank = (int)v->shape->n_dim;
	for (size_t i = 0; i < v->shape->n_dim; i++)
		out->dims[i] = v->shape->dim[i]->size < 0
				       ? -1 : v->shape->dim[i]->size;
}

int ge_kps_merge(kps *a, const kps *b)
{
	if (b->rank < 0)
		return GE_OK;
	if (a->rank < 0) {
		*a = *b;
		return GE_OK;
	}
	if (a->rank != b->rank)
		return -1;
	for (int i = 0; i < a->rank; i++) {
		if (b->dims[i] < 0)
			continue;
		if (a->dims[i] >= 0 && a->dims[i] != b->dims[i])
			return -1;
		a->dims[i] = b->dims[i];
	}
	return GE_OK;
}

int ge_kps_full(const kps *a)
{
	if (a->rank < 0)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] < 0)
			return 0;
	return 1;
}

const char *ge_kps_str(const kps *a, char *buf, size_t cap)
{
	size_t len = 0;
	if (a->rank < 0) {
		snprintf(buf, cap, "<unknown>");
		return buf;
	}
	len += (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < a->rank && len < cap; i++) {
		if (a->dims[i] < 0)
			len += (size_t)snprintf(buf + len, cap - len, "%s?",
						i ? "," : "");
		else
			len += (size_t)snprintf(buf + len, cap - len,
						"%s%" PRId64, i ? "," : "",
						a->dims[i]);
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

int ge_kst_copy(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s, int64_t n)
{
	if (n <= 0)
		return GE_OK;
	if (src->dtype == DT_STRING) {
		const ge_xstr *a = (const ge_xstr *)src->data + s;
		ge_xstr *b = (ge_xstr *)dst->data + d;
		for (int64_t j = 0; j < n; j++) {
			char *p = NULL;
			if (a[j].len) {
				p = malloc(a[j].len + 1);
				if (!p)
					return GE_EINVAL;
				memcpy(p, a[j].p, a[j].len);
				p[a[j].len] = 0;
			}
			free(b[j].p);
			b[j].p = p;
			b[j].len = a[j].len;
		}
		return GE_OK;
	}
	if (src->dtype == DT_RESOURCE || src->dtype == DT_VARIANT) {
		ge_xobj *const *a = (ge_xobj *const *)src->data + s;
		ge_xobj **b = (ge_xobj **)dst->data + d;
		for (int64_t j = 0; j < n; j++) {
			ge_xobj *o = ge_xobj_ref(a[j]);
			ge_xobj_unref(b[j]);
			b[j] = o;
		}
		return GE_OK;
	}
	size_t es = ge_xt_elem_size(src->dtype);
	memcpy((char *)dst->data + (size_t)d * es,
	       (const char *)src->data + (size_t)s * es, (size_t)n * es);
	return GE_OK;
}

ge_xobj *ge_kst_obj(ge_kctx *k, int i, int dtype, int kind, const char *what)
{
	if (ge_k_need(k, i + 1))
		return NULL;
	const ge_xt *t = k->in[i];
	if (t->dtype != dtype || t->n != 1) {
		ge_k_fail(k, "input %d must be a %s scalar (%s), is %s[%" PRId64
			  " elements]", i, kdt(dtype), what, kdt(t->dtype),
			  t->n);
		return NULL;
	}
	ge_xobj *o = ((ge_xobj *const *)t->data)[0];
	if (!o || o->kind != kind) {
		ge_k_fail(k, "input %d does not hold a %s", i, what);
		return NULL;
	}
	return o;
}

int ge_kst_out_obj(ge_kctx *k, int i, int dtype, ge_xobj *o)
{
	ge_xt *t = ge_k_out(k, i, dtype, 0, NULL);
	if (!t) {
		ge_xobj_unref(o);
		return GE_EINVAL;
	}
	((ge_xobj **)t->data)[0] = o;
	return GE_OK;
}
