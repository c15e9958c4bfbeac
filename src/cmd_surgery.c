/*
 * cmd_surgery.c: `gerewrite compose A B -o C --map A_OUT=B_IN...` and
 * `gerewrite extract MODEL --inputs ... --outputs ... -o OUT`, over
 * lib/variables/compose.h.  Bad input (a tensor that is not there, dtypes or shapes
 * that differ, a name given twice) is one line naming it, exit 2, and
 * nothing is written: the save comes last, and is atomic.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "variables/compose.h"

enum { O_OUT = 1, O_MAP, O_PREFIX, O_TAGS, O_FORMAT, O_INPUTS, O_OUTPUTS };

/* Appends the comma-separated names of s to *v (strings cut in place of
 * a copy kept in *keep[*nk]). */
static void add_list(const char *s, char ***v, size_t *n, char ***keep,
		     size_t *nk)
{
	char *c = ge_xstrdup(s);
	*keep = ge_xrealloc(*keep, (*nk + 1) * sizeof **keep);
	(*keep)[(*nk)++] = c;
	for (char *t = strtok(c, ","); t; t = strtok(NULL, ",")) {
		*v = ge_xrealloc(*v, (*n + 1) * sizeof **v);
		(*v)[(*n)++] = t;
	}
}

static void free_keep(char **keep, size_t nk)
{
	for (size_t i = 0; i < nk; i++)
		free(keep[i]);
	free(keep);
}

/* Saves g to out (format by name, or fmt); one line and a status when it
 * fails. */
static int save_to(ge_graph *g, const char *out, const char *fmt,
		   const char *cmd)
{
	ge_save_opts so = {.format = GE_FMT_AUTO};
	int rc = cli_format(cmd, fmt, &so.format);
	if (rc)
		return rc;
	ge_error err;
	if (ge_save(g, out, &so, &err) != GE_OK) {
		cli_errmsg("%s", err.msg);
		return cli_status(&err);
	}
	return 0;
}

static const struct cli_opt compose_opts[] = {
	{"output", 'o', 1, O_OUT},
	{"map", 'm', 1, O_MAP},
	{"prefix", 'p', 1, O_PREFIX},
	{"tags", 't', 1, O_TAGS},
	{"format", 'f', 1, O_FORMAT},
	{NULL, 0, 0, 0},
};

int cmd_compose(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val, *out = NULL, *prefix = NULL, *fmt = NULL;
	const char **from = NULL, **to = NULL;
	size_t n = 0;
	int key, rc = 0;
	cli_args_init(&a, "compose", argc, argv);
	while ((key = cli_getopt(&a, compose_opts, &val)) > 0) {
		switch (key) {
		case O_OUT: out = val; break;
		case O_PREFIX: prefix = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_FORMAT: fmt = val; break;
		case O_MAP: {
			const char *eq = strrchr(val, '=');
			if (!eq || eq == val || !eq[1]) {
				rc = cli_usage("compose", "--map needs "
					       "A_TENSOR=B_INPUT (got '%s')",
					       val);
				break;
			}
			from = ge_xrealloc(from, (n + 1) * sizeof *from);
			to = ge_xrealloc(to, (n + 1) * sizeof *to);
			char *f = ge_xmalloc((size_t)(eq - val) + 1);
			memcpy(f, val, (size_t)(eq - val));
			f[eq - val] = 0;
			from[n] = f;
			to[n++] = eq + 1;
			break;
		}
		}
		if (rc)
			break;
	}
	if (key < 0)
		rc = EXIT_USAGE;
	else if (rc)
		;
	else if (a.npos != 2)
		rc = cli_usage("compose", "two models, A and B, are needed");
	else if (!out)
		rc = cli_usage("compose", "-o OUT is needed");
	else if (!n)
		rc = cli_usage("compose", "at least one --map A_TENSOR=B_INPUT "
			       "is needed");
	ge_graph *ga = NULL, *gb = NULL, *gc = NULL;
	if (!rc)
		rc = cli_load_model(a.pos[0], &mo, &ga);
	if (!rc)
		rc = cli_load_model(a.pos[1], &mo, &gb);
	if (!rc) {
		ge_compose_opts o = {prefix, from, to, n};
		ge_error err;
		if (ge_compose(ga, gb, &o, &gc, &err) != GE_OK) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		}
	}
	if (!rc)
		rc = save_to(gc, out, fmt, "compose");
	if (gc)
		ge_graph_free(gc);
	if (gb)
		ge_graph_free(gb);
	if (ga)
		ge_graph_free(ga);
	for (size_t i = 0; i < n; i++)
		free((char *)from[i]);
	free(from);
	free(to);
	cli_args_free(&a);
	return rc;
}

static const struct cli_opt extract_opts[] = {
	{"output", 'o', 1, O_OUT},
	{"inputs", 'i', 1, O_INPUTS},
	{"outputs", 0, 1, O_OUTPUTS},
	{"tags", 't', 1, O_TAGS},
	{"format", 'f', 1, O_FORMAT},
	{NULL, 0, 0, 0},
};

int cmd_extract(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val, *out = NULL, *fmt = NULL;
	char **ins = NULL, **outs = NULL, **keep = NULL;
	size_t ni = 0, no = 0, nk = 0;
	int key, rc = 0;
	cli_args_init(&a, "extract", argc, argv);
	while ((key = cli_getopt(&a, extract_opts, &val)) > 0) {
		switch (key) {
		case O_OUT: out = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_FORMAT: fmt = val; break;
		case O_INPUTS: add_list(val, &ins, &ni, &keep, &nk); break;
		case O_OUTPUTS: add_list(val, &outs, &no, &keep, &nk); break;
		}
	}
	if (key < 0)
		rc = EXIT_USAGE;
	else if (a.npos != 1)
		rc = cli_usage("extract", "one MODEL is needed");
	else if (!out)
		rc = cli_usage("extract", "-o OUT is needed");
	else if (!no)
		rc = cli_usage("extract", "--outputs is needed");
	ge_graph *g = NULL, *c = NULL;
	if (!rc)
		rc = cli_load_model(a.pos[0], &mo, &g);
	if (!rc) {
		ge_error err;
		if (ge_extract(g, (const char *const *)ins, ni,
			       (const char *const *)outs, no, &c,
			       &err) != GE_OK) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		}
	}
	if (!rc) {
		/* a directory unless the name says a file */
		size_t len = strlen(out);
		int file = (len > 3 && !strcmp(out + len - 3, ".pb")) ||
			   (len > 6 && !strcmp(out + len - 6, ".pbtxt"));
		rc = save_to(c, out, fmt ? fmt : file ? NULL : "savedmodel",
			     "extract");
	}
	if (c)
		ge_graph_free(c);
	if (g)
		ge_graph_free(g);
	free(ins);
	free(outs);
	free_keep(keep, nk);
	cli_args_free(&a);
	return rc;
}
