/*
 * t/provenance.c: NodeDef.experimental_debug_info through lib/editor/provenance.c:
 * read, merged as TensorFlow merges it, written back byte for byte, and set
 * by inlining and constant folding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor/fold.h"
#include "editor/inline.h"
#include "editor/provenance.h"
#include "tap.h"
#include "testutil.h"

#define PH(n) \
	"node { name: \"" n "\" op: \"Placeholder\" " \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
#define FCONST(n, extra) \
	"node { name: \"" n "\" op: \"Const\" " extra \
	"attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { } float_val: 3 } } } }\n"
#define BIN(t, n, x, y, extra) \
	"node { name: \"" n "\" op: \"" t "\" input: \"" x "\" input: \"" y \
	"\" " extra "attr { key: \"T\" value { type: DT_FLOAT } } }\n"
#define IDENT(n, x, extra) \
	"node { name: \"" n "\" op: \"Identity\" input: \"" x "\" " extra \
	"attr { key: \"T\" value { type: DT_FLOAT } } }\n"
#define DBG(nodes, funcs) \
	"experimental_debug_info { " nodes " " funcs " } "

/* The names of a list, comma-joined, in one of 8 static buffers. */
static const char *join(const ge_strvec *v)
{
	static char buf[8][512];
	static int k;
	char *b = buf[k++ & 7];
	size_t len = 0;
	b[0] = 0;
	for (size_t i = 0; i < v->n; i++)
		len += (size_t)snprintf(b + len, 512 - len, "%s%s",
					i ? "," : "", v->v[i]);
	return b;
}

/* "nodes|funcs" of op name */
static const char *origins(ge_graph *g, const char *name)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ & 3];
	ge_strvec n = GE_VEC_INIT, f = GE_VEC_INIT;
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP)
		return "(no op)";
	if (ge_op_origins(g, id, &n, &f, NULL) < 0)
		return "(error)";
	snprintf(b, 1024, "%s|%s", join(&n), join(&f));
	ge_strvec_free(&n);
	ge_strvec_free(&f);
	return b;
}

/* Whether a and b save to the same bytes (their lengths in the name). */
static int same_bytes(ge_graph *a, ge_graph *b, const char *name)
{
	ge_buf b0 = GE_BUF_INIT, b1 = GE_BUF_INIT;
	ge_graph_encode_graphdef(a, &b0);
	ge_graph_encode_graphdef(b, &b1);
	int same = b0.len == b1.len && !memcmp(b0.data, b1.data, b0.len);
	ok(same, "%s (%zu, %zu)", name, b0.len, b1.len);
	ge_buf_free(&b0);
	ge_buf_free(&b1);
	return same;
}

static ge_graph *reload(ge_graph *g)
{
	ge_buf b = GE_BUF_INIT;
	ge_graph *h = NULL;
	ge_graph_encode_graphdef(g, &b);
	if (ge_graph_parse_graphdef(b.data, b.len, "reloaded", &h, NULL)) {
		printf("Bail out! the saved graph does not load\n");
		exit(1);
	}
	ge_buf_free(&b);
	return h;
}

static void read_and_keep(void)
{
	ge_graph *g = parse(
		PH("x")
		IDENT("a", "x", DBG("original_node_names: \"p\" "
				    "original_node_names: \"o\"",
				    "original_func_names: \"f\""))
		IDENT("b", "a", ""));
	is_string("p,o|f", origins(g, "a"),
		  "origins read in the order the op holds them");
	is_string("|", origins(g, "b"), "an op without the field has none");
	ge_strvec n = GE_VEC_INIT;
	is_int(3, ge_op_origins(g, ge_graph_find(g, "a"), &n, NULL, NULL),
	       "the count is of node and function names");
	ge_strvec_free(&n);

	/* a load and a save give the bytes back, field 6 included */
	ge_buf b1 = GE_BUF_INIT, b2 = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &b1);
	ge_graph *h = NULL;
	ge_graph_parse_graphdef(b1.data, b1.len, "again", &h, NULL);
	ge_graph_encode_graphdef(h, &b2);
	ok(b1.len == b2.len && !memcmp(b1.data, b2.data, b1.len),
	   "an untouched op is written byte for byte");
	/* an edit of an attr keeps the field as it was */
	ge_op_set_device(h, ge_graph_find(h, "a"), "/cpu:0");
	ge_op_remove_attr(h, ge_graph_find(h, "a"), "T");
	ge_graph *r = reload(h);
	is_string("p,o|f", origins(r, "a"),
		  "an op whose attrs were edited keeps its provenance");
	ge_graph_free(r);
	ge_graph_free(h);
	ge_buf_free(&b1);
	ge_buf_free(&b2);
	ge_graph_free(g);
}

static void add_and_merge(void)
{
	ge_graph *g = parse(
		PH("x")
		IDENT("a", "x", DBG("original_node_names: \"p\" "
				    "original_node_names: \"o\"",
				    "original_func_names: \"f\""))
		IDENT("b", "a", "") IDENT("c", "b", ""));
	ge_opid a = ge_graph_find(g, "a"), b = ge_graph_find(g, "b"),
		c = ge_graph_find(g, "c");
	ge_error err;
	const char *nodes[] = {"z", "o", "m"}, *funcs[] = {"e", "f"};
	is_int(GE_OK, ge_op_add_origins(g, a, nodes, 3, funcs, 2, &err),
	       "names added");
	is_string("m,o,p,z|e,f", origins(g, "a"),
		  "the sorted union, each name once");
	const char *empty[] = {""};
	is_int(GE_EINVAL, ge_op_add_origins(g, a, empty, 1, NULL, 0, &err),
	       "an empty name is refused");
	ok(strstr(err.msg, "node 'a'") != NULL, "the message names the op");

	/* TensorFlow's merge: an op without origins brings its name */
	ge_opid from[2] = {b, a};
	is_int(GE_OK, ge_op_made_from(g, c, from, 2, "test", &err),
	       "an op made from two others");
	is_string("b,m,o,p,z|e,f", origins(g, "c"),
		  "it lists one's name and the other's origins");
	size_t nlog;
	const ge_prov_rec *log = ge_prov_log(g, &nlog);
	ok(nlog == 1 && !strcmp(log[0].op, "c") && !strcmp(log[0].rule, "test")
	   && !*log[0].func, "the rule is in the log");
	ok(ge_op_attr(g, c, GE_PROV_RULE_ATTR, NULL) == NULL,
	   "by default no attr is written");

	ge_prov_set_mode(g, GE_PROV_ATTR);
	ge_op_made_from(g, b, &a, 1, "fold_x", NULL);
	const char *s;
	size_t sl;
	ok(!ge_op_attr_string(g, b, GE_PROV_RULE_ATTR, &s, &sl) && sl == 6 &&
	   !memcmp(s, "fold_x", 6), "in attr mode the rule is an attr too");

	/* written, reloaded, cloned */
	ge_graph *r = reload(g);
	is_string("b,m,o,p,z|e,f", origins(r, "c"), "saved and loaded back");
	ge_graph *k = ge_graph_clone(g);
	is_string("m,o,p,z|e,f", origins(k, "a"), "a clone keeps provenance");
	ge_graph_free(g);
	is_string("m,o,p,z|e,f", origins(k, "a"),
		  "the clone's provenance outlives the source");
	ge_op_clear_origins(k, ge_graph_find(k, "a"));
	is_string("|", origins(k, "a"), "cleared");
	ge_graph *r2 = reload(k);
	is_string("|", origins(r2, "a"), "a cleared op is written without it");
	ge_graph_free(r2);
	ge_graph_free(k);
	ge_graph_free(r);
}

static void malformed(void)
{
	/* field 6 holding a string field 1 whose length runs past its end */
	static const uint8_t nd[] = {
		0x0a, 0x14, /* GraphDef.node */
		0x0a, 0x01, 'a', 0x12, 0x0b, 'P', 'l', 'a', 'c', 'e',
		'h', 'o', 'l', 'd', 'e', 'r',
		0x32, 0x02, 0x0a, 0x05};
	ge_graph *g = NULL;
	ge_error err;
	int rc = ge_graph_parse_graphdef(nd, sizeof nd, "bad.pb", &g, &err);
	ok(rc == GE_OK, "a node with a broken field 6 loads");
	if (rc)
		return;
	ge_strvec n = GE_VEC_INIT;
	is_int(GE_EFORMAT, ge_op_origins(g, 0, &n, NULL, &err),
	       "its provenance does not decode");
	ok(strstr(err.msg, "bad.pb") && strstr(err.msg, "node 'a'"),
	   "the message names the file and the node");
	ge_strvec_free(&n);
	ge_graph_free(g);
}

#define ARG(n, i) \
	"node { name: \"" n "\" op: \"_Arg\" " \
	"attr { key: \"T\" value { type: DT_FLOAT } } " \
	"attr { key: \"index\" value { i: " #i " } } }\n"
#define RET(n, x, i) \
	"node { name: \"" n "\" op: \"_Retval\" input: \"" x "\" " \
	"attr { key: \"T\" value { type: DT_FLOAT } } " \
	"attr { key: \"index\" value { i: " #i " } } }\n"
#define CALL(n, extra) \
	"node { name: \"" n "\" op: \"StatefulPartitionedCall\" " \
	"input: \"a\" " extra \
	"attr { key: \"f\" value { func { name: \"fn\" } } } " \
	"attr { key: \"Tin\" value { list { type: DT_FLOAT } } } " \
	"attr { key: \"Tout\" value { list { type: DT_FLOAT } } } }\n"

static void inlined(void)
{
	ge_graph *g = parse(PH("a") CALL("call", "") IDENT("out", "call", "")
			    PH("b")
			    CALL("call2", DBG("original_node_names: \"outer\"",
					      "original_func_names: \"g\""))
			    IDENT("out2", "call2", ""));
	ge_graph *body = parse(ARG("x", 0) FCONST("c", "")
			       BIN("Mul", "m", "x", "c",
				   DBG("original_node_names: \"mm\"", ""))
			       RET("y", "m", 0));
	ge_error err;
	int rc = ge_inline_body(g, ge_graph_find(g, "call"), body, "fn", NULL,
				0, NULL, &err);
	is_int(GE_OK, rc, "a call is inlined");
	is_string("c,call|fn", origins(g, "call/c"),
		  "an inlined op: the call, its name in the body, the function");
	is_string("call,mm|fn", origins(g, "call/m"),
		  "an inlined op with origins of its own brings them");
	rc = ge_inline_body(g, ge_graph_find(g, "call2"), body, "fn", NULL,
			    0, NULL, &err);
	is_int(GE_OK, rc, "a call with provenance is inlined");
	is_string("c,outer|fn,g", origins(g, "call2/c"),
		  "the call's origins and functions carry over");
	size_t n;
	const ge_prov_rec *log = ge_prov_log(g, &n);
	ok(n == 4 && !strcmp(log[0].rule, "inline"),
	   "each inlined op is in the log");
	ge_graph_free(body);
	ge_graph_free(g);
}

static void folded(void)
{
	ge_graph *g = parse(PH("x") FCONST("k1", "") FCONST("k2", "")
			    BIN("Mul", "m", "k1", "k2", "")
			    BIN("Add", "s", "m", "k2", "")
			    BIN("Mul", "y", "x", "s", ""));
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	is_int(GE_OK, ge_fold_constants(g, NULL, 0, &r, &err), "folded");
	is_int(1, (long long)r.folded, "one Const made");
	is_string("Const", ge_op_type(g, ge_graph_find(g, "s")),
		  "the frontier op became a Const");
	is_string("k1,k2,m,s|", origins(g, "s"),
		  "the Const lists the ops folded into it");
	is_string("|", origins(g, "y"), "what reads it has no provenance");
	ge_fold_report_free(&r);
	ge_graph_free(g);
}

/* Copies noted one after another are one run of the log, read back as a
 * line per op; copies of one source share its field; a reorder keeps
 * the lines of the ops left, and a removed op's line keeps its name. */
static void copied_log(void)
{
	ge_graph *g = parse(PH("a") IDENT("b", "a", "") IDENT("c", "b", ""));
	const char *src[3] = {"a", "b", "c"};
	ge_error err;
	ge_opid to[6];
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < 3; i++) {
			char name[16];
			snprintf(name, sizeof name, "t%d/%s", t + 1, src[i]);
			to[t * 3 + i] = ge_graph_add_op(g, name, "Identity",
							&err);
			ge_op_copy_origins(g, to[t * 3 + i], g,
					   ge_graph_find(g, src[i]), "copy");
		}
	size_t n;
	const ge_prov_rec *log = ge_prov_log(g, &n);
	int in_order = n == 6;
	for (size_t i = 0; in_order && i < n; i++)
		in_order = log[i].id == to[i] && !strcmp(log[i].rule, "copy") &&
			   !strcmp(log[i].op, ge_op_name(g, to[i]));
	ok(in_order, "six copies: six lines, in order, named (%zu)", n);
	is_string("b|", origins(g, "t1/b"), "a copy names its source");
	is_string("b|", origins(g, "t2/b"), "so does the second copy");
	ok(!ge_op_set_name(g, ge_graph_find(g, "b"), "b2", &err),
	   "the source renamed");
	ge_opid t3 = ge_graph_add_op(g, "t3/b", "Identity", &err);
	ge_op_copy_origins(g, t3, g, ge_graph_find(g, "b2"), "copy");
	is_string("b2|", origins(g, "t3/b"), "a later copy names it anew");
	is_string("b|", origins(g, "t1/b"), "the earlier ones keep the old");

	/* t1/c removed, the rest reversed */
	ok(!ge_graph_remove_op(g, to[2], 1, &err), "t1/c removed");
	ge_opid perm[16];
	size_t np = 0;
	for (ge_opid i = (ge_opid)ge_graph_capacity(g); i-- > 0;)
		if (ge_op_alive(g, i))
			perm[np++] = i;
	ok(!ge_graph_reorder(g, perm, np, &err), "the ops reversed %s",
	   err.msg);
	log = ge_prov_log(g, &n);
	int ok_ids = n == 7;
	for (size_t i = 0; ok_ids && i < n; i++) {
		if (!strcmp(log[i].op, "t1/c"))
			ok_ids = log[i].id == GE_NOOP;
		else
			ok_ids = log[i].id != GE_NOOP &&
				 !strcmp(ge_op_name(g, log[i].id), log[i].op);
	}
	ok(ok_ids && !strcmp(log[2].op, "t1/c") && !strcmp(log[3].op, "t2/a"),
	   "after the reorder: the same seven lines in order, ids follow "
	   "the ops, the removed op keeps its name under no id");
	is_string("a|", origins(g, "t2/a"), "fields kept");
	/* the fields are held by op id beside the ops: every op has its
	 * own after the ids changed, and the sources still none */
	static const char *const after[][2] = {
		{"t1/a", "a|"}, {"t1/b", "b|"}, {"t2/b", "b|"},
		{"t2/c", "c|"}, {"t3/b", "b2|"}, {"a", "|"}, {"b2", "|"},
		{"c", "|"}};
	int each = 1;
	for (size_t i = 0; i < sizeof after / sizeof *after; i++)
		if (strcmp(origins(g, after[i][0]), after[i][1])) {
			tap_diag("%s: %s", after[i][0], origins(g, after[i][0]));
			each = 0;
		}
	ok(each, "after the reorder every op has its own field, the sources "
		 "none");
	ge_graph *k = ge_graph_clone(g);
	each = 1;
	for (size_t i = 0; i < sizeof after / sizeof *after; i++)
		each &= !strcmp(origins(k, after[i][0]), after[i][1]);
	ok(each, "and so has each op of a clone of the reordered graph");
	ge_graph_free(k);
	ge_graph_free(g);
}

/* The batch (ge_prov_batch_copy, its log's fast path) against the general
 * path (ge_op_copy_origins, one ge_prov_note per op): the same fields,
 * the same log, line for line, in each mode, with a note of another rule
 * between two runs of copies and a source that has provenance of its
 * own. */
static void batch_as_single(void)
{
	static const char *const src[3] = {"a", "b", "c"};
	for (int mode = GE_PROV_FIELD; mode <= GE_PROV_ATTR; mode++) {
		ge_graph *g[2];
		ge_error err;
		for (int k = 0; k < 2; k++) {
			g[k] = parse(PH("a") IDENT("b", "a", DBG(
				"original_node_names: \"x\"", ""))
				IDENT("c", "b", ""));
			ge_prov_set_mode(g[k], mode);
			ge_prov_batch b;
			ge_prov_batch_init(&b, g[k], "copy");
			for (int t = 0; t < 3; t++) {
				for (int i = 0; i < 3; i++) {
					char name[16];
					snprintf(name, sizeof name, "t%d/%s",
						 t + 1, src[i]);
					ge_opid to = ge_graph_add_op(
						g[k], name, "Identity", &err);
					ge_opid from = ge_graph_find(g[k],
								     src[i]);
					if (k)
						ge_prov_batch_copy(&b, to, g[k],
								   from);
					else
						ge_op_copy_origins(g[k], to,
								   g[k], from,
								   "copy");
				}
				if (t == 1)
					ge_prov_note(g[k],
						     ge_graph_find(g[k], "a"),
						     "other");
			}
		}
		size_t n0, n1;
		const ge_prov_rec *l0 = ge_prov_log(g[0], &n0);
		const ge_prov_rec *l1 = ge_prov_log(g[1], &n1);
		int same = n0 == n1 && n0 == 10;
		for (size_t i = 0; same && i < n0; i++)
			same = l0[i].id == l1[i].id &&
			       !strcmp(l0[i].op, l1[i].op) &&
			       !strcmp(l0[i].rule, l1[i].rule) &&
			       !strcmp(l0[i].func, l1[i].func);
		ok(same, "mode %d: the batch's log is the general path's, "
		   "line for line (%zu, %zu)", mode, n0, n1);
		int fields = 1;
		for (ge_opid i = 0; i < ge_graph_capacity(g[0]); i++) {
			const char *name = ge_op_name(g[0], i);
			fields = fields && !strcmp(origins(g[0], name),
						   origins(g[1], name));
		}
		ok(fields, "mode %d: the same provenance on every op", mode);
		is_string("x|", origins(g[1], "t3/b"),
			  "a source's own provenance is what its copy names");
		char what[64];
		snprintf(what, sizeof what, "mode %d: the same bytes saved",
			 mode);
		same_bytes(g[0], g[1], what);
		ge_graph_free(g[0]);
		ge_graph_free(g[1]);
	}
}

/* ge_op_made_from's path for ops without provenance against the general
 * merge (ge_op_merge_origins of each source, one after the other): the
 * same names, sorted, each once, and the same bytes saved; and with a
 * source that has provenance (the general path) the union of both. */
static void made_from_as_merge(void)
{
	const char *text = PH("zeta") PH("a/b") PH("a") PH("a_b")
		IDENT("m", "a", DBG("original_node_names: \"q\"", ""))
		IDENT("out", "zeta", "") IDENT("out2", "zeta", "");
	ge_graph *g[2];
	ge_opid out[2];
	for (int k = 0; k < 2; k++) {
		g[k] = parse(text);
		out[k] = ge_graph_find(g[k], "out");
		/* out first: merged later, it would bring what it had
		 * gained, where made_from takes what each op brings before
		 * any is merged */
		ge_opid from[5] = {
			out[k], ge_graph_find(g[k], "zeta"),
			ge_graph_find(g[k], "a/b"), ge_graph_find(g[k], "a"),
			ge_graph_find(g[k], "a_b")};
		if (k)
			for (int i = 0; i < 5; i++)
				ge_op_merge_origins(g[k], out[k], g[k],
						    from[i], NULL);
		else
			ge_op_made_from(g[k], out[k], from, 5, NULL, NULL);
		/* the same source twice, and one with provenance */
		ge_opid from2[3] = {ge_graph_find(g[k], "a"),
				    ge_graph_find(g[k], "a"),
				    ge_graph_find(g[k], "m")};
		ge_opid o2 = ge_graph_find(g[k], "out2");
		if (k)
			for (int i = 0; i < 3; i++)
				ge_op_merge_origins(g[k], o2, g[k], from2[i],
						    NULL);
		else
			ge_op_made_from(g[k], o2, from2, 3, NULL, NULL);
	}
	is_string("a,a/b,a_b,out,zeta|", origins(g[0], "out"),
		  "made from five plain ops: their names, sorted bytewise");
	is_string(origins(g[1], "out"), origins(g[0], "out"),
		  "as the general merge makes them");
	is_string("a,q|", origins(g[0], "out2"),
		  "a source twice counts once; one with provenance brings it");
	same_bytes(g[0], g[1], "the same bytes saved");
	ge_graph_free(g[0]);
	ge_graph_free(g[1]);
}

/* ge_prov_counts against counting ge_prov_log's lines, from each line on
 * (a run of copies counted from its middle included). */
static void counts_as_lines(void)
{
	ge_graph *g = parse(PH("a") IDENT("b", "a", "") IDENT("c", "b", ""));
	ge_error err;
	const char *src[3] = {"a", "b", "c"};
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < 3; i++) {
			char name[16];
			snprintf(name, sizeof name, "t%d/%s", t + 1, src[i]);
			ge_opid to = ge_graph_add_op(g, name, "Identity", &err);
			ge_op_copy_origins(g, to, g, ge_graph_find(g, src[i]),
					   "copy");
		}
		ge_prov_note(g, ge_graph_find(g, "b"), "other");
	}
	ge_prov_note(g, ge_graph_find(g, "c"), "copy");
	size_t n;
	const ge_prov_rec *log = ge_prov_log(g, &n);
	int same = n == 9 && ge_prov_lines(g) == n;
	for (size_t from = 0; same && from <= n + 1; from++) {
		size_t nc;
		ge_prov_count *c = ge_prov_counts(g, from, &nc);
		size_t total = 0;
		for (size_t j = 0; j < nc; j++) {
			size_t want = 0;
			for (size_t i = from; i < n; i++)
				want += !strcmp(log[i].rule, c[j].rule);
			same = same && c[j].n == want;
			total += c[j].n;
		}
		same = same && total == (from < n ? n - from : 0) &&
		       (from >= n || !strcmp(c[0].rule, log[from].rule));
		free(c);
	}
	ok(same, "the counts by rule are the log's lines counted, from "
	   "every line on (%zu lines)", n);
	ge_graph_free(g);
}

/* GE_PROV_OFF: every producer does nothing, the input's own field is
 * kept byte for byte, and the same graph edited in field mode gains what
 * off mode left out. */
static void off_mode(void)
{
	const char *text = PH("a") IDENT("b", "a", DBG(
		"original_node_names: \"x\"", "")) IDENT("c", "b", "");
	ge_graph *g = parse(text), *on = parse(text), *plain = parse(text);
	ge_error err;
	ge_prov_set_mode(g, GE_PROV_OFF);
	is_int(GE_PROV_OFF, ge_prov_mode(g), "the mode reads back");
	ge_graph *gs[2] = {g, on};
	for (int k = 0; k < 2; k++) {
		ge_graph *h = gs[k];
		ge_opid a = ge_graph_find(h, "a"), b = ge_graph_find(h, "b"),
			c = ge_graph_find(h, "c");
		ge_opid t = ge_graph_add_op(h, "t/a", "Identity", &err);
		ge_prov_batch pb;
		ge_prov_batch_init(&pb, h, "copy");
		ge_prov_batch_copy(&pb, t, h, a);
		ge_op_copy_origins(h, t, h, b, "copy");
		ge_opid from[2] = {a, b};
		is_int(GE_OK, ge_op_made_from(h, c, from, 2, "test", &err),
		       "mode %s: made_from answers GE_OK", k ? "field" : "off");
		const char *nodes[] = {"z"};
		is_int(GE_OK, ge_op_add_origins(h, a, nodes, 1, NULL, 0, &err),
		       "mode %s: add_origins too", k ? "field" : "off");
		is_int(GE_OK, ge_op_merge_origins(h, c, h, a, &err),
		       "mode %s: merge_origins too", k ? "field" : "off");
		ge_prov_note(h, c, "note");
		const char *empty[] = {""};
		is_int(GE_EINVAL, ge_op_add_origins(h, a, empty, 1, NULL, 0,
						    &err),
		       "mode %s: an empty name is still refused",
		       k ? "field" : "off");
	}
	size_t n;
	ge_prov_log(g, &n);
	is_int(0, (long long)n, "off: nothing in the log");
	is_string("|", origins(g, "t/a"), "off: the copy names no source");
	is_string("|", origins(g, "c"), "off: nor the op made from others");
	is_string("|", origins(g, "a"), "off: nor the op given names");
	is_string("x|", origins(g, "b"), "off: the input's own field is kept");
	ge_prov_log(on, &n);
	ok(n > 0, "field: the same calls fill the log (%zu lines)", n);
	is_string("a,x|", origins(on, "t/a"),
		  "field: and the copy names its sources");
	/* off's output is the input with the new op and nothing else */
	ge_graph_remove_op(g, ge_graph_find(g, "t/a"), 1, NULL);
	same_bytes(g, plain, "off: what is saved is what was read");
	ge_prov_set_mode(g, GE_PROV_FIELD);
	ge_op_made_from(g, ge_graph_find(g, "c"), (ge_opid[]){0}, 1, "test",
			&err);
	is_string("a|", origins(g, "c"), "field again: provenance is set");
	ge_graph_free(g);
	ge_graph_free(on);
	ge_graph_free(plain);
}

int main(void)
{
	read_and_keep();
	add_and_merge();
	malformed();
	inlined();
	folded();
	copied_log();
	batch_as_single();
	made_from_as_merge();
	counts_as_lines();
	off_mode();
	return tap_done();
}
