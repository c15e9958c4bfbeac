/*
 * transform.c: Transformer, copy, copy_with_input_replacements and
 * graph_replace (see transform.h for the contract).
 *
 * A transform runs in passes over the view's ops in node order:
 *   1. copy: every op gets its counterpart from the op handler; inputs
 *      come from earlier copies, the input handlers (once per tensor), or,
 *      for an op not copied yet, a temporary stand-in placeholder;
 *   2. stand-ins: the slots that read a stand-in are pointed at the real
 *      copy and the stand-in is removed;
 *   3. cross references: control inputs, colocation, frame names,
 *      collections and control-flow contexts;
 *   4. the result view.
 * Membership in the view is an array indexed by source op id; tensors are
 * looked up in hash maps.  Nothing here walks the whole graph except the
 * frame-name survey of a destination that receives a loop and the loop
 * search of graph_replace.
 */
#include "transform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"
#include "select.h"
#include "subgraph.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* ------------------------------------------------------------ strings */

/* A small string-keyed hash map (keys and values malloc'd). */
typedef struct strmap {
	char **k, **v;
	size_t cap, n;
} strmap;

static void strmap_free(strmap *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->k[i]);
		free(m->v[i]);
	}
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}

static size_t strmap_find(const strmap *m, const char *k)
{
	size_t mask = m->cap - 1, i = ge_hash(k, strlen(k)) & mask;
	while (m->k[i] && strcmp(m->k[i], k))
		i = (i + 1) & mask;
	return i;
}

static const char *strmap_get(const strmap *m, const char *k)
{
	if (!m->n)
		return NULL;
	size_t i = strmap_find(m, k);
	return m->k[i] ? (m->v[i] ? m->v[i] : m->k[i]) : NULL;
}

static int strmap_has(const strmap *m, const char *k)
{
	return strmap_get(m, k) != NULL;
}

/* Inserts k (-> v, may be NULL) unless present. */
static void strmap_put(strmap *m, const char *k, const char *v)
{
	if ((m->n + 1) * 2 > m->cap) {
		strmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 16;
		m->k = ge_xcalloc(m->cap, sizeof *m->k);
		m->v = ge_xcalloc(m->cap, sizeof *m->v);
		for (size_t i = 0; i < old.cap; i++)
			if (old.k[i]) {
				size_t j = strmap_find(m, old.k[i]);
				m->k[j] = old.k[i];
				m->v[j] = old.v[i];
			}
		free(old.k);
		free(old.v);
	}
	size_t i = strmap_find(m, k);
	if (m->k[i])
		return;
	m->k[i] = ge_xstrdup(k);
	m->v[i] = v ? ge_xstrdup(v) : NULL;
	m->n++;
}

/* base, base_1, base_2, ...: the first not in m (which then holds it). */
static char *uniquify(strmap *m, const char *base)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_adds(&b, base);
	for (unsigned i = 1; strmap_has(m, (char *)b.data); i++) {
		b.len = 0;
		ge_buf_printf(&b, "%s_%u", base, i);
	}
	strmap_put(m, (char *)b.data, NULL);
	return (char *)ge_buf_steal(&b, NULL);
}

static int is_type(const char *t, const char *a, const char *b)
{
	return !strcmp(t, a) || (b && !strcmp(t, b));
}

static int is_enter(const char *t)
{
	return is_type(t, "Enter", "RefEnter");
}

static int is_exit(const char *t)
{
	return is_type(t, "Exit", "RefExit");
}

/* ------------------------------------------------------------ state */

enum { VOP_PENDING = 0, VOP_COPIED = 1, VOP_SHARED = 2 };
enum { VOF_IDENT = 1, VOF_SHAPE_SAME = 2 };

/* One op of the view, by its position in node order. */
struct vop {
	ge_opid op;       /* source */
	ge_opid op_;      /* counterpart (GE_NOOP while pending) */
	uint32_t off, n;  /* its output counterparts in outs (unless IDENT) */
	uint8_t state, flags;
};

/* Collections as they were when the transform started: for each listed
 * op or tensor of the view, the collections that list it. */
struct coll_ent {
	uint32_t coll, next; /* next: index + 1, 0 ends the chain */
};

struct ge_tinfo {
	ge_graph *g, *g_;
	char *scope, *scope_;
	ge_view sgv;
	const ge_transformer *tr;

	ge_opid *order;       /* view ops in node order */
	struct vop *vops;
	size_t n;
	uint32_t *pos;        /* source op id -> position + 1, 0 = outside */
	size_t pos_cap;
	ge_tvec outs;         /* output counterparts of non-IDENT copies */

	ge_tmap inset;        /* the view's inputs */
	ge_tmap ext;          /* input and hidden input -> index in ext_t */
	ge_tvec ext_src, ext_t;
	ge_tmap imap;         /* input_map: source -> index in imap_to */
	ge_tref *imap_to;
	char **bind_name;     /* dangling input texts bound by import */
	ge_tref *bind_to;
	size_t n_bind;

	ge_tmap stand;        /* source tensor -> index in stand_src */
	ge_tvec stand_src;
	ge_opvec stand_op;

	int has_enter;
	strmap dst_frames;    /* frame names used in the destination */
	strmap frame_map;     /* source frame -> copy's frame */
	strmap ctx_names;     /* context names used in the destination */
	int ctx_names_done;
	int keep_frames;

	/* collection snapshot */
	char **coll_names;
	size_t n_colls;
	ge_tmap coll_idx;     /* elem -> first coll_ent index + 1 */
	struct coll_ent *coll_ents;
	size_t n_coll_ents;

	/* reverse maps, built on first use */
	int rev_done;
	ge_tmap rev_ops, rev_ts;

	/* results */
	ge_opvec res_src, res_dst;

	/* handler scratch: set by copy_op_handler for the op being copied */
	int cur_shape_same;
	ge_opid cur_op;
};

static uint64_t pack_t(ge_tref t)
{
	return ((uint64_t)t.op << 32) | (uint32_t)t.index;
}

static ge_tref unpack_t(uint64_t v)
{
	return (ge_tref){(ge_opid)(v >> 32), (int32_t)(uint32_t)v};
}

static struct vop *vop_of(const ge_tinfo *I, ge_opid op)
{
	if (op == GE_NOOP || op >= I->pos_cap || !I->pos[op])
		return NULL;
	return &I->vops[I->pos[op] - 1];
}

/* ------------------------------------------------------------ info API */

ge_graph *ge_tinfo_graph(const ge_tinfo *I)
{
	return I->g;
}

ge_graph *ge_tinfo_dst_graph(const ge_tinfo *I)
{
	return I->g_;
}

const char *ge_tinfo_scope(const ge_tinfo *I)
{
	return I->scope;
}

const char *ge_tinfo_dst_scope(const ge_tinfo *I)
{
	return I->scope_;
}

const ge_view *ge_tinfo_view(const ge_tinfo *I)
{
	return &I->sgv;
}

int ge_tinfo_in_view(const ge_tinfo *I, ge_opid op)
{
	return vop_of(I, op) != NULL;
}

int ge_tinfo_new_name(const ge_tinfo *I, const char *name, ge_buf *out,
		      ge_error *err)
{
	size_t n = strlen(I->scope);
	out->len = 0;
	if (strncmp(name, I->scope, n))
		return ge_err(err, GE_EINVAL,
			      "'%s' is not under the source scope '%s'", name,
			      I->scope);
	ge_buf_adds(out, I->scope_);
	ge_buf_adds(out, name + n);
	return GE_OK;
}

/* new_name where the name may lie outside the source scope: then the
 * destination scope is simply prefixed. */
static void scoped_name(const ge_tinfo *I, const char *name, ge_buf *out)
{
	size_t n = strlen(I->scope);
	out->len = 0;
	ge_buf_adds(out, I->scope_);
	ge_buf_adds(out, strncmp(name, I->scope, n) ? name : name + n);
}

ge_opid ge_tinfo_transformed_op(const ge_tinfo *I, ge_opid op)
{
	struct vop *w = vop_of(I, op);
	return w ? w->op_ : GE_NOOP;
}

int ge_tinfo_transformed_t(const ge_tinfo *I, ge_tref t, ge_tref *out)
{
	struct vop *w = vop_of(I, t.op);
	size_t v;
	if (w) {
		if (w->state == VOP_SHARED) {
			*out = t;
			return 1;
		}
		if (w->state != VOP_COPIED || t.index < 0)
			return 0;
		if (w->flags & VOF_IDENT) {
			*out = (ge_tref){w->op_, t.index};
			return 1;
		}
		if ((uint32_t)t.index >= w->n)
			return 0;
		*out = I->outs.v[w->off + (uint32_t)t.index];
		return 1;
	}
	if (ge_tmap_get(&I->ext, t, &v)) {
		*out = I->ext_t.v[v];
		return 1;
	}
	return 0;
}

static void build_rev(ge_tinfo *I)
{
	if (I->rev_done)
		return;
	I->rev_done = 1;
	ge_tmap_init(&I->rev_ops, I->n);
	ge_tmap_init(&I->rev_ts, I->outs.n + I->ext_t.n);
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		if (w->state == VOP_PENDING)
			continue;
		ge_tmap_put(&I->rev_ops, (ge_tref){w->op_, GE_CONTROL}, i);
		if (w->state == VOP_COPIED && !(w->flags & VOF_IDENT))
			for (uint32_t k = 0; k < w->n; k++)
				ge_tmap_put(&I->rev_ts, I->outs.v[w->off + k],
					    pack_t((ge_tref){w->op, (int32_t)k}));
	}
	for (size_t i = 0; i < I->ext_t.n; i++)
		ge_tmap_put(&I->rev_ts, I->ext_t.v[i], pack_t(I->ext_src.v[i]));
}

ge_opid ge_tinfo_original_op(ge_tinfo *I, ge_opid op_)
{
	size_t v;
	build_rev(I);
	if (!ge_tmap_get(&I->rev_ops, (ge_tref){op_, GE_CONTROL}, &v))
		return GE_NOOP;
	return I->vops[v].op;
}

int ge_tinfo_original_t(ge_tinfo *I, ge_tref t_, ge_tref *out)
{
	size_t v;
	build_rev(I);
	if (ge_tmap_get(&I->rev_ts, t_, &v)) {
		*out = unpack_t(v);
		return 1;
	}
	/* an output of a copy whose outputs are its own */
	if (ge_tmap_get(&I->rev_ops, (ge_tref){t_.op, GE_CONTROL}, &v)) {
		struct vop *w = &I->vops[v];
		if (w->state == VOP_SHARED ||
		    (w->state == VOP_COPIED && (w->flags & VOF_IDENT))) {
			*out = (ge_tref){w->op, t_.index};
			return 1;
		}
	}
	return 0;
}

/* "op" names an op, "op:k" a tensor, "^op" an op. */
static int lookup_name(const ge_graph *g, const char *name, ge_tref *out)
{
	if (*name == '^')
		name++;
	if (strchr(name, ':'))
		return ge_graph_find_tensor(g, name, out) == GE_OK &&
		       out->index >= 0;
	ge_opid id = ge_graph_find(g, name);
	if (id == GE_NOOP)
		return 0;
	*out = (ge_tref){id, GE_CONTROL};
	return 1;
}

int ge_tinfo_transformed_name(ge_tinfo *I, const char *name, ge_tref *out)
{
	ge_tref t;
	if (!lookup_name(I->g, name, &t))
		return 0;
	if (t.index == GE_CONTROL) {
		ge_opid o = ge_tinfo_transformed_op(I, t.op);
		*out = (ge_tref){o, GE_CONTROL};
		return o != GE_NOOP;
	}
	return ge_tinfo_transformed_t(I, t, out);
}

int ge_tinfo_original_name(ge_tinfo *I, const char *name, ge_tref *out)
{
	ge_tref t;
	if (!lookup_name(I->g_, name, &t))
		return 0;
	if (t.index == GE_CONTROL) {
		ge_opid o = ge_tinfo_original_op(I, t.op);
		*out = (ge_tref){o, GE_CONTROL};
		return o != GE_NOOP;
	}
	return ge_tinfo_original_t(I, t, out);
}

size_t ge_tinfo_ops(const ge_tinfo *I, const ge_opid **src,
		    const ge_opid **dst)
{
	if (src)
		*src = I->res_src.v;
	if (dst)
		*dst = I->res_dst.v;
	return I->res_src.n;
}

size_t ge_tinfo_collections_of(ge_tinfo *I, ge_tref elem, const char **names,
			       size_t cap)
{
	size_t v, k = 0;
	if (!I->n_colls || !ge_tmap_get(&I->coll_idx, elem, &v))
		return 0;
	for (size_t e = v; e; e = I->coll_ents[e - 1].next) {
		if (k < cap)
			names[k] = I->coll_names[I->coll_ents[e - 1].coll];
		k++;
	}
	return k;
}

void ge_tinfo_format(const ge_tinfo *I, ge_buf *out)
{
	const char *gn = ge_graph_name(I->g), *gn_ = ge_graph_name(I->g_);
	ge_buf_adds(out, "Transform result info:\n");
	if (I->g == I->g_) {
		ge_buf_printf(out, "  Within graph[%s]", *gn ? gn : "<new>");
		if (!*I->scope_)
			ge_buf_adds(out, " IN-PLACE");
		ge_buf_addc(out, '\n');
	} else {
		ge_buf_printf(out, "  graph[%s] => graph[%s]\n",
			      *gn ? gn : "<new>", *gn_ ? gn_ : "<new>");
	}
	if (*I->scope)
		ge_buf_printf(out, "  Relative to source scope: %s\n", I->scope);
	if (*I->scope_)
		ge_buf_printf(out, "  Scope destination: %s\n", I->scope_);
	ge_buf_adds(out, "Operations mapping:\n");
	for (size_t i = 0; i < I->res_src.n; i++)
		ge_buf_printf(out, "  %s => %s\n",
			      ge_op_name(I->g, I->res_src.v[i]),
			      ge_op_name(I->g_, I->res_dst.v[i]));
}

void ge_tinfo_summary(const ge_tinfo *I, ge_buf *out)
{
	const char *gn = ge_graph_name(I->g), *gn_ = ge_graph_name(I->g_);
	ge_buf_printf(out, "transform info: %zu op%s \"%s\" => \"%s\"",
		      I->res_src.n, I->res_src.n == 1 ? "" : "s", gn, gn_);
	if (*I->scope || *I->scope_)
		ge_buf_printf(out, ", scope \"%s\" => \"%s\"", I->scope,
			      I->scope_);
}

void ge_tinfo_free(ge_tinfo *I)
{
	if (!I)
		return;
	free(I->scope);
	free(I->scope_);
	ge_view_free(&I->sgv);
	free(I->order);
	free(I->vops);
	free(I->pos);
	ge_tvec_free(&I->outs);
	ge_tmap_free(&I->inset);
	ge_tmap_free(&I->ext);
	ge_tvec_free(&I->ext_src);
	ge_tvec_free(&I->ext_t);
	ge_tmap_free(&I->imap);
	free(I->imap_to);
	for (size_t i = 0; i < I->n_bind; i++)
		free(I->bind_name[i]);
	free(I->bind_name);
	free(I->bind_to);
	ge_tmap_free(&I->stand);
	ge_tvec_free(&I->stand_src);
	ge_opvec_free(&I->stand_op);
	strmap_free(&I->dst_frames);
	strmap_free(&I->frame_map);
	strmap_free(&I->ctx_names);
	for (size_t i = 0; i < I->n_colls; i++)
		free(I->coll_names[i]);
	free(I->coll_names);
	ge_tmap_free(&I->coll_idx);
	free(I->coll_ents);
	if (I->rev_done) {
		ge_tmap_free(&I->rev_ops);
		ge_tmap_free(&I->rev_ts);
	}
	ge_opvec_free(&I->res_src);
	ge_opvec_free(&I->res_dst);
	free(I);
}

/* ------------------------------------------------------------ shapes */

#define MAX_DIMS 32

/* Whether the copy's input t_ is known to have the shape its source t had
 * (or a more precise one), so shapes TensorFlow inferred from t still
 * hold.  When that cannot be told, the answer is no. */
static int same_shape(ge_tinfo *I, ge_tref t, ge_tref t_)
{
	if (I->g == I->g_ && ge_tref_eq(t, t_))
		return 1;
	struct vop *w = vop_of(I, t.op);
	if (w && w->state == VOP_PENDING)
		return 1; /* a stand-in: becomes the copy of t itself */
	if (w && w->state == VOP_COPIED) {
		ge_tref c;
		if (ge_tinfo_transformed_t(I, t, &c) && ge_tref_eq(c, t_))
			return (w->flags & VOF_SHAPE_SAME) != 0;
	}
	int64_t a[MAX_DIMS], b[MAX_DIMS];
	int ra = ge_op_output_shape(I->g, t.op, t.index, a, MAX_DIMS);
	if (ra < 0) {
		/* a placeholder of unknown shape told TensorFlow nothing
		 * either; any other op may just lack `_output_shapes` */
		const char *ty = ge_op_type(I->g, t.op);
		return !strcmp(ty, "Placeholder") ||
		       !strcmp(ty, "PlaceholderV2");
	}
	int rb = ge_op_output_shape(I->g_, t_.op, t_.index, b, MAX_DIMS);
	if (rb != ra)
		return 0;
	for (int i = 0; i < ra && i < MAX_DIMS; i++)
		if (a[i] >= 0 && a[i] != b[i])
			return 0;
	return 1;
}

/* Ops whose single output has the shape of their first input. */
static int shape_preserving(const char *t)
{
	static const char *const names[] = {
		"Identity", "Snapshot", "StopGradient", "PreventGradient",
		"CheckNumerics", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu",
		"Sigmoid", "Tanh", "Softplus", "Softsign", "Softmax",
		"LogSoftmax", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt",
		"Square", "Reciprocal", "Floor", "Ceil", "Round", "Sign",
		"Cast", "ZerosLike", "OnesLike", "BiasAdd",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(t, names[i]))
			return 1;
	return 0;
}

/* AttrValue { list (1) { shape (7) { dim (2) { size (1) } | unknown_rank
 * (3) } } } for one shape. */
static void encode_one_shape(ge_buf *out, const int64_t *dims, int rank)
{
	ge_buf shape = GE_BUF_INIT, dim = GE_BUF_INIT, list = GE_BUF_INIT;
	if (rank < 0) {
		ge_buf_tag(&shape, 3, 0);
		ge_buf_varint(&shape, 1);
	}
	for (int i = 0; i < rank; i++) {
		dim.len = 0;
		if (dims[i]) {
			ge_buf_tag(&dim, 1, 0);
			ge_buf_varint(&dim, (uint64_t)dims[i]);
		}
		ge_buf_lenfield(&shape, 2, dim.data, dim.len);
	}
	ge_buf_lenfield(&list, 7, shape.data, shape.len);
	ge_buf_lenfield(out, 1, list.data, list.len);
	ge_buf_free(&shape);
	ge_buf_free(&dim);
	ge_buf_free(&list);
}

/* The copy op_ of op reads inputs whose shapes may differ from the
 * originals': recompute `_output_shapes` where it is certain, drop it
 * elsewhere.  Returns whether the shapes are still the source's. */
static int fix_output_shapes(ge_tinfo *I, ge_opid op, ge_opid op_)
{
	const Tensorflow__AttrValue *v =
		ge_op_attr(I->g, op, "_output_shapes", NULL);
	int64_t a[MAX_DIMS], b[MAX_DIMS];
	if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
	    v->list->n_shape == 1 && shape_preserving(ge_op_type(I->g, op)) &&
	    ge_op_num_inputs(I->g_, op_) > 0) {
		ge_tref in = ge_op_input(I->g_, op_, 0);
		int rb = in.op == GE_NOOP ? -1
					  : ge_op_output_shape(I->g_, in.op,
							       in.index, b,
							       MAX_DIMS);
		if (rb >= 0 && rb <= MAX_DIMS) {
			ge_buf enc = GE_BUF_INIT;
			encode_one_shape(&enc, b, rb);
			ge_op_set_attr_raw(I->g_, op_, "_output_shapes",
					   enc.data, enc.len);
			ge_buf_free(&enc);
			int ra = ge_op_output_shape(I->g, op, 0, a, MAX_DIMS);
			if (ra != rb)
				return 0;
			for (int i = 0; i < ra; i++)
				if (a[i] != b[i])
					return 0;
			return 1;
		}
	}
	ge_op_remove_attr(I->g_, op_, "_output_shapes");
	return 0;
}

/* ------------------------------------------------------------ handlers */

int ge_copy_op_handler(ge_tinfo *I, ge_opid op, const ge_tref *new_inputs,
		       size_t n_inputs, ge_opid *op_, ge_tvec *outputs_,
		       void *ud, ge_error *err)
{
	const ge_copy_op_opts *co = ud;
	ge_graph *g = I->g, *g_ = I->g_;
	ge_buf nb = GE_BUF_INIT;
	int rc = ge_tinfo_new_name(I, ge_op_name(g, op), &nb, err);
	if (rc) {
		ge_buf_free(&nb);
		return rc;
	}
	const char *un = ge_graph_unique_name(g_, (char *)nb.data);
	ge_buf_free(&nb);
	ge_opid id = ge_graph_add_op(g_, un, ge_op_type(g, op), err);
	if (id == GE_NOOP)
		return GE_EINVAL;
	const char *dev = ge_op_device(g, op);
	if (*dev)
		ge_op_set_device(g_, id, dev);
	size_t na = ge_op_num_attrs(g, op);
	int has_shapes = 0;
	for (size_t a = 0; a < na; a++) {
		const char *key = ge_op_attr_name(g, op, a);
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, op, key, &len);
		if (!raw)
			continue;
		if (!strcmp(key, "_output_shapes"))
			has_shapes = 1;
		ge_op_set_attr_raw(g_, id, key, raw, len);
	}
	for (size_t k = 0; k < n_inputs; k++)
		if ((rc = ge_op_add_input(g_, id, new_inputs[k], err))) {
			ge_err_prefix(err, "copying '%s'", ge_op_name(g, op));
			return rc;
		}
	/* Whether the copy's outputs have the source's shapes: known when
	 * its inputs have the source's shapes, even without `_output_shapes`,
	 * so that the ops after it can tell. */
	int same = 1;
	if (!(co && co->copy_shape)) {
		size_t nin = ge_op_num_inputs(g, op);
		int changed = nin != n_inputs;
		for (size_t k = 0; k < nin && k < n_inputs && !changed; k++) {
			ge_tref t = ge_op_input(g, op, k);
			if (t.op != GE_NOOP && !same_shape(I, t, new_inputs[k]))
				changed = 1;
		}
		if (changed)
			same = has_shapes ? fix_output_shapes(I, op, id) : 0;
	}
	if (I->cur_op == op)
		I->cur_shape_same = same;
	if (co && co->nodedef_fn &&
	    (rc = co->nodedef_fn(I, op, id, co->nodedef_ud, err)))
		return rc;
	int nout = ge_op_num_outputs(g, op);
	for (int k = 0; k < nout; k++)
		ge_tvec_push(outputs_, (ge_tref){id, k});
	*op_ = id;
	return GE_OK;
}

int ge_transform_op_if_inside_handler(ge_tinfo *I, ge_opid op, ge_opid *op_,
				      void *ud, ge_error *err)
{
	(void)err;
	const int *keep = ud;
	struct vop *w = vop_of(I, op);
	if (w)
		*op_ = w->op_;
	else if (I->g == I->g_ && (!keep || *keep))
		*op_ = op;
	else
		*op_ = GE_NOOP;
	return GE_OK;
}

int ge_replace_t_with_placeholder_handler(ge_tinfo *I, ge_tref t,
					  ge_tref *t_, void *ud, ge_error *err)
{
	const ge_ph_naming *nm = ud;
	ge_opid ph;
	if (nm && nm->name) {
		ge_buf b = GE_BUF_INIT;
		int rc = nm->name(I, t, &b, nm->ud, err);
		ge_buf_addc(&b, 0);
		int64_t dims[64];
		int rank = ge_op_output_shape(I->g, t.op, t.index, dims, 64);
		int dt = ge_op_output_dtype(I->g, t.op, t.index);
		ph = rc ? GE_NOOP
			: ge_make_placeholder(I->g_, dt > 100 ? dt - 100 : dt,
					      dims, rank > 64 ? -1 : rank,
					      I->scope_, (const char *)b.data,
					      err);
		ge_buf_free(&b);
	} else {
		ph = ge_make_placeholder_from_tensor(I->g_, I->g, t, I->scope_,
						     nm ? nm->prefix : NULL,
						     err);
	}
	if (ph == GE_NOOP)
		return GE_EINVAL;
	*t_ = (ge_tref){ph, 0};
	return GE_OK;
}

int ge_keep_t_if_possible_handler(ge_tinfo *I, ge_tref t, ge_tref *t_,
				  void *ud, ge_error *err)
{
	if (I->g == I->g_) {
		*t_ = t;
		return GE_OK;
	}
	return ge_replace_t_with_placeholder_handler(I, t, t_, ud, err);
}

int ge_is_predefined_collection(const char *name)
{
	static const char *const names[] = {
		"variables", "local_variables", "metric_variables",
		"model_variables", "trainable_variables", "summaries",
		"queue_runners", "table_initializer", "asset_filepaths",
		"moving_average_variables", "regularization_losses",
		"concatenated_variables", "savers", "weights", "biases",
		"activations", "update_ops", "losses", "saveable_objects",
		"resources", "local_resources",
		"trainable_resource_variables", "init_op", "local_init_op",
		"ready_op", "ready_for_local_init_op", "summary_op",
		"global_step", "eval_step", "train_op", "cond_context",
		"while_context", "_SUMMARY_V2", "streaming_model_ports",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static void tref_name(const ge_graph *g, ge_tref t, ge_buf *out)
{
	out->len = 0;
	ge_buf_adds(out, ge_op_name(g, t.op));
	if (t.index != GE_CONTROL)
		ge_buf_printf(out, ":%d", t.index);
}

int ge_assign_renamed_collections_handler(ge_tinfo *I, ge_tref elem,
					  ge_tref elem_, void *ud,
					  ge_error *err)
{
	(void)ud;
	size_t v;
	if (!I->n_colls || !ge_tmap_get(&I->coll_idx, elem, &v))
		return GE_OK;
	if (elem_.op == GE_NOOP || !ge_op_alive(I->g_, elem_.op))
		return GE_OK;
	ge_buf val = GE_BUF_INIT, key = GE_BUF_INIT;
	tref_name(I->g_, elem_, &val);
	int rc = GE_OK;
	for (size_t e = v; e && !rc; e = I->coll_ents[e - 1].next) {
		const char *name = I->coll_names[I->coll_ents[e - 1].coll];
		if (ge_is_predefined_collection(name)) {
			key.len = 0;
			ge_buf_adds(&key, name);
		} else {
			scoped_name(I, name, &key);
		}
		rc = ge_collection_add_node(I->g_, (char *)key.data,
					    (char *)val.data, err);
	}
	ge_buf_free(&val);
	ge_buf_free(&key);
	return rc;
}

void ge_transformer_init(ge_transformer *t)
{
	memset(t, 0, sizeof *t);
	t->transform_op_handler = ge_copy_op_handler;
	t->transform_control_input_handler = ge_transform_op_if_inside_handler;
	t->transform_external_input_handler =
		ge_replace_t_with_placeholder_handler;
	t->transform_external_hidden_input_handler =
		ge_keep_t_if_possible_handler;
	t->assign_collections_handler = ge_assign_renamed_collections_handler;
	t->copy_control_flow_contexts = 1;
}

/* ------------------------------------------------------------ copy pass */

static int check_dst_tensor(ge_tinfo *I, ge_tref t, const char *what,
			    ge_tref src, ge_error *err)
{
	if (t.op != GE_NOOP && ge_op_alive(I->g_, t.op) && t.index >= 0)
		return GE_OK;
	ge_buf b = GE_BUF_INIT;
	tref_name(I->g, src, &b);
	int rc = ge_err(err, GE_EINVAL,
			"%s for '%s' did not return a tensor of the "
			"destination graph",
			what, (char *)b.data);
	ge_buf_free(&b);
	return rc;
}

/* The tensor a copied consumer reads in place of source tensor t. */
static int resolve(ge_tinfo *I, ge_tref t, ge_tref *t_, ge_error *err)
{
	size_t v;
	int rc;
	if (I->imap.n && ge_tmap_get(&I->imap, t, &v)) {
		*t_ = I->imap_to[v];
		return GE_OK;
	}
	struct vop *w = vop_of(I, t.op);
	if (w) {
		if (w->state != VOP_PENDING) {
			if (ge_tinfo_transformed_t(I, t, t_))
				return GE_OK;
			return ge_err(err, GE_EINVAL,
				      "the copy of '%s' has no output %d",
				      ge_op_name(I->g, t.op), t.index);
		}
		/* read before its producer is copied: a stand-in */
		if (ge_tmap_get(&I->stand, t, &v)) {
			*t_ = (ge_tref){I->stand_op.v[v], 0};
			return GE_OK;
		}
		ge_opid ph = ge_make_placeholder_from_tensor(
			I->g_, I->g, t, I->scope_, "geph_tmp", err);
		if (ph == GE_NOOP)
			return GE_EINVAL;
		ge_tmap_put(&I->stand, t, I->stand_src.n);
		ge_tvec_push(&I->stand_src, t);
		ge_opvec_push(&I->stand_op, ph);
		*t_ = (ge_tref){ph, 0};
		return GE_OK;
	}
	if (ge_tmap_get(&I->ext, t, &v)) {
		*t_ = I->ext_t.v[v];
		return GE_OK;
	}
	int input = ge_tmap_get(&I->inset, t, NULL);
	const ge_transformer *tr = I->tr;
	if (input)
		rc = tr->transform_external_input_handler(
			I, t, t_, tr->transform_external_input_ud, err);
	else
		rc = tr->transform_external_hidden_input_handler(
			I, t, t_, tr->transform_external_hidden_input_ud, err);
	if (rc)
		return rc;
	if ((rc = check_dst_tensor(I, *t_,
				   input ? "the external input handler"
					 : "the hidden input handler",
				   t, err)))
		return rc;
	ge_tmap_put(&I->ext, t, I->ext_t.n);
	ge_tvec_push(&I->ext_src, t);
	ge_tvec_push(&I->ext_t, *t_);
	return GE_OK;
}

static int resolve_dangling(ge_tinfo *I, ge_opid op, size_t k, ge_tref *t_,
			    ge_error *err)
{
	const char *txt = ge_op_dangling_input(I->g, op, k);
	if (txt) {
		size_t tl = strlen(txt);
		for (size_t i = 0; i < I->n_bind; i++) {
			const char *b = I->bind_name[i];
			size_t bl = strlen(b);
			/* "x" and "x:0" name the same tensor */
			if ((bl == tl && !memcmp(b, txt, tl)) ||
			    (bl == tl + 2 && !memcmp(b, txt, tl) &&
			     !strcmp(b + tl, ":0")) ||
			    (tl == bl + 2 && !memcmp(b, txt, bl) &&
			     !strcmp(txt + bl, ":0"))) {
				*t_ = I->bind_to[i];
				return GE_OK;
			}
		}
	}
	return ge_err(err, GE_EGRAPH,
		      "%s: node '%s': input '%s' names no op in the graph",
		      ge_graph_name(I->g), ge_op_name(I->g, op),
		      txt ? txt : "?");
}

static int is_ident(const ge_tvec *outs, ge_opid op_)
{
	for (size_t k = 0; k < outs->n; k++)
		if (outs->v[k].op != op_ || outs->v[k].index != (int32_t)k)
			return 0;
	return 1;
}

static int copy_ops(ge_tinfo *I, ge_error *err)
{
	const ge_transformer *tr = I->tr;
	ge_tvec in = GE_VEC_INIT, outs = GE_VEC_INIT;
	int rc = GE_OK;
	for (size_t i = 0; i < I->n && !rc; i++) {
		struct vop *w = &I->vops[i];
		ge_opid op = w->op;
		if (tr->share_op) {
			int s = tr->share_op(I, op, tr->share_op_ud);
			if (s < 0) {
				rc = ge_err(err, GE_EINVAL,
					    "share_op failed on '%s'",
					    ge_op_name(I->g, op));
				break;
			}
			if (s > 0) {
				if (I->g != I->g_) {
					rc = ge_err(err, GE_EINVAL,
						    "'%s' cannot be shared "
						    "with another graph",
						    ge_op_name(I->g, op));
					break;
				}
				w->op_ = op;
				w->state = VOP_SHARED;
				continue;
			}
		}
		size_t nin = ge_op_num_inputs(I->g, op);
		in.n = 0;
		for (size_t k = 0; k < nin && !rc; k++) {
			ge_tref t = ge_op_input(I->g, op, k), t_;
			if (t.op == GE_NOOP)
				rc = resolve_dangling(I, op, k, &t_, err);
			else
				rc = resolve(I, t, &t_, err);
			if (!rc)
				ge_tvec_push(&in, t_);
		}
		if (rc)
			break;
		ge_opid op_ = GE_NOOP;
		outs.n = 0;
		I->cur_op = op;
		I->cur_shape_same = 0;
		rc = tr->transform_op_handler(I, op, in.v, in.n, &op_, &outs,
					      tr->transform_op_ud, err);
		I->cur_op = GE_NOOP;
		if (rc)
			break;
		if (op_ == GE_NOOP || !ge_op_alive(I->g_, op_)) {
			rc = ge_err(err, GE_EINVAL,
				    "the op handler returned no op of the "
				    "destination graph for '%s'",
				    ge_op_name(I->g, op));
			break;
		}
		if (I->g == I->g_ && op_ == op) {
			rc = ge_err(err, GE_EINVAL,
				    "in-place transformation not allowed "
				    "('%s')",
				    ge_op_name(I->g, op));
			break;
		}
		for (size_t k = 0; k < outs.n && !rc; k++)
			rc = check_dst_tensor(I, outs.v[k], "the op handler",
					      (ge_tref){op, (int32_t)k}, err);
		if (rc)
			break;
		w->op_ = op_;
		w->state = VOP_COPIED;
		if (I->cur_shape_same)
			w->flags |= VOF_SHAPE_SAME;
		if (is_ident(&outs, op_)) {
			w->flags |= VOF_IDENT;
			w->n = (uint32_t)outs.n;
		} else {
			w->off = (uint32_t)I->outs.n;
			w->n = (uint32_t)outs.n;
			for (size_t k = 0; k < outs.n; k++)
				ge_tvec_push(&I->outs, outs.v[k]);
		}
	}
	ge_tvec_free(&in);
	ge_tvec_free(&outs);
	return rc;
}

/* Points every reader of a stand-in at the real copy, then removes it. */
static int finish_stand_ins(ge_tinfo *I, ge_error *err)
{
	ge_use *uses = NULL;
	size_t cap = 0;
	int rc = GE_OK;
	for (size_t i = 0; i < I->stand_src.n && !rc; i++) {
		ge_tref t = I->stand_src.v[i], real;
		ge_opid ph = I->stand_op.v[i];
		if (!ge_tinfo_transformed_t(I, t, &real)) {
			rc = ge_err(err, GE_EINVAL,
				    "'%s:%d' is read inside the view but its "
				    "copy has no such output",
				    ge_op_name(I->g, t.op), t.index);
			break;
		}
		size_t n;
		const ge_use *u = ge_op_uses(I->g_, ph, &n);
		if (n > cap) {
			cap = n;
			uses = ge_xrealloc(uses, cap * sizeof *uses);
		}
		if (n)
			memcpy(uses, u, n * sizeof *uses);
		for (size_t k = 0; k < n && !rc; k++)
			rc = ge_op_set_input(I->g_, uses[k].op, uses[k].slot,
					     real, err);
		if (!rc)
			rc = ge_graph_remove_op(I->g_, ph, 1, err);
	}
	free(uses);
	return rc;
}

/* ------------------------------------------------------------ cross refs */

static int add_control_inputs(ge_tinfo *I, ge_error *err)
{
	const ge_transformer *tr = I->tr;
	size_t v;
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		if (w->state != VOP_COPIED)
			continue;
		size_t nc = ge_op_num_control_inputs(I->g, w->op);
		for (size_t k = 0; k < nc; k++) {
			ge_opid c = ge_op_control_input(I->g, w->op, k), c_;
			int rc;
			if (c == GE_NOOP)
				continue; /* dangling: nothing to point at */
			if (I->imap.n &&
			    ge_tmap_get(&I->imap, (ge_tref){c, GE_CONTROL}, &v)) {
				c_ = I->imap_to[v].op;
			} else if ((rc = tr->transform_control_input_handler(
					    I, c, &c_,
					    tr->transform_control_input_ud,
					    err))) {
				return rc;
			}
			if (c_ == GE_NOOP)
				continue;
			if (!ge_op_alive(I->g_, c_))
				return ge_err(err, GE_EINVAL,
					      "the control input handler "
					      "returned no op of the "
					      "destination graph for '%s'",
					      ge_op_name(I->g, c));
			size_t have = ge_op_num_control_inputs(I->g_, w->op_);
			int dup = c_ == w->op_;
			for (size_t j = 0; j < have && !dup; j++)
				dup = ge_op_control_input(I->g_, w->op_, j) == c_;
			if (!dup &&
			    (rc = ge_op_add_control_input(I->g_, w->op_, c_,
							  err)))
				return rc;
		}
	}
	return GE_OK;
}

/* `_class` = ["loc:@X", ...] of each copy: X's copy, X itself if the
 * destination has it, or nothing. */
static void remap_colocation(ge_tinfo *I)
{
	ge_buf name = GE_BUF_INIT;
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		size_t len;
		if (w->state != VOP_COPIED ||
		    !ge_op_attr_raw(I->g_, w->op_, "_class", &len))
			continue;
		const Tensorflow__AttrValue *v =
			ge_op_attr(I->g_, w->op_, "_class", NULL);
		if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
		    !v->list)
			continue;
		size_t ns = v->list->n_s, keep = 0;
		char **out = ge_xcalloc(ns + 1, sizeof *out);
		int changed = 0;
		for (size_t k = 0; k < ns; k++) {
			const ProtobufCBinaryData *s = &v->list->s[k];
			char *x = ge_xstrndup((const char *)s->data, s->len);
			if (s->len < 5 || memcmp(x, "loc:@", 5)) {
				out[keep++] = x;
				continue;
			}
			ge_opid id = ge_graph_find(I->g, x + 5);
			struct vop *c = vop_of(I, id);
			char *nx = NULL;
			if (c && c->state != VOP_PENDING) {
				name.len = 0;
				ge_buf_printf(&name, "loc:@%s",
					      ge_op_name(I->g_, c->op_));
				nx = ge_xstrdup((char *)name.data);
			} else if (ge_graph_find(I->g_, x + 5) != GE_NOOP) {
				nx = ge_xstrdup(x);
			}
			if (!nx || strcmp(nx, x))
				changed = 1;
			free(x);
			if (!nx)
				continue;
			int dup = 0;
			for (size_t j = 0; j < keep && !dup; j++)
				dup = !strcmp(out[j], nx);
			if (dup) {
				changed = 1;
				free(nx);
				continue;
			}
			out[keep++] = nx;
		}
		if (changed) {
			if (!keep) {
				ge_op_remove_attr(I->g_, w->op_, "_class");
			} else {
				Tensorflow__AttrValue nv =
					TENSORFLOW__ATTR_VALUE__INIT;
				Tensorflow__AttrValue__ListValue l =
					TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
				ProtobufCBinaryData *bs =
					ge_xmalloc(keep * sizeof *bs);
				for (size_t j = 0; j < keep; j++)
					bs[j] = (ProtobufCBinaryData){
						strlen(out[j]),
						(uint8_t *)out[j]};
				l.n_s = keep;
				l.s = bs;
				nv.value_case =
					TENSORFLOW__ATTR_VALUE__VALUE_LIST;
				nv.list = &l;
				ge_op_set_attr(I->g_, w->op_, "_class", &nv);
				free(bs);
			}
		}
		for (size_t j = 0; j < keep; j++)
			free(out[j]);
		free(out);
	}
	ge_buf_free(&name);
}

static char *frame_of(const ge_graph *g, ge_opid id)
{
	const char *s;
	size_t len;
	if (ge_op_attr_string(g, id, "frame_name", &s, &len))
		return NULL;
	return ge_xstrndup(s, len);
}

static void survey_frames(ge_tinfo *I)
{
	size_t cap = ge_graph_capacity(I->g_);
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(I->g_, (ge_opid)id) ||
		    !is_enter(ge_op_type(I->g_, (ge_opid)id)))
			continue;
		char *f = frame_of(I->g_, (ge_opid)id);
		if (f)
			strmap_put(&I->dst_frames, f, NULL);
		free(f);
	}
}

/* The copy's frame for source frame f (made on first use). */
static const char *new_frame(ge_tinfo *I, const char *f)
{
	const char *nf = strmap_get(&I->frame_map, f);
	if (nf)
		return nf;
	ge_buf b = GE_BUF_INIT;
	if (I->keep_frames)
		ge_buf_adds(&b, f);
	else
		scoped_name(I, f, &b);
	char *u = uniquify(&I->dst_frames, (char *)b.data);
	strmap_put(&I->frame_map, f, u);
	free(u);
	ge_buf_free(&b);
	return strmap_get(&I->frame_map, f);
}

static void rename_frames(ge_tinfo *I)
{
	if (!I->has_enter)
		return;
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		if (w->state != VOP_COPIED || !is_enter(ge_op_type(I->g, w->op)))
			continue;
		char *f = frame_of(I->g, w->op);
		if (!f)
			continue;
		const char *nf = new_frame(I, f);
		char *cur = is_enter(ge_op_type(I->g_, w->op_))
				    ? frame_of(I->g_, w->op_)
				    : NULL;
		if (cur && !strcmp(cur, f) && strcmp(nf, f)) {
			Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
			v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
			v.s.data = (uint8_t *)nf;
			v.s.len = strlen(nf);
			ge_op_set_attr(I->g_, w->op_, "frame_name", &v);
		}
		free(cur);
		free(f);
	}
}

/* ------------------------------------------------------------ collections */

static void snapshot_collections(ge_tinfo *I)
{
	size_t nc = ge_collection_count(I->g);
	if (!nc)
		return;
	I->coll_names = ge_xcalloc(nc, sizeof *I->coll_names);
	ge_tmap_init(&I->coll_idx, 16);
	size_t cap_ents = 0;
	for (size_t i = 0; i < nc; i++) {
		const char *name = ge_collection_name(I->g, i);
		I->coll_names[i] = ge_xstrdup(name ? name : "");
	}
	I->n_colls = nc;
	for (size_t i = 0; i < nc; i++) {
		Tensorflow__CollectionDef *c =
			ge_collection_get(I->g, I->coll_names[i]);
		if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST)
			continue;
		for (size_t k = 0; k < c->node_list->n_value; k++) {
			ge_tref t;
			if (!lookup_name(I->g, c->node_list->value[k], &t) ||
			    !vop_of(I, t.op))
				continue;
			if (I->n_coll_ents == cap_ents) {
				cap_ents = cap_ents ? cap_ents * 2 : 16;
				I->coll_ents = ge_xrealloc(
					I->coll_ents,
					cap_ents * sizeof *I->coll_ents);
			}
			size_t e = I->n_coll_ents++;
			I->coll_ents[e] = (struct coll_ent){(uint32_t)i, 0};
			size_t head;
			if (!ge_tmap_get(&I->coll_idx, t, &head)) {
				ge_tmap_put(&I->coll_idx, t, e + 1);
				continue;
			}
			/* append, skipping a collection listing t twice */
			size_t p = head;
			int dup = 0;
			for (;;) {
				if (I->coll_ents[p - 1].coll == i)
					dup = 1;
				if (!I->coll_ents[p - 1].next)
					break;
				p = I->coll_ents[p - 1].next;
			}
			if (dup)
				I->n_coll_ents--;
			else
				I->coll_ents[p - 1].next = (uint32_t)(e + 1);
		}
	}
}

static int assign_collections(ge_tinfo *I, ge_error *err)
{
	const ge_transformer *tr = I->tr;
	if (!tr->assign_collections_handler)
		return GE_OK;
	/* the stock handler has nothing to do without collections */
	if (tr->assign_collections_handler ==
		    ge_assign_renamed_collections_handler &&
	    !I->n_coll_ents)
		return GE_OK;
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		if (w->state != VOP_COPIED)
			continue;
		int rc = tr->assign_collections_handler(
			I, (ge_tref){w->op, GE_CONTROL},
			(ge_tref){w->op_, GE_CONTROL}, tr->assign_collections_ud,
			err);
		if (rc)
			return rc;
		for (uint32_t k = 0; k < w->n; k++) {
			ge_tref t = {w->op, (int32_t)k}, t_;
			if (!ge_tinfo_transformed_t(I, t, &t_))
				continue;
			if ((rc = tr->assign_collections_handler(
				     I, t, t_, tr->assign_collections_ud, err)))
				return rc;
		}
	}
	return GE_OK;
}

/* ---- names inside serialized messages (contexts, VariableDefs) ---- */

/* How a field of a message names things. */
enum {
	K_NAME = 1,   /* op or tensor; dropped when it has no counterpart */
	K_NAME_REQ,   /* op or tensor; the message is dropped without one */
	K_PIVOT,      /* must be a copied op's; else the message is dropped */
	K_CTXNAME,    /* a control-flow context's name */
	K_SCOPED,     /* a name re-scoped like op names */
	K_MSG,        /* a nested message */
	K_MAPENT,     /* map<string, string> entry of names */
};

struct mdesc;
struct fdesc {
	uint32_t num;
	int kind;
	const struct mdesc *sub;
};
struct mdesc {
	const struct fdesc *f;
	size_t n;
	int is_while;
};

/* TensorFlow's control_flow.proto and variable.proto field numbers. */
static const struct mdesc md_cond, md_while;
static const struct fdesc fd_values[] = {
	{1, K_NAME, NULL},   /* values */
	{2, K_MAPENT, NULL}, /* external_values */
};
static const struct mdesc md_values = {fd_values, 2, 0};
static const struct fdesc fd_cfc[] = {
	{1, K_MSG, &md_cond},  /* cond_ctxt */
	{2, K_MSG, &md_while}, /* while_ctxt */
};
static const struct mdesc md_cfc = {fd_cfc, 2, 0};
static const struct fdesc fd_cond[] = {
	{1, K_CTXNAME, NULL},  /* context_name */
	{2, K_NAME_REQ, NULL}, /* pred_name */
	{3, K_PIVOT, NULL},    /* pivot_name */
	{5, K_MSG, &md_values},
	{6, K_MSG, &md_cfc},   /* nested_contexts */
};
static const struct mdesc md_cond = {fd_cond, 5, 0};
static const struct fdesc fd_while[] = {
	{1, K_CTXNAME, NULL},  /* context_name */
	{5, K_PIVOT, NULL},    /* pivot_name */
	{6, K_PIVOT, NULL},    /* pivot_for_pred_name */
	{7, K_PIVOT, NULL},    /* pivot_for_body_name */
	{8, K_NAME, NULL},     /* loop_exit_names */
	{9, K_MSG, &md_values},
	{10, K_NAME, NULL},    /* loop_enter_names */
	{11, K_NAME, NULL},    /* maximum_iterations_name */
	{12, K_MSG, &md_cfc},  /* nested_contexts */
};
static const struct mdesc md_while = {fd_while, 9, 1};
static const struct fdesc fd_slice[] = {
	{1, K_SCOPED, NULL},   /* full_name */
};
static const struct mdesc md_slice = {fd_slice, 1, 0};
static const struct fdesc fd_vardef[] = {
	{1, K_PIVOT, NULL},    /* variable_name */
	{2, K_NAME, NULL},     /* initializer_name */
	{3, K_NAME, NULL},     /* snapshot_name */
	{4, K_MSG, &md_slice}, /* save_slice_info_def */
	{6, K_NAME, NULL},     /* initial_value_name */
};
static const struct mdesc md_vardef = {fd_vardef, 5, 0};

/* The counterpart's name of an op or tensor name, into out. */
static int map_name(ge_tinfo *I, const char *s, int must_copy, ge_buf *out)
{
	int caret = *s == '^';
	const char *body = s + caret;
	ge_tref t;
	out->len = 0;
	if (!lookup_name(I->g, body, &t))
		return 0;
	struct vop *w = vop_of(I, t.op);
	if (must_copy && (!w || w->state != VOP_COPIED))
		return 0;
	if (t.index == GE_CONTROL) {
		ge_opid o = ge_tinfo_transformed_op(I, t.op);
		if (o == GE_NOOP) {
			if (I->g != I->g_)
				return 0;
			o = t.op;
		}
		if (caret)
			ge_buf_addc(out, '^');
		ge_buf_adds(out, ge_op_name(I->g_, o));
		return 1;
	}
	ge_tref t_;
	if (!ge_tinfo_transformed_t(I, t, &t_)) {
		if (I->g != I->g_)
			return 0;
		t_ = t;
	}
	ge_buf_printf(out, "%s:%d", ge_op_name(I->g_, t_.op), t_.index);
	return 1;
}

static void survey_ctx_names(ge_tinfo *I)
{
	static const char *const colls[] = {"cond_context", "while_context"};
	if (I->ctx_names_done)
		return;
	I->ctx_names_done = 1;
	for (size_t c = 0; c < 2; c++) {
		Tensorflow__CollectionDef *cd = ge_collection_get(I->g_, colls[c]);
		if (!cd || cd->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
			continue;
		for (size_t i = 0; i < cd->bytes_list->n_value; i++) {
			const uint8_t *p = cd->bytes_list->value[i].data;
			const uint8_t *e = p + cd->bytes_list->value[i].len;
			uint64_t tag, len;
			/* context_name is field 1 of both kinds */
			if (ge_read_varint(&p, e, &tag) || tag != ((1 << 3) | 2) ||
			    ge_read_varint(&p, e, &len) || len > (uint64_t)(e - p))
				continue;
			char *n = ge_xstrndup((const char *)p, len);
			strmap_put(&I->ctx_names, n, NULL);
			free(n);
		}
	}
	for (size_t i = 0; i < I->dst_frames.cap; i++)
		if (I->dst_frames.k && I->dst_frames.k[i])
			strmap_put(&I->ctx_names, I->dst_frames.k[i], NULL);
}

static void ctx_name(ge_tinfo *I, const char *old, int is_while, ge_buf *out)
{
	out->len = 0;
	const char *nf = is_while ? strmap_get(&I->frame_map, old) : NULL;
	if (nf) {
		ge_buf_adds(out, nf);
		strmap_put(&I->ctx_names, nf, NULL);
		return;
	}
	survey_ctx_names(I);
	ge_buf b = GE_BUF_INIT;
	if (I->keep_frames)
		ge_buf_adds(&b, old);
	else
		scoped_name(I, old, &b);
	char *u = uniquify(&I->ctx_names, (char *)b.data);
	ge_buf_adds(out, u);
	free(u);
	ge_buf_free(&b);
}

static const struct fdesc *fd_find(const struct mdesc *d, uint32_t num)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->f[i].num == num)
			return &d->f[i];
	return NULL;
}

/* Whether every K_PIVOT name at the top of a message has a copy. */
static int pivots_copied(ge_tinfo *I, const struct mdesc *d,
			 const uint8_t *p, const uint8_t *e)
{
	ge_buf tmp = GE_BUF_INIT;
	int ok = 1;
	while (p < e && ok) {
		uint64_t tag, len;
		if (ge_read_varint(&p, e, &tag)) {
			ok = 0;
			break;
		}
		if ((tag & 7) != 2) {
			if (ge_skip_field(&p, e, (int)(tag & 7)))
				ok = 0;
			continue;
		}
		if (ge_read_varint(&p, e, &len) || len > (uint64_t)(e - p)) {
			ok = 0;
			break;
		}
		const struct fdesc *f = fd_find(d, (uint32_t)(tag >> 3));
		if (f && f->kind == K_PIVOT) {
			char *s = ge_xstrndup((const char *)p, len);
			ok = map_name(I, s, 1, &tmp);
			free(s);
		}
		p += len;
	}
	ge_buf_free(&tmp);
	return ok;
}

/* Rewrites a message's names for the copy into out.  Returns 0, or -1 when
 * the message does not describe anything copied (or is malformed). */
static int rewrite_msg(ge_tinfo *I, const struct mdesc *d, const uint8_t *p,
		       const uint8_t *e, ge_buf *out, int depth)
{
	ge_buf sub = GE_BUF_INIT, nm = GE_BUF_INIT;
	int rc = 0;
	/* nesting deeper than any real program is hostile input */
	if (depth > 64 || !pivots_copied(I, d, p, e))
		return -1;
	while (p < e && !rc) {
		const uint8_t *fs = p;
		uint64_t tag, len;
		if (ge_read_varint(&p, e, &tag)) {
			rc = -1;
			break;
		}
		const struct fdesc *f = fd_find(d, (uint32_t)(tag >> 3));
		if ((tag & 7) != 2 || !f) {
			if (ge_skip_field(&p, e, (int)(tag & 7))) {
				rc = -1;
				break;
			}
			ge_buf_add(out, fs, (size_t)(p - fs));
			continue;
		}
		if (ge_read_varint(&p, e, &len) || len > (uint64_t)(e - p)) {
			rc = -1;
			break;
		}
		const uint8_t *body = p, *bend = p + len;
		p = bend;
		uint32_t num = (uint32_t)(tag >> 3);
		char *s = NULL;
		switch (f->kind) {
		case K_NAME:
		case K_NAME_REQ:
		case K_PIVOT:
			s = ge_xstrndup((const char *)body, len);
			if (map_name(I, s, f->kind == K_PIVOT, &nm))
				ge_buf_lenfield(out, num, nm.data, nm.len);
			else if (f->kind != K_NAME)
				rc = -1;
			break;
		case K_CTXNAME:
			s = ge_xstrndup((const char *)body, len);
			ctx_name(I, s, d->is_while, &nm);
			ge_buf_lenfield(out, num, nm.data, nm.len);
			break;
		case K_SCOPED:
			s = ge_xstrndup((const char *)body, len);
			scoped_name(I, s, &nm);
			ge_buf_lenfield(out, num, nm.data, nm.len);
			break;
		case K_MSG:
			sub.len = 0;
			if (rewrite_msg(I, f->sub, body, bend, &sub,
					depth + 1) == 0)
				ge_buf_lenfield(out, num, sub.data, sub.len);
			break;
		case K_MAPENT: {
			/* key (1) and value (2), both names */
			char *kv[2] = {NULL, NULL};
			const uint8_t *q = body;
			int bad = 0;
			while (q < bend && !bad) {
				uint64_t t2, l2;
				if (ge_read_varint(&q, bend, &t2) ||
				    (t2 & 7) != 2 ||
				    ge_read_varint(&q, bend, &l2) ||
				    l2 > (uint64_t)(bend - q)) {
					bad = 1;
					break;
				}
				uint32_t k = (uint32_t)(t2 >> 3);
				if (k == 1 || k == 2) {
					free(kv[k - 1]);
					kv[k - 1] = ge_xstrndup(
						(const char *)q, l2);
				}
				q += l2;
			}
			if (!bad && kv[0] && kv[1]) {
				ge_buf ent = GE_BUF_INIT;
				if (map_name(I, kv[0], 0, &nm)) {
					ge_buf_lenfield(&ent, 1, nm.data,
							nm.len);
					if (map_name(I, kv[1], 0, &nm)) {
						ge_buf_lenfield(&ent, 2, nm.data,
								nm.len);
						ge_buf_lenfield(out, num,
								ent.data,
								ent.len);
					}
				}
				ge_buf_free(&ent);
			}
			free(kv[0]);
			free(kv[1]);
			break;
		}
		}
		free(s);
	}
	ge_buf_free(&sub);
	ge_buf_free(&nm);
	return rc;
}

/* Adds renamed copies of the source's bytes_list entries of collection
 * `name` that describe copied ops to the destination's collection
 * `dst_name`. */
static int copy_described(ge_tinfo *I, const char *name, const char *dst_name,
			  const struct mdesc *d, ge_error *err)
{
	Tensorflow__CollectionDef *c = ge_collection_get(I->g, name);
	if (!c || c->kind_case != TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST)
		return GE_OK;
	/* the destination may be this very collection: stop at its size
	 * now, and fetch it again after each append */
	size_t n = c->bytes_list->n_value;
	ge_buf out = GE_BUF_INIT;
	int rc = GE_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		c = ge_collection_get(I->g, name);
		size_t len = c->bytes_list->value[i].len;
		uint8_t *copy = ge_xmalloc(len ? len : 1);
		memcpy(copy, c->bytes_list->value[i].data, len);
		out.len = 0;
		if (rewrite_msg(I, d, copy, copy + len, &out, 0) == 0)
			rc = ge_collection_add_bytes(I->g_, dst_name,
						     out.data ? out.data
							      : (uint8_t *)"",
						     out.len, err);
		free(copy);
	}
	ge_buf_free(&out);
	return rc;
}

static int copy_contexts(ge_tinfo *I, ge_error *err)
{
	int rc;
	if (!I->tr->copy_control_flow_contexts || !ge_graph_has_meta(I->g))
		return GE_OK;
	if ((rc = copy_described(I, "while_context", "while_context",
				 &md_while, err)))
		return rc;
	return copy_described(I, "cond_context", "cond_context", &md_cond,
			      err);
}

int ge_tinfo_merge_collections(ge_tinfo *I, ge_error *err)
{
	if (!ge_graph_has_meta(I->g))
		return GE_OK;
	size_t nc = ge_collection_count(I->g);
	char **names = ge_xcalloc(nc + 1, sizeof *names);
	for (size_t i = 0; i < nc; i++) {
		const char *n = ge_collection_name(I->g, i);
		names[i] = ge_xstrdup(n ? n : "");
	}
	ge_buf nm = GE_BUF_INIT;
	int rc = GE_OK;
	for (size_t i = 0; i < nc && !rc; i++) {
		Tensorflow__CollectionDef *c = ge_collection_get(I->g, names[i]);
		if (!c)
			continue;
		if (c->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST) {
			size_t n = c->node_list->n_value;
			for (size_t k = 0; k < n && !rc; k++) {
				c = ge_collection_get(I->g, names[i]);
				char *v = ge_xstrdup(c->node_list->value[k]);
				ge_tref t;
				if (lookup_name(I->g, v, &t) && vop_of(I, t.op) &&
				    map_name(I, v, 1, &nm))
					rc = ge_collection_add_node(
						I->g_, names[i], (char *)nm.data,
						err);
				free(v);
			}
		} else if (c->kind_case ==
				   TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST &&
			   ge_collection_holds_variables(names[i])) {
			rc = copy_described(I, names[i], names[i], &md_vardef,
					    err);
		}
	}
	ge_buf_free(&nm);
	for (size_t i = 0; i < nc; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ------------------------------------------------------------ result */

static int make_result(ge_tinfo *I, ge_view *out, ge_error *err)
{
	for (size_t i = 0; i < I->n; i++)
		if (I->vops[i].state == VOP_COPIED) {
			ge_opvec_push(&I->res_src, I->vops[i].op);
			ge_opvec_push(&I->res_dst, I->vops[i].op_);
		}
	/* the inputs' counterparts, even those no op reads (passthroughs) */
	ge_tvec ins = GE_VEC_INIT, outs = GE_VEC_INIT, pass = GE_VEC_INIT;
	int rc = GE_OK;
	for (size_t i = 0; i < I->sgv.inputs.n && !rc; i++) {
		ge_tref t_;
		if (!(rc = resolve(I, I->sgv.inputs.v[i], &t_, err)))
			ge_tvec_push(&ins, t_);
	}
	for (size_t i = 0; i < I->sgv.outputs.n && !rc; i++) {
		ge_tref t = I->sgv.outputs.v[i], t_;
		if (vop_of(I, t.op)) {
			if (ge_tinfo_transformed_t(I, t, &t_))
				ge_tvec_push(&outs, t_);
		} else if (!(rc = resolve(I, t, &t_, err))) {
			ge_tvec_push(&outs, t_);
		}
	}
	for (size_t i = 0; i < I->sgv.passthroughs.n && !rc; i++) {
		ge_tref t_;
		if (!(rc = resolve(I, I->sgv.passthroughs.v[i], &t_, err)))
			ge_tvec_push(&pass, t_);
	}
	if (!rc && out) {
		ge_opvec ops = GE_VEC_INIT;
		for (size_t i = 0; i < I->res_dst.n; i++)
			ge_opvec_push(&ops, I->res_dst.v[i]);
		rc = ge_view_init(out, I->g_, ops.v, ops.n, NULL, 0, err);
		ge_opvec_free(&ops);
		if (!rc) {
			if (!out->graph && (ins.n || outs.n || pass.n)) {
				out->graph = I->g_;
				out->version = ge_graph_version(I->g_);
			}
			ge_tvec_free(&out->inputs);
			ge_tvec_free(&out->outputs);
			ge_tvec_free(&out->passthroughs);
			out->inputs = ins;
			out->outputs = outs;
			out->passthroughs = pass;
			return GE_OK;
		}
	}
	ge_tvec_free(&ins);
	ge_tvec_free(&outs);
	ge_tvec_free(&pass);
	return rc;
}

/* ------------------------------------------------------------ transform */

static int cmp_opid(const void *a, const void *b)
{
	ge_opid x = *(const ge_opid *)a, y = *(const ge_opid *)b;
	return x < y ? -1 : x > y;
}

static char *finalize(const char *s)
{
	return ge_scope_finalize(s ? s : "");
}

static int setup(ge_tinfo *I, const ge_transformer *tr, ge_view *sgv,
		 const ge_transform_opts *o, ge_error *err)
{
	static const ge_transform_opts none = {0};
	int rc;
	if (!o)
		o = &none;
	if (!tr || !tr->transform_op_handler ||
	    !tr->transform_control_input_handler ||
	    !tr->transform_external_input_handler ||
	    !tr->transform_external_hidden_input_handler)
		return ge_err(err, GE_EINVAL, "the transformer lacks a handler");
	if (ge_view_is_empty(sgv) && !o->dst_graph)
		return ge_err(err, GE_EINVAL,
			      "an empty view needs a destination graph");
	if (!ge_view_is_empty(sgv) && (rc = ge_view_check(sgv, err)))
		return rc;
	I->tr = tr;
	I->g = sgv->graph ? sgv->graph : o->dst_graph;
	I->g_ = o->dst_graph ? o->dst_graph : I->g;
	I->keep_frames = o->keep_frame_names;
	I->cur_op = GE_NOOP;
	ge_view_copy(&I->sgv, sgv);
	I->scope = finalize(o->src_scope);
	I->scope_ = finalize(o->dst_scope);
	if (*I->scope_ && !o->reuse_dst_scope) {
		I->scope_[strlen(I->scope_) - 1] = 0;
		const char *u = ge_graph_unique_name(I->g_, I->scope_);
		free(I->scope_);
		I->scope_ = finalize(u);
	}

	I->n = sgv->ops.n;
	I->order = ge_xmalloc((I->n + 1) * sizeof *I->order);
	if (I->n)
		memcpy(I->order, sgv->ops.v, I->n * sizeof *I->order);
	qsort(I->order, I->n, sizeof *I->order, cmp_opid);
	I->pos_cap = ge_graph_capacity(I->g);
	/* calloc: zero pages are only touched where the view lies */
	I->pos = ge_xcalloc(I->pos_cap + 1, sizeof *I->pos);
	I->vops = ge_xcalloc(I->n + 1, sizeof *I->vops);
	size_t k = 0;
	for (size_t i = 0; i < I->n; i++) {
		ge_opid op = I->order[i];
		if (I->pos[op])
			continue;
		I->order[k] = op;
		I->pos[op] = (uint32_t)(k + 1);
		I->vops[k].op = op;
		I->vops[k].op_ = GE_NOOP;
		if (!I->has_enter && is_enter(ge_op_type(I->g, op)))
			I->has_enter = 1;
		k++;
	}
	I->n = k;

	ge_tmap_init(&I->inset, sgv->inputs.n);
	for (size_t i = 0; i < sgv->inputs.n; i++)
		ge_tmap_put(&I->inset, sgv->inputs.v[i], i);
	ge_tmap_init(&I->ext, sgv->inputs.n);
	ge_tmap_init(&I->stand, 0);
	ge_tmap_init(&I->imap, o->n_input_map);
	I->imap_to = ge_xmalloc((o->n_input_map + 1) * sizeof *I->imap_to);
	for (size_t i = 0; i < o->n_input_map; i++) {
		ge_tref f = o->input_map[i].from, t = o->input_map[i].to;
		if (f.op == GE_NOOP || !ge_op_alive(I->g, f.op))
			return ge_err(err, GE_EINVAL,
				      "input_map: entry %zu names no op of the "
				      "source graph", i + 1);
		if (t.op == GE_NOOP || !ge_op_alive(I->g_, t.op) ||
		    (f.index == GE_CONTROL) != (t.index == GE_CONTROL))
			return ge_err(err, GE_EINVAL,
				      "input_map: '%s' is not mapped to a %s "
				      "of the destination graph",
				      ge_op_name(I->g, f.op),
				      f.index == GE_CONTROL ? "op" : "tensor");
		I->imap_to[i] = t;
		if (!ge_tmap_put(&I->imap, f, i))
			return ge_err(err, GE_EINVAL,
				      "input_map: '%s' is mapped twice",
				      ge_op_name(I->g, f.op));
	}
	if (I->has_enter)
		survey_frames(I);
	if (tr->assign_collections_handler && ge_graph_has_meta(I->g))
		snapshot_collections(I);
	return GE_OK;
}

static void rollback(ge_graph *g, size_t first_new)
{
	for (size_t id = ge_graph_capacity(g); id-- > first_new;)
		if (ge_op_alive(g, (ge_opid)id))
			ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
}

static int transform_bind(const ge_transformer *tr, ge_view *sgv,
			  const ge_transform_opts *o, const char *const *bind,
			  const ge_tref *bind_to, size_t n_bind, ge_view *out,
			  ge_tinfo **info, ge_error *err)
{
	ge_tinfo *I = ge_xcalloc(1, sizeof *I);
	ge_graph *dst = o && o->dst_graph ? o->dst_graph : sgv->graph;
	size_t first_new = dst ? ge_graph_capacity(dst) : 0;
	int rc = setup(I, tr, sgv, o, err);
	if (!rc && n_bind) {
		I->bind_name = ge_xcalloc(n_bind, sizeof *I->bind_name);
		I->bind_to = ge_xmalloc(n_bind * sizeof *I->bind_to);
		for (size_t i = 0; i < n_bind; i++) {
			I->bind_name[i] = ge_xstrdup(bind[i]);
			I->bind_to[i] = bind_to[i];
		}
		I->n_bind = n_bind;
	}
	if (!rc)
		rc = copy_ops(I, err);
	if (!rc)
		rc = finish_stand_ins(I, err);
	if (!rc)
		rc = add_control_inputs(I, err);
	if (!rc) {
		remap_colocation(I);
		rename_frames(I);
		rc = assign_collections(I, err);
	}
	if (!rc)
		rc = copy_contexts(I, err);
	if (!rc)
		rc = make_result(I, out, err);
	if (rc) {
		if (dst)
			rollback(dst, first_new);
		ge_tinfo_free(I);
		if (info)
			*info = NULL;
		return rc;
	}
	/* a whole MetaGraphDef into another graph keeps its saver */
	ge_meta_carry(I);
	/* the handlers may live on the caller's stack */
	I->tr = NULL;
	if (info)
		*info = I;
	else
		ge_tinfo_free(I);
	return GE_OK;
}

int ge_transform(const ge_transformer *tr, ge_view *sgv,
		 const ge_transform_opts *o, ge_view *out, ge_tinfo **info,
		 ge_error *err)
{
	return transform_bind(tr, sgv, o, NULL, NULL, 0, out, info, err);
}

int ge_transform_bind(const ge_transformer *tr, ge_view *sgv,
		      const ge_transform_opts *o, const char *const *bind,
		      const ge_tref *bind_to, size_t n_bind, ge_view *out,
		      ge_tinfo **info, ge_error *err)
{
	return transform_bind(tr, sgv, o, bind, bind_to, n_bind, out, info,
			      err);
}

int ge_copy(ge_view *sgv, const ge_transform_opts *o, ge_view *out,
	    ge_tinfo **info, ge_error *err)
{
	ge_transformer tr;
	ge_transformer_init(&tr);
	return ge_transform(&tr, sgv, o, out, info, err);
}

/* copy_with_input_replacements' external input handler: a replaced
 * tensor gets its replacement, any other is kept if possible. */
static int replacement_handler(ge_tinfo *I, ge_tref t, ge_tref *t_, void *ud,
			       ge_error *err)
{
	struct ge_repl_handler *r = ud;
	size_t v;
	if (ge_tmap_get(&r->map, t, &v)) {
		*t_ = r->repl[v].to;
		return GE_OK;
	}
	return ge_keep_t_if_possible_handler(I, t, t_, NULL, err);
}

int ge_repl_handler_init(struct ge_repl_handler *r, ge_transformer *tr,
			 const ge_view *sgv, const ge_tpair *repl,
			 size_t n_repl, const ge_transform_opts *o,
			 ge_error *err)
{
	ge_graph *dst = o && o->dst_graph ? o->dst_graph : sgv->graph;
	r->repl = repl;
	ge_tmap_init(&r->map, n_repl);
	for (size_t i = 0; i < n_repl; i++) {
		if (repl[i].to.op == GE_NOOP || !dst ||
		    !ge_op_alive(dst, repl[i].to.op) || repl[i].to.index < 0)
			return ge_err(err, GE_EINVAL,
				      "replacement %zu is not a tensor of the "
				      "destination graph", i + 1);
		if (!ge_tmap_put(&r->map, repl[i].from, i))
			return ge_err(err, GE_EINVAL,
				      "tensor '%s:%d' is replaced twice",
				      sgv->graph ? ge_op_name(sgv->graph,
							      repl[i].from.op)
						 : "?",
				      repl[i].from.index);
	}
	tr->transform_external_input_handler = replacement_handler;
	tr->transform_external_input_ud = r;
	return GE_OK;
}

void ge_repl_handler_free(struct ge_repl_handler *r)
{
	ge_tmap_free(&r->map);
}

int ge_copy_with_input_replacements(ge_view *sgv, const ge_tpair *repl,
				    size_t n_repl, const ge_transform_opts *o,
				    ge_view *out, ge_tinfo **info,
				    ge_error *err)
{
	struct ge_repl_handler r;
	ge_transformer tr;
	ge_transformer_init(&tr);
	int rc = ge_repl_handler_init(&r, &tr, sgv, repl, n_repl, o, err);
	if (!rc)
		rc = ge_transform(&tr, sgv, o, out, info, err);
	ge_repl_handler_free(&r);
	return rc;
}

/* ------------------------------------------------------------ loops */

/* Which while loop each op is in, the way TensorFlow's executor decides
 * it: an Enter starts its frame (a child of its input's frame), an Exit's
 * consumers are in the parent frame, any other op is in the frame of its
 * first input.  Frames are numbered from 1 (0 is the root). */
struct frames {
	const ge_graph *g;
	int32_t *fr;          /* per op: frame, -1 unknown, -2 in progress */
	char **names;         /* frame i+1's name */
	int32_t *parent;      /* frame i+1's parent, -1 unknown */
	ge_opvec *enters, *exits;
	size_t n;
	strmap idx;           /* name -> "index" */
};

static int32_t frame_id(struct frames *F, const char *name)
{
	const char *v = strmap_get(&F->idx, name);
	if (v)
		return (int32_t)strtol(v, NULL, 10);
	F->names = ge_xrealloc(F->names, (F->n + 1) * sizeof *F->names);
	F->parent = ge_xrealloc(F->parent, (F->n + 1) * sizeof *F->parent);
	F->enters = ge_xrealloc(F->enters, (F->n + 1) * sizeof *F->enters);
	F->exits = ge_xrealloc(F->exits, (F->n + 1) * sizeof *F->exits);
	F->names[F->n] = ge_xstrdup(name);
	F->parent[F->n] = -1;
	F->enters[F->n] = (ge_opvec)GE_VEC_INIT;
	F->exits[F->n] = (ge_opvec)GE_VEC_INIT;
	F->n++;
	char num[32];
	snprintf(num, sizeof num, "%zu", F->n);
	strmap_put(&F->idx, name, num);
	return (int32_t)F->n;
}

static void frames_free(struct frames *F)
{
	for (size_t i = 0; i < F->n; i++) {
		free(F->names[i]);
		ge_opvec_free(&F->enters[i]);
		ge_opvec_free(&F->exits[i]);
	}
	free(F->names);
	free(F->parent);
	free(F->enters);
	free(F->exits);
	free(F->fr);
	strmap_free(&F->idx);
}

/* The op whose frame op inherits: its first input's producer. */
static ge_opid frame_dep(const ge_graph *g, ge_opid op)
{
	size_t n = ge_op_num_inputs(g, op);
	for (size_t i = 0; i < n; i++) {
		ge_tref t = ge_op_input(g, op, i);
		if (t.op != GE_NOOP)
			return t.op;
	}
	n = ge_op_num_control_inputs(g, op);
	for (size_t i = 0; i < n; i++) {
		ge_opid c = ge_op_control_input(g, op, i);
		if (c != GE_NOOP)
			return c;
	}
	return GE_NOOP;
}

/* The frame the consumers of d are in. */
static int32_t out_frame(struct frames *F, ge_opid d)
{
	int32_t f = F->fr[d];
	if (f > 0 && is_exit(ge_op_type(F->g, d)))
		return F->parent[f - 1] > 0 ? F->parent[f - 1] : 0;
	return f;
}

static void settle(struct frames *F, ge_opid y, int32_t base)
{
	if (is_enter(ge_op_type(F->g, y))) {
		char *nm = frame_of(F->g, y);
		int32_t f = frame_id(F, nm ? nm : "");
		free(nm);
		if (F->parent[f - 1] < 0)
			F->parent[f - 1] = base;
		F->fr[y] = f;
	} else {
		F->fr[y] = base;
	}
}

static int32_t frame_of_op(struct frames *F, ge_opid x, ge_opvec *stack)
{
	stack->n = 0;
	ge_opvec_push(stack, x);
	while (stack->n) {
		ge_opid y = stack->v[stack->n - 1];
		if (F->fr[y] >= 0) {
			stack->n--;
			continue;
		}
		ge_opid d = frame_dep(F->g, y);
		if (d == GE_NOOP) {
			settle(F, y, 0);
			stack->n--;
			continue;
		}
		if (F->fr[d] == -1) {
			F->fr[y] = -2;
			ge_opvec_push(stack, d);
			continue;
		}
		/* -2: a cycle not entered through a Merge's first input */
		settle(F, y, F->fr[d] == -2 ? 0 : out_frame(F, d));
		stack->n--;
	}
	return F->fr[x];
}

/* graph_editor's _add_control_flow_ops: every while loop an op of ops is
 * in is added whole (the ops between its Enters and its Exits). */
static int add_loop_ops(ge_graph *g, ge_opvec *ops, ge_error *err)
{
	struct frames F;
	memset(&F, 0, sizeof F);
	F.g = g;
	size_t cap = ge_graph_capacity(g);
	ge_opvec enters = GE_VEC_INIT, exits = GE_VEC_INIT;
	for (size_t id = 0; id < cap; id++) {
		if (!ge_op_alive(g, (ge_opid)id))
			continue;
		const char *t = ge_op_type(g, (ge_opid)id);
		if ((t[0] == 'E' || t[0] == 'R') && is_enter(t))
			ge_opvec_push(&enters, (ge_opid)id);
		else if ((t[0] == 'E' || t[0] == 'R') && is_exit(t))
			ge_opvec_push(&exits, (ge_opid)id);
	}
	int rc = GE_OK;
	if (!enters.n)
		goto out;
	F.fr = ge_xmalloc(cap * sizeof *F.fr);
	for (size_t i = 0; i < cap; i++)
		F.fr[i] = -1;
	ge_opvec stack = GE_VEC_INIT;
	for (size_t i = 0; i < enters.n; i++) {
		int32_t f = frame_of_op(&F, enters.v[i], &stack);
		ge_opvec_push(&F.enters[f - 1], enters.v[i]);
	}
	for (size_t i = 0; i < exits.n; i++) {
		int32_t f = frame_of_op(&F, exits.v[i], &stack);
		if (f > 0)
			ge_opvec_push(&F.exits[f - 1], exits.v[i]);
	}
	uint8_t *want = ge_xcalloc(F.n + 1, 1);
	for (size_t i = 0; i < ops->n; i++) {
		int32_t f = frame_of_op(&F, ops->v[i], &stack);
		if (f > 0)
			want[f - 1] = 1;
	}
	ge_opset have;
	ge_opset_init(&have, g);
	ge_opset_add_list(&have, ops->v, ops->n);
	for (size_t f = 0; f < F.n && !rc; f++) {
		if (!want[f] || !F.exits[f].n)
			continue;
		ge_seeds fwd = {F.enters[f].v, F.enters[f].n, NULL, 0};
		ge_seeds bwd = {F.exits[f].v, F.exits[f].n, NULL, 0};
		ge_walk_opts fo = GE_WALK_OPTS_INIT, bo = GE_WALK_OPTS_INIT;
		fo.control = bo.control = 1;
		ge_opvec loop = GE_VEC_INIT;
		rc = ge_get_walks_intersection_ops(g, &fwd, &bwd, &fo, &bo,
						   &loop, err);
		for (size_t i = 0; i < loop.n && !rc; i++)
			if (ge_opset_insert(&have, loop.v[i]))
				ge_opvec_push(ops, loop.v[i]);
		ge_opvec_free(&loop);
	}
	ge_opset_free(&have);
	free(want);
	ge_opvec_free(&stack);
out:
	ge_opvec_free(&enters);
	ge_opvec_free(&exits);
	frames_free(&F);
	return rc;
}

int ge_graph_replace_view(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, ge_view *v, ge_error *err)
{
	for (size_t i = 0; i < n_targets; i++)
		if (targets[i].op == GE_NOOP || !ge_op_alive(g, targets[i].op) ||
		    targets[i].index < 0)
			return ge_err(err, GE_EINVAL,
				      "target %zu is not a tensor of the graph",
				      i + 1);
	ge_tref *from = ge_xmalloc((n_repl + 1) * sizeof *from);
	for (size_t i = 0; i < n_repl; i++)
		from[i] = repl[i].from;
	ge_seeds fwd = {NULL, 0, from, n_repl};
	ge_seeds bwd = {NULL, 0, targets, n_targets};
	ge_walk_opts fo = GE_WALK_OPTS_INIT, bo = GE_WALK_OPTS_INIT;
	fo.control = bo.control = 1;
	ge_opvec ops = GE_VEC_INIT;
	int rc = ge_get_walks_intersection_ops(g, &fwd, &bwd, &fo, &bo, &ops,
					       err);
	if (!rc && !ops.n)
		rc = ge_err(err, GE_EINVAL,
			    "targets and replacements are not connected");
	if (!rc)
		rc = add_loop_ops(g, &ops, err);
	if (!rc)
		rc = ge_view_init(v, g, ops.v, ops.n, NULL, 0, err);
	ge_opvec_free(&ops);
	free(from);
	return rc;
}

int ge_graph_replace(ge_graph *g, const ge_tref *targets, size_t n_targets,
		     const ge_tpair *repl, size_t n_repl,
		     const ge_transform_opts *o, ge_tref *out, ge_tinfo **info,
		     ge_error *err)
{
	ge_transform_opts opts = {0};
	if (o)
		opts = *o;
	if (opts.dst_graph && opts.dst_graph != g)
		return ge_err(err, GE_EINVAL,
			      "graph_replace works within one graph");
	opts.dst_graph = g;
	ge_view v = GE_VIEW_INIT;
	ge_tinfo *I = NULL;
	int rc = ge_graph_replace_view(g, targets, n_targets, repl, n_repl, &v,
				       err);
	if (!rc)
		rc = ge_copy_with_input_replacements(&v, repl, n_repl, &opts,
						     NULL, &I, err);
	if (!rc && out)
		for (size_t i = 0; i < n_targets; i++)
			if (!ge_tinfo_transformed_t(I, targets[i], &out[i]))
				out[i] = targets[i];
	if (!rc && info)
		*info = I;
	else
		ge_tinfo_free(I);
	ge_view_free(&v);
	return rc;
}
