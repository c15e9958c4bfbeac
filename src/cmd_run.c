/*
 * cmd_run.c: `gerewrite run RECIPE MODEL -o OUT` and `gerewrite help
 * TOPIC`, and the recipe plumbing shared with batch.
 *
 * Recipes are found, loaded and their parameters checked by the Lua
 * module gerewrite.recipe (src/lua/gerewrite/recipe.lua); this file gives
 * it the search path and a directory lister, loads the model, runs the
 * recipe and saves.  The order is the contract: recipe, then parameters,
 * then the model, so a typo costs nothing on a large model.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "cli.h"
#include "functions/func.h"
#include "lge.h"
#include "editor/provenance.h"

/* ------------------------------------------------------------ search path */

/* recipe.listdir(dir) -> list of names (empty if it cannot be read) */
static int l_listdir(lua_State *L)
{
	const char *dir = luaL_checkstring(L, 1);
	lua_newtable(L);
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	struct dirent *e;
	lua_Integer k = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		lua_pushstring(L, e->d_name);
		lua_rawseti(L, -2, ++k);
	}
	closedir(d);
	return 1;
}

/* Whether this program is the one built in the build tree (then the
 * source tree's scripts/ is searched, so an uninstalled build finds its
 * recipes). */
static int in_build_tree(void)
{
#if defined(GE_BUILD_DIR)
	char self[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 0;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return 0;
	*slash = 0;
	if (!realpath(GE_BUILD_DIR "/src", want))
		return 0;
	return !strcmp(self, want);
#else
	return 0;
#endif
}

void cli_recipe_module(lua_State *L)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gerewrite.recipe");
	lua_call(L, 1, 1);
	if (lua_getfield(L, -1, "configured") == LUA_TNIL) {
		lua_newtable(L);
		int k = 0;
#ifdef GE_SCRIPTS_DIR
		lua_pushliteral(L, GE_SCRIPTS_DIR);
		lua_rawseti(L, -2, ++k);
#endif
#ifdef GE_SRC_SCRIPTS_DIR
		if (in_build_tree()) {
			lua_pushliteral(L, GE_SRC_SCRIPTS_DIR);
			lua_rawseti(L, -2, ++k);
		}
#endif
		lua_setfield(L, -3, "dirs");
		lua_pushcfunction(L, l_listdir);
		lua_setfield(L, -3, "listdir");
		lua_pushboolean(L, 1);
		lua_setfield(L, -3, "configured");
	}
	lua_pop(L, 1);
}

/* ------------------------------------------------------------ recipes */

static int call_load(lua_State *L)
{
	cli_recipe_module(L);
	lua_getfield(L, -1, "load");
	lua_pushvalue(L, 1);
	lua_call(L, 1, 3);
	return 3;
}

int cli_load_recipe(lua_State *L, const char *name)
{
	lua_pushcfunction(L, call_load);
	lua_pushstring(L, name);
	if (cli_docall(L, 1, 3) != LUA_OK) {
		cli_report(L);
		return EXIT_SYNTAX;
	}
	if (lua_isnil(L, -3)) {
		int code = (int)luaL_optinteger(L, -1, EXIT_USAGE);
		cli_errmsg("%s", lua_tostring(L, -2));
		lua_pop(L, 3);
		return code;
	}
	lua_pop(L, 2);
	return 0;
}

static int call_params(lua_State *L)
{
	cli_recipe_module(L);
	lua_getfield(L, -1, "params");
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	lua_call(L, 2, 2);
	return 2;
}

int cli_recipe_params(lua_State *L, int rec, char **assign, int n)
{
	rec = lua_absindex(L, rec);
	lua_pushcfunction(L, call_params);
	lua_pushvalue(L, rec);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, assign[i]);
		lua_rawseti(L, -2, i + 1);
	}
	if (cli_docall(L, 2, 2) != LUA_OK) {
		cli_report(L);
		return EXIT_USAGE;
	}
	if (lua_isnil(L, -2)) {
		cli_errmsg("%s", lua_tostring(L, -1));
		lua_pop(L, 2);
		return EXIT_USAGE;
	}
	lua_pop(L, 1);
	return 0;
}

static int call_list(lua_State *L)
{
	cli_recipe_module(L);
	lua_getfield(L, -1, "list");
	lua_call(L, 0, 1);
	return 1;
}

void cli_list_recipes(lua_State *L, FILE *f)
{
	int top = lua_gettop(L);
	lua_pushcfunction(L, call_list);
	if (cli_docall(L, 0, 1) != LUA_OK) {
		cli_report(L);
		return;
	}
	size_t n = lua_rawlen(L, -1);
	if (n == 0)
		fprintf(f, "  (none found; GEREWRITE_PATH lists directories "
			   "to search)\n");
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i);
		lua_getfield(L, -1, "name");
		lua_getfield(L, -2, "summary");
		fprintf(f, "  %-28s %s\n", lua_tostring(L, -2),
			lua_tostring(L, -1));
		lua_pop(L, 3);
	}
	lua_settop(L, top);
}

static int call_help(lua_State *L)
{
	cli_recipe_module(L);
	lua_getfield(L, -1, "help");
	lua_pushvalue(L, 1);
	lua_call(L, 1, 1);
	return 1;
}

int cmd_help_topic(lua_State *L, const char *topic)
{
	const char *u = cli_command_usage(topic);
	if (u) {
		fputs(u, stdout);
		return 0;
	}
	if (!strcmp(topic, "help") || !strcmp(topic, "version")) {
		printf("Usage: " PROG " %s%s\n", topic,
		       topic[0] == 'h' ? " [COMMAND | RECIPE]" : "");
		return 0;
	}
	int rc = cli_load_recipe(L, topic);
	if (rc)
		return rc;
	lua_pushcfunction(L, call_help);
	lua_insert(L, -2);
	if (cli_docall(L, 1, 1) != LUA_OK) {
		cli_report(L);
		return EXIT_SYNTAX;
	}
	printf("%s\n", lua_tostring(L, -1));
	lua_pop(L, 1);
	return 0;
}

/* ------------------------------------------------------------ running */

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int cli_functions_opt(const char *cmd, const char *val,
		      struct cli_model_opts *mo)
{
	static const char *const names[] = {"reachable", "all", "none"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(val, names[i])) {
			mo->functions = i;
			return 0;
		}
	return cli_usage(cmd, "--functions takes reachable, all or none "
			      "(got '%s')", val);
}

/* What a run is reporting as it goes: the recipe's name, the model, the
 * values to find in the graphs the recipe runs on, and the result being
 * filled. */
struct run_ctx {
	int rec, par;
	struct cli_wants *wants;
	const char *recipe, *model;
	struct run_result *res;
	int edited; /* some graph or body was edited */
	int shipped; /* the recipe is one of the program's own */
	/* the graph whose provenance log the report reads, the lines of it
	 * reported so far, and run --provenance */
	ge_graph *prov_g;
	size_t prov_seen;
	int prov;
};

/* [-0, +1, m] The rules of the provenance log noted since the last report
 * as {rule = count}; with --provenance list, a line in lines for each op
 * ("RECIPE: MODEL[: function F]: provenance: OP: RULE"). */
static void push_provenance(lua_State *L, struct run_ctx *c, ge_buf *lines)
{
	lua_newtable(L);
	if (!c->prov_g)
		return;
	size_t nc = 0;
	ge_prov_count *cnt = ge_prov_counts(c->prov_g, c->prov_seen, &nc);
	for (size_t i = 0; i < nc; i++) {
		lua_pushinteger(L, (lua_Integer)cnt[i].n);
		lua_setfield(L, -2, cnt[i].rule);
	}
	free(cnt);
	size_t n = ge_prov_lines(c->prov_g);
	if (c->prov & CLI_PROV_LIST) {
		/* a line per op: only here is the log expanded */
		const ge_prov_rec *log = ge_prov_log(c->prov_g, &n);
		for (size_t i = c->prov_seen; i < n; i++)
			ge_buf_printf(lines,
				      "%s: %s%s%s: provenance: %s: %s\n",
				      c->recipe, c->model,
				      *log[i].func ? ": function " : "",
				      log[i].func, log[i].op, log[i].rule);
	}
	c->prov_seen = n;
}

/* Whether a recipe's file is one of the program's (scripts/, installed
 * or in the source tree): their refusals are messages for the user, not
 * places in code the user does not own. */
static int shipped_recipe(const char *path)
{
	const char *dirs[] = {
#ifdef GE_SCRIPTS_DIR
		GE_SCRIPTS_DIR,
#endif
#ifdef GE_SRC_SCRIPTS_DIR
		GE_SRC_SCRIPTS_DIR,
#endif
		NULL};
	char file[PATH_MAX], dir[PATH_MAX];
	if (!path || !realpath(path, file))
		return 0;
	char *slash = strrchr(file, '/');
	if (!slash)
		return 0;
	*slash = 0;
	for (int i = 0; dirs[i]; i++)
		if (realpath(dirs[i], dir) && !strcmp(dir, file))
			return 1;
	return 0;
}

/* A shipped recipe's refusal without the "scripts/freeze.lua:53: " its
 * error() put first (kept with --traceback, and for Lua's own runtime
 * errors, which are bugs to report with their place). */
static const char *plain_error(const struct run_ctx *c, const char *msg)
{
	if (!c->shipped || cli_traceback)
		return msg;
	const char *p = strstr(msg, ".lua:");
	if (!p || memchr(msg, ' ', (size_t)(p - msg)))
		return msg;
	p += 5;
	if (*p < '0' || *p > '9')
		return msg;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p[0] != ':' || p[1] != ' ' || !strncmp(p + 2, "attempt to ", 11))
		return msg;
	return p + 2;
}

/* [-0, +0, -] Appends "RECIPE: MODEL[: function F]: SUMMARY" to the
 * report, from what run returned (at ret) and the delta of the graph. */
static void report_run(lua_State *L, struct run_ctx *c, int ret,
		       const char *func, const ge_graph_delta *d, long before,
		       long after)
{
	int top = lua_gettop(L);
	ret = lua_absindex(L, ret);
	cli_recipe_module(L);
	lua_getfield(L, -1, "run_summary");
	lua_pushvalue(L, ret);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, (lua_Integer)d->added);
	lua_setfield(L, -2, "added");
	lua_pushinteger(L, (lua_Integer)d->removed);
	lua_setfield(L, -2, "removed");
	lua_pushinteger(L, (lua_Integer)d->changed);
	lua_setfield(L, -2, "changed");
	lua_pushinteger(L, before);
	lua_setfield(L, -2, "before");
	lua_pushinteger(L, after);
	lua_setfield(L, -2, "after");
	lua_pushboolean(L, d->edited || d->library);
	lua_setfield(L, -2, "edited");
	/* the op lines, if any, follow the run's line */
	ge_buf lines = GE_BUF_INIT;
	push_provenance(L, c, &lines);
	lua_setfield(L, -2, "provenance");
	const char *line = "?";
	if (cli_docall(L, 2, 1) == LUA_OK && lua_isstring(L, -1))
		line = lua_tostring(L, -1);
	ge_buf_printf(&c->res->report, "%s: %s%s%s: %s\n", c->recipe, c->model,
		      func ? ": function " : "", func ? func : "", line);
	if (lines.len)
		ge_buf_add(&c->res->report, lines.data, lines.len);
	ge_buf_free(&lines);
	c->res->added += (long)d->added;
	c->res->removed += (long)d->removed;
	c->res->changed += (long)d->changed;
	lua_settop(L, top);
}

/* Runs the recipe on the bodies of the functions of the graph at gi that
 * the mode selects (those reachable from the graph through calls, or
 * all), unless the recipe says `functions = false`; a body it edits gets
 * a line of the report.  0, or an exit code with res->error set. */
static int run_on_bodies(lua_State *L, struct run_ctx *c, int gi, int mode)
{
	struct run_result *res = c->res;
	if (mode == CLI_FN_NONE)
		return 0;
	lua_getfield(L, c->rec, "functions");
	int off = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (off)
		return 0;
	ge_graph *g = ((lge_graph *)lua_touserdata(L, gi))->g;
	ge_error err;
	if (ge_flib_load(g, &err)) {
		snprintf(res->error, sizeof res->error, "%s", err.msg);
		return EXIT_USAGE;
	}
	ge_funcid *ids = NULL;
	size_t n = 0;
	if (mode == CLI_FN_ALL) {
		size_t cap = ge_func_capacity(g);
		ids = ge_xmalloc((cap + 1) * sizeof *ids);
		for (size_t f = 0; f < cap; f++)
			if (ge_func_alive(g, (ge_funcid)f))
				ids[n++] = (ge_funcid)f;
	} else {
		ge_flib_reachable(g, &ids, &n);
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!ge_func_alive(g, ids[i]))
			continue;
		int top = lua_gettop(L);
		lge_pushbody(L, gi, ids[i]);
		int bi = lua_gettop(L);
		ge_graph *body = ((lge_graph *)lua_touserdata(L, bi))->g;
		ge_graph_mark m;
		ge_graph_mark_now(body, &m);
		cli_wants_see(c->wants, body);
		long before = (long)ge_graph_num_ops(body);
		lua_getfield(L, c->rec, "run");
		lua_pushvalue(L, bi);
		lua_pushvalue(L, c->par);
		if (cli_docall(L, 2, 1) != LUA_OK) {
			const char *msg = lua_tostring(L, -1);
			snprintf(res->error, sizeof res->error,
				 "%s (model %s, function %s)",
				 msg ? plain_error(c, msg)
				     : "(error object is not a string)",
				 c->model, ge_func_name(g, ids[i]));
			rc = EXIT_RUNTIME;
		} else {
			ge_graph_delta d;
			ge_graph_delta_since(body, &m, &d);
			long after = (long)ge_graph_num_ops(body);
			res->ops_before += before;
			res->ops_after += after;
			if (d.edited) {
				c->edited = 1;
				report_run(L, c, -1, ge_func_name(g, ids[i]),
					   &d, before, after);
			}
		}
		lua_settop(L, top);
	}
	free(ids);
	return rc;
}

/* [-0, +0, -] The warnings of a run: values of parameters that name
 * types or ops matching nothing (with the nearest ones), and a run that
 * changed nothing.  Under --strict the latter fails the run. */
static void check_changes(struct run_ctx *c, const struct cli_model_opts *mo)
{
	struct run_result *res = c->res;
	ge_buf why = GE_BUF_INIT;
	res->nothing = !c->edited;
	/* after a change, a value absent from this model is no news
	 * (types=Conv2D,MatMul on a model without MatMul); one with a near
	 * name is a likely slip */
	cli_wants_report(c->wants, res->nothing, &why);
	ge_buf_addc(&why, 0);
	const char *w = (const char *)why.data;
	if (res->nothing && mo && mo->strict) {
		snprintf(res->error, sizeof res->error,
			 "%s changed nothing in %s (--strict)%s%s", c->recipe,
			 c->model, *w ? ": " : "", w);
		res->status = EXIT_NOOP;
	} else if (res->nothing) {
		ge_buf_printf(&res->warnings, "%s: %s: warning: changed "
			      "nothing%s%s\n", c->recipe, c->model,
			      *w ? ": " : "", w);
	} else if (*w) {
		ge_buf_printf(&res->warnings, "%s: %s: warning: %s\n",
			      c->recipe, c->model, w);
	}
	ge_buf_free(&why);
}

/* [-0, +0, -] Runs the recipe on the graph at gi and its bodies, with
 * the report; the graph to save is left at the top (the one the recipe
 * returned, or gi's).  0 or an exit code with res->error set. */
static int run_all(lua_State *L, struct run_ctx *c, int gi,
		   const struct cli_model_opts *mo)
{
	struct run_result *res = c->res;
	ge_graph *g = ((lge_graph *)lua_touserdata(L, gi))->g;
	ge_graph_mark m;
	ge_graph_mark_now(g, &m);
	cli_wants_see(c->wants, g);
	c->prov = mo ? mo->provenance : 0;
	ge_prov_set_mode(g, c->prov & CLI_PROV_OFF    ? GE_PROV_OFF
			    : c->prov & CLI_PROV_ATTR ? GE_PROV_ATTR
						      : GE_PROV_FIELD);
	c->prov_g = g;
	c->prov_seen = ge_prov_lines(g);
	long before = (long)ge_graph_num_ops(g);
	res->ops_before = before;
	res->ops_after = 0;
	lua_getfield(L, c->rec, "run");
	lua_pushvalue(L, gi);
	lua_pushvalue(L, c->par);
	if (cli_docall(L, 2, 2) != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		snprintf(res->error, sizeof res->error, "%s (model %s)",
			 msg ? plain_error(c, msg)
			     : "(error object is not a string)",
			 c->model);
		return EXIT_RUNTIME;
	}
	/* `return nil, message`: the model does not fit the parameters */
	if (lua_isnil(L, -2) && lua_type(L, -1) == LUA_TSTRING) {
		snprintf(res->error, sizeof res->error, "%s (model %s)",
			 lua_tostring(L, -1), c->model);
		return EXIT_USAGE;
	}
	lua_pop(L, 1);
	int reti = lua_gettop(L);
	/* a recipe may build a new graph and return it */
	lge_graph *G = luaL_testudata(L, reti, LGE_GRAPH);
	int gr = G ? reti : gi;
	if (!G)
		G = lua_touserdata(L, gi);
	if (!G->g) {
		snprintf(res->error, sizeof res->error,
			 "the recipe closed the graph (model %s)", c->model);
		return EXIT_RUNTIME;
	}
	ge_graph_delta d;
	long after = (long)ge_graph_num_ops(G->g);
	if (G->g != g) {
		/* a graph of the recipe's own: its whole log */
		c->prov_g = G->g;
		c->prov_seen = 0;
		memset(&d, 0, sizeof d);
		d.added = (size_t)after;
		d.removed = (size_t)before;
		d.edited = 1;
	} else {
		ge_graph_delta_since(g, &m, &d);
	}
	c->edited = d.edited || d.library;
	report_run(L, c, reti, NULL, &d, before, after);
	int rc = run_on_bodies(L, c, gr, mo ? mo->functions : CLI_FN_REACHABLE);
	if (rc)
		return rc;
	/* the library: bodies edited, functions added or removed */
	if (G->g == g && !c->edited) {
		ge_graph_delta_since(g, &m, &d);
		c->edited = d.library;
	}
	res->ops_after += after;
	check_changes(c, mo);
	lua_pushvalue(L, gr);
	return res->status;
}

int cli_run_recipe(lua_State *L, int rec, int par, const char *model,
		   const char *out, const struct cli_model_opts *mo,
		   const ge_save_opts *so, struct run_result *res)
{
	double t0 = now();
	rec = lua_absindex(L, rec);
	par = lua_absindex(L, par);
	int top = lua_gettop(L);
	memset(res, 0, sizeof *res);
	res->ops_before = res->ops_after = -1;

	ge_load_opts lo;
	memset(&lo, 0, sizeof lo);
	lo.tags = mo ? mo->tags : NULL;
	ge_error err;
	ge_graph *g = NULL;
	if (ge_load(model, &lo, &g, &err) != GE_OK) {
		snprintf(res->error, sizeof res->error, "%s", err.msg);
		res->status = cli_status(&err);
		goto done;
	}
	/* a library that calls what is not there, or itself, is refused
	 * before the recipe sees it */
	if (ge_flib_check(g, &err) != GE_OK) {
		snprintf(res->error, sizeof res->error, "%s", err.msg);
		ge_graph_free(g);
		res->status = EXIT_USAGE;
		goto done;
	}
	int had_values = cli_has_values(g);
	lge_pushgraph(L, g);
	int gi = lua_gettop(L);
	lua_getfield(L, rec, "name");
	lua_getfield(L, rec, "path");
	struct run_ctx c = {rec, par, cli_wants_new(L, rec, par),
			    lua_tostring(L, -2), model, res, 0,
			    shipped_recipe(lua_tostring(L, -1)), NULL, 0, 0};
	res->status = run_all(L, &c, gi, mo);
	cli_wants_free(c.wants);
	if (res->status) {
		if (res->status != EXIT_NOOP)
			res->ops_after = -1;
		goto done;
	}
	lge_graph *G = lua_touserdata(L, -1);
	if (ge_save(G->g, out, so, &err) != GE_OK) {
		cli_save_error(&err, res->error, sizeof res->error);
		res->status = cli_status(&err);
		goto done;
	}
	cli_warn_dropped_values(had_values, G->g, out);
done:
	/* the graphs go now rather than at the next collection, unless
	 * the process ends next */
	for (int i = top + 1; i <= lua_gettop(L); i++) {
		if (luaL_testudata(L, i, LGE_GRAPH) &&
		    !(cli_last_run && !res->status))
			lge_closegraph(L, i);
	}
	lua_settop(L, top);
	res->seconds = now() - t0;
	return res->status;
}

enum {
	O_OUT = 1, O_PARAM, O_FORMAT, O_TAGS, O_ALLOW_MISSING, O_FUNCTIONS,
	O_VERIFY, O_MAX_ERROR, O_INPUT, O_DIM,
	O_OVERWRITE, O_STRICT, O_QUANTIZE, O_QUANTIZE_WEIGHTS, O_PROVENANCE,
};

static const struct cli_opt run_opts[] = {
	{"output", 'o', 1, O_OUT},
	{"param", 'p', 1, O_PARAM},
	{"format", 'f', 1, O_FORMAT},
	{"tags", 't', 1, O_TAGS},
	{"allow-missing-variables", 0, 0, O_ALLOW_MISSING},
	{"functions", 0, 1, O_FUNCTIONS},
	{"verify", 0, 0, O_VERIFY},
	{"max-error", 0, 1, O_MAX_ERROR},
	{"input", 'i', 1, O_INPUT},
	{"dim", 0, 1, O_DIM},
	{"overwrite", 0, 0, O_OVERWRITE},
	{"strict", 0, 0, O_STRICT},
	{"quantize", 0, 1, O_QUANTIZE},
	{"quantize-weights", 0, 1, O_QUANTIZE_WEIGHTS},
	{"provenance", 0, 1, O_PROVENANCE},
	{NULL, 0, 0, 0},
};

/* --provenance field|attr|list|off, repeatable: field (the default)
 * writes experimental_debug_info only; attr adds the rule attr, list the
 * report lines; off writes none of them, and attr or list after it turn
 * it on again. */
int cli_provenance_opt(const char *cmd, const char *val,
		       struct cli_model_opts *mo)
{
	int run = !strcmp(cmd, "run");
	if (!strcmp(val, "field"))
		mo->provenance = 0;
	else if (!strcmp(val, "off"))
		mo->provenance = CLI_PROV_OFF;
	else if (run && !strcmp(val, "attr"))
		mo->provenance = (mo->provenance & ~CLI_PROV_OFF) | CLI_PROV_ATTR;
	else if (run && !strcmp(val, "list"))
		mo->provenance = (mo->provenance & ~CLI_PROV_OFF) | CLI_PROV_LIST;
	else if (run)
		return cli_usage(cmd, "--provenance takes field, attr, list or "
				 "off (got '%s')", val);
	else
		return cli_usage(cmd, "--provenance takes field or off (got "
				 "'%s')", val);
	return 0;
}

/* Prints the lines of a report buffer to stderr. */
void cli_print_lines(const ge_buf *b)
{
	if (b->len) {
		fflush(stdout);
		fwrite(b->data, 1, b->len, stderr);
		fflush(stderr);
	}
}

int cmd_run(lua_State *L, int argc, char **argv)
{
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *out = NULL, *format = NULL, *val, *quant = NULL,
		   *qnames = NULL;
	char **params = ge_xcalloc((size_t)argc + 1, sizeof *params);
	char *keep = NULL;
	const char **pats = NULL;
	ge_save_opts so = {.format = GE_FMT_AUTO};
	int nparams = 0, key, rc = 0;
	struct cli_verify ver = CLI_VERIFY_INIT;
	const char **vin = ge_xcalloc((size_t)argc + 1, sizeof *vin);
	ver.print = 1;
	ver.inputs = vin;
	cli_args_init(&a, "run", argc, argv);
	while ((key = cli_getopt(&a, run_opts, &val)) > 0) {
		switch (key) {
		case O_OUT: out = val; break;
		case O_PARAM: params[nparams++] = (char *)val; break;
		case O_FORMAT: format = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_ALLOW_MISSING: mo.allow_missing_variables = 1; break;
		case O_FUNCTIONS:
			if (cli_functions_opt("run", val, &mo))
				key = -1;
			break;
		case O_VERIFY: ver.on = 1; break;
		case O_MAX_ERROR:
		case O_DIM:
			if (cli_verify_opt("run", key == O_DIM ? "--dim"
							       : "--max-error",
					   val, &ver))
				key = -1;
			break;
		case O_INPUT: vin[ver.ninputs++] = val; break;
		case O_OVERWRITE: so.overwrite = 1; break;
		case O_STRICT: mo.strict = 1; break;
		case O_QUANTIZE: quant = val; break;
		case O_QUANTIZE_WEIGHTS: qnames = val; break;
		case O_PROVENANCE:
			if (cli_provenance_opt("run", val, &mo))
				key = -1;
			break;
		}
		if (key < 0)
			break;
	}
	/* --overwrite without -o: the model is rewritten in place */
	if (!out && so.overwrite && a.npos == 2)
		out = a.pos[1];
	if (key < 0) {
		rc = EXIT_USAGE;
	} else if (a.npos < 2) {
		rc = cli_usage("run", "RECIPE and MODEL are needed");
	} else if (a.npos > 2) {
		rc = cli_usage("run", "too many arguments ('%s')", a.pos[2]);
	} else if (!out) {
		rc = cli_usage("run", "the output is missing (-o OUT, or "
				      "--overwrite to rewrite MODEL)");
	} else if (ver.on && !strcmp(out, a.pos[1])) {
		rc = cli_usage("run", "--verify compares the output with "
				      "MODEL: give -o OUT, not an in-place "
				      "rewrite");
	} else if (!(rc = cli_format("run", format, &so.format))) {
		rc = cli_tfjs_opts("run", NULL, quant, qnames, &so, &keep,
				   &pats);
	}
	if (rc)
		goto out;
	if ((rc = cli_load_recipe(L, a.pos[0])))
		goto out;
	if ((rc = cli_recipe_params(L, -1, params, nparams)))
		goto out;
	struct run_result res;
	cli_last_run = 1;
	rc = cli_run_recipe(L, -2, -1, a.pos[1], out, &mo, &so, &res);
	cli_print_lines(&res.report);
	cli_print_lines(&res.warnings);
	if (!rc && ver.on)
		rc = cli_verify_recipe(L, -2, a.pos[1], out, &mo, &ver, &res);
	if (rc)
		cli_errmsg("%s", res.error);
	ge_buf_free(&res.report);
	ge_buf_free(&res.warnings);
out:
	free(keep);
	free(pats);
	free(params);
	free(vin);
	cli_args_free(&a);
	return rc;
}
