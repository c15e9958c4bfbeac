/* fuzz_eval.c: the code that computes on a model's values.  The input is
 * not a file but a recipe for a small graph: a few Consts of edge-case
 * dtypes, shapes (some declared large, stored as one value) and values,
 * then a few ops of the evaluator's kernels (and other shape-rule ops)
 * reading them, with attrs picked from the values kernels trip on
 * (output dtypes, axes, masks, paddings, data formats).  The graph goes
 * through shape inference (infer, validate, _output_shapes), the
 * evaluator (every output of every op) and constant folding, within
 * small memory and work budgets; for inputs of odd length with the
 * runner's kernels in front of the evaluator's (exec/xfold.h).
 *
 * Byte layout: each decision reads the next byte (0 when the input is
 * used up).  Consts first (1 + b % 4 of them), then ops (1 + b % 6). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/bounds.h"
#include "analyses/eval.h"
#include "editor/fold.h"
#include "exec/xfold.h"
#include "fuzz.h"
#include "graph/graph.h"
#include "analyses/shapes.h"
#include "base/tensor.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"

typedef struct rd {
	const uint8_t *p;
	size_t n, at;
} rd;

static unsigned byte(rd *r)
{
	return r->at < r->n ? r->p[r->at++] : 0;
}

#define PICK(r, arr) ((arr)[byte(r) % (sizeof(arr) / sizeof((arr)[0]))])

enum {
	DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT8 = 6,
	DT_INT64 = 9, DT_BOOL = 10, DT_HALF = 19,
};

static const int dtypes[] = {DT_FLOAT, DT_INT32, DT_INT64, DT_BOOL,
			     DT_DOUBLE, DT_HALF, DT_UINT8, DT_INT8, 7 /* string */};
static const int64_t dims_tab[] = {
	0, 1, 1, 2, 2, 3, 3, 4, 5, 8, 16, 64, 1000, 1 << 20, (int64_t)1 << 31,
};
static const int64_t ints[] = {
	0, 1, -1, 2, 3, -2, 4, 7, 32, 60, 61, 62, 63, 64, INT32_MAX, INT32_MIN,
	INT64_MAX, INT64_MIN, INT64_MAX - 1, (int64_t)1 << 62,
	(int64_t)1 << 31, 1000000, (1LL << 60) - 1, 1LL << 60,
};
static const double floats[] = {
	0, 1, -1, 0.5, 3, -0.0, 1e38, -1e38, 1e300, NAN, INFINITY, -INFINITY,
	2.5, 1e-45,
};

static const char *const op_types[] = {
	"Identity", "Neg", "Abs", "Sqrt", "Exp", "Relu", "Square", "Sign",
	"Cast", "LogicalNot", "ZerosLike", "OnesLike",
	"Add", "AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod",
	"TruncateDiv", "Mod", "Maximum", "Pow", "DivNoNan", "Equal", "Less",
	"LogicalAnd", "BiasAdd", "AddN", "Select", "SelectV2",
	"Sum", "Mean", "Max", "Prod", "All", "ArgMax", "ArgMin",
	"Shape", "ShapeN", "Size", "Rank", "Fill", "Range", "Reshape",
	"Squeeze", "ExpandDims", "Transpose", "ConcatV2", "Concat", "Pack",
	"Unpack", "Split", "SplitV", "Slice", "StridedSlice", "Gather",
	"GatherV2", "Tile", "Pad", "PadV2", "MirrorPad", "InvertPermutation",
	"MatMul", "BatchMatMulV2", "Conv2D", "DepthwiseConv2dNative",
	"FusedBatchNorm", "FusedBatchNormV3",
	"BatchNormWithGlobalNormalization", "Softmax", "LogSoftmax",
	"Dequantize", "MaxPool", "AvgPool", "OneHot", "BroadcastTo",
};

static int64_t wrap(int dt, int64_t v)
{
	switch (dt) {
	case DT_INT32: return (int32_t)(uint32_t)(uint64_t)v;
	case DT_UINT8: return (uint8_t)(uint64_t)v;
	case DT_INT8: return (int8_t)(uint8_t)(uint64_t)v;
	case DT_BOOL: return v != 0;
	default: return v;
	}
}

/* A Const: dtype, rank (0-4) and dims, then its values: one (a splat,
 * whatever the declared shape) or, for up to 64 elements, one each. */
static void make_const(ge_graph *g, rd *r, int k)
{
	char name[16];
	snprintf(name, sizeof name, "c%d", k);
	int dt = PICK(r, dtypes);
	int rank = (int)(byte(r) % 5);
	int64_t dims[4];
	for (int i = 0; i < rank; i++)
		dims[i] = PICK(r, dims_tab);
	int64_t n = ge_shape_elems(dims, (size_t)rank) == UINT64_MAX
			    ? -1
			    : (int64_t)ge_shape_elems(dims, (size_t)rank);
	int64_t nv = n == 0 ? 0 : n > 0 && n <= 64 && (byte(r) & 1) ? n : 1;
	ge_buf t = GE_BUF_INIT, a = GE_BUF_INIT;
	ge_tenc e;
	ge_tenc_begin(&e, &t, dt, rank, dims, nv);
	for (int64_t i = 0; i < nv; i++) {
		if (dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF)
			ge_tenc_double(&e, PICK(r, floats), 0);
		else if (dt == DT_BOOL)
			ge_tenc_bool(&e, byte(r) & 1);
		else if (dt == 7)
			ge_tenc_string(&e, "ab", byte(r) % 3);
		else
			ge_tenc_int(&e, wrap(dt, PICK(r, ints)));
	}
	ge_tenc_end(&e);
	ge_opid id = ge_graph_add_op(g, name, "Const", NULL);
	if (id == GE_NOOP) {
		ge_buf_free(&t);
		return;
	}
	ge_buf_tag(&a, 6, 0);
	ge_buf_varint(&a, (uint64_t)dt);
	ge_op_set_attr_raw(g, id, "dtype", a.data, a.len);
	a.len = 0;
	ge_buf_lenfield(&a, 8, t.data, t.len);
	ge_op_set_attr_raw(g, id, "value", a.data, a.len);
	ge_buf_free(&a);
	ge_buf_free(&t);
}

static void set_type(ge_graph *g, ge_opid id, const char *name, int dt)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
	v.type = (Tensorflow__DataType)dt;
	ge_op_set_attr(g, id, name, &v);
}

static void set_int(ge_graph *g, ge_opid id, const char *name, int64_t x)
{
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	v.i = x;
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

static void set_ints(ge_graph *g, ge_opid id, const char *name, rd *r)
{
	int64_t x[8];
	size_t n = byte(r) % 7;
	for (size_t i = 0; i < n; i++)
		x[i] = PICK(r, ints);
	Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__AttrValue__ListValue l =
		TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
	l.n_i = n;
	l.i = x;
	v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
	v.list = &l;
	ge_op_set_attr(g, id, name, &v);
}

/* Attrs a kernel or shape rule reads, each set or not as the bytes say. */
static void make_attrs(ge_graph *g, ge_opid id, rd *r)
{
	static const char *const types[] = {
		"T", "out_type", "output_type", "Tidx", "Index", "Tpaddings",
		"DstT", "SrcT", "Tindices", "Taxis", "Tshape", "Tmultiples",
	};
	static const char *const nums[] = {
		"axis", "num_split", "num", "N", "begin_mask", "end_mask",
		"ellipsis_mask", "new_axis_mask", "shrink_axis_mask",
		"batch_dims", "depth",
	};
	static const char *const lists[] = {
		"strides", "dilations", "squeeze_dims", "ksize",
		"explicit_paddings",
	};
	static const char *const fmts[] = {"NHWC", "NCHW", "NCDHW", "NDHWC",
					   "X"};
	static const char *const pads[] = {"SAME", "VALID", "EXPLICIT", "?"};
	unsigned m = byte(r) | byte(r) << 8;
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (m >> (i % 16) & 1 && byte(r) & 1)
			set_type(g, id, types[i], PICK(r, dtypes));
	unsigned m2 = byte(r);
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		if (m2 >> (i % 8) & 1 && byte(r) & 1)
			set_int(g, id, nums[i], PICK(r, ints));
	unsigned m3 = byte(r);
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
		if (m3 >> i & 1)
			set_ints(g, id, lists[i], r);
	if (m3 & 0x20)
		set_str(g, id, "data_format", PICK(r, fmts));
	if (m3 & 0x40)
		set_str(g, id, "padding", PICK(r, pads));
	if (m3 & 0x80) {
		set_bool(g, id, "is_training", byte(r) & 1);
		set_bool(g, id, "keep_dims", byte(r) & 1);
		set_bool(g, id, "transpose_a", byte(r) & 1);
		set_bool(g, id, "transpose_b", byte(r) & 1);
		set_str(g, id, "mode", byte(r) & 1 ? "MIN_FIRST" : "SCALED");
	}
}

/* An op reading 0-4 outputs of the ops before it. */
static void make_op(ge_graph *g, rd *r, int k, const ge_opid *ids, int nids)
{
	char name[16];
	snprintf(name, sizeof name, "op%d", k);
	ge_opid id = ge_graph_add_op(g, name, PICK(r, op_types), NULL);
	if (id == GE_NOOP)
		return;
	int nin = (int)(byte(r) % 5);
	for (int i = 0; i < nin && nids; i++) {
		ge_tref t = {ids[byte(r) % (unsigned)nids], (int)(byte(r) % 3)};
		if (t.index && t.index >= ge_op_num_outputs(g, t.op))
			t.index = 0;
		ge_op_add_input(g, id, t, NULL);
	}
	make_attrs(g, id, r);
}

FUZZ_TARGET(eval)
{
	fuzz_limits();
	/* small budgets: every input runs in milliseconds */
	ge_set_max_memory((uint64_t)4 << 20);
	ge_set_max_work((uint64_t)1 << 20);
	/* the runner's kernels in front of the evaluator's for an input of
	 * odd length, the evaluator's alone for an even one: both are
	 * fuzzed, and the byte layout stays as it was */
	if (len & 1)
		ge_xfold_install();
	else
		ge_eval_set_front(NULL, NULL);
	rd r = {data, len, 0};
	ge_graph *g = ge_graph_new();
	ge_opid ids[16];
	int nids = 0;
	int nc = 1 + (int)(byte(&r) % 4);
	for (int k = 0; k < nc; k++) {
		make_const(g, &r, k);
		char name[16];
		snprintf(name, sizeof name, "c%d", k);
		ge_opid id = ge_graph_find(g, name);
		if (id != GE_NOOP)
			ids[nids++] = id;
	}
	int no = 1 + (int)(byte(&r) % 6);
	for (int k = 0; k < no; k++) {
		make_op(g, &r, k, ids, nids);
		char name[16];
		snprintf(name, sizeof name, "op%d", k);
		ge_opid id = ge_graph_find(g, name);
		if (id != GE_NOOP && nids < 16)
			ids[nids++] = id;
	}

	/* shape inference */
	ge_shape_stats st;
	ge_error err;
	ge_buf rep = GE_BUF_INIT;
	ge_shapes_infer(g, &st, &err);
	ge_shapes_validate(g, &rep);
	ge_buf_free(&rep);
	for (int i = 0; i < nids; i++) {
		int64_t d[GE_SHAPE_MAXRANK], v[8];
		ge_tref t = {ids[i], 0};
		ge_shapes_best(g, t, d, GE_SHAPE_MAXRANK);
		ge_shapes_value(g, t, v, 8);
	}
	/* the evaluator, op by op (the Consts' own values are not news) */
	for (int i = nc; i < nids; i++) {
		int n = ge_op_num_outputs(g, ids[i]);
		for (int k = 0; k < n && k < 2; k++) {
			ge_value v;
			ge_tref t = {ids[i], k};
			if (ge_eval_tensor(g, t, &v, &err) == GE_OK)
				ge_value_free(&v);
		}
	}
	/* folding, then _output_shapes of what is left */
	ge_fold_report fr = {0, 0, 0, GE_BUF_INIT};
	ge_fold_constants(g, NULL, 0, &fr, &err);
	ge_fold_report_free(&fr);
	ge_shapes_write_attrs(g);
	ge_graph_free(g);
	return 0;
}
