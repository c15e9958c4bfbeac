/*
 * func: the function library model on small libraries written here as
 * text: list-typed args (number_attr, type_list_attr) and outputs, ops
 * of a type without an OpDef, direct calls, edits written back as
 * TensorFlow spells them, renames that follow calls and gradients,
 * validation of calls, a recursion check on a long chain of calls, and
 * the stamp and swap that undo at the prompt is made of.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "formats/model.h"
#include "tap.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

static const char LIB[] =
	"node { name: 'in' op: 'Placeholder' "
	"  attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
	"node { name: 'call' op: 'PartitionedCall' input: 'in' input: 'in' "
	"  attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT } } } "
	"  attr { key: 'Tout' value { list { type: DT_FLOAT } } } "
	"  attr { key: 'f' value { func { name: 'sum' } } } }\n"
	"library {\n"
	/* a number_attr list input read whole */
	" function {\n"
	"  signature { name: 'sum'\n"
	"   input_arg { name: 'xs' type: DT_FLOAT number_attr: 'N' }\n"
	"   output_arg { name: 's' type: DT_FLOAT }\n"
	"   attr { name: 'N' type: 'int' default_value { i: 2 } } }\n"
	"  node_def { name: 'add' op: 'AddN' input: 'xs' "
	"   attr { key: 'N' value { i: 2 } } "
	"   attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"  ret { key: 's' value: 'add:sum:0' }\n"
	"  arg_attr { key: 0 value { attr { key: '_user' value { i: 7 } } } }\n"
	" }\n"
	/* a type_list_attr input, list outputs, an unknown op, a call */
	" function {\n"
	"  signature { name: 'mix'\n"
	"   input_arg { name: 'ts' type_list_attr: 'Tl' }\n"
	"   input_arg { name: 'x' type: DT_FLOAT }\n"
	"   output_arg { name: 'a' type: DT_INT32 }\n"
	"   output_arg { name: 'b' type: DT_FLOAT }\n"
	"   output_arg { name: 'c' type: DT_FLOAT }\n"
	"   output_arg { name: 'd' type: DT_FLOAT }\n"
	"   attr { name: 'Tl' type: 'list(type)' default_value { list { "
	"     type: DT_FLOAT type: DT_INT32 } } } }\n"
	"  node_def { name: 'idn' op: 'IdentityN' input: 'ts' "
	"   attr { key: 'T' value { list { type: DT_FLOAT type: DT_INT32 } } } }\n"
	"  node_def { name: 'dim' op: 'Const' "
	"   attr { key: 'dtype' value { type: DT_INT32 } } "
	"   attr { key: 'value' value { tensor { dtype: DT_INT32 "
	"     tensor_shape { } int_val: 0 } } } }\n"
	"  node_def { name: 'sp' op: 'Split' input: 'dim:output:0' input: 'x' "
	"   attr { key: 'num_split' value { i: 3 } } "
	"   attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"  node_def { name: 'm' op: 'MyCustomOp' input: 'sp:output:2' }\n"
	"  node_def { name: 'use' op: 'AddV2' input: 'm:foo:0' "
	"   input: 'm:bar:1' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"  node_def { name: 'whole' op: 'Probe' input: 'm:baz' }\n"
	"  node_def { name: 'twice' op: 'sum' input: 'x' input: 'ts:0' }\n"
	/* the bytes after an input's text are the next field's: here the
	 * tag of experimental_debug_info, the digit '2' */
	"  node_def { name: 'dbg' op: 'DebugProbe' input: 'dim:output:0' "
	"   experimental_debug_info { original_node_names: 'dbg' } }\n"
	"  ret { key: 'a' value: 'idn:output:1' }\n"
	"  ret { key: 'b' value: 'sp:output:2' }\n"
	"  ret { key: 'c' value: 'use:z:0' }\n"
	"  ret { key: 'd' value: 'twice:s:0' }\n"
	" }\n"
	" gradient { function_name: 'sum' gradient_func: 'mix' }\n"
	"}\n";

static ge_graph *parse(const char *text)
{
	ge_graph *g = NULL;
	ge_error err = {0, ""};
	if (ge_parse((const uint8_t *)text, strlen(text), GE_FMT_GRAPHDEF_TEXT,
		     "lib.pbtxt", NULL, &g, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return g;
}

static ge_graph *reparse(ge_graph *g)
{
	ge_buf b = GE_BUF_INIT;
	ge_error err;
	ge_serialize(g, GE_FMT_GRAPHDEF, &b, &err);
	ge_graph *h = NULL;
	if (ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "again.pb", NULL, &h, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	ge_buf_free(&b);
	return h;
}

static const char *in_name(ge_graph *b, const char *op, size_t i,
			   char *buf)
{
	ge_opid id = ge_graph_find(b, op);
	if (id == GE_NOOP || i >= ge_op_num_inputs(b, id))
		return "?";
	ge_tref t = ge_op_input(b, id, i);
	if (t.op == GE_NOOP)
		return ge_op_dangling_input(b, id, i);
	sprintf(buf, "%s:%d", ge_op_name(b, t.op), t.index);
	return buf;
}

static int contains(const ge_buf *b, const char *s)
{
	return memmem(b->data, b->len, s, strlen(s)) != NULL;
}

static void list_args(void)
{
	ge_graph *g = parse(LIB);
	char buf[300];
	is_int(2, (long long)ge_func_count(g), "two functions");
	ge_funcid sum = ge_func_find(g, "sum"), mix = ge_func_find(g, "mix");
	ok(sum != GE_NOFUNC && mix != GE_NOFUNC, "found by name");
	is_int(1, (long long)ge_func_num_inputs(g, sum), "sum has one input");
	is_int(2, ge_func_input(g, sum, 0).count,
	       "a number_attr list of N=2 (from the signature's default)");
	ge_buf raw = GE_BUF_INIT;
	ge_func_encode(g, sum, &raw);
	ge_graph *b = ge_func_body(g, sum, NULL);
	ok(b != NULL, "the body parses");
	ok(ge_graph_find(b, "xs_0") != GE_NOOP &&
		   ge_graph_find(b, "xs_1") != GE_NOOP,
	   "one _Arg per list element: xs_0, xs_1");
	int64_t ix = -1;
	ge_op_attr_int(b, ge_graph_find(b, "xs_1"), "index", &ix);
	is_int(1, ix, "xs_1 has index 1");
	is_int(2, (long long)ge_op_num_inputs(b, ge_graph_find(b, "add")),
	       "AddN reading the whole list has two inputs");
	is_string("xs_1:0", in_name(b, "add", 1, buf), "the second is xs_1");
	is_string("add:0", in_name(b, "s_RetVal", 0, buf),
		  "the _Retval reads add:sum:0 as add:0");
	ge_buf same = GE_BUF_INIT;
	ge_func_encode(g, sum, &same);
	ok(same.len == raw.len && !memcmp(same.data, raw.data, raw.len),
	   "parsed, not edited: the same bytes");

	/* an edit: the function is written again, list and arg_attr kept */
	ge_op_set_name(b, ge_graph_find(b, "add"), "total", NULL);
	ge_buf ed = GE_BUF_INIT;
	ge_func_encode(g, sum, &ed);
	ok(contains(&ed, "total:sum:0"), "the ret map follows the rename");
	ok(contains(&ed, "xs:0") && contains(&ed, "xs:1"),
	   "the list's elements are written xs:0, xs:1");
	ok(contains(&ed, "_user"), "arg_attr is kept");
	ok(!contains(&ed, "xs_0"), "no _Arg name leaks to disk");
	ge_graph *h = reparse(g);
	ge_funcid s2 = ge_func_find(h, "sum");
	is_int(2, ge_func_input(h, s2, 0).count,
	       "reloaded: still one list arg of 2");
	ge_graph *b2 = ge_func_body(h, s2, NULL);
	is_string("xs_0:0", in_name(b2, "total", 0, buf),
		  "reloaded: total reads xs_0");
	ge_graph_free(h);

	/* type_list_attr, number_attr outputs, unknown ops, direct calls */
	b = ge_func_body(g, mix, NULL);
	ok(b != NULL, "mix parses");
	int dt = 0;
	ge_op_attr_type(b, ge_graph_find(b, "ts_1"), "T", &dt);
	is_string("int32", ge_dtype_name(dt), "ts_1 is the int32 of Tl");
	is_string("idn:1", in_name(b, "a_RetVal", 0, buf),
		  "idn:output:1 is output 1");
	is_string("sp:2", in_name(b, "b_RetVal", 0, buf),
		  "sp:output:2 of a Split of 3 is output 2");
	is_string("m:0", in_name(b, "use", 0, buf),
		  "an op without an OpDef: its first arg from 0");
	is_string("m:2", in_name(b, "use", 1, buf),
		  "its second arg after the first one's tensors");
	is_string("m:3", in_name(b, "whole", 0, buf),
		  "a whole arg of an op without an OpDef: one tensor, after "
		  "the others");
	is_string("twice:0", in_name(b, "d_RetVal", 0, buf),
		  "a direct call's outputs come from the callee's signature");
	is_string("ts_0:0", in_name(b, "twice", 1, buf), "ts:0 is ts_0");
	is_string("dim:0", in_name(b, "dbg", 0, buf),
		  "an input's index is read within its text, not past it");
	ge_buf rep = GE_BUF_INIT;
	size_t np = ge_flib_validate(g, 1, &rep);
	if (!is_int(0, (long long)np, "the library validates"))
		tap_diag("%s", rep.data);
	ge_buf_free(&rep);
	ge_op_set_name(b, ge_graph_find(b, "m"), "m2", NULL);
	ge_op_set_name(b, ge_graph_find(b, "sp"), "sp2", NULL);
	ed.len = 0;
	ge_func_encode(g, mix, &ed);
	ok(contains(&ed, "m2:foo:0") && contains(&ed, "m2:bar:1"),
	   "an unknown op's outputs are written back by their names");
	ok(contains(&ed, "sp2:output:2"), "the ret of a list output");
	ok(contains(&ed, "type_list_attr") || contains(&ed, "Tl"),
	   "the signature keeps its list arg");
	h = reparse(g);
	np = ge_flib_validate(h, 1, NULL);
	is_int(0, (long long)np, "edited and reloaded, it validates");
	ge_graph_free(h);

	/* rename follows the call attr, the direct call and the gradient */
	ge_error err;
	ok(ge_func_rename(g, sum, "total_sum", &err) == GE_OK, "rename");
	ge_opid call = ge_graph_find(g, "call");
	const Tensorflow__AttrValue *f = ge_op_attr(g, call, "f", NULL);
	is_string("total_sum", f && f->func ? f->func->name : NULL,
		  "the call's f attr follows");
	is_string("total_sum", ge_op_type(b, ge_graph_find(b, "twice")),
		  "the direct call's type follows");
	h = reparse(g);
	ge_buf lib = GE_BUF_INIT;
	ge_serialize(h, GE_FMT_GRAPHDEF, &lib, &err);
	ok(contains(&lib, "total_sum") && !memmem(lib.data, lib.len, "\x0a\x03sum", 5),
	   "the gradient and the signature follow");
	is_int(0, (long long)ge_flib_validate(h, 1, NULL),
	       "after the rename the library validates");
	ge_buf_free(&lib);
	ge_graph_free(h);
	ok(ge_func_remove(g, ge_func_find(g, "total_sum"), 0, &err) != GE_OK &&
		   strstr(err.msg, "calls it"),
	   "remove refuses while the function is called: %s", err.msg);
	ge_funcid cp = ge_func_copy(g, mix, "mix2", &err);
	ok(cp != GE_NOFUNC && ge_func_num_outputs(g, cp) == 4, "copy");
	ok(ge_func_remove(g, cp, 0, &err) == GE_OK && !ge_func_alive(g, cp),
	   "an unused function is removed");
	ge_buf_free(&raw);
	ge_buf_free(&same);
	ge_buf_free(&ed);
	ge_graph_free(g);
}

/* f0 calls f1 ... calls f(n-1), which calls f0: one cycle, found by a walk
 * that sees each function once (a cubic check would not finish). */
static void recursion(void)
{
	enum { N = 3000 };
	ge_buf t = GE_BUF_INIT;
	ge_buf_adds(&t, "library {\n");
	for (int i = 0; i < N; i++)
		ge_buf_printf(&t,
			      " function { signature { name: 'f%d' "
			      "input_arg { name: 'x' type: DT_FLOAT } "
			      "output_arg { name: 'y' type: DT_FLOAT } }\n"
			      "  node_def { name: 'c' op: 'PartitionedCall' "
			      "input: 'x' attr { key: 'f' value { func { name: "
			      "'f%d' } } } attr { key: 'Tin' value { list { "
			      "type: DT_FLOAT } } } attr { key: 'Tout' value { "
			      "list { type: DT_FLOAT } } } }\n"
			      "  ret { key: 'y' value: 'c:output:0' } }\n",
			      i, (i + 1) % N);
	ge_buf_adds(&t, "}\n");
	ge_graph *g = parse((const char *)t.data);
	ge_buf rep = GE_BUF_INIT;
	size_t n = ge_flib_validate(g, 1, &rep);
	is_int(1, (long long)n, "a chain of %d calls closing on itself: one "
	       "problem", N);
	ok(rep.data && strstr((char *)rep.data, "recursively (f0 -> f1 -> f2"),
	   "it names the cycle: %.120s", rep.data ? (char *)rep.data : "");
	ge_error err;
	ok(ge_flib_check(g, &err) == GE_EGRAPH &&
		   strstr(err.msg, "lib.pbtxt: function 'f"),
	   "ge_flib_check refuses it naming the file and function: %.100s",
	   err.msg);
	ge_buf_free(&rep);
	ge_buf_free(&t);
	ge_graph_free(g);
}

/* control_ret follows renames and removals; arg_attr and
 * resource_arg_unique_id follow the args they are keyed by. */
static void rets_and_arg_maps(void)
{
	ge_graph *g = parse(
		"library { function {\n"
		" signature { name: 'h' input_arg { name: 'a' type: DT_FLOAT }\n"
		"  input_arg { name: 'r' type: DT_RESOURCE }\n"
		"  output_arg { name: 'o' type: DT_FLOAT } control_output: 'done' }\n"
		" node_def { name: 'side' op: 'NoOp' }\n"
		" node_def { name: 'id' op: 'Identity' input: 'a' "
		"  attr { key: 'T' value { type: DT_FLOAT } } }\n"
		" ret { key: 'o' value: 'id:output:0' }\n"
		" control_ret { key: 'done' value: 'side' }\n"
		" arg_attr { key: 1 value { attr { key: '_r' value { i: 1 } } } }\n"
		" resource_arg_unique_id { key: 1 value: 5 }\n"
		"} }\n");
	ge_funcid h = ge_func_find(g, "h");
	ge_graph *b = ge_func_body(g, h, NULL);
	ge_error err;
	ge_op_set_name(b, ge_graph_find(b, "side"), "side2", &err);
	ge_buf e = GE_BUF_INIT;
	ge_func_encode(g, h, &e);
	ok(contains(&e, "side2") && contains(&e, "done"),
	   "control_ret follows a rename");
	/* the first arg goes: the resource arg becomes arg 0 */
	ge_opid a = ge_graph_find(b, "a");
	ge_opid id = ge_graph_find(b, "id");
	ge_graph_remove_op(b, id, 1, &err);
	ge_graph_remove_op(b, ge_graph_find(b, "o_RetVal"), 1, &err);
	ge_graph_remove_op(b, a, 1, &err);
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	v.i = 0;
	ge_op_set_attr(b, ge_graph_find(b, "r"), "index", &v);
	ge_graph_remove_op(b, ge_graph_find(b, "side2"), 1, &err);
	ge_graph *h2 = reparse(g);
	ge_funcid f2 = ge_func_find(h2, "h");
	is_int(1, (long long)ge_func_num_inputs(h2, f2), "one input left");
	is_string("r", ge_func_input(h2, f2, 0).name, "the resource arg");
	is_int(0, (long long)ge_func_num_outputs(h2, f2), "no output left");
	e.len = 0;
	ge_func_encode(h2, f2, &e);
	/* arg_attr { key: 0 ... }: entry bytes 08 00 12 ... */
	ok(contains(&e, "_r") && memmem(e.data, e.len, "\x08\x00\x12", 3),
	   "arg_attr is keyed by the arg's new index");
	ok(memmem(e.data, e.len, "\x08\x00\x10\x05", 4) != NULL,
	   "resource_arg_unique_id too");
	ok(!contains(&e, "done"),
	   "the removed op's control_ret and control_output are gone");
	is_int(0, (long long)ge_flib_validate(h2, 1, NULL), "it validates");
	ge_buf_free(&e);
	ge_graph_free(h2);
	ge_graph_free(g);
}

/* Functions added and built with the graph API. */
static void build(void)
{
	ge_graph *g = ge_graph_new();
	ge_error err;
	ok(ge_func_count(g) == 0, "a new graph has no functions");
	ge_funcid f = ge_func_add(g, "f", &err);
	ok(f != GE_NOFUNC, "add");
	ok(ge_func_add(g, "f", &err) == GE_NOFUNC, "a taken name is refused");
	ge_graph *b = ge_func_body(g, f, &err);
	ok(b && ge_graph_num_ops(b) == 0, "an empty body");
	is_int(0, (long long)ge_flib_validate(g, 1, NULL),
	       "an empty function validates");
	ge_buf out = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &out);
	ok(out.len > 0 && contains(&out, "f"), "saved with its library");
	ge_buf_free(&out);
	ge_graph_free(g);
}

/* Undo's building blocks: a stamp that moves with edits of the graph
 * and of a body but not with parsing a body, and a swap that puts an
 * earlier clone back in place, bodies and all. */
static void swap_and_stamp(void)
{
	ge_graph *g = parse(LIB);
	ge_error err;
	uint64_t s0 = ge_graph_stamp(g);
	ge_funcid f = ge_func_find(g, "sum");
	ge_graph *b = ge_func_body(g, f, &err);
	ok(b != NULL, "a body");
	ok(ge_graph_stamp(g) == s0, "parsing a body leaves the stamp");
	ge_graph *snap = ge_graph_clone(g);
	size_t nb = ge_graph_num_ops(b), n = ge_graph_num_ops(g);
	ge_graph_add_op(b, "extra", "NoOp", &err);
	uint64_t s1 = ge_graph_stamp(g);
	ok(s1 != s0, "an edit of a body moves it");
	ge_graph_add_op(g, "top", "NoOp", &err);
	ok(ge_graph_stamp(g) != s1, "an edit of the graph moves it");
	ok(ge_func_rename(g, f, "sum2", &err) == GE_OK, "rename");
	uint64_t s2 = ge_graph_stamp(g);
	uint64_t v = ge_graph_version(g);
	ge_graph_swap(g, snap);
	ok(ge_graph_version(g) > v, "the version moves past both");
	ok(ge_graph_stamp(g) != s2 && ge_graph_stamp(g) != s0,
	   "and so does the stamp");
	is_int((long long)n, (long long)ge_graph_num_ops(g), "ops back");
	ok(ge_graph_find(g, "top") == GE_NOOP, "the op added is gone");
	ok(ge_graph_find(snap, "top") != GE_NOOP, "and in the other graph");
	f = ge_func_find(g, "sum");
	ok(f != GE_NOFUNC && ge_func_find(g, "sum2") == GE_NOFUNC,
	   "the function's name is back");
	ge_graph *b2 = ge_func_body(g, f, &err);
	ok(b2 && ge_graph_num_ops(b2) == nb &&
		   ge_graph_find(b2, "extra") == GE_NOOP,
	   "its body is the one before the edit");
	ok(ge_graph_root(b2) == g, "and belongs to the graph");
	ok(ge_graph_root(b) == snap, "the edited body went with the other");
	is_int(0, (long long)ge_flib_validate(g, 1, NULL), "it validates");
	ge_graph_free(snap);
	ge_buf out = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &out);
	ok(contains(&out, "sum") && !contains(&out, "extra"),
	   "and saves as it was");
	ge_buf_free(&out);
	ge_graph_free(g);
}

int main(void)
{
	list_args();
	recursion();
	rets_and_arg_maps();
	build();
	swap_and_stamp();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
