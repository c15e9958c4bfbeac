/*
 * cmd_diff.c: `gerewrite diff A B`: the ops removed (-), added (+) and
 * changed (~) from A to B, matched by name (lib/diff.c), one line each,
 * then a count.  Exit 0 when the graphs have the same ops, 1 when not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"

/* Appends the data inputs of an op as "a, b:1" (at most 8 shown). */
static void add_inputs(ge_buf *b, const ge_graph *g, ge_opid id)
{
	size_t n = ge_op_num_inputs(g, id);
	if (n == 0)
		ge_buf_adds(b, "(none)");
	for (size_t i = 0; i < n && i < 8; i++) {
		ge_tref t = ge_op_input(g, id, i);
		if (i)
			ge_buf_adds(b, ", ");
		if (t.op == GE_NOOP)
			ge_buf_adds(b, ge_op_dangling_input(g, id, i));
		else
			ge_tensor_put(g, t, 1, b);
	}
	if (n > 8)
		ge_buf_printf(b, ", ... (%zu)", n);
}

/* Appends the control inputs of an op as "^a, ^b" (at most 8 shown). */
static void add_controls(ge_buf *b, const ge_graph *g, ge_opid id)
{
	size_t n = ge_op_num_control_inputs(g, id);
	size_t nin = ge_op_num_inputs(g, id);
	if (n == 0)
		ge_buf_adds(b, "(none)");
	for (size_t i = 0; i < n && i < 8; i++) {
		ge_opid c = ge_op_control_input(g, id, i);
		if (i)
			ge_buf_adds(b, ", ");
		if (c == GE_NOOP) {
			const char *d = ge_op_dangling_input(g, id, nin + i);
			ge_buf_printf(b, "%s%s", d && d[0] == '^' ? "" : "^",
				      d ? d : "?");
		} else {
			ge_tensor_put(g, (ge_tref){c, GE_CONTROL}, 1, b);
		}
	}
	if (n > 8)
		ge_buf_printf(b, ", ... (%zu)", n);
}

static void describe(ge_buf *b, const ge_graph *ga, const ge_graph *gb,
		     const ge_diff_entry *e)
{
	const char *sep = ": ";
	ge_buf_printf(b, "~ %s (%s)", ge_op_name(gb, e->b), ge_op_type(gb, e->b));
	if (e->what & GE_DIFF_TYPE) {
		ge_buf_printf(b, "%stype %s -> %s", sep, ge_op_type(ga, e->a),
			      ge_op_type(gb, e->b));
		sep = "; ";
	}
	if (e->what & GE_DIFF_INPUTS) {
		ge_buf_printf(b, "%sinputs ", sep);
		add_inputs(b, ga, e->a);
		ge_buf_adds(b, " -> ");
		add_inputs(b, gb, e->b);
		sep = "; ";
	}
	if (e->what & GE_DIFF_CONTROL) {
		ge_buf_printf(b, "%scontrol inputs ", sep);
		add_controls(b, ga, e->a);
		ge_buf_adds(b, " -> ");
		add_controls(b, gb, e->b);
		sep = "; ";
	}
	if (e->what & GE_DIFF_DEVICE) {
		ge_buf_printf(b, "%sdevice \"%s\" -> \"%s\"", sep,
			      ge_op_device(ga, e->a), ge_op_device(gb, e->b));
		sep = "; ";
	}
	if (e->what & GE_DIFF_ATTRS) {
		ge_buf names = GE_BUF_INIT;
		ge_op_diff_attrs(ga, e->a, gb, e->b, &names);
		/* the '\n' separators become ", " */
		while (names.len && names.data[names.len - 1] == '\n')
			names.data[--names.len] = 0;
		ge_buf_printf(b, "%sattrs ", sep);
		for (size_t i = 0; i < names.len; i++) {
			if (names.data[i] == '\n')
				ge_buf_adds(b, ", ");
			else
				ge_buf_addc(b, names.data[i]);
		}
		ge_buf_free(&names);
	}
}

enum { O_TAGS = 1, O_QUIET };

static const struct cli_opt diff_opts[] = {
	{"tags", 't', 1, O_TAGS},
	{"quiet", 'q', 0, O_QUIET},
	{NULL, 0, 0, 0},
};

int cmd_diff(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	struct cli_model_opts mo = {0};
	const char *val;
	int key, rc = 0, quiet = 0;
	cli_args_init(&a, "diff", argc, argv);
	while ((key = cli_getopt(&a, diff_opts, &val)) > 0) {
		switch (key) {
		case O_TAGS: mo.tags = val; break;
		case O_QUIET: quiet = 1; break;
		}
	}
	if (key < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.npos != 2) {
		rc = cli_usage("diff", "two models are needed (A B)");
		goto out;
	}
	mo.allow_missing_variables = 1;
	mo.no_check = 1;
	ge_graph *ga, *gb;
	if ((rc = cli_load_model(a.pos[0], &mo, &ga)))
		goto out;
	if ((rc = cli_load_model(a.pos[1], &mo, &gb))) {
		ge_graph_free(ga);
		goto out;
	}
	ge_diff_entry *e;
	size_t n = ge_graph_diff(ga, gb, &e);
	size_t counts[3] = {0, 0, 0};
	ge_buf line = GE_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		counts[e[i].kind]++;
		if (quiet)
			continue;
		line.len = 0;
		if (e[i].kind == GE_DIFF_REMOVED)
			ge_buf_printf(&line, "- %s (%s)", ge_op_name(ga, e[i].a),
				      ge_op_type(ga, e[i].a));
		else if (e[i].kind == GE_DIFF_ADDED)
			ge_buf_printf(&line, "+ %s (%s)", ge_op_name(gb, e[i].b),
				      ge_op_type(gb, e[i].b));
		else
			describe(&line, ga, gb, &e[i]);
		printf("%s\n", line.data);
	}
	if (!quiet && n)
		printf("%zu removed, %zu added, %zu changed\n",
		       counts[GE_DIFF_REMOVED], counts[GE_DIFF_ADDED],
		       counts[GE_DIFF_CHANGED]);
	ge_buf_free(&line);
	free(e);
	ge_graph_free(ga);
	ge_graph_free(gb);
	rc = n ? EXIT_RUNTIME : 0;
out:
	cli_args_free(&a);
	return rc;
}
