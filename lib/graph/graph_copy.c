/*
 * graph_copy.c: copies of ops that share their source's encoded attrs
 * (graph_copy.h).
 */
#include "graph/graph_impl.h"
#include "graph/graph_copy.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* A varint in its shortest form (what an encoder writes). */
static int short_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	if (ge_read_varint(&p, end, v))
		return -1;
	if (p - *pp > 1 && p[-1] == 0)
		return -1;
	*pp = p;
	return 0;
}

/* The same, one byte long in most cases. */
static inline int short_varint1(const uint8_t **pp, const uint8_t *end,
				uint64_t *v)
{
	if (*pp < end && **pp < 0x80) {
		*v = *(*pp)++;
		return 0;
	}
	return short_varint(pp, end, v);
}

/* One attr entry [p, end) laid out as a re-encode writes it: key (1),
 * value (2), each present once. */
static int canonical_entry(const uint8_t *p, const uint8_t *end,
			   const uint8_t **key, size_t *klen)
{
	uint64_t kl, vl;
	if (p >= end || *p++ != GE_TAG_LEN(GE_MAPENTRY_KEY) ||
	    short_varint1(&p, end, &kl) ||
	    kl > (uint64_t)(end - p))
		return -1;
	*key = p;
	*klen = (size_t)kl;
	for (size_t i = 0; i < kl; i++)
		if (!p[i])
			return -1;
	p += kl;
	if (p >= end || *p++ != GE_TAG_LEN(GE_MAPENTRY_VALUE) ||
	    short_varint1(&p, end, &vl) ||
	    vl != (uint64_t)(end - p))
		return -1;
	return 0;
}

/* Where the first attr entry (field 5) of NodeDef bytes [p, end) starts,
 * past the name, op, inputs and device: end when there is none, NULL when
 * the bytes before it are malformed. */
static const uint8_t *first_attr(const uint8_t *p, const uint8_t *end)
{
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f))
		if (ge_wire_is_len(&f, GE_NODEDEF_ATTR))
			return f.start;
	return w.bad ? NULL : end;
}

/* ge_op_attr_run for an op whose raw bytes were found shareable before:
 * the run starts at the first attr entry (after name, op, inputs and
 * device) and ends with the bytes. */
static int known_run(const ge_op *o, const uint8_t **run, size_t *len,
		     unsigned *fl)
{
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len;
	uint32_t at = o->flags >> OPF_RUN_AT_SHIFT;
	/* the run starts at the kept offset (raw does not change): its
	 * bytes need not be read, nor brought into the cache */
	if (at)
		p = at - 1 < o->raw_len ? p + (at - 1) : end;
	else if (!(p = first_attr(p, end)))
		return 0;
	if (p < end) {
		*run = p;
		*len = (size_t)(end - p);
	}
	*fl = (o->flags & OPF_RUN_SHAPES ? GE_RUN_SHAPES : 0) |
	      (o->flags & OPF_RUN_CLASS ? GE_RUN_CLASS : 0);
	return 1;
}

/* ge_op_attr_run's first look at an op's raw bytes. */
static int scan_run(const ge_op *o, const uint8_t **run, size_t *len,
		    unsigned *fl)
{
	enum { MAXK = 24 };
	const uint8_t *keys[MAXK];
	size_t klens[MAXK];
	uint32_t n = 0;
	const uint8_t *end = o->raw + o->raw_len;
	const uint8_t *start = NULL, *stop = NULL;
	ge_wire w = ge_wire_of(o->raw, o->raw_len);
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, GE_NODEDEF_ATTR)) {
			/* name, op, input, device */
			if (start && !stop)
				stop = f.start;
			continue;
		}
		/* a one-byte tag, a length in its shortest form */
		if (stop ||
		    (size_t)(f.data - f.start) != 1 + ge_uvarint_size(f.len) ||
		    n == MAXK)
			return 0;
		if (!start)
			start = f.start;
		const uint8_t *k;
		size_t kl;
		if (canonical_entry(f.data, f.data + f.len, &k, &kl))
			return 0;
		for (uint32_t i = 0; i < n; i++)
			if (klens[i] == kl && !memcmp(keys[i], k, kl))
				return 0;
		keys[n] = k;
		klens[n++] = kl;
		if (kl == 14 && !memcmp(k, "_output_shapes", 14))
			*fl |= GE_RUN_SHAPES;
		else if (kl == 6 && !memcmp(k, "_class", 6))
			*fl |= GE_RUN_CLASS;
	}
	if (w.bad)
		return 0;
	/* split ents are the entries as read unless one was set or removed */
	if (o->flags & OPF_SPLIT) {
		if (o->n_ents != n)
			return 0;
		for (uint32_t i = 0; i < o->n_ents; i++)
			if (o->ents[i].owned)
				return 0;
	}
	if (start) {
		*run = start;
		*len = (size_t)((stop ? stop : end) - start);
	}
	/* const_cast: the verdict is a cache, like split attrs; so is where
	 * the run starts, which the next copies need not look for */
	if (!(o->flags & OPF_SPLIT) && !stop) {
		size_t off = (size_t)((start ? start : end) - o->raw) + 1;
		((ge_op *)o)->flags |=
			OPF_RUN_OK | (*fl & GE_RUN_SHAPES ? OPF_RUN_SHAPES : 0) |
			(*fl & GE_RUN_CLASS ? OPF_RUN_CLASS : 0) |
			(off < (1u << (32 - OPF_RUN_AT_SHIFT))
				 ? (uint32_t)off << OPF_RUN_AT_SHIFT
				 : 0);
	}
	return 1;
}

int ge_op_attr_run(const ge_graph *g, ge_opid id, const uint8_t **run,
		   size_t *len, unsigned *fl)
{
	const ge_op *o = &g->ops[id];
	*fl = 0;
	*run = NULL;
	*len = 0;
	if (!o->raw)
		return !o->n_ents;
	if ((o->flags & (OPF_RUN_OK | OPF_SPLIT)) == OPF_RUN_OK)
		return known_run(o, run, len, fl);
	return scan_run(o, run, len, fl);
}

const ge_opid *ge_graph_attr_classes(const ge_graph *g, size_t *n)
{
	*n = 0;
	if (!g->attr_cls || g->attr_cls_version != g->version)
		return NULL;
	/* nothing was added since the load either */
	*n = g->n_ops;
	return g->attr_cls;
}

int ge_op_attr_run_like(const ge_graph *g, ge_opid id, ge_opid like,
			const uint8_t **run, size_t *len, unsigned *fl)
{
	const ge_op *o = &g->ops[id], *c = &g->ops[like];
	const uint8_t *cr;
	size_t cl;
	unsigned cf;
	if (like == id || !o->raw || (o->flags & (OPF_SPLIT | OPF_RUN_OK)) ||
	    !ge_op_attr_run(g, like, &cr, &cl, &cf) ||
	    (c->flags & (OPF_SPLIT | OPF_RUN_OK)) != OPF_RUN_OK || !cl)
		return ge_op_attr_run(g, id, run, len, fl);
	/* like's attr fields are one run to its end; id's, the same bytes,
	 * start at its first attr field: the same run where they end id's
	 * bytes too */
	const uint8_t *p = first_attr(o->raw, o->raw + o->raw_len),
		      *end = o->raw + o->raw_len;
	if (!p)
		return ge_op_attr_run(g, id, run, len, fl);
	size_t off = (size_t)(p - o->raw) + 1;
	if ((size_t)(end - p) != cl || off >= (1u << (32 - OPF_RUN_AT_SHIFT)))
		return ge_op_attr_run(g, id, run, len, fl);
	*run = p;
	*len = cl;
	*fl = cf;
	((ge_op *)o)->flags |= OPF_RUN_OK |
			       (cf & GE_RUN_SHAPES ? OPF_RUN_SHAPES : 0) |
			       (cf & GE_RUN_CLASS ? OPF_RUN_CLASS : 0) |
			       (uint32_t)off << OPF_RUN_AT_SHIFT;
	return 1;
}

const ge_tref *ge_op_data_inputs(const ge_graph *g, ge_opid id, size_t *n,
				 size_t *n_ctrl)
{
	*n = g->ops[id].n_in;
	*n_ctrl = g->ops[id].n_ctrl;
	return g->ops[id].in;
}

int ge_graph_may_have_type(const ge_graph *g, const char *type)
{
	if (!g->strs_cap)
		return 0;
	size_t n = strlen(type), j = ge_hash(type, n) & (g->strs_cap - 1);
	for (; g->strs[j]; j = (j + 1) & (g->strs_cap - 1))
		if (!strcmp(g->strs[j], type))
			return 1;
	return 0;
}

int ge_graph_all_alive(const ge_graph *g, const ge_opid *ops, size_t n,
		       size_t stride)
{
	const uint8_t *p = (const uint8_t *)ops;
	/* n_live counts the ops not removed: when no op was, every id
	 * below n_ops is one (GE_NOOP is not) */
	if (g->n_live == g->n_ops) {
		for (size_t i = 0; i < n; i++, p += stride)
			if (*(const ge_opid *)p >= g->n_ops)
				return 0;
		return 1;
	}
	for (size_t i = 0; i < n; i++, p += stride) {
		ge_opid id = *(const ge_opid *)p;
		if (id >= g->n_ops || (g->ops[id].flags & OPF_DEAD))
			return 0;
	}
	return 1;
}

int ge_op_num_outputs_memo(const ge_graph *g, ge_opid id, ge_nout_memo *m)
{
	ge_op *o = &g->ops[id];
	if (o->nout >= 0)
		return o->nout;
	/* types are interned: one pointer per type */
	size_t k = ((uintptr_t)o->type >> 3) % GE_NOUT_MEMO;
	if (m->type[k] != o->type) {
		const Tensorflow__OpDef *d = ge_graph_opdef(g, o->type);
		int n = d ? (int)d->n_output_arg : -1;
		for (size_t i = 0; d && i < d->n_output_arg && n >= 0; i++) {
			const Tensorflow__OpDef__ArgDef *a = d->output_arg[i];
			if ((a->number_attr && *a->number_attr) ||
			    (a->type_list_attr && *a->type_list_attr))
				n = -1;
		}
		m->type[k] = o->type;
		m->n[k] = n;
	}
	if (m->n[k] < 0)
		return ge_op_num_outputs(g, id);
	/* what ge_op_num_outputs finds and keeps: one output per arg */
	o->nout = m->n[k];
	return o->nout;
}

void ge_graph_walk_unread(const ge_graph *g, ge_opvec *ops, ge_tvec *outs)
{
	ge_nout_memo memo;
	memset(&memo, 0, sizeof memo);
	for (size_t id = 0; id < g->n_ops; id++) {
		const ge_op *o = &g->ops[id];
		if (o->flags & OPF_DEAD)
			continue;
		ops->v[ops->n++] = (ge_opid)id;
		int no = ge_op_num_outputs_memo(g, (ge_opid)id, &memo);
		/* which outputs some op reads: a mask for the first 64 (a use
		 * is a data input of a live op, never a dangling one) */
		uint64_t read = 0;
		int high = 0;
		for (uint32_t k = 0; k < o->n_uses; k++) {
			int32_t ix = g->ops[o->uses[k].op].in[o->uses[k].slot].index;
			if (ix >= 0 && ix < 64)
				read |= (uint64_t)1 << ix;
			else if (ix >= 64)
				high = 1;
		}
		for (int k = 0; k < no; k++) {
			int r = k < 64 ? (int)(read >> k & 1) : 0;
			for (uint32_t j = 0; k >= 64 && high && j < o->n_uses && !r;
			     j++)
				r = g->ops[o->uses[j].op].in[o->uses[j].slot].index ==
				    k;
			if (!r)
				ge_tvec_push(outs, (ge_tref){(ge_opid)id, k});
		}
	}
}

void ge_graph_reserve(ge_graph *g, size_t n)
{
	ge_graph_reserve_ops(g, n);
}

void ge_graph_prefetch_name(const ge_graph *g, uint32_t h)
{
	if (g->idx_cap)
		__builtin_prefetch(&g->idx[h & (g->idx_cap - 1)], 1);
}

char *ge_graph_name_room(ge_graph *g, size_t n)
{
	return ge_arena_alloc(&g->arena, n + 1);
}

ge_opid ge_graph_add_copy(ge_graph *g, ge_opid src, const uint8_t *run,
			  size_t len, unsigned fl, const char *name, size_t n,
			  uint32_t h, const ge_tref *in, size_t n_in,
			  int32_t *nout)
{
	if (!n || g->n_ops >= 0xfffffff0u ||
	    (!(fl & GE_COPY_UNHANDED) && ge_name_handed_out(g, name, n, h)))
		return GE_NOOP;
	if (g->n_ops == g->cap_ops)
		ge_graph_reserve(g, g->cap_ops ? g->cap_ops : 64);
	/* the name is claimed by the op in the next slot; a claim that
	 * fails leaves the slot unused */
	ge_opid id = (ge_opid)g->n_ops;
	ge_op *o = &g->ops[id];
	o->name = name;
	if (ge_idx_claim_h(g, id, n, h) != GE_NOOP)
		return GE_NOOP;
	g->n_ops++;
	const ge_op *s = &g->ops[src];
	/* same type, same attrs: the same output count, where it is not
	 * read from the consumers; the name is claimed without a `used`
	 * entry (graph_impl.h) */
	*o = (ge_op){.name = name,
		     .type = s->type,
		     .device = s->device,
		     .flags = OPF_DIRTY | OPF_NAMED,
		     .nout = s->nout};
	*nout = s->nout;
	if (len) {
		/* the run is the whole of raw: ge_op_attr_run's verdict on
		 * the source holds for the copy, from offset 0 */
		o->raw = run;
		o->raw_len = (uint32_t)len;
		o->flags |= OPF_RAWATTRS | OPF_RUN_OK |
			    (fl & GE_RUN_SHAPES ? OPF_RUN_SHAPES : 0) |
			    (fl & GE_RUN_CLASS ? OPF_RUN_CLASS : 0) |
			    1u << OPF_RUN_AT_SHIFT;
	} else {
		o->flags |= OPF_SPLIT;
	}
	if (n_in) {
		/* exactly n_in: a later input moves it to the heap */
		o->in = ge_arena_alloc(&g->arena, n_in * sizeof *o->in);
		ge_copy_short(o->in, in, n_in * sizeof *o->in);
		o->n_in = (uint32_t)n_in;
	}
	g->n_live++;
	g->version++;
	/* the colocation index must learn of the copy (as an attr set
	 * tells it) */
	if (fl & GE_RUN_CLASS)
		ge_coloc_drop(g);
	return id;
}

static int cmp_use(const void *a, const void *b)
{
	const ge_use *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

void ge_graph_link_inputs(ge_graph *g, const ge_opid *ops, size_t n,
			  ge_link_scratch *x)
{
	if (!n)
		return;
	if (x->cap < g->n_ops) {
		size_t cap = g->n_ops + g->n_ops / 2;
		if (!x->at) {
			/* fresh zero pages: only the producers' are touched */
			x->at = ge_xcalloc(cap, sizeof *x->at);
		} else {
			x->at = ge_xrealloc(x->at, cap * sizeof *x->at);
			memset(x->at + x->cap, 0,
			       (cap - x->cap) * sizeof *x->at);
		}
		x->cap = cap;
	}
	/* per producer: the uses to add, then where the next one goes */
	uint32_t *at = x->at;
	/* most producers are among the copies: their entries (zero) are
	 * written first, so that fresh pages fault once, not on the read of
	 * the count and again on its write */
	if (ops[n - 1] >= ops[0]) {
		size_t span = (ops[n - 1] - ops[0] + 1) * sizeof *at;
		ge_prefault(at + ops[0], span);
		memset(at + ops[0], 0, span);
	}
	ge_opvec *prod = &x->prod;
	prod->n = 0;
	if (prod->cap < n) {
		/* room for a producer per op (the copies, mostly), resident
		 * before it is written */
		prod->cap = n;
		prod->v = ge_xrealloc(prod->v, prod->cap * sizeof *prod->v);
		ge_prefault(prod->v, prod->cap * sizeof *prod->v);
	}
	size_t uses = 0;
	for (size_t i = 0; i < n; i++) {
		const ge_op *c = &g->ops[ops[i]];
		if (prod->cap < prod->n + c->n_in) {
			prod->cap = 2 * (prod->n + c->n_in);
			prod->v = ge_xrealloc(prod->v,
					      prod->cap * sizeof *prod->v);
		}
		for (uint32_t s = 0; s < c->n_in; s++) {
			ge_opid p = c->in[s].op;
			if (p == GE_NOOP)
				continue;
			uses++;
			if (!at[p]++)
				prod->v[prod->n++] = p;
		}
	}
	/* the producers without uses yet take theirs from one piece of the
	 * arena, sized for all (most are: the copies themselves) */
	ge_use *piece = uses ? ge_arena_alloc(&g->arena, uses * sizeof *piece)
			     : NULL;
	for (size_t k = 0; k < prod->n; k++) {
		ge_opid p = prod->v[k];
		ge_op *P = &g->ops[p];
		uint32_t m = P->n_uses, tot = m + at[p];
		ge_use *u;
		if (!m && !(P->flags & OPF_USES_OWNED)) {
			u = piece;
			piece += tot;
		} else {
			/* heap arrays keep graph.c's room rule */
			u = ge_xmalloc(ge_edge_room(tot) * sizeof *u);
			if (m)
				memcpy(u, P->uses, m * sizeof *u);
			if (P->flags & OPF_USES_OWNED)
				free(P->uses);
			P->flags |= OPF_USES_OWNED;
		}
		P->uses = u;
		at[p] = m;
	}
	for (size_t i = 0; i < n; i++) {
		const ge_op *c = &g->ops[ops[i]];
		for (uint32_t s = 0; s < c->n_in; s++) {
			ge_opid p = c->in[s].op;
			if (p != GE_NOOP)
				g->ops[p].uses[at[p]++] = (ge_use){ops[i], s};
		}
	}
	for (size_t k = 0; k < prod->n; k++) {
		ge_opid p = prod->v[k];
		ge_op *P = &g->ops[p];
		uint32_t m = P->n_uses;
		P->n_uses = at[p];
		at[p] = 0;
		/* older uses may come from ops made after some of these */
		if (m && cmp_use(&P->uses[m - 1], &P->uses[m]) > 0)
			qsort(P->uses, P->n_uses, sizeof *P->uses, cmp_use);
	}
}

void ge_link_scratch_free(ge_link_scratch *x)
{
	free(x->at);
	ge_opvec_free(&x->prod);
	x->at = NULL;
	x->cap = 0;
}

/* ------------------------------------------------------------ save */

static uint8_t *put_lf(uint8_t *p, uint8_t tag, const void *s, size_t n)
{
	*p++ = tag;
	p = ge_put_uvarint(p, n);
	ge_copy_short(p, s, n);
	return p + n;
}

/* An input's text as a save writes it: "x", "x:2", "^x", or a dangling
 * input's own text.  Its length, with the name's text and length in *nm,
 * *nl (measured once: input_put writes from them). */
static inline size_t input_len(const ge_graph *g, const ge_op *o, uint32_t s,
			const char **nm, size_t *nl)
{
	ge_tref t = o->in[s];
	if (t.op == GE_NOOP) {
		*nm = g->dangling[t.index];
		return *nl = strlen(*nm);
	}
	*nm = g->ops[t.op].name;
	*nl = strlen(*nm);
	if (s >= o->n_in)
		return 1 + *nl;
	size_t k = 0;
	if (t.index > 0)
		for (uint32_t x = (uint32_t)t.index; x; x /= 10)
			k++;
	return *nl + (k ? k + 1 : 0);
}

static uint8_t *input_put(uint8_t *p, const ge_op *o, uint32_t s,
			  const char *nm, size_t nl)
{
	ge_tref t = o->in[s];
	int plain = t.op == GE_NOOP;
	if (!plain && s >= o->n_in)
		*p++ = '^';
	ge_copy_short(p, nm, nl);
	p += nl;
	if (!plain && s < o->n_in && t.index > 0) {
		*p++ = ':';
		size_t k = 0;
		for (uint32_t x = (uint32_t)t.index; x; x /= 10)
			k++;
		uint8_t *q = p + k;
		for (uint32_t x = (uint32_t)t.index; x; x /= 10)
			*--q = (uint8_t)('0' + x % 10);
		p += k;
	}
	return p;
}

/* The length of type t (interned), from the memo when it has it. */
static inline size_t type_len(ge_type_lens *m, const char *t)
{
	size_t k = ((uintptr_t)t >> 3) % 8;
	if (m->type[k] != t) {
		m->type[k] = t;
		m->len[k] = strlen(t);
	}
	return m->len[k];
}

int ge_op_encode_shared(const ge_graph *g, ge_opid id, ge_buf *out,
			ge_type_lens *types)
{
	const ge_op *o = &g->ops[id];
	if ((o->flags & (OPF_RAWATTRS | OPF_SPLIT)) != OPF_RAWATTRS)
		return 0;
	size_t nl = strlen(o->name), tl = type_len(types, o->type);
	/* (most ops have no device) */
	size_t dl = *o->device ? strlen(o->device) : 0;
	size_t nin = o->n_in + o->n_ctrl;
	size_t body = 1 + ge_uvarint_size(nl) + nl + 1 + ge_uvarint_size(tl) + tl + o->raw_len;
	/* the first inputs' texts as measured, for the writes; the rest
	 * (rare) are measured again */
	enum { KEEP = 16 };
	const char *inm[KEEP];
	size_t inl[KEEP], ils[KEEP];
	for (uint32_t s = 0; s < nin; s++) {
		const char *m;
		size_t ml, il = input_len(g, o, s, &m, &ml);
		if (s < KEEP) {
			inm[s] = m;
			inl[s] = ml;
			ils[s] = il;
		}
		body += 1 + ge_uvarint_size(il) + il;
	}
	if (dl)
		body += 1 + ge_uvarint_size(dl) + dl;
	const ge_dbginfo *dbg = ge_op_dbg(g, id);
	size_t pl = dbg ? dbg->len : 0; /* provenance, whole field */
	body += pl;
	ge_buf_reserve(out, 1 + ge_uvarint_size(body) + body);
	uint8_t *p = out->data + out->len;
	*p++ = GE_TAG_LEN(GE_GRAPHDEF_NODE);
	p = ge_put_uvarint(p, body);
	p = put_lf(p, GE_TAG_LEN(GE_NODEDEF_NAME), o->name, nl);
	p = put_lf(p, GE_TAG_LEN(GE_NODEDEF_OP), o->type, tl);
	for (uint32_t s = 0; s < nin; s++) {
		const char *m;
		size_t ml, il;
		if (s < KEEP) {
			m = inm[s];
			ml = inl[s];
			il = ils[s];
		} else {
			il = input_len(g, o, s, &m, &ml);
		}
		*p++ = GE_TAG_LEN(GE_NODEDEF_INPUT);
		if (il < 0x80)
			*p++ = (uint8_t)il;
		else
			p = ge_put_uvarint(p, il);
		p = input_put(p, o, s, m, ml);
	}
	if (dl)
		p = put_lf(p, GE_TAG_LEN(GE_NODEDEF_DEVICE), o->device, dl);
	ge_copy_short(p, o->raw, o->raw_len);
	p += o->raw_len;
	if (pl) {
		memcpy(p, dbg->bytes, pl);
		p += pl;
	}
	out->len = (size_t)(p - out->data);
	out->data[out->len] = 0;
	return 1;
}
