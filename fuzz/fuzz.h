/*
 * fuzz.h: what the libFuzzer targets of fuzz/ share.
 *
 * Each target defines FUZZ_TARGET(bytes, len).  Built with --enable-fuzzing
 * it is LLVMFuzzerTestOneInput; built for `make check` (GE_FUZZ_REPLAY) it
 * is a function of that name, and fuzz/replay.c runs the inputs of
 * fuzz/regress/<target>/ through it, so that whatever once crashed stays
 * fixed without a fuzzer.
 */
#ifndef GE_FUZZ_H
#define GE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "base/bounds.h"

#ifdef GE_FUZZ_REPLAY
#define FUZZ_TARGET(name)                                                   \
	int fuzz_##name(const uint8_t *data, size_t len)
#else
#define FUZZ_TARGET(name)                                                   \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
#endif

/* A budget small enough that no input makes the fuzzer run out of memory
 * (its limit is 2 GB), large enough for every real test model. */
static inline void fuzz_limits(void)
{
	ge_set_max_memory((uint64_t)64 << 20);
}

#endif
