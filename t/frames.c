/* Frames as TensorFlow's executor assigns them, and the control-flow
 * checks of validate, on loops built as tf.while_loop builds them. */
#include "analyses/frames.h"
#include "testutil.h"
#include "editor/transform.h"

#define TY(t) "attr { key: \"T\" value { type: " t " } } "
#define FL TY("DT_FLOAT")
#define NODE(n, op, ins, attrs) \
	"node { name: \"" n "\" op: \"" op "\" " ins " " attrs "}\n"
#define IN(x) "input: \"" x "\" "
#define CST(n, ins) \
	"node { name: \"" n "\" op: \"Const\" " ins \
	" attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { } float_val: 1 } } } }\n"
#define ENTER(n, x, frame) \
	NODE(n, "Enter", IN(x), FL \
	     "attr { key: \"frame_name\" value { s: \"" frame "\" } }")
#define MERGE_ATTRS FL "attr { key: \"N\" value { i: 2 } }"

/* while (x < 1) x = x + 1, in scope p ("" or "outer/"), reading x, in
 * frame p "while/"; body_extra goes into the body. */
#define LOOP(p, x, frame) \
	ENTER(p "while/Enter", x, frame) \
	NODE(p "while/Merge", "Merge", IN(p "while/Enter") \
	     IN(p "while/NextIteration"), MERGE_ATTRS) \
	CST(p "while/Less/y", IN("^" p "while/Merge")) \
	NODE(p "while/Less", "Less", IN(p "while/Merge") \
	     IN(p "while/Less/y"), FL) \
	NODE(p "while/LoopCond", "LoopCond", IN(p "while/Less"), "") \
	NODE(p "while/Switch", "Switch", IN(p "while/Merge") \
	     IN(p "while/LoopCond"), FL) \
	NODE(p "while/Identity", "Identity", IN(p "while/Switch:1"), FL) \
	CST(p "while/add/y", IN("^" p "while/Identity")) \
	NODE(p "while/add", "Add", IN(p "while/Identity") \
	     IN(p "while/add/y"), FL) \
	NODE(p "while/NextIteration", "NextIteration", IN(p "while/add"), FL) \
	NODE(p "while/Exit", "Exit", IN(p "while/Switch"), FL)

#define SINGLE \
	CST("x", "") LOOP("", "x", "while/while_context") \
	NODE("out", "Identity", IN("while/Exit"), FL)

/* the inner loop reads the outer loop's Identity */
#define NESTED \
	CST("x", "") LOOP("", "x", "while/while_context") \
	LOOP("while/", "while/Identity", "while/while/while_context") \
	NODE("out", "Identity", IN("while/Exit"), FL)

static const char *frame(const ge_graph *g, const char *op)
{
	const ge_frames *F = ge_graph_frames(g);
	int32_t f = ge_frames_op(F, OP(g, op));
	return f < 0 ? "(none)" : ge_frames_name(F, f);
}

static size_t problems(const ge_graph *g, const char *want)
{
	ge_buf b = GE_BUF_INIT;
	size_t n = ge_graph_validate(g, &b);
	if (n)
		tap_diag("%.*s", (int)b.len, (const char *)b.data);
	if (want && !(b.len && strstr((char *)b.data, want)))
		n = 0;
	ge_buf_free(&b);
	return n;
}

static void test_single(void)
{
	ge_graph *g = parse(SINGLE);
	is_string("", frame(g, "x"), "root op: root frame");
	is_string("while/while_context", frame(g, "while/Enter"),
		  "Enter opens its frame");
	is_string("while/while_context", frame(g, "while/add/y"),
		  "a Const waiting on the pivot is in the loop");
	is_string("while/while_context", frame(g, "while/Exit"),
		  "Exit is in the loop");
	is_string("", frame(g, "out"), "Exit's reader is in the parent");
	is_int(0, (long long)problems(g, NULL), "single loop validates");
	/* the cache follows edits */
	ge_error err;
	ok(!ge_op_set_input(g, OP(g, "out"), 0, T(g, "while/add"), &err),
	   "rewire out to the body");
	is_string("while/while_context", frame(g, "out"),
		  "recomputed after an edit");
	/* and attr edits: a renamed frame is seen at once */
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
	v.s.data = (uint8_t *)"renamed";
	v.s.len = 7;
	ge_op_set_attr(g, OP(g, "while/Enter"), "frame_name", &v);
	is_string("renamed", frame(g, "while/add"),
		  "recomputed after a frame_name edit");
	ge_graph_free(g);
}

static void test_nested(void)
{
	ge_graph *g = parse(NESTED);
	const ge_frames *F = ge_graph_frames(g);
	int32_t inner = ge_frames_op(F, OP(g, "while/while/add"));
	int32_t outer = ge_frames_op(F, OP(g, "while/add"));
	is_string("while/while/while_context", ge_frames_name(F, inner),
		  "inner body in the inner frame");
	is_int(outer, ge_frames_parent(F, inner), "inner frame's parent");
	is_int(outer, ge_frames_top(F, inner), "outermost loop");
	is_string("while/while_context", frame(g, "while/while/Exit") ?
		  ge_frames_name(F, ge_frames_out(g, F,
						  OP(g, "while/while/Exit")))
		  : "", "inner Exit feeds the outer frame");
	is_int(0, (long long)problems(g, NULL), "nested loops validate");
	/* whole loops: one body op pulls in the outer loop and its inner */
	ge_opvec v = GE_VEC_INIT;
	ge_opvec_push(&v, OP(g, "while/while/add"));
	ge_frames_whole_loops(g, &v);
	is_int(22, (long long)v.n, "whole outer loop, inner included");
	ge_error err;
	ok(!ge_frames_check_view(g, v.v, v.n, &err), "whole loop: no cut");
	v.n = 3;
	ok(ge_frames_check_view(g, v.v, v.n, &err) == GE_EINVAL &&
		   strstr(err.msg, "'while/while_context'"),
	   "a part of the loop is refused, naming it: %s", err.msg);
	ge_opvec_free(&v);
	ge_graph_free(g);
}

/* Failure 1 of the issue: remove_nodes took the body Identity and moved
 * its control edges onto the Switch. */
static void test_broken_remove_nodes(void)
{
	ge_graph *g = parse(
		CST("x", "") ENTER("while/Enter", "x", "while/while_context")
		NODE("while/Merge", "Merge", IN("while/Enter")
		     IN("while/NextIteration"), MERGE_ATTRS)
		CST("while/Less/y", IN("^while/Merge"))
		NODE("while/Less", "Less", IN("while/Merge")
		     IN("while/Less/y"), FL)
		NODE("while/LoopCond", "LoopCond", IN("while/Less"), "")
		NODE("while/Switch", "Switch", IN("while/Merge")
		     IN("while/LoopCond"), FL)
		CST("while/add/y", IN("^while/Switch"))
		NODE("while/add", "Add", IN("while/Switch:1")
		     IN("while/add/y"), FL)
		NODE("while/NextIteration", "NextIteration", IN("while/add"),
		     FL)
		NODE("while/Exit", "Exit", IN("while/Switch"), FL));
	ok(problems(g, "node 'while/add/y' (Const) in frame "
		       "'while/while_context': waits on the loop Switch 'while/Switch'"),
	   "validate names the op and frame waiting on the Switch");
	ge_graph_free(g);
}

/* Failure 2: a partial copy of a loop, its Merge reading the original
 * Enter and its Switch the original LoopCond. */
static void test_broken_partial_copy(void)
{
	ge_graph *g = parse(
		SINGLE
		NODE("copy/Merge", "Merge", IN("while/Enter")
		     IN("copy/NextIteration"), MERGE_ATTRS)
		NODE("copy/Switch", "Switch", IN("copy/Merge")
		     IN("while/LoopCond"), FL)
		NODE("copy/Identity", "Identity", IN("copy/Switch:1"), FL)
		NODE("copy/NextIteration", "NextIteration",
		     IN("copy/Identity"), FL)
		NODE("copy/Exit", "Exit", IN("copy/Switch"), FL)
		NODE("copy/add", "Add", IN("copy/Exit") IN("while/add"), FL));
	ok(problems(g, "node 'copy/add' (Add) in frame '(root)': reads "
		       "'copy/Exit' of frame '(root)' and 'while/add' of frame "
		       "'while/while_context'"),
	   "validate names an op reading a loop's tensor from outside");
	ge_graph_free(g);
	/* a copied Merge in a frame of its own reading the original Enter */
	g = parse(SINGLE ENTER("copy/Enter", "x", "copy/while_context")
		  NODE("copy/Merge", "Merge", IN("while/Enter")
		       IN("copy/NextIteration"), MERGE_ATTRS)
		  NODE("copy/NextIteration", "NextIteration",
		       IN("copy/Enter"), FL));
	ok(problems(g, "node 'copy/Merge' (Merge) in frame "
		       "'while/while_context': reads 'while/Enter' of frame "
		       "'while/while_context' and 'copy/NextIteration' of "
		       "frame 'copy/while_context'"),
	   "validate names the Merge reading two frames");
	ge_graph_free(g);
}

static void test_rules(void)
{
	ge_graph *g;
	g = parse(CST("x", "") NODE("e", "Exit", IN("x"), FL));
	ok(problems(g, "node 'e' (Exit) in frame '(root)': Exit outside"),
	   "Exit outside a loop");
	ge_graph_free(g);
	g = parse(CST("x", "") ENTER("e", "x", ""));
	ok(problems(g, "'e' (Enter) in frame '': Enter without a frame_name"),
	   "Enter without frame_name");
	ge_graph_free(g);
	/* NextIteration feeding an Add */
	g = parse(CST("x", "") ENTER("e", "x", "f")
		  NODE("n", "NextIteration", IN("e"), FL)
		  NODE("a", "Add", IN("n") IN("e"), FL));
	ok(problems(g, "'n' (NextIteration) in frame 'f': NextIteration "
		       "feeds 'a' (Add), not a Merge"),
	   "NextIteration not closing a loop");
	ok(problems(g, "frame 'f' (entered by 'e'): while loop without a "
		       "LoopCond"),
	   "loop without LoopCond");
	ge_graph_free(g);
	/* a loop Merge with three inputs, and a Switch on a plain bool */
	g = parse(CST("x", "") ENTER("e", "x", "f")
		  NODE("m", "Merge", IN("e") IN("n") IN("e"),
		       FL "attr { key: \"N\" value { i: 3 } }")
		  NODE("c", "LoopCond", IN("m"), "")
		  NODE("s", "Switch", IN("m") IN("m"), FL)
		  NODE("n", "NextIteration", IN("s:1"), FL)
		  NODE("c2", "LoopCond", IN("m"), ""));
	ok(problems(g, "'m' (Merge) in frame 'f': a loop's Merge reads one "
		       "Enter and one NextIteration"),
	   "Merge with three inputs");
	ok(problems(g, "'s' (Switch) in frame 'f': the Switch of a loop "
		       "variable is driven by 'm' (Merge)"),
	   "Switch not driven by the LoopCond");
	ok(problems(g, "two loops share the frame_name (LoopCond 'c' and "
		       "'c2')"),
	   "two loops in one frame");
	ge_graph_free(g);
}

/* A view cutting a loop is copied when the result's frames stay valid,
 * refused when they would not; a whole loop is copied into a frame of its
 * own that reads nothing of the original loop. */
static void test_copy(void)
{
	ge_graph *g = parse(SINGLE);
	ge_error err;
	ge_opvec v = GE_VEC_INIT;
	ge_opvec_push(&v, OP(g, "while/Merge"));
	ge_opvec_push(&v, OP(g, "while/Switch"));
	ge_view w = GE_VIEW_INIT;
	ok(!ge_view_init(&w, g, v.v, v.n, NULL, 0, &err), "a view of 2 ops");
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	size_t before = ge_graph_num_ops(g);
	ge_buf rep = GE_BUF_INIT;
	ok(!ge_copy(&w, &o, NULL, NULL, &err) &&
		   ge_frames_validate(g, &rep) == 0,
	   "ge_copy of part of a loop whose frames stay valid: %s",
	   (const char *)(rep.data ? rep.data : (uint8_t *)""));
	ge_buf_free(&rep);
	ge_graph_free(g);
	g = parse(SINGLE);
	ge_view_free(&w);
	ge_opvec_free(&v);
	/* the Switch reading x, outside the loop, and the loop's LoopCond */
	ge_opvec_push(&v, OP(g, "while/Switch"));
	ok(!ge_view_init(&w, g, v.v, v.n, NULL, 0, &err), "a view of 1 op");
	ge_tpair r = {{OP(g, "while/Merge"), 0}, {OP(g, "x"), 0}};
	o.dst_scope = "cut";
	ok(ge_copy_with_input_replacements(&w, &r, 1, &o, NULL, NULL, &err) ==
			   GE_EINVAL &&
		   strstr(err.msg, "cut while loop 'while/while_context'"),
	   "a copy whose frames would not be valid is refused: %s", err.msg);
	is_int((long long)before, (long long)ge_graph_num_ops(g),
	       "nothing was added");
	ge_view_free(&w);
	o.dst_scope = "copy";
	ge_frames_whole_loops(g, &v);
	ok(!ge_view_init(&w, g, v.v, v.n, NULL, 0, &err), "the whole loop");
	ok(!ge_copy(&w, &o, NULL, NULL, &err), "is copied");
	is_string("copy/while/while_context", frame(g, "copy/while/add"),
		  "in a frame of its own");
	const ge_frames *F = ge_graph_frames(g);
	int foreign = 0;
	for (size_t id = before; id < ge_graph_capacity(g); id++)
		for (size_t i = 0; i < ge_op_num_inputs(g, (ge_opid)id); i++) {
			ge_tref t = ge_op_input(g, (ge_opid)id, i);
			if (t.op < before && ge_frames_op(F, t.op) > 0)
				foreign++;
		}
	is_int(0, foreign, "no copied op reads the original loop");
	ge_view_free(&w);
	ge_opvec_free(&v);
	ge_graph_free(g);
}

int main(void)
{
	tap_plan(36);
	test_copy();
	test_single();
	test_nested();
	test_broken_remove_nodes();
	test_broken_partial_copy();
	test_rules();
	return tap_done();
}
