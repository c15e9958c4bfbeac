/* The executor on graphs written here: straight-line runs, feeds and
 * fetches, TF1 while loops (one, nested, one in an untaken branch),
 * conds through Switch and Merge with dead branches, functional While,
 * If, Case and PartitionedCall, variables restored from a checkpoint the
 * test writes, and the errors. */
#include <math.h>
#include <stdint.h>

#include "base/bundle.h"
#include "exec/exec.h"
#include "testutil.h"
#include "xgraphs.h"

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_BOOL = 10 };

static ge_xt *fvec(int n, const float *v)
{
	int64_t d = n;
	ge_xt *t = ge_xt_new(DT_FLOAT, 1, &d, NULL, "test", NULL);
	memcpy(t->data, v, (size_t)n * sizeof *v);
	return t;
}

static ge_xt *scalar(int dtype, double v)
{
	ge_xt *t = ge_xt_scalar(dtype, NULL, "test", NULL);
	if (dtype == DT_FLOAT)
		((float *)t->data)[0] = (float)v;
	else if (dtype == DT_INT32)
		((int32_t *)t->data)[0] = (int32_t)v;
	else
		((uint8_t *)t->data)[0] = v != 0;
	return t;
}

/* Runs one fetch; its value as text ("2.5,4.5") or "error: msg". */
static const char *run1(ge_xsession *s, const ge_xfeed *f, int nf,
			const char *fetch)
{
	static char buf[8][1100];
	static int k;
	char *b = buf[k++ % 8];
	ge_xt *out = NULL;
	ge_error err = {0};
	if (ge_xsession_run(s, f, nf, &fetch, 1, &out, &err)) {
		snprintf(b, 1100, "error: %s", err.msg);
		return b;
	}
	b[0] = 0;
	if (!out)
		return "(none)";
	for (int64_t i = 0; i < out->n && strlen(b) < 1000; i++)
		snprintf(b + strlen(b), 1100 - strlen(b), "%s%g", i ? "," : "",
			 ge_xt_get_double(out, i));
	ge_xt_unref(out);
	return b;
}

static ge_xsession *open_text(const char *txt, int64_t max_iter,
			      ge_graph **gp)
{
	ge_graph *g = parse(txt);
	ge_xopts o = GE_XOPTS_INIT;
	o.max_iterations = max_iter;
	ge_xsession *s = NULL;
	ge_error err = {0};
	if (ge_xsession_open(g, &o, &s, &err)) {
		printf("Bail out! session: %s\n", err.msg);
		exit(1);
	}
	*gp = g;
	return s;
}

static int has(const char *s, const char *part)
{
	if (!strstr(s, part))
		tap_diag("  '%s' not in '%s'", part, s);
	return strstr(s, part) != NULL;
}

/* ------------------------------------------------------------ straight */

static int n_seen;
static char seen_names[65536];

static void on_tensor(void *ud, const char *name, const ge_xt *t)
{
	(void)ud;
	(void)t;
	n_seen++;
	if (strlen(seen_names) + strlen(name) + 2 < sizeof seen_names) {
		strcat(seen_names, name);
		strcat(seen_names, " ");
	}
}

#define STRAIGHT \
	PH("x", "DT_FLOAT", "dim { size: 3 }") \
	FCONST("two", "2", "") FCONST("half", "0.5", "") \
	NODE("n", "NoOp", "", "") \
	BIN("m", "Mul", "x", "two") \
	NODE("y", "AddV2", IN("m") IN("half") IN("^n"), FL) \
	UN("id", "Identity", "y") \
	NODE("f", "Frobnicate", IN("x"), "")

static void test_straight(void)
{
	ge_graph *g = parse(STRAIGHT);
	ge_xopts o = GE_XOPTS_INIT;
	o.on_tensor = on_tensor;
	ge_xsession *s = NULL;
	ge_error err = {0};
	ok(ge_xsession_open(g, &o, &s, &err) == GE_OK, "open: %s", err.msg);
	float xv[3] = {1, 2, 5};
	ge_xt *x = fvec(3, xv);
	ge_xfeed f = {"x", x};
	is_string("2.5,4.5,10.5", run1(s, &f, 1, "id:0"), "y = 2x + 0.5");
	ok(n_seen == 6 && has(seen_names, "m:0") && has(seen_names, "id:0"),
	   "on_tensor sees every tensor produced (%d)", n_seen);
	ok(has(run1(s, NULL, 0, "id"), "x (Placeholder): must be fed"),
	   "a missing feed names the Placeholder");
	ok(ge_xsession_peak(s) > 0, "peak memory is reported");
	float mv[3] = {10, 10, 10};
	ge_xt *m = fvec(3, mv);
	ge_xfeed fm = {"m:0", m};
	is_string("10.5,10.5,10.5", run1(s, &fm, 1, "y"),
		  "a fed tensor replaces its op, whose inputs are not needed");
	is_string("(none)", run1(s, &f, 1, "^y"), "a fetch '^op' runs it");
	ge_xt *xi = scalar(DT_INT32, 1);
	ge_xfeed fi = {"x", xi};
	ok(has(run1(s, &fi, 1, "y"), "feed 'x': int32[] given, 'x' holds "
		   "float"), "a feed of the wrong dtype is refused");
	ge_xt *x2 = fvec(2, xv);
	ge_xfeed f2 = {"x", x2};
	ok(has(run1(s, &f2, 1, "y"), "'x' takes shape [3]"),
	   "a feed of the wrong shape is refused");
	ok(has(run1(s, &f, 1, "f"), "no kernel for op type 'Frobnicate'"),
	   "an op with no kernel names its type");
	ok(has(run1(s, &f, 1, "nope:0"), "fetch: no tensor 'nope:0'"),
	   "an unknown fetch");
	ge_xfeed fn = {"nope", x};
	ok(has(run1(s, &fn, 1, "y"), "feed: no tensor 'nope'"),
	   "an unknown feed");
	ge_xt_unref(x);
	ge_xt_unref(x2);
	ge_xt_unref(xi);
	ge_xt_unref(m);
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ cond */

static void test_cond(void)
{
	ge_graph *g = NULL;
	ge_xsession *s = open_text(COND, 0, &g);
	ge_xt *pt = scalar(DT_BOOL, 1), *pf = scalar(DT_BOOL, 0);
	ge_xfeed ft = {"p", pt}, ff = {"p", pf};
	is_string("6", run1(s, &ft, 1, "out"), "cond true: the true branch");
	is_string("103", run1(s, &ff, 1, "out"), "cond false: the false "
		  "branch");
	is_string("1", run1(s, &ft, 1, "m:1"), "Merge's value_index");
	ok(has(run1(s, &ff, 1, "t"), "fetch 't:0': it is dead"),
	   "a fetch on the untaken branch is dead");
	ok(has(run1(s, &ft, 1, "sw:0"), "fetch 'sw:0': it is dead"),
	   "so is a Switch's untaken output");
	is_string("3", run1(s, &ft, 1, "sw:1"), "its taken output is not");
	ok(has(run1(s, &ff, 1, "after_t"), "dead"),
	   "a control edge from a dead op makes its consumer dead");
	is_string("7", run1(s, &ft, 1, "after_t"), "and live when it ran");
	is_string("6", run1(s, &ft, 1, "m2"), "a loop entered with dead "
		  "tensors ends, its dead Exits reach the Merge");
	is_string("10", run1(s, &ff, 1, "m2"), "the same loop run live");
	ge_xt_unref(pt);
	ge_xt_unref(pf);
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ loops */

static void test_loops(void)
{
	ge_graph *g = NULL;
	ge_xsession *s = open_text(WHILE1, 0, &g);
	is_string("10", run1(s, NULL, 0, "out"), "a TF1 while loop");
	ge_xsession_close(s);
	ge_graph_free(g);
	s = open_text(WHILE1, 5, &g);
	ok(has(run1(s, NULL, 0, "out"), "while loop 'while/ctx': more than 5 "
		   "iterations (--max-iterations)"),
	   "--max-iterations stops a loop, naming its frame");
	ge_xsession_close(s);
	ge_graph_free(g);
	s = open_text(CONDLOOP, 0, &g);
	is_string("23", run1(s, NULL, 0, "out"), "a cond in a loop's body");
	ge_xsession_close(s);
	ge_graph_free(g);
	g = parse(NESTED);
	ge_xopts o = GE_XOPTS_INIT;
	o.on_tensor = on_tensor;
	n_seen = 0;
	seen_names[0] = 0;
	ge_error err = {0};
	if (ge_xsession_open(g, &o, &s, &err))
		printf("Bail out! %s\n", err.msg);
	is_string("12", run1(s, NULL, 0, "out"), "nested loops");
	ok(has(seen_names, "o/addi:0@2 ") && has(seen_names, "i/adds:0@2.3 ") &&
	   has(seen_names, "o/xs:0 ") && has(seen_names, "i/xs:0@1 "),
	   "tensors of loops are named by their iterations");
	is_string("3", run1(s, NULL, 0, "o/xi"), "the outer counter");
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ functions */

static void test_functions(void)
{
	ge_graph *g = NULL;
	ge_xsession *s = open_text(FUNCS, 0, &g);
	ge_xt *x = scalar(DT_FLOAT, 3), *pt = scalar(DT_BOOL, 1);
	ge_xt *pf = scalar(DT_BOOL, 0), *k0 = scalar(DT_INT32, 0);
	ge_xt *k9 = scalar(DT_INT32, 9);
	ge_xfeed f[3] = {{"x", x}, {"p", pt}, {"k", k0}};
	is_string("6", run1(s, f, 1, "call"), "PartitionedCall");
	is_string("4", run1(s, f, 1, "direct"), "a call by op type");
	is_string("10", run1(s, f, 1, "w"), "StatelessWhile");
	is_string("6", run1(s, f, 2, "if"), "If, then branch");
	f[1].t = pf;
	is_string("4", run1(s, f, 2, "if"), "If, else branch");
	is_string("6", run1(s, f, 3, "case"), "Case, branch 0");
	f[2].t = k9;
	is_string("4", run1(s, f, 3, "case"), "Case out of range: the last "
		  "branch");
	ok(has(run1(s, f, 1, "oops"), "function 'bad': zap (Frobnicate): no "
		   "kernel"), "an error in a body names the function");
	ge_xt *y = NULL;
	ge_error err = {0};
	ok(ge_xsession_call(s, "times2", &x, 1, &y, 1, &err) == GE_OK &&
	   y && ge_xt_get_double(y, 0) == 6, "ge_xsession_call");
	ge_xt_unref(y);
	ge_xsession_close(s);
	ge_graph_free(g);
	g = parse(FUNCS);
	ge_xopts o = GE_XOPTS_INIT;
	o.on_tensor = on_tensor;
	seen_names[0] = 0;
	if (ge_xsession_open(g, &o, &s, &err))
		printf("Bail out! %s\n", err.msg);
	is_string("10", run1(s, f, 1, "w"), "StatelessWhile, watched");
	ok(has(seen_names, "less10/l:0 ") && has(seen_names, "add1/a:0 ") &&
	   has(seen_names, "w:0 "), "tensors of bodies are named by their "
	   "function");
	ge_xsession_close(s);
	ge_graph_free(g);
	s = open_text(FUNCS, 4, &g);
	ok(has(run1(s, f, 1, "w"), "w (StatelessWhile): more than 4 "
		   "iterations"), "--max-iterations stops a While");
	ge_xsession_close(s);
	ge_graph_free(g);
	ge_xt_unref(x);
	ge_xt_unref(pt);
	ge_xt_unref(pf);
	ge_xt_unref(k0);
	ge_xt_unref(k9);
}

/* ------------------------------------------------------------ variables */

#define VSHAPE "attr { key: \"shape\" value { shape { dim { size: 3 } } } } "
#define VDT "attr { key: \"dtype\" value { type: DT_FLOAT } } "
#define META \
	"graph_def { " \
	NODE("v", "VariableV2", "", VDT VSHAPE) \
	UN("v/read", "Identity", "v") \
	NODE("u", "VariableV2", "", VDT VSHAPE) \
	UN("u/read", "Identity", "u") \
	PH("x", "DT_FLOAT", "dim { size: 3 }") \
	BIN("y", "Mul", "v/read", "x") \
	NODE("h", "VarHandleOp", "", VDT VSHAPE \
	     "attr { key: \"shared_name\" value { s: \"h\" } }") \
	NODE("r", "ReadVariableOp", IN("h"), VDT) \
	NODE("inc", "AssignAddVariableOp", IN("h") IN("x"), VDT) \
	NODE("asg", "Assign", IN("v") IN("x"), FL) \
	NODE("init", "VarIsInitializedOp", IN("h"), "") \
	NODE("idx", "Const", "", "attr { key: \"dtype\" value { type: " \
	     "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: " \
	     "DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 " \
	     "int_val: 0 } } }") \
	NODE("gather", "ResourceGather", IN("h") IN("idx"), VDT \
	     "attr { key: \"Tindices\" value { type: DT_INT32 } }") \
	NODE("vshape", "VariableShape", IN("h"), \
	     "attr { key: \"out_type\" value { type: DT_INT32 } }") \
	NODE("selfasg", "AssignVariableOp", IN("h") IN("h"), VDT) \
	NODE("callbump", "StatefulPartitionedCall", IN("x"), FLIST("Tin") \
	     FLIST("Tout") FUNC("f", "bump")) \
	"library { function { signature { name: \"bump\" input_arg { " \
	"name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: " \
	"DT_FLOAT } is_stateful: true } " \
	"node_def { name: \"hv\" op: \"VarHandleOp\" " VDT VSHAPE \
	"attr { key: \"shared_name\" value { s: \"h\" } } } " \
	"node_def { name: \"add\" op: \"AssignAddVariableOp\" input: " \
	"\"hv:resource:0\" input: \"x\" " VDT "} " \
	"ret { key: \"y\" value: \"x\" } } } " \
	"}\n"

static void test_variables(void)
{
	char dir[] = "/tmp/ge-exec-XXXXXX", path[256];
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	snprintf(path, sizeof path, "%s/model.meta", dir);
	FILE *fp = fopen(path, "w");
	fputs(META, fp);
	fclose(fp);
	snprintf(path, sizeof path, "%s/model", dir);
	ge_bundle_writer *w = NULL;
	ge_error err = {0};
	float v[3] = {1, 2, 3}, h[3] = {10, 20, 30};
	int64_t d = 3;
	ok(!ge_bundle_writer_open(path, &w, &err) &&
	   !ge_bundle_writer_add(w, "v", DT_FLOAT, 1, &d, v, sizeof v, &err) &&
	   !ge_bundle_writer_add(w, "h", DT_FLOAT, 1, &d, h, sizeof h, &err) &&
	   !ge_bundle_writer_finish(w, &err), "checkpoint written: %s",
	   err.msg);
	snprintf(path, sizeof path, "%s/model.meta", dir);
	ge_graph *g = NULL;
	ge_xsession *s = NULL;
	ok(!ge_load(path, NULL, &g, &err) &&
	   !ge_xsession_open(g, NULL, &s, &err), "open: %s", err.msg);
	float xv[3] = {2, 2, 2};
	ge_xt *x = fvec(3, xv);
	ge_xfeed f = {"x", x};
	is_string("2,4,6", run1(s, &f, 1, "y"), "a VariableV2 restored");
	is_string("10,20,30", run1(s, NULL, 0, "r"), "a VarHandleOp restored");
	is_string("1", run1(s, NULL, 0, "init"), "VarIsInitializedOp");
	is_string("30,10", run1(s, NULL, 0, "gather"), "ResourceGather");
	is_string("3", run1(s, NULL, 0, "vshape"), "VariableShape");
	is_string("(none)", run1(s, &f, 1, "^inc"), "AssignAddVariableOp");
	is_string("12,22,32", run1(s, NULL, 0, "r"), "the variable changed");
	is_string("(none)", run1(s, &f, 1, "^asg"), "Assign");
	is_string("4,4,4", run1(s, &f, 1, "y"), "the reference variable "
		  "changed");
	is_string("(none)", run1(s, &f, 1, "^callbump"), "a call whose "
		  "body assigns without returning what it assigned");
	is_string("14,24,34", run1(s, NULL, 0, "r"), "the body's assignment "
		  "ran, on the variable of the same shared_name");
	ok(has(run1(s, NULL, 0, "^selfasg"), "selfasg (AssignVariableOp): "
		   "assigns resource to a variable of float"),
	   "a variable is not assigned another dtype, nor a resource");
	ok(has(run1(s, NULL, 0, "u/read"), "variable 'u' has no value"),
	   "a variable the checkpoint lacks has no value");
	ge_xt_unref(x);
	ge_xsession_close(s);
	ge_graph_free(g);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		tap_diag("could not remove %s", dir);
}

/* ------------------------------------------------------------ memory */

#define BIGCONST(n) \
	"node { name: \"" n "\" op: \"Const\" attr { key: \"dtype\" " \
	"value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { " \
	"dtype: DT_FLOAT tensor_shape { dim { size: 65536 } } float_val: 1 " \
	"} } } }\n"

/* Sixteen 256 KiB weights first in node order, then the chain reading
 * them one by one: each is made when its reader is about to run and
 * freed after it, so the peak holds a few of them, not all sixteen. */
static void test_memory(void)
{
	ge_buf b = GE_BUF_INIT;
	for (int i = 0; i < 16; i++) {
		char n[8];
		snprintf(n, sizeof n, "w%d", i);
		ge_buf_printf(&b, BIGCONST("%s"), n);
	}
	ge_buf_adds(&b, PH("x", "DT_FLOAT", "dim { size: 65536 }"));
	for (int i = 0; i < 16; i++) {
		char in[8] = "x";
		if (i)
			snprintf(in, sizeof in, "y%d", i - 1);
		ge_buf_printf(&b, "node { name: \"y%d\" op: \"AddV2\" input: "
			      "\"%s\" input: \"w%d\" " FL "}\n", i, in, i);
	}
	ge_buf_addc(&b, 0);
	ge_graph *g = NULL;
	ge_xsession *s = open_text((const char *)b.data, 0, &g);
	ge_buf_free(&b);
	int64_t d = 65536;
	ge_xt *x = ge_xt_new(DT_FLOAT, 1, &d, NULL, "x", NULL);
	ge_xfeed f = {"x", x};
	const char *fetch = "y15";
	ge_xt *y = NULL;
	ge_error err = {0};
	ok(!ge_xsession_run(s, &f, 1, &fetch, 1, &y, &err) &&
	   ge_xt_get_double(y, 65535) == 16, "the chain runs %s", err.msg);
	ok(ge_xsession_peak(s) < 6 * 262144, "peak %llu bytes: weights are "
	   "made when needed and freed after their reader",
	   (unsigned long long)ge_xsession_peak(s));
	ge_xt_unref(y);
	ge_xt_unref(x);
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* A tensor's numbers are 64-byte aligned, small or large, made cleared
 * or not. */
static void test_storage(void)
{
	int aligned = 1;
	for (int64_t n = 1; n <= (1 << 22); n *= 4) {
		ge_xt *a = ge_xt_new(DT_FLOAT, 1, &n, NULL, "a", NULL);
		ge_xt *b = ge_xt_new_raw(DT_INT32, 1, &n, NULL, "b", NULL);
		aligned &= ((uintptr_t)a->data & 63) == 0 &&
			   ((uintptr_t)b->data & 63) == 0 &&
			   ((float *)a->data)[n - 1] == 0;
		ge_xt_unref(a);
		ge_xt_unref(b);
	}
	ok(aligned, "tensors of 1 to 4M elements: 64-byte aligned, cleared "
	   "when asked");
}

/* ------------------------------------------------------------ misc */

#define MISC \
	PH("p", "DT_BOOL", "") FCONST("three", "3", "") \
	NODE("pwd", "PlaceholderWithDefault", IN("three"), \
	     "attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	     "attr { key: \"shape\" value { shape { } } }") \
	NODE("msg", "Const", "", "attr { key: \"dtype\" value { type: " \
	     "DT_STRING } } attr { key: \"value\" value { tensor { dtype: " \
	     "DT_STRING tensor_shape { } string_val: \"p was false\" } } }") \
	NODE("check", "Assert", IN("p") IN("msg"), \
	     "attr { key: \"T\" value { list { type: DT_STRING } } }") \
	NODE("checked", "Identity", IN("three") IN("^check"), FL) \
	UN("stray", "Exit", "three") \
	FCONST("zero", "0", "") FCONST("ten", "10", "") FCONST("one", "1", "") \
	LOOP("l/", "zero", "ten", "one", "L") \
	BIN("cross", "AddV2", "l/body", "three") \
	BIN("cyc", "AddV2", "three", "cyc2") UN("cyc2", "Identity", "cyc") \
	NODE("arg", "_Arg", "", FL "attr { key: \"index\" value { i: 0 } }") \
	NODE("ret", "_Retval", IN("three"), \
	     FL "attr { key: \"index\" value { i: 0 } }")

static void test_misc(void)
{
	ge_graph *g = NULL;
	ge_xsession *s = open_text(MISC, 0, &g);
	ge_xt *pt = scalar(DT_BOOL, 1), *pf = scalar(DT_BOOL, 0);
	ge_xt *x = scalar(DT_FLOAT, 9);
	ge_xfeed ft = {"p", pt}, ff = {"p", pf}, fx = {"pwd", x};
	is_string("3", run1(s, NULL, 0, "pwd"), "PlaceholderWithDefault "
		  "gives its input");
	is_string("9", run1(s, &fx, 1, "pwd"), "or the feed");
	is_string("3", run1(s, &ft, 1, "checked"), "Assert, true");
	ok(has(run1(s, &ff, 1, "checked"), "check (Assert): assertion "
		   "failed: p was false"), "Assert, false: the run fails");
	ok(has(run1(s, NULL, 0, "stray"), "stray (Exit): is outside any "
		   "while loop"), "an Exit outside a loop is refused");
	ok(has(run1(s, NULL, 0, "cross"), "cross (AddV2): reads 'l/body' of "
		   "another while loop frame"), "a tensor crossing frames is "
	   "refused");
	ok(has(run1(s, NULL, 0, "cyc"), "(AddV2): is on a cycle that does not "
		   "pass through a NextIteration"), "a cycle outside a loop is "
	   "refused");
	ok(has(run1(s, NULL, 0, "arg"), "arg (_Arg): is a function's argument "
		   "in a graph: it must be fed"), "an _Arg of a graph must be fed");
	ge_xfeed fa = {"arg", x};
	is_string("9", run1(s, &fa, 1, "arg"), "and then gives its feed");
	ok(has(run1(s, &fa, 1, "^ret"), "ret (_Retval): is a function's return "
		   "value in a graph"), "a _Retval of a graph cannot run");
	ge_xt_unref(pt);
	ge_xt_unref(pf);
	ge_xt_unref(x);
	ge_xsession_close(s);
	ge_graph_free(g);
}

int main(void)
{
	test_straight();
	test_cond();
	test_loops();
	test_functions();
	test_variables();
	test_misc();
	test_memory();
	test_storage();
	return tap_done();
}
