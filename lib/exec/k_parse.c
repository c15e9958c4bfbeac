/*
 * exec/k_parse.c: ParseExample and ParseExampleV2, the first ops of the
 * serving signatures Estimators export: serialized tf.Example records
 * (proto/tensorflow/core/example/example.proto) into dense, sparse and
 * ragged tensors.
 *
 * A dense feature of shape S gives [batch] + S: each record holds exactly
 * |S| values of the feature's type (float_list for float32, int64_list for
 * int64, bytes_list for string), or lacks the feature and takes the
 * default (a feature with no default is required).  When S's first
 * dimension is unknown the feature has a variable number of rows, padded
 * to the longest with the default scalar.  A sparse feature gives
 * indices [n, 2] (record, position), values [n] and the dense shape
 * [batch, longest]; a ragged one values and row_splits.  A scalar input
 * (V2) drops the batch dimension.
 *
 * Records are decoded with protobuf-c after a bound: their bytes, and
 * what decoding may make of them, are charged to the memory budget.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kstate.h"
#include "tensorflow/core/example/example.pb-c.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define MAX_KEYS 4096
/* What unpacking may make of each byte of a record, for the budget. */
#define EXPANSION 32

enum { DENSE, SPARSE, RAGGED };

typedef struct pkey {
	const char *s;         /* the feature's name */
	size_t n;
	int kind, dtype;
	kps shape;             /* dense: the shape of one record's value */
	int var;               /* dense: the first dimension varies */
	int64_t row;           /* dense: elements per row (var) or in all */
	const ge_xt *def;      /* dense: the default (n 0: required) */
	int split_dt;          /* ragged: row_splits dtype */
	int out, out2, out3;   /* outputs: values / indices, shape, splits */
} pkey;

typedef struct parse {
	ge_kctx *k;
	int v2, scalar;
	int64_t batch;
	Tensorflow__Example **ex;
	pkey *keys;
	int nkeys;
} parse;

static const Tensorflow__AttrValue__ListValue *attr_list(ge_kctx *k,
							 const char *name)
{
	const Tensorflow__AttrValue *v = ge_op_attr(k->g, k->id, name, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return NULL;
	return v->list;
}

/* Type i of list attr name, or -1. */
static int list_type(ge_kctx *k, const char *name, int i)
{
	const Tensorflow__AttrValue__ListValue *l = attr_list(k, name);
	return l && (size_t)i < l->n_type ? (int)l->type[i] : -1;
}

static int list_shape(ge_kctx *k, int i, kps *out)
{
	const Tensorflow__AttrValue__ListValue *l =
		attr_list(k, "dense_shapes");
	if (!l || (size_t)i >= l->n_shape)
		return ge_k_fail(k, "dense_shapes has no shape %d", i);
	const Tensorflow__TensorShapeProto *s = l->shape[i];
	if (s->unknown_rank || s->n_dim > GE_SHAPE_MAXRANK - 1)
		return ge_k_fail(k, "dense shape %d must have a known rank "
				 "below %d", i, GE_SHAPE_MAXRANK);
	out->rank = (int)s->n_dim;
	for (size_t d = 0; d < s->n_dim; d++) {
		out->dims[d] = s->dim[d]->size;
		if (out->dims[d] < 0 && (d > 0 || out->dims[d] != -1))
			return ge_k_fail(k, "dense shape %d: only the first "
					 "dimension may be unknown", i);
	}
	return GE_OK;
}

/* A key's name from a string tensor t, element j. */
static int key_name(parse *p, const ge_xt *t, int64_t j, pkey *key)
{
	if (t->dtype != DT_STRING || j >= t->n)
		return ge_k_fail(p->k, "feature keys must be strings");
	const ge_xstr *s = (const ge_xstr *)t->data + j;
	key->s = s->p ? s->p : "";
	key->n = s->len;
	return GE_OK;
}

static int add_key(parse *p, int kind, const ge_xt *names, int64_t j)
{
	if (p->nkeys >= MAX_KEYS)
		return ge_k_fail(p->k, "more than %d features", MAX_KEYS);
	pkey *key = &p->keys[p->nkeys++];
	memset(key, 0, sizeof *key);
	key->kind = kind;
	return key_name(p, names, j, key);
}

/* The dense keys' shapes, types and defaults (inputs from d0). */
static int dense_specs(parse *p, int first, int nd, int d0)
{
	ge_kctx *k = p->k;
	for (int i = 0; i < nd; i++) {
		pkey *key = &p->keys[first + i];
		key->dtype = list_type(k, "Tdense", i);
		if (list_shape(k, i, &key->shape))
			return GE_EINVAL;
		key->var = key->shape.rank > 0 && key->shape.dims[0] < 0;
		key->row = kcount(key->shape.rank - key->var,
				  key->shape.dims + key->var);
		if (key->row < 0)
			return ge_k_fail(k, "dense shape %d overflows", i);
		if (d0 + i >= k->nin)
			return ge_k_fail(k, "has no default for dense key %d",
					 i);
		key->def = k->in[d0 + i];
		if (key->def->dtype != key->dtype)
			return ge_k_fail(k, "the default of '%.*s' is %s, the "
					 "feature %s", (int)key->n, key->s,
					 kdt(key->def->dtype),
					 kdt(key->dtype));
		if (key->def->n && key->def->n != 1 &&
		    (key->var || key->def->n != key->row))
			return ge_k_fail(k, "the default of '%.*s' has %"
					 PRId64 " values for %" PRId64,
					 (int)key->n, key->s, key->def->n,
					 key->row);
	}
	return GE_OK;
}

/* Reads the op's keys, types and defaults into p and numbers the
 * outputs. */
static int specs(parse *p)
{
	ge_kctx *k = p->k;
	int ns, nd, nr = 0, d0;
	if (!p->v2) {
		ns = (int)ge_k_attr_int(k, "Nsparse", 0);
		nd = (int)ge_k_attr_int(k, "Ndense", 0);
		if (ns < 0 || nd < 0 || ns + nd > MAX_KEYS ||
		    ge_k_need(k, 2 + ns + 2 * nd))
			return ge_k_fail(k, "bad Nsparse or Ndense");
		for (int i = 0; i < ns; i++)
			if (add_key(p, SPARSE, k->in[2 + i], 0))
				return GE_EINVAL;
		for (int i = 0; i < nd; i++)
			if (add_key(p, DENSE, k->in[2 + ns + i], 0))
				return GE_EINVAL;
		d0 = 2 + ns + nd;
	} else {
		if (ge_k_need(k, 5))
			return GE_EINVAL;
		ns = (int)k->in[2]->n;
		nd = (int)k->in[3]->n;
		nr = (int)k->in[4]->n;
		if (k->in[2]->n + k->in[3]->n + k->in[4]->n > MAX_KEYS)
			return ge_k_fail(k, "more than %d features", MAX_KEYS);
		for (int i = 0; i < ns; i++)
			if (add_key(p, SPARSE, k->in[2], i))
				return GE_EINVAL;
		for (int i = 0; i < nd; i++)
			if (add_key(p, DENSE, k->in[3], i))
				return GE_EINVAL;
		for (int i = 0; i < nr; i++)
			if (add_key(p, RAGGED, k->in[4], i))
				return GE_EINVAL;
		d0 = 5;
	}
	for (int i = 0; i < ns; i++) {
		p->keys[i].dtype = list_type(k, "sparse_types", i);
		p->keys[i].out = i;          /* indices */
		p->keys[i].out2 = ns + i;    /* values */
		p->keys[i].out3 = 2 * ns + i; /* dense shape */
	}
	for (int i = 0; i < nd; i++)
		p->keys[ns + i].out = 3 * ns + i;
	for (int i = 0; i < nr; i++) {
		pkey *key = &p->keys[ns + nd + i];
		key->dtype = list_type(k, "ragged_value_types", i);
		key->split_dt = list_type(k, "ragged_split_types", i);
		key->out = 3 * ns + nd + i;
		key->out2 = 3 * ns + nd + nr + i;
		if (key->split_dt != DT_INT32 && key->split_dt != DT_INT64)
			return ge_k_fail(k, "ragged_split_types must be int32 "
					 "or int64");
	}
	if (3 * ns + nd + 2 * nr != k->nout)
		return ge_k_fail(k, "has %d outputs, its features need %d",
				 k->nout, 3 * ns + nd + 2 * nr);
	if (dense_specs(p, ns, nd, d0))
		return GE_EINVAL;
	for (int i = 0; i < p->nkeys; i++) {
		int dt = p->keys[i].dtype;
		if (dt != DT_FLOAT && dt != DT_INT64 && dt != DT_STRING)
			return ge_k_fail(k, "feature '%.*s' is %s; features "
					 "are float32, int64 or string",
					 (int)p->keys[i].n, p->keys[i].s,
					 kdt(dt));
	}
	return GE_OK;
}

/* ---------------------------------------------------------------- records */

static int decode(parse *p, uint64_t *charged)
{
	ge_kctx *k = p->k;
	char what[256];
	const ge_xt *ser = k->in[0];
	if (ser->dtype != DT_STRING || ser->rank > 1 ||
	    (!p->v2 && ser->rank != 1))
		return ge_k_fail(k, "serialized must be a %sstring vector",
				 p->v2 ? "string scalar or a " : "");
	p->scalar = ser->rank == 0;
	p->batch = ser->n;
	const ge_xstr *s = ser->data;
	uint64_t bytes = 0;
	for (int64_t b = 0; b < p->batch; b++)
		bytes += s[b].len + 64;
	if (bytes > UINT64_MAX / EXPANSION)
		return ge_k_fail(k, "the records are too large");
	if (ge_xbudget_mem(k->budget, bytes * EXPANSION,
			   ge_k_what(k, what, sizeof what), k->err))
		return GE_EINVAL;
	*charged = bytes * EXPANSION;
	if (ge_k_work(k, bytes))
		return GE_EINVAL;
	p->ex = calloc((size_t)(p->batch ? p->batch : 1), sizeof *p->ex);
	if (!p->ex)
		return ge_k_fail(k, "out of memory");
	for (int64_t b = 0; b < p->batch; b++) {
		p->ex[b] = tensorflow__example__unpack(
			NULL, s[b].len, (const uint8_t *)(s[b].p ? s[b].p : ""));
		if (!p->ex[b])
			return ge_k_fail(k, "record %" PRId64 " is not a "
					 "tf.Example", b);
	}
	return GE_OK;
}

/* Feature key of record b, or NULL (a feature of no kind is absent). */
static const Tensorflow__Feature *feature(const parse *p, int64_t b,
					  const pkey *key)
{
	const Tensorflow__Features *f = p->ex[b]->features;
	const Tensorflow__Feature *found = NULL;
	if (!f)
		return NULL;
	for (size_t i = 0; i < f->n_feature; i++) {
		const Tensorflow__Features__FeatureEntry *e = f->feature[i];
		if (e->key && strlen(e->key) == key->n &&
		    !memcmp(e->key, key->s, key->n) && e->value)
			found = e->value; /* a map's last entry wins */
	}
	if (found && found->kind_case == TENSORFLOW__FEATURE__KIND__NOT_SET)
		return NULL;
	return found;
}

/* The number of values of feature key in record b (0 when absent);
 * -1 after a failure (a list of another type). */
static int64_t count(parse *p, int64_t b, const pkey *key)
{
	const Tensorflow__Feature *f = feature(p, b, key);
	if (!f)
		return 0;
	int want = key->dtype == DT_FLOAT ? TENSORFLOW__FEATURE__KIND_FLOAT_LIST
		 : key->dtype == DT_INT64 ? TENSORFLOW__FEATURE__KIND_INT64_LIST
		 : TENSORFLOW__FEATURE__KIND_BYTES_LIST;
	if ((int)f->kind_case != want) {
		ge_k_fail(p->k, "record %" PRId64 ", feature '%.*s': not a "
			  "list of %s", b, (int)key->n, key->s,
			  kdt(key->dtype));
		return -1;
	}
	switch (f->kind_case) {
	case TENSORFLOW__FEATURE__KIND_FLOAT_LIST:
		return f->float_list ? (int64_t)f->float_list->n_value : 0;
	case TENSORFLOW__FEATURE__KIND_INT64_LIST:
		return f->int64_list ? (int64_t)f->int64_list->n_value : 0;
	default:
		return f->bytes_list ? (int64_t)f->bytes_list->n_value : 0;
	}
}

/* Copies the n values of feature key of record b into t at `at`. */
static int put_values(parse *p, int64_t b, const pkey *key, ge_xt *t,
		      int64_t at)
{
	const Tensorflow__Feature *f = feature(p, b, key);
	if (!f)
		return GE_OK;
	switch (f->kind_case) {
	case TENSORFLOW__FEATURE__KIND_FLOAT_LIST:
		memcpy((float *)t->data + at, f->float_list->value,
		       f->float_list->n_value * sizeof(float));
		break;
	case TENSORFLOW__FEATURE__KIND_INT64_LIST:
		memcpy((int64_t *)t->data + at, f->int64_list->value,
		       f->int64_list->n_value * sizeof(int64_t));
		break;
	default:
		for (size_t i = 0; i < f->bytes_list->n_value; i++) {
			const ProtobufCBinaryData *v = &f->bytes_list->value[i];
			ge_xstr *x = (ge_xstr *)t->data + at + (int64_t)i;
			if (!v->len)
				continue;
			x->p = malloc(v->len + 1);
			if (!x->p)
				return ge_k_fail(p->k, "out of memory");
			memcpy(x->p, v->data, v->len);
			x->p[v->len] = 0;
			x->len = v->len;
		}
	}
	return GE_OK;
}

/* ---------------------------------------------------------------- outputs */

static int out_dense(parse *p, const pkey *key)
{
	ge_kctx *k = p->k;
	int64_t rows = 0, dims[GE_SHAPE_MAXRANK];
	int r = 0;
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t c = count(p, b, key);
		if (c < 0)
			return GE_EINVAL;
		if (!feature(p, b, key) && !key->var && key->def->n == 0)
			return ge_k_fail(k, "record %" PRId64 " lacks feature "
					 "'%.*s' (%s), which has no default",
					 b, (int)key->n, key->s,
					 kdt(key->dtype));
		if (feature(p, b, key) &&
		    (key->var ? (key->row ? c % key->row : c) != 0
			      : c != key->row))
			return ge_k_fail(k, "record %" PRId64 ", feature "
					 "'%.*s': %" PRId64 " values for a "
					 "shape of %" PRId64, b, (int)key->n,
					 key->s, c, key->row);
		if (key->var && key->row && c / key->row > rows)
			rows = c / key->row;
	}
	if (!p->scalar)
		dims[r++] = p->batch;
	for (int d = 0; d < key->shape.rank; d++)
		dims[r++] = d == 0 && key->var ? rows : key->shape.dims[d];
	ge_xt *t = ge_k_out(k, key->out, key->dtype, r, dims);
	if (!t)
		return GE_EINVAL;
	int64_t per = t->n / (p->batch ? p->batch : 1);
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t at = b * per;
		if (feature(p, b, key) && !key->var) {
			if (put_values(p, b, key, t, at))
				return GE_EINVAL;
			continue;
		}
		/* the default, whole or as the padding scalar */
		for (int64_t j = 0; key->def->n && j < per; j++)
			if (ge_kst_copy(t, at + j, key->def,
				     key->def->n == 1 ? 0 : j, 1))
				return ge_k_fail(k, "out of memory");
		if (key->var && feature(p, b, key)) {
			int64_t c = count(p, b, key);
			for (int64_t j = 0; j < c && t->dtype == DT_STRING;
			     j++) {
				ge_xstr *x = (ge_xstr *)t->data + at + j;
				free(x->p);
				x->p = NULL;
				x->len = 0;
			}
			if (put_values(p, b, key, t, at))
				return GE_EINVAL;
		}
	}
	return GE_OK;
}

/* Sparse: indices, values and dense shape; ragged: values and splits. */
static int out_list(parse *p, const pkey *key)
{
	ge_kctx *k = p->k;
	int64_t total = 0, longest = 0;
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t c = count(p, b, key);
		if (c < 0)
			return GE_EINVAL;
		total += c;
		if (c > longest)
			longest = c;
	}
	ge_xt *vals = ge_k_out(k, key->kind == SPARSE ? key->out2 : key->out,
			       key->dtype, 1, &total);
	if (!vals)
		return GE_EINVAL;
	int64_t at = 0;
	for (int64_t b = 0; b < p->batch; b++) {
		if (put_values(p, b, key, vals, at))
			return GE_EINVAL;
		at += count(p, b, key);
	}
	if (key->kind == RAGGED) {
		int64_t ns = p->batch + 1;
		ge_xt *sp = ge_k_out(k, key->out2, key->split_dt, 1, &ns);
		if (!sp)
			return GE_EINVAL;
		for (int64_t b = 0, c = 0; b <= p->batch; b++) {
			if (key->split_dt == DT_INT32)
				((int32_t *)sp->data)[b] = (int32_t)c;
			else
				((int64_t *)sp->data)[b] = c;
			if (b < p->batch)
				c += count(p, b, key);
		}
		return GE_OK;
	}
	int64_t idims[2] = {total, p->scalar ? 1 : 2}, nd = p->scalar ? 1 : 2;
	ge_xt *ix = ge_k_out(k, key->out, DT_INT64, 2, idims);
	ge_xt *sh = ix ? ge_k_out(k, key->out3, DT_INT64, 1, &nd) : NULL;
	if (!sh)
		return GE_EINVAL;
	int64_t *ip = ix->data, *sp = sh->data;
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t c = count(p, b, key);
		for (int64_t j = 0; j < c; j++) {
			if (!p->scalar)
				*ip++ = b;
			*ip++ = j;
		}
	}
	if (!p->scalar)
		*sp++ = p->batch;
	*sp = longest;
	return GE_OK;
}

static int k_parse_example(ge_kctx *k)
{
	parse p = {k, !strcmp(k->type, "ParseExampleV2"), 0, 0, NULL, NULL, 0};
	uint64_t charged = 0;
	int rc = GE_OK;
	p.keys = calloc(MAX_KEYS, sizeof *p.keys);
	if (!p.keys)
		return ge_k_fail(k, "out of memory");
	if (ge_k_need(k, 2) || specs(&p) || decode(&p, &charged))
		rc = GE_EINVAL;
	if (!rc && p.scalar)
		for (int i = 0; i < p.nkeys; i++)
			if (p.keys[i].kind == RAGGED)
				rc = ge_k_fail(k, "ragged features of a scalar "
					       "record are not supported");
	for (int i = 0; !rc && i < p.nkeys; i++)
		rc = p.keys[i].kind == DENSE ? out_dense(&p, &p.keys[i])
					     : out_list(&p, &p.keys[i]);
	for (int64_t b = 0; p.ex && b < p.batch; b++)
		if (p.ex[b])
			tensorflow__example__free_unpacked(p.ex[b], NULL);
	free(p.ex);
	free(p.keys);
	ge_xbudget_release(k->budget, charged);
	if (rc)
		ge_k_drop(k);
	return rc;
}

const ge_kdef ge_kernels_parse[] = {
	{"ParseExample", k_parse_example, 0},
	{"ParseExampleV2", k_parse_example, 0},
	{NULL, NULL, 0},
};
