/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A minimal host for driving the emulated controller in unit tests the way a driver does:
 * raw register writes, rings and buffers in one DMA arena mapped through the device's IOMMU,
 * doorbells, phase-tag polling. Deliberately independent of lib/driver.
 */
#ifndef UNVME_EMU_TEST_HOST_H
#define UNVME_EMU_TEST_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/emu/emu_device.h"
#include "unvme/spec.h"

#define TH_IOVA_BASE 0x100000000ull  /* bus addresses differ from virtual ones on purpose */
#define TH_ARENA_SIZE (64u << 20)

struct th_queue {
	uint16_t qid;
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint64_t sq_iova;
	uint64_t cq_iova;
	uint32_t sq_size;
	uint32_t cq_size;
	uint32_t sq_tail;
	uint32_t cq_head;
	uint8_t phase;
	uint16_t next_cid;
};

struct th {
	struct emu_device *dev;
	uint8_t *arena;
	size_t brk;
	uint32_t dstrd;
	struct th_queue admin;
	uint64_t *prp_list;          /* one list page for th_rw */
	uint64_t prp_list_iova;
	uint32_t lba;                /* LBA size th_rw assumes (512 unless a test changes it) */
	char err[512];
};

/* Creates the device and maps the arena. Returns 0 or the create error (message in h->err). */
int th_open(struct th *h, const char *uri);
void th_close(struct th *h);
/* Bump allocation from the arena (zeroed), with its bus address. */
void *th_alloc(struct th *h, size_t size, size_t align, uint64_t *iova);
uint64_t th_iova(const struct th *h, const void *p);

uint32_t th_read32(struct th *h, uint32_t off);
uint64_t th_read64(struct th *h, uint32_t off);
void th_write32(struct th *h, uint32_t off, uint32_t val);
void th_write64(struct th *h, uint32_t off, uint64_t val);

/* Programs AQA/ASQ/ACQ for new admin rings and sets CC.EN with the given extra CC bits
 * (IOSQES/IOCQES are always 6/4). Waits for RDY or CFS; returns CSTS. */
uint32_t th_enable(struct th *h, uint32_t sq_entries, uint32_t cq_entries);
/* The same with CC.CSS = css (NVME_CC_CSS_*). */
uint32_t th_enable_css(struct th *h, uint32_t sq_entries, uint32_t cq_entries, uint32_t css);
/* Clears CC.EN and waits for RDY = 0. */
void th_disable(struct th *h);

/* Rings: place one command (cid assigned unless keep_cid) without ringing / ring. */
uint16_t th_place(struct th_queue *q, struct nvme_sqe *cmd, bool keep_cid);
void th_ring_sq(struct th *h, struct th_queue *q);
void th_ring_cq(struct th *h, struct th_queue *q);
/* Waits up to timeout_ms for the next completion of q; consumes it (head moves, doorbell is
 * rung only if ring). false on timeout. */
bool th_poll(struct th *h, struct th_queue *q, struct nvme_cqe *out, int timeout_ms, bool ring);
/* Submit and wait; returns NVME_STATUS form (0 = success), -1 on timeout. */
int th_cmd(struct th *h, struct th_queue *q, struct nvme_sqe *cmd, struct nvme_cqe *out);
int th_admin(struct th *h, struct nvme_sqe *cmd, struct nvme_cqe *out);

/* Number of Queues + Create I/O CQ + SQ with contiguous rings from the arena. */
int th_create_qpair(struct th *h, struct th_queue *q, uint16_t qid, uint32_t entries);
/* Read/Write/etc. on q with a buffer in the arena; returns NVME_STATUS form. */
int th_rw(struct th *h, struct th_queue *q, uint8_t opc, uint32_t nsid, uint64_t slba,
	  uint32_t nlb, void *buf);
/* Identify into a 4 KiB arena buffer; returns NVME_STATUS form. */
int th_identify(struct th *h, uint8_t cns, uint32_t nsid, uint32_t cdw11, void *out4096);
/* Get Log Page of len bytes at offset into buf (arena); returns NVME_STATUS form. */
int th_get_log(struct th *h, uint8_t lid, uint32_t nsid, uint64_t offset, uint32_t len, void *buf);

static inline int th_status(const struct nvme_cqe *e)
{
	return NVME_STATUS_FROM_CQE(e->status);
}

#endif
