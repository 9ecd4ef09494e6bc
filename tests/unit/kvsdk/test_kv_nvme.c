/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver-level API (kvnvme.h) and the tracing (kv_trace.h) of the original SDK on an
 * emulated KV namespace: I/O on the queue a call names (the calling core's with
 * DEFAULT_IO_QUEUE_ID), the original's refusals of a queue of the other kind or a core without
 * a queue, async callbacks, iterator reads, the read cache kept coherent when both APIs are
 * mixed, raw admin and I/O commands, Asynchronous Events delivered by
 * kv_nvme_process_completion, the queries' failure values, and the trace lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kv_test.h"
#include "kv_trace.h"
#include "kvnvme.h"
#include "test_util.h"

#define KV_DEV "emu://kvnvme?ns=kv:64M"
#define BAD_HANDLE 0x123456789ULL
/* one sync queue on CPU 0 */
#define SYNC0 ", \"core_mask\": 1, \"sync_mask\": 1"
/* one async queue on CPU 0, its completion thread on CPU 0 too (the original kv_perf's) */
#define ASYNC0 ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 1"

static bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

static void unpin(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static atomic_int done;
static atomic_uint last_status, last_result;

static void on_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)kv;
	atomic_store(&last_status, status);
	atomic_store(&last_result, result);
	atomic_fetch_add(&done, 1);
}

static bool wait_done(int n)
{
	uint64_t deadline = test_now_ms() + 30000; /* a hang guard only */
	while (atomic_load(&done) < n && test_now_ms() < deadline)
		sched_yield();
	return atomic_load(&done) >= n;
}

static void test_sync_queue_by_core_and_refusals(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(h != 0);
	/* kv_perf's buffers: kv_zalloc'd, padded to whole dwords */
	char *key = kv_zalloc(16), *val = kv_zalloc(4096), *back = kv_zalloc(4096);
	memcpy(key, "kvnvme-key-00001", 16);
	memset(val, 'q', 4096);
	kv_pair kv;
	kv_pair_init(&kv, key, 16, val, 4096);
	CHECK_EQ(kv_nvme_write(h, DEFAULT_IO_QUEUE_ID, &kv), KV_SUCCESS);
	CHECK_EQ(kv_nvme_exist(h, 0, &kv), KV_SUCCESS);
	kv_pair_init(&kv, key, 16, back, 4096);
	CHECK_EQ(kv_nvme_read(h, 0, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 4096);
	CHECK_EQ(kv.value.actual_value_size, 4096);
	CHECK(memcmp(back, val, 4096) == 0);
	/* the other kind of queue, and cores without one: the original's answers */
	kv.param.async_cb = on_done;
	CHECK_EQ(kv_nvme_write_async(h, 0, &kv), KV_ERR_DD_INVALID_QUEUE_TYPE);
	CHECK_EQ(kv_nvme_read_async(h, -1, &kv), KV_ERR_DD_INVALID_QUEUE_TYPE);
	CHECK_EQ(kv_nvme_write(h, 5, &kv), KV_ERR_DD_INVALID_PARAM);
	CHECK_EQ(kv_nvme_read(h, MAX_CPU_CORES, &kv), KV_ERR_DD_INVALID_PARAM);
	CHECK_EQ(kv_nvme_write(BAD_HANDLE, 0, &kv), KV_ERR_DD_NO_DEVICE);
	CHECK_EQ(kv_nvme_append(h, 0, &kv), KV_ERR_DD_UNSUPPORTED_CMD);
	/* the usual argument checks */
	CHECK_EQ(kv_nvme_write(h, 0, NULL), KV_ERR_SDK_INVALID_PARAM);
	kv.key.length = 3;
	CHECK_EQ(kv_nvme_write(h, 0, &kv), KV_ERR_INVALID_KEY_SIZE);
	kv.key.length = 16;
	/* a thread on a core without a queue of the device is refused, not moved */
	if (test_online_cpus() >= 2 && pin(1)) {
		CHECK_EQ(kv_nvme_read(h, DEFAULT_IO_QUEUE_ID, &kv), KV_ERR_DD_INVALID_PARAM);
		CHECK_EQ(sched_getcpu(), 1);
		CHECK_EQ(kv_nvme_read(h, 0, &kv), KV_SUCCESS); /* naming the queue works */
	}
	REQUIRE(pin(0));
	CHECK_EQ(kv_nvme_delete(h, 0, &kv), KV_SUCCESS);
	CHECK_EQ(kv_nvme_exist(h, 0, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_nvme_read(h, 0, &kv), KV_ERR_NOT_EXIST_KEY);
	kv_free(key);
	kv_free(val);
	kv_free(back);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static void test_async_queue_callbacks(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", ASYNC0, NULL);
	REQUIRE(h != 0);
	CHECK_EQ(kv_nvme_io_queue_type(h, 0), ASYNC_IO_QUEUE);
	enum { N = 64 };
	static char keys[N][16], vals[N][512], backs[N][512];
	static kv_pair kvs[N];
	atomic_store(&done, 0);
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "async-%09d", i);
		memset(vals[i], 'a' + i % 26, sizeof(vals[i]));
		kv_pair_init(&kvs[i], keys[i], 15, vals[i], sizeof(vals[i]));
		kvs[i].param.async_cb = on_done;
		/* plain memory: copied through the SDK's buffers */
		CHECK_EQ(kv_nvme_write_async(h, DEFAULT_IO_QUEUE_ID, &kvs[i]), KV_SUCCESS);
	}
	REQUIRE(wait_done(N));
	CHECK_EQ(atomic_load(&last_status), KV_SUCCESS);
	CHECK_EQ(kv_nvme_write(h, 0, &kvs[0]), KV_ERR_DD_INVALID_QUEUE_TYPE);
	atomic_store(&done, 0);
	for (int i = 0; i < N; i++) {
		kv_pair_init(&kvs[i], keys[i], 15, backs[i], sizeof(backs[i]));
		kvs[i].param.async_cb = on_done;
		CHECK_EQ(kv_nvme_read_async(h, 0, &kvs[i]), KV_SUCCESS);
	}
	REQUIRE(wait_done(N));
	for (int i = 0; i < N; i++)
		CHECK(memcmp(backs[i], vals[i], sizeof(vals[i])) == 0);
	CHECK_EQ(atomic_load(&last_result), 512); /* completion DW0: the stored value size */
	atomic_store(&done, 0);
	CHECK_EQ(kv_nvme_exist_async(h, 0, &kvs[3]), KV_SUCCESS);
	REQUIRE(wait_done(1));
	CHECK_EQ(atomic_load(&last_status), KV_SUCCESS);
	atomic_store(&done, 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(kv_nvme_delete_async(h, 0, &kvs[i]), KV_SUCCESS);
	REQUIRE(wait_done(N));
	atomic_store(&done, 0);
	CHECK_EQ(kv_nvme_exist_async(h, 0, &kvs[3]), KV_SUCCESS);
	REQUIRE(wait_done(1));
	CHECK_EQ(atomic_load(&last_status), KV_ERR_NOT_EXIST_KEY);
	/* kv_nvme_process_completion waits for everything accepted */
	kv_nvme_process_completion(h);
	kv_nvme_process_completion_queue(h, 0);
	CHECK_EQ(kv_nvme_get_current_qd(h, 0), 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static atomic_int iter_done;
static atomic_uint iter_status;

static void on_iter(kv_iterate *it, unsigned int result, unsigned int status)
{
	(void)it;
	(void)result;
	atomic_store(&iter_status, status);
	atomic_fetch_add(&iter_done, 1);
}

static void test_iterate_reads_on_named_queues(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(h != 0);
	char key[16];
	uint8_t val[64] = { 1 };
	kv_pair kv;
	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "itnv%011d", i);
		kv_pair_init(&kv, key, 15, val, sizeof(val));
		REQUIRE(kv_nvme_write(h, 0, &kv) == KV_SUCCESS);
	}
	uint32_t it_h = kv_nvme_iterate_open(h, KV_KEYSPACE_IODATA, 0xffffffffu, 0x69746e76u,
					     KV_KEY_ITERATE); /* "itnv" */
	REQUIRE(it_h >= 1 && it_h <= KV_MAX_ITERATE_HANDLE);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	CHECK_EQ(kv_nvme_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_SUCCESS);
	CHECK_EQ(info[it_h - 1].status, ITERATE_HANDLE_OPENED);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = it_h;
	it.kv.value.value = kv_zalloc(KV_ITERATE_READ_BUFFER_SIZE);
	int keys = 0, rc;
	do {
		it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_nvme_iterate_read(h, DEFAULT_IO_QUEUE_ID, &it);
		if (it.kv.value.length >= 4)
			keys += *(uint32_t *)it.kv.value.value;
	} while (rc == KV_SUCCESS);
	CHECK_EQ(rc, KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(keys, 300);
	it.kv.param.async_cb = on_iter;
	CHECK_EQ(kv_nvme_iterate_read_async(h, 0, &it), KV_ERR_DD_INVALID_QUEUE_TYPE);
	CHECK_EQ(kv_nvme_iterate_read(h, 9, &it), KV_ERR_DD_INVALID_PARAM);
	CHECK_EQ(kv_nvme_iterate_close(h, (uint8_t)it_h), KV_SUCCESS);
	kv_free(it.kv.value.value);
	CHECK_EQ(kv_nvme_format(h, KV_FORMAT_USERDATA), KV_SUCCESS);
	CHECK_EQ(kv_nvme_exist(h, 0, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);

	/* async iterate reads on an async queue */
	REQUIRE(pin(0));
	h = kv_test_init(KV_DEV, "kv", ASYNC0, NULL);
	REQUIRE(h != 0);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "itas%011d", i);
		kv_pair_init(&kv, key, 15, val, sizeof(val));
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	it_h = kv_nvme_iterate_open(h, 0, 0xffffffffu, 0x69746173u, KV_KEY_ITERATE); /* "itas" */
	REQUIRE(it_h >= 1 && it_h <= KV_MAX_ITERATE_HANDLE);
	memset(&it, 0, sizeof(it));
	it.iterator = it_h;
	it.kv.value.value = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	it.kv.param.async_cb = on_iter;
	atomic_store(&iter_done, 0);
	CHECK_EQ(kv_nvme_iterate_read_async(h, 0, &it), KV_SUCCESS);
	uint64_t deadline = test_now_ms() + 30000;
	while (!atomic_load(&iter_done) && test_now_ms() < deadline)
		sched_yield();
	CHECK_EQ(atomic_load(&iter_status), KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(*(uint32_t *)it.kv.value.value, 10);
	CHECK_EQ(kv_nvme_iterate_close(h, (uint8_t)it_h), KV_SUCCESS);
	free(it.kv.value.value);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

/* KV_KEY_ITERATE_WITH_RETRIEVE (the original kv_nvme's open-it -i 2): one pair per read, the
 * key at byte 0, the value from byte 512, key.length and value.length set. */
static void test_key_value_iterator(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, ", \"cache\": \"on\"");
	REQUIRE(h != 0);
	char key[16];
	char val[700];
	kv_pair kv;
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "0000pair%07d", i);
		memset(val, 'A' + i, sizeof(val));
		kv_pair_init(&kv, key, 15, val, (uint32_t)(sizeof(val) - 100 * i));
		REQUIRE(kv_nvme_write(h, 0, &kv) == KV_SUCCESS);
	}
	snprintf(key, sizeof(key), "1111other0000");
	kv_pair_init(&kv, key, 13, val, 8);
	REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	uint32_t it_h = kv_nvme_iterate_open(h, 0, 0xffffffffu, 0x30303030u,
					     KV_KEY_ITERATE_WITH_RETRIEVE);
	REQUIRE(it_h >= 1 && it_h <= KV_MAX_ITERATE_HANDLE);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_SUCCESS);
	CHECK_EQ(info[it_h - 1].type, KV_KEY_ITERATE_WITH_RETRIEVE);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = it_h;
	it.kv.value.value = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	int seen = 0, rc;
	do {
		it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_nvme_iterate_read(h, 0, &it);
		if (it.kv.key.length == 0)
			continue;
		const char *b = it.kv.value.value;
		CHECK_EQ(it.kv.key.length, 15);
		CHECK(memcmp(b, "0000pair", 8) == 0);
		int i = b[14] - '0';
		CHECK_EQ(it.kv.value.length, 700 - 100 * i);
		CHECK(b[512] == 'A' + i && b[512 + it.kv.value.length - 1] == 'A' + i);
		seen |= 1 << i;
	} while (rc == KV_SUCCESS);
	CHECK_EQ(rc, KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(seen, 7);
	/* reads of a key-value iterator leave the cache alone, and it stays right */
	char back[700];
	kv_pair_init(&kv, "0000pair0000001", 15, back, sizeof(back));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(kv.value.length == 600 && back[0] == 'B' && back[599] == 'B');
	CHECK_EQ(kv_nvme_iterate_close(h, (uint8_t)it_h), KV_SUCCESS);
	free(it.kv.value.value);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static void test_cache_stays_coherent_across_both_apis(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, ", \"cache\": \"on\"");
	REQUIRE(h != 0);
	char key[] = "coherent-key-001";
	char v1[512], v2[512], back[512];
	memset(v1, '1', sizeof(v1));
	memset(v2, '2', sizeof(v2));
	kv_pair kv;
	kv_pair_init(&kv, key, 16, v1, sizeof(v1));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	kv_pair_init(&kv, key, 16, back, sizeof(back));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS); /* now cached */
	kv_pair_init(&kv, key, 16, v2, sizeof(v2));
	CHECK_EQ(kv_nvme_write(h, 0, &kv), KV_SUCCESS);
	kv_pair_init(&kv, key, 16, back, sizeof(back));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(back, v2, sizeof(v2)) == 0);
	CHECK_EQ(kv_nvme_delete(h, 0, &kv), KV_SUCCESS);
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static kv_nvme_cmd_t raw(uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11)
{
	kv_nvme_cmd_t c;
	memset(&c, 0, sizeof(c));
	c.opc = opc;
	c.nsid = nsid;
	c.cdw10 = cdw10;
	c.cdw11 = cdw11;
	return c;
}

static void test_raw_commands(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(h != 0);
	/* Identify Controller (admin 06h, CNS 01h) into plain memory */
	uint8_t *id = calloc(1, 4096);
	kv_nvme_cpl_t *cpl = kv_nvme_submit_raw_cmd(h, raw(0x06, 0, 1, 0), id, 4096, ADMIN_CMD_TYPE);
	REQUIRE(cpl != NULL);
	CHECK_EQ(cpl->status, 0);
	CHECK(memcmp(id + 4, "EMU", 3) == 0); /* serial number at byte 4 */
	free(cpl);
	/* an unknown admin opcode completes with Invalid Opcode (SC 01h) */
	cpl = kv_nvme_submit_raw_cmd(h, raw(0x7e, 0, 0, 0), NULL, 0, ADMIN_CMD_TYPE);
	REQUIRE(cpl != NULL);
	CHECK_EQ(cpl->status, 1);
	free(cpl);
	/* the vendor exist command (B3h) on the I/O queue: key length - 1 in CDW11, the key in
	 * CDW12..15 */
	char key[16] = "raw-exist-key-01";
	uint8_t val[64] = { 7 };
	kv_pair kv;
	kv_pair_init(&kv, key, 16, val, sizeof(val));
	REQUIRE(kv_nvme_write(h, 0, &kv) == KV_SUCCESS);
	kv_nvme_cmd_t c = raw(0xb3, 0, 0, 15);
	memcpy(&c.cdw12, key, 16);
	cpl = kv_nvme_submit_raw_cmd(h, c, NULL, 0, IO_CMD_TYPE);
	REQUIRE(cpl != NULL);
	CHECK_EQ(cpl->status, 0);
	free(cpl);
	key[0] = 'X';
	memcpy(&c.cdw12, key, 16);
	cpl = kv_nvme_submit_raw_cmd(h, c, NULL, 0, IO_CMD_TYPE);
	REQUIRE(cpl != NULL);
	CHECK_EQ(cpl->status, KV_ERR_NOT_EXIST_KEY);
	free(cpl);
	CHECK(kv_nvme_submit_raw_cmd(h, c, NULL, 0, (raw_cmd_type_t)7) == NULL);
	CHECK(kv_nvme_submit_raw_cmd(BAD_HANDLE, c, NULL, 0, ADMIN_CMD_TYPE) == NULL);
	free(id);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static atomic_int aer_seen;
static atomic_uint aer_dw0;

static void on_aer(void *arg, unsigned int result, unsigned int status)
{
	CHECK(arg == &aer_seen);
	CHECK_EQ(status, 0);
	atomic_store(&aer_dw0, result);
	atomic_fetch_add(&aer_seen, 1);
}

static void test_asynchronous_event_callback(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(h != 0);
	CHECK_EQ(kv_nvme_register_aer_callback(h, on_aer, &aer_seen), 0);
	CHECK_EQ(kv_nvme_register_aer_callback(BAD_HANDLE, on_aer, NULL), -ENODEV);
	/* SMART events enabled (Set Features 0Bh), then the temperature threshold (04h) set
	 * below the device's 313 K: a SMART / health event */
	kv_nvme_cpl_t *cpl = kv_nvme_submit_raw_cmd(h, raw(0x09, 0, 0x0b, 1u << 1), NULL, 0,
						    ADMIN_CMD_TYPE);
	REQUIRE(cpl != NULL && cpl->status == 0);
	free(cpl);
	cpl = kv_nvme_submit_raw_cmd(h, raw(0x09, 0, 0x04, 300), NULL, 0, ADMIN_CMD_TYPE);
	REQUIRE(cpl != NULL && cpl->status == 0);
	free(cpl);
	uint64_t deadline = test_now_ms() + 30000; /* a hang guard only */
	while (!atomic_load(&aer_seen) && test_now_ms() < deadline) {
		kv_nvme_process_completion(h);
		test_sleep_ms(1);
	}
	CHECK_EQ(atomic_load(&aer_seen), 1);
	CHECK_EQ(atomic_load(&aer_dw0) & 7u, 1);             /* SMART / health status */
	CHECK_EQ((atomic_load(&aer_dw0) >> 16) & 0xffu, 0x02); /* its log page */
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static void test_queries_and_their_failure_values(void)
{
	REQUIRE(pin(0));
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(h != 0);
	CHECK_EQ(kv_nvme_is_dd_initialized(), 1);
	CHECK_EQ(kv_nvme_get_total_size(h), kv_get_total_size(h));
	CHECK_EQ(kv_nvme_get_sector_size(h), 512);
	CHECK_EQ(kv_nvme_get_num_sectors(h), kv_get_num_sectors(h));
	CHECK_EQ(kv_nvme_get_used_size(h), kv_get_used_size(h));
	CHECK_EQ(kv_nvme_get_waf(h), kv_get_waf(h));
	CHECK_EQ(kv_nvme_get_io_queue_size(h), 32);
	CHECK_EQ(kv_nvme_io_queue_type(h, 0), SYNC_IO_QUEUE);
	CHECK_EQ(kv_nvme_io_queue_type(h, 3), -EINVAL);
	uint8_t page[512];
	CHECK_EQ(kv_nvme_get_log_page(h, 0xc0, page, sizeof(page)), KV_SUCCESS);
	CHECK_EQ(kv_nvme_get_total_size(BAD_HANDLE), 0);
	CHECK_EQ(kv_nvme_get_used_size(BAD_HANDLE), 0);
	CHECK_EQ(kv_nvme_get_sector_size(BAD_HANDLE), 0);
	CHECK_EQ(kv_nvme_get_num_sectors(BAD_HANDLE), 0);
	CHECK(kv_nvme_get_waf(BAD_HANDLE) == KV_ERR_INVALID_VALUE);
	CHECK_EQ(kv_nvme_get_io_queue_size(BAD_HANDLE), 0);
	CHECK_EQ(kv_nvme_io_queue_type(BAD_HANDLE, 0), -EINVAL);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	CHECK_EQ(kv_nvme_is_dd_initialized(), 0);
	unpin();
}

/* Runs fn with stdout going to a file; returns what it printed (static buffer). */
static const char *capture_stdout(void (*fn)(void))
{
	static char out[8192];
	char path[64];
	snprintf(path, sizeof(path), "/tmp/kvnvme_trace_%d.txt", (int)getpid());
	fflush(stdout);
	int saved = dup(1);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0)
		return "";
	dup2(fd, 1);
	fn();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return out;
}

static uint64_t trace_handle;

static void traced_calls(void)
{
	char key[] = "trace-key-000001";
	uint8_t val[512] = { 0 };
	kv_pair kv;
	kv_pair_init(&kv, key, 16, val, sizeof(val));
	kv_nvme_write(trace_handle, 0, &kv);
	kv_nvme_write(trace_handle, 7, &kv);
	struct timeval t;
	KVNVME_TIMESTART(t);
	KVNVME_TIMESTOP(t);
	KVNVME_INFO("an application line %d", 42);
	ENTER();
}

static void test_trace_levels(void)
{
	REQUIRE(pin(0));
	trace_handle = kv_test_init(KV_DEV, "kv", SYNC0, NULL);
	REQUIRE(trace_handle != 0);
	/* level 1 (the default): the refused queue id only */
	kv_trace_set_level(KVNVME_LOG_ERR);
	const char *out = capture_stdout(traced_calls);
	CHECK(strstr(out, ":: kv_nvme_write:: Invalid qid: 7 passed") != NULL);
	CHECK(strstr(out, "handle 0x") == NULL);
	CHECK(strstr(out, "an application line") == NULL);
	CHECK(strstr(out, "ms]\n") != NULL); /* KVNVME_TIMESTOP always prints */
	/* level 4: every call, and the application's own lines with file, line and function */
	kv_trace_set_level(KVNVME_LOG_DEBUG);
	out = capture_stdout(traced_calls);
	CHECK(strstr(out, ":: kv_nvme_write:: handle 0x") != NULL);
	CHECK(strstr(out, "test_kv_nvme.c:: ") != NULL);
	CHECK(strstr(out, ":: traced_calls:: an application line 42\n") != NULL);
	CHECK(strstr(out, ":: traced_calls:: Enter\n") != NULL);
	kv_trace_set_level(0);
	out = capture_stdout(traced_calls);
	CHECK(strstr(out, "Invalid qid") == NULL);
	kv_trace_set_level(KVNVME_LOG_ERR);
	CHECK_EQ(kv_trace_level(), KVNVME_LOG_ERR);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unpin();
}

static void test_calls_before_init(void)
{
	kv_pair kv;
	char key[8] = "abcdefg";
	kv_pair_init(&kv, key, 8, NULL, 0);
	CHECK_EQ(kv_nvme_write(1, 0, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_nvme_read_async(1, -1, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_nvme_delete(1, 0, &kv), KV_ERR_SDK_CLOSE);
	CHECK_EQ(kv_nvme_iterate_read(1, 0, NULL), KV_ERR_SDK_CLOSE);
	CHECK(kv_nvme_submit_raw_cmd(1, raw(6, 0, 1, 0), NULL, 0, ADMIN_CMD_TYPE) == NULL);
	CHECK_EQ(kv_nvme_get_total_size(1), 0);
	CHECK_EQ(kv_nvme_is_dd_initialized(), 0);
	kv_nvme_process_completion(1);
	kv_nvme_sdk_info();
}

TEST_MAIN(TEST(test_calls_before_init), TEST(test_sync_queue_by_core_and_refusals),
	  TEST(test_async_queue_callbacks), TEST(test_iterate_reads_on_named_queues),
	  TEST(test_key_value_iterator), TEST(test_cache_stays_coherent_across_both_apis),
	  TEST(test_raw_commands),
	  TEST(test_asynchronous_event_callback), TEST(test_queries_and_their_failure_values),
	  TEST(test_trace_levels))
