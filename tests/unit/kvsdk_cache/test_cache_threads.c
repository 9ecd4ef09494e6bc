/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The read cache under concurrent store/delete/retrieve, driven through the protocol of
 * kv_cache.h against a simulated device (a map with a lock per key and a history of values).
 *
 * Each thread owns private keys, for which its own model must match every retrieve exactly,
 * and all threads share a few keys, for which a retrieve may return only "the old value, the
 * new value or not found": a value the device held at some moment during the retrieve, or the
 * value a store/delete still in flight at the retrieve's start replaced (until that store or
 * delete completes, the cache may still serve the value it replaces). After all threads stop,
 * every cached entry must equal the device's value: no stale value survives. Runs under TSan
 * in the 'threaded' suite.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kv_cache.h"
#include "unvme/kv/kv_types.h"
#include "test_util.h"

enum { NT = 4, PRIV = 48, SHARED = 8, NKEYS = NT * PRIV + SHARED, OPS = 100000 };
#define KLEN 16
#define MAX_VLEN 400

struct dkey {
	pthread_mutex_t lock;
	uint64_t cur;      /* value id on the device; 0 = absent */
	uint64_t seq;      /* operations applied so far */
	uint64_t *hist;    /* hist[s] = the value id after operation s (hist[0] = 0) */
	uint64_t active[NT]; /* per thread: seq when its in-flight store/delete began, or none */
	size_t cap;
	char name[KLEN];
};

static struct dkey keys[NKEYS];
static struct kv_cache *cache;
static atomic_int private_mismatch, shared_violation, torn;

/* ---- values: the id, then a pattern derived from it ---- */

static uint32_t value_len(uint64_t id)
{
	return (uint32_t)(8 + id % (MAX_VLEN - 8));
}

static void make_value(uint64_t id, uint8_t *buf)
{
	uint32_t n = value_len(id);
	memcpy(buf, &id, 8);
	for (uint32_t i = 8; i < n; i++)
		buf[i] = (uint8_t)(id * 31 + i);
}

/* The id a cached value carries, or UINT64_MAX if it is not an intact value. */
static uint64_t check_value(const uint8_t *buf, uint32_t n)
{
	uint64_t id;
	if (n < 8)
		return UINT64_MAX;
	memcpy(&id, buf, 8);
	if (n != value_len(id))
		return UINT64_MAX;
	for (uint32_t i = 8; i < n; i++)
		if (buf[i] != (uint8_t)(id * 31 + i))
			return UINT64_MAX;
	return id;
}

/* ---- the simulated device ---- */

static void dev_apply(struct dkey *k, uint64_t id)
{
	pthread_mutex_lock(&k->lock);
	if (k->seq + 1 == k->cap) {
		k->cap *= 2;
		k->hist = realloc(k->hist, k->cap * sizeof(*k->hist));
		if (!k->hist)
			abort();
	}
	k->cur = id;
	k->hist[++k->seq] = id;
	pthread_mutex_unlock(&k->lock);
}

static uint64_t dev_read(struct dkey *k)
{
	pthread_mutex_lock(&k->lock);
	uint64_t id = k->cur;
	pthread_mutex_unlock(&k->lock);
	return id;
}

static uint64_t dev_seq(struct dkey *k)
{
	pthread_mutex_lock(&k->lock);
	uint64_t s = k->seq;
	pthread_mutex_unlock(&k->lock);
	return s;
}

#define NONE UINT64_MAX

/* Marks the start (seq noted) or the end of thread me's store/delete of k. */
static void op_begin(struct dkey *k, int me)
{
	pthread_mutex_lock(&k->lock);
	k->active[me] = k->seq;
	pthread_mutex_unlock(&k->lock);
}

static void op_end(struct dkey *k, int me)
{
	pthread_mutex_lock(&k->lock);
	k->active[me] = NONE;
	pthread_mutex_unlock(&k->lock);
}

/* The oldest operation whose value a retrieve starting now may still see. */
static uint64_t dev_window_start(struct dkey *k)
{
	pthread_mutex_lock(&k->lock);
	uint64_t s = k->seq;
	for (int i = 0; i < NT; i++)
		if (k->active[i] < s)
			s = k->active[i];
	pthread_mutex_unlock(&k->lock);
	return s;
}

/* Was id the device's value after some operation in [from, to]? */
static bool dev_held(struct dkey *k, uint64_t from, uint64_t to, uint64_t id)
{
	bool found = false;
	pthread_mutex_lock(&k->lock);
	for (uint64_t s = from; s <= to && !found; s++)
		found = k->hist[s] == id;
	pthread_mutex_unlock(&k->lock);
	return found;
}

/* ---- the SDK side, following the protocol in kv_cache.h ---- */

static void jitter(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	if (((*seed >> 16) & 7) == 0)
		sched_yield();
}

static void sdk_store(struct dkey *k, uint64_t id, uint32_t *seed)
{
	uint8_t v[MAX_VLEN];
	make_value(id, v);
	kv_cache_invalidate(cache, 0, k->name, KLEN);
	uint64_t t = kv_cache_ticket(cache, 0, k->name, KLEN);
	jitter(seed);
	dev_apply(k, id);
	jitter(seed);
	kv_cache_store(cache, t, 0, k->name, KLEN, v, value_len(id));
}

static void sdk_delete(struct dkey *k, uint32_t *seed)
{
	kv_cache_invalidate(cache, 0, k->name, KLEN);
	jitter(seed);
	dev_apply(k, 0);
	jitter(seed);
	kv_cache_invalidate(cache, 0, k->name, KLEN);
}

/* The value id a retrieve returns (0: not found). */
static uint64_t sdk_retrieve(struct dkey *k, uint32_t *seed)
{
	uint8_t v[MAX_VLEN + 16];
	uint32_t stored = 0, copied = 0;
	if (kv_cache_get(cache, 0, k->name, KLEN, 0, v, sizeof(v), &stored, &copied) == 0) {
		uint64_t id = check_value(v, copied);
		if (id == UINT64_MAX || stored != copied)
			atomic_fetch_add(&torn, 1);
		return id;
	}
	uint64_t t = kv_cache_ticket(cache, 0, k->name, KLEN);
	jitter(seed);
	uint64_t id = dev_read(k);
	jitter(seed);
	if (id) {
		make_value(id, v);
		kv_cache_fill(cache, t, 0, k->name, KLEN, v, value_len(id));
	}
	return id;
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t model[PRIV] = {0};
	uint64_t counter = 0;
	uint32_t seed = 0x12345u + (uint32_t)me * 7919u;
	for (int op = 0; op < OPS; op++) {
		seed = seed * 1103515245u + 12345u;
		if (op % 9973 == 9972) {
			/* a format now and then, and stats read while others work */
			struct kv_cache_stats st;
			kv_cache_stats(cache, &st);
			if (me == 0)
				kv_cache_clear(cache);
		}
		uint32_t r = (seed >> 8) % 100;
		if (r < 60) {
			int i = (int)((seed >> 20) % PRIV);
			struct dkey *k = &keys[me * PRIV + i];
			if (r < 35) {
				if (sdk_retrieve(k, &seed) != model[i])
					atomic_fetch_add(&private_mismatch, 1);
			} else if (r < 55) {
				uint64_t id = ((uint64_t)(me + 1) << 40) | ++counter;
				sdk_store(k, id, &seed);
				model[i] = id;
			} else {
				sdk_delete(k, &seed);
				model[i] = 0;
			}
		} else {
			struct dkey *k = &keys[NT * PRIV + (seed >> 20) % SHARED];
			if (r < 85) {
				uint64_t from = dev_window_start(k);
				uint64_t id = sdk_retrieve(k, &seed);
				uint64_t to = dev_seq(k);
				if (!dev_held(k, from, to, id))
					atomic_fetch_add(&shared_violation, 1);
			} else if (r < 95) {
				op_begin(k, me);
				sdk_store(k, ((uint64_t)(me + 1) << 40) | ++counter, &seed);
				op_end(k, me);
			} else {
				op_begin(k, me);
				sdk_delete(k, &seed);
				op_end(k, me);
			}
		}
	}
	return NULL;
}

static void run(uint64_t budget, uint32_t stripes)
{
	cache = kv_cache_create_ex(budget, stripes);
	REQUIRE(cache != NULL);
	for (int i = 0; i < NKEYS; i++) {
		struct dkey *k = &keys[i];
		pthread_mutex_init(&k->lock, NULL);
		k->cur = k->seq = 0;
		for (int j = 0; j < NT; j++)
			k->active[j] = NONE;
		k->cap = 1024;
		k->hist = calloc(k->cap, sizeof(*k->hist));
		REQUIRE(k->hist != NULL);
		memset(k->name, 0, KLEN);
		snprintf(k->name, KLEN, "%s-%05d", i < NT * PRIV ? "priv" : "shrd", i);
	}
	atomic_store(&private_mismatch, 0);
	atomic_store(&shared_violation, 0);
	atomic_store(&torn, 0);
	pthread_t t[NT];
	for (int i = 0; i < NT; i++)
		REQUIRE(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&private_mismatch), 0);
	CHECK_EQ(atomic_load(&shared_violation), 0);
	CHECK_EQ(atomic_load(&torn), 0);

	/* Quiescent: whatever is cached is what the device holds. */
	int stale = 0, cached = 0;
	for (int i = 0; i < NKEYS; i++) {
		uint8_t v[MAX_VLEN];
		uint32_t copied = 0;
		if (kv_cache_get(cache, 0, keys[i].name, KLEN, 0, v, sizeof(v), NULL, &copied) == 0) {
			cached++;
			if (keys[i].cur == 0 || check_value(v, copied) != keys[i].cur)
				stale++;
		}
	}
	CHECK_EQ(stale, 0);
	struct kv_cache_stats st;
	kv_cache_stats(cache, &st);
	CHECK(st.bytes_used <= st.budget_bytes);
	CHECK_EQ(st.entries, (uint64_t)cached);
	/* the run must have exercised the cache, not just the device */
	CHECK(st.hits > 1000);
	CHECK(st.fills > 100);
	CHECK(st.stores > 100);
	printf("  budget %llu, %u stripes: hits %llu misses %llu fills %llu stores %llu stale drops "
	       "%llu evictions %llu entries %llu\n",
	       (unsigned long long)budget, stripes, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, (unsigned long long)st.fills,
	       (unsigned long long)st.stores, (unsigned long long)st.stale_drops,
	       (unsigned long long)st.evictions, (unsigned long long)st.entries);
	kv_cache_destroy(cache);
	cache = NULL;
	for (int i = 0; i < NKEYS; i++) {
		free(keys[i].hist);
		pthread_mutex_destroy(&keys[i].lock);
	}
}

/* Few stripes and a small budget: heavy lock sharing, version-slot sharing and eviction. */
static void test_concurrent_small_cache(void)
{
	run(64 << 10, 4);
}

/* The default layout with room for every key. */
static void test_concurrent_default_stripes(void)
{
	run(16 << 20, KV_CACHE_DEFAULT_STRIPES);
}

TEST_MAIN(TEST(test_concurrent_small_cache), TEST(test_concurrent_default_stripes))
