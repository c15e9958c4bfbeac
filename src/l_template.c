/*
 * l_template.c: replacement templates for ge.rewrite, over lib/match/template.h:
 * m.template(pattern, spec) and the rule field template=.
 *
 * A spec is plain data:
 *   {name = "...",                            -- for messages
 *    same = {{"conv.T", "bias.T"}, ...},      -- conditions
 *    no_control_outputs = {"conv", ...},
 *    ops = {{as =, type = | type_from =, name_from =, name_suffix =,
 *            device = | device_from =, inputs = {refs}, control_inputs =,
 *            attrs = {{"a", from = "label[.attr]"},
 *                     {"a", value [, kind]},  -- fixed, encoded here once
 *                     {"a", {"x", {type_of = "l"}, {attr_of = "l.a"}},
 *                      kind}}}, ...},        -- a list built per site
 *    replace = {from_ref = to_ref, ...}}
 * A bad spec raises one line: "template 'NAME': ENTRY: what is wrong".
 */
#include <stdlib.h>
#include <string.h>

#include "lge.h"
#include "l_template.h"
#include "graph/opattrs.h"
#include "base/opreg.h"
#include "match/template.h"

#include "tensorflow/core/framework/op_def.pb-c.h"

#define LGE_TEMPLATE "gerewrite.template"

typedef struct ltmpl {
	ge_tmpl *t;
	char *name;
} ltmpl;

static int tmpl_gc(lua_State *L)
{
	ltmpl *u = luaL_checkudata(L, 1, LGE_TEMPLATE);
	ge_tmpl_free(u->t);
	free(u->name);
	u->t = NULL;
	u->name = NULL;
	return 0;
}

static int tmpl_tostring(lua_State *L)
{
	ltmpl *u = luaL_checkudata(L, 1, LGE_TEMPLATE);
	lua_pushfstring(L, "template '%s'", u->name ? u->name : "");
	return 1;
}

/* What is being read, for messages. */
typedef struct bctx {
	lua_State *L;
	ge_tmpl *t;
	const char *who;
	char at[160];
} bctx;

static int fail(bctx *b, const char *msg)
{
	return luaL_error(b->L, "template '%s': %s: %s", b->who, b->at, msg);
}

static void check(bctx *b, int rc, const ge_error *err)
{
	if (rc < 0)
		fail(b, err->msg);
}

/* The keys of the table at idx are strings of known, or integers from 1
 * to allow_ints. */
static void known_keys(bctx *b, int idx, const char *const *known,
		       int allow_ints)
{
	lua_State *L = b->L;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		int ok = lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 &&
			 lua_tointeger(L, -1) <= allow_ints;
		if (lua_type(L, -1) == LUA_TSTRING)
			for (const char *const *k = known; *k && !ok; k++)
				ok = !strcmp(*k, lua_tostring(L, -1));
		if (!ok)
			fail(b, lua_pushfstring(L, "unknown field '%s'",
						luaL_tolstring(L, -1, NULL)));
	}
}

/* Optional string field k of the table at idx. */
static const char *str_field(bctx *b, int idx, const char *k)
{
	lua_State *L = b->L;
	int t = lua_getfield(L, idx, k);
	const char *s = NULL;
	if (t == LUA_TSTRING)
		s = lua_tostring(L, -1);
	else if (t != LUA_TNIL)
		fail(b, lua_pushfstring(L, "field '%s' must be a string, not "
					   "%s",
					k, luaL_typename(L, -1)));
	lua_pop(L, 1); /* held by the spec */
	return s;
}

/* Pushes the optional list field k (or nil); its length in *n. */
static int list_field(bctx *b, int idx, const char *k, size_t *n)
{
	lua_State *L = b->L;
	int t = lua_getfield(L, idx, k);
	*n = 0;
	if (t == LUA_TTABLE)
		*n = lua_rawlen(L, -1);
	else if (t != LUA_TNIL)
		fail(b, lua_pushfstring(L, "field '%s' must be a list, not %s",
					k, luaL_typename(L, -1)));
	return lua_gettop(L);
}

/* Element i of the list at idx, which must be a string. */
static const char *str_at(bctx *b, int idx, size_t i)
{
	lua_State *L = b->L;
	if (lua_rawgeti(L, idx, (lua_Integer)i) != LUA_TSTRING)
		fail(b, lua_pushfstring(L, "expected a label (a string), got "
					   "%s",
					luaL_typename(L, -1)));
	const char *s = lua_tostring(L, -1);
	lua_pop(L, 1); /* held by the list */
	return s;
}

static void read_conditions(bctx *b, int spec)
{
	lua_State *L = b->L;
	ge_error err;
	size_t n;
	int same = list_field(b, spec, "same", &n);
	for (size_t i = 1; i <= n; i++) {
		snprintf(b->at, sizeof b->at, "same[%zu]", i);
		if (lua_rawgeti(L, same, (lua_Integer)i) != LUA_TTABLE)
			fail(b, "expected a list of attr references "
				"(\"label.attr\")");
		int g = lua_gettop(L);
		size_t k = lua_rawlen(L, g);
		const char **refs = lua_newuserdatauv(L, (k + 1) * sizeof *refs,
						      0);
		for (size_t j = 1; j <= k; j++)
			refs[j - 1] = str_at(b, g, j);
		check(b, ge_tmpl_require_same(b->t, refs, k, &err), &err);
		lua_settop(L, same);
	}
	int noc = list_field(b, spec, "no_control_outputs", &n);
	for (size_t i = 1; i <= n; i++) {
		snprintf(b->at, sizeof b->at, "no_control_outputs[%zu]", i);
		const char *s = str_at(b, noc, i);
		check(b, ge_tmpl_require_no_control_outputs(b->t, s, &err),
		      &err);
	}
	lua_settop(L, same - 1);
}

/* Encodes the fixed value at idx; raises with the entry on failure. */
static int encode_fixed_k(lua_State *L)
{
	ge_buf *out = lua_touserdata(L, 1);
	lge_encodeattr(L, 2, lua_tostring(L, 3), lua_tostring(L, 4),
		       lua_tostring(L, 5), out);
	return 0;
}

static void encode_fixed(bctx *b, int val, const char *name,
			 const char *kind, const char *hint, ge_buf *out)
{
	lua_State *L = b->L;
	lua_pushcfunction(L, encode_fixed_k);
	lua_pushlightuserdata(L, out);
	lua_pushvalue(L, val);
	lua_pushstring(L, name);
	if (kind)
		lua_pushstring(L, kind);
	else
		lua_pushnil(L);
	if (hint)
		lua_pushstring(L, hint);
	else
		lua_pushnil(L);
	if (lua_pcall(L, 5, 0, 0) != LUA_OK)
		fail(b, lua_tostring(L, -1));
}

/* Whether the value at idx is a list holding references. */
static int has_refs(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return 0;
	if (lua_getmetatable(L, idx)) {
		lua_pop(L, 1);
		return 0;
	}
	size_t n = lua_rawlen(L, idx);
	int refs = 0;
	for (size_t i = 1; i <= n && !refs; i++) {
		if (lua_rawgeti(L, idx, (lua_Integer)i) == LUA_TTABLE) {
			lua_getfield(L, -1, "type_of");
			lua_getfield(L, -2, "attr_of");
			refs = !lua_isnil(L, -1) || !lua_isnil(L, -2);
			lua_pop(L, 2);
		}
		lua_pop(L, 1);
	}
	return refs;
}

static void read_list(bctx *b, int op, const char *name, int val,
		      const char *kind, const char *hint)
{
	lua_State *L = b->L;
	ge_error err;
	const char *k = kind ? kind : hint;
	int ak = k ? ge_attrkind_parse(k) : GE_AK_LIST | GE_AK_S;
	if (ak != (GE_AK_LIST | GE_AK_S) && ak != (GE_AK_LIST | GE_AK_TYPE))
		fail(b, lua_pushfstring(L, "a list with references holds "
					   "strings or types, not %s",
					k));
	size_t n = lua_rawlen(L, val);
	ge_tmpl_elem *el = lua_newuserdatauv(L, (n + 1) * sizeof *el, 0);
	for (size_t i = 1; i <= n; i++) {
		int t = lua_rawgeti(L, val, (lua_Integer)i);
		if (t == LUA_TSTRING) {
			el[i - 1] = (ge_tmpl_elem){GE_TMPL_LIT,
						   lua_tostring(L, -1)};
		} else if (t == LUA_TTABLE) {
			const char *of = str_field(b, -1, "type_of");
			const char *af = str_field(b, -1, "attr_of");
			if (!of == !af)
				fail(b, "a list element is a literal, "
					"{type_of = label} or {attr_of = "
					"\"label.attr\"}");
			el[i - 1] = of ? (ge_tmpl_elem){GE_TMPL_TYPE_OF, of}
				       : (ge_tmpl_elem){GE_TMPL_ATTR_OF, af};
		} else {
			fail(b, lua_pushfstring(L, "list element %d is %s",
						(int)i, luaL_typename(L, -1)));
		}
		lua_pop(L, 1); /* held by the list */
	}
	check(b, ge_tmpl_op_attr_list(b->t, op, name, ak & 0xf, el, n, &err),
	      &err);
	lua_pop(L, 1);
}

static const char *const attr_keys[] = {"from", "kind", NULL};

static void read_attr(bctx *b, int op, const char *type, int e)
{
	lua_State *L = b->L;
	ge_error err;
	if (lua_type(L, e) != LUA_TTABLE)
		fail(b, "expected {name, value [, kind]} or {name, from = "
			"label}");
	known_keys(b, e, attr_keys, 3);
	if (lua_rawgeti(L, e, 1) != LUA_TSTRING)
		fail(b, "the attr's name (a string) comes first");
	const char *name = lua_tostring(L, -1);
	size_t len = strlen(b->at);
	snprintf(b->at + len, sizeof b->at - len, " ('%s')", name);
	const char *from = str_field(b, e, "from");
	const char *kind = str_field(b, e, "kind");
	lua_rawgeti(L, e, 3);
	if (lua_type(L, -1) == LUA_TSTRING)
		kind = lua_tostring(L, -1);
	else if (!lua_isnil(L, -1))
		fail(b, "the kind (third) must be a string");
	int val = lua_rawgeti(L, e, 2) == LUA_TNIL ? 0 : lua_gettop(L);
	if (!from == !val)
		fail(b, "give a value or from = label, not both");
	if (from) {
		check(b, ge_tmpl_op_attr_copy(b->t, op, name, from, &err), &err);
		return;
	}
	/* the kind the OpDef of the new op's type gives the attr */
	const char *hint = NULL;
	const Tensorflow__OpDef *d = type ? ge_opreg_find(type) : NULL;
	for (size_t i = 0; d && i < d->n_attr; i++)
		if (!strcmp(d->attr[i]->name, name))
			hint = d->attr[i]->type;
	if (kind && ge_attrkind_parse(kind) < 0)
		fail(b, lua_pushfstring(L, "unknown kind '%s'", kind));
	if (kind && hint && ge_attrkind_parse(hint) >= 0 &&
	    ge_attrkind_parse(hint) != ge_attrkind_parse(kind))
		fail(b, lua_pushfstring(L, "%s declares it %s, not %s", type,
					hint, kind));
	if (has_refs(L, val)) {
		read_list(b, op, name, val, kind, hint);
		return;
	}
	ge_buf *enc = lge_newbuf(L);
	encode_fixed(b, val, name, kind, hint, enc);
	check(b, ge_tmpl_op_attr_raw(b->t, op, name, enc->data, enc->len, &err),
	      &err);
}

static const char *const op_keys[] = {
	"as", "type", "type_from", "name_from", "name_suffix", "device",
	"device_from", "inputs", "control_inputs", "attrs", NULL};

static void read_op(bctx *b, size_t i, int o)
{
	lua_State *L = b->L;
	ge_error err;
	snprintf(b->at, sizeof b->at, "ops[%zu]", i);
	if (lua_type(L, o) != LUA_TTABLE)
		fail(b, "expected a table");
	known_keys(b, o, op_keys, 0);
	const char *type = str_field(b, o, "type");
	int op = ge_tmpl_add_op(b->t, str_field(b, o, "as"), type,
				str_field(b, o, "type_from"), &err);
	check(b, op, &err);
	const char *nf = str_field(b, o, "name_from");
	const char *suffix = str_field(b, o, "name_suffix");
	if (nf)
		check(b, ge_tmpl_op_name(b->t, op, nf, suffix, &err), &err);
	else if (suffix)
		fail(b, "name_suffix needs name_from");
	const char *dev = str_field(b, o, "device");
	const char *df = str_field(b, o, "device_from");
	if (dev || df)
		check(b, ge_tmpl_op_device(b->t, op, dev, df, &err), &err);
	size_t n;
	int in = list_field(b, o, "inputs", &n);
	for (size_t k = 1; k <= n; k++) {
		snprintf(b->at, sizeof b->at, "ops[%zu].inputs[%zu]", i, k);
		check(b, ge_tmpl_op_input(b->t, op, str_at(b, in, k), &err),
		      &err);
	}
	int ci = list_field(b, o, "control_inputs", &n);
	for (size_t k = 1; k <= n; k++) {
		snprintf(b->at, sizeof b->at, "ops[%zu].control_inputs[%zu]", i,
			 k);
		check(b, ge_tmpl_op_control_input(b->t, op, str_at(b, ci, k),
						  &err),
		      &err);
	}
	int at = list_field(b, o, "attrs", &n);
	for (size_t k = 1; k <= n; k++) {
		snprintf(b->at, sizeof b->at, "ops[%zu].attrs[%zu]", i, k);
		lua_rawgeti(L, at, (lua_Integer)k);
		read_attr(b, op, type, lua_gettop(L));
		lua_settop(L, at);
	}
	lua_settop(L, o);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void read_replace(bctx *b, int spec)
{
	lua_State *L = b->L;
	ge_error err;
	int top = lua_gettop(L);
	snprintf(b->at, sizeof b->at, "replace");
	int t = lua_getfield(L, spec, "replace");
	if (t != LUA_TTABLE)
		fail(b, "a template needs replace = {from = to, ...}");
	int r = lua_gettop(L);
	size_t n = 0;
	lua_pushnil(L);
	while (lua_next(L, r)) {
		lua_pop(L, 1);
		n++;
	}
	const char **keys = lua_newuserdatauv(L, (n + 1) * sizeof *keys, 0);
	n = 0;
	lua_pushnil(L);
	while (lua_next(L, r)) {
		if (lua_type(L, -2) != LUA_TSTRING ||
		    lua_type(L, -1) != LUA_TSTRING)
			fail(b, "replace maps a tensor reference to a tensor "
				"reference (strings)");
		lua_pop(L, 1);
		keys[n++] = lua_tostring(L, -1);
	}
	/* table order is not defined */
	qsort(keys, n, sizeof *keys, cmp_str);
	for (size_t i = 0; i < n; i++) {
		snprintf(b->at, sizeof b->at, "replace['%s']", keys[i]);
		lua_getfield(L, r, keys[i]);
		check(b, ge_tmpl_replace(b->t, keys[i], lua_tostring(L, -1),
					 &err),
		      &err);
		lua_pop(L, 1);
	}
	snprintf(b->at, sizeof b->at, "replace");
	check(b, ge_tmpl_check(b->t, &err), &err);
	lua_settop(L, top);
}

static const char *const spec_keys[] = {
	"name", "same", "no_control_outputs", "ops", "replace", NULL};

ge_tmpl *lge_buildtemplate(lua_State *L, int spec, const ge_pat *p,
			   const char *rule)
{
	spec = lua_absindex(L, spec);
	ltmpl *u = lua_newuserdatauv(L, sizeof *u, 0);
	u->t = NULL;
	u->name = NULL;
	luaL_setmetatable(L, LGE_TEMPLATE);
	int holder = lua_gettop(L);
	u->t = ge_tmpl_new(p);
	bctx b = {L, u->t, rule ? rule : "(unnamed)", "spec"};
	if (lua_type(L, spec) != LUA_TTABLE)
		fail(&b, "expected a table");
	const char *name = str_field(&b, spec, "name");
	if (name)
		b.who = name;
	u->name = ge_xstrdup(b.who);
	known_keys(&b, spec, spec_keys, 0);
	read_conditions(&b, spec);
	size_t n;
	int ops = list_field(&b, spec, "ops", &n);
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, ops, (lua_Integer)i);
		read_op(&b, i, lua_gettop(L));
		lua_settop(L, ops);
	}
	lua_settop(L, holder);
	read_replace(&b, spec);
	return u->t;
}

ge_tmpl *lge_testtemplate(lua_State *L, int idx)
{
	ltmpl *u = luaL_testudata(L, idx, LGE_TEMPLATE);
	if (u && !u->t)
		luaL_error(L, "the template was released");
	return u ? u->t : NULL;
}

/* m.template(pattern, spec) -> a template for ge.rewrite's rules */
int lge_m_template(lua_State *L)
{
	luaL_checktype(L, 2, LUA_TTABLE);
	/* may push the pattern it builds: it stays on the stack */
	ge_pat *p = lge_checkpattern(L, 1);
	lge_buildtemplate(L, 2, p, NULL);
	return 1;
}

void lge_open_template(lua_State *L)
{
	luaL_newmetatable(L, LGE_TEMPLATE);
	lua_pushcfunction(L, tmpl_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, tmpl_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}
