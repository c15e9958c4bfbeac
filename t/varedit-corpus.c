/* varedit-corpus.c: renaming and removing variables of half_plus_two
 * (the TF1 SavedModel: variables a, b, c, a V2 saver with one RestoreV2
 * per variable): saver constants and arities, the SavedModel saved
 * afterwards, its checkpoint, and freezing it. */
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
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define HPT "tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/" \
	    "half_plus_two/00000123"

static const char *corpus;
static char tmpdir[] = "/tmp/ge-varedit-XXXXXX";

static ge_graph *load(const char *path)
{
	ge_graph *g = NULL;
	ge_error err = {0};
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

static size_t vardef_count(ge_graph *g, const char *coll)
{
	Tensorflow__CollectionDef *c = ge_collection_get(g, coll);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return 0;
	return c->bytes_list->n_value;
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

static int const_is(const ge_graph *g, const char *name, float want)
{
	ge_opid o = op(g, name);
	if (o == GE_NOOP || strcmp(ge_op_type(g, o), "Const"))
		return 0;
	const Tensorflow__AttrValue *v = ge_op_attr(g, o, "value", NULL);
	return v && v->tensor && v->tensor->n_float_val == 1 &&
	       v->tensor->float_val[0] == want;
}

static void rename_b(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", corpus, HPT);
	ge_graph *g = load(path);
	ge_error err = {0};
	is_string("a,b,c", names_of(g, "save/SaveV2", 1), "SaveV2 saves a,b,c");
	int rc = ge_variable_rename(g, "b", "beta", &err);
	is_int(GE_OK, rc, "rename b to beta");
	if (rc)
		tap_diag("%s", err.msg);
	is_int(0, (long long)issues(g), "the graph validates");
	is_string("a,beta,c", names_of(g, "save/SaveV2", 1),
		  "SaveV2 saves a,beta,c");
	is_string("beta", names_of(g, "save/RestoreV2_1", 1),
		  "RestoreV2_1 restores beta");
	ok(op(g, "beta/read") != GE_NOOP && op(g, "b") == GE_NOOP,
	   "beta/read is there, b is not");

	char dir[4096];
	snprintf(dir, sizeof dir, "%s/renamed", tmpdir);
	ge_save_opts so = {.format = GE_FMT_SAVEDMODEL};
	rc = ge_save(g, dir, &so, &err);
	is_int(GE_OK, rc, "save as a SavedModel");
	if (rc)
		tap_diag("%s", err.msg);
	char prefix[8192];
	snprintf(prefix, sizeof prefix, "%s/variables/variables", dir);
	ge_bundle *b = NULL;
	rc = ge_bundle_open(prefix, &b, &err);
	is_int(GE_OK, rc, "its checkpoint opens");
	if (!rc) {
		int k;
		is_int(3, (long long)ge_bundle_count(b), "three tensors");
		float f = read_scalar(b, "beta", &k);
		ok(k && f == 2.0f, "beta = 2.0");
		ok(!ge_bundle_find(b, "b"), "b is renamed away");
		f = read_scalar(b, "c", &k);
		ok(k && f == 3.0f, "c = 3.0");
		ge_graph *h = load(dir);
		is_int(3, (long long)vardef_count(h, "variables"),
		       "reloaded: three VariableDefs");
		ge_tref y = {op(h, "y"), 0};
		rc = ge_freeze(h, b, &y, 1, NULL, &err);
		is_int(GE_OK, rc, "freeze y of the reloaded model");
		if (rc)
			tap_diag("%s", err.msg);
		ok(const_is(h, "beta", 2.0f), "beta is a Const 2.0");
		ok(const_is(h, "a", 0.5f), "a is a Const 0.5");
		ge_graph_free(h);
		ge_bundle_close(b);
	}
	ge_graph_free(g);
}

static void remove_c(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", corpus, HPT);
	ge_graph *g = load(path);
	ge_error err = {0};
	size_t n0 = ge_graph_num_ops(g);
	int rc = ge_variable_remove(g, "c", &err);
	is_int(GE_EGRAPH, rc, "c is read: removal refused");
	ok(strstr(err.msg, "'y2'") != NULL, "naming its reader: %s", err.msg);
	is_int((long long)n0, (long long)ge_graph_num_ops(g),
	       "nothing removed");

	/* y2 and y3 read b instead */
	ge_tref br = {op(g, "b/read"), 0};
	ge_op_set_input(g, op(g, "y2"), 1, br, NULL);
	ge_op_set_input(g, op(g, "y3"), 1, br, NULL);
	rc = ge_variable_remove(g, "c", &err);
	is_int(GE_OK, rc, "c, no longer read, is removed");
	if (rc)
		tap_diag("%s", err.msg);
	ok(op(g, "c") == GE_NOOP && op(g, "c/Assign") == GE_NOOP &&
		   op(g, "c/read") == GE_NOOP &&
		   op(g, "c/initial_value") == GE_NOOP,
	   "its ops are gone");
	ok(op(g, "save/RestoreV2_2") == GE_NOOP &&
		   op(g, "save/RestoreV2_2/tensor_names") == GE_NOOP &&
		   op(g, "save/RestoreV2_2/shape_and_slices") == GE_NOOP &&
		   op(g, "save/Assign_2") == GE_NOOP,
	   "its RestoreV2, constants and assign are gone");
	is_int((long long)n0 - 8, (long long)ge_graph_num_ops(g), "eight ops");
	is_string("a,b", names_of(g, "save/SaveV2", 1), "SaveV2 saves a,b");
	is_string(",", names_of(g, "save/SaveV2", 2),
		  "two shape_and_slices");
	is_int(5, (long long)ge_op_num_inputs(g, op(g, "save/SaveV2")),
	       "SaveV2 reads 3 + 2 tensors");
	is_int(2, n_dtypes(g, "save/SaveV2"), "and has two dtypes");
	is_int(2, (long long)ge_op_num_control_inputs(
			  g, op(g, "save/restore_shard")),
	       "restore_shard groups two assigns");
	is_int(2, (long long)ge_op_num_control_inputs(g, op(g, "init")),
	       "init groups two initializers");
	is_int(2, (long long)vardef_count(g, "variables"),
	       "two VariableDefs in variables");
	is_int(2, (long long)vardef_count(g, "trainable_variables"),
	       "two in trainable_variables");
	is_int(0, (long long)issues(g), "the graph validates");

	char dir[4096];
	snprintf(dir, sizeof dir, "%s/removed", tmpdir);
	ge_save_opts so = {.format = GE_FMT_SAVEDMODEL};
	rc = ge_save(g, dir, &so, &err);
	is_int(GE_OK, rc, "save as a SavedModel");
	ge_graph *h = load(dir);
	ge_varlist vl = {0};
	rc = ge_graph_variables(h, &vl, &err);
	/* a, b and filename_tensor (a VariableV2 in no collection) */
	is_int(3, rc ? -1 : (long long)vl.n, "reloaded: three variables");
	ok(!rc && !ge_varlist_find(&vl, h, "c") && ge_varlist_find(&vl, h, "b"),
	   "b is one, c is not");
	if (!rc)
		ge_varlist_free(&vl);
	ge_graph_free(h);
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
	rename_b();
	remove_c();
	ge_remove_tree(tmpdir);
	return tap_done();
}
