/*
 * crc32c.h: CRC-32C (Castagnoli), the checksum of LevelDB tables and
 * TensorFlow tensor bundles, and the "mask" both formats apply to stored
 * checksums.
 *
 * Values follow the usual convention (initial and final inversion), so
 * ge_crc32c("123456789", 9) == 0xe3069283.  The functions cannot fail and
 * are safe to call from several threads.
 */
#ifndef GE_CRC32C_H
#define GE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc (the value returned for the bytes before p; 0 to start)
 * over n more bytes. */
uint32_t ge_crc32c_extend(uint32_t crc, const void *p, size_t n);

static inline uint32_t ge_crc32c(const void *p, size_t n)
{
	return ge_crc32c_extend(0, p, n);
}

/* A checksum stored next to the data it covers is masked, so that the CRC
 * of a buffer which itself embeds CRCs does not degenerate. */
#define GE_CRC32C_MASK_DELTA 0xa282ead8u

static inline uint32_t ge_crc32c_mask(uint32_t c)
{
	return ((c >> 15) | (c << 17)) + GE_CRC32C_MASK_DELTA;
}

static inline uint32_t ge_crc32c_unmask(uint32_t m)
{
	uint32_t r = m - GE_CRC32C_MASK_DELTA;
	return (r >> 17) | (r << 15);
}

#endif
