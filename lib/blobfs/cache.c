/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared cache: a bounded pool of buffers ("units", 64 KiB by default) of DMA memory,
 * so the device reads into and writes from them directly. Each file finds its units in its
 * own small hash table under its own lock; there is no global index and no global lock on a
 * hit. Page bitmaps say which 4 KiB pages of a unit are valid, dirty, being loaded, or were
 * read ahead and not yet used.
 *
 * Eviction is CLOCK over the pool: a shared atomic hand, a per-unit reference bit set on
 * every hit. A unit is taken from its file only if it is clean, not pinned and not loading,
 * and only if the file's cache lock can be had without waiting (the evictor holds the unit's
 * lock, which the normal order takes after the file's). The pool grows lazily, in chunks,
 * up to the configured size.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bfs.h"
#include "lib/common/clock.h"

#define CHUNK_UNITS 32u
#define EMPTY UINT64_MAX

int bfs_cache_init(struct blobfs *fs)
{
	struct bfs_cache *c = &fs->cache;
	memset(c, 0, sizeof(*c));
	c->unit_size = fs->opts.cache_unit;
	c->unit_shift = (uint32_t)__builtin_ctz(c->unit_size);
	c->unit_pages = c->unit_size / BFS_PAGE;
	uint64_t n = fs->opts.cache_size / c->unit_size;
	if (n < 16)
		n = 16;
	c->max_units = (uint32_t)BFS_MIN(n, (uint64_t)UINT32_MAX / 2);
	c->units = calloc(c->max_units, sizeof(*c->units));
	c->chunks = calloc((c->max_units + CHUNK_UNITS - 1) / CHUNK_UNITS, sizeof(*c->chunks));
	if (!c->units || !c->chunks)
		return bfs_err(-ENOMEM, "out of memory for a cache of %u buffers", c->max_units);
	for (uint32_t i = 0; i < c->max_units; i++)
		pthread_mutex_init(&c->units[i].lock, NULL);
	pthread_mutex_init(&c->grow_lock, NULL);
	c->dirty_limit = (uint64_t)c->max_units * c->unit_pages / 2;
	return 0;
}

void bfs_cache_fini(struct blobfs *fs)
{
	struct bfs_cache *c = &fs->cache;
	if (c->units)
		for (uint32_t i = 0; i < c->max_units; i++)
			pthread_mutex_destroy(&c->units[i].lock);
	for (uint32_t i = 0; i < c->nchunks; i++)
		unvme_dma_free(c->chunks[i]);
	free(c->chunks);
	free(c->units);
	pthread_mutex_destroy(&c->grow_lock);
	memset(c, 0, sizeof(*c));
}

/* Adds a chunk of buffers; false when the pool is at its size (or out of DMA memory). */
static bool grow(struct bfs_cache *c)
{
	pthread_mutex_lock(&c->grow_lock);
	uint32_t have = atomic_load(&c->nalloc);
	bool ok = false;
	if (have < c->max_units) {
		uint32_t n = BFS_MIN(CHUNK_UNITS, c->max_units - have);
		uint8_t *mem = unvme_dma_alloc((size_t)n * c->unit_size, BFS_PAGE);
		if (mem) {
			c->chunks[c->nchunks++] = mem;
			for (uint32_t i = 0; i < n; i++)
				c->units[have + i].buf = mem + (size_t)i * c->unit_size;
			atomic_store(&c->nalloc, have + n);
			ok = true;
		} else {
			/* No more DMA memory (hugepages used up): the pool stays at this size. */
			atomic_store(&c->grow_failed, true);
		}
	}
	pthread_mutex_unlock(&c->grow_lock);
	return ok;
}

/* Takes u if it is free, or evictable when evict is set. u->lock is held by the caller. */
static bool try_take(struct blobfs *fs, struct bfs_unit *u, bool evict)
{
	if (!u->owner)
		return !u->claimed;
	if (!evict)
		return false;
	struct bfs_inode *in = u->owner;
	if (atomic_load(&u->pins))
		return false;
	if (pthread_mutex_trylock(&in->cache_lock) != 0)
		return false;
	bool ok = atomic_load(&u->pins) == 0 && !u->dirty && !u->loading;
	if (ok) {
		bfs_umap_remove(&in->units, u->index);
		u->owner = NULL;
		atomic_fetch_add(&fs->st.evictions, 1);
	}
	pthread_mutex_unlock(&in->cache_lock);
	return ok;
}

struct bfs_unit *bfs_cache_claim(struct blobfs *fs)
{
	struct bfs_cache *c = &fs->cache;
	for (unsigned attempt = 0;; attempt++) {
		uint32_t n = atomic_load(&c->nalloc);
		/* Until the pool has its full size nothing is evicted: a few probes for a free unit,
		 * then it grows. At full size, two sweeps give every referenced unit its second
		 * chance before it goes. */
		bool full = n >= c->max_units || atomic_load(&c->grow_failed);
		for (uint32_t k = 0; n && k < (full ? 2 * n + 8 : 8); k++) {
			struct bfs_unit *u = &c->units[atomic_fetch_add(&c->hand, 1) % n];
			if (full && atomic_exchange(&u->ref, 0))
				continue;
			if (pthread_mutex_trylock(&u->lock) != 0)
				continue;
			bool got = try_take(fs, u, full);
			if (got) {
				u->claimed = true;
				u->valid = u->dirty = u->loading = u->ahead = 0;
			}
			pthread_mutex_unlock(&u->lock);
			if (got)
				return u;
		}
		if (grow(c))
			continue;
		/* Everything is dirty, pinned or loading: let the flusher clean some. */
		if (attempt > 2000) {
			bfs_err(-ENOMEM, "the cache is exhausted: all %u buffers are in use", c->max_units);
			return NULL;
		}
		bfs_flusher_kick(fs);
		if (attempt < 50)
			sched_yield();
		else
			usleep(200);
	}
}

void bfs_cache_unclaim(struct bfs_unit *u)
{
	pthread_mutex_lock(&u->lock);
	u->claimed = false;
	pthread_mutex_unlock(&u->lock);
}

/* ---- per-file unit tables ---- */

static uint32_t uhash(uint64_t k, uint32_t cap)
{
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

struct bfs_unit *bfs_umap_find(const struct bfs_umap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (uint32_t i = uhash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == EMPTY)
			return NULL;
	}
}

static int umap_grow(struct bfs_umap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 16;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	struct bfs_unit **vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return bfs_err(-ENOMEM, "out of memory for a cache table");
	}
	for (uint32_t i = 0; i < cap; i++)
		keys[i] = EMPTY;
	for (uint32_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == EMPTY)
			continue;
		uint32_t j = uhash(m->keys[i], cap);
		while (keys[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int bfs_umap_insert(struct bfs_umap *m, uint64_t key, struct bfs_unit *u)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		int rc = umap_grow(m);
		if (rc)
			return rc;
	}
	uint32_t i = uhash(key, m->cap);
	while (m->keys[i] != EMPTY)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = u;
	m->n++;
	return 0;
}

void bfs_umap_remove(struct bfs_umap *m, uint64_t key)
{
	if (!m->cap)
		return;
	uint32_t i = uhash(key, m->cap);
	while (m->keys[i] != key) {
		if (m->keys[i] == EMPTY)
			return;
		i = (i + 1) & (m->cap - 1);
	}
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	uint32_t j = i;
	for (;;) {
		m->keys[i] = EMPTY;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (m->keys[j] == EMPTY) {
				m->n--;
				return;
			}
			uint32_t h = uhash(m->keys[j], m->cap);
			/* Move j back to i unless its home lies cyclically in (i, j]. */
			if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
				break;
		}
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
}

/* ---- units of a file ---- */

struct bfs_unit *bfs_cache_get(struct blobfs *fs, struct bfs_inode *in, uint64_t index, bool create)
{
	struct bfs_unit *u = bfs_umap_find(&in->units, index);
	if (u || !create) {
		if (u) {
			atomic_fetch_add(&u->pins, 1);
			if (!atomic_load_explicit(&u->ref, memory_order_relaxed))
				atomic_store_explicit(&u->ref, 1, memory_order_relaxed);
		}
		return u;
	}
	pthread_mutex_unlock(&in->cache_lock);
	struct bfs_unit *nu = bfs_cache_claim(fs);
	pthread_mutex_lock(&in->cache_lock);
	if (!nu)
		return NULL;
	u = bfs_umap_find(&in->units, index);
	if (u) {
		/* Someone else loaded it meanwhile. */
		bfs_cache_unclaim(nu);
		atomic_fetch_add(&u->pins, 1);
		return u;
	}
	if (bfs_umap_insert(&in->units, index, nu) != 0) {
		bfs_cache_unclaim(nu);
		return NULL;
	}
	pthread_mutex_lock(&nu->lock);
	nu->owner = in;
	nu->claimed = false;
	nu->index = index;
	nu->valid = nu->dirty = nu->loading = nu->ahead = 0;
	atomic_store(&nu->pins, 1);
	atomic_store(&nu->ref, 1);
	pthread_mutex_unlock(&nu->lock);
	return nu;
}

void bfs_cache_unpin(struct bfs_unit *u)
{
	atomic_fetch_sub(&u->pins, 1);
}

void bfs_cache_mark_dirty(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u, uint64_t pages)
{
	uint64_t add = pages & ~u->dirty;
	if (!add)
		return;
	u->dirty |= add;
	uint64_t n = (uint64_t)__builtin_popcountll(add);
	in->dirty_pages += n;
	atomic_fetch_add(&fs->cache.dirty_pages, n);
	bfs_dirty_list_add(fs, in);
}

void bfs_cache_clear_dirty(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u, uint64_t pages)
{
	uint64_t sub = pages & u->dirty;
	if (!sub)
		return;
	u->dirty &= ~sub;
	uint64_t n = (uint64_t)__builtin_popcountll(sub);
	in->dirty_pages -= n;
	atomic_fetch_sub(&fs->cache.dirty_pages, n);
}

void bfs_cache_drop(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u)
{
	bfs_cache_clear_dirty(fs, in, u, u->dirty);
	bfs_umap_remove(&in->units, u->index);
	pthread_mutex_lock(&u->lock);
	u->owner = NULL;
	u->claimed = false;
	u->valid = u->ahead = 0;
	atomic_store(&u->ref, 0);
	pthread_mutex_unlock(&u->lock);
}

void bfs_cache_drop_from(struct blobfs *fs, struct bfs_inode *in, uint64_t from, bool clean_only)
{
	struct bfs_umap *m = &in->units;
	if (!m->n)
		return;
	uint64_t *keys = malloc(m->n * sizeof(*keys));
	uint32_t k = 0;
	if (!keys) {
		/* Out of memory: fall back to one at a time (quadratic, but correct). */
		for (bool again = true; again;) {
			again = false;
			for (uint32_t i = 0; i < m->cap && !again; i++) {
				if (m->keys[i] == EMPTY || m->keys[i] < from)
					continue;
				struct bfs_unit *u = m->vals[i];
				if ((clean_only && u->dirty) || u->loading || atomic_load(&u->pins))
					continue;
				bfs_cache_drop(fs, in, u);
				again = true;
			}
		}
		return;
	}
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY && m->keys[i] >= from)
			keys[k++] = m->keys[i];
	for (uint32_t i = 0; i < k; i++) {
		struct bfs_unit *u;
		while ((u = bfs_umap_find(m, keys[i])) != NULL) {
			if (clean_only && (u->dirty || u->loading || atomic_load(&u->pins)))
				break;
			if (u->loading || atomic_load(&u->pins)) {
				/* A load (readahead) or a copy is under way: wait for it. Loads broadcast
				 * when done; a copy only unpins, so the wait is timed. */
				struct timespec ts = clock_deadline_ms(CLOCK_REALTIME, 1);
				pthread_cond_timedwait(&in->cache_cv, &in->cache_lock, &ts);
				continue;
			}
			bfs_cache_drop(fs, in, u);
			break;
		}
	}
	free(keys);
}

static int cmp_index(const void *a, const void *b)
{
	const struct bfs_unit *x = *(struct bfs_unit *const *)a, *y = *(struct bfs_unit *const *)b;
	return x->index < y->index ? -1 : x->index > y->index;
}

int bfs_cache_units_sorted(struct bfs_inode *in, struct bfs_unit ***out, uint32_t *n)
{
	struct bfs_umap *m = &in->units;
	struct bfs_unit **v = malloc((m->n ? m->n : 1) * sizeof(*v));
	if (!v)
		return bfs_err(-ENOMEM, "out of memory");
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY)
			v[k++] = m->vals[i];
	qsort(v, k, sizeof(*v), cmp_index);
	*out = v;
	*n = k;
	return 0;
}
