/*
 * l_module.c: the "gerewrite" module table (ge.load, ge.graph, ge.parse,
 * ge.type), the plumbing shared by the binding files, and the loader of
 * the Lua files built into the program.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lge.h"

/* ------------------------------------------------------------ plumbing */

static int buf_gc(lua_State *L)
{
	ge_buf_free(lua_touserdata(L, 1));
	return 0;
}

ge_buf *lge_newbuf(lua_State *L)
{
	ge_buf *b = lua_newuserdatauv(L, sizeof *b, 0);
	b->data = NULL;
	b->len = b->cap = 0;
	if (luaL_newmetatable(L, "gerewrite.buf")) {
		lua_pushcfunction(L, buf_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return b;
}

int lge_raise(lua_State *L, const ge_error *err)
{
	return luaL_error(L, "%s", err->msg);
}

const char *lge_errkind(int code)
{
	switch (code) {
	case GE_EIO:
		return "io";
	case GE_EFORMAT:
		return "format";
	case GE_ENOTFOUND:
		return "notfound";
	default:
		return "invalid";
	}
}

int lge_fail(lua_State *L, const ge_error *err)
{
	luaL_pushfail(L);
	lua_pushstring(L, err->msg);
	lua_pushstring(L, lge_errkind(err->code));
	return 3;
}

void lge_addquoted(luaL_Buffer *b, const char *s)
{
	luaL_addchar(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			luaL_addchar(b, '\\');
			luaL_addchar(b, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\x%02x", c);
			luaL_addstring(b, esc);
		} else {
			luaL_addchar(b, (char)c);
		}
	}
	luaL_addchar(b, '"');
}

/* The metatables of the types checked on every call, remembered when
 * made: luaL_testudata looks a metatable up by name each time.  Objects
 * whose metatable is not remembered (another interpreter's) take the slow
 * path.  An op's metatable is its graph's (lge.h), whose own metatable is
 * the op class, remembered the same way. */
static const char *const fast_names[] = {LGE_GRAPH, LGE_TENSOR};
#define N_FAST (sizeof fast_names / sizeof *fast_names)
static const void *fast_mt[N_FAST], *opclass_mt;

/* Whether the metatable at the top is an op metatable (its metatable
 * the op class). */
static int is_opmeta(lua_State *L)
{
	if (!lua_getmetatable(L, -1))
		return 0;
	int is = lua_topointer(L, -1) == opclass_mt;
	if (!is) {
		luaL_getmetatable(L, LGE_OPCLASS);
		is = lua_rawequal(L, -1, -2);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return is;
}

void *lge_testudata(lua_State *L, int arg, const char *tname)
{
	void *p = lua_touserdata(L, arg);
	if (!p || !lua_getmetatable(L, arg))
		return NULL;
	const void *mt = lua_topointer(L, -1);
	for (size_t i = 0; i < N_FAST; i++)
		if (fast_mt[i] == mt) {
			lua_pop(L, 1);
			return fast_names[i] == tname ||
					       !strcmp(fast_names[i], tname)
				       ? p
				       : NULL;
		}
	int op = is_opmeta(L);
	lua_pop(L, 1);
	if (op)
		return !strcmp(tname, LGE_OP) ? p : NULL;
	return luaL_testudata(L, arg, tname);
}

void *lge_checkudata(lua_State *L, int arg, const char *tname)
{
	void *p = lge_testudata(L, arg, tname);
	if (!p)
		luaL_typeerror(L, arg, tname);
	return p;
}

void lge_newtype(lua_State *L, const char *tname, const luaL_Reg *meta,
		 const luaL_Reg *methods)
{
	luaL_newmetatable(L, tname);
	for (size_t i = 0; i < N_FAST; i++)
		if (!strcmp(fast_names[i], tname))
			fast_mt[i] = lua_topointer(L, -1);
	if (!strcmp(tname, LGE_OPCLASS))
		opclass_mt = lua_topointer(L, -1);
	if (meta)
		luaL_setfuncs(L, meta, 0);
	if (lua_getfield(L, -1, "__methods") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, -3, "__methods");
	}
	if (methods)
		luaL_setfuncs(L, methods, 0);
	lua_pop(L, 1);
}

/* The names of the table at idx nearest to key (within a third of its
 * length, at least 2 edits, or sharing a prefix of 3), into near: up to
 * 3, nearest first. */
struct nearname {
	const char *s;
	size_t d;
};

static void nearest_in(lua_State *L, int idx, const char *key,
		       struct nearname *near, int *n)
{
	size_t kn = strlen(key), limit = kn / 3 > 2 ? kn / 3 : 2;
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			continue;
		const char *c = lua_tostring(L, -1); /* a key: stays alive */
		size_t cn = strlen(c);
		size_t d = ge_edit_distance(key, kn, c, cn);
		int pre = kn >= 3 && cn >= 3 &&
			  !strncmp(key, c, kn < cn ? kn : cn);
		if (d > limit && !pre)
			continue;
		if (pre && d > limit)
			d = limit + 1;
		int i = *n < 3 ? (*n)++ : 3;
		if (i == 3 && d >= near[2].d)
			continue;
		if (i == 3)
			i = 2;
		while (i > 0 && (near[i - 1].d > d ||
				 (near[i - 1].d == d &&
				  strcmp(near[i - 1].s, c) > 0))) {
			near[i] = near[i - 1];
			i--;
		}
		near[i] = (struct nearname){c, d};
	}
}

int lge_nokey(lua_State *L, int obj, int key, const char *what, int props,
	      int methods, const char *extra)
{
	obj = lua_absindex(L, obj);
	key = lua_absindex(L, key);
	if (lua_type(L, key) != LUA_TSTRING) {
		lua_pushnil(L);
		return 1;
	}
	const char *k = lua_tostring(L, key);
	struct nearname near[3];
	int n = 0;
	if (props)
		nearest_in(L, props, k, near, &n);
	if (methods)
		nearest_in(L, methods, k, near, &n);
	if (extra) {
		lua_newtable(L);
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, extra);
		nearest_in(L, -1, k, near, &n);
	}
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_where(L, 1);
	luaL_addvalue(&b);
	lua_pushfstring(L, "no method or field '%s' in %s", k, what);
	luaL_addvalue(&b);
	for (int i = 0; i < n; i++) {
		luaL_addstring(&b, i ? (i == n - 1 ? " or " : ", ")
				     : "; did you mean ");
		luaL_addstring(&b, near[i].s);
	}
	if (n)
		luaL_addchar(&b, '?');
	luaL_pushresult(&b);
	return lua_error(L);
}

/* upvalue 1: the property getters, 2: the methods, 3: what the type is
 * called in messages ("an op") */
static int props_index(lua_State *L)
{
	lua_settop(L, 2);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) == LUA_TFUNCTION) {
		lua_CFunction get = lua_tocfunction(L, -1);
		lua_settop(L, 2);
		return get(L);
	}
	lua_pop(L, 1);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
		return 1;
	return lge_nokey(L, 1, 2, lua_tostring(L, lua_upvalueindex(3)),
			 lua_upvalueindex(1), lua_upvalueindex(2), NULL);
}

/* The getters live in the registry (under "<tname>.props") rather than in
 * the metatable, which scripts can see. */
void lge_newprops(lua_State *L, const char *tname, const luaL_Reg *props,
		  const char *what)
{
	lge_newtype(L, tname, NULL, NULL);
	lua_pushfstring(L, "%s.props", tname);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, lua_tostring(L, -1));
	lua_remove(L, -2);
	luaL_setfuncs(L, props, 0);
	lua_getfield(L, -2, "__methods");
	lua_pushstring(L, what);
	lua_pushcclosure(L, props_index, 3);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

int lge_pushmethod(lua_State *L, int obj, int key)
{
	key = lua_absindex(L, key);
	if (!lua_getmetatable(L, obj)) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	if (lua_getfield(L, -1, "__methods") != LUA_TTABLE) {
		lua_pop(L, 2);
		lua_pushnil(L);
		return LUA_TNIL;
	}
	lua_pushvalue(L, key);
	int t = lua_rawget(L, -2);
	lua_replace(L, -3);
	lua_pop(L, 1);
	return t;
}

void lge_checkopts(lua_State *L, int idx, const char *const *known)
{
	if (idx == 0 || lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int found = 0;
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING)
			for (const char *const *k = known; *k && !found; k++)
				found = strcmp(*k, lua_tostring(L, -1)) == 0;
		if (!found) {
			lua_pushfstring(L, "unknown option '%s'",
					luaL_tolstring(L, -1, NULL));
			lua_error(L);
		}
	}
}

int lge_callable(lua_State *L, int idx)
{
	if (lua_type(L, idx) == LUA_TFUNCTION)
		return 1;
	if (!luaL_getmetafield(L, idx, "__call"))
		return 0;
	lua_pop(L, 1);
	return 1;
}

const char *lge_optfield(lua_State *L, int idx, const char *k)
{
	int t = lua_getfield(L, idx, k);
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return NULL;
	}
	if (t != LUA_TSTRING)
		luaL_error(L, "field '%s' must be a string (got %s)", k,
			   luaL_typename(L, -1));
	/* The table still holds the string, so the pointer stays valid. */
	const char *s = lua_tostring(L, -1);
	lua_pop(L, 1);
	return s;
}

/* ------------------------------------------------------------ embedded Lua */

int lge_loadlua(lua_State *L, const char *path)
{
	const char *dir = getenv("GEREWRITE_LUA_DIR");
	if (dir && *dir) {
		const char *full = lua_pushfstring(L, "%s/%s", dir, path);
		int st = luaL_loadfilex(L, full, "t");
		lua_remove(L, -2);
		return st;
	}
	for (const struct lge_embedded *e = lge_embedded; e->path; e++) {
		if (strcmp(e->path, path) != 0)
			continue;
		lua_pushfstring(L, "@<builtin>/%s", path);
		int st = luaL_loadbufferx(L, (const char *)e->data, e->len,
					  lua_tostring(L, -1), "t");
		lua_remove(L, -2);
		return st;
	}
	lua_pushfstring(L, "no built-in Lua file '%s'", path);
	return LUA_ERRFILE;
}

static int embedded_loader(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *path = lua_tostring(L, lua_upvalueindex(1));
	if (lge_loadlua(L, path) != LUA_OK)
		return luaL_error(L, "error loading module '%s': %s", name,
				  lua_tostring(L, -1));
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
	return 1;
}

void lge_preload(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_gerewrite);
	lua_setfield(L, -2, "gerewrite");
	for (const struct lge_embedded *e = lge_embedded; e->path; e++) {
		size_t n = strlen(e->path);
		/* gerewrite.lua is the prelude of the C module, not a module */
		if (!strcmp(e->path, "gerewrite.lua") || n < 5 ||
		    strcmp(e->path + n - 4, ".lua") != 0)
			continue;
		luaL_Buffer b;
		luaL_buffinit(L, &b);
		for (size_t i = 0; i < n - 4; i++)
			luaL_addchar(&b, e->path[i] == '/' ? '.' : e->path[i]);
		luaL_pushresult(&b);
		lua_pushstring(L, e->path);
		lua_pushcclosure(L, embedded_loader, 1);
		lua_settable(L, -3);
	}
	lua_pop(L, 1);
}

/* ------------------------------------------------------------ module */

ge_format lge_checkformat(lua_State *L, int idx)
{
	if (lua_isnoneornil(L, idx))
		return GE_FMT_AUTO;
	if (lua_type(L, idx) != LUA_TSTRING)
		luaL_error(L, "a format must be a string (got %s)",
			   luaL_typename(L, idx));
	const char *name = lua_tostring(L, idx);
	ge_format f;
	if (ge_format_from_name(name, &f) != GE_OK)
		luaL_error(L,
			   "unknown format '%s' (expected graphdef, "
			   "graphdef-text, meta, meta-text, savedmodel, "
			   "savedmodel-text, tfjs or auto)",
			   name);
	return f;
}

/* [-0, +0, v] Reads {format=, tags=} at idx into o; tags may be a string
 * ("serve,gpu") or a list of strings, left on the stack at the top. */
static void loadopts(lua_State *L, int idx, ge_load_opts *o)
{
	memset(o, 0, sizeof *o);
	o->format = GE_FMT_AUTO;
	static const char *const known[] = {"format", "check", "tags", NULL};
	if (lua_isnoneornil(L, idx))
		return;
	lge_checkopts(L, idx, known);
	lua_getfield(L, idx, "format");
	o->format = lge_checkformat(L, -1);
	lua_pop(L, 1);
	/* check=false loads a graph whose attrs TensorFlow would refuse */
	if (lua_getfield(L, idx, "check") != LUA_TNIL)
		o->no_check = !lua_toboolean(L, -1);
	lua_pop(L, 1);
	int t = lua_getfield(L, idx, "tags");
	if (t == LUA_TSTRING) {
		o->tags = lua_tostring(L, -1); /* stays on the stack */
	} else if (t == LUA_TTABLE) {
		luaL_Buffer b;
		int tbl = lua_gettop(L);
		lua_Integer n = luaL_len(L, tbl);
		luaL_buffinit(L, &b);
		for (lua_Integer i = 1; i <= n; i++) {
			if (lua_geti(L, tbl, i) != LUA_TSTRING)
				luaL_error(L, "option 'tags' must list strings");
			if (i > 1)
				luaL_addchar(&b, ',');
			luaL_addvalue(&b);
		}
		luaL_pushresult(&b);
		o->tags = lua_tostring(L, -1);
	} else if (t != LUA_TNIL) {
		luaL_error(L, "option 'tags' must be a string or a list (got %s)",
			   luaL_typename(L, -1));
	}
}

/* A graph's memory is invisible to Lua's collector, which sees a small
 * userdata: a script loading models in a loop would pile up graphs before
 * a collection runs.  Counting the model's bytes as Lua allocations makes
 * the collector keep pace. */
static void gc_pressure(lua_State *L, size_t bytes)
{
	size_t kb = bytes / 1024;
	if (kb > 0)
		lua_gc(L, LUA_GCSTEP, kb > INT32_MAX ? INT32_MAX : (int)kb);
}

/* ge.load(path [, {format=, tags=}]) -> graph | nil, err */
static int m_load(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	ge_load_opts o;
	loadopts(L, 2, &o);
	/* the file's size, or a SavedModel's saved_model.pb */
	struct stat st;
	size_t size = 0;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		size = (size_t)st.st_size;
	else if (stat(lua_pushfstring(L, "%s/saved_model.pb", path), &st) == 0)
		size = (size_t)st.st_size;
	lua_settop(L, 2);
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(path, &o, &g, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_pushgraph(L, g);
	gc_pressure(L, size);
	return 1;
}

/* ge.graph() -> a new empty graph */
static int m_graph(lua_State *L)
{
	lge_pushgraph(L, ge_graph_new());
	return 1;
}

/* ge.parse(bytes [, format [, {tags=}]]) -> graph | nil, err */
static int m_parse(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	ge_format f = lge_checkformat(L, 2);
	ge_load_opts o;
	loadopts(L, 3, &o);
	o.format = f;
	ge_graph *g = NULL;
	ge_error err;
	if (ge_parse((const uint8_t *)s, len, f, "<string>", &o, &g, &err) !=
	    GE_OK)
		return lge_fail(L, &err);
	lge_pushgraph(L, g);
	gc_pressure(L, len);
	return 1;
}

/* ge.type(x) -> "graph" | "op" | "tensor" | "value" | "shape" | "func" |
 * nil: what kind of gerewrite object x is. */
static int m_type(lua_State *L)
{
	/* every type of the module is named "gerewrite.<kind>" (luaL's
	 * __name), so one rule covers graphs, ops, views, patterns, ... */
	luaL_checkany(L, 1);
	if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
		const char *n = lua_tostring(L, -1);
		if (!strncmp(n, "gerewrite.", 10)) {
			lua_pushstring(L, n + 10);
			return 1;
		}
	}
	luaL_pushfail(L);
	return 1;
}

/* ge.op_name(s) -> the op a tensor name names: "a/b" of "a/b", "a/b:1",
 * "^a/b" and "^a/b:1" (ge_op_name_of).  A malformed name raises. */
static int m_op_name(lua_State *L)
{
	size_t n, off, len;
	const char *s = luaL_checklstring(L, 1, &n);
	if (ge_op_name_of(s, n, &off, &len))
		return luaL_argerror(L, 1, lua_pushfstring(L,
				     "malformed tensor name '%s'", s));
	lua_pushlstring(L, s + off, len);
	return 1;
}

/* ge.split_tensor_name(s) -> name, index: "a/b:1" gives "a/b", 1, "a/b"
 * gives "a/b", 0 and "^a/b" gives "a/b", -1 (a control input), by
 * ge_parse_input.  A malformed name raises. */
static int m_split_tensor_name(lua_State *L)
{
	size_t n, off, len;
	int32_t index;
	const char *s = luaL_checklstring(L, 1, &n);
	if (ge_parse_input(s, n, &off, &len, &index))
		return luaL_argerror(L, 1, lua_pushfstring(L,
				     "malformed tensor name '%s'", s));
	lua_pushlstring(L, s + off, len);
	lua_pushinteger(L, index);
	return 2;
}

static const luaL_Reg funcs[] = {
	{"load", m_load},
	{"graph", m_graph},
	{"parse", m_parse},
	{"type", m_type},
	{"op_name", m_op_name},
	{"split_tensor_name", m_split_tensor_name},
	{NULL, NULL},
};

/* Binding files beyond the core types (graph_editor's modules, match,
 * ...) register here: each opener runs once with the module table at the
 * top of the stack, after the core types and before the Lua prelude, and
 * must leave the stack as it found it.  Declare them in lge.h. */
static void (*const openers[])(lua_State *L) = {
	lge_open_editor,
	lge_open_meta,
	lge_open_transform,
	lge_open_match,
	lge_open_variables,
	lge_open_checkpoint,
	lge_open_opmatcher,
	lge_open_func,
	lge_open_inline,
	lge_open_shapes,
	lge_open_fold,
	lge_open_insert,
	lge_open_run,
	NULL,
};

int luaopen_gerewrite(lua_State *L)
{
	static const struct {
		const char *tname, *field;
	} method_tables[] = {
		{LGE_GRAPH, "Graph"},
		{LGE_OP, "Op"},
		{LGE_TENSOR, "Tensor"},
		{LGE_VALUE, "Value"},
	};
	lge_open_graph(L);
	lge_open_op(L);
	lge_open_tensor(L);
	lge_open_attr(L);
	luaL_newlib(L, funcs);
	luaL_setfuncs(L, lge_attr_funcs, 0);
	lua_pushliteral(L, PACKAGE_VERSION);
	lua_setfield(L, -2, "version");
	/* The method tables, so Lua code can add methods to every object. */
	for (size_t i = 0; i < sizeof method_tables / sizeof method_tables[0];
	     i++) {
		luaL_getmetatable(L, method_tables[i].tname);
		lua_getfield(L, -1, "__methods");
		lua_setfield(L, -3, method_tables[i].field);
		lua_pop(L, 1);
	}
	for (size_t i = 0; openers[i]; i++) {
		int top = lua_gettop(L);
		openers[i](L);
		lua_settop(L, top);
	}
	if (lge_loadlua(L, "gerewrite.lua") != LUA_OK)
		return lua_error(L);
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);
	return 1;
}
