/*
 * opattrs: default attrs filled in from OpDefs, statefulness, and the
 * op-by-op graph diff (lib/graph/opattrs.c, lib/editor/diff.c).
 */
#include <stdlib.h>
#include <string.h>

#include "editor/diff.h"
#include "editor/provenance.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "graph/opattrs.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

static int has_attr(ge_graph *g, const char *op, const char *attr)
{
	size_t len;
	return ge_op_attr_raw(g, ge_graph_find(g, op), attr, &len) != NULL;
}

static const char *const FIXTURE =
	"node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
	"node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
	"  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 1 } } float_val: 1 } } } }\n"
	"node { name: 'conv' op: 'Conv2D' input: 'x' input: 'w'\n"
	"  attr { key: 'T' value { type: DT_FLOAT } }\n"
	"  attr { key: 'padding' value { s: 'VALID' } }\n"
	"  attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } }\n"
	"  attr { key: 'data_format' value { s: 'NCHW' } } }\n"
	"node { name: 'r' op: 'RandomStandardNormal' input: 'x'\n"
	"  attr { key: 'T' value { type: DT_INT32 } } attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
	"node { name: 'mystery' op: 'NoSuchOpType' }\n";

static void test_defaults(void)
{
	ge_graph *g = try_parse(FIXTURE);
	if (!ok(g != NULL, "the fixture parses"))
		return;
	ge_opid conv = ge_graph_find(g, "conv");
	ok(!has_attr(g, "conv", "use_cudnn_on_gpu"),
	   "conv lacks use_cudnn_on_gpu before");
	int n = ge_op_fill_default_attrs(g, conv);
	ok(n >= 3, "defaults were added to Conv2D (%d)", n);
	ok(has_attr(g, "conv", "use_cudnn_on_gpu"), "use_cudnn_on_gpu added");
	ok(has_attr(g, "conv", "dilations"), "dilations added");
	ok(has_attr(g, "conv", "explicit_paddings"), "explicit_paddings added");
	const char *s;
	size_t len;
	ok(ge_op_attr_string(g, conv, "data_format", &s, &len) == 0 &&
		   len == 4 && !memcmp(s, "NCHW", 4),
	   "an attr already set keeps its value (data_format NCHW)");
	const Tensorflow__AttrValue *v = ge_op_attr(g, conv, "dilations", NULL);
	ok(v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		   v->list->n_i == 4 && v->list->i[0] == 1,
	   "dilations holds the OpDef's default [1,1,1,1]");
	is_int(0, ge_op_fill_default_attrs(g, conv),
	       "a second fill adds nothing");
	is_int(GE_ENOTFOUND,
	       ge_op_fill_default_attrs(g, ge_graph_find(g, "mystery")),
	       "an op type without an OpDef: GE_ENOTFOUND");
	ge_opid w = ge_graph_find(g, "w");
	is_int(0, ge_op_fill_default_attrs(g, w),
	       "a Const has no defaults to add");
	ok(ge_graph_fill_default_attrs(g) >= 2,
	   "the whole graph: RandomStandardNormal gets seed and seed2");
	ok(has_attr(g, "r", "seed") && has_attr(g, "r", "seed2"),
	   "seed and seed2 are there");
	ge_buf rep = GE_BUF_INIT;
	ge_graph_validate(g, &rep);
	ok(!strstr((char *)(rep.data ? rep.data : (uint8_t *)""), "conv"),
	   "conv still validates");
	ge_buf_free(&rep);
	ge_graph_remove_op(g, ge_graph_find(g, "mystery"), 0, NULL);
	is_int(GE_EINVAL, ge_op_fill_default_attrs(g, 4),
	       "a removed op: GE_EINVAL");

	is_int(1, ge_op_type_is_stateful(g, "RandomStandardNormal"),
	       "RandomStandardNormal is stateful");
	is_int(0, ge_op_type_is_stateful(g, "Conv2D"), "Conv2D is not");
	is_int(-1, ge_op_type_is_stateful(g, "NoSuchOpType"),
	       "unknown types: -1");
	ge_graph_free(g);
}

static void test_diff(void)
{
	ge_graph *a = try_parse(FIXTURE), *b = try_parse(FIXTURE);
	if (!ok(a && b, "two copies parse"))
		return;
	ge_diff_entry *e;
	is_int(0, ge_graph_diff(a, b, &e), "equal graphs: no entry");
	ok(e == NULL, "and no array");
	ge_graph_remove_op(b, ge_graph_find(b, "mystery"), 0, NULL);
	ge_error err;
	ge_opid id = ge_graph_add_op(b, "extra", "NoOp", &err);
	ge_op_add_control_input(b, id, ge_graph_find(b, "w"), &err);
	ge_opid conv = ge_graph_find(b, "conv");
	ge_op_set_device(b, conv, "/device:GPU:0");
	ge_op_remove_attr(b, conv, "padding");
	ge_op_set_input(b, conv, 1, (ge_tref){ge_graph_find(b, "x"), 0}, &err);
	ge_op_set_type(b, ge_graph_find(b, "r"), "RandomUniform");
	size_t n = ge_graph_diff(a, b, &e);
	is_int(4, (long long)n, "four entries");
	if (n == 4) {
		ok(e[0].kind == GE_DIFF_REMOVED &&
			   !strcmp(ge_op_name(a, e[0].a), "mystery"),
		   "removed first: mystery");
		ok(e[1].kind == GE_DIFF_ADDED &&
			   !strcmp(ge_op_name(b, e[1].b), "extra"),
		   "then added: extra");
		ok(e[2].kind == GE_DIFF_CHANGED &&
			   !strcmp(ge_op_name(b, e[2].b), "conv") &&
			   e[2].what == (GE_DIFF_INPUTS | GE_DIFF_DEVICE |
					 GE_DIFF_ATTRS),
		   "conv changed: inputs, device, attrs (%u)", e[2].what);
		ok(e[3].kind == GE_DIFF_CHANGED && e[3].what == GE_DIFF_TYPE,
		   "r changed: type");
		ge_buf names = GE_BUF_INIT;
		is_int(1, (long long)ge_op_diff_attrs(a, e[2].a, b, e[2].b, &names),
		       "one attr differs");
		is_string("padding\n", (char *)names.data, "padding");
		ge_buf_free(&names);
	}
	free(e);
	/* control inputs compare as a set */
	ge_graph *c = try_parse("node { name: 'a' op: 'NoOp' }\n"
				"node { name: 'b' op: 'NoOp' }\n"
				"node { name: 'c' op: 'NoOp' input: '^a' input: '^b' }\n");
	ge_graph *d = try_parse("node { name: 'a' op: 'NoOp' }\n"
				"node { name: 'b' op: 'NoOp' }\n"
				"node { name: 'c' op: 'NoOp' input: '^b' input: '^a' }\n");
	is_int(0, ge_graph_diff(c, d, &e), "control inputs in another order: same");
	free(e);
	ge_graph_free(a);
	ge_graph_free(b);
	ge_graph_free(c);
	ge_graph_free(d);
}

/* Pairing by provenance (experimental_debug_info.original_node_names):
 * an op renamed is moved, ops folded into another are removed into it. */
static void test_diff_origins(void)
{
	ge_graph *a = try_parse("node { name: 'x' op: 'NoOp' }\n"
				"node { name: 'bn' op: 'NoOp' }\n"
				"node { name: 'old' op: 'NoOp' }\n"
				"node { name: 'gone' op: 'NoOp' }\n");
	ge_graph *b = try_parse(
		"node { name: 'x' op: 'NoOp' experimental_debug_info {"
		" original_node_names: 'x' original_node_names: 'bn' } }\n"
		"node { name: 'new' op: 'NoOp' experimental_debug_info {"
		" original_node_names: 'old' } }\n"
		"node { name: 'added' op: 'NoOp' }\n");
	if (!ok(a && b, "two graphs with provenance parse"))
		return;
	ge_strvec names = {0};
	is_int(2, ge_op_origins(b, ge_graph_find(b, "x"), &names, NULL, NULL),
	       "x has two origins");
	ge_buf all = GE_BUF_INIT;
	for (size_t k = 0; k < names.n; k++) {
		ge_buf_adds(&all, names.v[k]);
		ge_buf_addc(&all, '\n');
	}
	ge_buf_addc(&all, 0);
	is_string("x\nbn\n", (char *)all.data, "in the order written");
	ge_buf_free(&all);
	ge_strvec_free(&names);
	ge_diff_entry *e;
	size_t n = ge_graph_diff(a, b, &e);
	is_int(4, (long long)n, "bn and gone removed, added added, new moved");
	if (n == 4) {
		is_int(GE_DIFF_REMOVED, e[0].kind, "bn removed");
		is_string("x", ge_op_name(b, e[0].b), "bn went into x");
		is_int(GE_DIFF_REMOVED, e[1].kind, "gone removed");
		ok(e[1].b == GE_NOOP, "gone went into nothing");
		is_string("added", ge_op_name(b, e[2].b), "added is added");
		is_int(GE_DIFF_MOVED, e[3].kind, "new is moved");
		is_string("old", ge_op_name(a, e[3].a), "from old");
		is_int(0, e[3].what, "and otherwise the same");
	}
	free(e);
	ge_graph_free(a);
	ge_graph_free(b);
}

/* Attr kinds, by name, by value and by OpDef. */
static void test_kinds(void)
{
	is_int(GE_AK_LIST | GE_AK_F, ge_attrkind_parse("list(float)"),
	       "OpDef spelling list(float)");
	is_int(-1, ge_attrkind_parse("list(placeholder)"),
	       "no list of placeholders");
	is_string("list(type)", ge_attrkind_name(GE_AK_LIST | GE_AK_TYPE),
		  "list kind name");
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	is_string("none", ge_attrkind_name(ge_attrkind_of(&v)), "empty value");
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	is_string("i", ge_attrkind_name(ge_attrkind_of(&v)), "int value");
	ge_graph *g = try_parse("node { name: 'c' op: 'Conv2D' }\n");
	is_int(GE_AK_LIST | GE_AK_I, ge_opdef_attrkind(g, "Conv2D", "strides"),
	       "Conv2D strides are list(int)");
	is_int(-1, ge_opdef_attrkind(g, "Conv2D", "nope"), "no such attr");
	is_int(-1, ge_opdef_attrkind(g, "NoSuchOp", "T"), "no such OpDef");
	ge_graph_free(g);
}

int main(void)
{
	test_defaults();
	test_diff();
	test_diff_origins();
	test_kinds();
	return tap_done();
}
