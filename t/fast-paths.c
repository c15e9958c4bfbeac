/*
 * fast-paths: each fast path of the save and the copy gives what its
 * general path gives (doc/performance.md, "Fast paths and their
 * contracts").
 *   - ge_op_encode writes the inputs of live ops inline: what it writes
 *     is the one tensor-name rule's text (ge_tensor_put), a dangling
 *     input as it was read;
 *   - the GraphDef goes into a buffer or through a file writer's buffer:
 *     the same bytes, across spills and pieces written directly;
 *   - the stock copy (a NULL op handler) shares its source's attr bytes
 *     within one graph: the graph it makes is the one ge_copy_op_handler,
 *     called as any handler is, makes;
 *   - ge_view_init of every live op in id order is the view of the whole
 *     graph (ge_view_init_graph): the ops, inputs and outputs the set of
 *     the ops and their boundary give.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/subgraph.h"
#include "tap.h"
#include "editor/transform.h"
#include "base/wire.h"

/* A NodeDef field of a GraphDef: name, type, inputs, an attr T and, with
 * big, an attr of that many bytes. */
static void node(ge_buf *b, const char *name, const char *type,
		 const char *const *in, size_t nin, size_t big)
{
	ge_buf n = GE_BUF_INIT;
	ge_buf_lenfield(&n, GE_NODEDEF_NAME, name, strlen(name));
	ge_buf_lenfield(&n, GE_NODEDEF_OP, type, strlen(type));
	for (size_t i = 0; i < nin; i++)
		ge_buf_lenfield(&n, GE_NODEDEF_INPUT, in[i], strlen(in[i]));
	ge_wire_buf_entry(&n, GE_NODEDEF_ATTR, "T", 1, "\x30\x01", 2);
	if (big) {
		ge_buf v = GE_BUF_INIT;
		char *s = calloc(1, big);
		memset(s, 'x', big);
		ge_buf_lenfield(&v, GE_ATTR_S, s, big);
		ge_wire_buf_entry(&n, GE_NODEDEF_ATTR, "blob", 4, v.data,
				  v.len);
		free(s);
		ge_buf_free(&v);
	}
	ge_buf_lenfield(b, GE_GRAPHDEF_NODE, n.data, n.len);
	ge_buf_free(&n);
}

/* n layers of x -> a -> b (a port, a control input, with dangling an
 * input of a name no op has), with a big attr every 100 layers. */
static ge_graph *make(size_t n, int dangling)
{
	ge_buf b = GE_BUF_INIT;
	char nm[64], in0[64], in1[64], in2[64];
	node(&b, "x", "Placeholder", NULL, 0, 0);
	char prevb[64] = "x";
	for (size_t i = 0; i < n; i++) {
		snprintf(nm, sizeof nm, "l%zu/a", i);
		snprintf(in0, sizeof in0, "%s", prevb);
		const char *ina[1] = {in0};
		node(&b, nm, "Split", ina, 1, i % 100 == 7 ? 5000 : 0);
		snprintf(in0, sizeof in0, "l%zu/a:1", i);
		snprintf(in1, sizeof in1, "nowhere%zu:2", i);
		snprintf(in2, sizeof in2, "^%s", prevb);
		const char *inb[3] = {in0, dangling ? in1 : in0, in2};
		snprintf(nm, sizeof nm, "l%zu/b", i);
		node(&b, nm, "Add", inb, 3, 0);
		snprintf(prevb, sizeof prevb, "%s", nm);
	}
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse(b.data, b.len, GE_FMT_GRAPHDEF, "f.pb", NULL, &g, &err))
		tap_diag("parse: %s", err.msg);
	ge_buf_free(&b);
	return g;
}

/* The input fields of each NodeDef of GraphDef bytes, NUL-separated, a
 * newline after each node. */
static void inputs_of(const ge_buf *gd, ge_buf *out)
{
	ge_wire w = ge_wire_of(gd->data, gd->len), nw;
	ge_wire_field f, x;
	while (ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, GE_GRAPHDEF_NODE))
			continue;
		ge_wire_init(&nw, f.data, f.len);
		while (ge_wire_next(&nw, &x))
			if (ge_wire_is_len(&x, GE_NODEDEF_INPUT)) {
				ge_buf_add(out, x.data, x.len);
				ge_buf_addc(out, 0);
			}
		ge_buf_addc(out, '\n');
	}
}

/* The same list by the general rule: ge_tensor_put of each input, a
 * dangling one as the loaded bytes had it. */
static void inputs_by_rule(const ge_graph *g, const ge_buf *loaded,
			   ge_buf *out)
{
	ge_buf was = GE_BUF_INIT;
	inputs_of(loaded, &was);
	const char *p = (const char *)was.data;
	for (size_t i = 0; i < ge_graph_capacity(g); i++) {
		ge_opid id = (ge_opid)i;
		size_t nd = ge_op_num_inputs(g, id);
		size_t nc = ge_op_num_control_inputs(g, id);
		for (size_t k = 0; k < nd + nc; k++) {
			const char *orig = p;
			p += strlen(p) + 1;
			ge_tref t = k < nd ? ge_op_input(g, id, k)
					   : (ge_tref){ge_op_control_input(g,
							id, k - nd),
						   GE_CONTROL};
			if (t.op == GE_NOOP) {
				ge_buf_adds(out, orig);
				ge_buf_addc(out, 0);
				continue;
			}
			size_t at = out->len;
			ge_tensor_put(g, t, 1, out);
			out->len = at + strlen((char *)out->data + at);
			ge_buf_addc(out, 0);
		}
		p++; /* '\n' */
		ge_buf_addc(out, '\n');
	}
	ge_buf_free(&was);
}

static void test_encode(void)
{
	ge_graph *g = make(300, 1);
	if (!ok(g != NULL, "the graph loads"))
		return;
	ge_buf loaded = GE_BUF_INIT, saved = GE_BUF_INIT;
	ge_buf a = GE_BUF_INIT, b = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &loaded);
	/* every op re-encoded */
	for (size_t i = 0; i < ge_graph_capacity(g); i++)
		ge_op_set_device(g, (ge_opid)i, "/cpu:0");
	ge_graph_encode_graphdef(g, &saved);
	inputs_of(&saved, &a);
	inputs_by_rule(g, &loaded, &b);
	ok(a.len == b.len && !memcmp(a.data, b.data, a.len) && a.len > 1000,
	   "re-encoded inputs are the tensor-name rule's text (%zu bytes)",
	   a.len);
	ge_buf_free(&a);
	ge_buf_free(&b);
	ge_buf_free(&loaded);
	ge_buf_free(&saved);
	ge_graph_free(g);
}

static void test_sinks(void)
{
	ge_graph *g = make(3000, 1);
	if (!g)
		return;
	/* half of it re-encoded, so that kept runs and new nodes mix */
	for (size_t i = 0; i < ge_graph_capacity(g); i += 2)
		ge_op_set_device(g, (ge_opid)i, "/cpu:0");
	ge_buf mem = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &mem);
	char path[] = "/tmp/gerewrite-fast-XXXXXX";
	int fd = mkstemp(path);
	ge_writer w;
	ge_error err;
	int rc = fd < 0 ? -1 : ge_writer_open(&w, path, &err);
	if (!rc) {
		ge_graph_write_graphdef(g, &w);
		rc = ge_writer_commit(&w, &err);
	}
	uint8_t *file = NULL;
	size_t n = 0;
	FILE *f = rc ? NULL : fopen(path, "rb");
	if (f) {
		file = malloc(mem.len + 1);
		n = fread(file, 1, mem.len + 1, f);
		fclose(f);
	}
	ok(f && n == mem.len && !memcmp(file, mem.data, n) &&
		   mem.len > (1u << 17),
	   "buffer and file writer: the same %zu bytes", mem.len);
	free(file);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	ge_buf_free(&mem);
	ge_graph_free(g);
}

/* The whole graph copied under scope c, by tr. */
static ge_graph *copied(const ge_transformer *tr)
{
	ge_graph *g = make(200, 0);
	ge_view v;
	ge_error err;
	size_t n = ge_graph_capacity(g);
	ge_opid *ops = malloc(n * sizeof *ops);
	for (size_t i = 0; i < n; i++)
		ops[i] = (ge_opid)i;
	ge_transform_opts o = {0};
	o.dst_scope = "c";
	int rc = ge_view_init(&v, g, ops, n, NULL, 0, &err);
	if (!rc)
		rc = ge_transform(tr, &v, &o, NULL, NULL, &err);
	if (rc)
		tap_diag("transform: %s", err.msg);
	ge_view_free(&v);
	free(ops);
	return g;
}

static void test_copy(void)
{
	ge_transformer fast, general;
	ge_transformer_init(&fast);
	ge_transformer_init(&general);
	general.transform_op_handler = ge_copy_op_handler;
	ok(fast.transform_op_handler == NULL,
	   "the stock transformer's op handler is the stock copy (NULL)");
	ge_graph *a = copied(&fast), *b = copied(&general);
	ge_buf x = GE_BUF_INIT, y = GE_BUF_INIT;
	ge_graph_encode_graphdef(a, &x);
	ge_graph_encode_graphdef(b, &y);
	ok(x.len == y.len && !memcmp(x.data, y.data, x.len) &&
		   ge_graph_num_ops(a) == 2 * (1 + 2 * 200),
	   "the fast copy makes the graph the handler makes (%zu ops)",
	   ge_graph_num_ops(a));
	ge_buf_free(&x);
	ge_buf_free(&y);
	ge_graph_free(a);
	ge_graph_free(b);
}

static int cmp_t(const void *a, const void *b)
{
	const ge_tref *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Whether two lists of tensors hold the same tensors. */
static int same_ts(ge_tvec *a, ge_tvec *b)
{
	if (a->n != b->n)
		return 0;
	if (!a->n)
		return 1;
	qsort(a->v, a->n, sizeof *a->v, cmp_t);
	qsort(b->v, b->n, sizeof *b->v, cmp_t);
	return !memcmp(a->v, b->v, a->n * sizeof *a->v);
}

static void test_whole_view(void)
{
	for (int dangling = 0; dangling <= 1; dangling++) {
		ge_graph *g = make(50, dangling);
		ge_error err;
		/* an op removed, so that ids have a hole */
		ge_graph_remove_op(g, ge_graph_find(g, "l49/b"), 1, &err);
		size_t cap = ge_graph_capacity(g), n = 0;
		ge_opid *fwd = malloc(cap * sizeof *fwd);
		ge_opid *rev = malloc(cap * sizeof *rev);
		for (size_t i = 0; i < cap; i++)
			if (ge_op_alive(g, (ge_opid)i))
				fwd[n++] = (ge_opid)i;
		for (size_t i = 0; i < n; i++)
			rev[i] = fwd[n - 1 - i];
		ge_view a, b;
		int rc = ge_view_init(&a, g, fwd, n, NULL, 0, &err) ||
			 ge_view_init(&b, g, rev, n, NULL, 0, &err);
		ok(!rc, "views made");
		int same_ops = a.ops.n == n && b.ops.n == n;
		for (size_t i = 0; same_ops && i < n; i++)
			same_ops = a.ops.v[i] == fwd[i];
		ok(same_ops && same_ts(&a.inputs, &b.inputs) &&
		   same_ts(&a.outputs, &b.outputs) && !a.passthroughs.n,
		   "every op in id order (%s): the ops in order, and the "
		   "inputs (%zu) and outputs (%zu) the general path gives",
		   dangling ? "dangling inputs" : "all inputs inside",
		   a.inputs.n, a.outputs.n);
		ge_view c;
		rc = ge_view_init(&c, g, fwd, n - 1, NULL, 0, &err);
		ok(!rc && c.outputs.n >= 1 && c.ops.n == n - 1,
		   "all but the last op: a view with outputs of its own");
		ge_view_free(&a);
		ge_view_free(&b);
		ge_view_free(&c);
		free(fwd);
		free(rev);
		ge_graph_free(g);
	}
}

int main(void)
{
	test_encode();
	test_sinks();
	test_copy();
	test_whole_view();
	return tap_done();
}
