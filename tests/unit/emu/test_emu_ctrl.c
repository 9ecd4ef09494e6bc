/* SPDX-License-Identifier: BSD-3-Clause */
/* Registers and the controller state machine (NVMe Base 2.0, 3.1, 3.5-3.7). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "emu_test_host.h"
#include "tests/unit/test_util.h"

static void test_cap_vs(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t?queues=16&mqes=1024&dstrd=1") == 0);
	uint64_t cap = th_read64(&h, NVME_REG_CAP);
	CHECK_EQ(NVME_CAP_MQES(cap), 1023);
	CHECK_EQ(NVME_CAP_CQR(cap), 1);
	CHECK_EQ(NVME_CAP_TO(cap), 10);
	CHECK_EQ(NVME_CAP_DSTRD(cap), 1);
	CHECK_EQ(NVME_CAP_CSS(cap), NVME_CAP_CSS_NVM | NVME_CAP_CSS_IOCS);
	CHECK_EQ(NVME_CAP_MPSMIN(cap), 0);
	CHECK_EQ(NVME_CAP_MPSMAX(cap), 0);
	CHECK_EQ(NVME_CAP_AMS(cap), 0);
	CHECK_EQ(th_read32(&h, NVME_REG_CAP), (uint32_t)cap);
	CHECK_EQ(th_read32(&h, NVME_REG_CAP + 4), (uint32_t)(cap >> 32));
	CHECK_EQ(th_read32(&h, NVME_REG_VS), NVME_VS(2, 0, 0));
	/* BAR0 holds the doorbells of all 17 queues at stride 8, as a power of two */
	size_t bar = emu_bar0_size(h.dev);
	CHECK(bar >= 0x1000 + 17 * 2 * 8);
	CHECK_EQ(bar & (bar - 1), 0);
	/* read-only registers ignore writes; undefined ones read 0 */
	th_write32(&h, NVME_REG_CAP, 0);
	th_write32(&h, NVME_REG_VS, 0);
	th_write32(&h, NVME_REG_CSTS, 0xffffffffu);
	CHECK_EQ(th_read64(&h, NVME_REG_CAP), cap);
	CHECK_EQ(th_read32(&h, NVME_REG_VS), NVME_VS(2, 0, 0));
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS), 0);
	CHECK_EQ(th_read32(&h, 0x40), 0);
	CHECK_EQ(th_read32(&h, 0xe00), 0);
	th_close(&h);
}

static void test_enable_ready(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS), 0);
	uint32_t csts = th_enable(&h, 32, 32);
	CHECK_EQ(csts & (NVME_CSTS_RDY | NVME_CSTS_CFS), NVME_CSTS_RDY);
	CHECK_EQ(th_read32(&h, NVME_REG_AQA), NVME_AQA_MAKE(32, 32));
	CHECK_EQ(th_read64(&h, NVME_REG_ASQ), h.admin.sq_iova);
	CHECK_EQ(th_read64(&h, NVME_REG_ACQ), h.admin.cq_iova);
	/* an admin command works */
	uint8_t *id = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_CTRL, 0, 0, id), 0);
	/* while enabled, AQA/ASQ and CC fields other than EN/SHN do not change */
	th_write32(&h, NVME_REG_AQA, 0);
	th_write64(&h, NVME_REG_ASQ, 0x5000);
	uint32_t cc = th_read32(&h, NVME_REG_CC);
	th_write32(&h, NVME_REG_CC, cc | NVME_CC_MPS_SET(3));
	CHECK_EQ(th_read32(&h, NVME_REG_AQA), NVME_AQA_MAKE(32, 32));
	CHECK_EQ(th_read64(&h, NVME_REG_ASQ), h.admin.sq_iova);
	CHECK_EQ(th_read32(&h, NVME_REG_CC), cc);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_RDY, NVME_CSTS_RDY);
	th_close(&h);
}

/* Programs the admin queue registers by hand and enables with cc; returns CSTS. */
static uint32_t enable_raw(struct th *h, uint32_t aqa, uint64_t asq, uint64_t acq, uint32_t cc)
{
	th_write32(h, NVME_REG_CC, 0);
	th_write32(h, NVME_REG_AQA, aqa);
	th_write64(h, NVME_REG_ASQ, asq);
	th_write64(h, NVME_REG_ACQ, acq);
	th_write32(h, NVME_REG_CC, cc | NVME_CC_EN);
	return th_read32(h, NVME_REG_CSTS);
}

static void test_invalid_config_sets_cfs(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	uint64_t sq, cq;
	th_alloc(&h, 4096, 4096, &sq);
	th_alloc(&h, 4096, 4096, &cq);
	const uint32_t good_cc = NVME_CC_IOSQES_SET(6) | NVME_CC_IOCQES_SET(4);
	const uint32_t aqa = NVME_AQA_MAKE(16, 16);
	struct {
		const char *what;
		uint32_t aqa;
		uint64_t asq, acq;
		uint32_t cc;
	} bad[] = {
		{ "one-entry admin SQ", 0x000f0000u, sq, cq, good_cc },
		{ "one-entry admin CQ", 0x0000000fu, sq, cq, good_cc },
		{ "ASQ not page aligned", aqa, sq + 64, cq, good_cc },
		{ "ACQ not page aligned", aqa, sq, cq + 16, good_cc },
		{ "ASQ not mapped", aqa, 0x1000, cq, good_cc },
		{ "ACQ runs past the mapping", NVME_AQA_MAKE(16, 4096), sq,
		  TH_IOVA_BASE + TH_ARENA_SIZE - 4096, good_cc },
		{ "MPS 1 (8 KiB pages)", aqa, sq, cq, good_cc | NVME_CC_MPS_SET(1) },
		{ "CSS 1", aqa, sq, cq, good_cc | NVME_CC_CSS_SET(1) },
		{ "AMS weighted round robin", aqa, sq, cq, good_cc | NVME_CC_AMS_SET(1) },
		{ "IOSQES 7", aqa, sq, cq, NVME_CC_IOSQES_SET(7) | NVME_CC_IOCQES_SET(4) },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t csts = enable_raw(&h, bad[i].aqa, bad[i].asq, bad[i].acq, bad[i].cc);
		if ((csts & (NVME_CSTS_RDY | NVME_CSTS_CFS)) != NVME_CSTS_CFS) {
			fprintf(stderr, "  %s: CSTS %#x\n", bad[i].what, csts);
			CHECK(0);
		}
	}
	/* clearing EN clears CFS; a good configuration then works */
	th_write32(&h, NVME_REG_CC, 0);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_CFS, 0);
	uint32_t csts = enable_raw(&h, aqa, sq, cq, good_cc);
	CHECK_EQ(csts & (NVME_CSTS_RDY | NVME_CSTS_CFS), NVME_CSTS_RDY);
	/* CSS 110b (all I/O command sets) and 111b (admin only) are accepted, as are entry
	 * sizes still 0 */
	csts = enable_raw(&h, aqa, sq, cq, NVME_CC_CSS_SET(NVME_CC_CSS_IOCS));
	CHECK_EQ(csts & (NVME_CSTS_RDY | NVME_CSTS_CFS), NVME_CSTS_RDY);
	csts = enable_raw(&h, aqa, sq, cq, good_cc | NVME_CC_CSS_SET(NVME_CC_CSS_ADMIN));
	CHECK_EQ(csts & (NVME_CSTS_RDY | NVME_CSTS_CFS), NVME_CSTS_RDY);
	th_close(&h);
}

static void test_reset_deletes_queues(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t?ns=mem:1M") == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *buf = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 0, 1, buf), 0);
	/* Set Features Number of Queues is locked once I/O queues exist */
	struct nvme_sqe nq = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES, .cdw11 = 0 };
	CHECK_EQ(th_admin(&h, &nq, NULL), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR));
	/* a volatile feature changed before the reset... */
	struct nvme_sqe arb = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_ARBITRATION, .cdw11 = 2 };
	CHECK_EQ(th_admin(&h, &arb, NULL), 0);

	th_disable(&h);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_RDY, 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	/* ...is back to its default */
	struct nvme_cqe cqe;
	struct nvme_sqe get = { .opc = NVME_ADM_GET_FEATURES, .cdw10 = NVME_FEAT_ARBITRATION };
	CHECK_EQ(th_admin(&h, &get, &cqe), 0);
	CHECK_EQ(cqe.dw0 & 7, 5);
	/* the old queues are gone: deleting them fails, their doorbells are invalid, and the
	 * same QIDs can be created again (Number of Queues is unlocked again) */
	struct nvme_sqe del = { .opc = NVME_ADM_DELETE_SQ, .cdw10 = 1 };
	CHECK_EQ(th_admin(&h, &del, NULL), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	CHECK_EQ(th_admin(&h, &nq, &cqe), 0);
	CHECK_EQ(cqe.dw0, 0); /* one SQ and one CQ granted, 0's based */
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 0, 1, buf), 0);
	/* QID 2 is above the single pair granted now */
	struct th_queue q2;
	CHECK_EQ(th_create_qpair(&h, &q2, 2, 16), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	th_close(&h);
}

static void test_shutdown(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	uint32_t cc = th_read32(&h, NVME_REG_CC);
	th_write32(&h, NVME_REG_CC, cc | NVME_CC_SHN_SET(NVME_CC_SHN_NORMAL));
	uint32_t csts = th_read32(&h, NVME_REG_CSTS);
	CHECK_EQ(NVME_CSTS_SHST(csts), NVME_CSTS_SHST_COMPLETE);
	CHECK_EQ(th_read32(&h, NVME_REG_CC), cc | NVME_CC_SHN_SET(NVME_CC_SHN_NORMAL));
	/* reset and enable again: shutdown status cleared */
	th_write32(&h, NVME_REG_CC, 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	CHECK_EQ(NVME_CSTS_SHST(th_read32(&h, NVME_REG_CSTS)), 0);
	/* abrupt shutdown reports the same */
	cc = th_read32(&h, NVME_REG_CC);
	th_write32(&h, NVME_REG_CC, cc | NVME_CC_SHN_SET(NVME_CC_SHN_ABRUPT));
	CHECK_EQ(NVME_CSTS_SHST(th_read32(&h, NVME_REG_CSTS)), NVME_CSTS_SHST_COMPLETE);
	th_close(&h);
}

/* Admin commands are not processed while the controller is not ready. */
static void test_no_processing_when_disabled(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	th_disable(&h);
	struct nvme_sqe cmd = { .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_CTRL };
	th_place(&h.admin, &cmd, false);
	th_ring_sq(&h, &h.admin);
	CHECK(!th_poll(&h, &h.admin, NULL, 50, false));
	th_close(&h);
}

static void test_create_errors(void)
{
	char err[256];
	struct emu_device *dev = NULL;
	CHECK_EQ(emu_device_create("emu://x?ns=mem:3G:513", &dev, err, sizeof(err)), -EINVAL);
	CHECK(dev == NULL);
	CHECK_STREQ(err, "emu URI 'emu://x?ns=mem:3G:513': LBA size 513 is not 512 or 4096");
	/* a namespace failure is passed through */
	CHECK(emu_device_create("emu://x?file=/nonexistent-dir/x.img", &dev, err, sizeof(err)) < 0);
	CHECK(dev == NULL);
	CHECK(strstr(err, "/nonexistent-dir/x.img") != NULL);
}

TEST_MAIN(TEST(test_cap_vs), TEST(test_enable_ready), TEST(test_invalid_config_sets_cfs),
	  TEST(test_reset_deletes_queues), TEST(test_shutdown), TEST(test_no_processing_when_disabled),
	  TEST(test_create_errors))
