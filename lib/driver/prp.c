/* SPDX-License-Identifier: BSD-3-Clause */
#include "errmsg.h"
#include "prp.h"

int prp_build_list(struct unvme_qpair *qp, struct unvme_req *req, struct nvme_sqe *sqe,
		   uint64_t next_page_iova, size_t remaining)
{
	uint32_t ps = qp->page_size;
	size_t entries = (remaining + ps - 1) / ps;
	/* One list page per command: max_xfer is capped so a transfer never needs a chained list
	 * (ps / 8 entries, the last of which would otherwise point at the next list page). */
	if (entries > ps / sizeof(uint64_t))
		return unvme_fail(-EINVAL, "transfer of %zu bytes needs more than one PRP list page",
				  remaining);
	if (!req->prp_list) {
		req->prp_list = unvme_dma_alloc(ps, ps);
		if (!req->prp_list)
			return -ENOMEM;
		req->prp_list_iova = unvme_dma_iova(req->prp_list);
	}
	for (size_t i = 0; i < entries; i++)
		req->prp_list[i] = next_page_iova + (uint64_t)i * ps;
	sqe->prp2 = req->prp_list_iova;
	return 0;
}
