/* varpolicy.c: variables policies of transforms on a small MetaGraphDef
 * written here (a reference variable with a V2 saver restoring all
 * variables from one RestoreV2, a resource variable): duplicate within
 * the graph and into another graph, share, auto, a policy function, and
 * failures that leave the graph unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "editor/subgraph.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define STR(name, ...) \
	"node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" " \
	"value { type: DT_STRING } } attr { key: \"value\" value { tensor " \
	"{ dtype: DT_STRING tensor_shape { dim { size: 2 } } " __VA_ARGS__ \
	" } } } }\n"
#define FLT(name, v) \
	"node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" " \
	"value { type: DT_FLOAT } } attr { key: \"value\" value { tensor " \
	"{ dtype: DT_FLOAT tensor_shape {} float_val: " v " } } } }\n"

static const char META[] =
	"graph_def {\n"
	"node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	FLT("w/initial_value", "1.5")
	"node { name: \"w\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
	" attr { key: \"shape\" value { shape {} } } }\n"
	"node { name: \"w/Assign\" op: \"Assign\" input: \"w\" input: \"w/initial_value\""
	" attr { key: \"T\" value { type: DT_FLOAT } }"
	" attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	"node { name: \"w/read\" op: \"Identity\" input: \"w\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	FLT("v/Initializer/initial_value", "2.5")
	"node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
	" attr { key: \"shape\" value { shape {} } } attr { key: \"shared_name\" value { s: \"v\" } } }\n"
	"node { name: \"v/Assign\" op: \"AssignVariableOp\" input: \"v\""
	" input: \"v/Initializer/initial_value\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"node { name: \"v/Read/ReadVariableOp\" op: \"ReadVariableOp\" input: \"v\""
	" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"node { name: \"mul\" op: \"Mul\" input: \"x\" input: \"w/read\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"y\" op: \"Add\" input: \"mul\" input: \"v/Read/ReadVariableOp\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"init\" op: \"NoOp\" input: \"^w/Assign\" input: \"^v/Assign\" }\n"
	"node { name: \"save/Const\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } }"
	" attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape {} string_val: \"model\" } } } }\n"
	STR("save/SaveV2/tensor_names", "string_val: \"v\" string_val: \"w\"")
	STR("save/SaveV2/shape_and_slices", "string_val: \"\" string_val: \"\"")
	"node { name: \"save/SaveV2\" op: \"SaveV2\" input: \"save/Const\""
	" input: \"save/SaveV2/tensor_names\" input: \"save/SaveV2/shape_and_slices\""
	" input: \"v/Read/ReadVariableOp\" input: \"w\""
	" attr { key: \"dtypes\" value { list { type: DT_FLOAT type: DT_FLOAT } } } }\n"
	STR("save/RestoreV2/tensor_names", "string_val: \"v\" string_val: \"w\"")
	STR("save/RestoreV2/shape_and_slices", "string_val: \"\" string_val: \"\"")
	"node { name: \"save/RestoreV2\" op: \"RestoreV2\" input: \"save/Const\""
	" input: \"save/RestoreV2/tensor_names\" input: \"save/RestoreV2/shape_and_slices\""
	" attr { key: \"dtypes\" value { list { type: DT_FLOAT type: DT_FLOAT } } } }\n"
	"node { name: \"save/Identity\" op: \"Identity\" input: \"save/RestoreV2\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/AssignVariableOp\" op: \"AssignVariableOp\" input: \"v\""
	" input: \"save/Identity\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/Assign\" op: \"Assign\" input: \"w\" input: \"save/RestoreV2:1\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/restore_all\" op: \"NoOp\" input: \"^save/AssignVariableOp\""
	" input: \"^save/Assign\" }\n"
	"}\n"
	"collection_def { key: \"variables\" value { bytes_list {"
	" value: \"\\n\\003w:0\\022\\010w/Assign\\032\\010w/read:0\""
	" value: \"\\n\\003v:0\\022\\010v/Assign\\032\\027v/Read/ReadVariableOp:0(\\001\" } } }\n"
	"collection_def { key: \"trainable_variables\" value { bytes_list {"
	" value: \"\\n\\003w:0\\022\\010w/Assign\\032\\010w/read:0\" } } }\n";

static ge_graph *parse(void)
{
	ge_graph *g = NULL;
	ge_error err = {0};
	if (ge_parse((const uint8_t *)META, sizeof META - 1, GE_FMT_META_TEXT,
		     "test.pbtxt", NULL, &g, &err) != GE_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return g;
}

static ge_opid op(const ge_graph *g, const char *name)
{
	return ge_graph_find(g, name);
}

static ge_view view_of(ge_graph *g, const char *const *names, size_t n)
{
	ge_opid ids[16];
	ge_view v = GE_VIEW_INIT;
	ge_error err;
	for (size_t i = 0; i < n; i++)
		ids[i] = op(g, names[i]);
	if (ge_view_init(&v, g, ids, n, NULL, 0, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return v;
}

static size_t vardef_count(ge_graph *g, const char *coll)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return 0;
	return c->bytes_list->n_value;
}

static char *vardef_name(ge_graph *g, const char *coll, size_t i)
{
	static char buf[256];
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	buf[0] = 0;
	if (!c || i >= c->bytes_list->n_value)
		return buf;
	Tensorflow__VariableDef *d = tensorflow__variable_def__unpack(
		NULL, c->bytes_list->value[i].len, c->bytes_list->value[i].data);
	if (d) {
		snprintf(buf, sizeof buf, "%s %s %s %d", d->variable_name,
			 d->initializer_name, d->snapshot_name, d->is_resource);
		tensorflow__variable_def__free_unpacked(d, NULL);
	}
	return buf;
}

static const char *string_at(const ge_graph *g, ge_opid c, size_t i)
{
	static char buf[256];
	const Tensorflow__AttrValue *v = ge_op_attr(g, c, "value", NULL);
	buf[0] = 0;
	if (v && v->tensor && i < v->tensor->n_string_val) {
		size_t n = v->tensor->string_val[i].len;
		if (n >= sizeof buf)
			n = sizeof buf - 1;
		if (n)
			memcpy(buf, v->tensor->string_val[i].data, n);
		buf[n] = 0;
	}
	return buf;
}

static const char *input_name(const ge_graph *g, const char *o, size_t i)
{
	ge_opid id = op(g, o);
	if (id == GE_NOOP || i >= ge_op_num_inputs(g, id))
		return "(none)";
	return ge_op_name(g, ge_op_input(g, id, i).op);
}

static void variables(void)
{
	ge_graph *g = parse();
	ge_varlist vl;
	is_int(GE_OK, ge_graph_variables(g, &vl, NULL), "variables");
	is_int(2, (long long)vl.n, "two variables");
	is_string("w", vl.v[0].name, "w first (node order)");
	is_int(1, vl.v[0].trainable, "w is trainable");
	is_int(0, vl.v[1].trainable, "v is not");
	is_int(GE_VAR_RESOURCE, vl.v[1].kind, "v is a resource variable");
	is_string("w", vl.v[0].key, "w's key from the saver");
	is_int(op(g, "v/Assign"), vl.v[1].initializer,
	       "the restore assign is not v's initializer");
	ge_varlist_free(&vl);
	ge_graph_free(g);
}

static void duplicate(void)
{
	ge_graph *g = parse();
	static const char *const names[] = {"mul", "y"};
	ge_view v = view_of(g, names, 2), out = GE_VIEW_INIT;
	ge_transform_opts o = {0};
	o.dst_scope = "tower";
	ge_var_opts vo = {GE_VARS_DUPLICATE, NULL, NULL};
	ge_ckpt_plan plan = {0};
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, &out, NULL, &plan, &err);
	is_int(GE_OK, rc, "duplicate the variables a view reads");
	if (rc)
		tap_diag("%s", err.msg);
	is_string("tower/w/read", input_name(g, "tower/mul", 1),
		  "tower/mul reads tower/w/read");
	is_string("tower/v/Read/ReadVariableOp", input_name(g, "tower/y", 1),
		  "tower/y reads the duplicate's read");
	is_string("tower/v", input_name(g, "tower/v/Assign", 0),
		  "the initializer assigns the duplicate");
	is_int(4, (long long)vardef_count(g, "variables"), "four VariableDefs");
	is_string("tower/v:0 tower/v/Assign tower/v/Read/ReadVariableOp:0 1",
		  vardef_name(g, "variables", 3), "the resource duplicate's");
	is_int(2, (long long)vardef_count(g, "trainable_variables"),
	       "one more trainable");
	size_t nc = ge_op_num_control_inputs(g, op(g, "init"));
	is_int(4, (long long)nc, "init runs four initializers");
	ge_opid s = op(g, "save/SaveV2");
	is_int(7, (long long)ge_op_num_inputs(g, s), "SaveV2 saves four");
	is_string("tower/w", string_at(g, ge_op_input(g, s, 1).op, 3),
		  "the keys follow the save order");
	is_string("tower/v/Read/ReadVariableOp", input_name(g, "save/SaveV2", 5),
		  "the resource duplicate is saved through its read");
	ge_opid R = op(g, "save/RestoreV2");
	is_int(4, ge_op_num_outputs(g, R), "the one RestoreV2 restores four");
	is_string("tower/v", string_at(g, ge_op_input(g, R, 1).op, 2),
		  "its names grew in the same order");
	is_int(4, (long long)ge_op_num_control_inputs(g, op(g, "save/restore_all")),
	       "restore_all groups four assigns");
	ge_opid a = ge_op_control_input(g, op(g, "save/restore_all"), 3);
	is_string("tower/w", input_name(g, ge_op_name(g, a), 0),
		  "the last restores tower/w");
	is_int(3, ge_op_input(g, a, 1).index, "from output 3");
	is_int(2, (long long)plan.n, "two checkpoint copies");
	if (plan.n == 2)
		ok(!strcmp(plan.src[0], "w") && !strcmp(plan.dst[0], "tower/w"),
		   "w -> tower/w");
	is_int(3, (long long)out.inputs.n, "the result view keeps the inputs");
	if (out.inputs.n == 3)
		is_string("tower/w/read", ge_op_name(g, out.inputs.v[1].op),
			  "the variable input maps to the duplicate's read");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &rep), "valid graph");
	if (rep.len)
		tap_diag("%s", (char *)rep.data);
	ge_buf_free(&rep);
	ge_ckpt_plan_free(&plan);
	ge_view_free(&v);
	ge_view_free(&out);
	ge_graph_free(g);
}

static void other_graph(void)
{
	ge_graph *g = parse(), *h = ge_graph_new();
	static const char *const names[] = {"w", "w/read", "mul"};
	ge_view v = view_of(g, names, 3);
	size_t before = ge_graph_num_ops(g);
	ge_transform_opts o = {0};
	o.dst_graph = h;
	ge_var_opts vo = {GE_VARS_SHARE, NULL, NULL};
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, NULL, &err);
	ok(rc != GE_OK && strstr(err.msg, "cannot be shared"),
	   "sharing with another graph fails: %s", err.msg);
	is_int(0, (long long)ge_graph_num_ops(h), "and adds nothing");
	vo.policy = GE_VARS_DUPLICATE;
	ge_ckpt_plan plan = {0};
	rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, &plan, &err);
	is_int(GE_OK, rc, "duplicate into another graph");
	ok(op(h, "w") != GE_NOOP && op(h, "w/Assign") != GE_NOOP &&
		   op(h, "w/initial_value") != GE_NOOP,
	   "the variable comes with its initializer");
	is_int(1, (long long)vardef_count(h, "variables"),
	       "the destination gets its VariableDef");
	is_string("w:0 w/Assign w/read:0 0", vardef_name(h, "variables", 0),
		  "with the destination's names");
	is_int((long long)before, (long long)ge_graph_num_ops(g),
	       "the source graph is unchanged");
	is_int(2, (long long)vardef_count(g, "variables"),
	       "and so are its collections");
	ge_ckpt_plan_free(&plan);
	ge_view_free(&v);
	ge_graph_free(h);
	ge_graph_free(g);
}

static int refuse(ge_graph *g, const ge_variable *v, void *ud)
{
	(void)g;
	(void)ud;
	return !strcmp(v->name, "v") ? -1 : GE_VARS_DUPLICATE;
}

static void auto_and_failures(void)
{
	ge_graph *g = parse();
	/* auto: a view holding the variable op duplicates it */
	static const char *const with[] = {"w", "w/read", "mul"};
	ge_view v = view_of(g, with, 3);
	ge_transform_opts o = {0};
	o.dst_scope = "a";
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, NULL, NULL, NULL, NULL, &err);
	is_int(GE_OK, rc, "auto");
	ok(op(g, "a/w/Assign") != GE_NOOP, "auto duplicates a copied variable");
	is_int(3, (long long)vardef_count(g, "variables"),
	       "and gives it a VariableDef");
	ge_view_free(&v);
	/* auto: a view that only reads a variable gets a placeholder */
	static const char *const without[] = {"mul"};
	v = view_of(g, without, 1);
	o.dst_scope = "b";
	rc = ge_copy_vars(&v, &o, NULL, NULL, NULL, NULL, &err);
	is_int(GE_OK, rc, "auto without the variable");
	is_string("Placeholder", ge_op_type(g, ge_op_input(g, op(g, "b/mul"), 1).op),
		  "graph_editor's placeholder");
	ge_view_free(&v);
	/* a policy function that fails: nothing changes */
	static const char *const both[] = {"mul", "y"};
	v = view_of(g, both, 2);
	size_t before = ge_graph_num_ops(g);
	ge_var_opts vo = {0, refuse, NULL};
	o.dst_scope = "c";
	rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, NULL, &err);
	ok(rc != GE_OK && strstr(err.msg, "'v'"), "a failing policy: %s",
	   err.msg);
	is_int((long long)before, (long long)ge_graph_num_ops(g),
	       "leaves the graph as it was");
	ge_view_free(&v);
	ge_graph_free(g);
}

int main(void)
{
	variables();
	duplicate();
	other_graph();
	auto_and_failures();
	return tap_done();
}
