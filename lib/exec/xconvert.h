/*
 * exec/xconvert.h: runner tensors to and from TensorProto.
 *
 * From a TensorProto: every numeric dtype, bool and string; half and
 * bfloat16 kept as their bit patterns.  The values come from
 * tensor_content (exactly the shape's bytes, little-endian) or from the
 * typed field with TensorFlow's rule: an empty field means zeros, a
 * field shorter than the shape repeats its last value, values past the
 * shape are ignored.  To TensorProto bytes: through ge_tenc (tensor.h),
 * canonical as TensorFlow writes them, a tensor of equal elements as one
 * value.
 */
#ifndef GE_EXEC_XCONVERT_H
#define GE_EXEC_XCONVERT_H

#include "base/base.h"
#include "exec/xtensor.h"

struct Tensorflow__TensorProto;

/* The value of p as a new tensor charged to b (may be NULL); what names
 * the op for messages.  GE_OK, or GE_EINVAL / GE_EFORMAT with err set
 * (a dtype the runner does not hold, an unknown or negative shape,
 * tensor_content of the wrong size, a budget refusal). */
int ge_xt_from_proto(const struct Tensorflow__TensorProto *p, ge_xbudget *b,
		     const char *what, ge_xt **out, ge_error *err);

/* The value of t appended to out as TensorProto bytes.  GE_EINVAL for
 * resource and variant tensors. */
int ge_xt_to_proto(const ge_xt *t, ge_buf *out, ge_error *err);

#endif
