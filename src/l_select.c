/*
 * l_select.c: ge.util and ge.select (graph_editor's util and select
 * modules), the argument conversions shared by the graph_editor bindings,
 * the ControlOutputs object, and the registration of all of them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/frames.h"
#include "l_editor.h"

/* ------------------------------------------------------------ scratch */

static int opvec_gc(lua_State *L)
{
	ge_opvec_free(lua_touserdata(L, 1));
	return 0;
}

static int tvec_gc(lua_State *L)
{
	ge_tvec_free(lua_touserdata(L, 1));
	return 0;
}

ge_opvec *lsel_opvec(lua_State *L)
{
	ge_opvec *v = lua_newuserdatauv(L, sizeof *v, 0);
	memset(v, 0, sizeof *v);
	if (luaL_newmetatable(L, "gerewrite.opvec")) {
		lua_pushcfunction(L, opvec_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return v;
}

ge_tvec *lsel_tvec(lua_State *L)
{
	ge_tvec *v = lua_newuserdatauv(L, sizeof *v, 0);
	memset(v, 0, sizeof *v);
	if (luaL_newmetatable(L, "gerewrite.tvec")) {
		lua_pushcfunction(L, tvec_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return v;
}

/* ------------------------------------------------------------ conversion */

static int isplain(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return 0;
	if (!lua_getmetatable(L, idx))
		return 1;
	lua_pop(L, 1);
	return 0;
}

int lsel_iscouts(lua_State *L, int idx)
{
	return luaL_testudata(L, idx, LGE_COUTS) != NULL;
}

lge_graph *lsel_findgraph(lua_State *L, int idx)
{
	lge_op *o;
	lge_tensor *t;
	lge_view *w;
	lge_graph *G;
	idx = lua_absindex(L, idx);
	if ((o = lge_testop(L, idx)) || (t = lge_testtensor(L, idx))) {
		G = o ? o->owner : t->owner;
		if (!G->g)
			luaL_error(L, "the graph of this %s is closed",
				   o ? "op" : "tensor");
		if (o)
			lge_pushopgraph(L, idx);
		else
			lua_getiuservalue(L, idx, 1);
		return G;
	}
	if ((G = luaL_testudata(L, idx, LGE_GRAPH))) {
		if (!G->g)
			luaL_error(L, "graph is closed");
		lua_pushvalue(L, idx);
		return G;
	}
	if ((w = lsel_testview(L, idx))) {
		if (!w->owner)
			return NULL;
		lua_getiuservalue(L, idx, 1);
		return w->owner;
	}
	if (lsel_iscouts(L, idx)) {
		lua_getiuservalue(L, idx, 1);
		return lua_touserdata(L, -1);
	}
	if (isplain(L, idx)) {
		lua_Integer n = luaL_len(L, idx);
		for (lua_Integer i = 1; i <= n; i++) {
			lua_geti(L, idx, i);
			G = lsel_findgraph(L, -1);
			if (G) {
				lua_remove(L, -2);
				return G;
			}
			lua_pop(L, 1);
		}
	}
	return NULL;
}

static void need_graph(lua_State *L, lge_graph *G, int arg)
{
	if (!G)
		luaL_argerror(L, arg, "names need a graph to be looked up in");
}

static void same_graph(lua_State *L, lge_graph *G, lge_graph *H, int arg)
{
	if (G != H)
		luaL_argerror(L, arg, "Wrong graph! (the values belong to "
				      "different graphs)");
}

void lsel_ops(lua_State *L, int idx, lge_graph *G, int ignore_ts, int arg,
	      ge_opvec *v)
{
	lge_graph *H;
	lge_view *w;
	ge_opid id;
	idx = lua_absindex(L, idx);
	if (lua_isnil(L, idx))
		return;
	if (lua_type(L, idx) == LUA_TSTRING || lge_testop(L, idx)) {
		need_graph(L, G, arg);
		if (lge_toopin(L, idx, G, &id))
			luaL_argerror(L, arg, lua_tostring(L, -1));
		ge_opvec_push(v, id);
		return;
	}
	if (lge_testtensor(L, idx)) {
		if (!ignore_ts)
			luaL_argerror(L, arg, "ops expected, got a tensor");
		return;
	}
	if ((H = luaL_testudata(L, idx, LGE_GRAPH))) {
		same_graph(L, G, H, arg);
		ge_graph_all_ops(H->g, v);
		return;
	}
	if ((w = lsel_testview(L, idx))) {
		if (!w->owner)
			return;
		same_graph(L, G, w->owner, arg);
		lsel_checkview(L, idx);
		for (size_t i = 0; i < w->v.ops.n; i++)
			ge_opvec_push(v, w->v.ops.v[i]);
		return;
	}
	if (isplain(L, idx)) {
		lua_Integer n = luaL_len(L, idx);
		for (lua_Integer i = 1; i <= n; i++) {
			lua_geti(L, idx, i);
			lsel_ops(L, -1, G, ignore_ts, arg, v);
			lua_pop(L, 1);
		}
		return;
	}
	luaL_typeerror(L, arg, "op, list of ops, graph or view");
}

void lsel_ts(lua_State *L, int idx, lge_graph *G, int ignore_ops, int arg,
	     ge_tvec *v)
{
	lge_graph *H;
	ge_tref t;
	idx = lua_absindex(L, idx);
	if (lua_isnil(L, idx))
		return;
	if (lua_type(L, idx) == LUA_TSTRING || lge_testtensor(L, idx)) {
		need_graph(L, G, arg);
		if (lge_totensorin(L, idx, G, 0, &t))
			luaL_argerror(L, arg, lua_tostring(L, -1));
		ge_tvec_push(v, t);
		return;
	}
	if (lge_testop(L, idx) || lsel_testview(L, idx)) {
		if (!ignore_ops)
			luaL_argerror(L, arg, "tensors expected, got an op");
		return;
	}
	if ((H = luaL_testudata(L, idx, LGE_GRAPH))) {
		same_graph(L, G, H, arg);
		ge_graph_all_ts(H->g, v);
		return;
	}
	if (isplain(L, idx)) {
		lua_Integer n = luaL_len(L, idx);
		for (lua_Integer i = 1; i <= n; i++) {
			lua_geti(L, idx, i);
			lsel_ts(L, -1, G, ignore_ops, arg, v);
			lua_pop(L, 1);
		}
		return;
	}
	luaL_typeerror(L, arg, "tensor, list of tensors or graph");
}

/* Whether a seed list starts with a tensor (or a "name:k" string). */
static int first_is_tensor(lua_State *L, int idx)
{
	int r = 0;
	if (lge_testtensor(L, idx))
		return 1;
	if (lua_type(L, idx) == LUA_TSTRING)
		return strchr(lua_tostring(L, idx), ':') != NULL;
	if (isplain(L, idx) && luaL_len(L, idx) > 0) {
		lua_geti(L, idx, 1);
		r = first_is_tensor(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	return r;
}

void lsel_seeds(lua_State *L, int idx, lge_graph *G, int arg, ge_opvec *ops,
		ge_tvec *ts, ge_seeds *s)
{
	memset(s, 0, sizeof *s);
	if (first_is_tensor(L, idx)) {
		lsel_ts(L, idx, G, 0, arg, ts);
		s->ts = ts->v;
		s->n_ts = ts->n;
	} else {
		lsel_ops(L, idx, G, 0, arg, ops);
		s->ops = ops->v;
		s->n_ops = ops->n;
	}
}

void lsel_pushops(lua_State *L, int gidx, const ge_opid *ops, size_t n)
{
	lge_pushoplist(L, gidx, ops, n);
}

void lsel_pushts(lua_State *L, int gidx, const ge_tref *ts, size_t n)
{
	gidx = lua_absindex(L, gidx);
	lua_createtable(L, n > INT32_MAX ? 0 : (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lge_pushtensor(L, gidx, ts[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* An empty list when there is no graph to push wrappers from. */
static int push_empty(lua_State *L, int nret)
{
	for (int i = 0; i < nret; i++)
		lua_newtable(L);
	return nret;
}

/* ------------------------------------------------------------ options */

int lsel_isopts(lua_State *L, int idx)
{
	if (!isplain(L, idx))
		return 0;
	idx = lua_absindex(L, idx);
	if (luaL_len(L, idx) > 0)
		return 0;
	lua_pushnil(L);
	if (!lua_next(L, idx))
		return 0; /* {} is an empty list */
	int r = lua_type(L, -2) == LUA_TSTRING;
	lua_pop(L, 2);
	return r;
}

int lsel_optfield(lua_State *L, int idx, const char *k)
{
	if (idx == 0 || lua_isnoneornil(L, idx))
		lua_pushnil(L);
	else
		lua_getfield(L, idx, k);
	return lua_gettop(L);
}

int lsel_optbool(lua_State *L, int idx, const char *k, int def)
{
	int f = lsel_optfield(L, idx, k);
	int r = lua_isnil(L, f) ? def : lua_toboolean(L, f);
	lua_pop(L, 1);
	return r;
}

static const char *optstring(lua_State *L, int idx, const char *k)
{
	if (idx == 0 || lua_isnoneornil(L, idx))
		return NULL;
	return lge_optfield(L, idx, k);
}

/* control_inputs / control_outputs / control_ios, as check_cios reads
 * them: control_outputs and control_ios are a ControlOutputs (or true). */
static void cios(lua_State *L, int opts, int *ci, int *co)
{
	*ci = lsel_optbool(L, opts, "control_inputs", 0);
	*co = lsel_optbool(L, opts, "control_outputs", 0);
	int both = lsel_optbool(L, opts, "control_ios", 0);
	if (both && *co)
		luaL_error(L, "control_ios and control_outputs cannot both be "
			      "given");
	if (both)
		*ci = *co = 1;
}

/* ------------------------------------------------------------ callbacks */

static int call_pred(lsel_cb *c, int is_op, ge_opid op, ge_tref t)
{
	lua_State *L = c->L;
	if (c->failed)
		return -1;
	if (!lua_checkstack(L, 4)) {
		lua_pushliteral(L, "stack overflow in a callback");
		c->failed = 1;
		return -1;
	}
	lua_pushvalue(L, c->fn);
	if (is_op)
		lge_pushop(L, c->gidx, op);
	else
		lge_pushtensor(L, c->gidx, t);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		c->failed = 1; /* the error stays on the stack */
		return -1;
	}
	int r = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return r;
}

int lsel_op_pred(const ge_graph *g, ge_opid op, void *ud)
{
	(void)g;
	return call_pred(ud, 1, op, (ge_tref){GE_NOOP, 0});
}

int lsel_t_pred(const ge_graph *g, ge_tref t, void *ud)
{
	(void)g;
	return call_pred(ud, 0, GE_NOOP, t);
}

int lsel_rethrow(lua_State *L, lsel_cb *cb, const ge_error *err)
{
	if (cb && cb->failed)
		return lua_error(L);
	return lge_raise(L, err);
}

/* A `true` filter is no filter; a function becomes a callback. */
static int filter_arg(lua_State *L, int idx, int gidx, lsel_cb *cb)
{
	if (lua_isnoneornil(L, idx) ||
	    (lua_type(L, idx) == LUA_TBOOLEAN && lua_toboolean(L, idx)))
		return 0;
	luaL_checktype(L, idx, LUA_TFUNCTION);
	cb->L = L;
	cb->fn = lua_absindex(L, idx);
	cb->gidx = gidx;
	cb->failed = 0;
	return 1;
}

/* ------------------------------------------------------------ ControlOutputs */

/* ge.ControlOutputs(graph): graph_editor's reverse index of control
 * edges.  The graph keeps that index up to date, so this object only
 * reads it: update() has nothing to rebuild. */
static int u_control_outputs(lua_State *L)
{
	lge_checkgraph(L, 1);
	lua_newuserdatauv(L, 1, 1);
	luaL_setmetatable(L, LGE_COUTS);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

static lge_graph *checkcouts(lua_State *L, int idx)
{
	luaL_checkudata(L, idx, LGE_COUTS);
	lua_getiuservalue(L, idx, 1);
	lge_graph *G = lua_touserdata(L, -1);
	if (!G->g)
		luaL_error(L, "graph is closed");
	return G; /* graph userdata left on the stack */
}

static int co_get(lua_State *L)
{
	lge_graph *G = checkcouts(L, 1);
	int gidx = lua_gettop(L);
	ge_opid op = lge_checkopin(L, 2, G);
	size_t n;
	const ge_opid *c = ge_op_control_outputs(G->g, op, &n);
	lsel_pushops(L, gidx, c, n);
	return 1;
}

static int co_get_all(lua_State *L)
{
	lge_graph *G = checkcouts(L, 1);
	int gidx = lua_gettop(L);
	size_t cap = ge_graph_capacity(G->g);
	lua_newtable(L);
	for (size_t id = 0; id < cap; id++) {
		size_t n;
		if (!ge_op_alive(G->g, (ge_opid)id))
			continue;
		const ge_opid *c = ge_op_control_outputs(G->g, (ge_opid)id, &n);
		if (!n)
			continue;
		lge_pushop(L, gidx, (ge_opid)id);
		lsel_pushops(L, gidx, c, n);
		lua_settable(L, -3);
	}
	return 1;
}

static int co_update(lua_State *L)
{
	checkcouts(L, 1);
	lua_settop(L, 1);
	return 1;
}

static int co_index(lua_State *L)
{
	if (lua_type(L, 2) == LUA_TSTRING &&
	    strcmp(lua_tostring(L, 2), "graph") == 0) {
		checkcouts(L, 1);
		return 1;
	}
	lge_pushmethod(L, 1, 2);
	return 1;
}

static int co_tostring(lua_State *L)
{
	lge_graph *G = checkcouts(L, 1);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "ControlOutputs of graph ");
	lge_addquoted(&b, ge_graph_name(G->g));
	luaL_pushresult(&b);
	return 1;
}

/* ------------------------------------------------------------ util */

/* The start of make_list_of_op and make_list_of_t: checks the options,
 * refuses a graph unless allow_graph, and finds (and pushes) the graph of
 * argument 1; NULL, with nothing pushed, when it has none. */
static lge_graph *make_list_graph(lua_State *L, const char *const *known)
{
	lua_settop(L, 2);
	lge_checkopts(L, 2, known);
	if (!lsel_optbool(L, 2, "allow_graph", 1) &&
	    luaL_testudata(L, 1, LGE_GRAPH))
		luaL_argerror(L, 1, "a graph is not allowed here");
	return lsel_findgraph(L, 1);
}

/* make_list_of_op(ops [, {allow_graph=, ignore_ts=}]) */
static int u_make_list_of_op(lua_State *L)
{
	static const char *const known[] = {"allow_graph", "ignore_ts",
					    "check_graph", NULL};
	lge_graph *G = make_list_graph(L, known);
	if (!G)
		return push_empty(L, 1);
	int gidx = lua_gettop(L);
	ge_opvec *v = lsel_opvec(L);
	lsel_ops(L, 1, G, lsel_optbool(L, 2, "ignore_ts", 0), 1, v);
	lsel_pushops(L, gidx, v->v, v->n);
	return 1;
}

/* whole_loops(ops): ops, then every other op of the while loops they are
 * in (outermost loops, nested ones included), in node order. */
static int s_whole_loops(lua_State *L)
{
	lua_settop(L, 1);
	lge_graph *G = lsel_findgraph(L, 1);
	if (!G)
		return push_empty(L, 1);
	int gidx = lua_gettop(L);
	ge_opvec *v = lsel_opvec(L);
	lsel_ops(L, 1, G, 1, 1, v);
	ge_frames_whole_loops(G->g, v);
	lsel_pushops(L, gidx, v->v, v->n);
	return 1;
}

/* make_list_of_t(ts [, {allow_graph=, ignore_ops=}]) */
static int u_make_list_of_t(lua_State *L)
{
	static const char *const known[] = {"allow_graph", "ignore_ops",
					    "check_graph", NULL};
	lge_graph *G = make_list_graph(L, known);
	if (!G)
		return push_empty(L, 1);
	int gidx = lua_gettop(L);
	ge_tvec *v = lsel_tvec(L);
	lsel_ts(L, 1, G, lsel_optbool(L, 2, "ignore_ops", 0), 1, v);
	lsel_pushts(L, gidx, v->v, v->n);
	return 1;
}

static int u_get_tensors(lua_State *L)
{
	lua_settop(L, 1);
	lge_graph *G = lge_checkgraph(L, 1);
	ge_tvec *v = lsel_tvec(L);
	ge_graph_all_ts(G->g, v);
	lsel_pushts(L, 1, v->v, v->n);
	return 1;
}

static int u_get_generating_ops(lua_State *L)
{
	lua_settop(L, 1);
	if (luaL_testudata(L, 1, LGE_GRAPH))
		luaL_argerror(L, 1, "a graph is not allowed here");
	lge_graph *G = lsel_findgraph(L, 1);
	if (!G)
		return push_empty(L, 1);
	int gidx = lua_gettop(L);
	ge_tvec *ts = lsel_tvec(L);
	ge_opvec *v = lsel_opvec(L);
	lsel_ts(L, 1, G, 0, 1, ts);
	ge_get_generating_ops(ts->v, ts->n, v);
	lsel_pushops(L, gidx, v->v, v->n);
	return 1;
}

static int u_get_consuming_ops(lua_State *L)
{
	lua_settop(L, 1);
	lge_graph *G = lsel_findgraph(L, 1);
	if (!G)
		return push_empty(L, 1);
	int gidx = lua_gettop(L);
	ge_tvec *ts = lsel_tvec(L);
	ge_opvec *v = lsel_opvec(L);
	lsel_ts(L, 1, G, 0, 1, ts);
	ge_get_consuming_ops(G->g, ts->v, ts->n, v);
	lsel_pushops(L, gidx, v->v, v->n);
	return 1;
}

static int push_malloced(lua_State *L, char *s)
{
	lua_pushstring(L, s);
	free(s);
	return 1;
}

static int u_scope_finalize(lua_State *L)
{
	return push_malloced(L, ge_scope_finalize(luaL_checkstring(L, 1)));
}

static int u_scope_dirname(lua_State *L)
{
	return push_malloced(L, ge_scope_dirname(luaL_checkstring(L, 1)));
}

static int u_scope_basename(lua_State *L)
{
	return push_malloced(L, ge_scope_basename(luaL_checkstring(L, 1)));
}

/* placeholder_name([t [, {scope=, prefix=}]]) */
static int u_placeholder_name(lua_State *L)
{
	static const char *const known[] = {"scope", "prefix", NULL};
	lua_settop(L, 2);
	int opts = lsel_isopts(L, 1) ? 1 : 2;
	lge_checkopts(L, opts, known);
	const char *scope = optstring(L, opts, "scope");
	const char *prefix = optstring(L, opts, "prefix");
	if (opts == 2 && !lua_isnil(L, 1)) {
		lge_tensor *t = lge_checktensor(L, 1);
		return push_malloced(L, ge_placeholder_name(t->owner->g, &t->t,
							    scope, prefix));
	}
	return push_malloced(L, ge_placeholder_name(NULL, NULL, scope, prefix));
}

/* make_placeholder_from_tensor(t [, {scope=, prefix=, graph=}]) -> the
 * placeholder's tensor, in t's graph unless graph= says otherwise. */
static int u_ph_from_tensor(lua_State *L)
{
	static const char *const known[] = {"scope", "prefix", "graph", NULL};
	lua_settop(L, 2);
	ge_error err;
	lge_tensor *t = lge_checktensor(L, 1);
	lge_checkopts(L, 2, known);
	const char *scope = optstring(L, 2, "scope");
	const char *prefix = optstring(L, 2, "prefix");
	int gi = lsel_optfield(L, 2, "graph");
	if (lua_isnil(L, gi)) {
		lua_pop(L, 1);
		lua_getiuservalue(L, 1, 1);
		gi = lua_gettop(L);
	}
	lge_graph *D = lge_checkgraph(L, gi);
	ge_opid p = ge_make_placeholder_from_tensor(D->g, t->owner->g, t->t,
						    scope, prefix, &err);
	if (p == GE_NOOP)
		return lge_raise(L, &err);
	lge_pushtensor(L, gi, (ge_tref){p, 0});
	return 1;
}

/* make_placeholder_from_dtype_and_shape(graph, dtype [, shape
 * [, {scope=, prefix=}]]) -> the placeholder's tensor (alias ge.ph). */
static int u_ph(lua_State *L)
{
	static const char *const known[] = {"scope", "prefix", NULL};
	lua_settop(L, 4);
	ge_error err;
	lge_graph *G = lge_checkgraph(L, 1);
	int dtype = lge_checkdtype(L, 2);
	int opts = 4, rank = -1;
	int64_t *dims = NULL;
	if (lsel_isopts(L, 3))
		opts = 3;
	else if (!lua_isnoneornil(L, 3)) {
		lua_Integer n = luaL_len(L, 3);
		if (n < 0 || n > 4096)
			luaL_argerror(L, 3, "bad rank");
		rank = (int)n;
		dims = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *dims,
					 0);
		for (lua_Integer i = 1; i <= n; i++) {
			int isnum;
			lua_geti(L, 3, i);
			lua_Integer d = lua_tointegerx(L, -1, &isnum);
			if (!isnum && !lua_isnil(L, -1))
				luaL_argerror(L, 3, "dims must be integers");
			dims[i - 1] = isnum ? d : -1;
			lua_pop(L, 1);
		}
	}
	lge_checkopts(L, opts, known);
	ge_opid p = ge_make_placeholder(G->g, dtype, dims, rank,
					optstring(L, opts, "scope"),
					optstring(L, opts, "prefix"), &err);
	if (p == GE_NOOP)
		return lge_raise(L, &err);
	lge_pushtensor(L, 1, (ge_tref){p, 0});
	return 1;
}

/* concatenate_unique(la, lb): appends to la the items of lb not in it. */
static int u_concatenate_unique(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_newtable(L);
	int seen = lua_gettop(L);
	lua_Integer n = luaL_len(L, 1), m = luaL_len(L, 2);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, 1, i);
		lua_pushboolean(L, 1);
		lua_rawset(L, seen);
	}
	for (lua_Integer i = 1; i <= m; i++) {
		lua_geti(L, 2, i);
		lua_pushvalue(L, -1);
		if (lua_rawget(L, seen) != LUA_TNIL) {
			lua_pop(L, 2);
			continue;
		}
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushboolean(L, 1);
		lua_rawset(L, seen);
		lua_seti(L, 1, ++n);
	}
	lua_settop(L, 1);
	return 1;
}

const luaL_Reg lge_util_funcs[] = {
	{"make_list_of_op", u_make_list_of_op},
	{"make_list_of_t", u_make_list_of_t},
	{"get_tensors", u_get_tensors},
	{"get_generating_ops", u_get_generating_ops},
	{"get_consuming_ops", u_get_consuming_ops},
	{"ControlOutputs", u_control_outputs},
	{"placeholder_name", u_placeholder_name},
	{"make_placeholder_from_tensor", u_ph_from_tensor},
	{"make_placeholder_from_dtype_and_shape", u_ph},
	{"scope_finalize", u_scope_finalize},
	{"scope_dirname", u_scope_dirname},
	{"scope_basename", u_scope_basename},
	{"concatenate_unique", u_concatenate_unique},
	{NULL, NULL},
};

/* ------------------------------------------------------------ select */

/* Whether the value at idx holds something (a name, a non-empty list). */
static int nonempty(lua_State *L, int idx)
{
	if (lua_type(L, idx) == LUA_TSTRING)
		return 1;
	return isplain(L, idx) && luaL_len(L, idx) > 0;
}

/* The graph of the argument at idx, pushed; or NULL with nothing pushed
 * when the argument is empty.  Names alone cannot be looked up. */
static lge_graph *graph_of(lua_State *L, int idx, int *gidx)
{
	lge_graph *G = lsel_findgraph(L, idx);
	if (!G && nonempty(L, idx))
		luaL_argerror(L, idx, "names need an op, a tensor or a graph "
				      "to be looked up in");
	*gidx = lua_gettop(L);
	return G;
}

/* The graph of argument 1, else that of argument 2 (see graph_of),
 * pushed at *gidx; NULL when neither has one. */
static lge_graph *graph_of_either(lua_State *L, int *gidx)
{
	lge_graph *G = lsel_findgraph(L, 1);
	*gidx = lua_gettop(L);
	return G ? G : graph_of(L, 2, gidx);
}

/* filter_ops(ops, filter) */
static int s_filter_ops(lua_State *L)
{
	lua_settop(L, 2);
	int gidx;
	lsel_cb cb;
	ge_error err;
	lge_graph *G = graph_of(L, 1, &gidx);
	if (!G)
		return push_empty(L, 1);
	int has = filter_arg(L, 2, gidx, &cb);
	ge_opvec *ops = lsel_opvec(L), *out = lsel_opvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	if (ge_filter_ops(G->g, ops->v, ops->n, has ? lsel_op_pred : NULL, &cb,
			  out, &err))
		return lsel_rethrow(L, &cb, &err);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

/* filter_ts(ops, filter) */
static int s_filter_ts(lua_State *L)
{
	lua_settop(L, 2);
	int gidx;
	lsel_cb cb;
	ge_error err;
	lge_graph *G = graph_of(L, 1, &gidx);
	if (!G)
		return push_empty(L, 1);
	int has = filter_arg(L, 2, gidx, &cb);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *out = lsel_tvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	if (ge_filter_ts(G->g, ops->v, ops->n, has ? lsel_t_pred : NULL, &cb,
			 out, &err))
		return lsel_rethrow(L, &cb, &err);
	lsel_pushts(L, gidx, out->v, out->n);
	return 1;
}

static int s_filter_ops_from_regex(lua_State *L)
{
	lua_settop(L, 2);
	int gidx;
	ge_error err;
	lge_graph *G = graph_of(L, 1, &gidx);
	const char *re = luaL_checkstring(L, 2);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L), *out = lsel_opvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	if (ge_filter_ops_from_regex(G->g, ops->v, ops->n, re, out, &err))
		return lge_raise(L, &err);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

static int s_filter_ts_from_regex(lua_State *L)
{
	lua_settop(L, 2);
	int gidx;
	ge_error err;
	lge_graph *G = graph_of(L, 1, &gidx);
	const char *re = luaL_checkstring(L, 2);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *out = lsel_tvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	if (ge_filter_ts_from_regex(G->g, ops->v, ops->n, re, out, &err))
		return lge_raise(L, &err);
	lsel_pushts(L, gidx, out->v, out->n);
	return 1;
}

/* get_name_scope_ops(ops, scope): the scope is literal text. */
static int s_get_name_scope_ops(lua_State *L)
{
	lua_settop(L, 2);
	int gidx;
	lge_graph *G = graph_of(L, 1, &gidx);
	const char *scope = luaL_checkstring(L, 2);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L), *out = lsel_opvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	ge_get_name_scope_ops(G->g, ops->v, ops->n, scope, out);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

/* check_cios(control_inputs, control_outputs, control_ios) ->
 * control_inputs, control_outputs */
static int s_check_cios(lua_State *L)
{
	lua_settop(L, 3);
	int ci = lua_toboolean(L, 1);
	int has_co = lua_toboolean(L, 2), has_io = lua_toboolean(L, 3);
	if (has_co && has_io)
		return luaL_error(L, "control_ios and control_outputs cannot "
				     "both be given");
	for (int i = 2; i <= 3; i++)
		if (lua_toboolean(L, i) && !lsel_iscouts(L, i) &&
		    lua_type(L, i) != LUA_TBOOLEAN)
			luaL_typeerror(L, i, "ControlOutputs");
	if (has_io) {
		lua_pushboolean(L, 1);
		lua_pushvalue(L, 3);
	} else {
		lua_pushboolean(L, ci);
		if (has_co)
			lua_pushvalue(L, 2);
		else
			lua_pushnil(L);
	}
	return 2;
}

static const char *const cios_known[] = {"control_inputs", "control_outputs",
					 "control_ios", NULL};

/* get_ops_ios(ops [, {control_inputs=, control_outputs=, control_ios=}]) */
static int s_get_ops_ios(lua_State *L)
{
	lua_settop(L, 2);
	int gidx, ci, co;
	lge_checkopts(L, 2, cios_known);
	cios(L, 2, &ci, &co);
	lge_graph *G = graph_of(L, 1, &gidx);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L), *out = lsel_opvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	ge_get_ops_ios(G->g, ops->v, ops->n, ci, co, out);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

/* compute_boundary_ts(ops) -> outside inputs, outside outputs, inside */
static int s_compute_boundary_ts(lua_State *L)
{
	lua_settop(L, 1);
	int gidx;
	lge_graph *G = graph_of(L, 1, &gidx);
	if (!G)
		return push_empty(L, 3);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *in = lsel_tvec(L), *out = lsel_tvec(L), *ins = lsel_tvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	ge_compute_boundary_ts(G->g, ops->v, ops->n, in, out, ins);
	lsel_pushts(L, gidx, in->v, in->n);
	lsel_pushts(L, gidx, out->v, out->n);
	lsel_pushts(L, gidx, ins->v, ins->n);
	return 3;
}

/* get_within_boundary_ops(ops, seed_ops [, {boundary_ops=, inclusive=,
 * control_inputs=, control_outputs=, control_ios=}]) */
static int s_get_within_boundary_ops(lua_State *L)
{
	static const char *const known[] = {"boundary_ops", "inclusive",
					    "control_inputs", "control_outputs",
					    "control_ios", NULL};
	lua_settop(L, 3);
	int gidx, ci, co;
	ge_error err;
	lge_checkopts(L, 3, known);
	cios(L, 3, &ci, &co);
	lge_graph *G = graph_of_either(L, &gidx);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L), *seeds = lsel_opvec(L);
	ge_opvec *bnd = lsel_opvec(L), *out = lsel_opvec(L);
	lsel_ops(L, 1, G, 0, 1, ops);
	lsel_ops(L, 2, G, 0, 2, seeds);
	int f = lsel_optfield(L, 3, "boundary_ops");
	lsel_ops(L, f, G, 0, 3, bnd);
	if (ge_get_within_boundary_ops(G->g, ops->v, ops->n, seeds->v,
				       seeds->n, bnd->v, bnd->n,
				       lsel_optbool(L, 3, "inclusive", 1), ci,
				       co, out, &err))
		return lge_raise(L, &err);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

static const ge_opid no_ops[1];

/* Reads the walk options of the table at opts into o.  cb must outlive
 * the walk; the lists live in userdata pushed on the stack. */
static void walk_opts(lua_State *L, int opts, lge_graph *G, int gidx,
		      int forward, const char *inclusive_key, ge_walk_opts *o,
		      lsel_cb *cb)
{
	static const ge_walk_opts init = GE_WALK_OPTS_INIT;
	*o = init;
	o->inclusive = lsel_optbool(L, opts, inclusive_key, 1);
	int f = lsel_optfield(L, opts, "within_ops");
	if (!lua_isnil(L, f)) {
		ge_opvec *w = lsel_opvec(L);
		lsel_ops(L, f, G, 0, opts, w);
		o->within_ops = w->v ? w->v : no_ops;
		o->n_within = w->n;
	}
	f = lsel_optfield(L, opts, "within_ops_fn");
	if (!lua_isnil(L, f)) {
		luaL_checktype(L, f, LUA_TFUNCTION);
		cb->L = L;
		cb->fn = f;
		cb->gidx = gidx;
		cb->failed = 0;
		o->within_fn = lsel_op_pred;
		o->within_ud = cb;
	}
	f = lsel_optfield(L, opts, "stop_at_ts");
	if (!lua_isnil(L, f)) {
		ge_tvec *s = lsel_tvec(L);
		lsel_ts(L, f, G, 0, opts, s);
		o->stop_at_ts = s->v;
		o->n_stop = s->n;
	}
	o->control = lsel_optbool(L, opts, forward ? "control_outputs" :
					    "control_inputs", 0);
}

static int walk(lua_State *L, int forward)
{
	static const char *const fknown[] = {"inclusive", "within_ops",
		"within_ops_fn", "stop_at_ts", "control_outputs", NULL};
	static const char *const bknown[] = {"inclusive", "within_ops",
		"within_ops_fn", "stop_at_ts", "control_inputs", NULL};
	int gidx;
	lsel_cb cb = {0};
	ge_error err;
	ge_walk_opts o;
	ge_seeds s;
	lua_settop(L, 2);
	lge_checkopts(L, 2, forward ? fknown : bknown);
	lge_graph *G = graph_of(L, 1, &gidx);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *ops = lsel_opvec(L), *out = lsel_opvec(L);
	ge_tvec *ts = lsel_tvec(L);
	lsel_seeds(L, 1, G, 1, ops, ts, &s);
	walk_opts(L, 2, G, gidx, forward, "inclusive", &o, &cb);
	int rc = forward ? ge_get_forward_walk_ops(G->g, &s, &o, out, &err) :
			   ge_get_backward_walk_ops(G->g, &s, &o, out, &err);
	if (rc)
		return lsel_rethrow(L, &cb, &err);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

static int s_get_forward_walk_ops(lua_State *L)
{
	return walk(L, 1);
}

static int s_get_backward_walk_ops(lua_State *L)
{
	return walk(L, 0);
}

static int walks(lua_State *L, int intersect)
{
	static const char *const known[] = {"forward_inclusive",
		"backward_inclusive", "within_ops", "within_ops_fn",
		"control_inputs", "control_outputs", "control_ios", NULL};
	int gidx, ci, co;
	lsel_cb cb = {0};
	ge_error err;
	ge_walk_opts fo, bo;
	ge_seeds fs, bs;
	lua_settop(L, 3);
	lge_checkopts(L, 3, known);
	cios(L, 3, &ci, &co);
	lge_graph *G = graph_of_either(L, &gidx);
	if (!G)
		return push_empty(L, 1);
	ge_opvec *fops = lsel_opvec(L), *bops = lsel_opvec(L);
	ge_opvec *out = lsel_opvec(L);
	ge_tvec *fts = lsel_tvec(L), *bts = lsel_tvec(L);
	lsel_seeds(L, 1, G, 1, fops, fts, &fs);
	lsel_seeds(L, 2, G, 2, bops, bts, &bs);
	walk_opts(L, 3, G, gidx, 1, "forward_inclusive", &fo, &cb);
	walk_opts(L, 3, G, gidx, 0, "backward_inclusive", &bo, &cb);
	fo.control = co;
	bo.control = ci;
	int rc = intersect ?
		ge_get_walks_intersection_ops(G->g, &fs, &bs, &fo, &bo, out,
					      &err) :
		ge_get_walks_union_ops(G->g, &fs, &bs, &fo, &bo, out, &err);
	if (rc)
		return lsel_rethrow(L, &cb, &err);
	lsel_pushops(L, gidx, out->v, out->n);
	return 1;
}

static int s_get_walks_intersection_ops(lua_State *L)
{
	return walks(L, 1);
}

static int s_get_walks_union_ops(lua_State *L)
{
	return walks(L, 0);
}

/* select_ops / select_ts / select_ops_and_ts(args... [, {graph=,
 * positive_filter=, restrict_ops_regex=, restrict_ts_regex=}]).  Each
 * argument is a regex (a string) or ops and tensors (an op, a tensor, a
 * list, a graph, a view: its ops and passthroughs). */
static int select_any(lua_State *L, int want_ops, int want_ts)
{
	static const char *const known[] = {"graph", "positive_filter",
		"restrict_ops_regex", "restrict_ts_regex", NULL};
	int top = lua_gettop(L), nargs = top, opts = 0;
	lsel_cb cb = {0};
	ge_error err;
	if (top > 0 && lsel_isopts(L, top)) {
		opts = top;
		nargs = top - 1;
		lge_checkopts(L, opts, known);
	}
	/* the graph: graph= or the first argument that has one */
	lge_graph *G = NULL;
	int gidx = 0;
	int f = lsel_optfield(L, opts, "graph");
	if (!lua_isnil(L, f)) {
		G = lge_checkgraph(L, f);
		gidx = f;
	}
	for (int i = 1; i <= nargs; i++) {
		if (lua_type(L, i) == LUA_TSTRING)
			continue;
		lge_graph *H = lsel_findgraph(L, i);
		if (!H)
			continue;
		if (G && H != G)
			luaL_argerror(L, i, "Graph mismatch.");
		if (!G) {
			G = H;
			gidx = lua_gettop(L);
		}
	}
	ge_sel_arg *args = lua_newuserdatauv(L, (nargs ? nargs : 1) *
						    sizeof *args, 0);
	for (int i = 1; i <= nargs; i++) {
		memset(&args[i - 1], 0, sizeof args[i - 1]);
		if (lua_type(L, i) == LUA_TSTRING) {
			if (!G)
				luaL_argerror(L, i, "Use the option 'graph' to "
						    "use a regex");
			args[i - 1].kind = GE_SEL_REGEX;
			args[i - 1].regex = lua_tostring(L, i);
			continue;
		}
		ge_opvec *ops = lsel_opvec(L);
		ge_tvec *ts = lsel_tvec(L);
		lge_view *w = lsel_testview(L, i);
		if (w) {
			lsel_ops(L, i, G, 1, i, ops);
			for (size_t k = 0; k < w->v.passthroughs.n; k++)
				ge_tvec_push(ts, w->v.passthroughs.v[k]);
		} else if (G) {
			lsel_ops(L, i, G, 1, i, ops);
			lsel_ts(L, i, G, 1, i, ts);
		}
		args[i - 1].kind = GE_SEL_LIST;
		args[i - 1].ops = ops->v;
		args[i - 1].n_ops = ops->n;
		args[i - 1].ts = ts->v;
		args[i - 1].n_ts = ts->n;
	}
	ge_select_opts so = {0};
	f = lsel_optfield(L, opts, "positive_filter");
	int has = filter_arg(L, f, gidx, &cb);
	if (has) {
		so.op_filter = lsel_op_pred;
		so.op_filter_ud = &cb;
		so.t_filter = lsel_t_pred;
		so.t_filter_ud = &cb;
	}
	so.restrict_ops_regex = lsel_optbool(L, opts, "restrict_ops_regex", 0);
	so.restrict_ts_regex = lsel_optbool(L, opts, "restrict_ts_regex", 0);
	if (!G)
		return push_empty(L, want_ops + want_ts);
	ge_opvec *ops = lsel_opvec(L);
	ge_tvec *ts = lsel_tvec(L);
	int rc;
	if (want_ops && want_ts)
		rc = ge_select_ops_and_ts(G->g, args, (size_t)nargs, &so, ops,
					  ts, &err);
	else if (want_ops)
		rc = ge_select_ops(G->g, args, (size_t)nargs, &so, ops, &err);
	else
		rc = ge_select_ts(G->g, args, (size_t)nargs, &so, ts, &err);
	if (rc)
		return lsel_rethrow(L, &cb, &err);
	if (want_ops)
		lsel_pushops(L, gidx, ops->v, ops->n);
	if (want_ts)
		lsel_pushts(L, gidx, ts->v, ts->n);
	return want_ops + want_ts;
}

static int s_select_ops(lua_State *L)
{
	return select_any(L, 1, 0);
}

static int s_select_ts(lua_State *L)
{
	return select_any(L, 0, 1);
}

int lsel_select_ops_and_ts(lua_State *L)
{
	return select_any(L, 1, 1);
}

static int s_can_be_regex(lua_State *L)
{
	lua_pushboolean(L, lua_type(L, 1) == LUA_TSTRING);
	return 1;
}

/* make_regex(s) -> s, after checking that it compiles. */
static int s_make_regex(lua_State *L)
{
	ge_error err;
	const char *s = luaL_checkstring(L, 1);
	if (!ge_regex_cached(s, &err))
		return lge_raise(L, &err);
	lua_settop(L, 1);
	return 1;
}

const luaL_Reg lge_select_funcs[] = {
	{"can_be_regex", s_can_be_regex},
	{"make_regex", s_make_regex},
	{"filter_ops", s_filter_ops},
	{"filter_ts", s_filter_ts},
	{"filter_ops_from_regex", s_filter_ops_from_regex},
	{"filter_ts_from_regex", s_filter_ts_from_regex},
	{"get_name_scope_ops", s_get_name_scope_ops},
	{"check_cios", s_check_cios},
	{"get_ops_ios", s_get_ops_ios},
	{"compute_boundary_ts", s_compute_boundary_ts},
	{"get_within_boundary_ops", s_get_within_boundary_ops},
	{"get_forward_walk_ops", s_get_forward_walk_ops},
	{"get_backward_walk_ops", s_get_backward_walk_ops},
	{"get_walks_intersection_ops", s_get_walks_intersection_ops},
	{"get_walks_union_ops", s_get_walks_union_ops},
	{"select_ops", s_select_ops},
	{"select_ts", s_select_ts},
	{"select_ops_and_ts", lsel_select_ops_and_ts},
	{"whole_loops", s_whole_loops},
	{NULL, NULL},
};

/* ------------------------------------------------------------ registration */

static void add_group(lua_State *L, int mod, const char *name,
		      const luaL_Reg *funcs)
{
	lua_newtable(L);
	luaL_setfuncs(L, funcs, 0);
	lua_setfield(L, mod, name);
	lua_pushvalue(L, mod);
	luaL_setfuncs(L, funcs, 0);
	lua_pop(L, 1);
}

static void alias(lua_State *L, int mod, const char *to, const char *from)
{
	lua_getfield(L, mod, from);
	lua_setfield(L, mod, to);
}

void lge_open_editor(lua_State *L)
{
	static const luaL_Reg co_meta[] = {
		{"__index", co_index},
		{"__tostring", co_tostring},
		{NULL, NULL},
	};
	static const luaL_Reg co_methods[] = {
		{"get", co_get},
		{"get_all", co_get_all},
		{"update", co_update},
		{NULL, NULL},
	};
	int mod = lua_gettop(L);
	lge_newtype(L, LGE_COUTS, co_meta, co_methods);
	lua_pop(L, 1);
	lge_open_view(L);
	lge_open_reroute_methods(L);
	add_group(L, mod, "util", lge_util_funcs);
	add_group(L, mod, "select", lge_select_funcs);
	add_group(L, mod, "subgraph", lge_subgraph_funcs);
	add_group(L, mod, "reroute", lge_reroute_funcs);
	add_group(L, mod, "edit", lge_edit_funcs);
	alias(L, mod, "ph", "make_placeholder_from_dtype_and_shape");
	alias(L, mod, "sgv", "make_view");
	alias(L, mod, "sgv_scope", "make_view_from_scope");
}
