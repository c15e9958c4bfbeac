/*
 * l_match.c: ge.match, the pattern userdata (gerewrite.pattern), the
 * g:matches iterator and ge.rewrite, over lib/match/match.h.
 *
 * Patterns are immutable from Lua, as in LPeg: every modifier returns a
 * new pattern (a copy of the node sharing its children), and anything
 * pattern-like is coerced once where a pattern is expected: a string is
 * m.op(string) (inputs unconstrained), a plain table {types, operands...}
 * is m.op(types, operands...).  The module table is the patterns'
 * __index, so p:as("x") and m.as(p, "x") are the same function.
 *
 * Lua functions held by patterns (where, const predicates, attr
 * predicates) are anchored in the registry by the C pattern node that uses
 * them and released when that node is freed.  They are called through the
 * call context of the binding function running the matcher (`cur`: the
 * Lua state and the graph userdata to push ops with); a failing callback
 * leaves its error on the stack, makes lib/ unwind, and the error is
 * raised again once lib/ has returned.
 */
#include <stdlib.h>
#include <string.h>

#include "lge.h"
#include "l_template.h"
#include "match/match.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

#define LGE_PATTERN "gerewrite.pattern"
#define LGE_MATCHITER "gerewrite.matchiter"
#define LGE_OPINDEX "gerewrite.opindex"

typedef struct lpat {
	ge_pat *p;
} lpat;

/* ------------------------------------------------------------ contexts */

/* The binding call running the matcher: callbacks run in its Lua state
 * and push ops of the graph userdata at gidx.  Nested calls (an action
 * that matches again) stack up through prev. */
typedef struct lctx {
	lua_State *L;
	int gidx;
	int failed; /* a callback failed; its error is on top of L's stack */
	struct lctx *prev;
} lctx;

static lctx *cur;

static void ctx_enter(lctx *x, lua_State *L, int gidx)
{
	x->L = L;
	x->gidx = lua_absindex(L, gidx);
	x->failed = 0;
	x->prev = cur;
	cur = x;
}

static void ctx_leave(lctx *x)
{
	cur = x->prev;
}

/* [-0, +0, e] After lib/ returned rc < 0: raises the callback's error,
 * else lib/'s. */
static int ctx_raise(lua_State *L, lctx *x, const ge_error *err)
{
	if (x->failed)
		return lua_error(L);
	return lge_raise(L, err);
}

/* A Lua function held by a pattern node. */
enum { CB_OP, CB_TENSOR, CB_CONST, CB_ATTR };
typedef struct lcb {
	lua_State *main;
	int ref, kind;
} lcb;

static void lcb_free(void *ud)
{
	lcb *c = ud;
	luaL_unref(c->main, LUA_REGISTRYINDEX, c->ref);
	free(c);
}

/* [-0, +0, -] A callback record for the function at idx. */
static lcb *lcb_new(lua_State *L, int idx, int kind)
{
	lcb *c = ge_xmalloc(sizeof *c);
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	c->main = lua_tothread(L, -1);
	lua_pop(L, 1);
	lua_pushvalue(L, idx);
	c->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	c->kind = kind;
	return c;
}

/* Calls the function with the nargs values above it; 1/0 for its truth,
 * -1 when it fails (the error stays on the stack, x->failed is set). */
static int call_pred(lctx *x, int nargs)
{
	lua_State *L = x->L;
	int st = lua_pcall(L, nargs, 1, 0);
	cur = x; /* whatever a nested call left behind */
	if (st != LUA_OK) {
		x->failed = 1;
		return -1;
	}
	int r = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return r;
}

static int value_pred(const ge_graph *g, ge_tref t, void *ud)
{
	lcb *c = ud;
	lctx *x = cur;
	if (!x || x->failed)
		return -1;
	lua_State *L = x->L;
	if (!lua_checkstack(L, 6))
		return -1;
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
	int nargs = 1;
	if (c->kind == CB_TENSOR && t.index >= 0) {
		lge_pushtensor(L, x->gidx, t);
	} else if (c->kind == CB_CONST) {
		const Tensorflow__AttrValue *v = ge_op_attr(g, t.op, "value",
							    NULL);
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
		    v->tensor)
			lge_pushvalue(L, v->tensor);
		else
			lua_pushnil(L);
		lge_pushop(L, x->gidx, t.op);
		nargs = 2;
	} else {
		lge_pushop(L, x->gidx, t.op);
	}
	return call_pred(x, nargs);
}

static int attr_pred(const ge_graph *g, ge_opid op, const char *attr,
		     const Tensorflow__AttrValue *v, void *ud)
{
	(void)g, (void)attr;
	lcb *c = ud;
	lctx *x = cur;
	if (!x || x->failed)
		return -1;
	lua_State *L = x->L;
	if (!lua_checkstack(L, 6))
		return -1;
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
	if (v) {
		lge_pushattr(L, v);
		lua_pop(L, 1); /* the kind */
	} else {
		lua_pushnil(L);
	}
	lge_pushop(L, x->gidx, op);
	return call_pred(x, 2);
}

/* ------------------------------------------------------------ patterns */

/* [-0, +1, m] Wraps p (taking over the caller's reference). */
static lpat *pushpat(lua_State *L, ge_pat *p)
{
	lpat *u = lua_newuserdatauv(L, sizeof *u, 0);
	u->p = p;
	luaL_setmetatable(L, LGE_PATTERN);
	return u;
}

static int pat_gc(lua_State *L)
{
	lpat *u = luaL_checkudata(L, 1, LGE_PATTERN);
	ge_pat_free(u->p);
	u->p = NULL;
	return 0;
}

static ge_pat *checkpat(lua_State *L, int idx);

/* [-0, +1, e] m.op(types, operands at first .. last) as a new userdata. */
static ge_pat *build_op(lua_State *L, const char *types, int first, int last)
{
	ge_error err;
	ge_pat *p = ge_pat_op(types, &err);
	if (!p)
		luaL_error(L, "%s", err.msg);
	pushpat(L, p);
	for (int i = first; i <= last; i++) {
		ge_pat *q = checkpat(L, i);
		if (ge_pat_add_operand(p, q, &err))
			luaL_error(L, "%s", err.msg);
	}
	return p;
}

/* [-0, +0, e] The pattern at idx, coercing a string or a plain table into
 * a new pattern userdata that replaces the value at idx. */
static ge_pat *checkpat(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lpat *u = luaL_testudata(L, idx, LGE_PATTERN);
	if (u)
		return u->p;
	ge_pat *p = NULL;
	if (lua_type(L, idx) == LUA_TSTRING) {
		p = build_op(L, lua_tostring(L, idx), 1, 0);
	} else if (lua_type(L, idx) == LUA_TTABLE && !lua_getmetatable(L, idx)) {
		lua_Integer n = luaL_len(L, idx);
		if (n < 1 || lua_geti(L, idx, 1) != LUA_TSTRING)
			luaL_error(L, "a table pattern is {types, operands...} "
				      "(its first element must be a string)");
		int base = lua_gettop(L);
		luaL_checkstack(L, (int)n + 4, "too many operands");
		for (lua_Integer i = 2; i <= n; i++)
			lua_geti(L, idx, i);
		p = build_op(L, lua_tostring(L, base), base + 1,
			     base + (int)n - 1);
		lua_replace(L, base);
		lua_settop(L, base);
	} else {
		luaL_error(L, "pattern expected, got %s",
			   luaL_typename(L, idx));
	}
	lua_replace(L, idx);
	return p;
}

/* [-0, +0, v] The pattern argument arg (a pattern userdata only: methods
 * are called on patterns). */
static ge_pat *selfpat(lua_State *L, int arg)
{
	return ((lpat *)luaL_checkudata(L, arg, LGE_PATTERN))->p;
}

/* [-0, +1, m] A copy of the pattern at arg, to modify and return. */
static ge_pat *copyself(lua_State *L, int arg)
{
	ge_pat *p = ge_pat_copy(selfpat(L, arg));
	pushpat(L, p);
	return p;
}

static int check(lua_State *L, int rc, const ge_error *err)
{
	if (rc)
		luaL_error(L, "%s", err->msg);
	return 0;
}

/* m.op(types, operands...) */
static int m_op(lua_State *L)
{
	const char *types = luaL_checkstring(L, 1);
	build_op(L, types, 2, lua_gettop(L));
	return 1;
}

static const char *optname(lua_State *L, int arg)
{
	if (lua_isnoneornil(L, arg))
		return NULL;
	return luaL_checkstring(L, arg);
}

/* m.any([name]) */
static int m_any(lua_State *L)
{
	const char *name = optname(L, 1);
	ge_error err;
	ge_pat *p = ge_pat_any();
	pushpat(L, p);
	if (name)
		check(L, ge_pat_set_capture(p, name, &err), &err);
	return 1;
}

/* m.const([name] [, pred]): pred(value, op) sees the Const's value. */
static int m_const(lua_State *L)
{
	int fn = 0;
	const char *name = NULL;
	if (lua_isfunction(L, 1)) {
		fn = 1;
	} else {
		name = optname(L, 1);
		if (!lua_isnoneornil(L, 2)) {
			luaL_checktype(L, 2, LUA_TFUNCTION);
			fn = 2;
		}
	}
	ge_error err;
	ge_pat *p = ge_pat_const();
	pushpat(L, p);
	if (name)
		check(L, ge_pat_set_capture(p, name, &err), &err);
	if (fn)
		check(L, ge_pat_where(p, value_pred, lcb_new(L, fn, CB_CONST),
				      lcb_free, &err),
		      &err);
	return 1;
}

/* m.ref(name) */
static int m_ref(lua_State *L)
{
	pushpat(L, ge_pat_ref(luaL_checkstring(L, 1)));
	return 1;
}

/* m.commute(types, a, b) */
static int m_commute(lua_State *L)
{
	const char *types = luaL_checkstring(L, 1);
	ge_pat *a = checkpat(L, 2), *b = checkpat(L, 3);
	ge_error err;
	ge_pat *p = ge_pat_commute(types, a, b, &err);
	if (!p)
		return luaL_error(L, "%s", err.msg);
	pushpat(L, p);
	return 1;
}

/* m.optional(p) */
static int m_optional(lua_State *L)
{
	ge_error err;
	ge_pat *p = ge_pat_optional(checkpat(L, 1), &err);
	if (!p)
		return luaL_error(L, "%s", err.msg);
	pushpat(L, p);
	return 1;
}

/* m.rest([p]): p defaults to m.any() */
static int m_rest(lua_State *L)
{
	ge_error err;
	ge_pat *q;
	if (lua_isnoneornil(L, 1)) {
		q = ge_pat_any();
		pushpat(L, q);
		lua_replace(L, 1);
	} else {
		q = checkpat(L, 1);
	}
	ge_pat *p = ge_pat_rest(q, &err);
	if (!p)
		return luaL_error(L, "%s", err.msg);
	pushpat(L, p);
	return 1;
}

/* m.P(x): x coerced to a pattern */
static int m_P(lua_State *L)
{
	checkpat(L, 1);
	lua_settop(L, 1);
	return 1;
}

/* p:as(name) */
static int p_as(lua_State *L)
{
	const char *name = luaL_checkstring(L, 2);
	ge_error err;
	check(L, ge_pat_set_capture(copyself(L, 1), name, &err), &err);
	return 1;
}

/* [-0, +1, m] The registry's empty graph, whose op registry gives the
 * kind of an attr for encoding expected values. */
static ge_graph *hint_graph(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, "gerewrite.match.hints") ==
	    LUA_TNIL) {
		lua_pop(L, 1);
		lge_pushgraph(L, ge_graph_new());
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, "gerewrite.match.hints");
	}
	ge_graph *g = ((lge_graph *)lua_touserdata(L, -1))->g;
	lua_pop(L, 1);
	return g;
}

/* p:where{attr = value | function(value, op)} or p:where(function(x)) */
static int p_where(lua_State *L)
{
	ge_error err;
	int pi = lua_gettop(L) + 1;
	ge_pat *p = copyself(L, 1);
	int kind = ge_pat_kind(p);
	if (lua_isfunction(L, 2)) {
		int k = kind == GE_PAT_ANY || kind == GE_PAT_REF ? CB_TENSOR
								  : CB_OP;
		check(L, ge_pat_where(p, value_pred, lcb_new(L, 2, k), lcb_free,
				      &err),
		      &err);
		lua_settop(L, pi);
		return 1;
	}
	luaL_checktype(L, 2, LUA_TTABLE);
	/* the one op type the pattern names, for the attrs' kinds */
	const char *types = ge_pat_types(p);
	int single = types && !strchr(types, '|');
	if (kind == GE_PAT_CONST) {
		types = "Const";
		single = 1;
	}
	ge_graph *hg = single ? hint_graph(L) : NULL;
	/* sorted keys, so the pattern reads the same every time */
	lua_newtable(L);
	int keys = lua_gettop(L), n = 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "where: attr names must be "
					     "strings (got %s)",
					  luaL_typename(L, -1));
		lua_pushvalue(L, -1);
		lua_rawseti(L, keys, ++n);
	}
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "sort");
	lua_pushvalue(L, keys);
	lua_call(L, 1, 0);
	lua_pop(L, 1);
	ge_buf *b = lge_newbuf(L);
	for (int i = 1; i <= n; i++) {
		lua_rawgeti(L, keys, i);
		const char *name = lua_tostring(L, -1);
		lua_pushvalue(L, -1);
		lua_gettable(L, 2);
		if (lua_isfunction(L, -1)) {
			check(L, ge_pat_where_attr_fn(p, name, attr_pred,
						      lcb_new(L, -1, CB_ATTR),
						      lcb_free, &err),
			      &err);
		} else {
			const char *hint = hg ? lge_opdefkind(hg, types, name)
					      : NULL;
			b->len = 0;
			lge_encodeattr(L, -1, name, NULL, hint, b);
			check(L, ge_pat_where_attr_raw(p, name, b->data, b->len,
						       &err),
			      &err);
		}
		lua_pop(L, 2);
	}
	lua_settop(L, pi);
	return 1;
}

/* p:dtype(t, ...) or p:dtype{t, ...}: any of these dtypes */
static int p_dtype(lua_State *L)
{
	int top = lua_gettop(L);
	ge_pat *p = copyself(L, 1);
	ge_error err;
	for (int i = 2; i <= top; i++) {
		if (lua_istable(L, i)) {
			lua_Integer n = luaL_len(L, i);
			for (lua_Integer k = 1; k <= n; k++) {
				lua_geti(L, i, k);
				int d = lge_checkdtype(L, -1);
				lua_pop(L, 1);
				check(L, ge_pat_dtype(p, &d, 1, &err), &err);
			}
		} else {
			int d = lge_checkdtype(L, i);
			check(L, ge_pat_dtype(p, &d, 1, &err), &err);
		}
	}
	if (top < 2)
		return luaL_error(L, "dtype: no dtype given");
	return 1;
}

/* p:shape{d, ...}: -1 for any size */
static int p_shape(lua_State *L)
{
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_Integer n = luaL_len(L, 2);
	if (n > 4096)
		return luaL_error(L, "shape: rank %d is too large", (int)n);
	ge_pat *p = copyself(L, 1);
	int64_t *dims = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *dims, 0);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, 2, i);
		int isnum;
		lua_Integer d = lua_tointegerx(L, -1, &isnum);
		if (!isnum || d < -1)
			return luaL_error(L, "shape: dimension %d must be an "
					     "integer >= -1",
					  (int)i);
		dims[i - 1] = d;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	ge_error err;
	check(L, ge_pat_shape(p, dims, (int)n, &err), &err);
	return 1;
}

/* p:single_use() */
static int p_single_use(lua_State *L)
{
	ge_error err;
	check(L, ge_pat_single_use(copyself(L, 1), &err), &err);
	return 1;
}

static size_t checkcount(lua_State *L, int arg)
{
	lua_Integer n = luaL_checkinteger(L, arg);
	luaL_argcheck(L, n >= 0, arg, "count must not be negative");
	return (size_t)n;
}

/* p:consumers(min [, max]): max nil for no bound; consumers(n) is exactly
 * n */
static int p_consumers(lua_State *L)
{
	size_t lo = checkcount(L, 2);
	size_t hi = lua_isnone(L, 3) ? lo
		    : lua_isnil(L, 3) ? SIZE_MAX
				      : checkcount(L, 3);
	ge_error err;
	check(L, ge_pat_consumers(copyself(L, 1), lo, hi, &err), &err);
	return 1;
}

/* p:name(regex) */
static int p_name(lua_State *L)
{
	const char *re = luaL_checkstring(L, 2);
	ge_error err;
	check(L, ge_pat_name(copyself(L, 1), re, &err), &err);
	return 1;
}

/* p:control_inputs(): none; (false) or (0): none; (true): at least one;
 * (n): exactly n; (patterns...): control inputs matching them, one each,
 * in any order, and no others. */
static int p_control_inputs(lua_State *L)
{
	int top = lua_gettop(L);
	ge_error err;
	if (top < 2 || lua_isboolean(L, 2) || lua_isinteger(L, 2)) {
		size_t lo = 0, hi = 0;
		if (top >= 2 && lua_isboolean(L, 2) && lua_toboolean(L, 2))
			lo = 1, hi = SIZE_MAX;
		else if (top >= 2 && lua_isinteger(L, 2))
			lo = hi = checkcount(L, 2);
		check(L, ge_pat_control_count(copyself(L, 1), lo, hi, &err),
		      &err);
		return 1;
	}
	for (int i = 2; i <= top; i++)
		checkpat(L, i);
	ge_pat *p = copyself(L, 1);
	for (int i = 2; i <= top; i++)
		check(L, ge_pat_add_control_operand(p, checkpat(L, i), &err),
		      &err);
	return 1;
}

static int p_tostring(lua_State *L)
{
	ge_pat *p = selfpat(L, 1);
	ge_buf *b = lge_newbuf(L);
	ge_buf_adds(b, "pattern ");
	ge_pat_describe(p, b);
	lua_pushlstring(L, (const char *)b->data, b->len);
	return 1;
}

/* ------------------------------------------------------------ matching */

/* [-0, +1, m] The table of a match: its captures by name (ops for op and
 * const patterns, tensors for any), and the root op at [1]. */
static void push_hit(lua_State *L, int gidx, const ge_match *m)
{
	lua_createtable(L, 1, (int)m->n_caps);
	for (size_t i = 0; i < m->n_caps; i++) {
		const ge_capture *c = &m->caps[i];
		if (c->kind == GE_CAP_NONE)
			continue;
		if (c->is_list) {
			/* the variadic tail, one value per input */
			lua_createtable(L, (int)c->n_items, 0);
			for (size_t k = 0; k < c->n_items; k++) {
				if (c->kind == GE_CAP_OP)
					lge_pushop(L, gidx, c->items[k].op);
				else
					lge_pushtensor(L, gidx, c->items[k]);
				lua_rawseti(L, -2, (lua_Integer)k + 1);
			}
		} else if (c->kind == GE_CAP_OP || c->t.index < 0)
			lge_pushop(L, gidx, c->t.op);
		else
			lge_pushtensor(L, gidx, c->t);
		lua_setfield(L, -2, c->name);
	}
	lge_pushop(L, gidx, m->root);
	lua_rawseti(L, -2, 1);
}

/* [-0, +1, v] The graph userdata of the op at arg. */
static lge_op *op_and_graph(lua_State *L, int arg)
{
	lge_op *o = lge_checkop(L, arg);
	lge_pushopgraph(L, arg);
	return o;
}

/* m.match(p, op) -> the match's table, or nil */
static int m_match(lua_State *L)
{
	ge_pat *p = checkpat(L, 1);
	lge_op *o = op_and_graph(L, 2);
	int gidx = lua_gettop(L);
	ge_match m = GE_MATCH_INIT;
	ge_error err;
	lctx x;
	ctx_enter(&x, L, gidx);
	int r = ge_match_at(p, o->owner->g, o->id, &m, &err);
	ctx_leave(&x);
	if (r < 0) {
		ge_match_free(&m);
		return ctx_raise(L, &x, &err);
	}
	if (r == 0)
		lua_pushnil(L);
	else
		push_hit(L, gidx, &m);
	ge_match_free(&m);
	return 1;
}

/* m.explain(p, op) -> text, matched */
static int m_explain(lua_State *L)
{
	ge_pat *p = checkpat(L, 1);
	lge_op *o = op_and_graph(L, 2);
	int gidx = lua_gettop(L);
	ge_buf *b = lge_newbuf(L);
	ge_error err;
	lctx x;
	ctx_enter(&x, L, gidx);
	int r = ge_match_explain(p, o->owner->g, o->id, b, &err);
	ctx_leave(&x);
	if (r < 0)
		return ctx_raise(L, &x, &err);
	lua_pushlstring(L, (const char *)b->data, b->len);
	lua_pushboolean(L, r > 0);
	return 2;
}

/* [-0, +0, m] The type index kept for the graph userdata at gidx (built
 * on first use, rebuilt by lib/ when the graph changed). */
static int index_gc(lua_State *L)
{
	ge_opindex **ix = luaL_checkudata(L, 1, LGE_OPINDEX);
	ge_opindex_free(*ix);
	*ix = NULL;
	return 0;
}

static ge_opindex *graph_index(lua_State *L, int gidx)
{
	gidx = lua_absindex(L, gidx);
	if (luaL_getsubtable(L, LUA_REGISTRYINDEX, "gerewrite.match.index") ==
	    0) {
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "k");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
	}
	lua_pushvalue(L, gidx);
	if (lua_rawget(L, -2) != LUA_TUSERDATA) {
		lua_pop(L, 1);
		ge_opindex **ix = lua_newuserdatauv(L, sizeof *ix, 0);
		*ix = NULL;
		if (luaL_newmetatable(L, LGE_OPINDEX)) {
			lua_pushcfunction(L, index_gc);
			lua_setfield(L, -2, "__gc");
		}
		lua_setmetatable(L, -2);
		*ix = ge_opindex_new();
		lua_pushvalue(L, gidx);
		lua_pushvalue(L, -2);
		lua_rawset(L, -4);
	}
	ge_opindex *ix = *(ge_opindex **)lua_touserdata(L, -1);
	lua_pop(L, 2);
	return ix;
}

typedef struct liter {
	ge_match_iter *it;
	ge_match m;
} liter;

static void iter_close(liter *i)
{
	ge_match_iter_free(i->it);
	i->it = NULL;
	ge_match_free(&i->m);
}

static int iter_gc(lua_State *L)
{
	iter_close(luaL_checkudata(L, 1, LGE_MATCHITER));
	return 0;
}

static int iter_step(lua_State *L)
{
	liter *i = luaL_checkudata(L, lua_upvalueindex(1), LGE_MATCHITER);
	if (!i->it)
		return 0;
	lua_getiuservalue(L, lua_upvalueindex(1), 1);
	int gidx = lua_gettop(L);
	lge_checkgraph(L, gidx);
	ge_error err;
	lctx x;
	ctx_enter(&x, L, gidx);
	int r = ge_match_iter_next(i->it, &i->m, &err);
	ctx_leave(&x);
	if (r < 0) {
		iter_close(i);
		return ctx_raise(L, &x, &err);
	}
	if (r == 0) {
		iter_close(i);
		return 0;
	}
	push_hit(L, gidx, &i->m);
	return 1;
}

static const char *const match_opts[] = {"overlap", NULL};

static int optbool(lua_State *L, int idx, const char *k, int def)
{
	if (lua_isnoneornil(L, idx))
		return def;
	int t = lua_getfield(L, idx, k);
	int v = t == LUA_TNIL ? def : lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* g:matches(p [, {overlap = false}]) -> iterator over match tables, in
 * node order of the roots; overlap = false keeps the non-overlapping
 * ones (greedy in node order). */
static int g_matches(lua_State *L)
{
	lge_checkgraph(L, 1);
	ge_pat *p = checkpat(L, 2);
	lge_checkopts(L, 3, match_opts);
	int flags = optbool(L, 3, "overlap", 1) ? 0 : GE_MATCH_NONOVERLAP;
	ge_graph *g = ((lge_graph *)lua_touserdata(L, 1))->g;
	ge_opindex *ix = graph_index(L, 1);
	liter *i = lua_newuserdatauv(L, sizeof *i, 2);
	memset(i, 0, sizeof *i);
	i->m = (ge_match)GE_MATCH_INIT;
	luaL_setmetatable(L, LGE_MATCHITER);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, 2);
	lua_setiuservalue(L, -2, 2);
	ge_error err;
	if (ge_match_iter_new(p, g, ix, flags, &i->it, &err))
		return lge_raise(L, &err);
	lua_pushcclosure(L, iter_step, 1);
	return 1;
}

ge_pat *lge_checkpattern(lua_State *L, int idx)
{
	return checkpat(L, idx);
}

/* m.matches(g, p [, opts]) */
static int m_matches(lua_State *L)
{
	return g_matches(L);
}

/* ------------------------------------------------------------ rewriting */

typedef struct lrule {
	lctx *x;
	int fn;          /* stack index of the action */
	const char *name;
} lrule;

typedef struct pair {
	ge_tref from, to;
} pair;

static int cmp_pair(const void *a, const void *b)
{
	const pair *x = a, *y = b;
	if (x->from.op != y->from.op)
		return x->from.op < y->from.op ? -1 : 1;
	return (x->from.index > y->from.index) - (x->from.index < y->from.index);
}

/* The tensor the value at idx names: a tensor, an op (its output 0) or
 * "name[:k]"; NULL on success, else a message (pushed). */
static const char *to_tensor(lua_State *L, int idx, lge_graph *G, ge_tref *t)
{
	lge_op *o = lge_testop(L, idx);
	if (o) {
		if (o->owner != G || !ge_op_alive(G->g, o->id))
			return lua_pushfstring(L, "%s is not an op of the graph",
					       luaL_tolstring(L, idx, NULL));
		*t = (ge_tref){o->id, 0};
		return NULL;
	}
	return lge_totensorin(L, idx, G, 0, t);
}

/* Reads the replacements table on top of the stack into r. */
static int read_repl(lua_State *L, lge_graph *G, ge_rewrite_repl *r)
{
	int tbl = lua_gettop(L);
	size_t n = 0, cap = 8;
	pair *v = ge_xmalloc(cap * sizeof *v);
	const char *bad = NULL;
	lua_pushnil(L);
	while (lua_next(L, tbl)) {
		pair q;
		if ((bad = to_tensor(L, -2, G, &q.from)) ||
		    (bad = to_tensor(L, -1, G, &q.to)))
			break;
		lua_pop(L, 1);
		if (n == cap)
			v = ge_xrealloc(v, (cap *= 2) * sizeof *v);
		v[n++] = q;
	}
	if (bad) {
		free(v);
		lua_pushfstring(L, "bad replacement: %s", bad);
		return -1;
	}
	/* table order is not defined: make the edits deterministic */
	qsort(v, n, sizeof *v, cmp_pair);
	for (size_t i = 0; i < n; i++)
		ge_rewrite_replace(r, v[i].from, v[i].to);
	free(v);
	return 0;
}

static int action_cb(ge_graph *g, const ge_match *m, ge_rewrite_repl *r,
		     void *ud, ge_error *err)
{
	(void)err;
	lrule *ru = ud;
	lctx *x = ru->x;
	lua_State *L = x->L;
	if (x->failed)
		return -1;
	if (!lua_checkstack(L, 8))
		return -1;
	int top = lua_gettop(L);
	lua_pushvalue(L, ru->fn);
	push_hit(L, x->gidx, m);
	lua_pushvalue(L, x->gidx);
	int st = lua_pcall(L, 2, 1, 0);
	cur = x;
	int ret = 0;
	if (st != LUA_OK) {
		ret = -1;
	} else if (lua_istable(L, -1) && !lua_getmetatable(L, -1)) {
		lge_graph *G = lua_touserdata(L, x->gidx);
		ret = read_repl(L, G, r) ? -1 : 1;
	} else {
		ret = lua_toboolean(L, -1) ? 1 : 0;
	}
	if (ret < 0) {
		/* the error to raise, with where it happened */
		const char *root = ge_op_name(g, m->root);
		if (lua_type(L, -1) == LUA_TSTRING)
			lua_pushfstring(L, "rule '%s' at '%s': %s", ru->name,
					root, lua_tostring(L, -1));
		else
			lua_pushvalue(L, -1);
		lua_replace(L, top + 1);
		lua_settop(L, top + 1);
		x->failed = 1;
		return -1;
	}
	lua_settop(L, top);
	return ret;
}

static const char *const rewrite_opts[] = {
	"mode", "max_iterations", "allow_remove_consumed", "validate", NULL};

/* ge.rewrite(g, rules [, opts]) -> counts, passes
 *   rules: {{pattern = p, action = fn [, name = s]}, ...} (or {p, fn});
 *          one rule table alone is accepted
 *   opts:  mode = "once" | "fixpoint", max_iterations = N,
 *          allow_remove_consumed = bool, validate = bool (default true)
 *   counts: rewrites per rule, by position and by name */
static int m_rewrite(lua_State *L)
{
	lge_graph *G = lge_checkgraph(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	lge_checkopts(L, 3, rewrite_opts);
	lua_settop(L, 3);
	ge_rewrite_opts o = GE_REWRITE_OPTS_INIT;
	if (!lua_isnil(L, 3)) {
		lua_getfield(L, 3, "mode");
		static const char *const modes[] = {"once", "fixpoint", NULL};
		o.mode = lua_isnil(L, -1) ? GE_REWRITE_ONCE
					  : luaL_checkoption(L, -1, NULL, modes);
		lua_pop(L, 1);
		lua_getfield(L, 3, "max_iterations");
		if (!lua_isnil(L, -1)) {
			lua_Integer k = luaL_checkinteger(L, -1);
			if (k < 1 || k > 1000000)
				return luaL_error(L, "max_iterations must be "
						     "between 1 and 1000000");
			o.max_iterations = (int)k;
		}
		lua_pop(L, 1);
		o.allow_remove_consumed = optbool(L, 3, "allow_remove_consumed",
						  0);
		o.no_validate = !optbool(L, 3, "validate", 1);
	}
	/* one rule alone, or a list of them */
	lua_getfield(L, 2, "pattern");
	lua_getfield(L, 2, "template");
	int single = !lua_isnil(L, -1) || !lua_isnil(L, -2);
	lua_pop(L, 2);
	if (single) {
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, 2);
		lua_rawseti(L, -2, 1);
		lua_replace(L, 2);
	}
	lua_Integer n = luaL_len(L, 2);
	if (n < 1)
		return luaL_error(L, "rewrite: no rules");
	if (n > 10000)
		return luaL_error(L, "rewrite: too many rules");
	luaL_checkstack(L, (int)n * 6 + 10, "too many rules");
	ge_rule *rules = lua_newuserdatauv(L, (size_t)n * sizeof *rules, 0);
	lrule *lr = lua_newuserdatauv(L, (size_t)n * sizeof *lr, 0);
	lctx x;
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_geti(L, 2, i) != LUA_TTABLE)
			return luaL_error(L, "rewrite: rule %d must be a table",
					  (int)i);
		int rt = lua_gettop(L);
		if (lua_getfield(L, rt, "pattern") == LUA_TNIL) {
			lua_pop(L, 1);
			lua_geti(L, rt, 1);
		}
		int pidx = lua_gettop(L);
		lua_getfield(L, rt, "template");
		ge_tmpl *tm = lge_testtemplate(L, -1);
		if (lua_isnil(L, pidx) && tm) {
			/* a made template brings its pattern */
			lua_pushvalue(L, -1);
			lua_replace(L, pidx);
		}
		if (lua_isnil(L, pidx))
			return luaL_error(L, "rewrite: rule %d has no pattern",
					  (int)i);
		ge_pat *p = tm ? (ge_pat *)ge_tmpl_pattern(tm)
			       : checkpat(L, pidx);
		if (tm && lge_testtemplate(L, pidx) != tm &&
		    checkpat(L, pidx) != p)
			return luaL_error(L, "rewrite: rule %d: its template "
					     "was made for another pattern",
					  (int)i);
		int tidx = lua_isnil(L, -1) ? 0 : lua_gettop(L);
		const char *name;
		if (lua_getfield(L, rt, "name") == LUA_TSTRING)
			name = lua_tostring(L, -1);
		else
			name = lua_pushfstring(L, "rule %d", (int)i);
		if (tidx) {
			if (lua_getfield(L, rt, "action") != LUA_TNIL)
				return luaL_error(L, "rewrite: rule %d has an "
						     "action and a template",
						  (int)i);
			if (!tm)
				tm = lge_buildtemplate(L, tidx, p, name);
			/* rt, pattern, template and name stay on the stack */
			rules[i - 1] = (ge_rule){name, p, ge_tmpl_action, tm};
			lr[i - 1] = (lrule){&x, 0, name};
			continue;
		}
		lua_pop(L, 1); /* the template field: nil */
		if (lua_getfield(L, rt, "action") == LUA_TNIL) {
			lua_pop(L, 1);
			lua_geti(L, rt, 2);
		}
		if (!lua_isfunction(L, -1))
			return luaL_error(L, "rewrite: rule %d needs an action "
					     "function or a template",
					  (int)i);
		int fidx = lua_gettop(L);
		/* rt, pattern, name and action stay on the stack */
		lua_pushstring(L, name);
		name = lua_tostring(L, -1);
		rules[i - 1] = (ge_rule){name, p, action_cb, &lr[i - 1]};
		lr[i - 1] = (lrule){&x, fidx, name};
	}
	int gidx = 1;
	size_t *counts = lua_newuserdatauv(L, (size_t)n * sizeof *counts, 0);
	size_t passes = 0;
	ge_error err;
	ctx_enter(&x, L, gidx);
	int rc = ge_rewrite(G->g, rules, (size_t)n, &o, counts, &passes, &err);
	ctx_leave(&x);
	if (rc < 0)
		return ctx_raise(L, &x, &err);
	lua_createtable(L, (int)n, (int)n);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_pushinteger(L, (lua_Integer)counts[i - 1]);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, i);
		lua_setfield(L, -2, rules[i - 1].name);
	}
	lua_pushinteger(L, (lua_Integer)passes);
	return 2;
}

/* ------------------------------------------------------------ module */

static const luaL_Reg match_funcs[] = {
	{"op", m_op},
	{"any", m_any},
	{"const", m_const},
	{"ref", m_ref},
	{"commute", m_commute},
	{"optional", m_optional},
	{"rest", m_rest},
	{"P", m_P},
	{"match", m_match},
	{"explain", m_explain},
	{"matches", m_matches},
	{"rewrite", m_rewrite},
	{"template", lge_m_template},
	/* methods of patterns, also callable as m.as(p, ...) */
	{"as", p_as},
	{"where", p_where},
	{"dtype", p_dtype},
	{"shape", p_shape},
	{"single_use", p_single_use},
	{"consumers", p_consumers},
	{"name", p_name},
	{"control_inputs", p_control_inputs},
	{NULL, NULL},
};

static const luaL_Reg pat_meta[] = {
	{"__gc", pat_gc},
	{"__tostring", p_tostring},
	{NULL, NULL},
};

static const luaL_Reg graph_methods[] = {
	{"matches", g_matches},
	{NULL, NULL},
};

void lge_open_match(lua_State *L)
{
	int mod = lua_gettop(L);
	luaL_newlib(L, match_funcs);
	int m = lua_gettop(L);
	luaL_newmetatable(L, LGE_PATTERN);
	luaL_setfuncs(L, pat_meta, 0);
	lua_pushvalue(L, m);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lge_open_template(L);
	luaL_newmetatable(L, LGE_MATCHITER);
	lua_pushcfunction(L, iter_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lge_newtype(L, LGE_GRAPH, NULL, graph_methods);
	lua_pushvalue(L, m);
	lua_setfield(L, mod, "match");
	lua_getfield(L, m, "rewrite");
	lua_setfield(L, mod, "rewrite");
	lua_settop(L, mod);
}
