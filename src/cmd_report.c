/*
 * cmd_report.c: `gerewrite report merge DIR [-o FILE]`: the reports the
 * tasks of a sharded batch wrote with --report-dir DIR (report-I.json,
 * one per shard I of N) joined into the report one process running the
 * whole batch would have written, the timings aside.
 *
 * Checks.  Every report names its shard I/N; I is the number in its file
 * name, N is the same in all, and so are the recipe and its parameters.
 * Each of the N shards must have reported once: the missing ones are
 * named.  A model is in one report only, and in the shard its path hashes
 * to (lib/base/shard.h).  Any of these wrong is an error (exit 2) and nothing
 * is written.
 *
 * The merge.  The models of all reports, sorted by their path relative to
 * the input directory (the order of a batch), the summary computed from
 * them as a batch computes it (batch_summary), "shard" null as for a
 * batch without --shard, and under "timings" each task's wall time, the
 * longest and the sum of the models' times.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_report.h"
#include "cli.h"
#include "base/fsutil.h"
#include "base/jsonpb.h"
#include "base/shard.h"

/* ------------------------------------------------------------ summary */

/* A verify figure: a number, or a string ("inf") for what JSON cannot
 * hold; the largest seen in *max. */
static void take_max(const json_t *v, double *max)
{
	double x = json_is_number(v) ? json_number_value(v)
		   : json_is_string(v) ? INFINITY
				       : 0;
	if (x > *max)
		*max = x;
}

static json_t *figure(double x)
{
	return isfinite(x) ? json_real(x) : json_string("inf");
}

json_t *batch_summary(const json_t *models)
{
	json_int_t n[3] = {0, 0, 0}, verified = 0, outside = 0;
	double max_abs = 0, max_rel = 0;
	json_t *failures = json_array();
	size_t i;
	const json_t *m;
	json_array_foreach(models, i, m) {
		const char *st =
			json_string_value(json_object_get(m, "status"));
		int k = st && !strcmp(st, "ok")       ? 0
			: st && !strcmp(st, "failed") ? 1
						      : 2;
		n[k]++;
		if (k == 1)
			json_array_append(failures, json_object_get(m, "path"));
		const json_t *v = json_object_get(m, "verify");
		if (!json_is_object(v))
			continue;
		verified++;
		outside += json_is_false(json_object_get(v, "ok"));
		take_max(json_object_get(v, "max_abs_diff"), &max_abs);
		take_max(json_object_get(v, "max_rel_diff"), &max_rel);
	}
	json_t *s = json_object();
	json_object_set_new(s, "total", json_integer(n[0] + n[1] + n[2]));
	json_object_set_new(s, "ok", json_integer(n[0]));
	json_object_set_new(s, "failed", json_integer(n[1]));
	json_object_set_new(s, "skipped", json_integer(n[2]));
	json_object_set_new(s, "failures", failures);
	if (verified) {
		json_t *v = json_object();
		json_object_set_new(v, "models", json_integer(verified));
		json_object_set_new(v, "outside", json_integer(outside));
		json_object_set_new(v, "max_abs_diff", figure(max_abs));
		json_object_set_new(v, "max_rel_diff", figure(max_rel));
		json_object_set_new(s, "verify", v);
	}
	return s;
}

int batch_report_write(const json_t *r, const char *path)
{
	ge_buf b = GE_BUF_INIT;
	ge_json_dump(r, &b);
	ge_error err;
	int rc = 0;
	if (ge_file_write_atomic(path, b.data, b.len, &err) != GE_OK) {
		cli_errmsg("%s", err.msg);
		rc = EXIT_USAGE;
	}
	ge_buf_free(&b);
	return rc;
}

/* ------------------------------------------------------------ resume */

static void journal_path(char *buf, size_t cap, const char *dir, long i)
{
	snprintf(buf, cap, "%s/.report-%ld.journal", dir, i);
}

/* Whether a report or journal head is of the same batch as head. */
static int same_batch(const json_t *a, const json_t *head)
{
	static const char *const keys[] = {"recipe", "params", "shard"};
	if (!json_is_object(a))
		return 0;
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (!json_equal(json_object_get(a, keys[k]),
				json_object_get(head, keys[k])))
			return 0;
	return 1;
}

/* Adds the entries of an array to prior, by path. */
static void add_entries(json_t *prior, const json_t *models)
{
	size_t k;
	json_t *e;
	json_array_foreach(models, k, e) {
		const char *p = json_string_value(json_object_get(e, "path"));
		if (p)
			json_object_set(prior, p, e);
	}
}

/* The journal's lines after its head, when the head is this batch's; a
 * line cut short by a kill does not parse and is left out. */
static void add_journal(json_t *prior, const char *path, const json_t *head)
{
	uint8_t *data;
	size_t len;
	if (ge_file_read(path, &data, &len, NULL) != GE_OK)
		return;
	char *p = (char *)data, *end = p + len;
	int first = 1;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* no newline: cut short */
		json_t *v = json_loadb(p, (size_t)(nl - p), 0, NULL);
		p = nl + 1;
		if (first) {
			first = 0;
			if (!same_batch(v, head)) {
				json_decref(v);
				break;
			}
		} else if (json_is_object(v)) {
			json_t *a = json_array();
			json_array_append(a, v);
			add_entries(prior, a);
			json_decref(a);
		}
		json_decref(v);
	}
	free(data);
}

json_t *batch_prior_entries(const char *dir, long i, const json_t *head)
{
	json_t *prior = json_object();
	char path[4096];
	snprintf(path, sizeof path, "%s/report-%ld.json", dir, i);
	json_t *r = json_load_file(path, 0, NULL);
	if (same_batch(r, head))
		add_entries(prior, json_object_get(r, "models"));
	json_decref(r);
	journal_path(path, sizeof path, dir, i);
	add_journal(prior, path, head);
	return prior;
}

static void write_line(int fd, const json_t *v)
{
	ge_buf b = GE_BUF_INIT;
	ge_json_dump_compact(v, &b);
	ge_buf_addc(&b, '\n');
	/* one write on O_APPEND: a line is whole or cut at its end */
	if (write(fd, b.data, b.len) < 0)
		(void)0; /* the report at the end still says it all */
	ge_buf_free(&b);
}

int batch_journal_start(const char *dir, long i, const json_t *head)
{
	char path[4096];
	journal_path(path, sizeof path, dir, i);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		      0666);
	if (fd < 0) {
		cli_errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	write_line(fd, head);
	return fd;
}

void batch_journal_add(int fd, const json_t *entry)
{
	if (fd >= 0)
		write_line(fd, entry);
}

void batch_journal_end(int fd, const char *dir, long i)
{
	if (fd < 0)
		return;
	close(fd);
	char path[4096];
	journal_path(path, sizeof path, dir, i);
	unlink(path);
}

/* ------------------------------------------------------------ merge */

/* The reports of a directory, by shard. */
struct merge {
	const char *dir;
	long n;            /* the shard count, 0 before the first report */
	json_t **by_shard; /* [n], NULL where none came */
	const json_t *first;
	char first_name[64];
};

/* The I of a file name report-I.json; 0 for any other name. */
static long report_index(const char *name)
{
	if (strncmp(name, "report-", 7))
		return 0;
	char *end;
	errno = 0;
	long i = strtol(name + 7, &end, 10);
	if (errno || end == name + 7 || strcmp(end, ".json") || i < 1 ||
	    i > 1000000)
		return 0;
	return i;
}

/* The shard "I/N" a report names; 1/1 for null (a batch run whole). */
static int report_shard(const json_t *r, long *i, long *n)
{
	const json_t *s = json_object_get(r, "shard");
	if (!s || json_is_null(s)) {
		*i = *n = 1;
		return 0;
	}
	const char *v = json_string_value(s);
	char c;
	return v && sscanf(v, "%ld/%ld%c", i, n, &c) == 2 && *i >= 1 &&
			       *i <= *n
		       ? 0
		       : -1;
}

static int same_json(const json_t *a, const json_t *b)
{
	return json_equal((json_t *)a, (json_t *)b) ||
	       (!a && json_is_null(b)) || (!b && json_is_null(a));
}

/* Reads one report into m; 0 or EXIT_USAGE after a message. */
static int merge_one(struct merge *m, const char *name, long idx)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", m->dir, name);
	uint8_t *data;
	size_t len;
	json_t *r;
	ge_error err;
	if (ge_file_read(path, &data, &len, &err) != GE_OK) {
		cli_errmsg("%s", err.msg);
		return EXIT_USAGE;
	}
	int lrc = ge_json_load((const char *)data, len, path, &r, &err);
	free(data);
	if (lrc != GE_OK) {
		cli_errmsg("%s", err.msg);
		return EXIT_USAGE;
	}
	long i, n;
	if (!json_is_object(r) ||
	    !json_is_array(json_object_get(r, "models")) ||
	    report_shard(r, &i, &n)) {
		cli_errmsg("%s: not a batch report (no models, or no shard "
			   "I/N)",
			   path);
		json_decref(r);
		return EXIT_USAGE;
	}
	if (i != idx) {
		cli_errmsg("%s: the report of shard %ld/%ld, not of shard %ld",
			   path, i, n, idx);
		json_decref(r);
		return EXIT_USAGE;
	}
	if (!m->n) {
		m->n = n;
		m->by_shard = ge_xcalloc((size_t)n, sizeof *m->by_shard);
		m->first = r;
		snprintf(m->first_name, sizeof m->first_name, "%s", name);
	} else if (n != m->n) {
		cli_errmsg("%s: shard %ld/%ld, but %s was of %ld shards",
			   path, i, n, m->first_name, m->n);
		json_decref(r);
		return EXIT_USAGE;
	} else if (!same_json(json_object_get(r, "recipe"),
			      json_object_get(m->first, "recipe")) ||
		   !same_json(json_object_get(r, "params"),
			      json_object_get(m->first, "params"))) {
		cli_errmsg("%s: another recipe or other parameters than %s",
			   path, m->first_name);
		json_decref(r);
		return EXIT_USAGE;
	}
	m->by_shard[i - 1] = r;
	return 0;
}

/* Every shard reported once: the missing ones named. */
static int merge_complete(struct merge *m)
{
	ge_buf b = GE_BUF_INIT;
	long missing = 0;
	for (long i = 0; i < m->n; i++)
		if (!m->by_shard[i] && missing++ < 20)
			ge_buf_printf(&b, "%sreport-%ld.json",
				      missing > 1 ? ", " : "", i + 1);
	if (!missing) {
		ge_buf_free(&b);
		return 0;
	}
	ge_buf_addc(&b, 0);
	cli_errmsg("%s: %ld of %ld shards did not report (%s%s): run them "
		   "again (with --resume) and merge",
		   m->dir, missing, m->n, (char *)b.data,
		   missing > 20 ? ", ..." : "");
	ge_buf_free(&b);
	return EXIT_USAGE;
}

static const char *model_key(const json_t *e)
{
	const char *p = json_string_value(json_object_get(e, "path"));
	return p ? p : json_string_value(json_object_get(e, "model"));
}

static int cmp_model(const void *a, const void *b)
{
	const char *x = model_key(*(json_t *const *)a);
	const char *y = model_key(*(json_t *const *)b);
	return strcmp(x ? x : "", y ? y : "");
}

/* All models, sorted, each once and in its own shard; NULL after a
 * message when not. */
static json_t *merge_models(struct merge *m)
{
	size_t total = 0;
	for (long i = 0; i < m->n; i++)
		total += json_array_size(
			json_object_get(m->by_shard[i], "models"));
	json_t **v = ge_xmalloc((total ? total : 1) * sizeof *v);
	size_t k = 0;
	for (long i = 0; i < m->n; i++) {
		size_t j;
		json_t *e;
		const json_t *ms = json_object_get(m->by_shard[i], "models");
		json_array_foreach(ms, j, e) {
			const char *p = model_key(e);
			if (!p || (json_object_get(e, "path") &&
				   ge_shard_of(p, m->n) != i)) {
				cli_errmsg("%s/report-%ld.json: model %s is "
					   "not of shard %ld/%ld",
					   m->dir, i + 1, p ? p : "(no path)",
					   i + 1, m->n);
				free(v);
				return NULL;
			}
			v[k++] = e;
		}
	}
	qsort(v, k, sizeof *v, cmp_model);
	for (size_t i = 1; i < k; i++)
		if (!strcmp(model_key(v[i]), model_key(v[i - 1]))) {
			cli_errmsg("%s: model %s is in two reports", m->dir,
				   model_key(v[i]));
			free(v);
			return NULL;
		}
	json_t *a = json_array();
	for (size_t i = 0; i < k; i++)
		json_array_append(a, v[i]);
	free(v);
	return a;
}

/* Each task's time, the longest, and the sum of the models'. */
static json_t *merge_timings(struct merge *m, const json_t *models)
{
	json_t *t = json_object(), *tasks = json_array();
	json_int_t longest = 0, sum = 0;
	for (long i = 0; i < m->n; i++) {
		const json_t *r = m->by_shard[i];
		json_int_t ms = json_integer_value(
			json_object_get(json_object_get(r, "timings"), "ms"));
		json_t *x = json_object();
		json_object_set(x, "shard", json_object_get(r, "shard"));
		json_object_set_new(x, "models", json_integer((json_int_t)
			json_array_size(json_object_get(r, "models"))));
		json_object_set_new(x, "ms", json_integer(ms));
		json_array_append_new(tasks, x);
		if (ms > longest)
			longest = ms;
	}
	size_t i;
	const json_t *e;
	json_array_foreach(models, i, e)
		sum += json_integer_value(json_object_get(e, "ms"));
	json_object_set_new(t, "ms", json_integer(longest));
	json_object_set_new(t, "models_ms", json_integer(sum));
	json_object_set_new(t, "tasks", tasks);
	return t;
}

static int merge_dir(struct merge *m)
{
	struct dirent **ents;
	int nents = scandir(m->dir, &ents, NULL, alphasort);
	if (nents < 0) {
		cli_errmsg("%s: %s", m->dir, strerror(errno));
		return EXIT_USAGE;
	}
	int rc = 0;
	for (int i = 0; i < nents; i++) {
		long idx = report_index(ents[i]->d_name);
		if (!rc && idx && m->n && idx > m->n) {
			cli_errmsg("%s/%s: a shard past the count %ld", m->dir,
				   ents[i]->d_name, m->n);
			rc = EXIT_USAGE;
		}
		if (!rc && idx)
			rc = merge_one(m, ents[i]->d_name, idx);
	}
	for (int i = 0; i < nents; i++)
		free(ents[i]);
	free(ents);
	if (!rc && !m->n) {
		cli_errmsg("%s: no report-I.json in it (batch --report-dir)",
			   m->dir);
		rc = EXIT_USAGE;
	}
	return rc ? rc : merge_complete(m);
}

enum { O_OUT = 1, O_QUIET };

static const struct cli_opt report_opts[] = {
	{"output", 'o', 1, O_OUT},
	{"quiet", 'q', 0, O_QUIET},
	{NULL, 0, 0, 0},
};

static int merge_write(struct merge *m, const char *out, int quiet)
{
	json_t *models = merge_models(m);
	if (!models)
		return EXIT_USAGE;
	const json_t *f = m->first;
	json_t *r = json_object();
	json_object_set(r, "recipe", json_object_get(f, "recipe"));
	json_object_set(r, "recipe_path", json_object_get(f, "recipe_path"));
	json_object_set(r, "params", json_object_get(f, "params"));
	json_object_set_new(r, "shard", json_null());
	json_object_set_new(r, "models", models);
	json_t *sum = batch_summary(models);
	json_object_set_new(r, "summary", sum);
	json_object_set_new(r, "timings", merge_timings(m, models));
	int rc = 0;
	if (out) {
		rc = batch_report_write(r, out);
	} else {
		ge_buf b = GE_BUF_INIT;
		ge_json_dump(r, &b);
		fwrite(b.data, 1, b.len, stdout);
		ge_buf_free(&b);
	}
	long long total = json_integer_value(json_object_get(sum, "total"));
	long long done = json_integer_value(json_object_get(sum, "ok"));
	long long failed = json_integer_value(json_object_get(sum, "failed"));
	long long skipped = json_integer_value(json_object_get(sum, "skipped"));
	if (!rc && out && !quiet)
		printf("%lld models from %ld reports: %lld done, %lld failed, "
		       "%lld skipped\n",
		       total, m->n, done, failed, skipped);
	json_decref(r);
	return rc ? rc : failed ? EXIT_RUNTIME : 0;
}

int cmd_report(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct cli_args a;
	const char *val, *out = NULL;
	int key, quiet = 0, rc;
	cli_args_init(&a, "report", argc, argv);
	while ((key = cli_getopt(&a, report_opts, &val)) > 0) {
		if (key == O_OUT)
			out = val;
		else
			quiet = 1;
	}
	if (key < 0) {
		cli_args_free(&a);
		return EXIT_USAGE;
	}
	if (a.npos != 2 || strcmp(a.pos[0], "merge")) {
		cli_args_free(&a);
		return cli_usage("report", "the one action is merge DIR");
	}
	struct merge m = {a.pos[1], 0, NULL, NULL, ""};
	rc = merge_dir(&m);
	if (!rc)
		rc = merge_write(&m, out, quiet);
	for (long i = 0; i < m.n; i++)
		json_decref(m.by_shard[i]);
	free(m.by_shard);
	cli_args_free(&a);
	return rc;
}
