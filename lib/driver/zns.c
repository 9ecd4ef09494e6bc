/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zoned namespaces (NVMe ZNS Command Set 1.1): the zone geometry from the ZNS Identify
 * structures, Zone Management Send / Receive and Zone Append. As with block I/O the driver
 * does not judge zone rules itself: the device's statuses are what the caller sees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "errmsg.h"

int zns_ns_fill(struct unvme_ctrlr *c, struct unvme_ns *ns)
{
	struct nvme_id_ns_zns *id = malloc(sizeof(*id));
	struct nvme_id_ctrl_zns *idc = malloc(sizeof(*idc));
	int rc = -ENOMEM;
	if (!id || !idc)
		goto out;
	rc = unvme_identify(c, NVME_CNS_CSI_NS, ns->nsid, NVME_CSI_ZNS, id);
	if (rc)
		goto out;
	rc = unvme_identify(c, NVME_CNS_CSI_CTRL, 0, NVME_CSI_ZNS, idc);
	if (rc)
		goto out;
	struct unvme_zns_info *z = &ns->zns;
	z->zone_size = id->lbafe[nvme_ns_flbas_index(&ns->id)].zsze;
	z->nr_zones = z->zone_size ? ns->nlbas / z->zone_size : 0;
	z->max_open = id->mor == NVME_ZNS_NO_LIMIT ? 0 : id->mor + 1;
	z->max_active = id->mar == NVME_ZNS_NO_LIMIT ? 0 : id->mar + 1;
	/* ZASL is in units of the minimum memory page size, like MDTS */
	uint64_t mpsmin = 4096ull << NVME_CAP_MPSMIN(c->cap);
	uint64_t zasl = idc->zasl ? nvme_pow2_pages(mpsmin, idc->zasl) : c->max_xfer;
	z->zasl_bytes = (uint32_t)(zasl < c->max_xfer ? zasl : c->max_xfer);
	if (!z->zone_size)
		rc = unvme_fail(-EIO, "%s: zoned namespace %u reports a zone size of 0", c->devid, ns->nsid);
out:
	free(id);
	free(idc);
	if (rc > 0)
		rc = unvme_fail(-EIO, "%s: ZNS Identify of namespace %u failed: %s", c->devid, ns->nsid,
				unvme_status_str(rc, 0));
	return rc;
}

static int check_zoned(const struct unvme_ns *ns, const struct unvme_qpair *qp)
{
	if (!ns || !qp)
		return unvme_fail(-EINVAL, "namespace and queue pair are required");
	if (ns->ctrlr != qp->ctrlr)
		return unvme_fail(-EINVAL, "queue pair %u belongs to another controller", qp->qid);
	if (ns->csi != NVME_CSI_ZNS)
		return unvme_fail(-EINVAL, "namespace %u is not zoned (command set %u)", ns->nsid, ns->csi);
	return 0;
}

UNVME_API int unvme_zns_info(const struct unvme_ns *ns, struct unvme_zns_info *out)
{
	if (!ns || !out)
		return unvme_fail(-EINVAL, "namespace and output are required");
	if (ns->csi != NVME_CSI_ZNS)
		return unvme_fail(-EINVAL, "namespace %u is not zoned (command set %u)", ns->nsid, ns->csi);
	*out = ns->zns;
	return 0;
}

UNVME_API const char *unvme_zone_state_str(uint8_t state)
{
	switch (state) {
	case NVME_ZS_EMPTY: return "empty";
	case NVME_ZS_IMP_OPEN: return "implicitly-open";
	case NVME_ZS_EXP_OPEN: return "explicitly-open";
	case NVME_ZS_CLOSED: return "closed";
	case NVME_ZS_READ_ONLY: return "read-only";
	case NVME_ZS_FULL: return "full";
	case NVME_ZS_OFFLINE: return "offline";
	default: return "unknown";
	}
}

static void lba_cmd(struct nvme_sqe *cmd, uint8_t opc, const struct unvme_ns *ns, uint64_t slba)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->nsid = ns->nsid;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
}

UNVME_API int unvme_zone_mgmt_recv(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf,
				   uint32_t len, uint64_t slba, uint8_t opt, bool partial,
				   unvme_cmd_cb cb, void *arg)
{
	int rc = check_zoned(ns, qp);
	if (rc)
		return rc;
	if (!buf || len < sizeof(struct nvme_zone_report_hdr) || len % 4)
		return unvme_fail(-EINVAL, "report buffer of %u bytes: needs a multiple of 4, at least 64", len);
	struct nvme_sqe cmd;
	lba_cmd(&cmd, NVME_CMD_ZONE_MGMT_RECV, ns, slba);
	cmd.cdw12 = len / 4 - 1;
	cmd.cdw13 = NVME_ZRA_REPORT_ZONES | (uint32_t)opt << 8 | (partial ? NVME_ZRA_PARTIAL : 0);
	return unvme_qpair_submit(qp, &cmd, buf, len, cb, arg);
}

UNVME_API int unvme_zone_report(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				uint8_t opt, struct unvme_zone *zones, uint32_t *nr, uint64_t *total)
{
	int rc = check_zoned(ns, qp);
	if (rc)
		return rc;
	if (!nr || (*nr && !zones))
		return unvme_fail(-EINVAL, "zone array and count are required");
	uint32_t want = *nr;
	*nr = 0;
	if (total)
		*total = 0;
	/* One command per transfer-limit's worth of descriptors; the first one also counts
	 * every matching zone (without Partial Report) when the caller asks for the total. */
	size_t per = (unvme_ctrlr_max_xfer(ns->ctrlr) - sizeof(struct nvme_zone_report_hdr)) /
		     sizeof(struct nvme_zone_desc);
	if (per == 0)
		return unvme_fail(-EIO, "%s: transfer limit too small for a zone report", ns->ctrlr->devid);
	size_t chunk = want < per ? want : per;
	size_t len = sizeof(struct nvme_zone_report_hdr) + chunk * sizeof(struct nvme_zone_desc);
	uint8_t *buf = unvme_dma_alloc(len, 4096);
	if (!buf)
		return unvme_fail(-ENOMEM, "no DMA memory for a zone report");
	bool first = true;
	uint64_t next = slba;
	while (first || *nr < want) {
		struct nvme_sqe cmd;
		lba_cmd(&cmd, NVME_CMD_ZONE_MGMT_RECV, ns, next);
		size_t room = want - *nr < chunk ? want - *nr : chunk;
		uint32_t xfer = (uint32_t)(sizeof(struct nvme_zone_report_hdr) + room * sizeof(struct nvme_zone_desc));
		cmd.cdw12 = xfer / 4 - 1;
		/* the first command answers the total; later ones only need what fits */
		bool partial = !(first && total);
		cmd.cdw13 = NVME_ZRA_REPORT_ZONES | (uint32_t)opt << 8 | (partial ? NVME_ZRA_PARTIAL : 0);
		rc = unvme_qpair_cmd_sync(qp, &cmd, buf, xfer, NULL);
		if (rc)
			break;
		struct nvme_zone_report_hdr h;
		memcpy(&h, buf, sizeof(h));
		uint64_t got = partial ? h.nr_zones : (h.nr_zones < room ? h.nr_zones : room);
		if (first && total)
			*total = h.nr_zones;
		first = false;
		if (got > room)
			got = room;
		const struct nvme_zone_desc *d = (const void *)(buf + sizeof(h));
		for (uint64_t i = 0; i < got; i++) {
			struct unvme_zone *z = &zones[(*nr)++];
			z->zslba = d[i].zslba;
			z->zcap = d[i].zcap;
			z->wp = d[i].wp;
			z->state = nvme_zone_desc_state(&d[i]);
			z->type = d[i].zt & 0xfu;
			z->attrs = d[i].za;
		}
		if (got < room || got == 0)
			break; /* no more matching zones */
		next = d[got - 1].zslba + ns->zns.zone_size;
		if (next >= ns->nlbas)
			break;
	}
	unvme_dma_free(buf);
	return rc;
}

/* Zone Management Send: with Select All the SLBA is ignored by the device (sent as 0). */
static int send_cmd(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t zslba, uint8_t zsa,
		    bool all, struct nvme_sqe *cmd)
{
	int rc = check_zoned(ns, qp);
	if (rc)
		return rc;
	lba_cmd(cmd, NVME_CMD_ZONE_MGMT_SEND, ns, all ? 0 : zslba);
	cmd->cdw13 = zsa | (all ? NVME_ZSA_SELECT_ALL : 0);
	return 0;
}

UNVME_API int unvme_zone_mgmt_send(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t zslba,
				   uint8_t zsa, bool all, unvme_cmd_cb cb, void *arg)
{
	struct nvme_sqe cmd;
	int rc = send_cmd(ns, qp, zslba, zsa, all, &cmd);
	return rc ? rc : unvme_qpair_submit(qp, &cmd, NULL, 0, cb, arg);
}

UNVME_API int unvme_zone_mgmt_send_sync(struct unvme_ns *ns, struct unvme_qpair *qp,
					uint64_t zslba, uint8_t zsa, bool all)
{
	struct nvme_sqe cmd;
	int rc = send_cmd(ns, qp, zslba, zsa, all, &cmd);
	return rc ? rc : unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL);
}

static int append_cmd(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf, uint64_t zslba,
		      uint32_t nlb, bool fua, struct nvme_sqe *cmd)
{
	int rc = check_zoned(ns, qp);
	if (rc)
		return rc;
	if (!buf)
		return unvme_fail(-EINVAL, "data buffer is required");
	if (nlb == 0 || nlb > 65536)
		return unvme_fail(-EINVAL, "block count %u is outside 1..65536", nlb);
	lba_cmd(cmd, NVME_CMD_ZONE_APPEND, ns, zslba);
	cmd->cdw12 = (nlb - 1) | (fua ? NVME_RW_FUA : 0);
	return 0;
}

UNVME_API int unvme_zone_append(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				uint64_t zslba, uint32_t nlb, bool fua, unvme_cmd_cb cb, void *arg)
{
	struct nvme_sqe cmd;
	int rc = append_cmd(ns, qp, buf, zslba, nlb, fua, &cmd);
	if (rc)
		return rc;
	return unvme_qpair_submit(qp, &cmd, (void *)buf, (size_t)nlb << ns->lba_shift, cb, arg);
}

UNVME_API int unvme_zone_append_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				     uint64_t zslba, uint32_t nlb, uint64_t *lba)
{
	struct nvme_sqe cmd;
	int rc = append_cmd(ns, qp, buf, zslba, nlb, false, &cmd);
	if (rc)
		return rc;
	struct nvme_cqe cpl;
	rc = unvme_qpair_cmd_sync(qp, &cmd, (void *)buf, (size_t)nlb << ns->lba_shift, &cpl);
	if (rc == 0 && lba)
		*lba = unvme_cpl_lba(&cpl);
	return rc;
}
