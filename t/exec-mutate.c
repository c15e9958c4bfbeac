/* The executor on graphs it was not meant to run: the control-flow graphs
 * of t/xgraphs.h with inputs rewired, control edges added and op types
 * changed to control-flow ones at random (a fixed seed), run on random
 * fetches.  Every run ends: it gives its output, or fails with one line
 * and no output.  Under valgrind or a sanitizer build this is also the
 * check that no such graph makes the executor read or write out of
 * bounds or leak. */
#include <stdint.h>

#include "exec/exec.h"
#include "testutil.h"
#include "xgraphs.h"

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_BOOL = 10 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static const char *const graphs[] = {COND, WHILE1, NESTED, CONDLOOP, FUNCS};

static void mutate(ge_graph *g)
{
	static const char *const types[] = {
		"Merge", "Switch", "Enter", "Exit", "NextIteration",
		"LoopCond", "Identity", "NoOp", "ControlTrigger", "_Arg",
		"_Retval", "Placeholder", "StatelessWhile", "If",
	};
	size_t cap = ge_graph_capacity(g);
	int n = 1 + (int)rnd(3);
	for (int m = 0; m < n; m++) {
		ge_opid a = rnd((uint32_t)cap), b = rnd((uint32_t)cap);
		size_t ni = ge_op_num_inputs(g, a);
		ge_error err;
		switch (rnd(4)) {
		case 0:
			ge_op_add_control_input(g, a, b, &err);
			break;
		case 1:
			ge_op_set_type(g, a, types[rnd(14)]);
			break;
		default:
			if (ni)
				ge_op_set_input(g, a, rnd((uint32_t)ni),
						(ge_tref){b, (int32_t)rnd(2)},
						&err);
		}
	}
}

int main(void)
{
	int runs = 0, good = 0, failed = 0, bad_fail = 0, bad_out = 0;
	for (int it = 0; it < 600; it++) {
		const char *txt = graphs[rnd(5)];
		ge_graph *g = parse(txt);
		mutate(g);
		ge_xopts o = GE_XOPTS_INIT;
		o.max_iterations = 50;
		ge_xsession *s = NULL;
		ge_error err = {0};
		if (ge_xsession_open(g, &o, &s, &err)) {
			ge_graph_free(g);
			continue;
		}
		ge_xt *p = ge_xt_scalar(DT_BOOL, NULL, "p", NULL);
		ge_xt *x = ge_xt_scalar(DT_FLOAT, NULL, "x", NULL);
		ge_xt *k = ge_xt_scalar(DT_INT32, NULL, "k", NULL);
		((uint8_t *)p->data)[0] = (uint8_t)rnd(2);
		ge_xfeed all[3] = {{"p", p}, {"x", x}, {"k", k}}, f[3];
		int nf = 0;
		for (int i = 0; i < 3; i++) {
			ge_tref t;
			if (!ge_graph_find_tensor(g, all[i].name, &t))
				f[nf++] = all[i];
		}
		size_t cap = ge_graph_capacity(g);
		for (int r = 0; r < 3; r++) {
			char fetch[300];
			snprintf(fetch, sizeof fetch, "%s%s", rnd(3) ? "" : "^",
				 ge_op_name(g, rnd((uint32_t)cap)));
			const char *fp = fetch;
			ge_xt *out = NULL;
			err.msg[0] = 0;
			runs++;
			if (ge_xsession_run(s, f, nf, &fp, 1, &out, &err)) {
				failed++;
				if (!err.msg[0] || strchr(err.msg, '\n') || out)
					bad_fail++;
			} else {
				good++;
				if (!out != (fetch[0] == '^')) {
					bad_out++;
					tap_diag("%s: %s", fetch, out ? "output" : "none");
				}
			}
			ge_xt_unref(out);
		}
		ge_xt_unref(p);
		ge_xt_unref(x);
		ge_xt_unref(k);
		ge_xsession_close(s);
		ge_graph_free(g);
	}
	ok(runs > 1000, "%d runs of mutated graphs ended (%d gave their "
	   "output, %d failed)", runs, good, failed);
	ok(good > 100 && failed > 100, "both outcomes are exercised");
	is_int(0, bad_fail, "every failure is one line and leaves no output");
	is_int(0, bad_out, "every success gives what was fetched");
	return tap_done();
}
