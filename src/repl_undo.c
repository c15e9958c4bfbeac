/*
 * repl_undo.c: what the prompt remembers of its graphs between entries:
 * undo() and the "unsaved" mark.
 *
 * Snapshots.  After every entry the prompt looks at each open top-level
 * graph (lge_pushgraphs) and compares its stamp (ge_graph_stamp: ops,
 * attrs, functions and bodies) with that of its snapshot, a clone taken
 * after the last entry that changed it.  A graph that changed hands that
 * snapshot, its state before the entry, to the undo record of the entry
 * and gets a new one; a graph new since the last entry only gets one.
 * undo() swaps every graph of the record with its snapshot
 * (ge_graph_swap): the graph keeps its identity, so every name holding
 * it, and the ops and tensors taken from it, see the state before the
 * entry.  One entry is undone: the undo record is that of the last entry
 * that changed a graph, and undo() leaves none.  Function bodies and
 * function objects held from before an undo are closed (fetch them
 * again); collections and signatures edited alone do not count as a
 * change.  The cost is a clone of each changed graph per entry.
 *
 * Unsaved.  The stamp of each graph when it was loaded (ge.load, or the
 * model of `-i MODEL`) or saved is kept; a clone of a graph without
 * unsaved edits has none either.  "g unsaved" in the prompt, and the
 * warning at ^D, are about the graph the global g holds now: a graph
 * whose stamp moved since, or a graph made here (ge.graph()) with ops.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cli.h"
#include "lge.h"

#define SNAPSHOT "gerewrite.snapshot"

/* Registry keys: weak-keyed graph -> snapshot and graph -> stamp when
 * loaded or saved; the undo record, a list of {graph, snapshot}. */
static const char SNAPS[] = "gerewrite.repl.snaps";
static const char SAVED[] = "gerewrite.repl.saved";
static const char UNDO[] = "gerewrite.repl.undo";

typedef struct snapshot {
	ge_graph *g;
	uint64_t stamp; /* of the graph when the clone was taken */
} snapshot;

static int snap_gc(lua_State *L)
{
	snapshot *s = luaL_checkudata(L, 1, SNAPSHOT);
	if (s->g && !lge_at_exit)
		ge_graph_free(s->g);
	s->g = NULL;
	return 0;
}

/* [-0, +1, m] registry[key], a table made when absent (weak keys). */
static void push_table(lua_State *L, const char *key, int weak)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, key) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	if (weak) {
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "k");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, key);
}

/* The open top-level graph at idx, or NULL. */
static lge_graph *top_graph(lua_State *L, int idx)
{
	lge_graph *G = luaL_testudata(L, idx, LGE_GRAPH);
	return G && G->g && !G->borrowed ? G : NULL;
}

/* ------------------------------------------------------------ unsaved */

/* [-0, +0, m] SAVED[graph at idx] = its stamp now. */
static void set_saved(lua_State *L, int idx)
{
	lge_graph *G = top_graph(L, idx);
	if (!G)
		return;
	idx = lua_absindex(L, idx);
	push_table(L, SAVED, 1);
	lua_pushvalue(L, idx);
	lua_pushinteger(L, (lua_Integer)ge_graph_stamp(G->g));
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

/* 1 saved, 0 edited since, -1 never loaded or saved */
static int saved_state(lua_State *L, int idx)
{
	lge_graph *G = top_graph(L, idx);
	if (!G)
		return 1;
	idx = lua_absindex(L, idx);
	push_table(L, SAVED, 1);
	lua_pushvalue(L, idx);
	int st = -1;
	if (lua_rawget(L, -2) == LUA_TNUMBER)
		st = (uint64_t)lua_tointeger(L, -1) == ge_graph_stamp(G->g);
	lua_pop(L, 2);
	return st;
}

int repl_unsaved(lua_State *L)
{
	lua_getglobal(L, "g");
	lge_graph *G = top_graph(L, -1);
	int st = G ? saved_state(L, -1) : 1;
	int r = st == 0 || (st < 0 && ge_graph_num_ops(G->g) > 0);
	lua_pop(L, 1);
	return r;
}

/* mark_saved(graph): after a load or a save that succeeded */
static int l_mark_saved(lua_State *L)
{
	set_saved(L, 1);
	return 0;
}

/* mark_clone(source, copy): a copy of a graph without unsaved edits has
 * none either */
static int l_mark_clone(lua_State *L)
{
	if (saved_state(L, 1) == 1)
		set_saved(L, 2);
	return 0;
}

/* ------------------------------------------------------------ snapshots */

/* [-0, +0, m] SNAPS[graph at gidx] = a clone of it now. */
static void take_snapshot(lua_State *L, int snaps, int gidx, lge_graph *G)
{
	snapshot *s = lua_newuserdatauv(L, sizeof *s, 0);
	s->g = NULL;
	luaL_setmetatable(L, SNAPSHOT);
	s->g = ge_graph_clone(G->g);
	s->stamp = ge_graph_stamp(G->g);
	lua_pushvalue(L, gidx);
	lua_insert(L, -2);
	lua_rawset(L, snaps);
}

static int undoing; /* the entry was undo(): it leaves no undo record */

void repl_after_entry(lua_State *L)
{
	int top = lua_gettop(L);
	/* graphs nobody holds any more need no snapshot */
	lua_gc(L, LUA_GCCOLLECT);
	push_table(L, SNAPS, 1);
	int snaps = lua_gettop(L);
	lua_newtable(L); /* this entry's record */
	int rec = lua_gettop(L);
	lua_Integer nrec = 0;
	lge_pushgraphs(L);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pop(L, 1);
		int gi = lua_gettop(L);
		lge_graph *G = top_graph(L, gi);
		if (!G)
			continue;
		lua_pushvalue(L, gi);
		snapshot *s = lua_rawget(L, snaps) == LUA_TUSERDATA
				      ? lua_touserdata(L, -1)
				      : NULL;
		if (s && s->stamp == ge_graph_stamp(G->g)) {
			lua_pop(L, 1);
			continue;
		}
		if (s) {
			lua_createtable(L, 2, 0);
			lua_pushvalue(L, gi);
			lua_rawseti(L, -2, 1);
			lua_pushvalue(L, -2);
			lua_rawseti(L, -2, 2);
			lua_rawseti(L, rec, ++nrec);
		}
		lua_pop(L, 1);
		take_snapshot(L, snaps, gi, G);
	}
	if (nrec && !undoing) {
		lua_pushvalue(L, rec);
		lua_setfield(L, LUA_REGISTRYINDEX, UNDO);
	}
	undoing = 0;
	lua_settop(L, top);
}

/* undo(): the last entry that changed graphs, taken back */
static int l_undo(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, UNDO) != LUA_TTABLE ||
	    lua_rawlen(L, -1) == 0) {
		printf("nothing to undo\n");
		return 0;
	}
	int rec = lua_gettop(L);
	lua_Integer n = (lua_Integer)lua_rawlen(L, rec);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, rec, i);
		lua_rawgeti(L, -1, 1);
		lua_rawgeti(L, -2, 2);
		int gi = lua_gettop(L) - 1;
		lge_graph *G = top_graph(L, gi);
		snapshot *s = luaL_testudata(L, gi + 1, SNAPSHOT);
		if (G && s && s->g) {
			int was_saved = 0;
			push_table(L, SAVED, 1);
			lua_pushvalue(L, gi);
			if (lua_rawget(L, -2) == LUA_TNUMBER)
				was_saved = (uint64_t)lua_tointeger(L, -1) ==
					    s->stamp;
			lua_pop(L, 2);
			size_t before = ge_graph_num_ops(G->g);
			ge_graph_swap(G->g, s->g);
			lge_forgetbodies(L, gi);
			if (was_saved)
				set_saved(L, gi);
			printf("undone: %s (%zu op%s before)\n",
			       luaL_tolstring(L, gi, NULL), before,
			       before == 1 ? "" : "s");
			lua_pop(L, 1);
		}
		lua_pop(L, 3);
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, UNDO);
	undoing = 1;
	return 0;
}

void repl_state_init(lua_State *L)
{
	if (luaL_newmetatable(L, SNAPSHOT)) {
		lua_pushcfunction(L, snap_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	lua_getglobal(L, "g");
	set_saved(L, -1);
	lua_pop(L, 1);
	/* loads, saves and clones report to the marks (gerewrite.repl) */
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gerewrite.repl");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "track_saves");
	lua_pushcfunction(L, l_mark_saved);
	lua_pushcfunction(L, l_mark_clone);
	lua_call(L, 2, 0);
	lua_pop(L, 1);
	lua_pushcfunction(L, l_undo);
	lua_setglobal(L, "undo");
	repl_after_entry(L);
}
