/*
 * t/tfjs.c: TensorFlow.js graph models (lib/formats/tfjs.c).  A small model.json
 * and its weight files are written into a temporary directory and loaded
 * with ge_load: nodes, inputs, Const values after dequantization (uint8,
 * uint16 with int32 rounding, float16), dtype conversion to what the node
 * declares, weights split across files, and the errors: missing or short
 * weight files, wrong shapes and dtypes, Consts without weights, bytes with
 * no path.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "base/jsonpb.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

static char tmp[] = "/tmp/ge-tfjs-XXXXXX";

static const char *path(const char *name)
{
	return path_in(tmp, name);
}

/* The model: slots for extra nodes, the paths of the first group, the
 * manifest shape of 'w', the file of the second group and extra entries
 * of the second group. */
static const char *model_tmpl =
	"{\"format\": \"graph-model\", \"generatedBy\": \"2.x\",\n"
	" \"convertedBy\": \"by hand\",\n"
	" \"modelTopology\": {\"node\": [\n"
	"  {\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": "
	"{\"type\": \"DT_FLOAT\"}, \"shape\": {\"shape\": {\"dim\": [{\"size\": "
	"\"-1\"}, {\"size\": \"2\"}]}}}},\n"
	"  {\"name\": \"w\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\":"
	" {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"2\"},"
	" {\"size\": \"2\"}]}}}, \"dtype\": {\"type\": \"DT_FLOAT\"}}},\n"
	"  {\"name\": \"q\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\":"
	" {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"2\"}]"
	"}}}, \"dtype\": {\"type\": \"DT_FLOAT\"}}},\n"
	"  {\"name\": \"h\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\":"
	" {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"3\"}]"
	"}}}}},\n"
	"  {\"name\": \"k\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": "
	"\"DT_INT64\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_INT64\", "
	"\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},\n"
	"  {\"name\": \"s\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": "
	"\"DT_STRING\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_STRING\", "
	"\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},\n"
	"  {\"name\": \"d\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": "
	"\"DT_DOUBLE\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_DOUBLE\", "
	"\"tensorShape\": {}}}}},\n"
	"  {\"name\": \"mm\", \"op\": \"MatMul\", \"input\": [\"x\", \"w\"], "
	"\"device\": \"/device:CPU:0\", \"attr\": {\"T\": {\"type\": "
	"\"DT_FLOAT\"}, \"transpose_a\": {\"b\": false}, \"transpose_b\": "
	"{\"b\": false}}},\n"
	"%s"
	"  {\"name\": \"add\", \"op\": \"Add\", \"input\": [\"mm\", \"q\", "
	"\"^k\"], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}\n"
	" ], \"versions\": {\"producer\": 716}, \"library\": {}},\n"
	" \"weightsManifest\": [\n"
	"  {\"paths\": [%s], \"weights\": [\n"
	"   {\"name\": \"w\", \"shape\": %s, \"dtype\": \"float32\"},\n"
	"   {\"name\": \"q\", \"shape\": [2], \"dtype\": \"float32\", "
	"\"quantization\": {\"dtype\": \"uint8\", \"scale\": 0.5, \"min\": -1.0,"
	" \"original_dtype\": \"float32\"}},\n"
	"   {\"name\": \"h\", \"shape\": [3], \"dtype\": \"float32\", "
	"\"quantization\": {\"dtype\": \"float16\", \"original_dtype\": "
	"\"float32\"}}]},\n"
	"  {\"paths\": [\"%s\"], \"weights\": [\n"
	"   {\"name\": \"k\", \"shape\": [2], \"dtype\": \"int32\", "
	"\"quantization\": {\"dtype\": \"uint16\", \"scale\": 0.5, \"min\": -3}},\n"
	"   {\"name\": \"s\", \"shape\": [2], \"dtype\": \"string\"},\n"
	"   {\"name\": \"d\", \"shape\": [], \"dtype\": \"float32\"},\n"
	"   {\"name\": \"unused\", \"shape\": [1], \"dtype\": \"bool\"}%s]}\n"
	" ]}\n";

#define PATHS1 "\"group1-shard1of2.bin\", \"group1-shard2of2.bin\""

#define G2 "group2-shard1of1.bin"

static char *model_text(const char *nodes, const char *paths,
			const char *wshape, const char *g2, const char *extra)
{
	size_t n = strlen(model_tmpl) + strlen(nodes) + strlen(paths) +
		   strlen(wshape) + strlen(g2) + strlen(extra) + 1;
	char *s = malloc(n);
	snprintf(s, n, model_tmpl, nodes, paths, wshape, g2, extra);
	return s;
}

static void write_model(const char *file, const char *nodes,
			const char *paths, const char *wshape, const char *g2,
			const char *extra)
{
	char *s = model_text(nodes, paths, wshape, g2, extra);
	write_file(path(file), s, strlen(s));
	free(s);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void putf(uint8_t *p, float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	put32(p, b);
}

static uint8_t group2[19];

static void write_weights(void)
{
	uint8_t g1[24];
	/* w: 1 2 3 4 */
	for (int i = 0; i < 4; i++)
		putf(g1 + 4 * i, (float)(i + 1));
	/* q: uint8 0 and 4 -> -1 and 1 */
	g1[16] = 0;
	g1[17] = 4;
	/* h: float16 1, -2.5, 65504 */
	g1[18] = 0x00; g1[19] = 0x3c;
	g1[20] = 0x00; g1[21] = 0xc1;
	g1[22] = 0xff; g1[23] = 0x7b;
	/* split inside w's third value */
	write_file(path("group1-shard1of2.bin"), g1, 10);
	write_file(path("group1-shard2of2.bin"), g1 + 10, 14);

	uint8_t *p = group2;
	/* k: uint16 1 and 11 -> 1*0.5-3 = -2.5 -> -2, 11*0.5-3 = 2.5 -> 3 */
	p[0] = 1; p[1] = 0; p[2] = 11; p[3] = 0;
	p += 4;
	/* s: "ab", "" */
	put32(p, 2);
	p[4] = 'a';
	p[5] = 'b';
	put32(p + 6, 0);
	p += 10;
	putf(p, 0.25f);
	p += 4;
	*p++ = 1;
	write_file(path(G2), group2, sizeof group2);
}

static const Tensorflow__TensorProto *value_of(ge_graph *g, const char *op)
{
	ge_opid id = ge_graph_find(g, op);
	const Tensorflow__AttrValue *v =
		id == GE_NOOP ? NULL : ge_op_attr(g, id, "value", NULL);
	return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR
		       ? v->tensor : NULL;
}

static int shape_is(const Tensorflow__TensorProto *t, int rank,
		    const int64_t *dims)
{
	if (!t || !t->tensor_shape || t->tensor_shape->n_dim != (size_t)rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (t->tensor_shape->dim[i]->size != dims[i])
			return 0;
	return 1;
}

static float f32_at(const Tensorflow__TensorProto *t, size_t i)
{
	const uint8_t *p = t->tensor_content.data + 4 * i;
	uint32_t b = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static int64_t i64_at(const Tensorflow__TensorProto *t, size_t i)
{
	uint64_t v = 0;
	for (int k = 7; k >= 0; k--)
		v = v << 8 | t->tensor_content.data[8 * i + (size_t)k];
	return (int64_t)v;
}

static void test_load(void)
{
	write_model("model.json", "", PATHS1, "[2, 2]", G2, "");
	ge_graph *g = NULL;
	ge_error err = {0, ""};
	int rc = ge_load(path("model.json"), NULL, &g, &err);
	if (!ok(rc == GE_OK && g, "model.json loads"))
		tap_diag("  %s", err.msg);
	if (!g)
		return;
	is_int(GE_FMT_TFJS, ge_graph_format(g), "format is tfjs");
	is_int(9, (long long)ge_graph_num_ops(g), "9 ops");
	ge_opid add = ge_graph_find(g, "add"), mm = ge_graph_find(g, "mm");
	ok(add != GE_NOOP && mm != GE_NOOP, "ops by name");
	is_string("Add", ge_op_type(g, add), "op type");
	is_string("/device:CPU:0", ge_op_device(g, mm), "device");
	ok(ge_op_num_inputs(g, add) == 2 && ge_op_num_control_inputs(g, add) == 1,
	   "two data inputs and a control input");
	ge_tref t0 = ge_op_input(g, add, 0), t1 = ge_op_input(g, add, 1);
	ok(t0.op == mm && t0.index == 0 && t1.op == ge_graph_find(g, "q"),
	   "inputs mm:0 and q");
	ok(ge_op_control_input(g, add, 0) == ge_graph_find(g, "k"),
	   "control input ^k");
	ge_tref m1 = ge_op_input(g, mm, 1);
	ok(m1.op == ge_graph_find(g, "w"), "MatMul reads w");
	int64_t b = -1;
	ok(ge_op_attr_int(g, ge_graph_find(g, "x"), "dtype", &b) == -1,
	   "attrs decode (dtype is a type, not an int)");
	int dt = 0;
	ok(ge_op_attr_type(g, ge_graph_find(g, "x"), "dtype", &dt) == 0 &&
	   dt == TENSORFLOW__DATA_TYPE__DT_FLOAT, "Placeholder dtype");

	const Tensorflow__TensorProto *t = value_of(g, "w");
	int64_t d22[] = {2, 2}, d2[] = {2}, d3[] = {3};
	ok(t && t->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT &&
	   shape_is(t, 2, d22) && t->tensor_content.len == 16 &&
	   f32_at(t, 0) == 1 && f32_at(t, 1) == 2 && f32_at(t, 2) == 3 &&
	   f32_at(t, 3) == 4, "w: float32 split across two files");
	t = value_of(g, "q");
	ok(t && shape_is(t, 1, d2) && t->tensor_content.len == 8 &&
	   f32_at(t, 0) == -1 && f32_at(t, 1) == 1,
	   "q: uint8 dequantized (q * scale + min)");
	t = value_of(g, "h");
	ok(t && shape_is(t, 1, d3) && t->tensor_content.len == 12 &&
	   f32_at(t, 0) == 1 && f32_at(t, 1) == -2.5f &&
	   f32_at(t, 2) == 65504, "h: float16 to float32");
	ok(ge_op_attr_type(g, ge_graph_find(g, "h"), "dtype", &dt) == 0 &&
	   dt == TENSORFLOW__DATA_TYPE__DT_FLOAT, "h: missing dtype attr added");
	t = value_of(g, "k");
	ok(t && t->dtype == TENSORFLOW__DATA_TYPE__DT_INT64 &&
	   t->tensor_content.len == 16 && i64_at(t, 0) == -2 &&
	   i64_at(t, 1) == 3,
	   "k: uint16-quantized int32, rounded half up, widened to int64");
	t = value_of(g, "s");
	ok(t && t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING &&
	   t->n_string_val == 2 && t->string_val[0].len == 2 &&
	   !memcmp(t->string_val[0].data, "ab", 2) && t->string_val[1].len == 0,
	   "s: strings in string_val");
	t = value_of(g, "d");
	double dv = 0;
	if (t && t->tensor_content.len == 8)
		memcpy(&dv, t->tensor_content.data, 8);
	ok(t && t->dtype == TENSORFLOW__DATA_TYPE__DT_DOUBLE &&
	   shape_is(t, 0, NULL) && dv == 0.25, "d: float32 weight as a double");

	ge_buf rep = GE_BUF_INIT;
	size_t probs = ge_graph_validate(g, &rep);
	if (!is_int(0, (long long)probs, "validates"))
		tap_diag("%s", (char *)rep.data);
	ge_buf_free(&rep);

	/* saved as a GraphDef, it reads back the same */
	ge_buf out = GE_BUF_INIT;
	rc = ge_serialize(g, GE_FMT_AUTO, &out, &err);
	ge_graph *g2 = NULL;
	if (!rc)
		rc = ge_parse(out.data, out.len, GE_FMT_AUTO, "<string>", NULL,
			      &g2, &err);
	ok(rc == GE_OK && g2 && ge_graph_format(g2) == GE_FMT_GRAPHDEF &&
	   ge_graph_num_ops(g2) == 9, "serializes as a GraphDef");
	t = g2 ? value_of(g2, "q") : NULL;
	ok(t && t->tensor_content.len == 8 && f32_at(t, 0) == -1,
	   "  with the values");
	ge_graph_free(g2);
	ge_buf_free(&out);
	ge_graph_free(g);

	/* the counts */
	uint8_t *data;
	size_t len;
	ge_tfjs_info info;
	ge_file_read(path("model.json"), &data, &len, NULL);
	rc = ge_tfjs_parse_info(data, len, path("model.json"), &g, &info, &err);
	ok(rc == GE_OK && info.n_weights == 7 && info.n_quantized == 3 &&
	   info.n_consts == 6 && info.n_unused == 1 &&
	   info.weight_bytes == 24 + sizeof group2,
	   "info: 7 weights, 3 quantized, 6 Consts filled, 1 unused");
	free(data);
	ge_graph_free(g);
}

/* Loads a model and expects failure with a message holding each of the
 * wanted pieces. */
static void load_fails(const char *file, int code, const char *what,
		       const char *w1, const char *w2)
{
	ge_graph *g = (ge_graph *)&g;
	ge_error err = {0, ""};
	int rc = ge_load(path(file), NULL, &g, &err);
	ok(rc == code, "refused: %s", what);
	ok(strstr(err.msg, w1) && (!w2 || strstr(err.msg, w2)) &&
	   !strchr(err.msg, '\n'), "  message names %s%s%s", w1,
	   w2 ? " and " : "", w2 ? w2 : "");
	tap_diag("  %s", err.msg);
	if (rc == GE_OK)
		ge_graph_free(g);
}

static void test_errors(void)
{
	char *s, *p;
	write_model("e1.json", "", "\"nothere.bin\"", "[2, 2]", G2, "");
	load_fails("e1.json", GE_EIO, "a missing weights file", "nothere.bin",
		   "e1.json");

	write_file(path("short.bin"), group2, 10);
	write_model("e2.json", "", PATHS1, "[2, 2]", "short.bin", "");
	load_fails("e2.json", GE_EFORMAT, "a weights file too short",
		   "short.bin: too short", "weight 's'");

	write_model("e3.json", "", PATHS1, "[4]", G2, "");
	load_fails("e3.json", GE_EFORMAT, "a weight whose shape is not the "
		   "node's", "weight 'w' has shape [4] but Const 'w' declares "
		   "[2,2]", NULL);

	write_model("e4.json",
		    "  {\"name\": \"c2\", \"op\": \"Const\", \"attr\": {\"dtype\":"
		    " {\"type\": \"DT_FLOAT\"}, \"value\": {\"tensor\": {\"dtype\":"
		    " \"DT_FLOAT\", \"tensorShape\": {}}}}},\n",
		    PATHS1, "[2, 2]", G2, "");
	load_fails("e4.json", GE_EFORMAT, "a Const without a weight",
		   "Const 'c2' has no value", "no weight of that name");

	write_model("e5.json", "", PATHS1, "[2, 2]", G2,
		    ",\n   {\"name\": \"d\", \"shape\": [], \"dtype\": \"float32\"}");
	load_fails("e5.json", GE_EFORMAT, "a weight listed twice",
		   "weight 'd' is listed twice", NULL);

	write_model("e6.json",
		    "  {\"name\": \"bad\", \"op\": \"Identity\", \"input\": [\"x\"],"
		    " \"attr\": {\"T\": {\"i\": \"abc\"}}},\n",
		    PATHS1, "[2, 2]", G2, "");
	load_fails("e6.json", GE_EFORMAT, "a bad attr names its node",
		   "e6.json: node 'bad': attr.T.i:", "field 'i': \"abc\" is not "
		   "an integer");

	s = model_text("", PATHS1, "[2, 2]", G2, "");
	p = strstr(s, "\"dtype\": \"string\"");
	memcpy(p, "\"dtype\": \"bool\"  ", 17);
	write_file(path("e7.json"), s, strlen(s));
	free(s);
	load_fails("e7.json", GE_EFORMAT, "weights that take fewer bytes than "
		   "the files hold", "weightsManifest group 1 takes 11 bytes but "
		   "its files hold 19", NULL);

	s = model_text("", PATHS1, "[2, 2]", G2, "");
	while ((p = strstr(s, "\"DT_STRING\"")))
		memcpy(p, "\"DT_BOOL\"  ", 11);
	write_file(path("e7b.json"), s, strlen(s));
	free(s);
	load_fails("e7b.json", GE_EFORMAT, "a weight dtype the node cannot take",
		   "Const 's' has dtype bool but its weight is string", NULL);

	s = model_text("", PATHS1, "[2, 2]", G2, "");
	p = strstr(s, "\"scale\": 0.5, \"min\": -1.0");
	memcpy(p, "\"scalx\"", 7);
	write_file(path("e8.json"), s, strlen(s));
	free(s);
	load_fails("e8.json", GE_EFORMAT, "uint8 quantization without a scale",
		   "weight 'q': quantization needs a finite number 'scale'",
		   NULL);

	/* k = [-2, 3] fits int8; a weight of 253 does not */
	uint8_t big[sizeof group2];
	memcpy(big, group2, sizeof big);
	big[2] = 0xff;
	big[3] = 0x01;   /* 511 * 0.5 - 3 = 252.5 -> 253 */
	write_file(path("big.bin"), big, sizeof big);
	s = model_text("", PATHS1, "[2, 2]", "big.bin", "");
	while ((p = strstr(s, "DT_INT64")))
		memcpy(p, "DT_INT8\" ", 9);
	write_file(path("e9.json"), s, strlen(s));
	free(s);
	load_fails("e9.json", GE_EFORMAT, "a value that does not fit the "
		   "node's dtype", "Const 'k': value 253", "dtype int8");

	write_model("e10.json", "", "\"/etc/passwd\"", "[2, 2]", G2, "");
	load_fails("e10.json", GE_EFORMAT, "an absolute weights path",
		   "\"/etc/passwd\" leaves the directory of the model.json",
		   NULL);

	write_model("e10b.json", "", "\"../up/x.bin\"", "[2, 2]", G2, "");
	load_fails("e10b.json", GE_EFORMAT, "a weights path going up",
		   "\"../up/x.bin\" leaves the directory", NULL);

	const char *bad = "{\"format\": \"graph-model\",\n \"modelTopology\": "
			  "{\"node\": [\n  {\"name\": \"a\",, }]}}";
	write_file(path("e11.json"), bad, strlen(bad));
	load_fails("e11.json", GE_EFORMAT, "a JSON syntax error",
		   "e11.json:3:16: string or '}' expected", NULL);

	const char *layers = "{\"format\": \"layers-model\", \"modelTopology\":"
			     " {\"class_name\": \"Sequential\"}}";
	write_file(path("e12.json"), layers, strlen(layers));
	load_fails("e12.json", GE_EFORMAT, "a Keras layers model",
		   "format \"layers-model\" is not a TensorFlow.js graph model",
		   NULL);

	const char *nodoc = "{\"modelTopology\": 3}";
	write_file(path("e13.json"), nodoc, strlen(nodoc));
	load_fails("e13.json", GE_EFORMAT, "a topology that is no object",
		   "modelTopology is number", NULL);

	s = model_text("", PATHS1, "[2, -2]", G2, "");
	write_file(path("e14.json"), s, strlen(s));
	free(s);
	load_fails("e14.json", GE_EFORMAT, "a negative dimension",
		   "weight 'w': dimension 1 is not a non-negative integer", NULL);

	s = model_text("", PATHS1, "[4294967296, 4294967296, 4294967296]",
		       G2, "");
	write_file(path("e15.json"), s, strlen(s));
	free(s);
	load_fails("e15.json", GE_EFORMAT, "a shape beyond memory",
		   "weight 'w': shape is too large", NULL);
}

static void test_no_path(void)
{
	char *s = model_text("", PATHS1, "[2, 2]", G2, "");
	ge_graph *g = (ge_graph *)&g;
	ge_error err = {0, ""};
	int rc = ge_parse((const uint8_t *)s, strlen(s), GE_FMT_AUTO, NULL,
			  NULL, &g, &err);
	ok(rc != GE_OK && g == NULL, "bytes with no path: weights cannot be "
	   "read");
	ok(strstr(err.msg, "<string>: Const 'w'") &&
	   strstr(err.msg, "group1-shard1of2.bin, group1-shard2of2.bin") &&
	   strstr(err.msg, "without the path"),
	   "  message names the Const and its files");
	tap_diag("  %s", err.msg);
	free(s);

	/* Consts that carry their values need no weight files */
	const char *inl =
		"{\"modelTopology\": {\"node\": [{\"name\": \"c\", \"op\": "
		"\"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, "
		"\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\":"
		" {\"dim\": [{\"size\": \"2\"}]}, \"tensorContent\": "
		"\"AACAPwAAAEA=\"}}}}, {\"name\": \"e\", \"op\": \"Const\", "
		"\"attr\": {\"dtype\": {\"type\": \"DT_INT32\"}, \"value\": "
		"{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\":"
		" [{\"size\": \"0\"}]}}}}}]}, \"weightsManifest\": []}";
	rc = ge_parse((const uint8_t *)inl, strlen(inl), GE_FMT_AUTO,
		      "<string>", NULL, &g, &err);
	if (!ok(rc == GE_OK, "bytes with inline Const values load"))
		tap_diag("  %s", err.msg);
	if (rc == GE_OK) {
		const Tensorflow__TensorProto *t = value_of(g, "c");
		ok(t && t->tensor_content.len == 8 && f32_at(t, 0) == 1 &&
		   f32_at(t, 1) == 2, "  values as written");
		is_int(GE_FMT_TFJS, ge_sniff((const uint8_t *)inl, strlen(inl)),
		       "  sniffed as tfjs");
		ge_graph_free(g);
	}
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	write_weights();
	test_load();
	test_errors();
	test_no_path();
	ge_remove_tree(tmp);
	return tap_done();
}
