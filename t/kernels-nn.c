/*
 * kernels-nn: the heavy kernels (exec/k_matmul.c, k_conv.c, k_pool.c,
 * k_image.c) against references computed here in double with plain
 * loops, on small random shapes: transposes and broadcast batches,
 * strides, dilations, SAME/VALID/EXPLICIT padding, NCHW, batch > 1, the
 * fused epilogues; values worked out by hand for the resizes, non-max
 * suppression and the block rearrangements; and refusals of bad inputs,
 * each naming the op.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel.h"
#include "exec/xtensor.h"
#include "tap.h"
#include "testutil.h"

enum { F32 = 1, F64 = 2, I32 = 3, I64 = 9 };

static ge_xbudget budget;

/* ---------------------------------------------------------------- tensors */

static uint64_t seed = 12345;
static double urand(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
}

static ge_xt *mk(int dt, int rank, const int64_t *dims)
{
	ge_error err;
	ge_xt *t = ge_xt_new(dt, rank, dims, &budget, "test", &err);
	if (!t) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return t;
}

/* A float32 tensor of random values in [-1, 1]. */
static ge_xt *rnd(int rank, ...)
{
	int64_t d[8];
	va_list ap;
	va_start(ap, rank);
	for (int i = 0; i < rank; i++)
		d[i] = va_arg(ap, int);
	va_end(ap);
	ge_xt *t = mk(F32, rank, d);
	for (int64_t i = 0; i < t->n; i++)
		((float *)t->data)[i] = (float)urand();
	return t;
}

/* A float32 or int32 tensor of given values. */
static ge_xt *vals(int dt, int rank, const int64_t *dims, const double *v)
{
	ge_xt *t = mk(dt, rank, dims);
	for (int64_t i = 0; i < t->n; i++)
		if (dt == F32)
			((float *)t->data)[i] = (float)v[i];
		else if (dt == F64)
			((double *)t->data)[i] = v[i];
		else if (dt == I32)
			((int32_t *)t->data)[i] = (int32_t)v[i];
		else
			((int64_t *)t->data)[i] = (int64_t)v[i];
	return t;
}

static ge_xt *ivec(int n, ...)
{
	int64_t d = n;
	ge_xt *t = mk(I32, 1, &d);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		((int32_t *)t->data)[i] = va_arg(ap, int);
	va_end(ap);
	return t;
}

static ge_xt *fscalar(double v)
{
	ge_xt *t = mk(F32, 0, NULL);
	*(float *)t->data = (float)v;
	return t;
}

static ge_xt *iscalar(int v)
{
	ge_xt *t = mk(I32, 0, NULL);
	*(int32_t *)t->data = v;
	return t;
}

static float F(const ge_xt *t, int64_t i) { return ((float *)t->data)[i]; }

/* ---------------------------------------------------------------- running */

static char errmsg[1024];

/* Runs op `type` with attrs (NodeDef attr text) on in[0..nin), which it
 * releases; out[0..nout) get the outputs.  The rc, with errmsg set. */
static int run(const char *type, const char *attrs, ge_xt **in, int nin,
	       ge_xt **out, int nout)
{
	char txt[4096];
	ge_error err = {0};
	snprintf(txt, sizeof txt, "node { name: \"op\" op: \"%s\" %s }", type,
		 attrs);
	ge_graph *g = parse(txt);
	const ge_kdef *d = ge_kernel_find(type);
	int rc;
	errmsg[0] = 0;
	for (int i = 0; i < nout; i++)
		out[i] = NULL;
	if (!d) {
		snprintf(errmsg, sizeof errmsg, "no kernel for %s", type);
		rc = GE_EINVAL;
	} else {
		ge_kctx k = {g, OP(g, "op"), type, "op", in, nin, out, nout,
			     &budget, NULL, &err};
		rc = d->fn(&k);
		if (rc)
			snprintf(errmsg, sizeof errmsg, "%s", err.msg);
		for (int i = 0; rc && i < nout; i++)
			if (out[i]) {
				snprintf(errmsg, sizeof errmsg,
					 "failed but left output %d set", i);
				ge_xt_unref(out[i]);
				out[i] = NULL;
			}
		for (int i = 0; !rc && i < nout; i++)
			if (!out[i]) {
				snprintf(errmsg, sizeof errmsg,
					 "output %d not set", i);
				rc = GE_EINVAL;
			}
	}
	for (int i = 0; i < nin; i++)
		ge_xt_unref(in[i]);
	ge_graph_free(g);
	return rc;
}

/* Runs a one-output op; NULL on failure (errmsg says why). */
static ge_xt *run1(const char *type, const char *attrs, ge_xt **in, int nin)
{
	ge_xt *o;
	return run(type, attrs, in, nin, &o, 1) ? NULL : o;
}

/* Whether the op is refused with a message naming it and containing
 * `want`. */
static void refused(const char *type, const char *attrs, ge_xt **in,
		    int nin, int nout, const char *want, const char *what)
{
	ge_xt *o[8];
	char pre[64];
	int rc = run(type, attrs, in, nin, o, nout);
	snprintf(pre, sizeof pre, "op (%s): ", type);
	ok(rc != GE_OK && strstr(errmsg, pre) == errmsg &&
	   strstr(errmsg, want), "%s refused: %s", what, errmsg);
}

/* attr text helpers (static rings) */
static char *ring(void)
{
	static char bufs[16][512];
	static int turn;
	return bufs[turn++ & 15];
}

static const char *A_S(const char *name, const char *v)
{
	char *b = ring();
	snprintf(b, 512, "attr { key: \"%s\" value { s: \"%s\" } } ", name, v);
	return b;
}

static const char *A_B(const char *name, int v)
{
	char *b = ring();
	snprintf(b, 512, "attr { key: \"%s\" value { b: %s } } ", name,
		 v ? "true" : "false");
	return b;
}

static const char *A_F(const char *name, double v)
{
	char *b = ring();
	snprintf(b, 512, "attr { key: \"%s\" value { f: %.9g } } ", name, v);
	return b;
}

static const char *A_I(const char *name, long long v)
{
	char *b = ring();
	snprintf(b, 512, "attr { key: \"%s\" value { i: %lld } } ", name, v);
	return b;
}

/* A list(int) attr from n values. */
static const char *A_L(const char *name, int n, ...)
{
	char *b = ring();
	int len = snprintf(b, 512, "attr { key: \"%s\" value { list { ", name);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		len += snprintf(b + len, 512 - len, "i: %d ", va_arg(ap, int));
	va_end(ap);
	snprintf(b + len, 512 - len, "} } } ");
	return b;
}

/* fused_ops from a space-separated list, num_args. */
static const char *A_FUSED(const char *ops, int nargs)
{
	char *b = ring(), copy[128];
	int len = snprintf(b, 512, "attr { key: \"fused_ops\" value { list { ");
	snprintf(copy, sizeof copy, "%s", ops);
	for (char *s = strtok(copy, " "); s; s = strtok(NULL, " "))
		len += snprintf(b + len, 512 - len, "s: \"%s\" ", s);
	snprintf(b + len, 512 - len, "} } } attr { key: \"num_args\" value { "
		 "i: %d } } ", nargs);
	return b;
}

static char *cat(int n, ...)
{
	char *b = ring();
	va_list ap;
	b[0] = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		strncat(b, va_arg(ap, const char *), 511 - strlen(b));
	va_end(ap);
	return b;
}

/* Max |got - want| / (1 + |want|) over n elements. */
static double maxerr(const ge_xt *got, const double *want, int64_t n)
{
	double m = 0;
	if (!got || got->n != n)
		return INFINITY;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs(ge_xt_get_double(got, i) - want[i]) /
			   (1 + fabs(want[i]));
		if (!(e <= m))
			m = e;
	}
	return m;
}

static int dims_are(const ge_xt *t, int rank, ...)
{
	va_list ap;
	int same = t && t->rank == rank;
	va_start(ap, rank);
	for (int i = 0; i < rank; i++)
		if (va_arg(ap, int) != (t ? t->dims[i] : -1))
			same = 0;
	va_end(ap);
	return same;
}

#define TOL 2e-5

/* ---------------------------------------------------------------- matmul */

/* a [.., m, k] (ta: [.., k, m]) times b: the reference of one product at
 * matrix offsets ao and bo. */
static void ref_mm(const ge_xt *a, const ge_xt *b, int64_t ao, int64_t bo,
		   int ta, int tb, int64_t m, int64_t n, int64_t kk,
		   double *out)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t p = 0; p < kk; p++)
				s += ge_xt_get_double(a, ao + (ta ? p * m + i
								  : i * kk + p)) *
				     ge_xt_get_double(b, bo + (tb ? j * kk + p
								  : p * n + j));
			out[i * n + j] = s;
		}
}

static void test_matmul(void)
{
	double want[64];
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			ge_xt *a = ta ? rnd(2, 5, 3) : rnd(2, 3, 5);
			ge_xt *b = tb ? rnd(2, 4, 5) : rnd(2, 5, 4);
			ref_mm(a, b, 0, 0, ta, tb, 3, 4, 5, want);
			ge_xt *in[2] = {a, ge_xt_ref(b)};
			ge_xt_ref(a);
			ge_xt *o = run1("MatMul", cat(2, A_B("transpose_a", ta),
						      A_B("transpose_b", tb)),
					in, 2);
			ok(dims_are(o, 2, 3, 4) && maxerr(o, want, 12) < TOL,
			   "MatMul transpose_a=%d transpose_b=%d", ta, tb);
			ge_xt_unref(o);
			ge_xt_unref(a);
			ge_xt_unref(b);
		}
	int64_t d[2] = {2, 2};
	double av[4] = {1, 2, 3, 4}, bv[4] = {5, 6, 7, 8};
	ge_xt *in[2] = {vals(F64, 2, d, av), vals(F64, 2, d, bv)};
	ge_xt *o = run1("MatMul", "", in, 2);
	ok(o && o->dtype == F64 && ge_xt_get_double(o, 0) == 19 &&
	   ge_xt_get_double(o, 3) == 50, "MatMul float64");
	ge_xt_unref(o);
	in[0] = vals(I32, 2, d, av), in[1] = vals(I32, 2, d, bv);
	o = run1("MatMul", "", in, 2);
	ok(o && o->dtype == I32 && ge_xt_get_int64(o, 1) == 22 &&
	   ge_xt_get_int64(o, 2) == 43, "MatMul int32");
	ge_xt_unref(o);
	in[0] = rnd(2, 3, 5), in[1] = rnd(2, 4, 5);
	refused("MatMul", "", in, 2, 1, "inner dimensions differ",
		"MatMul of [3,5] by [4,5]");
	in[0] = rnd(3, 1, 3, 5), in[1] = rnd(2, 5, 4);
	refused("MatMul", "", in, 2, 1, "2-D", "MatMul of a 3-D a");
	in[0] = rnd(2, 3, 5), in[1] = vals(F64, 2, d, bv);
	refused("MatMul", "", in, 2, 1, "one dtype", "MatMul float32 by float64");
	in[0] = rnd(2, 3, 5);
	refused("MatMul", "", in, 1, 1, "needs 2 inputs", "MatMul of one input");
}

static void test_batch_matmul(void)
{
	static double want[2 * 3 * 3 * 2];
	for (int adj = 0; adj < 4; adj++) {
		int ax = adj & 1, ay = adj >> 1;
		/* x [2,1,3,4] (adj: [2,1,4,3]), y [3,4,2] (adj: [3,2,4]) */
		ge_xt *x = ax ? rnd(4, 2, 1, 4, 3) : rnd(4, 2, 1, 3, 4);
		ge_xt *y = ay ? rnd(3, 3, 2, 4) : rnd(3, 3, 4, 2);
		for (int b0 = 0; b0 < 2; b0++)
			for (int b1 = 0; b1 < 3; b1++)
				ref_mm(x, y, b0 * 12, b1 * 8, ax, ay, 3, 2, 4,
				       want + (b0 * 3 + b1) * 6);
		ge_xt *in[2] = {ge_xt_ref(x), ge_xt_ref(y)};
		ge_xt *o = run1("BatchMatMulV2", cat(2, A_B("adj_x", ax),
						     A_B("adj_y", ay)), in, 2);
		ok(dims_are(o, 4, 2, 3, 3, 2) && maxerr(o, want, 36) < TOL,
		   "BatchMatMulV2 broadcasts [2,1] with [3], adj_x=%d "
		   "adj_y=%d %s", ax, ay, o ? "" : errmsg);
		ge_xt_unref(o);
		ge_xt_unref(x);
		ge_xt_unref(y);
	}
	ge_xt *x = rnd(3, 2, 3, 4), *y = rnd(3, 2, 4, 5);
	double w[2 * 15];
	ref_mm(x, y, 0, 0, 0, 0, 3, 5, 4, w);
	ref_mm(x, y, 12, 20, 0, 0, 3, 5, 4, w + 15);
	ge_xt *in[2] = {ge_xt_ref(x), ge_xt_ref(y)};
	ge_xt *o = run1("BatchMatMul", "", in, 2);
	ok(dims_are(o, 3, 2, 3, 5) && maxerr(o, w, 30) < TOL, "BatchMatMul");
	ge_xt_unref(o);
	in[0] = ge_xt_ref(x), in[1] = ge_xt_ref(y);
	o = run1("BatchMatMulV3", cat(3, A_I("Ta", 1), A_I("Tb", 1),
				      A_I("Tout", 1)), in, 2);
	ok(o && maxerr(o, w, 30) < TOL, "BatchMatMulV3");
	ge_xt_unref(o);
	ge_xt_unref(x);
	ge_xt_unref(y);
	in[0] = rnd(3, 2, 3, 4), in[1] = rnd(3, 3, 4, 5);
	refused("BatchMatMulV2", "", in, 2, 1, "batch dimension 0 differs",
		"batches 2 and 3");
	in[0] = rnd(4, 1, 2, 3, 4), in[1] = rnd(3, 2, 4, 5);
	refused("BatchMatMul", "", in, 2, 1, "same rank",
		"BatchMatMul (V1) broadcasting ranks");
	in[0] = rnd(1, 4), in[1] = rnd(2, 4, 5);
	refused("BatchMatMulV2", "", in, 2, 1, "at least 2-D", "a 1-D x");
}

/* The activation of a fused epilogue in double. */
static double act(const char *a, double v)
{
	if (!strcmp(a, "Relu")) return v > 0 ? v : 0;
	if (!strcmp(a, "Relu6")) return v < 0 ? 0 : v > 6 ? 6 : v;
	if (!strcmp(a, "Elu")) return v < 0 ? exp(v) - 1 : v;
	if (!strcmp(a, "LeakyRelu")) return v < 0 ? 0.3 * v : v;
	if (!strcmp(a, "Sigmoid")) return 1 / (1 + exp(-v));
	if (!strcmp(a, "Tanh")) return tanh(v);
	return v;
}

static void test_fused_matmul(void)
{
	static const char *acts[] = {"", "Relu", "Relu6", "Elu", "LeakyRelu",
				     "Sigmoid", "Tanh"};
	double want[4 * 6];
	for (size_t t = 0; t < sizeof acts / sizeof acts[0]; t++) {
		ge_xt *a = rnd(2, 4, 7), *b = rnd(2, 7, 6), *bias = rnd(1, 6);
		for (int i = 0; i < 24; i++)
			((float *)a->data)[i] *= 4; /* past Relu6's 6 */
		ref_mm(a, b, 0, 0, 0, 0, 4, 6, 7, want);
		for (int i = 0; i < 24; i++)
			want[i] = act(acts[t], want[i] + F(bias, i % 6));
		char ops[64];
		snprintf(ops, sizeof ops, "BiasAdd %s", acts[t]);
		ge_xt *in[3] = {a, b, bias};
		ge_xt *o = run1("_FusedMatMul", cat(2, A_FUSED(ops, 1),
						    A_F("leakyrelu_alpha", 0.3)),
				in, 3);
		ok(dims_are(o, 2, 4, 6) && maxerr(o, want, 24) < TOL,
		   "_FusedMatMul %s %s", ops, o ? "" : errmsg);
		ge_xt_unref(o);
	}
	/* TensorFlow.js's Prelu: per-channel alphas as the second arg */
	ge_xt *a = rnd(2, 4, 7), *b = rnd(2, 7, 6), *bias = rnd(1, 6);
	ge_xt *al = rnd(3, 1, 1, 6);
	ref_mm(a, b, 0, 0, 0, 0, 4, 6, 7, want);
	for (int i = 0; i < 24; i++) {
		double v = want[i] + F(bias, i % 6);
		want[i] = v < 0 ? v * F(al, i % 6) : v;
	}
	ge_xt *pin[4] = {a, b, bias, al};
	ge_xt *po = run1("_FusedMatMul", A_FUSED("BiasAdd Prelu", 2), pin, 4);
	ok(po && maxerr(po, want, 24) < TOL, "_FusedMatMul BiasAdd Prelu "
	   "(TensorFlow.js) %s", po ? "" : errmsg);
	ge_xt_unref(po);
	ge_xt *in[4] = {rnd(2, 4, 7), rnd(2, 7, 6), rnd(1, 6), rnd(1, 5)};
	refused("_FusedMatMul", A_FUSED("BiasAdd Prelu", 2), in, 4, 1,
		"Prelu's alphas", "Prelu alphas of another size");
	in[0] = rnd(2, 4, 7), in[1] = rnd(2, 7, 6), in[2] = rnd(1, 6);
	refused("_FusedMatMul", A_FUSED("BiasAdd Relu", 2), in, 3, 1,
		"num_args", "a wrong num_args");
	in[0] = rnd(2, 4, 7), in[1] = rnd(2, 7, 6), in[2] = rnd(1, 5);
	refused("_FusedMatMul", A_FUSED("BiasAdd", 1), in, 3, 1,
		"bias must be float32[6]", "a bias of the wrong size");
	in[0] = rnd(2, 4, 7), in[1] = rnd(2, 7, 6), in[2] = rnd(1, 6);
	refused("_FusedMatMul", A_FUSED("BiasAdd Softplus", 1), in, 3, 1,
		"Softplus", "an unknown fused op");
}

/* Einsum by brute force: every assignment of values to the labels. */
static double *ref_einsum(const char *eq, const ge_xt *a, const ge_xt *b,
			  int64_t *nout)
{
	char la[16], lb[16], lo[16], labs[32] = "";
	int64_t size[128] = {0};
	sscanf(eq, "%15[^,],%15[^-]->%15s", la, lb, lo);
	for (int i = 0; la[i]; i++)
		size[(int)la[i]] = a->dims[i];
	for (int i = 0; lb[i]; i++)
		size[(int)lb[i]] = b->dims[i];
	int nl = 0;
	for (int c = 0; c < 128; c++)
		if (size[c])
			labs[nl++] = (char)c;
	*nout = 1;
	for (int i = 0; lo[i]; i++)
		*nout *= size[(int)lo[i]];
	double *out = calloc(*nout, sizeof *out);
	int64_t val[128] = {0}, total = 1;
	for (int i = 0; i < nl; i++)
		total *= size[(int)labs[i]];
	for (int64_t t = 0; t < total; t++) {
		int64_t r = t;
		for (int i = nl - 1; i >= 0; i--) {
			val[(int)labs[i]] = r % size[(int)labs[i]];
			r /= size[(int)labs[i]];
		}
		int64_t ia = 0, ib = 0, io = 0;
		for (int i = 0; la[i]; i++)
			ia = ia * size[(int)la[i]] + val[(int)la[i]];
		for (int i = 0; lb[i]; i++)
			ib = ib * size[(int)lb[i]] + val[(int)lb[i]];
		for (int i = 0; lo[i]; i++)
			io = io * size[(int)lo[i]] + val[(int)lo[i]];
		out[io] += (double)F(a, ia) * F(b, ib);
	}
	return out;
}

static void test_einsum(void)
{
	/* BERT's equations, and a batch label in the middle */
	static const struct { const char *eq; int ra, rb; int da[4], db[4]; }
	cases[] = {
		{"abc,cd->abd", 3, 2, {2, 3, 4}, {4, 5}},
		{"abc,cde->abde", 3, 3, {2, 3, 4}, {4, 2, 3}},
		{"abcd,cde->abe", 4, 3, {2, 3, 4, 2}, {4, 2, 5}},
		{"aecd,abcd->acbe", 4, 4, {2, 5, 3, 4}, {2, 3, 3, 4}},
		{"acbe,aecd->abcd", 4, 4, {2, 3, 4, 5}, {2, 5, 3, 2}},
		{"bij,bjk->bik", 3, 3, {3, 2, 4}, {3, 4, 2}},
		{"ij,kj->ki", 2, 2, {3, 4}, {2, 4}},
	};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		int64_t da[4], db[4], n;
		for (int i = 0; i < 4; i++)
			da[i] = cases[t].da[i], db[i] = cases[t].db[i];
		ge_xt *a = mk(F32, cases[t].ra, da), *b = mk(F32, cases[t].rb, db);
		for (int64_t i = 0; i < a->n; i++)
			((float *)a->data)[i] = (float)urand();
		for (int64_t i = 0; i < b->n; i++)
			((float *)b->data)[i] = (float)urand();
		double *want = ref_einsum(cases[t].eq, a, b, &n);
		ge_xt *in[2] = {a, b};
		ge_xt_ref(a), ge_xt_ref(b);
		ge_xt *o = run1("Einsum", A_S("equation", cases[t].eq), in, 2);
		ok(o && maxerr(o, want, n) < TOL, "Einsum %s %s", cases[t].eq,
		   o ? "" : errmsg);
		free(want);
		ge_xt_unref(o);
		ge_xt_unref(a);
		ge_xt_unref(b);
	}
	ge_xt *in[3] = {rnd(2, 3, 3), rnd(2, 3, 4)};
	refused("Einsum", A_S("equation", "ii,ij->j"), in, 2, 1, "twice",
		"a diagonal");
	in[0] = rnd(3, 2, 3, 4), in[1] = rnd(2, 4, 5);
	refused("Einsum", A_S("equation", "...c,cd->...d"), in, 2, 1,
		"not supported", "an ellipsis");
	in[0] = rnd(2, 3, 4), in[1] = rnd(2, 5, 6);
	refused("Einsum", A_S("equation", "ab,bc->ac"), in, 2, 1,
		"label b is 4 and 5", "sizes that disagree");
	in[0] = rnd(2, 3, 4), in[1] = rnd(2, 4, 6);
	refused("Einsum", A_S("equation", "ab,bc->acd"), in, 2, 1,
		"in no operand", "an output label from nowhere");
}

/* ---------------------------------------------------------------- conv */

/* A convolution's geometry, worked out as TensorFlow documents it. */
typedef struct geo {
	int n, h, w, c, kh, kw, co;   /* co: filter's last dim */
	int sh, sw, dh, dw;
	int mode;                     /* 0 VALID, 1 SAME, 2 EXPLICIT */
	int pt, pb, pl, pr;           /* explicit pads */
	int oh, ow, ph, pw;           /* results: output size, pad before */
} geo;

static void geo_solve(geo *g)
{
	int eh = (g->kh - 1) * g->dh + 1, ew = (g->kw - 1) * g->dw + 1;
	if (g->mode == 1) {
		g->oh = (g->h + g->sh - 1) / g->sh;
		g->ow = (g->w + g->sw - 1) / g->sw;
		int th = (g->oh - 1) * g->sh + eh - g->h;
		int tw = (g->ow - 1) * g->sw + ew - g->w;
		g->ph = th > 0 ? th / 2 : 0, g->pw = tw > 0 ? tw / 2 : 0;
	} else {
		int ph = g->mode ? g->pt + g->pb : 0;
		int pw = g->mode ? g->pl + g->pr : 0;
		g->oh = (g->h + ph - eh) / g->sh + 1;
		g->ow = (g->w + pw - ew) / g->sw + 1;
		g->ph = g->mode ? g->pt : 0, g->pw = g->mode ? g->pl : 0;
	}
}

/* Conv2D (depthwise: channel multiplier co) in NHWC, double. */
static double *ref_conv(const geo *g, const ge_xt *x, const ge_xt *f,
			int depthwise)
{
	int oc = depthwise ? g->c * g->co : g->co;
	double *y = calloc((size_t)g->n * g->oh * g->ow * oc, sizeof *y);
	for (int b = 0; b < g->n; b++)
		for (int oh = 0; oh < g->oh; oh++)
			for (int ow = 0; ow < g->ow; ow++)
				for (int o = 0; o < oc; o++) {
					double s = 0;
					for (int i = 0; i < g->kh; i++)
						for (int j = 0; j < g->kw; j++) {
							int ih = oh * g->sh - g->ph + i * g->dh;
							int iw = ow * g->sw - g->pw + j * g->dw;
							if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
								continue;
							const float *xp = (float *)x->data + ((b * g->h + ih) * g->w + iw) * g->c;
							const float *fp = (float *)f->data + (i * g->kw + j) * g->c * g->co;
							if (depthwise)
								s += xp[o / g->co] * (double)fp[o];
							else
								for (int q = 0; q < g->c; q++)
									s += xp[q] * (double)fp[q * g->co + o];
						}
					y[((b * g->oh + oh) * g->ow + ow) * oc + o] = s;
				}
	return y;
}

/* NHWC <-> NCHW of a float32 tensor (a new one). */
static ge_xt *to_nchw(const ge_xt *t)
{
	int64_t d[4] = {t->dims[0], t->dims[3], t->dims[1], t->dims[2]};
	ge_xt *o = mk(F32, 4, d);
	for (int64_t b = 0; b < d[0]; b++)
		for (int64_t c = 0; c < d[1]; c++)
			for (int64_t h = 0; h < d[2]; h++)
				for (int64_t w = 0; w < d[3]; w++)
					((float *)o->data)[((b * d[1] + c) * d[2] + h) * d[3] + w] =
						F(t, ((b * d[2] + h) * d[3] + w) * d[1] + c);
	return o;
}

static double *nhwc_of(const ge_xt *t)
{
	int64_t n = t->dims[0], c = t->dims[1], h = t->dims[2], w = t->dims[3];
	double *o = malloc(t->n * sizeof *o);
	for (int64_t b = 0; b < n; b++)
		for (int64_t q = 0; q < c; q++)
			for (int64_t i = 0; i < h; i++)
				for (int64_t j = 0; j < w; j++)
					o[((b * h + i) * w + j) * c + q] =
						F(t, ((b * c + q) * h + i) * w + j);
	return o;
}

/* The attrs of a conv from g (in NHWC or NCHW order). */
static const char *conv_attrs(const geo *g, int nchw)
{
	static const char *pad[] = {"VALID", "SAME", "EXPLICIT"};
	const char *st = nchw ? A_L("strides", 4, 1, 1, g->sh, g->sw)
			      : A_L("strides", 4, 1, g->sh, g->sw, 1);
	const char *dl = nchw ? A_L("dilations", 4, 1, 1, g->dh, g->dw)
			      : A_L("dilations", 4, 1, g->dh, g->dw, 1);
	const char *ep = "";
	if (g->mode == 2)
		ep = nchw ? A_L("explicit_paddings", 8, 0, 0, 0, 0, g->pt,
				g->pb, g->pl, g->pr)
			  : A_L("explicit_paddings", 8, 0, 0, g->pt, g->pb,
				g->pl, g->pr, 0, 0);
	return cat(5, st, dl, A_S("padding", pad[g->mode]),
		   A_S("data_format", nchw ? "NCHW" : "NHWC"), ep);
}

static const geo conv_cases[] = {
	/* n h w c kh kw co sh sw dh dw mode pads */
	{2, 7, 6, 3, 3, 2, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	{1, 9, 8, 5, 3, 3, 6, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{2, 8, 9, 4, 3, 3, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	{1, 9, 9, 3, 3, 2, 5, 1, 1, 2, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	{2, 6, 7, 2, 3, 3, 4, 2, 2, 1, 2, 2, 1, 2, 0, 3, 0, 0, 0, 0},
	{3, 5, 4, 8, 1, 1, 7, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{1, 6, 6, 4, 1, 1, 3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	{1, 4, 4, 2, 5, 5, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
};

static const char *geo_name(const geo *g)
{
	static const char *pad[] = {"VALID", "SAME", "EXPLICIT"};
	char *b = ring();
	snprintf(b, 512, "x[%d,%d,%d,%d] f[%d,%d,%d,%d] strides %d,%d "
		 "dilations %d,%d %s", g->n, g->h, g->w, g->c, g->kh, g->kw,
		 g->c, g->co, g->sh, g->sw, g->dh, g->dw, pad[g->mode]);
	return b;
}

static void test_conv2d(void)
{
	for (size_t t = 0; t < sizeof conv_cases / sizeof conv_cases[0]; t++)
		for (int nchw = 0; nchw < 2; nchw++) {
			geo g = conv_cases[t];
			geo_solve(&g);
			ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
			ge_xt *f = rnd(4, g.kh, g.kw, g.c, g.co);
			double *want = ref_conv(&g, x, f, 0);
			ge_xt *in[2] = {nchw ? to_nchw(x) : ge_xt_ref(x), f};
			ge_xt *o = run1("Conv2D", conv_attrs(&g, nchw), in, 2);
			double *got = o && nchw ? nhwc_of(o) : NULL;
			double e = INFINITY;
			int64_t n = (int64_t)g.n * g.oh * g.ow * g.co;
			if (o && o->n == n) {
				e = 0;
				for (int64_t i = 0; i < n; i++) {
					double v = nchw ? got[i] : F(o, i);
					double d = fabs(v - want[i]) /
						   (1 + fabs(want[i]));
					e = d > e ? d : e;
				}
			}
			ok(e < TOL && o->dims[nchw ? 2 : 1] == g.oh,
			   "Conv2D %s %s (out %dx%d) %s", nchw ? "NCHW" : "NHWC",
			   geo_name(&g), g.oh, g.ow, o ? "" : errmsg);
			free(want);
			free(got);
			ge_xt_unref(o);
			ge_xt_unref(x);
		}
}

static void test_conv2d_refusals(void)
{
	geo g = conv_cases[0];
	ge_xt *in[2];
	geo_solve(&g);
#define CONV_IN(c) (in[0] = rnd(4, 1, 5, 5, 3), in[1] = rnd(4, 3, 3, c, 2))
	CONV_IN(3);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 0, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"stride 0", "a zero stride");
	CONV_IN(3);
	refused("Conv2D", cat(2, A_L("strides", 4, 2, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"batch and depth", "a batch stride");
	CONV_IN(4);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"input depth 4 differs", "a filter of another depth");
	CONV_IN(3);
	refused("Conv2D", cat(3, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "SAME"),
			      A_S("data_format", "NDHWC")), in, 2, 1,
		"data_format", "an unknown data_format");
	CONV_IN(3);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "FULL")), in, 2, 1,
		"padding must be", "an unknown padding");
	CONV_IN(3);
	refused("Conv2D", cat(3, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "EXPLICIT"),
			      A_L("explicit_paddings", 4, 0, 0, 1, 1)), in, 2,
		1, "explicit_paddings must have 8", "4 explicit paddings");
	CONV_IN(3);
	refused("Conv2D", cat(3, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "EXPLICIT"),
			      A_L("explicit_paddings", 8, 0, 0, -1, 0, 0, 0,
				  0, 0)), in, 2, 1, "explicit paddings",
		"a negative explicit padding");
	in[0] = rnd(4, 1, 2, 5, 3), in[1] = rnd(4, 4, 3, 3, 2);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "VALID")), in, 2, 1,
		"does not fit", "a window larger than the input (VALID)");
	in[0] = rnd(3, 5, 5, 3), in[1] = rnd(4, 3, 3, 3, 2);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1, "4-D",
		"a 3-D input");
	CONV_IN(3);
	refused("Conv2D", A_S("padding", "SAME"), in, 2, 1,
		"strides must be a list of 4", "a missing strides attr");
	CONV_IN(3);
	refused("Conv2D", cat(2, A_L("strides", 5, 1, 1, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"strides must be a list of 4", "5 strides");
	int64_t d[4] = {1, 5, 5, 3};
	in[0] = mk(F64, 4, d), in[1] = rnd(4, 3, 3, 3, 2);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"float32", "a float64 input");
	/* the work budget: 1x5x5x2 outputs of 27 multiply-adds */
	uint64_t lim = budget.work_limit;
	budget.work_limit = budget.work_used + 1000;
	CONV_IN(3);
	refused("Conv2D", cat(2, A_L("strides", 4, 1, 1, 1, 1),
			      A_S("padding", "SAME")), in, 2, 1,
		"work budget", "past the work budget");
	budget.work_limit = lim;
#undef CONV_IN
}

static void test_fused_conv2d(void)
{
	static const char *cases[][2] = {
		{"BiasAdd", ""}, {"BiasAdd Relu", "Relu"},
		{"BiasAdd Relu6", "Relu6"}, {"BiasAdd Elu", "Elu"},
		{"BiasAdd LeakyRelu", "LeakyRelu"},
		{"FusedBatchNorm", ""}, {"FusedBatchNorm Relu", "Relu"},
		{"BiasAdd Add Relu", "Relu"},
	};
	geo g = {2, 6, 5, 3, 3, 3, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
	geo_solve(&g);
	int64_t n = (int64_t)g.n * g.oh * g.ow * g.co;
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		int bn = !strncmp(cases[t][0], "FusedBatchNorm", 14);
		int add = strstr(cases[t][0], " Add") != NULL;
		ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
		ge_xt *f = rnd(4, g.kh, g.kw, g.c, g.co);
		ge_xt *a[5] = {rnd(1, g.co), rnd(1, g.co), rnd(1, g.co),
			       rnd(1, g.co), rnd(4, g.n, g.oh, g.ow, g.co)};
		for (int i = 0; i < g.co; i++) /* a positive variance */
			((float *)a[3]->data)[i] = 0.5f + F(a[3], i) * F(a[3], i);
		double *want = ref_conv(&g, x, f, 0);
		for (int64_t i = 0; i < n; i++) {
			int c = (int)(i % g.co);
			double v = want[i];
			if (bn)
				v = (v - F(a[2], c)) * F(a[0], c) /
				    sqrt(F(a[3], c) + 0.001) + F(a[1], c);
			else
				v += F(a[0], c);
			if (add)
				v += F(a[4], i);
			want[i] = act(cases[t][1], v);
		}
		ge_xt *in[7] = {x, f};
		int nin = 2;
		if (bn)
			for (int i = 0; i < 4; i++)
				in[nin++] = a[i];
		else {
			in[nin++] = a[0];
			ge_xt_unref(a[1]), ge_xt_unref(a[2]), ge_xt_unref(a[3]);
		}
		if (add)
			in[nin++] = a[4];
		else
			ge_xt_unref(a[4]);
		ge_xt *o = run1("_FusedConv2D",
				cat(4, conv_attrs(&g, 0),
				    A_FUSED(cases[t][0], nin - 2),
				    A_F("epsilon", 0.001),
				    A_F("leakyrelu_alpha", 0.3)), in, nin);
		ok(o && maxerr(o, want, n) < TOL, "_FusedConv2D %s %s",
		   cases[t][0], o ? "" : errmsg);
		free(want);
		ge_xt_unref(o);
	}
	ge_xt *in[4] = {rnd(4, 1, 5, 5, 3), rnd(4, 3, 3, 3, 2), rnd(1, 2),
			rnd(1, 2)};
	refused("_FusedConv2D", cat(3, A_L("strides", 4, 1, 1, 1, 1),
				    A_S("padding", "SAME"),
				    A_FUSED("FusedBatchNorm", 2)), in, 4, 1,
		"FusedBatchNorm", "FusedBatchNorm with 2 args");
	in[0] = rnd(4, 1, 5, 5, 3), in[1] = rnd(4, 3, 3, 3, 2);
	in[2] = rnd(1, 2);
	refused("_FusedConv2D", cat(3, A_L("strides", 4, 1, 1, 1, 1),
				    A_S("padding", "SAME"),
				    A_FUSED("Relu BiasAdd", 1)), in, 3, 1,
		"must start with BiasAdd", "an activation first");
}

static void test_depthwise(void)
{
	static const geo cases[] = {
		{2, 7, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 9, 8, 4, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 9, 9, 2, 3, 2, 3, 1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{2, 6, 7, 5, 2, 3, 1, 2, 1, 1, 1, 2, 1, 0, 2, 1, 0, 0, 0, 0},
		/* 64 + 7 channels: the vector blocks and the tail */
		{2, 7, 6, 71, 3, 3, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 6, 6, 40, 3, 3, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0},
	};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
		for (int nchw = 0; nchw < 2; nchw++) {
			geo g = cases[t];
			geo_solve(&g);
			ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
			ge_xt *f = rnd(4, g.kh, g.kw, g.c, g.co);
			double *want = ref_conv(&g, x, f, 1);
			ge_xt *in[2] = {nchw ? to_nchw(x) : ge_xt_ref(x), f};
			ge_xt *o = run1("DepthwiseConv2dNative",
					conv_attrs(&g, nchw), in, 2);
			double *got = o && nchw ? nhwc_of(o) : NULL;
			int64_t n = (int64_t)g.n * g.oh * g.ow * g.c * g.co;
			double e = o && o->n == n ? 0 : INFINITY;
			for (int64_t i = 0; o && o->n == n && i < n; i++) {
				double v = nchw ? got[i] : F(o, i);
				double d = fabs(v - want[i]) / (1 + fabs(want[i]));
				e = d > e ? d : e;
			}
			ok(e < TOL, "DepthwiseConv2dNative %s %s %s",
			   nchw ? "NCHW" : "NHWC", geo_name(&g),
			   o ? "" : errmsg);
			free(want);
			free(got);
			ge_xt_unref(o);
			ge_xt_unref(x);
		}
	geo g = cases[1];
	geo_solve(&g);
	ge_xt *x = rnd(4, g.n, g.h, g.w, g.c), *f = rnd(4, g.kh, g.kw, g.c, g.co);
	ge_xt *bias = rnd(1, g.c * g.co);
	double *want = ref_conv(&g, x, f, 1);
	int64_t n = (int64_t)g.n * g.oh * g.ow * g.c * g.co;
	for (int64_t i = 0; i < n; i++)
		want[i] = act("Relu6", 8 * want[i] + 8 * F(bias, i % (g.c * g.co)));
	for (int64_t i = 0; i < f->n; i++)
		((float *)f->data)[i] *= 8;
	for (int64_t i = 0; i < bias->n; i++)
		((float *)bias->data)[i] *= 8;
	ge_xt *in[3] = {x, f, bias};
	ge_xt *o = run1("FusedDepthwiseConv2dNative",
			cat(2, conv_attrs(&g, 0), A_FUSED("BiasAdd Relu6", 1)),
			in, 3);
	ok(o && maxerr(o, want, n) < TOL,
	   "FusedDepthwiseConv2dNative BiasAdd Relu6 %s", o ? "" : errmsg);
	free(want);
	ge_xt_unref(o);
	in[0] = rnd(4, 1, 5, 5, 3), in[1] = rnd(4, 3, 3, 2, 1);
	refused("DepthwiseConv2dNative", cat(2, A_L("strides", 4, 1, 1, 1, 1),
					     A_S("padding", "SAME")), in, 2, 1,
		"input depth 2 differs", "a depthwise filter of another depth");
}

/* dx of Conv2D by the transpose of ref_conv, and dw. */
static void test_conv_backprop(void)
{
	static const geo cases[] = {
		{2, 7, 6, 3, 3, 2, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 9, 8, 2, 3, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 8, 8, 3, 3, 3, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{2, 6, 7, 2, 3, 3, 4, 2, 2, 1, 1, 2, 1, 2, 0, 3, 0, 0, 0, 0},
	};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
		for (int nchw = 0; nchw < 2; nchw++) {
			geo g = cases[t];
			geo_solve(&g);
			ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
			ge_xt *f = rnd(4, g.kh, g.kw, g.c, g.co);
			ge_xt *dy = rnd(4, g.n, g.oh, g.ow, g.co);
			int64_t nx = x->n, nf = f->n;
			double *dx = calloc(nx, sizeof *dx);
			double *dw = calloc(nf, sizeof *dw);
			for (int b = 0; b < g.n; b++)
			for (int oh = 0; oh < g.oh; oh++)
			for (int ow = 0; ow < g.ow; ow++)
			for (int i = 0; i < g.kh; i++)
			for (int j = 0; j < g.kw; j++) {
				int ih = oh * g.sh - g.ph + i * g.dh;
				int iw = ow * g.sw - g.pw + j * g.dw;
				if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
					continue;
				for (int q = 0; q < g.c; q++)
					for (int o = 0; o < g.co; o++) {
						double gy = F(dy, ((b * g.oh + oh) * g.ow + ow) * g.co + o);
						int64_t xi = ((b * g.h + ih) * g.w + iw) * g.c + q;
						int64_t fi = ((i * g.kw + j) * g.c + q) * g.co + o;
						dx[xi] += gy * F(f, fi);
						dw[fi] += gy * F(x, xi);
					}
			}
			ge_xt *sizes = nchw ? ivec(4, g.n, g.c, g.h, g.w)
					    : ivec(4, g.n, g.h, g.w, g.c);
			ge_xt *in[3] = {sizes, ge_xt_ref(f),
					nchw ? to_nchw(dy) : ge_xt_ref(dy)};
			ge_xt *o = run1("Conv2DBackpropInput",
					conv_attrs(&g, nchw), in, 3);
			double *got = o && nchw ? nhwc_of(o) : NULL;
			double e = o && o->n == nx ? 0 : INFINITY;
			for (int64_t i = 0; o && o->n == nx && i < nx; i++) {
				double v = nchw ? got[i] : F(o, i);
				double d = fabs(v - dx[i]) / (1 + fabs(dx[i]));
				e = d > e ? d : e;
			}
			ok(e < TOL, "Conv2DBackpropInput %s %s %s",
			   nchw ? "NCHW" : "NHWC", geo_name(&g),
			   o ? "" : errmsg);
			free(got);
			ge_xt_unref(o);
			in[0] = nchw ? to_nchw(x) : ge_xt_ref(x);
			in[1] = ivec(4, g.kh, g.kw, g.c, g.co);
			in[2] = nchw ? to_nchw(dy) : ge_xt_ref(dy);
			o = run1("Conv2DBackpropFilter", conv_attrs(&g, nchw),
				 in, 3);
			ok(o && maxerr(o, dw, nf) < TOL,
			   "Conv2DBackpropFilter %s %s %s",
			   nchw ? "NCHW" : "NHWC", geo_name(&g),
			   o ? "" : errmsg);
			ge_xt_unref(o);
			free(dx);
			free(dw);
			ge_xt_unref(x);
			ge_xt_unref(f);
			ge_xt_unref(dy);
		}
	ge_xt *in[3] = {ivec(4, 1, 5, 5, 3), rnd(4, 3, 3, 3, 2),
			rnd(4, 1, 4, 5, 2)};
	refused("Conv2DBackpropInput", cat(2, A_L("strides", 4, 1, 1, 1, 1),
					   A_S("padding", "SAME")), in, 3, 1,
		"out_backprop must be float32[1,5,5,2]",
		"an out_backprop of the wrong shape");
	in[0] = ivec(3, 1, 5, 5), in[1] = rnd(4, 3, 3, 3, 2);
	in[2] = rnd(4, 1, 5, 5, 2);
	refused("Conv2DBackpropInput", cat(2, A_L("strides", 4, 1, 1, 1, 1),
					   A_S("padding", "SAME")), in, 3, 1,
		"input_sizes must have 4", "3 input sizes");
}

/* ---------------------------------------------------------------- pools */

static const char *fl(const ge_xt *t);

static void test_pools(void)
{
	static const geo cases[] = {
		/* kh kw as the window, co unused */
		{2, 7, 6, 3, 3, 3, 0, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 8, 9, 4, 2, 2, 0, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{2, 5, 5, 2, 3, 2, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 9, 7, 3, 3, 3, 0, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
		for (int avg = 0; avg < 2; avg++)
			for (int nchw = 0; nchw < 2; nchw++) {
				geo g = cases[t];
				geo_solve(&g);
				ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
				int64_t n = (int64_t)g.n * g.oh * g.ow * g.c;
				double *want = malloc(n * sizeof *want);
				for (int b = 0; b < g.n; b++)
				for (int oh = 0; oh < g.oh; oh++)
				for (int ow = 0; ow < g.ow; ow++)
				for (int c = 0; c < g.c; c++) {
					double s = 0, m = -INFINITY;
					int cnt = 0;
					for (int i = 0; i < g.kh; i++)
					for (int j = 0; j < g.kw; j++) {
						int ih = oh * g.sh - g.ph + i;
						int iw = ow * g.sw - g.pw + j;
						if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
							continue;
						double v = F(x, ((b * g.h + ih) * g.w + iw) * g.c + c);
						s += v, cnt++;
						m = v > m ? v : m;
					}
					want[((b * g.oh + oh) * g.ow + ow) * g.c + c] = avg ? s / cnt : m;
				}
				const char *a = cat(4, nchw ? A_L("ksize", 4, 1, 1, g.kh, g.kw)
							    : A_L("ksize", 4, 1, g.kh, g.kw, 1),
						    nchw ? A_L("strides", 4, 1, 1, g.sh, g.sw)
							 : A_L("strides", 4, 1, g.sh, g.sw, 1),
						    A_S("padding", g.mode ? "SAME" : "VALID"),
						    A_S("data_format", nchw ? "NCHW" : "NHWC"));
				ge_xt *in[1] = {nchw ? to_nchw(x) : ge_xt_ref(x)};
				ge_xt *o = run1(avg ? "AvgPool" : "MaxPool", a, in, 1);
				double *got = o && nchw ? nhwc_of(o) : NULL;
				double e = o && o->n == n ? 0 : INFINITY;
				for (int64_t i = 0; o && o->n == n && i < n; i++) {
					double v = nchw ? got[i] : F(o, i);
					double d = fabs(v - want[i]) / (1 + fabs(want[i]));
					e = d > e ? d : e;
				}
				ok(e < TOL, "%s %s %s %s", avg ? "AvgPool" : "MaxPool",
				   nchw ? "NCHW" : "NHWC", geo_name(&g), o ? "" : errmsg);
				free(want);
				free(got);
				ge_xt_unref(o);
				ge_xt_unref(x);
			}
	/* AvgPool SAME divides by the elements inside: a 2x2 of 1..4 with a
	 * 2x2 window, stride 1: corners (1+2+3+4)/4, (2+4)/2, (3+4)/2, 4 */
	int64_t d[4] = {1, 2, 2, 1};
	double v[4] = {1, 2, 3, 4};
	ge_xt *in[3] = {vals(F32, 4, d, v)};
	ge_xt *o = run1("AvgPool", cat(3, A_L("ksize", 4, 1, 2, 2, 1),
				       A_L("strides", 4, 1, 1, 1, 1),
				       A_S("padding", "SAME")), in, 1);
	ok(o && F(o, 0) == 2.5f && F(o, 1) == 3 && F(o, 2) == 3.5f &&
	   F(o, 3) == 4, "AvgPool SAME counts only the elements inside");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v);
	o = run1("MaxPool", cat(4, A_L("ksize", 4, 1, 2, 2, 1),
				A_L("strides", 4, 1, 1, 1, 1),
				A_S("padding", "EXPLICIT"),
				A_L("explicit_paddings", 8, 0, 0, 1, 0, 0, 1,
				    0, 0)), in, 1);
	is_string("2,2,4,4", fl(o), "MaxPool with EXPLICIT padding (top 1, "
		  "right 1) %s", o ? "" : errmsg);
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(4, 1, 2, 2, 1);
	in[2] = ivec(4, 1, 1, 1, 1);
	o = run1("MaxPoolV2", A_S("padding", "VALID"), in, 3);
	ok(dims_are(o, 4, 1, 1, 1, 1) && F(o, 0) == 4,
	   "MaxPoolV2 takes ksize and strides as inputs");
	ge_xt_unref(o);
	in[0] = rnd(4, 1, 4, 4, 2);
	refused("MaxPool", cat(3, A_L("ksize", 4, 1, 2, 2, 2),
			       A_L("strides", 4, 1, 1, 1, 1),
			       A_S("padding", "VALID")), in, 1, 1,
		"batch or depth", "a window over the depth");
	in[0] = rnd(4, 1, 4, 4, 2);
	refused("AvgPool", cat(3, A_L("ksize", 4, 1, 2, 2, 1),
			       A_L("strides", 4, 1, -1, 1, 1),
			       A_S("padding", "VALID")), in, 1, 1,
		"stride -1", "a negative stride");
	/* MaxPoolGrad routes each gradient to its window's maximum */
	double xv[4] = {1, 5, 3, 2};
	int64_t d1[4] = {1, 1, 1, 1};
	in[0] = vals(F32, 4, d, xv), in[1] = rnd(4, 1, 1, 1, 1);
	in[2] = vals(F32, 4, d1, (double[]){7});
	o = run1("MaxPoolGrad", cat(3, A_L("ksize", 4, 1, 2, 2, 1),
				    A_L("strides", 4, 1, 2, 2, 1),
				    A_S("padding", "VALID")), in, 3);
	ok(o && F(o, 0) == 0 && F(o, 1) == 7 && F(o, 2) == 0 && F(o, 3) == 0,
	   "MaxPoolGrad routes the gradient to the maximum");
	ge_xt_unref(o);
}

static void test_batch_norm(void)
{
	for (int nchw = 0; nchw < 2; nchw++) {
		ge_xt *x = rnd(4, 2, 3, 4, 5);
		ge_xt *p[4] = {rnd(1, 5), rnd(1, 5), rnd(1, 5), rnd(1, 5)};
		double want[120];
		for (int i = 0; i < 5; i++)
			((float *)p[3]->data)[i] = 0.5f + F(p[3], i) * F(p[3], i);
		for (int i = 0; i < 120; i++) {
			int c = i % 5;
			want[i] = (F(x, i) - F(p[2], c)) * F(p[0], c) /
				  sqrt(F(p[3], c) + 0.01) + F(p[1], c);
		}
		ge_xt *in[5] = {nchw ? to_nchw(x) : ge_xt_ref(x), p[0], p[1],
				ge_xt_ref(p[2]), ge_xt_ref(p[3])};
		ge_xt *o[6];
		int rc = run("FusedBatchNormV3",
			     cat(3, A_B("is_training", 0), A_F("epsilon", 0.01),
				 A_S("data_format", nchw ? "NCHW" : "NHWC")),
			     in, 5, o, 6);
		double *got = !rc && nchw ? nhwc_of(o[0]) : NULL;
		double e = rc ? INFINITY : 0;
		for (int i = 0; !rc && i < 120; i++) {
			double v = nchw ? got[i] : F(o[0], i);
			double dd = fabs(v - want[i]) / (1 + fabs(want[i]));
			e = dd > e ? dd : e;
		}
		ok(e < TOL && o[1]->n == 5 && F(o[1], 2) == F(p[2], 2) &&
		   F(o[2], 4) == F(p[3], 4) && o[5]->n == 0,
		   "FusedBatchNormV3 inference %s: y, mean and variance passed "
		   "on %s", nchw ? "NCHW" : "NHWC", rc ? errmsg : "");
		free(got);
		for (int i = 0; !rc && i < 6; i++)
			ge_xt_unref(o[i]);
		ge_xt_unref(x);
		ge_xt_unref(p[2]);
		ge_xt_unref(p[3]);
	}
	/* training: batch statistics, the unbiased variance reported */
	ge_xt *x = rnd(4, 2, 2, 2, 1);
	double m = 0, v = 0;
	for (int i = 0; i < 8; i++)
		m += F(x, i) / 8;
	for (int i = 0; i < 8; i++)
		v += (F(x, i) - m) * (F(x, i) - m) / 8;
	int64_t z = 0;
	ge_xt *in[5] = {ge_xt_ref(x), vals(F32, 1, (int64_t[]){1}, (double[]){2}),
			vals(F32, 1, (int64_t[]){1}, (double[]){1}),
			mk(F32, 1, &z), mk(F32, 1, &z)};
	ge_xt *o[5];
	int rc = run("FusedBatchNorm", A_F("epsilon", 0.001), in, 5, o, 5);
	ok(!rc && fabs(F(o[0], 3) - ((F(x, 3) - m) * 2 / sqrt(v + 0.001) + 1))
	   < 1e-5 && fabs(F(o[1], 0) - m) < 1e-6 &&
	   fabs(F(o[2], 0) - v * 8 / 7) < 1e-6,
	   "FusedBatchNorm training: batch mean, unbiased variance %s",
	   rc ? errmsg : "");
	for (int i = 0; !rc && i < 5; i++)
		ge_xt_unref(o[i]);
	ge_xt_unref(x);
	ge_xt *in2[5] = {rnd(4, 1, 2, 2, 3), rnd(1, 3), rnd(1, 3), rnd(1, 2),
			 rnd(1, 3)};
	refused("FusedBatchNormV3", A_B("is_training", 0), in2, 5, 6,
		"mean must be float32[3]", "a mean of the wrong size");
}

/* ---------------------------------------------------------------- image */

static const char *fl(const ge_xt *t)
{
	char *b = ring();
	int len = 0;
	b[0] = 0;
	for (int64_t i = 0; t && i < t->n && len < 480; i++)
		len += snprintf(b + len, 512 - len, "%s%g", i ? "," : "",
				ge_xt_get_double(t, i));
	return b;
}

static void test_resize(void)
{
	int64_t d[4] = {1, 2, 2, 1};
	double v[4] = {1, 2, 3, 4};
	ge_xt *in[2] = {vals(F32, 4, d, v), ivec(2, 3, 3)};
	ge_xt *o = run1("ResizeBilinear", "", in, 2);
	is_string("1,1.66667,2,2.33333,3,3.33333,3,3.66667,4", fl(o),
		  "ResizeBilinear 2x2 to 3x3, legacy: sources i*2/3");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 3, 3);
	o = run1("ResizeBilinear", A_B("align_corners", 1), in, 2);
	is_string("1,1.5,2,2,2.5,3,3,3.5,4", fl(o),
		  "ResizeBilinear align_corners: corners kept");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 4, 4);
	o = run1("ResizeBilinear", A_B("half_pixel_centers", 1), in, 2);
	is_string("1,1.25,1.75,2,1.5,1.75,2.25,2.5,2.5,2.75,3.25,3.5,3,3.25,"
		  "3.75,4", fl(o),
		  "ResizeBilinear half_pixel_centers: sources (i+0.5)/2-0.5, "
		  "clamped");
	ge_xt_unref(o);
	int64_t du[4] = {1, 2, 2, 1};
	ge_xt *u8 = mk(4, 4, du);
	for (int i = 0; i < 4; i++)
		((uint8_t *)u8->data)[i] = (uint8_t)(i * 100);
	in[0] = u8, in[1] = ivec(2, 1, 3);
	o = run1("ResizeBilinear", "", in, 2);
	ok(o && o->dtype == F32, "ResizeBilinear of uint8 gives float32: %s",
	   fl(o));
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 4, 4);
	o = run1("ResizeNearestNeighbor", "", in, 2);
	is_string("1,1,2,2,1,1,2,2,3,3,4,4,3,3,4,4", fl(o),
		  "ResizeNearestNeighbor 2x2 to 4x4");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 3, 3);
	o = run1("ResizeNearestNeighbor", A_B("half_pixel_centers", 1), in, 2);
	is_string("1,2,2,3,4,4,3,4,4", fl(o),
		  "ResizeNearestNeighbor half_pixel_centers: floor((i+0.5)*2/3)");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 3, 3);
	o = run1("ResizeNearestNeighbor", A_B("align_corners", 1), in, 2);
	is_string("1,2,2,3,4,4,3,4,4", fl(o),
		  "ResizeNearestNeighbor align_corners: round(i*1/2)");
	ge_xt_unref(o);
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 0, 3);
	refused("ResizeBilinear", "", in, 2, 1, "must be positive",
		"a zero size");
	in[0] = vals(F32, 4, d, v), in[1] = ivec(2, 3, 3);
	refused("ResizeBilinear", cat(2, A_B("align_corners", 1),
				      A_B("half_pixel_centers", 1)), in, 2, 1,
		"cannot both", "align_corners with half_pixel_centers");
	in[0] = rnd(3, 2, 2, 1), in[1] = ivec(2, 3, 3);
	refused("ResizeNearestNeighbor", "", in, 2, 1, "4-D", "a 3-D image");
}

/* TensorFlow's three clusters of boxes. */
static const double nms_boxes[] = {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9,
				   0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101};
static const double nms_scores[] = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};

static void nms_in(ge_xt **in, int max, double iou, double thr)
{
	int64_t bd[2] = {6, 4}, sd = 6;
	in[0] = vals(F32, 2, bd, nms_boxes);
	in[1] = vals(F32, 1, &sd, nms_scores);
	in[2] = iscalar(max), in[3] = fscalar(iou), in[4] = fscalar(thr);
}

static void test_nms(void)
{
	ge_xt *in[6], *o[3];
	nms_in(in, 3, 0.5, 0);
	ge_xt *r = run1("NonMaxSuppressionV3", "", in, 5);
	is_string("3,0,5", fl(r), "NonMaxSuppressionV3 picks one per cluster");
	ge_xt_unref(r);
	nms_in(in, 3, 0.5, 0.4);
	r = run1("NonMaxSuppressionV3", "", in, 5);
	is_string("3,0", fl(r), "score_threshold drops the third cluster");
	ge_xt_unref(r);
	nms_in(in, 6, 0.5, 0.4);
	int rc = run("NonMaxSuppressionV4", A_B("pad_to_max_output_size", 1),
		     in, 5, o, 2);
	ok(!rc && !strcmp(fl(o[0]), "3,0,0,0,0,0") &&
	   !strcmp(fl(o[1]), "2"), "NonMaxSuppressionV4 pads to 6, 2 valid");
	for (int i = 0; !rc && i < 2; i++)
		ge_xt_unref(o[i]);
	nms_in(in, 6, 1.0, 0);
	in[5] = fscalar(0.5);
	rc = run("NonMaxSuppressionV5", "", in, 6, o, 3);
	ok(!rc && !strcmp(fl(o[0]), "3,0,1,5,4,2") && !strcmp(fl(o[2]), "6"),
	   "NonMaxSuppressionV5 soft-NMS order %s", rc ? errmsg : fl(o[0]));
	ok(!rc && fabs(F(o[1], 0) - 0.95) < 1e-6 &&
	   fabs(F(o[1], 2) - 0.384) < 1e-3 && fabs(F(o[1], 4) - 0.256) < 1e-3 &&
	   fabs(F(o[1], 5) - 0.197) < 1e-3,
	   "and its decayed scores %s", rc ? "" : fl(o[1]));
	for (int i = 0; !rc && i < 3; i++)
		ge_xt_unref(o[i]);
	nms_in(in, 3, 1.5, 0);
	refused("NonMaxSuppressionV3", "", in, 5, 1, "iou_threshold",
		"an IoU threshold above 1");
	nms_in(in, -1, 0.5, 0);
	refused("NonMaxSuppressionV3", "", in, 5, 1, "max_output_size",
		"a negative max_output_size");
	nms_in(in, 3, 0.5, 0);
	ge_xt_unref(in[1]);
	in[1] = rnd(1, 5);
	refused("NonMaxSuppressionV3", "", in, 5, 1, "scores must be",
		"5 scores for 6 boxes");
}

static void test_blocks(void)
{
	/* TensorFlow's example: [1,4,4,1] of 1..16, block 2x2 */
	int64_t d[4] = {1, 4, 4, 1};
	double v[16];
	for (int i = 0; i < 16; i++)
		v[i] = i + 1;
	int64_t pd[2] = {2, 2};
	double zeros[4] = {0, 0, 0, 0}, pads[4] = {1, 0, 0, 2};
	ge_xt *in[3] = {vals(F32, 4, d, v), ivec(2, 2, 2),
			vals(I32, 2, pd, zeros)};
	ge_xt *o = run1("SpaceToBatchND", "", in, 3);
	ok(dims_are(o, 4, 4, 2, 2, 1) &&
	   !strcmp(fl(o), "1,3,9,11,2,4,10,12,5,7,13,15,6,8,14,16"),
	   "SpaceToBatchND [1,4,4,1] block 2x2: %s", fl(o));
	in[0] = o, in[1] = ivec(2, 2, 2), in[2] = vals(I32, 2, pd, zeros);
	o = run1("BatchToSpaceND", "", in, 3);
	ok(dims_are(o, 4, 1, 4, 4, 1) &&
	   !strcmp(fl(o), "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"),
	   "BatchToSpaceND gives it back");
	ge_xt_unref(o);
	/* padded, with batch 2 and 2 channels: a round trip with crops */
	ge_xt *x = rnd(4, 2, 3, 2, 2);
	in[0] = ge_xt_ref(x), in[1] = ivec(2, 2, 2);
	in[2] = vals(I32, 2, pd, pads);
	o = run1("SpaceToBatchND", "", in, 3);
	int okp = dims_are(o, 4, 8, 2, 2, 2);
	/* batch 1 of block (0,0): row 0 padded, rows 1-2 from x rows 0-1 */
	okp = okp && F(o, 0) == 0 && F(o, 4 * 2 * 2 + 0) == 0;
	in[0] = o, in[1] = ivec(2, 2, 2), in[2] = vals(I32, 2, pd, pads);
	o = run1("BatchToSpaceND", "", in, 3);
	okp = okp && o && o->n == x->n && !memcmp(o->data, x->data, x->n * 4);
	ok(okp, "SpaceToBatchND with paddings and BatchToSpaceND with the "
	   "same crops round-trip %s", o ? "" : errmsg);
	ge_xt_unref(o);
	ge_xt_unref(x);
	in[0] = rnd(4, 1, 3, 4, 1), in[1] = ivec(2, 2, 2);
	in[2] = vals(I32, 2, pd, zeros);
	refused("SpaceToBatchND", "", in, 3, 1, "not a multiple",
		"a dimension not a multiple of the block");
	in[0] = rnd(4, 3, 2, 2, 1), in[1] = ivec(2, 2, 2);
	in[2] = vals(I32, 2, pd, zeros);
	refused("BatchToSpaceND", "", in, 3, 1, "not a multiple",
		"a batch not a multiple of the block");
	in[0] = rnd(4, 1, 2, 2, 1), in[1] = ivec(2, 0, 2);
	in[2] = vals(I32, 2, pd, zeros);
	refused("SpaceToBatchND", "", in, 3, 1, "must be positive",
		"a zero block");
	/* DepthToSpace / SpaceToDepth: [1,2,2,1] of 1..4 <-> [1,1,1,4] */
	int64_t d2[4] = {1, 2, 2, 1};
	in[0] = vals(F32, 4, d2, v);
	o = run1("SpaceToDepth", A_I("block_size", 2), in, 1);
	ok(dims_are(o, 4, 1, 1, 1, 4) && !strcmp(fl(o), "1,2,3,4"),
	   "SpaceToDepth [1,2,2,1] block 2");
	ge_xt_unref(o);
	x = rnd(4, 2, 4, 6, 3);
	in[0] = ge_xt_ref(x);
	o = run1("SpaceToDepth", A_I("block_size", 2), in, 1);
	int good = dims_are(o, 4, 2, 2, 3, 12);
	/* element (n=1, h=3, w=4, c=2) is at (1, 1, 2, (1*2+0)*3+2) */
	good = good && F(o, ((1 * 2 + 1) * 3 + 2) * 12 + 8) ==
			       F(x, ((1 * 4 + 3) * 6 + 4) * 3 + 2);
	in[0] = o;
	o = run1("DepthToSpace", A_I("block_size", 2), in, 1);
	good = good && o && !memcmp(o->data, x->data, x->n * 4);
	ok(good, "SpaceToDepth then DepthToSpace round-trip [2,4,6,3]");
	ge_xt_unref(o);
	ge_xt_unref(x);
	in[0] = rnd(4, 1, 2, 2, 3);
	refused("DepthToSpace", A_I("block_size", 2), in, 1, 1,
		"not a multiple", "a depth not a multiple of 4");
	in[0] = rnd(4, 1, 2, 2, 4);
	refused("DepthToSpace", A_I("block_size", 1), in, 1, 1,
		"at least 2", "a block size of 1");
}

/* A fused op against its unfused chain run through the other kernels
 * (BiasAdd, Relu, Relu6, LeakyRelu): the same float operations in the
 * same order, so the same bits, which is what lets a fusing rewrite keep
 * a model's numerics bit for bit. */
static void test_fused_equals_chain(void)
{
	static const char *acts[] = {"Relu", "Relu6", "LeakyRelu"};
	geo g = {2, 9, 8, 5, 3, 3, 6, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
	for (int t = 0; t < 3; t++) {
		ge_xt *x = rnd(4, g.n, g.h, g.w, g.c);
		ge_xt *f = rnd(4, g.kh, g.kw, g.c, g.co), *b = rnd(1, g.co);
		for (int64_t i = 0; i < x->n; i++)
			((float *)x->data)[i] *= 4;
		const char *alpha = A_F("alpha", 0.3);
		ge_xt *in[3] = {ge_xt_ref(x), ge_xt_ref(f)};
		ge_xt *y = run1("Conv2D", conv_attrs(&g, 0), in, 2);
		in[0] = y, in[1] = ge_xt_ref(b);
		y = y ? run1("BiasAdd", "", in, 2) : NULL;
		in[0] = y;
		y = y ? run1(acts[t], alpha, in, 1) : NULL;
		in[0] = x, in[1] = f, in[2] = b;
		ge_xt *z = run1("_FusedConv2D",
				cat(3, conv_attrs(&g, 0),
				    A_FUSED(t == 0 ? "BiasAdd Relu" :
					    t == 1 ? "BiasAdd Relu6" :
						     "BiasAdd LeakyRelu", 1),
				    A_F("leakyrelu_alpha", 0.3)), in, 3);
		ok(y && z && y->n == z->n &&
		   !memcmp(y->data, z->data, y->n * sizeof(float)),
		   "_FusedConv2D BiasAdd %s is Conv2D, BiasAdd, %s bit for bit "
		   "%s", acts[t], acts[t], y && z ? "" : errmsg);
		ge_xt_unref(y);
		ge_xt_unref(z);
	}
	ge_xt *a = rnd(2, 5, 7), *m = rnd(2, 7, 4), *b = rnd(1, 4);
	for (int64_t i = 0; i < a->n; i++)
		((float *)a->data)[i] *= 8;
	ge_xt *in[3] = {ge_xt_ref(a), ge_xt_ref(m)};
	ge_xt *y = run1("MatMul", "", in, 2);
	in[0] = y, in[1] = ge_xt_ref(b);
	y = y ? run1("BiasAdd", "", in, 2) : NULL;
	in[0] = y;
	y = y ? run1("Relu6", "", in, 1) : NULL;
	in[0] = a, in[1] = m, in[2] = b;
	ge_xt *z = run1("_FusedMatMul", A_FUSED("BiasAdd Relu6", 1), in, 3);
	ok(y && z && !memcmp(y->data, z->data, y->n * sizeof(float)),
	   "_FusedMatMul BiasAdd Relu6 is MatMul, BiasAdd, Relu6 bit for bit");
	ge_xt_unref(y);
	ge_xt_unref(z);
	geo d = {1, 8, 8, 40, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
	ge_xt *x = rnd(4, d.n, d.h, d.w, d.c), *f = rnd(4, 3, 3, d.c, 1);
	b = rnd(1, d.c);
	in[0] = ge_xt_ref(x), in[1] = ge_xt_ref(f);
	y = run1("DepthwiseConv2dNative", conv_attrs(&d, 0), in, 2);
	in[0] = y, in[1] = ge_xt_ref(b);
	y = y ? run1("BiasAdd", "", in, 2) : NULL;
	in[0] = y;
	y = y ? run1("Relu", "", in, 1) : NULL;
	in[0] = x, in[1] = f, in[2] = b;
	z = run1("FusedDepthwiseConv2dNative",
		 cat(2, conv_attrs(&d, 0), A_FUSED("BiasAdd Relu", 1)), in, 3);
	ok(y && z && !memcmp(y->data, z->data, y->n * sizeof(float)),
	   "FusedDepthwiseConv2dNative BiasAdd Relu is its chain bit for bit");
	ge_xt_unref(y);
	ge_xt_unref(z);
}

/* Tensors of no element may have huge dims elsewhere: every kernel must
 * see that it has nothing to do, not loop over the other dims. */
static void test_empty(void)
{
	int64_t big[4] = {(int64_t)1 << 40, (int64_t)1 << 20, 1, 0};
	int64_t bm[4] = {(int64_t)1 << 40, (int64_t)1 << 20, 0, 3};
	int64_t bm2[4] = {1, 1, 3, 2};
	ge_xt *in[5], *o[6];
	in[0] = mk(F32, 4, big);
	o[0] = run1("MaxPool", cat(3, A_L("ksize", 4, 1, 1, 1, 1),
				   A_L("strides", 4, 1, 1, 1, 1),
				   A_S("padding", "VALID")), in, 1);
	ok(o[0] && o[0]->n == 0 && o[0]->dims[0] == big[0],
	   "MaxPool of [2^40,2^20,1,0] returns at once, empty %s",
	   o[0] ? ge_xt_describe(o[0], errmsg, 100) : errmsg);
	ge_xt_unref(o[0]);
	in[0] = mk(F32, 4, big);
	o[0] = run1("AvgPool", cat(4, A_L("ksize", 4, 1, 1, 1, 1),
				   A_L("strides", 4, 1, 1, 1, 1),
				   A_S("padding", "VALID"),
				   A_S("data_format", "NCHW")), in, 1);
	ok(o[0] && o[0]->n == 0, "AvgPool NCHW of it too %s",
	   o[0] ? "" : errmsg);
	ge_xt_unref(o[0]);
	int64_t fd[4] = {1, 1, 0, 1};
	in[0] = mk(F32, 4, big), in[1] = mk(F32, 4, fd);
	o[0] = run1("DepthwiseConv2dNative", cat(2, A_L("strides", 4, 1, 1, 1,
							 1),
						 A_S("padding", "SAME")), in, 2);
	ok(o[0] && o[0]->n == 0, "DepthwiseConv2dNative of it %s",
	   o[0] ? ge_xt_describe(o[0], errmsg, 100) : errmsg);
	ge_xt_unref(o[0]);
	in[0] = mk(F32, 4, bm), in[1] = mk(F32, 4, bm2);
	o[0] = run1("BatchMatMulV2", "", in, 2);
	ok(o[0] && o[0]->n == 0, "BatchMatMulV2 of 2^60 empty products %s",
	   o[0] ? "" : errmsg);
	ge_xt_unref(o[0]);
	int64_t ad[2] = {(int64_t)1 << 40, 0}, bd[2] = {0, 0}, z = 0;
	in[0] = mk(F32, 2, ad), in[1] = mk(F32, 2, bd), in[2] = mk(F32, 1, &z);
	o[0] = run1("_FusedMatMul", A_FUSED("BiasAdd Relu", 1), in, 3);
	ok(o[0] && o[0]->n == 0, "_FusedMatMul of [2^40,0] by [0,0] %s",
	   o[0] ? "" : errmsg);
	ge_xt_unref(o[0]);
	in[0] = mk(F32, 4, big);
	for (int i = 1; i < 5; i++)
		in[i] = mk(F32, 1, &z);
	int rc = run("FusedBatchNormV3", A_B("is_training", 0), in, 5, o, 6);
	ok(!rc && o[0]->n == 0, "FusedBatchNormV3 of it %s", rc ? errmsg :
	   ge_xt_describe(o[0], errmsg, 100));
	for (int i = 0; !rc && i < 6; i++)
		ge_xt_unref(o[i]);
	in[0] = mk(F32, 4, big);
	o[0] = run1("DepthToSpace", A_I("block_size", 2), in, 1);
	ok(o[0] && o[0]->n == 0, "DepthToSpace of it %s", o[0] ? "" : errmsg);
	ge_xt_unref(o[0]);
}

static void test_registry(void)
{
	static const char *types[] = {
		"AvgPool", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3",
		"BatchToSpaceND", "Conv2D", "Conv2DBackpropFilter",
		"Conv2DBackpropInput", "DepthToSpace",
		"DepthwiseConv2dNative", "Einsum", "FusedBatchNorm", "FusedBatchNormV2",
		"FusedBatchNormV3", "FusedDepthwiseConv2dNative", "MatMul",
		"MaxPool", "MaxPoolGrad", "MaxPoolV2", "NonMaxSuppressionV2",
		"NonMaxSuppressionV3", "NonMaxSuppressionV4",
		"NonMaxSuppressionV5", "ResizeBilinear",
		"ResizeNearestNeighbor", "SpaceToBatchND", "SpaceToDepth",
		"_FusedConv2D", "_FusedMatMul",
	};
	int all = 1;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!ge_kernel_find(types[i])) {
			tap_diag("no kernel for %s", types[i]);
			all = 0;
		}
	ok(all, "every heavy op type has a kernel");
}

int main(void)
{
	ge_xbudget_init(&budget);
	test_registry();
	test_matmul();
	test_batch_matmul();
	test_fused_matmul();
	test_einsum();
	test_conv2d();
	test_conv2d_refusals();
	test_fused_conv2d();
	test_depthwise();
	test_conv_backprop();
	test_pools();
	test_batch_norm();
	test_resize();
	test_nms();
	test_blocks();
	test_empty();
	test_fused_equals_chain();
	ok(budget.mem_live == 0, "every tensor and scratch was released (%llu "
	   "bytes live)", (unsigned long long)budget.mem_live);
	return tap_done();
}
