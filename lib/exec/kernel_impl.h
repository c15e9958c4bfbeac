/*
 * exec/kernel_impl.h: what the files of kernels share (exec/kernel.c,
 * exec/xconvert.c, exec/k_math.c, exec/k_binary.c, exec/k_reduce.c,
 * exec/k_shape.c, exec/k_array.c, exec/k_index.c): DataType numbers,
 * dtype classes, row-major strides and the broadcasting of two shapes.
 * Not part of the API.
 */
#ifndef GE_EXEC_KERNEL_IMPL_H
#define GE_EXEC_KERNEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "exec/kernel.h"
#include "tensor.h"

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
 * the right, a dimension of 1 stretches.  GE_OK or a failure naming the
 * op; *rank and dims get the result, sa and sb each input's strides
 * over the result's rank (0 where it stretches). */
typedef struct kbcast {
	int rank;
	int64_t dims[GE_SHAPE_MAXRANK];
	int64_t sa[GE_SHAPE_MAXRANK], sb[GE_SHAPE_MAXRANK];
	int64_t n;
	int same;    /* a and b have the result's shape */
	int a_one;   /* a has one element */
	int b_one;   /* b has one element */
} kbcast;
int kbcast_make(ge_kctx *k, const ge_xt *a, const ge_xt *b, kbcast *bc);
/* Calls f(ud, i, ia, ib) for each result element i with the elements of
 * a and b it reads, walking the shape without a division per element. */
void kbcast_walk(const kbcast *bc,
		 void (*f)(void *ud, int64_t i, int64_t ia, int64_t ib),
		 void *ud);
/* Fills ia[] and ib[] with the element of a and b each result element
 * reads: the general path of the binary kernels. */
void kbcast_index(const kbcast *bc, int64_t *ia, int64_t *ib);

/* A shape's text, "[2,3]", into buf. */
const char *kshape(int rank, const int64_t *dims, char *buf, size_t cap);

/* Checks that input i has one of the dtypes of mask (bit dtype set);
 * fails naming the op otherwise. */
int k_dtype_in(ge_kctx *k, int i, uint64_t mask);
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
int kcopy_elem(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s);
/* Copies n elements from src at s to dst at d, same dtype. */
int kcopy_elems(ge_xt *dst, int64_t d, const ge_xt *src, int64_t s,
		int64_t n);

#endif
