/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Get Log Page (NVMe Base 2.0, 5.16). CDW10: LID (7:0), LSP (14:8), RAE (15), NUMDL (31:16);
 * CDW11: NUMDU (15:0); CDW12/13: Log Page Offset in bytes (dword aligned); CDW14: CSI (31:24),
 * OT (23). The transfer is (NUMD + 1) dwords; bytes past the end of the log read as zero.
 * An offset at or past the end of the log is Invalid Field; an unknown LID is Invalid Log
 * Page. Log pages are a table: a vendor log (C0h..FFh) is one more row.
 */
#include <string.h>

#include "emu_ctrl.h"

#define LOG_MAX_SIZE 4096u
#define NSID_ALL 0xffffffffu

struct log_page {
	uint8_t  lid;
	uint32_t size;
	bool     kv;      /* a vendor KV log: exists only on a controller with a KV namespace */
	/* 0 or a status (the NSID / CSI do not apply); fills out[size] */
	uint16_t (*build)(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out);
	bool     zns;     /* exists only on a controller with a zoned namespace */
};

static uint16_t build_error(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	(void)cmd;
	emu_errlog_snapshot(c, (struct nvme_error_log *)out, NULL);
	return 0;
}

static uint16_t build_smart(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	/* controller-wide only (Identify LPA bit 0 = 0): a single NSID is Invalid Field */
	if (cmd->nsid != 0 && cmd->nsid != NSID_ALL)
		return EMU_ST_INVALID_FIELD;
	emu_smart_build(c, (struct nvme_smart_log *)out);
	return 0;
}

static uint16_t build_fw_slot(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	(void)cmd;
	struct nvme_fw_slot_log *log = (struct nvme_fw_slot_log *)out;
	log->afi = (uint8_t)(c->fw.active | c->fw.next << 4);
	for (uint32_t slot = 1; slot <= EMU_FW_SLOTS; slot++)
		if (c->fw.rev[slot][0])
			emu_pad_ascii(log->frs[slot - 1], sizeof(log->frs[0]), c->fw.rev[slot]);
	return 0;
}

/* The first KV namespace, whose vendor logs the controller reports (any NSID). */
static struct emu_ns *first_kv_ns(const struct emu_ctrl *c)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		if (emu_ns_csi(c->ns[i]) == NVME_CSI_KV)
			return c->ns[i];
	return NULL;
}

/* The first namespace of command set csi, or NULL. */
static struct emu_ns *first_ns_of(const struct emu_ctrl *c, uint8_t csi)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		if (emu_ns_csi(c->ns[i]) == csi)
			return c->ns[i];
	return NULL;
}

/* The KV command set's I/O commands: the standard ones and the Samsung vendor opcodes. */
static void cmd_effects_kv(struct nvme_cmd_effects_log *log)
{
	static const uint8_t reads[] = { NVME_KV_FLUSH, NVME_KV_RETRIEVE, NVME_KV_LIST, NVME_KV_EXIST,
					 NVME_KVV_RETRIEVE, NVME_KVV_EXIST, NVME_KVV_ITER_REQ };
	static const uint8_t writes[] = { NVME_KV_STORE, NVME_KV_DELETE, NVME_KVV_STORE,
					  NVME_KVV_DELETE, NVME_KVV_ITER_READ };
	for (size_t i = 0; i < sizeof(reads); i++)
		log->iocs[reads[i]] = NVME_CMD_EFFECTS_CSUPP;
	/* writes change the namespace's content (LBCC: "logical block content" stands for it);
	 * an iterate read may delete the keys it returns */
	for (size_t i = 0; i < sizeof(writes); i++)
		log->iocs[writes[i]] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
}

static uint16_t build_cmd_effects(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	uint8_t csi = (uint8_t)(cmd->cdw14 >> 24);
	bool kv = csi == NVME_CSI_KV && first_kv_ns(c);
	bool zns = csi == NVME_CSI_ZNS && first_ns_of(c, NVME_CSI_ZNS);
	if (csi != NVME_CSI_NVM && !kv && !zns)
		return EMU_ST_INVALID_FIELD;
	struct nvme_cmd_effects_log *log = (struct nvme_cmd_effects_log *)out;
	for (unsigned opc = 0; opc < 256; opc++)
		if (emu_admin_opcode_supported((uint8_t)opc))
			log->acs[opc] = NVME_CMD_EFFECTS_CSUPP;
	/* Format changes the LBA format (namespace capability and inventory change) */
	log->acs[NVME_ADM_FORMAT_NVM] |= NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_NCC | NVME_CMD_EFFECTS_NIC;
	/* Firmware Commit with CA 3 changes the controller's capabilities (FR) */
	log->acs[NVME_ADM_FW_COMMIT] |= NVME_CMD_EFFECTS_CCC;
	if (kv) {
		cmd_effects_kv(log);
		return 0;
	}
	static const uint8_t io[] = { NVME_CMD_FLUSH, NVME_CMD_WRITE, NVME_CMD_READ, NVME_CMD_COMPARE,
				      NVME_CMD_WRITE_ZEROES, NVME_CMD_DSM, NVME_CMD_VERIFY };
	for (size_t i = 0; i < sizeof(io); i++)
		log->iocs[io[i]] = NVME_CMD_EFFECTS_CSUPP;
	log->iocs[NVME_CMD_WRITE] |= NVME_CMD_EFFECTS_LBCC;
	log->iocs[NVME_CMD_WRITE_ZEROES] |= NVME_CMD_EFFECTS_LBCC;
	log->iocs[NVME_CMD_DSM] |= NVME_CMD_EFFECTS_LBCC;
	if (zns) {
		log->iocs[NVME_CMD_ZONE_MGMT_SEND] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
		log->iocs[NVME_CMD_ZONE_MGMT_RECV] = NVME_CMD_EFFECTS_CSUPP;
		log->iocs[NVME_CMD_ZONE_APPEND] = NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
	}
	return 0;
}

static uint16_t build_kv(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	return emu_ns_kv_log(first_kv_ns(c), cmd->cdw10 & 0xffu, out, LOG_MAX_SIZE);
}

/*
 * Changed Zone List (ZNS 1.1 section 5.1.2.1): per namespace, so the NSID must name an active
 * one (a namespace without zones has an empty list); CSI must be ZNS. Reading it without
 * Retain Asynchronous Event empties the list.
 */
static uint16_t build_changed_zones(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	uint8_t csi = (uint8_t)(cmd->cdw14 >> 24);
	if (csi != NVME_CSI_ZNS)
		return EMU_ST_INVALID_FIELD;
	uint32_t nsid = cmd->nsid;
	if (nsid == 0 || nsid > EMU_MAX_NS || !c->ns[nsid - 1])
		return EMU_ST_INVALID_NS;
	bool rae = cmd->cdw10 & (1u << 15);
	return emu_ns_changed_zones(c->ns[nsid - 1], (struct nvme_changed_zone_log *)out, !rae);
}

/* Changed Namespace List: read without Retain Asynchronous Event, it empties. */
static uint16_t build_changed_ns(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *out)
{
	bool rae = cmd->cdw10 & (1u << 15);
	emu_aer_changed_ns_log(c, (struct nvme_changed_ns_log *)out, rae);
	return 0;
}

static const struct log_page pages[] = {
	{ NVME_LOG_ERROR, EMU_ERRLOG_ENTRIES * sizeof(struct nvme_error_log), false, build_error, false },
	{ NVME_LOG_SMART, sizeof(struct nvme_smart_log), false, build_smart, false },
	{ NVME_LOG_FW_SLOT, sizeof(struct nvme_fw_slot_log), false, build_fw_slot, false },
	{ NVME_LOG_CHANGED_NS, sizeof(struct nvme_changed_ns_log), false, build_changed_ns, false },
	{ NVME_LOG_CMD_EFFECTS, sizeof(struct nvme_cmd_effects_log), false, build_cmd_effects, false },
	{ NVME_KVV_LOG_CAPACITY, sizeof(struct nvme_kvv_log_capacity), true, build_kv, false },
	{ NVME_KVV_LOG_WAF, sizeof(struct nvme_kvv_log_waf), true, build_kv, false },
	{ NVME_KVV_LOG_ITER, NVME_KVV_MAX_ITERATORS * sizeof(struct nvme_kvv_iter_info), true,
	  build_kv, false },
	{ NVME_LOG_CHANGED_ZONES, sizeof(struct nvme_changed_zone_log), false, build_changed_zones,
	  true },
};

void emu_cmd_get_log_page(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint8_t lid = cmd->cdw10 & 0xffu;
	bool rae = cmd->cdw10 & (1u << 15);
	uint64_t numd = (cmd->cdw10 >> 16) | (uint64_t)(cmd->cdw11 & 0xffffu) << 16;
	uint64_t len = (numd + 1) * 4;
	uint64_t lpo = cmd->cdw12 | (uint64_t)cmd->cdw13 << 32;

	const struct log_page *pg = NULL;
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (pages[i].lid == lid)
			pg = &pages[i];
	if (!pg || (pg->kv && !first_kv_ns(c)) || (pg->zns && !first_ns_of(c, NVME_CSI_ZNS))) {
		emu_fail(r, EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE), EMU_PLOC_CDW10);
		return;
	}
	/* offsets are bytes, dword aligned; index offsets (OT) are not supported by these logs */
	if ((lpo & 3u) || lpo >= pg->size) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW12);
		return;
	}
	if (cmd->cdw14 & (1u << 23)) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW14);
		return;
	}
	if (len > EMU_MDTS_BYTES) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW10);
		return;
	}
	_Alignas(8) uint8_t buf[LOG_MAX_SIZE];
	memset(buf, 0, sizeof(buf));
	uint16_t st = pg->build(c, cmd, buf);
	if (st) {
		emu_fail(r, st, EMU_PLOC_NONE);
		return;
	}
	uint64_t avail = pg->size - lpo;
	r->status = emu_dma_to_host_padded(c, cmd, buf + lpo, (uint32_t)(avail < len ? avail : len),
					   (uint32_t)len);
	if (!r->status && !rae)
		emu_aer_log_read(c, lid);
}
