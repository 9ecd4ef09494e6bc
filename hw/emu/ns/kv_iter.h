/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key iterators of the vendor protocol (iterate request B1h, iterate read B2h, log D0h).
 * An iterator takes a snapshot of the matching keys when it opens; each read returns the
 * next snapshot keys that still exist. So a key is never returned twice, a key that existed
 * for the iterator's whole life is never missed, keys deleted meanwhile are skipped and keys
 * stored after the open are not returned. "Key with delete" deletes each key as it is
 * returned. Iterators are volatile: none survive a controller reset or a new device.
 */
#ifndef UNVME_EMU_KV_ITER_H
#define UNVME_EMU_KV_ITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/emu/ns/kv_store.h"
#include "unvme/spec.h"

#define KV_ITER_TYPE_KEY        1u  /* KV_KEY_ITERATE */
#define KV_ITER_TYPE_KEY_VALUE  2u  /* KV_KEY_ITERATE_WITH_RETRIEVE: one pair per read */
#define KV_ITER_TYPE_KEY_DELETE 3u  /* KV_KEY_ITERATE_WITH_DELETE */

struct kv_iter {
	bool     open;
	bool     eof;
	uint8_t  type;
	uint8_t  ks;
	uint32_t prefix;   /* as the application gave them (host order) */
	uint32_t mask;
	uint8_t *keys;     /* snapshot: {u8 length, key} packed */
	size_t   len;
	size_t   pos;
};

struct kv_iters {
	pthread_mutex_t lock;
	struct kv_iter h[NVME_KVV_MAX_ITERATORS];  /* handle = index + 1 */
};

void kv_iters_init(struct kv_iters *its);
void kv_iters_destroy(struct kv_iters *its);
/* Closes every iterator (controller reset, format). */
void kv_iters_close_all(struct kv_iters *its);

/* The functions below return 0 or a vendor status code (enum nvme_kvv_status). */
uint8_t kv_iter_open(struct kv_iters *its, struct kv_store *st, uint8_t ks, uint8_t type,
		     uint32_t prefix, uint32_t mask, uint8_t *handle);
uint8_t kv_iter_close(struct kv_iters *its, uint8_t handle);
/* Fills out[cap] with a u32 key count then {u32 length, key} entries (no padding), as many
 * whole entries as fit; *filled = bytes used (count included). NVME_KVV_SC_ITER_EOF when
 * the chunk reached the end (its keys are valid). A key-and-delete iterator deletes the keys
 * it returns; *deleted is then set (the caller makes them durable before completing). */
uint8_t kv_iter_read(struct kv_iters *its, struct kv_store *st, uint8_t handle, uint8_t *out,
		     uint32_t cap, uint32_t *filled, bool *deleted);
/* A key-with-value iterator's read: the next key that still exists at out[0], its value
 * (as much as fits) from out[NVME_KVV_ITER_VALUE_OFFSET], *filled the bytes used and *dw0
 * key length << 24 | value bytes; NVME_KVV_SC_ITER_EOF with the last pair (or none left). */
uint8_t kv_iter_read_pair(struct kv_iters *its, struct kv_store *st, uint8_t handle,
			  uint8_t *out, uint32_t cap, uint32_t *filled, uint32_t *dw0);
/* The type of an open iterator (0: none). */
uint8_t kv_iter_type(struct kv_iters *its, uint8_t handle);
void kv_iter_info(struct kv_iters *its, struct nvme_kvv_iter_info out[NVME_KVV_MAX_ITERATORS]);

/* Whether key matches (its first 4 bytes as a big-endian number, missing bytes 0). */
bool kv_iter_match(const uint8_t *key, uint8_t klen, uint32_t prefix, uint32_t mask);

#endif
