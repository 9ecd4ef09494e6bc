/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The iterate-read buffer: a u32 key count, then for each key a u32 length and the key bytes,
 * packed with no padding (little endian, as the device writes them).
 */
#ifndef KVTOOLS_ITER_BUF_H
#define KVTOOLS_ITER_BUF_H

#include <stdbool.h>
#include <stdint.h>

/* Calls fn for every key in the first len bytes of buf. Returns the number of keys, or -1 when
 * the buffer is malformed (a length running past len, or fewer keys than announced). */
int kvt_iter_parse(const uint8_t *buf, uint32_t len,
		   void (*fn)(const uint8_t *key, uint32_t klen, void *arg), void *arg);

/* One synchronous kv_iterate_read of iterator `iterator` into buf (KV_ITERATE_READ_BUFFER_SIZE
 * bytes); *len receives the bytes filled (bounded by the buffer). Returns the kv_result:
 * KV_SUCCESS, KV_ERR_ITERATE_READ_EOF (the buffer may still hold keys) or a failure. */
int kvt_iter_read(uint64_t handle, uint32_t iterator, uint8_t *buf, uint32_t *len);

#endif
