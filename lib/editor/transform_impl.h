/*
 * transform_impl.h: the transform state shared by the files of the
 * transform (tinfo.c, transform.c, transform_coll.c): the ge_tinfo behind
 * transform.h and the helpers they share; and, at the end, what the other
 * transforms of lib/ (import.c, varpolicy.c) use beyond transform.h.  Only
 * those files include this.
 */
#ifndef GE_TRANSFORM_IMPL_H
#define GE_TRANSFORM_IMPL_H

#include "editor/transform.h"
#include "graph/graph_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/meta.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* A small string-keyed hash map (keys and values malloc'd). */
typedef struct strmap {
	char **k, **v;
	size_t cap, n;
} strmap;

void ge_tx_strmap_free(strmap *m);
const char *ge_tx_strmap_get(const strmap *m, const char *k);
int ge_tx_strmap_has(const strmap *m, const char *k);
/* Inserts k (-> v, may be NULL) unless present. */
void ge_tx_strmap_put(strmap *m, const char *k, const char *v);
/* base, base_1, base_2, ...: the first not in m (which then holds it). */
char *ge_tx_uniquify(strmap *m, const char *base);

static inline int is_type(const char *t, const char *a, const char *b)
{
	return !strcmp(t, a) || (b && !strcmp(t, b));
}

static inline int is_enter(const char *t)
{
	/* asked of every op a copy makes: most fail at the first byte */
	return (*t == 'E' || *t == 'R') && is_type(t, "Enter", "RefEnter");
}

static inline int is_exit(const char *t)
{
	return is_type(t, "Exit", "RefExit");
}

/* ------------------------------------------------------------ state */

enum { VOP_PENDING = 0, VOP_COPIED = 1, VOP_SHARED = 2 };
enum { VOF_IDENT = 1, VOF_SHAPE_SAME = 2, VOF_NO_CLASS = 4, VOF_NO_CTRL = 8 };
enum { TX_AHEAD = 16 }; /* names of fast copies made ahead (transform.c) */

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
	ge_view sgv;          /* without its ops while sgv_lazy */
	int sgv_lazy;
	const ge_transformer *tr;

	struct vop *vops;     /* the view's ops in node order */
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

	/* results: n_res ops copied; their pairs, made from the vops on
	 * first use (tinfo.c: a large copy's caller seldom asks) */
	size_t n_res;
	int res_done;
	ge_opvec res_src, res_dst;

	/* handler scratch: set by copy_op_handler for the op being copied */
	int cur_shape_same;
	ge_opid cur_op;

	/* copies made by copy_op_fast (transform.c), whose producers do
	 * not list them yet (room for all of the view's) */
	ge_opvec fast;
	struct ge_link_scratch link;
	size_t scope_len, dst_scope_len;
	char *room;           /* the rest of a piece of the arena of g_ */
	size_t room_left;
	/* the source's attr classes, when valid as the copy pass starts */
	const ge_opid *cls;
	size_t n_cls;
	/* a handler ran during the copy pass (it may have removed ops) */
	int ran_handler;
	/* the source graph's version as the copy pass started, and the
	 * fast copies made since (each moves it by one) */
	uint64_t version0;
	size_t n_fast;
	/* names handed out in the destination as the copy pass started;
	 * whether none of them begins with scope_ (checked only for a few:
	 * while their count stays, no copy's name can be one) */
	size_t handed0;
	int unhanded;
	/* the names of the copies of the ops some positions ahead, whose
	 * index slots were prefetched: position + 1 (0: none), name (in
	 * the destination's arena), length, hash */
	struct tx_ahead {
		size_t at;
		const char *name;
		size_t len;
		uint32_t h;
	} ahead[TX_AHEAD];
};

static inline uint64_t pack_t(ge_tref t)
{
	return ((uint64_t)t.op << 32) | (uint32_t)t.index;
}

static inline ge_tref unpack_t(uint64_t v)
{
	return (ge_tref){(ge_opid)(v >> 32), (int32_t)(uint32_t)v};
}

static inline struct vop *vop_of(const ge_tinfo *I, ge_opid op)
{
	if (op == GE_NOOP || op >= I->pos_cap || !I->pos[op])
		return NULL;
	return &I->vops[I->pos[op] - 1];
}

/* tinfo.c */
void ge_tx_scoped_name(const ge_tinfo *I, const char *name, ge_buf *out);
int ge_tx_lookup_name(const ge_graph *g, const char *name, ge_tref *out);
void ge_tx_tref_name(const ge_graph *g, ge_tref t, ge_buf *out);

/* Whether a copy of op reading new_inputs may have other shapes than op:
 * another input count, or an input not known to keep its shape. */
int ge_tx_inputs_changed(ge_tinfo *I, ge_opid op, const ge_tref *new_inputs,
			 size_t n_inputs);

/* Frees what only the copy pass uses (fast copies, their links, name
 * scratch); the info stays whole. */
void ge_tx_scratch_free(ge_tinfo *I);

/* transform_coll.c */
void ge_tx_snapshot_collections(ge_tinfo *I);
int ge_tx_assign_collections(ge_tinfo *I, ge_error *err);
int ge_tx_copy_contexts(ge_tinfo *I, ge_error *err);

/* ---- for the other transforms of lib/ (import.c, varpolicy.c) ---- */

/* ge_transform, where source ops may have dangling inputs: an input whose
 * text is bind[i] ("x" and "x:0" match) reads bind_to[i]. */
int ge_transform_bind(const ge_transformer *tr, ge_view *sgv,
		      const ge_transform_opts *o, const char *const *bind,
		      const ge_tref *bind_to, size_t n_bind, ge_view *out,
		      ge_tinfo **info, ge_error *err);

/* copy_with_input_replacements' external input handler, shared with the
 * variables-aware copy (varpolicy.c): checks the replacements (each maps a
 * tensor of the view to a tensor of the destination; none given twice)
 * and installs the handler on tr.  Free with ge_repl_handler_free. */
struct ge_repl_handler {
	ge_tmap map;
	const ge_tpair *repl;
};
int ge_repl_handler_init(struct ge_repl_handler *r, ge_transformer *tr,
			 const ge_view *sgv, const ge_tpair *repl,
			 size_t n_repl, const ge_transform_opts *o,
			 ge_error *err);
void ge_repl_handler_free(struct ge_repl_handler *r);

/* Merges the source's collections into the destination's, keeping the
 * collection names: node_list entries and VariableDefs (variable
 * collections) of copied ops, with their names mapped. */
int ge_tinfo_merge_collections(ge_tinfo *info, ge_error *err);

#endif
