/*
 * exec/verify.h: running a model on the command line's inputs, and
 * checking one model against another by running both.
 *
 * Feeds (ge_xfeeds_make): each NAME=VALUE of the command line fills the
 * input NAME of the model's interface (exec/iface.h; VALUE as
 * exec/npy.h parses it); every input not named gets seeded data of its
 * own shape, unknown dims `dim` (default 1), but for an input with a
 * default (a PlaceholderWithDefault, iface.h), which is not fed.  A NAME
 * that is no input of the model is an error naming the inputs there
 * are.
 *
 * Verify (ge_xverify): B's variables are read from B's checkpoint, or,
 * when B has none of its own, from A's (a rewrite keeps their keys).
 * The same feeds into A and B (B's inputs paired
 * with A's by key, by tensor name, or through a map "a=b"); an input of
 * A left to its default takes B's default too, or, where B's input has
 * none, the value of A's default (A's run fetches it first); the outputs
 * paired the same way, and per pair the figures of ge_xcompare of B's
 * tensor against A's: A is the reference, so that `verify ORIGINAL
 * REWRITTEN` measures the rewrite against the original (relative
 * errors are relative to A's values).  With per_op,
 * every tensor both runs produce under the same name is compared too,
 * and the first one in B's execution order outside tolerance is named:
 * where a rewrite started to change the numbers.  Every tensor of A is
 * then kept until B has run (raise --max-memory for a large model).
 */
#ifndef GE_EXEC_VERIFY_H
#define GE_EXEC_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"
#include "exec/compare.h"
#include "exec/exec.h"
#include "exec/iface.h"
#include "exec/npy.h"

/* ---------------------------------------------------------------- feeds */

typedef struct ge_xfeeds {
	ge_xfeed *v;  /* by input of the interface: names point into it;
			 tensors owned, NULL for an input left to its
			 default */
	size_t n;
	char **given; /* which were given on the command line (keys) */
	size_t ngiven;
} ge_xfeeds;

/* Makes the feeds of every input of f: specs are "NAME=VALUE" (a
 * tensor already made for an input comes in `made`, for Lua; may be
 * NULL), the others seeded with seed.  dim: unknown dims (0: 1). */
typedef struct ge_xmade {
	const char *name;
	ge_xt *t; /* borrowed; checked against the input */
} ge_xmade;
int ge_xfeeds_make(const ge_xiface *f, const char *const *specs,
		   size_t nspecs, const ge_xmade *made, size_t nmade,
		   uint64_t seed, int64_t dim, ge_xbudget *b, ge_xfeeds *out,
		   ge_error *err);
void ge_xfeeds_free(ge_xfeeds *fd);
/* The feeds of fd that hold a tensor, into v (room for fd->n); returns
 * how many: what a session run is given. */
size_t ge_xfeeds_list(const ge_xfeeds *fd, ge_xfeed *v);
/* Whether t fits port p's dtype and static shape; errors name it. */
int ge_xport_check(const ge_xport *p, const ge_xt *t, ge_error *err);

/* Runs g on feeds and fetches the tensors named (out[i] owned).  The
 * run is charged to o->budget, or else to b, which must outlive the
 * outputs (they are charged to it until freed). */
int ge_xrun_model(ge_graph *g, const ge_xopts *o, ge_xbudget *b,
		  const ge_xfeeds *fd, const char *const *fetch,
		  size_t nfetch, ge_xt **out, uint64_t *peak, ge_error *err);

/* ---------------------------------------------------------------- verify */

typedef struct ge_xverify_opts {
	const char *signature_a, *signature_b;
	const char *const *inputs;  /* "NAME=VALUE", as for eval */
	size_t ninputs;
	const ge_xmade *made;       /* tensors for inputs, from Lua */
	size_t nmade;
	const char *const *outputs; /* outputs of A to compare (NULL: all) */
	size_t noutputs;
	const char *const *map;     /* "a=b": A's a is B's b */
	size_t nmap;
	uint64_t seed;
	int64_t dim;
	double atol, rtol;
	int per_op;
	int64_t max_iterations;
	int per_op_each;            /* with per_op: keep every tensor's
				       figures (result's each) */
} ge_xverify_opts;
#define GE_XVERIFY_OPTS_INIT {.atol = 1e-5, .rtol = 1e-5}

typedef struct ge_xverify_pair {
	char *key_a, *key_b;       /* the output's key in A and in B */
	char *tensor_a, *tensor_b;
	char desc_a[96], desc_b[96]; /* "float32[1,10]" */
	ge_xcmp cmp;
	int ok;
	char note[160];            /* why they could not be compared: "shapes
				      differ: float32[2] against float32[3]" */
	char selected_by[48];      /* the type of a selection op A computes
				      the output from (NonMaxSuppressionV5,
				      TopKV2, ArgMax...), or "": which
				      elements it holds follows comparisons,
				      and a near tie that a small change
				      turns picks other elements */
} ge_xverify_pair;

typedef struct ge_xverify_result {
	ge_xverify_pair *pairs;
	size_t npairs;
	int ok;                 /* every pair within tolerance */
	double max_abs;         /* the largest over the pairs */
	double max_rel;
	uint64_t peak_a, peak_b;
	/* per_op */
	int per_op;
	size_t op_compared;     /* tensors compared */
	size_t op_outside;      /* of which outside tolerance */
	char *first_tensor;     /* the first outside, in B's order, or NULL */
	char *first_op;
	char *first_type;       /* its op type in B, or NULL */
	ge_xcmp first_cmp;
	/* per_op_each: every tensor compared, in B's execution order */
	char **each_tensor;
	ge_xcmp *each_cmp;
	size_t neach;
	/* outside tolerance with random ops of B that have no seed and no
	 * op of their name and type in A: why B drew other numbers (one
	 * line, "" when there are none) */
	char note[400];
	/* B has variables and no checkpoint of its own (a rewrite saved
	 * away from the bundle beside its .meta): they were read from A's */
	int b_vars_from_a;
} ge_xverify_result;

/* GE_OK with r filled (r->ok says whether within tolerance), or an
 * error (a run failed, an output of A that B does not have). */
int ge_xverify(ge_graph *a, ge_graph *b, const ge_xverify_opts *o,
	       ge_xverify_result *r, ge_error *err);
void ge_xverify_result_free(ge_xverify_result *r);

/* The result as a JSON object (for --report), appended to out: models,
 * tolerances, and per output its figures. */
void ge_xverify_json(const ge_xverify_result *r, const char *name_a,
		     const char *name_b, ge_buf *out);

#endif
