/* t/tensor.c: dtypes, TensorProto elements, the encoder and the small
 * float formats (lib/base/tensor.c). */
#include <math.h>
#include <string.h>

#include "tap.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* Encodes n values of dtype dt over dims and unpacks the result. */
static Tensorflow__TensorProto *build_d(int dt, int rank, const int64_t *dims,
					const double *v, int n)
{
	ge_buf b = GE_BUF_INIT;
	ge_tenc e;
	ge_tenc_begin(&e, &b, dt, rank, dims, n);
	for (int i = 0; i < n; i++)
		ge_tenc_double(&e, v[i], 0);
	ge_tenc_end(&e);
	Tensorflow__TensorProto *t =
		tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_buf_free(&b);
	return t;
}

static Tensorflow__TensorProto *build_i(int dt, int rank, const int64_t *dims,
					const int64_t *v, int n)
{
	ge_buf b = GE_BUF_INIT;
	ge_tenc e;
	ge_tenc_begin(&e, &b, dt, rank, dims, n);
	for (int i = 0; i < n; i++)
		ge_tenc_int(&e, v[i]);
	ge_tenc_end(&e);
	Tensorflow__TensorProto *t =
		tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_buf_free(&b);
	return t;
}

static void dtypes(void)
{
	is_string("float32", ge_dtype_name(1), "dtype 1 is float32");
	is_string("bfloat16_ref", ge_dtype_name(114), "ref dtypes are named");
	ok(ge_dtype_name(99) == NULL, "unknown dtype has no name");
	is_int(19, ge_dtype_from_name("half"), "half is float16");
	is_int(103, ge_dtype_from_name("int32_ref"), "int32_ref");
	is_int(9, ge_dtype_from_name("DT_INT64"), "DT_ spelling");
	is_int(-1, ge_dtype_from_name("float31"), "unknown name");
	is_int(16, (long long)ge_dtype_size(18), "complex128 is 16 bytes");
	is_int(0, (long long)ge_dtype_size(7), "string has no size");
	const ge_dtinfo *di = ge_dtype_info(104);
	ok(di && di->store == GE_TS_INT && di->size == 1 && !di->sign,
	   "uint8_ref is stored as an unsigned byte in int_val");
	ok(ge_dtype_info(20) == NULL, "resource has no element storage");
	int64_t lo, hi;
	ge_dtype_int_range(ge_dtype_info(6), &lo, &hi);
	ok(lo == -128 && hi == 127, "int8 range");
	ge_dtype_int_range(ge_dtype_info(30), &lo, &hi);
	ok(lo == 0 && hi == 15, "uint4 range");
	ge_dtype_int_range(ge_dtype_info(9), &lo, &hi);
	ok(lo == INT64_MIN && hi == INT64_MAX, "int64 range");
}

static void small_floats(void)
{
	is_int(0x3c00, ge_half_from_double(1.0), "half 1.0");
	is_int(0xc000, ge_half_from_double(-2.0), "half -2.0");
	is_int(0x7c00, ge_half_from_double(65520.0), "half overflows to inf");
	is_int(0x0001, ge_half_from_double(ldexp(1, -24)),
	       "smallest half subnormal");
	/* 1 + 2^-11 is halfway between 1 and the next half: ties to even */
	is_int(0x3c00, ge_half_from_double(1 + ldexp(1, -11)), "half ties to even");
	is_int(0x3c01, ge_half_from_double(1 + ldexp(1, -11) + ldexp(1, -30)),
	       "half rounds once from the double");
	ok(ge_half_to_float(0x3555) == 0x1.554p-2f, "half to float exact");
	ok(ge_half_to_float(0x0001) == ldexpf(1, -24), "half subnormal back");
	ok(isnan(ge_half_to_float(0x7e00)), "half NaN");
	is_int(0x3f80, ge_bf16_from_double(1.0), "bfloat16 1.0");
	is_int(0x3f80, ge_bf16_from_double(1.00390625), "bfloat16 ties to even");
	is_int(0x3f82, ge_bf16_from_double(1.01171875), "bfloat16 tie up to even");
	is_int(0x7fc0, ge_bf16_from_double(NAN) & 0x7fff, "bfloat16 NaN");
	ok(ge_bf16_to_float(0xc040) == -3.0f, "bfloat16 to float");
	is_int(0x3c, ge_f8e5m2_from_double(1.0), "float8 e5m2 1.0");
	ok(ge_f8e5m2_to_double(0x3c) == 1.0, "float8 e5m2 back");
	ok(ge_f8e4m3fn_to_double(0x7e) == 448.0, "float8 e4m3fn max");
	ok(isnan(ge_f8e4m3fn_to_double(0x7f)), "float8 e4m3fn NaN");
}

static void elements(void)
{
	int64_t dims[] = {2, 2};
	double v[] = {1.5, -2, 3.25, 4};
	Tensorflow__TensorProto *t = build_d(1, 2, dims, v, 4);
	ok(t && t->tensor_content.len == 16, "4 floats go to tensor_content");
	is_int(4, ge_tensor_count(t), "count by the shape");
	is_int(4, ge_tensor_stored_count(t), "stored count");
	double d = 0;
	ok(!ge_tensor_get_double(t, 2, &d, NULL) && d == 3.25, "element 2");
	int64_t i = 0;
	ok(!ge_tensor_get_int64(t, 1, &i, NULL) && i == -2,
	   "float element as int64");
	ge_error err;
	ok(ge_tensor_get_double(t, 4, &d, &err) == GE_EINVAL &&
		   strstr(err.msg, "fewer elements"),
	   "reading past tensor_content fails: %s", err.msg);
	protobuf_c_message_free_unpacked(&t->base, NULL);

	/* one value fills the shape through the typed field */
	double one = 7;
	t = build_d(19, 2, dims, &one, 1);
	ok(t && t->n_half_val == 1 && !t->tensor_content.len,
	   "a fill goes to half_val");
	is_int(4, ge_tensor_count(t), "the fill has the shape's count");
	ok(!ge_tensor_get_double(t, 3, &d, NULL) && d == 7,
	   "the typed field repeats its last value");
	protobuf_c_message_free_unpacked(&t->base, NULL);

	int64_t iv[] = {-1, 200};
	int64_t d2[] = {2};
	t = build_i(5, 1, d2, iv, 2);
	ok(!ge_tensor_get_int64(t, 0, &i, NULL) && i == -1,
	   "int16 content sign-extends");
	ok(!ge_tensor_get_int64(t, 1, &i, NULL) && i == 200, "int16 element 1");
	protobuf_c_message_free_unpacked(&t->base, NULL);

	/* zeros: no values at all */
	t = build_i(9, 1, d2, NULL, 0);
	ok(!ge_tensor_get_int64(t, 1, &i, NULL) && i == 0,
	   "no values mean zeros");
	is_int(0, ge_tensor_stored_count(t), "nothing stored");
	protobuf_c_message_free_unpacked(&t->base, NULL);

	ge_buf b = GE_BUF_INIT;
	ge_tenc e;
	ge_tenc_begin(&e, &b, 7, 1, d2, 2);
	ge_tenc_string(&e, "ab", 2);
	ge_tenc_string(&e, "", 0);
	ge_tenc_end(&e);
	t = tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_buf_free(&b);
	ge_elem x, y;
	ok(t && t->n_string_val == 2 && !ge_tensor_elem(t, 0, &x) &&
		   x.tag == 's' && x.len == 2 && !memcmp(x.s, "ab", 2),
	   "strings go to string_val");
	ok(ge_tensor_get_double(t, 0, &d, &err) == GE_EINVAL,
	   "a string is not a number: %s", err.msg);
	ok(!ge_tensor_elem(t, 1, &y) && !ge_elem_eq(&x, &y),
	   "different strings differ");
	protobuf_c_message_free_unpacked(&t->base, NULL);

	ge_tenc_begin(&e, &b, 8, 0, NULL, 1);
	ge_tenc_double(&e, 1, -1);
	ge_tenc_end(&e);
	t = tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_buf_free(&b);
	ok(t && !ge_tensor_elem(t, 0, &x) && x.tag == 'c' && x.d == 1 &&
		   x.im == -1,
	   "complex64 scalar");
	ok(ge_tensor_shape_eq(t->tensor_shape, NULL), "a scalar's shape");
	protobuf_c_message_free_unpacked(&t->base, NULL);
}

int main(void)
{
	dtypes();
	small_floats();
	elements();
	return tap_done();
}
