/*
 * t/jsonpb.c: JSON through Jansson and the proto3 JSON mapping
 * (lib/base/jsonpb.c): what the project asks of the reader on top of Jansson;
 * every kind of field of the mapping, both ways, on TensorFlow's messages
 * and on the test-only messages of t/textpb_test.proto; truncated and
 * corrupted input never crashes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonpb.h"
#include "tap.h"
#include "base/textpb.h"
#include "textpb_test.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/wrappers.pb-c.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define NAME "t.json"

/* ---------------------------------------------------------------- reader */

/* Jansson reads the text; what is checked here is what the project asks
 * of it on top: duplicate members refused, \u0000 kept, a byte order mark
 * skipped, positions in messages, and integral numbers. */
static json_t *jload(const char *text, const char *what)
{
	json_t *v = NULL;
	ge_error err = {0, ""};
	int rc = ge_json_load(text, strlen(text), NAME, &v, &err);
	if (!ok(rc == GE_OK && v, "json: %s", what))
		tap_diag("  %s", err.msg);
	return v;
}

static void jfails(const char *text, const char *want_prefix)
{
	json_t *v = (json_t *)&v;
	ge_error err = {0, ""};
	int rc = ge_json_load(text, strlen(text), NAME, &v, &err);
	ok(rc == GE_EFORMAT && v == NULL, "json refused: %s", text);
	if (!ok(!strncmp(err.msg, want_prefix, strlen(want_prefix)),
		"  message starts %s", want_prefix))
		tap_diag("  got: %s", err.msg);
}

static void test_reader(void)
{
	json_t *v = jload("\xef\xbb\xbf{\"s\": \"a\\u0000b\", \"n\": -1.5e2, "
			  "\"i\": 12, \"e\": 1e3, \"f\": 2.5}",
			  "byte order mark, NUL in a string");
	if (v) {
		const json_t *s = json_object_get(v, "s");
		ok(json_string_length(s) == 3 &&
		   !memcmp(json_string_value(s), "a\0b", 3), "\\u0000 kept");
		int64_t i = 0;
		ok(!ge_json_int64(json_object_get(v, "i"), &i) && i == 12,
		   "integer");
		ok(!ge_json_int64(json_object_get(v, "e"), &i) && i == 1000,
		   "1e3 is an integer");
		ok(ge_json_int64(json_object_get(v, "f"), &i) == -1,
		   "2.5 is not");
		ok(ge_json_int64(json_object_get(v, "s"), &i) == -1,
		   "a string is not");
		is_string("number", ge_json_type_name(json_object_get(v, "n")),
			  "type name");
		json_decref(v);
	}
	jfails("{\"a\": 1, \"a\": 2}", "t.json:1:");
	jfails("{\"a\": 1,\n \"b\": }", "t.json:2:");
	jfails("[1, 2", "t.json:1:");
	jfails("\"\xc0\x80\"", "t.json:1:");
	jfails("NaN", "t.json:1:");
	jfails("", "t.json:");

	/* nesting: Jansson stops at its depth limit, the mapping at its own */
	size_t n = 1000000;
	char *deep = malloc(n + 1);
	memset(deep, '[', n);
	deep[n] = 0;
	json_t *d = (json_t *)&d;
	ok(ge_json_load(deep, n, NAME, &d, NULL) == GE_EFORMAT && !d,
	   "a million open brackets are refused, no crash");
	free(deep);
	ge_buf nest = GE_BUF_INIT;
	for (int i = 0; i < 300; i++)
		ge_buf_adds(&nest, "{\"attr\":{\"a\":{\"func\":");
	ge_buf_adds(&nest, "{}");
	for (int i = 0; i < 300; i++)
		ge_buf_adds(&nest, "}}}");
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	ok(ge_jsonpb_parse((const char *)nest.data, nest.len,
			   &tensorflow__name_attr_list__descriptor, NAME, &m,
			   &err) == GE_EFORMAT && !m &&
	   strstr(err.msg, "nested deeper than"),
	   "messages nested 900 deep are refused, the path cut short: %.60s",
	   err.msg);
	ge_buf_free(&nest);

	/* the writer: text that reads back as the same values */
	v = jload("{\"k\": [1, 2.5, \"x\\u00e9\", true, null, {}]}",
		  "document to dump");
	if (v) {
		ge_buf b = GE_BUF_INIT;
		ge_json_dump_compact(v, &b);
		json_t *w = NULL;
		ok(!ge_json_load((const char *)b.data, b.len, NAME, &w, NULL) &&
		   json_equal(v, w), "dump reads back equal: %.*s",
		   (int)b.len, (const char *)b.data);
		json_decref(w);
		ge_buf_free(&b);
		json_decref(v);
	}
}

/* A document with every construct, for truncation and corruption. */
static const char *rich =
	"{\"name\": \"n\\u00e9\\ud83d\\ude00\", \"op\": \"MatMul\",\n"
	" \"input\": [\"a\", \"b:1\", \"^c\"], \"device\": \"/cpu:0\",\n"
	" \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, \"i\": {\"i\": \"-3\"},\n"
	"  \"f\": {\"f\": -1.5e-3}, \"b\": {\"b\": true}, \"s\": {\"s\": \"TkhXQw==\"},\n"
	"  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"-1\"}, {\"size\": 3}]}},\n"
	"  \"l\": {\"list\": {\"i\": [\"1\", 2], \"f\": [0.5, \"NaN\"], \"b\": [false],"
	" \"type\": [\"DT_INT32\", 9], \"s\": [\"YQ\", \"Yg==\"]}},\n"
	"  \"t\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {},"
	" \"floatVal\": [1, 2.5e0], \"tensorContent\": \"AAEC_-8\"}},\n"
	"  \"fn\": {\"func\": {\"name\": \"g\", \"attr\": {\"x\": {\"i\": 1}}}}},"
	" \"experimentalType\": null}";

static void test_truncation_and_corruption(void)
{
	size_t n = strlen(rich);
	size_t refused = 0, named = 0;
	for (size_t k = 0; k < n; k++) {
		json_t *d = NULL;
		ge_error err = {0, ""};
		if (ge_json_load(rich, k, NAME, &d, &err) == GE_EFORMAT && !d)
			refused++;
		if (!strncmp(err.msg, "t.json:", 7))
			named++;
		json_decref(d);
		ProtobufCMessage *m = NULL;
		if (ge_jsonpb_parse(rich, k, &tensorflow__node_def__descriptor,
				    NAME, &m, NULL) == GE_OK)
			protobuf_c_message_free_unpacked(m, NULL);
	}
	is_int((long long)n, (long long)refused,
	       "every strict prefix of a document is refused");
	is_int((long long)n, (long long)named,
	       "  each with a positioned message");
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	int rc = ge_jsonpb_parse(rich, n, &tensorflow__node_def__descriptor,
				 NAME, &m, &err);
	if (!ok(rc == GE_OK, "the whole document maps to a NodeDef"))
		tap_diag("  %s", err.msg);
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);

	/* random byte changes: whatever the outcome, no crash or leak */
	char *buf = malloc(n);
	uint32_t seed = 12345;
	size_t parsed = 0;
	for (int it = 0; it < 3000; it++) {
		memcpy(buf, rich, n);
		int changes = 1 + it % 3;
		for (int c = 0; c < changes; c++) {
			seed = seed * 1103515245u + 12345u;
			size_t pos = (seed >> 8) % n;
			seed = seed * 1103515245u + 12345u;
			buf[pos] = (char)(seed >> 16);
		}
		m = NULL;
		if (ge_jsonpb_parse(buf, n, &tensorflow__node_def__descriptor,
				    NAME, &m, NULL) == GE_OK) {
			parsed++;
			protobuf_c_message_free_unpacked(m, NULL);
		}
	}
	free(buf);
	ok(1, "3000 corrupted documents survived (%zu still mapped)", parsed);
}

/* ---------------------------------------------------------------- mapping */

static ProtobufCMessage *pparse(const char *text,
				const ProtobufCMessageDescriptor *d,
				const char *what)
{
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	int rc = ge_jsonpb_parse(text, strlen(text), d, NAME, &m, &err);
	if (!ok(rc == GE_OK && m != NULL, "map: %s", what))
		tap_diag("  %s", err.msg);
	return m;
}

static void pfails(const char *text, const ProtobufCMessageDescriptor *d,
		   const char *want)
{
	ProtobufCMessage *m = (ProtobufCMessage *)&m;
	ge_error err = {0, ""};
	int rc = ge_jsonpb_parse(text, strlen(text), d, NAME, &m, &err);
	ok(rc == GE_EFORMAT && m == NULL, "map refused: %s", want);
	is_string(want, err.msg, "  message");
	if (rc == GE_OK && m)
		protobuf_c_message_free_unpacked(m, NULL);
}

static const Tensorflow__AttrValue *attr(const Tensorflow__NodeDef *n,
					 const char *k)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attr[i]->key, k))
			return n->attr[i]->value;
	return NULL;
}

/* Packed bytes of m, for comparing two messages. */
static uint8_t *packed(const ProtobufCMessage *m, size_t *n)
{
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(*n + 1);
	protobuf_c_message_pack(m, b);
	return b;
}

static void test_nodedef(void)
{
	Tensorflow__NodeDef *n = (Tensorflow__NodeDef *)pparse(
		rich, &tensorflow__node_def__descriptor, "NodeDef, every attr kind");
	if (!n)
		return;
	is_string("n\xc3\xa9\xf0\x9f\x98\x80", n->name, "name with escapes");
	is_string("MatMul", n->op, "op");
	ok(n->n_input == 3 && !strcmp(n->input[1], "b:1") &&
	   !strcmp(n->input[2], "^c"), "inputs");
	is_string("/cpu:0", n->device, "device");
	is_int(9, (long long)n->n_attr, "9 attrs");
	ok(n->experimental_type == NULL, "null message: left unset");
	const Tensorflow__AttrValue *a;
	a = attr(n, "T");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
	   a->type == TENSORFLOW__DATA_TYPE__DT_FLOAT, "type by enum name");
	a = attr(n, "i");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I && a->i == -3,
	   "int64 from a string");
	a = attr(n, "f");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_F &&
	   a->f == -1.5e-3f, "float");
	a = attr(n, "b");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && a->b,
	   "bool");
	a = attr(n, "s");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S &&
	   a->s.len == 4 && !memcmp(a->s.data, "NHWC", 4), "bytes from base64");
	a = attr(n, "shape");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE &&
	   a->shape->n_dim == 2 && a->shape->dim[0]->size == -1 &&
	   a->shape->dim[1]->size == 3, "shape, sizes as string and number");
	a = attr(n, "l");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
	   a->list->n_i == 2 && a->list->i[0] == 1 && a->list->i[1] == 2 &&
	   a->list->n_f == 2 && a->list->f[0] == 0.5f && isnan(a->list->f[1]) &&
	   a->list->n_b == 1 && !a->list->b[0] && a->list->n_type == 2 &&
	   a->list->type[0] == TENSORFLOW__DATA_TYPE__DT_INT32 &&
	   a->list->type[1] == TENSORFLOW__DATA_TYPE__DT_INT64 &&
	   a->list->n_s == 2 && a->list->s[0].len == 1 &&
	   a->list->s[0].data[0] == 'a' && a->list->s[1].data[0] == 'b',
	   "list of every kind; enum by number; base64 with and without "
	   "padding");
	a = attr(n, "t");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
	   a->tensor->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT &&
	   a->tensor->tensor_shape && a->tensor->tensor_shape->n_dim == 0 &&
	   a->tensor->n_float_val == 2 && a->tensor->float_val[1] == 2.5f &&
	   a->tensor->tensor_content.len == 5 &&
	   !memcmp(a->tensor->tensor_content.data, "\x00\x01\x02\xff\xef", 5),
	   "tensor; URL-safe base64 without padding");
	a = attr(n, "fn");
	ok(a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC &&
	   !strcmp(a->func->name, "g") && a->func->n_attr == 1 &&
	   !strcmp(a->func->attr[0]->key, "x") && a->func->attr[0]->value->i == 1,
	   "func with a nested attr map");

	/* the same node in the text format packs to the same bytes */
	const char *text =
		"name: 'n\\303\\251\\360\\237\\230\\200' op: 'MatMul'\n"
		"input: 'a' input: 'b:1' input: '^c' device: '/cpu:0'\n"
		"attr { key: 'T' value { type: DT_FLOAT } }\n"
		"attr { key: 'i' value { i: -3 } }\n"
		"attr { key: 'f' value { f: -1.5e-3 } }\n"
		"attr { key: 'b' value { b: true } }\n"
		"attr { key: 's' value { s: 'NHWC' } }\n"
		"attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 3 } } } }\n"
		"attr { key: 'l' value { list { s: 'a' s: 'b' i: 1 i: 2 f: 0.5 f: nan"
		" b: false type: DT_INT32 type: DT_INT64 } } }\n"
		"attr { key: 't' value { tensor { dtype: DT_FLOAT tensor_shape {}"
		" tensor_content: '\\000\\001\\002\\377\\357' float_val: 1"
		" float_val: 2.5 } } }\n"
		"attr { key: 'fn' value { func { name: 'g' attr { key: 'x' value"
		" { i: 1 } } } } }\n";
	ProtobufCMessage *t = NULL;
	ge_error err = {0, ""};
	if (ge_textpb_parse(text, strlen(text), &tensorflow__node_def__descriptor,
			    "t.pbtxt", &t, &err))
		tap_diag("%s", err.msg);
	size_t la = 0, lb = 0;
	uint8_t *pa = packed(&n->base, &la);
	uint8_t *pb = t ? packed(t, &lb) : NULL;
	ok(t && la == lb && !memcmp(pa, pb, la),
	   "JSON and text format give the same NodeDef bytes (%zu, %zu)", la,
	   lb);
	free(pa);
	free(pb);
	if (t)
		protobuf_c_message_free_unpacked(t, NULL);
	protobuf_c_message_free_unpacked(&n->base, NULL);

	n = (Tensorflow__NodeDef *)pparse(
		"{\"name\":null,\"op\":\"X\",\"attr\":{\"v\":{\"tensor\":"
		"{\"tensor_shape\":{\"dim\":[{\"size\":\"2\"}]},\"float_val\":[1]}}},"
		"\"experimental_debug_info\":{\"original_node_names\":[\"o\"]}}",
		&tensorflow__node_def__descriptor,
		"proto field names; null name");
	if (n) {
		is_string("", n->name, "null: the default");
		a = attr(n, "v");
		ok(a && a->tensor->tensor_shape->dim[0]->size == 2 &&
		   a->tensor->n_float_val == 1, "tensor_shape, float_val");
		ok(n->experimental_debug_info &&
		   n->experimental_debug_info->n_original_node_names == 1,
		   "experimental_debug_info");
		protobuf_c_message_free_unpacked(&n->base, NULL);
	}
}

static void test_tensor(void)
{
	Tensorflow__TensorProto *t = (Tensorflow__TensorProto *)pparse(
		"{\"dtype\":\"DT_HALF\",\"tensorShape\":{\"dim\":[{\"size\":\"2\","
		"\"name\":\"x\"}],\"unknownRank\":false},\"versionNumber\":1,"
		"\"tensorContent\":\"AAEC/+8=\",\"halfVal\":[15360,\"48384\"],"
		"\"int64Val\":[\"-9223372036854775808\",\"9223372036854775807\"],"
		"\"uint64Val\":[\"18446744073709551615\",1e19],"
		"\"doubleVal\":[\"Infinity\",\"-Infinity\",\"NaN\",1e308,\"1.5\","
		"-0.0],\"stringVal\":[\"aGk=\",\"\"],\"boolVal\":[true,false],"
		"\"scomplexVal\":[1,2],\"uint32Val\":[4294967295],"
		"\"floatVal\":[1e-45,3.4028234663852886e38,\"-Infinity\"]}",
		&tensorflow__tensor_proto__descriptor, "TensorProto");
	if (!t)
		return;
	ok(t->dtype == TENSORFLOW__DATA_TYPE__DT_HALF && t->version_number == 1,
	   "dtype, version");
	ok(t->tensor_shape && t->tensor_shape->n_dim == 1 &&
	   !strcmp(t->tensor_shape->dim[0]->name, "x"), "shape with a dim name");
	ok(t->tensor_content.len == 5 &&
	   !memcmp(t->tensor_content.data, "\x00\x01\x02\xff\xef", 5),
	   "standard base64 with padding");
	ok(t->n_half_val == 2 && t->half_val[0] == 15360 &&
	   t->half_val[1] == 48384, "half_val as number and string");
	ok(t->n_int64_val == 2 && t->int64_val[0] == INT64_MIN &&
	   t->int64_val[1] == INT64_MAX, "int64 extremes");
	ok(t->n_uint64_val == 2 && t->uint64_val[0] == UINT64_MAX &&
	   t->uint64_val[1] == 10000000000000000000ull,
	   "uint64: max as a string, 1e19 as a number");
	ok(t->n_double_val == 6 && isinf(t->double_val[0]) &&
	   t->double_val[0] > 0 && isinf(t->double_val[1]) &&
	   t->double_val[1] < 0 && isnan(t->double_val[2]) &&
	   t->double_val[3] == 1e308 && t->double_val[4] == 1.5 &&
	   signbit(t->double_val[5]), "double specials, numeric string, -0");
	ok(t->n_string_val == 2 && t->string_val[0].len == 2 &&
	   !memcmp(t->string_val[0].data, "hi", 2) && t->string_val[1].len == 0,
	   "string_val (bytes)");
	ok(t->n_bool_val == 2 && t->bool_val[0] && !t->bool_val[1], "bool_val");
	ok(t->n_scomplex_val == 2 && t->n_uint32_val == 1 &&
	   t->uint32_val[0] == UINT32_MAX, "scomplex_val, uint32_val");
	ok(t->n_float_val == 3 && t->float_val[0] > 0 &&
	   t->float_val[1] == 3.4028234663852886e38f && isinf(t->float_val[2]),
	   "float_val: denormal, FLT_MAX, -Infinity");
	protobuf_c_message_free_unpacked(&t->base, NULL);
}

static void test_graphdef(void)
{
	Tensorflow__GraphDef *g = (Tensorflow__GraphDef *)pparse(
		"{\"node\":[{\"name\":\"a\",\"op\":\"Const\"},{\"name\":\"b\","
		"\"op\":\"Identity\",\"input\":[\"a\"]}],\"versions\":{\"producer\":"
		"716,\"minConsumer\":\"12\",\"badConsumers\":[1,\"2\"]},\"library\":"
		"{\"function\":[{\"signature\":{\"name\":\"f\",\"inputArg\":[{\"name\":"
		"\"x\",\"type\":\"DT_FLOAT\"}]},\"nodeDef\":[{\"name\":\"c\",\"op\":"
		"\"Const\"}],\"ret\":{\"y\":\"x\"},\"attr\":{\"_noinline\":{\"b\":"
		"true}},\"argAttr\":{\"0\":{\"attr\":{\"_a\":{\"i\":\"1\"}}}},"
		"\"resourceArgUniqueId\":{\"1\":2,\"4294967295\":\"3\"}}],"
		"\"gradient\":[{\"functionName\":\"f\",\"gradientFunc\":\"g\"}]}}",
		&tensorflow__graph_def__descriptor, "GraphDef with a library");
	if (!g)
		return;
	ok(g->n_node == 2 && !strcmp(g->node[1]->input[0], "a"), "nodes");
	ok(g->versions && g->versions->producer == 716 &&
	   g->versions->min_consumer == 12 && g->versions->n_bad_consumers == 2 &&
	   g->versions->bad_consumers[1] == 2, "versions");
	Tensorflow__FunctionDef *f =
		g->library && g->library->n_function ? g->library->function[0]
						     : NULL;
	ok(f && !strcmp(f->signature->name, "f") &&
	   f->signature->n_input_arg == 1 &&
	   f->signature->input_arg[0]->type == TENSORFLOW__DATA_TYPE__DT_FLOAT,
	   "function signature");
	ok(f && f->n_node_def == 1 && f->n_ret == 1 &&
	   !strcmp(f->ret[0]->key, "y") && !strcmp(f->ret[0]->value, "x"),
	   "map<string,string>");
	ok(f && f->n_arg_attr == 1 && f->arg_attr[0]->key == 0 &&
	   f->arg_attr[0]->value->n_attr == 1, "map<uint32,message>");
	ok(f && f->n_resource_arg_unique_id == 2 &&
	   f->resource_arg_unique_id[0]->key == 1 &&
	   f->resource_arg_unique_id[0]->value == 2 &&
	   f->resource_arg_unique_id[1]->key == UINT32_MAX &&
	   f->resource_arg_unique_id[1]->value == 3, "map<uint32,uint32>");
	ok(g->library->n_gradient == 1 &&
	   !strcmp(g->library->gradient[0]->gradient_func, "g"), "gradient");
	protobuf_c_message_free_unpacked(&g->base, NULL);
}

static void test_scalars(void)
{
	Getest__Scalars *s = (Getest__Scalars *)pparse(
		"{\"i32\":-2147483648,\"i64\":\"-9223372036854775808\","
		"\"u32\":\"4294967295\",\"u64\":\"18446744073709551615\",\"s32\":-5,"
		"\"s64\":\"5\",\"f32\":7,\"f64\":\"8e0\",\"sf32\":-9,\"sf64\":"
		"\"-10\",\"fl\":0.1,\"db\":\"1e-300\",\"b\":false,\"s\":"
		"\"h\\u00e9\",\"by\":\"\",\"c\":\"BLUE\",\"child\":{\"i32\":1},"
		"\"ri\":[1,\"2\",3e0],\"rs\":[\"a\"],\"rm\":[{\"s\":\"x\"},{}],"
		"\"oi\":5,\"withDefault\":null,\"counts\":{\"a\":1,\"b\":-2},"
		"\"rd\":[0.5],\"rb\":[\"AA==\"]}",
		&getest__scalars__descriptor, "proto2 scalars of every type");
	if (!s)
		return;
	ok(s->has_i32 && s->i32 == INT32_MIN && s->i64 == INT64_MIN &&
	   s->u32 == UINT32_MAX && s->u64 == UINT64_MAX, "integer extremes");
	ok(s->s32 == -5 && s->s64 == 5 && s->f32 == 7 && s->f64 == 8 &&
	   s->sf32 == -9 && s->sf64 == -10, "zigzag and fixed types");
	ok(s->fl == 0.1f && s->db == 1e-300, "float rounds once, double");
	ok(s->has_b && !s->b, "false is present in proto2");
	is_string("h\xc3\xa9", s->s, "string");
	ok(s->has_by && s->by.len == 0, "empty bytes");
	ok(s->has_c && s->c == GETEST__COLOR__BLUE, "enum");
	ok(s->child && s->child->i32 == 1, "nested message");
	ok(s->n_ri == 3 && s->ri[2] == 3 && s->n_rs == 1 && s->n_rm == 2,
	   "repeated");
	ok(s->pick_case == GETEST__SCALARS__PICK_OI && s->oi == 5, "oneof");
	ok(!s->has_with_default && s->with_default == 7,
	   "null keeps the proto2 default");
	ok(s->n_counts == 2 && s->counts[1]->value == -2, "map<string,int32>");
	ok(s->n_rd == 1 && s->n_rb == 1 && s->rb[0].len == 1, "packed, bytes");
	protobuf_c_message_free_unpacked(&s->base, NULL);

	ProtobufCMessage *m = pparse("{\"os\":null,\"oi\":3}",
				     &getest__scalars__descriptor,
				     "null member of a oneof does not set it");
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	pfails("{\"i32\":2147483648}", &getest__scalars__descriptor,
	       "t.json: i32: field 'i32': 2147483648 is out of range for 32 "
	       "bits");
	pfails("{\"u32\":-1}", &getest__scalars__descriptor,
	       "t.json: u32: field 'u32': -1 is out of range for 32 bits");
	pfails("{\"u64\":\"-1\"}", &getest__scalars__descriptor,
	       "t.json: u64: field 'u64': -1 is out of range for 64 bits");
	pfails("{\"i64\":\"9223372036854775808\"}", &getest__scalars__descriptor,
	       "t.json: i64: field 'i64': 9223372036854775808 is out of "
	       "range for 64 bits");
	pfails("{\"i64\":\"\"}", &getest__scalars__descriptor,
	       "t.json: i64: field 'i64': \"\" is not an integer");
	pfails("{\"i64\":\" 1\"}", &getest__scalars__descriptor,
	       "t.json: i64: field 'i64': \" 1\" is not an integer");
	pfails("{\"i64\":true}", &getest__scalars__descriptor,
	       "t.json: i64: field 'i64': expected an integer, got boolean");
	pfails("{\"db\":1e999}", &getest__scalars__descriptor,
	       "t.json:1:11: real number overflow near '1e999'");
	pfails("{\"db\":\"nan\"}", &getest__scalars__descriptor,
	       "t.json: db: field 'db': \"nan\" is not a number");
	pfails("{\"c\":\"PURPLE\"}", &getest__scalars__descriptor,
	       "t.json: c: field 'c': unknown value \"PURPLE\" of enum "
	       "getest.Color");
	pfails("{\"c\":true}", &getest__scalars__descriptor,
	       "t.json: c: field 'c': expected an enum name or number, got "
	       "boolean");
	pfails("{\"counts\":{\"a\":\"x\"}}", &getest__scalars__descriptor,
	       "t.json: counts.a: field 'value': \"x\" is not an integer");
	pfails("{\"rm\":[{\"i32\":1}, 3]}", &getest__scalars__descriptor,
	       "t.json: rm[1]: expected an object for getest.Scalars, got "
	       "number");
	pfails("{\"ri\":[1,null]}", &getest__scalars__descriptor,
	       "t.json: ri[1]: field 'ri': null is not allowed in a list");
	pfails("{\"os\":\"a\",\"oi\":1}", &getest__scalars__descriptor,
	       "t.json: oi: field 'oi' is in the same oneof as 'os', which "
	       "is already set");
	pfails("{\"withDefault\":1,\"with_default\":2}",
	       &getest__scalars__descriptor,
	       "t.json: field 'with_default' of getest.Scalars is given "
	       "more than once");
	pfails("[]", &getest__scalars__descriptor,
	       "t.json: expected an object for getest.Scalars, got array");
	pfails("null", &getest__scalars__descriptor,
	       "t.json: expected an object for getest.Scalars, got null");
}

static void test_errors(void)
{
	const ProtobufCMessageDescriptor *nd = &tensorflow__node_def__descriptor;
	const ProtobufCMessageDescriptor *av = &tensorflow__attr_value__descriptor;
	pfails("{\"name\":\"a\",\"bogus\":1}", nd,
	       "t.json: unknown field \"bogus\" in tensorflow.NodeDef");
	pfails("{\"Name\":\"a\"}", nd,
	       "t.json: unknown field \"Name\" in tensorflow.NodeDef");
	pfails("{\"name\":\"a\\u0000b\"}", nd,
	       "t.json: name: field 'name': a string field cannot hold a "
	       "NUL character");
	pfails("{\"name\":5}", nd,
	       "t.json: name: field 'name': expected a string, got number");
	pfails("{\"input\":\"a\"}", nd,
	       "t.json: input: field 'input' is repeated: expected an "
	       "array, got string");
	pfails("{\"attr\":[]}", nd,
	       "t.json: attr: field 'attr': a map is written as an object, "
	       "not as array");
	pfails("{\"attr\":{\"x\":null}}", nd,
	       "t.json: attr.x: field 'attr': null is not allowed as a map "
	       "value");
	pfails("{\"attr\":{\"x\":5}}", nd,
	       "t.json: attr.x: expected an object for "
	       "tensorflow.AttrValue, got number");
	pfails("{\"attr\":{\"x\":{\"shape\":{\"dim\":[{\"size\":1.5}]}}}}", nd,
	       "t.json: attr.x.shape.dim[0].size: field 'size': 1.5 is not "
	       "an integer");
	pfails("{\"i\":\"1\",\"f\":2}", av,
	       "t.json: f: field 'f' is in the same oneof as 'i', which is "
	       "already set");
	pfails("{\"i\":1.5}", av,
	       "t.json: i: field 'i': 1.5 is not an integer");
	pfails("{\"i\":\"12a\"}", av,
	       "t.json: i: field 'i': \"12a\" is not an integer");
	pfails("{\"s\":\"a$==\"}", av,
	       "t.json: s: field 's': invalid base64 at character 2");
	pfails("{\"s\":\"abcde\"}", av,
	       "t.json: s: field 's': invalid base64 at character 5");
	pfails("{\"s\":\"ab=\"}", av,
	       "t.json: s: field 's': invalid base64 at character 3");
	pfails("{\"s\":\"a===\"}", av,
	       "t.json: s: field 's': invalid base64 at character 2");
	pfails("{\"f\":1e39}", av,
	       "t.json: f: field 'f': 1e+39 is out of range for a float");
	pfails("{\"f\":\"1e39\"}", av,
	       "t.json: f: field 'f': 1e39 is out of range for a float");
	pfails("{\"b\":\"true\"}", av,
	       "t.json: b: field 'b': expected true or false, got string");
	pfails("{\"type\":\"DT_NOPE\"}", av,
	       "t.json: type: field 'type': unknown value \"DT_NOPE\" of "
	       "enum tensorflow.DataType");
	pfails("{\"type\":2147483648}", av,
	       "t.json: type: field 'type': 2147483648 is out of range for "
	       "an enum");
	pfails("{\"tensor\":{\"tensorShape\":{},\"tensor_shape\":{}}}", av,
	       "t.json: tensor: field 'tensor_shape' of "
	       "tensorflow.TensorProto is given more than once");
	pfails("{\"list\":{\"i\":[1,}}", av,
	       "t.json:1:17: unexpected token near '}'");

	/* IGNORE_UNKNOWN drops unknown members and unknown enum names */
	json_t *d = jload("{\"name\":\"a\",\"bogus\":{\"x\":[1]},\"attr\":"
				"{\"T\":{\"type\":\"DT_NEW\"},\"L\":{\"list\":"
				"{\"type\":[\"DT_NEW\",\"DT_BOOL\"]}}}}",
				"document with unknown names");
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	int rc = d ? ge_jsonpb_from_json(d, nd, NAME,
					  GE_JSONPB_IGNORE_UNKNOWN, &m, &err)
		   : -1;
	if (!ok(rc == GE_OK, "ignored with GE_JSONPB_IGNORE_UNKNOWN"))
		tap_diag("  %s", err.msg);
	if (m) {
		Tensorflow__NodeDef *n = (Tensorflow__NodeDef *)m;
		const Tensorflow__AttrValue *t = attr(n, "T"), *l = attr(n, "L");
		ok(!strcmp(n->name, "a") && t &&
		   t->value_case == TENSORFLOW__ATTR_VALUE__VALUE__NOT_SET,
		   "  unknown enum left unset");
		ok(l && l->list->n_type == 1 &&
		   l->list->type[0] == TENSORFLOW__DATA_TYPE__DT_BOOL,
		   "  unknown enum dropped from a list");
		protobuf_c_message_free_unpacked(m, NULL);
	}
	m = (ProtobufCMessage *)&m;
	rc = d ? ge_jsonpb_from_json(d, nd, NAME, 0, &m, &err) : -1;
	ok(rc == GE_EFORMAT && m == NULL, "refused without the flag");
	json_decref(d);
}

static void test_wkt(void)
{
	ge_textpb_register(&tensorflow__tensor_shape_proto__descriptor);
	ge_textpb_register(&google__protobuf__int64_value__descriptor);
	Google__Protobuf__Any *a = (Google__Protobuf__Any *)pparse(
		"{\"dim\":[{\"size\":\"3\"}],\"@type\":"
		"\"type.googleapis.com/tensorflow.TensorShapeProto\"}",
		&google__protobuf__any__descriptor, "Any, @type last");
	if (a) {
		is_string("type.googleapis.com/tensorflow.TensorShapeProto",
			  a->type_url, "type_url");
		ok(a->value.len == 4 &&
		   !memcmp(a->value.data, "\x12\x02\x08\x03", 4),
		   "value is the packed TensorShapeProto");
		protobuf_c_message_free_unpacked(&a->base, NULL);
	}
	a = (Google__Protobuf__Any *)pparse(
		"{\"@type\":\"type.googleapis.com/google.protobuf.Int64Value\","
		"\"value\":\"7\"}",
		&google__protobuf__any__descriptor, "Any holding a wrapper");
	if (a) {
		ok(a->value.len == 2 && !memcmp(a->value.data, "\x08\x07", 2),
		   "wrapper packed under value");
		protobuf_c_message_free_unpacked(&a->base, NULL);
	}
	a = (Google__Protobuf__Any *)pparse(
		"{}", &google__protobuf__any__descriptor, "empty Any");
	if (a)
		protobuf_c_message_free_unpacked(&a->base, NULL);
	pfails("{\"dim\":[]}", &google__protobuf__any__descriptor,
	       "t.json: google.protobuf.Any without \"@type\"");
	pfails("{\"@type\":\"x/no.Such\"}", &google__protobuf__any__descriptor,
	       "t.json: unknown type \"no.Such\" in google.protobuf.Any");
	pfails("{\"@type\":\"noslash\"}", &google__protobuf__any__descriptor,
	       "t.json: type URL \"noslash\" has no '/'");
	pfails("{\"@type\":\"t/tensorflow.TensorShapeProto\",\"bad\":1}",
	       &google__protobuf__any__descriptor,
	       "t.json: unknown field \"bad\" in tensorflow.TensorShapeProto");

	Google__Protobuf__BoolValue *b = (Google__Protobuf__BoolValue *)pparse(
		"true", &google__protobuf__bool_value__descriptor,
		"BoolValue as a bare value");
	if (b) {
		ok(b->value == 1, "  true");
		protobuf_c_message_free_unpacked(&b->base, NULL);
	}
	Google__Protobuf__Int64Value *i = (Google__Protobuf__Int64Value *)pparse(
		"\"-5\"", &google__protobuf__int64_value__descriptor,
		"Int64Value from a string");
	if (i) {
		ok(i->value == -5, "  -5");
		protobuf_c_message_free_unpacked(&i->base, NULL);
	}
	Google__Protobuf__BytesValue *by = (Google__Protobuf__BytesValue *)pparse(
		"\"AQ\"", &google__protobuf__bytes_value__descriptor,
		"BytesValue");
	if (by) {
		ok(by->value.len == 1 && by->value.data[0] == 1, "  one byte");
		protobuf_c_message_free_unpacked(&by->base, NULL);
	}
	pfails("{\"value\":1}", &google__protobuf__int32_value__descriptor,
	       "t.json: field 'value': expected an integer, got object");
}

/* ---------------------------------------------------------------- writer */

static void test_to_json(void)
{
	ProtobufCMessage *n = pparse(rich, &tensorflow__node_def__descriptor,
				     "NodeDef to write back");
	if (!n)
		return;
	json_t *j = ge_jsonpb_to_json(n);
	ge_buf b = GE_BUF_INIT;
	ge_json_dump_compact(j, &b);
	ProtobufCMessage *m = NULL;
	ge_error err = {0, ""};
	int rc = ge_jsonpb_parse((const char *)b.data, b.len,
				 &tensorflow__node_def__descriptor, NAME, &m,
				 &err);
	if (!ok(rc == GE_OK, "written JSON maps back"))
		tap_diag("  %s\n  %.*s", err.msg, (int)b.len, (const char *)b.data);
	size_t la = 0, lb = 0;
	uint8_t *pa = packed(n, &la), *pb = m ? packed(m, &lb) : NULL;
	ok(m && la == lb && !memcmp(pa, pb, la),
	   "  to the same NodeDef bytes (%zu, %zu)", la, lb);
	const json_t *a = json_object_get(json_object_get(j, "attr"), "i");
	is_string("-3", json_string_value(json_object_get(a, "i")),
		  "int64 written as a string");
	a = json_object_get(json_object_get(j, "attr"), "T");
	is_string("DT_FLOAT", json_string_value(json_object_get(a, "type")),
		  "enum written by name");
	a = json_object_get(json_object_get(j, "attr"), "s");
	is_string("TkhXQw==", json_string_value(json_object_get(a, "s")),
		  "bytes as padded base64");
	a = json_object_get(json_object_get(j, "attr"), "f");
	ok(json_real_value(json_object_get(a, "f")) == -1.5e-3,
	   "float written as its shortest decimal");
	ok(!json_object_get(j, "experimentalType"), "unset fields left out");
	free(pa);
	free(pb);
	ge_buf_free(&b);
	json_decref(j);
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	protobuf_c_message_free_unpacked(n, NULL);
}

int main(void)
{
	test_reader();
	test_truncation_and_corruption();
	test_nodedef();
	test_tensor();
	test_graphdef();
	test_scalars();
	test_errors();
	test_wkt();
	test_to_json();
	return tap_done();
}
