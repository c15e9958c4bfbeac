/*
 * t/xiface.c: a model's interface (lib/exec/iface.c): the signature
 * chosen (asked for, serving_default, the only one; "__" keys are not
 * signatures), ports by key and tensor, shapes completed from the graph,
 * the graph's placeholders and unread ops when there is no signature,
 * and the errors.
 */
#include <string.h>

#include "testutil.h"

#include "exec/iface.h"

#define PH(n) \
	"node { name: \"" n "\" op: \"Placeholder\" attr { key: \"dtype\" " \
	"value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { " \
	"dim { size: -1 } dim { size: 3 } } } } }\n"
#define ADD(n, a, b) \
	"node { name: \"" n "\" op: \"Add\" input: \"" a "\" input: \"" b \
	"\" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
#define SIG(k, in, out) \
	"signature_def { key: \"" k "\" value { inputs { key: \"a\" value { " \
	"name: \"" in "\" dtype: DT_FLOAT tensor_shape { dim { size: -1 } " \
	"dim { size: -1 } } } } outputs { key: \"out\" value { name: \"" out \
	"\" dtype: DT_FLOAT } } } }\n"

static ge_graph *meta(const char *sigs)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "graph_def { " PH("x") PH("z") ADD("y", "x", "z")
		 ADD("w", "y", "z") " }\n%s", sigs);
	return parse_as(buf, GE_FMT_META_TEXT);
}

int main(void)
{
	ge_xiface f;
	ge_error err;
	ge_graph *g = parse(PH("x") PH("z") ADD("y", "x", "z"));
	ok(ge_xiface_get(g, NULL, &f, &err) == GE_OK && !strcmp(f.from, "graph"),
	   "a GraphDef: the interface of its graph");
	ok(f.nin == 2 && !strcmp(f.in[0].key, "x") &&
		   !strcmp(f.in[0].tensor, "x:0") && f.in[0].rank == 2 &&
		   f.in[0].dims[0] == -1 && f.in[0].dims[1] == 3 &&
		   f.in[0].dtype == 1,
	   "inputs: the placeholders, with dtype and shape");
	ok(f.nout == 1 && !strcmp(f.out[0].key, "y") &&
		   !strcmp(f.out[0].tensor, "y:0"),
	   "outputs: the op nobody reads");
	ok(ge_xiface_find(f.in, f.nin, "z:0") == &f.in[1] &&
		   ge_xiface_find(f.in, f.nin, "z") == &f.in[1] &&
		   !ge_xiface_find(f.in, f.nin, "q"),
	   "ports by key or tensor");
	char names[64];
	is_string("x, z", ge_xiface_names(f.in, f.nin, names, sizeof names),
		  "names for messages");
	ge_xiface_free(&f);
	ge_graph_free(g);

	g = meta(SIG("other", "z:0", "w:0") SIG("serving_default", "x:0", "y:0")
		 SIG("__saved_model_init_op", "x:0", "y:0"));
	ok(ge_xiface_get(g, NULL, &f, &err) == GE_OK &&
		   !strcmp(f.signature, "serving_default") &&
		   !strcmp(f.from, "signature"),
	   "serving_default by default");
	ok(f.nin == 1 && !strcmp(f.in[0].key, "a") &&
		   !strcmp(f.in[0].tensor, "x:0") && f.in[0].dims[1] == 3,
	   "a signature's unknown dims completed from the graph");
	ok(f.nout == 1 && !strcmp(f.out[0].tensor, "y:0"), "its output");
	ge_xiface_free(&f);
	ok(ge_xiface_get(g, "other", &f, &err) == GE_OK &&
		   !strcmp(f.out[0].tensor, "w:0"),
	   "a signature asked for");
	ge_xiface_free(&f);
	ok(ge_xiface_get(g, "nope", &f, &err) == GE_ENOTFOUND &&
		   strstr(err.msg, "signatures: other, serving_default"),
	   "an unknown one: %s", err.msg);
	ge_graph_free(g);

	g = meta(SIG("only", "z:0", "w:0") SIG("__saved_model_init_op", "x:0",
					      "y:0"));
	ok(ge_xiface_get(g, NULL, &f, &err) == GE_OK &&
		   !strcmp(f.signature, "only"),
	   "the only signature (\"__\" keys are not signatures to run)");
	ge_xiface_free(&f);
	ge_graph_free(g);

	g = meta(SIG("one", "z:0", "w:0") SIG("two", "x:0", "y:0"));
	ok(ge_xiface_get(g, NULL, &f, &err) == GE_EINVAL &&
		   strstr(err.msg, "choose one with --signature (one, two)"),
	   "several and no default: %s", err.msg);
	ge_graph_free(g);
	return tap_done();
}
