/*
 * l_variables.c: g:variables() (lib/variables/variables.h).
 *
 * A variable is a plain table, a snapshot of what the graph says when it
 * is made: name, kind ("ref" | "resource"), op, initializer (op or nil),
 * snapshot (the read tensor, or nil), initial_value (tensor or nil),
 * trainable (true, false, or nil when the graph has no variable
 * collections), dtype, shape (nil for an unknown rank), collections (list
 * of names), key (the checkpoint key).  Its metatable gerewrite.variable
 * only gives it a tostring: `variable "a" float32[2,3] ref`.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lge.h"
#include "variables/variables.h"
#include "variables/varpolicy.h"

#define LGE_VARIABLE "gerewrite.variable"

static void setstr(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

void lge_pushvariable(lua_State *L, int gidx, const ge_graph *g,
		      const ge_variable *v)
{
	gidx = lua_absindex(L, gidx);
	lua_createtable(L, 0, 12);
	setstr(L, "name", v->name);
	setstr(L, "kind", v->kind == GE_VAR_RESOURCE ? "resource" : "ref");
	lge_pushop(L, gidx, v->op);
	lua_setfield(L, -2, "op");
	if (v->initializer != GE_NOOP) {
		lge_pushop(L, gidx, v->initializer);
		lua_setfield(L, -2, "initializer");
	}
	if (v->snapshot.op != GE_NOOP &&
	    ge_op_has_output(g, v->snapshot.op, v->snapshot.index)) {
		lge_pushtensor(L, gidx, v->snapshot);
		lua_setfield(L, -2, "snapshot");
	}
	if (v->initial_value.op != GE_NOOP &&
	    ge_op_has_output(g, v->initial_value.op, v->initial_value.index)) {
		lge_pushtensor(L, gidx, v->initial_value);
		lua_setfield(L, -2, "initial_value");
	}
	if (v->trainable >= 0) {
		lua_pushboolean(L, v->trainable);
		lua_setfield(L, -2, "trainable");
	}
	if (v->dtype) {
		lge_pushdtype(L, v->dtype);
		lua_setfield(L, -2, "dtype");
	}
	lge_pushdims(L, v->rank, v->dims);
	lua_setfield(L, -2, "shape");
	lua_createtable(L, (int)v->n_collections, 0);
	for (size_t i = 0; i < v->n_collections; i++) {
		lua_pushstring(L, v->collections[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "collections");
	setstr(L, "key", v->key);
	if (v->slice_name)
		setstr(L, "slice_name", v->slice_name);
	luaL_setmetatable(L, LGE_VARIABLE);
}

/* The list lives in a userdata so that a memory error while pushing
 * cannot leak it. */
static int varlist_gc(lua_State *L)
{
	ge_varlist_free(lua_touserdata(L, 1));
	return 0;
}

/* [-0, +1, v] Builds the variable list of g in a new holder userdata. */
static ge_varlist *newvarlist(lua_State *L, ge_graph *g)
{
	ge_varlist *vl = lua_newuserdatauv(L, sizeof *vl, 0);
	memset(vl, 0, sizeof *vl);
	if (luaL_newmetatable(L, "gerewrite.varlist")) {
		lua_pushcfunction(L, varlist_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	ge_error err;
	if (ge_graph_variables(g, vl, &err) != GE_OK)
		lge_raise(L, &err);
	return vl;
}

/* g:variables() -> list of variables, in node order of their ops */
static int g_variables(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_varlist *vl = newvarlist(L, g);
	lua_createtable(L, (int)vl->n, 0);
	for (size_t i = 0; i < vl->n; i++) {
		lge_pushvariable(L, 1, g, &vl->v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* g:variable(name) -> the variable whose op has that name, or nil */
static int g_variable(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *name = luaL_checkstring(L, 2);
	ge_varlist *vl = newvarlist(L, g);
	const ge_variable *v = ge_varlist_find(vl, g, name);
	if (!v)
		return 0;
	lge_pushvariable(L, 1, g, v);
	return 1;
}

/* The table keeps its strings alive, so their pointers stay valid after
 * the pop (and no stack slot is held while the buffer is in use). */
static const char *strfield(lua_State *L, const char *k)
{
	lua_getfield(L, 1, k);
	const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
						       : "?";
	lua_pop(L, 1);
	return s;
}

static int var_tostring(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	const char *name = strfield(L, "name");
	const char *dtype = strfield(L, "dtype");
	const char *kind = strfield(L, "kind");
	/* the shape as text first, on the stack below the buffer */
	lua_settop(L, 1);
	lua_getfield(L, 1, "shape");
	luaL_Buffer b;
	if (lua_istable(L, -1)) {
		lua_Integer n = luaL_len(L, -1);
		luaL_buffinit(L, &b);
		luaL_addchar(&b, '[');
		for (lua_Integer i = 1; i <= n; i++) {
			char tmp[32];
			lua_geti(L, 2, i);
			lua_Integer d = lua_tointeger(L, -1);
			lua_pop(L, 1);
			if (d < 0)
				snprintf(tmp, sizeof tmp, "%s?", i > 1 ? "," : "");
			else
				snprintf(tmp, sizeof tmp, "%s%lld",
					 i > 1 ? "," : "", (long long)d);
			luaL_addstring(&b, tmp);
		}
		luaL_addchar(&b, ']');
		luaL_pushresult(&b);
	} else {
		lua_pushliteral(L, "[*]");
	}
	const char *shape = lua_tostring(L, -1);
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "variable ");
	lge_addquoted(&b, name);
	luaL_addchar(&b, ' ');
	luaL_addstring(&b, dtype);
	luaL_addstring(&b, shape);
	luaL_addchar(&b, ' ');
	luaL_addstring(&b, kind);
	luaL_pushresult(&b);
	return 1;
}

/* ------------------------------------------------------------ policies */

/* The policy function's verdict for one variable.  The function runs
 * protected: its error (or a bad answer) is kept at o->errslot and the
 * transform unwinds with -1; lge_varopts_check re-raises it. */
static int decide(ge_graph *g, const ge_variable *v, void *ud)
{
	lge_varopts *o = ud;
	lua_State *L = o->L;
	if (o->failed)
		return -1;
	lua_pushvalue(L, o->fn);
	lge_pushvariable(L, o->gidx, g, v);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		lua_replace(L, o->errslot);
		o->failed = 1;
		return -1;
	}
	const char *s = lua_tostring(L, -1);
	int r = -1;
	if (s && !strcmp(s, "share"))
		r = GE_VARS_SHARE;
	else if (s && !strcmp(s, "duplicate"))
		r = GE_VARS_DUPLICATE;
	if (r < 0) {
		lua_pushfstring(L,
				"the variables function must return \"share\" "
				"or \"duplicate\" (got %s for '%s')",
				s ? s : luaL_typename(L, -1), v->name);
		lua_replace(L, o->errslot);
		o->failed = 1;
	}
	lua_pop(L, 1);
	return r;
}

void lge_checkvaropts(lua_State *L, int opts, int gidx, lge_varopts *o)
{
	memset(o, 0, sizeof *o);
	o->L = L;
	o->gidx = lua_absindex(L, gidx);
	o->vo.policy = GE_VARS_AUTO;
	/* a slot for the function's error, below anything pushed later */
	lua_pushnil(L);
	o->errslot = lua_gettop(L);
	if (lua_isnoneornil(L, opts))
		return;
	int t = lua_getfield(L, opts, "variables");
	if (t == LUA_TSTRING) {
		const char *s = lua_tostring(L, -1);
		if (!strcmp(s, "share"))
			o->vo.policy = GE_VARS_SHARE;
		else if (!strcmp(s, "duplicate"))
			o->vo.policy = GE_VARS_DUPLICATE;
		else
			luaL_error(L, "option 'variables' must be \"share\", "
				      "\"duplicate\" or a function (got \"%s\")",
				   s);
		lua_pop(L, 1);
	} else if (t == LUA_TFUNCTION) {
		o->fn = lua_gettop(L); /* stays on the stack */
		o->vo.decide = decide;
		o->vo.decide_ud = o;
	} else if (t != LUA_TNIL) {
		luaL_error(L, "option 'variables' must be \"share\", "
			      "\"duplicate\" or a function (got %s)",
			   luaL_typename(L, -1));
	} else {
		lua_pop(L, 1);
	}
}

void lge_varopts_check(lua_State *L, lge_varopts *o)
{
	if (o->failed) {
		lua_pushvalue(L, o->errslot);
		lua_error(L);
	}
}

/* g:checkpoint_plan() -> {{from = key, to = key}, ...}: the tensors a
 * checkpoint of this graph needs that its source checkpoint (or the one
 * an entry's `checkpoint` names) holds under other keys (left by
 * transforms that duplicated variables, and by compose). */
static int g_checkpoint_plan(lua_State *L)
{
	const ge_ckpt_plan *p = ge_graph_checkpoint_plan(lge_checkgraph(L, 1)->g);
	lua_createtable(L, p ? (int)p->n : 0, 0);
	for (size_t i = 0; p && i < p->n; i++) {
		lua_createtable(L, 0, 2);
		lua_pushstring(L, p->src[i]);
		lua_setfield(L, -2, "from");
		lua_pushstring(L, p->dst[i]);
		lua_setfield(L, -2, "to");
		if (p->rename && p->rename[i]) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "rename");
		}
		if (p->src_from && p->src_from[i]) {
			lua_pushstring(L, p->src_from[i]);
			lua_setfield(L, -2, "checkpoint");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* g:add_checkpoint_copy(from_key, to_key): a checkpoint written for this
 * graph (g:save of a SavedModel) holds the source checkpoint's tensor
 * from_key under to_key too, and ge.freeze reads to_key as from_key.  For
 * variables a script duplicated by hand. */
static int g_add_checkpoint_copy(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_graph_add_checkpoint_copy(g, luaL_checkstring(L, 2),
				     luaL_checkstring(L, 3));
	return 0;
}

/* g:rename_variable(name, new_name): ge_variable_rename; raises on error
 * (not a variable, a name taken, a key the saver already holds). */
static int g_rename_variable(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_error err = {0};
	if (ge_variable_rename(g, luaL_checkstring(L, 2),
			       luaL_checkstring(L, 3), &err))
		return luaL_error(L, "%s", err.msg);
	return 0;
}

/* g:remove_variable(name): ge_variable_remove; raises on error (not a
 * variable, or something else still reads it). */
static int g_remove_variable(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_error err = {0};
	if (ge_variable_remove(g, luaL_checkstring(L, 2), &err))
		return luaL_error(L, "%s", err.msg);
	return 0;
}

void lge_open_variables(lua_State *L)
{
	static const luaL_Reg graph_methods[] = {
		{"variables", g_variables},
		{"variable", g_variable},
		{"checkpoint_plan", g_checkpoint_plan},
		{"add_checkpoint_copy", g_add_checkpoint_copy},
		{"rename_variable", g_rename_variable},
		{"remove_variable", g_remove_variable},
		{NULL, NULL},
	};
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pop(L, 1);
	luaL_newmetatable(L, LGE_VARIABLE);
	lua_pushcfunction(L, var_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}
