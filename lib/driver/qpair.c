/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs over memory rings: the submission and completion paths.
 *
 * A queue pair belongs to one thread, so nothing here takes a lock. A submission writes the
 * SQE straight into the ring; the tail doorbell is written once per poll for the whole burst.
 * Completions are found by their phase tag; the CQ head doorbell is written once per poll.
 * The command id is the tracker's index, so a completion finds its tracker without a search.
 *
 * A split queue pair has two owners, a submitter and a poller, and still no lock on the
 * command path: each side writes only its own fields (sq_tail, sq_tail_pub, nsubmitted,
 * next_cid / cq_head, ncompleted). The one thing they pass back and forth is the tracker: the
 * submitter fills it and marks it ACTIVE before it publishes the new tail (so the device, and
 * through the CQE's phase the poller, see it complete), the poller reads it and marks it FREE
 * with a release store. The poller rings the published tail at each poll, so the doorbell
 * write, and with the emulated device in inline mode the device's whole work, leave the
 * submitting core; the submitter may ring as well when the poller is not polling often
 * (ring_split). The submitter finds
 * free trackers by walking forward from the last one it took: completions come back mostly
 * in order, so the next tracker is almost always free, and it shares no line beyond the
 * tracker itself, which it writes anyway.
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

static inline uint8_t req_state(const struct unvme_req *r)
{
	return atomic_load_explicit(&r->state, memory_order_acquire);
}

static inline void set_req_state(struct unvme_req *r, uint8_t state)
{
	atomic_store_explicit(&r->state, state, memory_order_release);
}

/* Single-writer counters: a load and a store, no locked instruction. */
static inline void count_up(_Atomic uint32_t *ctr)
{
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline uint32_t outstanding(const struct unvme_qpair *qp)
{
	return atomic_load_explicit(&qp->nsubmitted, memory_order_relaxed) -
	       atomic_load_explicit(&qp->ncompleted, memory_order_relaxed);
}

/* The poller gives a tracker back (after reading its cb and arg). */
static void release_req(struct unvme_qpair *qp, uint16_t cid)
{
	struct unvme_req *r = &qp->reqs[cid];
	count_up(&qp->ncompleted);
	if (qp->split) {
		set_req_state(r, REQ_FREE);
		return;
	}
	atomic_store_explicit(&r->state, REQ_FREE, memory_order_relaxed);
	r->next_free = qp->free_head;
	qp->free_head = cid;
}

/* The submitter takes a free tracker, or REQ_NONE when all depth - 1 are outstanding. */
static inline uint16_t claim_req(struct unvme_qpair *qp)
{
	if (!qp->split) {
		uint16_t cid = qp->free_head;
		if (likely(cid != REQ_NONE))
			qp->free_head = qp->reqs[cid].next_free;
		return cid;
	}
	uint16_t ntrk = qp->depth - 1u, cid = qp->next_cid;
	for (uint16_t i = 0; i < ntrk; i++) {
		if (req_state(&qp->reqs[cid]) == REQ_FREE) {
			qp->next_cid = cid + 1u == ntrk ? 0 : cid + 1u;
			return cid;
		}
		cid = cid + 1u == ntrk ? 0 : cid + 1u;
	}
	return REQ_NONE;
}

/* Gives back a tracker claim_req took for a command that was refused before it was queued. */
static void unclaim_req(struct unvme_qpair *qp, uint16_t cid)
{
	if (qp->split) {
		qp->next_cid = cid; /* still FREE: the next claim finds it first */
		return;
	}
	qp->reqs[cid].next_free = qp->free_head;
	qp->free_head = cid;
}

/* Fills the tracker of a command being queued and makes it ACTIVE; release: a split queue's
 * poller reads cb and arg after it sees the command complete. */
static inline void activate_req(struct unvme_qpair *qp, uint16_t cid, uint8_t opc,
				unvme_cmd_cb cb, void *arg)
{
	struct unvme_req *req = &qp->reqs[cid];
	req->cb = cb;
	req->arg = arg;
	req->seen_ms = 0;
	req->opc = opc;
	set_req_state(req, REQ_ACTIVE);
	qp->last_cid = cid;
}

/* A split queue cannot rebuild itself from one side: its owner stops both and calls
 * unvme_qpair_recover. -EAGAIN while a reset is under way. */
static int split_failed(struct unvme_qpair *qp)
{
	if (atomic_load(&qp->ctrlr->resetting))
		return -EAGAIN;
	return unvme_fail(-EIO, "queue %u: the controller %s; stop the queue's submitter and "
			  "poller and call unvme_qpair_recover", qp->qid,
			  qp->ctrlr->failed ? "has failed" : "was reset");
}

void qpair_reset_rings(struct unvme_qpair *qp)
{
	qp->sq_tail = 0;
	qp->cq_head = 0;
	qp->phase = 1;
	qp->unrung = 0;
	atomic_store_explicit(&qp->sq_tail_pub, 0, memory_order_relaxed);
	qp->rung_tail = 0;
	atomic_flag_clear_explicit(&qp->ring_lock, memory_order_relaxed);
	/* A stale entry whose phase bit happens to be 1 would look new after the rewind. */
	if (qp->cq)
		memset((void *)qp->cq, 0, (size_t)qp->depth * sizeof(struct nvme_cqe));
}

int qpair_alloc(struct unvme_ctrlr *c, uint16_t qid, uint32_t depth, uint32_t timeout_ms,
		bool split, struct unvme_qpair **out)
{
	uint32_t mqes = NVME_CAP_MQES(c->cap) + 1;
	uint32_t limit = mqes < 65535 ? mqes : 65535; /* the depth is kept in 16 bits */
	if (depth < 2 || depth > limit)
		return unvme_fail(-EINVAL, "queue depth %u is outside 2..%u (CAP.MQES + 1)", depth,
				  limit);
	/* aligned: the poller's fields start a cache line of their own */
	struct unvme_qpair *qp = aligned_alloc(_Alignof(struct unvme_qpair), sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	memset(qp, 0, sizeof(*qp));
	qp->split = split;
	qp->ctrlr = c;
	qp->qid = qid;
	qp->depth = (uint16_t)depth;
	qp->page_size = c->page_size;
	qp->timeout_ms = timeout_ms;
	qp->msg = c->ops->msg;
	if (!qp->msg) {
		qp->write32 = c->ops->write32;
		qp->bus = c->transport_ctx;
		qp->sq_db = nvme_sq_doorbell_offset(qid, c->dstrd);
		qp->cq_db = nvme_cq_doorbell_offset(qid, c->dstrd);
		size_t sq_bytes = (size_t)depth * sizeof(struct nvme_sqe);
		size_t cq_bytes = (size_t)depth * sizeof(struct nvme_cqe);
		/* Rings must be page aligned and physically contiguous (CAP.CQR): DMA memory is,
		 * per allocation. A message-based transport has rings of its own. */
		qp->sq = unvme_dma_zalloc(sq_bytes, c->page_size);
		qp->cq = unvme_dma_zalloc(cq_bytes, c->page_size);
	}
	qp->reqs = calloc(depth, sizeof(*qp->reqs));
	if ((!qp->msg && (!qp->sq || !qp->cq)) || !qp->reqs) {
		qpair_free(qp);
		return unvme_fail(-ENOMEM, "no memory for a queue pair of depth %u", depth);
	}
	qp->sq_iova = unvme_dma_iova(qp->sq);
	qp->cq_iova = unvme_dma_iova((void *)qp->cq);
	/* the free list, lowest command id first */
	qp->free_head = REQ_NONE;
	for (uint32_t i = depth - 1; i-- > 0;) {
		qp->reqs[i].next_free = qp->free_head;
		qp->free_head = (uint16_t)i;
	}
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

/* A message-based transport's submission: the tracker is made ACTIVE first, because once the
 * transport has queued the command its completion may be reaped at once (by a split queue's
 * poller, or by a transport that completes it on the spot). */
static int msg_submit(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf, size_t len,
		      unvme_cmd_cb cb, void *arg)
{
	uint16_t cid = claim_req(qp);
	if (unlikely(cid == REQ_NONE))
		return -EAGAIN;
	if (unlikely(len > qp->ctrlr->max_xfer)) {
		unclaim_req(qp, cid);
		return unvme_fail(-EINVAL, "transfer of %zu bytes exceeds the controller's maximum of %u",
				  len, qp->ctrlr->max_xfer);
	}
	activate_req(qp, cid, cmd->opc, cb, arg);
	count_up(&qp->nsubmitted);
	int rc = qp->msg->qp_submit(qp, cid, cmd, buf, len);
	if (unlikely(rc)) {
		/* nothing was queued: the tracker goes back as if never taken */
		atomic_store_explicit(&qp->nsubmitted,
				      atomic_load_explicit(&qp->nsubmitted, memory_order_relaxed) - 1,
				      memory_order_relaxed);
		set_req_state(&qp->reqs[cid], REQ_FREE);
		unclaim_req(qp, cid);
	}
	return rc;
}

void qpair_complete(struct unvme_qpair *qp, const struct nvme_cqe *cpl)
{
	uint16_t cid = cpl->cid;
	if (unlikely(cid >= qp->depth - 1u || req_state(&qp->reqs[cid]) == REQ_FREE))
		return;
	struct unvme_req *req = &qp->reqs[cid];
	unvme_cmd_cb cb = req->cb;
	void *arg = req->arg;
	release_req(qp, cid);
	if (cb)
		cb(arg, cpl);
}

UNVME_API int unvme_qpair_submit(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf,
				 size_t len, unvme_cmd_cb cb, void *arg)
{
	if (unlikely(qp->msg != NULL))
		return msg_submit(qp, cmd, buf, len, cb, arg);
	if (unlikely(atomic_load_explicit(&qp->failed, memory_order_relaxed))) {
		/* after a reset the queue is rebuilt by its owner, here or in its next poll */
		int rc = qp->split ? split_failed(qp) : qpair_rebuild(qp);
		if (rc)
			return rc;
	}
	uint16_t cid = claim_req(qp);
	if (unlikely(cid == REQ_NONE))
		return -EAGAIN;
	struct unvme_req *req = &qp->reqs[cid];
	struct nvme_sqe *sqe = &qp->sq[qp->sq_tail];
	*sqe = *cmd;
	sqe->cid = cid;
	sqe->flags &= 0x3u; /* keep FUSE; PSDT 0 = PRPs */
	if (len) {
		int rc = len > qp->ctrlr->max_xfer ? -E2BIG : prp_build(qp, req, sqe, buf, len);
		if (unlikely(rc)) {
			unclaim_req(qp, cid);
			if (rc == -E2BIG)
				return unvme_fail(-EINVAL, "transfer of %zu bytes exceeds the "
						  "controller's maximum of %u", len, qp->ctrlr->max_xfer);
			return rc == -EINVAL ? unvme_fail(rc, "data buffer %p (%zu bytes) is not "
							  "dword-aligned DMA memory from unvme_dma_alloc",
							  buf, len)
					     : rc;
		}
	}
	/* With no buffer the caller's DPTR passes through: Create I/O SQ/CQ carry the ring there. */
	activate_req(qp, cid, cmd->opc, cb, arg);
	if (unlikely(++qp->sq_tail == qp->depth))
		qp->sq_tail = 0;
	count_up(&qp->nsubmitted);
	if (qp->split)
		atomic_store_explicit(&qp->sq_tail_pub, qp->sq_tail, memory_order_release);
	else
		qp->unrung++;
	return 0;
}

/* A split queue's doorbell: rung by the poller at each poll and by the submitter when it
 * wants, so two threads may ring. Under ring_lock the tail written only moves forward; a side
 * that finds the lock taken leaves it: the holder, or the poller's next poll, rings what it
 * published (the poller keeps polling while commands are outstanding). */
static void ring_split(struct unvme_qpair *qp)
{
	if (atomic_flag_test_and_set_explicit(&qp->ring_lock, memory_order_acquire))
		return;
	/* acquire: the entries up to the published tail are written */
	uint16_t t = atomic_load_explicit(&qp->sq_tail_pub, memory_order_acquire);
	if (t != qp->rung_tail) {
		qp->rung_tail = t;
		qp->write32(qp->bus, qp->sq_db, t);
	}
	atomic_flag_clear_explicit(&qp->ring_lock, memory_order_release);
}

UNVME_API void unvme_qpair_ring(struct unvme_qpair *qp)
{
	if (unlikely(qp->msg != NULL)) {
		qp->msg->qp_ring(qp);
		return;
	}
	if (qp->split) {
		ring_split(qp);
		return;
	}
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
	if (unlikely(qp->msg != NULL))
		return qp->msg->qp_poll(qp, max);
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
		if (unlikely(cid >= qp->depth - 1u || req_state(&qp->reqs[cid]) == REQ_FREE)) {
			/* A completion for nothing we sent: a device bug; consume it rather than
			 * corrupt a tracker. */
			moved = true;
			continue;
		}
		struct unvme_req *req = &qp->reqs[cid];
		unvme_cmd_cb cb = req->cb;
		void *arg = req->arg;
		release_req(qp, cid);
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
	if (unlikely(atomic_load_explicit(&qp->failed, memory_order_relaxed))) {
		int rc = qp->split ? split_failed(qp) : qpair_rebuild(qp);
		if (rc)
			return rc == -EAGAIN ? (int)n : rc; /* a reset under way: nothing to reap yet */
	}
	return (int)n;
}

void qpair_fail_outstanding(struct unvme_qpair *qp, uint8_t sct, uint8_t sc)
{
	uint32_t ntrk = qp->depth - 1u;
	for (uint32_t cid = 0; cid < ntrk; cid++) {
		struct unvme_req *req = &qp->reqs[cid];
		if (req_state(req) == REQ_FREE)
			continue;
		struct nvme_cqe cpl = {
			.sqid = qp->qid,
			.cid = (uint16_t)cid,
			.status = NVME_CQE_STATUS(sct, sc),
		};
		unvme_cmd_cb cb = req->cb;
		void *arg = req->arg;
		release_req(qp, (uint16_t)cid);
		if (cb)
			cb(arg, &cpl);
	}
}

/*
 * A command that outlives the timeout gets an Abort. If it outlives a second timeout, the
 * queue is fenced: deleting the SQ on the device guarantees it will not touch the command's
 * buffers any more, the outstanding commands complete with ABORTED_SQ_DELETION, and the queue
 * is created again. A controller fatal status is handled by recovery.c instead. A split queue is not created again: its SQ tail
 * belongs to a submitter running on another thread, which this one cannot rewind, so the
 * queue fails and its owner destroys it.
 */
static void recover_queue(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->recovering = true;
	int rc = ctrlr_delete_io_queues(c, qp);
	if (qp->split)
		qp->failed = 1; /* first, so no submission follows the ones failed below */
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	if (!qp->split) {
		qpair_reset_rings(qp);
		if (rc == 0)
			rc = ctrlr_create_io_queues(c, qp);
		if (rc != 0)
			qp->failed = 1;
	}
	qp->recovering = false;
}

static void scan_timeouts(struct unvme_qpair *qp, uint64_t now)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->last_scan_ms = now;
	if (qp->qid != 0) {
		if (ctrlr_fatal_now(c) || c->failed) {
			/* reset the controller from here; this queue is rebuilt at the end of the poll */
			ctrlr_recover_fatal(c);
			qp->failed = 1;
			return;
		}
	}
	if (outstanding(qp) == 0 || qp->recovering)
		return;
	uint32_t ntrk = qp->depth - 1u;
	bool fence = false;
	for (uint32_t cid = 0; cid < ntrk; cid++) {
		struct unvme_req *req = &qp->reqs[cid];
		uint8_t state = req_state(req);
		if (state == REQ_FREE)
			continue;
		if (req->seen_ms == 0) {
			req->seen_ms = now;
			continue;
		}
		if (now - req->seen_ms < qp->timeout_ms)
			continue;
		if (state == REQ_ACTIVE && qp->qid != 0) {
			set_req_state(req, REQ_ABORT_SENT);
			req->seen_ms = now;
			bool aborted = false;
			if (unvme_abort(c, qp->qid, (uint16_t)cid, &aborted) != 0 || !aborted)
				fence = true;
		} else if (state == REQ_ABORT_SENT) {
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
			/* I/O queues notice a fatal status in their poll; the admin queue's caller
			 * must not sit out its whole timeout on a controller that stopped */
			if (qp->qid == 0 && ctrlr_fatal_now(qp->ctrlr))
				return unvme_fail(-EIO, "%s: controller fatal status (CSTS.CFS) while "
						  "waiting for an admin command", qp->ctrlr->devid);
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
	if (qp->split)
		return unvme_fail(-EINVAL, "queue %u is split between a submitter and a poller: "
				  "submit, ring and let the poller complete", qp->qid);
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
		if (!s.done && req_state(&qp->reqs[cid]) != REQ_FREE)
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
	return outstanding(qp);
}
