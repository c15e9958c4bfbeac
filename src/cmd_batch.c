/*
 * cmd_batch.c: `gerewrite batch RECIPE DIR... -o OUTDIR`: one recipe over
 * every model found under some directories, in worker processes.
 *
 * Finding models.  A directory holding saved_model.pb or
 * saved_model.pbtxt is a SavedModel and is not entered (its variables/
 * and assets/ are not models).  A file named *.pb, *.pbtxt, *.pbtext,
 * *.meta or *.graphdef is a model whatever it holds, so a corrupt one is
 * reported, not skipped.  Any other file is a model when its content is a
 * GraphDef or MetaGraphDef (text, or binary up to 64 MiB); a *.json file
 * that is a TensorFlow.js graph model is one too; other files are
 * ignored.  Files named like models that
 * hold another message (an OpList, a config) and chunked SavedModels are
 * reported as skipped, with the reason (batch_scan.c).  Names starting
 * with '.' and OUTDIR itself are not entered.
 * Directories are read in name order and the list is sorted by path
 * (bytewise), so every run and every shard sees the same order.
 *
 * Layout.  With one DIR, DIR/a/m.pb is written to OUTDIR/a/m.pb; with
 * several, under OUTDIR/<basename of DIR>/.  A DIR may also be a model.
 * A TensorFlow.js model (a *.json file holding a modelTopology) is written
 * as a directory with its shards: DIR/a/model.json to OUTDIR/a/model.json,
 * DIR/a/m.json (several models may share a directory, their shards not)
 * to OUTDIR/a/m/model.json; so is any model with --format tfjs
 * (DIR/a/m.pb to OUTDIR/a/m/model.json).
 *
 * Workers.  The recipe is loaded and its parameters checked once, in this
 * process; then each model runs in a child forked from it (at most -j at
 * a time), which loads the model, runs the recipe, saves atomically and
 * sends back one line (status, ops before and after, added, removed and
 * changed, whether nothing changed, seconds, error), then a line for
 * each line of its report ("c\t...") and each warning ("w\t...": the
 * runner's, and what the recipe wrote to stderr, which the child catches
 * so that every warning is tied to its model).  A child that dies (a
 * crash, a signal, an exit without a line) makes that model fail and
 * nothing else.
 *
 * Limits.  --timeout SECONDS and --max-memory SIZE hold each worker: the
 * worker sets the memory budget (lib/base/bounds.h) and RLIMIT_AS, and a timer
 * that, when it fires, removes the worker's temp files, reports the
 * timeout and exits; the parent kills a worker still there a few seconds
 * later.  Either way the model is reported failed with the reason, the
 * other models go on and the report is written.
 *
 * Sharding.  --shard I/N keeps the models whose path relative to its input
 * directory (the path below OUTDIR) hashes to I - 1 modulo N (the high 32
 * bits of FNV-1a 64: lib/base/shard.h), so N invocations with I = 1..N cover
 * each model once, on any machines, without talking to each other, and
 * adding or removing a model moves no other between shards.  --shard
 * auto, and no --shard at all when a cluster engine's array variables are
 * set, take I and N from the engine (lib/base/shard.c holds the table); stderr
 * says so.
 *
 * Reports.  --report FILE writes the JSON report where asked;
 * --report-dir DIR writes DIR/report-I.json, for `gerewrite report merge`
 * (cmd_report.c) to join.  Both are written atomically.
 *
 * Resuming.  Outputs are written atomically (temp name, then rename), so
 * an output that exists is complete: --resume skips those models and
 * reports them as "skipped", with that reason.
 *
 * In place.  --overwrite without -o rewrites every model where it is
 * (each save atomic, as ever); with -o, an output may be its input.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>

#include "batch_report.h"
#include "batch_scan.h"
#include "base/bounds.h"
#include "cli.h"
#include "base/fsutil.h"
#include "base/jsonpb.h"
#include "base/shard.h"

#define SNIFF_MAX (64u << 20)

/* --verify and --max-error: what each worker checks after its run */
static struct cli_verify batch_verify = CLI_VERIFY_INIT;

struct job {
	char *in;  /* the model's path as found */
	char *rel; /* its path below OUTDIR */
	char *out;
	/* results */
	int status; /* 0 ok, 1 failed, 2 skipped */
	long ops_before, ops_after; /* with the bodies the recipe ran on */
	long added, removed, changed;
	int nothing; /* the recipe changed nothing */
	double seconds;
	char *error;
	char *verify; /* --verify: the figures, a JSON object */
	json_t *prior; /* --resume: its entry in an earlier report */
	ge_buf report;   /* what each run changed, a line each */
	ge_buf warnings; /* the recipe's and the runner's, a line each */
};

struct jobs {
	struct job *v;
	size_t n, cap;
};

static void add_job(struct jobs *j, const char *in, const char *rel)
{
	if (j->n == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 64;
		j->v = ge_xrealloc(j->v, j->cap * sizeof *j->v);
	}
	struct job *x = &j->v[j->n++];
	memset(x, 0, sizeof *x);
	x->in = ge_xstrdup(in);
	x->rel = ge_xstrdup(rel);
	x->ops_before = x->ops_after = -1;
}

/* A model found but not to be run, with the reason. */
static void add_skipped(struct jobs *j, const char *in, const char *rel,
			const char *why)
{
	add_job(j, in, rel);
	j->v[j->n - 1].status = 2;
	j->v[j->n - 1].error = ge_xstrdup(why);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

static int is_savedmodel_dir(const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof p, "%s/saved_model.pb", path);
	if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
		return 1;
	snprintf(p, sizeof p, "%s/saved_model.pbtxt", path);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int model_name(const char *name)
{
	return ends_with(name, ".pb") || ends_with(name, ".pbtxt") ||
	       ends_with(name, ".pbtext") || ends_with(name, ".meta") ||
	       ends_with(name, ".graphdef");
}

/* Whether a file of another name holds a GraphDef or MetaGraphDef. */
static int sniff_file(const char *path, off_t size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	uint8_t head[4096];
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	if (n <= 0)
		return 0;
	ge_format f = ge_sniff(head, (size_t)n);
	if (f == GE_FMT_GRAPHDEF_TEXT || f == GE_FMT_META_TEXT)
		return 1;
	/* binary: the first tag must be one a GraphDef or MetaGraphDef
	 * starts with (fields 1 to 7), and sniffing needs all of it */
	static const uint8_t first[] = {0x0a, 0x12, 0x18, 0x1a,
					0x22, 0x2a, 0x32, 0x3a};
	if (!memchr(first, head[0], sizeof first))
		return 0;
	if (size > (off_t)SNIFF_MAX)
		return 0;
	uint8_t *data;
	size_t len;
	if (ge_file_read(path, &data, &len, NULL) != GE_OK)
		return 0;
	f = ge_sniff(data, len);
	free(data);
	return f == GE_FMT_GRAPHDEF || f == GE_FMT_META;
}

/* Whether a *.json file is a TensorFlow.js model. */
static int tfjs_file(const char *path, const char *name)
{
	if (!ends_with(name, ".json"))
		return 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	uint8_t head[4096];
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	/* modelTopology may come after a long signature: the format
	 * member or the opening brace of a graph model is enough */
	return n > 0 && (ge_sniff(head, (size_t)n) == GE_FMT_TFJS ||
			 memmem(head, (size_t)n, "\"graph-model\"", 13));
}

static int skip_name(const char *name)
{
	return name[0] == '.' || strstr(name, ".tmp-") || strstr(name, ".old-");
}

struct walk {
	struct jobs *jobs;
	const char *outdir_real; /* not entered */
	int err;
};

static void walk(struct walk *w, const char *path, const char *rel)
{
	struct dirent **ents;
	int n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		cli_errmsg("%s: %s", path, strerror(errno));
		w->err = 1;
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		if (skip_name(name))
			continue;
		char p[PATH_MAX], r[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", path, name);
		if (*rel)
			snprintf(r, sizeof r, "%s/%s", rel, name);
		else
			snprintf(r, sizeof r, "%s", name);
		struct stat st;
		if (lstat(p, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			char real[PATH_MAX];
			if (w->outdir_real && realpath(p, real) &&
			    !strcmp(real, w->outdir_real))
				continue;
			if (is_savedmodel_dir(p))
				add_job(w->jobs, p, r);
			else if (batch_chunked_dir(p))
				add_skipped(w->jobs, p, r,
					    "chunked SavedModel: not supported "
					    "yet");
			else
				walk(w, p, r);
		} else if (S_ISREG(st.st_mode)) {
			char why[256];
			if (model_name(name) || tfjs_file(p, name) ||
			    sniff_file(p, st.st_size)) {
				if (batch_skip_reason(p, why, sizeof why))
					add_skipped(w->jobs, p, r, why);
				else
					add_job(w->jobs, p, r);
			}
		}
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

static const char *base_name(const char *path, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", path);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char *s = strrchr(buf, '/');
	return s && s[1] ? s + 1 : buf;
}

/* The output path of a model below OUTDIR: rel, or for a model written
 * as tfjs, the model.json of a directory of its own. */
static char *out_path(const char *outdir, const char *rel, ge_format outfmt)
{
	int from_tfjs = ends_with(rel, ".json");
	if (!from_tfjs && outfmt != GE_FMT_TFJS) {
		ge_buf b = GE_BUF_INIT;
		ge_buf_printf(&b, "%s/%s", outdir, rel);
		ge_buf_addc(&b, 0);
		return (char *)ge_buf_steal(&b, NULL);
	}
	if (from_tfjs && outfmt != GE_FMT_AUTO && outfmt != GE_FMT_TFJS) {
		/* m.json to m.pb (or m.pbtxt) */
		ge_buf b = GE_BUF_INIT;
		ge_buf_printf(&b, "%s/%.*s%s", outdir, (int)(strlen(rel) - 5),
			      rel, ge_format_is_text(outfmt) ? ".pbtxt" : ".pb");
		ge_buf_addc(&b, 0);
		return (char *)ge_buf_steal(&b, NULL);
	}
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	size_t stem = strlen(rel);
	const char *dot = strrchr(base, '.');
	if (dot && dot != base)
		stem = (size_t)(dot - rel);
	ge_buf b = GE_BUF_INIT;
	if (!strcmp(base, "model.json"))
		ge_buf_printf(&b, "%s/%s", outdir, rel);
	else
		ge_buf_printf(&b, "%s/%.*s/model.json", outdir, (int)stem, rel);
	ge_buf_addc(&b, 0);
	return (char *)ge_buf_steal(&b, NULL);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Two models whose outputs fall on one path (a/m.pb and a/m.json both
 * written as a/m/model.json): a usage error before anything runs. */
static int same_outputs(const struct jobs *jobs)
{
	int rc = 0;
	char **outs = ge_xmalloc((jobs->n ? jobs->n : 1) * sizeof *outs);
	for (size_t i = 0; i < jobs->n; i++)
		outs[i] = jobs->v[i].out;
	qsort(outs, jobs->n, sizeof *outs, cmp_str);
	for (size_t i = 1; i < jobs->n && !rc; i++)
		if (!strcmp(outs[i], outs[i - 1])) {
			cli_errmsg("two models would both be written to %s",
				   outs[i]);
			rc = EXIT_USAGE;
		}
	free(outs);
	return rc;
}

static int cmp_job(const void *a, const void *b)
{
	return strcmp(((const struct job *)a)->rel, ((const struct job *)b)->rel);
}

/* ------------------------------------------------------------ running */

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int mkdirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, 0777) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int parent_dirs(const char *file)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", file);
	char *s = strrchr(p, '/');
	if (!s || s == p)
		return 0;
	*s = 0;
	return mkdirs(p);
}

struct limits {
	double timeout;      /* seconds, 0: none */
	uint64_t max_memory; /* bytes, 0: the default budget, no rlimit */
};

/* The worker's timer: the line to send, prepared before the run, since a
 * handler may only write it. */
static int alarm_fd = -1;
static char alarm_line[600];
static size_t alarm_len;

static void on_alarm(int sig)
{
	(void)sig;
	ge_tmp_remove_all();
	if (write(alarm_fd, alarm_line, alarm_len) < 0)
		_exit(3);
	_exit(0);
}

static void set_limits(const struct limits *lim, const struct job *j, int fd)
{
	if (lim->max_memory) {
		cli_set_max_memory(lim->max_memory);
#ifndef GE_ASAN
		/* what the budget does not see (the model's own bytes, the
		 * program): bounded too, with room for the program itself */
		rlim_t as = (rlim_t)(lim->max_memory + ((uint64_t)256 << 20));
		struct rlimit rl = {as, as};
		setrlimit(RLIMIT_AS, &rl);
#endif
	}
	if (lim->timeout > 0) {
		int n = snprintf(alarm_line, sizeof alarm_line,
				 "1\t-1\t-1\t0\t0\t0\t0\t%.6f\t\t%s: timed out "
				 "after %g s (--timeout)\n",
				 lim->timeout, j->in, lim->timeout);
		alarm_len = n < (int)sizeof alarm_line ? (size_t)n
						       : sizeof alarm_line - 1;
		alarm_fd = fd;
		signal(SIGALRM, on_alarm);
		struct itimerval it = {{0, 0}, {0, 0}};
		it.it_value.tv_sec = (time_t)lim->timeout;
		it.it_value.tv_usec =
			(suseconds_t)((lim->timeout - (double)(time_t)lim->timeout) *
				      1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
}

/* Writes all of b to fd (a pipe: short writes go on). */
static void write_all(int fd, const char *b, size_t n)
{
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, b + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

/* Appends each line of text (n bytes) to out as "TAG\tPREFIXline\n",
 * tabs made spaces. */
static void tag_lines(ge_buf *out, char tag, const char *prefix,
		      const char *text, size_t n)
{
	const char *p = text, *end = text + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len) {
			ge_buf_printf(out, "%c\t%s", tag, prefix);
			for (size_t i = 0; i < len; i++)
				ge_buf_addc(out, p[i] == '\t' ? ' ' : p[i]);
			ge_buf_addc(out, '\n');
		}
		p += len + 1;
	}
}

/* In the child: runs one model (what the recipe writes to stderr caught
 * in a temp file), writes its lines to fd, then exits. */
static void child(lua_State *L, int rec, int par, struct job *j,
		  const struct cli_model_opts *mo, const ge_save_opts *so,
		  int fd, const struct limits *lim)
{
	struct run_result res;
	set_limits(lim, j, fd);
	fflush(stderr);
	FILE *caught = tmpfile();
	int saved = caught ? dup(STDERR_FILENO) : -1;
	if (saved >= 0)
		dup2(fileno(caught), STDERR_FILENO);
	if (parent_dirs(j->out) < 0) {
		memset(&res, 0, sizeof res);
		res.status = EXIT_USAGE;
		res.ops_before = res.ops_after = -1;
		snprintf(res.error, sizeof res.error, "%s: %s", j->out,
			 strerror(errno));
	} else if (!cli_run_recipe(L, rec, par, j->in, j->out, mo, so,
				   &res) &&
		   batch_verify.on) {
		res.status = cli_verify_recipe(L, rec, j->in, j->out, mo,
					       &batch_verify, &res);
	}
	/* one result line: the timer must not send a second */
	signal(SIGALRM, SIG_IGN);
	fflush(NULL);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (lim->max_memory && strstr(res.error, "not enough memory")) {
		char sz[32], tail[80];
		snprintf(tail, sizeof tail, " (over --max-memory %s)",
			 ge_format_size(lim->max_memory, sz, sizeof sz));
		size_t n = strlen(res.error);
		if (n + strlen(tail) < sizeof res.error)
			memcpy(res.error + n, tail, strlen(tail) + 1);
	}
	for (char *c = res.error; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
	ge_buf out = GE_BUF_INIT;
	/* the --verify figures (a JSON object on one line), then the error */
	ge_buf_printf(&out, "%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%d\t%.6f\t%s\t%s\n",
		      res.status, res.ops_before, res.ops_after, res.added,
		      res.removed, res.changed, res.nothing, res.seconds,
		      res.verify, res.error);
	tag_lines(&out, 'c', "", (const char *)res.report.data,
		  res.report.len);
	tag_lines(&out, 'w', "", (const char *)res.warnings.data,
		  res.warnings.len);
	if (caught) {
		/* the recipe's own lines name no model: they get its path */
		char buf[8192], prefix[PATH_MAX + 3];
		size_t n;
		snprintf(prefix, sizeof prefix, "%s: ", j->in);
		ge_buf text = GE_BUF_INIT;
		rewind(caught);
		while ((n = fread(buf, 1, sizeof buf, caught)) > 0 &&
		       text.len < (1u << 20))
			ge_buf_add(&text, buf, n);
		tag_lines(&out, 'w', prefix, (const char *)text.data,
			  text.len);
		ge_buf_free(&text);
		fclose(caught);
	}
	write_all(fd, (const char *)out.data, out.len);
	close(fd);
	_exit(0);
}

struct worker {
	pid_t pid;
	int fd;
	size_t job;
	double start;
	int killed; /* by the parent's watchdog */
};

/* The lines after the result line: "c\t..." report, "w\t..." warning. */
static void take_lines(struct job *j, const char *p)
{
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > 2 && p[1] == '\t' && (p[0] == 'c' || p[0] == 'w')) {
			ge_buf *b = p[0] == 'c' ? &j->report : &j->warnings;
			ge_buf_add(b, p + 2, len - 2);
			ge_buf_addc(b, '\n');
		}
		p += len + (nl != NULL);
	}
}

static void finish(struct job *j, struct worker *w, int st,
		   const struct limits *lim)
{
	ge_buf in = GE_BUF_INIT;
	char buf[8192];
	ssize_t r;
	while ((r = read(w->fd, buf, sizeof buf)) > 0 ||
	       (r < 0 && errno == EINTR))
		if (r > 0)
			ge_buf_add(&in, buf, (size_t)r);
	ge_buf_addc(&in, 0);
	close(w->fd);
	j->seconds = now() - w->start;
	int status, nothing;
	long before, after, added, removed, changed;
	double secs;
	int used = 0;
	char *text = (char *)in.data;
	/* the first line alone: the error may be empty */
	char *nl = strchr(text, '\n');
	if (nl)
		*nl = 0;
	if (in.len > 1 &&
	    sscanf(text, "%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%d\t%lf%n", &status,
		   &before, &after, &added, &removed, &changed, &nothing,
		   &secs, &used) == 8) {
		char *msg = text + used + (text[used] == '\t');
		/* the --verify figures, then the error */
		char *tab = strchr(msg, '\t');
		if (tab) {
			*tab = 0;
			if (*msg)
				j->verify = ge_xstrdup(msg);
			msg = tab + 1;
		}
		j->status = status ? 1 : 0;
		j->ops_before = before;
		j->ops_after = after;
		j->added = added;
		j->removed = removed;
		j->changed = changed;
		j->nothing = nothing;
		j->seconds = secs;
		if (status)
			j->error = ge_xstrdup(msg);
		if (nl)
			take_lines(j, nl + 1);
		ge_buf_free(&in);
		return;
	}
	ge_buf_free(&in);
	j->status = 1;
	char m[512];
	char sz[32];
	if (w->killed)
		snprintf(m, sizeof m, "%s: timed out after %g s (--timeout): "
				      "the worker was killed",
			 j->in, lim->timeout);
	else if (WIFSIGNALED(st) && lim->max_memory)
		snprintf(m, sizeof m, "%s: the worker died (signal %d: %s), "
				      "likely over --max-memory %s",
			 j->in, WTERMSIG(st), strsignal(WTERMSIG(st)),
			 ge_format_size(lim->max_memory, sz, sizeof sz));
	else if (WIFSIGNALED(st))
		snprintf(m, sizeof m, "%s: the worker died (signal %d: %s)",
			 j->in, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(m, sizeof m, "%s: the worker stopped without a result "
				      "(exit status %d)",
			 j->in, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	j->error = ge_xstrdup(m);
}

/* ------------------------------------------------------------ report */

static json_t *str_or_null(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;
	/* a path that is not UTF-8 is kept byte for byte */
	if (s && !v)
		v = json_stringn_nocheck(s, strlen(s));
	return v ? v : json_null();
}

static json_t *count_or_null(long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* The lines of a buffer as an array of strings. */
static json_t *lines_array(const ge_buf *b)
{
	json_t *a = json_array();
	const char *p = (const char *)b->data, *end = p + b->len;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = ge_xmalloc(len + 1);
		memcpy(line, p, len);
		line[len] = 0;
		json_array_append_new(a, str_or_null(line));
		free(line);
		p += len + 1;
	}
	return a;
}

static const char *const status_names[] = {"ok", "failed", "skipped"};

/* One model's entry of the report; an entry of an earlier run when the
 * model was skipped by --resume and that run's report told of it. */
static json_t *job_entry(const struct job *j)
{
	if (j->prior)
		return json_incref(j->prior);
	json_t *m = json_object();
	json_object_set_new(m, "model", str_or_null(j->in));
	json_object_set_new(m, "path", str_or_null(j->rel));
	json_object_set_new(m, "output", str_or_null(j->out));
	json_object_set_new(m, "status", json_string(status_names[j->status]));
	json_object_set_new(m, "ops_before", count_or_null(j->ops_before));
	json_object_set_new(m, "ops_after", count_or_null(j->ops_after));
	if (j->status != 2) {
		json_object_set_new(m, "ops_added", json_integer(j->added));
		json_object_set_new(m, "ops_removed", json_integer(j->removed));
		json_object_set_new(m, "ops_changed", json_integer(j->changed));
		json_object_set_new(m, "changed_nothing",
				    json_boolean(j->nothing));
		json_object_set_new(m, "ms", json_integer(
				    (json_int_t)(j->seconds * 1000 + 0.5)));
	}
	/* a model found but not run says why, one that failed what went
	 * wrong */
	if (j->status == 2 && j->error)
		json_object_set_new(m, "reason", json_string(j->error));
	json_object_set_new(m, "error",
			    str_or_null(j->status == 1 ? j->error : NULL));
	if (j->verify)
		json_object_set_new(m, "verify",
				    json_loads(j->verify, 0, NULL));
	json_object_set_new(m, "changes", lines_array(&j->report));
	json_object_set_new(m, "warnings", lines_array(&j->warnings));
	return m;
}

/* The head of the report: what makes two runs the same batch. */
static json_t *report_head(const char *recipe, const char *recipe_path,
			   char **params, int nparams, const char *shard)
{
	json_t *r = json_object(), *ps = json_array();
	json_object_set_new(r, "recipe", str_or_null(recipe));
	json_object_set_new(r, "recipe_path", str_or_null(recipe_path));
	for (int i = 0; i < nparams; i++)
		json_array_append_new(ps, str_or_null(params[i]));
	json_object_set_new(r, "params", ps);
	json_object_set_new(r, "shard", str_or_null(shard));
	return r;
}

/* The report of this invocation (see cmd_report.c for what merges). */
static json_t *make_report(json_t *head, const struct jobs *jobs,
			   double wall)
{
	json_t *r = json_deep_copy(head), *ms = json_array();
	for (size_t i = 0; i < jobs->n; i++)
		json_array_append_new(ms, job_entry(&jobs->v[i]));
	json_object_set_new(r, "models", ms);
	json_object_set_new(r, "summary", batch_summary(ms));
	json_t *t = json_object();
	json_object_set_new(t, "ms", json_integer((json_int_t)(wall * 1000 +
								0.5)));
	json_object_set_new(r, "timings", t);
	return r;
}

/* ------------------------------------------------------------ progress */

/* The last `width` bytes of a path, "..." first when it was cut: the
 * useful end of a long path is its end. */
static const char *trim_left(const char *path, size_t width, char *buf,
			     size_t cap)
{
	size_t n = strlen(path);
	if (n <= width || width < 4) {
		snprintf(buf, cap, "%s", path);
		return buf;
	}
	snprintf(buf, cap, "...%s", path + n - (width - 3));
	return buf;
}

/* current: the model's path relative to the input directory */
static void progress(int on, size_t done, size_t total, size_t failed,
		     const char *current)
{
	if (!on)
		return;
	char head[64], tail[PATH_MAX + 4];
	int n = snprintf(head, sizeof head, "[%zu/%zu] %zu failed  ", done,
			 total, failed);
	size_t width = n < 70 ? (size_t)(78 - n) : 8;
	fprintf(stderr, "\r\033[K%s%s", head,
		trim_left(current ? current : "", width, tail, sizeof tail));
	fflush(stderr);
}

/* ------------------------------------------------------------ command */

enum {
	O_OUT = 1, O_JOBS, O_PARAM, O_REPORT, O_SHARD, O_RESUME, O_FORMAT,
	O_TAGS, O_ALLOW_MISSING, O_QUIET, O_FUNCTIONS, O_TIMEOUT,
	O_MAX_MEMORY, O_VERIFY, O_MAX_ERROR, O_OVERWRITE, O_STRICT, O_PROVENANCE,
	O_SHARD_COUNT, O_REPORT_DIR,
};

static const struct cli_opt batch_opts[] = {
	{"output", 'o', 1, O_OUT},
	{"jobs", 'j', 1, O_JOBS},
	{"param", 'p', 1, O_PARAM},
	{"report", 0, 1, O_REPORT},
	{"shard", 0, 1, O_SHARD},
	{"shard-count", 0, 1, O_SHARD_COUNT},
	{"report-dir", 0, 1, O_REPORT_DIR},
	{"resume", 0, 0, O_RESUME},
	{"format", 'f', 1, O_FORMAT},
	{"tags", 't', 1, O_TAGS},
	{"allow-missing-variables", 0, 0, O_ALLOW_MISSING},
	{"quiet", 'q', 0, O_QUIET},
	{"functions", 0, 1, O_FUNCTIONS},
	{"timeout", 0, 1, O_TIMEOUT},
	{"max-memory", 0, 1, O_MAX_MEMORY},
	{"verify", 0, 0, O_VERIFY},
	{"max-error", 0, 1, O_MAX_ERROR},
	{"overwrite", 0, 0, O_OVERWRITE},
	{"strict", 0, 0, O_STRICT},
	{"provenance", 0, 1, O_PROVENANCE},
	{NULL, 0, 0, 0},
};

static int parse_uint(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000000)
		return -1;
	*out = v;
	return 0;
}

/* One invocation: what the options asked for, the recipe, the models. */
struct batch {
	struct cli_args a;
	struct cli_model_opts mo;
	const char *outdir, *report, *report_dir, *shard, *format;
	long njobs, shard_i, shard_n, shard_count;
	char shard_buf[48]; /* "I/N" when the engine gave it */
	int resume, quiet, tty;
	char **params;
	int nparams;
	ge_format outfmt;
	ge_save_opts so;
	int inplace; /* --overwrite without -o: each model where it is */
	int rec, par; /* stack slots of the recipe and its parameters */
	const char *rname, *rpath;
	struct jobs jobs;
	struct worker *workers;
	struct limits lim;
	size_t counts[3]; /* done, failed, skipped */
	double start;
	json_t *head;  /* the report's head: recipe, parameters, shard */
	json_t *prior; /* --resume --report-dir: entries of an earlier run */
	int journal;   /* --report-dir: each entry as it ends, or -1 */
};

static int batch_shard_opt(struct batch *b, const char *val)
{
	if (!strcmp(val, "auto")) {
		b->shard = val;
		return 0;
	}
	const char *sl = strchr(val, '/');
	char ib[32];
	if (sl && (size_t)(sl - val) < sizeof ib) {
		memcpy(ib, val, (size_t)(sl - val));
		ib[sl - val] = 0;
	}
	if (!sl || (size_t)(sl - val) >= sizeof ib ||
	    parse_uint(ib, &b->shard_i) || parse_uint(sl + 1, &b->shard_n) ||
	    b->shard_i > b->shard_n)
		return cli_usage("batch", "--shard needs auto or I/N with "
					  "1 <= I <= N (got '%s')",
				 val);
	b->shard = val;
	snprintf(b->shard_buf, sizeof b->shard_buf, "%ld/%ld", b->shard_i,
		 b->shard_n);
	return 0;
}

static const char *env_get(const char *name, void *ud)
{
	(void)ud;
	return getenv(name);
}

/* --shard auto, or no --shard in an array task: I/N from the engine's
 * variables (lib/base/shard.c), said on stderr. */
static int batch_shard_env(struct batch *b)
{
	if (b->shard && strcmp(b->shard, "auto"))
		return 0;
	ge_shard s;
	ge_error err;
	int rc = ge_shard_from_env(env_get, NULL, b->shard_count, &s, &err);
	if (rc == GE_ENOTFOUND && !b->shard && !b->shard_count)
		return 0;
	if (rc != GE_OK)
		return cli_usage("batch", "%s: %s",
				 b->shard ? "--shard auto"
					  : "the array task's shard (no --shard)",
				 err.msg);
	b->shard_i = s.index + 1;
	b->shard_n = s.count;
	snprintf(b->shard_buf, sizeof b->shard_buf, "%ld/%ld", b->shard_i,
		 b->shard_n);
	cli_errmsg("batch: shard %s from %s (%s)%s", b->shard_buf, s.engine,
		   s.vars, b->shard ? "" : "; --shard 1/1 runs every model");
	b->shard = b->shard_buf;
	return 0;
}

static int batch_options(struct batch *b)
{
	const char *val;
	int key, rc = 0;
	while ((key = cli_getopt(&b->a, batch_opts, &val)) > 0) {
		switch (key) {
		case O_OUT: b->outdir = val; break;
		case O_JOBS:
			if (parse_uint(val, &b->njobs))
				return cli_usage("batch", "-j needs a number "
							  "of workers (got "
							  "'%s')",
						 val);
			break;
		case O_PARAM: b->params[b->nparams++] = (char *)val; break;
		case O_REPORT: b->report = val; break;
		case O_SHARD:
			if ((rc = batch_shard_opt(b, val)))
				return rc;
			break;
		case O_SHARD_COUNT:
			if (parse_uint(val, &b->shard_count))
				return cli_usage("batch", "--shard-count needs "
							  "a number of tasks "
							  "(got '%s')",
						 val);
			break;
		case O_REPORT_DIR: b->report_dir = val; break;
		case O_RESUME: b->resume = 1; break;
		case O_FORMAT: b->format = val; break;
		case O_TAGS: b->mo.tags = val; break;
		case O_ALLOW_MISSING: b->mo.allow_missing_variables = 1; break;
		case O_QUIET: b->quiet = 1; break;
		case O_FUNCTIONS:
			if (cli_functions_opt("batch", val, &b->mo))
				return EXIT_USAGE;
			break;
		case O_TIMEOUT: {
			char *end;
			b->lim.timeout = strtod(val, &end);
			if (end == val || *end || !(b->lim.timeout > 0) ||
			    b->lim.timeout > 1e7)
				return cli_usage("batch", "--timeout needs a "
							  "number of seconds "
							  "(got '%s')",
						 val);
			break;
		}
		case O_VERIFY: batch_verify.on = 1; break;
		case O_MAX_ERROR:
			if (cli_verify_opt("batch", "--max-error", val,
					   &batch_verify))
				return EXIT_USAGE;
			break;
		case O_OVERWRITE: b->so.overwrite = 1; break;
		case O_STRICT: b->mo.strict = 1; break;
		case O_PROVENANCE:
			if (cli_provenance_opt("batch", val, &b->mo))
				return EXIT_USAGE;
			break;
		case O_MAX_MEMORY:
			if (ge_parse_size(val, &b->lim.max_memory) ||
			    !b->lim.max_memory)
				return cli_usage("batch", "--max-memory needs "
							  "a size (512M, 2G; "
							  "got '%s')",
						 val);
			break;
		}
	}
	if (key < 0)
		return EXIT_USAGE;
	if (b->a.npos < 2)
		return cli_usage("batch", "RECIPE and at least one DIR are needed");
	b->inplace = !b->outdir && b->so.overwrite;
	if (!b->outdir && !b->inplace)
		return cli_usage("batch", "the output directory is missing (-o "
					  "OUTDIR, or --overwrite to rewrite "
					  "the models in place)");
	if (b->inplace && b->resume)
		return cli_usage("batch", "--resume cannot tell which models "
					  "were rewritten in place: give -o "
					  "OUTDIR");
	if (b->shard_count && b->shard && strcmp(b->shard, "auto"))
		return cli_usage("batch", "--shard-count goes with --shard "
					  "auto (the count of an engine that "
					  "gives none)");
	if ((rc = batch_shard_env(b)))
		return rc;
	rc = cli_format("batch", b->format, &b->outfmt);
	b->so.format = b->outfmt;
	return rc;
}

/* The recipe and its parameters first: nothing is read if wrong. */
static int batch_recipe(lua_State *L, struct batch *b)
{
	int rc, top = lua_gettop(L);
	if ((rc = cli_load_recipe(L, b->a.pos[0])))
		return rc;
	if ((rc = cli_recipe_params(L, -1, b->params, b->nparams)))
		return rc;
	b->rec = top + 1;
	b->par = top + 2;
	lua_getfield(L, b->rec, "name");
	lua_getfield(L, b->rec, "path");
	b->rname = lua_tostring(L, -2);
	b->rpath = lua_tostring(L, -1);
	return 0;
}

/* The models under the DIRs, sorted, this shard's share, with their
 * output paths. */
static int batch_find(struct batch *b)
{
	struct jobs *jobs = &b->jobs;
	if (b->outdir && mkdirs(b->outdir) < 0) {
		cli_errmsg("%s: %s", b->outdir, strerror(errno));
		return EXIT_USAGE;
	}
	char outreal[PATH_MAX];
	struct walk w = {jobs,
			 b->outdir && realpath(b->outdir, outreal) ? outreal
								    : NULL,
			 0};
	int ndirs = b->a.npos - 1;
	for (int i = 1; i < b->a.npos; i++) {
		const char *d = b->a.pos[i];
		struct stat st;
		char bb[PATH_MAX];
		const char *base = base_name(d, bb, sizeof bb);
		if (stat(d, &st) != 0) {
			cli_errmsg("%s: %s", d, strerror(errno));
			return EXIT_USAGE;
		}
		if (!S_ISDIR(st.st_mode) || is_savedmodel_dir(d))
			add_job(jobs, d, base);
		else
			walk(&w, d, ndirs > 1 ? base : "");
	}
	if (w.err)
		return EXIT_USAGE;
	qsort(jobs->v, jobs->n, sizeof *jobs->v, cmp_job);
	for (size_t i = 1; i < jobs->n && !b->inplace; i++)
		if (!strcmp(jobs->v[i].rel, jobs->v[i - 1].rel)) {
			cli_errmsg("%s and %s would both be written to %s/%s",
				   jobs->v[i - 1].in, jobs->v[i].in, b->outdir,
				   jobs->v[i].rel);
			return EXIT_USAGE;
		}
	/* keep this shard's share: by the hash of the path, so that a model
	 * added moves no other */
	size_t k = 0;
	for (size_t i = 0; i < jobs->n; i++) {
		if (ge_shard_of(jobs->v[i].rel, b->shard_n) == b->shard_i - 1) {
			jobs->v[k++] = jobs->v[i];
		} else {
			free(jobs->v[i].in);
			free(jobs->v[i].rel);
		}
	}
	jobs->n = k;
	for (size_t i = 0; i < jobs->n; i++)
		jobs->v[i].out = b->inplace ? ge_xstrdup(jobs->v[i].in)
					    : out_path(b->outdir, jobs->v[i].rel,
						       b->outfmt);
	return same_outputs(jobs);
}

/* Appends a model's entry to the journal, if there is one. */
static void journal_job(struct batch *b, const struct job *j)
{
	if (b->journal < 0)
		return;
	json_t *e = job_entry(j);
	batch_journal_add(b->journal, e);
	json_decref(e);
}

/* A model skipped by --resume keeps the entry an earlier run of this
 * batch and shard gave it, when it was done there and written where it
 * is now: the reports of a resumed array merge into the whole batch's. */
static void resume_prior(struct batch *b, struct job *j)
{
	json_t *e = b->prior ? json_object_get(b->prior, j->rel) : NULL;
	const char *st = json_string_value(json_object_get(e, "status"));
	const char *out = json_string_value(json_object_get(e, "output"));
	if (st && !strcmp(st, "ok") && out && !strcmp(out, j->out))
		j->prior = json_incref(e);
}

/* --report-dir: the entries an earlier run left (--resume), and the
 * journal of this one. */
static int batch_prepare_reports(struct batch *b)
{
	b->head = report_head(b->rname, b->rpath, b->params, b->nparams,
			      b->shard_n > 1 || b->report_dir ? b->shard_buf
							      : b->shard);
	if (!b->report_dir)
		return 0;
	if (mkdirs(b->report_dir) < 0) {
		cli_errmsg("%s: %s", b->report_dir, strerror(errno));
		return EXIT_USAGE;
	}
	if (b->resume)
		b->prior = batch_prior_entries(b->report_dir, b->shard_i,
					       b->head);
	b->journal = batch_journal_start(b->report_dir, b->shard_i, b->head);
	if (b->journal < 0)
		return EXIT_USAGE;
	/* the earlier entries into the new journal, and the old report
	 * away: a run killed from here leaves no report of an earlier one
	 * for the merge to take, and loses nothing */
	const char *path;
	json_t *e;
	json_object_foreach(b->prior, path, e)
		batch_journal_add(b->journal, e);
	char old[PATH_MAX];
	snprintf(old, sizeof old, "%s/report-%ld.json", b->report_dir,
		 b->shard_i);
	if (unlink(old) < 0 && errno != ENOENT) {
		cli_errmsg("%s: %s", old, strerror(errno));
		return EXIT_USAGE;
	}
	return 0;
}

/* Starts the model at *next in a free worker, or settles it here when it
 * is not to be run; 0 or EXIT_USAGE. */
static int batch_start(lua_State *L, struct batch *b, size_t *next,
		       size_t *done, size_t *running)
{
	struct job *j = &b->jobs.v[*next];
	struct stat st;
	if (j->status == 2) {
		/* found but not run: the reason is kept */
		if (!b->quiet) {
			if (b->tty)
				fputs("\r\033[K", stderr);
			printf("skipped %s: %s\n", j->in, j->error);
		}
		journal_job(b, j);
		b->counts[2]++;
		(*done)++;
		(*next)++;
		return 0;
	}
	if (b->resume && stat(j->out, &st) == 0) {
		j->status = 2;
		j->error = ge_xstrdup("the output exists (--resume)");
		resume_prior(b, j);
		journal_job(b, j);
		b->counts[2]++;
		(*done)++;
		(*next)++;
		return 0;
	}
	int p[2];
	if (pipe(p) < 0) {
		cli_errmsg("pipe: %s", strerror(errno));
		return EXIT_USAGE;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cli_errmsg("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return EXIT_USAGE;
	}
	if (pid == 0) {
		close(p[0]);
		for (long i = 0; i < b->njobs; i++)
			if (b->workers[i].pid)
				close(b->workers[i].fd);
		child(L, b->rec, b->par, j, &b->mo, &b->so, p[1], &b->lim);
	}
	close(p[1]);
	long slot = 0;
	while (b->workers[slot].pid)
		slot++;
	b->workers[slot] = (struct worker){pid, p[0], *next, now(), 0};
	(*running)++;
	(*next)++;
	progress(b->tty, *done, b->jobs.n, b->counts[1], j->rel);
	return 0;
}

/* The worker loop: at most -j children at a time, each model's result
 * collected as its child ends. */
static int batch_run(lua_State *L, struct batch *b)
{
	struct worker *workers;
	size_t done = 0, next = 0, running = 0;
	int rc;
	b->tty = !b->quiet && isatty(STDERR_FILENO);
	workers = b->workers = ge_xcalloc((size_t)b->njobs, sizeof *workers);
	for (long i = 0; i < b->njobs; i++)
		workers[i].pid = 0;
	while (next < b->jobs.n || running > 0) {
		while (running < (size_t)b->njobs && next < b->jobs.n)
			if ((rc = batch_start(L, b, &next, &done, &running)))
				return rc;
		if (!running)
			continue;
		int st;
		pid_t pid = waitpid(-1, &st, b->lim.timeout > 0 ? WNOHANG : 0);
		if (pid == 0) {
			/* the watchdog: a worker whose own timer did not end
			 * it (blocked in the kernel, signals masked) */
			double t = now();
			for (long i = 0; i < b->njobs; i++)
				if (workers[i].pid && !workers[i].killed &&
				    t - workers[i].start > b->lim.timeout + 5) {
					kill(workers[i].pid, SIGKILL);
					workers[i].killed = 1;
				}
			usleep(20000);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			cli_errmsg("waitpid: %s", strerror(errno));
			return EXIT_USAGE;
		}
		long slot;
		for (slot = 0; slot < b->njobs; slot++)
			if (workers[slot].pid == pid)
				break;
		if (slot == b->njobs)
			continue;
		struct job *j = &b->jobs.v[workers[slot].job];
		finish(j, &workers[slot], st, &b->lim);
		journal_job(b, j);
		workers[slot].pid = 0;
		running--;
		done++;
		b->counts[j->status]++;
		if (b->tty && (j->status == 1 || (j->warnings.len && !b->quiet)))
			fputs("\r\033[K", stderr);
		if (!b->quiet)
			cli_print_lines(&j->warnings);
		if (j->status == 1)
			cli_errmsg("%s", j->error);
		progress(b->tty, done, b->jobs.n, b->counts[1], NULL);
	}
	return 0;
}

/* The summary line and the --report file; the exit status. */
static int batch_report(struct batch *b)
{
	size_t *counts = b->counts;
	if (b->tty)
		fputs("\r\033[K", stderr);
	printf("%zu model%s: %zu done, %zu failed, %zu skipped\n", b->jobs.n,
	       b->jobs.n == 1 ? "" : "s", counts[0], counts[1], counts[2]);
	if (!b->report && !b->report_dir)
		return counts[1] ? EXIT_RUNTIME : 0;
	json_t *r = make_report(b->head, &b->jobs, now() - b->start);
	int rc = 0;
	if (b->report && batch_report_write(r, b->report))
		rc = EXIT_USAGE;
	if (!rc && b->report_dir) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/report-%ld.json", b->report_dir,
			 b->shard_i);
		if (batch_report_write(r, path))
			rc = EXIT_USAGE;
		else
			batch_journal_end(b->journal, b->report_dir,
					  b->shard_i);
		b->journal = -1;
	}
	json_decref(r);
	if (rc)
		return rc;
	return counts[1] ? EXIT_RUNTIME : 0;
}

int cmd_batch(lua_State *L, int argc, char **argv)
{
	struct batch b = {.njobs = 1, .shard_i = 1, .shard_n = 1,
			  .outfmt = GE_FMT_AUTO, .shard_buf = "1/1",
			  .journal = -1};
	int rc;
	b.start = now();
	b.params = ge_xcalloc((size_t)argc + 1, sizeof *b.params);
	cli_args_init(&b.a, "batch", argc, argv);
	if (!(rc = batch_options(&b)) && !(rc = batch_recipe(L, &b)) &&
	    !(rc = batch_find(&b)) && !(rc = batch_prepare_reports(&b)) &&
	    !(rc = batch_run(L, &b)))
		rc = batch_report(&b);
	if (b.journal >= 0)
		close(b.journal); /* kept: the report was not written */
	json_decref(b.head);
	json_decref(b.prior);
	for (size_t i = 0; i < b.jobs.n; i++) {
		free(b.jobs.v[i].in);
		free(b.jobs.v[i].rel);
		free(b.jobs.v[i].out);
		free(b.jobs.v[i].error);
		free(b.jobs.v[i].verify);
		json_decref(b.jobs.v[i].prior);
		ge_buf_free(&b.jobs.v[i].report);
		ge_buf_free(&b.jobs.v[i].warnings);
	}
	free(b.jobs.v);
	free(b.workers);
	free(b.params);
	cli_args_free(&b.a);
	return rc;
}
