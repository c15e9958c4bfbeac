/* varcheck.c: savers, variables and the checkpoint checked against each
 * other (ge_variables_validate, varpolicy.h). */
#include "variables/varpolicy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle.h"
#include "graph/sets.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

#define MAX_HOPS 8

/* One key a saver op names for a variable. */
struct use {
	const char *key;       /* points into the Const's value */
	size_t key_len;
	const ge_variable *v;
	ge_opid op;            /* the SaveV2 or RestoreV2 */
	int dtype;             /* what the saver's dtypes say, 0 unknown */
	int restore;
};

struct vc {
	ge_graph *g;
	ge_varlist vl;
	struct use *u;
	size_t n, cap;
	ge_buf *rep;
	size_t problems;
};

static const Tensorflow__TensorProto *names_of(const ge_graph *g,
					       ge_opid op)
{
	if (op == GE_NOOP || strcmp(ge_op_type(g, op), "Const"))
		return NULL;
	const Tensorflow__AttrValue *a = ge_op_attr(g, op, "value", NULL);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
	    !a->tensor || a->tensor->dtype != TENSORFLOW__DATA_TYPE__DT_STRING ||
	    !a->tensor->n_string_val)
		return NULL;
	return a->tensor;
}

static int type_at(const ge_graph *g, ge_opid op, size_t k)
{
	const Tensorflow__AttrValue *a = ge_op_attr(g, op, "dtypes", NULL);
	if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !a->list || k >= a->list->n_type)
		return 0;
	return (int)a->list->type[k];
}

static const ge_variable *var_behind(struct vc *c, ge_tref t)
{
	for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
		const ge_variable *v = ge_varlist_find_op(&c->vl, t.op);
		if (v)
			return v;
		const char *type = ge_op_type(c->g, t.op);
		if ((strcmp(type, "Identity") && strcmp(type, "ReadVariableOp")) ||
		    ge_op_num_inputs(c->g, t.op) < 1)
			break;
		t = ge_op_input(c->g, t.op, 0);
	}
	return NULL;
}

static void add_use(struct vc *c, const Tensorflow__TensorProto *names,
		    size_t k, const ge_variable *v, ge_opid op, int restore)
{
	if (!names || !v)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->u = ge_xrealloc(c->u, c->cap * sizeof *c->u);
	}
	size_t i = k < names->n_string_val ? k : names->n_string_val - 1;
	struct use *u = &c->u[c->n++];
	u->key = (const char *)names->string_val[i].data;
	u->key_len = names->string_val[i].len;
	u->v = v;
	u->op = op;
	u->dtype = type_at(c->g, op, k);
	u->restore = restore;
}

static void problem(struct vc *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct vc *c, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	ge_buf_printf(c->rep, "%s\n", line);
	c->problems++;
}

static int same_scope(const ge_graph *g, ge_opid a, ge_opid b)
{
	const char *an = ge_op_name(g, a), *as = strrchr(an, '/');
	const char *bn = ge_op_name(g, b), *bs = strrchr(bn, '/');
	size_t al = as ? (size_t)(as - an) : 0, bl = bs ? (size_t)(bs - bn) : 0;
	return al == bl && !strncmp(an, bn, al);
}

/* Whether a RestoreV2 belongs to a saver: a SaveV2 in its name scope
 * (`save/RestoreV2` and `save/SaveV2`).  Other RestoreV2 ops read other
 * checkpoints (a TF Hub module's `checkpoint_initializer`). */
static int of_saver(const ge_graph *g, ge_opid r, const ge_opvec *saves)
{
	for (size_t i = 0; i < saves->n; i++)
		if (same_scope(g, saves->v[i], r))
			return 1;
	return 0;
}

/* What the SaveV2 ops save and the RestoreV2 ops restore, per variable. */
static void collect(struct vc *c)
{
	ge_graph *g = c->g;
	size_t cap = ge_graph_capacity(g);
	ge_opvec saves = GE_VEC_INIT;
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id) &&
		    !strcmp(ge_op_type(g, (ge_opid)id), "SaveV2"))
			ge_opvec_push(&saves, (ge_opid)id);
	for (size_t id = 0; id < cap; id++) {
		ge_opid op = (ge_opid)id;
		if (!ge_op_alive(g, op))
			continue;
		const char *type = ge_op_type(g, op);
		size_t ni = ge_op_num_inputs(g, op);
		if (!strcmp(type, "SaveV2") && ni > 3) {
			const Tensorflow__TensorProto *names =
				names_of(g, ge_op_input(g, op, 1).op);
			for (size_t k = 3; k < ni; k++)
				add_use(c, names, k - 3,
					var_behind(c, ge_op_input(g, op, k)),
					op, 0);
			continue;
		}
		int assign = !strcmp(type, "Assign") ||
			     !strcmp(type, "AssignVariableOp");
		if (!assign || ni < 2)
			continue;
		ge_tref t = ge_op_input(g, op, 1);
		for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
			const char *ty = ge_op_type(g, t.op);
			if (!strcmp(ty, "RestoreV2")) {
				if (!of_saver(g, t.op, &saves))
					break;
				const Tensorflow__TensorProto *names = names_of(
					g, ge_op_input(g, t.op, 1).op);
				add_use(c, names, (size_t)t.index,
					var_behind(c, ge_op_input(g, op, 0)),
					t.op, 1);
				break;
			}
			if (strcmp(ty, "Identity") ||
			    ge_op_num_inputs(g, t.op) < 1)
				break;
			t = ge_op_input(g, t.op, 0);
		}
	}
	ge_opvec_free(&saves);
}

static int key_is(const struct use *u, const char *key)
{
	return strlen(key) == u->key_len && !memcmp(u->key, key, u->key_len);
}

/* Savers against variables and against each other. */
static void check_savers(struct vc *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct use *u = &c->u[i];
		const char *on = ge_op_name(c->g, u->op);
		/* a restore reads what the SaveV2 of its saver saves */
		const struct use *s = NULL;
		for (size_t j = 0; u->restore && j < c->n && !s; j++)
			if (!c->u[j].restore && c->u[j].v == u->v &&
			    same_scope(c->g, c->u[j].op, u->op))
				s = &c->u[j];
		if (s && (s->key_len != u->key_len ||
			  memcmp(s->key, u->key, u->key_len)))
			problem(c, "variable '%s' is saved as '%.*s' by '%s', "
				   "but '%s' restores it from '%.*s'",
				u->v->name, (int)s->key_len, s->key,
				ge_op_name(c->g, s->op), on, (int)u->key_len,
				u->key);
		if (u->dtype && u->v->dtype && u->dtype != u->v->dtype)
			problem(c, "'%s' %s variable '%s' as %s, but it is %s",
				on, u->restore ? "restores" : "saves",
				u->v->name, ge_dtype_name(u->dtype),
				ge_dtype_name(u->v->dtype));
		for (size_t j = 0; j < i; j++) {
			const struct use *w = &c->u[j];
			if (w->v == u->v || u->key_len != w->key_len ||
			    memcmp(u->key, w->key, u->key_len) ||
			    u->restore != w->restore)
				continue;
			problem(c, "checkpoint key '%.*s' is %s for variable "
				   "'%s' by '%s' and for variable '%s' by '%s'",
				(int)u->key_len, u->key,
				u->restore ? "restored" : "saved", w->v->name,
				ge_op_name(c->g, w->op), u->v->name, on);
			break;
		}
	}
}

/* The checkpoint holds what the savers name, as the variables are; the
 * plan makes keys variables are saved under. */
static void check_checkpoint(struct vc *c, ge_bundle *b)
{
	const ge_ckpt_plan *plan = ge_graph_checkpoint_plan(c->g);
	for (size_t i = 0; plan && i < plan->n; i++) {
		if (plan->rename && plan->rename[i])
			continue;
		size_t k = 0;
		while (k < c->vl.n && strcmp(c->vl.v[k].key, plan->dst[i]))
			k++;
		if (k == c->vl.n)
			problem(c, "the checkpoint plan copies '%s' to '%s', "
				   "but no variable is saved as '%s'",
				plan->src[i], plan->dst[i], plan->dst[i]);
	}
	if (!b)
		return;
	for (size_t i = 0; i < c->n; i++) {
		const struct use *u = &c->u[i];
		const ge_variable *v = u->v;
		if (u->restore || v->slice_name || !key_is(u, v->key))
			continue;
		const char *key = ge_graph_checkpoint_origin(c->g, v->key);
		if (!key)
			continue; /* read from another model's checkpoint */
		const ge_bundle_entry *e = ge_bundle_find(b, key);
		const char *idx = ge_bundle_index_path(b);
		if (!e) {
			problem(c, "variable '%s': %s has no tensor '%s'",
				v->name, idx, key);
			continue;
		}
		if (v->dtype && e->dtype != v->dtype)
			problem(c, "variable '%s' is %s, but %s holds '%s' "
				   "as %s", v->name, ge_dtype_name(v->dtype),
				idx, key, ge_dtype_name(e->dtype));
		int same = v->rank < 0 || e->rank < 0 || v->rank == e->rank;
		for (int d = 0; same && v->rank > 0 && d < v->rank; d++)
			same = v->dims[d] < 0 || v->dims[d] == e->dims[d];
		if (!same)
			problem(c, "variable '%s' does not have the shape of "
				   "'%s' in %s", v->name, key, idx);
	}
}

size_t ge_variables_validate(ge_graph *g, ge_buf *report)
{
	struct vc c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.rep = report;
	ge_error err;
	if (ge_graph_variables(g, &c.vl, &err) != GE_OK) {
		ge_buf_printf(report, "%s\n", err.msg);
		return 1;
	}
	collect(&c);
	check_savers(&c);
	char *prefix = NULL;
	ge_bundle *b = NULL;
	if (c.n && ge_graph_checkpoint_source(g, &prefix, &err) == GE_OK &&
	    ge_bundle_open(prefix, &b, &err) != GE_OK) {
		problem(&c, "checkpoint: %s", err.msg);
		b = NULL;
	}
	check_checkpoint(&c, b);
	if (b)
		ge_bundle_close(b);
	free(prefix);
	free(c.u);
	ge_varlist_free(&c.vl);
	return c.problems;
}
