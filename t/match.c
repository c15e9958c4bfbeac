/* match.c: the pattern engine and the rewrite driver (lib/match/match.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "match/match.h"
#include "formats/model.h"

#include "tensorflow/core/framework/attr_value.pb-c.h"

/* ---------------------------------------------------------------- fixtures */

#define T_F32 "attr { key: \"T\" value { type: DT_FLOAT } } "
#define PH(n) \
	"node { name: \"" n "\" op: \"Placeholder\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
#define PHS(n, dt, dims) \
	"node { name: \"" n "\" op: \"Placeholder\" " \
	"attr { key: \"dtype\" value { type: " dt " } } " \
	"attr { key: \"shape\" value { shape { " dims " } } } }\n"
#define CONST(n) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { dim { size: 1 } } float_val: 1 } } } }\n"
#define OP1(n, type, a) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" " T_F32 "}\n"
#define OP2(n, type, a, b) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" input: \"" \
	b "\" " T_F32 "}\n"
#define CONV(n, x, w, pad) \
	"node { name: \"" n "\" op: \"Conv2D\" input: \"" x "\" input: \"" \
	w "\" " T_F32 \
	"attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } " \
	"attr { key: \"padding\" value { s: \"" pad "\" } } }\n"
#define DWCONV(n, x, w) \
	"node { name: \"" n "\" op: \"DepthwiseConv2dNative\" input: \"" x \
	"\" input: \"" w "\" " T_F32 \
	"attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } " \
	"attr { key: \"padding\" value { s: \"SAME\" } } }\n"

/* Pattern builders that bail out on errors, to keep the tests short. */
static ge_pat *must(ge_pat *p, const ge_error *err)
{
	if (!p) {
		printf("Bail out! pattern: %s\n", err->msg);
		exit(1);
	}
	return p;
}

/* op(types, operands..., NULL); the operands' handles are released. */
static ge_pat *op(const char *types, ...)
{
	ge_error err = {0};
	ge_pat *p = must(ge_pat_op(types, &err), &err);
	va_list ap;
	va_start(ap, types);
	ge_pat *q;
	while ((q = va_arg(ap, ge_pat *))) {
		if (ge_pat_add_operand(p, q, &err)) {
			printf("Bail out! operand: %s\n", err.msg);
			exit(1);
		}
		ge_pat_free(q);
	}
	va_end(ap);
	return p;
}

static ge_pat *as(ge_pat *p, const char *name)
{
	ge_error err = {0};
	if (ge_pat_set_capture(p, name, &err)) {
		printf("Bail out! as: %s\n", err.msg);
		exit(1);
	}
	return p;
}

static ge_pat *any(const char *name)
{
	ge_pat *p = ge_pat_any();
	return name ? as(p, name) : p;
}

static ge_pat *cst(const char *name)
{
	ge_pat *p = ge_pat_const();
	return name ? as(p, name) : p;
}

static ge_pat *ref(const char *name)
{
	return ge_pat_ref(name);
}

static ge_pat *commute(const char *types, ge_pat *a, ge_pat *b)
{
	ge_error err = {0};
	ge_pat *p = must(ge_pat_commute(types, a, b, &err), &err);
	ge_pat_free(a);
	ge_pat_free(b);
	return p;
}

static ge_pat *optional(ge_pat *q)
{
	ge_error err = {0};
	ge_pat *p = must(ge_pat_optional(q, &err), &err);
	ge_pat_free(q);
	return p;
}

static ge_pat *rest(ge_pat *q)
{
	ge_error err = {0};
	ge_pat *p = must(ge_pat_rest(q, &err), &err);
	ge_pat_free(q);
	return p;
}

static int count_cb(const ge_graph *g, const ge_match *m, void *ud,
		    ge_error *err)
{
	(void)g, (void)m, (void)err;
	++*(size_t *)ud;
	return 0;
}

/* Number of matches, or -1 on error (printed). */
static long count(const ge_pat *p, const ge_graph *g, int flags)
{
	ge_error err = {0};
	size_t n = 0, seen = 0;
	if (ge_match_all(p, g, NULL, flags, count_cb, &seen, &n, &err)) {
		tap_diag("match_all: %s", err.msg);
		return -1;
	}
	return n == seen ? (long)n : -2;
}

/* The names of the roots of all matches, space separated. */
static int roots_cb(const ge_graph *g, const ge_match *m, void *ud,
		    ge_error *err)
{
	(void)err;
	ge_buf *b = ud;
	ge_buf_printf(b, "%s%s", b->len ? " " : "", ge_op_name(g, m->root));
	return 0;
}

static char *roots(const ge_pat *p, const ge_graph *g, int flags)
{
	static char out[4096];
	ge_buf b = GE_BUF_INIT;
	ge_error err = {0};
	ge_buf_adds(&b, "");
	if (ge_match_all(p, g, NULL, flags, roots_cb, &b, NULL, &err))
		snprintf(out, sizeof out, "error: %s", err.msg);
	else
		snprintf(out, sizeof out, "%s", (char *)b.data);
	ge_buf_free(&b);
	return out;
}

static char *explain(const ge_pat *p, const ge_graph *g, const char *at)
{
	static char out[4096];
	ge_buf b = GE_BUF_INIT;
	ge_error err = {0};
	int r = ge_match_explain(p, g, OP(g, at), &b, &err);
	if (r < 0)
		snprintf(out, sizeof out, "error: %s", err.msg);
	else
		snprintf(out, sizeof out, "%s", b.data ? (char *)b.data : "");
	ge_buf_free(&b);
	return out;
}

/* The name the capture refers to ("name" for ops, "name:k" for tensors,
 * "-" when unbound, "?" when the name is unknown). */
static const char *cap(const ge_graph *g, const ge_match *m, const char *n)
{
	static char buf[256];
	const ge_capture *c = ge_match_capture(m, n);
	if (!c)
		return "?";
	if (c->kind == GE_CAP_NONE)
		return "-";
	if (c->kind == GE_CAP_OP)
		snprintf(buf, sizeof buf, "%s", ge_op_name(g, c->t.op));
	else
		snprintf(buf, sizeof buf, "%s:%d", ge_op_name(g, c->t.op),
			 c->t.index);
	return buf;
}

/* ---------------------------------------------------------------- tests */

static void test_building(void)
{
	ge_error err = {0};
	ok(ge_pat_op("Conv2D||Relu", &err) == NULL &&
		   strstr(err.msg, "empty alternative") != NULL,
	   "an empty alternative is refused: %s", err.msg);
	ge_pat *two = op("Add", any(NULL), any(NULL), NULL);
	ok(ge_pat_optional(two, &err) == NULL,
	   "optional wants a single-operand op: %s", err.msg);
	ge_pat *r = rest(any(NULL));
	ok(ge_pat_set_capture(r, "x", &err) == GE_EINVAL,
	   "rest takes no modifiers: %s", err.msg);
	ge_graph *g = parse(PH("x"));
	is_int(GE_EINVAL, ge_match_at(r, g, OP(g, "x"), NULL, &err),
	       "rest cannot be a root");
	ok(ge_pat_add_operand(two, two, &err) == GE_EINVAL,
	   "a pattern cannot be its own operand");
	ge_pat *conv = op("Conv2D|DepthwiseConv2dNative", any("x"), cst("w"),
			  NULL);
	ge_pat_where_attr_raw(conv, "padding",
			      (const uint8_t *)"\x12\x04SAME", 6, &err);
	ge_pat_single_use(conv, NULL);
	ge_pat *act = as(op("Relu|Relu6", op("BiasAdd", as(conv, "conv"),
					      cst("b"), NULL),
			    NULL),
			 "act");
	ge_buf b = GE_BUF_INIT;
	ge_pat_describe(act, &b);
	is_string("op(\"Relu|Relu6\", op(\"BiasAdd\", "
		  "op(\"Conv2D|DepthwiseConv2dNative\", any():as(\"x\"), "
		  "const():as(\"w\")):as(\"conv\"):where{padding=\"SAME\"}"
		  ":single_use(), const():as(\"b\"))):as(\"act\")",
		  (char *)b.data, "describe");
	ge_buf_free(&b);
	ge_pat *c2 = ge_pat_copy(act);
	ge_pat_set_capture(c2, "other", NULL);
	is_string("act", ge_pat_capture(act), "a copy is modified alone");
	ge_pat_free(c2);
	ge_pat_free(act);
	ge_pat_free(two);
	ge_pat_free(r);
	ge_graph_free(g);
}

static const char *CONVS =
	PH("in") CONST("w1") CONST("w2") CONST("w3")
	CONV("c_same", "in", "w1", "SAME")
	CONV("c_valid", "in", "w2", "VALID")
	DWCONV("dw", "in", "w3")
	OP2("mm", "MatMul", "in", "w1");

static void test_alternation(void)
{
	ge_graph *g = parse(CONVS);
	ge_pat *p = op("Conv2D|DepthwiseConv2dNative", any("x"), cst("w"),
		       NULL);
	is_string("c_same c_valid dw", roots(p, g, 0), "alternation");
	ge_match m = GE_MATCH_INIT;
	ge_error err = {0};
	is_int(1, ge_match_at(p, g, OP(g, "dw"), &m, &err), "match_at dw");
	is_string("in:0", cap(g, &m, "x"), "any captures a tensor");
	is_string("w3", cap(g, &m, "w"), "const captures an op");
	is_int(GE_CAP_OP, ge_match_capture(&m, "w")->kind, "op capture kind");
	is_int(1, (long long)m.n_ops, "one op in the match");
	is_int(1, (long long)m.n_consts, "one constant beside it");
	is_int(0, ge_match_at(p, g, OP(g, "mm"), &m, &err), "MatMul is not");
	ge_pat *star = op("*", any(NULL), cst(NULL), NULL);
	is_string("c_same c_valid dw mm", roots(star, g, 0),
		  "'*' with operands");
	ge_pat *bare = op("*", NULL);
	is_int(8, count(bare, g, 0), "'*' alone matches every op");
	ge_pat *sp = as(op("Conv2D", NULL), "c");
	is_int(2, count(sp, g, 0), "no operands: inputs unconstrained");

	/* attrs */
	ge_pat *same = op("Conv2D", any(NULL), cst(NULL), NULL);
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
	v.s.data = (uint8_t *)"SAME";
	v.s.len = 4;
	ge_pat_where_attr(same, "padding", &v, &err);
	is_string("c_same", roots(same, g, 0), "attr padding = SAME");
	v.s.data = (uint8_t *)"VALID";
	v.s.len = 5;
	ge_pat *valid = op("Conv2D", any(NULL), cst(NULL), NULL);
	ge_pat_where_attr(valid, "padding", &v, &err);
	is_string("c_valid", roots(valid, g, 0), "attr padding = VALID");
	is_string("Conv2D \"c_same\": attr padding is \"SAME\", expected "
		  "\"VALID\"",
		  explain(valid, g, "c_same"), "explain an attr");
	/* a string stands for a dtype; a missing attr takes the default */
	ge_pat *typed = op("Conv2D", NULL);
	v.s.data = (uint8_t *)"float32";
	v.s.len = 7;
	ge_pat_where_attr(typed, "T", &v, &err);
	v.s.data = (uint8_t *)"NHWC";
	v.s.len = 4;
	ge_pat_where_attr(typed, "data_format", &v, &err);
	is_int(2, count(typed, g, 0), "T = \"float32\", default data_format");
	ge_pat_free(p);
	ge_pat_free(star);
	ge_pat_free(bare);
	ge_pat_free(sp);
	ge_pat_free(same);
	ge_pat_free(valid);
	ge_pat_free(typed);
	ge_match_free(&m);
	ge_graph_free(g);
}

static int strides_one(const ge_graph *g, ge_opid id, const char *attr,
		       const Tensorflow__AttrValue *v, void *ud)
{
	(void)g, (void)id, (void)attr;
	++*(int *)ud;
	return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
	       v->list->n_i == 4 && v->list->i[1] == 1;
}

static int name_has_valid(const ge_graph *g, ge_tref t, void *ud)
{
	(void)ud;
	return strstr(ge_op_name(g, t.op), "valid") != NULL;
}

static int abort_pred(const ge_graph *g, ge_tref t, void *ud)
{
	(void)g, (void)t, (void)ud;
	return -1;
}

static void test_predicates(void)
{
	ge_graph *g = parse(CONVS);
	ge_error err = {0};
	int calls = 0;
	ge_pat *p = op("Conv2D", NULL);
	ge_pat_where_attr_fn(p, "strides", strides_one, &calls, NULL, &err);
	is_int(2, count(p, g, 0), "attr callback");
	is_int(2, calls, "called once per candidate");
	ge_pat_where(p, name_has_valid, NULL, NULL, &err);
	is_string("c_valid", roots(p, g, 0), "generic predicate");
	is_string("Conv2D \"c_same\": rejected by the predicate",
		  explain(p, g, "c_same"), "explain a predicate");
	ge_pat *bad = op("Conv2D", NULL);
	ge_pat_where(bad, abort_pred, NULL, NULL, &err);
	is_int(-1, count(bad, g, 0), "an aborting callback stops matching");
	size_t n = 0;
	is_int(GE_EINVAL, ge_match_all(bad, g, NULL, 0, NULL, NULL, &n, &err),
	       "... with GE_EINVAL");
	is_string("callback failed", err.msg, "... and says so");

	/* name regex */
	ge_pat *named = op("*", NULL);
	is_int(GE_EINVAL, ge_pat_name(named, "c_(", &err), "bad regex");
	ge_pat_name(named, "^c_", &err);
	is_string("c_same c_valid", roots(named, g, 0), "name regex");
	is_string("DepthwiseConv2dNative \"dw\": name does not match /^c_/",
		  explain(named, g, "dw"), "explain a name");
	ge_pat_free(p);
	ge_pat_free(bad);
	ge_pat_free(named);
	ge_graph_free(g);
}

static void test_dtype_shape(void)
{
	ge_graph *g = parse(
		PHS("f", "DT_FLOAT", "dim { size: 1 } dim { size: 3 }")
		PHS("i", "DT_INT32", "dim { size: 1 } dim { size: 3 }")
		PHS("f4", "DT_FLOAT", "dim { size: 4 } dim { size: 3 }")
		PHS("u", "DT_FLOAT", "unknown_rank: true")
		OP2("a1", "Add", "f", "f4") OP2("a2", "Add", "i", "i"));
	ge_error err = {0};
	int f32 = ge_dtype_from_name("float32"), i32 = ge_dtype_from_name("int32");
	ge_pat *pf = op("Placeholder", NULL);
	ge_pat_dtype(pf, &f32, 1, &err);
	is_string("f f4 u", roots(pf, g, 0), "dtype float32");
	ge_pat *pi = op("Placeholder", NULL);
	ge_pat_dtype(pi, &i32, 1, &err);
	is_string("i", roots(pi, g, 0), "dtype int32");
	is_string("Placeholder \"f\": output 0 is float32, expected int32",
		  explain(pi, g, "f"), "explain a dtype");
	int both[2] = {f32, i32};
	ge_pat *pb = op("Placeholder", NULL);
	ge_pat_dtype(pb, both, 2, &err);
	is_int(4, count(pb, g, 0), "a dtype set");

	int64_t d13[] = {-1, 3}, d43[] = {4, 3}, d1[] = {1};
	ge_pat *s1 = op("Placeholder", NULL);
	ge_pat_shape(s1, d13, 2, &err);
	is_string("f i f4", roots(s1, g, 0), "shape [-1,3]");
	ge_pat *s2 = op("Placeholder", NULL);
	ge_pat_shape(s2, d43, 2, &err);
	is_string("f4", roots(s2, g, 0), "shape [4,3]");
	is_string("Placeholder \"f\": output 0 has shape [1,3], expected [4,3]",
		  explain(s2, g, "f"), "explain a shape");
	ge_pat *s3 = op("Placeholder", NULL);
	ge_pat_shape(s3, d1, 1, &err);
	is_int(0, count(s3, g, 0), "rank must agree");
	is_string("Placeholder \"u\": output 0 has an unknown shape, "
		  "expected [1]",
		  explain(s3, g, "u"), "unknown shape never matches");
	/* on an operand: the tensor the parent reads */
	ge_pat *fa = any(NULL);
	ge_pat_dtype(fa, &f32, 1, &err);
	ge_pat *add = op("Add", fa, any(NULL), NULL);
	is_string("a1", roots(add, g, 0), "dtype of an operand tensor");
	is_string("operand 0 of Add \"a2\" (tensor \"i:0\"): output 0 is "
		  "int32, expected float32",
		  explain(add, g, "a2"), "explain an operand's dtype");
	ge_pat_free(pf);
	ge_pat_free(pi);
	ge_pat_free(pb);
	ge_pat_free(s1);
	ge_pat_free(s2);
	ge_pat_free(s3);
	ge_pat_free(add);
	ge_graph_free(g);
}

/* in -> conv -> res = Add(in, conv): a residual block; nonres adds
 * another tensor to a conv of in; swapped has the operands the other way
 * round. */
static const char *RESID =
	PH("in") PH("other") CONST("w")
	CONV("conv", "in", "w", "SAME")
	OP2("res", "Add", "in", "conv")
	CONV("conv2", "in", "w", "SAME")
	OP2("nonres", "Add", "other", "conv2")
	CONV("conv3", "in", "w", "SAME")
	OP2("swapped", "Add", "conv3", "in");

static void test_residual_commute(void)
{
	ge_graph *g = parse(RESID);
	ge_pat *p = op("Add", any("x"),
		       op("Conv2D", ref("x"), cst(NULL), NULL), NULL);
	is_string("res", roots(p, g, 0), "residual block via ref");
	ge_pat *p2 = op("Add", any("x"),
			op("Conv2D", any("x"), cst(NULL), NULL), NULL);
	is_string("res", roots(p2, g, 0), "residual block via a repeated name");
	ge_match m = GE_MATCH_INIT;
	ge_error err = {0};
	is_int(1, ge_match_at(p2, g, OP(g, "res"), &m, &err), "match_at res");
	is_string("in:0", cap(g, &m, "x"), "x is the block's input");
	is_string("operand 0 of Conv2D \"conv2\" (tensor \"in:0\"): is not the "
		  "same as capture \"x\" (tensor \"other:0\")\n"
		  "  path: Add \"nonres\" > Conv2D \"conv2\"",
		  explain(p2, g, "nonres"), "explain a repeated capture");
	/* op captures: the same op twice */
	ge_pat *p3 = op("Add", as(op("Placeholder", NULL), "x"),
			op("Conv2D", as(op("*", NULL), "x"), cst(NULL), NULL),
			NULL);
	is_string("res", roots(p3, g, 0), "repeated op capture");

	ge_pat *c = commute("Add", any("x"),
			    op("Conv2D", ref("x"), cst(NULL), NULL));
	is_string("res swapped", roots(c, g, 0), "commute matches both ways");
	is_int(1, ge_match_at(c, g, OP(g, "swapped"), &m, &err),
	       "match_at swapped");
	is_string("in:0", cap(g, &m, "x"), "x bound through the ref");
	is_string("res", roots(p, g, 0), "without commute only one way");
	ge_pat_free(p);
	ge_pat_free(p2);
	ge_pat_free(p3);
	ge_pat_free(c);
	ge_match_free(&m);
	ge_graph_free(g);
}

static void test_optional(void)
{
	ge_graph *g = parse(
		PH("in") CONST("w")
		CONV("ca", "in", "w", "SAME") OP1("ra", "Relu", "ca")
		OP1("pa", "MaxPool", "ra")
		CONV("cb", "in", "w", "SAME") OP1("pb", "MaxPool", "cb")
		OP1("pc", "MaxPool", "in"));
	ge_pat *p = op("MaxPool",
		       optional(as(op("Relu", as(op("Conv2D", any(NULL),
						    cst(NULL), NULL),
						 "conv"),
				      NULL),
				   "relu")),
		       NULL);
	is_string("pa pb", roots(p, g, 0), "optional Relu present and absent");
	ge_match m = GE_MATCH_INIT;
	ge_error err = {0};
	ge_match_at(p, g, OP(g, "pa"), &m, &err);
	is_string("ra", cap(g, &m, "relu"), "present: captured");
	is_string("ca", cap(g, &m, "conv"), "present: conv");
	is_int(3, (long long)m.n_ops, "present: three ops");
	ge_match_at(p, g, OP(g, "pb"), &m, &err);
	is_string("-", cap(g, &m, "relu"), "absent: unbound");
	is_string("cb", cap(g, &m, "conv"), "absent: conv");
	is_int(2, (long long)m.n_ops, "absent: two ops");
	ok(strstr(explain(p, g, "pc"), "operand 0 of MaxPool \"pc\": expected "
		  "Relu, got Placeholder \"in\"") != NULL,
	   "explain: %s", explain(p, g, "pc"));
	ge_pat_free(p);
	ge_match_free(&m);
	ge_graph_free(g);
}

#define CONCAT(n, ins, k) \
	"node { name: \"" n "\" op: \"ConcatV2\" " ins T_F32 \
	"attr { key: \"N\" value { i: " k " } } }\n"

static void test_variadic(void)
{
	ge_graph *g = parse(
		PH("a") PH("b") PH("c") CONST("axis")
		OP1("ra", "Relu", "a") OP1("rb", "Relu", "b")
		CONCAT("cat3", "input: \"a\" input: \"b\" input: \"c\" "
			       "input: \"axis\" ", "3")
		CONCAT("cat1", "input: \"a\" input: \"axis\" ", "1")
		CONCAT("catr", "input: \"ra\" input: \"rb\" input: \"c\" "
			       "input: \"axis\" ", "3")
		CONCAT("noaxis", "input: \"a\" input: \"b\" ", "1"));
	ge_pat *p = op("ConcatV2", rest(any(NULL)), cst("axis"), NULL);
	is_string("cat3 cat1 catr", roots(p, g, 0), "rest then the axis");
	ge_match m = GE_MATCH_INIT;
	ge_error err = {0};
	ge_match_at(p, g, OP(g, "cat3"), &m, &err);
	is_string("axis", cap(g, &m, "axis"), "axis captured");
	ge_pat *mid = op("ConcatV2", any("first"), rest(any(NULL)), cst(NULL),
			 NULL);
	is_string("cat3 cat1 catr", roots(mid, g, 0), "rest in the middle");
	ge_match_at(mid, g, OP(g, "cat3"), &m, &err);
	is_string("a:0", cap(g, &m, "first"), "first input before the rest");
	ge_pat *relus = op("ConcatV2", rest(op("Relu", any(NULL), NULL)),
			   cst(NULL), NULL);
	is_string("", roots(relus, g, 0), "every element must match");
	ge_pat *two = op("ConcatV2", rest(op("Relu", any(NULL), NULL)),
			 rest(any(NULL)), cst(NULL), NULL);
	is_string("cat3 cat1 catr", roots(two, g, 0), "two rests backtrack");
	ge_match_at(two, g, OP(g, "catr"), &m, &err);
	is_int(2, (long long)m.n_ops - 1, "the first rest took both Relus");
	ge_pat *atl = op("ConcatV2", any(NULL), any(NULL), rest(any(NULL)),
			 cst(NULL), NULL);
	is_string("ConcatV2 \"cat1\": has 2 data inputs, expected at least 3",
		  explain(atl, g, "cat1"), "explain the arity with a rest");
	ge_pat *fixed = op("ConcatV2", any(NULL), cst(NULL), NULL);
	is_string("ConcatV2 \"cat3\": has 4 data inputs, expected 2",
		  explain(fixed, g, "cat3"), "explain the arity");
	/* a capture inside a rest: the tail as a list, one per input */
	ge_pat *tail = op("ConcatV2", any("first"), rest(any("tail")),
			  cst(NULL), NULL);
	is_int(1, ge_match_at(tail, g, OP(g, "cat3"), &m, &err),
	       "a capture inside rest matches whatever the elements are");
	const ge_capture *tc = ge_match_capture(&m, "tail");
	ok(tc && tc->is_list && tc->kind == GE_CAP_TENSOR && tc->n_items == 2,
	   "it holds a list of the two tensors of the tail");
	ok(tc && tc->n_items == 2 && tc->items[0].op == OP(g, "b") &&
		   tc->items[1].op == OP(g, "c"),
	   "in input order");
	is_int(1, ge_match_at(tail, g, OP(g, "cat1"), &m, &err),
	       "an empty tail matches");
	tc = ge_match_capture(&m, "tail");
	ok(tc && tc->is_list && tc->n_items == 0, "as an empty list");
	ge_pat *ops = op("ConcatV2", rest(as(op("Relu", any(NULL), NULL), "relus")),
			 rest(any(NULL)), cst(NULL), NULL);
	ge_match_at(ops, g, OP(g, "catr"), &m, &err);
	tc = ge_match_capture(&m, "relus");
	ok(tc && tc->kind == GE_CAP_OP && tc->n_items == 2 &&
		   tc->items[0].op == OP(g, "ra") && tc->items[1].op == OP(g, "rb"),
	   "an op pattern's list holds the ops");
	/* the same-value meaning: capture outside, ref inside */
	ge_pat *same = op("ConcatV2", any("x"), rest(ref("x")), cst(NULL), NULL);
	is_string("cat1", roots(same, g, 0),
		  "ref inside rest: every element the same (cat3's differ)");
	ge_pat *bad = op("ConcatV2", any("x"), rest(any("x")), NULL);
	ge_error e2 = {0};
	is_int(GE_EINVAL, ge_match_at(bad, g, OP(g, "cat3"), &m, &e2),
	       "a list capture's name used outside the rest is refused");
	ok(strstr(e2.msg, "inside rest() holds a list") != NULL,
	   "saying why");
	ge_pat_free(tail);
	ge_pat_free(ops);
	ge_pat_free(bad);
	ge_pat_free(p);
	ge_pat_free(mid);
	ge_pat_free(relus);
	ge_pat_free(two);
	ge_pat_free(atl);
	ge_pat_free(fixed);
	ge_pat_free(same);
	ge_match_free(&m);
	ge_graph_free(g);
}

static void test_consumers_control(void)
{
	ge_graph *g = parse(
		PH("in") CONST("w")
		CONV("c1", "in", "w", "SAME") OP1("r1", "Relu", "c1")
		CONV("c2", "in", "w", "SAME") OP1("r2", "Relu", "c2")
		OP1("peek", "Identity", "c2")
		"node { name: \"r3\" op: \"Relu\" input: \"c1\" "
		"input: \"^in\" " T_F32 "}\n"
		"node { name: \"r4\" op: \"Relu\" input: \"c2\" "
		"input: \"^w\" input: \"^in\" " T_F32 "}\n");
	ge_error err = {0};
	ge_pat *conv = op("Conv2D", any(NULL), cst(NULL), NULL);
	ge_pat_single_use(conv, &err);
	ge_pat *p = op("Relu", conv, NULL);
	is_string("", roots(p, g, 0), "single_use: c1 has two readers");
	ge_pat *c2p = op("Conv2D", NULL);
	ge_pat_consumers(c2p, 3, 3, &err);
	is_string("c2", roots(c2p, g, 0), "exactly three consumers");
	is_string("Conv2D \"c1\": has 2 consumers, expected exactly 3",
		  explain(c2p, g, "c1"), "explain a consumer count");

	ge_pat *none = op("Relu", any(NULL), NULL);
	ge_pat_control_count(none, 0, 0, &err);
	is_string("r1 r2", roots(none, g, 0), "no control inputs");
	is_string("Relu \"r3\": has 1 control input, expected exactly 0",
		  explain(none, g, "r3"), "explain a control count");
	ge_pat *some = op("Relu", NULL);
	ge_pat_control_count(some, 1, SIZE_MAX, &err);
	is_string("r3 r4", roots(some, g, 0), "at least one control input");
	ge_pat *cin = op("Relu", NULL);
	ge_pat *ph = op("Placeholder", NULL);
	ge_pat_add_control_operand(cin, ph, &err);
	ge_pat_free(ph);
	is_string("r3", roots(cin, g, 0), "control operand, exact count");
	/* r4's control inputs are ^w, ^in: listed the other way round */
	ge_pat *cin2 = op("Relu", NULL);
	ge_pat *p2 = op("Placeholder", NULL);
	ge_pat_add_control_operand(cin2, p2, &err);
	ge_pat_free(p2);
	ge_pat *k = as(cst(NULL), "k");
	ge_pat_add_control_operand(cin2, k, &err);
	ge_pat_free(k);
	ge_match m = GE_MATCH_INIT;
	is_string("r4", roots(cin2, g, 0), "control operands in any order");
	ge_match_at(cin2, g, OP(g, "r4"), &m, &err);
	is_string("w", cap(g, &m, "k"), "a control operand captures its op");
	ge_pat_free(p);
	ge_pat_free(c2p);
	ge_pat_free(none);
	ge_pat_free(some);
	ge_pat_free(cin);
	ge_pat_free(cin2);
	ge_match_free(&m);
	ge_graph_free(g);
}

static const char *CHAIN8 =
	PH("in")
	OP1("i1", "Identity", "in") OP1("i2", "Identity", "i1")
	OP1("i3", "Identity", "i2") OP1("i4", "Identity", "i3")
	OP1("i5", "Identity", "i4") OP1("i6", "Identity", "i5")
	OP1("i7", "Identity", "i6") OP1("i8", "Identity", "i7")
	OP1("out", "Relu", "i8");

static void test_overlap(void)
{
	ge_graph *g = parse(CHAIN8);
	ge_pat *p = op("Identity", op("Identity", any(NULL), NULL), NULL);
	is_int(7, count(p, g, 0), "all matches overlap");
	is_string("i2 i4 i6 i8", roots(p, g, GE_MATCH_NONOVERLAP),
		  "non-overlapping: greedy in node order");
	/* the matcher looks for another way to avoid claimed ops */
	ge_graph *g2 = parse(
		PH("x") PH("y") OP1("r1", "Relu", "x") OP1("r2", "Relu", "y")
		OP2("a", "Add", "r1", "y") OP2("b", "Add", "r1", "r2")
		OP2("c", "Add", "r1", "x"));
	ge_pat *c = commute("Add", as(op("Relu", any(NULL), NULL), "r"),
			    any(NULL));
	is_int(3, count(c, g2, 0), "three Adds read a Relu");
	is_string("a b", roots(c, g2, GE_MATCH_NONOVERLAP),
		  "non-overlapping: r1 once only");
	ge_match_iter *it;
	ge_match m = GE_MATCH_INIT;
	ge_error err = {0};
	ge_match_iter_new(c, g2, NULL, GE_MATCH_NONOVERLAP, &it, &err);
	ge_match_iter_next(it, &m, &err);
	ge_match_iter_next(it, &m, &err);
	is_string("r2", cap(g2, &m, "r"), "b matched the other way round");
	ge_match_iter_free(it);

	/* the iterator, index and early stop */
	ge_opindex *ix = ge_opindex_new();
	ge_opindex_sync(ix, g);
	size_t n;
	ge_opindex_get(ix, "Identity", &n);
	is_int(8, (long long)n, "index: eight Identity ops");
	ok(ge_opindex_get(ix, "Conv2D", &n) == NULL && n == 0,
	   "index: no Conv2D");
	ge_match_iter_new(p, g, ix, GE_MATCH_NONOVERLAP, &it, &err);
	ge_match_iter_next(it, &m, &err);
	is_string("i2", ge_op_name(g, m.root), "iterator: first");
	ge_match_iter_release(it, &m);
	ge_match_iter_next(it, &m, &err);
	is_string("i3", ge_op_name(g, m.root),
		  "a released match frees its ops");
	ge_match_iter_free(it);
	ge_opindex_free(ix);
	ge_match_free(&m);
	ge_pat_free(p);
	ge_pat_free(c);
	ge_graph_free(g);
	ge_graph_free(g2);
}

/* ---------------------------------------------------------------- rewrite */

static ge_tref capt(const ge_match *m, const char *name)
{
	const ge_capture *c = ge_match_capture(m, name);
	return c ? c->t : (ge_tref){GE_NOOP, 0};
}

/* Identity(Identity(x)) -> one new Identity(x). */
static int halve(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		 void *ud, ge_error *err)
{
	(void)ud;
	ge_tref x = capt(m, "x");
	const char *name = ge_graph_unique_name(g, "half");
	ge_opid id = ge_graph_add_op(g, name, "Identity", err);
	if (id == GE_NOOP)
		return -1;
	ge_op_add_input(g, id, x, err);
	ge_op_set_attr_raw(g, id, "T", (const uint8_t *)"\x30\x01", 2);
	ge_rewrite_replace(r, (ge_tref){m->root, 0}, (ge_tref){id, 0});
	return 1;
}

static size_t n_type(const ge_graph *g, const char *type)
{
	size_t n = 0;
	for (ge_opid i = 0; i < ge_graph_capacity(g); i++)
		if (ge_op_alive(g, i) && !strcmp(ge_op_type(g, i), type))
			n++;
	return n;
}

static void test_rewrite_modes(void)
{
	ge_pat *p = op("Identity", op("Identity", any("x"), NULL), NULL);
	ge_rule rule = {"halve", p, halve, NULL};
	ge_error err = {0};
	size_t cnt, passes;
	ge_graph *g = parse(CHAIN8);
	ge_rewrite_opts o = GE_REWRITE_OPTS_INIT;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, &o, &cnt, &passes, &err),
	       "once");
	is_int(4, (long long)cnt, "once: four rewrites");
	is_int(1, (long long)passes, "once: one pass");
	is_int(4, (long long)n_type(g, "Identity"), "once: 8 -> 4 Identity");
	ge_graph_free(g);

	g = parse(CHAIN8);
	o.mode = GE_REWRITE_FIXPOINT;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, &o, &cnt, &passes, &err),
	       "fixpoint: %s", err.msg);
	is_int(7, (long long)cnt, "fixpoint: 4 + 2 + 1 rewrites");
	is_int(4, (long long)passes, "fixpoint: the fourth pass is empty");
	is_int(1, (long long)n_type(g, "Identity"), "fixpoint: one left");
	ge_tref t = ge_op_input(g, OP(g, "out"), 0);
	is_string("Identity", ge_op_type(g, t.op), "out reads it");
	is_string("in", ge_op_name(g, ge_op_input(g, t.op, 0).op),
		  "which reads the input");
	is_int(0, (long long)ge_graph_validate(g, NULL), "graph valid");
	ge_graph_free(g);

	g = parse(CHAIN8);
	o.max_iterations = 2;
	is_int(GE_EINVAL, ge_rewrite(g, &rule, 1, &o, &cnt, &passes, &err),
	       "max_iterations reached");
	is_string("no fixpoint after 2 passes: rule 'halve' (2) still "
		  "rewrote in the last pass",
		  err.msg, "... says so");
	ge_graph_free(g);
	ge_pat_free(p);
}

/* Replaces a Relu by a new op of type ud: Relu <-> Relu6 forever. */
static int swap_type(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		     void *ud, ge_error *err)
{
	const char *name = ge_graph_unique_name(g, ge_op_name(g, m->root));
	ge_opid id = ge_graph_add_op(g, name, ud, err);
	ge_op_add_input(g, id, ge_op_input(g, m->root, 0), err);
	ge_op_set_attr_raw(g, id, "T", (const uint8_t *)"\x30\x01", 2);
	ge_rewrite_replace(r, (ge_tref){m->root, 0}, (ge_tref){id, 0});
	return 1;
}

static void test_rewrite_loop(void)
{
	ge_graph *g = parse(PH("in") OP1("r", "Relu", "in")
				    OP1("out", "Identity", "r"));
	ge_pat *a = op("Relu", any(NULL), NULL);
	ge_pat *b = op("Relu6", any(NULL), NULL);
	ge_rule rules[2] = {{"relu_to_6", a, swap_type, "Relu6"},
			    {"six_to_relu", b, swap_type, "Relu"}};
	ge_rewrite_opts o = {GE_REWRITE_FIXPOINT, 5, 0, 0};
	ge_error err = {0};
	size_t cnt[2], passes;
	is_int(GE_EINVAL, ge_rewrite(g, rules, 2, &o, cnt, &passes, &err),
	       "a looping rule set stops");
	is_string("no fixpoint after 5 passes: rules 'relu_to_6' (1), "
		  "'six_to_relu' (1) still rewrote in the last pass",
		  err.msg, "the error names the rules");
	is_int(5, (long long)passes, "after five passes");
	is_int(5, (long long)cnt[0], "counts per rule");
	is_int(3, (long long)ge_graph_num_ops(g), "no op piles up");
	ge_pat_free(a);
	ge_pat_free(b);
	ge_graph_free(g);
}

/* The fused-conv rule of the benchmark, on a small graph. */
static int fuse(ge_graph *g, const ge_match *m, ge_rewrite_repl *r, void *ud,
		ge_error *err)
{
	(void)ud;
	ge_opid conv = capt(m, "conv").op;
	ge_buf name = GE_BUF_INIT;
	ge_buf_printf(&name, "%s/fused", ge_op_name(g, m->root));
	ge_opid f = ge_graph_add_op(g, ge_graph_unique_name(g, (char *)name.data),
				    "_FusedConv2D", err);
	ge_buf_free(&name);
	if (f == GE_NOOP)
		return -1;
	ge_op_add_input(g, f, ge_op_input(g, conv, 0), err);
	ge_op_add_input(g, f, ge_op_input(g, conv, 1), err);
	ge_op_add_input(g, f, capt(m, "b"), err);
	for (size_t i = 0; i < ge_op_num_attrs(g, conv); i++) {
		const char *an = ge_op_attr_name(g, conv, i);
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, conv, an, &len);
		ge_op_set_attr_raw(g, f, an, raw, len);
	}
	ge_rewrite_replace(r, capt(m, "act"), (ge_tref){f, 0});
	return 1;
}

static ge_pat *fuse_pattern(void)
{
	return as(op("Relu", op("BiasAdd",
				as(op("Conv2D", any(NULL), cst("w"), NULL),
				   "conv"),
				as(cst(NULL), "b"), NULL),
		     NULL),
		  "act");
}

static void test_rewrite_replace(void)
{
	const char *txt =
		PH("in") CONST("w") CONST("b")
		CONV("c1", "in", "w", "SAME") OP2("ba1", "BiasAdd", "c1", "b")
		OP1("r1", "Relu", "ba1")
		CONV("c2", "r1", "w", "SAME") OP2("ba2", "BiasAdd", "c2", "b")
		OP1("r2", "Relu", "ba2")
		OP1("out", "Identity", "r2")
		OP1("peek", "Identity", "c2");
	ge_graph *g = parse(txt);
	ge_pat *p = fuse_pattern();
	ge_rule rule = {"fuse", p, fuse, NULL};
	ge_rewrite_opts o = GE_REWRITE_OPTS_INIT;
	ge_error err = {0};
	size_t cnt, n0 = ge_graph_num_ops(g);
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_EGRAPH, ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err),
	       "refuses to remove an op read outside the match");
	is_string("rule 'fuse' at 'r2': the replacement would remove 'c2' "
		  "(Conv2D), but 'peek' outside the match still reads it",
		  err.msg, "... naming it");
	ok(ge_graph_version(g) != v0, "the first site was rewritten");
	is_int((long long)n0 - 2, (long long)ge_graph_num_ops(g),
	       "... into one op; the refused one left as it was");
	ok(ge_graph_find(g, "r2/fused") == GE_NOOP &&
		   ge_op_input(g, OP(g, "out"), 0).op == OP(g, "r2") &&
		   ge_op_input(g, OP(g, "r2"), 0).op == OP(g, "ba2"),
	   "the refused site is as it was");
	ge_graph_free(g);

	g = parse(txt);
	o.allow_remove_consumed = 1;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err),
	       "allowed: %s", err.msg);
	is_int(2, (long long)cnt, "two sites fused");
	ok(ge_graph_find(g, "c2") != GE_NOOP, "c2 kept for its reader");
	ok(ge_graph_find(g, "ba2") == GE_NOOP && ge_graph_find(g, "r2") ==
							 GE_NOOP,
	   "ba2 and r2 removed");
	ok(ge_graph_find(g, "c1") == GE_NOOP, "c1 removed");
	ok(ge_graph_find(g, "w") != GE_NOOP && ge_graph_find(g, "b") != GE_NOOP,
	   "constants kept: the fused ops read them");
	is_string("r2/fused",
		  ge_op_name(g, ge_op_input(g, OP(g, "out"), 0).op),
		  "out reads the fused op");
	is_string("r1/fused",
		  ge_op_name(g, ge_op_input(g, OP(g, "c2"), 0).op),
		  "c2 reads the first fused op");
	is_int(0, (long long)ge_graph_validate(g, NULL), "valid");
	ge_graph_free(g);

	/* without the outside reader the whole chain goes */
	g = parse(PH("in") CONST("w") CONST("b")
		  CONV("c1", "in", "w", "SAME") OP2("ba1", "BiasAdd", "c1", "b")
		  OP1("r1", "Relu", "ba1") OP1("out", "Identity", "r1"));
	o.allow_remove_consumed = 0;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err),
	       "fuse: %s", err.msg);
	is_int(5, (long long)ge_graph_num_ops(g), "in w b fused out");
	ge_graph_free(g);
	ge_pat_free(p);
}

/* Inserts an Identity after the matched Relu: the new op reads the
 * replaced tensor and keeps reading it. */
static int insert_after(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
			void *ud, ge_error *err)
{
	(void)ud;
	ge_opid id = ge_graph_add_op(g, ge_graph_unique_name(g, "noise"),
				     "Identity", err);
	ge_op_add_input(g, id, (ge_tref){m->root, 0}, err);
	ge_op_set_attr_raw(g, id, "T", (const uint8_t *)"\x30\x01", 2);
	ge_rewrite_replace(r, (ge_tref){m->root, 0}, (ge_tref){id, 0});
	return 1;
}

static int decline(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		   void *ud, ge_error *err)
{
	(void)g, (void)m, (void)r, (void)err;
	++*(int *)ud;
	return 0;
}

static int fail_action(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		       void *ud, ge_error *err)
{
	(void)g, (void)m, (void)r, (void)ud;
	return ge_err(err, GE_EINVAL, "no thanks");
}

static int break_graph(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		       void *ud, ge_error *err)
{
	(void)r, (void)ud;
	ge_graph_remove_op(g, ge_op_input(g, m->root, 0).op, 1, err);
	return 1;
}

static int bad_repl(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		    void *ud, ge_error *err)
{
	(void)m, (void)ud, (void)err;
	ge_rewrite_replace(r, (ge_tref){ge_graph_find(g, "in"), 0},
			   (ge_tref){m->root, 0});
	return 1;
}

/* Bypasses every Relu read by the AddN: nine replacements. */
static int bypass_relus(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
			void *ud, ge_error *err)
{
	(void)ud, (void)err;
	for (size_t i = 0; i < ge_op_num_inputs(g, m->root); i++) {
		ge_tref t = ge_op_input(g, m->root, i);
		ge_rewrite_replace(r, t, ge_op_input(g, t.op, 0));
	}
	return 1;
}

static void test_rewrite_root_kept(void)
{
	ge_buf txt = GE_BUF_INIT;
	char name[16], in[16];
	ge_buf_adds(&txt, PH("x"));
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof name, "r%d", i);
		ge_buf_printf(&txt, "node { name: \"%s\" op: \"Relu\" "
				    "input: \"x\" " T_F32 "}\n", name);
	}
	ge_buf_adds(&txt, "node { name: \"sum\" op: \"AddN\" ");
	for (int i = 0; i < 9; i++) {
		snprintf(in, sizeof in, "r%d", i);
		ge_buf_printf(&txt, "input: \"%s\" ", in);
	}
	ge_buf_adds(&txt, T_F32 "attr { key: \"N\" value { i: 9 } } }\n");
	ge_buf_adds(&txt, OP1("out", "Identity", "sum"));
	ge_graph *g = parse((char *)txt.data);
	ge_buf_free(&txt);
	ge_pat *p = op("AddN", rest(op("Relu", any(NULL), NULL)), NULL);
	ge_rule rule = {"bypass", p, bypass_relus, NULL};
	ge_error err = {0};
	size_t cnt;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, NULL, &cnt, NULL, &err),
	       "nine replacements: %s", err.msg);
	is_int(3, (long long)ge_graph_num_ops(g), "the Relus are gone");
	ok(ge_graph_find(g, "sum") != GE_NOOP,
	   "the root stays: its output was not replaced and is read");
	is_int(OP(g, "x"), ge_op_input(g, OP(g, "sum"), 8).op,
	       "the AddN reads x directly");
	ge_graph_free(g);
	ge_pat_free(p);
}

static void test_rewrite_edges(void)
{
	const char *txt = PH("in") OP1("r", "Relu", "in")
		OP1("o1", "Identity", "r") OP1("o2", "Square", "r");
	ge_graph *g = parse(txt);
	ge_pat *p = op("Relu", any(NULL), NULL);
	ge_rule rule = {"noise", p, insert_after, NULL};
	ge_rewrite_opts o = GE_REWRITE_OPTS_INIT;
	ge_error err = {0};
	size_t cnt;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err),
	       "insert after: %s", err.msg);
	ge_opid n = OP(g, "noise");
	is_int(n, ge_op_input(g, OP(g, "o1"), 0).op, "o1 reads the new op");
	is_int(n, ge_op_input(g, OP(g, "o2"), 0).op, "o2 too");
	is_int(OP(g, "r"), ge_op_input(g, n, 0).op, "the new op reads r");
	ge_graph_free(g);

	int calls = 0;
	g = parse(txt);
	ge_rule dec = {"decline", p, decline, &calls};
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_OK, ge_rewrite(g, &dec, 1, &o, &cnt, NULL, &err),
	       "declined");
	ok(cnt == 0 && calls == 1 && ge_graph_version(g) == v0,
	   "nothing counted, nothing changed");
	o.mode = GE_REWRITE_FIXPOINT;
	is_int(GE_OK, ge_rewrite(g, &dec, 1, &o, &cnt, NULL, &err),
	       "a declining rule reaches a fixpoint at once");

	ge_rule bad = {"failing", p, fail_action, NULL};
	is_int(GE_EINVAL, ge_rewrite(g, &bad, 1, &o, &cnt, NULL, &err),
	       "an action error stops the rewrite");
	is_string("rule 'failing' at 'r': no thanks", err.msg, "... with it");

	ge_rule brk = {"breaker", p, break_graph, NULL};
	is_int(GE_EGRAPH, ge_rewrite(g, &brk, 1, &o, &cnt, NULL, &err),
	       "a pass that breaks the graph fails");
	ok(strstr(err.msg, "pass 1 (rules 'breaker') left the graph invalid: "
			   "node 'r': input 'in' names no op in the graph") !=
		   NULL,
	   "... with the problem: %s", err.msg);
	ge_graph_free(g);

	g = parse(txt);
	ge_rule br = {"bad", p, bad_repl, NULL};
	is_int(GE_EINVAL, ge_rewrite(g, &br, 1, &o, &cnt, NULL, &err),
	       "replacing a tensor outside the match");
	is_string("rule 'bad' at 'r': replacement 1: the tensor replaced is "
		  "not an output of the match",
		  err.msg, "... is refused");
	ge_graph_free(g);
	ge_pat_free(p);
}

int main(void)
{
	test_building();
	test_alternation();
	test_predicates();
	test_dtype_shape();
	test_residual_commute();
	test_optional();
	test_variadic();
	test_consumers_control();
	test_overlap();
	test_rewrite_modes();
	test_rewrite_loop();
	test_rewrite_replace();
	test_rewrite_root_kept();
	test_rewrite_edges();
	return tap_done();
}
