/*
 * t/tfjs-write.c: graphs saved as TensorFlow.js models (lib/formats/tfjs_write.c),
 * in a temporary directory.  Consts of every dtype become weights and load
 * back with their values; shards are cut at shard_size; quantization by
 * name pattern; a quantized weight whose values were edited gets a new
 * range; signature, userDefinedMetadata and modelInitializer (with its
 * weight) come back; a SavedModel's signature becomes the tfjs signature;
 * a graph with variables is refused and leaves nothing; other files of the
 * destination stay and old shards go.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/graph.h"
#include "base/jsonpb.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "variables/sigedit.h"
#include "tap.h"
#include "testutil.h"
#include "formats/tfjs.h"
#include "tfjsutil.h"

static char tmp[] = "/tmp/ge-tfjs-write-XXXXXX";

static const char *path(const char *name)
{
	return path_in(tmp, name);
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static json_t *read_json(const char *p)
{
	uint8_t *d;
	size_t n;
	json_t *v = NULL;
	if (ge_file_read(p, &d, &n, NULL))
		return NULL;
	ge_json_load((const char *)d, n, p, &v, NULL);
	free(d);
	return v;
}

static ge_graph *load(const char *p)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(p, NULL, &g, &err)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	return g;
}

static int save(ge_graph *g, const char *p, const ge_save_opts *o,
		ge_error *err)
{
	ge_save_opts def = {.format = GE_FMT_AUTO};
	return ge_save(g, p, o ? o : &def, err);
}

/* The values of Const name as doubles (NULL when missing). */
static double *values(const ge_graph *g, const char *name, size_t *n)
{
	ge_opid id = ge_graph_find(g, name);
	const Tensorflow__TensorProto *t =
		id == GE_NOOP ? NULL : value_of(g, id);
	return t ? tensor_values(t, n) : NULL;
}

static int same_values(const ge_graph *a, const ge_graph *b,
		       const char *name)
{
	size_t na = 0, nb = 0;
	double *va = values(a, name, &na), *vb = values(b, name, &nb);
	int same = va && vb && na == nb && !memcmp(va, vb, na * sizeof *va);
	free(va);
	free(vb);
	return same;
}

#define SHAPE4 "tensor_shape { dim { size: 4 } }"
static const char *graph_txt =
	"node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type:"
	" DT_FLOAT } } }\n"
	"node { name: 'f' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
	SHAPE4 " float_val: 1.5 float_val: -2 float_val: 0.25 float_val: 3 } }"
	" } }\n"
	"node { name: 'i' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 "
	SHAPE4 " int_val: 7 int_val: -8 int_val: 9 int_val: 2147483647 } } } }\n"
	"node { name: 'l' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_INT64 } } attr { key: 'value' value { tensor { dtype: DT_INT64 "
	"tensor_shape { dim { size: 2 } } int64_val: 5 int64_val: 6000000000 } }"
	" } }\n"
	"node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_BOOL } } attr { key: 'value' value { tensor { dtype: DT_BOOL "
	"tensor_shape { dim { size: 3 } } bool_val: true bool_val: false "
	"bool_val: true } } } }\n"
	"node { name: 's' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_STRING } } attr { key: 'value' value { tensor { dtype: DT_STRING "
	"tensor_shape { dim { size: 2 } } string_val: 'ab' string_val: '' } } }"
	" }\n"
	"node { name: 'h' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_HALF } } attr { key: 'value' value { tensor { dtype: DT_HALF "
	"tensor_shape { dim { size: 2 } } half_val: 15360 half_val: 48128 } } }"
	" }\n"
	"node { name: 'big' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
	"tensor_shape { dim { size: 64 } } float_val: 0.5 } } } }\n"
	"node { name: 'y' op: 'Mul' input: 'x' input: 'f' attr { key: 'T' "
	"value { type: DT_FLOAT } } }\n"
	"library { function { signature { name: 'fn' output_arg { name: 'o' "
	"type: DT_FLOAT } } node_def { name: 'f' op: 'Const' attr { key: "
	"'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor "
	"{ dtype: DT_FLOAT tensor_shape {} float_val: 9 } } } } ret { key: 'o' "
	"value: 'f:output:0' } } }\n";

static size_t count_shards(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, "-shard") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void test_dtypes(void)
{
	ge_graph *g = parse(graph_txt);
	ge_save_opts o = {.format = GE_FMT_TFJS, .shard_size = 100};
	ge_error err;
	int rc = save(g, path("m/model.json"), &o, &err);
	if (!ok(rc == GE_OK, "saved as tfjs with 100-byte shards"))
		tap_diag("%s", err.msg);
	json_t *m = read_json(path("m/model.json"));
	const json_t *grp = json_array_get(json_object_get(m,
							    "weightsManifest"),
					   0);
	const json_t *ps = json_object_get(grp, "paths");
	/* 16 + 16 + 8 (l: int64) + 3 + 14 + 8 + 256 = 321 bytes */
	ok(json_array_size(ps) == 4 &&
	   !strcmp(json_string_value(json_array_get(ps, 0)),
		   "group1-shard1of4.bin") &&
	   !strcmp(json_string_value(json_array_get(ps, 3)),
		   "group1-shard4of4.bin") && count_shards(path("m")) == 4,
	   "321 bytes in 4 shards, group1-shard1of4.bin...");
	const json_t *ws = json_object_get(grp, "weights");
	is_int(7, (long long)json_array_size(ws), "7 Consts became weights");
	static const char *const dts[] = {
		"float32", "int32", "int64", "bool", "string", "float32",
		"float32"};
	int dt_ok = 1;
	for (size_t i = 0; i < 7 && i < json_array_size(ws); i++)
		dt_ok &= !strcmp(json_string_value(json_object_get(
			json_array_get(ws, i), "dtype")), dts[i]);
	ok(dt_ok, "dtypes: float32, int32, int64 (beyond int32), bool, "
	   "string, float32 for half");
	const json_t *nodes = json_object_get(json_object_get(m,
							      "modelTopology"),
					      "node");
	const json_t *fv = json_object_get(json_object_get(json_object_get(
		json_object_get(json_array_get(nodes, 1), "attr"), "value"),
		"tensor"), "floatVal");
	ok(!fv, "a Const keeps no value in the topology");
	is_string("graph-model", json_string_value(json_object_get(m,
								   "format")),
		  "format graph-model");
	json_decref(m);
	ge_graph *h = load(path("m/model.json"));
	int all = h != NULL;
	static const char *const names[] = {"f", "i", "l", "b", "h", "big"};
	for (size_t i = 0; h && i < sizeof names / sizeof names[0]; i++)
		if (!same_values(g, h, names[i])) {
			tap_diag("Const %s differs", names[i]);
			all = 0;
		}
	ok(all, "loads back with every value, in the node's dtype");
	m = read_json(path("m/model.json"));
	const json_t *fnode = json_array_get(json_object_get(json_array_get(
		json_object_get(json_object_get(json_object_get(m,
			"modelTopology"), "library"), "function"), 0),
		"nodeDef"), 0);
	const json_t *fval = json_object_get(json_object_get(json_object_get(
		json_object_get(fnode, "attr"), "value"), "tensor"), "floatVal");
	ok(json_real_value(json_array_get(fval, 0)) == 9,
	   "a function's Const named as one of the graph's keeps its value "
	   "inline");
	json_decref(m);
	const Tensorflow__TensorProto *t =
		h ? value_of(h, ge_graph_find(h, "s")) : NULL;
	ok(t && t->n_string_val == 2 && t->string_val[0].len == 2 &&
	   !memcmp(t->string_val[0].data, "ab", 2) && !t->string_val[1].len,
	   "strings");
	ge_graph_free(h);
	ge_graph_free(g);
}

static void test_quantize_names(void)
{
	ge_graph *g = parse(graph_txt);
	const char *pats[] = {"bi*"};
	ge_save_opts o = {.format = GE_FMT_TFJS,
			  .quantize = GE_TFJS_Q_UINT8,
			  .quantize_names = pats,
			  .n_quantize_names = 1};
	ge_error err;
	ok(save(g, path("q/model.json"), &o, &err) == GE_OK,
	   "saved with uint8 for weights matching bi*");
	json_t *m = read_json(path("q/model.json"));
	const json_t *ws = json_object_get(json_array_get(json_object_get(
		m, "weightsManifest"), 0), "weights");
	size_t nq = 0;
	const json_t *q = NULL;
	for (size_t i = 0; i < json_array_size(ws); i++)
		if ((q = json_object_get(json_array_get(ws, i),
					 "quantization"))) {
			nq++;
			is_string("big", json_string_value(json_object_get(
				json_array_get(ws, i), "name")),
				  "  the quantized weight is big");
			is_string("uint8", json_string_value(json_object_get(
				q, "dtype")), "  as uint8");
			is_string("float32", json_string_value(json_object_get(
				q, "original_dtype")), "  original_dtype");
		}
	is_int(1, (long long)nq, "  only one weight quantized");
	ge_graph *h = load(path("q/model.json"));
	ok(h && same_values(g, h, "big") && same_values(g, h, "f"),
	   "  a constant weight comes back exact (one level: min, scale 1)");
	ge_graph_free(h);
	json_decref(m);
	ge_graph_free(g);
}

/* A model.json with signature, userDefinedMetadata and a modelInitializer
 * whose Const has its weight in the manifest. */
static const char *with_extras =
	"{\"format\": \"graph-model\", \"generatedBy\": \"2.9\", "
	"\"convertedBy\": \"TensorFlow.js Converter v3\",\n"
	" \"signature\": {\"inputs\": {\"x:0\": {\"name\": \"x:0\", \"dtype\": "
	"\"DT_FLOAT\"}}, \"outputs\": {\"y:0\": {\"name\": \"y:0\"}}},\n"
	" \"userDefinedMetadata\": {\"labels\": [\"cat\", \"dog\"], \"v\": 2},\n"
	" \"modelTopology\": {\"node\": [\n"
	"  {\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": "
	"{\"type\": \"DT_FLOAT\"}}},\n"
	"  {\"name\": \"w\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\":"
	" \"DT_FLOAT\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", "
	"\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},\n"
	"  {\"name\": \"y\", \"op\": \"Mul\", \"input\": [\"x\", \"w\"], "
	"\"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}],\n"
	"  \"versions\": {\"producer\": 1000}},\n"
	" \"modelInitializer\": {\"node\": [{\"name\": \"keys\", \"op\": "
	"\"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_INT32\"}, \"value\": "
	"{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": "
	"[{\"size\": \"1\"}]}}}}}]},\n"
	" \"weightsManifest\": [{\"paths\": [\"w.bin\"], \"weights\": [\n"
	"  {\"name\": \"w\", \"shape\": [2], \"dtype\": \"float32\"},\n"
	"  {\"name\": \"keys\", \"shape\": [1], \"dtype\": \"int32\"}]}]}\n";

static void test_extras(void)
{
	float w[2] = {2.0f, -0.5f};
	uint8_t bin[12];
	memcpy(bin, w, 8);
	bin[8] = 42;
	bin[9] = bin[10] = bin[11] = 0;
	if (mkdir(path("x"), 0777))
		tap_diag("mkdir failed");
	write_file(path("x/model.json"), with_extras, strlen(with_extras));
	write_file(path("x/w.bin"), bin, sizeof bin);
	ge_graph *g = load(path("x/model.json"));
	ge_error err;
	int rc = g ? save(g, path("x2/model.json"), NULL, &err) : -1;
	if (!ok(rc == GE_OK, "a model with signature, userDefinedMetadata and "
		"modelInitializer saves"))
		tap_diag("%s", rc > 0 ? err.msg : "no load");
	json_t *a = read_json(path("x/model.json"));
	json_t *b = read_json(path("x2/model.json"));
	static const char *const keys[] = {
		"format", "generatedBy", "convertedBy", "signature",
		"userDefinedMetadata", "modelInitializer"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		ok(b && json_equal(json_object_get(a, keys[i]),
				   json_object_get(b, keys[i])),
		   "  %s written back", keys[i]);
	const json_t *ws = json_object_get(json_array_get(json_object_get(
		b, "weightsManifest"), 0), "weights");
	ok(json_array_size(ws) == 2 &&
	   !strcmp(json_string_value(json_object_get(json_array_get(ws, 1),
						     "name")), "keys"),
	   "  the initializer's weight kept");
	uint8_t *d = NULL;
	size_t n = 0;
	ge_file_read(path("x2/group1-shard1of1.bin"), &d, &n, NULL);
	ok(d && n == sizeof bin && !memcmp(d, bin, n),
	   "  weight bytes equal, the initializer's after the graph's");
	free(d);
	json_decref(a);
	json_decref(b);

	/* a signature set on the graph is the signature written */
	ge_sig_key in = {"images", "x:0"}, out = {"scores", "y:0"};
	ge_sig_spec sp = {&in, 1, &out, 1, NULL};
	rc = ge_signature_set(g, "serving_default", &sp, &err);
	if (!ok(rc == GE_OK, "a signature set on a tfjs model"))
		tap_diag("%s", err.msg);
	save(g, path("x4/model.json"), NULL, &err);
	json_t *c = read_json(path("x4/model.json"));
	const json_t *cs = json_object_get(c, "signature");
	is_string("x:0", json_string_value(json_object_get(json_object_get(
		json_object_get(cs, "inputs"), "images"), "name")),
		  "  the model.json signature has the new input key");
	ok(json_object_get(json_object_get(cs, "outputs"), "scores") &&
	   !json_object_get(json_object_get(cs, "outputs"), "y:0"),
	   "  and the new output key, the old one gone");
	ge_graph *back = load(path("x4/model.json"));
	ok(back && ge_graph_find(back, "y") != GE_NOOP,
	   "  the model loads back");
	ge_graph_free(back);
	json_decref(c);

	/* an edited quantized weight: the old range no longer holds it */
	ge_save_opts o = {.format = GE_FMT_TFJS, .quantize = GE_TFJS_Q_UINT8};
	save(g, path("x3/model.json"), &o, &err);
	ge_graph *h = load(path("x3/model.json"));
	ge_opid wid = h ? ge_graph_find(h, "w") : GE_NOOP;
	if (wid != GE_NOOP) {
		ge_graph *p = parse(
			"node { name: 'w' op: 'Const' attr { key: 'value' value {"
			" tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }"
			" float_val: 100 float_val: -50 } } } }");
		const Tensorflow__AttrValue *nv =
			ge_op_attr(p, ge_graph_find(p, "w"), "value", NULL);
		ge_op_set_attr(h, wid, "value", nv);
		ge_graph_free(p);
	}
	rc = h ? save(h, path("x4/model.json"), NULL, &err) : -1;
	ge_graph *k = rc == GE_OK ? load(path("x4/model.json")) : NULL;
	size_t nv = 0;
	double *v = k ? values(k, "w", &nv) : NULL;
	json_t *m = read_json(path("x4/model.json"));
	const json_t *q = json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(m, "weightsManifest"), 0),
		"weights"), 0), "quantization");
	double scale = json_number_value(json_object_get(q, "scale"));
	ok(v && nv == 2 && q && fabs(v[0] - 100) <= scale &&
	   fabs(v[1] + 50) <= scale,
	   "an edited uint8 weight stays uint8 with a new range (%g, %g; "
	   "scale %g)", v ? v[0] : 0, v ? v[1] : 0, scale);
	free(v);
	json_decref(m);
	ge_graph_free(k);
	ge_graph_free(h);
	ge_graph_free(g);
}

static const char *saved_model =
	"saved_model_schema_version: 1\n"
	"meta_graphs {\n"
	"  meta_info_def { tags: 'serve' }\n"
	"  graph_def {\n"
	"    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { "
	"type: DT_FLOAT } } }\n"
	"    node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: "
	"DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
	"tensor_shape {} float_val: 3 } } } }\n"
	"    node { name: 'y' op: 'Mul' input: 'x' input: 'c' attr { key: 'T' "
	"value { type: DT_FLOAT } } }\n"
	"  }\n"
	"  signature_def { key: 'serving_default' value {\n"
	"    inputs { key: 'in' value { name: 'x:0' dtype: DT_FLOAT } }\n"
	"    outputs { key: 'out' value { name: 'y:0' dtype: DT_FLOAT } }\n"
	"    method_name: 'tensorflow/serving/predict' } }\n"
	"}\n";

static void test_signature(void)
{
	if (mkdir(path("sm"), 0777))
		tap_diag("mkdir failed");
	write_file(path("sm/saved_model.pbtxt"), saved_model,
		   strlen(saved_model));
	ge_graph *g = load(path("sm"));
	ge_error err;
	int rc = g ? save(g, path("smjs/model.json"), NULL, &err) : -1;
	if (!ok(rc == GE_OK, "a SavedModel saved as tfjs"))
		tap_diag("%s", rc > 0 ? err.msg : "no load");
	json_t *m = read_json(path("smjs/model.json"));
	const json_t *s = json_object_get(m, "signature");
	is_string("y:0", json_string_value(json_object_get(json_object_get(
		json_object_get(s, "outputs"), "out"), "name")),
		  "  its serving_default signature is the tfjs signature");
	is_string("DT_FLOAT", json_string_value(json_object_get(
		json_object_get(json_object_get(s, "inputs"), "in"), "dtype")),
		  "  inputs with their dtype");
	json_decref(m);
	ge_graph_free(g);
}

static void test_refusals(void)
{
	ge_graph *g = parse(
		"node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { "
		"type: DT_FLOAT } } attr { key: 'shape' value { shape {} } } }");
	ge_error err = {0, ""};
	int rc = save(g, path("var/model.json"), NULL, &err);
	ok(rc != GE_OK && strstr(err.msg, "freeze first") &&
	   strstr(err.msg, "'v'"), "a graph with variables: freeze first");
	tap_diag("%s", err.msg);
	ok(!exists(path("var")), "  nothing written");
	DIR *d = opendir(tmp);
	struct dirent *e;
	int left = 0;
	while (d && (e = readdir(d)))
		left |= strstr(e->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	ok(!left, "  no temporary directory left");
	ge_graph_free(g);

	/* a destination whose directory is a file: refused, the file kept */
	g = parse(graph_txt);
	write_file(path("afile"), "data\n", 5);
	rc = save(g, path("afile/model.json"), NULL, &err);
	uint8_t *fd = NULL;
	size_t n = 0;
	ge_file_read(path("afile"), &fd, &n, NULL);
	ok(rc != GE_OK && strstr(err.msg, "is not a directory") && fd &&
	   n == 5 && !memcmp(fd, "data\n", 5),
	   "a file where the directory goes: refused, the file untouched");
	free(fd);
	d = opendir(tmp);
	left = 0;
	while (d && (e = readdir(d)))
		left |= strstr(e->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	ok(!left, "  no temporary directory left");
	ge_graph_free(g);

	/* a destination with other files, then fewer shards */
	ge_graph *h = parse(graph_txt);
	if (mkdir(path("keep"), 0777))
		tap_diag("mkdir failed");
	write_file(path("keep/README"), "hi\n", 3);
	ge_save_opts o = {.format = GE_FMT_TFJS, .shard_size = 64};
	rc = save(h, path("keep/model.json"), &o, &err);
	size_t before = count_shards(path("keep"));
	o.shard_size = 0;
	rc |= save(h, path("keep/model.json"), &o, &err);
	ok(rc == GE_OK && before == 6 && count_shards(path("keep")) == 1 &&
	   exists(path("keep/group1-shard1of1.bin")) &&
	   exists(path("keep/README")),
	   "saving again: 6 shards replaced by 1, other files kept");
	ge_graph *k = load(path("keep/model.json"));
	ok(k && same_values(h, k, "big"), "  and it loads");
	ge_graph_free(k);
	char target[4096];
	snprintf(target, sizeof target, "%s", path("keep"));
	rc = symlink(target, path("link"));
	rc |= save(h, path("link/model.json"), &o, &err);
	struct stat ls;
	ok(rc == GE_OK && lstat(path("link"), &ls) == 0 && S_ISLNK(ls.st_mode) &&
	   exists(path("keep/README")) && exists(path("keep/model.json")),
	   "saving through a symlink to the directory keeps the link");
	rc = save(h, path("keep/other.json"), &o, &err);
	ok(rc != GE_OK && strstr(err.msg, "belongs to another model"),
	   "a second model in that directory is refused: %s", err.msg);
	ok(!exists(path("keep/other.json")), "  nothing written");
	ge_graph_free(h);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_dtypes();
	test_quantize_names();
	test_extras();
	test_signature();
	test_refusals();
	ge_remove_tree(tmp);
	return tap_done();
}
