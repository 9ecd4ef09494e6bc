/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Identify (NVMe Base 2.0, 5.17). CDW10: CNS (7:0), CNTID (31:16); CDW11: CSI (31:24);
 * NSID per CNS. Every answer is one 4096-byte structure through PRP1/PRP2.
 *
 * NN (the largest valid NSID) is EMU_MAX_NS; the namespaces given in the URI are the active
 * ones (NSIDs 1..n) and the rest are valid but inactive: Identify Namespace returns zeroes for
 * them, I/O to them fails with Invalid Namespace or Format.
 */
#include <stdio.h>
#include <string.h>

#include "emu_ctrl.h"

#define ID_SIZE 4096u
#define ONCS_VERIFY (1u << 7)
#define NSID_ALL 0xffffffffu

void emu_pad_ascii(char *dst, size_t width, const char *src)
{
	size_t n = strlen(src);
	if (n > width)
		n = width;
	memcpy(dst, src, n);
	memset(dst + n, ' ', width - n);
}

static struct emu_ns *active_ns(const struct emu_ctrl *c, uint32_t nsid)
{
	return nsid >= 1 && nsid <= EMU_MAX_NS ? c->ns[nsid - 1] : NULL;
}

static bool has_csi(const struct emu_ctrl *c, uint8_t csi);

static void identify_ctrl(struct emu_ctrl *c, struct nvme_id_ctrl *id)
{
	id->vid = EMU_PCI_VID;
	id->ssvid = EMU_PCI_VID;
	emu_pad_ascii(id->sn, sizeof(id->sn), c->p.serial);
	emu_pad_ascii(id->mn, sizeof(id->mn), c->p.model);
	emu_pad_ascii(id->fr, sizeof(id->fr), emu_fw_active_rev(c));
	id->mdts = EMU_MDTS_LOG2;
	id->cntlid = EMU_CNTLID;
	id->ver = c->vs;
	id->cntrltype = 1; /* I/O controller */
	id->oacs = NVME_CTRL_OACS_FORMAT | NVME_CTRL_OACS_FW;
	id->acl = EMU_ACL;
	id->aerl = EMU_AERL;
	/* Namespace Attribute Changed notices (after a Format NVM to another LBA format) */
	id->oaes |= NVME_OAES_NS_ATTR;
	/* Zone Descriptor Changed notices, on a controller with zoned namespaces */
	if (has_csi(c, NVME_CSI_ZNS))
		id->oaes |= NVME_OAES_ZONE_CHANGED;
	/* slot 1 read-only, 3 slots, activation without reset (Commit Action 3) */
	id->frmw = NVME_CTRL_FRMW_SLOT1_RO | (EMU_FW_SLOTS << 1) | NVME_CTRL_FRMW_NO_RESET;
	id->lpa = NVME_CTRL_LPA_CMD_EFFECTS | NVME_CTRL_LPA_EXT_DATA;
	id->elpe = EMU_ERRLOG_ENTRIES - 1;
	id->npss = 0;
	id->wctemp = EMU_WCTEMP_KELVIN;
	id->cctemp = EMU_CCTEMP_KELVIN;
	id->fwug = EMU_FWUG_BYTES / 4096;
	uint64_t cap = 0;
	for (uint32_t i = 0; i < c->nr_ns; i++)
		cap += emu_ns_nlbas(c->ns[i]) * emu_ns_lba_size(c->ns[i]);
	memcpy(id->tnvmcap, &cap, sizeof(cap));
	id->sqes = (NVME_SQES_LOG2 << 4) | NVME_SQES_LOG2;
	id->cqes = (NVME_CQES_LOG2 << 4) | NVME_CQES_LOG2;
	id->nn = EMU_MAX_NS;
	/* Compare, Dataset Management, Write Zeroes, and Verify (ONCS bit 7) */
	id->oncs = NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WZ | ONCS_VERIFY;
	if (c->has_state)
		id->oncs |= NVME_CTRL_ONCS_FEAT_SAVE;
	/* volatile write cache present; bits 2:1 = 11b: Flush with NSID FFFFFFFFh supported */
	id->vwc = NVME_CTRL_VWC_PRESENT | (3u << 1);
	id->sgls = 0;
	/* NQN for a controller without a UUID (Base 2.0, 4.5): vendor ids, serial and model */
	char sn[21], mn[41];
	emu_pad_ascii(sn, 20, c->p.serial);
	sn[20] = '\0';
	emu_pad_ascii(mn, 40, c->p.model);
	mn[40] = '\0';
	snprintf(id->subnqn, sizeof(id->subnqn), "nqn.2014-08.org.nvmexpress:%04x%04x%s%s",
		 EMU_PCI_VID, EMU_PCI_VID, sn, mn);
	/* one power state: 25 W, no entry/exit latency */
	id->psd[0].mp = 2500;
}

/* Active NSIDs greater than from, optionally only those of one command set (CNS 02h/07h). */
static void ns_list(const struct emu_ctrl *c, uint32_t from, int csi, uint32_t *list)
{
	uint32_t n = 0;
	for (uint32_t nsid = from + 1; nsid <= EMU_MAX_NS && n < NVME_NS_LIST_MAX; nsid++) {
		const struct emu_ns *ns = active_ns(c, nsid);
		if (ns && (csi < 0 || emu_ns_csi(ns) == csi))
			list[n++] = nsid;
	}
}

/* Namespace Identification Descriptor list (CNS 03h). */
static void ns_descriptors(const struct emu_ns *ns, uint8_t *out)
{
	uint8_t nguid[16], eui64[8];
	emu_ns_ids(ns, nguid, eui64);
	size_t off = 0;
	struct nvme_ns_id_desc d = { .nidt = NVME_NIDT_EUI64, .nidl = 8 };
	memcpy(out + off, &d, sizeof(d));
	memcpy(out + off + sizeof(d), eui64, 8);
	off += sizeof(d) + 8;
	d = (struct nvme_ns_id_desc){ .nidt = NVME_NIDT_NGUID, .nidl = 16 };
	memcpy(out + off, &d, sizeof(d));
	memcpy(out + off + sizeof(d), nguid, 16);
	off += sizeof(d) + 16;
	d = (struct nvme_ns_id_desc){ .nidt = NVME_NIDT_CSI, .nidl = 1 };
	memcpy(out + off, &d, sizeof(d));
	out[off + sizeof(d)] = emu_ns_csi(ns);
}

/* Whether a namespace speaks the command set csi. */
static bool has_csi(const struct emu_ctrl *c, uint8_t csi)
{
	for (uint32_t i = 0; i < c->nr_ns; i++)
		if (emu_ns_csi(c->ns[i]) == csi)
			return true;
	return false;
}

static bool has_kv(const struct emu_ctrl *c)
{
	return has_csi(c, NVME_CSI_KV);
}

/* The command sets this controller implements: NVM always, KV and ZNS with such a namespace. */
static bool csi_supported(const struct emu_ctrl *c, uint8_t csi)
{
	return csi == NVME_CSI_NVM || ((csi == NVME_CSI_KV || csi == NVME_CSI_ZNS) && has_csi(c, csi));
}

/* I/O command set combinations (CNS 1Ch): one combination (index 0, the one Set Features
 * I/O Command Set Profile selects by default) with NVM and every other set a namespace uses. */
static void iocs_vectors(const struct emu_ctrl *c, uint8_t *out)
{
	uint64_t v = NVME_IOCS_VECTOR(NVME_CSI_NVM);
	if (has_kv(c))
		v |= NVME_IOCS_VECTOR(NVME_CSI_KV);
	if (has_csi(c, NVME_CSI_ZNS))
		v |= NVME_IOCS_VECTOR(NVME_CSI_ZNS);
	memcpy(out, &v, sizeof(v));
}

/* Fills buf for one CNS; returns 0 or a status, *ploc = the offending field. */
static uint16_t build(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint8_t *buf, uint16_t *ploc)
{
	uint8_t cns = cmd->cdw10 & 0xffu;
	uint8_t csi = (uint8_t)(cmd->cdw11 >> 24);
	uint32_t nsid = cmd->nsid;
	struct emu_ns *ns = active_ns(c, nsid);
	bool nsid_valid = nsid >= 1 && nsid <= EMU_MAX_NS;

	*ploc = EMU_PLOC_NSID;
	switch (cns) {
	case NVME_CNS_NS:
		if (!nsid_valid)
			return EMU_ST_INVALID_NS;
		if (ns)
			emu_ns_identify(ns, (struct nvme_id_ns *)buf);
		return 0; /* an inactive NSID reads as zeroes */
	case NVME_CNS_CTRL:
		identify_ctrl(c, (struct nvme_id_ctrl *)buf);
		return 0;
	case NVME_CNS_ACTIVE_NS_LIST:
		if (nsid >= 0xfffffffeu)
			return EMU_ST_INVALID_NS;
		ns_list(c, nsid, -1, (uint32_t *)buf);
		return 0;
	case NVME_CNS_NS_DESC_LIST:
		if (!ns)
			return EMU_ST_INVALID_NS;
		ns_descriptors(ns, buf);
		return 0;
	case NVME_CNS_CSI_NS:
		if (!nsid_valid)
			return EMU_ST_INVALID_NS;
		*ploc = EMU_PLOC_CDW11 + 3;
		if (ns)
			return emu_ns_identify_csi(ns, csi, buf);
		return csi_supported(c, csi) ? 0 : EMU_ST_INVALID_FIELD;
	case NVME_CNS_CSI_CTRL: {
		*ploc = EMU_PLOC_CDW11 + 3;
		if (csi == NVME_CSI_KV && has_kv(c))
			return 0; /* the KV set defines no controller fields: all reserved */
		if (csi == NVME_CSI_ZNS && has_csi(c, NVME_CSI_ZNS)) {
			emu_zns_identify_ctrl(c->p.zasl_bytes, (struct nvme_id_ctrl_zns *)buf);
			return 0;
		}
		if (csi != NVME_CSI_NVM)
			return EMU_ST_INVALID_FIELD;
		/* DMRL is 8 bits: 0 = no limit beyond the command's own 256 ranges, which is what
		 * the controller accepts. DMRSL: any range length. VSL, WZSL and DMSL 0: no
		 * limits beyond MDTS and the namespace. */
		struct nvme_id_ctrl_nvm *nvm = (struct nvme_id_ctrl_nvm *)buf;
		nvm->dmrl = 0;
		nvm->dmrsl = 0xffffffffu;
		return 0;
	}
	case NVME_CNS_CSI_ACTIVE_NS_LIST:
		if (nsid >= 0xfffffffeu)
			return EMU_ST_INVALID_NS;
		*ploc = EMU_PLOC_CDW11 + 3;
		if (!csi_supported(c, csi))
			return EMU_ST_INVALID_FIELD;
		ns_list(c, nsid, csi, (uint32_t *)buf);
		return 0;
	case NVME_CNS_IOCS:
		iocs_vectors(c, buf);
		return 0;
	case NVME_CNS_NS_CTRL_LIST:
	case NVME_CNS_CTRL_LIST: {
		/* Controller Lists (NVMe 2.0 section 5.17.2.x): one controller in the subsystem,
		 * attached to every active namespace; entries from CNTID (CDW10 31:16) up */
		if (cns == NVME_CNS_NS_CTRL_LIST && !ns)
			return EMU_ST_INVALID_NS;
		uint16_t list[2] = { 0, 0 };
		if (EMU_CNTLID >= (uint16_t)(cmd->cdw10 >> 16)) {
			list[0] = 1;
			list[1] = EMU_CNTLID;
		}
		memcpy(buf, list, sizeof(list));
		return 0;
	}
	default:
		*ploc = EMU_PLOC_CDW10;
		return EMU_ST_INVALID_FIELD;
	}
}

void emu_cmd_identify(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	_Alignas(8) uint8_t buf[ID_SIZE];
	memset(buf, 0, sizeof(buf));
	uint16_t ploc;
	uint16_t st = build(c, cmd, buf, &ploc);
	if (st) {
		emu_fail(r, st, ploc);
		return;
	}
	r->status = emu_dma_to_host(c, cmd, buf, ID_SIZE);
}
