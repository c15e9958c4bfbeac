/*
 * load-io: the load of a large GraphDef.  Attrs are checked once per
 * distinct (op type, attr bytes), and that memo must refuse what a check
 * of every node refuses, with the same message; files are mapped under a
 * read lease, and a file truncated or rewritten in place while its graph
 * is loaded must leave the graph with the bytes it loaded (no SIGBUS, no
 * bytes of the new file), as a read() would.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/bounds.h"
#include "base/filemap.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"
#include "tensorflow/core/framework/node_def.pb-c.h"

static char tmp[] = "/tmp/ge-load-io-XXXXXX";

static const char *path(const char *name)
{
	return path_in(tmp, name);
}

/* A text GraphDef of n copies of a node (printf format with %d for its
 * index), then tail. */
static char *repeat(const char *fmt, int n, const char *tail)
{
	ge_buf b = GE_BUF_INIT;
	for (int i = 0; i < n; i++)
		ge_buf_printf(&b, fmt, i);
	ge_buf_printf(&b, "%s", tail);
	return (char *)b.data;
}

/* Binary bytes of a text GraphDef, written to name. */
static void write_binary(const char *txt, const char *name, ge_buf *out)
{
	ge_graph *g;
	ge_error err;
	ge_load_opts lo = {GE_FMT_AUTO, NULL, 1};
	if (ge_parse((const uint8_t *)txt, strlen(txt), GE_FMT_GRAPHDEF_TEXT,
		     "fixture", &lo, &g, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	out->len = 0;
	ge_serialize(g, GE_FMT_GRAPHDEF, out, NULL);
	write_file(path(name), out->data, out->len);
	ge_graph_free(g);
}

static int load_msg(const char *name, char *msg, size_t cap)
{
	ge_graph *g;
	ge_error err;
	int rc = ge_load(path(name), NULL, &g, &err);
	if (rc == GE_OK) {
		ge_graph_free(g);
		snprintf(msg, cap, "(loaded)");
	} else {
		const char *m = strstr(err.msg, "node '");
		snprintf(msg, cap, "%s", m ? m : err.msg);
	}
	return rc;
}

#define RELU "node { name: 'r%d' op: 'Relu' attr { key: 'T' value { type: DT_FLOAT } } }\n"
#define CONST "node { name: 'c%d' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } " \
	"attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } " \
	"float_val: 1 } } } }\n"

static void test_memo(void)
{
	ge_buf bin = GE_BUF_INIT;
	char msg[1100];

	/* the same attr bytes under another type are checked again */
	char *t = repeat(RELU, 50,
			 "node { name: 'idn' op: 'IdentityN' attr { key: 'T' "
			 "value { type: DT_FLOAT } } }\n");
	write_binary(t, "types.pb", &bin);
	free(t);
	ok(load_msg("types.pb", msg, sizeof msg) == GE_EFORMAT,
	   "attr bytes accepted for Relu are refused for IdentityN");
	is_string("node 'idn' (IdentityN): attr 'T' holds a type where the op "
		  "wants list(type)",
		  msg, "  naming that node");

	/* identical good nodes, then one that differs in a bad way */
	t = repeat(CONST, 40,
		   "node { name: 'bad' op: 'Const' attr { key: 'dtype' value { "
		   "type: DT_FLOAT } } attr { key: 'value' value { tensor { "
		   "dtype: DT_FLOAT tensor_shape { dim { size: -3 } } } } } }\n");
	write_binary(t, "dims.pb", &bin);
	free(t);
	ok(load_msg("dims.pb", msg, sizeof msg) == GE_EFORMAT,
	   "a bad Const after forty identical good ones is refused");
	is_string("node 'bad' (Const): attr 'value' holds a tensor with "
		  "dimension -3",
		  msg, "  naming it");

	/* the first of many identical nodes is bad: the first is named */
	t = repeat("node { name: 'k%d' op: 'Const' attr { key: 'dtype' value "
		   "{ type: DT_FLOAT } } }\n",
		   30, "");
	write_binary(t, "novalue.pb", &bin);
	free(t);
	ok(load_msg("novalue.pb", msg, sizeof msg) == GE_EFORMAT,
	   "thirty Consts without a value are refused");
	is_string("node 'k0' (Const): missing required attr 'value'", msg,
		  "  naming the first");

	/* many identical nodes load, and save byte for byte */
	t = repeat(RELU, 300, "");
	write_binary(t, "relus.pb", &bin);
	free(t);
	ge_graph *g;
	ge_error err;
	ok(ge_load(path("relus.pb"), NULL, &g, &err) == GE_OK,
	   "three hundred identical Relus load");
	ge_buf out = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_GRAPHDEF, &out, NULL);
	ok(out.len == bin.len && !memcmp(out.data, bin.data, bin.len),
	   "  and come back byte for byte");
	ok(ge_graph_check_attrs(g, (size_t)-1, 0, NULL) == 0,
	   "  and pass the full check");
	ge_buf_free(&out);
	ge_graph_free(g);
	ge_buf_free(&bin);
}

/* NodeDef bytes: name, op type and device (any bytes), wrapped as a
 * GraphDef node field. */
static void raw_node(ge_buf *b, const char *name, const char *type,
		     size_t tlen, const char *dev, size_t dlen)
{
	ge_buf n = GE_BUF_INIT;
	ge_buf_lenfield(&n, 1, name, strlen(name));
	ge_buf_lenfield(&n, 2, type, tlen);
	if (dlen)
		ge_buf_lenfield(&n, 4, dev, dlen);
	ge_buf_lenfield(b, 1, n.data, n.len);
	ge_buf_free(&n);
}

static void test_nul(void)
{
	/* op types and devices are checked for a NUL once each: a type met
	 * before is not looked at again, one that differs is */
	ge_buf b = GE_BUF_INIT;
	raw_node(&b, "a", "NoOp", 4, "/cpu:0", 6);
	raw_node(&b, "b", "NoOp", 4, "/cpu:0", 6);
	raw_node(&b, "c", "No\0p", 4, "", 0);
	ge_graph *g;
	ge_error err;
	ok(ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "nul.pb", NULL, &g,
		    &err) == GE_EFORMAT,
	   "an op type with a NUL after two without is refused");
	is_string("nul.pb: node 'c': op type or device holds a NUL byte",
		  err.msg, "  naming the node");
	b.len = 0;
	raw_node(&b, "a", "NoOp", 4, "/cpu:0", 6);
	raw_node(&b, "d", "NoOp", 4, "/cpu\0:", 6);
	ok(ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "nul.pb", NULL, &g,
		    &err) == GE_EFORMAT,
	   "a device with a NUL is refused");
	is_string("nul.pb: node 'd': op type or device holds a NUL byte",
		  err.msg, "  naming the node");
	b.len = 0;
	raw_node(&b, "a", "NoOp", 4, "/cpu:0", 6);
	raw_node(&b, "b", "NoOp", 4, "/cpu:0", 6);
	ok(ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "ok.pb", NULL, &g,
		    &err) == GE_OK &&
		   !strcmp(ge_op_device(g, 1), "/cpu:0") &&
		   ge_op_type(g, 0) == ge_op_type(g, 1),
	   "  the same without: one interned type, devices kept");
	ge_graph_free(g);
	ge_buf_free(&b);
}

/* A Const node whose attrs are a dtype and one tensor attr under key
 * (klen bytes, any bytes), with inputs written after the attrs when
 * `inputs`. */
static void keyed_const(ge_buf *b, const char *name, const char *key,
			size_t klen, int inputs)
{
	static const uint8_t type_float[] = {0x30, 0x01};    /* type: 1 */
	/* tensor { dtype: 1 tensor_shape { dim { size: 1 } } } */
	static const uint8_t tensor[] = {0x42, 0x08, 0x08, 0x01, 0x12, 0x04,
					 0x12, 0x02, 0x08, 0x01};
	ge_buf n = GE_BUF_INIT, e = GE_BUF_INIT;
	ge_buf_lenfield(&n, 1, name, strlen(name));
	ge_buf_lenfield(&n, 2, "Const", 5);
	ge_buf_lenfield(&e, 1, "dtype", 5);
	ge_buf_lenfield(&e, 2, type_float, sizeof type_float);
	ge_buf_lenfield(&n, 5, e.data, e.len);
	e.len = 0;
	ge_buf_lenfield(&e, 1, key, klen);
	ge_buf_lenfield(&e, 2, tensor, sizeof tensor);
	ge_buf_lenfield(&n, 5, e.data, e.len);
	if (inputs) {
		ge_buf_lenfield(&n, 3, "a", 1);
		ge_buf_lenfield(&n, 3, "^a", 2);
	}
	ge_buf_lenfield(b, 1, n.data, n.len);
	ge_buf_free(&n);
	ge_buf_free(&e);
}

static void test_keys(void)
{
	/* an attr key matches an OpDef attr only when it is the whole name:
	 * not a prefix of it, not the name with a NUL and more after it */
	static const struct {
		const char *key;
		size_t klen;
		int rc;
		const char *msg;
	} cases[] = {
		{"value", 5, GE_OK, NULL},
		{"valu", 4, GE_EFORMAT, "missing required attr 'value'"},
		{"value\0x", 7, GE_EFORMAT, "missing required attr 'value'"},
		{"value\0", 6, GE_EFORMAT, "missing required attr 'value'"},
		{"valuex", 6, GE_EFORMAT, "missing required attr 'value'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ge_buf b = GE_BUF_INIT;
		raw_node(&b, "a", "NoOp", 4, "", 0);
		keyed_const(&b, "k", cases[i].key, cases[i].klen, 0);
		write_file(path("keys.pb"), b.data, b.len);
		char msg[300];
		int rc = load_msg("keys.pb", msg, sizeof msg);
		is_int(cases[i].rc, rc, "attr key #%zu (%zu bytes)", i,
		       cases[i].klen);
		if (cases[i].msg)
			ok(strstr(msg, cases[i].msg) != NULL, "  %s", msg);
		ge_buf_free(&b);
	}
	/* a dtype where the tensor goes: the kind the OpDef wants */
	ge_buf b = GE_BUF_INIT;
	keyed_const(&b, "k", "dtype", 5, 0);
	write_file(path("keys.pb"), b.data, b.len);
	ge_graph *g;
	ge_error err;
	ge_load_opts lo = {GE_FMT_AUTO, NULL, 1};
	ok(ge_load(path("keys.pb"), &lo, &g, &err) == GE_OK,
	   "a tensor under 'dtype' loads unchecked");
	ge_buf rep = GE_BUF_INIT;
	ok(ge_graph_check_attrs(g, (size_t)-1, 0, &rep) == 2 &&
		   strstr((char *)rep.data, "node 'k' (Const): attr 'dtype' "
					    "holds a tensor where the op "
					    "wants type") &&
		   strstr((char *)rep.data, "missing required attr 'value'"),
	   "  the full check names the kind and the missing value");
	ge_buf_free(&rep);
	ge_graph_free(g);

	/* inputs after the attrs: found where they are */
	b.len = 0;
	raw_node(&b, "a", "NoOp", 4, "", 0);
	keyed_const(&b, "k", "value", 5, 1);
	ok(ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "late.pb", NULL, &g,
		    &err) == GE_OK &&
		   ge_op_num_inputs(g, 1) == 1 &&
		   ge_op_num_control_inputs(g, 1) == 1,
	   "inputs written after the attrs resolve");
	ge_buf out = GE_BUF_INIT;
	ge_serialize(g, GE_FMT_GRAPHDEF, &out, NULL);
	ok(out.len == b.len && !memcmp(out.data, b.data, b.len),
	   "  and save byte for byte");
	ge_buf_free(&out);
	ge_graph_free(g);
	ge_buf_free(&b);
}

/* Whether a node holding the attr entry e loads (attr kinds unchecked),
 * and whether the full wire check accepts e: the load's shortcut for
 * scalar values must agree with it. */
static int entry_agrees(const uint8_t *e, size_t n)
{
	ge_buf node = GE_BUF_INIT, b = GE_BUF_INIT;
	ge_buf_lenfield(&node, 1, "n", 1);
	ge_buf_lenfield(&node, 2, "NoOp", 4);
	ge_buf_lenfield(&node, 5, e, n);
	ge_buf_lenfield(&b, 1, node.data, node.len);
	ge_graph *g = NULL;
	ge_error err;
	ge_load_opts lo = {GE_FMT_GRAPHDEF, NULL, 1};
	int loads = ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "e.pb", &lo, &g,
			     &err) == GE_OK;
	ge_graph_free(g);
	int valid = ge_pb_check(&tensorflow__node_def__attr_entry__descriptor,
				e, n, GE_MAX_DEPTH - 2, NULL) == 0;
	ge_buf_free(&node);
	ge_buf_free(&b);
	return loads == valid;
}

static void test_scalar_entries(void)
{
	/* key "k", then a value of each scalar kind */
	static const uint8_t base[][12] = {
		{0x0a, 1, 'k', 0x12, 2, 0x18, 0x05},             /* i */
		{0x0a, 1, 'k', 0x12, 3, 0x18, 0x80, 0x01},       /* i, 2 bytes */
		{0x0a, 1, 'k', 0x12, 5, 0x25, 0, 0, 0x80, 0x3f}, /* f */
		{0x0a, 1, 'k', 0x12, 2, 0x28, 0x01},             /* b */
		{0x0a, 1, 'k', 0x12, 2, 0x30, 0x01},             /* type */
		{0x0a, 1, 'k', 0x12, 4, 0x12, 2, 'o', 'k'},      /* s */
		{0x0a, 1, 'k', 0x12, 3, 0x4a, 1, 'T'},           /* placeholder */
		{0x0a, 1, 'k', 0x12, 2, 0x3a, 0x00},             /* shape {} */
	};
	static const size_t len[] = {7, 8, 10, 7, 7, 9, 8, 7};
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x05, 0x07, 0x08,
				       0x0a, 0x12, 0x1a, 0x3a, 0x42, 0x7f,
				       0x80, 0xff};
	size_t tried = 0, differ = 0;
	uint8_t e[16];
	for (size_t k = 0; k < sizeof len / sizeof *len; k++) {
		/* as it is, cut short, with a byte more */
		for (size_t n = 0; n <= len[k] + 1; n++) {
			memcpy(e, base[k], len[k]);
			e[len[k]] = 0x08;
			differ += !entry_agrees(e, n);
			tried++;
		}
		/* every byte replaced by each of vals */
		for (size_t i = 0; i < len[k]; i++)
			for (size_t v = 0; v < sizeof vals; v++) {
				memcpy(e, base[k], len[k]);
				e[i] = vals[v];
				differ += !entry_agrees(e, len[k]);
				tried++;
			}
	}
	is_int(0, (long long)differ,
	       "scalar attr entries: the load agrees with the wire check on "
	       "%zu variants", tried);
}

/* ge_load of a file (mapped, parsed as a GraphDef first) and ge_parse
 * of the same bytes (sniffed first) agree: same result, same message,
 * same format. */
static int same_as_parse(const uint8_t *d, size_t n, const char *what)
{
	write_file(path("sniff.pb"), d, n);
	ge_graph *a = NULL, *b = NULL;
	ge_error ea, eb;
	int ra = ge_load(path("sniff.pb"), NULL, &a, &ea);
	int rb = ge_parse(d, n, GE_FMT_AUTO, path("sniff.pb"), NULL, &b, &eb);
	int same = ra == rb && (ra ? !strcmp(ea.msg, eb.msg)
				   : ge_graph_format(a) == ge_graph_format(b) &&
					     ge_graph_num_ops(a) ==
						     ge_graph_num_ops(b));
	if (!same)
		tap_diag("%s: load %d '%s', parse %d '%s'", what, ra,
			 ra ? ea.msg : "", rb, rb ? eb.msg : "");
	ge_graph_free(a);
	ge_graph_free(b);
	return same;
}

static void test_sniff(void)
{
	ge_buf bin = GE_BUF_INIT, x = GE_BUF_INIT;
	char *t = repeat(RELU, 20, "versions { producer: 27 }\n");
	write_binary(t, "s.pb", &bin);
	free(t);
	ok(same_as_parse(bin.data, bin.len, "graph"), "a GraphDef loads as parsed");
	int all = 1;
	for (size_t cut = 1; cut < bin.len; cut += 7)
		all &= same_as_parse(bin.data, cut, "cut");
	ok(all, "  and each truncation gives the message a parse gives");
	/* top-level fields ge_sniff does not take for a GraphDef's */
	static const uint8_t extra[][3] = {
		{(7 << 3) | 0, 1, 0},      /* field 7 */
		{(3 << 3) | 2, 1, 0},      /* version as bytes */
		{(20 << 3) | 0, 1, 0},     /* field 20 */
		{(5 << 3) | 2, 0, 0},      /* a debug_info ... */
	};
	static const size_t extra_len[] = {2, 3, 3, 2};
	all = 1;
	for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) {
		x.len = 0;
		ge_buf_add(&x, bin.data, bin.len);
		ge_buf_add(&x, extra[i], extra_len[i]);
		all &= same_as_parse(x.data, x.len, "extra field");
	}
	/* ... given twice, and a library twice */
	x.len = 0;
	ge_buf_add(&x, bin.data, bin.len);
	ge_buf_add(&x, extra[3], 2);
	ge_buf_add(&x, extra[3], 2);
	all &= same_as_parse(x.data, x.len, "debug_info twice");
	x.len = 0;
	ge_buf_add(&x, bin.data, bin.len);
	ge_buf_add(&x, "\x12\x00\x12\x00", 4);
	all &= same_as_parse(x.data, x.len, "library twice");
	ok(all, "other top-level fields: the same result as a parse");
	/* a MetaGraphDef whose graph is that GraphDef */
	x.len = 0;
	ge_buf_lenfield(&x, 1, "\x0a\x01v", 3);
	ge_buf_lenfield(&x, 2, bin.data, bin.len);
	ok(same_as_parse(x.data, x.len, "meta"),
	   "a MetaGraphDef loads as parsed");
	/* text */
	const char *txt = "node { name: 'a' op: 'NoOp' }\n";
	ok(same_as_parse((const uint8_t *)txt, strlen(txt), "text"),
	   "a text GraphDef loads as parsed");
	ge_buf_free(&x);
	ge_buf_free(&bin);
}

static int file_is(const char *p, const ge_buf *want)
{
	uint8_t *d;
	size_t n;
	if (ge_file_read(p, &d, &n, NULL))
		return 0;
	int same = n == want->len && !memcmp(d, want->data, n);
	free(d);
	return same;
}

/* In a child process (another opener, as `cp` over the file would be):
 * truncates the file, then writes junk of another size into it. */
static void rewrite_elsewhere(const char *p)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(p, O_WRONLY | O_TRUNC);
		if (fd < 0)
			_exit(1);
		static const char junk[] = "not a graph any more";
		_exit(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk ? 0
									   : 1);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
}

static void test_map(void)
{
	ge_buf bin = GE_BUF_INIT;
	char *t = repeat(CONST, 200, "");
	write_binary(t, "big.pb", &bin);
	free(t);
	if (bin.len % 4096 == 0)
		ge_buf_add(&bin, "", 0);

	/* the mapping itself */
	uint8_t *d;
	size_t n;
	int mapped = ge_file_map(path("big.pb"), 1, &d, &n);
	if (!mapped) {
		tap_diag("no read lease here (file system or rights): the "
			 "file is read, which the tests below also cover");
		tap_skip(4, "no read lease");
	} else {
		ok(n == bin.len && !memcmp(d, bin.data, n), "file mapped");
		is_int(1, ge_file_map_state(d), "  reading the file");
		rewrite_elsewhere(path("big.pb"));
		is_int(2, ge_file_map_state(d),
		       "rewritten by another process: the bytes were copied "
		       "first");
		ok(!memcmp(d, bin.data, n), "  and are those mapped");
		ge_file_unmap(d, n);
	}

	/* a loaded graph keeps its bytes when the file is cut under it */
	write_file(path("big.pb"), bin.data, bin.len);
	ge_graph *g;
	ge_error err;
	ok(ge_load(path("big.pb"), NULL, &g, &err) == GE_OK, "load");
	rewrite_elsewhere(path("big.pb"));
	ok(ge_save(g, path("out.pb"), NULL, &err) == GE_OK,
	   "save after the file was truncated and rewritten");
	ok(file_is(path("out.pb"), &bin), "  gives the bytes loaded");
	is_string("c199", ge_op_name(g, 199), "  names read as loaded");
	ge_graph_free(g);

	/* truncated by this very process */
	write_file(path("big.pb"), bin.data, bin.len);
	ok(ge_load(path("big.pb"), NULL, &g, &err) == GE_OK, "load again");
	ok(truncate(path("big.pb"), 0) == 0, "truncate it from this process");
	ok(ge_save(g, path("out2.pb"), NULL, &err) == GE_OK &&
		   file_is(path("out2.pb"), &bin),
	   "  the save gives the bytes loaded");
	ge_graph_free(g);

	/* saved over the file it was loaded from */
	write_file(path("big.pb"), bin.data, bin.len);
	ok(ge_load(path("big.pb"), NULL, &g, &err) == GE_OK, "load");
	ge_save_opts so = {.format = GE_FMT_AUTO, .overwrite = 1};
	ok(ge_save(g, path("big.pb"), &so, &err) == GE_OK,
	   "save over the loaded file");
	ok(file_is(path("big.pb"), &bin), "  byte for byte");
	ge_op_set_device(g, 0, "/cpu:0");
	ok(ge_save(g, path("big.pb"), &so, &err) == GE_OK,
	   "edit and save over it again");
	ge_graph *h;
	ok(ge_load(path("big.pb"), NULL, &h, &err) == GE_OK &&
		   !strcmp(ge_op_device(h, 0), "/cpu:0") &&
		   ge_graph_num_ops(h) == 200,
	   "  it loads with the edit");
	ge_graph_free(h);
	ge_graph_free(g);
	ge_buf_free(&bin);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	/* every file of these tests is mapped when it can be */
	setenv("GEREWRITE_MAP_MIN", "1", 1);
	test_memo();
	test_nul();
	test_keys();
	test_scalar_entries();
	test_sniff();
	test_map();
	rm_dir(tmp);
	return tap_done();
}
