/*
 * l_checkpoint.c: the checkpoint reader userdata (gerewrite.checkpoint)
 * over lib/base/bundle.h, ge.checkpoint.open / write, g:checkpoint() and
 * ge.freeze (lib/variables/checkpoint.h).
 *
 *   local r = assert(ge.checkpoint.open(path))  -- prefix, .index, dir
 *   for _, e in ipairs(r:list()) do print(e.name, e.dtype, e.shape) end
 *   local v = r:read("a")          -- a tensor value (gerewrite.value)
 *   ge.checkpoint.write(prefix, {w = v}, {copy_from = r,
 *                                         rename = {old = "new", x = false}})
 *   local frozen = assert(ge.freeze(g, {outputs = {"y"}}))
 *
 * Reading corrupt or missing files returns nil and a message naming the
 * file and the tensor; misuse (a bad argument) raises.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "variables/checkpoint.h"
#include "lge.h"
#include "formats/meta.h"
#include "variables/tf2.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

#define LGE_CHECKPOINT "gerewrite.checkpoint"

typedef struct lge_ckpt {
	ge_bundle *b;   /* NULL once closed */
	char *prefix;   /* malloc'd */
} lge_ckpt;

static int ck_close(lua_State *L)
{
	lge_ckpt *c = luaL_checkudata(L, 1, LGE_CHECKPOINT);
	if (c->b)
		ge_bundle_close(c->b);
	free(c->prefix);
	c->b = NULL;
	c->prefix = NULL;
	return 0;
}

static lge_ckpt *checkckpt(lua_State *L, int arg)
{
	lge_ckpt *c = luaL_checkudata(L, arg, LGE_CHECKPOINT);
	if (!c->b)
		luaL_error(L, "checkpoint is closed");
	return c;
}

/* [-0, +(1|3), m] Opens the bundle a user's path names and pushes the
 * reader, or lge_fail's nil, message and kind.  Returns the number
 * pushed. */
static int pushopen(lua_State *L, const char *path)
{
	char *prefix;
	ge_error err;
	if (ge_checkpoint_prefix(path, &prefix, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_ckpt *c = lua_newuserdatauv(L, sizeof *c, 0);
	c->b = NULL;
	c->prefix = prefix;
	luaL_setmetatable(L, LGE_CHECKPOINT);
	if (ge_bundle_open(prefix, &c->b, &err) != GE_OK) {
		lua_pop(L, 1); /* __gc frees the prefix */
		return lge_fail(L, &err);
	}
	return 1;
}

/* ge.checkpoint.open(path) -> reader | nil, err */
static int m_open(lua_State *L)
{
	return pushopen(L, luaL_checkstring(L, 1));
}

/* [-0, +1, m] An entry's metadata as a table. */
static void pushentry(lua_State *L, const ge_bundle_entry *e)
{
	lua_createtable(L, 0, 8);
	lua_pushlstring(L, e->name, e->name_len);
	lua_setfield(L, -2, "name");
	lge_pushdtype(L, e->dtype);
	lua_setfield(L, -2, "dtype");
	lge_pushdims(L, e->rank, e->dims);
	lua_setfield(L, -2, "shape");
	lua_pushinteger(L, e->shard);
	lua_setfield(L, -2, "shard");
	lua_pushinteger(L, (lua_Integer)e->offset);
	lua_setfield(L, -2, "offset");
	lua_pushinteger(L, (lua_Integer)e->size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)e->crc32c);
	lua_setfield(L, -2, "crc32c");
	lua_pushinteger(L, (lua_Integer)e->nslices);
	lua_setfield(L, -2, "slices");
}

/* r:list() -> list of entries (name, dtype, shape, ...) in name order */
static int ck_list(lua_State *L)
{
	lge_ckpt *c = checkckpt(L, 1);
	size_t n = ge_bundle_count(c->b);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		pushentry(L, ge_bundle_entry_at(c->b, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* Lookup by a Lua string, which may hold NULs like the keys of slices. */
static const ge_bundle_entry *find_entry(ge_bundle *b, const char *name,
					 size_t len)
{
	if (strlen(name) == len)
		return ge_bundle_find(b, name);
	size_t n = ge_bundle_count(b);
	for (size_t i = 0; i < n; i++) {
		const ge_bundle_entry *e = ge_bundle_entry_at(b, i);
		if (e->name_len == len && !memcmp(e->name, name, len))
			return e;
	}
	return NULL;
}

/* r:entry(name) -> entry | nil */
static int ck_entry(lua_State *L)
{
	lge_ckpt *c = checkckpt(L, 1);
	size_t len;
	const char *name = luaL_checklstring(L, 2, &len);
	const ge_bundle_entry *e = find_entry(c->b, name, len);
	if (!e)
		return 0;
	pushentry(L, e);
	return 1;
}

/* r:read(name) -> value | nil, err */
static int ck_read(lua_State *L)
{
	lge_ckpt *c = checkckpt(L, 1);
	size_t len;
	const char *name = luaL_checklstring(L, 2, &len);
	const ge_bundle_entry *e = find_entry(c->b, name, len);
	ge_error err;
	if (!e) {
		ge_err(&err, GE_ENOTFOUND, "%s: no tensor '%s'",
		       ge_bundle_index_path(c->b), name);
		return lge_fail(L, &err);
	}
	ge_buf *buf = lge_newbuf(L);
	if (ge_bundle_read_tensorproto(c->b, e, buf, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_pushvaluebytes(L, buf->data, buf->len);
	return 1;
}

/* r:names() -> list of the tensor names, in order */
static int ck_names(lua_State *L)
{
	lge_ckpt *c = checkckpt(L, 1);
	size_t n = ge_bundle_count(c->b);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		const ge_bundle_entry *e = ge_bundle_entry_at(c->b, i);
		lua_pushlstring(L, e->name, e->name_len);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int ck_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ge_bundle_count(checkckpt(L, 1)->b));
	return 1;
}

static int ck_tostring(lua_State *L)
{
	lge_ckpt *c = luaL_checkudata(L, 1, LGE_CHECKPOINT);
	if (!c->b) {
		lua_pushliteral(L, "checkpoint (closed)");
		return 1;
	}
	luaL_Buffer b;
	size_t n = ge_bundle_count(c->b);
	char tmp[64];
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "checkpoint ");
	lge_addquoted(&b, c->prefix);
	snprintf(tmp, sizeof tmp, " (%zu tensor%s)", n, n == 1 ? "" : "s");
	luaL_addstring(&b, tmp);
	luaL_pushresult(&b);
	return 1;
}

static int ck_index(lua_State *L)
{
	lge_ckpt *c = luaL_checkudata(L, 1, LGE_CHECKPOINT);
	const char *k = lua_tostring(L, 2);
	if (k && c->b) {
		if (!strcmp(k, "prefix")) {
			lua_pushstring(L, c->prefix);
			return 1;
		}
		if (!strcmp(k, "index")) {
			lua_pushstring(L, ge_bundle_index_path(c->b));
			return 1;
		}
		if (!strcmp(k, "shards")) {
			int n = ge_bundle_num_shards(c->b);
			lua_createtable(L, n, 0);
			for (int i = 0; i < n; i++) {
				lua_pushstring(L, ge_bundle_shard_path(c->b, i));
				lua_rawseti(L, -2, i + 1);
			}
			return 1;
		}
	}
	lge_pushmethod(L, 1, 2);
	return 1;
}

/* ------------------------------------------------------------ write */

struct wval {
	const char *name;  /* anchored in the values table */
	const Tensorflow__TensorProto *t;
};

static int cmp_wval(const void *a, const void *b)
{
	return strcmp(((const struct wval *)a)->name,
		      ((const struct wval *)b)->name);
}

static int wval_has(const struct wval *v, size_t n, const char *name)
{
	struct wval key = {name, NULL};
	return bsearch(&key, v, n, sizeof *v, cmp_wval) != NULL;
}

/* ge.checkpoint.write(prefix, {name = value, ...}
 *                     [, {copy_from = reader, rename = {old = new|false}}])
 *   -> true | nil, err
 * Writes a one-shard bundle atomically: the tensors of copy_from (renamed,
 * or dropped where rename says false), then the values given, which win
 * over a copied tensor of the same name.  Everything is checked before
 * anything is written; on failure nothing at prefix changes. */
static int m_write(lua_State *L)
{
	static const char *const known[] = {"copy_from", "rename", NULL};
	const char *prefix = luaL_checkstring(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	lge_checkopts(L, 3, known);
	lua_settop(L, 3);

	/* the values, checked and sorted by name */
	size_t nv = 0, capv = 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			return luaL_error(L, "checkpoint values must be keyed "
					     "by tensor name (got a %s key)",
					  luaL_typename(L, -2));
		if (!luaL_testudata(L, -1, LGE_VALUE))
			return luaL_error(L, "checkpoint value '%s' must be a "
					     "tensor value (got %s)",
					  lua_tostring(L, -2),
					  luaL_typename(L, -1));
		lua_pop(L, 1);
		capv++;
	}
	struct wval *vals = lua_newuserdatauv(L, (capv ? capv : 1) * sizeof *vals,
					      0);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		vals[nv].name = lua_tostring(L, -2);
		vals[nv].t = lge_checkvalue(L, lua_gettop(L));
		nv++;
		lua_pop(L, 1);
	}
	qsort(vals, nv, sizeof *vals, cmp_wval);

	/* copy_from and its renames */
	ge_bundle *src = NULL;
	const char **newname = NULL;
	size_t nsrc = 0;
	if (!lua_isnil(L, 3)) {
		if (lua_getfield(L, 3, "copy_from") != LUA_TNIL) {
			lge_ckpt *c = luaL_testudata(L, -1, LGE_CHECKPOINT);
			if (!c)
				return luaL_error(L, "option 'copy_from' must be "
						     "a checkpoint reader");
			if (!c->b)
				return luaL_error(L, "option 'copy_from': "
						     "checkpoint is closed");
			src = c->b;
		}
		/* the reader stays referenced by the options table */
		lua_pop(L, 1);
		int rt = lua_getfield(L, 3, "rename");
		if (rt != LUA_TNIL && rt != LUA_TTABLE)
			return luaL_error(L, "option 'rename' must be a table");
		if (rt == LUA_TTABLE && !src)
			return luaL_error(L, "option 'rename' needs 'copy_from'");
		int ren = lua_gettop(L);
		if (src) {
			nsrc = ge_bundle_count(src);
			newname = lua_newuserdatauv(
				L, (nsrc ? nsrc : 1) * sizeof *newname, 0);
			for (size_t i = 0; i < nsrc; i++) {
				const ge_bundle_entry *e =
					ge_bundle_entry_at(src, i);
				newname[i] = e->name;
			}
		}
		if (rt == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, ren)) {
				size_t kl;
				if (lua_type(L, -2) != LUA_TSTRING)
					return luaL_error(L, "option 'rename': "
							     "keys must be names");
				const char *old = lua_tolstring(L, -2, &kl);
				const ge_bundle_entry *e =
					find_entry(src, old, kl);
				if (!e)
					return luaL_error(
						L, "option 'rename': no tensor "
						   "'%s' in %s",
						old, ge_bundle_index_path(src));
				size_t i = (size_t)(e - ge_bundle_entry_at(src, 0));
				if (lua_type(L, -1) == LUA_TSTRING)
					newname[i] = lua_tostring(L, -1);
				else if (lua_type(L, -1) == LUA_TBOOLEAN &&
					 !lua_toboolean(L, -1))
					newname[i] = NULL;
				else
					return luaL_error(
						L, "option 'rename': '%s' must map "
						   "to a name or false", old);
				lua_pop(L, 1);
			}
		}
	}

	/* no Lua error from here on: the writer must be finished or
	 * aborted */
	ge_error err;
	ge_bundle_writer *w;
	if (ge_bundle_writer_open(prefix, &w, &err) != GE_OK)
		return lge_fail(L, &err);
	int rc = GE_OK;
	for (size_t i = 0; i < nsrc && !rc; i++) {
		const ge_bundle_entry *e = ge_bundle_entry_at(src, i);
		if (!newname[i] || wval_has(vals, nv, newname[i]))
			continue;
		rc = ge_bundle_writer_copy(w, src, e,
					   newname[i] == e->name ? NULL
								 : newname[i],
					   &err);
	}
	for (size_t i = 0; i < nv && !rc; i++)
		rc = ge_bundle_writer_add_tensorproto(w, vals[i].name,
						      vals[i].t, &err);
	if (rc) {
		ge_bundle_writer_abort(w);
		ge_err_prefix(&err, "%s", prefix);
		return lge_fail(L, &err);
	}
	if (ge_bundle_writer_finish(w, &err) != GE_OK)
		return lge_fail(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

/* ------------------------------------------------------------ graphs */

/* [-0, +(1|2), m] The reader of a graph's own checkpoint: a SavedModel's
 * variables/, or the bundle next to a .meta file. */
static int pushgraphckpt(lua_State *L, ge_graph *g)
{
	const char *dir = ge_graph_savedmodel_dir(g);
	if (dir)
		return pushopen(L, dir);
	const char *name = ge_graph_name(g);
	if (name && *name)
		return pushopen(L, name);
	ge_error err;
	ge_err(&err, GE_ENOTFOUND,
	       "graph: not loaded from a file, so it has no checkpoint");
	return lge_fail(L, &err);
}

/* g:checkpoint() -> reader | nil, err */
static int g_checkpoint(lua_State *L)
{
	return pushgraphckpt(L, lge_checkgraph(L, 1)->g);
}

/* [-0, +1, v] Appends to the list at top the op names an outputs item
 * at idx stands for (an op, a tensor, a name, or a list of them). */
static void add_output(lua_State *L, int list, int idx, lge_graph *G,
		       int depth)
{
	idx = lua_absindex(L, idx);
	lua_Integer n = (lua_Integer)lua_rawlen(L, list);
	if (lua_type(L, idx) == LUA_TTABLE && !lua_getmetatable(L, idx)) {
		if (depth > 0)
			luaL_error(L, "option 'outputs': nested lists");
		lua_Integer k = (lua_Integer)lua_rawlen(L, idx);
		for (lua_Integer i = 1; i <= k; i++) {
			lua_rawgeti(L, idx, i);
			add_output(L, list, -1, G, depth + 1);
			lua_pop(L, 1);
		}
		return;
	}
	ge_opid op;
	const char *why = lge_toopin(L, idx, G, &op);
	if (why) {
		ge_tref t;
		lua_pop(L, 1);
		why = lge_totensorin(L, idx, G, 1, &t);
		if (why)
			luaL_error(L, "option 'outputs': %s", why);
		op = t.op;
	}
	lua_pushstring(L, ge_op_name(G->g, op));
	lua_rawseti(L, list, n + 1);
}

/* Outputs of every signature, by op name, for a graph without explicit
 * outputs. */
static void signature_outputs(lua_State *L, int list, ge_graph *g)
{
	size_t ns = ge_signature_count(g);
	for (size_t i = 0; i < ns; i++) {
		const char *key = ge_signature_name(g, i);
		/* TensorFlow's own entries (__saved_model_init_op) name init
		 * ops, not outputs */
		if (!key || !strncmp(key, "__", 2))
			continue;
		Tensorflow__SignatureDef *s = ge_signature_get(g, key);
		for (size_t k = 0; s && k < s->n_outputs; k++) {
			Tensorflow__TensorInfo *ti = s->outputs[k]->value;
			if (!ti || ti->encoding_case !=
					   TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
				continue;
			ge_tref t;
			if (ge_graph_find_tensor(g, ti->name, &t) != GE_OK ||
			    !strcmp(ge_op_type(g, t.op), "NoOp"))
				continue;
			lua_pushstring(L, ge_op_name(g, t.op));
			lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
		}
	}
}

/* The TF2 path of ge.freeze: signature `signature` (default
 * serving_default) inlined and frozen (lib/variables/tf2.h), named by the
 * signature's keys or, with tensor_names, by its tensor names.  A SavedModel without
 * variables gives no reader: the freeze then says which variables the
 * signature needs. */
static int freeze_tf2(lua_State *L, ge_graph *g, int clear_devices)
{
	ge_tf2_freeze_opts to = {lge_optfield(L, 2, "signature"),
				 clear_devices, 0};
	lua_getfield(L, 2, "tensor_names");
	to.tensor_names = lua_toboolean(L, -1);
	lua_pop(L, 1);
	int t = lua_getfield(L, 2, "checkpoint"); /* 3 */
	if (t == LUA_TSTRING) {
		const char *path = lua_tostring(L, -1);
		lua_pop(L, 1);
		if (pushopen(L, path) != 1)
			return 2;
	} else if (t == LUA_TNIL) {
		const char *dir = ge_graph_savedmodel_dir(g);
		char *prefix = NULL;
		ge_error e;
		int rc = dir ? ge_checkpoint_prefix(dir, &prefix, &e)
			     : GE_ENOTFOUND;
		free(prefix);
		if (rc != GE_ENOTFOUND) {
			lua_pop(L, 1);
			if (pushgraphckpt(L, g) != 1)
				return 2;
		}
	} else if (!luaL_testudata(L, -1, LGE_CHECKPOINT)) {
		return luaL_error(L, "option 'checkpoint' must be a reader or "
				     "a path (got %s)", luaL_typename(L, -1));
	}
	ge_bundle *b = lua_isnil(L, 3) ? NULL : checkckpt(L, 3)->b;
	ge_graph *h = NULL;
	ge_error err;
	if (ge_tf2_freeze(g, b, &to, &h, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_pushgraph(L, h);
	return 1;
}

/* ge.freeze(g, {outputs=, checkpoint=, clear_devices=}) -> graph | nil, err
 *
 * Returns a new graph, a plain GraphDef (no MetaGraphDef around it, as
 * freeze_graph writes): g is not changed.  outputs lists ops, tensors or
 * names (default: the outputs of g's signatures); checkpoint is a reader
 * or a path (default: g:checkpoint()); clear_devices defaults to true as
 * in freeze_graph.  A TF2 SavedModel given without outputs freezes one
 * signature, {signature=} (freeze_tf2). */
static int m_freeze(lua_State *L)
{
	static const char *const known[] = {"outputs", "checkpoint",
					    "clear_devices", "signature",
					    "tensor_names", NULL};
	lge_graph *G = lge_checkgraph(L, 1);
	ge_graph *g = G->g;
	if (!lua_isnoneornil(L, 2))
		lge_checkopts(L, 2, known);
	else {
		lua_settop(L, 1);
		lua_newtable(L);
	}
	lua_settop(L, 2);
	ge_freeze_opts fo = {1, NULL};
	if (lua_getfield(L, 2, "clear_devices") != LUA_TNIL)
		fo.clear_devices = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, 2, "outputs") == LUA_TNIL &&
	    ge_is_tf2_savedmodel(g)) {
		lua_pop(L, 1);
		return freeze_tf2(L, g, fo.clear_devices);
	}
	lua_pop(L, 1);

	lua_newtable(L); /* 3: output op names */
	if (lua_getfield(L, 2, "outputs") != LUA_TNIL)
		add_output(L, 3, -1, G, 0);
	else
		signature_outputs(L, 3, g);
	lua_pop(L, 1);
	if (lua_rawlen(L, 3) == 0)
		return luaL_error(L, "ge.freeze: no outputs (give option "
				     "'outputs'; the graph has no signature "
				     "outputs)");

	/* 4: the reader */
	int t = lua_getfield(L, 2, "checkpoint");
	if (t == LUA_TSTRING) {
		const char *path = lua_tostring(L, -1);
		lua_pop(L, 1);
		int n = pushopen(L, path);
		if (n != 1)
			return n;
	} else if (t == LUA_TNIL) {
		lua_pop(L, 1);
		int n = pushgraphckpt(L, g);
		if (n != 1)
			return n;
	} else if (!luaL_testudata(L, -1, LGE_CHECKPOINT)) {
		return luaL_error(L, "option 'checkpoint' must be a reader or "
				     "a path (got %s)", luaL_typename(L, -1));
	}
	lge_ckpt *c = checkckpt(L, 4);

	/* the copy: a GraphDef of its own */
	ge_buf *bytes = lge_newbuf(L);
	ge_graph_encode_graphdef(g, bytes);
	ge_graph *h = NULL;
	ge_error err;
	if (ge_graph_parse_graphdef(bytes->data, bytes->len, ge_graph_name(g),
				    &h, &err) != GE_OK)
		return lge_fail(L, &err);
	ge_buf_free(bytes);
	lge_pushgraph(L, h); /* owns h from here */
	int hidx = lua_gettop(L);
	size_t n = lua_rawlen(L, 3);
	ge_tref *outs = lua_newuserdatauv(L, n * sizeof *outs, 0);
	for (size_t i = 0; i < n; i++) {
		lua_rawgeti(L, 3, (lua_Integer)i + 1);
		outs[i].op = ge_graph_find(h, lua_tostring(L, -1));
		outs[i].index = GE_CONTROL;
		lua_pop(L, 1);
	}
	fo.plan = ge_graph_checkpoint_plan(lge_checkgraph(L, 1)->g);
	int rc = ge_freeze(h, c->b, outs, n, &fo, &err);
	if (rc != GE_OK)
		return lge_fail(L, &err);
	lua_pushvalue(L, hidx);
	return 1;
}

void lge_open_checkpoint(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{"__index", ck_index},
		{"__len", ck_len},
		{"__tostring", ck_tostring},
		{"__gc", ck_close},
		{"__close", ck_close},
		{NULL, NULL},
	};
	static const luaL_Reg methods[] = {
		{"list", ck_list},
		{"names", ck_names},
		{"entry", ck_entry},
		{"read", ck_read},
		{"close", ck_close},
		{NULL, NULL},
	};
	static const luaL_Reg funcs[] = {
		{"open", m_open},
		{"write", m_write},
		{NULL, NULL},
	};
	static const luaL_Reg graph_methods[] = {
		{"checkpoint", g_checkpoint},
		{NULL, NULL},
	};
	int mod = lua_gettop(L);
	lge_newtype(L, LGE_CHECKPOINT, meta, methods);
	lua_pop(L, 1);
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pop(L, 1);
	luaL_newlib(L, funcs);
	lua_setfield(L, mod, "checkpoint");
	lua_pushcfunction(L, m_freeze);
	lua_setfield(L, mod, "freeze");
}
