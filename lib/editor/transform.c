/*
 * transform.c: Transformer, copy, copy_with_input_replacements and
 * graph_replace (see transform.h for the contract).
 *
 * A transform runs in passes over the view's ops in node order:
 *   1. copy: every op gets its counterpart from the op handler; inputs
 *      come from earlier copies, the input handlers (once per tensor), or,
 *      for an op not copied yet, a temporary stand-in placeholder (the
 *      stock handler's copy within one graph shares the source's attr
 *      bytes where it can: copy_op_fast);
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
#include <assert.h>

#include "editor/transform_impl.h"
#include "analyses/frames.h"
#include "graph/graph_copy.h"
#include "editor/provenance.h"

/* ------------------------------------------------------------ copy pass */

static int check_dst_tensor(ge_tinfo *I, ge_tref t, const char *what,
			    ge_tref src, ge_error *err)
{
	if (t.op != GE_NOOP && ge_op_alive(I->g_, t.op) && t.index >= 0)
		return GE_OK;
	ge_buf b = GE_BUF_INIT;
	ge_tx_tref_name(I->g, src, &b);
	int rc = ge_err(err, GE_EINVAL,
			"%s for '%s' did not return a tensor of the "
			"destination graph",
			what, (char *)b.data);
	ge_buf_free(&b);
	return rc;
}

/* Copies made by copy_op_fast join their producers' consumer
 * lists: at the end of the copy pass, and before a handler other than
 * the op handler runs (it may look at consumers). */
static void flush_fast(ge_tinfo *I)
{
	ge_graph_link_inputs(I->g_, I->fast.v, I->fast.n, &I->link);
	I->fast.n = 0;
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
	flush_fast(I);
	I->ran_handler = 1;
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

/* ------------------------------------------------------------ fast copies */

/* fast_name's name in room of its own. */
static char *fast_name_room(ge_tinfo *I, const char *rest, size_t n,
			    size_t *len)
{
	size_t dn = I->dst_scope_len;
	char *p = ge_graph_name_room(I->g_, dn + n);
	memcpy(p, I->scope_, dn);
	memcpy(p + dn, rest, n + 1);
	*len = dn + n;
	return p;
}

/* The copy's name, in room of the destination's arena (len bytes), when
 * new_name's plain case gives it; else NULL: the stock handler takes the
 * others (the scope's own op, names outside the scope). */
static char *fast_name(ge_tinfo *I, ge_opid op, size_t *len)
{
	const char *nm = ge_op_name(I->g, op);
	size_t sn = I->scope_len, dn = I->dst_scope_len;
	if (sn && strncmp(nm, I->scope, sn))
		return NULL;
	size_t rest = strlen(nm + sn), need = dn + rest + 1;
	char *p;
	/* names are carved from pieces of the destination's arena */
	if (need > I->room_left) {
		enum { PIECE = 4096 };
		if (need > PIECE / 4)
			return fast_name_room(I, nm + sn, rest, len);
		I->room = ge_graph_name_room(I->g_, PIECE - 1);
		I->room_left = PIECE;
	}
	p = I->room;
	I->room += need;
	I->room_left -= need;
	ge_copy_short(p, I->scope_, dn);
	ge_copy_short(p + dn, nm + sn, rest + 1);
	*len = dn + rest;
	return p;
}

/* After the copy of the op at position i: the name of the copy of the op
 * TX_AHEAD positions later, made now so that its index slot is in the cache
 * when its turn comes. */
static void look_ahead(ge_tinfo *I, size_t i)
{
	size_t j = i + TX_AHEAD;
	struct tx_ahead *a = &I->ahead[j % TX_AHEAD];
	a->at = 0;
	if (j >= I->n || !(a->name = fast_name(I, I->vops[j].op, &a->len)))
		return;
	a->h = ge_hash_ci(a->name, a->len);
	a->at = j + 1;
	ge_graph_prefetch_name(I->g_, a->h);
}

/* ge_copy_op_handler's work for a copy within one graph, done by
 * sharing the source's attr bytes (graph_copy.h): returns 1 when done,
 * 0 when the stock handler must do it.  changed: whether the new inputs
 * may change the shapes (ge_tx_inputs_changed's answer), or -1 to ask it
 * here.  The copy *op_ has the source's *nout outputs as its own: *vflags
 * gets VOF_IDENT, VOF_SHAPE_SAME where it keeps the source's shapes and
 * VOF_NO_CLASS where it has no `_class`.  The copy is appended to
 * I->fast (room made by the caller), for ge_graph_link_inputs.  own: every
 * input is an output of a copy made in this pass (copy_inputs). */
static int copy_op_fast(ge_tinfo *I, ge_opid op, const ge_tref *new_inputs,
			size_t n_inputs, int changed, int own,
			const ge_copy_op_opts *co, ge_opid *op_,
			unsigned *vflags, uint32_t *nout)
{
	ge_graph *g = I->g;
	const uint8_t *run;
	size_t len;
	unsigned fl;
	/* the contract of the fast path (copy_ops): the stock copy, without
	 * a nodedef hook, within one graph */
	assert(!I->tr->transform_op_handler && !(co && co->nodedef_fn) &&
	       I->g_ == g);
	if (I->g_ != g ||
	    !(op < I->n_cls
		      ? ge_op_attr_run_like(g, op, I->cls[op], &run, &len, &fl)
		      : ge_op_attr_run(g, op, &run, &len, &fl)))
		return 0;
	size_t at = I->pos[op] - 1;
	struct tx_ahead *a = &I->ahead[at % TX_AHEAD];
	const char *nm = a->name;
	size_t nl = a->len;
	uint32_t h = a->h;
	if (a->at != at + 1) {
		if (!(nm = fast_name(I, op, &nl)))
			return 0;
		h = ge_hash_ci(nm, nl);
	}
	/* outputs of this pass's copies are live while no handler ran (one
	 * could remove ops) */
	if (!own || I->ran_handler) {
		if (n_inputs && !ge_graph_all_alive(g, &new_inputs[0].op,
						    n_inputs,
						    sizeof *new_inputs))
			return 0;
		for (size_t k = 0; k < n_inputs; k++)
			if (new_inputs[k].index < 0)
				return 0;
	}
	int same = 1;
	if (!(co && co->copy_shape)) {
		if (changed < 0)
			changed = ge_tx_inputs_changed(I, op, new_inputs,
						       n_inputs);
		/* `_output_shapes` to recompute: the stock handler's work */
		if (changed && (fl & GE_RUN_SHAPES))
			return 0;
		same = !changed;
	}
	int32_t no;
	/* a name made by fast_name begins with scope_ */
	if (I->unhanded && ge_names_handed_out_n(g) == I->handed0)
		fl |= GE_COPY_UNHANDED;
	ge_opid id = ge_graph_add_copy(g, op, run, len, fl, nm, nl, h,
				       new_inputs, n_inputs, &no);
	if (id == GE_NOOP)
		return 0; /* the name is taken: unique_name picks another */
	look_ahead(I, at);
	/* room for every op of the view was made before the copy pass */
	I->fast.v[I->fast.n++] = id;
	I->n_fast++;
	*nout = (uint32_t)(no >= 0 ? no : ge_op_num_outputs(g, op));
	*op_ = id;
	*vflags = VOF_IDENT | (same ? VOF_SHAPE_SAME : 0) |
		  (fl & GE_RUN_CLASS ? 0 : VOF_NO_CLASS);
	return 1;
}

/* The inputs of the copy of w's op into in; *changed gets whether they
 * may change the copy's shapes as far as that is known without asking
 * same_shape (ge_tx_inputs_changed's answer), or -1; *own whether each is
 * an output of a copy of this pass.  w learns whether the op has control
 * inputs. */
static int copy_inputs(ge_tinfo *I, struct vop *w, int fast, ge_tvec *in,
		       int *changed, int *own, ge_error *err)
{
	ge_opid op = w->op;
	size_t nin, n_now, nc;
	const ge_tref *src = ge_op_data_inputs(I->g, op, &nin, &nc);
	/* (in the cache now, not when the control inputs are copied) */
	if (!nc)
		w->flags |= VOF_NO_CTRL;
	int rc = GE_OK, ch = 0;
	*own = 1;
	in->n = 0;
	if (in->cap < nin) {
		in->v = ge_xrealloc(in->v, nin * sizeof *in->v);
		in->cap = nin;
	}
	for (size_t k = 0; k < nin && !rc; k++) {
		/* a dangling input's index is read from its text */
		ge_tref t = src[k].op != GE_NOOP ? src[k]
						 : ge_op_input(I->g, op, k),
			t_;
		struct vop *c;
		if (fast && !I->imap.n && t.index >= 0 &&
		    (c = vop_of(I, t.op)) && c->state == VOP_COPIED &&
		    (c->flags & VOF_IDENT)) {
			/* what resolve gives for an op of the view copied
			 * with outputs of its own, and what same_shape says
			 * of it (the copy is not the op itself) */
			t_ = (ge_tref){c->op_, t.index};
			if (!(c->flags & VOF_SHAPE_SAME) && ch >= 0)
				ch = 1;
		} else if (t.op == GE_NOOP) {
			*own = 0;
			rc = resolve_dangling(I, op, k, &t_, err);
		} else {
			*own = 0;
			rc = resolve(I, t, &t_, err);
			ch = -1;
			/* a handler may have edited the graph */
			src = ge_op_data_inputs(I->g, op, &n_now, &nc);
		}
		if (!rc)
			in->v[in->n++] = t_;
	}
	*changed = ch;
	return rc;
}

static int copy_ops(ge_tinfo *I, ge_error *err)
{
	const ge_transformer *tr = I->tr;
	ge_tvec in = GE_VEC_INIT, outs = GE_VEC_INIT;
	int rc = GE_OK;
	/* the stock copy (a NULL handler) within one graph shares attr
	 * bytes (graph_copy.h) */
	const ge_op_handler handler = tr->transform_op_handler
					      ? tr->transform_op_handler
					      : ge_copy_op_handler;
	const ge_copy_op_opts *co = tr->transform_op_ud;
	int fast = !tr->transform_op_handler && I->g == I->g_ &&
		   !(co && co->nodedef_fn);
	if (fast) {
		ge_graph_reserve(I->g_, I->n);
		I->scope_len = strlen(I->scope);
		I->dst_scope_len = strlen(I->scope_);
		I->fast.v = ge_xrealloc(I->fast.v,
					(I->n + 1) * sizeof *I->fast.v);
		I->fast.cap = I->n + 1;
		ge_prefault(I->fast.v, I->fast.cap * sizeof *I->fast.v);
		/* ops of one attr class share a verdict on their attrs */
		I->cls = ge_graph_attr_classes(I->g, &I->n_cls);
		I->version0 = ge_graph_version(I->g);
		I->handed0 = ge_names_handed_out_n(I->g_);
		I->unhanded = I->handed0 <= 64 &&
			      !ge_names_handed_out_under(I->g_, I->scope_,
							 I->dst_scope_len);
	}
	for (size_t i = 0; i < I->n && !rc; i++) {
		struct vop *w = &I->vops[i];
		ge_opid op = w->op;
		if (tr->share_op) {
			I->ran_handler = 1;
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
		int changed, own;
		if ((rc = copy_inputs(I, w, fast, &in, &changed, &own, err)))
			break;
		ge_opid op_ = GE_NOOP;
		unsigned vflags = 0;
		uint32_t nout;
		if (fast && copy_op_fast(I, op, in.v, in.n, changed, own, co,
					 &op_, &vflags, &nout)) {
			/* a new op of the graph with outputs of its own: what
			 * the checks below would find */
			w->op_ = op_;
			w->state = VOP_COPIED;
			w->flags |= (uint8_t)vflags;
			w->n = nout;
			continue;
		}
		outs.n = 0;
		I->cur_op = op;
		I->cur_shape_same = 0;
		I->ran_handler = 1;
		rc = handler(I, op, in.v, in.n, &op_, &outs,
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
	flush_fast(I);
	return rc;
}

/* Each copy names its source in its provenance. */
static void copy_origins(ge_tinfo *I)
{
	ge_prov_batch b;
	ge_prov_batch_init(&b, I->g_, "copy");
	if (b.off) /* GE_PROV_OFF: every copy would do nothing */
		return;
	for (size_t i = 0; i < I->n; i++) {
		const struct vop *w = &I->vops[i];
		if (w->state == VOP_COPIED && w->op_ != GE_NOOP)
			ge_prov_batch_copy(&b, w->op_, I->g, w->op);
	}
}

/* Points every reader of a stand-in at the real copy (one batched edit),
 * then removes it. */
static int finish_stand_ins(ge_tinfo *I, ge_error *err)
{
	ge_input_edit *edits = NULL;
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
			edits = ge_xrealloc(edits, cap * sizeof *edits);
		}
		for (size_t k = 0; k < n; k++)
			edits[k] = (ge_input_edit){u[k].op, u[k].slot, real};
		rc = ge_graph_set_inputs(I->g_, edits, n, err);
		if (!rc)
			rc = ge_graph_remove_op(I->g_, ph, 1, err);
	}
	free(edits);
	return rc;
}

/* ------------------------------------------------------------ cross refs */

static int add_control_inputs(ge_tinfo *I, ge_error *err)
{
	const ge_transformer *tr = I->tr;
	size_t v;
	/* nothing but the fast copies changed the graph since the copy pass
	 * started: an op without control inputs then still has none */
	int still = I->n_fast &&
		    ge_graph_version(I->g) == I->version0 + I->n_fast;
	for (size_t i = 0; i < I->n; i++) {
		struct vop *w = &I->vops[i];
		if (w->state != VOP_COPIED ||
		    (still && (w->flags & VOF_NO_CTRL)))
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
		if (w->state != VOP_COPIED || (w->flags & VOF_NO_CLASS) ||
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
			ge_tx_strmap_put(&I->dst_frames, f, NULL);
		free(f);
	}
}

/* The copy's frame for source frame f (made on first use). */
static const char *new_frame(ge_tinfo *I, const char *f)
{
	const char *nf = ge_tx_strmap_get(&I->frame_map, f);
	if (nf)
		return nf;
	ge_buf b = GE_BUF_INIT;
	if (I->keep_frames)
		ge_buf_adds(&b, f);
	else
		ge_tx_scoped_name(I, f, &b);
	char *u = ge_tx_uniquify(&I->dst_frames, (char *)b.data);
	ge_tx_strmap_put(&I->frame_map, f, u);
	free(u);
	ge_buf_free(&b);
	return ge_tx_strmap_get(&I->frame_map, f);
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

/* ------------------------------------------------------------ result */

static int make_result(ge_tinfo *I, ge_view *out, ge_error *err)
{
	/* the copies, in node order of their sources: the result's ops */
	ge_opvec ops = GE_VEC_INIT;
	ops.v = ge_xmalloc((I->n + 1) * sizeof *ops.v);
	ops.cap = I->n + 1;
	ge_prefault(ops.v, ops.cap * sizeof *ops.v);
	for (size_t i = 0; i < I->n; i++)
		if (I->vops[i].state == VOP_COPIED)
			ops.v[ops.n++] = I->vops[i].op_;
	I->n_res = ops.n;
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
	if (!rc && out && ops.n) {
		/* the boundary is the source's, mapped: not recomputed */
		size_t up = 1; /* new ops come in increasing ids: no repeats */
		while (up < ops.n && ops.v[up - 1] < ops.v[up])
			up++;
		if (up < ops.n)
			ge_opvec_unique(I->g_, &ops);
		ge_view_init_known(out, I->g_, &ops, &ins, &outs, &pass);
		return GE_OK;
	}
	ge_opvec_free(&ops);
	if (!rc && out) {
		rc = ge_view_init(out, I->g_, NULL, 0, NULL, 0, err);
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

static char *finalize(const char *s)
{
	return ge_scope_finalize(s ? s : "");
}

/* 0 when no op of g is an Enter or RefEnter (op types are interned). */
static int may_have_enters(const ge_graph *g)
{
	return ge_graph_may_have_type(g, "Enter") ||
	       ge_graph_may_have_type(g, "RefEnter");
}

static int setup(ge_tinfo *I, const ge_transformer *tr, ge_view *sgv,
		 const ge_transform_opts *o, ge_error *err)
{
	static const ge_transform_opts none = {0};
	int rc;
	if (!o)
		o = &none;
	if (!tr || !tr->transform_control_input_handler ||
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
	I->scope = finalize(o->src_scope);
	I->scope_ = finalize(o->dst_scope);
	if (*I->scope_ && !o->reuse_dst_scope) {
		I->scope_[strlen(I->scope_) - 1] = 0;
		const char *u = ge_graph_unique_name(I->g_, I->scope_);
		free(I->scope_);
		I->scope_ = finalize(u);
	}

	I->n = sgv->ops.n;
	/* the view's ops in node order: most views keep them so (then the
	 * vops are the only list) */
	const ge_opid *order = sgv->ops.v;
	ge_opid *sorted_copy = NULL;
	size_t sorted = 1;
	while (sorted < I->n && order[sorted - 1] < order[sorted])
		sorted++;
	if (sorted < I->n) {
		sorted_copy = ge_xmalloc(I->n * sizeof *sorted_copy);
		memcpy(sorted_copy, order, I->n * sizeof *sorted_copy);
		qsort(sorted_copy, I->n, sizeof *sorted_copy, ge_opid_cmp);
		order = sorted_copy;
	}
	/* ops in node order without repeats are the vops' list: the info's
	 * copy of the view gets them on first use (tinfo.c) */
	ge_view part = *sgv;
	I->sgv_lazy = sorted >= I->n;
	if (I->sgv_lazy)
		part.ops = (ge_opvec)GE_VEC_INIT;
	ge_view_copy(&I->sgv, &part);
	I->pos_cap = ge_graph_capacity(I->g);
	/* zero pages are only touched where the view lies; made resident
	 * at once from the view's first op to its last when the view fills
	 * that range (a page of pos holds 1024 ops) */
	I->pos = ge_big_sparse((I->pos_cap + 1) * sizeof *I->pos);
	if (I->n && order[I->n - 1] - order[0] < I->n * 64)
		ge_prefault(I->pos + order[0],
			    (order[I->n - 1] - order[0] + 1) * sizeof *I->pos);
	/* each entry is set below, as its op comes */
	I->vops = ge_big_alloc((I->n + 1) * sizeof *I->vops);
	/* no op of the graph is a loop's Enter: none of the view is */
	int enters = may_have_enters(I->g);
	size_t k = 0;
	for (size_t i = 0; i < I->n; i++) {
		ge_opid op = order[i];
		/* (only a sorted copy can repeat an op: else pos is written,
		 * never read, in pages fresh from the kernel) */
		if (sorted_copy && I->pos[op])
			continue;
		I->pos[op] = (uint32_t)(k + 1);
		I->vops[k] = (struct vop){op, GE_NOOP, 0, 0, VOP_PENDING, 0};
		if (enters && !I->has_enter && is_enter(ge_op_type(I->g, op)))
			I->has_enter = 1;
		k++;
	}
	I->n = k;
	free(sorted_copy);

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
		ge_tx_snapshot_collections(I);
	return GE_OK;
}

static void rollback(ge_graph *g, size_t first_new)
{
	for (size_t id = ge_graph_capacity(g); id-- > first_new;)
		if (ge_op_alive(g, (ge_opid)id))
			ge_graph_remove_op(g, (ge_opid)id, 1, NULL);
}

/* The control-flow problems of g's frames (validate's). */
static size_t frame_problem_count(const ge_graph *g)
{
	ge_buf b = GE_BUF_INIT;
	size_t n = ge_frames_validate(g, &b);
	ge_buf_free(&b);
	return n;
}

static int transform_bind(const ge_transformer *tr, ge_view *sgv,
			  const ge_transform_opts *o, const char *const *bind,
			  const ge_tref *bind_to, size_t n_bind, ge_view *out,
			  ge_tinfo **info, ge_error *err)
{
	ge_tinfo *I = ge_xcalloc(1, sizeof *I);
	ge_graph *dst = o && o->dst_graph ? o->dst_graph : sgv->graph;
	size_t first_new = dst ? ge_graph_capacity(dst) : 0;
	/* a copy of part of a loop may read or feed the original loop from
	 * outside its frame (a graph without Enters has no loop: known
	 * without a look at its ops).  What decides is the result: a cut
	 * whose copy leaves the destination's frames as valid as they were
	 * (a copy of one Switch reading the loop's own tensors, within the
	 * loop's graph) is allowed; cut_err keeps the reason otherwise. */
	ge_error cut_err;
	int cut = sgv->graph && !(o && o->allow_loop_cuts) &&
		  may_have_enters(sgv->graph) &&
		  ge_frames_check_view(sgv->graph, sgv->ops.v, sgv->ops.n,
				       &cut_err);
	size_t frame_problems = cut ? frame_problem_count(dst) : 0;
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
		copy_origins(I);
	if (!rc)
		rc = finish_stand_ins(I, err);
	if (!rc)
		rc = add_control_inputs(I, err);
	if (!rc) {
		remap_colocation(I);
		rename_frames(I);
		rc = ge_tx_assign_collections(I, err);
	}
	if (!rc)
		rc = ge_tx_copy_contexts(I, err);
	if (!rc)
		rc = make_result(I, out, err);
	if (!rc && cut && frame_problem_count(dst) > frame_problems) {
		if (out)
			ge_view_free(out);
		rc = ge_err(err, cut_err.code, "%s", cut_err.msg);
	}
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
	/* the info may live long (a Lua value until collected): the copy
	 * pass's scratch goes now, for the next transform to reuse */
	ge_tx_scratch_free(I);
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

/* graph_editor's _add_control_flow_ops, with frames as TensorFlow's
 * executor assigns them (frames.h): every while loop an op of ops is in is
 * added whole, outermost loop first. */
static int add_loop_ops(ge_graph *g, ge_opvec *ops, ge_error *err)
{
	(void)err;
	ge_frames_whole_loops(g, ops);
	return GE_OK;
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

int ge_graph_replace_with(ge_graph *g, const ge_tref *targets,
			  size_t n_targets, const ge_tpair *repl,
			  size_t n_repl, const ge_transform_opts *o,
			  ge_replace_copy_fn copy, void *ud, ge_tref *out,
			  ge_tinfo **info, ge_error *err)
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
		rc = copy(&v, repl, n_repl, &opts, ud, &I, err);
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

static int plain_copy(ge_view *sgv, const ge_tpair *repl, size_t n_repl,
		      const ge_transform_opts *o, void *ud, ge_tinfo **info,
		      ge_error *err)
{
	(void)ud;
	return ge_copy_with_input_replacements(sgv, repl, n_repl, o, NULL,
					       info, err);
}

int ge_graph_replace(ge_graph *g, const ge_tref *targets, size_t n_targets,
		     const ge_tpair *repl, size_t n_repl,
		     const ge_transform_opts *o, ge_tref *out, ge_tinfo **info,
		     ge_error *err)
{
	return ge_graph_replace_with(g, targets, n_targets, repl, n_repl, o,
				     plain_copy, NULL, out, info, err);
}
