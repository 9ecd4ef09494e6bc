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

#include "lib/common/backoff.h"
#include "lib/common/clock.h"
#include "lib/common/compiler.h"
#include "ctrlr.h"
#include "errmsg.h"
#include "prp.h"
#include "qpair_submit.h"

#define SCAN_INTERVAL_MS 10
#define MAX_POLL_NESTING 8 /* polls from completion callbacks of the same queue pair */

__thread uint32_t qpair_hot_depth;

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

/* A split queue cannot rebuild itself from one side: its owner stops both and calls
 * unvme_qpair_recover. -EAGAIN while a reset is under way. */
int qpair_split_failed(struct unvme_qpair *qp)
{
	if (atomic_load(&qp->ctrlr->resetting))
		return -EAGAIN;
	if (atomic_load(&qp->ctrlr->removed))
		return unvme_fail(-ENODEV, "%s: queue %u: the device was removed; once it is back, "
				  "stop the queue's submitter and poller and call unvme_qpair_recover",
				  qp->ctrlr->devid, qp->qid);
	return unvme_fail(-EIO, "queue %u: %s; stop the queue's submitter and poller and call "
			  "unvme_qpair_recover", qp->qid,
			  qp->ctrlr->failed ? "the controller has failed"
					    : "the queue was lost (controller reset or timeout fence)");
}

void qpair_reset_rings(struct unvme_qpair *qp)
{
	qp->sq_tail = 0;
	qp->cq_head = 0;
	qp->cq_head_rung = 0;
	qp->ncompleted_rung = atomic_load_explicit(&qp->ncompleted, memory_order_relaxed);
	qp->phase = 1;
	qp->unrung = 0;
	atomic_store_explicit(&qp->sq_tail_pub, 0, memory_order_relaxed);
	qp->rung_tail = 0;
	atomic_flag_clear_explicit(&qp->ring_lock, memory_order_relaxed);
	/* A stale entry whose phase bit happens to be 1 would look new after the rewind. */
	if (qp->cq)
		memset((void *)qp->cq, 0, (size_t)qp->depth * sizeof(struct nvme_cqe));
	if (qp->fabric)
		qp->fabric->qp_reset(qp);
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
	if (ctrlr_kind(c) == UNVME_TRANSPORT_FABRICS) {
		/* a fabrics queue: the transport takes over the doorbell (qp->write32, qp->bus) */
		int rc = c->ops->qp_init(qp);
		if (rc) {
			qpair_free(qp);
			return rc;
		}
		qp->fabric = c->ops;
	}
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

void qpair_set_qid(struct unvme_qpair *qp, uint16_t qid)
{
	qp->qid = qid;
	qp->sq_db = nvme_sq_doorbell_offset(qid, qp->ctrlr->dstrd);
	qp->cq_db = nvme_cq_doorbell_offset(qid, qp->ctrlr->dstrd);
}

void qpair_free(struct unvme_qpair *qp)
{
	if (!qp)
		return;
	if (qp->fabric)
		qp->fabric->qp_fini(qp);
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
		/* the queue's recovery is advanced by its owner, here or in its next poll: 0 once
		 * it works or while it is being created again (the entry waits in the ring) */
		int rc;
		if (qp->split) {
			rc = qpair_split_failed(qp);
		} else {
			qpair_hot_depth++;
			rc = recovery_step(qp->ctrlr, qp, false, mono_ms_coarse());
			qpair_hot_depth--;
		}
		if (rc)
			return rc;
	}
	uint16_t cid = claim_req(qp);
	if (unlikely(cid == REQ_NONE))
		return -EAGAIN;
	struct unvme_req *req = &qp->reqs[cid];
	struct nvme_sqe e = *cmd;
	e.cid = cid;
	e.flags &= 0x3u; /* keep FUSE; PSDT 0 = PRPs */
	if (len || qp->fabric) {
		int rc = len > qp->ctrlr->max_xfer ? -E2BIG
			 : qp->fabric	    ? qp->fabric->qp_map(qp, cid, &e, buf, len)
					    : prp_build(qp, req, &e, buf, len);
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
	uint64_t q[8];
	memcpy(q, &e, sizeof(q));
	sqe_put(&qp->sq[qp->sq_tail], q);
	queue_sqe(qp, cid, cmd->opc, cb, arg);
	return 0;
}

/*
 * Read and Write, the I/O path's commands (NVM Command Set 1.0, 3.2.4 and 3.2.6): the entry is
 * written in place in the ring, without the copy through a caller's SQE that
 * unvme_qpair_submit makes. What it does is the same: anything but a memory-ring queue pair
 * in good order, or a transfer that needs a PRP list, goes the general way. The common case
 * of it runs inline in qpair_submit_rw (qpair_submit.h); this is every case.
 */
int qpair_submit_rw_slow(struct unvme_qpair *qp, uint8_t opc, uint32_t nsid, uint64_t slba,
			 uint32_t nlb, void *buf, size_t len, unvme_cmd_cb cb, void *arg)
{
	size_t contig;
	uint64_t iova;
	if (unlikely(qp->msg != NULL || qp->fabric != NULL ||
		     atomic_load_explicit(&qp->failed, memory_order_relaxed) ||
		     len > qp->ctrlr->max_xfer))
		goto general;
	iova = dma_translate_cached(&qp->xlate, buf, &contig);
	uint64_t first = qp->page_size - (iova & (qp->page_size - 1));
	/* not DMA memory, not dword aligned, or more than two pages: the general path says why
	 * or builds the list */
	if (unlikely(iova == UINT64_MAX || contig < len || (iova & 3u) ||
		     len > first + qp->page_size))
		goto general;
	uint16_t cid = claim_req(qp);
	if (unlikely(cid == REQ_NONE))
		return -EAGAIN;
	rw_entry_put(qp, cid, opc, nsid, slba, nlb, iova, len, first);
	queue_sqe(qp, cid, opc, cb, arg);
	return 0;
general:;
	struct nvme_sqe cmd = {
		.opc = opc,
		.nsid = nsid,
		.cdw10 = (uint32_t)slba,
		.cdw11 = (uint32_t)(slba >> 32),
		.cdw12 = nlb - 1,
	};
	return unvme_qpair_submit(qp, &cmd, buf, len, cb, arg);
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

/* unvme_qpair_ring, inline in the poll: the exported function is not inlined (in the shared
 * library a call to it goes through the PLT), and at QD 1, where every poll rings, its call
 * and frame were 8 of the driver's instructions a command. */
static inline void qpair_ring(struct unvme_qpair *qp)
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

UNVME_API void unvme_qpair_ring(struct unvme_qpair *qp)
{
	qpair_ring(qp);
}

static int poll_refused(struct unvme_qpair *qp)
{
	if (qp->recovering)
		return unvme_fail(-EDEADLK, "queue %u: unvme_qpair_poll from a callback of the "
				  "queue's own recovery", qp->qid);
	return unvme_fail(-EDEADLK, "queue %u: unvme_qpair_poll nested more than %d deep in "
			  "completion callbacks of the same queue pair", qp->qid, MAX_POLL_NESTING);
}

/*
 * A CQE as two 8-byte loads, the second half (SQHD, SQID, CID, status with the phase tag) first
 * with acquire: the emulated device writes it as two 8-byte stores, the second last
 * (hw/emu/emu_ctrl.h), so in inline mode, where the host reads an entry a moment after it was
 * written on the same core, both loads are served from the store buffer.
 */
static inline uint64_t cqe_high(volatile struct nvme_cqe *e)
{
	return atomic_load_explicit((_Atomic uint64_t *)((volatile uint64_t *)e + 1),
				    memory_order_acquire);
}

static inline struct nvme_cqe cqe_get(volatile struct nvme_cqe *e, uint64_t hi)
{
	uint64_t lo = *(volatile uint64_t *)e;
	return (struct nvme_cqe){ .dw0 = (uint32_t)lo, .dw1 = (uint32_t)(lo >> 32),
				  .sqhd = (uint16_t)hi, .sqid = (uint16_t)(hi >> 16),
				  .cid = (uint16_t)(hi >> 32), .status = (uint16_t)(hi >> 48) };
}

/*
 * Whether the CQ head doorbell is worth writing after a poll that reaped n entries. The device
 * needs it only to know which CQ slots it may post to again, so an unshared queue pair tells
 * it lazily: when the entries reaped since the last write plus the commands outstanding could
 * fill half the CQ, or when a poll found nothing (a device that stopped on a CQ it believes
 * full then goes on). At low queue depths that saves a doorbell per command; a deep queue, or
 * a split one (whose poller would have to read the submitter's counter) and a fabric's (whose
 * transport may act on it) ring each time.
 */
static inline bool cq_head_due(const struct unvme_qpair *qp, uint32_t n)
{
	if (qp->split || qp->fabric || n == 0)
		return true;
	/* unrung + outstanding = (ncompleted - ncompleted_rung) + (nsubmitted - ncompleted):
	 * one subtraction (unsigned, the counters wrap) instead of the distance round the ring,
	 * which a poll at QD 1 paid on every command. Commands completed without an entry (given
	 * back by a recovery) count as unrung, which only rings sooner; an entry for nothing we
	 * sent does not, and a CQ that such entries fill is rung by the poll that finds nothing. */
	return atomic_load_explicit(&qp->nsubmitted, memory_order_relaxed) - qp->ncompleted_rung >=
	       qp->depth / 2u;
}

/*
 * Reaping re-reads the head and phase from the queue pair for every entry, and moves them
 * before the entry's callback runs: a callback may poll the same queue pair again (a
 * synchronous command inside a callback), and that nested poll reaps the entries after this
 * one. The CQ head doorbell is written once, by whichever poll last moved the head.
 */
UNVME_API int unvme_qpair_poll(struct unvme_qpair *qp, uint32_t max)
{
	if (unlikely(qp->msg != NULL))
		return qp->msg->qp_poll(qp, max);
	if (unlikely(qp->poll_depth) && (qp->poll_depth >= MAX_POLL_NESTING || qp->recovering))
		return poll_refused(qp);
	qp->poll_depth++;
	qpair_ring(qp);
	if (qp->fabric)
		qp->fabric->qp_pump(qp); /* completions that arrived go into the CQ ring */
	uint32_t n = 0;
	/* A failed queue (being fenced, lost to a reset, being created again) reaps nothing:
	 * what it had outstanding completes once, from the recovery, when the queue works again
	 * (a fabric's pump delivers its own commands' errors) */
	bool lost = unlikely(atomic_load_explicit(&qp->failed, memory_order_relaxed) != 0) &&
		    !qp->fabric;
	while (!lost) {
		uint16_t head = qp->cq_head;
		volatile struct nvme_cqe *e = &qp->cq[head];
		/* acquire: the rest of the entry is read only after its phase says it is complete */
		uint64_t hi = cqe_high(e);
		if ((uint16_t)(hi >> 48 & 1u) != qp->phase)
			break;
		struct nvme_cqe cpl = cqe_get(e, hi);
		if (unlikely(++head == qp->depth)) {
			head = 0;
			qp->phase ^= 1u;
		}
		qp->cq_head = head;
		uint16_t cid = cpl.cid;
		if (unlikely(cid >= qp->depth - 1u || req_state(&qp->reqs[cid]) == REQ_FREE)) {
			/* A completion for nothing we sent: a device bug; consume it rather than
			 * corrupt a tracker. */
			continue;
		}
		struct unvme_req *req = &qp->reqs[cid];
		unvme_cmd_cb cb = req->cb;
		void *arg = req->arg;
		release_req(qp, cid);
		if (cb)
			cb(arg, &cpl);
		if (++n == max)
			break;
	}
	if (qp->cq_head != qp->cq_head_rung && cq_head_due(qp, n)) {
		qp->cq_head_rung = qp->cq_head;
		qp->ncompleted_rung = atomic_load_explicit(&qp->ncompleted, memory_order_relaxed);
		qp->write32(qp->bus, qp->cq_db, qp->cq_head);
	}
	int rc = (int)n;
	/* Timeouts and recovery belong to the outermost poll, not to one inside a callback. */
	if (qp->poll_depth == 1) {
		/* A poller that keeps finding nothing gives the CPU away now and then
		 * (lib/common/backoff.h): what it waits for (a device thread, the submitter of a
		 * split queue, another process's device) may need this very CPU when threads
		 * outnumber CPUs, and an application's poll loop need not know. */
		if (n) {
			qp->idle_polls = 0;
		} else if (unlikely(++qp->idle_polls % BACKOFF_YIELD_EVERY == 0)) {
			sched_yield();
		}
		/* One slow-path entry for what a poll may find: the timeout scan (at most every
		 * 10 ms; a fabrics transport times its commands out itself: a command that
		 * outlives its timeout ends the connection, Abort and Delete SQ do not reach a
		 * fabric's lost command), a fabric's failed association, a failed queue. It
		 * records and advances recovery.c's state machines without waiting. */
		bool scan = false;
		uint64_t now = 0;
		if (unlikely((++qp->poll_count & 255u) == 0) && qp->timeout_ms && !qp->fabric) {
			now = mono_ms_coarse();
			scan = now - qp->last_scan_ms >= SCAN_INTERVAL_MS;
		}
		if (unlikely(scan || atomic_load_explicit(&qp->failed, memory_order_relaxed) ||
			     (qp->fabric != NULL && qp->qid != 0 &&
			      atomic_load_explicit(&qp->ctrlr->failed, memory_order_relaxed)))) {
			qpair_hot_depth++;
			int frc = recovery_step(qp->ctrlr, qp, scan, now ? now : mono_ms_coarse());
			qpair_hot_depth--;
			if (frc && frc != -EAGAIN) /* -EAGAIN: a reset or fence under way */
				rc = frc;
		}
	}
	qp->poll_depth--;
	return rc;
}

static void complete_locally(struct unvme_qpair *qp, uint16_t cid, uint8_t sct, uint8_t sc)
{
	struct unvme_req *req = &qp->reqs[cid];
	struct nvme_cqe cpl = {
		.sqid = qp->qid,
		.cid = cid,
		.status = NVME_CQE_STATUS(sct, sc),
	};
	unvme_cmd_cb cb = req->cb;
	void *arg = req->arg;
	req->doomed = false;
	release_req(qp, cid);
	if (cb)
		cb(arg, &cpl);
}

void qpair_fail_outstanding(struct unvme_qpair *qp, uint8_t sct, uint8_t sc)
{
	uint32_t ntrk = qp->depth - 1u;
	for (uint32_t cid = 0; cid < ntrk; cid++)
		if (req_state(&qp->reqs[cid]) != REQ_FREE)
			complete_locally(qp, (uint16_t)cid, sct, sc);
}

void qpair_doom_outstanding(struct unvme_qpair *qp)
{
	uint32_t ntrk = qp->depth - 1u;
	for (uint32_t cid = 0; cid < ntrk; cid++)
		qp->reqs[cid].doomed = req_state(&qp->reqs[cid]) != REQ_FREE;
}

void qpair_complete_doomed(struct unvme_qpair *qp)
{
	uint32_t ntrk = qp->depth - 1u;
	for (uint32_t cid = 0; cid < ntrk; cid++)
		if (qp->reqs[cid].doomed && req_state(&qp->reqs[cid]) != REQ_FREE)
			complete_locally(qp, (uint16_t)cid, NVME_SCT_GENERIC,
					 NVME_SC_ABORTED_SQ_DELETION);
}

/*
 * A synchronous wait polls with the tree's one backoff (lib/common/backoff.h): a yield every
 * few looks that find nothing (whoever completes the command may be waiting for this very
 * CPU: the emulated device's engine or doorbell watcher, another process's device, a
 * completion thread), until WAIT_YIELD_NS; then it sleeps between polls, in growing steps of
 * at most an eighth of the time waited: a command that never completes costs a few wake-ups
 * a second until the queue's timeout recovers it, not a CPU, and one that is merely slow is
 * noticed within an eighth of its latency. The fatal-status check and the timeout scan run
 * from here too (every CHECK_NS), since the polls are rare by then.
 */
#define CHECK_NS (1000 * 1000ull)
static const struct backoff_policy wait_policy = {
	.yield_ns = 10 * 1000 * 1000ull,
	.sleep_min_ns = 50 * 1000ull,
	.sleep_max_ns = 20 * 1000 * 1000ull,
};

int qpair_wait(struct unvme_qpair *qp, volatile int *done, uint32_t timeout_ms)
{
	uint64_t start = mono_ns();
	uint64_t limit_ns = timeout_ms ? (uint64_t)timeout_ms * 1000000u : UINT64_MAX;
	uint64_t last_check = start;
	struct backoff b = {0};
	while (!*done) {
		int rc = unvme_qpair_poll(qp, 0);
		if (rc < 0)
			return rc;
		if (*done)
			break;
		if (rc > 0) {
			backoff_reset(&b);
			continue;
		}
		enum backoff_step step = backoff_wait(&b, &wait_policy);
		if (step == BACKOFF_LOOK && b.looks % BACKOFF_YIELD_EVERY)
			continue; /* (a pause: the clock is read every few looks only) */
		uint64_t now = mono_ns();
		if (now - start >= limit_ns)
			return unvme_fail(-ETIMEDOUT, "queue %u: no completion within %u ms", qp->qid,
					  timeout_ms);
		if (now - last_check >= CHECK_NS) {
			last_check = now;
			/* I/O queues notice a fatal status in their timeout scan; the admin
			 * queue's caller must not sit out its whole timeout on a controller that
			 * stopped (a fabric's connection ends its commands itself) */
			if (qp->qid == 0 && !qp->fabric && ctrlr_fatal_now(qp->ctrlr))
				return unvme_fail(-EIO, "%s: controller fatal status (CSTS.CFS) while "
						  "waiting for an admin command", qp->ctrlr->devid);
			uint64_t ms = mono_ms_coarse();
			if (qp->qid == 0) {
				/* an admin wait runs the recovery steps (it holds the admin lock
				 * the other threads' steps would try) */
				recovery_step(qp->ctrlr, NULL, false, ms);
			} else if (qp->timeout_ms && qp->poll_depth == 0 && !qp->fabric &&
				   ms - qp->last_scan_ms >= SCAN_INTERVAL_MS) {
				(void)recovery_step(qp->ctrlr, qp, true, ms);
			}
		}
		if (step == BACKOFF_SLEEP)
			sleep_us(backoff_sleep_ns(&b, &wait_policy) / 1000);
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
