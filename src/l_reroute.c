/*
 * l_reroute.c: ge.reroute (graph_editor's reroute module) and the tensor
 * method t:replace_all_uses_with(t2), the readable spelling of
 * ge.reroute_ts(t2, t).
 */
#include "config.h"

#include <string.h>

#include "l_editor.h"
#include "editor/reroute.h"

/* The lists of one reroute_ts call, reused by every call: an error
 * raised while converting leaves them marked busy, and later calls then
 * use scratch userdata of their own (so a call makes no garbage). */
static struct {
	ge_tvec t0, t1;
	ge_opvec can, cannot;
	int busy;
} ts_lists;

/* The ops of option k of the table at opts (in own, emptied, or in a
 * scratch userdata when own is NULL), or NULL when the option is
 * absent. */
static ge_opvec *opt_ops(lua_State *L, int opts, const char *k, lge_graph *G,
			 ge_opvec *own)
{
	int f = lsel_optfield(L, opts, k);
	if (lua_isnil(L, f)) {
		lua_pop(L, 1);
		return NULL;
	}
	ge_opvec *v = own ? own : lsel_opvec(L);
	v->n = 0;
	lsel_ops(L, f, G, 0, opts, v);
	return v;
}

/* swap_ts / reroute_ts(ts0, ts1 [, {can_modify=, cannot_modify=}]) ->
 * the number of input slots changed */
static int reroute_ts(lua_State *L, int mode)
{
	static const char *const known[] = {"can_modify", "cannot_modify",
					    NULL};
	ge_error err;
	lua_settop(L, 3);
	lge_checkopts(L, 3, known);
	lge_graph *G = lsel_findgraph(L, 1);
	if (!G)
		G = lsel_findgraph(L, 2);
	if (!G) {
		lua_pushinteger(L, 0);
		return 1;
	}
	int own = !ts_lists.busy;
	ge_tvec *t0 = own ? &ts_lists.t0 : lsel_tvec(L);
	ge_tvec *t1 = own ? &ts_lists.t1 : lsel_tvec(L);
	ts_lists.busy = 1;
	t0->n = t1->n = 0;
	lsel_ts(L, 1, G, 0, 1, t0);
	lsel_ts(L, 2, G, 0, 2, t1);
	ge_opvec *vc = opt_ops(L, 3, "can_modify", G,
			       own ? &ts_lists.can : NULL);
	ge_opvec *vn = opt_ops(L, 3, "cannot_modify", G,
			       own ? &ts_lists.cannot : NULL);
	int rc = ge_reroute_ts_lists(G->g, t0->v, t0->n, t1->v, t1->n, mode,
				     vc, vn, &err);
	if (own)
		ts_lists.busy = 0;
	if (rc < 0)
		return lge_raise(L, &err);
	lua_pushinteger(L, rc);
	return 1;
}

static int r_swap_ts(lua_State *L)
{
	return reroute_ts(L, GE_REROUTE_SWAP);
}

static int r_reroute_ts(lua_State *L)
{
	return reroute_ts(L, GE_REROUTE_A2B);
}

/* t:replace_all_uses_with(t2 [, opts]): the consumers of t read t2. */
static int t_replace_all_uses_with(lua_State *L)
{
	lge_checktensor(L, 1);
	lua_settop(L, 3);
	lua_pushcfunction(L, r_reroute_ts);
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 3);
	lua_call(L, 3, 1);
	return 1;
}

/* The views at 1 and 2 (made from other values as make_view does), then
 * the edit; returns both views. */
static int reroute_views(lua_State *L, int mode, int inputs, int outputs)
{
	ge_error err;
	lua_settop(L, 2);
	lge_view *a = lsel_toview(L, 1, 1);
	lge_view *b = lsel_toview(L, 2, 2);
	if (ge_reroute_views(&a->v, &b->v, mode, inputs, outputs, &err) < 0)
		return lge_raise(L, &err);
	return 2;
}

static int r_swap_inputs(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_SWAP, 1, 0);
}

static int r_reroute_inputs(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_A2B, 1, 0);
}

static int r_swap_outputs(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_SWAP, 0, 1);
}

static int r_reroute_outputs(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_A2B, 0, 1);
}

static int r_swap_ios(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_SWAP, 1, 1);
}

static int r_reroute_ios(lua_State *L)
{
	return reroute_views(L, GE_REROUTE_A2B, 1, 1);
}

static int control_inputs(lua_State *L, int add)
{
	ge_error err;
	lua_settop(L, 2);
	lge_op *o = lge_checkop(L, 1);
	ge_opvec *v = lsel_opvec(L);
	lsel_ops(L, 2, o->owner, 0, 2, v);
	int rc = add ? ge_add_control_inputs(o->owner->g, o->id, v->v, v->n,
					     &err) :
		       ge_remove_control_inputs(o->owner->g, o->id, v->v, v->n,
						&err);
	if (rc)
		return lge_raise(L, &err);
	return 0;
}

static int r_add_control_inputs(lua_State *L)
{
	return control_inputs(L, 1);
}

static int r_remove_control_inputs(lua_State *L)
{
	return control_inputs(L, 0);
}

const luaL_Reg lge_reroute_funcs[] = {
	{"swap_ts", r_swap_ts},
	{"reroute_ts", r_reroute_ts},
	{"swap_inputs", r_swap_inputs},
	{"reroute_inputs", r_reroute_inputs},
	{"swap_outputs", r_swap_outputs},
	{"reroute_outputs", r_reroute_outputs},
	{"swap_ios", r_swap_ios},
	{"reroute_ios", r_reroute_ios},
	{"add_control_inputs", r_add_control_inputs},
	{"remove_control_inputs", r_remove_control_inputs},
	{NULL, NULL},
};

void lge_open_reroute_methods(lua_State *L)
{
	static const luaL_Reg tmethods[] = {
		{"replace_all_uses_with", t_replace_all_uses_with},
		{NULL, NULL},
	};
	lge_newtype(L, LGE_TENSOR, NULL, tmethods);
	lua_pop(L, 1);
}
