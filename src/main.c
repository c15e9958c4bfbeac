/*
 * main.c: the gerewrite command: runs Lua scripts with the gerewrite module
 * loaded, one-liners (-e), and an interactive prompt (-i).
 *
 * Shape (after lua.c): main creates the Lua state and calls pmain under
 * lua_pcall, so even a memory error while setting up is reported.  pmain
 * first looks for a subcommand, then collects options in one pass and runs
 * -e/-l in order in a second, then the script, then the prompt.
 *
 * Exit codes: 0 success, 1 a script raised an error, 2 usage or I/O
 * error, 3 a script did not compile.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#if defined(HAVE_READLINE)
#include <readline/history.h>
#include <readline/readline.h>
#define HAVE_LINE_EDITING 1
#elif defined(HAVE_LIBEDIT)
#include <editline/readline.h>
#define HAVE_LINE_EDITING 1
#endif

#include "lge.h"
#include "model.h"

#define PROG "gerewrite"

enum {
	EXIT_RUNTIME = 1, /* a script raised an error */
	EXIT_USAGE = 2,   /* bad option, unreadable script or model */
	EXIT_SYNTAX = 3,  /* a script did not compile */
};

static lua_State *globalL; /* for the SIGINT handler */
static int show_traceback;

static void errmsg(const char *fmt, ...) GE_PRINTF(1, 2);
static void errmsg(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* ------------------------------------------------------------ help */

static void print_usage(FILE *f);

static int cmd_help(lua_State *L, int argc, char **argv)
{
	(void)L, (void)argc, (void)argv;
	print_usage(stdout);
	return 0;
}

static int cmd_version(lua_State *L, int argc, char **argv)
{
	(void)L, (void)argc, (void)argv;
	printf("%s %s (%s)\n", PROG, PACKAGE_VERSION, LUA_RELEASE);
	return 0;
}

/*
 * Subcommands: when the first argument is one of these names, the rest of
 * the command line is theirs.  Each runs with the Lua state ready (global
 * `ge` bound) and returns the exit code.  A script with one of these names
 * is run as ./NAME.
 */
struct subcommand {
	const char *name;
	int (*run)(lua_State *L, int argc, char **argv); /* argv[0] = name */
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{"help", cmd_help, "show this help"},
	{"version", cmd_version, "show the version"},
	{NULL, NULL, NULL},
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] [SCRIPT [ARGS...]]\n"
		"       " PROG " -i [OPTIONS] [MODEL [ARGS...]]\n"
		"       " PROG " COMMAND [ARGS...]\n"
		"\n"
		"Rewrites TensorFlow graphs with Lua scripts.\n"
		"\n"
		"  SCRIPT       a Lua file to run, '-' for standard input; its\n"
		"               arguments are in the table `arg` (arg[0] is "
		"SCRIPT)\n"
		"               and in `...`\n"
		"  -e CODE      run CODE; may be repeated, runs in order, "
		"before SCRIPT\n"
		"  -l [G=]MOD   G = require \"MOD\" (G is MOD if not given; "
		"in order with -e)\n"
		"  -i           start the interactive prompt after the rest; "
		"with -i a\n"
		"               first argument that does not end in .lua (and "
		"is not -)\n"
		"               is a MODEL, loaded as the global `g` before -e "
		"runs\n"
		"  --traceback  add a stack traceback to error messages\n"
		"  --           stop handling options\n"
		"  -h, --help   show this help and exit\n"
		"  --version    show the version and exit\n"
		"\n"
		"Commands:\n");
	for (const struct subcommand *c = subcommands; c->name; c++)
		fprintf(f, "  %-12s %s\n", c->name, c->summary);
	fprintf(f,
		"\n"
		"The module is require \"gerewrite\", also bound to the global "
		"`ge`.\n"
		"With no SCRIPT and no -e, the prompt starts when standard "
		"input is a\n"
		"terminal; otherwise standard input is run as a script.\n"
		"\n"
		"Exit status: 0 success, 1 a script raised an error, 2 usage "
		"or I/O\n"
		"error, 3 a script did not compile.\n"
		"\n"
		"Environment:\n"
		"  GEREWRITE_TRACEBACK=1  as --traceback\n"
		"  GEREWRITE_LUA_DIR      read the built-in Lua files from "
		"this directory\n"
		"                         (for development: src/lua)\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs(PROG ": ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry '" PROG " --help'.\n", stderr);
	return EXIT_USAGE;
}

/* ------------------------------------------------------------ running */

/* A running script is stopped from a hook, because a signal handler may
 * not touch the Lua state itself. */
static void lstop(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	luaL_error(L, "interrupted");
}

static void laction(int sig)
{
	signal(sig, SIG_DFL); /* a second ^C kills the process */
	lua_sethook(globalL, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT,
		    1);
}

static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") &&
		    lua_type(L, -1) == LUA_TSTRING)
			msg = lua_tostring(L, -1);
		else
			msg = lua_pushfstring(L, "(error object is a %s value)",
					      luaL_typename(L, 1));
	}
	if (show_traceback)
		luaL_traceback(L, L, msg, 1);
	else
		lua_pushstring(L, msg);
	return 1;
}

/* [-(narg+1), +(nres|1), -] Calls the function below narg arguments with
 * the message handler and ^C handling; on error leaves the message. */
static int docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	globalL = L;
	void (*old)(int) = signal(SIGINT, laction);
	int status = lua_pcall(L, narg, nres, base);
	signal(SIGINT, old);
	lua_remove(L, base);
	return status;
}

/* [-1, +0, -] Prints the message at the top and pops it. */
static void report(lua_State *L)
{
	const char *msg = lua_tostring(L, -1);
	errmsg("%s", msg ? msg : "(error object is not a string)");
	lua_pop(L, 1);
}

/* Reads all of a stream into a malloc'd buffer. */
static int read_stream(FILE *f, ge_buf *b)
{
	char tmp[8192];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		ge_buf_add(b, tmp, n);
	return ferror(f) ? -1 : 0;
}

/* [-0, +1, -] Loads a script ("-" is standard input).  Returns 0 with
 * the chunk pushed, or an exit code with the message pushed. */
static int load_script(lua_State *L, const char *path)
{
	ge_buf b = GE_BUF_INIT;
	ge_error err;
	const char *chunkname;
	if (!strcmp(path, "-")) {
		if (read_stream(stdin, &b) < 0) {
			ge_buf_free(&b);
			lua_pushfstring(L, "stdin: %s", strerror(errno));
			return EXIT_USAGE;
		}
		chunkname = lua_pushstring(L, "=stdin");
	} else {
		uint8_t *data;
		size_t len;
		if (ge_file_read(path, &data, &len, &err) != GE_OK) {
			lua_pushstring(L, err.msg);
			return EXIT_USAGE;
		}
		b.data = data;
		b.len = b.cap = len;
		chunkname = lua_pushfstring(L, "@%s", path);
	}
	/* A first line starting with '#' (#!/usr/bin/env gerewrite) is not
	 * Lua; its newline stays so line numbers are right. */
	size_t skip = 0;
	if (b.len && b.data[0] == '#')
		while (skip < b.len && b.data[skip] != '\n')
			skip++;
	int st = luaL_loadbufferx(L, (const char *)b.data + skip, b.len - skip,
				  chunkname, "t");
	/* `gerewrite model.pb` is a likely slip for `gerewrite -i model.pb` */
	int model = st == LUA_ERRSYNTAX && strcmp(path, "-") != 0 &&
		    ge_sniff(b.data, b.len) != GE_FMT_AUTO;
	ge_buf_free(&b);
	lua_remove(L, -2);
	if (st == LUA_OK)
		return 0;
	if (model) {
		lua_pop(L, 1);
		lua_pushfstring(L,
				"%s: a model, not a Lua script (to explore it: "
				PROG " -i %s)",
				path, path);
		return EXIT_USAGE;
	}
	return st == LUA_ERRSYNTAX ? EXIT_SYNTAX : EXIT_RUNTIME;
}

/* Runs a loaded chunk (at the top, with narg arguments above it). */
static int run_chunk(lua_State *L, int narg)
{
	if (docall(L, narg, 0) != LUA_OK) {
		report(L);
		return EXIT_RUNTIME;
	}
	return 0;
}

static int run_string(lua_State *L, const char *code)
{
	if (luaL_loadbufferx(L, code, strlen(code), "=(command line)", "t") !=
	    LUA_OK) {
		report(L);
		return EXIT_SYNTAX;
	}
	return run_chunk(L, 0);
}

/* -l NAME or -l GLOBAL=NAME */
static int run_require(lua_State *L, const char *spec)
{
	const char *eq = strchr(spec, '=');
	const char *mod = eq ? eq + 1 : spec;
	lua_getglobal(L, "require");
	lua_pushstring(L, mod);
	if (docall(L, 1, 1) != LUA_OK) {
		report(L);
		return EXIT_RUNTIME;
	}
	if (eq)
		lua_pushlstring(L, spec, (size_t)(eq - spec));
	else
		lua_pushstring(L, spec);
	lua_insert(L, -2);
	lua_setglobal(L, lua_tostring(L, -2));
	lua_pop(L, 1);
	return 0;
}

/* ------------------------------------------------------------ prompt */

static const char *history_path(void)
{
	static char path[4096];
	const char *home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	snprintf(path, sizeof path, "%s/.gerewrite_history", home);
	return path;
}

/* [-0, +(0|1), -] Reads one line without its newline; 0 at end of input.
 * Prompts (and line editing) only when standard input is a terminal. */
static int read_line(lua_State *L, int first, int tty)
{
	const char *prompt = first ? "> " : ">> ";
#ifdef HAVE_LINE_EDITING
	if (tty) {
		char *line = readline(prompt);
		if (!line)
			return 0;
		lua_pushstring(L, line);
		free(line);
		return 1;
	}
#else
	if (tty) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
#endif
	luaL_Buffer b;
	char buf[1024];
	int got = 0;
	luaL_buffinit(L, &b);
	while (fgets(buf, sizeof buf, stdin)) {
		size_t n = strlen(buf);
		got = 1;
		if (n && buf[n - 1] == '\n') {
			luaL_addlstring(&b, buf, n - 1);
			luaL_pushresult(&b);
			return 1;
		}
		luaL_addlstring(&b, buf, n);
	}
	luaL_pushresult(&b);
	if (!got) {
		lua_pop(L, 1);
		return 0;
	}
	return 1;
}

/* Whether a load failed only because the chunk is not finished yet; then
 * the message is popped. */
static int incomplete(lua_State *L, int status)
{
	if (status != LUA_ERRSYNTAX)
		return 0;
	size_t n;
	const char *msg = lua_tolstring(L, -1, &n);
	static const char eof[] = "<eof>";
	if (n >= sizeof eof - 1 && !strcmp(msg + n - (sizeof eof - 1), eof)) {
		lua_pop(L, 1);
		return 1;
	}
	return 0;
}

/* [-0, +1, -] Reads and compiles one chunk at the prompt: first as
 * "return <line>" so expressions print, else as statements, reading
 * more lines while it is incomplete.  Returns -1 at end of input, else
 * the load status with the chunk (or message) pushed.  The source text
 * stays below it for the history. */
static int load_chunk(lua_State *L, int tty)
{
	if (!read_line(L, 1, tty))
		return -1;
	const char *line = lua_tostring(L, -1);
	const char *ret = lua_pushfstring(L, "return %s", line);
	int st = luaL_loadbufferx(L, ret, strlen(ret), "=stdin", "t");
	lua_remove(L, -2);
	if (st == LUA_OK)
		return st;
	lua_pop(L, 1);
	for (;;) {
		size_t len;
		const char *src = lua_tolstring(L, -1, &len);
		st = luaL_loadbufferx(L, src, len, "=stdin", "t");
		if (!incomplete(L, st))
			return st;
		if (!read_line(L, 0, tty))
			/* end of input inside a chunk: compile it for
			 * its error message */
			return luaL_loadbufferx(L, src, len, "=stdin", "t");
		lua_pushliteral(L, "\n");
		lua_insert(L, -2);
		lua_concat(L, 3);
	}
}

/* Prints its arguments with tostring, tab-separated; called protected,
 * since a __tostring may raise. */
static int print_all(lua_State *L)
{
	int n = lua_gettop(L);
	for (int i = 1; i <= n; i++) {
		size_t len;
		const char *s = luaL_tolstring(L, i, &len);
		if (i > 1)
			fputc('\t', stdout);
		fwrite(s, 1, len, stdout);
		lua_pop(L, 1);
	}
	fputc('\n', stdout);
	fflush(stdout);
	return 0;
}

static void repl(lua_State *L)
{
	int tty = isatty(STDIN_FILENO);
	const char *hist = tty ? history_path() : NULL;
#ifdef HAVE_LINE_EDITING
	if (hist)
		read_history(hist);
#endif
	if (tty)
		printf("%s %s (%s); ge is the module, ^D leaves\n", PROG,
		       PACKAGE_VERSION, LUA_RELEASE);
	for (;;) {
		int base = lua_gettop(L);
		int st = load_chunk(L, tty);
		if (st == -1)
			break;
#ifdef HAVE_LINE_EDITING
		if (tty && lua_rawlen(L, base + 1) > 0)
			add_history(lua_tostring(L, base + 1));
#endif
		lua_remove(L, base + 1); /* the source */
		if (st == LUA_OK)
			st = docall(L, 0, LUA_MULTRET);
		if (st == LUA_OK && lua_gettop(L) > base) {
			lua_pushcfunction(L, print_all);
			lua_insert(L, base + 1);
			st = docall(L, lua_gettop(L) - base - 1, 0);
		}
		if (st != LUA_OK)
			report(L);
		lua_settop(L, base);
	}
#ifdef HAVE_LINE_EDITING
	if (hist)
		write_history(hist);
#else
	if (tty)
		fputc('\n', stdout); /* leave the prompt's line */
#endif
}

/* ------------------------------------------------------------ main */

struct options {
	int interactive;
	int script;  /* argv index of SCRIPT or MODEL, or 0 */
	int model;   /* argv[script] is a model (with -i) */
	int has_e;   /* -e or -l given */
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* First pass: checks the options and finds SCRIPT.  Returns 0, -1 for
 * --help/--version (handled), or an exit code. */
static int collect(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !strcmp(a, "-")) {
			o->script = i;
			break;
		}
		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				o->script = i + 1;
			break;
		}
		if (!strcmp(a, "-i")) {
			o->interactive = 1;
		} else if (!strcmp(a, "--traceback")) {
			show_traceback = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return -1;
		} else if (!strcmp(a, "--version")) {
			cmd_version(NULL, 0, NULL);
			return -1;
		} else if (!strncmp(a, "-e", 2) || !strncmp(a, "-l", 2)) {
			o->has_e = 1;
			if (a[2] == 0) {
				if (i + 1 >= argc)
					return usage_error("option '%s' needs an "
							   "argument",
							   a);
				i++;
			}
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if (o->script && o->interactive && strcmp(argv[o->script], "-") != 0 &&
	    !ends_with(argv[o->script], ".lua"))
		o->model = 1;
	return 0;
}

/* arg[0] is SCRIPT, arg[1..] its arguments, arg[-k] what came before. */
static void create_arg_table(lua_State *L, int argc, char **argv, int script)
{
	int zero = script ? script : argc;
	lua_createtable(L, argc - zero, zero);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - zero);
	}
	lua_setglobal(L, "arg");
}

static int load_model(lua_State *L, const char *path)
{
	lua_getglobal(L, "ge");
	lua_getfield(L, -1, "load");
	lua_pushstring(L, path);
	if (docall(L, 1, 2) != LUA_OK) {
		report(L);
		lua_pop(L, 1);
		return EXIT_USAGE;
	}
	if (lua_isnil(L, -2)) {
		errmsg("%s", lua_tostring(L, -1));
		lua_pop(L, 3);
		return EXIT_USAGE;
	}
	lua_pop(L, 1);
	if (isatty(STDIN_FILENO)) {
		printf("g = %s\n", luaL_tolstring(L, -1, NULL));
		lua_pop(L, 1);
	}
	lua_setglobal(L, "g");
	lua_pop(L, 1);
	return 0;
}

/* [-0, +0, -] Loads the module and binds the global ge; 0 or an exit
 * code (the error reported). */
static int open_module(lua_State *L)
{
	luaL_openlibs(L);
	lge_preload(L);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gerewrite");
	if (docall(L, 1, 1) != LUA_OK) {
		report(L);
		return EXIT_RUNTIME;
	}
	lua_setglobal(L, "ge");
	return 0;
}

static int run_main(lua_State *L, int argc, char **argv)
{
	int rc;
	if (argc > 1) {
		for (const struct subcommand *c = subcommands; c->name; c++)
			if (!strcmp(argv[1], c->name))
				return (rc = open_module(L)) ? rc
							    : c->run(L, argc - 1,
								     argv + 1);
	}
	struct options o;
	if ((rc = collect(argc, argv, &o)))
		return rc < 0 ? 0 : rc;
	if ((rc = open_module(L)))
		return rc;
	create_arg_table(L, argc, argv, o.script);
	if (o.model && (rc = load_model(L, argv[o.script])))
		return rc;
	int end = o.script ? o.script : argc;
	for (int i = 1; i < end; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (strncmp(a, "-e", 2) != 0 && strncmp(a, "-l", 2) != 0)
			continue;
		const char *val = a[2] ? a + 2 : argv[++i];
		rc = a[1] == 'e' ? run_string(L, val) : run_require(L, val);
		if (rc)
			return rc;
	}
	if (o.script && !o.model) {
		if ((rc = load_script(L, argv[o.script]))) {
			report(L);
			return rc;
		}
		int n = argc - o.script - 1;
		luaL_checkstack(L, n + 3, "too many arguments to script");
		for (int i = o.script + 1; i < argc; i++)
			lua_pushstring(L, argv[i]);
		if ((rc = run_chunk(L, n)))
			return rc;
	}
	if (o.interactive || (!o.script && !o.has_e && isatty(STDIN_FILENO))) {
		repl(L);
	} else if (!o.script && !o.has_e) {
		if ((rc = load_script(L, "-"))) {
			report(L);
			return rc;
		}
		return run_chunk(L, 0);
	}
	return 0;
}

static int pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = lua_touserdata(L, 2);
	const char *tb = getenv("GEREWRITE_TRACEBACK");
	if (tb && *tb && strcmp(tb, "0") != 0)
		show_traceback = 1;
	luaL_checkversion(L);
	lua_gc(L, LUA_GCRESTART);
	lua_gc(L, LUA_GCGEN, 0, 0);
	lua_pushinteger(L, run_main(L, argc, argv));
	return 1;
}

int main(int argc, char **argv)
{
	lua_State *L = luaL_newstate();
	if (!L) {
		errmsg("cannot create the Lua state: not enough memory");
		return EXIT_RUNTIME;
	}
	lua_gc(L, LUA_GCSTOP); /* not while building the state */
	lua_pushcfunction(L, pmain);
	lua_pushinteger(L, argc);
	lua_pushlightuserdata(L, argv);
	int status = lua_pcall(L, 2, 1, 0);
	int code;
	if (status != LUA_OK) {
		report(L);
		code = EXIT_RUNTIME;
	} else {
		code = (int)lua_tointeger(L, -1);
	}
	lua_close(L);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errmsg("error writing the output: %s", strerror(errno));
		if (code == 0)
			code = EXIT_USAGE;
	}
	return code;
}
