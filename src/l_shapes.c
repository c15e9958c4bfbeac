/*
 * l_shapes.c: shape inference from Lua (lib/analyses/shapes.h).
 *
 *   ge.infer_shapes(g [, {inputs = {name = shape}}])
 *       -> unknown, why
 *   ge.add_output_shapes(g)        -> number of ops given `_output_shapes`
 *
 * A shape in `inputs` is a list of dims (-1 for unknown), a string
 * "1x224x224x3", or false for an unknown rank.  `unknown` counts the
 * outputs whose shape is not fully known; `why` is a table:
 * {outputs=, known=, partial=, unknown_rank=, unknown_input=,
 *  no_shape_function=, data_dependent=, error=, contradictions=,
 *  types="Type:count,..." (op types without a shape function),
 *  message= (the first op whose shape cannot hold, if any)}.
 * t.shape and t.dtype give inferred values where the static ones are
 * unknown (l_tensor.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lge.h"
#include "analyses/shapes.h"

/* Reads a shape argument at idx into dims; returns the rank (-1 unknown). */
static int check_shape(lua_State *L, int idx, const char *name, int64_t *dims)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		int r = ge_shape_parse(lua_tostring(L, idx), dims,
				       GE_SHAPE_MAXRANK);
		if (r < -1)
			luaL_error(L, "shape of '%s': cannot read '%s'", name,
				   lua_tostring(L, idx));
		return r;
	}
	if (lua_type(L, idx) != LUA_TTABLE)
		return -1;
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	if (n > GE_SHAPE_MAXRANK)
		luaL_error(L, "shape of '%s' has too many dims", name);
	for (lua_Integer i = 1; i <= n; i++) {
		int isint;
		lua_rawgeti(L, idx, i);
		lua_Integer d = lua_tointegerx(L, -1, &isint);
		lua_pop(L, 1);
		if (!isint || d < -1)
			luaL_error(L, "shape of '%s': dim %d is not a size or -1",
				   name, (int)i);
		dims[i - 1] = d;
	}
	return (int)n;
}

static void set_count(lua_State *L, const char *k, size_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

static int m_infer_shapes(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		if (lua_getfield(L, 2, "inputs") == LUA_TTABLE) {
			int t = lua_gettop(L);
			size_t n = 0;
			lua_pushnil(L);
			while (lua_next(L, t)) {
				n++;
				lua_pop(L, 1);
			}
			/* userdata: freed by Lua even when a shape is bad */
			ge_shape_input *in = lua_newuserdatauv(
				L, (n ? n : 1) * sizeof *in, 0);
			int64_t(*dims)[GE_SHAPE_MAXRANK] = lua_newuserdatauv(
				L, (n ? n : 1) * sizeof *dims, 0);
			size_t k = 0;
			lua_pushnil(L);
			while (lua_next(L, t)) {
				if (lua_type(L, -2) != LUA_TSTRING)
					return luaL_error(L, "inputs: keys must "
							  "be op names");
				in[k].name = lua_tostring(L, -2);
				in[k].rank = check_shape(L, lua_gettop(L),
							 in[k].name, dims[k]);
				in[k].dims = dims[k];
				k++;
				lua_pop(L, 1);
			}
			ge_error err;
			if (ge_shapes_set_inputs(g, in, k, &err) != GE_OK)
				return luaL_error(L, "%s", err.msg);
			lua_pop(L, 2);
		}
		lua_pop(L, 1);
	}
	ge_shape_stats st;
	ge_error err;
	int rc = ge_shapes_infer(g, &st, &err);
	lua_pushinteger(L, (lua_Integer)(st.outputs - st.known));
	lua_createtable(L, 0, 12);
	set_count(L, "outputs", st.outputs);
	set_count(L, "known", st.known);
	set_count(L, "partial", st.partial);
	set_count(L, "unknown_rank", st.unknown_rank);
	set_count(L, "unknown_input", st.by_reason[GE_SHAPE_INPUT]);
	set_count(L, "no_shape_function", st.by_reason[GE_SHAPE_NOFN]);
	set_count(L, "data_dependent", st.by_reason[GE_SHAPE_DATA]);
	set_count(L, "error", st.by_reason[GE_SHAPE_ERROR]);
	set_count(L, "contradictions", st.contradictions);
	lua_pushstring(L, st.nofn_types ? st.nofn_types : "");
	lua_setfield(L, -2, "types");
	if (rc != GE_OK) {
		lua_pushstring(L, err.msg);
		lua_setfield(L, -2, "message");
	}
	return 2;
}

static int m_add_output_shapes(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	lua_pushinteger(L, (lua_Integer)ge_shapes_write_attrs(g));
	return 1;
}

void lge_open_shapes(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{"infer_shapes", m_infer_shapes},
		{"add_output_shapes", m_add_output_shapes},
		{NULL, NULL},
	};
	luaL_setfuncs(L, funcs, 0);
}
