/*
 * tensor.c: dtypes, TensorProto elements, the TensorProto encoder and the
 * small float formats (see tensor.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/tensor.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/types.pb-c.h"

/* ---------------------------------------------------------------- dtypes */

static const struct {
	int v;
	const char *name;
	size_t size;
} dtypes[] = {
	{1, "float32", 4},   {2, "float64", 8},   {3, "int32", 4},
	{4, "uint8", 1},     {5, "int16", 2},     {6, "int8", 1},
	{7, "string", 0},    {8, "complex64", 8}, {9, "int64", 8},
	{10, "bool", 1},     {11, "qint8", 1},    {12, "quint8", 1},
	{13, "qint32", 4},   {14, "bfloat16", 2}, {15, "qint16", 2},
	{16, "quint16", 2},  {17, "uint16", 2},   {18, "complex128", 16},
	{19, "float16", 2},  {20, "resource", 0}, {21, "variant", 0},
	{22, "uint32", 4},   {23, "uint64", 8},   {24, "float8_e5m2", 1},
	{25, "float8_e4m3fn", 1}, {26, "float8_e4m3fnuz", 1},
	{27, "float8_e4m3b11fnuz", 1}, {28, "float8_e5m2fnuz", 1},
	{29, "int4", 0},     {30, "uint4", 0},    {31, "int2", 0},
	{32, "uint2", 0},
};

const char *ge_dtype_name(int dtype)
{
	int ref = dtype > 100;
	int base = ref ? dtype - 100 : dtype;
	static char refnames[sizeof dtypes / sizeof dtypes[0]][32];
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].v == base) {
			if (!ref)
				return dtypes[i].name;
			if (!refnames[i][0])
				snprintf(refnames[i], sizeof refnames[i],
					 "%s_ref", dtypes[i].name);
			return refnames[i];
		}
	return NULL;
}

int ge_dtype_from_name(const char *name)
{
	static const struct {
		const char *alias;
		int v;
	} aliases[] = {{"float", 1}, {"double", 2}, {"half", 19}};
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (!strcmp(name, aliases[i].alias))
			return aliases[i].v;
	size_t n = strlen(name);
	int ref = n > 4 && !strcmp(name + n - 4, "_ref");
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
		size_t k = strlen(dtypes[i].name);
		if (ref ? (k == n - 4 && !strncmp(name, dtypes[i].name, k))
			: !strcmp(name, dtypes[i].name))
			return dtypes[i].v + (ref ? 100 : 0);
	}
	/* TensorFlow's enum spelling, DT_FLOAT and friends */
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(
		&tensorflow__data_type__descriptor, name);
	return ev ? ev->value : -1;
}

size_t ge_dtype_size(int dtype)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].v == dtype)
			return dtypes[i].size;
	return 0;
}

static const ge_dtinfo dtinfos[] = {
	{1, GE_TS_FLOAT, 4, 32, 1},   {2, GE_TS_DOUBLE, 8, 64, 1},
	{3, GE_TS_INT, 4, 32, 1},     {4, GE_TS_INT, 1, 8, 0},
	{5, GE_TS_INT, 2, 16, 1},     {6, GE_TS_INT, 1, 8, 1},
	{7, GE_TS_STRING, 0, 0, 0},   {8, GE_TS_C64, 8, 64, 1},
	{9, GE_TS_INT64, 8, 64, 1},   {10, GE_TS_BOOL, 1, 8, 0},
	{11, GE_TS_INT, 1, 8, 1},     {12, GE_TS_INT, 1, 8, 0},
	{13, GE_TS_INT, 4, 32, 1},    {14, GE_TS_BF16, 2, 16, 1},
	{15, GE_TS_INT, 2, 16, 1},    {16, GE_TS_INT, 2, 16, 0},
	{17, GE_TS_INT, 2, 16, 0},    {18, GE_TS_C128, 16, 128, 1},
	{19, GE_TS_HALF, 2, 16, 1},   {22, GE_TS_UINT32, 4, 32, 0},
	{23, GE_TS_UINT64, 8, 64, 0}, {24, GE_TS_F8E5M2, 1, 8, 1},
	{25, GE_TS_F8E4M3FN, 1, 8, 1},
	/* sub-byte integers: int_val only (no content layout) */
	{29, GE_TS_INT, 0, 4, 1},     {30, GE_TS_INT, 0, 4, 0},
	{31, GE_TS_INT, 0, 2, 1},     {32, GE_TS_INT, 0, 2, 0},
};

const ge_dtinfo *ge_dtype_info(int dt)
{
	if (dt > 100)
		dt -= 100;
	for (size_t i = 0; i < sizeof dtinfos / sizeof dtinfos[0]; i++)
		if (dtinfos[i].dtype == dt)
			return &dtinfos[i];
	return NULL;
}

void ge_dtype_int_range(const ge_dtinfo *di, int64_t *lo, int64_t *hi)
{
	if (di->bits >= 64) {
		*lo = INT64_MIN;
		*hi = INT64_MAX;
		return;
	}
	*lo = di->sign ? -((int64_t)1 << (di->bits - 1)) : 0;
	*hi = di->sign ? ((int64_t)1 << (di->bits - 1)) - 1
		       : ((int64_t)1 << di->bits) - 1;
}

/* ---------------------------------------------------------------- numbers */

static uint64_t rd_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int k = n - 1; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

static void wr_le(ge_buf *b, uint64_t v, int n)
{
	uint8_t x[8];
	for (int k = 0; k < n; k++)
		x[k] = (uint8_t)(v >> (8 * k));
	ge_buf_add(b, x, (size_t)n);
}

static float f32_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t bits_of_f32(double d)
{
	float f = (float)d;
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static double f64_of(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static uint64_t bits_of_f64(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

/* An IEEE-style small float (float8 e5m2: 5/2 bits) to double; every such
 * value is exact in a double. */
static double mini_to_double(uint32_t bits, int ebits, int mbits)
{
	uint32_t man = bits & ((1u << mbits) - 1);
	uint32_t ex = (bits >> mbits) & ((1u << ebits) - 1);
	int bias = (1 << (ebits - 1)) - 1;
	double v;
	if (ex == (1u << ebits) - 1)
		v = man ? NAN : INFINITY;
	else if (ex == 0)
		v = ldexp((double)man, 1 - bias - mbits);
	else
		v = ldexp((double)(man | (1u << mbits)), (int)ex - bias - mbits);
	return (bits >> (ebits + mbits)) & 1 ? -v : v;
}

/* Rounds a double to the nearest IEEE-style small float, ties to even,
 * overflowing to infinity.  Rounding once from the double avoids the
 * double rounding of going through float. */
static uint32_t double_to_mini(double x, int ebits, int mbits)
{
	uint32_t sign = signbit(x) ? 1u << (ebits + mbits) : 0;
	uint32_t eall = (1u << ebits) - 1;
	int bias = (int)(eall >> 1);
	if (isnan(x))
		return sign | eall << mbits | 1u << (mbits - 1);
	double a = fabs(x);
	if (isinf(a))
		return sign | eall << mbits;
	if (a == 0)
		return sign;
	int e;
	frexp(a, &e);
	int E = e - 1; /* a = 1.m * 2^E */
	if (E < 1 - bias) {
		/* In units of the smallest subnormal; rounding up to the
		 * smallest normal gives its encoding too. */
		double q = nearbyint(ldexp(a, bias - 1 + mbits));
		return sign | (uint32_t)q;
	}
	double q = nearbyint(ldexp(a, mbits - E));
	if (q >= ldexp(1, mbits + 1)) {
		q /= 2;
		E++;
	}
	if (E > bias)
		return sign | eall << mbits;
	return sign | (uint32_t)(E + bias) << mbits |
	       ((uint32_t)q - (1u << mbits));
}

float ge_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31;
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0) {
		/* zero or subnormal: m * 2^-24, exact in a float */
		float f = ldexpf((float)m, -24);
		return sign ? -f : f;
	}
	if (e == 31)
		return f32_of(sign | 0x7f800000u | m << 13);
	return f32_of(sign | (e + 112) << 23 | m << 13);
}

uint16_t ge_half_from_double(double x)
{
	return (uint16_t)double_to_mini(x, 5, 10);
}

float ge_bf16_to_float(uint16_t h)
{
	return f32_of((uint32_t)h << 16);
}

/* A NaN keeps the top of its payload, as truncating a float32 does. */
uint16_t ge_bf16_from_double(double x)
{
	if (isnan(x)) {
		uint64_t u = bits_of_f64(x);
		return (uint16_t)((u >> 48 & 0x8000) | 0x7fc0 | (u >> 45 & 0x7f));
	}
	return (uint16_t)double_to_mini(x, 8, 7);
}

double ge_f8e5m2_to_double(uint8_t b)
{
	return mini_to_double(b, 5, 2);
}

uint8_t ge_f8e5m2_from_double(double x)
{
	return (uint8_t)double_to_mini(x, 5, 2);
}

/* float8 e4m3fn: bias 7, no infinities, NaN only as S.1111.111. */
double ge_f8e4m3fn_to_double(uint8_t bits)
{
	uint32_t man = bits & 7, ex = (bits >> 3) & 15;
	double v;
	if (ex == 15 && man == 7)
		v = NAN;
	else if (ex == 0)
		v = ldexp((double)man, -9);
	else
		v = ldexp((double)(man | 8), (int)ex - 10);
	return bits & 0x80 ? -v : v;
}

/* ---------------------------------------------------------------- elements */

static void content_elem(const ge_dtinfo *di, const uint8_t *p, ge_elem *e)
{
	e->tag = 'n';
	switch (di->store) {
	case GE_TS_FLOAT:
		e->d = f32_of((uint32_t)rd_le(p, 4));
		break;
	case GE_TS_DOUBLE:
		e->d = f64_of(rd_le(p, 8));
		break;
	case GE_TS_HALF:
		e->d = ge_half_to_float((uint16_t)rd_le(p, 2));
		break;
	case GE_TS_BF16:
		e->d = ge_bf16_to_float((uint16_t)rd_le(p, 2));
		break;
	case GE_TS_F8E5M2:
		e->d = ge_f8e5m2_to_double(p[0]);
		break;
	case GE_TS_F8E4M3FN:
		e->d = ge_f8e4m3fn_to_double(p[0]);
		break;
	case GE_TS_C64:
		e->tag = 'c';
		e->d = f32_of((uint32_t)rd_le(p, 4));
		e->im = f32_of((uint32_t)rd_le(p + 4, 4));
		break;
	case GE_TS_C128:
		e->tag = 'c';
		e->d = f64_of(rd_le(p, 8));
		e->im = f64_of(rd_le(p + 8, 8));
		break;
	case GE_TS_BOOL:
		e->tag = 'b';
		e->i = p[0] != 0;
		break;
	default: {
		uint64_t v = rd_le(p, di->size);
		if (di->sign && di->size < 8 && (v >> (8 * di->size - 1)) & 1)
			v |= ~(uint64_t)0 << (8 * di->size);
		e->tag = 'i';
		e->i = (int64_t)v;
	}
	}
}

#define PICK(n) ((uint64_t)k < (uint64_t)(n) ? (size_t)k : (size_t)(n) - 1)

static void typed_elem(const struct Tensorflow__TensorProto *t,
		       const ge_dtinfo *di, int64_t k, ge_elem *e)
{
	switch (di->store) {
	case GE_TS_FLOAT:
		e->tag = 'n';
		if (t->n_float_val)
			e->d = t->float_val[PICK(t->n_float_val)];
		break;
	case GE_TS_DOUBLE:
		e->tag = 'n';
		if (t->n_double_val)
			e->d = t->double_val[PICK(t->n_double_val)];
		break;
	case GE_TS_HALF:
	case GE_TS_BF16:
		e->tag = 'n';
		if (t->n_half_val) {
			uint16_t b = (uint16_t)t->half_val[PICK(t->n_half_val)];
			e->d = di->store == GE_TS_HALF ? ge_half_to_float(b)
						       : ge_bf16_to_float(b);
		}
		break;
	case GE_TS_F8E5M2:
	case GE_TS_F8E4M3FN:
		e->tag = 'n';
		if (t->float8_val.len) {
			uint8_t b = t->float8_val.data[PICK(t->float8_val.len)];
			e->d = di->store == GE_TS_F8E5M2
				       ? ge_f8e5m2_to_double(b)
				       : ge_f8e4m3fn_to_double(b);
		}
		break;
	case GE_TS_INT:
		e->tag = 'i';
		if (t->n_int_val)
			e->i = t->int_val[PICK(t->n_int_val)];
		break;
	case GE_TS_INT64:
		e->tag = 'i';
		if (t->n_int64_val)
			e->i = t->int64_val[PICK(t->n_int64_val)];
		break;
	case GE_TS_UINT32:
		e->tag = 'i';
		if (t->n_uint32_val)
			e->i = t->uint32_val[PICK(t->n_uint32_val)];
		break;
	case GE_TS_UINT64:
		e->tag = 'i';
		if (t->n_uint64_val)
			e->i = (int64_t)t->uint64_val[PICK(t->n_uint64_val)];
		break;
	case GE_TS_BOOL:
		e->tag = 'b';
		if (t->n_bool_val)
			e->i = t->bool_val[PICK(t->n_bool_val)] != 0;
		break;
	case GE_TS_STRING:
		e->tag = 's';
		if (t->n_string_val) {
			const ProtobufCBinaryData *s =
				&t->string_val[PICK(t->n_string_val)];
			e->s = s->data ? s->data : (const uint8_t *)"";
			e->len = s->len;
		}
		break;
	case GE_TS_C64:
		e->tag = 'c';
		if (t->n_scomplex_val >= 2) {
			size_t j = PICK(t->n_scomplex_val / 2);
			e->d = t->scomplex_val[2 * j];
			e->im = t->scomplex_val[2 * j + 1];
		}
		break;
	case GE_TS_C128:
		e->tag = 'c';
		if (t->n_dcomplex_val >= 2) {
			size_t j = PICK(t->n_dcomplex_val / 2);
			e->d = t->dcomplex_val[2 * j];
			e->im = t->dcomplex_val[2 * j + 1];
		}
		break;
	}
}

#undef PICK

const char *ge_tensor_elem(const struct Tensorflow__TensorProto *t,
			   int64_t k, ge_elem *e)
{
	const ge_dtinfo *di = ge_dtype_info(t->dtype);
	memset(e, 0, sizeof *e);
	e->s = (const uint8_t *)"";
	if (!di)
		return "reading elements of this dtype is not supported";
	const ProtobufCBinaryData *c = &t->tensor_content;
	if (c->len > 0 && di->store != GE_TS_STRING) {
		if (di->size == 0)
			return "reading packed elements of this dtype is not "
			       "supported";
		if ((uint64_t)k >= c->len / (size_t)di->size)
			return "tensor_content holds fewer elements than its "
			       "shape";
		content_elem(di, c->data + (size_t)k * (size_t)di->size, e);
		return NULL;
	}
	typed_elem(t, di, k, e);
	return NULL;
}

int ge_elem_eq(const ge_elem *a, const ge_elem *b)
{
	if (a->tag != b->tag)
		return 0;
	switch (a->tag) {
	case 'n':
		return a->d == b->d;
	case 'c':
		return a->d == b->d && a->im == b->im;
	case 's':
		return a->len == b->len && !memcmp(a->s, b->s, a->len);
	default:
		return a->i == b->i;
	}
}

int ge_tensor_get_double(const struct Tensorflow__TensorProto *t, int64_t k,
			 double *out, ge_error *err)
{
	ge_elem e;
	const char *why = ge_tensor_elem(t, k, &e);
	if (why)
		return ge_err(err, GE_EINVAL, "element %lld: %s", (long long)k,
			      why);
	if (e.tag == 's')
		return ge_err(err, GE_EINVAL,
			      "element %lld: a string is not a number",
			      (long long)k);
	*out = e.tag == 'n' || e.tag == 'c' ? e.d : (double)e.i;
	return GE_OK;
}

int ge_tensor_get_int64(const struct Tensorflow__TensorProto *t, int64_t k,
			int64_t *out, ge_error *err)
{
	ge_elem e;
	const char *why = ge_tensor_elem(t, k, &e);
	if (why)
		return ge_err(err, GE_EINVAL, "element %lld: %s", (long long)k,
			      why);
	if (e.tag == 's')
		return ge_err(err, GE_EINVAL,
			      "element %lld: a string is not a number",
			      (long long)k);
	if (e.tag == 'i' || e.tag == 'b') {
		*out = e.i;
		return GE_OK;
	}
	/* -2^63 is exact in a double, 2^63 is the first value out of range */
	if (!(e.d >= -9223372036854775808.0 && e.d < 9223372036854775808.0))
		return ge_err(err, GE_EINVAL,
			      "element %lld: %g is not an int64",
			      (long long)k, e.d);
	*out = (int64_t)e.d;
	return GE_OK;
}

int64_t ge_tensor_stored_count(const struct Tensorflow__TensorProto *t)
{
	const ge_dtinfo *di = ge_dtype_info(t->dtype);
	if (!di)
		return 0;
	if (t->tensor_content.len && di->size && di->store != GE_TS_STRING)
		return (int64_t)(t->tensor_content.len / (size_t)di->size);
	switch (di->store) {
	case GE_TS_FLOAT:
		return (int64_t)t->n_float_val;
	case GE_TS_DOUBLE:
		return (int64_t)t->n_double_val;
	case GE_TS_HALF:
	case GE_TS_BF16:
		return (int64_t)t->n_half_val;
	case GE_TS_F8E5M2:
	case GE_TS_F8E4M3FN:
		return (int64_t)t->float8_val.len;
	case GE_TS_INT:
		return (int64_t)t->n_int_val;
	case GE_TS_INT64:
		return (int64_t)t->n_int64_val;
	case GE_TS_UINT32:
		return (int64_t)t->n_uint32_val;
	case GE_TS_UINT64:
		return (int64_t)t->n_uint64_val;
	case GE_TS_BOOL:
		return (int64_t)t->n_bool_val;
	case GE_TS_STRING:
		return (int64_t)t->n_string_val;
	case GE_TS_C64:
		return (int64_t)t->n_scomplex_val / 2;
	case GE_TS_C128:
		return (int64_t)t->n_dcomplex_val / 2;
	}
	return 0;
}

int64_t ge_tensor_count(const struct Tensorflow__TensorProto *t)
{
	const Tensorflow__TensorShapeProto *s = t->tensor_shape;
	if (!s)
		return 1;
	if (s->unknown_rank)
		return ge_tensor_stored_count(t);
	int64_t n = 1;
	for (size_t i = 0; i < s->n_dim; i++) {
		int64_t d = s->dim[i]->size;
		if (d < 0 || (d > 0 && n > INT64_MAX / d))
			return ge_tensor_stored_count(t);
		n *= d;
	}
	return n;
}

int ge_tensor_shape_eq(const struct Tensorflow__TensorShapeProto *a,
		       const struct Tensorflow__TensorShapeProto *b)
{
	size_t na = a ? a->n_dim : 0, nb = b ? b->n_dim : 0;
	int ua = a && a->unknown_rank, ub = b && b->unknown_rank;
	if (na != nb || ua != ub)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a->dim[i]->size != b->dim[i]->size)
			return 0;
	return 1;
}

/* ---------------------------------------------------------------- encoding */

/* The typed field of each storage class. */
static const uint32_t typed_fields[] = {
	[GE_TS_FLOAT] = 5,   [GE_TS_DOUBLE] = 6,  [GE_TS_HALF] = 13,
	[GE_TS_BF16] = 13,   [GE_TS_INT] = 7,     [GE_TS_INT64] = 10,
	[GE_TS_UINT32] = 16, [GE_TS_UINT64] = 17, [GE_TS_BOOL] = 11,
	[GE_TS_STRING] = 8,  [GE_TS_C64] = 9,     [GE_TS_C128] = 12,
	[GE_TS_F8E5M2] = 18, [GE_TS_F8E4M3FN] = 18,
};

static void put_varint_field(ge_buf *b, uint32_t field, uint64_t v)
{
	ge_buf_tag(b, field, 0);
	ge_buf_varint(b, v);
}

void ge_tenc_begin(ge_tenc *e, ge_buf *b, int dtype, int rank,
		   const int64_t *dims, int64_t nvalues)
{
	e->b = b;
	e->di = ge_dtype_info(dtype);
	if (dtype)
		put_varint_field(b, 1, (uint64_t)dtype);
	size_t s = b->len;
	for (int i = 0; i < rank; i++) {
		size_t d = b->len;
		if (dims[i])
			put_varint_field(b, 1, (uint64_t)dims[i]);
		ge_buf_wrap(b, d, 2);
	}
	ge_buf_wrap(b, s, 2);
	/* Several values go to tensor_content, as TensorFlow writes arrays;
	 * one value (a scalar, or a fill) goes to the typed field, packed
	 * but for strings. */
	e->content = nvalues > 1 && e->di->store != GE_TS_STRING &&
		     e->di->size > 0;
	e->field = e->content ? 4 : typed_fields[e->di->store];
	e->open = nvalues > 0 && e->di->store != GE_TS_STRING;
	e->start = b->len;
}

void ge_tenc_double(ge_tenc *e, double re, double im)
{
	uint32_t bits;
	switch (e->di->store) {
	case GE_TS_FLOAT:
		wr_le(e->b, bits_of_f32(re), 4);
		break;
	case GE_TS_DOUBLE:
		wr_le(e->b, bits_of_f64(re), 8);
		break;
	case GE_TS_HALF:
	case GE_TS_BF16:
		bits = e->di->store == GE_TS_HALF ? ge_half_from_double(re)
						  : ge_bf16_from_double(re);
		if (e->content)
			wr_le(e->b, bits, 2);
		else
			ge_buf_varint(e->b, bits);
		break;
	case GE_TS_F8E5M2:
		ge_buf_addc(e->b, ge_f8e5m2_from_double(re));
		break;
	case GE_TS_C64:
		wr_le(e->b, bits_of_f32(re), 4);
		wr_le(e->b, bits_of_f32(im), 4);
		break;
	case GE_TS_C128:
		wr_le(e->b, bits_of_f64(re), 8);
		wr_le(e->b, bits_of_f64(im), 8);
		break;
	default:
		break;
	}
}

void ge_tenc_int(ge_tenc *e, int64_t v)
{
	if (e->content)
		wr_le(e->b, (uint64_t)v, e->di->size);
	else
		ge_buf_varint(e->b, (uint64_t)v);
}

void ge_tenc_bool(ge_tenc *e, int v)
{
	if (e->content)
		ge_buf_addc(e->b, v != 0);
	else
		ge_buf_varint(e->b, (uint64_t)(v != 0));
}

void ge_tenc_string(ge_tenc *e, const void *s, size_t len)
{
	ge_buf_lenfield(e->b, 8, s, len);
}

void ge_tenc_end(ge_tenc *e)
{
	if (e->open)
		ge_buf_wrap(e->b, e->start, e->field);
	e->open = 0;
}
