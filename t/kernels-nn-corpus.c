/*
 * kernels-nn-corpus: the heavy kernels on the corpus's inference models.
 * Each model runs op by op in execution order through every kernel the
 * runner has, from its placeholders fed with random data, so that each
 * heavy op (convolutions, products, pools, batch norm, resizes, NMS,
 * block moves) runs on its real weights and attrs and on the activations
 * its model computes; it must succeed with finite values.  One assertion
 * per model and op type: none fails, and in a model with no control flow
 * every one runs.  Models whose heavy ops sit behind control flow or
 * TensorLists (the executor's business) say so, and only their failures
 * count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernel.h"
#include "exec/xtensor.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "analyses/shapes.h" /* ge_shapes_topo_order */
#include "tap.h"

static const char *const heavy[] = {
	"AvgPool", "BatchMatMul", "BatchMatMulV2", "BatchToSpaceND",
	"Conv2D", "DepthwiseConv2dNative", "FusedBatchNorm",
	"FusedBatchNormV3", "FusedDepthwiseConv2dNative", "MatMul", "MaxPool",
	"NonMaxSuppressionV3", "NonMaxSuppressionV5", "ResizeBilinear",
	"SpaceToBatchND", "_FusedConv2D", "_FusedMatMul", NULL,
};

/* A model and what its placeholders are fed: random data of a shape
 * (floats in [0, 1), uint8 in [0, 255]), or a constant. */
typedef struct feed {
	const char *name;
	int dtype, rank;
	int64_t dims[4];
	int random;
	double value;
} feed;

#define RND(n, dt, r, ...) {n, dt, r, {__VA_ARGS__}, 1, 0}
#define VAL(n, r, v, ...) {n, 1, r, {__VA_ARGS__}, 0, v}

/* `needs` names what a model needs beyond kernels (control flow,
 * TensorLists) for its heavy ops to be reached: without the executor
 * those count as not reached, and only a failure fails. */
static const struct model {
	const char *path;
	feed feeds[6];
	const char *needs;
} models[] = {
	{"large/handtrack.frozen.pb",
	 {RND("input_tensor", 4, 4, 1, 256, 256, 3)},
	 "its preprocessing maps over images with TensorLists"},
	{"large/faceres-deep.frozen.pb",
	 {RND("input_1", 1, 4, 1, 224, 224, 3)}, NULL},
	{"tfjs/npm__@vladmandic__human-3.3.6/models/blazeface.json",
	 {RND("input", 1, 4, 1, 256, 256, 3)}, NULL},
	{"tfjs/npm__@vladmandic__human-3.3.6/models/emotion.json",
	 {RND("input_1", 1, 4, 1, 64, 64, 1)}, NULL},
	{"tfjs/npm__@vladmandic__human-3.3.6/models/antispoof.json",
	 {RND("conv2d_input", 1, 4, 1, 128, 128, 3)}, NULL},
	{"tfjs/npm__@vladmandic__human-models-3.0.4/models/faceboxes.json",
	 {RND("image_tensor", 4, 4, 1, 256, 256, 3)},
	 "its NMS is in a TF1 while loop"},
	/* the recurrent states start as zeros of [1,1,1,1], as its users
	 * feed them */
	{"tfjs/npm__@vladmandic__human-models-3.0.4/models/rvm.json",
	 {RND("src", 1, 4, 1, 256, 256, 3), VAL("downsample_ratio", 0, 0.5, 0),
	  VAL("r1i", 4, 0, 1, 1, 1, 1), VAL("r2i", 4, 0, 1, 1, 1, 1),
	  VAL("r3i", 4, 0, 1, 1, 1, 1), VAL("r4i", 4, 0, 1, 1, 1, 1)},
	 "its first ops are in TF1 conds"},
	{"dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/"
	 "model_matmul/frozen_saved_model.pb",
	 {RND("a", 1, 3, 2, 2, 2), RND("b", 1, 3, 2, 2, 2)}, NULL},
};

static ge_xbudget budget;
static uint64_t seed = 7;

static int is_heavy(const char *t)
{
	for (int i = 0; heavy[i]; i++)
		if (!strcmp(heavy[i], t))
			return i;
	return -1;
}

/* The tensor fed to placeholder `name` of m, or NULL. */
static ge_xt *feed_of(const struct model *m, const char *name)
{
	ge_error err;
	for (int f = 0; f < 6 && m->feeds[f].name; f++) {
		const feed *d = &m->feeds[f];
		if (strcmp(d->name, name))
			continue;
		ge_xt *x = ge_xt_new(d->dtype, d->rank, d->dims, &budget,
				     name, &err);
		for (int64_t i = 0; x && i < x->n; i++) {
			double v = d->value;
			if (d->random) {
				seed = seed * 6364136223846793005ull +
				       1442695040888963407ull;
				v = (double)(seed >> 11) / 9007199254740992.0;
			}
			if (d->dtype == 4)
				((uint8_t *)x->data)[i] = (uint8_t)(v * 255);
			else
				((float *)x->data)[i] = (float)v;
		}
		return x;
	}
	return NULL;
}

typedef struct run {
	ge_graph *g;
	ge_xt ***vals;      /* by op: its outputs, NULL until it ran */
	int *nouts;
	int *reads;         /* data reads still to come, by op */
	int ran[32], failed[32], unreached[32];
	int noted, noted_fail;
} run;

static void release(run *r, ge_opid id)
{
	for (int i = 0; r->vals[id] && i < r->nouts[id]; i++)
		ge_xt_unref(r->vals[id][i]);
	free(r->vals[id]);
	r->vals[id] = NULL;
}

/* Heavy op h ran: its float outputs must be finite. */
static int finite_outputs(const char *name, ge_xt **out, int nout)
{
	for (int o = 0; o < nout; o++)
		for (int64_t i = 0; out[o] && out[o]->dtype == 1 &&
				    i < out[o]->n; i++)
			if (!isfinite(((float *)out[o]->data)[i])) {
				tap_diag("%s: output %d element %lld is not "
					 "finite", name, o, (long long)i);
				return 0;
			}
	return 1;
}

/* Runs op id if it has a kernel and every input is there. */
static void step(run *r, const struct model *m, ge_opid id)
{
	ge_graph *g = r->g;
	const char *type = ge_op_type(g, id);
	size_t nin = ge_op_num_inputs(g, id);
	int nout = ge_op_num_outputs(g, id), h = is_heavy(type);
	const ge_kdef *d = ge_kernel_find(type);
	ge_xt *in[64], **out;
	ge_error err = {0};
	int missing = nin > 64;
	if (nout < 1)
		nout = 1;
	for (size_t i = 0; !missing && i < nin; i++) {
		ge_tref t = ge_op_input(g, id, i);
		if (!r->vals[t.op] || t.index >= r->nouts[t.op] ||
		    !r->vals[t.op][t.index])
			missing = 1;
		else
			in[i] = r->vals[t.op][t.index];
	}
	out = calloc(nout, sizeof *out);
	if (!strcmp(type, "Placeholder")) {
		out[0] = feed_of(m, ge_op_name(g, id));
	} else if (d && !missing) {
		ge_kctx k = {g, id, type, ge_op_name(g, id), in, (int)nin, out,
			     nout, &budget, NULL, &err};
		if (d->fn(&k)) {
			if (h >= 0)
				r->failed[h]++;
			if (h >= 0 || !r->noted_fail++)
				tap_diag("%s", err.msg);
		} else if (h >= 0) {
			if (finite_outputs(k.name, out, nout))
				r->ran[h]++;
			else
				r->failed[h]++;
		}
	} else if (h >= 0)
		r->unreached[h]++;
	else if (!d && !missing && strcmp(type, "NoOp") && !r->noted++)
		tap_diag("%s: the first op without a kernel is %s (%s)",
			 strrchr(m->path, '/') + 1, ge_op_name(g, id), type);
	r->vals[id] = out;
	r->nouts[id] = nout;
	for (size_t i = 0; i < nin && nin <= 64; i++) {
		ge_tref t = ge_op_input(g, id, i);
		if (--r->reads[t.op] == 0)
			release(r, t.op);
	}
	if (r->reads[id] == 0)
		release(r, id);
}

static void run_model(const char *corpus, const struct model *m)
{
	char path[4096];
	ge_error err;
	ge_load_opts lo = {0};
	run r;
	size_t n, cap;
	ge_opid *order;
	memset(&r, 0, sizeof r);
	snprintf(path, sizeof path, "%s/%s", corpus, m->path);
	if (ge_load(path, &lo, &r.g, &err)) {
		ok(0, "%s loads: %s", m->path, err.msg);
		return;
	}
	cap = ge_graph_capacity(r.g);
	order = ge_shapes_topo_order(r.g, &n);
	r.vals = calloc(cap, sizeof *r.vals);
	r.nouts = calloc(cap, sizeof *r.nouts);
	r.reads = calloc(cap, sizeof *r.reads);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < ge_op_num_inputs(r.g, order[i]); j++)
			r.reads[ge_op_input(r.g, order[i], j).op]++;
	for (size_t i = 0; i < n; i++)
		step(&r, m, order[i]);
	for (size_t i = 0; i < cap; i++)
		release(&r, (ge_opid)i);
	for (int h = 0; heavy[h]; h++) {
		const char *mn = strrchr(m->path, '/') + 1;
		if (!(r.ran[h] + r.failed[h] + r.unreached[h]))
			continue;
		if (m->needs)
			ok(!r.failed[h], "%s: %d %s ran, none failed (%d not "
			   "reached without the executor: %s)", mn, r.ran[h],
			   heavy[h], r.unreached[h], m->needs);
		else
			ok(r.ran[h] > 0 && !r.failed[h] && !r.unreached[h],
			   "%s: all %d %s ran (%d not reached, %d failed)", mn,
			   r.ran[h], heavy[h], r.unreached[h], r.failed[h]);
	}
	free(order);
	free(r.vals);
	free(r.nouts);
	free(r.reads);
	ge_graph_free(r.g);
}

int main(void)
{
	const char *corpus = tap_corpus();
	if (!corpus) {
		tap_skip_all("corpus not found (set GE_CORPUS)");
		return 0;
	}
	ge_xbudget_init(&budget);
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
		run_model(corpus, &models[i]);
	ok(budget.mem_live == 0, "every tensor was released");
	return tap_done();
}
