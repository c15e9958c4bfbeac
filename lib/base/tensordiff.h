/*
 * tensordiff.h: comparing two tensor values (tensordiff.c).
 */
#ifndef GE_TENSORDIFF_H
#define GE_TENSORDIFF_H

struct Tensorflow__TensorProto;

/* The largest absolute difference between the elements of a and b, in
 * *out (NaN when an element is NaN).  Returns 0, or -1 when they cannot
 * be compared element by element: other dtypes, other shapes, strings,
 * complex numbers, or an element that cannot be read. */
int ge_tensor_max_abs_diff(const struct Tensorflow__TensorProto *a,
			   const struct Tensorflow__TensorProto *b,
			   double *out);

#endif
