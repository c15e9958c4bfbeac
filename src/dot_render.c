/*
 * dot_render.c: the picture drawn by `gerewrite dot`.
 *
 * Name scopes become nested clusters, so that each op is labelled with
 * the last part of its name (its cluster says the rest) and its type; a
 * scope holding only one sub-scope shares its box ("a/b"), a scope of one
 * op is just the op.  With --collapse N the scopes are boxes with their
 * op count, and the biggest are opened until the picture has about N
 * boxes (choose_open).  Data edges carry the dtype and static shape of the tensor (and
 * ":k" for an output other than 0), control edges are dashed; edges into
 * or out of a collapsed scope are drawn once.  Ops outside the scope that
 * feed or read it are grey ellipses labelled with the end of their name.
 * A legend explains the colours and line styles.
 *
 * Pictures other than DOT text go through Graphviz's dot, chosen by the
 * output's extension.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "dot_render.h"
#include "analyses/shapes.h"

#define COLOR_ADDED "#b7e4a7"
#define COLOR_CHANGED "#f8d49a"
#define COLOR_NORMAL "#f2f2f2"
#define COLOR_OUTSIDE "#dddddd"
#define COLOR_COLLAPSED "#cfe0f3"
#define COLOR_REMOVED "#f4b0ae"

/* ------------------------------------------------------------ helpers */

static void add_escaped(ge_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			ge_buf_addc(b, '\\');
		ge_buf_addc(b, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
	}
}

static void add_esc(ge_buf *b, const char *s)
{
	add_escaped(b, s, strlen(s));
}

static int in_scope(const char *name, const char *scope, size_t n)
{
	if (!scope)
		return 1;
	return !strncmp(name, scope, n) && (name[n] == 0 || name[n] == '/');
}

/* A set of strings or of 64-bit keys, open addressing. */
struct set {
	uint64_t *keys; /* key + 1; 0 is empty */
	int *vals;
	size_t cap, n;
};

static void set_free(struct set *s)
{
	free(s->keys);
	free(s->vals);
	memset(s, 0, sizeof *s);
}

/* Returns the slot of key, inserting it with val when absent (*added). */
static int *set_put(struct set *s, uint64_t key, int val, int *added)
{
	if (2 * (s->n + 1) > s->cap) {
		struct set t = {0};
		t.cap = s->cap ? 2 * s->cap : 64;
		t.keys = ge_xcalloc(t.cap, sizeof *t.keys);
		t.vals = ge_xcalloc(t.cap, sizeof *t.vals);
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i]) {
				int a;
				*set_put(&t, s->keys[i] - 1, s->vals[i], &a) =
					s->vals[i];
			}
		set_free(s);
		*s = t;
	}
	size_t m = s->cap - 1;
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & m;
	while (s->keys[i] && s->keys[i] != key + 1)
		i = (i + 1) & m;
	*added = !s->keys[i];
	if (*added) {
		s->keys[i] = key + 1;
		s->vals[i] = val;
		s->n++;
	}
	return &s->vals[i];
}

/* ------------------------------------------------------------ scopes */

struct scope {
	const char *path; /* relative to the view's scope; "" for the root */
	size_t len;
	int parent;
	size_t count; /* ops in it and below */
	int rep;      /* the collapsed scope drawn for it, or -1 */
	int child, next;
	size_t first, nops; /* its own ops: order[first .. first+nops) */
	size_t nkids;       /* child scopes */
	int open;           /* drawn with its ops (--collapse) */
	size_t marked;      /* marked ops in it and below (open_marked) */
};

struct tree {
	struct scope *v;
	size_t n, cap;
	struct set index; /* hash of the path -> scope; collisions checked */
};

static int *set_get(const struct set *s, uint64_t key)
{
	if (!s->cap)
		return NULL;
	size_t m = s->cap - 1;
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & m;
	while (s->keys[i]) {
		if (s->keys[i] == key + 1)
			return &s->vals[i];
		i = (i + 1) & m;
	}
	return NULL;
}

/* The scope of a path, made (with its parents) when new.  The index maps
 * a hash of the path to the scope; a collision probes the next key. */
static int scope_of(struct tree *t, const char *path, size_t len)
{
	uint64_t h = ((uint64_t)ge_hash(path, len) << 20) ^ len;
	int *slot;
	while ((slot = set_get(&t->index, h))) {
		struct scope *s = &t->v[*slot];
		if (s->len == len && !memcmp(s->path, path, len))
			return *slot;
		h = h * 31 + 7;
	}
	int parent = -1;
	if (len) {
		size_t k = len;
		while (k && path[k - 1] != '/')
			k--;
		parent = scope_of(t, path, k ? k - 1 : 0);
	}
	/* the parents may have taken h's successors: probe again */
	while ((slot = set_get(&t->index, h)))
		h = h * 31 + 7;
	int added;
	set_put(&t->index, h, (int)t->n, &added);
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->v = ge_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	struct scope *s = &t->v[t->n];
	memset(s, 0, sizeof *s);
	s->path = path;
	s->len = len;
	s->parent = parent;
	s->rep = -1;
	s->child = -1;
	s->next = -1;
	if (parent >= 0) {
		s->next = t->v[parent].child;
		t->v[parent].child = (int)t->n;
	}
	return (int)t->n++;
}

/* The view: which ops are drawn, their scopes, what is collapsed. */
struct view {
	const ge_graph *g;
	const struct dot_view *o;
	size_t sn, cap;
	unsigned char *inside; /* per op */
	int *scope;            /* per op inside */
	size_t *order;         /* ops grouped by scope */
	struct tree t;
};

static const char *rel_name(const struct view *w, ge_opid id)
{
	const char *name = ge_op_name(w->g, id);
	if (!w->o->scope)
		return name;
	if (name[w->sn] == '/')
		return name + w->sn + 1;
	/* the op named as the scope itself */
	const char *s = strrchr(name, '/');
	return s ? s + 1 : name;
}

/* A max-heap of scopes by op count (then creation order). */
struct heap {
	int *v;
	size_t n;
	const struct tree *t;
};

static int heap_before(const struct heap *h, int a, int b)
{
	size_t ca = h->t->v[a].count, cb = h->t->v[b].count;
	return ca != cb ? ca > cb : a < b;
}

static void heap_push(struct heap *h, int s)
{
	size_t i = h->n++;
	h->v[i] = s;
	while (i && heap_before(h, h->v[i], h->v[(i - 1) / 2])) {
		int t = h->v[i];
		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int heap_pop(struct heap *h)
{
	int top = h->v[0];
	h->v[0] = h->v[--h->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && heap_before(h, h->v[l], h->v[m]))
			m = l;
		if (r < h->n && heap_before(h, h->v[r], h->v[m]))
			m = r;
		if (m == i)
			break;
		int t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
	return top;
}

/* --collapse N: which scopes are drawn open.  The view's scope is open;
 * then the biggest closed scope is opened, and the next biggest, as long
 * as the picture gets no farther from N boxes (ops and closed scopes)
 * than it is, and at most N/4 past it: opening a scope replaces its box
 * by its own ops and its sub-scopes.  A scope whose opening adds no box (one op, or one
 * sub-scope and no op of its own) is always opened. */
static void choose_open(struct view *w)
{
	struct tree *t = &w->t;
	size_t want = w->o->collapse;
	struct heap h = {ge_xcalloc(t->n + 1, sizeof *h.v), 0, t};
	t->v[0].open = 1;
	size_t boxes = t->v[0].nops + t->v[0].nkids;
	for (int c = t->v[0].child; c >= 0; c = t->v[c].next)
		heap_push(&h, c);
	while (h.n) {
		struct scope *s = &t->v[heap_pop(&h)];
		size_t grow = s->nops + s->nkids;
		grow = grow ? grow - 1 : 0;
		/* opening may overshoot N by what it lacks, at most N/4 */
		size_t lack = boxes < want ? want - boxes : 0;
		size_t over = lack < want / 4 ? lack : want / 4;
		if (grow && (!lack || boxes + grow > want + over) &&
		    !((w->o->page & DOT_PAGE_OPEN) && s->marked))
			continue;
		s->open = 1;
		boxes += grow;
		for (int c = s->child; c >= 0; c = t->v[c].next)
			heap_push(&h, c);
	}
	free(h.v);
}

static void build_view(struct view *w)
{
	const ge_graph *g = w->g;
	w->cap = ge_graph_capacity(g);
	w->sn = w->o->scope ? strlen(w->o->scope) : 0;
	w->inside = ge_xcalloc(w->cap + 1, 1);
	w->scope = ge_xcalloc(w->cap + 1, sizeof *w->scope);
	scope_of(&w->t, "", 0);
	size_t total = 0;
	for (size_t i = 0; i < w->cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) ||
		    !in_scope(ge_op_name(g, id), w->o->scope, w->sn))
			continue;
		w->inside[i] = 1;
		const char *r = rel_name(w, id);
		const char *sl = strrchr(r, '/');
		int s = scope_of(&w->t, r, sl ? (size_t)(sl - r) : 0);
		w->scope[i] = s;
		w->t.v[s].nops++;
		int m = w->o->page && w->o->mark &&
			w->o->mark[i] != DOT_MARK_NONE;
		for (int p = s; p >= 0; p = w->t.v[p].parent) {
			w->t.v[p].count++;
			w->t.v[p].marked += (size_t)m;
		}
		total++;
	}
	/* group the ops by scope, in node order within each */
	size_t pos = 0;
	for (size_t s = 0; s < w->t.n; s++) {
		w->t.v[s].first = pos;
		pos += w->t.v[s].nops;
		w->t.v[s].nops = 0;
	}
	w->order = ge_xcalloc(total + 1, sizeof *w->order);
	for (size_t i = 0; i < w->cap; i++)
		if (w->inside[i]) {
			struct scope *s = &w->t.v[w->scope[i]];
			w->order[s->first + s->nops++] = i;
		}
	for (size_t s = 1; s < w->t.n; s++)
		w->t.v[w->t.v[s].parent].nkids++;
	if (w->o->collapse)
		choose_open(w);
	/* parents come before their children: one pass top-down */
	for (size_t s = 1; s < w->t.n; s++) {
		struct scope *c = &w->t.v[s];
		int prep = w->t.v[c->parent].rep;
		if (prep >= 0)
			c->rep = prep;
		else if (w->o->collapse && !c->open)
			c->rep = (int)s;
	}
}

static void free_view(struct view *w)
{
	free(w->inside);
	free(w->scope);
	free(w->order);
	free(w->t.v);
	set_free(&w->t.index);
}

/* The node an op is drawn as: "n<id>", or "s<scope>" when collapsed. */
static uint64_t node_key(const struct view *w, ge_opid id)
{
	if (w->inside[id] && w->t.v[w->scope[id]].rep >= 0)
		return ((uint64_t)1 << 31) | (uint64_t)w->t.v[w->scope[id]].rep;
	return id;
}

static void add_node_ref(ge_buf *b, uint64_t key)
{
	if (key >> 31)
		ge_buf_printf(b, "s%u", (unsigned)(key & 0x7fffffff));
	else
		ge_buf_printf(b, "n%u", (unsigned)key);
}

/* ------------------------------------------------------------ nodes */

/* An op, labelled with label (NULL: the last part of its name). */
static void op_node(ge_buf *b, const struct view *w, ge_opid id,
		    const char *indent, const char *label)
{
	const char *r = rel_name(w, id);
	const char *base = strrchr(r, '/');
	base = label ? label : base ? base + 1 : r;
	ge_buf_printf(b, "%sn%u [label=\"", indent, (unsigned)id);
	add_esc(b, base);
	ge_buf_adds(b, "\\n");
	add_esc(b, ge_op_type(w->g, id));
	ge_buf_adds(b, "\", tooltip=\"");
	add_esc(b, ge_op_name(w->g, id));
	ge_buf_adds(b, "\"");
	int mark = w->o->mark ? w->o->mark[id] : DOT_MARK_NONE;
	if (mark == DOT_MARK_ADDED)
		ge_buf_adds(b, ", fillcolor=\"" COLOR_ADDED "\"");
	else if (mark == DOT_MARK_CHANGED)
		ge_buf_adds(b, ", fillcolor=\"" COLOR_CHANGED "\"");
	else if (mark == DOT_MARK_REMOVED)
		ge_buf_adds(b, ", fillcolor=\"" COLOR_REMOVED "\"");
	ge_buf_adds(b, "];\n");
}

/* An op outside the scope: its name's last two parts. */
static void outside_node(ge_buf *b, const ge_graph *g, ge_opid id)
{
	const char *name = ge_op_name(g, id);
	const char *cut = name + strlen(name);
	int parts = 0;
	while (cut > name && parts < 2) {
		cut--;
		if (*cut == '/')
			parts++;
	}
	if (parts < 2)
		cut = name;
	else
		cut++;
	ge_buf_printf(b, "  n%u [label=\"%s", (unsigned)id,
		      cut > name ? ".../" : "");
	add_esc(b, cut);
	ge_buf_adds(b, "\", tooltip=\"");
	add_esc(b, name);
	ge_buf_adds(b, "\", shape=ellipse, style=filled, fillcolor=\"" COLOR_OUTSIDE
		       "\", fontcolor=\"#555555\"];\n");
}

/* The start of the last part of a scope's path. */
static const char *last_part(const struct scope *sc)
{
	const char *last = sc->path + sc->len;
	while (last > sc->path && last[-1] != '/')
		last--;
	return last;
}

/* Draws scope s: a box for a collapsed one, else a cluster around its
 * ops and sub-scopes.  from, when not NULL, is where its label starts in
 * its path: a scope that holds nothing but one sub-scope is not drawn
 * as a box of its own, its sub-scope's label says both ("a/b"); a scope
 * of one op is that op, labelled with the rest of its name. */
static void emit_scope(ge_buf *b, const struct view *w, int s, int depth,
		       const char *from)
{
	const struct scope *sc = &w->t.v[s];
	char indent[64];
	int d = depth < 30 ? depth : 30;
	memset(indent, ' ', (size_t)(2 * d + 2));
	indent[2 * d + 2] = 0;
	const char *label = from ? from : last_part(sc);
	size_t llen = (size_t)(sc->path + sc->len - label);
	if (sc->rep == s) {
		ge_buf_printf(b, "%ss%d [label=\"", indent, s);
		add_escaped(b, label, llen);
		ge_buf_printf(b, "/\\n%zu ops", sc->count);
		if (sc->marked)
			ge_buf_printf(b, ", %zu differ", sc->marked);
		ge_buf_adds(b, "\", tooltip=\"");
		if (w->o->scope) {
			add_esc(b, w->o->scope);
			ge_buf_addc(b, '/');
		}
		add_escaped(b, sc->path, sc->len);
		ge_buf_printf(b, "\", shape=box3d, fillcolor=\"%s\"];\n",
			      sc->marked ? COLOR_CHANGED : COLOR_COLLAPSED);
		return;
	}
	if (s && sc->count == 1) {
		const struct scope *in = sc;
		while (!in->nops)
			in = &w->t.v[in->child];
		ge_opid id = (ge_opid)w->order[in->first];
		op_node(b, w, id, indent,
			rel_name(w, id) + (label - sc->path));
		return;
	}
	if (s && !sc->nops && sc->nkids == 1) {
		emit_scope(b, w, sc->child, depth, label);
		return;
	}
	if (s) {
		ge_buf_printf(b, "%ssubgraph cluster_%d {\n%s  label=\"", indent,
			      s, indent);
		add_escaped(b, label, llen);
		ge_buf_printf(b, "\"; tooltip=\"");
		add_escaped(b, sc->path, sc->len);
		ge_buf_printf(b, "\"; style=\"rounded\"; color=\"#aaaaaa\";\n");
	}
	for (size_t i = 0; i < sc->nops; i++)
		op_node(b, w, (ge_opid)w->order[sc->first + i], indent, NULL);
	/* children were linked newest first: draw them in creation order */
	int kids[4096], nk = 0;
	for (int c = sc->child; c >= 0 && nk < 4096; c = w->t.v[c].next)
		kids[nk++] = c;
	while (nk > 0)
		emit_scope(b, w, kids[--nk], depth + 1, NULL);
	if (s)
		ge_buf_printf(b, "%s}\n", indent);
}

/* ------------------------------------------------------------ edges */

/* "float32[1,8,8,3]" for a tensor whose dtype or shape is known; the
 * shape is inferred where the graph records none (shapes.h). */
static void tensor_label(ge_buf *b, const ge_graph *g, ge_tref t)
{
	int dt = ge_op_output_dtype(g, t.op, t.index);
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = ge_shapes_best((ge_graph *)g, t, dims, GE_SHAPE_MAXRANK);
	if (dt)
		ge_buf_adds(b, ge_dtype_name(dt));
	if (rank >= 0)
		ge_shape_format(b, rank, dims);
}

static void emit_edges(ge_buf *b, struct view *w, unsigned char *outside)
{
	const ge_graph *g = w->g;
	struct set seen = {0};
	for (size_t i = 0; i < w->cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		size_t nin = ge_op_num_inputs(g, id);
		size_t nc = ge_op_num_control_inputs(g, id);
		for (size_t k = 0; k < nin + nc; k++) {
			ge_tref t = {GE_NOOP, 0};
			if (k < nin)
				t = ge_op_input(g, id, k);
			else
				t.op = ge_op_control_input(g, id, k - nin);
			if (t.op == GE_NOOP)
				continue;
			if (!w->inside[id] && !w->inside[t.op])
				continue;
			if (!w->inside[id])
				outside[id] = 1;
			if (!w->inside[t.op])
				outside[t.op] = 1;
			uint64_t from = node_key(w, t.op), to = node_key(w, id);
			int ctl = k >= nin;
			if ((from >> 31) || (to >> 31)) {
				if (from == to)
					continue;
				int added;
				uint64_t key = (from << 32) ^ (to << 1) ^
					       (uint64_t)ctl;
				set_put(&seen, key, 0, &added);
				if (!added)
					continue;
			}
			ge_buf_adds(b, "  ");
			add_node_ref(b, from);
			ge_buf_adds(b, " -> ");
			add_node_ref(b, to);
			if (ctl) {
				ge_buf_adds(b, " [style=dashed, color=\"#888888\"]");
			} else {
				ge_buf_adds(b, " [label=\"");
				if (t.index)
					ge_buf_printf(b, ":%d ", t.index);
				tensor_label(b, g, t);
				ge_buf_adds(b, "\"]");
			}
			ge_buf_adds(b, ";\n");
		}
	}
	set_free(&seen);
}

static void legend(ge_buf *b, const struct view *w)
{
	ge_buf_adds(b,
		    "  subgraph cluster_legend {\n"
		    "    label=\"legend\"; style=\"rounded,dashed\"; "
		    "color=\"#bbbbbb\";\n"
		    "    legend [shape=plaintext, style=\"\", label=<"
		    "<table border=\"0\" cellborder=\"1\" cellspacing=\"2\">"
		    "<tr><td bgcolor=\"" COLOR_NORMAL "\">name<br/>Type</td>"
		    "<td align=\"left\">an op, named within its scope "
		    "(the box around it)</td></tr>");
	if (w->o->scope)
		ge_buf_adds(b, "<tr><td bgcolor=\"" COLOR_OUTSIDE
			       "\">.../name</td><td align=\"left\">an op "
			       "outside the scope</td></tr>");
	if (w->o->collapse)
		ge_buf_adds(b, "<tr><td bgcolor=\"" COLOR_COLLAPSED
			       "\">scope/<br/>N ops</td><td align=\"left\">a "
			       "scope collapsed into one box (--collapse: "
			       "the biggest are opened)</td></tr>");
	if (w->o->mark)
		ge_buf_adds(b, "<tr><td bgcolor=\"" COLOR_ADDED "\">added</td>"
			       "<td align=\"left\">an op added</td></tr>"
			       "<tr><td bgcolor=\"" COLOR_CHANGED "\">changed"
			       "</td><td align=\"left\">an op changed (or "
			       "named)</td></tr>");
	ge_buf_adds(b, "<tr><td>&#8212;&#8212;</td><td align=\"left\">data: "
		       "dtype[shape] of the tensor, :k for output k</td></tr>"
		       "<tr><td>- - - -</td><td align=\"left\">control "
		       "dependency</td></tr></table>>];\n  }\n");
}

void dot_render(ge_buf *b, const ge_graph *g, const struct dot_view *o)
{
	struct view w = {.g = g, .o = o};
	build_view(&w);
	const char *name = ge_graph_name(g);
	ge_buf_adds(b, "digraph \"");
	add_esc(b, *name ? name : "graph");
	ge_buf_adds(b, "\" {\n"
		       "  graph [rankdir=");
	ge_buf_adds(b, o->page ? "TB" : "LR");
	ge_buf_adds(b, ", fontname=\"Helvetica\", "
		       "fontsize=10, nodesep=0.15, ranksep=0.3");
	if (o->scope || o->removed) {
		ge_buf_adds(b, ", labelloc=t, label=\"");
		if (o->scope) {
			ge_buf_adds(b, "scope ");
			add_esc(b, o->scope);
			ge_buf_adds(b, "/");
		}
		if (o->removed)
			ge_buf_printf(b, "%s%zu op%s removed",
				      o->scope ? ", " : "", o->removed,
				      o->removed == 1 ? "" : "s");
		ge_buf_adds(b, "\"");
	}
	ge_buf_adds(b, "];\n"
		       "  node [shape=box, style=\"rounded,filled\", fillcolor=\"" COLOR_NORMAL
		       "\", fontname=\"Helvetica\", fontsize=10];\n"
		       "  edge [fontname=\"Helvetica\", fontsize=8];\n");
	emit_scope(b, &w, 0, 0, NULL);
	ge_buf edges = GE_BUF_INIT;
	unsigned char *outside = ge_xcalloc(w.cap + 1, 1);
	emit_edges(&edges, &w, outside);
	for (size_t i = 0; i < w.cap; i++)
		if (outside[i])
			outside_node(b, g, (ge_opid)i);
	ge_buf_add(b, edges.data, edges.len);
	if (!o->page)
		legend(b, &w);
	ge_buf_adds(b, "}\n");
	if (o->drawn_as)
		for (size_t i = 0; i < w.cap; i++)
			o->drawn_as[i] = !w.inside[i] && !outside[i] ? -2
					 : !w.inside[i] ? -1
					 : (int)(node_key(&w, (ge_opid)i) >> 31)
					     ? w.t.v[w.scope[i]].rep
					     : -1;
	ge_buf_free(&edges);
	free(outside);
	free_view(&w);
}

/* ------------------------------------------------------------ scopes named */

int dot_scope_exists(const ge_graph *g, const char *scope)
{
	size_t n = strlen(scope), cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++)
		if (ge_op_alive(g, (ge_opid)i) &&
		    in_scope(ge_op_name(g, (ge_opid)i), scope, n))
			return 1;
	return 0;
}

struct cand {
	const char *s;
	size_t len;
	size_t score;
};

static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return strncmp(a->s, b->s, a->len);
}

/* Lower is nearer: a scope ending with the name given (at a '/'), then one
 * holding it, then by edit distance; SIZE_MAX when not near at all. */
static size_t nearness(const char *want, size_t wn, const char *s, size_t n)
{
	if (n > wn && !memcmp(s + n - wn, want, wn) && s[n - wn - 1] == '/')
		return 0;
	if (n >= wn && memmem(s, n, want, wn))
		return 1;
	/* compare with the scope's end of the same depth as want */
	size_t parts = 1;
	for (size_t i = 0; i < wn; i++)
		parts += want[i] == '/';
	const char *tail = s + n;
	while (tail > s) {
		if (tail[-1] == '/' && --parts == 0)
			break;
		tail--;
	}
	size_t tn = (size_t)(s + n - tail);
	size_t d = ge_edit_distance(want, wn, tail, tn);
	size_t limit = wn / 3 > 2 ? wn / 3 : 2;
	return d <= limit ? 2 + d : SIZE_MAX;
}

void dot_suggest_scopes(const ge_graph *g, const char *scope, ge_buf *b)
{
	size_t wn = strlen(scope), cap = ge_graph_capacity(g);
	struct set seen = {0};
	struct cand *c = NULL;
	size_t nc = 0, cc = 0;
	for (size_t i = 0; i < cap; i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		const char *name = ge_op_name(g, (ge_opid)i);
		/* every scope of the name: each prefix ending before a '/' */
		for (const char *p = strchr(name, '/'); p;
		     p = strchr(p + 1, '/')) {
			size_t n = (size_t)(p - name);
			int added;
			set_put(&seen, ((uint64_t)ge_hash(name, n) << 20) ^ n, 0,
				&added);
			if (!added)
				continue;
			size_t sc = nearness(scope, wn, name, n);
			if (sc == SIZE_MAX)
				continue;
			if (nc == cc) {
				cc = cc ? 2 * cc : 16;
				c = ge_xrealloc(c, cc * sizeof *c);
			}
			c[nc++] = (struct cand){name, n, sc};
		}
	}
	if (nc)
		qsort(c, nc, sizeof *c, cmp_cand);
	for (size_t i = 0; i < nc && i < 5; i++) {
		if (i)
			ge_buf_adds(b, ", ");
		ge_buf_add(b, c[i].s, c[i].len);
	}
	free(c);
	set_free(&seen);
}

/* ------------------------------------------------------------ output */

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

/* Whether prog runs: a path, or a name found on PATH. */
static int have_program(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char full[4096];
		snprintf(full, sizeof full, "%.*s/%s", (int)n,
			 n ? path : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
		path += n;
		if (*path)
			path++;
	}
	return 0;
}

/* Feeds the DOT text to `prog -T<fmt> -o tmp`; 0 when it succeeded. */
static int run_graphviz(const char *prog, const char *fmt, const char *tmp,
			const char *out, const ge_buf *dot)
{
	int p[2];
	if (pipe(p) < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		return EXIT_USAGE;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char t[16];
		snprintf(t, sizeof t, "-T%s", fmt);
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execlp(prog, prog, t, "-o", tmp, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		close(p[1]);
		return EXIT_USAGE;
	}
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	size_t off = 0;
	while (off < dot->len) {
		ssize_t n = write(p[1], dot->data + off, dot->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)n;
	}
	close(p[1]);
	signal(SIGPIPE, old);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || off < dot->len) {
		cli_errmsg("%s: '%s -T%s' failed (%s %d)", out, prog, fmt,
			   WIFEXITED(st) ? "exit status" : "signal",
			   WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return EXIT_USAGE;
	}
	return 0;
}

int dot_write(const char *out, const ge_buf *dot)
{
	static const char *const pictures[] = {"svg", "png", "pdf", NULL};
	const char *fmt = NULL;
	if (ends_with(out, ".dot") || ends_with(out, ".gv")) {
		ge_error err;
		if (ge_file_write_atomic(out, dot->data, dot->len, &err) !=
		    GE_OK) {
			cli_errmsg("%s", err.msg);
			return EXIT_USAGE;
		}
		return 0;
	}
	const char *ext = strrchr(out, '.');
	if (ext && !strchr(ext, '/'))
		for (int i = 0; pictures[i]; i++)
			if (!strcasecmp(ext + 1, pictures[i]))
				fmt = pictures[i];
	if (!fmt) {
		cli_errmsg("%s: cannot tell the picture format from the name "
			   "(use .dot or .gv for DOT text, .svg, .png or .pdf)",
			   out);
		return EXIT_USAGE;
	}
	const char *prog = getenv("GEREWRITE_DOT");
	if (!prog || !*prog)
		prog = "dot";
	if (!have_program(prog)) {
		cli_errmsg("%s: .%s needs Graphviz's '%s' program, which is "
			   "not installed (install graphviz, or write DOT "
			   "text with -o FILE.dot)",
			   out, fmt, prog);
		return EXIT_USAGE;
	}
	size_t n = strlen(out);
	char *tmp = ge_xmalloc(n + 16);
	snprintf(tmp, n + 16, "%s.tmp-XXXXXX", out);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		free(tmp);
		return EXIT_USAGE;
	}
	close(fd);
	mode_t um = umask(0);
	umask(um);
	chmod(tmp, 0666 & ~um);
	int rc = run_graphviz(prog, fmt, tmp, out, dot);
	if (!rc && rename(tmp, out) < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

static const char *graphviz_program(void)
{
	const char *prog = getenv("GEREWRITE_DOT");
	return prog && *prog ? prog : "dot";
}

int dot_have_graphviz(void)
{
	return have_program(graphviz_program());
}

int dot_svg(const char *what, const ge_buf *dot, ge_buf *svg)
{
	const char *prog = graphviz_program();
	char tmp[] = "/tmp/gerewrite-svg-XXXXXX";
	int fd = mkstemp(tmp);
	if (fd < 0) {
		cli_errmsg("%s: %s", what, strerror(errno));
		return EXIT_USAGE;
	}
	close(fd);
	int rc = run_graphviz(prog, "svg", tmp, what, dot);
	if (!rc) {
		uint8_t *data = NULL;
		size_t len = 0;
		ge_error err;
		if (ge_file_read(tmp, &data, &len, &err) != GE_OK) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		} else {
			ge_buf_add(svg, data, len);
			free(data);
		}
	}
	unlink(tmp);
	return rc;
}
