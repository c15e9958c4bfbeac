/*
 * tensordiff.c: how two tensor values differ, for `gerewrite diff`: the
 * largest absolute difference of their elements, read from
 * tensor_content or from the typed field (shorter typed fields repeat
 * their last value, empty ones are zeros, as TensorFlow reads them).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensordiff.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* Element size of the numeric dtypes read here; 0 for the others. */
static int elem_size(int dt)
{
	switch (dt) {
	case 1: case 3: case 22: return 4;  /* float, int32, uint32 */
	case 2: case 9: case 23: return 8;  /* double, int64, uint64 */
	case 4: case 6: case 10: return 1;  /* uint8, int8, bool */
	case 5: case 14: case 17: case 19: return 2; /* int16, bf16, uint16, half */
	}
	return 0;
}

static double half_to_double(uint32_t h, int ebits, int mbits)
{
	uint32_t e = (h >> mbits) & ((1u << ebits) - 1);
	uint32_t m = h & ((1u << mbits) - 1);
	int bias = (1 << (ebits - 1)) - 1;
	double v;
	if (e == 0)
		v = ldexp((double)m, 1 - bias - mbits);
	else if (e == (1u << ebits) - 1)
		v = m ? NAN : INFINITY;
	else
		v = ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
	return (h >> (ebits + mbits)) & 1 ? -v : v;
}

static double from_bits(int dt, uint64_t v)
{
	switch (dt) {
	case 1: {
		float f;
		uint32_t u = (uint32_t)v;
		memcpy(&f, &u, 4);
		return f;
	}
	case 2: {
		double d;
		memcpy(&d, &v, 8);
		return d;
	}
	case 19: return half_to_double((uint32_t)v, 5, 10);
	case 14: return half_to_double((uint32_t)v, 8, 7);
	case 3: return (double)(int32_t)(uint32_t)v;
	case 9: return (double)(int64_t)v;
	case 5: return (double)(int16_t)(uint16_t)v;
	case 6: return (double)(int8_t)(uint8_t)v;
	}
	return (double)v; /* unsigned, bool */
}

static size_t typed_len(const Tensorflow__TensorProto *t)
{
	switch ((int)t->dtype) {
	case 1: return t->n_float_val;
	case 2: return t->n_double_val;
	case 9: return t->n_int64_val;
	case 10: return t->n_bool_val;
	case 14: case 19: return t->n_half_val;
	case 22: return t->n_uint32_val;
	case 23: return t->n_uint64_val;
	}
	return t->n_int_val;
}

static double typed_at(const Tensorflow__TensorProto *t, size_t i)
{
	switch ((int)t->dtype) {
	case 1: return t->float_val[i];
	case 2: return t->double_val[i];
	case 9: return (double)t->int64_val[i];
	case 10: return t->bool_val[i] ? 1 : 0;
	case 14: case 19: return from_bits(t->dtype, (uint32_t)t->half_val[i] & 0xffff);
	case 22: return t->uint32_val[i];
	case 23: return (double)t->uint64_val[i];
	}
	return t->int_val[i];
}

/* Element k of t (0 when it holds none). */
static double elem(const Tensorflow__TensorProto *t, int64_t k)
{
	int size = elem_size(t->dtype);
	if (t->tensor_content.len) {
		size_t n = t->tensor_content.len / (size_t)size;
		if ((uint64_t)k >= n)
			return 0;
		const uint8_t *p = t->tensor_content.data + (size_t)k * size;
		uint64_t v = 0;
		for (int i = size - 1; i >= 0; i--)
			v = v << 8 | p[i];
		return from_bits(t->dtype, v);
	}
	size_t n = typed_len(t);
	if (!n)
		return 0;
	return typed_at(t, (uint64_t)k < n ? (size_t)k : n - 1);
}

/* Number of elements of a fully known shape, or -1. */
static int64_t num_elems(const Tensorflow__TensorProto *t)
{
	int64_t n = 1;
	if (!t->tensor_shape)
		return 1;
	if (t->tensor_shape->unknown_rank)
		return -1;
	for (size_t i = 0; i < t->tensor_shape->n_dim; i++) {
		int64_t d = t->tensor_shape->dim[i]->size;
		if (d < 0 || (d && n > INT64_MAX / d))
			return -1;
		n *= d;
	}
	return n;
}

int ge_tensor_max_abs_diff(const Tensorflow__TensorProto *a,
			   const Tensorflow__TensorProto *b, double *out)
{
	if (a->dtype != b->dtype || !elem_size(a->dtype))
		return -1;
	int64_t na = num_elems(a), nb = num_elems(b);
	if (na < 0 || na != nb)
		return -1;
	if (a->tensor_content.len &&
	    a->tensor_content.len / (size_t)elem_size(a->dtype) < (uint64_t)na)
		return -1;
	if (b->tensor_content.len &&
	    b->tensor_content.len / (size_t)elem_size(b->dtype) < (uint64_t)nb)
		return -1;
	double m = 0;
	for (int64_t k = 0; k < na; k++) {
		double d = fabs(elem(a, k) - elem(b, k));
		if (isnan(d)) {
			m = NAN;
			break;
		}
		if (d > m)
			m = d;
	}
	*out = m;
	return 0;
}
