/*
 * tinfo.c: the transform's string maps, the ge_tinfo queries and the
 * default handlers (transform.h).
 */
#include "editor/transform_impl.h"
#include "graph/graph_copy.h"

/* ------------------------------------------------------------ strings */

void ge_tx_strmap_free(strmap *m)
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

const char *ge_tx_strmap_get(const strmap *m, const char *k)
{
	if (!m->n)
		return NULL;
	size_t i = strmap_find(m, k);
	return m->k[i] ? (m->v[i] ? m->v[i] : m->k[i]) : NULL;
}

int ge_tx_strmap_has(const strmap *m, const char *k)
{
	return ge_tx_strmap_get(m, k) != NULL;
}

/* Inserts k (-> v, may be NULL) unless present. */
void ge_tx_strmap_put(strmap *m, const char *k, const char *v)
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
char *ge_tx_uniquify(strmap *m, const char *base)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_adds(&b, base);
	for (unsigned i = 1; ge_tx_strmap_has(m, (char *)b.data); i++) {
		b.len = 0;
		ge_buf_printf(&b, "%s_%u", base, i);
	}
	ge_tx_strmap_put(m, (char *)b.data, NULL);
	return (char *)ge_buf_steal(&b, NULL);
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
	if (I->sgv_lazy) {
		/* a cache of what the vops say, as result_pairs */
		ge_tinfo *m = (ge_tinfo *)I;
		ge_opvec *ops = &m->sgv.ops;
		ops->v = ge_xmalloc((I->n + 1) * sizeof *ops->v);
		ops->cap = I->n + 1;
		for (size_t i = 0; i < I->n; i++)
			ops->v[i] = I->vops[i].op;
		ops->n = I->n;
		m->sgv_lazy = 0;
	}
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
	/* TensorFlow's scope rule: scope `W` holds the op `W` (a variable)
	 * as well as `W/read`; its copy is named like the destination scope */
	if (n > 1 && I->scope[n - 1] == '/' && strlen(name) == n - 1 &&
	    !strncmp(name, I->scope, n - 1)) {
		size_t m = strlen(I->scope_);
		const char *base = strrchr(name, '/');
		if (m > 1 && I->scope_[m - 1] == '/')
			ge_buf_add(out, I->scope_, m - 1);
		else
			ge_buf_adds(out, base ? base + 1 : name);
		return GE_OK;
	}
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
void ge_tx_scoped_name(const ge_tinfo *I, const char *name, ge_buf *out)
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
int ge_tx_lookup_name(const ge_graph *g, const char *name, ge_tref *out)
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
	if (!ge_tx_lookup_name(I->g, name, &t))
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
	if (!ge_tx_lookup_name(I->g_, name, &t))
		return 0;
	if (t.index == GE_CONTROL) {
		ge_opid o = ge_tinfo_original_op(I, t.op);
		*out = (ge_tref){o, GE_CONTROL};
		return o != GE_NOOP;
	}
	return ge_tinfo_original_t(I, t, out);
}

/* The copied ops' pairs, made on first use (the info is const to its
 * readers: this fills a cache of what the vops say). */
static void result_pairs(const ge_tinfo *I)
{
	if (I->res_done)
		return;
	ge_tinfo *m = (ge_tinfo *)I;
	m->res_src.v = ge_xmalloc((I->n_res + 1) * sizeof *m->res_src.v);
	m->res_dst.v = ge_xmalloc((I->n_res + 1) * sizeof *m->res_dst.v);
	m->res_src.cap = m->res_dst.cap = I->n_res + 1;
	size_t nr = 0;
	for (size_t i = 0; i < I->n && nr < I->n_res; i++)
		if (I->vops[i].state == VOP_COPIED) {
			m->res_src.v[nr] = I->vops[i].op;
			m->res_dst.v[nr++] = I->vops[i].op_;
		}
	m->res_src.n = m->res_dst.n = nr;
	m->res_done = 1;
}

size_t ge_tinfo_ops(const ge_tinfo *I, const ge_opid **src,
		    const ge_opid **dst)
{
	result_pairs(I);
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
	result_pairs(I);
	for (size_t i = 0; i < I->res_src.n; i++)
		ge_buf_printf(out, "  %s => %s\n",
			      ge_op_name(I->g, I->res_src.v[i]),
			      ge_op_name(I->g_, I->res_dst.v[i]));
}

void ge_tinfo_summary(const ge_tinfo *I, ge_buf *out)
{
	const char *gn = ge_graph_name(I->g), *gn_ = ge_graph_name(I->g_);
	ge_buf_printf(out, "transform info: %zu op%s \"%s\" => \"%s\"",
		      I->n_res, I->n_res == 1 ? "" : "s", gn, gn_);
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
	ge_big_free(I->vops);
	ge_big_free(I->pos);
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
	ge_tx_strmap_free(&I->dst_frames);
	ge_tx_strmap_free(&I->frame_map);
	ge_tx_strmap_free(&I->ctx_names);
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
	ge_tx_scratch_free(I);
	free(I);
}

void ge_tx_scratch_free(ge_tinfo *I)
{
	ge_opvec_free(&I->fast);
	ge_link_scratch_free(&I->link);
	for (size_t i = 0; i < TX_AHEAD; i++)
		I->ahead[i].at = 0;
	I->room = NULL;
	I->room_left = 0;
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

/* Whether a copy of op reading new_inputs may have other shapes than op:
 * another input count, or an input not known to keep its shape. */
int ge_tx_inputs_changed(ge_tinfo *I, ge_opid op, const ge_tref *new_inputs,
			 size_t n_inputs)
{
	size_t nin = ge_op_num_inputs(I->g, op);
	if (nin != n_inputs)
		return 1;
	for (size_t k = 0; k < nin; k++) {
		ge_tref t = ge_op_input(I->g, op, k);
		if (t.op != GE_NOOP && !same_shape(I, t, new_inputs[k]))
			return 1;
	}
	return 0;
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
	/* the op named like the destination scope (a variable `W` beside
	 * `W/read`) takes that name, which the scope itself reserved */
	size_t sl = strlen(I->scope_);
	const char *un =
		sl > 1 && nb.len == sl - 1 &&
				!strncmp((char *)nb.data, I->scope_, sl - 1) &&
				ge_graph_find(g_, (char *)nb.data) == GE_NOOP
			? (const char *)nb.data
			: ge_graph_unique_name(g_, (char *)nb.data);
	ge_opid id = ge_graph_add_op(g_, un, ge_op_type(g, op), err);
	ge_buf_free(&nb);
	if (id == GE_NOOP)
		return GE_EINVAL;
	const char *dev = ge_op_device(g, op);
	if (*dev)
		ge_op_set_device(g_, id, dev);
	size_t na = ge_op_num_attrs(g, op), nk = 0;
	int has_shapes = 0;
	/* all at once: the copy's attrs live in its graph's arena */
	const char *keys_s[16];
	const uint8_t *raws_s[16];
	size_t lens_s[16];
	const char **keys = keys_s;
	const uint8_t **raws = raws_s;
	size_t *lens = lens_s;
	if (na > 16) {
		keys = ge_xmalloc(na * sizeof *keys);
		raws = ge_xmalloc(na * sizeof *raws);
		lens = ge_xmalloc(na * sizeof *lens);
	}
	for (size_t a = 0; a < na; a++) {
		const char *key = ge_op_attr_name(g, op, a);
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, op, key, &len);
		if (!raw)
			continue;
		if (!strcmp(key, "_output_shapes"))
			has_shapes = 1;
		keys[nk] = key;
		raws[nk] = raw;
		lens[nk++] = len;
	}
	ge_op_add_attrs_raw(g_, id, nk, keys, raws, lens);
	if (keys != keys_s) {
		free(keys);
		free(raws);
		free(lens);
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
		int changed = ge_tx_inputs_changed(I, op, new_inputs, n_inputs);
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

void ge_tx_tref_name(const ge_graph *g, ge_tref t, ge_buf *out)
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
	ge_tx_tref_name(I->g_, elem_, &val);
	int rc = GE_OK;
	for (size_t e = v; e && !rc; e = I->coll_ents[e - 1].next) {
		const char *name = I->coll_names[I->coll_ents[e - 1].coll];
		if (ge_is_predefined_collection(name)) {
			key.len = 0;
			ge_buf_adds(&key, name);
		} else {
			ge_tx_scoped_name(I, name, &key);
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
	t->transform_op_handler = NULL; /* ge_copy_op_handler */
	t->transform_control_input_handler = ge_transform_op_if_inside_handler;
	t->transform_external_input_handler =
		ge_replace_t_with_placeholder_handler;
	t->transform_external_hidden_input_handler =
		ge_keep_t_if_possible_handler;
	t->assign_collections_handler = ge_assign_renamed_collections_handler;
	t->copy_control_flow_contexts = 1;
}
