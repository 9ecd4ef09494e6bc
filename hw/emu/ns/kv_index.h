/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key index of a KV namespace: a chained hash table from (keyspace, key) to where the
 * value is. Lookups are constant time; the bucket array doubles when the table holds as many
 * keys as buckets (amortised O(1) inserts). Not thread safe: the store's lock guards it.
 */
#ifndef UNVME_EMU_KV_INDEX_H
#define UNVME_EMU_KV_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct kv_ent {
	struct kv_ent *next;
	uint64_t loc;      /* file engine: offset of the record in the log */
	uint8_t *val;      /* memory engine: the value bytes in the store's kv_vmem (NULL when vlen is 0) */
	uint32_t hash;
	uint32_t vlen;
	uint8_t  ks;
	uint8_t  klen;     /* 1..255 */
	uint8_t  key[];
};

struct kv_index {
	struct kv_ent **b;
	size_t nb;         /* power of two */
	size_t n;
};

int kv_index_init(struct kv_index *ix);
/* Frees every entry and the bucket array (values belong to the store: kv_vmem.h). */
void kv_index_free(struct kv_index *ix);
/* Empties the table, keeping it usable. */
void kv_index_clear(struct kv_index *ix);

uint32_t kv_hash(uint8_t ks, const uint8_t *key, uint8_t klen);
/* A new entry (not in the table), or NULL without memory. */
struct kv_ent *kv_ent_new(uint8_t ks, const uint8_t *key, uint8_t klen);
void kv_ent_free(struct kv_ent *e);

struct kv_ent *kv_index_find(const struct kv_index *ix, uint8_t ks, const uint8_t *key,
			     uint8_t klen);
/* Links e; an entry with the same key is unlinked and returned (the caller frees it). */
struct kv_ent *kv_index_put(struct kv_index *ix, struct kv_ent *e);
/* Unlinks and returns the entry of the key, or NULL. */
struct kv_ent *kv_index_remove(struct kv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen);

/* Visits every entry in bucket order (the same order for an unchanged table). */
#define KV_INDEX_FOREACH(ix, e)                                       \
	for (size_t _i = 0; _i < (ix)->nb; _i++)                      \
		for (struct kv_ent *e = (ix)->b[_i]; e; e = e->next)

#endif
