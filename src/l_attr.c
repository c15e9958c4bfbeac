/*
 * l_attr.c: attr values between AttrValue and Lua, shape and func tables,
 * and the tensor value object (gerewrite.value).
 *
 * Reading gives natural Lua values plus a kind name ("s", "i", "f", "b",
 * "type", "shape", "tensor", "func", "placeholder", "none", "list" for an
 * empty list, "list(s)", "list(type)", ...).  Writing encodes the AttrValue
 * bytes directly, canonically (fields in number order, packed repeated
 * scalars, oneof members written even when zero, as TensorFlow writes
 * them), so that setting back what was read reproduces the same bytes.
 *
 * Tensor values hold an unpacked TensorProto copy, read and built through
 * lib/base/tensor.h.  They are immutable, so packing the copy again gives the
 * bytes it was made from.  Attr kinds are lib/graph/opattrs.h's.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "lge.h"
#include "graph/opattrs.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* Attr values nest through func attrs and lists; deeper than this is
 * either hostile or a cycle in a Lua table. */
#define MAX_DEPTH 32
/* Highest rank accepted when building tensor values. */
#define MAX_RANK 64

/* Registry key of the weak-keyed table remembering the attr order of the
 * func tables read from a graph (Lua tables do not keep key order). */
static const char FUNCORDER[] = "gerewrite.funcorder";

/* ------------------------------------------------------------ kinds */

const char *lge_attrkind(const Tensorflow__AttrValue *v)
{
	return ge_attrkind_name(ge_attrkind_of(v));
}

const char *lge_opdefkind(const ge_graph *g, const char *type,
			  const char *name)
{
	int k = ge_opdef_attrkind(g, type, name);
	return k < 0 ? NULL : ge_attrkind_name(k);
}

/* ------------------------------------------------------------ dtypes */

void lge_pushdtype(lua_State *L, int dtype)
{
	const char *name = ge_dtype_name(dtype);
	if (name)
		lua_pushstring(L, name);
	else
		lua_pushinteger(L, dtype);
}

int lge_checkdtype(lua_State *L, int arg)
{
	if (lua_type(L, arg) == LUA_TSTRING) {
		int dt = ge_dtype_from_name(lua_tostring(L, arg));
		if (dt < 0)
			luaL_argerror(L, arg,
				      lua_pushfstring(L, "unknown dtype '%s'",
						      lua_tostring(L, arg)));
		return dt;
	}
	lua_Integer v;
	int isnum;
	v = lua_tointegerx(L, arg, &isnum);
	if (!isnum || v < 0 || v > 0x7fffffff)
		luaL_typeerror(L, arg, "dtype name");
	return (int)v;
}

/* ------------------------------------------------------------ elements */

static void push_elem(lua_State *L, const ge_elem *e)
{
	switch (e->tag) {
	case 'n':
		lua_pushnumber(L, e->d);
		break;
	case 'i':
		lua_pushinteger(L, e->i);
		break;
	case 'b':
		lua_pushboolean(L, (int)e->i);
		break;
	case 's':
		lua_pushlstring(L, (const char *)e->s, e->len);
		break;
	default:
		lua_createtable(L, 2, 0);
		lua_pushnumber(L, e->d);
		lua_rawseti(L, -2, 1);
		lua_pushnumber(L, e->im);
		lua_rawseti(L, -2, 2);
	}
}

/* Shortest decimal that reads back to the same float32 (single) or
 * double, so tostring is short and exact. */
static void add_number(luaL_Buffer *b, double d, int single)
{
	char s[40];
	if (isnan(d)) {
		luaL_addstring(b, "nan");
		return;
	}
	if (isinf(d)) {
		luaL_addstring(b, d < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(s, sizeof s, "%.*g", p, d);
		double r = strtod(s, NULL);
		if (single ? (float)r == (float)d : r == d)
			break;
	}
	luaL_addstring(b, s);
}

static void add_bytes_quoted(luaL_Buffer *b, const uint8_t *s, size_t n,
			     size_t max)
{
	luaL_addchar(b, '"');
	for (size_t i = 0; i < n && i < max; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			luaL_addchar(b, '\\');
			luaL_addchar(b, (char)s[i]);
		} else if (s[i] < 0x20 || s[i] >= 0x7f) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\x%02x", s[i]);
			luaL_addstring(b, esc);
		} else {
			luaL_addchar(b, (char)s[i]);
		}
	}
	if (n > max)
		luaL_addstring(b, "...");
	luaL_addchar(b, '"');
}

/* ------------------------------------------------------------ values */

typedef struct lge_value {
	Tensorflow__TensorProto *t; /* owned, protobuf-c's allocator */
	int64_t n;                  /* number of elements */
	char origin[80];            /* the node it was read from, or "" */
} lge_value;

const char *lge_value_origin;

static lge_value *newvalue(lua_State *L)
{
	lge_value *v = lua_newuserdatauv(L, sizeof *v, 0);
	v->t = NULL;
	v->n = 0;
	snprintf(v->origin, sizeof v->origin, "%s",
		 lge_value_origin ? lge_value_origin : "");
	luaL_setmetatable(L, LGE_VALUE);
	return v;
}

/* [-0, +0, e] Unpacks TensorProto bytes into the value at the top. */
static void value_unpack(lua_State *L, lge_value *v, const uint8_t *p,
			 size_t n)
{
	v->t = (Tensorflow__TensorProto *)ge_pb_unpack(
		&tensorflow__tensor_proto__descriptor, n, p);
	if (!v->t)
		luaL_error(L, "tensor value does not decode");
	v->n = ge_tensor_count(v->t);
}

void lge_pushvalue(lua_State *L, const Tensorflow__TensorProto *src)
{
	lge_value *v = newvalue(L);
	size_t n = tensorflow__tensor_proto__get_packed_size(src);
	ge_buf *b = lge_newbuf(L);
	ge_buf_reserve(b, n);
	tensorflow__tensor_proto__pack(src, b->data);
	value_unpack(L, v, b->data, n);
	ge_buf_free(b);
	lua_pop(L, 1);
}

static lge_value *checkvalue(lua_State *L, int arg)
{
	lge_value *v = luaL_checkudata(L, arg, LGE_VALUE);
	if (!v->t)
		luaL_argerror(L, arg, "empty tensor value");
	return v;
}

void lge_pushvaluebytes(lua_State *L, const uint8_t *p, size_t n)
{
	value_unpack(L, newvalue(L), p, n);
}

const Tensorflow__TensorProto *lge_checkvalue(lua_State *L, int arg)
{
	return checkvalue(L, arg)->t;
}

static void push_shape_proto(lua_State *L,
			     const Tensorflow__TensorShapeProto *s)
{
	size_t n = s ? s->n_dim : 0;
	int named = 0;
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushinteger(L, s->dim[i]->size);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
		if (s->dim[i]->name && *s->dim[i]->name)
			named = 1;
	}
	if (s && s->unknown_rank) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "unknown_rank");
	}
	if (named) {
		lua_createtable(L, (int)n, 0);
		for (size_t i = 0; i < n; i++) {
			lua_pushstring(L, s->dim[i]->name ? s->dim[i]->name : "");
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		lua_setfield(L, -2, "names");
	}
	luaL_setmetatable(L, LGE_SHAPE);
}

/* Raises unless expanding v into n Lua values of about per bytes each
 * fits the memory budget: a tensor of a few bytes may declare a shape of
 * billions of elements. */
static void check_expand(lua_State *L, const lge_value *v, uint64_t per)
{
	char what[200];
	ge_error err;
	uint64_t n = v->n > 0 ? (uint64_t)v->n : 0;
	uint64_t bytes = n > UINT64_MAX / per ? UINT64_MAX : n * per;
	snprintf(what, sizeof what, "%s%s%sexpanding a tensor of %llu elements",
		 *v->origin ? "node '" : "", v->origin,
		 *v->origin ? "': " : "", (unsigned long long)n);
	if (ge_budget_check(bytes, NULL, what, &err))
		luaL_error(L, "%s", err.msg);
}

static int v_totable(lua_State *L)
{
	lge_value *v = checkvalue(L, 1);
	ge_elem e;
	/* a Lua array slot is 16 bytes */
	check_expand(L, v, 16);
	if (v->n > INT32_MAX)
		return luaL_error(L, "tensor value too large for a table");
	lua_createtable(L, (int)v->n, 0);
	for (int64_t k = 0; k < v->n; k++) {
		const char *why = ge_tensor_elem(v->t, k, &e);
		if (why)
			return luaL_error(L, "%s", why);
		push_elem(L, &e);
		lua_rawseti(L, -2, k + 1);
	}
	return 1;
}

static int v_index(lua_State *L)
{
	lge_value *v = checkvalue(L, 1);
	if (lua_type(L, 2) == LUA_TNUMBER) {
		lua_Integer k;
		int isint;
		k = lua_tointegerx(L, 2, &isint);
		if (!isint || k < 1 || k > v->n)
			return 0;
		ge_elem e;
		const char *why = ge_tensor_elem(v->t, k - 1, &e);
		if (why)
			return luaL_error(L, "%s", why);
		push_elem(L, &e);
		return 1;
	}
	const char *key = lua_tostring(L, 2);
	if (key && !strcmp(key, "dtype")) {
		lge_pushdtype(L, v->t->dtype);
		return 1;
	}
	if (key && !strcmp(key, "shape")) {
		push_shape_proto(L, v->t->tensor_shape);
		return 1;
	}
	lge_pushmethod(L, 1, 2);
	return 1;
}

static int v_newindex(lua_State *L)
{
	return luaL_error(L, "tensor values are read-only "
			     "(build a new one with ge.tensor_value)");
}

static int v_len(lua_State *L)
{
	lua_pushinteger(L, checkvalue(L, 1)->n);
	return 1;
}

/* Values are equal when dtype, shape and every element are, however
 * they are stored (content, typed fields, one broadcast value). */
static int v_eq(lua_State *L)
{
	lge_value *a = checkvalue(L, 1), *b = checkvalue(L, 2);
	int eq = a->t->dtype == b->t->dtype && a->n == b->n &&
		 ge_tensor_shape_eq(a->t->tensor_shape, b->t->tensor_shape);
	for (int64_t k = 0; eq && k < a->n; k++) {
		ge_elem x, y;
		if (ge_tensor_elem(a->t, k, &x) || ge_tensor_elem(b->t, k, &y))
			eq = 0;
		else
			eq = ge_elem_eq(&x, &y);
	}
	lua_pushboolean(L, eq);
	return 1;
}

static void add_shape_text(luaL_Buffer *b,
			   const Tensorflow__TensorShapeProto *s)
{
	char tmp[32];
	if (s && s->unknown_rank) {
		luaL_addstring(b, "[*]");
		return;
	}
	luaL_addchar(b, '[');
	for (size_t i = 0; s && i < s->n_dim; i++) {
		if (i)
			luaL_addchar(b, ',');
		if (s->dim[i]->size < 0) {
			luaL_addchar(b, '?');
		} else {
			snprintf(tmp, sizeof tmp, "%lld",
				 (long long)s->dim[i]->size);
			luaL_addstring(b, tmp);
		}
	}
	luaL_addchar(b, ']');
}

static int v_tostring(lua_State *L)
{
	lge_value *v = luaL_checkudata(L, 1, LGE_VALUE);
	luaL_Buffer b;
	char tmp[64];
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "value ");
	if (!v->t) {
		luaL_addstring(&b, "(empty)");
		luaL_pushresult(&b);
		return 1;
	}
	const char *dn = ge_dtype_name(v->t->dtype);
	if (dn) {
		luaL_addstring(&b, dn);
	} else {
		snprintf(tmp, sizeof tmp, "dtype%d", (int)v->t->dtype);
		luaL_addstring(&b, tmp);
	}
	add_shape_text(&b, v->t->tensor_shape);
	luaL_addstring(&b, " {");
	const ge_dtinfo *di = ge_dtype_info(v->t->dtype);
	int single = di && di->store != GE_TS_DOUBLE && di->store != GE_TS_C128;
	for (int64_t k = 0; k < v->n; k++) {
		ge_elem e;
		if (k == 8) {
			luaL_addstring(&b, ", ...");
			break;
		}
		if (k)
			luaL_addstring(&b, ", ");
		if (ge_tensor_elem(v->t, k, &e)) {
			luaL_addchar(&b, '?');
			continue;
		}
		switch (e.tag) {
		case 'n':
			add_number(&b, e.d, single);
			break;
		case 'c':
			luaL_addchar(&b, '(');
			add_number(&b, e.d, single);
			luaL_addchar(&b, ',');
			add_number(&b, e.im, single);
			luaL_addchar(&b, ')');
			break;
		case 'b':
			luaL_addstring(&b, e.i ? "true" : "false");
			break;
		case 's':
			add_bytes_quoted(&b, e.s, e.len, 32);
			break;
		default:
			snprintf(tmp, sizeof tmp, "%lld", (long long)e.i);
			luaL_addstring(&b, tmp);
		}
	}
	luaL_addchar(&b, '}');
	luaL_pushresult(&b);
	return 1;
}

static int v_gc(lua_State *L)
{
	lge_value *v = luaL_checkudata(L, 1, LGE_VALUE);
	if (v->t)
		protobuf_c_message_free_unpacked(&v->t->base, NULL);
	v->t = NULL;
	return 0;
}

/* ------------------------------------------------------------ encoding */

/* A float attr value, little-endian whatever the host. */
static void put_f32(ge_buf *b, double d)
{
	float f = (float)d;
	uint32_t u;
	uint8_t x[4];
	memcpy(&u, &f, 4);
	for (int k = 0; k < 4; k++)
		x[k] = (uint8_t)(u >> (8 * k));
	ge_buf_add(b, x, 4);
}

static void put_varint_field(ge_buf *b, uint32_t field, uint64_t v)
{
	ge_buf_tag(b, field, 0);
	ge_buf_varint(b, v);
}

struct enc {
	lua_State *L;
	const char *name; /* the attr, for messages */
	ge_buf *b;
};

static int enc_error(struct enc *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *what = lua_pushvfstring(e->L, fmt, ap);
	va_end(ap);
	return luaL_error(e->L, "attr '%s': %s", e->name, what);
}

static const char *tname(lua_State *L, int idx)
{
	const char *s = luaL_typename(L, idx);
	int t = luaL_getmetafield(L, idx, "__name");
	if (t == LUA_TSTRING)
		s = lua_tostring(L, -1); /* held by the metatable */
	if (t != LUA_TNIL)
		lua_pop(L, 1);
	return s;
}

static int64_t get_int(struct enc *e, int idx, const char *what)
{
	int isint;
	lua_Integer v = lua_tointegerx(e->L, idx, &isint);
	if (!isint || lua_type(e->L, idx) != LUA_TNUMBER)
		enc_error(e, "%s: expected an integer, got %s", what,
			  lua_type(e->L, idx) == LUA_TNUMBER ? "a fraction"
							     : tname(e->L, idx));
	return v;
}

static double get_num(struct enc *e, int idx, const char *what)
{
	if (lua_type(e->L, idx) != LUA_TNUMBER)
		enc_error(e, "%s: expected a number, got %s", what,
			  tname(e->L, idx));
	return lua_tonumber(e->L, idx);
}

static int get_bool(struct enc *e, int idx, const char *what)
{
	if (lua_type(e->L, idx) != LUA_TBOOLEAN)
		enc_error(e, "%s: expected a boolean, got %s", what,
			  tname(e->L, idx));
	return lua_toboolean(e->L, idx);
}

static const char *get_str(struct enc *e, int idx, size_t *len,
			   const char *what)
{
	if (lua_type(e->L, idx) != LUA_TSTRING)
		enc_error(e, "%s: expected a string, got %s", what,
			  tname(e->L, idx));
	return lua_tolstring(e->L, idx, len);
}

static int get_dtype(struct enc *e, int idx, const char *what)
{
	if (lua_type(e->L, idx) == LUA_TSTRING) {
		int dt = ge_dtype_from_name(lua_tostring(e->L, idx));
		if (dt < 0)
			enc_error(e, "%s: unknown dtype '%s'", what,
				  lua_tostring(e->L, idx));
		return dt;
	}
	if (lua_type(e->L, idx) == LUA_TNUMBER) {
		int64_t v = get_int(e, idx, what);
		if (v < 0 || v > 0x7fffffff)
			enc_error(e, "%s: dtype %d out of range", what, (int)v);
		return (int)v;
	}
	enc_error(e, "%s: expected a dtype name, got %s", what, tname(e->L, idx));
	return 0;
}

static int is_type(lua_State *L, int idx, const char *tn)
{
	return luaL_testudata(L, idx, tn) != NULL;
}

static int has_meta(lua_State *L, int idx, const char *tn)
{
	if (!lua_getmetatable(L, idx))
		return 0;
	luaL_getmetatable(L, tn);
	int same = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	return same;
}

/* The kind a Lua value has when nothing else says: -1 if none fits. */
static int infer_kind(lua_State *L, int idx)
{
	switch (lua_type(L, idx)) {
	case LUA_TNUMBER:
		return lua_isinteger(L, idx) ? GE_AK_I : GE_AK_F;
	case LUA_TBOOLEAN:
		return GE_AK_B;
	case LUA_TSTRING:
		return GE_AK_S;
	case LUA_TUSERDATA:
		return is_type(L, idx, LGE_VALUE) ? GE_AK_TENSOR : -1;
	case LUA_TTABLE:
		if (has_meta(L, idx, LGE_SHAPE))
			return GE_AK_SHAPE;
		if (has_meta(L, idx, LGE_FUNC))
			return GE_AK_FUNC;
		if (lua_rawlen(L, idx) == 0) {
			int t = lua_getfield(L, idx, "name");
			lua_pop(L, 1);
			if (t == LUA_TSTRING)
				return GE_AK_FUNC;
			t = lua_getfield(L, idx, "unknown_rank");
			lua_pop(L, 1);
			if (t != LUA_TNIL)
				return GE_AK_SHAPE;
		}
		return GE_AK_LIST;
	default:
		return -1;
	}
}

/* The body of a TensorShapeProto from a shape table (or a plain list of
 * dims, with optional unknown_rank and names fields). */
static void enc_shape(struct enc *e, int idx)
{
	lua_State *L = e->L;
	if (lua_type(L, idx) != LUA_TTABLE)
		enc_error(e, "expected a shape (a list of dims), got %s",
			  tname(L, idx));
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	lua_getfield(L, idx, "names");
	int names = lua_type(L, -1) == LUA_TTABLE ? lua_gettop(L) : 0;
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, idx, i);
		int64_t d = get_int(e, -1, "shape dim");
		lua_pop(L, 1);
		size_t s = e->b->len;
		if (d)
			put_varint_field(e->b, 1, (uint64_t)d);
		if (names && lua_rawgeti(L, names, i) == LUA_TSTRING) {
			size_t len;
			const char *nm = lua_tolstring(L, -1, &len);
			if (len)
				ge_buf_lenfield(e->b, 2, nm, len);
		}
		if (names)
			lua_pop(L, 1);
		ge_buf_wrap(e->b, s, 2);
	}
	lua_pop(L, 1);
	lua_getfield(L, idx, "unknown_rank");
	if (lua_toboolean(L, -1))
		put_varint_field(e->b, 3, 1);
	lua_pop(L, 1);
}

static void enc_tensor(struct enc *e, int idx)
{
	lge_value *v = luaL_testudata(e->L, idx, LGE_VALUE);
	if (!v || !v->t)
		enc_error(e, "expected a tensor value (see ge.tensor_value), "
			     "got %s",
			  tname(e->L, idx));
	size_t n = tensorflow__tensor_proto__get_packed_size(v->t);
	ge_buf_reserve(e->b, n);
	tensorflow__tensor_proto__pack(v->t, e->b->data + e->b->len);
	e->b->len += n;
	e->b->data[e->b->len] = 0;
}

static void enc_body(struct enc *e, int idx, int kind, int depth);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One map entry of NameAttrList.attr: key and value are always written,
 * as TensorFlow writes map entries. */
static void enc_func_entry(struct enc *e, int attr, int kinds, const char *key,
			   int depth)
{
	lua_State *L = e->L;
	size_t s = e->b->len;
	ge_buf_lenfield(e->b, 1, key, strlen(key));
	lua_getfield(L, attr, key);
	int k = -1;
	if (kinds && lua_getfield(L, kinds, key) == LUA_TSTRING) {
		k = ge_attrkind_parse(lua_tostring(L, -1));
		if (k < 0)
			enc_error(e, "func attr '%s': unknown kind '%s'", key,
				  lua_tostring(L, -1));
	}
	if (kinds)
		lua_pop(L, 1);
	if (k < 0)
		k = infer_kind(L, -1);
	if (k < 0)
		enc_error(e, "func attr '%s': %s cannot be an attr value", key,
			  tname(L, -1));
	size_t v = e->b->len;
	enc_body(e, lua_gettop(L), k, depth + 1);
	ge_buf_wrap(e->b, v, 2);
	lua_pop(L, 1);
	ge_buf_wrap(e->b, s, 2);
}

/* The body of a NameAttrList from a func table {name=, attr=, kinds=} or
 * a function name.  Attrs read from a graph come back in their order;
 * others follow sorted, so the bytes never depend on hash order. */
static void enc_func(struct enc *e, int idx, int depth)
{
	lua_State *L = e->L;
	size_t len;
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *nm = lua_tolstring(L, idx, &len);
		if (len)
			ge_buf_lenfield(e->b, 1, nm, len);
		return;
	}
	if (lua_type(L, idx) != LUA_TTABLE)
		enc_error(e, "expected a func ({name=, attr=}), got %s",
			  tname(L, idx));
	lua_getfield(L, idx, "name");
	const char *nm = get_str(e, -1, &len, "func name");
	if (len)
		ge_buf_lenfield(e->b, 1, nm, len);
	lua_pop(L, 1);
	int top = lua_gettop(L);
	int t = lua_getfield(L, idx, "attr");
	if (t == LUA_TNIL) {
		lua_settop(L, top);
		return;
	}
	if (t != LUA_TTABLE)
		enc_error(e, "func attr must be a table, got %s", tname(L, -1));
	int attr = lua_gettop(L);
	int kinds = lua_getfield(L, idx, "kinds") == LUA_TTABLE ? attr + 1 : 0;
	lua_newtable(L); /* keys written */
	int done = attr + 2;
	luaL_getsubtable(L, LUA_REGISTRYINDEX, FUNCORDER);
	lua_pushvalue(L, idx);
	if (lua_rawget(L, -2) == LUA_TTABLE) {
		int order = lua_gettop(L);
		lua_Integer n = (lua_Integer)lua_rawlen(L, order);
		for (lua_Integer i = 1; i <= n; i++) {
			if (lua_rawgeti(L, order, i) != LUA_TSTRING) {
				lua_pop(L, 1);
				continue;
			}
			const char *key = lua_tostring(L, -1);
			lua_pushvalue(L, -1);
			int present = lua_rawget(L, attr) != LUA_TNIL;
			lua_pop(L, 1);
			lua_pushvalue(L, -1);
			int seen = lua_rawget(L, done) != LUA_TNIL;
			lua_pop(L, 1);
			if (present && !seen) {
				enc_func_entry(e, attr, kinds, key, depth);
				lua_pushboolean(L, 1);
				lua_rawset(L, done); /* pops the key */
			} else {
				lua_pop(L, 1);
			}
		}
	}
	lua_settop(L, done);
	/* the remaining keys, sorted */
	lua_Integer nk = 0;
	lua_newtable(L);
	int keys = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, attr)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			enc_error(e, "func attr names must be strings");
		lua_pushvalue(L, -1);
		if (lua_rawget(L, done) == LUA_TNIL) {
			lua_pushvalue(L, -2);
			lua_rawseti(L, keys, ++nk);
		}
		lua_pop(L, 1);
	}
	if (nk) {
		const char **v = lua_newuserdatauv(L, (size_t)nk * sizeof *v, 0);
		for (lua_Integer i = 1; i <= nk; i++) {
			lua_rawgeti(L, keys, i);
			v[i - 1] = lua_tostring(L, -1); /* held by keys */
			lua_pop(L, 1);
		}
		qsort(v, (size_t)nk, sizeof *v, cmp_str);
		for (lua_Integer i = 0; i < nk; i++)
			enc_func_entry(e, attr, kinds, v[i], depth);
	}
	lua_settop(L, top);
}

static void enc_list(struct enc *e, int idx, int elem, int depth)
{
	lua_State *L = e->L;
	if (lua_type(L, idx) != LUA_TTABLE || has_meta(L, idx, LGE_FUNC))
		enc_error(e, "expected a list (a table), got %s", tname(L, idx));
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	size_t start = e->b->len;
	if (elem == GE_AK_NONE && n > 0) {
		lua_rawgeti(L, idx, 1);
		elem = infer_kind(L, -1);
		if (elem < 0 || elem == GE_AK_LIST || elem == GE_AK_NONE)
			enc_error(e, "a list cannot hold %s", tname(L, -1));
		lua_pop(L, 1);
	}
	size_t packed = 0;
	if (n > 0 && (elem == GE_AK_I || elem == GE_AK_B || elem == GE_AK_TYPE))
		packed = e->b->len;
	if (n > 0 && elem == GE_AK_F) {
		ge_buf_tag(e->b, 4, 2);
		ge_buf_varint(e->b, (uint64_t)n * 4);
	}
	for (lua_Integer i = 1; i <= n; i++) {
		char what[32];
		snprintf(what, sizeof what, "element %lld", (long long)i);
		lua_rawgeti(L, idx, i);
		int top = lua_gettop(L);
		size_t len, s;
		const char *str;
		switch (elem) {
		case GE_AK_S:
			str = get_str(e, top, &len, what);
			ge_buf_lenfield(e->b, 2, str, len);
			break;
		case GE_AK_I:
			ge_buf_varint(e->b, (uint64_t)get_int(e, top, what));
			break;
		case GE_AK_F:
			put_f32(e->b, get_num(e, top, what));
			break;
		case GE_AK_B:
			ge_buf_varint(e->b, (uint64_t)get_bool(e, top, what));
			break;
		case GE_AK_TYPE:
			ge_buf_varint(e->b, (uint64_t)get_dtype(e, top, what));
			break;
		case GE_AK_SHAPE:
			s = e->b->len;
			enc_shape(e, top);
			ge_buf_wrap(e->b, s, 7);
			break;
		case GE_AK_TENSOR:
			s = e->b->len;
			enc_tensor(e, top);
			ge_buf_wrap(e->b, s, 8);
			break;
		case GE_AK_FUNC:
			s = e->b->len;
			enc_func(e, top, depth);
			ge_buf_wrap(e->b, s, 9);
			break;
		default:
			enc_error(e, "a list cannot hold %s", ge_attrkind_name(elem));
		}
		lua_settop(L, top - 1);
	}
	if (n > 0 && (elem == GE_AK_I || elem == GE_AK_B || elem == GE_AK_TYPE))
		ge_buf_wrap(e->b, packed, elem == GE_AK_I ? 3 : elem == GE_AK_B ? 5 : 6);
	ge_buf_wrap(e->b, start, 1);
}

/* The fields of an AttrValue: exactly one oneof member (none for
 * GE_AK_NONE). */
static void enc_body(struct enc *e, int idx, int kind, int depth)
{
	lua_State *L = e->L;
	size_t len, s;
	const char *str;
	if (depth > MAX_DEPTH)
		enc_error(e, "value nested too deeply");
	luaL_checkstack(L, 8, "attr value nested too deeply");
	if (kind != GE_AK_NONE && lua_isnil(L, idx))
		enc_error(e, "a value is needed (op:remove_attr deletes an attr)");
	if (kind & GE_AK_LIST) {
		enc_list(e, idx, kind & 0xf, depth);
		return;
	}
	switch (kind) {
	case GE_AK_NONE:
		if (!lua_isnil(L, idx))
			enc_error(e, "kind 'none' takes nil, got %s",
				  tname(L, idx));
		break;
	case GE_AK_S:
		str = get_str(e, idx, &len, "value");
		ge_buf_lenfield(e->b, 2, str, len);
		break;
	case GE_AK_I:
		put_varint_field(e->b, 3, (uint64_t)get_int(e, idx, "value"));
		break;
	case GE_AK_F:
		ge_buf_tag(e->b, 4, 5);
		put_f32(e->b, get_num(e, idx, "value"));
		break;
	case GE_AK_B:
		put_varint_field(e->b, 5, (uint64_t)get_bool(e, idx, "value"));
		break;
	case GE_AK_TYPE:
		put_varint_field(e->b, 6, (uint64_t)get_dtype(e, idx, "value"));
		break;
	case GE_AK_SHAPE:
		s = e->b->len;
		enc_shape(e, idx);
		ge_buf_wrap(e->b, s, 7);
		break;
	case GE_AK_TENSOR:
		s = e->b->len;
		enc_tensor(e, idx);
		ge_buf_wrap(e->b, s, 8);
		break;
	case GE_AK_PLACEHOLDER:
		str = get_str(e, idx, &len, "value");
		ge_buf_lenfield(e->b, 9, str, len);
		break;
	case GE_AK_FUNC:
		s = e->b->len;
		enc_func(e, idx, depth);
		ge_buf_wrap(e->b, s, 10);
		break;
	}
}

void lge_encodeattr(lua_State *L, int idx, const char *name,
		    const char *kind, const char *hint, ge_buf *out)
{
	struct enc e = {L, name, out};
	int k = -1;
	idx = lua_absindex(L, idx);
	if (kind) {
		k = ge_attrkind_parse(kind);
		if (k < 0)
			enc_error(&e, "unknown kind '%s'", kind);
	} else if (hint) {
		k = ge_attrkind_parse(hint);
		if (k == GE_AK_LIST || k == GE_AK_NONE)
			k = -1; /* says nothing about the new value */
	}
	if (k < 0) {
		if (lua_isnoneornil(L, idx))
			enc_error(&e, "a value is needed (op:remove_attr "
				      "deletes an attr)");
		k = infer_kind(L, idx);
		if (k < 0)
			enc_error(&e, "%s cannot be an attr value",
				  tname(L, idx));
	}
	enc_body(&e, idx, k, 0);
}

/* ------------------------------------------------------------ reading */

static int push_attr(lua_State *L, const Tensorflow__AttrValue *v, int depth);

static void push_func(lua_State *L, const Tensorflow__NameAttrList *f,
		      int depth)
{
	lua_createtable(L, 0, 3);
	lua_pushstring(L, f->name ? f->name : "");
	lua_setfield(L, -2, "name");
	int tbl = lua_gettop(L);
	lua_createtable(L, 0, (int)f->n_attr);
	lua_createtable(L, 0, (int)f->n_attr);
	lua_createtable(L, (int)f->n_attr, 0);
	for (size_t i = 0; i < f->n_attr; i++) {
		const Tensorflow__NameAttrList__AttrEntry *en = f->attr[i];
		const char *key = en->key ? en->key : "";
		int k = GE_AK_NONE;
		if (en->value)
			k = push_attr(L, en->value, depth + 1);
		else
			lua_pushnil(L);
		lua_setfield(L, tbl + 1, key);
		lua_pushstring(L, ge_attrkind_name(k));
		lua_setfield(L, tbl + 2, key);
		lua_pushstring(L, key);
		lua_rawseti(L, tbl + 3, (lua_Integer)i + 1);
	}
	luaL_getsubtable(L, LUA_REGISTRYINDEX, FUNCORDER);
	lua_pushvalue(L, tbl);
	lua_pushvalue(L, tbl + 3);
	lua_rawset(L, -3);
	lua_settop(L, tbl + 2);
	lua_setfield(L, tbl, "kinds");
	lua_setfield(L, tbl, "attr");
	luaL_setmetatable(L, LGE_FUNC);
}

static int push_list(lua_State *L, const Tensorflow__AttrValue__ListValue *l,
		     int depth)
{
	int k = ge_attrkind_of_list(l);
	size_t n = 0;
	switch (k & 0xf) {
	case GE_AK_S:
		n = l->n_s;
		break;
	case GE_AK_I:
		n = l->n_i;
		break;
	case GE_AK_F:
		n = l->n_f;
		break;
	case GE_AK_B:
		n = l->n_b;
		break;
	case GE_AK_TYPE:
		n = l->n_type;
		break;
	case GE_AK_SHAPE:
		n = l->n_shape;
		break;
	case GE_AK_TENSOR:
		n = l->n_tensor;
		break;
	case GE_AK_FUNC:
		n = l->n_func;
		break;
	}
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		switch (k & 0xf) {
		case GE_AK_S:
			lua_pushlstring(L, (const char *)l->s[i].data,
					l->s[i].len);
			break;
		case GE_AK_I:
			lua_pushinteger(L, l->i[i]);
			break;
		case GE_AK_F:
			lua_pushnumber(L, l->f[i]);
			break;
		case GE_AK_B:
			lua_pushboolean(L, l->b[i]);
			break;
		case GE_AK_TYPE:
			lge_pushdtype(L, l->type[i]);
			break;
		case GE_AK_SHAPE:
			push_shape_proto(L, l->shape[i]);
			break;
		case GE_AK_TENSOR:
			lge_pushvalue(L, l->tensor[i]);
			break;
		case GE_AK_FUNC:
			push_func(L, l->func[i], depth);
			break;
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return k;
}

/* [-0, +1, e] Pushes the value of v and returns its kind. */
static int push_attr(lua_State *L, const Tensorflow__AttrValue *v, int depth)
{
	if (depth > MAX_DEPTH)
		luaL_error(L, "attr value nested too deeply");
	luaL_checkstack(L, 8, "attr value nested too deeply");
	int k = ge_attrkind_of(v);
	switch (v->value_case) {
	case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
		return push_list(L, v->list, depth);
	case TENSORFLOW__ATTR_VALUE__VALUE_S:
		lua_pushlstring(L, (const char *)v->s.data, v->s.len);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_I:
		lua_pushinteger(L, v->i);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_F:
		lua_pushnumber(L, v->f);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_B:
		lua_pushboolean(L, v->b);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
		lge_pushdtype(L, v->type);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
		push_shape_proto(L, v->shape);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
		lge_pushvalue(L, v->tensor);
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
		lua_pushstring(L, v->placeholder ? v->placeholder : "");
		break;
	case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
		push_func(L, v->func, depth);
		break;
	default:
		lua_pushnil(L);
	}
	return k;
}

void lge_pushattr(lua_State *L, const Tensorflow__AttrValue *v)
{
	int k = push_attr(L, v, 0);
	lua_pushstring(L, ge_attrkind_name(k));
}

/* ------------------------------------------------------------ shapes */

void lge_pushdims(lua_State *L, int rank, const int64_t *dims)
{
	if (rank < 0) {
		lua_pushnil(L);
		return;
	}
	lua_createtable(L, rank, 0);
	for (int i = 0; i < rank; i++) {
		lua_pushinteger(L, dims[i]);
		lua_rawseti(L, -2, i + 1);
	}
	luaL_setmetatable(L, LGE_SHAPE);
}

/* ge.shape(dims) -> a shape table; ge.shape() is the unknown rank. */
static int m_shape(lua_State *L)
{
	if (lua_isnoneornil(L, 1)) {
		lua_createtable(L, 0, 1);
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "unknown_rank");
		luaL_setmetatable(L, LGE_SHAPE);
		return 1;
	}
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
	lua_createtable(L, (int)n, 0);
	for (lua_Integer i = 1; i <= n; i++) {
		int isint;
		lua_rawgeti(L, 1, i);
		lua_Integer d = lua_tointegerx(L, -1, &isint);
		if (!isint || d < -1)
			return luaL_argerror(
				L, 1,
				lua_pushfstring(L, "dim %d is not a size or -1",
						(int)i));
		lua_pop(L, 1);
		lua_pushinteger(L, d);
		lua_rawseti(L, -2, i);
	}
	luaL_setmetatable(L, LGE_SHAPE);
	return 1;
}

static int shape_tostring(lua_State *L)
{
	luaL_Buffer b;
	char tmp[32];
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "shape [");
	if (lua_getfield(L, 1, "unknown_rank") != LUA_TNIL &&
	    lua_toboolean(L, -1)) {
		lua_pop(L, 1);
		luaL_addstring(&b, "*]");
		luaL_pushresult(&b);
		return 1;
	}
	lua_pop(L, 1);
	lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
	for (lua_Integer i = 1; i <= n; i++) {
		if (i > 1)
			luaL_addchar(&b, ',');
		lua_rawgeti(L, 1, i);
		lua_Integer d = lua_tointeger(L, -1);
		lua_pop(L, 1);
		if (d < 0) {
			luaL_addchar(&b, '?');
		} else {
			snprintf(tmp, sizeof tmp, "%lld", (long long)d);
			luaL_addstring(&b, tmp);
		}
	}
	luaL_addchar(&b, ']');
	luaL_pushresult(&b);
	return 1;
}

/* Shapes compare by value: same rank (or both unknown) and same dims. */
static int shape_eq(lua_State *L)
{
	int eq = lua_type(L, 1) == LUA_TTABLE && lua_type(L, 2) == LUA_TTABLE;
	if (eq) {
		lua_getfield(L, 1, "unknown_rank");
		lua_getfield(L, 2, "unknown_rank");
		eq = lua_toboolean(L, -1) == lua_toboolean(L, -2) &&
		     lua_rawlen(L, 1) == lua_rawlen(L, 2);
		lua_pop(L, 2);
	}
	for (lua_Integer i = 1; eq && i <= (lua_Integer)lua_rawlen(L, 1); i++) {
		lua_rawgeti(L, 1, i);
		lua_rawgeti(L, 2, i);
		eq = lua_rawequal(L, -1, -2);
		lua_pop(L, 2);
	}
	lua_pushboolean(L, eq);
	return 1;
}

static int func_tostring(lua_State *L)
{
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "func ");
	lua_getfield(L, 1, "name");
	lge_addquoted(&b, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
							  : "");
	lua_pop(L, 1);
	luaL_pushresult(&b);
	return 1;
}

/* ------------------------------------------------------------ building */

/* Element tables for complex dtypes are {re, im} pairs, so a table is a
 * leaf there when its first item is a number. */
static int is_leaf(lua_State *L, int idx, const ge_dtinfo *di)
{
	if (lua_type(L, idx) != LUA_TTABLE || lua_getmetatable(L, idx)) {
		if (lua_type(L, idx) == LUA_TTABLE)
			lua_pop(L, 1);
		return 1;
	}
	if (di->store == GE_TS_C64 || di->store == GE_TS_C128) {
		int t = lua_rawgeti(L, idx, 1);
		lua_pop(L, 1);
		return t == LUA_TNUMBER;
	}
	return 0;
}

struct flat {
	int out;         /* stack index of the flat list */
	lua_Integer m;   /* elements so far */
	int64_t *dims;   /* NULL when the shape is given */
	int rank;        /* levels recorded in dims */
	int leafdepth;   /* depth of the leaves, -1 before the first */
};

static void flatten(lua_State *L, int idx, const ge_dtinfo *di,
		    struct flat *f, int depth)
{
	if (depth >= MAX_RANK)
		luaL_error(L, "elements nested deeper than %d", MAX_RANK);
	luaL_checkstack(L, 4, "elements nested too deeply");
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	if (f->dims) {
		if (depth == f->rank)
			f->dims[f->rank++] = n;
		else if (f->dims[depth] != n)
			luaL_error(L, "elements are ragged nested lists");
	}
	for (lua_Integer k = 1; k <= n; k++) {
		lua_rawgeti(L, idx, k);
		if (is_leaf(L, -1, di)) {
			if (f->dims) {
				if (f->leafdepth < 0)
					f->leafdepth = depth;
				else if (f->leafdepth != depth)
					luaL_error(L, "elements are ragged "
						      "nested lists");
			}
			lua_rawseti(L, f->out, ++f->m);
		} else {
			flatten(L, lua_gettop(L), di, f, depth + 1);
			lua_pop(L, 1);
		}
	}
}

static int64_t check_range(lua_State *L, lua_Integer k, int64_t v,
			   const ge_dtinfo *di)
{
	int64_t lo, hi;
	ge_dtype_int_range(di, &lo, &hi);
	if (v < lo || v > hi)
		luaL_error(L, "element %I: %I is out of range for %s",
			   (LUAI_UACINT)k, (LUAI_UACINT)v,
			   ge_dtype_name(di->dtype));
	return v;
}

/* Element k of the flat list at the top as a number pair, integer or
 * string, checked against the dtype. */
static void elem_num(lua_State *L, lua_Integer k, double *re, double *im)
{
	*im = 0;
	if (lua_type(L, -1) == LUA_TTABLE) {
		lua_rawgeti(L, -1, 1);
		lua_rawgeti(L, -2, 2);
		int ok = lua_type(L, -2) == LUA_TNUMBER &&
			 (lua_type(L, -1) == LUA_TNUMBER || lua_isnil(L, -1));
		if (!ok)
			luaL_error(L, "element %d: expected {re, im}", (int)k);
		*re = lua_tonumber(L, -2);
		*im = lua_tonumber(L, -1);
		lua_pop(L, 2);
		return;
	}
	if (lua_type(L, -1) != LUA_TNUMBER)
		luaL_error(L, "element %d: expected a number, got %s", (int)k,
			   luaL_typename(L, -1));
	*re = lua_tonumber(L, -1);
}

static int64_t elem_int(lua_State *L, lua_Integer k, const ge_dtinfo *di)
{
	int isint;
	lua_Integer v = lua_tointegerx(L, -1, &isint);
	if (!isint || lua_type(L, -1) != LUA_TNUMBER)
		luaL_error(L, "element %d: expected an integer, got %s", (int)k,
			   lua_type(L, -1) == LUA_TNUMBER ? "a fraction"
							  : luaL_typename(L, -1));
	return check_range(L, k, v, di);
}

/* Gives element k (at the top) to the encoder, checked against the
 * dtype. */
static void put_elem(lua_State *L, lua_Integer k, ge_tenc *e)
{
	double re, im;
	size_t len;
	const char *s;
	switch (e->di->store) {
	case GE_TS_FLOAT:
	case GE_TS_DOUBLE:
	case GE_TS_HALF:
	case GE_TS_BF16:
	case GE_TS_F8E5M2:
	case GE_TS_C64:
	case GE_TS_C128:
		elem_num(L, k, &re, &im);
		ge_tenc_double(e, re, im);
		break;
	case GE_TS_BOOL:
		if (lua_type(L, -1) != LUA_TBOOLEAN)
			luaL_error(L, "element %d: expected a boolean, got %s",
				   (int)k, luaL_typename(L, -1));
		ge_tenc_bool(e, lua_toboolean(L, -1));
		break;
	case GE_TS_STRING:
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "element %d: expected a string, got %s",
				   (int)k, luaL_typename(L, -1));
		s = lua_tolstring(L, -1, &len);
		ge_tenc_string(e, s, len);
		break;
	default:
		ge_tenc_int(e, elem_int(L, k, e->di));
	}
}

/* ge.tensor_value(dtype [, shape [, elements]]) -> value
 * elements: nil (zeros), one value (fills the shape) or a list, flat or
 * nested; without a shape, the nesting gives it. */
static int m_tensor_value(lua_State *L)
{
	int dt = lge_checkdtype(L, 1);
	const ge_dtinfo *di = ge_dtype_info(dt);
	if (!di || di->store == GE_TS_F8E4M3FN || dt > 100)
		return luaL_argerror(
			L, 1,
			lua_pushfstring(L, "cannot build values of dtype %s",
					lua_tostring(L, 1)));
	lua_settop(L, 3);
	int64_t dims[MAX_RANK];
	struct flat f = {0, 0, NULL, 0, -1};
	lua_newtable(L);
	f.out = 4;
	if (lua_isnil(L, 2))
		f.dims = dims;
	if (!lua_isnil(L, 3)) {
		if (is_leaf(L, 3, di)) {
			lua_pushvalue(L, 3);
			lua_rawseti(L, f.out, ++f.m);
		} else {
			flatten(L, 3, di, &f, 0);
		}
	}
	int rank;
	if (f.dims) {
		rank = f.leafdepth >= 0 ? f.leafdepth + 1 : f.rank;
	} else {
		luaL_checktype(L, 2, LUA_TTABLE);
		lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
		if (n > MAX_RANK)
			return luaL_argerror(L, 2, "too many dims");
		rank = (int)n;
		for (int i = 0; i < rank; i++) {
			int isint;
			lua_rawgeti(L, 2, i + 1);
			dims[i] = lua_tointegerx(L, -1, &isint);
			lua_pop(L, 1);
			if (!isint || dims[i] < 0)
				return luaL_argerror(
					L, 2, "dims must be sizes (integers >= 0)");
		}
	}
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] && n > INT64_MAX / dims[i])
			return luaL_error(L, "shape has too many elements");
		n *= dims[i];
	}
	if (f.m > 1 && f.m != n)
		return luaL_error(L,
				  "%d elements given for a shape of %d "
				  "elements",
				  (int)f.m, (int)n);
	ge_buf *b = lge_newbuf(L);
	ge_tenc e;
	ge_tenc_begin(&e, b, dt, rank, dims, f.m);
	for (lua_Integer k = 1; k <= f.m; k++) {
		lua_rawgeti(L, f.out, k);
		put_elem(L, k, &e);
		lua_pop(L, 1);
	}
	ge_tenc_end(&e);
	lge_value *v = newvalue(L);
	value_unpack(L, v, b->data, b->len);
	return 1;
}

/* ------------------------------------------------------------ registration */

static const luaL_Reg value_meta[] = {
	{"__index", v_index},       {"__newindex", v_newindex},
	{"__len", v_len},           {"__eq", v_eq},
	{"__tostring", v_tostring}, {"__gc", v_gc},
	{NULL, NULL},
};

static const luaL_Reg value_methods[] = {
	{"totable", v_totable},
	{NULL, NULL},
};

const luaL_Reg lge_attr_funcs[] = {
	{"tensor_value", m_tensor_value},
	{"shape", m_shape},
	{NULL, NULL},
};

void lge_open_attr(lua_State *L)
{
	lge_newtype(L, LGE_VALUE, value_meta, value_methods);
	lua_pop(L, 1);
	luaL_newmetatable(L, LGE_SHAPE);
	lua_pushcfunction(L, shape_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, shape_eq);
	lua_setfield(L, -2, "__eq");
	lua_pop(L, 1);
	luaL_newmetatable(L, LGE_FUNC);
	lua_pushcfunction(L, func_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
	/* func tables -> their attr order, forgotten with the table */
	luaL_getsubtable(L, LUA_REGISTRYINDEX, FUNCORDER);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pop(L, 1);
}
