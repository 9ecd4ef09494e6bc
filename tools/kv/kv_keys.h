/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keys and values of the benchmarks. Key i is a 4-byte prefix (big-endian, what iterator
 * prefixes match) followed by i in decimal, zero padded to the key size, so keys are distinct,
 * printable and all share the prefix. On a block SSD (ssd_type lba) the SDK reads the key's
 * first 8 bytes as a little-endian LBA: key i then addresses the i-th value-sized extent.
 * Value i is derived from i (or a fill byte, or a file), so a retrieve can be checked.
 */
#ifndef KVTOOLS_KEYS_H
#define KVTOOLS_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KVT_DEFAULT_PREFIX 0x6b767400u /* "kvt\0" */

struct kvt_keyspec {
	uint32_t key_size;
	uint32_t prefix;
	bool lba;                /* key = LBA, little endian */
	uint32_t blocks_per_value; /* lba: sectors per value */
};

/* Why n keys of this size cannot be distinct (NULL when they can). */
const char *kvt_keys_check(const struct kvt_keyspec *ks, uint64_t n);
void kvt_key_make(const struct kvt_keyspec *ks, uint64_t i, uint8_t *key);
/* Recovers i from a key made by kvt_key_make; false for a key it could not have made. */
bool kvt_key_index(const struct kvt_keyspec *ks, const uint8_t *key, uint32_t len, uint64_t *i);

#define KVT_MAX_VALUE_SIZES 8

struct kvt_valuespec {
	uint32_t size;           /* the largest value */
	int fill;                /* -1: derived from the index; else every byte is this */
	const uint8_t *file;     /* when set: the bytes of every value (size bytes) */
	/* several sizes (kv_perf -v A B ...): value i has sizes[i % nsizes] bytes */
	uint32_t sizes[KVT_MAX_VALUE_SIZES];
	uint32_t nsizes;
};

static inline uint32_t kvt_value_size(const struct kvt_valuespec *vs, uint64_t i)
{
	return vs->nsizes > 1 ? vs->sizes[i % vs->nsizes] : vs->size;
}

/* Writes value i: kvt_value_size(vs, i) bytes. */
void kvt_value_make(const struct kvt_valuespec *vs, uint64_t i, uint8_t *buf);
/* True when buf (len bytes read from offset off of value i) holds what kvt_value_make wrote. */
bool kvt_value_check(const struct kvt_valuespec *vs, uint64_t i, const uint8_t *buf, uint32_t off,
		     uint32_t len);

#endif
