/*
 * t/tf2.c: reads of variables that freezing rewrites before it turns the
 * variables into constants (ge_resource_reads_as_values).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "tap.h"
#include "testutil.h"
#include "variables/tf2.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define ATTR_T(k, t) "attr { key: \"" k "\" value { type: " t " } } "

#define GRAPH \
	"node { name: \"emb\" op: \"VarHandleOp\" " ATTR_T("dtype", "DT_FLOAT") \
	"attr { key: \"shape\" value { shape { dim { size: 3 } dim { size: 2 } } } } " \
	"attr { key: \"shared_name\" value { s: \"emb\" } } }\n" \
	"node { name: \"ids\" op: \"Placeholder\" " ATTR_T("dtype", "DT_INT32") "}\n" \
	"node { name: \"look\" op: \"ResourceGather\" input: \"emb\" input: \"ids\" " \
	ATTR_T("dtype", "DT_FLOAT") ATTR_T("Tindices", "DT_INT32") \
	"attr { key: \"validate_indices\" value { b: true } } }\n" \
	"node { name: \"nd\" op: \"ResourceGatherNd\" input: \"emb\" input: \"ids\" " \
	ATTR_T("dtype", "DT_FLOAT") ATTR_T("Tindices", "DT_INT32") "}\n" \
	"node { name: \"sh\" op: \"VariableShape\" input: \"emb\" " \
	ATTR_T("out_type", "DT_INT32") "}\n" \
	"node { name: \"other\" op: \"ResourceGather\" input: \"emb\" input: \"ids\" " \
	ATTR_T("dtype", "DT_FLOAT") ATTR_T("Tindices", "DT_INT32") "}\n"

int main(void)
{
	tap_plan(17);
	ge_graph *g = parse(GRAPH);
	ge_tref outs[3] = {T(g, "look"), T(g, "nd"), T(g, "sh")};
	ge_error err;
	size_t n = 0;
	int rc = ge_resource_reads_as_values(g, outs, 3, &n, &err);
	is_int(GE_OK, rc, "resource reads rewritten");
	is_int(3, (long long)n, "the three the outputs need");
	is_string("GatherV2", ge_op_type(g, OP(g, "look")), "ResourceGather -> GatherV2");
	is_string("look/ReadVariableOp:0,ids:0,look/axis:0", ins(g, "look"),
		  "of a read of the variable, along axis batch_dims");
	const Tensorflow__AttrValue *ax = ge_op_attr(g, OP(g, "look/axis"), "value", NULL);
	ok(ax && ax->tensor && ax->tensor->dtype == 3 && ax->tensor->n_int_val == 1 &&
	   ax->tensor->int_val[0] == 0 && ax->tensor->tensor_shape &&
	   ax->tensor->tensor_shape->n_dim == 0, "the axis: an int32 scalar 0");
	is_string("GatherNd", ge_op_type(g, OP(g, "nd")), "ResourceGatherNd -> GatherNd");
	is_string("Shape", ge_op_type(g, OP(g, "sh")), "VariableShape -> Shape");
	is_string("ResourceGather", ge_op_type(g, OP(g, "other")),
		  "what the outputs do not need is left");
	ge_buf rep = GE_BUF_INIT;
	size_t np = ge_graph_check_attrs(g, 10, 0, &rep);
	is_int(0, (long long)np, "the new ops' attrs fit their OpDefs");
	if (np)
		tap_diag("%s", (const char *)rep.data);
	ge_buf_free(&rep);

	/* and the freeze then takes the variable's value */
	char dir[] = "/tmp/gerewrite-tf2c-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	ge_bundle_writer *w;
	int64_t dims[2] = {3, 2};
	float vals[6] = {1, 2, 3, 4, 5, 6};
	const char *prefix = path_in(dir, "ckpt");
	if (ge_bundle_writer_open(prefix, &w, &err) ||
	    ge_bundle_writer_add(w, "emb", 1, 2, dims, vals, sizeof vals, &err) ||
	    ge_bundle_writer_finish(w, &err)) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	ge_bundle *b;
	if (ge_bundle_open(prefix, &b, &err)) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	rc = ge_freeze(g, b, outs, 3, NULL, &err);
	is_int(GE_OK, rc, "the graph freezes");
	if (rc)
		tap_diag("%s", err.msg);
	is_string("Const", ge_op_type(g, OP(g, "emb")), "the variable is a Const");
	is_string("Identity", ge_op_type(g, OP(g, "look/ReadVariableOp")),
		  "the new read an Identity of it");
	ok(ge_graph_find(g, "other") == GE_NOOP, "the unneeded gather went");
	ge_bundle_close(b);
	ge_graph_free(g);

	/* no checkpoint: fine while no variable is needed */
	g = parse(GRAPH "node { name: \"y\" op: \"Identity\" input: \"ids\" "
		  ATTR_T("T", "DT_INT32") "}\n");
	ge_tref y = T(g, "y"), look;
	is_int(GE_OK, ge_freeze(g, NULL, &y, 1, NULL, &err),
	       "freeze without a checkpoint when no variable is needed");
	is_int(2, (long long)ge_graph_num_ops(g), "ids and y are left");
	ge_graph_free(g);
	g = parse(GRAPH "node { name: \"r\" op: \"ReadVariableOp\" input: \"emb\" "
		  ATTR_T("dtype", "DT_FLOAT") "}\n");
	look = T(g, "r");
	rc = ge_freeze(g, NULL, &look, 1, NULL, &err);
	ok(rc == GE_ENOTFOUND && strstr(err.msg, "(no checkpoint): no tensor 'emb'"),
	   "else the variable is named: %s", err.msg);
	ge_graph_free(g);

	/* a read through an Identity of the handle */
	g = parse(GRAPH "node { name: \"h\" op: \"Identity\" input: \"emb\" "
		  ATTR_T("T", "DT_RESOURCE") "}\n"
		  "node { name: \"r\" op: \"ReadVariableOp\" input: \"h\" "
		  ATTR_T("dtype", "DT_FLOAT") "}\n");
	look = T(g, "r");
	rc = ge_resource_reads_as_values(g, &look, 1, NULL, &err);
	is_string("emb:0", ins(g, "r"), "a read of an Identity of the handle "
		  "reads the handle");
	ge_graph_free(g);
	unlink(path_in(dir, "ckpt.index"));
	unlink(path_in(dir, "ckpt.data-00000-of-00001"));
	rmdir(dir);
	return tap_failed != 0;
}
