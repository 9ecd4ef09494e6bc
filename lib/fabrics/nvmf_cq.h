/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fabrics transport's completions into the driver's CQ ring: what a PCIe controller writes
 * there, the transport writes for each response (or each error it makes up), so the generic
 * poll reaps them unchanged (lib/driver/transport.h, FABRICS kind).
 */
#ifndef UNVME_FABRICS_NVMF_CQ_H
#define UNVME_FABRICS_NVMF_CQ_H

#include <stdint.h>

#include "unvme/spec.h"

struct unvme_qpair;

/* The transport's position in qp's CQ ring: where the next entry goes, and its phase. */
struct nvmf_cq {
	uint16_t tail;
	uint8_t phase;
};

static inline void nvmf_cq_reset(struct nvmf_cq *cq)
{
	cq->tail = 0;
	cq->phase = 1;
}

/* Writes the completion of command cid on queue sqid into qp's CQ ring: cqe's DW0, DW1 and
 * SQHD, status (its phase bit replaced), the phase stored last with release order. */
void nvmf_cq_post(struct nvmf_cq *cq, struct unvme_qpair *qp, uint16_t sqid, uint16_t cid,
		  const struct nvme_cqe *cqe, uint16_t status);

#endif
