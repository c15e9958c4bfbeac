/*
 * run_check.c: the values a recipe was given that match nothing in the
 * model.  A parameter declared with `matches = "type"` names op types
 * (insert_noise's types), one with `matches = "op"` op names; a value
 * that matches no op of the model (its graph, and the bodies the recipe
 * ran on) is named with the nearest types or names there: "no op of
 * type Conv2d; Conv2D has 2".
 *
 * Presence is looked at before each run, on the graph as it was given
 * (a recipe may remove every op of the type it was asked about), with
 * an early stop at the first op found; only for a value found nowhere is
 * the model walked whole for the nearest ones, after the run.  So a run
 * whose values all match pays a scan up to the first match of each.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "cli.h"

struct want {
	char *value;
	int op;    /* an op name, else an op type */
	int found;
};

struct cli_wants {
	struct want *v;
	size_t n, cap;
	ge_graph **graphs; /* seen, for the nearest ones */
	size_t ng, capg;
};

static void add_want(struct cli_wants *w, const char *value, int op)
{
	if (!*value || !strcmp(value, "*"))
		return;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 8;
		w->v = ge_xrealloc(w->v, w->cap * sizeof *w->v);
	}
	w->v[w->n++] = (struct want){ge_xstrdup(value), op, 0};
}

struct cli_wants *cli_wants_new(lua_State *L, int rec, int par)
{
	struct cli_wants *w = ge_xcalloc(1, sizeof *w);
	int top = lua_gettop(L);
	rec = lua_absindex(L, rec);
	par = lua_absindex(L, par);
	lua_getfield(L, rec, "params");
	size_t np = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
	for (size_t i = 1; i <= np; i++) {
		lua_rawgeti(L, top + 1, (lua_Integer)i);
		lua_getfield(L, -1, "matches");
		const char *kind = lua_tostring(L, -1);
		lua_getfield(L, -2, "name");
		if (kind && lua_isstring(L, -1)) {
			int op = !strcmp(kind, "op");
			lua_rawget(L, par); /* the declared name's value */
			if (lua_type(L, -1) == LUA_TSTRING) {
				add_want(w, lua_tostring(L, -1), op);
			} else if (lua_istable(L, -1)) {
				size_t nv = lua_rawlen(L, -1);
				for (size_t k = 1; k <= nv; k++) {
					lua_rawgeti(L, -1, (lua_Integer)k);
					if (lua_type(L, -1) == LUA_TSTRING)
						add_want(w, lua_tostring(L, -1),
							 op);
					lua_pop(L, 1);
				}
			}
		}
		lua_settop(L, top + 1);
	}
	lua_settop(L, top);
	return w;
}

void cli_wants_see(struct cli_wants *w, ge_graph *g)
{
	if (w->ng == w->capg) {
		w->capg = w->capg ? 2 * w->capg : 8;
		w->graphs = ge_xrealloc(w->graphs, w->capg * sizeof *w->graphs);
	}
	w->graphs[w->ng++] = g;
	size_t cap = ge_graph_capacity(g);
	for (size_t i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];
		if (x->found)
			continue;
		if (x->op) {
			x->found = ge_graph_find(g, x->value) != GE_NOOP;
			continue;
		}
		for (size_t id = 0; id < cap && !x->found; id++)
			x->found = ge_op_alive(g, (ge_opid)id) &&
				   !strcmp(ge_op_type(g, (ge_opid)id), x->value);
	}
}

/* Levenshtein distance of a and b, case aside (a changed case counts
 * nothing: "Conv2d" is 0 from "Conv2D"); SIZE_MAX past limit. */
static size_t distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	if ((la > lb ? la - lb : lb - la) > limit || lb > 256)
		return SIZE_MAX;
	size_t row[257];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], best = row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t v = diag + cost;
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return SIZE_MAX;
	}
	return row[lb] <= limit ? row[lb] : SIZE_MAX;
}

/* The three nearest candidates seen so far. */
struct near {
	const char *name[3];
	size_t dist[3], count[3];
	size_t n;
};

static void near_offer(struct near *nr, const char *name, size_t d)
{
	for (size_t i = 0; i < nr->n; i++)
		if (!strcmp(nr->name[i], name)) {
			nr->count[i]++;
			return;
		}
	size_t at = nr->n;
	while (at > 0 && (nr->dist[at - 1] > d ||
			  (nr->dist[at - 1] == d &&
			   strcmp(nr->name[at - 1], name) > 0)))
		at--;
	if (at >= 3)
		return;
	size_t last = nr->n < 3 ? nr->n : 2;
	for (size_t i = last; i > at; i--) {
		nr->name[i] = nr->name[i - 1];
		nr->dist[i] = nr->dist[i - 1];
		nr->count[i] = nr->count[i - 1];
	}
	nr->name[at] = name;
	nr->dist[at] = d;
	nr->count[at] = 1;
	if (nr->n < 3)
		nr->n++;
}

/* Names of more ops than this are not searched for a near name (types
 * always are: there are few). */
#define NEAR_NAMES_MAX 200000

/* One value's message into out: "no op of type X; A has 2, B has 1" or
 * "no op named 'x'; nearest: a, b".  Returns whether it names any. */
static int describe(const struct cli_wants *w, const struct want *x,
		    ge_buf *out)
{
	size_t limit = strlen(x->value) / 3 > 2 ? strlen(x->value) / 3 : 2;
	struct near nr;
	memset(&nr, 0, sizeof nr);
	size_t total = 0;
	for (size_t k = 0; k < w->ng; k++)
		total += ge_graph_num_ops(w->graphs[k]);
	for (size_t k = 0; k < w->ng && (!x->op || total <= NEAR_NAMES_MAX);
	     k++) {
		ge_graph *g = w->graphs[k];
		size_t cap = ge_graph_capacity(g);
		for (size_t id = 0; id < cap; id++) {
			if (!ge_op_alive(g, (ge_opid)id))
				continue;
			const char *s = x->op ? ge_op_name(g, (ge_opid)id)
					      : ge_op_type(g, (ge_opid)id);
			size_t d = distance(x->value, s, limit);
			if (d != SIZE_MAX)
				near_offer(&nr, s, d);
		}
	}
	if (x->op)
		ge_buf_printf(out, "no op named '%s'", x->value);
	else
		ge_buf_printf(out, "no op of type %s", x->value);
	for (size_t i = 0; i < nr.n; i++) {
		if (x->op)
			ge_buf_printf(out, "%s%s", i ? ", " : "; nearest: ",
				      nr.name[i]);
		else
			ge_buf_printf(out, "%s%s has %zu", i ? ", " : "; ",
				      nr.name[i], nr.count[i]);
	}
	return nr.n > 0;
}

int cli_wants_report(const struct cli_wants *w, int all, ge_buf *out)
{
	int k = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i].found)
			continue;
		ge_buf one = GE_BUF_INIT;
		int near = describe(w, &w->v[i], &one);
		if (near || all) {
			if (k++)
				ge_buf_adds(out, "; ");
			ge_buf_add(out, one.data, one.len);
		}
		ge_buf_free(&one);
	}
	return k;
}

void cli_wants_free(struct cli_wants *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].value);
	free(w->v);
	free(w->graphs);
	free(w);
}
