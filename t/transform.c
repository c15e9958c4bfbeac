/* transform.c: Transformer, copy, copy_with_input_replacements,
 * graph_replace, import and scoped export (lib/editor/transform.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "editor/transform.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* ------------------------------------------------------------ helpers */

#define F32 "attr { key: \"T\" value { type: DT_FLOAT } } "
#define DT "attr { key: \"dtype\" value { type: DT_FLOAT } } "
#define SHP(d) "attr { key: \"_output_shapes\" value { list { shape { " d \
	" } } } } "
#define D(n) "dim { size: " #n " } "
#define PH(n, dims) \
	"node { name: \"" n "\" op: \"Placeholder\" " DT \
	"attr { key: \"shape\" value { shape { " dims " } } } " SHP(dims) "}\n"
#define CONST(n, dims) \
	"node { name: \"" n "\" op: \"Const\" " DT \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { " dims " } float_val: 0.5 } } } " SHP(dims) "}\n"
#define OP2(n, type, a, b, extra) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" input: \"" \
	b "\" " F32 extra "}\n"
#define OP1(n, type, a, extra) \
	"node { name: \"" n "\" op: \"" type "\" input: \"" a "\" " F32 extra \
	"}\n"
#define VAR(n, dims) \
	"node { name: \"" n "\" op: \"VariableV2\" " DT \
	"attr { key: \"shape\" value { shape { " dims " } } } " \
	"attr { key: \"_class\" value { list { s: \"loc:@" n "\" } } } " \
	SHP(dims) "}\n" \
	"node { name: \"" n "/read\" op: \"Identity\" input: \"" n "\" " F32 \
	"attr { key: \"_class\" value { list { s: \"loc:@" n "\" } } } " \
	SHP(dims) "}\n"

/* The data inputs of an op as "a:0,b:1".  Unlike ins() of testutil.h this
 * and ctrl_ins do not bail out: a copy that lost an op reads "(no op)",
 * a dangling input "?:1". */
static const char *inputs_of(const ge_graph *g, const char *name)
{
	char *b = tu_ring();
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP)
		return "(no op)";
	for (size_t i = 0; i < ge_op_num_inputs(g, id); i++) {
		ge_tref t = ge_op_input(g, id, i);
		char one[600];
		snprintf(one, sizeof one, "%s%s:%d", i ? "," : "",
			 t.op == GE_NOOP ? "?" : ge_op_name(g, t.op), t.index);
		strcat(b, one);
	}
	return b;
}

static const char *ctrl_ins(const ge_graph *g, const char *name)
{
	char *b = tu_ring();
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP)
		return "(no op)";
	for (size_t i = 0; i < ge_op_num_control_inputs(g, id); i++) {
		ge_opid c = ge_op_control_input(g, id, i);
		if (i)
			strcat(b, ",");
		strcat(b, c == GE_NOOP ? "?" : ge_op_name(g, c));
	}
	return b;
}

/* `_class` of an op as "loc:@a,loc:@b", "" if absent. */
static const char *colo(const ge_graph *g, const char *name)
{
	char *b = tu_ring();
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP)
		return "(no op)";
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, "_class", NULL);
	if (!v)
		return "";
	for (size_t i = 0; v->list && i < v->list->n_s; i++) {
		if (i)
			strcat(b, ",");
		strncat(b, (const char *)v->list->s[i].data, v->list->s[i].len);
	}
	return b;
}

static const char *sattr(const ge_graph *g, const char *op, const char *name)
{
	char *b = tu_ring();
	const char *s;
	size_t len;
	ge_opid id = ge_graph_find(g, op);
	if (id == GE_NOOP || ge_op_attr_string(g, id, name, &s, &len))
		return "(none)";
	snprintf(b, TU_RING_LEN, "%.*s", (int)len, s);
	return b;
}

/* A node_list collection as "a,b:0". */
static const char *coll(ge_graph *g, const char *name)
{
	char *b = tu_ring();
	Tensorflow__CollectionDef *c = ge_collection_get(g, name);
	if (!c)
		return "(none)";
	if (c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
		return "(not a node list)";
	for (size_t i = 0; i < c->node_list->n_value; i++) {
		if (i)
			strcat(b, ",");
		strcat(b, c->node_list->value[i]);
	}
	return b;
}

static void mkview_ids(ge_view *v, ge_graph *g, const ge_opid *ops, size_t n)
{
	ge_error err = {0};
	if (ge_view_init(v, g, ops, n, NULL, 0, &err) != GE_OK) {
		printf("Bail out! view: %s\n", err.msg);
		exit(1);
	}
}

static void scope_view(ge_view *v, ge_graph *g, const char *scope)
{
	ge_error err = {0};
	if (ge_make_view_from_scope(g, scope, v, &err) != GE_OK) {
		printf("Bail out! view: %s\n", err.msg);
		exit(1);
	}
}

static size_t problems(const ge_graph *g)
{
	ge_buf r = GE_BUF_INIT;
	size_t n = ge_graph_validate(g, &r);
	if (n)
		tap_diag("validate: %s", (char *)r.data);
	ge_buf_free(&r);
	return n;
}

static int has_op_named_like(const ge_graph *g, const char *part)
{
	for (size_t i = 0; i < ge_graph_capacity(g); i++)
		if (ge_op_alive(g, (ge_opid)i) &&
		    strstr(ge_op_name(g, (ge_opid)i), part))
			return 1;
	return 0;
}

/* ------------------------------------------------------------ fixtures */

/* A two-layer dense network under scope f. */
static const char *DENSE =
	PH("f/x", "dim { size: -1 } " D(4))
	VAR("f/dense_1/kernel", D(4) D(3))
	VAR("f/dense_1/bias", D(3))
	OP2("f/dense_1/MatMul", "MatMul", "f/x", "f/dense_1/kernel/read",
	    SHP("dim { size: -1 } " D(3)))
	OP2("f/dense_1/BiasAdd", "BiasAdd", "f/dense_1/MatMul",
	    "f/dense_1/bias/read", SHP("dim { size: -1 } " D(3)))
	OP1("f/dense_1/Relu", "Relu", "f/dense_1/BiasAdd",
	    SHP("dim { size: -1 } " D(3)))
	VAR("f/dense_2/kernel", D(3) D(2))
	VAR("f/dense_2/bias", D(2))
	OP2("f/dense_2/MatMul", "MatMul", "f/dense_1/Relu",
	    "f/dense_2/kernel/read", SHP("dim { size: -1 } " D(2)))
	OP2("f/dense_2/BiasAdd", "BiasAdd", "f/dense_2/MatMul",
	    "f/dense_2/bias/read", SHP("dim { size: -1 } " D(2)))
	PH("new_x", D(8) D(4));

static void test_graph_replace_dense(void)
{
	ge_graph *g = parse_as(DENSE, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	size_t before = ge_graph_num_ops(g);
	ge_tref y = T(g, "f/dense_2/BiasAdd:0"), y_;
	ge_tpair r = {T(g, "f/x:0"), T(g, "new_x:0")};
	ge_transform_opts o = {0};
	o.src_scope = "f";
	o.dst_scope = "new_f";
	ge_tinfo *info = NULL;
	int rc = ge_graph_replace(g, &y, 1, &r, 1, &o, &y_, &info, &err);
	is_int(GE_OK, rc, "graph_replace(y, {x = new_x}) %s", err.msg);
	is_string("new_f/dense_2/BiasAdd", ge_op_name(g, y_.op),
		  "the new target is new_f/dense_2/BiasAdd");
	is_int(0, y_.index, "... output 0");
	is_int(before + 5, ge_graph_num_ops(g),
	       "the five ops between x and y are copied");
	is_string("new_x:0,f/dense_1/kernel/read:0",
		  inputs_of(g, "new_f/dense_1/MatMul"),
		  "new_f/dense_1/MatMul reads new_x and f's weights");
	is_string("new_f/dense_1/MatMul:0,f/dense_1/bias/read:0",
		  inputs_of(g, "new_f/dense_1/BiasAdd"),
		  "BiasAdd shares the bias");
	is_string("new_f/dense_1/Relu:0,f/dense_2/kernel/read:0",
		  inputs_of(g, "new_f/dense_2/MatMul"), "second layer chained");
	is_string("new_f/dense_2/MatMul:0,f/dense_2/bias/read:0",
		  inputs_of(g, "new_f/dense_2/BiasAdd"),
		  "... and its bias shared");
	ok(ge_graph_find(g, "new_f/dense_1/kernel") == GE_NOOP,
	   "the weights are not copied");
	is_int(0, problems(g), "the graph validates");
	/* new_x [8,4] is more precise than x [?,4]: shapes still hold */
	ok(ge_op_attr(g, OP(g, "new_f/dense_1/MatMul"), "_output_shapes",
		      NULL) != NULL,
	   "_output_shapes kept when the new input is compatible");

	/* a target that does not depend on the replacement comes back */
	ge_tref t2[2] = {y, T(g, "f/dense_1/bias/read:0")}, o2[2];
	o.dst_scope = "again";
	rc = ge_graph_replace(g, t2, 2, &r, 1, &o, o2, NULL, &err);
	is_int(GE_OK, rc, "graph_replace with two targets");
	is_string("again/dense_2/BiasAdd", ge_op_name(g, o2[0].op),
		  "the dependent target is mapped");
	ok(ge_tref_eq(o2[1], t2[1]), "the independent target is unchanged");

	ge_tpair r2 = {T(g, "f/dense_2/bias/read:0"), T(g, "new_x:0")};
	ge_tref far = T(g, "f/dense_1/Relu:0");
	rc = ge_graph_replace(g, &far, 1, &r2, 1, NULL, o2, NULL, &err);
	is_int(GE_EINVAL, rc, "unconnected targets are refused");
	ok(strstr(err.msg, "not connected") != NULL, "... saying so: %s",
	   err.msg);
	ge_tinfo_free(info);
	ge_graph_free(g);
}

static void test_copy_with_replacements(void)
{
	ge_graph *g = parse_as(DENSE, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_view all, v, out = GE_VIEW_INIT;
	scope_view(&all, g, "f");
	ge_opvec ops = GE_VEC_INIT;
	for (size_t i = 0; i < all.ops.n; i++)
		if (strcmp(ge_op_name(g, all.ops.v[i]), "f/x"))
			ge_opvec_push(&ops, all.ops.v[i]);
	mkview_ids(&v, g, ops.v, ops.n);
	is_string("f/x:0", tnames(g, &v.inputs), "the view reads f/x");
	int64_t xd[2] = {-1, 4};
	ge_opid in = ge_make_placeholder(g, 1, xd, 2, "copy_in", NULL, &err);
	ge_tpair r = {T(g, "f/x:0"), {in, 0}};
	ge_transform_opts o = {0};
	o.src_scope = "f";
	o.dst_scope = "copy";
	ge_tinfo *info = NULL;
	int rc = ge_copy_with_input_replacements(&v, &r, 1, &o, &out, &info,
						 &err);
	is_int(GE_OK, rc, "copy_with_input_replacements %s", err.msg);
	is_string("copy_in/geph:0", tnames(g, &out.inputs),
		  "the result view's input is the replacement");
	is_int((long long)v.outputs.n, (long long)out.outputs.n,
	       "as many outputs as the source view");
	int same = 1;
	for (size_t i = 0; i < v.ops.n; i++) {
		ge_opid s = v.ops.v[i], c = ge_tinfo_transformed_op(info, s);
		char want[256];
		snprintf(want, sizeof want, "copy/%s", ge_op_name(g, s) + 2);
		if (c == GE_NOOP || strcmp(ge_op_name(g, c), want) ||
		    strcmp(ge_op_type(g, c), ge_op_type(g, s)) ||
		    ge_op_num_inputs(g, c) != ge_op_num_inputs(g, s) ||
		    ge_op_num_attrs(g, c) != ge_op_num_attrs(g, s)) {
			same = 0;
			tap_diag("mismatch at %s", ge_op_name(g, s));
			continue;
		}
		for (size_t k = 0; k < ge_op_num_inputs(g, s); k++) {
			ge_tref a = ge_op_input(g, s, k), b = ge_op_input(g, c, k);
			ge_tref want_t;
			if (ge_tref_eq(a, r.from))
				want_t = r.to;
			else if (!ge_tinfo_transformed_t(info, a, &want_t))
				want_t = (ge_tref){GE_NOOP, 0};
			if (!ge_tref_eq(b, want_t)) {
				same = 0;
				tap_diag("input %zu of %s", k, ge_op_name(g, c));
			}
		}
	}
	ok(same, "structure identical op for op under copy/");
	is_string("loc:@copy/dense_1/kernel", colo(g, "copy/dense_1/kernel/read"),
		  "colocation follows the copied variable");
	is_int(0, problems(g), "the graph validates");
	ge_opvec_free(&ops);
	ge_view_free(&all);
	ge_view_free(&v);
	ge_view_free(&out);
	ge_tinfo_free(info);

	/* a tensor replaced twice is refused */
	ge_tpair rr[2] = {r, r};
	scope_view(&v, g, "f/dense_1");
	rc = ge_copy_with_input_replacements(&v, rr, 2, NULL, NULL, NULL, &err);
	is_int(GE_EINVAL, rc, "a tensor replaced twice is refused");
	ge_view_free(&v);
	ge_graph_free(g);
}

/* Shapes after a replacement that changes them (decision 10). */
static void test_output_shapes(void)
{
	ge_graph *g = parse_as(PH("x", D(2) D(3)) PH("y", D(5) D(3))
			    CONST("w", D(3) D(3))
			    OP1("a", "Identity", "x", SHP(D(2) D(3)))
			    OP2("m", "MatMul", "a", "w", SHP(D(2) D(3)))
			    OP1("r", "Relu", "m", SHP(D(2) D(3)))
			    OP1("n", "Identity", "x", "")
			    OP1("q", "Relu", "n", SHP(D(2) D(3)))
			    OP1("u", "Relu", "x", SHP(D(2) D(3))),
			    GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_opid ops[6] = {OP(g, "a"), OP(g, "m"), OP(g, "r"), OP(g, "n"),
			  OP(g, "q"), OP(g, "u")};
	ge_view v;
	mkview_ids(&v, g, ops, 6);
	ge_tpair r = {T(g, "x:0"), T(g, "y:0")};
	ge_transform_opts o = {0};
	o.dst_scope = "c";
	int rc = ge_copy_with_input_replacements(&v, &r, 1, &o, NULL, NULL,
						 &err);
	is_int(GE_OK, rc, "copy with a [5,3] input instead of [2,3]");
	int64_t d[4];
	int rank = ge_op_output_shape(g, OP(g, "c/a"), 0, d, 4);
	ok(rank == 2 && d[0] == 5 && d[1] == 3,
	   "Identity's shape is recomputed from its new input");
	ok(!ge_op_attr(g, OP(g, "c/m"), "_output_shapes", NULL),
	   "MatMul's stale shape is dropped");
	ok(!ge_op_attr(g, OP(g, "c/r"), "_output_shapes", NULL),
	   "... and so is the shape after it");
	ok(!ge_op_attr(g, OP(g, "c/q"), "_output_shapes", NULL),
	   "a change seen through an op without shapes still counts");
	ok(ge_op_attr(g, OP(g, "c/u"), "_output_shapes", NULL) != NULL &&
		   ge_op_output_shape(g, OP(g, "c/u"), 0, d, 4) == 2 &&
		   d[0] == 5,
	   "a shape-preserving op reading the new input directly is "
	   "recomputed");
	/* the same copy with an input of the same shape keeps everything */
	ge_view_free(&v);
	mkview_ids(&v, g, ops, 6);
	ge_tpair same = {T(g, "x:0"), T(g, "x:0")};
	o.dst_scope = "s";
	rc = ge_copy_with_input_replacements(&v, &same, 1, &o, NULL, NULL,
					     &err);
	ok(rc == GE_OK &&
		   ge_op_attr(g, OP(g, "s/m"), "_output_shapes", NULL) &&
		   ge_op_attr(g, OP(g, "s/q"), "_output_shapes", NULL),
	   "unchanged inputs keep every _output_shapes");
	/* copy_shape keeps them */
	ge_transformer tr;
	ge_transformer_init(&tr);
	ge_copy_op_opts co = {1, NULL, NULL};
	tr.transform_op_handler = ge_copy_op_handler;
	tr.transform_op_ud = &co;
	ge_view_free(&v);
	mkview_ids(&v, g, ops, 6);
	o.dst_scope = "k";
	rc = ge_transform(&tr, &v, &o, NULL, NULL, &err);
	is_int(GE_OK, rc, "a transform with copy_shape");
	ok(ge_op_attr(g, OP(g, "k/m"), "_output_shapes", NULL) != NULL,
	   "copy_shape keeps _output_shapes");
	ge_view_free(&v);
	ge_graph_free(g);
}

/* A small training graph with collections (a MetaGraphDef). */
static const char *TRAIN =
	"graph_def {\n"
	PH("x", D(4) D(3))
	PH("labels", D(4) D(1))
	VAR("w", D(3) D(1))
	CONST("w/initial_value", D(3) D(1))
	"node { name: \"w/Assign\" op: \"Assign\" input: \"w\" "
	"input: \"w/initial_value\" " F32
	"attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	OP2("pred", "MatMul", "x", "w/read", "")
	OP2("sub", "Sub", "pred", "labels", "")
	OP1("sq", "Square", "sub", "")
	"node { name: \"axes\" op: \"Const\" "
	"attr { key: \"dtype\" value { type: DT_INT32 } } "
	"attr { key: \"value\" value { tensor { dtype: DT_INT32 "
	"tensor_shape { " D(2) " } int_val: 0 int_val: 1 } } } }\n"
	OP2("loss", "Mean", "sq", "axes", "")
	CONST("gradients/grad_ys", D(4) D(1))
	OP2("gradients/mul", "Mul", "gradients/grad_ys", "sub", "")
	OP2("gradients/pred_grad", "MatMul", "x", "gradients/mul",
	    "attr { key: \"transpose_a\" value { b: true } } ")
	CONST("GradientDescent/learning_rate", "")
	"node { name: \"GradientDescent/update_w\" op: "
	"\"ApplyGradientDescent\" input: \"w\" "
	"input: \"GradientDescent/learning_rate\" "
	"input: \"gradients/pred_grad\" " F32
	"attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	"node { name: \"GradientDescent\" op: \"NoOp\" "
	"input: \"^GradientDescent/update_w\" }\n"
	"node { name: \"init\" op: \"NoOp\" input: \"^w/Assign\" }\n"
	"}\n"
	"collection_def { key: \"train_op\" value { node_list { "
	"value: \"GradientDescent\" } } }\n"
	"collection_def { key: \"losses\" value { node_list { "
	"value: \"loss:0\" } } }\n"
	"collection_def { key: \"my_metrics\" value { node_list { "
	"value: \"loss:0\" value: \"pred:0\" value: \"init\" } } }\n";

static void test_training_copy(void)
{
	ge_graph *g = parse_as(TRAIN, GE_FMT_META_TEXT);
	ge_graph *d = ge_graph_new();
	ge_error err = {0};
	ge_view v, out = GE_VIEW_INIT;
	ge_opvec all = GE_VEC_INIT;
	ge_graph_all_ops(g, &all);
	mkview_ids(&v, g, all.v, all.n);
	is_int(0, problems(g), "the training graph validates");
	ge_transform_opts o = {0};
	o.dst_graph = d;
	o.dst_scope = "CopiedOps";
	ge_tinfo *info = NULL;
	int rc = ge_copy(&v, &o, &out, &info, &err);
	is_int(GE_OK, rc, "copy the training graph into a new graph %s",
	       err.msg);
	is_int((long long)ge_graph_num_ops(g), (long long)ge_graph_num_ops(d),
	       "every op copied");
	is_string("CopiedOps/", ge_tinfo_dst_scope(info), "destination scope");
	is_string("CopiedOps/x:0,CopiedOps/w/read:0",
		  inputs_of(d, "CopiedOps/pred"), "data inputs follow");
	is_string("CopiedOps/GradientDescent/update_w",
		  ctrl_ins(d, "CopiedOps/GradientDescent"),
		  "control inputs follow");
	is_string("loc:@CopiedOps/w", colo(d, "CopiedOps/GradientDescent/update_w"),
		  "colocation follows");
	is_string("CopiedOps/GradientDescent", coll(d, "train_op"),
		  "train_op is kept by name and lists the copy");
	is_string("CopiedOps/loss:0", coll(d, "losses"),
		  "losses is kept by name");
	is_string("CopiedOps/pred:0,CopiedOps/loss:0,CopiedOps/init",
		  coll(d, "CopiedOps/my_metrics"),
		  "a custom collection is re-scoped (entries in node order)");
	is_string("(none)", coll(d, "my_metrics"),
		  "... and not kept under its old name");
	is_int(0, problems(d), "the copy validates");
	is_int((long long)ge_graph_num_ops(d), (long long)out.ops.n,
	       "the result view holds the copies");

	/* the copy survives a MetaGraphDef round trip */
	ge_buf b = GE_BUF_INIT;
	rc = ge_serialize(d, GE_FMT_META, &b, &err);
	is_int(GE_OK, rc, "the copy serializes as a MetaGraphDef %s", err.msg);
	ge_graph *back = NULL;
	rc = ge_parse(b.data, b.len, GE_FMT_META, "copy", NULL, &back, &err);
	is_int(GE_OK, rc, "... and parses back %s", err.msg);
	if (back) {
		is_string("CopiedOps/GradientDescent", coll(back, "train_op"),
			  "... with its collections");
		ge_graph_free(back);
	}
	ge_buf_free(&b);

	/* a copy in the same graph with the same (empty) scopes joins the
	 * same custom collection */
	ge_view_free(&v);
	ge_view_free(&out);
	ge_tinfo_free(info);
	mkview_ids(&v, g, all.v, all.n);
	rc = ge_copy(&v, NULL, NULL, NULL, &err);
	is_int(GE_OK, rc, "copy in place %s", err.msg);
	is_string("loss:0,pred:0,init,pred_1:0,loss_1:0,init_1",
		  coll(g, "my_metrics"), "in place, the copies join the same "
		  "collection");
	is_string("loc:@w_1", colo(g, "w/read_1"),
		  "in place, colocation names the copy");
	is_int(0, problems(g), "the graph validates after the copy");
	ge_view_free(&v);
	ge_opvec_free(&all);
	ge_graph_free(g);
	ge_graph_free(d);
}

/* ------------------------------------------------------------ handlers */

static const char *CHAIN =
	CONST("Const", D(10))
	CONST("Const_1", D(10))
	CONST("Const_2", D(10))
	CONST("Input", D(10))
	OP2("Add", "Add", "Const", "Input", "")
	OP2("Add_1", "Add", "Const_1", "Add", "")
	OP2("Add_2", "Add", "Const_2", "Add_1", "");

/* The reference's handler test: Add(noise, x) after every copied op whose
 * name starts with "Add". */
static int noisy_handler(ge_tinfo *info, ge_opid op, const ge_tref *in,
			 size_t n, ge_opid *op_, ge_tvec *outs, void *ud,
			 ge_error *err)
{
	int *calls = ud;
	(*calls)++;
	int rc = ge_copy_op_handler(info, op, in, n, op_, outs, NULL, err);
	ge_graph *g = ge_tinfo_graph(info), *d = ge_tinfo_dst_graph(info);
	if (rc || strncmp(ge_op_name(g, op), "Add", 3))
		return rc;
	ge_opid noise = ge_graph_add_op(d, ge_graph_unique_name(d, "Noise"),
					"Const", err);
	ge_opid add = ge_graph_add_op(d, ge_graph_unique_name(d, "AddNoise"),
				      "Add", err);
	if (noise == GE_NOOP || add == GE_NOOP)
		return GE_EINVAL;
	size_t len;
	const uint8_t *raw = ge_op_attr_raw(g, OP(g, "Const"), "value", &len);
	ge_op_set_attr_raw(d, noise, "value", raw, len);
	raw = ge_op_attr_raw(g, OP(g, "Const"), "dtype", &len);
	ge_op_set_attr_raw(d, noise, "dtype", raw, len);
	raw = ge_op_attr_raw(g, op, "T", &len);
	ge_op_set_attr_raw(d, add, "T", raw, len);
	ge_op_add_input(d, add, (ge_tref){noise, 0}, NULL);
	ge_op_add_input(d, add, outs->v[0], NULL);
	outs->v[0] = (ge_tref){add, 0};
	return GE_OK;
}

static void test_custom_handler(void)
{
	ge_graph *g = parse_as(CHAIN, GE_FMT_GRAPHDEF_TEXT);
	ge_graph *d = ge_graph_new();
	ge_error err = {0};
	ge_opvec all = GE_VEC_INIT;
	ge_graph_all_ops(g, &all);
	ge_view v;
	mkview_ids(&v, g, all.v, all.n);
	ge_transformer tr;
	ge_transformer_init(&tr);
	int calls = 0;
	tr.transform_op_handler = noisy_handler;
	tr.transform_op_ud = &calls;
	ge_transform_opts o = {0};
	o.dst_graph = d;
	ge_tinfo *info = NULL;
	int rc = ge_transform(&tr, &v, &o, NULL, &info, &err);
	is_int(GE_OK, rc, "a transform with a custom op handler %s", err.msg);
	is_int(7, calls, "the handler ran once per op");
	is_string("Noise_2:0,Add_2:0", inputs_of(d, "AddNoise_2"),
		  "AddNoise_2 = Add(Noise_2, Add_2)");
	is_string("Const_2:0,AddNoise_1:0", inputs_of(d, "Add_2"),
		  "Add_2 reads the noisy Add_1");
	is_string("Noise_1:0,Add_1:0", inputs_of(d, "AddNoise_1"),
		  "AddNoise_1 = Add(Noise_1, Add_1)");
	is_string("Const_1:0,AddNoise:0", inputs_of(d, "Add_1"),
		  "Add_1 reads the noisy Add");
	is_string("Noise:0,Add:0", inputs_of(d, "AddNoise"),
		  "AddNoise = Add(Noise, Add)");
	is_string("Const:0,Input:0", inputs_of(d, "Add"),
		  "Add reads Const, Input");
	ge_tref t;
	ok(ge_tinfo_transformed_t(info, T(g, "Add_1:0"), &t) &&
		   !strcmp(ge_op_name(d, t.op), "AddNoise_1"),
	   "the handler's output tensor stands for Add_1:0");
	ok(ge_tinfo_original_t(info, (ge_tref){OP(d, "AddNoise_1"), 0}, &t) &&
		   ge_tref_eq(t, T(g, "Add_1:0")),
	   "... and maps back");
	is_int(0, problems(d), "the noisy copy validates");
	ge_tinfo_free(info);
	ge_view_free(&v);

	/* a handler that returns the op itself is refused, and whatever the
	 * transform added is removed again */
	mkview_ids(&v, g, all.v, all.n);
	size_t n0 = ge_graph_num_ops(g);
	tr.transform_op_handler = ge_copy_op_handler;
	tr.transform_op_ud = NULL;
	tr.transform_control_input_handler = ge_transform_op_if_inside_handler;
	o.dst_graph = NULL;
	o.src_scope = "nope";
	rc = ge_transform(&tr, &v, &o, NULL, NULL, &err);
	is_int(GE_EINVAL, rc, "an op outside the source scope is refused");
	ok(strstr(err.msg, "not under the source scope") != NULL,
	   "... saying so: %s", err.msg);
	is_int((long long)n0, (long long)ge_graph_num_ops(g),
	       "a failed transform leaves no op behind");
	ge_view_free(&v);
	ge_opvec_free(&all);
	ge_graph_free(g);
	ge_graph_free(d);
}

/* ------------------------------------------------------------ info */

static void test_info(void)
{
	ge_graph *g = parse_as(DENSE, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_view v, out = GE_VIEW_INIT;
	scope_view(&v, g, "f/dense_1");
	ge_transform_opts o = {0};
	o.src_scope = "f";
	o.dst_scope = "g";
	ge_tinfo *info = NULL;
	int rc = ge_copy(&v, &o, &out, &info, &err);
	is_int(GE_OK, rc, "copy f/dense_1 to g/");
	int round = 1, rt = 1;
	ge_buf nb = GE_BUF_INIT;
	for (size_t i = 0; i < v.ops.n; i++) {
		ge_opid s = v.ops.v[i], c = ge_tinfo_transformed_op(info, s);
		if (c == GE_NOOP || ge_tinfo_original_op(info, c) != s)
			round = 0;
		ge_tref tn;
		if (!ge_tinfo_transformed_name(info, ge_op_name(g, s), &tn) ||
		    tn.op != c || tn.index != GE_CONTROL)
			round = 0;
		if (!ge_tinfo_original_name(info, ge_op_name(g, c), &tn) ||
		    tn.op != s)
			round = 0;
		for (int k = 0; k < ge_op_num_outputs(g, s); k++) {
			ge_tref t = {s, k}, t_, back;
			if (!ge_tinfo_transformed_t(info, t, &t_) ||
			    !ge_tinfo_original_t(info, t_, &back) ||
			    !ge_tref_eq(back, t))
				rt = 0;
			nb.len = 0;
			ge_buf_printf(&nb, "%s:%d", ge_op_name(g, s), k);
			if (!ge_tinfo_transformed_name(info, (char *)nb.data,
						       &back) ||
			    !ge_tref_eq(back, t_))
				rt = 0;
			nb.len = 0;
			ge_buf_printf(&nb, "%s:%d", ge_op_name(g, t_.op), k);
			if (!ge_tinfo_original_name(info, (char *)nb.data,
						    &back) ||
			    !ge_tref_eq(back, t))
				rt = 0;
		}
	}
	ge_buf_free(&nb);
	ok(round, "transformed/original round-trip every op, by op and name");
	ok(rt, "... and every tensor, by tensor and name");
	ge_tref t;
	ok(ge_tinfo_transformed_name(info, "f/x:0", &t) &&
		   !strcmp(ge_op_name(g, t.op), "g/geph__x_0"),
	   "an input maps to its placeholder");
	ok(!ge_tinfo_transformed_name(info, "f/dense_2/MatMul", &t),
	   "an op outside the view has no counterpart");
	ok(!ge_tinfo_transformed_name(info, "no/such", &t),
	   "nor has a name that is not in the graph");
	is_string("g/geph__x_0:0", tnames(g, &out.inputs),
		  "result inputs in the source view's order");
	is_string("g/dense_1/Relu:0", tnames(g, &out.outputs),
		  "result outputs");
	ge_buf b = GE_BUF_INIT;
	ge_tinfo_format(info, &b);
	ok(strstr((char *)b.data, "Transform result info:\n") &&
		   strstr((char *)b.data, "  f/dense_1/MatMul => g/dense_1/MatMul\n"),
	   "format lists the ops mapping");
	ge_buf_free(&b);
	const ge_opid *src, *dst;
	is_int(7, (long long)ge_tinfo_ops(info, &src, &dst),
	       "seven ops copied");
	ok(!strcmp(ge_op_name(g, dst[0]), "g/dense_1/kernel") &&
		   src[0] == OP(g, "f/dense_1/kernel"),
	   "in node order, paired");
	ge_tinfo_free(info);
	ge_view_free(&out);
	ge_view_free(&v);
	ge_graph_free(g);
}

/* The info of a copy keeps the view's ops in the view's order and the
 * pairs in node order, whether the view lists its ops in node order (the
 * info then makes both from its own list when asked) or not. */
static void test_info_orders(void)
{
	ge_graph *g = parse_as(DENSE, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_view sorted, rev, out = GE_VIEW_INIT;
	scope_view(&sorted, g, "f/dense_1");
	size_t n = sorted.ops.n;
	ge_opid *ids = malloc(2 * n * sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = ids[n + i] = sorted.ops.v[n - 1 - i];
	mkview_ids(&rev, g, ids, 2 * n);
	ge_view *views[2] = {&sorted, &rev};
	const char *scopes[2] = {"s", "r"};
	for (int k = 0; k < 2; k++) {
		ge_transform_opts o = {0};
		o.src_scope = "f";
		o.dst_scope = scopes[k];
		ge_tinfo *info = NULL;
		int rc = ge_copy(views[k], &o, &out, &info, &err);
		is_int(GE_OK, rc, "copy of the view %s node order",
		       k ? "against" : "in");
		const ge_view *iv = ge_tinfo_view(info);
		ok(iv->ops.n == views[k]->ops.n &&
			   !memcmp(iv->ops.v, views[k]->ops.v,
				   n * sizeof *iv->ops.v) &&
			   ge_tinfo_view(info) == iv,
		   "... the info's view has the view's ops in its order");
		const ge_opid *src, *dst;
		size_t np = ge_tinfo_ops(info, &src, &dst);
		int paired = np == n;
		for (size_t i = 0; paired && i < n; i++)
			paired = src[i] == sorted.ops.v[i] &&
				 dst[i] == ge_tinfo_transformed_op(info, src[i]) &&
				 dst[i] == out.ops.v[i];
		ok(paired, "... the pairs in node order, as the result's ops");
		ge_buf b = GE_BUF_INIT;
		ge_tinfo_summary(info, &b);
		ok(strstr((char *)b.data, "transform info: 7 ops") != NULL,
		   "... the summary counts them: %s", (char *)b.data);
		ge_buf_free(&b);
		ge_tinfo_free(info);
		ge_view_free(&out);
	}
	free(ids);
	ge_view_free(&rev);
	ge_view_free(&sorted);
	ge_graph_free(g);
}

/* One placeholder per external tensor, however many slots read it. */
static void test_memo(void)
{
	ge_graph *g = parse_as(CONST("a", D(2))
			    OP2("b", "Add", "a", "a", "")
			    OP2("c", "Mul", "a", "b", ""),
			    GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_opid ops[2] = {OP(g, "b"), OP(g, "c")};
	ge_view v, out = GE_VIEW_INIT;
	mkview_ids(&v, g, ops, 2);
	size_t n0 = ge_graph_num_ops(g);
	ge_transform_opts o = {0};
	o.dst_scope = "k";
	int rc = ge_copy(&v, &o, &out, NULL, &err);
	is_int(GE_OK, rc, "copy b and c");
	is_int((long long)n0 + 3, (long long)ge_graph_num_ops(g),
	       "two copies and one placeholder");
	is_string("k/geph__a_0:0,k/geph__a_0:0", inputs_of(g, "k/b"),
		  "both slots of b read the one placeholder");
	is_string("k/geph__a_0:0,k/b:0", inputs_of(g, "k/c"), "c reads it too");
	is_string("k/geph__a_0:0", tnames(g, &out.inputs),
		  "the result has one input");
	ge_view_free(&v);
	ge_view_free(&out);

	/* a view of only a passthrough: its counterpart is a placeholder */
	ge_tref pa = T(g, "a:0");
	ge_view_init(&v, g, NULL, 0, &pa, 1, &err);
	o.dst_scope = "p";
	rc = ge_copy(&v, &o, &out, NULL, &err);
	is_int(GE_OK, rc, "copy a view of a passthrough");
	is_string("p/geph__a_0:0", tnames(g, &out.passthroughs),
		  "the passthrough maps to a placeholder");
	ge_view_free(&v);
	ge_view_free(&out);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ colocation */

static void test_colocation(void)
{
	const char *txt =
		CONST("a", D(2))
		OP1("b", "Identity", "a",
		    "attr { key: \"_class\" value { list { s: \"loc:@a\" } } }")
		CONST("z", D(2))
		OP1("c", "Identity", "b",
		    "attr { key: \"_class\" value { list { s: \"loc:@a\" "
		    "s: \"loc:@z\" } } }");
	ge_graph *g = parse_as(txt, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_view v;
	ge_transform_opts o = {0};
	ge_opid ab[2] = {OP(g, "a"), OP(g, "b")};
	mkview_ids(&v, g, ab, 2);
	o.dst_scope = "one";
	is_int(GE_OK, ge_copy(&v, &o, NULL, NULL, &err), "copy a and b");
	is_string("loc:@one/a", colo(g, "one/b"),
		  "colocated with the copy of a copied op");
	ge_view_free(&v);

	mkview_ids(&v, g, &ab[1], 1);
	o.dst_scope = "two";
	is_int(GE_OK, ge_copy(&v, &o, NULL, NULL, &err), "copy b alone");
	is_string("loc:@a", colo(g, "two/b"),
		  "colocated with the original when it stays reachable");
	ge_view_free(&v);

	ge_graph *d = ge_graph_new();
	mkview_ids(&v, g, &ab[1], 1);
	o.dst_graph = d;
	o.dst_scope = "";
	is_int(GE_OK, ge_copy(&v, &o, NULL, NULL, &err),
	       "copy b into another graph");
	is_string("", colo(d, "b"), "the colocation is dropped there");
	ok(!ge_op_attr_raw(d, OP(d, "b"), "_class", &(size_t){0}),
	   "... the attr is gone");
	ge_view_free(&v);

	ge_opid abc[3] = {OP(g, "a"), OP(g, "b"), OP(g, "c")};
	mkview_ids(&v, g, abc, 3);
	o.dst_scope = "x";
	is_int(GE_OK, ge_copy(&v, &o, NULL, NULL, &err),
	       "copy a, b, c into the other graph");
	is_string("loc:@x/a", colo(d, "x/c"),
		  "a copied target is remapped, a missing one dropped");
	is_int(0, problems(d), "the other graph validates");
	is_int(0, problems(g), "so does the source");
	ge_view_free(&v);
	ge_graph_free(d);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ scopes */

static void test_scopes(void)
{
	ge_graph *g = parse_as(CONST("a", D(2)) OP1("b", "Identity", "a", ""),
			    GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	ge_opid b = OP(g, "b");
	ge_view v;
	ge_tinfo *info = NULL;
	ge_transform_opts o = {0};
	o.dst_scope = "imported";
	mkview_ids(&v, g, &b, 1);
	is_int(GE_OK, ge_copy(&v, &o, NULL, &info, &err), "first copy");
	is_string("imported/", ge_tinfo_dst_scope(info), "scope imported/");
	ok(ge_graph_find(g, "imported/b") != GE_NOOP, "imported/b exists");
	ge_tinfo_free(info);
	ge_view_free(&v);
	mkview_ids(&v, g, &b, 1);
	is_int(GE_OK, ge_copy(&v, &o, NULL, &info, &err), "second copy");
	is_string("imported_1/", ge_tinfo_dst_scope(info),
		  "the scope is uniquified once: imported_1/");
	ok(ge_graph_find(g, "imported_1/b") != GE_NOOP, "imported_1/b exists");
	ge_tinfo_free(info);
	ge_view_free(&v);
	o.reuse_dst_scope = 1;
	mkview_ids(&v, g, &b, 1);
	is_int(GE_OK, ge_copy(&v, &o, NULL, &info, &err),
	       "third copy, reusing the scope");
	is_string("imported/", ge_tinfo_dst_scope(info), "scope imported/");
	ok(ge_graph_find(g, "imported/b_1") != GE_NOOP,
	   "the op name is uniquified instead: imported/b_1");
	ge_tinfo_free(info);
	ge_view_free(&v);

	/* names compare case-insensitively, as in TensorFlow */
	ge_opid cap = ge_graph_add_op(g, "Imported_2", "NoOp", NULL);
	(void)cap;
	o.reuse_dst_scope = 0;
	mkview_ids(&v, g, &b, 1);
	is_int(GE_OK, ge_copy(&v, &o, NULL, &info, &err), "fourth copy");
	is_string("imported_3/", ge_tinfo_dst_scope(info),
		  "Imported_2 takes imported_2 (case-insensitive)");
	ge_tinfo_free(info);
	ge_view_free(&v);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ loops */

#define CTRL(c) "input: \"^" c "\" "
static const char *LOOP =
	CONST("i0", "")
	"node { name: \"while/Enter\" op: \"Enter\" input: \"i0\" " F32
	"attr { key: \"frame_name\" value { s: \"while/while_context\" } } }\n"
	OP2("while/Merge", "Merge", "while/Enter", "while/NextIteration",
	    "attr { key: \"N\" value { i: 2 } } ")
	"node { name: \"while/Less/y\" op: \"Const\" " CTRL("while/Merge") DT
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
	"tensor_shape { } float_val: 10 } } } }\n"
	OP2("while/Less", "Less", "while/Merge", "while/Less/y", "")
	"node { name: \"while/LoopCond\" op: \"LoopCond\" "
	"input: \"while/Less\" }\n"
	OP2("while/Switch", "Switch", "while/Merge", "while/LoopCond",
	    "attr { key: \"_class\" value { list { s: \"loc:@while/Merge\" } } } ")
	OP1("while/Identity", "Identity", "while/Switch:1", "")
	"node { name: \"while/add/y\" op: \"Const\" " CTRL("while/Identity") DT
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
	"tensor_shape { } float_val: 1 } } } }\n"
	OP2("while/add", "Add", "while/Identity", "while/add/y", "")
	OP1("while/NextIteration", "NextIteration", "while/add", "")
	OP1("while/Exit", "Exit", "while/Switch", "")
	OP1("out", "Identity", "while/Exit", "")
	CONST("other", "");

static void test_loops(void)
{
	ge_graph *g = parse_as(LOOP, GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	is_int(0, problems(g), "the loop fixture validates");
	ge_view v;
	scope_view(&v, g, "while");
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	int rc = ge_copy(&v, &o, NULL, NULL, &err);
	is_int(GE_OK, rc, "copy the loop in the same graph %s", err.msg);
	is_string("copy/while/Enter:0,copy/while/NextIteration:0",
		  inputs_of(g, "copy/while/Merge"),
		  "Merge input order is kept");
	ok(!has_op_named_like(g, "geph_tmp"), "no geph_tmp op is left");
	is_string("copy/while/while_context",
		  sattr(g, "copy/while/Enter", "frame_name"),
		  "the copy's Enter has a frame of its own");
	is_string("while/while_context", sattr(g, "while/Enter", "frame_name"),
		  "the original keeps its frame");
	is_string("loc:@copy/while/Merge", colo(g, "copy/while/Switch"),
		  "colocation inside the loop follows");
	is_string("copy/while/Identity", ctrl_ins(g, "copy/while/add/y"),
		  "control inputs inside the loop follow");
	is_int(0, problems(g), "the graph validates");
	ge_view_free(&v);

	/* part of the loop: refused when the result's frames would not be
	 * valid (the copied Switch reading 'other', outside the loop, and
	 * the loop's LoopCond), the frames being looked at in a graph with
	 * an Enter (and in one with a RefEnter only) */
	ge_view part;
	mkview(&part, g, "while/Switch", "");
	o.dst_scope = "part";
	ge_tpair cut = {{OP(g, "while/Merge"), 0},
			{OP(g, "other"), 0}};
	rc = ge_copy_with_input_replacements(&part, &cut, 1, &o, NULL, NULL,
					     &err);
	ok(rc == GE_EINVAL && strstr(err.msg, "cut while loop"),
	   "a copy of part of a loop is refused: %s", err.msg);
	ge_view_free(&part);
	const char *at = strstr(LOOP, "op: \"Enter\"");
	ge_buf rt = GE_BUF_INIT;
	ge_buf_add(&rt, LOOP, (size_t)(at - LOOP));
	ge_buf_adds(&rt, "op: \"RefEnter\"");
	ge_buf_adds(&rt, at + strlen("op: \"Enter\""));
	ge_graph *rg = parse_as((const char *)rt.data, GE_FMT_GRAPHDEF_TEXT);
	ge_buf_free(&rt);
	mkview(&part, rg, "while/Switch", "");
	cut.from.op = OP(rg, "while/Merge");
	cut.to.op = OP(rg, "other");
	rc = ge_copy_with_input_replacements(&part, &cut, 1, &o, NULL, NULL,
					     &err);
	ok(rc == GE_EINVAL && strstr(err.msg, "cut while loop"),
	   "... with a RefEnter too: %s", err.msg);
	ge_view_free(&part);
	/* a copy of one Switch reading the loop's own tensors keeps the
	 * frames valid: allowed (graph_editor's colocation test) */
	mkview(&part, rg, "while/Switch", "");
	size_t before_ok = problems(rg);
	rc = ge_copy_with_input_replacements(&part, NULL, 0, &o, NULL, NULL,
					     &err);
	is_int(GE_OK, rc, "a copy of one Switch within its loop's graph");
	is_int((long long)before_ok, (long long)problems(rg),
	       "its frames stay valid");
	ge_view_free(&part);
	ge_graph_free(rg);

	/* in place (no scope): the frame still changes */
	scope_view(&v, g, "while");
	rc = ge_copy(&v, NULL, NULL, NULL, &err);
	is_int(GE_OK, rc, "copy the loop in place");
	is_string("while/while_context_1",
		  sattr(g, "while/Enter_1", "frame_name"),
		  "an in-place copy gets a fresh frame too");
	ge_view_free(&v);

	/* graph_replace through the loop pulls it in whole */
	ge_tref target = T(g, "out:0"), nt;
	ge_tpair r = {T(g, "i0:0"), T(g, "other:0")};
	ge_tinfo *info = NULL;
	o.dst_scope = "gr";
	size_t n0 = ge_graph_num_ops(g);
	rc = ge_graph_replace(g, &target, 1, &r, 1, &o, &nt, &info, &err);
	is_int(GE_OK, rc, "graph_replace(out, {i0 = other}) %s", err.msg);
	is_string("gr/out", ge_op_name(g, nt.op), "the target is mapped");
	is_string("other:0", inputs_of(g, "gr/while/Enter"),
		  "the copied loop reads the replacement");
	is_int((long long)n0 + 12, (long long)ge_graph_num_ops(g),
	       "the whole loop (11 ops) and out are copied");
	is_string("gr/while/Enter:0,gr/while/NextIteration:0",
		  inputs_of(g, "gr/while/Merge"), "Merge order kept again");
	is_string("gr/while/while_context",
		  sattr(g, "gr/while/Enter", "frame_name"), "fresh frame");
	is_int(0, problems(g), "the graph validates");
	ge_tinfo_free(info);

	/* a replacement inside the loop still copies the whole loop */
	target = T(g, "while/Exit:0");
	ge_tpair r2 = {T(g, "while/Identity:0"), T(g, "while/Identity:0")};
	o.dst_scope = "in";
	n0 = ge_graph_num_ops(g);
	rc = ge_graph_replace(g, &target, 1, &r2, 1, &o, &nt, NULL, &err);
	is_int(GE_OK, rc, "graph_replace from inside the loop %s", err.msg);
	ok(ge_graph_find(g, "in/while/Enter") != GE_NOOP &&
		   ge_graph_find(g, "in/while/Less/y") != GE_NOOP,
	   "the loop is copied whole (Enter and the loop's constants)");
	(void)n0;
	ge_graph_free(g);
}

/* ------------------------------------------------------------ import */

static void test_import(void)
{
	ge_graph *src = parse_as(PH("x", D(2))
			      OP1("y", "Identity", "x",
				  "attr { key: \"_class\" value { list { "
				  "s: \"loc:@x\" } } } ")
			      CONST("c", D(2))
			      "node { name: \"z\" op: \"Add\" input: \"y\" "
			      "input: \"c\" input: \"^c\" " F32 "}\n",
			      GE_FMT_GRAPHDEF_TEXT);
	ge_graph *dst = parse_as(CONST("in", D(2)) "node { name: \"gate\" op: "
			      "\"NoOp\" }\n" CONST("y", D(2)),
			      GE_FMT_GRAPHDEF_TEXT);
	ge_error err = {0};
	const char *from[2] = {"x", "^c"};
	ge_tref to[2] = {T(dst, "in:0"), {OP(dst, "gate"), GE_CONTROL}};
	ge_import_opts io = {0};
	io.prefix = "imp";
	io.map_from = from;
	io.map_to = to;
	io.n_map = 2;
	ge_tinfo *info = NULL;
	int rc = ge_import_graph(dst, src, &io, &info, &err);
	is_int(GE_OK, rc, "import with prefix and input_map %s", err.msg);
	is_string("in:0", inputs_of(dst, "imp/y"), "input_map: x:0 reads in:0");
	ok(ge_graph_find(dst, "imp/x") != GE_NOOP,
	   "the mapped op itself is still imported");
	is_string("loc:@imp/x", colo(dst, "imp/y"), "loc:@ is prefixed");
	is_string("imp/y:0,imp/c:0", inputs_of(dst, "imp/z"),
		  "inputs remapped");
	is_string("gate", ctrl_ins(dst, "imp/z"),
		  "a control input mapped with ^c");
	ge_tref t;
	ok(ge_tinfo_transformed_name(info, "z:0", &t) &&
		   !strcmp(ge_op_name(dst, t.op), "imp/z"),
	   "the info maps src to dst names");
	ge_tinfo_free(info);

	io.n_map = 0;
	rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_OK, rc, "a second import under the same prefix");
	ok(ge_graph_find(dst, "imp_1/z") != GE_NOOP,
	   "the prefix is uniquified: imp_1/");
	io.prefix = NULL;
	rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_OK, rc, "an import at the root");
	ok(ge_graph_find(dst, "y_1") != GE_NOOP &&
		   ge_graph_find(dst, "x") != GE_NOOP,
	   "names are uniquified where taken (y -> y_1)");
	is_string("y_1:0,c:0", inputs_of(dst, "z"), "... and inputs follow");
	is_int(0, problems(dst), "the destination validates");

	const char *bad = "nope:0";
	ge_tref bt = T(dst, "in:0");
	io.map_from = &bad;
	io.map_to = &bt;
	io.n_map = 1;
	size_t n0 = ge_graph_num_ops(dst);
	rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_EINVAL, rc, "an input_map key that names nothing is refused");
	is_int((long long)n0, (long long)ge_graph_num_ops(dst),
	       "... and nothing is imported");
	ge_graph_free(src);

	/* a dangling input of the source is bound by input_map */
	src = parse_as(OP1("a", "Identity", "unbound:0", ""),
		    GE_FMT_GRAPHDEF_TEXT);
	const char *ub = "unbound";
	io.map_from = &ub;
	io.prefix = "b";
	rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_OK, rc, "input_map binds a dangling input %s", err.msg);
	is_string("in:0", inputs_of(dst, "b/a"),
		  "... which reads the given tensor");
	io.n_map = 0;
	rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_EGRAPH, rc, "an unbound dangling input is refused");
	ok(strstr(err.msg, "unbound") != NULL, "... naming it: %s", err.msg);
	ge_graph_free(src);
	ge_graph_free(dst);
}

/* Import of a MetaGraphDef: collections merged with names mapped. */
static void test_import_meta(void)
{
	ge_graph *src = parse_as(TRAIN, GE_FMT_META_TEXT);
	ge_graph *dst = ge_graph_new();
	ge_error err = {0};
	ge_import_opts io = {0};
	io.prefix = "m";
	int rc = ge_import_graph(dst, src, &io, NULL, &err);
	is_int(GE_OK, rc, "import a MetaGraphDef %s", err.msg);
	is_string("m/GradientDescent", coll(dst, "train_op"),
		  "node_list entries are prefixed");
	is_string("m/loss:0,m/pred:0,m/init", coll(dst, "my_metrics"),
		  "collection names are kept");
	is_int(0, problems(dst), "the destination validates");
	ge_graph_free(src);
	ge_graph_free(dst);
}

/* ------------------------------------------------------------ export */

static void test_export(void)
{
	ge_graph *g = parse_as("meta_info_def { }\ngraph_def {\n"
			    CONST("outside", D(2))
			    "node { name: \"gate\" op: \"NoOp\" }\n"
			    OP1("s/a", "Identity", "outside",
				"input: \"^gate\" attr { key: \"_class\" value "
				"{ list { s: \"loc:@outside\" } } } ")
			    OP2("s/b", "Add", "s/a", "outside",
				"attr { key: \"_class\" value "
				"{ list { s: \"loc:@s/a\" } } } ")
			    OP1("t/c", "Identity", "s/b", "")
			    "}\n"
			    "collection_def { key: \"mine\" value { node_list { "
			    "value: \"s/b:0\" value: \"t/c\" } } }\n",
			    GE_FMT_META_TEXT);
	ge_graph *e = NULL;
	ge_error err = {0};
	int rc = ge_graph_export_scoped(g, "s", &e, &err);
	is_int(GE_OK, rc, "export scope s %s", err.msg);
	if (!e) {
		ge_graph_free(g);
		return;
	}
	is_int(3, (long long)ge_graph_num_ops(e),
	       "two ops and one placeholder");
	is_string("geph__outside_0:0", inputs_of(e, "a"),
		  "an outside input becomes a placeholder, scope stripped");
	is_string("a:0,geph__outside_0:0", inputs_of(e, "b"),
		  "one placeholder per outside tensor");
	is_string("", ctrl_ins(e, "a"), "outside control inputs are dropped");
	is_string("loc:@a", colo(e, "b"), "loc:@ inside the scope is stripped");
	is_string("", colo(e, "a"), "loc:@ outside the scope is dropped");
	is_string("b:0", coll(e, "mine"),
		  "collections keep the scope's entries, stripped");
	is_int(0, problems(e), "the exported graph validates");

	/* export then import: a full copy with nothing shared */
	ge_import_opts io = {0};
	io.prefix = "s2";
	const char *from = "geph__outside_0:0";
	ge_tref to = T(g, "outside:0");
	io.map_from = &from;
	io.map_to = &to;
	io.n_map = 1;
	rc = ge_import_graph(g, e, &io, NULL, &err);
	is_int(GE_OK, rc, "import the export under s2 %s", err.msg);
	is_string("outside:0", inputs_of(g, "s2/a"),
		  "rebound to the original input");
	is_int(0, problems(g), "the graph validates");
	ge_graph_free(e);
	ge_graph_free(g);
}

int main(void)
{
	test_graph_replace_dense();
	test_copy_with_replacements();
	test_output_shapes();
	test_training_copy();
	test_custom_handler();
	test_info();
	test_info_orders();
	test_memo();
	test_colocation();
	test_scopes();
	test_loops();
	test_import();
	test_import_meta();
	test_export();
	return tap_done();
}
