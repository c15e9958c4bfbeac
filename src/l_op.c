/*
 * l_op.c: the op userdata (gerewrite.op).
 */
#include "config.h"

#include <string.h>

#include "analyses/frames.h"
#include "lge.h"
#include "editor/provenance.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* The key, in an op metatable, of the graph userdata it belongs to. */
static const char opgraph_key = 0;

void lge_newopmeta(lua_State *L, int gidx)
{
	gidx = lua_absindex(L, gidx);
	luaL_getmetatable(L, LGE_OP); /* the fields, made by lge_open_op */
	lua_createtable(L, 0, 16);
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -4);
	}
	lua_pushvalue(L, gidx);
	lua_rawsetp(L, -2, &opgraph_key);
	/* Lua code asking for an op's metatable gets the shared one, which
	 * holds the same fields less the graph */
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "__metatable");
	luaL_getmetatable(L, LGE_OPCLASS);
	lua_setmetatable(L, -2);
	lua_remove(L, -2);
}

void lge_pushopmeta(lua_State *L, int gidx)
{
	lua_getiuservalue(L, gidx, 4);
}

void lge_pushopgraph(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lua_getmetatable(L, idx);
	lua_rawgetp(L, -1, &opgraph_key);
	lua_remove(L, -2);
}

void lge_pushop(lua_State *L, int gidx, ge_opid id)
{
	gidx = lua_absindex(L, gidx);
	lua_getiuservalue(L, gidx, 1);
	if (lua_rawgeti(L, -1, LGE_OPKEY(id)) != LUA_TNIL) {
		lua_remove(L, -2);
		return;
	}
	lua_pop(L, 1);
	lge_op *o = lua_newuserdatauv(L, sizeof *o, 0);
	o->owner = lua_touserdata(L, gidx);
	o->id = id;
	lge_pushopmeta(L, gidx);
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_rawseti(L, -3, LGE_OPKEY(id));
	lua_remove(L, -2);
}

static void push_ops(lua_State *L, int gidx, const ge_opid *ids, size_t n)
{
	gidx = lua_absindex(L, gidx);
	const ge_graph *g = ((lge_graph *)lua_touserdata(L, gidx))->g;
	size_t cap = ids ? n : ge_graph_capacity(g);
	size_t want = ids ? n : ge_graph_num_ops(g);
	/* ids NULL: the live ops in node order.  The graph's cache of op
	 * userdata, the op metatable and the list,
	 * each looked up once for the whole list */
	lua_getiuservalue(L, gidx, 1);
	int cache = lua_gettop(L);
	int fresh = 0; /* the cache is empty: no op has a userdata yet */
	if (!ids && want > 64) {
		/* the first list of all the ops: a cache made to size (grown
		 * one key at a time, it is rehashed at each power of two) */
		lua_pushnil(L);
		if (lua_next(L, cache))
			lua_pop(L, 2);
		else {
			fresh = 1;
			lua_getmetatable(L, cache);
			lua_createtable(L, cap > INT32_MAX ? 0 : (int)cap, 0);
			lua_insert(L, -2);
			lua_setmetatable(L, -2);
			lua_pushvalue(L, -1);
			lua_setiuservalue(L, gidx, 1);
			lua_replace(L, cache);
		}
	}
	lge_pushopmeta(L, gidx);
	int mt = cache + 1;
	lge_graph *owner = lua_touserdata(L, gidx);
	lua_createtable(L, want > INT32_MAX ? 0 : (int)want, 0);
	lua_Integer k = 0;
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = ids ? ids[i] : (ge_opid)i;
		if (!ids && !ge_op_alive(g, id))
			continue;
		if (fresh || lua_rawgeti(L, cache, LGE_OPKEY(id)) == LUA_TNIL) {
			if (!fresh)
				lua_pop(L, 1);
			lge_op *o = lua_newuserdatauv(L, sizeof *o, 0);
			o->owner = owner;
			o->id = id;
			lua_pushvalue(L, mt);
			lua_setmetatable(L, -2);
			lua_pushvalue(L, -1);
			lua_rawseti(L, cache, LGE_OPKEY(id));
		}
		lua_rawseti(L, -2, ++k);
	}
	lua_replace(L, cache);
	lua_pop(L, 1);
}

void lge_pushoplist(lua_State *L, int gidx, const ge_opid *ids, size_t n)
{
	static const ge_opid none[1] = {0};
	push_ops(L, gidx, ids ? ids : none, ids ? n : 0);
}

void lge_pushallops(lua_State *L, int gidx)
{
	push_ops(L, gidx, NULL, 0);
}

void lge_pushopordangling(lua_State *L, int gidx, ge_opid id,
			  const char *dangling)
{
	if (id == GE_NOOP)
		lua_pushstring(L, dangling ? dangling : "");
	else
		lge_pushop(L, gidx, id);
}

lge_op *lge_testop(lua_State *L, int arg)
{
	return lge_testudata(L, arg, LGE_OP);
}

lge_op *lge_checkop(lua_State *L, int arg)
{
	lge_op *o = lge_checkudata(L, arg, LGE_OP);
	if (!o->owner->g)
		luaL_error(L, "the op's graph is closed");
	if (!ge_op_alive(o->owner->g, o->id))
		luaL_error(L, "op '%s' was removed from the graph",
			   ge_op_name(o->owner->g, o->id));
	return o;
}

const char *lge_toopin(lua_State *L, int idx, lge_graph *G, ge_opid *out)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *name = lua_tostring(L, idx);
		ge_opid id = ge_graph_find(G->g, name + (name[0] == '^'));
		if (id == GE_NOOP)
			return lua_pushfstring(L, "no op named '%s'",
					       name + (name[0] == '^'));
		*out = id;
		return NULL;
	}
	lge_op *o = lge_testop(L, idx);
	if (!o)
		return lua_pushfstring(L, "gerewrite.op or op name expected, got %s",
				       luaL_typename(L, idx));
	if (o->owner != G)
		return lua_pushfstring(L, "op '%s' belongs to another graph",
				       o->owner->g ? ge_op_name(o->owner->g, o->id)
						   : "?");
	if (!ge_op_alive(G->g, o->id))
		return lua_pushfstring(L, "op '%s' was removed from the graph",
				       ge_op_name(G->g, o->id));
	*out = o->id;
	return NULL;
}

ge_opid lge_checkopin(lua_State *L, int arg, lge_graph *G)
{
	ge_opid id;
	const char *why = lge_toopin(L, arg, G, &id);
	if (why)
		luaL_argerror(L, arg, why);
	return id;
}

/* Pushes the graph userdata of the op at 1 and returns its index. */
static int owner_index(lua_State *L)
{
	lge_pushopgraph(L, 1);
	return lua_gettop(L);
}

/* ------------------------------------------------------------ properties */

static void push_inputs(lua_State *L, lge_op *o, int gidx)
{
	ge_graph *g = o->owner->g;
	size_t n = ge_op_num_inputs(g, o->id);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		ge_tref t = ge_op_input(g, o->id, i);
		if (t.op == GE_NOOP)
			lua_pushstring(L, ge_op_dangling_input(g, o->id, i));
		else
			lge_pushtensor(L, gidx, t);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void push_outputs(lua_State *L, lge_op *o, int gidx)
{
	int n = ge_op_num_outputs(o->owner->g, o->id);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lge_pushtensor(L, gidx, (ge_tref){o->id, i});
		lua_rawseti(L, -2, i + 1);
	}
}

static void push_control_inputs(lua_State *L, lge_op *o, int gidx)
{
	ge_graph *g = o->owner->g;
	size_t nin = ge_op_num_inputs(g, o->id);
	size_t n = ge_op_num_control_inputs(g, o->id);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		ge_opid c = ge_op_control_input(g, o->id, i);
		const char *d = NULL;
		if (c == GE_NOOP) {
			d = ge_op_dangling_input(g, o->id, nin + i);
			if (d && d[0] == '^')
				d++;
		}
		lge_pushopordangling(L, gidx, c, d);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* Properties (lge_newprops): each checks that the op is still there. */
static int op_p_name(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	lua_pushstring(L, ge_op_name(o->owner->g, o->id));
	return 1;
}

static int op_p_type(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	lua_pushstring(L, ge_op_type(o->owner->g, o->id));
	return 1;
}

static int op_p_device(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	lua_pushstring(L, ge_op_device(o->owner->g, o->id));
	return 1;
}

static int op_p_graph(lua_State *L)
{
	lge_checkop(L, 1);
	lge_pushopgraph(L, 1);
	return 1;
}

static int op_p_inputs(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	push_inputs(L, o, owner_index(L));
	return 1;
}

static int op_p_outputs(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	push_outputs(L, o, owner_index(L));
	return 1;
}

/* op.frame: "" in the root frame, nil when no walk from the graph's
 * sources reaches the op (frames.h). */
static int op_p_frame(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	const ge_frames *F = ge_graph_frames(o->owner->g);
	int32_t f = ge_frames_op(F, o->id);
	if (f < 0)
		lua_pushnil(L);
	else
		lua_pushstring(L, ge_frames_name(F, f));
	return 1;
}

static int op_p_control_inputs(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	push_control_inputs(L, o, owner_index(L));
	return 1;
}

static int op_newindex(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	const char *key = lua_tostring(L, 2);
	if (key && !strcmp(key, "name")) {
		ge_error err;
		if (ge_op_set_name(o->owner->g, o->id, luaL_checkstring(L, 3),
				   &err) != GE_OK)
			return lge_raise(L, &err);
		return 0;
	}
	if (key && !strcmp(key, "device")) {
		ge_op_set_device(o->owner->g, o->id, luaL_checkstring(L, 3));
		return 0;
	}
	if (key && !strcmp(key, "type")) {
		/* transform_graph's rename_op: the attrs stay as they are */
		const char *t = luaL_checkstring(L, 3);
		if (!*t)
			return luaL_error(L, "an op type cannot be empty");
		ge_op_set_type(o->owner->g, o->id, t);
		return 0;
	}
	return luaL_error(L,
			  "cannot set field '%s' of an op (only name, type "
			  "and device)",
			  key ? key : luaL_typename(L, 2));
}

static int op_tostring(lua_State *L)
{
	lge_op *o = lge_checkudata(L, 1, LGE_OP);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "op ");
	if (!o->owner->g) {
		luaL_addstring(&b, "(graph closed)");
	} else {
		luaL_addstring(&b, ge_op_type(o->owner->g, o->id));
		luaL_addchar(&b, ' ');
		lge_addquoted(&b, ge_op_name(o->owner->g, o->id));
		if (!ge_op_alive(o->owner->g, o->id))
			luaL_addstring(&b, " (removed)");
	}
	luaL_pushresult(&b);
	return 1;
}

/* ------------------------------------------------------------ methods */

/* op:output(k) -> tensor (k counts from 0) */
static int op_output(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	lua_Integer k = luaL_checkinteger(L, 2);
	if (k < 0 || k > 0x7fffffff || !ge_op_has_output(o->owner->g, o->id, (int)k))
		return luaL_argerror(
			L, 2,
			lua_pushfstring(L, "op '%s' has no output %I (it has %d)",
					ge_op_name(o->owner->g, o->id),
					(LUAI_UACINT)k,
					ge_op_num_outputs(o->owner->g, o->id)));
	lge_pushtensor(L, owner_index(L), (ge_tref){o->id, (int32_t)k});
	return 1;
}

static size_t check_slot(lua_State *L, lge_op *o, int arg)
{
	lua_Integer i = luaL_checkinteger(L, arg);
	size_t n = ge_op_num_inputs(o->owner->g, o->id);
	if (i < 0 || (lua_Unsigned)i >= n)
		luaL_argerror(L, arg,
			      lua_pushfstring(L,
					      "op '%s' has no input %I (it has "
					      "%d; they count from 0)",
					      ge_op_name(o->owner->g, o->id),
					      (LUAI_UACINT)i, (int)n));
	return (size_t)i;
}

/* op:input(i) -> tensor (i counts from 0), or the name of a missing one */
static int op_input(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	size_t i = check_slot(L, o, 2);
	ge_tref t = ge_op_input(o->owner->g, o->id, i);
	if (t.op == GE_NOOP)
		lua_pushstring(L, ge_op_dangling_input(o->owner->g, o->id, i));
	else
		lge_pushtensor(L, owner_index(L), t);
	return 1;
}

/* op:set_input(i, tensor | "name:k") */
static int op_set_input(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	size_t i = check_slot(L, o, 2);
	ge_tref t = lge_checktensorin(L, 3, o->owner, 0);
	ge_error err;
	if (ge_op_set_input(o->owner->g, o->id, i, t, &err) != GE_OK)
		return lge_raise(L, &err);
	return 0;
}

/* op:attr(name) -> value, kind | nil */
static int op_attr(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	const char *name = luaL_checkstring(L, 2);
	ge_error err;
	err.msg[0] = 0;
	const Tensorflow__AttrValue *v = ge_op_attr(o->owner->g, o->id, name,
						    &err);
	if (!v) {
		size_t len;
		if (ge_op_attr_raw(o->owner->g, o->id, name, &len))
			return lge_raise(L, &err);
		return 0;
	}
	lge_value_origin = ge_op_name(o->owner->g, o->id);
	lge_pushattr(L, v);
	lge_value_origin = NULL;
	return 2;
}

/* op:set_attr(name, value [, kind]) */
static int op_set_attr(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	ge_graph *g = o->owner->g;
	const char *name = luaL_checkstring(L, 2);
	luaL_checkany(L, 3);
	const char *kind = luaL_optstring(L, 4, NULL);
	const char *hint = NULL;
	if (!kind) {
		/* keep the kind the attr has, else what the OpDef says */
		const Tensorflow__AttrValue *v = ge_op_attr(g, o->id, name, NULL);
		if (v)
			hint = lge_attrkind(v);
		if (!hint || !strcmp(hint, "list") || !strcmp(hint, "none"))
			hint = lge_opdefkind(g, ge_op_type(g, o->id), name);
	}
	ge_buf *b = lge_newbuf(L);
	lge_encodeattr(L, 3, name, kind, hint, b);
	ge_op_set_attr_raw(g, o->id, name, b->data, b->len);
	return 0;
}

/* op:attr_raw(name) -> the encoded AttrValue bytes | nil */
static int op_attr_raw(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	size_t len;
	const uint8_t *p = ge_op_attr_raw(o->owner->g, o->id,
					  luaL_checkstring(L, 2), &len);
	if (!p)
		return 0;
	lua_pushlstring(L, (const char *)p, len);
	return 1;
}

/* op:set_attr_raw(name, bytes): sets encoded AttrValue bytes as they are
 * (for copying attrs verbatim); they are checked when read. */
static int op_set_attr_raw(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	const char *name = luaL_checkstring(L, 2);
	size_t len;
	const char *p = luaL_checklstring(L, 3, &len);
	ge_op_set_attr_raw(o->owner->g, o->id, name, (const uint8_t *)p, len);
	return 0;
}

/* op:remove_attr(name) -> true if it was there */
static int op_remove_attr(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	const char *name = luaL_checkstring(L, 2);
	lua_pushboolean(L, ge_op_remove_attr(o->owner->g, o->id, name) == GE_OK);
	return 1;
}

/* op:attr_names() -> list, in the order of the file */
static int op_attr_names(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	size_t n = ge_op_num_attrs(o->owner->g, o->id);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushstring(L, ge_op_attr_name(o->owner->g, o->id, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* op:consumers() -> the ops reading any output, each once, node order */
static int op_consumers(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	int gidx = owner_index(L);
	size_t n;
	const ge_use *u = ge_op_uses(o->owner->g, o->id, &n);
	lua_newtable(L);
	lua_Integer k = 0;
	for (size_t i = 0; i < n; i++) {
		/* uses are sorted by consumer, so repeats are adjacent */
		if (i && u[i].op == u[i - 1].op)
			continue;
		lge_pushop(L, gidx, u[i].op);
		lua_rawseti(L, -2, ++k);
	}
	return 1;
}

/* op:control_outputs() -> the ops having this one as a control input */
static int op_control_outputs(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	int gidx = owner_index(L);
	size_t n;
	const ge_opid *c = ge_op_control_outputs(o->owner->g, o->id, &n);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lge_pushop(L, gidx, c[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* Pushes a list of strings. */
static void push_strvec(lua_State *L, const ge_strvec *v)
{
	lua_createtable(L, (int)v->n, 0);
	for (size_t i = 0; i < v->n; i++) {
		lua_pushstring(L, v->v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

int lge_push_origins(lua_State *L, ge_graph *g, ge_opid id, ge_error *err)
{
	ge_strvec n = GE_VEC_INIT, f = GE_VEC_INIT;
	int rc = ge_op_origins(g, id, &n, &f, err);
	if (rc >= 0) {
		/* (a memory error while pushing leaks the two arrays) */
		lua_createtable(L, 0, 2);
		push_strvec(L, &n);
		lua_setfield(L, -2, "nodes");
		push_strvec(L, &f);
		lua_setfield(L, -2, "funcs");
	}
	ge_strvec_free(&n);
	ge_strvec_free(&f);
	return rc;
}

/* op.origins: {nodes = {...}, funcs = {...}}, the op's
 * experimental_debug_info (empty lists when it has none) */
static int op_p_origins(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	ge_error err;
	if (lge_push_origins(L, o->owner->g, o->id, &err) < 0)
		return lge_raise(L, &err);
	return 1;
}

/* Checks list field `key` of the table at arg: strings, or ops of G when
 * ops_ok.  Returns its length. */
static size_t check_names(lua_State *L, int arg, const char *key,
			  lge_graph *G, int ops_ok)
{
	size_t n = 0;
	if (lua_getfield(L, arg, key) != LUA_TNIL) {
		if (!lua_istable(L, -1))
			luaL_error(L, "bad argument #1 to 'add_origins' (%s "
				   "must be a list)", key);
		n = (size_t)lua_rawlen(L, -1);
		for (size_t i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, (lua_Integer)i);
			lge_op *x = ops_ok ? lge_testop(L, -1) : NULL;
			if (x && (x->owner != G || !ge_op_alive(G->g, x->id)))
				luaL_error(L, "bad argument #1 to 'add_origins' "
					   "(%s[%d] is not a live op of the "
					   "graph)", key, (int)i);
			if (!x && lua_type(L, -1) != LUA_TSTRING)
				luaL_error(L, "bad argument #1 to 'add_origins' "
					   "(%s[%d] must be a name%s)", key,
					   (int)i, ops_ok ? " or an op" : "");
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	return n;
}

/* op:add_origins{nodes = {name or op, ...}, funcs = {...}, rule = s}:
 * the op's provenance becomes the sorted union of what it had and what
 * these bring (an op brings its origins, or its name); rule is noted for
 * the report.  Returns the op. */
static int op_add_origins(lua_State *L)
{
	lge_op *o = lge_checkop(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	static const char *const known[] = {"nodes", "funcs", "rule", NULL};
	lge_checkopts(L, 2, known);
	lge_graph *G = o->owner;
	size_t nn = check_names(L, 2, "nodes", G, 1);
	size_t nf = check_names(L, 2, "funcs", G, 0);
	lua_getfield(L, 2, "rule");
	const char *rule = luaL_optstring(L, -1, NULL);
	/* nothing raises from here to the end of the edit */
	ge_strvec n = GE_VEC_INIT, f = GE_VEC_INIT;
	ge_error err = {0};
	int rc = GE_OK;
	lua_getfield(L, 2, "nodes");
	for (size_t i = 1; i <= nn && !rc; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i);
		lge_op *x = lge_testop(L, -1);
		if (x)
			rc = ge_op_origins_of(G->g, x->id, &n, &f, &err);
		else
			ge_strvec_push(&n, lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_getfield(L, 2, "funcs");
	for (size_t i = 1; i <= nf; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i);
		ge_strvec_push(&f, lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!rc)
		rc = ge_op_add_origins(G->g, o->id, n.v, n.n, f.v, f.n, &err);
	if (!rc && rule)
		ge_prov_note(G->g, o->id, rule);
	ge_strvec_free(&n);
	ge_strvec_free(&f);
	if (rc)
		return lge_raise(L, &err);
	lua_settop(L, 1);
	return 1;
}

static const luaL_Reg op_meta[] = {
	{"__newindex", op_newindex},
	{"__tostring", op_tostring},
	{NULL, NULL},
};

static const luaL_Reg op_methods[] = {
	{"output", op_output},
	{"input", op_input},
	{"set_input", op_set_input},
	{"attr", op_attr},
	{"set_attr", op_set_attr},
	{"remove_attr", op_remove_attr},
	{"attr_raw", op_attr_raw},
	{"set_attr_raw", op_set_attr_raw},
	{"attr_names", op_attr_names},
	{"consumers", op_consumers},
	{"control_outputs", op_control_outputs},
	{"add_origins", op_add_origins},
	{NULL, NULL},
};

static const luaL_Reg op_props[] = {
	{"name", op_p_name},
	{"type", op_p_type},
	{"device", op_p_device},
	{"graph", op_p_graph},
	{"inputs", op_p_inputs},
	{"outputs", op_p_outputs},
	{"control_inputs", op_p_control_inputs},
	{"frame", op_p_frame},
	{"origins", op_p_origins},
	{NULL, NULL},
};

void lge_open_op(lua_State *L)
{
	/* the op class: the metatable of every graph's op metatable */
	lge_newtype(L, LGE_OPCLASS, NULL, NULL);
	lua_pop(L, 1);
	lge_newtype(L, LGE_OP, op_meta, op_methods);
	lua_pop(L, 1);
	lge_newprops(L, LGE_OP, op_props, "an op");
	lua_pop(L, 1);
}
