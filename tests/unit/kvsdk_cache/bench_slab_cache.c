/* SPDX-License-Identifier: BSD-3-Clause */
/* Throughput of the slab's and the cache's hot paths, with malloc and unvme_dma_alloc as
 * yardsticks. Prints rates; asserts nothing (see the tests for behaviour). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv_cache.h"
#include "kv_slab.h"
#include "unvme/kv/kv_types.h"
#include "unvme/unvme.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps the compiler from dropping allocations whose results are otherwise unused; per
 * thread, so the threaded run does not measure false sharing on it. */
static _Thread_local void *volatile sink;

static void report(const char *what, long n, double secs)
{
	printf("%-44s %10.2f M/s  %7.1f ns each\n", what, (double)n / secs / 1e6, secs * 1e9 / (double)n);
}

static void bench_slab_pairs(size_t size, long n)
{
	double t0 = now();
	for (long i = 0; i < n; i++) {
		void *p = kv_slab_alloc(size);
		sink = p;
		kv_slab_free(p);
	}
	char what[64];
	snprintf(what, sizeof(what), "kv_slab alloc+free %zu B", size);
	report(what, n, now() - t0);
}

/* Alloc a burst then free it: exercises refills and flushes, not just the top of the cache. */
static void bench_slab_bursts(size_t size, long rounds)
{
	enum { BURST = 200 };
	void *p[BURST];
	double t0 = now();
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < BURST; i++)
			p[i] = kv_slab_alloc(size);
		for (int i = 0; i < BURST; i++)
			kv_slab_free(p[i]);
	}
	char what[64];
	snprintf(what, sizeof(what), "kv_slab bursts of %d x %zu B (per pair)", BURST, size);
	report(what, rounds * BURST, now() - t0);
}

static void bench_malloc_pairs(size_t size, long n)
{
	double t0 = now();
	for (long i = 0; i < n; i++) {
		void *p = malloc(size);
		sink = p;
		free(p);
	}
	char what[64];
	snprintf(what, sizeof(what), "malloc+free %zu B", size);
	report(what, n, now() - t0);
}

static void bench_dma_pairs(size_t size, long n)
{
	double t0 = now();
	for (long i = 0; i < n; i++) {
		void *p = unvme_dma_alloc(size, 4096);
		sink = p;
		unvme_dma_free(p);
	}
	char what[64];
	snprintf(what, sizeof(what), "unvme_dma_alloc+free %zu B", size);
	report(what, n, now() - t0);
}

static void *thread_pairs(void *arg)
{
	long n = (long)(intptr_t)arg;
	for (long i = 0; i < n; i++) {
		void *p = kv_slab_alloc(4096);
		sink = p;
		kv_slab_free(p);
	}
	return NULL;
}

static void bench_slab_threads(int nt, long n)
{
	pthread_t t[16];
	double t0 = now();
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, thread_pairs, (void *)(intptr_t)n);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	char what[64];
	snprintf(what, sizeof(what), "kv_slab alloc+free 4096 B, %d threads (total)", nt);
	report(what, n * nt, now() - t0);
}

static void bench_cache(uint32_t vlen, long n)
{
	struct kv_cache *c = kv_cache_create(256u << 20);
	enum { KEYS = 4096 };
	static uint8_t v[65536], out[65536];
	char key[16];
	for (int i = 0; i < KEYS; i++) {
		snprintf(key, sizeof(key), "bench-%09d", i);
		kv_cache_fill(c, kv_cache_ticket(c, 0, key, 16), 0, key, 16, v, vlen);
	}
	double t0 = now();
	long hits = 0;
	for (long i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "bench-%09d", (int)(i % KEYS));
		hits += kv_cache_get(c, 0, key, 16, 0, out, sizeof(out), NULL, NULL) == 0;
	}
	char what[64];
	snprintf(what, sizeof(what), "kv_cache_get hit, %u B value (%ld hits)", vlen, hits);
	report(what, n, now() - t0);
	t0 = now();
	for (long i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "bench-%09d", (int)(i % KEYS));
		kv_cache_invalidate(c, 0, key, 16);
		uint64_t t = kv_cache_ticket(c, 0, key, 16);
		kv_cache_store(c, t, 0, key, 16, v, vlen);
	}
	snprintf(what, sizeof(what), "kv_cache invalidate+ticket+store, %u B", vlen);
	report(what, n, now() - t0);
	kv_cache_destroy(c);
}

int main(void)
{
	if (kv_slab_init(256u << 20, SLAB_MM_ALLOC_HUGE) != 0) {
		fprintf(stderr, "kv_slab_init failed\n");
		return 1;
	}
	bench_slab_pairs(64, 20000000);
	bench_slab_pairs(256, 20000000);
	bench_slab_pairs(4096, 20000000);
	bench_slab_pairs(65536, 5000000);
	bench_slab_pairs(1u << 20, 2000000);
	bench_slab_pairs(KV_SLAB_MAX_SIZE, 1000000);
	bench_slab_bursts(256, 50000);
	bench_slab_bursts(4096, 50000);
	bench_malloc_pairs(256, 20000000);
	bench_malloc_pairs(4096, 20000000);
	bench_dma_pairs(4096, 5000000);
	bench_slab_threads(4, 5000000);
	kv_slab_fini();
	bench_cache(16, 2000000);
	bench_cache(4096, 2000000);
	bench_cache(65536, 200000);
	return 0;
}
