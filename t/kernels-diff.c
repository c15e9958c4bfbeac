/*
 * kernels-diff: the runner's kernels against the constant evaluator
 * (lib/eval, which computes in float64 and rounds each result to the
 * dtype) on random small graphs: random shapes with broadcasting, random
 * axes, permutations, slices and paddings, float32 and int32.  Both must
 * agree (integers exactly, floats within 1e-5 relative) or both refuse;
 * the kernel refusing what the evaluator computes is a difference.  One
 * assertion per op type over all its cases; the PRNG is seeded, so a
 * failure repeats.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "editor/fold.h"
#include "ktest.h"

static uint64_t rs = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs % n);
}

/* A random shape into dims (text "2,3" into txt): rank up to maxr. */
static int rshape(int maxr, int64_t *dims, char *txt)
{
	int r = (int)rnd((uint32_t)maxr + 1);
	txt[0] = 0;
	for (int i = 0; i < r; i++) {
		dims[i] = 1 + rnd(4);
		sprintf(txt + strlen(txt), "%s%lld", i ? "," : "",
			(long long)dims[i]);
	}
	return r;
}

/* Values text for n elements: floats in [-3, 3] or ints in [-9, 9]
 * (nonzero when nz). */
static void rvals(int64_t n, int isf, int nz, char *txt)
{
	txt[0] = 0;
	for (int64_t k = 0; k < n; k++) {
		if (isf) {
			double v = ((double)rnd(60001) - 30000) / 10000;
			sprintf(txt + strlen(txt), " %.4f", v);
		} else {
			int v = (int)rnd(19) - 9;
			if (nz && v == 0)
				v = 1;
			sprintf(txt + strlen(txt), " %d", v);
		}
	}
}

/* A shape that broadcasts against dims: some dims set to 1, some leading
 * ones dropped. */
static int bshape(int r, const int64_t *dims, int64_t *out, char *txt)
{
	int drop = r ? (int)rnd((uint32_t)r + 1) : 0;
	txt[0] = 0;
	for (int i = drop; i < r; i++) {
		out[i - drop] = rnd(3) ? dims[i] : 1;
		sprintf(txt + strlen(txt), "%s%lld", i > drop ? "," : "",
			(long long)out[i - drop]);
	}
	return r - drop;
}

static int64_t count(int r, const int64_t *d)
{
	int64_t n = 1;
	for (int i = 0; i < r; i++)
		n *= d[i];
	return n;
}

static int close_enough(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return fabs(a - b) <= 1e-6 + 1e-5 * fabs(b);
}

typedef struct tally {
	int cases, compared, bad;
	char first[2048];
} tally;

/* Runs tensor "y" of the graph built so far by both and compares. */
static void check(tally *t)
{
	ge_graph *g = parse(kt_text);
	char text[sizeof kt_text];
	memcpy(text, kt_text, kt_len + 1);
	kt_len = 0;
	ge_tref tr;
	char why[1024] = "";
	t->cases++;
	if (ge_graph_find_tensor(g, "y", &tr) != GE_OK) {
		ge_graph_free(g);
		return;
	}
	ge_value v;
	ge_error verr = {0, ""}, kerr = {0, ""};
	int vrc = ge_eval_tensor(g, tr, &v, &verr);
	ge_xt *out[8] = {0};
	int n = ge_op_num_outputs(g, tr.op);
	int krc = kt_run_op(g, tr.op, out, n < 1 ? 1 : n, &kerr);
	if (vrc == GE_OK && krc != GE_OK)
		snprintf(why, sizeof why, "the kernel refuses: %.900s",
			 kerr.msg);
	else if (vrc == GE_OK) {
		const ge_xt *x = out[0];
		t->compared++;
		char desc[256];
		if (x->dtype != v.dtype || x->rank != v.rank ||
		    memcmp(x->dims, v.dims, sizeof(int64_t) * (size_t)x->rank))
			snprintf(why, sizeof why, "kernel %s, evaluator dtype %d "
				 "rank %d", ge_xt_describe(x, desc, sizeof desc),
				 v.dtype, v.rank);
		for (int64_t k = 0; !why[0] && k < x->n; k++)
			if (v.d ? !close_enough(ge_xt_get_double(x, k), v.d[k])
				: ge_xt_get_int64(x, k) != v.i[k])
				snprintf(why, sizeof why, "element %lld: kernel "
					 "%.9g, evaluator %.9g", (long long)k,
					 ge_xt_get_double(x, k),
					 ge_value_get(&v, k));
	}
	if (vrc == GE_OK)
		ge_value_free(&v);
	for (int i = 0; i < 8; i++)
		ge_xt_unref(out[i]);
	if (why[0] && !t->bad++) {
		snprintf(t->first, sizeof t->first, "%s", why);
		if (getenv("GE_KD_SHOW"))
			tap_diag("%s", text);
	}
	ge_graph_free(g);
}

static void report(const char *type, tally *t)
{
	ok(!t->bad && t->compared > 0, "%s: %d of %d random cases compared, "
	   "%d differ%s%s", type, t->compared, t->cases, t->bad,
	   t->bad ? "; first: " : "", t->first);
}

static char tA[64], tB[64], vA[8192], vB[8192], attrs[512];

static void unary(const char *type, int isf)
{
	tally t = {0};
	for (int c = 0; c < 20; c++) {
		int64_t d[8];
		int r = rshape(3, d, tA);
		rvals(count(r, d), isf, 0, vA);
		kt_c("a", isf ? "DT_FLOAT" : "DT_INT32", tA, vA);
		snprintf(attrs, sizeof attrs, "attr { key: \"T\" value { type: "
			 "%s } }", isf ? "DT_FLOAT" : "DT_INT32");
		kt_op("y", type, "a", attrs);
		check(&t);
	}
	report(type, &t);
}

static void binary(const char *type, int isf, int nz)
{
	tally t = {0};
	for (int c = 0; c < 40; c++) {
		int64_t d[8], e[8];
		int r = rshape(4, d, tA);
		int r2 = bshape(r, d, e, tB);
		if (rnd(2)) { /* either side may be the smaller */
			char tmp[64];
			strcpy(tmp, tA);
			strcpy(tA, tB);
			strcpy(tB, tmp);
			int64_t tt[8];
			memcpy(tt, d, sizeof tt);
			memcpy(d, e, sizeof tt);
			memcpy(e, tt, sizeof tt);
			int q = r;
			r = r2;
			r2 = q;
		}
		rvals(count(r, d), isf, 0, vA);
		rvals(count(r2, e), isf, nz, vB);
		const char *dt = isf ? "DT_FLOAT" : "DT_INT32";
		kt_c("a", dt, tA, vA);
		kt_c("b", dt, tB, vB);
		snprintf(attrs, sizeof attrs, "attr { key: \"T\" value { type: "
			 "%s } }", dt);
		kt_op("y", type, "a,b", attrs);
		check(&t);
	}
	report(type, &t);
}

static void reduce(const char *type, int isf)
{
	tally t = {0};
	for (int c = 0; c < 30; c++) {
		int64_t d[8];
		int r = 1 + rshape(3, d, tA) % 4;
		if (!tA[0] || count(r, d) == 0) {
			r = 2;
			d[0] = 2;
			d[1] = 3;
			strcpy(tA, "2,3");
		}
		r = 0;
		for (char *p = tA; *p; p++)
			r += *p == ',';
		r++;
		rvals(count(r, d), isf, 0, vA);
		int na = (int)rnd((uint32_t)r + 1);
		char ax[64] = "";
		int used[8] = {0};
		int m = 0;
		for (int i = 0; i < na; i++) {
			int a = (int)rnd((uint32_t)r);
			if (used[a])
				continue;
			used[a] = 1;
			sprintf(ax + strlen(ax), " %d", rnd(2) ? a : a - r);
			m++;
		}
		char sh[16];
		sprintf(sh, "%d", m);
		const char *dt = isf ? "DT_FLOAT" : "DT_INT32";
		kt_c("a", dt, tA, vA);
		kt_c("x", "DT_INT32", sh, ax);
		snprintf(attrs, sizeof attrs, "attr { key: \"T\" value { type: "
			 "%s } } attr { key: \"keep_dims\" value { b: %s } }", dt,
			 rnd(2) ? "true" : "false");
		kt_op("y", type, "a,x", attrs);
		check(&t);
	}
	report(type, &t);
}

/* A float input of rank 1..4 named a; its shape in d. */
static int input(int64_t *d)
{
	int r;
	do
		r = rshape(4, d, tA);
	while (r == 0);
	rvals(count(r, d), 1, 0, vA);
	kt_c("a", "DT_FLOAT", tA, vA);
	return r;
}

static void layout(void)
{
	tally tt = {0}, tc = {0}, ts = {0}, tp = {0}, tg = {0}, tl = {0},
	      tm = {0}, tk = {0};
	for (int c = 0; c < 60; c++) {
		int64_t d[8];
		int r = input(d);
		/* Transpose by a random permutation */
		int p[8];
		for (int i = 0; i < r; i++)
			p[i] = i;
		for (int i = r - 1; i > 0; i--) {
			int j = (int)rnd((uint32_t)i + 1), q = p[i];
			p[i] = p[j];
			p[j] = q;
		}
		char pv[64] = "", sh[16];
		for (int i = 0; i < r; i++)
			sprintf(pv + strlen(pv), " %d", p[i]);
		sprintf(sh, "%d", r);
		kt_c("p", "DT_INT32", sh, pv);
		kt_op("y", "Transpose", "a,p", "");
		check(&tt);
		/* ConcatV2 of a with itself on a random axis */
		r = input(d);
		sprintf(pv, "%d", (int)rnd((uint32_t)r * 2) - r);
		kt_c("x", "DT_INT32", "", pv);
		kt_op("y", "ConcatV2", "a,a,x", KT_ATTR_INT("N", 2));
		check(&tc);
		/* StridedSlice with random begin, end, strides and masks */
		r = input(d);
		char b[64] = "", e[64] = "", s[64] = "";
		for (int i = 0; i < r; i++) {
			sprintf(b + strlen(b), " %d", (int)rnd(9) - 4);
			sprintf(e + strlen(e), " %d", (int)rnd(9) - 4);
			int st = (int)rnd(5) - 2;
			sprintf(s + strlen(s), " %d", st ? st : 1);
		}
		sprintf(sh, "%d", r);
		snprintf(attrs, sizeof attrs,
			 "attr { key: \"begin_mask\" value { i: %d } } "
			 "attr { key: \"end_mask\" value { i: %d } } "
			 "attr { key: \"shrink_axis_mask\" value { i: %d } } "
			 "attr { key: \"new_axis_mask\" value { i: %d } } "
			 "attr { key: \"ellipsis_mask\" value { i: %d } }",
			 (int)rnd(16), (int)rnd(16), rnd(3) ? 0 : (int)rnd(16),
			 rnd(3) ? 0 : (int)rnd(16), rnd(4) ? 0 : 1 << rnd(4));
		kt_c("b", "DT_INT32", sh, b);
		kt_c("e", "DT_INT32", sh, e);
		kt_c("s", "DT_INT32", sh, s);
		kt_op("y", "StridedSlice", "a,b,e,s", attrs);
		check(&ts);
		/* Pad */
		r = input(d);
		char pads[64] = "", psh[16];
		for (int i = 0; i < 2 * r; i++)
			sprintf(pads + strlen(pads), " %d", (int)rnd(3));
		sprintf(psh, "%d,2", r);
		kt_c("p", "DT_INT32", psh, pads);
		kt_op("y", "Pad", "a,p", "");
		check(&tp);
		/* GatherV2 on a random axis */
		r = input(d);
		int ax = (int)rnd((uint32_t)r);
		char iv[64] = "";
		for (int i = 0; i < 3; i++)
			sprintf(iv + strlen(iv), " %d", (int)rnd((uint32_t)d[ax]));
		kt_c("i", "DT_INT32", "3", iv);
		sprintf(pv, "%d", ax);
		kt_c("x", "DT_INT32", "", pv);
		kt_op("y", "GatherV2", "a,i,x", "");
		check(&tg);
		/* Tile */
		r = input(d);
		char mv[64] = "";
		for (int i = 0; i < r; i++)
			sprintf(mv + strlen(mv), " %d", 1 + (int)rnd(2));
		sprintf(sh, "%d", r);
		kt_c("m", "DT_INT32", sh, mv);
		kt_op("y", "Tile", "a,m", "");
		check(&tl);
		/* Softmax over the last axis */
		input(d);
		kt_op("y", "Softmax", "a", "");
		check(&tm);
		/* Slice */
		r = input(d);
		char bv[64] = "", zv[64] = "";
		for (int i = 0; i < r; i++) {
			int bb = (int)rnd((uint32_t)d[i] + 1);
			sprintf(bv + strlen(bv), " %d", bb);
			sprintf(zv + strlen(zv), " %d", rnd(4) ? (int)rnd(
				(uint32_t)(d[i] - bb + 1)) : -1);
		}
		sprintf(sh, "%d", r);
		kt_c("b", "DT_INT32", sh, bv);
		kt_c("z", "DT_INT32", sh, zv);
		kt_op("y", "Slice", "a,b,z", "");
		check(&tk);
	}
	report("Transpose", &tt);
	report("ConcatV2", &tc);
	report("StridedSlice", &ts);
	report("Pad", &tp);
	report("GatherV2", &tg);
	report("Tile", &tl);
	report("Softmax", &tm);
	report("Slice", &tk);
}

int main(void)
{
	static const char *fu[] = {
		"Abs", "Neg", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Tanh",
		"Sigmoid", "Relu", "Relu6", "Elu", "Selu", "Softplus",
		"Softsign", "Square", "Reciprocal", "Floor", "Ceil", "Round",
		"Sign", "Sin", "Cos", "Erf", "Erfc", "Expm1", "Atan", NULL};
	static const char *iu[] = {"Abs", "Neg", "Square", "Sign", NULL};
	static const char *fb[] = {
		"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Maximum",
		"Minimum", "SquaredDifference", "FloorDiv", "FloorMod", "Less",
		"LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
		"DivNoNan", NULL};
	static const char *ib[] = {
		"Add", "Sub", "Mul", "Maximum", "Minimum", "FloorDiv",
		"FloorMod", "TruncateDiv", "TruncateMod", "Div", "Less",
		"Equal", "SquaredDifference", NULL};
	static const char *rd[] = {"Sum", "Mean", "Max", "Min", "Prod", NULL};
	ge_xbudget_init(&kt_budget);
	for (int i = 0; fu[i]; i++)
		unary(fu[i], 1);
	for (int i = 0; iu[i]; i++)
		unary(iu[i], 0);
	for (int i = 0; fb[i]; i++)
		binary(fb[i], 1, 0);
	for (int i = 0; ib[i]; i++)
		binary(ib[i], 0, 1);
	for (int i = 0; rd[i]; i++) {
		reduce(rd[i], 1);
		reduce(rd[i], 0);
	}
	layout();
	ok(kt_budget.mem_live == 0, "every tensor was released");
	return tap_done();
}
