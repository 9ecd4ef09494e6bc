/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Samsung vendor protocol on an in-memory KV namespace, driven as the uNVMe SDK drives
 * it: every command with its success and error statuses, value offsets, keyspaces, the
 * routing of keyspace NSIDs, capacity and utilization.
 */
#include <string.h>

#include "hw/emu/emu.h"
#include "kv_host.h"
#include "tests/unit/test_util.h"

static int setup(struct th *h, struct kvq *q, const char *uri)
{
	if (kvh_open(h, uri))
		return -1;
	return kvq_init(h, q, 1);
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static bool same(const uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 9)))
			return false;
	return true;
}

static void test_store_retrieve_roundtrip(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:64M") == 0);
	const uint32_t sizes[] = { 0, 1, 3, 4, 5, 511, 4096, 4099, 65536 + 2, 2u << 20 };
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[16];
		snprintf(key, sizeof(key), "key-%04u", i);
		fill(q.val, sizes[i], i);
		CHECK_EQ(kvv_store(&q, 0, key, 8, sizes[i], 0, 0), 0);
		memset(q.val, 0, KVH_BUF);
		uint32_t buf = (sizes[i] + 3) & ~3u;
		CHECK_EQ(kvv_retrieve(&q, 0, key, 8, buf ? buf : 4, 0), 0);
		CHECK_EQ(q.dw0, sizes[i]);
		CHECK(same(q.val, sizes[i], i));
		CHECK_EQ(kvv_exist(&q, 0, key, 8), 0);
	}
	/* overwrite with a shorter value: the size follows */
	fill(q.val, 10, 99);
	CHECK_EQ(kvv_store(&q, 0, "key-0009", 8, 10, 0, 0), 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "key-0009", 8, 4096, 0), 0);
	CHECK_EQ(q.dw0, 10);
	CHECK(same(q.val, 10, 99));
	th_close(&h);
}

static void test_key_sizes(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	uint8_t key[256];
	for (unsigned i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 3 + 1);
	/* the length field is len - 1, so 1..3 and 256 are the encodable bad sizes */
	for (uint32_t len = 1; len <= 3; len++) {
		CHECK_EQ(kvv_store(&q, 0, key, len, 8, 0, 0), KVV(NVME_KVV_SC_INVALID_KEY_SIZE));
		CHECK_EQ(kvv_retrieve(&q, 0, key, len, 8, 0), KVV(NVME_KVV_SC_INVALID_KEY_SIZE));
		CHECK_EQ(kvv_exist(&q, 0, key, len), KVV(NVME_KVV_SC_INVALID_KEY_SIZE));
		CHECK_EQ(kvv_delete(&q, 0, key, len), KVV(NVME_KVV_SC_INVALID_KEY_SIZE));
	}
	CHECK_EQ(kvv_store(&q, 0, key, 256, 8, 0, 0), KVV(NVME_KVV_SC_INVALID_KEY_SIZE));
	/* 4, 16 (inline), 17 and 255 (through a PRP pair) are fine, and distinct */
	const uint32_t ok[] = { 4, 16, 17, 100, 255 };
	for (unsigned i = 0; i < 5; i++) {
		fill(q.val, 64, ok[i]);
		CHECK_EQ(kvv_store(&q, 0, key, ok[i], 64, 0, 0), 0);
	}
	for (unsigned i = 0; i < 5; i++) {
		CHECK_EQ(kvv_retrieve(&q, 0, key, ok[i], 64, 0), 0);
		CHECK_EQ(q.dw0, 64);
		CHECK(same(q.val, 64, ok[i]));
	}
	/* a long key whose PRP points outside host memory: a generic transfer error */
	struct nvme_sqe cmd = { .opc = NVME_KVV_EXIST, .nsid = 0, .cdw11 = NVME_KVV_CDW11(40, 0, 0),
				.cdw12 = 0x1000, .cdw13 = 0 };
	CHECK_EQ(kvv_raw(&q, &cmd, 0), GEN(NVME_SC_DATA_TRANSFER_ERROR));
	th_close(&h);
}

static void test_value_sizes_and_alignment(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	/* more than 2 MiB */
	CHECK_EQ(kvv_store(&q, 0, "big!", 4, (2u << 20) + 4, 0, 0), KVV(NVME_KVV_SC_MAX_VALUE_SIZE));
	CHECK_EQ(kvv_store(&q, 0, "big!", 4, (2u << 20) + 1, 0, 0), KVV(NVME_KVV_SC_MAX_VALUE_SIZE));
	CHECK_EQ(kvv_exist(&q, 0, "big!", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	/* pad bytes without any dword */
	struct nvme_sqe cmd = { .opc = NVME_KVV_STORE, .cdw10 = 0, .cdw11 = NVME_KVV_CDW11(4, 0, 2) };
	memcpy(&cmd.cdw12, "padd", 4);
	CHECK_EQ(kvv_raw(&q, &cmd, 0), KVV(NVME_KVV_SC_INVALID_VALUE_SIZE));
	/* a retrieve buffer that is not a whole number of dwords */
	fill(q.val, 100, 1);
	CHECK_EQ(kvv_store(&q, 0, "abcd", 4, 100, 0, 0), 0);
	cmd = (struct nvme_sqe){ .opc = NVME_KVV_RETRIEVE, .cdw10 = 25, .cdw11 = NVME_KVV_CDW11(4, 0, 1) };
	memcpy(&cmd.cdw12, "abcd", 4);
	CHECK_EQ(kvv_raw(&q, &cmd, 100), KVV(NVME_KVV_SC_MISALIGNED_VALUE_SIZE));
	/* a retrieve buffer over 2 MiB */
	cmd.cdw11 = NVME_KVV_CDW11(4, 0, 0);
	cmd.cdw10 = (2u << 20) / 4 + 1;
	CHECK_EQ(kvv_raw(&q, &cmd, 4096), KVV(NVME_KVV_SC_INVALID_VALUE_SIZE));
	/* misaligned offsets */
	CHECK_EQ(kvv_retrieve(&q, 0, "abcd", 4, 64, 100), KVV(NVME_KVV_SC_MISALIGNED_VALUE_OFFSET));
	CHECK_EQ(kvv_store(&q, 0, "abcd", 4, 64, 0, 4), KVV(NVME_KVV_SC_MISALIGNED_VALUE_OFFSET));
	/* bad options */
	CHECK_EQ(kvv_store(&q, 0, "abcd", 4, 64, 0x10, 0), KVV(NVME_KVV_SC_INVALID_OPTION));
	cmd = (struct nvme_sqe){ .opc = NVME_KVV_EXIST, .cdw11 = NVME_KVV_CDW11(4, 7, 0) };
	memcpy(&cmd.cdw12, "abcd", 4);
	CHECK_EQ(kvv_raw(&q, &cmd, 0), KVV(NVME_KVV_SC_INVALID_OPTION));
	th_close(&h);
}

static void test_zero_byte_retrieve_and_short_buffer(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	fill(q.val, 5000, 3);
	CHECK_EQ(kvv_store(&q, 0, "size", 4, 5000, 0, 0), 0);
	memset(q.val, 0xaa, 8192);
	CHECK_EQ(kvv_retrieve(&q, 0, "size", 4, 0, 0), 0);
	CHECK_EQ(q.dw0, 5000);
	CHECK_EQ(q.val[0], 0xaa); /* nothing transferred */
	/* a smaller buffer gets what fits and still the full size */
	CHECK_EQ(kvv_retrieve(&q, 0, "size", 4, 1024, 0), 0);
	CHECK_EQ(q.dw0, 5000);
	CHECK(same(q.val, 1024, 3));
	CHECK_EQ(q.val[1024], 0xaa);
	th_close(&h);
}

static void test_value_offsets(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:16M") == 0);
	fill(q.val, 2048, 5);
	CHECK_EQ(kvv_store(&q, 0, "offs", 4, 2048, 0, 0), 0);
	/* retrieve from 1024: DW0 is the stored size, the data starts at the offset */
	CHECK_EQ(kvv_retrieve(&q, 0, "offs", 4, 4096, 1024), 0);
	CHECK_EQ(q.dw0, 2048);
	uint8_t ref[4096];
	fill(ref, 2048, 5);
	CHECK(!memcmp(q.val, ref + 1024, 1024));
	/* at the end: nothing left, success; past it: invalid offset */
	CHECK_EQ(kvv_retrieve(&q, 0, "offs", 4, 64, 2048), 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "offs", 4, 64, 2560), KVV(NVME_KVV_SC_INVALID_VALUE_OFFSET));
	/* store at 1536 with 1024 bytes: overwrites the tail and extends to 2560 */
	memset(q.val, 0x5a, 1024);
	CHECK_EQ(kvv_store(&q, 0, "offs", 4, 1024, 0, 1536), 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "offs", 4, 4096, 0), 0);
	CHECK_EQ(q.dw0, 2560);
	CHECK(!memcmp(q.val, ref, 1536));
	bool tail = true;
	for (int i = 1536; i < 2560; i++)
		tail &= q.val[i] == 0x5a;
	CHECK(tail);
	/* an offset past the end, or on a new key, would leave a hole */
	CHECK_EQ(kvv_store(&q, 0, "offs", 4, 8, 0, 3072), KVV(NVME_KVV_SC_INVALID_VALUE_OFFSET));
	CHECK_EQ(kvv_store(&q, 0, "newk", 4, 8, 0, 512), KVV(NVME_KVV_SC_INVALID_VALUE_OFFSET));
	/* offset + length past 2 MiB */
	CHECK_EQ(kvv_store(&q, 0, "offs", 4, 1024, 0, (2u << 20) - 512), KVV(NVME_KVV_SC_MAX_VALUE_SIZE));
	th_close(&h);
}

static void test_keyspaces_and_routing(void)
{
	struct th h;
	struct kvq q;
	/* NVM namespace 1, KV namespace 2: vendor NSIDs 0 and 1 are keyspaces of namespace 2 */
	REQUIRE(setup(&h, &q, "emu://kv?ns=mem:1M&ns=kv:16M") == 0);
	fill(q.val, 16, 0);
	CHECK_EQ(kvv_store(&q, 0, "same", 4, 16, 0, 0), 0);
	fill(q.val, 32, 1);
	CHECK_EQ(kvv_store(&q, 1, "same", 4, 32, 0, 0), 0);
	CHECK_EQ(kvv_retrieve(&q, 0, "same", 4, 64, 0), 0);
	CHECK_EQ(q.dw0, 16);
	CHECK(same(q.val, 16, 0));
	CHECK_EQ(kvv_retrieve(&q, 1, "same", 4, 64, 0), 0);
	CHECK_EQ(q.dw0, 32);
	CHECK(same(q.val, 32, 1));
	CHECK_EQ(kvv_delete(&q, 1, "same", 4), 0);
	CHECK_EQ(kvv_exist(&q, 1, "same", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_exist(&q, 0, "same", 4), 0);
	/* NSID 2 is the KV namespace itself, but as a keyspace id it is out of range */
	CHECK_EQ(kvv_exist(&q, 2, "same", 4), KVV(NVME_KVV_SC_INVALID_KEYSPACE));
	CHECK_EQ(kvv_store(&q, 7, "same", 4, 4, 0, 0), KVV(NVME_KVV_SC_INVALID_KEYSPACE));
	/* the NVM namespace still reads and writes */
	uint8_t *blk = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_rw(&h, &q.q, NVME_CMD_WRITE, 1, 0, 1, blk), 0);
	CHECK_EQ(th_rw(&h, &q.q, NVME_CMD_READ, 1, 0, 1, blk), 0);
	/* append is not supported, as on the original device */
	struct nvme_sqe cmd = { .opc = NVME_KVV_APPEND, .nsid = 0, .cdw11 = NVME_KVV_CDW11(4, 0, 0) };
	CHECK_EQ(kvv_raw(&q, &cmd, 0), GEN(NVME_SC_INVALID_OPCODE));
	th_close(&h);

	/* without a KV namespace the vendor opcodes are unknown */
	REQUIRE(setup(&h, &q, "emu://nvm?ns=mem:1M") == 0);
	CHECK_EQ(kvv_exist(&q, 0, "same", 4), GEN(NVME_SC_INVALID_NS_OR_FORMAT));
	CHECK_EQ(kvv_exist(&q, 1, "same", 4), GEN(NVME_SC_INVALID_OPCODE));
	th_close(&h);
}

static void test_nvm_commands_refused(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	uint8_t *blk = th_alloc(&h, 4096, 4096, NULL);
	const uint8_t opcs[] = { NVME_CMD_COMPARE, NVME_CMD_WRITE_ZEROES, NVME_CMD_DSM, NVME_CMD_VERIFY,
				 NVME_CMD_WRITE_UNCOR };
	for (unsigned i = 0; i < sizeof(opcs); i++)
		CHECK_EQ(th_rw(&h, &q.q, opcs[i], 1, 0, 1, blk), GEN(NVME_SC_INVALID_OPCODE));
	th_close(&h);
}

static void test_idempotent_store_and_delete(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	fill(q.val, 8, 1);
	CHECK_EQ(kvv_store(&q, 0, "idem", 4, 8, NVME_KVV_STORE_IDEMPOTENT, 0), 0);
	fill(q.val, 8, 2);
	CHECK_EQ(kvv_store(&q, 0, "idem", 4, 8, NVME_KVV_STORE_IDEMPOTENT, 0),
		 KVV(NVME_KVV_SC_IDEMPOTENT_STORE_FAIL));
	CHECK_EQ(kvv_retrieve(&q, 0, "idem", 4, 8, 0), 0);
	CHECK(same(q.val, 8, 1)); /* the failed store changed nothing */
	CHECK_EQ(kvv_delete(&q, 0, "idem", 4), 0);
	CHECK_EQ(kvv_exist(&q, 0, "idem", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_retrieve(&q, 0, "idem", 4, 8, 0), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_delete(&q, 0, "idem", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	th_close(&h);
}

static void get_capacity_log(struct th *h, struct nvme_kvv_log_capacity *out)
{
	struct nvme_kvv_log_capacity *buf = th_alloc(h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(h, NVME_KVV_LOG_CAPACITY, 0, 0, sizeof(*buf), buf), 0);
	*out = *buf;
}

static void test_capacity_and_utilization(void)
{
	struct th h;
	struct kvq q;
	/* 64 KiB: each 4 KiB value takes a 4 KiB + 32 B record, so 15 fit and the 16th does not */
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:64K") == 0);
	struct nvme_kvv_log_capacity log;
	get_capacity_log(&h, &log);
	CHECK_EQ(log.capacity, 65536);
	CHECK_EQ(log.used, 0);
	CHECK_EQ(log.utilization, 0);
	int i, st = 0;
	char key[8];
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%03d", i);
		st = kvv_store(&q, 0, key, 4, 4096, 0, 0);
		if (st)
			break;
	}
	CHECK_EQ(i, 15);
	CHECK_EQ(st, KVV(NVME_KVV_SC_CAPACITY_EXCEEDED));
	get_capacity_log(&h, &log);
	CHECK_EQ(log.nr_keys, 15);
	CHECK_EQ(log.used, 15 * (4096 + 32));
	CHECK_EQ(log.utilization, 15 * (4096 + 32) * 10000ull / 65536);
	uint32_t before = log.utilization;
	/* overwriting with the same size needs no more room */
	CHECK_EQ(kvv_store(&q, 0, "k000", 4, 4096, 0, 0), 0);
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "k%03d", i);
		CHECK_EQ(kvv_delete(&q, 0, key, 4), 0);
	}
	get_capacity_log(&h, &log);
	CHECK_EQ(log.nr_keys, 5);
	CHECK(log.utilization < before);
	CHECK_EQ(log.used, 5 * (4096 + 32));
	/* the room is usable again */
	CHECK_EQ(kvv_store(&q, 0, "more", 4, 4096, 0, 0), 0);
	/* Identify: NUSE in 512-byte units */
	struct nvme_id_ns *id = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 1, 0, id), 0);
	CHECK_EQ(id->nuse, (6 * (4096 + 32) + 511) / 512);
	th_close(&h);
}

static void test_identify(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=mem:1M&ns=kv:1G") == 0);
	struct nvme_id_ns *id = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 2, 0, id), 0);
	CHECK_EQ(id->nsze, (1ull << 30) / 512);
	CHECK_EQ(id->ncap, (1ull << 30) / 512);
	CHECK_EQ(id->nuse, 0);
	CHECK_EQ(id->nlbaf, 0);
	CHECK_EQ(nvme_ns_lba_size(id), 512);
	struct nvme_id_ns_kv *kv = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 2, (uint32_t)NVME_CSI_KV << 24, kv), 0);
	CHECK_EQ(kv->nsze, 1ull << 30);
	CHECK_EQ(kv->nkvf, 0);
	CHECK_EQ(kv->kvf[0].mkl, 255);
	CHECK_EQ(kv->kvf[0].mvl, 2u << 20);
	CHECK(kv->kvf[0].mnk > 0);
	/* the NVM structure is not this namespace's, nor the KV one the NVM namespace's */
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 2, (uint32_t)NVME_CSI_NVM << 24, kv),
		 GEN(NVME_SC_INVALID_FIELD));
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 1, (uint32_t)NVME_CSI_KV << 24, kv),
		 GEN(NVME_SC_INVALID_FIELD));
	/* the descriptor list names CSI 01h */
	uint8_t *d = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS_DESC_LIST, 2, 0, d), 0);
	bool found = false;
	for (unsigned off = 0; off + 4 < 4096 && d[off];) {
		if (d[off] == NVME_NIDT_CSI)
			found = d[off + 4] == NVME_CSI_KV;
		off += 4u + d[off + 1];
	}
	CHECK(found);
	/* active list of CSI 01h holds namespace 2 only */
	uint32_t *list = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_ACTIVE_NS_LIST, 0, (uint32_t)NVME_CSI_KV << 24, list), 0);
	CHECK_EQ(list[0], 2);
	CHECK_EQ(list[1], 0);
	/* command set combination 0: NVM and KV */
	uint64_t *vec = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_IOCS, 0, 0, vec), 0);
	CHECK_EQ(vec[0], (1u << NVME_CSI_NVM) | (1u << NVME_CSI_KV));
	/* Commands Supported and Effects for CSI 01h lists the KV opcodes, not the NVM ones */
	struct nvme_cmd_effects_log *fx = th_alloc(&h, 4096, 4096, NULL);
	struct nvme_sqe glp = { .opc = NVME_ADM_GET_LOG_PAGE, .prp1 = th_iova(&h, fx),
				.cdw10 = NVME_LOG_CMD_EFFECTS | (1023u << 16),
				.cdw14 = (uint32_t)NVME_CSI_KV << 24 };
	CHECK_EQ(th_admin(&h, &glp, NULL), 0);
	CHECK(fx->iocs[NVME_KV_LIST] & NVME_CMD_EFFECTS_CSUPP);
	CHECK(fx->iocs[NVME_KVV_STORE] & NVME_CMD_EFFECTS_CSUPP);
	CHECK(fx->iocs[NVME_KVV_ITER_READ] & NVME_CMD_EFFECTS_CSUPP);
	CHECK_EQ(fx->iocs[NVME_CMD_COMPARE], 0);
	CHECK_EQ(fx->iocs[NVME_KVV_APPEND], 0);
	th_close(&h);
}

static void test_log_pages(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	uint8_t *buf = th_alloc(&h, 4096, 4096, NULL);
	/* WAF with nothing stored reads 1.0 */
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_WAF, 0, 0, 512, buf), 0);
	uint32_t waf;
	memcpy(&waf, buf + 256, 4);
	CHECK_EQ(waf, 10);
	fill(q.val, 1000, 1);
	CHECK_EQ(kvv_store(&q, 0, "wafk", 4, 1000, 0, 0), 0);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_WAF, 1, 0, 512, buf), 0);
	struct nvme_kvv_log_waf w;
	memcpy(&w, buf, sizeof(w));
	CHECK_EQ(w.host_bytes, 1004);
	CHECK_EQ(w.media_bytes, 1032);  /* the record: 24-byte header, key, value, padding */
	CHECK_EQ(w.waf, 1032 * 10 / 1004);
	/* capacity log, any NSID */
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0xffffffffu, 0, 512, buf), 0);
	struct nvme_kvv_log_capacity c;
	memcpy(&c, buf, sizeof(c));
	CHECK_EQ(c.capacity, 1u << 20);
	CHECK_EQ(c.used, 1032);
	CHECK_EQ(c.nr_keys, 1);
	CHECK_EQ(c.nr_keys_ks[0], 1);
	/* iterator log: 16 closed handles */
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_ITER, 0, 0, 256, buf), 0);
	struct nvme_kvv_iter_info info[16];
	memcpy(info, buf, sizeof(info));
	for (int i = 0; i < 16; i++) {
		CHECK_EQ(info[i].handle, i + 1);
		CHECK_EQ(info[i].status, 0);
	}
	th_close(&h);

	/* no KV namespace: no vendor KV logs */
	REQUIRE(setup(&h, &q, "emu://nvm?ns=mem:1M") == 0);
	buf = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, buf),
		 NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_ITER, 0, 0, 256, buf),
		 NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	th_close(&h);
}

static void test_format_wipes(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1M") == 0);
	CHECK_EQ(kvv_store(&q, 0, "fmt1", 4, 64, 0, 0), 0);
	CHECK_EQ(kvv_store(&q, 1, "fmt2", 4, 64, 0, 0), 0);
	CHECK_EQ(kvv_iter_open(&q, 0, NVME_KVV_ITER_OPEN_KEY, 0, 0), 0);
	struct nvme_sqe f = { .opc = NVME_ADM_FORMAT_NVM, .nsid = 1, .cdw10 = 1u << 9 };
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	CHECK_EQ(kvv_exist(&q, 0, "fmt1", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_exist(&q, 1, "fmt2", 4), KVV(NVME_KVV_SC_KEY_NOT_EXIST));
	CHECK_EQ(kvv_iter_read(&q, 1), KVV(NVME_KVV_SC_ITER_REQUEST_FAIL));
	/* only LBA format 0 exists */
	f.cdw10 = 1;
	CHECK_EQ(th_admin(&h, &f, NULL), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_FORMAT));
	CHECK_EQ(kvv_store(&q, 0, "fmt1", 4, 64, 0, 0), 0);
	th_close(&h);
}

static void test_uri(void)
{
	struct emu_params p;
	char err[256];
	CHECK_EQ(emu_params_parse("emu://kv?ns=kv:1G", &p, err, sizeof(err)), 0);
	CHECK_EQ(p.ns[0].kind, EMU_NS_KV);
	CHECK_EQ(p.ns[0].size_bytes, 1ull << 30);
	CHECK_EQ(p.ns[0].lba_size, 512);
	CHECK_EQ(emu_params_parse("emu://kv?ns=kv:1G::/tmp/x.kv", &p, err, sizeof(err)), 0);
	CHECK_STREQ(p.ns[0].path, "/tmp/x.kv");
	CHECK_EQ(emu_params_parse("emu://kv?ns=kv:1G:512:/tmp/x.kv", &p, err, sizeof(err)), 0);
	CHECK(emu_params_parse("emu://kv?ns=kv:1G:4096", &p, err, sizeof(err)) != 0);
	CHECK(strstr(err, "512") != NULL);
	CHECK(emu_params_parse("emu://kv?ns=kv:0", &p, err, sizeof(err)) != 0);
	CHECK_EQ(emu_params_parse("emu://kv?type=kv&size=4M&file=/tmp/y.kv", &p, err, sizeof(err)), 0);
	CHECK_EQ(p.ns[0].kind, EMU_NS_KV);
	CHECK_STREQ(p.ns[0].path, "/tmp/y.kv");
}

/* Many keys: the index grows through many doublings and every key stays reachable. */
static void test_many_keys(void)
{
	struct th h;
	struct kvq q;
	REQUIRE(setup(&h, &q, "emu://kv?ns=kv:1G") == 0);
	enum { N = 1000000 };
	uint32_t k[2];
	unsigned bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		k[0] = i * 2654435761u;
		k[1] = i;
		bad += kvv_store(&q, i & 1, k, 8, 0, 0, 0) != 0;
	}
	CHECK_EQ(bad, 0);
	for (uint32_t i = 0; i < N; i += 7) {
		k[0] = i * 2654435761u;
		k[1] = i;
		bad += kvv_exist(&q, i & 1, k, 8) != 0;
		bad += kvv_exist(&q, !(i & 1), k, 8) != KVV(NVME_KVV_SC_KEY_NOT_EXIST);
	}
	CHECK_EQ(bad, 0);
	struct nvme_kvv_log_capacity *cap = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_KVV_LOG_CAPACITY, 0, 0, 512, cap), 0);
	CHECK_EQ(cap->nr_keys, N);
	CHECK_EQ(cap->nr_keys_ks[1], N / 2);
	CHECK_EQ(cap->used, (uint64_t)N * 32);
	th_close(&h);
}

TEST_MAIN(TEST(test_store_retrieve_roundtrip), TEST(test_key_sizes),
	  TEST(test_value_sizes_and_alignment), TEST(test_zero_byte_retrieve_and_short_buffer),
	  TEST(test_value_offsets), TEST(test_keyspaces_and_routing), TEST(test_nvm_commands_refused),
	  TEST(test_idempotent_store_and_delete), TEST(test_capacity_and_utilization),
	  TEST(test_identify), TEST(test_log_pages), TEST(test_format_wipes), TEST(test_uri),
	  TEST(test_many_keys))
