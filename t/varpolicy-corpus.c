/* varpolicy-corpus.c: copying half_plus_two's computation under copy/
 * with its variables duplicated or shared: collections, init op, saver and
 * the SavedModel's checkpoint follow; then the same on the resource-
 * variable half_plus_two of TF Serving. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#include "base/bundle.h"
#include "variables/checkpoint.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define HPT "tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/" \
	    "half_plus_two/00000123"
#define HPT_RES "tensorflow__serving/tensorflow_serving/servables/" \
		"tensorflow/testdata/saved_model_half_plus_two_cpu_with_" \
		"saved_model_config/00000123"

static const char *corpus;
static char tmpdir[] = "/tmp/ge-varpolicy-XXXXXX";

static ge_graph *load(const char *rel)
{
	char path[4096];
	ge_graph *g = NULL;
	ge_error err = {0};
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	if (ge_load(path, NULL, &g, &err) != GE_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return g;
}

static ge_opid op(const ge_graph *g, const char *name)
{
	return ge_graph_find(g, name);
}

/* Names of the VariableDefs of a collection, joined by ','. */
static void vardefs(ge_graph *g, const char *coll, char *out, size_t cap)
{
	out[0] = 0;
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		Tensorflow__VariableDef *d = tensorflow__variable_def__unpack(
			NULL, c->bytes_list->value[i].len,
			c->bytes_list->value[i].data);
		if (!d)
			continue;
		if (i)
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, d->variable_name, cap - strlen(out) - 1);
		tensorflow__variable_def__free_unpacked(d, NULL);
	}
}

/* The VariableDef of a collection naming variable `name:0`, as
 * "init|snapshot|initial_value". */
static void vardef_of(ge_graph *g, const char *coll, const char *var,
		      char *out, size_t cap)
{
	out[0] = 0;
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return;
	for (size_t i = 0; i < c->bytes_list->n_value; i++) {
		Tensorflow__VariableDef *d = tensorflow__variable_def__unpack(
			NULL, c->bytes_list->value[i].len,
			c->bytes_list->value[i].data);
		if (!d)
			continue;
		if (!strcmp(d->variable_name, var))
			snprintf(out, cap, "%s|%s|%s|%d", d->initializer_name,
				 d->snapshot_name, d->initial_value_name,
				 d->trainable);
		tensorflow__variable_def__free_unpacked(d, NULL);
	}
}

/* The strings of a string Const, joined by ','. */
static void strings(const ge_graph *g, ge_opid c, char *out, size_t cap)
{
	out[0] = 0;
	const Tensorflow__AttrValue *v = ge_op_attr(g, c, "value", NULL);
	if (!v || !v->tensor)
		return;
	for (size_t i = 0; i < v->tensor->n_string_val; i++) {
		if (i)
			strncat(out, ",", cap - strlen(out) - 1);
		size_t l = strlen(out);
		size_t n = v->tensor->string_val[i].len;
		if (n > cap - l - 1)
			n = cap - l - 1;
		if (n)
			memcpy(out + l, v->tensor->string_val[i].data, n);
		out[l + n] = 0;
	}
}

static int has_control(const ge_graph *g, ge_opid to, ge_opid c)
{
	size_t n = ge_op_num_control_inputs(g, to);
	for (size_t i = 0; i < n; i++)
		if (ge_op_control_input(g, to, i) == c)
			return 1;
	return 0;
}

static size_t count_type(const ge_graph *g, const char *type)
{
	size_t n = 0, cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id) &&
		    !strcmp(ge_op_type(g, (ge_opid)id), type))
			n++;
	return n;
}

/* The computation: everything the model's outputs need, walking back
 * over data inputs (so: the variables and their reads, not their
 * initializers or the saver). */
static void computation(ge_graph *g, ge_view *v, const char *const *outs,
			size_t n)
{
	ge_opvec seeds = GE_VEC_INIT, ops = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++)
		ge_opvec_push(&seeds, op(g, outs[i]));
	ge_seeds s = {seeds.v, seeds.n, NULL, 0};
	ge_walk_opts wo = GE_WALK_OPTS_INIT;
	ge_error err;
	if (ge_get_backward_walk_ops(g, &s, &wo, &ops, &err) ||
	    ge_view_init(v, g, ops.v, ops.n, NULL, 0, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	ge_opvec_free(&seeds);
	ge_opvec_free(&ops);
}

static float read_scalar(ge_bundle *b, const char *name, int *ok_)
{
	const ge_bundle_entry *e = ge_bundle_find(b, name);
	uint8_t *d;
	size_t len;
	float f = 0;
	*ok_ = 0;
	if (e && ge_bundle_read(b, e, &d, &len, NULL) == GE_OK) {
		if (len == 4) {
			memcpy(&f, d, 4);
			*ok_ = 1;
		}
		free(d);
	}
	return f;
}

static void ref_duplicate(void)
{
	ge_graph *g = load(HPT);
	static const char *const outs[] = {"y", "y2", "y3"};
	ge_view v = GE_VIEW_INIT, out = GE_VIEW_INIT;
	computation(g, &v, outs, 3);
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_var_opts vo = {GE_VARS_DUPLICATE, NULL, NULL};
	ge_ckpt_plan plan = {0};
	ge_tinfo *info = NULL;
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, &out, &info, &plan, &err);
	is_int(GE_OK, rc, "duplicate: copy half_plus_two's computation under copy/");
	if (rc)
		tap_diag("%s", err.msg);

	char buf[4096];
	vardefs(g, "variables", buf, sizeof buf);
	is_string("a:0,b:0,c:0,copy/a:0,copy/b:0,copy/c:0", buf,
		  "variables lists six variables");
	vardefs(g, "trainable_variables", buf, sizeof buf);
	is_string("a:0,b:0,c:0,copy/a:0,copy/b:0,copy/c:0", buf,
		  "trainable_variables lists six");
	vardef_of(g, "variables", "copy/b:0", buf, sizeof buf);
	is_string("copy/b/Assign|copy/b/read:0||0", buf,
		  "the duplicate's VariableDef names its own ops");
	ok(op(g, "copy/a/Assign") != GE_NOOP &&
		   op(g, "copy/a/initial_value") != GE_NOOP,
	   "the initializer and initial value were copied");
	ge_tref t = ge_op_input(g, op(g, "copy/a/Assign"), 0);
	is_int(op(g, "copy/a"), t.op, "copy/a/Assign assigns copy/a");
	ok(has_control(g, op(g, "init"), op(g, "copy/c/Assign")),
	   "init runs the duplicates' initializers");
	t = ge_op_input(g, op(g, "copy/Mul"), 0);
	is_string("copy/a/read", ge_op_name(g, t.op), "the copy reads copy/a");

	/* the saver */
	ge_opid save = op(g, "save/SaveV2");
	is_int(9, (long long)ge_op_num_inputs(g, save), "SaveV2 saves six tensors");
	strings(g, ge_op_input(g, save, 1).op, buf, sizeof buf);
	is_string("a,b,c,copy/a,copy/b,copy/c", buf, "under their keys");
	strings(g, ge_op_input(g, save, 2).op, buf, sizeof buf);
	is_string(",,,,,", buf, "shape_and_slices grew too");
	is_string("copy/b", ge_op_name(g, ge_op_input(g, save, 7).op),
		  "SaveV2 reads copy/b");
	size_t nr = ge_op_num_control_inputs(g, op(g, "save/restore_shard"));
	is_int(6, (long long)nr, "restore_shard groups six restore assigns");
	size_t restored = 0;
	for (size_t i = 0; i < nr; i++) {
		ge_opid a = ge_op_control_input(g, op(g, "save/restore_shard"), i);
		ge_tref var = ge_op_input(g, a, 0), val = ge_op_input(g, a, 1);
		if (strncmp(ge_op_name(g, var.op), "copy/", 5))
			continue;
		strings(g, ge_op_input(g, val.op, 1).op, buf, sizeof buf);
		if (!strcmp(buf, ge_op_name(g, var.op)) &&
		    !strcmp(ge_op_type(g, val.op), "RestoreV2"))
			restored++;
	}
	is_int(3, (long long)restored,
	       "each duplicate is restored from its own key");
	is_int(3, (long long)plan.n, "the checkpoint plan has three copies");
	if (plan.n == 3)
		is_string("copy/c", plan.dst[2], "c goes to copy/c");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &rep), "the graph validates");
	if (rep.len)
		tap_diag("%s", (char *)rep.data);
	ge_buf_free(&rep);

	/* the result view */
	is_int((long long)v.outputs.n, (long long)out.outputs.n,
	       "the result has the view's outputs");
	ge_varlist vl;
	ge_graph_variables(g, &vl, NULL);
	is_int(7, (long long)vl.n, "seven variables (with filename_tensor)");
	ge_varlist_free(&vl);

	/* saved as a SavedModel, with the checkpoint rewritten */
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/dup", tmpdir);
	ge_save_opts so = {.format = GE_FMT_SAVEDMODEL};
	/* the graph carries the plan: ge_save writes the checkpoint with the
	 * duplicates, no further step */
	is_int((long long)plan.n, ge_graph_checkpoint_plan(g) ?
			  (long long)ge_graph_checkpoint_plan(g)->n : 0,
	       "the graph carries the plan");
	rc = ge_save(g, dir, &so, &err);
	is_int(GE_OK, rc, "save the SavedModel and its checkpoint");
	if (rc)
		tap_diag("%s", err.msg);
	char prefix[8192];
	snprintf(prefix, sizeof prefix, "%s/variables/variables", dir);
	ge_bundle *b = NULL;
	rc = ge_bundle_open(prefix, &b, &err);
	is_int(GE_OK, rc, "the new checkpoint opens");
	if (!rc) {
		is_int(6, (long long)ge_bundle_count(b), "it holds six tensors");
		int k;
		float f = read_scalar(b, "copy/a", &k);
		ok(k && f == 0.5f, "copy/a = 0.5");
		f = read_scalar(b, "copy/b", &k);
		ok(k && f == 2.0f, "copy/b = 2.0");
		f = read_scalar(b, "copy/c", &k);
		ok(k && f == 3.0f, "copy/c = 3.0");
		f = read_scalar(b, "a", &k);
		ok(k && f == 0.5f, "a is still 0.5");
		/* and the saved model freezes with the duplicates' values */
		ge_graph *h = NULL;
		rc = ge_load(dir, NULL, &h, &err);
		is_int(GE_OK, rc, "the saved SavedModel loads");
		if (!rc) {
			ge_tref y = {op(h, "copy/y"), 0};
			rc = ge_freeze(h, b, &y, 1, NULL, &err);
			is_int(GE_OK, rc, "freeze copy/y from the new checkpoint");
			if (rc)
				tap_diag("%s", err.msg);
			ok(op(h, "copy/b") != GE_NOOP &&
				   !strcmp(ge_op_type(h, op(h, "copy/b")), "Const"),
			   "copy/b is a Const");
			is_int(0, (long long)count_type(h, "VariableV2"),
			       "no variable is left");
			ge_graph_free(h);
		}
		ge_bundle_close(b);
	}
	ge_ckpt_plan_free(&plan);
	ge_tinfo_free(info);
	ge_view_free(&v);
	ge_view_free(&out);
	ge_graph_free(g);
}

static void ref_share(void)
{
	ge_graph *g = load(HPT);
	static const char *const outs[] = {"y", "y2", "y3"};
	ge_view v = GE_VIEW_INIT;
	computation(g, &v, outs, 3);
	ge_buf before = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &before);
	size_t nops = ge_graph_num_ops(g);
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_var_opts vo = {GE_VARS_SHARE, NULL, NULL};
	ge_ckpt_plan plan = {0};
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, &plan, &err);
	is_int(GE_OK, rc, "share: copy under copy/");
	if (rc)
		tap_diag("%s", err.msg);
	ge_tref t = ge_op_input(g, op(g, "copy/Mul"), 0);
	is_string("a/read", ge_op_name(g, t.op), "the copy reads a/read");
	t = ge_op_input(g, op(g, "copy/y2"), 1);
	is_string("c/read", ge_op_name(g, t.op), "and c/read");
	is_int(GE_NOOP, op(g, "copy/a"), "no variable op was copied");
	is_int(GE_NOOP, op(g, "copy/a/read"), "nor its read");
	char buf[4096];
	vardefs(g, "variables", buf, sizeof buf);
	is_string("a:0,b:0,c:0", buf, "variables unchanged");
	is_int(6, (long long)ge_op_num_inputs(g, op(g, "save/SaveV2")),
	       "the saver unchanged");
	is_int(0, (long long)plan.n, "no checkpoint change");
	is_int((long long)nops + 17, (long long)ge_graph_num_ops(g),
	       "the copy has the 17 ops that are not variables");
	ge_ckpt_plan_free(&plan);
	ge_buf_free(&before);
	ge_view_free(&v);
	ge_graph_free(g);
}

/* A view of the arithmetic alone reads the variables from outside. */
static void ref_outside(void)
{
	ge_graph *g = load(HPT);
	const char *names[] = {"Mul", "y"};
	ge_opid ops[2] = {op(g, names[0]), op(g, names[1])};
	ge_view v = GE_VIEW_INIT;
	ge_error err = {0};
	ge_view_init(&v, g, ops, 2, NULL, 0, &err);
	ge_view out = GE_VIEW_INIT;
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_var_opts vo = {GE_VARS_DUPLICATE, NULL, NULL};
	ge_ckpt_plan plan = {0};
	int rc = ge_copy_vars(&v, &o, &vo, &out, NULL, &plan, &err);
	is_int(GE_OK, rc, "duplicate variables a view reads from outside");
	if (rc)
		tap_diag("%s", err.msg);
	ge_tref t = ge_op_input(g, op(g, "copy/Mul"), 0);
	is_string("copy/a/read", ge_op_name(g, t.op), "copy/Mul reads copy/a/read");
	t = ge_op_input(g, op(g, "copy/Mul"), 1);
	is_string("Placeholder", ge_op_type(g, t.op), "x is still a placeholder");
	is_int(2, (long long)plan.n, "a and b are duplicated");
	is_int(3, (long long)out.inputs.n, "the result view has the view's inputs");
	if (out.inputs.n == 3)
		is_string("copy/a/read", ge_op_name(g, out.inputs.v[0].op),
			  "the first is the duplicate's read");
	ge_ckpt_plan_free(&plan);
	ge_view_free(&v);
	ge_view_free(&out);
	ge_graph_free(g);
}

static int decide_a(ge_graph *g, const ge_variable *v, void *ud)
{
	(void)g;
	(*(int *)ud)++;
	return !strcmp(v->name, "a") ? GE_VARS_DUPLICATE : GE_VARS_SHARE;
}

static void ref_callback(void)
{
	ge_graph *g = load(HPT);
	static const char *const outs[] = {"y"};
	ge_view v = GE_VIEW_INIT;
	computation(g, &v, outs, 1);
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	int calls = 0;
	ge_var_opts vo = {0, decide_a, &calls};
	ge_ckpt_plan plan = {0};
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, &plan, &err);
	is_int(GE_OK, rc, "a policy function");
	is_int(2, calls, "asked once per variable met (a, b)");
	ok(op(g, "copy/a") != GE_NOOP && op(g, "copy/b") == GE_NOOP,
	   "a duplicated, b shared");
	ge_tref t = ge_op_input(g, op(g, "copy/y"), 1);
	is_string("b/read", ge_op_name(g, t.op), "copy/y reads b/read");
	ge_ckpt_plan_free(&plan);
	ge_view_free(&v);
	ge_graph_free(g);
}

static void resource_duplicate(void)
{
	ge_graph *g = load(HPT_RES);
	static const char *const outs[] = {"y", "y2", "y3"};
	ge_view v = GE_VIEW_INIT;
	computation(g, &v, outs, 3);
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_var_opts vo = {GE_VARS_DUPLICATE, NULL, NULL};
	ge_ckpt_plan plan = {0};
	ge_error err = {0};
	int rc = ge_copy_vars(&v, &o, &vo, NULL, NULL, &plan, &err);
	is_int(GE_OK, rc, "resource variables: duplicate under copy/");
	if (rc)
		tap_diag("%s", err.msg);
	char buf[4096];
	vardefs(g, "variables", buf, sizeof buf);
	is_string("a:0,b:0,c:0,a2:0,c2:0,copy/a:0,copy/b:0,copy/c:0,"
		  "copy/a2:0,copy/c2:0",
		  buf, "variables lists ten");
	vardefs(g, "trainable_variables", buf, sizeof buf);
	is_string("a:0,b:0,c:0,a2:0,c2:0,copy/a:0,copy/b:0,copy/c:0,"
		  "copy/a2:0,copy/c2:0",
		  buf, "trainable_variables lists ten");
	vardef_of(g, "variables", "copy/a:0", buf, sizeof buf);
	is_string("copy/a/Assign|copy/a/Read/ReadVariableOp:0|"
		  "copy/a/Initializer/initial_value:0|1",
		  buf, "the duplicate's VariableDef");
	is_string("VarHandleOp", ge_op_type(g, op(g, "copy/a")),
		  "copy/a is a VarHandleOp");
	ge_tref t = ge_op_input(g, op(g, "copy/Mul/ReadVariableOp"), 0);
	is_string("copy/a", ge_op_name(g, t.op), "the copy's reads read copy/a");
	ok(has_control(g, op(g, "init"), op(g, "copy/c2/Assign")),
	   "init runs the duplicates' initializers");
	ge_opid save = op(g, "save/SaveV2");
	is_int(13, (long long)ge_op_num_inputs(g, save), "SaveV2 saves ten");
	strings(g, ge_op_input(g, save, 1).op, buf, sizeof buf);
	is_string("a,a2,b,c,c2,copy/a,copy/a2,copy/b,copy/c,copy/c2", buf,
		  "under their keys");
	is_string("copy/a2/Read/ReadVariableOp",
		  ge_op_name(g, ge_op_input(g, save, 9).op),
		  "SaveV2 reads the duplicates' reads");
	ge_opid R = op(g, "save/RestoreV2");
	strings(g, ge_op_input(g, R, 1).op, buf, sizeof buf);
	is_string("a,a2,b,c,c2,copy/a,copy/a2,copy/b,copy/c,copy/c2", buf,
		  "RestoreV2 restores ten");
	is_int(10, ge_op_num_outputs(g, R), "with ten outputs");
	is_int(10, (long long)ge_op_num_control_inputs(g, op(g, "save/restore_shard")),
	       "restore_shard groups ten assigns");
	ge_buf rep = GE_BUF_INIT;
	is_int(0, (long long)ge_graph_validate(g, &rep), "the graph validates");
	if (rep.len)
		tap_diag("%s", (char *)rep.data);
	ge_buf_free(&rep);

	char dir[4096], src[4096], prefix[8192];
	snprintf(dir, sizeof dir, "%s/res", tmpdir);
	snprintf(src, sizeof src, "%s/%s/variables/variables", corpus, HPT_RES);
	ge_save_opts so = {.format = GE_FMT_SAVEDMODEL};
	/* the graph carries the plan: ge_save writes the checkpoint with the
	 * duplicates, no further step */
	is_int((long long)plan.n, ge_graph_checkpoint_plan(g) ?
			  (long long)ge_graph_checkpoint_plan(g)->n : 0,
	       "the graph carries the plan");
	rc = ge_save(g, dir, &so, &err);
	is_int(GE_OK, rc, "save the SavedModel and its checkpoint");
	snprintf(prefix, sizeof prefix, "%s/variables/variables", dir);
	ge_bundle *b = NULL;
	if (ge_bundle_open(prefix, &b, &err) == GE_OK) {
		int k;
		float f = read_scalar(b, "copy/a2", &k);
		ok(k && f == 0.5f, "copy/a2 = 0.5");
		f = read_scalar(b, "copy/c2", &k);
		ok(k && f == 3.0f, "copy/c2 = 3.0");
		is_int(10, (long long)ge_bundle_count(b), "ten tensors");
		ge_graph *h = NULL;
		if (ge_load(dir, NULL, &h, &err) == GE_OK) {
			ge_tref y = {op(h, "copy/y3"), 0};
			rc = ge_freeze(h, b, &y, 1, NULL, &err);
			is_int(GE_OK, rc, "freeze copy/y3 from it");
			if (rc)
				tap_diag("%s", err.msg);
			is_int(0, (long long)count_type(h, "VarHandleOp"),
			       "no VarHandleOp left");
			ge_graph_free(h);
		} else {
			ok(0, "reload: %s", err.msg);
		}
		ge_bundle_close(b);
	} else {
		ok(0, "open: %s", err.msg);
	}

	/* share: nothing of the variables changes */
	ge_graph *g2 = load(HPT_RES);
	ge_view v2 = GE_VIEW_INIT;
	computation(g2, &v2, outs, 3);
	ge_var_opts vs = {GE_VARS_SHARE, NULL, NULL};
	ge_ckpt_plan p2 = {0};
	rc = ge_copy_vars(&v2, &o, &vs, NULL, NULL, &p2, &err);
	is_int(GE_OK, rc, "resource variables: share");
	t = ge_op_input(g2, op(g2, "copy/Mul/ReadVariableOp"), 0);
	is_string("a", ge_op_name(g2, t.op), "the copy reads a");
	is_int(8, (long long)ge_op_num_inputs(g2, op(g2, "save/SaveV2")),
	       "the saver unchanged");
	is_int(0, (long long)p2.n, "no checkpoint change");
	ge_ckpt_plan_free(&p2);
	ge_view_free(&v2);
	ge_graph_free(g2);

	ge_ckpt_plan_free(&plan);
	ge_view_free(&v);
	ge_graph_free(g);
}

int main(void)
{
	corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	ref_duplicate();
	ref_share();
	ref_outside();
	ref_callback();
	resource_duplicate();
	ge_remove_tree(tmpdir);
	return tap_done();
}
