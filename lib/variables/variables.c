/* variables.c: see variables.h. */
#include "variables/variables.h"
#include "base/bounds.h"

#include <stdlib.h>
#include <string.h>

#include "graph/graph_copy.h"
#include "formats/meta.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* How far a saved tensor or a restored value is followed through
 * Identity and read ops to find its variable or its restore op; savers
 * put at most two such ops in between. */
#define MAX_HOPS 8

int ge_is_variable_op_type(const char *type)
{
	return !strcmp(type, "VariableV2") || !strcmp(type, "Variable") ||
	       !strcmp(type, "VarHandleOp");
}

/* What an op type is to the list: op types are interned per graph, so a
 * small direct-mapped memo of type pointers saves the string compares on
 * every op of a large graph. */
enum { TK_OTHER, TK_VARIABLE, TK_SAVE3, TK_SAVE2 };
struct type_memo {
	const char *type[64];
	uint8_t kind[64];
};

static int type_kind(struct type_memo *m, const char *type)
{
	size_t slot = ((uintptr_t)type >> 3) & 63;
	if (m->type[slot] == type)
		return m->kind[slot];
	int k = TK_OTHER;
	if (ge_is_variable_op_type(type))
		k = TK_VARIABLE;
	else if (!strcmp(type, "SaveV2") || !strcmp(type, "SaveSlices"))
		k = TK_SAVE3;
	else if (!strcmp(type, "Save"))
		k = TK_SAVE2;
	m->type[slot] = type;
	m->kind[slot] = (uint8_t)k;
	return k;
}

/* What is known about one variable while the list is built. */
struct pending {
	ge_opid op;
	int resource;
	int has_def, trainable;
	/* from the first VariableDef naming the variable */
	char *init_name, *snap_name, *iv_name, *slice_name;
	const char **colls;
	size_t ncolls, capcolls;
};

struct build {
	ge_graph *g;
	struct pending *p;
	size_t n, cap;
	uint32_t *by_op; /* op id -> index + 1 into p */
	size_t nops;
};

static struct pending *get_or_add(struct build *b, ge_opid op)
{
	if (b->by_op[op])
		return &b->p[b->by_op[op] - 1];
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 16;
		b->p = ge_xrealloc(b->p, b->cap * sizeof *b->p);
	}
	struct pending *q = &b->p[b->n++];
	memset(q, 0, sizeof *q);
	q->op = op;
	b->by_op[op] = (uint32_t)b->n;
	return q;
}

static void add_coll(struct pending *q, const char *name)
{
	for (size_t i = 0; i < q->ncolls; i++)
		if (!strcmp(q->colls[i], name))
			return;
	if (q->ncolls == q->capcolls) {
		q->capcolls = q->capcolls ? 2 * q->capcolls : 4;
		q->colls = ge_xrealloc(q->colls,
				       q->capcolls * sizeof *q->colls);
	}
	q->colls[q->ncolls++] = name;
}

static void pending_free(struct build *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct pending *q = &b->p[i];
		free(q->colls);
		free(q->init_name);
		free(q->snap_name);
		free(q->iv_name);
		free(q->slice_name);
	}
	free(b->p);
	ge_big_free(b->by_op);
}

/* The op of a tensor name ("a:0", "a", "^a"); GE_NOOP if none. */
static ge_opid op_of(const ge_graph *g, const char *text)
{
	ge_tref t;
	if (!text || !*text || ge_graph_find_tensor(g, text, &t) != GE_OK)
		return GE_NOOP;
	return t.op;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? ge_xstrdup(s) : NULL;
}

static int read_defs(struct build *b, int *any_coll, ge_error *err)
{
	ge_graph *g = b->g;
	size_t nc = ge_collection_count(g);
	for (size_t c = 0; c < nc; c++) {
		const char *cname = ge_collection_name(g, c);
		if (!cname || !ge_collection_holds_variables(cname))
			continue;
		Tensorflow__CollectionDef *cd = ge_collection_get(g, cname);
		if (!cd || cd->kind_case !=
				   TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
			continue;
		*any_coll = 1;
		Tensorflow__CollectionDef__BytesList *l = cd->bytes_list;
		for (size_t i = 0; i < l->n_value; i++) {
			Tensorflow__VariableDef *d =
				(Tensorflow__VariableDef *)ge_pb_unpack(
		&tensorflow__variable_def__descriptor, l->value[i].len,
		l->value[i].data);
			if (!d)
				return ge_err(err, GE_EFORMAT,
					      "%s: collection '%s': VariableDef "
					      "%zu does not decode",
					      ge_graph_name(g), cname, i + 1);
			ge_opid op = op_of(g, d->variable_name);
			if (op != GE_NOOP) {
				struct pending *q = get_or_add(b, op);
				if (!q->has_def) {
					q->has_def = 1;
					q->init_name =
						dup_or_null(d->initializer_name);
					q->snap_name =
						dup_or_null(d->snapshot_name);
					q->iv_name =
						dup_or_null(d->initial_value_name);
					if (d->save_slice_info_def)
						q->slice_name = dup_or_null(
							d->save_slice_info_def
								->full_name);
				}
				if (d->is_resource)
					q->resource = 1;
				if (d->trainable ||
				    !strcmp(cname, "trainable_variables"))
					q->trainable = 1;
				add_coll(q, cname);
			}
			tensorflow__variable_def__free_unpacked(d, NULL);
		}
	}
	return GE_OK;
}

static int cmp_pending(const void *a, const void *b)
{
	ge_opid x = ((const struct pending *)a)->op;
	ge_opid y = ((const struct pending *)b)->op;
	return x < y ? -1 : x > y;
}

/* Whether t is, through Identity ops, an output of a restore op. */
static int from_restore(const ge_graph *g, ge_tref t)
{
	for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
		const char *type = ge_op_type(g, t.op);
		if (!strncmp(type, "Restore", 7))
			return 1;
		if (strcmp(type, "Identity") ||
		    ge_op_num_inputs(g, t.op) < 1)
			return 0;
		t = ge_op_input(g, t.op, 0);
	}
	return 0;
}

/* The restore op and output index behind t, through Identity ops. */
static ge_tref restore_source(const ge_graph *g, ge_tref t)
{
	for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
		if (!strcmp(ge_op_type(g, t.op), "RestoreV2"))
			return t;
		if (strcmp(ge_op_type(g, t.op), "Identity") ||
		    ge_op_num_inputs(g, t.op) < 1)
			break;
		t = ge_op_input(g, t.op, 0);
	}
	t.op = GE_NOOP;
	return t;
}

/* The string elements of a Const op's value, or NULL. */
static const Tensorflow__TensorProto *const_strings(const ge_graph *g,
						    ge_opid op)
{
	if (op == GE_NOOP || strcmp(ge_op_type(g, op), "Const"))
		return NULL;
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "value", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !v->tensor || v->tensor->dtype != TENSORFLOW__DATA_TYPE__DT_STRING)
		return NULL;
	return v->tensor;
}

/* String k of a string tensor (TensorFlow broadcasts the last value when
 * fewer are stored than the shape holds). */
static const char *string_at(ge_arena *a, const Tensorflow__TensorProto *t,
			     size_t k)
{
	if (!t || !t->n_string_val)
		return NULL;
	if (k >= t->n_string_val)
		k = t->n_string_val - 1;
	if (!t->string_val[k].len)
		return ge_arena_strdup(a, "");
	return ge_arena_strndup(a, (const char *)t->string_val[k].data,
				t->string_val[k].len);
}

static ge_opid var_behind(const ge_graph *g, const uint32_t *by_op,
			  ge_tref t)
{
	for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
		if (by_op[t.op])
			return t.op;
		const char *type = ge_op_type(g, t.op);
		if ((strcmp(type, "Identity") && strcmp(type, "ReadVariableOp")) ||
		    ge_op_num_inputs(g, t.op) < 1)
			break;
		t = ge_op_input(g, t.op, 0);
	}
	return GE_NOOP;
}

/* Keys from the saver's save ops. */
static void saver_keys(ge_graph *g, ge_varlist *l)
{
	size_t cap = ge_graph_capacity(g);
	struct type_memo memo = {{NULL}, {0}};
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		int kind = type_kind(&memo, ge_op_type(g, (ge_opid)id));
		size_t first;
		if (kind == TK_SAVE3)
			first = 3;
		else if (kind == TK_SAVE2)
			first = 2;
		else
			continue;
		size_t n = ge_op_num_inputs(g, (ge_opid)id);
		if (n <= first)
			continue;
		const Tensorflow__TensorProto *names = const_strings(
			g, ge_op_input(g, (ge_opid)id, 1).op);
		if (!names)
			continue;
		for (size_t k = first; k < n; k++) {
			ge_opid v = var_behind(g, l->by_op,
					       ge_op_input(g, (ge_opid)id, k));
			if (v == GE_NOOP)
				continue;
			ge_variable *x = &l->v[l->by_op[v] - 1];
			if (x->key)
				continue;
			x->key = string_at(&l->arena, names, k - first);
		}
	}
}

/* A candidate op: the one with the preferred name wins, else the first. */
static void pick(const ge_graph *g, ge_opid *best, int *best_named,
		 ge_opid cand, const char *want)
{
	int named = !strcmp(ge_op_name(g, cand), want);
	if (*best == GE_NOOP || (named && !*best_named)) {
		*best = cand;
		*best_named = named;
	}
}

static void read_shape(ge_graph *g, ge_varlist *l, ge_variable *v)
{
	v->rank = -1;
	const Tensorflow__AttrValue *a = ge_op_attr(g, v->op, "shape", NULL);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
	    !a->shape || a->shape->unknown_rank)
		return;
	int64_t *d = ge_arena_alloc(&l->arena,
				    (a->shape->n_dim ? a->shape->n_dim : 1) *
					    sizeof *d);
	for (size_t i = 0; i < a->shape->n_dim; i++)
		d[i] = a->shape->dim[i]->size < 0 ? -1 : a->shape->dim[i]->size;
	v->rank = (int)a->shape->n_dim;
	v->dims = d;
}

static void fill(ge_graph *g, ge_varlist *l, ge_variable *v,
		 const struct pending *q, int any_coll, ge_buf *scratch)
{
	const char *name = ge_op_name(g, v->op);
	const char *type = ge_op_type(g, v->op);
	v->name = name;
	v->kind = (q->resource || !strcmp(type, "VarHandleOp"))
			  ? GE_VAR_RESOURCE
			  : GE_VAR_REF;
	v->trainable = q->trainable ? 1 : any_coll ? 0 : -1;
	v->has_def = q->has_def;
	v->slice_name = q->slice_name
				? ge_arena_strdup(&l->arena, q->slice_name)
				: NULL;
	if (q->ncolls) {
		const char **c = ge_arena_alloc(&l->arena,
						q->ncolls * sizeof *c);
		memcpy(c, q->colls, q->ncolls * sizeof *c);
		v->collections = c;
		v->n_collections = q->ncolls;
	}
	int dt;
	if (ge_op_attr_type(g, v->op, "dtype", &dt) == 0)
		v->dtype = dt > 100 ? dt - 100 : dt;
	read_shape(g, l, v);

	/* from the VariableDef, when its names resolve */
	v->initializer = GE_NOOP;
	v->snapshot.op = GE_NOOP;
	v->snapshot.index = 0;
	v->initial_value.op = GE_NOOP;
	v->initial_value.index = 0;
	ge_tref t;
	if (q->init_name) {
		ge_opid o = ge_graph_find(g, q->init_name);
		if (o == GE_NOOP)
			o = op_of(g, q->init_name);
		v->initializer = o;
	}
	if (q->snap_name && ge_graph_find_tensor(g, q->snap_name, &t) == GE_OK &&
	    t.index >= 0)
		v->snapshot = t;
	if (q->iv_name && ge_graph_find_tensor(g, q->iv_name, &t) == GE_OK &&
	    t.index >= 0)
		v->initial_value = t;

	/* from the ops around the variable */
	int res = v->kind == GE_VAR_RESOURCE;
	const char *assign_type = res ? "AssignVariableOp" : "Assign";
	const char *read_type = res ? "ReadVariableOp" : "Identity";
	scratch->len = 0;
	ge_buf_printf(scratch, "%s/Assign", name);
	ge_buf_addc(scratch, 0);
	size_t read_at = scratch->len;
	ge_buf_printf(scratch, res ? "%s/Read/ReadVariableOp" : "%s/read",
		      name);
	const char *want_init = (const char *)scratch->data;
	const char *want_read = want_init + read_at;
	ge_opid init = GE_NOOP, read = GE_NOOP, restore_assign = GE_NOOP;
	int init_named = 0, read_named = 0;
	size_t nu;
	const ge_use *u = ge_op_uses(g, v->op, &nu);
	for (size_t i = 0; i < nu; i++) {
		ge_opid c = u[i].op;
		const char *ct = ge_op_type(g, c);
		if (u[i].slot == 0 && !strcmp(ct, assign_type) &&
		    ge_op_num_inputs(g, c) >= 2) {
			if (from_restore(g, ge_op_input(g, c, 1))) {
				if (restore_assign == GE_NOOP)
					restore_assign = c;
			} else {
				pick(g, &init, &init_named, c, want_init);
			}
		} else if (u[i].slot == 0 && !strcmp(ct, read_type)) {
			pick(g, &read, &read_named, c, want_read);
		}
	}
	if (v->initializer == GE_NOOP)
		v->initializer = init;
	if (v->snapshot.op == GE_NOOP && read != GE_NOOP) {
		v->snapshot.op = read;
		v->snapshot.index = 0;
	}
	if (v->initial_value.op == GE_NOOP && v->initializer != GE_NOOP &&
	    ge_op_num_inputs(g, v->initializer) >= 2) {
		ge_tref iv = ge_op_input(g, v->initializer, 1);
		if (iv.op != GE_NOOP)
			v->initial_value = iv;
	}
	/* a key named by the restore op, for savers without save ops */
	if (restore_assign != GE_NOOP) {
		ge_tref r = restore_source(g, ge_op_input(g, restore_assign, 1));
		if (r.op != GE_NOOP && ge_op_num_inputs(g, r.op) >= 2) {
			const Tensorflow__TensorProto *names = const_strings(
				g, ge_op_input(g, r.op, 1).op);
			v->key = string_at(&l->arena, names, (size_t)r.index);
		}
	}
}

int ge_graph_variables(ge_graph *g, ge_varlist *out, ge_error *err)
{
	memset(out, 0, sizeof *out);
	ge_arena_init(&out->arena);
	struct build b = {0};
	b.g = g;
	b.nops = ge_graph_capacity(g);
	b.by_op = ge_big_sparse((b.nops ? b.nops : 1) * sizeof *b.by_op);
	int any_coll = 0;
	int rc = read_defs(&b, &any_coll, err);
	if (rc) {
		pending_free(&b);
		return rc;
	}
	struct type_memo memo = {{NULL}, {0}};
	/* a graph without variable ops (the copy of a frozen model, say) and
	 * no VariableDef: nothing to look for */
	size_t scan = b.nops;
	if (!b.n && !ge_graph_may_have_type(g, "VariableV2") &&
	    !ge_graph_may_have_type(g, "Variable") &&
	    !ge_graph_may_have_type(g, "VarHandleOp"))
		scan = 0;
	for (size_t id = 0; id < scan; id++)
		if (ge_op_alive(g, (ge_opid)id) &&
		    type_kind(&memo, ge_op_type(g, (ge_opid)id)) == TK_VARIABLE)
			get_or_add(&b, (ge_opid)id);
	if (b.n)
		qsort(b.p, b.n, sizeof *b.p, cmp_pending);

	out->n = b.n;
	out->v = ge_arena_alloc(&out->arena,
				(b.n ? b.n : 1) * sizeof *out->v);
	memset(out->v, 0, (b.n ? b.n : 1) * sizeof *out->v);
	out->cap = b.nops;
	out->by_op = b.by_op; /* renumbered below */
	b.by_op = NULL;
	for (size_t i = 0; i < b.n; i++) {
		out->v[i].op = b.p[i].op;
		out->by_op[b.p[i].op] = (uint32_t)i + 1;
	}
	ge_buf scratch = GE_BUF_INIT;
	for (size_t i = 0; i < b.n; i++)
		fill(g, out, &out->v[i], &b.p[i], any_coll, &scratch);
	ge_buf_free(&scratch);
	/* The save ops' names win over the restore ops' (fill set those):
	 * set them aside, take the save ops', fall back to them, then to
	 * the variable's name. */
	const char **rk = ge_xmalloc((b.n ? b.n : 1) * sizeof *rk);
	for (size_t i = 0; i < b.n; i++) {
		rk[i] = out->v[i].key;
		out->v[i].key = NULL;
	}
	if (b.n)
		saver_keys(g, out); /* keys of variables: none to find */
	for (size_t i = 0; i < b.n; i++) {
		if (!out->v[i].key)
			out->v[i].key = rk[i];
		if (!out->v[i].key)
			out->v[i].key = out->v[i].name;
	}
	free(rk);
	pending_free(&b);
	return GE_OK;
}

void ge_varlist_free(ge_varlist *l)
{
	if (!l)
		return;
	ge_big_free(l->by_op);
	ge_arena_free(&l->arena);
	memset(l, 0, sizeof *l);
}

const ge_variable *ge_varlist_find_op(const ge_varlist *l, ge_opid op)
{
	if (op == GE_NOOP || op >= l->cap || !l->by_op[op])
		return NULL;
	return &l->v[l->by_op[op] - 1];
}

const ge_variable *ge_varlist_find(const ge_varlist *l, const ge_graph *g,
				   const char *name)
{
	return ge_varlist_find_op(l, ge_graph_find(g, name));
}
