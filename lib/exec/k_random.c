/*
 * exec/k_random.c: TensorFlow's random ops over its Philox generator
 * (exec/philox.h), so that a seed gives TensorFlow's numbers.
 *
 * Stateful ops (RandomUniform, RandomStandardNormal, TruncatedNormal,
 * RandomUniformInt) keep their generator in the op's slot of the session
 * (ge_xrt_slot): made from the op's seed and seed2 on its first run, it
 * moves on 256 blocks per output element each run, as TensorFlow's
 * kernel reserves them, so the second run of a session gives
 * TensorFlow's second numbers.  An op whose seed and seed2 are both 0
 * (no seed anywhere in the Python program) draws in TensorFlow from a
 * seed nobody can know; here it takes the session's graph seed (--seed)
 * as seed and a hash of the op's name as seed2, so that runs repeat and
 * two models with the same op names (a model and its rewrite) draw the
 * same numbers.  Without a session (a kernel run alone) every run is a
 * first run.
 *
 * Stateless ops (StatelessRandomUniform, StatelessRandomNormal,
 * StatelessTruncatedNormal, StatelessRandomUniformInt) draw from their
 * seed input alone; their V2 forms (and StatelessRandomUniformFullIntV2)
 * from a key and counter that StatelessRandomGetKeyCounter(Alg) made of
 * a seed, with the Philox algorithm (1, or 3 "auto", which is Philox on
 * a CPU).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kstate.h"
#include "exec/philox.h"

typedef struct krng {
	ge_xobj o;
	ge_philox g;
} krng;

static void rng_destroy(ge_xobj *o)
{
	free(o);
}

/* The output of shape input 0, of dtype dt. */
static ge_xt *shaped_out(ge_kctx *k, int dt)
{
	int64_t dims[GE_SHAPE_MAXRANK];
	if (ge_k_need(k, 1))
		return NULL;
	if (k->in[0]->rank != 1) {
		ge_k_fail(k, "the shape must be a vector");
		return NULL;
	}
	int r = ge_k_ints(k, 0, dims, GE_SHAPE_MAXRANK);
	if (r < 0)
		return NULL;
	for (int i = 0; i < r; i++)
		if (dims[i] < 0) {
			ge_k_fail(k, "dimension %d of the shape is %" PRId64,
				  i, dims[i]);
			return NULL;
		}
	ge_xt *t = ge_k_out(k, 0, dt, r, dims);
	if (t && ge_k_work(k, (uint64_t)t->n * 8))
		return NULL;
	return t;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The generator for this run of a stateful op, the op's own moved on by
 * n outputs' worth. */
static int stateful_gen(ge_kctx *k, int64_t n, ge_philox *g)
{
	uint64_t seed = (uint64_t)ge_k_attr_int(k, "seed", 0);
	uint64_t seed2 = (uint64_t)ge_k_attr_int(k, "seed2", 0);
	if (!seed && !seed2) {
		seed = k->rt ? ge_xrt_seed(k->rt) : 0;
		seed2 = name_hash(k->name ? k->name : "");
	}
	if (!k->rt) {
		ge_philox_seeded(g, seed, seed2);
		return GE_OK;
	}
	ge_xobj **slot = ge_xrt_slot(k->rt, k->g, k->id);
	if (!slot)
		return ge_k_fail(k, "no state slot");
	krng *r = (krng *)*slot;
	if (r && r->o.kind != GE_XOBJ_RNG)
		return ge_k_fail(k, "its state slot holds something else");
	if (!r) {
		r = calloc(1, sizeof *r);
		if (!r)
			return ge_k_fail(k, "out of memory");
		r->o.refs = 1;
		r->o.kind = GE_XOBJ_RNG;
		r->o.destroy = rng_destroy;
		ge_philox_seeded(&r->g, seed, seed2);
		*slot = &r->o;
	}
	*g = r->g;
	ge_philox_skip(&r->g, (uint64_t)n * 256);
	return GE_OK;
}

/* The generator of a stateless op's seed input i (int32 or int64 [2]). */
static int stateless_gen(ge_kctx *k, int i, ge_philox *g)
{
	int64_t s[2];
	if (ge_k_need(k, i + 1))
		return GE_EINVAL;
	if (k->in[i]->rank != 1 || ge_k_ints(k, i, s, 2) != 2)
		return ge_k_fail(k, "the seed must be a vector of 2 integers");
	ge_philox_stateless(g, (uint64_t)s[0], (uint64_t)s[1]);
	return GE_OK;
}

/* The generator of a V2 stateless op: key (uint64 [1]), counter (uint64
 * [2]) and alg inputs from i. */
static int v2_gen(ge_kctx *k, int i, ge_philox *g)
{
	if (ge_k_need(k, i + 3))
		return GE_EINVAL;
	const ge_xt *key = k->in[i], *ctr = k->in[i + 1], *alg = k->in[i + 2];
	if (key->dtype != DT_UINT64 || key->n < 1 || ctr->dtype != DT_UINT64 ||
	    ctr->n < 2 || alg->dtype != DT_INT32 || alg->n != 1)
		return ge_k_fail(k, "needs a uint64 key [1], a uint64 counter "
				 "[2] and an int32 alg");
	int32_t a = ((const int32_t *)alg->data)[0];
	if (a != 1 && a != 3)
		return ge_k_fail(k, "random algorithm %d: only Philox (1, or 3 "
				 "on a CPU) is available", (int)a);
	uint64_t k0 = ((const uint64_t *)key->data)[0];
	const uint64_t *c = ctr->data;
	g->key[0] = (uint32_t)k0;
	g->key[1] = (uint32_t)(k0 >> 32);
	g->ctr[0] = (uint32_t)c[0];
	g->ctr[1] = (uint32_t)(c[0] >> 32);
	g->ctr[2] = (uint32_t)c[1];
	g->ctr[3] = (uint32_t)(c[1] >> 32);
	return GE_OK;
}

/* StatelessRandomGetKeyCounter(seed) -> key, counter; ...Alg adds the
 * algorithm; StatelessRandomGetAlg() gives it alone. */
static int k_key_counter(ge_kctx *k)
{
	ge_philox g;
	int64_t one = 1, two = 2;
	if (!strcmp(k->type, "StatelessRandomGetAlg")) {
		ge_xt *a = ge_k_out(k, 0, DT_INT32, 0, NULL);
		if (!a)
			return GE_EINVAL;
		((int32_t *)a->data)[0] = 1;
		return GE_OK;
	}
	if (stateless_gen(k, 0, &g))
		return GE_EINVAL;
	ge_xt *key = ge_k_out(k, 0, DT_UINT64, 1, &one);
	ge_xt *ctr = key ? ge_k_out(k, 1, DT_UINT64, 1, &two) : NULL;
	if (!ctr)
		return GE_EINVAL;
	((uint64_t *)key->data)[0] = g.key[0] | (uint64_t)g.key[1] << 32;
	((uint64_t *)ctr->data)[0] = g.ctr[0] | (uint64_t)g.ctr[1] << 32;
	((uint64_t *)ctr->data)[1] = g.ctr[2] | (uint64_t)g.ctr[3] << 32;
	if (k->nout > 2) {
		ge_xt *a = ge_k_out(k, 2, DT_INT32, 0, NULL);
		if (!a)
			return GE_EINVAL;
		((int32_t *)a->data)[0] = 1;
	}
	return GE_OK;
}

static ge_rand_dist dist_of(const char *type)
{
	if (strstr(type, "FullInt"))
		return GE_RAND_FULL_INT;
	if (strstr(type, "Normal"))
		return strstr(type, "Truncated") ? GE_RAND_TRUNCATED
						 : GE_RAND_NORMAL;
	return strstr(type, "Int") ? GE_RAND_INT : GE_RAND_UNIFORM;
}

/* The bounds of a uniform int op: inputs at and at + 1 (scalars of
 * dt). */
static int int_bounds(ge_kctx *k, int at, int dt, int64_t *lo, int64_t *hi)
{
	if (ge_k_need(k, at + 2))
		return GE_EINVAL;
	for (int i = at; i < at + 2; i++)
		if (k->in[i]->dtype != dt || k->in[i]->n != 1)
			return ge_k_fail(k, "input %d must be a %s scalar", i,
					 kdt(dt));
	*lo = ge_xt_get_int64(k->in[at], 0);
	*hi = ge_xt_get_int64(k->in[at + 1], 0);
	if (*lo >= *hi)
		return ge_k_fail(k, "needs minval < maxval, has %" PRId64
				 " and %" PRId64, *lo, *hi);
	return GE_OK;
}

static int k_random(ge_kctx *k)
{
	ge_rand_dist dist = dist_of(k->type);
	int stateless = !strncmp(k->type, "Stateless", 9);
	size_t tl = strlen(k->type);
	int v2 = tl > 2 && !strcmp(k->type + tl - 2, "V2");
	int dt = ge_k_attr_type(k, dist == GE_RAND_INT && !stateless
					   ? "Tout" : "dtype", DT_FLOAT);
	int64_t lo = 0, hi = 0;
	ge_philox g;
	ge_xt *t = shaped_out(k, dt);
	if (!t)
		return GE_EINVAL;
	if (t->n == 0)
		return GE_OK;
	if (dist == GE_RAND_INT &&
	    int_bounds(k, v2 ? 4 : stateless ? 2 : 1, dt, &lo, &hi))
		return GE_EINVAL;
	if (v2 ? v2_gen(k, 1, &g)
	       : stateless ? stateless_gen(k, 1, &g)
			   : stateful_gen(k, t->n, &g))
		return GE_EINVAL;
	if (ge_philox_fill(g, dist, dt, t->data, t->n, lo, hi))
		return ge_k_fail(k, "draws no %s", kdt(dt));
	return GE_OK;
}

const ge_kdef ge_kernels_random[] = {
	{"RandomStandardNormal", k_random, GE_K_STATEFUL},
	{"RandomUniform", k_random, GE_K_STATEFUL},
	{"RandomUniformInt", k_random, GE_K_STATEFUL},
	{"StatelessRandomGetAlg", k_key_counter, 0},
	{"StatelessRandomGetKeyCounter", k_key_counter, 0},
	{"StatelessRandomGetKeyCounterAlg", k_key_counter, 0},
	{"StatelessRandomNormal", k_random, 0},
	{"StatelessRandomNormalV2", k_random, 0},
	{"StatelessRandomUniform", k_random, 0},
	{"StatelessRandomUniformFullIntV2", k_random, 0},
	{"StatelessRandomUniformInt", k_random, 0},
	{"StatelessRandomUniformIntV2", k_random, 0},
	{"StatelessRandomUniformV2", k_random, 0},
	{"StatelessTruncatedNormal", k_random, 0},
	{"StatelessTruncatedNormalV2", k_random, 0},
	{"TruncatedNormal", k_random, GE_K_STATEFUL},
	{NULL, NULL, 0},
};
