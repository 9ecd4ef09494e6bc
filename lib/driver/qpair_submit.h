/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The submission side of a memory-ring queue pair, inline: the trackers (claim, fill, hand
 * back) and Read/Write written straight into the ring. qpair.c builds every other command
 * from these; block.c inlines the Read/Write path into unvme_read and unvme_write, so the I/O
 * path costs one call into the library. See qpair.c for the split-queue rules they follow.
 */
#ifndef UNVME_DRIVER_QPAIR_SUBMIT_H
#define UNVME_DRIVER_QPAIR_SUBMIT_H

#include <errno.h>
#include <stdatomic.h>

#include "lib/common/compiler.h"
#include "ctrlr.h"
#include "dma.h"

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

/*
 * Writes an entry into the ring as eight 8-byte stores. An emulated device in inline mode reads
 * it a moment later on the same core with eight 8-byte loads (hw/emu/emu_io.c), each of which
 * the store buffer then serves; a load spanning stores of other widths (a byte here, a dword
 * there) would wait until they all reached the cache.
 */
static inline void sqe_put(struct nvme_sqe *slot, const uint64_t q[8])
{
	volatile uint64_t *d = (volatile uint64_t *)slot;
	for (int i = 0; i < 8; i++)
		d[i] = q[i];
}

/* The tail moves past the entry just written. */
static inline void sq_advance(struct unvme_qpair *qp)
{
	if (unlikely(++qp->sq_tail == qp->depth))
		qp->sq_tail = 0;
	count_up(&qp->nsubmitted);
}

/* The entry at the tail is complete: its tracker goes ACTIVE and the tail moves on. The
 * doorbell waits for the next ring (or poll). */
static inline void queue_sqe(struct unvme_qpair *qp, uint16_t cid, uint8_t opc, unvme_cmd_cb cb,
			     void *arg)
{
	activate_req(qp, cid, opc, cb, arg);
	sq_advance(qp);
	if (qp->split)
		atomic_store_explicit(&qp->sq_tail_pub, qp->sq_tail, memory_order_release);
	else
		qp->unrung++;
}

/* A Read or Write's entry, as eight 8-byte words (see sqe_put; the host is little-endian,
 * spec.h): OPC, FUSE/PSDT 0, CID, NSID | CDW2-3 | MPTR | PRP1 | PRP2 | CDW10-11 SLBA | CDW12
 * NLB, CDW13 | CDW14-15. first: the bytes from iova to the end of its page. */
static inline void rw_entry_put(struct unvme_qpair *qp, uint16_t cid, uint8_t opc, uint32_t nsid,
				uint64_t slba, uint32_t nlb, uint64_t iova, size_t len,
				uint64_t first)
{
	volatile uint64_t *d = (volatile uint64_t *)&qp->sq[qp->sq_tail];
	d[0] = opc | (uint64_t)cid << 16 | (uint64_t)nsid << 32;
	d[1] = 0;
	d[2] = 0;
	d[3] = iova;
	d[4] = len > first ? iova + first : 0;
	d[5] = slba;
	d[6] = nlb - 1u;
	d[7] = 0;
}

/* Read and Write in every case (qpair.c): what qpair_submit_rw does not take inline. */
int qpair_submit_rw_slow(struct unvme_qpair *qp, uint8_t opc, uint32_t nsid, uint64_t slba,
			 uint32_t nlb, void *buf, size_t len, unvme_cmd_cb cb, void *arg);

/*
 * The I/O path's Read or Write: the common case inline (an unshared memory-ring queue pair in
 * good order, a buffer in the chunk of the last one, data within two pages, a free tracker),
 * every other case in qpair_submit_rw_slow, the same checks in full. The common case makes
 * no call, so the caller's frame saves no registers for one: with the slow cases inline,
 * unvme_read's entry and exit were 21 instructions a command.
 */
static inline int qpair_submit_rw(struct unvme_qpair *qp, uint8_t opc, uint32_t nsid,
				  uint64_t slba, uint32_t nlb, void *buf, size_t len,
				  unvme_cmd_cb cb, void *arg)
{
	const struct dma_xlate_cache *tc = &qp->xlate;
	uintptr_t off = (uintptr_t)buf - tc->va;
	uint16_t cid = qp->free_head;
	if (likely(!qp->split && qp->msg == NULL && qp->fabric == NULL &&
		   !atomic_load_explicit(&qp->failed, memory_order_relaxed) &&
		   len <= qp->ctrlr->max_xfer && off < tc->len &&
		   tc->gen == atomic_load_explicit(&dma_generation, memory_order_acquire) &&
		   cid != REQ_NONE)) {
		uint64_t iova = tc->iova + off;
		uint64_t first = qp->page_size - (iova & (qp->page_size - 1));
		if (likely(tc->len - off >= len && !(iova & 3u) && len <= first + qp->page_size)) {
			qp->free_head = qp->reqs[cid].next_free;
			rw_entry_put(qp, cid, opc, nsid, slba, nlb, iova, len, first);
			/* queue_sqe of an unshared queue (the volatile entry stores make the
			 * compiler read qp->split again) */
			activate_req(qp, cid, opc, cb, arg);
			sq_advance(qp);
			qp->unrung++;
			return 0;
		}
	}
	return qpair_submit_rw_slow(qp, opc, nsid, slba, nlb, buf, len, cb, arg);
}

#endif
