/*
 * graph.c: the graph model (see graph.h for the contract, graph_impl.h for
 * the representation).
 *
 * Loading a GraphDef reads only what the graph structure needs from each
 * NodeDef (name, op, inputs, device) and keeps the node's bytes; attrs stay
 * raw until something reads them.  Edge arrays of loaded ops live in three
 * pools sized exactly at load time; an op whose array must grow moves it to
 * the heap.  That keeps a million-node load to a handful of allocations.
 */
#include "graph/graph_impl.h"
#include "base/bounds.h"
#include "base/filemap.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/opreg.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/framework/types.pb-c.h"

/* The parts above the core (graph_impl.h): empty until they install. */
ge_graph_parts ge_parts;

/* ------------------------------------------------------------ vectors */

void ge_opvec_push(ge_opvec *v, ge_opid id)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = ge_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = id;
}

void ge_opvec_free(ge_opvec *v)
{
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

void ge_tvec_push(ge_tvec *v, ge_tref t)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = ge_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = t;
}

void ge_tvec_free(ge_tvec *v)
{
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

/* ------------------------------------------------------------ basics */

ge_graph *ge_graph_new(void)
{
	ge_graph *g = ge_xcalloc(1, sizeof *g);
	ge_arena_init(&g->arena);
	g->name = ge_xstrdup("");
	g->format = 1; /* GE_FMT_GRAPHDEF */
	return g;
}

static void op_free_storage(ge_op *o)
{
	if (o->flags & OPF_IN_OWNED)
		free(o->in);
	if (o->flags & OPF_USES_OWNED)
		free(o->uses);
	if (o->flags & OPF_COUTS_OWNED)
		free(o->couts);
	for (uint32_t i = 0; i < o->n_ents; i++) {
		free(o->ents[i].owned);
		if (o->ents[i].val)
			protobuf_c_message_free_unpacked(
				&o->ents[i].val->base, NULL);
	}
	if (o->flags & OPF_ENTS_OWNED)
		free(o->ents);
}

void ge_graph_free(ge_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_ops; i++)
		op_free_storage(&g->ops[i]);
	ge_big_free(g->ops);
	ge_big_free(g->attr_cls);
	ge_big_free(g->attr_vcls);
	ge_big_free(g->dbg);
	if (g->src_owned == 2)
		ge_file_unmap(g->src, g->src_len);
	else if (g->src_owned)
		free(g->src);
	ge_big_free(g->in_pool);
	ge_big_free(g->uses_pool);
	ge_big_free(g->couts_pool);
	free(g->fields);
	ge_big_free(g->idx);
	ge_big_free(g->used);
	free(g->strs);
	for (size_t i = 0; i < g->n_dangling; i++)
		free(g->dangling[i]);
	free(g->dangling);
	ge_coloc_drop(g);
	for (size_t i = 0; i < g->n_hooks; i++)
		if (g->hooks[i]->free)
			g->hooks[i]->free(g);
	ge_oplist_index_free(g->oplist_idx);
	if (g->frames)
		ge_parts.frames_release(g->frames);
	if (g->flib)
		ge_parts.flib_free(g->flib);
	if (g->prov)
		ge_parts.prov_free(g->prov);
	ge_arena_free(&g->arena);
	free(g->name);
	free(g);
}

void ge_graph_add_hooks(ge_graph *g, const ge_graph_hooks *h)
{
	for (size_t i = 0; i < g->n_hooks; i++)
		if (g->hooks[i] == h)
			return;
	if (g->n_hooks == GE_GRAPH_MAX_HOOKS) {
		fprintf(stderr, "gerewrite: too many graph hooks\n");
		abort();
	}
	g->hooks[g->n_hooks++] = h;
}

const char *ge_graph_name(const ge_graph *g)
{
	return g->name;
}

void ge_graph_set_name(ge_graph *g, const char *name)
{
	free(g->name);
	g->name = ge_xstrdup(name ? name : "");
}

uint64_t ge_graph_version(const ge_graph *g)
{
	return g->version;
}

void ge_graph_mark_now(ge_graph *g, ge_graph_mark *m)
{
	m->cap = g->n_ops;
	m->live = g->n_live;
	m->version = g->version;
	m->library = ge_graph_flib_changed(g);
	for (size_t i = 0; i < g->n_ops; i++)
		g->ops[i].flags &= ~(uint32_t)OPF_EDITED;
}

void ge_graph_delta_since(const ge_graph *g, const ge_graph_mark *m,
			  ge_graph_delta *d)
{
	memset(d, 0, sizeof *d);
	d->edited = g->version != m->version;
	d->library = ge_graph_flib_changed(g) && !m->library;
	if (!d->edited)
		return;
	size_t old_alive = 0;
	for (size_t i = 0; i < g->n_ops; i++) {
		uint32_t f = g->ops[i].flags;
		if (f & OPF_DEAD)
			continue;
		if (i >= m->cap) {
			d->added++;
			continue;
		}
		old_alive++;
		d->changed += (f & OPF_EDITED) != 0;
	}
	d->removed = m->live > old_alive ? m->live - old_alive : 0;
}

size_t ge_graph_capacity(const ge_graph *g)
{
	return g->n_ops;
}

size_t ge_graph_num_ops(const ge_graph *g)
{
	return g->n_live;
}

int ge_op_alive(const ge_graph *g, ge_opid id)
{
	return id < g->n_ops && !(g->ops[id].flags & OPF_DEAD);
}

static ge_op *OP(const ge_graph *g, ge_opid id)
{
	return &g->ops[id];
}

/* Interned strings (op types, devices): one copy each, compared by
 * pointer where it helps. */
const char *ge_intern(ge_graph *g, const char *s, size_t n)
{
	if (g->strs_n * 2 >= g->strs_cap) {
		size_t cap = g->strs_cap ? g->strs_cap * 2 : 256;
		const char **t = ge_xcalloc(cap, sizeof *t);
		for (size_t i = 0; i < g->strs_cap; i++) {
			const char *x = g->strs[i];
			if (!x)
				continue;
			size_t j = ge_hash(x, strlen(x)) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = x;
		}
		free(g->strs);
		g->strs = t;
		g->strs_cap = cap;
	}
	size_t j = ge_hash(s, n) & (g->strs_cap - 1);
	while (g->strs[j]) {
		const char *x = g->strs[j];
		if (strncmp(x, s, n) == 0 && x[n] == 0)
			return x;
		j = (j + 1) & (g->strs_cap - 1);
	}
	const char *x = ge_arena_strndup(&g->arena, s, n);
	g->strs[j] = x;
	g->strs_n++;
	return x;
}

/* ------------------------------------------------------------ name index */

/* A slot holds the name's hash (high half) beside id + 1 (low half), so
 * a probe compares names only when the hashes agree: on a large graph each
 * string compare is a cache miss. */
#define SLOT(h, id) (((uint64_t)(h) << 32) | ((uint64_t)(id) + 1))
#define SLOT_ID(v) ((uint32_t)(v) - 1)
#define SLOT_HASH(v) ((uint32_t)((v) >> 32))

void ge_idx_grow(ge_graph *g, size_t want)
{
	size_t cap = 64;
	while (cap < want * 2)
		cap *= 2;
	uint64_t *idx = ge_big_alloc(cap * sizeof *idx);
	size_t used = 0;
	for (size_t i = 0; i < g->idx_cap; i++) {
		uint64_t v = g->idx[i];
		if (!v || v == IDX_TOMB)
			continue;
		size_t j = SLOT_HASH(v) & (cap - 1);
		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = v;
		used++;
	}
	ge_big_free(g->idx);
	g->idx = idx;
	g->idx_cap = cap;
	g->idx_used = used;
}

ge_opid ge_idx_insert(ge_graph *g, ge_opid id)
{
	const char *nm = g->ops[id].name;
	return ge_idx_insert_h(g, id, ge_hash_ci(nm, strlen(nm)));
}

/* The probe of ge_idx_insert_h and ge_idx_claim_h: an op already
 * indexed under id's name (the n bytes of it in any case, or all of it
 * exactly when n is (size_t)-1) is returned; else id goes in. */
static inline ge_opid idx_put(ge_graph *g, ge_opid id, uint32_t h, size_t n)
{
	if ((g->idx_used + 1) * 4 >= g->idx_cap * 3)
		ge_idx_grow(g, g->n_live + 1 > g->idx_used ? g->n_live + 1
							 : g->idx_used + 1);
	const char *nm = g->ops[id].name;
	size_t mask = g->idx_cap - 1, j = h & mask, tomb = (size_t)-1;
	for (; g->idx[j]; j = (j + 1) & mask) {
		uint64_t v = g->idx[j];
		if (v == IDX_TOMB) {
			if (tomb == (size_t)-1)
				tomb = j;
			continue;
		}
		if (SLOT_HASH(v) != h)
			continue;
		const char *x = g->ops[SLOT_ID(v)].name;
		if (n == (size_t)-1 ? !strcmp(x, nm)
				    : !strncasecmp(x, nm, n) && !x[n])
			return SLOT_ID(v);
	}
	if (tomb != (size_t)-1)
		j = tomb;
	else
		g->idx_used++;
	g->idx[j] = SLOT(h, id);
	return GE_NOOP;
}

ge_opid ge_idx_insert_h(ge_graph *g, ge_opid id, uint32_t h)
{
	return idx_put(g, id, h, (size_t)-1);
}

ge_opid ge_idx_claim_h(ge_graph *g, ge_opid id, size_t n, uint32_t h)
{
	return idx_put(g, id, h, n);
}

/* Indexes every op of a freshly loaded graph, marking repeated names.
 * The table is far larger than the cache; hashing a few names ahead and
 * prefetching their slots hides most of the misses. */
void ge_idx_build(ge_graph *g)
{
	enum { AHEAD = 16 };
	uint32_t hs[AHEAD];
	size_t n = g->n_ops;
	ge_idx_grow(g, n + 16);
	size_t mask = g->idx_cap - 1;
	for (size_t i = 0; i < n && i < AHEAD; i++) {
		const char *nm = g->ops[i].name;
		hs[i] = ge_hash_ci(nm, strlen(nm));
		__builtin_prefetch(&g->idx[hs[i] & mask], 1);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t h = hs[i % AHEAD];
		if (i + AHEAD < n) {
			const char *nm = g->ops[i + AHEAD].name;
			uint32_t hh = ge_hash_ci(nm, strlen(nm));
			hs[i % AHEAD] = hh;
			__builtin_prefetch(&g->idx[hh & mask], 1);
		}
		const char *nm = g->ops[i].name;
		size_t j = h & mask;
		int dup = 0;
		for (; g->idx[j]; j = (j + 1) & mask) {
			uint64_t v = g->idx[j];
			if (SLOT_HASH(v) == h &&
			    !strcmp(g->ops[SLOT_ID(v)].name, nm)) {
				dup = 1;
				break;
			}
		}
		if (dup) {
			g->ops[i].flags |= OPF_DUPNAME;
			continue;
		}
		g->idx[j] = SLOT(h, i);
		g->idx_used++;
	}
}

void ge_idx_add(ge_graph *g, ge_opid id)
{
	ge_idx_insert(g, id);
}

static void idx_del(ge_graph *g, ge_opid id)
{
	if (!g->idx_cap)
		return;
	const char *nm = g->ops[id].name;
	size_t j = ge_hash_ci(nm, strlen(nm)) & (g->idx_cap - 1);
	while (g->idx[j]) {
		if (g->idx[j] != IDX_TOMB && SLOT_ID(g->idx[j]) == id) {
			g->idx[j] = IDX_TOMB;
			return;
		}
		j = (j + 1) & (g->idx_cap - 1);
	}
}

ge_opid ge_idx_find_n(const ge_graph *g, const char *name, size_t n,
			  int ci)
{
	return ge_idx_find_h(g, name, n, ci, ge_hash_ci(name, n));
}

ge_opid ge_idx_find_h(const ge_graph *g, const char *name, size_t n, int ci,
		      uint32_t h)
{
	if (!g->idx_cap)
		return GE_NOOP;
	size_t j = h & (g->idx_cap - 1);
	while (g->idx[j]) {
		uint64_t v = g->idx[j];
		if (v != IDX_TOMB && SLOT_HASH(v) == h) {
			const char *x = g->ops[SLOT_ID(v)].name;
			if ((ci ? strncasecmp(x, name, n) : strncmp(x, name, n))
				    == 0 &&
			    x[n] == 0)
				return SLOT_ID(v);
		}
		j = (j + 1) & (g->idx_cap - 1);
	}
	return GE_NOOP;
}

ge_opid ge_graph_find(const ge_graph *g, const char *name)
{
	return ge_idx_find_n(g, name, strlen(name), 0);
}

/* Splits "name", "name:3", "^name" into name length, index, control. */
int ge_parse_input(const char *s, size_t n, size_t *name_off,
		       size_t *name_len, int32_t *index)
{
	if (n && s[0] == '^') {
		*name_off = 1;
		*name_len = n - 1;
		*index = GE_CONTROL;
		return n > 1 ? 0 : -1;
	}
	*name_off = 0;
	*name_len = n;
	*index = 0;
	for (size_t i = n; i > 0; i--) {
		char c = s[i - 1];
		if (c == ':') {
			if (i == n || i == 1)
				return -1;
			int64_t v = 0;
			for (size_t k = i; k < n; k++) {
				v = v * 10 + (s[k] - '0');
				if (v > 0x7fffffff)
					return -1;
			}
			*name_len = i - 1;
			*index = (int32_t)v;
			return 0;
		}
		if (c < '0' || c > '9')
			break;
	}
	return n ? 0 : -1;
}

int ge_op_name_of(const char *s, size_t n, size_t *name_off,
		  size_t *name_len)
{
	int32_t index;
	if (ge_parse_input(s, n, name_off, name_len, &index))
		return -1;
	if (index != GE_CONTROL)
		return 0;
	/* "^name:3": the op of the tensor after the caret */
	size_t off;
	if (ge_parse_input(s + 1, n - 1, &off, name_len, &index) ||
	    index == GE_CONTROL)
		return -1;
	*name_off = 1 + off;
	return 0;
}

int ge_graph_find_tensor(const ge_graph *g, const char *text, ge_tref *out)
{
	size_t off, len;
	int32_t index;
	if (ge_parse_input(text, strlen(text), &off, &len, &index))
		return GE_EINVAL;
	ge_opid id = ge_idx_find_n(g, text + off, len, 0);
	if (id == GE_NOOP)
		return GE_ENOTFOUND;
	out->op = id;
	out->index = index;
	return GE_OK;
}

/* Names are formatted by hand: select_ts formats every tensor of the
 * graph and a save every input, and printf would dominate their cost. */
void ge_tensor_put(const ge_graph *g, ge_tref t, int input_form, ge_buf *out)
{
	char num[16];
	size_t k = 0;
	if (t.op == GE_NOOP) {
		ge_buf_adds(out, "?");
		return;
	}
	if (t.index == GE_CONTROL)
		ge_buf_addc(out, '^');
	ge_buf_adds(out, ge_op_name(g, t.op));
	if (t.index == GE_CONTROL || (input_form && t.index <= 0))
		return;
	uint32_t x = t.index < 0 ? 0 : (uint32_t)t.index;
	num[k++] = ':';
	do {
		num[k++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	ge_buf_reserve(out, k);
	for (size_t i = 1; i < k; i++)
		out->data[out->len + i] = num[k - i];
	out->data[out->len] = ':';
	out->len += k;
	out->data[out->len] = 0;
}

const char *ge_tensor_fmt(const ge_graph *g, ge_tref t, ge_buf *scratch)
{
	scratch->len = 0;
	ge_tensor_put(g, t, 0, scratch);
	return (const char *)scratch->data;
}

int ge_op_has_output(const ge_graph *g, ge_opid id, int index)
{
	if (index < 0)
		return 0;
	if (index < ge_op_num_outputs(g, id))
		return 1;
	return ge_graph_opdef(g, ge_op_type(g, id)) == NULL;
}

int ge_graph_check_tensor(const ge_graph *g, ge_tref t, ge_error *err)
{
	if (t.op == GE_NOOP || t.op >= g->n_ops)
		return ge_err(err, GE_EINVAL, "no op with id %u", t.op);
	const char *name = g->ops[t.op].name;
	if (g->ops[t.op].flags & OPF_DEAD)
		return ge_err(err, GE_EINVAL,
			      "op '%s' was removed from the graph", name);
	if (t.index == GE_CONTROL)
		return ge_err(err, GE_EINVAL,
			      "'^%s' names a control input, not a tensor", name);
	if (!ge_op_has_output(g, t.op, t.index))
		return ge_err(err, GE_ENOTFOUND,
			      "no tensor '%s:%d' (op '%s' has %d outputs)", name,
			      (int)t.index, name, ge_op_num_outputs(g, t.op));
	return GE_OK;
}

int ge_graph_resolve_tensor(const ge_graph *g, const char *text,
			    int allow_control, ge_tref *out, ge_error *err)
{
	int rc = ge_graph_find_tensor(g, text, out);
	if (rc == GE_ENOTFOUND)
		return ge_err(err, rc, "no tensor '%s' (no such op)", text);
	if (rc != GE_OK)
		return ge_err(err, rc, "malformed tensor name '%s'", text);
	if (out->index == GE_CONTROL && allow_control)
		return GE_OK;
	return ge_graph_check_tensor(g, *out, err);
}

/* ------------------------------------------------------------ properties */

const char *ge_op_name(const ge_graph *g, ge_opid id)
{
	return OP(g, id)->name;
}

const char *ge_op_type(const ge_graph *g, ge_opid id)
{
	return OP(g, id)->type;
}

const char *ge_op_device(const ge_graph *g, ge_opid id)
{
	return OP(g, id)->device;
}

static void touch(ge_graph *g, ge_opid id)
{
	g->ops[id].flags |= OPF_EDIT;
	g->version++;
}

/* ---- colocation index ---- */

struct ge_coloc {
	const char *name; /* arena; NULL = empty slot */
	ge_opvec ops;
};

static void set_attr_raw(ge_graph *g, ge_opid id, const char *name,
			 const uint8_t *bytes, size_t len);

void ge_coloc_drop(ge_graph *g)
{
	for (size_t i = 0; i < g->coloc_cap; i++)
		ge_opvec_free(&g->coloc[i].ops);
	free(g->coloc);
	g->coloc = NULL;
	g->coloc_cap = g->coloc_n = 0;
	g->coloc_built = 0;
}

static struct ge_coloc *coloc_slot(ge_graph *g, const char *name, size_t n,
				   int add)
{
	if (add && (g->coloc_n + 1) * 2 > g->coloc_cap) {
		size_t cap = g->coloc_cap ? g->coloc_cap * 2 : 64;
		struct ge_coloc *t = ge_xcalloc(cap, sizeof *t);
		for (size_t i = 0; i < g->coloc_cap; i++) {
			if (!g->coloc[i].name)
				continue;
			const char *k = g->coloc[i].name;
			size_t j = ge_hash(k, strlen(k)) & (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = g->coloc[i];
		}
		free(g->coloc);
		g->coloc = t;
		g->coloc_cap = cap;
	}
	if (!g->coloc_cap)
		return NULL;
	size_t j = ge_hash(name, n) & (g->coloc_cap - 1);
	while (g->coloc[j].name) {
		if (!strncmp(g->coloc[j].name, name, n) &&
		    !g->coloc[j].name[n])
			return &g->coloc[j];
		j = (j + 1) & (g->coloc_cap - 1);
	}
	if (!add)
		return NULL;
	g->coloc[j].name = ge_arena_strndup(&g->arena, name, n);
	g->coloc_n++;
	return &g->coloc[j];
}

/* The `_class` list of an op, or NULL. */
static const Tensorflow__AttrValue__ListValue *class_list(const ge_graph *g,
							  ge_opid id)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, "_class", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return NULL;
	return v->list;
}

static void coloc_build(ge_graph *g)
{
	g->coloc_built = 1;
	for (size_t i = 0; i < g->n_ops; i++) {
		ge_op *o = &g->ops[i];
		if (o->flags & OPF_DEAD)
			continue;
		/* most ops have no _class: look at the bytes before splitting */
		if (!(o->flags & OPF_SPLIT) && o->raw &&
		    !memmem(o->raw, o->raw_len, "_class", 6))
			continue;
		const Tensorflow__AttrValue__ListValue *l =
			class_list(g, (ge_opid)i);
		for (size_t k = 0; l && k < l->n_s; k++)
			if (l->s[k].len > 5 && !memcmp(l->s[k].data, "loc:@", 5))
				ge_opvec_push(&coloc_slot(g,
							  (const char *)l->s[k].data + 5,
							  l->s[k].len - 5, 1)->ops,
					      (ge_opid)i);
	}
}

/* Ops colocated with `from` follow its rename to `to`. */
static void coloc_rename(ge_graph *g, const char *from, const char *to)
{
	if (!g->coloc_built)
		coloc_build(g);
	struct ge_coloc *c = coloc_slot(g, from, strlen(from), 0);
	if (!c || !c->ops.n)
		return;
	ge_opvec ops = c->ops;
	c->ops = (ge_opvec)GE_VEC_INIT;
	size_t fl = strlen(from), tl = strlen(to);
	for (size_t i = 0; i < ops.n; i++) {
		ge_opid id = ops.v[i];
		if (!ge_op_alive(g, id))
			continue;
		const Tensorflow__AttrValue__ListValue *l = class_list(g, id);
		if (!l)
			continue;
		Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
		Tensorflow__AttrValue__ListValue nl =
			TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
		ProtobufCBinaryData *ss = ge_xmalloc((l->n_s + 1) * sizeof *ss);
		int changed = 0;
		for (size_t k = 0; k < l->n_s; k++) {
			ss[k] = l->s[k];
			if (l->s[k].len == fl + 5 &&
			    !memcmp(l->s[k].data, "loc:@", 5) &&
			    !memcmp(l->s[k].data + 5, from, fl)) {
				uint8_t *b = ge_xmalloc(tl + 5);
				memcpy(b, "loc:@", 5);
				memcpy(b + 5, to, tl);
				ss[k] = (ProtobufCBinaryData){tl + 5, b};
				changed = 1;
			}
		}
		nl.n_s = l->n_s;
		nl.s = ss;
		v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
		v.list = &nl;
		if (changed) {
			size_t n = tensorflow__attr_value__get_packed_size(&v);
			uint8_t *b = ge_xmalloc(n ? n : 1);
			tensorflow__attr_value__pack(&v, b);
			for (size_t k = 0; k < l->n_s; k++)
				if (ss[k].data != l->s[k].data)
					free(ss[k].data);
			set_attr_raw(g, id, "_class", b, n);
			free(b);
		}
		free(ss);
		ge_opvec_push(&coloc_slot(g, to, tl, 1)->ops, id);
	}
	ge_opvec_free(&ops);
}

int ge_op_set_name(ge_graph *g, ge_opid id, const char *name, ge_error *err)
{
	if (!ge_op_alive(g, id))
		return ge_err(err, GE_EINVAL, "op %u is not in the graph", id);
	if (!*name)
		return ge_err(err, GE_EINVAL, "op names cannot be empty");
	if (strcmp(name, g->ops[id].name) == 0)
		return GE_OK;
	ge_opid other = ge_graph_find(g, name);
	if (other != GE_NOOP)
		return ge_err(err, GE_EINVAL,
			      "cannot rename '%s' to '%s': name already taken",
			      g->ops[id].name, name);
	char *old = (char *)g->ops[id].name;
	ge_names_release(g, id);
	idx_del(g, id);
	g->ops[id].name = ge_arena_strdup(&g->arena, name);
	ge_idx_add(g, id);
	touch(g, id);
	/* Consumers spell the producer's name in their inputs. */
	ge_op *o = OP(g, id);
	for (uint32_t i = 0; i < o->n_uses; i++)
		g->ops[o->uses[i].op].flags |= OPF_EDIT;
	for (uint32_t i = 0; i < o->n_couts; i++)
		g->ops[o->couts[i]].flags |= OPF_EDIT;
	coloc_rename(g, old, name);
	for (size_t i = 0; i < g->n_hooks; i++)
		if (g->hooks[i]->on_rename)
			g->hooks[i]->on_rename(g, old, name);
	return GE_OK;
}

void ge_op_set_type(ge_graph *g, ge_opid id, const char *type)
{
	g->ops[id].type = ge_intern(g, type, strlen(type));
	g->ops[id].nout = -1;
	touch(g, id);
}

void ge_op_set_device(ge_graph *g, ge_opid id, const char *device)
{
	g->ops[id].device = ge_intern(g, device ? device : "",
				   device ? strlen(device) : 0);
	touch(g, id);
}

/* ------------------------------------------------------------ edges */

size_t ge_op_num_inputs(const ge_graph *g, ge_opid id)
{
	return OP(g, id)->n_in;
}

size_t ge_op_num_control_inputs(const ge_graph *g, ge_opid id)
{
	return OP(g, id)->n_ctrl;
}

ge_tref ge_op_input(const ge_graph *g, ge_opid id, size_t i)
{
	ge_tref t = OP(g, id)->in[i];
	if (t.op == GE_NOOP) {
		/* dangling: report the index the text names */
		const char *s = g->dangling[t.index];
		size_t off, len;
		int32_t index = 0;
		ge_parse_input(s, strlen(s), &off, &len, &index);
		t.index = index;
	}
	return t;
}

ge_opid ge_op_control_input(const ge_graph *g, ge_opid id, size_t i)
{
	const ge_op *o = OP(g, id);
	return o->in[o->n_in + i].op;
}

const char *ge_op_dangling_input(const ge_graph *g, ge_opid id, size_t i)
{
	const ge_op *o = OP(g, id);
	if (i >= o->n_in + o->n_ctrl || o->in[i].op != GE_NOOP)
		return NULL;
	return g->dangling[o->in[i].index];
}

const ge_use *ge_op_uses(const ge_graph *g, ge_opid id, size_t *n)
{
	*n = OP(g, id)->n_uses;
	return OP(g, id)->uses;
}

const ge_opid *ge_op_control_outputs(const ge_graph *g, ge_opid id, size_t *n)
{
	*n = OP(g, id)->n_couts;
	return OP(g, id)->couts;
}

size_t ge_tensor_consumers(const ge_graph *g, ge_tref t, ge_opid *out,
			   size_t cap)
{
	if (t.op == GE_NOOP || t.op >= g->n_ops)
		return 0;
	const ge_op *p = OP(g, t.op);
	size_t k = 0;
	ge_opid last = GE_NOOP;
	for (uint32_t i = 0; i < p->n_uses; i++) {
		const ge_use *u = &p->uses[i];
		if (g->ops[u->op].in[u->slot].index != t.index || u->op == last)
			continue;
		if (k < cap)
			out[k] = u->op;
		k++;
		last = u->op;
	}
	return k;
}

/* Edge arrays keep no capacity field: a heap array always has room for
 * the next power of two at or above its length (at least 4), so it must
 * grow exactly when its length is such a power.  A pooled array (from the
 * load) is full; its first growth moves it to the heap. */
size_t ge_edge_room(uint32_t n)
{
	size_t c = 4;
	while (c < n)
		c *= 2;
	return c;
}

void *ge_edge_make_room(void *a, uint32_t n, size_t elsz, uint32_t *flags,
			uint32_t owned_flag)
{
	if (*flags & owned_flag) {
		if (n < 4 || (n & (n - 1)))
			return a;
		return ge_xrealloc(a, ge_edge_room(n + 1) * elsz);
	}
	void *b = ge_xmalloc(ge_edge_room(n + 1) * elsz);
	if (n)
		memcpy(b, a, (size_t)n * elsz);
	*flags |= owned_flag;
	return b;
}

static void in_grow(ge_op *o)
{
	o->in = ge_edge_make_room(o->in, o->n_in + o->n_ctrl, sizeof *o->in,
				  &o->flags, OPF_IN_OWNED);
}

static void uses_insert(ge_op *p, ge_use u)
{
	p->uses = ge_edge_make_room(p->uses, p->n_uses, sizeof *p->uses,
				    &p->flags, OPF_USES_OWNED);
	/* binary search for the first entry greater than u */
	uint32_t lo = 0, hi = p->n_uses;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const ge_use *m = &p->uses[mid];
		if (m->op < u.op || (m->op == u.op && m->slot < u.slot))
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(p->uses + lo + 1, p->uses + lo,
		(p->n_uses - lo) * sizeof *p->uses);
	p->uses[lo] = u;
	p->n_uses++;
}

static void uses_remove(ge_op *p, ge_use u)
{
	uint32_t lo = 0, hi = p->n_uses;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const ge_use *m = &p->uses[mid];
		if (m->op < u.op || (m->op == u.op && m->slot < u.slot))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->n_uses && p->uses[lo].op == u.op &&
	    p->uses[lo].slot == u.slot) {
		memmove(p->uses + lo, p->uses + lo + 1,
			(p->n_uses - lo - 1) * sizeof *p->uses);
		p->n_uses--;
	}
}

/* Slots of a consumer after position `from` moved by `delta`: its entries
 * in the producers' use lists must follow. */
static void uses_renumber(ge_graph *g, ge_opid c, uint32_t from, int delta)
{
	ge_op *o = OP(g, c);
	for (uint32_t s = from; s < o->n_in; s++) {
		ge_tref t = o->in[s];
		if (t.op == GE_NOOP)
			continue;
		ge_op *p = OP(g, t.op);
		/* entries of c in p are contiguous and sorted by slot */
		for (uint32_t i = 0; i < p->n_uses; i++)
			if (p->uses[i].op == c &&
			    p->uses[i].slot == (uint32_t)((int)s - delta))
				p->uses[i].slot = s;
	}
}

static void couts_insert(ge_op *p, ge_opid c)
{
	p->couts = ge_edge_make_room(p->couts, p->n_couts, sizeof *p->couts,
				     &p->flags, OPF_COUTS_OWNED);
	uint32_t lo = 0, hi = p->n_couts;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->couts[mid] <= c)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(p->couts + lo + 1, p->couts + lo,
		(p->n_couts - lo) * sizeof *p->couts);
	p->couts[lo] = c;
	p->n_couts++;
}

static void couts_remove(ge_op *p, ge_opid c)
{
	for (uint32_t i = 0; i < p->n_couts; i++)
		if (p->couts[i] == c) {
			memmove(p->couts + i, p->couts + i + 1,
				(p->n_couts - i - 1) * sizeof *p->couts);
			p->n_couts--;
			return;
		}
}

static int check_live(const ge_graph *g, ge_opid id, ge_error *err)
{
	if (id >= g->n_ops)
		return ge_err(err, GE_EINVAL, "no op with id %u", id);
	if (g->ops[id].flags & OPF_DEAD)
		return ge_err(err, GE_EINVAL,
			      "op '%s' was removed from the graph",
			      g->ops[id].name);
	return GE_OK;
}

/* The edit primitives accept any output index of a live op: ops are
 * wired before their attrs make their output count known (stand-ins of a
 * copy, ops built attr by attr).  ge_graph_check_tensor is the rule for
 * what an edit of the editor layer reads. */
static int check_tensor(const ge_graph *g, ge_tref t, ge_error *err)
{
	int rc = check_live(g, t.op, err);
	if (rc)
		return rc;
	if (t.index < 0)
		return ge_err(err, GE_EINVAL, "bad output index %d of '%s'",
			      t.index, g->ops[t.op].name);
	return GE_OK;
}

int ge_op_add_input(ge_graph *g, ge_opid id, ge_tref t, ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)) || (rc = check_tensor(g, t, err)))
		return rc;
	ge_op *o = OP(g, id);
	in_grow(o);
	memmove(o->in + o->n_in + 1, o->in + o->n_in,
		o->n_ctrl * sizeof *o->in);
	o->in[o->n_in] = t;
	uses_insert(OP(g, t.op), (ge_use){id, o->n_in});
	o->n_in++;
	touch(g, id);
	return GE_OK;
}

int ge_op_set_input(ge_graph *g, ge_opid id, size_t i, ge_tref t,
		    ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)) || (rc = check_tensor(g, t, err)))
		return rc;
	ge_op *o = OP(g, id);
	if (i >= o->n_in)
		return ge_err(err, GE_EINVAL,
			      "op '%s' has %u inputs; no input %zu", o->name,
			      o->n_in, i);
	ge_tref old = o->in[i];
	if (ge_tref_eq(old, t))
		return GE_OK;
	if (old.op != GE_NOOP)
		uses_remove(OP(g, old.op), (ge_use){id, (uint32_t)i});
	o->in[i] = t;
	uses_insert(OP(g, t.op), (ge_use){id, (uint32_t)i});
	touch(g, id);
	return GE_OK;
}

/* (producer, use) pairs, sorted by producer then use. */
struct pu {
	ge_opid p;
	ge_use u;
};

static int cmp_pu(const void *a, const void *b)
{
	const struct pu *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	if (x->u.op != y->u.op)
		return x->u.op < y->u.op ? -1 : 1;
	return x->u.slot < y->u.slot ? -1 : x->u.slot > y->u.slot;
}

int ge_graph_set_inputs(ge_graph *g, const ge_input_edit *e, size_t n,
			ge_error *err)
{
	int rc;
	for (size_t i = 0; i < n; i++) {
		if ((rc = check_live(g, e[i].op, err)) ||
		    (rc = check_tensor(g, e[i].t, err)))
			return rc;
		if (e[i].slot >= g->ops[e[i].op].n_in)
			return ge_err(err, GE_EINVAL,
				      "op '%s' has %u inputs; no input %u",
				      g->ops[e[i].op].name,
				      g->ops[e[i].op].n_in, e[i].slot);
	}
	ge_opid *olds = ge_xmalloc((n + 1) * sizeof *olds);
	struct pu *adds = ge_xmalloc((n + 1) * sizeof *adds);
	size_t no = 0, na = 0;
	for (size_t i = 0; i < n; i++) {
		ge_op *o = OP(g, e[i].op);
		ge_tref old = o->in[e[i].slot];
		if (ge_tref_eq(old, e[i].t))
			continue;
		o->in[e[i].slot] = e[i].t;
		o->flags |= OPF_EDIT;
		if (old.op == e[i].t.op)
			continue; /* another output of the same producer */
		if (old.op != GE_NOOP)
			olds[no++] = old.op;
		adds[na++] = (struct pu){e[i].t.op, {e[i].op, e[i].slot}};
	}
	/* batches made in node order (insert.c) come sorted */
	size_t so = 1, sa = 1;
	while (so < no && olds[so - 1] <= olds[so])
		so++;
	while (sa < na && cmp_pu(&adds[sa - 1], &adds[sa]) <= 0)
		sa++;
	/* A use stays on a producer's list while its slot still reads it. */
	if (so < no)
		qsort(olds, no, sizeof *olds, ge_opid_cmp);
	for (size_t i = 0; i < no; i++) {
		if (i && olds[i] == olds[i - 1])
			continue;
		ge_op *p = OP(g, olds[i]);
		uint32_t w = 0;
		for (uint32_t k = 0; k < p->n_uses; k++) {
			ge_use u = p->uses[k];
			const ge_op *c = OP(g, u.op);
			if (u.slot < c->n_in && c->in[u.slot].op == olds[i])
				p->uses[w++] = u;
		}
		p->n_uses = w;
	}
	/* Merge the new uses into each producer's sorted list. */
	if (sa < na)
		qsort(adds, na, sizeof *adds, cmp_pu);
	for (size_t i = 0; i < na;) {
		size_t j = i;
		while (j < na && adds[j].p == adds[i].p)
			j++;
		ge_op *p = OP(g, adds[i].p);
		uint32_t total = p->n_uses + (uint32_t)(j - i);
		ge_use *m = ge_xmalloc(ge_edge_room(total) * sizeof *m);
		uint32_t a = 0, b = (uint32_t)i, w = 0;
		while (a < p->n_uses || b < j) {
			if (b >= j ||
			    (a < p->n_uses &&
			     (p->uses[a].op < adds[b].u.op ||
			      (p->uses[a].op == adds[b].u.op &&
			       p->uses[a].slot < adds[b].u.slot))))
				m[w++] = p->uses[a++];
			else
				m[w++] = adds[b++].u;
		}
		if (p->flags & OPF_USES_OWNED)
			free(p->uses);
		p->uses = m;
		p->n_uses = w;
		p->flags |= OPF_USES_OWNED;
		i = j;
	}
	free(olds);
	free(adds);
	if (n)
		g->version++;
	return GE_OK;
}

int ge_op_remove_input(ge_graph *g, ge_opid id, size_t i, ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)))
		return rc;
	ge_op *o = OP(g, id);
	if (i >= o->n_in)
		return ge_err(err, GE_EINVAL,
			      "op '%s' has %u inputs; no input %zu", o->name,
			      o->n_in, i);
	ge_tref old = o->in[i];
	if (old.op != GE_NOOP)
		uses_remove(OP(g, old.op), (ge_use){id, (uint32_t)i});
	memmove(o->in + i, o->in + i + 1,
		(o->n_in + o->n_ctrl - i - 1) * sizeof *o->in);
	o->n_in--;
	uses_renumber(g, id, (uint32_t)i, -1);
	touch(g, id);
	return GE_OK;
}

int ge_op_add_control_input(ge_graph *g, ge_opid id, ge_opid c, ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)) || (rc = check_live(g, c, err)))
		return rc;
	ge_op *o = OP(g, id);
	for (uint32_t k = 0; k < o->n_ctrl; k++)
		if (o->in[o->n_in + k].op == c)
			return ge_err(err, GE_EINVAL,
				      "'%s' is already a control input of '%s'",
				      g->ops[c].name, o->name);
	in_grow(o);
	o->in[o->n_in + o->n_ctrl] = (ge_tref){c, GE_CONTROL};
	o->n_ctrl++;
	couts_insert(OP(g, c), id);
	touch(g, id);
	return GE_OK;
}

int ge_op_remove_control_input(ge_graph *g, ge_opid id, ge_opid c,
			       ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)))
		return rc;
	ge_op *o = OP(g, id);
	for (uint32_t k = 0; k < o->n_ctrl; k++) {
		ge_tref *t = &o->in[o->n_in + k];
		if (t->op != c)
			continue;
		memmove(t, t + 1, (o->n_ctrl - k - 1) * sizeof *t);
		o->n_ctrl--;
		couts_remove(OP(g, c), id);
		touch(g, id);
		return GE_OK;
	}
	return ge_err(err, GE_ENOTFOUND, "'%s' is not a control input of '%s'",
		      c < g->n_ops ? g->ops[c].name : "?", o->name);
}

void ge_op_clear_control_inputs(ge_graph *g, ge_opid id)
{
	ge_op *o = OP(g, id);
	if (!o->n_ctrl)
		return;
	for (uint32_t k = 0; k < o->n_ctrl; k++) {
		ge_tref t = o->in[o->n_in + k];
		if (t.op != GE_NOOP)
			couts_remove(OP(g, t.op), id);
	}
	o->n_ctrl = 0;
	touch(g, id);
}

ge_opid ge_new_op(ge_graph *g, const char *nm, const char *itype,
		  const char *idevice)
{
	if (g->n_ops == g->cap_ops) {
		g->cap_ops = g->cap_ops ? g->cap_ops * 2 : 64;
		g->ops = ge_big_realloc(g->ops, g->cap_ops * sizeof *g->ops);
	}
	ge_opid id = (ge_opid)g->n_ops++;
	ge_op *o = &g->ops[id];
	memset(o, 0, sizeof *o);
	o->name = nm;
	o->type = itype;
	o->device = idevice;
	o->nout = -1;
	g->n_live++;
	return id;
}

static ge_opid new_op(ge_graph *g, const char *name, size_t name_len,
		      const char *type, size_t type_len)
{
	return ge_new_op(g, ge_arena_strndup(&g->arena, name, name_len),
			 ge_intern(g, type, type_len), ge_intern(g, "", 0));
}

ge_opid ge_graph_add_op(ge_graph *g, const char *name, const char *type,
			ge_error *err)
{
	if (!name || !*name) {
		ge_err(err, GE_EINVAL, "op names cannot be empty");
		return GE_NOOP;
	}
	if (!type || !*type) {
		ge_err(err, GE_EINVAL, "op '%s' needs a type", name);
		return GE_NOOP;
	}
	if (ge_graph_find(g, name) != GE_NOOP) {
		ge_err(err, GE_EINVAL, "an op named '%s' already exists", name);
		return GE_NOOP;
	}
	if (g->n_ops >= 0xfffffff0u) {
		ge_err(err, GE_EINVAL, "too many ops");
		return GE_NOOP;
	}
	ge_opid id = new_op(g, name, strlen(name), type, strlen(type));
	g->ops[id].flags |= OPF_EDIT;
	ge_idx_add(g, id);
	g->version++;
	return id;
}

size_t ge_add_dangling(ge_graph *g, const char *s, size_t n)
{
	if (g->n_dangling == g->cap_dangling) {
		g->cap_dangling = g->cap_dangling ? g->cap_dangling * 2 : 8;
		g->dangling = ge_xrealloc(g->dangling,
					  g->cap_dangling * sizeof *g->dangling);
	}
	g->dangling[g->n_dangling] = ge_xstrndup(s, n);
	return g->n_dangling++;
}

int ge_graph_remove_op(ge_graph *g, ge_opid id, int force, ge_error *err)
{
	int rc;
	if ((rc = check_live(g, id, err)))
		return rc;
	ge_op *o = OP(g, id);
	if (!force && (o->n_uses || o->n_couts)) {
		if (o->n_uses) {
			const ge_use *u = &o->uses[0];
			return ge_err(err, GE_EGRAPH,
				      "cannot remove '%s': '%s' reads '%s:%d'",
				      o->name, g->ops[u->op].name, o->name,
				      g->ops[u->op].in[u->slot].index);
		}
		return ge_err(err, GE_EGRAPH,
			      "cannot remove '%s': '%s' has it as a control "
			      "input",
			      o->name, g->ops[o->couts[0]].name);
	}
	/* Consumers keep a dangling reference, so nothing is silently
	 * rewired; validate reports them. */
	char buf[64];
	for (uint32_t i = 0; i < o->n_uses; i++) {
		ge_use u = o->uses[i];
		ge_op *c = OP(g, u.op);
		ge_buf s = GE_BUF_INIT;
		ge_buf_adds(&s, o->name);
		if (c->in[u.slot].index > 0) {
			snprintf(buf, sizeof buf, ":%d", c->in[u.slot].index);
			ge_buf_adds(&s, buf);
		}
		c->in[u.slot] = (ge_tref){GE_NOOP,
					  (int32_t)ge_add_dangling(g, (char *)s.data,
								s.len)};
		ge_buf_free(&s);
		c->flags |= OPF_EDIT;
	}
	o->n_uses = 0;
	for (uint32_t i = 0; i < o->n_couts; i++) {
		ge_op *c = OP(g, o->couts[i]);
		ge_buf s = GE_BUF_INIT;
		ge_buf_addc(&s, '^');
		ge_buf_adds(&s, o->name);
		for (uint32_t k = 0; k < c->n_ctrl; k++)
			if (c->in[c->n_in + k].op == id) {
				c->in[c->n_in + k] = (ge_tref){
					GE_NOOP, (int32_t)ge_add_dangling(
							 g, (char *)s.data, s.len)};
				break;
			}
		ge_buf_free(&s);
		c->flags |= OPF_EDIT;
	}
	o->n_couts = 0;
	/* Drop its own edges from its producers' lists. */
	for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
		ge_tref t = o->in[s];
		if (t.op == GE_NOOP)
			continue;
		if (s < o->n_in)
			uses_remove(OP(g, t.op), (ge_use){id, s});
		else
			couts_remove(OP(g, t.op), id);
	}
	o->n_in = o->n_ctrl = 0;
	ge_names_release(g, id);
	if (!(o->flags & OPF_DUPNAME))
		idx_del(g, id);
	o->flags |= OPF_DEAD;
	g->n_live--;
	g->version++;
	for (size_t i = 0; i < g->n_hooks; i++)
		if (g->hooks[i]->on_remove)
			g->hooks[i]->on_remove(g, o->name);
	return GE_OK;
}

/* ------------------------------------------------------------ attrs */

static void split_attrs(const ge_graph *g, ge_opid id)
{
	ge_op *o = OP(g, id);
	if (o->flags & OPF_SPLIT)
		return;
	o->flags |= OPF_SPLIT;
	if (!o->raw)
		return;
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len, *val;
	const char *key;
	size_t keylen, vallen, n = 0;
	while (ge_wire_attr_next(&p, end, &key, &keylen, &val, &vallen))
		n++;
	/* exactly n entries from the arena (const_cast: logically part of
	 * the cache), not owned: a later attr moves them to the heap; an op
	 * not split has no entries yet */
	assert(!o->n_ents && !(o->flags & OPF_ENTS_OWNED));
	if (!n)
		return;
	o->ents = ge_arena_alloc((ge_arena *)&g->arena, n * sizeof *o->ents);
	for (p = o->raw; o->n_ents < n &&
	     ge_wire_attr_next(&p, end, &key, &keylen, &val, &vallen);) {
		ge_attr_ent *e = &o->ents[o->n_ents++];
		memset(e, 0, sizeof *e);
		e->key = ge_arena_strndup((ge_arena *)&g->arena, key, keylen);
		e->raw = val;
		e->len = vallen;
	}
}

static ge_attr_ent *find_ent(const ge_graph *g, ge_opid id, const char *name)
{
	split_attrs(g, id);
	ge_op *o = OP(g, id);
	for (uint32_t i = 0; i < o->n_ents; i++)
		if (strcmp(o->ents[i].key, name) == 0)
			return &o->ents[i];
	return NULL;
}

size_t ge_op_num_attrs(const ge_graph *g, ge_opid id)
{
	split_attrs(g, id);
	return OP(g, id)->n_ents;
}

const char *ge_op_attr_name(const ge_graph *g, ge_opid id, size_t i)
{
	split_attrs(g, id);
	return i < OP(g, id)->n_ents ? OP(g, id)->ents[i].key : NULL;
}

const Tensorflow__AttrValue *ge_op_attr(const ge_graph *g, ge_opid id,
					const char *name, ge_error *err)
{
	ge_attr_ent *e = find_ent(g, id, name);
	if (!e)
		return NULL;
	if (!e->val) {
		e->val = (Tensorflow__AttrValue *)ge_pb_unpack(
		&tensorflow__attr_value__descriptor, e->len, e->raw);
		if (!e->val)
			ge_err(err, GE_EFORMAT,
			       "%s: node '%s': attr '%s' does not decode as an "
			       "AttrValue",
			       g->name, OP(g, id)->name, name);
	}
	return e->val;
}

const uint8_t *ge_op_attr_raw(const ge_graph *g, ge_opid id, const char *name,
			      size_t *len)
{
	ge_attr_ent *e = find_ent(g, id, name);
	if (!e)
		return NULL;
	*len = e->len;
	return e->raw;
}

void ge_op_set_attr_raw(ge_graph *g, ge_opid id, const char *name,
			const uint8_t *bytes, size_t len)
{
	if (!strcmp(name, "_class"))
		ge_coloc_drop(g);
	set_attr_raw(g, id, name, bytes, len);
}

static void set_attr_raw(ge_graph *g, ge_opid id, const char *name,
			 const uint8_t *bytes, size_t len)
{
	ge_attr_ent *e = find_ent(g, id, name);
	ge_op *o = OP(g, id);
	if (!e) {
		o->ents = ge_edge_make_room(o->ents, o->n_ents,
					    sizeof *o->ents, &o->flags,
					    OPF_ENTS_OWNED);
		e = &o->ents[o->n_ents++];
		memset(e, 0, sizeof *e);
		e->key = ge_arena_strdup(&g->arena, name);
	}
	uint8_t *copy = ge_xmalloc(len ? len : 1);
	if (len)
		memcpy(copy, bytes, len);
	free(e->owned);
	if (e->val)
		protobuf_c_message_free_unpacked(&e->val->base, NULL);
	e->val = NULL;
	e->owned = copy;
	e->raw = copy;
	e->len = len;
	o->nout = -1;
	touch(g, id);
}

void ge_op_add_attrs_raw(ge_graph *g, ge_opid id, size_t n,
			 const char *const *names,
			 const uint8_t *const *bytes, const size_t *lens)
{
	ge_op *o = OP(g, id);
	if (o->raw || o->n_ents) {
		for (size_t i = 0; i < n; i++)
			ge_op_set_attr_raw(g, id, names[i], bytes[i], lens[i]);
		return;
	}
	o->flags |= OPF_SPLIT;
	if (!n)
		return;
	/* exactly n entries, not owned: a later attr moves them to the heap
	 * (ge_edge_make_room) */
	if (o->flags & OPF_ENTS_OWNED)
		free(o->ents);
	o->flags &= ~(uint32_t)OPF_ENTS_OWNED;
	o->ents = ge_arena_alloc(&g->arena, n * sizeof *o->ents);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], "_class"))
			ge_coloc_drop(g);
		ge_attr_ent *e = &o->ents[o->n_ents++];
		memset(e, 0, sizeof *e);
		e->key = ge_intern(g, names[i], strlen(names[i]));
		uint8_t *copy = ge_arena_alloc(&g->arena, lens[i] ? lens[i] : 1);
		if (lens[i])
			memcpy(copy, bytes[i], lens[i]);
		e->raw = copy;
		e->len = lens[i];
	}
	o->nout = -1;
	touch(g, id);
}

void ge_op_set_attr(ge_graph *g, ge_opid id, const char *name,
		    const Tensorflow__AttrValue *v)
{
	size_t n = tensorflow__attr_value__get_packed_size(v);
	uint8_t *b = ge_xmalloc(n ? n : 1);
	tensorflow__attr_value__pack(v, b);
	ge_op_set_attr_raw(g, id, name, b, n);
	free(b);
}

int ge_op_remove_attr(ge_graph *g, ge_opid id, const char *name)
{
	if (!strcmp(name, "_class"))
		ge_coloc_drop(g);
	ge_attr_ent *e = find_ent(g, id, name);
	if (!e)
		return GE_ENOTFOUND;
	ge_op *o = OP(g, id);
	free(e->owned);
	if (e->val)
		protobuf_c_message_free_unpacked(&e->val->base, NULL);
	size_t i = (size_t)(e - o->ents);
	memmove(e, e + 1, (o->n_ents - i - 1) * sizeof *e);
	o->n_ents--;
	o->nout = -1;
	touch(g, id);
	return GE_OK;
}

int ge_op_attr_int(const ge_graph *g, ge_opid id, const char *name,
		   int64_t *out)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I)
		return -1;
	*out = v->i;
	return 0;
}

int ge_op_attr_type(const ge_graph *g, ge_opid id, const char *name, int *out)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
		return -1;
	*out = (int)v->type;
	return 0;
}

int ge_op_attr_string(const ge_graph *g, ge_opid id, const char *name,
		      const char **s, size_t *len)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S)
		return -1;
	*s = (const char *)v->s.data;
	*len = v->s.len;
	return 0;
}

/* ------------------------------------------------------------ outputs */

const Tensorflow__OpDef *ge_graph_opdef(const ge_graph *g, const char *type)
{
	if (g->oplist_idx) {
		const Tensorflow__OpDef *d =
			ge_oplist_index_find(g->oplist_idx, type);
		if (d)
			return d;
	}
	if (g->parent)
		return ge_graph_opdef(g->parent, type);
	const Tensorflow__OpDef *d = ge_opreg_find(type);
	if (d || !ge_parts.flib_opdef)
		return d;
	return ge_parts.flib_opdef(g, type);
}

static const Tensorflow__AttrValue *attr_or_default(const ge_graph *g,
						    ge_opid id,
						    const Tensorflow__OpDef *d,
						    const char *name)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, id, name, NULL);
	if (v)
		return v;
	for (size_t i = 0; i < d->n_attr; i++)
		if (strcmp(d->attr[i]->name, name) == 0)
			return d->attr[i]->default_value;
	return NULL;
}

int ge_op_arg_count(const ge_graph *g, ge_opid id, const Tensorflow__OpDef *d,
		    const Tensorflow__OpDef__ArgDef *a)
{
	if (a->number_attr && *a->number_attr) {
		const Tensorflow__AttrValue *v =
			attr_or_default(g, id, d, a->number_attr);
		if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I ||
		    v->i < 0 || v->i > 1000000)
			return -1;
		return (int)v->i;
	}
	if (a->type_list_attr && *a->type_list_attr) {
		const Tensorflow__AttrValue *v =
			attr_or_default(g, id, d, a->type_list_attr);
		if (!v)
			return -1;
		if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
			return 0;
		return (int)v->list->n_type;
	}
	return 1;
}

static int max_consumed_index(const ge_graph *g, ge_opid id)
{
	const ge_op *o = OP(g, id);
	int m = -1;
	for (uint32_t i = 0; i < o->n_uses; i++) {
		int k = g->ops[o->uses[i].op].in[o->uses[i].slot].index;
		if (k > m)
			m = k;
	}
	return m;
}

int ge_op_num_outputs(const ge_graph *g, ge_opid id)
{
	ge_op *o = OP(g, id);
	if (o->nout >= 0)
		return o->nout;
	int n = -1;
	const Tensorflow__OpDef *d = ge_graph_opdef(g, o->type);
	if (d) {
		n = 0;
		for (size_t i = 0; i < d->n_output_arg; i++) {
			int k = ge_op_arg_count(g, id, d, d->output_arg[i]);
			if (k < 0) {
				n = -1;
				break;
			}
			n += k;
		}
	}
	if (n < 0) {
		const Tensorflow__AttrValue *v =
			ge_op_attr(g, id, "_output_shapes", NULL);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		    v->list->n_shape)
			n = (int)v->list->n_shape;
	}
	if (n < 0) {
		n = max_consumed_index(g, id) + 1;
		if (n < 1)
			n = 1;
		/* depends on consumers, which change: do not cache */
		return n;
	}
	o->nout = n;
	return n;
}

/* The bytes of attr `name` as find_ent finds them (the first entry), read
 * in place when the op's attrs are not split: a read never splits them. */
static const uint8_t *attr_bytes(const ge_graph *g, ge_opid id,
				 const char *name, size_t *len,
				 const ge_attr_ent **ent)
{
	const ge_op *o = OP(g, id);
	*ent = NULL;
	if (o->flags & OPF_SPLIT) {
		for (uint32_t i = 0; i < o->n_ents; i++)
			if (!strcmp(o->ents[i].key, name)) {
				*ent = &o->ents[i];
				*len = o->ents[i].len;
				return o->ents[i].raw;
			}
		return NULL;
	}
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len, *val;
	const char *key;
	size_t kl, nl = strlen(name);
	while (p && ge_wire_attr_next(&p, end, &key, &kl, &val, len))
		if (kl == nl && !memcmp(key, name, nl))
			return val;
	return NULL;
}

/* A present type attr's value as decoding gives it (0 when the last field
 * of the AttrValue's oneof, each of its wire type, is not `type`): 1 and
 * *t; 0 when absent or not plainly well formed (then decode instead). */
static int attr_type_in_place(const ge_graph *g, ge_opid id, const char *name,
			      int *t)
{
	static const uint8_t wt[11] = {0, 2, 2, 0, 5, 0, 0, 2, 2, 2, 2};
	const ge_attr_ent *e;
	size_t n;
	const uint8_t *b = attr_bytes(g, id, name, &n, &e);
	if (!b || (e && e->val))
		return 0;
	ge_wire w = ge_wire_of(b, n);
	ge_wire_field f;
	uint32_t last = 0;
	while (ge_wire_next(&w, &f)) {
		if (f.num < 1 || f.num > 10)
			continue;
		if (f.wt != wt[f.num])
			return 0;
		last = f.num;
		*t = (int)(uint32_t)f.v;
	}
	if (w.bad)
		return 0;
	if (last != GE_ATTR_TYPE)
		*t = 0;
	return 1;
}

int ge_op_output_dtype(const ge_graph *g, ge_opid id, int index)
{
	const ge_op *o = OP(g, id);
	const Tensorflow__OpDef *d = ge_graph_opdef(g, o->type);
	if (!d || index < 0)
		return 0;
	int base = 0;
	for (size_t i = 0; i < d->n_output_arg; i++) {
		const Tensorflow__OpDef__ArgDef *a = d->output_arg[i];
		int k = ge_op_arg_count(g, id, d, a);
		if (k < 0)
			return 0;
		if (index < base + k) {
			if (a->type != 0)
				return a->type;
			if (a->type_attr && *a->type_attr) {
				int t;
				if (attr_type_in_place(g, id, a->type_attr, &t))
					return t;
				const Tensorflow__AttrValue *v =
					attr_or_default(g, id, d, a->type_attr);
				if (v && v->value_case ==
						 TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
					return v->type;
				return 0;
			}
			if (a->type_list_attr && *a->type_list_attr) {
				const Tensorflow__AttrValue *v = attr_or_default(
					g, id, d, a->type_list_attr);
				if (v && v->value_case ==
						 TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
				    (size_t)(index - base) < v->list->n_type)
					return v->list->type[index - base];
			}
			return 0;
		}
		base += k;
	}
	return 0;
}

static int shape_from_proto(const Tensorflow__TensorShapeProto *s,
			    int64_t *dims, int cap)
{
	if (!s || s->unknown_rank)
		return -1;
	for (size_t i = 0; i < s->n_dim && (int)i < cap; i++)
		dims[i] = s->dim[i]->size < 0 ? -1 : s->dim[i]->size;
	return (int)s->n_dim;
}

int ge_op_output_shape(const ge_graph *g, ge_opid id, int index,
		       int64_t *dims, int cap)
{
	const ge_op *o = OP(g, id);
	const ge_attr_ent *e;
	size_t n;
	const Tensorflow__AttrValue *v =
		attr_bytes(g, id, "_output_shapes", &n, &e) ?
			ge_op_attr(g, id, "_output_shapes", NULL) :
			NULL;
	if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
	    index >= 0 && (size_t)index < v->list->n_shape)
		return shape_from_proto(v->list->shape[index], dims, cap);
	if (index != 0)
		return -1;
	const char *t = o->type;
	if (!strcmp(t, "Placeholder") || !strcmp(t, "PlaceholderV2") ||
	    !strcmp(t, "PlaceholderWithDefault") || !strcmp(t, "VariableV2") ||
	    !strcmp(t, "Variable")) {
		v = ge_op_attr(g, id, "shape", NULL);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE)
			return shape_from_proto(v->shape, dims, cap);
		return -1;
	}
	if (!strcmp(t, "Const")) {
		v = ge_op_attr(g, id, "value", NULL);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
		    v->tensor->tensor_shape)
			return shape_from_proto(v->tensor->tensor_shape, dims,
						cap);
	}
	return -1;
}
