/*
 * l_editor.h: what the graph_editor binding files (l_select.c,
 * l_subgraph.c, l_reroute.c, l_edit.c) share: argument conversion in
 * graph_editor's style (make_list_of_op / make_list_of_t), scratch vectors
 * owned by Lua, Lua callbacks for the C predicates, and the view userdata.
 *
 * Stack effects are noted as in lge.h.  C vectors handed to lib/ live in
 * userdata (freed by __gc), so a Lua error raised half-way leaks nothing;
 * a Lua callback that fails is caught, lib/ unwinds, and the error is
 * raised again afterwards (lsel_rethrow).
 */
#ifndef L_EDITOR_H
#define L_EDITOR_H

#include "lge.h"
#include "editor/select.h"
#include "editor/subgraph.h"

#define LGE_VIEW "gerewrite.view"
#define LGE_COUTS "gerewrite.control_outputs"

/* The view userdata: user value 1 is the graph userdata (NULL view: nil). */
typedef struct lge_view {
	ge_view v;
	lge_graph *owner; /* NULL for the empty view */
} lge_view;

/* [-0, +1, m] Scratch vectors, freed with the userdata left on the stack. */
ge_opvec *lsel_opvec(lua_State *L);
ge_tvec *lsel_tvec(lua_State *L);

/* [-0, +(0|1), v] The graph of the value at idx (op, tensor, graph, view,
 * ControlOutputs, or a list whose first element has one).  Pushes the
 * graph userdata and returns it, or returns NULL and pushes nothing when
 * the value has none (nil, an empty list, names only). */
lge_graph *lsel_findgraph(lua_State *L, int idx);

/* [-0, +0, v] make_list_of_op: appends the ops of the value at idx (an
 * op, an op name, a graph (all its ops), a view (its ops) or a list of
 * those) to v.  Tensors raise unless ignore_ts.  arg names the argument in
 * errors. */
void lsel_ops(lua_State *L, int idx, lge_graph *G, int ignore_ts, int arg,
	      ge_opvec *v);
/* [-0, +0, v] make_list_of_t, the same for tensors ("name:k" accepted; a
 * graph gives all its tensors, a view its inputs and outputs). */
void lsel_ts(lua_State *L, int idx, lge_graph *G, int ignore_ops, int arg,
	     ge_tvec *v);
/* [-0, +0, v] Seeds of a walk: when the first element is a tensor, all
 * are tensors (s->ts), else ops (s->ops). */
void lsel_seeds(lua_State *L, int idx, lge_graph *G, int arg, ge_opvec *ops,
		ge_tvec *ts, ge_seeds *s);

/* [-0, +1, m] Lists of wrappers (1-based Lua arrays); gidx is the graph
 * userdata's index. */
void lsel_pushops(lua_State *L, int gidx, const ge_opid *ops, size_t n);
void lsel_pushts(lua_State *L, int gidx, const ge_tref *ts, size_t n);

/* The options table at idx (may be none/nil): lsel_optbool gives def when
 * the field is absent; lsel_optfield pushes the field (nil when absent)
 * and returns its index. */
int lsel_optbool(lua_State *L, int idx, const char *k, int def);
int lsel_optfield(lua_State *L, int idx, const char *k);
/* [-0, +0, v] Whether the value at idx is an options table: a table
 * without metatable whose keys are not list positions. */
int lsel_isopts(lua_State *L, int idx);
/* The option names are checked by lge_checkopts (lge.h); the old name
 * stays for code written against it. */
#define lsel_checkopts lge_checkopts

/* A Lua predicate for lib/: the function at stack index fn, called with
 * the op or tensor; a Lua error is kept on the stack and reported by
 * lsel_rethrow after lib/ has returned. */
typedef struct lsel_cb {
	lua_State *L;
	int fn, gidx, failed;
} lsel_cb;
int lsel_op_pred(const ge_graph *g, ge_opid op, void *ud);
int lsel_t_pred(const ge_graph *g, ge_tref t, void *ud);
/* [-0, +0, e] Raises the callback's error if it failed, else err. */
int lsel_rethrow(lua_State *L, lsel_cb *cb, const ge_error *err);

/* ---- views (l_subgraph.c) ---- */

/* [-0, +1, m] A new view userdata taking over *v (which is left empty). */
lge_view *lsel_pushview(lua_State *L, ge_view *v, int gidx);
lge_view *lsel_testview(lua_State *L, int idx);
/* [-0, +0, v] The view at idx, checked against graph edits since. */
lge_view *lsel_checkview(lua_State *L, int idx);
/* [-0, +1, v] make_view(value): a view at idx is pushed as is (the same
 * userdata); anything else is turned into a new view userdata. */
lge_view *lsel_toview(lua_State *L, int idx, int arg);
/* [-0, +1, -] The graph userdata of a view (nil for an empty one). */
void lsel_pushviewgraph(lua_State *L, int idx);

/* [-n, +2, e] ge.select_ops_and_ts, for make_view. */
int lsel_select_ops_and_ts(lua_State *L);

/* ---- ControlOutputs (l_select.c) ---- */
int lsel_iscouts(lua_State *L, int idx);

/* Function tables for the module; lge_open_editor (l_select.c) registers
 * them as ge.util, ge.select, ge.subgraph, ge.reroute, ge.edit and flat on
 * ge. */
extern const luaL_Reg lge_util_funcs[], lge_select_funcs[],
	lge_subgraph_funcs[], lge_reroute_funcs[], lge_edit_funcs[];
void lge_open_view(lua_State *L);
void lge_open_reroute_methods(lua_State *L);

/* [-0, +0, e] With the module table on top of the stack: creates the
 * metatables and adds ge.util, ge.select, ge.subgraph, ge.reroute,
 * ge.edit, their functions flat on ge, and the aliases ge.ph, ge.sgv,
 * ge.sgv_scope.  Called by luaopen_gerewrite. */
void lge_open_editor(lua_State *L);

#endif
