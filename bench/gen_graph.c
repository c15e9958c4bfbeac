/*
 * gen_graph: writes the benchmark graph, a stack of
 * Conv2D -> BiasAdd -> Relu layers with Const weights and biases, built
 * with the project's own graph API.
 *
 *   gen_graph OUT.pb [NODES] [loops]   (default 1000000 nodes)
 *
 * With `loops`, the stack passes through a TF1 while loop (Enter, Merge,
 * Less, LoopCond, Switch, Identity, Add, NextIteration, Exit, as
 * tf.while_loop builds it) every 1,000 ops: the graph of bench_frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

#define CH 4 /* channels: weights are 1x1xCHxCH */

static void set_type(ge_graph *g, ge_opid id, const char *name, int t)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
	v.type = (Tensorflow__DataType)t;
	ge_op_set_attr(g, id, name, &v);
}

static void set_str(ge_graph *g, ge_opid id, const char *name, const char *s)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
	v.s.data = (uint8_t *)s;
	v.s.len = strlen(s);
	ge_op_set_attr(g, id, name, &v);
}

static void set_bool(ge_graph *g, ge_opid id, const char *name, int b)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
	v.b = b;
	ge_op_set_attr(g, id, name, &v);
}

static void set_ints(ge_graph *g, ge_opid id, const char *name,
		     const int64_t *x, size_t n)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__AttrValue__ListValue l = TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
	l.n_i = n;
	l.i = (int64_t *)x;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
	v.list = &l;
	ge_op_set_attr(g, id, name, &v);
}

static ge_opid make_const(ge_graph *g, const char *name, const int64_t *dims,
			  size_t rank, float seed)
{
	ge_opid id = ge_graph_add_op(g, name, "Const", NULL);
	Tensorflow__TensorShapeProto__Dim d[4], *dp[4];
	Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	size_t n = 1;
	for (size_t i = 0; i < rank; i++) {
		tensorflow__tensor_shape_proto__dim__init(&d[i]);
		d[i].size = dims[i];
		dp[i] = &d[i];
		n *= (size_t)dims[i];
	}
	shape.n_dim = rank;
	shape.dim = dp;
	float vals[CH * CH];
	for (size_t i = 0; i < n; i++)
		vals[i] = seed + 0.001f * (float)i;
	Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
	t.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
	t.tensor_shape = &shape;
	t.tensor_content.data = (uint8_t *)vals;
	t.tensor_content.len = n * sizeof(float);
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
	v.tensor = &t;
	ge_op_set_attr(g, id, "value", &v);
	set_type(g, id, "dtype", 1);
	return id;
}

static ge_opid add1(ge_graph *g, const char *name, const char *type,
		    ge_tref a, ge_tref b)
{
	ge_opid id = ge_graph_add_op(g, name, type, NULL);
	if (a.op != GE_NOOP)
		ge_op_add_input(g, id, a, NULL);
	if (b.op != GE_NOOP)
		ge_op_add_input(g, id, b, NULL);
	if (strcmp(type, "LoopCond"))
		set_type(g, id, "T", 1);
	return id;
}

/* A while loop around cur (12 ops); returns its Exit. */
static ge_tref add_loop(ge_graph *g, long k, ge_tref cur)
{
	static const int64_t none[1];
	static const ge_tref no = {GE_NOOP, 0};
	char n[64], f[64];
	snprintf(f, sizeof f, "loop%ld/while/while_context", k);
#define NM(s) (snprintf(n, sizeof n, "loop%ld/while/" s, k), n)
	ge_opid e = add1(g, NM("Enter"), "Enter", cur, no);
	set_str(g, e, "frame_name", f);
	ge_opid m = add1(g, NM("Merge"), "Merge", (ge_tref){e, 0}, no);
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	v.i = 2;
	ge_op_set_attr(g, m, "N", &v);
	ge_opid y = make_const(g, NM("Less/y"), none, 0, 1.0f);
	ge_op_add_control_input(g, y, m, NULL);
	ge_opid l = add1(g, NM("Less"), "Less", (ge_tref){m, 0}, (ge_tref){y, 0});
	ge_opid c = add1(g, NM("LoopCond"), "LoopCond", (ge_tref){l, 0}, no);
	ge_opid s = add1(g, NM("Switch"), "Switch", (ge_tref){m, 0},
			 (ge_tref){c, 0});
	ge_opid i = add1(g, NM("Identity"), "Identity", (ge_tref){s, 1}, no);
	ge_opid a = make_const(g, NM("add/y"), none, 0, 1.0f);
	ge_op_add_control_input(g, a, i, NULL);
	ge_opid ad = add1(g, NM("add"), "Add", (ge_tref){i, 0}, (ge_tref){a, 0});
	ge_opid ni = add1(g, NM("NextIteration"), "NextIteration",
			  (ge_tref){ad, 0}, no);
	ge_op_add_input(g, m, (ge_tref){ni, 0}, NULL);
	ge_opid x = add1(g, NM("Exit"), "Exit", (ge_tref){s, 0}, no);
#undef NM
	return (ge_tref){x, 0};
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gen_graph OUT.pb [NODES]\n");
		return 2;
	}
	long target = argc > 2 ? atol(argv[2]) : 1000000;
	int loops = argc > 3 && !strcmp(argv[3], "loops");
	long next_loop = 1000;
	ge_graph *g = ge_graph_new();
	ge_error err;
	char name[64];
	ge_opid x = ge_graph_add_op(g, "input", "Placeholder", NULL);
	set_type(g, x, "dtype", 1);
	ge_tref cur = {x, 0};
	static const int64_t wdims[] = {1, 1, CH, CH}, bdims[] = {CH};
	static const int64_t strides[] = {1, 1, 1, 1};
	for (long layer = 0; (long)ge_graph_num_ops(g) + 5 <= target; layer++) {
		snprintf(name, sizeof name, "layer%ld/weights", layer);
		ge_opid w = make_const(g, name, wdims, 4, (float)layer);
		snprintf(name, sizeof name, "layer%ld/conv", layer);
		ge_opid c = ge_graph_add_op(g, name, "Conv2D", NULL);
		ge_op_add_input(g, c, cur, NULL);
		ge_op_add_input(g, c, (ge_tref){w, 0}, NULL);
		set_type(g, c, "T", 1);
		set_ints(g, c, "strides", strides, 4);
		set_str(g, c, "padding", "SAME");
		/* what TensorFlow writes for every Conv2D */
		set_str(g, c, "data_format", "NHWC");
		set_ints(g, c, "dilations", strides, 4);
		set_ints(g, c, "explicit_paddings", NULL, 0);
		set_bool(g, c, "use_cudnn_on_gpu", 1);
		snprintf(name, sizeof name, "layer%ld/bias", layer);
		ge_opid b = make_const(g, name, bdims, 1, (float)layer);
		snprintf(name, sizeof name, "layer%ld/bias_add", layer);
		ge_opid ba = ge_graph_add_op(g, name, "BiasAdd", NULL);
		ge_op_add_input(g, ba, (ge_tref){c, 0}, NULL);
		ge_op_add_input(g, ba, (ge_tref){b, 0}, NULL);
		set_type(g, ba, "T", 1);
		set_str(g, ba, "data_format", "NHWC");
		snprintf(name, sizeof name, "layer%ld/relu", layer);
		ge_opid r = ge_graph_add_op(g, name, "Relu", NULL);
		ge_op_add_input(g, r, (ge_tref){ba, 0}, NULL);
		set_type(g, r, "T", 1);
		cur = (ge_tref){r, 0};
		if (loops && (long)ge_graph_num_ops(g) >= next_loop &&
		    (long)ge_graph_num_ops(g) + 12 + 5 <= target) {
			cur = add_loop(g, layer, cur);
			next_loop += 1000;
		}
	}
	/* top up to exactly the node count asked for */
	for (int k = 0; (long)ge_graph_num_ops(g) < target; k++) {
		snprintf(name, sizeof name, "output/identity%d", k);
		ge_opid id = ge_graph_add_op(g, name, "Identity", NULL);
		ge_op_add_input(g, id, cur, NULL);
		set_type(g, id, "T", 1);
		cur = (ge_tref){id, 0};
	}
	ge_save_opts so = {.format = GE_FMT_GRAPHDEF, .overwrite = 1};
	if (ge_save(g, argv[1], &so, &err)) {
		fprintf(stderr, "gen_graph: %s\n", err.msg);
		return 2;
	}
	printf("%s: %zu nodes\n", argv[1], ge_graph_num_ops(g));
	ge_graph_free(g);
	return 0;
}
