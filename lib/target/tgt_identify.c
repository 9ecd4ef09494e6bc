/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Identify at the target. The controller data is the target controller's own (fabrics
 * fields, its controller id, the subsystem's NQN, limits the backing devices allow); the
 * namespace data comes from the backing device, with the namespace's unique id (NGUID)
 * replaced by one derived from the subsystem and nsid: one device exported by two subsystems
 * must not show the same id twice, which Linux refuses.
 */
#include <stdio.h>
#include <string.h>

#include "lib/util/crc.h"
#include "unvme/spec/rdma.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

#define TGT_FW "unvme01"

void tgt_nguid(const char *subnqn, uint32_t nsid, uint8_t out[16])
{
	for (int i = 0; i < 4; i++) {
		uint32_t h = crc32c((uint32_t)(i + 1) * 0x9e3779b9u, subnqn, strlen(subnqn));
		h = crc32c(h, &nsid, sizeof(nsid));
		memcpy(out + 4 * i, &h, 4);
	}
}

static const struct tgt_ns *find_ns(const struct tgt_subsys *ss, uint32_t nsid)
{
	for (int i = 0; i < ss->nns; i++)
		if (ss->ns[i].nsid == nsid)
			return &ss->ns[i];
	return NULL;
}

static const struct tgt_ns *first_of_csi(const struct tgt_subsys *ss, uint8_t csi)
{
	for (int i = 0; i < ss->nns; i++)
		if (ss->ns[i].csi == csi)
			return &ss->ns[i];
	return NULL;
}

/* Space padded, not terminated (Identify strings). */
static void pad(char *dst, size_t n, const char *src)
{
	memset(dst, ' ', n);
	size_t l = strlen(src);
	memcpy(dst, src, l < n ? l : n);
}

static void identify_ctrl(struct tgt_conn *c, struct nvme_id_ctrl *id)
{
	const struct tgt_subsys *ss = c->ss;
	const struct tgt_ctrl *ctrl = c->ctrl;
	id->vid = 0x1d1d;
	id->ssvid = 0x1d1d;
	char sn[21];
	if (ss->cfg && ss->cfg->serial[0])
		snprintf(sn, sizeof(sn), "%s", ss->cfg->serial);
	else
		snprintf(sn, sizeof(sn), "%08x", crc32c(0, ss->nqn, strlen(ss->nqn)));
	pad(id->sn, sizeof(id->sn), sn);
	pad(id->mn, sizeof(id->mn), ss->cfg && ss->cfg->model[0] ? ss->cfg->model : "uNVMe NVMe/TCP target");
	pad(id->fr, sizeof(id->fr), TGT_FW);
	id->rab = 6;
	id->cmic = 1u << 1; /* the subsystem may have several controllers (one per host) */
	uint32_t mdts = 0;
	while ((4096ull << (mdts + 1)) <= ss->mdts_bytes && mdts < 15)
		mdts++;
	id->mdts = ss->discovery ? 0 : (uint8_t)mdts;
	id->cntlid = ctrl->cntlid;
	id->ver = NVME_VS(2, 0, 0);
	id->cntrltype = ss->discovery ? NVME_CTRL_TYPE_DISCOVERY : NVME_CTRL_TYPE_IO;
	id->acl = 3;
	id->aerl = TGT_AERL;
	id->frmw = 1u << 1 | 1u; /* one slot, read only */
	id->lpa = 1u << 2;       /* log page offsets */
	id->kas = 10;            /* keep alive granularity: 1 s */
	id->sqes = (NVME_SQES_LOG2 << 4) | NVME_SQES_LOG2;
	id->cqes = (NVME_CQES_LOG2 << 4) | NVME_CQES_LOG2;
	id->maxcmd = (uint16_t)(ss->discovery ? TGT_ADMIN_SLOTS : c->t->cfg->lim.queue_depth);
	id->nn = ss->max_nsid;
	id->oncs = ss->oncs;
	id->vwc = ss->vwc & 1u;
	id->sgls = NVME_CTRL_SGLS_SUPPORTED | NVME_CTRL_SGLS_OFFSET;
	if (c->rdma) /* NVMe/RDMA moves data by keyed SGLs (a host requires the bit) */
		id->sgls |= NVME_CTRL_SGLS_KEYED;
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", ss->nqn);
	struct nvmf_id_ctrl_fabrics *f = (void *)id->nvmeof;
	f->ioccsz = (64 + TGT_ICD) / 16;
	f->iorcsz = 1;
	f->icdoff = 0;
	f->fcatt = 0;  /* dynamic controller model */
	f->msdbd = 1;
	f->ofcs = 1;   /* Disconnect */
	id->psd[0].mp = 1000;
}

/* Namespace data from the device, with our NGUID. */
static int identify_ns(struct tgt_conn *c, const struct tgt_ns *ns, uint8_t cns, uint8_t csi, void *buf)
{
	struct unvme_ctrlr *b = c->ss->backs[ns->back]->ctrlr;
	int st = unvme_identify(b, cns, ns->bnsid, csi, buf);
	if (st < 0) {
		tgt_log(c->t, "host %s: Identify of namespace %u on backing device %s failed: %s", c->peer,
			ns->nsid, c->ss->backs[ns->back]->devid, unvme_errmsg());
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
	}
	if (st)
		return st;
	if (cns == NVME_CNS_NS) {
		struct nvme_id_ns *id = buf;
		memcpy(id->nguid, ns->nguid, 16);
		memset(id->eui64, 0, sizeof(id->eui64));
	} else if (cns == NVME_CNS_CSI_NS && csi == NVME_CSI_KV) {
		memcpy((uint8_t *)buf + 48, ns->nguid, 16);
		memset((uint8_t *)buf + 64, 0, 8);
	}
	return 0;
}

/* Namespace Identification Descriptors: NGUID and the command set. */
static void ns_descs(const struct tgt_ns *ns, uint8_t *d)
{
	d[0] = 0x02; /* NGUID */
	d[1] = 16;
	memcpy(d + 4, ns->nguid, 16);
	d += 20;
	d[0] = 0x04; /* CSI */
	d[1] = 1;
	d[4] = ns->csi;
}

static void ns_list(const struct tgt_subsys *ss, uint32_t after, int csi, uint32_t *list)
{
	size_t n = 0;
	for (uint32_t id = after + 1; id <= ss->max_nsid && n < 1024; id++) {
		const struct tgt_ns *ns = find_ns(ss, id);
		if (ns && (csi < 0 || ns->csi == csi))
			list[n++] = id;
	}
}

int tgt_identify(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	const struct tgt_subsys *ss = c->ss;
	uint8_t cns = (uint8_t)cmd->sqe.cdw10;
	uint8_t csi = (uint8_t)(cmd->sqe.cdw11 >> 24);
	uint32_t nsid = cmd->sqe.nsid;
	if (cmd->len != 4096 || !cmd->buf) /* checked at capsule time (tgt_xfer.c) */
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
	uint8_t *buf = cmd->buf;
	memset(buf, 0, cmd->len);
	cmd->send_len = 4096;
	if (ss->discovery && cns != NVME_CNS_CTRL)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	const struct tgt_ns *ns = find_ns(ss, nsid);
	bool nsid_ok = nsid >= 1 && nsid <= ss->max_nsid;
	switch (cns) {
	case NVME_CNS_CTRL:
		identify_ctrl(c, (void *)buf);
		return 0;
	case NVME_CNS_NS:
		if (!nsid_ok)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		return ns ? identify_ns(c, ns, NVME_CNS_NS, 0, buf) : 0; /* inactive: zeros */
	case NVME_CNS_ACTIVE_NS_LIST:
		if (nsid >= 0xfffffffeu)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		ns_list(ss, nsid, -1, (uint32_t *)buf);
		return 0;
	case NVME_CNS_NS_DESC_LIST:
		if (!ns)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		ns_descs(ns, buf);
		return 0;
	case NVME_CNS_CSI_NS:
		if (!ns)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		if (csi != ns->csi)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return identify_ns(c, ns, NVME_CNS_CSI_NS, csi, buf);
	case NVME_CNS_CSI_CTRL:
		/* NVM: no limits of its own beyond MDTS (zeros); KV and ZNS: the data of the device
		 * of the first such namespace (ZASL: the hosts take the smaller of it and MDTS) */
		if (csi == NVME_CSI_NVM)
			return 0;
		const struct tgt_ns *first = first_of_csi(ss, csi);
		if ((csi == NVME_CSI_KV || csi == NVME_CSI_ZNS) && first) {
			int st = unvme_identify(ss->backs[first->back]->ctrlr, cns, 0, csi, buf);
			return st < 0 ? NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) : st;
		}
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	case NVME_CNS_CSI_ACTIVE_NS_LIST:
		if (nsid >= 0xfffffffeu)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		ns_list(ss, nsid, csi, (uint32_t *)buf);
		return 0;
	case 0x08: /* I/O command set independent Identify Namespace */
		if (!nsid_ok)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		if (ns)
			buf[20] = 1; /* NSTAT: ready */
		return 0;
	case NVME_CNS_IOCS: {
		/* vector 0: NVM, plus KV and ZNS when such namespaces are exported */
		uint64_t v = 1u | (first_of_csi(ss, NVME_CSI_KV) ? 2u : 0u) |
			     (first_of_csi(ss, NVME_CSI_ZNS) ? 4u : 0u);
		memcpy(buf, &v, sizeof(v));
		return 0;
	}
	default:
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
}
