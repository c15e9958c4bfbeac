/*
 * func.c: the function library model (see func.h).
 *
 * The library is a list of items in file order: functions (FunctionDef
 * payloads, kept as the bytes read until something changes them) and the
 * other entries (GradientDefs, registered gradients), kept as raw bytes.
 * A body is parsed into a ge_graph on first use; its ops that come from
 * node_defs point at their NodeDef bytes like the ops of a loaded graph,
 * so an untouched node is written back as read.  A function is re-encoded
 * only when it was renamed or its body's version moved since the parse.
 */
#include "func.h"
#include "graph_impl.h"
#include "meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/protobuf/saved_object_graph.pb-c.h"

/* FunctionDefLibrary, FunctionDef, NodeDef, GradientDef fields */
enum { FL_FUNCTION = 1, FL_GRADIENT = 2 };
enum { FD_SIGNATURE = 1, FD_NODE = 3, FD_RET = 4, FD_ATTR = 5,
       FD_CONTROL_RET = 6, FD_ARG_ATTR = 7, FD_RESOURCE_ID = 8 };
enum { ND_NAME = 1, ND_OP = 2, ND_INPUT = 3, ND_DEVICE = 4 };
enum { OD_NAME = 1 };

/* An arg of the signature as the body stands for it: its name, where its
 * ops are (_Arg / _Retval ops, count of them) and the original arg index
 * (-1 for one the body added). */
typedef struct fnarg {
	char *name;
	int dtype, count, orig, is_list;
	ge_opid *ops;
} fnarg;

/* One entry of a string map (ret, control_ret) as read. */
typedef struct mapent {
	char *key, *val;
	ge_opid op;  /* control_ret: the op it names */
} mapent;

/* Output args of an op type without an OpDef, as the body names them:
 * flat indices given in order of first mention, each as wide as the
 * highest index read. */
typedef struct unkout {
	ge_opid op;
	char *arg;
	int start, count;
} unkout;

typedef struct ge_fn {
	unkout *unk;
	size_t n_unk;
	uint32_t *argof;           /* _Arg op id -> index in in0 (parse) */
	size_t n_argops;
	char *name;
	const uint8_t *raw;        /* FunctionDef payload */
	size_t raw_len;
	uint8_t *owned;            /* raw, when made here */
	int dead, renamed;
	ge_graph *body;
	uint64_t base_ver;         /* body version right after the parse */
	Tensorflow__OpDef *sig;    /* raw signature decoded, lazily */
	/* the body's view, made at parse time (orig) and at sync (cur) */
	fnarg *in0, *out0;
	size_t n_in0, n_out0;
	mapent *ret0, *cret0;
	size_t n_ret0, n_cret0;
	fnarg *in, *out;
	size_t n_in, n_out;
	uint64_t sync_ver;
	int synced, sig_changed;
	ge_buf sig_bytes;          /* packed signature when it changed */
	Tensorflow__OpDef *cur;    /* unpacked sig_bytes */
	ge_func_arg *view_in, *view_out;
	size_t n_view_in, n_view_out;
	int view_from_body;
} ge_fn;

typedef struct fitem {
	ge_funcid f;               /* a function, or GE_NOFUNC for raw */
	const uint8_t *p;          /* raw entry (tag, length, payload) */
	size_t len;
	uint8_t *owned;
	uint32_t field;
} fitem;

struct ge_flib {
	ge_fn *fn;
	size_t n_fn, cap_fn, n_live;
	fitem *items;
	size_t n_items, cap_items;
	int changed;               /* items added, removed or rewritten */
	/* name index: open addressing, slot = id + 1, 0 empty */
	uint32_t *idx;
	size_t idx_cap;
};

static const char ARG_OP[] = "_Arg", RET_OP[] = "_Retval";

/* ------------------------------------------------------------ helpers */

static ge_graph *root_of(const ge_graph *g)
{
	return (ge_graph *)(g->parent ? g->parent : g);
}

ge_graph *ge_graph_root(ge_graph *g)
{
	return root_of(g);
}

ge_funcid ge_graph_func(const ge_graph *g)
{
	return g->parent ? g->func_id : GE_NOFUNC;
}

static const char *label(const ge_graph *g)
{
	return *g->name ? g->name : "<graph>";
}

static void idx_rebuild(struct ge_flib *l)
{
	free(l->idx);
	l->idx_cap = 16;
	while (l->idx_cap < l->n_fn * 2 + 2)
		l->idx_cap *= 2;
	l->idx = ge_xcalloc(l->idx_cap, sizeof *l->idx);
	for (size_t i = 0; i < l->n_fn; i++) {
		if (l->fn[i].dead)
			continue;
		size_t h = ge_hash(l->fn[i].name, strlen(l->fn[i].name)) &
			   (l->idx_cap - 1);
		while (l->idx[h])
			h = (h + 1) & (l->idx_cap - 1);
		l->idx[h] = (uint32_t)i + 1;
	}
}

static ge_funcid idx_find(const struct ge_flib *l, const char *name, size_t n)
{
	if (!l->idx_cap)
		return GE_NOFUNC;
	size_t h = ge_hash(name, n) & (l->idx_cap - 1);
	while (l->idx[h]) {
		const ge_fn *f = &l->fn[l->idx[h] - 1];
		if (!f->dead && !strncmp(f->name, name, n) && !f->name[n])
			return l->idx[h] - 1;
		h = (h + 1) & (l->idx_cap - 1);
	}
	return GE_NOFUNC;
}

static void item_push(struct ge_flib *l, fitem it)
{
	if (l->n_items == l->cap_items) {
		l->cap_items = l->cap_items ? l->cap_items * 2 : 16;
		l->items = ge_xrealloc(l->items, l->cap_items * sizeof *l->items);
	}
	l->items[l->n_items++] = it;
}

static ge_funcid fn_push(struct ge_flib *l, const char *name, size_t nl,
			 const uint8_t *raw, size_t raw_len, uint8_t *owned)
{
	if (l->n_fn == l->cap_fn) {
		l->cap_fn = l->cap_fn ? l->cap_fn * 2 : 16;
		l->fn = ge_xrealloc(l->fn, l->cap_fn * sizeof *l->fn);
	}
	ge_fn *f = &l->fn[l->n_fn];
	memset(f, 0, sizeof *f);
	f->name = ge_xstrndup(name, nl);
	f->raw = raw;
	f->raw_len = raw_len;
	f->owned = owned;
	l->n_live++;
	return (ge_funcid)l->n_fn++;
}

/* Reads the entries of one FunctionDefLibrary payload into l. */
static int scan_payload(struct ge_flib *l, const uint8_t *p, const uint8_t *end,
			const char *file, ge_error *err)
{
	while (p < end) {
		const uint8_t *es = p;
		uint64_t tag, len;
		if (ge_read_varint(&p, end, &tag))
			goto bad;
		uint32_t field = (uint32_t)(tag >> 3);
		if (field == FL_FUNCTION && (tag & 7) == 2) {
			if (ge_read_varint(&p, end, &len) ||
			    len > (uint64_t)(end - p))
				goto bad;
			const uint8_t *b = p, *sig, *nm = NULL;
			size_t sl, nl = 0;
			p += len;
			if (ge_find_len_field(b, p, FD_SIGNATURE, &sig, &sl) == 0)
				ge_find_len_field(sig, sig + sl, OD_NAME, &nm, &nl);
			if (!nm || !nl)
				return ge_err(err, GE_EFORMAT,
					      "%s: function #%zu of the library "
					      "has no name", file, l->n_fn);
			ge_funcid id = fn_push(l, (const char *)nm, nl, b,
					       (size_t)len, NULL);
			item_push(l, (fitem){id, NULL, 0, NULL, field});
			continue;
		}
		if (ge_skip_field(&p, end, (int)(tag & 7)))
			goto bad;
		item_push(l, (fitem){GE_NOFUNC, es, (size_t)(p - es), NULL,
				     field});
	}
	return GE_OK;
bad:
	return ge_err(err, GE_EFORMAT,
		      "%s: the function library is truncated or corrupt", file);
}

static int scan_field(struct ge_flib *l, const uint8_t *p, size_t len,
		      const char *file, ge_error *err)
{
	const uint8_t *end = p + len;
	uint64_t tag, l2;
	if (ge_read_varint(&p, end, &tag) || tag != ((2 << 3) | 2) ||
	    ge_read_varint(&p, end, &l2) || l2 > (uint64_t)(end - p))
		return GE_OK;
	return scan_payload(l, p, p + l2, file, err);
}

int ge_flib_load(ge_graph *g, ge_error *err)
{
	g = root_of(g);
	if (g->flib)
		return GE_OK;
	struct ge_flib *l = ge_xcalloc(1, sizeof *l);
	for (size_t i = 0; i < g->n_fields; i++) {
		int rc = scan_field(l, g->fields[i].p, g->fields[i].len,
				    label(g), err);
		if (rc) {
			ge_flib_free(l);
			return rc;
		}
	}
	idx_rebuild(l);
	g->flib = l;
	return GE_OK;
}

/* The library, scanned if needed; a library that does not parse reads as
 * empty here (ge_flib_load reports it). */
static struct ge_flib *lib(const ge_graph *g)
{
	ge_graph *r = root_of(g);
	if (!r->flib && ge_flib_load(r, NULL)) {
		r->flib = ge_xcalloc(1, sizeof *r->flib);
		idx_rebuild(r->flib);
	}
	return r->flib;
}

void ge_flib_add_field(ge_graph *g, const uint8_t *p, size_t len)
{
	if (!g->flib)
		return;
	scan_field(g->flib, p, len, label(g), NULL);
	idx_rebuild(g->flib);
}

static void fnargs_free(fnarg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].name);
		free(a[i].ops);
	}
	free(a);
}

static void mapents_free(mapent *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].key);
		free(m[i].val);
	}
	free(m);
}

static void fn_release(ge_fn *f)
{
	free(f->name);
	free(f->owned);
	if (f->body) {
		f->body->parent = NULL;
		ge_graph_free(f->body);
	}
	if (f->sig)
		protobuf_c_message_free_unpacked(&f->sig->base, NULL);
	if (f->cur)
		protobuf_c_message_free_unpacked(&f->cur->base, NULL);
	ge_buf_free(&f->sig_bytes);
	fnargs_free(f->in0, f->n_in0);
	fnargs_free(f->out0, f->n_out0);
	fnargs_free(f->in, f->n_in);
	fnargs_free(f->out, f->n_out);
	mapents_free(f->ret0, f->n_ret0);
	mapents_free(f->cret0, f->n_cret0);
	free(f->view_in);
	free(f->view_out);
	for (size_t i = 0; i < f->n_unk; i++)
		free(f->unk[i].arg);
	free(f->unk);
}

void ge_flib_free(struct ge_flib *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_fn; i++)
		fn_release(&l->fn[i]);
	for (size_t i = 0; i < l->n_items; i++)
		free(l->items[i].owned);
	free(l->fn);
	free(l->items);
	free(l->idx);
	free(l);
}

static ge_fn *FN(const ge_graph *g, ge_funcid f)
{
	struct ge_flib *l = lib(g);
	return f < l->n_fn ? &l->fn[f] : NULL;
}

size_t ge_func_capacity(ge_graph *g)
{
	return lib(g)->n_fn;
}

size_t ge_func_count(ge_graph *g)
{
	return lib(g)->n_live;
}

int ge_func_alive(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	return fn && !fn->dead;
}

ge_funcid ge_func_find(ge_graph *g, const char *name)
{
	return idx_find(lib(g), name, strlen(name));
}

const char *ge_func_name(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	return fn ? fn->name : NULL;
}

int ge_func_touched(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	return fn && fn->body;
}

/* ------------------------------------------------------------ signature */

static const Tensorflow__OpDef *raw_sig(ge_fn *f)
{
	if (!f->sig) {
		const uint8_t *b;
		size_t n;
		if (ge_find_len_field(f->raw, f->raw + f->raw_len, FD_SIGNATURE,
				      &b, &n))
			n = 0, b = (const uint8_t *)"";
		f->sig = tensorflow__op_def__unpack(NULL, n, b);
		if (!f->sig) {
			f->sig = ge_xmalloc(sizeof *f->sig);
			tensorflow__op_def__init(f->sig);
		}
	}
	return f->sig;
}

static const Tensorflow__AttrValue *sig_default(const Tensorflow__OpDef *d,
						const char *name)
{
	for (size_t i = 0; i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name))
			return d->attr[i]->default_value;
	return NULL;
}

/* An arg's tensor count and first dtype from the signature alone (its
 * attrs' defaults); count 1 and dtype 0 when they are not known. */
static void sig_arg_info(const Tensorflow__OpDef *d,
			 const Tensorflow__OpDef__ArgDef *a, int *count,
			 int *dtype, int *is_list, int **types)
{
	*count = 1;
	*dtype = a->type;
	*is_list = 0;
	if (types)
		*types = NULL;
	if (a->type_attr && *a->type_attr) {
		const Tensorflow__AttrValue *v = sig_default(d, a->type_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
			*dtype = v->type;
	}
	if (a->number_attr && *a->number_attr) {
		*is_list = 1;
		const Tensorflow__AttrValue *v = sig_default(d, a->number_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I &&
		    v->i >= 0 && v->i < 100000)
			*count = (int)v->i;
	} else if (a->type_list_attr && *a->type_list_attr) {
		*is_list = 1;
		const Tensorflow__AttrValue *v =
			sig_default(d, a->type_list_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		    v->list) {
			*count = (int)v->list->n_type;
			*dtype = v->list->n_type ? v->list->type[0] : 0;
			if (types)
				*types = (int *)v->list->type;
		}
	}
}

/* ------------------------------------------------------------ bodies */

static const Tensorflow__AttrValue *op_attr_or_default(
	const ge_graph *b, ge_opid p, const Tensorflow__OpDef *d,
	const char *name)
{
	const Tensorflow__AttrValue *v = ge_op_attr(b, p, name, NULL);
	return v ? v : sig_default(d, name);
}

static int out_count(const ge_graph *b, ge_opid p, const Tensorflow__OpDef *d,
		     const Tensorflow__OpDef__ArgDef *a)
{
	if (a->number_attr && *a->number_attr) {
		const Tensorflow__AttrValue *v =
			op_attr_or_default(b, p, d, a->number_attr);
		if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I ||
		    v->i < 0 || v->i > 1000000)
			return -1;
		return (int)v->i;
	}
	if (a->type_list_attr && *a->type_list_attr) {
		const Tensorflow__AttrValue *v =
			op_attr_or_default(b, p, d, a->type_list_attr);
		if (!v)
			return -1;
		if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
			return 0;
		return (int)v->list->n_type;
	}
	return 1;
}

/* Output arg `out` (n bytes) of op p: its first flat output index and
 * tensor count.  With out NULL, finds the arg holding flat index n and
 * returns its name.  -1 / NULL when the OpDef or an attr is missing. */
static const char *out_arg(const ge_graph *b, ge_opid p, const char *out,
			   size_t n, int *start, int *count)
{
	const Tensorflow__OpDef *d = ge_graph_opdef(b, ge_op_type(b, p));
	if (!d) {
		const ge_fn *f = &b->parent->flib->fn[b->func_id];
		for (size_t i = 0; i < f->n_unk; i++) {
			const unkout *u = &f->unk[i];
			if (u->op == p &&
			    (out ? !strncmp(u->arg, out, n) && !u->arg[n]
				 : (int)n >= u->start &&
					   (int)n < u->start + u->count)) {
				*start = u->start;
				*count = u->count;
				return u->arg;
			}
		}
		return NULL;
	}
	int base = 0;
	for (size_t i = 0; i < d->n_output_arg; i++) {
		const Tensorflow__OpDef__ArgDef *a = d->output_arg[i];
		int k = out_count(b, p, d, a);
		if (k < 0)
			return NULL;
		if (out ? (!strncmp(a->name, out, n) && !a->name[n])
			: (int)n < base + k) {
			*start = base;
			*count = k;
			return a->name;
		}
		base += k;
	}
	return NULL;
}

static int all_digits(const char *s, size_t n)
{
	if (!n || n > 9)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* The input arg (of the parse-time table) named name, or NULL.  A plain
 * arg's op has its name and comes first in the body (ids below the
 * number of _Arg ops); only list args, whose ops are name_0.., are
 * searched. */
static fnarg *arg_named(ge_graph *b, ge_fn *f, const char *name, size_t n)
{
	ge_opid p = ge_idx_find_n(b, name, n, 0);
	if (p != GE_NOOP && p < f->n_argops) {
		fnarg *a = &f->in0[f->argof[p]];
		if (!strncmp(a->name, name, n) && !a->name[n])
			return a;
	}
	for (size_t i = 0; i < f->n_in0; i++)
		if (f->in0[i].count != 1 && !strncmp(f->in0[i].name, name, n) &&
		    !f->in0[i].name[n])
			return &f->in0[i];
	return NULL;
}

/* Resolves one body input text into tensors (several for a whole list),
 * appended to out.  Returns -1 when it names nothing known. */
static int resolve_input(ge_graph *b, ge_fn *f, const char *s, size_t n,
			 ge_tvec *out)
{
	if (n && s[0] == '^') {
		fnarg *a = arg_named(b, f, s + 1, n - 1);
		ge_opid p = a && a->count ? a->ops[0]
					  : ge_idx_find_n(b, s + 1, n - 1, 0);
		if (p == GE_NOOP)
			return -1;
		ge_tvec_push(out, (ge_tref){p, GE_CONTROL});
		return 0;
	}
	const char *c1 = memchr(s, ':', n);
	size_t nl = c1 ? (size_t)(c1 - s) : n;
	if (!c1) {
		fnarg *a = arg_named(b, f, s, n);
		if (!a)
			return -1;
		for (int j = 0; j < a->count; j++)
			ge_tvec_push(out, (ge_tref){a->ops[j], 0});
		return 0;
	}
	const char *r = c1 + 1;
	size_t rl = n - nl - 1;
	const char *c2 = memchr(r, ':', rl);
	if (!c2 && all_digits(r, rl)) {
		int k = atoi(r);
		fnarg *a = arg_named(b, f, s, nl);
		if (a) {
			if (k >= a->count)
				return -1;
			ge_tvec_push(out, (ge_tref){a->ops[k], 0});
			return 0;
		}
		ge_opid p = ge_idx_find_n(b, s, nl, 0);
		if (p == GE_NOOP)
			return -1;
		ge_tvec_push(out, (ge_tref){p, k});
		return 0;
	}
	ge_opid p = ge_idx_find_n(b, s, nl, 0);
	if (p == GE_NOOP)
		return -1;
	size_t ol = c2 ? (size_t)(c2 - r) : rl;
	int start, count;
	if (!out_arg(b, p, r, ol, &start, &count))
		return -1;
	if (!c2) {
		for (int j = 0; j < count; j++)
			ge_tvec_push(out, (ge_tref){p, start + j});
		return 0;
	}
	if (!all_digits(c2 + 1, rl - ol - 1))
		return -1;
	ge_tvec_push(out, (ge_tref){p, start + atoi(c2 + 1)});
	return 0;
}

static void set_attr_int(ge_graph *b, ge_opid id, const char *name,
			 int64_t v, int type)
{
	Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
	if (type) {
		av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
		av.type = (Tensorflow__DataType)v;
	} else {
		av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
		av.i = v;
	}
	ge_op_set_attr(b, id, name, &av);
}

/* Reads a map<string, string> entry payload. */
static void map_entry(const uint8_t *p, const uint8_t *end, char **key,
		      char **val)
{
	*key = *val = NULL;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			break;
		if ((tag & 7) == 2 && !ge_read_varint(&p, end, &l) &&
		    l <= (uint64_t)(end - p)) {
			if ((tag >> 3) == 1 && !*key)
				*key = ge_xstrndup((const char *)p, l);
			else if ((tag >> 3) == 2 && !*val)
				*val = ge_xstrndup((const char *)p, l);
			p += l;
		} else if ((tag & 7) == 2 || ge_skip_field(&p, end, (int)(tag & 7))) {
			break;
		}
	}
	if (!*key)
		*key = ge_xstrdup("");
	if (!*val)
		*val = ge_xstrdup("");
}

/* One NodeDef's name, type and device; -1 if its top level is corrupt. */
static int scan_nodedef(const uint8_t *p, const uint8_t *end, const char **nm,
			size_t *nl, const char **ty, size_t *tl,
			const char **dv, size_t *dl)
{
	*nm = *ty = *dv = NULL;
	*nl = *tl = *dl = 0;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			return -1;
		uint32_t fno = (uint32_t)(tag >> 3);
		if ((tag & 7) == 2 && fno >= ND_NAME && fno <= ND_DEVICE) {
			if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
				return -1;
			if (fno == ND_NAME)
				*nm = (const char *)p, *nl = l;
			else if (fno == ND_OP)
				*ty = (const char *)p, *tl = l;
			else if (fno == ND_DEVICE)
				*dv = (const char *)p, *dl = l;
			p += l;
		} else if (fno == 0 || ge_skip_field(&p, end, (int)(tag & 7))) {
			return -1;
		}
	}
	return *nm && *nl && *ty && *tl ? 0 : -1;
}

/* Adds the ops of one arg list (_Arg or _Retval) to the body. */
static int add_arg_ops(ge_graph *b, ge_fn *f, const Tensorflow__OpDef *d,
		       int output, int *index, ge_error *err)
{
	size_t n = output ? d->n_output_arg : d->n_input_arg;
	fnarg *tab = ge_xcalloc(n + 1, sizeof *tab);
	if (output)
		f->out0 = tab, f->n_out0 = n;
	else
		f->in0 = tab, f->n_in0 = n;
	char nm[600];
	for (size_t i = 0; i < n; i++) {
		const Tensorflow__OpDef__ArgDef *a =
			output ? d->output_arg[i] : d->input_arg[i];
		int *types;
		fnarg *t = &tab[i];
		sig_arg_info(d, a, &t->count, &t->dtype, &t->is_list, &types);
		t->name = ge_xstrdup(a->name);
		t->orig = (int)i;
		t->ops = ge_xmalloc(((size_t)t->count + 1) * sizeof *t->ops);
		for (int j = 0; j < t->count; j++) {
			if (t->count > 1)
				snprintf(nm, sizeof nm, "%.500s_%d%s", a->name, j,
					 output ? "_RetVal" : "");
			else
				snprintf(nm, sizeof nm, "%.500s%s", a->name,
					 output ? "_RetVal" : "");
			const char *use = output ? ge_graph_unique_name(b, nm) : nm;
			ge_opid id = ge_graph_add_op(b, use, output ? RET_OP : ARG_OP,
						     NULL);
			if (id == GE_NOOP)
				return ge_err(err, GE_EFORMAT,
					      "%s: arg '%s' is defined twice",
					      label(b), a->name);
			int dt = types ? types[j] : t->dtype;
			if (dt)
				set_attr_int(b, id, "T", dt, 1);
			set_attr_int(b, id, "index", (*index)++, 0);
			t->ops[j] = id;
			if (!output) {
				f->argof = ge_xrealloc(f->argof, (id + 1) *
								 sizeof *f->argof);
				f->argof[id] = (uint32_t)i;
				f->n_argops = id + 1;
			}
		}
	}
	return GE_OK;
}

/* Gives every op its inputs (arrays in the heap layout graph.c expects)
 * and fills the consumer lists, in consumer order so they are sorted. */
static void wire(ge_graph *b, ge_tvec *ins)
{
	size_t n = b->n_ops;
	uint32_t *nuse = ge_xcalloc(n + 1, sizeof *nuse);
	uint32_t *ncout = ge_xcalloc(n + 1, sizeof *ncout);
	for (size_t i = 0; i < n; i++) {
		ge_op *o = &b->ops[i];
		uint32_t k = (uint32_t)ins[i].n;
		o->in = ge_xmalloc(ge_edge_room(k) * sizeof *o->in);
		if (k)
			memcpy(o->in, ins[i].v, k * sizeof *o->in);
		o->n_in = o->n_ctrl = 0;
		for (uint32_t s = 0; s < k; s++) {
			if (o->in[s].index == GE_CONTROL)
				o->n_ctrl++;
			else
				o->n_in++;
			if (o->in[s].op != GE_NOOP) {
				if (o->in[s].index == GE_CONTROL)
					ncout[o->in[s].op]++;
				else
					nuse[o->in[s].op]++;
			}
		}
		o->flags |= OPF_IN_OWNED;
	}
	for (size_t i = 0; i < n; i++) {
		ge_op *o = &b->ops[i];
		o->uses = ge_xmalloc(ge_edge_room(nuse[i]) * sizeof *o->uses);
		o->couts = ge_xmalloc(ge_edge_room(ncout[i]) * sizeof *o->couts);
		o->n_uses = o->n_couts = 0;
		o->flags |= OPF_USES_OWNED | OPF_COUTS_OWNED;
	}
	for (size_t i = 0; i < n; i++) {
		ge_op *o = &b->ops[i];
		for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++) {
			ge_tref t = o->in[s];
			if (t.op == GE_NOOP)
				continue;
			ge_op *p = &b->ops[t.op];
			if (s < o->n_in)
				p->uses[p->n_uses++] = (ge_use){(ge_opid)i, s};
			else
				p->couts[p->n_couts++] = (ge_opid)i;
		}
	}
	free(nuse);
	free(ncout);
}

/* Control inputs after data inputs, as the model keeps them. */
static void push_resolved(ge_tvec *dst, const ge_tvec *src)
{
	for (size_t i = 0; i < src->n; i++)
		ge_tvec_push(dst, src->v[i]);
}

static int parse_nodes(ge_graph *b, ge_fn *f, ge_error *err)
{
	const uint8_t *p = f->raw, *end = f->raw + f->raw_len;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			goto bad;
		uint32_t fno = (uint32_t)(tag >> 3);
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, end, (int)(tag & 7)))
				goto bad;
			continue;
		}
		if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			goto bad;
		const uint8_t *q = p;
		p += l;
		if (fno == FD_RET || fno == FD_CONTROL_RET) {
			mapent **v = fno == FD_RET ? &f->ret0 : &f->cret0;
			size_t *nv = fno == FD_RET ? &f->n_ret0 : &f->n_cret0;
			*v = ge_xrealloc(*v, (*nv + 1) * sizeof **v);
			mapent *m = &(*v)[(*nv)++];
			map_entry(q, p, &m->key, &m->val);
			m->op = GE_NOOP;
			continue;
		}
		if (fno != FD_NODE)
			continue;
		const char *nm, *ty, *dv;
		size_t nl, tl, dl;
		if (scan_nodedef(q, p, &nm, &nl, &ty, &tl, &dv, &dl))
			return ge_err(err, GE_EFORMAT,
				      "%s: node #%zu is corrupt or has no name "
				      "or op", label(b), b->n_ops);
		char *name = ge_xstrndup(nm, nl), *type = ge_xstrndup(ty, tl);
		ge_opid id = ge_graph_add_op(b, name, type, NULL);
		free(type);
		if (id == GE_NOOP) {
			ge_err(err, GE_EFORMAT,
			       "%s: node '%s': name already used by another "
			       "node or an arg", label(b), name);
			free(name);
			return GE_EFORMAT;
		}
		free(name);
		ge_op *o = &b->ops[id];
		o->raw = q;
		o->raw_len = (uint32_t)l;
		o->device = ge_intern(b, dv ? dv : "", dv ? dl : 0);
	}
	return GE_OK;
bad:
	return ge_err(err, GE_EFORMAT, "%s: truncated or corrupt", label(b));
}

/* Resolves the inputs of the node ops and the ret map of the _Retval ops. */
/* Notes "op:arg:k" for an op of a type without an OpDef. */
static void note_unknown(ge_graph *b, ge_fn *f, const char *s, size_t n)
{
	const char *c1 = memchr(s, ':', n), *c2;
	if (!c1 || !(c2 = memchr(c1 + 1, ':', n - (size_t)(c1 - s) - 1)))
		return;
	const char *r = c2 + 1;
	size_t rl = n - (size_t)(r - s);
	if (!all_digits(r, rl))
		return;
	ge_opid p = ge_idx_find_n(b, s, (size_t)(c1 - s), 0);
	if (p == GE_NOOP || ge_graph_opdef(b, ge_op_type(b, p)))
		return;
	const char *arg = c1 + 1;
	size_t al = (size_t)(c2 - arg);
	int k = atoi(r);
	for (size_t i = 0; i < f->n_unk; i++)
		if (f->unk[i].op == p && !strncmp(f->unk[i].arg, arg, al) &&
		    !f->unk[i].arg[al]) {
			if (k + 1 > f->unk[i].count)
				f->unk[i].count = k + 1;
			return;
		}
	f->unk = ge_xrealloc(f->unk, (f->n_unk + 1) * sizeof *f->unk);
	f->unk[f->n_unk++] = (unkout){p, ge_xstrndup(arg, al), 0, k + 1};
}

static void note_unknowns(ge_graph *b, ge_fn *f)
{
	for (size_t i = 0; i < b->n_ops; i++) {
		const ge_op *o = &b->ops[i];
		const uint8_t *q = o->raw, *qe = o->raw + o->raw_len;
		while (o->raw && q < qe) {
			uint64_t tag, l;
			ge_read_varint(&q, qe, &tag);
			if ((tag >> 3) != ND_INPUT) {
				ge_skip_field(&q, qe, (int)(tag & 7));
				continue;
			}
			ge_read_varint(&q, qe, &l);
			note_unknown(b, f, (const char *)q, l);
			q += l;
		}
	}
	for (size_t r = 0; r < f->n_ret0; r++)
		note_unknown(b, f, f->ret0[r].val, strlen(f->ret0[r].val));
	/* flat ranges, per op in order of first mention */
	for (size_t i = 0; i < f->n_unk; i++) {
		int base = 0;
		for (size_t j = 0; j < i; j++)
			if (f->unk[j].op == f->unk[i].op)
				base = f->unk[j].start + f->unk[j].count;
		f->unk[i].start = base;
	}
}

static int parse_inputs(ge_graph *b, ge_fn *f, ge_tvec *ins, ge_error *err)
{
	ge_tvec tmp = GE_VEC_INIT;
	note_unknowns(b, f);
	for (size_t i = 0; i < b->n_ops; i++) {
		ge_op *o = &b->ops[i];
		if (!o->raw)
			continue;
		const uint8_t *q = o->raw, *qe = o->raw + o->raw_len;
		int seen_ctrl = 0;
		while (q < qe) {
			uint64_t tag, l;
			ge_read_varint(&q, qe, &tag);
			if ((tag >> 3) != ND_INPUT) {
				ge_skip_field(&q, qe, (int)(tag & 7));
				continue;
			}
			ge_read_varint(&q, qe, &l);
			const char *s = (const char *)q;
			q += l;
			int ctrl = l && s[0] == '^';
			if (!ctrl && seen_ctrl) {
				ge_tvec_free(&tmp);
				return ge_err(err, GE_EFORMAT,
					      "%s: node '%s': data input '%.*s' "
					      "comes after a control input",
					      label(b), o->name,
					      (int)(l > 200 ? 200 : l), s);
			}
			seen_ctrl |= ctrl;
			tmp.n = 0;
			if (resolve_input(b, f, s, l, &tmp))
				ge_tvec_push(&tmp, (ge_tref){
					GE_NOOP, (int32_t)ge_add_dangling(b, s, l)});
			push_resolved(&ins[i], &tmp);
		}
	}
	for (size_t k = 0; k < f->n_out0; k++) {
		fnarg *a = &f->out0[k];
		const char *val = NULL;
		for (size_t r = 0; r < f->n_ret0; r++)
			if (!strcmp(f->ret0[r].key, a->name))
				val = f->ret0[r].val;
		tmp.n = 0;
		if (val && resolve_input(b, f, val, strlen(val), &tmp))
			ge_tvec_push(&tmp, (ge_tref){
				GE_NOOP,
				(int32_t)ge_add_dangling(b, val, strlen(val))});
		for (int j = 0; j < a->count && (size_t)j < tmp.n; j++)
			ge_tvec_push(&ins[a->ops[j]], tmp.v[j]);
	}
	for (size_t k = 0; k < f->n_cret0; k++)
		f->cret0[k].op = ge_graph_find(b, f->cret0[k].val);
	ge_tvec_free(&tmp);
	return GE_OK;
}

static int parse_body(ge_graph *root, ge_funcid fid, ge_error *err)
{
	ge_fn *f = &root->flib->fn[fid];
	const Tensorflow__OpDef *d = raw_sig(f);
	ge_graph *b = ge_graph_new();
	b->parent = root;
	b->func_id = fid;
	b->format = root->format;
	char *nm = ge_xmalloc(strlen(label(root)) + strlen(f->name) + 32);
	sprintf(nm, "%s: function '%s'", label(root), f->name);
	ge_graph_set_name(b, nm);
	free(nm);
	int index = 0, rc;
	ge_tvec *ins = NULL;
	if ((rc = add_arg_ops(b, f, d, 0, &index, err)) ||
	    (rc = parse_nodes(b, f, err)))
		goto fail;
	index = 0;
	if ((rc = add_arg_ops(b, f, d, 1, &index, err)))
		goto fail;
	ins = ge_xcalloc(b->n_ops + 1, sizeof *ins);
	if ((rc = parse_inputs(b, f, ins, err)))
		goto fail;
	wire(b, ins);
	free(f->argof);
	f->argof = NULL;
	f->n_argops = 0;
	for (size_t i = 0; i < b->n_ops; i++) {
		ge_tvec_free(&ins[i]);
		if (b->ops[i].raw)
			b->ops[i].flags &= ~(uint32_t)OPF_DIRTY;
	}
	free(ins);
	f->body = b;
	f->base_ver = b->version;
	return GE_OK;
fail:
	free(f->argof);
	f->argof = NULL;
	f->n_argops = 0;
	if (ins)
		for (size_t i = 0; i < b->n_ops; i++)
			ge_tvec_free(&ins[i]);
	free(ins);
	fnargs_free(f->in0, f->n_in0);
	fnargs_free(f->out0, f->n_out0);
	mapents_free(f->ret0, f->n_ret0);
	mapents_free(f->cret0, f->n_cret0);
	f->in0 = f->out0 = NULL;
	f->ret0 = f->cret0 = NULL;
	f->n_in0 = f->n_out0 = f->n_ret0 = f->n_cret0 = 0;
	for (size_t i = 0; i < f->n_unk; i++)
		free(f->unk[i].arg);
	free(f->unk);
	f->unk = NULL;
	f->n_unk = 0;
	b->parent = NULL;
	ge_graph_free(b);
	return rc;
}

ge_graph *ge_func_body(ge_graph *g, ge_funcid f, ge_error *err)
{
	ge_graph *root = root_of(g);
	if (ge_flib_load(root, err))
		return NULL;
	ge_fn *fn = FN(root, f);
	if (!fn) {
		ge_err(err, GE_EINVAL, "no function #%u", f);
		return NULL;
	}
	if (!fn->body && parse_body(root, f, err))
		return NULL;
	return fn->body;
}

/* ------------------------------------------------------------ sync */

struct argop {
	ge_opid id;
	int64_t index;
};

static int cmp_argop(const void *a, const void *b)
{
	const struct argop *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static char *ret_name_of(const char *opname)
{
	size_t n = strlen(opname);
	if (n > 7 && !strcmp(opname + n - 7, "_RetVal"))
		n -= 7;
	return ge_xstrndup(opname, n);
}

/* The current arg list (inputs or outputs) from the body's _Arg or
 * _Retval ops, ordered by their index attr: runs of the ops of one list
 * arg of the original signature stay one arg; any other op is one plain
 * arg named as the op (an output: without its "_RetVal"). */
static fnarg *cur_args(ge_graph *b, const fnarg *orig, size_t n_orig,
		       const char *type, size_t *n_out)
{
	struct argop *v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < b->n_ops; i++) {
		const ge_op *o = &b->ops[i];
		if ((o->flags & OPF_DEAD) || strcmp(o->type, type))
			continue;
		v = ge_xrealloc(v, (n + 1) * sizeof *v);
		int64_t ix = INT64_MAX;
		ge_op_attr_int(b, (ge_opid)i, "index", &ix);
		v[n++] = (struct argop){(ge_opid)i, ix};
	}
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_argop);
	/* where each op stood in the original signature */
	int *oa = ge_xmalloc((b->n_ops + 1) * sizeof *oa);
	int *oe = ge_xmalloc((b->n_ops + 1) * sizeof *oe);
	uint8_t *used = ge_xcalloc(n_orig + 1, 1);
	for (size_t i = 0; i < b->n_ops; i++)
		oa[i] = oe[i] = -1;
	for (size_t k = 0; k < n_orig; k++)
		for (int j = 0; j < orig[k].count; j++) {
			oa[orig[k].ops[j]] = (int)k;
			oe[orig[k].ops[j]] = j;
		}
	fnarg *res = ge_xcalloc(n + 1, sizeof *res);
	size_t nr = 0;
	int is_ret = !strcmp(type, RET_OP);
	for (size_t i = 0; i < n;) {
		ge_opid id = v[i].id;
		fnarg *r = &res[nr++];
		int k = oa[id];
		r->dtype = 0;
		int dt;
		if (!ge_op_attr_type(b, id, "T", &dt))
			r->dtype = dt;
		if (k >= 0 && orig[k].is_list && oe[id] == 0 && !used[k]) {
			/* a run of the list's elements, in order */
			size_t j = 1;
			while (i + j < n && (int)j < orig[k].count &&
			       oa[v[i + j].id] == k && oe[v[i + j].id] == (int)j)
				j++;
			if ((int)j == orig[k].count) {
				used[k] = 1;
				r->name = ge_xstrdup(orig[k].name);
				r->count = (int)j;
				r->orig = k;
				r->is_list = 1;
				r->ops = ge_xmalloc(j * sizeof *r->ops);
				for (size_t q = 0; q < j; q++)
					r->ops[q] = v[i + q].id;
				i += j;
				continue;
			}
		}
		r->count = 1;
		r->orig = k >= 0 && !orig[k].is_list && !used[k] ? k : -1;
		if (r->orig >= 0)
			used[k] = 1;
		if (is_ret && r->orig >= 0)
			r->name = ge_xstrdup(orig[k].name);
		else if (is_ret)
			r->name = ret_name_of(b->ops[id].name);
		else
			r->name = ge_xstrdup(b->ops[id].name);
		r->ops = ge_xmalloc(sizeof *r->ops);
		r->ops[0] = id;
		i++;
	}
	free(v);
	free(oa);
	free(oe);
	free(used);
	*n_out = nr;
	return res;
}

static int args_same(const fnarg *a, size_t na, const fnarg *o, size_t no)
{
	if (na != no)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].orig != (int)i || strcmp(a[i].name, o[i].name) ||
		    a[i].count != o[i].count ||
		    (a[i].dtype && o[i].dtype && a[i].dtype != o[i].dtype))
			return 0;
	return 1;
}

static int crets_intact(const ge_graph *b, const ge_fn *f)
{
	for (size_t k = 0; k < f->n_cret0; k++) {
		ge_opid id = f->cret0[k].op;
		if (id != GE_NOOP && (!ge_op_alive(b, id) ||
				      strcmp(b->ops[id].name, f->cret0[k].val)))
			return 0;
	}
	return 1;
}

/* An ArgDef for the packed signature: the original one (renamed) when the
 * arg is one of the signature's and its dtype did not change, else a new
 * one of a plain type. */
static Tensorflow__OpDef__ArgDef *argdef_for(Tensorflow__OpDef__ArgDef **orig,
					     const fnarg *a, const fnarg *o0,
					     Tensorflow__OpDef__ArgDef *fresh,
					     char **saved)
{
	*saved = NULL;
	if (a->orig >= 0 && (!a->dtype || a->dtype == o0[a->orig].dtype ||
			     !o0[a->orig].dtype)) {
		Tensorflow__OpDef__ArgDef *d = orig[a->orig];
		*saved = d->name;
		d->name = a->name;
		return d;
	}
	tensorflow__op_def__arg_def__init(fresh);
	fresh->name = a->name;
	fresh->type = (Tensorflow__DataType)a->dtype;
	return fresh;
}

/* Packs the signature as the body now stands into f->sig_bytes. */
static void build_sig(ge_fn *f)
{
	const uint8_t *sb;
	size_t sn;
	if (ge_find_len_field(f->raw, f->raw + f->raw_len, FD_SIGNATURE, &sb,
			      &sn))
		sn = 0, sb = (const uint8_t *)"";
	Tensorflow__OpDef *d = tensorflow__op_def__unpack(NULL, sn, sb);
	if (!d)
		d = tensorflow__op_def__unpack(NULL, 0, (const uint8_t *)"");
	Tensorflow__OpDef__ArgDef **oi = d->input_arg, **oo = d->output_arg;
	size_t noi = d->n_input_arg, noo = d->n_output_arg;
	char *oname = d->name;
	char **oco = d->control_output;
	size_t noco = d->n_control_output;
	size_t nt = f->n_in + f->n_out;
	Tensorflow__OpDef__ArgDef *fresh = ge_xcalloc(nt + 1, sizeof *fresh);
	Tensorflow__OpDef__ArgDef **arr = ge_xcalloc(nt + 1, sizeof *arr);
	char **saved = ge_xcalloc(nt + 1, sizeof *saved);
	for (size_t i = 0; i < f->n_in; i++)
		arr[i] = argdef_for(oi, &f->in[i], f->in0, &fresh[i], &saved[i]);
	for (size_t i = 0; i < f->n_out; i++)
		arr[f->n_in + i] = argdef_for(oo, &f->out[i], f->out0,
					      &fresh[f->n_in + i],
					      &saved[f->n_in + i]);
	d->input_arg = arr;
	d->n_input_arg = f->n_in;
	d->output_arg = arr + f->n_in;
	d->n_output_arg = f->n_out;
	d->name = f->name;
	/* control outputs whose op is gone are dropped */
	char **co = ge_xcalloc(noco + 1, sizeof *co);
	size_t nco = 0;
	for (size_t i = 0; i < noco; i++) {
		int keep = 1;
		for (size_t k = 0; k < f->n_cret0; k++)
			if (!strcmp(f->cret0[k].key, oco[i]) &&
			    (f->cret0[k].op == GE_NOOP ||
			     !ge_op_alive(f->body, f->cret0[k].op)))
				keep = 0;
		if (keep)
			co[nco++] = oco[i];
	}
	d->control_output = co;
	d->n_control_output = nco;
	f->sig_bytes.len = 0;
	ge_buf_reserve(&f->sig_bytes, tensorflow__op_def__get_packed_size(d));
	f->sig_bytes.len = tensorflow__op_def__pack(d, f->sig_bytes.data);
	/* give the message its own parts back before freeing it */
	for (size_t i = 0; i < nt; i++)
		if (saved[i])
			arr[i]->name = saved[i];
	d->input_arg = oi;
	d->n_input_arg = noi;
	d->output_arg = oo;
	d->n_output_arg = noo;
	d->name = oname;
	d->control_output = oco;
	d->n_control_output = noco;
	protobuf_c_message_free_unpacked(&d->base, NULL);
	free(fresh);
	free(arr);
	free(saved);
	free(co);
}

/* Brings f->in/out (and the packed signature when it changed) up to date
 * with the body. */
static void fn_sync(ge_fn *f)
{
	ge_graph *b = f->body;
	if (!b || (f->synced && f->sync_ver == b->version && !f->renamed))
		return;
	fnargs_free(f->in, f->n_in);
	fnargs_free(f->out, f->n_out);
	f->in = cur_args(b, f->in0, f->n_in0, ARG_OP, &f->n_in);
	f->out = cur_args(b, f->out0, f->n_out0, RET_OP, &f->n_out);
	f->sig_changed = f->renamed || !args_same(f->in, f->n_in, f->in0, f->n_in0) ||
			 !args_same(f->out, f->n_out, f->out0, f->n_out0) ||
			 !crets_intact(b, f);
	if (f->cur)
		protobuf_c_message_free_unpacked(&f->cur->base, NULL);
	f->cur = NULL;
	if (f->sig_changed) {
		build_sig(f);
		f->cur = tensorflow__op_def__unpack(NULL, f->sig_bytes.len,
						    f->sig_bytes.data);
	}
	f->sync_ver = b->version;
	f->synced = 1;
}

/* The signature as it is now (a renamed function always has a body). */
static const Tensorflow__OpDef *cur_sig(ge_fn *f)
{
	if (f->body) {
		fn_sync(f);
		if (f->cur)
			return f->cur;
	}
	return raw_sig(f);
}

/* TensorFlow registers _Arg and _Retval outside its public op list: their
 * OpDefs (T, index) are made here once and kept for the process. */
static Tensorflow__OpDef *instantiation_opdef(int ret)
{
	static Tensorflow__OpDef *defs[2];
	static Tensorflow__OpDef__ArgDef args[2];
	static Tensorflow__OpDef__ArgDef *argp[2];
	static Tensorflow__OpDef__AttrDef attrs[2][2];
	static Tensorflow__OpDef__AttrDef *attrp[2][2];
	static Tensorflow__OpDef od[2];
	if (defs[ret])
		return defs[ret];
	Tensorflow__OpDef *d = &od[ret];
	tensorflow__op_def__init(d);
	d->name = (char *)(ret ? RET_OP : ARG_OP);
	tensorflow__op_def__arg_def__init(&args[ret]);
	args[ret].name = (char *)(ret ? "input" : "output");
	args[ret].type_attr = (char *)"T";
	argp[ret] = &args[ret];
	if (ret) {
		d->input_arg = argp + 1;
		d->n_input_arg = 1;
	} else {
		d->output_arg = argp;
		d->n_output_arg = 1;
	}
	for (int k = 0; k < 2; k++) {
		tensorflow__op_def__attr_def__init(&attrs[ret][k]);
		attrs[ret][k].name = (char *)(k ? "index" : "T");
		attrs[ret][k].type = (char *)(k ? "int" : "type");
		attrp[ret][k] = &attrs[ret][k];
	}
	d->attr = attrp[ret];
	d->n_attr = 2;
	d->is_stateful = ret;
	defs[ret] = d;
	return d;
}

const Tensorflow__OpDef *ge_flib_opdef(const ge_graph *g, const char *type)
{
	if (type[0] == '_' && !strcmp(type, ARG_OP))
		return instantiation_opdef(0);
	if (type[0] == '_' && !strcmp(type, RET_OP))
		return instantiation_opdef(1);
	struct ge_flib *l = lib(g);
	ge_funcid id = idx_find(l, type, strlen(type));
	return id == GE_NOFUNC ? NULL : cur_sig(&l->fn[id]);
}

/* ------------------------------------------------------------ encoding */

/* The text naming tensor t (or op t.op for a control input) in a body. */
static void tensor_text(const ge_graph *b, ge_tref t, ge_buf *out)
{
	if (t.op == GE_NOOP) {
		ge_buf_adds(out, b->dangling[t.index]);
		return;
	}
	const ge_op *p = &b->ops[t.op];
	const ge_fn *f = &b->parent->flib->fn[b->func_id];
	if (t.index == GE_CONTROL)
		ge_buf_addc(out, '^');
	if (!strcmp(p->type, ARG_OP)) {
		for (size_t i = 0; i < f->n_in; i++)
			if (f->in[i].is_list)
				for (int j = 0; j < f->in[i].count; j++)
					if (f->in[i].ops[j] == t.op) {
						ge_buf_adds(out, f->in[i].name);
						if (t.index != GE_CONTROL)
							ge_buf_printf(out, ":%d", j);
						return;
					}
		ge_buf_adds(out, p->name);
		return;
	}
	ge_buf_adds(out, p->name);
	if (t.index == GE_CONTROL)
		return;
	int start, count;
	const char *arg = out_arg(b, t.op, NULL, (size_t)t.index, &start,
				  &count);
	if (arg)
		ge_buf_printf(out, ":%s:%d", arg, t.index - start);
	else /* no OpDef: the best TensorFlow could read back */
		ge_buf_printf(out, ":output:%d", t.index);
}

static void body_input_text(const ge_graph *b, ge_opid id, uint32_t slot,
			    ge_buf *out)
{
	tensor_text(b, b->ops[id].in[slot], out);
}

static void put_map_entry(ge_buf *out, uint32_t field, const char *k,
			  const char *v)
{
	ge_buf e = GE_BUF_INIT;
	ge_buf_lenfield(&e, 1, k, strlen(k));
	ge_buf_lenfield(&e, 2, v, strlen(v));
	ge_buf_lenfield(out, field, e.data, e.len);
	ge_buf_free(&e);
}

/* The ret map value of output arg a: what its _Retval reads (a whole
 * output arg of one op for a list). */
static void ret_value(const ge_graph *b, const fnarg *a, ge_buf *out)
{
	const ge_op *r = &b->ops[a->ops[0]];
	if (!r->n_in)
		return;
	ge_tref t = r->in[0];
	if (a->is_list && t.op != GE_NOOP && strcmp(b->ops[t.op].type, ARG_OP)) {
		int start, count;
		const char *arg = out_arg(b, t.op, NULL, (size_t)t.index, &start,
					  &count);
		if (arg) {
			ge_buf_printf(out, "%s:%s", b->ops[t.op].name, arg);
			return;
		}
	}
	if (a->is_list && t.op != GE_NOOP && a->count > 1) {
		/* a list arg passed on whole */
		const ge_fn *f = &b->parent->flib->fn[b->func_id];
		for (size_t i = 0; i < f->n_in; i++)
			if (f->in[i].count && f->in[i].ops[0] == t.op) {
				ge_buf_adds(out, f->in[i].name);
				return;
			}
	}
	tensor_text(b, t, out);
}

/* The ret map as it is now, keys in the order read, new ones last;
 * returns whether it equals what was read. */
static int encode_rets(const ge_graph *b, const ge_fn *f, ge_buf *out)
{
	int same = 1;
	ge_buf v = GE_BUF_INIT;
	uint8_t *done = ge_xcalloc(f->n_out + 1, 1);
	for (size_t r = 0; r < f->n_ret0; r++) {
		size_t i;
		for (i = 0; i < f->n_out; i++)
			if (!done[i] && !strcmp(f->out[i].name, f->ret0[r].key))
				break;
		if (i == f->n_out) {
			same = 0;
			continue;
		}
		done[i] = 1;
		v.len = 0;
		ret_value(b, &f->out[i], &v);
		ge_buf_addc(&v, 0);
		if (strcmp((char *)v.data, f->ret0[r].val))
			same = 0;
		put_map_entry(out, FD_RET, f->out[i].name, (char *)v.data);
	}
	for (size_t i = 0; i < f->n_out; i++) {
		if (done[i])
			continue;
		same = 0;
		v.len = 0;
		ret_value(b, &f->out[i], &v);
		ge_buf_addc(&v, 0);
		put_map_entry(out, FD_RET, f->out[i].name, (char *)v.data);
	}
	free(done);
	ge_buf_free(&v);
	return same;
}

static int encode_crets(const ge_graph *b, const ge_fn *f, ge_buf *out)
{
	int same = 1;
	for (size_t k = 0; k < f->n_cret0; k++) {
		ge_opid id = f->cret0[k].op;
		if (id == GE_NOOP) {
			put_map_entry(out, FD_CONTROL_RET, f->cret0[k].key,
				      f->cret0[k].val);
			continue;
		}
		if (!ge_op_alive(b, id)) {
			same = 0;
			continue;
		}
		if (strcmp(b->ops[id].name, f->cret0[k].val))
			same = 0;
		put_map_entry(out, FD_CONTROL_RET, f->cret0[k].key,
			      b->ops[id].name);
	}
	return same;
}

static void encode_nodes(const ge_graph *b, ge_buf *out)
{
	ge_buf node = GE_BUF_INIT;
	for (size_t i = 0; i < b->n_ops; i++) {
		const ge_op *o = &b->ops[i];
		if ((o->flags & OPF_DEAD) || !strcmp(o->type, ARG_OP) ||
		    !strcmp(o->type, RET_OP))
			continue;
		if (o->raw && !(o->flags & OPF_DIRTY)) {
			ge_buf_lenfield(out, FD_NODE, o->raw, o->raw_len);
			continue;
		}
		node.len = 0;
		ge_op_encode_ex(b, (ge_opid)i, &node, body_input_text);
		ge_buf_lenfield(out, FD_NODE, node.data, node.len);
	}
	ge_buf_free(&node);
}

/* map<uint32, X> entries keyed by input arg index (arg_attr,
 * resource_arg_unique_id), re-keyed to the args' new positions; entries
 * of args that are gone are dropped. */
static void remap_arg_entry(const ge_fn *f, uint32_t field, const uint8_t *p,
			    const uint8_t *end, ge_buf *out)
{
	uint64_t key = 0;
	const uint8_t *q = p;
	ge_buf e = GE_BUF_INIT;
	while (q < end) {
		const uint8_t *fs = q;
		uint64_t tag;
		if (ge_read_varint(&q, end, &tag))
			break;
		if ((tag >> 3) == 1 && (tag & 7) == 0) {
			if (ge_read_varint(&q, end, &key))
				break;
			continue;
		}
		if (ge_skip_field(&q, end, (int)(tag & 7)))
			break;
		ge_buf_add(&e, fs, (size_t)(q - fs));
	}
	for (size_t i = 0; i < f->n_in; i++)
		if (f->in[i].orig >= 0 && (uint64_t)f->in[i].orig == key) {
			ge_buf ent = GE_BUF_INIT;
			ge_buf_tag(&ent, 1, 0);
			ge_buf_varint(&ent, i);
			ge_buf_add(&ent, e.data, e.len);
			ge_buf_lenfield(out, field, ent.data, ent.len);
			ge_buf_free(&ent);
			break;
		}
	ge_buf_free(&e);
}

static int args_identity(const ge_fn *f)
{
	if (f->n_in != f->n_in0)
		return 0;
	for (size_t i = 0; i < f->n_in; i++)
		if (f->in[i].orig != (int)i)
			return 0;
	return 1;
}

/* Whether f must be re-encoded. */
static int fn_dirty(const ge_fn *f)
{
	return f->renamed || (f->body && f->body->version != f->base_ver);
}

static void encode_fn(ge_fn *f, ge_buf *out)
{
	if (!fn_dirty(f)) {
		ge_buf_add(out, f->raw, f->raw_len);
		return;
	}
	fn_sync(f);
	const ge_graph *b = f->body;
	ge_buf rets = GE_BUF_INIT, crets = GE_BUF_INIT;
	int rets_same = encode_rets(b, f, &rets);
	int crets_same = encode_crets(b, f, &crets);
	int ident = args_identity(f);
	int done_nodes = 0, done_rets = 0, done_crets = 0, done_sig = 0;
	const uint8_t *p = f->raw, *end = f->raw + f->raw_len;
	while (p < end) {
		const uint8_t *fs = p, *body = NULL;
		uint64_t tag, l = 0;
		if (ge_read_varint(&p, end, &tag))
			break;
		uint32_t fno = (uint32_t)(tag >> 3);
		if ((tag & 7) == 2) {
			if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
				break;
			body = p;
			p += l;
		} else if (ge_skip_field(&p, end, (int)(tag & 7))) {
			break;
		}
		size_t flen = (size_t)(p - fs);
		switch (body ? fno : 0) {
		case FD_SIGNATURE:
			if (f->sig_changed)
				ge_buf_lenfield(out, FD_SIGNATURE,
						f->sig_bytes.data,
						f->sig_bytes.len);
			else
				ge_buf_add(out, fs, flen);
			done_sig = 1;
			continue;
		case FD_NODE:
			if (!done_nodes)
				encode_nodes(b, out);
			done_nodes = 1;
			continue;
		case FD_RET:
			if (rets_same)
				ge_buf_add(out, fs, flen);
			else if (!done_rets)
				ge_buf_add(out, rets.data, rets.len);
			done_rets = 1;
			continue;
		case FD_CONTROL_RET:
			if (crets_same)
				ge_buf_add(out, fs, flen);
			else if (!done_crets)
				ge_buf_add(out, crets.data, crets.len);
			done_crets = 1;
			continue;
		case FD_ARG_ATTR:
		case FD_RESOURCE_ID:
			if (ident)
				ge_buf_add(out, fs, flen);
			else
				remap_arg_entry(f, fno, body, body + l, out);
			continue;
		}
		ge_buf_add(out, fs, flen);
	}
	if (!done_sig && f->sig_changed)
		ge_buf_lenfield(out, FD_SIGNATURE, f->sig_bytes.data,
				f->sig_bytes.len);
	if (!done_nodes)
		encode_nodes(b, out);
	if (!done_rets)
		ge_buf_add(out, rets.data, rets.len);
	if (!done_crets)
		ge_buf_add(out, crets.data, crets.len);
	ge_buf_free(&rets);
	ge_buf_free(&crets);
}

void ge_func_encode(ge_graph *g, ge_funcid f, ge_buf *out)
{
	ge_fn *fn = FN(g, f);
	if (fn)
		encode_fn(fn, out);
}

int ge_flib_changed(const ge_graph *g)
{
	const struct ge_flib *l = g->flib;
	if (!l || g->parent)
		return 0;
	if (l->changed)
		return 1;
	for (size_t i = 0; i < l->n_fn; i++)
		if (!l->fn[i].dead && fn_dirty(&l->fn[i]))
			return 1;
	return 0;
}

void ge_flib_encode_payload(const ge_graph *g, ge_buf *out)
{
	struct ge_flib *l = lib(g);
	ge_buf fb = GE_BUF_INIT;
	for (size_t i = 0; i < l->n_items; i++) {
		const fitem *it = &l->items[i];
		if (it->f == GE_NOFUNC) {
			ge_buf_add(out, it->p, it->len);
			continue;
		}
		ge_fn *f = &l->fn[it->f];
		if (f->dead)
			continue;
		fb.len = 0;
		encode_fn(f, &fb);
		ge_buf_lenfield(out, FL_FUNCTION, fb.data, fb.len);
	}
	ge_buf_free(&fb);
}

/* ------------------------------------------------------------ views */

static void make_view(ge_fn *f)
{
	free(f->view_in);
	free(f->view_out);
	if (f->body) {
		fn_sync(f);
		f->n_view_in = f->n_in;
		f->n_view_out = f->n_out;
		f->view_in = ge_xcalloc(f->n_in + 1, sizeof *f->view_in);
		f->view_out = ge_xcalloc(f->n_out + 1, sizeof *f->view_out);
		for (size_t i = 0; i < f->n_in; i++)
			f->view_in[i] = (ge_func_arg){f->in[i].name, f->in[i].dtype,
						      f->in[i].count};
		for (size_t i = 0; i < f->n_out; i++)
			f->view_out[i] = (ge_func_arg){
				f->out[i].name, f->out[i].dtype, f->out[i].count};
		return;
	}
	const Tensorflow__OpDef *d = raw_sig(f);
	f->n_view_in = d->n_input_arg;
	f->n_view_out = d->n_output_arg;
	f->view_in = ge_xcalloc(d->n_input_arg + 1, sizeof *f->view_in);
	f->view_out = ge_xcalloc(d->n_output_arg + 1, sizeof *f->view_out);
	for (int o = 0; o < 2; o++) {
		size_t n = o ? d->n_output_arg : d->n_input_arg;
		for (size_t i = 0; i < n; i++) {
			const Tensorflow__OpDef__ArgDef *a =
				o ? d->output_arg[i] : d->input_arg[i];
			int count, dtype, is_list;
			sig_arg_info(d, a, &count, &dtype, &is_list, NULL);
			(o ? f->view_out : f->view_in)[i] =
				(ge_func_arg){a->name, dtype, count};
		}
	}
}

size_t ge_func_num_inputs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	if (!fn)
		return 0;
	make_view(fn);
	return fn->n_view_in;
}

size_t ge_func_num_outputs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	if (!fn)
		return 0;
	make_view(fn);
	return fn->n_view_out;
}

ge_func_arg ge_func_input(ge_graph *g, ge_funcid f, size_t i)
{
	ge_fn *fn = FN(g, f);
	ge_func_arg none = {NULL, 0, 0};
	if (!fn)
		return none;
	if (!fn->view_in || i == 0)
		make_view(fn);
	return i < fn->n_view_in ? fn->view_in[i] : none;
}

ge_func_arg ge_func_output(ge_graph *g, ge_funcid f, size_t i)
{
	ge_fn *fn = FN(g, f);
	ge_func_arg none = {NULL, 0, 0};
	if (!fn)
		return none;
	if (!fn->view_out || i == 0)
		make_view(fn);
	return i < fn->n_view_out ? fn->view_out[i] : none;
}

static size_t count_tensors(ge_graph *g, ge_funcid f, int out)
{
	size_t n = out ? ge_func_num_outputs(g, f) : ge_func_num_inputs(g, f);
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += (size_t)(out ? ge_func_output(g, f, i).count
				  : ge_func_input(g, f, i).count);
	return t;
}

size_t ge_func_num_in_tensors(ge_graph *g, ge_funcid f)
{
	return count_tensors(g, f, 0);
}

size_t ge_func_num_out_tensors(ge_graph *g, ge_funcid f)
{
	return count_tensors(g, f, 1);
}

/* The i-th entry of the FunctionDef's attr map (field 5). */
static int fn_attr_at(const ge_fn *f, size_t i, const uint8_t **key,
		      size_t *klen, const uint8_t **val, size_t *vlen)
{
	const uint8_t *p = f->raw, *end = f->raw + f->raw_len;
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			return -1;
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, end, (int)(tag & 7)))
				return -1;
			continue;
		}
		if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			return -1;
		const uint8_t *q = p, *qe = p + l;
		p += l;
		if ((tag >> 3) != FD_ATTR || i--)
			continue;
		*key = *val = (const uint8_t *)"";
		*klen = *vlen = 0;
		while (q < qe) {
			uint64_t t2, l2;
			if (ge_read_varint(&q, qe, &t2) || (t2 & 7) != 2 ||
			    ge_read_varint(&q, qe, &l2) || l2 > (uint64_t)(qe - q))
				return -1;
			if ((t2 >> 3) == 1)
				*key = q, *klen = l2;
			else if ((t2 >> 3) == 2)
				*val = q, *vlen = l2;
			q += l2;
		}
		return 0;
	}
	return -1;
}

size_t ge_func_num_attrs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = FN(g, f);
	size_t n = 0;
	const uint8_t *k, *v;
	size_t kl, vl;
	while (fn && fn_attr_at(fn, n, &k, &kl, &v, &vl) == 0)
		n++;
	return n;
}

const char *ge_func_attr(ge_graph *g, ge_funcid f, size_t i,
			 const uint8_t **val, size_t *len)
{
	ge_fn *fn = FN(g, f);
	const uint8_t *k;
	size_t kl;
	if (!fn || fn_attr_at(fn, i, &k, &kl, val, len))
		return NULL;
	return ge_intern(root_of(g), (const char *)k, kl);
}

/* ------------------------------------------------------------ references */

/* AttrValue fields: list (1), func (10); ListValue.func (9);
 * NameAttrList.name (1) */
enum { AV_LIST = 1, AV_FUNC = 10, LV_FUNC = 9, NA_NAME = 1 };

typedef void (*name_fn)(void *ud, const char *attr, const uint8_t *name,
			size_t n);

/* Calls fn for each function name in an AttrValue's bytes. */
static void attr_func_names(const char *attr, const uint8_t *p,
			    const uint8_t *end, name_fn fn, void *ud)
{
	while (p < end) {
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			return;
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, end, (int)(tag & 7)))
				return;
			continue;
		}
		if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
			return;
		const uint8_t *q = p, *qe = p + l, *nm;
		size_t nl;
		p += l;
		if ((tag >> 3) == AV_FUNC) {
			if (ge_find_len_field(q, qe, NA_NAME, &nm, &nl) == 0)
				fn(ud, attr, nm, nl);
		} else if ((tag >> 3) == AV_LIST) {
			while (q < qe) {
				uint64_t t2, l2;
				if (ge_read_varint(&q, qe, &t2))
					break;
				if ((t2 & 7) != 2) {
					if (ge_skip_field(&q, qe, (int)(t2 & 7)))
						break;
					continue;
				}
				if (ge_read_varint(&q, qe, &l2) ||
				    l2 > (uint64_t)(qe - q))
					break;
				if ((t2 >> 3) == LV_FUNC &&
				    ge_find_len_field(q, q + l2, NA_NAME, &nm,
						      &nl) == 0)
					fn(ud, attr, nm, nl);
				q += l2;
			}
		}
	}
}

/* Calls fn for each function an op's attrs name, reading split attrs or
 * the node's bytes in place. */
static void op_attr_funcs(const ge_graph *g, ge_opid id, name_fn fn, void *ud)
{
	const ge_op *o = &g->ops[id];
	char key[256];
	if (o->flags & OPF_SPLIT) {
		for (uint32_t i = 0; i < o->n_ents; i++)
			attr_func_names(o->ents[i].key, o->ents[i].raw,
					o->ents[i].raw + o->ents[i].len, fn, ud);
		return;
	}
	if (!o->raw)
		return;
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len, *v;
	const char *k;
	size_t kl, vl;
	while (ge_raw_attr_next(&p, end, &k, &kl, &v, &vl)) {
		if (kl >= sizeof key)
			kl = sizeof key - 1;
		memcpy(key, k, kl);
		key[kl] = 0;
		attr_func_names(key, v, v + vl, fn, ud);
	}
}

struct calls_ud {
	ge_graph *in;
	struct ge_flib *l;
	ge_func_call *v;
	size_t n;
};

static void add_call(void *ud, const char *attr, const uint8_t *nm, size_t n)
{
	struct calls_ud *c = ud;
	c->v = ge_xrealloc(c->v, (c->n + 1) * sizeof *c->v);
	c->v[c->n++] = (ge_func_call){ge_intern(c->in, attr, strlen(attr)),
				      ge_intern(c->in, (const char *)nm, n),
				      idx_find(c->l, (const char *)nm, n)};
}

size_t ge_op_func_calls(ge_graph *in, ge_opid id, ge_func_call **out)
{
	struct calls_ud c = {in, lib(in), NULL, 0};
	*out = NULL;
	if (!ge_op_alive(in, id))
		return 0;
	const char *type = in->ops[id].type;
	ge_funcid t = idx_find(c.l, type, strlen(type));
	if (t != GE_NOFUNC) {
		c.v = ge_xmalloc(sizeof *c.v);
		c.v[c.n++] = (ge_func_call){NULL, type, t};
	}
	op_attr_funcs(in, id, add_call, &c);
	*out = c.v;
	return c.n;
}

static void push_ref(ge_func_ref **v, size_t *n, ge_func_ref r)
{
	*v = ge_xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = r;
}

static void graph_refs(ge_graph *in, ge_funcid f, ge_func_ref **v, size_t *n)
{
	for (size_t i = 0; i < in->n_ops; i++) {
		if (in->ops[i].flags & OPF_DEAD)
			continue;
		ge_func_call *c;
		size_t k = ge_op_func_calls(in, (ge_opid)i, &c);
		for (size_t j = 0; j < k; j++)
			if (c[j].f == f)
				push_ref(v, n, (ge_func_ref){in, (ge_opid)i,
							     c[j].attr});
		free(c);
	}
}

/* Whether a function's body may name `name`: parsed bodies are looked at;
 * unparsed ones only when the name is in their bytes. */
static int may_mention(const ge_fn *f, const char *name)
{
	return f->body || memmem(f->raw, f->raw_len, name, strlen(name));
}

size_t ge_func_callers(ge_graph *g, ge_funcid f, ge_func_ref **out)
{
	ge_graph *root = root_of(g);
	struct ge_flib *l = lib(root);
	size_t n = 0;
	*out = NULL;
	if (f >= l->n_fn)
		return 0;
	const char *name = l->fn[f].name;
	graph_refs(root, f, out, &n);
	for (size_t i = 0; i < l->n_fn; i++) {
		if (l->fn[i].dead || !may_mention(&l->fn[i], name))
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, NULL);
		if (b)
			graph_refs(b, f, out, &n);
	}
	return n;
}

/* ------------------------------------------------------------ edits */

static int check_new_name(ge_graph *root, const char *name, ge_error *err)
{
	if (!name || !*name)
		return ge_err(err, GE_EINVAL, "function names cannot be empty");
	if (ge_func_find(root, name) != GE_NOFUNC)
		return ge_err(err, GE_EINVAL,
			      "a function named '%s' already exists", name);
	return GE_OK;
}

static ge_funcid add_bytes(ge_graph *root, const char *name, uint8_t *bytes,
			   size_t n)
{
	struct ge_flib *l = root->flib;
	ge_funcid id = fn_push(l, name, strlen(name), bytes, n, bytes);
	item_push(l, (fitem){id, NULL, 0, NULL, FL_FUNCTION});
	l->changed = 1;
	idx_rebuild(l);
	return id;
}

ge_funcid ge_func_add(ge_graph *g, const char *name, ge_error *err)
{
	ge_graph *root = root_of(g);
	if (ge_flib_load(root, err) || check_new_name(root, name, err))
		return GE_NOFUNC;
	Tensorflow__OpDef d = TENSORFLOW__OP_DEF__INIT;
	d.name = (char *)name;
	ge_buf sig = GE_BUF_INIT, fd = GE_BUF_INIT;
	ge_buf_reserve(&sig, tensorflow__op_def__get_packed_size(&d));
	sig.len = tensorflow__op_def__pack(&d, sig.data);
	ge_buf_lenfield(&fd, FD_SIGNATURE, sig.data, sig.len);
	ge_buf_free(&sig);
	size_t n;
	uint8_t *bytes = ge_buf_steal(&fd, &n);
	return add_bytes(root, name, bytes, n);
}

/* FunctionDef bytes with the signature's name replaced. */
static void with_name(const uint8_t *p, size_t n, const char *name,
		      ge_buf *out)
{
	const uint8_t *end = p + n;
	while (p < end) {
		const uint8_t *fs = p;
		uint64_t tag, l;
		if (ge_read_varint(&p, end, &tag))
			break;
		if ((tag >> 3) == FD_SIGNATURE && (tag & 7) == 2) {
			if (ge_read_varint(&p, end, &l) || l > (uint64_t)(end - p))
				break;
			Tensorflow__OpDef *d = tensorflow__op_def__unpack(NULL, l, p);
			p += l;
			if (!d) {
				ge_buf_add(out, fs, (size_t)(p - fs));
				continue;
			}
			char *old = d->name;
			d->name = (char *)name;
			ge_buf s = GE_BUF_INIT;
			ge_buf_reserve(&s, tensorflow__op_def__get_packed_size(d));
			s.len = tensorflow__op_def__pack(d, s.data);
			d->name = old;
			protobuf_c_message_free_unpacked(&d->base, NULL);
			ge_buf_lenfield(out, FD_SIGNATURE, s.data, s.len);
			ge_buf_free(&s);
			continue;
		}
		if (ge_skip_field(&p, end, (int)(tag & 7)))
			break;
		ge_buf_add(out, fs, (size_t)(p - fs));
	}
}

ge_funcid ge_func_copy(ge_graph *g, ge_funcid f, const char *new_name,
		       ge_error *err)
{
	ge_graph *root = root_of(g);
	if (ge_flib_load(root, err))
		return GE_NOFUNC;
	if (!ge_func_alive(root, f)) {
		ge_err(err, GE_EINVAL, "function #%u is not in the library", f);
		return GE_NOFUNC;
	}
	if (check_new_name(root, new_name, err))
		return GE_NOFUNC;
	ge_buf cur = GE_BUF_INIT, out = GE_BUF_INIT;
	encode_fn(&root->flib->fn[f], &cur);
	with_name(cur.data, cur.len, new_name, &out);
	ge_buf_free(&cur);
	size_t n;
	uint8_t *bytes = ge_buf_steal(&out, &n);
	return add_bytes(root, new_name, bytes, n);
}

/* Rewrites the function names in an AttrValue from `from` to `to`. */
static int rename_in_attr(Tensorflow__AttrValue *v, const char *from,
			  const char *to)
{
	int n = 0;
	if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && v->func &&
	    !strcmp(v->func->name, from)) {
		free(v->func->name);
		v->func->name = ge_xstrdup(to);
		n++;
	}
	if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list)
		for (size_t i = 0; i < v->list->n_func; i++)
			if (!strcmp(v->list->func[i]->name, from)) {
				free(v->list->func[i]->name);
				v->list->func[i]->name = ge_xstrdup(to);
				n++;
			}
	return n;
}

static void rename_ref_site(const ge_func_ref *r, const char *from,
			    const char *to)
{
	if (!r->attr) {
		ge_op_set_type(r->in, r->op, to);
		return;
	}
	size_t len;
	const uint8_t *raw = ge_op_attr_raw(r->in, r->op, r->attr, &len);
	if (!raw)
		return;
	Tensorflow__AttrValue *v = tensorflow__attr_value__unpack(NULL, len, raw);
	if (!v)
		return;
	if (rename_in_attr(v, from, to))
		ge_op_set_attr(r->in, r->op, r->attr, v);
	protobuf_c_message_free_unpacked(&v->base, NULL);
}

/* GradientDef (function_name = 1, gradient_func = 2) entries of the
 * library naming `from`: renamed to `to`, or dropped when to is NULL. */
static void gradients_follow(struct ge_flib *l, const char *from,
			     const char *to)
{
	for (size_t i = 0; i < l->n_items; i++) {
		fitem *it = &l->items[i];
		if (it->f != GE_NOFUNC || it->field != FL_GRADIENT ||
		    !memmem(it->p, it->len, from, strlen(from)))
			continue;
		const uint8_t *p = it->p, *end = it->p + it->len, *b;
		uint64_t tag, len;
		if (ge_read_varint(&p, end, &tag) || ge_read_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p))
			continue;
		char *s[3] = {NULL, NULL, NULL};
		for (int k = 1; k <= 2; k++) {
			size_t n;
			s[k] = ge_find_len_field(p, p + len, (uint32_t)k, &b, &n)
				       ? ge_xstrdup("")
				       : ge_xstrndup((const char *)b, n);
		}
		int hit = !strcmp(s[1], from) || !strcmp(s[2], from);
		if (hit) {
			ge_buf e = GE_BUF_INIT, out = GE_BUF_INIT;
			for (int k = 1; k <= 2 && to; k++) {
				const char *v = strcmp(s[k], from) ? s[k] : to;
				ge_buf_lenfield(&e, (uint32_t)k, v, strlen(v));
			}
			if (to)
				ge_buf_lenfield(&out, FL_GRADIENT, e.data, e.len);
			free(it->owned);
			it->owned = ge_buf_steal(&out, &it->len);
			it->p = it->owned;
			ge_buf_free(&e);
			l->changed = 1;
		}
		free(s[1]);
		free(s[2]);
	}
}

/* The SavedObjectGraph: concrete function keys, SavedFunction lists,
 * bare concrete functions and captured tensors naming `from` follow a
 * rename (to) or a removal (to == NULL). */
static void object_graph_follow(ge_graph *root, const char *from,
				const char *to)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	if (!og)
		return;
	int changed = 0;
	for (size_t i = 0; i < og->n_concrete_functions; i++) {
		Tensorflow__SavedObjectGraph__ConcreteFunctionsEntry *e =
			og->concrete_functions[i];
		if (strcmp(e->key, from))
			continue;
		changed = 1;
		if (to) {
			free(e->key);
			e->key = ge_xstrdup(to);
			continue;
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		memmove(og->concrete_functions + i, og->concrete_functions + i + 1,
			(og->n_concrete_functions - i - 1) * sizeof *og->concrete_functions);
		og->n_concrete_functions--;
		i--;
	}
	for (size_t i = 0; i < og->n_nodes; i++) {
		Tensorflow__SavedObject *o = og->nodes[i];
		char **slot = NULL;
		if (o->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_FUNCTION &&
		    o->function) {
			Tensorflow__SavedFunction *sf = o->function;
			for (size_t k = 0; k < sf->n_concrete_functions; k++) {
				if (strcmp(sf->concrete_functions[k], from))
					continue;
				changed = 1;
				free(sf->concrete_functions[k]);
				if (to) {
					sf->concrete_functions[k] = ge_xstrdup(to);
					continue;
				}
				memmove(sf->concrete_functions + k,
					sf->concrete_functions + k + 1,
					(sf->n_concrete_functions - k - 1) *
						sizeof(char *));
				sf->n_concrete_functions--;
				k--;
			}
		} else if (o->kind_case ==
				   TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION &&
			   o->bare_concrete_function) {
			slot = &o->bare_concrete_function->concrete_function_name;
		} else if (o->kind_case ==
				   TENSORFLOW__SAVED_OBJECT__KIND_CAPTURED_TENSOR &&
			   o->captured_tensor) {
			slot = &o->captured_tensor->concrete_function;
		}
		if (!slot || !*slot || strcmp(*slot, from))
			continue;
		changed = 1;
		if (to) {
			free(*slot);
			*slot = ge_xstrdup(to);
			continue;
		}
		/* the object stood for the function alone: it becomes a
		 * generic trackable object, as TF2 saves one without state */
		if (o->kind_case ==
		    TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION)
			protobuf_c_message_free_unpacked(
				&o->bare_concrete_function->base, NULL);
		else
			protobuf_c_message_free_unpacked(
				&o->captured_tensor->base, NULL);
		Tensorflow__SavedUserObject *u = ge_xmalloc(sizeof *u);
		tensorflow__saved_user_object__init(u);
		u->identifier = ge_xstrdup("_generic_user_object");
		o->kind_case = TENSORFLOW__SAVED_OBJECT__KIND_USER_OBJECT;
		o->user_object = u;
	}
	if (changed)
		ge_object_graph_touch(root);
}

/* Whether an object of the SavedObjectGraph is the function `name` (a
 * bare concrete function or a captured tensor of it); its index. */
static int object_graph_names(ge_graph *root, const char *name, size_t *obj)
{
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	for (size_t i = 0; og && i < og->n_nodes; i++) {
		const Tensorflow__SavedObject *o = og->nodes[i];
		const char *n = NULL;
		if (o->kind_case ==
			    TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION &&
		    o->bare_concrete_function)
			n = o->bare_concrete_function->concrete_function_name;
		else if (o->kind_case ==
				 TENSORFLOW__SAVED_OBJECT__KIND_CAPTURED_TENSOR &&
			 o->captured_tensor)
			n = o->captured_tensor->concrete_function;
		if (n && !strcmp(n, name)) {
			*obj = i;
			return 1;
		}
	}
	return 0;
}

int ge_func_rename(ge_graph *g, ge_funcid f, const char *new_name,
		   ge_error *err)
{
	ge_graph *root = root_of(g);
	int rc;
	if ((rc = ge_flib_load(root, err)))
		return rc;
	if (!ge_func_alive(root, f))
		return ge_err(err, GE_EINVAL,
			      "function #%u is not in the library", f);
	struct ge_flib *l = root->flib;
	if (!strcmp(l->fn[f].name, new_name))
		return GE_OK;
	if ((rc = check_new_name(root, new_name, err)))
		return rc;
	/* the body carries the new name into the signature on save */
	ge_graph *b = ge_func_body(root, f, err);
	if (!b)
		return GE_EFORMAT;
	ge_func_ref *refs;
	size_t n = ge_func_callers(root, f, &refs);
	char *old = l->fn[f].name;
	for (size_t i = 0; i < n; i++)
		rename_ref_site(&refs[i], old, new_name);
	free(refs);
	gradients_follow(l, old, new_name);
	object_graph_follow(root, old, new_name);
	l->fn[f].name = ge_xstrdup(new_name);
	l->fn[f].renamed = 1;
	char *nm = ge_xmalloc(strlen(label(root)) + strlen(new_name) + 32);
	sprintf(nm, "%s: function '%s'", label(root), new_name);
	ge_graph_set_name(b, nm);
	free(nm);
	free(old);
	idx_rebuild(l);
	return GE_OK;
}

int ge_func_remove(ge_graph *g, ge_funcid f, int force, ge_error *err)
{
	ge_graph *root = root_of(g);
	int rc;
	if ((rc = ge_flib_load(root, err)))
		return rc;
	if (!ge_func_alive(root, f))
		return ge_err(err, GE_EINVAL,
			      "function #%u is not in the library", f);
	struct ge_flib *l = root->flib;
	if (!force) {
		ge_func_ref *refs;
		size_t n = ge_func_callers(root, f, &refs);
		if (n) {
			const ge_func_ref *r = &refs[0];
			ge_err(err, GE_EINVAL,
			       "cannot remove function '%s': %s node '%s' "
			       "calls it%s%s (%zu call site%s)",
			       l->fn[f].name,
			       r->in->parent ? r->in->name : "graph",
			       r->in->ops[r->op].name,
			       r->attr ? " through attr " : "",
			       r->attr ? r->attr : "", n, n == 1 ? "" : "s");
			free(refs);
			return GE_EINVAL;
		}
		free(refs);
		size_t obj;
		if (object_graph_names(root, l->fn[f].name, &obj))
			return ge_err(err, GE_EINVAL,
				      "cannot remove function '%s': object %zu "
				      "of the SavedObjectGraph stands for it "
				      "(force makes it a plain object)",
				      l->fn[f].name, obj);
	}
	gradients_follow(l, l->fn[f].name, NULL);
	object_graph_follow(root, l->fn[f].name, NULL);
	l->fn[f].dead = 1;
	l->n_live--;
	l->changed = 1;
	idx_rebuild(l);
	return GE_OK;
}

/* ------------------------------------------------------------ checks */

#define PROBLEM(...)                                    \
	do {                                            \
		(*problems)++;                          \
		if (report) {                           \
			ge_buf_printf(report, __VA_ARGS__); \
			ge_buf_addc(report, '\n');      \
		}                                       \
	} while (0)

static size_t list_len(const ge_graph *in, ge_opid id, const char *attr)
{
	const Tensorflow__AttrValue *v = ge_op_attr(in, id, attr, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return (size_t)-1;
	return v->list->n_type;
}

/* The callee's flat input (out = 0) or output dtypes; 0 where unknown. */
static int *flat_dtypes(ge_graph *root, ge_funcid f, int out, size_t *n)
{
	size_t na = out ? ge_func_num_outputs(root, f) : ge_func_num_inputs(root, f);
	int *v = NULL;
	*n = 0;
	for (size_t i = 0; i < na; i++) {
		ge_func_arg a = out ? ge_func_output(root, f, i)
				    : ge_func_input(root, f, i);
		for (int j = 0; j < a.count; j++) {
			v = ge_xrealloc(v, (*n + 1) * sizeof *v);
			v[(*n)++] = a.count == 1 ? a.dtype : 0;
		}
	}
	return v;
}

static void check_types(ge_graph *in, ge_opid id, const char *pre,
			const char *attr, const int *want, size_t n,
			const char *what, const char *fname, size_t skip,
			size_t *problems, ge_buf *report)
{
	const Tensorflow__AttrValue *v = ge_op_attr(in, id, attr, NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return;
	for (size_t i = 0; i + skip < v->list->n_type && i < n; i++)
		if (want[i] && v->list->type[i + skip] &&
		    want[i] != (int)v->list->type[i + skip]) {
			const char *a = ge_dtype_name(v->list->type[i + skip]);
			const char *b = ge_dtype_name(want[i]);
			PROBLEM("%snode '%s': %s %zu is %s but function '%s' "
				"has %s there", pre, in->ops[id].name, what, i,
				a ? a : "?", fname, b ? b : "?");
			return;
		}
}

/* Arity and dtypes of one call against the callee's signature. */
static void check_call(ge_graph *root, ge_graph *in, ge_opid id,
		       const ge_func_call *c, const char *pre,
		       size_t *problems, ge_buf *report)
{
	const char *type = in->ops[id].type, *nm = in->ops[id].name;
	size_t nin = in->ops[id].n_in, skip = 0;
	size_t ni, no;
	int *ti = flat_dtypes(root, c->f, 0, &ni);
	int *to = flat_dtypes(root, c->f, 1, &no);
	size_t want_in = nin, want_out = (size_t)-1;
	const char *tin = "Tin", *tout = "Tout";
	if (!c->attr) {
		tin = tout = NULL;
	} else if (strstr(type, "While")) {
		want_out = !strcmp(c->attr, "body") ? nin : (size_t)-1;
		tin = "T";
		tout = NULL;
	} else if (!strcmp(type, "If") || !strcmp(type, "StatelessIf") ||
		   !strcmp(type, "Case") || !strcmp(type, "StatelessCase")) {
		want_in = nin ? nin - 1 : 0;
		want_out = list_len(in, id, "Tout");
		skip = 0;
	} else if (strstr(type, "PartitionedCall")) {
		want_out = list_len(in, id, "Tout");
	} else {
		/* another op's func attr (a dataset map, a gradient): its
		 * arity is the op's business */
		goto out;
	}
	if (ni != want_in)
		PROBLEM("%snode '%s' (%s) calls function '%s' with %zu input%s, "
			"but it takes %zu", pre, nm, type, c->name, want_in,
			want_in == 1 ? "" : "s", ni);
	else if (tin)
		check_types(in, id, pre, tin, ti, ni, "input", c->name, skip,
			    problems, report);
	if (want_out != (size_t)-1 && no != want_out)
		PROBLEM("%snode '%s' (%s) expects %zu output%s from function "
			"'%s', which returns %zu", pre, nm, type, want_out,
			want_out == 1 ? "" : "s", c->name, no);
	else if (tout)
		check_types(in, id, pre, tout, to, no, "output", c->name, 0,
			    problems, report);
out:
	free(ti);
	free(to);
}

struct edge {
	ge_funcid to;
	const char *node;
};

/* Checks every call of graph `in`; records edges between functions. */
static void check_calls(ge_graph *root, ge_graph *in, const char *pre,
			struct edge **edges, size_t *n_edges, size_t *problems,
			ge_buf *report)
{
	for (size_t i = 0; i < in->n_ops; i++) {
		if (in->ops[i].flags & OPF_DEAD)
			continue;
		ge_func_call *c;
		size_t k = ge_op_func_calls(in, (ge_opid)i, &c);
		for (size_t j = 0; j < k; j++) {
			if (c[j].f == GE_NOFUNC) {
				if (*c[j].name &&
				    !ge_graph_opdef(in, c[j].name))
					PROBLEM("%snode '%s': attr '%s' names "
						"function '%s', which is not in "
						"the library", pre,
						in->ops[i].name, c[j].attr,
						c[j].name);
				continue;
			}
			check_call(root, in, (ge_opid)i, &c[j], pre, problems,
				   report);
			if (edges) {
				*edges = ge_xrealloc(*edges, (*n_edges + 1) *
								     sizeof **edges);
				(*edges)[(*n_edges)++] =
					(struct edge){c[j].f, in->ops[i].name};
			}
		}
		free(c);
	}
}

/* _Arg / _Retval indices: each of 0..n-1 once. */
static void check_indices(ge_graph *b, const char *type, const char *pre,
			  size_t *problems, ge_buf *report)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n_ops; i++)
		n += !(b->ops[i].flags & OPF_DEAD) && !strcmp(b->ops[i].type, type);
	uint8_t *seen = ge_xcalloc(n + 1, 1);
	for (size_t i = 0; i < b->n_ops; i++) {
		if ((b->ops[i].flags & OPF_DEAD) || strcmp(b->ops[i].type, type))
			continue;
		int64_t ix;
		if (ge_op_attr_int(b, (ge_opid)i, "index", &ix) || ix < 0 ||
		    (uint64_t)ix >= n || seen[ix]) {
			PROBLEM("%snode '%s' (%s): index is missing, repeated "
				"or not below %zu", pre, b->ops[i].name, type, n);
			continue;
		}
		seen[ix] = 1;
		if (!strcmp(type, RET_OP) && b->ops[i].n_in != 1)
			PROBLEM("%snode '%s' (_Retval) has %u inputs, not 1",
				pre, b->ops[i].name, b->ops[i].n_in);
	}
	free(seen);
}

/* Cycles of calls: an iterative depth-first walk over the call graph
 * (each function and each edge visited once), reporting each edge that
 * goes back to a function on the walk's stack with the cycle it closes. */
static void check_recursion(struct ge_flib *l, struct edge **adj,
			    size_t *n_adj, size_t *problems, ge_buf *report)
{
	size_t n = l->n_fn;
	uint8_t *color = ge_xcalloc(n + 1, 1); /* 0 new, 1 on stack, 2 done */
	size_t *next = ge_xcalloc(n + 1, sizeof *next);
	ge_funcid *stack = ge_xmalloc((n + 1) * sizeof *stack);
	for (size_t s = 0; s < n; s++) {
		if (color[s] || l->fn[s].dead)
			continue;
		size_t sp = 0;
		stack[sp++] = (ge_funcid)s;
		color[s] = 1;
		while (sp) {
			ge_funcid u = stack[sp - 1];
			if (next[u] == n_adj[u]) {
				color[u] = 2;
				sp--;
				continue;
			}
			const struct edge *e = &adj[u][next[u]++];
			if (color[e->to] == 0) {
				color[e->to] = 1;
				stack[sp++] = e->to;
			} else if (color[e->to] == 1) {
				ge_buf cyc = GE_BUF_INIT;
				size_t k = sp;
				while (k > 0 && stack[k - 1] != e->to)
					k--;
				for (size_t q = k ? k - 1 : 0; q < sp; q++)
					ge_buf_printf(&cyc, "%s -> ",
						      l->fn[stack[q]].name);
				ge_buf_adds(&cyc, l->fn[e->to].name);
				PROBLEM("function '%s': node '%s' calls '%s' "
					"recursively (%s)", l->fn[u].name,
					e->node, l->fn[e->to].name,
					(char *)cyc.data);
				ge_buf_free(&cyc);
			}
		}
	}
	free(color);
	free(next);
	free(stack);
}

size_t ge_flib_validate(ge_graph *g, int functions, ge_buf *report)
{
	ge_graph *root = root_of(g);
	size_t n_problems = 0, *problems = &n_problems;
	ge_error err = {0, ""};
	if (ge_flib_load(root, &err)) {
		PROBLEM("%s", err.msg);
		return n_problems;
	}
	struct ge_flib *l = root->flib;
	check_calls(root, root, "", NULL, NULL, problems, report);
	if (!functions)
		return n_problems;
	size_t nf = l->n_fn;
	struct edge **adj = ge_xcalloc(nf + 1, sizeof *adj);
	size_t *n_adj = ge_xcalloc(nf + 1, sizeof *n_adj);
	ge_buf tmp = GE_BUF_INIT, pre = GE_BUF_INIT;
	for (size_t i = 0; i < nf; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, &err);
		if (!b) {
			PROBLEM("%s", err.msg);
			continue;
		}
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", l->fn[i].name);
		tmp.len = 0;
		size_t k = ge_graph_validate(b, &tmp);
		*problems += k;
		if (report && k) {
			const char *s = (const char *)tmp.data;
			while (*s) {
				const char *e = strchr(s, '\n');
				size_t len = e ? (size_t)(e - s) : strlen(s);
				ge_buf_add(report, pre.data, pre.len);
				ge_buf_add(report, s, len);
				ge_buf_addc(report, '\n');
				s += len + (e ? 1 : 0);
			}
		}
		check_indices(b, ARG_OP, (char *)pre.data, problems, report);
		check_indices(b, RET_OP, (char *)pre.data, problems, report);
		check_calls(root, b, (char *)pre.data, &adj[i], &n_adj[i],
			    problems, report);
	}
	check_recursion(l, adj, n_adj, problems, report);
	for (size_t i = 0; i < nf; i++)
		free(adj[i]);
	free(adj);
	free(n_adj);
	ge_buf_free(&tmp);
	ge_buf_free(&pre);
	return n_problems;
}

void ge_flib_reachable(ge_graph *g, ge_funcid **out, size_t *n)
{
	ge_graph *root = root_of(g);
	struct ge_flib *l = lib(root);
	uint8_t *seen = ge_xcalloc(l->n_fn + 1, 1);
	ge_funcid *queue = ge_xmalloc((l->n_fn + 1) * sizeof *queue);
	size_t qh = 0, qt = 0;
	/* TF2 loads a SavedModel's concrete functions (the object graph's
	 * methods and signatures) as entry points of their own */
	Tensorflow__SavedObjectGraph *og = ge_object_graph(root);
	for (size_t i = 0; og && i < og->n_concrete_functions; i++) {
		const char *k = og->concrete_functions[i]->key;
		ge_funcid f = idx_find(l, k, strlen(k));
		if (f != GE_NOFUNC && !seen[f]) {
			seen[f] = 1;
			queue[qt++] = f;
		}
	}
	ge_graph *in = root;
	for (;;) {
		for (size_t i = 0; i < in->n_ops; i++) {
			if (in->ops[i].flags & OPF_DEAD)
				continue;
			ge_func_call *c;
			size_t k = ge_op_func_calls(in, (ge_opid)i, &c);
			for (size_t j = 0; j < k; j++)
				if (c[j].f != GE_NOFUNC && !seen[c[j].f]) {
					seen[c[j].f] = 1;
					queue[qt++] = c[j].f;
				}
			free(c);
		}
		in = NULL;
		while (qh < qt && !in)
			in = ge_func_body(root, queue[qh++], NULL);
		if (!in)
			break;
	}
	*n = 0;
	*out = ge_xmalloc((l->n_fn + 1) * sizeof **out);
	for (size_t i = 0; i < l->n_fn; i++)
		if (seen[i] && !l->fn[i].dead)
			(*out)[(*n)++] = (ge_funcid)i;
	free(seen);
	free(queue);
}

size_t ge_flib_body_ops(ge_graph *g)
{
	ge_graph *root = root_of(g);
	struct ge_flib *l = lib(root);
	size_t n = 0;
	for (size_t i = 0; i < l->n_fn; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, NULL);
		if (b)
			n += ge_graph_num_ops(b);
	}
	return n;
}

size_t ge_func_validate_graph(ge_graph *g, ge_buf *report)
{
	size_t n_problems = 0, *problems = &n_problems;
	if (g->parent) {
		check_indices(g, ARG_OP, "", problems, report);
		check_indices(g, RET_OP, "", problems, report);
		check_calls(root_of(g), g, "", NULL, NULL, problems, report);
		return n_problems;
	}
	return ge_flib_validate(g, 1, report);
}

/* The first line of a report, as an error naming the file. */
static int first_problem(ge_graph *root, const ge_buf *rep, ge_error *err)
{
	const char *s = (const char *)rep->data;
	const char *e = strchr(s, '\n');
	return ge_err(err, GE_EGRAPH, "%s: %.*s", label(root),
		      (int)(e ? e - s : (long)strlen(s)), s);
}

int ge_flib_check(ge_graph *g, ge_error *err)
{
	ge_graph *root = root_of(g);
	int rc = ge_flib_load(root, err);
	if (rc)
		return rc;
	struct ge_flib *l = root->flib;
	ge_buf rep = GE_BUF_INIT, pre = GE_BUF_INIT;
	size_t n_problems = 0, *problems = &n_problems;
	ge_buf *report = &rep;
	check_calls(root, root, "", NULL, NULL, problems, report);
	size_t nf = l->n_fn;
	struct edge **adj = ge_xcalloc(nf + 1, sizeof *adj);
	size_t *n_adj = ge_xcalloc(nf + 1, sizeof *n_adj);
	for (size_t i = 0; i < nf && !n_problems; i++) {
		if (l->fn[i].dead)
			continue;
		ge_graph *b = ge_func_body(root, (ge_funcid)i, err);
		if (!b) {
			rc = GE_EFORMAT;
			break;
		}
		pre.len = 0;
		ge_buf_printf(&pre, "function '%s': ", l->fn[i].name);
		for (size_t k = 0; k < b->n_ops && !n_problems; k++) {
			const ge_op *o = &b->ops[k];
			if (o->flags & OPF_DEAD)
				continue;
			for (uint32_t s = 0; s < o->n_in + o->n_ctrl; s++)
				if (o->in[s].op == GE_NOOP) {
					PROBLEM("%snode '%s': input '%s' names no "
						"node or arg of the function",
						(char *)pre.data,
						o->name, b->dangling[o->in[s].index]);
					break;
				}
		}
		check_calls(root, b, (char *)pre.data, &adj[i], &n_adj[i],
			    problems, report);
	}
	if (!rc && !n_problems)
		check_recursion(l, adj, n_adj, problems, report);
	if (!rc && n_problems)
		rc = first_problem(root, &rep, err);
	for (size_t i = 0; i < nf; i++)
		free(adj[i]);
	free(adj);
	free(n_adj);
	ge_buf_free(&rep);
	ge_buf_free(&pre);
	return rc;
}
#undef PROBLEM
