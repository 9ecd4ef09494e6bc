/* SPDX-License-Identifier: BSD-3-Clause */
/* The SDK's slab allocator under threads: frees from other threads, thread-exit flushing,
 * concurrent allocation with ownership checks. Runs under TSan in the 'threaded' suite. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kv_slab.h"
#include "unvme/kv/kv_types.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define MIB ((size_t)1 << 20)

/* ---- allocate on one thread, free on another ---- */

enum { XN = 6000 };
static void *xobjs[XN];

static void *alloc_many(void *arg)
{
	(void)arg;
	for (int i = 0; i < XN; i++) {
		xobjs[i] = kv_slab_alloc(i % 3 == 0 ? 4096 : (size_t)(16 + i % 240));
		if (xobjs[i])
			memset(xobjs[i], 0x5A, 16);
	}
	return NULL;
}

static void *free_many(void *arg)
{
	(void)arg;
	for (int i = 0; i < XN; i++)
		kv_slab_free(xobjs[i]);
	return NULL;
}

static void test_free_on_another_thread(void)
{
	REQUIRE(kv_slab_init(64 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, alloc_many, NULL) == 0);
	pthread_join(t, NULL);
	int missing = 0;
	for (int i = 0; i < XN; i++)
		missing += xobjs[i] == NULL;
	CHECK_EQ(missing, 0);
	REQUIRE(pthread_create(&t, NULL, free_many, NULL) == 0);
	pthread_join(t, NULL);
	/* Both threads have exited: their caches went back, so every segment is empty again. */
	struct kv_slab_stats st;
	kv_slab_stats(&st);
	CHECK_EQ(st.outstanding_bytes, 0);
	CHECK_EQ(st.free_segment_bytes, st.reserved_bytes);
	CHECK(st.reserved_bytes > 0);
	kv_slab_fini();
}

/* ---- four threads allocating and freeing, trading objects ---- */

enum { NTHREADS = 4, ITERS = 60000, LIVE = 48 };

/* A handoff slot per thread: others drop objects here, the owner frees them. */
struct mailbox {
	pthread_mutex_t lock;
	void *objs[256];
	int n;
};
static struct mailbox boxes[NTHREADS];
static atomic_int corruptions;
static atomic_int failures;

static void stamp(uint8_t *p, size_t len, uint64_t tag)
{
	memcpy(p, &tag, 8);
	memcpy(p + len - 8, &tag, 8);
}

static bool stamp_ok(const uint8_t *p, size_t len, uint64_t tag)
{
	uint64_t a, b;
	memcpy(&a, p, 8);
	memcpy(&b, p + len - 8, 8);
	return a == tag && b == tag;
}

static void *stress(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint8_t *live[LIVE] = {0};
	size_t lens[LIVE] = {0};
	uint64_t tags[LIVE] = {0};
	uint32_t seed = 0x9E3779B9u * (uint32_t)(id + 1);
	for (uint64_t it = 0; it < ITERS; it++) {
		seed = seed * 1103515245u + 12345u;
		int slot = (int)((seed >> 16) % LIVE);
		if (live[slot]) {
			if (!stamp_ok(live[slot], lens[slot], tags[slot]))
				atomic_fetch_add(&corruptions, 1);
			if ((seed & 7) == 0) {
				/* give it to another thread to free */
				struct mailbox *mb = &boxes[(id + 1 + (seed >> 8) % (NTHREADS - 1)) % NTHREADS];
				pthread_mutex_lock(&mb->lock);
				bool put = mb->n < 256;
				if (put)
					mb->objs[mb->n++] = live[slot];
				pthread_mutex_unlock(&mb->lock);
				if (!put)
					kv_slab_free(live[slot]);
			} else {
				kv_slab_free(live[slot]);
			}
			live[slot] = NULL;
			continue;
		}
		size_t len;
		uint32_t r = (seed >> 4) & 1023;
		if (r < 700)
			len = 8 + r % 250;           /* keys and small values */
		else if (r < 1000)
			len = 4096u << (r % 4);      /* 4..32 KiB values */
		else if (r < 1020)
			len = MIB;
		else
			len = KV_SLAB_MAX_SIZE;
		uint8_t *p = kv_slab_alloc(len);
		if (!p) {
			atomic_fetch_add(&failures, 1);
			continue;
		}
		if (kv_slab_size_of(p) < len || unvme_dma_iova(p) == UINT64_MAX)
			atomic_fetch_add(&corruptions, 1);
		tags[slot] = ((uint64_t)id << 56) | it;
		lens[slot] = len < 16 ? 8 : len; /* short: both stamps are the same 8 bytes */
		stamp(p, lens[slot], tags[slot]);
		live[slot] = p;
		if ((it & 63) == 0) {
			struct mailbox *mb = &boxes[id];
			pthread_mutex_lock(&mb->lock);
			for (int i = 0; i < mb->n; i++)
				kv_slab_free(mb->objs[i]);
			mb->n = 0;
			pthread_mutex_unlock(&mb->lock);
		}
	}
	for (int i = 0; i < LIVE; i++)
		kv_slab_free(live[i]);
	return NULL;
}

static void test_four_threads(void)
{
	/* Room for every thread's live set of the worst case plus caches. */
	REQUIRE(kv_slab_init(256 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_mutex_init(&boxes[i].lock, NULL);
		boxes[i].n = 0;
	}
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, stress, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++) {
		for (int j = 0; j < boxes[i].n; j++)
			kv_slab_free(boxes[i].objs[j]);
		boxes[i].n = 0;
	}
	kv_slab_thread_flush();
	CHECK_EQ(atomic_load(&corruptions), 0);
	CHECK_EQ(atomic_load(&failures), 0);
	struct kv_slab_stats st;
	kv_slab_stats(&st);
	CHECK_EQ(st.outstanding_bytes, 0);
	CHECK_EQ(st.free_segment_bytes, st.reserved_bytes);
	kv_slab_fini();
}

TEST_MAIN(TEST(test_free_on_another_thread), TEST(test_four_threads))
