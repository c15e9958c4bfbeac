/*
 * tfjsutil.h: helpers of the TensorFlow.js tests (header only): the values
 * of a Const's tensor as doubles, whatever its encoding.
 */
#ifndef GE_TFJSUTIL_H
#define GE_TFJSUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

__attribute__((unused)) static double half_val(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY)
						      : ldexp(m | 0x400, e - 25);
	return h & 0x8000 ? -v : v;
}

/* The values of a numeric tensor as doubles (tensor_content, or the typed
 * list with its last value repeated), or NULL for other dtypes. */
__attribute__((unused)) static double *
tensor_values(const Tensorflow__TensorProto *t, size_t *n)
{
	size_t num = 1;
	if (t->tensor_shape)
		for (size_t i = 0; i < t->tensor_shape->n_dim; i++)
			num *= (size_t)t->tensor_shape->dim[i]->size;
	*n = num;
	double *v = calloc(num ? num : 1, sizeof *v);
	const uint8_t *c = t->tensor_content.data;
	size_t cl = t->tensor_content.len;
	for (size_t i = 0; i < num; i++) {
		switch (t->dtype) {
		case TENSORFLOW__DATA_TYPE__DT_FLOAT:
			if (cl) {
				float f;
				memcpy(&f, c + 4 * i, 4);
				v[i] = f;
			} else if (t->n_float_val) {
				v[i] = t->float_val[i < t->n_float_val ? i
						    : t->n_float_val - 1];
			}
			break;
		case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
			if (cl)
				memcpy(&v[i], c + 8 * i, 8);
			else if (t->n_double_val)
				v[i] = t->double_val[i < t->n_double_val ? i
						     : t->n_double_val - 1];
			break;
		case TENSORFLOW__DATA_TYPE__DT_INT32:
			if (cl) {
				int32_t x;
				memcpy(&x, c + 4 * i, 4);
				v[i] = x;
			} else if (t->n_int_val) {
				v[i] = t->int_val[i < t->n_int_val ? i
						  : t->n_int_val - 1];
			}
			break;
		case TENSORFLOW__DATA_TYPE__DT_INT64:
			if (cl) {
				int64_t x;
				memcpy(&x, c + 8 * i, 8);
				v[i] = (double)x;
			} else if (t->n_int64_val) {
				v[i] = (double)t->int64_val[i < t->n_int64_val ? i
						: t->n_int64_val - 1];
			}
			break;
		case TENSORFLOW__DATA_TYPE__DT_BOOL:
			if (cl)
				v[i] = c[i];
			else if (t->n_bool_val)
				v[i] = t->bool_val[i < t->n_bool_val ? i
						   : t->n_bool_val - 1];
			break;
		case TENSORFLOW__DATA_TYPE__DT_HALF:
			if (cl)
				v[i] = half_val((uint16_t)(c[2 * i] |
							   c[2 * i + 1] << 8));
			else if (t->n_half_val)
				v[i] = half_val((uint16_t)t->half_val[
					i < t->n_half_val ? i : t->n_half_val - 1]);
			break;
		default:
			free(v);
			return NULL;
		}
	}
	return v;
}

__attribute__((unused)) static const Tensorflow__TensorProto *
value_of(const ge_graph *g, ge_opid id)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, "value", NULL);
	return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR
		       ? v->tensor : NULL;
}

#endif
