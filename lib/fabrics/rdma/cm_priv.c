/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA CM private data of NVMe/RDMA: building and checking (cm_priv.h). */
#include <errno.h>
#include <string.h>

#include "cm_priv.h"

static uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

void nvrdma_cm_req_build(struct nvme_rdma_cm_req *req, uint16_t qid, uint16_t hrqsize,
			 uint16_t hsqsize, uint16_t cntlid)
{
	memset(req, 0, sizeof(*req));
	req->recfmt = NVME_RDMA_CM_RECFMT;
	req->qid = qid;
	req->hrqsize = hrqsize;
	req->hsqsize = hsqsize;
	req->cntlid = qid ? cntlid : 0; /* Figure 5: cleared for the admin queue */
}

int nvrdma_cm_req_check(const void *priv, uint32_t len, const struct nvrdma_cm_limits *lim,
			struct nvrdma_cm_params *out)
{
	const uint8_t *p = priv;
	/* fields are checked lowest offset first, as a reject names the first one wrong */
	if (!p || len < sizeof(struct nvme_rdma_cm_req))
		return NVME_RDMA_CM_INVALID_LEN;
	if (le16_at(p + offsetof(struct nvme_rdma_cm_req, recfmt)) != NVME_RDMA_CM_RECFMT)
		return NVME_RDMA_CM_INVALID_RECFMT;
	struct nvrdma_cm_params v = {
		.qid = le16_at(p + offsetof(struct nvme_rdma_cm_req, qid)),
		.hrqsize = le16_at(p + offsetof(struct nvme_rdma_cm_req, hrqsize)),
		.hsqsize = le16_at(p + offsetof(struct nvme_rdma_cm_req, hsqsize)),
		.cntlid = le16_at(p + offsetof(struct nvme_rdma_cm_req, cntlid)),
	};
	if (v.qid > lim->max_qid)
		return NVME_RDMA_CM_INVALID_QID;
	/* the host posts a receive for every response it may get: fewer than the queue's
	 * commands, and a response could find none */
	uint32_t depth = (uint32_t)v.hsqsize + 1;
	if (v.hrqsize == 0)
		return NVME_RDMA_CM_INVALID_HRQSIZE;
	/* SQSIZE 0 (one entry) cannot hold a command: an empty queue needs a free slot */
	if (v.hsqsize == 0 || depth > (v.qid ? lim->io_depth : lim->admin_depth))
		return NVME_RDMA_CM_INVALID_HSQSIZE;
	if (v.hrqsize < depth - 1)
		return NVME_RDMA_CM_INVALID_HRQSIZE;
	*out = v;
	return 0;
}

void nvrdma_cm_rep_build(struct nvme_rdma_cm_rep *rep, uint16_t crqsize)
{
	memset(rep, 0, sizeof(*rep));
	rep->recfmt = NVME_RDMA_CM_RECFMT;
	rep->crqsize = crqsize;
}

int nvrdma_cm_rep_parse(const void *priv, uint32_t len, uint16_t *crqsize)
{
	const uint8_t *p = priv;
	if (!p || len < 4 || le16_at(p) != NVME_RDMA_CM_RECFMT)
		return -EPROTO;
	*crqsize = le16_at(p + offsetof(struct nvme_rdma_cm_rep, crqsize));
	return 0;
}

void nvrdma_cm_rej_build(struct nvme_rdma_cm_rej *rej, uint16_t sts)
{
	rej->recfmt = NVME_RDMA_CM_RECFMT;
	rej->sts = sts;
}

uint16_t nvrdma_cm_rej_parse(const void *priv, uint32_t len)
{
	const uint8_t *p = priv;
	if (!p || len < sizeof(struct nvme_rdma_cm_rej) || le16_at(p) != NVME_RDMA_CM_RECFMT)
		return 0;
	return le16_at(p + offsetof(struct nvme_rdma_cm_rej, sts));
}

const char *nvrdma_cm_status_name(uint16_t sts)
{
	switch (sts) {
	case NVME_RDMA_CM_INVALID_LEN: return "invalid private data length";
	case NVME_RDMA_CM_INVALID_RECFMT: return "invalid record format";
	case NVME_RDMA_CM_INVALID_QID: return "invalid queue id";
	case NVME_RDMA_CM_INVALID_HSQSIZE: return "invalid host SQ size";
	case NVME_RDMA_CM_INVALID_HRQSIZE: return "invalid host RQ size";
	case NVME_RDMA_CM_NO_RSC: return "no resources";
	case NVME_RDMA_CM_INVALID_IRD: return "invalid IRD";
	case NVME_RDMA_CM_INVALID_ORD: return "invalid ORD";
	case NVME_RDMA_CM_INVALID_CNTLID: return "invalid controller id";
	case 0: return "refused without a status (nobody listening?)";
	default: return "unknown status";
	}
}
