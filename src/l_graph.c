/*
 * l_graph.c: the graph userdata (gerewrite.graph).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "editor/insert.h"
#include "editor/provenance.h"
#include "l_editor.h"
#include "lge.h"
#include "editor/select.h"
#include "analyses/shapes.h"
#include "graph/opattrs.h"
#include "formats/tfjs.h"
#include "variables/varpolicy.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

int lge_at_exit;

/* Registry key of the metatable shared by the wrapper caches. */
static const char WEAKV[] = "gerewrite.weakv";

static void newcache(lua_State *L)
{
	lua_newtable(L);
	if (luaL_newmetatable(L, WEAKV)) {
		lua_pushliteral(L, "v");
		lua_setfield(L, -2, "__mode");
	}
	lua_setmetatable(L, -2);
}

/* Registry key of the weak-keyed set of every graph userdata made. */
static const char GRAPHS[] = "gerewrite.graphs";

void lge_pushgraphs(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, GRAPHS) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, GRAPHS);
}

void lge_pushgraph(lua_State *L, ge_graph *g)
{
	lge_graph *G = lua_newuserdatauv(L, sizeof *G, 4);
	G->g = NULL;
	G->borrowed = 0;
	luaL_setmetatable(L, LGE_GRAPH);
	G->g = g; /* from here __gc frees it */
	newcache(L);
	lua_setiuservalue(L, -2, 1);
	newcache(L);
	lua_setiuservalue(L, -2, 2);
	lge_newopmeta(L, -1);
	lua_setiuservalue(L, -2, 4);
	lge_pushgraphs(L);
	lua_pushvalue(L, -2);
	lua_pushboolean(L, 1);
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

lge_graph *lge_checkgraph(lua_State *L, int arg)
{
	lge_graph *G = lge_checkudata(L, arg, LGE_GRAPH);
	if (!G->g)
		luaL_error(L, "graph is closed");
	return G;
}

ge_graph *lge_checkanygraph(lua_State *L, int arg, lge_graph **owner)
{
	lge_graph *G;
	lge_op *o;
	lge_tensor *t;
	if ((o = lge_testop(L, arg)))
		G = o->owner;
	else if ((t = lge_testtensor(L, arg)))
		G = t->owner;
	else
		G = lge_testudata(L, arg, LGE_GRAPH);
	if (!G)
		luaL_typeerror(L, arg, "gerewrite.graph, op or tensor");
	if (!G->g)
		luaL_error(L, "graph is closed");
	if (owner)
		*owner = G;
	return G->g;
}

/* ------------------------------------------------------------ methods */

/* g:ops(types): the ops of the given types (a type or a list of them),
 * with wrappers made only for those */
static int g_ops_of_types(lua_State *L, ge_graph *g)
{
	size_t n = 1;
	if (lua_type(L, 2) == LUA_TTABLE)
		n = lua_rawlen(L, 2);
	else
		luaL_checkstring(L, 2);
	const char **types = lua_newuserdatauv(L, (n ? n : 1) * sizeof *types,
					       0);
	if (lua_type(L, 2) == LUA_TSTRING)
		types[0] = lua_tostring(L, 2);
	for (size_t i = 0; lua_type(L, 2) == LUA_TTABLE && i < n; i++) {
		if (lua_rawgeti(L, 2, (lua_Integer)i + 1) != LUA_TSTRING)
			luaL_argerror(L, 2, "a list of op types expected");
		types[i] = lua_tostring(L, -1); /* held by the list */
		lua_pop(L, 1);
	}
	ge_opvec v = GE_VEC_INIT;
	ge_graph_ops_of_types(g, types, n, &v);
	lsel_pushops(L, 1, v.v, v.n);
	ge_opvec_free(&v);
	return 1;
}

/* g:ops([types]) -> list of the live ops in node order (of those types) */
static int g_ops(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	if (!lua_isnoneornil(L, 2))
		return g_ops_of_types(L, g);
	lge_pushallops(L, 1);
	return 1;
}

/* g:colocation_targets() -> {op, ...}: the ops others are colocated with */
static int g_colocation_targets(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_opvec v = GE_VEC_INIT;
	ge_colocation_targets(g, &v);
	lsel_pushops(L, 1, v.v, v.n);
	ge_opvec_free(&v);
	return 1;
}

/* g:provenance() -> {name = {nodes = {...}, funcs = {...}}, ...}: the
 * ops that record what they were made from (provenance.h) */
static int g_provenance(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	lua_newtable(L);
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < cap; i++) {
		if (!ge_op_alive(g, (ge_opid)i))
			continue;
		ge_error err;
		int n = lge_push_origins(L, g, (ge_opid)i, &err);
		if (n < 0)
			return lge_raise(L, &err);
		if (n == 0)
			lua_pop(L, 1);
		else
			lua_setfield(L, -2, ge_op_name(g, (ge_opid)i));
	}
	return 1;
}

/* g:provenance_mode([mode]) -> the mode ("field", "attr" or "off"),
 * after setting it when mode is given (ge_prov_set_mode) */
static int g_provenance_mode(lua_State *L)
{
	static const char *const names[] = {"field", "attr", "off", NULL};
	static const int modes[] = {GE_PROV_FIELD, GE_PROV_ATTR, GE_PROV_OFF};
	ge_graph *g = lge_checkgraph(L, 1)->g;
	if (!lua_isnoneornil(L, 2))
		ge_prov_set_mode(g, modes[luaL_checkoption(L, 2, NULL, names)]);
	int m = ge_prov_mode(g);
	lua_pushstring(L, names[m == GE_PROV_ATTR ? 1 : m == GE_PROV_OFF ? 2 : 0]);
	return 1;
}

/* g:op(name) -> op | nil */
static int g_op(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_opid id = ge_graph_find(g, luaL_checkstring(L, 2));
	if (id == GE_NOOP)
		return 0;
	lge_pushop(L, 1, id);
	return 1;
}

/* g:tensor("name:k" | "name") -> tensor | nil */
static int g_tensor(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *text = luaL_checkstring(L, 2);
	ge_tref t;
	int rc = ge_graph_find_tensor(g, text, &t);
	if (rc == GE_ENOTFOUND)
		return 0;
	if (rc != GE_OK)
		return luaL_argerror(
			L, 2, lua_pushfstring(L, "malformed tensor name '%s'", text));
	if (t.index == GE_CONTROL)
		return luaL_argerror(
			L, 2,
			lua_pushfstring(L, "'%s' names an op, not a tensor", text));
	if (!ge_op_has_output(g, t.op, t.index))
		return 0;
	lge_pushtensor(L, 1, t);
	return 1;
}

/* Inputs, control inputs and attrs are checked and encoded before the op
 * is created, so a bad argument leaves the graph untouched. */
struct pending_attr {
	const char *name; /* held by the attrs or raw_attrs table */
	size_t off, len;  /* in the encoding buffer */
	const char *raw;  /* or these bytes (raw_attrs) */
};

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const struct pending_attr *)a)->name,
		      ((const struct pending_attr *)b)->name);
}

/* Most ops have a few inputs and attrs: their lists live on the C stack,
 * and only longer ones in a userdata, so an add_op makes no garbage but
 * the op itself. */
#define ADD_OP_SMALL 16

static void *small_or_ud(lua_State *L, void *small, size_t n, size_t size)
{
	if (n <= ADD_OP_SMALL)
		return small;
	return lua_newuserdatauv(L, n * size, 0);
}

/* One encoding buffer reused by every add_op: errors raised while encoding
 * leave it marked busy, and later calls then use a buffer of their own. */
static ge_buf add_op_enc = GE_BUF_INIT;
static int add_op_enc_busy;

/* The kind the OpDef gives attr `name`, as lge_opdefkind does, from the
 * OpDef looked up once per add_op. */
static const char *def_kind(const Tensorflow__OpDef *d, const char *name)
{
	for (size_t i = 0; d && i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name)) {
			int k = ge_attrkind_parse(d->attr[i]->type);
			return k < 0 ? NULL : ge_attrkind_name(k);
		}
	return NULL;
}

/* Reads the inputs (3) and control inputs (4) of the spec at 2 into in
 * and ctl; returns n_data and sets *n_ctl. */
static size_t add_op_inputs(lua_State *L, lge_graph *G, size_t nin,
			    size_t nci, ge_tref *in, ge_opid *ctl,
			    size_t *n_ctlp)
{
	size_t n_data = 0, n_ctl = 0;
	for (size_t i = 0; i < nin; i++) {
		ge_tref r;
		lua_rawgeti(L, 3, (lua_Integer)i + 1);
		const char *why = lge_totensorin(L, -1, G, 1, &r);
		if (why)
			luaL_argerror(L, 2,
				      lua_pushfstring(L, "inputs[%d]: %s",
						      (int)i + 1, why));
		lua_pop(L, 1);
		if (r.index == GE_CONTROL)
			ctl[n_ctl++] = r.op;
		else
			in[n_data++] = r;
	}
	for (size_t i = 0; i < nci; i++) {
		ge_opid c;
		lua_rawgeti(L, 4, (lua_Integer)i + 1);
		const char *why = lge_toopin(L, -1, G, &c);
		if (why)
			luaL_argerror(L, 2,
				      lua_pushfstring(L, "control_inputs[%d]: %s",
						      (int)i + 1, why));
		lua_pop(L, 1);
		ctl[n_ctl++] = c;
	}
	for (size_t i = 0; i < n_ctl; i++)
		for (size_t j = 0; j < i; j++)
			if (ctl[i] == ctl[j])
				luaL_argerror(
					L, 2,
					lua_pushfstring(
						L, "control input '%s' given twice",
						ge_op_name(G->g, ctl[i])));
	*n_ctlp = n_ctl;
	return n_data;
}

/* Reads the nr pairs of raw_attrs (7) into ra; a name also in pa (the
 * attrs) or given twice raises. */
static void add_op_raw(lua_State *L, struct pending_attr *ra, size_t nr,
		       const struct pending_attr *pa, size_t na)
{
	for (size_t i = 0; i < nr; i++) {
		size_t len;
		lua_rawgeti(L, 7, (lua_Integer)(2 * i + 1));
		lua_rawgeti(L, 7, (lua_Integer)(2 * i + 2));
		if (lua_type(L, -2) != LUA_TSTRING || !*lua_tostring(L, -2) ||
		    lua_type(L, -1) != LUA_TSTRING)
			luaL_argerror(L, 2,
				      lua_pushfstring(L, "raw_attrs[%d]: a name "
							 "and a string of bytes "
							 "expected",
						      (int)(2 * i + 1)));
		/* both held by raw_attrs */
		ra[i].name = lua_tostring(L, -2);
		ra[i].raw = lua_tolstring(L, -1, &len);
		ra[i].len = len;
		lua_pop(L, 2);
		for (size_t j = 0; j < na + i; j++)
			if (!strcmp(j < na ? pa[j].name : ra[j - na].name,
				    ra[i].name))
				luaL_argerror(L, 2,
					      lua_pushfstring(L, "attr '%s' given "
								 "twice",
							      ra[i].name));
	}
}

/* Gives the new op its attrs (pa, encoded in enc), then its raw ones, in
 * one call. */
static void add_op_attrs(ge_graph *g, ge_opid id, const struct pending_attr *pa,
			 size_t na, const struct pending_attr *ra, size_t nr,
			 const ge_buf *enc)
{
	const char *names_s[2 * ADD_OP_SMALL];
	const uint8_t *bytes_s[2 * ADD_OP_SMALL];
	size_t lens_s[2 * ADD_OP_SMALL];
	const char **names = names_s;
	const uint8_t **bytes = bytes_s;
	size_t *lens = lens_s;
	size_t n = na + nr;
	if (!n)
		return;
	if (n > 2 * ADD_OP_SMALL) {
		names = ge_xmalloc(n * sizeof *names);
		bytes = ge_xmalloc(n * sizeof *bytes);
		lens = ge_xmalloc(n * sizeof *lens);
	}
	for (size_t i = 0; i < na; i++) {
		names[i] = pa[i].name;
		bytes[i] = enc->data + pa[i].off;
		lens[i] = pa[i].len;
	}
	for (size_t i = 0; i < nr; i++) {
		names[na + i] = ra[i].name;
		bytes[na + i] = (const uint8_t *)ra[i].raw;
		lens[na + i] = ra[i].len;
	}
	ge_op_add_attrs_raw(g, id, n, names, bytes, lens);
	if (names != names_s) {
		free(names);
		free(bytes);
		free(lens);
	}
}

/* g:add_op{type=, name=, inputs=, control_inputs=, attrs=, attr_kinds=,
 * raw_attrs=, device=} -> op */
static int g_add_op(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	ge_graph *g = G->g;
	ge_error err;
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	const char *type = lge_optfield(L, 2, "type");
	const char *name = lge_optfield(L, 2, "name");
	const char *device = lge_optfield(L, 2, "device");
	if (!type || !*type)
		return luaL_argerror(L, 2, "field 'type' is required");
	if (name && !*name)
		return luaL_argerror(L, 2, "field 'name' cannot be empty");
	if (name && ge_graph_find(g, name) != GE_NOOP)
		return luaL_error(L, "an op named '%s' already exists", name);

	/* inputs (3), control ops (4), attrs (5), attr_kinds (6) */
	int t = lua_getfield(L, 2, "inputs");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'inputs' must be a list");
	size_t nin = t == LUA_TTABLE ? lua_rawlen(L, 3) : 0;
	t = lua_getfield(L, 2, "control_inputs");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'control_inputs' must be a list");
	size_t nci = t == LUA_TTABLE ? lua_rawlen(L, 4) : 0;
	t = lua_getfield(L, 2, "attrs");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'attrs' must be a table");
	t = lua_getfield(L, 2, "attr_kinds");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'attr_kinds' must be a table");
	/* raw_attrs (7): {name, bytes, name, bytes, ...}, kept in order */
	t = lua_getfield(L, 2, "raw_attrs");
	if (t != LUA_TNIL && t != LUA_TTABLE)
		return luaL_argerror(L, 2, "field 'raw_attrs' must be a list");
	size_t nr = t == LUA_TTABLE ? lua_rawlen(L, 7) : 0;
	if (nr % 2)
		return luaL_argerror(L, 2, "field 'raw_attrs' must list name, "
					   "bytes pairs");
	nr /= 2;

	ge_tref in_s[ADD_OP_SMALL];
	ge_opid ctl_s[ADD_OP_SMALL];
	ge_tref *in = small_or_ud(L, in_s, nin, sizeof *in);
	ge_opid *ctl = small_or_ud(L, ctl_s, nin + nci, sizeof *ctl);
	size_t n_ctl;
	size_t n_data = add_op_inputs(L, G, nin, nci, in, ctl, &n_ctl);

	size_t na = 0;
	if (lua_type(L, 5) == LUA_TTABLE) {
		lua_pushnil(L);
		while (lua_next(L, 5)) {
			lua_pop(L, 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_argerror(L, 2,
						     "attr names must be strings");
			na++;
		}
	}
	struct pending_attr pa_s[ADD_OP_SMALL];
	struct pending_attr *pa = small_or_ud(L, pa_s, na, sizeof *pa);
	if (na) {
		size_t i = 0;
		lua_pushnil(L);
		while (lua_next(L, 5)) {
			lua_pop(L, 1);
			pa[i++].name = lua_tostring(L, -1);
		}
	}
	/* sorted, so the NodeDef never depends on table order */
	qsort(pa, na, sizeof *pa, cmp_attr);
	struct pending_attr ra_s[ADD_OP_SMALL];
	struct pending_attr *ra = small_or_ud(L, ra_s, nr, sizeof *ra);
	add_op_raw(L, ra, nr, pa, na);
	const Tensorflow__OpDef *def = na ? ge_graph_opdef(g, type) : NULL;
	ge_buf *enc = &add_op_enc;
	if (add_op_enc_busy)
		enc = lge_newbuf(L);
	else
		add_op_enc_busy = 1;
	enc->len = 0;
	for (size_t i = 0; i < na; i++) {
		const char *kind = NULL;
		if (lua_type(L, 6) == LUA_TTABLE) {
			if (lua_getfield(L, 6, pa[i].name) == LUA_TSTRING)
				kind = lua_tostring(L, -1);
			lua_pop(L, 1); /* held by attr_kinds */
		}
		lua_getfield(L, 5, pa[i].name);
		pa[i].off = enc->len;
		lge_encodeattr(L, -1, pa[i].name, kind, def_kind(def, pa[i].name),
			       enc);
		pa[i].len = enc->len - pa[i].off;
		lua_pop(L, 1);
	}

	/* Now change the graph. */
	if (!name)
		name = ge_graph_unique_name(g, type);
	ge_opid id = ge_graph_add_op(g, name, type, &err);
	if (id == GE_NOOP)
		goto fail_enc;
	for (size_t i = 0; i < n_data; i++)
		if (ge_op_add_input(g, id, in[i], &err) != GE_OK)
			goto fail;
	for (size_t i = 0; i < n_ctl; i++)
		if (ge_op_add_control_input(g, id, ctl[i], &err) != GE_OK)
			goto fail;
	/* C memory only from here: nothing raises */
	add_op_attrs(g, id, pa, na, ra, nr, enc);
	if (enc == &add_op_enc)
		add_op_enc_busy = 0;
	if (device)
		ge_op_set_device(g, id, device);
	lge_pushop(L, 1, id);
	return 1;
fail:
	ge_graph_remove_op(g, id, 1, NULL);
fail_enc:
	if (enc == &add_op_enc)
		add_op_enc_busy = 0;
	return lge_raise(L, &err);
}

/* g:remove_op(op | name [, {force=true}]) */
static int g_remove_op(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	ge_opid id = lge_checkopin(L, 2, G);
	static const char *const known[] = {"force", NULL};
	int force = 0;
	if (!lua_isnoneornil(L, 3)) {
		lge_checkopts(L, 3, known);
		lua_getfield(L, 3, "force");
		force = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	ge_error err;
	if (ge_graph_remove_op(G->g, id, force, &err) != GE_OK)
		return lge_raise(L, &err);
	return 0;
}

/* g:unique_name(name) -> name */
static int g_unique_name(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *name = luaL_checkstring(L, 2);
	if (!*name)
		return luaL_argerror(L, 2, "name cannot be empty");
	lua_pushstring(L, ge_graph_unique_name(g, name));
	return 1;
}

/* g:validate([{shapes = true}]) -> true | false, {problem, ...}; with
 * shapes, also the ops whose shape cannot hold and the `_output_shapes`
 * that contradict inference (shapes.h). */
static int g_validate(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_buf *b = lge_newbuf(L);
	/* bodies and calls: every function for a top-level graph (each body
	 * checked as a graph, not the library's bytes); the calls of a body
	 * for a body */
	ge_error ferr;
	int flib = ge_flib_load(g, &ferr) == GE_OK;
	size_t n = ge_graph_validate(g, b);
	if (!flib) {
		ge_buf_printf(b, "%s\n", ferr.msg);
		n++;
	} else {
		n += ge_func_validate_graph(g, b);
	}
	n += ge_variables_validate(g, b);
	if (lua_type(L, 2) == LUA_TTABLE) {
		lua_getfield(L, 2, "shapes");
		if (lua_toboolean(L, -1))
			n += ge_shapes_validate(g, b);
		lua_pop(L, 1);
	}
	if (n == 0) {
		lua_pushboolean(L, 1);
		return 1;
	}
	lua_pushboolean(L, 0);
	lua_newtable(L);
	const char *p = (const char *)b->data, *end = p + b->len;
	lua_Integer k = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len) {
			lua_pushlstring(L, p, len);
			lua_rawseti(L, -2, ++k);
		}
		p += len + 1;
	}
	return 2;
}

/* The tfjs members of g:save's options: shard_size, quantize and
 * quantize_weights (a list of name patterns). */
static void save_tfjs_opts(lua_State *L, int idx, ge_save_opts *o)
{
	lua_getfield(L, idx, "shard_size");
	if (!lua_isnil(L, -1)) {
		lua_Integer n = luaL_checkinteger(L, -1);
		if (n <= 0)
			luaL_error(L, "shard_size must be positive");
		o->shard_size = (size_t)n;
	}
	lua_getfield(L, idx, "quantize");
	if (!lua_isnil(L, -1)) {
		ge_tfjs_quant q;
		const char *qn = luaL_checkstring(L, -1);
		if (ge_tfjs_quant_from_name(qn, &q))
			luaL_error(L, "unknown quantize '%s' (uint8, uint16, "
				   "float16, none or keep)", qn);
		o->quantize = (int)q;
	}
	lua_getfield(L, idx, "quantize_weights");
	if (!lua_isnil(L, -1)) {
		luaL_checktype(L, -1, LUA_TTABLE);
		size_t n = (size_t)luaL_len(L, -1);
		const char **pats = lua_newuserdatauv(L, (n ? n : 1) *
						      sizeof *pats, 0);
		for (size_t i = 0; i < n; i++) {
			lua_rawgeti(L, -2, (lua_Integer)i + 1);
			pats[i] = luaL_checkstring(L, -1);
			lua_pop(L, 1);
		}
		o->quantize_names = pats;
		o->n_quantize_names = n;
	}
	/* the values stay on the stack until the save is done: the
	 * patterns point into them */
}

/* g:save(path [, {format=, overwrite=, shard_size=, quantize=,
 * quantize_weights=}]) -> true | nil, err */
static int g_save(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *path = luaL_checkstring(L, 2);
	static const char *const known[] = {
		"format", "overwrite", "shard_size", "quantize",
		"quantize_weights", "checkpoint", NULL};
	ge_save_opts o;
	memset(&o, 0, sizeof o);
	if (!lua_isnoneornil(L, 3)) {
		lge_checkopts(L, 3, known);
		lua_getfield(L, 3, "format");
		o.format = lge_checkformat(L, -1);
		lua_getfield(L, 3, "overwrite");
		o.overwrite = lua_toboolean(L, -1);
		lua_getfield(L, 3, "checkpoint");
		o.checkpoint = luaL_optstring(L, -1, NULL);
		lua_pop(L, 3); /* the opts table keeps the string alive */
		save_tfjs_opts(L, 3, &o);
	}
	ge_error err;
	if (ge_save(g, path, &o, &err) != GE_OK)
		return lge_fail(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

/* g:serialize([format]) -> bytes */
static int g_serialize(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	ge_format f = lge_checkformat(L, 2);
	ge_buf *b = lge_newbuf(L);
	ge_error err;
	if (ge_serialize(g, f, b, &err) != GE_OK)
		return lge_raise(L, &err);
	lua_pushlstring(L, (const char *)b->data, b->len);
	return 1;
}

/* g:clone() -> a deep copy */
static int g_clone(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	lge_pushgraph(L, ge_graph_clone(g));
	return 1;
}

/* Wrappers of ops that a reorder dropped (removed before it) point here:
 * a graph that is closed, so using them fails cleanly. */
static lge_graph expired = {NULL};

/* [-0, +0, m] After a reorder: moves every cached wrapper of the graph
 * at gidx to its op's new id (newid[old], GE_NOOP for dropped ops) and
 * rebuilds both caches under the new keys, so the ops and tensors a
 * script holds stay the same objects. */
static void remap_wrappers(lua_State *L, int gidx, const ge_opid *newid,
			   size_t oldcap)
{
	gidx = lua_absindex(L, gidx);
	/* ops: cache 1, keyed by LGE_OPKEY(id) */
	lua_getiuservalue(L, gidx, 1);
	newcache(L);
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		lge_op *o = lua_touserdata(L, -1);
		lua_Integer old = lua_tointeger(L, -2) - 1;
		if (o && old >= 0 && (size_t)old < oldcap &&
		    newid[old] != GE_NOOP) {
			o->id = newid[old];
			lua_pushvalue(L, -1);
			lua_rawseti(L, -4, LGE_OPKEY(o->id));
		} else if (o) {
			o->owner = &expired;
		}
		lua_pop(L, 1);
	}
	lua_setiuservalue(L, gidx, 1);
	lua_pop(L, 1);
	/* tensors: cache 2, keyed by id * 2^24 + index */
	lua_getiuservalue(L, gidx, 2);
	newcache(L);
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		lge_tensor *t = lua_touserdata(L, -1);
		if (t && t->t.op < oldcap && newid[t->t.op] != GE_NOOP) {
			t->t.op = newid[t->t.op];
			lua_pushvalue(L, -1);
			lua_rawseti(L, -4,
				    (lua_Integer)t->t.op << 24 | t->t.index);
		} else if (t) {
			t->owner = &expired;
		}
		lua_pop(L, 1);
	}
	lua_setiuservalue(L, gidx, 2);
	lua_pop(L, 1);
}

/* g:reorder(ops): puts the ops in a new node order.  ops lists every op
 * of the graph once (ops or names).  The ops and tensors a script holds
 * stay valid and keep pointing at the same ops; those of ops removed
 * earlier become unusable. */
static int g_reorder(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	ge_graph *g = G->g;
	luaL_checktype(L, 2, LUA_TTABLE);
	size_t n = lua_rawlen(L, 2);
	size_t cap = ge_graph_capacity(g);
	if (n != ge_graph_num_ops(g))
		return luaL_argerror(
			L, 2,
			lua_pushfstring(L, "%d ops given, the graph has %d",
					(int)n, (int)ge_graph_num_ops(g)));
	ge_opid *perm = lua_newuserdatauv(L, (n + 1) * sizeof *perm, 0);
	ge_opid *newid = lua_newuserdatauv(L, (cap + 1) * sizeof *newid, 0);
	for (size_t i = 0; i < cap; i++)
		newid[i] = GE_NOOP;
	for (size_t i = 0; i < n; i++) {
		lua_rawgeti(L, 2, (lua_Integer)i + 1);
		ge_opid id;
		const char *why = lge_toopin(L, -1, G, &id);
		if (why)
			return luaL_argerror(
				L, 2, lua_pushfstring(L, "[%d]: %s", (int)i + 1, why));
		if (newid[id] != GE_NOOP)
			return luaL_argerror(
				L, 2,
				lua_pushfstring(L, "[%d]: op '%s' listed twice",
						(int)i + 1, ge_op_name(g, id)));
		newid[id] = (ge_opid)i;
		perm[i] = id;
		lua_pop(L, 1);
	}
	ge_error err;
	if (ge_graph_reorder(g, perm, n, &err) != GE_OK)
		return lge_raise(L, &err);
	remap_wrappers(L, 1, newid, cap);
	return 0;
}

static void push_argdefs(lua_State *L, Tensorflow__OpDef__ArgDef **a, size_t n)
{
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 6);
		lua_pushstring(L, a[i]->name);
		lua_setfield(L, -2, "name");
		if (a[i]->type) {
			lge_pushdtype(L, (int)a[i]->type);
			lua_setfield(L, -2, "type");
		}
		if (a[i]->type_attr && *a[i]->type_attr) {
			lua_pushstring(L, a[i]->type_attr);
			lua_setfield(L, -2, "type_attr");
		}
		if (a[i]->number_attr && *a[i]->number_attr) {
			lua_pushstring(L, a[i]->number_attr);
			lua_setfield(L, -2, "number_attr");
		}
		if (a[i]->type_list_attr && *a[i]->type_list_attr) {
			lua_pushstring(L, a[i]->type_list_attr);
			lua_setfield(L, -2, "type_list_attr");
		}
		if (a[i]->is_ref) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "is_ref");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* g:opdef(type) -> {name=, inputs=, outputs=, attrs=, is_stateful=,
 * is_commutative=, summary=} | nil: the OpDef the graph uses for an op
 * type (its own op list first, then the built-in registry).  attrs list
 * {name=, type=, default=} with the default as op:attr would give it. */
static int g_opdef(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const Tensorflow__OpDef *d = ge_graph_opdef(g, luaL_checkstring(L, 2));
	if (!d)
		return 0;
	lua_createtable(L, 0, 8);
	lua_pushstring(L, d->name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, d->summary ? d->summary : "");
	lua_setfield(L, -2, "summary");
	lua_pushboolean(L, d->is_stateful);
	lua_setfield(L, -2, "is_stateful");
	lua_pushboolean(L, d->is_commutative);
	lua_setfield(L, -2, "is_commutative");
	push_argdefs(L, d->input_arg, d->n_input_arg);
	lua_setfield(L, -2, "inputs");
	push_argdefs(L, d->output_arg, d->n_output_arg);
	lua_setfield(L, -2, "outputs");
	lua_createtable(L, (int)d->n_attr, 0);
	for (size_t i = 0; i < d->n_attr; i++) {
		lua_createtable(L, 0, 3);
		lua_pushstring(L, d->attr[i]->name);
		lua_setfield(L, -2, "name");
		lua_pushstring(L, d->attr[i]->type);
		lua_setfield(L, -2, "type");
		if (d->attr[i]->default_value) {
			lge_pushattr(L, d->attr[i]->default_value);
			lua_pop(L, 1); /* the kind */
			lua_setfield(L, -2, "default");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "attrs");
	return 1;
}

/* g:fill_default_attrs([op]) -> number of attrs added: the attrs the
 * OpDef declares with a default that the op (or every op) lacks. */
static int g_fill_default_attrs(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	if (lua_isnoneornil(L, 2)) {
		lua_pushinteger(L, (lua_Integer)ge_graph_fill_default_attrs(G->g));
		return 1;
	}
	int n = ge_op_fill_default_attrs(G->g, lge_checkopin(L, 2, G));
	lua_pushinteger(L, n > 0 ? n : 0);
	return 1;
}

/* g:close(): frees the graph now; its ops and tensors become unusable.
 * Also the __close and __gc metamethods. */
void lge_closegraph(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lge_graph *G = luaL_checkudata(L, idx, LGE_GRAPH);
	if (!G->g)
		return;
	if (!G->borrowed) {
		int top = lua_gettop(L);
		/* the bodies' userdata (user value 3: {bodies = {...}}) point
		 * into this graph */
		if (lua_getiuservalue(L, idx, 3) == LUA_TTABLE &&
		    lua_getfield(L, -1, "bodies") == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				lge_graph *B = luaL_testudata(L, -1, LGE_GRAPH);
				if (B)
					B->g = NULL;
				lua_pop(L, 1);
			}
		}
		lua_settop(L, top);
		if (!lge_at_exit)
			ge_graph_free(G->g);
	}
	G->g = NULL;
}

static int g_close(lua_State *L)
{
	lge_closegraph(L, 1);
	return 0;
}

/* ------------------------------------------------------------ metamethods */

static int g_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ge_graph_num_ops(lge_checkgraph(L, 1)->g));
	return 1;
}

static int g_tostring(lua_State *L)
{
	lge_graph *G = luaL_checkudata(L, 1, LGE_GRAPH);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "graph ");
	if (!G->g) {
		luaL_addstring(&b, "(closed)");
	} else {
		char tmp[64];
		size_t n = ge_graph_num_ops(G->g);
		lge_addquoted(&b, ge_graph_name(G->g));
		snprintf(tmp, sizeof tmp, " (%zu op%s)", n, n == 1 ? "" : "s");
		luaL_addstring(&b, tmp);
	}
	luaL_pushresult(&b);
	return 1;
}

static int g_index(lua_State *L)
{
	const char *key = lua_tostring(L, 2);
	if (key && !strcmp(key, "name")) {
		lua_pushstring(L, ge_graph_name(lge_checkgraph(L, 1)->g));
		return 1;
	}
	if (lge_pushmethod(L, 1, 2) != LUA_TNIL)
		return 1;
	/* an unknown key raises, naming the nearest methods */
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__methods");
	return lge_nokey(L, 1, 2, "a graph", 0, lua_gettop(L), "name");
}

static int g_newindex(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	const char *key = lua_tostring(L, 2);
	if (key && !strcmp(key, "name")) {
		ge_graph_set_name(g, luaL_checkstring(L, 3));
		return 0;
	}
	return luaL_error(L, "cannot set field '%s' of a graph (only name)",
			  key ? key : luaL_typename(L, 2));
}

static const luaL_Reg graph_meta[] = {
	{"__index", g_index},
	{"__newindex", g_newindex},
	{"__len", g_len},
	{"__tostring", g_tostring},
	{"__gc", g_close},
	{"__close", g_close},
	{NULL, NULL},
};

static const luaL_Reg graph_methods[] = {
	{"ops", g_ops},
	{"op", g_op},
	{"colocation_targets", g_colocation_targets},
	{"provenance", g_provenance},
	{"provenance_mode", g_provenance_mode},
	{"tensor", g_tensor},
	{"add_op", g_add_op},
	{"remove_op", g_remove_op},
	{"unique_name", g_unique_name},
	{"validate", g_validate},
	{"save", g_save},
	{"serialize", g_serialize},
	{"clone", g_clone},
	{"close", g_close},
	{"reorder", g_reorder},
	{"opdef", g_opdef},
	{"fill_default_attrs", g_fill_default_attrs},
	{NULL, NULL},
};

void lge_open_graph(lua_State *L)
{
	lge_newtype(L, LGE_GRAPH, graph_meta, graph_methods);
	lua_pop(L, 1);
}
