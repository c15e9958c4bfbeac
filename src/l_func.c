/*
 * l_func.c: the function library from Lua (gerewrite.function) and the
 * graph methods that reach it: g:functions(), g:func(name),
 * g:add_func{...}, g:remove_func(name).
 *
 * A function wrapper holds its id in the library of its root graph (the
 * top-level graph), whose userdata it keeps alive.  Bodies are graph
 * userdata marked borrowed: the root owns the ge_graph; each keeps the
 * root's userdata alive (user value 3 = {root = ...}), and the root lists
 * them (user value 3 = {bodies = {...}, funcs = weak cache}) so that
 * closing it closes them.  A body graph may be given to every ge.*
 * function; g:functions() on a body lists its root's functions.
 */
#include "config.h"
#include "base/bounds.h"

#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "lge.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

#define LGE_FUNCTION "gerewrite.function"

typedef struct lge_func {
	lge_graph *owner; /* the root's userdata block */
	ge_funcid id;
} lge_func;

/* [-0, +1, m] The aux table (user value 3) of the graph at gidx. */
static void push_aux(lua_State *L, int gidx)
{
	gidx = lua_absindex(L, gidx);
	if (lua_getiuservalue(L, gidx, 3) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, gidx, 3);
	}
}

void lge_pushroot(lua_State *L, int gidx)
{
	gidx = lua_absindex(L, gidx);
	push_aux(L, gidx);
	if (lua_getfield(L, -1, "root") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_pushvalue(L, gidx);
	}
	lua_remove(L, -2);
}

/* [-0, +1, m] The table aux[field] of the graph at gidx (made if absent;
 * weak-valued when weak). */
static void push_auxtable(lua_State *L, int gidx, const char *field, int weak)
{
	push_aux(L, gidx);
	if (lua_getfield(L, -1, field) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		if (weak) {
			lua_newtable(L);
			lua_pushliteral(L, "v");
			lua_setfield(L, -2, "__mode");
			lua_setmetatable(L, -2);
		}
		lua_pushvalue(L, -1);
		lua_setfield(L, -3, field);
	}
	lua_remove(L, -2);
}

void lge_pushbody(lua_State *L, int gidx, uint32_t f)
{
	lge_pushroot(L, gidx);
	int root = lua_gettop(L);
	lge_graph *R = lge_checkgraph(L, root);
	push_auxtable(L, root, "bodies", 0);
	ge_error err;
	if (lua_rawgeti(L, -1, (lua_Integer)f) == LUA_TUSERDATA) {
		/* closed by a script (detached): the body is still there */
		lge_graph *B = lua_touserdata(L, -1);
		if (!B->g)
			B->g = ge_func_body(R->g, f, &err);
		lua_replace(L, root);
		lua_settop(L, root);
		return;
	}
	lua_pop(L, 1);
	ge_graph *b = ge_func_body(R->g, f, &err);
	if (!b)
		lge_raise(L, &err);
	lge_pushgraph(L, b);
	lge_graph *B = lua_touserdata(L, -1);
	B->borrowed = 1;
	lua_newtable(L);
	lua_pushvalue(L, root);
	lua_setfield(L, -2, "root");
	lua_setiuservalue(L, -2, 3);
	lua_pushvalue(L, -1);
	lua_rawseti(L, -3, (lua_Integer)f);
	lua_replace(L, root);
	lua_settop(L, root);
}

void lge_forgetbodies(lua_State *L, int gidx)
{
	gidx = lua_absindex(L, gidx);
	if (lua_getiuservalue(L, gidx, 3) != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	if (lua_getfield(L, -1, "bodies") == LUA_TTABLE) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lge_graph *B = luaL_testudata(L, -1, LGE_GRAPH);
			if (B)
				B->g = NULL;
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	lua_pushnil(L);
	lua_setfield(L, -2, "bodies");
	/* function objects are kept by id, which may now name another */
	lua_pushnil(L);
	lua_setfield(L, -2, "funcs");
	lua_pop(L, 1);
}

/* [-0, +1, m] The wrapper of function f of the root of the graph at gidx. */
static void pushfunc(lua_State *L, int gidx, ge_funcid f)
{
	lge_pushroot(L, gidx);
	int root = lua_gettop(L);
	push_auxtable(L, root, "funcs", 1);
	if (lua_rawgeti(L, -1, (lua_Integer)f) == LUA_TUSERDATA) {
		lua_replace(L, root);
		lua_settop(L, root);
		return;
	}
	lua_pop(L, 1);
	lge_func *F = lua_newuserdatauv(L, sizeof *F, 1);
	F->owner = lua_touserdata(L, root);
	F->id = f;
	luaL_setmetatable(L, LGE_FUNCTION);
	lua_pushvalue(L, root);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, -1);
	lua_rawseti(L, -3, (lua_Integer)f);
	lua_replace(L, root);
	lua_settop(L, root);
}

static lge_func *checkfunc(lua_State *L, int arg)
{
	lge_func *F = luaL_checkudata(L, arg, LGE_FUNCTION);
	if (!F->owner->g)
		luaL_error(L, "graph is closed");
	if (!ge_func_alive(F->owner->g, F->id))
		luaL_error(L, "function '%s' was removed from the library",
			   ge_func_name(F->owner->g, F->id));
	return F;
}

/* A function of the graph at gidx given as a wrapper or a name. */
static ge_funcid checkfuncin(lua_State *L, int arg, int gidx)
{
	ge_graph *g = lge_checkgraph(L, gidx)->g;
	lge_func *F = luaL_testudata(L, arg, LGE_FUNCTION);
	if (F) {
		checkfunc(L, arg);
		if (ge_graph_root(F->owner->g) != ge_graph_root(g))
			luaL_argerror(L, arg, "function of another graph");
		return F->id;
	}
	const char *name = luaL_checkstring(L, arg);
	ge_funcid f = ge_func_find(g, name);
	if (f == GE_NOFUNC)
		luaL_error(L, "no function named '%s' in the library", name);
	return f;
}

static void libcheck(lua_State *L, ge_graph *g)
{
	ge_error err;
	if (ge_flib_load(g, &err))
		lge_raise(L, &err);
}

/* ------------------------------------------------------------ graph methods */

/* g:functions() -> list of functions, in library order */
static int g_functions(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	libcheck(L, g);
	size_t cap = ge_func_capacity(g);
	lua_createtable(L, (int)ge_func_count(g), 0);
	lua_Integer k = 0;
	for (size_t f = 0; f < cap; f++) {
		if (!ge_func_alive(g, (ge_funcid)f))
			continue;
		pushfunc(L, 1, (ge_funcid)f);
		lua_rawseti(L, -2, ++k);
	}
	return 1;
}

/* g:func(name) -> function | nil, message */
static int g_func(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *name = luaL_checkstring(L, 2);
	libcheck(L, g);
	ge_funcid f = ge_func_find(g, name);
	if (f == GE_NOFUNC) {
		lua_pushnil(L);
		lua_pushfstring(L, "no function named '%s' in the library", name);
		return 2;
	}
	pushfunc(L, 1, f);
	return 1;
}

/* g:add_func{name=, inputs={{name=, dtype=}, ...}} -> function: a new
 * function whose body has one _Arg op per input (outputs are added as
 * _Retval ops of the body). */
static int g_add_func(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	luaL_checktype(L, 2, LUA_TTABLE);
	const char *name = lge_optfield(L, 2, "name");
	if (!name)
		return luaL_argerror(L, 2, "field 'name' is required");
	int t = lua_getfield(L, 2, "inputs");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'inputs' must be a list");
	int inputs = lua_gettop(L);
	size_t n = t == LUA_TTABLE ? lua_rawlen(L, inputs) : 0;
	/* check every input before changing anything */
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, inputs, (lua_Integer)i);
		if (!lua_istable(L, -1) || !lge_optfield(L, -1, "name"))
			return luaL_argerror(
				L, 2,
				lua_pushfstring(L, "inputs[%d] needs a name",
						(int)i));
		lua_getfield(L, -1, "dtype");
		lge_checkdtype(L, lua_gettop(L));
		lua_pop(L, 2);
	}
	ge_error err;
	libcheck(L, g);
	ge_funcid f = ge_func_add(g, name, &err);
	if (f == GE_NOFUNC)
		return lge_raise(L, &err);
	ge_graph *b = ge_func_body(g, f, &err);
	if (!b)
		return lge_raise(L, &err);
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, inputs, (lua_Integer)i);
		const char *an = lge_optfield(L, -1, "name");
		lua_getfield(L, -1, "dtype");
		int dt = lge_checkdtype(L, lua_gettop(L));
		ge_opid id = ge_graph_add_op(b, an, "_Arg", &err);
		if (id == GE_NOOP)
			return lge_raise(L, &err);
		Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
		v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
		v.type = (Tensorflow__DataType)dt;
		ge_op_set_attr(b, id, "T", &v);
		v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
		v.i = (int64_t)i - 1;
		ge_op_set_attr(b, id, "index", &v);
		lua_pop(L, 2);
	}
	pushfunc(L, 1, f);
	return 1;
}

/* g:remove_func(function | name [, {force=true}]) */
static int g_remove_func(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	libcheck(L, g);
	ge_funcid f = checkfuncin(L, 2, 1);
	int force = 0;
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_getfield(L, 3, "force");
		force = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	ge_error err;
	if (ge_func_remove(g, f, force, &err))
		return lge_raise(L, &err);
	return 0;
}

/* ------------------------------------------------------------ function */

static void push_args(lua_State *L, lge_func *F, int out)
{
	ge_graph *g = F->owner->g;
	size_t n = out ? ge_func_num_outputs(g, F->id)
		       : ge_func_num_inputs(g, F->id);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		ge_func_arg a = out ? ge_func_output(g, F->id, i)
				    : ge_func_input(g, F->id, i);
		lua_createtable(L, 0, 3);
		lua_pushstring(L, a.name);
		lua_setfield(L, -2, "name");
		if (a.dtype) {
			lge_pushdtype(L, a.dtype);
			lua_setfield(L, -2, "dtype");
		}
		if (a.count != 1) {
			lua_pushinteger(L, a.count);
			lua_setfield(L, -2, "count");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void push_attrs(lua_State *L, lge_func *F)
{
	ge_graph *g = F->owner->g;
	size_t n = ge_func_num_attrs(g, F->id);
	lua_createtable(L, 0, (int)n);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *v;
		size_t len;
		const char *k = ge_func_attr(g, F->id, i, &v, &len);
		Tensorflow__AttrValue *av =
			(Tensorflow__AttrValue *)ge_pb_unpack(
		&tensorflow__attr_value__descriptor, len, v);
		if (!av)
			continue;
		lge_pushattr(L, av);
		lua_pop(L, 1);
		protobuf_c_message_free_unpacked(&av->base, NULL);
		lua_setfield(L, -2, k);
	}
}

/* fn:graph() -> the body, a graph */
static int f_graph(lua_State *L)
{
	lge_func *F = checkfunc(L, 1);
	lua_getiuservalue(L, 1, 1);
	lge_pushbody(L, -1, F->id);
	return 1;
}

/* fn:callers() -> list of ops (of the graph or of bodies) calling it */
static int f_callers(lua_State *L)
{
	lge_func *F = checkfunc(L, 1);
	ge_graph *g = F->owner->g;
	lua_getiuservalue(L, 1, 1);
	int root = lua_gettop(L);
	ge_func_ref *refs;
	size_t n = ge_func_callers(g, F->id, &refs);
	lua_createtable(L, (int)n, 0);
	int list = lua_gettop(L);
	lua_Integer k = 0;
	for (size_t i = 0; i < n; i++) {
		ge_funcid in = ge_graph_func(refs[i].in);
		if (in == GE_NOFUNC)
			lua_pushvalue(L, root);
		else
			lge_pushbody(L, root, in);
		lge_pushop(L, -1, refs[i].op);
		lua_rawseti(L, list, ++k);
		lua_pop(L, 1);
	}
	free(refs);
	return 1;
}

/* fn:copy(new_name) -> function */
static int f_copy(lua_State *L)
{
	lge_func *F = checkfunc(L, 1);
	const char *name = luaL_checkstring(L, 2);
	ge_error err;
	ge_funcid c = ge_func_copy(F->owner->g, F->id, name, &err);
	if (c == GE_NOFUNC)
		return lge_raise(L, &err);
	lua_getiuservalue(L, 1, 1);
	pushfunc(L, -1, c);
	return 1;
}

/* fn:rename(new_name): the calls, gradients and object graph follow */
static int f_rename(lua_State *L)
{
	lge_func *F = checkfunc(L, 1);
	ge_error err;
	if (ge_func_rename(F->owner->g, F->id, luaL_checkstring(L, 2), &err))
		return lge_raise(L, &err);
	return 0;
}

static int f_index(lua_State *L)
{
	const char *key = lua_tostring(L, 2);
	if (key) {
		if (!strcmp(key, "name")) {
			lge_func *F = checkfunc(L, 1);
			lua_pushstring(L, ge_func_name(F->owner->g, F->id));
			return 1;
		}
		if (!strcmp(key, "inputs") || !strcmp(key, "outputs")) {
			push_args(L, checkfunc(L, 1), key[0] == 'o');
			return 1;
		}
		if (!strcmp(key, "attrs")) {
			push_attrs(L, checkfunc(L, 1));
			return 1;
		}
		if (!strcmp(key, "parent")) {
			checkfunc(L, 1);
			lua_getiuservalue(L, 1, 1);
			return 1;
		}
	}
	lge_pushmethod(L, 1, 2);
	return 1;
}

static int f_tostring(lua_State *L)
{
	lge_func *F = luaL_checkudata(L, 1, LGE_FUNCTION);
	ge_graph *g = F->owner->g;
	if (!g) {
		lua_pushliteral(L, "function (closed graph)");
		return 1;
	}
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "function ");
	lge_addquoted(&b, ge_func_name(g, F->id));
	if (!ge_func_alive(g, F->id)) {
		luaL_addstring(&b, " (removed)");
	} else {
		size_t ni = ge_func_num_inputs(g, F->id);
		size_t no = ge_func_num_outputs(g, F->id);
		lua_pushfstring(L, " (%d input%s, %d output%s)", (int)ni,
				ni == 1 ? "" : "s", (int)no, no == 1 ? "" : "s");
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	return 1;
}

static int f_eq(lua_State *L)
{
	lge_func *a = luaL_testudata(L, 1, LGE_FUNCTION);
	lge_func *b = luaL_testudata(L, 2, LGE_FUNCTION);
	lua_pushboolean(L, a && b && a->owner == b->owner && a->id == b->id);
	return 1;
}

static const luaL_Reg func_meta[] = {
	{"__index", f_index},
	{"__tostring", f_tostring},
	{"__eq", f_eq},
	{NULL, NULL},
};

static const luaL_Reg func_methods[] = {
	{"graph", f_graph},
	{"callers", f_callers},
	{"copy", f_copy},
	{"rename", f_rename},
	{NULL, NULL},
};

static const luaL_Reg graph_methods[] = {
	{"functions", g_functions},
	{"func", g_func},
	{"add_func", g_add_func},
	{"remove_func", g_remove_func},
	{NULL, NULL},
};

void lge_open_func(lua_State *L)
{
	lge_newtype(L, LGE_FUNCTION, func_meta, func_methods);
	lua_pop(L, 1);
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pop(L, 1);
}
