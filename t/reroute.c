/* reroute.c: graph_editor's reroute module (lib/editor/reroute.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/reroute.h"
#include "editor/select.h"
#include "editor/subgraph.h"

#define DIM3 "dim { size: 3 }"
#define CONSTS(n, dt, d) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: " dt " } } " FX_SHAPE(d) "}\n"
#define ADDS(n, x, y, d) \
	"node { name: \"" n "\" op: \"Add\" input: \"" x "\" input: \"" y \
	"\" attr { key: \"T\" value { type: DT_FLOAT } } " FX_SHAPE(d) "}\n"
#define ID(n, x) \
	"node { name: \"" n "\" op: \"Identity\" input: \"" x "\" " \
	"attr { key: \"T\" value { type: DT_FLOAT } } " FX_SHAPE(FX_DIM2) "}\n"

/* graph_editor's reroute test graph, plus a few extra consumers. */
static const char *FIXTURE =
	CONSTS("a0", "DT_FLOAT", FX_DIM2)
	CONSTS("b0", "DT_FLOAT", FX_DIM2)
	ADDS("c0", "a0", "b0", FX_DIM2)
	CONSTS("a1", "DT_FLOAT", FX_DIM2)
	CONSTS("b1", "DT_FLOAT", FX_DIM2)
	ADDS("c1", "a1", "b1", FX_DIM2)
	CONSTS("a2", "DT_FLOAT", DIM3)
	CONSTS("b2", "DT_FLOAT", DIM3)
	ADDS("c2", "a2", "b2", DIM3)
	ADDS("m", "a0", "a1", FX_DIM2)       /* reads both a0 and a1 */
	ID("d0", "c0")
	ID("d1", "c1")
	ID("e1", "c1")
	CONSTS("i", "DT_INT32", FX_DIM2)
	"node { name: \"u\" op: \"Const\" "
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"; /* no shape */

static void test_ts(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_tref ab0[2] = {T(g, "a0:0"), T(g, "b0:0")};
	ge_tref ab1[2] = {T(g, "a1:0"), T(g, "b1:0")};

	is_int(6, ge_swap_ts(g, ab0, 2, ab1, 2, NULL, NULL, &err),
	       "swap_ts counts the slots changed");
	is_string("a1:0,b1:0", ins(g, "c0"), "c0 reads the second pair");
	is_string("a0:0,b0:0", ins(g, "c1"), "c1 reads the first pair");
	is_string("a1:0,a0:0", ins(g, "m"),
		  "an op reading both tensors of a pair gets them swapped");
	ge_graph_free(g);

	g = parse(FIXTURE);
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_EINVAL, ge_reroute_ts(g, ab0, 2, ab1 + 1, 1, NULL, NULL, &err),
	       "reroute_ts with lists of different lengths fails");
	ok(strstr(err.msg, "2") && strstr(err.msg, "1"),
	   "... giving both lengths: %s", err.msg);
	is_int(v0, ge_graph_version(g), "... and changes nothing");

	/* decision 13: the consumers of ts1 now read ts0 */
	ge_tref a0 = T(g, "a0:0"), a1 = T(g, "a1:0");
	is_int(2, ge_reroute_ts(g, &a0, 1, &a1, 1, NULL, NULL, &err),
	       "reroute_ts(a0, a1)");
	is_string("a0:0,b1:0", ins(g, "c1"), "the consumers of a1 read a0");
	is_string("a0:0,a0:0", ins(g, "m"), "... in every slot");
	is_string("a0:0,b0:0", ins(g, "c0"), "a0's own consumers are unchanged");
	is_int(0, ge_tensor_consumers(g, a1, NULL, 0), "a1 has no consumers");
	ok(ge_graph_version(g) > v0, "rerouting bumps the version (decision 12)");

	is_int(0, ge_reroute_ts(g, &a0, 1, &a0, 1, NULL, NULL, &err),
	       "an identical pair is skipped");
	ge_graph_free(g);

	g = parse(FIXTURE);
	ge_tref two_a0[2] = {T(g, "a0:0"), T(g, "a0:0")};
	ge_reroute_ts(g, two_a0, 2, ab1, 2, NULL, NULL, &err);
	is_string("a0:0,a0:0", ins(g, "c1"), "a repeated source tensor");
	ge_graph_free(g);

	/* consumers are computed before any change: a0->b0 and b0->a0 at
	 * once moves each set once. */
	g = parse(FIXTURE);
	ge_tref x[2] = {T(g, "b0:0"), T(g, "a0:0")};
	ge_tref y[2] = {T(g, "a0:0"), T(g, "b0:0")};
	is_int(3, ge_reroute_ts(g, x, 2, y, 2, NULL, NULL, &err),
	       "rerouting a chain of pairs");
	is_string("b0:0,a0:0", ins(g, "c0"),
		  "consumers are taken from the graph before the change");
	ge_graph_free(g);

	/* compatibility */
	g = parse(FIXTURE);
	v0 = ge_graph_version(g);
	ge_tref a2 = T(g, "a2:0"), i = T(g, "i:0"), u = T(g, "u:0");
	a0 = T(g, "a0:0");
	is_int(GE_EINVAL, ge_reroute_ts(g, &a0, 1, &a2, 1, NULL, NULL, &err),
	       "incompatible static shapes are refused");
	ok(strstr(err.msg, "a0:0") && strstr(err.msg, "a2:0") &&
	   strstr(err.msg, "shape"), "... naming both: %s", err.msg);
	is_int(GE_EINVAL, ge_reroute_ts(g, &a0, 1, &i, 1, NULL, NULL, &err),
	       "incompatible dtypes are refused");
	ok(strstr(err.msg, "float32") && strstr(err.msg, "int32"),
	   "... naming the dtypes: %s", err.msg);
	is_int(v0, ge_graph_version(g), "refusals change nothing");
	is_int(0, ge_reroute_ts(g, &a0, 1, &u, 1, NULL, NULL, &err),
	       "an unknown shape is compatible");
	ge_graph_free(g);

	/* can_modify / cannot_modify */
	g = parse(FIXTURE);
	a0 = T(g, "a0:0");
	a1 = T(g, "a1:0");
	ge_opset can, cannot;
	ge_opset_init(&can, g);
	ge_opset_init(&cannot, g);
	ge_opset_add(&can, OP(g, "c1"));
	ge_opset_add(&cannot, OP(g, "c1"));
	is_int(1, ge_reroute_ts(g, &a0, 1, &a1, 1, &can, NULL, &err),
	       "can_modify limits the change");
	is_string("a0:0,b1:0", ins(g, "c1"), "c1 changed");
	is_string("a0:0,a1:0", ins(g, "m"), "m did not");
	ge_tref b0 = T(g, "b0:0"), b1 = T(g, "b1:0");
	is_int(0, ge_reroute_ts(g, &b0, 1, &b1, 1, NULL, &cannot, &err),
	       "cannot_modify protects an op");
	is_string("a0:0,b1:0", ins(g, "c1"), "c1 kept b1");
	ge_opset_free(&can);
	ge_opset_free(&cannot);
	ge_graph_free(g);
}

/* can_modify / cannot_modify as lists of ops (what ge.reroute_ts passes):
 * the same rules as the op sets, from unsorted lists with repeats. */
static void test_lists(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_tref a0 = T(g, "a0:0"), a1 = T(g, "a1:0");
	ge_tref b0 = T(g, "b0:0"), b1 = T(g, "b1:0");
	ge_opvec can = GE_VEC_INIT, cannot = GE_VEC_INIT;
	ge_opvec_push(&can, OP(g, "m"));
	ge_opvec_push(&can, OP(g, "c1"));
	ge_opvec_push(&can, OP(g, "m"));
	ge_opvec_push(&cannot, OP(g, "m"));
	is_int(1, ge_reroute_ts_lists(g, &a0, 1, &a1, 1, GE_REROUTE_A2B, &can,
				      &cannot, &err),
	       "lists: can_modify less cannot_modify");
	is_string("a0:0,b1:0", ins(g, "c1"), "lists: c1 changed");
	is_string("a0:0,a1:0", ins(g, "m"), "lists: m, in both, did not");
	is_int(1, ge_reroute_ts_lists(g, &a0, 1, &a1, 1, GE_REROUTE_A2B, &can,
				      NULL, &err),
	       "lists: an unsorted can_modify with a repeat");
	is_string("a0:0,a0:0", ins(g, "m"), "lists: m changed");
	cannot.n = 0;
	ge_opvec_push(&cannot, OP(g, "d1"));
	ge_opvec_push(&cannot, OP(g, "c1"));
	is_int(0, ge_reroute_ts_lists(g, &b0, 1, &b1, 1, GE_REROUTE_A2B, NULL,
				      &cannot, &err),
	       "lists: cannot_modify protects an op");
	is_string("a0:0,b1:0", ins(g, "c1"), "lists: c1 kept b1");
	can.n = 0;
	is_int(0, ge_reroute_ts_lists(g, &b0, 1, &b1, 1, GE_REROUTE_A2B, &can,
				      NULL, &err),
	       "lists: an empty can_modify changes nothing");
	is_int(1, ge_reroute_ts_lists(g, &b0, 1, &b1, 1, GE_REROUTE_A2B, NULL,
				      NULL, &err),
	       "lists: none given, every consumer moves");
	ge_graph_free(g);

	g = parse(FIXTURE);
	ge_tref ab0[2] = {T(g, "a0:0"), T(g, "b0:0")};
	ge_tref ab1[2] = {T(g, "a1:0"), T(g, "b1:0")};
	can.n = 0;
	ge_opvec_push(&can, OP(g, "c1"));
	ge_opvec_push(&can, OP(g, "c0"));
	is_int(4, ge_reroute_ts_lists(g, ab0, 2, ab1, 2, GE_REROUTE_SWAP, &can,
				      NULL, &err),
	       "lists: swap within can_modify");
	is_string("a1:0,b1:0", ins(g, "c0"), "lists: c0 swapped");
	is_string("a0:0,a1:0", ins(g, "m"), "lists: m left out");
	is_int(GE_EINVAL, ge_reroute_ts_lists(g, ab0, 2, ab1, 1, GE_REROUTE_A2B,
					      &can, NULL, &err),
	       "lists: lists of different lengths still fail");
	ge_opvec_free(&can);
	ge_opvec_free(&cannot);
	ge_graph_free(g);
}

static void test_views(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view v0, v1;

	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1", "");
	is_int(GE_OK, ge_swap_inputs(&v0, &v1, &err) >= 0 ? GE_OK : -1,
	       "swap_inputs");
	is_string("a1:0,b1:0", ins(g, "c0"), "c0 reads c1's inputs");
	is_string("a0:0,b0:0", ins(g, "c1"), "c1 reads c0's inputs");
	is_string("a0:0,a1:0", ins(g, "m"),
		  "an outside consumer of the inputs is not touched");
	is_string("a1:0,b1:0", tnames(g, &v0.inputs),
		  "the first view's inputs are updated in place");
	is_string("a0:0,b0:0", tnames(g, &v1.inputs), "and the second's");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1", "");
	ok(ge_reroute_inputs(&v0, &v1, &err) >= 0, "reroute_inputs");
	is_string("a0:0,b0:0", ins(g, "c1"), "the second view reads the first's inputs");
	is_string("a0:0,b0:0", ins(g, "c0"), "the first view is unchanged");
	is_string("a0:0,a1:0", ins(g, "m"), "only consumers inside the views move");
	is_string("a0:0,b0:0", tnames(g, &v1.inputs), "inputs copied in place");
	is_string("a0:0,b0:0", tnames(g, &v0.inputs), "first view's inputs kept");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	/* passthroughs: their consumers may move, and the views' passthrough
	 * lists and passthrough outputs follow. */
	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "a2:0");
	mkview(&v1, g, "c1", "b2:0");
	ok(ge_swap_inputs(&v0, &v1, &err) >= 0, "swap_inputs with passthroughs");
	is_string("b2:0,a2:0", ins(g, "c2"),
		  "consumers of passthroughs are rerouted");
	is_string("a1:0,b1:0,b2:0", tnames(g, &v0.inputs), "inputs swapped");
	is_string("b2:0", tnames(g, &v0.passthroughs), "passthroughs swapped");
	is_string("c0:0,b2:0", tnames(g, &v0.outputs),
		  "passthrough outputs follow the swap");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	/* outputs: only consumers outside both views move */
	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1,d1", "");
	is_string("c1:0,d1:0", tnames(g, &v1.outputs), "c1:0 is also read outside");
	int64_t first[1] = {0};
	ge_view_remap_outputs(&v1, first, 1, &err);
	ok(ge_reroute_outputs(&v0, &v1, &err) >= 0, "reroute_outputs");
	is_string("c0:0", ins(g, "e1"), "an outside consumer now reads the first view");
	is_string("c1:0", ins(g, "d1"), "a consumer inside a view does not move");
	is_string("c0:0", ins(g, "d0"), "the first view's consumers stay");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1", "");
	ok(ge_swap_outputs(&v0, &v1, &err) >= 0, "swap_outputs");
	is_string("c1:0", ins(g, "d0"), "d0 reads c1");
	is_string("c0:0", ins(g, "d1"), "d1 reads c0");
	is_string("c0:0", tnames(g, &v0.outputs), "views are not remapped");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1", "");
	ok(ge_swap_ios(&v0, &v1, &err) >= 0, "swap_ios");
	ok(strcmp(ins(g, "d0"), "c1:0") == 0 &&
	   strcmp(ins(g, "c0"), "a1:0,b1:0") == 0, "swaps outputs and inputs");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g);

	g = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g, "c1", "");
	ok(ge_reroute_ios(&v0, &v1, &err) >= 0, "reroute_ios");
	ok(strcmp(ins(g, "d1"), "c0:0") == 0 && strcmp(ins(g, "e1"), "c0:0") == 0 &&
	   strcmp(ins(g, "c1"), "a0:0,b0:0") == 0 &&
	   strcmp(ins(g, "c0"), "a0:0,b0:0") == 0, "reroutes outputs and inputs");
	ge_view_free(&v0);
	ge_view_free(&v1);

	/* views of different graphs */
	ge_graph *g2 = parse(FIXTURE);
	mkview(&v0, g, "c0", "");
	mkview(&v1, g2, "c1", "");
	is_int(GE_EINVAL, ge_swap_inputs(&v0, &v1, &err),
	       "views of two graphs are refused");
	ge_view_free(&v0);
	ge_view_free(&v1);

	/* a stale view is refused */
	mkview(&v0, g2, "d0", "");
	mkview(&v1, g2, "d1", "");
	ge_graph_remove_op(g2, OP(g2, "d0"), 1, &err);
	is_int(GE_EINVAL, ge_swap_inputs(&v0, &v1, &err),
	       "a view whose op was removed is refused");
	ge_view_free(&v0);
	ge_view_free(&v1);
	ge_graph_free(g2);
	ge_graph_free(g);
}

static void test_control(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_opid c0 = OP(g, "c0");
	ge_opid cops[3] = {OP(g, "a1"), OP(g, "b1"), OP(g, "a2")};
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_OK, ge_add_control_inputs(g, c0, cops, 3, &err),
	       "add_control_inputs");
	is_string("a1,b1,a2", cins(g, "c0"), "appended in order");
	ok(ge_graph_version(g) > v0, "bumps the version");
	size_t n;
	const ge_opid *co = ge_op_control_outputs(g, cops[0], &n);
	ok(n == 1 && co[0] == c0, "control outputs notice");
	is_int(GE_EINVAL, ge_add_control_inputs(g, c0, cops + 1, 1, &err),
	       "adding an existing control input fails");
	ok(strstr(err.msg, "b1") && strstr(err.msg, "already"),
	   "... saying so: %s", err.msg);
	ge_opid b0 = OP(g, "b0");
	ge_opid twice[2] = {b0, b0};
	is_int(GE_EINVAL, ge_add_control_inputs(g, c0, twice, 2, &err),
	       "adding one op twice fails");
	is_string("a1,b1,a2", cins(g, "c0"), "... and adds nothing");

	is_int(GE_OK, ge_remove_control_inputs(g, c0, cops + 1, 1, &err),
	       "remove_control_inputs");
	is_string("a1,a2", cins(g, "c0"), "the others keep their order");
	ge_opid rm[2] = {cops[0], b0};
	is_int(GE_EINVAL, ge_remove_control_inputs(g, c0, rm, 2, &err),
	       "removing a non-control-input fails");
	ok(strstr(err.msg, "b0") && strstr(err.msg, "c0"),
	   "... naming both: %s", err.msg);
	is_string("a1,a2", cins(g, "c0"), "... and removes nothing");
	ge_graph_free(g);
}

/* One rule for what names a tensor: the C API and the Lua API refuse a
 * missing output index with the same message (t/lua-reroute.lua). */
static void test_tensor_rule(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_tref c0_7 = {ge_graph_find(g, "c0"), 7}, a1 = T(g, "a1:0");
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_ENOTFOUND, ge_reroute_ts(g, &c0_7, 1, &a1, 1, NULL, NULL, &err),
	       "reroute_ts from a missing output index fails");
	is_string("no tensor 'c0:7' (op 'c0' has 1 outputs)", err.msg,
		  "... with the message Lua gives");
	is_int(v0, ge_graph_version(g), "... and changes nothing");
	is_int(GE_ENOTFOUND, ge_reroute_ts(g, &a1, 1, &c0_7, 1, NULL, NULL, &err),
	       "so does rerouting to it");
	ge_tref t;
	is_int(GE_ENOTFOUND, ge_graph_resolve_tensor(g, "c0:7", 0, &t, &err),
	       "resolving the name fails the same way");
	is_string("no tensor 'c0:7' (op 'c0' has 1 outputs)", err.msg,
		  "... with the same message");
	is_int(GE_EINVAL, ge_graph_resolve_tensor(g, "^c0", 0, &t, &err),
	       "a control input is not a tensor: %s", err.msg);
	is_int(GE_OK, ge_graph_resolve_tensor(g, "^c0", 1, &t, &err),
	       "... unless control inputs are allowed");
	is_int(GE_ENOTFOUND, ge_graph_resolve_tensor(g, "zz:1", 0, &t, &err),
	       "no such op: %s", err.msg);
	is_int(GE_EINVAL, ge_graph_resolve_tensor(g, "c0:", 0, &t, &err),
	       "malformed: %s", err.msg);
	ge_buf b = GE_BUF_INIT;
	ge_tensor_put(g, T(g, "c0:0"), 1, &b);
	ge_buf_adds(&b, " ");
	ge_tensor_put(g, (ge_tref){ge_graph_find(g, "c0"), 12}, 1, &b);
	ge_buf_adds(&b, " ");
	ge_tensor_put(g, (ge_tref){ge_graph_find(g, "c0"), GE_CONTROL}, 1, &b);
	ge_buf_adds(&b, " ");
	ge_tensor_put(g, T(g, "c0:0"), 0, &b);
	is_string("c0 c0:12 ^c0 c0:0", (const char *)b.data,
		  "one formatter, input form and tensor form");
	ge_buf_free(&b);
	ge_graph_free(g);
}

int main(void)
{
	test_ts();
	test_tensor_rule();
	test_lists();
	test_views();
	test_control();
	ge_regex_cache_clear();
	return tap_done();
}
