/*
 * exec/npy.h: NumPy's .npy files, and the values the command line feeds.
 *
 * .npy (NumPy's format description, versions 1.0, 2.0 and 3.0): the
 * magic "\x93NUMPY", a major and minor version byte, a header length
 * (2 bytes little endian in 1.0, 4 in 2.0 and 3.0), a header that is a
 * Python dict literal {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), } padded with spaces and a newline to a multiple of
 * 64 bytes, then the elements in C order.
 *
 * Read: every dtype the runner holds as numbers (float16/32/64, signed
 * and unsigned integers of 8 to 64 bits, bool, complex64/128), either
 * byte order, and fixed-width byte strings ('S', read as string
 * tensors).  Refused, with one line naming the file: Fortran order,
 * object and other dtypes, a header that is not such a dict or over
 * 64 KiB, a shape over the runner's rank or whose size overflows, data
 * shorter or longer than the shape says.
 *
 * Write: version 1.0 (2.0 when the header would not fit), little
 * endian.  bfloat16, which NumPy has no name for, is written as float32
 * (every bfloat16 is a float32 exactly).  Files are written atomically.
 *
 * Values of the command line (ge_xvalue_parse), for an input of dtype
 * `dtype` (0: decided by the text) and static shape:
 *   3.5, -2, true, [1,2,5], [[1,2],[3,4]]   a literal (nested lists)
 *   @file.npy                               a .npy file
 *   1x224x224x3[:DTYPE][:LO..HI]            seeded data of that shape
 *   3: or :float32                          a one-dimensional shape,
 *                                           the empty (scalar) shape
 * Seeded data is uniform in [LO, HI) for floats (default 0..1) and in
 * [LO, HI] for integers (default 0..9), bool 0/1, strings empty; it
 * comes from a fixed generator (splitmix64) keyed by the seed and the
 * input's name, so that a seed gives the same data on every machine,
 * whatever the order of the inputs.
 */
#ifndef GE_EXEC_NPY_H
#define GE_EXEC_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "exec/xtensor.h"

/* Parses the bytes of a .npy file (name for messages) into a new tensor
 * charged to b (may be NULL).  GE_EFORMAT for a file that is not a .npy
 * file or one refused as above. */
int ge_npy_parse(const uint8_t *data, size_t len, const char *name,
		 ge_xbudget *b, ge_xt **out, ge_error *err);
int ge_npy_read(const char *path, ge_xbudget *b, ge_xt **out, ge_error *err);
/* Appends the .npy encoding of t to out; GE_EINVAL for a dtype .npy
 * cannot hold (resource, variant, quantized). */
int ge_npy_encode(const ge_xt *t, ge_buf *out, ge_error *err);
/* Encodes and writes path atomically. */
int ge_npy_write(const char *path, const ge_xt *t, ge_error *err);

/* ---------------------------------------------------------------- values */

/* The generator of seeded data: splitmix64 from a seed and a name. */
typedef struct ge_xrand {
	uint64_t s;
} ge_xrand;
void ge_xrand_init(ge_xrand *r, uint64_t seed, const char *name);
uint64_t ge_xrand_next(ge_xrand *r);
/* Uniform in [0, 1), 53 bits. */
double ge_xrand_unit(ge_xrand *r);

/* What ge_xvalue_parse knows of the input it fills. */
typedef struct ge_xinput_info {
	const char *name;   /* for messages and the seed */
	int dtype;          /* 0: from the text (floats float32, integers
			       int32, true/false bool) */
	int rank;           /* -1: unknown */
	int64_t dims[GE_SHAPE_MAXRANK]; /* -1: unknown */
	int64_t unknown_dim; /* what an unknown dim becomes (default 1) */
	uint64_t seed;
} ge_xinput_info;

/* Makes the tensor a value of the command line describes (see above).
 * A literal's or file's dtype and shape must fit the input's (a scalar
 * literal fills a shape of one element); errors name the input. */
int ge_xvalue_parse(const char *text, const ge_xinput_info *in,
		    ge_xbudget *b, ge_xt **out, ge_error *err);
/* Whether t fits the input's dtype (when known) and static shape;
 * errors "input 'x': WHAT has shape [3], the input takes [?,2]". */
int ge_xinput_check(const ge_xinput_info *in, const ge_xt *t,
		    const char *what, ge_error *err);
/* Seeded data for the input's own shape (unknown dims unknown_dim, an
 * unknown rank a scalar) and dtype (float32 when unknown), with the
 * default range; what an input the command line does not name gets. */
int ge_xvalue_seeded(const ge_xinput_info *in, ge_xbudget *b, ge_xt **out,
		     ge_error *err);

#endif
