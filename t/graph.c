/*
 * graph: the graph model alone: names, edges, consumer lists, removal,
 * unique names, attrs, outputs, validation, clone and reorder.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

static ge_opid F(ge_graph *g, const char *name)
{
	return ge_graph_find(g, name);
}

/* "a:0 b:1" style listing of an op's consumers */
static const char *uses(ge_graph *g, const char *name)
{
	static char buf[512];
	size_t n;
	const ge_use *u = ge_op_uses(g, F(g, name), &n);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof buf - l, "%s%s/%u", i ? " " : "",
			 ge_op_name(g, u[i].op), u[i].slot);
	}
	return buf;
}

static const char *couts(ge_graph *g, const char *name)
{
	static char buf[512];
	size_t n;
	const ge_opid *c = ge_op_control_outputs(g, F(g, name), &n);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof buf - l, "%s%s", i ? " " : "",
			 ge_op_name(g, c[i]));
	}
	return buf;
}

static const char *graphdef =
	"node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
	"       attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 3 } } } } }\n"
	"node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
	"       attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 } } } }\n"
	"node { name: 'c' op: 'Add' input: 'a' input: 'b:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"node { name: 'd' op: 'Mul' input: 'c' input: 'c' input: '^b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"node { name: 's' op: 'Split' input: 'x_axis' input: 'd' attr { key: 'num_split' value { i: 3 } }\n"
	"       attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"node { name: 'x_axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }\n"
	"       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }\n"
	"node { name: 'e' op: 'Identity' input: 's:2' input: '^d' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"versions { producer: 27 }\n";

static void test_structure(void)
{
	ge_graph *g = try_parse(graphdef);
	ok(g != NULL, "fixture parses");
	is_int(7, (long long)ge_graph_num_ops(g), "7 ops");
	is_int(0, F(g, "a"), "ops in node order: a is 0");
	is_int(5, F(g, "x_axis"), "x_axis is 5 (inputs may name later ops)");
	ok(F(g, "A") == GE_NOOP, "lookup is case-sensitive");
	is_string("Add", ge_op_type(g, F(g, "c")), "type");
	is_int(2, (long long)ge_op_num_inputs(g, F(g, "d")), "d: 2 data inputs");
	is_int(1, (long long)ge_op_num_control_inputs(g, F(g, "d")),
	       "d: 1 control input");
	is_int(F(g, "b"), ge_op_control_input(g, F(g, "d"), 0), "^b");
	ge_tref t = ge_op_input(g, F(g, "e"), 0);
	ok(t.op == F(g, "s") && t.index == 2, "e reads s:2");
	is_string("c/0", uses(g, "a"), "uses of a");
	is_string("d/0 d/1", uses(g, "c"), "uses of c: both slots of d");
	is_string("d", couts(g, "b"), "control outputs of b");
	is_string("e", couts(g, "d"), "control outputs of d");
	ge_opid cons[8];
	is_int(1, (long long)ge_tensor_consumers(g, (ge_tref){F(g, "c"), 0},
						 cons, 8),
	       "c:0 has one distinct consumer (d reads it twice)");
	is_int(1, (long long)ge_tensor_consumers(g, (ge_tref){F(g, "s"), 2},
						 cons, 8),
	       "s:2 has one consumer");
	is_int(0, (long long)ge_tensor_consumers(g, (ge_tref){F(g, "s"), 1},
						 cons, 8),
	       "s:1 has none");
	ge_tref ft;
	ok(ge_graph_find_tensor(g, "s:2", &ft) == GE_OK && ft.index == 2,
	   "find_tensor s:2");
	ok(ge_graph_find_tensor(g, "^d", &ft) == GE_OK &&
		   ft.index == GE_CONTROL,
	   "find_tensor ^d");
	ok(ge_graph_find_tensor(g, "nope:0", &ft) == GE_ENOTFOUND,
	   "find_tensor of a missing op");
	ok(ge_graph_find_tensor(g, "s:", &ft) == GE_EINVAL, "malformed");

	/* outputs */
	is_int(3, ge_op_num_outputs(g, F(g, "s")), "Split: num_split outputs");
	is_int(1, ge_op_num_outputs(g, F(g, "c")), "Add: 1 output");
	is_int(1, ge_op_output_dtype(g, F(g, "c"), 0), "Add: T = float");
	is_int(3, ge_op_output_dtype(g, F(g, "x_axis"), 0), "Const: int32");
	int64_t dims[4];
	is_int(2, ge_op_output_shape(g, F(g, "a"), 0, dims, 4),
	       "Placeholder shape rank 2");
	ok(dims[0] == -1 && dims[1] == 3, "  [-1, 3]");
	is_int(1, ge_op_output_shape(g, F(g, "b"), 0, dims, 4),
	       "Const shape from its value");
	is_int(-1, ge_op_output_shape(g, F(g, "c"), 0, dims, 4),
	       "Add: unknown shape");
	is_string("float32", ge_dtype_name(1), "dtype name");
	is_string("int64_ref", ge_dtype_name(109), "ref dtype name");
	is_int(7, ge_dtype_from_name("string"), "dtype from name");
	is_int(1, ge_dtype_from_name("DT_FLOAT"), "dtype from enum name");
	is_int(-1, ge_dtype_from_name("floaty"), "unknown dtype");

	ge_buf r = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &r), "fixture validates");
	if (r.len)
		tap_diag("%s", r.data);
	ge_buf_free(&r);
	ge_graph_free(g);
}

static void test_edits(void)
{
	ge_graph *g = try_parse(graphdef);
	ge_error err;
	uint64_t v0 = ge_graph_version(g);

	/* set_input moves a use from one producer to another */
	ok(ge_op_set_input(g, F(g, "d"), 1, (ge_tref){F(g, "a"), 0}, &err) ==
		   GE_OK,
	   "set_input");
	is_string("d/0", uses(g, "c"), "c lost d/1");
	is_string("c/0 d/1", uses(g, "a"), "a gained d/1, in node order");
	ok(ge_graph_version(g) > v0, "edits bump the version");
	ok(ge_op_set_input(g, F(g, "d"), 2, (ge_tref){F(g, "a"), 0}, &err) ==
		   GE_EINVAL,
	   "set_input out of range refused");
	tap_diag("  %s", err.msg);

	/* add and remove inputs keep slots right */
	ok(ge_op_add_input(g, F(g, "d"), (ge_tref){F(g, "b"), 0}, &err) == 0,
	   "add_input");
	is_int(3, (long long)ge_op_num_inputs(g, F(g, "d")), "d has 3 inputs");
	is_int(F(g, "b"), ge_op_control_input(g, F(g, "d"), 0),
	       "control input kept after the data inputs");
	ok(ge_op_remove_input(g, F(g, "d"), 0, &err) == 0, "remove_input 0");
	is_string("c/0 d/0", uses(g, "a"), "slots renumbered in a's uses");
	is_string("c/1 d/1", uses(g, "b"), "and in b's uses");

	/* control inputs */
	ok(ge_op_add_control_input(g, F(g, "c"), F(g, "a"), &err) == 0,
	   "add_control_input");
	ok(ge_op_add_control_input(g, F(g, "c"), F(g, "a"), &err) ==
		   GE_EINVAL,
	   "duplicate control input refused");
	tap_diag("  %s", err.msg);
	is_string("c", couts(g, "a"), "control outputs follow");
	ok(ge_op_remove_control_input(g, F(g, "c"), F(g, "a"), &err) == 0,
	   "remove_control_input");
	ok(ge_op_remove_control_input(g, F(g, "c"), F(g, "a"), &err) ==
		   GE_ENOTFOUND,
	   "removing it twice fails");
	is_string("", couts(g, "a"), "control outputs emptied");

	/* add ops */
	ge_opid n = ge_graph_add_op(g, "new", "Relu", &err);
	ok(n == 7, "new op appended with the next id");
	Tensorflow__AttrValue tv = TENSORFLOW__ATTR_VALUE__INIT;
	tv.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
	tv.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
	ge_op_set_attr(g, n, "T", &tv);
	ok(ge_graph_add_op(g, "new", "Relu", &err) == GE_NOOP,
	   "taken name refused");
	tap_diag("  %s", err.msg);
	ok(ge_graph_add_op(g, "", "Relu", &err) == GE_NOOP, "empty name refused");

	/* removal */
	ok(ge_graph_remove_op(g, F(g, "s"), 0, &err) == GE_EGRAPH,
	   "removing a consumed op fails");
	is_string("cannot remove 's': 'e' reads 's:2'", err.msg, "  message");
	ge_opid s_ = F(g, "s");
	ok(ge_graph_remove_op(g, s_, 1, &err) == 0, "force removal");
	ok(!ge_op_alive(g, s_), "s is dead");
	is_string("s", ge_op_name(g, s_), "a dead op keeps its name");
	ok(F(g, "s") == GE_NOOP, "and is out of the index");
	is_string("", uses(g, "x_axis"), "s's inputs left the producers' lists");
	is_string("s:2", ge_op_dangling_input(g, F(g, "e"), 0),
		  "e now reads a dangling 's:2'");
	ok(ge_op_input(g, F(g, "e"), 0).op == GE_NOOP &&
		   ge_op_input(g, F(g, "e"), 0).index == 2,
	   "a dangling input keeps its index");
	ge_buf r = GE_BUF_INIT;
	is_int(1, (long long)ge_graph_validate(g, &r), "validate reports it");
	is_string("node 'e': input 's:2' names no op in the graph\n",
		  (char *)r.data, "  message");
	ge_buf_free(&r);

	/* renames: consumers spell the new name when saved */
	ok(ge_op_set_name(g, F(g, "a"), "input", &err) == 0, "rename");
	ok(ge_op_set_name(g, F(g, "b"), "input", &err) == GE_EINVAL,
	   "rename onto a taken name refused");
	ge_buf out = GE_BUF_INIT;
	ok(ge_serialize(g, GE_FMT_GRAPHDEF_TEXT, &out, &err) == 0, "serialize");
	ok(strstr((char *)out.data, "input: \"input\"") != NULL,
	   "consumer of the renamed op spells its new name");
	ok(strstr((char *)out.data, "input: \"s:2\"") != NULL,
	   "the dangling input is written as it was");
	ok(strstr((char *)out.data, "name: \"s\"") == NULL,
	   "the removed op is gone");
	ge_buf_free(&out);
	ge_graph_free(g);
}

static void test_unique_name(void)
{
	ge_graph *g = ge_graph_new();
	ge_graph_add_op(g, "a", "NoOp", NULL);
	ge_graph_add_op(g, "a_1", "NoOp", NULL);
	is_string("a_2", ge_graph_unique_name(g, "a"),
		  "a, a_1 taken: unique_name(a) = a_2");
	is_string("a_3", ge_graph_unique_name(g, "a"),
		  "names handed out count as used");
	is_string("b", ge_graph_unique_name(g, "b"), "a free name is kept");
	is_string("b_1", ge_graph_unique_name(g, "b"), "once");
	is_string("A_4", ge_graph_unique_name(g, "A"),
		  "case-insensitive, caller's case kept");
	ge_graph_add_op(g, "Add_2", "NoOp", NULL);
	is_string("Add_2_1", ge_graph_unique_name(g, "Add_2"),
		  "copying Add_2 gives Add_2_1");
	ge_graph_add_op(g, "foo/c", "NoOp", NULL);
	is_string("foo/c_1", ge_graph_unique_name(g, "foo/c"),
		  "copying foo/c in place gives foo/c_1");
	ge_graph_free(g);
}

static void test_attrs(void)
{
	ge_graph *g = try_parse(graphdef);
	ge_opid c = F(g, "s");
	is_int(2, (long long)ge_op_num_attrs(g, c), "Split has 2 attrs");
	is_string("num_split", ge_op_attr_name(g, c, 0), "in file order");
	int64_t i;
	ok(ge_op_attr_int(g, c, "num_split", &i) == 0 && i == 3, "attr int");
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	v.i = 2;
	ge_op_set_attr(g, c, "num_split", &v);
	is_int(2, ge_op_num_outputs(g, c), "outputs follow num_split");
	ge_buf r = GE_BUF_INIT;
	is_int(1, (long long)ge_graph_validate(g, &r),
	       "e reading s:2 is now out of range");
	is_string("node 'e': input 0 reads 's:2' but 's' (Split) has 2 outputs\n",
		  (char *)r.data, "  message");
	ge_buf_free(&r);
	ok(ge_op_remove_attr(g, c, "T") == 0, "remove attr");
	ok(ge_op_attr(g, c, "T", NULL) == NULL, "gone");
	ok(ge_op_remove_attr(g, c, "T") == GE_ENOTFOUND, "twice: not found");
	ge_graph_free(g);
}

static void test_validate(void)
{
	/* a cycle outside a loop, a bad colocation, a duplicate name */
#define T_ "attr { key: 'T' value { type: DT_FLOAT } } "
	ge_graph *g = try_parse(
		"node { name: 'p' op: 'Identity' input: 'q' " T_ "}\n"
		"node { name: 'q' op: 'Identity' input: 'p' " T_ "}\n"
		"node { name: 'k' op: 'NoOp' attr { key: '_class' value { list { s: 'loc:@ghost' } } } }\n"
		"node { name: 'k' op: 'NoOp' }\n");
	ge_buf r = GE_BUF_INIT;
	size_t n = ge_graph_validate(g, &r);
	is_int(3, (long long)n, "three problems");
	if (n != 3)
		tap_diag("%s", r.data);
	ok(r.data && strstr((char *)r.data, "node 'k' (#3): duplicate name"),
	   "duplicate name");
	ok(r.data && strstr((char *)r.data,
			    "node 'k': colocated with missing node 'ghost'"),
	   "colocation with a missing node");
	ok(r.data && strstr((char *)r.data, "node 'p': on a cycle"),
	   "cycle");
	ge_buf_free(&r);
	ge_graph_free(g);

	/* a while loop's back edge through NextIteration is fine */
	g = try_parse("node { name: 'enter' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
		      "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " T_
		      "attr { key: 'N' value { i: 2 } } }\n"
		      "node { name: 'body' op: 'Identity' input: 'merge' " T_ "}\n"
		      "node { name: 'next' op: 'NextIteration' input: 'body' " T_ "}\n");
	/* (no Enter: the loop checks of frames.c object, the cycle check
	 * does not) */
	r = (ge_buf)GE_BUF_INIT;
	ge_graph_validate(g, &r);
	ok(!(r.data && strstr((char *)r.data, "on a cycle")),
	   "a loop through NextIteration is no cycle");
	ge_buf_free(&r);
	ge_graph_free(g);
}

static void test_colocation_rename(void)
{
	ge_graph *g = try_parse(
		"node { name: 'v' op: 'NoOp' }\n"
		"node { name: 'w' op: 'NoOp' }\n"
		"node { name: 'a' op: 'NoOp' attr { key: '_class' value { list { s: 'loc:@v' s: 'loc:@w' } } } }\n"
		"node { name: 'b' op: 'NoOp' attr { key: '_class' value { list { s: 'loc:@v' } } } }\n");
	ok(ge_op_set_name(g, F(g, "v"), "v2", NULL) == 0, "rename v");
	ge_buf out = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_GRAPHDEF_TEXT, &out, NULL);
	const char *t = (const char *)out.data;
	ok(!strstr(t, "loc:@v\""), "no loc:@v left");
	const char *first = strstr(t, "loc:@v2");
	ok(first && strstr(first + 1, "loc:@v2"), "both a and b point at v2");
	ok(strstr(t, "loc:@w") != NULL, "other entries kept");
	ok(ge_op_set_name(g, F(g, "v2"), "v3", NULL) == 0, "rename again");
	out.len = 0;
	ge_serialize(g, GE_FMT_GRAPHDEF_TEXT, &out, NULL);
	t = (const char *)out.data;
	ok(!strstr(t, "loc:@v2") && strstr(t, "loc:@v3"), "the index follows");
	is_int(0, (long long)ge_graph_validate(g, NULL), "validates");
	ge_buf_free(&out);
	ge_graph_free(g);
}

static void test_clone_reorder(void)
{
	ge_graph *g = try_parse(graphdef);
	ge_graph *h = ge_graph_clone(g);
	ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_GRAPHDEF, &a, NULL);
	ge_serialize(h, GE_FMT_GRAPHDEF, &b, NULL);
	ok(a.len == b.len && !memcmp(a.data, b.data, a.len),
	   "clone encodes identically");
	ge_op_set_name(h, ge_graph_find(h, "c"), "cc", NULL);
	ok(F(g, "c") != GE_NOOP, "the clone is independent");
	ge_graph_free(h);

	/* names handed out before the clone stay taken in it, and the
	 * suffixes go on from where the source's are */
	ge_graph *u = try_parse(graphdef);
	is_string("gate", ge_graph_unique_name(u, "gate"), "a free name");
	is_string("gate_1", ge_graph_unique_name(u, "gate"), "then suffixed");
	h = ge_graph_clone(u);
	is_string("GATE_2", ge_graph_unique_name(h, "GATE"),
		  "the clone remembers the names handed out (any case)");
	is_string("gate_1_1", ge_graph_unique_name(h, "gate_1"),
		  "and each of them");
	is_string("gate_2", ge_graph_unique_name(u, "gate"),
		  "the source goes on by itself");
	ge_graph_free(h);
	ge_graph_free(u);

	/* reverse the order */
	size_t n = ge_graph_num_ops(g);
	ge_opid perm[16];
	for (size_t i = 0; i < n; i++)
		perm[i] = (ge_opid)(n - 1 - i);
	ok(ge_graph_reorder(g, perm, n, NULL) == 0, "reorder");
	is_int(0, F(g, "e"), "e first");
	is_string("c/0", uses(g, "a"), "edges follow the new ids");
	is_string("d/0 d/1", uses(g, "c"), "uses keep their slots");
	perm[0] = perm[1];
	ok(ge_graph_reorder(g, perm, n, NULL) == GE_EINVAL,
	   "a non-permutation is refused");
	ge_buf_free(&a);
	ge_buf_free(&b);
	ge_graph_free(g);
}

static void test_batch_inputs(void)
{
	ge_graph *g = ge_graph_new();
	ge_opid a = ge_graph_add_op(g, "a", "NoOp", NULL);
	ge_opid b = ge_graph_add_op(g, "b", "NoOp", NULL);
	enum { N = 1000 };
	ge_input_edit ed[N];
	for (int i = 0; i < N; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "r%d", i);
		ge_opid r = ge_graph_add_op(g, nm, "Identity", NULL);
		ge_op_add_input(g, r, (ge_tref){a, 0}, NULL);
		ge_op_add_input(g, r, (ge_tref){a, 1}, NULL);
		/* move slot 1 of every reader, and slot 0 of every other */
		ed[i] = (ge_input_edit){r, 1, {b, 0}};
	}
	size_t n;
	ge_op_uses(g, a, &n);
	is_int(2 * N, (long long)n, "a has 2000 uses");
	ok(ge_graph_set_inputs(g, ed, N, NULL) == 0, "batch of 1000 edits");
	const ge_use *ua = ge_op_uses(g, a, &n);
	int sorted = 1;
	for (size_t i = 1; i < n; i++)
		if (ua[i - 1].op >= ua[i].op)
			sorted = 0;
	ok(n == N && sorted && ua[0].slot == 0, "a keeps slot 0 of each, sorted");
	const ge_use *ub = ge_op_uses(g, b, &n);
	ok(n == N && ub[0].slot == 1 && ub[N - 1].op == ge_graph_find(g, "r999"),
	   "b gained slot 1 of each, in node order");
	ed[0] = (ge_input_edit){ge_graph_find(g, "r1"), 0, {b, 0}};
	ed[1] = (ge_input_edit){ge_graph_find(g, "r0"), 5, {b, 0}};
	ok(ge_graph_set_inputs(g, ed, 2, NULL) == GE_EINVAL,
	   "a bad slot fails the whole batch");
	ok(ge_op_input(g, ge_graph_find(g, "r1"), 0).op == a,
	   "  and nothing changed");
	ge_graph_free(g);
}

static void test_merge_fields(void)
{
	ge_graph *a = try_parse("node { name: 'x' op: 'NoOp' }\n"
				"library { function { signature { name: 'f' } } }\n");
	ge_graph *b = try_parse("node { name: 'y' op: 'NoOp' }\n"
				"library { function { signature { name: 'f' } }\n"
				"          function { signature { name: 'g' } }\n"
				"          gradient { function_name: 'g' gradient_func: 'f' } }\n"
				"versions { producer: 42 }\n");
	ge_graph_merge_fields(a, b);
	ge_buf out = GE_BUF_INIT;
	ge_serialize(a, GE_FMT_GRAPHDEF_TEXT, &out, NULL);
	const char *t = (const char *)out.data;
	const char *f1 = strstr(t, "name: \"f\"");
	ok(f1 && !strstr(f1 + 1, "name: \"f\""), "f defined once");
	ok(strstr(t, "name: \"g\"") != NULL, "g merged in");
	ok(strstr(t, "gradient_func: \"f\"") != NULL, "g's gradient merged in");
	ok(strstr(t, "producer: 42") != NULL, "versions taken when missing");
	ge_buf_free(&out);
	ge_graph_free(a);
	ge_graph_free(b);
}

/* ge_graph_mark_now / ge_graph_delta_since: what a recipe's run did */
static void test_mark_delta(void)
{
	ge_graph *g = try_parse(graphdef);
	ge_graph_mark m;
	ge_graph_delta d;
	ge_error err;
	ge_graph_mark_now(g, &m);
	ge_graph_delta_since(g, &m, &d);
	ok(!d.edited && !d.added && !d.removed && !d.changed,
	   "no edit: an empty delta");
	ge_op_set_device(g, F(g, "e"), "/cpu:0");
	ge_graph_add_op(g, "n1", "NoOp", NULL);
	ge_graph_add_op(g, "n2", "NoOp", NULL);
	ge_graph_remove_op(g, F(g, "n2"), 0, &err);
	ge_graph_remove_op(g, F(g, "e"), 0, &err);
	ge_graph_delta_since(g, &m, &d);
	ok(d.edited, "edits are seen");
	is_int(1, (long long)d.added, "one op added (one added and removed)");
	is_int(1, (long long)d.removed, "one op removed");
	is_int(0, (long long)d.changed, "a changed op removed is not changed");
	/* from a new mark: an attr set is a change */
	ge_graph_mark_now(g, &m);
	ge_op_remove_attr(g, F(g, "c"), "T");
	ge_graph_delta_since(g, &m, &d);
	ok(d.edited && !d.added && !d.removed, "an attr removed is an edit");
	is_int(1, (long long)d.changed, "of one op");
	ge_graph_free(g);
}

/* ge_op_name_of: the op of a tensor name, an input or "^name:k" */
static void test_op_name_of(void)
{
	static const struct {
		const char *s, *want; /* want NULL: malformed */
	} cases[] = {
		{"a/b", "a/b"},     {"a/b:1", "a/b"}, {"^a/b", "a/b"},
		{"^a/b:12", "a/b"}, {"a:x", "a:x"},   {"", NULL},
		{"^", NULL},        {"a:", NULL},     {"^a:", NULL},
		{":1", NULL},       {"^^a", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t off = 0, len = 0;
		int rc = ge_op_name_of(cases[i].s, strlen(cases[i].s), &off,
				       &len);
		if (!cases[i].want) {
			is_int(-1, rc, "op_name_of: malformed");
			continue;
		}
		is_int(0, rc, "op_name_of: parses");
		ok(len == strlen(cases[i].want) &&
		   !memcmp(cases[i].s + off, cases[i].want, len),
		   "op_name_of: the op's name");
	}
}

/* An op's output dtype read off a type attr's bytes in place (the op's
 * attrs not split) agrees with the decoded AttrValue, whatever the bytes
 * hold: the last member of the oneof counts, unknown fields are skipped,
 * the first of two entries of one key counts. */
static void test_dtype_in_place(void)
{
	static const struct {
		const char *what;
		uint8_t av[8];
		size_t n;
		int want;
	} cases[] = {
		{"type", {0x30, 3}, 2, 3},
		{"i, not a type", {0x18, 5}, 2, 0},
		{"i then type", {0x18, 5, 0x30, 3}, 4, 3},
		{"type then i", {0x30, 3, 0x18, 5}, 4, 0},
		{"type and an unknown field", {0x30, 3, 0xa0, 1, 7}, 5, 3},
		{"type, then type again", {0x30, 3, 0x30, 9}, 4, 9},
		{"two entries, first not a type", {0x18, 5}, 2, 0},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		/* GraphDef {node {name "x" op "Identity" attr {T: av}}} */
		uint8_t b[64], node[48];
		size_t k = 0, n = cases[c].n;
		int twice = c == sizeof cases / sizeof *cases - 1;
		memcpy(node, "\x0a\x01x\x12\x08Identity", 13);
		k = 13;
		for (int e = 0; e < 1 + twice; e++) {
			const uint8_t *av = e ? (const uint8_t *)"\x30\x03" :
						cases[c].av;
			size_t an = e ? 2 : n;
			node[k++] = 0x2a;
			node[k++] = (uint8_t)(5 + an);
			memcpy(node + k, "\x0a\x01T\x12", 4);
			k += 4;
			node[k++] = (uint8_t)an;
			memcpy(node + k, av, an);
			k += an;
		}
		b[0] = 0x0a;
		b[1] = (uint8_t)k;
		memcpy(b + 2, node, k);
		ge_graph *g = NULL;
		ge_error err = {0};
		if (ge_graph_parse_graphdef(b, k + 2, "<dtype>", &g, &err)) {
			ok(0, "dtype in place, %s: parses: %s", cases[c].what,
			   err.msg);
			continue;
		}
		ge_opid x = ge_graph_find(g, "x");
		int in_place = ge_op_output_dtype(g, x, 0);
		(void)ge_op_attr(g, x, "T", NULL); /* splits and decodes */
		int decoded = ge_op_output_dtype(g, x, 0);
		ok(in_place == cases[c].want && decoded == cases[c].want,
		   "dtype in place, %s: %d, decoded %d", cases[c].what, in_place,
		   decoded);
		ge_graph_free(g);
	}
}

int main(void)
{
	test_mark_delta();
	test_merge_fields();
	test_batch_inputs();
	test_structure();
	test_edits();
	test_unique_name();
	test_attrs();
	test_validate();
	test_colocation_rename();
	test_clone_reorder();
	test_op_name_of();
	test_dtype_in_place();
	return tap_done();
}
