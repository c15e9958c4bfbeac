/*
 * The stateful and data-structure kernels on corpus models, run from the
 * files as they are: TensorFlow's TF1 half_plus_two SavedModel from its
 * serialized tf.Example input (the classify and regress signatures start
 * with ParseExample), the TF2 StaticHashTableModule (a HashTableV2
 * filled from its asset file, then looked up by the serving signature),
 * and Keras' lstm_from_sequential (StatelessWhile over TensorLists).
 */
#include <math.h>
#include <stdint.h>

#include "base/bundle.h"
#include "exec/exec.h"
#include "testutil.h"
#include "tensorflow/core/example/example.pb-c.h"

enum { DT_FLOAT = 1, DT_STRING = 7, DT_INT64 = 9 };

static const char *corpus;

static ge_graph *load(const char *rel)
{
	char path[4096];
	ge_graph *g = NULL;
	ge_error err = {0};
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	if (ge_load(path, NULL, &g, &err)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	return g;
}

static ge_xsession *open_s(ge_graph *g)
{
	ge_xsession *s = NULL;
	ge_error err = {0};
	if (!g || ge_xsession_open(g, NULL, &s, &err)) {
		tap_diag("open: %s", err.msg);
		return NULL;
	}
	return s;
}

/* A string tensor of n elements (a vector, or a scalar when rank 0). */
static ge_xt *strings(int rank, int64_t n)
{
	ge_error err = {0};
	return ge_xt_new(DT_STRING, rank, &n, NULL, "feed", &err);
}

static void set_str(ge_xt *t, int64_t i, const void *p, size_t len)
{
	ge_xstr *s = (ge_xstr *)t->data + i;
	s->p = malloc(len + 1);
	memcpy(s->p, p, len);
	s->p[len] = 0;
	s->len = len;
}

/* A tf.Example with one float feature of one value. */
static void example_x(ge_xt *t, int64_t i, const char *key, float v)
{
	Tensorflow__FloatList fl = TENSORFLOW__FLOAT_LIST__INIT;
	Tensorflow__Feature f = TENSORFLOW__FEATURE__INIT;
	Tensorflow__Features__FeatureEntry e =
		TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
	Tensorflow__Features__FeatureEntry *ents[1] = {&e};
	Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
	Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
	fl.n_value = 1;
	fl.value = &v;
	f.kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
	f.float_list = &fl;
	e.key = (char *)key;
	e.value = &f;
	fs.n_feature = 1;
	fs.feature = ents;
	ex.features = &fs;
	uint8_t buf[256];
	size_t n = tensorflow__example__pack(&ex, buf);
	set_str(t, i, buf, n);
}

#define TF1_H2 "tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/" \
	"half_plus_two/00000123"
#define TABLE_MODULE "tensorflow__tensorflow/tensorflow/cc/saved_model/" \
	"testdata/StaticHashTableModule"
#define LSTM "SciSharp__TensorFlow.NET/test/TensorFlowNET.Keras.UnitTest/" \
	"Assets/lstm_from_sequential"

static void test_parse_example(void)
{
	ge_graph *g = load(TF1_H2);
	ge_xsession *s = open_s(g);
	ge_error err = {0};
	ge_xt *ser = strings(1, 3), *y[2] = {0};
	const float x[3] = {1, 2, 5};
	for (int i = 0; i < 3; i++)
		example_x(ser, i, "x", x[i]);
	ge_xfeed f = {"tf_example:0", ser};
	const char *fetch[] = {"y:0", "x:0"};
	int rc = s ? ge_xsession_run(s, &f, 1, fetch, 2, y, &err) : -1;
	if (rc)
		tap_diag("run: %s", err.msg);
	ok(!rc && y[0]->n == 3 && y[0]->rank == 2 &&
	   ge_xt_get_double(y[0], 0) == 2.5 &&
	   ge_xt_get_double(y[0], 1) == 3 &&
	   ge_xt_get_double(y[0], 2) == 4.5,
	   "TF1 half_plus_two from serialized tf.Examples: ParseExample, "
	   "then y = 0.5x + 2 = 2.5, 3, 4.5");
	ok(!rc && y[1]->dtype == DT_FLOAT && y[1]->dims[0] == 3 &&
	   y[1]->dims[1] == 1, "ParseExample's x is float32[3,1]");
	ge_xt_unref(y[0]);
	ge_xt_unref(y[1]);
	ge_xt_unref(ser);

	/* a record without x, which has no default */
	ser = strings(1, 1);
	example_x(ser, 0, "x2", 1);
	f.t = ser;
	rc = s ? ge_xsession_run(s, &f, 1, fetch, 1, y, &err) : 0;
	ok(rc && strstr(err.msg, "ParseExample/ParseExample (ParseExample): "
			"record 0 lacks feature 'x'"),
	   "a record without the required feature: the op and key named");
	if (!rc)
		ge_xt_unref(y[0]);
	ge_xt_unref(ser);
	ge_xsession_close(s);
	ge_graph_free(g);
}

static void test_table_module(void)
{
	ge_graph *g = load(TABLE_MODULE);
	ge_xsession *s = open_s(g);
	ge_error err = {0};
	/* the session's open ran the init op: the asset's path fed, the
	 * table filled from assets/static_hashtable_asset.txt */
	ge_xt *w = strings(1, 4), *y = NULL;
	const char *words[4] = {"foo", "wombat", "baz", "kangaroo"};
	for (int i = 0; i < 4; i++)
		set_str(w, i, words[i], strlen(words[i]));
	ge_xfeed f = {"serving_default_word:0", w};
	const char *fetch = "StatefulPartitionedCall_1:0";
	int rc = s ? ge_xsession_run(s, &f, 1, &fetch, 1, &y, &err) : -1;
	if (rc)
		tap_diag("lookup: %s", err.msg);
	int good = !rc && y->dtype == DT_INT64 && y->n == 4;
	for (int i = 0; good && i < 4; i++)
		tap_diag("  %s -> %lld", words[i],
			 (long long)ge_xt_get_int64(y, i));
	ok(good && ge_xt_get_int64(y, 0) == 0 && ge_xt_get_int64(y, 1) == 3 &&
	   ge_xt_get_int64(y, 2) == 2 && ge_xt_get_int64(y, 3) == -1,
	   "StaticHashTableModule: the serving signature looks words up in "
	   "the table its init op filled from assets/ (line numbers, -1 for "
	   "others)");
	ge_xt_unref(y);
	y = NULL;

	/* the initializer again, with a path that names no asset: the
	 * table was filled, and keeps its contents */
	const char *init = "^StatefulPartitionedCall";
	ge_xt *none = NULL, *path = strings(0, 1);
	set_str(path, 0, "/elsewhere/other.txt", strlen("/elsewhere/other.txt"));
	ge_xfeed pf = {"asset_path_initializer_1:0", path};
	rc = s ? ge_xsession_run(s, &pf, 1, &init, 1, &none, &err) : -1;
	if (rc)
		tap_diag("init: %s", err.msg);
	rc = rc ? rc : ge_xsession_run(s, &f, 1, &fetch, 1, &y, &err);
	ok(!rc && ge_xt_get_int64(y, 1) == 3, "running its initializer again "
	   "keeps the table");
	ge_xt_unref(y);
	ge_xt_unref(path);
	ge_xt_unref(w);
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* Weight `name` of the LSTM's checkpoint into w (n floats). */
static int weight(ge_bundle *b, const char *name, float *w, size_t n)
{
	char key[256];
	uint8_t *data = NULL;
	size_t len = 0;
	ge_error err = {0};
	snprintf(key, sizeof key, "%s/.ATTRIBUTES/VARIABLE_VALUE", name);
	const ge_bundle_entry *e = ge_bundle_find(b, key);
	if (!e || ge_bundle_read(b, e, &data, &len, &err) ||
	    len != n * sizeof(float)) {
		free(data);
		return -1;
	}
	memcpy(w, data, len);
	free(data);
	return 0;
}

static double sigm(double x) { return 1 / (1 + exp(-x)); }

/* Keras' LSTM (32 units, gates i, f, c, o; sigmoid and tanh) then its
 * Dense(1, sigmoid) on the last state, in double from the checkpoint's weights:
 * what the model computes, worked out without the graph. */
static int lstm_reference(const float *x, int batch, int steps, double *out)
{
	char prefix[4096];
	static float k[3 * 128], r[32 * 128], bias[128], dk[32], db[1];
	ge_bundle *b = NULL;
	ge_error err = {0};
	snprintf(prefix, sizeof prefix, "%s/%s/variables/variables", corpus,
		 LSTM);
	if (ge_bundle_open(prefix, &b, &err))
		return -1;
	int bad = weight(b, "variables/0", k, 3 * 128) ||
		  weight(b, "variables/1", r, 32 * 128) ||
		  weight(b, "variables/2", bias, 128) ||
		  weight(b, "layer_with_weights-1/kernel", dk, 32) ||
		  weight(b, "layer_with_weights-1/bias", db, 1);
	ge_bundle_close(b);
	if (bad)
		return -1;
	for (int n = 0; n < batch; n++) {
		double h[32] = {0}, c[32] = {0}, z[128];
		for (int t = 0; t < steps; t++) {
			const float *xt = x + (n * steps + t) * 3;
			for (int j = 0; j < 128; j++) {
				z[j] = bias[j];
				for (int i = 0; i < 3; i++)
					z[j] += xt[i] * (double)k[i * 128 + j];
				for (int i = 0; i < 32; i++)
					z[j] += h[i] * r[i * 128 + j];
			}
			for (int u = 0; u < 32; u++) {
				c[u] = sigm(z[32 + u]) * c[u] +
				       sigm(z[u]) * tanh(z[64 + u]);
				h[u] = sigm(z[96 + u]) * tanh(c[u]);
			}
		}
		double d = db[0];
		for (int u = 0; u < 32; u++)
			d += h[u] * dk[u];
		out[n] = sigm(d);
	}
	return 0;
}

static void test_lstm(void)
{
	ge_graph *g = load(LSTM);
	ge_xsession *s = open_s(g);
	ge_error err = {0};
	int64_t dims[3] = {2, 5, 3};
	ge_xt *x = ge_xt_new(DT_FLOAT, 3, dims, NULL, "feed", &err);
	for (int64_t i = 0; x && i < x->n; i++)
		((float *)x->data)[i] = (float)((i * 37) % 11) / 11.0f - 0.5f;
	/* the serving signature's input and output */
	ge_xfeed f = {"serving_default_input_1:0", x};
	const char *fetch = "StatefulPartitionedCall:0";
	ge_xt *y1 = NULL, *y2 = NULL;
	int rc = s ? ge_xsession_run(s, &f, 1, &fetch, 1, &y1, &err) : -1;
	if (rc && strstr(err.msg, "no kernel for op type")) {
		tap_diag("%s", err.msg);
		tap_skip(2, "lstm_from_sequential needs a kernel this build "
			 "lacks");
	} else {
		if (rc)
			tap_diag("run: %s", err.msg);
		int fin = !rc;
		for (int64_t i = 0; fin && i < y1->n; i++)
			fin = isfinite(ge_xt_get_double(y1, i));
		double want[2];
		int near = fin && y1->n == 2 &&
			   !lstm_reference(x->data, 2, 5, want);
		for (int i = 0; near && i < 2; i++) {
			tap_diag("  output %d: %.9g, reference %.9g", i,
				 ge_xt_get_double(y1, i), want[i]);
			near = fabs(ge_xt_get_double(y1, i) - want[i]) < 1e-5;
		}
		ok(near, "lstm_from_sequential: the StatelessWhile over "
		   "TensorLists runs from the SavedModel, and gives what "
		   "the LSTM worked out in double from its weights gives");
		rc = rc ? rc : ge_xsession_run(s, &f, 1, &fetch, 1, &y2, &err);
		ok(!rc && y2->n == y1->n &&
		   !memcmp(y1->data, y2->data, (size_t)y1->n * 4),
		   "and a second run gives the same numbers");
	}
	ge_xt_unref(y1);
	ge_xt_unref(y2);
	ge_xt_unref(x);
	ge_xsession_close(s);
	ge_graph_free(g);
}

int main(void)
{
	corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (GE_CORPUS)");
	test_parse_example();
	test_table_module();
	test_lstm();
	return tap_done();
}
