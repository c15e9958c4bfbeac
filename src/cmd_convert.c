/*
 * cmd_convert.c: `gerewrite convert IN OUT` and `gerewrite validate MODEL`.
 *
 * convert is a load and a save: the library sniffs IN's format, and its
 * save is atomic, refuses to overwrite the file it read (unless
 * --overwrite: then IN is replaced in place, atomically), and picks the
 * encoding from OUT's name when no --format is given.  Whatever fails, OUT
 * is not written and the one-line error names the file (and the node, or
 * the line and column of a text file).
 *
 * A SavedModel whose graph has variables but whose directory has no
 * variables/ is refused (exit 2) unless --allow-missing-variables: the
 * loader itself reads such a directory (TensorFlow's does too, and leaves
 * the variables uninitialized), but a converted copy would look complete
 * and is not.
 *
 * Both check a SavedModel's checkpoint (the index's structure and
 * checksums, every entry inside its data shard) unless --no-verify.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "cli.h"
#include "formats/tfjs.h"
#include "functions/func.h"
#include "analyses/shapes.h"
#include "variables/varpolicy.h"

enum {
	O_FORMAT = 1, O_TAGS, O_ALLOW_MISSING, O_QUIET, O_SHARD_SIZE,
	O_QUANTIZE, O_QUANTIZE_WEIGHTS, O_NO_VERIFY, O_OVERWRITE,
};

static const struct cli_opt convert_opts[] = {
	{"format", 'f', 1, O_FORMAT},
	{"tags", 't', 1, O_TAGS},
	{"allow-missing-variables", 0, 0, O_ALLOW_MISSING},
	{"shard-size", 0, 1, O_SHARD_SIZE},
	{"quantize", 0, 1, O_QUANTIZE},
	{"quantize-weights", 0, 1, O_QUANTIZE_WEIGHTS},
	{"no-verify", 0, 0, O_NO_VERIFY},
	{"overwrite", 0, 0, O_OVERWRITE},
	{NULL, 0, 0, 0},
};

int cmd_convert(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *format = NULL, *val, *shard_size = NULL, *quant = NULL,
		   *qnames = NULL;
	char *keep = NULL;
	const char **pats = NULL;
	ge_save_opts so = {.format = GE_FMT_AUTO};
	int key, rc = 0, no_verify = 0;
	cli_args_init(&a, "convert", argc, argv);
	while ((key = cli_getopt(&a, convert_opts, &val)) > 0) {
		switch (key) {
		case O_FORMAT: format = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_ALLOW_MISSING: mo.allow_missing_variables = 1; break;
		case O_SHARD_SIZE: shard_size = val; break;
		case O_QUANTIZE: quant = val; break;
		case O_QUANTIZE_WEIGHTS: qnames = val; break;
		case O_NO_VERIFY: no_verify = 1; break;
		case O_OVERWRITE: so.overwrite = 1; break;
		}
	}
	if (key < 0)
		rc = EXIT_USAGE;
	else if (a.npos < 2)
		rc = cli_usage("convert", "IN and OUT are needed");
	else if (a.npos > 2)
		rc = cli_usage("convert", "too many arguments ('%s')", a.pos[2]);
	else if (!(rc = cli_format("convert", format, &so.format)))
		rc = cli_tfjs_opts("convert", shard_size, quant, qnames, &so,
				   &keep, &pats);
	if (rc)
		goto out;
	ge_graph *g;
	if ((rc = cli_load_model(a.pos[0], &mo, &g)))
		goto out;
	ge_set_verify(!no_verify);
	ge_error err;
	if (ge_save(g, a.pos[1], &so, &err) != GE_OK) {
		cli_save_error(&err, NULL, 0);
		rc = cli_status(&err);
	} else {
		cli_warn_dropped_values(cli_has_values(g), g, a.pos[1]);
	}
	ge_graph_free(g);
out:
	free(keep);
	free(pats);
	cli_args_free(&a);
	return rc;
}

static const struct cli_opt validate_opts[] = {
	{"format", 'f', 1, O_FORMAT},
	{"tags", 't', 1, O_TAGS},
	{"quiet", 'q', 0, O_QUIET},
	{"no-verify", 0, 0, O_NO_VERIFY},
	{NULL, 0, 0, 0},
};

/* Lists the problems of one model; 0 valid, EXIT_RUNTIME problems,
 * EXIT_USAGE unreadable. */
static int validate_one(const char *path, const struct cli_model_opts *mo,
			int quiet, int no_verify)
{
	ge_graph *g;
	int rc = cli_load_model(path, mo, &g);
	if (rc)
		return rc;
	ge_buf rep = GE_BUF_INIT;
	/* the function library: every body as a graph (so the graph's own
	 * check leaves the library's bytes alone), and every call */
	ge_error ferr;
	int flib = ge_flib_load(g, &ferr) == GE_OK;
	size_t n = ge_graph_validate(g, &rep);
	if (!flib) {
		ge_buf_printf(&rep, "%s\n", ferr.msg);
		n++;
	} else if (ge_func_count(g)) {
		n += ge_flib_validate(g, 1, &rep);
	}
	n += ge_shapes_validate(g, &rep);
	n += ge_variables_validate(g, &rep);
	char why[4200];
	if (cli_variables_missing(g, why, sizeof why)) {
		ge_buf_printf(&rep, "%s\n", why);
		n++;
	}
	ge_error verr;
	const char *smdir = ge_graph_savedmodel_dir(g);
	if (smdir && !no_verify && ge_savedmodel_verify(smdir, &verr)) {
		ge_buf_printf(&rep, "checkpoint: %s\n", verr.msg);
		n++;
	}
	const char *p = (const char *)rep.data, *end = p + rep.len;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len)
			printf("%s: %.*s\n", path, (int)len, p);
		p += len + 1;
	}
	if (n == 0 && !quiet)
		printf("%s: valid (%zu ops)\n", path, ge_graph_num_ops(g));
	ge_buf_free(&rep);
	ge_graph_free(g);
	return n ? EXIT_RUNTIME : 0;
}

/* validate MODEL...: each model in turn, the worst status wins (an
 * unreadable model over one with problems) */
int cmd_validate(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val;
	int key, rc = 0, quiet = 0, no_verify = 0;
	cli_args_init(&a, "validate", argc, argv);
	while ((key = cli_getopt(&a, validate_opts, &val)) > 0) {
		switch (key) {
		case O_FORMAT: mo.format = val; break;
		case O_TAGS: mo.tags = val; break;
		case O_QUIET: quiet = 1; break;
		case O_NO_VERIFY: no_verify = 1; break;
		}
	}
	ge_format f;
	if (key < 0)
		rc = EXIT_USAGE;
	else if (a.npos < 1)
		rc = cli_usage("validate", "a MODEL is needed");
	else
		rc = cli_format("validate", mo.format, &f);
	if (rc)
		goto out;
	/* the attr checks that make a load fail are problems to list here */
	mo.no_check = 1;
	for (int i = 0; i < a.npos; i++) {
		int r = validate_one(a.pos[i], &mo, quiet, no_verify);
		if (r == EXIT_USAGE || (r && !rc))
			rc = r;
	}
out:
	cli_args_free(&a);
	return rc;
}
