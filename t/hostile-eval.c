/*
 * hostile-eval.c: the eleven defects of round 3 of hostile input (the
 * evaluator, shape inference, folding and the TF2 object graph), each on
 * a graph of a few hundred bytes built here.  Every case runs shape
 * inference and folding (or opens the object graph) and checks that the
 * op is refused with a message naming it, or that memory and work stay
 * within their budgets.  The cases that measure memory run in a child
 * process and read its peak resident size.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/bounds.h"
#include "analyses/eval.h"
#include "editor/fold.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "analyses/shapes.h"
#include "tap.h"
#include "variables/tf2.h"

#define BIG "9223372036854775807" /* INT64_MAX */

/* ------------------------------------------------------------ graphs */

static void shape_txt(ge_buf *b, int rank, const long long *dims)
{
	ge_buf_printf(b, "tensor_shape { ");
	for (int i = 0; i < rank; i++)
		ge_buf_printf(b, "dim { size: %lld } ", dims[i]);
	ge_buf_printf(b, "} ");
}

/* A Const of dtype (DT_FLOAT, DT_INT32, DT_INT64) and shape, values
 * given as text ("float_val: 1" or "int64_val: 2 int64_val: 3"). */
static void cnst(ge_buf *b, const char *name, const char *dtype, int rank,
		 const long long *dims, const char *vals)
{
	ge_buf_printf(b, "node { name: '%s' op: 'Const' attr { key: 'dtype' "
			 "value { type: %s } } attr { key: 'value' value { "
			 "tensor { dtype: %s ", name, dtype, dtype);
	shape_txt(b, rank, dims);
	ge_buf_printf(b, "%s } } } }\n", vals);
}

/* An op: inputs comma-separated, attrs as text. */
static void node(ge_buf *b, const char *name, const char *type,
		 const char *inputs, const char *attrs)
{
	ge_buf_printf(b, "node { name: '%s' op: '%s' ", name, type);
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", inputs);
	for (char *p = strtok(tmp, ","); p; p = strtok(NULL, ","))
		ge_buf_printf(b, "input: '%s' ", p);
	ge_buf_printf(b, "%s }\n", attrs ? attrs : "");
}

static ge_graph *parse(ge_buf *b, ge_format fmt)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse(b->data, b->len, fmt, "hostile", NULL, &g, &err) != GE_OK) {
		tap_diag("parse: %s", err.msg);
		g = NULL;
	}
	ge_buf_free(b);
	return g;
}

#define ATTR_T(t) "attr { key: 'T' value { type: " t " } } "
#define ATTR_I(k, v) "attr { key: '" k "' value { i: " v " } } "

/* Folds g; returns the report's notes (static) and whether op `name`
 * was left as it was (still its type). */
static const char *fold(ge_graph *g, const char *name, const char *type,
			int *left)
{
	static char notes[4096];
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	ge_fold_constants(g, NULL, 0, &r, &err);
	snprintf(notes, sizeof notes, "%.*s", (int)r.notes.len,
		 r.notes.data ? (const char *)r.notes.data : "");
	ge_opid id = ge_graph_find(g, name);
	*left = id != GE_NOOP && !strcmp(ge_op_type(g, id), type);
	ge_fold_report_free(&r);
	return notes;
}

static int has(const char *s, const char *what)
{
	if (strstr(s, what))
		return 1;
	tap_diag("'%s' not in: %s", what, s);
	return 0;
}

/* Shape inference names op `name` among its problems. */
static int shape_problem(ge_graph *g, const char *name)
{
	ge_buf rep = GE_BUF_INIT;
	ge_shapes_validate(g, &rep);
	ge_buf_addc(&rep, 0);
	char want[256];
	snprintf(want, sizeof want, "op '%s'", name);
	int r = has((const char *)rep.data, want);
	ge_buf_free(&rep);
	return r;
}

/* ------------------------------------------------------------ children */

/* Runs fn in a child; returns its exit status (0: passed) and its peak
 * resident size in *kb.  A child killed by a signal returns 128 + sig. */
static int in_child(int (*fn)(void), long *kb)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		/* a guard, not a measure: a kernel that ignores the work
		 * budget would run for hours */
		alarm(300);
		_exit(fn());
	}
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	wait4(p, &st, 0, &ru);
	*kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ------------------------------------------------------------ 1: Pad */

static void case1_pad(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d4[] = {4}, d12[] = {1, 2};
	cnst(&b, "x", "DT_FLOAT", 1, d4, "float_val: 1");
	/* 4 + (2^63-1) + (2^63-1) wraps to 2 */
	cnst(&b, "p", "DT_INT64", 2, d12, "int64_val: " BIG " int64_val: " BIG);
	node(&b, "pad", "Pad", "x,p",
	     ATTR_T("DT_FLOAT") "attr { key: 'Tpaddings' value { type: DT_INT64 } }");
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "1: a Pad whose paddings wrap the dim loads");
	if (!g)
		return;
	ok(shape_problem(g, "pad"), "1: its shape rule refuses it");
	int left;
	const char *n = fold(g, "pad", "Pad", &left);
	ok(left && has(n, "op 'pad' (Pad) left as it was") &&
		   has(n, "paddings"),
	   "1: folding leaves it, naming the op and the paddings");
	ge_graph_free(g);
}

/* ------------------------------------------------------------ 2: StridedSlice */

static void case2_strided_slice(void)
{
	ge_buf b = GE_BUF_INIT, v = GE_BUF_INIT;
	long long d32[32], d61[] = {61};
	for (int i = 0; i < 32; i++)
		d32[i] = 1;
	cnst(&b, "x", "DT_FLOAT", 32, d32, "float_val: 1");
	for (int i = 0; i < 61; i++)
		ge_buf_printf(&v, "int_val: %d ", i < 60 ? 0 : 1);
	ge_buf_addc(&v, 0);
	cnst(&b, "b", "DT_INT32", 1, d61, (const char *)v.data);
	cnst(&b, "e", "DT_INT32", 1, d61, (const char *)v.data);
	ge_buf_free(&v);
	long long d1[] = {61};
	cnst(&b, "s", "DT_INT32", 1, d1, "int_val: 1");
	/* sixty new axes, then an ellipsis over the 32 dims */
	node(&b, "ss", "StridedSlice", "x,b,e,s",
	     ATTR_T("DT_FLOAT") "attr { key: 'Index' value { type: DT_INT32 } } "
	     ATTR_I("new_axis_mask", "1152921504606846975")
	     ATTR_I("ellipsis_mask", "1152921504606846976"));
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "2: a StridedSlice of 60 new axes and an ellipsis loads");
	if (!g)
		return;
	ge_shapes_infer(g, NULL, NULL);
	int64_t dims[GE_SHAPE_MAXRANK];
	ge_tref t = {ge_graph_find(g, "ss"), 0};
	ok(ge_shapes_get(g, t, dims, GE_SHAPE_MAXRANK) < 0 &&
		   shape_problem(g, "ss"),
	   "2: shape inference refuses it (92 dims)");
	int left;
	const char *n = fold(g, "ss", "StridedSlice", &left);
	ok(left && has(n, "op 'ss' (StridedSlice) left as it was"),
	   "2: folding leaves it");
	ge_graph_free(g);
}

/* ------------------------------------------------------------ 3: Slice */

static void case3_slice(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d4[] = {4}, d1[] = {1};
	cnst(&b, "x", "DT_INT64", 1, d4,
	     "int64_val: 1 int64_val: 2 int64_val: 3 int64_val: 4");
	/* begin + size = 2^63 + 1 wraps negative */
	cnst(&b, "begin", "DT_INT64", 1, d1, "int64_val: 9223372036854775806");
	cnst(&b, "size", "DT_INT64", 1, d1, "int64_val: 3");
	node(&b, "sl", "Slice", "x,begin,size",
	     ATTR_T("DT_INT64") "attr { key: 'Index' value { type: DT_INT64 } }");
	node(&b, "out", "Identity", "sl", ATTR_T("DT_INT64"));
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "3: a Slice whose begin + size overflows loads");
	if (!g)
		return;
	ok(shape_problem(g, "sl"), "3: its shape rule refuses it");
	int left;
	const char *n = fold(g, "sl", "Slice", &left);
	ok(left && has(n, "op 'sl' (Slice) left as it was") &&
		   has(n, "out of bounds"),
	   "3: folding leaves it: no bytes from outside the input are saved");
	ge_graph_free(g);
}

/* ------------------------------------------------------------ 4, 8: Split */

/* n Splits of a [1] Const into `outs` outputs each. */
static ge_graph *splits(int n, const char *outs)
{
	ge_buf b = GE_BUF_INIT;
	long long d1[] = {1};
	cnst(&b, "x", "DT_FLOAT", 1, d1, "float_val: 1");
	cnst(&b, "axis", "DT_INT32", 0, NULL, "int_val: 0");
	char attrs[256], name[32];
	snprintf(attrs, sizeof attrs,
		 ATTR_T("DT_FLOAT") "attr { key: 'num_split' value { i: %s } }",
		 outs);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "s%d", i);
		node(&b, name, "Split", "axis,x", attrs);
	}
	return parse(&b, GE_FMT_GRAPHDEF_TEXT);
}

static int child_splits_wrap(void)
{
	/* 4300 x 1,000,000 outputs: more than 2^32 */
	ge_graph *g = splits(4300, "1000000");
	if (!g)
		return 2;
	ge_shapes_infer(g, NULL, NULL);
	int64_t d[GE_SHAPE_MAXRANK];
	ge_tref t = {ge_graph_find(g, "s4299"), 999999};
	int r = ge_shapes_get(g, t, d, GE_SHAPE_MAXRANK);
	ge_graph_free(g);
	return r < 0 ? 0 : 3;
}

static void case4_split_counter(void)
{
	long kb;
	int st = in_child(child_splits_wrap, &kb);
	is_int(0, st, "4: 4300 Splits of a million outputs: inference "
		      "finishes, their outputs unknown (exit %d, %ld MB)", st,
	       kb >> 10);
}

static int child_splits_mem(void)
{
	ge_set_max_memory((uint64_t)64 << 20);
	ge_graph *g = splits(10, "1000000");
	if (!g)
		return 2;
	ge_shape_stats st;
	ge_shapes_infer(g, &st, NULL);
	int64_t d[GE_SHAPE_MAXRANK];
	ge_tref t = {ge_graph_find(g, "s0"), 0};
	int r = ge_shapes_get(g, t, d, GE_SHAPE_MAXRANK);
	ge_graph_free(g);
	return r < 0 ? 0 : 3;
}

static void case8_shapes_memory(void)
{
	long kb;
	int st = in_child(child_splits_mem, &kb);
	is_int(0, st, "8: 10 Splits of a million outputs under --max-memory "
		      "64M: outputs not tracked");
	ok(kb < (160L << 10), "8: inference peaks at %ld MB (< 160 MB)",
	   kb >> 10);
}

/* ------------------------------------------------------------ 5: dtypes */

static void case5_dtypes(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d23[] = {2, 3}, d1[] = {1}, d12[] = {1, 2};
	cnst(&b, "x", "DT_FLOAT", 2, d23, "float_val: 1");
	cnst(&b, "i", "DT_INT32", 0, NULL, "int_val: 0");
	cnst(&b, "f", "DT_FLOAT", 0, NULL, "float_val: 5");
	cnst(&b, "ci", "DT_INT32", 0, NULL, "int_val: 7");
	cnst(&b, "v", "DT_FLOAT", 1, d1, "float_val: 2");
	cnst(&b, "p", "DT_INT32", 2, d12, "int_val: 1 int_val: 1");
	node(&b, "shape", "Shape", "x",
	     ATTR_T("DT_FLOAT") "attr { key: 'out_type' value { type: DT_FLOAT } }");
	node(&b, "size", "Size", "x",
	     ATTR_T("DT_FLOAT") "attr { key: 'out_type' value { type: DT_FLOAT } }");
	node(&b, "argmax", "ArgMax", "x,i",
	     ATTR_T("DT_FLOAT") "attr { key: 'output_type' value { type: DT_FLOAT } }");
	node(&b, "range", "Range", "i,f,ci",
	     "attr { key: 'Tidx' value { type: DT_INT32 } }");
	node(&b, "padv2", "PadV2", "v,p,ci",
	     ATTR_T("DT_FLOAT") "attr { key: 'Tpaddings' value { type: DT_INT32 } }");
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "5: ops whose output dtype attrs lie load");
	if (!g)
		return;
	int left, all = 1;
	const char *n = fold(g, "shape", "Shape", &left);
	static const char *const ops[][3] = {
		{"shape", "Shape", "out_type"},
		{"size", "Size", "out_type"},
		{"argmax", "ArgMax", "output_type"},
		{"range", "Range", "one numeric dtype"},
		{"padv2", "PadV2", "constant_values"},
	};
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		ge_opid id = ge_graph_find(g, ops[k][0]);
		char want[128];
		snprintf(want, sizeof want, "op '%s' (%s) left as it was",
			 ops[k][0], ops[k][1]);
		int o = id != GE_NOOP && !strcmp(ge_op_type(g, id), ops[k][1]) &&
			has(n, want) && has(n, ops[k][2]);
		ok(o, "5: %s with a dtype its storage does not have is refused",
		   ops[k][1]);
		all &= o;
	}
	(void)left;
	(void)all;
	ge_graph_free(g);
}

/* ------------------------------------------------------------ 6, 7 */

static void case6_batch_norm(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d3[] = {3}, d0[] = {0};
	cnst(&b, "x", "DT_FLOAT", 1, d3, "float_val: 1");
	cnst(&b, "c", "DT_FLOAT", 1, d0, "");
	node(&b, "bn", "FusedBatchNorm", "x,c,c,c,c",
	     ATTR_T("DT_FLOAT") "attr { key: 'data_format' value { s: 'NCHW' } } "
	     "attr { key: 'is_training' value { b: false } }");
	node(&b, "out", "Identity", "bn", ATTR_T("DT_FLOAT"));
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "6: an NCHW FusedBatchNorm of a rank-1 input loads");
	if (!g)
		return;
	int left;
	const char *n = fold(g, "bn", "FusedBatchNorm", &left);
	ok(left && has(n, "op 'bn' (FusedBatchNorm) left as it was") &&
		   has(n, "data_format"),
	   "6: folding refuses it (no division by a missing dim)");
	ge_graph_free(g);
}

static void case7_argmax_empty(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d30[] = {3, 0, 2};
	cnst(&b, "x", "DT_FLOAT", 3, d30, "");
	cnst(&b, "a", "DT_INT32", 0, NULL, "int_val: 1");
	node(&b, "am", "ArgMax", "x,a", ATTR_T("DT_FLOAT"));
	node(&b, "out", "Identity", "am", ATTR_T("DT_INT64"));
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "7: an ArgMax along an empty axis loads");
	if (!g)
		return;
	int left;
	const char *n = fold(g, "am", "ArgMax", &left);
	ok(left && has(n, "op 'am' (ArgMax) left as it was") &&
		   has(n, "empty"),
	   "7: folding refuses it");
	ge_graph_free(g);
}

/* ------------------------------------------------------------ 9: fold memory */

/* A chain of `len` Adds over a splat of 2^21 floats (16 MB as doubles). */
static ge_graph *splat_chain(int len)
{
	ge_buf b = GE_BUF_INIT;
	long long d[] = {1 << 21};
	cnst(&b, "c", "DT_FLOAT", 1, d, "float_val: 1");
	char name[32], prev[32], in[80];
	snprintf(prev, sizeof prev, "c");
	for (int i = 0; i < len; i++) {
		snprintf(name, sizeof name, "a%d", i);
		snprintf(in, sizeof in, "%s,c", prev);
		node(&b, name, "AddV2", in, ATTR_T("DT_FLOAT"));
		snprintf(prev, sizeof prev, "%s", name);
	}
	return parse(&b, GE_FMT_GRAPHDEF_TEXT);
}

static int child_fold_chain(void)
{
	ge_graph *g = splat_chain(40);
	if (!g)
		return 2;
	int left;
	fold(g, "a39", "AddV2", &left);
	ge_value v;
	ge_opid id = ge_graph_find(g, "a39");
	int rc = id != GE_NOOP && !left &&
			 ge_value_from_const(g, id, &v, NULL) == GE_OK
		 ? (v.n == (1 << 21) && v.d[5] == 41 ? 0 : 4)
		 : 3;
	if (rc == 0)
		ge_value_free(&v);
	ge_graph_free(g);
	return rc;
}

static int child_fold_budget(void)
{
	ge_set_max_memory((uint64_t)24 << 20);
	ge_graph *g = splat_chain(3);
	if (!g)
		return 2;
	int left;
	const char *n = fold(g, "a0", "AddV2", &left);
	int rc = left && strstr(n, "op 'a0' (AddV2) left as it was") &&
			 strstr(n, "memory budget")
		 ? 0
		 : 3;
	ge_graph_free(g);
	return rc;
}

/* AddressSanitizer keeps up to 256 MB of freed memory in quarantine
 * before it reuses it: freeing values early shows less in its peak. */
#ifdef GE_ASAN
#define QUARANTINE_KB (256L << 10)
#else
#define QUARANTINE_KB 0L
#endif

static void case9_fold_memory(void)
{
	long kb;
	int st = in_child(child_fold_chain, &kb);
	is_int(0, st, "9: a chain of 40 Adds of 2^21-element splats folds to "
		      "the right value");
	ok(kb < (200L << 10) + QUARANTINE_KB,
	   "9: folding it peaks at %ld MB (< 200 MB, and ASan's quarantine; "
	   "640 MB if every value were kept)", kb >> 10);
	st = in_child(child_fold_budget, &kb);
	is_int(0, st, "9: under --max-memory 24M the first Add is left, "
		      "naming the memory budget");
}

/* ------------------------------------------------------------ 10: work */

static ge_graph *matmul(int n)
{
	ge_buf b = GE_BUF_INIT;
	long long d[] = {n, n};
	cnst(&b, "a", "DT_FLOAT", 2, d, "float_val: 1");
	cnst(&b, "b", "DT_FLOAT", 2, d, "float_val: 2");
	node(&b, "mm", "MatMul", "a,b", ATTR_T("DT_FLOAT"));
	return parse(&b, GE_FMT_GRAPHDEF_TEXT);
}

/* At the default budgets (GEREWRITE_MAX_WORK and GEREWRITE_MAX_MEMORY
 * unset): a MatMul of n x n splats is left, naming the budget. */
static int matmul_default(int n, const char *budget)
{
	unsetenv("GEREWRITE_MAX_WORK");
	unsetenv("GEREWRITE_MAX_MEMORY");
	ge_set_max_work(0);
	ge_graph *g = matmul(n);
	if (!g)
		return 2;
	int left;
	const char *notes = fold(g, "mm", "MatMul", &left);
	int rc = left && strstr(notes, "op 'mm' (MatMul) left as it was") &&
			 strstr(notes, budget)
		 ? 0
		 : 3;
	if (rc)
		fprintf(stderr, "%s\n", notes);
	ge_graph_free(g);
	return rc;
}

static int child_matmul_2048(void)
{
	return matmul_default(2048, "work budget");
}

static int child_matmul_8192(void)
{
	return matmul_default(8192, "budget");
}

static void case10_work(void)
{
	ge_set_max_work(1 << 20);
	ge_graph *g = matmul(256);
	int left;
	const char *n = g ? fold(g, "mm", "MatMul", &left) : "";
	ok(g && left && has(n, "op 'mm' (MatMul) left as it was") &&
		   has(n, "work budget"),
	   "10: a MatMul of 2^24 multiply-adds over --max-work 1M is left");
	ge_graph_free(g);

	ge_buf b = GE_BUF_INIT;
	long long dx[] = {1, 64, 64, 16}, df[] = {3, 3, 16, 16};
	cnst(&b, "x", "DT_FLOAT", 4, dx, "float_val: 1");
	cnst(&b, "w", "DT_FLOAT", 4, df, "float_val: 1");
	node(&b, "conv", "Conv2D", "x,w",
	     ATTR_T("DT_FLOAT") "attr { key: 'padding' value { s: 'SAME' } } "
	     "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } }");
	g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	n = g ? fold(g, "conv", "Conv2D", &left) : "";
	ok(g && left && has(n, "op 'conv' (Conv2D) left as it was") &&
		   has(n, "work budget"),
	   "10: so is a Conv2D of 9.4M multiply-adds");
	ge_graph_free(g);

	ge_set_max_work(1 << 30);
	g = matmul(16);
	n = g ? fold(g, "mm", "MatMul", &left) : "";
	ok(g && !left, "10: a small MatMul still folds");
	ge_graph_free(g);

	long kb;
	int st = in_child(child_matmul_2048, &kb);
	is_int(0, st, "10: at the default budget, a MatMul of two 2048x2048 "
		      "splats (2^33 multiply-adds) is left");
	st = in_child(child_matmul_8192, &kb);
	is_int(0, st, "10: and so is one of two 8192x8192 splats (2^39)");
}

/* ------------------------------------------------------------ 11: TF2 */

/* A MetaGraphDef whose object graph is a chain of `depth` objects under
 * the root. */
static ge_graph *object_chain(int depth)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_printf(&b, "graph_def { node { name: 'c' op: 'Const' attr { "
			  "key: 'dtype' value { type: DT_FLOAT } } attr { key: "
			  "'value' value { tensor { dtype: DT_FLOAT "
			  "float_val: 1 } } } } }\nobject_graph_def {\n");
	for (int i = 0; i <= depth; i++) {
		if (i < depth)
			ge_buf_printf(&b, "nodes { children { node_id: %d "
					  "local_name: 'c' } user_object { } }\n",
				      i + 1);
		else
			ge_buf_printf(&b, "nodes { user_object { } }\n");
	}
	ge_buf_printf(&b, "}\n");
	return parse(&b, GE_FMT_META_TEXT);
}

static int child_tf2_chain(void)
{
	ge_graph *g = object_chain(20000);
	if (!g)
		return 2;
	ge_tf2_objects *o = NULL;
	ge_error err;
	int rc = ge_tf2_objects_open(g, NULL, &o, &err);
	int r = rc == GE_EFORMAT && strstr(err.msg, "nests deeper than") ? 0 : 3;
	if (r)
		fprintf(stderr, "open: %d %s\n", rc, rc ? err.msg : "");
	ge_tf2_objects_free(o);
	ge_graph_free(g);
	return r;
}

static void case11_tf2(void)
{
	long kb, base;
	int st = in_child(child_tf2_chain, &kb);
	is_int(0, st, "11: a 20,000-deep chain of objects is refused with a "
		      "depth message");
	ge_graph *g = object_chain(900);
	ge_tf2_objects *o = NULL;
	ge_error err;
	ok(g && ge_tf2_objects_open(g, NULL, &o, &err) == GE_OK,
	   "11: a 900-deep chain opens");
	ge_tf2_objects_free(o);
	ge_graph_free(g);
	(void)base;
	ok(kb < (160L << 10), "11: the deep chain peaks at %ld MB (< 160 MB; "
			      "about 400 MB of paths before)", kb >> 10);
}

/* `hostile-eval N` runs case N alone (to watch one case fail on a tree
 * without the fixes, where the first crash would hide the others). */
/* ------------------------------------------------------------ 12: empty, large dims */

/* An empty value whose shape has a large dim before the 0: the
 * reduction's output {2^31, 0} holds no element.  ge_eval_k_new took that
 * shape, but the value's count read -1, and the reduction asked calloc
 * for SIZE_MAX counters (found by fuzz_eval). */
static void case12_empty_large_dims(void)
{
	ge_buf b = GE_BUF_INIT;
	long long d[] = {0, 1LL << 31, 0};
	cnst(&b, "x", "DT_FLOAT", 3, d, "");
	cnst(&b, "a", "DT_INT32", 0, NULL, "int_val: 0");
	node(&b, "s", "Sum", "x,a", ATTR_T("DT_FLOAT"));
	node(&b, "t", "Transpose", "x,p", ATTR_T("DT_FLOAT"));
	long long three[] = {3};
	cnst(&b, "p", "DT_INT32", 1, three,
	     "int_val: 1 int_val: 2 int_val: 0");
	ge_graph *g = parse(&b, GE_FMT_GRAPHDEF_TEXT);
	ok(g != NULL, "12: an empty value of shape {0, 2^31, 0} loads");
	if (!g)
		return;
	ge_value v;
	ge_error err;
	int rc = ge_eval_tensor(g, (ge_tref){ge_graph_find(g, "s"), 0}, &v,
				&err);
	ok(rc == GE_OK && v.rank == 2 && v.dims[0] == (1LL << 31) &&
		   v.dims[1] == 0 && v.n == 0,
	   "12: its Sum over axis 0 is the empty value {2^31, 0} (%s)",
	   rc == GE_OK ? "ok" : err.msg);
	if (rc == GE_OK)
		ge_value_free(&v);
	rc = ge_eval_tensor(g, (ge_tref){ge_graph_find(g, "t"), 0}, &v, &err);
	ok(rc == GE_OK && v.rank == 3 && v.dims[0] == (1LL << 31) &&
		   v.n == 0,
	   "12: its Transpose is the empty value {2^31, 0, 0} (%s)",
	   rc == GE_OK ? "ok" : err.msg);
	if (rc == GE_OK)
		ge_value_free(&v);
	int left;
	fold(g, "s", "Sum", &left);
	ok(1, "12: folding it ends");
	ge_graph_free(g);
}

int main(int argc, char **argv)
{
	static void (*const cases[])(void) = {
		case1_pad, case2_strided_slice, case3_slice,
		case4_split_counter, case5_dtypes, case6_batch_norm,
		case7_argmax_empty, case8_shapes_memory, case9_fold_memory,
		case10_work, case11_tf2, case12_empty_large_dims,
	};
	int only = argc > 1 ? atoi(argv[1]) : 0;
	for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
		if (!only || only == i + 1)
			cases[i]();
	return tap_done();
}
