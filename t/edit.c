/* edit.c: graph_editor's edit module (lib/editor/edit.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "editor/edit.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* graph_editor's edit test graph, plus x, y, z for connect. */
#define FIXTURE_TXT \
	FX_EDITOR_GRAPH \
	FX_CONST("x") \
	FX_CONST("y") \
	FX_ADD("z", "x", "y", "")
static const char *FIXTURE = FIXTURE_TXT;

static int shape_rank(const ge_graph *g, ge_opid op, int64_t *d0)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "shape", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    !v->shape || v->shape->unknown_rank)
		return -1;
	if (v->shape->n_dim)
		*d0 = v->shape->dim[0]->size;
	return (int)v->shape->n_dim;
}

static void test_control(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view v;

	mkview(&v, g, "foo/c,foo/bar/h", "");
	is_int(GE_OK, ge_detach_control_inputs(&v, &err),
	       "detach_control_inputs");
	is_string("foo/c", cins(g, "foo/bar/h"),
		  "a control input from inside the view stays");
	ge_view_free(&v);
	mkview(&v, g, "foo/bar/h", "");
	uint64_t v0 = ge_graph_version(g);
	ge_detach_control_inputs(&v, &err);
	is_string("", cins(g, "foo/bar/h"), "one from outside goes");
	ok(ge_graph_version(g) > v0, "and the version moves (decision 12)");
	ge_view_free(&v);
	ge_graph_free(g);

	g = parse(FIXTURE);
	mkview(&v, g, "foo/c,foo/bar/h", "");
	is_int(GE_OK, ge_detach_control_outputs(&v, &err),
	       "detach_control_outputs");
	is_string("foo/c", cins(g, "foo/bar/h"),
		  "a control output inside the view stays");
	ge_view_free(&v);
	mkview(&v, g, "foo/c", "");
	ge_detach_control_outputs(&v, &err);
	is_string("", cins(g, "foo/bar/h"), "one to outside goes");
	size_t n;
	ge_op_control_outputs(g, OP(g, "foo/c"), &n);
	is_int(0, n, "control outputs notice");
	ge_view_free(&v);
	ge_graph_free(g);
}

static void test_detach_inputs(void)
{
	ge_graph *g = parse(FIXTURE_TXT FX_CONST("foo/geph__b_0"));
	ge_error err = {0};
	ge_view v;
	ge_opvec phs = GE_VEC_INIT;
	int64_t d0 = 0;
	int dt = 0;

	mkview(&v, g, "foo/c,a", "");
	is_string("foo/b:0", tnames(g, &v.inputs), "the view reads foo/b");
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_OK, ge_detach_inputs(&v, 0, &phs, &err), "detach_inputs");
	is_string("foo/geph__b_0_1", opnames(g, &phs),
		  "one placeholder per input, named after it, uniquified");
	is_string("a:0,foo/geph__b_0_1:0", ins(g, "foo/c"),
		  "the view's ops read the placeholder");
	is_string("foo/geph__b_0_1:0", tnames(g, &v.inputs),
		  "the view's inputs are updated in place");
	is_int(0, ge_tensor_consumers(g, T(g, "foo/b:0"), NULL, 0),
	       "the old input lost its consumer");
	is_string("Placeholder", phs.n ? ge_op_type(g, phs.v[0]) : "",
		  "a Placeholder");
	ok(phs.n && ge_op_attr_type(g, phs.v[0], "dtype", &dt) == 0 && dt == 1,
	   "with the input's dtype");
	ok(phs.n && shape_rank(g, phs.v[0], &d0) == 1 && d0 == 2,
	   "and its static shape (decision 4)");
	ok(ge_graph_version(g) > v0, "the version moved");
	ge_view_free(&v);
	ge_opvec_free(&phs);

	/* control inputs too */
	mkview(&v, g, "foo/bar/h", "");
	is_int(GE_OK, ge_detach_inputs(&v, 1, &phs, &err),
	       "detach_inputs with control inputs");
	is_string("foo/bar/geph__f_0:0,foo/bar/geph__g_0:0",
		  ins(g, "foo/bar/h"), "data inputs replaced");
	is_string("", cins(g, "foo/bar/h"), "control inputs detached");
	ge_view_free(&v);
	ge_opvec_free(&phs);
	ge_graph_free(g);
}

static void test_detach_outputs(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view v, w;
	ge_opvec phs = GE_VEC_INIT;
	int64_t d0 = 0;

	mkview(&v, g, "foo/c,a", "");
	is_string("foo/c:0,a:0", tnames(g, &v.outputs), "outputs c:0 and a:0");
	int64_t rev[2] = {1, 0};
	ge_view_remap_outputs(&v, rev, 2, &err);
	is_int(GE_OK, ge_detach_outputs(&v, 1, &w, &phs, &err),
	       "detach_outputs");
	is_string("geph__a_0,foo/geph__c_0", opnames(g, &phs),
		  "one placeholder per output, in output order");
	is_string("foo/geph__c_0:0,geph__a_0:0", ins(g, "foo/bar/g"),
		  "each consumer reads the placeholder of its tensor (decision 4)");
	is_string("foo/geph__c_0:0,foo/d:0", ins(g, "foo/bar/e"),
		  "outside consumers read placeholders");
	is_string("a:0,foo/b:0", ins(g, "foo/c"),
		  "consumers inside the view keep their inputs");
	is_string("", cins(g, "foo/bar/h"), "control outputs detached");
	is_string("a:0,foo/c:0", tnames(g, &w.outputs),
		  "the result view lists the outputs that had consumers");
	ok(phs.n == 2 && shape_rank(g, phs.v[1], &d0) == 1 && d0 == 2,
	   "output placeholders carry the shape");
	ge_view_free(&v);
	ge_view_free(&w);
	ge_opvec_free(&phs);

	/* an output without consumers is left out */
	mkview(&v, g, "foo/bar/e", "");
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_OK, ge_detach_outputs(&v, 0, &w, &phs, &err),
	       "detach_outputs of an unread output");
	is_int(0, w.outputs.n, "no output left");
	is_int(0, phs.n, "no placeholder");
	is_int(v0, ge_graph_version(g), "the graph is unchanged");
	ge_view_free(&v);
	ge_view_free(&w);
	ge_opvec_free(&phs);
	ge_graph_free(g);
}

static void test_detach(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view v;
	ge_opvec in = GE_VEC_INIT, out = GE_VEC_INIT;

	mkview(&v, g, "foo/c,a", "");
	is_int(GE_OK, ge_detach(&v, 1, 1, &in, &out, &err), "detach");
	is_string("a:0,foo/geph__b_0:0", ins(g, "foo/c"),
		  "foo/c reads a and the placeholder for b");
	is_string("foo/geph__b_0", opnames(g, &in), "input placeholders");
	is_string("foo/geph__c_0,geph__a_0", opnames(g, &out),
		  "output placeholders");
	is_string("foo/geph__c_0:0,geph__a_0:0", ins(g, "foo/bar/g"),
		  "outside consumers detached");
	is_string("", cins(g, "foo/bar/h"), "control output detached");
	ge_view_free(&v);
	ge_opvec_free(&in);
	ge_opvec_free(&out);
	ge_graph_free(g);
}

static void test_connect(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view a, b;
	int64_t first[1] = {0}, second[1] = {1};

	mkview(&a, g, "x,y,z", "");
	mkview(&b, g, "foo/bar/e", "");
	ge_view_remap_inputs(&b, first, 1, &err);
	is_int(GE_OK, ge_connect(&a, &b, 0, &err), "connect");
	is_string("z:0,foo/d:0", ins(g, "foo/bar/e"),
		  "the second view reads the first's outputs");
	is_string("z:0", tnames(g, &b.inputs), "the second view is updated");
	ge_view_free(&b);

	mkview(&b, g, "foo/bar/e", "");
	is_int(GE_EINVAL, ge_connect(&a, &b, 0, &err),
	       "connect with different counts fails");
	ge_view_free(&b);

	mkview(&b, g, "foo/bar/f", "");
	ge_view_remap_inputs(&b, second, 1, &err);
	is_int(GE_OK, ge_connect(&a, &b, 1, &err), "connect, disconnect first");
	is_string("foo/c:0,z:0", ins(g, "foo/bar/f"), "f reads z");
	is_string("geph__z_0:0,foo/d:0", ins(g, "foo/bar/e"),
		  "z's old consumer was detached");
	ge_view_free(&a);
	ge_view_free(&b);
	ge_graph_free(g);
}

static void test_bypass(void)
{
	ge_graph *g = parse(FIXTURE);
	ge_error err = {0};
	ge_view v;
	ge_opvec phs = GE_VEC_INIT;
	int64_t first[1] = {0};

	mkview(&v, g, "foo/bar/f", "");
	ge_view_remap_inputs(&v, first, 1, &err);
	is_int(GE_OK, ge_bypass(&v, &phs, &err), "bypass");
	is_string("foo/c:0,foo/bar/g:0", ins(g, "foo/bar/h"),
		  "the consumer of the output reads the input");
	is_string("foo/geph__c_0:0,foo/d:0", ins(g, "foo/bar/f"),
		  "the bypassed op is fed by a placeholder");
	is_string("foo/geph__c_0", opnames(g, &phs), "the placeholder");
	ge_view_free(&v);
	ge_opvec_free(&phs);

	mkview(&v, g, "foo/c", "");
	uint64_t v0 = ge_graph_version(g);
	is_int(GE_EINVAL, ge_bypass(&v, &phs, &err),
	       "bypass with 2 inputs and 1 output fails");
	is_int(v0, ge_graph_version(g), "... before changing anything");
	ge_view_free(&v);
	ge_opvec_free(&phs);
	ge_graph_free(g);
}

int main(void)
{
	test_control();
	test_detach_inputs();
	test_detach_outputs();
	test_detach();
	test_connect();
	test_bypass();
	ge_regex_cache_clear();
	return tap_done();
}
