/*
 * crc32c.c: table-driven CRC-32C, eight bytes per step ("slicing by 8").
 *
 * Written for the project: Debian ships no C library for CRC-32C, and the
 * few hundred MB a large checkpoint holds make a byte-at-a-time loop too
 * slow.  The tables are computed on first use (guarded by pthread_once so
 * concurrent first calls are safe) rather than spelled out in the source.
 */
#include "base/crc32c.h"

#include <pthread.h>

/* The Castagnoli polynomial 0x1EDC6F41, bit-reversed for LSB-first use. */
#define POLY 0x82f63b78u

static uint32_t tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		tab[0][i] = c;
	}
	/* tab[k][i]: the effect of byte i followed by k zero bytes, which lets
	 * eight bytes be folded in with eight independent lookups. */
	for (int k = 1; k < 8; k++)
		for (int i = 0; i < 256; i++)
			tab[k][i] = (tab[k - 1][i] >> 8) ^
				    tab[0][tab[k - 1][i] & 0xff];
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint32_t ge_crc32c_extend(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint32_t c = ~crc;

	pthread_once(&tab_once, tab_init);
	while (n && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
		n--;
	}
	while (n >= 8) {
		uint32_t lo = c ^ le32(p), hi = le32(p + 4);
		c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		    tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		    tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		    tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
	return ~c;
}
