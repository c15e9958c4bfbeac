/*
 * l_opmatcher.c: ge.OpMatcher and ge.op_type, graph_editor's small op
 * matcher (its tests' match.py) over lib/editor/opmatcher.h.
 *
 * A matcher userdata (gerewrite.opmatcher) owns one reference to its C
 * matcher and has two user values: the filter it was made from (a regex
 * string, an op, a type list, a function or true) and the set of the
 * matcher userdata it holds as sub-matchers.  The C parent references the
 * C children by itself; the set is there because a child's filter may
 * point into the child's userdata block (a Lua function, an op), which
 * must therefore live as long as any parent does.
 *
 * A Lua function filter is a C callback whose data is the matcher's block;
 * the function itself is found under that block's address in a weak-valued
 * registry table (weak, so a function closing over its own matcher does not
 * keep it alive forever).  Callbacks run in the call context of the
 * binding call doing the match (`cur`, as in l_match.c): a failing
 * callback leaves its error on the stack, makes lib/ unwind, and the error
 * is raised again once lib/ has returned.
 *
 * Sub-matchers cannot form a cycle: the C matchers are reference counted,
 * so a cycle would never be freed, and a matcher containing itself can
 * only recurse until lib/'s depth limit anyway.
 */
#include <string.h>

#include "lge.h"
#include "editor/opmatcher.h"

#define LGE_OPMATCHER "gerewrite.opmatcher"
#define FNS_KEY "gerewrite.opmatcher.fns"

enum { K_ANY, K_REGEX, K_OP, K_TYPES, K_FN };

typedef struct lom {
	ge_opmatcher *m; /* NULL once collected */
	int kind;
	lge_graph *opg; /* K_OP: the op's graph, kept alive by user value 1 */
	ge_opid opid;
	int n_in, n_cin, n_out; /* -1 until set */
} lom;

/* ------------------------------------------------------------ contexts */

typedef struct call_ctx {
	lua_State *L;
	int gidx;       /* the graph userdata of the op being matched */
	int fns;        /* the registry table of Lua filters */
	lge_graph *G;
	int failed;     /* a callback failed; its error is on top of L's stack */
} call_ctx;

static call_ctx *cur;

static int fail(call_ctx *c, const char *msg)
{
	if (msg)
		lua_pushstring(c->L, msg);
	c->failed = 1;
	return -1;
}

/* The filter of a matcher made from a Lua function. */
static int lua_filter(const ge_graph *g, ge_opid op, void *ud)
{
	call_ctx *c = cur;
	(void)g;
	if (!c || c->failed)
		return -1;
	lua_State *L = c->L;
	if (!lua_checkstack(L, 4))
		return fail(c, "stack overflow in an OpMatcher filter");
	lua_rawgetp(L, c->fns, ud);
	lge_pushop(L, c->gidx, op);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK)
		return fail(c, NULL); /* the error stays on the stack */
	int r = lua_toboolean(L, -1);
	lua_pop(L, 1);
	/* lib/ goes on reading the graph after we return */
	if (!c->G->g)
		return fail(c, "an OpMatcher filter closed the graph");
	return r;
}

/* The filter of a matcher made from an op: that op of that graph (lib/'s
 * op filter compares ids only, which other graphs reuse). */
static int op_filter(const ge_graph *g, ge_opid op, void *ud)
{
	lom *o = ud;
	return o->opg->g == g && o->opid == op;
}

/* ------------------------------------------------------------ op_type */

/* [-0, +1, v] The type list of op_type's argument at idx (a string or a
 * list of strings), as a new list. */
static void checktypes(lua_State *L, int idx, const char *fname)
{
	idx = lua_absindex(L, idx);
	lua_newtable(L);
	if (lua_type(L, idx) == LUA_TSTRING) {
		lua_pushvalue(L, idx);
		lua_rawseti(L, -2, 1);
		return;
	}
	if (lua_type(L, idx) != LUA_TTABLE)
		luaL_error(L, "bad argument #1 to '%s' (op type name or list "
			      "of names expected, got %s)",
			   fname, luaL_typename(L, idx));
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_rawgeti(L, idx, i) != LUA_TSTRING)
			luaL_error(L, "bad argument #1 to '%s' (item %d of the "
				      "type list is a %s, not a string)",
				   fname, (int)i, luaL_typename(L, -1));
		lua_rawseti(L, -2, i);
	}
}

static int type_in(lua_State *L, int list, const char *type)
{
	lua_Integer n = (lua_Integer)lua_rawlen(L, list);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, list, i);
		int eq = strcmp(lua_tostring(L, -1), type) == 0;
		lua_pop(L, 1);
		if (eq)
			return 1;
	}
	return 0;
}

static lge_op *checkopat(lua_State *L, int idx, const char *what)
{
	if (!lge_testop(L, idx))
		luaL_error(L, "bad argument #1 to '%s' (gerewrite.op expected, "
			      "got %s)",
			   what, luaL_typename(L, idx));
	return lge_checkop(L, idx);
}

/* The predicate returned by op_type(types); upvalue 1 is the type list.
 * OpMatcher recognises it and matches the types in C. */
static int ot_pred(lua_State *L)
{
	lge_op *o = checkopat(L, 1, "op_type predicate");
	lua_pushboolean(L, type_in(L, lua_upvalueindex(1),
				   ge_op_type(o->owner->g, o->id)));
	return 1;
}

/* op_type(types [, op]): whether op's type is one of types, compared
 * exactly (decision 11); without op, that test as a function. */
static int m_op_type(lua_State *L)
{
	lua_settop(L, 2);
	checktypes(L, 1, "op_type");
	if (lua_isnil(L, 2)) {
		lua_pushcclosure(L, ot_pred, 1);
		return 1;
	}
	if (!lge_testop(L, 2))
		luaL_error(L, "bad argument #2 to 'op_type' (gerewrite.op "
			      "expected, got %s)",
			   luaL_typename(L, 2));
	lge_op *o = lge_checkop(L, 2);
	lua_pushboolean(L, type_in(L, 3, ge_op_type(o->owner->g, o->id)));
	return 1;
}

/* ------------------------------------------------------------ matchers */

static lom *testom(lua_State *L, int idx)
{
	return luaL_testudata(L, idx, LGE_OPMATCHER);
}

static lom *checkom(lua_State *L, int idx)
{
	lom *o = luaL_checkudata(L, idx, LGE_OPMATCHER);
	if (!o->m)
		luaL_error(L, "the OpMatcher was collected");
	return o;
}

/* [-0, +1, v] OpMatcher(filter) for the value at idx. */
static lom *newom(lua_State *L, int idx)
{
	ge_error err;
	idx = lua_absindex(L, idx);
	lom *o = lua_newuserdatauv(L, sizeof *o, 2);
	memset(o, 0, sizeof *o);
	o->n_in = o->n_cin = o->n_out = -1;
	luaL_setmetatable(L, LGE_OPMATCHER);
	int self = lua_gettop(L);
	o->m = ge_opmatcher_new();

	int t = lua_type(L, idx);
	if (t == LUA_TBOOLEAN && lua_toboolean(L, idx)) {
		o->kind = K_ANY;
	} else if (t == LUA_TSTRING) {
		o->kind = K_REGEX;
		if (ge_opmatcher_add_regex(o->m, lua_tostring(L, idx), &err))
			lge_raise(L, &err);
	} else if (lge_testop(L, idx)) {
		lge_op *op = lge_checkop(L, idx);
		o->kind = K_OP;
		o->opg = op->owner;
		o->opid = op->id;
		ge_opmatcher_add_fn(o->m, op_filter, o);
	} else if (lua_tocfunction(L, idx) == ot_pred) {
		o->kind = K_TYPES;
		lua_getupvalue(L, idx, 1);
		int list = lua_gettop(L);
		size_t n = lua_rawlen(L, list);
		const char **types =
			lua_newuserdatauv(L, (n ? n : 1) * sizeof *types, 0);
		for (size_t i = 0; i < n; i++) {
			lua_rawgeti(L, list, (lua_Integer)i + 1);
			types[i] = lua_tostring(L, -1); /* held by the list */
			lua_pop(L, 1);
		}
		ge_opmatcher_add_types(o->m, types, n);
		lua_pop(L, 1);
		lua_setiuservalue(L, self, 1); /* the list, for tostring */
		return o;
	} else if (lge_callable(L, idx)) {
		o->kind = K_FN;
		lua_getfield(L, LUA_REGISTRYINDEX, FNS_KEY);
		lua_pushvalue(L, idx);
		lua_rawsetp(L, -2, o);
		lua_pop(L, 1);
		ge_opmatcher_add_fn(o->m, lua_filter, o);
	} else {
		luaL_error(L, "cannot make an OpMatcher from %s %s (expected a "
			      "regex, an op, a function or true)",
			   t == LUA_TBOOLEAN ? "the value" : "a",
			   t == LUA_TBOOLEAN ? "false" : luaL_typename(L, idx));
	}
	lua_pushvalue(L, idx);
	lua_setiuservalue(L, self, 1);
	return o;
}

static int m_opmatcher(lua_State *L)
{
	luaL_checkany(L, 1);
	newom(L, 1);
	return 1;
}

static int om_gc(lua_State *L)
{
	lom *o = lua_touserdata(L, 1);
	if (!o->m)
		return 0;
	ge_opmatcher_free(o->m);
	o->m = NULL;
	if (o->kind == K_FN &&
	    lua_getfield(L, LUA_REGISTRYINDEX, FNS_KEY) == LUA_TTABLE) {
		lua_pushnil(L);
		lua_rawsetp(L, -2, o);
	}
	return 0;
}

/* Whether the matcher userdata at idx is target or holds it, at any depth
 * (iteratively: a chain of matchers may be long). */
static int reaches(lua_State *L, int idx, lom *target)
{
	int found = 0;
	lua_newtable(L); /* seen */
	int seen = lua_gettop(L);
	lua_newtable(L); /* work list */
	int work = lua_gettop(L);
	lua_Integer n = 0;
	lua_pushvalue(L, idx);
	lua_rawseti(L, work, ++n);
	while (n > 0 && !found) {
		lua_rawgeti(L, work, n);
		lua_pushnil(L);
		lua_rawseti(L, work, n--);
		if (lua_touserdata(L, -1) == target) {
			found = 1;
		} else if (lua_rawgetp(L, seen, lua_touserdata(L, -2)),
			   !lua_toboolean(L, -1)) {
			lua_pop(L, 1);
			lua_pushboolean(L, 1);
			lua_rawsetp(L, seen, lua_touserdata(L, -2));
			if (lua_getiuservalue(L, -1, 2) == LUA_TTABLE) {
				lua_pushnil(L);
				while (lua_next(L, -2)) {
					lua_pop(L, 1);
					lua_pushvalue(L, -1);
					lua_rawseti(L, work, ++n);
				}
			}
			lua_pop(L, 1);
		} else {
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
	return found;
}

/* Converts one entry of a setter's arguments at idx and appends it to the
 * list at tmp (false for a skip).  A value that is not a matcher becomes
 * OpMatcher(value). */
static void collect(lua_State *L, int self, int idx, int tmp, lua_Integer *k)
{
	idx = lua_absindex(L, idx);
	if (lua_isnil(L, idx)) {
		lua_pushboolean(L, 0);
	} else if (testom(L, idx)) {
		checkom(L, idx);
		if (reaches(L, idx, lua_touserdata(L, self)))
			luaL_error(L, "an OpMatcher cannot contain itself");
		lua_pushvalue(L, idx);
	} else {
		newom(L, idx);
	}
	lua_rawseti(L, tmp, ++*k);
}

/* The C matchers of the list at tmp (NULL for false), in a scratch
 * userdata left on the stack. */
static ge_opmatcher **tmp_array(lua_State *L, int tmp, lua_Integer n)
{
	ge_opmatcher **v = lua_newuserdatauv(
		L, (size_t)(n ? n : 1) * sizeof *v, 0);
	for (lua_Integer i = 0; i < n; i++) {
		lua_rawgeti(L, tmp, i + 1);
		lom *c = testom(L, -1);
		v[i] = c ? c->m : NULL;
		lua_pop(L, 1);
	}
	return v;
}

/* Records the matchers of the list at tmp as children of self. */
static void adopt(lua_State *L, int self, int tmp, lua_Integer n)
{
	if (lua_getiuservalue(L, self, 2) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, self, 2);
	}
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_rawgeti(L, tmp, i) == LUA_TUSERDATA) {
			lua_pushboolean(L, 1);
			lua_rawset(L, -3);
		} else {
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
}

/* input_ops(...) and control_input_ops(...). */
static int set_inputs(lua_State *L, int control)
{
	ge_error err;
	lom *o = checkom(L, 1);
	const char *what = control ? "control_input_ops" : "input_ops";
	if ((control ? o->n_cin : o->n_in) >= 0)
		return luaL_error(L, "%s is already set.", what);
	int top = lua_gettop(L);
	lua_newtable(L);
	int tmp = lua_gettop(L);
	lua_Integer k = 0;
	for (int i = 2; i <= top; i++)
		collect(L, 1, i, tmp, &k);
	ge_opmatcher **v = tmp_array(L, tmp, k);
	int rc = control ?
		ge_opmatcher_control_input_ops(o->m, v, (size_t)k, &err) :
		ge_opmatcher_input_ops(o->m, v, (size_t)k, &err);
	if (rc)
		return lge_raise(L, &err);
	adopt(L, 1, tmp, k);
	*(control ? &o->n_cin : &o->n_in) = (int)k;
	lua_settop(L, 1);
	return 1;
}

static int om_input_ops(lua_State *L)
{
	return set_inputs(L, 0);
}

static int om_control_input_ops(lua_State *L)
{
	return set_inputs(L, 1);
}

/* A list entry of output_ops: a table that is not callable. */
static int is_list(lua_State *L, int idx)
{
	return lua_type(L, idx) == LUA_TTABLE && !lge_callable(L, idx);
}

/* output_ops(...): one entry per output; nil skips the output, a list
 * gives the matchers of its consumers in order (its length is `n` when
 * that field is set, so nil items can be written with table.pack), and
 * anything else is a one-item list. */
static int om_output_ops(lua_State *L)
{
	ge_error err;
	lom *o = checkom(L, 1);
	if (o->n_out >= 0)
		return luaL_error(L, "output_ops is already set.");
	int top = lua_gettop(L);
	int nout = top - 1;
	size_t *lens = lua_newuserdatauv(
		L, (size_t)(nout ? nout : 1) * sizeof *lens, 0);
	lua_newtable(L);
	int tmp = lua_gettop(L);
	lua_Integer k = 0;
	for (int i = 2; i <= top; i++) {
		lua_Integer before = k;
		if (lua_isnil(L, i)) {
			lens[i - 2] = GE_MATCH_ANY;
			continue;
		}
		if (!is_list(L, i)) {
			collect(L, 1, i, tmp, &k);
			lens[i - 2] = 1;
			continue;
		}
		lua_Integer n;
		if (lua_getfield(L, i, "n") == LUA_TNUMBER &&
		    lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0)
			n = lua_tointeger(L, -1);
		else
			n = (lua_Integer)lua_rawlen(L, i);
		lua_pop(L, 1);
		for (lua_Integer j = 1; j <= n; j++) {
			lua_rawgeti(L, i, j);
			collect(L, 1, -1, tmp, &k);
			lua_pop(L, 1);
		}
		lens[i - 2] = (size_t)(k - before);
	}
	ge_opmatcher **flat = tmp_array(L, tmp, k);
	ge_opmatcher *const **lists = lua_newuserdatauv(
		L, (size_t)(nout ? nout : 1) * sizeof *lists, 0);
	size_t off = 0;
	for (int i = 0; i < nout; i++) {
		lists[i] = flat + off;
		if (lens[i] != GE_MATCH_ANY)
			off += lens[i];
	}
	if (ge_opmatcher_output_ops(o->m, (ge_opmatcher *const *const *)lists,
				    lens, (size_t)nout, &err))
		return lge_raise(L, &err);
	adopt(L, 1, tmp, k);
	o->n_out = nout;
	lua_settop(L, 1);
	return 1;
}

/* m(op) -> boolean */
static int om_call(lua_State *L)
{
	ge_error err;
	lom *o = checkom(L, 1);
	if (!lge_testop(L, 2))
		return luaL_error(L, "bad argument #1 to 'OpMatcher' "
				     "(gerewrite.op expected, got %s)",
				  luaL_typename(L, 2));
	lge_op *op = lge_checkop(L, 2);
	lua_settop(L, 2);
	lge_pushopgraph(L, 2);
	lua_getfield(L, LUA_REGISTRYINDEX, FNS_KEY);
	call_ctx c = {L, 3, 4, op->owner, 0};
	call_ctx *saved = cur;
	cur = &c;
	int r = ge_opmatcher_match(o->m, op->owner->g, op->id, &err);
	cur = saved;
	if (r < 0)
		return c.failed ? lua_error(L) : lge_raise(L, &err);
	lua_pushboolean(L, r);
	return 1;
}

static void addcount(luaL_Buffer *b, int *first, int n, const char *what)
{
	char s[64];
	if (n < 0)
		return;
	snprintf(s, sizeof s, "%s%d %s%s", *first ? " with " : ", ", n, what,
		 n == 1 ? "" : "s");
	luaL_addstring(b, s);
	*first = 0;
}

static int om_tostring(lua_State *L)
{
	lom *o = checkom(L, 1);
	lua_settop(L, 1);
	lua_getiuservalue(L, 1, 1);
	const char *opname = NULL;
	if (o->kind == K_OP)
		opname = o->opg->g ? ge_op_name(o->opg->g, o->opid) : "?";
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "opmatcher (");
	switch (o->kind) {
	case K_ANY:
		luaL_addstring(&b, "any");
		break;
	case K_REGEX:
		luaL_addstring(&b, "regex ");
		lge_addquoted(&b, lua_tostring(L, 2));
		break;
	case K_OP:
		luaL_addstring(&b, "op ");
		lge_addquoted(&b, opname);
		break;
	case K_TYPES: {
		luaL_addstring(&b, "op_type");
		lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
		for (lua_Integer i = 1; i <= n; i++) {
			lua_rawgeti(L, 2, i);
			const char *s = lua_tostring(L, -1); /* held by the list */
			lua_pop(L, 1);
			luaL_addstring(&b, i == 1 ? " " : ", ");
			lge_addquoted(&b, s);
		}
		break;
	}
	default:
		luaL_addstring(&b, "function");
	}
	luaL_addchar(&b, ')');
	int first = 1;
	addcount(&b, &first, o->n_in, "input matcher");
	addcount(&b, &first, o->n_cin, "control input matcher");
	addcount(&b, &first, o->n_out, "output");
	luaL_pushresult(&b);
	return 1;
}

void lge_open_opmatcher(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{"__call", om_call},
		{"__tostring", om_tostring},
		{"__gc", om_gc},
		{NULL, NULL},
	};
	static const luaL_Reg methods[] = {
		{"input_ops", om_input_ops},
		{"control_input_ops", om_control_input_ops},
		{"output_ops", om_output_ops},
		{NULL, NULL},
	};
	int mod = lua_gettop(L);
	lge_newtype(L, LGE_OPMATCHER, meta, methods);
	lua_getfield(L, -1, "__methods");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);

	lua_newtable(L);
	lua_newtable(L);
	lua_pushliteral(L, "v");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_setfield(L, LUA_REGISTRYINDEX, FNS_KEY);

	lua_pushcfunction(L, m_opmatcher);
	lua_setfield(L, mod, "OpMatcher");
	lua_pushcfunction(L, m_op_type);
	lua_setfield(L, mod, "op_type");
}
