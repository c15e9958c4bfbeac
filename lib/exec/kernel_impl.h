/*
 * exec/kernel_impl.h: what the files of kernels share (exec/kernel.c,
 * exec/xconvert.c, exec/k_const.c, exec/k_math.c, exec/k_binary.c,
 * exec/k_reduce.c, exec/k_shape.c, exec/k_array.c, exec/k_index.c,
 * exec/k_misc.c; the heavy kernels through exec/k_nn_impl.h; the
 * stateful ones through exec/kstate.h; exec/k_quant.c, exec/xfold.c):
 * DataType numbers, dtype classes, row-major strides and the
 * broadcasting of two shapes.
 * Not part of the API.
 */
#ifndef GE_EXEC_KERNEL_IMPL_H
#define GE_EXEC_KERNEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "exec/kernel.h"
#include "base/tensor.h"

enum {
	DT_FLOAT = 1, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8,
	DT_STRING, DT_COMPLEX64, DT_INT64, DT_BOOL, DT_QINT8, DT_QUINT8,
	DT_QINT32, DT_BFLOAT16, DT_QINT16, DT_QUINT16, DT_UINT16,
	DT_COMPLEX128, DT_HALF, DT_RESOURCE, DT_VARIANT, DT_UINT32, DT_UINT64
};

/* "name (Type)" of the op, for messages made outside ge_k_fail. */
const char *ge_k_what(ge_kctx *k, char *buf, size_t cap);
/* Releases every output set so far (a failing kernel leaves none). */
void ge_k_drop(ge_kctx *k);

/* A dtype's name for messages, never NULL. */
static inline const char *kdt(int dtype)
{
	const char *s = ge_dtype_name(dtype);
	return s ? s : "?";
}

static inline int dt_is_int(int dt)
{
	return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 ||
	       dt == DT_INT64 || dt == DT_UINT8 || dt == DT_UINT16 ||
	       dt == DT_UINT32 || dt == DT_UINT64;
}
static inline int dt_is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF ||
	       dt == DT_BFLOAT16;
}
static inline int dt_is_unsigned(int dt)
{
	return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 ||
	       dt == DT_UINT64;
}
static inline int dt_is_number(int dt)
{
	return dt_is_int(dt) || dt_is_float(dt);
}

/* Row-major strides of a shape; returns the element count. */
static inline int64_t kstrides(int rank, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
	return s;
}

/* The product of dims, or -1 when it overflows an int64 (or a dim is
 * negative). */
static inline int64_t kcount(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] && n > INT64_MAX / dims[i]))
			return -1;
		n *= dims[i];
	}
	return n;
}

/* The broadcast of two shapes by TensorFlow's rule (numpy's): aligned at
 * the right, a dimension of 1 stretches.  ge_kbcast_make gives GE_OK or a
 * failure naming the op.  For the walk, the result's shape is collapsed:
 * runs of dimensions where each input either moves or stretches alike
 * become one (cdims), with each input's stride over them (0: stretches). */
typedef struct kbcast {
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK]; /* the result's shape */
	int64_t n;
	int same;    /* a and b have the result's element count */
	int a_one;   /* a has one element */
	int b_one;   /* b has one element */
	int crank;
	int64_t cdims[GE_SHAPE_MAXRANK];
	int64_t sa[GE_SHAPE_MAXRANK], sb[GE_SHAPE_MAXRANK];
} kbcast;
int ge_kbcast_make(ge_kctx *k, const ge_xt *a, const ge_xt *b, kbcast *bc);
int ge_kbcast_shapes(ge_kctx *k, int ra, const int64_t *da, int rb,
		  const int64_t *db, kbcast *bc);
/* Calls f once per row of the result: len elements from element o of the
 * result, reading a from ia with step da (0 or 1) and b from ib with step
 * db. */
typedef void (*krow_fn)(void *ud, int64_t o, int64_t ia, int64_t da,
			int64_t ib, int64_t db, int64_t len);
void ge_kbcast_rows(const kbcast *bc, krow_fn f, void *ud);

/* A shape's text, "[2,3]", into buf. */
const char *ge_kshape(int rank, const int64_t *dims, char *buf, size_t cap);

/* Checks that input i has one of the dtypes of mask (bit dtype set);
 * fails naming the op otherwise. */
int ge_k_dtype_in(ge_kctx *k, int i, uint64_t mask);
#define KDT(d) ((uint64_t)1 << (d))
#define KDT_INTS (KDT(DT_INT8) | KDT(DT_INT16) | KDT(DT_INT32) | \
		  KDT(DT_INT64) | KDT(DT_UINT8) | KDT(DT_UINT16) | \
		  KDT(DT_UINT32) | KDT(DT_UINT64))
#define KDT_FLOATS (KDT(DT_FLOAT) | KDT(DT_DOUBLE) | KDT(DT_HALF) | \
		    KDT(DT_BFLOAT16))
#define KDT_NUMBERS (KDT_INTS | KDT_FLOATS)
#define KDT_ALL (KDT_NUMBERS | KDT(DT_BOOL) | KDT(DT_STRING) | \
		 KDT(DT_COMPLEX64) | KDT(DT_COMPLEX128))

/* Element k of a float-kind tensor as a float / double (half and
 * bfloat16 widened), and a double stored into element k of one. */
static inline float kget_f(const ge_xt *t, int64_t k)
{
	switch (t->dtype) {
	case DT_FLOAT: return ((const float *)t->data)[k];
	case DT_HALF: return ge_half_to_float(((const uint16_t *)t->data)[k]);
	case DT_BFLOAT16:
		return ge_bf16_to_float(((const uint16_t *)t->data)[k]);
	default: return (float)((const double *)t->data)[k];
	}
}

/* Copies element s of src to element d of dst, same dtype; strings and
 * objects duplicated.  GE_OK or GE_EINVAL (out of memory). */
int ge_kcopy_elem(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s);
/* Copies n elements from src at s to dst at d, same dtype. */
int ge_kcopy_elems(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s,
		int64_t n);

/* Integer elements loaded as int64 (unsigned kinds zero-extended, uint64
 * as its bits) and stored truncated to the dtype's width: integer kernels
 * compute in 64 bits and wrap at the width by the store. */
static inline int64_t kld_i(const ge_xt *t, int64_t k)
{
	const void *p = t->data;
	switch (t->dtype) {
	case DT_INT8: return ((const int8_t *)p)[k];
	case DT_UINT8: case DT_BOOL: return ((const uint8_t *)p)[k];
	case DT_INT16: return ((const int16_t *)p)[k];
	case DT_UINT16: return ((const uint16_t *)p)[k];
	case DT_INT32: return ((const int32_t *)p)[k];
	case DT_UINT32: return ((const uint32_t *)p)[k];
	default: return ((const int64_t *)p)[k];
	}
}
static inline void kst_i(ge_xt *t, int64_t k, int64_t v)
{
	void *p = t->data;
	switch (t->dtype) {
	case DT_INT8: ((int8_t *)p)[k] = (int8_t)v; break;
	case DT_UINT8: ((uint8_t *)p)[k] = (uint8_t)v; break;
	case DT_BOOL: ((uint8_t *)p)[k] = v != 0; break;
	case DT_INT16: ((int16_t *)p)[k] = (int16_t)v; break;
	case DT_UINT16: ((uint16_t *)p)[k] = (uint16_t)v; break;
	case DT_INT32: ((int32_t *)p)[k] = (int32_t)v; break;
	case DT_UINT32: ((uint32_t *)p)[k] = (uint32_t)v; break;
	default: ((int64_t *)p)[k] = v; break;
	}
}
/* The value an integer of dtype dt holds after wrapping v to its width. */
static inline int64_t kwrap_i(int dt, int64_t v)
{
	switch (dt) {
	case DT_INT8: return (int8_t)v;
	case DT_UINT8: return (uint8_t)v;
	case DT_INT16: return (int16_t)v;
	case DT_UINT16: return (uint16_t)v;
	case DT_INT32: return (int32_t)v;
	case DT_UINT32: return (uint32_t)v;
	default: return v;
	}
}

/* Float kinds: half and bfloat16 are computed in float32 and rounded
 * back, as TensorFlow's CPU kernels do.  ge_kwiden gives a float32 copy of a
 * half or bfloat16 tensor (a new reference to t for float32 and float64),
 * ge_knarrow stores a float32 tensor into a half or bfloat16 one of the same
 * shape. */
ge_xt *ge_kwiden(ge_kctx *k, ge_xt *t);
void ge_knarrow(ge_xt *dst, const ge_xt *src);
/* Output i of dtype dt: for half and bfloat16, a float32 scratch tensor
 * the kernel writes and kfinish narrows into the real output. */
ge_xt *ge_kout_f(ge_kctx *k, int i, int dt, int rank, const int64_t *dims);
int ge_kfinish_f(ge_kctx *k, int i, int dt);

/* GE_OK when the kernel set every output, else a failure saying how many
 * it made: the end of a kernel of several outputs. */
int ge_kall_set(ge_kctx *k);

/* Integer elements of input i whatever its rank (ge_k_ints wants a
 * scalar or a vector). */
int ge_kints_any(ge_kctx *k, int i, int64_t *out, int cap);

/* Output oi: x with its dimensions permuted (k_shape.c). */
int ge_ktranspose(ge_kctx *k, const ge_xt *x, const int64_t *perm, int oi);

#endif
