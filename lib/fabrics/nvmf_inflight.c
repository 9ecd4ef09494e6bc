/* SPDX-License-Identifier: BSD-3-Clause */
/* The scans of a fabrics queue's commands in flight (nvmf_inflight.h). */
#include <stdatomic.h>
#include <stdio.h>

#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "nvmf_inflight.h"

static const struct nvmf_track *track(const void *reqs, size_t stride, uint32_t cid)
{
	return (const struct nvmf_track *)((const char *)reqs + (size_t)cid * stride);
}

/* In flight for the driver, unanswered here. */
static bool waiting(const struct unvme_qpair *qp, const void *reqs, size_t stride, uint32_t cid)
{
	return atomic_load_explicit(&qp->reqs[cid].state, memory_order_acquire) != REQ_FREE &&
	       !track(reqs, stride, cid)->posted;
}

bool nvmf_unanswered(const struct unvme_qpair *qp, const void *reqs, size_t stride, uint32_t nreqs)
{
	for (uint32_t cid = 0; qp && cid < nreqs; cid++)
		if (waiting(qp, reqs, stride, cid))
			return true;
	return false;
}

bool nvmf_overdue(const struct unvme_qpair *qp, const struct unvme_ctrlr *c, uint16_t qid,
		  const void *reqs, size_t stride, uint32_t nreqs, uint32_t io_ms, uint64_t now,
		  char *why, size_t whylen)
{
	for (uint32_t cid = 0; qp && cid < nreqs; cid++) {
		if (!waiting(qp, reqs, stride, cid))
			continue;
		uint8_t opc = qp->reqs[cid].opc;
		if (qid == 0 && opc == NVME_ADM_ASYNC_EVENT)
			continue;
		uint32_t ms = qid == 0 ? unvme_admin_limit_ms(c, opc) : io_ms;
		if (now - track(reqs, stride, cid)->start_ms >= (uint64_t)ms + mono_coarse_slack_ms()) {
			snprintf(why, whylen, "command %u (opcode %#x) got no answer within %u ms", cid, opc, ms);
			return true;
		}
	}
	return false;
}
