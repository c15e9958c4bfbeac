/*
 * tensor.h: tensor values of libgerewrite, the plain C under attr values,
 * Const folding and weight conversion.
 *
 * - dtypes: names as TensorFlow's Python API spells them ("float32"), byte
 *   sizes, and how each dtype is stored in a TensorProto (ge_dtinfo).
 * - elements: element k of a TensorProto, read from tensor_content or from
 *   the typed field (float_val, int_val, ...) with TensorFlow's rules: a
 *   typed field shorter than the shape repeats its last value, an empty
 *   one means zeros.
 * - encoding: the bytes of a TensorProto built element by element
 *   (ge_tenc), canonical as TensorFlow writes them: several values go to
 *   tensor_content, a single value (a scalar, or a fill) to the typed
 *   field.
 * - small floats: float16, bfloat16 and float8 to and from double, rounding
 *   to nearest, ties to even, once from the double.
 *
 * Nothing here allocates a TensorProto: readers take the unpacked message,
 * the encoder appends bytes that tensorflow__tensor_proto__unpack reads.
 */
#ifndef GE_TENSOR_H
#define GE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct Tensorflow__TensorProto;
struct Tensorflow__TensorShapeProto;

/* ---------------------------------------------------------------- dtypes */

/* DataType names as TensorFlow's Python API spells them ("float32"), and
 * back (also "float", "double", "half", "DT_FLOAT" and "<name>_ref").
 * Unknown values give NULL / -1. */
const char *ge_dtype_name(int dtype);
int ge_dtype_from_name(const char *name);
/* Element size in bytes for fixed-size dtypes, 0 otherwise. */
size_t ge_dtype_size(int dtype);

/* How a dtype's elements are stored in a TensorProto. */
typedef enum ge_tstore {
	GE_TS_FLOAT = 1, /* float_val, 4-byte content */
	GE_TS_DOUBLE,    /* double_val */
	GE_TS_HALF,      /* half_val bit patterns, 2-byte content */
	GE_TS_BF16,      /* half_val bit patterns, 2-byte content */
	GE_TS_INT,       /* int_val; `bits` wide, signed or not */
	GE_TS_INT64,     /* int64_val */
	GE_TS_UINT32,    /* uint32_val */
	GE_TS_UINT64,    /* uint64_val */
	GE_TS_BOOL,      /* bool_val, 1-byte content */
	GE_TS_STRING,    /* string_val, never content */
	GE_TS_C64,       /* scomplex_val pairs */
	GE_TS_C128,      /* dcomplex_val pairs */
	GE_TS_F8E5M2,    /* float8_val bytes */
	GE_TS_F8E4M3FN,  /* float8_val bytes (read only) */
} ge_tstore;

typedef struct ge_dtinfo {
	int dtype;
	ge_tstore store;
	int size; /* bytes per element in tensor_content; 0: no content layout */
	int bits; /* value bits (4 for int4) */
	int sign; /* signed integer, or a float kind */
} ge_dtinfo;

/* The storage of dtype (a _ref dtype as its base); NULL for the dtypes
 * whose values this module does not read (resource, variant, the fnuz
 * float8s). */
const ge_dtinfo *ge_dtype_info(int dtype);

/* The values an integer dtype holds.  The 64-bit kinds report the whole
 * int64 range: a uint64 above INT64_MAX is given as its two's complement,
 * as ge_tensor_elem reads it back. */
void ge_dtype_int_range(const ge_dtinfo *di, int64_t *lo, int64_t *hi);

/* ---------------------------------------------------------------- elements */

/* One element as read: tag 'n' float (d), 'i' integer (i), 'b' bool (i),
 * 's' string (s, len; points into the TensorProto), 'c' complex (d, im). */
typedef struct ge_elem {
	char tag;
	double d, im;
	int64_t i;
	const uint8_t *s;
	size_t len;
} ge_elem;

/* Element k (0-based) of t into *e.  Returns NULL, or a message saying
 * what prevents reading it (an unsupported dtype, tensor_content shorter
 * than k). */
const char *ge_tensor_elem(const struct Tensorflow__TensorProto *t,
			   int64_t k, ge_elem *e);
int ge_elem_eq(const ge_elem *a, const ge_elem *b);

/* Element k as a double (integers and bools converted, complex gives its
 * real part) or as an int64 (floats truncated toward zero, NaN and out of
 * range values refused).  Return GE_OK, or GE_EINVAL with err filled for
 * strings or an element that cannot be read. */
int ge_tensor_get_double(const struct Tensorflow__TensorProto *t, int64_t k,
			 double *out, ge_error *err);
int ge_tensor_get_int64(const struct Tensorflow__TensorProto *t, int64_t k,
			int64_t *out, ge_error *err);

/* Values actually stored (content bytes or typed field items). */
int64_t ge_tensor_stored_count(const struct Tensorflow__TensorProto *t);
/* Elements by the shape (a missing shape is a scalar); a shape that cannot
 * be counted (unknown rank, negative dims, overflow) gives the number of
 * stored values. */
int64_t ge_tensor_count(const struct Tensorflow__TensorProto *t);
/* Same rank (or both unknown) and same dim sizes; names do not count. */
int ge_tensor_shape_eq(const struct Tensorflow__TensorShapeProto *a,
		       const struct Tensorflow__TensorShapeProto *b);

/* ---------------------------------------------------------------- encoding */

/* Builds TensorProto bytes into b:
 *
 *	ge_tenc e;
 *	ge_tenc_begin(&e, &buf, TENSORFLOW__DATA_TYPE__DT_FLOAT, 1, dims, 3);
 *	for (i = 0; i < 3; i++) ge_tenc_double(&e, v[i], 0);
 *	ge_tenc_end(&e);
 *
 * nvalues is the number of elements that will be given: 0 (all zeros),
 * 1 (fills the shape) or the element count of the shape.  Each element is
 * given once through the call that fits the dtype's storage: ge_tenc_double
 * for the float and complex kinds, ge_tenc_int for integers (the caller
 * checks the range with ge_dtype_int_range), ge_tenc_bool, ge_tenc_string.
 * The dtype must have a ge_dtinfo and not be float8_e4m3fn or a _ref. */
typedef struct ge_tenc {
	ge_buf *b;
	const ge_dtinfo *di;
	int content;  /* values go to tensor_content */
	int open;     /* a length-delimited field is open at `start` */
	size_t start;
	uint32_t field;
} ge_tenc;

void ge_tenc_begin(ge_tenc *e, ge_buf *b, int dtype, int rank,
		   const int64_t *dims, int64_t nvalues);
void ge_tenc_double(ge_tenc *e, double re, double im);
void ge_tenc_int(ge_tenc *e, int64_t v);
void ge_tenc_bool(ge_tenc *e, int v);
void ge_tenc_string(ge_tenc *e, const void *s, size_t len);
void ge_tenc_end(ge_tenc *e);

/* ---------------------------------------------------------------- numbers */

/* float16 (5 exponent bits, 10 mantissa), bfloat16 (8/7), float8 e5m2 (5/2)
 * and float8 e4m3fn (bias 7, no infinities).  The _to_ directions are exact
 * (NaN payloads kept where a float can hold them); the _from_ directions
 * round once, to nearest, ties to even, overflowing to infinity. */
float ge_half_to_float(uint16_t h);
uint16_t ge_half_from_double(double x);
float ge_bf16_to_float(uint16_t h);
uint16_t ge_bf16_from_double(double x);
double ge_f8e5m2_to_double(uint8_t b);
uint8_t ge_f8e5m2_from_double(double x);
double ge_f8e4m3fn_to_double(uint8_t b);

#endif
