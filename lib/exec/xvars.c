/*
 * exec/xvars.c: the variables of a session and the ops that use them.
 *
 * A variable is an executor object (GE_XOBJ_VARIABLE) holding its value,
 * found by name: a TF1 VariableV2 (or Variable) by its op's name, a
 * resource variable (VarHandleOp) by its container and shared_name.  The
 * first op that names a variable makes it and reads its value from the
 * model's checkpoint, under the key the graph's saver gives (TF1) or the
 * one the object graphs give a captured variable (TF2 SavedModels).
 *
 * VarHandleOp gives a resource tensor holding the variable.  VariableV2
 * gives the same object marked as a reference: ops that take TF1
 * references (Assign, IsVariableInitialized, the Ref* control-flow ops)
 * see it as it is, every other op reads the variable's value instead
 * (exec.c asks ge_xvars_is_ref and ge_xvars_deref).
 */
#include "exec/exec_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle.h"
#include "variables/checkpoint.h"
#include "formats/model.h"
#include "variables/tf2.h"
#include "variables/variables.h"

enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5,
	DT_INT8 = 6, DT_STRING = 7, DT_INT64 = 9, DT_BOOL = 10,
	DT_RESOURCE = 20,
};

/* ---------------------------------------------------------------- maps */

/* Strings to pointers, open addressing. */
struct smap {
	char **k;
	void **v;
	size_t n, cap;
};

static void **smap_at(struct smap *m, const char *key, int create)
{
	if (create && 2 * (m->n + 1) > m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 64;
		char **nk = ge_xcalloc(ncap, sizeof *nk);
		void **nv = ge_xcalloc(ncap, sizeof *nv);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->k[i])
				continue;
			size_t h = ge_hash(m->k[i], strlen(m->k[i]));
			while (nk[h & (ncap - 1)])
				h++;
			nk[h & (ncap - 1)] = m->k[i];
			nv[h & (ncap - 1)] = m->v[i];
		}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = ncap;
	}
	if (!m->cap)
		return NULL;
	for (size_t h = ge_hash(key, strlen(key));; h++) {
		size_t i = h & (m->cap - 1);
		if (!m->k[i]) {
			if (!create)
				return NULL;
			m->k[i] = ge_xstrdup(key);
			m->n++;
			return &m->v[i];
		}
		if (!strcmp(m->k[i], key))
			return &m->v[i];
	}
}

static void smap_free(struct smap *m, void (*fv)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->k[i]) {
			free(m->k[i]);
			if (fv)
				fv(m->v[i]);
		}
	free(m->k);
	free(m->v);
}

/* ---------------------------------------------------------------- store */

struct xvar {
	ge_xobj o;
	char *name;
	int ref;          /* a TF1 reference variable */
	ge_xt *value;     /* NULL: not initialized */
};

struct xvars {
	ge_bundle *b;
	struct smap keys; /* "r:op" / "h:shared_name" -> checkpoint key */
	struct smap vars; /* same names -> struct xvar */
};

static void var_destroy(ge_xobj *o)
{
	struct xvar *x = (struct xvar *)o;
	ge_xt_unref(x->value);
	free(x->name);
	free(x);
}

static void var_unref(void *p)
{
	ge_xobj_unref(p);
}

static void set_key(struct xvars *v, int ref, const char *name,
		    const char *key)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_printf(&b, "%c:%s", ref ? 'r' : 'h', name);
	ge_buf_addc(&b, 0);
	void **slot = smap_at(&v->keys, (const char *)b.data, 1);
	free(*slot);
	*slot = ge_xstrdup(key);
	ge_buf_free(&b);
}

/* The name a resource variable op is known by: container/shared_name,
 * the op's name when shared_name is empty. */
static void handle_name(const ge_graph *g, ge_opid id, ge_buf *out)
{
	const char *s = NULL, *c = NULL;
	size_t n = 0, cn = 0;
	if (!ge_op_attr_string(g, id, "container", &c, &cn) && c && cn)
		ge_buf_printf(out, "%.*s/", (int)cn, c);
	if (!ge_op_attr_string(g, id, "shared_name", &s, &n) && s && n)
		ge_buf_add(out, s, n);
	else
		ge_buf_adds(out, ge_op_name(g, id));
	ge_buf_addc(out, 0);
}

/* TF2: the keys of the variables the signature calls capture. */
static void tf2_keys(struct ge_xrt *rt, struct xvars *v)
{
	ge_graph *g = rt->g;
	ge_tf2_objects *o = NULL;
	ge_error e = {0};
	if (!ge_is_tf2_savedmodel(g) || ge_tf2_objects_open(g, v->b, &o, &e))
		return;
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		const char *t = ge_op_type(g, (ge_opid)id);
		if (strcmp(t, "StatefulPartitionedCall") &&
		    strcmp(t, "PartitionedCall"))
			continue;
		ge_tf2_capture *caps = NULL;
		size_t n = 0;
		if (ge_tf2_call_captures(o, g, (ge_opid)id, &caps, &n, &e))
			continue;
		for (size_t i = 0; i < n; i++) {
			ge_opid h = caps[i].t.op;
			if (!caps[i].key || h == GE_NOOP ||
			    strcmp(ge_op_type(g, h), "VarHandleOp"))
				continue;
			ge_buf b = GE_BUF_INIT;
			handle_name(g, h, &b);
			set_key(v, 0, (const char *)b.data, caps[i].key);
			ge_buf_free(&b);
		}
		free(caps);
	}
	ge_tf2_objects_free(o);
}

char *ge_xcheckpoint_of(const ge_graph *g)
{
	const char *path = ge_graph_savedmodel_dir(g);
	ge_format f = ge_graph_format(g);
	if (!path && (f == GE_FMT_META || f == GE_FMT_META_TEXT))
		path = ge_graph_name(g);
	char *prefix = NULL;
	ge_error e = {0};
	if (path && path[0] && !ge_checkpoint_prefix(path, &prefix, &e))
		return prefix;
	return NULL;
}

int ge_xvars_open(struct ge_xrt *rt, ge_error *err)
{
	struct xvars *v = ge_xcalloc(1, sizeof *v);
	ge_graph *g = rt->g;
	rt->vars = v;
	char *prefix = ge_xcheckpoint_of(g);
	if (!prefix && rt->o.checkpoint)
		prefix = ge_xstrdup(rt->o.checkpoint);
	if (prefix) {
		int rc = ge_bundle_open(prefix, &v->b, err);
		free(prefix);
		if (rc)
			return rc;
	}
	ge_varlist l = {0};
	int rc = ge_graph_variables(g, &l, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < l.n; i++) {
		const ge_variable *x = &l.v[i];
		if (!x->key)
			continue;
		if (x->kind == GE_VAR_REF) {
			set_key(v, 1, x->name, x->key);
		} else if (x->op != GE_NOOP) {
			ge_buf b = GE_BUF_INIT;
			handle_name(g, x->op, &b);
			set_key(v, 0, (const char *)b.data, x->key);
			ge_buf_free(&b);
		}
	}
	ge_varlist_free(&l);
	if (v->b)
		tf2_keys(rt, v);
	return GE_OK;
}

void ge_xvars_close(struct ge_xrt *rt)
{
	struct xvars *v = rt->vars;
	if (!v)
		return;
	smap_free(&v->keys, free);
	smap_free(&v->vars, var_unref);
	if (v->b)
		ge_bundle_close(v->b);
	free(v);
	rt->vars = NULL;
}

/* A checkpoint tensor as a runner tensor. */
static ge_xt *bundle_tensor(struct ge_xrt *rt, const ge_bundle_entry *e,
			    const char *what, ge_error *err)
{
	ge_bundle *b = rt->vars->b;
	if (e->nslices || e->rank < 0 || e->rank > GE_SHAPE_MAXRANK) {
		ge_err(err, GE_EINVAL, "%s: checkpoint tensor '%s' is "
		       "partitioned or has no known shape", what, e->name);
		return NULL;
	}
	ge_xt *t = ge_xt_new(e->dtype, e->rank, e->dims, rt->budget, what,
			     err);
	if (!t)
		return NULL;
	if (e->dtype == DT_STRING) {
		ge_bundle_string *s = NULL;
		size_t n = 0;
		if (ge_bundle_read_strings(b, e, &s, &n, err) ||
		    (int64_t)n != t->n) {
			free(s);
			ge_xt_unref(t);
			return NULL;
		}
		ge_xstr *d = t->data;
		for (size_t i = 0; i < n; i++) {
			d[i].len = s[i].len;
			if (s[i].len)
				d[i].p = ge_xstrndup(s[i].ptr, s[i].len);
		}
		free(s);
		return t;
	}
	uint8_t *data = NULL;
	size_t len = 0;
	if (ge_bundle_read(b, e, &data, &len, err) ||
	    len != (size_t)t->n * ge_xt_elem_size(t->dtype)) {
		if (data)
			ge_err(err, GE_EFORMAT, "%s: checkpoint tensor '%s' "
			       "holds %zu bytes", what, e->name, len);
		free(data);
		ge_xt_unref(t);
		return NULL;
	}
	if (len)
		memcpy(t->data, data, len);
	free(data);
	return t;
}

/* The variable of that name, made (and restored) on first use. */
static struct xvar *var_get(struct ge_xrt *rt, int ref, const char *name,
			    int dtype, const char *what, ge_error *err)
{
	struct xvars *v = rt->vars;
	ge_buf b = GE_BUF_INIT;
	ge_buf_printf(&b, "%c:%s", ref ? 'r' : 'h', name);
	ge_buf_addc(&b, 0);
	const char *k = (const char *)b.data;
	void **slot = smap_at(&v->vars, k, 1);
	struct xvar *x = *slot;
	if (x) {
		ge_buf_free(&b);
		return x;
	}
	void **key = smap_at(&v->keys, k, 0);
	const ge_bundle_entry *e = key && *key && v->b ?
				   ge_bundle_find(v->b, *key) : NULL;
	ge_xt *val = NULL;
	if (e && dtype && e->dtype != dtype) {
		ge_err(err, GE_EINVAL, "%s: variable '%s' is %s, the "
		       "checkpoint holds %s under '%s'", what, name,
		       ge_dtype_name(dtype), ge_dtype_name(e->dtype),
		       (const char *)*key);
		e = NULL;
		val = NULL;
		ge_buf_free(&b);
		*slot = NULL;
		return NULL;
	}
	if (e && !(val = bundle_tensor(rt, e, what, err))) {
		ge_buf_free(&b);
		return NULL;
	}
	x = ge_xcalloc(1, sizeof *x);
	x->o.refs = 1;
	x->o.kind = GE_XOBJ_VARIABLE;
	x->o.destroy = var_destroy;
	x->name = ge_xstrdup(name);
	x->ref = ref;
	x->value = val;
	*slot = x;
	ge_buf_free(&b);
	return x;
}

/* ---------------------------------------------------------------- refs */

int ge_xvars_takes_ref(const char *type)
{
	return !strncmp(type, "Ref", 3) || !strcmp(type, "Assign") ||
	       !strcmp(type, "AssignAdd") || !strcmp(type, "AssignSub") ||
	       !strcmp(type, "IsVariableInitialized");
}

static struct xvar *var_of(const ge_xt *t)
{
	if (!t || t->dtype != DT_RESOURCE || t->n != 1)
		return NULL;
	ge_xobj *o = ((ge_xobj *const *)t->data)[0];
	return o && o->kind == GE_XOBJ_VARIABLE ? (struct xvar *)o : NULL;
}

int ge_xvars_is_ref(const ge_xt *t)
{
	struct xvar *x = var_of(t);
	return x && x->ref;
}

static ge_xt *var_value(const struct xvar *x, const char *what,
			ge_error *err)
{
	if (!x->value) {
		ge_err(err, GE_EINVAL, "%s: variable '%s' has no value (not "
		       "in the checkpoint, never assigned)", what, x->name);
		return NULL;
	}
	return ge_xt_ref(x->value);
}

ge_xt *ge_xvars_deref(struct ge_xrt *rt, const ge_xt *ref, const char *what,
		      ge_error *err)
{
	(void)rt;
	return var_value(var_of(ref), what, err);
}

/* ---------------------------------------------------------------- kernels */

static int vfail(ge_kctx *k, const char *fmt, ...) GE_PRINTF(2, 3);
static int vfail(ge_kctx *k, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ge_err(k->err, GE_EINVAL, "%s (%s): %s", k->name, k->type, msg);
}

static int attr_dtype(ge_kctx *k)
{
	int t = 0;
	if (ge_op_attr_type(k->g, k->id, "dtype", &t))
		t = 0;
	return t > 100 ? t - 100 : t;
}

/* The variable an op's input i holds (a resource or a reference). */
static struct xvar *in_var(ge_kctx *k, int i)
{
	struct xvar *x = i < k->nin ? var_of(k->in[i]) : NULL;
	if (!x)
		vfail(k, "input %d is not a variable", i);
	return x;
}

static int handle_out(ge_kctx *k, struct xvar *x)
{
	ge_xt *t = ge_xt_scalar(DT_RESOURCE, k->budget, k->name, k->err);
	if (!t)
		return GE_EINVAL;
	((ge_xobj **)t->data)[0] = ge_xobj_ref(&x->o);
	k->out[0] = t;
	return GE_OK;
}

static int k_var_handle(ge_kctx *k)
{
	ge_buf b = GE_BUF_INIT;
	handle_name(k->g, k->id, &b);
	struct xvar *x = var_get(k->rt, 0, (const char *)b.data,
				 attr_dtype(k), k->name, k->err);
	ge_buf_free(&b);
	return x ? handle_out(k, x) : GE_EINVAL;
}

static int k_variable(ge_kctx *k)
{
	struct xvar *x = var_get(k->rt, 1, k->name, attr_dtype(k), k->name,
				 k->err);
	return x ? handle_out(k, x) : GE_EINVAL;
}

static int k_read(ge_kctx *k)
{
	struct xvar *x = in_var(k, 0);
	if (!x)
		return GE_EINVAL;
	int want = attr_dtype(k);
	if (x->value && want && x->value->dtype != want)
		return vfail(k, "reads %s from variable '%s', which holds %s",
			     ge_dtype_name(want), x->name,
			     ge_dtype_name(x->value->dtype));
	k->out[0] = var_value(x, k->name, k->err);
	return k->out[0] ? GE_OK : GE_EINVAL;
}

static int same_shape(const ge_xt *a, const ge_xt *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/* old + sign * d, elementwise. */
static ge_xt *add_values(ge_kctx *k, const ge_xt *old, const ge_xt *d,
			 int sign)
{
	if (old->dtype != d->dtype || !same_shape(old, d)) {
		char a[96], b[96];
		vfail(k, "cannot add %s to %s", ge_xt_describe(d, a, sizeof a),
		      ge_xt_describe(old, b, sizeof b));
		return NULL;
	}
	if (ge_xbudget_work(k->budget, (uint64_t)old->n, k->name, k->err))
		return NULL;
	ge_xt *t = ge_xt_new(old->dtype, old->rank, old->dims, k->budget,
			     k->name, k->err);
	if (!t)
		return NULL;
#define ADD(T) do { \
		const T *x = old->data, *y = d->data; T *z = t->data; \
		for (int64_t i = 0; i < t->n; i++) \
			z[i] = sign > 0 ? (T)(x[i] + y[i]) : (T)(x[i] - y[i]); \
	} while (0)
	switch (old->dtype) {
	case DT_FLOAT: ADD(float); break;
	case DT_DOUBLE: ADD(double); break;
	case DT_INT32: ADD(int32_t); break;
	case DT_INT64: ADD(int64_t); break;
	case DT_INT16: ADD(int16_t); break;
	case DT_INT8: ADD(int8_t); break;
	case DT_UINT8: ADD(uint8_t); break;
	default:
		ge_xt_unref(t);
		vfail(k, "cannot add %s values", ge_dtype_name(old->dtype));
		return NULL;
	}
#undef ADD
	return t;
}

/* Assign, AssignAdd, AssignSub and their resource forms: sign 0 sets. */
static int assign(ge_kctx *k, int sign, int give)
{
	if (k->nin < 2)
		return vfail(k, "needs 2 inputs");
	struct xvar *x = in_var(k, 0);
	if (!x)
		return GE_EINVAL;
	const ge_xt *v = k->in[1];
	ge_xt *nv;
	int want = attr_dtype(k);
	if (!want)
		want = ge_k_attr_type(k, "T", 0);
	if (v->dtype == DT_RESOURCE || (want && v->dtype != want))
		return vfail(k, "assigns %s to a variable of %s",
			     ge_dtype_name(v->dtype) ? ge_dtype_name(v->dtype)
						     : "?",
			     want && ge_dtype_name(want) ? ge_dtype_name(want)
							 : "values");
	if (sign) {
		if (!x->value)
			return vfail(k, "variable '%s' has no value to add to",
				     x->name);
		nv = add_values(k, x->value, v, sign);
		if (!nv)
			return GE_EINVAL;
	} else {
		if (x->value && x->value->dtype != v->dtype)
			return vfail(k, "assigns %s to variable '%s' of %s",
				     ge_dtype_name(v->dtype), x->name,
				     ge_dtype_name(x->value->dtype));
		if (x->ref && x->value && !same_shape(x->value, v) &&
		    ge_k_attr_bool(k, "validate_shape", 1)) {
			char a[96], b[96];
			return vfail(k, "assigns %s to variable '%s' of %s",
				     ge_xt_describe(v, a, sizeof a), x->name,
				     ge_xt_describe(x->value, b, sizeof b));
		}
		nv = ge_xt_ref((ge_xt *)v);
	}
	ge_xt_unref(x->value);
	x->value = nv;
	if (give && k->nout > 0)
		k->out[0] = ge_xt_ref(nv);
	return GE_OK;
}

static int k_assign_var(ge_kctx *k) { return assign(k, 0, 0); }
static int k_assign_add_var(ge_kctx *k) { return assign(k, 1, 0); }
static int k_assign_sub_var(ge_kctx *k) { return assign(k, -1, 0); }
static int k_assign(ge_kctx *k) { return assign(k, 0, 1); }
static int k_assign_add(ge_kctx *k) { return assign(k, 1, 1); }
static int k_assign_sub(ge_kctx *k) { return assign(k, -1, 1); }

static int k_is_init(ge_kctx *k)
{
	struct xvar *x = in_var(k, 0);
	if (!x)
		return GE_EINVAL;
	ge_xt *t = ge_xt_scalar(DT_BOOL, k->budget, k->name, k->err);
	if (!t)
		return GE_EINVAL;
	((uint8_t *)t->data)[0] = x->value != NULL;
	k->out[0] = t;
	return GE_OK;
}

static int k_var_shape(ge_kctx *k)
{
	struct xvar *x = in_var(k, 0);
	if (!x)
		return GE_EINVAL;
	if (!x->value)
		return vfail(k, "variable '%s' has no value", x->name);
	int64_t r = x->value->rank;
	int ot = ge_k_attr_type(k, "out_type", DT_INT32);
	ge_xt *t = ge_xt_new(ot == DT_INT64 ? DT_INT64 : DT_INT32, 1, &r,
			     k->budget, k->name, k->err);
	if (!t)
		return GE_EINVAL;
	for (int i = 0; i < x->value->rank; i++) {
		if (t->dtype == DT_INT64)
			((int64_t *)t->data)[i] = x->value->dims[i];
		else
			((int32_t *)t->data)[i] = (int32_t)x->value->dims[i];
	}
	k->out[0] = t;
	return GE_OK;
}

/* ResourceGather: GatherV2 of the value on axis 0 (batch_dims kept). */
static int k_resource_gather(ge_kctx *k)
{
	struct xvar *x = in_var(k, 0);
	if (!x || k->nin < 2)
		return x ? vfail(k, "needs 2 inputs") : GE_EINVAL;
	const ge_kdef *g = ge_kernel_find("GatherV2");
	if (!g)
		return vfail(k, "no GatherV2 kernel to gather with");
	ge_xt *val = var_value(x, k->name, k->err);
	if (!val)
		return GE_EINVAL;
	ge_xt *axis = ge_xt_scalar(DT_INT32, k->budget, k->name, k->err);
	if (!axis) {
		ge_xt_unref(val);
		return GE_EINVAL;
	}
	ge_xt *in[3] = {val, k->in[1], axis};
	ge_kctx c = *k;
	c.in = in;
	c.nin = 3;
	int rc = g->fn(&c);
	ge_xt_unref(val);
	ge_xt_unref(axis);
	return rc;
}

static int k_nothing(ge_kctx *k)
{
	(void)k;
	return GE_OK;
}

static const ge_kdef var_kernels[] = {
	{"Assign", k_assign, GE_K_STATEFUL},
	{"AssignAdd", k_assign_add, GE_K_STATEFUL},
	{"AssignAddVariableOp", k_assign_add_var, GE_K_STATEFUL},
	{"AssignSub", k_assign_sub, GE_K_STATEFUL},
	{"AssignSubVariableOp", k_assign_sub_var, GE_K_STATEFUL},
	{"AssignVariableOp", k_assign_var, GE_K_STATEFUL},
	{"DestroyResourceOp", k_nothing, GE_K_STATEFUL},
	{"IsVariableInitialized", k_is_init, GE_K_STATEFUL},
	{"ReadVariableOp", k_read, GE_K_STATEFUL | GE_K_FORWARD},
	{"ResourceGather", k_resource_gather, GE_K_STATEFUL},
	{"VarHandleOp", k_var_handle, GE_K_STATEFUL},
	{"VarIsInitializedOp", k_is_init, GE_K_STATEFUL},
	{"Variable", k_variable, GE_K_STATEFUL},
	{"VariableShape", k_var_shape, GE_K_STATEFUL},
	{"VariableV2", k_variable, GE_K_STATEFUL},
};

const ge_kdef *ge_xvars_kernel(const char *type)
{
	for (size_t i = 0; i < sizeof var_kernels / sizeof var_kernels[0]; i++)
		if (!strcmp(var_kernels[i].type, type))
			return &var_kernels[i];
	return NULL;
}
