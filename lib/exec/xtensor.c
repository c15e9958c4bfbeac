/* exec/xtensor.c: the runner's tensors and their budget. */
#include "exec/xtensor.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/tensor.h"

/* ---------------------------------------------------------------- budget */

void ge_xbudget_init(ge_xbudget *b)
{
	memset(b, 0, sizeof *b);
	b->mem_limit = ge_max_memory();
	b->work_limit = ge_max_work();
}

int ge_xbudget_mem(ge_xbudget *b, uint64_t bytes, const char *what,
		   ge_error *err)
{
	char need[32], lim[32];
	if (!b)
		return GE_OK;
	if (bytes > b->mem_limit || b->mem_live > b->mem_limit - bytes)
		return ge_err(err, GE_EINVAL,
			      "%s: needs %s more, over the memory budget of %s "
			      "(--max-memory, GEREWRITE_MAX_MEMORY)",
			      what ? what : "tensor",
			      ge_format_size(bytes, need, sizeof need),
			      ge_format_size(b->mem_limit, lim, sizeof lim));
	b->mem_live += bytes;
	if (b->mem_live > b->mem_peak)
		b->mem_peak = b->mem_live;
	return GE_OK;
}

void ge_xbudget_release(ge_xbudget *b, uint64_t bytes)
{
	if (b)
		b->mem_live = bytes > b->mem_live ? 0 : b->mem_live - bytes;
}

int ge_xbudget_work(ge_xbudget *b, uint64_t units, const char *what,
		    ge_error *err)
{
	if (!b)
		return GE_OK;
	if (units > b->work_limit || b->work_used > b->work_limit - units)
		return ge_err(err, GE_EINVAL,
			      "%s: needs %" PRIu64 " units of work, over the "
			      "work budget of %" PRIu64 " (--max-work, "
			      "GEREWRITE_MAX_WORK)",
			      what ? what : "op", units, b->work_limit);
	b->work_used += units;
	return GE_OK;
}

/* ---------------------------------------------------------------- objects */

ge_xobj *ge_xobj_ref(ge_xobj *o)
{
	if (o)
		o->refs++;
	return o;
}

void ge_xobj_unref(ge_xobj *o)
{
	if (o && --o->refs == 0 && o->destroy)
		o->destroy(o);
}

/* ---------------------------------------------------------------- tensors */

enum {
	DT_FLOAT = 1, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8,
	DT_STRING, DT_COMPLEX64, DT_INT64, DT_BOOL, DT_QINT8, DT_QUINT8,
	DT_QINT32, DT_BFLOAT16, DT_QINT16, DT_QUINT16, DT_UINT16,
	DT_COMPLEX128, DT_HALF, DT_RESOURCE, DT_VARIANT, DT_UINT32, DT_UINT64
};

size_t ge_xt_elem_size(int dtype)
{
	switch (dtype) {
	case DT_FLOAT: case DT_INT32: case DT_UINT32: case DT_QINT32:
		return 4;
	case DT_DOUBLE: case DT_INT64: case DT_UINT64: case DT_COMPLEX64:
		return 8;
	case DT_COMPLEX128:
		return 16;
	case DT_UINT8: case DT_INT8: case DT_BOOL: case DT_QINT8:
	case DT_QUINT8:
		return 1;
	case DT_INT16: case DT_UINT16: case DT_BFLOAT16: case DT_HALF:
	case DT_QINT16: case DT_QUINT16:
		return 2;
	case DT_STRING:
		return sizeof(ge_xstr);
	case DT_RESOURCE: case DT_VARIANT:
		return sizeof(ge_xobj *);
	default:
		return 0;
	}
}

static int objects(int dtype)
{
	return dtype == DT_RESOURCE || dtype == DT_VARIANT;
}

/* The element count of a shape into *n: 0; -1 when dim *at is negative;
 * -2 when the dims other than 0 multiply past int64.  The latter holds
 * even where a 0 makes the tensor empty ({2^40, 0, 2^40}), so that a
 * kernel's product of any of the dims (the outer or inner extent of an
 * axis) fits. */
static int xt_count(int rank, const int64_t *dims, int64_t *n, int *at)
{
	int64_t c = 1, nz = 1;
	for (int i = 0; i < rank; i++) {
		*at = i;
		if (dims[i] < 0)
			return -1;
		if (dims[i] && nz > INT64_MAX / dims[i])
			return -2;
		if (dims[i])
			nz *= dims[i];
		c *= dims[i];
	}
	*n = c;
	return 0;
}

/* ------------------------------------------------------------- storage */

/* A tensor's numbers come from malloc, 64-byte aligned by hand: the
 * block's address is kept in the XT_HEAD bytes before the aligned data.
 * aligned_alloc asks glibc's heap for more than the size (room to align)
 * each time, so that a block freed by the tensor before is too small for
 * the next one of the same size: a chain of large activations grew the
 * heap by one activation per op (40 chained adds of 8 MB tensors peaked
 * at 202 MB and took 0.87 s, most of it page faults on fresh heap).  A
 * request of the same size each time lets the heap give back the block
 * just freed.  The sanitizer build keeps aligned_alloc, whose block ends
 * where the storage does, so that AddressSanitizer sees its bounds.  The
 * kernels' scratch comes from here too (ge_knn_scratch). */
enum { XT_ALIGN = 64, XT_HEAD = 16 };

void *ge_xt_storage(size_t cap, int zero)
{
#ifdef GE_ASAN
	void *data = aligned_alloc(XT_ALIGN, cap);
#else
	if (cap > SIZE_MAX - XT_HEAD - XT_ALIGN)
		return NULL;
	char *block = malloc(cap + XT_HEAD + XT_ALIGN - 1);
	if (!block)
		return NULL;
	void *data = (void *)(((uintptr_t)block + XT_HEAD + XT_ALIGN - 1) &
			      ~(uintptr_t)(XT_ALIGN - 1));
	memcpy((char *)data - sizeof block, &block, sizeof block);
#endif
	if (data && zero)
		memset(data, 0, cap);
	return data;
}

void ge_xt_storage_free(void *data)
{
	if (!data)
		return;
#ifdef GE_ASAN
	free(data);
#else
	void *block;
	memcpy(&block, (char *)data - sizeof block, sizeof block);
	free(block);
#endif
}

/* ge_xt_new, its numbers zeroed only when zero is set. */
static ge_xt *xt_new(int dtype, int rank, const int64_t *dims, ge_xbudget *b,
		     const char *what, ge_error *err, int zero)
{
	size_t es = ge_xt_elem_size(dtype);
	const char *w = what ? what : "tensor";
	if (!es) {
		ge_err(err, GE_EINVAL, "%s: dtype %s is not one the runner holds",
		       w, ge_dtype_name(dtype) ? ge_dtype_name(dtype) : "?");
		return NULL;
	}
	if (rank < 0 || rank > GE_SHAPE_MAXRANK) {
		ge_err(err, GE_EINVAL, "%s: rank %d is over %d", w, rank,
		       GE_SHAPE_MAXRANK);
		return NULL;
	}
	int64_t n;
	int at;
	switch (xt_count(rank, dims, &n, &at)) {
	case -1:
		ge_err(err, GE_EINVAL, "%s: dimension %d is negative "
		       "(%" PRId64 ")", w, at, dims[at]);
		return NULL;
	case -2:
		ge_err(err, GE_EINVAL, "%s: the element count overflows", w);
		return NULL;
	}
	if ((uint64_t)n > (SIZE_MAX - sizeof(ge_xt) - 64) / es) {
		ge_err(err, GE_EINVAL, "%s: the tensor's size overflows", w);
		return NULL;
	}
	size_t bytes = (size_t)n * es;
	size_t charged = bytes + sizeof(ge_xt);
	if (ge_xbudget_mem(b, charged, w, err))
		return NULL;
	ge_xt *t = calloc(1, sizeof *t);
	void *data = NULL;
	size_t cap = 0;
	if (t && bytes) {
		cap = (bytes + XT_ALIGN - 1) & ~(size_t)(XT_ALIGN - 1);
		data = ge_xt_storage(cap, zero || dtype == DT_STRING ||
					     objects(dtype));
	}
	if (!t || (bytes && !data)) {
		free(t);
		ge_xt_storage_free(data);
		ge_xbudget_release(b, charged);
		ge_err(err, GE_EINVAL, "%s: out of memory for %zu bytes", w,
		       bytes);
		return NULL;
	}
	t->refs = 1;
	t->dtype = dtype;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->n = n;
	t->nbytes = charged;
	t->data = data;
	t->budget = b;
	return t;
}

ge_xt *ge_xt_new(int dtype, int rank, const int64_t *dims, ge_xbudget *b,
		 const char *what, ge_error *err)
{
	return xt_new(dtype, rank, dims, b, what, err, 1);
}

ge_xt *ge_xt_new_raw(int dtype, int rank, const int64_t *dims,
		     ge_xbudget *b, const char *what, ge_error *err)
{
	return xt_new(dtype, rank, dims, b, what, err, 0);
}

ge_xt *ge_xt_scalar(int dtype, ge_xbudget *b, const char *what,
		    ge_error *err)
{
	return ge_xt_new(dtype, 0, NULL, b, what, err);
}

ge_xt *ge_xt_ref(ge_xt *t)
{
	if (t)
		t->refs++;
	return t;
}

void ge_xt_unref(ge_xt *t)
{
	if (!t || --t->refs > 0)
		return;
	if (t->dtype == DT_STRING) {
		ge_xstr *s = t->data;
		for (int64_t k = 0; k < t->n; k++)
			free(s[k].p);
	} else if (objects(t->dtype)) {
		ge_xobj **o = t->data;
		for (int64_t k = 0; k < t->n; k++)
			ge_xobj_unref(o[k]);
	}
	ge_xbudget_release(t->budget, t->nbytes);
	ge_xt_storage_free(t->data);
	free(t);
}

ge_xt *ge_xt_copy(const ge_xt *t, const char *what, ge_error *err)
{
	ge_xt *c = ge_xt_new(t->dtype, t->rank, t->dims, t->budget, what, err);
	if (!c)
		return NULL;
	if (t->dtype == DT_STRING) {
		const ge_xstr *s = t->data;
		ge_xstr *d = c->data;
		for (int64_t k = 0; k < t->n; k++) {
			if (!s[k].len)
				continue;
			d[k].p = malloc(s[k].len + 1);
			if (!d[k].p) {
				ge_xt_unref(c);
				ge_err(err, GE_EINVAL, "%s: out of memory",
				       what ? what : "tensor");
				return NULL;
			}
			memcpy(d[k].p, s[k].p, s[k].len);
			d[k].p[s[k].len] = 0;
			d[k].len = s[k].len;
		}
	} else if (objects(t->dtype)) {
		ge_xobj *const *s = t->data;
		ge_xobj **d = c->data;
		for (int64_t k = 0; k < t->n; k++)
			d[k] = ge_xobj_ref(s[k]);
	} else if (t->n) {
		memcpy(c->data, t->data, (size_t)t->n * ge_xt_elem_size(t->dtype));
	}
	return c;
}

ge_xt *ge_xt_reshape(ge_xt *t, int rank, const int64_t *dims,
		     const char *what, ge_error *err)
{
	int64_t n;
	int at;
	if (rank < 0 || rank > GE_SHAPE_MAXRANK) {
		ge_err(err, GE_EINVAL, "%s: rank %d is over %d",
		       what ? what : "tensor", rank, GE_SHAPE_MAXRANK);
		return NULL;
	}
	if (xt_count(rank, dims, &n, &at)) {
		ge_err(err, GE_EINVAL, "%s: bad shape for a reshape",
		       what ? what : "tensor");
		return NULL;
	}
	if (n != t->n) {
		ge_err(err, GE_EINVAL, "%s: cannot reshape %" PRId64
		       " elements into %" PRId64, what ? what : "tensor",
		       t->n, n);
		return NULL;
	}
	ge_xt *r = ge_xt_unique(t) ? ge_xt_ref(t) : ge_xt_copy(t, what, err);
	if (!r)
		return NULL;
	r->rank = rank;
	for (int i = 0; i < rank; i++)
		r->dims[i] = dims[i];
	return r;
}

const char *ge_xt_describe(const ge_xt *t, char *buf, size_t cap)
{
	const char *name = ge_dtype_name(t->dtype);
	size_t len = (size_t)snprintf(buf, cap, "%s[", name ? name : "?");
	for (int i = 0; i < t->rank && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64,
					i ? "," : "", t->dims[i]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

double ge_xt_get_double(const ge_xt *t, int64_t k)
{
	const void *p = t->data;
	switch (t->dtype) {
	case DT_FLOAT: return ((const float *)p)[k];
	case DT_DOUBLE: return ((const double *)p)[k];
	case DT_HALF: return ge_half_to_float(((const uint16_t *)p)[k]);
	case DT_BFLOAT16: return ge_bf16_to_float(((const uint16_t *)p)[k]);
	case DT_UINT64: return (double)((const uint64_t *)p)[k];
	default: return (double)ge_xt_get_int64(t, k);
	}
}

int64_t ge_xt_get_int64(const ge_xt *t, int64_t k)
{
	const void *p = t->data;
	switch (t->dtype) {
	case DT_INT32: case DT_QINT32: return ((const int32_t *)p)[k];
	case DT_INT64: return ((const int64_t *)p)[k];
	case DT_UINT64: return (int64_t)((const uint64_t *)p)[k];
	case DT_UINT32: return ((const uint32_t *)p)[k];
	case DT_INT16: case DT_QINT16: return ((const int16_t *)p)[k];
	case DT_UINT16: case DT_QUINT16: return ((const uint16_t *)p)[k];
	case DT_INT8: case DT_QINT8: return ((const int8_t *)p)[k];
	case DT_UINT8: case DT_QUINT8: case DT_BOOL:
		return ((const uint8_t *)p)[k];
	case DT_FLOAT: case DT_DOUBLE: case DT_HALF: case DT_BFLOAT16:
		return (int64_t)ge_xt_get_double(t, k);
	default: return 0;
	}
}
