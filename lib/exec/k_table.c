/*
 * exec/k_table.c: lookup tables, as Estimator-exported SavedModels and
 * tf.lookup use them (HashTableV2, MutableHashTableV2 and the
 * LookupTable*V2 and InitializeTable*V2 ops).
 *
 * A table is an executor object kept in the slot of the op that made it
 * (ge_xrt_slot), so it lives for the session: the init op fills it once
 * and every later run looks keys up in it, as TensorFlow's resource
 * manager keeps it.  Keys are int64 or string (int32 widened), values
 * any number, bool or string.  A HashTableV2 is filled once by its
 * initializer (an initialised table keeps its first contents, as
 * TensorFlow does for a file initializer) and refuses lookups before;
 * a MutableHashTableV2 starts empty and takes inserts.
 *
 * InitializeTableFromTextFileV2 reads its file from the SavedModel's
 * assets/ directory only: whatever path the filename tensor holds (the
 * path TensorFlow recorded when it exported, or the one a loader fed),
 * its last component is looked up inside <model>/assets/, never
 * outside the model (fsutil's ge_read_inside), and the file is bounded
 * by the memory budget.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/fsutil.h"
#include "functions/func.h"
#include "formats/model.h"
#include "exec/kstate.h"

typedef struct kent {
	int used;
	int64_t ki;               /* an integer key */
	char *ks;                 /* a string key (ki is its length) */
	int64_t vi;               /* integer and bool values */
	double vd;                /* float values */
	char *vs;                 /* string values (vi is the length) */
} kent;

typedef struct ktable {
	ge_xobj o;
	int kdt, vdt;
	int mutable_, init;
	size_t n, cap;            /* entries used, slots (a power of two) */
	kent *e;
	ge_xbudget *budget;
	uint64_t charged;
} ktable;

static void table_clear(ktable *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->e[i].ks);
		free(t->e[i].vs);
	}
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
	ge_xbudget_release(t->budget, t->charged);
	t->charged = 0;
}

static void table_destroy(ge_xobj *o)
{
	table_clear((ktable *)o);
	free(o);
}

static uint64_t hash_key(int64_t ki, const char *ks)
{
	uint64_t h = 0xcbf29ce484222325ull;
	if (ks) {
		for (int64_t i = 0; i < ki; i++)
			h = (h ^ (uint8_t)ks[i]) * 0x100000001b3ull;
	} else {
		h ^= (uint64_t)ki;
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	return h;
}

/* The slot of key (ki, ks): the entry holding it, or the free one where
 * it would go. */
static kent *find_slot(const ktable *t, int64_t ki, const char *ks)
{
	size_t m = t->cap - 1;
	for (size_t h = (size_t)hash_key(ki, ks);; h++) {
		kent *e = &t->e[h & m];
		if (!e->used)
			return e;
		if (e->ki == ki && (!ks || !memcmp(e->ks, ks, (size_t)ki)))
			return e;
	}
}

static int grow(ge_kctx *k, ktable *t)
{
	char what[256];
	if (2 * (t->n + 1) <= t->cap)
		return GE_OK;
	size_t ncap = t->cap ? 2 * t->cap : 16;
	if (ncap > SIZE_MAX / 2 / sizeof(kent))
		return ge_k_fail(k, "the table is too large");
	uint64_t more = (uint64_t)(ncap - t->cap) * sizeof(kent);
	if (ge_xbudget_mem(t->budget, more, ge_k_what(k, what, sizeof what),
			   k->err)) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	kent *ne = calloc(ncap, sizeof *ne);
	if (!ne) {
		ge_xbudget_release(t->budget, more);
		return ge_k_fail(k, "out of memory for a table of %zu", ncap);
	}
	kent *old = t->e;
	size_t ocap = t->cap;
	t->e = ne;
	t->cap = ncap;
	t->charged += more;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			*find_slot(t, old[i].ki, old[i].ks) = old[i];
	free(old);
	return GE_OK;
}

static char *dup_bytes(const char *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* Key j of tensor t, as the table keeps it. */
static void key_of(const ge_xt *t, int64_t j, int64_t *ki, const char **ks)
{
	if (t->dtype == DT_STRING) {
		const ge_xstr *s = (const ge_xstr *)t->data + j;
		*ki = (int64_t)s->len;
		*ks = s->p ? s->p : "";
	} else {
		*ki = ge_xt_get_int64(t, j);
		*ks = NULL;
	}
}

/* Sets entry e's value from element j of v. */
static int value_set(kent *e, const ge_xt *v, int64_t j)
{
	if (v->dtype == DT_STRING) {
		const ge_xstr *s = (const ge_xstr *)v->data + j;
		char *p = dup_bytes(s->p ? s->p : "", s->len);
		if (!p)
			return GE_EINVAL;
		free(e->vs);
		e->vs = p;
		e->vi = (int64_t)s->len;
	} else if (dt_is_float(v->dtype)) {
		e->vd = ge_xt_get_double(v, j);
	} else {
		e->vi = ge_xt_get_int64(v, j);
	}
	return GE_OK;
}

static int value_same(const kent *e, const ge_xt *v, int64_t j)
{
	if (v->dtype == DT_STRING) {
		const ge_xstr *s = (const ge_xstr *)v->data + j;
		return (size_t)e->vi == s->len &&
		       (!s->len || !memcmp(e->vs, s->p, s->len));
	}
	if (dt_is_float(v->dtype))
		return e->vd == ge_xt_get_double(v, j);
	return e->vi == ge_xt_get_int64(v, j);
}

/* Stores value j of v into element i of out (same dtype). */
static int value_put(const kent *e, ge_xt *out, int64_t i)
{
	switch (out->dtype) {
	case DT_STRING: {
		ge_xstr *s = (ge_xstr *)out->data + i;
		s->p = e->vi ? dup_bytes(e->vs, (size_t)e->vi) : NULL;
		s->len = (size_t)e->vi;
		return e->vi && !s->p ? GE_EINVAL : GE_OK;
	}
	case DT_FLOAT: ((float *)out->data)[i] = (float)e->vd; break;
	case DT_DOUBLE: ((double *)out->data)[i] = e->vd; break;
	case DT_INT32: ((int32_t *)out->data)[i] = (int32_t)e->vi; break;
	case DT_INT64: ((int64_t *)out->data)[i] = e->vi; break;
	case DT_BOOL: ((uint8_t *)out->data)[i] = e->vi != 0; break;
	default: return GE_EINVAL;
	}
	return GE_OK;
}

/* Inserts keys[j] -> values[j]; a HashTable refuses a key given two
 * values, a mutable table takes the last. */
static int insert(ge_kctx *k, ktable *t, const ge_xt *keys, int64_t j,
		  const ge_xt *vals)
{
	int64_t ki;
	const char *ks;
	if (grow(k, t))
		return GE_EINVAL;
	key_of(keys, j, &ki, &ks);
	kent *e = find_slot(t, ki, ks);
	if (e->used) {
		if (!t->mutable_ && !value_same(e, vals, j))
			return ge_k_fail(k, "the table is given two values for "
					 "key %" PRId64 " of its input", j);
		return value_set(e, vals, j) ? ge_k_fail(k, "out of memory")
					     : GE_OK;
	}
	if (ks && !(e->ks = dup_bytes(ks, (size_t)ki)))
		return ge_k_fail(k, "out of memory");
	e->used = 1;
	e->ki = ki;
	t->n++;
	if (value_set(e, vals, j))
		return ge_k_fail(k, "out of memory");
	return GE_OK;
}

/* ---------------------------------------------------------------- ops */

static int dt_key_ok(int dt)
{
	return dt == DT_INT64 || dt == DT_INT32 || dt == DT_STRING;
}

static int dt_value_ok(int dt)
{
	return dt == DT_INT64 || dt == DT_INT32 || dt == DT_STRING ||
	       dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_BOOL;
}

/* HashTableV2, MutableHashTableV2: the op's table for the session. */
static int k_table(ge_kctx *k)
{
	int kt = ge_k_attr_type(k, "key_dtype", 0);
	int vt = ge_k_attr_type(k, "value_dtype", 0);
	if (!dt_key_ok(kt) || !dt_value_ok(vt))
		return ge_k_fail(k, "a table of %s to %s is not one the "
				 "runner holds", kdt(kt), kdt(vt));
	ge_xobj **slot = k->rt ? ge_xrt_slot(k->rt, k->g, k->id) : NULL;
	if (slot && *slot) {
		if ((*slot)->kind != GE_XOBJ_TABLE)
			return ge_k_fail(k, "its state slot holds something "
					 "else");
		return ge_kst_out_obj(k, 0, DT_RESOURCE, ge_xobj_ref(*slot));
	}
	ktable *t = calloc(1, sizeof *t);
	if (!t)
		return ge_k_fail(k, "out of memory");
	t->o.refs = 1;
	t->o.kind = GE_XOBJ_TABLE;
	t->o.destroy = table_destroy;
	t->kdt = kt;
	t->vdt = vt;
	t->mutable_ = !strncmp(k->type, "MutableHashTable", 16);
	t->init = t->mutable_;
	t->budget = k->budget;
	if (slot)
		*slot = ge_xobj_ref(&t->o);
	return ge_kst_out_obj(k, 0, DT_RESOURCE, &t->o);
}

static ktable *table_in(ge_kctx *k)
{
	return (ktable *)ge_kst_obj(k, 0, DT_RESOURCE, GE_XOBJ_TABLE,
				 "lookup table");
}

static int keys_ok(ge_kctx *k, const ktable *t, const ge_xt *keys)
{
	int want = t->kdt == DT_INT32 ? DT_INT32 : t->kdt;
	if (keys->dtype != want)
		return ge_k_fail(k, "keys are %s, the table's %s",
				 kdt(keys->dtype), kdt(t->kdt));
	return GE_OK;
}

/* LookupTableFindV2(table, keys, default_value) -> values. */
static int k_find(ge_kctx *k)
{
	ktable *t = table_in(k);
	if (!t || ge_k_need(k, 3) || keys_ok(k, t, k->in[1]))
		return GE_EINVAL;
	const ge_xt *keys = k->in[1], *def = k->in[2];
	if (!t->init)
		return ge_k_fail(k, "the table was not initialized (run its "
				 "init op first)");
	if (def->dtype != t->vdt || def->n != 1)
		return ge_k_fail(k, "the default value must be one %s",
				 kdt(t->vdt));
	ge_xt *out = ge_k_out(k, 0, t->vdt, keys->rank, keys->dims);
	if (!out || ge_k_work(k, (uint64_t)keys->n * 4))
		return GE_EINVAL;
	kent dflt = {0};
	if (value_set(&dflt, def, 0))
		return ge_k_fail(k, "out of memory");
	int rc = GE_OK;
	for (int64_t j = 0; j < keys->n && !rc; j++) {
		int64_t ki;
		const char *ks;
		key_of(keys, j, &ki, &ks);
		const kent *e = t->cap ? find_slot(t, ki, ks) : NULL;
		if (value_put(e && e->used ? e : &dflt, out, j))
			rc = ge_k_fail(k, "out of memory");
	}
	free(dflt.vs);
	return rc;
}

/* InitializeTableV2(table, keys, values), LookupTableImportV2 (which
 * replaces the contents), LookupTableInsertV2 (mutable tables). */
static int k_fill(ge_kctx *k)
{
	ktable *t = table_in(k);
	if (!t || ge_k_need(k, 3) || keys_ok(k, t, k->in[1]))
		return GE_EINVAL;
	const ge_xt *keys = k->in[1], *vals = k->in[2];
	if (vals->dtype != t->vdt)
		return ge_k_fail(k, "values are %s, the table's %s",
				 kdt(vals->dtype), kdt(t->vdt));
	if (keys->n != vals->n)
		return ge_k_fail(k, "%" PRId64 " keys for %" PRId64 " values",
				 keys->n, vals->n);
	int import = !strncmp(k->type, "LookupTableImport", 17);
	int initialize = !strncmp(k->type, "InitializeTable", 15);
	if (!strncmp(k->type, "LookupTableInsert", 17) && !t->mutable_)
		return ge_k_fail(k, "inserts into a table that is not mutable");
	if (initialize && t->init)
		return GE_OK; /* initialized already: keeps its contents */
	if (ge_k_work(k, (uint64_t)keys->n * 8))
		return GE_EINVAL;
	if (import)
		table_clear(t);
	for (int64_t j = 0; j < keys->n; j++)
		if (insert(k, t, keys, j, vals))
			return GE_EINVAL;
	t->init = 1;
	return GE_OK;
}

/* LookupTableSizeV2(table) -> int64. */
static int k_size(ge_kctx *k)
{
	ktable *t = table_in(k);
	if (!t)
		return GE_EINVAL;
	ge_xt *o = ge_k_out(k, 0, DT_INT64, 0, NULL);
	if (!o)
		return GE_EINVAL;
	((int64_t *)o->data)[0] = (int64_t)t->n;
	return GE_OK;
}

/* ---------------------------------------------------------------- files */

enum { LINE_NUMBER = -1, WHOLE_LINE = -2 };

/* The asset file a filename names, read from <model>/assets/. */
static int read_asset(ge_kctx *k, const ge_xstr *name, uint8_t **data,
		      size_t *len)
{
	ge_graph *root = ge_graph_root((ge_graph *)k->g);
	const char *dir = ge_graph_savedmodel_dir(root);
	char rel[4096], what[256];
	const char *p = name->p ? name->p : "";
	const char *base = p;
	for (size_t i = 0; i < name->len; i++)
		if (p[i] == '/' || p[i] == '\\')
			base = p + i + 1;
	size_t blen = name->len - (size_t)(base - p);
	if (!dir)
		return ge_k_fail(k, "reads asset '%.*s', but the graph is not "
				 "from a SavedModel directory", (int)name->len,
				 p);
	if (!blen || memchr(base, 0, blen) || blen > 1024)
		return ge_k_fail(k, "asset file name '%.*s' is not a file name",
				 (int)(name->len > 200 ? 200 : name->len), p);
	snprintf(rel, sizeof rel, "assets/%.*s", (int)blen, base);
	snprintf(what, sizeof what, "%s (%s)", k->name, k->type);
	uint64_t max = k->budget ? k->budget->mem_limit - k->budget->mem_live
				 : ge_max_memory();
	return ge_read_inside(dir, rel, ge_graph_name(root), what, max, data,
			      len, k->err);
}

/* One field of a line as a key or value of dtype dt into a one-element
 * tensor. */
static int field(ge_kctx *k, const char *s, size_t n, int64_t line,
		 int64_t index, int64_t offset, ge_xt *t)
{
	char buf[128], *end;
	if (index == LINE_NUMBER) {
		((int64_t *)t->data)[0] = line + offset;
		return GE_OK;
	}
	if (t->dtype == DT_STRING) {
		ge_xstr *x = t->data;
		free(x->p);
		x->p = n ? dup_bytes(s, n) : NULL;
		x->len = n;
		return n && !x->p ? ge_k_fail(k, "out of memory") : GE_OK;
	}
	if (n == 0 || n >= sizeof buf)
		return ge_k_fail(k, "field '%.*s' of line %" PRId64 " is not a "
				 "number", (int)(n > 60 ? 60 : n), s, line);
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	if (t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE) {
		double v = strtod(buf, &end);
		if (*end || errno)
			return ge_k_fail(k, "field '%s' of line %" PRId64 " is "
					 "not a valid %s", buf, line,
					 kdt(t->dtype));
		if (t->dtype == DT_FLOAT)
			((float *)t->data)[0] = (float)v;
		else
			((double *)t->data)[0] = v;
		return GE_OK;
	}
	long long v = strtoll(buf, &end, 10);
	if (*end || errno || (t->dtype == DT_INT32 &&
			      (v < INT32_MIN || v > INT32_MAX)))
		return ge_k_fail(k, "field '%s' of line %" PRId64 " is not a "
				 "valid %s", buf, line, kdt(t->dtype));
	if (t->dtype == DT_INT32)
		((int32_t *)t->data)[0] = (int32_t)(v + offset);
	else
		((int64_t *)t->data)[0] = v;
	return GE_OK;
}

/* Finds column c of line s[0..n) split at delim. */
static int column(const char *s, size_t n, char delim, int64_t c,
		  const char **f, size_t *fn)
{
	int64_t col = 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == delim) {
			if (col == c) {
				*f = s + start;
				*fn = i - start;
				return 0;
			}
			col++;
			start = i + 1;
		}
	return -1;
}

/* Every line's key and value into t. */
static int fill_lines(ge_kctx *k, ktable *t, const char *s, size_t len,
		      int64_t ki, int64_t vi, int64_t vocab, char delim,
		      int64_t offset)
{
	ge_xt *key = ge_xt_scalar(ki == LINE_NUMBER ? DT_INT64 : t->kdt,
				  NULL, k->name, k->err);
	ge_xt *val = ge_xt_scalar(vi == LINE_NUMBER ? DT_INT64 : t->vdt, NULL,
				  k->name, k->err);
	int rc = key && val ? GE_OK : GE_EINVAL;
	int64_t line = 0;
	for (size_t at = 0; !rc && at < len; line++) {
		if (vocab >= 0 && line >= vocab)
			break;
		const char *nl = memchr(s + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (s + at)) : len - at;
		const char *l = s + at;
		at += n + (nl ? 1 : 0);
		if (n && l[n - 1] == '\r')
			n--;
		if (!n) {
			rc = ge_k_fail(k, "line %" PRId64 " of the file is "
				       "empty", line);
			break;
		}
		const char *f;
		size_t fn;
		for (int w = 0; w < 2 && !rc; w++) {
			int64_t ix = w ? vi : ki;
			f = l;
			fn = n;
			if (ix >= 0 && column(l, n, delim, ix, &f, &fn))
				rc = ge_k_fail(k, "line %" PRId64 " has no "
					       "column %" PRId64, line, ix);
			else
				rc = field(k, f, fn, line, ix, offset,
					   w ? val : key);
		}
		if (!rc && (rc = ge_k_work(k, n)) == GE_OK)
			rc = insert(k, t, key, 0, val);
	}
	if (!rc && vocab >= 0 && line < vocab)
		rc = ge_k_fail(k, "vocab_size is %" PRId64 " but the file has %"
			       PRId64 " lines", vocab, line);
	ge_xt_unref(key);
	ge_xt_unref(val);
	return rc;
}

/* InitializeTableFromTextFileV2(table, filename). */
static int k_from_file(ge_kctx *k)
{
	ktable *t = table_in(k);
	if (!t || ge_k_need(k, 2))
		return GE_EINVAL;
	const ge_xt *fname = k->in[1];
	if (fname->dtype != DT_STRING || fname->n != 1)
		return ge_k_fail(k, "the filename must be a string scalar");
	if (t->init)
		return GE_OK;
	int64_t ki = ge_k_attr_int(k, "key_index", WHOLE_LINE);
	int64_t vi = ge_k_attr_int(k, "value_index", LINE_NUMBER);
	int64_t vocab = ge_k_attr_int(k, "vocab_size", -1);
	int64_t offset = ge_k_attr_int(k, "offset", 0);
	const char *dl;
	size_t dlen;
	char delim = '\t';
	if (!ge_op_attr_string(k->g, k->id, "delimiter", &dl, &dlen)) {
		if (dlen != 1)
			return ge_k_fail(k, "the delimiter must be one byte");
		delim = dl[0];
	}
	if (ki < WHOLE_LINE || vi < WHOLE_LINE || vocab < -1 ||
	    (ki == LINE_NUMBER && t->kdt != DT_INT64) ||
	    (vi == LINE_NUMBER && t->vdt != DT_INT64) ||
	    (ki == WHOLE_LINE && t->kdt != DT_STRING && !dt_is_int(t->kdt)) ||
	    (vi == WHOLE_LINE && t->vdt != DT_STRING && !dt_is_int(t->vdt)))
		return ge_k_fail(k, "key_index %" PRId64 " and value_index %"
				 PRId64 " do not suit a table of %s to %s", ki,
				 vi, kdt(t->kdt), kdt(t->vdt));
	uint8_t *data = NULL;
	size_t len = 0;
	if (read_asset(k, (const ge_xstr *)fname->data, &data, &len)) {
		ge_k_drop(k);
		return GE_EINVAL;
	}
	int rc = fill_lines(k, t, (const char *)data, len, ki, vi, vocab,
			    delim, offset);
	free(data);
	if (!rc)
		t->init = 1;
	return rc;
}

/* The V1 ops (TF1 graphs before resource handles) run the same kernels:
 * their handle is a resource tensor here, not a string reference. */
const ge_kdef ge_kernels_table[] = {
	{"HashTable", k_table, GE_K_STATEFUL},
	{"HashTableV2", k_table, GE_K_STATEFUL},
	{"InitializeTable", k_fill, GE_K_STATEFUL},
	{"InitializeTableFromTextFile", k_from_file, GE_K_STATEFUL},
	{"InitializeTableFromTextFileV2", k_from_file, GE_K_STATEFUL},
	{"InitializeTableV2", k_fill, GE_K_STATEFUL},
	{"LookupTableFind", k_find, GE_K_STATEFUL},
	{"LookupTableFindV2", k_find, GE_K_STATEFUL},
	{"LookupTableImport", k_fill, GE_K_STATEFUL},
	{"LookupTableImportV2", k_fill, GE_K_STATEFUL},
	{"LookupTableInsert", k_fill, GE_K_STATEFUL},
	{"LookupTableInsertV2", k_fill, GE_K_STATEFUL},
	{"LookupTableSize", k_size, GE_K_STATEFUL},
	{"LookupTableSizeV2", k_size, GE_K_STATEFUL},
	{"MutableHashTable", k_table, GE_K_STATEFUL},
	{"MutableHashTableV2", k_table, GE_K_STATEFUL},
	{NULL, NULL, 0},
};
