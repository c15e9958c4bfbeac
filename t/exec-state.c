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
#include "tensorflow/core/example/example.pb-c.h"

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

	e = eval1(LIST_BASE CONST("big", "DT_INT64", "", "int64_val: 1000000000000")
		  NODE("huge", "TensorListReserve", IN("es") IN("big"), EF),
		  "huge");
	ok(strstr(e, "huge (TensorListReserve): needs") &&
	   strstr(e, "memory budget"), "reserving 10^12 items: the memory "
	   "budget refuses, naming the op");
	e = eval1(CONST("big", "DT_INT32", "", "int_val: 2000000000")
		  NODE("ta", "TensorArrayV3", IN("big"),
		       ATTR_T("dtype", "DT_FLOAT")), "ta");
	ok(strstr(e, "ta (TensorArrayV3): needs") &&
	   strstr(e, "memory budget"), "a TensorArray of 2*10^9 items: the "
	   "memory budget refuses");

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

/* A TF1 while loop writing i * i at index i of a TensorArray, as
 * tf.while_loop builds it: the handle enters the frame as a constant,
 * the flow goes round the loop with the counter. */
#define ENTER(n, x, t, c) \
	NODE(n, "Enter", IN(x), ATTR_T("T", t) ATTR_B("is_constant", c) \
	     "attr { key: \"frame_name\" value { s: \"L\" } } ")
#define TI ATTR_T("T", "DT_INT32")
#define TF ATTR_T("T", "DT_FLOAT")
#define LOOP_ARRAY \
	CI("n", 3) CI("zero", 0) CI("one", 1) \
	CONST("all", "DT_INT32", "dim { size: 3 }", \
	      "int_val: 0 int_val: 1 int_val: 2") \
	NODE("ta", "TensorArrayV3", IN("n"), ATTR_T("dtype", "DT_INT32") \
	     "attr { key: \"element_shape\" value { shape { } } } ") \
	ENTER("e_ta", "ta", "DT_RESOURCE", true) \
	ENTER("e_flow", "ta:1", "DT_FLOAT", false) \
	ENTER("e_i", "zero", "DT_INT32", false) \
	ENTER("e_n", "n", "DT_INT32", true) \
	ENTER("e_one", "one", "DT_INT32", true) \
	NODE("m_i", "Merge", IN("e_i") IN("ni_i"), TI ATTR_I("N", 2)) \
	NODE("m_f", "Merge", IN("e_flow") IN("ni_f"), TF ATTR_I("N", 2)) \
	NODE("less", "Less", IN("m_i") IN("e_n"), TI) \
	NODE("lc", "LoopCond", IN("less"), "") \
	NODE("s_i", "Switch", IN("m_i") IN("lc"), TI) \
	NODE("s_f", "Switch", IN("m_f") IN("lc"), TF) \
	NODE("id_i", "Identity", IN("s_i:1"), TI) \
	NODE("id_f", "Identity", IN("s_f:1"), TF) \
	NODE("sq", "Mul", IN("id_i") IN("id_i"), TI) \
	NODE("w", "TensorArrayWriteV3", IN("e_ta") IN("id_i") IN("sq") \
	     IN("id_f"), TI) \
	NODE("inc", "AddV2", IN("id_i") IN("e_one"), TI) \
	NODE("ni_i", "NextIteration", IN("inc"), TI) \
	NODE("ni_f", "NextIteration", IN("w"), TF) \
	NODE("x_f", "Exit", IN("s_f"), TF) \
	NODE("g", "TensorArrayGatherV3", IN("ta") IN("all") IN("x_f"), \
	     ATTR_T("dtype", "DT_INT32") \
	     "attr { key: \"element_shape\" value { shape { } } } ") \
	NODE("size", "TensorArraySizeV3", IN("ta") IN("x_f"), "")

static void test_arrays(void)
{
	IS(eval1(LOOP_ARRAY, "g"), "int32[3] 0,1,4",
	   "a TF1 while loop writes a TensorArray, GatherV3 after its Exit");

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

/* ------------------------------------------------------------ random */

static void test_philox(void)
{
	/* Random123's known answers for Philox4x32-10 (kat_vectors):
	 * counter, key, output. */
	static const uint32_t kat[3][10] = {
		{0, 0, 0, 0, 0, 0,
		 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822,
		 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
	};
	for (int i = 0; i < 3; i++) {
		uint32_t o[4];
		ge_philox_block(kat[i], kat[i] + 4, o);
		ok(!memcmp(o, kat[i] + 6, sizeof o), "Philox4x32-10 known "
		   "answer %d: %08x %08x %08x %08x", i + 1, o[0], o[1], o[2],
		   o[3]);
	}

	/* TensorFlow's random-number guide: Generator.from_seed(1) (counter
	 * 1, key 0) gives normal([2, 3]) and then normal([]) twice; its
	 * generator moves on 256 blocks per element.  The first value the
	 * guide prints from a CPU (0.43842274) is bit-exact; the guide's
	 * [2, 3] values came from a GPU, whose logf and sincosf differ in
	 * the last bits ("almost the same" numbers, the guide says). */
	ge_philox g = {{1, 0, 0, 0}, {0, 0}};
	float f[6];
	static const float gpu[6] = {0.43842277f, -0.53439844f, -0.07710262f,
				     1.5658045f, -0.1012345f, -0.2744976f};
	ge_philox_fill(g, GE_RAND_NORMAL, DT_FLOAT, f, 6, 0, 0);
	ok(f[0] == 0.43842274f, "from_seed(1).normal: %.9g (CPU: 0.43842274)",
	   f[0]);
	int near = 1;
	for (int i = 0; i < 6; i++)
		near &= fabsf(f[i] - gpu[i]) <= 4e-7f * (1 + fabsf(gpu[i]));
	ok(near, "from_seed(1).normal([2, 3]) within a few ulps of the "
	   "guide's values");
	ge_philox_skip(&g, 256);
	ge_philox_fill(g, GE_RAND_NORMAL, DT_FLOAT, f, 1, 0, 0);
	ok(f[0] == 1.6272374f, "second normal([]): %.9g (1.6272374)", f[0]);
	ge_philox_skip(&g, 256);
	ge_philox_fill(g, GE_RAND_NORMAL, DT_FLOAT, f, 1, 0, 0);
	ok(f[0] == 1.6307176f, "third normal([]): %.9g (1.6307176)", f[0]);

	/* Uniform floats are exact: 23 mantissa bits of each word. */
	ge_philox z = {{0, 0, 0, 0}, {0, 0}};
	ge_philox_fill(z, GE_RAND_UNIFORM, DT_FLOAT, f, 2, 0, 0);
	ok(f[0] == (float)(0x27e8d5 / 8388608.0) &&
	   f[1] == (float)(0x69c58d / 8388608.0),
	   "uniform floats are the words' low 23 bits over 2^23");
	int64_t iv[4];
	ge_philox_fill(z, GE_RAND_INT, DT_INT64, iv, 2, -5, 7);
	ok(iv[0] == (int64_t)((0xe169c58d6627e8d5ull % 12) - 5) &&
	   iv[1] == (int64_t)((0x9b00dbd8bc57ac4cull % 12) - 5),
	   "uniform int64: lo + (two words mod (hi - lo))");
	double d[3];
	ge_philox_fill(z, GE_RAND_TRUNCATED, 2, d, 3, 0, 0);
	ok(fabs(d[0]) < 2 && fabs(d[1]) < 2 && fabs(d[2]) < 2,
	   "truncated normal doubles within (-2, 2)");
}

/* Philox's inverse, as TensorFlow's own test of stateless against
 * stateful ops computes it: the counter whose block is `value`. */
static uint32_t inv32(uint32_t a)
{
	uint32_t x = a;
	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

static void philox_invert(const uint32_t key[2], const uint32_t value[4],
			  uint32_t out[4])
{
	uint32_t v[4] = {value[0], value[1], value[2], value[3]};
	for (int r = 9; r >= 0; r--) {
		uint32_t k0 = key[0] + (uint32_t)r * 0x9E3779B9u;
		uint32_t k1 = key[1] + (uint32_t)r * 0xBB67AE85u;
		uint32_t c0 = v[3] * inv32(0xD2511F53u);
		uint32_t c2 = v[1] * inv32(0xCD9E8D57u);
		uint32_t h0 = (uint32_t)(((uint64_t)0xD2511F53u * c0) >> 32);
		uint32_t h1 = (uint32_t)(((uint64_t)0xCD9E8D57u * c2) >> 32);
		uint32_t c1 = v[0] ^ h1 ^ k0, c3 = v[2] ^ h0 ^ k1;
		v[0] = c0;
		v[1] = c1;
		v[2] = c2;
		v[3] = c3;
	}
	memcpy(out, v, sizeof v);
}

#define SHAPE4 CONST("sh", "DT_INT32", "dim { size: 1 }", "int_val: 4")
#define RAND(n, op, seed, seed2) \
	NODE(n, op, IN("sh"), ATTR_I("seed", seed) ATTR_I("seed2", seed2) \
	     ATTR_T("dtype", "DT_FLOAT") ATTR_T("T", "DT_INT32"))

static void test_random_ops(void)
{
	char out[8][1200], want[1200];
	ge_graph *g;
	ge_xsession *s = open_text(SHAPE4 RAND("u", "RandomUniform", 5, 9)
				   RAND("z", "RandomStandardNormal", 0, 0)
				   RAND("t", "TruncatedNormal", 3, 4), &g, 42);
	const char *fu = "u";
	for (int runs = 0; runs < 2; runs++) {
		/* key = seed, counter words 2..3 = seed2; run 2 starts 4
		 * elements * 256 blocks on */
		uint32_t c[4] = {runs ? 1024u : 0u, 0, 9, 0}, key[2] = {5, 0};
		uint32_t w[4];
		ge_philox_block(c, key, w);
		snprintf(want, sizeof want, "float32[4] %.9g,%.9g,%.9g,%.9g",
			 ge_philox_float(w[0]), ge_philox_float(w[1]),
			 ge_philox_float(w[2]), ge_philox_float(w[3]));
		run(s, &fu, 1, out);
		IS(out[0], want, "RandomUniform(seed 5, seed2 9), run %d: "
		   "Philox's block %u under key 5", runs + 1, c[0]);
	}
	const char *fz = "z";
	run(s, &fz, 1, out);
	char first[1200];
	snprintf(first, sizeof first, "%s", out[0]);
	const char *ft = "t";
	run(s, &ft, 1, out);
	int inside = 1;
	for (const char *p = strchr(out[0], ' '); p && *p; p = strchr(p, ',')) {
		inside &= fabs(atof(p + 1)) < 2;
		p++;
	}
	ok(inside && !strncmp(out[0], "float32[4] ", 11),
	   "TruncatedNormal: %s", out[0]);
	ge_xsession_close(s);
	ge_graph_free(g);

	/* an unseeded op takes the session's seed: the same seed repeats,
	 * another differs */
	s = open_text(SHAPE4 RAND("z", "RandomStandardNormal", 0, 0), &g, 42);
	run(s, &fz, 1, out);
	IS(out[0], first, "an unseeded op repeats under the same --seed");
	ge_xsession_close(s);
	ge_graph_free(g);
	s = open_text(SHAPE4 RAND("z", "RandomStandardNormal", 0, 0), &g, 43);
	run(s, &fz, 1, out);
	ok(strcmp(out[0], first) != 0, "and differs under another");
	ge_xsession_close(s);
	ge_graph_free(g);

	/* TensorFlow's guide: stateless_normal([2, 3], seed=[1, 2]) (a GPU
	 * printed it: compare within a few ulps) */
	const char *e = eval1(CONST("sh", "DT_INT32", "dim { size: 2 }",
				    "int_val: 2 int_val: 3")
			      CONST("seed", "DT_INT32", "dim { size: 2 }",
				    "int_val: 1 int_val: 2")
			      NODE("sn", "StatelessRandomNormal",
				   IN("sh") IN("seed"),
				   ATTR_T("dtype", "DT_FLOAT")), "sn");
	static const double doc[6] = {0.5441101, 0.20738031, 0.07356433,
				      0.04643455, -1.30159, -0.95385665};
	int near = !strncmp(e, "float32[2,3] ", 13);
	const char *p = e + 13;
	for (int i = 0; near && i < 6; i++) {
		near &= fabs(atof(p) - doc[i]) <= 3e-7 * (1 + fabs(doc[i]));
		p = strchr(p, ',');
		p = p ? p + 1 : "";
	}
	ok(near, "StatelessRandomNormal seed [1, 2]: %s", e);

	/* tf.random.stateless_normal in TF2: the V2 op on the key and
	 * counter StatelessRandomGetKeyCounter makes of the seed */
	char v1[1200];
	snprintf(v1, sizeof v1, "%s", e);
	e = eval1(CONST("sh", "DT_INT32", "dim { size: 2 }",
			"int_val: 2 int_val: 3")
		  CONST("seed", "DT_INT32", "dim { size: 2 }",
			"int_val: 1 int_val: 2")
		  NODE("kc", "StatelessRandomGetKeyCounter", IN("seed"),
		       ATTR_T("Tseed", "DT_INT32"))
		  CI("alg", 1)
		  NODE("sn", "StatelessRandomNormalV2",
		       IN("sh") IN("kc:0") IN("kc:1") IN("alg"),
		       ATTR_T("dtype", "DT_FLOAT")), "sn");
	IS(e, v1, "StatelessRandomNormalV2 on GetKeyCounter's key and "
	   "counter draws what StatelessRandomNormal draws");
	e = eval1(CONST("sh", "DT_INT32", "dim { size: 1 }", "int_val: 3")
		  CONST("key", "DT_UINT64", "dim { size: 1 }", "uint64_val: 0")
		  CONST("ctr", "DT_UINT64", "dim { size: 2 }",
			"uint64_val: 0 uint64_val: 0")
		  CI("alg", 1)
		  NODE("fi", "StatelessRandomUniformFullIntV2",
		       IN("sh") IN("key") IN("ctr") IN("alg"),
		       ATTR_T("dtype", "DT_UINT32")), "fi");
	IS(e, "uint32[3] 1713891541,3781805453,3159862348",
	   "StatelessRandomUniformFullIntV2 under key 0, counter 0: "
	   "Random123's first known answer (6627e8d5 e169c58d bc57ac4c)");

	/* TensorFlow's own test of stateless ops: the stateful op of seeds
	 * (7, 17) draws what the stateless op draws from the seed pair
	 * that Philox's inverse makes of (7, 0, 17, 0) */
	const uint32_t key[2] = {0x3ec8f720u, 0x02461e29u};
	const uint32_t v[4] = {7, 0, 17, 0};
	uint32_t pre[4];
	philox_invert(key, v, pre);
	char txt[4096];
	snprintf(txt, sizeof txt, SHAPE4 RAND("a", "RandomStandardNormal",
					      7, 17)
		 CONST("seed", "DT_INT64", "dim { size: 2 }",
		       "int64_val: %lld int64_val: %lld")
		 NODE("b", "StatelessRandomNormal", IN("sh") IN("seed"),
		      ATTR_T("dtype", "DT_FLOAT") ATTR_T("Tseed", "DT_INT64")),
		 (long long)(pre[0] | (uint64_t)pre[1] << 32),
		 (long long)(pre[2] | (uint64_t)pre[3] << 32));
	s = open_text(txt, &g, 0);
	const char *fab[] = {"a", "b"};
	run(s, fab, 2, out);
	IS(out[0], out[1], "RandomStandardNormal(7, 17) is "
	   "StatelessRandomNormal(Philox^-1(7, 0, 17, 0))");
	ge_xsession_close(s);
	ge_graph_free(g);
}

/* ------------------------------------------------------------ tables */

#define CS(n, shape, vals) CONST(n, "DT_STRING", shape, vals)
#define TABLE(n) NODE(n, "HashTableV2", "", ATTR_T("key_dtype", "DT_STRING") \
		      ATTR_T("value_dtype", "DT_INT64"))
#define FIND(n, tab, keys, def) \
	NODE(n, "LookupTableFindV2", IN(tab) IN(keys) IN(def), \
	     ATTR_T("Tin", "DT_STRING") ATTR_T("Tout", "DT_INT64"))
#define FROM_FILE(n, tab, fname) \
	NODE(n, "InitializeTableFromTextFileV2", IN(tab) IN(fname), \
	     ATTR_I("key_index", -2) ATTR_I("value_index", -1))
#define TABLE_GRAPH \
	TABLE("table") \
	CS("keys", "dim { size: 2 }", "string_val: \"a\" string_val: \"b\"") \
	CONST("vals", "DT_INT64", "dim { size: 2 }", \
	      "int64_val: 10 int64_val: 20") \
	NODE("init", "InitializeTableV2", IN("table") IN("keys") IN("vals"), \
	     ATTR_T("Tkey", "DT_STRING") ATTR_T("Tval", "DT_INT64")) \
	CS("q", "dim { size: 3 }", \
	   "string_val: \"b\" string_val: \"z\" string_val: \"a\"") \
	CONST("def", "DT_INT64", "", "int64_val: -1") \
	FIND("find", "table", "q", "def") \
	NODE("size", "LookupTableSizeV2", IN("table"), "")

static void test_tables(void)
{
	char out[8][1200];
	ge_graph *g;
	ge_xsession *s = open_text(TABLE_GRAPH, &g, 0);
	const char *ff = "find";
	run(s, &ff, 1, out);
	ok(strstr(out[0], "find (LookupTableFindV2): the table was not "
		  "initialized") != NULL, "a lookup before the init op: error");
	const char *fi = "^init";
	run(s, &fi, 1, out);
	IS(out[0], "<none>", "the init op runs");
	const char *f2[] = {"find", "size"};
	run(s, f2, 2, out);
	IS(out[0], "int64[3] 20,-1,10", "a later run finds the keys the "
	   "init op put in the session's table, the default for others");
	IS(out[1], "int64[] 2", "LookupTableSizeV2");
	ge_xsession_close(s);
	ge_graph_free(g);

	/* the V1 ops of older TF1 graphs */
	static const char v1[] =
		NODE("table", "HashTable", "", ATTR_T("key_dtype", "DT_INT64")
		     ATTR_T("value_dtype", "DT_STRING"))
		CONST("keys", "DT_INT64", "dim { size: 2 }",
		      "int64_val: 3 int64_val: 5")
		CS("vals", "dim { size: 2 }",
		   "string_val: \"three\" string_val: \"five\"")
		NODE("init", "InitializeTable", IN("table") IN("keys") IN("vals"),
		     "")
		CONST("q", "DT_INT64", "dim { size: 2 } dim { size: 1 }",
		      "int64_val: 5 int64_val: 4")
		CS("def", "", "string_val: \"?\"")
		NODE("find", "LookupTableFind", IN("table") IN("q") IN("def")
		     "input: \"^init\"", "");
	IS(eval1(v1, "find"), "string[2,1] five,?", "HashTable, "
	   "InitializeTable, LookupTableFind (V1): int64 keys to strings, "
	   "the keys' shape kept");

	/* a mutable table: inserts, the last value of a key wins; an
	 * import replaces the contents */
	s = open_text(CS("keys", "dim { size: 2 }",
			 "string_val: \"a\" string_val: \"b\"")
		      CONST("vals", "DT_INT64", "dim { size: 2 }",
			    "int64_val: 10 int64_val: 20")
		      CS("k2", "dim { size: 2 }",
			 "string_val: \"b\" string_val: \"c\"")
		      CONST("v2", "DT_INT64", "dim { size: 2 }",
			    "int64_val: 21 int64_val: 30")
		      NODE("mt", "MutableHashTableV2", "",
			   ATTR_T("key_dtype", "DT_STRING")
			   ATTR_T("value_dtype", "DT_INT64"))
		      NODE("ins1", "LookupTableInsertV2",
			   IN("mt") IN("keys") IN("vals"), "")
		      NODE("ins2", "LookupTableInsertV2",
			   IN("mt") IN("k2") IN("v2"), "")
		      NODE("imp", "LookupTableImportV2",
			   IN("mt") IN("k2") IN("vals"), "")
		      CS("q", "dim { size: 3 }", "string_val: \"a\" "
			 "string_val: \"b\" string_val: \"c\"")
		      CONST("def", "DT_INT64", "", "int64_val: -1")
		      FIND("find", "mt", "q", "def")
		      NODE("size", "LookupTableSizeV2", IN("mt"), ""), &g, 0);
	const char *fm[] = {"find", "size"};
	run(s, fm, 2, out);
	IS(out[0], "int64[3] -1,-1,-1", "a mutable table starts empty");
	const char *i1 = "^ins1", *i2 = "^ins2", *im = "^imp";
	run(s, &i1, 1, out);
	run(s, &i2, 1, out);
	run(s, fm, 2, out);
	IS(out[0], "int64[3] 10,21,30", "LookupTableInsertV2: the last value "
	   "of a key wins");
	IS(out[1], "int64[] 3", "and the size counts keys");
	run(s, &im, 1, out);
	run(s, fm, 1, out);
	IS(out[0], "int64[3] -1,10,20", "LookupTableImportV2 replaces the "
	   "contents");
	ge_xsession_close(s);
	ge_graph_free(g);

	/* a file initializer reads <model>/assets/ and nothing else */
	char dir[] = "/tmp/ge-exec-state-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	mkdir(path_in(dir, "assets"), 0755);
	write_file(path_in(dir, "assets/vocab.txt"), "foo\nbar\r\nbaz\n", 14);
	char outside[600];
	snprintf(outside, sizeof outside, "%s-outside.txt", dir);
	write_file(path_in(dir, "outside.txt"), "x\n", 2);
	write_file(outside, "x\n", 2);
	if (symlink(outside, path_in(dir, "assets/link.txt")))
		printf("Bail out! symlink\n");
	static const char sm[] =
		"saved_model_schema_version: 1 meta_graphs { meta_info_def { "
		"tags: \"serve\" } graph_def {\n"
		TABLE("t1") TABLE("t2") TABLE("t3") TABLE("t4")
		CS("f1", "", "string_val: \"/export/dir/assets/vocab.txt\"")
		CS("f2", "", "string_val: \"../outside.txt\"")
		CS("f3", "", "string_val: \"link.txt\"")
		CS("f4", "", "string_val: \"../../../../../../etc/passwd\"")
		FROM_FILE("i1", "t1", "f1") FROM_FILE("i2", "t2", "f2")
		FROM_FILE("i3", "t3", "f3") FROM_FILE("i4", "t4", "f4")
		CS("q", "dim { size: 4 }", "string_val: \"baz\" string_val: "
		   "\"bar\" string_val: \"foo\" string_val: \"x\"")
		CONST("def", "DT_INT64", "", "int64_val: -1")
		FIND("find", "t1", "q", "def")
		"} }\n";
	write_file(path_in(dir, "saved_model.pbtxt"), sm, strlen(sm));
	ge_error err = {0};
	g = NULL;
	if (ge_load(dir, NULL, &g, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	ge_xopts o = GE_XOPTS_INIT;
	if (ge_xsession_open(g, &o, &s, &err)) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	const char *f1 = "^i1";
	run(s, &f1, 1, out);
	run(s, &ff, 1, out);
	IS(out[0], "int64[4] 2,1,0,-1", "InitializeTableFromTextFileV2: "
	   "whole lines to line numbers, the exported path's last component "
	   "found in assets/ (a CR before the newline dropped)");
	const char *bad[] = {"^i2", "^i3", "^i4"};
	const char *why[] = {"'../outside.txt' names no file of assets/",
			     "a symlink leading out of the model",
			     "'../../../../../../etc/passwd'"};
	for (int i = 0; i < 3; i++) {
		run(s, &bad[i], 1, out);
		ok(!strncmp(out[0], "error: ", 7), "refused: %s", why[i]);
		if (strncmp(out[0], "error: ", 7))
			tap_diag("%s", out[0]);
	}
	ge_xsession_close(s);
	ge_graph_free(g);
	unlink(path_in(dir, "assets/link.txt"));
	unlink(outside);
	rm_dir(path_in(dir, "assets"));
	rm_dir(dir);
}

/* ------------------------------------------------------------ examples */

/* A tf.Example with float feature x (nx values, or none when x is NULL),
 * int64 feature "tags" and bytes feature "kind" (when given), packed
 * into s. */
static void example(ge_xstr *s, const float *x, size_t nx, int x_as_int,
		    const int64_t *tags, size_t nt, const char *kind)
{
	Tensorflow__FloatList fl = TENSORFLOW__FLOAT_LIST__INIT;
	Tensorflow__Int64List il = TENSORFLOW__INT64_LIST__INIT;
	Tensorflow__Int64List xl = TENSORFLOW__INT64_LIST__INIT;
	Tensorflow__BytesList bl = TENSORFLOW__BYTES_LIST__INIT;
	Tensorflow__Feature fx = TENSORFLOW__FEATURE__INIT;
	Tensorflow__Feature ft = TENSORFLOW__FEATURE__INIT;
	Tensorflow__Feature fk = TENSORFLOW__FEATURE__INIT;
	Tensorflow__Features__FeatureEntry ex =
		TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
	Tensorflow__Features__FeatureEntry et =
		TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
	Tensorflow__Features__FeatureEntry ek =
		TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
	Tensorflow__Features__FeatureEntry *ents[3];
	Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
	Tensorflow__Example e = TENSORFLOW__EXAMPLE__INIT;
	int64_t xi[8];
	ProtobufCBinaryData kb;
	size_t n = 0;
	if (x && !x_as_int) {
		fl.n_value = nx;
		fl.value = (float *)x;
		fx.kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
		fx.float_list = &fl;
	} else if (x) {
		for (size_t i = 0; i < nx; i++)
			xi[i] = (int64_t)x[i];
		xl.n_value = nx;
		xl.value = xi;
		fx.kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
		fx.int64_list = &xl;
	}
	if (x) {
		ex.key = "x";
		ex.value = &fx;
		ents[n++] = &ex;
	}
	if (tags) {
		il.n_value = nt;
		il.value = (int64_t *)tags;
		ft.kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
		ft.int64_list = &il;
		et.key = "tags";
		et.value = &ft;
		ents[n++] = &et;
	}
	if (kind) {
		kb.len = strlen(kind);
		kb.data = (uint8_t *)kind;
		bl.n_value = 1;
		bl.value = &kb;
		fk.kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
		fk.bytes_list = &bl;
		ek.key = "kind";
		ek.value = &fk;
		ents[n++] = &ek;
	}
	fs.n_feature = n;
	fs.feature = ents;
	e.features = &fs;
	s->len = tensorflow__example__get_packed_size(&e);
	s->p = malloc(s->len + 1);
	tensorflow__example__pack(&e, (uint8_t *)s->p);
	s->p[s->len] = 0;
}

#define PARSE_COMMON \
	NODE("ser", "Placeholder", "", ATTR_T("dtype", "DT_STRING")) \
	CS("names", "dim { size: 0 }", "") \
	CONST("def_x", "DT_FLOAT", "dim { size: 0 }", "") \
	CS("def_kind", "dim { size: 1 }", "string_val: \"none\"")
#define PARSE_ATTRS \
	"attr { key: \"Tdense\" value { list { type: DT_FLOAT " \
	"type: DT_STRING } } } " \
	"attr { key: \"dense_shapes\" value { list { shape { dim { size: 2 } }" \
	" shape { dim { size: 1 } } } } } "
#define PARSE_V1 PARSE_COMMON \
	CS("sk0", "", "string_val: \"tags\"") CS("dk0", "", "string_val: \"x\"") \
	CS("dk1", "", "string_val: \"kind\"") \
	NODE("pe", "ParseExample", IN("ser") IN("names") IN("sk0") IN("dk0") \
	     IN("dk1") IN("def_x") IN("def_kind"), ATTR_I("Nsparse", 1) \
	     ATTR_I("Ndense", 2) PARSE_ATTRS \
	     "attr { key: \"sparse_types\" value { list { type: DT_INT64 } } } ")
#define PARSE_V2 PARSE_COMMON \
	CS("sk", "dim { size: 0 }", "") \
	CS("dk", "dim { size: 2 }", "string_val: \"x\" string_val: \"kind\"") \
	CS("rk", "dim { size: 1 }", "string_val: \"tags\"") \
	NODE("pe", "ParseExampleV2", IN("ser") IN("names") IN("sk") IN("dk") \
	     IN("rk") IN("def_x") IN("def_kind"), ATTR_I("num_sparse", 0) \
	     PARSE_ATTRS \
	     "attr { key: \"sparse_types\" value { list { } } } " \
	     "attr { key: \"ragged_value_types\" value { list { " \
	     "type: DT_INT64 } } } " \
	     "attr { key: \"ragged_split_types\" value { list { " \
	     "type: DT_INT64 } } } ")

/* Runs fetches of txt with the records fed to "ser" (a vector, or a
 * scalar when scalar). */
static void run_records(const char *txt, ge_xstr *rec, int64_t n, int scalar,
			const char *const *fetch, int nf, char out[][1200])
{
	ge_graph *g;
	ge_error err = {0};
	ge_xsession *s = open_text(txt, &g, 0);
	ge_xt *t = ge_xt_new(DT_STRING, scalar ? 0 : 1, &n, NULL, "feed",
			     &err);
	memcpy(t->data, rec, (size_t)n * sizeof *rec);
	ge_xfeed f = {"ser", t};
	ge_xt *y[8] = {0};
	if (ge_xsession_run(s, &f, 1, fetch, nf, y, &err)) {
		snprintf(out[0], 1200, "error: %s", err.msg);
	} else {
		for (int i = 0; i < nf; i++) {
			kt_format(y[i], out[i], 1200);
			ge_xt_unref(y[i]);
		}
	}
	ge_xt_unref(t); /* frees the records */
	ge_xsession_close(s);
	ge_graph_free(g);
}

static void test_parse(void)
{
	char out[8][1200];
	ge_xstr rec[2];
	const float x0[2] = {1, 2}, x1[2] = {3, 4};
	const int64_t tags[3] = {7, 8, 9};
	const char *f1[] = {"pe:3", "pe:4", "pe:0", "pe:1", "pe:2"};

	example(&rec[0], x0, 2, 0, tags, 3, "cat");
	example(&rec[1], x1, 2, 0, NULL, 0, NULL);
	run_records(PARSE_V1, rec, 2, 0, f1, 5, out);
	IS(out[0], "float32[2,2] 1,2,3,4", "ParseExample: a dense float "
	   "feature of shape [2]");
	IS(out[1], "string[2,1] cat,none", "a dense string feature and its "
	   "default");
	IS(out[2], "int64[3,2] 0,0,0,1,0,2", "a sparse feature's indices");
	IS(out[3], "int64[3] 7,8,9", "its values");
	IS(out[4], "int64[2] 2,3", "its dense shape");

	const char *f2[] = {"pe:0", "pe:1", "pe:2", "pe:3"};
	example(&rec[0], x0, 2, 0, tags, 3, "cat");
	example(&rec[1], x1, 2, 0, NULL, 0, NULL);
	run_records(PARSE_V2, rec, 2, 0, f2, 4, out);
	IS(out[0], "float32[2,2] 1,2,3,4", "ParseExampleV2: dense");
	IS(out[1], "string[2,1] cat,none", "dense with a default");
	IS(out[2], "int64[3] 7,8,9", "a ragged feature's values");
	IS(out[3], "int64[3] 0,3,3", "and row splits");

	/* V2 with "tags" sparse rather than ragged */
	static const char v2sparse[] = PARSE_COMMON
		CS("sk", "dim { size: 1 }", "string_val: \"tags\"")
		CS("dk", "dim { size: 2 }",
		   "string_val: \"x\" string_val: \"kind\"")
		CS("rk", "dim { size: 0 }", "")
		NODE("pe", "ParseExampleV2", IN("ser") IN("names") IN("sk")
		     IN("dk") IN("rk") IN("def_x") IN("def_kind"),
		     ATTR_I("num_sparse", 1) PARSE_ATTRS
		     "attr { key: \"sparse_types\" value { list { "
		     "type: DT_INT64 } } } "
		     "attr { key: \"ragged_value_types\" value { list { } } } "
		     "attr { key: \"ragged_split_types\" value { list { } } } ");
	const char *f4[] = {"pe:0", "pe:1", "pe:2", "pe:3"};
	example(&rec[0], x0, 2, 0, NULL, 0, NULL);
	example(&rec[1], x1, 2, 0, tags, 2, NULL);
	run_records(v2sparse, rec, 2, 0, f4, 4, out);
	IS(out[0], "int64[2,2] 1,0,1,1", "ParseExampleV2: sparse indices");
	IS(out[1], "int64[2] 7,8", "sparse values");
	IS(out[2], "int64[2] 2,2", "sparse dense shape");
	IS(out[3], "float32[2,2] 1,2,3,4", "and dense beside them");
	example(&rec[0], x1, 2, 0, tags, 3, NULL);
	run_records(v2sparse, rec, 1, 1, f4, 4, out);
	IS(out[0], "int64[3,1] 0,1,2", "a scalar record: sparse indices "
	   "without the batch column");
	IS(out[2], "int64[1] 3", "and a dense shape without the batch");
	IS(out[3], "float32[2] 3,4", "dense without the batch dimension");

	example(&rec[0], x1, 2, 0, NULL, 0, "dog");
	run_records(PARSE_V2, rec, 1, 1, f2, 2, out);
	ok(strstr(out[0], "ragged features of a scalar record") != NULL,
	   "V2 with a scalar record and a ragged key: refused");
	const char *f3[] = {"pe:3", "pe:4"};
	example(&rec[0], x1, 2, 0, NULL, 0, "dog");
	run_records(PARSE_V1, rec, 1, 0, f3, 2, out);
	IS(out[0], "float32[1,2] 3,4", "one record");

	example(&rec[0], NULL, 0, 0, tags, 1, NULL);
	run_records(PARSE_V1, rec, 1, 0, f1, 1, out);
	ok(strstr(out[0], "pe (ParseExample): record 0 lacks feature 'x' "
		  "(float32), which has no default") != NULL,
	   "a required feature missing: error naming the op and the key");
	example(&rec[0], x0, 2, 1, NULL, 0, NULL);
	run_records(PARSE_V1, rec, 1, 0, f1, 1, out);
	ok(strstr(out[0], "record 0, feature 'x': not a list of float32")
	   != NULL, "a feature of the wrong type: error");
	example(&rec[0], x0, 1, 0, NULL, 0, NULL);
	run_records(PARSE_V1, rec, 1, 0, f1, 1, out);
	ok(strstr(out[0], "record 0, feature 'x': 1 values for a shape of 2")
	   != NULL, "a dense feature of the wrong size: error");
	rec[0].p = malloc(4);
	memcpy(rec[0].p, "\x0a\xff\xff", 4);
	rec[0].len = 3;
	run_records(PARSE_V1, rec, 1, 0, f1, 1, out);
	ok(strstr(out[0], "record 0 is not a tf.Example") != NULL,
	   "bytes that are not an Example: error");
}

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_lists();
	test_arrays();
	test_philox();
	test_random_ops();
	test_tables();
	test_parse();
	/* a kernel alone, without a session: every run is a first run */
	IS(kt_eval_text(CI("sh", 2) NODE("r", "RandomUniformInt",
		IN("shv") IN("lo") IN("hi"), ATTR_I("seed", 1)
		ATTR_T("Tout", "DT_INT32") ATTR_T("T", "DT_INT32"))
		CONST("shv", "DT_INT32", "dim { size: 1 }", "int_val: 0")
		CI("lo", 0) CI("hi", 5), "r"), "int32[0]",
	   "an empty RandomUniformInt draws nothing");
	return tap_done();
}
