/*
 * func_body.c: function bodies.  A FunctionDef is parsed into a ge_graph
 * on first use; its ops that come from node_defs point at their NodeDef
 * bytes like the ops of a loaded graph, so an untouched node is written
 * back as read.  The signature is brought up to date with the body's
 * _Arg / _Retval ops on demand, and a function is re-encoded only when it
 * was renamed or its body's version moved since the parse.
 */
#include "functions/func_impl.h"
#include "base/bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* ------------------------------------------------------------ bodies */

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
		int k = ge_op_arg_count(b, p, d, a);
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

/* The number in s[0..n) (all digits): the text is not NUL-terminated,
 * it stands in the NodeDef's bytes. */
static int num(const char *s, size_t n)
{
	int v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
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
		int k = num(r, rl);
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
	ge_tvec_push(out, (ge_tref){p, start + num(c2 + 1, rl - ol - 1)});
	return 0;
}

/* An int (AttrValue.i, field 3) or type (field 6) attr, encoded here:
 * every _Arg and _Retval gets two. */
static void set_attr_int(ge_graph *b, ge_opid id, const char *name,
			 int64_t v, int type)
{
	uint8_t buf[16];
	size_t n = 0;
	uint64_t u = (uint64_t)v;
	buf[n++] = (uint8_t)((type ? 6 : 3) << 3); /* varint field */
	do {
		buf[n++] = (uint8_t)((u & 0x7f) | (u > 0x7f ? 0x80 : 0));
		u >>= 7;
	} while (u);
	ge_op_set_attr_raw(b, id, name, buf, n);
}

/* Reads a map<string, string> entry payload. */
static void map_entry(const uint8_t *p, const uint8_t *end, char **key,
		      char **val)
{
	*key = *val = NULL;
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (ge_wire_is_len(&f, GE_MAPENTRY_KEY) && !*key)
			*key = ge_xstrndup((const char *)f.data, f.len);
		else if (ge_wire_is_len(&f, GE_MAPENTRY_VALUE) && !*val)
			*val = ge_xstrndup((const char *)f.data, f.len);
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
	ge_wire w = {p, end, 0};
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (f.wt != GE_WT_LEN)
			continue;
		if (f.num == GE_NODEDEF_NAME)
			*nm = (const char *)f.data, *nl = f.len;
		else if (f.num == GE_NODEDEF_OP)
			*ty = (const char *)f.data, *tl = f.len;
		else if (f.num == GE_NODEDEF_DEVICE)
			*dv = (const char *)f.data, *dl = f.len;
	}
	if (w.bad)
		return -1;
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
		ge_fl_sig_arg_info(d, a, &t->count, &t->dtype, &t->is_list, &types);
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
					      ge_fl_label(b), a->name);
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
	ge_wire w = ge_wire_of(f->raw, f->raw_len);
	ge_wire_field fd;
	while (ge_wire_next(&w, &fd)) {
		if (fd.wt != GE_WT_LEN)
			continue;
		uint32_t fno = fd.num;
		const uint8_t *q = fd.data, *p = fd.data + fd.len;
		if (fno == GE_FUNCDEF_RET || fno == GE_FUNCDEF_CONTROL_RET) {
			mapent **v = fno == GE_FUNCDEF_RET ? &f->ret0 : &f->cret0;
			size_t *nv = fno == GE_FUNCDEF_RET ? &f->n_ret0 : &f->n_cret0;
			*v = ge_xrealloc(*v, (*nv + 1) * sizeof **v);
			mapent *m = &(*v)[(*nv)++];
			map_entry(q, p, &m->key, &m->val);
			m->op = GE_NOOP;
			continue;
		}
		if (fno != GE_FUNCDEF_NODE_DEF)
			continue;
		const char *nm, *ty, *dv;
		size_t nl, tl, dl;
		if (scan_nodedef(q, p, &nm, &nl, &ty, &tl, &dv, &dl))
			return ge_err(err, GE_EFORMAT,
				      "%s: node #%zu is corrupt or has no name "
				      "or op", ge_fl_label(b), b->n_ops);
		char *name = ge_xstrndup(nm, nl), *type = ge_xstrndup(ty, tl);
		ge_opid id = ge_graph_add_op(b, name, type, NULL);
		free(type);
		if (id == GE_NOOP) {
			ge_err(err, GE_EFORMAT,
			       "%s: node '%s': name already used by another "
			       "node or an arg", ge_fl_label(b), name);
			free(name);
			return GE_EFORMAT;
		}
		free(name);
		ge_op *o = &b->ops[id];
		o->raw = q;
		o->raw_len = (uint32_t)fd.len;
		const uint8_t *dbg;
		size_t dbgl;
		if (!ge_wire_find_len(q, q + fd.len, GE_NODEDEF_DEBUG_INFO,
				      &dbg, &dbgl))
			o->flags |= OPF_DBG_RAW; /* provenance.c reads it */
		o->device = ge_intern(b, dv ? dv : "", dv ? dl : 0);
	}
	if (!w.bad)
		return GE_OK;
	return ge_err(err, GE_EFORMAT, "%s: truncated or corrupt", ge_fl_label(b));
}

/* Resolves the inputs of the node ops and the ret map of the _Retval ops. */
/* Notes "op:arg:k" for an op of a type without an OpDef. */
static void note_unknown(ge_graph *b, ge_fn *f, const char *s, size_t n,
			 uint8_t *known)
{
	const char *c1 = memchr(s, ':', n), *c2;
	if (!c1 || (n && s[0] == '^'))
		return;
	c2 = memchr(c1 + 1, ':', n - (size_t)(c1 - s) - 1);
	const char *r = c2 ? c2 + 1 : s + n;
	size_t rl = n - (size_t)(r - s);
	/* "op:arg:k", or "op:arg" (the whole arg, taken as one tensor) */
	if (c2 ? !all_digits(r, rl) : all_digits(c1 + 1, n - (size_t)(c1 - s) - 1))
		return;
	ge_opid p = ge_idx_find_n(b, s, (size_t)(c1 - s), 0);
	if (p == GE_NOOP)
		return;
	/* 1: has an OpDef, 2: has none (each looked up once) */
	if (!known[p])
		known[p] = ge_graph_opdef(b, ge_op_type(b, p)) ? 1 : 2;
	if (known[p] == 1)
		return;
	const char *arg = c1 + 1;
	size_t al = (size_t)((c2 ? c2 : s + n) - arg);
	int k = c2 ? num(r, rl) : 0;
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
	uint8_t *known = ge_xcalloc(b->n_ops + 1, 1);
	for (size_t i = 0; i < b->n_ops; i++) {
		const ge_op *o = &b->ops[i];
		ge_wire w = ge_wire_of(o->raw, o->raw ? o->raw_len : 0);
		ge_wire_field in;
		while (ge_wire_next(&w, &in))
			if (ge_wire_is_len(&in, GE_NODEDEF_INPUT))
				note_unknown(b, f, (const char *)in.data,
					     in.len, known);
	}
	for (size_t r = 0; r < f->n_ret0; r++)
		note_unknown(b, f, f->ret0[r].val, strlen(f->ret0[r].val),
			     known);
	free(known);
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
		ge_wire w = ge_wire_of(o->raw, o->raw_len);
		ge_wire_field in;
		int seen_ctrl = 0;
		while (ge_wire_next(&w, &in)) {
			if (!ge_wire_is_len(&in, GE_NODEDEF_INPUT))
				continue;
			const char *s = (const char *)in.data;
			size_t l = in.len;
			int ctrl = l && s[0] == '^';
			if (!ctrl && seen_ctrl) {
				ge_tvec_free(&tmp);
				return ge_err(err, GE_EFORMAT,
					      "%s: node '%s': data input '%.*s' "
					      "comes after a control input",
					      ge_fl_label(b), o->name,
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
	const Tensorflow__OpDef *d = ge_fl_raw_sig(f);
	ge_graph *b = ge_graph_new();
	b->parent = root;
	b->func_id = fid;
	b->format = root->format;
	/* the ops point into the FunctionDef's bytes (a clone copies them) */
	b->src = (uint8_t *)f->raw;
	b->src_len = f->raw_len;
	b->src_owned = 0;
	char *nm = ge_xmalloc(strlen(ge_fl_label(root)) + strlen(f->name) + 32);
	sprintf(nm, "%s: function '%s'", ge_fl_label(root), f->name);
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
	ge_fl_fnargs_free(f->in0, f->n_in0);
	ge_fl_fnargs_free(f->out0, f->n_out0);
	ge_fl_mapents_free(f->ret0, f->n_ret0);
	ge_fl_mapents_free(f->cret0, f->n_cret0);
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
	ge_graph *root = ge_fl_root(g);
	if (ge_flib_load(root, err))
		return NULL;
	ge_fn *fn = ge_fl_fn(root, f);
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
	if (ge_wire_find_len(f->raw, f->raw + f->raw_len, GE_FUNCDEF_SIGNATURE, &sb,
			      &sn))
		sn = 0, sb = (const uint8_t *)"";
	Tensorflow__OpDef *d = (Tensorflow__OpDef *)ge_pb_unpack(
		&tensorflow__op_def__descriptor, sn, sb);
	if (!d)
		d = (Tensorflow__OpDef *)ge_pb_unpack(
		&tensorflow__op_def__descriptor, 0, (const uint8_t *)"");
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
void ge_fl_fn_sync(ge_fn *f)
{
	ge_graph *b = f->body;
	if (!b || (f->synced && f->sync_ver == b->version && !f->renamed))
		return;
	ge_fl_fnargs_free(f->in, f->n_in);
	ge_fl_fnargs_free(f->out, f->n_out);
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
		f->cur = (Tensorflow__OpDef *)ge_pb_unpack(
		&tensorflow__op_def__descriptor, f->sig_bytes.len,
						    f->sig_bytes.data);
	}
	f->sync_ver = b->version;
	f->synced = 1;
}

/* The signature as it is now (a renamed function always has a body). */
static const Tensorflow__OpDef *cur_sig(ge_fn *f)
{
	if (f->body) {
		ge_fl_fn_sync(f);
		if (f->cur)
			return f->cur;
	}
	return ge_fl_raw_sig(f);
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
	struct ge_flib *l = ge_fl_lib(g);
	ge_funcid id = ge_fl_idx_find(l, type, strlen(type));
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
		put_map_entry(out, GE_FUNCDEF_RET, f->out[i].name, (char *)v.data);
	}
	for (size_t i = 0; i < f->n_out; i++) {
		if (done[i])
			continue;
		same = 0;
		v.len = 0;
		ret_value(b, &f->out[i], &v);
		ge_buf_addc(&v, 0);
		put_map_entry(out, GE_FUNCDEF_RET, f->out[i].name, (char *)v.data);
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
			put_map_entry(out, GE_FUNCDEF_CONTROL_RET, f->cret0[k].key,
				      f->cret0[k].val);
			continue;
		}
		if (!ge_op_alive(b, id)) {
			same = 0;
			continue;
		}
		if (strcmp(b->ops[id].name, f->cret0[k].val))
			same = 0;
		put_map_entry(out, GE_FUNCDEF_CONTROL_RET, f->cret0[k].key,
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
			ge_buf_lenfield(out, GE_FUNCDEF_NODE_DEF, o->raw, o->raw_len);
			continue;
		}
		node.len = 0;
		ge_op_encode_ex(b, (ge_opid)i, &node, body_input_text);
		ge_buf_lenfield(out, GE_FUNCDEF_NODE_DEF, node.data, node.len);
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
	ge_buf e = GE_BUF_INIT;
	ge_wire w = {p, end, 0};
	ge_wire_field mf;
	while (ge_wire_next(&w, &mf)) {
		if (mf.num == GE_MAPENTRY_KEY && mf.wt == GE_WT_VARINT) {
			key = mf.v;
			continue;
		}
		ge_buf_add(&e, mf.start, (size_t)(w.p - mf.start));
	}
	for (size_t i = 0; i < f->n_in; i++)
		if (f->in[i].orig >= 0 && (uint64_t)f->in[i].orig == key) {
			ge_buf ent = GE_BUF_INIT;
			ge_buf_tag(&ent, GE_MAPENTRY_KEY, GE_WT_VARINT);
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

void ge_fl_encode_fn(ge_fn *f, ge_buf *out)
{
	if (!fn_dirty(f)) {
		ge_buf_add(out, f->raw, f->raw_len);
		return;
	}
	ge_fl_fn_sync(f);
	const ge_graph *b = f->body;
	ge_buf rets = GE_BUF_INIT, crets = GE_BUF_INIT;
	int rets_same = encode_rets(b, f, &rets);
	int crets_same = encode_crets(b, f, &crets);
	int ident = args_identity(f);
	int done_nodes = 0, done_rets = 0, done_crets = 0, done_sig = 0;
	ge_wire w = ge_wire_of(f->raw, f->raw_len);
	ge_wire_field ff;
	while (ge_wire_next(&w, &ff)) {
		const uint8_t *fs = ff.start, *body = ff.data;
		size_t l = ff.len, flen = (size_t)(w.p - fs);
		uint32_t fno = ff.num;
		switch (ff.wt == GE_WT_LEN ? fno : 0) {
		case GE_FUNCDEF_SIGNATURE:
			if (f->sig_changed)
				ge_buf_lenfield(out, GE_FUNCDEF_SIGNATURE,
						f->sig_bytes.data,
						f->sig_bytes.len);
			else
				ge_buf_add(out, fs, flen);
			done_sig = 1;
			continue;
		case GE_FUNCDEF_NODE_DEF:
			if (!done_nodes)
				encode_nodes(b, out);
			done_nodes = 1;
			continue;
		case GE_FUNCDEF_RET:
			if (rets_same)
				ge_buf_add(out, fs, flen);
			else if (!done_rets)
				ge_buf_add(out, rets.data, rets.len);
			done_rets = 1;
			continue;
		case GE_FUNCDEF_CONTROL_RET:
			if (crets_same)
				ge_buf_add(out, fs, flen);
			else if (!done_crets)
				ge_buf_add(out, crets.data, crets.len);
			done_crets = 1;
			continue;
		case GE_FUNCDEF_ARG_ATTR:
		case GE_FUNCDEF_RESOURCE_ARG_UNIQUE_ID:
			if (ident)
				ge_buf_add(out, fs, flen);
			else
				remap_arg_entry(f, fno, body, body + l, out);
			continue;
		}
		ge_buf_add(out, fs, flen);
	}
	if (!done_sig && f->sig_changed)
		ge_buf_lenfield(out, GE_FUNCDEF_SIGNATURE, f->sig_bytes.data,
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
	ge_fn *fn = ge_fl_fn(g, f);
	if (fn)
		ge_fl_encode_fn(fn, out);
}

uint64_t ge_graph_stamp(const ge_graph *g)
{
	uint64_t h = g->version;
	const struct ge_flib *l = g->flib;
	if (!l || g->parent)
		return h;
	uint64_t body = 0;
	for (size_t i = 0; i < l->n_fn; i++)
		if (!l->fn[i].dead && l->fn[i].body)
			body += l->fn[i].body->version - l->fn[i].base_ver;
	h = h * 0x9E3779B97F4A7C15ull + l->edits;
	return h * 0x9E3779B97F4A7C15ull + body;
}

void ge_flib_install(void)
{
	ge_parts.flib_free = ge_flib_free;
	ge_parts.flib_changed = ge_flib_changed;
	ge_parts.flib_adopt = ge_flib_adopt;
	ge_parts.flib_encode_payload = ge_flib_encode_payload;
	ge_parts.flib_opdef = ge_flib_opdef;
	ge_parts.flib_add_field = ge_flib_add_field;
}

void ge_flib_adopt(ge_graph *root)
{
	struct ge_flib *l = root->flib;
	for (size_t i = 0; l && i < l->n_fn; i++)
		if (l->fn[i].body)
			l->fn[i].body->parent = root;
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
	struct ge_flib *l = ge_fl_lib(g);
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
		ge_fl_encode_fn(f, &fb);
		ge_buf_lenfield(out, GE_FLIB_FUNCTION, fb.data, fb.len);
	}
	ge_buf_free(&fb);
}

