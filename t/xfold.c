/*
 * xfold: folding and evaluation on the runner's kernels (exec/xfold.h).
 *
 * A product whose float32 sum loses what a double keeps tells the two
 * apart: [2^24, 1, 1] . [1, 1, 1] is 16777218 in double and 16777216 in
 * float32, TensorFlow's answer.  Folded with the runner's kernels in
 * front, the Const holds the runner's bits; without, the evaluator's.
 * An op type only the runner has folds; a stateful kernel, a dtype the
 * evaluator does not hold and a kernel's refusal are left to the
 * evaluator's kernels, which fold or refuse as they did.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "editor/fold.h"
#include "exec/kernel.h"
#include "exec/xfold.h"
#include "formats/model.h"
#include "graph/graph.h"
#include "tap.h"

#define FCONST(n, shape, vals) \
	"node { name: '" n "' op: 'Const' attr { key: 'dtype' value { " \
	"type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: " \
	"DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"

/* p = MatMul(a, b), read by out = Identity(p): a and b are Consts. */
#define MATMUL_OUT \
	"node { name: 'p' op: 'MatMul' input: 'a' input: 'b' " \
	"attr { key: 'T' value { type: DT_FLOAT } } }\n" \
	"node { name: 'out' op: 'Identity' input: 'p' " \
	"attr { key: 'T' value { type: DT_FLOAT } } }\n"

static const char *product =
	FCONST("a", "dim { size: 1 } dim { size: 3 }",
	       "float_val: 16777216 float_val: 1 float_val: 1")
	FCONST("b", "dim { size: 3 } dim { size: 1 }", "float_val: 1")
	MATMUL_OUT;

static ge_graph *parse(const char *txt)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse((const uint8_t *)txt, strlen(txt), GE_FMT_GRAPHDEF_TEXT,
		     "xfold", NULL, &g, &err) != GE_OK) {
		tap_diag("parse: %s", err.msg);
		return NULL;
	}
	return g;
}

/* Folds txt and returns the first element of the Const op `name`
 * became (NAN when it is not a Const); *notes gets the report's notes. */
static double fold_value(const char *txt, const char *name, char *notes,
			 size_t cap)
{
	ge_graph *g = parse(txt);
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	ge_value v;
	double x = NAN;
	if (!g)
		return x;
	if (ge_fold_constants(g, NULL, 0, &r, &err) != GE_OK)
		tap_diag("fold: %s", err.msg);
	snprintf(notes, cap, "%.*s", (int)r.notes.len,
		 r.notes.data ? (const char *)r.notes.data : "");
	ge_opid id = ge_graph_find(g, name);
	if (id != GE_NOOP && !strcmp(ge_op_type(g, id), "Const") &&
	    ge_value_from_const(g, id, &v, &err) == GE_OK) {
		x = v.d ? v.d[0] : (double)v.i[0];
		ge_value_free(&v);
	}
	ge_fold_report_free(&r);
	ge_graph_free(g);
	return x;
}

/* The product by the runner's MatMul kernel itself. */
static double kernel_product(void)
{
	ge_graph *g = parse(product);
	ge_xbudget xb;
	ge_error err;
	ge_xt *in[2] = {NULL, NULL}, *out[1] = {NULL};
	double x = NAN;
	int64_t da[2] = {1, 3}, db[2] = {3, 1};
	ge_xbudget_init(&xb);
	in[0] = ge_xt_new(1 /* DT_FLOAT */, 2, da, &xb, "a", &err);
	in[1] = ge_xt_new(1, 2, db, &xb, "b", &err);
	float *a = in[0]->data, *b = in[1]->data;
	a[0] = 16777216, a[1] = 1, a[2] = 1, b[0] = b[1] = b[2] = 1;
	ge_kctx k = {g, ge_graph_find(g, "p"), "MatMul", "p", in, 2, out, 1,
		     &xb, NULL, &err};
	if (ge_kernel_find("MatMul")->fn(&k) == GE_OK)
		x = ((float *)out[0]->data)[0];
	ge_xt_unref(out[0]), ge_xt_unref(in[0]), ge_xt_unref(in[1]);
	ge_graph_free(g);
	return x;
}

/* A type the runner has a stateless kernel for and the evaluator has
 * not, or NULL. */
static const char *runner_only(void)
{
	static const char *const cand[] = {"MaxPool", "AvgPool", "Erf",
					   "BatchMatMulV2", "TopKV2", NULL};
	for (int i = 0; cand[i]; i++)
		if (!ge_eval_supported(cand[i]) && ge_xfold_supported(cand[i]))
			return cand[i];
	return NULL;
}

int main(void)
{
	char notes[4096];
	const char *only;

	/* the evaluator alone: a double sum, rounded once */
	ge_eval_set_front(NULL, NULL);
	ok(fold_value(product, "out", notes, sizeof notes) == 16777218.0,
	   "evaluator alone: the product folds to the double sum 16777218");
	only = runner_only();
	ok(only != NULL, "an op type the runner has and the evaluator has "
	   "not (%s)", only ? only : "none");

	ge_xfold_install();
	ge_xfold_install(); /* idempotent */
	double want = kernel_product();
	ok(want == 16777216.0, "the runner's MatMul: the float32 sum "
	   "16777216 (TensorFlow's)");
	ok(fold_value(product, "out", notes, sizeof notes) == want,
	   "runner in front: the folded Const holds the runner's bits");
	ok(only && ge_eval_supported(only),
	   "runner in front: the evaluator supports %s", only ? only : "-");

	/* MaxPool over a Const: folds only with the runner in front */
	static const char *pool =
		FCONST("x", "dim { size: 1 } dim { size: 2 } dim { size: 2 } "
		       "dim { size: 1 }",
		       "float_val: 1 float_val: 4 float_val: 3 float_val: 2")
		"node { name: 'm' op: 'MaxPool' input: 'x' "
		"attr { key: 'T' value { type: DT_FLOAT } } "
		"attr { key: 'ksize' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
		"attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
		"attr { key: 'padding' value { s: 'VALID' } } }\n"
		"node { name: 'o' op: 'Identity' input: 'm' "
		"attr { key: 'T' value { type: DT_FLOAT } } }\n";
	ok(fold_value(pool, "o", notes, sizeof notes) == 4.0,
	   "a MaxPool of a Const folds to 4 %s", notes);

	/* a stateful kernel is not taken: a random op stays */
	ok(!ge_xfold_supported("RandomUniform") &&
	   ge_kernel_find("RandomUniform") != NULL,
	   "a stateful kernel (RandomUniform) is not in front");
	ok(!ge_xfold_supported("NoSuchOp"), "an unknown type is not");

	/* a kernel's refusal leaves the op to the evaluator, whose own
	 * refusal is the note: a MatMul of mismatched inner dimensions */
	static const char *bad =
		FCONST("a", "dim { size: 1 } dim { size: 3 }",
		       "float_val: 1")
		FCONST("b", "dim { size: 2 } dim { size: 1 }", "float_val: 1")
		MATMUL_OUT;
	double x = fold_value(bad, "out", notes, sizeof notes);
	ok(x != x && strstr(notes, "'p'"),
	   "a refused MatMul is left, the evaluator's note names it: %s",
	   notes);

	/* back to the evaluator alone */
	ge_eval_set_front(NULL, NULL);
	ok(fold_value(product, "out", notes, sizeof notes) == 16777218.0 &&
	   !ge_eval_supported(only ? only : "MaxPool"),
	   "NULL, NULL: the evaluator alone again");
	return tap_done();
}
