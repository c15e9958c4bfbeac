/*
 * l_meta.c: a MetaGraphDef's collections and signatures on graphs
 * (lib/formats/meta.h).
 *
 *   g:collection_names()          -> {name, ...} in file order
 *   g:collection(name)            -> list of values, or nil
 *   g:add_to_collection(name, x)  x an op, tensor, string, number, or a
 *                                 list of those
 *   g:signature_names()           -> {name, ...}
 *   g:signature(name)             -> {method_name=, inputs={k=t}, outputs={k=t}}
 *   g:set_signature(name, {inputs=, outputs=, method_name=})
 *   g:remove_signature(name)
 *   g:rename_signature(old, new [, {inputs={old=new}, outputs={old=new}}])
 *   ge.compose(a, b, {map={a_tensor=b_input}, prefix=}) -> graph
 *   ge.extract(g, {inputs={t,...}, outputs={t,...}})     -> graph
 *
 * Node-list entries that name an op or tensor of the graph come back as
 * that op or tensor, others as their string; bytes lists as strings,
 * int64 and float lists as numbers, Any lists as {type_url=, value=}.
 */
#include "config.h"

#include <string.h>

#include "lge.h"
#include "formats/meta.h"
#include "variables/compose.h"
#include "variables/sigedit.h"
#include "google/protobuf/any.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"

/* [-0, +1, m] An op or tensor named by s, or s itself. */
static void push_ref(lua_State *L, int gidx, ge_graph *g, const char *s)
{
	ge_tref t;
	if (*s != '^' && ge_graph_find_tensor(g, s, &t) == GE_OK) {
		if (strchr(s, ':'))
			lge_pushtensor(L, gidx, t);
		else
			lge_pushop(L, gidx, t.op);
		return;
	}
	lua_pushstring(L, s);
}

static int g_collection_names(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	size_t n = ge_collection_count(g);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushstring(L, ge_collection_name(g, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int g_collection(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const Tensorflow__CollectionDef *c =
		ge_collection_get(g, luaL_checkstring(L, 2));
	if (!c) {
		lua_pushnil(L);
		return 1;
	}
	lua_newtable(L);
	switch (c->kind_case) {
	case TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST:
		for (size_t i = 0; i < c->node_list->n_value; i++) {
			push_ref(L, 1, g, c->node_list->value[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST:
		for (size_t i = 0; i < c->bytes_list->n_value; i++) {
			lua_pushlstring(L, (const char *)c->bytes_list->value[i].data,
					c->bytes_list->value[i].len);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case TENSORFLOW__COLLECTION_DEF__KIND_INT64_LIST:
		for (size_t i = 0; i < c->int64_list->n_value; i++) {
			lua_pushinteger(L, (lua_Integer)c->int64_list->value[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case TENSORFLOW__COLLECTION_DEF__KIND_FLOAT_LIST:
		for (size_t i = 0; i < c->float_list->n_value; i++) {
			lua_pushnumber(L, c->float_list->value[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST:
		for (size_t i = 0; i < c->any_list->n_value; i++) {
			const Google__Protobuf__Any *a = c->any_list->value[i];
			lua_createtable(L, 0, 2);
			lua_pushstring(L, a->type_url);
			lua_setfield(L, -2, "type_url");
			lua_pushlstring(L, (const char *)a->value.data,
					a->value.len);
			lua_setfield(L, -2, "value");
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	default:
		break;
	}
	return 1;
}

/* Adds one value: an op or a tensor of G (by name in a node_list), or a
 * string (bytes_list).  Raises on misuse, returns the graph's refusal. */
static int add_one(lua_State *L, lge_graph *G, const char *name, int idx,
		   ge_error *err)
{
	ge_buf b = GE_BUF_INIT;
	int rc;
	if (lge_testop(L, idx)) {
		ge_opid id = lge_checkopin(L, idx, G);
		ge_buf_adds(&b, ge_op_name(G->g, id));
	} else if (lge_testtensor(L, idx)) {
		ge_tref t = lge_checktensorin(L, idx, G, 0);
		ge_tensor_put(G->g, t, 0, &b);
	} else if (lua_type(L, idx) == LUA_TSTRING) {
		size_t n;
		const char *s = lua_tolstring(L, idx, &n);
		return ge_collection_add_bytes(G->g, name, s, n, err);
	} else {
		return luaL_typeerror(L, idx,
				      "op, tensor, string or list of them");
	}
	rc = ge_collection_add_node(G->g, name, (const char *)b.data, err);
	ge_buf_free(&b);
	return rc;
}

static int g_add_to_collection(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	const char *name = luaL_checkstring(L, 2);
	luaL_checkany(L, 3);
	ge_error err;
	int rc = GE_OK;
	if (lua_type(L, 3) == LUA_TTABLE && !lua_getmetatable(L, 3)) {
		lua_Integer n = luaL_len(L, 3);
		for (lua_Integer i = 1; i <= n && rc == GE_OK; i++) {
			lua_geti(L, 3, i);
			rc = add_one(L, G, name, lua_gettop(L), &err);
			lua_pop(L, 1);
		}
	} else {
		rc = add_one(L, G, name, 3, &err);
	}
	if (rc != GE_OK)
		return luaL_error(L, "%s", err.msg);
	return 0;
}

static int g_signature_names(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	size_t n = ge_signature_count(g);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushstring(L, ge_signature_name(g, i));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static void push_infos(lua_State *L, ge_graph *g, size_t n,
		       Tensorflow__SignatureDef__InputsEntry **in,
		       Tensorflow__SignatureDef__OutputsEntry **out)
{
	lua_createtable(L, 0, (int)n);
	for (size_t i = 0; i < n; i++) {
		const char *key = in ? in[i]->key : out[i]->key;
		const Tensorflow__TensorInfo *t = in ? in[i]->value : out[i]->value;
		if (t && t->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
			push_ref(L, 1, g, t->name);
		else
			lua_pushboolean(L, 1); /* sparse or composite */
		lua_setfield(L, -2, key);
	}
}

static int g_signature(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const Tensorflow__SignatureDef *s =
		ge_signature_get(g, luaL_checkstring(L, 2));
	if (!s) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, 0, 3);
	lua_pushstring(L, s->method_name);
	lua_setfield(L, -2, "method_name");
	push_infos(L, g, s->n_inputs, s->inputs, NULL);
	lua_setfield(L, -2, "inputs");
	push_infos(L, g, s->n_outputs, NULL, s->outputs);
	lua_setfield(L, -2, "outputs");
	return 1;
}

/* [-0, +0, v] The keys of table field `side` of the table at idx, into
 * k (tensors as names, owned by the buffer b). */
static size_t check_keys(lua_State *L, int idx, const char *side,
			 lge_graph *G, ge_sig_key **k, ge_buf *b)
{
	size_t n = 0;
	*k = NULL;
	if (lua_getfield(L, idx, side) == LUA_TNIL) {
		lua_pop(L, 1);
		return 0;
	}
	luaL_argexpected(L, lua_istable(L, -1), 3, "table of keys");
	int t = lua_gettop(L);
	/* two passes: count, then fill (names kept in b at offsets) */
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "signature %s: keys must be strings",
				   side);
		n++;
		lua_pop(L, 1);
	}
	ge_sig_key *v = lua_newuserdatauv(L, (n ? n : 1) * sizeof *v, 0);
	size_t *off = lua_newuserdatauv(L, (2 * n + 1) * sizeof *off, 0);
	size_t i = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		off[2 * i] = b->len;
		ge_buf_adds(b, lua_tostring(L, -2));
		ge_buf_addc(b, 0);
		off[2 * i + 1] = b->len;
		if (lge_testtensor(L, -1)) {
			ge_buf scratch = GE_BUF_INIT;
			ge_buf_adds(b, ge_tensor_fmt(G->g,
						     lge_checktensor(L, -1)->t,
						     &scratch));
			ge_buf_free(&scratch);
		} else {
			ge_buf_adds(b, luaL_checkstring(L, -1));
		}
		ge_buf_addc(b, 0);
		i++;
		lua_pop(L, 1);
	}
	for (i = 0; i < n; i++) {
		v[i].key = (const char *)(uintptr_t)off[2 * i];
		v[i].tensor = (const char *)(uintptr_t)off[2 * i + 1];
	}
	lua_pop(L, 1); /* off */
	lua_remove(L, t);
	*k = v; /* stays on the stack */
	return n;
}

static void fix_keys(ge_sig_key *k, size_t n, ge_buf *b)
{
	for (size_t i = 0; i < n; i++) {
		k[i].key = (const char *)b->data + (uintptr_t)k[i].key;
		k[i].tensor = (const char *)b->data + (uintptr_t)k[i].tensor;
	}
}

static int g_set_signature(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	const char *name = luaL_checkstring(L, 2);
	luaL_checktype(L, 3, LUA_TTABLE);
	static const char *const known[] = {"inputs", "outputs",
					    "method_name", NULL};
	lge_checkopts(L, 3, known);
	ge_buf *b = lge_newbuf(L);
	ge_sig_spec s = {0};
	ge_sig_key *in, *out;
	s.n_inputs = check_keys(L, 3, "inputs", G, &in, b);
	s.n_outputs = check_keys(L, 3, "outputs", G, &out, b);
	fix_keys(in, s.n_inputs, b);
	fix_keys(out, s.n_outputs, b);
	s.inputs = in;
	s.outputs = out;
	s.method_name = lge_optfield(L, 3, "method_name");
	ge_error err = {0};
	if (ge_signature_set(G->g, name, &s, &err) != GE_OK)
		return lge_raise(L, &err);
	return 0;
}

static int g_remove_signature(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	ge_error err = {0};
	if (ge_signature_drop(G->g, luaL_checkstring(L, 2), &err) != GE_OK)
		return lge_raise(L, &err);
	return 0;
}

/* Renames keys of one side: {old = new}. */
static void rename_keys(lua_State *L, lge_graph *G, const char *sig,
			const char *side, int is_output)
{
	if (lua_getfield(L, 4, side) == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	luaL_argexpected(L, lua_istable(L, -1), 4, "table {old = new}");
	int t = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		ge_error err = {0};
		if (ge_signature_rename_key(G->g, sig, is_output,
					    luaL_checkstring(L, -2),
					    luaL_checkstring(L, -1),
					    &err) != GE_OK)
			lge_raise(L, &err);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

static int g_rename_signature(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	const char *from = luaL_checkstring(L, 2);
	const char *to = luaL_optstring(L, 3, from);
	ge_error err = {0};
	if (!lua_isnoneornil(L, 4)) {
		luaL_checktype(L, 4, LUA_TTABLE);
		static const char *const known[] = {"inputs", "outputs", NULL};
		lge_checkopts(L, 4, known);
	}
	if (ge_signature_move(G->g, from, to, &err) != GE_OK)
		return lge_raise(L, &err);
	if (!lua_isnoneornil(L, 4)) {
		rename_keys(L, G, to, "inputs", 0);
		rename_keys(L, G, to, "outputs", 1);
	}
	return 0;
}

/* [-0, +0, v] A tensor name of G at idx (a tensor or a string), kept in
 * the buffer b; returns its offset. */
static size_t name_at(lua_State *L, int idx, lge_graph *G, ge_buf *b)
{
	size_t off = b->len;
	if (lge_testtensor(L, idx)) {
		ge_buf scratch = GE_BUF_INIT;
		ge_buf_adds(b, ge_tensor_fmt(G->g, lge_checktensor(L, idx)->t,
					     &scratch));
		ge_buf_free(&scratch);
	} else {
		ge_buf_adds(b, luaL_checkstring(L, idx));
	}
	ge_buf_addc(b, 0);
	return off;
}

static int m_compose(lua_State *L)
{
	lge_graph *A = lge_checkgraph(L, 1), *B = lge_checkgraph(L, 2);
	luaL_checktype(L, 3, LUA_TTABLE);
	static const char *const known[] = {"map", "prefix", NULL};
	lge_checkopts(L, 3, known);
	const char *prefix = lge_optfield(L, 3, "prefix");
	ge_buf *b = lge_newbuf(L);
	size_t n = 0;
	if (lua_getfield(L, 3, "map") != LUA_TTABLE)
		return luaL_error(L, "compose: map must be a table {a_tensor = "
				  "b_input}");
	int t = lua_gettop(L);
	size_t cap = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		cap++;
		lua_pop(L, 1);
	}
	size_t *off = lua_newuserdatauv(L, (2 * cap + 1) * sizeof *off, 0);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pushvalue(L, -2);
		off[2 * n] = name_at(L, -1, A, b);
		lua_pop(L, 1);
		off[2 * n + 1] = name_at(L, -1, B, b);
		n++;
		lua_pop(L, 1);
	}
	/* b holds every name now: pointers into it stay valid */
	const char **v = lua_newuserdatauv(L, (2 * n + 1) * sizeof *v, 0);
	for (size_t i = 0; i < n; i++) {
		v[i] = (const char *)b->data + off[2 * i];
		v[n + i] = (const char *)b->data + off[2 * i + 1];
	}
	const char **from = v, **to = v + n;
	ge_compose_opts o = {prefix, from, to, n};
	ge_graph *c;
	ge_error err;
	if (ge_compose(A->g, B->g, &o, &c, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_pushgraph(L, c);
	return 1;
}

/* [-0, +1, m] The names of list field k of the table at 2, as an array
 * of strings (a userdata on the stack), into *out. */
static size_t names_field(lua_State *L, const char *k, lge_graph *G,
			  ge_buf *b, size_t **off)
{
	size_t n = 0;
	if (lua_getfield(L, 2, k) == LUA_TNIL) {
		lua_pop(L, 1);
		*off = lua_newuserdatauv(L, sizeof **off, 0);
		return 0;
	}
	luaL_argexpected(L, lua_istable(L, -1), 2, "lists of tensors");
	int t = lua_gettop(L);
	n = (size_t)luaL_len(L, t);
	*off = lua_newuserdatauv(L, (n + 1) * sizeof **off, 0);
	for (size_t i = 0; i < n; i++) {
		lua_geti(L, t, (lua_Integer)i + 1);
		(*off)[i] = name_at(L, -1, G, b);
		lua_pop(L, 1);
	}
	lua_remove(L, t);
	return n;
}

static int m_extract(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	static const char *const known[] = {"inputs", "outputs", NULL};
	lge_checkopts(L, 2, known);
	ge_buf *b = lge_newbuf(L);
	size_t *oi, *oo;
	size_t ni = names_field(L, "inputs", G, b, &oi);
	size_t no = names_field(L, "outputs", G, b, &oo);
	const char **v = lua_newuserdatauv(L, (ni + no + 1) * sizeof *v, 0);
	for (size_t i = 0; i < ni; i++)
		v[i] = (const char *)b->data + oi[i];
	for (size_t i = 0; i < no; i++)
		v[ni + i] = (const char *)b->data + oo[i];
	ge_graph *c;
	ge_error err;
	if (ge_extract(G->g, v, ni, v + ni, no, &c, &err) != GE_OK)
		return lge_fail(L, &err);
	lge_pushgraph(L, c);
	return 1;
}

void lge_open_meta(lua_State *L)
{
	static const luaL_Reg graph_methods[] = {
		{"collection_names", g_collection_names},
		{"collection", g_collection},
		{"add_to_collection", g_add_to_collection},
		{"signature_names", g_signature_names},
		{"signature", g_signature},
		{"set_signature", g_set_signature},
		{"remove_signature", g_remove_signature},
		{"rename_signature", g_rename_signature},
		{NULL, NULL},
	};
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pop(L, 1);
	static const luaL_Reg funcs[] = {
		{"compose", m_compose},
		{"extract", m_extract},
		{NULL, NULL},
	};
	luaL_setfuncs(L, funcs, 0);
}
