/* varpolicy.c: see varpolicy.h. */
#include "variables/varpolicy.h"
#include "base/bounds.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "formats/meta.h"
#include "variables/saverconst.h"
#include "graph/sets.h"
#include "editor/transform_impl.h"
#include "editor/subgraph.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* As in variables.c: savers put at most a couple of Identity ops between
 * a variable and what they save or restore. */
#define MAX_HOPS 8

enum { P_NONE = 0, P_SHARE = GE_VARS_SHARE, P_DUP = GE_VARS_DUPLICATE };

/* ------------------------------------------------------------ state */

struct vp;
struct vp_in {
	struct vp *p;
	int hidden;
};

struct vp {
	const ge_transformer *inner;
	ge_graph *g, *g_;
	int same;
	size_t first_new;       /* ops of g_ at or above this id are new */
	ge_varlist vl;
	uint8_t *pol;           /* per variable */
	ge_opset shared;        /* ops share_op keeps */
	int any_shared;         /* whether shared holds any */
	ge_opset keep_ops;      /* ops whose tensors are kept as inputs */
	ge_opset in_view;       /* the user's view */
	ge_opset added;         /* ops added to the view */
	ge_tset ext_in;         /* tensors only the added ops read */
	ge_opset seen;          /* scratch for var_ops, kept empty */
	struct vp_in ext, hid;
	ge_transformer tr;      /* the wrapped transformer */
};

static int is_read_of(const ge_graph *g, ge_opid r, ge_opid var)
{
	const char *t = ge_op_type(g, r);
	return (!strcmp(t, "Identity") || !strcmp(t, "ReadVariableOp")) &&
	       ge_op_num_inputs(g, r) >= 1 && ge_op_input(g, r, 0).op == var;
}

static int starts_with(const char *s, const char *prefix, size_t n)
{
	return !strncmp(s, prefix, n);
}

/* The ops that make up variable v: its op, initializer, read snapshot
 * and the initial value ops under its name scope. */
static void var_ops(struct vp *p, const ge_variable *v, ge_opvec *out)
{
	const ge_graph *g = p->g;
	ge_opvec_push(out, v->op);
	if (v->initializer != GE_NOOP)
		ge_opvec_push(out, v->initializer);
	if (v->snapshot.op != GE_NOOP && is_read_of(g, v->snapshot.op, v->op))
		ge_opvec_push(out, v->snapshot.op);
	if (v->initial_value.op == GE_NOOP)
		return;
	size_t nl = strlen(v->name);
	char *scope = ge_xmalloc(nl + 2);
	memcpy(scope, v->name, nl);
	scope[nl] = '/';
	scope[nl + 1] = 0;
	/* p->seen is shared by all variables: only what this walk marks is
	 * cleared after it, so the cost stays in proportion to the walk */
	ge_opvec stack = GE_VEC_INIT, marked = GE_VEC_INIT;
	ge_opset *seen = &p->seen;
	ge_opvec_push(&stack, v->initial_value.op);
	while (stack.n) {
		ge_opid op = stack.v[--stack.n];
		if (op == GE_NOOP || ge_opset_has(seen, op))
			continue;
		ge_opset_add(seen, op);
		ge_opvec_push(&marked, op);
		if (!starts_with(ge_op_name(g, op), scope, nl + 1) ||
		    ge_varlist_find_op(&p->vl, op))
			continue;
		int is_read = 0;
		size_t ni = ge_op_num_inputs(g, op);
		if (ni >= 1 && ge_varlist_find_op(&p->vl, ge_op_input(g, op, 0).op))
			is_read = is_read_of(g, op, ge_op_input(g, op, 0).op);
		if (is_read)
			continue;
		ge_opvec_push(out, op);
		for (size_t i = 0; i < ni; i++)
			ge_opvec_push(&stack, ge_op_input(g, op, i).op);
		size_t nc = ge_op_num_control_inputs(g, op);
		for (size_t i = 0; i < nc; i++)
			ge_opvec_push(&stack, ge_op_control_input(g, op, i));
	}
	for (size_t i = 0; i < marked.n; i++)
		ge_opset_del(seen, marked.v[i]);
	ge_opvec_free(&marked);
	ge_opvec_free(&stack);
	free(scope);
}

/* The variable op and every op reading it directly. */
static void var_readers(const struct vp *p, const ge_variable *v,
			ge_opvec *out)
{
	ge_opvec_push(out, v->op);
	size_t nu;
	const ge_use *u = ge_op_uses(p->g, v->op, &nu);
	for (size_t i = 0; i < nu; i++)
		if (u[i].slot == 0 && is_read_of(p->g, u[i].op, v->op))
			ge_opvec_push(out, u[i].op);
}

/* ------------------------------------------------------------ handlers */

static int vp_share_op(ge_tinfo *I, ge_opid op, void *ud)
{
	struct vp *p = ud;
	if (ge_opset_has(&p->shared, op))
		return 1;
	if (p->inner->share_op)
		return p->inner->share_op(I, op, p->inner->share_op_ud);
	return 0;
}

static int vp_input(ge_tinfo *I, ge_tref t, ge_tref *t_, void *ud,
		    ge_error *err)
{
	struct vp_in *w = ud;
	struct vp *p = w->p;
	if (p->same && (ge_opset_has(&p->keep_ops, t.op) ||
			ge_tset_has(&p->ext_in, t))) {
		*t_ = t;
		return GE_OK;
	}
	const ge_transformer *tr = p->inner;
	if (w->hidden)
		return tr->transform_external_hidden_input_handler(
			I, t, t_, tr->transform_external_hidden_input_ud, err);
	return tr->transform_external_input_handler(
		I, t, t_, tr->transform_external_input_ud, err);
}

/* ------------------------------------------------------------ helpers */

/* A new op named unique(base) of op's type, device and attrs (all but
 * `_output_shapes`), with no inputs. */
static ge_opid clone_op_named(ge_graph *g, ge_opid op, const char *name);

static ge_opid clone_op(ge_graph *g, ge_opid op, const char *base)
{
	return clone_op_named(g, op, ge_graph_unique_name(g, base));
}

/* The same with a name already made unique. */
static ge_opid clone_op_named(ge_graph *g, ge_opid op, const char *name)
{
	ge_opid c = ge_graph_add_op(g, name, ge_op_type(g, op), NULL);
	if (c == GE_NOOP)
		return c;
	ge_op_set_device(g, c, ge_op_device(g, op));
	size_t na = ge_op_num_attrs(g, op);
	for (size_t i = 0; i < na; i++) {
		const char *an = ge_op_attr_name(g, op, i);
		if (!strcmp(an, "_output_shapes"))
			continue;
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, op, an, &len);
		if (raw) {
			/* the bytes live in op's storage, which the new op's
			 * attrs do not share */
			uint8_t *cp = ge_xmalloc(len ? len : 1);
			memcpy(cp, raw, len);
			ge_op_set_attr_raw(g, c, an, cp, len);
			free(cp);
		}
	}
	return c;
}

/* A new op like op, named as TensorFlow names the next op of its kind:
 * op's name without a `_N` suffix, uniquified ("save/Assign_1" gives
 * "save/Assign_3" when _1 and _2 exist). */
static const char *next_name(ge_graph *g, ge_opid op)
{
	const char *name = ge_op_name(g, op);
	size_t n = strlen(name), k = n;
	while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
		k--;
	char *base = k < n && k > 1 && name[k - 1] == '_' && name[k - 2] != '/'
			     ? ge_xstrndup(name, k - 1)
			     : ge_xstrdup(name);
	const char *u = ge_graph_unique_name(g, base);
	free(base);
	return u;
}

static ge_opid clone_next(ge_graph *g, ge_opid op)
{
	return clone_op_named(g, op, next_name(g, op));
}

/* `loc:@from` in op's `_class` becomes `loc:@to`. */
static void recolocate(ge_graph *g, ge_opid op, const char *from,
		       const char *to)
{
	const Tensorflow__AttrValue *v = ge_op_attr(g, op, "_class", NULL);
	if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !v->list || !v->list->n_s)
		return;
	size_t n = v->list->n_s, fl = strlen(from);
	int changed = 0;
	char **s = ge_xcalloc(n, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		const ProtobufCBinaryData *b = &v->list->s[i];
		if (b->len == fl + 5 && !memcmp(b->data, "loc:@", 5) &&
		    !memcmp(b->data + 5, from, fl)) {
			size_t tl = strlen(to);
			s[i] = ge_xmalloc(tl + 6);
			memcpy(s[i], "loc:@", 5);
			memcpy(s[i] + 5, to, tl + 1);
			changed = 1;
		} else {
			s[i] = b->len ? ge_xstrndup((const char *)b->data,
						    b->len)
				      : ge_xstrdup("");
		}
	}
	if (changed) {
		Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
		Tensorflow__AttrValue__ListValue l =
			TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
		ProtobufCBinaryData *bs = ge_xmalloc(n * sizeof *bs);
		for (size_t i = 0; i < n; i++)
			bs[i] = (ProtobufCBinaryData){strlen(s[i]),
						      (uint8_t *)s[i]};
		l.n_s = n;
		l.s = bs;
		av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
		av.list = &l;
		ge_op_set_attr(g, op, "_class", &av);
		free(bs);
	}
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

/* The counterpart of a name inside a VariableDef ("op" or "op:k"): the
 * copy's name, the name itself within one graph, or "" across graphs. */
static char *map_name(ge_tinfo *I, int same, const char *name)
{
	ge_tref t;
	if (!name || !*name)
		return ge_xstrdup("");
	if (!ge_tinfo_transformed_name(I, name, &t))
		return ge_xstrdup(same ? name : "");
	ge_graph *g_ = ge_tinfo_dst_graph(I);
	ge_buf b = GE_BUF_INIT;
	if (t.index == GE_CONTROL)
		ge_buf_adds(&b, ge_op_name(g_, t.op));
	else
		ge_tensor_put(g_, t, 0, &b);
	size_t len;
	return (char *)ge_buf_steal(&b, &len);
}

/* A name re-scoped like an op name: destination scope + (name minus the
 * source scope), or destination scope + name when it is not under it. */
static char *rescope(ge_tinfo *I, const char *name)
{
	ge_buf b = GE_BUF_INIT;
	size_t len;
	if (ge_tinfo_new_name(I, name, &b, NULL) != GE_OK) {
		b.len = 0;
		ge_buf_adds(&b, ge_tinfo_dst_scope(I));
		ge_buf_adds(&b, name);
	}
	return (char *)ge_buf_steal(&b, &len);
}

/* ------------------------------------------------------------ after */

struct dup {
	const ge_variable *v;
	ge_opid op_;          /* the duplicate variable op */
	char *key_;           /* its checkpoint key */
	int saved;            /* a saver copied with it names it */
};

static int add_vardefs(struct vp *p, ge_tinfo *I, struct dup *d, size_t nd,
		       ge_error *err)
{
	ge_graph *g = p->g, *g_ = p->g_;
	if (!ge_graph_has_meta(g))
		return GE_OK;
	size_t nc = ge_collection_count(g);
	char **names = ge_xcalloc(nc + 1, sizeof *names);
	for (size_t i = 0; i < nc; i++) {
		const char *n = ge_collection_name(g, i);
		names[i] = ge_xstrdup(n ? n : "");
	}
	int rc = GE_OK;
	for (size_t c = 0; c < nc && !rc; c++) {
		if (!ge_collection_holds_variables(names[c]))
			continue;
		Tensorflow__CollectionDef *cd = ge_collection_get(g, names[c]);
		if (!cd || cd->kind_case !=
				   TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
			continue;
		size_t n0 = cd->bytes_list->n_value;
		for (size_t i = 0; i < n0 && !rc; i++) {
			/* g_ may be g: adding to the collection moves it */
			cd = ge_collection_get(g, names[c]);
			Tensorflow__VariableDef *vd =
				(Tensorflow__VariableDef *)ge_pb_unpack(
		&tensorflow__variable_def__descriptor, cd->bytes_list->value[i].len,
					cd->bytes_list->value[i].data);
			if (!vd)
				continue;
			ge_tref t;
			struct dup *x = NULL;
			if (ge_graph_find_tensor(g, vd->variable_name, &t) ==
			    GE_OK)
				for (size_t k = 0; k < nd && !x; k++)
					if (d[k].v->op == t.op)
						x = &d[k];
			if (!x) {
				tensorflow__variable_def__free_unpacked(vd, NULL);
				continue;
			}
			char *s[5];
			s[0] = map_name(I, p->same, vd->variable_name);
			s[1] = map_name(I, p->same, vd->initializer_name);
			s[2] = map_name(I, p->same, vd->snapshot_name);
			s[3] = map_name(I, p->same, vd->initial_value_name);
			s[4] = NULL;
			char *old[5] = {vd->variable_name, vd->initializer_name,
					vd->snapshot_name, vd->initial_value_name,
					NULL};
			vd->variable_name = s[0];
			vd->initializer_name = s[1];
			vd->snapshot_name = s[2];
			vd->initial_value_name = s[3];
			char *oldfull = NULL;
			if (vd->save_slice_info_def &&
			    vd->save_slice_info_def->full_name &&
			    *vd->save_slice_info_def->full_name) {
				oldfull = vd->save_slice_info_def->full_name;
				s[4] = rescope(I, oldfull);
				vd->save_slice_info_def->full_name = s[4];
			}
			size_t len = tensorflow__variable_def__get_packed_size(vd);
			uint8_t *buf = ge_xmalloc(len ? len : 1);
			tensorflow__variable_def__pack(vd, buf);
			/* give the unpacked message its own strings back */
			vd->variable_name = old[0];
			vd->initializer_name = old[1];
			vd->snapshot_name = old[2];
			vd->initial_value_name = old[3];
			if (oldfull)
				vd->save_slice_info_def->full_name = oldfull;
			tensorflow__variable_def__free_unpacked(vd, NULL);
			for (int k = 0; k < 5; k++)
				free(s[k]);
			rc = ge_collection_add_bytes(g_, names[c], buf, len, err);
			free(buf);
		}
	}
	for (size_t i = 0; i < nc; i++)
		free(names[i]);
	free(names);
	return rc;
}

static void add_control(ge_graph *g, ge_opid to, ge_opid c)
{
	size_t n = ge_op_num_control_inputs(g, to);
	for (size_t i = 0; i < n; i++)
		if (ge_op_control_input(g, to, i) == c)
			return;
	ge_op_add_control_input(g, to, c, NULL);
}

/* The destination's init ops by name or collection, for initializers that
 * no op groups. */
static void init_ops(struct vp *p, ge_opvec *out)
{
	static const char *const colls[] = {"init_op", "saved_model_main_op",
					    "legacy_init_op"};
	ge_opid i = ge_graph_find(p->g_, "init");
	if (i != GE_NOOP && i < p->first_new) {
		ge_opvec_push(out, i);
		return;
	}
	for (size_t c = 0; c < 3; c++) {
		Tensorflow__CollectionDef *cd = ge_collection_get(p->g_, colls[c]);
		if (!cd || cd->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
			continue;
		for (size_t k = 0; k < cd->node_list->n_value; k++) {
			ge_tref t;
			if (ge_graph_find_tensor(p->g_, cd->node_list->value[k],
						 &t) == GE_OK &&
			    t.op < p->first_new)
				ge_opvec_push(out, t.op);
		}
		if (out->n)
			return;
	}
}

static void join_init(struct vp *p, ge_tinfo *I, struct dup *d, size_t nd)
{
	ge_opvec fallback = GE_VEC_INIT;
	int have_fallback = 0;
	for (size_t k = 0; k < nd; k++) {
		const ge_variable *v = d[k].v;
		if (v->initializer == GE_NOOP)
			continue;
		ge_opid i_ = ge_tinfo_transformed_op(I, v->initializer);
		if (i_ == GE_NOOP || i_ == v->initializer)
			continue;
		size_t added = 0;
		if (p->same) {
			size_t n;
			const ge_opid *co =
				ge_op_control_outputs(p->g, v->initializer, &n);
			ge_opvec grp = GE_VEC_INIT;
			for (size_t j = 0; j < n; j++)
				if (co[j] < p->first_new &&
				    ge_op_alive(p->g, co[j]))
					ge_opvec_push(&grp, co[j]);
			for (size_t j = 0; j < grp.n; j++)
				add_control(p->g, grp.v[j], i_);
			added = grp.n;
			ge_opvec_free(&grp);
		}
		if (added)
			continue;
		if (!have_fallback) {
			init_ops(p, &fallback);
			have_fallback = 1;
		}
		for (size_t j = 0; j < fallback.n; j++)
			add_control(p->g_, fallback.v[j], i_);
	}
	ge_opvec_free(&fallback);
}

/* The tensor a saver op reads for variable v, made for the duplicate. */
static ge_tref dup_tensor(struct vp *p, ge_tinfo *I, const struct dup *x,
			  ge_tref t)
{
	ge_tref t_;
	if (t.op == x->v->op)
		return (ge_tref){x->op_, t.index};
	if (ge_tinfo_transformed_t(I, t, &t_) && t_.op != t.op)
		return t_;
	if (x->v->kind == GE_VAR_RESOURCE) {
		/* a read of its own, like the saver's */
		ge_opid r = clone_op(p->g, t.op, ge_op_name(p->g, t.op));
		if (r != GE_NOOP) {
			ge_op_clear_control_inputs(p->g, r);
			ge_op_add_input(p->g, r, (ge_tref){x->op_, 0}, NULL);
			recolocate(p->g, r, x->v->name, ge_op_name(p->g, x->op_));
			return (ge_tref){r, 0};
		}
	}
	return (ge_tref){x->op_, 0};
}

/* A string Const read by op at input slot, made private to op first if
 * other ops read it too. */
static ge_opid own_const(ge_graph *g, ge_opid op, size_t slot)
{
	ge_opid c = ge_op_input(g, op, slot).op;
	size_t nu;
	ge_op_uses(g, c, &nu);
	if (nu <= 1)
		return c;
	ge_opid n = clone_op(g, c, ge_op_name(g, c));
	if (n != GE_NOOP)
		ge_op_set_input(g, op, slot, (ge_tref){n, 0}, NULL);
	return n;
}

static char **append_str(char **s, size_t n, const char *x)
{
	s = ge_xrealloc(s, (n + 2) * sizeof *s);
	s[n] = ge_xstrdup(x);
	s[n + 1] = NULL;
	return s;
}

static int *append_int(int *a, size_t n, int x)
{
	a = ge_xrealloc(a, (n + 1) * sizeof *a);
	a[n] = x;
	return a;
}

static ge_opid var_behind(const struct vp *p, ge_tref t)
{
	for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
		if (ge_varlist_find_op(&p->vl, t.op))
			return t.op;
		const char *type = ge_op_type(p->g, t.op);
		if ((strcmp(type, "Identity") && strcmp(type, "ReadVariableOp")) ||
		    ge_op_num_inputs(p->g, t.op) < 1)
			break;
		t = ge_op_input(p->g, t.op, 0);
	}
	return GE_NOOP;
}

static struct dup *dup_of(struct dup *d, size_t nd, ge_opid var)
{
	for (size_t k = 0; k < nd; k++)
		if (d[k].v->op == var)
			return &d[k];
	return NULL;
}

/* The rule for a duplicated variable's checkpoint key: key_, for every
 * saver that saves it.  A SaveV2 / RestoreV2 copied by the transform
 * (ops of g_ from first_new on) saves and restores the copies, so its
 * tensor_names elements holding a duplicated variable's source key hold
 * the duplicate's key instead, and that duplicate is saved by the copy
 * alone (the source's saver is not extended for it). */
static void rekey_copied_savers(struct vp *p, struct dup *d, size_t nd)
{
	if (!nd) /* no key to replace: the copied savers stay as copied */
		return;
	ge_graph *g = p->g_;
	size_t n_ops = ge_graph_capacity(g);
	ge_opset done;
	ge_opset_init(&done, g);
	for (size_t id = p->first_new; id < n_ops; id++) {
		ge_opid s = (ge_opid)id;
		if (!ge_op_alive(g, s) || (strcmp(ge_op_type(g, s), "SaveV2") &&
					   strcmp(ge_op_type(g, s), "RestoreV2")) ||
		    ge_op_num_inputs(g, s) < 3)
			continue;
		ge_opid c = ge_op_input(g, s, 1).op;
		if (c == GE_NOOP || ge_opset_has(&done, c))
			continue;
		size_t nn = 0;
		char **names = ge_const_strings(g, c, &nn);
		if (!names)
			continue;
		int changed = 0;
		for (size_t i = 0; i < nn; i++)
			for (size_t k = 0; k < nd; k++) {
				if (strcmp(names[i], d[k].v->key))
					continue;
				free(names[i]);
				names[i] = ge_xstrdup(d[k].key_);
				d[k].saved = changed = 1;
				break;
			}
		if (changed) {
			if ((size_t)c < p->first_new)
				c = own_const(g, s, 1);
			if (c != GE_NOOP)
				ge_const_set_strings(g, c, names, nn);
		}
		if (c != GE_NOOP)
			ge_opset_add(&done, c);
		ge_strings_free(names, nn);
	}
	ge_opset_free(&done);
}

/* Savers save the duplicates too. */
static void extend_savers(struct vp *p, ge_tinfo *I, struct dup *d, size_t nd)
{
	ge_graph *g = p->g;
	if (!nd)
		return; /* no duplicate to save: no need to look for savers */
	for (size_t id = 0; id < p->first_new; id++) {
		if (!ge_op_alive(g, (ge_opid)id) ||
		    strcmp(ge_op_type(g, (ge_opid)id), "SaveV2"))
			continue;
		ge_opid s = (ge_opid)id;
		size_t ni = ge_op_num_inputs(g, s), nn, ns, nt = 0;
		if (ni < 3)
			continue;
		char **names = ge_const_strings(g, ge_op_input(g, s, 1).op, &nn);
		char **slices = ge_const_strings(g, ge_op_input(g, s, 2).op, &ns);
		int *types = ge_attr_types(g, s, "dtypes", &nt);
		if (!names || !slices || !types || nn != ni - 3 ||
		    ns != ni - 3 || nt != ni - 3) {
			ge_strings_free(names, names ? nn : 0);
			ge_strings_free(slices, slices ? ns : 0);
			free(types);
			continue;
		}
		size_t n0 = nn;
		ge_tvec add = GE_VEC_INIT;
		for (size_t k = 3; k < ni; k++) {
			ge_tref t = ge_op_input(g, s, k);
			struct dup *x = dup_of(d, nd, var_behind(p, t));
			if (!x || x->saved)
				continue;
			ge_tvec_push(&add, dup_tensor(p, I, x, t));
			names = append_str(names, nn++, x->key_);
			slices = append_str(slices, ns++, slices[k - 3]);
			types = append_int(types, nt++, types[k - 3]);
		}
		if (nn > n0) {
			for (size_t k = 0; k < add.n; k++)
				ge_op_add_input(g, s, add.v[k], NULL);
			ge_opid cn = own_const(g, s, 1), cs = own_const(g, s, 2);
			if (cn != GE_NOOP)
				ge_const_set_strings(g, cn, names, nn);
			if (cs != GE_NOOP)
				ge_const_set_strings(g, cs, slices, ns);
			ge_attr_set_types(g, s, "dtypes", types, nt);
			ge_op_remove_attr(g, s, "_output_shapes");
		}
		ge_tvec_free(&add);
		ge_strings_free(names, nn);
		ge_strings_free(slices, ns);
		free(types);
	}
}

/* How variable v is restored: the assign op, the RestoreV2 output it
 * reads and the Identity ops in between (from the restore op on). */
struct restore {
	struct dup *x;
	ge_opid assign;
	ge_tref src;        /* RestoreV2 output */
	ge_opvec chain;     /* Identity ops, restore side first */
};

static int find_restore(struct vp *p, struct dup *x, struct restore *r)
{
	ge_graph *g = p->g;
	const ge_variable *v = x->v;
	const char *at = v->kind == GE_VAR_RESOURCE ? "AssignVariableOp"
						    : "Assign";
	size_t nu;
	const ge_use *u = ge_op_uses(g, v->op, &nu);
	for (size_t i = 0; i < nu; i++) {
		ge_opid c = u[i].op;
		if (u[i].slot || strcmp(ge_op_type(g, c), at) ||
		    ge_op_num_inputs(g, c) < 2 || c >= p->first_new)
			continue;
		ge_tref t = ge_op_input(g, c, 1);
		ge_opvec chain = GE_VEC_INIT;
		for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
			const char *ty = ge_op_type(g, t.op);
			if (!strcmp(ty, "RestoreV2")) {
				r->x = x;
				r->assign = c;
				r->src = t;
				/* restore side first */
				for (size_t a = 0, b = chain.n; a < b / 2; a++) {
					ge_opid tmp = chain.v[a];
					chain.v[a] = chain.v[b - 1 - a];
					chain.v[b - 1 - a] = tmp;
				}
				r->chain = chain;
				return 1;
			}
			if (strcmp(ty, "Identity") || ge_op_num_inputs(g, t.op) < 1)
				break;
			ge_opvec_push(&chain, t.op);
			t = ge_op_input(g, t.op, 0);
		}
		ge_opvec_free(&chain);
	}
	return 0;
}

/* The Identity chain and assign of a restored duplicate, reading t. */
static void restore_dup(struct vp *p, struct restore *r, ge_tref t)
{
	ge_graph *g = p->g;
	for (size_t i = 0; i < r->chain.n; i++) {
		ge_opid o = r->chain.v[i];
		ge_opid c = clone_next(g, o);
		if (c == GE_NOOP)
			return;
		ge_op_add_input(g, c, t, NULL);
		recolocate(g, c, r->x->v->name, ge_op_name(g, r->x->op_));
		t = (ge_tref){c, 0};
	}
	ge_opid a = clone_next(g, r->assign);
	if (a == GE_NOOP)
		return;
	ge_tref t0 = ge_op_input(g, r->assign, 0);
	ge_op_add_input(g, a, (ge_tref){r->x->op_, t0.index}, NULL);
	ge_op_add_input(g, a, t, NULL);
	recolocate(g, a, r->x->v->name, ge_op_name(g, r->x->op_));
	size_t n;
	const ge_opid *co = ge_op_control_outputs(g, r->assign, &n);
	ge_opvec grp = GE_VEC_INIT;
	for (size_t i = 0; i < n; i++)
		if (co[i] < p->first_new)
			ge_opvec_push(&grp, co[i]);
	for (size_t i = 0; i < grp.n; i++)
		add_control(g, grp.v[i], a);
	ge_opvec_free(&grp);
}

static int cmp_restore(const void *a, const void *b)
{
	const struct restore *x = a, *y = b;
	if (x->src.op != y->src.op)
		return x->src.op < y->src.op ? -1 : 1;
	return (x->src.index > y->src.index) - (x->src.index < y->src.index);
}

static void extend_restores(struct vp *p, struct dup *d, size_t nd)
{
	ge_graph *g = p->g;
	struct restore *rs = ge_xcalloc(nd + 1, sizeof *rs);
	size_t nr = 0;
	for (size_t k = 0; k < nd; k++)
		if (!d[k].saved && find_restore(p, &d[k], &rs[nr]))
			nr++;
	/* in the order the restore op lists the originals, which is the
	 * order the save op lists them too */
	if (nr)
		qsort(rs, nr, sizeof *rs, cmp_restore);
	int *done = ge_xcalloc(nr + 1, sizeof *done);
	for (size_t i = 0; i < nr; i++) {
		if (done[i])
			continue;
		ge_opid R = rs[i].src.op;
		size_t nn, ns, nt = 0;
		char **names = ge_const_strings(g, ge_op_input(g, R, 1).op, &nn);
		char **slices = ge_const_strings(g, ge_op_input(g, R, 2).op, &ns);
		int *types = ge_attr_types(g, R, "dtypes", &nt);
		if (!names || !slices || !types || nn != ns || nn != nt ||
		    ge_op_num_inputs(g, R) < 3) {
			ge_strings_free(names, names ? nn : 0);
			ge_strings_free(slices, slices ? ns : 0);
			free(types);
			for (size_t j = i; j < nr; j++)
				if (rs[j].src.op == R)
					done[j] = 1;
			continue;
		}
		if (nn == 1) {
			/* one restore op per variable: each duplicate gets its
			 * own, like TensorFlow's per-variable savers */
			for (size_t j = i; j < nr; j++) {
				if (done[j] || rs[j].src.op != R)
					continue;
				done[j] = 1;
				ge_opid N = ge_op_input(g, R, 1).op,
					S = ge_op_input(g, R, 2).op;
				/* consts first, under the new op's name, as
				 * TensorFlow orders them */
				char *rn = ge_xstrdup(next_name(g, R));
				ge_buf nb = GE_BUF_INIT;
				ge_buf_printf(&nb, "%s/tensor_names", rn);
				ge_opid N2 = clone_op(g, N, (char *)nb.data);
				nb.len = 0;
				ge_buf_printf(&nb, "%s/shape_and_slices", rn);
				ge_opid S2 = clone_op(g, S, (char *)nb.data);
				ge_buf_free(&nb);
				ge_opid R2 = clone_op_named(g, R, rn);
				free(rn);
				if (N2 == GE_NOOP || S2 == GE_NOOP ||
				    R2 == GE_NOOP)
					continue;
				char *k1[1] = {rs[j].x->key_};
				ge_const_set_strings(g, N2, k1, 1);
				ge_const_set_strings(g, S2, slices, 1);
				ge_op_add_input(g, R2, ge_op_input(g, R, 0), NULL);
				ge_op_add_input(g, R2, (ge_tref){N2, 0}, NULL);
				ge_op_add_input(g, R2, (ge_tref){S2, 0}, NULL);
				size_t nc = ge_op_num_control_inputs(g, R);
				for (size_t c = 0; c < nc; c++)
					add_control(g, R2,
						    ge_op_control_input(g, R, c));
				restore_dup(p, &rs[j], (ge_tref){R2, 0});
			}
		} else {
			/* one restore op for all: it restores the duplicates
			 * too, on new outputs */
			size_t n0 = nn;
			ge_tvec outs = GE_VEC_INIT;
			for (size_t j = i; j < nr; j++) {
				if (done[j] || rs[j].src.op != R)
					continue;
				done[j] = 1;
				int at = rs[j].src.index;
				names = append_str(names, nn++, rs[j].x->key_);
				slices = append_str(slices, ns++,
						    (size_t)at < n0 ? slices[at] : "");
				types = append_int(types, nt++,
						   (size_t)at < n0 ? types[at] : 0);
				ge_tvec_push(&outs, (ge_tref){(ge_opid)j, (int32_t)(nn - 1)});
			}
			ge_opid cn = own_const(g, R, 1), cs = own_const(g, R, 2);
			if (cn != GE_NOOP)
				ge_const_set_strings(g, cn, names, nn);
			if (cs != GE_NOOP)
				ge_const_set_strings(g, cs, slices, ns);
			ge_attr_set_types(g, R, "dtypes", types, nt);
			ge_op_remove_attr(g, R, "_output_shapes");
			for (size_t k = 0; k < outs.n; k++)
				restore_dup(p, &rs[outs.v[k].op],
					    (ge_tref){R, outs.v[k].index});
			ge_tvec_free(&outs);
		}
		ge_strings_free(names, nn);
		ge_strings_free(slices, ns);
		free(types);
	}
	for (size_t i = 0; i < nr; i++)
		ge_opvec_free(&rs[i].chain);
	free(rs);
	free(done);
}

/* ------------------------------------------------------------ transform */

static void vp_free(struct vp *p)
{
	ge_varlist_free(&p->vl);
	free(p->pol);
	ge_opset_free(&p->shared);
	ge_opset_free(&p->keep_ops);
	ge_opset_free(&p->in_view);
	ge_opset_free(&p->added);
	ge_tset_free(&p->ext_in);
	ge_opset_free(&p->seen);
}

static void map_ts(ge_tinfo *I, const ge_tvec *from, ge_tvec *to)
{
	to->n = 0;
	for (size_t i = 0; i < from->n; i++) {
		ge_tref t_;
		if (!ge_tinfo_transformed_t(I, from->v[i], &t_))
			t_ = from->v[i];
		ge_tvec_push(to, t_);
	}
}

static void rollback(ge_graph *g, size_t first_new)
{
	for (size_t id = ge_graph_capacity(g); id-- > first_new;)
		if (ge_op_alive(g, (ge_opid)id))
			ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
}

/* The state of a variables-aware transform: the view's graph and the
 * destination, the sets, the variables of the graph. */
static int vp_setup(struct vp *p, const ge_transformer *tr, ge_view *sgv,
		    const ge_transform_opts *o, ge_error *err)
{
	memset(p, 0, sizeof *p);
	p->inner = tr;
	p->g = sgv->graph;
	p->g_ = o && o->dst_graph ? o->dst_graph : p->g;
	p->same = p->g == p->g_;
	p->first_new = ge_graph_capacity(p->g_);
	ge_opset_init(&p->shared, p->g);
	ge_opset_init(&p->keep_ops, p->g);
	ge_opset_init(&p->in_view, p->g);
	ge_opset_init(&p->added, p->g);
	/* sized for the graph where variables make it fill (it grows) */
	ge_tset_init(&p->ext_in, NULL);
	ge_opset_init(&p->seen, p->g);
	int rc = ge_graph_variables(p->g, &p->vl, err);
	if (rc)
		return rc;
	p->pol = ge_xcalloc(p->vl.n + 1, 1);
	/* only the variables' policies ask */
	if (p->vl.n) {
		ge_opset_add_list(&p->in_view, sgv->ops.v, sgv->ops.n);
		ge_tset_free(&p->ext_in);
		ge_tset_init(&p->ext_in, p->g);
	}
	return GE_OK;
}

/* The tensors the view reads from outside. */
static void outside_reads(struct vp *p, const ge_view *sgv, ge_tset *outside)
{
	ge_tset_init(outside, p->vl.n ? p->g : NULL);
	/* only the variables' policies ask */
	for (size_t i = 0; i < sgv->ops.n && p->vl.n; i++) {
		ge_opid op = sgv->ops.v[i];
		size_t ni = ge_op_num_inputs(p->g, op);
		for (size_t k = 0; k < ni; k++) {
			ge_tref t = ge_op_input(p->g, op, k);
			if (t.op != GE_NOOP && !ge_opset_has(&p->in_view, t.op))
				ge_tset_insert(outside, t);
		}
	}
}

/* The policy of variable i, the view meeting it (met) or reading it from
 * outside; P_NONE when it is left alone, -1 after an error. */
static int var_policy(struct vp *p, const ge_var_opts *vo, size_t i,
		      ge_error *err)
{
	const ge_variable *v = &p->vl.v[i];
	int pol = vo->decide ? vo->decide(p->g, v, vo->decide_ud) : vo->policy;
	if (pol < 0) {
		ge_err(err, GE_EINVAL, "variables policy failed on '%s'",
		       v->name);
		return -1;
	}
	if (pol == GE_VARS_AUTO)
		return ge_opset_has(&p->in_view, v->op) ? P_DUP : P_NONE;
	if (pol != GE_VARS_SHARE && pol != GE_VARS_DUPLICATE) {
		ge_err(err, GE_EINVAL,
		       "variables policy for '%s': %d is neither share nor "
		       "duplicate", v->name, pol);
		return -1;
	}
	if (pol == P_SHARE && !p->same) {
		ge_err(err, GE_EINVAL,
		       "variable '%s' cannot be shared with another graph "
		       "(duplicate it)", v->name);
		return -1;
	}
	return pol;
}

/* Decides each variable the view meets, and gathers what to share (in
 * p's sets) or to add to the view (added). */
static int decide_vars(struct vp *p, const ge_var_opts *vo,
		       const ge_tset *outside, ge_opvec *added, ge_error *err)
{
	int rc = GE_OK;
	ge_opvec ops = GE_VEC_INIT, rd = GE_VEC_INIT;
	for (size_t i = 0; i < p->vl.n && !rc; i++) {
		const ge_variable *v = &p->vl.v[i];
		ops.n = rd.n = 0;
		var_ops(p, v, &ops);
		var_readers(p, v, &rd);
		int met = 0, read_outside = 0;
		for (size_t k = 0; k < ops.n && !met; k++)
			met = ge_opset_has(&p->in_view, ops.v[k]);
		for (size_t k = 0; k < rd.n; k++) {
			int no = ge_op_num_outputs(p->g, rd.v[k]);
			for (int j = 0; j < no; j++)
				if (ge_tset_has(outside, (ge_tref){rd.v[k], j}))
					read_outside = 1;
		}
		if (!met && !read_outside)
			continue;
		int pol = var_policy(p, vo, i, err);
		if (pol < 0) {
			rc = GE_EINVAL;
			break;
		}
		p->pol[i] = (uint8_t)pol;
		if (pol == P_SHARE) {
			ge_opset_add_list(&p->shared, ops.v, ops.n);
			p->any_shared |= ops.n > 0;
			ge_opset_add_list(&p->keep_ops, ops.v, ops.n);
			ge_opset_add_list(&p->keep_ops, rd.v, rd.n);
		} else if (pol == P_DUP) {
			for (size_t k = 0; k < ops.n; k++)
				if (!ge_opset_has(&p->in_view, ops.v[k]) &&
				    ge_opset_insert(&p->added, ops.v[k]))
					ge_opvec_push(added, ops.v[k]);
			/* reads of it that the view uses from outside */
			for (size_t k = 0; k < rd.n; k++) {
				int no = ge_op_num_outputs(p->g, rd.v[k]);
				for (int j = 0; j < no; j++)
					if (ge_tset_has(outside,
							(ge_tref){rd.v[k], j}) &&
					    !ge_opset_has(&p->in_view, rd.v[k]) &&
					    ge_opset_insert(&p->added, rd.v[k]))
						ge_opvec_push(added, rd.v[k]);
			}
		}
	}
	ge_opvec_free(&ops);
	ge_opvec_free(&rd);
	return rc;
}

/* The view to copy: the user's, with the duplicated variables (ext), and
 * in p->ext_in what only the added ops read from outside. */
static int extend_view(struct vp *p, const ge_view *sgv,
		       const ge_tset *outside, const ge_opvec *added,
		       ge_view *ext, ge_error *err)
{
	ge_opvec all = GE_VEC_INIT;
	for (size_t i = 0; i < sgv->ops.n; i++)
		ge_opvec_push(&all, sgv->ops.v[i]);
	for (size_t i = 0; i < added->n; i++)
		ge_opvec_push(&all, added->v[i]);
	int rc = ge_view_init(ext, p->g, all.v, all.n, NULL, 0, err);
	ge_opvec_free(&all);
	if (rc)
		return rc;
	/* the user's inputs stay external (minus those now inside), outputs
	 * and passthroughs are the user's */
	ext->inputs.n = 0;
	for (size_t i = 0; i < sgv->inputs.n; i++)
		if (!ge_opset_has(&p->added, sgv->inputs.v[i].op))
			ge_tvec_push(&ext->inputs, sgv->inputs.v[i]);
	ext->outputs.n = 0;
	for (size_t i = 0; i < sgv->outputs.n; i++)
		ge_tvec_push(&ext->outputs, sgv->outputs.v[i]);
	ext->passthroughs.n = 0;
	for (size_t i = 0; i < sgv->passthroughs.n; i++)
		ge_tvec_push(&ext->passthroughs, sgv->passthroughs.v[i]);
	for (size_t i = 0; i < added->n; i++) {
		ge_opid op = added->v[i];
		size_t ni = ge_op_num_inputs(p->g, op);
		for (size_t k = 0; k < ni; k++) {
			ge_tref t = ge_op_input(p->g, op, k);
			if (t.op != GE_NOOP && !ge_opset_has(&p->added, t.op) &&
			    !ge_opset_has(&p->in_view, t.op) &&
			    !ge_tset_has(outside, t))
				ge_tset_insert(&p->ext_in, t);
		}
	}
	return GE_OK;
}

/* The user's transformer, with the sharing and input handlers of p. */
static void wrap_transformer(struct vp *p, const ge_transformer *tr)
{
	p->tr = *tr;
	/* nothing shared: vp_share_op would ask the user's share_op alone */
	if (p->any_shared) {
		p->tr.share_op = vp_share_op;
		p->tr.share_op_ud = p;
	}
	p->ext.p = p;
	p->ext.hidden = 0;
	p->hid.p = p;
	p->hid.hidden = 1;
	p->tr.transform_external_input_handler = vp_input;
	p->tr.transform_external_input_ud = &p->ext;
	p->tr.transform_external_hidden_input_handler = vp_input;
	p->tr.transform_external_hidden_input_ud = &p->hid;
}

/* What follows the duplicates: their VariableDefs, the joined
 * initializers, savers and restores, and the checkpoint keys. */
static int follow_dups(struct vp *p, ge_tinfo *I, ge_ckpt_plan *plan,
		       ge_error *err)
{
	struct dup *d = ge_xcalloc(p->vl.n + 1, sizeof *d);
	size_t nd = 0;
	for (size_t i = 0; i < p->vl.n; i++) {
		if (p->pol[i] != P_DUP)
			continue;
		const ge_variable *v = &p->vl.v[i];
		ge_opid op_ = ge_tinfo_transformed_op(I, v->op);
		if (op_ == GE_NOOP || (p->same && op_ == v->op))
			continue;
		d[nd].v = v;
		d[nd].op_ = op_;
		if (!strcmp(v->key, v->name))
			d[nd].key_ = ge_xstrdup(ge_op_name(p->g_, op_));
		else
			d[nd].key_ = rescope(I, v->key);
		nd++;
	}
	int rc = add_vardefs(p, I, d, nd, err);
	if (!rc) {
		join_init(p, I, d, nd);
		rekey_copied_savers(p, d, nd);
		if (p->same) {
			extend_savers(p, I, d, nd);
			extend_restores(p, d, nd);
		}
		for (size_t k = 0; k < nd; k++) {
			/* from another graph: its checkpoint, through its plan */
			if (p->same)
				ge_graph_add_checkpoint_copy(p->g_, d[k].v->key,
							     d[k].key_);
			else
				ge_graph_checkpoint_copy_from(p->g_, p->g,
							      d[k].v->key,
							      d[k].key_);
			if (plan)
				ge_ckpt_plan_add(plan, d[k].v->key, d[k].key_);
		}
	}
	for (size_t k = 0; k < nd; k++)
		free(d[k].key_);
	free(d);
	return rc;
}

int ge_transform_vars(const ge_transformer *tr, ge_view *sgv,
		      const ge_transform_opts *o, const ge_var_opts *vo,
		      ge_view *out, ge_tinfo **info, ge_ckpt_plan *plan,
		      ge_error *err)
{
	static const ge_var_opts auto_opts = {GE_VARS_AUTO, NULL, NULL};
	if (!vo)
		vo = &auto_opts;
	if (info)
		*info = NULL;
	if (ge_view_is_empty(sgv))
		return ge_transform(tr, sgv, o, out, info, err);
	if (!tr || !tr->transform_external_input_handler ||
	    !tr->transform_external_hidden_input_handler)
		return ge_err(err, GE_EINVAL, "the transformer lacks a handler");
	int rc = ge_view_check(sgv, err);
	if (rc)
		return rc;
	struct vp P;
	struct vp *p = &P;
	if ((rc = vp_setup(p, tr, sgv, o, err))) {
		vp_free(p);
		return rc;
	}
	ge_tset outside;
	ge_opvec added = GE_VEC_INIT;
	ge_view ext = GE_VIEW_INIT;
	ge_view *use = sgv;
	outside_reads(p, sgv, &outside);
	rc = decide_vars(p, vo, &outside, &added, err);
	if (!rc && added.n && !(rc = extend_view(p, sgv, &outside, &added,
						 &ext, err)))
		use = &ext;
	ge_tset_free(&outside);
	ge_opvec_free(&added);
	if (rc) {
		ge_view_free(&ext);
		vp_free(p);
		return rc;
	}

	wrap_transformer(p, tr);
	ge_tinfo *I = NULL;
	rc = ge_transform(&p->tr, use, o, out, &I, err);
	if (!rc && out && use != sgv) {
		/* the counterparts of the user's view, in its order */
		map_ts(I, &sgv->inputs, &out->inputs);
		map_ts(I, &sgv->outputs, &out->outputs);
		map_ts(I, &sgv->passthroughs, &out->passthroughs);
	}
	ge_view_free(&ext);
	if (!rc)
		rc = follow_dups(p, I, plan, err);
	if (rc) {
		if (I)
			ge_tinfo_free(I);
		I = NULL;
		if (out)
			ge_view_free(out);
		rollback(p->g_, p->first_new);
	}
	if (info)
		*info = I;
	else if (I)
		ge_tinfo_free(I);
	vp_free(p);
	return rc;
}

int ge_copy_vars(ge_view *sgv, const ge_transform_opts *o,
		 const ge_var_opts *vo, ge_view *out, ge_tinfo **info,
		 ge_ckpt_plan *plan, ge_error *err)
{
	ge_transformer tr;
	ge_transformer_init(&tr);
	return ge_transform_vars(&tr, sgv, o, vo, out, info, plan, err);
}

int ge_copy_with_input_replacements_vars(ge_view *sgv, const ge_tpair *repl,
					 size_t n_repl,
					 const ge_transform_opts *o,
					 const ge_var_opts *vo, ge_view *out,
					 ge_tinfo **info, ge_ckpt_plan *plan,
					 ge_error *err)
{
	struct ge_repl_handler r;
	ge_transformer tr;
	ge_transformer_init(&tr);
	int rc = ge_repl_handler_init(&r, &tr, sgv, repl, n_repl, o, err);
	if (!rc)
		rc = ge_transform_vars(&tr, sgv, o, vo, out, info, plan, err);
	ge_repl_handler_free(&r);
	return rc;
}

/* ------------------------------------------------------------ editing */

static int find_var(ge_graph *g, const char *name, ge_varlist *vl,
		    const ge_variable **v, ge_error *err)
{
	int rc = ge_graph_variables(g, vl, err);
	if (rc)
		return rc;
	*v = name ? ge_varlist_find(vl, g, name) : NULL;
	if (!*v) {
		ge_varlist_free(vl);
		return ge_err(err, GE_ENOTFOUND, "%s: no variable '%s'",
			      ge_graph_name(g), name ? name : "(null)");
	}
	return GE_OK;
}

static int is_saver_type(const char *t)
{
	return !strcmp(t, "SaveV2") || !strcmp(t, "RestoreV2");
}

/* name with its leading `from` scope replaced by `to`, or NULL when name
 * is neither from nor under from/. */
static char *swap_scope(const char *name, const char *from, const char *to)
{
	size_t fl = strlen(from);
	if (strncmp(name, from, fl) || (name[fl] && name[fl] != '/'))
		return NULL;
	size_t tl = strlen(to), rl = strlen(name + fl);
	char *s = ge_xmalloc(tl + rl + 1);
	memcpy(s, to, tl);
	memcpy(s + tl, name + fl, rl + 1);
	return s;
}

/* The distinct tensor_names Consts of the graph's V2 savers. */
static void saver_name_consts(ge_graph *g, ge_opvec *out)
{
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id) ||
		    !is_saver_type(ge_op_type(g, (ge_opid)id)) ||
		    ge_op_num_inputs(g, (ge_opid)id) < 3)
			continue;
		ge_opid c = ge_op_input(g, (ge_opid)id, 1).op;
		int seen = 0;
		for (size_t k = 0; k < out->n && !seen; k++)
			seen = out->v[k] == c;
		if (!seen && c != GE_NOOP)
			ge_opvec_push(out, c);
	}
}

int ge_variable_rename(ge_graph *g, const char *name, const char *new_name,
		       ge_error *err)
{
	ge_varlist vl = {0};
	const ge_variable *v;
	int rc = find_var(g, name, &vl, &v, err);
	if (rc)
		return rc;
	if (!new_name || !*new_name) {
		ge_varlist_free(&vl);
		return ge_err(err, GE_EINVAL, "%s: variable '%s': empty new name",
			      ge_graph_name(g), name);
	}
	if (!strcmp(name, new_name)) {
		ge_varlist_free(&vl);
		return GE_OK;
	}
	/* the ops to rename: the variable's own, those named under it */
	struct vp P;
	memset(&P, 0, sizeof P);
	P.g = g;
	ge_opset_init(&P.seen, g);
	ge_opvec ops = GE_VEC_INIT, rd = GE_VEC_INIT;
	var_ops(&P, v, &ops);
	var_readers(&P, v, &rd);
	for (size_t i = 0; i < rd.n; i++)
		ge_opvec_push(&ops, rd.v[i]);
	ge_opvec_free(&rd);
	ge_opset_free(&P.seen);
	ge_opvec ren = GE_VEC_INIT;
	char **to = ge_xcalloc(ops.n + 1, sizeof *to);
	size_t nto = 0;
	for (size_t i = 0; i < ops.n && !rc; i++) {
		int dup = 0;
		for (size_t k = 0; k < ren.n && !dup; k++)
			dup = ren.v[k] == ops.v[i];
		char *nn = dup ? NULL
			       : swap_scope(ge_op_name(g, ops.v[i]), name,
					    new_name);
		if (!nn)
			continue;
		if (ge_graph_find(g, nn) != GE_NOOP)
			rc = ge_err(err, GE_EINVAL,
				    "%s: renaming variable '%s' to '%s': an "
				    "op is named '%s'", ge_graph_name(g),
				    name, new_name, nn);
		ge_opvec_push(&ren, ops.v[i]);
		to[nto++] = nn;
	}
	ge_opvec_free(&ops);
	/* the key */
	char *key = ge_xstrdup(v->key);
	char *key_ = swap_scope(key, name, new_name);
	ge_opvec consts = GE_VEC_INIT;
	saver_name_consts(g, &consts);
	for (size_t i = 0; i < consts.n && !rc && key_; i++) {
		size_t n;
		char **s = ge_const_strings(g, consts.v[i], &n);
		for (size_t k = 0; s && k < n && !rc; k++)
			if (!strcmp(s[k], key_))
				rc = ge_err(err, GE_EINVAL,
					    "%s: renaming variable '%s': the "
					    "saver ('%s') already holds key "
					    "'%s'", ge_graph_name(g), name,
					    ge_op_name(g, consts.v[i]), key_);
		ge_strings_free(s, s ? n : 0);
	}
	ge_varlist_free(&vl);   /* v is gone from here on */
	v = NULL;
	for (size_t i = 0; i < ren.n && !rc; i++)
		rc = ge_op_set_name(g, ren.v[i], to[i], err);
	if (!rc && key_) {
		int used = 0;
		for (size_t i = 0; i < consts.n; i++) {
			size_t n;
			char **s = ge_const_strings(g, consts.v[i], &n);
			int hit = 0;
			for (size_t k = 0; s && k < n; k++)
				if (!strcmp(s[k], key)) {
					free(s[k]);
					s[k] = ge_xstrdup(key_);
					hit = 1;
				}
			if (hit)
				ge_const_set_strings(g, consts.v[i], s, n);
			used |= hit;
			ge_strings_free(s, s ? n : 0);
		}
		/* a graph without a saver still has its values under the old
		 * key in the checkpoint it came with */
		(void)used;
		ge_graph_checkpoint_rename(g, key, key_);
	}
	ge_opvec_free(&consts);
	for (size_t i = 0; i < nto; i++)
		free(to[i]);
	free(to);
	ge_opvec_free(&ren);
	free(key);
	free(key_);
	return rc;
}

/* A saver entry of the variable being removed. */
struct rm_entry {
	ge_opid op;      /* SaveV2 or RestoreV2 */
	size_t at;       /* element of tensor_names (SaveV2 input at + 3) */
};

/* Drops element at of a Const's strings (made private to op first). */
static void drop_string(ge_graph *g, ge_opid op, size_t slot, size_t at)
{
	size_t n;
	char **s = ge_const_strings(g, ge_op_input(g, op, slot).op, &n);
	if (!s || at >= n) {
		ge_strings_free(s, s ? n : 0);
		return;
	}
	free(s[at]);
	memmove(s + at, s + at + 1, (n - at - 1) * sizeof *s);
	n--;
	ge_opid c = own_const(g, op, slot);
	if (c != GE_NOOP)
		ge_const_set_strings(g, c, s, n);
	ge_strings_free(s, n);
}

static void drop_type(ge_graph *g, ge_opid op, size_t at)
{
	size_t n = 0;
	int *t = ge_attr_types(g, op, "dtypes", &n);
	if (t && at < n) {
		memmove(t + at, t + at + 1, (n - at - 1) * sizeof *t);
		ge_attr_set_types(g, op, "dtypes", t, n - 1);
		ge_op_remove_attr(g, op, "_output_shapes");
	}
	free(t);
}

/* Whether a saver op's names, slices and dtypes agree, n of them. */
static int saver_consistent(ge_graph *g, ge_opid op, size_t *n)
{
	size_t nn = 0, ns = 0, nt = 0;
	char **a = ge_const_strings(g, ge_op_input(g, op, 1).op, &nn);
	char **b = ge_const_strings(g, ge_op_input(g, op, 2).op, &ns);
	int *t = ge_attr_types(g, op, "dtypes", &nt);
	int ok = a && b && t && nn == ns && nn == nt;
	ge_strings_free(a, a ? nn : 0);
	ge_strings_free(b, b ? ns : 0);
	free(t);
	*n = nn;
	return ok;
}

static int only_used_by(const ge_graph *g, ge_opid c, ge_opid user)
{
	size_t nu, nc;
	const ge_use *u = ge_op_uses(g, c, &nu);
	ge_op_control_outputs(g, c, &nc);
	for (size_t i = 0; i < nu; i++)
		if (u[i].op != user)
			return 0;
	return nc == 0;
}

/* What removing one variable takes: the ops that go (rm, and in all in
 * node order) and the saver entries to drop. */
struct vrm {
	ge_graph *g;
	const char *gn, *name;
	ge_opset rm;
	ge_opvec all;
	struct rm_entry *ent;
	size_t nent;
};

static void vrm_entry(struct vrm *x, ge_opid op, size_t at)
{
	x->ent = ge_xrealloc(x->ent, (x->nent + 1) * sizeof *x->ent);
	x->ent[x->nent++] = (struct rm_entry){op, at};
}

/* Restore assigns: the variable's value from a RestoreV2 output, through
 * Identity chains. */
static void vrm_restores(struct vrm *x, ge_opid var)
{
	ge_graph *g = x->g;
	size_t nu;
	const ge_use *u = ge_op_uses(g, var, &nu);
	for (size_t i = 0; i < nu; i++) {
		ge_opid a = u[i].op;
		const char *ty = ge_op_type(g, a);
		if (u[i].slot || ge_opset_has(&x->rm, a) ||
		    (strcmp(ty, "Assign") && strcmp(ty, "AssignVariableOp")) ||
		    ge_op_num_inputs(g, a) < 2)
			continue;
		ge_opvec chain = GE_VEC_INIT;
		ge_tref t = ge_op_input(g, a, 1);
		for (int hop = 0; hop < MAX_HOPS && t.op != GE_NOOP; hop++) {
			const char *tt = ge_op_type(g, t.op);
			if (!strcmp(tt, "RestoreV2")) {
				ge_opset_add(&x->rm, a);
				ge_opset_add_list(&x->rm, chain.v, chain.n);
				vrm_entry(x, t.op, (size_t)t.index);
				break;
			}
			if (strcmp(tt, "Identity") ||
			    ge_op_num_inputs(g, t.op) < 1)
				break;
			ge_opvec_push(&chain, t.op);
			t = ge_op_input(g, t.op, 0);
		}
		ge_opvec_free(&chain);
	}
}

/* What the savers save of it. */
static void vrm_saves(struct vrm *x)
{
	ge_graph *g = x->g;
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++) {
		ge_opid s = (ge_opid)id;
		if (!ge_op_alive(g, s) || strcmp(ge_op_type(g, s), "SaveV2"))
			continue;
		size_t ni = ge_op_num_inputs(g, s);
		for (size_t k = 3; k < ni; k++)
			if (ge_opset_has(&x->rm, ge_op_input(g, s, k).op))
				vrm_entry(x, s, k - 3);
	}
}

/* Every saver touched must be consistent; a RestoreV2 restoring only this
 * variable goes with its own constants. */
static int vrm_check_savers(struct vrm *x, ge_error *err)
{
	ge_graph *g = x->g;
	for (size_t i = 0; i < x->nent; i++) {
		size_t n;
		struct rm_entry *e = &x->ent[i];
		if (!saver_consistent(g, e->op, &n) || e->at >= n)
			return ge_err(err, GE_EFORMAT,
				      "%s: cannot remove variable '%s' from "
				      "saver op '%s': its tensor_names, "
				      "shape_and_slices and dtypes disagree",
				      x->gn, x->name, ge_op_name(g, e->op));
		ge_opid R = e->op;
		if (n == 1 && !strcmp(ge_op_type(g, R), "RestoreV2")) {
			ge_opset_add(&x->rm, R);
			for (size_t slot = 1; slot <= 2; slot++) {
				ge_opid c = ge_op_input(g, R, slot).op;
				if (c != GE_NOOP && only_used_by(g, c, R))
					ge_opset_add(&x->rm, c);
			}
			e->op = GE_NOOP;
		}
	}
	return GE_OK;
}

/* Nothing else may read what goes. */
static int vrm_check_readers(struct vrm *x, ge_error *err)
{
	ge_graph *g = x->g;
	int rc = GE_OK;
	for (size_t i = 0; i < x->all.n && !rc; i++) {
		ge_opid op = x->all.v[i];
		size_t nu;
		const ge_use *uu = ge_op_uses(g, op, &nu);
		for (size_t k = 0; k < nu && !rc; k++) {
			ge_opid c = uu[k].op;
			if (ge_opset_has(&x->rm, c))
				continue;
			int saver = 0;
			for (size_t e = 0; e < x->nent && !saver; e++)
				saver = x->ent[e].op == c &&
					(strcmp(ge_op_type(g, c), "SaveV2") ||
					 x->ent[e].at + 3 == uu[k].slot);
			if (!saver || !strcmp(ge_op_type(g, c), "RestoreV2"))
				rc = ge_err(err, GE_EGRAPH,
					    "%s: cannot remove variable '%s': "
					    "op '%s' reads '%s' (reroute it "
					    "first)", x->gn, x->name,
					    ge_op_name(g, c), ge_op_name(g, op));
		}
		size_t nc;
		const ge_opid *co = ge_op_control_outputs(g, op, &nc);
		for (size_t k = 0; k < nc && !rc; k++)
			if (!ge_opset_has(&x->rm, co[k]) &&
			    strcmp(ge_op_type(g, co[k]), "NoOp"))
				rc = ge_err(err, GE_EGRAPH,
					    "%s: cannot remove variable '%s': "
					    "op '%s' has a control input on "
					    "'%s'", x->gn, x->name,
					    ge_op_name(g, co[k]),
					    ge_op_name(g, op));
	}
	return rc;
}

/* Savers: SaveV2 inputs and elements, RestoreV2 outputs. */
static void vrm_fix_savers(struct vrm *x)
{
	ge_graph *g = x->g;
	for (size_t i = 0; i < x->nent; i++) {
		ge_opid s = x->ent[i].op;
		if (s == GE_NOOP)
			continue;
		size_t at = x->ent[i].at;
		if (!strcmp(ge_op_type(g, s), "SaveV2")) {
			ge_op_remove_input(g, s, at + 3, NULL);
		} else {
			/* later outputs move down by one */
			ge_input_edit *ed = NULL;
			size_t ned = 0, nu;
			const ge_use *uu = ge_op_uses(g, s, &nu);
			for (size_t k = 0; k < nu; k++) {
				ge_opid c = uu[k].op;
				ge_tref t = ge_op_input(g, c, uu[k].slot);
				if (ge_opset_has(&x->rm, c) || t.index <= (int)at)
					continue;
				ed = ge_xrealloc(ed, (ned + 1) * sizeof *ed);
				ed[ned++] = (ge_input_edit){
					c, uu[k].slot, {s, t.index - 1}};
			}
			/* the removed chain reads output at: drop it first so
			 * no two readers disagree */
			if (ned)
				ge_graph_set_inputs(g, ed, ned, NULL);
			free(ed);
		}
		drop_string(g, s, 1, at);
		drop_string(g, s, 2, at);
		drop_type(g, s, at);
		/* entries of the same op after this one moved down too */
		for (size_t j = i + 1; j < x->nent; j++)
			if (x->ent[j].op == s && x->ent[j].at > at)
				x->ent[j].at--;
	}
}

/* Control edges of NoOps (init, restore_all) on what goes, then the ops,
 * consumers first: what is left reads only ops that go too. */
static void vrm_remove(struct vrm *x)
{
	ge_graph *g = x->g;
	for (size_t i = 0; i < x->all.n; i++) {
		size_t nc;
		ge_opvec drop = GE_VEC_INIT;
		const ge_opid *co = ge_op_control_outputs(g, x->all.v[i], &nc);
		for (size_t k = 0; k < nc; k++)
			if (!ge_opset_has(&x->rm, co[k]))
				ge_opvec_push(&drop, co[k]);
		for (size_t k = 0; k < drop.n; k++)
			ge_op_remove_control_input(g, drop.v[k], x->all.v[i],
						   NULL);
		ge_opvec_free(&drop);
	}
	for (size_t i = x->all.n; i-- > 0;)
		ge_graph_remove_op(g, x->all.v[i], 1, NULL);
}

int ge_variable_remove(ge_graph *g, const char *name, ge_error *err)
{
	ge_varlist vl = {0};
	const ge_variable *v;
	int rc = find_var(g, name, &vl, &v, err);
	if (rc)
		return rc;
	struct vrm X = {g, ge_graph_name(g), name, {0}, GE_VEC_INIT, NULL, 0};
	struct vp P;
	memset(&P, 0, sizeof P);
	P.g = g;
	ge_opset_init(&P.seen, g);
	ge_opvec ops = GE_VEC_INIT;
	var_ops(&P, v, &ops);
	var_readers(&P, v, &ops);
	ge_opset_free(&P.seen);
	ge_opset_init(&X.rm, g);
	ge_opset_add_list(&X.rm, ops.v, ops.n);
	ge_opvec_free(&ops);

	vrm_restores(&X, v->op);
	vrm_saves(&X);
	rc = vrm_check_savers(&X, err);
	size_t cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap && !rc; id++)
		if (ge_op_alive(g, (ge_opid)id) &&
		    ge_opset_has(&X.rm, (ge_opid)id))
			ge_opvec_push(&X.all, (ge_opid)id);
	if (!rc)
		rc = vrm_check_readers(&X, err);
	ge_varlist_free(&vl);
	if (!rc) {
		vrm_fix_savers(&X);
		vrm_remove(&X);
	}
	free(X.ent);
	ge_opvec_free(&X.all);
	ge_opset_free(&X.rm);
	return rc;
}
