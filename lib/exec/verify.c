/*
 * exec/verify.c: a model run on the command line's inputs, and one model
 * checked against another (verify.h).
 */
#include "exec/verify.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonpb.h"
#include "base/tensor.h"
#include "variables/variables.h"

/* ---------------------------------------------------------------- feeds */

static void port_info(const ge_xport *p, uint64_t seed, int64_t dim,
		      ge_xinput_info *in)
{
	memset(in, 0, sizeof *in);
	in->name = p->key;
	in->dtype = p->dtype;
	in->rank = p->rank;
	for (int i = 0; i < p->rank && i < GE_SHAPE_MAXRANK; i++)
		in->dims[i] = p->dims[i];
	in->unknown_dim = dim > 0 ? dim : 1;
	in->seed = seed;
}

int ge_xport_check(const ge_xport *p, const ge_xt *t, ge_error *err)
{
	ge_xinput_info in;
	port_info(p, 0, 1, &in);
	return ge_xinput_check(&in, t, "the value", err);
}

void ge_xfeeds_free(ge_xfeeds *fd)
{
	for (size_t i = 0; i < fd->n; i++)
		ge_xt_unref(fd->v[i].t);
	free(fd->v);
	free(fd->given);
	memset(fd, 0, sizeof *fd);
}

static int unknown_input(const ge_xiface *f, const char *name,
			 ge_error *err)
{
	char names[512];
	return ge_err(err, GE_ENOTFOUND, "no input '%s' (the inputs: %s)",
		      name, ge_xiface_names(f->in, f->nin, names,
					    sizeof names));
}

/* The given values, into v[] by port. */
static int feeds_given(const ge_xiface *f, const char *const *specs,
		       size_t nspecs, const ge_xmade *made, size_t nmade,
		       uint64_t seed, int64_t dim, ge_xbudget *b, ge_xfeeds *fd,
		       ge_error *err)
{
	for (size_t i = 0; i < nspecs + nmade; i++) {
		char name[512];
		const char *val = NULL;
		ge_xt *given = NULL;
		if (i < nspecs) {
			const char *eq = strchr(specs[i], '=');
			if (!eq || eq == specs[i] ||
			    (size_t)(eq - specs[i]) >= sizeof name)
				return ge_err(err, GE_EINVAL, "input '%s': NAME="
					      "VALUE expected", specs[i]);
			memcpy(name, specs[i], (size_t)(eq - specs[i]));
			name[eq - specs[i]] = 0;
			val = eq + 1;
		} else {
			snprintf(name, sizeof name, "%s", made[i - nspecs].name);
			given = made[i - nspecs].t;
		}
		const ge_xport *p = ge_xiface_find(f->in, f->nin, name);
		if (!p)
			return unknown_input(f, name, err);
		size_t k = (size_t)(p - f->in);
		if (fd->v[k].t)
			return ge_err(err, GE_EINVAL, "input '%s' is given "
				      "twice", p->key);
		ge_xinput_info in;
		port_info(p, seed, dim, &in);
		int rc;
		if (given) {
			rc = ge_xinput_check(&in, given, "the value", err);
			if (!rc)
				fd->v[k].t = ge_xt_ref(given);
		} else {
			rc = ge_xvalue_parse(val, &in, b, &fd->v[k].t, err);
		}
		if (rc)
			return rc;
		fd->given[fd->ngiven++] = p->key;
	}
	return GE_OK;
}

int ge_xfeeds_make(const ge_xiface *f, const char *const *specs,
		   size_t nspecs, const ge_xmade *made, size_t nmade,
		   uint64_t seed, int64_t dim, ge_xbudget *b, ge_xfeeds *fd,
		   ge_error *err)
{
	memset(fd, 0, sizeof *fd);
	fd->n = f->nin;
	fd->v = ge_xcalloc(f->nin + 1, sizeof *fd->v);
	fd->given = ge_xcalloc(nspecs + nmade + 1, sizeof *fd->given);
	for (size_t i = 0; i < f->nin; i++)
		fd->v[i].name = f->in[i].tensor;
	int rc = feeds_given(f, specs, nspecs, made, nmade, seed, dim, b, fd,
			     err);
	for (size_t i = 0; !rc && i < f->nin; i++) {
		if (fd->v[i].t || f->in[i].has_default)
			continue;
		ge_xinput_info in;
		port_info(&f->in[i], seed, dim, &in);
		rc = ge_xvalue_seeded(&in, b, &fd->v[i].t, err);
	}
	if (rc)
		ge_xfeeds_free(fd);
	return rc;
}

size_t ge_xfeeds_list(const ge_xfeeds *fd, ge_xfeed *v)
{
	size_t n = 0;
	for (size_t i = 0; i < fd->n; i++)
		if (fd->v[i].t)
			v[n++] = fd->v[i];
	return n;
}

int ge_xrun_model(ge_graph *g, const ge_xopts *o, ge_xbudget *b,
		  const ge_xfeeds *fd, const char *const *fetch,
		  size_t nfetch, ge_xt **out, uint64_t *peak, ge_error *err)
{
	ge_xsession *s;
	ge_xopts oo = *o;
	for (size_t i = 0; i < nfetch; i++)
		out[i] = NULL;
	/* the outputs outlive the session: not its own budget */
	if (!oo.budget)
		oo.budget = b;
	o = &oo;
	int rc = ge_xsession_open(g, o, &s, err);
	if (rc)
		return rc;
	ge_xfeed *v = ge_xmalloc((fd->n + 1) * sizeof *v);
	size_t nv = ge_xfeeds_list(fd, v);
	rc = ge_xsession_run(s, v, (int)nv, fetch, (int)nfetch, out, err);
	free(v);
	if (peak)
		*peak = ge_xsession_peak(s);
	ge_xsession_close(s);
	return rc;
}

/* ---------------------------------------------------------------- per op */

/* A's tensors by name (first of each name), an open hash table. */
struct seen {
	char **name;
	ge_xt **t;
	unsigned char *done;
	size_t n, cap;
};

static size_t seen_slot(const struct seen *s, const char *name)
{
	size_t h = ge_hash(name, strlen(name)) & (s->cap - 1);
	while (s->name[h] && strcmp(s->name[h], name))
		h = (h + 1) & (s->cap - 1);
	return h;
}

static void seen_grow(struct seen *s)
{
	struct seen o = *s;
	s->cap = o.cap ? 2 * o.cap : 1024;
	s->name = ge_xcalloc(s->cap, sizeof *s->name);
	s->t = ge_xcalloc(s->cap, sizeof *s->t);
	s->done = ge_xcalloc(s->cap, 1);
	for (size_t i = 0; i < o.cap; i++)
		if (o.name[i]) {
			size_t h = seen_slot(s, o.name[i]);
			s->name[h] = o.name[i];
			s->t[h] = o.t[i];
		}
	free(o.name);
	free(o.t);
	free(o.done);
}

static void on_a(void *ud, const char *name, const ge_xt *t)
{
	struct seen *s = ud;
	if (2 * (s->n + 1) > s->cap)
		seen_grow(s);
	size_t h = seen_slot(s, name);
	if (s->name[h])
		return;
	s->name[h] = ge_xstrdup(name);
	s->t[h] = ge_xt_ref((ge_xt *)t);
	s->n++;
}

struct perop {
	struct seen seen;
	const ge_xverify_opts *o;
	ge_xverify_result *r;
};

static void on_b(void *ud, const char *name, const ge_xt *t)
{
	struct perop *p = ud;
	struct seen *s = &p->seen;
	if (!s->cap)
		return;
	size_t h = seen_slot(s, name);
	if (!s->name[h] || s->done[h])
		return;
	s->done[h] = 1;
	ge_xcmp c;
	if (ge_xcompare(t, s->t[h], p->o->atol, p->o->rtol, &c, NULL))
		return; /* not the same shape: not the same tensor */
	p->r->op_compared++;
	if (p->o->per_op_each) {
		ge_xverify_result *r = p->r;
		size_t n = r->neach;
		if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
			size_t cap = n ? 2 * n : 16;
			r->each_tensor = ge_xrealloc(r->each_tensor,
						     cap * sizeof *r->each_tensor);
			r->each_cmp = ge_xrealloc(r->each_cmp,
						  cap * sizeof *r->each_cmp);
		}
		r->each_tensor[n] = ge_xstrdup(name);
		r->each_cmp[n] = c;
		r->neach++;
	}
	if (ge_xcmp_ok(&c))
		return;
	p->r->op_outside++;
	if (!p->r->first_tensor) {
		p->r->first_tensor = ge_xstrdup(name);
		p->r->first_cmp = c;
	}
	/* the tensor is A's to free now that it is compared */
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->name[i]) {
			free(s->name[i]);
			ge_xt_unref(s->t[i]);
		}
	free(s->name);
	free(s->t);
	free(s->done);
}

/* The op of a tensor name "scope/op:1@2" of graph g: its name and type. */
static void name_op(ge_graph *g, ge_xverify_result *r)
{
	if (!r->first_tensor)
		return;
	const char *t = r->first_tensor;
	size_t n = strcspn(t, ":@");
	r->first_op = ge_xstrndup(t, n);
	ge_opid id = ge_graph_find(g, r->first_op);
	if (id != GE_NOOP)
		r->first_type = ge_xstrdup(ge_op_type(g, id));
}

/* ---------------------------------------------------------------- pairing */

/* The name B gives to A's `name` through the map, or NULL. */
static const char *mapped(const ge_xverify_opts *o, const char *name,
			  int reverse)
{
	for (size_t i = 0; i < o->nmap; i++) {
		const char *eq = strchr(o->map[i], '=');
		if (!eq)
			continue;
		size_t n = (size_t)(eq - o->map[i]);
		if (!reverse && strlen(name) == n &&
		    !strncmp(o->map[i], name, n))
			return eq + 1;
		if (reverse && !strcmp(eq + 1, name)) {
			static __thread char buf[512];
			snprintf(buf, sizeof buf, "%.*s", (int)n, o->map[i]);
			return buf;
		}
	}
	return NULL;
}

/* A's inputs that B's interface does not have but B's graph does (a
 * SavedModel fed at an Identity its signature names, against the graph
 * frozen from it, whose inputs are its placeholders): fed there too. */
static void feeds_b_extra(const ge_xiface *fa, const ge_xfeeds *da,
			  const ge_xiface *fb, ge_graph *gb,
			  const ge_xverify_opts *o, ge_xfeeds *db)
{
	for (size_t i = 0; i < fa->nin; i++) {
		const char *bn = mapped(o, fa->in[i].key, 0);
		if (!bn)
			bn = fa->in[i].tensor;
		ge_tref r;
		if (!da->v[i].t || ge_xiface_find(fb->in, fb->nin, bn) ||
		    ge_xiface_find(fb->in, fb->nin, fa->in[i].key) ||
		    ge_graph_find_tensor(gb, bn, &r) != GE_OK)
			continue;
		db->v = ge_xrealloc(db->v, (db->n + 1) * sizeof *db->v);
		db->v[db->n].name = bn;
		db->v[db->n].t = ge_xt_ref(da->v[i].t);
		db->n++;
	}
}

/* A's input that B's input pb pairs with (by the map, key or tensor
 * name), or NULL. */
static const ge_xport *paired_in(const ge_xiface *fa, const ge_xport *pb,
				 const ge_xverify_opts *o)
{
	const char *an = mapped(o, pb->key, 1);
	if (!an)
		an = mapped(o, pb->tensor, 1);
	const ge_xport *pa =
		ge_xiface_find(fa->in, fa->nin, an ? an : pb->key);
	if (!pa && !an)
		pa = ge_xiface_find(fa->in, fa->nin, pb->tensor);
	return pa;
}

/* A's inputs left to their default whose partner in B has none get the
 * default's value (fetched from A, which is then fed it: the same run),
 * so that B computes on what A does. */
static int defaults_for_b(ge_graph *a, const ge_xiface *fa, ge_xfeeds *da,
			  const ge_xiface *fb, const ge_xverify_opts *o,
			  ge_xbudget *b, ge_error *err)
{
	const char **fetch = ge_xcalloc(fa->nin + 1, sizeof *fetch);
	size_t *which = ge_xcalloc(fa->nin + 1, sizeof *which);
	size_t n = 0;
	for (size_t i = 0; i < fb->nin; i++) {
		const ge_xport *pa = paired_in(fa, &fb->in[i], o);
		if (!pa || fb->in[i].has_default || da->v[pa - fa->in].t)
			continue;
		size_t k = (size_t)(pa - fa->in), j = 0;
		while (j < n && which[j] != k)
			j++;
		if (j == n) {
			which[n] = k;
			fetch[n++] = pa->tensor;
		}
	}
	int rc = GE_OK;
	if (n) {
		ge_xt **vals = ge_xcalloc(n, sizeof *vals);
		ge_xopts xo = GE_XOPTS_INIT;
		xo.seed = o->seed;
		xo.max_iterations = o->max_iterations;
		rc = ge_xrun_model(a, &xo, b, da, fetch, n, vals, NULL, err);
		for (size_t j = 0; j < n; j++)
			da->v[which[j]].t = vals[j];
		free(vals);
	}
	free(fetch);
	free(which);
	return rc;
}

/* B's feeds: A's tensors for the inputs they share, seeded data for
 * the others (those with a default in both models are not fed). */
static int feeds_b(const ge_xiface *fa, const ge_xfeeds *da,
		   const ge_xiface *fb, ge_graph *gb,
		   const ge_xverify_opts *o, ge_xbudget *b, ge_xfeeds *db,
		   ge_error *err)
{
	ge_xmade *made = ge_xcalloc(fb->nin + 1, sizeof *made);
	size_t n = 0;
	for (size_t i = 0; i < fb->nin; i++) {
		const ge_xport *pa = paired_in(fa, &fb->in[i], o);
		if (!pa || !da->v[pa - fa->in].t)
			continue;
		made[n].name = fb->in[i].key;
		made[n].t = da->v[pa - fa->in].t;
		n++;
	}
	int rc = ge_xfeeds_make(fb, NULL, 0, made, n, o->seed, o->dim, b, db,
				err);
	free(made);
	if (!rc)
		feeds_b_extra(fa, da, fb, gb, o, db);
	return rc;
}

static int pair_outputs(ge_graph *gb, const ge_xiface *fa,
			const ge_xiface *fb, const ge_xverify_opts *o,
			ge_xverify_result *r, ge_error *err)
{
	size_t n = o->noutputs ? o->noutputs : fa->nout;
	r->pairs = ge_xcalloc(n + 1, sizeof *r->pairs);
	for (size_t i = 0; i < n; i++) {
		const ge_xport *pa = o->noutputs
			? ge_xiface_find(fa->out, fa->nout, o->outputs[i])
			: &fa->out[i];
		const char *ka = pa ? pa->key : o->outputs[i];
		const char *ta = pa ? pa->tensor : o->outputs[i];
		const char *want = mapped(o, ka, 0);
		if (!want && pa)
			want = mapped(o, pa->tensor, 0);
		const ge_xport *pb =
			ge_xiface_find(fb->out, fb->nout, want ? want : ka);
		if (!pb && !want)
			pb = ge_xiface_find(fb->out, fb->nout, ta);
		const char *kb = pb ? pb->key : want ? want : ta;
		const char *tb = pb ? pb->tensor : kb;
		ge_tref tr;
		if (!pb && ge_graph_find_tensor(gb, tb, &tr) != GE_OK)
			return ge_err(err, GE_ENOTFOUND, "output '%s' of A: B "
				      "has no output or tensor '%s' (pair "
				      "them with --map %s=NAME)", ka, kb, ka);
		ge_xverify_pair *p = &r->pairs[r->npairs++];
		p->key_a = ge_xstrdup(ka);
		p->tensor_a = ge_xstrdup(ta);
		p->key_b = ge_xstrdup(kb);
		p->tensor_b = ge_xstrdup(tb);
	}
	return GE_OK;
}

/* Ops whose outputs are picked by comparing values: indices, or values
 * gathered by them. */
static int is_selection(const char *t)
{
	static const char *const sel[] = {
		"NonMaxSuppression", "NonMaxSuppressionV2",
		"NonMaxSuppressionV3", "NonMaxSuppressionV4",
		"NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps",
		"CombinedNonMaxSuppression", "TopK", "TopKV2", "ArgMax",
		"ArgMin", "Unique", "UniqueV2", "UniqueWithCounts", "Where",
		NULL};
	for (int i = 0; sel[i]; i++)
		if (!strcmp(t, sel[i]))
			return 1;
	return 0;
}

/* The type of the first selection op the tensor is computed from (along
 * data inputs), into out; "" when none. */
static void selection_of(ge_graph *g, const char *tensor, char *out,
			 size_t cap)
{
	out[0] = 0;
	ge_tref t;
	if (ge_graph_find_tensor(g, tensor, &t) != GE_OK || t.op == GE_NOOP)
		return;
	size_t n = ge_graph_capacity(g);
	uint8_t *seen = ge_xcalloc(n + 1, 1);
	ge_opid *stack = ge_xcalloc(n + 1, sizeof *stack);
	size_t top = 0;
	stack[top++] = t.op;
	seen[t.op] = 1;
	while (top && !out[0]) {
		ge_opid id = stack[--top];
		if (is_selection(ge_op_type(g, id))) {
			snprintf(out, cap, "%s", ge_op_type(g, id));
			break;
		}
		for (size_t i = 0; i < ge_op_num_inputs(g, id); i++) {
			ge_tref in = ge_op_input(g, id, i);
			if (in.op != GE_NOOP && !seen[in.op]) {
				seen[in.op] = 1;
				stack[top++] = in.op;
			}
		}
	}
	free(seen);
	free(stack);
}

/* ---------------------------------------------------------------- verify */

static int has_variables(ge_graph *g)
{
	ge_varlist l = {0};
	ge_error err;
	int n = ge_graph_variables(g, &l, &err) == GE_OK && l.n > 0;
	ge_varlist_free(&l);
	return n;
}

static int run_pairs(ge_graph *a, ge_graph *gb, const ge_xiface *fa,
		     const ge_xiface *fb, const ge_xverify_opts *o,
		     ge_xverify_result *r, ge_xbudget *bud, ge_error *err)
{
	ge_xfeeds da, db;
	int rc = ge_xfeeds_make(fa, o->inputs, o->ninputs, o->made, o->nmade,
				o->seed, o->dim, bud, &da, err);
	if (rc) {
		ge_err_prefix(err, "%s", ge_graph_name(a));
		return rc;
	}
	if ((rc = defaults_for_b(a, fa, &da, fb, o, bud, err))) {
		ge_xfeeds_free(&da);
		return rc;
	}
	if ((rc = feeds_b(fa, &da, fb, gb, o, bud, &db, err))) {
		ge_err_prefix(err, "%s", ge_graph_name(gb));
		ge_xfeeds_free(&da);
		return rc;
	}
	const char **fta = ge_xcalloc(r->npairs + 1, sizeof *fta);
	const char **ftb = ge_xcalloc(r->npairs + 1, sizeof *ftb);
	ge_xt **oa = ge_xcalloc(r->npairs + 1, sizeof *oa);
	ge_xt **ob = ge_xcalloc(r->npairs + 1, sizeof *ob);
	for (size_t i = 0; i < r->npairs; i++) {
		fta[i] = r->pairs[i].tensor_a;
		ftb[i] = r->pairs[i].tensor_b;
	}
	struct perop po;
	memset(&po, 0, sizeof po);
	po.o = o;
	po.r = r;
	ge_xopts xa = GE_XOPTS_INIT, xb = GE_XOPTS_INIT;
	char *cka = ge_xcheckpoint_of(a), *ckb = ge_xcheckpoint_of(gb);
	if (cka && !ckb && has_variables(gb)) {
		xb.checkpoint = cka;
		r->b_vars_from_a = 1;
	}
	xa.seed = xb.seed = o->seed;
	xa.max_iterations = xb.max_iterations = o->max_iterations;
	if (o->per_op) {
		seen_grow(&po.seen);
		xa.on_tensor = on_a;
		xa.ud = &po.seen;
		xb.on_tensor = on_b;
		xb.ud = &po;
	}
	/* the runner's messages name the model already */
	rc = ge_xrun_model(a, &xa, bud, &da, fta, r->npairs, oa, &r->peak_a,
			   err);
	if (!rc)
		rc = ge_xrun_model(gb, &xb, bud, &db, ftb, r->npairs, ob,
				   &r->peak_b, err);
	r->ok = 1;
	for (size_t i = 0; !rc && i < r->npairs; i++) {
		ge_xverify_pair *p = &r->pairs[i];
		ge_xt_describe(oa[i], p->desc_a, sizeof p->desc_a);
		ge_xt_describe(ob[i], p->desc_b, sizeof p->desc_b);
		ge_error ce;
		if (ge_xcompare(ob[i], oa[i], o->atol, o->rtol, &p->cmp, &ce)) {
			/* not comparable (a shape changed): outside */
			snprintf(p->note, sizeof p->note, "%.150s", ce.msg);
			p->cmp.outside = oa[i]->n > ob[i]->n ? oa[i]->n
							    : ob[i]->n;
			p->cmp.max_abs = p->cmp.max_rel = INFINITY;
			p->cmp.cosine = 0;
		}
		p->ok = !p->note[0] && ge_xcmp_ok(&p->cmp);
		r->ok &= p->ok;
		if (p->cmp.max_abs > r->max_abs || isnan(p->cmp.max_abs))
			r->max_abs = p->cmp.max_abs;
		if (p->cmp.max_rel > r->max_rel)
			r->max_rel = p->cmp.max_rel;
	}
	if (o->per_op)
		name_op(gb, r);
	for (size_t i = 0; i < r->npairs; i++) {
		ge_xt_unref(oa[i]);
		ge_xt_unref(ob[i]);
	}
	seen_free(&po.seen);
	free(cka);
	free(ckb);
	free(fta);
	free(ftb);
	free(oa);
	free(ob);
	ge_xfeeds_free(&da);
	ge_xfeeds_free(&db);
	return rc;
}

/* The stateful random ops the runner has kernels for (exec/k_random.c).
 * Without a seed (seed and seed2 both 0) one draws in TensorFlow from a
 * seed made up at each run, and here from --seed and the op's name: a
 * model and its rewrite draw the same numbers while the op keeps its
 * name, and other numbers once it is renamed (obfuscate_names). */
static int unseeded_random(const ge_graph *g, ge_opid id)
{
	static const char *const types[] = {
		"RandomUniform", "RandomStandardNormal", "TruncatedNormal",
		"RandomUniformInt", NULL};
	const char *t = ge_op_type(g, id);
	size_t i = 0;
	while (types[i] && strcmp(types[i], t))
		i++;
	int64_t seed = 0, seed2 = 0;
	return types[i] && (ge_op_attr_int(g, id, "seed", &seed) || !seed) &&
	       (ge_op_attr_int(g, id, "seed2", &seed2) || !seed2);
}

/* r->note: B's unseeded random ops that A has no namesake of. */
static void note_renamed_random(ge_graph *a, ge_graph *b,
				ge_xverify_result *r)
{
	size_t n = 0, cap = ge_graph_capacity(b);
	ge_opid first = GE_NOOP;
	for (size_t i = 0; i < cap; i++) {
		ge_opid id = (ge_opid)i;
		if (!ge_op_alive(b, id) || !unseeded_random(b, id))
			continue;
		ge_opid in_a = ge_graph_find(a, ge_op_name(b, id));
		if (in_a != GE_NOOP &&
		    !strcmp(ge_op_type(a, in_a), ge_op_type(b, id)))
			continue;
		if (!n++)
			first = id;
	}
	if (!n)
		return;
	char more[48] = "";
	if (n > 1)
		snprintf(more, sizeof more, " and %zu more", n - 1);
	snprintf(r->note, sizeof r->note,
		 "B's random op '%.80s' (%s)%s has no seed and no namesake in "
		 "A: an op without a seed draws from --seed and its name, so "
		 "a renamed one draws other numbers (feed what turns it off, "
		 "or give it a seed)",
		 ge_op_name(b, first), ge_op_type(b, first), more);
}

int ge_xverify(ge_graph *a, ge_graph *b, const ge_xverify_opts *o,
	       ge_xverify_result *r, ge_error *err)
{
	memset(r, 0, sizeof *r);
	r->per_op = o->per_op;
	ge_xiface fa, fb;
	int rc = ge_xiface_get(a, o->signature_a, &fa, err);
	if (rc)
		return rc;
	if ((rc = ge_xiface_get(b, o->signature_b ? o->signature_b
						  : o->signature_a,
				&fb, err))) {
		ge_xiface_free(&fa);
		return rc;
	}
	ge_xbudget bud;
	ge_xbudget_init(&bud);
	rc = pair_outputs(b, &fa, &fb, o, r, err);
	for (size_t i = 0; !rc && i < r->npairs; i++)
		selection_of(a, r->pairs[i].tensor_a, r->pairs[i].selected_by,
			     sizeof r->pairs[i].selected_by);
	if (!rc)
		rc = run_pairs(a, b, &fa, &fb, o, r, &bud, err);
	if (!rc && !r->ok)
		note_renamed_random(a, b, r);
	ge_xiface_free(&fa);
	ge_xiface_free(&fb);
	return rc;
}

void ge_xverify_result_free(ge_xverify_result *r)
{
	for (size_t i = 0; i < r->npairs; i++) {
		free(r->pairs[i].key_a);
		free(r->pairs[i].key_b);
		free(r->pairs[i].tensor_a);
		free(r->pairs[i].tensor_b);
	}
	free(r->pairs);
	free(r->first_tensor);
	free(r->first_op);
	free(r->first_type);
	for (size_t i = 0; i < r->neach; i++)
		free(r->each_tensor[i]);
	free(r->each_tensor);
	free(r->each_cmp);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- report */

/* JSON has no infinity or NaN: those are written as strings. */
static json_t *num(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

static json_t *cmp_json(const ge_xcmp *c)
{
	json_t *j = json_object();
	json_object_set_new(j, "elements", json_integer(c->n));
	json_object_set_new(j, "max_abs_diff", num(c->max_abs));
	json_object_set_new(j, "max_rel_diff", num(c->max_rel));
	json_object_set_new(j, "mean_abs_diff", num(c->mean_abs));
	json_object_set_new(j, "cosine", num(c->cosine));
	json_object_set_new(j, "outside", json_integer(c->outside));
	json_object_set_new(j, "nan_mismatch", json_integer(c->nan_mismatch));
	json_object_set_new(j, "reference_max_abs", num(c->b_max_abs));
	return j;
}

void ge_xverify_json(const ge_xverify_result *r, const char *name_a,
		     const char *name_b, ge_buf *out)
{
	json_t *j = json_object(), *outs = json_array();
	json_object_set_new(j, "a", json_string(name_a ? name_a : ""));
	json_object_set_new(j, "b", json_string(name_b ? name_b : ""));
	json_object_set_new(j, "ok", json_boolean(r->ok));
	if (r->note[0])
		json_object_set_new(j, "note", json_string(r->note));
	if (r->b_vars_from_a)
		json_object_set_new(j, "b_variables_from_a", json_true());
	if (r->npairs) {
		json_object_set_new(j, "atol", num(r->pairs[0].cmp.atol));
		json_object_set_new(j, "rtol", num(r->pairs[0].cmp.rtol));
	}
	json_object_set_new(j, "max_abs_diff", num(r->max_abs));
	json_object_set_new(j, "max_rel_diff", num(r->max_rel));
	for (size_t i = 0; i < r->npairs; i++) {
		const ge_xverify_pair *p = &r->pairs[i];
		json_t *o = cmp_json(&p->cmp);
		json_object_set_new(o, "name", json_string(p->key_a));
		json_object_set_new(o, "name_b", json_string(p->key_b));
		json_object_set_new(o, "a", json_string(p->desc_a));
		json_object_set_new(o, "b", json_string(p->desc_b));
		json_object_set_new(o, "ok", json_boolean(p->ok));
		if (p->note[0])
			json_object_set_new(o, "note", json_string(p->note));
		if (p->selected_by[0])
			json_object_set_new(o, "selected_by",
					    json_string(p->selected_by));
		json_array_append_new(outs, o);
	}
	json_object_set_new(j, "outputs", outs);
	if (r->per_op) {
		json_t *po = json_object();
		json_object_set_new(po, "compared",
				    json_integer((json_int_t)r->op_compared));
		json_object_set_new(po, "outside",
				    json_integer((json_int_t)r->op_outside));
		if (r->first_tensor) {
			json_t *f = cmp_json(&r->first_cmp);
			json_object_set_new(f, "tensor",
					    json_string(r->first_tensor));
			json_object_set_new(f, "op", json_string(r->first_op));
			if (r->first_type)
				json_object_set_new(f, "type",
						    json_string(r->first_type));
			json_object_set_new(po, "first", f);
		}
		json_object_set_new(j, "per_op", po);
	}
	ge_json_dump(j, out);
	json_decref(j);
}
