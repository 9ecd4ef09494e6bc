/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK's read cache; behaviour and the ticket protocol are described in kv_cache.h.
 *
 * One 64-bit hash of (keyspace, key) picks everything: its top bits the stripe, bits 32..41
 * the version slot, its low bits the bucket. Entries are single malloc blocks holding the
 * bookkeeping, the key and the value. Copies into and out of entries, and malloc/free, happen
 * outside the stripe lock where they can; the copy out on a hit happens under it, because
 * the entry may be evicted the moment the lock is dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/kv/kv_types.h"
#include "kv_cache.h"

#define VERSION_SLOTS 1024u
#define MAX_STRIPES 4096u
#define MIN_BUCKETS 16u

struct entry {
	struct entry *hnext;        /* bucket chain; also links entries being freed */
	struct entry *prev, *next;  /* LRU list, most recently used first */
	uint64_t hash;
	uint64_t charge;            /* bytes counted against the budget */
	uint32_t vlen;
	uint16_t klen;
	uint8_t ks;
	uint8_t data[];             /* key bytes, then value bytes */
};

struct stripe {
	pthread_mutex_t lock;
	struct entry **buckets;
	size_t nbuckets;
	size_t nentries;
	struct entry *mru, *lru;
	uint64_t used, budget;
	uint64_t hits, misses, fills, stores, stale_drops, evictions, invalidations;
	/* Versions are bumped under the lock but read lock free by kv_cache_ticket(). */
	_Atomic uint64_t version[VERSION_SLOTS];
} __attribute__((aligned(64)));

struct kv_cache {
	uint32_t nstripes;
	uint32_t stripe_bits;
	uint64_t budget;
	uint64_t max_charge; /* largest entry a stripe accepts */
	struct stripe *stripes;
};

/* ---- hashing ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t key_hash(uint8_t ks, const void *key, uint16_t klen)
{
	const uint8_t *p = key;
	uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)ks << 56) ^ klen;
	size_t n = klen;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ull;
		h = (h << 29) | (h >> 35);
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, n);
	h ^= w;
	return mix64(h);
}

static struct stripe *stripe_of(const struct kv_cache *c, uint64_t h)
{
	return &c->stripes[c->stripe_bits ? h >> (64 - c->stripe_bits) : 0];
}

static _Atomic uint64_t *version_of(struct stripe *s, uint64_t h)
{
	return &s->version[(h >> 32) & (VERSION_SLOTS - 1)];
}

static bool valid_key(const void *key, uint16_t klen)
{
	return key && klen >= 1 && klen <= KV_MAX_KEY_LEN;
}

/* ---- stripe internals (stripe lock held) ---- */

static struct entry **bucket_of(struct stripe *s, uint64_t h)
{
	return &s->buckets[h & (s->nbuckets - 1)];
}

static struct entry **find_link(struct stripe *s, uint64_t h, uint8_t ks, const void *key,
				uint16_t klen)
{
	struct entry **link = bucket_of(s, h);
	for (struct entry *e = *link; e; link = &e->hnext, e = e->hnext) {
		if (e->hash == h && e->ks == ks && e->klen == klen && memcmp(e->data, key, klen) == 0)
			return link;
	}
	return NULL;
}

static void lru_unlink(struct stripe *s, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		s->mru = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		s->lru = e->prev;
}

static void lru_push_front(struct stripe *s, struct entry *e)
{
	e->prev = NULL;
	e->next = s->mru;
	if (s->mru)
		s->mru->prev = e;
	else
		s->lru = e;
	s->mru = e;
}

/* Unlinks the entry at *link from the table and the LRU list and puts it on *dead. */
static void remove_at(struct stripe *s, struct entry **link, struct entry **dead)
{
	struct entry *e = *link;
	*link = e->hnext;
	lru_unlink(s, e);
	s->used -= e->charge;
	s->nentries--;
	e->hnext = *dead;
	*dead = e;
}

static void remove_entry(struct stripe *s, struct entry *e, struct entry **dead)
{
	struct entry **link = bucket_of(s, e->hash);
	while (*link != e)
		link = &(*link)->hnext;
	remove_at(s, link, dead);
}

/* Doubles the bucket array when it is fuller than one entry per bucket. Failure to grow only
 * makes chains longer. */
static void maybe_grow(struct stripe *s)
{
	if (s->nentries <= s->nbuckets)
		return;
	size_t n = s->nbuckets * 2;
	struct entry **b = calloc(n, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct entry *e = s->buckets[i];
		while (e) {
			struct entry *next = e->hnext;
			e->hnext = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

/* Inserts e (replacing an entry with the same key) and evicts from the LRU end until the
 * stripe is within its budget again. e itself always fits (max_charge <= budget). */
static void insert(struct stripe *s, struct entry *e, struct entry **dead)
{
	struct entry **link = find_link(s, e->hash, e->ks, e->data, e->klen);
	if (link)
		remove_at(s, link, dead);
	struct entry **b = bucket_of(s, e->hash);
	e->hnext = *b;
	*b = e;
	lru_push_front(s, e);
	s->used += e->charge;
	s->nentries++;
	while (s->used > s->budget && s->lru != e) {
		remove_entry(s, s->lru, dead);
		s->evictions++;
	}
	maybe_grow(s);
}

static void free_list(struct entry *dead)
{
	while (dead) {
		struct entry *next = dead->hnext;
		free(dead);
		dead = next;
	}
}

/* ---- public API ---- */

struct kv_cache *kv_cache_create_ex(uint64_t budget_bytes, uint32_t nr_stripes)
{
	if (budget_bytes == 0)
		return NULL;
	uint32_t n = 1, bits = 0;
	if (nr_stripes > MAX_STRIPES)
		nr_stripes = MAX_STRIPES;
	while (n < nr_stripes) {
		n <<= 1;
		bits++;
	}
	struct kv_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->stripes = aligned_alloc(64, sizeof(struct stripe) * n);
	if (!c->stripes) {
		free(c);
		return NULL;
	}
	memset(c->stripes, 0, sizeof(struct stripe) * n);
	c->nstripes = n;
	c->stripe_bits = bits;
	c->budget = budget_bytes;
	uint64_t share = budget_bytes / n;
	c->max_charge = share / 4;
	for (uint32_t i = 0; i < n; i++) {
		struct stripe *s = &c->stripes[i];
		s->budget = share;
		s->nbuckets = MIN_BUCKETS;
		s->buckets = calloc(MIN_BUCKETS, sizeof(*s->buckets));
		if (!s->buckets || pthread_mutex_init(&s->lock, NULL) != 0) {
			free(s->buckets);
			s->buckets = NULL;
			c->nstripes = i;
			kv_cache_destroy(c);
			return NULL;
		}
	}
	return c;
}

struct kv_cache *kv_cache_create(uint64_t budget_bytes)
{
	return kv_cache_create_ex(budget_bytes, KV_CACHE_DEFAULT_STRIPES);
}

void kv_cache_destroy(struct kv_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nstripes; i++) {
		struct stripe *s = &c->stripes[i];
		struct entry *e = s->mru;
		while (e) {
			struct entry *next = e->next;
			free(e);
			e = next;
		}
		free(s->buckets);
		pthread_mutex_destroy(&s->lock);
	}
	free(c->stripes);
	free(c);
}

uint64_t kv_cache_ticket(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen)
{
	if (!c || !valid_key(key, klen))
		return 0;
	uint64_t h = key_hash(ks, key, klen);
	/* acquire: pairs with the bump of an invalidate that returned before this call, so the
	 * ticket is at least that new. */
	return atomic_load_explicit(version_of(stripe_of(c, h), h), memory_order_acquire);
}

/* A new entry holding copies of key and value, or NULL if it cannot be cached. */
static struct entry *make_entry(const struct kv_cache *c, uint64_t h, uint8_t ks, const void *key,
				uint16_t klen, const void *value, uint32_t vlen)
{
	uint64_t charge = sizeof(struct entry) + (uint64_t)klen + vlen;
	if (vlen > KV_CACHE_MAX_VALUE || charge > c->max_charge || (vlen && !value))
		return NULL;
	struct entry *e = malloc(sizeof(*e) + klen + vlen);
	if (!e)
		return NULL;
	e->hash = h;
	e->charge = charge;
	e->vlen = vlen;
	e->klen = klen;
	e->ks = ks;
	memcpy(e->data, key, klen);
	if (vlen)
		memcpy(e->data + klen, value, vlen);
	return e;
}

void kv_cache_fill(struct kv_cache *c, uint64_t ticket, uint8_t ks, const void *key,
		   uint16_t klen, const void *value, uint32_t vlen)
{
	if (!c || !valid_key(key, klen))
		return;
	uint64_t h = key_hash(ks, key, klen);
	struct stripe *s = stripe_of(c, h);
	/* Copy before locking; a stale ticket wastes the copy, which is the rare case. */
	struct entry *e = make_entry(c, h, ks, key, klen, value, vlen);
	if (!e)
		return;
	struct entry *dead = NULL;
	pthread_mutex_lock(&s->lock);
	if (atomic_load_explicit(version_of(s, h), memory_order_relaxed) == ticket) {
		insert(s, e, &dead);
		s->fills++;
	} else {
		e->hnext = dead;
		dead = e;
		s->stale_drops++;
	}
	pthread_mutex_unlock(&s->lock);
	free_list(dead);
}

void kv_cache_store(struct kv_cache *c, uint64_t ticket, uint8_t ks, const void *key,
		    uint16_t klen, const void *value, uint32_t vlen)
{
	if (!c || !valid_key(key, klen))
		return;
	uint64_t h = key_hash(ks, key, klen);
	struct stripe *s = stripe_of(c, h);
	struct entry *e = make_entry(c, h, ks, key, klen, value, vlen);
	struct entry *dead = NULL;
	pthread_mutex_lock(&s->lock);
	_Atomic uint64_t *ver = version_of(s, h);
	bool current = atomic_load_explicit(ver, memory_order_relaxed) == ticket;
	if (current && e) {
		insert(s, e, &dead);
		s->stores++;
	} else {
		/* Stale ticket (the device order of the overlapping operations is unknown) or a
		 * value the cache does not keep: the old entry must not survive either way. */
		struct entry **link = find_link(s, h, ks, key, klen);
		if (link) {
			remove_at(s, link, &dead);
			s->invalidations++;
		}
		if (!current)
			s->stale_drops++;
		if (e) {
			e->hnext = dead;
			dead = e;
		}
	}
	atomic_store_explicit(ver, atomic_load_explicit(ver, memory_order_relaxed) + 1,
			      memory_order_release);
	pthread_mutex_unlock(&s->lock);
	free_list(dead);
}

void kv_cache_invalidate(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen)
{
	if (!c || !valid_key(key, klen))
		return;
	uint64_t h = key_hash(ks, key, klen);
	struct stripe *s = stripe_of(c, h);
	struct entry *dead = NULL;
	pthread_mutex_lock(&s->lock);
	_Atomic uint64_t *ver = version_of(s, h);
	atomic_store_explicit(ver, atomic_load_explicit(ver, memory_order_relaxed) + 1,
			      memory_order_release);
	struct entry **link = find_link(s, h, ks, key, klen);
	if (link) {
		remove_at(s, link, &dead);
		s->invalidations++;
	}
	pthread_mutex_unlock(&s->lock);
	free_list(dead);
}

void kv_cache_clear(struct kv_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nstripes; i++) {
		struct stripe *s = &c->stripes[i];
		struct entry *dead = NULL;
		pthread_mutex_lock(&s->lock);
		for (uint32_t v = 0; v < VERSION_SLOTS; v++) {
			atomic_store_explicit(&s->version[v],
					      atomic_load_explicit(&s->version[v], memory_order_relaxed) + 1,
					      memory_order_release);
		}
		while (s->mru)
			remove_entry(s, s->mru, &dead);
		pthread_mutex_unlock(&s->lock);
		free_list(dead);
	}
}

int kv_cache_get(struct kv_cache *c, uint8_t ks, const void *key, uint16_t klen, uint32_t offset,
		 void *dst, uint32_t dst_len, uint32_t *stored_size, uint32_t *copied)
{
	if (!c || !valid_key(key, klen) || (dst_len && !dst))
		return KV_ERR_CACHE_NO_CACHED_KEY;
	uint64_t h = key_hash(ks, key, klen);
	struct stripe *s = stripe_of(c, h);
	pthread_mutex_lock(&s->lock);
	struct entry **link = find_link(s, h, ks, key, klen);
	struct entry *e = link ? *link : NULL;
	if (!e || offset > e->vlen) {
		s->misses++;
		pthread_mutex_unlock(&s->lock);
		return KV_ERR_CACHE_NO_CACHED_KEY;
	}
	uint32_t n = e->vlen - offset;
	if (n > dst_len)
		n = dst_len;
	if (n)
		memcpy(dst, e->data + e->klen + offset, n);
	if (stored_size)
		*stored_size = e->vlen;
	if (copied)
		*copied = n;
	lru_unlink(s, e);
	lru_push_front(s, e);
	s->hits++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void kv_cache_stats(struct kv_cache *c, struct kv_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	st->budget_bytes = c->budget;
	for (uint32_t i = 0; i < c->nstripes; i++) {
		struct stripe *s = &c->stripes[i];
		pthread_mutex_lock(&s->lock);
		st->hits += s->hits;
		st->misses += s->misses;
		st->fills += s->fills;
		st->stores += s->stores;
		st->stale_drops += s->stale_drops;
		st->evictions += s->evictions;
		st->invalidations += s->invalidations;
		st->bytes_used += s->used;
		st->entries += s->nentries;
		pthread_mutex_unlock(&s->lock);
	}
}
