/*
 * bench_shapes: times shape and dtype inference on the benchmark graph.
 *
 *   bench_shapes GRAPH.pb
 *
 * GRAPH.pb is what bench/gen_graph writes (1,000,000 ops by default).
 * Timed: inference over the whole graph from a cold cache (every output
 * of every op), then a second call on the unchanged graph (a cache hit),
 * then inference again after one edit.  Target: under 1 s cold.  Wall and
 * CPU time are both printed: the machine is shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "analyses/shapes.h"

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_shapes GRAPH.pb\n");
		return 2;
	}
	ge_graph *g = NULL;
	ge_error err;
	if (ge_load(argv[1], NULL, &g, &err) != GE_OK) {
		fprintf(stderr, "bench_shapes: %s\n", err.msg);
		return 2;
	}
	printf("== shape inference, %zu ops\n", ge_graph_num_ops(g));
	ge_shape_stats st;
	double c0 = cpu(), t0 = now();
	int rc = ge_shapes_infer(g, &st, &err);
	double t1 = now(), c1 = cpu();
	printf("  %-44s %8.3f s  (cpu %.3f s; %zu outputs, %zu fully known)\n",
	       "infer (cold)", t1 - t0, c1 - c0, st.outputs, st.known);
	if (rc != GE_OK)
		printf("  error: %s\n", err.msg);
	t0 = now();
	ge_shapes_infer(g, &st, NULL);
	t1 = now();
	printf("  %-44s %8.3f s\n", "infer (cached)", t1 - t0);
	ge_op_set_device(g, 0, "/cpu:0");
	c0 = cpu();
	t0 = now();
	ge_shapes_infer(g, &st, NULL);
	t1 = now();
	c1 = cpu();
	printf("  %-44s %8.3f s  (cpu %.3f s)\n", "infer after an edit", t1 - t0,
	       c1 - c0);
	ge_graph_free(g);
	return 0;
}
