/*
 * insert.c: ge_insert_after, a template of ops inserted after many
 * tensors in one pass (see insert.h for the contract).
 *
 * Why it works on the representation: a site's ops are made with what a
 * loaded op has, not with the edit primitives.  Their input arrays and
 * the use lists that only the template fills are carved exactly from the
 * graph's arena (a later growth moves an array to the heap, as it does a
 * loaded op's pooled arrays); their attrs are NodeDef attr-entry bytes,
 * as a loaded op's are, encoded once per template op and shared by every
 * op made from it; names are made unique and indexed with one hash each,
 * the next site's table slots fetched ahead.  A site then costs no
 * allocation of its own beyond the arena, and the tables are sized once
 * for the whole batch.
 */
#include "editor/insert.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/frames.h"
#include "graph/graph_impl.h"
#include "analyses/shapes.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* A template op ready for the graph.  Its attrs are kept as the bytes of
 * a NodeDef's attr entries (field 5), which is what a loaded op holds:
 * the new op's raw bytes.  Without per-site attrs every op made from it
 * shares one copy in the arena; with them, each op gets the entries with
 * its own values spliced in. */
typedef struct prep_op {
	const char *type;     /* interned */
	const char *device;   /* interned, or NULL: the site op's */
	const uint8_t *blob;  /* shared attr entries (no per-site attr) */
	size_t blob_len;
	/* with per-site attrs: the entries before the first of them, the
	 * same at every site, and where the site's own start */
	const uint8_t *pre;
	size_t pre_len, first_site;
	uint32_t n_uses;      /* data inputs of later template ops reading it */
} prep_op;

static int ref_desc_err(ge_error *err, const char *type, size_t j,
			const char *what)
{
	return ge_err(err, GE_EINVAL, "template op %zu (%s): %s", j + 1,
		      type && *type ? type : "?", what);
}

/* Checks a template against the graph: refs to earlier ops, tensors that
 * exist, no control input or attr given twice. */
static int check_template(const ge_graph *g, const ge_ins_template *t,
			  ge_error *err)
{
	if (!t->n_ops)
		return ge_err(err, GE_EINVAL, "a template needs at least one op");
	if (t->out_op >= t->n_ops || t->out_index < 0)
		return ge_err(err, GE_EINVAL,
			      "the template's output (op %u, output %d) is not "
			      "one of its ops' outputs",
			      t->out_op + 1, t->out_index);
	for (size_t j = 0; j < t->n_ops; j++) {
		const ge_ins_op *o = &t->ops[j];
		if (!o->type || !*o->type)
			return ref_desc_err(err, o->type, j, "needs a type");
		if (!o->name || !*o->name)
			return ref_desc_err(err, o->type, j, "needs a name");
		for (size_t i = 0; i < o->n_in + o->n_ctrl; i++) {
			int ctl = i >= o->n_in;
			const ge_ins_ref *r = ctl ? &o->ctrl[i - o->n_in]
						  : &o->in[i];
			if (r->kind == GE_INS_OP &&
			    (r->op >= j || (!ctl && r->index < 0)))
				return ref_desc_err(err, o->type, j,
						    "an input must name an "
						    "output of an earlier op "
						    "of the template");
			if (r->kind == GE_INS_TENSOR) {
				int rc = ctl ? (ge_op_alive(g, r->t.op)
							? GE_OK
							: GE_EINVAL)
					     : ge_graph_check_tensor(g, r->t,
								     err);
				if (rc)
					return ctl ? ref_desc_err(err, o->type,
								  j,
								  "a control "
								  "input is not "
								  "a live op")
						   : rc;
			}
			if (r->kind != GE_INS_SITE && r->kind != GE_INS_OP &&
			    r->kind != GE_INS_TENSOR)
				return ref_desc_err(err, o->type, j,
						    "bad input kind");
			if (!ctl)
				continue;
			int dup = r->kind == GE_INS_SITE && o->loop_anchor;
			for (size_t k = 0; k < i - o->n_in && !dup; k++) {
				const ge_ins_ref *q = &o->ctrl[k];
				dup = q->kind == r->kind &&
				      (r->kind == GE_INS_SITE ||
				       (r->kind == GE_INS_OP && q->op == r->op) ||
				       (r->kind == GE_INS_TENSOR &&
					q->t.op == r->t.op));
			}
			if (dup)
				return ref_desc_err(err, o->type, j,
						    "a control input is given "
						    "twice");
		}
		for (size_t a = 0; a < o->n_attrs; a++) {
			const ge_ins_attr *at = &o->attrs[a];
			if (!at->name || !*at->name)
				return ref_desc_err(err, o->type, j,
						    "an attr needs a name");
			if (!at->site_ints && !at->site_bytes && !at->bytes &&
			    at->len)
				return ref_desc_err(err, o->type, j,
						    "an attr has no bytes");
			for (size_t b = 0; b < a; b++)
				if (!strcmp(o->attrs[b].name, at->name))
					return ge_err(err, GE_EINVAL,
						      "template op %zu (%s): "
						      "attr '%s' given twice",
						      j + 1, o->type,
						      at->name);
		}
	}
	return GE_OK;
}

static int cmp_tref(const void *a, const void *b)
{
	const ge_tref *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Whether output 0 of live op id exists, known from its OpDef alone:
 * ge_op_num_outputs counts 1 for a first output arg without number_attr
 * or type_list_attr, and its fallbacks for what it cannot count give at
 * least 1.  0: ask ge_graph_check_tensor. */
static int has_output0(const ge_graph *g, ge_opid id,
		       const Tensorflow__OpDef *d)
{
	const ge_op *o = &g->ops[id];
	if (o->nout >= 0)
		return o->nout >= 1;
	if (!d || !d->n_output_arg)
		return 0;
	const Tensorflow__OpDef__ArgDef *a = d->output_arg[0];
	return !(a->number_attr && *a->number_attr) &&
	       !(a->type_list_attr && *a->type_list_attr);
}

static int check_sites(const ge_graph *g, const ge_tref *sites, size_t n,
		       const uint32_t *site_tmpl, size_t n_tmpls,
		       ge_error *err)
{
	ge_buf nb = GE_BUF_INIT;
	/* the OpDef of the last few op types seen */
	enum { WAYS = 8 };
	const char *type[WAYS] = {0};
	const Tensorflow__OpDef *def[WAYS] = {0};
	for (size_t k = 0; k < n; k++) {
		if (site_tmpl && site_tmpl[k] >= n_tmpls)
			return ge_err(err, GE_EINVAL,
				      "site %zu has no template", k + 1);
		if (sites[k].index == GE_CONTROL)
			return ge_err(err, GE_EINVAL,
				      "site %zu is an op, not a tensor", k + 1);
		ge_opid id = sites[k].op;
		if (sites[k].index == 0 && id < g->n_ops &&
		    !(g->ops[id].flags & OPF_DEAD)) {
			const char *ty = g->ops[id].type;
			size_t w = ((uintptr_t)ty >> 4) % WAYS;
			if (type[w] != ty) {
				type[w] = ty;
				def[w] = ge_graph_opdef(g, ty);
			}
			if (has_output0(g, id, def[w]))
				continue;
		}
		if (ge_graph_check_tensor(g, sites[k], err))
			return GE_EINVAL;
	}
	/* sites in increasing order (as g:ops(types) gives them) are
	 * distinct: no sort */
	size_t m = 1;
	while (m < n && cmp_tref(&sites[m - 1], &sites[m]) < 0)
		m++;
	if (m >= n)
		return GE_OK;
	ge_tref *ord = ge_xmalloc((n + 1) * sizeof *ord);
	memcpy(ord, sites, n * sizeof *ord);
	qsort(ord, n, sizeof *ord, cmp_tref);
	int rc = GE_OK;
	for (size_t k = 1; k < n && !rc; k++)
		if (ge_tref_eq(ord[k], ord[k - 1]))
			rc = ge_err(err, GE_EINVAL, "site '%s' is given twice",
				    ge_tensor_fmt(g, ord[k], &nb));
	free(ord);
	ge_buf_free(&nb);
	return rc;
}

/* Appends one attr map entry (NodeDef field 5) to b. */
static void put_entry(ge_buf *b, const char *key, const uint8_t *v,
		      size_t len)
{
	ge_wire_buf_entry(b, GE_NODEDEF_ATTR, key, strlen(key), v, len);
}

/* The attr entries from..n_attrs-1 of template op `to` at site k,
 * appended to b. */
static void put_entries(ge_buf *b, const ge_ins_op *to, size_t from, size_t k)
{
	for (size_t a = from; a < to->n_attrs; a++) {
		const ge_ins_attr *at = &to->attrs[a];
		if (at->site_ints) {
			/* AttrValue{i: v}: field 3, varint */
			uint8_t v[11];
			v[0] = GE_TAG(GE_ATTR_I, GE_WT_VARINT);
			uint8_t *e = ge_put_uvarint(v + 1,
						(uint64_t)at->site_ints[k]);
			put_entry(b, at->name, v, (size_t)(e - v));
		} else if (at->site_bytes) {
			put_entry(b, at->name, at->site_bytes[k],
				  at->site_lens[k]);
		} else {
			put_entry(b, at->name, at->bytes, at->len);
		}
	}
}

/* The first per-site attr of a template op, or n_attrs. */
static size_t first_per_site(const ge_ins_op *to)
{
	size_t a = 0;
	while (a < to->n_attrs && !to->attrs[a].site_ints &&
	       !to->attrs[a].site_bytes)
		a++;
	return a;
}

/* Interns a template's strings, encodes its attrs into g. */
static prep_op *prepare(ge_graph *g, const ge_ins_template *t)
{
	prep_op *p = ge_xcalloc(t->n_ops, sizeof *p);
	ge_buf b = GE_BUF_INIT;
	for (size_t j = 0; j < t->n_ops; j++) {
		const ge_ins_op *o = &t->ops[j];
		p[j].type = ge_intern(g, o->type, strlen(o->type));
		p[j].device = o->device ? ge_intern(g, o->device,
						    strlen(o->device))
					: NULL;
		size_t fs = first_per_site(o);
		if (o->n_attrs && fs) {
			/* the entries before any per-site one (k unused) */
			b.len = 0;
			for (size_t a = 0; a < fs; a++) {
				const ge_ins_attr *at = &o->attrs[a];
				put_entry(&b, at->name, at->bytes, at->len);
			}
			uint8_t *c = ge_arena_alloc(&g->arena, b.len);
			memcpy(c, b.data, b.len);
			if (fs == o->n_attrs) {
				p[j].blob = c;
				p[j].blob_len = b.len;
			} else {
				p[j].pre = c;
				p[j].pre_len = b.len;
			}
		}
		p[j].first_site = fs;
		for (size_t i = 0; i < o->n_in; i++)
			if (o->in[i].kind == GE_INS_OP)
				p[o->in[i].op].n_uses++;
	}
	ge_buf_free(&b);
	return p;
}

/* Appends to an edge array (a new consumer has the highest id, so it
 * sorts last). */
static void use_append(ge_graph *g, ge_opid producer, ge_use u)
{
	ge_op *p = &g->ops[producer];
	p->uses = ge_edge_make_room(p->uses, p->n_uses, sizeof *p->uses,
				    &p->flags, OPF_USES_OWNED);
	p->uses[p->n_uses++] = u;
}

static void cout_append(ge_graph *g, ge_opid producer, ge_opid c)
{
	ge_op *p = &g->ops[producer];
	p->couts = ge_edge_make_room(p->couts, p->n_couts, sizeof *p->couts,
				     &p->flags, OPF_COUTS_OWNED);
	p->couts[p->n_couts++] = c;
}

/* One site being made: its tensor, its position k, the ops made so far
 * (ids), the readers that move to its output (rd, nr). */
typedef struct site_ctx {
	ge_tref site;
	size_t k;
	int anchor;             /* in a loop: anchors wait on the site */
	ge_opid *ids;
	const ge_input_edit *rd;
	size_t nr;
	ge_buf *scratch;
	uint64_t *room;         /* the edge arrays of the site's ops, carved
				   in turn from one piece of the arena */
} site_ctx;

/* The 8-byte words of the edge arrays (inputs, uses) of a site's ops. */
static size_t site_words(const ge_ins_template *t, const prep_op *p,
			 int anchor, size_t nr)
{
	size_t w = nr;
	for (size_t j = 0; j < t->n_ops; j++)
		w += t->ops[j].n_in + t->ops[j].n_ctrl +
		     (anchor && t->ops[j].loop_anchor) + p[j].n_uses;
	return w;
}

/* The inputs of template t that read the site's op (the site, or a
 * fixed tensor of that op). */
static size_t site_reads(const ge_ins_template *t, ge_opid site_op)
{
	size_t n = 0;
	for (size_t j = 0; j < t->n_ops; j++)
		for (size_t i = 0; i < t->ops[j].n_in; i++) {
			const ge_ins_ref *r = &t->ops[j].in[i];
			n += r->kind == GE_INS_SITE ||
			     (r->kind == GE_INS_TENSOR && r->t.op == site_op);
		}
	return n;
}

/* The site op's uses without the readers that move to the new output
 * (the ops older than the batch, below n_old, that read the site: those
 * collect_readers found), with room for the `need` uses the site's ops
 * add: they are written there directly (make_op).  The array is the
 * arena's; like a loaded op's, it counts as full (ge_edge_make_room
 * moves it to the heap when it grows). */
static void site_room(ge_graph *g, ge_tref site, size_t n_old, size_t need)
{
	ge_op *p = &g->ops[site.op];
	ge_use *a = ge_arena_alloc(&g->arena, (p->n_uses + need) * sizeof *a);
	uint32_t w = 0;
	for (uint32_t i = 0; i < p->n_uses; i++) {
		ge_use u = p->uses[i];
		const ge_op *c = &g->ops[u.op];
		if (u.op < n_old && u.slot < c->n_in &&
		    ge_tref_eq(c->in[u.slot], site))
			continue;
		a[w++] = u;
	}
	if (p->flags & OPF_USES_OWNED) {
		free(p->uses);
		p->flags &= ~(uint32_t)OPF_USES_OWNED;
	}
	p->uses = a;
	p->n_uses = w;
}

/* Makes template op j (to, prepared as p) at a site.  The template's
 * output op gets the site's readers as its first uses: they are older
 * ops than the template's, so the list stays sorted. */
static ge_opid make_op(ge_graph *g, const ge_ins_op *to, const prep_op *p,
		       int is_out, site_ctx *sc, const char *name,
		       size_t name_len, uint32_t hash)
{
	_Static_assert(sizeof(ge_tref) == 8 && sizeof(ge_use) == 8,
		       "edges are carved from 8-byte words");
	ge_tref site = sc->site;
	const ge_opid *ids = sc->ids;
	int anchor = to->loop_anchor && sc->anchor;
	const char *dev = p->device ? p->device : g->ops[site.op].device;
	ge_opid id = ge_add_op_unique(g, name, name_len, hash, 1, p->type, dev);
	ge_op *o = &g->ops[id];
	size_t room = to->n_in + to->n_ctrl + (anchor ? 1 : 0);
	if (room) {
		o->in = (ge_tref *)sc->room;
		sc->room += room;
	}
	size_t nr = is_out ? sc->nr : 0;
	if (p->n_uses + nr) {
		o->uses = (ge_use *)sc->room;
		sc->room += p->n_uses + nr;
	}
	for (size_t i = 0; i < nr; i++)
		o->uses[i] = (ge_use){sc->rd[i].op, sc->rd[i].slot};
	o->n_uses = (uint32_t)nr;
	for (uint32_t s = 0; s < to->n_in; s++) {
		const ge_ins_ref *r = &to->in[s];
		ge_tref t = r->kind == GE_INS_SITE ? site
			    : r->kind == GE_INS_OP
				    ? (ge_tref){ids[r->op], r->index}
				    : r->t;
		o->in[s] = t;
		ge_use u = {id, s};
		if (r->kind == GE_INS_OP || t.op == site.op) {
			/* room made by prepare or site_room */
			ge_op *q = &g->ops[t.op];
			q->uses[q->n_uses++] = u;
		} else {
			use_append(g, t.op, u);
		}
	}
	o->n_in = (uint32_t)to->n_in;
	for (size_t i = 0; i <= to->n_ctrl; i++) {
		ge_opid c;
		if (i == to->n_ctrl) {
			if (!anchor)
				break;
			c = site.op;
		} else {
			const ge_ins_ref *r = &to->ctrl[i];
			c = r->kind == GE_INS_SITE ? site.op
			    : r->kind == GE_INS_OP ? ids[r->op]
						   : r->t.op;
		}
		int dup = 0;
		for (uint32_t q = 0; q < o->n_ctrl && !dup; q++)
			dup = o->in[o->n_in + q].op == c;
		if (dup)
			continue;
		o->in[o->n_in + o->n_ctrl++] = (ge_tref){c, GE_CONTROL};
		cout_append(g, c, id);
	}
	if (p->blob) {
		o->raw = p->blob;
		o->raw_len = (uint32_t)p->blob_len;
	} else if (to->n_attrs) {
		ge_buf *b = sc->scratch;
		b->len = 0;
		if (p->pre_len)
			ge_buf_add(b, p->pre, p->pre_len);
		put_entries(b, to, p->first_site, sc->k);
		uint8_t *c = ge_arena_alloc(&g->arena, b->len);
		memcpy(c, b->data, b->len);
		o->raw = c;
		o->raw_len = (uint32_t)b->len;
	}
	return id;
}

/* The names a site's ops ask for (<site op name><template name>, each
 * NUL-terminated, name[j] of len[j] bytes) and their hashes: made one
 * site ahead, so that the table slots they probe are fetched meanwhile.
 * They are made in the arena, where a name that is free stays as its
 * op's. */
typedef struct site_names {
	const char **name;
	size_t *len;
	uint32_t *hash;
} site_names;

/* tl[j]: the length of template op j's name */
static void name_site(ge_graph *g, const ge_ins_template *t, const size_t *tl,
		      ge_tref site, site_names *s)
{
	const char *sn = g->ops[site.op].name;
	size_t sl = strlen(sn), len = 0;
	for (size_t j = 0; j < t->n_ops; j++)
		len += sl + tl[j] + 1;
	char *p = ge_arena_alloc(&g->arena, len);
	for (size_t j = 0; j < t->n_ops; j++) {
		s->name[j] = p;
		s->len[j] = sl + tl[j];
		memcpy(p, sn, sl);
		memcpy(p + sl, t->ops[j].name, tl[j]);
		s->hash[j] = ge_hash_ci(p, sl + tl[j]);
		p[sl + tl[j]] = 0;
		p += sl + tl[j] + 1;
		ge_names_prefetch(g, s->hash[j]);
	}
}

/* The readers of each site (as edits: op and slot), and
 * which sites are skipped. */
static size_t collect_readers(const ge_graph *g, const ge_tref *sites,
			      size_t n, unsigned flags, ge_input_edit **out,
			      size_t *first, unsigned char *skip)
{
	size_t ne = 0, cap = 0;
	ge_input_edit *e = NULL;
	for (size_t k = 0; k < n; k++) {
		first[k] = ne;
		const ge_op *p = &g->ops[sites[k].op];
		for (uint32_t i = 0; i < p->n_uses; i++) {
			ge_use u = p->uses[i];
			const ge_op *c = &g->ops[u.op];
			if (u.slot >= c->n_in ||
			    !ge_tref_eq(c->in[u.slot], sites[k]))
				continue;
			if (ne == cap) {
				cap = cap ? cap * 2 : 64;
				e = ge_xrealloc(e, cap * sizeof *e);
			}
			e[ne++] = (ge_input_edit){u.op, u.slot, {GE_NOOP, 0}};
		}
		skip[k] = ne == first[k] && (flags & GE_INS_SKIP_UNREAD);
	}
	first[n] = ne;
	*out = e;
	return ne;
}

int ge_insert_after(ge_graph *g, const ge_tref *sites, size_t n,
		    const ge_ins_template *tmpls, size_t n_tmpls,
		    const uint32_t *site_tmpl, unsigned flags,
		    ge_ins_result *res, ge_error *err)
{
	memset(res, 0, sizeof *res);
	if (!n_tmpls)
		return ge_err(err, GE_EINVAL, "no template");
	size_t max_ops = 0;
	int any_anchor = 0, coloc = 0;
	for (size_t t = 0; t < n_tmpls; t++) {
		if (check_template(g, &tmpls[t], err))
			return GE_EINVAL;
		if (tmpls[t].n_ops > max_ops)
			max_ops = tmpls[t].n_ops;
		for (size_t j = 0; j < tmpls[t].n_ops; j++) {
			const ge_ins_op *o = &tmpls[t].ops[j];
			any_anchor |= o->loop_anchor;
			for (size_t a = 0; a < o->n_attrs; a++)
				coloc |= !strcmp(o->attrs[a].name, "_class");
		}
	}
	if (check_sites(g, sites, n, site_tmpl, n_tmpls, err))
		return GE_EINVAL;
	if ((uint64_t)n * max_ops >= 0xfffffff0u - g->n_ops)
		return ge_err(err, GE_EINVAL, "too many ops");

	/* Everything read from the graph as it is before the edit. */
	unsigned char *skip = ge_xcalloc(n + 1, 2);
	unsigned char *in_loop = skip + n + 1;
	if (any_anchor && !ge_frames_all_root(g)) {
		const ge_frames *F = ge_graph_frames(g);
		for (size_t k = 0; k < n; k++)
			in_loop[k] = ge_frames_op(F, sites[k].op) != 0;
	}
	size_t *first = ge_xmalloc((n + 1) * sizeof *first);
	ge_input_edit *edits;
	size_t ne = collect_readers(g, sites, n, flags, &edits, first, skip);

	size_t n_new = 0;
	for (size_t k = 0; k < n; k++)
		if (!skip[k])
			n_new += tmpls[site_tmpl ? site_tmpl[k] : 0].n_ops;
	ge_graph_reserve_ops(g, n_new);
	/* new colocations: the index is rebuilt when next needed */
	if (coloc)
		ge_coloc_drop(g);
	prep_op **prep = ge_xcalloc(n_tmpls, sizeof *prep);
	/* per template: its inputs reading the site, and whether any reads
	 * a fixed tensor (which may be of the site's op: counted per site) */
	size_t *n_reads = ge_xcalloc(n_tmpls * 2 + 1, sizeof *n_reads);
	size_t *fixed = n_reads + n_tmpls;
	for (size_t t = 0; t < n_tmpls; t++)
		for (size_t j = 0; j < tmpls[t].n_ops; j++)
			for (size_t i = 0; i < tmpls[t].ops[j].n_in; i++)
				fixed[t] |= tmpls[t].ops[j].in[i].kind ==
					    GE_INS_TENSOR;
	size_t n_old = g->n_ops;
	ge_opid *ids = ge_xmalloc((max_ops + 1) * sizeof *ids);
	res->outputs = ge_xmalloc((n + 1) * sizeof *res->outputs);
	res->skipped = ge_xmalloc((n + 1) * sizeof *res->skipped);
	ge_buf ab = GE_BUF_INIT;
	site_names sn[2];
	for (int i = 0; i < 2; i++) {
		sn[i].name = ge_xmalloc((max_ops + 1) * sizeof *sn[i].name);
		sn[i].len = ge_xmalloc((max_ops + 1) * sizeof *sn[i].len);
		sn[i].hash = ge_xmalloc((max_ops + 1) * sizeof *sn[i].hash);
	}
	/* the lengths of the template ops' names, template after template */
	size_t *tl0 = ge_xmalloc((n_tmpls * max_ops + 1) * sizeof *tl0);
	for (size_t t = 0; t < n_tmpls; t++)
		for (size_t j = 0; j < tmpls[t].n_ops; j++)
			tl0[t * max_ops + j] = strlen(tmpls[t].ops[j].name);
#define TL(ti) (tl0 + (ti) * max_ops)
	int cur = 0;
	size_t k = 0;
	while (k < n && skip[k])
		k++;
	if (k < n) {
		size_t ti = site_tmpl ? site_tmpl[k] : 0;
		name_site(g, &tmpls[ti], TL(ti), sites[k], &sn[cur]);
	}
	for (k = 0; k < n; k++) {
		res->outputs[k] = (ge_tref){GE_NOOP, 0};
		if (skip[k]) {
			res->skipped[res->n_skipped++] = k;
			continue;
		}
		size_t ti = site_tmpl ? site_tmpl[k] : 0;
		const ge_ins_template *t = &tmpls[ti];
		size_t next = k + 1;
		while (next < n && skip[next])
			next++;
		if (next < n) {
			size_t tn = site_tmpl ? site_tmpl[next] : 0;
			name_site(g, &tmpls[tn], TL(tn), sites[next],
				  &sn[!cur]);
		}
		if (!prep[ti]) {
			prep[ti] = prepare(g, t);
			n_reads[ti] = site_reads(t, GE_NOOP);
		}
		site_ctx sc = {sites[k], k, in_loop[k], ids, edits + first[k],
			       first[k + 1] - first[k], &ab, NULL};
		sc.room = ge_arena_alloc(&g->arena,
					 8 * site_words(t, prep[ti], in_loop[k],
							sc.nr) + 8);
		size_t need = fixed[ti] ? site_reads(t, sites[k].op)
					: n_reads[ti];
		if (need || sc.nr)
			site_room(g, sites[k], n_old, need);
		const site_names *s = &sn[cur];
		for (size_t j = 0; j < t->n_ops; j++)
			ids[j] = make_op(g, &t->ops[j], &prep[ti][j],
					 j == t->out_op, &sc, s->name[j],
					 s->len[j], s->hash[j]);
		cur = !cur;
		ge_tref out = {ids[t->out_op], t->out_index};
		res->outputs[k] = out;
		/* the readers' uses are on out already (make_op) and off the
		 * site's op (site_room) */
		for (size_t i = 0; i < sc.nr; i++) {
			ge_op *c = &g->ops[sc.rd[i].op];
			c->in[sc.rd[i].slot] = out;
			c->flags |= OPF_EDIT;
		}
		res->inserted++;
	}
	if (ne)
		g->version++;
#undef TL
	ge_buf_free(&ab);
	free(tl0);
	for (int i = 0; i < 2; i++) {
		free(sn[i].name);
		free(sn[i].len);
		free(sn[i].hash);
	}
	for (size_t t = 0; t < n_tmpls; t++)
		free(prep[t]);
	free(prep);
	free(n_reads);
	free(ids);
	free(edits);
	free(first);
	free(skip);
	return GE_OK;
}

void ge_ins_result_free(ge_ins_result *res)
{
	free(res->skipped);
	free(res->outputs);
	memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------ dtypes */

/* AttrValue bytes holding a type and nothing else (field 6): the type,
 * else -1. */
static int raw_type(const uint8_t *v, size_t n)
{
	const uint8_t *p = v + 1;
	uint64_t x;
	if (n < 2 || v[0] != GE_TAG(GE_ATTR_TYPE, GE_WT_VARINT) ||
	    ge_read_varint(&p, v + n, &x) ||
	    p != v + n || x > 0x7fffffff)
		return -1;
	return (int)x;
}

/* Output 0's dtype when the OpDef makes it simple: a fixed type, or the
 * type attr the op holds as plain bytes; else -1 (ask the slow way). */
static int fast_dtype(const ge_graph *g, ge_opid id,
		      const Tensorflow__OpDef *d)
{
	if (!d || !d->n_output_arg)
		return -1;
	const Tensorflow__OpDef__ArgDef *a = d->output_arg[0];
	if ((a->number_attr && *a->number_attr) ||
	    (a->type_list_attr && *a->type_list_attr))
		return -1;
	if (a->type)
		return a->type;
	if (!a->type_attr || !*a->type_attr)
		return -1;
	/* read in place: splitting the attrs of every site costs more than
	 * the rest of this */
	const ge_op *o = &g->ops[id];
	if ((o->flags & OPF_SPLIT) || !o->raw)
		return -1;
	const uint8_t *v;
	size_t vl, nl = strlen(a->type_attr);
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len;
	const char *key;
	size_t kl;
	while (ge_wire_attr_next(&p, end, &key, &kl, &v, &vl))
		if (strnlen(key, kl) == nl && !memcmp(key, a->type_attr, nl))
			return raw_type(v, vl);
	return -1;
}

void ge_insert_site_dtypes(ge_graph *g, const ge_tref *sites, size_t n,
			   const char *attr, int *out)
{
	/* the OpDef of the last few op types seen */
	enum { WAYS = 8 };
	const char *type[WAYS] = {0};
	const Tensorflow__OpDef *def[WAYS] = {0};
	for (size_t k = 0; k < n; k++) {
		ge_tref t = sites[k];
		const char *ty = g->ops[t.op].type;
		size_t w = ((uintptr_t)ty >> 4) % WAYS;
		if (type[w] != ty) {
			type[w] = ty;
			def[w] = ge_graph_opdef(g, ty);
		}
		int dt = t.index == 0 ? fast_dtype(g, t.op, def[w]) : -1;
		if (dt < 0)
			dt = ge_op_output_dtype(g, t.op, t.index);
		if (!dt)
			dt = ge_shapes_dtype(g, t);
		if (!dt && attr && ge_op_attr_type(g, t.op, attr, &dt))
			dt = 0;
		out[k] = dt;
	}
}

/* ------------------------------------------------------------ by type */

void ge_graph_ops_of_types(const ge_graph *g, const char *const *types,
			   size_t n, ge_opvec *out)
{
	/* op types are interned: a verdict per distinct type pointer, kept
	 * in a small open-addressing table */
	enum { CAP = 512 };
	struct {
		const char *type;
		int yes;
	} seen[CAP];
	memset(seen, 0, sizeof seen);
	size_t n_seen = 0;
	for (size_t id = 0; id < g->n_ops; id++) {
		const ge_op *o = &g->ops[id];
		if (o->flags & OPF_DEAD)
			continue;
		size_t h = ((uintptr_t)o->type >> 3) & (CAP - 1);
		while (seen[h].type && seen[h].type != o->type)
			h = (h + 1) & (CAP - 1);
		int yes;
		if (seen[h].type) {
			yes = seen[h].yes;
		} else {
			yes = 0;
			for (size_t i = 0; i < n && !yes; i++)
				yes = !strcmp(types[i], o->type);
			if (n_seen < CAP / 2) {
				seen[h].type = o->type;
				seen[h].yes = yes;
				n_seen++;
			}
		}
		if (yes)
			ge_opvec_push(out, (ge_opid)id);
	}
}
