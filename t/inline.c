/*
 * t/inline.c: a call replaced by its body (lib/editor/inline.c), with bodies
 * written as graphs with _Arg and _Retval ops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor/inline.h"
#include "tap.h"
#include "testutil.h"

#define ARG(n, i) \
	"node { name: \"" n "\" op: \"_Arg\" " \
	"attr { key: \"T\" value { type: DT_FLOAT } } " \
	"attr { key: \"index\" value { i: " #i " } } }\n"
#define RET(n, x, i) \
	"node { name: \"" n "\" op: \"_Retval\" input: \"" x "\" " \
	"attr { key: \"T\" value { type: DT_FLOAT } } " \
	"attr { key: \"index\" value { i: " #i " } } }\n"
#define FCONST(n, extra) \
	"node { name: \"" n "\" op: \"Const\" " extra \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { } float_val: 3 } } } }\n"
#define MUL(n, x, y, extra) \
	"node { name: \"" n "\" op: \"Mul\" input: \"" x "\" input: \"" y \
	"\" " extra "attr { key: \"T\" value { type: DT_FLOAT } } }\n"
#define IDENT(n, x, extra) \
	"node { name: \"" n "\" op: \"Identity\" input: \"" x "\" " extra \
	"attr { key: \"T\" value { type: DT_FLOAT } } }\n"
#define PH(n) \
	"node { name: \"" n "\" op: \"Placeholder\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
#define CALL(n, ins, tin, tout) \
	"node { name: \"" n "\" op: \"StatefulPartitionedCall\" " ins \
	"attr { key: \"f\" value { func { name: \"fn\" } } } " \
	"attr { key: \"Tin\" value { list { " tin " } } } " \
	"attr { key: \"Tout\" value { list { " tout " } } } }\n"

/* body: y = x * 3, returned through an Identity; control_ret: the Mul */
static const char *BODY =
	ARG("x", 0)
	FCONST("c", "device: \"/device:CPU:0\" ")
	MUL("m", "x", "c", "attr { key: \"_class\" value { list { "
	    "s: \"loc:@c\" } } } ")
	IDENT("r", "m", "input: \"^c\" ")
	RET("y", "r", 0);

static const char *OUTER =
	PH("a")
	FCONST("k", "")
	CALL("call", "input: \"a\" input: \"^k\" ", "type: DT_FLOAT",
	     "type: DT_FLOAT")
	IDENT("out", "call", "")
	"node { name: \"after\" op: \"NoOp\" input: \"^call\" }\n";

static const char *inputs(ge_graph *g, const char *name)
{
	static char buf[8][512];
	static int k;
	char *b = buf[k++ & 7];
	ge_opid id = ge_graph_find(g, name);
	b[0] = 0;
	if (id == GE_NOOP)
		return "(none)";
	size_t n = ge_op_num_inputs(g, id), len = 0;
	for (size_t i = 0; i < n; i++) {
		ge_tref t = ge_op_input(g, id, i);
		len += (size_t)snprintf(b + len, 512 - len, "%s%s:%d",
					len ? "," : "", ge_op_name(g, t.op),
					t.index);
	}
	n = ge_op_num_control_inputs(g, id);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(b + len, 512 - len, "%s^%s",
					len ? "," : "",
					ge_op_name(g, ge_op_control_input(g, id, i)));
	return b;
}

static void basic(void)
{
	ge_graph *g = parse(OUTER), *body = parse(BODY);
	ge_opid cret[1] = {ge_graph_find(body, "m")};
	ge_opvec added = GE_VEC_INIT;
	ge_error err;
	int rc = ge_inline_body(g, ge_graph_find(g, "call"), body, "fn",
				cret, 1, &added, &err);
	is_int(GE_OK, rc, "a call is inlined");
	if (rc)
		tap_diag("%s", err.msg);
	is_int(7, (long long)ge_graph_num_ops(g),
	       "outer ops - call + body ops - _Arg - _Retval");
	is_int(3, (long long)added.n, "three ops copied");
	ok(ge_graph_find(g, "call") == GE_NOOP, "the call is gone");
	is_string("a:0,call/c:0", inputs(g, "call/m"),
		  "_Arg replaced by the call's input");
	is_string("^k", inputs(g, "call/c"),
		  "the call's control input on an op reading nothing of the "
		  "body");
	is_string("call/m:0,^call/c", inputs(g, "call/r"),
		  "edges inside the body follow the copies");
	is_string("call/r:0", inputs(g, "out"),
		  "the call's output read from what _Retval reads");
	is_string("^call/m,^call/r", inputs(g, "after"),
		  "control consumers wait for control_ret and the returned "
		  "ops");
	is_string("/device:CPU:0", ge_op_device(g, ge_graph_find(g, "call/c")),
		  "devices kept");
	const Tensorflow__AttrValue *v =
		ge_op_attr(g, ge_graph_find(g, "call/m"), "_class", NULL);
	ok(v && v->list && v->list->n_s == 1 &&
	   !memcmp(v->list->s[0].data, "loc:@call/c", 11),
	   "colocation follows the copy");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &rep), "the result validates");
	if (rep.len)
		tap_diag("%s", (const char *)rep.data);
	ge_buf_free(&rep);
	ge_opvec_free(&added);
	ge_graph_free(g);
	ge_graph_free(body);
}

static void passthrough_and_names(void)
{
	/* the body returns its argument; a name of the outer graph is
	 * taken already */
	ge_graph *g = parse(PH("a") FCONST("call/c", "")
			    CALL("call", "input: \"a\" ", "type: DT_FLOAT",
				 "type: DT_FLOAT type: DT_FLOAT")
			    IDENT("o0", "call:0", "") IDENT("o1", "call:1", ""));
	ge_graph *body = parse(ARG("x", 0) FCONST("c", "")
			       RET("y0", "x", 0) RET("y1", "c", 1));
	ge_error err;
	int rc = ge_inline_body(g, ge_graph_find(g, "call"), body, "fn", NULL,
				0, NULL, &err);
	is_int(GE_OK, rc, "a pass-through body is inlined");
	is_string("a:0", inputs(g, "o0"), "a returned argument is the input");
	is_string("call/c_1:0", inputs(g, "o1"),
		  "a taken name is made unique");
	ge_graph_free(g);
	ge_graph_free(body);
}

static void errors(void)
{
	struct {
		const char *body, *want, *what;
	} cases[] = {
		{ARG("x", 0) ARG("z", 1) RET("y", "x", 0),
		 "the call gives 1 inputs, the function takes 2",
		 "an argument the call does not give"},
		{ARG("x", 1) RET("y", "x", 0),
		 "the body reads argument 1 ('x') but the call has 1 inputs",
		 "an argument index out of range"},
		{FCONST("c", "") RET("y", "c", 0),
		 "the call gives 1 inputs, the function takes 0",
		 "wrong arity"},
		{ARG("x", 0) MUL("m", "x", "nothere", "") RET("y", "m", 0),
		 "op 'm' of the body reads 'nothere', which does not exist",
		 "a body reading a missing op"},
		{ARG("x", 0) RET("y", "x", 0) RET("y2", "x", 1),
		 "the call has 1 outputs, the function returns 2",
		 "wrong number of results"},
		{"node { name: \"x\" op: \"_Arg\" "
		 "attr { key: \"T\" value { type: DT_FLOAT } } }\n"
		 RET("y", "x", 0),
		 "_Arg 'x' has no valid index", "an _Arg without index"},
		{ARG("x", 0)
		 "node { name: \"i\" op: \"Identity\" input: \"x\" "
		 "attr { key: \"T\" value { placeholder: \"T\" } } }\n"
		 RET("y", "i", 0),
		 "attr 'T' of op 'i' is a placeholder of the function's attrs",
		 "a generic function"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ge_graph *g = parse(OUTER), *body = parse(cases[i].body);
		ge_error err = {0};
		uint64_t v = ge_graph_version(g);
		int rc = ge_inline_body(g, ge_graph_find(g, "call"), body,
					"fn", NULL, 0, NULL, &err);
		ok(rc == GE_EGRAPH && strstr(err.msg, cases[i].want) &&
		   strstr(err.msg, "op 'call' (function 'fn')") &&
		   ge_graph_version(g) == v, "%s: refused, graph unchanged",
		   cases[i].what);
		if (!strstr(err.msg, cases[i].want))
			tap_diag("%s", err.msg);
		ge_graph_free(g);
		ge_graph_free(body);
	}
}

/* A body with a v1 loop frame, inlined twice: two frames. */
static void frames(void)
{
	ge_graph *g = parse(PH("a")
			    CALL("c1", "input: \"a\" ", "type: DT_FLOAT",
				 "type: DT_FLOAT")
			    CALL("c2", "input: \"a\" ", "type: DT_FLOAT",
				 "type: DT_FLOAT"));
	ge_graph *body = parse(ARG("x", 0)
		"node { name: \"e\" op: \"Enter\" input: \"x\" "
		"attr { key: \"T\" value { type: DT_FLOAT } } "
		"attr { key: \"frame_name\" value { s: \"loop\" } } }\n"
		"node { name: \"x2\" op: \"Exit\" input: \"e\" "
		"attr { key: \"T\" value { type: DT_FLOAT } } }\n"
		RET("y", "x2", 0));
	ge_error err;
	int rc = ge_inline_body(g, ge_graph_find(g, "c1"), body, "fn", NULL, 0,
				NULL, &err);
	rc = rc ? rc : ge_inline_body(g, ge_graph_find(g, "c2"), body, "fn",
				      NULL, 0, NULL, &err);
	is_int(GE_OK, rc, "a body with a loop inlined twice");
	const char *f1 = "", *f2 = "";
	size_t n1 = 0, n2 = 0;
	ge_op_attr_string(g, ge_graph_find(g, "c1/e"), "frame_name", &f1, &n1);
	ge_op_attr_string(g, ge_graph_find(g, "c2/e"), "frame_name", &f2, &n2);
	ok(n1 == 7 && !memcmp(f1, "c1/loop", 7) && n2 == 7 &&
	   !memcmp(f2, "c2/loop", 7), "each copy has a frame of its own");
	ge_graph_free(g);
	ge_graph_free(body);
}

/* A call nobody reads leaves its name to an op that stands for it, so
 * that what fetched or ran it by name still can: an Identity of a single
 * result, an IdentityN of several, a NoOp waiting for the body's
 * control_ret when there are none. */
static void unread_calls_keep_their_names(void)
{
	ge_error err;
	const char *body1 = ARG("x", 0) FCONST("c", "") MUL("m", "x", "c", "")
		RET("y", "m", 0);
	ge_graph *g = parse(PH("a") CALL("call", "input: \"a\" ",
					  "type: DT_FLOAT", "type: DT_FLOAT"));
	ge_graph *body = parse(body1);
	int rc = ge_inline_body(g, ge_graph_find(g, "call"), body, "fn", NULL,
				0, NULL, &err);
	is_int(GE_OK, rc, "an unread call is inlined");
	ge_opid k = ge_graph_find(g, "call");
	ok(k != GE_NOOP && !strcmp(ge_op_type(g, k), "Identity"),
	   "an Identity takes its name");
	is_string("call/m:0", inputs(g, "call"), "reading the body's result");
	int t = 0;
	ok(!ge_op_attr_type(g, k, "T", &t) && t == 1, "of its dtype (float)");
	is_int(4, (long long)ge_graph_num_ops(g),
	       "a, call/c, call/m and the Identity");
	ge_graph_free(g);
	ge_graph_free(body);

	g = parse(PH("a") CALL("two", "input: \"a\" ", "type: DT_FLOAT",
			       "type: DT_FLOAT type: DT_FLOAT"));
	body = parse(ARG("x", 0) FCONST("c", "") RET("y0", "x", 0)
		     RET("y1", "c", 1));
	rc = ge_inline_body(g, ge_graph_find(g, "two"), body, "fn", NULL, 0,
			    NULL, &err);
	k = ge_graph_find(g, "two");
	ok(!rc && k != GE_NOOP && !strcmp(ge_op_type(g, k), "IdentityN"),
	   "two results: an IdentityN");
	is_string("a:0,two/c:0", inputs(g, "two"), "of both, in order");
	is_int(2, ge_op_num_outputs(g, k), "two:0 and two:1 are there again");
	ge_graph_free(g);
	ge_graph_free(body);

	g = parse(PH("a") CALL("init", "input: \"a\" ", "type: DT_FLOAT",
			       ""));
	body = parse(ARG("x", 0) MUL("m", "x", "x", ""));
	ge_opid cret[1] = {ge_graph_find(body, "m")};
	rc = ge_inline_body(g, ge_graph_find(g, "init"), body, "fn", cret, 1,
			    NULL, &err);
	k = ge_graph_find(g, "init");
	ok(!rc && k != GE_NOOP && !strcmp(ge_op_type(g, k), "NoOp"),
	   "no results: a NoOp");
	is_string("^init/m", inputs(g, "init"),
		  "running it runs the body's control_ret");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &rep), "the result validates");
	ge_buf_free(&rep);
	ge_graph_free(g);
	ge_graph_free(body);
}

int main(void)
{
	tap_plan(35);
	basic();
	passthrough_and_names();
	errors();
	frames();
	unread_calls_keep_their_names();
	return tap_failed != 0;
}
