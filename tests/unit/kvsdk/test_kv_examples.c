/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The example configurations under tests/unit/kvsdk/configs/ work as shipped: each brings the
 * SDK up, stores and reads back on every device, and finalizes. Also: an idle SDK does not
 * burn a core (the completion threads back off).
 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "kv_test.h"
#include "test_util.h"

static void run_example(const char *name, bool lba)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", KV_CONFIG_DIR, name);
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, path) == KV_SUCCESS);
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	CHECK_EQ(kv_get_device_handles(&n, h), KV_SUCCESS);
	CHECK(n >= 1);
	for (int i = 0; i < n; i++) {
		uint32_t sector = kv_get_sector_size(h[i]);
		uint8_t key[16] = "example-key-0001";
		if (lba) /* a little-endian LBA: 5 */
			memcpy(key, "\x05\0\0\0\0\0\0\0", 8);
		uint8_t *w = kv_zalloc(4096), *r = kv_zalloc(4096);
		REQUIRE(w && r);
		for (int b = 0; b < 4096; b++)
			w[b] = (uint8_t)(b * 3 + i);
		kv_pair kv;
		kv_pair_init(&kv, key, lba ? 8 : 16, w, lba ? sector : 1000);
		CHECK_EQ(kv_store(h[i], &kv), KV_SUCCESS);
		kv_pair_init(&kv, key, lba ? 8 : 16, r, lba ? sector : 1000);
		CHECK_EQ(kv_retrieve(h[i], &kv), KV_SUCCESS);
		CHECK(memcmp(w, r, lba ? sector : 1000) == 0);
		kv_free(w);
		kv_free(r);
	}
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_kv_sync_example(void)
{
	run_example("kv_sync.json", false);
}

static void test_kv_async_example(void)
{
	NEED_CPUS(2);
	run_example("kv_async.json", false);
}

static void test_lba_example(void)
{
	NEED_CPUS(2);
	run_example("lba.json", true);
}

static void test_auto_masks_example(void)
{
	run_example("auto_masks.json", false);
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static void test_idle_sdk_does_not_burn_a_core(void)
{
	NEED_CPUS(2);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", KV_CONFIG_DIR, "kv_async.json");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, path) == KV_SUCCESS);
	struct timespec settle = { 0, 20 * 1000 * 1000 }, idle = { 0, 400 * 1000 * 1000 };
	nanosleep(&settle, NULL); /* past the spin and yield phases */
	double c0 = cpu_seconds();
	nanosleep(&idle, NULL);
	double used = cpu_seconds() - c0;
	/* a spinning completion thread would use the whole 0.4 s */
	CHECK(used < 0.1);
	if (used >= 0.1)
		fprintf(stderr, "  idle SDK used %.3f s of CPU in 0.4 s\n", used);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

TEST_MAIN(TEST(test_kv_sync_example), TEST(test_kv_async_example), TEST(test_lba_example),
	  TEST(test_auto_masks_example), TEST(test_idle_sdk_does_not_burn_a_core))
