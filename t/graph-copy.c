/* graph-copy.c: copies within one graph that share their source's attr
 * bytes (lib/graph/graph_copy.h), and the whole-graph view (ge_view_init_graph).
 * Each copy is checked against the same copy made the general way: a
 * transformer whose op handler wraps copy_op_handler, which the shared
 * path never serves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "base/base.h"
#include "graph/graph.h"
#include "graph/graph_copy.h"
#include "editor/subgraph.h"
#include "editor/transform.h"

#define T32 "attr { key: \"T\" value { type: DT_FLOAT } } "

/* Data and control edges, a colocated pair, an op without attrs, a NUL-free
 * but unusual attr layout (value before key) and attrs out of key order. */
static const char *GRAPH =
	FX_EDITOR_GRAPH
	"node { name: \"w\" op: \"VariableV2\" "
	"attr { key: \"dtype\" value { type: DT_FLOAT } } "
	"attr { key: \"shape\" value { shape { dim { size: 2 } } } } "
	"attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	"node { name: \"w/read\" op: \"Identity\" input: \"w\" " T32
	"attr { key: \"_class\" value { list { s: \"loc:@w\" } } } }\n"
	"node { name: \"k\" op: \"Identity\" input: \"foo/bar/h\" "
	"input: \"^w/read\" " T32 "}\n"
	"node { name: \"noattr\" op: \"NoOp\" input: \"^k\" }\n"
	"node { name: \"sp\" op: \"Split\" input: \"a\" input: \"foo/d\" "
	T32 "attr { key: \"num_split\" value { i: 2 } } }\n"
	"node { name: \"u0\" op: \"Identity\" input: \"sp\" " T32 "}\n"
	"node { name: \"u1\" op: \"Identity\" input: \"sp:1\" " T32 "}\n";

/* copy_op_handler behind another pointer: the general path. */
static int plain_handler(ge_tinfo *info, ge_opid op, const ge_tref *in,
			 size_t n, ge_opid *op_, ge_tvec *outs, void *ud,
			 ge_error *err)
{
	return ge_copy_op_handler(info, op, in, n, op_, outs, ud, err);
}

static int copy_whole(ge_graph *g, const char *scope, int general)
{
	ge_transformer tr;
	ge_transform_opts o = {0};
	ge_view v, out = GE_VIEW_INIT;
	ge_error err;
	ge_transformer_init(&tr);
	if (general)
		tr.transform_op_handler = plain_handler;
	o.dst_scope = scope;
	ge_view_init_graph(&v, g);
	int rc = ge_transform(&tr, &v, &o, &out, NULL, &err);
	if (rc)
		tap_diag("copy: %s", err.msg);
	ge_view_free(&v);
	ge_view_free(&out);
	return rc;
}

/* The first `_class` entry of an op. */
static const char *sattr_class(const ge_graph *g, const char *op)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, OP(g, op), "_class",
						    NULL);
	static char b[256];
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list->n_s)
		return "(none)";
	snprintf(b, sizeof b, "%.*s", (int)v->list->s[0].len,
		 (const char *)v->list->s[0].data);
	return b;
}

/* Every op's consumers, by name, in the order the graph keeps them. */
static int same_consumers(const ge_graph *a, const ge_graph *b)
{
	for (size_t id = 0; id < ge_graph_capacity(a); id++) {
		if (!ge_op_alive(a, (ge_opid)id))
			continue;
		ge_opid j = ge_graph_find(b, ge_op_name(a, (ge_opid)id));
		size_t na, nb;
		const ge_use *ua = ge_op_uses(a, (ge_opid)id, &na);
		const ge_use *ub = ge_op_uses(b, j, &nb);
		if (j == GE_NOOP || na != nb)
			return 0;
		for (size_t k = 0; k < na; k++)
			if (strcmp(ge_op_name(a, ua[k].op),
				   ge_op_name(b, ub[k].op)) ||
			    ua[k].slot != ub[k].slot)
				return 0;
		for (size_t k = 1; k < na; k++)
			if (ua[k - 1].op > ua[k].op ||
			    (ua[k - 1].op == ua[k].op &&
			     ua[k - 1].slot >= ua[k].slot))
				return 0;
	}
	return 1;
}

static void test_attr_run(void)
{
	ge_graph *g = parse(GRAPH);
	const uint8_t *run;
	size_t len;
	unsigned fl;
	ok(ge_op_attr_run(g, OP(g, "foo/c"), &run, &len, &fl) == 1 && len &&
		   fl == GE_RUN_SHAPES,
	   "a loaded op's attrs are one shareable run, with _output_shapes");
	ok(ge_op_attr_run(g, OP(g, "w"), &run, &len, &fl) == 1 &&
		   fl == GE_RUN_CLASS,
	   "... _class told");
	ok(ge_op_attr_run(g, OP(g, "noattr"), &run, &len, &fl) == 1 && !len,
	   "an op without attrs: an empty run");
	ge_op_set_attr_raw(g, OP(g, "foo/c"), "T", (const uint8_t *)"\x30\x02",
			   2);
	ok(!ge_op_attr_run(g, OP(g, "foo/c"), &run, &len, &fl),
	   "an attr set since the load: not shareable");
	ge_op_remove_attr(g, OP(g, "foo/b"), "dtype");
	ok(!ge_op_attr_run(g, OP(g, "foo/b"), &run, &len, &fl),
	   "an attr removed since the load: not shareable");
	ge_graph_free(g);
}

static void test_same_as_general(void)
{
	ge_graph *g = parse(GRAPH);
	/* an edited source op: the copy takes the general path for it */
	ge_op_set_attr_raw(g, OP(g, "foo/bar/e"), "T",
			   (const uint8_t *)"\x30\x02", 2);
	ge_graph *h = ge_graph_clone(g);
	ge_error err;
	/* a rename builds the colocation index, which copies must not leave
	 * behind */
	ge_op_set_name(g, OP(g, "foo/b"), "foo/bb", &err);
	ge_op_set_name(h, OP(h, "foo/b"), "foo/bb", &err);
	ok(!copy_whole(g, "tower", 0) && !copy_whole(h, "tower", 1),
	   "whole-graph copies, shared and general");
	ok(!copy_whole(g, "tower", 0) && !copy_whole(h, "tower", 1),
	   "again, under a uniquified scope");
	is_int((long long)ge_graph_num_ops(h), (long long)ge_graph_num_ops(g),
	       "as many ops");
	ok(same_encoding(g, h), "the saved bytes are the general copy's");
	ok(same_consumers(g, h), "consumer lists are the general copy's");
	is_string("tower_1/foo/bar/h:0", ins(g, "tower_1/k"),
		  "a copy's data inputs");
	is_string("tower_1/w/read", cins(g, "tower_1/k"),
		  "... and control inputs");
	ge_op_set_name(g, OP(g, "tower/w"), "tw", &err);
	ge_op_set_name(h, OP(h, "tower/w"), "tw", &err);
	is_string("loc:@tw", sattr_class(g, "tower/w/read"),
		  "renaming a copy renames it in the copies colocated with it");
	/* names the copies hold stay handed out when they let go */
	ge_graph_remove_op(g, OP(g, "tower/noattr"), 1, &err);
	ge_graph_remove_op(h, OP(h, "tower/noattr"), 1, &err);
	ge_op_set_name(g, OP(g, "tower/k"), "kk", &err);
	ge_op_set_name(h, OP(h, "tower/k"), "kk", &err);
	is_string(ge_graph_unique_name(h, "tower/noattr"),
		  ge_graph_unique_name(g, "tower/noattr"),
		  "a removed copy's name is still taken");
	is_string(ge_graph_unique_name(h, "Tower/K"),
		  ge_graph_unique_name(g, "Tower/K"),
		  "a renamed copy's old name is still taken, in any case");
	ok(same_encoding(g, h), "still the same bytes after the edits");
	ge_graph *c = ge_graph_clone(g);
	ok(same_encoding(c, g), "a clone of the copies saves the same bytes");
	ge_graph_free(c);
	ge_graph_free(g);
	ge_graph_free(h);
}

/* An external input handler that looks at the graph while the copy runs:
 * the consumers of the input's producer, copies made so far included. */
static int seen_uses;
static int peek_handler(ge_tinfo *info, ge_tref t, ge_tref *t_, void *ud,
			ge_error *err)
{
	size_t n;
	ge_op_uses(ge_tinfo_graph(info), t.op, &n);
	seen_uses += (int)n;
	return ge_keep_t_if_possible_handler(info, t, t_, ud, err);
}

static int copy_peeking(ge_graph *g, int general)
{
	ge_transformer tr;
	ge_transform_opts o = {0};
	ge_view v = GE_VIEW_INIT;
	ge_error err;
	ge_transformer_init(&tr);
	if (general)
		tr.transform_op_handler = plain_handler;
	tr.transform_external_input_handler = peek_handler;
	o.dst_scope = "p";
	/* u1's input handler runs after u0 was copied reading sp:0 */
	mkview(&v, g, "foo/bar/g,foo/bar/e,k,noattr,u0,u1,w/read", "");
	seen_uses = 0;
	int rc = ge_transform(&tr, &v, &o, NULL, NULL, &err);
	ge_view_free(&v);
	return rc ? -1 : seen_uses;
}

static void test_handlers_see_consumers(void)
{
	ge_graph *g = parse(GRAPH), *h = ge_graph_clone(g);
	ge_error err;
	ge_op_set_name(g, OP(g, "foo/b"), "foo/bb", &err);
	ge_op_set_name(h, OP(h, "foo/b"), "foo/bb", &err);
	int a = copy_peeking(g, 0), b = copy_peeking(h, 1);
	ok(a > 0 && a == b,
	   "an input handler sees the consumers the general copy shows it "
	   "(%d, %d)", a, b);
	ok(same_encoding(g, h) && same_consumers(g, h),
	   "a partial copy with external inputs: the general copy's result");
	/* p/w/read stays colocated with w, which was not copied */
	ge_op_set_name(g, OP(g, "w"), "w2", &err);
	ge_op_set_name(h, OP(h, "w"), "w2", &err);
	is_string("loc:@w2", sattr_class(g, "p/w/read"),
		  "renaming an op renames it in the copies colocated with it");
	ge_graph_free(g);
	ge_graph_free(h);
}

/* An external input handler that removes the copy of b, which a later
 * op of the view reads: the shared path must see the removal as the
 * general one does (it trusts the copies of its own pass only while no
 * handler ran). */
static int remover(ge_tinfo *info, ge_tref t, ge_tref *t_, void *ud,
		   ge_error *err)
{
	ge_graph *g = ge_tinfo_graph(info);
	ge_opid b = ge_graph_find(g, "r/b");
	if (b != GE_NOOP)
		ge_graph_remove_op(g, b, 1, err);
	return ge_keep_t_if_possible_handler(info, t, t_, ud, err);
}

static int copy_removing(ge_graph *g, int general, ge_error *err)
{
	ge_transformer tr;
	ge_transform_opts o = {0};
	ge_view v = GE_VIEW_INIT;
	ge_transformer_init(&tr);
	if (general)
		tr.transform_op_handler = plain_handler;
	tr.transform_external_input_handler = remover;
	o.dst_scope = "r";
	mkview(&v, g, "a,b,c,d", "");
	int rc = ge_transform(&tr, &v, &o, NULL, NULL, err);
	ge_view_free(&v);
	return rc;
}

static void test_handler_removes_copy(void)
{
	static const char *txt =
		"node { name: \"ext\" op: \"Placeholder\" "
		"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
		"node { name: \"a\" op: \"Placeholder\" "
		"attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
		"node { name: \"b\" op: \"Identity\" input: \"a\" " T32 "}\n"
		"node { name: \"c\" op: \"Identity\" input: \"ext\" " T32
		"}\n"
		"node { name: \"d\" op: \"Identity\" input: \"b\" " T32 "}\n";
	ge_graph *g = parse(txt), *h = parse(txt);
	ge_error e1 = {0}, e2 = {0};
	int a = copy_removing(g, 0, &e1), b = copy_removing(h, 1, &e2);
	ok(a == b && !strcmp(e1.msg, e2.msg),
	   "a copy removed by a handler: the general copy's verdict (%d, %d: "
	   "%s)", a, b, e1.msg);
	ok(same_encoding(g, h), "... and graph");
	ge_graph_free(g);
	ge_graph_free(h);
}

static void test_view_graph(void)
{
	ge_graph *g = parse(GRAPH);
	ge_view a, b;
	ge_opvec all = GE_VEC_INIT;
	ge_graph_remove_op(g, OP(g, "noattr"), 1, NULL);
	for (size_t id = 0; id < ge_graph_capacity(g); id++)
		if (ge_op_alive(g, (ge_opid)id))
			ge_opvec_push(&all, (ge_opid)id);
	ge_view_init_graph(&a, g);
	ok(!ge_view_init(&b, g, all.v, all.n, NULL, 0, NULL),
	   "the view of the op list");
	is_string(opnames(g, &b.ops), opnames(g, &a.ops),
		  "whole-graph view: the same ops");
	is_string(tnames(g, &b.inputs), tnames(g, &a.inputs),
		  "... inputs (none)");
	is_string(tnames(g, &b.outputs), tnames(g, &a.outputs),
		  "... outputs (what no op reads)");
	ge_view_free(&a);
	ge_view_free(&b);
	ge_opvec_free(&all);
	ge_graph *e = ge_graph_new();
	ge_view_init_graph(&a, e);
	ok(ge_view_is_empty(&a), "an empty graph gives the empty view");
	ge_graph_free(e);
	ge_graph_free(g);
}

/* Where an op's attr run starts is kept after the first look, for a
 * loaded op and for a copy (whose run is all of its attr bytes); an op
 * whose name, type, inputs and device take more than 64 KiB has it looked
 * for each time.  Either way the run is the one a fresh look finds. */
static void test_run_kept(void)
{
	enum { LONG = 70000 };
	ge_buf txt = GE_BUF_INIT;
	ge_buf_adds(&txt, GRAPH);
	ge_buf_adds(&txt, "node { name: \"far\" op: \"Identity\" "
			  "input: \"w/read\" device: \"");
	for (int i = 0; i < LONG; i++)
		ge_buf_addc(&txt, 'd');
	ge_buf_adds(&txt, "\" " T32 "attr { key: \"_output_shapes\" value { "
			  "list { shape { dim { size: 2 } } } } } }\n");
	ge_graph *g = parse((const char *)txt.data);
	ge_graph *h = ge_graph_clone(g);
	ge_buf_free(&txt);
	const uint8_t *r1, *r2;
	size_t l1, l2;
	unsigned f1, f2;
	int all = 1;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t id = 0; id < ge_graph_capacity(g); id++) {
			int a = ge_op_attr_run(g, (ge_opid)id, &r1, &l1, &f1);
			/* a clone has not looked yet */
			int b = ge_op_attr_run(h, (ge_opid)id, &r2, &l2, &f2);
			if (a != b || l1 != l2 || f1 != f2 ||
			    (l1 && memcmp(r1, r2, l1)))
				all = 0;
		}
	}
	ok(all, "a kept start gives the run a first look gives");
	ge_opid far = OP(g, "far");
	ok(ge_op_attr_run(g, far, &r1, &l1, &f1) && l1 &&
		   f1 == GE_RUN_SHAPES && r1[0] == ((5 << 3) | 2),
	   "... past 64 KiB of name, type, inputs and device too");
	ge_graph *c = ge_graph_clone(g);
	ok(!copy_whole(g, "cp1", 0) && !copy_whole(g, "cp2", 0) &&
		   !copy_whole(c, "cp1", 1) && !copy_whole(c, "cp2", 1),
	   "copies of copies, shared and general");
	ok(same_encoding(g, c), "... the same bytes");
	far = OP(g, "cp2/cp1/far");
	ok(ge_op_attr_run(g, far, &r1, &l1, &f1) &&
		   ge_op_attr_run(g, OP(g, "far"), &r2, &l2, &f2) &&
		   r1 == r2 && l1 == l2 && f1 == f2,
	   "a copy of a copy shares the loaded op's run");
	ge_graph_free(c);
	ge_graph_free(g);
	ge_graph_free(h);
}

/* Output counts worked out once per type give what each op's own gives:
 * fixed by the OpDef (Identity, Const), counted by an attr (Split), or
 * unknown types (read from the consumers, never kept). */
static void test_nout_memo(void)
{
	ge_graph *g = parse(GRAPH);
	ge_graph_add_op(g, "mystery", "NoSuchOp", NULL);
	ge_graph *h = ge_graph_clone(g);
	ge_nout_memo m;
	memset(&m, 0, sizeof m);
	int same = 1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t id = 0; id < ge_graph_capacity(g); id++)
			if (ge_op_num_outputs_memo(g, (ge_opid)id, &m) !=
			    ge_op_num_outputs(h, (ge_opid)id))
				same = 0;
	ok(same, "memoized output counts are the ops' own");
	is_int(2, ge_op_num_outputs_memo(g, OP(g, "sp"), &m),
	       "a count an attr gives");
	ge_graph_free(g);
	ge_graph_free(h);
}

/* Verdicts taken from an op's attr class (ops of one type with the same
 * attr bytes, as the load found them) are the ops' own: an op whose
 * fields go on after its attrs, or an edited one, is looked at itself. */
static void test_run_like(void)
{
	ge_buf txt = GE_BUF_INIT;
	ge_buf_adds(&txt, GRAPH);
	ge_buf_adds(&txt,
		    "node { name: \"c1\" op: \"Identity\" input: \"w/read\" "
		    T32 "}\n"
		    "node { name: \"c2\" op: \"Identity\" input: \"w/read\" "
		    T32 "experimental_debug_info { original_node_names: "
		    "\"zz\" } }\n"
		    "node { name: \"c3\" op: \"Identity\" input: \"c1\" "
		    "device: \"/cpu:0\" " T32 "}\n"
		    "node { name: \"c4\" op: \"Identity\" input: \"c1\" "
		    T32 "}\n");
	ge_graph *g = parse((const char *)txt.data);
	ge_buf_free(&txt);
	ge_graph *h = ge_graph_clone(g);
	size_t n;
	const ge_opid *cls = ge_graph_attr_classes(g, &n);
	ok(cls && n == ge_graph_capacity(g), "a parsed graph has its classes");
	ge_opid c1 = OP(g, "c1"), c2 = OP(g, "c2");
	ok(cls && cls[c2] == cls[c1] && cls[OP(g, "c3")] == cls[c1],
	   "ops of one type and attr bytes are one class");
	ge_op_set_attr_raw(g, OP(g, "c4"), "T", (const uint8_t *)"\x30\x02",
			   2);
	ge_op_set_attr_raw(h, OP(h, "c4"), "T", (const uint8_t *)"\x30\x02",
			   2);
	int all = 1, like = 0;
	for (int pass = 0; cls && pass < 2; pass++)
		for (size_t id = 0; id < n; id++) {
			const uint8_t *r1, *r2;
			size_t l1, l2;
			unsigned f1, f2;
			int a = ge_op_attr_run_like(g, (ge_opid)id, cls[id],
						    &r1, &l1, &f1);
			int b = ge_op_attr_run(h, (ge_opid)id, &r2, &l2, &f2);
			like += cls[id] != (ge_opid)id;
			if (a != b || l1 != l2 || f1 != f2 ||
			    (l1 && memcmp(r1, r2, l1)))
				all = 0;
		}
	ok(all && like >= 4, "verdicts by class are the ops' own (%d by class)",
	   like);
	ok(!ge_graph_attr_classes(h, &n) && !n, "a clone has none");
	copy_whole(g, "t", 0);
	ok(!ge_graph_attr_classes(g, &n) && !n,
	   "an edit since the load retires them");
	ge_graph_free(g);
	ge_graph_free(h);
}

/* The one-pass check of a moved view, against the op-by-op one. */
static void test_view_check(void)
{
	ge_graph *g = parse(GRAPH);
	ge_view v;
	ge_error err;
	ge_view_init_graph(&v, g);
	ok(ge_graph_all_alive(g, v.ops.v, v.ops.n, sizeof *v.ops.v),
	   "every op of a fresh graph is alive");
	copy_whole(g, "t", 0);
	ok(!ge_view_check(&v, &err), "a view of a graph that grew is fine");
	ge_opid id = OP(g, "noattr");
	ge_graph_remove_op(g, id, 1, NULL);
	ok(!ge_graph_all_alive(g, v.ops.v, v.ops.n, sizeof *v.ops.v) &&
		   ge_graph_all_alive(g, v.ops.v, 1, sizeof *v.ops.v),
	   "a removed op is told");
	ok(ge_view_check(&v, &err) && strstr(err.msg, "'noattr' was removed"),
	   "... and named by the view's check");
	ge_tref t = {GE_NOOP, 0};
	ok(!ge_graph_all_alive(g, &t.op, 1, sizeof t), "GE_NOOP is no op");
	ge_view_free(&v);
	ge_graph_free(g);
}

/* Copies skip the check of names handed out when none begins with their
 * scope: one that does (in another case) still keeps its name from them. */
static void test_handed_out(void)
{
	ge_graph *g = parse(GRAPH), *h = ge_graph_clone(g);
	ge_graph *x[2] = {g, h};
	for (int i = 0; i < 2; i++) {
		ge_graph_unique_name(x[i], "elsewhere/k");
		ge_graph_unique_name(x[i], "Tower/K");
		ge_graph_unique_name(x[i], "TOWER/FOO/C");
	}
	ok(!copy_whole(g, "tower", 0) && !copy_whole(h, "tower", 1),
	   "copies under a scope where names were handed out");
	ok(ge_graph_find(g, "tower/k_1") != GE_NOOP &&
		   ge_graph_find(g, "tower/foo/c_1") != GE_NOOP &&
		   ge_graph_find(g, "tower/foo/bar/e") != GE_NOOP,
	   "... the handed-out names stay free, the others are taken");
	ok(same_encoding(g, h), "... as the general copy names them");
	for (int i = 0; i < 2; i++)
		ge_graph_unique_name(x[i], "other");
	ok(!copy_whole(g, "tower2", 0) && !copy_whole(h, "tower2", 1) &&
		   same_encoding(g, h),
	   "copies under a scope where none was: the general copy's bytes");
	ge_graph_free(g);
	ge_graph_free(h);
}

/* The save writes a shared copy's inputs from lengths measured once: an
 * input text of two-byte length, output numbers of two digits, more
 * inputs than it keeps lengths for, control inputs.  And a save through a
 * file writer, whose buffer the nodes are gathered in, gives the bytes of
 * a save to memory, over many buffers' worth. */
#define L140 "lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll" \
	"lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll"
static void test_save_inputs(void)
{
	char txt[8192];
	int k = snprintf(txt, sizeof txt,
			 "%s"
			 "node { name: \"" L140 "\" op: \"Identity\" input: \"a\" " T32 "}\n"
			 "node { name: \"s12\" op: \"Split\" input: \"a\" input: \"a\" "
			 T32 "attr { key: \"num_split\" value { i: 12 } } }\n"
			 "node { name: \"wide\" op: \"AddN\" ", GRAPH);
	for (int i = 0; i < 18; i++)
		k += snprintf(txt + k, sizeof txt - (size_t)k, "input: \"%s\" ",
			      i == 3 ? L140 : i == 5 ? "s12" : i & 1 ? "s12:11" : "s12:10");
	snprintf(txt + k, sizeof txt - (size_t)k,
		 "input: \"^k\" input: \"^" L140 "\" " T32
		 "attr { key: \"N\" value { i: 18 } } }\n");
	ge_graph *g = parse(txt), *h = ge_graph_clone(g);
	ok(!copy_whole(g, "tower", 0) && !copy_whole(h, "tower", 1),
	   "copies of ops with many, long and numbered inputs");
	ok(same_encoding(g, h), "... save the general copy's bytes");
	ok(strstr(ins(g, "tower/wide"), ",tower/s12:11,") != NULL,
	   "... a two-digit output");
	for (int i = 0; i < 8; i++)
		copy_whole(g, "tower", 0);
	ge_buf mem = GE_BUF_INIT;
	ge_graph_encode_graphdef(g, &mem);
	char dir[256], path[300];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ge-graph-copy-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ge_writer w;
	ge_error err;
	uint8_t *data = NULL;
	size_t len = 0;
	int wrote = mkdtemp(dir) != NULL;
	snprintf(path, sizeof path, "%s/g.pb", dir);
	if (wrote)
		wrote = !ge_writer_open(&w, path, &err);
	if (wrote) {
		ge_graph_write_graphdef(g, &w);
		wrote = !ge_writer_commit(&w, &err) &&
			!ge_file_read(path, &data, &len, &err);
	}
	ok(wrote && mem.len > (1u << 20) && len == mem.len &&
		   !memcmp(data, mem.data, len),
	   "a file save of %zu bytes is the save to memory", mem.len);
	free(data);
	unlink(path);
	rmdir(dir);
	ge_buf_free(&mem);
	ge_graph_free(g);
	ge_graph_free(h);
}

/* ge_copy_short writes what memcpy writes, and nothing past it, at every
 * length its moves of 4, 8 and 16 bytes split at. */
static void test_copy_short(void)
{
	uint8_t src[96], dst[112], want[112];
	int bad = 0;
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (uint8_t)(i * 37 + 11);
	for (size_t n = 0; n <= 80; n++)
		for (size_t off = 0; off < 8; off++) {
			memset(dst, 0xee, sizeof dst);
			memset(want, 0xee, sizeof want);
			memcpy(want + off, src + off, n);
			ge_copy_short(dst + off, src + off, n);
			bad += memcmp(dst, want, sizeof dst) != 0;
		}
	is_int(0, bad, "ge_copy_short copies 0..80 bytes as memcpy does");
}

int main(void)
{
	test_copy_short();
	test_attr_run();
	test_run_kept();
	test_view_check();
	test_nout_memo();
	test_run_like();
	test_same_as_general();
	test_handlers_see_consumers();
	test_handler_removes_copy();
	test_view_graph();
	test_save_inputs();
	test_handed_out();
	return tap_done();
}
