/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Slab allocator for the SDK's I/O buffers; the design is described in kv_slab.h.
 *
 * Locking: a per-class mutex protects the class's list of partly used segments and the
 * segments assigned to it; pool_lock protects the pool of empty segments, the region array and
 * the largest class. Order: class lock, then pool_lock. The per-thread caches are touched only
 * by their thread. Freeing finds an object's segment through an insert-only hash table keyed
 * by the 2 MiB aligned segment address, read without locks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/env.h"
#include "unvme/kv/kv_types.h"
#include "unvme/unvme.h"
#include "kv_slab.h"

#define SEG_SHIFT 21
#define SEG_SIZE ((size_t)1 << SEG_SHIFT)
#define MIN_SHIFT 6
#define BIG_CLASS (KV_SLAB_NR_CLASSES - 1) /* the 2 MiB + 4 KiB class: a whole region */
#define CLS_EMPTY (-1)                     /* segment in the pool */
#define CLS_BIG_TAIL (-2)                  /* second segment of a region held by a big object */
#define TC_MAX 64                          /* objects per class in a thread cache */
#define TC_MAX_BYTES ((size_t)256 << 10)   /* bytes per class in a thread cache */
#define MAX_REGIONS ((size_t)1 << 20)      /* 4 TiB: keeps the bookkeeping arithmetic sane */

struct seg {
	uint8_t *base;
	struct seg *prev, *next; /* in the class's partial list or in the pool */
	bool listed;
	_Atomic int cls;         /* class index, CLS_EMPTY or CLS_BIG_TAIL; read lock free by free */
	uint32_t obj_size;
	uint32_t cap;            /* objects per segment */
	uint32_t carved;         /* objects cut off the segment so far; the rest is untouched */
	uint32_t inuse;          /* objects out of the segment (in use or in a thread cache) */
	void *free;              /* returned objects, linked through their first word */
	struct seg *partner;     /* the other segment of the region */
};

struct region {
	uint8_t *base;
	struct seg seg[2];
};

struct seglist {
	struct seg *head, *tail;
};

struct slab_class {
	pthread_mutex_t lock;
	struct seglist partial; /* segments with objects left (free or not yet carved) */
	size_t size;
	uint32_t tc_cap;        /* thread cache bound; 0 = not cached per thread */
	uint64_t outstanding;
	uint64_t nsegs;
};

struct table_slot {
	_Atomic uintptr_t key; /* segment base address; 0 = empty */
	struct seg *_Atomic seg;
};

struct tcache {
	unsigned gen; /* the slab generation the cached objects belong to */
	uint32_t n[KV_SLAB_NR_CLASSES];
	void *obj[KV_SLAB_NR_CLASSES][TC_MAX];
};

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;
/* Bumped by every successful first init; a thread cache of an older generation holds objects
 * of a slab that no longer exists and is emptied without touching them. */
static _Atomic unsigned generation;
static _Atomic bool ready;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seglist pool;
static uint64_t pool_segs;
static struct region *regions;
static size_t nregions, max_regions;
static struct table_slot *table;
static size_t table_mask;
static struct slab_class classes[KV_SLAB_NR_CLASSES];
static _Atomic uint64_t failures;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t tc_key;
static _Thread_local struct tcache *my_tc;

/* ---- lists ---- */

static void list_push_head(struct seglist *l, struct seg *s)
{
	s->prev = NULL;
	s->next = l->head;
	if (l->head)
		l->head->prev = s;
	else
		l->tail = s;
	l->head = s;
	s->listed = true;
}

static void list_push_tail(struct seglist *l, struct seg *s)
{
	s->next = NULL;
	s->prev = l->tail;
	if (l->tail)
		l->tail->next = s;
	else
		l->head = s;
	l->tail = s;
	s->listed = true;
}

static void list_remove(struct seglist *l, struct seg *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		l->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		l->tail = s->prev;
	s->prev = s->next = NULL;
	s->listed = false;
}

/* ---- segment lookup ---- */

static size_t table_hash(uintptr_t base)
{
	return (size_t)(((uint64_t)(base >> SEG_SHIFT) * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Called with pool_lock held; the table has room for every segment of max_regions. */
static void table_insert(struct seg *s)
{
	uintptr_t key = (uintptr_t)s->base;
	for (size_t i = table_hash(key) & table_mask;; i = (i + 1) & table_mask) {
		uintptr_t k = atomic_load_explicit(&table[i].key, memory_order_relaxed);
		if (k == 0 || k == key) {
			atomic_store_explicit(&table[i].seg, s, memory_order_relaxed);
			/* release: a lock-free reader that sees the key sees the segment pointer */
			atomic_store_explicit(&table[i].key, key, memory_order_release);
			return;
		}
	}
}

static struct seg *table_find(const void *p)
{
	uintptr_t key = (uintptr_t)p & ~(uintptr_t)(SEG_SIZE - 1);
	for (size_t i = table_hash(key) & table_mask;; i = (i + 1) & table_mask) {
		uintptr_t k = atomic_load_explicit(&table[i].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&table[i].seg, memory_order_relaxed);
		if (k == 0)
			return NULL;
	}
}

/* The segment of object p and its class, or NULL when p is not the start of a live-looking
 * object (wrong alignment for its class, or not slab memory). */
static struct seg *owner_of(const void *p, int *cls)
{
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return NULL;
	struct seg *s = table_find(p);
	if (!s)
		return NULL;
	int c = atomic_load_explicit(&s->cls, memory_order_relaxed);
	if (c < 0)
		return NULL;
	size_t off = (size_t)((const uint8_t *)p - s->base);
	if (c == BIG_CLASS ? off != 0 : (off & (classes[c].size - 1)) != 0)
		return NULL;
	*cls = c;
	return s;
}

/* ---- regions and the pool (pool_lock held) ---- */

static bool region_add(void)
{
	if (nregions == max_regions)
		return false;
	uint8_t *base = unvme_dma_alloc(KV_SLAB_REGION_SIZE, SEG_SIZE);
	if (!base)
		return false;
	struct region *r = &regions[nregions++];
	r->base = base;
	for (int i = 0; i < 2; i++) {
		struct seg *s = &r->seg[i];
		memset(s, 0, sizeof(*s));
		s->base = base + (size_t)i * SEG_SIZE;
		s->partner = &r->seg[1 - i];
		atomic_store_explicit(&s->cls, CLS_EMPTY, memory_order_relaxed);
		table_insert(s);
		/* A wholly empty region goes to the tail, where big objects look for pairs and
		 * small classes take segments last. */
		list_push_tail(&pool, s);
		pool_segs++;
	}
	return true;
}

/* An empty segment for class c, or NULL when the budget is spent. */
static struct seg *seg_acquire(int c)
{
	pthread_mutex_lock(&pool_lock);
	if (!pool.head)
		region_add();
	struct seg *s = pool.head;
	if (s) {
		list_remove(&pool, s);
		pool_segs--;
		s->obj_size = (uint32_t)classes[c].size;
		s->cap = (uint32_t)(SEG_SIZE / classes[c].size);
		s->carved = 0;
		s->inuse = 0;
		s->free = NULL;
		atomic_store_explicit(&s->cls, c, memory_order_relaxed);
	}
	pthread_mutex_unlock(&pool_lock);
	return s;
}

/* Puts an empty segment back in the pool. A segment whose partner is also empty goes to the
 * tail with its partner, so whole regions stay together for big objects. */
static void seg_release_locked(struct seg *s)
{
	atomic_store_explicit(&s->cls, CLS_EMPTY, memory_order_relaxed);
	s->free = NULL;
	if (atomic_load_explicit(&s->partner->cls, memory_order_relaxed) == CLS_EMPTY) {
		list_remove(&pool, s->partner);
		list_push_tail(&pool, s->partner);
		list_push_tail(&pool, s);
	} else {
		list_push_head(&pool, s);
	}
	pool_segs++;
}

/* ---- class lists (class lock held) ---- */

/* Takes up to n objects of class c into out[]; returns how many. */
static uint32_t class_take(int c, void **out, uint32_t n)
{
	struct slab_class *k = &classes[c];
	uint32_t got = 0;
	while (got < n) {
		struct seg *s = k->partial.head;
		if (!s) {
			s = seg_acquire(c);
			if (!s)
				break;
			k->nsegs++;
			list_push_head(&k->partial, s);
		}
		while (got < n && s->inuse < s->cap) {
			void *o;
			if (s->free) {
				o = s->free;
				s->free = *(void **)o;
			} else {
				o = s->base + (size_t)s->carved++ * s->obj_size;
			}
			s->inuse++;
			out[got++] = o;
		}
		if (s->inuse == s->cap)
			list_remove(&k->partial, s);
	}
	k->outstanding += got;
	return got;
}

static void class_put(int c, struct seg *s, void *o)
{
	struct slab_class *k = &classes[c];
	*(void **)o = s->free;
	s->free = o;
	if (s->inuse == s->cap)
		list_push_head(&k->partial, s);
	s->inuse--;
	k->outstanding--;
	if (s->inuse == 0) {
		list_remove(&k->partial, s);
		k->nsegs--;
		pthread_mutex_lock(&pool_lock);
		seg_release_locked(s);
		pthread_mutex_unlock(&pool_lock);
	}
}

/* ---- the largest class: whole regions (pool_lock) ---- */

static void *big_alloc(void)
{
	void *p = NULL;
	pthread_mutex_lock(&pool_lock);
	struct region *r = NULL;
	for (size_t i = 0; i < nregions && !r; i++) {
		if (atomic_load_explicit(&regions[i].seg[0].cls, memory_order_relaxed) == CLS_EMPTY &&
		    atomic_load_explicit(&regions[i].seg[1].cls, memory_order_relaxed) == CLS_EMPTY)
			r = &regions[i];
	}
	if (!r && region_add())
		r = &regions[nregions - 1];
	if (r) {
		list_remove(&pool, &r->seg[0]);
		list_remove(&pool, &r->seg[1]);
		pool_segs -= 2;
		atomic_store_explicit(&r->seg[0].cls, BIG_CLASS, memory_order_relaxed);
		atomic_store_explicit(&r->seg[1].cls, CLS_BIG_TAIL, memory_order_relaxed);
		classes[BIG_CLASS].outstanding++;
		classes[BIG_CLASS].nsegs += 2;
		p = r->base;
	}
	pthread_mutex_unlock(&pool_lock);
	return p;
}

static void big_free(struct seg *s)
{
	pthread_mutex_lock(&pool_lock);
	classes[BIG_CLASS].outstanding--;
	classes[BIG_CLASS].nsegs -= 2;
	atomic_store_explicit(&s->partner->cls, CLS_EMPTY, memory_order_relaxed);
	atomic_store_explicit(&s->cls, CLS_EMPTY, memory_order_relaxed);
	list_push_tail(&pool, s);
	list_push_tail(&pool, s->partner);
	pool_segs += 2;
	pthread_mutex_unlock(&pool_lock);
}

/* ---- thread caches ---- */

/* Returns n objects of class c from the array to their segments (one lock round). */
static void class_put_many(int c, void **objs, uint32_t n)
{
	pthread_mutex_lock(&classes[c].lock);
	for (uint32_t i = 0; i < n; i++)
		class_put(c, table_find(objs[i]), objs[i]);
	pthread_mutex_unlock(&classes[c].lock);
}

static void tcache_flush_all(struct tcache *tc)
{
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++) {
		if (tc->n[c])
			class_put_many(c, tc->obj[c], tc->n[c]);
		tc->n[c] = 0;
	}
}

/* Thread exit: hand the cache back if it belongs to the live slab. Racing kv_slab_fini()
 * is excluded by the kv_slab.h contract. */
static void tcache_destructor(void *arg)
{
	struct tcache *tc = arg;
	if (atomic_load_explicit(&ready, memory_order_acquire) &&
	    tc->gen == atomic_load_explicit(&generation, memory_order_acquire))
		tcache_flush_all(tc);
	/* A later destructor of this thread that frees slab memory must not find the freed
	 * cache; it gets a fresh one (and this destructor runs again for it). */
	my_tc = NULL;
	free(tc);
}

static void make_key(void)
{
	if (pthread_key_create(&tc_key, tcache_destructor) != 0)
		abort(); /* only fails when the process is out of keys: nothing sensible to do */
}

/* The calling thread's cache, or NULL if one cannot be allocated (callers then go to the
 * shared lists directly). */
static struct tcache *tcache_get(void)
{
	unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
	struct tcache *tc = my_tc;
	if (tc) {
		if (tc->gen != gen) {
			memset(tc->n, 0, sizeof(tc->n));
			tc->gen = gen;
		}
		return tc;
	}
	pthread_once(&key_once, make_key);
	tc = calloc(1, sizeof(*tc));
	if (!tc)
		return NULL;
	if (pthread_setspecific(tc_key, tc) != 0) {
		free(tc);
		return NULL;
	}
	tc->gen = gen;
	my_tc = tc;
	return tc;
}

/* ---- public API ---- */

static int class_of(size_t size)
{
	if (size <= KV_SLAB_MIN_SIZE)
		return 0;
	int shift = 64 - __builtin_clzll((unsigned long long)(size - 1));
	return shift > SEG_SHIFT ? BIG_CLASS : shift - MIN_SHIFT;
}

static void *alloc_slow(int c, struct tcache *tc)
{
	void *batch[TC_MAX];
	uint32_t want = 1;
	if (tc && classes[c].tc_cap)
		want = classes[c].tc_cap / 2;
	for (int attempt = 0; attempt < 2; attempt++) {
		pthread_mutex_lock(&classes[c].lock);
		uint32_t got = class_take(c, batch, want);
		pthread_mutex_unlock(&classes[c].lock);
		if (got) {
			for (uint32_t i = 1; i < got; i++)
				tc->obj[c][tc->n[c]++] = batch[i];
			return batch[0];
		}
		/* Out of budget: what this thread has parked may empty a segment. */
		if (!tc)
			break;
		tcache_flush_all(tc);
	}
	atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
	return NULL;
}

void *kv_slab_alloc(size_t size)
{
	if (size > KV_SLAB_MAX_SIZE || !atomic_load_explicit(&ready, memory_order_acquire))
		return NULL;
	int c = class_of(size);
	struct tcache *tc = tcache_get();
	if (c == BIG_CLASS) {
		void *p = big_alloc();
		if (!p && tc) {
			tcache_flush_all(tc);
			p = big_alloc();
		}
		if (!p)
			atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
		return p;
	}
	if (tc && tc->n[c])
		return tc->obj[c][--tc->n[c]];
	return alloc_slow(c, tc);
}

void kv_slab_free(void *p)
{
	if (!p)
		return;
	int c;
	struct seg *s = owner_of(p, &c);
	if (!s) {
		if (unvme_log_on())
			fprintf(stderr, "kvsdk: kv_slab_free(%p): not a slab object, ignored\n", p);
		return;
	}
	if (c == BIG_CLASS) {
		big_free(s);
		return;
	}
	uint32_t cap = classes[c].tc_cap;
	struct tcache *tc = cap ? tcache_get() : NULL;
	if (!tc) {
		pthread_mutex_lock(&classes[c].lock);
		class_put(c, s, p);
		pthread_mutex_unlock(&classes[c].lock);
		return;
	}
	if (tc->n[c] == cap) {
		/* Full: return the older half, keep the recently freed (cache-warm) half. */
		uint32_t half = cap / 2;
		class_put_many(c, tc->obj[c], half);
		memmove(tc->obj[c], tc->obj[c] + half, (cap - half) * sizeof(void *));
		tc->n[c] = cap - half;
	}
	tc->obj[c][tc->n[c]++] = p;
}

size_t kv_slab_size_of(const void *p)
{
	int c;
	if (!p || !owner_of(p, &c))
		return 0;
	return classes[c].size;
}

void kv_slab_thread_flush(void)
{
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return;
	struct tcache *tc = tcache_get();
	if (tc)
		tcache_flush_all(tc);
}

void kv_slab_stats(struct kv_slab_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->nr_classes = KV_SLAB_NR_CLASSES;
	pthread_mutex_lock(&init_lock);
	if (!atomic_load_explicit(&ready, memory_order_relaxed)) {
		pthread_mutex_unlock(&init_lock);
		return;
	}
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++) {
		pthread_mutex_lock(&classes[c].lock);
		pthread_mutex_lock(&pool_lock);
		st->classes[c].size = classes[c].size;
		st->classes[c].outstanding = classes[c].outstanding;
		st->classes[c].segments = classes[c].nsegs;
		pthread_mutex_unlock(&pool_lock);
		pthread_mutex_unlock(&classes[c].lock);
		st->outstanding_bytes += classes[c].size * st->classes[c].outstanding;
	}
	pthread_mutex_lock(&pool_lock);
	st->budget_bytes = (uint64_t)max_regions * KV_SLAB_REGION_SIZE;
	st->reserved_bytes = (uint64_t)nregions * KV_SLAB_REGION_SIZE;
	st->free_segment_bytes = pool_segs * SEG_SIZE;
	pthread_mutex_unlock(&pool_lock);
	st->alloc_failures = atomic_load_explicit(&failures, memory_order_relaxed);
	pthread_mutex_unlock(&init_lock);
}

/* The class mutexes live across init/fini cycles (a thread may still hold a stale cache). */
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;

static void init_class_locks(void)
{
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++)
		pthread_mutex_init(&classes[c].lock, NULL);
}

static void teardown(void)
{
	for (size_t i = 0; i < nregions; i++)
		unvme_dma_free(regions[i].base);
	free(regions);
	free(table);
	regions = NULL;
	table = NULL;
	nregions = max_regions = 0;
	pool.head = pool.tail = NULL;
	pool_segs = 0;
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++) {
		classes[c].partial.head = classes[c].partial.tail = NULL;
		classes[c].outstanding = classes[c].nsegs = 0;
	}
}

int kv_slab_init(uint64_t budget_bytes, int policy)
{
	if (budget_bytes == 0 || (policy != SLAB_MM_ALLOC_HUGE && policy != SLAB_MM_ALLOC_POSIX))
		return -EINVAL;
	pthread_mutex_lock(&init_lock);
	if (refs > 0) {
		refs++;
		pthread_mutex_unlock(&init_lock);
		return 0;
	}
	if (budget_bytes > unvme_dma_mem_available()) {
		pthread_mutex_unlock(&init_lock);
		return -ENOSPC;
	}
	uint64_t want = (budget_bytes + KV_SLAB_REGION_SIZE - 1) / KV_SLAB_REGION_SIZE;
	if (budget_bytes > UINT64_MAX - KV_SLAB_REGION_SIZE || want > MAX_REGIONS)
		want = MAX_REGIONS;
	max_regions = (size_t)want;
	/* At most half full: a probe ends at an empty slot quickly. */
	size_t slots = 8;
	while (slots < 4 * max_regions)
		slots <<= 1;
	regions = calloc(max_regions, sizeof(*regions));
	table = calloc(slots, sizeof(*table));
	if (!regions || !table) {
		teardown();
		pthread_mutex_unlock(&init_lock);
		return -ENOMEM;
	}
	table_mask = slots - 1;
	pthread_once(&locks_once, init_class_locks);
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++) {
		struct slab_class *k = &classes[c];
		k->size = c == BIG_CLASS ? KV_SLAB_MAX_SIZE : (size_t)1 << (c + MIN_SHIFT);
		if (k->size <= 4096)
			k->tc_cap = TC_MAX;
		else if (k->size <= TC_MAX_BYTES / 2)
			k->tc_cap = (uint32_t)(TC_MAX_BYTES / k->size);
		else
			k->tc_cap = 0; /* big buffers: a lock per I/O is noise; stranding them is not */
	}
	if (policy == SLAB_MM_ALLOC_HUGE) {
		pthread_mutex_lock(&pool_lock);
		bool ok = true;
		while (ok && nregions < max_regions)
			ok = region_add();
		pthread_mutex_unlock(&pool_lock);
		if (!ok) {
			teardown();
			pthread_mutex_unlock(&init_lock);
			return -ENOMEM;
		}
	}
	atomic_store_explicit(&failures, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&generation, 1, memory_order_release);
	atomic_store_explicit(&ready, true, memory_order_release);
	refs = 1;
	pthread_mutex_unlock(&init_lock);
	return 0;
}

void kv_slab_fini(void)
{
	pthread_mutex_lock(&init_lock);
	if (refs > 0 && --refs == 0) {
		atomic_store_explicit(&ready, false, memory_order_release);
		atomic_fetch_add_explicit(&generation, 1, memory_order_release);
		teardown();
	}
	pthread_mutex_unlock(&init_lock);
}
