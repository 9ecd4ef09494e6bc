/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA CM private data of NVMe/RDMA (RDMA Transport Specification 3.1.4, Figures 5-7 and
 * 11): what the host asks for a queue (RECFMT, QID, HRQSIZE, HSQSIZE, CNTLID), what the
 * controller answers (CRQSIZE) or why it refuses (STS). The controller checks a request with
 * nvrdma_cm_req_check before it creates anything; the host reads a reject with
 * nvrdma_cm_rej_parse. Shared by the host transport and the target; fuzzed on its own.
 */
#ifndef UNVME_FABRICS_RDMA_CM_PRIV_H
#define UNVME_FABRICS_RDMA_CM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec/rdma.h"

/* A queue's request, decoded. */
struct nvrdma_cm_params {
	uint16_t qid;
	uint16_t hrqsize;   /* responses the host can take at once */
	uint16_t hsqsize;   /* SQSIZE, 0's based */
	uint16_t cntlid;
};

/* What the controller takes. */
struct nvrdma_cm_limits {
	uint16_t max_qid;        /* highest I/O queue id it serves */
	uint16_t admin_depth;    /* admin queue entries at most (hsqsize + 1) */
	uint16_t io_depth;       /* I/O queue entries at most (CAP.MQES + 1) */
};

void nvrdma_cm_req_build(struct nvme_rdma_cm_req *req, uint16_t qid, uint16_t hrqsize,
			 uint16_t hsqsize, uint16_t cntlid);
/* Checks a request's private data (len bytes as received: a CM may pad it, so more than 32 is
 * fine). 0 with *out filled, or the nvme_rdma_cm_status to reject with. */
int nvrdma_cm_req_check(const void *priv, uint32_t len, const struct nvrdma_cm_limits *lim,
			struct nvrdma_cm_params *out);

void nvrdma_cm_rep_build(struct nvme_rdma_cm_rep *rep, uint16_t crqsize);
/* The host's check of an accept: 0 with *crqsize, or -EPROTO (too short, unknown format). */
int nvrdma_cm_rep_parse(const void *priv, uint32_t len, uint16_t *crqsize);

void nvrdma_cm_rej_build(struct nvme_rdma_cm_rej *rej, uint16_t sts);
/* The status a reject carries, or 0 when it carries none (a reject by the CM itself, not the
 * controller: nobody listening, a timeout). */
uint16_t nvrdma_cm_rej_parse(const void *priv, uint32_t len);

/* "invalid host SQ size" and so on, for messages. */
const char *nvrdma_cm_status_name(uint16_t sts);

#endif
