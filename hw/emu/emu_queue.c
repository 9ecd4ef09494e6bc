/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue bookkeeping (NVMe Base 2.0, 3.3 "Queue Mechanics"): the SQ and CQ tables, CQ slot
 * reservation, which SQs feed which CQ (several SQs may share one CQ), and "quiescing" the
 * fetchers of a CQ or of every I/O queue so that admin actions can touch their state.
 */
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

int emu_queues_alloc(struct emu_ctrl *c)
{
	c->nr_qids = c->p.max_queues + 1;
	c->sq = aligned_alloc(64, c->nr_qids * sizeof(struct emu_sq));
	c->cq = aligned_alloc(64, c->nr_qids * sizeof(struct emu_cq));
	c->active_sqs = calloc(c->nr_qids, sizeof(uint16_t));
	if (!c->sq || !c->cq || !c->active_sqs) {
		emu_queues_free(c);
		return -1;
	}
	memset(c->sq, 0, c->nr_qids * sizeof(struct emu_sq));
	memset(c->cq, 0, c->nr_qids * sizeof(struct emu_cq));
	for (uint32_t q = 0; q < c->nr_qids; q++) {
		c->sq[q].qid = (uint16_t)q;
		c->cq[q].qid = (uint16_t)q;
		atomic_init(&c->sq[q].busy, 0);
		atomic_init(&c->sq[q].blocked, 0);
		atomic_init(&c->sq[q].next_on_cq, 0);
		atomic_init(&c->sq[q].db_limit, 0);
		atomic_init(&c->sq[q].tail_db, 0);
		atomic_init(&c->cq[q].first_sq, 0);
		atomic_init(&c->cq[q].lock, 0);
		atomic_init(&c->cq[q].db_limit, 0);
		atomic_init(&c->cq[q].head_db, 0);
	}
	c->nr_active_sqs = 0;
	return 0;
}

void emu_queues_free(struct emu_ctrl *c)
{
	free(c->sq);
	free(c->cq);
	free(c->active_sqs);
	c->sq = NULL;
	c->cq = NULL;
	c->active_sqs = NULL;
}

uint32_t emu_cq_reserve_locked(struct emu_cq *cq, uint32_t want)
{
	emu_spin_lock(&cq->lock);
	uint32_t n = emu_cq_space(cq);
	if (n > want)
		n = want;
	cq->reserved += n;
	emu_spin_unlock(&cq->lock);
	return n;
}

void emu_cq_quiesce(struct emu_ctrl *c, struct emu_cq *cq)
{
	for (uint16_t q = atomic_load_explicit(&cq->first_sq, memory_order_relaxed); q;
	     q = atomic_load_explicit(&c->sq[q].next_on_cq, memory_order_relaxed))
		emu_spin_lock(&c->sq[q].busy);
}

void emu_cq_unquiesce(struct emu_ctrl *c, struct emu_cq *cq)
{
	for (uint16_t q = atomic_load_explicit(&cq->first_sq, memory_order_relaxed); q;
	     q = atomic_load_explicit(&c->sq[q].next_on_cq, memory_order_relaxed))
		emu_spin_unlock(&c->sq[q].busy);
}

void emu_io_quiesce(struct emu_ctrl *c)
{
	for (uint32_t q = 1; q < c->nr_qids; q++)
		if (c->sq[q].live)
			emu_spin_lock(&c->sq[q].busy);
}

void emu_io_unquiesce(struct emu_ctrl *c)
{
	for (uint32_t q = 1; q < c->nr_qids; q++)
		if (c->sq[q].live)
			emu_spin_unlock(&c->sq[q].busy);
}

static void stats_add(struct emu_io_stats *to, const struct emu_io_stats *s)
{
	to->read_cmds += s->read_cmds;
	to->write_cmds += s->write_cmds;
	to->bytes_read += s->bytes_read;
	to->bytes_written += s->bytes_written;
}

void emu_io_stats_sum(struct emu_ctrl *c, struct emu_io_stats *out)
{
	*out = c->retired;
	for (uint32_t q = 1; q < c->nr_qids; q++) {
		struct emu_sq *sq = &c->sq[q];
		if (!sq->live)
			continue;
		emu_spin_lock(&sq->busy);
		stats_add(out, &sq->stats);
		emu_spin_unlock(&sq->busy);
	}
}

/* The SQ's counters go to the device total when it is deleted: SMART counts survive it. */
void emu_sq_retire_stats(struct emu_ctrl *c, struct emu_sq *sq)
{
	stats_add(&c->retired, &sq->stats);
	memset(&sq->stats, 0, sizeof(sq->stats));
}

/*
 * A CQ fed by one SQ in inline mode is written only by that SQ's fetcher, without a lock.
 * Once a second SQ feeds it, two host threads may post at once, so its tail gets the spin
 * lock. The flag changes only while every fetcher of the CQ is quiesced.
 */
static void update_locked(struct emu_ctrl *c, struct emu_cq *cq)
{
	if (cq->qid != 0)
		cq->locked = c->p.mode == EMU_MODE_INLINE && cq->nr_sqs > 1;
}

void emu_cq_attach_sq(struct emu_ctrl *c, struct emu_cq *cq, struct emu_sq *sq)
{
	emu_cq_quiesce(c, cq);
	emu_spin_lock(&sq->busy);
	atomic_store_explicit(&sq->next_on_cq, atomic_load_explicit(&cq->first_sq, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&cq->first_sq, sq->qid, memory_order_release);
	cq->nr_sqs++;
	update_locked(c, cq);
	emu_cq_unquiesce(c, cq); /* includes sq, now first on the list */
}

/* Caller has quiesced cq (which includes sq). sq's busy lock stays held: the caller
 * releases it, since sq is no longer on the list that emu_cq_unquiesce walks. */
void emu_cq_detach_sq(struct emu_ctrl *c, struct emu_cq *cq, struct emu_sq *sq)
{
	uint16_t first = atomic_load_explicit(&cq->first_sq, memory_order_relaxed);
	uint16_t next = atomic_load_explicit(&sq->next_on_cq, memory_order_relaxed);
	if (first == sq->qid) {
		atomic_store_explicit(&cq->first_sq, next, memory_order_release);
	} else {
		for (uint16_t q = first; q; q = atomic_load_explicit(&c->sq[q].next_on_cq, memory_order_relaxed)) {
			if (atomic_load_explicit(&c->sq[q].next_on_cq, memory_order_relaxed) == sq->qid) {
				atomic_store_explicit(&c->sq[q].next_on_cq, next, memory_order_release);
				break;
			}
		}
	}
	atomic_store_explicit(&sq->next_on_cq, 0, memory_order_relaxed);
	cq->nr_sqs--;
	update_locked(c, cq);
}

void emu_active_sq_add(struct emu_ctrl *c, uint16_t qid)
{
	c->active_sqs[c->nr_active_sqs++] = qid;
}

void emu_active_sq_remove(struct emu_ctrl *c, uint16_t qid)
{
	for (uint32_t i = 0; i < c->nr_active_sqs; i++) {
		if (c->active_sqs[i] == qid) {
			c->active_sqs[i] = c->active_sqs[--c->nr_active_sqs];
			return;
		}
	}
}
