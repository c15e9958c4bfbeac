/*
 * l_subgraph.c: the SubGraphView userdata (gerewrite.view) and
 * ge.subgraph: SubGraphView, make_view (ge.sgv), make_view_from_scope
 * (ge.sgv_scope).
 *
 * Methods that graph_editor defines as returning a new view (remap_*,
 * remove_unused_ops, copy) return a new userdata; the view itself changes
 * only through the graph-editing functions (reroute, edit), as in
 * graph_editor.  Positions in views are 1-based; tensor output indices
 * stay 0-based.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/frames.h"
#include "l_editor.h"

static int view_gc(lua_State *L)
{
	lge_view *w = lua_touserdata(L, 1);
	ge_view_free(&w->v);
	return 0;
}

lge_view *lsel_pushview(lua_State *L, ge_view *v, int gidx)
{
	static const ge_view empty = GE_VIEW_INIT;
	if (gidx)
		gidx = lua_absindex(L, gidx);
	lge_view *w = lua_newuserdatauv(L, sizeof *w, 1);
	w->v = empty;
	w->owner = NULL;
	luaL_setmetatable(L, LGE_VIEW);
	w->v = *v; /* from here __gc frees it */
	*v = empty;
	if (w->v.graph && gidx) {
		w->owner = lua_touserdata(L, gidx);
		lua_pushvalue(L, gidx);
		lua_setiuservalue(L, -2, 1);
	}
	return w;
}

lge_view *lsel_testview(lua_State *L, int idx)
{
	return luaL_testudata(L, idx, LGE_VIEW);
}

lge_view *lsel_checkview(lua_State *L, int idx)
{
	ge_error err;
	lge_view *w = luaL_checkudata(L, idx, LGE_VIEW);
	if (w->owner && !w->owner->g)
		luaL_argerror(L, idx, "the view's graph is closed");
	if (ge_view_check(&w->v, &err))
		lge_raise(L, &err);
	return w;
}

void lsel_pushviewgraph(lua_State *L, int idx)
{
	lua_getiuservalue(L, idx, 1);
}

/* A new view of the ops and tensors of one value (graph_editor's
 * SubGraphView(*select_ops_and_ts(x)) for a non-regex x). */
static lge_view *view_of_value(lua_State *L, int idx, int arg)
{
	ge_view v;
	ge_error err;
	idx = lua_absindex(L, idx);
	lge_graph *G = lsel_findgraph(L, idx);
	int gidx = G ? lua_gettop(L) : 0;
	if (!G) {
		ge_view_init(&v, NULL, NULL, 0, NULL, 0, NULL);
		return lsel_pushview(L, &v, 0);
	}
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *ts = lsel_tvec(L);
	lsel_ops(L, idx, G, 1, arg, ops);
	lsel_ts(L, idx, G, 1, arg, ts);
	if (ge_view_init(&v, G->g, ops->v, ops->n, ts->v, ts->n, &err))
		lge_raise(L, &err);
	lge_view *w = lsel_pushview(L, &v, gidx);
	lua_replace(L, gidx);
	lua_settop(L, gidx);
	return w;
}

lge_view *lsel_toview(lua_State *L, int idx, int arg)
{
	lge_view *w = lsel_testview(L, idx);
	if (w) {
		lsel_checkview(L, idx);
		lua_pushvalue(L, idx);
		return w;
	}
	return view_of_value(L, idx, arg);
}

/* ------------------------------------------------------------ module */

/* SubGraphView([inside_ops [, passthrough_ts]]) */
static int sg_subgraphview(lua_State *L)
{
	ge_view v;
	ge_error err;
	lua_settop(L, 2);
	lge_graph *G = lsel_findgraph(L, 1);
	if (!G)
		G = lsel_findgraph(L, 2);
	if (!G) {
		ge_view_init(&v, NULL, NULL, 0, NULL, 0, NULL);
		lsel_pushview(L, &v, 0);
		return 1;
	}
	int gidx = lua_gettop(L);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *ts = lsel_tvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	lsel_ts(L, 2, G, 0, 2, ts);
	if (ge_view_init(&v, G->g, ops->v, ops->n, ts->v, ts->n, &err))
		return lge_raise(L, &err);
	lsel_pushview(L, &v, gidx);
	return 1;
}

/* Reads a plain list holding only live ops of one graph into v (ids in
 * list order) and returns 1; returns 0, v empty, for anything else (a
 * tensor, a name, a nested list, ops of two graphs, a removed op), which
 * the selection's general path then reads or refuses with its message.
 * One metatable comparison per element, no userdata pushed back. */
static int list_of_ops(lua_State *L, int idx, ge_opvec *v)
{
	if (lua_type(L, idx) != LUA_TTABLE || lua_getmetatable(L, idx) ||
	    lua_rawlen(L, idx) == 0)
		return 0;
	int top = lua_gettop(L);
	lua_Unsigned n = lua_rawlen(L, idx);
	if (v->cap < n && n <= SIZE_MAX / sizeof *v->v) {
		/* room for the whole list, resident before it is written */
		v->v = ge_xrealloc(v->v, (size_t)n * sizeof *v->v);
		v->cap = (size_t)n;
		ge_prefault(v->v, v->cap * sizeof *v->v);
	}
	/* the ops of one graph share its op metatable (lge.h): the first
	 * element is tested as an op, the others by their metatable's
	 * address, which is the first's */
	const void *op_mt = NULL;
	const lge_graph *owner = NULL;
	for (lua_Unsigned i = 1; i <= n; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i);
		const lge_op *o = op_mt ? lua_touserdata(L, -1)
					: lge_testop(L, -1);
		int ok = o && lua_getmetatable(L, -1) &&
			 (!op_mt || lua_topointer(L, -1) == op_mt);
		if (ok && !op_mt)
			op_mt = lua_topointer(L, -1);
		lua_settop(L, top);
		if (!ok || (owner && o->owner != owner) || !o->owner->g ||
		    !ge_op_alive(o->owner->g, o->id)) {
			v->n = 0;
			return 0;
		}
		owner = o->owner;
		ge_opvec_push(v, o->id);
	}
	return 1;
}

/* Whether the options table at opts (0: none) names nothing but graph. */
static int only_graph_opt(lua_State *L, int opts)
{
	if (!opts)
		return 1;
	int only = 1;
	lua_pushnil(L);
	while (only && lua_next(L, opts)) {
		only = lua_type(L, -2) == LUA_TSTRING &&
		       !strcmp(lua_tostring(L, -2), "graph");
		lua_pop(L, 1);
	}
	if (!only)
		lua_pop(L, 1);
	return only;
}

/* Pushes the view of ops and ts of G (its userdata at gidx), ops first
 * completed to whole loops (loops 1) or checked not to cut one (2). */
static int push_view_of(lua_State *L, lge_graph *G, int gidx, ge_opvec *ops,
			ge_tvec *ts, int loops)
{
	ge_view v;
	ge_error err;
	if (loops == 1)
		ge_frames_whole_loops(G->g, ops);
	else if (loops == 2 &&
		 ge_frames_check_view(G->g, ops->v, ops->n, &err))
		return lge_raise(L, &err);
	if (ge_view_init(&v, G->g, ops->v, ops->n, ts ? ts->v : NULL,
			 ts ? ts->n : 0, &err))
		return lge_raise(L, &err);
	lsel_pushview(L, &v, gidx);
	return 1;
}

static int push_ops_view(lua_State *L, lge_graph *G, int gidx, ge_opvec *ops,
			 int loops)
{
	return push_view_of(L, G, gidx, ops, NULL, loops);
}

/* make_view(args... [, {graph=, loops=}]): a single view is returned as
 * is; anything else is SubGraphView(select_ops_and_ts(args...)), its ops
 * completed to whole while loops (loops = "whole") or refused when they
 * cut one (loops = "refuse"). */
static int sg_make_view(lua_State *L)
{
	ge_view v;
	int top = lua_gettop(L), opts = 0;
	if (top > 0 && lsel_isopts(L, top))
		opts = top;
	int gi = lsel_optfield(L, opts, "graph");
	lge_graph *want = lua_isnil(L, gi) ? NULL : lge_checkgraph(L, gi);
	lua_pop(L, 1);
	/* loops = "cut" (graph_editor's views), "whole" or "refuse": the
	 * selection's options go on without it */
	static const char *const loop_modes[] = {"cut", "whole", "refuse", NULL};
	int loops = 0;
	int li = lsel_optfield(L, opts, "loops");
	if (!lua_isnil(L, li)) {
		loops = luaL_checkoption(L, li, NULL, loop_modes);
		lua_newtable(L);
		lua_pushnil(L);
		while (lua_next(L, opts)) {
			if (lua_type(L, -2) == LUA_TSTRING &&
			    !strcmp(lua_tostring(L, -2), "loops")) {
				lua_pop(L, 1);
				continue;
			}
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_settable(L, -4);
		}
		lua_replace(L, opts);
	}
	lua_pop(L, 1);
	if (top - (opts != 0) == 1 && lsel_testview(L, 1)) {
		lge_view *w = lsel_checkview(L, 1);
		if (want && w->owner && w->owner != want)
			return luaL_error(L, "Graph mismatch.");
		lua_settop(L, 1);
		return 1;
	}
	/* a graph alone: the view of all its ops, made without a list */
	if (top == 1 && luaL_testudata(L, 1, LGE_GRAPH)) {
		lge_graph *G = lge_checkgraph(L, 1);
		ge_view_init_graph(&v, G->g);
		lsel_pushview(L, &v, ge_view_is_empty(&v) ? 0 : 1);
		return 1;
	}
	/* a list of ops alone (ge.sgv(g:ops())): read straight into the
	 * view, without the selection's lists of op userdata */
	if (top - (opts != 0) == 1 && only_graph_opt(L, opts)) {
		ge_opvec *fast = lsel_opvec(L);
		if (list_of_ops(L, 1, fast)) {
			lge_graph *G = lsel_findgraph(L, 1);
			if (want && G != want)
				return luaL_error(L, "Graph mismatch.");
			return push_ops_view(L, G, lua_gettop(L), fast, loops);
		}
		lua_settop(L, top);
	}
	lua_pushcfunction(L, lsel_select_ops_and_ts);
	for (int i = 1; i <= top; i++)
		lua_pushvalue(L, i);
	lua_call(L, top, 2);
	int ops_i = top + 1, ts_i = top + 2;
	lge_graph *G = lsel_findgraph(L, ops_i);
	if (!G)
		G = lsel_findgraph(L, ts_i);
	if (!G) {
		ge_view_init(&v, NULL, NULL, 0, NULL, 0, NULL);
		lsel_pushview(L, &v, 0);
		return 1;
	}
	if (want && G != want)
		return luaL_error(L, "Graph mismatch.");
	int gidx = lua_gettop(L);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *ts = lsel_tvec(L);
	lsel_ops(L, ops_i, G, 0, 1, ops);
	lsel_ts(L, ts_i, G, 0, 1, ts);
	return push_view_of(L, G, gidx, ops, ts, loops);
}

/* make_view_from_scope(scope, graph) */
static int sg_make_view_from_scope(lua_State *L)
{
	ge_view v;
	ge_error err;
	const char *scope = luaL_checkstring(L, 1);
	lge_graph *G = lge_checkgraph(L, 2);
	if (ge_make_view_from_scope(G->g, scope, &v, &err))
		return lge_raise(L, &err);
	lsel_pushview(L, &v, 2);
	return 1;
}

const luaL_Reg lge_subgraph_funcs[] = {
	{"SubGraphView", sg_subgraphview},
	{"make_view", sg_make_view},
	{"make_view_from_scope", sg_make_view_from_scope},
	{NULL, NULL},
};

/* ------------------------------------------------------------ methods */

/* Pushes a copy of the view at 1 as a new userdata; returns it. */
static lge_view *push_copy(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	ge_view c;
	ge_view_copy(&c, &w->v);
	int gidx = 0;
	if (w->owner) {
		lsel_pushviewgraph(L, 1);
		gidx = lua_gettop(L);
	}
	lge_view *n = lsel_pushview(L, &c, gidx);
	if (gidx)
		lua_remove(L, gidx);
	return n;
}

static int v_copy(lua_State *L)
{
	push_copy(L);
	return 1;
}

/* A remap list: 1-based positions, or tensors (their first position in
 * `list`). */
static int64_t *remap_list(lua_State *L, int idx, lge_view *w,
			   const ge_tvec *list, size_t *n)
{
	luaL_checktype(L, idx, LUA_TTABLE);
	lua_Integer len = luaL_len(L, idx);
	int64_t *r = lua_newuserdatauv(L, (size_t)(len > 0 ? len : 1) *
						  sizeof *r, 0);
	for (lua_Integer i = 1; i <= len; i++) {
		int isnum;
		lua_geti(L, idx, i);
		lua_Integer k = lua_tointegerx(L, -1, &isnum);
		if (isnum) {
			/* positions are 1-based here: say so in the error */
			if (k < 1 || (size_t)k > list->n)
				luaL_argerror(L, idx, lua_pushfstring(L,
					"position %I out of the range [1, %I]",
					k, (lua_Integer)list->n));
			r[i - 1] = k - 1;
		} else {
			ge_tref t;
			if (!w->owner)
				luaL_argerror(L, idx, "the empty view has no "
						      "tensors");
			if (lge_totensorin(L, lua_gettop(L), w->owner, 0, &t))
				luaL_argerror(L, idx, lua_tostring(L, -1));
			size_t j;
			for (j = 0; j < list->n; j++)
				if (ge_tref_eq(list->v[j], t))
					break;
			if (j == list->n) {
				ge_buf b = GE_BUF_INIT;
				lua_pushfstring(L, "tensor '%s' is not in the view",
						ge_tensor_fmt(w->owner->g, t, &b));
				ge_buf_free(&b);
				luaL_argerror(L, idx, lua_tostring(L, -1));
			}
			r[i - 1] = (int64_t)j;
		}
		lua_pop(L, 1);
	}
	*n = (size_t)len;
	return r;
}

static int v_remap_inputs(lua_State *L)
{
	ge_error err;
	size_t n;
	lua_settop(L, 2);
	lge_view *w = lsel_checkview(L, 1);
	int64_t *idx = remap_list(L, 2, w, &w->v.inputs, &n);
	lge_view *c = push_copy(L);
	if (ge_view_remap_inputs(&c->v, idx, n, &err))
		return lge_raise(L, &err);
	return 1;
}

static int v_remap_outputs(lua_State *L)
{
	ge_error err;
	size_t n;
	lua_settop(L, 2);
	lge_view *w = lsel_checkview(L, 1);
	int64_t *idx = remap_list(L, 2, w, &w->v.outputs, &n);
	lge_view *c = push_copy(L);
	if (ge_view_remap_outputs(&c->v, idx, n, &err))
		return lge_raise(L, &err);
	return 1;
}

/* remap([new_input_indices [, new_output_indices]]): nil keeps a map. */
static int v_remap(lua_State *L)
{
	ge_error err;
	size_t ni = 0, no = 0;
	int64_t *in = NULL, *out = NULL;
	lua_settop(L, 3);
	lge_view *w = lsel_checkview(L, 1);
	if (!lua_isnil(L, 2))
		in = remap_list(L, 2, w, &w->v.inputs, &ni);
	if (!lua_isnil(L, 3))
		out = remap_list(L, 3, w, &w->v.outputs, &no);
	lge_view *c = push_copy(L);
	if (ge_view_remap(&c->v, in, ni, out, no, &err))
		return lge_raise(L, &err);
	return 1;
}

/* remap_default([remove_input_map [, remove_output_map]]) */
static int v_remap_default(lua_State *L)
{
	lua_settop(L, 3);
	int ri = lua_isnil(L, 2) ? 1 : lua_toboolean(L, 2);
	int ro = lua_isnil(L, 3) ? 1 : lua_toboolean(L, 3);
	lge_view *c = push_copy(L);
	ge_view_remap_default(&c->v, ri, ro);
	return 1;
}

static int v_remap_outputs_make_unique(lua_State *L)
{
	lge_view *c = push_copy(L);
	ge_view_remap_outputs_make_unique(&c->v);
	return 1;
}

static int v_remap_outputs_to_consumers(lua_State *L)
{
	lge_view *c = push_copy(L);
	ge_view_remap_outputs_to_consumers(&c->v);
	return 1;
}

/* remove_unused_ops([control_inputs]) (default true) */
static int v_remove_unused_ops(lua_State *L)
{
	ge_error err;
	lua_settop(L, 2);
	int ci = lua_isnil(L, 2) ? 1 : lua_toboolean(L, 2);
	lge_view *c = push_copy(L);
	if (ge_view_remove_unused_ops(&c->v, ci, &err))
		return lge_raise(L, &err);
	return 1;
}

static int v_consumers(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	if (!w->owner) {
		lua_newtable(L);
		return 1;
	}
	lsel_pushviewgraph(L, 1);
	int gidx = lua_gettop(L);
	ge_opvec *out = lsel_opvec(L);
	ge_view_consumers(&w->v, out);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

static int v_find_op_by_name(lua_State *L)
{
	ge_error err;
	ge_opid id;
	lge_view *w = lsel_checkview(L, 1);
	const char *name = luaL_checkstring(L, 2);
	if (ge_view_find_op_by_name(&w->v, name, &id, &err))
		return lge_raise(L, &err);
	lsel_pushviewgraph(L, 1);
	lge_pushop(L, -1, id);
	return 1;
}

/* op(i): the i-th op (1-based), or nil. */
static int v_op(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	lua_Integer i = luaL_checkinteger(L, 2);
	if (i < 1 || (size_t)i > w->v.ops.n)
		return 0;
	lsel_pushviewgraph(L, 1);
	lge_pushop(L, -1, w->v.ops.v[i - 1]);
	return 1;
}

static int tensor_index(lua_State *L, int outputs)
{
	ge_error err;
	ge_tref t;
	lge_view *w = lsel_checkview(L, 1);
	if (!w->owner)
		return luaL_error(L, "the empty view has no %s",
				  outputs ? "outputs" : "inputs");
	t = lge_checktensorin(L, 2, w->owner, 0);
	int r = outputs ? ge_view_output_index(&w->v, t, &err) :
			  ge_view_input_index(&w->v, t, &err);
	if (r < 0)
		return lge_raise(L, &err);
	lua_pushinteger(L, (lua_Integer)r + 1);
	return 1;
}

static int v_input_index(lua_State *L)
{
	return tensor_index(L, 0);
}

static int v_output_index(lua_State *L)
{
	return tensor_index(L, 1);
}

static int v_is_passthrough(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	if (!w->owner) {
		lua_pushboolean(L, 0);
		return 1;
	}
	ge_tref t = lge_checktensorin(L, 2, w->owner, 0);
	lua_pushboolean(L, ge_view_is_passthrough(&w->v, t));
	return 1;
}

static int v_is_empty(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	lua_pushboolean(L, ge_view_is_empty(&w->v));
	return 1;
}

/* dump() -> graph_editor's multi-line layout of the view */
static int v_dump(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	ge_buf *b = lge_newbuf(L);
	ge_view_format(&w->v, b);
	lua_pushlstring(L, b->data ? (const char *)b->data : "", b->len);
	return 1;
}

static int v_tostring(lua_State *L)
{
	lge_view *w = luaL_checkudata(L, 1, LGE_VIEW);
	ge_buf *b = lge_newbuf(L);
	if (w->owner && !w->owner->g)
		ge_buf_adds(b, "view (graph closed)");
	else
		ge_view_summary(&w->v, b);
	lua_pushlstring(L, (const char *)b->data, b->len);
	return 1;
}

static int v_len(lua_State *L)
{
	lge_view *w = lsel_checkview(L, 1);
	lua_pushinteger(L, (lua_Integer)w->v.ops.n);
	return 1;
}

static void push_tlist(lua_State *L, lge_view *w, const ge_tvec *v)
{
	if (!w->owner) {
		lua_newtable(L);
		return;
	}
	lsel_pushviewgraph(L, 1);
	lsel_pushts(L, -1, v->v, v->n);
	lua_remove(L, -2);
}

static int v_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	if (lua_type(L, 2) == LUA_TSTRING) {
		lge_view *w = NULL;
		if (!strcmp(k, "graph") || !strcmp(k, "ops") ||
		    !strcmp(k, "inputs") || !strcmp(k, "outputs") ||
		    !strcmp(k, "passthroughs") ||
		    !strcmp(k, "connected_inputs") ||
		    !strcmp(k, "connected_outputs"))
			w = lsel_checkview(L, 1);
		if (w && !strcmp(k, "graph")) {
			if (w->owner)
				lsel_pushviewgraph(L, 1);
			else
				lua_pushnil(L);
			return 1;
		}
		if (w && !strcmp(k, "ops")) {
			if (!w->owner) {
				lua_newtable(L);
				return 1;
			}
			lsel_pushviewgraph(L, 1);
			lsel_pushops(L, -1, w->v.ops.v, w->v.ops.n);
			return 1;
		}
		if (w && !strcmp(k, "inputs")) {
			push_tlist(L, w, &w->v.inputs);
			return 1;
		}
		if (w && !strcmp(k, "outputs")) {
			push_tlist(L, w, &w->v.outputs);
			return 1;
		}
		if (w && !strcmp(k, "passthroughs")) {
			push_tlist(L, w, &w->v.passthroughs);
			return 1;
		}
		if (w) {
			ge_tvec *t = lsel_tvec(L);
			if (!strcmp(k, "connected_inputs"))
				ge_view_connected_inputs(&w->v, t);
			else
				ge_view_connected_outputs(&w->v, t);
			push_tlist(L, w, t);
			return 1;
		}
	}
	lge_pushmethod(L, 1, 2);
	return 1;
}

static int v_newindex(lua_State *L)
{
	return luaL_error(L, "a view's fields are read-only (remap it "
			     "instead)");
}

void lge_open_view(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{"__gc", view_gc},
		{"__index", v_index},
		{"__newindex", v_newindex},
		{"__tostring", v_tostring},
		{"__len", v_len},
		{NULL, NULL},
	};
	static const luaL_Reg methods[] = {
		{"copy", v_copy},
		{"remap_inputs", v_remap_inputs},
		{"remap_outputs", v_remap_outputs},
		{"remap", v_remap},
		{"remap_default", v_remap_default},
		{"remap_outputs_make_unique", v_remap_outputs_make_unique},
		{"remap_outputs_to_consumers", v_remap_outputs_to_consumers},
		{"remove_unused_ops", v_remove_unused_ops},
		{"consumers", v_consumers},
		{"find_op_by_name", v_find_op_by_name},
		{"op", v_op},
		{"input_index", v_input_index},
		{"output_index", v_output_index},
		{"is_passthrough", v_is_passthrough},
		{"is_empty", v_is_empty},
		{"dump", v_dump},
		{NULL, NULL},
	};
	lge_newtype(L, LGE_VIEW, meta, methods);
	lua_pop(L, 1);
}
