/*
 * kernels-math: the runner's arithmetic kernels against values worked out
 * by hand: unary functions, broadcasting, integer wrap and division
 * signs, NaN through Maximum, Minimum and Relu, casts, reductions,
 * softmax, and refusals of bad dtypes and shapes naming the op.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ktest.h"

#define TF KT_ATTR_TYPE("T", "DT_FLOAT")

static void test_unary(void)
{
	kt_c("x", "DT_FLOAT", "5", "-2 -0.5 0 3 7");
	kt_op("y", "Relu", "x", TF);
	is_string("float32[5] 0,0,0,3,7", kt_run("y"), "Relu");
	kt_c("x", "DT_FLOAT", "4", "-1 3 7 nan");
	kt_op("y", "Relu6", "x", TF);
	is_string("float32[4] 0,3,6,nan", kt_run("y"), "Relu6 keeps NaN");
	kt_c("x", "DT_FLOAT", "2", "nan -1");
	kt_op("y", "Relu", "x", TF);
	is_string("float32[2] nan,0", kt_run("y"), "Relu keeps NaN");
	kt_c("x", "DT_FLOAT", "3", "-2 0.5 2");
	kt_op("y", "LeakyRelu", "x", KT_ATTR_TYPE("T", "DT_FLOAT")
	      "attr { key: \"alpha\" value { f: 0.5 } }");
	is_string("float32[3] -1,0.5,2", kt_run("y"), "LeakyRelu with alpha");
	kt_c("x", "DT_FLOAT", "4", "0.5 1.5 2.5 -2.5");
	kt_op("y", "Round", "x", TF);
	is_string("float32[4] 0,2,2,-2", kt_run("y"), "Round: half to even");
	kt_c("x", "DT_FLOAT", "3", "4 0.25 -1");
	kt_op("y", "Sqrt", "x", TF);
	is_string("float32[3] 2,0.5,nan", kt_run("y"), "Sqrt");
	kt_c("x", "DT_FLOAT", "2", "0 100");
	kt_op("y", "Sigmoid", "x", TF);
	is_string("float32[2] 0.5,1", kt_run("y"), "Sigmoid");
	kt_c("x", "DT_FLOAT", "3", "-20 0 20");
	kt_op("y", "Softplus", "x", TF);
	is_string("float32[3] 2.06115369e-09,0.693147182,20", kt_run("y"),
		  "Softplus with TensorFlow's thresholds");
	kt_c("x", "DT_FLOAT", "3", "nan inf 1");
	kt_op("y", "IsNan", "x", TF);
	is_string("bool[3] 1,0,0", kt_run("y"), "IsNan");
	kt_c("x", "DT_FLOAT", "3", "nan inf 1");
	kt_op("y", "IsFinite", "x", TF);
	is_string("bool[3] 0,0,1", kt_run("y"), "IsFinite");
	kt_c("x", "DT_INT32", "3", "-2147483648 -5 7");
	kt_op("y", "Abs", "x", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[3] -2147483648,5,7", kt_run("y"),
		  "int32 Abs wraps at its width");
	kt_c("x", "DT_INT8", "2", "-128 100");
	kt_op("y", "Neg", "x", KT_ATTR_TYPE("T", "DT_INT8"));
	is_string("int8[2] -128,-100", kt_run("y"), "int8 Neg wraps");
	kt_c("x", "DT_UINT8", "3", "200 3 0");
	kt_op("y", "Relu6", "x", KT_ATTR_TYPE("T", "DT_UINT8"));
	is_string("uint8[3] 6,3,0", kt_run("y"), "uint8 Relu6 compares unsigned");
	kt_c("x", "DT_INT32", "1", "65536");
	kt_op("y", "Square", "x", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[1] 0", kt_run("y"), "int32 Square wraps");
	kt_c("x", "DT_HALF", "2", "15360 16384"); /* 1, 2 */
	kt_op("y", "Exp", "x", KT_ATTR_TYPE("T", "DT_HALF"));
	is_string("float16[2] 2.71875,7.390625", kt_run("y"),
		  "float16 Exp through float32, rounded back");
	kt_c("x", "DT_INT32", "1", "4");
	kt_op("y", "Sqrt", "x", KT_ATTR_TYPE("T", "DT_INT32"));
	ok(kt_err(kt_run("y"), "y (Sqrt): input 0 has dtype int32"),
	   "Sqrt of int32 is refused naming the op");
	kt_c("x", "DT_FLOAT", "4", "0.0001 1 -20 nan");
	kt_op("y", "Tanh", "x", TF);
	const char *th = kt_run("y");
	float t0, t1, t2;
	ok(sscanf(th, "float32[4] %g,%g,%g,nan", &t0, &t1, &t2) == 3 &&
	   t0 == 0.0001f && fabsf(t1 - 0.761594156f) < 2e-7f && t2 == -1.0f,
	   "Tanh: x near 0, tanh(1), -1 past the clamp, NaN kept (%s)", th);
	kt_c("x", "DT_BOOL", "2", "true false");
	kt_op("y", "LogicalNot", "x", "");
	is_string("bool[2] 0,1", kt_run("y"), "LogicalNot");
}

static void test_binary(void)
{
	kt_c("a", "DT_FLOAT", "2,3", "1 2 3 4 5 6");
	kt_c("b", "DT_FLOAT", "3", "10 20 30");
	kt_op("y", "AddV2", "a,b", TF);
	is_string("float32[2,3] 11,22,33,14,25,36", kt_run("y"),
		  "AddV2 broadcasts a row");
	kt_c("a", "DT_FLOAT", "2,1", "1 2");
	kt_c("b", "DT_FLOAT", "1,3", "10 20 30");
	kt_op("y", "Mul", "a,b", TF);
	is_string("float32[2,3] 10,20,30,20,40,60", kt_run("y"),
		  "Mul broadcasts both sides");
	kt_c("a", "DT_FLOAT", "", "2");
	kt_c("b", "DT_FLOAT", "2,2", "1 2 3 4");
	kt_op("y", "Sub", "a,b", TF);
	is_string("float32[2,2] 1,0,-1,-2", kt_run("y"), "a scalar minus");
	kt_c("a", "DT_FLOAT", "2,3,1", "1 2 3 4 5 6");
	kt_c("b", "DT_FLOAT", "2,1,2", "0 1 10 11");
	kt_op("y", "Add", "a,b", TF);
	is_string("float32[2,3,2] 1,2,2,3,3,4,14,15,15,16,16,17", kt_run("y"),
		  "rank-3 broadcasting in the middle");
	kt_c("a", "DT_FLOAT", "2", "1 2");
	kt_c("b", "DT_FLOAT", "3", "1 2 3");
	kt_op("y", "Add", "a,b", TF);
	ok(kt_err(kt_run("y"), "y (Add): shapes [2] and [3] do not broadcast"),
	   "shapes that do not broadcast are refused naming the op");
	kt_c("a", "DT_FLOAT", "4", "nan 1 2 nan");
	kt_c("b", "DT_FLOAT", "4", "1 nan 3 nan");
	kt_op("y", "Maximum", "a,b", TF);
	is_string("float32[4] nan,nan,3,nan", kt_run("y"),
		  "Maximum propagates NaN from either side");
	kt_c("a", "DT_FLOAT", "4", "nan 1 2 nan");
	kt_c("b", "DT_FLOAT", "4", "1 nan 3 nan");
	kt_op("y", "Minimum", "a,b", TF);
	is_string("float32[4] nan,nan,2,nan", kt_run("y"), "and Minimum");
	kt_c("a", "DT_INT32", "4", "7 -7 7 -7");
	kt_c("b", "DT_INT32", "4", "2 2 -2 -2");
	kt_op("y", "FloorDiv", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[4] 3,-4,-4,3", kt_run("y"), "FloorDiv rounds down");
	kt_c("a", "DT_INT32", "4", "7 -7 7 -7");
	kt_c("b", "DT_INT32", "4", "2 2 -2 -2");
	kt_op("y", "FloorMod", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[4] 1,1,-1,-1", kt_run("y"),
		  "FloorMod takes the divisor's sign");
	kt_c("a", "DT_INT32", "4", "7 -7 7 -7");
	kt_c("b", "DT_INT32", "4", "2 2 -2 -2");
	kt_op("y", "TruncateDiv", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[4] 3,-3,-3,3", kt_run("y"), "TruncateDiv");
	kt_c("a", "DT_FLOAT", "2", "-7 7");
	kt_c("b", "DT_FLOAT", "2", "2 -2");
	kt_op("y", "FloorMod", "a,b", TF);
	is_string("float32[2] 1,-1", kt_run("y"), "float FloorMod");
	kt_c("a", "DT_INT32", "2", "1 2");
	kt_c("b", "DT_INT32", "2", "0 1");
	kt_op("y", "FloorDiv", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	ok(kt_err(kt_run("y"), "y (FloorDiv): integer division by zero"),
	   "integer division by zero fails the op");
	kt_c("a", "DT_INT32", "2", "2147483647 -2147483648");
	kt_c("b", "DT_INT32", "2", "1 -1");
	kt_op("y", "Add", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[2] -2147483648,2147483647", kt_run("y"),
		  "int32 Add wraps");
	kt_c("a", "DT_UINT8", "2", "250 3");
	kt_c("b", "DT_UINT8", "2", "10 5");
	kt_op("y", "Sub", "a,b", KT_ATTR_TYPE("T", "DT_UINT8"));
	is_string("uint8[2] 240,254", kt_run("y"), "uint8 Sub wraps");
	kt_c("a", "DT_INT32", "2", "3 -2");
	kt_c("b", "DT_INT32", "2", "3 3");
	kt_op("y", "Pow", "a,b", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[2] 27,-8", kt_run("y"), "integer Pow");
	kt_c("a", "DT_FLOAT", "3", "1 0 -1");
	kt_c("b", "DT_FLOAT", "3", "0 0 2");
	kt_op("y", "DivNoNan", "a,b", TF);
	is_string("float32[3] 0,0,-0.5", kt_run("y"), "DivNoNan");
	kt_c("a", "DT_FLOAT", "3", "1 2 3");
	kt_c("b", "DT_FLOAT", "", "2");
	kt_op("y", "GreaterEqual", "a,b", TF);
	is_string("bool[3] 0,1,1", kt_run("y"), "GreaterEqual gives bools");
	kt_c("a", "DT_STRING", "2", "ab cd");
	kt_c("b", "DT_STRING", "", "cd");
	kt_op("y", "Equal", "a,b", KT_ATTR_TYPE("T", "DT_STRING"));
	is_string("bool[2] 0,1", kt_run("y"), "Equal on strings");
	kt_c("a", "DT_STRING", "2", "ab c");
	kt_c("b", "DT_STRING", "", "x");
	kt_op("y", "Add", "a,b", KT_ATTR_TYPE("T", "DT_STRING"));
	is_string("string[2] abx,cx", kt_run("y"), "Add joins strings");
	kt_c("a", "DT_STRING", "1", "ab");
	kt_c("b", "DT_STRING", "1", "x");
	kt_op("y", "AddV2", "a,b", KT_ATTR_TYPE("T", "DT_STRING"));
	ok(kt_err(kt_run("y"), "y (AddV2): input 0 has dtype string"),
	   "AddV2 does not take strings");
	kt_c("a", "DT_FLOAT", "2", "1 2");
	kt_c("b", "DT_INT32", "2", "1 2");
	kt_op("y", "Add", "a,b", TF);
	ok(kt_err(kt_run("y"), "y (Add): inputs of dtypes float32 and int32"),
	   "mixed dtypes are refused");
	kt_c("a", "DT_FLOAT", "2", "1 2");
	kt_c("b", "DT_FLOAT", "2", "1 2");
	kt_op("y", "LogicalAnd", "a,b", "");
	ok(kt_err(kt_run("y"), "y (LogicalAnd): input 0 has dtype float32"),
	   "LogicalAnd of floats is refused");
	kt_c("v", "DT_FLOAT", "1,2,2,3", "0 0 0 1 1 1 2 2 2 3 3 3");
	kt_c("b", "DT_FLOAT", "3", "1 2 3");
	kt_op("y", "BiasAdd", "v,b", TF);
	is_string("float32[1,2,2,3] 1,2,3,2,3,4,3,4,5,4,5,6", kt_run("y"),
		  "BiasAdd NHWC");
	kt_c("v", "DT_FLOAT", "1,3,2", "0 0 1 1 2 2");
	kt_c("b", "DT_FLOAT", "3", "1 2 3");
	kt_op("y", "BiasAdd", "v,b", TF KT_ATTR_STR("data_format", "NCHW"));
	is_string("float32[1,3,2] 1,1,3,3,5,5", kt_run("y"), "BiasAdd NCHW");
	kt_c("v", "DT_FLOAT", "2,2", "0 0 0 0");
	kt_c("b", "DT_FLOAT", "3", "1 2 3");
	kt_op("y", "BiasAdd", "v,b", TF);
	ok(kt_err(kt_run("y"), "y (BiasAdd): bias has 3 elements"),
	   "a bias of the wrong size is refused");
	kt_c("a", "DT_FLOAT", "2", "1 2");
	kt_c("b", "DT_FLOAT", "2", "10 20");
	kt_c("c", "DT_FLOAT", "2", "100 200");
	kt_op("y", "AddN", "a,b,c", TF);
	is_string("float32[2] 111,222", kt_run("y"), "AddN");
	kt_c("c", "DT_BOOL", "2", "true false");
	kt_c("a", "DT_FLOAT", "2,2", "1 2 3 4");
	kt_c("b", "DT_FLOAT", "2,2", "5 6 7 8");
	kt_op("y", "Select", "c,a,b", TF);
	is_string("float32[2,2] 1,2,7,8", kt_run("y"),
		  "Select with a vector condition picks rows");
	kt_c("c", "DT_BOOL", "2", "true false");
	kt_c("a", "DT_FLOAT", "2,2", "1 2 3 4");
	kt_c("b", "DT_FLOAT", "", "0");
	kt_op("y", "SelectV2", "c,a,b", TF);
	is_string("float32[2,2] 1,0,3,0", kt_run("y"), "SelectV2 broadcasts");
	kt_c("x", "DT_FLOAT", "4", "-5 0.5 5 nan");
	kt_c("lo", "DT_FLOAT", "", "0");
	kt_c("hi", "DT_FLOAT", "", "1");
	kt_op("y", "ClipByValue", "x,lo,hi", TF);
	is_string("float32[4] 0,0.5,1,nan", kt_run("y"), "ClipByValue");
}

static void test_cast(void)
{
	kt_c("x", "DT_FLOAT", "5", "1.9 -1.9 nan 3e9 -0.5");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_INT32"));
	is_string("int32[5] 1,-1,-2147483648,-2147483648,0", kt_run("y"),
		  "float32 to int32 truncates; NaN and overflow give INT_MIN");
	kt_c("x", "DT_INT32", "3", "300 -1 255");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_UINT8"));
	is_string("uint8[3] 44,255,255", kt_run("y"), "int32 to uint8 wraps");
	kt_c("x", "DT_FLOAT", "3", "0 -0.0 0.1");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_BOOL"));
	is_string("bool[3] 0,0,1", kt_run("y"), "float to bool");
	kt_c("x", "DT_INT64", "1", "16777217");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_FLOAT"));
	is_string("float32[1] 16777216", kt_run("y"),
		  "int64 to float32 rounds to nearest even");
	kt_c("x", "DT_FLOAT", "2", "65520 1.0009765625");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_HALF"));
	is_string("float16[2] inf,1.0009765625", kt_run("y"),
		  "float32 to float16 overflows to inf");
	kt_c("x", "DT_BOOL", "2", "true false");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_FLOAT"));
	is_string("float32[2] 1,0", kt_run("y"), "bool to float");
	kt_c("x", "DT_STRING", "1", "a");
	kt_op("y", "Cast", "x", KT_ATTR_TYPE("DstT", "DT_FLOAT"));
	ok(kt_err(kt_run("y"), "y (Cast): cannot cast string to float32"),
	   "a string cast is refused");
}

static void test_reduce(void)
{
	kt_c("x", "DT_FLOAT", "2,3", "1 2 3 4 5 6");
	kt_c("a", "DT_INT32", "1", "1");
	kt_op("y", "Sum", "x,a", TF);
	is_string("float32[2] 6,15", kt_run("y"), "Sum over the last axis");
	kt_c("x", "DT_FLOAT", "2,3", "1 2 3 4 5 6");
	kt_c("a", "DT_INT32", "1", "0");
	kt_op("y", "Mean", "x,a", TF KT_ATTR_BOOL("keep_dims", "true"));
	is_string("float32[1,3] 2.5,3.5,4.5", kt_run("y"), "Mean, keep_dims");
	kt_c("x", "DT_FLOAT", "2,2,2", "1 2 3 4 5 6 7 8");
	kt_c("a", "DT_INT32", "2", "0 -1");
	kt_op("y", "Max", "x,a", TF);
	is_string("float32[2] 6,8", kt_run("y"), "Max over two axes");
	kt_c("x", "DT_FLOAT", "3", "1 nan 3");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Max", "x,a", TF);
	is_string("float32[] nan", kt_run("y"), "Max propagates NaN");
	kt_c("x", "DT_INT32", "2", "2147483647 1");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Sum", "x,a", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[] -2147483648", kt_run("y"), "int32 Sum wraps");
	kt_c("x", "DT_INT32", "2", "-7 2");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Mean", "x,a", KT_ATTR_TYPE("T", "DT_INT32"));
	is_string("int32[] -2", kt_run("y"), "integer Mean truncates");
	kt_c("x", "DT_FLOAT", "0", "");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Prod", "x,a", TF);
	is_string("float32[] 1", kt_run("y"), "an empty Prod is 1");
	kt_c("x", "DT_BOOL", "2,2", "true false true true");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "All", "x,a", "");
	is_string("bool[2] 0,1", kt_run("y"), "All");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "Sum", "x,a", TF);
	ok(kt_err(kt_run("y"), "y (Sum): axis 1 is out of range for rank 1"),
	   "an axis out of range is refused");
	kt_c("x", "DT_FLOAT", "2,3", "1 5 5 9 2 9");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "ArgMax", "x,a", TF);
	is_string("int64[2] 1,0", kt_run("y"), "ArgMax takes the first of ties");
	kt_c("x", "DT_FLOAT", "2,2", "1 1 0 0.69314718");
	kt_op("y", "Softmax", "x", TF);
	is_string("float32[2,2] 0.5,0.5,0.333333343,0.666666687", kt_run("y"),
		  "Softmax");
	kt_c("x", "DT_FLOAT", "2", "0 0");
	kt_op("y", "LogSoftmax", "x", TF);
	is_string("float32[2] -0.693147182,-0.693147182", kt_run("y"),
		  "LogSoftmax");
	kt_c("x", "DT_INT32", "4", "1 2 3 4");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Cumsum", "x,a", KT_ATTR_BOOL("exclusive", "true")
	      KT_ATTR_BOOL("reverse", "true"));
	is_string("int32[4] 9,7,4,0", kt_run("y"), "Cumsum exclusive reverse");
	kt_c("x", "DT_FLOAT", "3", "16777216 1 1");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "Cumsum", "x,a", TF);
	is_string("float32[3] 16777216,16777216,16777216", kt_run("y"),
		  "a float32 Cumsum rounds at each step");
	kt_c("x", "DT_FLOAT", "2,3", "1 3 2 6 5 6");
	kt_c("k", "DT_INT32", "", "2");
	kt_op("y", "TopKV2", "x,k", TF);
	ge_graph *gr = parse(kt_text);
	is_string("float32[2,2] 3,2,6,6", kt_eval(gr, "y:0"), "TopKV2 values");
	is_string("int32[2,2] 1,2,0,2", kt_eval(gr, "y:1"),
		  "TopKV2 indices, the lower first on ties");
	ge_graph_free(gr);
	kt_len = 0;
}

/* Fake quantization, against TensorFlow's formula worked out in float32
 * step by step apart from the kernel (k_quant.c's comment): the range
 * nudged so that 0 is on the grid ([-1, 1] on 8 bits: zero point 127,
 * [-0.99608, 1.00392]), values clamped into it and rounded to the grid. */
static void test_fake_quant(void)
{
	kt_c("x", "DT_FLOAT", "5", "0.1 0.5 -0.3 2 -2");
	kt_c("mn", "DT_FLOAT", "", "-1");
	kt_c("mx", "DT_FLOAT", "", "1");
	kt_op("y", "FakeQuantWithMinMaxVars", "x,mn,mx", "");
	is_string("float32[5] 0.101960778,0.501960754,-0.298039258,"
		  "1.00392151,-0.996078491", kt_run("y"),
		  "FakeQuantWithMinMaxVars: [-1, 1] nudged, clamped, on the "
		  "grid");
	kt_c("x", "DT_FLOAT", "4", "0.1 -7 3.3 6.5");
	kt_op("y", "FakeQuantWithMinMaxArgs", "x", "");
	is_string("float32[4] 0.0941176414,-6.02352953,3.29411745,5.97647047",
		  kt_run("y"), "FakeQuantWithMinMaxArgs: the default [-6, 6]");
	kt_c("x", "DT_FLOAT", "4", "0.1 0.5 0.97 -0.2");
	kt_c("mn", "DT_FLOAT", "", "0");
	kt_c("mx", "DT_FLOAT", "", "1");
	kt_op("y", "FakeQuantWithMinMaxVars", "x,mn,mx",
	      KT_ATTR_INT("num_bits", 4) KT_ATTR_BOOL("narrow_range", "true"));
	is_string("float32[4] 0.0714285746,0.5,1,0", kt_run("y"),
		  "4 bits, narrow range: 14 steps over [0, 1]");
	kt_c("x", "DT_FLOAT", "2,2", "0.1 1.3 -0.3 2.5");
	kt_c("mn", "DT_FLOAT", "2", "-1 0");
	kt_c("mx", "DT_FLOAT", "2", "1 2");
	kt_op("y", "FakeQuantWithMinMaxVarsPerChannel",
	      "x,mn,mx", "");
	is_string("float32[2,2] 0.101960778,1.30196083,-0.298039258,2",
		  kt_run("y"), "per channel: a range per last-dim column");
	kt_c("x", "DT_FLOAT", "1", "0");
	kt_op("y", "FakeQuantWithMinMaxArgs", "x",
	      "attr { key: \"min\" value { f: 1 } } "
	      "attr { key: \"max\" value { f: -1 } }");
	ok(kt_err(kt_run("y"), "y (FakeQuantWithMinMaxArgs): min 1 must be "
		  "smaller than max -1"), "an empty range is refused, naming "
	   "the op");
	kt_c("x", "DT_FLOAT", "1", "0");
	kt_op("y", "FakeQuantWithMinMaxArgs", "x", KT_ATTR_INT("num_bits", 17));
	ok(kt_err(kt_run("y"), "y (FakeQuantWithMinMaxArgs): num_bits is 17"),
	   "so are 17 bits");

	/* QuantizeAndDequantize: the side of the range allowing the smaller
	 * scale keeps its end ([-1.5, 2] on int8: scale 127 / 2) */
	kt_c("x", "DT_FLOAT", "4", "-1.5 0.3 0.75 2");
	kt_c("mn", "DT_FLOAT", "", "0");
	kt_c("mx", "DT_FLOAT", "", "0");
	kt_op("y", "QuantizeAndDequantizeV2", "x,mn,mx", TF);
	is_string("float32[4] -1.49606299,0.299212605,0.755905509,2",
		  kt_run("y"), "QuantizeAndDequantizeV2: the input's own range");
	kt_c("x", "DT_FLOAT", "3", "-2 0.5 0.25");
	kt_c("mn", "DT_FLOAT", "", "-1");
	kt_c("mx", "DT_FLOAT", "", "1");
	kt_op("y", "QuantizeAndDequantizeV2", "x,mn,mx",
	      TF KT_ATTR_BOOL("range_given", "true")
	      KT_ATTR_BOOL("narrow_range", "true"));
	is_string("float32[3] -1,0.503937006,0.251968503", kt_run("y"),
		  "a range given, narrow: clamped, 63.5 rounds to even");
	kt_c("x", "DT_FLOAT", "4", "2.5 3.5 -1 300");
	kt_c("mn", "DT_FLOAT", "", "0");
	kt_c("mx", "DT_FLOAT", "", "255");
	kt_op("y", "QuantizeAndDequantizeV4", "x,mn,mx",
	      TF KT_ATTR_BOOL("range_given", "true")
	      KT_ATTR_BOOL("signed_input", "false"));
	is_string("float32[4] 2,4,0,255", kt_run("y"),
		  "V4, unsigned: half to even by default");
	kt_c("x", "DT_FLOAT", "4", "2.5 3.5 -1 300");
	kt_c("mn", "DT_FLOAT", "", "0");
	kt_c("mx", "DT_FLOAT", "", "255");
	kt_op("y", "QuantizeAndDequantizeV2", "x,mn,mx",
	      TF KT_ATTR_BOOL("range_given", "true")
	      KT_ATTR_BOOL("signed_input", "false")
	      KT_ATTR_STR("round_mode", "HALF_UP"));
	is_string("float32[4] 3,4,0,255", kt_run("y"), "HALF_UP");
	kt_c("x", "DT_FLOAT", "3", "-1 0.5 1");
	kt_c("mn", "DT_FLOAT", "", "-1");
	kt_c("mx", "DT_FLOAT", "", "1");
	kt_c("nb", "DT_INT32", "", "4");
	kt_op("y", "QuantizeAndDequantizeV3", "x,mn,mx,nb", TF);
	is_string("float32[3] -1,0.571428597,1", kt_run("y"),
		  "V3: num_bits an input, the range given by default");
	kt_c("x", "DT_FLOAT", "2,2", "1 -4 3 2");
	kt_c("mn", "DT_FLOAT", "2", "0 0");
	kt_c("mx", "DT_FLOAT", "2", "0 0");
	kt_op("y", "QuantizeAndDequantizeV2", "x,mn,mx",
	      TF KT_ATTR_INT("axis", 1));
	is_string("float32[2,2] 0.992125988,-4,3,2", kt_run("y"),
		  "axis 1: each column its own range");
	kt_c("x", "DT_FLOAT", "1", "0");
	kt_c("mn", "DT_FLOAT", "", "1");
	kt_c("mx", "DT_FLOAT", "", "-1");
	kt_op("y", "QuantizeAndDequantizeV2", "x,mn,mx",
	      TF KT_ATTR_BOOL("range_given", "true"));
	ok(kt_err(kt_run("y"), "y (QuantizeAndDequantizeV2): the range "
		  "[1, -1] is empty"), "an empty range given is refused");
}

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_unary();
	test_binary();
	test_cast();
	test_reduce();
	test_fake_quant();
	ok(kt_budget.mem_live == 0, "every tensor was released (%llu bytes "
	   "live)", (unsigned long long)kt_budget.mem_live);
	return tap_done();
}
