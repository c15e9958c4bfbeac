/*
 * model: files in and out.  Format sniffing, errors on bad input (naming
 * the file and the node or line), atomic saves, refusing to overwrite the
 * input, SavedModel tag selection, MetaGraphDef collections following
 * renames and removals.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bundle.h"
#include "graph/graph.h"
#include "formats/meta.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

static char tmp[] = "/tmp/ge-model-XXXXXX";

static const char *path(const char *name)
{
	return path_in(tmp, name);
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Number of entries in the temp dir (to see no temp file is left). */
static int entries(void)
{
	DIR *d = opendir(tmp);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static const char *small =
	"# a comment line\n"
	"node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
	"node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
	"  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n"
	"node { name: 'y' op: 'Mul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"node { name: 'z' op: 'Identity' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } }\n"
	"versions { producer: 1087 }\n";

static ge_graph *parse_text(const char *txt, ge_format f)
{
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse((const uint8_t *)txt, strlen(txt), f, "fixture", NULL, &g,
		     &err))
		tap_diag("%s", err.msg);
	return g;
}

static void test_sniff(ge_buf *bin)
{
	ge_graph *g = parse_text(small, GE_FMT_AUTO);
	ok(g && ge_graph_format(g) == GE_FMT_GRAPHDEF_TEXT,
	   "text GraphDef sniffed");
	ge_serialize(g, GE_FMT_GRAPHDEF, bin, NULL);
	is_int(GE_FMT_GRAPHDEF, ge_sniff(bin->data, bin->len),
	       "binary GraphDef sniffed");
	ge_buf m = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_META, &m, NULL);
	is_int(GE_FMT_META, ge_sniff(m.data, m.len), "binary MetaGraphDef");
	m.len = 0;
	ge_serialize(g, GE_FMT_SAVEDMODEL, &m, NULL);
	is_int(GE_FMT_SAVEDMODEL, ge_sniff(m.data, m.len), "binary SavedModel");
	m.len = 0;
	ge_serialize(g, GE_FMT_META_TEXT, &m, NULL);
	is_int(GE_FMT_META_TEXT, ge_sniff(m.data, m.len), "text MetaGraphDef");
	m.len = 0;
	ge_serialize(g, GE_FMT_SAVEDMODEL_TEXT, &m, NULL);
	is_int(GE_FMT_SAVEDMODEL_TEXT, ge_sniff(m.data, m.len),
	       "text SavedModel");
	ge_buf_free(&m);
	const char *js = "{\"format\": \"graph-model\", \"modelTopology\": {}}";
	is_int(GE_FMT_TFJS, ge_sniff((const uint8_t *)js, strlen(js)),
	       "tfjs model.json");
	uint8_t junk[256];
	srand(7);
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (uint8_t)rand();
	is_int(GE_FMT_AUTO, ge_sniff(junk, sizeof junk), "random bytes: none");
	ge_graph_free(g);
}

static void test_bad_input(const ge_buf *bin)
{
	ge_error err;
	ge_graph *g;

	write_file(path("empty.pb"), "", 0);
	ok(ge_load(path("empty.pb"), NULL, &g, &err) == GE_EFORMAT,
	   "empty file refused");
	ok(strstr(err.msg, path("empty.pb")) != NULL, "  naming the file");

	uint8_t junk[4096];
	srand(11);
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (uint8_t)rand();
	write_file(path("junk.pb"), junk, sizeof junk);
	ok(ge_load(path("junk.pb"), NULL, &g, &err) == GE_EFORMAT,
	   "random bytes refused");
	tap_diag("  %s", err.msg);

	/* every truncation of a binary GraphDef fails cleanly or loads */
	int clean = 1, named = 1;
	for (size_t n = 1; n < bin->len; n++) {
		int rc = ge_parse(bin->data, n, GE_FMT_GRAPHDEF, "cut.pb", NULL,
				  &g, &err);
		if (rc == GE_OK) {
			ge_graph_free(g);
			continue;
		}
		if (rc != GE_EFORMAT)
			clean = 0;
		if (!strstr(err.msg, "cut.pb") || !strstr(err.msg, "node"))
			named = 0;
	}
	ok(clean, "every truncation of a GraphDef is refused or loads");
	ok(named, "  refusals name the file and the node");
	ge_parse(bin->data, bin->len - 3, GE_FMT_GRAPHDEF, "cut.pb", NULL, &g,
		 &err);
	tap_diag("  e.g. %s", err.msg);

	const char *bad = "node { name: 'x' op: 'Placeholder' }\nnode { name 'y' }\n";
	write_file(path("bad.pbtxt"), bad, strlen(bad));
	ok(ge_load(path("bad.pbtxt"), NULL, &g, &err) == GE_EFORMAT,
	   "text syntax error refused");
	ok(strstr(err.msg, "bad.pbtxt:2:") != NULL, "  with file:line");
	tap_diag("  %s", err.msg);

	ok(ge_load(path("missing.pb"), NULL, &g, &err) == GE_EIO,
	   "missing file");
	is_string("No such file or directory",
		  strstr(err.msg, ": ") ? strstr(err.msg, ": ") + 2 : err.msg,
		  "  strerror");

	mkdir(path("notamodel"), 0777);
	ok(ge_load(path("notamodel"), NULL, &g, &err) == GE_EIO,
	   "a directory without saved_model.pb");
	tap_diag("  %s", err.msg);

	/* a Const without a value is refused at load, with the node named */
	const char *novalue =
		"node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
	write_file(path("novalue.pbtxt"), novalue, strlen(novalue));
	ok(ge_load(path("novalue.pbtxt"), NULL, &g, &err) == GE_EFORMAT,
	   "Const without value refused");
	is_string("node 'c' (Const): missing required attr 'value'",
		  strstr(err.msg, "node '"), "  message");
	ge_load_opts lo = {GE_FMT_AUTO, NULL, 1};
	ok(ge_load(path("novalue.pbtxt"), &lo, &g, &err) == GE_OK,
	   "  but loads with no_check");
	ge_graph_free(g);
}

static void test_save(const ge_buf *bin)
{
	ge_error err;
	ge_graph *g;
	write_file(path("in.pb"), bin->data, bin->len);
	ok(ge_load(path("in.pb"), NULL, &g, &err) == GE_OK, "load binary");
	int before = entries();
	ok(ge_save(g, path("in.pb"), NULL, &err) == GE_EIO,
	   "refuses to overwrite its input");
	tap_diag("  %s", err.msg);
	ok(ge_save(g, path("out.pb"), NULL, &err) == GE_OK, "save");
	is_int(before + 1, entries(), "  one new file, no temp file left");
	ge_save_opts so = {.format = GE_FMT_AUTO, .overwrite = 1};
	ok(ge_save(g, path("in.pb"), &so, &err) == GE_OK,
	   "overwrite when asked");
	ok(ge_save(g, "/nonexistent-dir/x.pb", NULL, &err) == GE_EIO,
	   "unwritable destination fails");
	tap_diag("  %s", err.msg);
	ok(ge_save(g, path("out.pbtxt"), NULL, &err) == GE_OK,
	   "save as text by extension");
	ge_graph *h;
	ok(ge_load(path("out.pbtxt"), NULL, &h, &err) == GE_OK &&
		   ge_graph_format(h) == GE_FMT_GRAPHDEF_TEXT,
	   "  it is text");
	ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_GRAPHDEF, &a, NULL);
	ge_serialize(h, GE_FMT_GRAPHDEF, &b, NULL);
	ok(a.len == b.len && !memcmp(a.data, b.data, a.len),
	   "  and the same message");
	ge_graph_free(h);

	/* an edit changes only the edited node's bytes */
	ge_op_set_device(g, ge_graph_find(g, "y"), "/device:CPU:0");
	a.len = 0;
	ge_serialize(g, GE_FMT_GRAPHDEF, &a, NULL);
	ok(a.len > bin->len, "edited graph is longer");
	const char *yb = memmem(bin->data, bin->len, "\x0a\x01y", 3);
	size_t pre = (size_t)(yb - (const char *)bin->data) - 2;
	ok(!memcmp(a.data, bin->data, pre), "nodes before it keep their bytes");
	const char *zb = memmem(bin->data, bin->len, "\x0a\x01z", 3) - 2;
	size_t tail = bin->len - (size_t)(zb - (const char *)bin->data);
	ok(!memcmp(a.data + a.len - tail, zb, tail),
	   "nodes after it keep their bytes");
	ge_buf_free(&a);
	ge_buf_free(&b);
	ge_graph_free(g);
}

static const char *saved_model =
	"saved_model_schema_version: 1\n"
	"meta_graphs {\n"
	"  meta_info_def { tags: 'train' }\n"
	"  graph_def { node { name: 't' op: 'NoOp' } }\n"
	"}\n"
	"meta_graphs {\n"
	"  meta_info_def { tags: 'serve' tags: 'gpu' }\n"
	"  graph_def { node { name: 's' op: 'NoOp' } node { name: 'v' op: 'NoOp' } }\n"
	"  collection_def { key: 'ops' value { node_list { value: 's' value: 'v:0' } } }\n"
	"  collection_def { key: 'n' value { int64_list { value: 3 } } }\n"
	"  signature_def { key: 'serving_default' value {\n"
	"    outputs { key: 'out' value { name: 's:0' dtype: DT_FLOAT } } } }\n"
	"}\n";

static void test_savedmodel(void)
{
	ge_error err;
	ge_graph *g;
	mkdir(path("sm"), 0777);
	write_file(path("sm/saved_model.pbtxt"), saved_model,
		   strlen(saved_model));
	mkdir(path("sm/variables"), 0777);
	{
		/* a real checkpoint: saves verify the one they copy */
		ge_bundle_writer *bw;
		float one = 1;
		ge_error be;
		if (ge_bundle_writer_open(path("sm/variables/variables"), &bw,
					  &be) == GE_OK &&
		    ge_bundle_writer_add(bw, "v", 1, 0, NULL, &one, 4, &be) ==
			    GE_OK)
			ge_bundle_writer_finish(bw, &be);
	}
	ge_load_opts lo = {GE_FMT_AUTO, "train", 0};
	ok(ge_load(path("sm"), &lo, &g, &err) == GE_OK, "load by tags");
	ok(ge_graph_find(g, "t") != GE_NOOP, "  the 'train' graph");
	ge_graph_free(g);
	lo.tags = "gpu,serve";
	ok(ge_load(path("sm"), &lo, &g, &err) == GE_OK &&
		   ge_graph_find(g, "s") != GE_NOOP,
	   "tags match as a set");
	ge_graph_free(g);
	lo.tags = "tpu";
	ok(ge_load(path("sm"), &lo, &g, &err) == GE_ENOTFOUND,
	   "unknown tags refused");
	is_string("no meta graph with tags [tpu]; it has [train], [serve,gpu]",
		  strstr(err.msg, "no meta"), "  listing what there is");
	ok(ge_load(path("sm"), NULL, &g, &err) == GE_OK &&
		   ge_graph_find(g, "s") != GE_NOOP,
	   "default: the 'serve' graph");
	if (!g)
		return;

	/* collections follow renames and removals */
	is_int(2, (long long)ge_collection_count(g), "two collections");
	is_string("ops", ge_collection_name(g, 0), "in file order");
	ge_op_set_name(g, ge_graph_find(g, "v"), "vv", NULL);
	Tensorflow__CollectionDef *c = ge_collection_get(g, "ops");
	ok(c && c->node_list->n_value == 2 &&
		   !strcmp(c->node_list->value[1], "vv:0"),
	   "rename updates a node_list entry");
	ge_op_set_name(g, ge_graph_find(g, "s"), "ss", NULL);
	Tensorflow__SignatureDef *sig = ge_signature_get(g, "serving_default");
	ok(sig && !strcmp(sig->outputs[0]->value->name, "ss:0"),
	   "rename updates a signature");
	ge_graph_remove_op(g, ge_graph_find(g, "vv"), 1, NULL);
	ok(c->node_list->n_value == 1, "removal drops the collection entry");
	ok(ge_collection_add_node(g, "n", "ss", &err) == GE_EINVAL,
	   "adding a name to an int64 collection refused");
	ok(ge_collection_add_node(g, "mine", "ss", &err) == GE_OK,
	   "new collection");

	/* save as a SavedModel directory: variables carried over */
	ge_save_opts so = {.format = GE_FMT_SAVEDMODEL};
	ok(ge_save(g, path("sm"), &so, &err) == GE_EIO,
	   "refuses to overwrite the SavedModel it came from");
	ok(ge_save(g, path("sm2"), &so, &err) == GE_OK, "save SavedModel");
	ok(exists(path("sm2/saved_model.pb")), "  saved_model.pb written");
	ok(exists(path("sm2/variables/variables.index")),
	   "  variables/ carried over");
	ge_graph *h;
	ok(ge_load(path("sm2"), NULL, &h, &err) == GE_OK, "reload");
	ok(h && ge_graph_find(h, "ss") != GE_NOOP &&
		   ge_collection_get(h, "mine") != NULL,
	   "  edits and new collection kept");
	ge_graph_free(h);
	lo.tags = "train";
	ok(ge_load(path("sm2"), &lo, &h, &err) == GE_OK &&
		   ge_graph_find(h, "t") != GE_NOOP,
	   "  the other meta graph is kept");
	ge_graph_free(h);
	ge_graph_free(g);
}

int main(void)
{
	if (!mkdtemp(tmp))
		return 1;
	ge_buf bin = GE_BUF_INIT;
	test_sniff(&bin);
	test_bad_input(&bin);
	test_save(&bin);
	test_savedmodel();
	ge_buf_free(&bin);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd))
		tap_diag("could not clean %s", tmp);
	return tap_done();
}
