/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Vendor iterators: handle limits, option checks, whole-keyspace iteration over many 32 KiB
 * reads with every key exactly once, prefix/bitmask selection, key-with-delete, the D0h log,
 * and handles forgotten by a controller reset.
 */
#include <stdlib.h>
#include <string.h>

#include "kv_host.h"
#include "tests/unit/test_util.h"

static int setup(struct th *h, struct kvq *q, const char *uri)
{
	if (kvh_open(h, uri))
		return -1;
	return kvq_init(h, q, 1);
}

/* Keys "<p0><p1>-%08u" padded to len bytes: first two bytes chosen by the test. */
static uint32_t make_key(uint8_t *k, char p0, char p1, unsigned n, unsigned len)
{
	memset(k, '.', len);
	k[0] = (uint8_t)p0;
	k[1] = (uint8_t)p1;
	char num[16];
	snprintf(num, sizeof(num), "-%08u", n);
	memcpy(k + 2, num, 9);
	return len;
}

static unsigned key_number(const uint8_t *k)
{
	char num[9];
	memcpy(num, k + 3, 8);
	num[8] = 0;
	return (unsigned)strtoul(num, NULL, 10);
}

/* Reads until EOF; counts each key's number in seen[]. Returns reads done, -1 on error. */
static int drain(struct kvq *q, uint8_t handle, uint8_t *seen, unsigned max, unsigned *total)
{
	int reads = 0;
	*total = 0;
	for (;;) {
		int st = kvv_iter_read(q, handle);
		if (st != 0 && st != KVV(NVME_KVV_SC_ITER_EOF))
			return -1;
		reads++;
		uint32_t count, off = 4;
		memcpy(&count, q->val, 4);
		for (uint32_t i = 0; i < count; i++) {
			uint32_t l;
			memcpy(&l, q->val + off, 4);
			unsigned n = key_number(q->val + off + 4);
			if (n < max)
				seen[n]++;
			off += 4 + l;
			(*total)++;
		}
		if (q->dw0 != off)
			return -1; /* DW0 is the bytes filled */
		if (st)
			return reads;
	}
}

static void test_handle_limits_and_options(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	uint8_t handles[16];
	for (unsigned i = 0; i < 16; i++) {
		CHECK_EQ(kvv_iter_open(&q, i & 1, NVME_KVV_ITER_OPEN_KEY, i << 24, 0xff000000u), 0);
		handles[i] = (uint8_t)q.dw0;
		CHECK(handles[i] >= 1 && handles[i] <= 16);
	}
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0x7f000000u, 0xff000000u),
		 KVV(NVME_KVV_SC_ITER_NO_HANDLE));
	CHECK_EQ(kvv_iter_close(&q, handles[3]), 0);
	CHECK_EQ(kvv_iter_close(&q, handles[3]), KVV(NVME_KVV_SC_ITER_REQUEST_FAIL));
	/* the same keyspace, prefix and bitmask as an open one */
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0xff000000u),
		 KVV(NVME_KVV_SC_ITER_ALREADY_OPEN));
	/* ... but the other keyspace is a different iterator */
	CHECK_EQ(kvv_iter_open(&q, 1, NVME_KVV_ITER_OPEN_KEY, 0, 0xff000000u), 0);
	for (unsigned i = 0; i < 16; i++)
		(void)kvv_iter_close(&q, (uint8_t)(i + 1));
	/* options: key (05h), key with value (09h), key with delete (11h); a contiguous high
	 * bitmask */
	CHECK_EQ(kvv_iter_open(&q, 0, 0x0d, 0, 0), KVV(NVME_KVV_SC_INVALID_OPTION));
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY_VALUE, 0, 0), 0);
	CHECK_EQ(kvv_iter_close(&q, (uint8_t)q.dw0), 0);
	CHECK_EQ(kvv_iter_open(&q, 0, 0x00, 0, 0), KVV(NVME_KVV_SC_INVALID_OPTION));
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0x00ff0000u), KVV(NVME_KVV_SC_INVALID_OPTION));
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0xf0f00000u), KVV(NVME_KVV_SC_INVALID_OPTION));
	CHECK_EQ(kvv_iter_open(&q, 2, NVME_KVV_ITER_OPEN_KEY, 0, 0), KVV(NVME_KVV_SC_INVALID_KEYSPACE));
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0xffffffffu), 0);
	uint8_t hd = (uint8_t)q.dw0;
	/* reads: exactly 32 KiB, a known handle */
	struct nvme_sqe cmd = { .opc = NVME_KVV_ITER_READ, .cdw10 = 4096, .cdw11 = hd };
	CHECK_EQ(kvv_raw(&q, &cmd, 16384), KVV(NVME_KVV_SC_INVALID_VALUE_SIZE));
	CHECK_EQ(kvv_iter_read(&q, 0), KVV(NVME_KVV_SC_ITER_REQUEST_FAIL));
	CHECK_EQ(kvv_iter_read(&q, 17), KVV(NVME_KVV_SC_ITER_REQUEST_FAIL));
	/* an empty keyspace: the first read is the last, with no keys */
	CHECK_EQ(kvv_iter_read(&q, hd), KVV(NVME_KVV_SC_ITER_EOF));
	uint32_t count;
	memcpy(&count, q.val, 4);
	CHECK_EQ(count, 0);
	CHECK_EQ(q.dw0, 4);
	CHECK_EQ(kvv_iter_close(&q, hd), 0);
	th_close(&h);
}

static void test_full_iteration(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:64M") == 0);
	enum { N = 6000 };
	uint8_t key[64];
	for (unsigned i = 0; i < N; i++) {
		/* lengths 16..63 so entries straddle the 32 KiB buffer end at varied places */
		make_key(key, 'k', 'a', i, 16 + i % 48);
		REQUIRE(kvv_store(&q, 0, key, 16 + i % 48, 8, 0, 0) == 0);
	}
	for (unsigned i = 0; i < 100; i++) {
		make_key(key, 'k', 'a', i, 20);
		REQUIRE(kvv_store(&q, 1, key, 20, 8, 0, 0) == 0);
	}
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	uint8_t hd = (uint8_t)q.dw0;
	static uint8_t seen[N];
	memset(seen, 0, sizeof(seen));
	unsigned total;
	int reads = drain(&q, hd, seen, N, &total);
	CHECK(reads > 5);
	CHECK_EQ(total, N);
	unsigned once = 0;
	for (unsigned i = 0; i < N; i++)
		once += seen[i] == 1;
	CHECK_EQ(once, N);
	/* the D0h log shows the iterator at its end */
	struct nvme_kvv_iter_info *info = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_ITER, 0, 0, 256, info), 0);
	CHECK_EQ(info[hd - 1].handle, hd);
	CHECK_EQ(info[hd - 1].status, 1);
	CHECK_EQ(info[hd - 1].type, 1);
	CHECK_EQ(info[hd - 1].keyspace, 0);
	CHECK_EQ(info[hd - 1].is_eof, 1);
	/* after the end: EOF again, no keys */
	CHECK_EQ(kvv_iter_read(&q, hd), KVV(NVME_KVV_SC_ITER_EOF));
	uint32_t count;
	memcpy(&count, q.val, 4);
	CHECK_EQ(count, 0);
	CHECK_EQ(kvv_iter_close(&q, hd), 0);
	/* keys were not touched */
	make_key(key, 'k', 'a', 17, 16 + 17 % 48);
	CHECK_EQ(kvv_exist(&q, 0, key, 16 + 17 % 48), 0);
	th_close(&h);
}

static void test_prefix_and_delete(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	uint8_t key[32];
	const char groups[4][2] = { { 'A', 'B' }, { 'A', 'C' }, { 'B', 'B' }, { 'A', 'B' } };
	for (unsigned g = 0; g < 3; g++)
		for (unsigned i = 0; i < 500; i++) {
			make_key(key, groups[g][0], groups[g][1], g * 1000 + i, 16);
			REQUIRE(kvv_store(&q, 0, key, 16, 4, 0, 0) == 0);
		}
	/* "AB" = 0x4142 in the top 16 bits */
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0x41420000u, 0xffff0000u), 0);
	uint8_t hd = (uint8_t)q.dw0;
	static uint8_t seen[3000];
	memset(seen, 0, sizeof(seen));
	unsigned total;
	CHECK(drain(&q, hd, seen, 3000, &total) >= 1);
	CHECK_EQ(total, 500);
	unsigned ok = 0;
	for (unsigned i = 0; i < 500; i++)
		ok += seen[i] == 1;
	CHECK_EQ(ok, 500);
	CHECK_EQ(kvv_iter_close(&q, hd), 0);
	/* "A?" (top 8 bits), with delete: groups AB and AC go, BB stays */
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY_DELETE, 0x41000000u, 0xff000000u), 0);
	hd = (uint8_t)q.dw0;
	struct nvme_kvv_iter_info *info = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_ITER, 0, 0, 256, info), 0);
	CHECK_EQ(info[hd - 1].type, 3);
	CHECK_EQ(info[hd - 1].prefix, 0x41000000u);
	CHECK_EQ(info[hd - 1].bitmask, 0xff000000u);
	CHECK_EQ(info[hd - 1].is_eof, 0);
	memset(seen, 0, sizeof(seen));
	CHECK(drain(&q, hd, seen, 3000, &total) >= 1);
	CHECK_EQ(total, 1000);
	CHECK_EQ(kvv_iter_close(&q, hd), 0);
	make_key(key, 'A', 'B', 3, 16);
	CHECK_EQ(kvv_exist(&q, 0, key, 16), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	make_key(key, 'A', 'C', 1003, 16);
	CHECK_EQ(kvv_exist(&q, 0, key, 16), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	make_key(key, 'B', 'B', 2003, 16);
	CHECK_EQ(kvv_exist(&q, 0, key, 16), 0);
	struct nvme_kvv_log_capacity *cap = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, cap), 0);
	CHECK_EQ(cap->nr_keys, 500);
	th_close(&h);
}

static void test_keys_deleted_meanwhile_are_skipped(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	uint8_t key[32];
	for (unsigned i = 0; i < 100; i++) {
		make_key(key, 'd', 'd', i, 12);
		REQUIRE(kvv_store(&q, 0, key, 12, 4, 0, 0) == 0);
	}
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	uint8_t hd = (uint8_t)q.dw0;
	for (unsigned i = 0; i < 100; i += 2) {
		make_key(key, 'd', 'd', i, 12);
		CHECK_EQ(kvv_delete(&q, 0, key, 12), 0);
	}
	/* a key stored after the open is not part of this iteration */
	make_key(key, 'd', 'd', 500, 12);
	CHECK_EQ(kvv_store(&q, 0, key, 12, 4, 0, 0), 0);
	static uint8_t seen[1000];
	memset(seen, 0, sizeof(seen));
	unsigned total;
	CHECK(drain(&q, hd, seen, 1000, &total) >= 1);
	CHECK_EQ(total, 50);
	for (unsigned i = 0; i < 100; i++)
		CHECK_EQ(seen[i], i % 2);
	th_close(&h);
}

static void test_reset_forgets_iterators(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	CHECK_EQ(kvv_store(&q, 0, "rst1", 4, 4, 0, 0), 0);
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	uint8_t hd = (uint8_t)q.dw0;
	th_disable(&h);
	REQUIRE(th_enable(&h, 32, 32) & NVME_CSTS_RDY);
	REQUIRE(kvq_init(&h, &q, 1) == 0);
	CHECK_EQ(kvv_iter_read(&q, hd), KVV(NVME_KVV_SC_ITER_REQUEST_FAIL));
	struct nvme_kvv_iter_info *info = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_ITER, 0, 0, 256, info), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(info[i].status, 0);
	/* the same iterator can be opened again */
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	CHECK_EQ(kvv_exist(&q, 0, "rst1", 4), 0);
	th_close(&h);
}

TEST_MAIN(TEST(test_handle_limits_and_options), TEST(test_full_iteration),
	  TEST(test_prefix_and_delete), TEST(test_keys_deleted_meanwhile_are_skipped),
	  TEST(test_reset_forgets_iterators))
