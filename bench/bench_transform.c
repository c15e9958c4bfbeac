/*
 * bench_transform: times copy and graph_replace on the benchmark graph.
 *
 *   bench_transform GRAPH.pb [VIEW_OPS]
 *
 * GRAPH.pb is the 1,000,000-node Conv2D -> BiasAdd -> Relu chain that
 * bench/gen_graph writes.  Two measures, each to stay under half a second
 * for VIEW_OPS = 100,000 (the default):
 *   - copy: a view of VIEW_OPS consecutive ops (weights included) copied
 *     under a new scope in the same graph;
 *   - graph_replace: the path of VIEW_OPS ops from one layer's Relu to a
 *     later one's, with the first replaced by the graph's input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"
#include "editor/transform.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ge_tref tensor(const ge_graph *g, const char *name)
{
	ge_tref t;
	if (ge_graph_find_tensor(g, name, &t) != GE_OK) {
		fprintf(stderr, "bench_transform: no tensor %s (not the "
			"benchmark graph?)\n", name);
		exit(2);
	}
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_transform GRAPH.pb [VIEW_OPS]\n");
		return 2;
	}
	long nview = argc > 2 ? atol(argv[2]) : 100000;
	ge_error err;
	ge_graph *g;
	double t0 = now();
	if (ge_load(argv[1], NULL, &g, &err)) {
		fprintf(stderr, "bench_transform: %s\n", err.msg);
		return 2;
	}
	double t1 = now();
	size_t n0 = ge_graph_num_ops(g);
	printf("== transform, %zu-op graph (load %.3f s)\n", n0, t1 - t0);

	/* copy: ops [n0/2, n0/2 + nview) of the chain */
	ge_opvec ops = GE_VEC_INIT;
	size_t start = n0 / 2;
	for (size_t id = start; id < start + (size_t)nview && id < n0; id++)
		ge_opvec_push(&ops, (ge_opid)id);
	ge_view v;
	if (ge_view_init(&v, g, ops.v, ops.n, NULL, 0, &err)) {
		fprintf(stderr, "bench_transform: %s\n", err.msg);
		return 2;
	}
	ge_transform_opts o = {0};
	o.dst_scope = "copy";
	ge_view out = GE_VIEW_INIT;
	ge_tinfo *info = NULL;
	double t2 = now();
	int rc = ge_copy(&v, &o, &out, &info, &err);
	double t3 = now();
	if (rc) {
		fprintf(stderr, "bench_transform: copy: %s\n", err.msg);
		return 1;
	}
	printf("copy of %zu ops under copy/ in the same graph: %.3f s "
	       "(%zu ops now, result view %zu ops, %zu inputs)\n",
	       ops.n, t3 - t2, ge_graph_num_ops(g), out.ops.n, out.inputs.n);
	ge_tinfo_free(info);
	ge_view_free(&out);
	ge_view_free(&v);
	ge_opvec_free(&ops);

	/* graph_replace over a path of nview ops: 3 path ops per layer */
	long layers = nview / 3, first = 1000;
	char a[64], b[64];
	snprintf(a, sizeof a, "layer%ld/relu:0", first);
	snprintf(b, sizeof b, "layer%ld/relu:0", first + layers);
	ge_tref target = tensor(g, b), res;
	ge_tpair rp = {tensor(g, a), tensor(g, "input:0")};
	o.dst_scope = "replaced";
	size_t n1 = ge_graph_num_ops(g);
	double t4 = now();
	rc = ge_graph_replace(g, &target, 1, &rp, 1, &o, &res, NULL, &err);
	double t5 = now();
	if (rc) {
		fprintf(stderr, "bench_transform: graph_replace: %s\n", err.msg);
		return 1;
	}
	printf("graph_replace over a %zu-op path (%s .. %s): %.3f s "
	       "(target now %s)\n",
	       ge_graph_num_ops(g) - n1, a, b, t5 - t4, ge_op_name(g, res.op));
	ge_graph_free(g);
	return 0;
}
