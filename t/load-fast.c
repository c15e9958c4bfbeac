/*
 * load-fast: the short cuts of the GraphDef load give the verdict of the
 * plain way.  A NUL in a name, an op type or an input is found at every
 * place of strings of every length around the eight-byte steps of the
 * test; inputs resolve to the op they name when the ops just before
 * differ from it in one byte only; an input that is a plain name and one
 * that needs ge_parse_input read as ge_parse_input reads them; names,
 * copied one after the other into blocks, come back whole, long ones too;
 * inputs are found wherever they stand among the node's other fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"

/* A NodeDef of name (nlen bytes), type (tlen bytes) and inputs, as a
 * GraphDef node field. */
static void node(ge_buf *b, const char *name, size_t nlen, const char *type,
		 size_t tlen, const char *const *in, const size_t *inlen,
		 size_t nin)
{
	ge_buf n = GE_BUF_INIT;
	ge_buf_lenfield(&n, 1, name, nlen);
	ge_buf_lenfield(&n, 2, type, tlen);
	for (size_t i = 0; i < nin; i++)
		ge_buf_lenfield(&n, 3, in[i], inlen[i]);
	ge_buf_lenfield(b, 1, n.data, n.len);
	ge_buf_free(&n);
}

static int parse(const ge_buf *b, ge_graph **g, ge_error *err)
{
	return ge_parse(b->data, b->len, GE_FMT_GRAPHDEF, "f.pb", NULL, g,
			err);
}

/* A NUL at each place of names, op types and inputs of 1 to 40 bytes. */
static void test_nul(void)
{
	int bad_name = 0, bad_type = 0, bad_input = 0, good = 0;
	char s[64];
	for (size_t len = 1; len <= 40; len++) {
		for (size_t at = 0; at <= len; at++) {
			/* at == len: no NUL, the string is good */
			memset(s, 'x', len);
			s[0] = 'n';
			s[len] = 0;
			if (at < len)
				s[at] = 0;
			ge_buf b = GE_BUF_INIT;
			ge_graph *g = NULL;
			ge_error err;
			char want[160];
			/* the name */
			node(&b, "p", 1, "NoOp", 4, NULL, NULL, 0);
			node(&b, s, len, "NoOp", 4, NULL, NULL, 0);
			int rc = parse(&b, &g, &err);
			snprintf(want, sizeof want,
				 "f.pb: node #1: name holds a NUL byte");
			if (at < len ? rc != GE_EFORMAT || strcmp(err.msg, want)
				     : rc != GE_OK ||
					       strlen(ge_op_name(g, 1)) != len)
				bad_name++;
			ge_graph_free(g);
			g = NULL;
			/* the op type, one not met before */
			b.len = 0;
			node(&b, "p", 1, "NoOp", 4, NULL, NULL, 0);
			node(&b, "q", 1, s, len, NULL, NULL, 0);
			rc = parse(&b, &g, &err);
			if (at < len ? rc != GE_EFORMAT ||
					       strcmp(err.msg,
						      "f.pb: node 'q': op type "
						      "or device holds a NUL "
						      "byte")
				     : rc != GE_OK ||
					       strlen(ge_op_type(g, 1)) != len)
				bad_type++;
			ge_graph_free(g);
			g = NULL;
			/* an input naming it */
			b.len = 0;
			const char *in[1] = {s};
			size_t inlen[1] = {len};
			node(&b, "p", 1, "NoOp", 4, NULL, NULL, 0);
			node(&b, "q", 1, "NoOp", 4, in, inlen, 1);
			rc = parse(&b, &g, &err);
			if (at < len) {
				if (rc != GE_EFORMAT ||
				    !strstr(err.msg, "node 'q': malformed "
						     "input"))
					bad_input++;
			} else if (rc != GE_OK ||
				   ge_op_input(g, 1, 0).op != GE_NOOP ||
				   strcmp(ge_op_dangling_input(g, 1, 0), s)) {
				bad_input++;
			} else {
				good++;
			}
			ge_graph_free(g);
			ge_buf_free(&b);
		}
	}
	is_int(0, bad_name, "a NUL anywhere in a name of 1 to 40 bytes is "
	       "refused, naming the node's number; none: the name is whole");
	is_int(0, bad_type, "the same for an op type, naming the node");
	is_int(0, bad_input, "the same for an input: malformed input");
	is_int(40, good, "  (an input without a NUL dangles as written)");
}

/* Ops whose names differ from the one an input names in one byte, just
 * before the consumer: the input resolves to the op it names. */
static void test_near_names(void)
{
	int bad = 0, n = 0;
	char a[64], c[64];
	for (size_t len = 1; len <= 40; len++) {
		for (size_t at = 0; at < len; at++) {
			ge_buf b = GE_BUF_INIT;
			for (size_t k = 0; k < len; k++)
				a[k] = (char)('a' + k % 26);
			memcpy(c, a, len);
			c[at] = c[at] == 'Z' ? 'Y' : 'Z';
			const char *in[1] = {a};
			size_t inlen[1] = {len};
			/* the op named first, then three that differ from it
			 * in one byte (one each side of it in the index's
			 * order of tries), then the consumer */
			node(&b, a, len, "NoOp", 4, NULL, NULL, 0);
			node(&b, c, len, "NoOp", 4, NULL, NULL, 0);
			char d[64];
			memcpy(d, a, len);
			d[len - 1] = '_';
			node(&b, d, len, "NoOp", 4, NULL, NULL, 0);
			node(&b, "zz", 2, "NoOp", 4, NULL, NULL, 0);
			node(&b, "q", 1, "NoOp", 4, in, inlen, 1);
			ge_graph *g;
			ge_error err;
			if (parse(&b, &g, &err) == GE_OK) {
				n++;
				if (ge_op_input(g, 4, 0).op != 0)
					bad++;
				ge_graph_free(g);
			} else {
				bad++;
			}
			ge_buf_free(&b);
		}
	}
	is_int(0, bad, "an input names its op among ops whose names differ "
	       "from it in one byte, at each place of names of 1 to 40 "
	       "bytes");
	is_int(820, n, "  (every graph loads)");
}

/* Inputs read as ge_parse_input reads them. */
static void test_input_texts(void)
{
	static const char *texts[] = {
		"x", "x:0", "x:1", "x:12", "^x", "x:", ":1", "x:a", "1",
		"x1", "x:1a", "^", "", "x::1", "^x:1", "x:99999999999",
		"x:2147483647", "x:2147483648", "a:b:3", "x_1", "long_name/x",
		"long_name/x:3", "x:-1", "x: 1",
	};
	int bad = 0;
	for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
		const char *t = texts[k];
		size_t off, nl;
		int32_t index;
		int perr = ge_parse_input(t, strlen(t), &off, &nl, &index);
		/* a producer named as the text names one */
		char pname[64] = "x";
		if (!perr)
			snprintf(pname, sizeof pname, "%.*s", (int)nl,
				 t + off);
		ge_buf b = GE_BUF_INIT;
		const char *in[1] = {t};
		size_t inlen[1] = {strlen(t)};
		node(&b, pname, strlen(pname), "NoOp", 4, NULL, NULL, 0);
		node(&b, "q", 1, "NoOp", 4, in, inlen, 1);
		ge_graph *g;
		ge_error err;
		int rc = parse(&b, &g, &err);
		if (perr || !*pname) {
			if (rc == GE_OK) {
				bad++;
				ge_graph_free(g);
			}
		} else if (rc != GE_OK) {
			bad++;
			printf("# %s: %s\n", t, err.msg);
		} else {
			ge_tref want = {0, index};
			ge_tref got = index == GE_CONTROL
					      ? (ge_tref){ge_op_control_input(
								  g, 1, 0),
							  GE_CONTROL}
					      : ge_op_input(g, 1, 0);
			if (got.op != want.op || got.index != want.index) {
				bad++;
				printf("# %s: %u:%d\n", t, (unsigned)got.op,
				       (int)got.index);
			}
			ge_graph_free(g);
		}
		ge_buf_free(&b);
	}
	is_int(0, bad, "inputs name the op and output ge_parse_input finds, "
	       "or are refused where it refuses them");
}

/* Names of every length up to past a quarter of a name block (16 KiB),
 * enough of them to fill several blocks: each comes back whole and is
 * found by name. */
static void test_name_blocks(void)
{
	enum { N = 600 };
	ge_buf b = GE_BUF_INIT;
	char *nm = malloc(40000);
	size_t lens[N];
	unsigned r = 12345;
	for (int i = 0; i < N; i++) {
		r = r * 1103515245u + 12345u;
		size_t len = i % 7 == 0 ? 12000 + (r >> 8) % 12000
					: 1 + (r >> 8) % 400;
		lens[i] = len;
		for (size_t k = 0; k < len; k++)
			nm[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
		snprintf(nm, 8, "n%05d", i);
		nm[6] = '_';
		if (len < 7)
			lens[i] = len = 7;
		node(&b, nm, len, "NoOp", 4, NULL, NULL, 0);
	}
	ge_graph *g;
	ge_error err;
	int bad = 0;
	if (parse(&b, &g, &err) != GE_OK) {
		ok(0, "names in blocks: %s", err.msg);
		free(nm);
		ge_buf_free(&b);
		return;
	}
	for (int i = 0; i < N; i++) {
		size_t len = lens[i];
		for (size_t k = 0; k < len; k++)
			nm[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
		snprintf(nm, 8, "n%05d", i);
		nm[6] = '_';
		nm[len] = 0;
		if (strcmp(ge_op_name(g, (ge_opid)i), nm) ||
		    ge_graph_find(g, nm) != (ge_opid)i)
			bad++;
	}
	is_int(0, bad, "600 names of 7 to 24,000 bytes come back whole and "
	       "are found");
	ge_graph_free(g);
	free(nm);
	ge_buf_free(&b);
}

/* A Const's NodeDef (name, type, a value attr of a float tensor of n
 * values, each byte v, with a version_number after them, and a dtype
 * attr), as a GraphDef node field; its attrs start at *attr0 of b when
 * attr0 is given. */
static void const_node(ge_buf *b, const char *name, size_t n, uint8_t v,
		       size_t *attr0)
{
	ge_buf nd = GE_BUF_INIT, e = GE_BUF_INIT, val = GE_BUF_INIT,
	       t = GE_BUF_INIT, sh = GE_BUF_INIT, dim = GE_BUF_INIT;
	uint8_t content[64];
	memset(content, v, sizeof content);
	ge_buf_lenfield(&nd, 1, name, strlen(name));
	ge_buf_lenfield(&nd, 2, "Const", 5);
	size_t a0 = nd.len;
	/* value: a tensor of shape [n], with a field after its content */
	ge_buf_tag(&t, 1, 0);
	ge_buf_varint(&t, 1);
	ge_buf_tag(&dim, 1, 0);
	ge_buf_varint(&dim, n);
	ge_buf_lenfield(&sh, 2, dim.data, dim.len);
	ge_buf_lenfield(&t, 2, sh.data, sh.len);
	ge_buf_lenfield(&t, 4, content, 4 * n);
	ge_buf_tag(&t, 3, 0);
	ge_buf_varint(&t, 7);
	ge_buf_lenfield(&val, 8, t.data, t.len);
	ge_buf_lenfield(&e, 1, "value", 5);
	ge_buf_lenfield(&e, 2, val.data, val.len);
	ge_buf_lenfield(&nd, 5, e.data, e.len);
	/* then dtype: DT_FLOAT */
	e.len = val.len = 0;
	ge_buf_lenfield(&e, 1, "dtype", 5);
	ge_buf_tag(&val, 6, 0);
	ge_buf_varint(&val, 1);
	ge_buf_lenfield(&e, 2, val.data, val.len);
	ge_buf_lenfield(&nd, 5, e.data, e.len);
	size_t before = b->len;
	ge_buf_lenfield(b, 1, nd.data, nd.len);
	if (attr0)
		*attr0 = before + (b->len - before - nd.len) + a0;
	ge_buf_free(&nd);
	ge_buf_free(&e);
	ge_buf_free(&val);
	ge_buf_free(&t);
	ge_buf_free(&sh);
	ge_buf_free(&dim);
}

/* The verdict of a load, and the attr check's report when it loads. */
static void verdict(const ge_buf *b, char *out, size_t cap)
{
	ge_graph *g;
	ge_error err;
	if (parse(b, &g, &err) != GE_OK) {
		snprintf(out, cap, "refused: %s", err.msg);
		return;
	}
	ge_buf rep = GE_BUF_INIT;
	size_t n = ge_graph_check_attrs(g, 100, 0, &rep);
	snprintf(out, cap, "loaded, %zu problems: %.*s", n, (int)rep.len,
		 rep.data ? (const char *)rep.data : "");
	ge_buf_free(&rep);
	ge_graph_free(g);
}

/* A Const after one of its type whose attr bytes are the same but for
 * its tensor_content gets their verdict without the walks: every byte of
 * its attrs, changed, must give the verdict it gets after a Const of
 * another length, which is walked. */
static void test_content_twins(void)
{
	static const uint8_t vals[] = {0x00, 0x01, 0x08, 0x0a, 0x12, 0x22,
				       0x7f, 0x80, 0xff};
	ge_buf one = GE_BUF_INIT, two = GE_BUF_INIT;
	size_t a1, a2;
	const_node(&one, "r", 4, 0x11, NULL);
	const_node(&one, "s", 4, 0x22, &a1);
	const_node(&two, "r", 5, 0x11, NULL);
	const_node(&two, "s", 4, 0x22, &a2);
	int diff = 0, n = 0, refused = 0;
	char va[4096], vb[4096];
	verdict(&one, va, sizeof va);
	verdict(&two, vb, sizeof vb);
	ok(!strcmp(va, vb) && !strncmp(va, "loaded, 0", 9),
	   "two Consts differing only in tensor_content load: %s", va);
	for (size_t at = a1; at < one.len; at++) {
		for (size_t k = 0; k < sizeof vals; k++) {
			uint8_t was = one.data[at];
			if (vals[k] == was)
				continue;
			size_t at2 = at - a1 + a2;
			one.data[at] = two.data[at2] = vals[k];
			verdict(&one, va, sizeof va);
			verdict(&two, vb, sizeof vb);
			if (strcmp(va, vb)) {
				diff++;
				printf("# byte %zu = %02x: %s | %s\n", at - a1,
				       vals[k], va, vb);
			}
			refused += !strncmp(va, "refused", 7);
			n++;
			one.data[at] = two.data[at2] = was;
		}
	}
	is_int(0, diff, "each of %d changed bytes of the second Const's attrs "
	       "gets the verdict it gets after a Const of another length "
	       "(%d refused)", n, refused);
	ge_buf_free(&one);
	ge_buf_free(&two);
}

/* The uses and control outputs of op id, as text: "op:slot ..." then
 * "^op ...". */
static void uses_text(const ge_graph *g, ge_opid id, char *out, size_t cap)
{
	size_t n, k = 0;
	const ge_use *u = ge_op_uses(g, id, &n);
	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(out + k, cap - k, "%s:%u ",
				      ge_op_name(g, u[i].op),
				      (unsigned)u[i].slot);
	const ge_opid *c = ge_op_control_outputs(g, id, &n);
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(out + k, cap - k, "^%s ",
				      ge_op_name(g, c[i]));
}

/* Consumer lists, filled in one pass when no input names a later op and
 * in two otherwise, come out the same: in consumer and slot order. */
static void test_consumer_lists(void)
{
	static const char *bi[] = {"a", "a:1", "^a"};
	static const char *ci[] = {"b", "a", "c", "^b"};
	static const char *di[] = {"e", "a"};
	static const char *ei[] = {"a"};
	size_t bl[3], cl[4], dl[2], el[1];
	for (int k = 0; k < 3; k++)
		bl[k] = strlen(bi[k]);
	for (int k = 0; k < 4; k++)
		cl[k] = strlen(ci[k]);
	for (int k = 0; k < 2; k++)
		dl[k] = strlen(di[k]);
	el[0] = 1;
	char want[3][128], got[128];
	strcpy(want[0], "b:0 b:1 c:1 ^b ");
	strcpy(want[1], "c:0 ^c ");
	strcpy(want[2], "c:2 ");
	for (int forward = 0; forward < 2; forward++) {
		ge_buf b = GE_BUF_INIT;
		node(&b, "a", 1, "NoOp", 4, NULL, NULL, 0);
		node(&b, "b", 1, "NoOp", 4, bi, bl, 3);
		node(&b, "c", 1, "NoOp", 4, ci, cl, 4);
		if (forward) {
			node(&b, "d", 1, "NoOp", 4, di, dl, 2);
			node(&b, "e", 1, "NoOp", 4, ei, el, 1);
		}
		ge_graph *g;
		ge_error err;
		int bad = parse(&b, &g, &err) != GE_OK;
		if (!bad) {
			for (ge_opid id = 0; id < 3; id++) {
				uses_text(g, id, got, sizeof got);
				if (forward && id == 0)
					bad |= strcmp(got, "b:0 b:1 c:1 d:1 "
							   "e:0 ^b ") != 0;
				else
					bad |= strcmp(got, want[id]) != 0;
			}
			if (forward) {
				uses_text(g, 4, got, sizeof got);
				bad |= strcmp(got, "d:0 ") != 0;
			}
			ge_graph_free(g);
		}
		ok(!bad, "consumer lists in consumer order, %s",
		   forward ? "an input naming a later op" : "no input naming "
							   "a later op");
		ge_buf_free(&b);
	}
}

/* The inputs of a node, as text ("a:1 ^b "). */
static void inputs_text(const ge_graph *g, ge_opid id, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; i < ge_op_num_inputs(g, id); i++) {
		ge_tref t = ge_op_input(g, id, i);
		k += (size_t)snprintf(out + k, cap - k, "%s:%d ",
				      ge_op_name(g, t.op), (int)t.index);
	}
	for (size_t i = 0; i < ge_op_num_control_inputs(g, id); i++)
		k += (size_t)snprintf(out + k, cap - k, "^%s ",
				      ge_op_name(g, ge_op_control_input(g, id,
								       i)));
}

/* The second pass reads a node's inputs from where the first pass saw
 * the first one to the last, inline where a field has a one-byte tag and
 * length: inputs before the name, after the device or an attr, between
 * unknown fields, behind a name too long for a one-byte length, resolve
 * as the plain walk reads them, in field order. */
static void test_input_places(void)
{
	char longname[300];
	memset(longname, 'q', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	enum { IN_A, IN_B1, IN_CA, NAME, OP, DEV, ATTR, UNK_VARINT, UNK_LEN };
	static const int orders[][8] = {
		{NAME, OP, IN_A, IN_B1, IN_CA, DEV, ATTR, -1},
		{IN_A, NAME, IN_B1, OP, IN_CA, -1},
		{NAME, DEV, ATTR, OP, IN_A, IN_B1, IN_CA, -1},
		{UNK_VARINT, NAME, UNK_LEN, OP, IN_A, ATTR, IN_B1, IN_CA},
		{OP, ATTR, IN_A, DEV, IN_B1, NAME, IN_CA, -1},
		{IN_A, IN_B1, IN_CA, OP, NAME, -1},
	};
	int bad = 0;
	for (int longn = 0; longn < 2; longn++)
		for (size_t o = 0; o < sizeof orders / sizeof *orders; o++) {
			const char *nm = longn ? longname : "x";
			ge_buf b = GE_BUF_INIT, n = GE_BUF_INIT, a = GE_BUF_INIT;
			node(&b, "a", 1, "NoOp", 4, NULL, NULL, 0);
			node(&b, "b", 1, "NoOp", 4, NULL, NULL, 0);
			/* an attr entry: key "T", an AttrValue of type 1 */
			ge_buf_lenfield(&a, 1, "T", 1);
			ge_buf_lenfield(&a, 2, "\x30\x01", 2);
			for (int k = 0; k < 8 && orders[o][k] >= 0; k++) {
				switch (orders[o][k]) {
				case IN_A: ge_buf_lenfield(&n, 3, "a", 1); break;
				case IN_B1: ge_buf_lenfield(&n, 3, "b:1", 3); break;
				case IN_CA: ge_buf_lenfield(&n, 3, "^a", 2); break;
				case NAME: ge_buf_lenfield(&n, 1, nm, strlen(nm)); break;
				case OP: ge_buf_lenfield(&n, 2, "Foo", 3); break;
				case DEV: ge_buf_lenfield(&n, 4, "/cpu:0", 6); break;
				case ATTR: ge_buf_lenfield(&n, 5, a.data, a.len); break;
				case UNK_VARINT:
					ge_buf_tag(&n, 40, 0);
					ge_buf_varint(&n, 300);
					break;
				case UNK_LEN: ge_buf_lenfield(&n, 41, "zz", 2); break;
				}
			}
			ge_buf_lenfield(&b, 1, n.data, n.len);
			ge_graph *g;
			ge_error err;
			char got[128];
			if (parse(&b, &g, &err) != GE_OK) {
				tap_diag("order %zu: %s", o, err.msg);
				bad++;
			} else {
				inputs_text(g, ge_graph_find(g, nm), got,
					    sizeof got);
				if (strcmp(got, "a:0 b:1 ^a ")) {
					tap_diag("order %zu%s: %s", o,
					     longn ? ", long name" : "", got);
					bad++;
				}
				ge_graph_free(g);
			}
			ge_buf_free(&a);
			ge_buf_free(&n);
			ge_buf_free(&b);
		}
	ok(!bad, "inputs before the name, after the device or an attr, among "
		 "unknown fields, behind a long name: found in field order");
}

int main(void)
{
	test_nul();
	test_near_names();
	test_input_texts();
	test_name_blocks();
	test_content_twins();
	test_consumer_lists();
	test_input_places();
	return tap_done();
}
