/*
 * lge.h: helpers shared by the Lua binding files of gerewrite.
 *
 * Object model.  A graph is a full userdata holding the ge_graph (NULL once
 * closed) with two user values: weak-valued caches mapping op ids and
 * tensor keys to the wrappers already made, so pushing the same op or
 * tensor twice gives the same userdata (usable as a table key, comparable
 * with ==).  An op or tensor wrapper points at its graph's userdata block
 * and keeps that userdata alive, so a graph outlives every wrapper of its
 * parts: a tensor through its own user value, an op through its metatable,
 * which is its graph's (user value 4 of the graph: the op metatable's
 * fields, the graph, and the op class as its own metatable, which is how
 * lge_testop knows an op; getmetatable in Lua gives the shared one).  An op then has no user value: g:ops() makes
 * one wrapper per op, and a user value is a sixth of its cost.  Wrappers
 * hold an op id, which lib/ never reuses: a wrapper of a removed op is
 * detected and reported.
 *
 * Every helper documents its stack effect as in the Lua manual:
 * [-popped, +pushed, x] where x is "-" (never raises), "m" (memory errors
 * only), "v" (raises on bad arguments) or "e" (may raise anything).
 *
 * Error convention of the bindings: misuse raises a Lua error; a failure
 * of the outside world (a file that is missing, bytes that are not a
 * model) returns nil, a message and the kind of failure (lge_fail), as
 * luaL_fileresult returns nil, a message and errno.
 */
#ifndef LGE_H
#define LGE_H

#include <lauxlib.h>
#include <lua.h>

#include "base/base.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "variables/varpolicy.h"

#define LGE_GRAPH "gerewrite.graph"
#define LGE_OP "gerewrite.op"
/* the registry name of the op class (lge.h's object model) */
#define LGE_OPCLASS "gerewrite.opclass"
#define LGE_TENSOR "gerewrite.tensor"
#define LGE_VALUE "gerewrite.value"
#define LGE_SHAPE "gerewrite.shape"
#define LGE_FUNC "gerewrite.func"

struct Tensorflow__AttrValue;
struct Tensorflow__TensorProto;

typedef struct lge_graph {
	ge_graph *g; /* NULL once closed */
	int borrowed; /* a function body: owned by its parent graph */
} lge_graph;

/* The key of op id in its graph's cache of op userdata (user value 1 of
 * the graph): id + 1, so that the keys of a graph's ops, 0 included,
 * are all in the table's array part (a key 0 goes to the hash part, and
 * the rehash it causes sizes the array part for the keys in use then,
 * none: every later key would go to the hash too). */
#define LGE_OPKEY(id) ((lua_Integer)(id) + 1)

typedef struct lge_op {
	lge_graph *owner; /* the graph userdata's block, kept alive by the
			     op's metatable (lge_pushopgraph) */
	ge_opid id;
} lge_op;

typedef struct lge_tensor {
	lge_graph *owner;
	ge_tref t;
} lge_tensor;

/* ---- graphs (l_graph.c) ---- */

/* [-0, +1, m] A new op metatable for the graph userdata at gidx (l_op.c;
 * lge_pushgraph keeps it as the graph's user value 4). */
void lge_newopmeta(lua_State *L, int gidx);
/* [-0, +1, m] Wraps g in a new graph userdata, which takes ownership. */
void lge_pushgraph(lua_State *L, ge_graph *g);
/* [-0, +0, -] Frees the graph at idx now (a function body is only
 * detached: its parent owns it); wrappers of it, and of the bodies of its
 * functions, become unusable. */
void lge_closegraph(lua_State *L, int idx);
/* [-0, +1, m] Pushes the set (weak keys) of every graph userdata made,
 * function bodies included: the prompt's undo walks it. */
void lge_pushgraphs(lua_State *L);
/* [-0, +0, v] The open graph at arg; raises if it is not one or closed. */
lge_graph *lge_checkgraph(lua_State *L, int arg);
/* [-0, +0, v] The ge_graph behind an op, a tensor or a graph at arg. */
ge_graph *lge_checkanygraph(lua_State *L, int arg, lge_graph **owner);

/* ---- ops (l_op.c) ---- */

/* [-0, +1, m] Pushes the wrapper of op id of the graph whose userdata is
 * at stack index gidx (the same userdata every time). */
void lge_pushop(lua_State *L, int gidx, ge_opid id);
/* Pushes a new list of the ops ids[0..n-1] of the graph at gidx, as
 * lge_pushop pushes each (the same userdata); lge_pushallops the list of
 * its live ops in node order. */
void lge_pushoplist(lua_State *L, int gidx, const ge_opid *ids, size_t n);
void lge_pushallops(lua_State *L, int gidx);
/* [-0, +0, v] The live op at arg; raises "op 'x' was removed from the
 * graph" for a removed one. */
lge_op *lge_checkop(lua_State *L, int arg);
/* [-0, +0, -] The op wrapper at arg, or NULL if it is something else. */
lge_op *lge_testop(lua_State *L, int arg);
/* [-0, +1, -] Pushes the graph userdata of the op wrapper at idx. */
void lge_pushopgraph(lua_State *L, int idx);
/* [-0, +1, m] Pushes the op metatable of the graph userdata at gidx,
 * the metatable of every op wrapper of that graph. */
void lge_pushopmeta(lua_State *L, int gidx);
/* [-0, +(0|1), m] Pushes op id's provenance, {nodes = {...}, funcs =
 * {...}} (l_op.c); returns ge_op_origins's count, or its error (nothing
 * pushed). */
int lge_push_origins(lua_State *L, ge_graph *g, ge_opid id, ge_error *err);
/* [-0, +0, v] An op of graph G given as an op or a name ("x" or "^x"). */
ge_opid lge_checkopin(lua_State *L, int arg, lge_graph *G);
/* [-0, +(0|1), m] The same without raising: returns NULL and sets *out, or
 * pushes and returns a message saying what is wrong with the value. */
const char *lge_toopin(lua_State *L, int idx, lge_graph *G, ge_opid *out);
/* [-0, +1, m] Pushes an op id as an op wrapper, or, for GE_NOOP (a
 * dangling reference), the text it had: `dangling` may be NULL. */
void lge_pushopordangling(lua_State *L, int gidx, ge_opid id,
			  const char *dangling);

/* ---- tensors (l_tensor.c) ---- */

/* [-0, +1, v] Pushes the wrapper of tensor t (t.op must be a real op);
 * raises when the output index cannot be keyed (>= 2^24). */
void lge_pushtensor(lua_State *L, int gidx, ge_tref t);
/* [-0, +0, v] The tensor at arg, whose op must be alive. */
lge_tensor *lge_checktensor(lua_State *L, int arg);
lge_tensor *lge_testtensor(lua_State *L, int arg);
/* [-0, +0, v] A tensor of graph G given as a tensor or "name[:k]"; with
 * allow_control, "^name" is accepted and gives index GE_CONTROL. */
ge_tref lge_checktensorin(lua_State *L, int arg, lge_graph *G,
			  int allow_control);
/* [-0, +(0|1), m] The same without raising, as lge_toopin. */
const char *lge_totensorin(lua_State *L, int idx, lge_graph *G,
			   int allow_control, ge_tref *out);
/* [-0, +1, m] Pushes a static shape as a shape table (rank >= 0), or nil
 * for an unknown rank. */
void lge_pushdims(lua_State *L, int rank, const int64_t *dims);

/* ---- attr values (l_attr.c) ---- */

/* [-0, +2, m] Pushes the natural Lua value of an attr and its kind name
 * ("i", "list(type)", ...); the mapping is described in l_attr.c. */
void lge_pushattr(lua_State *L, const struct Tensorflow__AttrValue *v);
/* [-0, +0, e] Appends to out the AttrValue encoding of the Lua value at idx.
 * kind is a kind name or NULL; with NULL, the kind is taken from `hint`
 * (the kind of the attr being replaced, or the op's OpDef; may be NULL),
 * else inferred from the Lua value.  Raises "attr 'name': ..." when the
 * value does not fit. */
void lge_encodeattr(lua_State *L, int idx, const char *name,
		    const char *kind, const char *hint, ge_buf *out);
/* [-0, +0, -] The kind name of a decoded attr ("list" when it is an empty
 * list, "none" when no member is set). */
const char *lge_attrkind(const struct Tensorflow__AttrValue *v);
/* [-0, +0, -] The kind of attr `name` that the OpDef of `type` declares,
 * or NULL when the op type or the attr is unknown. */
const char *lge_opdefkind(const ge_graph *g, const char *type,
			  const char *name);
/* The node whose attr is being pushed (NULL: none): tensor values made
 * meanwhile remember it, to name it when one is too large to expand. */
extern const char *lge_value_origin;
/* Set when the process is about to end (main.c): a graph's finalizer
 * then leaves its memory to the exit instead of freeing it op by op. */
extern int lge_at_exit;
/* [-0, +1, m] Pushes a tensor value object holding a copy of t. */
void lge_pushvalue(lua_State *L, const struct Tensorflow__TensorProto *t);
/* [-0, +1, e] Pushes a tensor value object decoded from TensorProto bytes
 * (raises if they do not decode). */
void lge_pushvaluebytes(lua_State *L, const uint8_t *p, size_t n);
/* [-0, +0, v] The TensorProto of the tensor value at arg, owned by the
 * value (valid while the value is reachable). */
const struct Tensorflow__TensorProto *lge_checkvalue(lua_State *L, int arg);
/* [-0, +1, m] Pushes a dtype as its name, or as an integer if unnamed. */
void lge_pushdtype(lua_State *L, int dtype);
/* [-0, +0, v] A dtype given as a name ("float32", "DT_FLOAT") or number. */
int lge_checkdtype(lua_State *L, int arg);

/* ---- shared plumbing (l_module.c) ---- */

/* [-0, +1, m] A new growable buffer owned by a userdata on the stack, so a
 * Lua error cannot leak it; its memory is released at collection. */
ge_buf *lge_newbuf(lua_State *L);
/* [-0, +0, v] Raises err's message as a Lua error (with position). */
int lge_raise(lua_State *L, const ge_error *err);
/* [-0, +3, m] Pushes nil, err's message and its kind (lge_errkind);
 * returns 3, for `return lge_fail(L, &err)`. */
int lge_fail(lua_State *L, const ge_error *err);
/* The kind of a lib/ error code, as scripts see it: "io" (GE_EIO),
 * "format" (GE_EFORMAT), "notfound" (GE_ENOTFOUND) or "invalid" (anything
 * else: misuse, an inconsistent graph). */
const char *lge_errkind(int code);
/* [-0, +0, m] Adds s to b quoted in double quotes, escaping '"', '\\' and
 * control bytes, so tostring stays on one line. */
void lge_addquoted(luaL_Buffer *b, const char *s);
/* luaL_testudata and luaL_checkudata, fast for graphs, ops and tensors */
void *lge_testudata(lua_State *L, int arg, const char *tname);
void *lge_checkudata(lua_State *L, int arg, const char *tname);
/* [-0, +1, m] Creates a metatable `tname` with the given metamethods and a
 * "__methods" table holding `methods` (either may be NULL), leaves the
 * metatable on the stack.  Other binding files add methods to an existing
 * type by calling it again with NULL metamethods. */
void lge_newtype(lua_State *L, const char *tname, const luaL_Reg *meta,
		 const luaL_Reg *methods);
/* [-0, +1, -] In an __index metamethod: pushes method `key` of the object
 * at 1 (from its metatable's "__methods"), or nil. */
int lge_pushmethod(lua_State *L, int obj, int key);
/* [-0, +0, m] Gives the type tname (made by lge_newtype) a property table:
 * each getter of props is called as the __index metamethod is (object at
 * 1, key at 2) and pushes the value.  The type's __index becomes one
 * closure over the property and method tables: a property first, then a
 * method; any other string key raises (lge_nokey), naming the type as
 * `what` ("an op"). */
void lge_newprops(lua_State *L, const char *tname, const luaL_Reg *props,
		  const char *what);
/* [-0, +0, v] In an __index metamethod, for a key that is neither a
 * field nor a method: raises "no method or field 'k' in WHAT; did you
 * mean a, b or c?" with the nearest keys of the tables at props and
 * methods (stack indices, 0 for none) and the name extra (or NULL).  A
 * key that is not a string pushes nil instead (returns 1). */
int lge_nokey(lua_State *L, int obj, int key, const char *what, int props,
	      int methods, const char *extra);
/* [-0, +0, v] A model format name (model.h's names, or "auto") at idx;
 * nil or none is GE_FMT_AUTO. */
ge_format lge_checkformat(lua_State *L, int idx);
/* [-0, +0, v] Reads the optional string field k of the table at idx. */
const char *lge_optfield(lua_State *L, int idx, const char *k);
/* [-0, +0, v] The one check of an options table: at idx none or nil is no
 * options, anything but a table is a type error, and a key not in known
 * (NULL-terminated) raises "unknown option 'k'".  Every function taking
 * options calls it before reading them. */
void lge_checkopts(lua_State *L, int idx, const char *const *known);
/* [-0, +0, -] Whether the value at idx can be called: a function, or a
 * value whose metatable has __call. */
int lge_callable(lua_State *L, int idx);

/* Type registration, called once by luaopen_gerewrite. */
void lge_open_graph(lua_State *L);
void lge_open_op(lua_State *L);
void lge_open_tensor(lua_State *L);
void lge_open_attr(lua_State *L);

/* Module functions that live next to their types (ge.tensor_value,
 * ge.shape); registered into the module table by luaopen_gerewrite. */
extern const luaL_Reg lge_attr_funcs[];

/* ---- embedded Lua files (generated src/lua_embed.c) ---- */

struct lge_embedded {
	const char *path; /* relative to src/lua: "gerewrite.lua" */
	const unsigned char *data;
	size_t len;
};
extern const struct lge_embedded lge_embedded[]; /* ends with NULL path */

/* [-0, +1, -] Loads the Lua file `path` (relative to src/lua) as a chunk:
 * from $GEREWRITE_LUA_DIR when that is set, else the copy built into the
 * program.  Returns a lua_load status; on failure the message is pushed. */
int lge_loadlua(lua_State *L, const char *path);
/* [-0, +0, e] Registers package.preload loaders for "gerewrite" and every
 * embedded module ("gerewrite/match.lua" is "gerewrite.match"). */
void lge_preload(lua_State *L);

int luaopen_gerewrite(lua_State *L);

/* Openers of the binding files beyond the core types (l_module.c runs
 * them with the module table on top of the stack). */
void lge_open_editor(lua_State *L);   /* l_select.c: graph_editor modules */
void lge_open_meta(lua_State *L);     /* l_meta.c: collections, signatures */
void lge_open_match(lua_State *L);    /* l_match.c: ge.match, ge.rewrite */
void lge_open_transform(lua_State *L); /* l_transform.c: ge.transform */
void lge_open_variables(lua_State *L); /* l_variables.c: g:variables() */
void lge_open_checkpoint(lua_State *L); /* l_checkpoint.c: ge.checkpoint,
					   ge.freeze, g:checkpoint() */
void lge_open_shapes(lua_State *L);    /* l_shapes.c: ge.infer_shapes */
void lge_open_fold(lua_State *L);      /* l_fold.c: ge.fold_constants, ... */
void lge_open_opmatcher(lua_State *L); /* l_opmatcher.c: ge.OpMatcher,
					   ge.op_type */
void lge_open_func(lua_State *L);      /* l_func.c: g:functions(), ... */
void lge_open_insert(lua_State *L);    /* l_insert.c: g:insert_after */
void lge_open_run(lua_State *L);       /* l_run.c: ge.run, ge.verify, .npy */

/* ---- function bodies (l_func.c) ---- */

/* [-0, +1, e] Pushes the graph userdata of the body of function f of the
 * graph at gidx (or of its root, for a body): the same userdata each time,
 * which keeps the root alive.  Raises if the body does not parse. */
void lge_pushbody(lua_State *L, int gidx, uint32_t f);
/* [-0, +0, m] After the graph at gidx got another state (undo): the
 * userdata of its bodies become closed and the caches of bodies and
 * function objects are dropped, so that they are made anew. */
void lge_forgetbodies(lua_State *L, int gidx);
/* [-0, +1, m] Pushes the graph userdata of the root (the graph owning the
 * function library) of the graph at gidx. */
void lge_pushroot(lua_State *L, int gidx);
void lge_open_inline(lua_State *L);    /* l_inline.c: ge.inline,
					   ge.inline_all */

/* ---- variables (l_variables.c), for the transform bindings ---- */

/* [-0, +1, e] Pushes variable v of the graph at gidx as a table (name,
 * kind, op, initializer, snapshot, initial_value, trainable, dtype,
 * shape, collections, key). */
void lge_pushvariable(lua_State *L, int gidx, const ge_graph *g,
		      const ge_variable *v);

/* The `variables` option of a transform, ready for ge_transform_vars:
 *
 *   lge_varopts vo;
 *   lge_checkvaropts(L, opts_idx, graph_idx, &vo);  -- raises on misuse
 *   rc = ge_copy_vars(&view, &o, &vo.vo, &out, &info, NULL, &err);
 *   lge_varopts_check(L, &vo);     -- re-raises the function's error
 *   if (rc) ...;
 *
 * (the checkpoint plan of duplicated variables stays with the destination
 * graph: ge_graph_checkpoint_plan)
 *
 * lge_checkvaropts pushes one slot (and the function, if one is given),
 * which stay on the stack while the transform runs. */
typedef struct lge_varopts {
	ge_var_opts vo;
	lua_State *L;
	int fn, gidx, errslot, failed;
} lge_varopts;
/* [-0, +(1|2), v] */
void lge_checkvaropts(lua_State *L, int opts, int gidx, lge_varopts *o);
/* [-0, +0, v] */
void lge_varopts_check(lua_State *L, lge_varopts *o);

#endif
