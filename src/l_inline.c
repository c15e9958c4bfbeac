/*
 * l_inline.c: ge.inline and ge.inline_all (lib/editor/inline.h).
 *
 *   local added = assert(ge.inline(g:op("StatefulPartitionedCall"),
 *                                  {recursive = true}))
 *   local n = assert(ge.inline_all(g))
 */
#include "config.h"

#include "editor/inline.h"
#include "lge.h"

/* ge.inline(call [, {recursive=}]) -> list of the ops copied | nil, err */
static int m_inline(lua_State *L)
{
	static const char *const known[] = {"recursive", NULL};
	lge_op *o = lge_checkop(L, 1);
	int recursive = 0;
	lge_checkopts(L, 2, known);
	if (lua_istable(L, 2)) {
		lua_getfield(L, 2, "recursive");
		recursive = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	lua_settop(L, 1);
	lge_pushopgraph(L, 1); /* 2: the graph userdata */
	ge_opvec added = GE_VEC_INIT;
	ge_error err;
	int rc = ge_inline(o->owner->g, o->id, recursive, &added, &err);
	if (rc) {
		ge_opvec_free(&added);
		return lge_fail(L, &err);
	}
	lua_createtable(L, (int)added.n, 0);
	for (size_t i = 0; i < added.n; i++) {
		lge_pushop(L, 2, added.v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	ge_opvec_free(&added);
	return 1;
}

/* ge.inline_all(g) -> number of calls inlined | nil, err */
static int m_inline_all(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	size_t n = 0;
	ge_error err;
	if (ge_inline_all(g, &n, &err))
		return lge_fail(L, &err);
	lua_pushinteger(L, (lua_Integer)n);
	return 1;
}

void lge_open_inline(lua_State *L)
{
	lua_pushcfunction(L, m_inline);
	lua_setfield(L, -2, "inline");
	lua_pushcfunction(L, m_inline_all);
	lua_setfield(L, -2, "inline_all");
}
