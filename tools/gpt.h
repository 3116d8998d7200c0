/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian stores and the GPT CRC32, shared by fuzzpt.c and mkgpt.c.
 */
#ifndef PARTLOOP_GPT_H
#define PARTLOOP_GPT_H
#include <stddef.h>
#include <stdint.h>

static inline void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static inline void put64(uint8_t *p, uint64_t v) { put32(p, v); put32(p + 4, v >> 32); }

/* The CRC32 of the UEFI spec (and of zlib): reflected 0xedb88320, ~0 in and out. */
static inline uint32_t crc32_le(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~0U;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	}
	return ~crc;
}
#endif
