/*
 * shapes: shape and dtype inference on hand-built graphs, against shapes
 * worked out by hand from TensorFlow's shape rules: convolutions and
 * pooling (SAME/VALID, strides, dilations, NCHW), MatMul, broadcasting
 * with unknown dims, Reshape with -1, StridedSlice masks, negative axes,
 * shape values followed through Shape/StridedSlice/Pack, loops, dtypes of
 * ops built without their type attr, the cache, `_output_shapes`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "formats/model.h"
#include "analyses/shapes.h"
#include "tap.h"
#include "testutil.h"

static const char *shape_of(ge_graph *g, const char *tensor)
{
	static char out[8][256];
	static int turn;
	char *o = out[turn++ & 7];
	ge_tref t;
	if (ge_graph_find_tensor(g, tensor, &t) != GE_OK)
		return "<no such tensor>";
	int64_t d[GE_SHAPE_MAXRANK];
	int r = ge_shapes_get(g, t, d, GE_SHAPE_MAXRANK);
	ge_buf b = GE_BUF_INIT;
	ge_shape_format(&b, r, d);
	snprintf(o, 256, "%s", (char *)b.data);
	ge_buf_free(&b);
	return o;
}

#define F "attr { key: 'T' value { type: DT_FLOAT } } "
#define I32 "attr { key: 'T' value { type: DT_INT32 } } "
#define PH(n, dims) \
	"node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { " \
	"type: DT_FLOAT } } attr { key: 'shape' value { shape { " dims \
	" } } } }\n"
#define D(x) "dim { size: " #x " } "
#define CI(n, vals, len) \
	"node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: " \
	"DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 " \
	"tensor_shape { dim { size: " #len " } } " vals " } } } }\n"
#define CS(n, v) \
	"node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: " \
	"DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 " \
	"tensor_shape { } int_val: " #v " } } } }\n"
#define CF(n, dims) \
	"node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: " \
	"DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { " dims " } float_val: 1 } } } }\n"
#define INTS(...) "list { i: [" #__VA_ARGS__ "] }"
#define ATTR(k, v) "attr { key: '" k "' value { " v " } } "
#define S(x) "s: '" x "'"

static void conv_and_pool(void)
{
	ge_graph *g = parse(
		PH("x", D(-1) D(224) D(224) D(3))
		CF("w", D(3) D(3) D(3) D(64))
		"node { name: 'same' op: 'Conv2D' input: 'x' input: 'w' " F
		ATTR("strides", INTS(1, 2, 2, 1)) ATTR("padding", S("SAME")) "}\n"
		"node { name: 'valid' op: 'Conv2D' input: 'x' input: 'w' " F
		ATTR("strides", INTS(1, 2, 2, 1)) ATTR("padding", S("VALID")) "}\n"
		"node { name: 'dil' op: 'Conv2D' input: 'x' input: 'w' " F
		ATTR("strides", INTS(1, 1, 1, 1)) ATTR("dilations", INTS(1, 2, 2, 1))
		ATTR("padding", S("VALID")) "}\n"
		PH("xc", D(8) D(3) D(32) D(32))
		"node { name: 'nchw' op: 'Conv2D' input: 'xc' input: 'w' " F
		ATTR("strides", INTS(1, 1, 2, 2)) ATTR("padding", S("SAME"))
		ATTR("data_format", S("NCHW")) "}\n"
		CF("dw", D(3) D(3) D(3) D(2))
		"node { name: 'depth' op: 'DepthwiseConv2dNative' input: 'x' input: 'dw' " F
		ATTR("strides", INTS(1, 1, 1, 1)) ATTR("padding", S("SAME")) "}\n"
		"node { name: 'pool' op: 'MaxPool' input: 'same' " F
		ATTR("ksize", INTS(1, 3, 3, 1)) ATTR("strides", INTS(1, 2, 2, 1))
		ATTR("padding", S("VALID")) "}\n"
		CF("b", D(64))
		"node { name: 'bias' op: 'BiasAdd' input: 'pool' input: 'b' " F "}\n"
		"node { name: 'bn' op: 'FusedBatchNormV3' input: 'bias' input: 'b' "
		"input: 'b' input: 'b' input: 'b' " F "}\n");
	is_string("[?,112,112,64]", shape_of(g, "same"), "Conv2D SAME stride 2: ceil(224/2)");
	is_string("[?,111,111,64]", shape_of(g, "valid"), "Conv2D VALID stride 2: (224-3)/2+1");
	is_string("[?,220,220,64]", shape_of(g, "dil"), "Conv2D dilation 2: effective filter 5");
	is_string("[8,64,16,16]", shape_of(g, "nchw"), "Conv2D NCHW");
	is_string("[?,224,224,6]", shape_of(g, "depth"), "depthwise: channels times multiplier");
	is_string("[?,55,55,64]", shape_of(g, "pool"), "MaxPool VALID 3x3/2");
	is_string("[?,55,55,64]", shape_of(g, "bias"), "BiasAdd keeps the shape");
	is_string("[64]", shape_of(g, "bn:1"), "FusedBatchNormV3 batch_mean is [C]");
	is_string("<unknown>", shape_of(g, "bn:5"), "reserve_space_3 unknown, as in TensorFlow");
	ge_graph_free(g);
}

static void matmul_broadcast(void)
{
	ge_graph *g = parse(
		PH("a", D(-1) D(5))
		CF("b", D(7) D(5))
		"node { name: 'mm' op: 'MatMul' input: 'a' input: 'b' " F
		ATTR("transpose_b", "b: true") "}\n"
		PH("p", D(-1) D(1) D(3))
		PH("q", D(4) D(-1))
		"node { name: 'add' op: 'AddV2' input: 'p' input: 'q' " F "}\n"
		PH("s", D(2) D(3))
		PH("t", D(4) D(3))
		"node { name: 'bad' op: 'Mul' input: 's' input: 't' " F "}\n"
		PH("u", D(-1) D(5))
		"node { name: 'mm2' op: 'MatMul' input: 'u' input: 'b' " F "}\n");
	is_string("[?,7]", shape_of(g, "mm"), "MatMul with transpose_b");
	is_string("[?,4,3]", shape_of(g, "add"), "broadcast [?,1,3] and [4,?]");
	is_string("<unknown>", shape_of(g, "bad"), "[2,3] * [4,3] does not broadcast");
	is_string("<unknown>", shape_of(g, "mm2"), "MatMul of [?,5] and [7,5] cannot hold");
	ge_error err;
	ok(ge_shapes_infer(g, NULL, &err) == GE_EGRAPH &&
		   strstr(err.msg, "'bad' (Mul)"),
	   "an impossible shape is an error naming the op: %s", err.msg);
	ge_buf rep = GE_BUF_INIT;
	is_int(2, (long long)ge_shapes_validate(g, &rep), "validate lists both");
	ok(strstr((char *)rep.data, "'mm2' (MatMul): inner dimensions differ") != NULL,
	   "with the reason");
	ge_buf_free(&rep);
	ge_graph_free(g);
}

static void reshape_and_values(void)
{
	ge_graph *g = parse(
		PH("x", D(-1) D(4) D(6))
		CI("t", "int_val: [-1, 3, 8]", 3)
		"node { name: 'r' op: 'Reshape' input: 'x' input: 't' " F "}\n"
		PH("y", D(2) D(4) D(6))
		"node { name: 'r2' op: 'Reshape' input: 'y' input: 't' " F "}\n"
		CI("t5", "int_val: [5, -1]", 2)
		"node { name: 'bad' op: 'Reshape' input: 'y' input: 't5' " F "}\n"
		/* shape = [tf.shape(x)[0], 24] */
		"node { name: 'sh' op: 'Shape' input: 'x' " F "}\n"
		CI("b0", "int_val: 0", 1) CI("b1", "int_val: 1", 1)
		"node { name: 'n' op: 'StridedSlice' input: 'sh' input: 'b0' input: 'b1' input: 'b1' "
		ATTR("Index", "type: DT_INT32") ATTR("shrink_axis_mask", "i: 1") I32 "}\n"
		CS("k", 24)
		"node { name: 'pk' op: 'Pack' input: 'n' input: 'k' " I32
		ATTR("N", "i: 2") "}\n"
		"node { name: 'flat' op: 'Reshape' input: 'x' input: 'pk' " F "}\n"
		"node { name: 'flat2' op: 'Reshape' input: 'y' input: 'pk' " F "}\n");
	is_string("[?,3,8]", shape_of(g, "r"), "Reshape: -1 stays unknown with an unknown batch");
	is_string("[2,3,8]", shape_of(g, "r2"), "Reshape: -1 resolved (48 / 24)");
	is_string("<unknown>", shape_of(g, "bad"), "Reshape of 48 into [5,-1] cannot hold");
	is_string("[]", shape_of(g, "n"), "StridedSlice with shrink_axis gives a scalar");
	is_string("[?,24]", shape_of(g, "flat"), "Shape/StridedSlice/Pack followed into Reshape");
	int64_t v[4];
	ge_tref t;
	ge_graph_find_tensor(g, "sh", &t);
	is_int(3, ge_shapes_value(g, t, v, 4), "the Shape's value is followed");
	ok(v[0] == INT64_MIN && v[1] == 4 && v[2] == 6, "with its unknown element");
	ge_error err;
	ok(ge_shapes_infer(g, NULL, &err) == GE_EGRAPH &&
		   strstr(err.msg, "op 'bad' (Reshape): cannot reshape [2,4,6] (48 "
				   "elements) into [5,?]"),
	   "the Reshape that cannot hold is named: %s", err.msg);
	ge_graph_free(g);
}

static void slicing(void)
{
	ge_graph *g = parse(
		PH("x", D(10) D(20) D(30))
		CI("b", "int_val: [1, 0]", 2) CI("e", "int_val: [-1, 0]", 2)
		CI("s", "int_val: [2, 1]", 2)
		/* x[1:-1:2, :] */
		"node { name: 'ss' op: 'StridedSlice' input: 'x' input: 'b' input: 'e' input: 's' "
		ATTR("Index", "type: DT_INT32") ATTR("end_mask", "i: 2") F "}\n"
		/* x[..., tf.newaxis, 0:1] with ellipsis bit 0, new axis bit 1 */
		CI("b3", "int_val: [0, 0, 0]", 3) CI("e3", "int_val: [0, 0, 1]", 3)
		CI("s3", "int_val: [1, 1, 1]", 3)
		"node { name: 'ell' op: 'StridedSlice' input: 'x' input: 'b3' input: 'e3' input: 's3' "
		ATTR("Index", "type: DT_INT32") ATTR("ellipsis_mask", "i: 1")
		ATTR("new_axis_mask", "i: 2") F "}\n"
		/* x[::-1] */
		CI("b1", "int_val: 0", 1) CI("s1", "int_val: -1", 1)
		"node { name: 'rev' op: 'StridedSlice' input: 'x' input: 'b1' input: 'b1' input: 's1' "
		ATTR("Index", "type: DT_INT32") ATTR("begin_mask", "i: 1")
		ATTR("end_mask", "i: 1") F "}\n"
		CI("sb", "int_val: [0, 5, 0]", 3) CI("sz", "int_val: [-1, 10, 3]", 3)
		"node { name: 'sl' op: 'Slice' input: 'x' input: 'sb' input: 'sz' "
		ATTR("Index", "type: DT_INT32") F "}\n"
		CS("ax", -1)
		"node { name: 'cat' op: 'ConcatV2' input: 'x' input: 'x' input: 'ax' "
		ATTR("N", "i: 2") ATTR("Tidx", "type: DT_INT32") F "}\n"
		"node { name: 'pk' op: 'Pack' input: 'x' input: 'x' "
		ATTR("N", "i: 2") ATTR("axis", "i: -1") F "}\n"
		"node { name: 'sum' op: 'Sum' input: 'x' input: 'ax' "
		ATTR("keep_dims", "b: true") F "}\n"
		CI("ax2", "int_val: [0, -1]", 2)
		"node { name: 'mean' op: 'Mean' input: 'x' input: 'ax2' " F "}\n"
		"node { name: 'am' op: 'ArgMax' input: 'x' input: 'ax' " F "}\n"
		CS("one", 1)
		"node { name: 'spl' op: 'Split' input: 'one' input: 'x' "
		ATTR("num_split", "i: 4") F "}\n"
		PH("sq", D(1) D(5) D(1))
		"node { name: 'sq1' op: 'Squeeze' input: 'sq' " F "}\n"
		"node { name: 'sq2' op: 'Squeeze' input: 'sq' "
		ATTR("squeeze_dims", INTS(-1)) F "}\n"
		"node { name: 'ed' op: 'ExpandDims' input: 'sq' input: 'ax' " F "}\n"
		CI("perm", "int_val: [2, 0, 1]", 3)
		"node { name: 'tr' op: 'Transpose' input: 'x' input: 'perm' " F "}\n"
		CI("ix", "int_val: [1, 2, 3, 4, 5]", 5)
		"node { name: 'ga' op: 'GatherV2' input: 'x' input: 'ix' input: 'one' " F "}\n"
		"node { name: 'pad' op: 'Const' attr { key: 'dtype' value { type: "
		"DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 "
		"tensor_shape { dim { size: 3 } dim { size: 2 } } "
		"int_val: [1, 1, 0, 0, 2, 3] } } } }\n"
		"node { name: 'pd' op: 'Pad' input: 'x' input: 'pad' " F "}\n");
	is_string("[4,20,30]", shape_of(g, "ss"), "x[1:-1:2, :]: rows 1,3,5,7");
	is_string("[10,20,1,1]", shape_of(g, "ell"), "x[..., newaxis, 0:1]");
	is_string("[10,20,30]", shape_of(g, "rev"), "x[::-1]");
	is_string("[10,10,3]", shape_of(g, "sl"), "Slice with size -1");
	is_string("[10,20,60]", shape_of(g, "cat"), "ConcatV2 on axis -1");
	is_string("[10,20,30,2]", shape_of(g, "pk"), "Pack on axis -1");
	is_string("[10,20,1]", shape_of(g, "sum"), "Sum keep_dims on axis -1");
	is_string("[20]", shape_of(g, "mean"), "Mean over axes 0 and -1");
	is_string("[10,20]", shape_of(g, "am"), "ArgMax drops the axis");
	is_string("[10,5,30]", shape_of(g, "spl:3"), "Split into 4 along 1");
	is_string("[5]", shape_of(g, "sq1"), "Squeeze all ones");
	is_string("[1,5]", shape_of(g, "sq2"), "Squeeze axis -1");
	is_string("[1,5,1,1]", shape_of(g, "ed"), "ExpandDims at -1");
	is_string("[30,10,20]", shape_of(g, "tr"), "Transpose");
	is_string("[10,5,30]", shape_of(g, "ga"), "GatherV2 on axis 1");
	is_string("[12,20,35]", shape_of(g, "pd"), "Pad");
	ge_graph_free(g);
}

static void loops_dtypes_cache(void)
{
	ge_graph *g = parse(
		PH("x", D(4) D(3))
		"node { name: 'enter' op: 'Enter' input: 'x' " F
		ATTR("frame_name", S("loop")) "}\n"
		"node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " F
		ATTR("N", "i: 2") "}\n"
		"node { name: 'body' op: 'ConcatV2' input: 'merge' input: 'merge' input: 'zero' "
		ATTR("N", "i: 2") ATTR("Tidx", "type: DT_INT32") F "}\n"
		CS("zero", 0)
		"node { name: 'next' op: 'NextIteration' input: 'body' " F "}\n"
		"node { name: 'same' op: 'Relu' input: 'merge' " F "}\n"
		"node { name: 'enter2' op: 'Enter' input: 'x' " F
		ATTR("frame_name", S("loop2")) "}\n"
		"node { name: 'merge2' op: 'Merge' input: 'enter2' input: 'next2' " F
		ATTR("N", "i: 2") "}\n"
		"node { name: 'body2' op: 'Tanh' input: 'merge2' " F "}\n"
		"node { name: 'next2' op: 'NextIteration' input: 'body2' " F "}\n"
		"node { name: 'bare' op: 'Relu6' input: 'x' }\n");
	is_string("[?,3]", shape_of(g, "merge"), "a loop that grows dim 0: unknown there");
	is_string("[4,3]", shape_of(g, "merge2"), "a loop that keeps the shape: known");
	ge_tref t;
	ge_graph_find_tensor(g, "bare", &t);
	is_string("float32", ge_dtype_name(ge_shapes_dtype(g, t)),
		  "an op built without T gets its input's dtype");
	is_string("[4,3]", shape_of(g, "bare"), "and its shape");
	/* the cache follows edits */
	ge_opid x = ge_graph_find(g, "x");
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__TensorShapeProto sp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim d0 = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
	Tensorflow__TensorShapeProto__Dim *dp[1] = {&d0};
	d0.size = 7;
	sp.n_dim = 1;
	sp.dim = dp;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
	v.shape = &sp;
	ge_op_set_attr(g, x, "shape", &v);
	is_string("[7]", shape_of(g, "bare"), "an edit is seen by the next query");
	ge_shape_input in = {"x", 2, (const int64_t[]){9, 9}};
	ok(ge_shapes_set_inputs(g, &in, 1, NULL) == GE_OK, "an input override");
	is_string("[9,9]", shape_of(g, "bare"), "propagates");
	ok(ge_shapes_set_inputs(g, NULL, 0, NULL) == GE_OK &&
		   !strcmp(shape_of(g, "bare"), "[7]"),
	   "and is dropped on request");
	ge_graph_free(g);
}

static void recorded(void)
{
	ge_graph *g = parse(
		PH("x", D(4) D(3))
		"node { name: 'r' op: 'Relu' input: 'x' " F
		FX_SHAPE("dim { size: 5 } dim { size: 3 }") "}\n"
		"node { name: 'u' op: 'SomeCustomOp' input: 'x' "
		FX_SHAPE("dim { size: 2 }") "}\n"
		"node { name: 'v' op: 'Relu' input: 'u' " F "}\n");
	is_string("[4,3]", shape_of(g, "r"), "a contradicting _output_shapes loses");
	is_string("[2]", shape_of(g, "v"), "a custom op's _output_shapes is used");
	ge_buf rep = GE_BUF_INIT;
	is_int(1, (long long)ge_shapes_validate(g, &rep), "validate reports the contradiction");
	ok(strstr((char *)rep.data, "op 'r' (Relu): _output_shapes[0] [5,3] "
				    "contradicts the inferred shape [4,3]") != NULL,
	   "naming the op: %s", (char *)rep.data);
	ge_buf_free(&rep);
	ge_shape_stats st;
	ge_shapes_infer(g, &st, NULL);
	is_int(4, (long long)st.outputs, "stats: outputs");
	is_int(1, (long long)st.contradictions, "stats: contradictions");
	/* add_shapes=True */
	is_int(4, (long long)ge_shapes_write_attrs(g), "_output_shapes written on every op");
	ge_op_remove_attr(g, ge_graph_find(g, "u"), "_output_shapes");
	ge_shapes_infer(g, &st, NULL);
	is_string("<unknown>", shape_of(g, "u"), "a custom op without a record is unknown");
	ok(strstr(st.nofn_types, "SomeCustomOp:1") != NULL,
	   "and counted as without a shape function: %s", st.nofn_types);
	const Tensorflow__AttrValue *a =
		ge_op_attr(g, ge_graph_find(g, "r"), "_output_shapes", NULL);
	ok(a && a->list->n_shape == 1 && a->list->shape[0]->n_dim == 2 &&
		   a->list->shape[0]->dim[0]->size == 4,
	   "the written record is the inferred shape");
	ge_graph_free(g);
}

static void parse_format(void)
{
	int64_t d[8];
	is_int(4, ge_shape_parse("1x224x224x3", d, 8), "parse 1x224x224x3");
	ok(d[0] == 1 && d[3] == 3, "dims");
	is_int(2, ge_shape_parse("?x10", d, 8), "parse ?x10");
	ok(d[0] == -1, "? is unknown");
	is_int(-1, ge_shape_parse("*", d, 8), "* is an unknown rank");
	is_int(0, ge_shape_parse("", d, 8), "empty is a scalar");
	is_int(-2, ge_shape_parse("1xz", d, 8), "garbage is refused");
}

int main(void)
{
	tap_plan(65);
	conv_and_pool();
	matmul_broadcast();
	reshape_and_values();
	slicing();
	loops_dtypes_cache();
	recorded();
	parse_format();
	return tap_done();
}
