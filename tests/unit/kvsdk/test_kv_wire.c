/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pieces below the API, each alone: the SQE layouts of the Samsung vendor protocol and of
 * LBA mode (kv_cmd.c) and the status mapping (kv_status.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kv_req.h"
#include "kv_test.h"
#include "test_util.h"

static struct kv_dev kv_dev_kv = { .lba = false, .sector_size = 512 };
static struct kv_dev kv_dev_lba = { .lba = true, .sector_size = 512, .nsid = 3 };

static void init_req(struct kv_req *req, struct kv_dev *d, kv_pair *kv, enum kv_op op)
{
	memset(req, 0, sizeof(*req));
	req->dev = d;
	req->lba = d->lba;
	req->kv = kv;
	req->cb_arg = kv;
	req->op = op;
}

static void test_store_layout(void)
{
	uint8_t key[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, val[10];
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 10);
	kv.keyspace_id = 1;
	kv.value.offset = 1024;
	kv.param.io_option.store_option = KV_STORE_IDEMPOTENT;
	struct kv_req req;
	init_req(&req, &kv_dev_kv, &kv, KV_OP_STORE);
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, 0x81);
	CHECK_EQ(req.sqe.nsid, 1);
	CHECK_EQ(req.sqe.mptr, 1024);
	CHECK_EQ(req.sqe.cdw10, 3);                      /* 10 bytes -> 3 dwords */
	CHECK_EQ(req.sqe.cdw11, 7u | 0x02u << 8 | 2u << 16); /* klen-1, option, 2 pad bytes */
	CHECK_EQ(req.sqe.cdw12, 0x04030201u);
	CHECK_EQ(req.sqe.cdw13, 0x08070605u);
	CHECK_EQ(req.sqe.cdw14, 0);
	CHECK_EQ(req.sqe.cdw15, 0);
	kv.value.length = 12;
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.cdw11 >> 16, 0);                /* whole dwords: no pad */
}

static void test_long_key_goes_through_a_prp(void)
{
	uint8_t key[40];
	for (int i = 0; i < 40; i++)
		key[i] = (uint8_t)i;
	kv_pair kv;
	kv_pair_init(&kv, key, 40, NULL, 0);
	struct kv_req req;
	init_req(&req, &kv_dev_kv, &kv, KV_OP_RETRIEVE);
	req.keybuf = unvme_dma_alloc(256, 256);
	REQUIRE(req.keybuf != NULL);
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	uint64_t iova = unvme_dma_iova(req.keybuf);
	CHECK_EQ(req.sqe.opc, 0x90);
	CHECK_EQ(req.sqe.cdw12, (uint32_t)iova);
	CHECK_EQ(req.sqe.cdw13, (uint32_t)(iova >> 32));
	CHECK_EQ(req.sqe.cdw14, 0);
	CHECK_EQ(req.sqe.cdw15, 0);
	CHECK_EQ(req.sqe.cdw11 & 0xff, 39);
	CHECK(memcmp(req.keybuf, key, 40) == 0);
	CHECK_EQ(req.sqe.cdw10, 0);                      /* 0-byte retrieve */
	unvme_dma_free(req.keybuf);
}

static void test_delete_exist_and_iterator_layouts(void)
{
	uint8_t key[5] = { 'a', 'b', 'c', 'd', 'e' };
	kv_pair kv;
	kv_pair_init(&kv, key, 5, NULL, 0);
	kv.param.io_option.delete_option = KV_DELETE_CHECK_IDEMPOTENT;
	struct kv_req req;
	init_req(&req, &kv_dev_kv, &kv, KV_OP_DELETE);
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, 0xA1);
	CHECK_EQ(req.sqe.cdw10, 0);
	CHECK_EQ(req.sqe.cdw11, 4u | 1u << 8);
	CHECK_EQ(req.sqe.cdw12, 0x64636261u);
	CHECK_EQ(req.sqe.cdw13, 0x65u);
	init_req(&req, &kv_dev_kv, &kv, KV_OP_EXIST);
	kv.param.io_option.exist_option = 0;
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, 0xB3);
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = 7;
	init_req(&req, &kv_dev_kv, &it.kv, KV_OP_ITER_READ);
	req.cb_arg = &it;
	req.iterator = (uint8_t)it.iterator; /* the request keeps its own copy */
	it.iterator = 9;                     /* so a caller reusing its struct changes nothing */
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, 0xB2);
	CHECK_EQ(req.sqe.nsid, 0);
	CHECK_EQ(req.sqe.cdw10, 8192);
	CHECK_EQ(req.sqe.cdw11, 7);
	struct nvme_sqe sqe;
	kv_cmd_iterate_open(&sqe, 1, 0xffff0000u, 0x12345678u, KV_KEY_ITERATE);
	CHECK_EQ(sqe.opc, 0xB1);
	CHECK_EQ(sqe.nsid, 1);
	CHECK_EQ(sqe.cdw11, 0x05u << 8);
	CHECK_EQ(sqe.cdw12, 0x78563412u);                /* big-endian on the wire */
	CHECK_EQ(sqe.cdw13, 0x0000ffffu);
	kv_cmd_iterate_open(&sqe, 0, 0, 0, KV_KEY_ITERATE_WITH_DELETE);
	CHECK_EQ(sqe.cdw11, 0x11u << 8);
	kv_cmd_iterate_close(&sqe, 9);
	CHECK_EQ(sqe.opc, 0xB1);
	CHECK_EQ(sqe.nsid, 0);
	CHECK_EQ(sqe.cdw11, 0x0209u);
}

static void test_lba_layouts(void)
{
	uint8_t key[8] = { 0x10, 0x02, 0, 0, 0, 0, 0, 0 }; /* LBA 0x210, little endian */
	uint8_t val[2048];
	kv_pair kv;
	kv_pair_init(&kv, key, 8, val, 2048);
	kv.value.offset = 1024;
	struct kv_req req;
	init_req(&req, &kv_dev_lba, &kv, KV_OP_STORE);
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, NVME_CMD_WRITE);
	CHECK_EQ(req.sqe.nsid, 3);
	CHECK_EQ(req.sqe.cdw10, 0x212);                  /* offset in bytes: 2 sectors */
	CHECK_EQ(req.sqe.cdw11, 0);
	CHECK_EQ(req.sqe.cdw12, 3);                      /* 4 blocks, 0's based */
	init_req(&req, &kv_dev_lba, &kv, KV_OP_RETRIEVE);
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, NVME_CMD_READ);
	struct nvme_dsm_range range;
	init_req(&req, &kv_dev_lba, &kv, KV_OP_DELETE);
	req.data = &range;
	kv.value.offset = 0;
	CHECK_EQ(kv_cmd_build(&req), KV_SUCCESS);
	CHECK_EQ(req.sqe.opc, NVME_CMD_DSM);
	CHECK_EQ(req.sqe.cdw10, 0);
	CHECK_EQ(req.sqe.cdw11, NVME_DSM_ATTR_AD);
	CHECK_EQ(range.nlb, 4);                          /* value.length in bytes / sector */
	CHECK_EQ(range.slba, 0x210);
	init_req(&req, &kv_dev_lba, &kv, KV_OP_EXIST);
	CHECK_EQ(kv_cmd_build(&req), KV_ERR_DD_UNSUPPORTED_CMD);
}

static void test_status_mapping(void)
{
	CHECK_EQ(kv_result_from_status(0, true), KV_SUCCESS);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(1, 0x10), true), KV_ERR_NOT_EXIST_KEY);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(1, 0x80), true), KV_ERR_IDEMPOTENT_STORE_FAIL);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(1, 0x93), true), KV_ERR_ITERATE_READ_EOF);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(0, 0x04), true), KV_ERR_IO);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(0, 0x01), true), KV_ERR_DD_UNSUPPORTED_CMD);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(0, 0x80), false), KV_ERR_DD_INVALID_PARAM);
	CHECK_EQ(kv_result_from_status(NVME_STATUS(2, 0x81), false), KV_ERR_UNRECOVERED_ERROR);
	/* in LBA mode an SCT 1 code is an NVM command-specific error, not a kv_result */
	CHECK_EQ(kv_result_from_status(NVME_STATUS(1, 0x80), false), KV_ERR_IO);
	CHECK_EQ(kv_result_from_errno(-11), KV_ERR_DD_NO_AVAILABLE_QUEUE);
	CHECK_EQ(kv_result_from_errno(-5), KV_ERR_IO);
}

TEST_MAIN(TEST(test_store_layout), TEST(test_long_key_goes_through_a_prp),
	  TEST(test_delete_exist_and_iterator_layouts), TEST(test_lba_layouts),
	  TEST(test_status_mapping))
