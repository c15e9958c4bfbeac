/*
 * kernels-eval-corpus: the runner's kernels against the constant
 * evaluator (lib/eval) on the constant parts of every corpus graph.
 * Every op whose data inputs are all known from Consts, and whose type
 * both have a kernel for, is run by both; dtypes, shapes and values must
 * agree (integers and bools exactly, floats within 1e-5 relative: the
 * evaluator rounds each kernel's result to the dtype).  One assertion per
 * model, naming the first op that differs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "exec/kernel.h"
#include "formats/model.h"
#include "tap.h"

#define MAXOUT 8

/* Op types compared, other than Const, with counts (a diagnostic). */
static struct { char type[64]; int n; } seen[256];
static int nseen;

static void tally(const char *type)
{
	if (!strcmp(type, "Const"))
		return;
	for (int i = 0; i < nseen; i++)
		if (!strcmp(seen[i].type, type)) {
			seen[i].n++;
			return;
		}
	if (nseen < 256) {
		snprintf(seen[nseen].type, sizeof seen[nseen].type, "%s", type);
		seen[nseen++].n = 1;
	}
}

typedef struct slot {
	int state; /* 0 not visited, 1 visiting, 2 known, 3 unknown */
	int nout;
	ge_xt *x[MAXOUT];
	ge_value v[MAXOUT];
} slot;

typedef struct run {
	ge_graph *g;
	slot *s;
	ge_xbudget budget;
	int compared, differ;
	char first[1024];
} run;

static int close_enough(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return fabs(a - b) <= 1e-6 + 1e-5 * fabs(b);
}

/* Whether kernel output x agrees with evaluator value v; why says how
 * not. */
static int agree(const ge_xt *x, const ge_value *v, char *why, size_t cap)
{
	if (x->dtype != v->dtype || x->rank != v->rank ||
	    memcmp(x->dims, v->dims, sizeof(int64_t) * (size_t)x->rank)) {
		char a[128];
		snprintf(why, cap, "kernel %s, evaluator dtype %d rank %d",
			 ge_xt_describe(x, a, sizeof a), v->dtype, v->rank);
		return 0;
	}
	for (int64_t k = 0; k < x->n; k++) {
		int same = v->d ? close_enough(ge_xt_get_double(x, k), v->d[k])
				: ge_xt_get_int64(x, k) == v->i[k];
		if (!same) {
			snprintf(why, cap, "element %lld: kernel %.9g, "
				 "evaluator %.9g", (long long)k,
				 ge_xt_get_double(x, k), ge_value_get(v, k));
			return 0;
		}
	}
	return 1;
}

static void visit(run *r, ge_opid id)
{
	slot *s = &r->s[id];
	if (s->state)
		return;
	s->state = 1;
	const char *type = ge_op_type(r->g, id);
	const ge_kdef *d = ge_kernel_find(type);
	int nin = (int)ge_op_num_inputs(r->g, id);
	int nout = ge_op_num_outputs(r->g, id);
	int isconst = !strcmp(type, "Const");
	if (isconst)
		nout = 1;
	if (!d || (!isconst && !ge_eval_supported(type)) || nout > MAXOUT ||
	    nin > 64 ||
	    (d->flags & GE_K_STATEFUL)) {
		s->state = 3;
		return;
	}
	ge_xt *xin[64];
	ge_value vin[64];
	for (int i = 0; i < nin; i++) {
		ge_tref t = ge_op_input(r->g, id, (size_t)i);
		if (t.op == GE_NOOP || t.index < 0) {
			s->state = 3;
			return;
		}
		visit(r, t.op);
		if (r->s[t.op].state != 2 || t.index >= r->s[t.op].nout) {
			s->state = 3;
			return;
		}
		xin[i] = r->s[t.op].x[t.index];
		vin[i] = r->s[t.op].v[t.index];
	}
	ge_error err = {0, ""}, verr = {0, ""};
	ge_kctx k = {r->g, id, type, ge_op_name(r->g, id), xin, nin, s->x,
		     nout, &r->budget, NULL, &err};
	int krc = d->fn(&k);
	int vrc = isconst ? ge_value_from_const(r->g, id, s->v, &verr)
			  : ge_eval_op(r->g, id, vin, nin, s->v, nout, &verr);
	if (krc == GE_OK && vrc == GE_OK) {
		char why[512];
		s->nout = nout;
		s->state = 2;
		tally(type);
		for (int o = 0; o < nout; o++) {
			r->compared++;
			if (!s->x[o] || !agree(s->x[o], &s->v[o], why,
					       sizeof why)) {
				if (!r->differ++)
					snprintf(r->first, sizeof r->first,
						 "%s (%s) output %d: %s",
						 ge_op_name(r->g, id), type, o,
						 s->x[o] ? why : "not set");
				s->state = 3;
			}
		}
		return;
	}
	if (krc == GE_OK)
		for (int o = 0; o < nout; o++) {
			ge_xt_unref(s->x[o]);
			s->x[o] = NULL;
		}
	if (vrc == GE_OK)
		for (int o = 0; o < nout; o++)
			ge_value_free(&s->v[o]);
	s->state = 3;
	/* the evaluator refuses far more than a kernel does (sizes it does
	 * not materialize); a kernel refusing what the evaluator computes
	 * is a difference */
	if (krc != GE_OK && vrc == GE_OK && !r->differ++)
		snprintf(r->first, sizeof r->first, "%s (%s): the kernel "
			 "refuses: %s", ge_op_name(r->g, id), type, err.msg);
}

static void one(const char *corpus, const char *rel, const char *kind)
{
	char path[8300];
	snprintf(path, sizeof path, "%s/%s", corpus, rel);
	if (!strncmp(kind, "SavedModel", 10)) {
		char *slash = strrchr(path, '/');
		if (slash)
			*slash = 0;
	}
	ge_load_opts o = {0};
	o.no_check = 1;
	ge_graph *g = NULL;
	ge_error err = {0, ""};
	if (ge_load(path, &o, &g, &err))
		return;
	run r = {0};
	r.g = g;
	ge_xbudget_init(&r.budget);
	size_t cap = ge_graph_capacity(g);
	r.s = calloc(cap ? cap : 1, sizeof *r.s);
	for (ge_opid id = 0; id < cap; id++)
		if (ge_op_alive(g, id))
			visit(&r, id);
	for (ge_opid id = 0; id < cap; id++)
		for (int q = 0; q < MAXOUT; q++) {
			ge_xt_unref(r.s[id].x[q]);
			if (r.s[id].state == 2 && q < r.s[id].nout)
				ge_value_free(&r.s[id].v[q]);
		}
	free(r.s);
	ok(!r.differ && r.budget.mem_live == 0, "%s: %d outputs agree%s%s", rel,
	   r.compared - r.differ, r.differ ? "; first difference: " : "",
	   r.first);
	ge_graph_free(g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus)
		tap_skip_all("corpus not found (set GE_CORPUS)");
	char path[4096];
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f)
		tap_skip_all("no MANIFEST.tsv");
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		char *kind = tab + 1;
		kind[strcspn(kind, "\t\n")] = 0;
		if (strcmp(kind, "GraphDef") && strcmp(kind, "GraphDef-text") &&
		    strcmp(kind, "MetaGraphDef") && strcmp(kind, "SavedModel") &&
		    strcmp(kind, "tfjs-model-json"))
			continue;
		if (strstr(line, "fuzz_generated/"))
			continue;
		one(corpus, line, kind);
	}
	fclose(f);
	for (int i = 0; i < nseen; i++)
		tap_diag("%-24s %5d ops compared", seen[i].type, seen[i].n);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
