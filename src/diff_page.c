/*
 * diff_page.c: `gerewrite diff A B --html OUT`, one self-contained page.
 *
 * The two graphs are drawn side by side by Graphviz (the picture of
 * `gerewrite dot`, dot_render.c, its SVG inlined): scopes without a
 * difference are collapsed into boxes, every scope holding one is open,
 * so that each op that differs is a node of its own (up to
 * PAGE_MAX_OPEN of them a side; past that their scopes stay collapsed,
 * amber, saying how many of their ops differ).  Ops added are
 * green, removed red, changed (or moved) amber.  A summary table counts
 * the entries and lists them, then the functions, collections,
 * signatures and checkpoint entries that differ.  The page's data (a JSON block) lists
 * each side's ops: name, type, status, the node that draws it, its
 * partners on the other side (same name, moved, merged into), its attrs
 * and what changed; the page's script, written for it and small, reads
 * it: selecting an op highlights its partners and shows both sides'
 * attrs.  Nothing is fetched: CSS, script, data and pictures are in the
 * file.
 *
 * The script reports in the page itself, for tests: #gd-status reads
 * "ok" once the page is set up, "error: ..." after a script error;
 * #gd-marked lists the ops drawn highlighted, one "side status name" a
 * line; #gd-pairs the partners of those of B, "b-name <- a-name" a
 * line; with the address ending "#selftest" it selects the first paired
 * op of B and checks that its partner is highlighted.  An address ending
 * "#b=NAME" (or "#a=NAME") selects that op.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff_page.h"
#include "dot_render.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* about this many boxes per side before the scopes with differences are
 * opened */
#define PAGE_COLLAPSE 40
/* Past this many ops that differ on a side, the scopes holding them stay
 * collapsed (amber, with their count): Graphviz takes about a minute to
 * lay out 2,000 ops, and the browser seconds to draw them. */
#define PAGE_MAX_OPEN 300

int diff_page_can_draw(void)
{
	if (dot_have_graphviz())
		return 1;
	cli_errmsg("diff --html needs Graphviz's 'dot' program, which is not "
		   "installed (on Debian: apt-get install graphviz)");
	return 0;
}

/* One side of the page. */
struct side {
	const ge_graph *g;
	size_t cap;
	unsigned char *mark;  /* DOT_MARK_* per op */
	const char **status;  /* per op: "added", ... or "" */
	int *drawn_as;        /* dot_view.drawn_as */
	size_t *index;        /* op id -> place in the data's list */
	json_t **partners;    /* per op: array of places on the other side */
	char **change;        /* per op: what changed, or NULL */
	ge_buf svg;
};

static void side_init(struct side *s, const ge_graph *g)
{
	s->g = g;
	s->cap = ge_graph_capacity(g);
	s->mark = ge_xcalloc(s->cap + 1, 1);
	s->status = ge_xcalloc(s->cap + 1, sizeof *s->status);
	s->drawn_as = ge_xcalloc(s->cap + 1, sizeof *s->drawn_as);
	s->index = ge_xcalloc(s->cap + 1, sizeof *s->index);
	s->partners = ge_xcalloc(s->cap + 1, sizeof *s->partners);
	s->change = ge_xcalloc(s->cap + 1, sizeof *s->change);
	s->svg = (ge_buf)GE_BUF_INIT;
	size_t k = 0;
	for (size_t i = 0; i < s->cap; i++) {
		s->status[i] = "";
		if (ge_op_alive(g, (ge_opid)i))
			s->index[i] = k++;
	}
}

static void side_free(struct side *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		json_decref(s->partners[i]);
		free(s->change[i]);
	}
	free(s->mark);
	free(s->status);
	free(s->drawn_as);
	free(s->index);
	free(s->partners);
	free(s->change);
	ge_buf_free(&s->svg);
}

static void link_ops(struct side *x, ge_opid ix, struct side *y, ge_opid iy)
{
	if (!x->partners[ix])
		x->partners[ix] = json_array();
	if (!y->partners[iy])
		y->partners[iy] = json_array();
	json_array_append_new(x->partners[ix], json_integer((json_int_t)y->index[iy]));
	json_array_append_new(y->partners[iy], json_integer((json_int_t)x->index[ix]));
}

static void set_status(struct side *s, ge_opid id, const char *st, int mark)
{
	s->status[id] = st;
	s->mark[id] = (unsigned char)mark;
}

/* Statuses, marks, partners and change texts from the entries. */
static void classify(struct side *A, struct side *B, const ge_diff_entry *e,
		     size_t n)
{
	ge_buf t = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		switch (e[i].kind) {
		case GE_DIFF_REMOVED:
			set_status(A, e[i].a, "removed", DOT_MARK_REMOVED);
			if (e[i].b != GE_NOOP)
				link_ops(A, e[i].a, B, e[i].b);
			break;
		case GE_DIFF_ADDED:
			set_status(B, e[i].b, "added", DOT_MARK_ADDED);
			if (e[i].a != GE_NOOP)
				link_ops(A, e[i].a, B, e[i].b);
			break;
		case GE_DIFF_CHANGED:
		case GE_DIFF_MOVED: {
			const char *st = e[i].kind == GE_DIFF_MOVED ? "moved"
								    : "changed";
			set_status(A, e[i].a, st, DOT_MARK_CHANGED);
			set_status(B, e[i].b, st, DOT_MARK_CHANGED);
			if (e[i].kind == GE_DIFF_MOVED)
				link_ops(A, e[i].a, B, e[i].b);
			t.len = 0;
			diff_changes(&t, A->g, B->g, &e[i], "");
			ge_buf_addc(&t, 0);
			free(B->change[e[i].b]);
			B->change[e[i].b] = ge_xstrdup((char *)t.data);
			free(A->change[e[i].a]);
			A->change[e[i].a] = ge_xstrdup((char *)t.data);
			break;
		}
		}
	}
	/* ops of the same name pair too */
	for (size_t i = 0; i < B->cap; i++) {
		ge_opid ib = (ge_opid)i;
		if (!ge_op_alive(B->g, ib))
			continue;
		ge_opid ia = ge_graph_find(A->g, ge_op_name(B->g, ib));
		if (ia != GE_NOOP)
			link_ops(A, ia, B, ib);
	}
	ge_buf_free(&t);
}

static json_t *jstr(const char *s)
{
	json_t *v = json_string(s);
	return v ? v : json_stringn_nocheck(s, strlen(s));
}

/* The data of one side: {"ops": [[name, type, status, node, partners,
 * attrs, change], ...], "nodes": {node: [places]}}. */
static json_t *side_json(struct side *s)
{
	json_t *ops = json_array(), *nodes = json_object();
	ge_buf t = GE_BUF_INIT;
	char node[32];
	for (size_t i = 0; i < s->cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(s->g, id))
			continue;
		int d = s->drawn_as[i];
		if (d == -2)
			node[0] = 0;
		else if (d < 0)
			snprintf(node, sizeof node, "n%zu", i);
		else
			snprintf(node, sizeof node, "s%d", d);
		json_t *attrs = json_array();
		size_t na = ge_op_num_attrs(s->g, id);
		for (size_t k = 0; k < na; k++) {
			const char *key = ge_op_attr_name(s->g, id, k);
			t.len = 0;
			diff_attr_value(&t, ge_op_attr(s->g, id, key, NULL));
			json_t *kv = json_array();
			json_array_append_new(kv, jstr(key));
			json_array_append_new(kv, json_stringn_nocheck(
				t.len ? (char *)t.data : "", t.len));
			json_array_append_new(attrs, kv);
		}
		json_t *op = json_array();
		json_array_append_new(op, jstr(ge_op_name(s->g, id)));
		json_array_append_new(op, jstr(ge_op_type(s->g, id)));
		json_array_append_new(op, json_string(s->status[i]));
		json_array_append_new(op, json_string(node));
		json_array_append_new(op, s->partners[i] ? s->partners[i]
							 : json_array());
		s->partners[i] = NULL;
		json_array_append_new(op, attrs);
		json_array_append_new(op, s->change[i] ? jstr(s->change[i])
						       : json_null());
		json_array_append_new(ops, op);
		if (node[0]) {
			json_t *at = json_object_get(nodes, node);
			if (!at) {
				at = json_array();
				json_object_set_new(nodes, node, at);
			}
			json_array_append_new(at, json_integer(
				(json_int_t)s->index[i]));
		}
	}
	ge_buf_free(&t);
	json_t *o = json_object();
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "nodes", nodes);
	return o;
}

/* Draws one side: the DOT picture with the marks, laid out as SVG. */
static int draw(struct side *s, const char *out, int open)
{
	struct dot_view v = {NULL, PAGE_COLLAPSE, s->mark, 0,
			     DOT_PAGE | (open ? DOT_PAGE_OPEN : 0), s->drawn_as};
	ge_buf dot = GE_BUF_INIT;
	dot_render(&dot, s->g, &v);
	int rc = dot_svg(out, &dot, &s->svg);
	ge_buf_free(&dot);
	return rc;
}

static void add_html(ge_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': ge_buf_adds(b, "&lt;"); break;
		case '>': ge_buf_adds(b, "&gt;"); break;
		case '&': ge_buf_adds(b, "&amp;"); break;
		case '"': ge_buf_adds(b, "&quot;"); break;
		default: ge_buf_addc(b, *s); break;
		}
	}
}

/* The SVG of a side without its XML prologue and doctype. */
static void add_svg(ge_buf *b, const ge_buf *svg)
{
	const char *p = svg->len ? (const char *)svg->data : "";
	const char *at = strstr(p, "<svg");
	if (at)
		ge_buf_add(b, at, svg->len - (size_t)(at - p));
}

/* src/diff_page.css and src/diff_page.js (lib/embed.sh) */
extern const unsigned char ge_diff_page_css_data[], ge_diff_page_js_data[];

/* The summary: counts, then the entries, each row selecting its op. */
static void add_summary(ge_buf *b, const struct side *A, const struct side *B,
			const ge_diff_entry *e, size_t n)
{
	static const char *const kinds[] = {"removed", "added", "changed",
					    "moved"};
	size_t c[4] = {0, 0, 0, 0}, na = 0, nb = 0;
	for (size_t i = 0; i < n; i++)
		c[e[i].kind]++;
	for (size_t i = 0; i < A->cap; i++)
		na += (size_t)ge_op_alive(A->g, (ge_opid)i);
	for (size_t i = 0; i < B->cap; i++)
		nb += (size_t)ge_op_alive(B->g, (ge_opid)i);
	ge_buf_printf(b, "<table class=\"gd-counts\"><tr><th>ops in A</th>"
			 "<th>ops in B</th><th class=\"gd-removed\">removed</th>"
			 "<th class=\"gd-added\">added</th><th class=\"gd-changed\">"
			 "changed</th><th class=\"gd-moved\">moved</th></tr>"
			 "<tr><td>%zu</td><td>%zu</td><td id=\"gd-n-removed\">%zu"
			 "</td><td id=\"gd-n-added\">%zu</td><td id=\"gd-n-changed\">"
			 "%zu</td><td id=\"gd-n-moved\">%zu</td></tr></table>\n",
		       na, nb, c[0], c[1], c[2], c[3]);
	ge_buf_adds(b, "<table id=\"gd-entries\"><tr><th></th><th>op</th>"
		       "<th>type</th><th>what</th></tr>\n");
	ge_buf t = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		int onb = e[i].kind != GE_DIFF_REMOVED;
		const struct side *s = onb ? B : A;
		ge_opid id = onb ? e[i].b : e[i].a;
		ge_buf_printf(b, "<tr class=\"gd-%s\" data-side=\"%s\" "
				 "data-op=\"%zu\"><td>%s</td><td>",
			       kinds[e[i].kind], onb ? "b" : "a", s->index[id],
			       kinds[e[i].kind]);
		if (e[i].kind == GE_DIFF_MOVED) {
			add_html(b, ge_op_name(A->g, e[i].a));
			ge_buf_adds(b, " &rarr; ");
		}
		add_html(b, ge_op_name(s->g, id));
		ge_buf_adds(b, "</td><td>");
		add_html(b, ge_op_type(s->g, id));
		ge_buf_adds(b, "</td><td>");
		t.len = 0;
		if (e[i].kind == GE_DIFF_REMOVED && e[i].b != GE_NOOP)
			ge_buf_printf(&t, "into %s", ge_op_name(B->g, e[i].b));
		else if (e[i].kind == GE_DIFF_CHANGED ||
			 e[i].kind == GE_DIFF_MOVED)
			diff_changes(&t, A->g, B->g, &e[i], "");
		ge_buf_addc(&t, 0);
		add_html(b, (char *)t.data);
		ge_buf_adds(b, "</td></tr>\n");
	}
	ge_buf_adds(b, "</table>\n");
	ge_buf_free(&t);
}

static void add_page(ge_buf *b, const struct diff_page_in *in,
		     const struct side *A, const struct side *B,
		     const ge_diff_entry *e, size_t n, const char *data)
{
	ge_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		       "<meta charset=\"utf-8\">\n<title>gerewrite diff: ");
	add_html(b, in->name_a);
	ge_buf_adds(b, " &rarr; ");
	add_html(b, in->name_b);
	ge_buf_adds(b, "</title>\n<style>\n");
	ge_buf_adds(b, (const char *)ge_diff_page_css_data);
	ge_buf_adds(b, "</style>\n</head><body>\n<header><h1>");
	add_html(b, in->name_a);
	ge_buf_adds(b, " &rarr; ");
	add_html(b, in->name_b);
	ge_buf_adds(b, "</h1><span id=\"gd-status\">loading</span></header>\n"
		       "<section id=\"gd-summary\">\n");
	add_summary(b, A, B, e, n);
	if (in->more) {
		char *m = json_dumps(in->more, JSON_COMPACT | JSON_ESCAPE_SLASH);
		ge_buf_adds(b, "<div id=\"gd-more\"></div>\n"
			       "<script type=\"application/json\" "
			       "id=\"gd-more-data\">");
		ge_buf_adds(b, m ? m : "null");
		ge_buf_adds(b, "</script>\n");
		free(m);
	}
	if (in->verify) {
		char *v = json_dumps(in->verify, JSON_COMPACT | JSON_ESCAPE_SLASH);
		ge_buf_adds(b, "<div id=\"gd-verify\"></div>\n"
			       "<script type=\"application/json\" "
			       "id=\"gd-verify-data\">");
		ge_buf_adds(b, v ? v : "null");
		ge_buf_adds(b, "</script>\n");
		free(v);
	}
	ge_buf_adds(b, "</section>\n<div id=\"gd-panes\">\n"
		       "<div class=\"gd-pane\"><h2>A: ");
	add_html(b, in->name_a);
	ge_buf_adds(b, "</h2><div class=\"gd-svg\" id=\"gd-svg-a\">");
	add_svg(b, &A->svg);
	ge_buf_adds(b, "</div></div>\n<div class=\"gd-pane\"><h2>B: ");
	add_html(b, in->name_b);
	ge_buf_adds(b, "</h2><div class=\"gd-svg\" id=\"gd-svg-b\">");
	add_svg(b, &B->svg);
	ge_buf_adds(b, "</div></div>\n</div>\n<section id=\"gd-details\">"
		       "<p>Select an op (in a picture or the table) to see it "
		       "and its partner.</p></section>\n"
		       "<pre id=\"gd-marked\"></pre><pre id=\"gd-pairs\"></pre>\n"
		       "<script type=\"application/json\" id=\"gd-data\">");
	ge_buf_adds(b, data);
	ge_buf_adds(b, "</script>\n<script>\n");
	ge_buf_adds(b, (const char *)ge_diff_page_js_data);
	ge_buf_adds(b, "</script>\n</body></html>\n");
}

int diff_page_write(const char *out, const struct diff_page_in *in)
{
	struct side A, B;
	side_init(&A, in->a);
	side_init(&B, in->b);
	ge_diff_entry *e;
	size_t n = ge_graph_diff(in->a, in->b, &e);
	classify(&A, &B, e, n);
	size_t ma = 0, mb = 0;
	for (size_t i = 0; i < A.cap; i++)
		ma += A.mark[i] != DOT_MARK_NONE;
	for (size_t i = 0; i < B.cap; i++)
		mb += B.mark[i] != DOT_MARK_NONE;
	int open = ma <= PAGE_MAX_OPEN && mb <= PAGE_MAX_OPEN;
	int rc = draw(&A, out, open);
	if (!rc)
		rc = draw(&B, out, open);
	if (!rc) {
		json_t *d = json_object();
		json_object_set_new(d, "a", side_json(&A));
		json_object_set_new(d, "b", side_json(&B));
		char *data = json_dumps(d, JSON_COMPACT | JSON_ESCAPE_SLASH);
		json_decref(d);
		ge_buf page = GE_BUF_INIT;
		add_page(&page, in, &A, &B, e, n, data ? data : "{}");
		free(data);
		ge_error err;
		if (ge_file_write_atomic(out, page.data, page.len, &err) !=
		    GE_OK) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		}
		ge_buf_free(&page);
	}
	free(e);
	side_free(&A);
	side_free(&B);
	return rc;
}
