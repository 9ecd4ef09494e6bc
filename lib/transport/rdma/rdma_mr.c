/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's DMA chunks registered with the RDMA device, once each (the driver tells every
 * controller about a chunk through dma_map, before it hands out any memory of it): a command
 * whose buffer lies in a chunk names the chunk's RKEY in its keyed SGL, with no registration
 * on the I/O path. The controller may then reach the whole chunk, not only the command's
 * buffer, for as long as the controller is open (Linux's host registers per command instead;
 * documented in docs/nvme-rdma.md). A buffer outside the chunks (ordinary memory of the
 * fabrics commands), or a connection on another protection domain, gets a region for the
 * command alone (the host queue engine does that when the lookup finds nothing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_ctrlr.h"

#define ACCESS (RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ | RV_ACCESS_REMOTE_WRITE)

/* The first chunk whose address is above va. */
static uint32_t upper(const struct rdma_ctrlr *rc, uintptr_t va)
{
	uint32_t lo = 0, hi = rc->nmrs;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (rc->mrs[mid].va <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rdma_mr_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	struct rdma_ctrlr *rc = ctx;
	struct rv_mr *mr = NULL;
	if (rc->pd) {
		int err = rv_reg_mr(rc->pd, vaddr, len, ACCESS, &mr);
		if (err)
			return err; /* the driver says the memory cannot be used with this device */
	}
	pthread_rwlock_wrlock(&rc->mr_lock);
	if (rc->nmrs == rc->mrs_cap) {
		uint32_t cap = rc->mrs_cap ? rc->mrs_cap * 2 : 16;
		struct rdma_chunk_mr *n = realloc(rc->mrs, cap * sizeof(*n));
		if (!n) {
			pthread_rwlock_unlock(&rc->mr_lock);
			rv_dereg_mr(mr);
			return -ENOMEM;
		}
		rc->mrs = n;
		rc->mrs_cap = cap;
	}
	uint32_t at = upper(rc, (uintptr_t)vaddr);
	memmove(&rc->mrs[at + 1], &rc->mrs[at], (rc->nmrs - at) * sizeof(*rc->mrs));
	rc->mrs[at] = (struct rdma_chunk_mr){.va = (uintptr_t)vaddr, .len = len, .iova = iova, .mr = mr};
	rc->nmrs++;
	pthread_rwlock_unlock(&rc->mr_lock);
	return 0;
}

void rdma_mr_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct rdma_ctrlr *rc = ctx;
	struct rv_mr *mr = NULL;
	pthread_rwlock_wrlock(&rc->mr_lock);
	for (uint32_t i = 0; i < rc->nmrs; i++) {
		if (rc->mrs[i].iova != iova || rc->mrs[i].len != len)
			continue;
		mr = rc->mrs[i].mr;
		memmove(&rc->mrs[i], &rc->mrs[i + 1], (rc->nmrs - i - 1) * sizeof(*rc->mrs));
		rc->nmrs--;
		break;
	}
	pthread_rwlock_unlock(&rc->mr_lock);
	rv_dereg_mr(mr);
}

struct rv_mr *rdma_mr_find(struct rdma_ctrlr *rc, struct rv_pd *pd, const void *buf, uint32_t len)
{
	uintptr_t va = (uintptr_t)buf;
	struct rv_mr *found = NULL;
	pthread_rwlock_rdlock(&rc->mr_lock);
	uint32_t at = upper(rc, va);
	if (at > 0) {
		const struct rdma_chunk_mr *m = &rc->mrs[at - 1];
		if (m->mr && m->mr->pd == pd && va - m->va <= m->len && len <= m->len - (va - m->va))
			found = m->mr;
	}
	pthread_rwlock_unlock(&rc->mr_lock);
	return found;
}

void rdma_mr_fini(struct rdma_ctrlr *rc)
{
	for (uint32_t i = 0; i < rc->nmrs; i++)
		rv_dereg_mr(rc->mrs[i].mr);
	free(rc->mrs);
	rc->mrs = NULL;
	rc->nmrs = rc->mrs_cap = 0;
}
