/*
 * t/textpb.c: the text format reader and writer (lib/base/textpb.c) on
 * TensorFlow's messages and on the test-only messages of
 * t/textpb_test.proto (the scalar types TensorFlow does not use).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/textpb.h"
#include "textpb_test.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define NAME "t.pbtxt"

static ProtobufCMessage *parse(const char *text,
			       const ProtobufCMessageDescriptor *d,
			       const char *what)
{
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	int rc = ge_textpb_parse(text, strlen(text), d, NAME, &m, &err);
	if (!ok(rc == GE_OK && m != NULL, "parse: %s", what))
		tap_diag("  %s", err.msg);
	return m;
}

static void parse_fails(const char *text, const ProtobufCMessageDescriptor *d,
			const char *want)
{
	ProtobufCMessage *m = (ProtobufCMessage *)&m;   /* must be reset */
	ge_error err = {0, ""};
	int rc = ge_textpb_parse(text, strlen(text), d, NAME, &m, &err);
	ok(rc == GE_EFORMAT && err.code == GE_EFORMAT && m == NULL,
	   "refused: %s", want);
	is_string(want, err.msg, "  message");
	if (rc == GE_OK && m)
		protobuf_c_message_free_unpacked(m, NULL);
}

/* The text of m, as a malloc'd C string. */
static char *print(const ProtobufCMessage *m)
{
	ge_buf b = GE_BUF_INIT;
	ge_textpb_print(m, &b);
	return (char *)ge_buf_steal(&b, NULL);
}

static void is_print(const ProtobufCMessage *m, const char *want,
		     const char *what)
{
	char *got = print(m);
	is_string(want, got, "print: %s", what);
	free(got);
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *p = ge_xmalloc(*n + 1);
	protobuf_c_message_pack(m, p);
	return p;
}

/* print -> parse -> pack gives the bytes m packs to. */
static void round_trip(const ProtobufCMessage *m, const char *what)
{
	char *text = print(m);
	ProtobufCMessage *m2 = NULL;
	ge_error err = {0, ""};
	int rc = ge_textpb_parse(text, strlen(text), m->descriptor, "reprint",
				 &m2, &err);
	if (rc) {
		ok(0, "round trip: %s", what);
		tap_diag("  %s", err.msg);
		free(text);
		return;
	}
	size_t n1, n2;
	uint8_t *a = pack(m, &n1), *b = pack(m2, &n2);
	ok(n1 == n2 && memcmp(a, b, n1) == 0, "round trip: %s (%zu bytes)",
	   what, n1);
	char *text2 = print(m2);
	is_string(text, text2, "  printing is stable");
	free(text2);
	free(a);
	free(b);
	free(text);
	protobuf_c_message_free_unpacked(m2, NULL);
}

/* ------------------------------------------------------------ NodeDef */

static void test_node_def(void)
{
	const char *text =
		"# a convolution\n"
		"name: \"conv\" op: 'Conv2D'\n"
		"input: [\"x\", \"w\"]  input: \"^ctl\";\n"
		"device: \"/cpu:0\",\n"
		"attr { key: \"T\" value { type: DT_FLOAT } }\n"
		"attr: { key: \"strides\" value { list { i: [1, 2, 2, 1] } } }\n"
		"attr < key: \"padding\" value: < s: \"SAME\" > >\n"
		"attr { key: \"use_cudnn_on_gpu\" value { b: true } }\n"
		"attr { key: \"alpha\" value { f: 0.5 } }\n"
		"attr { key: \"zero\" value { i: 0 } }\n"
		"attr { key: \"dt\" value { type: 3 } }\n";
	Tensorflow__NodeDef *n = (Tensorflow__NodeDef *)
		parse(text, &tensorflow__node_def__descriptor, "NodeDef");
	if (!n) {
		tap_skip(14, "no NodeDef");
		return;
	}
	is_string("conv", n->name, "name");
	is_string("Conv2D", n->op, "op (single quotes)");
	ok(n->n_input == 3 && !strcmp(n->input[0], "x") &&
	   !strcmp(n->input[1], "w") && !strcmp(n->input[2], "^ctl"),
	   "inputs from a list and a line, in order");
	is_int(7, (long long)n->n_attr, "seven attr entries");
	const char *keys[] = {"T", "strides", "padding", "use_cudnn_on_gpu",
			      "alpha", "zero", "dt"};
	int order = n->n_attr == 7;
	for (size_t i = 0; order && i < 7; i++)
		order = !strcmp(n->attr[i]->key, keys[i]);
	ok(order, "map entries keep the order of the text");
	if (n->n_attr == 7) {
		ok(n->attr[0]->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
		   n->attr[0]->value->type == TENSORFLOW__DATA_TYPE__DT_FLOAT,
		   "enum by name in a oneof");
		Tensorflow__AttrValue__ListValue *l = n->attr[1]->value->list;
		ok(l && l->n_i == 4 && l->i[0] == 1 && l->i[1] == 2 &&
		   l->i[3] == 1, "list of int64");
		ok(n->attr[2]->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S &&
		   n->attr[2]->value->s.len == 4 &&
		   !memcmp(n->attr[2]->value->s.data, "SAME", 4),
		   "bytes with < > delimiters");
		ok(n->attr[3]->value->b == 1, "bool");
		ok(n->attr[4]->value->f == 0.5f, "float");
		ok(n->attr[5]->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I &&
		   n->attr[5]->value->i == 0,
		   "oneof case set for a zero value");
		ok(n->attr[6]->value->type == TENSORFLOW__DATA_TYPE__DT_INT32,
		   "enum by number");
	} else {
		tap_skip(7, "wrong attr count");
	}
	is_print(&n->base,
		 "name: \"conv\"\n"
		 "op: \"Conv2D\"\n"
		 "input: \"x\"\n"
		 "input: \"w\"\n"
		 "input: \"^ctl\"\n"
		 "device: \"/cpu:0\"\n"
		 "attr {\n"
		 "  key: \"T\"\n"
		 "  value {\n"
		 "    type: DT_FLOAT\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"strides\"\n"
		 "  value {\n"
		 "    list {\n"
		 "      i: 1\n"
		 "      i: 2\n"
		 "      i: 2\n"
		 "      i: 1\n"
		 "    }\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"padding\"\n"
		 "  value {\n"
		 "    s: \"SAME\"\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"use_cudnn_on_gpu\"\n"
		 "  value {\n"
		 "    b: true\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"alpha\"\n"
		 "  value {\n"
		 "    f: 0.5\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"zero\"\n"
		 "  value {\n"
		 "    i: 0\n"
		 "  }\n"
		 "}\n"
		 "attr {\n"
		 "  key: \"dt\"\n"
		 "  value {\n"
		 "    type: DT_INT32\n"
		 "  }\n"
		 "}\n",
		 "NodeDef in TensorFlow's layout");
	round_trip(&n->base, "NodeDef");
	protobuf_c_message_free_unpacked(&n->base, NULL);

	/* A map entry whose key is zero still prints it, as TensorFlow does. */
	Tensorflow__NodeDef *e = (Tensorflow__NodeDef *)
		parse("attr { value { i: 1 } }", &tensorflow__node_def__descriptor,
		      "map entry without key");
	if (e) {
		is_print(&e->base, "attr {\n  key: \"\"\n  value {\n    i: 1\n  }\n}\n",
			 "map entry prints an empty key");
		protobuf_c_message_free_unpacked(&e->base, NULL);
	}
}

/* ------------------------------------------------------------ TensorProto */

static void test_tensor(void)
{
	const char *text =
		"dtype: DT_INT32\n"
		"tensor_shape { dim { size: 2 } dim { size: -1 name: \"batch\" } }\n"
		"tensor_content: \"\\000\\001\\377\\n\\\"\\'\\\\\\x41\\101\" 'tail'\n"
		"float_val: [0.1, 1, -2.5e-3, inf, -inf, nan, 1.5f, 0x10, 010,"
		" -0, 0.33333334, Infinity, -INF, .5]\n"
		"double_val: [0.1, 1e300, 3.141592653589793, -Infinity, NaN]\n"
		"double_val: 5e-324 double_val: 12345678901234567890123\n"
		"int64_val: [-9223372036854775808, 9223372036854775807]\n"
		"uint64_val: 18446744073709551615 uint32_val: 4294967295\n"
		"bool_val: [true, false, True, False, t, f, 1, 0]\n"
		"string_val: \"a\" 'b' \"\\u00e9\\U0001F600\"\n"
		"string_val: \"\\a\\b\\f\\v\\r\\t\\?\"\n";
	Tensorflow__TensorProto *t = (Tensorflow__TensorProto *)
		parse(text, &tensorflow__tensor_proto__descriptor, "TensorProto");
	if (!t) {
		tap_skip(12, "no TensorProto");
		return;
	}
	static const uint8_t content[] = {0, 1, 0xff, '\n', '"', '\'', '\\',
					  'A', 'A', 't', 'a', 'i', 'l'};
	ok(t->tensor_content.len == sizeof content &&
	   !memcmp(t->tensor_content.data, content, sizeof content),
	   "tensor_content: octal, hex, C escapes, concatenation");
	ok(t->tensor_shape && t->tensor_shape->n_dim == 2 &&
	   t->tensor_shape->dim[1]->size == -1 &&
	   !strcmp(t->tensor_shape->dim[1]->name, "batch"), "nested shape");
	int fv = t->n_float_val == 14 && t->float_val[0] == 0.1f &&
		 t->float_val[1] == 1 && t->float_val[2] == -0.0025f &&
		 isinf(t->float_val[3]) && t->float_val[3] > 0 &&
		 isinf(t->float_val[4]) && t->float_val[4] < 0 &&
		 isnan(t->float_val[5]) && t->float_val[6] == 1.5f &&
		 t->float_val[7] == 16 && t->float_val[8] == 8 &&
		 t->float_val[9] == 0 && signbit(t->float_val[9]) &&
		 t->float_val[10] == 0.33333334f && isinf(t->float_val[11]) &&
		 isinf(t->float_val[12]) && t->float_val[12] < 0 &&
		 t->float_val[13] == 0.5f;
	ok(fv, "floats: decimals, inf, nan, f suffix, hex and octal integers, -0");
	ok(t->n_double_val == 7 && t->double_val[0] == 0.1 &&
	   t->double_val[1] == 1e300 && t->double_val[2] == 3.141592653589793 &&
	   isinf(t->double_val[3]) && isnan(t->double_val[4]) &&
	   t->double_val[5] == 5e-324 && t->double_val[6] == 12345678901234567890123.0,
	   "doubles, including an integer beyond 64 bits");
	ok(t->n_int64_val == 2 && t->int64_val[0] == INT64_MIN &&
	   t->int64_val[1] == INT64_MAX, "int64 bounds");
	ok(t->n_uint64_val == 1 && t->uint64_val[0] == UINT64_MAX &&
	   t->n_uint32_val == 1 && t->uint32_val[0] == UINT32_MAX,
	   "unsigned bounds");
	ok(t->n_bool_val == 8 && t->bool_val[0] && !t->bool_val[1] &&
	   t->bool_val[2] && !t->bool_val[3] && t->bool_val[4] &&
	   !t->bool_val[5] && t->bool_val[6] && !t->bool_val[7],
	   "bool spellings");
	ok(t->n_string_val == 2 && t->string_val[0].len == 8 &&
	   !memcmp(t->string_val[0].data, "ab\xc3\xa9\xf0\x9f\x98\x80", 8),
	   "\\u and \\U escapes as UTF-8");
	ok(t->string_val[1].len == 7 &&
	   !memcmp(t->string_val[1].data, "\a\b\f\v\r\t?", 7),
	   "one-letter escapes");
	is_print(&t->base,
		 "dtype: DT_INT32\n"
		 "tensor_shape {\n"
		 "  dim {\n"
		 "    size: 2\n"
		 "  }\n"
		 "  dim {\n"
		 "    size: -1\n"
		 "    name: \"batch\"\n"
		 "  }\n"
		 "}\n"
		 "tensor_content: \"\\000\\001\\377\\n\\\"\\'\\\\AAtail\"\n"
		 "float_val: 0.1\n"
		 "float_val: 1\n"
		 "float_val: -0.0025\n"
		 "float_val: inf\n"
		 "float_val: -inf\n"
		 "float_val: nan\n"
		 "float_val: 1.5\n"
		 "float_val: 16\n"
		 "float_val: 8\n"
		 "float_val: -0\n"
		 "float_val: 0.33333334\n"
		 "float_val: inf\n"
		 "float_val: -inf\n"
		 "float_val: 0.5\n"
		 "double_val: 0.1\n"
		 "double_val: 1e+300\n"
		 "double_val: 3.141592653589793\n"
		 "double_val: -inf\n"
		 "double_val: nan\n"
		 "double_val: 4.94065645841247e-324\n"
		 "double_val: 1.2345678901234568e+22\n"
		 "string_val: \"ab\\303\\251\\360\\237\\230\\200\"\n"
		 "string_val: \"\\007\\010\\014\\013\\r\\t?\"\n"
		 "int64_val: -9223372036854775808\n"
		 "int64_val: 9223372036854775807\n"
		 "bool_val: true\n"
		 "bool_val: false\n"
		 "bool_val: true\n"
		 "bool_val: false\n"
		 "bool_val: true\n"
		 "bool_val: false\n"
		 "bool_val: true\n"
		 "bool_val: false\n"
		 "uint32_val: 4294967295\n"
		 "uint64_val: 18446744073709551615\n",
		 "TensorProto: escapes, shortest floats, field-number order");
	round_trip(&t->base, "TensorProto");
	protobuf_c_message_free_unpacked(&t->base, NULL);
}

/* ------------------------------------------------------------ Any */

static const char meta_text[] =
	"meta_info_def {\n"
	"  meta_graph_version: \"v1\"\n"
	"  any_info {\n"
	"    [type.googleapis.com/tensorflow.AssetFileDef] {\n"
	"      tensor_info { name: \"Const:0\" }\n"
	"      filename: \"foo.txt\"\n"
	"    }\n"
	"  }\n"
	"  tags: \"serve\"\n"
	"}\n"
	"collection_def {\n"
	"  key: \"saved_model_assets\"\n"
	"  value {\n"
	"    any_list {\n"
	"      value { [ type.googleapis.com/tensorflow.AssetFileDef ]: < filename: \"a.txt\" > }\n"
	"      value {\n"
	"        type_url: \"type.googleapis.com/tensorflow.Unregistered\"\n"
	"        value: \"\\n\\001x\"\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

static const char meta_printed[] =
	"meta_info_def {\n"
	"  meta_graph_version: \"v1\"\n"
	"  any_info {\n"
	"    [type.googleapis.com/tensorflow.AssetFileDef] {\n"
	"      tensor_info {\n"
	"        name: \"Const:0\"\n"
	"      }\n"
	"      filename: \"foo.txt\"\n"
	"    }\n"
	"  }\n"
	"  tags: \"serve\"\n"
	"}\n"
	"collection_def {\n"
	"  key: \"saved_model_assets\"\n"
	"  value {\n"
	"    any_list {\n"
	"      value {\n"
	"        [type.googleapis.com/tensorflow.AssetFileDef] {\n"
	"          filename: \"a.txt\"\n"
	"        }\n"
	"      }\n"
	"      value {\n"
	"        type_url: \"type.googleapis.com/tensorflow.Unregistered\"\n"
	"        value: \"\\n\\001x\"\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

static void test_any(void)
{
	parse_fails(meta_text, &tensorflow__meta_graph_def__descriptor,
		    NAME ":4:5: unknown type 'tensorflow.AssetFileDef' in "
		    "google.protobuf.Any");
	ge_textpb_register(&tensorflow__asset_file_def__descriptor);
	ge_textpb_register(&tensorflow__asset_file_def__descriptor);
	Tensorflow__MetaGraphDef *mg = (Tensorflow__MetaGraphDef *)
		parse(meta_text, &tensorflow__meta_graph_def__descriptor,
		      "MetaGraphDef with expanded Any");
	if (!mg) {
		tap_skip(7, "no MetaGraphDef");
		return;
	}
	Google__Protobuf__Any *any =
		mg->meta_info_def ? mg->meta_info_def->any_info : NULL;
	static const char want[] = "\n\t\n\007Const:0\022\007foo.txt";
	ok(any && !strcmp(any->type_url,
			  "type.googleapis.com/tensorflow.AssetFileDef") &&
	   any->value.len == sizeof want - 1 &&
	   !memcmp(any->value.data, want, sizeof want - 1),
	   "expanded Any becomes type_url + packed value");
	is_print(&mg->base, meta_printed,
		 "registered Any printed expanded, unregistered raw");
	round_trip(&mg->base, "MetaGraphDef with Any");

	/* An Any whose bytes would not survive decoding and re-encoding
	 * (here: fields out of number order) stays raw, so nothing changes. */
	Google__Protobuf__Any *raw = (Google__Protobuf__Any *)
		parse("type_url: \"type.googleapis.com/tensorflow.AssetFileDef\"\n"
		      "value: \"\\022\\001a\\n\\000\"\n",
		      &google__protobuf__any__descriptor, "non-canonical Any");
	if (raw) {
		is_print(&raw->base,
			 "type_url: \"type.googleapis.com/tensorflow.AssetFileDef\"\n"
			 "value: \"\\022\\001a\\n\\000\"\n",
			 "non-canonical Any value printed raw");
		protobuf_c_message_free_unpacked(&raw->base, NULL);
	}
	/* A top-level Any, and an Any whose value is empty. */
	Google__Protobuf__Any *top = (Google__Protobuf__Any *)
		parse("[type.googleapis.com/tensorflow.AssetFileDef] {}",
		      &google__protobuf__any__descriptor, "top-level Any");
	if (top) {
		ok(top->value.len == 0, "empty expanded Any has empty value");
		is_print(&top->base,
			 "[type.googleapis.com/tensorflow.AssetFileDef] {\n}\n",
			 "top-level Any");
		protobuf_c_message_free_unpacked(&top->base, NULL);
	}
	parse_fails("[type.googleapis.com/tensorflow.AssetFileDef] {}\n"
		    "type_url: \"x\"", &google__protobuf__any__descriptor,
		    NAME ":2:1: field 'type_url' is given more than once");
	parse_fails("[type.googleapis.com/tensorflow.AssetFileDef] { bogus: 1 }",
		    &google__protobuf__any__descriptor,
		    NAME ":1:49: unknown field 'bogus' in tensorflow.AssetFileDef");
	parse_fails("[tensorflow.AssetFileDef] {}",
		    &google__protobuf__any__descriptor,
		    NAME ":1:1: type URL 'tensorflow.AssetFileDef' has no '/'");
	parse_fails("[type.googleapis.com/tensorflow.AssetFileDef {}",
		    &google__protobuf__any__descriptor,
		    NAME ":1:46: expected a type URL and ']' after '['");
	protobuf_c_message_free_unpacked(&mg->base, NULL);
}

/* ------------------------------------------------------------ OpList */

static void test_oplist(void)
{
	const char *text =
		"op {\n"
		"  name: \"Split\"\n"
		"  input_arg { name: \"split_dim\" type: DT_INT32 }\n"
		"  input_arg { name: \"value\" type_attr: \"T\" }\n"
		"  output_arg { name: \"output\" type_attr: \"T\" number_attr: \"num_split\" }\n"
		"  attr { name: \"num_split\" type: \"int\" has_minimum: true minimum: 1 }\n"
		"  attr { name: \"T\" type: \"type\" }\n"
		"}\n"
		"op {\n"
		"  name: \"Neg\"\n"
		"  attr {\n"
		"    name: \"x\" type: \"int\"\n"
		"    default_value { i: -3 }\n"
		"    has_minimum: true minimum: -5\n"
		"    allowed_values { list { type: [DT_FLOAT, DT_INT32] } }\n"
		"  }\n"
		"  is_stateful: true\n"
		"}\n";
	Tensorflow__OpList *l = (Tensorflow__OpList *)
		parse(text, &tensorflow__op_list__descriptor, "OpList");
	if (!l) {
		tap_skip(4, "no OpList");
		return;
	}
	ok(l->n_op == 2 && !strcmp(l->op[0]->name, "Split") &&
	   l->op[0]->n_input_arg == 2 && l->op[0]->n_output_arg == 1 &&
	   !strcmp(l->op[0]->output_arg[0]->number_attr, "num_split") &&
	   l->op[0]->input_arg[0]->type == TENSORFLOW__DATA_TYPE__DT_INT32,
	   "OpDef arguments");
	Tensorflow__OpDef__AttrDef *a = l->n_op == 2 && l->op[1]->n_attr == 1 ?
		l->op[1]->attr[0] : NULL;
	ok(a && a->default_value && a->default_value->i == -3 &&
	   a->has_minimum && a->minimum == -5 && a->allowed_values &&
	   a->allowed_values->list && a->allowed_values->list->n_type == 2 &&
	   l->op[1]->is_stateful, "AttrDef default, minimum, allowed values");
	round_trip(&l->base, "OpList");
	protobuf_c_message_free_unpacked(&l->base, NULL);
}

/* ------------------------------------------------------------ scalars */

static void test_scalars(void)
{
	const char *text =
		"# every scalar type\n"
		"i32: -0x10  # hex, negative\n"
		"i64: 0777\n"
		"u32: 0xFFFFFFFF u64: 0xffffffffffffffff\n"
		"s32: -2147483648; s64: -9223372036854775808\n"
		"f32: 4294967295, f64: 18446744073709551615\n"
		"sf32: 2147483647 sf64: -9223372036854775808\n"
		"fl: -Infinity; db: 1e-5,\n"
		"b: True\n"
		"s: 'single' \"\\\"double\\\"\" ' \\'\\?\\a\\b\\f\\v\\r\\t\\n\\\\'\n"
		"by: \"\\x00\\xfF\\377\\1\\0a\"\n"
		"c: 2\n"
		"child: < i32: 1 >\n"
		"ri: [] ri: [1, -2] ri: 3\n"
		"rs: [\"x\"]\n"
		"rm: [{i32: 1}, <i32: 2>] rm {}\n"
		"om { i32: 5 }\n"
		"counts { key: \"b\" value: 2 } counts { key: \"a\" value: 1 }\n"
		"counts { key: \"b\" value: 3 }\n"
		"rd: [0.5, 2]\n"
		"rb: [\"\", \"\\001\"]\n"
		"with_default: 7\n";
	Getest__Scalars *s = (Getest__Scalars *)
		parse(text, &getest__scalars__descriptor, "all scalar types");
	if (!s) {
		tap_skip(13, "no Scalars");
		return;
	}
	ok(s->has_i32 && s->i32 == -16 && s->has_i64 && s->i64 == 511 &&
	   s->u32 == UINT32_MAX && s->u64 == UINT64_MAX &&
	   s->s32 == INT32_MIN && s->s64 == INT64_MIN &&
	   s->f32 == UINT32_MAX && s->f64 == UINT64_MAX &&
	   s->sf32 == INT32_MAX && s->sf64 == INT64_MIN,
	   "integers of every type at their bounds; hex and octal");
	ok(s->has_fl && isinf(s->fl) && s->fl < 0 && s->db == 1e-5,
	   "float and double");
	ok(s->has_b && s->b == 1, "bool True");
	is_string("single\"double\" '?\a\b\f\v\r\t\n\\", s->s,
		  "string: quotes, escapes, concatenation");
	ok(s->has_by && s->by.len == 6 &&
	   !memcmp(s->by.data, "\0\xff\xff\x01\0a", 6), "bytes with NULs");
	ok(s->has_c && s->c == GETEST__COLOR__BLUE, "enum by number");
	ok(s->child && s->child->has_i32 && s->child->i32 == 1, "< > message");
	ok(s->n_ri == 3 && s->ri[0] == 1 && s->ri[1] == -2 && s->ri[2] == 3,
	   "repeated int: empty list, list, single");
	ok(s->n_rm == 3 && s->rm[0]->i32 == 1 && s->rm[1]->i32 == 2 &&
	   !s->rm[2]->has_i32, "repeated message as list and block");
	ok(s->pick_case == GETEST__SCALARS__PICK_OM && s->om && s->om->i32 == 5,
	   "oneof message member sets the case");
	ok(s->n_counts == 3 && !strcmp(s->counts[0]->key, "b") &&
	   !strcmp(s->counts[1]->key, "a") && s->counts[2]->value == 3,
	   "map order and duplicate keys kept");
	ok(s->has_with_default && s->with_default == 7,
	   "proto2 field set to its default has has_");
	is_print(&s->base,
		 "i32: -16\n"
		 "i64: 511\n"
		 "u32: 4294967295\n"
		 "u64: 18446744073709551615\n"
		 "s32: -2147483648\n"
		 "s64: -9223372036854775808\n"
		 "f32: 4294967295\n"
		 "f64: 18446744073709551615\n"
		 "sf32: 2147483647\n"
		 "sf64: -9223372036854775808\n"
		 "fl: -inf\n"
		 "db: 1e-05\n"
		 "b: true\n"
		 "s: \"single\\\"double\\\" \\'?\\007\\010\\014\\013\\r\\t\\n\\\\\"\n"
		 "by: \"\\000\\377\\377\\001\\000a\"\n"
		 "c: BLUE\n"
		 "child {\n"
		 "  i32: 1\n"
		 "}\n"
		 "ri: 1\n"
		 "ri: -2\n"
		 "ri: 3\n"
		 "rs: \"x\"\n"
		 "rm {\n"
		 "  i32: 1\n"
		 "}\n"
		 "rm {\n"
		 "  i32: 2\n"
		 "}\n"
		 "rm {\n"
		 "}\n"
		 "om {\n"
		 "  i32: 5\n"
		 "}\n"
		 "with_default: 7\n"
		 "counts {\n"
		 "  key: \"b\"\n"
		 "  value: 2\n"
		 "}\n"
		 "counts {\n"
		 "  key: \"a\"\n"
		 "  value: 1\n"
		 "}\n"
		 "counts {\n"
		 "  key: \"b\"\n"
		 "  value: 3\n"
		 "}\n"
		 "rd: 0.5\n"
		 "rd: 2\n"
		 "rb: \"\"\n"
		 "rb: \"\\001\"\n",
		 "every scalar type");
	round_trip(&s->base, "Scalars");
	protobuf_c_message_free_unpacked(&s->base, NULL);

	/* Presence: unset proto2 fields print nothing, defaults included. */
	Getest__Scalars *e = (Getest__Scalars *)
		parse("", &getest__scalars__descriptor, "empty input");
	if (e) {
		is_print(&e->base, "", "empty message prints nothing");
		protobuf_c_message_free_unpacked(&e->base, NULL);
	}
	Getest__Scalars *o = (Getest__Scalars *)
		parse("oi: 0 b: 0 s: \"\"", &getest__scalars__descriptor,
		      "zero values");
	if (o) {
		is_print(&o->base, "b: false\ns: \"\"\noi: 0\n",
			 "set zero values and the active oneof member print");
		round_trip(&o->base, "zero values");
		protobuf_c_message_free_unpacked(&o->base, NULL);
	}
	/* len is honoured: the text need not end with a NUL. */
	ProtobufCMessage *m = NULL;
	int rc = ge_textpb_parse("i32: 12345", 7, &getest__scalars__descriptor,
				 NAME, &m, NULL);
	ok(rc == GE_OK && m && ((Getest__Scalars *)m)->i32 == 12,
	   "parses only len bytes");
	protobuf_c_message_free_unpacked(m, NULL);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
	const ProtobufCMessageDescriptor *S = &getest__scalars__descriptor;
	parse_fails("name: \"a\"\n  bogus: 1\n", &tensorflow__node_def__descriptor,
		    NAME ":2:3: unknown field 'bogus' in tensorflow.NodeDef");
	parse_fails("s: \"ab\\q\"", S,
		    NAME ":1:7: invalid escape sequence '\\q'");
	parse_fails("s: \"\\x\"", S, NAME ":1:5: escape '\\x' needs hex digits");
	parse_fails("s: \"\\u12\"", S, NAME ":1:5: escape '\\u' needs 4 hex digits");
	parse_fails("s: \"\\ud800\"", S,
		    NAME ":1:5: escape '\\ud800' is not a Unicode code point");
	parse_fails("by: \"\\400\"", S,
		    NAME ":1:6: octal escape '\\400' is above \\377");
	parse_fails("s: \"abc", S, NAME ":1:4: unterminated string");
	parse_fails("s: \"abc\ni32: 1\n", S, NAME ":1:4: unterminated string");
	parse_fails("child { i32: 1", S,
		    NAME ":1:15: unexpected end of input, expected '}'");
	parse_fails("child < i32: 1 }", S,
		    NAME ":1:16: expected field name, got '}'");
	parse_fails("i32:", S, NAME ":1:5: expected integer for field 'i32', "
		    "got end of input");
	parse_fails("}", S, NAME ":1:1: expected field name, got '}'");
	parse_fails("i32 1", S, NAME ":1:5: expected ':' after field 'i32', got '1'");
	parse_fails("i32: [1]", S,
		    NAME ":1:6: field 'i32' is not repeated; a list is not allowed");
	parse_fails("ri: [1, 2", S, NAME ":1:10: expected ',' or ']' in the list "
		    "of field 'ri', got end of input");
	parse_fails("ri: [1,]", S, NAME ":1:8: expected integer for field 'ri', "
		    "got ']'");
	parse_fails("i32: 1 i32: 2", S,
		    NAME ":1:8: field 'i32' is given more than once");
	parse_fails("os: \"a\" oi: 1", S, NAME ":1:9: field 'oi' is in the same "
		    "oneof as 'os', which is already set");
	parse_fails("c: PURPLE", S, NAME ":1:4: unknown value 'PURPLE' of enum "
		    "getest.Color (field 'c')");
	parse_fails("s: \"a\\0b\"", S,
		    NAME ":1:4: string field 's' cannot hold a NUL byte");
	parse_fails("i32: 1 @", S, NAME ":1:8: unexpected character '@'");
	parse_fails("i32: 1 \x01", S, NAME ":1:8: unexpected byte \\001");
	parse_fails("[foo.bar] { }", S, NAME ":1:1: extensions are not supported "
		    "('[foo.bar]' in getest.Scalars)");
	parse_fails("i32: 1.5", S,
		    NAME ":1:6: expected integer for field 'i32', got '1.5'");
	parse_fails("b: 2", S, NAME ":1:4: integer 2 is not a bool (field 'b')");
	parse_fails("b: yes", S,
		    NAME ":1:4: expected true or false for field 'b', got 'yes'");
	parse_fails("fl: \"1\"", S,
		    NAME ":1:5: expected number for field 'fl', got a string");
	parse_fails("s: 1", S, NAME ":1:4: expected string for field 's', got '1'");
	parse_fails("child: 1", S,
		    NAME ":1:8: expected '{' for field 'child', got '1'");
	parse_fails("i32: 09", S, NAME ":1:6: a number starting with 0 is octal; "
		    "'9' is not an octal digit");
	parse_fails("i32: 12abc", S,
		    NAME ":1:8: need space between number and identifier");
	parse_fails("i32: 0x", S, NAME ":1:6: '0x' must be followed by hex digits");

	/* Range checks, one per integer type. */
	parse_fails("i32: 2147483648", S, NAME ":1:6: integer 2147483648 out of "
		    "range for int32 field 'i32'");
	parse_fails("i32: -2147483649", S, NAME ":1:6: integer -2147483649 out of "
		    "range for int32 field 'i32'");
	parse_fails("u32: -1", S,
		    NAME ":1:6: integer -1 out of range for uint32 field 'u32'");
	parse_fails("u32: 4294967296", S, NAME ":1:6: integer 4294967296 out of "
		    "range for uint32 field 'u32'");
	parse_fails("i64: 9223372036854775808", S, NAME ":1:6: integer "
		    "9223372036854775808 out of range for int64 field 'i64'");
	parse_fails("i64: -9223372036854775809", S, NAME ":1:6: integer "
		    "-9223372036854775809 out of range for int64 field 'i64'");
	parse_fails("u64: 18446744073709551616", S, NAME ":1:6: integer "
		    "18446744073709551616 out of range for uint64 field 'u64'");
	parse_fails("u64: -1", S,
		    NAME ":1:6: integer -1 out of range for uint64 field 'u64'");
	parse_fails("s32: 0x80000000", S, NAME ":1:6: integer 0x80000000 out of "
		    "range for sint32 field 's32'");
	parse_fails("s64: 9223372036854775808", S, NAME ":1:6: integer "
		    "9223372036854775808 out of range for sint64 field 's64'");
	parse_fails("f32: 0x100000000", S, NAME ":1:6: integer 0x100000000 out "
		    "of range for fixed32 field 'f32'");
	parse_fails("f64: -1", S,
		    NAME ":1:6: integer -1 out of range for fixed64 field 'f64'");
	parse_fails("sf32: 2147483648", S, NAME ":1:7: integer 2147483648 out of "
		    "range for sfixed32 field 'sf32'");
	parse_fails("sf64: -9223372036854775809", S, NAME ":1:7: integer "
		    "-9223372036854775809 out of range for sfixed64 field 'sf64'");
	parse_fails("c: 2147483648", S, NAME ":1:4: integer 2147483648 out of "
		    "range for enum field 'c'");

	/* Nesting: 100 levels parse, 101 are refused before the stack is. */
	ge_buf b = GE_BUF_INIT;
	for (int i = 0; i < 100; i++)
		ge_buf_adds(&b, "child { ");
	for (int i = 0; i < 100; i++)
		ge_buf_adds(&b, "} ");
	ProtobufCMessage *m = parse((char *)b.data, S, "100 nested levels");
	if (m) {
		round_trip(m, "100 nested levels");
		protobuf_c_message_free_unpacked(m, NULL);
	}
	b.len = 0;
	for (int i = 0; i < 101; i++)
		ge_buf_adds(&b, "child { ");
	parse_fails((char *)b.data, S,
		    NAME ":1:807: messages nested deeper than 100 levels");
	b.len = 0;
	for (int i = 0; i < 100000; i++)
		ge_buf_adds(&b, "rm [{");
	parse_fails((char *)b.data, S,
		    NAME ":1:505: messages nested deeper than 100 levels");
	b.len = 0;
	for (int i = 0; i < 100000; i++)
		ge_buf_adds(&b, "rm {");
	parse_fails((char *)b.data, S,
		    NAME ":1:404: messages nested deeper than 100 levels");
	ge_buf_free(&b);
}

/* Every prefix of a valid text, and the text with single bytes replaced,
 * parse or fail cleanly (the sanitizers watch for the rest). */
static void test_hostile(void)
{
	const char *texts[] = {meta_text,
		"i32: -0x10 s: 'a\\n\\x41\\u00e9' by: \"\\001\" rm [{i32: 1}, <>]\n"
		"counts { key: \"k\" value: 1 } fl: -inf db: 1e5 c: BLUE\n"
		"child { child { rs: [\"x\", 'y'] } } os: \"z\" rd: [1, 2.5f]\n"};
	const ProtobufCMessageDescriptor *ds[] = {
		&tensorflow__meta_graph_def__descriptor,
		&getest__scalars__descriptor};
	static const char repl[] = {'{', '}', '[', '"', '\\', ':', '#', 0,
				    '\n', (char)0xff, '<', '-'};
	int bad = 0, runs = 0;
	for (int t = 0; t < 2; t++) {
		size_t n = strlen(texts[t]);
		char *buf = ge_xmalloc(n + 1);
		for (size_t i = 0; i <= n; i++) {
			for (size_t r = 0; r <= sizeof repl; r++) {
				memcpy(buf, texts[t], n);
				size_t len = i;
				if (r < sizeof repl) {
					if (i == n)
						continue;
					buf[i] = repl[r];
					len = n;
				}
				ProtobufCMessage *m = NULL;
				ge_error err = {0, ""};
				int rc = ge_textpb_parse(buf, len, ds[t], NAME,
							 &m, &err);
				runs++;
				if (rc == GE_OK) {
					if (!m)
						bad++;
					char *p = print(m);
					free(p);
					protobuf_c_message_free_unpacked(m, NULL);
				} else if (rc != GE_EFORMAT || m ||
					   strncmp(err.msg, NAME ":", 8) != 0) {
					if (!bad)
						tap_diag("  %s", err.msg);
					bad++;
				}
			}
		}
		free(buf);
	}
	is_int(0, bad, "%d truncated or corrupted texts parse or fail cleanly",
	       runs);
}

int main(void)
{
	test_node_def();
	test_tensor();
	test_any();
	test_oplist();
	test_scalars();
	test_errors();
	test_hostile();
	return tap_done();
}
