/*
 * t/npy.c: .npy files in and out (lib/exec/npy.c) and the command line's
 * values (lib/exec/xvalue.c): versions, byte orders, dtypes, the files
 * refused, literals, shapes and seeded data.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"

#include "exec/npy.h"

enum { F32 = 1, F64 = 2, I32 = 3, U8 = 4, STR = 7, C64 = 8, I64 = 9,
       BOOL = 10, BF16 = 14, U16 = 17, F16 = 19 };

/* A .npy file: magic, version, header padded to 64, then data. */
static size_t mk(uint8_t *buf, int major, const char *header,
		 const void *data, size_t n)
{
	size_t pre = major == 1 ? 10 : 12, h = strlen(header);
	size_t total = (pre + h + 1 + 63) / 64 * 64;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (uint8_t)major;
	buf[7] = 0;
	size_t hl = total - pre;
	for (size_t i = 0; i < pre - 8; i++)
		buf[8 + i] = (uint8_t)(hl >> (8 * i));
	memcpy(buf + pre, header, h);
	memset(buf + pre + h, ' ', hl - h - 1);
	buf[total - 1] = '\n';
	if (n)
		memcpy(buf + total, data, n);
	return total + n;
}

static ge_xt *parse(const uint8_t *b, size_t n, ge_error *err)
{
	ge_xt *t = NULL;
	memset(err, 0, sizeof *err);
	ge_npy_parse(b, n, "t.npy", NULL, &t, err);
	return t;
}

static void round_trip(void)
{
	ge_error err;
	int64_t dims[2] = {2, 3};
	ge_xt *t = ge_xt_new(F32, 2, dims, NULL, "t", &err);
	for (int k = 0; k < 6; k++)
		((float *)t->data)[k] = (float)k * 0.5f - 1;
	ge_buf b = GE_BUF_INIT;
	ok(ge_npy_encode(t, &b, &err) == GE_OK, "encode float32[2,3]");
	ok(b.data[6] == 1 && (10 + (b.data[8] | b.data[9] << 8)) % 64 == 0,
	   "version 1.0, header padded to 64");
	ok(strstr((char *)b.data + 10, "'descr': '<f4'") &&
		   strstr((char *)b.data + 10, "'shape': (2, 3)"),
	   "header: %.60s", (char *)b.data + 10);
	ge_xt *u = parse(b.data, b.len, &err);
	ok(u && u->dtype == F32 && u->rank == 2 && u->dims[1] == 3 &&
		   !memcmp(u->data, t->data, 24),
	   "read back the same");
	ge_xt_unref(u);
	ge_buf_free(&b);
	ge_xt_unref(t);

	int64_t one = 3;
	t = ge_xt_new(BF16, 1, &one, NULL, "t", &err);
	((uint16_t *)t->data)[0] = 0x3fc0; /* 1.5 */
	ge_npy_encode(t, &b, &err);
	u = parse(b.data, b.len, &err);
	ok(u && u->dtype == F32 && ((float *)u->data)[0] == 1.5f &&
		   strstr((char *)b.data + 10, "'shape': (3,)"),
	   "bfloat16 written as float32, shape (3,)");
	ge_xt_unref(u);
	ge_xt_unref(t);
	ge_buf_free(&b);

	t = ge_xt_new(STR, 1, (int64_t[]){2}, NULL, "t", &err);
	ge_xstr *s = t->data;
	s[0].p = strdup("abc");
	s[0].len = 3;
	ge_npy_encode(t, &b, &err);
	u = parse(b.data, b.len, &err);
	ok(u && u->dtype == STR && ((ge_xstr *)u->data)[0].len == 3 &&
		   !strcmp(((ge_xstr *)u->data)[0].p, "abc") &&
		   ((ge_xstr *)u->data)[1].len == 0,
	   "strings as |S3 and back");
	ge_xt_unref(u);
	ge_xt_unref(t);
	ge_buf_free(&b);
}

static void versions_and_dtypes(void)
{
	uint8_t buf[512];
	ge_error err;
	const uint8_t be[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
	size_t n = mk(buf, 2, "{'descr': '>i4', 'fortran_order': False, "
			      "'shape': (2,), }", be, 8);
	ge_xt *t = parse(buf, n, &err);
	ok(t && t->dtype == I32 && ((int32_t *)t->data)[0] == 1 &&
		   ((int32_t *)t->data)[1] == -2,
	   "version 2.0, big-endian int32: %s", err.msg);
	ge_xt_unref(t);
	const double d[2] = {0.25, -3};
	n = mk(buf, 3, "{\"descr\": \"<f8\", \"shape\": (1, 2), "
		       "\"fortran_order\": False}", d, 16);
	t = parse(buf, n, &err);
	ok(t && t->dtype == F64 && t->rank == 2 &&
		   ((double *)t->data)[1] == -3,
	   "version 3.0, float64, keys in another order: %s", err.msg);
	ge_xt_unref(t);
	const uint8_t bools[3] = {0, 1, 2};
	n = mk(buf, 1, "{'descr': '|b1', 'fortran_order': False, "
		       "'shape': (3,), }", bools, 3);
	t = parse(buf, n, &err);
	ok(t && t->dtype == BOOL && ((uint8_t *)t->data)[2] == 1,
	   "bool");
	ge_xt_unref(t);
	const uint16_t h = 0x3c00; /* 1.0 */
	n = mk(buf, 1, "{'descr': '<f2', 'fortran_order': False, "
		       "'shape': (), }", &h, 2);
	t = parse(buf, n, &err);
	ok(t && t->dtype == F16 && t->rank == 0 && ge_xt_get_double(t, 0) == 1,
	   "float16 scalar");
	ge_xt_unref(t);
	const uint8_t be16[2] = {0x01, 0x02};
	n = mk(buf, 1, "{'descr': '>u2', 'fortran_order': False, "
		       "'shape': (1,), }", be16, 2);
	t = parse(buf, n, &err);
	ok(t && t->dtype == U16 && ((uint16_t *)t->data)[0] == 0x0102,
	   "big-endian uint16");
	ge_xt_unref(t);
	const float c[2] = {1, 2};
	n = mk(buf, 1, "{'descr': '<c8', 'fortran_order': False, "
		       "'shape': (1,), }", c, 8);
	t = parse(buf, n, &err);
	ok(t && t->dtype == C64 && ((float *)t->data)[1] == 2, "complex64");
	ge_xt_unref(t);
	n = mk(buf, 1, "{'descr': '<i8', 'fortran_order': False, "
		       "'shape': (0, 5), }", NULL, 0);
	t = parse(buf, n, &err);
	ok(t && t->dtype == I64 && t->n == 0, "an empty int64[0,5]");
	ge_xt_unref(t);
}

static void refuse(const char *what, const uint8_t *b, size_t n,
		   const char *want)
{
	ge_error err;
	ge_xt *t = parse(b, n, &err);
	ok(!t && err.code == GE_EFORMAT && strstr(err.msg, "t.npy") &&
		   strstr(err.msg, want),
	   "refused: %s (%s)", what, err.msg);
	ge_xt_unref(t);
}

static void refused(void)
{
	uint8_t buf[512];
	const float f[4] = {1, 2, 3, 4};
	size_t n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': True, "
			      "'shape': (2, 2), }", f, 16);
	refuse("Fortran order", buf, n, "Fortran");
	n = mk(buf, 1, "{'descr': '|O', 'fortran_order': False, "
		       "'shape': (2,), }", f, 16);
	refuse("object array", buf, n, "object");
	n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		       "'shape': (5,), }", f, 16);
	refuse("truncated data", buf, n, "truncated");
	n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		       "'shape': (3,), }", f, 16);
	refuse("data too long", buf, n, "too long");
	n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		       "'shape': (4,), }", f, 16);
	buf[8] = 0xff, buf[9] = 0xff;
	refuse("header longer than the file", buf, n, "header");
	n = mk(buf, 2, "{'descr': '<f4', 'fortran_order': False, "
		       "'shape': (4,), }", f, 16);
	buf[10] = 0x10; /* a 1 MiB header */
	refuse("absurd header length", buf, n, "header of");
	n = mk(buf, 1, "['descr', '<f4']", f, 16);
	refuse("not a dict", buf, n, "not a");
	n = mk(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		       "'shape': (99999999999, 99999999999, 9999999999), }",
	       f, 16);
	refuse("a size that overflows", buf, n, "");
	refuse("not .npy", (const uint8_t *)"hello, world", 12, "not a .npy");
	n = mk(buf, 7, "{}", NULL, 0);
	refuse("version 7", buf, n, "version");
}

static ge_xt *val(const char *text, int dtype, int rank, const int64_t *dims,
		  ge_error *err)
{
	ge_xinput_info in;
	memset(&in, 0, sizeof in);
	in.name = "x";
	in.dtype = dtype;
	in.rank = rank;
	for (int i = 0; i < rank; i++)
		in.dims[i] = dims[i];
	in.unknown_dim = 1;
	in.seed = 7;
	ge_xt *t = NULL;
	memset(err, 0, sizeof *err);
	ge_xvalue_parse(text, &in, NULL, &t, err);
	return t;
}

static void values(void)
{
	ge_error err;
	int64_t d3[1] = {3}, dq[1] = {-1};
	ge_xt *t = val("[1, 2, 5]", F32, 1, dq, &err);
	ok(t && t->dtype == F32 && t->n == 3 && ((float *)t->data)[2] == 5,
	   "[1,2,5] into float32[?]: %s", err.msg);
	ge_xt_unref(t);
	t = val("3.5", 0, -1, NULL, &err);
	ok(t && t->dtype == F32 && t->rank == 0 &&
		   ((float *)t->data)[0] == 3.5f,
	   "3.5 is a float32 scalar");
	ge_xt_unref(t);
	t = val("[[1,2],[3,4]]", 0, -1, NULL, &err);
	ok(t && t->dtype == I32 && t->rank == 2 && t->dims[0] == 2 &&
		   ((int32_t *)t->data)[3] == 4,
	   "[[1,2],[3,4]] is int32[2,2]");
	ge_xt_unref(t);
	t = val("[true, false]", 0, -1, NULL, &err);
	ok(t && t->dtype == BOOL && ((uint8_t *)t->data)[0] == 1, "bools");
	ge_xt_unref(t);
	t = val("['a', \"bc\"]", STR, 1, dq, &err);
	ok(t && t->dtype == STR && ((ge_xstr *)t->data)[1].len == 2,
	   "strings: %s", err.msg);
	ge_xt_unref(t);
	t = val("2", F32, 1, d3, &err);
	ok(t && t->n == 3 && ((float *)t->data)[2] == 2,
	   "a scalar fills float32[3]");
	ge_xt_unref(t);
	t = val("[1,[2]]", 0, -1, NULL, &err);
	ok(!t && strstr(err.msg, "rectangular"), "ragged: %s", err.msg);
	t = val("[[1],[2,3]]", 0, -1, NULL, &err);
	ok(!t && strstr(err.msg, "rectangular"), "ragged: %s", err.msg);
	t = val("[1,2]", F32, 1, d3, &err);
	ok(!t && strstr(err.msg, "input 'x'") && strstr(err.msg, "[3]"),
	   "wrong shape: %s", err.msg);
	t = val("[1.5]", I32, 1, dq, &err);
	ok(!t && strstr(err.msg, "fraction"), "a fraction into int32: %s",
	   err.msg);
	t = val("[300]", U8, 1, dq, &err);
	ok(!t && strstr(err.msg, "range"), "300 into uint8: %s", err.msg);
	t = val("[1, 2", F32, 1, dq, &err);
	ok(!t && strstr(err.msg, "expected"), "unclosed: %s", err.msg);
	t = val("abc", F32, 1, dq, &err);
	ok(!t && strstr(err.msg, "not a number"), "a word: %s", err.msg);
}

static void seeded(void)
{
	ge_error err;
	int64_t d[4] = {1, -1, -1, 3};
	ge_xt *a = val("2x3:int32:-2..2", 0, -1, NULL, &err);
	ge_xt *b = val("2x3:int32:-2..2", 0, -1, NULL, &err);
	int inrange = a && a->dtype == I32 && a->n == 6;
	for (int k = 0; inrange && k < 6; k++)
		inrange = ((int32_t *)a->data)[k] >= -2 &&
			  ((int32_t *)a->data)[k] <= 2;
	ok(inrange, "2x3:int32:-2..2 is int32[2,3] in [-2, 2]: %s", err.msg);
	ok(a && b && !memcmp(a->data, b->data, 24), "the same seed, the "
	   "same data");
	ge_xt_unref(a);
	ge_xt_unref(b);
	a = val("1x4x4x3", F32, 4, d, &err);
	int unit = a && a->n == 48;
	for (int k = 0; unit && k < 48; k++)
		unit = ((float *)a->data)[k] >= 0 && ((float *)a->data)[k] < 1;
	ok(unit, "1x4x4x3 is float32 in [0, 1): %s", err.msg);
	ge_xt_unref(a);
	a = val("4:", F32, -1, NULL, &err);
	ok(a && a->rank == 1 && a->dims[0] == 4, "4: is the shape [4]");
	ge_xt_unref(a);
	a = val(":float64", 0, -1, NULL, &err);
	ok(a && a->rank == 0 && a->dtype == F64, ":float64 is a scalar");
	ge_xt_unref(a);
	a = val("2x2:int32", F32, -1, NULL, &err);
	ok(!a && strstr(err.msg, "int32") && strstr(err.msg, "float32"),
	   "a dtype the input does not take: %s", err.msg);
	a = val("2x2:int99", F32, -1, NULL, &err);
	ok(!a && strstr(err.msg, "unknown dtype"), "%s", err.msg);
	a = val("2x2", 20, -1, NULL, &err);
	ok(!a && strstr(err.msg, "a resource input cannot be given a value"),
	   "no seeded resource handles: %s", err.msg);
	a = val("[1,2]", 21, -1, NULL, &err);
	ok(!a && strstr(err.msg, "a variant input"), "nor literal variants");
	ge_xinput_info rin;
	memset(&rin, 0, sizeof rin);
	rin.name = "h";
	rin.dtype = 20;
	rin.rank = -1;
	ge_xt *rt = NULL;
	ok(ge_xvalue_seeded(&rin, NULL, &rt, &err) != GE_OK && !rt,
	   "an input not given that is a resource: an error, not garbage");

	ge_xinput_info in;
	memset(&in, 0, sizeof in);
	in.name = "img";
	in.dtype = F32;
	in.rank = 4;
	memcpy(in.dims, d, sizeof d);
	in.unknown_dim = 5;
	ge_xt *s = NULL;
	ok(ge_xvalue_seeded(&in, NULL, &s, &err) == GE_OK && s->dims[1] == 5 &&
		   s->dims[0] == 1 && s->n == 75,
	   "seeded data of [1,?,?,3] with unknown dims 5");
	ge_xt_unref(s);

	ge_xrand r;
	ge_xrand_init(&r, 0, "");
	uint64_t v = ge_xrand_next(&r);
	ok(v == 0xc3817c016ba4ff30ull, "the generator is fixed: %016llx",
	   (unsigned long long)v);
	ge_xrand_init(&r, 1, "x");
	uint64_t x1 = ge_xrand_next(&r);
	ge_xrand_init(&r, 1, "y");
	ok(x1 != ge_xrand_next(&r), "another name, other data");
}

int main(void)
{
	round_trip();
	versions_and_dtypes();
	refused();
	values();
	seeded();
	return tap_done();
}
