/*
 * cli.h: what the parts of the gerewrite command share: exit codes, error
 * messages, calling Lua with the program's message handler, option
 * parsing for subcommands, loading models and recipes.
 *
 * Every message goes to stderr as one line starting "gerewrite: ", then
 * the file it is about.  Subcommands return their exit code; none calls
 * exit() itself, so the Lua state is always closed.
 */
#ifndef GE_CLI_H
#define GE_CLI_H

#include <stdio.h>

#include <lua.h>

#include "base/base.h"
#include "graph/graph.h"
#include "formats/model.h"

#define PROG "gerewrite"

enum {
	EXIT_RUNTIME = 1, /* a script or recipe raised an error; for
			     validate, diff and batch: problems found */
	EXIT_USAGE = 2,   /* bad option, unreadable script, model or output */
	EXIT_SYNTAX = 3,  /* a script or recipe did not compile */
	EXIT_NOOP = 3,    /* run --strict: the recipe changed nothing */
};

/* ---- messages, calls, the Lua heap, usage texts (cli_run.c) ---- */

/* Prints "gerewrite: " and the formatted message, one line, to stderr. */
void cli_errmsg(const char *fmt, ...) GE_PRINTF(1, 2);
/* [-(narg+1), +(nres|1), -] Calls the function below narg arguments with
 * the message handler and ^C handling; on error leaves the message and
 * returns the lua_pcall status. */
int cli_docall(lua_State *L, int narg, int nres);
/* [-1, +0, -] Prints the message at the top with cli_errmsg and pops it. */
void cli_report(lua_State *L);
/* Whether error messages get a stack traceback (--traceback). */
extern int cli_traceback;
/* Set by a command after which the process ends (run): the graphs of a
 * run that succeeded are then left to the end of the process (see
 * main.c) rather than closed when the run ends. */
extern int cli_last_run;

/* ---- option parsing (cli.c) ---- */

/* One option of a subcommand: `name` is the long name without "--",
 * `shortc` a one-letter alias or 0, `key` what cli_getopt returns. */
struct cli_opt {
	const char *name;
	int shortc;
	int has_arg;
	int key;
};

/* The state of a parse.  Arguments that are not options are collected in
 * order in pos (npos of them); everything after "--" is positional. */
struct cli_args {
	const char *cmd; /* for messages: "convert" */
	int argc;
	char **argv;
	int i;
	char **pos;
	int npos;
	int dashdash;
};

void cli_args_init(struct cli_args *a, const char *cmd, int argc, char **argv);
void cli_args_free(struct cli_args *a);
/* Returns the key of the next option (its argument in *val), 0 when the
 * arguments are used up, or -1 after printing a usage error. */
int cli_getopt(struct cli_args *a, const struct cli_opt *opts,
	       const char **val);
/* Prints "gerewrite CMD: MESSAGE" and a hint to `gerewrite help CMD`;
 * returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) GE_PRINTF(2, 3);

/* ---- models (cli.c) ---- */

/* How a command reads a model: --format, --tags, and whether a SavedModel
 * whose graph has variables may lack its variables/ directory. */
struct cli_model_opts {
	const char *format;
	const char *tags;
	int allow_missing_variables;
	int no_check; /* load graphs that fail the attr checks (validate) */
	int functions; /* which bodies a recipe reaches: CLI_FN_* */
	int strict;    /* a recipe that changes nothing fails (EXIT_NOOP) */
	int provenance; /* CLI_PROV_* bits (run --provenance) */
};
enum { CLI_FN_REACHABLE = 0, CLI_FN_ALL, CLI_FN_NONE };
/* run --provenance: the rule that made an op also goes into its
 * `_gerewrite_rule` attr (lib/editor/provenance.h); the report lists each op
 * made with its rule; off: no op gains provenance (GE_PROV_OFF). */
enum { CLI_PROV_ATTR = 1, CLI_PROV_LIST = 2, CLI_PROV_OFF = 4 };
/* --provenance field|attr|list|off into mo->provenance for cmd (batch
 * takes field and off alone); EXIT_USAGE after a usage message for
 * another word. */
int cli_provenance_opt(const char *cmd, const char *val,
		       struct cli_model_opts *mo);
/* Parses --functions reachable|all|none into mo->functions; EXIT_USAGE
 * (after a usage message for cmd) if it is none of those. */
int cli_functions_opt(const char *cmd, const char *val,
		      struct cli_model_opts *mo);

/* The tfjs save options of --shard-size, --quantize and
 * --quantize-weights (any may be NULL) into so, for cmd's messages; the
 * patterns are cut out of a copy of the list that *keep owns (*pats too:
 * the caller frees both).  0 or EXIT_USAGE after a usage message. */
int cli_tfjs_opts(const char *cmd, const char *size, const char *quant,
		  const char *names, ge_save_opts *so, char **keep,
		  const char ***pats);
/* A failed save's message as the command line says it (the hint names
 * --overwrite): printed with cli_errmsg, or into buf when buf is given. */
void cli_save_error(const ge_error *err, char *buf, size_t cap);

/* The exit status of a command whose load or save failed with err, from
 * the kind of the error (lge_errkind, what scripts get as the third value
 * of ge.load and g:save): a file missing or unreadable ("io",
 * "notfound"), bytes that are not a model ("format") and a request the
 * library refused ("invalid") are all the command line's fault, 2. */
int cli_status(const ge_error *err);
/* Loads a model; on failure prints the library's one-line message and
 * returns cli_status's code. */
int cli_load_model(const char *path, const struct cli_model_opts *o,
		   ge_graph **out);
/* The format named by --format (NULL: GE_FMT_AUTO); EXIT_USAGE after a
 * message when the name is unknown. */
int cli_format(const char *cmd, const char *name, ge_format *out);
/* Whether a graph holds variable ops (VariableV2, VarHandleOp, ...). */
size_t cli_count_variables(const ge_graph *g);
/* A SavedModel whose graph has variables but whose directory has no
 * variables/variables.index: returns 1 and describes it in why. */
int cli_variables_missing(const ge_graph *g, char *why, size_t cap);

/* Whether g has variables whose values its input holds: 0 no,
 * CLI_VALUES_SAVEDMODEL in a SavedModel's variables/, CLI_VALUES_BESIDE
 * in a checkpoint beside its .meta (x.meta, x.index). */
enum { CLI_VALUES_SAVEDMODEL = 1, CLI_VALUES_BESIDE = 2 };
int cli_has_values(const ge_graph *g);
/* After saving `saved` to out: a warning when the input had values
 * (had_values, from cli_has_values), the saved graph still has variables
 * and out is a file that cannot hold their values, or a MetaGraphDef
 * without a checkpoint next to it. */
void cli_warn_dropped_values(int had_values, const ge_graph *saved,
			     const char *out);

/* ---- recipes (cmd_run.c) ---- */

/* [-0, +1, e] Pushes the gerewrite.recipe module (configured with the
 * program's search path). */
void cli_recipe_module(lua_State *L);
/* [-0, +(1|0), -] Finds and loads a recipe by name or path.  Returns 0 with
 * the recipe table pushed, or an exit code (2: not found, 3: does not
 * load) after printing the message. */
int cli_load_recipe(lua_State *L, const char *name);
/* [-0, +(1|0), -] Checks the --param assignments (a NULL-terminated list
 * of "k=v") against the recipe at index rec; 0 with the params table
 * pushed, or EXIT_USAGE after printing the message. */
int cli_recipe_params(lua_State *L, int rec, char **assign, int n);
/* Prints the recipes found on the search path, one line each. */
void cli_list_recipes(lua_State *L, FILE *f);

/* What happened to one model. */
struct run_result {
	int status;                 /* 0, EXIT_RUNTIME (the recipe raised),
				       EXIT_USAGE (load or save failed),
				       EXIT_NOOP (--strict, nothing changed) */
	long ops_before, ops_after; /* the graph's and those of the bodies
				       the recipe ran on; -1 when unknown */
	long added, removed, changed; /* ops, over the graph and bodies */
	int nothing;                /* the recipe changed nothing */
	double seconds;
	char error[2048];           /* one line, without "gerewrite: " */
	char verify[1024];          /* --verify: a JSON object, or "" */
	ge_buf report;              /* what each run changed, a line each
				       ("RECIPE: MODEL[: function F]: ...") */
	ge_buf warnings;            /* the runner's warnings, a line each */
};
/* Sets the memory budget (lib/base/bounds.h) and the Lua heap's limit. */
void cli_set_max_memory(uint64_t bytes);
/* The Lua state's allocator (a lua_Alloc), held to cli_lua_limit bytes
 * of Lua heap: a script that builds tables from a hostile model gets
 * "not enough memory", an ordinary error. */
void *cli_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* After lua_close: the Lua heap's pool gives its slabs back. */
void cli_lua_heap_release(void);
extern size_t cli_lua_limit;
/* Set by main before the lua_close that ends a run which succeeded: the
 * process exits next, so cli_lua_alloc no longer frees blocks one by one
 * and cli_lua_heap_release leaves the slabs to the exit (not in the
 * sanitizer build, nor under GEREWRITE_TEARDOWN=1). */
extern int cli_lua_exiting;
/* [-0, +0, -] Loads MODEL, runs the recipe (table at index rec) with the
 * params (table at index par) on the graph and on the bodies mo->functions
 * selects, reports what each run changed, and saves the graph (or the
 * graph run returned) to OUT with so.  A run that changed nothing warns
 * (and fails under mo->strict); a parameter declared with `matches` whose
 * value matches no type or op warns, naming the nearest.  Returns
 * res->status; the caller frees res->report and res->warnings. */
int cli_run_recipe(lua_State *L, int rec, int par, const char *model,
		   const char *out, const struct cli_model_opts *mo,
		   const ge_save_opts *so, struct run_result *res);

/* The values of a recipe's parameters declared with `matches` (op types
 * or op names), and whether the model has them (run_check.c). */
struct cli_wants;
/* [-0, +0, -] The values of the params (table at par) of the recipe (at
 * rec); free with cli_wants_free. */
struct cli_wants *cli_wants_new(lua_State *L, int rec, int par);
/* Before a run on g: the values g has are found. */
void cli_wants_see(struct cli_wants *w, ge_graph *g);
/* Appends to out, "; " between, a message for each value found in no
 * graph seen, naming the nearest types or names ("no op of type Conv2d;
 * Conv2D has 2"); without all, only those that name some.  Returns how
 * many. */
int cli_wants_report(const struct cli_wants *w, int all, ge_buf *out);
void cli_wants_free(struct cli_wants *w);

/* Writes the lines of a report (struct run_result) to stderr. */
void cli_print_lines(const ge_buf *b);

/* ---- checking a recipe's output by running it (cmd_eval.c) ---- */

/* --verify of run and batch: the output is run against the input on
 * seeded inputs and judged by what the recipe declares of its numerics
 * (field `numerics`: "exact", bit-equal outputs; "rounding", within
 * atol and rtol; "lossy", a relative error up to max_error, the largest
 * |out - in| over the largest |in| of each output; "changes", the
 * recipe changes what the model computes: figures only). */
struct cli_verify {
	int on;
	double max_error; /* < 0: the recipe's max_error */
	double atol, rtol;
	int print;        /* print the verdict on stdout (run) */
	const char *const *inputs; /* run: --input NAME=VALUE, as for eval */
	size_t ninputs;
	int64_t dim;      /* run: --dim */
};
#define CLI_VERIFY_INIT {0, -1, 1e-5, 1e-5, 0, NULL, 0, 0}
/* Parses --max-error, --atol or --rtol's value into v; EXIT_USAGE after
 * a usage message for cmd. */
int cli_verify_opt(const char *cmd, const char *opt, const char *val,
		   struct cli_verify *v);
/* [-0, +0, -] After cli_run_recipe saved out: verifies it against in
 * for the recipe at rec.  Fills res->verify (JSON) and, when the output
 * is outside what the recipe declares, res->error; returns 0,
 * EXIT_RUNTIME (outside) or EXIT_USAGE (a model does not run). */
int cli_verify_recipe(lua_State *L, int rec, const char *in, const char *out,
		      const struct cli_model_opts *mo,
		      const struct cli_verify *v, struct run_result *res);

/* ---- subcommands ---- */

int cmd_convert(lua_State *L, int argc, char **argv);   /* cmd_convert.c */
int cmd_validate(lua_State *L, int argc, char **argv);  /* cmd_convert.c */
int cmd_run(lua_State *L, int argc, char **argv);       /* cmd_run.c */
int cmd_help_topic(lua_State *L, const char *topic);    /* cmd_run.c */
int cmd_info(lua_State *L, int argc, char **argv);      /* cmd_info.c */
int cmd_diff(lua_State *L, int argc, char **argv);      /* cmd_diff.c */
int cmd_dot(lua_State *L, int argc, char **argv);       /* cmd_dot.c */
int cmd_batch(lua_State *L, int argc, char **argv);     /* cmd_batch.c */
int cmd_report(lua_State *L, int argc, char **argv);    /* cmd_report.c */
int cmd_eval(lua_State *L, int argc, char **argv);      /* cmd_eval.c */
int cmd_verify(lua_State *L, int argc, char **argv);    /* cmd_eval.c */
int cmd_compose(lua_State *L, int argc, char **argv);   /* cmd_surgery.c */
int cmd_extract(lua_State *L, int argc, char **argv);   /* cmd_surgery.c */

/* The usage text of a subcommand, or NULL (cli_run.c): asks
 * cli_usage_of, which main.c sets to the lookup in its table of commands
 * before any command runs (a hook, so that no subcommand calls main.c). */
const char *cli_command_usage(const char *name);
extern const char *(*cli_usage_of)(const char *name);

/* ---- the prompt (repl.c) ---- */

/* Runs the interactive loop until end of input; returns the exit code
 * (without a terminal, that of the first error). */
int cli_repl(lua_State *L);
/* What the prompt remembers of its graphs (repl_undo.c): the global
 * undo() and the marks of loads, saves and clones (init, once); the
 * snapshot of the graphs after each entry; whether the graph the global
 * g holds has unsaved edits. */
void repl_state_init(lua_State *L);
void repl_after_entry(lua_State *L);
int repl_unsaved(lua_State *L);

#endif
