/*
 * The stateful and data-structure kernels through the executor, on small
 * graphs written here: TensorList value semantics, TensorArray*V3 as TF1
 * loops use them, random ops against Philox known answers and the
 * numbers TensorFlow documents, lookup tables from text files inside and
 * outside the model, and ParseExample(V2) on tf.Example bytes the test
 * encodes.
 */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

#include "exec/exec.h"
#include "exec/philox.h"
#include "ktest.h"

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_STRING = 7, DT_INT64 = 9 };

/* ------------------------------------------------------------ graphs */

#define ATTR_T(k, t) "attr { key: \"" k "\" value { type: " t " } } "
#define ATTR_I(k, v) "attr { key: \"" k "\" value { i: " #v " } } "
#define ATTR_B(k, v) "attr { key: \"" k "\" value { b: " #v " } } "
/* A Const: dtype, shape text, values text. */
#define CONST(n, dt, shape, vals) \
	"node { name: \"" n "\" op: \"Const\" " ATTR_T("dtype", dt) \
	"attr { key: \"value\" value { tensor { dtype: " dt \
	" tensor_shape { " shape " } " vals " } } } }\n"
#define CI(n, v) CONST(n, "DT_INT32", "", "int_val: " #v)
#define NODE(n, op, ins, attrs) \
	"node { name: \"" n "\" op: \"" op "\" " ins " " attrs "}\n"
#define IN(x) "input: \"" x "\" "
#define EF ATTR_T("element_dtype", "DT_FLOAT")

#define IS(got, want, ...) is_string(want, got, __VA_ARGS__)

/* Runs fetches of s (one run), each formatted as kt_format does into
 * out[i], or "error: ..." in out[0]. */
static void run(ge_xsession *s, const char *const *fetch, int n,
		char out[][1200])
{
	ge_xt *y[8] = {0};
	ge_error err = {0};
	if (ge_xsession_run(s, NULL, 0, fetch, n, y, &err)) {
		snprintf(out[0], 1200, "error: %s", err.msg);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (y[i])
			kt_format(y[i], out[i], 1200);
		else
			snprintf(out[i], 1200, "<none>");
		ge_xt_unref(y[i]);
	}
}

static ge_xsession *open_text(const char *txt, ge_graph **g, uint64_t seed)
{
	ge_xopts o = GE_XOPTS_INIT;
	ge_error err = {0};
	ge_xsession *s = NULL;
	o.seed = seed;
	*g = parse(txt);
	if (ge_xsession_open(*g, &o, &s, &err)) {
		printf("Bail out! session: %s\n", err.msg);
		exit(1);
	}
	return s;
}

/* The first fetch of one run of txt, formatted. */
static const char *eval1(const char *txt, const char *fetch)
{
	static char out[8][1200];
	ge_graph *g;
	ge_xsession *s = open_text(txt, &g, 0);
	run(s, &fetch, 1, out);
	ge_xsession_close(s);
	ge_graph_free(g);
	return out[0];
}

/* ------------------------------------------------------------ lists */

#define LIST_BASE \
	CONST("es", "DT_INT32", "dim { size: 1 }", "int_val: 2") \
	CI("n", 3) CI("one", 1) CI("two", 2) \
	CONST("v", "DT_FLOAT", "dim { size: 2 }", "float_val: 1 float_val: 2") \
	CONST("w", "DT_FLOAT", "dim { size: 3 }", \
	      "float_val: 1 float_val: 2 float_val: 3") \
	NODE("l", "TensorListReserve", IN("es") IN("n"), EF \
	     ATTR_T("shape_type", "DT_INT32")) \
	NODE("set", "TensorListSetItem", IN("l") IN("one") IN("v"), EF) \
	NODE("stack", "TensorListStack", IN("set") IN("es"), EF \
	     ATTR_I("num_elements", -1)) \
	NODE("old", "TensorListGetItem", IN("l") IN("one") IN("es"), EF) \
	NODE("len", "TensorListLength", IN("set"), "")

static void test_lists(void)
{
	char out[8][1200];
	ge_graph *g;
	ge_xsession *s = open_text(LIST_BASE, &g, 0);
	const char *f1[] = {"stack", "old", "len"};
	run(s, f1, 3, out);
	IS(out[0], "float32[3,2] 0,0,1,2,0,0",
		  "Reserve, SetItem, Stack: unset items stack as zeros");
	IS(out[1], "float32[2] 0,0",
		  "the list SetItem read is unchanged (value semantics)");
	IS(out[2], "int32[] 3", "TensorListLength");
	ge_xsession_close(s);
	ge_graph_free(g);

	const char *e = eval1(LIST_BASE CONST("us", "DT_INT32", "",
					   "int_val: -1")
			      NODE("l2", "TensorListReserve", IN("us") IN("n"),
				   EF)
			      NODE("x", "TensorListGetItem",
				   IN("l2") IN("one") IN("us"), EF), "x");
	ok(strstr(e, "x (TensorListGetItem): reads an item that was never "
		  "set, and the element shape <unknown> is not fully known")
	   != NULL, "an unset item of unknown shape is an error naming the "
	   "op");
	if (!strstr(e, "never set"))
		tap_diag("%s", e);

	e = eval1(LIST_BASE NODE("bad", "TensorListSetItem",
				 IN("l") IN("one") IN("w"), EF), "bad");
	ok(strstr(e, "bad (TensorListSetItem): an item of shape [3] does "
		  "not fit the list's element shape [2]") != NULL,
	   "SetItem refuses an item of the wrong shape");

#define LIST_ROWS LIST_BASE \
	CONST("m", "DT_FLOAT", "dim { size: 2 } dim { size: 3 }", \
	      "float_val: 1 float_val: 2 float_val: 3 float_val: 4 " \
	      "float_val: 5 float_val: 6") \
	CONST("es3", "DT_INT32", "dim { size: 1 }", "int_val: 3") \
	CONST("unk", "DT_INT32", "dim { size: 1 }", "int_val: -1") \
	CONST("idx", "DT_INT32", "dim { size: 2 }", "int_val: 2 int_val: 0") \
	CONST("lead", "DT_INT64", "dim { size: 0 }", "") \
	CI("five", 5) \
	NODE("fl", "TensorListFromTensor", IN("m") IN("es3"), EF \
	     ATTR_T("shape_type", "DT_INT32")) \
	NODE("g1", "TensorListGetItem", IN("fl") IN("one") IN("es3"), EF) \
	NODE("pb", "TensorListPushBack", IN("fl") IN("w"), EF) \
	NODE("st", "TensorListStack", IN("pb") IN("es3"), EF \
	     ATTR_I("num_elements", 3)) \
	NODE("pop", "TensorListPopBack", IN("pb") IN("es3"), EF) \
	NODE("plen", "TensorListLength", IN("pop"), "") \
	NODE("ga", "TensorListGather", IN("pb") IN("idx") IN("es3"), EF) \
	NODE("esh", "TensorListElementShape", IN("l"), \
	     ATTR_T("shape_type", "DT_INT32")) \
	NODE("cat", "TensorListConcatV2", IN("fl") IN("unk") IN("lead"), EF \
	     ATTR_T("shape_type", "DT_INT32")) \
	NODE("rs", "TensorListResize", IN("l") IN("five"), "") \
	NODE("rlen", "TensorListLength", IN("rs"), "") \
	NODE("sc", "TensorListScatterIntoExistingList", \
	     IN("l") IN("m2") IN("idx"), EF) \
	CONST("m2", "DT_FLOAT", "dim { size: 2 } dim { size: 2 }", \
	      "float_val: 7 float_val: 8 float_val: 9 float_val: 10") \
	NODE("scs", "TensorListStack", IN("sc") IN("es"), EF) \
	NODE("s0", "TensorListSetItem", IN("l") IN("zero") IN("v"), EF) \
	CI("zero", 0) \
	NODE("s2", "TensorListSetItem", IN("s0") IN("two") IN("v"), EF) \
	NODE("s2s", "TensorListStack", IN("s2") IN("es"), EF)

	ge_graph *g2;
	s = open_text(LIST_ROWS, &g2, 0);
	const char *f2[] = {"g1", "st", "pop:1", "plen", "ga", "esh"};
	run(s, f2, 6, out);
	IS(out[0], "float32[3] 4,5,6", "FromTensor, GetItem");
	IS(out[1], "float32[3,3] 1,2,3,4,5,6,1,2,3",
		  "PushBack, Stack with num_elements");
	IS(out[2], "float32[3] 1,2,3", "PopBack gives the last item");
	IS(out[3], "int32[] 2", "and a list one shorter");
	IS(out[4], "float32[2,3] 1,2,3,1,2,3", "TensorListGather");
	IS(out[5], "int32[1] 2", "TensorListElementShape");
	const char *f3[] = {"cat", "cat:1", "rlen", "scs", "s2s"};
	run(s, f3, 5, out);
	IS(out[0], "float32[6] 1,2,3,4,5,6", "TensorListConcatV2");
	IS(out[1], "int64[2] 3,3", "and its lengths");
	IS(out[2], "int32[] 5", "TensorListResize");
	IS(out[3], "float32[3,2] 9,10,0,0,7,8",
		  "TensorListScatterIntoExistingList");
	IS(out[4], "float32[3,2] 1,2,0,0,1,2",
		  "SetItem on SetItem's list");
	ge_xsession_close(s);
	ge_graph_free(g2);
}

/* ------------------------------------------------------------ arrays */

#define TA(n, size, extra) \
	NODE(n, "TensorArrayV3", IN(size), ATTR_T("dtype", "DT_FLOAT") \
	     "attr { key: \"element_shape\" value { shape { " \
	     "unknown_rank: true } } } " extra)
#define FD ATTR_T("dtype", "DT_FLOAT")
#define ARRAY_BASE \
	CI("n", 3) CI("zero", 0) CI("one", 1) CI("two", 2) \
	CONST("v", "DT_FLOAT", "dim { size: 2 }", "float_val: 1 float_val: 2") \
	CONST("u", "DT_FLOAT", "dim { size: 2 }", "float_val: 3 float_val: 4") \
	CONST("m", "DT_FLOAT", "dim { size: 3 } dim { size: 2 }", \
	      "float_val: 1 float_val: 2 float_val: 3 float_val: 4 " \
	      "float_val: 5 float_val: 6") \
	CONST("ix", "DT_INT32", "dim { size: 3 }", \
	      "int_val: 2 int_val: 0 int_val: 1") \
	CONST("ix01", "DT_INT32", "dim { size: 2 }", "int_val: 0 int_val: 1") \
	CONST("lens", "DT_INT64", "dim { size: 2 }", \
	      "int64_val: 1 int64_val: 2") \
	TA("ta", "n", ATTR_B("clear_after_read", false)) \
	NODE("w0", "TensorArrayWriteV3", IN("ta") IN("zero") IN("v") \
	     IN("ta:1"), "") \
	NODE("w1", "TensorArrayWriteV3", IN("ta") IN("one") IN("u") IN("w0"), \
	     "") \
	NODE("r1", "TensorArrayReadV3", IN("ta") IN("one") IN("w1"), FD) \
	NODE("ga", "TensorArrayGatherV3", IN("ta") IN("ix01") IN("w1"), FD \
	     "attr { key: \"element_shape\" value { shape { " \
	     "unknown_rank: true } } } ") \
	NODE("sz", "TensorArraySizeV3", IN("ta") IN("w1"), "") \
	NODE("un", "TensorArrayReadV3", IN("ta") IN("two") IN("w1"), FD) \
	TA("tb", "n", "") \
	NODE("sc", "TensorArrayScatterV3", IN("tb") IN("ix") IN("m") \
	     IN("tb:1"), "") \
	NODE("gb", "TensorArrayGatherV3", IN("tb") IN("ix01") IN("sc"), FD) \
	NODE("gb2", "TensorArrayGatherV3", IN("tb") IN("ix01") IN("sc") \
	     "input: \"^gb\"", FD) \
	TA("tc", "two", "") \
	CONST("m3", "DT_FLOAT", "dim { size: 3 }", \
	      "float_val: 7 float_val: 8 float_val: 9") \
	NODE("sp", "TensorArraySplitV3", IN("tc") IN("m3") IN("lens") \
	     IN("tc:1"), "") \
	NODE("cat", "TensorArrayConcatV3", IN("tc") IN("sp"), FD) \
	NODE("w5", "TensorArrayWriteV3", IN("ta") IN("n") IN("v") IN("w1"), "")

static void test_arrays(void)
{
	char out[8][1200];
	ge_graph *g;
	ge_xsession *s = open_text(ARRAY_BASE, &g, 0);
	const char *f1[] = {"r1", "ga", "sz"};
	run(s, f1, 3, out);
	IS(out[0], "float32[2] 3,4", "TensorArrayWriteV3, ReadV3");
	IS(out[1], "float32[2,2] 1,2,3,4", "GatherV3 (no clear_after_read)");
	IS(out[2], "int32[] 3", "SizeV3");
	const char *f2[] = {"gb"};
	run(s, f2, 1, out);
	IS(out[0], "float32[2,2] 3,4,5,6", "ScatterV3 puts rows where "
	   "the indices say");
	const char *f3[] = {"gb2"};
	run(s, f3, 1, out);
	ok(strstr(out[0], "gb2 (TensorArrayGatherV3): index 0 was read "
		  "already and cleared (clear_after_read)") != NULL,
	   "a second read of a clear_after_read array is an error");
	const char *f4[] = {"cat", "cat:1"};
	run(s, f4, 2, out);
	IS(out[0], "float32[3] 7,8,9", "SplitV3, ConcatV3");
	IS(out[1], "int64[2] 1,2", "ConcatV3's lengths");
	const char *f5[] = {"un"};
	run(s, f5, 1, out);
	ok(strstr(out[0], "un (TensorArrayReadV3): the element shape "
		  "<unknown> is not fully known") != NULL,
	   "reading an index never written, element shape unknown: error");
	const char *f6[] = {"w5"};
	run(s, f6, 1, out);
	ok(strstr(out[0], "w5 (TensorArrayWriteV3): index 3 is out of range "
		  "for a TensorArray of 3") != NULL,
	   "a write past the end of a fixed-size array: error");
	ge_xsession_close(s);
	ge_graph_free(g);
}

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_lists();
	test_arrays();
	/* a kernel alone, without a session: every run is a first run */
	IS(kt_eval_text(CI("sh", 2) NODE("r", "RandomUniformInt",
		IN("shv") IN("lo") IN("hi"), ATTR_I("seed", 1)
		ATTR_T("Tout", "DT_INT32") ATTR_T("T", "DT_INT32"))
		CONST("shv", "DT_INT32", "dim { size: 1 }", "int_val: 0")
		CI("lo", 0) CI("hi", 5), "r"), "int32[0]",
	   "an empty RandomUniformInt draws nothing");
	return tap_done();
}
