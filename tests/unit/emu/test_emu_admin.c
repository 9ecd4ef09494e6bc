/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands (NVMe Base 2.0, 5): Identify, Get Log Page, Get/Set Features, Format NVM,
 * Abort, the vendor fault injection command, and the SMART counters that I/O drives.
 */
#include <stdio.h>

#include "emu_test_host.h"
#include "tests/unit/test_util.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)

static uint8_t *buf4k(struct th *h)
{
	return th_alloc(h, 4096, 4096, NULL);
}

static int open_ready(struct th *h, const char *uri)
{
	if (th_open(h, uri))
		return -1;
	return (th_enable(h, 32, 32) & NVME_CSTS_RDY) ? 0 : -1;
}

static void test_identify_controller(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://idc?ns=mem:1M&ns=null:2M&serial=SER123&fw=REV9") == 0);
	struct nvme_id_ctrl *id = (struct nvme_id_ctrl *)buf4k(&h);
	REQUIRE(th_identify(&h, NVME_CNS_CTRL, 0, 0, id) == 0);
	CHECK_EQ(id->vid, 0xc0de);
	CHECK_EQ(id->ssvid, 0xc0de);
	CHECK(memcmp(id->sn, "SER123              ", 20) == 0);
	CHECK(memcmp(id->mn, "uNVMe Emulated Controller", 25) == 0 && id->mn[39] == ' ');
	CHECK(memcmp(id->fr, "REV9    ", 8) == 0);
	CHECK_EQ(id->mdts, 9);
	CHECK_EQ(id->cntlid, 1);
	CHECK_EQ(id->ver, NVME_VS(2, 0, 0));
	CHECK_EQ(id->cntrltype, 1);
	CHECK_EQ(id->oacs, NVME_CTRL_OACS_FORMAT | NVME_CTRL_OACS_FW);
	CHECK_EQ(id->acl, 3);
	CHECK_EQ(id->aerl, 3);
	CHECK_EQ(id->frmw & 1, 1);
	CHECK_EQ(NVME_CTRL_FRMW_NSLOTS(id->frmw), 3);
	CHECK(id->frmw & NVME_CTRL_FRMW_NO_RESET);
	CHECK_EQ(id->lpa, NVME_CTRL_LPA_CMD_EFFECTS | NVME_CTRL_LPA_EXT_DATA);
	CHECK_EQ(id->elpe, 63);
	CHECK_EQ(id->sqes, 0x66);
	CHECK_EQ(id->cqes, 0x44);
	CHECK_EQ(id->nn, 32);
	CHECK_EQ(id->oncs, NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WZ | 1u << 7);
	CHECK(id->vwc & NVME_CTRL_VWC_PRESENT);
	CHECK_EQ(id->sgls, 0);
	CHECK_EQ(id->fwug, 1);
	CHECK(id->wctemp > 313 && id->cctemp > id->wctemp);
	uint64_t tnvmcap;
	memcpy(&tnvmcap, id->tnvmcap, 8);
	CHECK_EQ(tnvmcap, 3u << 20);
	CHECK(strncmp(id->subnqn, "nqn.2014-08.org.nvmexpress:c0dec0deSER123", 41) == 0);
	CHECK_EQ(id->npss, 0);
	CHECK(id->psd[0].mp > 0);
	th_close(&h);
}

static void test_identify_namespaces(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://idn?ns=mem:1M&ns=null:2M:4096") == 0);
	uint8_t *b = buf4k(&h);
	const int invalid_ns = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
	const int invalid_field = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);

	struct nvme_id_ns *ns = (struct nvme_id_ns *)b;
	REQUIRE(th_identify(&h, NVME_CNS_NS, 2, 0, b) == 0);
	CHECK_EQ(ns->nsze, 512);
	CHECK_EQ(nvme_ns_lba_size(ns), 4096);
	/* inactive but valid NSID: zeroes; invalid NSIDs: an error */
	memset(b, 0xaa, 4096);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 3, 0, b), 0);
	CHECK_EQ(ns->nsze, 0);
	CHECK_EQ(b[4095], 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 0, 0, b), invalid_ns);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 33, 0, b), invalid_ns);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 0xffffffffu, 0, b), invalid_ns);

	/* active namespace lists, starting after NSID */
	uint32_t *list = (uint32_t *)b;
	CHECK_EQ(th_identify(&h, NVME_CNS_ACTIVE_NS_LIST, 0, 0, b), 0);
	CHECK_EQ(list[0], 1);
	CHECK_EQ(list[1], 2);
	CHECK_EQ(list[2], 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_ACTIVE_NS_LIST, 1, 0, b), 0);
	CHECK_EQ(list[0], 2);
	CHECK_EQ(list[1], 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_ACTIVE_NS_LIST, 0xfffffffeu, 0, b), invalid_ns);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_ACTIVE_NS_LIST, 0, NVME_CSI_NVM << 24, b), 0);
	CHECK_EQ(list[0], 1);
	CHECK_EQ(list[1], 2);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_ACTIVE_NS_LIST, 0, (uint32_t)NVME_CSI_ZNS << 24, b), invalid_field);

	/* descriptors: EUI-64, NGUID, CSI, matching Identify Namespace */
	struct nvme_id_ns *idns = (struct nvme_id_ns *)buf4k(&h);
	REQUIRE(th_identify(&h, NVME_CNS_NS, 1, 0, idns) == 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS_DESC_LIST, 1, 0, b), 0);
	CHECK_EQ(b[0], NVME_NIDT_EUI64);
	CHECK_EQ(b[1], 8);
	CHECK(memcmp(b + 4, idns->eui64, 8) == 0);
	CHECK_EQ(b[12], NVME_NIDT_NGUID);
	CHECK_EQ(b[13], 16);
	CHECK(memcmp(b + 16, idns->nguid, 16) == 0);
	CHECK_EQ(b[32], NVME_NIDT_CSI);
	CHECK_EQ(b[33], 1);
	CHECK_EQ(b[36], NVME_CSI_NVM);
	CHECK_EQ(b[37], 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS_DESC_LIST, 3, 0, b), invalid_ns);

	/* I/O command set specific structures */
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 1, NVME_CSI_NVM << 24, b), 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 1, (uint32_t)NVME_CSI_KV << 24, b), invalid_field);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_NS, 0, NVME_CSI_NVM << 24, b), invalid_ns);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_CTRL, 0, NVME_CSI_NVM << 24, b), 0);
	CHECK_EQ(((struct nvme_id_ctrl_nvm *)b)->dmrl, 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_CSI_CTRL, 0, (uint32_t)NVME_CSI_KV << 24, b), invalid_field);
	CHECK_EQ(th_identify(&h, NVME_CNS_IOCS, 0, 0, b), 0);
	uint64_t v0;
	memcpy(&v0, b, 8);
	CHECK_EQ(v0, 1);
	CHECK_EQ(b[8], 0);
	CHECK_EQ(th_identify(&h, 0x10, 0, 0, b), invalid_field); /* unsupported CNS */
	th_close(&h);
}

static void test_log_pages(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://log?ns=mem:1M&fw=ABC") == 0);
	uint8_t *b = th_alloc(&h, 16384, 4096, NULL);
	const int invalid_field = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	/* unknown log id */
	CHECK_EQ(th_get_log(&h, 0x70, 0, 0, 512, b), ST(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	CHECK_EQ(th_get_log(&h, 0xc5, 0, 0, 512, b), ST(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE));
	/* firmware slot log: slot 1 holds the factory revision and is active */
	memset(b, 0xee, 1024);
	CHECK_EQ(th_get_log(&h, NVME_LOG_FW_SLOT, 0, 0, 512, b), 0);
	struct nvme_fw_slot_log *fw = (struct nvme_fw_slot_log *)b;
	CHECK_EQ(fw->afi, 1);
	CHECK(memcmp(fw->frs[0], "ABC     ", 8) == 0);
	CHECK_EQ(fw->frs[1][0], 0);
	CHECK_EQ(b[512], 0xee); /* nothing past the transfer */
	/* partial reads at an offset, and reads past the end (zero filled) */
	CHECK_EQ(th_get_log(&h, NVME_LOG_FW_SLOT, 0, 8, 8, b), 0);
	CHECK(memcmp(b, "ABC     ", 8) == 0);
	memset(b, 0xee, 8192);
	CHECK_EQ(th_get_log(&h, NVME_LOG_FW_SLOT, 0, 504, 16, b), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(b[i], 0);
	CHECK_EQ(b[16], 0xee);
	CHECK_EQ(th_get_log(&h, NVME_LOG_FW_SLOT, 0, 512, 4, b), invalid_field);
	CHECK_EQ(th_get_log(&h, NVME_LOG_FW_SLOT, 0, 2, 4, b), invalid_field); /* not dword aligned */
	/* commands supported and effects */
	struct nvme_cmd_effects_log *eff = (struct nvme_cmd_effects_log *)b;
	CHECK_EQ(th_get_log(&h, NVME_LOG_CMD_EFFECTS, 0, 0, 4096, b), 0);
	CHECK(eff->acs[NVME_ADM_IDENTIFY] & NVME_CMD_EFFECTS_CSUPP);
	CHECK(eff->acs[NVME_ADM_FORMAT_NVM] & NVME_CMD_EFFECTS_LBCC);
	CHECK_EQ(eff->acs[NVME_ADM_NS_MGMT], 0);
	CHECK(eff->iocs[NVME_CMD_READ] & NVME_CMD_EFFECTS_CSUPP);
	CHECK(eff->iocs[NVME_CMD_WRITE] & NVME_CMD_EFFECTS_LBCC);
	/* a long read: NUMDU is honoured (8 KiB of a 4 KiB page, the rest zeroes) */
	memset(b, 0xee, 16384);
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 8192, b), 0);
	CHECK_EQ(b[8191], 0);
	CHECK_EQ(b[8192], 0xee);
	CHECK_EQ(th_get_log(&h, NVME_LOG_SMART, 1, 0, 512, b), invalid_field); /* per-ns: no */
	CHECK_EQ(th_get_log(&h, NVME_LOG_SMART, 0xffffffffu, 0, 512, b), 0);
	th_close(&h);
}

static struct nvme_smart_log *smart(struct th *h, uint8_t *b)
{
	if (th_get_log(h, NVME_LOG_SMART, 0, 0, 512, b))
		return NULL;
	return (struct nvme_smart_log *)b;
}

static void test_smart_counters(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://smart?ns=mem:4M&ns=mem:4M:4096") == 0);
	struct th_queue q1, q2;
	REQUIRE(th_create_qpair(&h, &q1, 1, 32) == 0);
	REQUIRE(th_create_qpair(&h, &q2, 2, 32) == 0);
	uint8_t *data = th_alloc(&h, 128 * 1024, 4096, NULL);
	uint8_t *b = buf4k(&h);
	struct nvme_smart_log *s = smart(&h, b);
	REQUIRE(s);
	CHECK_EQ(s->temperature, 313);
	CHECK_EQ(s->avail_spare, 100);
	CHECK_EQ(s->spare_thresh, 10);
	CHECK_EQ(s->power_cycles.lo, 1);
	CHECK_EQ(s->host_reads.lo, 0);
	CHECK_EQ(s->data_units_read.lo, 0);
	/* 3 writes of 8 sectors on queue 1, 2 reads of 256 sectors on queue 2, 1 read of 4 KiB
	 * on namespace 2 */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(th_rw(&h, &q1, NVME_CMD_WRITE, 1, 0, 8, data), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(th_rw(&h, &q2, NVME_CMD_READ, 1, 0, 256, data), 0);
	h.lba = 4096;
	CHECK_EQ(th_rw(&h, &q2, NVME_CMD_READ, 2, 0, 1, data), 0);
	h.lba = 512;
	/* failed commands do not count as host commands */
	CHECK_EQ(th_rw(&h, &q1, NVME_CMD_READ, 1, 1u << 30, 1, data), ST(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	s = smart(&h, b);
	REQUIRE(s);
	CHECK_EQ(s->host_writes.lo, 3);
	CHECK_EQ(s->host_reads.lo, 3);
	CHECK_EQ(s->data_units_written.lo, 1);      /* 24 units of 512 B: rounded up to 1 */
	CHECK_EQ(s->data_units_read.lo, 1);         /* 512 + 8 units */
	CHECK_EQ(s->num_err_log_entries.lo, 1);
	/* counters survive deletion of the queues */
	struct nvme_sqe d = { .opc = NVME_ADM_DELETE_SQ, .cdw10 = 2 };
	CHECK_EQ(th_admin(&h, &d, NULL), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(th_rw(&h, &q1, NVME_CMD_READ, 1, 0, 256, data), 0);
	s = smart(&h, b);
	REQUIRE(s);
	CHECK_EQ(s->host_reads.lo, 7);
	CHECK_EQ(s->data_units_read.lo, 2);         /* 1544 units */
	/* the error log holds the failed read */
	struct nvme_error_log *el = (struct nvme_error_log *)b;
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 128, b), 0);
	CHECK_EQ(el[0].error_count, 1);
	CHECK_EQ(el[0].sqid, 1);
	CHECK_EQ(el[0].nsid, 1);
	CHECK_EQ(el[0].lba, 1u << 30);
	CHECK_EQ(NVME_CQE_SC(el[0].status), NVME_SC_LBA_OUT_OF_RANGE);
	CHECK_EQ(el[0].param_loc, 40);
	CHECK_EQ(el[1].error_count, 0);
	th_close(&h);
}

/* The error log keeps the newest 64 entries, newest first, with increasing counts. */
static void test_error_log_ring(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://el?ns=mem:1M") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	for (int i = 0; i < 70; i++) {
		struct nvme_sqe cmd = { .opc = NVME_CMD_FLUSH, .nsid = 9 };
		CHECK_EQ(th_cmd(&h, &q, &cmd, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	}
	struct nvme_error_log *el = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 4096, el), 0);
	for (int i = 0; i < 64; i++) {
		CHECK_EQ(el[i].error_count, 70 - i);
		CHECK_EQ(el[i].param_loc, 4);
		CHECK_EQ(el[i].nsid, 9);
	}
	/* an admin error is logged with SQID 0 */
	struct nvme_sqe bad = { .opc = NVME_ADM_IDENTIFY, .cdw10 = 0x33 };
	CHECK_EQ(th_admin(&h, &bad, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 64, el), 0);
	CHECK_EQ(el[0].error_count, 71);
	CHECK_EQ(el[0].sqid, 0);
	CHECK_EQ(el[0].cid, bad.cid);
	CHECK_EQ(el[0].param_loc, 40);
	th_close(&h);
}

static int get_feature(struct th *h, uint32_t cdw10, uint32_t cdw11, uint32_t *dw0)
{
	struct nvme_cqe e;
	struct nvme_sqe cmd = { .opc = NVME_ADM_GET_FEATURES, .cdw10 = cdw10, .cdw11 = cdw11 };
	int st = th_admin(h, &cmd, &e);
	*dw0 = e.dw0;
	return st;
}

static int set_feature(struct th *h, uint32_t cdw10, uint32_t cdw11)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = cdw10, .cdw11 = cdw11 };
	return th_admin(h, &cmd, NULL);
}

static void test_features(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://feat?ns=mem:1M&queues=16") == 0);
	uint32_t v;
	const int invalid_field = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	CHECK_EQ(get_feature(&h, NVME_FEAT_ARBITRATION, 0, &v), 0);
	CHECK_EQ(v, 5);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC, 0, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(get_feature(&h, NVME_FEAT_NUM_QUEUES, 0, &v), 0);
	CHECK_EQ(v, 15u << 16 | 15u);
	CHECK_EQ(set_feature(&h, NVME_FEAT_VOLATILE_WC, 0), 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC, 0, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_DEFAULT << 8, 0, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_SAVED << 8, 0, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC | NVME_FEAT_SEL_SUPPORTED << 8, 0, &v), 0);
	CHECK_EQ(v, 4); /* changeable, not saveable without a state file */
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC | 4u << 8, 0, &v), invalid_field);
	/* saving needs a state file */
	CHECK_EQ(set_feature(&h, NVME_FEAT_VOLATILE_WC | NVME_FEAT_SAVE, 1),
		 ST(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_SAVEABLE));
	/* unknown and unsupported features */
	CHECK_EQ(get_feature(&h, 0x7f, 0, &v), invalid_field);
	CHECK_EQ(set_feature(&h, NVME_FEAT_LBA_RANGE, 0), invalid_field);
	CHECK_EQ(set_feature(&h, NVME_FEAT_POWER_MGMT, 1), invalid_field); /* PS 1 > NPSS */
	CHECK_EQ(set_feature(&h, NVME_FEAT_POWER_MGMT, 0), 0);
	CHECK_EQ(set_feature(&h, NVME_FEAT_ERR_RECOVERY, 1u << 16), invalid_field); /* DULBE */
	CHECK_EQ(set_feature(&h, NVME_FEAT_ERR_RECOVERY, 100), 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_ERR_RECOVERY, 0, &v), 0);
	CHECK_EQ(v, 100);
	CHECK_EQ(set_feature(&h, NVME_FEAT_IRQ_COALESCE, 0x0a05), 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_IRQ_COALESCE, 0, &v), 0);
	CHECK_EQ(v, 0x0a05);
	CHECK_EQ(set_feature(&h, NVME_FEAT_WRITE_ATOMIC, 1), 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_WRITE_ATOMIC, 0, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(get_feature(&h, NVME_FEAT_IOCS_PROFILE, 0, &v), 0);
	CHECK_EQ(v, 0);
	/* temperature thresholds: over / under selected by THSEL; other sensors do not exist */
	CHECK_EQ(get_feature(&h, NVME_FEAT_TEMP_THRESH, 0, &v), 0);
	CHECK_EQ(v, 343);
	CHECK_EQ(get_feature(&h, NVME_FEAT_TEMP_THRESH, 1u << 20, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(get_feature(&h, NVME_FEAT_TEMP_THRESH, 1u << 16, &v), invalid_field);
	CHECK_EQ(get_feature(&h, NVME_FEAT_TEMP_THRESH, 2u << 20, &v), invalid_field);
	/* a threshold below the temperature: critical warning, and an AER when enabled */
	CHECK_EQ(set_feature(&h, NVME_FEAT_ASYNC_EVENT, NVME_SMART_CW_TEMP), 0);
	struct nvme_sqe aer = { .opc = NVME_ADM_ASYNC_EVENT };
	th_place(&h.admin, &aer, false);
	th_ring_sq(&h, &h.admin);
	struct nvme_sqe temp = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_TEMP_THRESH, .cdw11 = 300 };
	th_place(&h.admin, &temp, false);
	th_ring_sq(&h, &h.admin);
	/* two completions, in either order: the AER and the Set Features */
	int seen = 0;
	for (int i = 0; i < 2; i++) {
		struct nvme_cqe e;
		REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
		CHECK_EQ(th_status(&e), 0);
		if (e.cid == aer.cid) {
			CHECK_EQ(e.dw0, 1u | 1u << 8 | NVME_LOG_SMART << 16);
			seen |= 1;
		} else if (e.cid == temp.cid) {
			seen |= 2;
		}
	}
	CHECK_EQ(seen, 3);
	uint8_t *b = buf4k(&h);
	CHECK_EQ(th_get_log(&h, NVME_LOG_SMART, 0, 0, 512, b), 0);
	CHECK_EQ(((struct nvme_smart_log *)b)->critical_warning, NVME_SMART_CW_TEMP);
	/* a reset restores defaults */
	th_disable(&h);
	REQUIRE(th_enable(&h, 8, 8) & NVME_CSTS_RDY);
	CHECK_EQ(get_feature(&h, NVME_FEAT_VOLATILE_WC, 0, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(get_feature(&h, NVME_FEAT_TEMP_THRESH, 0, &v), 0);
	CHECK_EQ(v, 343);
	th_close(&h);
}

static void test_format(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://fmt?ns=mem:1M&ns=mem:1M") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 8192, 4096, NULL);
	memset(data, 0x5a, 512);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 3, 1, data), 0);
	struct nvme_sqe f = { .opc = NVME_ADM_FORMAT_NVM, .nsid = 1, .cdw10 = 5 };
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_CMD, NVME_SC_INVALID_FORMAT));
	f.cdw10 = 1u << 4; /* metadata settings */
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	f.cdw10 = 1u << 5; /* protection information */
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	f.nsid = 3;
	f.cdw10 = 1;
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	f.nsid = 0;
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	/* namespace 1 to 4 KiB blocks, user data erase */
	f.nsid = 1;
	f.cdw10 = 1 | NVME_FMT_SES_USER << 9;
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	struct nvme_id_ns *ns = (struct nvme_id_ns *)th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 1, 0, ns), 0);
	CHECK_EQ(nvme_ns_lba_size(ns), 4096);
	CHECK_EQ(ns->nsze, 256);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 2, 0, ns), 0);
	CHECK_EQ(nvme_ns_lba_size(ns), 512);
	h.lba = 4096;
	memset(data, 0xff, 4096);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 0, 1, data), 0);
	CHECK_EQ(data[3 * 512], 0); /* erased */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 256, 1, data), ST(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	/* all namespaces at once */
	f.nsid = 0xffffffffu;
	f.cdw10 = 0;
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	CHECK_EQ(th_identify(&h, NVME_CNS_NS, 1, 0, ns), 0);
	CHECK_EQ(nvme_ns_lba_size(ns), 512);
	th_close(&h);
}

static void test_fault_media_and_fatal(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://flt?ns=mem:1M") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_MEDIA_ERROR, .cdw11 = 2 };
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_FLUSH, 1, 0, 1, NULL), 0); /* not a read or write */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 7, 1, data), ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ));
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 9, 1, data), ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 7, 1, data), 0);
	uint8_t *b = buf4k(&h);
	CHECK_EQ(th_get_log(&h, NVME_LOG_SMART, 0, 0, 512, b), 0);
	CHECK_EQ(((struct nvme_smart_log *)b)->media_errors.lo, 2);
	CHECK_EQ(((struct nvme_smart_log *)b)->host_reads.lo, 1);
	struct nvme_error_log *el = (struct nvme_error_log *)b;
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 128, b), 0);
	CHECK_EQ(el[0].lba, 9);
	CHECK_EQ(el[1].lba, 7);
	/* NONE clears what is left */
	f.cdw11 = 5;
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	struct nvme_sqe none = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_NONE };
	CHECK_EQ(th_admin(&h, &none, NULL), 0);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 7, 1, data), 0);
	struct nvme_sqe unknown = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = 9 };
	CHECK_EQ(th_admin(&h, &unknown, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	/* FATAL: the command completes, then CFS and silence until CC.EN is cleared */
	struct nvme_sqe fatal = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_FATAL };
	CHECK_EQ(th_admin(&h, &fatal, NULL), 0);
	CHECK(th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_CFS);
	struct nvme_sqe rd = { .opc = NVME_CMD_READ, .nsid = 1, .prp1 = th_iova(&h, data) };
	th_place(&q, &rd, false);
	th_ring_sq(&h, &q);
	CHECK(!th_poll(&h, &q, NULL, 50, false));
	struct nvme_sqe id = { .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_CTRL, .prp1 = th_iova(&h, b) };
	th_place(&h.admin, &id, false);
	th_ring_sq(&h, &h.admin);
	CHECK(!th_poll(&h, &h.admin, NULL, 50, false));
	th_disable(&h);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_CFS, 0);
	REQUIRE(th_enable(&h, 8, 8) & NVME_CSTS_RDY);
	CHECK_EQ(th_identify(&h, NVME_CNS_CTRL, 0, 0, b), 0);
	th_close(&h);
}

/* DROP: commands vanish; Abort finds them; deleting the SQ completes the rest. */
static void test_fault_drop_abort_delete(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://drop?ns=mem:1M") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_DROP, .cdw11 = 3 };
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	f.cdw11 = 65537;
	CHECK_EQ(th_admin(&h, &f, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	uint16_t cid[4];
	for (int i = 0; i < 4; i++) {
		struct nvme_sqe rd = { .opc = NVME_CMD_READ, .nsid = 1, .prp1 = th_iova(&h, data) };
		cid[i] = th_place(&q, &rd, false);
	}
	th_ring_sq(&h, &q);
	struct nvme_cqe e;
	REQUIRE(th_poll(&h, &q, &e, 2000, true));
	CHECK_EQ(e.cid, cid[3]); /* only the fourth completes */
	CHECK_EQ(e.sqhd, 4);
	CHECK(!th_poll(&h, &q, &e, 20, true));
	/* abort the second: Abort Requested for it, DW0 bit 0 clear for the Abort */
	struct nvme_sqe ab = { .opc = NVME_ADM_ABORT, .cdw10 = (uint32_t)cid[1] << 16 | 1 };
	CHECK_EQ(th_admin(&h, &ab, &e), 0);
	CHECK_EQ(e.dw0 & 1, 0);
	struct nvme_cqe io;
	REQUIRE(th_poll(&h, &q, &io, 2000, true));
	CHECK_EQ(io.cid, cid[1]);
	CHECK_EQ(th_status(&io), ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED));
	/* aborting a command that already completed, or on a missing SQ: not aborted */
	ab.cdw10 = (uint32_t)cid[3] << 16 | 1;
	CHECK_EQ(th_admin(&h, &ab, &e), 0);
	CHECK_EQ(e.dw0 & 1, 1);
	ab.cdw10 = (uint32_t)cid[0] << 16 | 7;
	CHECK_EQ(th_admin(&h, &ab, &e), 0);
	CHECK_EQ(e.dw0 & 1, 1);
	/* delete the SQ: the two left complete with Aborted due to SQ Deletion */
	struct nvme_sqe del = { .opc = NVME_ADM_DELETE_SQ, .cdw10 = 1 };
	CHECK_EQ(th_admin(&h, &del, NULL), 0);
	int deleted = 0;
	while (th_poll(&h, &q, &io, 50, true)) {
		CHECK(io.cid == cid[0] || io.cid == cid[2]);
		CHECK_EQ(th_status(&io), ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION));
		deleted++;
	}
	CHECK_EQ(deleted, 2);
	/* Abort Requested is not in the error log; SQ deletion aborts are */
	struct nvme_error_log *el = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_get_log(&h, NVME_LOG_ERROR, 0, 0, 4096, el), 0);
	int found = 0;
	for (int i = 0; i < 64 && el[i].error_count; i++)
		found += NVME_CQE_SC(el[i].status) == NVME_SC_ABORTED_SQ_DELETION;
	CHECK_EQ(found, 2);
	CHECK_EQ(el[2].error_count, 1); /* the DROP count over the limit */
	CHECK_EQ(el[3].error_count, 0);
	th_close(&h);
}

/* Aborts of commands still in the SQ wait for them; more than ACL+1 exceed the limit. */
static void test_abort_limit(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://abl?ns=mem:1M") == 0);
	struct th_queue q;
	memset(&q, 0, sizeof(q));
	q.qid = 1;
	q.sq_size = 16;
	q.cq_size = 2; /* one completion fits: the SQ blocks behind it */
	q.phase = 1;
	q.sq = th_alloc(&h, 16 * 64, 4096, &q.sq_iova);
	q.cq = th_alloc(&h, 2 * 16, 4096, &q.cq_iova);
	struct nvme_sqe c = { .opc = NVME_ADM_CREATE_CQ, .prp1 = q.cq_iova, .cdw10 = 1u << 16 | 1, .cdw11 = 1 };
	REQUIRE(th_admin(&h, &c, NULL) == 0);
	struct nvme_sqe s = { .opc = NVME_ADM_CREATE_SQ, .prp1 = q.sq_iova, .cdw10 = 15u << 16 | 1,
			      .cdw11 = 1u << 16 | 1 };
	REQUIRE(th_admin(&h, &s, NULL) == 0);
	uint16_t cid[8];
	for (int i = 0; i < 8; i++) {
		struct nvme_sqe fl = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
		cid[i] = th_place(&q, &fl, false);
	}
	th_ring_sq(&h, &q); /* the first completes; 7 wait behind the full CQ */
	uint16_t abort_cid[5];
	for (int i = 0; i < 5; i++) {
		struct nvme_sqe ab = { .opc = NVME_ADM_ABORT, .cdw10 = (uint32_t)cid[i + 1] << 16 | 1 };
		abort_cid[i] = th_place(&h.admin, &ab, false);
	}
	th_ring_sq(&h, &h.admin);
	/* the fifth Abort exceeds the limit; the other four wait for their targets */
	struct nvme_cqe e;
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	CHECK_EQ(e.cid, abort_cid[4]);
	CHECK_EQ(th_status(&e), ST(NVME_SCT_CMD, NVME_SC_ABORT_LIMIT));
	CHECK(!th_poll(&h, &h.admin, &e, 20, true));
	/* consume the I/O completions: each target is fetched and aborted, then its Abort
	 * completes */
	int aborted = 0, done = 0;
	for (int i = 0; i < 8; i++) {
		REQUIRE(th_poll(&h, &q, &e, 2000, true));
		CHECK_EQ(e.cid, cid[i]);
		if (th_status(&e) == ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED))
			aborted++;
		else if (th_status(&e) == 0)
			done++;
	}
	CHECK_EQ(aborted, 4);
	CHECK_EQ(done, 4);
	for (int i = 0; i < 4; i++) {
		REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
		CHECK_EQ(e.cid, abort_cid[i]);
		CHECK_EQ(th_status(&e), 0);
		CHECK_EQ(e.dw0 & 1, 0);
	}
	th_close(&h);
}

TEST_MAIN(TEST(test_identify_controller), TEST(test_identify_namespaces), TEST(test_log_pages),
	  TEST(test_smart_counters), TEST(test_error_log_ring), TEST(test_features), TEST(test_format),
	  TEST(test_fault_media_and_fatal), TEST(test_fault_drop_abort_delete), TEST(test_abort_limit))
