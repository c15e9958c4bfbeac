/* exec/philox.c: Philox4x32-10 and TensorFlow's sampling (philox.h). */
#include "exec/philox.h"

#include <math.h>
#include <string.h>

#include "base/tensor.h"

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9,
       DT_BFLOAT16 = 14, DT_HALF = 19, DT_UINT32 = 22, DT_UINT64 = 23 };

/* The round constants of the paper: Weyl increments of the key and the
 * two multipliers. */
#define W32A 0x9E3779B9u
#define W32B 0xBB67AE85u
#define M4A 0xD2511F53u
#define M4B 0xCD9E8D57u

void ge_philox_block(const uint32_t ctr[4], const uint32_t key[2],
		     uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)M4A * c0, p1 = (uint64_t)M4B * c2;
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
		uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		c1 = (uint32_t)p1;
		c3 = (uint32_t)p0;
		c0 = n0;
		c2 = n2;
		k0 += W32A;
		k1 += W32B;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

void ge_philox_next(ge_philox *p, uint32_t out[4])
{
	ge_philox_block(p->ctr, p->key, out);
	if (++p->ctr[0] == 0 && ++p->ctr[1] == 0 && ++p->ctr[2] == 0)
		++p->ctr[3];
}

/* TensorFlow's skip: the low 64 bits take the count, a carry out of
 * word 1 goes on into words 2 and 3. */
void ge_philox_skip(ge_philox *p, uint64_t n)
{
	uint32_t lo = (uint32_t)n, hi = (uint32_t)(n >> 32);
	p->ctr[0] += lo;
	if (p->ctr[0] < lo)
		hi++;
	p->ctr[1] += hi;
	if (p->ctr[1] < hi && ++p->ctr[2] == 0)
		++p->ctr[3];
}

void ge_philox_seeded(ge_philox *p, uint64_t seed, uint64_t seed2)
{
	memset(p, 0, sizeof *p);
	p->key[0] = (uint32_t)seed;
	p->key[1] = (uint32_t)(seed >> 32);
	p->ctr[2] = (uint32_t)seed2;
	p->ctr[3] = (uint32_t)(seed2 >> 32);
}

void ge_philox_stateless(ge_philox *p, uint64_t s0, uint64_t s1)
{
	const uint32_t key[2] = {0x3ec8f720u, 0x02461e29u};
	const uint32_t ctr[4] = {(uint32_t)s0, (uint32_t)(s0 >> 32),
				 (uint32_t)s1, (uint32_t)(s1 >> 32)};
	uint32_t mix[4];
	ge_philox_block(ctr, key, mix);
	p->key[0] = mix[0];
	p->key[1] = mix[1];
	p->ctr[0] = p->ctr[1] = 0;
	p->ctr[2] = mix[2];
	p->ctr[3] = mix[3];
}

/* ---------------------------------------------------------------- values */

float ge_philox_float(uint32_t x)
{
	uint32_t v = (127u << 23) | (x & 0x7fffffu);
	float f;
	memcpy(&f, &v, sizeof f);
	return f - 1.0f;
}

double ge_philox_double(uint32_t x0, uint32_t x1)
{
	uint64_t v = (1023ull << 52) | ((uint64_t)(x0 & 0xfffffu) << 32) | x1;
	double d;
	memcpy(&d, &v, sizeof d);
	return d - 1.0;
}

static uint16_t half_uniform(uint32_t x)
{
	/* (1 + m/1024) - 1 is m/1024, exact in half */
	return ge_half_from_double((double)(x & 0x3ffu) / 1024.0);
}

static uint16_t bf16_uniform(uint32_t x)
{
	return ge_bf16_from_double((double)(x & 0x7fu) / 128.0);
}

void ge_philox_box_muller(uint32_t x0, uint32_t x1, float *f0, float *f1)
{
	float u1 = ge_philox_float(x0);
	if (u1 < 1.0e-7f)
		u1 = 1.0e-7f;
	/* 2 pi is a double: the product is rounded to float once */
	const float v1 = (float)(2.0f * M_PI * ge_philox_float(x1));
	const float u2 = sqrtf(-2.0f * logf(u1));
	float s, c;
	sincosf(v1, &s, &c);
	*f0 = s * u2;
	*f1 = c * u2;
}

void ge_philox_box_muller_d(uint32_t x0, uint32_t x1, uint32_t x2,
			    uint32_t x3, double *d0, double *d1)
{
	double u1 = ge_philox_double(x0, x1);
	if (u1 < 1.0e-7)
		u1 = 1.0e-7;
	const double v1 = 2 * M_PI * ge_philox_double(x2, x3);
	const double u2 = sqrt(-2.0 * log(u1));
	double s, c;
	sincos(v1, &s, &c);
	*d0 = s * u2;
	*d1 = c * u2;
}

/* ---------------------------------------------------------------- fills */

/* One group of fixed-draw outputs from one block, as doubles or int64s
 * (the caller narrows them); the group's size. */
typedef struct group {
	double d[4];
	int64_t i[4];
	uint16_t h[4];
} group;

static int fixed_group(ge_rand_dist dist, int dtype, const uint32_t w[4],
		       int64_t lo, uint64_t range, group *o)
{
	switch (dist) {
	case GE_RAND_UNIFORM:
		if (dtype == DT_DOUBLE) {
			o->d[0] = ge_philox_double(w[0], w[1]);
			o->d[1] = ge_philox_double(w[2], w[3]);
			return 2;
		}
		for (int j = 0; j < 4; j++) {
			o->d[j] = ge_philox_float(w[j]);
			if (dtype == DT_HALF)
				o->h[j] = half_uniform(w[j]);
			else if (dtype == DT_BFLOAT16)
				o->h[j] = bf16_uniform(w[j]);
		}
		return 4;
	case GE_RAND_NORMAL:
		if (dtype == DT_DOUBLE) {
			ge_philox_box_muller_d(w[0], w[1], w[2], w[3],
					       &o->d[0], &o->d[1]);
			return 2;
		}
		for (int j = 0; j < 4; j += 2) {
			float a, b;
			ge_philox_box_muller(w[j], w[j + 1], &a, &b);
			o->d[j] = a;
			o->d[j + 1] = b;
		}
		return 4;
	case GE_RAND_INT:
		if (dtype == DT_INT64) {
			for (int j = 0; j < 2; j++) {
				uint64_t bits = w[2 * j] |
						(uint64_t)w[2 * j + 1] << 32;
				o->i[j] = (int64_t)((uint64_t)lo +
						    bits % range);
			}
			return 2;
		}
		for (int j = 0; j < 4; j++)
			o->i[j] = (int32_t)(uint32_t)((uint32_t)lo +
						      w[j] % (uint32_t)range);
		return 4;
	case GE_RAND_FULL_INT:
		if (dtype == DT_INT64 || dtype == DT_UINT64) {
			o->i[0] = (int64_t)(w[0] | (uint64_t)w[1] << 32);
			o->i[1] = (int64_t)(w[2] | (uint64_t)w[3] << 32);
			return 2;
		}
		for (int j = 0; j < 4; j++)
			o->i[j] = (int64_t)w[j];
		return 4;
	default:
		return 0;
	}
}

/* The words of one generator handed out one at a time (TensorFlow's
 * single-sample adapter). */
typedef struct words {
	ge_philox g;
	uint32_t buf[4];
	int used;
} words;

static uint32_t next_word(words *w)
{
	if (w->used == 4) {
		ge_philox_next(&w->g, w->buf);
		w->used = 0;
	}
	return w->buf[w->used++];
}

/* A group of truncated normals: 4 (2 for double) kept draws. */
static int truncated_group(ge_philox g, int dtype, group *o)
{
	words w = {g, {0}, 4};
	int want = dtype == DT_DOUBLE ? 2 : 4, got = 0;
	while (got < want) {
		double v[2];
		if (dtype == DT_DOUBLE) {
			uint32_t x0 = next_word(&w), x1 = next_word(&w);
			uint32_t x2 = next_word(&w), x3 = next_word(&w);
			ge_philox_box_muller_d(x0, x1, x2, x3, &v[0], &v[1]);
		} else {
			uint32_t x0 = next_word(&w), x1 = next_word(&w);
			float a, b;
			ge_philox_box_muller(x0, x1, &a, &b);
			v[0] = a;
			v[1] = b;
		}
		for (int j = 0; j < 2 && got < want; j++)
			if (fabs(v[j]) < 2.0)
				o->d[got++] = v[j];
	}
	return want;
}

static void store(int dtype, ge_rand_dist dist, void *out, int64_t at,
		  const group *o, int j)
{
	switch (dtype) {
	case DT_FLOAT: ((float *)out)[at] = (float)o->d[j]; break;
	case DT_DOUBLE: ((double *)out)[at] = o->d[j]; break;
	case DT_HALF:
		((uint16_t *)out)[at] = dist == GE_RAND_UNIFORM ? o->h[j] :
					ge_half_from_double(o->d[j]);
		break;
	case DT_BFLOAT16:
		((uint16_t *)out)[at] = dist == GE_RAND_UNIFORM ? o->h[j] :
					ge_bf16_from_double(o->d[j]);
		break;
	case DT_INT32: ((int32_t *)out)[at] = (int32_t)o->i[j]; break;
	case DT_UINT32: ((uint32_t *)out)[at] = (uint32_t)o->i[j]; break;
	case DT_INT64: ((int64_t *)out)[at] = o->i[j]; break;
	case DT_UINT64: ((uint64_t *)out)[at] = (uint64_t)o->i[j]; break;
	}
}

int ge_philox_fill(ge_philox g, ge_rand_dist dist, int dtype, void *out,
		   int64_t n, int64_t lo, int64_t hi)
{
	int real = dtype == DT_FLOAT || dtype == DT_DOUBLE ||
		   dtype == DT_HALF || dtype == DT_BFLOAT16;
	int ok = dist == GE_RAND_INT ? (dtype == DT_INT32 ||
					dtype == DT_INT64) && lo < hi
		 : dist == GE_RAND_FULL_INT ? dtype == DT_INT32 ||
					      dtype == DT_INT64 ||
					      dtype == DT_UINT32 ||
					      dtype == DT_UINT64
		 : real;
	if (!ok)
		return -1;
	uint64_t range = (uint64_t)hi - (uint64_t)lo;
	int gsize = dtype == DT_DOUBLE || dtype == DT_INT64 ||
		    dtype == DT_UINT64 ? 2 : 4;
	group o;
	for (int64_t at = 0, grp = 0; at < n; grp++) {
		if (dist == GE_RAND_TRUNCATED) {
			/* each group starts 256 blocks per output further */
			ge_philox gg = g;
			ge_philox_skip(&gg, (uint64_t)grp * (uint64_t)gsize *
						    256 / 4);
			truncated_group(gg, dtype, &o);
		} else {
			uint32_t w[4];
			ge_philox_next(&g, w);
			fixed_group(dist, dtype, w, lo, range, &o);
		}
		for (int j = 0; j < gsize && at < n; j++, at++)
			store(dtype, dist, out, at, &o, j);
	}
	return 0;
}
