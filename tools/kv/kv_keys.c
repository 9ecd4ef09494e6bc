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

/* Byte at position pos of value i: the index in the first 8 bytes (little endian), then a
 * pattern that depends on both, so a value returned for the wrong key is noticed. */
static inline uint8_t derived_byte(uint64_t i, uint32_t pos)
{
	if (pos < 8)
		return (uint8_t)(i >> (8 * pos));
	return (uint8_t)(pos * 31u + (uint32_t)i * 7u + (uint32_t)(i >> 8));
}

void kvt_value_make(const struct kvt_valuespec *vs, uint64_t i, uint8_t *buf)
{
	if (vs->file)
		memcpy(buf, vs->file, vs->size);
	else if (vs->fill >= 0)
		memset(buf, vs->fill, vs->size);
	else
		for (uint32_t p = 0; p < vs->size; p++)
			buf[p] = derived_byte(i, p);
}

bool kvt_value_check(const struct kvt_valuespec *vs, uint64_t i, const uint8_t *buf, uint32_t off,
		     uint32_t len)
{
	if (off > vs->size || len > vs->size - off)
		return false;
	if (vs->file)
		return memcmp(buf, vs->file + off, len) == 0;
	for (uint32_t p = 0; p < len; p++) {
		uint8_t want = vs->fill >= 0 ? (uint8_t)vs->fill : derived_byte(i, off + p);
		if (buf[p] != want)
			return false;
	}
	return true;
}
