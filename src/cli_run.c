/*
 * cli_run.c: what main.c and the subcommands (cmd_*.c, repl.c) share to
 * run Lua and speak to the user: the one-line messages (cli_errmsg), calls
 * under the message handler with ^C handling (cli_docall, cli_report), the
 * flags a command line sets (cli_traceback, cli_last_run), the Lua heap
 * held to the memory budget (cli_lua_alloc, cli_set_max_memory) and the
 * usage text of a command, from the table main.c registers.  main.c calls
 * down into this file and the subcommands; nothing here calls main.c, so
 * src/ has no call loop.
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/bounds.h"
#include "base/pool.h"
#include "cli.h"

/* ------------------------------------------------------------ messages */

static lua_State *globalL; /* for the SIGINT handler */
int cli_traceback, cli_last_run;

void cli_errmsg(const char *fmt, ...)
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
		else {
			/* say where: the first Lua function up the stack */
			lua_Debug ar;
			const char *where = "";
			for (int lv = 1; lua_getstack(L, lv, &ar); lv++) {
				lua_getinfo(L, "Sl", &ar);
				if (ar.currentline > 0) {
					luaL_where(L, lv);
					where = lua_tostring(L, -1);
					break;
				}
			}
			msg = lua_pushfstring(L, "%s(error object is a %s value)",
					      where, luaL_typename(L, 1));
		}
	}
	if (cli_traceback)
		luaL_traceback(L, L, msg, 1);
	else
		lua_pushstring(L, msg);
	return 1;
}

int cli_docall(lua_State *L, int narg, int nres)
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

void cli_report(lua_State *L)
{
	const char *msg = lua_tostring(L, -1);
	cli_errmsg("%s", msg ? msg : "(error object is not a string)");
	lua_pop(L, 1);
}

/* ------------------------------------------------------------ memory */

/* The Lua heap is held to the memory budget when one is given: a script
 * that builds tables from a hostile model gets "not enough memory", an
 * ordinary error.  (Without one, only expansions are charged to the
 * default budget: a recipe over a large model may hold more than it.) */
static size_t lua_used;
size_t cli_lua_limit = SIZE_MAX;

/* Lua's blocks of up to GE_POOL_MAX bytes come from a pool of their size
 * class (base/pool.h: a script listing every op of a large graph makes
 * an op userdata per op), the others from malloc.  The sanitizer build
 * gives every block to malloc, so that AddressSanitizer sees each Lua
 * object's bounds; t/pool checks the pool itself there. */
#ifndef GE_ASAN
static ge_pool lua_pool = GE_POOL_INIT;
#define lua_realloc(p, o, n) ge_pool_realloc(&lua_pool, p, o, n)
#else
static void *lua_realloc(void *p, size_t o, size_t n)
{
	(void)o;
	if (!n) {
		free(p);
		return NULL;
	}
	return realloc(p, n);
}
#endif

int cli_lua_exiting;

void *cli_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	size_t old = ptr ? osize : 0;
	if (nsize == 0) {
		/* lua_close at the exit frees every object: the exit takes
		 * the pool's slabs back at once */
		if (!cli_lua_exiting)
			lua_realloc(ptr, old, 0);
		lua_used -= old;
		return NULL;
	}
	if (nsize > old && lua_used + (nsize - old) > cli_lua_limit)
		return NULL;
	void *p = lua_realloc(ptr, old, nsize);
	if (p)
		lua_used = lua_used - old + nsize;
	return p;
}

void cli_lua_heap_release(void)
{
#ifndef GE_ASAN
	if (!cli_lua_exiting)
		ge_pool_destroy(&lua_pool);
#endif
}

void cli_set_max_memory(uint64_t bytes)
{
	ge_set_max_memory(bytes);
	cli_lua_limit = bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

/* ------------------------------------------------------------ usage */

const char *(*cli_usage_of)(const char *name);

const char *cli_command_usage(const char *name)
{
	return cli_usage_of ? cli_usage_of(name) : NULL;
}
