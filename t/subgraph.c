/* subgraph.c: SubGraphView (lib/editor/subgraph.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"

static const char *FIXTURE =
	FX_EDITOR_GRAPH
	"node { name: \"k\" op: \"NoOp\" input: \"^foo/bar/e\" }\n";

static void test_init(ge_graph *g)
{
	ge_view v;
	ge_tvec tv = GE_VEC_INIT;

	mkview(&v, g, "foo/c,foo/bar/e,foo/bar/f", "");
	ok(!ge_view_is_empty(&v) && v.graph == g, "a view has its graph");
	is_string("a:0,foo/b:0,foo/d:0", tnames(g, &v.inputs), "inputs");
	is_string("foo/c:0,foo/bar/e:0,foo/bar/f:0", tnames(g, &v.outputs),
		  "outputs");
	is_int(0, v.passthroughs.n, "no passthroughs");
	ge_view_free(&v);

	mkview(&v, g, "foo/bar/f,foo/bar/e,foo/c,foo/bar/e", "");
	is_string("foo/bar/f,foo/bar/e,foo/c", opnames(g, &v.ops),
		  "ops keep the order given (repeats dropped)");
	ge_view_free(&v);

	mkview(&v, g, "foo/bar/e", "a:0,foo/c:0");
	is_string("a:0", tnames(g, &v.passthroughs),
		  "a tensor of the boundary is not a passthrough");
	is_string("foo/c:0,foo/d:0,a:0", tnames(g, &v.inputs),
		  "inputs are the boundary then the passthroughs");
	is_string("foo/bar/e:0,a:0", tnames(g, &v.outputs),
		  "outputs are the boundary then the passthroughs");
	ok(ge_view_is_passthrough(&v, T(g, "a:0")), "is_passthrough");
	ok(!ge_view_is_passthrough(&v, T(g, "foo/c:0")),
	   "is_passthrough of a connected input");
	ge_view_connected_inputs(&v, &tv);
	is_string("foo/c:0,foo/d:0", tnames(g, &tv), "connected_inputs");
	tv.n = 0;
	ge_view_connected_outputs(&v, &tv);
	is_string("foo/bar/e:0", tnames(g, &tv), "connected_outputs");
	tv.n = 0;

	ge_buf b = GE_BUF_INIT;
	ge_view_format(&v, &b);
	const char *nl = strchr((char *)b.data, '\n');
	ok(strncmp((char *)b.data, "SubGraphView (graph=\"", 21) == 0,
	   "format starts with the graph id");
	is_string("** ops[1]:\n  foo/bar/e\n"
		  "** inputs[3]:\n  foo/c:0\n  foo/d:0\n  a:0 *\n"
		  "** outputs[2]:\n  foo/bar/e:0\n  a:0 *\n",
		  nl ? nl + 1 : "", "format: the reference's layout");
	b.len = 0;
	ge_view_summary(&v, &b);
	is_string("view of 1 op (3 inputs, 2 outputs)", (char *)b.data,
		  "summary line");
	ge_view_free(&v);

	/* a view of tensors only */
	mkview(&v, g, "", "a:0,a:0");
	ok(!ge_view_is_empty(&v), "a view of tensors is not empty");
	is_string("a:0,a:0", tnames(g, &v.inputs),
		  "passthrough repeats are kept, one slot each");
	b.len = 0;
	ge_view_format(&v, &b);
	nl = strchr((char *)b.data, '\n');
	is_string("** ops: empty\n** inputs[2]:\n  a:0 *\n  a:0 *\n"
		  "** outputs[2]:\n  a:0 *\n  a:0 *\n", nl ? nl + 1 : "",
		  "format of an empty list");
	ge_view_free(&v);

	ge_error err = {0};
	is_int(GE_OK, ge_view_init(&v, NULL, NULL, 0, NULL, 0, &err),
	       "an empty view");
	ok(ge_view_is_empty(&v), "... is empty");
	b.len = 0;
	ge_view_format(&v, &b);
	is_string("SubGraphView: empty", (char *)b.data, "... and says so");
	b.len = 0;
	ge_view_summary(&v, &b);
	is_string("empty view", (char *)b.data, "... in one line too");
	ge_view_free(&v);
	ge_buf_free(&b);

	ge_opid bogus = 999;
	is_int(GE_EINVAL, ge_view_init(&v, g, &bogus, 1, NULL, 0, &err),
	       "an op that is not in the graph is refused");
	ge_tvec_free(&tv);
}

static void test_remap(ge_graph *g)
{
	ge_view v, w;
	ge_error err = {0};

	mkview(&v, g, "foo/c,foo/bar/e,foo/bar/f", "");
	ge_view_copy(&w, &v);
	int64_t i20[2] = {2, 0};
	is_int(GE_OK, ge_view_remap_inputs(&w, i20, 2, &err), "remap_inputs");
	is_string("foo/d:0,a:0", tnames(g, &w.inputs), "... picks and orders");
	is_string("a:0,foo/b:0,foo/d:0", tnames(g, &v.inputs),
		  "a copy is independent of its source");
	int64_t rep[2] = {0, 0};
	is_int(GE_EINVAL, ge_view_remap_inputs(&w, rep, 2, &err),
	       "remap_inputs refuses repetitions");
	is_string("foo/d:0,a:0", tnames(g, &w.inputs), "... and changes nothing");
	int64_t big[1] = {2};
	is_int(GE_EINVAL, ge_view_remap_inputs(&w, big, 1, &err),
	       "remap_inputs refuses an index out of range");
	int64_t neg[1] = {-1};
	is_int(GE_EINVAL, ge_view_remap_inputs(&w, neg, 1, &err),
	       "remap_inputs refuses a negative index");

	int64_t o110[3] = {1, 1, 0};
	is_int(GE_OK, ge_view_remap_outputs(&w, o110, 3, &err),
	       "remap_outputs allows repetitions");
	is_string("foo/bar/e:0,foo/bar/e:0,foo/c:0", tnames(g, &w.outputs),
		  "... and takes them");
	int64_t o9[1] = {3};
	is_int(GE_EINVAL, ge_view_remap_outputs(&w, o9, 1, &err),
	       "remap_outputs checks the range");
	ge_view_remap_outputs_make_unique(&w);
	is_string("foo/bar/e:0,foo/c:0", tnames(g, &w.outputs),
		  "remap_outputs_make_unique");
	ge_view_remap_default(&w, 1, 0);
	is_string("a:0,foo/b:0,foo/d:0", tnames(g, &w.inputs),
		  "remap_default of the inputs only");
	is_string("foo/bar/e:0,foo/c:0", tnames(g, &w.outputs),
		  "... leaves the outputs");
	ge_view_remap_default(&w, 1, 1);
	is_string("foo/c:0,foo/bar/e:0,foo/bar/f:0", tnames(g, &w.outputs),
		  "remap_default of both");

	int64_t in1[1] = {1}, out2[2] = {2, 2};
	is_int(GE_OK, ge_view_remap(&w, in1, 1, out2, 2, &err), "remap");
	ok(w.inputs.n == 1 && w.outputs.n == 2, "remap does both");
	is_int(GE_EINVAL, ge_view_remap(&w, rep, 2, out2, 2, &err),
	       "remap with a bad input map");
	ok(w.inputs.n == 1 && w.outputs.n == 2, "... changes nothing");
	is_int(GE_OK, ge_view_remap(&w, NULL, 0, NULL, 0, &err),
	       "remap with no maps");
	ok(w.inputs.n == 1 && w.outputs.n == 2, "... changes nothing");
	ge_view_free(&w);

	/* remap_outputs_to_consumers counts data consumers only: foo/c has
	 * 3 data consumers and a control output. */
	ge_view_copy(&w, &v);
	ge_view_remap_outputs_to_consumers(&w);
	is_string("foo/c:0,foo/c:0,foo/c:0,foo/bar/f:0", tnames(g, &w.outputs),
		  "remap_outputs_to_consumers: data consumers, inside or out");
	ge_view_free(&w);
	ge_view_free(&v);

	/* input_index / output_index */
	mkview(&v, g, "foo/c,foo/bar/e,foo/bar/f", "");
	is_int(2, ge_view_input_index(&v, T(g, "foo/d:0"), &err), "input_index");
	is_int(1, ge_view_output_index(&v, T(g, "foo/bar/e:0"), &err),
	       "output_index");
	is_int(GE_ENOTFOUND, ge_view_input_index(&v, T(g, "foo/bar/h:0"), &err),
	       "input_index of a missing tensor");
	ok(strstr(err.msg, "foo/bar/h:0") && strstr(err.msg, "input"),
	   "... says which tensor (decision 11): %s", err.msg);
	is_int(GE_ENOTFOUND, ge_view_output_index(&v, T(g, "a:0"), &err),
	       "output_index of a missing tensor");
	ok(strstr(err.msg, "a:0") && strstr(err.msg, "output"),
	   "... says which tensor: %s", err.msg);

	ge_opid id = GE_NOOP;
	is_int(GE_OK, ge_view_find_op_by_name(&v, "foo/bar/e", &id, &err),
	       "find_op_by_name");
	ok(id == OP(g, "foo/bar/e"), "... finds it");
	is_int(GE_ENOTFOUND, ge_view_find_op_by_name(&v, "a", &id, &err),
	       "find_op_by_name of an op outside the view");

	ge_opvec c = GE_VEC_INIT;
	ge_view_free(&v);
	mkview(&v, g, "foo/c,foo/bar/e", "");
	ge_view_consumers(&v, &c);
	is_string("foo/bar/f,foo/bar/g", opnames(g, &c),
		  "consumers: outside data consumers of the outputs");
	ge_opvec_free(&c);
	ge_view_free(&v);
}

static void test_remove_unused(ge_graph *g)
{
	ge_view v;
	ge_error err = {0};
	mkview(&v, g, "foo/b,foo/c,foo/bar/e,foo/bar/f", "");
	int64_t outs[1] = {1};
	is_int(GE_OK, ge_view_remap_inputs(&v, NULL, 0, &err),
	       "remap_inputs to nothing");
	/* outputs are c:0, e:0, f:0; keep e:0 */
	ge_view_remap_outputs(&v, outs, 1, &err);
	is_string("foo/bar/e:0", tnames(g, &v.outputs), "one output left");
	is_int(GE_OK, ge_view_remove_unused_ops(&v, 1, &err),
	       "remove_unused_ops");
	is_string("foo/b,foo/c,foo/bar/e", opnames(g, &v.ops),
		  "keeps the ops that reach the outputs, in view order");
	ge_view_free(&v);

	mkview(&v, g, "foo/b,foo/c,foo/bar/e,foo/bar/f,foo/bar/g", "");
	is_string("a:0,foo/d:0", tnames(g, &v.inputs), "inputs of a bigger view");
	int64_t ia[1] = {0};
	ge_view_remap_inputs(&v, ia, 1, &err); /* a:0 */
	ge_view_remap_outputs(&v, NULL, 0, &err);
	ge_view_remove_unused_ops(&v, 1, &err);
	is_string("foo/c,foo/bar/e,foo/bar/f,foo/bar/g", opnames(g, &v.ops),
		  "forward from the inputs' consumers, within the view");
	ge_view_free(&v);

	/* control inputs count as use only when asked */
	mkview(&v, g, "foo/c,foo/bar/h", "");
	int64_t ho[1] = {1};
	ge_view_remap_inputs(&v, NULL, 0, &err);
	is_string("foo/c:0,foo/bar/h:0", tnames(g, &v.outputs), "c and h out");
	ge_view_remap_outputs(&v, ho, 1, &err);
	ge_view w;
	ge_view_copy(&w, &v);
	ge_view_remove_unused_ops(&w, 1, &err);
	is_string("foo/c,foo/bar/h", opnames(g, &w.ops),
		  "a control input is used when control_inputs is set");
	ge_view_free(&w);
	ge_view_remove_unused_ops(&v, 0, &err);
	is_string("foo/bar/h", opnames(g, &v.ops),
		  "... and unused otherwise");
	ge_view_free(&v);
}

static void test_make_view(ge_graph *g)
{
	ge_view v;
	ge_error err = {0};
	ge_sel_arg args[2] = {
		{GE_SEL_REGEX, "^foo/bar/[ef]$", NULL, 0, NULL, 0},
		{GE_SEL_REGEX, "(?#ts)^a:0$", NULL, 0, NULL, 0},
	};
	is_int(GE_OK, ge_make_view(g, args, 2, NULL, &v, &err), "make_view");
	is_string("foo/bar/e,foo/bar/f", opnames(g, &v.ops),
		  "ops from a plain regex");
	is_string("a:0", tnames(g, &v.passthroughs),
		  "passthroughs from a (?#ts) regex");
	ge_view_free(&v);

	is_int(GE_OK, ge_make_view_from_scope(g, "foo/bar", &v, &err),
	       "make_view_from_scope");
	is_string("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", opnames(g, &v.ops),
		  "... takes the ops of the scope");
	is_string("foo/c:0,foo/d:0,a:0", tnames(g, &v.inputs),
		  "... with their boundary");
	ge_view_free(&v);
}

static void test_stale(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_view v;
	ge_error err = {0};
	mkview(&v, g, "foo/bar/h,k", "");
	is_int(GE_OK, ge_view_check(&v, &err), "a fresh view checks");
	uint64_t v0 = ge_graph_version(g);
	ge_graph_remove_op(g, OP(g, "k"), 1, &err);
	ok(ge_graph_version(g) > v0, "removing an op bumps the version");
	is_int(GE_EINVAL, ge_view_check(&v, &err),
	       "a view notices its op was removed (decision 12)");
	ok(strstr(err.msg, "'k'") && strstr(err.msg, "removed"),
	   "... and says which: %s", err.msg);
	ge_view_free(&v);
	/* a list of live ops with a removed one last: the one-pass check
	 * fails, and the op-by-op one names it */
	ge_opid ids[] = {OP(g, "a"), OP(g, "foo/bar/h"), GE_NOOP};
	for (ge_opid i = 0; i < ge_graph_capacity(g); i++)
		if (!ge_op_alive(g, i))
			ids[2] = i;
	is_int(GE_EINVAL, ge_view_init(&v, g, ids, 3, NULL, 0, &err),
	       "a view of live ops and a removed one is refused");
	ok(strstr(err.msg, "'k'") && strstr(err.msg, "removed"),
	   "... naming the removed op: %s", err.msg);
	ge_graph_free(g);
}

int main(void)
{
	ge_graph *g = parse(FIXTURE);
	test_init(g);
	test_remap(g);
	test_remove_unused(g);
	test_make_view(g);
	test_stale();
	ge_graph_free(g);
	ge_regex_cache_clear();
	return tap_done();
}
