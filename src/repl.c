/*
 * repl.c: the interactive prompt of gerewrite.
 *
 * Each entry is compiled first as "return <line>" so expressions print,
 * else as statements, reading more lines while the chunk is unfinished
 * (as lua.c does).  Results are printed by gerewrite.repl's show(): one
 * tostring line per value, lists of ops or tensors as a short numbered
 * table.  Errors are printed and the session goes on.
 *
 * On a terminal, readline gives line editing, a history kept in
 * $GEREWRITE_HISTORY or ~/.gerewrite_history, and tab completion of Lua
 * names, fields, methods (after ':') and op names of a graph (inside
 * g:op(" ... ), computed by gerewrite.repl's complete().  Under a pipe
 * there is no prompt, banner or history, and the first error ends the
 * run (exit 1), as it would in a script.
 *
 * ^C at the prompt clears the line (or the unfinished chunk), ^C while a
 * chunk runs interrupts it; ^D on an empty line leaves, but while the
 * graph the global g holds has edits that were not saved, the prompt
 * says so and the first ^D only warns.  undo() takes back the last
 * entry's edits of every graph (repl_undo.c).  help() prints entries of the API
 * reference, from an index made of doc/lua-api.md at build time.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#if defined(HAVE_READLINE)
#include <readline/history.h>
#include <readline/readline.h>
#define HAVE_LINE_EDITING 1
#elif defined(HAVE_LIBEDIT)
#include <editline/readline.h>
#define HAVE_LINE_EDITING 1
#endif

#include "cli.h"
#include "lge.h"

/* The help index (src/apihelp_data.c, made by src/gen-apihelp.sh). */
extern const unsigned char ge_apihelp_data[];
extern const size_t ge_apihelp_size;

static const char *history_path(void)
{
	static char path[4096];
	const char *h = getenv("GEREWRITE_HISTORY");
	if (h && *h)
		return h;
	const char *home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	snprintf(path, sizeof path, "%s/.gerewrite_history", home);
	return path;
}

/* [-0, +1, e] Pushes function `name` of the gerewrite.repl module. */
static void repl_func(lua_State *L, const char *name)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gerewrite.repl");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
}

/* ------------------------------------------------------------ completion */

#ifdef HAVE_LINE_EDITING
static lua_State *complL;
static char **cands; /* the current candidates, NULL-terminated */
static size_t ncands, nextcand;
static char close_call[8]; /* what follows a unique op name: ")" */

static void free_cands(void)
{
	for (size_t i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	cands = NULL;
	ncands = nextcand = 0;
}

static int call_complete(lua_State *L)
{
	const char *line = lua_tostring(L, 1);
	lua_Integer start = lua_tointeger(L, 2), end = lua_tointeger(L, 3);
	repl_func(L, "complete");
	lua_pushstring(L, line);
	lua_pushinteger(L, start);
	lua_pushinteger(L, end);
	lua_call(L, 3, 2);
	return 2;
}

/* Asks gerewrite.repl for the candidates replacing line[start, end). */
static void compute_cands(int start, int end)
{
	lua_State *L = complL;
	int top = lua_gettop(L);
	free_cands();
	close_call[0] = 0;
	lua_pushcfunction(L, call_complete);
	lua_pushstring(L, rl_line_buffer);
	lua_pushinteger(L, start);
	lua_pushinteger(L, end);
	/* a completion never raises into readline, whatever the line */
	if (lua_pcall(L, 3, 2, 0) == LUA_OK && lua_istable(L, -2)) {
		size_t n = lua_rawlen(L, -2);
		const char *cl = lua_tostring(L, -1);
		/* only when nothing follows the cursor yet */
		if (cl && strlen(cl) < sizeof close_call &&
		    !rl_line_buffer[rl_point])
			strcpy(close_call, cl);
		lua_pop(L, 1);
		cands = ge_xcalloc(n + 1, sizeof *cands);
		for (size_t i = 1; i <= n; i++) {
			if (lua_rawgeti(L, -1, (lua_Integer)i) == LUA_TSTRING)
				cands[ncands++] = ge_xstrdup(lua_tostring(L, -1));
			lua_pop(L, 1);
		}
	}
	lua_settop(L, top);
}

static char *generator(const char *text, int state)
{
	(void)text;
	if (state == 0)
		nextcand = 0;
	if (nextcand < ncands)
		return strdup(cands[nextcand++]);
	return NULL;
}

static char **attempt_completion(const char *text, int start, int end)
{
	(void)text;
	rl_attempted_completion_over = 1; /* never fall back to file names */
	rl_completion_append_character = '\0';
	compute_cands(start, end);
	if (!ncands)
		return NULL;
	/* readline closes the quote of a unique match, then appends this */
	if (ncands == 1 && close_call[0])
		rl_completion_append_character = close_call[0];
	return rl_completion_matches(text, generator);
}

/* '.' and ':' stay inside a word so that `ge.se<TAB>` and `g:o<TAB>`
 * complete as a whole. */
static char code_breaks[] = " \t\n\"'`@$><=;|&{}()[],+-*/%^~#";
/* Inside a string only its quote starts the word: op names hold '/'. */
static char string_breaks[] = "\"'";

static char *word_breaks(void)
{
	char quote = 0;
	for (int i = 0; i < rl_point && rl_line_buffer[i]; i++) {
		char c = rl_line_buffer[i];
		if (quote) {
			if (c == '\\' && i + 1 < rl_point)
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		}
	}
	return quote ? string_breaks : code_breaks;
}

static void setup_readline(lua_State *L)
{
	complL = L;
	rl_readline_name = "gerewrite";
	rl_basic_word_break_characters = code_breaks;
	rl_completer_word_break_characters = code_breaks;
	rl_completion_word_break_hook = word_breaks;
	rl_attempted_completion_function = attempt_completion;
	/* so that readline closes the quote itself and then appends
	 * rl_completion_append_character */
	rl_completer_quote_characters = "\"'";
}
#endif

/* ------------------------------------------------------------ ^C */

#ifdef HAVE_READLINE
/* While readline waits for a key, ^C only sets a flag: the read returns
 * EINTR (no SA_RESTART) and repl_getc turns it into an emptied line. */
static volatile sig_atomic_t got_sigint;
static int line_cancelled;

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

static int repl_getc(FILE *f)
{
	for (;;) {
		unsigned char c;
		ssize_t r = read(fileno(f), &c, 1);
		if (r == 1)
			return c;
		if (r == 0)
			return EOF;
		if (errno != EINTR)
			return EOF;
		if (got_sigint) {
			got_sigint = 0;
			line_cancelled = 1;
			rl_replace_line("", 0);
			fputs("^C", rl_outstream ? rl_outstream : stdout);
			return '\n';
		}
	}
}

static char *read_tty_line(const char *prompt)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	got_sigint = 0;
	line_cancelled = 0;
	sigaction(SIGINT, &sa, &old);
	char *line = readline(prompt);
	sigaction(SIGINT, &old, NULL);
	return line;
}
#endif

/* ------------------------------------------------------------ help */

static int l_help(lua_State *L)
{
	int n = lua_gettop(L);
	repl_func(L, "help");
	lua_insert(L, 1);
	lua_pushlstring(L, (const char *)ge_apihelp_data, ge_apihelp_size);
	lua_insert(L, 2);
	lua_call(L, n + 1, 1);
	size_t len;
	const char *s = lua_tolstring(L, -1, &len);
	if (s) {
		fwrite(s, 1, len, stdout);
		fputc('\n', stdout);
	}
	return 0;
}

/* ------------------------------------------------------------ reading */

/* [-0, +(0|1), -] Reads one line without its newline; 0 at end of input.
 * Prompts (and line editing) only when standard input is a terminal. */
static int read_line(lua_State *L, int first, int tty)
{
	const char *prompt = first ? (tty && repl_unsaved(L) ? "g unsaved> "
							     : "> ")
				   : ">> ";
#ifdef HAVE_READLINE
	if (tty) {
		char *line = read_tty_line(prompt);
		if (!line)
			return 0;
		lua_pushstring(L, line);
		free(line);
		return 1;
	}
#elif defined(HAVE_LINE_EDITING)
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

/* Whether ^C emptied the line just read. */
static int cancelled(void)
{
#ifdef HAVE_READLINE
	return line_cancelled;
#else
	return 0;
#endif
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

/* [-0, +2, -] Reads and compiles one chunk: first as "return <line>" so
 * expressions print, else as statements, reading more lines while it is
 * incomplete.  Returns -1 at end of input, -2 when ^C dropped the chunk
 * (nothing pushed), else the load
 * status with the source text and then the chunk (or message) pushed. */
static int load_chunk(lua_State *L, int tty)
{
	if (!read_line(L, 1, tty))
		return -1;
	if (cancelled()) {
		lua_pop(L, 1);
		return -2;
	}
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
		if (cancelled()) {
			lua_pop(L, 2);
			return -2;
		}
		lua_pushliteral(L, "\n");
		lua_insert(L, -2);
		lua_concat(L, 3);
	}
}

/* Prints the values on the stack through gerewrite.repl's show(); called
 * protected, since a __tostring may raise. */
static int print_all(lua_State *L)
{
	int n = lua_gettop(L);
	repl_func(L, "show");
	lua_insert(L, 1);
	lua_pushinteger(L, n);
	lua_insert(L, 2);
	lua_call(L, n + 1, 1);
	size_t len;
	const char *s = lua_tolstring(L, -1, &len);
	if (s) {
		fwrite(s, 1, len, stdout);
		fputc('\n', stdout);
	}
	fflush(stdout);
	return 0;
}

int cli_repl(lua_State *L)
{
	int tty = isatty(STDIN_FILENO);
	const char *hist = tty ? history_path() : NULL;
	int rc = 0, warned = 0;
#ifdef HAVE_LINE_EDITING
	if (tty) {
		setup_readline(L);
#ifdef HAVE_READLINE
		rl_catch_signals = 0;
		rl_getc_function = repl_getc;
#endif
		stifle_history(1000);
		if (hist)
			read_history(hist);
	}
#endif
	lua_pushcfunction(L, l_help);
	lua_setglobal(L, "help");
	if (tty) {
		repl_state_init(L);
		printf("%s %s (%s); ge is the module, help() the reference, "
		       "^D leaves\n",
		       PROG, PACKAGE_VERSION, LUA_RELEASE);
	}
	for (;;) {
		int base = lua_gettop(L);
		int st = load_chunk(L, tty);
		if (st == -2)
			continue;
		if (st == -1) {
			if (tty && repl_unsaved(L) && !warned) {
				printf("\ng has unsaved edits: g:save(PATH) "
				       "writes them; ^D again leaves\n");
				warned = 1;
				continue;
			}
			break;
		}
		warned = 0;
#ifdef HAVE_LINE_EDITING
		if (tty && lua_rawlen(L, base + 1) > 0) {
			add_history(lua_tostring(L, base + 1));
			/* written as we go, so a crash keeps the history */
			if (hist)
				write_history(hist);
		}
#endif
		lua_remove(L, base + 1); /* the source */
		if (st == LUA_OK)
			st = cli_docall(L, 0, LUA_MULTRET);
		if (st == LUA_OK && lua_gettop(L) > base) {
			lua_pushcfunction(L, print_all);
			lua_insert(L, base + 1);
			st = cli_docall(L, lua_gettop(L) - base - 1, 0);
		}
		if (st != LUA_OK)
			cli_report(L);
		lua_settop(L, base);
		if (tty)
			repl_after_entry(L);
		if (st != LUA_OK && !tty) {
			/* without a terminal, as a script: stop at the
			 * first error */
			rc = st == LUA_ERRSYNTAX ? EXIT_SYNTAX : EXIT_RUNTIME;
			break;
		}
	}
#ifdef HAVE_LINE_EDITING
	if (tty)
		free_cands();
	if (hist)
		write_history(hist);
#endif
	if (tty)
		fputc('\n', stdout); /* leave the prompt's line */
	return rc;
}
