/* template.c: rewrite templates instantiated by the rewrite driver
 * (lib/match/template.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "match/match.h"
#include "formats/model.h"
#include "graph/opattrs.h"
#include "match/template.h"

#define T_F32 "attr { key: \"T\" value { type: DT_FLOAT } } "
#define PH(n) \
	"node { name: \"" n "\" op: \"Placeholder\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
#define CONST(n) \
	"node { name: \"" n "\" op: \"Const\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { dim { size: 1 } } float_val: 1 } } } }\n"
#define OP1(n, type, a, attrs) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" " attrs \
	"}\n"
#define OP2(n, type, a, b, attrs) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" input: \"" \
	b "\" " attrs "}\n"
#define CONV(n, x, w) \
	"node { name: \"" n "\" op: \"Conv2D\" input: \"" x "\" input: \"" \
	w "\" device: \"/cpu:0\" " T_F32 \
	"attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } " \
	"attr { key: \"padding\" value { s: \"SAME\" } } }\n"

/* Two conv blocks; the second one's BiasAdd says NCHW. */
#define GRAPH \
	PH("in") CONST("w") CONST("b") \
	CONV("c1", "in", "w") OP2("ba1", "BiasAdd", "c1", "b", T_F32) \
	OP1("r1", "Relu", "ba1", T_F32) \
	CONV("c2", "r1", "w") \
	OP2("ba2", "BiasAdd", "c2", "b", T_F32 \
	    "attr { key: \"data_format\" value { s: \"NCHW\" } } ") \
	OP1("r2", "Relu", "ba2", T_F32) OP1("out", "Identity", "r2", T_F32)

static ge_pat *op1(const char *types, ge_pat *a, const char *cap)
{
	ge_pat *p = ge_pat_op(types, NULL);
	ge_pat_add_operand(p, a, NULL);
	ge_pat_free(a);
	if (cap)
		ge_pat_set_capture(p, cap, NULL);
	return p;
}

static ge_pat *op2(const char *types, ge_pat *a, ge_pat *b, const char *cap)
{
	ge_pat *p = op1(types, a, cap);
	ge_pat_add_operand(p, b, NULL);
	ge_pat_free(b);
	return p;
}

static ge_pat *any(const char *cap)
{
	ge_pat *p = ge_pat_any();
	ge_pat_set_capture(p, cap, NULL);
	return p;
}

/* Relu(BiasAdd(Conv2D(x, w):conv, b):bias):act */
static ge_pat *pattern(void)
{
	return op1("Relu",
		   op2("BiasAdd", op2("Conv2D", any("x"), any("w"), "conv"),
		       any("b"), "bias"),
		   "act");
}

static const uint8_t ONE[] = {0x18, 0x01}; /* AttrValue{i: 1} */

static ge_tmpl *fuse_template(ge_pat *p, ge_error *err)
{
	ge_tmpl *t = ge_tmpl_new(p);
	const char *same[] = {"conv.T", "bias.T", "act.T"};
	const char *fmt[] = {"conv.data_format", "bias.data_format"};
	ge_tmpl_elem ops[] = {{GE_TMPL_LIT, "BiasAdd"},
			      {GE_TMPL_TYPE_OF, "act"}};
	ge_tmpl_elem targs[] = {{GE_TMPL_ATTR_OF, "conv.T"}};
	int rc = ge_tmpl_require_same(t, same, 3, err);
	rc = rc ? rc : ge_tmpl_require_same(t, fmt, 2, err);
	rc = rc ? rc : ge_tmpl_require_no_control_outputs(t, "conv", err);
	int f = rc ? -1 : ge_tmpl_add_op(t, "fused", "_FusedConv2D", NULL, err);
	rc = f < 0 ? f : GE_OK;
	rc = rc ? rc : ge_tmpl_op_name(t, f, "act", NULL, err);
	rc = rc ? rc : ge_tmpl_op_device(t, f, NULL, "conv", err);
	rc = rc ? rc : ge_tmpl_op_input(t, f, "x", err);
	rc = rc ? rc : ge_tmpl_op_input(t, f, "w", err);
	rc = rc ? rc : ge_tmpl_op_input(t, f, "b", err);
	rc = rc ? rc : ge_tmpl_op_attr_copy(t, f, "T", "conv", err);
	rc = rc ? rc : ge_tmpl_op_attr_copy(t, f, "dilations", "conv", err);
	rc = rc ? rc : ge_tmpl_op_attr_list(t, f, "TArgs", GE_AK_TYPE, targs, 1,
					    err);
	rc = rc ? rc : ge_tmpl_op_attr_list(t, f, "fused_ops", GE_AK_S, ops, 2,
					    err);
	rc = rc ? rc : ge_tmpl_op_attr_raw(t, f, "num_args", ONE, sizeof ONE,
					   err);
	rc = rc ? rc : ge_tmpl_replace(t, "act", "fused", err);
	rc = rc ? rc : ge_tmpl_check(t, err);
	if (rc) {
		ge_tmpl_free(t);
		return NULL;
	}
	return t;
}

static int has_bytes(const ge_graph *g, ge_opid op, const char *attr,
		     const char *want, size_t n)
{
	size_t len;
	const uint8_t *p = ge_op_attr_raw(g, op, attr, &len);
	return p && len == n && !memcmp(p, want, n);
}

static void test_fuse(void)
{
	ge_graph *g = parse(GRAPH);
	ge_pat *p = pattern();
	ge_error err = {0, ""};
	ge_tmpl *t = fuse_template(p, &err);
	ok(t != NULL, "the fuse template builds: %s", err.msg);
	ge_rule rule = {"fuse", p, ge_tmpl_action, t};
	size_t cnt = 0;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, NULL, &cnt, NULL, &err),
	       "rewrite: %s", err.msg);
	is_int(1, (long long)cnt, "one site: the other's data formats differ");
	ge_opid f = ge_graph_find(g, "r1");
	ok(f != GE_NOOP && !strcmp(ge_op_type(g, f), "_FusedConv2D"),
	   "the fused op took the Relu's name");
	ok(ge_graph_find(g, "c1") == GE_NOOP &&
		   ge_graph_find(g, "ba1") == GE_NOOP,
	   "the matched ops are gone");
	is_string("/cpu:0", ge_op_device(g, f), "device of the conv");
	is_int(3, (long long)ge_op_num_inputs(g, f), "three inputs");
	ok(ge_op_input(g, f, 0).op == ge_graph_find(g, "in") &&
		   ge_op_input(g, f, 2).op == ge_graph_find(g, "b"),
	   "x, w, b in order");
	ok(ge_op_input(g, ge_graph_find(g, "c2"), 0).op == f,
	   "the Relu's reader reads the fused op");
	is_int(5, (long long)ge_op_num_attrs(g, f), "five attrs");
	is_string("T", ge_op_attr_name(g, f, 0), "in the template's order");
	is_string("num_args", ge_op_attr_name(g, f, 4), "... to the last");
	ok(has_bytes(g, f, "dilations", "\x0a\x06\x1a\x04\x01\x01\x01\x01", 8),
	   "dilations from Conv2D's OpDef default");
	ok(has_bytes(g, f, "TArgs", "\x0a\x03\x32\x01\x01", 5),
	   "TArgs = [T], a packed list(type)");
	ok(has_bytes(g, f, "fused_ops",
		     "\x0a\x0f\x12\x07" "BiasAdd" "\x12\x04" "Relu", 17),
	   "fused_ops = [BiasAdd, the act's type]");
	ok(has_bytes(g, f, "num_args", "\x18\x01", 2), "a fixed attr");
	is_int(0, (long long)ge_graph_validate(g, NULL), "the graph is valid");
	ge_tmpl_free(t);
	ge_pat_free(p);
	ge_graph_free(g);
}

static void test_bad(void)
{
	ge_pat *p = pattern();
	ge_error err = {0, ""};
	ge_tmpl *t = ge_tmpl_new(p);
	int f = ge_tmpl_add_op(t, "f", "Identity", NULL, &err);
	is_int(0, f, "a new op");
	is_int(GE_EINVAL, ge_tmpl_op_input(t, f, "y", &err), "unknown label");
	is_string("unknown label 'y' (the pattern binds act, bias, conv, x, w, b, "
		  "f (new))",
		  err.msg, "... names what there is");
	is_int(GE_EINVAL, ge_tmpl_op_attr_copy(t, f, "T", "conv.stridez", &err),
	       "unknown attr");
	is_string("unknown attr 'stridez' of Conv2D (the op captured as "
		  "'conv')",
		  err.msg, "... named with its op type");
	ge_tmpl_elem e[] = {{GE_TMPL_ATTR_OF, "conv.padding"}};
	is_int(GE_EINVAL,
	       ge_tmpl_op_attr_list(t, f, "l", GE_AK_TYPE, e, 1, &err),
	       "an attr of the wrong kind in a list");
	is_string("attr 'l': attr 'padding' of Conv2D holds s, not type",
		  err.msg, "... says which");
	is_int(GE_EINVAL, ge_tmpl_op_name(t, f, "x", NULL, &err),
	       "a name from a tensor");
	is_string("label 'x' binds a tensor, not an op", err.msg, "... refused");
	is_int(GE_EINVAL, ge_tmpl_replace(t, "f", "x", &err),
	       "a new op cannot be replaced");
	is_int(GE_EINVAL, ge_tmpl_check(t, &err), "nothing replaced");
	ge_tmpl_free(t);
	ge_pat_free(p);
}

/* A template that only bypasses: readers of the Relu read the BiasAdd. */
static void test_bypass(void)
{
	ge_graph *g = parse(GRAPH);
	ge_pat *p = op1("Relu", any("y"), "act");
	ge_error err = {0, ""};
	ge_tmpl *t = ge_tmpl_new(p);
	is_int(GE_OK, ge_tmpl_replace(t, "act", "y", &err), "bypass: %s",
	       err.msg);
	ge_rule rule = {"bypass", p, ge_tmpl_action, t};
	size_t cnt = 0;
	is_int(GE_OK, ge_rewrite(g, &rule, 1, NULL, &cnt, NULL, &err),
	       "rewrite: %s", err.msg);
	is_int(2, (long long)cnt, "both Relus bypassed");
	ok(ge_op_input(g, ge_graph_find(g, "out"), 0).op ==
		   ge_graph_find(g, "ba2"),
	   "out reads the BiasAdd");
	ge_tmpl_free(t);
	ge_pat_free(p);
	ge_graph_free(g);
}

int main(void)
{
	test_fuse();
	test_bad();
	test_bypass();
	return tap_done();
}
