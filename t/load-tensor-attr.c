/*
 * load-tensor-attr: a load checks a Const's tensor attr through a direct
 * walk of its plain TensorProto fields, and must refuse exactly what the
 * descriptor-driven check (ge_pb_check) refuses, with the same message.
 * Each tensor below is loaded whole and with every byte of its
 * TensorProto replaced by a few values that make bad tags, bad wire
 * types, cut lengths and nested messages; a changed byte leaves the
 * node's framing as it is, so the verdict is the attr's alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "base/bounds.h"
#include "functions/func.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"
#include "tensorflow/core/framework/node_def.pb-c.h"

static void put_varint(ge_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	ge_buf_add(b, t, n);
}

static void put_len(ge_buf *b, unsigned field, const void *p, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	ge_buf_add(b, p, n);
}

/* Appends GraphDef bytes of a Const `name` whose "value" entry is
 * [ent, ent + n) */
static void node_of(ge_buf *g, const char *name, const uint8_t *ent,
		    size_t n)
{
	ge_buf nd = GE_BUF_INIT;
	put_len(&nd, 1, name, strlen(name));
	put_len(&nd, 2, "Const", 5);
	put_len(&nd, 5, ent, n);
	put_len(&nd, 5, "\x0a\x05" "dtype" "\x12\x02\x30\x01", 11);
	put_len(g, 1, nd.data, nd.len);
	ge_buf_free(&nd);
}

static void graph_of(ge_buf *g, const uint8_t *ent, size_t n)
{
	g->len = 0;
	node_of(g, "c", ent, n);
}

/* The attr check's report of a graph, "" when it does not load */
static char *report_of(const ge_buf *g)
{
	ge_graph *gr = NULL;
	ge_error err = {0, ""};
	ge_buf r = GE_BUF_INIT;
	ge_buf_add(&r, "", 0);
	if (ge_graph_parse_graphdef(g->data, g->len, "<t>", &gr, &err) == 0)
		ge_graph_check_attrs(gr, (size_t)-1, 0, &r);
	ge_buf_add(&r, "", 1);
	ge_graph_free(gr);
	return (char *)r.data;
}

/* The attr check of node 'c' after a node 'a' of the same shape but
 * other values, which may pass it on, must report what it reports of
 * the two nodes alone. */
static const uint8_t *base_ent;
static size_t base_len;

static int same_check(const uint8_t *ent, size_t n, const char *what)
{
	ge_buf g = GE_BUF_INIT;
	node_of(&g, "a", base_ent, base_len);
	char *a = report_of(&g);
	graph_of(&g, ent, n);
	char *c = report_of(&g);
	g.len = 0;
	node_of(&g, "a", base_ent, base_len);
	node_of(&g, "c", ent, n);
	char *both = report_of(&g);
	size_t al = strlen(a);
	int same = !strncmp(both, a, al) && !strcmp(both + al, c);
	if (!same)
		tap_diag("%s: check of a then c '%s', alone '%s' '%s'", what,
			 both, a, c);
	free(a);
	free(c);
	free(both);
	ge_buf_free(&g);
	return same;
}

/* The AttrEntry "value" holding tensor bytes t; *off is where t starts. */
static void entry_key_of(ge_buf *e, const char *key, const uint8_t *t,
			 size_t n, size_t *off)
{
	ge_buf av = GE_BUF_INIT;
	put_len(&av, 8, t, n);
	e->len = 0;
	put_len(e, 1, key, strlen(key));
	put_varint(e, 2 << 3 | 2);
	put_varint(e, av.len);
	*off = e->len + (av.len - n);
	ge_buf_add(e, av.data, av.len);
	ge_buf_free(&av);
}

static void entry_of(ge_buf *e, const uint8_t *t, size_t n, size_t *off)
{
	entry_key_of(e, "value", t, n, off);
}

static int mismatches;

/* Loads the entry; the verdict and message must be the full check's. */
static void one(const uint8_t *ent, size_t n, const char *what, int report)
{
	const char *why = NULL;
	int bad = ge_pb_check(&tensorflow__node_def__attr_entry__descriptor,
			      ent, n, GE_MAX_DEPTH - 2, &why) != 0;
	char want[256] = "";
	if (bad)
		snprintf(want, sizeof want,
			 "<t>: node 'c': attr 'value' #0 is corrupt (%s)", why);
	ge_buf g = GE_BUF_INIT;
	graph_of(&g, ent, n);
	ge_graph *gr = NULL;
	ge_error err = {0, ""};
	int rc = ge_graph_parse_graphdef(g.data, g.len, "<t>", &gr, &err);
	int same = bad ? rc != 0 && !strcmp(err.msg, want) : rc == 0;
	if (same && !bad)
		same = same_check(ent, n, what);
	if (!same) {
		mismatches++;
		tap_diag("%s: full check %s, load rc %d '%s'", what,
			 bad ? want : "passes", rc, err.msg);
	}
	if (report)
		ok(same, "%s: %s as the full check", what,
		   bad ? "refused" : "loaded");
	ge_graph_free(gr);
	ge_buf_free(&g);
}

static void mutate(const uint8_t *t, size_t n, const char *what)
{
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x03, 0x05, 0x07,
				       0x0b, 0x12, 0x72, 0x7a, 0x7f, 0x80,
				       0xff};
	ge_buf e = GE_BUF_INIT;
	size_t off;
	entry_of(&e, t, n, &off);
	base_ent = e.data;
	base_len = e.len;
	one(e.data, e.len, what, 1);
	int before = mismatches, tries = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t v = 0; v < sizeof vals; v++) {
			uint8_t *b = e.data;
			uint8_t keep = b[off + i];
			b[off + i] = vals[v];
			char w[128];
			snprintf(w, sizeof w, "%s, byte %zu = 0x%02x", what, i,
				 vals[v]);
			one(e.data, e.len, w, 0);
			b[off + i] = keep;
			tries++;
		}
	ok(mismatches == before, "%s: %d changed bytes give the full "
	   "check's verdict", what, tries);
	ge_buf_free(&e);
}

/* Two Consts that differ only in tensor values share the function names
 * of their attrs: a load must still find each of them calling "fn",
 * and only c when a names none. */
static void test_func_names(void)
{
	static const uint8_t f_ent[] = "\x0a\x01" "f" "\x12\x06\x52\x04"
				       "\x0a\x02" "fn";
	for (int a_calls = 1; a_calls >= 0; a_calls--) {
		ge_buf g = GE_BUF_INIT, e = GE_BUF_INIT, nd = GE_BUF_INIT;
		size_t off;
		for (int k = 0; k < 2; k++) {
			const char *t = k ? "\x08\x01\x12\x04\x12\x02\x08\x04"
					    "\x22\x04" "bbbb"
					  : "\x08\x01\x12\x04\x12\x02\x08\x04"
					    "\x22\x04" "aaaa";
			entry_of(&e, (const uint8_t *)t, 14, &off);
			nd.len = 0;
			put_len(&nd, 1, k ? "c" : "a", 1);
			put_len(&nd, 2, "Const", 5);
			put_len(&nd, 5, e.data, e.len);
			put_len(&nd, 5, "\x0a\x05" "dtype" "\x12\x02\x30\x01",
				11);
			if (k || a_calls)
				put_len(&nd, 5, f_ent, sizeof f_ent - 1);
			put_len(&g, 1, nd.data, nd.len);
		}
		/* library { function { signature { name: "fn" } } } */
		put_len(&g, 2, "\x0a\x06\x0a\x04\x0a\x02" "fn", 8);
		char path[] = "/tmp/ge-load-tensor-attr-XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || write(fd, g.data, g.len) != (ssize_t)g.len) {
			printf("Bail out! cannot write %s\n", path);
			exit(1);
		}
		close(fd);
		ge_graph *gr = NULL;
		ge_error err = {0, ""};
		int rc = ge_load(path, NULL, &gr, &err);
		unlink(path);
		ok(rc == 0, "a graph of Consts naming a function loads (%s)",
		   err.msg);
		ge_func_ref *refs = NULL;
		size_t n = rc ? 0 : ge_func_callers(gr, ge_func_find(gr, "fn"),
						    &refs);
		ok(n == (size_t)(a_calls ? 2 : 1) &&
		   refs[n - 1].op == ge_graph_find(gr, "c"),
		   "%s found calling the function (%zu)",
		   a_calls ? "both Consts" : "only c", n);
		free(refs);
		ge_graph_free(gr);
		ge_buf_free(&g);
		ge_buf_free(&e);
		ge_buf_free(&nd);
	}
}

int main(void)
{
	test_func_names();
	/* dtype, shape [1 4], 16 bytes of content */
	static const uint8_t content[] =
		"\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x04"
		"\x22\x10" "0123456789abcdef";
	/* float_val packed and unpacked, a fixed64, a named dim, unknown
	 * fields, version_number */
	static const uint8_t vals[] =
		"\x08\x01\x12\x0b\x12\x05\x08\x02\x12\x01x\x18\x00\x20\x07"
		"\x2a\x04\x00\x00\x00\x3f\x2d\x00\x00\x80\x3f"
		"\x31\x00\x00\x00\x00\x00\x00\xf0\x3f\x18\x05"
		"\xf8\x07\x01";
	/* a resource handle (14) and a variant (15): messages the direct
	 * walk leaves to the full check */
	static const uint8_t nested[] =
		"\x08\x14\x72\x06\x0a\x02\x64\x30\x18\x01"
		"\x7a\x04\x0a\x02\x74\x6e";
	/* a negative dim, an unknown_rank, an empty shape */
	static const uint8_t dims[] =
		"\x08\x01\x12\x0f\x12\x0b\x08\xfe\xff\xff\xff\xff\xff\xff\xff"
		"\xff\x01\x18\x01\x12\x00";
	mutate(content, sizeof content - 1, "tensor_content");
	/* after a Const that passes, others of its skeleton but for what
	 * the check reads: a shape with a negative dim, a second shape, no
	 * shape, the tensor under another key */
	static const struct {
		const char *key, *t, *what;
		size_t n;
	} after[] = {
		{"value", "\x08\x01\x12\x11\x12\x02\x08\x01\x12\x0b\x08"
		 "\xfd\xff\xff\xff\xff\xff\xff\xff\xff\x01\x22\x00",
		 "negative dim", 23},
		{"value", "\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x04"
		 "\x12\x04\x12\x02\x08\x04\x22\x01z",
		 "two shapes", 21},
		{"value", "\x08\x01\x22\x01z", "no shape", 5},
		{"dtype", "\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x04"
		 "\x22\x01z", "tensor as dtype", 15},
		{"valuf", "\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x04"
		 "\x22\x01z", "other key", 15},
	};
	{
		ge_buf e = GE_BUF_INIT, b = GE_BUF_INIT;
		size_t off;
		entry_of(&b, content, sizeof content - 1, &off);
		base_ent = b.data;
		base_len = b.len;
		for (size_t i = 0; i < sizeof after / sizeof *after; i++) {
			entry_key_of(&e, after[i].key,
				     (const uint8_t *)after[i].t, after[i].n,
				     &off);
			one(e.data, e.len, after[i].what, 1);
		}
		ge_buf_free(&e);
		ge_buf_free(&b);
	}
	mutate(vals, sizeof vals - 1, "float_val and others");
	mutate(nested, sizeof nested - 1, "resource and variant");
	mutate(dims, sizeof dims - 1, "odd dims");
	/* more than plain_tensor_fields' two levels of nesting: a Dim's
	 * field 2 is a string, not a message */
	static const uint8_t deep[] =
		"\x12\x08\x12\x06\x12\x04\x12\x02\x08\x01";
	mutate(deep, sizeof deep - 1, "dim name nested");
	return tap_done();
}
