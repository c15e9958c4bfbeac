/*
 * t/tf2-corpus.c: the object graphs of TF2 SavedModels of the corpus: the
 * captured inputs of each signature's call resolve to the variables and
 * checkpoint keys TensorFlow saved them under.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "functions/func.h"
#include "editor/inline.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"
#include "variables/tf2.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saver.pb-c.h"
#include "tensorflow/core/protobuf/trackable_object_graph.pb-c.h"

#define TFJS "tensorflow__tfjs/tfjs-node/test_objects/saved_model/"
#define HPT2 "tensorflow__serving/tensorflow_serving/servables/tensorflow/" \
	"testdata/saved_model_half_plus_two_tf2_cpu/00000123"
#define BERT "tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1"

static const char *corpus;

static ge_graph *load(const char *rel, ge_bundle **b)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(path, NULL, &g, &err) != GE_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	*b = NULL;
	char *prefix = NULL;
	if (ge_checkpoint_prefix(path, &prefix, &err) == GE_OK) {
		if (ge_bundle_open(prefix, b, &err) != GE_OK)
			*b = NULL;
		free(prefix);
	}
	return g;
}

/* The captures of the call named `call`, as "slot:op=kind:name@key;...",
 * in a buffer that the next call replaces. */
static const char *captures(ge_graph *g, ge_bundle *b, const char *call)
{
	static ge_buf buf = GE_BUF_INIT;
	ge_tf2_objects *o = NULL;
	ge_error err;
	buf.len = 0;
	ge_buf_adds(&buf, "");
	if (ge_tf2_objects_open(g, b, &o, &err) != GE_OK) {
		ge_buf_printf(&buf, "error: %s", err.msg);
		return (const char *)buf.data;
	}
	ge_tf2_capture *c = NULL;
	size_t n = 0;
	if (ge_tf2_call_captures(o, g, ge_graph_find(g, call), &c, &n,
				 &err) != GE_OK) {
		ge_buf_printf(&buf, "error: %s", err.msg);
	} else {
		for (size_t i = 0; i < n; i++)
			ge_buf_printf(&buf, "%s%zu:%s=%d:%s@%s", i ? ";" : "",
				      c[i].slot, ge_op_name(g, c[i].t.op),
				      c[i].kind, c[i].name,
				      c[i].key ? c[i].key : "-");
	}
	free(c);
	ge_tf2_objects_free(o);
	return (const char *)buf.data;
}

/* The ops g will have once every call is inlined: each call counts as
 * its body's ops (nested calls expanded), _Arg and _Retval not counted. */
static size_t expanded(ge_graph *root, ge_graph *g, size_t *memo)
{
	size_t n = 0, cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		const char *t = ge_op_type(g, (ge_opid)id);
		if (g != root && (!strcmp(t, "_Arg") || !strcmp(t, "_Retval")))
			continue;
		const Tensorflow__AttrValue *f =
			ge_is_call_op_type(t) ? ge_op_attr(g, (ge_opid)id, "f",
							   NULL)
					      : NULL;
		ge_funcid fid = f && f->func ? ge_func_find(root, f->func->name)
					     : GE_NOFUNC;
		if (fid == GE_NOFUNC) {
			n++;
			continue;
		}
		if (!memo[fid])
			memo[fid] = 1 + expanded(root,
						 ge_func_body(root, fid, NULL),
						 memo);
		n += memo[fid] - 1;
		/* an unread call leaves its name to an op standing for it */
		size_t nu, nc;
		ge_op_uses(g, (ge_opid)id, &nu);
		ge_op_control_outputs(g, (ge_opid)id, &nc);
		n += !nu && !nc;
	}
	return n;
}

/* bert1: every call inlined, nested ones too. */
static void inline_bert(void)
{
	ge_bundle *b;
	ge_graph *g = load(BERT, &b);
	ge_error err;
	if (ge_flib_load(g, &err) != GE_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	size_t *memo = ge_xcalloc(ge_func_capacity(g) + 1, sizeof *memo);
	size_t want = expanded(g, g, memo);
	free(memo);
	size_t n = 0;
	int rc = ge_inline_all(g, &n, &err);
	is_int(GE_OK, rc, "bert1: every call inlined");
	if (rc)
		tap_diag("%s", err.msg);
	tap_diag("bert1: %zu calls inlined, %zu ops", n,
		 ge_graph_num_ops(g));
	size_t calls = 0, cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		calls += ge_op_alive(g, (ge_opid)id) &&
			 ge_is_call_op_type(ge_op_type(g, (ge_opid)id));
	is_int(0, (long long)calls, "no PartitionedCall is left");
	is_int((long long)want, (long long)ge_graph_num_ops(g),
	       "ops: the bodies' minus _Arg/_Retval, plus the outer ones");
	ge_buf rep = GE_BUF_INIT;
	size_t np = ge_graph_validate(g, &rep);
	np += ge_flib_validate(g, 1, &rep);
	is_int(0, (long long)np, "the graph validates");
	if (np)
		tap_diag("%.600s", (const char *)rep.data);
	ge_buf_free(&rep);
	ge_graph_free(g);
}

/* times_three_float inlined in place: its signature and saver name what
 * replaced the calls, and the SavedModel saves and loads again. */
static void inline_savedmodel(void)
{
	ge_bundle *b;
	ge_graph *g = load(TFJS "times_three_float", &b);
	ge_bundle_close(b);
	ge_error err;
	size_t n = 0;
	int rc = ge_inline_all(g, &n, &err);
	is_int(GE_OK, rc, "times_three_float: its calls inlined");
	if (rc)
		tap_diag("%s", err.msg);
	struct Tensorflow__SignatureDef *sd =
		ge_signature_get(g, "serving_default");
	is_string("StatefulPartitionedCall:0",
		  sd && sd->n_outputs ? sd->outputs[0]->value->name : NULL,
		  "the signature's output names the unread call's tensor still");
	ge_opid kept = ge_graph_find(g, "StatefulPartitionedCall");
	ok(kept != GE_NOOP && !strcmp(ge_op_type(g, kept), "Identity"),
	   "now an Identity of what the body returns");
	struct Tensorflow__SaverDef *sv = ge_saver_def(g);
	ge_tref t;
	ok(sv && ge_graph_find_tensor(g, sv->save_tensor_name, &t) == GE_OK &&
	   ge_graph_find(g, sv->restore_op_name) != GE_NOOP,
	   "the saver names ops that exist (%s, %s)",
	   sv ? sv->save_tensor_name : "-", sv ? sv->restore_op_name : "-");
	char dir[] = "/tmp/gerewrite-tf2-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char out[600];
	snprintf(out, sizeof out, "%s/sm", dir);
	rc = ge_save(g, out, NULL, &err);
	is_int(GE_OK, rc, "the inlined SavedModel saves");
	ge_graph *h = NULL;
	rc = rc ? rc : ge_load(out, NULL, &h, &err);
	ok(h && ge_graph_validate(h, NULL) == 0, "and loads again, valid");
	if (rc)
		tap_diag("%s", err.msg);
	ge_graph_free(h);
	ge_graph_free(g);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

int main(void)
{
	corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found");
	tap_plan(20);
	ge_bundle *b;
	ge_graph *g = load(TFJS "times_three_float", &b);
	ok(ge_is_tf2_savedmodel(g), "times_three_float is a TF2 SavedModel");
	struct Tensorflow__TrackableObjectGraph *tog = NULL;
	ge_error err;
	is_int(GE_OK, ge_checkpoint_object_graph(b, &tog, &err),
	       "its checkpoint has an object graph");
	ok(tog && tog->n_nodes >= 2, "with its nodes");
	if (tog)
		tensorflow__trackable_object_graph__free_unpacked(tog, NULL);
	is_string("1:Variable=1:Variable@v/.ATTRIBUTES/VARIABLE_VALUE",
		  captures(g, b, "StatefulPartitionedCall"),
		  "the serving call captures v, saved as "
		  "v/.ATTRIBUTES/VARIABLE_VALUE");
	is_string("", captures(g, b, "serving_default_x"),
		  "a Placeholder captures nothing");
	ge_bundle_close(b);
	ge_graph_free(g);

	g = load(TFJS "model_multi_output", &b);
	is_string("2:Variable_1=1:Variable@two/.ATTRIBUTES/VARIABLE_VALUE",
		  captures(g, b, "StatefulPartitionedCall"),
		  "model_multi_output: the third input is the capture, object two");
	ge_bundle_close(b);
	ge_graph_free(g);

	g = load(HPT2, &b);
	is_string("1:a=1:a@a/.ATTRIBUTES/VARIABLE_VALUE;"
		  "2:b=1:b@b/.ATTRIBUTES/VARIABLE_VALUE",
		  captures(g, b, "StatefulPartitionedCall_5"),
		  "half_plus_two tf2: predict captures a and b");
	ge_bundle_close(b);
	ge_graph_free(g);

	g = load(BERT, &b);
	ok(b == NULL, "bert1 has no checkpoint");
	const char *s = captures(g, b, "StatefulPartitionedCall");
	ok(!strncmp(s, "7:", 2) && !strstr(s, "error"),
	   "bert1: captures follow the seven inputs");
	ok(strstr(s, "@-") && !strstr(s, "ATTRIBUTES"),
	   "and have no keys without a checkpoint");
	tap_diag("%.200s", s);
	ge_graph_free(g);
	inline_bert();
	inline_savedmodel();
	return tap_failed != 0;
}
