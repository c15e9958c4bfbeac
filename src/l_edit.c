/*
 * l_edit.c: ge.edit (graph_editor's edit module).  Views passed in are
 * updated in place; placeholders come back as their tensors.  Flags can be
 * given positionally, as in graph_editor (detach_inputs(v, true)), or in
 * an options table (detach_inputs(v, {control_inputs = true})).
 */
#include "config.h"

#include "editor/edit.h"
#include "l_editor.h"

/* A flag given as argument idx: a boolean, a ControlOutputs (true), an
 * options table (its field k) or nothing (def). */
static int flag(lua_State *L, int idx, const char *k, int def)
{
	if (lua_isnoneornil(L, idx))
		return def;
	if (lua_type(L, idx) == LUA_TBOOLEAN)
		return lua_toboolean(L, idx);
	if (lsel_iscouts(L, idx))
		return 1;
	luaL_checktype(L, idx, LUA_TTABLE);
	return lsel_optbool(L, idx, k, def);
}

/* Pushes the placeholders' tensors; gidx is the graph userdata. */
static void push_phs(lua_State *L, int gidx, const ge_opvec *phs)
{
	lua_createtable(L, (int)phs->n, 0);
	for (size_t i = 0; i < phs->n; i++) {
		lge_pushtensor(L, gidx, (ge_tref){phs->v[i], 0});
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* The view for argument 1 at index 3 and its graph at index 4 (nil for an
 * empty view). */
static lge_view *view_arg(lua_State *L, int nargs)
{
	lua_settop(L, nargs);
	lge_view *w = lsel_toview(L, 1, 1);
	lsel_pushviewgraph(L, -1);
	return w;
}

static int e_detach_control_inputs(lua_State *L)
{
	ge_error err;
	lge_view *w = view_arg(L, 1);
	if (ge_detach_control_inputs(&w->v, &err))
		return lge_raise(L, &err);
	return 0;
}

/* detach_control_outputs(sgv, control_outputs) */
static int e_detach_control_outputs(lua_State *L)
{
	ge_error err;
	if (!lsel_iscouts(L, 2) && !lua_toboolean(L, 2))
		luaL_typeerror(L, 2, "ControlOutputs");
	lge_view *w = view_arg(L, 2);
	if (ge_detach_control_outputs(&w->v, &err))
		return lge_raise(L, &err);
	return 0;
}

/* detach_inputs(sgv [, control_inputs]) -> sgv, placeholders */
static int e_detach_inputs(lua_State *L)
{
	ge_error err;
	lua_settop(L, 2);
	int ci = flag(L, 2, "control_inputs", 0);
	lge_view *w = view_arg(L, 2);
	int vi = 3, gi = 4;
	ge_opvec *phs = lsel_opvec(L);
	if (ge_detach_inputs(&w->v, ci, phs, &err))
		return lge_raise(L, &err);
	lua_pushvalue(L, vi);
	if (lua_isnil(L, gi))
		lua_newtable(L);
	else
		push_phs(L, gi, phs);
	return 2;
}

/* detach_outputs(sgv [, control_outputs]) -> sgv_, placeholders */
static int e_detach_outputs(lua_State *L)
{
	ge_error err;
	ge_view out;
	lua_settop(L, 2);
	int co = flag(L, 2, "control_outputs", 0);
	lge_view *w = view_arg(L, 2);
	int gi = 4;
	ge_opvec *phs = lsel_opvec(L);
	if (ge_detach_outputs(&w->v, co, &out, phs, &err))
		return lge_raise(L, &err);
	lsel_pushview(L, &out, lua_isnil(L, gi) ? 0 : gi);
	if (lua_isnil(L, gi))
		lua_newtable(L);
	else
		push_phs(L, gi, phs);
	return 2;
}

/* detach(sgv [, {control_inputs=, control_outputs=, control_ios=}]) ->
 * sgv, input placeholders, output placeholders */
static int e_detach(lua_State *L)
{
	static const char *const known[] = {"control_inputs", "control_outputs",
					    "control_ios", NULL};
	ge_error err;
	lua_settop(L, 2);
	lge_checkopts(L, 2, known);
	int ci = lsel_optbool(L, 2, "control_inputs", 0);
	int co = lsel_optbool(L, 2, "control_outputs", 0);
	int io = lsel_optbool(L, 2, "control_ios", 0);
	if (io && co)
		return luaL_error(L, "control_ios and control_outputs cannot "
				     "both be given");
	if (io)
		ci = co = 1;
	lge_view *w = view_arg(L, 2);
	int vi = 3, gi = 4;
	ge_opvec *in = lsel_opvec(L), *out = lsel_opvec(L);
	if (ge_detach(&w->v, ci, co, in, out, &err))
		return lge_raise(L, &err);
	lua_pushvalue(L, vi);
	if (lua_isnil(L, gi)) {
		lua_newtable(L);
		lua_newtable(L);
	} else {
		push_phs(L, gi, in);
		push_phs(L, gi, out);
	}
	return 3;
}

/* connect(sgv0, sgv1 [, disconnect_first]) -> sgv0, sgv1 */
static int e_connect(lua_State *L)
{
	ge_error err;
	lua_settop(L, 3);
	int df = flag(L, 3, "disconnect_first", 0);
	lge_view *a = lsel_toview(L, 1, 1);
	lge_view *b = lsel_toview(L, 2, 2);
	if (ge_connect(&a->v, &b->v, df, &err))
		return lge_raise(L, &err);
	return 2;
}

/* bypass(sgv) -> sgv, placeholders */
static int e_bypass(lua_State *L)
{
	ge_error err;
	lge_view *w = view_arg(L, 1);
	int vi = 2, gi = 3;
	ge_opvec *phs = lsel_opvec(L);
	if (ge_bypass(&w->v, phs, &err))
		return lge_raise(L, &err);
	lua_pushvalue(L, vi);
	if (lua_isnil(L, gi))
		lua_newtable(L);
	else
		push_phs(L, gi, phs);
	return 2;
}

const luaL_Reg lge_edit_funcs[] = {
	{"detach_control_inputs", e_detach_control_inputs},
	{"detach_control_outputs", e_detach_control_outputs},
	{"detach_inputs", e_detach_inputs},
	{"detach_outputs", e_detach_outputs},
	{"detach", e_detach},
	{"connect", e_connect},
	{"bypass", e_bypass},
	{NULL, NULL},
};
