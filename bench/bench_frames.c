/*
 * bench_frames: times the frames of a large graph with while loops.
 *
 *   bench_frames GRAPH.pb
 *
 * GRAPH.pb is `gen_graph OUT.pb 1000000 loops`: the layer stack with a
 * TF1 while loop every 1,000 ops.  Prints the time of the frame
 * computation (fresh, then after an edit moved the graph's version), of
 * the control-flow checks of validate, and of a whole-loop view.  The
 * frame computation must stay under half a second at 1,000,000 ops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/frames.h"
#include "graph/graph.h"
#include "formats/model.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_frames GRAPH.pb\n");
		return 2;
	}
	ge_graph *g = NULL;
	ge_error err;
	ge_load_opts lo = {0};
	if (ge_load(argv[1], &lo, &g, &err)) {
		fprintf(stderr, "bench_frames: %s\n", err.msg);
		return 2;
	}
	printf("== frames, %zu ops\n", ge_graph_num_ops(g));
	double t0 = now();
	const ge_frames *F = ge_graph_frames(g);
	double t1 = now();
	printf("frames (first):        %.3f s  (%zu frames)\n", t1 - t0,
	       ge_frames_count(F) - 1);
	t0 = now();
	F = ge_graph_frames(g);
	t1 = now();
	printf("frames (cached):       %.6f s\n", t1 - t0);
	ge_op_set_device(g, 0, "/cpu:0");
	t0 = now();
	F = ge_graph_frames(g);
	t1 = now();
	printf("frames (after edit):   %.3f s\n", t1 - t0);
	ge_buf rep = GE_BUF_INIT;
	t0 = now();
	size_t n = ge_frames_validate(g, &rep);
	t1 = now();
	printf("control-flow checks:   %.3f s  (%zu problems)\n", t1 - t0, n);
	if (n)
		printf("%.*s", (int)(rep.len > 400 ? 400 : rep.len),
		       (const char *)rep.data);
	ge_buf_free(&rep);
	ge_opvec v = GE_VEC_INIT;
	/* the body of a loop half way down the stack */
	ge_opid mid = 0;
	for (size_t id = ge_graph_capacity(g) / 2; id < ge_graph_capacity(g);
	     id++)
		if (!strcmp(ge_op_type(g, (ge_opid)id), "Add")) {
			mid = (ge_opid)id;
			break;
		}
	ge_opvec_push(&v, mid);
	t0 = now();
	ge_frames_whole_loops(g, &v);
	t1 = now();
	printf("whole loop of one op:  %.3f s  (%zu ops)\n", t1 - t0, v.n);
	ge_opvec_free(&v);
	ge_graph_free(g);
	return 0;
}
