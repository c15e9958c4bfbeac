/*
 * cmd_eval.c: `gerewrite eval MODEL` (run a model on given or seeded
 * inputs, print and save its outputs) and `gerewrite verify A B` (run
 * two models on the same inputs and compare their outputs), over
 * lib/exec/verify.h; and the check `run --verify` and `batch --verify`
 * make after a recipe (cli_verify_recipe).
 *
 * Errors (a feed of the wrong shape or dtype, an input the model does
 * not have, an op without a kernel, a loop over --max-iterations, a feed
 * file that is not .npy) are one line naming the input or the op, exit
 * 2, and nothing is written: outputs are saved only after every output
 * was computed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lauxlib.h>

#include "cli.h"
#include "base/bounds.h"
#include "exec/verify.h"
#include "base/tensor.h"

/* ------------------------------------------------------------ shared */

enum {
	O_SIGNATURE = 1, O_SIGNATURE_B, O_INPUT, O_OUTPUT, O_DIM, O_SEED,
	O_OUT, O_TAGS, O_MAX_ITER, O_VALUES, O_ATOL, O_RTOL, O_MAP,
	O_REPORT, O_PER_OP, O_QUIET, O_REPEAT, O_STATS,
};

/* What eval and verify take. */
struct xargs {
	struct cli_args a;
	const char *signature, *signature_b, *outdir, *tags, *report;
	const char **inputs, **outputs, **map;
	size_t ninputs, noutputs, nmap;
	int64_t dim, max_iter, values, repeat;
	uint64_t seed;
	double atol, rtol;
	int per_op, quiet, stats;
};

static int num_opt(const char *cmd, const char *opt, const char *val,
		   double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= lo && v <= hi))
		return cli_usage(cmd, "%s needs a number from %g to %g (got "
				      "'%s')", opt, lo, hi, val);
	*out = v;
	return 0;
}

static int xargs_parse(struct xargs *x, const char *cmd, int argc,
		       char **argv, const struct cli_opt *opts)
{
	const char *val;
	int key;
	double d;
	memset(x, 0, sizeof *x);
	x->atol = x->rtol = 1e-5;
	x->values = 8;
	x->inputs = ge_xcalloc((size_t)argc + 1, sizeof *x->inputs);
	x->outputs = ge_xcalloc((size_t)argc + 1, sizeof *x->outputs);
	x->map = ge_xcalloc((size_t)argc + 1, sizeof *x->map);
	cli_args_init(&x->a, cmd, argc, argv);
	while ((key = cli_getopt(&x->a, opts, &val)) > 0) {
		int rc = 0;
		switch (key) {
		case O_SIGNATURE: x->signature = val; break;
		case O_SIGNATURE_B: x->signature_b = val; break;
		case O_INPUT: x->inputs[x->ninputs++] = val; break;
		case O_OUTPUT: x->outputs[x->noutputs++] = val; break;
		case O_MAP:
			if (!strchr(val, '=') || *val == '=')
				return cli_usage(cmd, "--map needs A=B (got "
						      "'%s')", val);
			x->map[x->nmap++] = val;
			break;
		case O_OUT: x->outdir = val; break;
		case O_TAGS: x->tags = val; break;
		case O_REPORT: x->report = val; break;
		case O_PER_OP: x->per_op = 1; break;
		case O_QUIET: x->quiet = 1; break;
		case O_STATS: x->stats = 1; break;
		case O_REPEAT:
			if (!(rc = num_opt(cmd, "--repeat", val, 1, 1000000,
					   &d)))
				x->repeat = (int64_t)d;
			break;
		case O_DIM:
			if (!(rc = num_opt(cmd, "--dim", val, 1, 1 << 20, &d)))
				x->dim = (int64_t)d;
			break;
		case O_VALUES:
			if (!(rc = num_opt(cmd, "--values", val, 0, 1 << 20,
					   &d)))
				x->values = (int64_t)d;
			break;
		case O_MAX_ITER:
			if (!(rc = num_opt(cmd, "--max-iterations", val, 1,
					   1e12, &d)))
				x->max_iter = (int64_t)d;
			break;
		case O_SEED:
			if (!(rc = num_opt(cmd, "--seed", val, 0, 9e15, &d)))
				x->seed = (uint64_t)d;
			break;
		case O_ATOL: rc = num_opt(cmd, "--atol", val, 0, 1e300,
					  &x->atol); break;
		case O_RTOL: rc = num_opt(cmd, "--rtol", val, 0, 1e300,
					  &x->rtol); break;
		}
		if (rc)
			return rc;
	}
	return key < 0 ? EXIT_USAGE : 0;
}

static void xargs_free(struct xargs *x)
{
	free(x->inputs);
	free(x->outputs);
	free(x->map);
	cli_args_free(&x->a);
}

static int load(const char *path, const struct xargs *x, ge_graph **g)
{
	struct cli_model_opts mo = {0};
	mo.tags = x->tags;
	mo.allow_missing_variables = 1;
	return cli_load_model(path, &mo, g);
}

/* ------------------------------------------------------------ eval */

static const struct cli_opt eval_opts[] = {
	{"signature", 's', 1, O_SIGNATURE},
	{"input", 'i', 1, O_INPUT},
	{"output", 0, 1, O_OUTPUT},
	{"dim", 0, 1, O_DIM},
	{"seed", 0, 1, O_SEED},
	{"out", 'o', 1, O_OUT},
	{"tags", 't', 1, O_TAGS},
	{"max-iterations", 0, 1, O_MAX_ITER},
	{"values", 'n', 1, O_VALUES},
	{"repeat", 0, 1, O_REPEAT},
	{"stats", 0, 0, O_STATS},
	{NULL, 0, 0, 0},
};

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_STRING = 7, DT_COMPLEX64 = 8,
       DT_BFLOAT16 = 14, DT_COMPLEX128 = 18, DT_HALF = 19 };

/* One line: key (tensor), dtype and shape, min, max, mean, first values. */
static void print_tensor(const char *key, const char *tensor, const ge_xt *t,
			 int64_t nvalues)
{
	char desc[256];
	ge_xt_describe(t, desc, sizeof desc);
	if (strcmp(key, tensor) != 0)
		printf("%s (%s) %s", key, tensor, desc);
	else
		printf("%s %s", key, desc);
	ge_xstats s;
	int cx = t->dtype == DT_COMPLEX64 || t->dtype == DT_COMPLEX128;
	if (!cx && ge_xstats_of(t, &s) && s.counted)
		printf(" min %.6g max %.6g mean %.6g", s.min, s.max, s.mean);
	if (!cx && ge_xstats_of(t, &s) && s.nan)
		printf(" nan %" PRId64, s.nan);
	int64_t n = t->n < nvalues ? t->n : nvalues;
	if (n) {
		printf(" [");
		for (int64_t k = 0; k < n; k++) {
			if (k)
				printf(", ");
			if (t->dtype == DT_STRING) {
				const ge_xstr *xs = &((const ge_xstr *)t->data)[k];
				printf("\"%.*s\"", (int)(xs->len > 40 ? 40 : xs->len),
				       xs->p ? xs->p : "");
			} else if (t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE ||
				   t->dtype == DT_HALF ||
				   t->dtype == DT_BFLOAT16) {
				printf("%.6g", ge_xt_get_double(t, k));
			} else if (t->dtype == DT_COMPLEX64) {
				const float *c = t->data;
				printf("%.6g%+.6gj", c[2 * k], c[2 * k + 1]);
			} else if (t->dtype == DT_COMPLEX128) {
				const double *c = t->data;
				printf("%.6g%+.6gj", c[2 * k], c[2 * k + 1]);
			} else {
				printf("%" PRId64, ge_xt_get_int64(t, k));
			}
		}
		printf("%s]", t->n > n ? ", ..." : "");
	}
	printf("\n");
}

/* A file name from a tensor name: what is not a letter, digit, '.', '-'
 * or '_' becomes '_' ("scope/op:0" -> "scope_op_0"); never "." or "..". */
static void safe_name(const char *name, char *buf, size_t cap)
{
	size_t n = 0;
	for (const char *p = name; *p && n + 5 < cap; p++) {
		char c = *p;
		int okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' ||
			  c == '_';
		buf[n++] = okc ? c : '_';
	}
	buf[n] = 0;
	if (!n || buf[0] == '.')
		memmove(buf + 1, buf, n + 1), buf[0] = '_';
}

static int save_outputs(const char *dir, char **keys, ge_xt **outs,
			size_t n)
{
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		cli_errmsg("%s: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		char name[512], path[4096];
		safe_name(keys[i], name, sizeof name);
		/* two outputs whose names clash get their index */
		for (size_t j = 0; j < i; j++) {
			char other[512];
			safe_name(keys[j], other, sizeof other);
			if (!strcmp(other, name)) {
				size_t l = strlen(name);
				snprintf(name + l, sizeof name - l, "_%zu", i);
				break;
			}
		}
		snprintf(path, sizeof path, "%s/%s.npy", dir, name);
		ge_error err;
		if (ge_npy_write(path, outs[i], &err) != GE_OK) {
			cli_errmsg("%s", err.msg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Fetches: --output names (a key of the interface, or any tensor), or
 * every output of the interface. */
static size_t eval_fetches(const ge_xiface *f, const struct xargs *x,
			   char **keys, const char **tensors)
{
	if (!x->noutputs) {
		for (size_t i = 0; i < f->nout; i++) {
			keys[i] = f->out[i].key;
			tensors[i] = f->out[i].tensor;
		}
		return f->nout;
	}
	for (size_t i = 0; i < x->noutputs; i++) {
		const ge_xport *p = ge_xiface_find(f->out, f->nout,
						   x->outputs[i]);
		keys[i] = p ? p->key : (char *)x->outputs[i];
		tensors[i] = p ? p->tensor : x->outputs[i];
	}
	return x->noutputs;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Runs the session x->repeat times (at least once) on the same feeds,
 * keeping the last run's outputs; with --stats, says on stderr the best
 * and median run (session opened, the variables restored, before the
 * clock starts), the peak of live tensors and the work. */
static int eval_runs(ge_graph *g, const struct xargs *x, ge_xopts *o,
		     const ge_xfeeds *fd, const char *const *fetch, size_t n,
		     ge_xt **outs, ge_error *err)
{
	ge_xsession *s;
	int rc = ge_xsession_open(g, o, &s, err);
	if (rc)
		return rc;
	int64_t runs = x->repeat > 0 ? x->repeat : 1;
	double *t = ge_xcalloc((size_t)runs, sizeof *t);
	ge_xfeed *feeds = ge_xmalloc((fd->n + 1) * sizeof *feeds);
	size_t nfeeds = ge_xfeeds_list(fd, feeds);
	for (int64_t r = 0; !rc && r < runs; r++) {
		for (size_t i = 0; i < n; i++) {
			ge_xt_unref(outs[i]);
			outs[i] = NULL;
		}
		double t0 = now();
		rc = ge_xsession_run(s, feeds, (int)nfeeds, fetch, (int)n,
				     outs, err);
		t[r] = now() - t0;
	}
	if (!rc && x->stats) {
		char peak[32];
		qsort(t, (size_t)runs, sizeof *t, by_double);
		fprintf(stderr, "eval: run %.4f s (best of %" PRId64
			", median %.4f s), peak of live tensors %s, work %"
			PRIu64 " units\n", t[0], runs, t[runs / 2],
			ge_format_size(ge_xsession_peak(s), peak, sizeof peak),
			ge_xsession_work(s));
	}
	free(t);
	free(feeds);
	ge_xsession_close(s);
	return rc;
}

static int eval_model(ge_graph *g, const struct xargs *x)
{
	ge_xiface f;
	ge_error err;
	const char *model = x->a.pos[0];
	if (ge_xiface_get(g, x->signature, &f, &err)) {
		cli_errmsg("%s", err.msg);
		return EXIT_USAGE;
	}
	ge_xbudget b;
	ge_xbudget_init(&b);
	ge_xfeeds fd;
	if (ge_xfeeds_make(&f, x->inputs, x->ninputs, NULL, 0, x->seed,
			   x->dim, &b, &fd, &err)) {
		cli_errmsg("%s: %s", model, err.msg);
		ge_xiface_free(&f);
		return EXIT_USAGE;
	}
	size_t cap = f.nout + x->noutputs + 1;
	char **keys = ge_xcalloc(cap, sizeof *keys);
	const char **tensors = ge_xcalloc(cap, sizeof *tensors);
	ge_xt **outs = ge_xcalloc(cap, sizeof *outs);
	size_t n = eval_fetches(&f, x, keys, tensors);
	ge_xopts o = GE_XOPTS_INIT;
	o.seed = x->seed;
	o.max_iterations = x->max_iter;
	int rc = 0;
	if (!n) {
		cli_errmsg("%s: no outputs to fetch (name some with --output)",
			   model);
		rc = EXIT_USAGE;
	} else {
		o.budget = &b; /* the outputs outlive the session */
		if (eval_runs(g, x, &o, &fd, tensors, n, outs, &err)) {
			cli_errmsg("%s", err.msg); /* it names the model */
			rc = EXIT_USAGE;
		}
	}
	for (size_t i = 0; !rc && i < n; i++)
		print_tensor(keys[i], tensors[i], outs[i], x->values);
	if (!rc && x->outdir)
		rc = save_outputs(x->outdir, keys, outs, n);
	for (size_t i = 0; i < n; i++)
		ge_xt_unref(outs[i]);
	free(outs);
	free(keys);
	free(tensors);
	ge_xfeeds_free(&fd);
	ge_xiface_free(&f);
	return rc;
}

int cmd_eval(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct xargs x;
	int rc = xargs_parse(&x, "eval", argc, argv, eval_opts);
	if (!rc && x.a.npos != 1)
		rc = cli_usage("eval", x.a.npos ? "one MODEL at a time"
						: "MODEL is needed");
	ge_graph *g = NULL;
	if (!rc && !(rc = load(x.a.pos[0], &x, &g)))
		rc = eval_model(g, &x);
	if (g)
		ge_graph_free(g);
	xargs_free(&x);
	return rc;
}

/* ------------------------------------------------------------ verify */

static const struct cli_opt verify_opts[] = {
	{"signature", 's', 1, O_SIGNATURE},
	{"signature-b", 0, 1, O_SIGNATURE_B},
	{"input", 'i', 1, O_INPUT},
	{"output", 0, 1, O_OUTPUT},
	{"dim", 0, 1, O_DIM},
	{"seed", 0, 1, O_SEED},
	{"tags", 't', 1, O_TAGS},
	{"max-iterations", 0, 1, O_MAX_ITER},
	{"atol", 0, 1, O_ATOL},
	{"rtol", 0, 1, O_RTOL},
	{"map", 0, 1, O_MAP},
	{"report", 0, 1, O_REPORT},
	{"per-op", 0, 0, O_PER_OP},
	{"quiet", 'q', 0, O_QUIET},
	{NULL, 0, 0, 0},
};

static void print_pair(const ge_xverify_pair *p)
{
	const ge_xcmp *c = &p->cmp;
	if (strcmp(p->key_a, p->key_b))
		printf("%s = %s", p->key_a, p->key_b);
	else
		printf("%s", p->key_a);
	if (p->note[0]) {
		printf(": %s FAIL\n", p->note);
		return;
	}
	printf(" %s: max abs %.3g, max rel %.3g, mean abs %.3g, cosine "
	       "%.6f, %" PRId64 " of %" PRId64 " outside",
	       p->desc_a, c->max_abs, c->max_rel, c->mean_abs, c->cosine,
	       c->outside, c->n);
	if (c->nan_mismatch)
		printf(" (%" PRId64 " NaN against a number)", c->nan_mismatch);
	if (c->worst >= 0 && c->max_abs > 0)
		printf("; worst at %" PRId64 ": %.6g against %.6g", c->worst,
		       c->a_worst, c->b_worst);
	printf(" %s\n", p->ok ? "ok" : "FAIL");
}

static void print_verify(const ge_xverify_result *r, const struct xargs *x)
{
	for (size_t i = 0; i < r->npairs; i++)
		print_pair(&r->pairs[i]);
	if (r->per_op) {
		printf("per op: %zu tensors compared, %zu outside tolerance",
		       r->op_compared, r->op_outside);
		if (r->first_tensor)
			printf("; the first: %s (%s%s%s), max abs %.3g",
			       r->first_op, r->first_type ? r->first_type : "",
			       r->first_type ? ", " : "", r->first_tensor,
			       r->first_cmp.max_abs);
		printf("\n");
	}
	if (r->b_vars_from_a)
		printf("note: B has no checkpoint of its own: its variables "
		       "were read from A's\n");
	if (r->note[0])
		printf("note: %s\n", r->note);
	printf("%s (atol %g, rtol %g, %zu output%s)\n",
	       r->ok ? "within tolerance" : "OUTSIDE tolerance", x->atol,
	       x->rtol, r->npairs, r->npairs == 1 ? "" : "s");
}

static void verify_opts_of(const struct xargs *x, ge_xverify_opts *o)
{
	*o = (ge_xverify_opts)GE_XVERIFY_OPTS_INIT;
	o->signature_a = x->signature;
	o->signature_b = x->signature_b;
	o->inputs = x->inputs;
	o->ninputs = x->ninputs;
	o->outputs = x->outputs;
	o->noutputs = x->noutputs;
	o->map = x->map;
	o->nmap = x->nmap;
	o->seed = x->seed;
	o->dim = x->dim;
	o->atol = x->atol;
	o->rtol = x->rtol;
	o->per_op = x->per_op;
	o->max_iterations = x->max_iter;
}

static int write_report(const char *path, const ge_xverify_result *r,
			const char *a, const char *b)
{
	ge_buf buf = GE_BUF_INIT;
	ge_error err;
	ge_xverify_json(r, a, b, &buf);
	int rc = ge_file_write_atomic(path, buf.data, buf.len, &err);
	ge_buf_free(&buf);
	if (rc) {
		cli_errmsg("%s", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_verify(lua_State *L, int argc, char **argv)
{
	(void)L;
	struct xargs x;
	int rc = xargs_parse(&x, "verify", argc, argv, verify_opts);
	if (!rc && x.a.npos != 2)
		rc = cli_usage("verify", "two models are needed (A B)");
	ge_graph *a = NULL, *b = NULL;
	if (!rc && !(rc = load(x.a.pos[0], &x, &a)))
		rc = load(x.a.pos[1], &x, &b);
	if (!rc) {
		ge_xverify_opts o;
		ge_xverify_result r;
		ge_error err;
		verify_opts_of(&x, &o);
		if (ge_xverify(a, b, &o, &r, &err)) {
			cli_errmsg("%s", err.msg);
			rc = EXIT_USAGE;
		} else {
			if (!x.quiet)
				print_verify(&r, &x);
			if (x.report)
				rc = write_report(x.report, &r, x.a.pos[0],
						  x.a.pos[1]);
			if (!rc)
				rc = r.ok ? 0 : EXIT_RUNTIME;
		}
		ge_xverify_result_free(&r);
	}
	if (a)
		ge_graph_free(a);
	if (b)
		ge_graph_free(b);
	xargs_free(&x);
	return rc;
}

/* ------------------------------------------------------------ run --verify */

int cli_verify_opt(const char *cmd, const char *opt, const char *val,
		   struct cli_verify *v)
{
	if (!strcmp(opt, "--dim")) {
		double d;
		if (num_opt(cmd, opt, val, 1, 1 << 20, &d))
			return EXIT_USAGE;
		v->dim = (int64_t)d;
		return 0;
	}
	double *dst = !strcmp(opt, "--max-error") ? &v->max_error
		      : !strcmp(opt, "--atol") ? &v->atol : &v->rtol;
	return num_opt(cmd, opt, val, 0, 1e300, dst) ? EXIT_USAGE : 0;
}

/* The largest relative error over the outputs: max |b - a| / max |a|;
 * with skip_selected, over those no selection op picks (whose picks a
 * near tie may turn, ge_xverify_pair.selected_by). */
static double rel_error(const ge_xverify_result *r, int skip_selected)
{
	double e = 0;
	for (size_t i = 0; i < r->npairs; i++) {
		const ge_xcmp *c = &r->pairs[i].cmp;
		if (skip_selected && r->pairs[i].selected_by[0])
			continue;
		double scale = c->b_max_abs > 0 ? c->b_max_abs : 1;
		double v = c->nan_mismatch ? INFINITY : c->max_abs / scale;
		if (v > e || isnan(v))
			e = v;
	}
	return e;
}

struct numerics {
	const char *kind;
	double bound; /* lossy: the relative error allowed */
};

/* The recipe's declaration (recipe.lua checked it). */
static struct numerics recipe_numerics(lua_State *L, int rec)
{
	struct numerics n = {"exact", 0};
	lua_getfield(L, rec, "numerics");
	if (lua_type(L, -1) == LUA_TSTRING) {
		const char *k = lua_tostring(L, -1);
		n.kind = !strcmp(k, "rounding") ? "rounding"
			 : !strcmp(k, "lossy") ? "lossy"
			 : !strcmp(k, "changes") ? "changes" : "exact";
	}
	lua_getfield(L, rec, "max_error");
	n.bound = luaL_optnumber(L, -1, 0);
	lua_pop(L, 2);
	return n;
}

static void verify_json(struct run_result *res, const struct numerics *n,
			const ge_xverify_result *r, double err, int ok)
{
	char e[64], ma[64], mr[64];
	/* JSON has no infinity: a string */
	snprintf(e, sizeof e, isfinite(err) ? "%.6g" : "\"%g\"", err);
	snprintf(ma, sizeof ma, isfinite(r->max_abs) ? "%.6g" : "\"%g\"",
		 r->max_abs);
	snprintf(mr, sizeof mr, isfinite(r->max_rel) ? "%.6g" : "\"%g\"",
		 r->max_rel);
	snprintf(res->verify, sizeof res->verify,
		 "{\"numerics\": \"%s\", \"ok\": %s, \"outputs\": %zu, "
		 "\"max_abs_diff\": %s, \"max_rel_diff\": %s, "
		 "\"error\": %s, \"bound\": %.6g}",
		 n->kind, ok ? "true" : "false", r->npairs, ma, mr, e,
		 n->bound);
}

int cli_verify_recipe(lua_State *L, int rec, const char *in, const char *out,
		      const struct cli_model_opts *mo,
		      const struct cli_verify *v, struct run_result *res)
{
	rec = lua_absindex(L, rec);
	struct numerics n = recipe_numerics(L, rec);
	if (v->max_error >= 0)
		n.bound = v->max_error;
	ge_graph *a = NULL, *b = NULL;
	ge_load_opts lo = {0};
	lo.tags = mo ? mo->tags : NULL;
	ge_error err;
	int rc = ge_load(in, &lo, &a, &err);
	if (!rc)
		rc = ge_load(out, &lo, &b, &err);
	ge_xverify_opts o = GE_XVERIFY_OPTS_INIT;
	o.inputs = v->inputs;
	o.ninputs = v->ninputs;
	o.dim = v->dim;
	int exact = !strcmp(n.kind, "exact");
	o.atol = exact ? 0 : v->atol;
	o.rtol = exact ? 0 : v->rtol;
	ge_xverify_result r;
	memset(&r, 0, sizeof r);
	if (!rc)
		rc = ge_xverify(a, b, &o, &r, &err);
	if (rc) {
		snprintf(res->error, sizeof res->error, "--verify: %s",
			 err.msg);
		rc = EXIT_USAGE;
	} else {
		int lossy = !strcmp(n.kind, "lossy");
		/* a lossy recipe moves values a little: outputs that a
		 * selection picks (the boxes non-max suppression keeps, top-k
		 * indices) may pick otherwise on a near tie, by any amount;
		 * the bound holds for the others, and these are named */
		size_t nsel = 0;
		char sel[200] = "";
		for (size_t i = 0; lossy && i < r.npairs; i++) {
			if (!r.pairs[i].selected_by[0])
				continue;
			if (!nsel++)
				snprintf(sel, sizeof sel, "%.60s",
					 r.pairs[i].selected_by);
		}
		double e = rel_error(&r, lossy);
		double mabs = 0; /* over the outputs held to the bound */
		for (size_t i = 0; i < r.npairs; i++)
			if (!(lossy && r.pairs[i].selected_by[0]) &&
			    (r.pairs[i].cmp.max_abs > mabs ||
			     isnan(r.pairs[i].cmp.max_abs)))
				mabs = r.pairs[i].cmp.max_abs;
		int ok = lossy ? e <= n.bound && nsel < r.npairs
			 : !strcmp(n.kind, "changes") ? 1 : r.ok;
		verify_json(res, &n, &r, e, ok);
		char unbounded[300] = "";
		if (nsel)
			snprintf(unbounded, sizeof unbounded, " (%zu picked by "
				 "%s%s, not bounded: a near tie picks "
				 "otherwise)", nsel, sel,
				 nsel == r.npairs ? ", which leaves no output "
				 "to bound" : " and the like");
		if (v->print)
			printf("%s: verified against %s on seeded inputs%s: "
			       "%s, %zu output%s%s, max abs %.3g, relative "
			       "error %.3g: %s\n", out, in,
			       r.b_vars_from_a ? " (its variables read from "
						 "the input's checkpoint)" : "",
			       n.kind, r.npairs, r.npairs == 1 ? "" : "s",
			       unbounded, mabs, e, ok ? "ok" : "FAIL");
		if (!ok) {
			char bound[64] = "";
			if (!strcmp(n.kind, "lossy"))
				snprintf(bound, sizeof bound, " up to %g "
					 "(--max-error)", n.bound);
			snprintf(res->error, sizeof res->error,
				 "%s: outputs differ from %s beyond what the "
				 "recipe declares (%s%s): max abs %.3g, "
				 "relative error %.3g%s", out, in, n.kind, bound,
				 mabs, e, unbounded);
			rc = EXIT_RUNTIME;
		}
	}
	ge_xverify_result_free(&r);
	if (a)
		ge_graph_free(a);
	if (b)
		ge_graph_free(b);
	return rc;
}
