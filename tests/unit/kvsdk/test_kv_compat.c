/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Programs written for the original SDK, in their idioms: a zero-initialized kv_sdk with only
 * dev_id set (the PCI address the samples hard-code, aliased to an emulated device), async
 * callbacks that check status against kv_result codes and read result as completion dword 0,
 * iterate loops that count keys from the 32 KiB buffer when key.length is 0, reads after the
 * end, the configurations the original accepted, and its header names (kvnvme.h, enum tags,
 * SOCKET_ID_ANY). Each test is one item of the compatibility issue; our own code, not theirs.
 */
#include <sched.h>
#include <stdatomic.h>

#include "kvnvme.h"
#include "kvcache.h"
#include "kv_apis.h"
#include "kv_internal.h" /* kv_config_error: the message init printed */
#include "kv_test.h"
#include "test_util.h"

/* ---- H: the original's header names compile and mean what they meant ---- */
static void test_header_names(void)
{
	enum kv_result r = KV_ERR_NOT_EXIST_KEY;
	kv_result r2 = r;
	enum kv_sdk_ssd_types t = LBA_TYPE_SSD;
	enum kv_cache_reclaim c = CACHE_RECLAIM_LRU;
	enum kv_iterate_handle_type it = KV_KEY_ITERATE_WITH_DELETE;
	enum kv_sdk_iterate_status st = ITERATE_HANDLE_OPENED;
	CHECK_EQ(r2, 0x10);
	CHECK_EQ(t, 1);
	CHECK_EQ(c, 0);
	CHECK_EQ(it, 3);
	CHECK_EQ(st, 1);
	CHECK_EQ(SOCKET_ID_ANY, -1);
	CHECK_EQ(SYNC_IO_QUEUE, 1);
	CHECK_EQ(ASYNC_IO_QUEUE, 2);
	CHECK_EQ(KV_SSD_MAX_ITERATE_READ_LEN, 32768);
	void *p = kv_zalloc_socket(4096, SOCKET_ID_ANY);
	REQUIRE(p != NULL);
	CHECK(((uint8_t *)p)[4095] == 0);
	kv_free(p);
	p = kv_alloc_socket(4096, 0);
	CHECK(p != NULL);
	kv_free(p);
	CHECK(kv_alloc_socket(4096, -2) == NULL);
}

/* ---- A: kv_sdk zero-initialized, only dev_id set ---- */
static void alias(const char *devs)
{
	setenv("UNVME_DEVICES", devs, 1);
}

static void test_zero_struct_with_only_dev_id(void)
{
	alias("0000:02:00.0=emu://compat-a?ns=kv:64M");
	kv_sdk sdk_opt = { 0, };
	sprintf(sdk_opt.dev_id[0], "0000:02:00.0");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk_opt) == KV_SUCCESS);
	/* the effective configuration is copied back, as the samples read it */
	CHECK_EQ(sdk_opt.nr_ssd, 1);
	CHECK_EQ(sdk_opt.slab_alloc_policy, SLAB_MM_ALLOC_HUGE);
	CHECK(sdk_opt.slab_size > 0);
	CHECK_EQ(sdk_opt.submit_retry_interval, 1);
	CHECK(sdk_opt.dd_options[0].core_mask != 0);
	CHECK_EQ(sdk_opt.dd_options[0].queue_depth, 32);
	CHECK(sdk_opt.dev_handle[0] != 0);
	CHECK_STREQ(sdk_opt.dev_id[0], "0000:02:00.0");
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	CHECK_EQ(kv_get_device_handles(&n, h), KV_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK(h[0] == sdk_opt.dev_handle[0]);
	/* the samples walk core_mask and ask which devices each core reaches */
	for (int c = 0; c < MAX_CPU_CORES; c++) {
		if (!(sdk_opt.dd_options[0].core_mask >> c & 1))
			continue;
		CHECK_EQ(kv_get_devices_on_cpu(c, &n, h), KV_SUCCESS);
		CHECK_EQ(n, 1);
	}
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	/* a set but wrong field is still an error; sync bits outside core_mask are not */
	kv_sdk bad = { 0, };
	sprintf(bad.dev_id[0], "0000:02:00.0");
	bad.dd_options[0].core_mask = 1;
	bad.dd_options[0].sync_mask = 0xf;
	bad.dd_options[0].cq_thread_mask = 2;
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_STR, &bad) == KV_SUCCESS);
	CHECK_EQ(bad.dd_options[0].sync_mask, 1);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	bad.ssd_type = 7;
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_STR, &bad), KV_ERR_SDK_INVALID_PARAM);
	unsetenv("UNVME_DEVICES");
}

/* ---- B: async callbacks as the samples check them ---- */
static atomic_int cb_done;
static atomic_uint cb_status, cb_result;
static atomic_int cb_nvme;
static void sample_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	atomic_store(&cb_status, status);
	atomic_store(&cb_result, result);
	atomic_store(&cb_nvme, kv_async_nvme_status());
	atomic_fetch_add(&cb_done, 1);
}

static void wait_cb(int n)
{
	while (atomic_load(&cb_done) < n)
		sched_yield();
}

/* The samples' struct init: zeroed, one dev_id (aliased through $UNVME_DEVICES), masks.
 * Returns the device handle, 0 when init fails; *out (may be NULL) gets the struct back. */
static uint64_t struct_init(const char *devs, const char *addr, int ssd_type, uint64_t core,
			    uint64_t sync, uint64_t cq, kv_sdk *out)
{
	alias(devs);
	kv_sdk sdk_opt = { 0, };
	sprintf(sdk_opt.dev_id[0], "%s", addr);
	sdk_opt.ssd_type = ssd_type;
	sdk_opt.dd_options[0].core_mask = core;
	sdk_opt.dd_options[0].sync_mask = sync;
	sdk_opt.dd_options[0].cq_thread_mask = cq;
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk_opt);
	if (out)
		*out = sdk_opt;
	return rc == KV_SUCCESS ? sdk_opt.dev_handle[0] : 0;
}

static uint64_t compat_init(const char *devs, int sync)
{
	return struct_init(devs, "0000:02:00.0", KV_TYPE_SSD, 0x1, sync ? 0x1 : 0x0, 0x2, NULL);
}

static void test_callback_status_and_result(void)
{
	uint64_t h = compat_init("0000:02:00.0=emu://compat-b?ns=kv:64M", 0);
	REQUIRE(h != 0);
	char key[16] = "compat-key-00001", val[4096];
	memset(val, 'a', sizeof(val));
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.key = key;
	kv.key.length = 16;
	kv.value.value = val;
	kv.value.length = 3000;
	kv.param.async_cb = sample_cb;
	atomic_store(&cb_done, 0);
	CHECK_EQ(kv_store_async(h, &kv), KV_SUCCESS);
	wait_cb(1);
	CHECK_EQ(atomic_load(&cb_status), KV_SUCCESS);
	CHECK_EQ(atomic_load(&cb_nvme), 0);
	/* retrieve: result is the stored value size (completion dword 0) */
	char buf[4096];
	kv.value.value = buf;
	kv.value.length = sizeof(buf);
	CHECK_EQ(kv_retrieve_async(h, &kv), KV_SUCCESS);
	wait_cb(2);
	CHECK_EQ(atomic_load(&cb_status), KV_SUCCESS);
	CHECK_EQ(atomic_load(&cb_result), 3000);
	CHECK_EQ(kv.value.length, 3000);
	/* a key that does not exist: status 0x10, the code of the original, and the whole NVMe
	 * status (SCT 1) reachable from inside the callback */
	key[15] = '2';
	kv.value.length = sizeof(buf);
	CHECK_EQ(kv_retrieve_async(h, &kv), KV_SUCCESS);
	wait_cb(3);
	CHECK_EQ(atomic_load(&cb_status), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(atomic_load(&cb_nvme), 0x110);
	CHECK_EQ(kv_async_nvme_status(), -1); /* outside a callback */
	CHECK_EQ(kv_exist_async(h, &kv), KV_SUCCESS);
	wait_cb(4);
	CHECK_EQ(atomic_load(&cb_status), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- 21.14: an async store copies the caller's kv_alloc'd value by default ---- */
static void test_async_store_copies_reused_buffer(void)
{
	uint64_t h = compat_init("0000:02:00.0=emu://compat-c?ns=kv:64M", 0);
	REQUIRE(h != 0);
	uint8_t *val = kv_alloc(4096);
	REQUIRE(val != NULL);
	char key[16] = "reuse-key-000000";
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.key = key;
	kv.key.length = 16;
	kv.value.value = val;
	kv.value.length = 4096;
	kv.param.async_cb = sample_cb;
	atomic_store(&cb_done, 0);
	enum { N = 64 };
	kv_pair pairs[N];
	char keys[N][16];
	for (int i = 0; i < N; i++) {
		/* the buffer is reused the moment the call returns, as the original allowed */
		memset(val, 'A' + i % 26, 4096);
		pairs[i] = kv;
		snprintf(keys[i], sizeof(keys[i]), "reuse-key-%05d", i);
		pairs[i].key.key = keys[i];
		pairs[i].key.length = 15;
		CHECK_EQ(kv_store_async(h, &pairs[i]), KV_SUCCESS);
	}
	wait_cb(N);
	uint8_t *back = malloc(4096);
	REQUIRE(back != NULL);
	int bad = 0;
	for (int i = 0; i < N; i++) {
		kv_pair r = pairs[i];
		r.value.value = back;
		r.value.length = 4096;
		CHECK_EQ(kv_retrieve(h, &r), KV_SUCCESS);
		for (int j = 0; j < 4096; j++)
			bad += back[j] != 'A' + i % 26;
	}
	CHECK_EQ(bad, 0);
	free(back);
	kv_free(val);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- C, D, E: iterate as the samples do ---- */
static int count_keys(const kv_iterate *it)
{
	int n = 0;
	if (it->kv.key.length == 0 && it->kv.value.length > 0)
		memcpy(&n, it->kv.value.value, KV_ITERATE_READ_BUFFER_OFFSET);
	return n;
}

static void store_keys(uint64_t h, int n)
{
	char key[16], val[64];
	memset(val, 'v', sizeof(val));
	kv_pair kv;
	for (int i = 0; i < n; i++) {
		memset(key, 0, sizeof(key));
		memcpy(key + 12, &i, 4); /* the samples' layout: zero prefix, index at the end */
		memset(&kv, 0, sizeof(kv));
		kv.key.key = key;
		kv.key.length = 16;
		kv.value.value = val;
		kv.value.length = sizeof(val);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
}

static void test_iterate_sync_idiom(void)
{
	uint64_t h = compat_init("0000:02:00.0=emu://compat-d?ns=kv:64M", 1);
	REQUIRE(h != 0);
	store_keys(h, 3000); /* 3000 x 20 bytes: two chunks */
	uint32_t iterator = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xFFFFFFFF, 0, KV_KEY_ITERATE);
	REQUIRE(iterator >= 1 && iterator <= KV_MAX_ITERATE_HANDLE);
	kv_iterate *it = malloc(sizeof(*it));
	memset(it, 0, sizeof(*it));
	it->kv.key.key = malloc(16);
	it->kv.key.length = 16;
	it->kv.value.value = malloc(32 * 1024);
	it->iterator = iterator;
	/* D: anything but exactly 32 KiB is refused, and nothing is read */
	uint32_t wrong[] = { 1025, 16 * 1024, 32 * 1024 - 1, 32 * 1024 + 1, 64 * 1024 };
	for (unsigned i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		it->kv.value.length = wrong[i];
		CHECK_EQ(kv_iterate_read(h, it), KV_ERR_INVALID_VALUE_SIZE);
		CHECK_EQ(it->kv.value.length, 0);
	}
	int keys = 0, reads = 0, ret;
	do {
		it->kv.key.length = 16;
		it->kv.value.length = 32 * 1024;
		ret = kv_iterate_read(h, it);
		CHECK_EQ(it->kv.key.length, 0); /* C */
		keys += count_keys(it);
		reads++;
	} while (ret == KV_SUCCESS);
	CHECK_EQ(ret, KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(keys, 3000);
	CHECK(reads >= 2);
	/* E: after the end, the end again, and empty */
	for (int i = 0; i < 3; i++) {
		it->kv.value.length = 32 * 1024;
		CHECK_EQ(kv_iterate_read(h, it), KV_ERR_ITERATE_READ_EOF);
		CHECK_EQ(it->kv.value.length, 0);
	}
	CHECK_EQ(kv_iterate_close(h, (uint8_t)iterator), KV_SUCCESS);
	/* an iterator that matches nothing: an empty chunk at once */
	iterator = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xFFFFFFFF, 0x7a7a7a7a, KV_KEY_ITERATE);
	REQUIRE(iterator >= 1 && iterator <= KV_MAX_ITERATE_HANDLE);
	it->iterator = iterator;
	it->kv.value.length = 32 * 1024;
	CHECK_EQ(kv_iterate_read(h, it), KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(it->kv.value.length, 0);
	CHECK_EQ(kv_iterate_close(h, (uint8_t)iterator), KV_SUCCESS);
	free(it->kv.key.key);
	free(it->kv.value.value);
	free(it);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* Async reads submitted until one reports the end (as test_iterate_async does): every key
 * once, nothing after the end, result = bytes filled. The structs outlive the callbacks here
 * so that the test can scribble on them after submission (21.15). */
struct iter_state {
	atomic_int completed, keys, eof, after_eof_bytes, bad;
};

static void iter_cb(kv_iterate *it, unsigned int result, unsigned int status)
{
	struct iter_state *s = it->kv.param.private_data;
	if ((status != KV_SUCCESS && status != KV_ERR_ITERATE_READ_EOF) ||
	    result != it->kv.value.length || it->kv.key.length != 0)
		atomic_fetch_add(&s->bad, 1);
	if (status == KV_ERR_ITERATE_READ_EOF && atomic_exchange(&s->eof, 1))
		atomic_fetch_add(&s->after_eof_bytes, (int)it->kv.value.length);
	atomic_fetch_add(&s->keys, count_keys(it));
	atomic_fetch_add(&s->completed, 1);
}

static void test_iterate_async_idiom(void)
{
	uint64_t h = compat_init("0000:02:00.0=emu://compat-e?ns=kv:64M", 0);
	REQUIRE(h != 0);
	store_keys(h, 5000);
	uint32_t iterator = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xFFFFFFFF, 0, KV_KEY_ITERATE);
	REQUIRE(iterator >= 1 && iterator <= KV_MAX_ITERATE_HANDLE);
	struct iter_state s;
	memset(&s, 0, sizeof(s));
	int submitted = 0;
	enum { MAX_READS = 1000 };
	kv_iterate **its = calloc(MAX_READS, sizeof(*its));
	REQUIRE(its != NULL);
	while (!atomic_load(&s.eof) && submitted < MAX_READS) {
		kv_iterate *it = its[submitted] = malloc(sizeof(*it));
		memset(it, 0, sizeof(*it));
		it->iterator = iterator;
		it->kv.value.value = malloc(32 * 1024);
		it->kv.value.length = 32 * 1024;
		it->kv.param.async_cb = iter_cb;
		it->kv.param.private_data = &s;
		CHECK_EQ(kv_iterate_read_async(h, it), KV_SUCCESS);
		/* 21.15: the caller's struct may change once submitted; the request kept the id */
		it->iterator = 0;
		submitted++;
	}
	while (atomic_load(&s.completed) < submitted)
		sched_yield();
	for (int i = 0; i < submitted; i++) {
		free(its[i]->kv.value.value);
		free(its[i]);
	}
	free(its);
	CHECK_EQ(atomic_load(&s.bad), 0);
	CHECK_EQ(atomic_load(&s.keys), 5000);
	CHECK_EQ(atomic_load(&s.after_eof_bytes), 0);
	CHECK_EQ(kv_iterate_close(h, (uint8_t)iterator), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- F: used size in LBA mode is bytes in use ---- */
static void test_lba_used_size_is_bytes(void)
{
	uint64_t h = struct_init("0000:0a:00.0=emu://compat-f?ns=mem:64M", "0000:0a:00.0",
				 LBA_TYPE_SSD, 1, 1, 0, NULL);
	REQUIRE(h != 0);
	uint64_t used = kv_get_used_size(h);
	CHECK(used != KV_ERR_INVALID_VALUE);
	CHECK(used <= kv_get_total_size(h));
	CHECK_EQ(used % kv_get_sector_size(h), 0);
	CHECK_EQ(used, 0); /* never written: the namespace reports no page in use */

	/* a written block counts in bytes, not in 1/100 percent */
	static uint8_t val[64 * 1024];
	memset(val, 0x5a, sizeof(val));
	uint64_t lba = 1000;
	kv_pair kv;
	kv_pair_init(&kv, &lba, sizeof(lba), val, sizeof(val));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	used = kv_get_used_size(h);
	CHECK(used >= sizeof(val));
	CHECK(used < 4 * 1024 * 1024);
	CHECK_EQ(used % kv_get_sector_size(h), 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- G: configurations the original accepted ---- */
static void run_async_round(uint64_t h, int n)
{
	char key[16], val[512];
	memset(val, 'g', sizeof(val));
	kv_pair *kv = calloc((size_t)n, sizeof(*kv));
	char (*keys)[16] = calloc((size_t)n, 16);
	REQUIRE(kv && keys);
	atomic_store(&cb_done, 0);
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "g-key-%09d", i);
		memcpy(keys[i], key, 16);
		kv[i].key.key = keys[i];
		kv[i].key.length = 15;
		kv[i].value.value = val;
		kv[i].value.length = sizeof(val);
		kv[i].param.async_cb = sample_cb;
		CHECK_EQ(kv_store_async(h, &kv[i]), KV_SUCCESS);
	}
	wait_cb(n);
	CHECK_EQ(atomic_load(&cb_status), KV_SUCCESS);
	free(kv);
	free(keys);
}

static void test_configs_the_original_accepted(void)
{
	/* kv_perf's shipped config: the completion core is the async submission core */
	const char *path = kv_test_write_config(0,
		"{ \"slab_size\": 44, \"ssd_type\": \"kv\", \"driver\": \"udd\",\n"
		"  \"device_description\": { \"dev_id\": \"0000:02:00.0\", \"core_mask\": 1,\n"
		"    \"sync_mask\": 0, \"cq_thread_mask\": 1, \"queue_depth\": 64 } }");
	alias("0000:02:00.0=emu://compat-g1?ns=kv:64M");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) == KV_SUCCESS);
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	CHECK_EQ(kv_get_device_handles(&n, h), KV_SUCCESS);
	run_async_round(h[0], 500);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	/* mkfs / fuse: LBA, async cores, no completion thread: kv_process_completion reaps */
	path = kv_test_write_config(1,
		"{ \"ssd_type\": \"lba\", \"app_hugemem_size\": 512,\n"
		"  \"device_description\": [ { \"dev_id\": \"0000:0a:00.0\", \"core_mask\": 3,\n"
		"    \"sync_mask\": 0, \"cq_thread_mask\": 0, \"queue_depth\": 256 } ] }");
	alias("0000:0a:00.0=emu://compat-g2?ns=mem:64M");
	REQUIRE(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) == KV_SUCCESS);
	CHECK_EQ(kv_get_device_handles(&n, h), KV_SUCCESS);
	uint8_t *blk = kv_zalloc(4096);
	uint64_t lba = 8;
	kv_pair kv;
	memset(&kv, 0, sizeof(kv));
	kv.key.key = &lba;
	kv.key.length = 8;
	kv.value.value = blk;
	kv.value.length = 4096;
	kv.param.async_cb = sample_cb;
	atomic_store(&cb_done, 0);
	for (int i = 0; i < 300; i++) {
		lba = (uint64_t)i * 8;
		memset(blk, i & 0xff, 4096);
		CHECK_EQ(kv_store_async(h[0], &kv), KV_SUCCESS);
	}
	while (atomic_load(&cb_done) < 300)
		kv_process_completion(h[0]); /* the application reaps, as mkfs did */
	CHECK_EQ(atomic_load(&cb_status), KV_SUCCESS);
	/* a sync call on this all-async device waits by reaping the queue itself */
	lba = 8;
	memset(blk, 0, 4096);
	CHECK_EQ(kv_retrieve(h[0], &kv), KV_SUCCESS);
	CHECK_EQ(blk[0], 1);
	kv_free(blk);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	/* masks naming CPUs beyond this machine (test_iterate_async's 0xF / 0x10): run */
	const char *kvdev = "0000:02:00.0=emu://compat-g3?ns=kv:64M";
	uint64_t h3 = struct_init(kvdev, "0000:02:00.0", KV_TYPE_SSD, 0xF, 0x0, 0x10, NULL);
	REQUIRE(h3 != 0);
	run_async_round(h3, 500);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	/* all sync with a completion core this machine lacks (cumulative_iterate's 0x80) */
	kv_sdk sdk_opt;
	REQUIRE(struct_init(kvdev, "0000:02:00.0", KV_TYPE_SSD, 0x3, 0x3, 0x80, &sdk_opt) != 0);
	CHECK_EQ(sdk_opt.dd_options[0].cq_thread_mask, 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- 22.3: a device without KV iterators is not a KV result ---- */
static void test_iterator_info_on_a_device_without_kv(void)
{
	uint64_t h = struct_init("0000:02:00.0=emu://compat-h?ns=mem:64M", "0000:02:00.0",
				 KV_TYPE_SSD, 1, 1, 0, NULL);
	REQUIRE(h != 0);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	/* Get Log Page D0h fails with Invalid Log Page (SCT 1h SC 09h): not 0x09 as a kv_result
	 * (KV_ERR_MISALIGNED_VALUE_OFFSET) */
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_ERR_DD_UNSUPPORTED_CMD);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unsetenv("UNVME_DEVICES");
}

/* ---- 22.6: a log file that cannot be written is refused at init ---- */
static void test_log_file_in_missing_directory(void)
{
	const char *path = kv_test_write_config(2,
		"{ \"log_level\": 1, \"log_file\": \"/nonexistent-dir-kvsdk/kv.log\",\n"
		"  \"device_description\": { \"dev_id\": \"emu://compat-i?ns=kv:16M\", "
		"\"core_mask\": 1, \"sync_mask\": 1 } }");
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path), KV_ERR_SDK_INVALID_PARAM);
	CHECK(strstr(kv_config_error(), "/nonexistent-dir-kvsdk/kv.log") != NULL);
	CHECK(strstr(kv_config_error(), "No such file or directory") != NULL);
	CHECK_EQ(kv_is_sdk_initialized(), 0);
	/* with log_level 0 nothing is ever written there: accepted */
	path = kv_test_write_config(3,
		"{ \"log_level\": 0, \"log_file\": \"/nonexistent-dir-kvsdk/kv.log\",\n"
		"  \"device_description\": { \"dev_id\": \"emu://compat-i?ns=kv:16M\", "
		"\"core_mask\": 1, \"sync_mask\": 1 } }");
	CHECK_EQ(kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

TEST_MAIN(TEST(test_header_names), TEST(test_zero_struct_with_only_dev_id),
	  TEST(test_callback_status_and_result), TEST(test_async_store_copies_reused_buffer),
	  TEST(test_iterate_sync_idiom), TEST(test_iterate_async_idiom),
	  TEST(test_lba_used_size_is_bytes), TEST(test_configs_the_original_accepted),
	  TEST(test_iterator_info_on_a_device_without_kv), TEST(test_log_file_in_missing_directory))
