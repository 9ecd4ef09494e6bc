/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The KV paths against an emulated KV namespace (emu://...?ns=kv:...): store, retrieve, delete
 * and exist with short and long keys, options, offsets and every argument check; iterators;
 * the vendor log pages; format.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kv_test.h"
#include "test_util.h"

#define KV_DEV "emu://kvt?ns=kv:64M"
#define SYNC_MASKS ", \"core_mask\": 1, \"sync_mask\": 1"

static uint64_t up(void)
{
	return kv_test_init(KV_DEV, "kv", SYNC_MASKS, NULL);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13);
}

static void round_trip(uint64_t h, uint16_t klen, uint32_t vlen)
{
	uint8_t key[KV_MAX_KEY_LEN];
	for (int i = 0; i < klen; i++)
		key[i] = (uint8_t)('a' + (i * 7 + klen) % 26);
	uint8_t *w = malloc(vlen ? vlen : 1), *r = malloc(vlen + 64);
	fill(w, vlen, (uint8_t)klen);
	kv_pair kv;
	kv_pair_init(&kv, key, klen, w, vlen);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	memset(r, 0, vlen + 64);
	uint32_t buflen = (vlen + 64) / 4 * 4;
	kv_pair_init(&kv, key, klen, r, buflen > KV_MAX_IO_VALUE_LEN ? KV_MAX_IO_VALUE_LEN : buflen);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, vlen);
	CHECK_EQ(kv.value.actual_value_size, vlen);
	CHECK(memcmp(w, r, vlen) == 0);
	CHECK_EQ(kv_exist(h, &kv), KV_SUCCESS);
	free(w);
	free(r);
}

static void test_round_trips_short_and_long_keys(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	round_trip(h, 4, 100);
	round_trip(h, 16, 4096);
	round_trip(h, 17, 4097); /* the first key that travels through a PRP */
	round_trip(h, 40, 1);
	round_trip(h, 255, 65536);
	round_trip(h, 200, 0);
	round_trip(h, 8, KV_MAX_IO_VALUE_LEN);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_retrieve_sizes_and_offsets(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	uint8_t key[] = "offset-key", w[2048], r[2048];
	fill(w, sizeof(w), 1);
	kv_pair kv;
	kv_pair_init(&kv, key, 10, w, sizeof(w));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	/* 0-byte retrieve: asks for the size */
	kv_pair_init(&kv, key, 10, NULL, 0);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 0);
	CHECK_EQ(kv.value.actual_value_size, 2048);
	/* a smaller buffer: length = buffer, actual = all of it */
	kv_pair_init(&kv, key, 10, r, 100);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 100);
	CHECK_EQ(kv.value.actual_value_size, 2048);
	CHECK(memcmp(r, w, 100) == 0);
	/* an offset: actual = stored - offset */
	kv_pair_init(&kv, key, 10, r, sizeof(r));
	kv.value.offset = 512;
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 1536);
	CHECK_EQ(kv.value.actual_value_size, 1536);
	CHECK(memcmp(r, w + 512, 1536) == 0);
	/* argument checks */
	kv_pair_init(&kv, key, 10, r, 6);
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_MISALIGNED_VALUE_SIZE);
	kv_pair_init(&kv, key, 10, r, 8);
	kv.value.offset = 100;
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_MISALIGNED_VALUE_OFFSET);
	kv_pair_init(&kv, key, 10, r, 8);
	kv.keyspace_id = 2;
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_INVALID_KEYSPACE_ID);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_KEYSPACE_ID);
	kv_pair_init(&kv, key, 3, r, 8);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_KEY_SIZE);
	kv_pair_init(&kv, key, 10, r, KV_MAX_IO_VALUE_LEN + 4);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_INVALID_VALUE_SIZE);
	/* keyspaces are separate */
	kv_pair_init(&kv, key, 10, r, 8);
	kv.keyspace_id = KV_KEYSPACE_METADATA;
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_exist(h, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_idempotent_store_delete_and_exist(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	uint8_t key[] = "idem-key", v1[] = "first value", r[64];
	kv_pair kv;
	kv_pair_init(&kv, key, 8, v1, sizeof(v1));
	kv.param.io_option.store_option = KV_STORE_IDEMPOTENT;
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_store(h, &kv), KV_ERR_IDEMPOTENT_STORE_FAIL);
	kv.param.io_option.store_option = KV_STORE_DEFAULT;
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_exist(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_delete(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_exist(h, &kv), KV_ERR_NOT_EXIST_KEY);
	kv_pair_init(&kv, key, 8, r, sizeof(r));
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_append(h, &kv), KV_ERR_DD_UNSUPPORTED_CMD);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* Parses one iterator chunk: a u32 count, then {u32 length, key} with no padding. */
static int parse_chunk(const uint8_t *buf, uint32_t len, int *seen, int nkeys)
{
	if (len < 4)
		return len == 0 ? 0 : -1;
	uint32_t count;
	memcpy(&count, buf, 4);
	uint32_t off = 4;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t kl;
		if (off + 4 > len)
			return -1;
		memcpy(&kl, buf + off, 4);
		off += 4;
		if (kl != 9 || off + kl > len)
			return -1;
		char digits[6]; /* "iter%05d": exactly five digits, not what follows the key */
		memcpy(digits, buf + off + 4, 5);
		digits[5] = 0;
		int id = atoi(digits);
		if (memcmp(buf + off, "iter", 4) || id < 0 || id >= nkeys)
			return -1;
		seen[id]++;
		off += kl;
	}
	return (int)count;
}

static void test_iterate_to_eof_sees_every_key_once(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	enum { NKEYS = 3000 }; /* 3000 x 13 bytes: more than one 32 KiB chunk */
	char key[16];
	uint8_t v[4] = { 1, 2, 3, 4 };
	kv_pair kv;
	for (int i = 0; i < NKEYS; i++) {
		snprintf(key, sizeof(key), "iter%05d", i);
		kv_pair_init(&kv, key, 9, v, 4);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	for (int i = 0; i < 50; i++) { /* keys the prefix excludes */
		snprintf(key, sizeof(key), "othr%05d", i);
		kv_pair_init(&kv, key, 9, v, 4);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	uint32_t it = kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xffffffffu, 0x69746572u /* "iter" */,
				      KV_KEY_ITERATE);
	REQUIRE(it >= 1 && it <= KV_MAX_ITERATE_HANDLE);
	/* the same condition again is refused while open */
	CHECK_EQ(kv_iterate_open(h, KV_KEYSPACE_IODATA, 0xffffffffu, 0x69746572u, KV_KEY_ITERATE),
		 KV_ERR_ITERATE_HANDLE_ALREADY_OPENED);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_SUCCESS);
	CHECK_EQ(info[it - 1].handle_id, it);
	CHECK_EQ(info[it - 1].status, ITERATE_HANDLE_OPENED);
	CHECK_EQ(info[it - 1].type, KV_KEY_ITERATE);
	CHECK_EQ(info[it - 1].prefix, 0x69746572u);
	CHECK_EQ(info[it - 1].bitmask, 0xffffffffu);
	int *seen = calloc(NKEYS, sizeof(int));
	uint8_t *buf = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	kv_iterate iter;
	memset(&iter, 0, sizeof(iter));
	iter.iterator = it;
	int rc, chunks = 0, total = 0;
	do {
		iter.kv.value.value = buf;
		iter.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_iterate_read(h, &iter);
		CHECK(rc == KV_SUCCESS || rc == KV_ERR_ITERATE_READ_EOF);
		int n = parse_chunk(buf, iter.kv.value.length, seen, NKEYS);
		CHECK(n >= 0);
		total += n > 0 ? n : 0;
		chunks++;
	} while (rc == KV_SUCCESS && chunks < 100);
	CHECK_EQ(rc, KV_ERR_ITERATE_READ_EOF);
	CHECK(chunks >= 2);
	CHECK_EQ(total, NKEYS);
	int wrong = 0;
	for (int i = 0; i < NKEYS; i++)
		wrong += seen[i] != 1;
	CHECK_EQ(wrong, 0);
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_SUCCESS);
	CHECK_EQ(info[it - 1].is_eof, 1);
	CHECK_EQ(kv_iterate_close(h, (uint8_t)it), KV_SUCCESS);
	CHECK_EQ(kv_iterate_info(h, info, 1), KV_SUCCESS);
	/* closing again: the device's error, not a crash */
	CHECK(kv_iterate_close(h, (uint8_t)it) != KV_SUCCESS);
	/* a buffer smaller than a chunk, and bad iterator numbers */
	iter.kv.value.length = 4096;
	CHECK_EQ(kv_iterate_read(h, &iter), KV_ERR_INVALID_VALUE_SIZE);
	iter.iterator = 17;
	iter.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	CHECK_EQ(kv_iterate_read(h, &iter), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_iterate_close(h, 0), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_iterate_read(h, NULL), KV_ERR_SDK_INVALID_PARAM);
	CHECK_EQ(kv_iterate_info(h, NULL, 4), KV_ERR_SDK_INVALID_PARAM);
	/* bad conditions never look like handles */
	CHECK_EQ(kv_iterate_open(h, 2, 0, 0, KV_KEY_ITERATE), KV_ERR_DD_ITERATE_COND_INVALID);
	CHECK_EQ(kv_iterate_open(h, 0, 0x0000ffffu, 0, KV_KEY_ITERATE), KV_ERR_DD_ITERATE_COND_INVALID);
	CHECK_EQ(kv_iterate_open(h, 0, 0, 0, 9), KV_ERR_DD_ITERATE_COND_INVALID);
	free(seen);
	free(buf);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* An iterator with delete removes the keys it returns; with the cache on, keys that were
 * cached must not be served afterwards. */
static void test_delete_iterator_and_cache(void)
{
	uint64_t h = kv_test_init(KV_DEV, "kv", SYNC_MASKS, ", \"cache\": \"on\"");
	REQUIRE(h != 0);
	char key[16];
	uint8_t v[64], r[64];
	kv_pair kv;
	for (int i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "dele%05d", i);
		fill(v, sizeof(v), (uint8_t)i);
		kv_pair_init(&kv, key, 9, v, sizeof(v));
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
		kv_pair_init(&kv, key, 9, r, sizeof(r));
		REQUIRE(kv_retrieve(h, &kv) == KV_SUCCESS); /* now cached */
	}
	snprintf(key, sizeof(key), "keep%05d", 1);
	kv_pair_init(&kv, key, 9, v, sizeof(v));
	REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	uint32_t it = kv_iterate_open(h, 0, 0xffffffffu, 0x64656c65u /* "dele" */,
				      KV_KEY_ITERATE_WITH_DELETE);
	REQUIRE(it >= 1 && it <= KV_MAX_ITERATE_HANDLE);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE + 4];
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE + 4), KV_SUCCESS); /* clamped to 16 */
	CHECK_EQ(info[it - 1].type, KV_KEY_ITERATE_WITH_DELETE);
	uint8_t *buf = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	kv_iterate iter;
	memset(&iter, 0, sizeof(iter));
	iter.iterator = it;
	int rc, rounds = 0;
	do {
		iter.kv.value.value = buf;
		iter.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
		rc = kv_iterate_read(h, &iter);
	} while (rc == KV_SUCCESS && ++rounds < 10);
	CHECK_EQ(rc, KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(kv_iterate_close(h, (uint8_t)it), KV_SUCCESS);
	for (int i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "dele%05d", i);
		kv_pair_init(&kv, key, 9, r, sizeof(r));
		CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_NOT_EXIST_KEY);
	}
	snprintf(key, sizeof(key), "keep%05d", 1);
	kv_pair_init(&kv, key, 9, r, sizeof(r));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	free(buf);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static atomic_int it_cb_calls, it_cb_result;
static kv_iterate *it_cb_arg;
static atomic_int it_cb_bad;
/* As the original: status is the kv_result, result the bytes filled (= value.length). */
static void iter_cb(kv_iterate *it, unsigned int result, unsigned int status)
{
	it_cb_arg = it;
	if (result != it->kv.value.length || it->kv.key.length != 0)
		atomic_fetch_add(&it_cb_bad, 1);
	atomic_store(&it_cb_result, (int)status);
	atomic_fetch_add(&it_cb_calls, 1);
}

/* The async read reports the same bytes as the sync one (the original decoded DW0 differently). */
static void test_iterate_read_async_matches_sync(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(KV_DEV, "kv",
				  ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2", NULL);
	REQUIRE(h != 0);
	char key[16];
	uint8_t v[4] = { 0 };
	kv_pair kv;
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "iter%05d", i);
		kv_pair_init(&kv, key, 9, v, 4);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	uint32_t it = kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE);
	REQUIRE(it >= 1 && it <= KV_MAX_ITERATE_HANDLE);
	uint8_t *buf = malloc(KV_ITERATE_READ_BUFFER_SIZE);
	kv_iterate iter;
	memset(&iter, 0, sizeof(iter));
	iter.iterator = it;
	iter.kv.value.value = buf;
	iter.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	iter.kv.param.async_cb = iter_cb;
	CHECK_EQ(kv_iterate_read_async(h, &iter), KV_SUCCESS);
	while (!atomic_load(&it_cb_calls))
		sched_yield();
	CHECK(it_cb_arg == &iter);
	CHECK_EQ(atomic_load(&it_cb_result), KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(atomic_load(&it_cb_bad), 0);
	CHECK_EQ(iter.kv.value.length, 4 + 20 * (4 + 9));
	uint32_t count;
	memcpy(&count, buf, 4);
	CHECK_EQ(count, 20);
	CHECK_EQ(kv_iterate_close(h, (uint8_t)it), KV_SUCCESS);
	free(buf);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_seventeenth_iterator_is_refused(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	uint32_t handles[KV_MAX_ITERATE_HANDLE];
	for (int i = 0; i < KV_MAX_ITERATE_HANDLE; i++) {
		handles[i] = kv_iterate_open(h, 0, 0xff000000u, (uint32_t)i << 24, KV_KEY_ITERATE);
		CHECK(handles[i] >= 1 && handles[i] <= KV_MAX_ITERATE_HANDLE);
	}
	CHECK_EQ(kv_iterate_open(h, 0, 0xff000000u, 0x40000000u, KV_KEY_ITERATE),
		 KV_ERR_ITERATE_NO_AVAILABLE_HANDLE);
	/* format closes them all */
	CHECK_EQ(kv_format_device(h, KV_FORMAT_MAPDATA), KV_SUCCESS);
	kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
	CHECK_EQ(kv_iterate_info(h, info, KV_MAX_ITERATE_HANDLE), KV_SUCCESS);
	int open = 0;
	for (int i = 0; i < KV_MAX_ITERATE_HANDLE; i++)
		open += info[i].status == ITERATE_HANDLE_OPENED;
	CHECK_EQ(open, 0);
	uint32_t again = kv_iterate_open(h, 0, 0, 0, KV_KEY_ITERATE);
	CHECK(again >= 1 && again <= KV_MAX_ITERATE_HANDLE);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static void test_utilization_falls_after_deletes_and_format(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	CHECK_EQ(kv_get_sector_size(h), 512);
	CHECK_EQ(kv_get_total_size(h), 64u << 20);
	CHECK_EQ(kv_get_num_sectors(h), (64u << 20) / 512);
	uint64_t u0 = kv_get_used_size(h);
	CHECK(u0 <= 10000);
	uint8_t *v = calloc(1, 16384);
	char key[16];
	kv_pair kv;
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "util%06d", i);
		kv_pair_init(&kv, key, 10, v, 16384);
		REQUIRE(kv_store(h, &kv) == KV_SUCCESS);
	}
	uint64_t u1 = kv_get_used_size(h);
	CHECK(u1 > u0);
	CHECK(u1 <= 10000);
	for (int i = 0; i < 1000; i += 2) {
		snprintf(key, sizeof(key), "util%06d", i);
		kv_pair_init(&kv, key, 10, NULL, 0);
		REQUIRE(kv_delete(h, &kv) == KV_SUCCESS);
	}
	uint64_t u2 = kv_get_used_size(h);
	CHECK(u2 < u1);
	uint64_t waf = kv_get_waf(h);
	CHECK(waf >= 10 && waf != KV_ERR_INVALID_VALUE);
	uint8_t log[512];
	CHECK_EQ(kv_get_log_page(h, 0xC0, log, sizeof(log)), KV_SUCCESS);
	CHECK_EQ(kv_format_device(h, KV_FORMAT_USERDATA), KV_SUCCESS);
	CHECK(kv_get_used_size(h) < u2);
	kv_pair_init(&kv, key, 10, v, 16);
	CHECK_EQ(kv_retrieve(h, &kv), KV_ERR_NOT_EXIST_KEY);
	free(v);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

static atomic_int cb_calls, cb_bad;
/* status is the kv_result (as the original passed the status code); a successful retrieve
 * passes the stored value size as result (completion dword 0) */
static void pair_cb(kv_pair *kv, unsigned int result, unsigned int status)
{
	intptr_t want = (intptr_t)kv->param.private_data;
	if ((int)status != (int)want)
		atomic_fetch_add(&cb_bad, 1);
	if (status == KV_SUCCESS && kv->value.actual_value_size &&
	    result != kv->value.actual_value_size + kv->value.offset)
		atomic_fetch_add(&cb_bad, 1);
	atomic_fetch_add(&cb_calls, 1);
}

static void test_async_kv_round_trip(void)
{
	NEED_CPUS(2);
	uint64_t h = kv_test_init(KV_DEV, "kv",
				  ", \"core_mask\": 1, \"sync_mask\": 0, \"cq_thread_mask\": 2,"
				  " \"queue_depth\": 16", NULL);
	REQUIRE(h != 0);
	enum { N = 200 };
	static kv_pair kvs[N];
	static char keys[N][24];
	static uint8_t vals[N][64];
	atomic_store(&cb_calls, 0);
	atomic_store(&cb_bad, 0);
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "async-key-number-%04d", i); /* 21 bytes: PRP */
		fill(vals[i], 64, (uint8_t)i);
		kv_pair_init(&kvs[i], keys[i], 21, vals[i], 64);
		kvs[i].param.async_cb = pair_cb;
		kvs[i].param.private_data = (void *)(intptr_t)KV_SUCCESS;
		CHECK_EQ(kv_store_async(h, &kvs[i]), KV_SUCCESS);
	}
	kv_process_completion(h);
	CHECK_EQ(atomic_load(&cb_calls), N);
	for (int i = 0; i < N; i++) {
		kvs[i].param.private_data = (void *)(intptr_t)(i % 2 ? KV_SUCCESS : KV_ERR_NOT_EXIST_KEY);
		if (i % 2 == 0) {
			kv_pair del = kvs[i];
			CHECK_EQ(kv_delete(h, &del), KV_SUCCESS); /* sync on an async-only device */
		}
		CHECK_EQ(kv_exist_async(h, &kvs[i]), KV_SUCCESS);
	}
	kv_process_completion(h);
	CHECK_EQ(atomic_load(&cb_calls), 2 * N);
	CHECK_EQ(atomic_load(&cb_bad), 0);
	uint8_t r[64];
	kv_pair kv;
	kv_pair_init(&kv, keys[1], 21, r, 64);
	kv.param.async_cb = pair_cb;
	kv.param.private_data = (void *)(intptr_t)KV_SUCCESS;
	CHECK_EQ(kv_retrieve_async(h, &kv), KV_SUCCESS);
	kv_process_completion(h);
	CHECK_EQ(atomic_load(&cb_calls), 2 * N + 1);
	CHECK(memcmp(r, vals[1], 64) == 0);
	CHECK_EQ(kv.value.actual_value_size, 64);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	kv_test_remove_configs();
}

/* Values in DMA memory (kv_alloc, kv_zalloc) go to the device without the SDK's copy; other
 * memory, odd lengths and buffers that run past their DMA mapping take the copy. Both must
 * give the same bytes, with offsets and short buffers too, and with the cache on. */
static void dma_buffer_cases(uint64_t h)
{
	uint8_t *w = kv_zalloc(8192), *r = kv_zalloc(8192), *heap = malloc(8192);
	REQUIRE(w && r && heap);
	fill(w, 8192, 3);
	kv_pair kv;
	kv_pair_init(&kv, "dma-key-0001", 12, w, 8192);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	memset(r, 0xee, 8192);
	kv_pair_init(&kv, "dma-key-0001", 12, r, 8192);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 8192);
	CHECK(memcmp(r, w, 8192) == 0);
	/* from an offset into a short DMA buffer: only its bytes are written */
	memset(r, 0xee, 8192);
	kv_pair_init(&kv, "dma-key-0001", 12, r, 1024);
	kv.value.offset = 4096;
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 1024);
	CHECK_EQ(kv.value.actual_value_size, 4096);
	CHECK(memcmp(r, w + 4096, 1024) == 0 && r[1024] == 0xee);
	/* an odd length from DMA memory (the device reads whole dwords: copied) */
	kv_pair_init(&kv, "dma-key-0002", 12, w + 1, 4093);
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	kv_pair_init(&kv, "dma-key-0002", 12, heap, 8192);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.length, 4093);
	CHECK(memcmp(heap, w + 1, 4093) == 0);
	/* a DMA value read back into heap memory, and async into DMA memory */
	kv_pair_init(&kv, "dma-key-0001", 12, heap, 8192);
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK(memcmp(heap, w, 8192) == 0);
	memset(r, 0, 8192);
	kv_pair_init(&kv, "dma-key-0001", 12, r, 8192);
	kv.param.async_cb = pair_cb;
	kv.param.private_data = (void *)(intptr_t)KV_SUCCESS;
	int before = atomic_load(&cb_calls);
	CHECK_EQ(kv_retrieve_async(h, &kv), KV_SUCCESS);
	kv_process_completion(h);
	CHECK_EQ(atomic_load(&cb_calls), before + 1);
	CHECK(memcmp(r, w, 8192) == 0);
	kv_free(w);
	kv_free(r);
	free(heap);
}

static void test_dma_value_buffers(void)
{
	uint64_t h = up();
	REQUIRE(h != 0);
	atomic_store(&cb_bad, 0);
	dma_buffer_cases(h);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	h = kv_test_init(KV_DEV, "kv", SYNC_MASKS, ", \"cache\": \"on\"");
	REQUIRE(h != 0);
	dma_buffer_cases(h);
	dma_buffer_cases(h);   /* the second round is served from the cache */
	CHECK_EQ(atomic_load(&cb_bad), 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
}

/* A file-backed KV namespace keeps its keys across kv_sdk_finalize and a new kv_sdk_init. */
static void test_file_backed_keys_survive_reinit(void)
{
	char path[128], uri[256];
	snprintf(path, sizeof(path), "/tmp/kvsdk_test_%d.kv", (int)getpid());
	unlink(path);
	snprintf(uri, sizeof(uri), "emu://kvfile?ns=kv:64M::%s", path);
	uint64_t h = kv_test_init(uri, "kv", SYNC_MASKS, NULL);
	REQUIRE(h != 0);
	uint8_t key[] = "persistent-key-with-a-long-name", w[3000], r[3000];
	fill(w, sizeof(w), 42);
	kv_pair kv;
	kv_pair_init(&kv, key, 31, w, sizeof(w));
	CHECK_EQ(kv_store(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	h = kv_test_init(uri, "kv", SYNC_MASKS, NULL);
	REQUIRE(h != 0);
	kv_pair_init(&kv, key, 31, r, sizeof(r));
	CHECK_EQ(kv_retrieve(h, &kv), KV_SUCCESS);
	CHECK_EQ(kv.value.actual_value_size, sizeof(w));
	CHECK(memcmp(w, r, sizeof(w)) == 0);
	CHECK_EQ(kv_sdk_finalize(), KV_SUCCESS);
	unlink(path);
	char ctrl[160];
	snprintf(ctrl, sizeof(ctrl), "%s.ctrl", path);
	unlink(ctrl);
}

TEST_MAIN(TEST(test_file_backed_keys_survive_reinit), TEST(test_round_trips_short_and_long_keys), TEST(test_retrieve_sizes_and_offsets),
	  TEST(test_idempotent_store_delete_and_exist), TEST(test_iterate_to_eof_sees_every_key_once),
	  TEST(test_iterate_read_async_matches_sync), TEST(test_delete_iterator_and_cache), TEST(test_seventeenth_iterator_is_refused),
	  TEST(test_utilization_falls_after_deletes_and_format), TEST(test_async_kv_round_trip), TEST(test_dma_value_buffers))
