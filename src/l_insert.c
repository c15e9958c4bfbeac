/*
 * l_insert.c: g:insert_after, the binding of ge_insert_after (insert.h).
 *
 * A template is read once into C structs that live in userdata held by
 * the call's keep table (so a Lua error while reading frees them), its
 * attrs encoded once as add_op encodes them (names sorted, kinds from
 * attr_kinds or the OpDef); the sites are handed over as one array.  No
 * userdata is made per new op, nor per site for {types = ...}.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "editor/insert.h"
#include "lge.h"
#include "graph/opattrs.h"

/* Where the pieces of one call live while it runs. */
typedef struct ctx {
	lua_State *L;
	lge_graph *G;
	size_t n_sites;
	int sites_idx;
	int keep; /* a table holding the scratch userdata */
	int by_type; /* sites given as {types = ...}: ops, no wrappers */
	/* per-site lists already read, by the Lua table they came from and
	 * the kind they were encoded as */
	struct seen {
		const void *key;
		const char *kind;
		ge_ins_attr a;
	} seen[16];
	size_t n_seen;
} ctx;

/* Zeroed memory that lives until the call returns: a userdata kept in
 * the call's keep table, so a Lua error frees it too. */
static void *scratch(ctx *c, size_t n, size_t size)
{
	void *p = lua_newuserdatauv(c->L, n ? n * size : 1, 0);
	memset(p, 0, n ? n * size : 1);
	lua_rawseti(c->L, c->keep, (lua_Integer)lua_rawlen(c->L, c->keep) + 1);
	return p;
}

/* An input (or, with ctl, a control input) of template op j at idx:
 * 0 the site, k an earlier op's output 0, {k, i} its output i, or a
 * tensor (an op) of the graph. */
static void read_ref(ctx *c, int idx, size_t j, size_t i, int ctl,
		     ge_ins_ref *r)
{
	lua_State *L = c->L;
	const char *field = ctl ? "control_inputs" : "inputs";
	memset(r, 0, sizeof *r);
	if (lua_isinteger(L, idx) || lua_type(L, idx) == LUA_TTABLE) {
		lua_Integer k, out = 0;
		if (lua_type(L, idx) == LUA_TTABLE) {
			lua_rawgeti(L, idx, 1);
			lua_rawgeti(L, idx, 2);
			int ok1, ok2;
			k = lua_tointegerx(L, -2, &ok1);
			out = lua_tointegerx(L, -1, &ok2);
			lua_pop(L, 2);
			if (ctl || !ok1 || !ok2 || k < 1 || out < 0 ||
			    out > 0x7fffffff)
				luaL_error(L, "template op %d: %s[%d]: {op, "
					      "output} expected",
					   (int)j + 1, field, (int)i + 1);
		} else {
			k = lua_tointeger(L, idx);
		}
		if (k < 0 || (size_t)k > j)
			luaL_error(L, "template op %d: %s[%d]: %d is not the "
				      "site (0) nor an earlier op of the "
				      "template",
				   (int)j + 1, field, (int)i + 1, (int)k);
		r->kind = k ? GE_INS_OP : GE_INS_SITE;
		r->op = k ? (uint32_t)(k - 1) : 0;
		r->index = (int32_t)out;
		return;
	}
	const char *why;
	if (ctl) {
		why = lge_toopin(L, idx, c->G, &r->t.op);
		r->t.index = GE_CONTROL;
	} else {
		why = lge_totensorin(L, idx, c->G, 0, &r->t);
	}
	if (why)
		luaL_error(L, "template op %d: %s[%d]: %s", (int)j + 1, field,
			   (int)i + 1, why);
	r->kind = GE_INS_TENSOR;
}

static ge_ins_ref *read_refs(ctx *c, int spec, size_t j, int ctl,
			     size_t *n)
{
	lua_State *L = c->L;
	const char *field = ctl ? "control_inputs" : "inputs";
	int t = lua_getfield(L, spec, field);
	*n = 0;
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return NULL;
	}
	if (t != LUA_TTABLE)
		luaL_error(L, "template op %d: field '%s' must be a list",
			   (int)j + 1, field);
	*n = lua_rawlen(L, -1);
	ge_ins_ref *r = scratch(c, *n, sizeof *r);
	for (size_t i = 0; i < *n; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i + 1);
		read_ref(c, lua_gettop(L), j, i, ctl, &r[i]);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return r;
}

/* The per-site values of attr `name` from the value at idx (the top of
 * the stack): "position" (the sites' positions, 1, 2, ...), or a list
 * with one value per site, encoded as `attrs` values are (kind, else
 * the OpDef's hint) once per list and kind; integers of an int attr take
 * the short way. */
static void site_values(ctx *c, int idx, size_t j, const char *name,
			const char *kind, const char *hint, ge_ins_attr *a)
{
	lua_State *L = c->L;
	const char *k = kind ? kind : hint;
	int ints = !k || ge_attrkind_parse(k) == GE_AK_I;
	if (lua_type(L, idx) == LUA_TSTRING) {
		if (strcmp(lua_tostring(L, idx), "position") || !ints)
			luaL_error(L, "template op %d: site_attrs.%s must be a "
				      "list or \"position\" (int attrs)",
				   (int)j + 1, name);
		int64_t *v = scratch(c, c->n_sites, sizeof *v);
		for (size_t i = 0; i < c->n_sites; i++)
			v[i] = (int64_t)i + 1;
		a->site_ints = v;
		return;
	}
	const void *key = lua_topointer(L, idx);
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i].key == key && c->seen[i].kind == k) {
			a->site_ints = c->seen[i].a.site_ints;
			a->site_bytes = c->seen[i].a.site_bytes;
			a->site_lens = c->seen[i].a.site_lens;
			return;
		}
	if (lua_rawlen(L, idx) < c->n_sites)
		luaL_error(L, "template op %d: site_attrs.%s must hold one "
			      "value per site (%d)",
			   (int)j + 1, name, (int)c->n_sites);
	for (size_t i = 0; i < c->n_sites && ints; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i + 1);
		ints = lua_isinteger(L, -1);
		lua_pop(L, 1);
	}
	if (ints) {
		int64_t *v = scratch(c, c->n_sites, sizeof *v);
		for (size_t i = 0; i < c->n_sites; i++) {
			lua_rawgeti(L, idx, (lua_Integer)i + 1);
			v[i] = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		a->site_ints = v;
	} else {
		ge_buf *enc = lge_newbuf(L);
		lua_rawseti(L, c->keep, (lua_Integer)lua_rawlen(L, c->keep) + 1);
		size_t *off = scratch(c, c->n_sites + 1, sizeof *off);
		for (size_t i = 0; i < c->n_sites; i++) {
			lua_rawgeti(L, idx, (lua_Integer)i + 1);
			off[i] = enc->len;
			lge_encodeattr(L, lua_gettop(L), name, kind, hint, enc);
			lua_pop(L, 1);
		}
		off[c->n_sites] = enc->len;
		const uint8_t **b = scratch(c, c->n_sites, sizeof *b);
		size_t *len = scratch(c, c->n_sites, sizeof *len);
		for (size_t i = 0; i < c->n_sites; i++) {
			b[i] = enc->data + off[i];
			len[i] = off[i + 1] - off[i];
		}
		a->site_bytes = b;
		a->site_lens = len;
	}
	if (c->n_seen < sizeof c->seen / sizeof c->seen[0])
		c->seen[c->n_seen++] = (struct seen){key, k, *a};
}

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const ge_ins_attr *)a)->name,
		      ((const ge_ins_attr *)b)->name);
}

/* attrs (encoded now, as add_op does) and site_attrs of the spec at
 * spec, sorted by name. */
static ge_ins_attr *read_attrs(ctx *c, int spec, size_t j, const char *type,
			       size_t *n)
{
	lua_State *L = c->L;
	luaL_checkstack(L, 12, "template attrs");
	int attrs = lua_gettop(L) + 1;
	int ta = lua_getfield(L, spec, "attrs");
	int tk = lua_getfield(L, spec, "attr_kinds");
	int ts = lua_getfield(L, spec, "site_attrs");
	if ((ta != LUA_TNIL && ta != LUA_TTABLE) ||
	    (tk != LUA_TNIL && tk != LUA_TTABLE) ||
	    (ts != LUA_TNIL && ts != LUA_TTABLE))
		luaL_error(L, "template op %d: fields 'attrs', 'attr_kinds' "
			      "and 'site_attrs' must be tables",
			   (int)j + 1);
	size_t na = 0;
	for (int t = 0; t < 3; t += 2) {
		if (lua_type(L, attrs + t) != LUA_TTABLE)
			continue;
		lua_pushnil(L);
		while (lua_next(L, attrs + t)) {
			lua_pop(L, 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				luaL_error(L, "template op %d: attr names must "
					      "be strings",
					   (int)j + 1);
			na++;
		}
	}
	ge_ins_attr *a = scratch(c, na, sizeof *a);
	size_t *off = scratch(c, na, sizeof *off);
	ge_buf *enc = lge_newbuf(L);
	lua_rawseti(L, c->keep, (lua_Integer)lua_rawlen(L, c->keep) + 1);
	size_t i = 0;
	for (int t = 0; t < 3; t += 2) {
		if (lua_type(L, attrs + t) != LUA_TTABLE)
			continue;
		lua_pushnil(L);
		while (lua_next(L, attrs + t)) {
			const char *name = lua_tostring(L, -2); /* held */
			for (size_t b = 0; b < i; b++)
				if (!strcmp(a[b].name, name))
					luaL_error(L, "template op %d: attr "
						      "'%s' given twice",
						   (int)j + 1, name);
			a[i].name = name;
			const char *kind = NULL;
			if (lua_type(L, attrs + 1) == LUA_TTABLE &&
			    lua_getfield(L, attrs + 1, name) == LUA_TSTRING)
				kind = lua_tostring(L, -1); /* held */
			if (lua_type(L, attrs + 1) == LUA_TTABLE)
				lua_pop(L, 1);
			const char *hint = lge_opdefkind(c->G->g, type, name);
			if (t == 2) {
				if (lua_type(L, -1) != LUA_TTABLE &&
				    lua_type(L, -1) != LUA_TSTRING)
					luaL_error(L, "template op %d: "
						      "site_attrs.%s must be a "
						      "list or \"position\"",
						   (int)j + 1, name);
				site_values(c, lua_gettop(L), j, name, kind,
					    hint, &a[i]);
				lua_pop(L, 1);
				i++;
				continue;
			}
			off[i] = enc->len;
			lge_encodeattr(L, lua_gettop(L), name, kind, hint, enc);
			a[i].len = enc->len - off[i];
			lua_pop(L, 1);
			i++;
		}
	}
	for (i = 0; i < na; i++)
		if (!a[i].site_ints && !a[i].site_bytes)
			a[i].bytes = enc->data + off[i];
	qsort(a, na, sizeof *a, cmp_attr);
	lua_settop(L, attrs - 1); /* the spec holds the names */
	*n = na;
	return a;
}

/* Reads the template list at idx into t. */
static void read_template(ctx *c, int idx, ge_ins_template *t)
{
	lua_State *L = c->L;
	size_t n = lua_rawlen(L, idx);
	if (!n)
		luaL_error(L, "a template needs at least one op");
	ge_ins_op *ops = scratch(c, n, sizeof *ops);
	for (size_t j = 0; j < n; j++) {
		if (lua_rawgeti(L, idx, (lua_Integer)j + 1) != LUA_TTABLE)
			luaL_error(L, "template op %d: a table expected",
				   (int)j + 1);
		int spec = lua_gettop(L);
		ge_ins_op *o = &ops[j];
		o->type = lge_optfield(L, spec, "type");
		if (!o->type || !*o->type)
			luaL_error(L, "template op %d: field 'type' is required",
				   (int)j + 1);
		o->name = lge_optfield(L, spec, "name");
		if (!o->name) {
			/* "/<type>", kept until the call returns */
			o->name = lua_pushfstring(L, "/%s", o->type);
			lua_rawseti(L, c->keep,
				    (lua_Integer)lua_rawlen(L, c->keep) + 1);
		}
		o->device = lge_optfield(L, spec, "device");
		o->in = read_refs(c, spec, j, 0, &o->n_in);
		o->ctrl = read_refs(c, spec, j, 1, &o->n_ctrl);
		lua_getfield(L, spec, "loop_anchor");
		o->loop_anchor = lua_toboolean(L, -1);
		lua_pop(L, 1);
		o->attrs = read_attrs(c, spec, j, o->type, &o->n_attrs);
		lua_pop(L, 1); /* the template holds the spec and its strings */
	}
	t->ops = ops;
	t->n_ops = n;
	t->out_op = (uint32_t)(n - 1);
	t->out_index = 0;
	int ty = lua_getfield(L, idx, "output");
	if (ty != LUA_TNIL) {
		lua_Integer k = 0, out = 0;
		int ok = 0, ok2 = 1;
		if (ty == LUA_TTABLE) {
			lua_rawgeti(L, -1, 1);
			lua_rawgeti(L, -2, 2);
			k = lua_tointegerx(L, -2, &ok);
			out = lua_tointegerx(L, -1, &ok2);
			lua_pop(L, 2);
		} else {
			k = lua_tointegerx(L, -1, &ok);
		}
		if (!ok || !ok2 || k < 1 || (size_t)k > n || out < 0 ||
		    out > 0x7fffffff)
			luaL_error(L, "template output: an op of the template "
				      "(1 to %d) or {op, output} expected",
				   (int)n);
		t->out_op = (uint32_t)(k - 1);
		t->out_index = (int32_t)out;
	}
	lua_pop(L, 1);
}

static ge_tref *read_sites(ctx *c)
{
	lua_State *L = c->L;
	if (!c->n_sites && lua_getfield(L, c->sites_idx, "types") == LUA_TNIL)
		lua_pop(L, 1);
	else if (!c->n_sites) {
		/* {types = ...}: the ops of those types, as g:ops(types) */
		size_t nt = 1;
		if (lua_type(L, -1) == LUA_TTABLE)
			nt = lua_rawlen(L, -1);
		else if (lua_type(L, -1) != LUA_TSTRING)
			luaL_argerror(L, 2, "types: an op type or a list of them "
					    "expected");
		const char **types = scratch(c, nt, sizeof *types);
		for (size_t i = 0; lua_type(L, -1) == LUA_TTABLE && i < nt; i++) {
			if (lua_rawgeti(L, -1, (lua_Integer)i + 1) !=
			    LUA_TSTRING)
				luaL_argerror(L, 2, "types: a list of op types "
						    "expected");
			types[i] = lua_tostring(L, -1); /* held by the list */
			lua_pop(L, 1);
		}
		if (lua_type(L, -1) == LUA_TSTRING)
			types[0] = lua_tostring(L, -1);
		ge_opvec v = GE_VEC_INIT;
		ge_graph_ops_of_types(c->G->g, types, nt, &v);
		c->n_sites = v.n;
		c->by_type = 1;
		ge_tref *s = scratch(c, v.n, sizeof *s);
		for (size_t k = 0; k < v.n; k++)
			s[k] = (ge_tref){v.v[k], 0};
		ge_opvec_free(&v);
		lua_pop(L, 1);
		return s;
	}
	ge_tref *s = scratch(c, c->n_sites, sizeof *s);
	for (size_t k = 0; k < c->n_sites; k++) {
		lua_rawgeti(L, c->sites_idx, (lua_Integer)k + 1);
		lge_op *o = lge_testop(L, -1);
		const char *why = NULL;
		if (o) {
			if (o->owner != c->G)
				why = "op of another graph";
			s[k] = (ge_tref){o->id, 0};
		} else {
			why = lge_totensorin(L, -1, c->G, 0, &s[k]);
		}
		if (why)
			luaL_argerror(L, 2, lua_pushfstring(L, "sites[%d]: %s",
							    (int)k + 1, why));
		lua_pop(L, 1);
	}
	return s;
}

/* A template per dtype: returns the number, with their dtypes in dts and
 * the templates (read) in t. */
static size_t read_templates(ctx *c, int idx, ge_ins_template **tp,
			     int **dts)
{
	lua_State *L = c->L;
	if (lua_rawlen(L, idx)) {
		*tp = scratch(c, 1, sizeof **tp);
		*dts = NULL;
		read_template(c, idx, *tp);
		return 1;
	}
	size_t n = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		n++;
	}
	if (!n)
		luaL_argerror(L, 3, "a list of ops or a table of them by "
				    "dtype expected");
	ge_ins_template *t = scratch(c, n, sizeof *t);
	int *d = scratch(c, n, sizeof *d);
	size_t i = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int key = lua_gettop(L) - 1;
		lua_pushvalue(L, key);
		d[i] = lge_checkdtype(L, lua_gettop(L));
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TTABLE)
			luaL_argerror(L, 3, "the template of a dtype must be a "
					    "list of ops");
		read_template(c, lua_gettop(L), &t[i++]);
		lua_pop(L, 1);
	}
	*tp = t;
	*dts = d;
	return n;
}

/* [-0, +1] Site k as the caller gave it (an op for {types = ...}). */
static void push_site(ctx *c, const ge_tref *sites, size_t k)
{
	if (c->by_type)
		lge_pushop(c->L, 1, sites[k].op);
	else
		lua_rawgeti(c->L, c->sites_idx, (lua_Integer)k + 1);
}

/* g:insert_after(sites, template [, {skip_unread=, dtype_attr=,
 * outputs=}]) -> {inserted=, skipped=, outputs=} | nil, message, site,
 * dtype */
static int g_insert_after(lua_State *L)
{
	static const char *const known[] = {"skip_unread", "dtype_attr",
					    "outputs", NULL};
	ctx c = {0};
	c.L = L;
	c.G = lge_checkgraph(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TTABLE);
	lge_checkopts(L, 4, known);
	lua_settop(L, 4);
	lua_newtable(L);
	c.keep = 5;
	int skip = 0, outs = 0;
	const char *dattr = NULL;
	if (!lua_isnil(L, 4)) {
		lua_getfield(L, 4, "skip_unread");
		skip = lua_toboolean(L, -1);
		lua_getfield(L, 4, "outputs");
		outs = lua_toboolean(L, -1);
		lua_pop(L, 2);
		dattr = lge_optfield(L, 4, "dtype_attr");
	}
	ge_graph *g = c.G->g;
	c.sites_idx = 2;
	c.n_sites = lua_rawlen(L, 2);
	ge_tref *sites = read_sites(&c);
	ge_ins_template *t;
	int *dts;
	size_t nt = read_templates(&c, 3, &t, &dts);
	uint32_t *st = NULL;
	if (dts) {
		st = scratch(&c, c.n_sites, sizeof *st);
		int *sdt = scratch(&c, c.n_sites, sizeof *sdt);
		ge_insert_site_dtypes(g, sites, c.n_sites, dattr, sdt);
		for (size_t k = 0; k < c.n_sites; k++) {
			int dt = sdt[k];
			size_t i = 0;
			while (i < nt && dts[i] != dt)
				i++;
			if (dt && i < nt) {
				st[k] = (uint32_t)i;
				continue;
			}
			ge_buf *b = lge_newbuf(L);
			const char *x = ge_tensor_fmt(g, sites[k], b);
			lua_pushnil(L);
			if (dt)
				lua_pushfstring(L, "'%s' is %s: the template has "
						   "no case for it",
						x, ge_dtype_name(dt));
			else
				lua_pushfstring(L, "the dtype of '%s' is unknown",
						x);
			push_site(&c, sites, k);
			if (dt)
				lge_pushdtype(L, dt);
			else
				lua_pushnil(L);
			return 4;
		}
	}
	ge_ins_result r;
	ge_error err;
	if (ge_insert_after(g, sites, c.n_sites, t, nt, st,
			    skip ? GE_INS_SKIP_UNREAD : 0, &r, &err))
		return lge_raise(L, &err);
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, (lua_Integer)r.inserted);
	lua_setfield(L, -2, "inserted");
	lua_createtable(L, (int)r.n_skipped, 0);
	for (size_t i = 0; i < r.n_skipped; i++) {
		push_site(&c, sites, r.skipped[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "skipped");
	if (outs) {
		int res = lua_gettop(L);
		lua_createtable(L, (int)c.n_sites, 0);
		for (size_t k = 0; k < c.n_sites; k++) {
			if (r.outputs[k].op == GE_NOOP)
				lua_pushboolean(L, 0);
			else
				lge_pushtensor(L, 1, r.outputs[k]);
			lua_rawseti(L, -2, (lua_Integer)k + 1);
		}
		lua_setfield(L, res, "outputs");
	}
	ge_ins_result_free(&r);
	return 1;
}

void lge_open_insert(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{"insert_after", g_insert_after},
		{NULL, NULL},
	};
	lge_newtype(L, LGE_GRAPH, NULL, methods);
	lua_pop(L, 1);
}
