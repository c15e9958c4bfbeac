/*
 * transform_coll.c: collections and control-flow contexts of a transform:
 * the snapshot taken before copying, the renamed collections of the copy,
 * and the names inside serialized context messages.
 */
#include "editor/transform_impl.h"
#include "base/wire.h"

/* ------------------------------------------------------------ collections */

void ge_tx_snapshot_collections(ge_tinfo *I)
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
			if (!ge_tx_lookup_name(I->g, c->node_list->value[k], &t) ||
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

int ge_tx_assign_collections(ge_tinfo *I, ge_error *err)
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
	if (!ge_tx_lookup_name(I->g, body, &t))
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
	ge_tensor_put(I->g_, t_, 0, out);
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
			ge_wire w = ge_wire_of(cd->bytes_list->value[i].data,
					       cd->bytes_list->value[i].len);
			ge_wire_field f;
			/* context_name is field 1 of both kinds, and first */
			if (!ge_wire_next(&w, &f) || !ge_wire_is_len(&f, 1))
				continue;
			char *n = ge_xstrndup((const char *)f.data, f.len);
			ge_tx_strmap_put(&I->ctx_names, n, NULL);
			free(n);
		}
	}
	for (size_t i = 0; i < I->dst_frames.cap; i++)
		if (I->dst_frames.k && I->dst_frames.k[i])
			ge_tx_strmap_put(&I->ctx_names, I->dst_frames.k[i], NULL);
}

static void ctx_name(ge_tinfo *I, const char *old, int is_while, ge_buf *out)
{
	out->len = 0;
	const char *nf = is_while ? ge_tx_strmap_get(&I->frame_map, old) : NULL;
	if (nf) {
		ge_buf_adds(out, nf);
		ge_tx_strmap_put(&I->ctx_names, nf, NULL);
		return;
	}
	survey_ctx_names(I);
	ge_buf b = GE_BUF_INIT;
	if (I->keep_frames)
		ge_buf_adds(&b, old);
	else
		ge_tx_scoped_name(I, old, &b);
	char *u = ge_tx_uniquify(&I->ctx_names, (char *)b.data);
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
	ge_wire w = {p, e, 0};
	ge_wire_field x;
	while (ok && ge_wire_next(&w, &x)) {
		if (x.wt != GE_WT_LEN)
			continue;
		const struct fdesc *f = fd_find(d, x.num);
		if (f && f->kind == K_PIVOT) {
			char *s = ge_xstrndup((const char *)x.data, x.len);
			ok = map_name(I, s, 1, &tmp);
			free(s);
		}
	}
	if (w.bad)
		ok = 0;
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
	ge_wire w = {p, e, 0};
	ge_wire_field x;
	while (!rc && ge_wire_next(&w, &x)) {
		const struct fdesc *f = fd_find(d, x.num);
		if (x.wt != GE_WT_LEN || !f) {
			ge_buf_add(out, x.start, (size_t)(w.p - x.start));
			continue;
		}
		const uint8_t *body = x.data, *bend = x.data + x.len;
		size_t len = x.len;
		uint32_t num = x.num;
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
			ge_tx_scoped_name(I, s, &nm);
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
			ge_wire mw = {body, bend, 0};
			ge_wire_field m;
			int bad = 0;
			while (!bad && ge_wire_next(&mw, &m)) {
				if (m.wt != GE_WT_LEN) {
					bad = 1;
					break;
				}
				if (m.num == GE_MAPENTRY_KEY ||
				    m.num == GE_MAPENTRY_VALUE) {
					free(kv[m.num - 1]);
					kv[m.num - 1] = ge_xstrndup(
						(const char *)m.data, m.len);
				}
			}
			bad |= mw.bad;
			if (!bad && kv[0] && kv[1]) {
				ge_buf ent = GE_BUF_INIT;
				if (map_name(I, kv[0], 0, &nm)) {
					ge_buf_lenfield(&ent, GE_MAPENTRY_KEY, nm.data,
							nm.len);
					if (map_name(I, kv[1], 0, &nm)) {
						ge_buf_lenfield(&ent, GE_MAPENTRY_VALUE, nm.data,
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
	if (w.bad)
		rc = -1;
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

int ge_tx_copy_contexts(ge_tinfo *I, ge_error *err)
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
				if (ge_tx_lookup_name(I->g, v, &t) && vop_of(I, t.op) &&
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
