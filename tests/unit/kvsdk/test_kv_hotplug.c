/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The KV SDK across a surprise removal of its device and the device's return (the driver's
 * hot-plug of an emulated card): calls on the removed device return KV_ERR_DD_NO_DEVICE,
 * async commands in flight are called back exactly once with it, and once the card is back
 * the same handle, sync queue, async queues and completion thread carry on, with sync and
 * async calls in flight from several threads; the data of a file-backed KV namespace is
 * still there. Run under TSan too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "unvme/emu.h"
#include "unvme/unvme.h"
#include "kv_test.h"
#include "test_tmpdir.h"
#include "test_util.h"

/* core 0: a sync queue; core 1: an async queue with its completion thread */
#define MASKS ", \"core_mask\": 3, \"sync_mask\": 1, \"cq_thread_mask\": 2, \"queue_depth\": 32"

static char dev[512];

static void test_sync_calls(void)
{
	uint64_t h = kv_test_init(dev, "kv", MASKS, NULL);
	REQUIRE(h != 0);
	char key[] = "hotplug-key-1", val[64] = "the value that survives", out[64];
	kv_pair kv;
	kv_pair_init(&kv, key, sizeof(key) - 1, val, sizeof(val));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);

	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_DD_NO_DEVICE);
	kv_pair_init(&kv, key, sizeof(key) - 1, out, sizeof(out));
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_exist(h, &kv), KV_ERR_DD_NO_DEVICE);

	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	memset(out, 0, sizeof(out));
	kv_pair_init(&kv, key, sizeof(key) - 1, out, sizeof(out));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(strcmp(out, val) == 0);
	kv_pair_init(&kv, key, sizeof(key) - 1, val, sizeof(val));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* Async stores from several threads, the card pulled and put back in the middle. */
enum { NTHREADS = 3, SLOTS = 8 };

struct slot {
	kv_pair kv;
	char key[32];
	char val[512];
	_Atomic bool busy;
	struct worker *w;
};

struct worker {
	pthread_t tid;
	uint64_t h;
	int id;
	_Atomic bool *stop, *plugged;
	_Atomic int accepted, called, ok, no_device, other, refused_no_device, ok_after_plug;
	_Atomic int last_other; /* the last unexpected code, callback (+0x10000) or submit */
	struct slot slots[SLOTS];
};

static void store_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	struct slot *s = kv->param.private_data;
	struct worker *w = s->w;
	if (status == KV_SUCCESS) {
		atomic_fetch_add(&w->ok, 1);
		if (atomic_load(w->plugged))
			atomic_fetch_add(&w->ok_after_plug, 1);
	} else if (status == KV_ERR_DD_NO_DEVICE) {
		atomic_fetch_add(&w->no_device, 1);
	} else {
		atomic_store(&w->last_other, 0x10000 | (int)status);
		atomic_fetch_add(&w->other, 1);
	}
	atomic_fetch_add(&w->called, 1);
	atomic_store(&s->busy, false);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t n = 0;
	while (!atomic_load(w->stop)) {
		bool submitted = false;
		for (int i = 0; i < SLOTS; i++) {
			struct slot *s = &w->slots[i];
			if (atomic_load(&s->busy))
				continue;
			int klen = snprintf(s->key, sizeof(s->key), "w%d-k%06u", w->id, n++ % 5000);
			memset(s->val, 'a' + w->id, sizeof(s->val));
			kv_pair_init(&s->kv, s->key, (uint16_t)klen, s->val, sizeof(s->val));
			s->kv.param.async_cb = store_cb;
			s->kv.param.private_data = s;
			s->w = w;
			atomic_store(&s->busy, true);
			int rc = kv_store_async(w->h, &s->kv);
			if (rc == KV_SUCCESS) {
				atomic_fetch_add(&w->accepted, 1);
				submitted = true;
				continue;
			}
			atomic_store(&s->busy, false);
			if (rc == KV_ERR_DD_NO_DEVICE) {
				atomic_fetch_add(&w->refused_no_device, 1);
			} else {
				atomic_store(&w->last_other, rc);
				if (atomic_fetch_add(&w->other, 1) == 0)
					fprintf(stderr, "  thread %d: kv_store_async: 0x%x (%s)\n", w->id,
						(unsigned)rc, unvme_errmsg());
			}
			test_sleep_ms(1);
			break;
		}
		if (!submitted)
			sched_yield();
	}
	return NULL;
}

/* A thread of sync stores and retrieves next to the async ones. */
struct sync_worker {
	pthread_t tid;
	uint64_t h;
	_Atomic bool *stop, *plugged;
	_Atomic int ok, no_device, other, ok_after_plug;
};

static void *sync_main(void *arg)
{
	struct sync_worker *w = arg;
	char key[32], val[256], out[256];
	memset(val, 's', sizeof(val));
	for (uint32_t n = 0; !atomic_load(w->stop); n++) {
		int klen = snprintf(key, sizeof(key), "sync-k%05u", n % 2000);
		kv_pair kv;
		kv_pair_init(&kv, key, (uint16_t)klen, val, sizeof(val));
		int rc = kv_store(w->h, &kv);
		if (rc == KV_SUCCESS) {
			kv_pair_init(&kv, key, (uint16_t)klen, out, sizeof(out));
			rc = kv_retrieve(w->h, &kv);
		}
		if (rc == KV_SUCCESS) {
			atomic_fetch_add(&w->ok, 1);
			if (atomic_load(w->plugged))
				atomic_fetch_add(&w->ok_after_plug, 1);
		} else if (rc == KV_ERR_DD_NO_DEVICE) {
			atomic_fetch_add(&w->no_device, 1);
			test_sleep_ms(1);
		} else {
			atomic_fetch_add(&w->other, 1);
		}
	}
	return NULL;
}

static void test_async_under_load(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(dev, "kv", MASKS, NULL);
	REQUIRE(h != 0);
	_Atomic bool stop = false, plugged = false;
	static struct worker ws[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].h = h;
		ws[i].id = i;
		ws[i].stop = &stop;
		ws[i].plugged = &plugged;
		REQUIRE(pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) == 0);
	}
	static struct sync_worker sw;
	memset(&sw, 0, sizeof(sw));
	sw.h = h;
	sw.stop = &stop;
	sw.plugged = &plugged;
	REQUIRE(pthread_create(&sw.tid, NULL, sync_main, &sw) == 0);
	/* every thread has stores going (a loaded machine starts threads late) */
	uint64_t deadline = test_now_ms() + 10000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].ok) < 50 && test_now_ms() < deadline)
			test_sleep_ms(1);
	while (atomic_load(&sw.ok) < 20 && test_now_ms() < deadline)
		test_sleep_ms(1);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	deadline = test_now_ms() + 5000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].refused_no_device) == 0 && test_now_ms() < deadline)
			test_sleep_ms(1);
	/* nothing accepted stays without its callback while the device is out */
	deadline = test_now_ms() + 5000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].called) != atomic_load(&ws[i].accepted) && test_now_ms() < deadline)
			test_sleep_ms(1);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(atomic_load(&ws[i].refused_no_device) > 0);
		CHECK_EQ(atomic_load(&ws[i].called), atomic_load(&ws[i].accepted));
		CHECK(atomic_load(&ws[i].ok) > 0);
	}
	while (atomic_load(&sw.no_device) == 0 && test_now_ms() < deadline)
		test_sleep_ms(1);
	CHECK(atomic_load(&sw.no_device) > 0);
	atomic_store(&plugged, true);
	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	deadline = test_now_ms() + 10000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].ok_after_plug) < 100 && test_now_ms() < deadline)
			test_sleep_ms(1);
	while (atomic_load(&sw.ok_after_plug) < 20 && test_now_ms() < deadline)
		test_sleep_ms(1);
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(ws[i].tid, NULL);
	pthread_join(sw.tid, NULL);
	CHECK(atomic_load(&sw.ok_after_plug) >= 20);
	CHECK_EQ(atomic_load(&sw.other), 0);
	kv_process_completion(h);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(atomic_load(&ws[i].ok_after_plug) >= 100);
		CHECK_EQ(atomic_load(&ws[i].called), atomic_load(&ws[i].accepted));
		if (atomic_load(&ws[i].other))
			fprintf(stderr, "  thread %d: last unexpected code 0x%x\n", i,
				(unsigned)atomic_load(&ws[i].last_other));
		CHECK_EQ(atomic_load(&ws[i].other), 0);
	}
	/* the sync queue works again too */
	char key[] = "after-the-plug", val[16] = "v";
	kv_pair kv;
	kv_pair_init(&kv, key, sizeof(key) - 1, val, sizeof(val));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
	test_dir_make("unvme-kvhotplug");
	snprintf(dev, sizeof(dev), "emu://kvhp?ns=kv:64M::%s/kv.img", test_dir);
}

TEST_MAIN(TEST(test_sync_calls), TEST(test_async_under_load))
