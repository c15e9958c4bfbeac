/*
 * bench_select: times the graph_editor-style queries on a large graph.
 *
 *   bench_select [GRAPH.pb | -n NODES]
 *
 * Without a file it builds the benchmark graph in memory (the chain of
 * Conv2D -> BiasAdd -> Relu layers with Const weights that bench/gen_graph
 * writes, 1,000,000 ops by default).  Each query must stay well under half
 * a second at that size: the library's queries cost time linear in what
 * they touch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "editor/select.h"
#include "editor/subgraph.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ge_opid add(ge_graph *g, const char *name, const char *type,
		   ge_tref a, ge_tref b)
{
	ge_opid id = ge_graph_add_op(g, name, type, NULL);
	if (a.op != GE_NOOP)
		ge_op_add_input(g, id, a, NULL);
	if (b.op != GE_NOOP)
		ge_op_add_input(g, id, b, NULL);
	return id;
}

static ge_graph *build(long target)
{
	static const ge_tref none = {GE_NOOP, 0};
	ge_graph *g = ge_graph_new();
	char name[64];
	ge_tref cur = {add(g, "input", "Placeholder", none, none), 0};
	for (long layer = 0; (long)ge_graph_num_ops(g) + 5 <= target; layer++) {
		snprintf(name, sizeof name, "layer%ld/weights", layer);
		ge_tref w = {add(g, name, "Const", none, none), 0};
		snprintf(name, sizeof name, "layer%ld/conv", layer);
		ge_tref c = {add(g, name, "Conv2D", cur, w), 0};
		snprintf(name, sizeof name, "layer%ld/bias", layer);
		ge_tref b = {add(g, name, "Const", none, none), 0};
		snprintf(name, sizeof name, "layer%ld/bias_add", layer);
		ge_tref ba = {add(g, name, "BiasAdd", c, b), 0};
		snprintf(name, sizeof name, "layer%ld/relu", layer);
		cur = (ge_tref){add(g, name, "Relu", ba, none), 0};
	}
	for (int k = 0; (long)ge_graph_num_ops(g) < target; k++) {
		snprintf(name, sizeof name, "output/identity%d", k);
		cur = (ge_tref){add(g, name, "Identity", cur, none), 0};
	}
	return g;
}

static void report(const char *what, double t, size_t n)
{
	printf("  %-44s %8.3f s  (%zu)\n", what, t, n);
}

int main(int argc, char **argv)
{
	ge_graph *g = NULL;
	ge_error err = {0};
	long target = 1000000;
	double t0;

	if (argc > 2 && strcmp(argv[1], "-n") == 0)
		target = atol(argv[2]);
	if (argc == 2) {
		t0 = now();
		if (ge_load(argv[1], NULL, &g, &err) != GE_OK) {
			fprintf(stderr, "bench_select: %s\n", err.msg);
			return 2;
		}
		printf("== select, %zu ops loaded from %s in %.3f s\n",
		       ge_graph_num_ops(g), argv[1], now() - t0);
	} else {
		t0 = now();
		g = build(target);
		printf("== select, %zu ops built in memory in %.3f s\n",
		       ge_graph_num_ops(g), now() - t0);
	}

	size_t cap = ge_graph_capacity(g);
	ge_opid first = ge_graph_find(g, "input"), last = GE_NOOP;
	for (size_t id = cap; id-- > 0;)
		if (ge_op_alive(g, (ge_opid)id)) {
			last = (ge_opid)id;
			break;
		}
	if (first == GE_NOOP)
		first = 0;

	ge_opvec v = GE_VEC_INIT;
	ge_tvec a = GE_VEC_INIT, b = GE_VEC_INIT, c = GE_VEC_INIT;
	ge_walk_opts o = GE_WALK_OPTS_INIT;

	/* the first call warms the output-count caches */
	ge_seeds s = {&first, 1, NULL, 0};
	t0 = now();
	ge_get_forward_walk_ops(g, &s, &o, &v, &err);
	report("forward walk from the input", now() - t0, v.n);
	v.n = 0;

	ge_seeds sl = {&last, 1, NULL, 0};
	t0 = now();
	ge_get_backward_walk_ops(g, &sl, &o, &v, &err);
	report("backward walk from the last op", now() - t0, v.n);
	v.n = 0;

	ge_opvec half = GE_VEC_INIT;
	for (size_t id = 0; id < cap / 2; id++)
		if (ge_op_alive(g, (ge_opid)id))
			ge_opvec_push(&half, (ge_opid)id);
	t0 = now();
	ge_compute_boundary_ts(g, half.v, half.n, &a, &b, &c);
	report("compute_boundary_ts of half the graph", now() - t0,
	       a.n + b.n + c.n);

	ge_sel_arg re = {GE_SEL_REGEX, "layer[0-9]*7/relu$", NULL, 0, NULL, 0};
	t0 = now();
	ge_select_ops(g, &re, 1, NULL, &v, &err);
	report("select_ops(\"layer[0-9]*7/relu$\") over all", now() - t0, v.n);
	v.n = 0;

	/* beyond the four required figures */
	ge_sel_arg rt = {GE_SEL_REGEX, "(?#ts)relu:0$", NULL, 0, NULL, 0};
	a.n = 0;
	t0 = now();
	ge_select_ts(g, &rt, 1, NULL, &a, &err);
	report("select_ts(\"(?#ts)relu:0$\") over all", now() - t0, a.n);

	ge_view view;
	t0 = now();
	ge_view_init(&view, g, half.v, half.n, NULL, 0, &err);
	report("SubGraphView of half the graph", now() - t0, view.ops.n);
	ge_view_free(&view);

	t0 = now();
	ge_get_within_boundary_ops(g, GE_ALL_OPS, 0, &first, 1, NULL, 0, 1, 0, 0,
				   &v, &err);
	report("get_within_boundary_ops, no boundary", now() - t0, v.n);
	v.n = 0;

	ge_opvec_free(&v);
	ge_opvec_free(&half);
	ge_tvec_free(&a);
	ge_tvec_free(&b);
	ge_tvec_free(&c);
	ge_graph_free(g);
	ge_regex_cache_clear();
	return 0;
}
