/*
 * kernels: the runner's kernel registry, TensorProto conversion and the
 * Const kernel, against values worked out by hand: TensorFlow's
 * repeat-last-value rule, tensor_content, half bits kept, strings, and
 * the refusals that name the op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel.h"
#include "exec/xconvert.h"
#include "ktest.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* A Const node: name, DT_ dtype, shape dims text, value fields text. */
#define KC(n, dt, shape, vals) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: " dt " } } " \
	"attr { key: \"value\" value { tensor { dtype: " dt \
	" tensor_shape { " shape " } " vals " } } } }\n"

static void test_registry(void)
{
	const char *const *types = ge_kernel_types();
	int sorted = 1, n = 0;
	for (; types[n]; n++)
		if (n && strcmp(types[n - 1], types[n]) >= 0)
			sorted = 0;
	ok(n > 0 && sorted, "ge_kernel_types: %d types, sorted, no duplicate",
	   n);
	int found = 1;
	for (int i = 0; types[i]; i++)
		if (!ge_kernel_find(types[i]) ||
		    strcmp(ge_kernel_find(types[i])->type, types[i]))
			found = 0;
	ok(found, "every listed type is found by ge_kernel_find");
	ok(ge_kernel_find("Const") != NULL, "Const has a kernel");
	ok(ge_kernel_find("NoSuchOp") == NULL, "an unknown type has none");
	ok(ge_kernel_find("") == NULL && ge_kernel_find(NULL) == NULL,
	   "nor the empty type or NULL");
}

static void test_const(void)
{
	is_string("float32[4] 1,2,3,3",
		  kt_eval_text(KC("c", "DT_FLOAT", "dim{size:4}",
				  "float_val: 1 float_val: 2 float_val: 3"), "c"),
		  "a short typed field repeats its last value");
	is_string("int32[2,2] 0,0,0,0",
		  kt_eval_text(KC("c", "DT_INT32", "dim{size:2} dim{size:2}",
				  ""), "c"),
		  "an empty typed field means zeros");
	is_string("int32[2] 7,8",
		  kt_eval_text(KC("c", "DT_INT32", "dim{size:2}",
				  "int_val: 7 int_val: 8 int_val: 9"), "c"),
		  "values past the shape are ignored");
	is_string("int8[3] -1,127,-128",
		  kt_eval_text(KC("c", "DT_INT8", "dim{size:3}",
				  "int_val: -1 int_val: 127 int_val: -128"),
			       "c"),
		  "int8 from int_val");
	is_string("uint8[2] 255,0",
		  kt_eval_text(KC("c", "DT_UINT8", "dim{size:2}",
				  "tensor_content: \"\\377\\000\""), "c"),
		  "uint8 from tensor_content");
	is_string("int64[1] -5",
		  kt_eval_text(KC("c", "DT_INT64", "dim{size:1}",
				  "int64_val: -5"), "c"), "int64");
	is_string("uint64[1] 18446744073709551615",
		  kt_eval_text(KC("c", "DT_UINT64", "dim{size:1}",
				  "uint64_val: 18446744073709551615"), "c"),
		  "uint64 above int64's range");
	is_string("float32[2] 1,-2",
		  kt_eval_text(KC("c", "DT_FLOAT", "dim{size:2}",
				  "tensor_content: \"\\000\\000\\200?\\000\\000"
				  "\\000\\300\""), "c"),
		  "float32 from tensor_content");
	is_string("bool[3] 1,0,0",
		  kt_eval_text(KC("c", "DT_BOOL", "dim{size:3}",
				  "bool_val: true bool_val: false"), "c"),
		  "bool repeats its last value too");
	is_string("string[2] ab,ab",
		  kt_eval_text(KC("c", "DT_STRING", "dim{size:2}",
				  "string_val: \"ab\""), "c"),
		  "strings");
	is_string("float16[2] 1,-2",
		  kt_eval_text(KC("c", "DT_HALF", "dim{size:2}",
				  "half_val: 15360 half_val: 49152"), "c"),
		  "float16 from its bit patterns");
	is_string("float64[] 0.25",
		  kt_eval_text(KC("c", "DT_DOUBLE", "", "double_val: 0.25"),
			       "c"),
		  "a float64 scalar");
	const char *e = kt_eval_text(KC("c", "DT_FLOAT", "dim{size:3}",
					"tensor_content: \"\\000\\000\\200?\""),
				     "c");
	ok(strstr(e, "error: c (Const): tensor_content holds 4 bytes") == e,
	   "tensor_content of the wrong size is refused naming the op (%s)",
	   e);
	e = kt_eval_text("node { name: \"c\" op: \"Const\" "
			 "attr { key: \"dtype\" value { type: DT_INT32 } } "
			 "attr { key: \"value\" value { tensor { dtype: "
			 "DT_FLOAT tensor_shape { } float_val: 1 } } } }",
			 "c");
	ok(strstr(e, "error: c (Const): its value is float32, its dtype attr "
		  "int32") == e, "a value disagreeing with dtype is refused");
	e = kt_eval_text(KC("c", "DT_FLOAT", "dim{size:-1}", ""), "c");
	ok(strstr(e, "error:") == e && strstr(e, "unknown"),
	   "an unknown dimension is refused (%s)", e);
}

/* ge_xt_to_proto and back. */
static void test_roundtrip(void)
{
	ge_error err;
	int64_t dims[2] = {2, 3};
	ge_xt *t = ge_xt_new(1, 2, dims, NULL, "t", &err);
	for (int i = 0; i < 6; i++)
		((float *)t->data)[i] = (float)i / 3;
	ge_buf b = GE_BUF_INIT;
	ok(ge_xt_to_proto(t, &b, &err) == GE_OK, "float32 to TensorProto");
	Tensorflow__TensorProto *p =
		tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_xt *r = NULL;
	ok(p && ge_xt_from_proto(p, NULL, "r", &r, &err) == GE_OK &&
	   r->rank == 2 && r->dims[1] == 3 &&
	   !memcmp(r->data, t->data, 6 * sizeof(float)),
	   "and back, bit for bit");
	ok(p && p->tensor_content.len == 24, "several values go to content");
	tensorflow__tensor_proto__free_unpacked(p, NULL);
	ge_xt_unref(r);
	ge_buf_free(&b);
	for (int i = 0; i < 6; i++)
		((float *)t->data)[i] = 1.5f;
	ge_xt_to_proto(t, &b, &err);
	p = tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ok(p && p->n_float_val == 1 && !p->tensor_content.len,
	   "equal values are written as one");
	ok(p && ge_xt_from_proto(p, NULL, "r", &r, &err) == GE_OK &&
	   r->n == 6 && ((float *)r->data)[5] == 1.5f, "and read back whole");
	tensorflow__tensor_proto__free_unpacked(p, NULL);
	ge_xt_unref(r);
	ge_buf_free(&b);
	ge_xt_unref(t);
}

/* An empty tensor's other dims must multiply within int64, so that a
 * kernel's outer and inner extents of an axis fit: fuzz_eval's Unpack
 * of a {2^40, 0, 2^40} value multiplied past it. */
static void test_empty_shapes(void)
{
	ge_error err;
	int64_t big[3] = {(int64_t)1 << 40, 0, (int64_t)1 << 40};
	ge_xt *t = ge_xt_new(1, 3, big, &kt_budget, "x", &err);
	ok(!t && strstr(err.msg, "overflows"),
	   "{2^40, 0, 2^40} is refused: %s", t ? "made" : err.msg);
	ge_xt_unref(t);
	t = ge_xt_new(1, 2, big, &kt_budget, "x", &err);
	ok(t && t->n == 0, "{2^40, 0} is an empty tensor");
	ge_xt *s = t ? ge_xt_reshape(t, 3, big, "x", &err) : NULL;
	ok(!s, "and is not reshaped to {2^40, 0, 2^40}");
	ge_xt_unref(s);
	ge_xt_unref(t);
}

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_registry();
	test_const();
	test_roundtrip();
	test_empty_shapes();
	ok(kt_budget.mem_live == 0, "every tensor was released (%llu bytes "
	   "live)", (unsigned long long)kt_budget.mem_live);
	return tap_done();
}
