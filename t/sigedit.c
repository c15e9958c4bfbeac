/*
 * sigedit.c: signatures set, renamed and removed (lib/variables/sigedit.h), models
 * composed and servables extracted (lib/variables/compose.h), on small graphs, with
 * the errors that name what is wrong and change nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "variables/compose.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "variables/sigedit.h"
#include "tap.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

static const char *meta_txt =
	"meta_info_def { tags: 'serve' }\n"
	"graph_def {\n"
	"  node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { "
	"type: DT_FLOAT } } attr { key: 'shape' value { shape { dim { size: -1 "
	"} dim { size: 2 } } } } }\n"
	"  node { name: 'y' op: 'Relu' input: 'x' attr { key: 'T' value { "
	"type: DT_FLOAT } } }\n"
	"  node { name: 'z' op: 'Neg' input: 'y' attr { key: 'T' value { "
	"type: DT_FLOAT } } }\n"
	"  node { name: 'n' op: 'Placeholder' attr { key: 'dtype' value { "
	"type: DT_INT32 } } }\n"
	"}\n";

static ge_graph *parse(const char *txt, ge_format f)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse((const uint8_t *)txt, strlen(txt), f, "<test>", NULL, &g,
		     &err) != GE_OK)
		tap_diag("%s", err.msg);
	return g;
}

static const char *tensor_of(ge_graph *g, const char *sig, int out,
			     const char *key)
{
	const Tensorflow__SignatureDef *d = ge_signature_get(g, sig);
	size_t n = d ? (out ? d->n_outputs : d->n_inputs) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *k = out ? d->outputs[i]->key : d->inputs[i]->key;
		if (!strcmp(k, key))
			return out ? d->outputs[i]->value->name
				   : d->inputs[i]->value->name;
	}
	return NULL;
}

static void test_signatures(void)
{
	ge_graph *g = parse(meta_txt, GE_FMT_META_TEXT);
	ge_error err;
	ge_sig_key in = {"in", "x"}, out[2] = {{"a", "y:0"}, {"b", "z"}};
	ge_sig_spec s = {&in, 1, out, 2, NULL};
	ok(ge_signature_set(g, "serving_default", &s, &err) == GE_OK,
	   "set a signature");
	is_string("x:0", tensor_of(g, "serving_default", 0, "in"),
		  "  a bare op name is its output 0");
	const Tensorflow__SignatureDef *d =
		ge_signature_get(g, "serving_default");
	ok(d && d->inputs[0]->value->dtype == 1 &&
	   d->inputs[0]->value->tensor_shape->n_dim == 2 &&
	   d->inputs[0]->value->tensor_shape->dim[0]->size == -1 &&
	   d->inputs[0]->value->tensor_shape->dim[1]->size == 2,
	   "  dtype and shape inferred");
	is_string("tensorflow/serving/predict", d ? d->method_name : NULL,
		  "  the method defaults to predict");

	ok(ge_signature_rename_key(g, "serving_default", 1, "a", "relu",
				   &err) == GE_OK, "rename an output key");
	is_string("y:0", tensor_of(g, "serving_default", 1, "relu"),
		  "  the tensor stays");
	ok(!tensor_of(g, "serving_default", 1, "a"), "  the old key is gone");
	ok(ge_signature_move(g, "serving_default", "predict", &err) == GE_OK &&
	   !ge_signature_get(g, "serving_default") &&
	   ge_signature_get(g, "predict"), "rename the signature");

	/* refusals, each naming what is wrong, changing nothing */
	ge_sig_key bad = {"o", "nope:0"};
	ge_sig_spec sb = {&in, 1, &bad, 1, NULL};
	ok(ge_signature_set(g, "predict", &sb, &err) == GE_ENOTFOUND &&
	   strstr(err.msg, "'nope:0'"), "a missing tensor: %s", err.msg);
	is_string("y:0", tensor_of(g, "predict", 1, "relu"),
		  "  the signature is as it was");
	ge_sig_key dup[2] = {{"k", "y"}, {"k", "z"}};
	ge_sig_spec sd = {&in, 1, dup, 2, NULL};
	ok(ge_signature_set(g, "other", &sd, &err) == GE_EINVAL &&
	   strstr(err.msg, "duplicate output key 'k'"),
	   "a duplicate key: %s", err.msg);
	ok(!ge_signature_get(g, "other"), "  no signature made");
	ok(ge_signature_rename_key(g, "predict", 1, "relu", "b", &err) ==
		   GE_EINVAL && strstr(err.msg, "'b'"),
	   "a key renamed onto another: %s", err.msg);
	ok(ge_signature_set(g, "other", &s, &err) == GE_OK &&
	   ge_signature_move(g, "other", "predict", &err) == GE_EINVAL &&
	   strstr(err.msg, "'predict' is taken"), "a name taken: %s", err.msg);
	ok(ge_signature_drop(g, "other", &err) == GE_OK &&
	   !ge_signature_get(g, "other"), "remove a signature");
	ok(ge_signature_drop(g, "other", &err) == GE_ENOTFOUND &&
	   strstr(err.msg, "'other'"), "remove it twice: %s", err.msg);

	/* a rename of the op follows into the signature, and a save keeps it */
	ge_op_set_name(g, ge_graph_find(g, "y"), "act", &err);
	is_string("act:0", tensor_of(g, "predict", 1, "relu"),
		  "an op rename follows into a set signature");
	ge_buf b = GE_BUF_INIT;
	ok(ge_serialize(g, GE_FMT_META, &b, &err) == GE_OK, "serialize");
	ge_graph *h = NULL;
	ge_parse(b.data, b.len, GE_FMT_META, "<saved>", NULL, &h, &err);
	is_string("act:0", h ? tensor_of(h, "predict", 1, "relu") : NULL,
		  "  it reads back");
	ok(h && ge_signature_count(h) == 1, "  one signature");
	ge_buf_free(&b);
	if (h)
		ge_graph_free(h);
	ge_graph_free(g);
}

static void test_compose_extract(void)
{
	ge_graph *a = parse(meta_txt, GE_FMT_META_TEXT);
	ge_graph *b = parse(meta_txt, GE_FMT_META_TEXT);
	ge_graph *c = NULL;
	ge_error err;
	const char *from[] = {"z:0"}, *to[] = {"x"};
	ge_compose_opts o = {"second", from, to, 1};
	ok(ge_compose(a, b, &o, &c, &err) == GE_OK, "compose");
	ge_opid r = c ? ge_graph_find(c, "second/y") : GE_NOOP;
	ok(r != GE_NOOP && !strcmp(ge_op_name(c, ge_op_input(c, r, 0).op), "z"),
	   "  b's first op reads a's output");
	ok(c && ge_graph_find(c, "second/x") == GE_NOOP,
	   "  b's mapped input is gone");
	if (c)
		ge_graph_free(c);
	c = NULL;
	const char *f2[] = {"z:0"}, *t2[] = {"n"};
	ge_compose_opts o2 = {NULL, f2, t2, 1};
	ok(ge_compose(a, b, &o2, &c, &err) == GE_EINVAL && !c &&
	   strstr(err.msg, "'z:0' is float32, 'n' is int32"),
	   "different dtypes: %s", err.msg);

	const char *ins[] = {"y:0"}, *outs[] = {"z:0"};
	ok(ge_extract(a, ins, 1, outs, 1, &c, &err) == GE_OK, "extract");
	ok(c && ge_graph_num_ops(c) == 2 &&
	   !strcmp(ge_op_type(c, ge_graph_find(c, "y")), "Placeholder"),
	   "  the input is a Placeholder of its op's name, and z reads it");
	is_string("y:0", c ? tensor_of(c, "serving_default", 0, "y") : NULL,
		  "  its serving_default names it");
	if (c)
		ge_graph_free(c);
	c = NULL;
	const char *missing[] = {"q:0"};
	ok(ge_extract(a, ins, 1, missing, 1, &c, &err) == GE_ENOTFOUND && !c &&
	   strstr(err.msg, "'q:0'"), "extract a missing tensor: %s", err.msg);
	ge_graph_free(a);
	ge_graph_free(b);
}

int main(void)
{
	test_signatures();
	test_compose_extract();
	return tap_done();
}
