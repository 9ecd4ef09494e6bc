/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The standard NVMe Key Value Command Set 1.0 (CSI 01h) on a KV namespace: Store options,
 * Retrieve sizes, Delete, Exist, List order and format, Flush, and their statuses.
 */
#include <string.h>

#include "kv_host.h"
#include "tests/unit/test_util.h"

#define NSID 1u

static int setup(struct th *h, struct kvq *q, const char *uri)
{
	if (kvh_open(h, uri))
		return -1;
	return kvq_init(h, q, 1);
}

static void test_store_options(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	memset(q.val, 'a', 100);
	/* only if exists: the key is new */
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "k1", 2, 100, NVME_KV_STORE_MUST_EXIST),
		 GEN(NVME_SC_KV_KEY_NOT_EXIST));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "k1", 2, 100, NVME_KV_STORE_MUST_NOT_EXIST), 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "k1", 2, 100, NVME_KV_STORE_MUST_NOT_EXIST),
		 GEN(NVME_SC_KV_KEY_EXISTS));
	memset(q.val, 'b', 50);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "k1", 2, 50, NVME_KV_STORE_MUST_EXIST), 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "k1", 2, 50, 3), GEN(NVME_SC_INVALID_FIELD));
	memset(q.val, 0, 100);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, NSID, "k1", 2, 100, 0), 0);
	CHECK_EQ(q.dw0, 50);
	CHECK(q.val[0] == 'b' && q.val[49] == 'b' && q.val[50] == 0);
	th_close(&h);
}

static void test_sizes_and_statuses(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:64K") == 0);
	const uint8_t keyed[] = { NVME_KV_STORE, NVME_KV_RETRIEVE, NVME_KV_DELETE, NVME_KV_EXIST };
	for (unsigned i = 0; i < sizeof(keyed); i++) {
		CHECK_EQ(kvs_cmd(&q, keyed[i], NSID, "", 0, 8, 0), GEN(NVME_SC_KV_INVALID_KEY_SIZE));
		CHECK_EQ(kvs_cmd(&q, keyed[i], NSID, "0123456789abcdefg", 17, 8, 0),
			 GEN(NVME_SC_KV_INVALID_KEY_SIZE));
	}
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "big", 3, (2u << 20) + 1, 0),
		 GEN(NVME_SC_KV_INVALID_VALUE_SIZE));
	/* 1 and 16 byte keys; the 16-byte key uses CDW14-15 */
	memset(q.val, 1, 8);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "x", 1, 8, 0), 0);
	memset(q.val, 2, 8);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, "0123456789abcdef", 16, 8, 0), 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_EXIST, NSID, "0123456789abcdee", 16, 0, 0),
		 GEN(NVME_SC_KV_KEY_NOT_EXIST));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, NSID, "0123456789abcdef", 16, 8, 0), 0);
	CHECK_EQ(q.val[0], 2);
	/* a 0-byte retrieve asks for the size */
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, NSID, "x", 1, 0, 0), 0);
	CHECK_EQ(q.dw0, 8);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_DELETE, NSID, "x", 1, 0, 0), 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_DELETE, NSID, "x", 1, 0, 0), GEN(NVME_SC_KV_KEY_NOT_EXIST));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_RETRIEVE, NSID, "x", 1, 8, 0), GEN(NVME_SC_KV_KEY_NOT_EXIST));
	/* capacity exceeded */
	int st = 0, i;
	for (i = 0; i < 100 && !st; i++)
		st = kvs_cmd(&q, NVME_KV_STORE, NSID, &i, 4, 8000, 0);
	CHECK_EQ(st, GEN(NVME_SC_KV_CAPACITY_EXCEEDED));
	CHECK(i > 5 && i < 10);
	/* standard keys live in keyspace 0: the vendor protocol sees them */
	CHECK_EQ(kvv_exist(&q, 0, "0123456789abcdef", 16), 0);
	CHECK_EQ(kvs_cmd(&q, NVME_KV_FLUSH, NSID, "", 0, 0, 0), 0);
	/* an inactive namespace */
	CHECK_EQ(kvs_cmd(&q, NVME_KV_EXIST, 5, "x", 1, 0, 0), GEN(NVME_SC_INVALID_NS_OR_FORMAT));
	th_close(&h);
}

static void test_list(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	const char *keys[] = { "b", "a", "abc", "ab", "c", "bb", "zzzzzzzzzzzzzzzz" };
	for (unsigned i = 0; i < 7; i++)
		CHECK_EQ(kvs_cmd(&q, NVME_KV_STORE, NSID, keys[i], (uint32_t)strlen(keys[i]), 4, 0), 0);
	/* a keyspace 1 key never shows */
	CHECK_EQ(kvv_store(&q, 1, "aaaa", 4, 4, 0, 0), 0);
	/* from "ab": ab, abc, b, bb, c, zzz... */
	CHECK_EQ(kvs_cmd(&q, NVME_KV_LIST, NSID, "ab", 2, 4096, 0), 0);
	CHECK_EQ(q.dw0, 6);
	const char *want[] = { "ab", "abc", "b", "bb", "c", "zzzzzzzzzzzzzzzz" };
	uint32_t count;
	memcpy(&count, q.val, 4);
	CHECK_EQ(count, 6);
	uint32_t off = 4;
	for (unsigned i = 0; i < 6; i++) {
		uint16_t l;
		memcpy(&l, q.val + off, 2);
		CHECK_EQ(l, strlen(want[i]));
		CHECK(!memcmp(q.val + off + 2, want[i], l));
		off += (2u + l + 3u) & ~3u;
	}
	/* from the start (length 0), in a buffer that holds 3 entries */
	CHECK_EQ(kvs_cmd(&q, NVME_KV_LIST, NSID, "", 0, 4 + 4 + 4 + 8, 0), 0);
	CHECK_EQ(q.dw0, 3);
	uint16_t l;
	memcpy(&l, q.val + 4, 2);
	CHECK(l == 1 && q.val[6] == 'a');
	memcpy(&l, q.val + 8, 2);
	CHECK(l == 2 && !memcmp(q.val + 10, "ab", 2));
	CHECK_EQ(kvs_cmd(&q, NVME_KV_LIST, NSID, "", 0, 2, 0), GEN(NVME_SC_INVALID_FIELD));
	th_close(&h);
}

TEST_MAIN(TEST(test_store_options), TEST(test_sizes_and_statuses), TEST(test_list))
