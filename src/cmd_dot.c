/*
 * cmd_dot.c: `gerewrite dot MODEL`: the graph in Graphviz's DOT language.
 *
 * One box per op (name, then type), solid edges for data (labelled with
 * the output index when it is not 0), dashed edges for control.  With
 * --scope only the ops of that name scope are drawn, with the ops they
 * read from and feed outside it as grey ellipses.  --highlight fills ops:
 * green the ops added and orange the ops changed since another model, or
 * orange the ops of a list of names.
 *
 * --func NAME draws the body of a function of the library instead (its
 * _Arg and _Retval ops included), highlighting against the same
 * function's body in the other model.
 *
 * SVG goes through Graphviz's `dot -Tsvg` ($GEREWRITE_DOT names another
 * program); the output appears whole or not at all, as for models.
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
#include "diff.h"
#include "func.h"
#include "shapes.h"

#define COLOR_ADDED "#b7e4a7"
#define COLOR_CHANGED "#f8d49a"
#define COLOR_NORMAL "#f2f2f2"
#define COLOR_OUTSIDE "#dddddd"

enum { MARK_NONE, MARK_ADDED, MARK_CHANGED, MARK_OUTSIDE };

static void add_escaped(ge_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ge_buf_addc(b, '\\');
		if ((unsigned char)*s < 0x20)
			ge_buf_addc(b, ' ');
		else
			ge_buf_addc(b, *s);
	}
}

static int in_scope(const char *name, const char *scope, size_t n)
{
	if (!scope)
		return 1;
	return !strncmp(name, scope, n) && (name[n] == 0 || name[n] == '/');
}

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
			else if (e[i].kind == GE_DIFF_CHANGED)
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

static void node_line(ge_buf *b, const ge_graph *g, ge_opid id, int mark)
{
	ge_buf_printf(b, "  n%u [label=\"", (unsigned)id);
	add_escaped(b, ge_op_name(g, id));
	if (mark != MARK_OUTSIDE) {
		ge_buf_adds(b, "\\n");
		add_escaped(b, ge_op_type(g, id));
	}
	ge_buf_adds(b, "\"");
	switch (mark) {
	case MARK_ADDED:
		ge_buf_adds(b, ", fillcolor=\"" COLOR_ADDED "\"");
		break;
	case MARK_CHANGED:
		ge_buf_adds(b, ", fillcolor=\"" COLOR_CHANGED "\"");
		break;
	case MARK_OUTSIDE:
		ge_buf_adds(b, ", shape=ellipse, style=filled, fillcolor=\"" COLOR_OUTSIDE
			       "\", fontcolor=\"#555555\"");
		break;
	}
	ge_buf_adds(b, "];\n");
}

/* Writes the DOT text of g into b. */
/* A data edge says which output it is (when not 0) and the tensor's
 * shape, inferred where the graph records none (shapes.h). */
static void edge_label(ge_buf *b, const ge_graph *g, ge_opid from, int index)
{
	ge_tref t = {from, index};
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = ge_shapes_best((ge_graph *)g, t, dims, GE_SHAPE_MAXRANK);
	if (rank < 0 && index == 0)
		return;
	ge_buf_adds(b, " [label=\"");
	if (index != 0)
		ge_buf_printf(b, ":%d%s", index, rank >= 0 ? " " : "");
	if (rank >= 0)
		ge_shape_format(b, rank, dims);
	ge_buf_adds(b, "\"]");
}

static void write_dot(ge_buf *b, const ge_graph *g, const char *scope,
		      const unsigned char *mark, size_t removed)
{
	size_t cap = ge_graph_capacity(g);
	size_t sn = scope ? strlen(scope) : 0;
	unsigned char *outside = ge_xcalloc(cap + 1, 1);
	const char *name = ge_graph_name(g);
	ge_buf_adds(b, "digraph \"");
	add_escaped(b, *name ? name : "graph");
	ge_buf_adds(b, "\" {\n"
		       "  graph [rankdir=TB, fontname=\"Helvetica\", "
		       "fontsize=10");
	if (removed)
		ge_buf_printf(b, ", label=\"%zu op%s removed\"", removed,
			      removed == 1 ? "" : "s");
	ge_buf_adds(b, "];\n"
		       "  node [shape=box, style=\"rounded,filled\", fillcolor=\"" COLOR_NORMAL
		       "\", fontname=\"Helvetica\", fontsize=10];\n"
		       "  edge [fontname=\"Helvetica\", fontsize=8];\n");
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id) || !in_scope(ge_op_name(g, id), scope, sn))
			continue;
		node_line(b, g, id, mark ? mark[id] : MARK_NONE);
	}
	/* edges, and the ops outside the scope they touch */
	ge_buf edges = GE_BUF_INIT;
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(g, id))
			continue;
		int inside = in_scope(ge_op_name(g, id), scope, sn);
		size_t nin = ge_op_num_inputs(g, id);
		size_t nc = ge_op_num_control_inputs(g, id);
		for (size_t k = 0; k < nin + nc; k++) {
			ge_opid from;
			int index = 0;
			if (k < nin) {
				ge_tref t = ge_op_input(g, id, k);
				from = t.op;
				index = t.index;
			} else {
				from = ge_op_control_input(g, id, k - nin);
			}
			if (from == GE_NOOP)
				continue;
			int from_inside =
				in_scope(ge_op_name(g, from), scope, sn);
			if (!inside && !from_inside)
				continue;
			if (!inside)
				outside[id] = 1;
			if (!from_inside)
				outside[from] = 1;
			ge_buf_printf(&edges, "  n%u -> n%u", (unsigned)from,
				      (unsigned)id);
			if (k >= nin)
				ge_buf_adds(&edges, " [style=dashed]");
			else
				edge_label(&edges, g, from, index);
			ge_buf_adds(&edges, ";\n");
		}
	}
	for (size_t i = 0; i < cap; i++)
		if (outside[i])
			node_line(b, g, (ge_opid)i, MARK_OUTSIDE);
	if (edges.len)
		ge_buf_add(b, edges.data, edges.len);
	ge_buf_adds(b, "}\n");
	ge_buf_free(&edges);
	free(outside);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Whether prog runs: a path, or a name found on PATH. */
static int have_program(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char full[4096];
		snprintf(full, sizeof full, "%.*s/%s", (int)n,
			 n ? path : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
		path += n;
		if (*path)
			path++;
	}
	return 0;
}

/* Runs `prog -Tsvg -o tmp` with the DOT text on its standard input, then
 * renames tmp to out. */
static int write_svg(const char *out, const ge_buf *dot)
{
	const char *prog = getenv("GEREWRITE_DOT");
	if (!prog || !*prog)
		prog = "dot";
	if (!have_program(prog)) {
		cli_errmsg("%s: SVG needs Graphviz's '%s' program, which is not "
			   "installed (install graphviz, or write DOT with -o "
			   "FILE.dot)",
			   out, prog);
		return EXIT_USAGE;
	}
	size_t n = strlen(out);
	char *tmp = ge_xmalloc(n + 16);
	snprintf(tmp, n + 16, "%s.tmp-XXXXXX", out);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		free(tmp);
		return EXIT_USAGE;
	}
	close(fd);
	mode_t um = umask(0);
	umask(um);
	chmod(tmp, 0666 & ~um);
	int p[2];
	if (pipe(p) < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		unlink(tmp);
		free(tmp);
		return EXIT_USAGE;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execlp(prog, prog, "-Tsvg", "-o", tmp, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	int rc = 0;
	if (pid < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		close(p[1]);
		unlink(tmp);
		free(tmp);
		return EXIT_USAGE;
	}
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	size_t off = 0;
	while (off < dot->len) {
		ssize_t w = write(p[1], dot->data + off, dot->len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	close(p[1]);
	signal(SIGPIPE, old);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || off < dot->len) {
		cli_errmsg("%s: '%s -Tsvg' failed (%s %d)", out, prog,
			   WIFEXITED(st) ? "exit status" : "signal",
			   WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		rc = EXIT_USAGE;
	} else if (rename(tmp, out) < 0) {
		cli_errmsg("%s: %s", out, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

enum { O_SCOPE = 1, O_HIGHLIGHT, O_OUT, O_TAGS, O_FUNC };

static const struct cli_opt dot_opts[] = {
	{"scope", 's', 1, O_SCOPE},
	{"highlight", 0, 1, O_HIGHLIGHT},
	{"output", 'o', 1, O_OUT},
	{"tags", 't', 1, O_TAGS},
	{"func", 0, 1, O_FUNC},
	{NULL, 0, 0, 0},
};

int cmd_dot(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *scope = NULL, *hl = NULL, *out = NULL, *func = NULL, *val;
	int key, rc = 0;
	cli_args_init(&a, "dot", argc, argv);
	while ((key = cli_getopt(&a, dot_opts, &val)) > 0) {
		switch (key) {
		case O_SCOPE: scope = val; break;
		case O_HIGHLIGHT: hl = val; break;
		case O_OUT: out = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_FUNC: func = val; break;
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
	unsigned char *mark = NULL;
	size_t removed = 0;
	if (hl) {
		mark = ge_xcalloc(ge_graph_capacity(g) + 1, 1);
		rc = highlight(g, hl, func, mark, &removed);
	}
	if (!rc) {
		ge_buf dot = GE_BUF_INIT;
		write_dot(&dot, g, sc, mark, removed);
		ge_error err;
		if (!out) {
			fwrite(dot.data, 1, dot.len, stdout);
		} else if (ends_with(out, ".svg")) {
			rc = write_svg(out, &dot);
		} else if (ge_file_write_atomic(out, dot.data, dot.len, &err) !=
			   GE_OK) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		}
		ge_buf_free(&dot);
	}
	free(mark);
	free(sc);
	ge_graph_free(top);
out:
	cli_args_free(&a);
	return rc;
}
