/*
 * kernels-array: the runner's shape, layout and index kernels against
 * values worked out by hand: reshapes with -1, transposes, concatenation
 * and splits, StridedSlice with every mask, padding modes, gathers, and
 * refusals of bad shapes and indices naming the op.
 */
#include <stdio.h>
#include <string.h>

#include "ktest.h"

#define X23 kt_c("x", "DT_FLOAT", "2,3", "1 2 3 4 5 6")

static void test_shape(void)
{
	ge_graph *g;
	X23;
	kt_op("y", "Shape", "x", "");
	is_string("int32[2] 2,3", kt_run("y"), "Shape");
	X23;
	kt_op("y", "Size", "x", KT_ATTR_TYPE("out_type", "DT_INT64"));
	is_string("int64[] 6", kt_run("y"), "Size as int64");
	X23;
	kt_op("y", "Rank", "x", "");
	is_string("int32[] 2", kt_run("y"), "Rank");
	X23;
	kt_c("s", "DT_INT32", "2", "-1 2");
	kt_op("y", "Reshape", "x,s", "");
	is_string("float32[3,2] 1,2,3,4,5,6", kt_run("y"), "Reshape with -1");
	X23;
	kt_c("s", "DT_INT32", "2", "4 -1");
	kt_op("y", "Reshape", "x,s", "");
	ok(kt_err(kt_run("y"), "y (Reshape): cannot reshape float32[2,3]"),
	   "a reshape that does not divide is refused");
	X23;
	kt_c("a", "DT_INT32", "", "-1");
	kt_op("y", "ExpandDims", "x,a", "");
	is_string("float32[2,3,1] 1,2,3,4,5,6", kt_run("y"), "ExpandDims -1");
	kt_c("x", "DT_FLOAT", "1,2,1", "1 2");
	kt_op("y", "Squeeze", "x", "");
	is_string("float32[2] 1,2", kt_run("y"), "Squeeze all ones");
	kt_c("x", "DT_FLOAT", "1,2,1", "1 2");
	kt_op("y", "Squeeze", "x", "attr { key: \"squeeze_dims\" value { "
	      "list { i: 2 } } }");
	is_string("float32[1,2] 1,2", kt_run("y"), "Squeeze one axis");
	kt_c("x", "DT_FLOAT", "1,2,1", "1 2");
	kt_op("y", "Squeeze", "x", "attr { key: \"squeeze_dims\" value { "
	      "list { i: 1 } } }");
	ok(kt_err(kt_run("y"), "y (Squeeze): cannot squeeze dimension 1"),
	   "squeezing a dimension of 2 is refused");
	X23;
	kt_c("p", "DT_INT32", "2", "1 0");
	kt_op("y", "Transpose", "x,p", "");
	is_string("float32[3,2] 1,4,2,5,3,6", kt_run("y"), "Transpose");
	kt_c("x", "DT_INT32", "2,2,2", "0 1 2 3 4 5 6 7");
	kt_c("p", "DT_INT32", "3", "2 0 1");
	kt_op("y", "Transpose", "x,p", "");
	is_string("int32[2,2,2] 0,2,4,6,1,3,5,7", kt_run("y"),
		  "rank-3 Transpose");
	X23;
	kt_c("p", "DT_INT32", "2", "0 0");
	kt_op("y", "Transpose", "x,p", "");
	ok(kt_err(kt_run("y"), "y (Transpose): perm is not a permutation"),
	   "a bad perm is refused");
	/* a transpose big enough for several 32x32 tiles, and back */
	kt_c("r0", "DT_INT32", "", "0");
	kt_c("r1", "DT_INT32", "", "4200");
	kt_c("r2", "DT_INT32", "", "1");
	kt_op("r", "Range", "r0,r1,r2", "");
	kt_c("sh", "DT_INT32", "3", "3 40 35");
	kt_op("x", "Reshape", "r,sh", "");
	kt_c("p", "DT_INT32", "3", "2 0 1");
	kt_op("t", "Transpose", "x,p", "");
	kt_c("q", "DT_INT32", "3", "1 2 0");
	kt_op("back", "Transpose", "t,q", "");
	kt_op("eq", "Equal", "x,back", "");
	kt_c("ax", "DT_INT32", "3", "0 1 2");
	kt_op("all", "All", "eq,ax", "");
	kt_c("ix", "DT_INT32", "1,3", "34 2 39");
	kt_op("y", "GatherNd", "t,ix", "");
	g = parse(kt_text);
	kt_len = 0;
	is_string("bool[] 1", kt_eval(g, "all"), "a tiled Transpose and back "
		  "give the input");
	is_string("int32[1] 4199", kt_eval(g, "y"),
		  "t[34,2,39] is x[2,39,34]");
	ge_graph_free(g);
	kt_c("x", "DT_FLOAT", "3", "1 2 3");
	kt_c("s", "DT_INT32", "2", "2 3");
	kt_op("y", "BroadcastTo", "x,s", "");
	is_string("float32[2,3] 1,2,3,1,2,3", kt_run("y"), "BroadcastTo");
	kt_c("a", "DT_INT32", "2", "2 1");
	kt_c("b", "DT_INT32", "3", "4 1 5");
	kt_op("y", "BroadcastArgs", "a,b", "");
	is_string("int32[3] 4,2,5", kt_run("y"), "BroadcastArgs");
	kt_c("d", "DT_INT32", "2", "2 2");
	kt_c("v", "DT_FLOAT", "", "7");
	kt_op("y", "Fill", "d,v", "");
	is_string("float32[2,2] 7,7,7,7", kt_run("y"), "Fill");
	kt_c("d", "DT_INT64", "2", "4611686018427387904 4");
	kt_c("v", "DT_FLOAT", "", "7");
	kt_op("y", "Fill", "d,v", "");
	ok(kt_err(kt_run("y"), "y (Fill): the shape's size overflows"),
	   "a Fill whose size overflows is refused");
	kt_c("a", "DT_INT32", "", "3");
	kt_c("b", "DT_INT32", "", "-4");
	kt_c("c", "DT_INT32", "", "-3");
	kt_op("y", "Range", "a,b,c", "");
	is_string("int32[3] 3,0,-3", kt_run("y"), "Range down");
	kt_c("a", "DT_FLOAT", "", "0");
	kt_c("b", "DT_FLOAT", "", "1");
	kt_c("c", "DT_FLOAT", "", "0.25");
	kt_op("y", "Range", "a,b,c", "");
	is_string("float32[4] 0,0.25,0.5,0.75", kt_run("y"), "float Range");
	X23;
	kt_op("y", "OnesLike", "x", "");
	is_string("float32[2,3] 1,1,1,1,1,1", kt_run("y"), "OnesLike");
}

static void test_layout(void)
{
	X23;
	kt_c("b", "DT_FLOAT", "2,1", "7 8");
	kt_c("a", "DT_INT32", "", "-1");
	kt_op("y", "ConcatV2", "x,b,a", "");
	is_string("float32[2,4] 1,2,3,7,4,5,6,8", kt_run("y"), "ConcatV2");
	X23;
	kt_c("b", "DT_FLOAT", "2,2", "7 8 9 10");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "ConcatV2", "x,b,a", "");
	ok(kt_err(kt_run("y"), "y (ConcatV2): input 1 is float32[2,2]"),
	   "ConcatV2 refuses mismatched shapes");
	kt_c("a", "DT_FLOAT", "2", "1 2");
	kt_c("b", "DT_FLOAT", "2", "3 4");
	kt_op("y", "Pack", "a,b", KT_ATTR_INT("axis", 1));
	is_string("float32[2,2] 1,3,2,4", kt_run("y"), "Pack on axis 1");
	X23;
	kt_op("y", "Unpack", "x", KT_ATTR_INT("axis", 1) KT_ATTR_INT("num", 3));
	ge_graph *g;
	kt_op("z", "Identity", "y:2", "");
	g = parse(kt_text);
	is_string("float32[2] 2,5", kt_eval(g, "y:1"), "Unpack on axis 1");
	ge_graph_free(g);
	kt_len = 0;
	kt_c("a", "DT_INT32", "", "1");
	X23;
	kt_op("y", "Split", "a,x", KT_ATTR_INT("num_split", 3));
	kt_op("z", "Identity", "y:2", "");
	g = parse(kt_text);
	is_string("float32[2,1] 3,6", kt_eval(g, "y:2"), "Split");
	ge_graph_free(g);
	kt_len = 0;
	X23;
	kt_c("s", "DT_INT32", "2", "-1 1");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "SplitV", "x,s,a", KT_ATTR_INT("num_split", 2));
	kt_op("z", "Identity", "y:1", "");
	g = parse(kt_text);
	is_string("float32[2,2] 1,2,4,5", kt_eval(g, "y:0"), "SplitV with -1");
	is_string("float32[2,1] 3,6", kt_eval(g, "y:1"), "and its last piece");
	ge_graph_free(g);
	kt_len = 0;
	X23;
	kt_c("b", "DT_INT32", "2", "0 1");
	kt_c("s", "DT_INT32", "2", "-1 2");
	kt_op("y", "Slice", "x,b,s", "");
	is_string("float32[2,2] 2,3,5,6", kt_run("y"), "Slice with -1 size");
	X23;
	kt_c("b", "DT_INT32", "2", "1 2");
	kt_c("s", "DT_INT32", "2", "1 2");
	kt_op("y", "Slice", "x,b,s", "");
	ok(kt_err(kt_run("y"), "y (Slice): begin 2 and size 2 are outside"),
	   "a Slice past the end is refused");
	kt_c("x", "DT_INT32", "2,3", "1 2 3 4 5 6");
	kt_c("b", "DT_INT32", "2", "0 -1");
	kt_c("e", "DT_INT32", "2", "0 0");
	kt_c("s", "DT_INT32", "2", "1 -1");
	kt_op("y", "StridedSlice", "x,b,e,s", KT_ATTR_INT("begin_mask", 1)
	      KT_ATTR_INT("end_mask", 3));
	is_string("int32[2,3] 3,2,1,6,5,4", kt_run("y"),
		  "StridedSlice reversing with masks");
	kt_c("x", "DT_INT32", "2,3", "1 2 3 4 5 6");
	kt_c("b", "DT_INT32", "2", "1 0");
	kt_c("e", "DT_INT32", "2", "2 0");
	kt_c("s", "DT_INT32", "2", "1 1");
	kt_op("y", "StridedSlice", "x,b,e,s", KT_ATTR_INT("shrink_axis_mask", 1)
	      KT_ATTR_INT("end_mask", 2));
	is_string("int32[3] 4,5,6", kt_run("y"), "StridedSlice shrinking");
	kt_c("x", "DT_INT32", "2,3", "1 2 3 4 5 6");
	kt_c("b", "DT_INT32", "3", "0 0 1");
	kt_c("e", "DT_INT32", "3", "0 0 3");
	kt_c("s", "DT_INT32", "3", "1 1 2");
	kt_op("y", "StridedSlice", "x,b,e,s",
	      KT_ATTR_INT("ellipsis_mask", 1) KT_ATTR_INT("new_axis_mask", 2));
	is_string("int32[2,1,1] 2,5", kt_run("y"),
		  "StridedSlice with an ellipsis and a new axis");
	kt_c("x", "DT_INT32", "2", "1 2");
	kt_c("b", "DT_INT32", "1", "0");
	kt_c("e", "DT_INT32", "1", "0");
	kt_c("s", "DT_INT32", "1", "1");
	kt_op("y", "StridedSlice", "x,b,e,s", KT_ATTR_INT("new_axis_mask", 1)
	      KT_ATTR_INT("ellipsis_mask", 2));
	is_string("int32[1,2] 1,2", kt_run("y"), "StridedSlice: an ellipsis bit "
		  "past the entries does not count, one is implied at the end");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("b", "DT_INT32", "1", "5");
	kt_c("e", "DT_INT32", "1", "6");
	kt_c("s", "DT_INT32", "1", "1");
	kt_op("y", "StridedSlice", "x,b,e,s", KT_ATTR_INT("shrink_axis_mask", 1));
	ok(kt_err(kt_run("y"), "y (StridedSlice): index 5 is out of bounds"),
	   "a shrink index out of bounds is refused");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("b", "DT_INT64", "1", "-9223372036854775808");
	kt_c("e", "DT_INT64", "1", "9223372036854775807");
	kt_c("s", "DT_INT64", "1", "9223372036854775807");
	kt_op("y", "StridedSlice", "x,b,e,s", "");
	is_string("int32[1] 1", kt_run("y"), "extreme begin, end and stride "
		  "are clamped");
	X23;
	kt_c("a", "DT_INT32", "1", "1");
	kt_op("y", "ReverseV2", "x,a", "");
	is_string("float32[2,3] 3,2,1,6,5,4", kt_run("y"), "ReverseV2");
	kt_c("x", "DT_INT32", "2", "1 2");
	kt_c("m", "DT_INT32", "1", "3");
	kt_op("y", "Tile", "x,m", "");
	is_string("int32[6] 1,2,1,2,1,2", kt_run("y"), "Tile");
	kt_c("x", "DT_INT32", "2", "1 2");
	kt_c("m", "DT_INT64", "1", "9223372036854775807");
	kt_op("y", "Tile", "x,m", "");
	ok(kt_err(kt_run("y"), "y (Tile): multiple"),
	   "a Tile whose size overflows is refused");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("p", "DT_INT32", "1,2", "1 2");
	kt_op("y", "Pad", "x,p", "");
	is_string("int32[6] 0,1,2,3,0,0", kt_run("y"), "Pad");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("p", "DT_INT32", "1,2", "1 1");
	kt_c("c", "DT_INT32", "", "9");
	kt_op("y", "PadV2", "x,p,c", "");
	is_string("int32[5] 9,1,2,3,9", kt_run("y"), "PadV2");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("p", "DT_INT32", "1,2", "2 2");
	kt_op("y", "MirrorPad", "x,p", KT_ATTR_STR("mode", "REFLECT"));
	is_string("int32[7] 3,2,1,2,3,2,1", kt_run("y"), "MirrorPad REFLECT");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("p", "DT_INT32", "1,2", "2 2");
	kt_op("y", "MirrorPad", "x,p", KT_ATTR_STR("mode", "SYMMETRIC"));
	is_string("int32[7] 2,1,1,2,3,3,2", kt_run("y"),
		  "MirrorPad SYMMETRIC");
	kt_c("x", "DT_INT32", "3", "1 2 3");
	kt_c("p", "DT_INT32", "1,2", "3 0");
	kt_op("y", "MirrorPad", "x,p", KT_ATTR_STR("mode", "REFLECT"));
	ok(kt_err(kt_run("y"), "y (MirrorPad): paddings 3, 0 do not fit"),
	   "a REFLECT pad as wide as the input is refused");
	kt_c("x", "DT_STRING", "2", "ab c");
	kt_c("p", "DT_INT32", "1,2", "0 1");
	kt_op("y", "Pad", "x,p", "");
	is_string("string[3] ab,c,", kt_run("y"), "Pad of strings");
}

static void test_index(void)
{
	X23;
	kt_c("i", "DT_INT32", "2", "2 0");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "GatherV2", "x,i,a", "");
	is_string("float32[2,2] 3,1,6,4", kt_run("y"), "GatherV2 on axis 1");
	X23;
	kt_c("i", "DT_INT32", "2,1", "1 0");
	kt_c("a", "DT_INT32", "", "1");
	kt_op("y", "GatherV2", "x,i,a", KT_ATTR_INT("batch_dims", 1));
	is_string("float32[2,1] 2,4", kt_run("y"), "GatherV2 with batch_dims");
	X23;
	kt_c("i", "DT_INT32", "1", "2");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "GatherV2", "x,i,a", "");
	ok(kt_err(kt_run("y"), "y (GatherV2): indices[0] = 2 is not in [0, 2)"),
	   "an index out of range is refused");
	X23;
	kt_c("i", "DT_INT32", "2,2", "1 2 0 0");
	kt_op("y", "GatherNd", "x,i", "");
	is_string("float32[2] 6,1", kt_run("y"), "GatherNd");
	X23;
	kt_c("i", "DT_INT32", "1,1", "1");
	kt_op("y", "GatherNd", "x,i", "");
	is_string("float32[1,3] 4,5,6", kt_run("y"), "GatherNd of rows");
	kt_c("i", "DT_INT32", "3", "0 2 5");
	kt_c("d", "DT_INT32", "", "3");
	kt_c("on", "DT_FLOAT", "", "1");
	kt_c("off", "DT_FLOAT", "", "0");
	kt_op("y", "OneHot", "i,d,on,off", "");
	is_string("float32[3,3] 1,0,0,0,0,1,0,0,0", kt_run("y"),
		  "OneHot, an index out of range all off");
	kt_c("i", "DT_INT32", "2", "0 1");
	kt_c("d", "DT_INT32", "", "2");
	kt_c("on", "DT_INT32", "", "5");
	kt_c("off", "DT_INT32", "", "-1");
	kt_op("y", "OneHot", "i,d,on,off", KT_ATTR_INT("axis", 0));
	is_string("int32[2,2] 5,-1,-1,5", kt_run("y"), "OneHot on axis 0");
	kt_c("x", "DT_BOOL", "2,2", "true false false true");
	kt_op("y", "Where", "x", "");
	is_string("int64[2,2] 0,0,1,1", kt_run("y"), "Where");
}

static void test_misc(void)
{
	kt_c("x", "DT_INT32", "3", "2 0 1");
	kt_op("y", "InvertPermutation", "x", "");
	is_string("int32[3] 1,2,0", kt_run("y"), "InvertPermutation");
	kt_c("i0", "DT_INT32", "2", "0 2");
	kt_c("i1", "DT_INT32", "2", "1 2");
	kt_c("d0", "DT_FLOAT", "2", "10 20");
	kt_c("d1", "DT_FLOAT", "2", "30 40");
	kt_op("y", "DynamicStitch", "i0,i1,d0,d1", KT_ATTR_INT("N", 2));
	is_string("float32[3] 10,30,40", kt_run("y"),
		  "DynamicStitch, the later input winning");
	kt_c("d", "DT_FLOAT", "4,2", "1 2 3 4 5 6 7 8");
	kt_c("s", "DT_INT32", "4", "1 -1 1 0");
	kt_c("n", "DT_INT32", "", "3");
	kt_op("y", "UnsortedSegmentSum", "d,s,n", "");
	is_string("float32[3,2] 7,8,6,8,0,0", kt_run("y"),
		  "UnsortedSegmentSum drops negative ids");
	kt_c("d", "DT_FLOAT", "2", "1 2");
	kt_c("s", "DT_INT32", "2", "0 3");
	kt_c("n", "DT_INT32", "", "3");
	kt_op("y", "UnsortedSegmentSum", "d,s,n", "");
	ok(kt_err(kt_run("y"), "y (UnsortedSegmentSum): segment id 3"),
	   "a segment id past num_segments is refused");
	kt_c("x", "DT_INT32", "6", "4 1 4 2 1 7");
	kt_op("y", "Unique", "x", "");
	kt_op("z", "Identity", "y:1", "");
	ge_graph *g = parse(kt_text);
	is_string("int32[4] 4,1,2,7", kt_eval(g, "y:0"),
		  "Unique in order of first appearance");
	is_string("int32[6] 0,1,0,2,1,3", kt_eval(g, "y:1"), "and its idx");
	ge_graph_free(g);
	kt_len = 0;
	kt_c("x", "DT_INT32", "2,3", "1 2 3 4 5 6");
	kt_c("l", "DT_INT32", "2", "2 3");
	kt_op("y", "ReverseSequence", "x,l", KT_ATTR_INT("seq_dim", 1)
	      KT_ATTR_INT("batch_dim", 0));
	is_string("int32[2,3] 2,1,3,6,5,4", kt_run("y"), "ReverseSequence");
	kt_c("i", "DT_INT32", "3,1", "1 3 1");
	kt_c("u", "DT_FLOAT", "3", "1 2 3");
	kt_c("s", "DT_INT32", "1", "4");
	kt_op("y", "ScatterNd", "i,u,s", "");
	is_string("float32[4] 0,4,0,2", kt_run("y"),
		  "ScatterNd adds duplicates");
	kt_c("i", "DT_INT32", "1,1", "4");
	kt_c("u", "DT_FLOAT", "1", "1");
	kt_c("s", "DT_INT32", "1", "4");
	kt_op("y", "ScatterNd", "i,u,s", "");
	ok(kt_err(kt_run("y"), "y (ScatterNd): index 4 is out of bounds"),
	   "a ScatterNd index out of bounds is refused");
	kt_c("a", "DT_INT32", "", "1");
	kt_c("s0", "DT_INT32", "2", "2 3");
	kt_c("s1", "DT_INT32", "2", "2 5");
	kt_op("y", "ConcatOffset", "a,s0,s1", "");
	kt_op("z", "Identity", "y:1", "");
	g = parse(kt_text);
	is_string("int32[2] 0,3", kt_eval(g, "y:1"), "ConcatOffset");
	ge_graph_free(g);
	kt_len = 0;
	kt_c("x", "DT_FLOAT", "1", "1");
	kt_op("y", "Bitcast", "x", KT_ATTR_TYPE("type", "DT_UINT16"));
	is_string("uint16[1,2] 0,16256", kt_run("y"),
		  "Bitcast to a narrower type adds a dimension");
	kt_c("x", "DT_INT32", "1", "1");
	kt_op("y", "Bitcast", "x", KT_ATTR_TYPE("type", "DT_INT64"));
	ok(kt_err(kt_run("y"), "y (Bitcast): the last dimension must be 2"),
	   "Bitcast to a wider type needs the last dimension");
	kt_c("x", "DT_FLOAT", "2", "3 4");
	kt_op("y", "L2Loss", "x", "");
	is_string("float32[] 12.5", kt_run("y"), "L2Loss");
	kt_c("a", "DT_STRING", "2", "x y");
	kt_c("b", "DT_STRING", "", "z");
	kt_op("y", "StringJoin", "a,b", KT_ATTR_STR("separator", "-"));
	is_string("string[2] x-z,y-z", kt_run("y"), "StringJoin");
	kt_c("a", "DT_STRING", "2,2", "a b c d");
	kt_c("r", "DT_INT32", "1", "0");
	kt_op("y", "ReduceJoin", "a,r", KT_ATTR_STR("separator", "+"));
	is_string("string[2] a+c,b+d", kt_run("y"), "ReduceJoin");
	kt_c("s", "DT_STRING", "2", "a,,b c");
	kt_c("d", "DT_STRING", "", ",");
	kt_op("y", "StringSplit", "s,d", "");
	kt_op("z", "Identity", "y:2", "");
	g = parse(kt_text);
	is_string("int64[3,2] 0,0,0,1,1,0", kt_eval(g, "y:0"),
		  "StringSplit indices, empty tokens skipped");
	is_string("string[3] a,b,c", kt_eval(g, "y:1"), "its values");
	is_string("int64[2] 2,2", kt_eval(g, "y:2"), "its dense shape");
	ge_graph_free(g);
	kt_len = 0;
	kt_c("s", "DT_STRING", "1", "a,,b");
	kt_c("d", "DT_STRING", "", ",");
	kt_op("y", "StringSplit", "s,d", KT_ATTR_BOOL("skip_empty", "false"));
	kt_op("z", "Identity", "y:2", "");
	g = parse(kt_text);
	is_string("string[3] a,,b", kt_eval(g, "y:1"),
		  "StringSplit keeping empty tokens");
	ge_graph_free(g);
	kt_len = 0;
	kt_c("c", "DT_BOOL", "", "false");
	kt_c("m", "DT_STRING", "", "bad");
	kt_op("y", "Assert", "c,m", "");
	kt_op("z", "Identity", "c", "");
	g = parse(kt_text);
	ge_tref t;
	ge_graph_find_tensor(g, "y", &t);
	ge_error err = {0, ""};
	ge_xt *out[1] = {NULL};
	ok(kt_run_op(g, t.op, out, 0, &err) != GE_OK &&
	   !strcmp(err.msg, "y (Assert): assertion failed: bad"),
	   "Assert fails with its data (%s)", err.msg);
	ge_graph_free(g);
	kt_len = 0;
	X23;
	kt_op("y", "EnsureShape", "x", "attr { key: \"shape\" value { shape { "
	      "dim { size: -1 } dim { size: 3 } } } }");
	is_string("float32[2,3] 1,2,3,4,5,6", kt_run("y"),
		  "EnsureShape with an unknown dimension");
	X23;
	kt_op("y", "EnsureShape", "x", "attr { key: \"shape\" value { shape { "
	      "dim { size: 3 } dim { size: 2 } } } }");
	ok(kt_err(kt_run("y"), "y (EnsureShape): input float32[2,3] does not"),
	   "EnsureShape refuses another shape");
	kt_c("x", "DT_FLOAT", "2", "1 inf");
	kt_op("y", "CheckNumerics", "x", KT_ATTR_STR("message", "m"));
	ok(kt_err(kt_run("y"), "y (CheckNumerics): m: tensor had Inf values"),
	   "CheckNumerics refuses an infinity");
	X23;
	kt_op("y", "StopGradient", "x", "");
	is_string("float32[2,3] 1,2,3,4,5,6", kt_run("y"), "StopGradient");
}

/* Inputs a hostile model may hold: ranks at the limit, sizes that
 * overflow, indices at the edges. */
static void test_hostile(void)
{
	char shape[256] = "";
	for (int i = 0; i < GE_SHAPE_MAXRANK; i++)
		strcat(shape, i ? ",1" : "1");
	kt_c("d", "DT_FLOAT", shape, "1");
	kt_c("s", "DT_INT32", "", "0");
	kt_c("n", "DT_INT32", "", "1");
	kt_op("y", "UnsortedSegmentSum", "d,s,n", "");
	ok(kt_err(kt_run("y"), "y (UnsortedSegmentSum): the result's rank is "
		  "over 32"), "a segment sum past the most rank is refused");
	kt_c("i", "DT_INT32", "", "0");
	kt_c("d", "DT_FLOAT", shape, "1");
	kt_op("y", "DynamicStitch", "i,d", KT_ATTR_INT("N", 1));
	ok(kt_err(kt_run("y"), "y (DynamicStitch): data 0 has too high a "
		  "rank"), "a stitch past the most rank is refused");
	kt_c("i", "DT_INT32", "2", "0 1");
	kt_c("d", "DT_FLOAT", "", "1");
	kt_op("y", "DynamicStitch", "i,d", KT_ATTR_INT("N", 1));
	ok(kt_err(kt_run("y"), "y (DynamicStitch): data 0 has a lower rank"),
	   "data of a lower rank than its indices is refused");
	kt_c("a", "DT_INT64", "", "-9223372036854775808");
	kt_c("b", "DT_INT64", "", "9223372036854775807");
	kt_c("c", "DT_INT64", "", "1");
	kt_op("y", "Range", "a,b,c", "");
	ok(kt_err(kt_run("y"), "y (Range): the range's size overflows"),
	   "an int64 range over the whole type is refused");
	kt_c("a", "DT_INT64", "", "0");
	kt_c("b", "DT_INT64", "", "9223372036854775807");
	kt_c("c", "DT_INT64", "", "1");
	kt_op("y", "Range", "a,b,c", "");
	const char *r = kt_run("y");
	ok(kt_err(r, "y (Range): needs"),
	   "a range bigger than the budget is refused (%s)", r);
	kt_c("x", "DT_FLOAT", shape, "1");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "ExpandDims", "x,a", "");
	ok(kt_err(kt_run("y"), "y (ExpandDims): rank 32 is already the most"),
	   "ExpandDims past the most rank is refused");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("p", "DT_INT64", "1,2", "9223372036854775807 9223372036854775807");
	kt_op("y", "Pad", "x,p", "");
	ok(kt_err(kt_run("y"), "y (Pad): paddings"),
	   "paddings whose sum overflows are refused");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("s", "DT_INT64", "3", "4294967296 4294967296 4");
	kt_op("y", "BroadcastTo", "x,s", "");
	ok(kt_err(kt_run("y"), "y (BroadcastTo): cannot broadcast"),
	   "BroadcastTo of an unfitting shape is refused");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("s", "DT_INT64", "3", "4294967296 4294967296 2");
	kt_op("y", "BroadcastTo", "x,s", "");
	ok(kt_err(kt_run("y"), "y (BroadcastTo): "),
	   "BroadcastTo past the budget is refused");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("i", "DT_INT64", "1", "-1");
	kt_c("a", "DT_INT32", "", "0");
	kt_op("y", "GatherV2", "x,i,a", "");
	ok(kt_err(kt_run("y"), "y (GatherV2): indices[0] = -1"),
	   "a negative gather index is refused");
	kt_c("x", "DT_FLOAT", "2", "1 2");
	kt_c("i", "DT_INT64", "1,1", "2");
	kt_op("y", "GatherNd", "x,i", "");
	ok(kt_err(kt_run("y"), "y (GatherNd): index 2 of entry 0"),
	   "a GatherNd index past the end is refused");
	kt_c("x", "DT_FLOAT", "2,2", "1 2 3 4");
	kt_c("b", "DT_INT32", "2", "0 0");
	kt_c("e", "DT_INT32", "2", "2 2");
	kt_c("s", "DT_INT32", "2", "1 0");
	kt_op("y", "StridedSlice", "x,b,e,s", "");
	ok(kt_err(kt_run("y"), "y (StridedSlice): stride 1 is 0"),
	   "a zero stride is refused");
}

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_shape();
	test_layout();
	test_index();
	test_misc();
	test_hostile();
	ok(kt_budget.mem_live == 0, "every tensor was released (%llu bytes "
	   "live)", (unsigned long long)kt_budget.mem_live);
	return tap_done();
}
