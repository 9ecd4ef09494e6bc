/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbell registers (NVMe Base 2.0, 3.1.24/3.1.25): SQ y Tail at 1000h + (2y) * stride and
 * CQ y Head at 1000h + (2y + 1) * stride, stride = 4 << CAP.DSTRD.
 *
 * A write to the doorbell of a queue that does not exist, or of a value not below the queue
 * size, is ignored, recorded in the error log and reported through an Asynchronous Event
 * ("Write to Invalid Doorbell Register" / "Invalid Doorbell Write Value", 5.2.1 Figure 146).
 *
 * Inline mode: an SQ tail write processes the new entries right here on the host's thread;
 * a CQ head write resumes SQs that stopped on that full CQ. Thread mode: the values are only
 * stored (and the engine woken if it sleeps); the engine polls them like hardware.
 */
#include "emu_ctrl.h"

static __attribute__((cold, noinline)) void invalid_doorbell(struct emu_ctrl *c, uint32_t off,
							     enum emu_event ev)
{
	pthread_mutex_lock(&c->lock);
	emu_errlog_record_doorbell(c, off);
	emu_aer_raise(c, ev);
	pthread_mutex_unlock(&c->lock);
}

static __attribute__((noinline)) void admin_sq_run(struct emu_ctrl *c)
{
	pthread_mutex_lock(&c->lock);
	emu_admin_run(c, UINT32_MAX);
	pthread_mutex_unlock(&c->lock);
}

/* Inlined into emu_doorbell_write with every call it makes a tail call (the rare ones are out
 * of line), so that the I/O SQ's doorbell, once a command at QD 1, saves no registers. */
static inline void sq_tail_write(struct emu_ctrl *c, uint32_t qid, uint32_t off, uint32_t val)
{
	struct emu_sq *sq = &c->sq[qid];
	uint32_t limit = atomic_load_explicit(&sq->db_limit, memory_order_acquire);
	if (__builtin_expect(val >= limit, 0)) {
		invalid_doorbell(c, off, limit ? EMU_EVENT_INVALID_DB_VALUE : EMU_EVENT_INVALID_DB_REG);
		return;
	}
	atomic_store_explicit(&sq->tail_db, val, memory_order_release);
	if (c->p.mode != EMU_MODE_INLINE) {
		emu_engine_kick(c); /* it may sleep */
		return;
	}
	if (qid)
		emu_sq_run_inline(c, sq);
	else
		admin_sq_run(c);
}

static __attribute__((noinline)) void cq_head_write(struct emu_ctrl *c, uint32_t qid,
						    uint32_t off, uint32_t val)
{
	struct emu_cq *cq = &c->cq[qid];
	uint32_t limit = atomic_load_explicit(&cq->db_limit, memory_order_acquire);
	if (__builtin_expect(val >= limit, 0)) {
		invalid_doorbell(c, off, limit ? EMU_EVENT_INVALID_DB_VALUE : EMU_EVENT_INVALID_DB_REG);
		return;
	}
	if (c->p.mode != EMU_MODE_INLINE) {
		atomic_store_explicit(&cq->head_db, val, memory_order_release);
		emu_engine_kick(c); /* an SQ may wait for room in this CQ */
		return;
	}
	/* Sequentially consistent, pairing with emu_sq_run marking an SQ blocked on this full
	 * CQ: either the SQ's fetcher sees the new head, or this thread sees its flag and
	 * resumes it. */
	atomic_store_explicit(&cq->head_db, val, memory_order_seq_cst);
	if (qid == 0) {
		pthread_mutex_lock(&c->lock);
		emu_acq_drain(c);
		emu_admin_run(c, UINT32_MAX);
		pthread_mutex_unlock(&c->lock);
		return;
	}
	uint16_t sqid = atomic_load_explicit(&cq->first_sq, memory_order_acquire);
	/* the list may change under us (admin on another thread): bound the walk */
	for (uint32_t hops = 0; sqid && sqid < c->nr_qids && hops < c->nr_qids; hops++) {
		struct emu_sq *sq = &c->sq[sqid];
		if (atomic_load_explicit(&sq->blocked, memory_order_seq_cst))
			emu_sq_run_inline(c, sq);
		sqid = atomic_load_explicit(&sq->next_on_cq, memory_order_acquire);
	}
}

void emu_doorbell_write(struct emu_ctrl *c, uint32_t off, uint32_t val)
{
	uint32_t rel = off - NVME_REG_DBS;
	uint32_t shift = 2 + c->dstrd;
	if (rel & ((1u << shift) - 1))
		return; /* between doorbells: nothing is there */
	uint32_t idx = rel >> shift;
	uint32_t qid = idx >> 1;
	if (qid >= c->nr_qids)
		return; /* past the last queue's doorbells */
	/* a controller that is not ready (or has failed) does not look at doorbells */
	if (!atomic_load_explicit(&c->running, memory_order_acquire))
		return;
	if (idx & 1u)
		cq_head_write(c, qid, off, val);
	else
		sq_tail_write(c, qid, off, val);
}
