/*
 * shard.c: the shard of a task from each cluster engine's variables
 * (lib/base/shard.c), inconsistent sets refused with the variables named, and
 * the stable hash that gives each model its shard.
 */
#include "config.h"

#include <string.h>

#include "base/shard.h"
#include "tap.h"

/* An environment for a test: "NAME=value" strings, NULL-terminated. */
static const char *lookup(const char *name, void *ud)
{
	size_t n = strlen(name);
	for (const char *const *e = ud; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static int from(const char *const *env, long count, ge_shard *s,
		ge_error *err)
{
	memset(err, 0, sizeof *err);
	return ge_shard_from_env(lookup, (void *)env, count, s, err);
}

/* The 0-based index and count an environment gives. */
static void gives(const char *const *env, long count, long index, long n,
		  const char *engine, const char *what)
{
	ge_shard s;
	ge_error err;
	int rc = from(env, count, &s, &err);
	is_int(GE_OK, rc, "%s: found (%s)", what, err.msg);
	is_int(index, s.index, "%s: index", what);
	is_int(n, s.count, "%s: count", what);
	is_string(engine, s.engine, "%s: engine", what);
}

/* An environment refused, the message naming the variables. */
static void refused(const char *const *env, long count, const char *has1,
		    const char *has2, const char *what)
{
	ge_shard s;
	ge_error err;
	int rc = from(env, count, &s, &err);
	is_int(GE_EINVAL, rc, "%s: refused", what);
	ok(strstr(err.msg, has1) && (!has2 || strstr(err.msg, has2)),
	   "%s: the message names %s%s%s (%s)", what, has1, has2 ? ", " : "",
	   has2 ? has2 : "", err.msg);
}

static void slurm(void)
{
	const char *a[] = {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=4",
			   "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3",
			   "SLURM_ARRAY_TASK_STEP=1", "SLURM_JOB_ID=7", NULL};
	gives(a, 0, 2, 4, "Slurm", "Slurm --array=0-3");
	const char *b[] = {"SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_MIN=1",
			   "SLURM_ARRAY_TASK_MAX=4", NULL};
	gives(b, 0, 3, 4, "Slurm", "Slurm --array=1-4, no count");
	const char *c[] = {"SLURM_ARRAY_TASK_ID=14", "SLURM_ARRAY_TASK_COUNT=4",
			   "SLURM_ARRAY_TASK_MIN=8", "SLURM_ARRAY_TASK_MAX=14",
			   "SLURM_ARRAY_TASK_STEP=2", NULL};
	gives(c, 0, 3, 4, "Slurm", "Slurm --array=8-14:2");
	const char *d[] = {"SLURM_ARRAY_TASK_ID=7", "SLURM_ARRAY_TASK_COUNT=3",
			   "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=7",
			   NULL};
	refused(d, 0, "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MAX",
		"Slurm --array=1,3,7 (not a range)");
	const char *e[] = {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=4",
			   "SLURM_ARRAY_TASK_MIN=0", NULL};
	refused(e, 0, "SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=4",
		"Slurm index past the count");
	const char *f[] = {"SLURM_ARRAY_TASK_ID=x1", NULL};
	refused(f, 0, "SLURM_ARRAY_TASK_ID=x1", NULL, "Slurm, not a number");
	refused(a, 3, "--shard-count 3", "SLURM_ARRAY_TASK_COUNT=4",
		"Slurm and --shard-count disagree");
}

static void kubernetes(void)
{
	const char *a[] = {"JOB_COMPLETION_INDEX=0", NULL};
	gives(a, 5, 0, 5, "Kubernetes", "Kubernetes, --shard-count 5");
	const char *b[] = {"JOB_COMPLETION_INDEX=4",
			   "GEREWRITE_SHARD_COUNT=5", NULL};
	gives(b, 0, 4, 5, "Kubernetes", "Kubernetes, GEREWRITE_SHARD_COUNT");
	refused(a, 0, "JOB_COMPLETION_INDEX=0", "--shard-count",
		"Kubernetes without a count");
	refused(b, 4, "GEREWRITE_SHARD_COUNT=5", "--shard-count 4",
		"Kubernetes, two counts that disagree");
}

static void aws(void)
{
	const char *a[] = {"AWS_BATCH_JOB_ARRAY_INDEX=9",
			   "AWS_BATCH_JOB_ARRAY_SIZE=10", NULL};
	gives(a, 0, 9, 10, "AWS Batch", "AWS Batch");
	const char *b[] = {"AWS_BATCH_JOB_ARRAY_INDEX=10",
			   "AWS_BATCH_JOB_ARRAY_SIZE=10", NULL};
	refused(b, 0, "AWS_BATCH_JOB_ARRAY_INDEX=10",
		"AWS_BATCH_JOB_ARRAY_SIZE=10", "AWS Batch index past the size");
}

static void gcp(void)
{
	const char *a[] = {"BATCH_TASK_INDEX=1", "BATCH_TASK_COUNT=3", NULL};
	gives(a, 0, 1, 3, "Google Cloud Batch", "Google Cloud Batch");
	const char *b[] = {"BATCH_TASK_INDEX=1", "BATCH_TASK_COUNT=0", NULL};
	refused(b, 0, "BATCH_TASK_COUNT=0", NULL, "Cloud Batch, count 0");
}

static void cloudrun(void)
{
	const char *a[] = {"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1",
			   "CLOUD_RUN_TASK_ATTEMPT=2", NULL};
	gives(a, 0, 0, 1, "Cloud Run", "Cloud Run");
	const char *b[] = {"CLOUD_RUN_TASK_INDEX=1", NULL};
	refused(b, 0, "CLOUD_RUN_TASK_INDEX=1", NULL, "Cloud Run, no count");
}

static void sge(void)
{
	const char *a[] = {"SGE_TASK_ID=1", "SGE_TASK_FIRST=1",
			   "SGE_TASK_LAST=4", "SGE_TASK_STEPSIZE=1", NULL};
	gives(a, 0, 0, 4, "SGE", "SGE -t 1-4, the first task");
	const char *b[] = {"SGE_TASK_ID=4", "SGE_TASK_LAST=4", NULL};
	gives(b, 0, 3, 4, "SGE", "SGE counts from 1");
	const char *c[] = {"SGE_TASK_ID=undefined", "SGE_TASK_FIRST=undefined",
			   NULL};
	ge_shard s;
	ge_error err;
	is_int(GE_ENOTFOUND, from(c, 0, &s, &err),
	       "SGE: a job that is not an array has no shard");
	const char *d[] = {"SGE_TASK_ID=0", "SGE_TASK_LAST=4", NULL};
	refused(d, 0, "SGE_TASK_ID=0", NULL, "SGE: index 0 is not one");
}

static void lsf(void)
{
	const char *a[] = {"LSB_JOBINDEX=3", "LSB_JOBINDEX_END=8",
			   "LSB_JOBINDEX_STEP=1", NULL};
	gives(a, 0, 2, 8, "LSF", "LSF job[1-8]");
	const char *b[] = {"LSB_JOBINDEX=2", NULL};
	gives(b, 2, 1, 2, "LSF", "LSF, --shard-count");
	const char *c[] = {"LSB_JOBINDEX=0", NULL};
	ge_shard s;
	ge_error err;
	is_int(GE_ENOTFOUND, from(c, 0, &s, &err),
	       "LSF: index 0 is not an array task");
	const char *d[] = {"LSB_JOBINDEX=9", "LSB_JOBINDEX_END=8", NULL};
	refused(d, 0, "LSB_JOBINDEX=9", "indices count from 1",
		"LSF index past the end");
}

static void none_and_two(void)
{
	const char *a[] = {"SLURM_JOB_ID=7", "HOME=/root", NULL};
	ge_shard s;
	ge_error err;
	is_int(GE_ENOTFOUND, from(a, 0, &s, &err), "no engine: not found");
	const char *b[] = {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=2",
			   "JOB_COMPLETION_INDEX=1", NULL};
	refused(b, 0, "SLURM_ARRAY_TASK_ID=1", "JOB_COMPLETION_INDEX=1",
		"two engines at once");
	const char *const *names = ge_shard_engines();
	int n = 0;
	while (names[n])
		n++;
	is_int(7, n, "seven engines in the table");
}

static void hash(void)
{
	/* FNV-1a 64: the published values of "" and "a" */
	ok(ge_shard_hash("") == 0xcbf29ce484222325ull, "FNV-1a of \"\"");
	ok(ge_shard_hash("a") == 0xaf63dc4c8601ec8cull, "FNV-1a of \"a\"");
	ok(ge_shard_hash("foobar") == 0x85944171f73967e8ull,
	   "FNV-1a of \"foobar\"");
	is_int(0, ge_shard_of("anything", 1), "one shard holds everything");
	/* the high half decides: 0x85944171 % 7 */
	is_int((long)(0x85944171ul % 7), ge_shard_of("foobar", 7),
	       "the shard is the high 32 bits modulo the count");
	/* paths differing in one letter with the same low bits ('a' and
	 * 'q') fall apart: the low bits would put both in shard 9 */
	is_int(12, ge_shard_of("zoo/a.pb", 16), "zoo/a.pb in shard 12 of 16");
	is_int(2, ge_shard_of("zoo/q.pb", 16), "zoo/q.pb in shard 2 of 16");
	/* the shards of a list do not move when a model is added */
	char name[32];
	long before[64];
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof name, "zoo/m%02d.pb", i);
		before[i] = ge_shard_of(name, 4);
	}
	int used[4] = {0};
	for (int i = 0; i < 64; i++)
		used[before[i]]++;
	ok(used[0] && used[1] && used[2] && used[3],
	   "64 paths fill 4 shards (%d %d %d %d)", used[0], used[1], used[2],
	   used[3]);
}

int main(void)
{
	slurm();
	kubernetes();
	aws();
	gcp();
	cloudrun();
	sge();
	lsf();
	none_and_two();
	hash();
	return tap_done();
}
