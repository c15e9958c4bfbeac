/*
 * bench_match: times the pattern engine on the benchmark graph.
 *
 *   bench_match GRAPH.pb
 *
 * GRAPH.pb is what bench/gen_graph writes: a stack of Conv2D -> BiasAdd ->
 * Relu layers with Const weights and biases (1,000,000 ops by default).
 * Timed: finding every Relu(BiasAdd(Conv2D(x, const), const)) site (all
 * matches, then non-overlapping ones), and rewriting every site into one
 * _FusedConv2D op (fused_ops = ["BiasAdd", "Relu"], num_args = 1) with the
 * rewrite driver, validation of the result included.  Targets: under 1 s
 * to find, under 2 s to rewrite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "match/match.h"
#include "formats/model.h"

#include "tensorflow/core/framework/attr_value.pb-c.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *what, double t, size_t n)
{
	printf("  %-44s %8.3f s  (%zu)\n", what, t, n);
}

static ge_pat *need(ge_pat *p, const ge_error *err)
{
	if (!p) {
		fprintf(stderr, "bench_match: %s\n", err->msg);
		exit(2);
	}
	return p;
}

static ge_pat *with(ge_pat *p, ge_pat *operand)
{
	ge_pat_add_operand(p, operand, NULL);
	ge_pat_free(operand);
	return p;
}

static ge_pat *named(ge_pat *p, const char *name)
{
	ge_pat_set_capture(p, name, NULL);
	return p;
}

/* Relu(BiasAdd(Conv2D(any, const "w"):as "conv", const "b")):as "act" */
static ge_pat *fuse_pattern(void)
{
	ge_error err;
	ge_pat *conv = need(ge_pat_op("Conv2D", &err), &err);
	with(conv, ge_pat_any());
	with(conv, named(ge_pat_const(), "w"));
	named(conv, "conv");
	ge_pat *ba = need(ge_pat_op("BiasAdd", &err), &err);
	with(ba, conv);
	with(ba, named(ge_pat_const(), "b"));
	ge_pat *act = need(ge_pat_op("Relu", &err), &err);
	with(act, ba);
	return named(act, "act");
}

/* Encoded attrs every fused op gets. */
static ge_buf fused_ops_attr, num_args_attr;

static void encode_attrs(void)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__AttrValue__ListValue l =
		TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
	ProtobufCBinaryData s[2] = {{7, (uint8_t *)"BiasAdd"},
				    {4, (uint8_t *)"Relu"}};
	l.n_s = 2;
	l.s = s;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
	v.list = &l;
	ge_buf_reserve(&fused_ops_attr,
		       tensorflow__attr_value__get_packed_size(&v));
	fused_ops_attr.len = tensorflow__attr_value__pack(&v,
							   fused_ops_attr.data);
	Tensorflow__AttrValue n = TENSORFLOW__ATTR_VALUE__INIT;
	n.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	n.i = 1;
	ge_buf_reserve(&num_args_attr,
		       tensorflow__attr_value__get_packed_size(&n));
	num_args_attr.len = tensorflow__attr_value__pack(&n, num_args_attr.data);
}

static int fuse(ge_graph *g, const ge_match *m, ge_rewrite_repl *r, void *ud,
		ge_error *err)
{
	(void)ud;
	ge_opid conv = ge_match_capture(m, "conv")->t.op;
	ge_tref bias = ge_match_capture(m, "b")->t;
	char name[256];
	snprintf(name, sizeof name, "%s/fused", ge_op_name(g, conv));
	ge_opid f = ge_graph_add_op(g, ge_graph_unique_name(g, name),
				    "_FusedConv2D", err);
	if (f == GE_NOOP)
		return -1;
	ge_op_add_input(g, f, ge_op_input(g, conv, 0), err);
	ge_op_add_input(g, f, ge_op_input(g, conv, 1), err);
	ge_op_add_input(g, f, bias, err);
	for (size_t i = 0; i < ge_op_num_attrs(g, conv); i++) {
		const char *an = ge_op_attr_name(g, conv, i);
		size_t len;
		const uint8_t *raw = ge_op_attr_raw(g, conv, an, &len);
		ge_op_set_attr_raw(g, f, an, raw, len);
	}
	ge_op_set_attr_raw(g, f, "num_args", num_args_attr.data,
			   num_args_attr.len);
	ge_op_set_attr_raw(g, f, "fused_ops", fused_ops_attr.data,
			   fused_ops_attr.len);
	ge_rewrite_replace(r, ge_match_capture(m, "act")->t,
			   (ge_tref){f, 0});
	return 1;
}

static int count_cb(const ge_graph *g, const ge_match *m, void *ud,
		    ge_error *err)
{
	(void)g, (void)m, (void)err;
	++*(size_t *)ud;
	return 0;
}

static size_t count_type(const ge_graph *g, const char *type)
{
	size_t n = 0;
	for (ge_opid i = 0; i < ge_graph_capacity(g); i++)
		if (ge_op_alive(g, i) && !strcmp(ge_op_type(g, i), type))
			n++;
	return n;
}

int main(int argc, char **argv)
{
	ge_graph *g = NULL;
	ge_error err = {0};
	if (argc != 2) {
		fprintf(stderr, "usage: bench_match GRAPH.pb\n");
		return 2;
	}
	double t0 = now();
	if (ge_load(argv[1], NULL, &g, &err)) {
		fprintf(stderr, "bench_match: %s\n", err.msg);
		return 2;
	}
	printf("== pattern matching, %zu ops\n", ge_graph_num_ops(g));
	report("load", now() - t0, ge_graph_num_ops(g));
	encode_attrs();
	ge_pat *p = fuse_pattern();
	size_t n = 0, seen = 0;

	t0 = now();
	ge_opindex *ix = ge_opindex_new();
	ge_opindex_sync(ix, g);
	report("type index", now() - t0, ge_graph_num_ops(g));
	ge_opindex_free(ix);

	t0 = now();
	if (ge_match_all(p, g, NULL, 0, count_cb, &seen, &n, &err)) {
		fprintf(stderr, "bench_match: %s\n", err.msg);
		return 1;
	}
	report("find Conv2D->BiasAdd->Relu, all", now() - t0, n);
	size_t found = n;
	t0 = now();
	ge_match_all(p, g, NULL, GE_MATCH_NONOVERLAP, count_cb, &seen, &n,
		     &err);
	report("find Conv2D->BiasAdd->Relu, non-overlapping", now() - t0, n);

	ge_rule rule = {"fuse_conv_bias_relu", p, fuse, NULL};
	ge_rewrite_opts o = GE_REWRITE_OPTS_INIT;
	size_t cnt = 0;
	t0 = now();
	if (ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err)) {
		fprintf(stderr, "bench_match: %s\n", err.msg);
		return 1;
	}
	report("rewrite into _FusedConv2D (validated)", now() - t0, cnt);
	size_t fused = count_type(g, "_FusedConv2D");
	size_t relus = count_type(g, "Relu");
	t0 = now();
	size_t problems = ge_graph_validate(g, NULL);
	report("validate the result (part of the rewrite)", now() - t0,
	       problems);
	printf("  %zu sites, %zu fused ops, %zu Relu left, %zu ops, %s\n",
	       found, fused, relus, ge_graph_num_ops(g),
	       problems ? "INVALID" : "valid");

	/* a second, empty pass: what a fixpoint run adds */
	o.mode = GE_REWRITE_FIXPOINT;
	t0 = now();
	ge_rewrite(g, &rule, 1, &o, &cnt, NULL, &err);
	report("fixpoint check on the rewritten graph", now() - t0, cnt);
	ge_pat_free(p);
	ge_buf_free(&fused_ops_attr);
	ge_buf_free(&num_args_attr);
	ge_graph_free(g);
	return fused == found && relus == 0 && !problems ? 0 : 1;
}
