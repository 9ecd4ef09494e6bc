/* SPDX-License-Identifier: BSD-3-Clause */
#include "emu_test_host.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int th_open(struct th *h, const char *uri)
{
	memset(h, 0, sizeof(*h));
	int rc = emu_device_create(uri, &h->dev, h->err, sizeof(h->err));
	if (rc)
		return rc;
	h->arena = mmap(NULL, TH_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->arena == MAP_FAILED) {
		emu_device_destroy(h->dev);
		return -1;
	}
	rc = emu_iommu_map(h->dev, h->arena, TH_IOVA_BASE, TH_ARENA_SIZE);
	if (rc) {
		munmap(h->arena, TH_ARENA_SIZE);
		emu_device_destroy(h->dev);
		return rc;
	}
	h->dstrd = (uint32_t)NVME_CAP_DSTRD(th_read64(h, NVME_REG_CAP));
	h->prp_list = th_alloc(h, 4096, 4096, &h->prp_list_iova);
	h->lba = 512;
	return 0;
}

void th_close(struct th *h)
{
	if (!h->dev)
		return;
	emu_device_destroy(h->dev);
	munmap(h->arena, TH_ARENA_SIZE);
	h->dev = NULL;
}

void *th_alloc(struct th *h, size_t size, size_t align, uint64_t *iova)
{
	size_t off = (h->brk + align - 1) & ~(align - 1);
	if (off + size > TH_ARENA_SIZE)
		return NULL;
	h->brk = off + size;
	memset(h->arena + off, 0, size);
	if (iova)
		*iova = TH_IOVA_BASE + off;
	return h->arena + off;
}

uint64_t th_iova(const struct th *h, const void *p)
{
	return TH_IOVA_BASE + (uint64_t)((const uint8_t *)p - h->arena);
}

uint32_t th_read32(struct th *h, uint32_t off) { return emu_mmio_read32(h->dev, off); }
uint64_t th_read64(struct th *h, uint32_t off) { return emu_mmio_read64(h->dev, off); }
void th_write32(struct th *h, uint32_t off, uint32_t val) { emu_mmio_write32(h->dev, off, val); }
void th_write64(struct th *h, uint32_t off, uint64_t val) { emu_mmio_write64(h->dev, off, val); }

static uint32_t wait_csts(struct th *h, uint32_t mask, uint32_t want)
{
	uint64_t end = now_ms() + 2000;
	uint32_t csts;
	while (((csts = th_read32(h, NVME_REG_CSTS)) & mask) != want && now_ms() < end)
		sched_yield();
	return csts;
}

uint32_t th_enable(struct th *h, uint32_t sq_entries, uint32_t cq_entries)
{
	return th_enable_css(h, sq_entries, cq_entries, NVME_CC_CSS_NVM);
}

uint32_t th_enable_css(struct th *h, uint32_t sq_entries, uint32_t cq_entries, uint32_t css)
{
	struct th_queue *q = &h->admin;
	memset(q, 0, sizeof(*q));
	q->sq = th_alloc(h, sq_entries * sizeof(struct nvme_sqe), 4096, &q->sq_iova);
	q->cq = th_alloc(h, cq_entries * sizeof(struct nvme_cqe), 4096, &q->cq_iova);
	q->sq_size = sq_entries;
	q->cq_size = cq_entries;
	q->phase = 1;
	th_write32(h, NVME_REG_AQA, NVME_AQA_MAKE(sq_entries, cq_entries));
	th_write64(h, NVME_REG_ASQ, q->sq_iova);
	th_write64(h, NVME_REG_ACQ, q->cq_iova);
	th_write32(h, NVME_REG_CC, NVME_CC_EN | NVME_CC_CSS_SET(css) | NVME_CC_IOSQES_SET(6) |
				   NVME_CC_IOCQES_SET(4));
	return wait_csts(h, NVME_CSTS_RDY | NVME_CSTS_CFS, NVME_CSTS_RDY);
}

void th_disable(struct th *h)
{
	uint32_t cc = th_read32(h, NVME_REG_CC);
	th_write32(h, NVME_REG_CC, cc & ~NVME_CC_EN);
	wait_csts(h, NVME_CSTS_RDY, 0);
}

uint16_t th_place(struct th_queue *q, struct nvme_sqe *cmd, bool keep_cid)
{
	if (!keep_cid)
		cmd->cid = q->next_cid++;
	q->sq[q->sq_tail] = *cmd;
	q->sq_tail = (q->sq_tail + 1) % q->sq_size;
	return cmd->cid;
}

void th_ring_sq(struct th *h, struct th_queue *q)
{
	th_write32(h, nvme_sq_doorbell_offset(q->qid, h->dstrd), q->sq_tail);
}

void th_ring_cq(struct th *h, struct th_queue *q)
{
	th_write32(h, nvme_cq_doorbell_offset(q->qid, h->dstrd), q->cq_head);
}

bool th_poll(struct th *h, struct th_queue *q, struct nvme_cqe *out, int timeout_ms, bool ring)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	struct nvme_cqe *e = &q->cq[q->cq_head];
	for (;;) {
		/* the entry's second half (SQHD, SQID, CID, status), as the device writes it: one
		 * 8-byte store with release (hw/emu/emu_ctrl.h), read as the driver reads it */
		uint64_t hi = __atomic_load_n((uint64_t *)e + 1, __ATOMIC_ACQUIRE);
		uint16_t st = (uint16_t)(hi >> 48);
		if ((st & 1u) == q->phase)
			break;
		if (now_ms() >= end)
			return false;
		sched_yield();
	}
	if (out)
		*out = *e;
	if (++q->cq_head == q->cq_size) {
		q->cq_head = 0;
		q->phase ^= 1u;
	}
	if (ring)
		th_ring_cq(h, q);
	return true;
}

int th_cmd(struct th *h, struct th_queue *q, struct nvme_sqe *cmd, struct nvme_cqe *out)
{
	struct nvme_cqe tmp;
	if (!out)
		out = &tmp;
	th_place(q, cmd, false);
	th_ring_sq(h, q);
	if (!th_poll(h, q, out, 5000, true))
		return -1;
	return th_status(out);
}

int th_admin(struct th *h, struct nvme_sqe *cmd, struct nvme_cqe *out)
{
	return th_cmd(h, &h->admin, cmd, out);
}

int th_create_qpair(struct th *h, struct th_queue *q, uint16_t qid, uint32_t entries)
{
	memset(q, 0, sizeof(*q));
	q->qid = qid;
	q->sq_size = q->cq_size = entries;
	q->phase = 1;
	q->sq = th_alloc(h, entries * sizeof(struct nvme_sqe), 4096, &q->sq_iova);
	q->cq = th_alloc(h, entries * sizeof(struct nvme_cqe), 4096, &q->cq_iova);
	if (!q->sq || !q->cq)
		return -1;
	struct nvme_sqe c = { .opc = NVME_ADM_CREATE_CQ, .prp1 = q->cq_iova,
			      .cdw10 = (entries - 1) << 16 | qid, .cdw11 = NVME_CREATE_CQ_PC };
	int st = th_admin(h, &c, NULL);
	if (st)
		return st;
	struct nvme_sqe s = { .opc = NVME_ADM_CREATE_SQ, .prp1 = q->sq_iova,
			      .cdw10 = (entries - 1) << 16 | qid,
			      .cdw11 = (uint32_t)qid << 16 | NVME_CREATE_SQ_PC };
	return th_admin(h, &s, NULL);
}

/* Fills PRP1/PRP2 for a contiguous arena buffer, using the host's one list page. */
static void set_prps(struct th *h, struct nvme_sqe *cmd, void *buf, uint32_t len)
{
	uint64_t iova = th_iova(h, buf);
	cmd->prp1 = iova;
	uint32_t first = 4096 - (uint32_t)(iova & 4095);
	if (len <= first)
		return;
	uint64_t next = (iova & ~4095ull) + 4096;
	uint32_t rem = len - first;
	if (rem <= 4096) {
		cmd->prp2 = next;
		return;
	}
	uint32_t n = (rem + 4095) / 4096;
	for (uint32_t i = 0; i < n; i++)
		h->prp_list[i] = next + (uint64_t)i * 4096;
	cmd->prp2 = h->prp_list_iova;
}

int th_rw(struct th *h, struct th_queue *q, uint8_t opc, uint32_t nsid, uint64_t slba,
	  uint32_t nlb, void *buf)
{
	struct nvme_sqe cmd = { .opc = opc, .nsid = nsid, .cdw10 = (uint32_t)slba,
				.cdw11 = (uint32_t)(slba >> 32), .cdw12 = nlb - 1 };
	if (buf)
		set_prps(h, &cmd, buf, nlb * h->lba);
	return th_cmd(h, q, &cmd, NULL);
}

int th_identify(struct th *h, uint8_t cns, uint32_t nsid, uint32_t cdw11, void *out4096)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_IDENTIFY, .nsid = nsid, .cdw10 = cns, .cdw11 = cdw11 };
	set_prps(h, &cmd, out4096, 4096);
	return th_admin(h, &cmd, NULL);
}

int th_get_log(struct th *h, uint8_t lid, uint32_t nsid, uint64_t offset, uint32_t len, void *buf)
{
	uint32_t numd = len / 4 - 1;
	struct nvme_sqe cmd = { .opc = NVME_ADM_GET_LOG_PAGE, .nsid = nsid,
				.cdw10 = lid | (numd & 0xffffu) << 16, .cdw11 = numd >> 16,
				.cdw12 = (uint32_t)offset, .cdw13 = (uint32_t)(offset >> 32) };
	set_prps(h, &cmd, buf, len);
	return th_admin(h, &cmd, NULL);
}
