/*
 * exec/philox.h: TensorFlow's random numbers.
 *
 * The generator is Philox4x32-10 (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011), with TensorFlow's conventions:
 * a 128-bit counter (four 32-bit words, word 0 least significant) and a
 * 64-bit key; each block of output is the ten-round bijection of the
 * counter under the key, after which the counter advances by one.
 *
 * Seeds as TensorFlow's kernels take them:
 *   stateful ops (RandomUniform, RandomStandardNormal, TruncatedNormal,
 *   RandomUniformInt) with attrs seed and seed2: key = seed,
 *   counter words 2..3 = seed2; each run reserves 256 blocks per output
 *   element, so the next run starts that far on;
 *   stateless ops with a seed pair (s0, s1): the pair is scrambled by
 *   one block under a fixed key into a key and counter.
 *
 * Sampling as TensorFlow's distributions do it, so that a seed gives
 * TensorFlow's numbers bit for bit (float32 arithmetic in float32, the
 * C library's logf and sincosf as TensorFlow's Linux build calls them):
 *   uniform float   23 random mantissa bits under exponent 0, minus 1;
 *   uniform double  52 bits from two words; half 10 bits, bfloat16 7;
 *   normal          Box-Muller on pairs of uniforms (the first clamped
 *                   to 1e-7), four floats or two doubles per block;
 *   truncated       normal pairs drawn one word at a time, kept when
 *                   |x| < 2; each group of outputs starts at its own
 *                   offset (256 blocks per output), so a group's draws
 *                   never depend on another's;
 *   uniform int     lo + (word mod (hi - lo)), one word per int32, two
 *                   per int64; the full range: the words themselves.
 * Outputs are made in groups (four per block for 32-bit kinds, two for
 * 64-bit); a partial last group takes the first values of a full one.
 */
#ifndef GE_EXEC_PHILOX_H
#define GE_EXEC_PHILOX_H

#include <stdint.h>

typedef struct ge_philox {
	uint32_t ctr[4];
	uint32_t key[2];
} ge_philox;

/* The ten-round bijection of one counter block under key. */
void ge_philox_block(const uint32_t ctr[4], const uint32_t key[2],
		     uint32_t out[4]);
/* The next block of p; advances the counter by one. */
void ge_philox_next(ge_philox *p, uint32_t out[4]);
/* Advances the counter by n blocks (TensorFlow's carry rule). */
void ge_philox_skip(ge_philox *p, uint64_t n);

/* A stateful op's generator from its seed and seed2. */
void ge_philox_seeded(ge_philox *p, uint64_t seed, uint64_t seed2);
/* A stateless op's generator from its seed pair. */
void ge_philox_stateless(ge_philox *p, uint64_t s0, uint64_t s1);

/* Words to values. */
float ge_philox_float(uint32_t x);
double ge_philox_double(uint32_t x0, uint32_t x1);
void ge_philox_box_muller(uint32_t x0, uint32_t x1, float *f0, float *f1);
void ge_philox_box_muller_d(uint32_t x0, uint32_t x1, uint32_t x2,
			    uint32_t x3, double *d0, double *d1);

/* What a fill draws. */
typedef enum {
	GE_RAND_UNIFORM,   /* [0, 1) */
	GE_RAND_NORMAL,    /* standard normal */
	GE_RAND_TRUNCATED, /* standard normal within (-2, 2) */
	GE_RAND_INT,       /* [lo, hi) */
	GE_RAND_FULL_INT   /* every value of the integer type */
} ge_rand_dist;

/* Fills n elements of out, TensorFlow DataType dtype (float32, float64,
 * float16 or bfloat16 as 16-bit patterns; int32 or int64 for
 * GE_RAND_INT, with lo < hi; int32, uint32, int64 or uint64 for
 * GE_RAND_FULL_INT, a word or two words each), from generator g as it
 * stands: g itself is not advanced.  Returns 0, or -1 for a dtype the distribution lacks. */
int ge_philox_fill(ge_philox g, ge_rand_dist dist, int dtype, void *out,
		   int64_t n, int64_t lo, int64_t hi);

#endif
