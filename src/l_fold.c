/*
 * l_fold.c: constant evaluation and the folding rewrites from Lua
 * (lib/analyses/eval.h, lib/editor/fold.h).
 *
 *   ge.evaluate(t)                       -> values, shape | nil, err
 *   ge.fold_constants(g [, {outputs = {name, ...}}]) -> report
 *   ge.fold_batch_norms(g)               -> report
 *   ge.round_weights(g [, {num_steps = 256, minimum_size = 0,
 *                          per_channel = false}]) -> report
 *   ge.quantize_weights(g [, {minimum_size = 1024, per_channel = false}])
 *                                        -> report
 *
 * values is a flat list in row-major order (numbers; booleans for bool);
 * a report is {folded=, removed=, skipped=, notes={line, ...}}: notes say
 * which ops were left as they were and why.
 */
#include "config.h"

#include <string.h>

#include "editor/fold.h"
#include "exec/xfold.h"
#include "lge.h"

static void push_report(lua_State *L, ge_fold_report *r)
{
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, (lua_Integer)r->folded);
	lua_setfield(L, -2, "folded");
	lua_pushinteger(L, (lua_Integer)r->removed);
	lua_setfield(L, -2, "removed");
	lua_pushinteger(L, (lua_Integer)r->skipped);
	lua_setfield(L, -2, "skipped");
	lua_newtable(L);
	const char *p = (const char *)r->notes.data, *end = p + r->notes.len;
	lua_Integer k = 0;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len) {
			lua_pushlstring(L, p, len);
			lua_rawseti(L, -2, ++k);
		}
		p += len + 1;
	}
	lua_setfield(L, -2, "notes");
	ge_fold_report_free(r);
}

static lua_Integer opt_int(lua_State *L, int idx, const char *k,
			   lua_Integer def)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return def;
	lua_getfield(L, idx, k);
	lua_Integer v = luaL_optinteger(L, -1, def);
	lua_pop(L, 1);
	return v;
}

static int opt_bool(lua_State *L, int idx, const char *k, int def)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return def;
	lua_getfield(L, idx, k);
	int v = lua_isnil(L, -1) ? def : lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

static int m_evaluate(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	ge_value v;
	ge_error err;
	if (ge_eval_tensor(x->owner->g, x->t, &v, &err) != GE_OK) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	lua_createtable(L, (int)(v.n < 1 << 20 ? v.n : 0), 0);
	for (int64_t k = 0; k < v.n; k++) {
		if (v.d)
			lua_pushnumber(L, v.d[k]);
		else if (v.dtype == 10)
			lua_pushboolean(L, v.i[k] != 0);
		else
			lua_pushinteger(L, v.i[k]);
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	lge_pushdims(L, v.rank, v.dims);
	ge_value_free(&v);
	return 2;
}

static int m_fold_constants(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char **keep = NULL;
	size_t n = 0;
	if (lua_type(L, 2) == LUA_TTABLE &&
	    lua_getfield(L, 2, "outputs") == LUA_TTABLE) {
		n = (size_t)lua_rawlen(L, -1);
		keep = lua_newuserdatauv(L, (n ? n : 1) * sizeof *keep, 0);
		for (size_t i = 0; i < n; i++) {
			lua_rawgeti(L, -2, (lua_Integer)i + 1);
			keep[i] = luaL_checkstring(L, -1);
			lua_pop(L, 1); /* the outputs table keeps the string */
		}
	}
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	if (ge_fold_constants(g, keep, n, &r, &err) != GE_OK) {
		ge_fold_report_free(&r);
		return luaL_error(L, "%s", err.msg);
	}
	push_report(L, &r);
	return 1;
}

static int m_fold_batch_norms(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	if (ge_fold_batch_norms(g, &r, &err) != GE_OK) {
		ge_fold_report_free(&r);
		return luaL_error(L, "%s", err.msg);
	}
	push_report(L, &r);
	return 1;
}

static int m_round_weights(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	int steps = (int)opt_int(L, 2, "num_steps", 256);
	int64_t min = (int64_t)opt_int(L, 2, "minimum_size", 0);
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	int pc = opt_bool(L, 2, "per_channel", 0);
	if (ge_round_weights(g, steps, min, pc, &r, &err) != GE_OK) {
		ge_fold_report_free(&r);
		return luaL_error(L, "%s", err.msg);
	}
	push_report(L, &r);
	return 1;
}

static int m_quantize_weights(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	int64_t min = (int64_t)opt_int(L, 2, "minimum_size", 1024);
	ge_fold_report r = {0, 0, 0, GE_BUF_INIT};
	ge_error err;
	int pc = opt_bool(L, 2, "per_channel", 0);
	if (ge_quantize_weights(g, min, pc, &r, &err) != GE_OK) {
		ge_fold_report_free(&r);
		return luaL_error(L, "%s", err.msg);
	}
	push_report(L, &r);
	return 1;
}

void lge_open_fold(lua_State *L)
{
	/* folding and ge.evaluate compute on the runner's kernels */
	ge_xfold_install();
	static const luaL_Reg funcs[] = {
		{"evaluate", m_evaluate},
		{"fold_constants", m_fold_constants},
		{"fold_batch_norms", m_fold_batch_norms},
		{"round_weights", m_round_weights},
		{"quantize_weights", m_quantize_weights},
		{NULL, NULL},
	};
	luaL_setfuncs(L, funcs, 0);
}
