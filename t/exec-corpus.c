/* The executor on models of the corpus, from the files as they are (no
 * freeze): half_plus_two as TF1 and TF2 SavedModels, tfjs-node's
 * times_three_float, TensorFlow's SimpleWhileLoop (StatelessWhile) and
 * nested_loop (TF1 loops in a loop), Keras' lstm_from_sequential. */
#include <math.h>
#include <stdint.h>

#include "exec/exec.h"
#include "exec/kernel.h"
#include "testutil.h"

enum { DT_FLOAT = 1 };

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

/* Runs rel with one float feed of the given shape; fetch's elements go
 * to got (at most cap).  Returns the element count, or -1. */
static int64_t run(const char *rel, const char *feed, int rank,
		   const int64_t *dims, const float *x, const char *fetch,
		   double *got, int cap)
{
	ge_graph *g = load(rel);
	if (!g)
		return -1;
	ge_xsession *s = NULL;
	ge_error err = {0};
	int64_t n = -1;
	if (ge_xsession_open(g, NULL, &s, &err)) {
		tap_diag("open: %s", err.msg);
		ge_graph_free(g);
		return -1;
	}
	ge_xt *t = NULL;
	if (feed) {
		t = ge_xt_new(DT_FLOAT, rank, dims, NULL, "feed", &err);
		memcpy(t->data, x, (size_t)t->n * sizeof(float));
	}
	ge_xfeed f = {feed, t};
	ge_xt *y = NULL;
	if (ge_xsession_run(s, &f, feed ? 1 : 0, &fetch, 1, &y, &err)) {
		tap_diag("run: %s", err.msg);
	} else {
		n = y->n;
		for (int64_t i = 0; i < y->n && i < cap; i++)
			got[i] = ge_xt_get_double(y, i);
	}
	ge_xt_unref(y);
	ge_xt_unref(t);
	ge_xsession_close(s);
	ge_graph_free(g);
	return n;
}

static int near(const double *got, const double *want, int n)
{
	for (int i = 0; i < n; i++)
		if (fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
			tap_diag("  element %d: %g, want %g", i, got[i],
				 want[i]);
			return 0;
		}
	return 1;
}

#define TF1_H2 "tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/" \
	"half_plus_two/00000123"
#define TF1_H2_SERVING "tensorflow__serving/tensorflow_serving/servables/" \
	"tensorflow/testdata/saved_model_half_plus_two_cpu/00000123"
#define TF2_H2 "tensorflow__serving/tensorflow_serving/servables/" \
	"tensorflow/testdata/saved_model_half_plus_two_tf2_cpu/00000123"
#define TIMES3 "tensorflow__tfjs/tfjs-node/test_objects/saved_model/" \
	"times_three_float"
#define SWL "tensorflow__tensorflow/tensorflow/c/experimental/saved_model/" \
	"internal/testdata/SimpleWhileLoop"
#define NESTED "tensorflow__tensorflow/tensorflow/core/grappler/costs/" \
	"graph_properties_testdata/nested_loop.pbtxt"
#define LSTM "SciSharp__TensorFlow.NET/test/TensorFlowNET.Keras.UnitTest/" \
	"Assets/lstm_from_sequential"

/* The string a fetch of a SavedModel gives after its init op ran. */
static int init_fetch(const char *rel, const char *fetch, const char *tail)
{
	ge_graph *g = load(rel);
	ge_xsession *s = NULL;
	ge_error err = {0};
	ge_xt *out = NULL;
	int rc = g ? ge_xsession_open(g, NULL, &s, &err) : GE_EIO;
	if (!rc)
		rc = ge_xsession_run(s, NULL, 0, &fetch, 1, &out, &err);
	if (rc)
		tap_diag("%s", err.msg);
	const ge_xstr *v = out && out->dtype == 7 && out->n == 1 ?
			   out->data : NULL;
	int good = v && v->len >= strlen(tail) &&
		   !strcmp(v->p + v->len - strlen(tail), tail);
	if (v && !good)
		tap_diag("  got '%s'", v->p ? v->p : "");
	ge_xt_unref(out);
	ge_xsession_close(s);
	ge_graph_free(g);
	return good;
}

/* Init ops: half_plus_two's TF1 legacy init op assigns a string to a
 * variable; the TF2 one assigns its asset's path, the asset tensor fed
 * as TensorFlow's loader feeds it. */
static void test_init(void)
{
	ok(init_fetch(TF1_H2, "filename_tensor:0", "foo.txt"),
	   "the TF1 legacy init op ran when the session opened");
	ok(init_fetch(TF2_H2, "Variable/Read/ReadVariableOp:0",
		      "/00000123/assets/foo.txt"),
	   "the TF2 init op ran with its asset's path");
}

static void test_half_plus_two(void)
{
	const float x[3] = {1, 2, 5};
	const double want[3] = {2.5, 3, 4.5};
	const int64_t d31[2] = {3, 1};
	double got[8];
	ok(run(TF1_H2, "x:0", 2, d31, x, "y:0", got, 8) == 3 &&
	   near(got, want, 3), "TF1 half_plus_two (tensorflow): y = 0.5x + 2");
	test_init();
	ok(run(TF1_H2_SERVING, "x:0", 2, d31, x, "y:0", got, 8) == 3 &&
	   near(got, want, 3), "TF1 half_plus_two (serving): y = 0.5x + 2");
	int good = 1;
	const int64_t d1 = 1;
	for (int i = 0; i < 3; i++)
		good &= run(TF2_H2, "serving_default_x:0", 1, &d1, &x[i],
			    "StatefulPartitionedCall_5:0", got, 8) == 1 &&
			near(got, &want[i], 1);
	ok(good, "TF2 half_plus_two (serving): y = 0.5x + 2, the variables "
	   "through the object graphs");
	good = 1;
	for (int i = 0; i < 3; i++) {
		double w = 3 * x[i];
		good &= run(TIMES3, "serving_default_x:0", 0, NULL, &x[i],
			    "StatefulPartitionedCall:0", got, 8) == 1 &&
			near(got, &w, 1);
	}
	ok(good, "tfjs-node times_three_float: 3x");
}

static int n_inner;

static void count_inner(void *ud, const char *name, const ge_xt *t)
{
	(void)ud;
	(void)t;
	if (!strncmp(name, "while/while/concat:0@", 21))
		n_inner++;
}

/* The outer loop doubles a [1,1,1] tensor of ones three times on axis
 * 0; the inner loop, run through a fetch of its Exit's op, doubles what
 * the outer iteration holds three times on axis 2. */
static void test_nested(void)
{
	ge_graph *g = load(NESTED);
	ge_xsession *s = NULL;
	ge_error err = {0};
	ge_xopts o = GE_XOPTS_INIT;
	o.on_tensor = count_inner;
	if (!g || ge_xsession_open(g, &o, &s, &err)) {
		ok(0, "nested_loop opens: %s", err.msg);
		ge_graph_free(g);
		return;
	}
	const char *fetch[2] = {"while/Exit_1:0", "^while/while/Exit_1"};
	ge_xt *out[2] = {NULL, NULL};
	int rc = ge_xsession_run(s, NULL, 0, fetch, 2, out, &err);
	ok(rc == GE_OK && out[0] && out[0]->rank == 3 &&
	   out[0]->dims[0] == 8 && out[0]->dims[1] == 1 &&
	   out[0]->dims[2] == 1 && ge_xt_get_double(out[0], 7) == 1,
	   "nested_loop: the outer loop's tensor is float32[8,1,1] %s",
	   rc ? err.msg : "");
	is_int(9, n_inner, "the inner loop ran 3 times in each of 3 outer "
	       "iterations");
	ge_xt_unref(out[0]);
	ge_xsession_close(s);
	ge_graph_free(g);
}

static void test_loops(void)
{
	const float v = 5;
	const double want = 15; /* 5 + 4 + 3 + 2 + 1 */
	double got[64];
	ok(run(SWL, "serving_default_value:0", 0, NULL, &v,
	       "PartitionedCall:0", got, 8) == 1 && near(got, &want, 1),
	   "SimpleWhileLoop: StatelessWhile from the SavedModel");
	const double three = 3;
	ok(run(NESTED, NULL, 0, NULL, NULL, "while/Exit:0", got, 8) == 1 &&
	   near(got, &three, 1), "nested_loop: the outer loop's counter");
	test_nested();
	if (!ge_kernel_find("MatMul")) {
		tap_skip(1, "lstm_from_sequential needs MatMul (kernels-nn)");
		return;
	}
	const int64_t d[3] = {2, 5, 3};
	float in[30];
	for (int i = 0; i < 30; i++)
		in[i] = (float)(i % 7) / 7.0f - 0.4f;
	int64_t n = run(LSTM, "serving_default_input_1:0", 3, d, in,
		"StatefulPartitionedCall:0", got, 64);
	ok(n == 2 && isfinite(got[0]) && isfinite(got[1]),
	   "Keras lstm_from_sequential from the SavedModel (%lld outputs)",
	   (long long)n);
}

int main(void)
{
	corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (GE_CORPUS)");
	test_half_plus_two();
	test_loops();
	return tap_done();
}
