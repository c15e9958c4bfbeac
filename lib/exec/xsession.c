/*
 * exec/xsession.c: sessions (exec.h): opening one on a graph, runs from
 * feeds to fetches with the plan of the last run kept, calls, the state
 * slots of stateful kernels.  The executor itself is exec.c.
 */
#include "exec/exec_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions/func.h"
#include "formats/meta.h"
#include "base/wire.h"
#include "formats/model.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define DEFAULT_MAX_ITERATIONS 1000000

enum { DT_STRING = 7 };

/* ---------------------------------------------------------------- session */

int ge_xsession_open(ge_graph *g, const ge_xopts *o, ge_xsession **out,
		     ge_error *err)
{
	ge_xsession *s = ge_xcalloc(1, sizeof *s);
	struct ge_xrt *rt = &s->rt;
	static const ge_xopts defaults = GE_XOPTS_INIT;
	rt->g = g;
	rt->o = o ? *o : defaults;
	if (rt->o.max_iterations <= 0)
		rt->o.max_iterations = DEFAULT_MAX_ITERATIONS;
	ge_xbudget_init(&rt->own);
	rt->budget = rt->o.budget ? rt->o.budget : &rt->own;
	int rc = ge_flib_load(g, err);
	if (!rc)
		rc = ge_xvars_open(rt, err);
	if (!rc && !rt->o.no_init)
		rc = ge_xsession_init(s, err);
	if (rc) {
		ge_xsession_close(s);
		return rc;
	}
	*out = s;
	return GE_OK;
}

void ge_xsession_close(ge_xsession *s)
{
	if (!s)
		return;
	struct ge_xrt *rt = &s->rt;
	for (size_t i = 0; i < rt->slotcap; i++)
		if (rt->slots[i].g)
			ge_xobj_unref(rt->slots[i].obj);
	free(rt->slots);
	for (size_t i = 0; i < rt->nplans; i++)
		ge_xplan_free(rt->plans[i]);
	free(rt->plans);
	ge_xplan_free(rt->last);
	free(rt->last_key);
	ge_xvars_close(rt);
	free(s);
}

/* A fed tensor's dtype and shape against what its op declares. */
static int check_feed(const ge_graph *g, ge_tref t, const ge_xt *x,
		      const char *name, ge_error *err)
{
	int want = 0;
	char d[128];
	const char *type = ge_op_type(g, t.op);
	int ph = !strncmp(type, "Placeholder", 11);
	if (ph)
		ge_op_attr_type(g, t.op, "dtype", &want);
	if (!want)
		want = ge_op_output_dtype(g, t.op, t.index);
	if (want > 100)
		want -= 100;
	if (want && want != x->dtype)
		return ge_err(err, GE_EINVAL, "feed '%s': %s given, '%s' "
			      "holds %s", name, ge_xt_describe(x, d, sizeof d),
			      ge_op_name(g, t.op), ge_dtype_name(want) ?
			      ge_dtype_name(want) : "?");
	int64_t dims[GE_SHAPE_MAXRANK];
	int rank = ge_op_output_shape(g, t.op, t.index, dims,
				      GE_SHAPE_MAXRANK);
	if (ph) {
		const Tensorflow__AttrValue *v = ge_op_attr(g, t.op, "shape",
							    NULL);
		rank = -1;
		if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE &&
		    v->shape && !v->shape->unknown_rank &&
		    v->shape->n_dim <= GE_SHAPE_MAXRANK) {
			rank = (int)v->shape->n_dim;
			for (int i = 0; i < rank; i++)
				dims[i] = v->shape->dim[i]->size;
		}
	}
	if (rank < 0 || rank > GE_SHAPE_MAXRANK)
		return GE_OK;
	int bad = rank != x->rank;
	for (int i = 0; i < rank && !bad; i++)
		bad = dims[i] >= 0 && dims[i] != x->dims[i];
	if (bad) {
		ge_buf b = GE_BUF_INIT;
		ge_buf_addc(&b, '[');
		for (int i = 0; i < rank; i++) {
			if (dims[i] < 0)
				ge_buf_printf(&b, "%s?", i ? "," : "");
			else
				ge_buf_printf(&b, "%s%" PRId64, i ? "," : "",
					      dims[i]);
		}
		ge_buf_addc(&b, ']');
		ge_buf_addc(&b, 0);
		ge_err(err, GE_EINVAL, "feed '%s': %s given, '%s' takes shape "
		       "%s", name, ge_xt_describe(x, d, sizeof d),
		       ge_op_name(g, t.op), (const char *)b.data);
		ge_buf_free(&b);
		return GE_EINVAL;
	}
	return GE_OK;
}

/* Feeds and fetches as tensors of g. */
static int resolve(const ge_graph *g, const ge_xfeed *feeds, int nfeeds,
		   const char *const *fetches, int nfetch, ge_tref *fed,
		   ge_tref *fetch, ge_opid *start, ge_error *err)
{
	for (int i = 0; i < nfeeds; i++) {
		if (!feeds[i].t)
			return ge_err(err, GE_EINVAL, "feed '%s': no tensor",
				      feeds[i].name);
		if (ge_graph_resolve_tensor(g, feeds[i].name, 0, &fed[i],
					    err)) {
			ge_err_prefix(err, "feed");
			return GE_ENOTFOUND;
		}
		int rc = check_feed(g, fed[i], feeds[i].t, feeds[i].name, err);
		if (rc)
			return rc;
	}
	for (int i = 0; i < nfetch; i++) {
		if (ge_graph_resolve_tensor(g, fetches[i], 1, &fetch[i],
					    err)) {
			ge_err_prefix(err, "fetch");
			return GE_ENOTFOUND;
		}
		start[i] = fetch[i].op;
	}
	return GE_OK;
}

/* "feed\nfeed\n\tfetch\nfetch\n": what a root plan depends on. */
static char *run_key(const ge_xfeed *feeds, int nfeeds,
		     const char *const *fetches, int nfetch)
{
	ge_buf b = GE_BUF_INIT;
	for (int i = 0; i < nfeeds; i++)
		ge_buf_printf(&b, "%s\n", feeds[i].name);
	ge_buf_addc(&b, '\t');
	for (int i = 0; i < nfetch; i++)
		ge_buf_printf(&b, "%s\n", fetches[i]);
	ge_buf_addc(&b, 0);
	return (char *)ge_buf_steal(&b, NULL);
}

/* The plan of a run: the last one when the graph, the feeds and the
 * fetches are the same (feed values are checked each time). */
static int root_plan(struct ge_xrt *rt, const ge_xfeed *feeds, int nfeeds,
		     const char *const *fetches, int nfetch,
		     struct xplan **out, ge_error *err)
{
	char *key = run_key(feeds, nfeeds, fetches, nfetch);
	ge_tref *fed = ge_xcalloc((size_t)nfeeds + 1, sizeof *fed);
	ge_tref *fetch = ge_xcalloc((size_t)nfetch + 1, sizeof *fetch);
	ge_opid *start = ge_xcalloc((size_t)nfetch + 1, sizeof *start);
	int rc = resolve(rt->g, feeds, nfeeds, fetches, nfetch, fed, fetch,
			 start, err);
	if (!rc && rt->last && rt->last_version == ge_graph_version(rt->g) &&
	    !strcmp(rt->last_key, key)) {
		*out = rt->last;
	} else if (!rc) {
		rc = ge_xplan_build(rt, rt->g, NULL, start, (size_t)nfetch,
				    fed, (size_t)nfeeds, fetch,
				    (size_t)nfetch, out, err);
		if (!rc) {
			ge_xplan_free(rt->last);
			free(rt->last_key);
			rt->last = *out;
			rt->last_key = key;
			rt->last_version = ge_graph_version(rt->g);
			key = NULL;
		}
	}
	free(key);
	free(fed);
	free(fetch);
	free(start);
	return rc;
}

/* A run, its errors not yet prefixed by the graph's name. */
static int run_root(ge_xsession *s, const ge_xfeed *feeds, int nfeeds,
		    const char *const *fetches, int nfetch, ge_xt **out,
		    ge_error *err)
{
	struct ge_xrt *rt = &s->rt;
	struct xplan *p = NULL;
	for (int i = 0; i < nfetch; i++)
		out[i] = NULL;
	int rc = root_plan(rt, feeds, nfeeds, fetches, nfetch, &p, err);
	if (!rc) {
		ge_xt **args = ge_xcalloc((size_t)nfeeds + 1, sizeof *args);
		for (int i = 0; i < nfeeds; i++)
			args[i] = feeds[i].t;
		rc = ge_xrun(rt, p, args, nfeeds, out, nfetch, NULL, err);
		free(args);
	}
	return rc;
}

int ge_xsession_run(ge_xsession *s, const ge_xfeed *feeds, int nfeeds,
		    const char *const *fetches, int nfetch, ge_xt **out,
		    ge_error *err)
{
	int rc = run_root(s, feeds, nfeeds, fetches, nfetch, out, err);
	if (rc && ge_graph_name(s->rt.g)[0])
		ge_err_prefix(err, "%s", ge_graph_name(s->rt.g));
	return rc;
}

int ge_xsession_call(ge_xsession *s, const char *fname, ge_xt *const *args,
		     int nargs, ge_xt **out, int nout, ge_error *err)
{
	struct ge_xrt *rt = &s->rt;
	for (int i = 0; i < nout; i++)
		out[i] = NULL;
	ge_funcid f = ge_func_find(rt->g, fname);
	if (f == GE_NOFUNC)
		return ge_err(err, GE_ENOTFOUND, "no function '%s' in the "
			      "library", fname);
	ge_buf pre = GE_BUF_INIT;
	ge_buf_printf(&pre, "%s/", fname);
	ge_buf_addc(&pre, 0);
	int rc = ge_xcall(rt, f, args, nargs, out, nout,
			  (const char *)pre.data, err);
	ge_buf_free(&pre);
	return rc;
}

uint64_t ge_xsession_peak(const ge_xsession *s)
{
	return s->rt.budget->mem_peak;
}

uint64_t ge_xsession_work(const ge_xsession *s)
{
	return s->rt.budget->work_used;
}

/* ---------------------------------------------------------------- init */

/* The op a SavedModel runs after restoring its variables: the main op,
 * the legacy init op (TF1) or the __saved_model_init_op signature's
 * output (TF2); NULL when it has none. */
static const char *init_op(ge_graph *g)
{
	static const char *const colls[] = {"saved_model_main_op",
					    "legacy_init_op"};
	for (size_t i = 0; i < 2; i++) {
		Tensorflow__CollectionDef *c = ge_collection_get(g, colls[i]);
		if (c && c->kind_case ==
			 TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST &&
		    c->node_list && c->node_list->n_value)
			return c->node_list->value[0];
	}
	Tensorflow__SignatureDef *sig =
		ge_signature_get(g, "__saved_model_init_op");
	if (sig && sig->n_outputs && sig->outputs[0]->value &&
	    sig->outputs[0]->value->encoding_case ==
		    TENSORFLOW__TENSOR_INFO__ENCODING_NAME)
		return sig->outputs[0]->value->name;
	return NULL;
}

/* Feeds of the asset tensors (MetaGraphDef.asset_file_def): each gets
 * the path of its file under dir/assets, as TensorFlow's loader gives
 * it.  Appends to *feeds (n of them, strings owned by the caller). */
static void asset_feeds(ge_xsession *s, const char *dir, ge_xfeed **feeds,
			int *n)
{
	struct ge_xrt *rt = &s->rt;
	ge_buf b = GE_BUF_INIT;
	ge_error e = {0};
	if (ge_serialize(rt->g, GE_FMT_META, &b, &e)) {
		ge_buf_free(&b);
		return;
	}
	enum { MG_ASSET_FILE_DEF = 6 }; /* MetaGraphDef.asset_file_def */
	ge_wire w = ge_wire_of(b.data, b.len);
	ge_wire_field f;
	while (ge_wire_next(&w, &f)) {
		if (!ge_wire_is_len(&f, MG_ASSET_FILE_DEF))
			continue;
		Tensorflow__AssetFileDef *a = tensorflow__asset_file_def__unpack(
			NULL, f.len, f.data);
		ge_tref t;
		if (!a || !a->tensor_info || !a->filename || !a->filename[0] ||
		    a->tensor_info->encoding_case !=
			    TENSORFLOW__TENSOR_INFO__ENCODING_NAME ||
		    strchr(a->filename, '/') ||
		    ge_graph_find_tensor(rt->g, a->tensor_info->name, &t)) {
			if (a)
				tensorflow__asset_file_def__free_unpacked(a,
									  NULL);
			continue;
		}
		ge_xt *x = ge_xt_scalar(DT_STRING, rt->budget, "asset", &e);
		if (x) {
			ge_buf path = GE_BUF_INIT;
			ge_buf_printf(&path, "%s/assets/%s", dir, a->filename);
			ge_xstr *xs = x->data;
			xs->len = path.len;
			xs->p = (char *)ge_buf_steal(&path, NULL);
			*feeds = ge_xrealloc(*feeds, (size_t)(*n + 1) *
					     sizeof **feeds);
			(*feeds)[*n].name = ge_xstrdup(a->tensor_info->name);
			(*feeds)[*n].t = x;
			++*n;
		}
		tensorflow__asset_file_def__free_unpacked(a, NULL);
	}
	ge_buf_free(&b);
}

int ge_xsession_init(ge_xsession *s, ge_error *err)
{
	struct ge_xrt *rt = &s->rt;
	const char *dir = ge_graph_savedmodel_dir(rt->g);
	const char *op = dir ? init_op(rt->g) : NULL;
	if (!op)
		return GE_OK;
	ge_buf fetch = GE_BUF_INIT;
	if (op[0] == '^')
		op++;
	ge_buf_printf(&fetch, "^%.*s", (int)strcspn(op, ":"), op);
	ge_buf_addc(&fetch, 0);
	ge_xfeed *feeds = NULL;
	int n = 0;
	asset_feeds(s, dir, &feeds, &n);
	const char *f = (const char *)fetch.data;
	ge_xt *out = NULL;
	/* the init op is not part of what a caller watches */
	void (*watch)(void *, const char *, const ge_xt *) = rt->o.on_tensor;
	rt->o.on_tensor = NULL;
	int rc = run_root(s, feeds, n, &f, 1, &out, err);
	rt->o.on_tensor = watch;
	if (rc) {
		ge_err_prefix(err, "the SavedModel's init op '%s'", f + 1);
		ge_err_prefix(err, "%s", ge_graph_name(rt->g));
	}
	for (int i = 0; i < n; i++) {
		free((char *)feeds[i].name);
		ge_xt_unref(feeds[i].t);
	}
	free(feeds);
	ge_buf_free(&fetch);
	return rc;
}

/* ---------------------------------------------------------------- state */

static size_t slot_hash(const ge_graph *g, ge_opid id)
{
	uint64_t h = (uint64_t)(uintptr_t)g * 0x9e3779b97f4a7c15ull ^ id;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32));
}

ge_xobj **ge_xrt_slot(struct ge_xrt *rt, const ge_graph *g, ge_opid id)
{
	if (2 * (rt->nslots + 1) > rt->slotcap) {
		size_t ncap = rt->slotcap ? 2 * rt->slotcap : 64;
		struct xslot *ns = ge_xcalloc(ncap, sizeof *ns);
		for (size_t i = 0; i < rt->slotcap; i++) {
			if (!rt->slots[i].g)
				continue;
			size_t h = slot_hash(rt->slots[i].g, rt->slots[i].id);
			while (ns[h & (ncap - 1)].g)
				h++;
			ns[h & (ncap - 1)] = rt->slots[i];
		}
		free(rt->slots);
		rt->slots = ns;
		rt->slotcap = ncap;
	}
	size_t h = slot_hash(g, id);
	for (;; h++) {
		struct xslot *sl = &rt->slots[h & (rt->slotcap - 1)];
		if (sl->g == g && sl->id == id)
			return &sl->obj;
		if (!sl->g) {
			sl->g = g;
			sl->id = id;
			rt->nslots++;
			return &sl->obj;
		}
	}
}

uint64_t ge_xrt_seed(const struct ge_xrt *rt)
{
	return rt->o.seed;
}
