/*
 * func.c: the function library model (see func.h): the library's list of
 * functions and other entries, names, signatures as read, references to
 * functions, and the edits (add, copy, rename, remove) that follow them.
 *
 * The library is a list of items in file order: functions (FunctionDef
 * payloads, kept as the bytes read until something changes them) and the
 * other entries (GradientDefs, registered gradients), kept as raw bytes.
 * Bodies are parsed and encoded by func_body.c, checked by func_check.c.
 */
#include "functions/func_impl.h"
#include "base/bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* ------------------------------------------------------------ helpers */

ge_graph *ge_fl_root(const ge_graph *g)
{
	return (ge_graph *)(g->parent ? g->parent : g);
}

ge_graph *ge_graph_root(ge_graph *g)
{
	return ge_fl_root(g);
}

ge_funcid ge_graph_func(const ge_graph *g)
{
	return g->parent ? g->func_id : GE_NOFUNC;
}

const char *ge_fl_label(const ge_graph *g)
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

ge_funcid ge_fl_idx_find(const struct ge_flib *l, const char *name, size_t n)
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
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (ge_wire_is_len(&f, GE_FLIB_FUNCTION)) {
			const uint8_t *b = f.data, *sig, *nm = NULL;
			size_t sl, nl = 0;
			if (ge_wire_find_len(b, b + f.len,
					     GE_FUNCDEF_SIGNATURE, &sig,
					     &sl) == 0)
				ge_wire_find_len(sig, sig + sl, GE_OPDEF_NAME,
						 &nm, &nl);
			if (!nm || !nl)
				return ge_err(err, GE_EFORMAT,
					      "%s: function #%zu of the library "
					      "has no name", file, l->n_fn);
			ge_funcid id = fn_push(l, (const char *)nm, nl, b,
					       f.len, NULL);
			item_push(l, (fitem){id, NULL, 0, NULL, f.num});
			continue;
		}
		item_push(l, (fitem){GE_NOFUNC, f.start,
				     (size_t)(w.p - f.start), NULL, f.num});
	}
	if (w.bad)
		goto bad;
	return GE_OK;
bad:
	return ge_err(err, GE_EFORMAT,
		      "%s: the function library is truncated or corrupt", file);
}

static int scan_field(struct ge_flib *l, const uint8_t *p, size_t len,
		      const char *file, ge_error *err)
{
	ge_wire w = ge_wire_of(p, len);
	ge_wire_field f;
	if (!ge_wire_next(&w, &f) || !ge_wire_is_len(&f, GE_GRAPHDEF_LIBRARY))
		return GE_OK;
	return scan_payload(l, f.data, f.data + f.len, file, err);
}

int ge_flib_load(ge_graph *g, ge_error *err)
{
	g = ge_fl_root(g);
	if (g->flib)
		return GE_OK;
	ge_flib_install();
	struct ge_flib *l = ge_xcalloc(1, sizeof *l);
	for (size_t i = 0; i < g->n_fields; i++) {
		int rc = scan_field(l, g->fields[i].p, g->fields[i].len,
				    ge_fl_label(g), err);
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
struct ge_flib *ge_fl_lib(const ge_graph *g)
{
	ge_graph *r = ge_fl_root(g);
	ge_flib_install();
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
	scan_field(g->flib, p, len, ge_fl_label(g), NULL);
	idx_rebuild(g->flib);
}

void ge_fl_fnargs_free(fnarg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].name);
		free(a[i].ops);
	}
	free(a);
}

void ge_fl_mapents_free(mapent *m, size_t n)
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
	ge_fl_fnargs_free(f->in0, f->n_in0);
	ge_fl_fnargs_free(f->out0, f->n_out0);
	ge_fl_fnargs_free(f->in, f->n_in);
	ge_fl_fnargs_free(f->out, f->n_out);
	ge_fl_mapents_free(f->ret0, f->n_ret0);
	ge_fl_mapents_free(f->cret0, f->n_cret0);
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

ge_fn *ge_fl_fn(const ge_graph *g, ge_funcid f)
{
	struct ge_flib *l = ge_fl_lib(g);
	return f < l->n_fn ? &l->fn[f] : NULL;
}

size_t ge_func_capacity(ge_graph *g)
{
	return ge_fl_lib(g)->n_fn;
}

size_t ge_func_count(ge_graph *g)
{
	return ge_fl_lib(g)->n_live;
}

int ge_func_alive(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
	return fn && !fn->dead;
}

ge_funcid ge_func_find(ge_graph *g, const char *name)
{
	return ge_fl_idx_find(ge_fl_lib(g), name, strlen(name));
}

const char *ge_func_name(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
	return fn ? fn->name : NULL;
}

int ge_func_touched(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
	return fn && fn->body;
}

/* ------------------------------------------------------------ signature */

const Tensorflow__OpDef *ge_fl_raw_sig(ge_fn *f)
{
	if (!f->sig) {
		const uint8_t *b;
		size_t n;
		if (ge_wire_find_len(f->raw, f->raw + f->raw_len, GE_FUNCDEF_SIGNATURE,
				      &b, &n))
			n = 0, b = (const uint8_t *)"";
		f->sig = (Tensorflow__OpDef *)ge_pb_unpack(
		&tensorflow__op_def__descriptor, n, b);
		if (!f->sig) {
			f->sig = ge_xmalloc(sizeof *f->sig);
			tensorflow__op_def__init(f->sig);
		}
	}
	return f->sig;
}

const Tensorflow__AttrValue *ge_fl_sig_default(const Tensorflow__OpDef *d,
						const char *name)
{
	for (size_t i = 0; i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name))
			return d->attr[i]->default_value;
	return NULL;
}

/* An arg's tensor count and first dtype from the signature alone (its
 * attrs' defaults); count 1 and dtype 0 when they are not known. */
void ge_fl_sig_arg_info(const Tensorflow__OpDef *d,
			 const Tensorflow__OpDef__ArgDef *a, int *count,
			 int *dtype, int *is_list, int **types)
{
	*count = 1;
	*dtype = a->type;
	*is_list = 0;
	if (types)
		*types = NULL;
	if (a->type_attr && *a->type_attr) {
		const Tensorflow__AttrValue *v = ge_fl_sig_default(d, a->type_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
			*dtype = v->type;
	}
	if (a->number_attr && *a->number_attr) {
		*is_list = 1;
		const Tensorflow__AttrValue *v = ge_fl_sig_default(d, a->number_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I &&
		    v->i >= 0 && v->i < 100000)
			*count = (int)v->i;
	} else if (a->type_list_attr && *a->type_list_attr) {
		*is_list = 1;
		const Tensorflow__AttrValue *v =
			ge_fl_sig_default(d, a->type_list_attr);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
		    v->list) {
			*count = (int)v->list->n_type;
			*dtype = v->list->n_type ? v->list->type[0] : 0;
			if (types)
				*types = (int *)v->list->type;
		}
	}
}

/* ------------------------------------------------------------ views */

static void make_view(ge_fn *f)
{
	free(f->view_in);
	free(f->view_out);
	if (f->body) {
		ge_fl_fn_sync(f);
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
	const Tensorflow__OpDef *d = ge_fl_raw_sig(f);
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
			ge_fl_sig_arg_info(d, a, &count, &dtype, &is_list, NULL);
			(o ? f->view_out : f->view_in)[i] =
				(ge_func_arg){a->name, dtype, count};
		}
	}
}

size_t ge_func_num_inputs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
	if (!fn)
		return 0;
	make_view(fn);
	return fn->n_view_in;
}

size_t ge_func_num_outputs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
	if (!fn)
		return 0;
	make_view(fn);
	return fn->n_view_out;
}

ge_func_arg ge_func_input(ge_graph *g, ge_funcid f, size_t i)
{
	ge_fn *fn = ge_fl_fn(g, f);
	ge_func_arg none = {NULL, 0, 0};
	if (!fn)
		return none;
	if (!fn->view_in || i == 0)
		make_view(fn);
	return i < fn->n_view_in ? fn->view_in[i] : none;
}

ge_func_arg ge_func_output(ge_graph *g, ge_funcid f, size_t i)
{
	ge_fn *fn = ge_fl_fn(g, f);
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
	const char *k;
	while (ge_wire_map_next(&p, end, GE_FUNCDEF_ATTR, &k, klen, val, vlen))
		if (!i--) {
			*key = (const uint8_t *)k;
			return 0;
		}
	return -1;
}

size_t ge_func_num_attrs(ge_graph *g, ge_funcid f)
{
	ge_fn *fn = ge_fl_fn(g, f);
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
	ge_fn *fn = ge_fl_fn(g, f);
	const uint8_t *k;
	size_t kl;
	if (!fn || fn_attr_at(fn, i, &k, &kl, val, len))
		return NULL;
	return ge_intern(ge_fl_root(g), (const char *)k, kl);
}

/* ------------------------------------------------------------ references */

typedef void (*name_fn)(void *ud, const char *attr, const uint8_t *name,
			size_t n);

/* Calls fn for each function name in an AttrValue's bytes. */
static void attr_func_names(const char *attr, const uint8_t *p,
			    const uint8_t *end, name_fn fn, void *ud)
{
	ge_wire w = {p, end, 0}, lw;
	ge_wire_field f, e;
	const uint8_t *nm;
	size_t nl;
	while (ge_wire_next(&w, &f)) {
		if (ge_wire_is_len(&f, GE_ATTR_FUNC)) {
			if (ge_wire_find_len(f.data, f.data + f.len,
					     GE_NAMEATTRLIST_NAME, &nm,
					     &nl) == 0)
				fn(ud, attr, nm, nl);
		} else if (ge_wire_is_len(&f, GE_ATTR_LIST)) {
			ge_wire_init(&lw, f.data, f.len);
			while (ge_wire_next(&lw, &e))
				if (ge_wire_is_len(&e, GE_ATTRLIST_FUNC) &&
				    ge_wire_find_len(e.data, e.data + e.len,
						     GE_NAMEATTRLIST_NAME, &nm,
						     &nl) == 0)
					fn(ud, attr, nm, nl);
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
	/* a function is named under tag 0x52 (AttrValue.func) or 0x4a
	 * (ListValue.func): a node whose bytes after its name, op, inputs
	 * and device (which come first) hold neither byte names none, and
	 * most nodes are passed without a walk */
	enum { FUNC_TAG = GE_TAG_LEN(GE_ATTR_FUNC),
	       LIST_FUNC_TAG = GE_TAG_LEN(GE_ATTRLIST_FUNC) };
	const uint8_t *p = o->raw, *end = o->raw + o->raw_len, *v, *q = p;
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f) && f.num <= GE_NODEDEF_DEVICE &&
	       f.wt == GE_WT_LEN)
		q = w.p;
	if (!memchr(q, FUNC_TAG, (size_t)(end - q)) &&
	    !memchr(q, LIST_FUNC_TAG, (size_t)(end - q)))
		return;
	const char *k;
	size_t kl, vl;
	while (ge_wire_attr_next(&p, end, &k, &kl, &v, &vl)) {
		/* the same test for each value */
		if (!memchr(v, FUNC_TAG, vl) && !memchr(v, LIST_FUNC_TAG, vl))
			continue;
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
				      ge_fl_idx_find(c->l, (const char *)nm, n)};
}

size_t ge_op_func_calls(ge_graph *in, ge_opid id, ge_func_call **out)
{
	struct calls_ud c = {in, ge_fl_lib(in), NULL, 0};
	*out = NULL;
	if (!ge_op_alive(in, id))
		return 0;
	const char *type = in->ops[id].type;
	ge_funcid t = ge_fl_idx_find(c.l, type, strlen(type));
	if (t != GE_NOFUNC) {
		c.v = ge_xmalloc(sizeof *c.v);
		c.v[c.n++] = (ge_func_call){NULL, type, t};
	}
	op_attr_funcs(in, id, add_call, &c);
	*out = c.v;
	return c.n;
}

static void any_name(void *ud, const char *attr, const uint8_t *nm, size_t n)
{
	(void)attr;
	(void)nm;
	(void)n;
	*(int *)ud = 1;
}

/* Ops of one attr class (graph_impl.h) have the same attr entries byte
 * for byte, and the functions an op's attrs name are read from those
 * entries alone: one op of each class is looked at.  So is one op of
 * each attr_vcls class, whose entries differ only in plain tensors,
 * which name no function. */
void ge_note_attr_funcs(ge_graph *g)
{
	g->fn_attr_known = 0;
	if (!g->attr_cls || g->attr_cls_version != g->version)
		return;
	uint8_t *names = ge_xmalloc(g->n_ops + 1);
	size_t n = 0;
	for (size_t i = 0; i < g->n_ops; i++) {
		ge_opid c = g->attr_cls[i];
		if (c == i && g->attr_vcls && g->attr_vcls[i])
			c = g->attr_vcls[i] - 1;
		if (c < i) {
			names[i] = names[c];
		} else {
			int any = 0;
			if (!(g->ops[i].flags & OPF_DEAD))
				op_attr_funcs(g, (ge_opid)i, any_name, &any);
			names[i] = (uint8_t)any;
		}
		n += names[i];
	}
	g->fn_attr_ops = n ? ge_arena_alloc(&g->arena, n * sizeof(ge_opid))
			   : NULL;
	g->n_fn_attr_ops = 0;
	for (size_t i = 0; i < g->n_ops && n; i++)
		if (names[i])
			g->fn_attr_ops[g->n_fn_attr_ops++] = (ge_opid)i;
	free(names);
	g->fn_attr_version = g->version;
	g->fn_attr_known = 1;
}

void ge_fl_walk_init(fl_walk *w, ge_graph *in)
{
	memset(w, 0, sizeof *w);
	w->in = in;
	w->fast = !in->parent && in->fn_attr_known &&
		  in->fn_attr_version == in->version;
	if (w->fast)
		w->l = ge_fl_lib(in);
}

const ge_opid *ge_fl_walk_only(const fl_walk *w)
{
	static const ge_opid none[1] = {GE_NOOP};
	if (!w->fast || w->l->n_fn)
		return NULL;
	return w->in->fn_attr_ops ? w->in->fn_attr_ops : none;
}

size_t ge_fl_walk_calls(fl_walk *w, ge_opid id, ge_func_call **out)
{
	ge_graph *in = w->in;
	if (!w->fast)
		return ge_op_func_calls(in, id, out);
	while (w->next < in->n_fn_attr_ops && in->fn_attr_ops[w->next] < id)
		w->next++;
	if (w->next < in->n_fn_attr_ops && in->fn_attr_ops[w->next] == id)
		return ge_op_func_calls(in, id, out);
	/* no attr names a function: only the type may */
	*out = NULL;
	if (!w->l->n_fn || !ge_op_alive(in, id))
		return 0;
	const char *type = in->ops[id].type;
	size_t slot = ((uintptr_t)type >> 3) % FL_WALK_MEMO;
	if (w->memo[slot].type != type) {
		w->memo[slot].type = type;
		w->memo[slot].f = ge_fl_idx_find(w->l, type, strlen(type));
	}
	if (w->memo[slot].f == GE_NOFUNC)
		return 0;
	*out = ge_xmalloc(sizeof **out);
	**out = (ge_func_call){NULL, type, w->memo[slot].f};
	return 1;
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
	ge_graph *root = ge_fl_root(g);
	struct ge_flib *l = ge_fl_lib(root);
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
	item_push(l, (fitem){id, NULL, 0, NULL, GE_FLIB_FUNCTION});
	l->changed = 1;
	l->edits++;
	idx_rebuild(l);
	return id;
}

ge_funcid ge_func_add(ge_graph *g, const char *name, ge_error *err)
{
	ge_graph *root = ge_fl_root(g);
	if (ge_flib_load(root, err) || check_new_name(root, name, err))
		return GE_NOFUNC;
	Tensorflow__OpDef d = TENSORFLOW__OP_DEF__INIT;
	d.name = (char *)name;
	ge_buf sig = GE_BUF_INIT, fd = GE_BUF_INIT;
	ge_buf_reserve(&sig, tensorflow__op_def__get_packed_size(&d));
	sig.len = tensorflow__op_def__pack(&d, sig.data);
	ge_buf_lenfield(&fd, GE_FUNCDEF_SIGNATURE, sig.data, sig.len);
	ge_buf_free(&sig);
	size_t n;
	uint8_t *bytes = ge_buf_steal(&fd, &n);
	return add_bytes(root, name, bytes, n);
}

/* FunctionDef bytes with the signature's name replaced. */
static void with_name(const uint8_t *p, size_t n, const char *name,
		      ge_buf *out)
{
	ge_wire w = ge_wire_of(p, n);
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (ge_wire_is_len(&f, GE_FUNCDEF_SIGNATURE)) {
			Tensorflow__OpDef *d = (Tensorflow__OpDef *)ge_pb_unpack(
				&tensorflow__op_def__descriptor, f.len, f.data);
			if (!d) {
				ge_buf_add(out, f.start, (size_t)(w.p - f.start));
				continue;
			}
			char *old = d->name;
			d->name = (char *)name;
			ge_buf s = GE_BUF_INIT;
			ge_buf_reserve(&s, tensorflow__op_def__get_packed_size(d));
			s.len = tensorflow__op_def__pack(d, s.data);
			d->name = old;
			protobuf_c_message_free_unpacked(&d->base, NULL);
			ge_buf_lenfield(out, GE_FUNCDEF_SIGNATURE, s.data, s.len);
			ge_buf_free(&s);
			continue;
		}
		ge_buf_add(out, f.start, (size_t)(w.p - f.start));
	}
}

ge_funcid ge_func_copy(ge_graph *g, ge_funcid f, const char *new_name,
		       ge_error *err)
{
	ge_graph *root = ge_fl_root(g);
	if (ge_flib_load(root, err))
		return GE_NOFUNC;
	if (!ge_func_alive(root, f)) {
		ge_err(err, GE_EINVAL, "function #%u is not in the library", f);
		return GE_NOFUNC;
	}
	if (check_new_name(root, new_name, err))
		return GE_NOFUNC;
	ge_buf cur = GE_BUF_INIT, out = GE_BUF_INIT;
	ge_fl_encode_fn(&root->flib->fn[f], &cur);
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
	Tensorflow__AttrValue *v = (Tensorflow__AttrValue *)ge_pb_unpack(
		&tensorflow__attr_value__descriptor, len, raw);
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
		if (it->f != GE_NOFUNC || it->field != GE_FLIB_GRADIENT ||
		    !memmem(it->p, it->len, from, strlen(from)))
			continue;
		ge_wire w = ge_wire_of(it->p, it->len);
		ge_wire_field gf;
		const uint8_t *b;
		if (!ge_wire_next(&w, &gf) || gf.wt != GE_WT_LEN)
			continue;
		char *s[3] = {NULL, NULL, NULL};
		/* GradientDef: function_name (1), gradient_func (2) */
		for (int k = GE_GRADIENTDEF_FUNCTION_NAME;
		     k <= GE_GRADIENTDEF_GRADIENT_FUNC; k++) {
			size_t n;
			s[k] = ge_wire_find_len(gf.data, gf.data + gf.len,
						(uint32_t)k, &b, &n)
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
				ge_buf_lenfield(&out, GE_FLIB_GRADIENT, e.data, e.len);
			free(it->owned);
			it->owned = ge_buf_steal(&out, &it->len);
			it->p = it->owned;
			ge_buf_free(&e);
			l->changed = 1;
			l->edits++;
	l->edits++;
		}
		free(s[1]);
		free(s[2]);
	}
}

/* The container (a SavedModel's object graph) follows a rename (to) or a
 * removal (to NULL) through the graph's hooks. */
static void container_follow(ge_graph *root, const char *from, const char *to)
{
	for (size_t i = 0; i < root->n_hooks; i++)
		if (root->hooks[i]->on_func_rename)
			root->hooks[i]->on_func_rename(root, from, to);
}

static int container_pins(ge_graph *root, const char *name, char *why,
			  size_t cap)
{
	for (size_t i = 0; i < root->n_hooks; i++)
		if (root->hooks[i]->func_pinned &&
		    root->hooks[i]->func_pinned(root, name, why, cap))
			return 1;
	return 0;
}

int ge_func_rename(ge_graph *g, ge_funcid f, const char *new_name,
		   ge_error *err)
{
	ge_graph *root = ge_fl_root(g);
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
	container_follow(root, old, new_name);
	l->fn[f].name = ge_xstrdup(new_name);
	l->fn[f].renamed = 1;
	l->edits++;
	char *nm = ge_xmalloc(strlen(ge_fl_label(root)) + strlen(new_name) + 32);
	sprintf(nm, "%s: function '%s'", ge_fl_label(root), new_name);
	ge_graph_set_name(b, nm);
	free(nm);
	free(old);
	idx_rebuild(l);
	return GE_OK;
}

int ge_func_remove(ge_graph *g, ge_funcid f, int force, ge_error *err)
{
	ge_graph *root = ge_fl_root(g);
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
		char why[200];
		if (container_pins(root, l->fn[f].name, why, sizeof why))
			return ge_err(err, GE_EINVAL,
				      "cannot remove function '%s': %s",
				      l->fn[f].name, why);
	}
	gradients_follow(l, l->fn[f].name, NULL);
	container_follow(root, l->fn[f].name, NULL);
	l->fn[f].dead = 1;
	l->n_live--;
	l->changed = 1;
	l->edits++;
	idx_rebuild(l);
	return GE_OK;
}

