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

int main(void)
{
	ge_xbudget_init(&kt_budget);
	test_lists();
	test_arrays();
	test_philox();
	test_random_ops();
	/* a kernel alone, without a session: every run is a first run */
	IS(kt_eval_text(CI("sh", 2) NODE("r", "RandomUniformInt",
		IN("shv") IN("lo") IN("hi"), ATTR_I("seed", 1)
		ATTR_T("Tout", "DT_INT32") ATTR_T("T", "DT_INT32"))
		CONST("shv", "DT_INT32", "dim { size: 1 }", "int_val: 0")
		CI("lo", 0) CI("hi", 5), "r"), "int32[0]",
	   "an empty RandomUniformInt draws nothing");
	return tap_done();
}
