/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The thread model: async callbacks counted and checked under four submitting threads with the
 * completion thread on the other core, full queues (retry and no-retry), threads moved to a
 * fitting core, API calls from callbacks, finalize with commands in flight, and the read cache
 * staying coherent under concurrent store/delete/retrieve. Run under TSan too.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "kv_cache.h"
#include "kv_internal.h"
#include "kv_test.h"
#include "test_util.h"

#define KV_DEV "emu://kvth?ns=kv:64M"
#define LBA_DEV "emu://lbath?ns=mem:64M"
#define ASYNC_MASKS ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2, \"queue_depth\": 8"

enum { NTHREADS = 4, PER_THREAD = 400 };

struct worker {
	uint64_t h;
	int id;
	bool lba;
	atomic_int done;
	atomic_int bad;
	kv_pair kv[PER_THREAD];
	uint8_t key[PER_THREAD][24];
	uint8_t val[PER_THREAD][512];
};

/* status: the kv_result; the full NVMe status is readable during the callback */
static void worker_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	struct worker *w = kv->param.private_data;
	if (status != KV_SUCCESS || kv_async_nvme_status() != 0)
		atomic_fetch_add(&w->bad, 1);
	atomic_fetch_add(&w->done, 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		uint8_t *key = w->key[i];
		uint16_t klen;
		if (w->lba) {
			uint64_t lba = (uint64_t)(w->id * PER_THREAD + i);
			memcpy(key, &lba, 8);
			klen = 8;
		} else {
			klen = (uint16_t)snprintf((char *)key, sizeof(w->key[i]), "t%d-key-%05d-long", w->id, i);
		}
		for (int b = 0; b < 512; b++)
			w->val[i][b] = (uint8_t)(w->id * 31 + i + b);
		kv_pair_init(&w->kv[i], key, klen, w->val[i], 512);
		w->kv[i].param.async_cb = worker_cb;
		w->kv[i].param.private_data = w;
		int rc = kv_store_async(w->h, &w->kv[i]);
		if (rc != KV_SUCCESS)
			atomic_fetch_add(&w->bad, 1);
	}
	while (atomic_load(&w->done) < PER_THREAD)
		sched_yield();
	/* read back synchronously (a sync call on an async-only device) */
	uint8_t r[512];
	for (int i = 0; i < PER_THREAD; i++) {
		kv_pair kv;
		kv_pair_init(&kv, w->key[i], w->kv[i].key.length, r, 512);
		if (kv_retrieve(w->h, &kv) != KV_SUCCESS || memcmp(r, w->val[i], 512))
			atomic_fetch_add(&w->bad, 1);
	}
	return NULL;
}

static void run_workers(uint64_t h, bool lba)
{
	static struct worker ws[NTHREADS];
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].h = h;
		ws[i].id = i;
		ws[i].lba = lba;
		pthread_create(&t[i], NULL, worker_main, &ws[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(atomic_load(&ws[i].done), PER_THREAD);
		CHECK_EQ(atomic_load(&ws[i].bad), 0);
	}
}

static void test_async_callbacks_four_threads_lba(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(LBA_DEV, "lba", ASYNC_MASKS, NULL);
	REQUIRE(h != 0);
	run_workers(h, true);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* Two devices whose async queues share one completion thread; two threads per device. */
static void test_two_devices_share_a_completion_thread(void)
{
	NEED_CPUS(2);
	const char *path = kv_test_write_config(4,
		"{ \"slab_size\": 64, \"slab_alloc_policy\": \"posix\", \"device_description\": [\n"
		"  { \"dev_id\": \"emu://share-a?ns=kv:32M\", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2 },\n"
		"  { \"dev_id\": \"emu://share-b?ns=kv:32M\", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2 } ] }\n");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) == KV_SUCCESS);
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	REQUIRE(kv_get_device_handles(&n, h) == KV_SUCCESS && n == 2);
	static struct worker ws[NTHREADS];
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].h = h[i % 2];
		ws[i].id = i;
		pthread_create(&t[i], NULL, worker_main, &ws[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(atomic_load(&ws[i].done), PER_THREAD);
		CHECK_EQ(atomic_load(&ws[i].bad), 0);
	}
	/* each device holds only its own threads' keys */
	uint8_t r[512];
	kv_pair kv;
	kv_pair_init(&kv, ws[0].key[0], ws[0].kv[0].key.length, r, 512);
	CHECK_EQ(kv_retrieve(h[1], &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_retrieve(h[0], &kv), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_async_callbacks_four_threads_kv(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(KV_DEV, "kv", ASYNC_MASKS, NULL);
	REQUIRE(h != 0);
	run_workers(h, false);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* A callback that holds its queue slot until released: the queue is then provably full. */
static atomic_int hold_release, hold_entered, hold_calls;
static void holding_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result;
	(void)status;
	atomic_store(&hold_entered, 1);
	while (!atomic_load(&hold_release))
		sched_yield();
	atomic_fetch_add(&hold_calls, 1);
}

static void *release_later(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	atomic_store(&hold_release, 1);
	return NULL;
}

static void full_queue(int retry_interval, int expect)
{
	char extra[64];
	snprintf(extra, sizeof(extra), ", \"submit_retry_interval\": %d", retry_interval);
	uint64_t h = kv_test_init(LBA_DEV, "lba",
				  ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2, "
				  "\"queue_depth\": 2", extra);
	REQUIRE(h != 0);
	atomic_store(&hold_release, 0);
	atomic_store(&hold_entered, 0);
	atomic_store(&hold_calls, 0);
	uint8_t key[8] = { 0 }, val[512] = { 0 };
	kv_pair a, b;
	kv_pair_init(&a, key, 8, val, 512);
	a.param.async_cb = holding_cb;
	b = a;
	CHECK_EQ(kv_store_async(h, &a), KV_SUCCESS);
	while (!atomic_load(&hold_entered))
		sched_yield();
	if (expect == KV_ERR_DD_NO_AVAILABLE_QUEUE) {
		CHECK_EQ(kv_store_async(h, &b), KV_ERR_DD_NO_AVAILABLE_QUEUE);
		atomic_store(&hold_release, 1);
	} else {
		/* the submission waits for the slot, which another thread frees 20 ms later */
		pthread_t t;
		pthread_create(&t, NULL, release_later, NULL);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(kv_store_async(h, &b), KV_SUCCESS);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) >= 10000000L);
		pthread_join(t, NULL);
	}
	kv_process_completion(h);
	CHECK_EQ(atomic_load(&hold_calls), expect == KV_SUCCESS ? 2 : 1);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_full_queue_without_retry_fails_and_with_retry_waits(void)
{
	NEED_CPUS(2);
	full_queue(-1, KV_ERR_DD_NO_AVAILABLE_QUEUE);
	full_queue(10, KV_SUCCESS);
}

/* A thread on a core outside core_mask is moved to a core of the device. */
static void *pinned_to_core1(void *arg)
{
	uint64_t h = *(uint64_t *)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	uint8_t key[8] = { 0 }, val[512] = { 0 };
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 512);
	intptr_t ok = kv_store(h, &kv) == KV_SUCCESS && kv_get_core_id() == 0;
	return (void *)ok;
}

static void test_thread_outside_core_mask_moves(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	pthread_t t;
	void *ok = NULL;
	pthread_create(&t, NULL, pinned_to_core1, &h);
	pthread_join(t, &ok);
	CHECK(ok != NULL);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* A sync call on an async core moves the thread to a sync core (needs a sync core, an async
 * core and a completion core). */
static void *sync_on_async_core(void *arg)
{
	uint64_t h = *(uint64_t *)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set); /* the async core */
	sched_setaffinity(0, sizeof(set), &set);
	uint8_t key[8] = { 0 }, val[512] = { 0 };
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 512);
	intptr_t ok = kv_store(h, &kv) == KV_SUCCESS && kv_get_core_id() == 0;
	return (void *)ok;
}

static void test_sync_call_on_async_core_moves(void)
{
	NEED_CPUS(3);
	uint64_t h = kv_test_init(LBA_DEV, "lba",
				  ", \"core_mask\": 3, \"sync_mask\": 1, \"cq_thread_mask\": 4", NULL);
	REQUIRE(h != 0);
	pthread_t t;
	void *ok = NULL;
	pthread_create(&t, NULL, sync_on_async_core, &h);
	pthread_join(t, &ok);
	CHECK(ok != NULL);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_context_switches(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(LBA_DEV, "lba", ASYNC_MASKS, NULL);
	REQUIRE(h != 0);
	CHECK(context_switch_sync_to_async(0));
	CHECK_EQ(kv_get_core_id(), 0);
	CHECK_EQ(kv_io_queue_type(h, kv_get_core_id()), 2);
	CHECK(!context_switch_async_to_sync(0)); /* the device has no sync core */
	CHECK(!context_switch_async_to_sync(-1));
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	CHECK(context_switch_async_to_sync(0));
	CHECK_EQ(kv_io_queue_type(h, kv_get_core_id()), 1);
	CHECK(!context_switch_sync_to_async(0));
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* Callbacks run on the completion thread: async calls from there work, a sync call on a
 * device with no sync queue and finalize are refused instead of deadlocking. */
static atomic_int nested_calls, nested_sync_rc, nested_fin_rc, chain_left;
static uint64_t nested_h;
static void chained_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	if (status != KV_SUCCESS)
		return;
	atomic_fetch_add(&nested_calls, 1);
	if (atomic_fetch_sub(&chain_left, 1) == 10) {
		kv_pair s = *kv;
		atomic_store(&nested_sync_rc, kv_store(nested_h, &s));
		atomic_store(&nested_fin_rc, kv_sdk_finalize());
	}
	if (atomic_load(&chain_left) > 0)
		kv_store_async(nested_h, kv);
}

static void test_calls_from_callbacks(void)
{
	NEED_CPUS(2);
	nested_h = kv_test_init(LBA_DEV, "lba", ASYNC_MASKS, NULL);
	REQUIRE(nested_h != 0);
	atomic_store(&chain_left, 20);
	static uint8_t key[8] = { 1 }, val[512];
	static kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 512);
	kv.param.async_cb = chained_cb;
	CHECK_EQ(kv_store_async(nested_h, &kv), KV_SUCCESS);
	while (atomic_load(&chain_left) > 0)
		sched_yield();
	kv_process_completion(nested_h);
	CHECK_EQ(atomic_load(&nested_calls), 20);
	CHECK_EQ(atomic_load(&nested_sync_rc), KV_ERR_DD_INVALID_QUEUE_TYPE);
	CHECK_EQ(atomic_load(&nested_fin_rc), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static atomic_int fin_calls;
static void fin_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result;
	(void)status;
	atomic_fetch_add(&fin_calls, 1);
}

static void test_finalize_waits_for_async_commands(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(KV_DEV, "kv", ASYNC_MASKS, NULL);
	REQUIRE(h != 0);
	enum { N = 300 };
	static kv_pair kvs[N];
	static char keys[N][16];
	static uint8_t val[256];
	atomic_store(&fin_calls, 0);
	int accepted = 0;
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "fin-%05d", i);
		kv_pair_init(&kvs[i], keys[i], 9, val, sizeof(val));
		kvs[i].param.async_cb = fin_cb;
		accepted += kv_store_async(h, &kvs[i]) == KV_SUCCESS;
	}
	CHECK_EQ(accepted, N);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK_EQ(atomic_load(&fin_calls), N);
}

/* ---- cache coherence ----
 * Each key has one owner thread that stores increasing versions and sometimes deletes it; all
 * threads read every key. A value read must be intact and its version never older than one
 * the same reader saw before (a stale cache entry would be). At the end every key must read
 * back as its owner left it. */
enum { CKEYS = 32, CROUNDS = 1500 };
struct cval {
	uint32_t key_id;
	uint32_t version;
	uint32_t check;
	uint8_t pad[52];
};
static uint64_t cache_h;
static uint32_t final_version[CKEYS]; /* 0: deleted; written by the owner only */
static atomic_int cache_bad;

static uint32_t check_of(const struct cval *v)
{
	return v->key_id * 2654435761u ^ v->version * 40503u;
}

static void *cache_worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint32_t seen[CKEYS] = { 0 };
	uint32_t version = 0;
	unsigned seed = (unsigned)id * 7919u + 1;
	for (int r = 0; r < CROUNDS; r++) {
		seed = seed * 1103515245u + 12345u;
		int k = (int)((seed >> 8) % CKEYS);
		char key[16];
		snprintf(key, sizeof(key), "cache-%04d", k);
		kv_pair kv;
		if (k % NTHREADS == id && (seed >> 20) % 3 != 0) {
			if ((seed >> 24) % 5 == 0) {
				kv_pair_init(&kv, key, 10, NULL, 0);
				int rc = kv_delete(cache_h, &kv);
				if (rc != KV_SUCCESS && rc != KV_ERR_NOT_EXIST_KEY)
					atomic_fetch_add(&cache_bad, 1);
				final_version[k] = 0;
			} else {
				struct cval v = { (uint32_t)k, ++version, 0, { 0 } };
				v.check = check_of(&v);
				kv_pair_init(&kv, key, 10, &v, sizeof(v));
				if (kv_store(cache_h, &kv) != KV_SUCCESS)
					atomic_fetch_add(&cache_bad, 1);
				final_version[k] = v.version;
			}
		} else {
			struct cval v;
			memset(&v, 0, sizeof(v));
			kv_pair_init(&kv, key, 10, &v, sizeof(v));
			int rc = kv_retrieve(cache_h, &kv);
			if (rc == KV_SUCCESS) {
				if (kv.value.length != sizeof(v) || v.key_id != (uint32_t)k ||
				    v.check != check_of(&v) || v.version < seen[k]) {
					fprintf(stderr, "  key %d: version %u after %u, id %u\n", k, v.version,
						seen[k], v.key_id);
					atomic_fetch_add(&cache_bad, 1);
				}
				seen[k] = v.version;
			} else if (rc != KV_ERR_NOT_EXIST_KEY) {
				atomic_fetch_add(&cache_bad, 1);
			}
		}
	}
	return NULL;
}

static void test_cache_coherent_under_concurrent_store_delete_retrieve(void)
{
	cache_h = kv_test_init(KV_DEV, "kv", ", \"core_mask\": 1, \"sync_mask\": 1", ", \"cache\": \"on\"");
	REQUIRE(cache_h != 0);
	atomic_store(&cache_bad, 0);
	memset(final_version, 0, sizeof(final_version));
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, cache_worker, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&cache_bad), 0);
	struct kv_cache_stats st;
	CHECK_EQ(kv_sdk_cache_stats(&st), 0);
	CHECK(st.hits > 0); /* the cache really served reads */
	CHECK(st.stores > 0);
	for (int k = 0; k < CKEYS; k++) {
		char key[16];
		snprintf(key, sizeof(key), "cache-%04d", k);
		struct cval v;
		kv_pair kv;
		kv_pair_init(&kv, key, 10, &v, sizeof(v));
		int rc = kv_retrieve(cache_h, &kv);
		if (final_version[k] == 0) {
			CHECK_EQ(rc, KV_ERR_NOT_EXIST_KEY);
		} else {
			CHECK_EQ(rc, KV_SUCCESS);
			CHECK_EQ(v.version, final_version[k]);
		}
		CHECK_EQ(kv_exist(cache_h, &kv), final_version[k] ? KV_SUCCESS : KV_ERR_NOT_EXIST_KEY);
	}
	/* format clears the cache: a cached key must not survive it */
	CHECK_EQ(kv_format_device(cache_h, KV_FORMAT_MAPDATA), KV_SUCCESS);
	for (int k = 0; k < CKEYS; k++) {
		char key[16];
		snprintf(key, sizeof(key), "cache-%04d", k);
		struct cval v;
		kv_pair kv;
		kv_pair_init(&kv, key, 10, &v, sizeof(v));
		CHECK_EQ(kv_retrieve(cache_h, &kv), KV_ERR_NOT_EXIST_KEY);
	}
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	kv_test_remove_configs();
}

/* ---- a controller fatal status under async I/O ---- */

static atomic_int fatal_calls, fatal_result;
static void fatal_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result;
	atomic_store(&fatal_result, (int)status);
	atomic_fetch_add(&fatal_calls, 1);
}

static int store_async_and_wait(uint64_t h, kv_pair *kv)
{
	int before = atomic_load(&fatal_calls);
	int rc = kv_store_async(h, kv);
	if (rc != KV_SUCCESS)
		return rc;
	while (atomic_load(&fatal_calls) == before)
		sched_yield();
	return atomic_load(&fatal_result);
}

/* The controller reports CSTS.CFS with an async store in flight: the driver resets it, the
 * completion thread rebuilds its queue, the store is called back with an error (nobody waits
 * forever) and the next one succeeds, with the data stored before intact. */
static void test_async_survives_controller_fatal_status(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init("emu://kvfatal?ns=kv:64M", "kv", ASYNC_MASKS, NULL);
	REQUIRE(h != 0);
	char va[512], vb[512], r[512];
	memset(va, 'a', sizeof(va));
	memset(vb, 'b', sizeof(vb));
	kv_pair a, b;
	kv_pair_init(&a, "key-before-fatal", 16, va, sizeof(va));
	a.param.async_cb = fatal_cb;
	kv_pair_init(&b, "key-during-fatal", 16, vb, sizeof(vb));
	b.param.async_cb = fatal_cb;
	CHECK_EQ(store_async_and_wait(h, &a), KV_SUCCESS);

	struct kv_dev *d;
	REQUIRE(kv_enter_dev("test", h, NULL, &d) == KV_SUCCESS);
	struct unvme_ctrlr *c = d->ctrlr;
	kv_leave();
	struct nvme_sqe cmd = { 0 };
	cmd.opc = NVME_ADM_EMU_FAULT;
	cmd.cdw10 = NVME_EMU_FAULT_FATAL;
	CHECK_EQ(unvme_admin(c, &cmd, NULL, 0, NULL), 0);

	CHECK(store_async_and_wait(h, &b) != KV_SUCCESS);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 1);
	/* the queue may still be rebuilding for a moment: a submission then fails at once */
	int rc = KV_ERR_IO;
	for (int tries = 0; tries < 100000 && rc != KV_SUCCESS; tries++)
		rc = store_async_and_wait(h, &b);
	CHECK_EQ(rc, KV_SUCCESS);
	kv_pair_init(&a, "key-before-fatal", 16, r, sizeof(r));
	CHECK_EQ(kv_retrieve(h, &a), KV_SUCCESS);
	CHECK(memcmp(r, va, sizeof(r)) == 0);
	kv_pair_init(&b, "key-during-fatal", 16, r, sizeof(r));
	CHECK_EQ(kv_retrieve(h, &b), KV_SUCCESS);
	CHECK(memcmp(r, vb, sizeof(r)) == 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

TEST_MAIN(TEST(test_async_callbacks_four_threads_lba), TEST(test_async_callbacks_four_threads_kv),
	  TEST(test_two_devices_share_a_completion_thread),
	  TEST(test_full_queue_without_retry_fails_and_with_retry_waits),
	  TEST(test_thread_outside_core_mask_moves), TEST(test_sync_call_on_async_core_moves),
	  TEST(test_context_switches),
	  TEST(test_calls_from_callbacks), TEST(test_finalize_waits_for_async_commands),
	  TEST(test_async_survives_controller_fatal_status),
	  TEST(test_cache_coherent_under_concurrent_store_delete_retrieve))
