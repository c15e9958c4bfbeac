/*
 * sets.h: general containers over a graph's ids and tensors, and cached
 * regexes: op sets (a bitset over op ids), tensor maps and tensor sets,
 * compiled PCRE2 patterns.  They know nothing of what the ops mean, so
 * any layer above the graph may use them (select, match, checkpoints,
 * variables).
 */
#ifndef GE_SETS_H
#define GE_SETS_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

/* ------------------------------------------------------------ sets */

/* A set of op ids as a bitset sized from the graph's capacity.  Ids
 * created after the set was made are simply absent until added (the set
 * grows on add). */
typedef struct ge_opset {
	uint64_t *bits;
	size_t cap; /* ids below cap are representable */
} ge_opset;

void ge_opset_init(ge_opset *s, const ge_graph *g);
void ge_opset_free(ge_opset *s);
void ge_opset_add(ge_opset *s, ge_opid id);
/* Adds id; returns 1 if it was not there yet. */
int ge_opset_insert(ge_opset *s, ge_opid id);
void ge_opset_add_list(ge_opset *s, const ge_opid *ops, size_t n);
static inline int ge_opset_has(const ge_opset *s, ge_opid id)
{
	return id < s->cap && ((s->bits[id >> 6] >> (id & 63)) & 1);
}
static inline void ge_opset_del(ge_opset *s, ge_opid id)
{
	if (id < s->cap)
		s->bits[id >> 6] &= ~((uint64_t)1 << (id & 63));
}

/* A hash map from tensors to a size_t value (open addressing). */
typedef struct ge_tmap {
	struct ge_tmap_ent *e;
	size_t cap, n;
} ge_tmap;

void ge_tmap_init(ge_tmap *m, size_t expected);
void ge_tmap_free(ge_tmap *m);
/* Inserts t -> v unless t is present.  Returns 1 if inserted, 0 if t was
 * already there (its value is left unchanged). */
int ge_tmap_put(ge_tmap *m, ge_tref t, size_t v);
/* Returns 1 and sets *v (if v is non-NULL) when t is present. */
int ge_tmap_get(const ge_tmap *m, ge_tref t, size_t *v);

/* A set of tensors: a bit per output index below 64 in a word per op id
 * (so membership is one memory access and no hashing), with a hash for
 * larger indices.  Grows on insert; g (may be NULL) sizes it up front. */
typedef struct ge_tset {
	uint64_t *mask;
	size_t cap;
	ge_tmap big;
} ge_tset;

void ge_tset_init(ge_tset *s, const ge_graph *g);
void ge_tset_free(ge_tset *s);
/* Returns 1 if t was not in the set yet.  Dangling refs are ignored. */
int ge_tset_insert(ge_tset *s, ge_tref t);
int ge_tset_has(const ge_tset *s, ge_tref t);

/* ------------------------------------------------------------ regexes */

/* A compiled PCRE2 pattern (JIT-compiled when available).  Not safe for
 * concurrent use from several threads (it owns its match data). */
typedef struct ge_regex ge_regex;

/* Compiles; on a syntax error returns NULL and err reads
 * "bad regex 'a(b' at offset 3: missing closing parenthesis". */
ge_regex *ge_regex_new(const char *pattern, ge_error *err);
void ge_regex_free(ge_regex *re);
const char *ge_regex_pattern(const ge_regex *re);
/* Unanchored search: 1 on a match, 0 on none, GE_EINVAL (err set) when the
 * matcher fails (e.g. its backtracking limit). */
int ge_regex_search(ge_regex *re, const char *s, size_t len, ge_error *err);
/* Compiled once per pattern and kept in a small per-thread cache; the
 * result is borrowed and stays valid until the next ge_regex_cached call
 * in the same thread or ge_regex_cache_clear. */
ge_regex *ge_regex_cached(const char *pattern, ge_error *err);
void ge_regex_cache_clear(void);

#endif
