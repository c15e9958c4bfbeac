/*
 * l_tensor.c: the tensor userdata (gerewrite.tensor): one output of an op.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lge.h"
#include "analyses/shapes.h"

/* Tensor wrappers are cached under id * 2^24 + index. */
#define INDEX_BITS 24

void lge_pushtensor(lua_State *L, int gidx, ge_tref t)
{
	if (t.index < 0 || t.index >= (1 << INDEX_BITS))
		luaL_error(L, "output index %d out of range", (int)t.index);
	lua_Integer key = (lua_Integer)t.op << INDEX_BITS | t.index;
	gidx = lua_absindex(L, gidx);
	lua_getiuservalue(L, gidx, 2);
	if (lua_rawgeti(L, -1, key) != LUA_TNIL) {
		lua_remove(L, -2);
		return;
	}
	lua_pop(L, 1);
	lge_tensor *x = lua_newuserdatauv(L, sizeof *x, 1);
	x->owner = lua_touserdata(L, gidx);
	x->t = t;
	luaL_setmetatable(L, LGE_TENSOR);
	lua_pushvalue(L, gidx);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, -1);
	lua_rawseti(L, -3, key);
	lua_remove(L, -2);
}

lge_tensor *lge_testtensor(lua_State *L, int arg)
{
	return lge_testudata(L, arg, LGE_TENSOR);
}

lge_tensor *lge_checktensor(lua_State *L, int arg)
{
	lge_tensor *x = lge_checkudata(L, arg, LGE_TENSOR);
	if (!x->owner->g)
		luaL_error(L, "the tensor's graph is closed");
	if (!ge_op_alive(x->owner->g, x->t.op))
		luaL_error(L, "op '%s' was removed from the graph",
			   ge_op_name(x->owner->g, x->t.op));
	return x;
}

/* The messages are the library's (ge_graph_resolve_tensor,
 * ge_graph_check_tensor) but for the binding's own cases: not a tensor
 * at all, a tensor of another graph. */
const char *lge_totensorin(lua_State *L, int idx, lge_graph *G,
			   int allow_control, ge_tref *out)
{
	ge_error err;
	if (lua_type(L, idx) == LUA_TSTRING) {
		if (ge_graph_resolve_tensor(G->g, lua_tostring(L, idx),
					    allow_control, out, &err))
			return lua_pushstring(L, err.msg);
		return NULL;
	}
	lge_tensor *x = lge_testtensor(L, idx);
	if (!x)
		return lua_pushfstring(L,
				       "gerewrite.tensor or tensor name expected, "
				       "got %s",
				       luaL_typename(L, idx));
	if (x->owner != G)
		return lua_pushfstring(L, "tensor of op '%s' belongs to another "
					  "graph",
				       x->owner->g ? ge_op_name(x->owner->g, x->t.op)
						   : "?");
	if (ge_graph_check_tensor(G->g, x->t, &err))
		return lua_pushstring(L, err.msg);
	*out = x->t;
	return NULL;
}

ge_tref lge_checktensorin(lua_State *L, int arg, lge_graph *G,
			  int allow_control)
{
	ge_tref t;
	const char *why = lge_totensorin(L, arg, G, allow_control, &t);
	if (why)
		luaL_argerror(L, arg, why);
	return t;
}

/* ------------------------------------------------------------ properties */

static int tensor_shape(ge_graph *g, ge_tref t, int64_t *dims, int cap)
{
	return ge_shapes_best(g, t, dims, cap);
}

static int tensor_dtype(ge_graph *g, ge_tref t)
{
	int dt = ge_op_output_dtype(g, t.op, t.index);
	return dt ? dt : ge_shapes_dtype(g, t);
}

/* [-0, +1, m] The shape as a shape table, nil for unknown rank. */
static void push_shape(lua_State *L, ge_graph *g, ge_tref t)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = tensor_shape(g, t, dims, GE_SHAPE_MAXRANK);
	if (rank <= GE_SHAPE_MAXRANK) {
		lge_pushdims(L, rank, dims);
		return;
	}
	int64_t *big = lua_newuserdatauv(L, (size_t)rank * sizeof *big, 0);
	ge_op_output_shape(g, t.op, t.index, big, rank);
	lge_pushdims(L, rank, big);
	lua_remove(L, -2);
}

static void push_name(lua_State *L, const ge_graph *g, ge_tref t)
{
	lua_pushfstring(L, "%s:%d", ge_op_name(g, t.op), (int)t.index);
}

/* Properties (lge_newprops): each checks that the op is still there. */
static int t_p_op(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	lua_getiuservalue(L, 1, 1);
	lge_pushop(L, -1, x->t.op);
	return 1;
}

static int t_p_index(lua_State *L)
{
	lua_pushinteger(L, lge_checktensor(L, 1)->t.index);
	return 1;
}

static int t_p_name(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	push_name(L, x->owner->g, x->t);
	return 1;
}

static int t_p_dtype(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	int dt = tensor_dtype(x->owner->g, x->t);
	if (dt)
		lge_pushdtype(L, dt);
	else
		lua_pushnil(L);
	return 1;
}

static int t_p_shape(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	push_shape(L, x->owner->g, x->t);
	return 1;
}

static int t_p_graph(lua_State *L)
{
	lge_checktensor(L, 1);
	lua_getiuservalue(L, 1, 1);
	return 1;
}

static int t_newindex(lua_State *L)
{
	return luaL_error(L, "cannot set field '%s' of a tensor",
			  lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2)
							: luaL_typename(L, 2));
}

/* tensor "name:0" float32[?,3]: '?' an unknown dim, [*] an unknown rank,
 * '?' for an unknown dtype. */
static int t_tostring(lua_State *L)
{
	lge_tensor *x = luaL_checkudata(L, 1, LGE_TENSOR);
	ge_graph *g = x->owner->g;
	luaL_Buffer b;
	char tmp[64];
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "tensor ");
	if (!g) {
		luaL_addstring(&b, "(graph closed)");
		luaL_pushresult(&b);
		return 1;
	}
	push_name(L, g, x->t);
	lge_addquoted(&b, lua_tostring(L, -1));
	lua_pop(L, 1);
	if (!ge_op_alive(g, x->t.op)) {
		luaL_addstring(&b, " (removed)");
		luaL_pushresult(&b);
		return 1;
	}
	luaL_addchar(&b, ' ');
	const char *dn = ge_dtype_name(tensor_dtype(g, x->t));
	luaL_addstring(&b, dn && *dn ? dn : "?");
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = tensor_shape(g, x->t, dims, GE_SHAPE_MAXRANK);
	if (rank < 0) {
		luaL_addstring(&b, "[*]");
	} else {
		luaL_addchar(&b, '[');
		for (int i = 0; i < rank; i++) {
			if (i)
				luaL_addchar(&b, ',');
			if (i >= 8) {
				luaL_addstring(&b, "...");
				break;
			}
			if (dims[i] < 0) {
				luaL_addchar(&b, '?');
			} else {
				snprintf(tmp, sizeof tmp, "%lld",
					 (long long)dims[i]);
				luaL_addstring(&b, tmp);
			}
		}
		luaL_addchar(&b, ']');
	}
	luaL_pushresult(&b);
	return 1;
}

/* ------------------------------------------------------------ methods */

/* t:consumers() -> the ops reading this output, each once, node order */
static int t_consumers(lua_State *L)
{
	lge_tensor *x = lge_checktensor(L, 1);
	ge_graph *g = x->owner->g;
	lua_getiuservalue(L, 1, 1);
	int gidx = lua_gettop(L);
	ge_opid small[16], *ids = small;
	size_t n = ge_tensor_consumers(g, x->t, small, 16);
	if (n > 16) {
		ids = lua_newuserdatauv(L, n * sizeof *ids, 0);
		n = ge_tensor_consumers(g, x->t, ids, n);
	}
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lge_pushop(L, gidx, ids[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static const luaL_Reg tensor_meta[] = {
	{"__newindex", t_newindex},
	{"__tostring", t_tostring},
	{NULL, NULL},
};

static const luaL_Reg tensor_methods[] = {
	{"consumers", t_consumers},
	{NULL, NULL},
};

static const luaL_Reg tensor_props[] = {
	{"op", t_p_op},
	{"index", t_p_index},
	{"name", t_p_name},
	{"dtype", t_p_dtype},
	{"shape", t_p_shape},
	{"graph", t_p_graph},
	{NULL, NULL},
};

void lge_open_tensor(lua_State *L)
{
	lge_newtype(L, LGE_TENSOR, tensor_meta, tensor_methods);
	lua_pop(L, 1);
	lge_newprops(L, LGE_TENSOR, tensor_props, "a tensor");
	lua_pop(L, 1);
}
