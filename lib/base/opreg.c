/* opreg.c: see opreg.h. */
#include "base/opreg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/wire.h"

/* lib/opdefs.pb as bytes, generated at build time by embed.sh. */
extern const unsigned char ge_opdefs_data[];
extern const size_t ge_opdefs_size;

struct ge_oplist_index {
	const Tensorflow__OpDef **slots;   /* open addressing, power of 2 */
	size_t mask;
};

ge_oplist_index *ge_oplist_index_new(const Tensorflow__OpList *list)
{
	ge_oplist_index *x = ge_xcalloc(1, sizeof *x);
	size_t n = list ? list->n_op : 0, cap = 16;
	while (cap < n * 2)
		cap *= 2;
	x->slots = ge_xcalloc(cap, sizeof *x->slots);
	x->mask = cap - 1;
	for (size_t i = 0; i < n; i++) {
		const Tensorflow__OpDef *op = list->op[i];
		if (!op->name)
			continue;
		size_t j = ge_hash(op->name, strlen(op->name)) & x->mask;
		while (x->slots[j] && strcmp(x->slots[j]->name, op->name))
			j = (j + 1) & x->mask;
		if (!x->slots[j])
			x->slots[j] = op;
	}
	return x;
}

const Tensorflow__OpDef *ge_oplist_index_find(const ge_oplist_index *x,
					      const char *op_type)
{
	if (!x || !op_type)
		return NULL;
	size_t j = ge_hash(op_type, strlen(op_type)) & x->mask;
	for (; x->slots[j]; j = (j + 1) & x->mask)
		if (strcmp(x->slots[j]->name, op_type) == 0)
			return x->slots[j];
	return NULL;
}

void ge_oplist_index_free(ge_oplist_index *x)
{
	if (!x)
		return;
	free(x->slots);
	free(x);
}

const Tensorflow__OpDef *ge_opreg_find_in(const Tensorflow__OpList *list,
					  const char *op_type)
{
	if (!list || !op_type)
		return NULL;
	for (size_t i = 0; i < list->n_op; i++)
		if (list->op[i]->name && strcmp(list->op[i]->name, op_type) == 0)
			return list->op[i];
	return NULL;
}

/* ---- the built-in table ----
 *
 * Decoding all 1,500-odd OpDefs costs more than loading a small graph, and
 * a run asks for a few dozen types.  So the table is first only scanned:
 * each OpDef's name and byte span, indexed by name; an OpDef is unpacked
 * when its type is first asked for.  The scan reads the bytes as hostile
 * input (lengths bounded by what is left), though they are ours. */

struct builtin_op {
	const uint8_t *p;          /* the OpDef's bytes */
	size_t len;
	const char *name;          /* into the bytes, not NUL-terminated */
	size_t name_len;
	Tensorflow__OpDef *def;    /* unpacked on first use, or NULL */
	int failed;                /* its bytes did not unpack */
};

static struct builtin_op *bops;
static size_t n_bops;
static uint32_t *bslots;           /* entry + 1, 0 empty; power of 2 */
static size_t bmask;
static int bscanned;
static Tensorflow__OpList *blist;  /* ge_opreg_list's view, built on demand */

/* The name of OpDef bytes as protobuf-c gives it: the last field 1, cut at
 * a NUL byte (a C string stops there), "" when absent.  -1 when the bytes
 * do not parse as fields. */
static int opdef_name(const uint8_t *p, const uint8_t *end, const char **name,
		      size_t *len)
{
	*name = "";
	*len = 0;
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, GE_OPDEF_NAME))
			continue;
		const uint8_t *nul = memchr(f.data, 0, f.len);
		*name = (const char *)f.data;
		*len = nul ? (size_t)(nul - f.data) : f.len;
	}
	return w.bad ? -1 : 0;
}

/* Records each OpDef (OpList field 1) and indexes it by name, the first of
 * a name winning; stops at the first byte that does not parse. */
static void builtin_scan(void)
{
	if (bscanned)
		return;
	bscanned = 1;
	size_t cap = 0;
	ge_wire w = ge_wire_of(ge_opdefs_data, ge_opdefs_size);
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		/* OpList.op */
		if (!ge_wire_is_len(&f, 1))
			continue;
		struct builtin_op b = {f.data, f.len, "", 0, NULL, 0};
		if (opdef_name(b.p, b.p + b.len, &b.name, &b.name_len))
			b.failed = 1;
		if (n_bops == cap) {
			cap = cap ? cap * 2 : 2048;
			bops = ge_xrealloc(bops, cap * sizeof *bops);
		}
		bops[n_bops++] = b;
	}
	size_t ns = 16;
	while (ns < n_bops * 2)
		ns *= 2;
	bslots = ge_xcalloc(ns, sizeof *bslots);
	bmask = ns - 1;
	for (size_t i = 0; i < n_bops; i++) {
		const struct builtin_op *b = &bops[i];
		size_t j = ge_hash(b->name, b->name_len) & bmask;
		for (; bslots[j]; j = (j + 1) & bmask) {
			const struct builtin_op *o = &bops[bslots[j] - 1];
			if (o->name_len == b->name_len &&
			    !memcmp(o->name, b->name, b->name_len))
				break;
		}
		if (!bslots[j])
			bslots[j] = (uint32_t)(i + 1);
	}
}

static Tensorflow__OpDef *builtin_def(struct builtin_op *b)
{
	if (!b->def && !b->failed) {
		b->def = tensorflow__op_def__unpack(NULL, b->len, b->p);
		b->failed = !b->def;
	}
	return b->def;
}

/* Callers mostly pass interned type strings, the same pointer for every op
 * of a type: a hit by pointer is confirmed by the bytes (the memory may
 * hold another string by now) and saves the hash. */
static struct {
	const char *key;
	struct builtin_op *b;
} bmemo[64];

const Tensorflow__OpDef *ge_opreg_find(const char *op_type)
{
	if (!op_type)
		return NULL;
	builtin_scan();
	size_t slot = ((uintptr_t)op_type >> 3) & 63;
	struct builtin_op *m = bmemo[slot].b;
	if (bmemo[slot].key == op_type && m &&
	    !strncmp(m->name, op_type, m->name_len) && !op_type[m->name_len])
		return builtin_def(m);
	size_t n = strlen(op_type);
	size_t j = ge_hash(op_type, n) & bmask;
	for (; bslots[j]; j = (j + 1) & bmask) {
		struct builtin_op *b = &bops[bslots[j] - 1];
		if (b->name_len == n && !memcmp(b->name, op_type, n)) {
			bmemo[slot].key = op_type;
			bmemo[slot].b = b;
			return builtin_def(b);
		}
	}
	return NULL;
}

const Tensorflow__OpList *ge_opreg_list(void)
{
	if (blist)
		return blist;
	builtin_scan();
	blist = ge_xcalloc(1, sizeof *blist);
	tensorflow__op_list__init(blist);
	blist->op = ge_xcalloc(n_bops ? n_bops : 1, sizeof *blist->op);
	for (size_t i = 0; i < n_bops; i++) {
		Tensorflow__OpDef *d = builtin_def(&bops[i]);
		if (d)
			blist->op[blist->n_op++] = d;
	}
	return blist;
}

void ge_opreg_free(void)
{
	if (blist)
		free(blist->op);
	free(blist);
	blist = NULL;
	for (size_t i = 0; i < n_bops; i++)
		if (bops[i].def)
			tensorflow__op_def__free_unpacked(bops[i].def, NULL);
	free(bops);
	free(bslots);
	bops = NULL;
	bslots = NULL;
	n_bops = 0;
	bmask = 0;
	bscanned = 0;
	memset(bmemo, 0, sizeof bmemo);
}
