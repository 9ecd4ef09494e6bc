/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK's read cache: write-through on store, filled on retrieve misses, invalidated on
 * delete, LRU eviction within a byte budget.
 *
 * Ownership: the cache keeps its own malloc'd copy of every key and value. It never holds a
 * pointer into a caller's or the slab's buffer, so freeing or reusing those buffers after a
 * call returns cannot corrupt the cache (the original kept pointers into freed slab items).
 *
 * Structure (the original called its algorithm "radix"; this is a different one): the key
 * space is split by hash into stripes (64 by default). Each stripe has its own mutex, a
 * chained hash table that doubles as it fills, an LRU list and an equal share of the budget,
 * so threads working on different keys rarely meet, and eviction is LRU within a stripe
 * (approximately LRU overall). A key is (keyspace id, key bytes); keys of 1..255 bytes are
 * accepted (the SDK validates the 4-byte minimum itself).
 *
 * Fixed cost: about 8 KiB per stripe (its version slots), 512 KiB with the default stripes;
 * the budget counts entries only.
 *
 * What is cached: values of at most KV_CACHE_MAX_VALUE bytes that also fit a quarter of a
 * stripe's budget share (budget / stripes / 4, counting 48 bytes of bookkeeping plus the key;
 * with the default 64 stripes a value must also be at most about budget / 256). Larger values
 * are never cached; storing one still invalidates the key.
 *
 * Coherence with device operations on the same key. Each stripe keeps version counters for
 * 1024 slots of key hashes. A ticket is the key's slot version taken before the device
 * operation. Storing or invalidating a key bumps its slot's version; a fill or write-through
 * whose ticket no longer matches is not inserted. Two keys that share a slot only cost each
 * other a dropped insert, never a stale value. The SDK must follow this protocol:
 *
 *   retrieve:  rc = kv_cache_get(...); on a hit, done (no I/O).
 *              t = kv_cache_ticket(key)                       -- before submitting
 *              device retrieve; on success (offset 0 and the whole value read, i.e. the
 *              buffer held the entire stored value):
 *              kv_cache_fill(t, key, value, stored size)
 *   store:     kv_cache_invalidate(key); t = kv_cache_ticket(key)   -- before submitting
 *              device store; on success with offset 0 (whole-value store):
 *                kv_cache_store(t, key, value, vlen)
 *              on failure, or any store the cache cannot mirror (append, nonzero offset):
 *                kv_cache_invalidate(key)
 *   delete:    kv_cache_invalidate(key)                       -- before submitting
 *              device delete; on completion (success or not): kv_cache_invalidate(key)
 *   format / iterate-with-delete:  kv_cache_clear() before submitting and after completion.
 *
 * Why a write-through with an old ticket invalidates instead of "newer ticket wins": two
 * stores of one key that overlap in time may execute on the device in either order (NVMe does
 * not order commands, not even within one queue), so when kv_cache_store() sees that another
 * store or delete of the key began after its ticket, the cache cannot know which value the
 * device kept and drops the key. Overlapping operations on a key thus cost a later miss,
 * never a stale hit. A successful fill never bumps the version, so a retrieve cannot disturb a
 * concurrent store's write-through.
 *
 * The guarantee: once a store or delete has completed (its kv_cache_store() or second
 * kv_cache_invalidate() returned), no retrieve can get the value it replaced from the cache.
 * While it is still in flight, a retrieve may get the old value or the new one (or go to the
 * device) -- a retrieve that began before the device applied the store can fill the old value
 * until the store's write-through replaces it.
 *
 * All functions are thread safe; create/destroy must not race other calls on the same cache.
 */
#ifndef UNVME_KVSDK_KV_CACHE_H
#define UNVME_KVSDK_KV_CACHE_H

#include <stdint.h>

/* Values larger than this are never cached. */
#define KV_CACHE_MAX_VALUE (64u * 1024u)
/* Default number of lock stripes (kv_cache_create). */
#define KV_CACHE_DEFAULT_STRIPES 64u

struct kv_cache;

/* A cache limited to budget_bytes (values, keys and bookkeeping); NULL on allocation failure
 * or a zero budget. */
struct kv_cache *kv_cache_create(uint64_t budget_bytes);
/* The same with a chosen number of stripes (rounded up to a power of two, 1..4096). One stripe
 * gives exact LRU order over the whole cache; tests use it. */
struct kv_cache *kv_cache_create_ex(uint64_t budget_bytes, uint32_t nr_stripes);
/* Frees the cache and every entry. NULL is ignored. */
void kv_cache_destroy(struct kv_cache *c);

/* The version to pass to kv_cache_fill()/kv_cache_store(); take it before the device
 * operation (see the protocol above). Lock free. */
uint64_t kv_cache_ticket(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen);

/* Inserts a copy of the value read by a retrieve, unless the key was stored or invalidated
 * since the ticket was taken or the value is too large to cache. Replaces an existing entry. */
void kv_cache_fill(struct kv_cache *c, uint64_t ticket, uint8_t ks, const void *key,
		   uint16_t klen, const void *value, uint32_t vlen);

/* Write-through after a successful store: inserts a copy of the value if nothing else stored
 * or invalidated the key since the ticket; otherwise removes the key. Bumps the version
 * either way, so fills whose tickets predate this store are dropped. */
void kv_cache_store(struct kv_cache *c, uint64_t ticket, uint8_t ks, const void *key,
		    uint16_t klen, const void *value, uint32_t vlen);

/* Removes the key and bumps its version. */
void kv_cache_invalidate(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen);

/* Removes every entry and bumps every version (format). */
void kv_cache_clear(struct kv_cache *c);

/*
 * Looks the key up. On a hit returns 0, sets *stored_size to the full stored value size and
 * copies min(dst_len, stored size - offset) bytes from value offset `offset` into dst
 * (*copied = that count; dst may be NULL when dst_len is 0); the entry becomes most recently
 * used. Returns KV_ERR_CACHE_NO_CACHED_KEY on a miss, and also when offset is beyond the
 * stored size: the device then reports the error exactly as it would without a cache.
 * stored_size and copied may be NULL.
 */
int kv_cache_get(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen, uint32_t offset,
		 void *dst, uint32_t dst_len, uint32_t *stored_size, uint32_t *copied);

struct kv_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t fills;         /* entries inserted by kv_cache_fill() */
	uint64_t stores;        /* entries inserted by kv_cache_store() */
	uint64_t stale_drops;   /* fills/stores refused because their ticket was out of date */
	uint64_t evictions;     /* entries removed to stay within the budget */
	uint64_t invalidations; /* entries removed by kv_cache_invalidate()/stale stores */
	uint64_t bytes_used;    /* charged bytes of the current entries */
	uint64_t budget_bytes;
	uint64_t entries;
};

/* A snapshot summed over stripes (each stripe read under its lock). */
void kv_cache_stats(struct kv_cache *c, struct kv_cache_stats *st);

#endif
