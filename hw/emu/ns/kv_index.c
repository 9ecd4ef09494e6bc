/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Chained hash table of KV entries. Each entry keeps its full hash, so a resize never
 * rehashes key bytes and a lookup compares key bytes only on a full hash match. Growth
 * doubles the bucket array when the load reaches 1; if that allocation fails the table keeps
 * working with longer chains, so an insert never fails for lack of buckets.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/ns/kv_index.h"

#define INITIAL_BUCKETS 1024u

int kv_index_init(struct kv_index *ix)
{
	ix->b = calloc(INITIAL_BUCKETS, sizeof(*ix->b));
	if (!ix->b)
		return -1;
	ix->nb = INITIAL_BUCKETS;
	ix->n = 0;
	return 0;
}

void kv_index_clear(struct kv_index *ix)
{
	for (size_t i = 0; i < ix->nb; i++) {
		struct kv_ent *e = ix->b[i];
		while (e) {
			struct kv_ent *next = e->next;
			kv_ent_free(e);
			e = next;
		}
		ix->b[i] = NULL;
	}
	ix->n = 0;
}

void kv_index_free(struct kv_index *ix)
{
	if (!ix->b)
		return;
	kv_index_clear(ix);
	free(ix->b);
	ix->b = NULL;
	ix->nb = 0;
}

/* FNV-1a over keyspace and key, then a final mix so that the low bits (the bucket) depend
 * on every input byte. */
uint32_t kv_hash(uint8_t ks, const uint8_t *key, uint8_t klen)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ks;
	h *= 0x100000001b3ull;
	for (unsigned i = 0; i < klen; i++) {
		h ^= key[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

struct kv_ent *kv_ent_new(uint8_t ks, const uint8_t *key, uint8_t klen)
{
	struct kv_ent *e = malloc(sizeof(*e) + klen);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->ks = ks;
	e->klen = klen;
	memcpy(e->key, key, klen);
	e->hash = kv_hash(ks, key, klen);
	return e;
}

void kv_ent_free(struct kv_ent *e)
{
	free(e);
}

static bool same_key(const struct kv_ent *e, uint32_t h, uint8_t ks, const uint8_t *key,
		     uint8_t klen)
{
	return e->hash == h && e->ks == ks && e->klen == klen && !memcmp(e->key, key, klen);
}

struct kv_ent *kv_index_find(const struct kv_index *ix, uint8_t ks, const uint8_t *key,
			     uint8_t klen)
{
	uint32_t h = kv_hash(ks, key, klen);
	for (struct kv_ent *e = ix->b[h & (ix->nb - 1)]; e; e = e->next)
		if (same_key(e, h, ks, key, klen))
			return e;
	return NULL;
}

static void grow(struct kv_index *ix)
{
	size_t nb = ix->nb * 2;
	struct kv_ent **b = calloc(nb, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < ix->nb; i++) {
		struct kv_ent *e = ix->b[i];
		while (e) {
			struct kv_ent *next = e->next;
			size_t j = e->hash & (nb - 1);
			e->next = b[j];
			b[j] = e;
			e = next;
		}
	}
	free(ix->b);
	ix->b = b;
	ix->nb = nb;
}

struct kv_ent *kv_index_put(struct kv_index *ix, struct kv_ent *e)
{
	struct kv_ent **pp = &ix->b[e->hash & (ix->nb - 1)];
	for (; *pp; pp = &(*pp)->next) {
		struct kv_ent *old = *pp;
		if (same_key(old, e->hash, e->ks, e->key, e->klen)) {
			e->next = old->next;
			*pp = e;
			old->next = NULL;
			return old;
		}
	}
	e->next = NULL;
	*pp = e;
	if (++ix->n > ix->nb)
		grow(ix);
	return NULL;
}

struct kv_ent *kv_index_remove(struct kv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	uint32_t h = kv_hash(ks, key, klen);
	for (struct kv_ent **pp = &ix->b[h & (ix->nb - 1)]; *pp; pp = &(*pp)->next) {
		struct kv_ent *e = *pp;
		if (same_key(e, h, ks, key, klen)) {
			*pp = e->next;
			e->next = NULL;
			ix->n--;
			return e;
		}
	}
	return NULL;
}
