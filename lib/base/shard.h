/*
 * shard.h: which share of a batch this process runs (shard.c).
 *
 * A batch split into N shards gives each model to exactly one of them,
 * by a hash of the model's path relative to its input directory: adding
 * or removing a model moves no other model between shards, and every
 * machine and version computes the same split.
 *
 * The shard's index and count come from `--shard I/N`, or from the
 * environment a cluster engine gives each task of an array job (Slurm,
 * Kubernetes Indexed Jobs, AWS Batch, Google Cloud Batch, Cloud Run
 * jobs, SGE, LSF): the table of those variables is in shard.c, and
 * nowhere else.
 */
#ifndef GE_SHARD_H
#define GE_SHARD_H

#include <stdint.h>

#include "base/base.h"

/* Reads one variable (getenv, or a table in a test); NULL when unset. */
typedef const char *(*ge_getenv_fn)(const char *name, void *ud);

typedef struct ge_shard {
	long index;         /* 0-based, < count */
	long count;         /* >= 1 */
	const char *engine; /* "Slurm", "Kubernetes", ...: a static string */
	char vars[512];     /* the variables read, "NAME=value" by spaces */
} ge_shard;

/* The variable any engine may take its count from when it gives none
 * (Kubernetes, or a shorter list than the engine's own). */
#define GE_SHARD_COUNT_VAR "GEREWRITE_SHARD_COUNT"

/*
 * The shard of this task from the engine's variables read through get.
 * count is the count given on the command line (--shard-count), 0 when
 * none.  Returns GE_OK with *s filled; GE_ENOTFOUND when no engine's
 * index variable is set (not an array task: SGE's "undefined" and LSF's
 * index 0 count as unset); GE_EINVAL when the variables disagree (two
 * engines at once, an index past the count, a count that is missing or
 * differs from the range, a value that is not a number), with err naming
 * the variables and their values.
 */
int ge_shard_from_env(ge_getenv_fn get, void *ud, long count, ge_shard *s,
		      ge_error *err);

/* The names of the engines, in the table's order, NULL-terminated. */
const char *const *ge_shard_engines(void);

/* FNV-1a, 64 bits, of the bytes of a path (no terminator). */
uint64_t ge_shard_hash(const char *path);
/* The 0-based shard of a path among count: the high 32 bits of
 * ge_shard_hash(path), modulo count. */
long ge_shard_of(const char *path, long count);

#endif
