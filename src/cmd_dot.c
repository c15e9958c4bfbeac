/*
 * cmd_dot.c: `gerewrite dot MODEL`: the graph in Graphviz's DOT language.
 *
 * The picture itself is drawn by dot_render.c: name scopes as clusters,
 * ops labelled within their scope, --collapse N, shapes on edges
 * (inferred where the graph records none), a legend.  With --scope only
 * the ops of that name scope are drawn, with the ops they read from and
 * feed outside it as grey ellipses; a scope that names no op is an error
 * that suggests the nearest ones.  --highlight fills ops: green the ops
 * added and orange the ops changed since another model, or orange the
 * ops of a list of names.
 *
 * --func NAME draws the body of a function of the library instead (its
 * _Arg and _Retval ops included), highlighting against the same
 * function's body in the other model.
 *
 * The output's extension chooses the format: .dot/.gv text, .svg, .png or
 * .pdf through Graphviz ($GEREWRITE_DOT names another program); the
 * output appears whole or not at all, as for models.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "editor/diff.h"
#include "dot_render.h"
#include "functions/func.h"
#include "analyses/shapes.h"

enum { MARK_NONE, MARK_ADDED = DOT_MARK_ADDED, MARK_CHANGED = DOT_MARK_CHANGED };

/* Marks the ops named in text (names separated by commas or new lines). */
static void mark_names(const ge_graph *g, const char *text, unsigned char *mark,
		       size_t *missing)
{
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, ",\n\r");
		while (n && (p[0] == ' ' || p[0] == '\t')) {
			p++;
			n--;
		}
		size_t m = n;
		while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
			m--;
		if (m) {
			char *name = ge_xstrndup(p, m);
			ge_opid id = ge_graph_find(g, name);
			if (id != GE_NOOP)
				mark[id] = MARK_CHANGED;
			else
				(*missing)++;
			free(name);
		}
		p += n;
		if (*p)
			p++;
	}
}

static int highlight(const ge_graph *g, const char *spec, const char *func,
		     unsigned char *mark, size_t *removed)
{
	struct stat st;
	size_t missing = 0;
	*removed = 0;
	if (stat(spec, &st) == 0) {
		int model = S_ISDIR(st.st_mode);
		uint8_t *data = NULL;
		size_t len = 0;
		ge_error err;
		if (!model) {
			if (ge_file_read(spec, &data, &len, &err) != GE_OK) {
				cli_errmsg("%s", err.msg);
				return EXIT_USAGE;
			}
			model = ge_sniff(data, len) != GE_FMT_AUTO;
		}
		if (!model) {
			mark_names(g, (const char *)data, mark, &missing);
			free(data);
			return 0;
		}
		free(data);
		ge_graph *orig;
		int rc = cli_load_model(spec,
					&(struct cli_model_opts){
						.allow_missing_variables = 1,
						.no_check = 1},
					&orig);
		if (rc)
			return rc;
		ge_graph *from = orig;
		if (func) {
			ge_funcid f = ge_func_find(orig, func);
			from = f == GE_NOFUNC ? NULL : ge_func_body(orig, f, NULL);
			if (!from) {
				cli_errmsg("%s: no function named '%s'", spec, func);
				ge_graph_free(orig);
				return EXIT_USAGE;
			}
		}
		ge_diff_entry *e;
		size_t n = ge_graph_diff(from, g, &e);
		for (size_t i = 0; i < n; i++) {
			if (e[i].kind == GE_DIFF_ADDED)
				mark[e[i].b] = MARK_ADDED;
			else if (e[i].kind == GE_DIFF_CHANGED ||
				 e[i].kind == GE_DIFF_MOVED)
				mark[e[i].b] = MARK_CHANGED;
			else
				(*removed)++;
		}
		free(e);
		ge_graph_free(orig);
		return 0;
	}
	mark_names(g, spec, mark, &missing);
	return 0;
}

enum { O_SCOPE = 1, O_HIGHLIGHT, O_OUT, O_TAGS, O_FUNC, O_COLLAPSE };

static const struct cli_opt dot_opts[] = {
	{"scope", 's', 1, O_SCOPE},
	{"highlight", 0, 1, O_HIGHLIGHT},
	{"output", 'o', 1, O_OUT},
	{"tags", 't', 1, O_TAGS},
	{"func", 0, 1, O_FUNC},
	{"collapse", 0, 1, O_COLLAPSE},
	{NULL, 0, 0, 0},
};

static int parse_collapse(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* An unknown scope is an error naming the nearest scopes. */
static int check_scope(const ge_graph *g, const char *model,
		       const char *scope)
{
	if (dot_scope_exists(g, scope))
		return 0;
	ge_buf near = GE_BUF_INIT;
	dot_suggest_scopes(g, scope, &near);
	ge_buf_addc(&near, 0);
	if (near.len > 1)
		cli_errmsg("%s: no op in scope '%s'; nearest scopes: %s", model,
			   scope, (const char *)near.data);
	else
		cli_errmsg("%s: no op in scope '%s'", model, scope);
	ge_buf_free(&near);
	return EXIT_USAGE;
}

int cmd_dot(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *scope = NULL, *hl = NULL, *out = NULL, *func = NULL, *val;
	size_t collapse = 0;
	int key, rc = 0;
	cli_args_init(&a, "dot", argc, argv);
	while ((key = cli_getopt(&a, dot_opts, &val)) > 0) {
		switch (key) {
		case O_SCOPE: scope = val; break;
		case O_HIGHLIGHT: hl = val; break;
		case O_OUT: out = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_FUNC: func = val; break;
		case O_COLLAPSE:
			if (parse_collapse(val, &collapse)) {
				rc = cli_usage("dot", "--collapse needs a number "
						      "of ops (got '%s')",
					       val);
				goto out;
			}
			break;
		}
	}
	if (key < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.npos != 1) {
		rc = cli_usage("dot", "one MODEL is needed");
		goto out;
	}
	mo.allow_missing_variables = 1;
	mo.no_check = 1;
	ge_graph *g;
	if ((rc = cli_load_model(a.pos[0], &mo, &g)))
		goto out;
	ge_graph *top = g;
	if (func) {
		ge_error err;
		ge_funcid f = ge_flib_load(g, &err) ? GE_NOFUNC
						     : ge_func_find(g, func);
		g = f == GE_NOFUNC ? NULL : ge_func_body(top, f, &err);
		if (!g) {
			if (f == GE_NOFUNC)
				cli_errmsg("%s: no function named '%s' (the "
					   "library has %zu)", a.pos[0], func,
					   ge_func_count(top));
			else
				cli_errmsg("%s", err.msg);
			ge_graph_free(top);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	char *sc = NULL;
	if (scope) {
		sc = ge_xstrdup(scope);
		size_t n = strlen(sc);
		while (n > 1 && sc[n - 1] == '/')
			sc[--n] = 0;
	}
	if (sc && (rc = check_scope(g, a.pos[0], sc))) {
		free(sc);
		ge_graph_free(top);
		goto out;
	}
	unsigned char *mark = NULL;
	size_t removed = 0;
	if (hl) {
		mark = ge_xcalloc(ge_graph_capacity(g) + 1, 1);
		rc = highlight(g, hl, func, mark, &removed);
	}
	if (!rc) {
		ge_buf dot = GE_BUF_INIT;
		struct dot_view v = {sc, collapse, mark, removed, 0, NULL};
		dot_render(&dot, g, &v);
		if (!out)
			fwrite(dot.data, 1, dot.len, stdout);
		else
			rc = dot_write(out, &dot);
		ge_buf_free(&dot);
	}
	free(mark);
	free(sc);
	ge_graph_free(top);
out:
	cli_args_free(&a);
	return rc;
}
