/*
 * l_run.c: running models from Lua (lib/exec/verify.h): the runner's
 * tensors are tensor values (gerewrite.value, l_attr.c) on this side.
 *
 *   ge.run(g, feeds [, fetches [, opts]])  -> values
 *   ge.verify(a, b [, opts])               -> result | nil, err, kind
 *   ge.load_npy(path)                      -> value | nil, err, kind
 *   value:save_npy(path)                   -> true | nil, err, kind
 *
 * feeds maps an input (a signature key or tensor name) to a tensor
 * value, a Lua number, boolean or (nested) list converted to the input's
 * dtype, or a string the command line would take after NAME= ("@x.npy",
 * "1x3:float32", "[1,2]").  Inputs not fed get seeded data as in eval.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "exec/verify.h"
#include "exec/xconvert.h"
#include "lge.h"
#include "base/tensor.h"

/* ------------------------------------------------------------ values */

/* [-0, +1, m] The tensor as a tensor value. */
static void push_xt(lua_State *L, const ge_xt *t)
{
	ge_buf *b = lge_newbuf(L);
	ge_error err;
	if (ge_xt_to_proto(t, b, &err)) {
		ge_buf_free(b);
		lge_raise(L, &err);
	}
	lge_pushvaluebytes(L, b->data, b->len);
	ge_buf_free(b);
	lua_remove(L, -2);
}

/* The tensor value at idx as a new runner tensor (owned); raises. */
static ge_xt *value_xt(lua_State *L, int idx, const char *what)
{
	const struct Tensorflow__TensorProto *p = lge_checkvalue(L, idx);
	ge_xt *t;
	ge_error err;
	if (ge_xt_from_proto(p, NULL, what, &t, &err))
		lge_raise(L, &err);
	return t;
}

/* [-0, +0, e] The Lua value at idx made a tensor for port p: a tensor
 * value as it is, a number, boolean or list through ge.tensor_value
 * with p's dtype (a number or boolean filling p's shape).  NULL for a
 * string (a command-line value, left to the caller). */
static ge_xt *lua_xt(lua_State *L, int idx, const ge_xport *p,
		     const char *name)
{
	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) == LUA_TSTRING)
		return NULL;
	if (luaL_testudata(L, idx, LGE_VALUE))
		return value_xt(L, idx, name);
	int dt = p && p->dtype ? p->dtype : 1;
	for (const luaL_Reg *r = lge_attr_funcs; r->name; r++)
		if (!strcmp(r->name, "tensor_value"))
			lua_pushcfunction(L, r->func);
	lua_pushstring(L, ge_dtype_name(dt));
	if (p && p->rank > 0 && lua_type(L, idx) != LUA_TTABLE) {
		lua_createtable(L, p->rank, 0);
		for (int i = 0; i < p->rank; i++) {
			lua_pushinteger(L, p->dims[i] >= 0 ? p->dims[i] : 1);
			lua_rawseti(L, -2, i + 1);
		}
	} else {
		lua_pushnil(L);
	}
	lua_pushvalue(L, idx);
	lua_call(L, 3, 1);
	ge_xt *t = value_xt(L, -1, name);
	lua_pop(L, 1);
	return t;
}

/* The feeds table at idx against interface f: tensors for the inputs
 * (made, their tensors owned by the caller) and command-line strings
 * (specs, "name=value" on the Lua stack's buffer). */
struct lfeeds {
	ge_xmade *made;
	size_t nmade;
	const char **specs;
	size_t nspecs;
};

static void lfeeds_free(struct lfeeds *lf)
{
	for (size_t i = 0; i < lf->nmade; i++)
		ge_xt_unref(lf->made[i].t);
	free(lf->made);
	free(lf->specs);
	memset(lf, 0, sizeof *lf);
}

/* What a call holds in C while it may raise: a userdata whose __gc frees
 * it, so that an error in a feed leaks nothing.  Its user value keeps
 * the spec strings alive. */
struct scratch {
	struct lfeeds lf;
	ge_xiface f;
	const char **outputs, **map;
};

static void scratch_free(struct scratch *s)
{
	lfeeds_free(&s->lf);
	ge_xiface_free(&s->f);
	free(s->outputs);
	free(s->map);
	memset(s, 0, sizeof *s);
}

static int scratch_gc(lua_State *L)
{
	scratch_free(lua_touserdata(L, 1));
	return 0;
}

/* [-0, +1, m] */
static struct scratch *new_scratch(lua_State *L)
{
	struct scratch *s = lua_newuserdatauv(L, sizeof *s, 1);
	memset(s, 0, sizeof *s);
	if (luaL_newmetatable(L, "gerewrite.runscratch")) {
		lua_pushcfunction(L, scratch_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return s;
}

/* The spec strings go to a table kept as the user value of the scratch
 * userdata at sidx. */
static void read_feeds(lua_State *L, int idx, const ge_xiface *f,
		       struct lfeeds *lf, int sidx)
{
	memset(lf, 0, sizeof *lf);
	lua_newtable(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, sidx, 1);
	int keep = lua_gettop(L);
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	size_t n = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		n++;
		lua_pop(L, 1);
	}
	lf->made = ge_xcalloc(n + 1, sizeof *lf->made);
	lf->specs = ge_xcalloc(n + 1, sizeof *lf->specs);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "feeds: keys are input names");
		const char *name = lua_tostring(L, -2);
		const ge_xport *p = ge_xiface_find(f->in, f->nin, name);
		ge_xt *t = lua_xt(L, -1, p, name);
		if (t) {
			lf->made[lf->nmade].name = name;
			lf->made[lf->nmade++].t = t;
		} else {
			lua_pushfstring(L, "%s=%s", name, lua_tostring(L, -1));
			lf->specs[lf->nspecs++] = lua_tostring(L, -1);
			lua_rawseti(L, keep, (lua_Integer)lf->nspecs);
		}
		lua_pop(L, 1);
	}
}

/* ------------------------------------------------------------ ge.run */

static const char *opt_str(lua_State *L, int idx, const char *k)
{
	return lua_type(L, idx) == LUA_TTABLE ? lge_optfield(L, idx, k) : NULL;
}

static const char *const run_keys[] = {"seed", "max_iterations",
				       "signature", "dim", NULL};

static lua_Integer opt_int(lua_State *L, int idx, const char *k,
			   lua_Integer def)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return def;
	lua_getfield(L, idx, k);
	lua_Integer v = luaL_optinteger(L, -1, def);
	lua_pop(L, 1);
	return v;
}

/* The fetches (arg 3): a string, a list of names, or nil (the
 * interface's outputs). */
static size_t read_fetches(lua_State *L, const ge_xiface *f,
			   const char ***out)
{
	size_t n = lua_isnoneornil(L, 3) ? f->nout
		   : lua_type(L, 3) == LUA_TSTRING ? 1 : lua_rawlen(L, 3);
	const char **v = ge_xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		if (lua_isnoneornil(L, 3)) {
			v[i] = f->out[i].tensor;
			continue;
		}
		if (lua_type(L, 3) == LUA_TSTRING) {
			lua_pushvalue(L, 3);
		} else {
			lua_rawgeti(L, 3, (lua_Integer)i + 1);
		}
		const char *name = lua_tostring(L, -1);
		if (!name) {
			free(v);
			luaL_argerror(L, 3, "fetches are tensor names");
		}
		const ge_xport *p = ge_xiface_find(f->out, f->nout, name);
		v[i] = p ? p->tensor : name;
		lua_pop(L, 1); /* the string stays in the table */
	}
	*out = v;
	return n;
}

static int m_run(lua_State *L)
{
	ge_graph *g = lge_checkgraph(L, 1)->g;
	lua_settop(L, 4);
	if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TSTRING)
		luaL_checktype(L, 3, LUA_TTABLE);
	lge_checkopts(L, 4, run_keys);
	const char *sig = opt_str(L, 4, "signature");
	struct scratch *sc = new_scratch(L);
	int sidx = lua_gettop(L);
	ge_xiface *fp = &sc->f;
	ge_error err;
	if (ge_xiface_get(g, sig, fp, &err))
		return lge_raise(L, &err);
	read_feeds(L, 2, fp, &sc->lf, sidx);
	ge_xfeeds fd;
	int rc = ge_xfeeds_make(fp, sc->lf.specs, sc->lf.nspecs, sc->lf.made,
				sc->lf.nmade, (uint64_t)opt_int(L, 4, "seed", 0),
				opt_int(L, 4, "dim", 1), NULL, &fd, &err);
	lfeeds_free(&sc->lf);
	if (rc)
		return lge_raise(L, &err);
	ge_xiface f = *fp; /* the scratch still frees it */
	const char **fetch;
	size_t n = read_fetches(L, &f, &fetch);
	ge_xt **outs = ge_xcalloc(n + 1, sizeof *outs);
	ge_xopts o = GE_XOPTS_INIT;
	o.seed = (uint64_t)opt_int(L, 4, "seed", 0);
	o.max_iterations = opt_int(L, 4, "max_iterations", 0);
	ge_xbudget bud;
	ge_xbudget_init(&bud);
	rc = ge_xrun_model(g, &o, &bud, &fd, fetch, n, outs, NULL, &err);
	ge_xfeeds_free(&fd);
	if (rc) {
		free(outs);
		free(fetch);
		return lge_raise(L, &err);
	}
	int single = lua_type(L, 3) == LUA_TSTRING;
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		push_xt(L, outs[i]);
		if (lua_isnoneornil(L, 3))
			lua_setfield(L, -2, f.out[i].key);
		else
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		ge_xt_unref(outs[i]);
	}
	free(outs);
	free(fetch);
	scratch_free(sc);
	if (single)
		lua_rawgeti(L, -1, 1);
	return 1;
}

/* ------------------------------------------------------------ ge.verify */

static const char *const verify_keys[] = {
	"inputs", "outputs", "map", "atol", "rtol", "seed", "dim", "per_op",
	"signature", "signature_b", "max_iterations", NULL};

static double opt_num(lua_State *L, int idx, const char *k, double def)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return def;
	lua_getfield(L, idx, k);
	double v = luaL_optnumber(L, -1, def);
	lua_pop(L, 1);
	return v;
}

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void push_cmp(lua_State *L, const ge_xcmp *c)
{
	lua_createtable(L, 0, 12);
	set_num(L, "max_abs", c->max_abs);
	set_num(L, "max_rel", c->max_rel);
	set_num(L, "mean_abs", c->mean_abs);
	set_num(L, "cosine", c->cosine);
	lua_pushinteger(L, c->outside);
	lua_setfield(L, -2, "outside");
	lua_pushinteger(L, c->n);
	lua_setfield(L, -2, "elements");
	lua_pushinteger(L, c->nan_mismatch);
	lua_setfield(L, -2, "nan_mismatch");
}

static void push_result(lua_State *L, const ge_xverify_result *r)
{
	lua_createtable(L, 0, 6);
	lua_pushboolean(L, r->ok);
	lua_setfield(L, -2, "ok");
	set_num(L, "max_abs", r->max_abs);
	set_num(L, "max_rel", r->max_rel);
	lua_createtable(L, (int)r->npairs, 0);
	for (size_t i = 0; i < r->npairs; i++) {
		const ge_xverify_pair *p = &r->pairs[i];
		push_cmp(L, &p->cmp);
		lua_pushstring(L, p->key_a);
		lua_setfield(L, -2, "name");
		lua_pushstring(L, p->key_b);
		lua_setfield(L, -2, "name_b");
		lua_pushboolean(L, p->ok);
		lua_setfield(L, -2, "ok");
		if (p->selected_by[0]) {
			lua_pushstring(L, p->selected_by);
			lua_setfield(L, -2, "selected_by");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "outputs");
	if (r->per_op) {
		lua_createtable(L, 0, 3);
		lua_pushinteger(L, (lua_Integer)r->op_compared);
		lua_setfield(L, -2, "compared");
		lua_pushinteger(L, (lua_Integer)r->op_outside);
		lua_setfield(L, -2, "outside");
		if (r->first_tensor) {
			push_cmp(L, &r->first_cmp);
			lua_pushstring(L, r->first_op);
			lua_setfield(L, -2, "op");
			lua_pushstring(L, r->first_tensor);
			lua_setfield(L, -2, "tensor");
			if (r->first_type) {
				lua_pushstring(L, r->first_type);
				lua_setfield(L, -2, "type");
			}
			lua_setfield(L, -2, "first");
		}
		lua_setfield(L, -2, "per_op");
	}
	if (r->note[0]) {
		lua_pushstring(L, r->note);
		lua_setfield(L, -2, "note");
	}
	if (r->b_vars_from_a) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "b_variables_from_a");
	}
}

/* A list of strings in field k of the options (kept on the stack). */
static size_t opt_strings(lua_State *L, int idx, const char *k,
			  const char ***out)
{
	*out = NULL;
	if (lua_type(L, idx) != LUA_TTABLE)
		return 0;
	lua_getfield(L, idx, k);
	if (lua_isnil(L, -1))
		return 0;
	luaL_checktype(L, -1, LUA_TTABLE);
	int t = lua_gettop(L);
	size_t n = 0, cap = 8;
	const char **v = ge_xcalloc(cap, sizeof *v);
	*out = v; /* the caller's scratch frees it if a check raises */
	if (!strcmp(k, "map")) {
		/* {a = "b"} into "a=b" */
		lua_newtable(L);
		lua_pushnil(L);
		while (lua_next(L, t)) {
			lua_pushfstring(L, "%s=%s", luaL_checkstring(L, -2),
					luaL_checkstring(L, -1));
			lua_rawseti(L, t + 1, (lua_Integer)n + 1);
			lua_pop(L, 1);
			n++;
		}
		t = t + 1;
	} else {
		n = lua_rawlen(L, t);
	}
	if (n + 1 > cap)
		*out = v = ge_xrealloc(v, (n + 1) * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		lua_rawgeti(L, t, (lua_Integer)i + 1);
		v[i] = luaL_checkstring(L, -1);
		lua_pop(L, 1);
	}
	return n;
}

static int m_verify(lua_State *L)
{
	ge_graph *a = lge_checkgraph(L, 1)->g;
	ge_graph *b = lge_checkgraph(L, 2)->g;
	lua_settop(L, 3);
	lge_checkopts(L, 3, verify_keys);
	ge_xverify_opts o = GE_XVERIFY_OPTS_INIT;
	o.signature_a = opt_str(L, 3, "signature");
	o.signature_b = opt_str(L, 3, "signature_b");
	o.atol = opt_num(L, 3, "atol", 1e-5);
	o.rtol = opt_num(L, 3, "rtol", 1e-5);
	o.seed = (uint64_t)opt_int(L, 3, "seed", 0);
	o.dim = opt_int(L, 3, "dim", 1);
	o.max_iterations = opt_int(L, 3, "max_iterations", 0);
	if (lua_type(L, 3) == LUA_TTABLE) {
		lua_getfield(L, 3, "per_op");
		o.per_op = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	struct scratch *sc = new_scratch(L);
	int sidx = lua_gettop(L);
	o.noutputs = opt_strings(L, 3, "outputs", &sc->outputs);
	o.outputs = sc->outputs;
	o.nmap = opt_strings(L, 3, "map", &sc->map);
	o.map = sc->map;
	ge_error err;
	if (ge_xiface_get(a, o.signature_a, &sc->f, &err)) {
		scratch_free(sc);
		return lge_fail(L, &err);
	}
	if (lua_type(L, 3) == LUA_TTABLE)
		lua_getfield(L, 3, "inputs");
	else
		lua_pushnil(L);
	read_feeds(L, lua_gettop(L), &sc->f, &sc->lf, sidx);
	o.inputs = sc->lf.specs;
	o.ninputs = sc->lf.nspecs;
	o.made = sc->lf.made;
	o.nmade = sc->lf.nmade;
	ge_xverify_result r;
	int rc = ge_xverify(a, b, &o, &r, &err);
	scratch_free(sc);
	if (rc) {
		ge_xverify_result_free(&r);
		return lge_fail(L, &err);
	}
	push_result(L, &r);
	ge_xverify_result_free(&r);
	return 1;
}

/* ------------------------------------------------------------ .npy */

static int m_load_npy(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	ge_xt *t;
	ge_error err;
	if (ge_npy_read(path, NULL, &t, &err))
		return lge_fail(L, &err);
	push_xt(L, t);
	ge_xt_unref(t);
	return 1;
}

static int v_save_npy(lua_State *L)
{
	ge_xt *t = value_xt(L, 1, "value");
	const char *path = luaL_checkstring(L, 2);
	ge_error err;
	int rc = ge_npy_write(path, t, &err);
	ge_xt_unref(t);
	if (rc)
		return lge_fail(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

void lge_open_run(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{"run", m_run},
		{"verify", m_verify},
		{"load_npy", m_load_npy},
		{NULL, NULL},
	};
	static const luaL_Reg methods[] = {
		{"save_npy", v_save_npy},
		{NULL, NULL},
	};
	luaL_setfuncs(L, funcs, 0);
	lge_newtype(L, LGE_VALUE, NULL, methods);
	lua_pop(L, 1);
}
