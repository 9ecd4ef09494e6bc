/* SPDX-License-Identifier: BSD-3-Clause */
/* NVMe/RDMA command and response capsules (capsule.h). */
#include <string.h>

#include "unvme/spec/fabrics.h"
#include "unvme/spec/status.h"
#include "capsule.h"

void nvrdma_sgl_keyed(struct nvme_sqe *sqe, uint64_t addr, uint32_t len, uint32_t rkey)
{
	struct nvme_sgl_keyed k = {
		.addr = addr,
		.len = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16) },
		.key = { (uint8_t)rkey, (uint8_t)(rkey >> 8), (uint8_t)(rkey >> 16), (uint8_t)(rkey >> 24) },
		.type = NVME_SGL_KEYED,
	};
	sqe->flags = (uint8_t)((sqe->flags & ~0xc0u) | NVME_CMD_FLAGS_PSDT_SGL);
	memcpy(&sqe->prp1, &k, sizeof(k));
}

void nvrdma_sgl_incapsule(struct nvme_sqe *sqe, uint32_t len)
{
	struct nvme_sgl_desc d = { .addr = 0, .len = len, .type = NVME_SGL_INCAPSULE };
	sqe->flags = (uint8_t)((sqe->flags & ~0xc0u) | NVME_CMD_FLAGS_PSDT_SGL);
	memcpy(&sqe->prp1, &d, sizeof(d));
}

void nvrdma_sgl_none(struct nvme_sqe *sqe)
{
	nvrdma_sgl_keyed(sqe, 0, 0, 0);
}

#define REFUSE(sc, text)                                                      \
	do {                                                                  \
		*status = NVME_CQE_STATUS(NVME_SCT_GENERIC, sc);              \
		*why = text;                                                  \
		return NVRDMA_REFUSE;                                         \
	} while (0)

enum nvrdma_verdict nvrdma_capsule_parse(const void *buf, uint32_t len,
					 const struct nvrdma_capsule_rules *r,
					 struct nvrdma_capsule *out, uint16_t *status,
					 const char **why)
{
	const uint8_t *p = buf;
	memset(out, 0, sizeof(*out));
	*status = 0;
	*why = NULL;
	if (!p || len < sizeof(struct nvme_sqe)) {
		*why = "a capsule shorter than a command";
		return NVRDMA_FATAL;
	}
	memcpy(&out->sqe, p, sizeof(out->sqe));
	uint32_t icd_got = len - (uint32_t)sizeof(struct nvme_sqe);
	/* every fabrics capsule uses SGLs (PSDT 01b; 10b would put metadata in an SGL too,
	 * which this transport does not carry) */
	if ((out->sqe.flags & 0xc0u) != NVME_CMD_FLAGS_PSDT_SGL)
		REFUSE(NVME_SC_INVALID_FIELD, "PSDT is not SGL");
	uint8_t sgl[16];
	memcpy(sgl, p + offsetof(struct nvme_sqe, prp1), sizeof(sgl));
	uint8_t type = sgl[15];
	if (type == NVME_SGL_KEYED || type == NVME_SGL_KEYED_INVALIDATE) {
		struct nvme_sgl_keyed k;
		memcpy(&k, sgl, sizeof(k));
		uint32_t klen = (uint32_t)k.len[0] | (uint32_t)k.len[1] << 8 | (uint32_t)k.len[2] << 16;
		if (klen > r->max_data)
			REFUSE(NVME_SC_DATA_SGL_LEN_INVALID, "keyed SGL longer than the transfer limit");
		/* in-capsule bytes beside a keyed SGL are not data (Figure 9): ignored */
		out->kind = klen ? NVRDMA_DATA_KEYED : NVRDMA_DATA_NONE;
		out->len = klen;
		out->addr = k.addr;
		out->rkey = (uint32_t)k.key[0] | (uint32_t)k.key[1] << 8 | (uint32_t)k.key[2] << 16 |
			    (uint32_t)k.key[3] << 24;
		out->invalidate = type == NVME_SGL_KEYED_INVALIDATE;
		return NVRDMA_OK;
	}
	if (type == NVME_SGL_INCAPSULE) {
		struct nvme_sgl_desc d;
		memcpy(&d, sgl, sizeof(d));
		if (r->admin)
			REFUSE(NVME_SC_SGL_DESC_TYPE_INVALID, "in-capsule data on the admin queue");
		if (d.addr > r->icd_max)
			REFUSE(NVME_SC_SGL_OFFSET_INVALID, "in-capsule data offset past the capsule");
		if (d.len > r->icd_max - d.addr || d.len > r->max_data)
			REFUSE(NVME_SC_DATA_SGL_LEN_INVALID, "in-capsule data longer than the capsule takes");
		if (d.addr + d.len > icd_got)
			REFUSE(NVME_SC_DATA_SGL_LEN_INVALID, "in-capsule data longer than what was sent");
		out->kind = d.len ? NVRDMA_DATA_INCAPSULE : NVRDMA_DATA_NONE;
		out->len = d.len;
		out->icd = p + sizeof(struct nvme_sqe) + d.addr;
		return NVRDMA_OK;
	}
	/* SGLs in host memory (segments), plain address data blocks and other transports'
	 * descriptors: not on RDMA (3.3.1) */
	REFUSE(NVME_SC_SGL_DESC_TYPE_INVALID, "an SGL descriptor type RDMA does not carry");
}

bool nvrdma_rsp_parse(const void *buf, uint32_t len, struct nvme_cqe *cqe)
{
	if (!buf || len != sizeof(*cqe))
		return false;
	memcpy(cqe, buf, sizeof(*cqe));
	return true;
}
