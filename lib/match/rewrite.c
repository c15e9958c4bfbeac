/* rewrite.c: the rewrite driver, rules applied to a fixed point (match.h). */
#include "match/match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor/provenance.h"
#include "graph/sets.h"

/* ------------------------------------------------------------ rewriting */

void ge_rewrite_replace(ge_rewrite_repl *r, ge_tref from, ge_tref to)
{
	ge_tvec_push(&r->from, from);
	ge_tvec_push(&r->to, to);
}

void ge_rewrite_take_name(ge_rewrite_repl *r, ge_opid new_op, ge_opid old_op)
{
	ge_opvec_push(&r->names, new_op);
	ge_opvec_push(&r->names, old_op);
}

#define RNAME(r) ((r)->name ? (r)->name : "(unnamed)")

enum {
	MK_S = 1,        /* in the match */
	MK_CONST = 2,    /* matched by a const pattern */
	MK_NEW = 4,      /* needed by the replacement (or read by new ops) */
	MK_ALL = 8,      /* needed by anything, outside readers included */
	MK_OUT = 16,     /* read directly by a pre-existing op outside */
};

typedef struct rw {
	ge_graph *g;
	uint8_t *mark;
	size_t mark_cap;
	ge_tmap rmap;    /* from -> pair index, for long replacement lists */
	int use_rmap;
	ge_opvec work, tmp;
	ge_tvec slots;   /* (consumer, slot) pairs to reroute */
} rw;

static void mark_fit(rw *w)
{
	size_t cap = ge_graph_capacity(w->g);
	if (cap <= w->mark_cap)
		return;
	size_t nc = w->mark_cap ? w->mark_cap : 1024;
	while (nc < cap)
		nc *= 2;
	w->mark = ge_xrealloc(w->mark, nc);
	memset(w->mark + w->mark_cap, 0, nc - w->mark_cap);
	w->mark_cap = nc;
}

/* Index of the replacement pair whose `from` is t, or -1. */
static long repl_find(const rw *w, const ge_rewrite_repl *r, ge_tref t)
{
	if (w->use_rmap) {
		size_t v;
		return ge_tmap_get(&w->rmap, t, &v) ? (long)v : -1;
	}
	for (size_t i = 0; i < r->from.n; i++)
		if (ge_tref_eq(r->from.v[i], t))
			return (long)i;
	return -1;
}

/* Marks flag on the match's producers of op, following the edges as they
 * will be after the reroute, and queues the newly marked ones. */
static void propagate(rw *w, const ge_rewrite_repl *r, ge_opid cap_before,
		      int flag)
{
	ge_graph *g = w->g;
	while (w->work.n) {
		ge_opid s = w->work.v[--w->work.n];
		size_t ni = ge_op_num_inputs(g, s);
		size_t nc = ge_op_num_control_inputs(g, s);
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid q;
			if (i < ni) {
				ge_tref t = ge_op_input(g, s, i);
				long k = s < cap_before ? repl_find(w, r, t) : -1;
				q = k >= 0 ? r->to.v[k].op : t.op;
			} else {
				q = ge_op_control_input(g, s, i - ni);
			}
			if (q == GE_NOOP || !(w->mark[q] & MK_S) ||
			    (w->mark[q] & flag))
				continue;
			w->mark[q] |= flag;
			ge_opvec_push(&w->work, q);
		}
	}
}

static void add_s(rw *w, const ge_match *m)
{
	for (size_t i = 0; i < m->n_ops; i++)
		w->mark[m->ops[i]] = MK_S;
	for (size_t i = 0; i < m->n_consts; i++)
		w->mark[m->consts[i]] = MK_S | MK_CONST;
}

static void clear_s(rw *w, const ge_match *m)
{
	for (size_t i = 0; i < m->n_ops; i++)
		w->mark[m->ops[i]] = 0;
	for (size_t i = 0; i < m->n_consts; i++)
		w->mark[m->consts[i]] = 0;
}

/* The consumer outside the match that keeps op s alive, for messages. */
static ge_opid outside_reader(rw *w, const ge_rewrite_repl *r, ge_opid s,
			      ge_opid cap_before)
{
	ge_graph *g = w->g;
	size_t n;
	const ge_use *u = ge_op_uses(g, s, &n);
	for (size_t i = 0; i < n; i++) {
		ge_opid c = u[i].op;
		if ((w->mark[c] & MK_S) || c >= cap_before)
			continue;
		if (repl_find(w, r, ge_op_input(g, c, u[i].slot)) < 0)
			return c;
	}
	const ge_opid *co = ge_op_control_outputs(g, s, &n);
	for (size_t i = 0; i < n; i++)
		if (!(w->mark[co[i]] & MK_S) && co[i] < cap_before)
			return co[i];
	return GE_NOOP;
}

static void remove_new_ops(ge_graph *g, ge_opid cap_before)
{
	for (size_t id = ge_graph_capacity(g); id-- > cap_before;)
		if (ge_op_alive(g, (ge_opid)id))
			ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
}

/* Each replaced tensor is an output of the match, replaced once, by a
 * tensor of the graph. */
static int check_repl(rw *w, const ge_rule *rule, const char *root,
		      const ge_rewrite_repl *r, ge_error *err)
{
	ge_graph *g = w->g;
	int rc = GE_OK;
	for (size_t i = 0; i < r->from.n; i++) {
		ge_tref f = r->from.v[i], t = r->to.v[i];
		if (f.op == GE_NOOP || f.op >= w->mark_cap ||
		    !(w->mark[f.op] & MK_S) || f.index < 0) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': replacement %zu: the "
				    "tensor replaced is not an output of the "
				    "match",
				    RNAME(rule), root, i + 1);
			return rc;
		}
		if (!ge_op_alive(g, t.op) || t.index < 0) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': replacement %zu for "
				    "'%s:%d' is not a tensor of the graph",
				    RNAME(rule), root, i + 1,
				    ge_op_name(g, f.op), f.index);
			return rc;
		}
		if (repl_find(w, r, f) != (long)i) {
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': '%s:%d' is replaced "
				    "twice",
				    RNAME(rule), root, ge_op_name(g, f.op),
				    f.index);
			return rc;
		}
	}
	return rc;
}

static void mark_needs(rw *w, const ge_match *m, const ge_rewrite_repl *r,
		       ge_opid cap_before)
{
	ge_graph *g = w->g;
	/* Who will still read each op of the match once the consumers of
	 * the replaced tensors read the replacements?  What the replacement
	 * keeps on purpose (MK_NEW): ops read by the action's new ops, the
	 * replacements themselves, and the root when readers of its other
	 * outputs remain (its outputs are the match's outputs: those not
	 * replaced stay).  Other outside readers (MK_OUT) of an op that
	 * would otherwise go mean the rewrite forgot an output. */
	const ge_opid *lists[2] = {m->ops, m->consts};
	size_t lens[2] = {m->n_ops, m->n_consts};
	w->work.n = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++) {
			ge_opid s = lists[l][i];
			size_t n;
			const ge_use *u = ge_op_uses(g, s, &n);
			int news = 0, outside = 0;
			for (size_t k = 0; k < n; k++) {
				ge_opid c = u[k].op;
				if (w->mark[c] & MK_S)
					continue;
				if (c >= cap_before)
					news = 1;
				else if (repl_find(w, r, ge_op_input(
							      g, c, u[k].slot)) < 0)
					outside = 1;
			}
			const ge_opid *co = ge_op_control_outputs(g, s, &n);
			for (size_t k = 0; k < n; k++) {
				if (w->mark[co[k]] & MK_S)
					continue;
				if (co[k] >= cap_before)
					news = 1;
				else
					outside = 1;
			}
			if (outside && s == m->root)
				news = 1;
			else if (outside)
				w->mark[s] |= MK_OUT;
			if (news && !(w->mark[s] & MK_NEW)) {
				w->mark[s] |= MK_NEW;
				ge_opvec_push(&w->work, s);
			}
		}
	for (size_t i = 0; i < r->to.n; i++) {
		ge_opid q = r->to.v[i].op;
		if (q < w->mark_cap && (w->mark[q] & MK_S) &&
		    !(w->mark[q] & MK_NEW)) {
			w->mark[q] |= MK_NEW;
			ge_opvec_push(&w->work, q);
		}
	}
	propagate(w, r, cap_before, MK_NEW);
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++) {
			ge_opid s = lists[l][i];
			if (w->mark[s] & (MK_NEW | MK_OUT)) {
				w->mark[s] |= MK_ALL;
				ge_opvec_push(&w->work, s);
			}
		}
	propagate(w, r, cap_before, MK_ALL);
}

/* Unless the rule allows it, no op the replacement makes useless may
 * still be needed outside the match; on failure the action's new ops go. */
static int check_orphans(rw *w, const ge_rule *rule, const char *root,
			 const ge_match *m, const ge_rewrite_repl *r,
			 ge_opid cap_before, ge_error *err)
{
	ge_graph *g = w->g;
	int rc = GE_OK;
	/* An op the replacement makes useless but an outsider still
	 * needs: name the outsider when there is a direct one. */
	ge_opid bad = GE_NOOP;
	for (size_t i = 0; i < m->n_ops; i++) {
		ge_opid s = m->ops[i];
		if ((w->mark[s] & (MK_NEW | MK_ALL)) != MK_ALL)
			continue;
		if (bad == GE_NOOP || ((w->mark[s] & MK_OUT) &&
				       !(w->mark[bad] & MK_OUT)))
			bad = s;
	}
	if (bad != GE_NOOP) {
		ge_opid c = outside_reader(w, r, bad, cap_before);
		if (c != GE_NOOP)
			rc = ge_err(err, GE_EGRAPH,
				    "rule '%s' at '%s': the replacement "
				    "would remove '%s' (%s), but '%s' "
				    "outside the match still reads it",
				    RNAME(rule), root, ge_op_name(g, bad),
				    ge_op_type(g, bad), ge_op_name(g, c));
		else
			rc = ge_err(err, GE_EGRAPH,
				    "rule '%s' at '%s': the replacement "
				    "would remove '%s' (%s), but ops "
				    "outside the match still need it",
				    RNAME(rule), root, ge_op_name(g, bad),
				    ge_op_type(g, bad));
		remove_new_ops(g, cap_before);
	}
	return rc;
}

static int reroute_readers(rw *w, const ge_rule *rule, const char *root,
			   const ge_rewrite_repl *r, ge_opid cap_before,
			   ge_error *err)
{
	ge_graph *g = w->g;
	int rc = GE_OK;
	/* Reroute the consumers that existed before the action. */
	for (size_t i = 0; i < r->from.n; i++) {
		ge_tref f = r->from.v[i], t = r->to.v[i];
		if (ge_tref_eq(f, t))
			continue;
		size_t n;
		const ge_use *u = ge_op_uses(g, f.op, &n);
		w->slots.n = 0;
		for (size_t k = 0; k < n; k++) {
			if (u[k].op >= cap_before)
				continue;
			if (ge_op_input(g, u[k].op, u[k].slot).index != f.index)
				continue;
			ge_tvec_push(&w->slots,
				     (ge_tref){u[k].op, (int32_t)u[k].slot});
		}
		/* one batched edit: N single edits would each search the
		 * producer's use list */
		ge_input_edit *ed =
			ge_xmalloc((w->slots.n + 1) * sizeof *ed);
		for (size_t k = 0; k < w->slots.n; k++)
			ed[k] = (ge_input_edit){w->slots.v[k].op,
						(uint32_t)w->slots.v[k].index, t};
		rc = ge_graph_set_inputs(g, ed, w->slots.n, err);
		free(ed);
		if (rc) {
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      root);
			return rc;
		}
	}
	return rc;
}

static int remove_unneeded(rw *w, const ge_rule *rule, const char *root,
			   const ge_match *m, ge_error *err)
{
	ge_graph *g = w->g;
	int rc = GE_OK;
	const ge_opid *lists[2] = {m->ops, m->consts};
	size_t lens[2] = {m->n_ops, m->n_consts};
	/* Remove what nothing needs, consumers before producers. */
	w->work.n = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++)
			if (!(w->mark[lists[l][i]] & MK_ALL))
				ge_opvec_push(&w->work, lists[l][i]);
	while (w->work.n) {
		ge_opid s = w->work.v[--w->work.n];
		if (!ge_op_alive(g, s))
			continue;
		size_t nu, nco;
		ge_op_uses(g, s, &nu);
		ge_op_control_outputs(g, s, &nco);
		if (nu || nco)
			continue;
		size_t ni = ge_op_num_inputs(g, s);
		size_t nc = ge_op_num_control_inputs(g, s);
		w->tmp.n = 0;
		for (size_t i = 0; i < ni + nc; i++) {
			ge_opid q = i < ni ? ge_op_input(g, s, i).op
					   : ge_op_control_input(g, s, i - ni);
			if (q != GE_NOOP && (w->mark[q] & MK_S) &&
			    !(w->mark[q] & MK_ALL))
				ge_opvec_push(&w->tmp, q);
		}
		rc = ge_graph_remove_op(g, s, 0, err);
		if (rc) {
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      root);
			return rc;
		}
		for (size_t i = 0; i < w->tmp.n; i++)
			ge_opvec_push(&w->work, w->tmp.v[i]);
	}
	return rc;
}

/* Each name passes from an op of the match that the replacement removes
 * to a new op; checked before anything changes, the new ops go on
 * failure. */
static int check_names(rw *w, const ge_rule *rule, const char *root,
		       const ge_rewrite_repl *r, ge_opid cap_before,
		       ge_error *err)
{
	ge_graph *g = w->g;
	for (size_t i = 0; i + 1 < r->names.n; i += 2) {
		ge_opid nu = r->names.v[i], old = r->names.v[i + 1];
		int rc = GE_OK;
		if (nu < cap_before || !ge_op_alive(g, nu) ||
		    old >= w->mark_cap || !(w->mark[old] & MK_S))
			rc = ge_err(err, GE_EINVAL,
				    "rule '%s' at '%s': a name can only pass "
				    "from an op of the match to a new op",
				    RNAME(rule), root);
		else if (w->mark[old] & MK_ALL)
			rc = ge_err(err, GE_EGRAPH,
				    "rule '%s' at '%s': '%s' cannot take the "
				    "name '%s': that op stays in the graph",
				    RNAME(rule), root, ge_op_name(g, nu),
				    ge_op_name(g, old));
		if (rc) {
			remove_new_ops(g, cap_before);
			return rc;
		}
	}
	return GE_OK;
}

static int take_names(rw *w, const ge_rule *rule, const char *root,
		      const ge_rewrite_repl *r, ge_error *err)
{
	ge_graph *g = w->g;
	for (size_t i = 0; i + 1 < r->names.n; i += 2) {
		ge_opid nu = r->names.v[i], old = r->names.v[i + 1];
		int rc = ge_op_set_name(g, nu, ge_op_name(g, old), err);
		if (rc) {
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      root);
			return rc;
		}
	}
	return GE_OK;
}

/* Applies replacement r of a match: check it, mark what stays needed,
 * refuse to orphan what outsiders need, reroute the readers, remove the
 * rest (as lua.c's pmain, a short driver over named steps). */
static int apply_repl(rw *w, const ge_rule *rule, const ge_match *m,
		      const ge_rewrite_repl *r, ge_opid cap_before, int allow,
		      ge_error *err)
{
	const char *root = ge_op_name(w->g, m->root);
	mark_fit(w);
	add_s(w, m);
	/* a few pairs are scanned; many are hashed, to stay linear */
	w->use_rmap = r->from.n > 8;
	if (w->use_rmap) {
		ge_tmap_init(&w->rmap, r->from.n);
		for (size_t i = 0; i < r->from.n; i++)
			ge_tmap_put(&w->rmap, r->from.v[i], i);
	}
	int rc = check_repl(w, rule, root, r, err);
	if (!rc) {
		mark_needs(w, m, r, cap_before);
		if (!allow)
			rc = check_orphans(w, rule, root, m, r, cap_before, err);
		if (!rc)
			rc = check_names(w, rule, root, r, cap_before, err);
	}
	if (!rc)
		rc = reroute_readers(w, rule, root, r, cap_before, err);
	if (!rc)
		rc = remove_unneeded(w, rule, root, m, err);
	if (!rc)
		rc = take_names(w, rule, root, r, err);
	clear_s(w, m);
	if (w->use_rmap)
		ge_tmap_free(&w->rmap);
	w->use_rmap = 0;
	return rc;
}

/* Runs one rule over the graph once; *count gets its rewrites. */
static int run_rule(rw *w, const ge_rule *rule, ge_opindex *ix,
		    const ge_rewrite_opts *o, size_t *count, ge_error *err)
{
	ge_graph *g = w->g;
	ge_match_iter *it;
	ge_match m = GE_MATCH_INIT;
	ge_rewrite_repl r = GE_REWRITE_REPL_INIT;
	int rc = ge_match_iter_new(rule->pattern, g, ix, GE_MATCH_NONOVERLAP,
				   &it, err);
	*count = 0;
	if (rc) {
		ge_err_prefix(err, "rule '%s'", RNAME(rule));
		return rc;
	}
	for (;;) {
		rc = ge_match_iter_next(it, &m, err);
		if (rc < 0)
			ge_err_prefix(err, "rule '%s'", RNAME(rule));
		if (rc <= 0)
			break;
		uint64_t v0 = ge_graph_version(g);
		ge_opid cap0 = (ge_opid)ge_graph_capacity(g);
		r.from.n = r.to.n = r.names.n = 0;
		if (err) {
			err->code = GE_OK;
			err->msg[0] = 0;
		}
		int a = rule->action(g, &m, &r, rule->ud, err);
		if (a < 0) {
			if (!err || !err->msg[0])
				ge_err(err, GE_EINVAL, "the action failed");
			if (err && err->code == GE_OK)
				err->code = GE_EINVAL;
			/* names outlive removed ops */
			ge_err_prefix(err, "rule '%s' at '%s'", RNAME(rule),
				      ge_op_name(g, m.root));
			rc = err ? err->code : GE_EINVAL;
			break;
		}
		/* each op the action made lists the ops of the match */
		for (size_t id = cap0; id < ge_graph_capacity(g); id++)
			if (ge_op_alive(g, (ge_opid)id))
				ge_op_made_from(g, (ge_opid)id, m.ops, m.n_ops,
						rule->name ? rule->name
							   : "rewrite", NULL);
		if (r.from.n || r.names.n) {
			rc = apply_repl(w, rule, &m, &r, cap0,
					o->allow_remove_consumed, err);
			if (rc)
				break;
		}
		if (a > 0 || r.from.n || ge_graph_version(g) != v0)
			(*count)++;
		else
			ge_match_iter_release(it, &m);
	}
	if (rc > 0)
		rc = GE_OK;
	ge_tvec_free(&r.from);
	ge_tvec_free(&r.to);
	ge_opvec_free(&r.names);
	ge_match_free(&m);
	ge_match_iter_free(it);
	return rc;
}

/* The lines of a validation report, as hashes, sorted. */
typedef struct lineset {
	uint64_t *h;
	size_t n;
} lineset;

static uint64_t line_hash(const char *s, size_t n)
{
	return ((uint64_t)ge_hash(s, n) << 32) | (uint64_t)(n & 0xffffffffu);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void lines_make(lineset *ls, const ge_buf *b)
{
	ls->h = NULL;
	ls->n = 0;
	size_t cap = 0;
	const char *s = (const char *)b->data, *end = s + b->len;
	while (s && s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
		if (ls->n == cap) {
			cap = cap ? cap * 2 : 16;
			ls->h = ge_xrealloc(ls->h, cap * sizeof *ls->h);
		}
		ls->h[ls->n++] = line_hash(s, len);
		s += len + 1;
	}
	if (ls->n)
		qsort(ls->h, ls->n, sizeof *ls->h, cmp_u64);
}

static int lines_has(const lineset *ls, uint64_t h)
{
	return ls->n && bsearch(&h, ls->h, ls->n, sizeof h, cmp_u64) != NULL;
}

/* Fails with the validation problems that were not in the baseline. */
static int check_pass(ge_graph *g, const lineset *base, int pass,
		      const ge_rule *rules, const size_t *pc, size_t n,
		      ge_error *err)
{
	ge_buf rep = GE_BUF_INIT, msg = GE_BUF_INIT;
	size_t bad = 0;
	if (!ge_graph_validate(g, &rep)) {
		ge_buf_free(&rep);
		return GE_OK;
	}
	const char *s = (const char *)rep.data, *end = s + rep.len;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
		if (!lines_has(base, line_hash(s, len))) {
			if (bad++ < 3) {
				ge_buf_adds(&msg, bad > 1 ? "; " : "");
				ge_buf_add(&msg, s, len);
			}
		}
		s += len + 1;
	}
	int rc = GE_OK;
	if (bad) {
		ge_buf who = GE_BUF_INIT;
		for (size_t i = 0; i < n; i++)
			if (pc[i])
				ge_buf_printf(&who, "%s'%s'", who.len ? ", " : "",
					      RNAME(&rules[i]));
		rc = ge_err(err, GE_EGRAPH,
			    "%s: pass %d (rules %s) left the graph invalid: "
			    "%s%s",
			    ge_graph_name(g)[0] ? ge_graph_name(g) : "graph",
			    pass, (char *)who.data, (char *)msg.data,
			    bad > 3 ? " (and more)" : "");
		ge_buf_free(&who);
	}
	ge_buf_free(&rep);
	ge_buf_free(&msg);
	return rc;
}

int ge_rewrite(ge_graph *g, const ge_rule *rules, size_t n,
	       const ge_rewrite_opts *o, size_t *counts, size_t *passes,
	       ge_error *err)
{
	static const ge_rewrite_opts defaults = GE_REWRITE_OPTS_INIT;
	if (!o)
		o = &defaults;
	int max_it = o->max_iterations > 0 ? o->max_iterations : 100;
	int rc = GE_OK, pass;
	if (counts)
		memset(counts, 0, n * sizeof *counts);
	if (passes)
		*passes = 0;
	for (size_t i = 0; i < n; i++)
		if (!rules[i].pattern || !rules[i].action)
			return ge_err(err, GE_EINVAL,
				      "rule %zu ('%s') needs a pattern and an "
				      "action",
				      i + 1, rules[i].name ? rules[i].name : "");
	lineset base = {NULL, 0};
	if (!o->no_validate) {
		ge_buf rep = GE_BUF_INIT;
		if (ge_graph_validate(g, &rep))
			lines_make(&base, &rep);
		ge_buf_free(&rep);
	}
	rw w;
	memset(&w, 0, sizeof w);
	w.g = g;
	ge_opindex *ix = ge_opindex_new();
	size_t *pc = ge_xcalloc(n + 1, sizeof *pc);
	for (pass = 1;; pass++) {
		size_t total = 0;
		for (size_t i = 0; i < n; i++) {
			rc = run_rule(&w, &rules[i], ix, o, &pc[i], err);
			if (counts)
				counts[i] += pc[i];
			if (rc)
				goto out;
			total += pc[i];
		}
		if (passes)
			*passes = (size_t)pass;
		if (total && !o->no_validate &&
		    (rc = check_pass(g, &base, pass, rules, pc, n, err)))
			goto out;
		if (o->mode != GE_REWRITE_FIXPOINT || total == 0)
			break;
		if (pass >= max_it) {
			ge_buf who = GE_BUF_INIT;
			for (size_t i = 0; i < n; i++)
				if (pc[i])
					ge_buf_printf(&who, "%s'%s' (%zu)",
						      who.len ? ", " : "",
						      RNAME(&rules[i]), pc[i]);
			rc = ge_err(err, GE_EINVAL,
				    "no fixpoint after %d passes: rule%s %s "
				    "still rewrote in the last pass",
				    max_it, strchr((char *)who.data, ',') ? "s"
									   : "",
				    (char *)who.data);
			ge_buf_free(&who);
			goto out;
		}
	}
out:
	free(pc);
	free(base.h);
	free(w.mark);
	ge_opvec_free(&w.work);
	ge_opvec_free(&w.tmp);
	ge_tvec_free(&w.slots);
	ge_opindex_free(ix);
	return rc;
}
