/* SPDX-License-Identifier: BSD-3-Clause */
/* The spec headers' bit-field accessors: completion status words, registers, doorbells. */
#include <unvme/spec.h>

#include "tests/unit/test_util.h"

static void test_cqe_status_fields(void)
{
	/* DNR, More, CRD 2, SCT 2, SC 0x81, phase 1: every field at its own bits. */
	uint16_t st = (uint16_t)(1u << 15 | 1u << 14 | 2u << 12 | NVME_CQE_STATUS(2, 0x81) | 1u);
	CHECK_EQ(NVME_CQE_PHASE(st), 1);
	CHECK_EQ(NVME_CQE_SC(st), 0x81);
	CHECK_EQ(NVME_CQE_SCT(st), 2);
	CHECK_EQ(NVME_CQE_CRD(st), 2);
	CHECK_EQ(NVME_CQE_MORE(st), 1);
	CHECK_EQ(NVME_CQE_DNR(st), 1);

	uint16_t plain = NVME_CQE_STATUS(1, 0x0c);
	CHECK_EQ(NVME_CQE_PHASE(plain), 0);
	CHECK_EQ(NVME_CQE_DNR(plain), 0);
	CHECK_EQ(NVME_CQE_MORE(plain), 0);
	CHECK_EQ(NVME_CQE_CRD(plain), 0);
	CHECK_EQ(plain, 0x0218);
}

static void test_status_round_trips_for_every_code(void)
{
	for (unsigned sct = 0; sct < 8; sct++) {
		for (unsigned sc = 0; sc < 256; sc++) {
			int status = NVME_STATUS(sct, sc);
			CHECK_EQ(status, (int)(sct << 8 | sc));
			CHECK_EQ(NVME_STATUS_SCT(status), sct);
			CHECK_EQ(NVME_STATUS_SC(status), sc);
			/* Phase tag and DNR do not leak into the library's form. */
			for (unsigned extra = 0; extra < 4; extra++) {
				uint16_t st = (uint16_t)(NVME_CQE_STATUS(sct, sc) | (extra & 1u) | (extra >> 1) << 15);
				CHECK_EQ(NVME_STATUS_FROM_CQE(st), status);
				CHECK_EQ(NVME_CQE_SCT(st), sct);
				CHECK_EQ(NVME_CQE_SC(st), sc);
			}
		}
	}
	CHECK_EQ(NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID), 0x101);
	CHECK_EQ(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SUCCESS), 0);
}

static void test_cap_fields_round_trip(void)
{
	uint64_t cap = nvme_cap_make(1023, 1, 20, 2, NVME_CAP_CSS_NVM | NVME_CAP_CSS_IOCS, 0, 4);
	CHECK_EQ(NVME_CAP_MQES(cap), 1023);
	CHECK_EQ(NVME_CAP_CQR(cap), 1);
	CHECK_EQ(NVME_CAP_AMS(cap), 0);
	CHECK_EQ(NVME_CAP_TO(cap), 20);
	CHECK_EQ(NVME_CAP_DSTRD(cap), 2);
	CHECK_EQ(NVME_CAP_NSSRS(cap), 0);
	CHECK_EQ(NVME_CAP_CSS(cap), 0x41);
	CHECK_EQ(NVME_CAP_BPS(cap), 0);
	CHECK_EQ(NVME_CAP_MPSMIN(cap), 0);
	CHECK_EQ(NVME_CAP_MPSMAX(cap), 4);
	/* CSS bit 0 is CAP bit 37, IOCS bit 43. */
	CHECK_EQ((cap >> 37) & 1, 1);
	CHECK_EQ((cap >> 43) & 1, 1);
}

static void test_cap_fields_are_isolated(void)
{
	/* One field at its maximum must not show up in any other. */
	uint64_t only_mqes = nvme_cap_make(0xffff, 0, 0, 0, 0, 0, 0);
	CHECK_EQ(only_mqes, 0xffff);
	uint64_t only_to = nvme_cap_make(0, 0, 0xff, 0, 0, 0, 0);
	CHECK_EQ(NVME_CAP_TO(only_to), 0xff);
	CHECK_EQ(NVME_CAP_MQES(only_to), 0);
	CHECK_EQ(NVME_CAP_DSTRD(only_to), 0);
	uint64_t only_dstrd = nvme_cap_make(0, 0, 0, 0xf, 0, 0, 0);
	CHECK_EQ(only_dstrd, 0xfull << 32);
	CHECK_EQ(NVME_CAP_NSSRS(only_dstrd), 0);
	uint64_t only_css = nvme_cap_make(0, 0, 0, 0, 0xff, 0, 0);
	CHECK_EQ(only_css, 0xffull << 37);
	CHECK_EQ(NVME_CAP_BPS(only_css), 0);
	uint64_t only_mps = nvme_cap_make(0, 0, 0, 0, 0, 0xf, 0xf);
	CHECK_EQ(NVME_CAP_MPSMIN(only_mps), 0xf);
	CHECK_EQ(NVME_CAP_MPSMAX(only_mps), 0xf);
	CHECK_EQ(only_mps, 0xffull << 48);
	/* Out-of-range inputs are truncated to their field, never spilling over. */
	CHECK_EQ(nvme_cap_make(0x1ffff, 0, 0, 0, 0, 0, 0), 0xffff);
}

static void test_doorbell_offsets_with_strides(void)
{
	/* Stride 4 bytes (DSTRD 0): SQ0 tail 1000h, CQ0 head 1004h, SQ1 1008h, CQ1 100Ch. */
	CHECK_EQ(nvme_sq_doorbell_offset(0, 0), 0x1000);
	CHECK_EQ(nvme_cq_doorbell_offset(0, 0), 0x1004);
	CHECK_EQ(nvme_sq_doorbell_offset(1, 0), 0x1008);
	CHECK_EQ(nvme_cq_doorbell_offset(1, 0), 0x100c);
	/* Stride 16 bytes (DSTRD 2). */
	CHECK_EQ(nvme_sq_doorbell_offset(1, 2), 0x1020);
	CHECK_EQ(nvme_cq_doorbell_offset(1, 2), 0x1030);
	/* Stride 4 KiB (DSTRD 10): one doorbell per page. */
	CHECK_EQ(nvme_sq_doorbell_offset(3, 10), 0x1000 + 6 * 4096);
	CHECK_EQ(nvme_cq_doorbell_offset(3, 10), 0x1000 + 7 * 4096);
}

static void test_cc_csts_aqa_vs(void)
{
	uint32_t cc = NVME_CC_EN | NVME_CC_CSS_SET(NVME_CC_CSS_IOCS) | NVME_CC_MPS_SET(1) | NVME_CC_AMS_SET(1) |
		      NVME_CC_SHN_SET(NVME_CC_SHN_NORMAL) | NVME_CC_IOSQES_SET(NVME_SQES_LOG2) |
		      NVME_CC_IOCQES_SET(NVME_CQES_LOG2);
	CHECK_EQ(cc & NVME_CC_EN, 1);
	CHECK_EQ(NVME_CC_CSS(cc), NVME_CC_CSS_IOCS);
	CHECK_EQ(NVME_CC_MPS(cc), 1);
	CHECK_EQ(NVME_CC_AMS(cc), 1);
	CHECK_EQ(NVME_CC_SHN(cc), NVME_CC_SHN_NORMAL);
	CHECK_EQ(NVME_CC_IOSQES(cc), 6);
	CHECK_EQ(NVME_CC_IOCQES(cc), 4);
	CHECK_EQ(cc, 0x004648e1u);

	uint32_t csts = NVME_CSTS_RDY | NVME_CSTS_SHST_SET(NVME_CSTS_SHST_COMPLETE);
	CHECK_EQ(NVME_CSTS_SHST(csts), NVME_CSTS_SHST_COMPLETE);
	CHECK_EQ(csts, 0x9);

	uint32_t aqa = NVME_AQA_MAKE(32, 16);
	CHECK_EQ(NVME_AQA_ASQS(aqa), 31);
	CHECK_EQ(NVME_AQA_ACQS(aqa), 15);
	CHECK_EQ(aqa, 0x000f001fu);

	uint32_t vs = NVME_VS(1, 4, 2);
	CHECK_EQ(vs, 0x00010402u);
	CHECK_EQ(NVME_VS_MJR(vs), 1);
	CHECK_EQ(NVME_VS_MNR(vs), 4);
	CHECK_EQ(NVME_VS_TER(vs), 2);
}

static void test_identify_and_log_helpers(void)
{
	struct nvme_id_ns ns = { 0 };
	/* Format index 53: low nibble 5 in bits 3:0, high bits 3 in bits 6:5; bit 4 (metadata
	 * placement) must not change the index. */
	ns.flbas = 0x05 | 0x10 | (3u << 5);
	CHECK_EQ(nvme_ns_flbas_index(&ns), 53);
	ns.lbaf[53].lbads = 12;
	CHECK_EQ(nvme_ns_lba_size(&ns), 0); /* NLBAF says there is only format 0 */
	ns.nlbaf = 63;
	CHECK_EQ(nvme_ns_lba_size(&ns), 4096);
	/* device-reported LBADS outside 9..30 is no block size (never a shift) */
	ns.lbaf[53].lbads = 63;
	CHECK_EQ(nvme_ns_lba_size(&ns), 0);
	ns.lbaf[53].lbads = 32;
	CHECK_EQ(nvme_ns_lba_size(&ns), 0);
	ns.lbaf[53].lbads = 8;
	CHECK_EQ(nvme_ns_lba_size(&ns), 0);
	ns.lbaf[53].lbads = 30;
	CHECK_EQ(nvme_ns_lba_size(&ns), 1u << 30);
	/* 2^n pages: saturates instead of shifting 64 or more */
	CHECK_EQ(nvme_pow2_pages(4096, 9), 2u << 20);
	CHECK_EQ(nvme_pow2_pages(4096, 51), 1ull << 63);
	CHECK_EQ(nvme_pow2_pages(4096, 52), UINT64_MAX);
	CHECK_EQ(nvme_pow2_pages(4096, 255), UINT64_MAX);
	CHECK_EQ(nvme_pow2_pages(1, 63), 1ull << 63);

	CHECK_EQ(NVME_CTRL_FRMW_NSLOTS(0x0e), 7);
	CHECK_EQ(NVME_FW_AFI_ACTIVE(0x21), 1);
	CHECK_EQ(NVME_FW_AFI_NEXT(0x21), 2);
	CHECK_EQ(NVME_LOG_NUMD(4096), 1023);
	CHECK_EQ(NVME_LOG_NUMD(512), 127);
	CHECK_EQ(NVME_SQE_FUSE(0xc1), 1);
	CHECK_EQ(NVME_SQE_PSDT(0xc1), 3);
}

TEST_MAIN(TEST(test_cqe_status_fields), TEST(test_status_round_trips_for_every_code),
	  TEST(test_cap_fields_round_trip), TEST(test_cap_fields_are_isolated),
	  TEST(test_doorbell_offsets_with_strides), TEST(test_cc_csts_aqa_vs), TEST(test_identify_and_log_helpers))
