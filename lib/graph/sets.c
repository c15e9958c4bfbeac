/* sets.c: op sets, tensor maps and sets, cached regexes (sets.h). */
#include "graph/sets.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ sets */

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

void ge_opset_init(ge_opset *s, const ge_graph *g)
{
	s->cap = round64(g ? ge_graph_capacity(g) : 0);
	s->bits = ge_xcalloc(s->cap / 64 + 1, sizeof *s->bits);
}

void ge_opset_free(ge_opset *s)
{
	free(s->bits);
	s->bits = NULL;
	s->cap = 0;
}

static void opset_grow(ge_opset *s, ge_opid id)
{
	size_t cap = s->cap ? s->cap : 64;
	while (cap <= id)
		cap *= 2;
	cap = round64(cap);
	s->bits = ge_xrealloc(s->bits, (cap / 64 + 1) * sizeof *s->bits);
	memset(s->bits + s->cap / 64, 0,
	       (cap / 64 + 1 - s->cap / 64) * sizeof *s->bits);
	s->cap = cap;
}

void ge_opset_add(ge_opset *s, ge_opid id)
{
	if (id >= s->cap)
		opset_grow(s, id);
	s->bits[id >> 6] |= (uint64_t)1 << (id & 63);
}

int ge_opset_insert(ge_opset *s, ge_opid id)
{
	if (id >= s->cap)
		opset_grow(s, id);
	uint64_t m = (uint64_t)1 << (id & 63);
	if (s->bits[id >> 6] & m)
		return 0;
	s->bits[id >> 6] |= m;
	return 1;
}

void ge_opset_add_list(ge_opset *s, const ge_opid *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ge_opset_add(s, ops[i]);
}

struct ge_tmap_ent {
	ge_tref key; /* key.op == GE_NOOP: empty */
	size_t val;
};

static size_t thash(ge_tref t)
{
	uint64_t x = ((uint64_t)t.op << 32) ^ (uint32_t)t.index;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (size_t)x;
}

static void tmap_alloc(ge_tmap *m, size_t cap)
{
	m->cap = cap;
	m->e = ge_xmalloc(cap * sizeof *m->e);
	for (size_t i = 0; i < cap; i++)
		m->e[i].key.op = GE_NOOP;
}

void ge_tmap_init(ge_tmap *m, size_t expected)
{
	size_t cap = 16;
	while (cap < expected * 2)
		cap *= 2;
	m->n = 0;
	tmap_alloc(m, cap);
}

void ge_tmap_free(ge_tmap *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

static struct ge_tmap_ent *tmap_slot(const ge_tmap *m, ge_tref t)
{
	size_t mask = m->cap - 1, i = thash(t) & mask;
	for (;;) {
		struct ge_tmap_ent *e = &m->e[i];
		if (e->key.op == GE_NOOP || ge_tref_eq(e->key, t))
			return e;
		i = (i + 1) & mask;
	}
}

int ge_tmap_put(ge_tmap *m, ge_tref t, size_t v)
{
	if (t.op == GE_NOOP)
		return 0;
	if ((m->n + 1) * 2 > m->cap) {
		struct ge_tmap_ent *old = m->e;
		size_t oc = m->cap;
		tmap_alloc(m, oc * 2);
		for (size_t i = 0; i < oc; i++)
			if (old[i].key.op != GE_NOOP)
				*tmap_slot(m, old[i].key) = old[i];
		free(old);
	}
	struct ge_tmap_ent *e = tmap_slot(m, t);
	if (e->key.op != GE_NOOP)
		return 0;
	e->key = t;
	e->val = v;
	m->n++;
	return 1;
}

int ge_tmap_get(const ge_tmap *m, ge_tref t, size_t *v)
{
	if (t.op == GE_NOOP || !m->n)
		return 0;
	const struct ge_tmap_ent *e = tmap_slot(m, t);
	if (e->key.op == GE_NOOP)
		return 0;
	if (v)
		*v = e->val;
	return 1;
}

void ge_tset_init(ge_tset *s, const ge_graph *g)
{
	s->cap = g ? ge_graph_capacity(g) : 0;
	/* calloc: large sets come from fresh zero pages, touched on use */
	s->mask = ge_xcalloc(s->cap ? s->cap : 1, sizeof *s->mask);
	if (!s->cap)
		s->cap = 1;
	ge_tmap_init(&s->big, 0);
}

void ge_tset_free(ge_tset *s)
{
	free(s->mask);
	s->mask = NULL;
	s->cap = 0;
	ge_tmap_free(&s->big);
}

int ge_tset_insert(ge_tset *s, ge_tref t)
{
	if (t.op == GE_NOOP)
		return 0;
	if (t.index < 0 || t.index >= 64)
		return ge_tmap_put(&s->big, t, 0);
	if (t.op >= s->cap) {
		size_t cap = s->cap * 2;
		while (cap <= t.op)
			cap *= 2;
		s->mask = ge_xrealloc(s->mask, cap * sizeof *s->mask);
		memset(s->mask + s->cap, 0, (cap - s->cap) * sizeof *s->mask);
		s->cap = cap;
	}
	uint64_t b = (uint64_t)1 << t.index;
	if (s->mask[t.op] & b)
		return 0;
	s->mask[t.op] |= b;
	return 1;
}

int ge_tset_has(const ge_tset *s, ge_tref t)
{
	if (t.op == GE_NOOP)
		return 0;
	if (t.index < 0 || t.index >= 64)
		return ge_tmap_get(&s->big, t, NULL);
	return t.op < s->cap && ((s->mask[t.op] >> t.index) & 1);
}

/* ------------------------------------------------------------ regexes */

struct ge_regex {
	pcre2_code *code;
	pcre2_match_data *md;
	char *pattern;
};

ge_regex *ge_regex_new(const char *pattern, ge_error *err)
{
	int ec;
	PCRE2_SIZE eo;
	uint32_t flags = PCRE2_UTF;
#ifdef PCRE2_MATCH_INVALID_UTF
	flags |= PCRE2_MATCH_INVALID_UTF;
#endif
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				      flags, &ec, &eo, NULL);
	if (!c) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ec, msg, sizeof msg);
		ge_err(err, GE_EINVAL, "bad regex '%s' at offset %zu: %s",
		       pattern, (size_t)eo, (char *)msg);
		return NULL;
	}
	/* Without JIT support the interpreter is used; nothing to report. */
	pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);
	ge_regex *re = ge_xmalloc(sizeof *re);
	re->code = c;
	re->md = pcre2_match_data_create_from_pattern(c, NULL);
	if (!re->md) {
		fprintf(stderr, "gerewrite: out of memory\n");
		abort();
	}
	re->pattern = ge_xstrdup(pattern);
	return re;
}

void ge_regex_free(ge_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_code_free(re->code);
	free(re->pattern);
	free(re);
}

const char *ge_regex_pattern(const ge_regex *re)
{
	return re->pattern;
}

int ge_regex_search(ge_regex *re, const char *s, size_t len, ge_error *err)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, re->md, NULL);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(rc, msg, sizeof msg);
	return ge_err(err, GE_EINVAL, "regex '%s' failed on '%s': %s",
		      re->pattern, s, (char *)msg);
}

#define REGEX_CACHE 32
static _Thread_local struct {
	ge_regex *re[REGEX_CACHE];
	unsigned next;
} cache;

ge_regex *ge_regex_cached(const char *pattern, ge_error *err)
{
	for (int i = 0; i < REGEX_CACHE; i++)
		if (cache.re[i] && strcmp(cache.re[i]->pattern, pattern) == 0)
			return cache.re[i];
	ge_regex *re = ge_regex_new(pattern, err);
	if (!re)
		return NULL;
	unsigned k = cache.next++ % REGEX_CACHE;
	ge_regex_free(cache.re[k]);
	cache.re[k] = re;
	return re;
}

void ge_regex_cache_clear(void)
{
	for (int i = 0; i < REGEX_CACHE; i++) {
		ge_regex_free(cache.re[i]);
		cache.re[i] = NULL;
	}
	cache.next = 0;
}
