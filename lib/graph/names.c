/*
 * names.c: TensorFlow's unique names for new ops (ge_graph_unique_name),
 * and the op creation of the batch inserts that goes with them.
 *
 * Every name handed out is remembered (compared ignoring case) with the
 * next suffix to try, so that two calls never return the same name.  A
 * name given to an op made here is remembered by the name index while
 * the op holds it, and enters the table of names handed out only when
 * the op is removed or renamed: a batch of thousands of new ops then
 * fills one table, not two.  A name is hashed once (ge_hash_ci, the name
 * index's hash) for every table it is looked up or entered in.
 */
#include "graph/graph_copy.h"
#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ge_namectr {
	const char *name;  /* as first given (arena), compared ignoring case */
	uint32_t hash;
	uint32_t next;     /* next suffix to try */
};

static struct ge_namectr *used_find(const ge_graph *g, const char *s, size_t n,
				    uint32_t h)
{
	if (!g->used_cap)
		return NULL;
	size_t j = h & (g->used_cap - 1);
	while (g->used[j].name) {
		if (g->used[j].hash == h &&
		    strncasecmp(g->used[j].name, s, n) == 0 &&
		    g->used[j].name[n] == 0)
			return &g->used[j];
		j = (j + 1) & (g->used_cap - 1);
	}
	return NULL;
}

static void used_grow(ge_graph *g, size_t cap)
{
	struct ge_namectr *t = ge_big_alloc(cap * sizeof *t);
	for (size_t i = 0; i < g->used_cap; i++) {
		if (!g->used[i].name)
			continue;
		size_t j = g->used[i].hash & (cap - 1);
		while (t[j].name)
			j = (j + 1) & (cap - 1);
		t[j] = g->used[i];
	}
	ge_big_free(g->used);
	g->used = t;
	g->used_cap = cap;
}

/* Enters a name known to be absent; keep is its text, in the arena. */
static struct ge_namectr *used_new(ge_graph *g, const char *keep, uint32_t h)
{
	if ((g->used_n + 1) * 2 > g->used_cap)
		used_grow(g, g->used_cap ? g->used_cap * 2 : 64);
	size_t j = h & (g->used_cap - 1);
	while (g->used[j].name)
		j = (j + 1) & (g->used_cap - 1);
	g->used[j].name = keep;
	g->used[j].hash = h;
	g->used[j].next = 1;
	g->used_n++;
	return &g->used[j];
}

static struct ge_namectr *used_add(ge_graph *g, const char *s, size_t n,
				   uint32_t h)
{
	struct ge_namectr *e = used_find(g, s, n, h);
	return e ? e : used_new(g, ge_arena_strndup(&g->arena, s, n), h);
}

void ge_graph_reserve_ops(ge_graph *g, size_t n)
{
	/* the name index grows once, not at each doubling on the way (the
	 * load factor of ge_idx_insert_h) */
	if ((g->idx_used + n + 1) * 4 >= g->idx_cap * 3)
		ge_idx_grow(g, g->idx_used + n + 1);
	if (g->n_ops + n > g->cap_ops) {
		g->cap_ops = g->n_ops + n;
		g->ops = ge_big_realloc(g->ops, g->cap_ops * sizeof *g->ops);
	}
}

static int name_in_use(const ge_graph *g, const char *s, size_t n, uint32_t h)
{
	return ge_idx_find_h(g, s, n, 1, h) != GE_NOOP || used_find(g, s, n, h);
}

/* ge_graph_unique_name for the n bytes of name (NUL-terminated there),
 * whose ge_hash_ci is h; also gives the ge_hash_ci of the result. */
static const char *unique_name_h(ge_graph *g, const char *name, size_t n,
				 uint32_t h, uint32_t *hash, int for_op,
				 int keep)
{
	if (!name_in_use(g, name, n, h)) {
		/* one copy: the op's name and the entry's */
		const char *r = keep ? name
				     : ge_arena_strndup(&g->arena, name, n);
		if (!for_op)
			used_new(g, r, h);
		*hash = h;
		return r;
	}
	struct ge_namectr *e = used_find(g, name, n, h);
	uint32_t i = e ? e->next : 1;
	ge_buf b = GE_BUF_INIT;
	for (;; i++) {
		b.len = 0;
		ge_buf_printf(&b, "%s_%u", name, i);
		uint32_t hh = ge_hash_ci(b.data, b.len);
		if (!name_in_use(g, (char *)b.data, b.len, hh))
			break;
	}
	/* used_add may move the table: look the base entry up again */
	used_add(g, name, n, h)->next = i + 1;
	*hash = ge_hash_ci(b.data, b.len);
	const char *r = ge_arena_strndup(&g->arena, (char *)b.data, b.len);
	if (!for_op)
		used_new(g, r, *hash);
	ge_buf_free(&b);
	return r;
}

const char *ge_graph_unique_name(ge_graph *g, const char *name)
{
	uint32_t h;
	size_t n = strlen(name);
	return unique_name_h(g, name, n, ge_hash_ci(name, n), &h, 0, 0);
}

ge_opid ge_add_op_unique(ge_graph *g, const char *name, size_t n,
			 uint32_t hash, int keep, const char *itype,
			 const char *idevice)
{
	uint32_t h;
	/* the name index holds the name while the op has it: it joins the
	 * names handed out only when the op leaves (ge_names_release) */
	ge_opid id = ge_new_op(g, unique_name_h(g, name, n, hash, &h, 1, keep),
			       itype, idevice);
	g->ops[id].flags = OPF_DIRTY | OPF_NAMED;
	ge_idx_insert_h(g, id, h);
	g->version++;
	return id;
}

void ge_names_copy(ge_graph *dst, const ge_graph *src)
{
	if (!src->used_cap)
		return;
	/* the same size and hashes: each entry keeps its slot */
	dst->used = ge_big_alloc(src->used_cap * sizeof *dst->used);
	dst->used_cap = src->used_cap;
	dst->used_n = src->used_n;
	for (size_t i = 0; i < src->used_cap; i++) {
		if (!src->used[i].name)
			continue;
		dst->used[i] = src->used[i];
		dst->used[i].name = ge_arena_strdup(&dst->arena,
						    src->used[i].name);
	}
}

int ge_name_free(const ge_graph *g, const char *s, size_t n, uint32_t h)
{
	return !name_in_use(g, s, n, h);
}

size_t ge_names_handed_out_n(const ge_graph *g)
{
	return g->used_n;
}

int ge_names_handed_out_under(const ge_graph *g, const char *prefix,
			      size_t n)
{
	for (size_t j = 0; j < g->used_cap; j++)
		if (g->used[j].name &&
		    strncasecmp(g->used[j].name, prefix, n) == 0)
			return 1;
	return 0;
}

int ge_name_handed_out(const ge_graph *g, const char *s, size_t n,
		       uint32_t h)
{
	return used_find(g, s, n, h) != NULL;
}

void ge_names_prefetch(const ge_graph *g, uint32_t h)
{
	if (g->idx_cap)
		__builtin_prefetch(&g->idx[h & (g->idx_cap - 1)]);
	if (g->used_cap)
		__builtin_prefetch(&g->used[h & (g->used_cap - 1)]);
}

void ge_names_release(ge_graph *g, ge_opid id)
{
	ge_op *o = &g->ops[id];
	if (!(o->flags & OPF_NAMED))
		return;
	o->flags &= ~(uint32_t)OPF_NAMED;
	size_t n = strlen(o->name);
	uint32_t h = ge_hash_ci(o->name, n);
	if (!used_find(g, o->name, n, h))
		used_new(g, o->name, h);
}
