/*
 * bench/bench_exec.c: what the executor costs per op, apart from the
 * kernels' arithmetic: a chain of N AddV2 ops on 4-element tensors, and a
 * TF1 while loop of N iterations (10 ops each).  Prints the CPU time per
 * op of the best of 5 runs (process CPU time, so that a loaded machine
 * does not inflate it).  Not run by make check.
 *
 *	bench/bench_exec [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "formats/model.h"

#define FL "attr { key: \"T\" value { type: DT_FLOAT } } "
#define CST(n, v) \
	"node { name: \"" n "\" op: \"Const\" attr { key: \"dtype\" value { " \
	"type: DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: " \
	"DT_FLOAT tensor_shape { dim { size: 4 } } float_val: " v " } } } }\n"
#define ENTER(n, x, c) \
	"node { name: \"" n "\" op: \"Enter\" input: \"" x "\" " FL \
	"attr { key: \"frame_name\" value { s: \"L\" } } attr { key: " \
	"\"is_constant\" value { b: " c " } } }\n"

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static ge_graph *chain(long n)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_adds(&b, CST("c", "1"));
	for (long i = 0; i < n; i++) {
		char prev[32];
		if (i)
			snprintf(prev, sizeof prev, "a%ld", i - 1);
		else
			strcpy(prev, "c");
		ge_buf_printf(&b, "node { name: \"a%ld\" op: \"AddV2\" input: "
			      "\"%s\" input: \"c\" " FL "}\n", i, prev);
	}
	ge_graph *g = NULL;
	ge_error err = {0};
	if (ge_parse(b.data, b.len, GE_FMT_GRAPHDEF_TEXT, "chain", NULL, &g,
		     &err)) {
		fprintf(stderr, "bench_exec: %s\n", err.msg);
		exit(1);
	}
	ge_buf_free(&b);
	return g;
}

static ge_graph *loop(long n)
{
	ge_buf b = GE_BUF_INIT;
	ge_buf_adds(&b, CST("zero", "0") CST("one", "1"));
	ge_buf_printf(&b, "node { name: \"lim\" op: \"Const\" attr { key: "
		      "\"dtype\" value { type: DT_FLOAT } } attr { key: "
		      "\"value\" value { tensor { dtype: DT_FLOAT tensor_shape "
		      "{ dim { size: 4 } } float_val: %ld } } } }\n", n);
	ge_buf_adds(&b, ENTER("e", "zero", "false") ENTER("el", "lim", "true")
		    ENTER("eo", "one", "true")
		    "node { name: \"m\" op: \"Merge\" input: \"e\" input: \"n\" "
		    FL "attr { key: \"N\" value { i: 2 } } }\n"
		    "node { name: \"less\" op: \"Less\" input: \"m\" input: "
		    "\"el\" " FL "}\n"
		    "node { name: \"all\" op: \"All\" input: \"less\" input: "
		    "\"axis\" }\n"
		    "node { name: \"axis\" op: \"Const\" input: \"^m\" attr { "
		    "key: \"dtype\" value { type: DT_INT32 } } attr { key: "
		    "\"value\" value { tensor { dtype: DT_INT32 tensor_shape { "
		    "} int_val: 0 } } } }\n"
		    "node { name: \"lc\" op: \"LoopCond\" input: \"all\" }\n"
		    "node { name: \"sw\" op: \"Switch\" input: \"m\" input: "
		    "\"lc\" " FL "}\n"
		    "node { name: \"id\" op: \"Identity\" input: \"sw:1\" " FL
		    "}\n"
		    "node { name: \"add\" op: \"AddV2\" input: \"id\" input: "
		    "\"eo\" " FL "}\n"
		    "node { name: \"n\" op: \"NextIteration\" input: \"add\" "
		    FL "}\n"
		    "node { name: \"x\" op: \"Exit\" input: \"sw\" " FL "}\n");
	ge_graph *g = NULL;
	ge_error err = {0};
	if (ge_parse(b.data, b.len, GE_FMT_GRAPHDEF_TEXT, "loop", NULL, &g,
		     &err)) {
		fprintf(stderr, "bench_exec: %s\n", err.msg);
		exit(1);
	}
	ge_buf_free(&b);
	return g;
}

/* Best CPU time of 5 runs of fetch, in ms. */
static double best(ge_graph *g, const char *fetch, double want)
{
	ge_xsession *s = NULL;
	ge_error err = {0};
	double b = 1e30;
	if (ge_xsession_open(g, NULL, &s, &err)) {
		fprintf(stderr, "bench_exec: %s\n", err.msg);
		exit(1);
	}
	for (int k = 0; k < 5; k++) {
		ge_xt *out = NULL;
		double t0 = cpu_ms();
		if (ge_xsession_run(s, NULL, 0, &fetch, 1, &out, &err)) {
			fprintf(stderr, "bench_exec: %s\n", err.msg);
			exit(1);
		}
		double t = cpu_ms() - t0;
		if (ge_xt_get_double(out, 0) != want) {
			fprintf(stderr, "bench_exec: %s gave %g, not %g\n",
				fetch, ge_xt_get_double(out, 0), want);
			exit(1);
		}
		ge_xt_unref(out);
		if (t < b)
			b = t;
	}
	ge_xsession_close(s);
	return b;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	char last[32];
	snprintf(last, sizeof last, "a%ld", n - 1);
	ge_graph *g = chain(n);
	double t = best(g, last, (double)n + 1);
	printf("chain of %ld AddV2: %.1f ms, %.2f us per op\n", n, t,
	       t * 1e3 / (double)n);
	ge_graph_free(g);
	g = loop(n);
	t = best(g, "x", (double)n);
	printf("while loop of %ld iterations (10 ops each): %.1f ms, %.2f us "
	       "per op\n", n, t, t * 1e3 / (10.0 * (double)n));
	ge_graph_free(g);
	return 0;
}
