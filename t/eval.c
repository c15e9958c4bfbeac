/*
 * eval: the constant evaluator's kernels against values worked out by hand
 * or taken from TensorFlow's documentation examples: broadcasting, negative
 * axes, the signs of integer division and modulo, casts, rounding, slicing
 * with masks, convolution, and the errors that leave an op unevaluated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/eval.h"
#include "editor/fold.h"
#include "graph/graph.h"
#include "formats/model.h"
#include "tap.h"
#include "testutil.h"

/* "[2,3] 1,2,3,4,5,6": the shape and the values of a tensor, or the
 * error. */
static const char *ev(ge_graph *g, const char *tensor)
{
	static char out[8][2048];
	static int turn;
	char *o = out[turn++ & 7];
	ge_tref t;
	if (ge_graph_find_tensor(g, tensor, &t) != GE_OK)
		return "<no such tensor>";
	ge_value v;
	ge_error err;
	if (ge_eval_tensor(g, t, &v, &err) != GE_OK) {
		snprintf(o, 2048, "error: %s", err.msg);
		return o;
	}
	ge_buf b = GE_BUF_INIT;
	ge_shape_format(&b, v.rank, v.dims);
	ge_buf_addc(&b, ' ');
	for (int64_t k = 0; k < v.n && k < 64; k++) {
		if (k)
			ge_buf_addc(&b, ',');
		if (v.d)
			ge_buf_printf(&b, "%.9g", v.d[k]);
		else
			ge_buf_printf(&b, "%lld", (long long)v.i[k]);
	}
	snprintf(o, 2048, "%s", (char *)b.data);
	ge_buf_free(&b);
	ge_value_free(&v);
	return o;
}

#define T(t) "attr { key: 'T' value { type: " t " } } "
#define F T("DT_FLOAT")
#define I T("DT_INT32")
#define C(n, dt, shape, vals) \
	"node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: " \
	dt " } } attr { key: 'value' value { tensor { dtype: " dt \
	" tensor_shape { " shape " } " vals " } } } }\n"
#define D(x) "dim { size: " #x " } "
#define OP2(n, op, a, b, attrs) \
	"node { name: '" n "' op: '" op "' input: '" a "' input: '" b "' " \
	attrs "}\n"
#define OP1(n, op, a, attrs) \
	"node { name: '" n "' op: '" op "' input: '" a "' " attrs "}\n"

static void broadcasting(void)
{
	/* TensorFlow's broadcasting example: [[1],[2],[3]] + [10,20] */
	ge_graph *g = parse(
		C("col", "DT_FLOAT", D(3) D(1), "float_val: [1, 2, 3]")
		C("row", "DT_FLOAT", D(2), "float_val: [10, 20]")
		OP2("add", "AddV2", "col", "row", F)
		C("s", "DT_FLOAT", "", "float_val: 2")
		OP2("mul", "Mul", "row", "s", F)
		OP2("lt", "Less", "col", "row", F)
		C("x", "DT_FLOAT", D(2) D(3), "float_val: [1, 2, 3, 4, 5, 6]")
		C("b", "DT_FLOAT", D(3), "float_val: [10, 20, 30]")
		OP2("bias", "BiasAdd", "x", "b", F)
		C("bad", "DT_FLOAT", D(4), "float_val: [1, 2, 3, 4]")
		OP2("nob", "Add", "x", "bad", F)
		OP2("sqd", "SquaredDifference", "col", "row", F)
		OP2("mx", "Maximum", "col", "s", F));
	is_string("[3,2] 11,21,12,22,13,23", ev(g, "add"), "[3,1] + [2] broadcasts to [3,2]");
	is_string("[2] 20,40", ev(g, "mul"), "a scalar broadcasts");
	is_string("[3,2] 1,1,1,1,1,1", ev(g, "lt"), "comparisons give bool");
	is_string("[2,3] 11,22,33,14,25,36", ev(g, "bias"), "BiasAdd along the last dim");
	ok(strstr(ev(g, "nob"), "do not broadcast") != NULL, "[2,3] + [4] is an error: %s", ev(g, "nob"));
	is_string("[3,2] 81,361,64,324,49,289", ev(g, "sqd"), "SquaredDifference");
	is_string("[3,1] 2,2,3", ev(g, "mx"), "Maximum with a scalar");
	ge_graph_free(g);
}

static void division(void)
{
	ge_graph *g = parse(
		C("a", "DT_INT32", D(4), "int_val: [7, -7, 7, -7]")
		C("b", "DT_INT32", D(4), "int_val: [2, 2, -2, -2]")
		OP2("fd", "FloorDiv", "a", "b", I) OP2("fm", "FloorMod", "a", "b", I)
		OP2("td", "TruncateDiv", "a", "b", I)
		OP2("tm", "TruncateMod", "a", "b", I) OP2("dv", "Div", "a", "b", I)
		OP2("md", "Mod", "a", "b", I)
		C("fa", "DT_FLOAT", D(4), "float_val: [7, -7, 7, -7]")
		C("fb", "DT_FLOAT", D(4), "float_val: [2, 2, -2, -2]")
		OP2("ffm", "FloorMod", "fa", "fb", F) OP2("ffd", "FloorDiv", "fa", "fb", F)
		OP2("ftm", "TruncateMod", "fa", "fb", F)
		C("z", "DT_INT32", "", "int_val: 0")
		OP2("dz", "FloorDiv", "a", "z", I)
		OP2("dnn", "DivNoNan", "fa", "fz", F)
		C("fz", "DT_FLOAT", "", "float_val: 0")
		C("big", "DT_INT32", "", "int_val: 2147483647")
		C("one", "DT_INT32", "", "int_val: 1")
		OP2("wrap", "Add", "big", "one", I));
	is_string("[4] 3,-4,-4,3", ev(g, "fd"), "FloorDiv rounds toward -inf");
	is_string("[4] 1,1,-1,-1", ev(g, "fm"), "FloorMod takes the divisor's sign");
	is_string("[4] 3,-3,-3,3", ev(g, "td"), "TruncateDiv rounds toward 0");
	is_string("[4] 1,-1,1,-1", ev(g, "tm"), "TruncateMod takes the dividend's sign");
	is_string("[4] 3,-3,-3,3", ev(g, "dv"), "Div on integers truncates");
	is_string("[4] 1,-1,1,-1", ev(g, "md"), "Mod is C's remainder");
	is_string("[4] 1,1,-1,-1", ev(g, "ffm"), "FloorMod on floats");
	is_string("[4] 3,-4,-4,3", ev(g, "ffd"), "FloorDiv on floats");
	is_string("[4] 1,-1,1,-1", ev(g, "ftm"), "TruncateMod on floats is fmod");
	ok(!strncmp(ev(g, "dz"), "error:", 6), "integer division by zero is an error");
	is_string("[4] 0,0,0,0", ev(g, "dnn"), "DivNoNan gives 0 for x/0");
	is_string("[] -2147483648", ev(g, "wrap"), "int32 addition wraps");
	ge_graph_free(g);
}

static void casts_and_math(void)
{
	ge_graph *g = parse(
		C("f", "DT_FLOAT", D(6), "float_val: [-2.5, -1.5, -0.5, 0.5, 1.5, 2.7]")
		OP1("round", "Round", "f", F)
		OP1("toi", "Cast", "f", "attr { key: 'DstT' value { type: DT_INT32 } } "
		    "attr { key: 'SrcT' value { type: DT_FLOAT } } ")
		OP1("tob", "Cast", "f", "attr { key: 'DstT' value { type: DT_BOOL } } ")
		OP1("toh", "Cast", "third", "attr { key: 'DstT' value { type: DT_HALF } } ")
		C("third", "DT_DOUBLE", "", "double_val: 0.333333333333")
		OP1("tof", "Cast", "third", "attr { key: 'DstT' value { type: DT_FLOAT } } ")
		OP1("r6", "Relu6", "g", F)
		C("g", "DT_FLOAT", D(3), "float_val: [-1, 3, 9]")
		OP1("sig", "Sigmoid", "zero", F)
		C("zero", "DT_FLOAT", "", "float_val: 0")
		OP1("sm", "Softmax", "two", F)
		C("two", "DT_FLOAT", D(2), "float_val: [1, 1]")
		OP1("neg", "Neg", "ints", I)
		C("ints", "DT_INT32", D(2), "int_val: [5, -3]")
		OP1("abs", "Abs", "ints", I)
		OP1("sq", "Sqrt", "ints", I));
	is_string("[6] -2,-2,-0,0,2,3", ev(g, "round"), "Round: half to even");
	is_string("[6] -2,-1,0,0,1,2", ev(g, "toi"), "Cast float to int truncates");
	is_string("[6] 1,1,1,1,1,1", ev(g, "tob"), "Cast to bool");
	is_string("[] 0.333251953", ev(g, "toh"), "Cast to half rounds to 11 bits");
	is_string("[] 0.333333343", ev(g, "tof"), "Cast to float rounds to 24 bits");
	is_string("[3] 0,3,6", ev(g, "r6"), "Relu6");
	is_string("[] 0.5", ev(g, "sig"), "Sigmoid(0)");
	is_string("[2] 0.5,0.5", ev(g, "sm"), "Softmax");
	is_string("[2] -5,3", ev(g, "neg"), "Neg on int32");
	is_string("[2] 5,3", ev(g, "abs"), "Abs on int32");
	ok(!strncmp(ev(g, "sq"), "error:", 6), "Sqrt of an int32 is refused: %s", ev(g, "sq"));
	ge_graph_free(g);
}

static void reductions_and_axes(void)
{
	ge_graph *g = parse(
		C("x", "DT_FLOAT", D(2) D(3), "float_val: [1, 2, 3, 4, 5, 6]")
		C("m1", "DT_INT32", "", "int_val: -1")
		C("z", "DT_INT32", "", "int_val: 0")
		C("both", "DT_INT32", D(2), "int_val: [0, -1]")
		OP2("sum", "Sum", "x", "m1", F)
		OP2("sumk", "Sum", "x", "m1", F "attr { key: 'keep_dims' value { b: true } } ")
		OP2("mean", "Mean", "x", "z", F) OP2("prod", "Prod", "x", "both", F)
		OP2("max", "Max", "x", "m1", F) OP2("am", "ArgMax", "x", "m1", F)
		OP2("amin", "ArgMin", "x", "z", F)
		C("xi", "DT_INT32", D(2) D(2), "int_val: [1, 2, 4, 5]")
		OP2("imean", "Mean", "xi", "z", I)
		OP2("cat", "ConcatV2", "x", "x", "input: 'm1' attr { key: 'N' value { i: 2 } } " F)
		OP1("pack", "Pack", "x", "input: 'x' attr { key: 'N' value { i: 2 } } "
		    "attr { key: 'axis' value { i: -1 } } " F)
		C("perm", "DT_INT32", D(2), "int_val: [1, 0]")
		OP2("tr", "Transpose", "x", "perm", F)
		C("ix", "DT_INT32", D(2), "int_val: [2, 0]")
		OP2("ga", "GatherV2", "x", "ix", "input: 'm1' " F)
		C("shp", "DT_INT32", D(2), "int_val: [3, -1]")
		OP2("rs", "Reshape", "x", "shp", F)
		OP1("unp", "Unpack", "x", "attr { key: 'num' value { i: 3 } } "
		    "attr { key: 'axis' value { i: -1 } } " F)
		OP2("ed", "ExpandDims", "x", "m1", F));
	is_string("[2] 6,15", ev(g, "sum"), "Sum on axis -1");
	is_string("[2,1] 6,15", ev(g, "sumk"), "Sum keep_dims");
	is_string("[3] 2.5,3.5,4.5", ev(g, "mean"), "Mean on axis 0");
	is_string("[] 720", ev(g, "prod"), "Prod over axes 0 and -1");
	is_string("[2] 3,6", ev(g, "max"), "Max on axis -1");
	is_string("[2] 2,2", ev(g, "am"), "ArgMax on axis -1 (int64)");
	is_string("[3] 0,0,0", ev(g, "amin"), "ArgMin on axis 0");
	is_string("[2] 2,3", ev(g, "imean"), "integer Mean truncates (5/2, 7/2)");
	is_string("[2,6] 1,2,3,1,2,3,4,5,6,4,5,6", ev(g, "cat"), "ConcatV2 on axis -1");
	is_string("[2,3,2] 1,1,2,2,3,3,4,4,5,5,6,6", ev(g, "pack"), "Pack on axis -1");
	is_string("[3,2] 1,4,2,5,3,6", ev(g, "tr"), "Transpose");
	is_string("[2,2] 3,1,6,4", ev(g, "ga"), "GatherV2 on axis -1");
	is_string("[3,2] 1,2,3,4,5,6", ev(g, "rs"), "Reshape with -1");
	is_string("[2] 3,6", ev(g, "unp:2"), "Unpack on axis -1");
	is_string("[2,3,1] 1,2,3,4,5,6", ev(g, "ed"), "ExpandDims at -1");
	ge_graph_free(g);
}

static void slices_and_shapes(void)
{
	ge_graph *g = parse(
		C("x", "DT_INT32", D(3) D(4), "int_val: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]")
		C("b", "DT_INT32", D(2), "int_val: [-1, 0]")
		C("e", "DT_INT32", D(2), "int_val: [0, 4]")
		C("s", "DT_INT32", D(2), "int_val: [1, 2]")
		/* x[-1, 0:4:2] (shrink axis 0) */
		"node { name: 'ss' op: 'StridedSlice' input: 'x' input: 'b' input: 'e' input: 's' "
		I "attr { key: 'Index' value { type: DT_INT32 } } "
		"attr { key: 'shrink_axis_mask' value { i: 1 } } }\n"
		C("b1", "DT_INT32", D(1), "int_val: [0]")
		C("s1", "DT_INT32", D(1), "int_val: [-1]")
		/* x[::-1] */
		"node { name: 'rev' op: 'StridedSlice' input: 'x' input: 'b1' input: 'b1' input: 's1' "
		I "attr { key: 'Index' value { type: DT_INT32 } } "
		"attr { key: 'begin_mask' value { i: 1 } } attr { key: 'end_mask' value { i: 1 } } }\n"
		C("sb", "DT_INT32", D(2), "int_val: [1, 1]")
		C("sz", "DT_INT32", D(2), "int_val: [-1, 2]")
		"node { name: 'sl' op: 'Slice' input: 'x' input: 'sb' input: 'sz' " I "}\n"
		"node { name: 'sh' op: 'Shape' input: 'x' " I "}\n"
		"node { name: 'sz2' op: 'Size' input: 'x' " I "}\n"
		"node { name: 'rk' op: 'Rank' input: 'x' " I "}\n"
		C("dims", "DT_INT32", D(2), "int_val: [2, 2]")
		C("nine", "DT_INT32", "", "int_val: 9")
		"node { name: 'fill' op: 'Fill' input: 'dims' input: 'nine' " I "}\n"
		C("r0", "DT_INT32", "", "int_val: 3")
		C("r1", "DT_INT32", "", "int_val: 18")
		C("r2", "DT_INT32", "", "int_val: 5")
		"node { name: 'range' op: 'Range' input: 'r0' input: 'r1' input: 'r2' "
		"attr { key: 'Tidx' value { type: DT_INT32 } } }\n"
		C("pads", "DT_INT32", D(2) D(2), "int_val: [0, 1, 1, 0]")
		C("small", "DT_INT32", D(1) D(2), "int_val: [1, 2]")
		"node { name: 'pad' op: 'Pad' input: 'small' input: 'pads' " I "}\n"
		C("mult", "DT_INT32", D(2), "int_val: [2, 2]")
		"node { name: 'tile' op: 'Tile' input: 'small' input: 'mult' " I "}\n"
		C("one", "DT_INT32", "", "int_val: 1")
		"node { name: 'split' op: 'Split' input: 'one' input: 'x' " I
		"attr { key: 'num_split' value { i: 2 } } }\n"
		"node { name: 'ip' op: 'InvertPermutation' input: 'perm' " I "}\n"
		C("perm", "DT_INT32", D(3), "int_val: [2, 0, 1]"));
	is_string("[2] 8,10", ev(g, "ss"), "x[-1, 0:4:2]");
	is_string("[3,4] 8,9,10,11,4,5,6,7,0,1,2,3", ev(g, "rev"), "x[::-1]");
	is_string("[2,2] 5,6,9,10", ev(g, "sl"), "Slice with size -1");
	is_string("[2] 3,4", ev(g, "sh"), "Shape");
	is_string("[] 12", ev(g, "sz2"), "Size");
	is_string("[] 2", ev(g, "rk"), "Rank");
	is_string("[2,2] 9,9,9,9", ev(g, "fill"), "Fill");
	is_string("[3] 3,8,13", ev(g, "range"), "Range(3, 18, 5) (TensorFlow's example)");
	is_string("[2,3] 0,1,2,0,0,0", ev(g, "pad"), "Pad");
	is_string("[2,4] 1,2,1,2,1,2,1,2", ev(g, "tile"), "Tile");
	is_string("[3,2] 2,3,6,7,10,11", ev(g, "split:1"), "Split");
	is_string("[3] 1,2,0", ev(g, "ip"), "InvertPermutation");
	ge_graph_free(g);
}

static void linear(void)
{
	ge_graph *g = parse(
		C("a", "DT_FLOAT", D(2) D(3), "float_val: [1, 2, 3, 4, 5, 6]")
		C("b", "DT_FLOAT", D(3) D(2), "float_val: [7, 8, 9, 10, 11, 12]")
		OP2("mm", "MatMul", "a", "b", F)
		OP2("mmt", "MatMul", "a", "a", F "attr { key: 'transpose_b' value { b: true } } ")
		/* a 3x3 image, a 2x2 filter of ones, one channel */
		C("img", "DT_FLOAT", D(1) D(3) D(3) D(1), "float_val: [1, 2, 3, 4, 5, 6, 7, 8, 9]")
		C("w", "DT_FLOAT", D(2) D(2) D(1) D(1), "float_val: 1")
		"node { name: 'valid' op: 'Conv2D' input: 'img' input: 'w' " F
		"attr { key: 'strides' value { list { i: [1, 1, 1, 1] } } } "
		"attr { key: 'padding' value { s: 'VALID' } } }\n"
		"node { name: 'same' op: 'Conv2D' input: 'img' input: 'w' " F
		"attr { key: 'strides' value { list { i: [1, 2, 2, 1] } } } "
		"attr { key: 'padding' value { s: 'SAME' } } }\n"
		C("dw", "DT_FLOAT", D(1) D(1) D(1) D(2), "float_val: [1, -1]")
		"node { name: 'depth' op: 'DepthwiseConv2dNative' input: 'img' input: 'dw' " F
		"attr { key: 'strides' value { list { i: [1, 1, 1, 1] } } } "
		"attr { key: 'padding' value { s: 'VALID' } } }\n");
	is_string("[2,2] 58,64,139,154", ev(g, "mm"), "MatMul (TensorFlow's example)");
	is_string("[2,2] 14,32,32,77", ev(g, "mmt"), "MatMul transpose_b");
	is_string("[1,2,2,1] 12,16,24,28", ev(g, "valid"), "Conv2D VALID");
	is_string("[1,2,2,1] 12,9,15,9", ev(g, "same"), "Conv2D SAME stride 2 (pads after)");
	is_string("[1,3,3,2] 1,-1,2,-2,3,-3,4,-4,5,-5,6,-6,7,-7,8,-8,9,-9",
		  ev(g, "depth"), "DepthwiseConv2dNative with multiplier 2");
	ge_graph_free(g);
}

static void refusals(void)
{
	ge_graph *g = parse(
		C("s", "DT_STRING", "", "string_val: 'x'")
		OP1("id", "Identity", "s", T("DT_STRING"))
		C("f", "DT_FLOAT", "", "float_val: 1")
		OP1("u", "SomeCustomOp", "f", "")
		"node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
		OP2("y", "Add", "x", "f", F)
		"node { name: 'r' op: 'RandomUniform' input: 'shape' attr { key: 'dtype' value { type: DT_FLOAT } } "
		"attr { key: 'T' value { type: DT_INT32 } } }\n"
		C("shape", "DT_INT32", D(1), "int_val: [2]"));
	ok(strstr(ev(g, "id"), "dtype string is not supported") != NULL,
	   "a string Const is not evaluated: %s", ev(g, "id"));
	ok(strstr(ev(g, "u"), "no kernel for this op type") != NULL,
	   "an op without a kernel: %s", ev(g, "u"));
	ok(strstr(ev(g, "y"), "not constant") != NULL, "a Placeholder is not constant");
	ok(!strncmp(ev(g, "r"), "error:", 6), "a stateful op is not evaluated");
	ge_graph_free(g);
}

/* Hostile values: huge dims and extreme integers give unknown shapes or
 * refusals, never overflow (the sanitizer build runs this). */
static void hostile(void)
{
	ge_graph *g = parse(
		C("x", "DT_FLOAT", D(2) D(3), "float_val: 1")
		C("huge", "DT_INT64", D(3), "int64_val: [9223372036854775807, 9223372036854775807, -1]")
		"node { name: 'rs' op: 'Reshape' input: 'x' input: 'huge' " F
		"attr { key: 'Tshape' value { type: DT_INT64 } } }\n"
		C("lo", "DT_INT64", "", "int64_val: -9223372036854775808")
		C("hi", "DT_INT64", "", "int64_val: 9223372036854775807")
		C("st", "DT_INT64", "", "int64_val: 1")
		"node { name: 'range' op: 'Range' input: 'lo' input: 'hi' input: 'st' "
		"attr { key: 'Tidx' value { type: DT_INT64 } } }\n"
		C("w", "DT_FLOAT", D(1) D(1) D(3) D(1), "float_val: 1")
		C("img", "DT_FLOAT", D(1) D(2) D(2) D(3), "float_val: 1")
		"node { name: 'conv' op: 'Conv2D' input: 'img' input: 'w' " F
		"attr { key: 'strides' value { list { i: [1, 9223372036854775807, 1, 1] } } } "
		"attr { key: 'padding' value { s: 'SAME' } } }\n"
		C("many", "DT_INT32", D(2), "int_val: [2147483647, 2147483647]")
		"node { name: 'tile' op: 'Tile' input: 'x' input: 'many' " F "}\n");
	ok(!strncmp(ev(g, "rs"), "error:", 6), "Reshape into huge dims is refused");
	ok(!strncmp(ev(g, "range"), "error:", 6), "Range over all of int64 is refused");
	ok(!strncmp(ev(g, "conv"), "error:", 6), "Conv2D with a huge stride is refused");
	ok(!strncmp(ev(g, "tile"), "error:", 6), "Tile to 2^62 elements is refused");
	ge_shape_stats st;
	ge_shapes_infer(g, &st, NULL);
	ok(st.outputs > 0, "shape inference gets through them");
	ge_graph_free(g);
}

static void values_api(void)
{
	/* values round-trip through TensorProto bytes */
	ge_value v;
	int64_t dims[2] = {2, 2};
	ge_value_init(&v, 19, 2, dims);
	v.d[0] = 1.0 / 3;
	v.d[1] = 65504;
	v.d[2] = 1e-8;
	v.d[3] = -2;
	ge_value_normalize(&v);
	ok(v.d[0] == 0.333251953125 && v.d[1] == 65504 && v.d[2] == 0 &&
		   v.d[3] == -2,
	   "half values round to half");
	ge_buf b = GE_BUF_INIT;
	ge_value_to_tensor(&v, &b);
	Tensorflow__TensorProto *t =
		tensorflow__tensor_proto__unpack(NULL, b.len, b.data);
	ge_value w;
	ok(t && ge_value_from_tensor(t, &w, NULL) == GE_OK && w.n == 4 &&
		   w.d[0] == v.d[0] && w.d[3] == -2 && w.dtype == 19,
	   "and come back from their TensorProto");
	ge_value_free(&w);
	tensorflow__tensor_proto__free_unpacked(t, NULL);
	ge_buf_free(&b);
	ge_value_free(&v);
}

int main(void)
{
	tap_plan(73);
	broadcasting();
	division();
	casts_and_math();
	reductions_and_axes();
	slices_and_shapes();
	linear();
	refusals();
	hostile();
	values_api();
	return tap_done();
}
