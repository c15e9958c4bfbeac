/*
 * l_transform.c: ge.transform, graph_editor's transform module in Lua:
 * Transformer (gerewrite.transformer), copy, copy_with_input_replacements,
 * graph_replace, the stock handlers, TransformerInfo (gerewrite.tinfo),
 * and, built on the same machinery, ge.import_graph and
 * g:export_scoped(scope).
 *
 * A Transformer is a userdata whose fields (kept in its user value, so
 * every assignment is checked) start as the stock handlers and may be
 * replaced by any callable; other fields may be set freely.  When
 * it is called, a field still holding a stock handler runs as C; any
 * other value runs through a trampoline that calls it protected.  A Lua
 * error in a handler makes the trampoline fail, lib/ removes whatever the
 * transform added, and the error is raised again afterwards, prefixed
 * with the handler's name and the op or tensor it was given, and carrying
 * the traceback of the place it was raised.
 *
 * The TransformerInfo userdata exists before the transform starts, so
 * that handlers receive the very object the call returns; it binds to
 * lib/'s state on the first handler call and owns it once the transform
 * has succeeded.  Its user values are the source graph, the destination
 * graph and a cache table (the view, the lookup proxies), which keep the
 * graphs alive as long as the info.
 *
 * Copies go through the variables policy of lib/variables/varpolicy.h (option
 * `variables`, default "auto"); the checkpoint plan a duplicate leaves
 * stays with the destination graph (lib/variables/varpolicy.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "l_editor.h"
#include "editor/transform.h"
#include "variables/varpolicy.h"

#define LGE_TINFO "gerewrite.tinfo"
#define LGE_TRANSFORMER "gerewrite.transformer"

/* Nested tables handed to transformed / original / graph_replace. */
#define MAX_DEPTH 200

/* ------------------------------------------------------------ info */

enum { TI_PENDING, TI_RUNNING, TI_DONE, TI_FAILED };

typedef struct ltinfo {
	ge_tinfo *I; /* lib/'s state; owned when state == TI_DONE */
	int state;
} ltinfo;

static int ti_gc(lua_State *L)
{
	ltinfo *ti = lua_touserdata(L, 1);
	if (ti->state == TI_DONE)
		ge_tinfo_free(ti->I);
	ti->I = NULL;
	ti->state = TI_FAILED;
	return 0;
}

/* [-0, +1, m] A new info bound to nothing yet, with the graph userdata
 * at gsrc and gdst as user values. */
static ltinfo *push_info(lua_State *L, int gsrc, int gdst)
{
	gsrc = lua_absindex(L, gsrc);
	gdst = lua_absindex(L, gdst);
	ltinfo *ti = lua_newuserdatauv(L, sizeof *ti, 3);
	ti->I = NULL;
	ti->state = TI_PENDING;
	luaL_setmetatable(L, LGE_TINFO);
	lua_pushvalue(L, gsrc);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, gdst);
	lua_setiuservalue(L, -2, 2);
	lua_newtable(L);
	lua_setiuservalue(L, -2, 3);
	return ti;
}

/* After the lib/ call: the info owns I on success, holds nothing else. */
static void settle_info(ltinfo *ti, ge_tinfo *I, int ok)
{
	ti->I = ok ? I : NULL;
	ti->state = ok && I ? TI_DONE : TI_FAILED;
}

/* [-0, +2, v] The info at idx, usable: bound to a transform that is
 * running or has succeeded, both graphs open.  Pushes the source and
 * destination graph userdata (their indices in *gs, *gd). */
static ltinfo *checkinfo(lua_State *L, int idx, int *gs, int *gd)
{
	idx = lua_absindex(L, idx);
	ltinfo *ti = luaL_checkudata(L, idx, LGE_TINFO);
	if (ti->state == TI_PENDING)
		luaL_error(L, "this TransformerInfo has no transform yet");
	if (ti->state == TI_FAILED || !ti->I)
		luaL_error(L, "this TransformerInfo belongs to a transform "
			      "that failed");
	lua_getiuservalue(L, idx, 1);
	lua_getiuservalue(L, idx, 2);
	lge_graph *a = lua_touserdata(L, -2), *b = lua_touserdata(L, -1);
	if (!a || !a->g || !b || !b->g)
		luaL_error(L, "the graph of this TransformerInfo is closed");
	*gs = lua_gettop(L) - 1;
	*gd = lua_gettop(L);
	return ti;
}

/* The same, for the stock handlers: only inside a running transform. */
static ltinfo *checkrunning(lua_State *L, int idx, int *gs, int *gd)
{
	ltinfo *ti = luaL_checkudata(L, idx, LGE_TINFO);
	if (ti->state != TI_RUNNING)
		luaL_argerror(L, idx, "the info of a running transform "
				      "expected (stock handlers run inside a "
				      "transform)");
	return checkinfo(L, idx, gs, gd);
}

static lge_graph *G_at(lua_State *L, int idx)
{
	return lua_touserdata(L, idx);
}

/* An op or a tensor of graph G at idx as a ge_tref (ops get index
 * GE_CONTROL).  Returns 0 when the value is neither or is elsewhere. */
static int elem_in(lua_State *L, int idx, lge_graph *G, ge_tref *out)
{
	lge_op *o = lge_testop(L, idx);
	lge_tensor *t;
	if (o) {
		if (o->owner != G || !ge_op_alive(G->g, o->id))
			return 0;
		*out = (ge_tref){o->id, GE_CONTROL};
		return 1;
	}
	if ((t = lge_testtensor(L, idx))) {
		if (t->owner != G || !ge_op_alive(G->g, t->t.op))
			return 0;
		*out = t->t;
		return 1;
	}
	return 0;
}

/* [-0, +1, v] Pushes an op (index GE_CONTROL) or a tensor of the graph
 * at gidx. */
static void push_elem(lua_State *L, int gidx, ge_tref t)
{
	if (t.index == GE_CONTROL)
		lge_pushop(L, gidx, t.op);
	else
		lge_pushtensor(L, gidx, t);
}

/* One leaf of transformed / original: returns 1 and sets *out, or 0. */
static int map_leaf(lua_State *L, int idx, ltinfo *ti, int forward,
		    lge_graph *from, lge_graph *to, ge_tref *out)
{
	ge_tref x;
	int found;
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *name = lua_tostring(L, idx);
		found = forward ? ge_tinfo_transformed_name(ti->I, name, out) :
				  ge_tinfo_original_name(ti->I, name, out);
	} else if (elem_in(L, idx, from, &x)) {
		if (x.index == GE_CONTROL) {
			ge_tinfo *I = ti->I;
			ge_opid o = forward ? ge_tinfo_transformed_op(I, x.op) :
					      ge_tinfo_original_op(I, x.op);
			*out = (ge_tref){o, GE_CONTROL};
			found = o != GE_NOOP;
		} else {
			found = forward ?
					ge_tinfo_transformed_t(ti->I, x, out) :
					ge_tinfo_original_t(ti->I, x, out);
		}
	} else {
		return 0;
	}
	/* what was mapped may have been removed since */
	return found && out->op != GE_NOOP && ge_op_alive(to->g, out->op);
}

struct mapctx {
	ltinfo *ti;
	int forward, missing, memo, gfrom, gto;
};

/* [-0, +1, e] Maps the value at idx: ops, tensors and names through the
 * info, tables element by element (same keys, same metatable, shared
 * subtables shared), anything else as missing. */
static void map_value(lua_State *L, int idx, struct mapctx *m, int depth)
{
	ge_tref r;
	idx = lua_absindex(L, idx);
	luaL_checkstack(L, 8, "nested tables");
	if (lua_type(L, idx) == LUA_TTABLE) {
		if (depth > MAX_DEPTH)
			luaL_error(L, "tables nested too deeply");
		lua_pushvalue(L, idx);
		if (lua_rawget(L, m->memo) != LUA_TNIL)
			return;
		lua_pop(L, 1);
		lua_newtable(L);
		int res = lua_gettop(L);
		lua_pushvalue(L, idx);
		lua_pushvalue(L, res);
		lua_rawset(L, m->memo);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			map_value(L, -1, m, depth + 1);
			lua_pushvalue(L, -3);
			lua_insert(L, -2);
			lua_rawset(L, res);
			lua_pop(L, 1);
		}
		if (lua_getmetatable(L, idx))
			lua_setmetatable(L, res);
		return;
	}
	if (map_leaf(L, idx, m->ti, m->forward, G_at(L, m->gfrom),
		     G_at(L, m->gto), &r)) {
		push_elem(L, m->gto, r);
		return;
	}
	if (m->missing) {
		lua_pushvalue(L, m->missing);
		lua_pushvalue(L, idx);
		lua_call(L, 1, 1);
	} else {
		lua_pushnil(L);
	}
}

/* info:transformed(x [, missing_fn]) / info:original(x [, missing_fn]) */
static int ti_map(lua_State *L, int forward)
{
	int gs, gd;
	lua_settop(L, 3);
	ltinfo *ti = checkinfo(L, 1, &gs, &gd);
	if (!forward && ti->state == TI_RUNNING)
		return luaL_error(L, "info:original is available once the "
				     "transform has finished");
	if (!lua_isnil(L, 3))
		luaL_checktype(L, 3, LUA_TFUNCTION);
	struct mapctx m = {ti, forward, lua_isnil(L, 3) ? 0 : 3, 0,
			   forward ? gs : gd, forward ? gd : gs};
	lua_newtable(L);
	m.memo = lua_gettop(L);
	map_value(L, 2, &m, 0);
	return 1;
}

static int ti_transformed(lua_State *L)
{
	return ti_map(L, 1);
}

static int ti_original(lua_State *L)
{
	return ti_map(L, 0);
}

/* info:new_name(name): destination scope + (name minus source scope). */
static int ti_new_name(lua_State *L)
{
	int gs, gd;
	ltinfo *ti = checkinfo(L, 1, &gs, &gd);
	const char *name = luaL_checkstring(L, 2);
	ge_buf *b = lge_newbuf(L);
	ge_error err;
	if (ge_tinfo_new_name(ti->I, name, b, &err))
		return lge_raise(L, &err);
	lua_pushlstring(L, b->data ? (const char *)b->data : "", b->len);
	return 1;
}

/* info:in_view(op) -> whether op is one of the view's ops */
static int ti_in_view(lua_State *L)
{
	int gs, gd;
	ge_tref t;
	ltinfo *ti = checkinfo(L, 1, &gs, &gd);
	lua_pushboolean(L, elem_in(L, 2, G_at(L, gs), &t) &&
				   t.index == GE_CONTROL &&
				   ge_tinfo_in_view(ti->I, t.op));
	return 1;
}

/* info:collections_of(elem) -> names of the source collections that
 * listed elem (an op or tensor of the view) when the transform started */
static int ti_collections_of(lua_State *L)
{
	int gs, gd;
	ge_tref t;
	ltinfo *ti = checkinfo(L, 1, &gs, &gd);
	lua_newtable(L);
	if (!elem_in(L, 2, G_at(L, gs), &t))
		return 1;
	size_t n = ge_tinfo_collections_of(ti->I, t, NULL, 0);
	const char **names = lua_newuserdatauv(L, (n + 1) * sizeof *names, 0);
	ge_tinfo_collections_of(ti->I, t, names, n);
	for (size_t i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -3, (lua_Integer)i + 1);
	}
	lua_pop(L, 1);
	return 1;
}

/* info.transformed_ops[op] / info.transformed_ts[t]: the reference's
 * dicts, read through lookups (upvalue 1: the info, 2: whether ops). */
static int proxy_index(lua_State *L)
{
	int gs, gd;
	ge_tref r;
	ltinfo *ti = checkinfo(L, lua_upvalueindex(1), &gs, &gd);
	int ops = lua_toboolean(L, lua_upvalueindex(2));
	if ((ops ? lge_testop(L, 2) != NULL : lge_testtensor(L, 2) != NULL) &&
	    map_leaf(L, 2, ti, 1, G_at(L, gs), G_at(L, gd), &r)) {
		push_elem(L, gd, r);
		return 1;
	}
	return 0;
}

static int proxy_newindex(lua_State *L)
{
	return luaL_error(L, "the transform's maps are read-only");
}

static void push_proxy(lua_State *L, int info, int ops)
{
	lua_newtable(L);
	lua_createtable(L, 0, 2);
	lua_pushvalue(L, info);
	lua_pushboolean(L, ops);
	lua_pushcclosure(L, proxy_index, 2);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, proxy_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_setmetatable(L, -2);
}

static int ti_index(lua_State *L)
{
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) :
							  NULL;
	int gs, gd;
	if (!k || lge_pushmethod(L, 1, 2) != LUA_TNIL)
		return k ? 1 : 0;
	lua_pop(L, 1);
	if (!strcmp(k, "graph") || !strcmp(k, "graph_") ||
	    !strcmp(k, "dst_graph")) {
		checkinfo(L, 1, &gs, &gd);
		lua_pushvalue(L, strcmp(k, "graph") ? gd : gs);
		return 1;
	}
	if (!strcmp(k, "scope") || !strcmp(k, "scope_") ||
	    !strcmp(k, "dst_scope")) {
		ltinfo *ti = checkinfo(L, 1, &gs, &gd);
		lua_pushstring(L, strcmp(k, "scope") ?
					  ge_tinfo_dst_scope(ti->I) :
					  ge_tinfo_scope(ti->I));
		return 1;
	}
	if (!strcmp(k, "sgv") || !strcmp(k, "transformed_ops") ||
	    !strcmp(k, "transformed_ts")) {
		ltinfo *ti = checkinfo(L, 1, &gs, &gd);
		lua_getiuservalue(L, 1, 3);
		int cache = lua_gettop(L);
		if (lua_getfield(L, cache, k) != LUA_TNIL)
			return 1;
		lua_pop(L, 1);
		if (!strcmp(k, "sgv")) {
			ge_view c;
			ge_view_copy(&c, ge_tinfo_view(ti->I));
			lsel_pushview(L, &c, gs);
		} else {
			push_proxy(L, 1, !strcmp(k, "transformed_ops"));
		}
		lua_pushvalue(L, -1);
		lua_setfield(L, cache, k);
		return 1;
	}
	return 0;
}

static int ti_newindex(lua_State *L)
{
	return luaL_error(L, "a TransformerInfo's fields are read-only");
}

/* tostring(info) is one line, like every object's; info:dump() is the
 * reference's __str__ (with graph names for ids). */
static int ti_text(lua_State *L, int full)
{
	ltinfo *ti = luaL_checkudata(L, 1, LGE_TINFO);
	if (ti->state == TI_PENDING || ti->state == TI_FAILED || !ti->I) {
		lua_pushstring(L, ti->state == TI_PENDING ?
					  "TransformerInfo (no transform yet)" :
					  "TransformerInfo (transform failed)");
		return 1;
	}
	for (int k = 1; k <= 2; k++) {
		lua_getiuservalue(L, 1, k);
		lge_graph *G = lua_touserdata(L, -1);
		if (!G || !G->g) {
			lua_pushliteral(L, "TransformerInfo (graph closed)");
			return 1;
		}
		lua_pop(L, 1);
	}
	ge_buf *b = lge_newbuf(L);
	if (full)
		ge_tinfo_format(ti->I, b);
	else
		ge_tinfo_summary(ti->I, b);
	lua_pushlstring(L, (const char *)b->data, b->len);
	return 1;
}

static int ti_tostring(lua_State *L)
{
	return ti_text(L, 0);
}

static int ti_dump(lua_State *L)
{
	return ti_text(L, 1);
}

/* ------------------------------------------------------------ trampolines */

enum { H_OP, H_CTRL, H_EXT, H_HIDDEN, H_COLL, N_SLOTS };

static const char *const slot_names[N_SLOTS] = {
	"transform_op_handler", "transform_control_input_handler",
	"transform_external_input_handler",
	"transform_external_hidden_input_handler",
	"assign_collections_handler",
};

/* One transform call: where its Lua values sit on the caller's stack. */
typedef struct ltr_run {
	lua_State *L;
	int fn[N_SLOTS]; /* the Lua handlers (0: stock, run as C) */
	int info, gsrc, gdst, errslot;
	ltinfo *ti;
	int failed;
} ltr_run;

/* One handler call, for the protected function below. */
struct hcall {
	ltr_run *r;
	int slot;
	ge_tinfo *I;
	ge_opid op;
	ge_tref t, t2;
	const ge_tref *in;
	size_t n;
	ge_opid *op_;
	ge_tvec *outs;
	ge_tref *t_;
};

/* Message handler: the traceback of the place the error was raised,
 * added once (a handler may fail inside another protected call). */
static int msgh(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING)
		return 1; /* error objects are kept as they are */
	const char *m = lua_tostring(L, 1);
	if (strstr(m, "\nstack traceback:"))
		return 1;
	luaL_traceback(L, L, m, 1);
	return 1;
}

/* Protected: (call, fn, info, gsrc, gdst).  Runs the handler and turns
 * its answer into lib/ values, raising on a bad answer. */
static int hcall_run(lua_State *L)
{
	struct hcall *c = lua_touserdata(L, 1);
	lge_graph *Gd = lua_touserdata(L, 5);
	const char *why;
	ge_tref t;
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 3);
	switch (c->slot) {
	case H_OP:
		lge_pushop(L, 4, c->op);
		lsel_pushts(L, 5, c->in, c->n);
		lua_call(L, 3, 2);
		if ((why = lge_toopin(L, 6, Gd, c->op_)))
			return luaL_error(L, "the op handler must return an op "
					     "of the destination graph (%s)",
					  why);
		if (lua_isnil(L, 7)) {
			int n = ge_op_num_outputs(Gd->g, *c->op_);
			for (int k = 0; k < n; k++)
				ge_tvec_push(c->outs, (ge_tref){*c->op_, k});
			return 0;
		}
		if (lua_type(L, 7) != LUA_TTABLE)
			return luaL_error(L, "the op handler's second result "
					     "must be a list of tensors (got %s)",
					  luaL_typename(L, 7));
		for (lua_Integer i = 1, n = luaL_len(L, 7); i <= n; i++) {
			lua_geti(L, 7, i);
			if ((why = lge_totensorin(L, -1, Gd, 0, &t)))
				return luaL_error(L, "the op handler's output "
						     "%d: %s",
						  (int)i, why);
			ge_tvec_push(c->outs, t);
			lua_pop(L, 1);
		}
		return 0;
	case H_CTRL:
		lge_pushop(L, 4, c->op);
		lua_call(L, 2, 1);
		if (lua_isnil(L, 6) || (lua_type(L, 6) == LUA_TBOOLEAN &&
					!lua_toboolean(L, 6))) {
			*c->op_ = GE_NOOP;
			return 0;
		}
		if ((why = lge_toopin(L, 6, Gd, c->op_)))
			return luaL_error(L, "the control input handler must "
					     "return an op of the destination "
					     "graph or nil (%s)",
					  why);
		return 0;
	case H_EXT:
	case H_HIDDEN:
		lge_pushtensor(L, 4, c->t);
		lua_call(L, 2, 1);
		if ((why = lge_totensorin(L, 6, Gd, 0, c->t_)))
			return luaL_error(L, "the input handler must return a "
					     "tensor of the destination graph "
					     "(%s)",
					  why);
		return 0;
	default: /* H_COLL */
		push_elem(L, 4, c->t);
		push_elem(L, 5, c->t2);
		lua_call(L, 3, 0);
		return 0;
	}
}

/* Runs one handler call protected.  On failure the error (with the
 * handler's name and what it was given in front) waits at r->errslot. */
static int hrun(struct hcall *c, ge_error *err)
{
	ltr_run *r = c->r;
	lua_State *L = r->L;
	if (r->failed)
		return ge_err(err, GE_EINVAL, "a handler failed");
	if (r->ti->state == TI_PENDING) {
		r->ti->I = c->I;
		r->ti->state = TI_RUNNING;
	}
	if (!lua_checkstack(L, 12)) {
		lua_pushliteral(L, "stack overflow in a transform handler");
		lua_replace(L, r->errslot);
		r->failed = 1;
		return ge_err(err, GE_EINVAL, "stack overflow");
	}
	lua_pushcfunction(L, msgh);
	lua_pushcfunction(L, hcall_run);
	lua_pushlightuserdata(L, c);
	lua_pushvalue(L, r->fn[c->slot]);
	lua_pushvalue(L, r->info);
	lua_pushvalue(L, r->gsrc);
	lua_pushvalue(L, r->gdst);
	if (lua_pcall(L, 5, 0, -7) == LUA_OK) {
		lua_pop(L, 1);
		return GE_OK;
	}
	if (lua_type(L, -1) == LUA_TSTRING) {
		ge_graph *g = ge_tinfo_graph(c->I);
		ge_opid what = c->slot == H_OP || c->slot == H_CTRL ? c->op :
								       c->t.op;
		int index = c->slot == H_OP || c->slot == H_CTRL ? GE_CONTROL :
								    c->t.index;
		if (index == GE_CONTROL)
			lua_pushfstring(L, "%s ('%s'): %s", slot_names[c->slot],
					ge_op_name(g, what), lua_tostring(L, -1));
		else
			lua_pushfstring(L, "%s ('%s:%d'): %s",
					slot_names[c->slot], ge_op_name(g, what),
					index, lua_tostring(L, -1));
		lua_remove(L, -2);
	}
	lua_replace(L, r->errslot);
	lua_pop(L, 1); /* msgh */
	r->failed = 1;
	return ge_err(err, GE_EINVAL, "%s failed", slot_names[c->slot]);
}

static int tramp_op(ge_tinfo *I, ge_opid op, const ge_tref *in, size_t n,
		    ge_opid *op_, ge_tvec *outs, void *ud, ge_error *err)
{
	struct hcall c = {ud, H_OP, I, op, {0, 0}, {0, 0}, in, n, op_, outs,
			  NULL};
	return hrun(&c, err);
}

static int tramp_ctrl(ge_tinfo *I, ge_opid op, ge_opid *op_, void *ud,
		      ge_error *err)
{
	struct hcall c = {ud, H_CTRL, I, op, {0, 0}, {0, 0}, NULL, 0, op_,
			  NULL, NULL};
	return hrun(&c, err);
}

static int tramp_ext(ge_tinfo *I, ge_tref t, ge_tref *t_, void *ud,
		     ge_error *err)
{
	struct hcall c = {ud, H_EXT, I, GE_NOOP, t, {0, 0}, NULL, 0, NULL,
			  NULL, t_};
	return hrun(&c, err);
}

static int tramp_hidden(ge_tinfo *I, ge_tref t, ge_tref *t_, void *ud,
			ge_error *err)
{
	struct hcall c = {ud, H_HIDDEN, I, GE_NOOP, t, {0, 0}, NULL, 0, NULL,
			  NULL, t_};
	return hrun(&c, err);
}

static int tramp_coll(ge_tinfo *I, ge_tref elem, ge_tref elem_, void *ud,
		      ge_error *err)
{
	struct hcall c = {ud, H_COLL, I, GE_NOOP, elem, elem_, NULL, 0, NULL,
			  NULL, NULL};
	return hrun(&c, err);
}

/* ------------------------------------------------------------ stock */

/* The nodedef_fn of copy_op_handler: called with a NodeDef-like table
 * {name=, op=, device=, attr={...}} of the new op and the op itself; what
 * the table holds afterwards (or the table it returns) is applied to the
 * op.  Attrs are compared as encoded bytes with what the table started
 * with, so only what the function changed is written, and edits it made
 * to the op directly stay. */
typedef struct ndctx {
	lua_State *L;
	int fn, gsrc, gdst, errslot, failed;
} ndctx;

/* Protected: (ctx, op_ id as integer, fn, gdst). */
static int nd_run(lua_State *L)
{
	ndctx *c = lua_touserdata(L, 1);
	ge_opid id = (ge_opid)lua_tointeger(L, 2);
	lge_graph *Gd = lua_touserdata(L, 4);
	ge_graph *g = Gd->g;
	ge_error err;
	(void)c;
	/* 5: the table, 6: snapshot (attr -> bytes), 7: kinds */
	lua_createtable(L, 0, 4);
	lua_newtable(L);
	lua_newtable(L);
	lua_pushstring(L, ge_op_name(g, id));
	lua_setfield(L, 5, "name");
	lua_pushstring(L, ge_op_type(g, id));
	lua_setfield(L, 5, "op");
	lua_pushstring(L, ge_op_device(g, id));
	lua_setfield(L, 5, "device");
	lua_newtable(L);
	size_t na = ge_op_num_attrs(g, id);
	for (size_t a = 0; a < na; a++) {
		const char *key = ge_op_attr_name(g, id, a);
		const struct Tensorflow__AttrValue *v = ge_op_attr(g, id, key,
								   NULL);
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, id, key, &len);
		if (!v || !raw)
			continue; /* undecodable: left alone */
		lge_pushattr(L, v);
		lua_setfield(L, 7, key);
		lua_setfield(L, -2, key);
		lua_pushlstring(L, (const char *)raw, len);
		lua_setfield(L, 6, key);
	}
	lua_setfield(L, 5, "attr");
	const char *name0 = lua_pushstring(L, ge_op_name(g, id));    /* 8 */
	const char *type0 = lua_pushstring(L, ge_op_type(g, id));    /* 9 */
	const char *dev0 = lua_pushstring(L, ge_op_device(g, id));   /* 10 */
	lua_pushvalue(L, 3);
	lua_pushvalue(L, 5);
	lge_pushop(L, 4, id);
	lua_call(L, 2, 1);
	int nd = lua_gettop(L); /* 11 */
	if (lua_isnil(L, nd)) {
		lua_pushvalue(L, 5);
		lua_replace(L, nd);
	}
	if (lua_type(L, nd) != LUA_TTABLE)
		return luaL_error(L, "nodedef_fn must return a table or nil "
				     "(got %s)",
				  luaL_typename(L, nd));
	const char *s;
	if ((s = lge_optfield(L, nd, "name")) && strcmp(s, name0) &&
	    ge_op_set_name(g, id, s, &err))
		return lge_raise(L, &err);
	if ((s = lge_optfield(L, nd, "op")) && *s && strcmp(s, type0))
		ge_op_set_type(g, id, s);
	s = lge_optfield(L, nd, "device");
	if (strcmp(s ? s : "", dev0))
		ge_op_set_device(g, id, s ? s : "");
	int t = lua_getfield(L, nd, "attr"); /* 12 */
	if (t != LUA_TTABLE && t != LUA_TNIL)
		return luaL_error(L, "nodedef_fn: field 'attr' must be a "
				     "table");
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		lua_newtable(L);
	}
	/* removed attrs */
	lua_pushnil(L);
	while (lua_next(L, 6)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		if (lua_rawget(L, 12) == LUA_TNIL)
			ge_op_remove_attr(g, id, lua_tostring(L, -2));
		lua_pop(L, 1);
	}
	/* new or changed attrs, in name order so the result never depends
	 * on table order */
	lua_newtable(L); /* 13: names */
	lua_Integer n = 0;
	lua_pushnil(L);
	while (lua_next(L, 12)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "nodedef_fn: attr names must be "
					     "strings");
		lua_pushvalue(L, -1);
		lua_rawseti(L, 13, ++n);
	}
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "sort");
	lua_remove(L, -2);
	lua_pushvalue(L, 13);
	lua_call(L, 1, 0);
	ge_buf *enc = lge_newbuf(L); /* 14 */
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, 13, i);
		const char *key = lua_tostring(L, -1);
		lua_getfield(L, 7, key);
		const char *kind = lua_tostring(L, -1); /* NULL for new attrs */
		lua_getfield(L, 12, key);
		enc->len = 0;
		lge_encodeattr(L, -1, key, kind,
			       kind ? NULL : lge_opdefkind(g, ge_op_type(g, id),
							  key),
			       enc);
		size_t len = 0;
		lua_getfield(L, 6, key);
		const char *old = lua_tolstring(L, -1, &len);
		if (!old || len != enc->len ||
		    (len && memcmp(old, enc->data, len)))
			ge_op_set_attr_raw(g, id, key, enc->data, enc->len);
		lua_pop(L, 4);
	}
	return 0;
}

static int nd_tramp(ge_tinfo *I, ge_opid op, ge_opid op_, void *ud,
		    ge_error *err)
{
	ndctx *c = ud;
	lua_State *L = c->L;
	(void)I;
	(void)op;
	if (!lua_checkstack(L, 8))
		return ge_err(err, GE_EINVAL, "stack overflow in nodedef_fn");
	lua_pushcfunction(L, msgh);
	lua_pushcfunction(L, nd_run);
	lua_pushlightuserdata(L, c);
	lua_pushinteger(L, (lua_Integer)op_);
	lua_pushvalue(L, c->fn);
	lua_pushvalue(L, c->gdst);
	if (lua_pcall(L, 4, 0, -6) == LUA_OK) {
		lua_pop(L, 1);
		return GE_OK;
	}
	if (lua_type(L, -1) == LUA_TSTRING) {
		lua_pushfstring(L, "nodedef_fn: %s", lua_tostring(L, -1));
		lua_remove(L, -2);
	}
	lua_replace(L, c->errslot);
	lua_pop(L, 1);
	c->failed = 1;
	return ge_err(err, GE_EINVAL, "nodedef_fn failed");
}

/* copy_op_handler(info, op, new_inputs [, {copy_shape=, nodedef_fn=}])
 * -> op_, outputs_ */
static int h_copy_op(lua_State *L)
{
	static const char *const known[] = {"copy_shape", "nodedef_fn", NULL};
	int gs, gd;
	ge_error err;
	lua_settop(L, 4);
	lua_pushnil(L); /* 5: the slot for nodedef_fn's error */
	ltinfo *ti = checkrunning(L, 1, &gs, &gd);
	lge_graph *Gs = G_at(L, gs), *Gd = G_at(L, gd);
	ge_opid op = lge_checkopin(L, 2, Gs);
	if (lua_type(L, 3) == LUA_TBOOLEAN)
		return luaL_typeerror(L, 3, "list of tensors (not a boolean)");
	luaL_checktype(L, 3, LUA_TTABLE);
	lge_checkopts(L, 4, known);
	ge_tvec *in = lsel_tvec(L);
	for (lua_Integer i = 1, n = luaL_len(L, 3); i <= n; i++) {
		ge_tref t;
		const char *why;
		lua_geti(L, 3, i);
		if ((why = lge_totensorin(L, -1, Gd, 0, &t)))
			return luaL_argerror(L, 3,
					     lua_pushfstring(L, "[%d]: %s", (int)i,
							     why));
		ge_tvec_push(in, t);
		lua_pop(L, 1);
	}
	ndctx nc = {L, 0, gs, gd, 5, 0};
	ge_copy_op_opts co = {0, NULL, NULL};
	co.copy_shape = lsel_optbool(L, 4, "copy_shape", 0);
	int f = lsel_optfield(L, 4, "nodedef_fn");
	if (!lua_isnil(L, f)) {
		nc.fn = f;
		co.nodedef_fn = nd_tramp;
		co.nodedef_ud = &nc;
	}
	ge_tvec *outs = lsel_tvec(L);
	ge_opid op_ = GE_NOOP;
	int rc = ge_copy_op_handler(ti->I, op, in->v, in->n, &op_, outs, &co,
				    &err);
	if (nc.failed) {
		lua_pushvalue(L, 5);
		return lua_error(L);
	}
	if (rc)
		return lge_raise(L, &err);
	lge_pushop(L, gd, op_);
	lsel_pushts(L, gd, outs->v, outs->n);
	return 2;
}

/* transform_op_if_inside_handler(info, op [, keep_if_possible]) -> op_ */
static int h_if_inside(lua_State *L)
{
	int gs, gd;
	ge_error err;
	lua_settop(L, 3);
	ltinfo *ti = checkrunning(L, 1, &gs, &gd);
	ge_opid op = lge_checkopin(L, 2, G_at(L, gs)), op_ = GE_NOOP;
	int keep = lua_isnil(L, 3) ? 1 : lua_toboolean(L, 3);
	if (ge_transform_op_if_inside_handler(ti->I, op, &op_, &keep, &err))
		return lge_raise(L, &err);
	if (op_ == GE_NOOP)
		return 0;
	lge_pushop(L, gd, op_);
	return 1;
}

static int input_handler(lua_State *L, ge_input_handler h)
{
	int gs, gd;
	ge_error err;
	lua_settop(L, 2);
	ltinfo *ti = checkrunning(L, 1, &gs, &gd);
	ge_tref t = lge_checktensorin(L, 2, G_at(L, gs), 0), t_;
	if (h(ti->I, t, &t_, NULL, &err))
		return lge_raise(L, &err);
	lge_pushtensor(L, gd, t_);
	return 1;
}

/* replace_t_with_placeholder_handler(info, t) -> t_ */
static int h_replace_t(lua_State *L)
{
	return input_handler(L, ge_replace_t_with_placeholder_handler);
}

/* keep_t_if_possible_handler(info, t) -> t_ */
static int h_keep_t(lua_State *L)
{
	return input_handler(L, ge_keep_t_if_possible_handler);
}

/* assign_renamed_collections_handler(info, elem, elem_) */
static int h_assign_collections(lua_State *L)
{
	int gs, gd;
	ge_error err;
	ge_tref e, e_;
	lua_settop(L, 3);
	ltinfo *ti = checkrunning(L, 1, &gs, &gd);
	if (!elem_in(L, 2, G_at(L, gs), &e))
		return luaL_typeerror(L, 2, "op or tensor of the source graph");
	if (!elem_in(L, 3, G_at(L, gd), &e_))
		return luaL_typeerror(L, 3,
				      "op or tensor of the destination graph");
	if (ge_assign_renamed_collections_handler(ti->I, e, e_, NULL, &err))
		return lge_raise(L, &err);
	return 0;
}

/* is_predefined_collection(name) -> whether tf.GraphKeys names it */
static int h_is_predefined(lua_State *L)
{
	lua_pushboolean(L, ge_is_predefined_collection(luaL_checkstring(L, 1)));
	return 1;
}

/* ------------------------------------------------------------ options */

/* Scratch owned by Lua: the result view. */
typedef struct tscratch {
	ge_view out;
} tscratch;

static int scratch_gc(lua_State *L)
{
	tscratch *s = lua_touserdata(L, 1);
	ge_view_free(&s->out);
	return 0;
}

static tscratch *push_scratch(lua_State *L)
{
	static const ge_view empty = GE_VIEW_INIT;
	tscratch *s = lua_newuserdatauv(L, sizeof *s, 0);
	memset(s, 0, sizeof *s);
	s->out = empty;
	if (luaL_newmetatable(L, "gerewrite.tscratch")) {
		lua_pushcfunction(L, scratch_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return s;
}

/* The transform options at idx: an options table {dst_graph=, dst_scope=,
 * src_scope=, reuse_dst_scope=, variables=} or the reference's positional
 * arguments (dst_graph, dst_scope, src_scope, reuse_dst_scope), or for
 * graph_replace (no_graph) (dst_scope, src_scope, reuse_dst_scope).
 * Fills o (strings stay valid while the arguments are on the stack),
 * returns the index of the destination graph given (0 if none) and sets
 * *opts to the options table's index (or a nil slot's). */
static int read_topts(lua_State *L, int idx, int no_graph, int *opts,
		      ge_transform_opts *o)
{
	static const char *const known[] = {"dst_graph", "dst_scope",
		"src_scope", "reuse_dst_scope", "variables", "placeholders",
		NULL};
	static const char *const known_gr[] = {"dst_scope", "src_scope",
		"reuse_dst_scope", "variables", NULL};
	int gidx = 0;
	memset(o, 0, sizeof *o);
	if (lua_type(L, idx) == LUA_TTABLE && !lua_getmetatable(L, idx)) {
		lge_checkopts(L, idx, no_graph ? known_gr : known);
		*opts = idx;
		o->dst_scope = lge_optfield(L, idx, "dst_scope");
		o->src_scope = lge_optfield(L, idx, "src_scope");
		o->reuse_dst_scope = lsel_optbool(L, idx, "reuse_dst_scope", 0);
		if (!no_graph) {
			int f = lsel_optfield(L, idx, "dst_graph");
			if (lua_isnil(L, f)) {
				lua_pop(L, 1);
			} else {
				o->dst_graph = lge_checkgraph(L, f)->g;
				gidx = f;
			}
		}
		return gidx;
	}
	lua_pushnil(L);
	*opts = lua_gettop(L);
	if (!no_graph) {
		if (!lua_isnoneornil(L, idx)) {
			o->dst_graph = lge_checkgraph(L, idx)->g;
			gidx = idx;
		}
		idx++;
	}
	o->dst_scope = luaL_optstring(L, idx, NULL);
	o->src_scope = luaL_optstring(L, idx + 1, NULL);
	o->reuse_dst_scope = lua_toboolean(L, idx + 2);
	return gidx;
}

/* The graphs of a transform of the view at vidx: pushes the source graph
 * (the view's, else the destination's) and the destination graph
 * (given, else the source).  Returns their indices. */
static void transform_graphs(lua_State *L, int vidx, int given, int *gs,
			     int *gd)
{
	lge_view *w = lua_touserdata(L, vidx);
	if (w->owner)
		lsel_pushviewgraph(L, vidx);
	else if (given)
		lua_pushvalue(L, given);
	else
		luaL_error(L, "an empty view needs a destination graph");
	*gs = lua_gettop(L);
	lua_pushvalue(L, given ? given : *gs);
	*gd = lua_gettop(L);
}

/* Replacements {[t] = t2, ...}: keys are tensors (or names) of graph Gs,
 * values tensors (or names) of Gd.  Returns an array owned by a userdata
 * left on the stack. */
static ge_tpair *read_repl(lua_State *L, int idx, lge_graph *Gs,
			   lge_graph *Gd, size_t *n, int arg)
{
	if (lua_isnoneornil(L, idx)) {
		*n = 0;
		return lua_newuserdatauv(L, sizeof(ge_tpair), 0);
	}
	luaL_checktype(L, idx, LUA_TTABLE);
	size_t cap = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		cap++;
	}
	ge_tpair *p = lua_newuserdatauv(L, (cap + 1) * sizeof *p, 0);
	size_t k = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *why;
		if ((why = lge_totensorin(L, -2, Gs, 0, &p[k].from)))
			luaL_argerror(L, arg,
				      lua_pushfstring(L, "a replaced tensor: %s",
						      why));
		if ((why = lge_totensorin(L, -1, Gd, 0, &p[k].to)))
			luaL_argerror(L, arg,
				      lua_pushfstring(L, "a replacement: %s", why));
		k++;
		lua_pop(L, 1);
	}
	*n = k;
	return p;
}

/* After a transform: settles the info, then raises the first error there
 * is (a handler's, the variables function's, lib/'s). */
static void finish(lua_State *L, ltr_run *r, ltinfo *ti, ge_tinfo *I,
		   int rc, lge_varopts *vo, const ge_error *err)
{
	settle_info(ti, I, rc == GE_OK);
	if (r && r->failed) {
		lua_pushvalue(L, r->errslot);
		lua_error(L);
	}
	lge_varopts_check(L, vo);
	if (rc)
		lge_raise(L, err);
}

/* ------------------------------------------------------------ Transformer */

/* Which stock handler a Lua C function is (0: none of them). */
enum { S_NONE, S_COPY_OP, S_IF_INSIDE, S_REPLACE_T, S_KEEP_T, S_ASSIGN };

static int stock_of(lua_CFunction f)
{
	if (f == h_copy_op)
		return S_COPY_OP;
	if (f == h_if_inside)
		return S_IF_INSIDE;
	if (f == h_replace_t)
		return S_REPLACE_T;
	if (f == h_keep_t)
		return S_KEEP_T;
	if (f == h_assign_collections)
		return S_ASSIGN;
	return S_NONE;
}

/* Fills the C transformer from the Transformer table at self: stock
 * functions run as C, anything else through the trampolines.  The Lua
 * handlers are pushed (their indices in r->fn). */
static void build_transformer(lua_State *L, int self, ge_transformer *tr,
			      ltr_run *r)
{
	ge_transformer_init(tr);
	for (int s = 0; s < N_SLOTS; s++) {
		lua_getfield(L, self, slot_names[s]);
		int idx = lua_gettop(L);
		r->fn[s] = 0;
		if (s == H_COLL && lua_type(L, idx) == LUA_TBOOLEAN &&
		    !lua_toboolean(L, idx)) {
			tr->assign_collections_handler = NULL;
			continue;
		}
		if (lua_isnil(L, idx))
			continue; /* the stock one */
		if (!lge_callable(L, idx))
			luaL_error(L, "%s must be a function (got %s)",
				   slot_names[s], luaL_typename(L, idx));
		int k = lua_iscfunction(L, idx) ?
				stock_of(lua_tocfunction(L, idx)) : S_NONE;
		int c = 0; /* whether the stock handler of the slot runs as C */
		switch (s) {
		case H_OP:
			if ((c = k == S_COPY_OP)) {
				tr->transform_op_handler = NULL; /* stock */
			} else {
				tr->transform_op_handler = tramp_op;
				tr->transform_op_ud = r;
			}
			break;
		case H_CTRL:
			if ((c = k == S_IF_INSIDE)) {
				tr->transform_control_input_handler =
					ge_transform_op_if_inside_handler;
			} else {
				tr->transform_control_input_handler =
					tramp_ctrl;
				tr->transform_control_input_ud = r;
			}
			break;
		case H_EXT:
		case H_HIDDEN: {
			ge_input_handler h = s == H_EXT ? tramp_ext :
							  tramp_hidden;
			if (k == S_REPLACE_T)
				h = ge_replace_t_with_placeholder_handler;
			else if (k == S_KEEP_T)
				h = ge_keep_t_if_possible_handler;
			c = k == S_REPLACE_T || k == S_KEEP_T;
			if (s == H_EXT) {
				tr->transform_external_input_handler = h;
				tr->transform_external_input_ud = c ? NULL : r;
			} else {
				tr->transform_external_hidden_input_handler = h;
				tr->transform_external_hidden_input_ud =
					c ? NULL : r;
			}
			break;
		}
		default:
			if ((c = k == S_ASSIGN)) {
				tr->assign_collections_handler =
					ge_assign_renamed_collections_handler;
			} else {
				tr->assign_collections_handler = tramp_coll;
				tr->assign_collections_ud = r;
			}
		}
		if (!c)
			r->fn[s] = idx;
	}
	lua_getfield(L, self, "copy_control_flow_contexts");
	tr->copy_control_flow_contexts =
		lua_isnil(L, -1) || lua_toboolean(L, -1);
	lua_pop(L, 1);
}

/* ge.Transformer() -> a transformer with the stock handlers.  Its
 * fields live in the user value, so that every assignment is checked. */
static int m_transformer(lua_State *L)
{
	lua_newuserdatauv(L, 1, 1);
	lua_createtable(L, 0, N_SLOTS + 1);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, LGE_TRANSFORMER);
	return 1;
}

/* Runs a transform of the view at vidx with the transformer tr and the
 * options read by read_topts; repl/n_repl for copy_with_input_replacements
 * (repl NULL: tr as given).  Returns view, info. */
static int run_transform(lua_State *L, int vidx, int gs, int gd, int opts,
			 const ge_transform_opts *o, ge_transformer *tr,
			 ltr_run *r, const ge_tpair *repl, size_t n_repl)
{
	ge_error err;
	lge_varopts vo;
	lge_view *w = lua_touserdata(L, vidx);
	ltinfo *ti = push_info(L, gs, gd);
	int info = lua_gettop(L);
	lge_checkvaropts(L, opts, gs, &vo);
	tscratch *s = push_scratch(L);
	if (r) {
		r->info = info;
		r->ti = ti;
	}
	ge_tinfo *I = NULL;
	int rc;
	if (repl)
		rc = ge_copy_with_input_replacements_vars(
			&w->v, repl, n_repl, o, &vo.vo, &s->out, &I, NULL,
			&err);
	else
		rc = ge_transform_vars(tr, &w->v, o, &vo.vo, &s->out, &I,
				       NULL, &err);
	finish(L, r, ti, I, rc, &vo, &err);
	lsel_pushview(L, &s->out, gd);
	lua_pushvalue(L, info);
	return 2;
}

/* `placeholders` names the placeholders of copy only: the other
 * transforms keep or replace their inputs. */
static void copy_only(lua_State *L, int opts)
{
	if (!lua_isnil(L, lsel_optfield(L, opts, "placeholders")))
		luaL_error(L, "'placeholders' is an option of copy only");
	lua_pop(L, 1);
}

/* tr(sgv, dst_graph, dst_scope [, src_scope [, reuse_dst_scope]]) or
 * tr(sgv, {dst_graph=, dst_scope=, src_scope=, reuse_dst_scope=,
 * variables=}) -> view, info */
static int tr_call(lua_State *L)
{
	ge_transform_opts o;
	ge_transformer tr;
	int opts, gs, gd;
	lua_settop(L, 6);
	luaL_checkudata(L, 1, LGE_TRANSFORMER);
	int given = read_topts(L, 3, 0, &opts, &o);
	copy_only(L, opts);
	lsel_toview(L, 2, 2);
	int vidx = lua_gettop(L);
	transform_graphs(L, vidx, given, &gs, &gd);
	if (!o.dst_graph)
		o.dst_graph = G_at(L, gd)->g;
	ltr_run r;
	memset(&r, 0, sizeof r);
	r.L = L;
	r.gsrc = gs;
	r.gdst = gd;
	lua_pushnil(L);
	r.errslot = lua_gettop(L);
	build_transformer(L, 1, &tr, &r);
	return run_transform(L, vidx, gs, gd, opts, &o, &tr, &r, NULL, 0);
}

static int tr_tostring(lua_State *L)
{
	lua_pushliteral(L, "Transformer");
	return 1;
}

/* tr.field: the field set, else the default (upvalue 1: the stock
 * handlers and copy_control_flow_contexts = true). */
static int tr_index(lua_State *L)
{
	lua_settop(L, 2);
	lua_getiuservalue(L, 1, 1);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, 3) != LUA_TNIL)
		return 1;
	lua_pushvalue(L, 2);
	lua_rawget(L, lua_upvalueindex(1));
	return 1;
}

/* Handler fields take callables (nil restores the stock handler, false
 * turns the collections handler off); other fields take anything. */
static int tr_newindex(lua_State *L)
{
	lua_settop(L, 3);
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) :
							  NULL;
	int known = 0;
	for (int s = 0; s < N_SLOTS && k; s++)
		known |= !strcmp(k, slot_names[s]);
	if (known && !lua_isnil(L, 3) && !lge_callable(L, 3) &&
	    !(!strcmp(k, "assign_collections_handler") &&
	      lua_type(L, 3) == LUA_TBOOLEAN && !lua_toboolean(L, 3)))
		return luaL_error(L, "%s must be a function (got %s)", k,
				  luaL_typename(L, 3));
	lua_getiuservalue(L, 1, 1);
	lua_insert(L, 2);
	lua_rawset(L, 2);
	return 0;
}

/* ------------------------------------------------------------ functions */

/* The `placeholders` option of copy: a function(t) -> name. */
struct ph_fn {
	lua_State *L;
	int fn, gs;
};

/* ph_call(fn, graph, &t) -> name; run protected by ph_name. */
static int ph_call(lua_State *L)
{
	const ge_tref *t = lua_touserdata(L, 3);
	lua_pushvalue(L, 1);
	lge_pushtensor(L, 2, *t);
	lua_call(L, 1, 1);
	if (lua_type(L, -1) != LUA_TSTRING || !lua_rawlen(L, -1))
		return luaL_error(L, "the placeholders function must return "
				     "a name (got %s)",
				  luaL_typename(L, -1));
	return 1;
}

static int ph_name(ge_tinfo *I, ge_tref t, ge_buf *out, void *ud,
		   ge_error *err)
{
	(void)I;
	struct ph_fn *p = ud;
	lua_State *L = p->L;
	lua_pushcfunction(L, ph_call);
	lua_pushvalue(L, p->fn);
	lua_pushvalue(L, p->gs);
	lua_pushlightuserdata(L, &t);
	if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
		const char *m = lua_tostring(L, -1);
		ge_err(err, GE_EINVAL, "%s", m ? m : "error in placeholders");
		lua_pop(L, 1);
		return GE_EINVAL;
	}
	ge_buf_adds(out, lua_tostring(L, -1));
	lua_pop(L, 1);
	return GE_OK;
}

/* copy(sgv [, opts | dst_graph, dst_scope, src_scope, reuse]) ->
 * view, info */
static int m_copy(lua_State *L)
{
	ge_transform_opts o;
	ge_transformer tr;
	int opts, gs, gd;
	lua_settop(L, 5);
	int given = read_topts(L, 2, 0, &opts, &o);
	lsel_toview(L, 1, 1);
	int vidx = lua_gettop(L);
	transform_graphs(L, vidx, given, &gs, &gd);
	if (!o.dst_graph)
		o.dst_graph = G_at(L, gd)->g;
	ge_transformer_init(&tr);
	/* placeholders = "prefix" or function(t) -> name */
	ge_ph_naming nm = {NULL, NULL, NULL};
	struct ph_fn pf = {L, 0, gs};
	int ph = lsel_optfield(L, opts, "placeholders");
	if (lua_type(L, ph) == LUA_TSTRING) {
		nm.prefix = lua_tostring(L, ph);
	} else if (lua_type(L, ph) == LUA_TFUNCTION) {
		pf.fn = ph;
		nm.name = ph_name;
		nm.ud = &pf;
	} else if (!lua_isnil(L, ph)) {
		return luaL_error(L, "option 'placeholders' must be a prefix or "
				     "a function(t) returning a name");
	}
	if (!lua_isnil(L, ph))
		tr.transform_external_input_ud =
			tr.transform_external_hidden_input_ud = &nm;
	return run_transform(L, vidx, gs, gd, opts, &o, &tr, NULL, NULL, 0);
}

/* copy_with_input_replacements(sgv, {[t] = t2, ...} [, opts | dst_graph,
 * dst_scope, src_scope, reuse]) -> view, info */
static int m_copy_with_input_replacements(lua_State *L)
{
	ge_transform_opts o;
	int opts, gs, gd;
	size_t n;
	lua_settop(L, 6);
	int given = read_topts(L, 3, 0, &opts, &o);
	copy_only(L, opts);
	lsel_toview(L, 1, 1);
	int vidx = lua_gettop(L);
	transform_graphs(L, vidx, given, &gs, &gd);
	if (!o.dst_graph)
		o.dst_graph = G_at(L, gd)->g;
	ge_tpair *p = read_repl(L, 2, G_at(L, gs), G_at(L, gd), &n, 2);
	return run_transform(L, vidx, gs, gd, opts, &o, NULL, NULL, p, n);
}

/* Collects the distinct tensors of a target tree into ts, with their
 * positions (1-based) in the table at pos.  The graph is the first
 * tensor's; *gidx receives the index where its userdata is pushed. */
static void collect_targets(lua_State *L, int idx, int pos, int seen,
			    ge_tvec *ts, lge_graph **G, int *gidx, int depth)
{
	idx = lua_absindex(L, idx);
	luaL_checkstack(L, 6, "nested tables");
	if (lua_type(L, idx) == LUA_TTABLE) {
		if (depth > MAX_DEPTH)
			luaL_error(L, "tables nested too deeply");
		lua_pushvalue(L, idx);
		if (lua_rawget(L, seen) != LUA_TNIL) {
			lua_pop(L, 1);
			return;
		}
		lua_pop(L, 1);
		lua_pushvalue(L, idx);
		lua_pushboolean(L, 1);
		lua_rawset(L, seen);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			collect_targets(L, -1, pos, seen, ts, G, gidx,
					depth + 1);
			lua_pop(L, 1);
		}
		return;
	}
	lge_tensor *t = lge_testtensor(L, idx);
	if (!t)
		luaL_argerror(L, 1,
			      lua_pushfstring(L, "targets must be tensors "
						 "(got %s)",
					      luaL_typename(L, idx)));
	lge_checktensor(L, idx);
	if (!*G) {
		*G = t->owner;
		lua_getiuservalue(L, idx, 1);
		lua_replace(L, *gidx);
	} else if (t->owner != *G) {
		luaL_argerror(L, 1, "the targets belong to different graphs");
	}
	lua_pushvalue(L, idx);
	if (lua_rawget(L, pos) == LUA_TNIL) {
		ge_tvec_push(ts, t->t);
		lua_pushvalue(L, idx);
		lua_pushinteger(L, (lua_Integer)ts->n);
		lua_rawset(L, pos);
	}
	lua_pop(L, 1);
}

/* Rebuilds a target tree with each tensor replaced by its counterpart. */
static void rebuild_targets(lua_State *L, int idx, int pos, int memo,
			    const ge_tref *out, int gidx)
{
	idx = lua_absindex(L, idx);
	luaL_checkstack(L, 8, "nested tables");
	if (lua_type(L, idx) == LUA_TTABLE) {
		lua_pushvalue(L, idx);
		if (lua_rawget(L, memo) != LUA_TNIL)
			return;
		lua_pop(L, 1);
		lua_newtable(L);
		int res = lua_gettop(L);
		lua_pushvalue(L, idx);
		lua_pushvalue(L, res);
		lua_rawset(L, memo);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			rebuild_targets(L, -1, pos, memo, out, gidx);
			lua_pushvalue(L, -3);
			lua_insert(L, -2);
			lua_rawset(L, res);
			lua_pop(L, 1);
		}
		if (lua_getmetatable(L, idx))
			lua_setmetatable(L, res);
		return;
	}
	lua_pushvalue(L, idx);
	lua_rawget(L, pos);
	lua_Integer k = lua_tointeger(L, -1);
	lua_pop(L, 1);
	lge_pushtensor(L, gidx, out[k - 1]);
}

/* graph_replace(targets, {[t] = t2, ...} [, opts | dst_scope, src_scope,
 * reuse_dst_scope]) -> targets mapped (same shape), info */
static int m_graph_replace(lua_State *L)
{
	ge_transform_opts o;
	ge_error err;
	int opts;
	size_t n;
	lua_settop(L, 5);
	read_topts(L, 3, 1, &opts, &o);
	if (lua_isnoneornil(L, 1))
		return luaL_argerror(L, 1, "targets expected");
	lua_pushnil(L);
	int gidx = lua_gettop(L);
	lua_newtable(L);
	int pos = lua_gettop(L);
	lua_newtable(L);
	int seen = lua_gettop(L);
	ge_tvec *ts = lsel_tvec(L);
	lge_graph *G = NULL;
	collect_targets(L, 1, pos, seen, ts, &G, &gidx, 0);
	if (!G)
		return luaL_argerror(L, 1, "no target tensor");
	ge_tpair *p = read_repl(L, 2, G, G, &n, 2);
	ltinfo *ti = push_info(L, gidx, gidx);
	int info = lua_gettop(L);
	ge_tref *out = lua_newuserdatauv(L, (ts->n + 1) * sizeof *out, 0);
	ge_tinfo *I = NULL;
	/* the variables policy, as copy_with_input_replacements has it */
	lge_varopts vo;
	lge_checkvaropts(L, opts, gidx, &vo);
	int rc = ge_graph_replace_vars(G->g, ts->v, ts->n, p, n, &o, &vo.vo,
				       out, &I, NULL, &err);
	finish(L, NULL, ti, I, rc, &vo, &err);
	lua_newtable(L);
	rebuild_targets(L, 1, pos, lua_gettop(L), out, gidx);
	lua_pushvalue(L, info);
	return 2;
}

/* import_graph(dst, src [, {prefix=, reuse_prefix=, input_map=}]) -> info
 * input_map: {["x:0"] = tensor of dst, ["^c"] = op of dst, ...}; keys may
 * also be tensors (or ops, for control inputs) of src. */
struct mapent {
	const char *from;
	ge_tref to;
};

static int cmp_mapent(const void *a, const void *b)
{
	return strcmp(((const struct mapent *)a)->from,
		      ((const struct mapent *)b)->from);
}

static int m_import_graph(lua_State *L)
{
	static const char *const known[] = {"prefix", "reuse_prefix",
					    "input_map", NULL};
	ge_error err;
	lua_settop(L, 3);
	lge_graph *D = lge_checkgraph(L, 1), *S = lge_checkgraph(L, 2);
	if (D == S)
		return luaL_argerror(L, 2, "a graph cannot be imported into "
					   "itself (clone it first)");
	lge_checkopts(L, 3, known);
	ge_import_opts io;
	memset(&io, 0, sizeof io);
	io.prefix = lua_isnil(L, 3) ? NULL : lge_optfield(L, 3, "prefix");
	io.reuse_prefix = lsel_optbool(L, 3, "reuse_prefix", 0);
	int m = lsel_optfield(L, 3, "input_map"); /* 4 */
	lua_newtable(L); /* 5: keeps the key strings alive */
	size_t cap = 0;
	if (!lua_isnil(L, m)) {
		luaL_checktype(L, m, LUA_TTABLE);
		lua_pushnil(L);
		while (lua_next(L, m)) {
			lua_pop(L, 1);
			cap++;
		}
	}
	struct mapent *e = lua_newuserdatauv(L, (cap + 1) * sizeof *e, 0);
	const char **from = lua_newuserdatauv(L, (cap + 1) * sizeof *from, 0);
	ge_tref *to = lua_newuserdatauv(L, (cap + 1) * sizeof *to, 0);
	size_t n = 0;
	if (cap) {
		lua_pushnil(L);
		while (lua_next(L, m)) {
			ge_tref k;
			const char *key, *why;
			/* the key's text, kept alive by the table at 5 */
			if (lua_type(L, -2) == LUA_TSTRING)
				lua_pushvalue(L, -2);
			else if (!elem_in(L, -2, S, &k))
				return luaL_argerror(L, 3,
						     "input_map keys must be "
						     "tensor names or tensors "
						     "and ops of the source "
						     "graph");
			else if (k.index == GE_CONTROL)
				lua_pushfstring(L, "^%s",
						ge_op_name(S->g, k.op));
			else
				lua_pushfstring(L, "%s:%d",
						ge_op_name(S->g, k.op),
						(int)k.index);
			key = lua_tostring(L, -1);
			lua_rawseti(L, 5, (lua_Integer)n + 1);
			e[n].from = key;
			if (key[0] == '^') {
				ge_opid c;
				if ((why = lge_toopin(L, -1, D, &c)))
					return luaL_argerror(
						L, 3,
						lua_pushfstring(L, "input_map['%s']: "
								   "%s",
								key, why));
				e[n].to = (ge_tref){c, GE_CONTROL};
			} else if ((why = lge_totensorin(L, -1, D, 0,
							 &e[n].to))) {
				return luaL_argerror(
					L, 3,
					lua_pushfstring(L, "input_map['%s']: %s",
							key, why));
			}
			n++;
			lua_pop(L, 1);
		}
	}
	qsort(e, n, sizeof *e, cmp_mapent);
	for (size_t i = 0; i < n; i++) {
		from[i] = e[i].from;
		to[i] = e[i].to;
	}
	io.map_from = from;
	io.map_to = to;
	io.n_map = n;
	ltinfo *ti = push_info(L, 2, 1);
	ge_tinfo *I = NULL;
	int rc = ge_import_graph(D->g, S->g, &io, &I, &err);
	settle_info(ti, I, rc == GE_OK);
	if (rc)
		return lge_raise(L, &err);
	return 1;
}

/* export_scoped(g, scope) / g:export_scoped(scope) -> a new graph */
static int m_export_scoped(lua_State *L)
{
	ge_error err;
	ge_graph *out = NULL;
	lge_graph *G = lge_checkgraph(L, 1);
	const char *scope = luaL_checkstring(L, 2);
	if (ge_graph_export_scoped(G->g, scope, &out, &err))
		return lge_raise(L, &err);
	lge_pushgraph(L, out);
	return 1;
}

/* ------------------------------------------------------------ registration */

static const luaL_Reg transform_funcs[] = {
	{"Transformer", m_transformer},
	{"copy", m_copy},
	{"copy_with_input_replacements", m_copy_with_input_replacements},
	{"graph_replace", m_graph_replace},
	{"copy_op_handler", h_copy_op},
	{"transform_op_if_inside_handler", h_if_inside},
	{"replace_t_with_placeholder_handler", h_replace_t},
	{"keep_t_if_possible_handler", h_keep_t},
	{"assign_renamed_collections_handler", h_assign_collections},
	{"is_predefined_collection", h_is_predefined},
	{"import_graph", m_import_graph},
	{"export_scoped", m_export_scoped},
	{NULL, NULL},
};

void lge_open_transform(lua_State *L)
{
	static const luaL_Reg ti_meta[] = {
		{"__index", ti_index},
		{"__newindex", ti_newindex},
		{"__tostring", ti_tostring},
		{"__gc", ti_gc},
		{NULL, NULL},
	};
	static const luaL_Reg ti_methods[] = {
		{"transformed", ti_transformed},
		{"original", ti_original},
		{"new_name", ti_new_name},
		{"in_view", ti_in_view},
		{"collections_of", ti_collections_of},
		{"dump", ti_dump},
		{NULL, NULL},
	};
	static const luaL_Reg graph_methods[] = {
		{"export_scoped", m_export_scoped},
		{NULL, NULL},
	};
	static const lua_CFunction stock[N_SLOTS] = {
		h_copy_op, h_if_inside, h_replace_t, h_keep_t,
		h_assign_collections,
	};
	int mod = lua_gettop(L);
	lge_newtype(L, LGE_TINFO, ti_meta, ti_methods);
	lua_pop(L, 1);
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pop(L, 1);

	/* Transformer: fields fall back to the stock handlers, so a field
	 * set to nil reads as the stock one again. */
	luaL_newmetatable(L, LGE_TRANSFORMER);
	lua_createtable(L, 0, N_SLOTS + 1);
	for (int s = 0; s < N_SLOTS; s++) {
		lua_pushcfunction(L, stock[s]);
		lua_setfield(L, -2, slot_names[s]);
	}
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "copy_control_flow_contexts");
	lua_pushcclosure(L, tr_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, tr_call);
	lua_setfield(L, -2, "__call");
	lua_pushcfunction(L, tr_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, tr_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	lua_newtable(L);
	luaL_setfuncs(L, transform_funcs, 0);
	luaL_getmetatable(L, LGE_TINFO);
	lua_getfield(L, -1, "__methods");
	lua_setfield(L, -3, "TransformerInfo");
	lua_pop(L, 1);
	lua_pushvalue(L, -1);
	lua_setfield(L, mod, "transform");
	/* flat on ge as well */
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_settable(L, mod);
	}
	lua_pop(L, 1);
}
