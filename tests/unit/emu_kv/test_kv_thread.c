/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * KV namespaces under concurrency (run under TSan too): four host threads storing,
 * retrieving and deleting on their own queues, in memory and file-backed, inline and thread
 * mode; an iteration racing with a thread that deletes and stores keys; the latency model of
 * thread mode applied to KV commands.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kv_host.h"
#include "tests/unit/test_util.h"

#define THREADS 4
#define OPS 1500

struct worker {
	struct kvq q;
	unsigned id;
	unsigned errors;
};

static void pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 2654435761u >> 24 ^ i * 29);
}

static bool has_pattern(const uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed * 2654435761u >> 24 ^ i * 29))
			return false;
	return true;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char key[32];
	for (unsigned i = 0; i < OPS; i++) {
		uint32_t seed = w->id * 100000 + i;
		uint32_t len = 16 + (seed * 7) % 5000;
		snprintf(key, sizeof(key), "t%u-%06u", w->id, i);
		pattern(w->q.val, len, seed);
		w->errors += kvv_store(&w->q, i % 2, key, (uint32_t)strlen(key), len, 0, 0) != 0;
		/* read back a key written a little earlier by this thread */
		unsigned j = i > 10 ? i - 10 : 0;
		uint32_t sj = w->id * 100000 + j, lj = 16 + (sj * 7) % 5000;
		snprintf(key, sizeof(key), "t%u-%06u", w->id, j);
		int st = kvv_retrieve(&w->q, j % 2, key, (uint32_t)strlen(key), 8192, 0);
		if (j % 3 == 2 && i >= 10) {
			/* key k with k % 3 == 2 is deleted at iteration k + 5 (below) */
			w->errors += st != KVV(NVME_KVV_SC_KEY_NOT_EXIST);
		} else {
			w->errors += st != 0 || w->q.dw0 != lj || !has_pattern(w->q.val, lj, sj);
		}
		/* a key every thread reads: another thread may be rewriting it */
		st = kvv_retrieve(&w->q, 0, "shared-key", 10, 64, 0);
		w->errors += st != 0 || w->q.dw0 != 64;
		if (i >= 5 && (i - 5) % 3 == 2) {
			snprintf(key, sizeof(key), "t%u-%06u", w->id, i - 5);
			w->errors += kvv_delete(&w->q, (i - 5) % 2, key, (uint32_t)strlen(key)) != 0;
		}
		if (i % 50 == 0) {
			memset(w->q.val, (int)w->id, 64);
			w->errors += kvv_store(&w->q, 0, "shared-key", 10, 64, 0, 0) != 0;
		}
	}
	return NULL;
}

static void run_workers(const char *uri)
{
	struct th h;
	REQUIRE(kvh_open(&h, uri) == 0);
	static struct worker w[THREADS];
	for (unsigned t = 0; t < THREADS; t++) {
		REQUIRE(kvq_init(&h, &w[t].q, (uint16_t)(t + 1)) == 0);
		w[t].id = t;
		w[t].errors = 0;
	}
	memset(w[0].q.val, 9, 64);
	REQUIRE(kvv_store(&w[0].q, 0, "shared-key", 10, 64, 0, 0) == 0);
	pthread_t tid[THREADS];
	for (unsigned t = 0; t < THREADS; t++)
		REQUIRE(pthread_create(&tid[t], NULL, work, &w[t]) == 0);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(tid[t], NULL);
	for (unsigned t = 0; t < THREADS; t++)
		CHECK_EQ(w[t].errors, 0);
	/* every thread's surviving keys are there */
	struct nvme_kvv_log_capacity *cap = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, cap), 0);
	unsigned deleted = 0;
	for (unsigned k = 0; k + 5 < OPS; k++)
		deleted += k % 3 == 2;
	CHECK_EQ(cap->nr_keys, THREADS * (OPS - deleted) + 1);
	th_close(&h);
}

static void test_four_threads_memory(void)
{
	run_workers("emu://kvt?ns=kv:1G&queues=8");
}

static void test_four_threads_file(void)
{
	char path[] = "/tmp/unvme-kv-thread-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(path);
	char uri[256];
	snprintf(uri, sizeof(uri), "emu://kvt?ns=kv:1G::%s&queues=8", path);
	run_workers(uri);
	unlink(path);
}

static void test_four_threads_engine(void)
{
	run_workers("emu://kvt?ns=kv:1G&queues=8&mode=thread");
}

/* ---- iteration racing with deletes ---- */

#define ITER_KEYS 4000

struct racer {
	struct kvq q;
	_Atomic int stop;
	unsigned errors;
};

static void *delete_odd(void *arg)
{
	struct racer *r = arg;
	char key[32];
	for (unsigned i = 1; i < ITER_KEYS; i += 2) {
		snprintf(key, sizeof(key), "race-%06u", i);
		r->errors += kvv_delete(&r->q, 0, key, 11) != 0;
		/* new keys appear meanwhile too; they may or may not be returned */
		snprintf(key, sizeof(key), "race-%06u", ITER_KEYS + i);
		r->errors += kvv_store(&r->q, 0, key, 11, 4, 0, 0) != 0;
	}
	return NULL;
}

static void test_iterate_while_deleting(void)
{
	struct th h;
	REQUIRE(kvh_open(&h, "emu://kvi?ns=kv:256M&queues=4") == 0);
	struct kvq q;
	static struct racer r;
	REQUIRE(kvq_init(&h, &q, 1) == 0);
	REQUIRE(kvq_init(&h, &r.q, 2) == 0);
	r.errors = 0;
	char key[32];
	for (unsigned i = 0; i < ITER_KEYS; i++) {
		snprintf(key, sizeof(key), "race-%06u", i);
		REQUIRE(kvv_store(&q, 0, key, 11, 4, 0, 0) == 0);
	}
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	uint8_t hd = (uint8_t)q.dw0;
	pthread_t tid;
	REQUIRE(pthread_create(&tid, NULL, delete_odd, &r) == 0);
	static uint8_t seen[2 * ITER_KEYS];
	memset(seen, 0, sizeof(seen));
	unsigned bad = 0;
	for (;;) {
		int st = kvv_iter_read(&q, hd);
		if (st != 0 && st != KVV(NVME_KVV_SC_ITER_EOF)) {
			bad++;
			break;
		}
		uint32_t count, off = 4;
		memcpy(&count, q.val, 4);
		for (uint32_t i = 0; i < count; i++) {
			uint32_t l;
			memcpy(&l, q.val + off, 4);
			char num[8] = { 0 };
			memcpy(num, q.val + off + 4 + 5, 6);
			unsigned n = (unsigned)atoi(num);
			if (l != 11 || n >= 2 * ITER_KEYS)
				bad++;
			else
				seen[n]++;
			off += 4 + l;
		}
		if (st)
			break;
	}
	pthread_join(tid, NULL);
	CHECK_EQ(bad, 0);
	CHECK_EQ(r.errors, 0);
	unsigned twice = 0, missed = 0;
	for (unsigned i = 0; i < 2 * ITER_KEYS; i++)
		twice += seen[i] > 1;
	for (unsigned i = 0; i < ITER_KEYS; i += 2)  /* even keys existed the whole time */
		missed += seen[i] != 1;
	CHECK_EQ(twice, 0);
	CHECK_EQ(missed, 0);
	CHECK_EQ(kvv_iter_close(&q, hd), 0);
	th_close(&h);
}

/* ---- the latency model: retrieve takes rlat, store takes wlat (lower bounds only) ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_latency_model_applies_to_kv(void)
{
	struct th h;
	REQUIRE(kvh_open(&h, "emu://kvlat?ns=kv:64M&mode=thread&rlat=3ms&wlat=1ms") == 0);
	struct kvq q;
	REQUIRE(kvq_init(&h, &q, 1) == 0);
	pattern(q.val, 4096, 7);
	uint64_t t0 = now_ns();
	CHECK_EQ(kvv_store(&q, 0, "latency-key", 11, 4096, 0, 0), 0);
	uint64_t store_ns = now_ns() - t0;
	t0 = now_ns();
	CHECK_EQ(kvv_retrieve(&q, 0, "latency-key", 11, 4096, 0), 0);
	uint64_t retrieve_ns = now_ns() - t0;
	CHECK(has_pattern(q.val, 4096, 7));
	if (store_ns < 1000000 || retrieve_ns < 3000000)
		fprintf(stderr, "  store %llu ns, retrieve %llu ns\n", (unsigned long long)store_ns,
			(unsigned long long)retrieve_ns);
	CHECK(store_ns >= 1000000);
	CHECK(retrieve_ns >= 3000000);
	th_close(&h);
}

TEST_MAIN(TEST(test_four_threads_memory), TEST(test_four_threads_file),
	  TEST(test_four_threads_engine), TEST(test_iterate_while_deleting),
	  TEST(test_latency_model_applies_to_kv))
