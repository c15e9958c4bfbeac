/*
 * base/snappy.h: Snappy, opened the first time a table block needs it.
 *
 * The program does not link Snappy: linked, the library brings libstdc++
 * and libgcc_s and costs every start of the program about a millisecond
 * of loading and relocation (a sixth of `gerewrite info` on a small
 * model), and only the blocks of a table (a checkpoint index) that a
 * TensorFlow build wrote compressed need it: most builds write raw
 * blocks, and so does gerewrite.  ge_snappy() opens GE_SNAPPY_SONAME
 * (configure finds it) once, from any thread, and hands out the four
 * functions sstable.c calls.  exec/blas.h opens OpenBLAS the same way.
 */
#ifndef GE_BASE_SNAPPY_H
#define GE_BASE_SNAPPY_H

#include <snappy-c.h>

typedef struct ge_snappy_fns {
	__typeof__(snappy_compress) *compress;
	__typeof__(snappy_uncompress) *uncompress;
	__typeof__(snappy_max_compressed_length) *max_compressed_length;
	__typeof__(snappy_uncompressed_length) *uncompressed_length;
} ge_snappy_fns;

/* The functions, all set; NULL when the library cannot be opened, with
 * *why (when why is not NULL) the library's name and the loader's
 * reason, a static string. */
const ge_snappy_fns *ge_snappy(const char **why);

#endif
