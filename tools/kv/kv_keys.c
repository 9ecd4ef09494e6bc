/* SPDX-License-Identifier: BSD-3-Clause */
/* Key and value generation and checking for the KV benchmarks. */
#include <string.h>

#include "kv_keys.h"

static uint64_t pow10_u64(uint32_t digits)
{
	uint64_t v = 1;
	for (uint32_t d = 0; d < digits; d++) {
		if (v > UINT64_MAX / 10)
			return UINT64_MAX;
		v *= 10;
	}
	return v;
}

const char *kvt_keys_check(const struct kvt_keyspec *ks, uint64_t n)
{
	if (ks->lba)
		return ks->key_size < 8 ? "a block-SSD key holds an 8-byte LBA: key size must be >= 8"
					: NULL;
	if (ks->key_size < 4)
		return "key size must be at least 4 (the prefix)";
	if (n > 1 && pow10_u64(ks->key_size - 4) < n)
		return "the key size is too small for that many distinct keys (4 prefix bytes "
		       "plus the decimal index)";
	return NULL;
}

void kvt_key_make(const struct kvt_keyspec *ks, uint64_t i, uint8_t *key)
{
	if (ks->lba) {
		uint64_t lba = i * ks->blocks_per_value;
		memset(key, 0, ks->key_size);
		for (unsigned b = 0; b < 8; b++)
			key[b] = (uint8_t)(lba >> (8 * b));
		return;
	}
	key[0] = (uint8_t)(ks->prefix >> 24);
	key[1] = (uint8_t)(ks->prefix >> 16);
	key[2] = (uint8_t)(ks->prefix >> 8);
	key[3] = (uint8_t)ks->prefix;
	/* decimal, right aligned: digits beyond the key are dropped (kvt_keys_check said so) */
	for (uint32_t p = ks->key_size; p > 4; p--) {
		key[p - 1] = (uint8_t)('0' + i % 10);
		i /= 10;
	}
}

bool kvt_key_index(const struct kvt_keyspec *ks, const uint8_t *key, uint32_t len, uint64_t *i)
{
	if (len != ks->key_size || ks->lba || len < 4)
		return false;
	if (key[0] != (uint8_t)(ks->prefix >> 24) || key[1] != (uint8_t)(ks->prefix >> 16) ||
	    key[2] != (uint8_t)(ks->prefix >> 8) || key[3] != (uint8_t)ks->prefix)
		return false;
	uint64_t v = 0;
	for (uint32_t p = 4; p < len; p++) {
		if (key[p] < '0' || key[p] > '9')
			return false;
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(key[p] - '0');
	}
	*i = v;
	return true;
}

/* Value i, as 64-bit little-endian words: word 0 is i itself, word w > 0 mixes i and w, so
 * a value returned for the wrong key, or bytes moved within a value, are noticed. Made and
 * checked a word at a time: the benchmarks time these loops along with the I/O. */
static inline uint64_t value_word(uint64_t i, uint64_t w)
{
	if (w == 0)
		return i;
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
	return (x ^ (x >> 29)) ^ (w * 0xbf58476d1ce4e5b9ull);
}

static inline uint8_t value_byte(uint64_t i, uint32_t pos)
{
	return (uint8_t)(value_word(i, pos / 8) >> (8 * (pos % 8)));
}

void kvt_value_make(const struct kvt_valuespec *vs, uint64_t i, uint8_t *buf)
{
	uint32_t size = kvt_value_size(vs, i);
	if (vs->file) {
		memcpy(buf, vs->file, size);
		return;
	}
	if (vs->fill >= 0) {
		memset(buf, vs->fill, size);
		return;
	}
	uint32_t words = size / 8;
	for (uint32_t w = 0; w < words; w++) {
		uint64_t v = value_word(i, w);
		memcpy(buf + 8 * w, &v, 8);
	}
	for (uint32_t p = words * 8; p < size; p++)
		buf[p] = value_byte(i, p);
}

bool kvt_value_check(const struct kvt_valuespec *vs, uint64_t i, const uint8_t *buf, uint32_t off,
		     uint32_t len)
{
	uint32_t size = kvt_value_size(vs, i);
	if (off > size || len > size - off)
		return false;
	if (vs->file)
		return memcmp(buf, vs->file + off, len) == 0;
	if (vs->fill >= 0) {
		for (uint32_t p = 0; p < len; p++)
			if (buf[p] != (uint8_t)vs->fill)
				return false;
		return true;
	}
	uint32_t p = 0;
	for (; p < len && (off + p) % 8; p++)            /* up to a word boundary of the value */
		if (buf[p] != value_byte(i, off + p))
			return false;
	uint64_t diff = 0;
	for (; p + 8 <= len; p += 8) {                   /* whole words, no early exit: vectorises */
		uint64_t v;
		memcpy(&v, buf + p, 8);
		diff |= v ^ value_word(i, (off + p) / 8);
	}
	if (diff)
		return false;
	for (; p < len; p++)
		if (buf[p] != value_byte(i, off + p))
			return false;
	return true;
}
