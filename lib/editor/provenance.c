/*
 * provenance.c: NodeDef.experimental_debug_info, read from an op's bytes
 * and written as an override of them (graph_impl.h, ge_dbginfo), and the
 * log of the rules that made ops.
 */
#include <stdlib.h>
#include <string.h>

#include "editor/provenance.h"
#include "functions/func.h"
#include "graph/graph_impl.h"


void ge_strvec_push(ge_strvec *v, const char *s)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->v = ge_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = s;
}

void ge_strvec_free(ge_strvec *v)
{
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

/* Whether g's top-level graph sets no provenance (GE_PROV_OFF). */
static int prov_off(const ge_graph *g)
{
	return ge_graph_root((ge_graph *)g)->prov_mode == GE_PROV_OFF;
}

/* The names of one ExperimentalDebugInfo payload, interned in g (the
 * graph's cache of strings: asking twice costs no memory). */
static int read_payload(ge_graph *g, const uint8_t *p, const uint8_t *end,
			ge_strvec *nodes, ge_strvec *funcs)
{
	ge_wire w = ge_wire_of(p, (size_t)(end - p));
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		int names = ge_wire_is_len(&f, GE_DEBUGINFO_NODE_NAMES);
		if (!names && !ge_wire_is_len(&f, GE_DEBUGINFO_FUNC_NAMES))
			continue;
		if (memchr(f.data, 0, f.len))
			return -1;
		ge_strvec_push(names ? nodes : funcs,
			       ge_intern(g, (const char *)f.data, f.len));
	}
	return w.bad ? -1 : 0;
}

/* Every field 6 of NodeDef bytes, as protobuf merges repeated message
 * fields: their lists one after the other. */
static int read_fields(ge_graph *g, const uint8_t *p, const uint8_t *end,
		       ge_strvec *nodes, ge_strvec *funcs)
{
	ge_wire w = ge_wire_of(p, (size_t)(end - p));
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		if (ge_wire_is_len(&f, GE_NODEDEF_DEBUG_INFO) &&
		    read_payload(g, f.data, f.data + f.len, nodes, funcs))
			return -1;
	return w.bad ? -1 : 0;
}

int ge_op_origins(const ge_graph *cg, ge_opid id, ge_strvec *nodes,
		  ge_strvec *funcs, ge_error *err)
{
	/* const_cast: interned strings are a cache of the graph */
	ge_graph *g = (ge_graph *)cg;
	ge_strvec mine[2] = {GE_VEC_INIT, GE_VEC_INIT};
	if (!nodes || !funcs) {
		/* the count is of both lists, asked for or not */
		int rc = ge_op_origins(cg, id, nodes ? nodes : &mine[0],
				       funcs ? funcs : &mine[1], err);
		ge_strvec_free(&mine[0]);
		ge_strvec_free(&mine[1]);
		return rc;
	}
	nodes->n = 0;
	funcs->n = 0;
	if (id >= g->n_ops)
		return 0;
	const ge_op *o = &g->ops[id];
	const ge_dbginfo *dbg = ge_op_dbg(g, id);
	int rc;
	if (dbg)
		rc = read_fields(g, dbg->bytes, dbg->bytes + dbg->len, nodes,
				 funcs);
	else if (o->raw && (o->flags & OPF_DBG_RAW))
		rc = read_fields(g, o->raw, o->raw + o->raw_len, nodes, funcs);
	else
		rc = 0;
	if (rc)
		return ge_err(err, GE_EFORMAT,
			      "%s: node '%s': experimental_debug_info does "
			      "not decode", g->name, o->name);
	return (int)(nodes->n + funcs->n);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts v and drops repeats: the set TensorFlow's merge makes. */
static void sort_unique(ge_strvec *v)
{
	if (v->n < 2)
		return;
	qsort(v->v, v->n, sizeof *v->v, cmp_str);
	size_t k = 1;
	for (size_t i = 1; i < v->n; i++)
		if (strcmp(v->v[i], v->v[k - 1]))
			v->v[k++] = v->v[i];
	v->n = k;
}

static size_t list_size(const ge_strvec *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->v[i]);
		n += 1 + ge_uvarint_size(l) + l;
	}
	return n;
}

static uint8_t *put_list(uint8_t *p, uint32_t field, const ge_strvec *v)
{
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->v[i]);
		*p++ = (uint8_t)GE_TAG_LEN(field);
		p = ge_put_uvarint(p, l);
		memcpy(p, v->v[i], l);
		p += l;
	}
	return p;
}

/* Makes nodes and funcs op id's provenance, written in the graph's
 * arena, and marks the op edited. */
static void set_lists(ge_graph *g, ge_opid id, const ge_strvec *nodes,
		      const ge_strvec *funcs)
{
	ge_op *o = &g->ops[id];
	size_t pl = list_size(nodes) + list_size(funcs);
	size_t fl = pl ? 1 + ge_uvarint_size(pl) + pl : 0;
	ge_dbginfo *d = ge_arena_alloc(&g->arena, sizeof *d + fl + 1);
	d->len = (uint32_t)fl;
	if (fl) {
		uint8_t *p = d->bytes;
		*p++ = GE_TAG_LEN(GE_NODEDEF_DEBUG_INFO);
		p = ge_put_uvarint(p, pl);
		p = put_list(p, GE_DEBUGINFO_NODE_NAMES, nodes);
		put_list(p, GE_DEBUGINFO_FUNC_NAMES, funcs);
	}
	ge_op_set_dbg(g, id, d);
	o->flags |= OPF_EDIT;
	g->version++;
}

int ge_op_add_origins(ge_graph *g, ge_opid id, const char *const *nodes,
		      size_t n, const char *const *funcs, size_t nf,
		      ge_error *err)
{
	if (!ge_op_alive(g, id))
		return ge_err(err, GE_EINVAL, "%s: provenance of a removed op",
			      g->name);
	for (size_t i = 0; i < n + nf; i++) {
		const char *s = i < n ? nodes[i] : funcs[i - n];
		if (!s || !*s)
			return ge_err(err, GE_EINVAL,
				      "%s: node '%s': an empty name in its "
				      "provenance", g->name, g->ops[id].name);
	}
	if (prov_off(g))
		return GE_OK;
	ge_strvec a = GE_VEC_INIT, b = GE_VEC_INIT;
	int rc = ge_op_origins(g, id, &a, &b, err);
	if (rc >= 0) {
		/* the caller's strings live through the call: set_lists
		 * copies their bytes into the op's field */
		for (size_t i = 0; i < n; i++)
			ge_strvec_push(&a, nodes[i]);
		for (size_t i = 0; i < nf; i++)
			ge_strvec_push(&b, funcs[i]);
		sort_unique(&a);
		sort_unique(&b);
		set_lists(g, id, &a, &b);
		rc = GE_OK;
	}
	ge_strvec_free(&a);
	ge_strvec_free(&b);
	return rc;
}

void ge_op_clear_origins(ge_graph *g, ge_opid id)
{
	ge_strvec none = GE_VEC_INIT;
	if (ge_op_alive(g, id))
		set_lists(g, id, &none, &none);
}

int ge_op_origins_of(const ge_graph *sg, ge_opid from, ge_strvec *nodes,
		     ge_strvec *funcs, ge_error *err)
{
	ge_strvec a = GE_VEC_INIT, b = GE_VEC_INIT;
	int rc = ge_op_origins(sg, from, &a, &b, err);
	if (rc >= 0) {
		if (!a.n)
			ge_strvec_push(nodes, ge_op_name(sg, from));
		for (size_t i = 0; i < a.n; i++)
			ge_strvec_push(nodes, a.v[i]);
		for (size_t i = 0; i < b.n; i++)
			ge_strvec_push(funcs, b.v[i]);
		rc = GE_OK;
	}
	ge_strvec_free(&a);
	ge_strvec_free(&b);
	return rc;
}

int ge_op_merge_origins(ge_graph *g, ge_opid to, const ge_graph *sg,
			ge_opid from, ge_error *err)
{
	ge_strvec a = GE_VEC_INIT, b = GE_VEC_INIT;
	int rc = ge_op_origins_of(sg, from, &a, &b, err);
	if (!rc)
		rc = ge_op_add_origins(g, to, a.v, a.n, b.v, b.n, err);
	ge_strvec_free(&a);
	ge_strvec_free(&b);
	return rc;
}

/* A run of the log: n ops of the top-level graph noted one after another
 * by one rule, with ids id .. id+n-1 (their names read from the graph
 * when asked); or one op (n = 1) whose name is kept in op, as it lives in
 * a body (func names it) or was removed (id GE_NOOP).  A copy of a view
 * notes its ops in order, so it takes one run, not a line per op. */
typedef struct prov_run {
	const char *op, *func, *rule;
	ge_opid id;
	uint32_t n;
} prov_run;

struct ge_prov_log {
	prov_run *v;
	size_t n, cap;
	size_t notes;                 /* the sum of the runs' n */
	ge_prov_rec *view;            /* ge_prov_log's lines */
	struct {                      /* named_field's fields, by op id */
		const char *name;
		const ge_dbginfo *dbg;
	} *named;
	size_t nnamed;
};

static struct ge_prov_log *log_of(ge_graph *root)
{
	if (!root->prov) {
		ge_parts.prov_free = ge_prov_free;
		ge_parts.prov_renumber = ge_prov_renumber;
		root->prov = ge_xcalloc(1, sizeof *root->prov);
	}
	return root->prov;
}

/* The field that names `name` alone, in g's arena. */
static const ge_dbginfo *name_only(ge_graph *g, const char *name)
{
	size_t l = strlen(name);
	size_t pl = 1 + ge_uvarint_size(l) + l;
	size_t fl = 1 + ge_uvarint_size(pl) + pl;
	ge_dbginfo *d = ge_arena_alloc(&g->arena, sizeof *d + fl + 1);
	d->len = (uint32_t)fl;
	uint8_t *p = d->bytes;
	*p++ = GE_TAG_LEN(GE_NODEDEF_DEBUG_INFO);
	p = ge_put_uvarint(p, pl);
	*p++ = GE_TAG_LEN(GE_DEBUGINFO_NODE_NAMES);
	p = ge_put_uvarint(p, l);
	memcpy(p, name, l);
	return d;
}

/* The field of a copy of op `from` of g when from has no provenance of
 * its own: its name alone, written without the general merge (a copy of
 * a large view does this once per op).  In a top-level graph the field
 * is made once per source and shared by its copies (the bytes in the
 * arena never change), until the source is renamed or the ops are
 * renumbered. */
static const ge_dbginfo *named_field(const ge_prov_batch *b, ge_opid from)
{
	ge_graph *g = b->g;
	const char *name = g->ops[from].name;
	if (g != b->root)
		return name_only(g, name);
	struct ge_prov_log *l = b->log;
	if (from >= l->nnamed) {
		/* by the sources' ids: at first as many as the graph has ops
		 * (a copy of a large view reaches its last source in one
		 * pass, and a big array grown on the way would be copied at
		 * each step), then growing by half for later ops */
		size_t n = l->nnamed + l->nnamed / 2;
		if (n < (size_t)from + 1)
			n = (size_t)from + 1;
		if (n < 1024)
			n = 1024;
		if (!l->named && n < ge_graph_capacity(g))
			n = ge_graph_capacity(g);
		l->named = ge_big_grow_zeroed(l->named, l->nnamed, n,
					      sizeof *l->named);
		l->nnamed = n;
	}
	if (l->named[from].name != name) {
		l->named[from].name = name;
		l->named[from].dbg = name_only(g, name);
	}
	return l->named[from].dbg;
}

/* Whether op id holds no provenance at all, known without decoding
 * (inline: a copy of a view asks it twice per op). */
static inline int has_none(const ge_graph *g, ge_opid id)
{
	const ge_op *o = &g->ops[id];
	const ge_dbginfo *dbg = ge_op_dbg(g, id);
	if (dbg)
		return dbg->len == 0;
	return !o->raw || !(o->flags & OPF_DBG_RAW);
}

void ge_prov_batch_init(ge_prov_batch *b, ge_graph *g, const char *rule)
{
	b->g = g;
	b->root = ge_graph_root(g);
	b->log = log_of(b->root);
	b->rule = rule ? ge_intern(b->root, rule, strlen(rule)) : NULL;
	b->fast = g == b->root && b->root->prov_mode != GE_PROV_ATTR;
	b->run_end = 0;
	b->off = b->root->prov_mode == GE_PROV_OFF;
}

/* batch_note's general case: a note as ge_prov_note makes it, after
 * which the run the log ends in is remembered when it is one of this
 * rule at the top level. */
static __attribute__((noinline)) void batch_note_slow(ge_prov_batch *b,
							ge_opid id)
{
	struct ge_prov_log *l = b->log;
	ge_prov_note(b->g, id, b->rule);
	b->run_end = 0;
	if (b->fast && l->n) {
		const prov_run *r = &l->v[l->n - 1];
		if (r->rule == b->rule && !r->op && !*r->func &&
		    r->id != GE_NOOP && r->id + r->n == id + 1)
			b->run_end = l->n;
	}
}

/* ge_prov_note of op id of b->g by the batch's rule.  The common case, a
 * copy in the top-level graph right after the last op this batch noted,
 * lengthens that run while it is still the log's last and the ids follow
 * on (inline: a copy of a view comes here once per op). */
static inline void batch_note(ge_prov_batch *b, ge_opid id)
{
	struct ge_prov_log *l = b->log;
	if (b->run_end && b->run_end == l->n) {
		prov_run *r = &l->v[l->n - 1];
		if (r->id + r->n == id && r->n < UINT32_MAX) {
			r->n++;
			l->notes++;
			return;
		}
	}
	batch_note_slow(b, id);
}

void ge_prov_batch_copy(ge_prov_batch *b, ge_opid to, const ge_graph *sg,
			ge_opid from)
{
	ge_graph *g = b->g;
	if (b->off || !ge_op_alive(g, to) || from >= sg->n_ops)
		return;
	const ge_op *s = &sg->ops[from];
	ge_op *o = &g->ops[to];
	/* the common cases: a source without provenance, or a copy in
	 * the same graph of an op whose field was set (its bytes, in the
	 * arena, never change: they are shared) */
	int none = has_none(sg, from);
	const ge_dbginfo *sdbg = ge_op_dbg(sg, from);
	if ((none || (sdbg && sg == g)) && !ge_op_dbg(g, to) &&
	    has_none(g, to)) {
		ge_op_set_dbg(g, to,
			      none ? (sg == g ? named_field(b, from)
					      : name_only(g, s->name))
				   : sdbg);
		o->flags |= OPF_EDIT;
		g->version++;
		if (b->rule)
			batch_note(b, to);
		return;
	}
	ge_strvec x = GE_VEC_INIT, y = GE_VEC_INIT;
	if (ge_op_origins_of(sg, from, &x, &y, NULL)) {
		x.n = y.n = 0;
		ge_strvec_push(&x, ge_op_name(sg, from));
	}
	if (!ge_op_add_origins(g, to, x.v, x.n, y.v, y.n, NULL) && b->rule)
		batch_note(b, to);
	ge_strvec_free(&x);
	ge_strvec_free(&y);
}

void ge_op_copy_origins(ge_graph *g, ge_opid to, const ge_graph *sg,
			ge_opid from, const char *rule)
{
	ge_prov_batch b;
	ge_prov_batch_init(&b, g, rule);
	ge_prov_batch_copy(&b, to, sg, from);
}

/* ge_op_made_from when op `to` and every op of from[] hold no provenance
 * and there are few of them (a rewrite rule's match, a batch norm and
 * its conv): the field names the ops of from[], sorted, each once, with
 * no function names; sorted in place, without the general merge's
 * reading of each op's field and its qsort.  Returns -1, having done
 * nothing, when that is not the case.  t/provenance checks it against
 * the general path. */
enum { MADE_FAST_MAX = 16 };
static int made_from_plain(ge_graph *g, ge_opid to, const ge_opid *from,
			   size_t n, const char *rule)
{
	if (n == 0 || n > MADE_FAST_MAX || !ge_op_alive(g, to) ||
	    !has_none(g, to))
		return -1;
	const char *nm[MADE_FAST_MAX];
	ge_strvec nodes = {nm, 0, MADE_FAST_MAX}, none = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++) {
		if (from[i] >= g->n_ops || !has_none(g, from[i]))
			return -1;
		/* insertion sort by bytes (strcmp, as sort_unique), each
		 * name once */
		const char *s = g->ops[from[i]].name;
		size_t j = nodes.n;
		int c = 1;
		while (j > 0 && (c = strcmp(nm[j - 1], s)) > 0)
			j--;
		if (j > 0 && c == 0)
			continue;
		memmove(nm + j + 1, nm + j, (nodes.n - j) * sizeof *nm);
		nm[j] = s;
		nodes.n++;
	}
	set_lists(g, to, &nodes, &none);
	if (rule)
		ge_prov_note(g, to, rule);
	return 0;
}

int ge_op_made_from(ge_graph *g, ge_opid to, const ge_opid *from, size_t n,
		    const char *rule, ge_error *err)
{
	if (prov_off(g))
		return GE_OK;
	if (made_from_plain(g, to, from, n, rule) == 0)
		return GE_OK;
	ge_strvec a = GE_VEC_INIT, b = GE_VEC_INIT;
	int rc = GE_OK;
	for (size_t i = 0; i < n && !rc; i++)
		rc = ge_op_origins_of(g, from[i], &a, &b, err);
	if (!rc)
		rc = ge_op_add_origins(g, to, a.v, a.n, b.v, b.n, err);
	if (!rc && rule)
		ge_prov_note(g, to, rule);
	ge_strvec_free(&a);
	ge_strvec_free(&b);
	return rc;
}

/* ---------------------------------------------------------------- log */

void ge_prov_free(struct ge_prov_log *l)
{
	if (l) {
		free(l->v);
		free(l->view);
		ge_big_free(l->named);
		free(l);
	}
}

void ge_prov_set_mode(ge_graph *g, int mode)
{
	ge_graph_root(g)->prov_mode = mode;
}

int ge_prov_mode(const ge_graph *g)
{
	return ge_graph_root((ge_graph *)g)->prov_mode;
}

/* Appends n ops from id to the log, into the last run when they follow
 * it (same rule, top level, the next ids). */
static void push_run(struct ge_prov_log *l, const char *op, const char *func,
		     const char *rule, ge_opid id, uint32_t n)
{
	prov_run *last = l->n ? &l->v[l->n - 1] : NULL;
	l->notes += n;
	if (last && !op && !last->op && !*func && !*last->func &&
	    last->rule == rule && id != GE_NOOP && last->id != GE_NOOP &&
	    last->id + last->n == id && last->n <= UINT32_MAX - n) {
		last->n += n;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = ge_xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = (prov_run){op, func, rule, id, n};
}

void ge_prov_note(ge_graph *g, ge_opid id, const char *rule)
{
	if (!ge_op_alive(g, id))
		return;
	ge_graph *root = ge_graph_root(g);
	if (root->prov_mode == GE_PROV_OFF)
		return;
	struct ge_prov_log *l = log_of(root);
	/* one rule notes many ops in a row */
	const char *r = l->n && !strcmp(l->v[l->n - 1].rule, rule)
			? l->v[l->n - 1].rule
			: ge_intern(root, rule, strlen(rule));
	if (g == root) {
		push_run(l, NULL, "", r, id, 1);
	} else {
		/* a body may go before the log does */
		const char *fn = ge_func_name(root, ge_graph_func(g));
		push_run(l, ge_arena_strdup(&root->arena, g->ops[id].name),
			 ge_intern(root, fn, strlen(fn)), r, id, 1);
	}
	if (root->prov_mode == GE_PROV_ATTR) {
		/* AttrValue.s */
		size_t rl = strlen(rule);
		uint8_t *v = ge_xmalloc(rl + 11);
		uint8_t *p = v;
		*p++ = GE_TAG_LEN(GE_ATTR_S);
		p = ge_put_uvarint(p, rl);
		memcpy(p, rule, rl);
		ge_op_set_attr_raw(g, id, GE_PROV_RULE_ATTR, v,
				   (size_t)(p + rl - v));
		free(v);
	}
}

const ge_prov_rec *ge_prov_log(const ge_graph *g, size_t *n)
{
	ge_graph *root = ge_graph_root((ge_graph *)g);
	struct ge_prov_log *l = root->prov;
	*n = l ? l->notes : 0;
	if (!l || !l->notes)
		return NULL;
	/* a line per op, named as it is now (a body the recipe removed
	 * keeps the names it had) */
	l->view = ge_xrealloc(l->view, l->notes * sizeof *l->view);
	ge_prov_rec *out = l->view;
	for (size_t i = 0; i < l->n; i++) {
		const prov_run *r = &l->v[i];
		const ge_graph *b = root;
		if (*r->func) {
			ge_funcid f = ge_func_find(root, r->func);
			b = f == GE_NOFUNC ? NULL : ge_func_body(root, f, NULL);
		}
		for (uint32_t k = 0; k < r->n; k++, out++) {
			ge_opid id = r->id == GE_NOOP ? GE_NOOP : r->id + k;
			out->op = b && id < b->n_ops ? b->ops[id].name : r->op;
			out->func = r->func;
			out->rule = r->rule;
			out->id = id;
		}
	}
	return l->view;
}

size_t ge_prov_lines(const ge_graph *g)
{
	const struct ge_prov_log *l = ge_graph_root((ge_graph *)g)->prov;
	return l ? l->notes : 0;
}

ge_prov_count *ge_prov_counts(const ge_graph *g, size_t from, size_t *n)
{
	const struct ge_prov_log *l = ge_graph_root((ge_graph *)g)->prov;
	ge_prov_count *c = NULL;
	size_t k = 0, cap = 0, at = 0;
	for (size_t i = 0; l && i < l->n; i++) {
		const prov_run *r = &l->v[i];
		/* the lines of this run at or after `from` */
		size_t skip = at >= from ? 0 : from - at;
		at += r->n;
		if (skip >= r->n)
			continue;
		size_t j = 0;
		while (j < k && strcmp(c[j].rule, r->rule))
			j++;
		if (j == k) {
			if (k == cap) {
				cap = cap ? cap * 2 : 8;
				c = ge_xrealloc(c, cap * sizeof *c);
			}
			c[k++] = (ge_prov_count){r->rule, 0};
		}
		c[j].n += r->n - skip;
	}
	*n = k;
	return c;
}

void ge_prov_renumber(ge_graph *g, const ge_opid *newid, size_t n)
{
	struct ge_prov_log *l = g->prov;
	if (!l)
		return;
	/* ids change: named_field's fields are made again as needed */
	ge_big_free(l->named);
	l->named = NULL;
	l->nnamed = 0;
	prov_run *old = l->v;
	size_t nold = l->n;
	l->v = NULL, l->n = l->cap = 0, l->notes = 0;
	for (size_t i = 0; i < nold; i++) {
		const prov_run *r = &old[i];
		if (*r->func || r->id == GE_NOOP) {
			push_run(l, r->op, r->func, r->rule, r->id, r->n);
			continue;
		}
		/* a removed op keeps the name it had, under no id */
		for (uint32_t k = 0; k < r->n; k++) {
			ge_opid id = r->id + k;
			if (id < n && newid[id] != GE_NOOP)
				push_run(l, NULL, "", r->rule, newid[id], 1);
			else
				push_run(l, id < g->n_ops ? g->ops[id].name : "",
					 "", r->rule, GE_NOOP, 1);
		}
	}
	free(old);
}
