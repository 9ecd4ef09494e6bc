/* SPDX-License-Identifier: BSD-3-Clause */
/* Completions into the driver's CQ ring (nvmf_cq.h). */
#include <stdatomic.h>

#include "lib/driver/ctrlr.h"
#include "nvmf_cq.h"

void nvmf_cq_post(struct nvmf_cq *cq, struct unvme_qpair *qp, uint16_t sqid, uint16_t cid,
		  const struct nvme_cqe *cqe, uint16_t status)
{
	volatile struct nvme_cqe *e = &qp->cq[cq->tail];
	e->dw0 = cqe->dw0;
	e->dw1 = cqe->dw1;
	e->sqhd = cqe->sqhd;
	e->sqid = sqid;
	e->cid = cid;
	/* release: the poll reads the rest of the entry after it sees the phase */
	atomic_store_explicit((_Atomic uint16_t *)&e->status, (uint16_t)((status & ~1u) | cq->phase),
			      memory_order_release);
	if (++cq->tail == qp->depth) {
		cq->tail = 0;
		cq->phase ^= 1u;
	}
}
