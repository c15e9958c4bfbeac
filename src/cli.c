/*
 * cli.c: option parsing and model loading shared by the subcommands.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lge.h"
#include "formats/tfjs.h"
#include "variables/checkpoint.h"
#include "variables/varpolicy.h"

/* ------------------------------------------------------------ options */

void cli_args_init(struct cli_args *a, const char *cmd, int argc, char **argv)
{
	a->cmd = cmd;
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
	a->pos = ge_xcalloc((size_t)argc + 1, sizeof *a->pos);
	a->npos = 0;
	a->dashdash = 0;
}

void cli_args_free(struct cli_args *a)
{
	free(a->pos);
	a->pos = NULL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, PROG " %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " help %s'.\n", cmd);
	return EXIT_USAGE;
}

/* GNU style: options and operands in any order, "--name=value" or
 * "--name value", "-x value" or "-xvalue", "--" ends the options. */
int cli_getopt(struct cli_args *a, const struct cli_opt *opts,
	       const char **val)
{
	*val = NULL;
	while (a->i < a->argc) {
		char *s = a->argv[a->i++];
		if (a->dashdash || s[0] != '-' || s[1] == 0) {
			a->pos[a->npos++] = s;
			continue;
		}
		if (!strcmp(s, "--")) {
			a->dashdash = 1;
			continue;
		}
		const struct cli_opt *o = NULL;
		const char *inl = NULL;
		if (s[1] == '-') {
			const char *name = s + 2;
			const char *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			for (const struct cli_opt *p = opts; p->name; p++)
				if (strlen(p->name) == n &&
				    !strncmp(p->name, name, n)) {
					o = p;
					break;
				}
			if (o && eq)
				inl = eq + 1;
		} else {
			for (const struct cli_opt *p = opts; p->name; p++)
				if (p->shortc && p->shortc == s[1]) {
					o = p;
					break;
				}
			if (o && s[2])
				inl = s + 2;
		}
		if (!o)
			return cli_usage(a->cmd, "unknown option '%s'", s), -1;
		if (!o->has_arg) {
			if (inl)
				return cli_usage(a->cmd,
						 "option '--%s' takes no value",
						 o->name),
				       -1;
			return o->key;
		}
		if (inl) {
			*val = inl;
		} else if (a->i < a->argc) {
			*val = a->argv[a->i++];
		} else {
			return cli_usage(a->cmd, "option '%s' needs a value", s),
			       -1;
		}
		return o->key;
	}
	return 0;
}

/* ------------------------------------------------------------ models */

int cli_format(const char *cmd, const char *name, ge_format *out)
{
	*out = GE_FMT_AUTO;
	if (!name || !strcmp(name, "auto"))
		return 0;
	if (ge_format_from_name(name, out) != GE_OK)
		return cli_usage(cmd,
				 "unknown format '%s' (graphdef, graphdef-text, "
				 "meta, meta-text, savedmodel, savedmodel-text, "
				 "tfjs, auto)",
				 name);
	return 0;
}

static int is_variable_type(const char *t)
{
	return !strcmp(t, "VariableV2") || !strcmp(t, "Variable") ||
	       !strcmp(t, "VarHandleOp") || !strcmp(t, "TemporaryVariable") ||
	       !strcmp(t, "AutoReloadVariable");
}

size_t cli_count_variables(const ge_graph *g)
{
	size_t n = 0, cap = ge_graph_capacity(g);
	for (size_t id = 0; id < cap; id++)
		if (ge_op_alive(g, (ge_opid)id) &&
		    is_variable_type(ge_op_type(g, (ge_opid)id)))
			n++;
	return n;
}

int cli_variables_missing(const ge_graph *g, char *why, size_t cap)
{
	const char *dir = ge_graph_savedmodel_dir(g);
	if (!dir)
		return 0;
	size_t n = cli_count_variables(g);
	if (!n)
		return 0;
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/variables/variables.index", dir);
	if (stat(path, &st) == 0)
		return 0;
	snprintf(why, cap,
		 "%s: the graph has %zu variable%s but the directory has no "
		 "variables/variables.index (their values are lost; "
		 "--allow-missing-variables goes on without them)",
		 dir, n, n == 1 ? "" : "s");
	return 1;
}

int cli_has_values(const ge_graph *g)
{
	/* where values would come from first (a stat or two), the walk
	 * over every op for a variable only then: most files converted
	 * have no checkpoint */
	int kind;
	const char *dir = ge_graph_savedmodel_dir(g);
	if (dir) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/variables/variables.index",
			 dir);
		if (stat(path, &st) != 0)
			return 0;
		kind = CLI_VALUES_SAVEDMODEL;
	} else {
		char *prefix;
		ge_error err;
		if (ge_graph_checkpoint_source(g, &prefix, &err) != GE_OK)
			return 0;
		free(prefix);
		kind = CLI_VALUES_BESIDE;
	}
	return cli_count_variables(g) ? kind : 0;
}

void cli_warn_dropped_values(int had_values, const ge_graph *saved,
			     const char *out)
{
	struct stat st;
	/* a graph left without variables (frozen) needs no checkpoint; a
	 * SavedModel directory takes them along */
	if (!had_values || !cli_count_variables(saved) ||
	    (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
		return;
	const char *whose = had_values == CLI_VALUES_SAVEDMODEL
				    ? "its variables/ checkpoint"
				    : "the checkpoint beside it";
	size_t n = strlen(out);
	if (n < 5 || strcmp(out + n - 5, ".meta")) {
		cli_errmsg("%s: warning: the input's variable values (%s) are "
			   "not in this file; save to a SavedModel directory "
			   "to keep them", out, whose);
		return;
	}
	/* a MetaGraphDef finds its checkpoint next to it (x.meta, x.index):
	 * written there by a plan (variables.md), or there before */
	char *prefix;
	ge_error err;
	if (ge_checkpoint_prefix(out, &prefix, &err) == GE_OK) {
		free(prefix);
		return;
	}
	cli_errmsg("%s: warning: the input's variable values (%s) are not "
		   "beside this file: copy the checkpoint's .index and .data-* "
		   "files next to it as %.*s.index and .data-*, or save to a "
		   "SavedModel directory, to keep them",
		   out, whose, (int)(n - 5), out);
}

int cli_tfjs_opts(const char *cmd, const char *size, const char *quant, const char *names,
		  ge_save_opts *so, char **keep, const char ***pats)
{
	if (size) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(size, &end, 10);
		if (errno || end == size || *end || !n || size[0] == '-')
			return cli_usage(cmd, "--shard-size needs a "
					 "positive number of bytes (got '%s')",
					 size);
		so->shard_size = (size_t)n;
	}
	if (quant) {
		ge_tfjs_quant q;
		if (ge_tfjs_quant_from_name(quant, &q))
			return cli_usage(cmd, "unknown --quantize '%s' "
					 "(uint8, uint16, float16, none)", quant);
		so->quantize = (int)q;
	}
	if (names) {
		*keep = ge_xstrdup(names);
		size_t n = 1;
		for (const char *c = names; *c; c++)
			n += *c == ',';
		*pats = ge_xcalloc(n, sizeof **pats);
		n = 0;
		for (char *s = strtok(*keep, ","); s; s = strtok(NULL, ","))
			(*pats)[n++] = s;
		so->quantize_names = *pats;
		so->n_quantize_names = n;
	}
	return 0;
}

/* The library's hint names the Lua option ({overwrite = true}); on the
 * command line it is --overwrite. */
static const char LIB_HINT[] = "(use overwrite)";

void cli_save_error(const ge_error *err, char *buf, size_t cap)
{
	const char *hint = strstr(err->msg, LIB_HINT);
	char line[sizeof err->msg + 16];
	if (hint)
		snprintf(line, sizeof line, "%.*s(use --overwrite)%s",
			 (int)(hint - err->msg), err->msg,
			 hint + sizeof LIB_HINT - 1);
	else
		snprintf(line, sizeof line, "%s", err->msg);
	if (buf)
		snprintf(buf, cap, "%s", line);
	else
		cli_errmsg("%s", line);
}

int cli_status(const ge_error *err)
{
	static const struct {
		const char *kind;
		int status;
	} status[] = {
		{"io", EXIT_USAGE},
		{"notfound", EXIT_USAGE},
		{"format", EXIT_USAGE},
		{"invalid", EXIT_USAGE},
	};
	const char *kind = lge_errkind(err->code);
	for (size_t i = 0; i < sizeof status / sizeof status[0]; i++)
		if (!strcmp(status[i].kind, kind))
			return status[i].status;
	return EXIT_USAGE;
}

int cli_load_model(const char *path, const struct cli_model_opts *o,
		   ge_graph **out)
{
	ge_load_opts lo;
	memset(&lo, 0, sizeof lo);
	*out = NULL;
	if (o) {
		lo.tags = o->tags;
		lo.no_check = o->no_check;
		if (o->format) {
			if (ge_format_from_name(o->format, &lo.format) != GE_OK) {
				cli_errmsg("unknown format '%s'", o->format);
				return EXIT_USAGE;
			}
		}
	}
	ge_error err;
	if (ge_load(path, &lo, out, &err) != GE_OK) {
		cli_errmsg("%s", err.msg);
		return cli_status(&err);
	}
	/* a SavedModel with variables but no variables/ directory has no
	 * values to lose: it loads (and saves) as it is */
	return 0;
}
