/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands for files and block devices without passthrough (see uring_ident.h).
 */
#include <stdio.h>
#include <string.h>

#include "uring_ident.h"

/* Fields of Identify are ASCII padded with spaces, not NUL terminated. */
static void put_ascii(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);
	for (size_t i = 0; i < n; i++)
		dst[i] = i < l ? src[i] : ' ';
}

void uring_ident_serial(struct uring_ident *id, const char *prefix, const char *key)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	snprintf(id->serial, sizeof(id->serial), "%.4s%016llx", prefix, (unsigned long long)h);
}

static void fill_ctrl(const struct uring_ident *id, struct nvme_id_ctrl *c)
{
	memset(c, 0, sizeof(*c));
	put_ascii(c->sn, sizeof(c->sn), id->serial);
	put_ascii(c->mn, sizeof(c->mn), id->model);
	put_ascii(c->fr, sizeof(c->fr), id->firmware);
	c->mdts = id->mdts;
	c->ver = 0x00010400; /* the 1.4 fields we fill */
	c->cntrltype = 1;    /* I/O controller */
	c->sqes = 0x66;
	c->cqes = 0x44;
	c->nn = id->nsid;
	c->oncs = id->oncs;
	c->vwc = id->write_cache ? 1 : 0;
}

static void fill_ns(const struct uring_ident *id, struct nvme_id_ns *ns)
{
	memset(ns, 0, sizeof(*ns));
	ns->nsze = ns->ncap = ns->nuse = id->nlbas;
	ns->nlbaf = 0;
	ns->flbas = 0;
	unsigned shift = 0;
	while ((1u << shift) < id->lba_size)
		shift++;
	ns->lbaf[0].lbads = (uint8_t)shift;
	/* files read back zeroes where they were punched (Deallocate, Write Zeroes) */
	ns->dlfeat = NVME_NS_DLFEAT_READ_ZEROES;
}

static int status(int sct, int sc)
{
	return NVME_STATUS(sct, sc);
}

static int identify(const struct uring_ident *id, const struct nvme_sqe *cmd, uint8_t *out,
		    size_t len)
{
	uint8_t buf[4096];
	memset(buf, 0, sizeof(buf));
	uint8_t cns = (uint8_t)(cmd->cdw10 & 0xff);
	uint8_t csi = (uint8_t)(cmd->cdw11 >> 24);
	switch (cns) {
	case NVME_CNS_NS:
		if (cmd->nsid == 0 || (cmd->nsid > id->nsid && cmd->nsid != 0xffffffffu))
			return status(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		if (cmd->nsid == id->nsid)
			fill_ns(id, (struct nvme_id_ns *)buf);
		break; /* an inactive NSID: zeroes */
	case NVME_CNS_CTRL:
		fill_ctrl(id, (struct nvme_id_ctrl *)buf);
		break;
	case NVME_CNS_ACTIVE_NS_LIST:
	case NVME_CNS_CSI_ACTIVE_NS_LIST:
		if (cns == NVME_CNS_CSI_ACTIVE_NS_LIST && csi != NVME_CSI_NVM)
			break;
		if (cmd->nsid < id->nsid)
			memcpy(buf, &id->nsid, sizeof(id->nsid));
		break;
	case NVME_CNS_NS_DESC_LIST: {
		if (cmd->nsid != id->nsid)
			return status(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
		struct nvme_ns_id_desc *d = (struct nvme_ns_id_desc *)buf;
		d->nidt = NVME_NIDT_CSI;
		d->nidl = 1;
		buf[sizeof(*d)] = NVME_CSI_NVM;
		break;
	}
	default:
		return status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	memset(out, 0, len);
	memcpy(out, buf, len < sizeof(buf) ? len : sizeof(buf));
	return 0;
}

int uring_ident_admin(const struct uring_ident *id, const struct nvme_sqe *cmd, void *buf,
		      size_t len, struct nvme_cqe *cpl)
{
	memset(cpl, 0, sizeof(*cpl));
	int st;
	switch (cmd->opc) {
	case NVME_ADM_IDENTIFY:
		st = buf ? identify(id, cmd, buf, len) : status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		break;
	case NVME_ADM_GET_FEATURES:
		st = 0;
		switch (cmd->cdw10 & 0xff) {
		case NVME_FEAT_VOLATILE_WC:
			cpl->dw0 = id->write_cache ? 1 : 0;
			break;
		case NVME_FEAT_NUM_QUEUES:
			cpl->dw0 = ((id->nr_queues - 1) << 16) | (id->nr_queues - 1);
			break;
		default:
			st = status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		}
		break;
	case NVME_ADM_SET_FEATURES:
		st = status(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_CHANGEABLE);
		break;
	case NVME_ADM_GET_LOG_PAGE:
		/* nothing keeps error, health or firmware history for a file */
		st = status(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
		break;
	default:
		st = status(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
	}
	cpl->status = NVME_CQE_STATUS(NVME_STATUS_SCT(st), NVME_STATUS_SC(st));
	return st;
}
