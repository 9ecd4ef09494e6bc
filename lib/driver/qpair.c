/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs over memory rings: the submission and completion paths.
 *
 * A queue pair belongs to one thread, so nothing here takes a lock. A submission writes the
 * SQE straight into the ring; the tail doorbell is written once per poll for the whole burst.
 * Completions are found by their phase tag; the CQ head doorbell is written once per poll.
 * The command id is the tracker's index, so a completion finds its tracker without a search.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrlr.h"
#include "errmsg.h"
#include "prp.h"

#define SCAN_INTERVAL_MS 10
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

uint64_t unvme_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void push_free(struct unvme_qpair *qp, uint16_t cid)
{
	struct unvme_req *r = &qp->reqs[cid];
	r->state = REQ_FREE;
	r->next_free = qp->free_head;
	qp->free_head = cid;
}

void qpair_reset_rings(struct unvme_qpair *qp)
{
	qp->sq_tail = 0;
	qp->cq_head = 0;
	qp->phase = 1;
	qp->unrung = 0;
	/* A stale entry whose phase bit happens to be 1 would look new after the rewind. */
	memset((void *)qp->cq, 0, (size_t)qp->depth * sizeof(struct nvme_cqe));
}

int qpair_alloc(struct unvme_ctrlr *c, uint16_t qid, uint32_t depth, uint32_t timeout_ms,
		struct unvme_qpair **out)
{
	uint32_t mqes = NVME_CAP_MQES(c->cap) + 1;
	uint32_t limit = mqes < 65535 ? mqes : 65535; /* the depth is kept in 16 bits */
	if (depth < 2 || depth > limit)
		return unvme_fail(-EINVAL, "queue depth %u is outside 2..%u (CAP.MQES + 1)", depth,
				  limit);
	struct unvme_qpair *qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->ctrlr = c;
	qp->qid = qid;
	qp->depth = (uint16_t)depth;
	qp->page_size = c->page_size;
	qp->timeout_ms = timeout_ms;
	qp->write32 = c->ops->write32;
	qp->bus = c->transport_ctx;
	qp->sq_db = nvme_sq_doorbell_offset(qid, c->dstrd);
	qp->cq_db = nvme_cq_doorbell_offset(qid, c->dstrd);
	size_t sq_bytes = (size_t)depth * sizeof(struct nvme_sqe);
	size_t cq_bytes = (size_t)depth * sizeof(struct nvme_cqe);
	/* Rings must be page aligned and physically contiguous (CAP.CQR): DMA memory is, per
	 * allocation. */
	qp->sq = unvme_dma_zalloc(sq_bytes, c->page_size);
	qp->cq = unvme_dma_zalloc(cq_bytes, c->page_size);
	qp->reqs = calloc(depth, sizeof(*qp->reqs));
	if (!qp->sq || !qp->cq || !qp->reqs) {
		qpair_free(qp);
		return unvme_fail(-ENOMEM, "no memory for a queue pair of depth %u", depth);
	}
	qp->sq_iova = unvme_dma_iova(qp->sq);
	qp->cq_iova = unvme_dma_iova((void *)qp->cq);
	qp->free_head = REQ_NONE;
	for (uint32_t i = depth - 1; i-- > 0;)
		push_free(qp, (uint16_t)i);
	qpair_reset_rings(qp);
	*out = qp;
	return 0;
}

void qpair_free(struct unvme_qpair *qp)
{
	if (!qp)
		return;
	if (qp->reqs) {
		for (uint32_t i = 0; i < qp->depth; i++)
			unvme_dma_free(qp->reqs[i].prp_list);
	}
	unvme_dma_free(qp->sq);
	unvme_dma_free((void *)qp->cq);
	free(qp->reqs);
	free(qp);
}

UNVME_API int unvme_qpair_submit(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf,
				 size_t len, unvme_cmd_cb cb, void *arg)
{
	if (unlikely(qp->failed))
		return unvme_fail(-EIO, "queue %u: controller has failed; reset it", qp->qid);
	uint16_t cid = qp->free_head;
	if (unlikely(cid == REQ_NONE))
		return -EAGAIN;
	struct unvme_req *req = &qp->reqs[cid];
	struct nvme_sqe *sqe = &qp->sq[qp->sq_tail];
	*sqe = *cmd;
	sqe->cid = cid;
	sqe->flags &= 0x3u; /* keep FUSE; PSDT 0 = PRPs */
	if (len) {
		if (unlikely(len > qp->ctrlr->max_xfer))
			return unvme_fail(-EINVAL, "transfer of %zu bytes exceeds the controller's "
					  "maximum of %u", len, qp->ctrlr->max_xfer);
		int rc = prp_build(qp, req, sqe, buf, len);
		if (unlikely(rc))
			return rc == -EINVAL ? unvme_fail(rc, "data buffer %p (%zu bytes) is not "
							  "dword-aligned DMA memory from unvme_dma_alloc",
							  buf, len)
					     : rc;
	}
	/* With no buffer the caller's DPTR passes through: Create I/O SQ/CQ carry the ring there. */
	qp->free_head = req->next_free;
	req->cb = cb;
	req->arg = arg;
	req->seen_ms = 0;
	req->state = REQ_ACTIVE;
	req->opc = cmd->opc;
	qp->last_cid = cid;
	if (unlikely(++qp->sq_tail == qp->depth))
		qp->sq_tail = 0;
	qp->unrung++;
	qp->outstanding++;
	return 0;
}

UNVME_API void unvme_qpair_ring(struct unvme_qpair *qp)
{
	if (qp->unrung) {
		qp->unrung = 0;
		/* The device may read the SQEs as soon as it sees the tail; the transport's register
		 * write is a release (see transport.h), so the entries are visible first. */
		qp->write32(qp->bus, qp->sq_db, qp->sq_tail);
	}
}

static void scan_timeouts(struct unvme_qpair *qp, uint64_t now);

UNVME_API int unvme_qpair_poll(struct unvme_qpair *qp, uint32_t max)
{
	unvme_qpair_ring(qp);
	uint32_t n = 0;
	bool moved = false;
	uint16_t head = qp->cq_head;
	uint8_t phase = qp->phase;
	for (;;) {
		volatile struct nvme_cqe *e = &qp->cq[head];
		/* acquire: the rest of the entry is read only after its phase says it is complete */
		uint16_t status = atomic_load_explicit((_Atomic uint16_t *)&e->status,
						       memory_order_acquire);
		if ((status & 1u) != phase)
			break;
		struct nvme_cqe cpl;
		cpl.dw0 = e->dw0;
		cpl.dw1 = e->dw1;
		cpl.sqhd = e->sqhd;
		cpl.sqid = e->sqid;
		cpl.cid = e->cid;
		cpl.status = status;
		if (unlikely(++head == qp->depth)) {
			head = 0;
			phase ^= 1u;
		}
		uint16_t cid = cpl.cid;
		qp->cq_head = head;
		qp->phase = phase;
		if (unlikely(cid >= qp->depth - 1u || qp->reqs[cid].state == REQ_FREE)) {
			/* A completion for nothing we sent: a device bug; consume it rather than
			 * corrupt a tracker. */
			moved = true;
			continue;
		}
		struct unvme_req *req = &qp->reqs[cid];
		unvme_cmd_cb cb = req->cb;
		void *arg = req->arg;
		push_free(qp, cid);
		qp->outstanding--;
		moved = true;
		if (cb)
			cb(arg, &cpl);
		if (++n == max)
			break;
	}
	if (moved)
		qp->write32(qp->bus, qp->cq_db, qp->cq_head);
	if (unlikely((++qp->poll_count & 255u) == 0) && qp->timeout_ms) {
		uint64_t now = unvme_now_ms();
		if (now - qp->last_scan_ms >= SCAN_INTERVAL_MS)
			scan_timeouts(qp, now);
	}
	if (unlikely(qp->failed))
		return unvme_fail(-EIO, "queue %u: controller has failed; reset it", qp->qid);
	return (int)n;
}

void qpair_fail_outstanding(struct unvme_qpair *qp, uint8_t sct, uint8_t sc)
{
	uint32_t ntrk = qp->depth - 1u;
	for (uint32_t cid = 0; cid < ntrk; cid++) {
		struct unvme_req *req = &qp->reqs[cid];
		if (req->state == REQ_FREE)
			continue;
		struct nvme_cqe cpl = {
			.sqid = qp->qid,
			.cid = (uint16_t)cid,
			.status = NVME_CQE_STATUS(sct, sc),
		};
		unvme_cmd_cb cb = req->cb;
		void *arg = req->arg;
		push_free(qp, (uint16_t)cid);
		qp->outstanding--;
		if (cb)
			cb(arg, &cpl);
	}
}

/*
 * A command that outlives the timeout gets an Abort. If it outlives a second timeout, the
 * queue is fenced: deleting the SQ on the device guarantees it will not touch the command's
 * buffers any more, the outstanding commands complete with ABORTED_SQ_DELETION, and the queue
 * is created again. If the controller reports a fatal status instead, the queue fails and the
 * application must reset the controller.
 */
static void recover_queue(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->recovering = true;
	int rc = ctrlr_delete_io_queues(c, qp);
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	qpair_reset_rings(qp);
	if (rc == 0)
		rc = ctrlr_create_io_queues(c, qp);
	if (rc != 0)
		qp->failed = 1;
	qp->recovering = false;
}

static void scan_timeouts(struct unvme_qpair *qp, uint64_t now)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->last_scan_ms = now;
	if (qp->qid != 0) {
		ctrlr_check_fatal(c);
		if (c->failed) {
			qp->failed = 1;
			return;
		}
	}
	if (qp->outstanding == 0 || qp->recovering)
		return;
	uint32_t ntrk = qp->depth - 1u;
	bool fence = false;
	for (uint32_t cid = 0; cid < ntrk; cid++) {
		struct unvme_req *req = &qp->reqs[cid];
		if (req->state == REQ_FREE)
			continue;
		if (req->seen_ms == 0) {
			req->seen_ms = now;
			continue;
		}
		if (now - req->seen_ms < qp->timeout_ms)
			continue;
		if (req->state == REQ_ACTIVE && qp->qid != 0) {
			req->state = REQ_ABORT_SENT;
			req->seen_ms = now;
			bool aborted = false;
			if (unvme_abort(c, qp->qid, (uint16_t)cid, &aborted) != 0 || !aborted)
				fence = true;
		} else if (req->state == REQ_ABORT_SENT) {
			fence = true;
		}
	}
	if (fence && qp->qid != 0)
		recover_queue(qp);
}

int qpair_wait(struct unvme_qpair *qp, volatile int *done, uint32_t timeout_ms)
{
	uint64_t deadline = timeout_ms ? unvme_now_ms() + timeout_ms : UINT64_MAX;
	uint32_t idle = 0;
	while (!*done) {
		int rc = unvme_qpair_poll(qp, 0);
		if (rc < 0)
			return rc;
		if (*done)
			break;
		if (rc == 0 && ++idle >= 1024) {
			idle = 0;
			if (unvme_now_ms() > deadline)
				return unvme_fail(-ETIMEDOUT, "queue %u: no completion within %u ms",
						  qp->qid, timeout_ms);
			sched_yield();
		}
	}
	return 0;
}

struct sync_ctx {
	volatile int done;
	struct nvme_cqe cpl;
};

static void sync_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct sync_ctx *s = arg;
	s->cpl = *cpl;
	s->done = 1;
}

UNVME_API int unvme_qpair_cmd_sync(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf,
				   size_t len, struct nvme_cqe *cpl)
{
	struct sync_ctx s = {0};
	int rc;
	while ((rc = unvme_qpair_submit(qp, cmd, buf, len, sync_cb, &s)) == -EAGAIN) {
		rc = unvme_qpair_poll(qp, 0);
		if (rc < 0)
			return rc;
	}
	if (rc)
		return rc;
	uint16_t cid = qp->last_cid;
	/* The queue's own timeout and recovery bound the wait; this is the last resort. */
	uint32_t limit = qp->timeout_ms ? 3 * qp->timeout_ms + 1000 : 0;
	rc = qpair_wait(qp, &s.done, limit);
	if (rc) {
		/* s lives on this stack: a late completion must not write to it. */
		if (!s.done && qp->reqs[cid].state != REQ_FREE)
			qp->reqs[cid].cb = NULL;
		return rc;
	}
	if (cpl)
		*cpl = s.cpl;
	return NVME_STATUS_FROM_CQE(s.cpl.status);
}

UNVME_API uint16_t unvme_qpair_id(const struct unvme_qpair *qp)
{
	return qp->qid;
}

UNVME_API uint32_t unvme_qpair_outstanding(const struct unvme_qpair *qp)
{
	return qp->outstanding;
}
