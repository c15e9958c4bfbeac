/*
 * tensordiff.c: how two tensor values differ, for `gerewrite diff`: the
 * largest absolute difference of their elements, read with tensor.c's
 * element reader (shorter typed fields repeat their last value, empty
 * ones are zeros, as TensorFlow reads them).
 */
#include <math.h>

#include "base/tensor.h"
#include "base/tensordiff.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

int ge_tensor_max_abs_diff(const Tensorflow__TensorProto *a,
			   const Tensorflow__TensorProto *b, double *out)
{
	if (a->dtype != b->dtype ||
	    !ge_tensor_shape_eq(a->tensor_shape, b->tensor_shape))
		return -1;
	int64_t n = ge_tensor_count(a);
	double m = 0;
	for (int64_t k = 0; k < n; k++) {
		ge_elem x, y;
		if (ge_tensor_elem(a, k, &x) || ge_tensor_elem(b, k, &y) ||
		    x.tag != y.tag || x.tag == 's' || x.tag == 'c')
			return -1;
		double d = x.tag == 'n' ? fabs(x.d - y.d)
					: fabs((double)x.i - (double)y.i);
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
