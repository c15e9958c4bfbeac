/*
 * shard.c: the shard of a task from its cluster engine's variables, and
 * the hash that gives each model its shard.
 *
 * Every engine numbers the tasks of an array job in its own way; the
 * table below says, for each, which variable holds the task's index,
 * where the indices start (0 or 1, or a variable holding the first),
 * their step, the last index and the count.  The index of the shard is
 * (index - first) / step; the count is the engine's count, else the
 * range's (last - first) / step + 1, else the one given by the command
 * line or GEREWRITE_SHARD_COUNT.  When several of those are there they
 * must agree.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shard.h"

struct engine {
	const char *name;
	const char *index;  /* the task's index */
	const char *unset;  /* a value of index meaning "not an array task" */
	long base;          /* the first index when no variable says */
	const char *first;  /* the first index of the array */
	const char *last;   /* the last index */
	const char *step;   /* the step between indices */
	const char *count;  /* the number of tasks */
};

/* The one table of engines; the order is the order of the docs. */
static const struct engine engines[] = {
	{"Slurm", "SLURM_ARRAY_TASK_ID", NULL, 0, "SLURM_ARRAY_TASK_MIN",
	 "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	 "SLURM_ARRAY_TASK_COUNT"},
	{"Kubernetes", "JOB_COMPLETION_INDEX", NULL, 0, NULL, NULL, NULL,
	 NULL},
	{"AWS Batch", "AWS_BATCH_JOB_ARRAY_INDEX", NULL, 0, NULL, NULL, NULL,
	 "AWS_BATCH_JOB_ARRAY_SIZE"},
	{"Google Cloud Batch", "BATCH_TASK_INDEX", NULL, 0, NULL, NULL, NULL,
	 "BATCH_TASK_COUNT"},
	{"Cloud Run", "CLOUD_RUN_TASK_INDEX", NULL, 0, NULL, NULL, NULL,
	 "CLOUD_RUN_TASK_COUNT"},
	{"SGE", "SGE_TASK_ID", "undefined", 1, "SGE_TASK_FIRST",
	 "SGE_TASK_LAST", "SGE_TASK_STEPSIZE", NULL},
	{"LSF", "LSB_JOBINDEX", "0", 1, NULL, "LSB_JOBINDEX_END",
	 "LSB_JOBINDEX_STEP", NULL},
};
#define NENGINES (sizeof engines / sizeof engines[0])

const char *const *ge_shard_engines(void)
{
	static const char *names[NENGINES + 1];
	for (size_t i = 0; i < NENGINES; i++)
		names[i] = engines[i].name;
	return names;
}

uint64_t ge_shard_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	return h;
}

long ge_shard_of(const char *path, long count)
{
	/* the high half: its bits depend on every bit of every byte, where
	 * the low k bits of FNV-1a depend on the low k bits of the bytes
	 * alone (paths differing in 'a' and 'q' would share a shard of 16) */
	return count > 1 ? (long)((ge_shard_hash(path) >> 32) % (uint64_t)count)
			 : 0;
}

/* What one task's variables say, read once. */
struct reading {
	ge_getenv_fn get;
	void *ud;
	ge_shard *s;
	ge_error *err;
	int bad;
};

/* Appends NAME=value to the list of variables read. */
static void note(struct reading *r, const char *name, const char *val)
{
	size_t n = strlen(r->s->vars);
	snprintf(r->s->vars + n, sizeof r->s->vars - n, "%s%s=%s",
		 n ? " " : "", name, val);
}

/* The variable as a number >= min; -1 when unset (or the engine's
 * "not an array task" value); r->bad set when it is not a number. */
static long number(struct reading *r, const char *name, long min)
{
	const char *v = name ? r->get(name, r->ud) : NULL;
	if (!v || !*v || !strcmp(v, "undefined"))
		return -1;
	note(r, name, v);
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > 1000000000L) {
		if (!r->bad)
			ge_err(r->err, GE_EINVAL,
			       "%s=%s is not a number >= %ld", name, v, min);
		r->bad = 1;
		return -1;
	}
	return x;
}

/* The index of the one engine whose index variable is set; -1 none,
 * -2 more than one (err set). */
static int which_engine(ge_getenv_fn get, void *ud, ge_error *err)
{
	int found = -1;
	for (size_t i = 0; i < NENGINES; i++) {
		const char *v = get(engines[i].index, ud);
		if (!v || !*v ||
		    (engines[i].unset && !strcmp(v, engines[i].unset)))
			continue;
		if (found >= 0) {
			ge_err(err, GE_EINVAL,
			       "the variables of two engines are set: %s=%s "
			       "(%s) and %s=%s (%s)",
			       engines[found].index,
			       get(engines[found].index, ud),
			       engines[found].name, engines[i].index, v,
			       engines[i].name);
			return -2;
		}
		found = (int)i;
	}
	return found;
}

/* The count from the engine, the range, the command line and
 * GEREWRITE_SHARD_COUNT: those given must agree. */
static long shard_count(struct reading *r, const struct engine *e,
			long range, const char *range_vars, long cmdline)
{
	long ec = number(r, e->count, 1);
	long gc = number(r, GE_SHARD_COUNT_VAR, 1);
	if (r->bad)
		return -1;
	struct { long v; char what[160]; } c[4];
	int n = 0;
	if (ec > 0) {
		c[n].v = ec;
		snprintf(c[n++].what, sizeof c[0].what, "%s=%ld", e->count, ec);
	}
	if (range > 0) {
		c[n].v = range;
		snprintf(c[n++].what, sizeof c[0].what,
			 "the range %s (%ld tasks)", range_vars, range);
	}
	if (cmdline > 0) {
		c[n].v = cmdline;
		snprintf(c[n++].what, sizeof c[0].what, "--shard-count %ld",
			 cmdline);
	}
	if (gc > 0) {
		c[n].v = gc;
		snprintf(c[n++].what, sizeof c[0].what, "%s=%ld",
			 GE_SHARD_COUNT_VAR, gc);
	}
	if (!n) {
		ge_err(r->err, GE_EINVAL,
		       "%s gives the task's index but not the count of tasks "
		       "(%s): give --shard-count N or %s=N",
		       e->name, r->s->vars, GE_SHARD_COUNT_VAR);
		return -1;
	}
	for (int i = 1; i < n; i++)
		if (c[i].v != c[0].v) {
			ge_err(r->err, GE_EINVAL,
			       "the count of tasks disagrees: %s but %s (%s)",
			       c[0].what, c[i].what, r->s->vars);
			return -1;
		}
	return c[0].v;
}

int ge_shard_from_env(ge_getenv_fn get, void *ud, long count, ge_shard *s,
		      ge_error *err)
{
	memset(s, 0, sizeof *s);
	int k = which_engine(get, ud, err);
	if (k == -2)
		return GE_EINVAL;
	if (k < 0)
		return ge_err(err, GE_ENOTFOUND,
			      "no cluster engine's array variables are set");
	const struct engine *e = &engines[k];
	struct reading r = {get, ud, s, err, 0};
	s->engine = e->name;
	long id = number(&r, e->index, 0);
	long first = number(&r, e->first, 0);
	long last = number(&r, e->last, 0);
	long step = number(&r, e->step, 1);
	if (r.bad)
		return GE_EINVAL;
	if (first < 0)
		first = e->base;
	if (step < 0)
		step = 1;
	if (id < first || (id - first) % step)
		return ge_err(err, GE_EINVAL,
			      "%s: the task's index is not one of the array's "
			      "(%s)",
			      e->name, s->vars);
	long range = -1;
	char range_vars[128] = "";
	if (last >= 0) {
		if (last < first)
			return ge_err(err, GE_EINVAL,
				      "%s: the array's last index is before "
				      "its first (%s)",
				      e->name, s->vars);
		range = (last - first) / step + 1;
		snprintf(range_vars, sizeof range_vars, "%s..%s",
			 e->first ? e->first : (e->base ? "1" : "0"), e->last);
	}
	s->index = (id - first) / step;
	s->count = shard_count(&r, e, range, range_vars, count);
	if (s->count < 0)
		return GE_EINVAL;
	if (s->index >= s->count)
		return ge_err(err, GE_EINVAL,
			      "%s: the task's index is past the count of tasks "
			      "(%s%s)",
			      e->name, s->vars,
			      e->base == 1 && !e->first
				      ? "; indices count from 1"
				      : "");
	return GE_OK;
}
