/* varedit.c: renaming and removing variables of a small MetaGraphDef
 * written here (reference variables w and u, a resource variable v, a V2
 * saver restoring all three from one RestoreV2): ops, collections, saver
 * constants and arities, the checkpoint plan and the checkpoint it
 * writes, refusals that leave the graph unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "base/bundle.h"
#include "variables/checkpoint.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define STR(name, ...) \
	"node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" " \
	"value { type: DT_STRING } } attr { key: \"value\" value { tensor " \
	"{ dtype: DT_STRING tensor_shape { dim { size: 3 } } " __VA_ARGS__ \
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
	FLT("u/initial_value", "7.0")
	"node { name: \"u\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
	" attr { key: \"shape\" value { shape {} } } }\n"
	"node { name: \"u/Assign\" op: \"Assign\" input: \"u\" input: \"u/initial_value\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"u/read\" op: \"Identity\" input: \"u\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"mul\" op: \"Mul\" input: \"x\" input: \"w/read\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"y\" op: \"Add\" input: \"mul\" input: \"v/Read/ReadVariableOp\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"init\" op: \"NoOp\" input: \"^w/Assign\" input: \"^u/Assign\" input: \"^v/Assign\" }\n"
	"node { name: \"save/Const\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } }"
	" attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape {} string_val: \"model\" } } } }\n"
	STR("save/SaveV2/tensor_names", "string_val: \"v\" string_val: \"u\" string_val: \"w\"")
	STR("save/SaveV2/shape_and_slices", "string_val: \"\" string_val: \"\" string_val: \"\"")
	"node { name: \"save/SaveV2\" op: \"SaveV2\" input: \"save/Const\""
	" input: \"save/SaveV2/tensor_names\" input: \"save/SaveV2/shape_and_slices\""
	" input: \"v/Read/ReadVariableOp\" input: \"u\" input: \"w\""
	" attr { key: \"dtypes\" value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } } }\n"
	STR("save/RestoreV2/tensor_names", "string_val: \"v\" string_val: \"u\" string_val: \"w\"")
	STR("save/RestoreV2/shape_and_slices", "string_val: \"\" string_val: \"\" string_val: \"\"")
	"node { name: \"save/RestoreV2\" op: \"RestoreV2\" input: \"save/Const\""
	" input: \"save/RestoreV2/tensor_names\" input: \"save/RestoreV2/shape_and_slices\""
	" attr { key: \"dtypes\" value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } } }\n"
	"node { name: \"save/Identity\" op: \"Identity\" input: \"save/RestoreV2\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/AssignVariableOp\" op: \"AssignVariableOp\" input: \"v\""
	" input: \"save/Identity\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/Assign\" op: \"Assign\" input: \"w\" input: \"save/RestoreV2:2\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/Assign_1\" op: \"Assign\" input: \"u\" input: \"save/RestoreV2:1\""
	" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
	"node { name: \"save/restore_all\" op: \"NoOp\" input: \"^save/AssignVariableOp\""
	" input: \"^save/Assign_1\" input: \"^save/Assign\" }\n"
	"}\n"
	"collection_def { key: \"variables\" value { bytes_list {"
	" value: \"\\n\\003w:0\\022\\010w/Assign\\032\\010w/read:0\""
	" value: \"\\n\\003v:0\\022\\010v/Assign\\032\\027v/Read/ReadVariableOp:0(\\001\""
	" value: \"\\n\\003u:0\\022\\010u/Assign\\032\\010u/read:0\" } } }\n"
	"collection_def { key: \"trainable_variables\" value { bytes_list {"
	" value: \"\\n\\003w:0\\022\\010w/Assign\\032\\010w/read:0\" } } }\n";

static ge_graph *fixture(void)
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

static const char *input_name(const ge_graph *g, const char *o, size_t i)
{
	static char buf[256];
	ge_opid id = op(g, o);
	if (id == GE_NOOP || i >= ge_op_num_inputs(g, id))
		return "(none)";
	ge_tref t = ge_op_input(g, id, i);
	snprintf(buf, sizeof buf, "%s:%d", ge_op_name(g, t.op), (int)t.index);
	return buf;
}

static char *vardefs(ge_graph *g, const char *coll)
{
	static char buf[512];
	buf[0] = 0;
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return buf;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		Tensorflow__VariableDef *d = tensorflow__variable_def__unpack(
			NULL, c->bytes_list->value[i].len,
			c->bytes_list->value[i].data);
		if (!d)
			continue;
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof buf - l, "%s%s %s %s", i ? "," : "",
			 d->variable_name, d->initializer_name,
			 d->snapshot_name);
		tensorflow__variable_def__free_unpacked(d, NULL);
	}
	return buf;
}

static const char *key_of(ge_graph *g, const char *var)
{
	static char buf[256];
	ge_varlist vl = {0};
	buf[0] = 0;
	if (ge_graph_variables(g, &vl, NULL) == GE_OK) {
		const ge_variable *v = ge_varlist_find(&vl, g, var);
		snprintf(buf, sizeof buf, "%s", v ? v->key : "(none)");
		ge_varlist_free(&vl);
	}
	return buf;
}

static void rename_var(void)
{
	ge_graph *g = fixture();
	ge_error err = {0};
	int rc = ge_variable_rename(g, "w", "beta", &err);
	is_int(GE_OK, rc, "rename w to beta");
	if (rc)
		tap_diag("%s", err.msg);
	ok(op(g, "w") == GE_NOOP && op(g, "w/Assign") == GE_NOOP &&
		   op(g, "w/read") == GE_NOOP, "no op is named w any more");
	ok(op(g, "beta") != GE_NOOP && op(g, "beta/Assign") != GE_NOOP &&
		   op(g, "beta/read") != GE_NOOP && op(g, "w/initial_value") ==
		   GE_NOOP && op(g, "beta/initial_value") != GE_NOOP,
	   "beta, beta/Assign, beta/read, beta/initial_value");
	is_string("beta/read:0", input_name(g, "mul", 1), "mul reads beta/read");
	is_string("v,u,beta", names_of(g, "save/SaveV2", 1),
		  "SaveV2 tensor_names name beta");
	is_string("v,u,beta", names_of(g, "save/RestoreV2", 1),
		  "RestoreV2 tensor_names name beta");
	is_string("beta", key_of(g, "beta"), "beta's checkpoint key is beta");
	is_string("beta:0 beta/Assign beta/read:0,v:0 v/Assign "
		  "v/Read/ReadVariableOp:0,u:0 u/Assign u/read:0",
		  vardefs(g, "variables"), "the VariableDef follows");
	const ge_ckpt_plan *p = ge_graph_checkpoint_plan(g);
	ok(p && p->n == 1 && !strcmp(p->src[0], "w") &&
		   !strcmp(p->dst[0], "beta") && p->rename[0],
	   "the plan renames w to beta");
	is_int(0, (long long)issues(g), "the graph validates");

	/* refusals change nothing */
	size_t n0 = ge_graph_num_ops(g);
	rc = ge_variable_rename(g, "beta", "v", &err);
	is_int(GE_EINVAL, rc, "renaming onto an op's name fails");
	ok(strstr(err.msg, "'v'") != NULL, "naming it: %s", err.msg);
	ok(op(g, "beta") != GE_NOOP && ge_graph_num_ops(g) == n0,
	   "and changes nothing");
	rc = ge_variable_rename(g, "mul", "m", &err);
	is_int(GE_ENOTFOUND, rc, "mul is no variable");
	ok(strstr(err.msg, "test.pbtxt") && strstr(err.msg, "'mul'"),
	   "naming the graph and the name: %s", err.msg);

	/* a duplicate of a renamed variable copies the source key */
	ge_graph_add_checkpoint_copy(g, "beta", "copy/beta");
	p = ge_graph_checkpoint_plan(g);
	ok(p && p->n == 2 && !strcmp(p->src[1], "w") && !p->rename[1],
	   "a copy of beta reads w from the source checkpoint");

	/* the checkpoint written from the plan */
	char dir[] = "/tmp/ge-varedit-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char src[256], dst[256];
	snprintf(src, sizeof src, "%s/src", dir);
	snprintf(dst, sizeof dst, "%s/dst", dir);
	ge_bundle_writer *w;
	float vals[3] = {2.5f, 7.0f, 1.5f};
	const char *keys[3] = {"v", "u", "w"};
	rc = ge_bundle_writer_open(src, &w, &err);
	for (int i = 0; i < 3 && !rc; i++)
		rc = ge_bundle_writer_add(w, keys[i], 1, 0, NULL, &vals[i], 4,
					  &err);
	if (!rc)
		rc = ge_bundle_writer_finish(w, &err);
	is_int(GE_OK, rc, "a source checkpoint");
	ge_bundle *b = NULL, *b2 = NULL;
	if (!rc)
		rc = ge_bundle_open(src, &b, &err);
	if (!rc)
		rc = ge_checkpoint_apply_plan(b, dst, p, &err);
	is_int(GE_OK, rc, "apply the plan");
	if (rc)
		tap_diag("%s", err.msg);
	if (!rc && ge_bundle_open(dst, &b2, &err) == GE_OK) {
		is_int(4, (long long)ge_bundle_count(b2),
		       "u, v, beta, copy/beta");
		ok(ge_bundle_find(b2, "beta") && ge_bundle_find(b2, "copy/beta"),
		   "beta and copy/beta are there");
		ok(!ge_bundle_find(b2, "w"), "w is not");
		ge_bundle_close(b2);
	} else {
		ok(0, "u, v, beta, copy/beta");
		ok(0, "beta and copy/beta are there");
		ok(0, "w is not");
	}
	if (b)
		ge_bundle_close(b);
	ge_remove_tree(dir);

	/* renamed back: the rename entry goes */
	rc = ge_variable_rename(g, "beta", "w", &err);
	is_int(GE_OK, rc, "rename beta back to w");
	p = ge_graph_checkpoint_plan(g);
	ok(p && p->n == 1 && !strcmp(p->dst[0], "copy/beta"),
	   "only the copy is left in the plan");
	is_string("v,u,w", names_of(g, "save/SaveV2", 1), "SaveV2 names w");
	is_int(0, (long long)issues(g), "the graph validates");
	ge_graph_free(g);
}

static void remove_var(void)
{
	ge_graph *g = fixture();
	ge_error err = {0};
	size_t n0 = ge_graph_num_ops(g);
	int rc = ge_variable_remove(g, "w", &err);
	is_int(GE_EGRAPH, rc, "w is read: removal refused");
	ok(strstr(err.msg, "'mul'") != NULL, "naming the reader: %s", err.msg);
	is_int((long long)n0, (long long)ge_graph_num_ops(g), "nothing removed");
	is_string("v,u,w", names_of(g, "save/SaveV2", 1), "the saver unchanged");

	rc = ge_variable_remove(g, "u", &err);
	is_int(GE_OK, rc, "remove u, which nothing reads");
	if (rc)
		tap_diag("%s", err.msg);
	ok(op(g, "u") == GE_NOOP && op(g, "u/Assign") == GE_NOOP &&
		   op(g, "u/read") == GE_NOOP &&
		   op(g, "u/initial_value") == GE_NOOP &&
		   op(g, "save/Assign_1") == GE_NOOP,
	   "its ops and its restore assign are gone");
	is_int((long long)n0 - 5, (long long)ge_graph_num_ops(g), "five ops");
	is_string("v,w", names_of(g, "save/SaveV2", 1), "SaveV2 names v,w");
	is_string(",", names_of(g, "save/SaveV2", 2), "two shape_and_slices");
	is_int(5, (long long)ge_op_num_inputs(g, op(g, "save/SaveV2")),
	       "SaveV2 has 3 + 2 inputs");
	is_string("w:0", input_name(g, "save/SaveV2", 4), "saving w last");
	is_int(2, n_dtypes(g, "save/SaveV2"), "SaveV2 dtypes: 2");
	is_string("v,w", names_of(g, "save/RestoreV2", 1), "RestoreV2 names v,w");
	is_int(2, n_dtypes(g, "save/RestoreV2"), "RestoreV2 dtypes: 2");
	is_string("save/RestoreV2:1", input_name(g, "save/Assign", 1),
		  "w's restore reads output 1 now");
	is_int(2, (long long)ge_op_num_control_inputs(g, op(g, "init")),
	       "init groups two initializers");
	is_int(2, (long long)ge_op_num_control_inputs(g, op(g,
							  "save/restore_all")),
	       "restore_all groups two assigns");
	is_string("w:0 w/Assign w/read:0,v:0 v/Assign v/Read/ReadVariableOp:0",
		  vardefs(g, "variables"), "its VariableDef is gone");
	is_int(0, (long long)issues(g), "the graph validates");

	/* rerouted, w goes too */
	ge_op_set_input(g, op(g, "mul"), 1, (ge_tref){op(g, "x"), 0}, NULL);
	rc = ge_variable_remove(g, "w", &err);
	is_int(GE_OK, rc, "w, rerouted, is removed");
	is_string("v", names_of(g, "save/SaveV2", 1), "SaveV2 names v");
	is_string("v", names_of(g, "save/RestoreV2", 1), "RestoreV2 names v");
	is_int(4, (long long)ge_op_num_inputs(g, op(g, "save/SaveV2")),
	       "SaveV2 has 3 + 1 inputs");
	is_int(1, n_dtypes(g, "save/RestoreV2"), "RestoreV2 dtypes: 1");
	is_string("", vardefs(g, "trainable_variables"),
		  "trainable_variables is empty");
	is_int(0, (long long)issues(g), "the graph validates");

	/* v is read by y */
	rc = ge_variable_remove(g, "v", &err);
	is_int(GE_EGRAPH, rc, "v is read: refused");
	ok(strstr(err.msg, "'y'") != NULL, "naming y: %s", err.msg);
	rc = ge_variable_remove(g, "nope", &err);
	is_int(GE_ENOTFOUND, rc, "no such variable");
	ge_graph_free(g);
}

/* The whole model cloned in its own graph: each saver saves its own
 * variables under their keys (doc/variables.md, the one rule), and
 * validate checks savers, variables and the plan against each other. */
static void clone_whole(void)
{
	ge_graph *g = fixture();
	ge_error err = {0};
	size_t cap = ge_graph_capacity(g), n = 0;
	ge_opid *ids = malloc(cap * sizeof *ids);
	for (size_t i = 0; i < cap; i++)
		if (ge_op_alive(g, (ge_opid)i))
			ids[n++] = (ge_opid)i;
	ge_view v = GE_VIEW_INIT;
	ok(!ge_view_init(&v, g, ids, n, NULL, 0, &err), "a view of every op");
	free(ids);
	ge_transform_opts o = {0};
	o.dst_scope = "clone";
	ge_var_opts vo = {GE_VARS_DUPLICATE, NULL, NULL};
	ok(!ge_copy_vars(&v, &o, &vo, NULL, NULL, NULL, &err),
	   "clone the model: %s", err.msg);
	is_string("clone/w", key_of(g, "clone/w"), "the clone's key is its name");
	is_string("w", key_of(g, "w"), "the original's key stays");
	is_string("clone/v", key_of(g, "clone/v"),
		  "a resource clone's key, through its read");
	size_t nn = 0;
	Tensorflow__AttrValue const *a = ge_op_attr(
		g, op(g, "save/SaveV2/tensor_names"), "value", NULL);
	nn = a && a->tensor ? a->tensor->n_string_val : 0;
	is_int(3, (long long)nn, "the original saver saves its three alone");
	a = ge_op_attr(g, op(g, "clone/save/RestoreV2/tensor_names"), "value",
		       NULL);
	ok(a && a->tensor && a->tensor->n_string_val == 3 &&
		   !memcmp(a->tensor->string_val[2].data, "clone/w", 7),
	   "the clone's restore reads the clone's keys");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_variables_validate(g, &rep),
	       "savers, variables and plan agree");
	ge_buf_free(&rep);
	ge_graph_add_checkpoint_copy(g, "w", "elsewhere");
	rep = (ge_buf)GE_BUF_INIT;
	ok(ge_variables_validate(g, &rep) == 1 && rep.data &&
		   strstr((const char *)rep.data,
			  "the checkpoint plan copies 'w' to 'elsewhere', "
			  "but no variable is saved as 'elsewhere'"),
	   "a plan entry no variable is saved under: %s",
	   rep.data ? (const char *)rep.data : "");
	ge_buf_free(&rep);
	ge_view_free(&v);
	ge_graph_free(g);
}

int main(void)
{
	rename_var();
	remove_var();
	clone_whole();
	return tap_done();
}
