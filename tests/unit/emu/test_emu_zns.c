/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A controller with a zoned namespace, driven as a host drives it: the URI's zone options,
 * command set selection through CC.CSS, ZNS Identify structures, Zone Append completions
 * (DW0/DW1), the Changed Zone List log and the Zone Descriptor Changed event.
 */
#include <string.h>

#include "emu_test_host.h"
#include "hw/emu/emu_ctrl.h"
#include "tests/unit/test_util.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)

static void test_uri(void)
{
	struct emu_params p;
	char err[512];
	REQUIRE(emu_params_parse("emu://z?ns=zns,zone=8M,cap=6M,open=4,active=6:64M:4096&zasl=64K", &p,
				 err, sizeof(err)) == 0);
	CHECK_EQ(p.ns[0].kind, EMU_NS_ZNS);
	CHECK_EQ(p.ns[0].zns.zone_bytes, 8u << 20);
	CHECK_EQ(p.ns[0].zns.cap_bytes, 6u << 20);
	CHECK_EQ(p.ns[0].zns.max_open, 4);
	CHECK_EQ(p.ns[0].zns.max_active, 6);
	CHECK_EQ(p.ns[0].zns.zasl_bytes, 64u << 10);
	CHECK_EQ(p.ns[0].lba_size, 4096);
	/* defaults: 16 MiB zones, capacity = size, 14 open and active */
	REQUIRE(emu_params_parse("emu://z?ns=zns:64M", &p, err, sizeof(err)) == 0);
	CHECK_EQ(p.ns[0].zns.zone_bytes, 16u << 20);
	CHECK_EQ(p.ns[0].zns.cap_bytes, 16u << 20);
	CHECK_EQ(p.ns[0].zns.max_open, 14);
	REQUIRE(emu_params_parse("emu://z?type=zns&size=32M&file=/tmp/z.img", &p, err, sizeof(err)) == 0);
	CHECK_EQ(p.ns[0].kind, EMU_NS_ZNS);
	CHECK_STREQ(p.ns[0].path, "/tmp/z.img");
	CHECK_STREQ(p.state_path, "/tmp/z.img.ctrl");
	/* bad zone options name what is wrong */
	CHECK(emu_params_parse("emu://z?ns=zns,zone=8M:60M", &p, err, sizeof(err)) != 0);
	CHECK(strstr(err, "whole number") != NULL);
	CHECK(emu_params_parse("emu://z?ns=zns,cap=32M:64M", &p, err, sizeof(err)) != 0);
	CHECK(emu_params_parse("emu://z?ns=zns,colour=red:64M", &p, err, sizeof(err)) != 0);
	CHECK(strstr(err, "colour") != NULL);
	CHECK(emu_params_parse("emu://z?ns=zns,open=9,active=3:64M", &p, err, sizeof(err)) != 0);
	CHECK(emu_params_parse("emu://z?ns=mem,zone=1M:64M", &p, err, sizeof(err)) != 0);
	CHECK(emu_params_parse("emu://z?ns=zns:64M&zasl=5000", &p, err, sizeof(err)) != 0);
}

static int open_css(struct th *h, const char *uri, uint32_t css)
{
	if (th_open(h, uri))
		return -1;
	return (th_enable_css(h, 32, 32, css) & NVME_CSTS_RDY) ? 0 : -1;
}

static int append(struct th *h, struct th_queue *q, uint64_t zslba, void *buf, uint64_t *lba)
{
	struct nvme_sqe cmd = { .opc = NVME_CMD_ZONE_APPEND, .nsid = 2, .cdw10 = (uint32_t)zslba,
				.cdw11 = (uint32_t)(zslba >> 32), .cdw12 = 0, .prp1 = th_iova(h, buf) };
	struct nvme_cqe e;
	int st = th_cmd(h, q, &cmd, &e);
	*lba = (uint64_t)e.dw1 << 32 | e.dw0;
	return st;
}

static void test_identify_and_append(void)
{
	struct th h;
	REQUIRE(open_css(&h, "emu://z?ns=mem:1M:4096&ns=zns,zone=1M,cap=512K:8M:4096&zasl=8K",
			 NVME_CC_CSS_IOCS) == 0);
	h.lba = 4096;
	uint8_t *b = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_CTRL, 0, (uint32_t)NVME_CSI_ZNS << 24, b), 0);
	CHECK_EQ(((struct nvme_id_ctrl_zns *)b)->zasl, 1);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 2, (uint32_t)NVME_CSI_ZNS << 24, b), 0);
	CHECK_EQ(((struct nvme_id_ns_zns *)b)->lbafe[1].zsze, 256);
	CHECK_EQ(((struct nvme_id_ns_zns *)b)->mor, 13);
	/* the memory namespace is no zoned one */
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 1, (uint32_t)NVME_CSI_ZNS << 24, b),
		 ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	/* the active ZNS namespace list */
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_ACTIVE_NS_LIST, 0, (uint32_t)NVME_CSI_ZNS << 24, b), 0);
	CHECK_EQ(((uint32_t *)b)[0], 2);
	CHECK_EQ(((uint32_t *)b)[1], 0);
	/* command set combination 0: NVM and ZNS */
	CHECK_EQ(th_identify(&h, NVME_CNS_IOCS, 0, 0, b), 0);
	uint64_t v;
	memcpy(&v, b, 8);
	CHECK_EQ(v, NVME_IOCS_VECTOR(NVME_CSI_NVM) | NVME_IOCS_VECTOR(NVME_CSI_ZNS));
	CHECK_EQ(th_identify(&h, NVME_CNS_CTRL, 0, 0, b), 0);
	CHECK(((struct nvme_id_ctrl *)b)->oaes & NVME_OAES_ZONE_CHANGED);
	/* the descriptor list names the command set */
	CHECK_EQ(th_identify(&h, NVME_CNS_NS_DESC_LIST, 2, 0, b), 0);

	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *d = th_alloc(&h, 4096, 4096, NULL);
	memset(d, 0x42, 4096);
	uint64_t lba = 0;
	CHECK_EQ(append(&h, &q, 256, d, &lba), 0);
	CHECK_EQ(lba, 256);
	CHECK_EQ(append(&h, &q, 256, d, &lba), 0);
	CHECK_EQ(lba, 257);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 2, 256, 1, d), ST(NVME_SCT_CMD, NVME_SC_ZONE_INVALID_WRITE));
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 2, 258, 1, d), 0);
	/* the error log names the failing LBA of a zone error */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 2, 300, 1, d), ST(NVME_SCT_CMD, NVME_SC_ZONE_INVALID_WRITE));
	struct nvme_error_log *el = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 64, el), 0);
	CHECK_EQ(el->lba, 300);
	CHECK_EQ(el->nsid, 2);
	/* commands supported: the zone commands with the ZNS CSI */
	struct nvme_sqe cmd = { .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = NVME_LOG_CMD_EFFECTS | (1023u << 16),
				.cdw14 = (uint32_t)NVME_CSI_ZNS << 24 };
	struct nvme_cmd_effects_log *eff = th_alloc(&h, 4096, 4096, NULL);
	cmd.prp1 = th_iova(&h, eff);
	CHECK_EQ(th_admin(&h, &cmd, NULL), 0);
	CHECK(eff->iocs[NVME_CMD_ZONE_APPEND] & NVME_CMD_EFFECTS_CSUPP);
	CHECK(eff->iocs[NVME_CMD_ZONE_MGMT_RECV] & NVME_CMD_EFFECTS_CSUPP);
	th_close(&h);

	/* CC.CSS = NVM: the zoned namespace takes NVM commands only */
	REQUIRE(open_css(&h, "emu://z?ns=zns,zone=1M:8M:4096", NVME_CC_CSS_NVM) == 0);
	h.lba = 4096;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	d = th_alloc(&h, 4096, 4096, NULL);
	struct nvme_sqe ap = { .opc = NVME_CMD_ZONE_APPEND, .nsid = 1, .prp1 = th_iova(&h, d) };
	CHECK_EQ(th_cmd(&h, &q, &ap, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 0, 1, d), 0);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 5, 1, d), ST(NVME_SCT_CMD, NVME_SC_ZONE_INVALID_WRITE));
	th_close(&h);
}

static int changed_zones(struct th *h, uint32_t nsid, bool rae, struct nvme_changed_zone_log *log)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_GET_LOG_PAGE, .nsid = nsid,
				.cdw10 = NVME_LOG_CHANGED_ZONES | (rae ? 1u << 15 : 0) | (1023u << 16),
				.cdw14 = (uint32_t)NVME_CSI_ZNS << 24, .prp1 = th_iova(h, log) };
	return th_admin(h, &cmd, NULL);
}

static int make_read_only(struct th *h, uint32_t nsid, uint64_t lba)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_EMU_FAULT, .nsid = nsid, .cdw10 = NVME_EMU_FAULT_ZONE_READ_ONLY,
				.cdw12 = (uint32_t)lba, .cdw13 = (uint32_t)(lba >> 32) };
	return th_admin(h, &cmd, NULL);
}

static void test_changed_zones_event(void)
{
	struct th h;
	REQUIRE(open_css(&h, "emu://z?ns=zns,zone=1M:8M:4096&ns=mem:1M", NVME_CC_CSS_IOCS) == 0);
	struct nvme_changed_zone_log *log = th_alloc(&h, 4096, 4096, NULL);
	/* enable the notice, then leave an Asynchronous Event Request outstanding */
	struct nvme_sqe sf = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_ASYNC_EVENT,
			       .cdw11 = NVME_AEC_ZONE_CHANGED };
	CHECK_EQ(th_admin(&h, &sf, NULL), 0);
	struct nvme_sqe aer = { .opc = NVME_ADM_ASYNC_EVENT };
	th_place(&h.admin, &aer, false);
	uint16_t aer_cid = aer.cid;
	th_ring_sq(&h, &h.admin);

	/* the fault and the event complete on the admin queue in either order */
	struct nvme_sqe ro = { .opc = NVME_ADM_EMU_FAULT, .nsid = 1, .cdw10 = NVME_EMU_FAULT_ZONE_READ_ONLY,
			       .cdw12 = 3 * 256 + 9 };
	th_place(&h.admin, &ro, false);
	th_ring_sq(&h, &h.admin);
	struct nvme_cqe e, e2;
	REQUIRE(th_poll(&h, &h.admin, &e, 1000, true));
	REQUIRE(th_poll(&h, &h.admin, &e2, 1000, true));
	if (e.cid != aer_cid)
		e = e2;
	CHECK_EQ(e.cid, aer_cid);
	CHECK_EQ(e.dw0 & 0x7, NVME_AEN_TYPE_NOTICE);
	CHECK_EQ((e.dw0 >> 8) & 0xff, NVME_AEN_INFO_ZONE_CHANGED);
	CHECK_EQ((e.dw0 >> 16) & 0xff, NVME_LOG_CHANGED_ZONES);

	CHECK_EQ(changed_zones(&h, 1, true, log), 0);
	CHECK_EQ(log->nrzid, 1);
	CHECK_EQ(log->zid[0], 3 * 256); /* the zone's start LBA */
	CHECK_EQ(changed_zones(&h, 1, false, log), 0); /* without RAE: read and cleared */
	CHECK_EQ(log->nrzid, 1);
	CHECK_EQ(changed_zones(&h, 1, false, log), 0);
	CHECK_EQ(log->nrzid, 0);
	/* the memory namespace has no zones; NSID 3 is not active; CSI must be ZNS */
	CHECK_EQ(changed_zones(&h, 2, false, log), 0);
	CHECK_EQ(log->nrzid, 0);
	CHECK_EQ(changed_zones(&h, 3, false, log), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	CHECK_EQ(make_read_only(&h, 2, 0), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK_EQ(make_read_only(&h, 1, 1ull << 40), ST(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	th_close(&h);

	/* a controller without zoned namespaces has no Changed Zone List */
	REQUIRE(open_css(&h, "emu://z?ns=mem:1M", NVME_CC_CSS_IOCS) == 0);
	log = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(changed_zones(&h, 1, false, log), ST(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	th_close(&h);
}

TEST_MAIN(TEST(test_uri), TEST(test_identify_and_append), TEST(test_changed_zones_event))
