/* SPDX-License-Identifier: BSD-3-Clause */
/* The host KV engine's index: a chained hash table of keys, doubled when it fills. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostkv/hkv_internal.h"

#define INITIAL_BUCKETS 1024u

int hkv_index_init(struct hkv_index *ix)
{
	ix->nb = INITIAL_BUCKETS;
	ix->n = 0;
	ix->b = calloc(ix->nb, sizeof(*ix->b));
	return ix->b ? 0 : -ENOMEM;
}

void hkv_index_free(struct hkv_index *ix)
{
	for (uint64_t i = 0; ix->b && i < ix->nb; i++) {
		struct hkv_ent *e = ix->b[i];
		while (e) {
			struct hkv_ent *next = e->next;
			free(e);
			e = next;
		}
	}
	free(ix->b);
	ix->b = NULL;
	ix->n = 0;
}

uint64_t hkv_key_hash(uint8_t ks, const uint8_t *key, uint8_t klen)
{
	return zdev_hash64(key, klen, 0x51ed270b27c3d5e1ull + ks);
}

struct hkv_ent *hkv_index_find(const struct hkv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	uint64_t h = hkv_key_hash(ks, key, klen);
	for (struct hkv_ent *e = ix->b[h & (ix->nb - 1)]; e; e = e->next)
		if (e->hash == h && e->ks == ks && e->klen == klen && !memcmp(e->key, key, klen))
			return e;
	return NULL;
}

static void grow(struct hkv_index *ix)
{
	uint64_t nb = ix->nb * 2;
	struct hkv_ent **b = calloc(nb, sizeof(*b));
	if (!b)
		return; /* longer chains, still correct */
	for (uint64_t i = 0; i < ix->nb; i++) {
		struct hkv_ent *e = ix->b[i];
		while (e) {
			struct hkv_ent *next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
			e = next;
		}
	}
	free(ix->b);
	ix->b = b;
	ix->nb = nb;
}

struct hkv_ent *hkv_index_add(struct hkv_index *ix, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	struct hkv_ent *e = malloc(sizeof(*e) + klen);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->hash = hkv_key_hash(ks, key, klen);
	e->ks = ks;
	e->klen = klen;
	memcpy(e->key, key, klen);
	if (ix->n >= ix->nb)
		grow(ix);
	struct hkv_ent **slot = &ix->b[e->hash & (ix->nb - 1)];
	e->next = *slot;
	*slot = e;
	ix->n++;
	return e;
}

void hkv_index_remove(struct hkv_index *ix, struct hkv_ent *e)
{
	struct hkv_ent **p = &ix->b[e->hash & (ix->nb - 1)];
	while (*p && *p != e)
		p = &(*p)->next;
	if (*p) {
		*p = e->next;
		ix->n--;
		free(e);
	}
}
