/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the PRP data pointer of a command (NVMe Base 2.0 section 4.3.1). PRP1 takes the
 * first, possibly unaligned, page; a transfer that needs exactly one more page puts it in
 * PRP2; a longer one points PRP2 at a PRP list of page addresses.
 */
#ifndef UNVME_DRIVER_PRP_H
#define UNVME_DRIVER_PRP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrlr.h"
#include "dma.h"

int prp_build_list(struct unvme_qpair *qp, struct unvme_req *req, struct nvme_sqe *sqe,
		   uint64_t next_page_iova, size_t remaining);

static inline int prp_build(struct unvme_qpair *qp, struct unvme_req *req, struct nvme_sqe *sqe,
			    const void *buf, size_t len)
{
	size_t contig;
	uint64_t iova = dma_translate_cached(&qp->xlate, buf, &contig);
	if (__builtin_expect(iova == UINT64_MAX || contig < len || (iova & 3u), 0))
		return -EINVAL;
	uint64_t first = qp->page_size - (iova & (qp->page_size - 1));
	sqe->prp1 = iova;
	if (len <= first) {
		sqe->prp2 = 0;
		return 0;
	}
	if (len <= first + qp->page_size) {
		sqe->prp2 = iova + first;
		return 0;
	}
	return prp_build_list(qp, req, sqe, iova + first, len - first);
}

#endif
