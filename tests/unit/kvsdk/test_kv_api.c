/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contract tests of kv_apis.h that need no KV namespace: calls before init and after finalize,
 * bad handles and NULL arguments, reference counting, the topology queries, and LBA mode on an
 * emulated NVM namespace (round trips and the two fixed defects of the original: delete length
 * in bytes for sync and async, value offset in bytes).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kv_test.h"
#include "test_util.h"

#define LBA_DEV "emu://kvlba?ns=mem:16M"
#define BAD_HANDLE 0x123456789ULL

static void test_calls_before_init_fail_closed(void)
{
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	uint8_t key[8] = { 0 }, val[512];
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, sizeof(val));
	CHECK_EQ(kv_store(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_store_async(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_retrieve(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_retrieve_async(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_delete(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_delete_async(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_exist(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_exist_async(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_append(1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_iterate_open(1, 0, 0, 0, KV_KEY_ITERATE), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_iterate_close(1, 1), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_iterate_read(1, NULL), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_iterate_read_async(1, NULL), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_iterate_info(1, NULL, 1), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_get_log_page(1, 2, val, 512), KV_ERR_SDK_CLOSE);
	CHECK(kv_get_total_size(1) == KV_ERR_INVALID_VALUE);
	CHECK(kv_get_used_size(1) == KV_ERR_INVALID_VALUE);
	CHECK(kv_get_waf(1) == KV_ERR_INVALID_VALUE);
	CHECK(kv_get_num_sectors(1) == KV_ERR_INVALID_VALUE);
	CHECK(kv_get_sector_size(1) == UINT32_MAX);
	CHECK_EQ(kv_format_device(1, 0), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_io_queue_type(1, 0), KV_ERR_SDK_CLOSE);
	int n = 5;
	uint64_t h[NR_MAX_SSD];
	int cores[MAX_CPU_CORES];
	CHECK_EQ(kv_get_devices_on_cpu(0, &n, h), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_get_device_handles(&n, h), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_get_cpus_on_device(1, &n, cores), KV_ERR_SDK_CLOSE);
	CHECK_EQ(n, 5);
	CHECK_EQ(kv_get_dev_idx_on_handle(1), KV_ERR_SDK_CLOSE);
	CHECK(!context_switch_async_to_sync(0));
	CHECK(!context_switch_sync_to_async(0));
	CHECK_EQ(kv_sdk_finalize(), KV_ERR_SDK_CLOSE);
	kv_process_completion(1);        /* must not crash */
	kv_process_completion_queue(1, 0);
	kv_sdk_info();
	CHECK(kv_get_core_id() >= 0);
}

static void test_init_arguments(void)
{
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_sdk_init(7, (void *)"x.json"), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)"/nonexistent/kv.json"),
		 KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
}

static void test_unknown_device_fails_init(void)
{
	CHECK(kv_test_init("emu://bad?ns=mem:3G:513", "lba", NULL, NULL) == 0);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	CHECK(kv_test_init("no-such-alias-xyz", "lba", NULL, NULL) == 0);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
}

static void test_init_from_struct_fills_handles_and_refcounts(void)
{
	kv_sdk sdk;
	memset(&sdk, 0, sizeof(sdk));
	sdk.ssd_type = LBA_TYPE_SSD;
	sdk.slab_size = 32u << 20;
	sdk.slab_alloc_policy = SLAB_MM_ALLOC_POSIX;
	sdk.submit_retry_interval = 1;
	sdk.nr_ssd = 1;
	snprintf(sdk.dev_id[0], DEV_ID_LEN, "%s", LBA_DEV);
	sdk.dd_options[0].core_mask = 1;
	sdk.dd_options[0].sync_mask = 1;
	sdk.dd_options[0].queue_depth = 16;
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk) == KV_SUCCESS);
	CHECK(sdk.dev_handle[0] != 0);
	CHECK_EQ(kv_is_sdk_initialized(), 1);
	CHECK_EQ(kv_get_dev_idx_on_handle(sdk.dev_handle[0]), 0);
	/* a second init only takes a reference */
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK_EQ(kv_is_sdk_initialized(), 1);
	CHECK_EQ(kv_get_sector_size(sdk.dev_handle[0]), 512);
	CHECK_EQ(kv_get_num_sectors(sdk.dev_handle[0]), 16u * 2048);
	CHECK_EQ(kv_get_total_size(sdk.dev_handle[0]), 16u << 20);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	/* the old handle is dead even after a new init */
	uint64_t old = sdk.dev_handle[0];
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk) == KV_SUCCESS);
	CHECK(sdk.dev_handle[0] != old);
	CHECK(kv_get_total_size(old) == KV_ERR_INVALID_VALUE);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_bad_handles_and_null_arguments(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8] = { 0 };
	uint8_t *val = kv_zalloc(4096);
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 4096);
	CHECK_EQ(kv_store(BAD_HANDLE, &kv), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_retrieve(0, &kv), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_delete_async(h + 1, &kv), KV_ERR_DD_NO_DEVICE);
	CHECK(kv_get_total_size(BAD_HANDLE) == KV_ERR_INVALID_VALUE);
	CHECK_EQ(kv_get_dev_idx_on_handle(BAD_HANDLE), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_io_queue_type(BAD_HANDLE, 0), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_store(h, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_store_async(h, NULL), KV_ERR_SDK_INVALID_PARAM);
	kv.key.key = NULL;
	CHECK_EQ(kv_store(h, &kv), KV_ERR_SDK_INVALID_PARAM);
	kv.key.key = key;
	kv.value.value = NULL;
	CHECK_EQ(kv_store(h, &kv), KV_ERR_SDK_INVALID_PARAM);
	kv.value.value = val;
	/* async without a callback */
	CHECK_EQ(kv_store_async(h, &kv), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_get_log_page(h, 0x02, NULL, 512), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_get_log_page(h, 0x02, val, 3), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_get_device_handles(NULL, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_get_devices_on_cpu(0, NULL, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_get_cpus_on_device(h, NULL, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_format_device(h, 2), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_format_device(h ^ 0x100, 0), KV_ERR_DD_NO_DEVICE);
	CHECK(!context_switch_async_to_sync(5));
	CHECK(!context_switch_sync_to_async(0)); /* all sync: no async core */
	CHECK(context_switch_async_to_sync(0));
	CHECK_EQ(kv_get_core_id(), 0);
	/* key sizes */
	kv.key.length = 3;
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_KEY_SIZE);
	kv.key.length = 256;
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_INVALID_KEY_SIZE);
	kv.key.length = 8;
	kv.value.length = KV_MAX_IO_VALUE_LEN + 512;
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_VALUE_SIZE);
	kv_free(val);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_smart_log_page_through_sdk(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t buf[512];
	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ(kv_get_log_page(h, 0x02, buf, sizeof(buf)), KV_SUCCESS);
	/* composite temperature: 313 K on the emulated controller (bytes 1..2) */
	CHECK_EQ(buf[1] | buf[2] << 8, 313);
	/* an unknown log page is a device error, reported not crashed */
	CHECK(kv_get_log_page(h, 0x7f, buf, sizeof(buf)) != KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void lba_key(uint8_t *key, uint64_t lba)
{
	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(lba >> (8 * i));
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void test_lba_round_trip_and_checks(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8];
	/* plain malloc buffers: the SDK copies through its own DMA memory */
	uint8_t *w = malloc(8192), *r = malloc(8192);
	fill(w, 8192, 3);
	kv_pair kv;
	lba_key(key, 100);
	kv_pair_init(&kv, key, 8, w, 8192);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	memset(r, 0, 8192);
	kv_pair_init(&kv, key, 8, r, 8192);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 8192);
	CHECK_EQ(kv.value.actual_value_size, 8192);
	CHECK(memcmp(w, r, 8192) == 0);
	/* LBA 104 is the fifth sector of what was written */
	lba_key(key, 104);
	kv_pair_init(&kv, key, 8, r, 512);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(w + 4 * 512, r, 512) == 0);
	/* checks of LBA mode */
	kv_pair_init(&kv, key, 8, r, 100);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_MISALIGNED_VALUE_SIZE);
	kv_pair_init(&kv, key, 8, r, 0);
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_INVALID_VALUE_SIZE);
	kv_pair_init(&kv, key, 8, r, 512);
	kv.value.offset = 8;
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_MISALIGNED_VALUE_OFFSET);
	kv.value.offset = 0;
	CHECK_EQ(kv_exist(h, &kv), KV_ERR_DD_UNSUPPORTED_CMD);
	CHECK_EQ(kv_append(h, &kv), KV_ERR_DD_UNSUPPORTED_CMD);
	CHECK_EQ(kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE), KV_ERR_DD_UNSUPPORTED_CMD);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	CHECK_EQ(kv_iterate_read(h, &it), KV_ERR_DD_UNSUPPORTED_CMD);
	/* beyond the namespace: a device error mapped to a kv_result */
	lba_key(key, 16u * 2048);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_DD_INVALID_PARAM);
	/* LBA mode, as the original: bytes in use, NUSE times the sector size */
	CHECK(kv_get_used_size(h) <= kv_get_total_size(h));
	CHECK_EQ(kv_get_used_size(h) % kv_get_sector_size(h), 0);
	/* no WAF log page on an NVM-only controller: reported, not invented */
	CHECK(kv_get_waf(h) == KV_ERR_INVALID_VALUE);
	free(w);
	free(r);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* The original applied the value offset in 8-byte units; here it is bytes. */
static void test_lba_offset_is_bytes(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8], w[1024], r[1024];
	fill(w, sizeof(w), 11);
	kv_pair kv;
	lba_key(key, 200);
	kv_pair_init(&kv, key, 8, w, 1024);
	kv.value.offset = 1024; /* two sectors further: LBA 202 */
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	lba_key(key, 202);
	kv_pair_init(&kv, key, 8, r, 1024);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(w, r, 1024) == 0);
	/* and a retrieve with an offset reads from there */
	lba_key(key, 200);
	memset(r, 0, sizeof(r));
	kv_pair_init(&kv, key, 8, r, 512);
	kv.value.offset = 1536;
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(w + 512, r, 512) == 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static atomic_int cb_calls, cb_result;
static void count_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)status;
	atomic_store(&cb_result, (int)result);
	atomic_fetch_add(&cb_calls, 1);
}

/* Delete deallocates value.length *bytes* in both forms (the original read blocks in one). */
static void check_delete_len(uint64_t h, bool async)
{
	uint8_t key[8], w[4096], r[4096], zero[1024] = { 0 };
	fill(w, sizeof(w), 5);
	kv_pair kv;
	lba_key(key, 300);
	kv_pair_init(&kv, key, 8, w, 4096);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	kv_pair_init(&kv, key, 8, NULL, 1024); /* two sectors */
	if (async) {
		kv.param.async_cb = count_cb;
		atomic_store(&cb_calls, 0);
		CHECK_EQ(kv_delete_async(h, &kv), KV_SUCCESS);
		kv_process_completion(h);
		while (atomic_load(&cb_calls) == 0)
			sched_yield();
		CHECK_EQ(atomic_load(&cb_result), KV_SUCCESS);
	} else {
		CHECK_EQ(kv_delete(h, &kv), KV_SUCCESS);
	}
	kv_pair_init(&kv, key, 8, r, 4096);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(r, zero, 1024) == 0);             /* deallocated: reads as zeroes */
	CHECK(memcmp(r + 1024, w + 1024, 3072) == 0);  /* the rest untouched */
}

static atomic_int inline_fin_rc;
static void finalize_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	(void)result;
	(void)status;
	atomic_store(&inline_fin_rc, kv_sdk_finalize());
}

/* On an all-sync device the callback runs inside the async call: finalize from there is
 * refused instead of deadlocking on the caller's guard. */
static void test_finalize_from_inline_callback_is_refused(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8] = { 0 }, val[512] = { 0 };
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 512);
	kv.param.async_cb = finalize_cb;
	atomic_store(&inline_fin_rc, -1);
	CHECK_EQ(kv_store_async(h, &kv), KV_SUCCESS);
	CHECK_EQ(atomic_load(&inline_fin_rc), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_is_sdk_initialized(), 1);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_lba_delete_length_in_bytes_sync_and_async(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	check_delete_len(h, false);
	check_delete_len(h, true); /* all-sync device: the callback runs before the call returns */
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	NEED_CPUS(2);
	h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2",
			 NULL);
	REQUIRE(h != 0);
	check_delete_len(h, false);
	check_delete_len(h, true);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_topology_queries(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(LBA_DEV, "lba",
				  ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": \"0x2\","
				  " \"queue_depth\": 8", NULL);
	REQUIRE(h != 0);
	int n = -1, cores[MAX_CPU_CORES];
	uint64_t hs[NR_MAX_SSD];
	CHECK_EQ(kv_get_cpus_on_device(h, &n, cores), KV_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK_EQ(cores[0], 0);
	CHECK_EQ(kv_io_queue_type(h, 0), 2);
	CHECK_EQ(kv_io_queue_type(h, 1), KV_ERR_DD_INVALID_QUEUE_TYPE);
	CHECK_EQ(kv_get_devices_on_cpu(0, &n, hs), KV_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK(hs[0] == h);
	CHECK_EQ(kv_get_devices_on_cpu(1, &n, hs), KV_SUCCESS);
	CHECK_EQ(n, 0);
	CHECK_EQ(kv_get_device_handles(&n, hs), KV_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK(!context_switch_async_to_sync(0)); /* no sync core */
	CHECK(context_switch_sync_to_async(0));
	CHECK_EQ(kv_get_core_id(), 0);
	kv_process_completion_queue(h, 0);
	kv_process_completion_queue(h, 5); /* no such queue: logged, nothing else */
	kv_process_completion(BAD_HANDLE);
	kv_sdk_info();
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* kv_get_device_handles lists every device, also those whose core_mask lacks core 0. */
static void test_device_handles_lists_all_devices(void)
{
	NEED_CPUS(2);
	const char *path = kv_test_write_config(1,
		"{ \"ssd_type\": \"lba\", \"slab_size\": 64, \"slab_alloc_policy\": \"posix\",\n"
		"  \"device_description\": [\n"
		"    { \"dev_id\": \"emu://a?ns=mem:8M\", \"core_mask\": 1, \"sync_mask\": 1 },\n"
		"    { \"dev_id\": \"emu://b?ns=mem:8M\", \"core_mask\": 2, \"sync_mask\": 2 } ] }\n");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) == KV_SUCCESS);
	int n = 0;
	uint64_t hs[NR_MAX_SSD];
	CHECK_EQ(kv_get_device_handles(&n, hs), KV_SUCCESS);
	CHECK_EQ(n, 2);
	CHECK_EQ(kv_get_dev_idx_on_handle(hs[1]), 1);
	CHECK_EQ(kv_get_devices_on_cpu(1, &n, hs), KV_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK_EQ(kv_get_dev_idx_on_handle(hs[0]), 1);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_format_lba_device(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8], w[512], r[512], zero[512] = { 0 };
	fill(w, sizeof(w), 9);
	kv_pair kv;
	lba_key(key, 7);
	kv_pair_init(&kv, key, 8, w, 512);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_format_device(h, KV_FORMAT_USERDATA), KV_SUCCESS);
	kv_pair_init(&kv, key, 8, r, 512);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(r, zero, 512) == 0);
	CHECK_EQ(kv_get_sector_size(h), 512);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* With log_level >= 1 a failed call leaves a line naming the function and the reason. */
static void test_failures_are_logged(void)
{
	char log[128];
	snprintf(log, sizeof(log), "/tmp/kvsdk_test_%d.log", (int)getpid());
	unlink(log);
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	uint8_t key[8] = { 0 }, val[512];
	kv_pair kv;
	kv_pair_init(&kv, key, 3, val, 512);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_KEY_SIZE);
	CHECK_EQ(kv_get_dev_idx_on_handle(BAD_HANDLE), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_SDK_CLOSE);
	FILE *f = fopen(log, "r");
	REQUIRE(f != NULL);
	char text[8192];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	CHECK(strstr(text, "kv_store: key length 3 is not 4..255") != NULL);
	CHECK(strstr(text, "kv_get_dev_idx_on_handle: handle 0x123456789 is not a device") != NULL);
	CHECK(strstr(text, "kv_store: the SDK is not initialized") != NULL);
	unlink(log);
}

static void test_calls_after_finalize_fail_closed(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	uint8_t key[8] = { 0 }, val[512];
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 512);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_retrieve_async(h, &kv), KV_ERR_SDK_CLOSE);
	CHECK(kv_get_num_sectors(h) == KV_ERR_INVALID_VALUE);
	CHECK_EQ(kv_sdk_finalize(), KV_ERR_SDK_CLOSE);
	kv_test_remove_configs();
}

/* kv_get_used_size on a block SSD: the bytes in use as the device reports them, Identify
 * Namespace NUSE times the sector size. The emulated memory namespace counts the 4 KiB pages
 * written and not deallocated since: 0 when fresh, growing with stores, shrinking with the
 * deletes (Deallocate) of LBA mode, as an SSD that tracks its utilization does. */
static void test_lba_used_size_follows_nuse(void)
{
	uint64_t h = kv_test_init(LBA_DEV, "lba", ", \"core_mask\": 1, \"sync_mask\": 1", NULL);
	REQUIRE(h != 0);
	CHECK_EQ(kv_get_used_size(h), 0);
	uint8_t key[8];
	uint8_t *v = kv_zalloc(16384);
	memset(v, 0x5a, 16384);
	kv_pair kv;
	for (uint64_t i = 0; i < 8; i++) {
		lba_key(key, i * 32); /* 16 KiB apart */
		kv_pair_init(&kv, key, 8, v, 16384);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	CHECK_EQ(kv_get_used_size(h), 8 * 16384);
	CHECK(kv_get_used_size(h) < kv_get_total_size(h));
	lba_key(key, 3 * 32);
	kv_pair_init(&kv, key, 8, v, 16384);
	CHECK_EQ(kv_delete(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_get_used_size(h), 7 * 16384);
	CHECK_EQ(kv_format_device(h, KV_FORMAT_USERDATA), KV_SUCCESS);
	CHECK_EQ(kv_get_used_size(h), 0);
	kv_free(v);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

TEST_MAIN(TEST(test_calls_before_init_fail_closed), TEST(test_init_arguments),
	  TEST(test_lba_used_size_follows_nuse),
	  TEST(test_unknown_device_fails_init), TEST(test_init_from_struct_fills_handles_and_refcounts),
	  TEST(test_bad_handles_and_null_arguments), TEST(test_smart_log_page_through_sdk),
	  TEST(test_lba_round_trip_and_checks), TEST(test_lba_offset_is_bytes),
	  TEST(test_lba_delete_length_in_bytes_sync_and_async), TEST(test_topology_queries),
	  TEST(test_device_handles_lists_all_devices), TEST(test_format_lba_device),
	  TEST(test_failures_are_logged), TEST(test_finalize_from_inline_callback_is_refused),
	  TEST(test_calls_after_finalize_fail_closed))
