/* exec/xconvert.c: runner tensors to and from TensorProto. */
#include "exec/xconvert.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel_impl.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* The shape of p into dims; GE_OK or a message. */
static int proto_shape(const Tensorflow__TensorProto *p, int *rank,
		       int64_t *dims, const char *w, ge_error *err)
{
	const Tensorflow__TensorShapeProto *s = p->tensor_shape;
	*rank = 0;
	if (!s)
		return GE_OK;
	if (s->unknown_rank)
		return ge_err(err, GE_EFORMAT, "%s: the tensor's rank is "
			      "unknown", w);
	if (s->n_dim > GE_SHAPE_MAXRANK)
		return ge_err(err, GE_EFORMAT, "%s: the tensor's rank %zu is "
			      "over %d", w, s->n_dim, GE_SHAPE_MAXRANK);
	for (size_t i = 0; i < s->n_dim; i++) {
		if (!s->dim[i] || s->dim[i]->size < 0)
			return ge_err(err, GE_EFORMAT, "%s: dimension %zu of "
				      "the tensor is unknown", w, i);
		dims[i] = s->dim[i]->size;
	}
	*rank = (int)s->n_dim;
	return GE_OK;
}

/* The typed field of p: its items, and element j of it stored into t at
 * k (j < items). */
static size_t typed_count(const Tensorflow__TensorProto *p, int dt)
{
	switch (dt) {
	case DT_FLOAT: return p->n_float_val;
	case DT_DOUBLE: return p->n_double_val;
	case DT_HALF: case DT_BFLOAT16: return p->n_half_val;
	case DT_INT64: return p->n_int64_val;
	case DT_UINT32: return p->n_uint32_val;
	case DT_UINT64: return p->n_uint64_val;
	case DT_BOOL: return p->n_bool_val;
	case DT_STRING: return p->n_string_val;
	case DT_COMPLEX64: return p->n_scomplex_val / 2;
	case DT_COMPLEX128: return p->n_dcomplex_val / 2;
	default: return p->n_int_val;
	}
}

static int typed_store(const Tensorflow__TensorProto *p, size_t j, ge_xt *t,
		       int64_t k)
{
	void *d = t->data;
	switch (t->dtype) {
	case DT_FLOAT: ((float *)d)[k] = p->float_val[j]; break;
	case DT_DOUBLE: ((double *)d)[k] = p->double_val[j]; break;
	case DT_HALF: case DT_BFLOAT16:
		((uint16_t *)d)[k] = (uint16_t)p->half_val[j];
		break;
	case DT_INT64: ((int64_t *)d)[k] = p->int64_val[j]; break;
	case DT_UINT32: ((uint32_t *)d)[k] = p->uint32_val[j]; break;
	case DT_UINT64: ((uint64_t *)d)[k] = p->uint64_val[j]; break;
	case DT_BOOL: ((uint8_t *)d)[k] = p->bool_val[j] != 0; break;
	case DT_COMPLEX64:
		((float *)d)[2 * k] = p->scomplex_val[2 * j];
		((float *)d)[2 * k + 1] = p->scomplex_val[2 * j + 1];
		break;
	case DT_COMPLEX128:
		((double *)d)[2 * k] = p->dcomplex_val[2 * j];
		((double *)d)[2 * k + 1] = p->dcomplex_val[2 * j + 1];
		break;
	case DT_STRING: {
		ge_xstr *s = &((ge_xstr *)d)[k];
		size_t len = p->string_val[j].len;
		if (!len)
			break;
		s->p = malloc(len + 1);
		if (!s->p)
			return GE_EINVAL;
		memcpy(s->p, p->string_val[j].data, len);
		s->p[len] = 0;
		s->len = len;
		break;
	}
	case DT_INT32: case DT_QINT32:
		((int32_t *)d)[k] = p->int_val[j];
		break;
	case DT_INT16: case DT_QINT16:
		((int16_t *)d)[k] = (int16_t)p->int_val[j];
		break;
	case DT_UINT16: case DT_QUINT16:
		((uint16_t *)d)[k] = (uint16_t)p->int_val[j];
		break;
	case DT_INT8: case DT_QINT8:
		((int8_t *)d)[k] = (int8_t)p->int_val[j];
		break;
	default: /* uint8, quint8 */
		((uint8_t *)d)[k] = (uint8_t)p->int_val[j];
		break;
	}
	return GE_OK;
}

int ge_xt_from_proto(const Tensorflow__TensorProto *p, ge_xbudget *b,
		     const char *what, ge_xt **out, ge_error *err)
{
	const char *w = what ? what : "tensor";
	int rank, dt = p->dtype;
	int64_t dims[GE_SHAPE_MAXRANK];
	*out = NULL;
	if (dt > 100)
		dt -= 100; /* a _ref dtype holds its base's values */
	size_t es = ge_xt_elem_size(dt);
	if (!es || dt == DT_RESOURCE || dt == DT_VARIANT)
		return ge_err(err, GE_EINVAL, "%s: a tensor of dtype %s cannot "
			      "be read", w, kdt(dt));
	if (proto_shape(p, &rank, dims, w, err))
		return err ? err->code : GE_EFORMAT;
	/* content of the wrong size is refused before anything is made */
	const ProtobufCBinaryData *c = &p->tensor_content;
	int64_t n = kcount(rank, dims);
	if (c->len && dt != DT_STRING &&
	    (n < 0 || (uint64_t)n > SIZE_MAX / es || c->len != (size_t)n * es))
		return ge_err(err, GE_EFORMAT, "%s: tensor_content holds %zu "
			      "bytes, the shape needs %" PRId64 " elements of "
			      "%zu", w, c->len, n, es);
	ge_xt *t = ge_xt_new(dt, rank, dims, b, w, err);
	if (!t)
		return GE_EINVAL;
	if (c->len && dt != DT_STRING) {
		memcpy(t->data, c->data, c->len);
		if (dt == DT_BOOL)
			for (int64_t k = 0; k < t->n; k++)
				((uint8_t *)t->data)[k] =
					((uint8_t *)t->data)[k] != 0;
		*out = t;
		return GE_OK;
	}
	size_t items = typed_count(p, dt);
	for (int64_t k = 0; items && k < t->n; k++) {
		size_t j = (uint64_t)k < items ? (size_t)k : items - 1;
		if (typed_store(p, j, t, k)) {
			ge_xt_unref(t);
			return ge_err(err, GE_EINVAL, "%s: out of memory", w);
		}
	}
	*out = t;
	return GE_OK;
}

/* Whether every element of t equals the first (bytewise). */
static int all_same(const ge_xt *t, size_t es)
{
	if (t->n < 2)
		return 0;
	if (t->dtype == DT_STRING) {
		const ge_xstr *s = t->data;
		for (int64_t k = 1; k < t->n; k++)
			if (s[k].len != s[0].len ||
			    (s[0].len && memcmp(s[k].p, s[0].p, s[0].len)))
				return 0;
		return 1;
	}
	const uint8_t *d = t->data;
	for (int64_t k = 1; k < t->n; k++)
		if (memcmp(d + (size_t)k * es, d, es))
			return 0;
	return 1;
}

static void put_elem(ge_tenc *e, const ge_xt *t, int64_t k)
{
	const void *d = t->data;
	switch (t->dtype) {
	case DT_FLOAT: ge_tenc_double(e, ((const float *)d)[k], 0); break;
	case DT_DOUBLE: ge_tenc_double(e, ((const double *)d)[k], 0); break;
	case DT_HALF:
		ge_tenc_double(e, ge_half_to_float(((const uint16_t *)d)[k]), 0);
		break;
	case DT_BFLOAT16:
		ge_tenc_double(e, ge_bf16_to_float(((const uint16_t *)d)[k]), 0);
		break;
	case DT_COMPLEX64:
		ge_tenc_double(e, ((const float *)d)[2 * k],
			       ((const float *)d)[2 * k + 1]);
		break;
	case DT_COMPLEX128:
		ge_tenc_double(e, ((const double *)d)[2 * k],
			       ((const double *)d)[2 * k + 1]);
		break;
	case DT_BOOL: ge_tenc_bool(e, ((const uint8_t *)d)[k] != 0); break;
	case DT_STRING: {
		const ge_xstr *s = &((const ge_xstr *)d)[k];
		ge_tenc_string(e, s->len ? s->p : "", s->len);
		break;
	}
	default:
		ge_tenc_int(e, ge_xt_get_int64(t, k));
		break;
	}
}

int ge_xt_to_proto(const ge_xt *t, ge_buf *out, ge_error *err)
{
	if (t->dtype == DT_RESOURCE || t->dtype == DT_VARIANT ||
	    !ge_dtype_info(t->dtype) || !ge_xt_elem_size(t->dtype))
		return ge_err(err, GE_EINVAL, "a tensor of dtype %s has no "
			      "TensorProto value", kdt(t->dtype));
	size_t es = ge_xt_elem_size(t->dtype);
	int64_t nv = all_same(t, es) ? 1 : t->n;
	ge_tenc e;
	ge_tenc_begin(&e, out, t->dtype, t->rank, t->dims, nv);
	for (int64_t k = 0; k < nv; k++)
		put_elem(&e, t, k);
	ge_tenc_end(&e);
	return GE_OK;
}
