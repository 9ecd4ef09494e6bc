/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Create / Delete I/O Completion and Submission Queue (NVMe Base 2.0, 5.3-5.6), with every
 * check a controller makes:
 *   QID 0, above the granted count (Number of Queues) or in use .... Invalid Queue Identifier
 *   size 1 entry (QSIZE 0) or above CAP.MQES + 1 ................... Invalid Queue Size
 *   PC = 0 (CAP.CQR = 1: only physically contiguous queues) ......... Invalid Field in Command
 *   CC.IOSQES / IOCQES not 6 / 4 ..................................... Invalid Field in Command
 *   base address not page aligned .................................... PRP Offset Invalid
 *   ring not inside one IOMMU mapping ................................ Invalid Field in Command
 *   SQ's CQID 0 or not an existing I/O CQ ............................ Completion Queue Invalid
 *   IEN = 1 with an interrupt vector past the last ................... Invalid Interrupt Vector
 *   deleting a CQ that SQs still use ................................. Invalid Queue Deletion
 *   deleting a queue that does not exist .............................. Invalid Queue Identifier
 * Deleting an SQ completes its commands in flight with Command Aborted due to SQ Deletion
 * before the Delete command completes. Interrupts are not delivered (hosts poll); IV/IEN are
 * checked and kept for Identify-like completeness only.
 */
#include "emu_ctrl.h"

#define ST_INVALID_QID   EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_QID)
#define ST_INVALID_QSIZE EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_QSIZE)
#define ST_CQ_INVALID    EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_CQ_INVALID)
#define ST_INVALID_IV    EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_INT_VECTOR)
#define ST_INVALID_DEL   EMU_ST_DNR(NVME_SCT_CMD, NVME_SC_INVALID_QUEUE_DELETION)
#define ST_PRP_OFFSET    EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID)

/* Checks shared by both creates; returns the ring's host address or NULL with r filled. */
static void *check_ring(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint32_t entries,
			uint32_t entry_size, uint32_t es_log2_cc, uint32_t es_log2, struct emu_result *r)
{
	if (entries < 2 || entries > c->p.mqes) {
		emu_fail(r, ST_INVALID_QSIZE, EMU_PLOC_CDW10 + 2);
		return NULL;
	}
	if (!(cmd->cdw11 & NVME_CREATE_CQ_PC)) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_CDW11);
		return NULL;
	}
	if (es_log2_cc != es_log2) {
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_NONE);
		return NULL;
	}
	if (cmd->prp1 & (EMU_PAGE_SIZE - 1)) {
		emu_fail(r, ST_PRP_OFFSET, EMU_PLOC_PRP1);
		return NULL;
	}
	void *ring = emu_iommu_translate(&c->iommu, cmd->prp1, (uint64_t)entries * entry_size);
	if (!ring)
		emu_fail(r, EMU_ST_INVALID_FIELD, EMU_PLOC_PRP1);
	return ring;
}

void emu_cmd_create_cq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t qid = cmd->cdw10 & 0xffffu;
	uint32_t entries = (cmd->cdw10 >> 16) + 1;
	uint32_t iv = cmd->cdw11 >> 16;
	bool ien = cmd->cdw11 & NVME_CREATE_CQ_IEN;
	if (qid == 0 || qid > emu_granted_cqs(c) || qid >= c->nr_qids || c->cq[qid].live) {
		emu_fail(r, ST_INVALID_QID, EMU_PLOC_CDW10);
		return;
	}
	uint32_t cc = atomic_load_explicit(&c->cc, memory_order_relaxed);
	struct nvme_cqe *ring = check_ring(c, cmd, entries, sizeof(struct nvme_cqe), NVME_CC_IOCQES(cc),
					   NVME_CQES_LOG2, r);
	if (!ring)
		return;
	/* MSI-X: one vector per queue pair (admin + I/O) */
	if (ien && iv >= c->nr_qids) {
		emu_fail(r, ST_INVALID_IV, EMU_PLOC_CDW11 + 2);
		return;
	}

	struct emu_cq *cq = &c->cq[qid];
	cq->ring = ring;
	cq->size = entries;
	cq->tail = 0;
	cq->reserved = 0;
	cq->phase = 1;
	cq->ien = ien;
	cq->iv = (uint16_t)iv;
	cq->nr_sqs = 0;
	cq->locked = false;
	atomic_store_explicit(&cq->first_sq, 0, memory_order_relaxed);
	atomic_store_explicit(&cq->head_db, 0, memory_order_relaxed);
	emu_dbwin_clear(c, qid, false);
	cq->live = true;
	atomic_store_explicit(&cq->db_limit, entries, memory_order_release);
	c->io_queue_created = true;
}

void emu_cmd_create_sq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t qid = cmd->cdw10 & 0xffffu;
	uint32_t entries = (cmd->cdw10 >> 16) + 1;
	uint32_t cqid = cmd->cdw11 >> 16;
	if (qid == 0 || qid > emu_granted_sqs(c) || qid >= c->nr_qids || c->sq[qid].live) {
		emu_fail(r, ST_INVALID_QID, EMU_PLOC_CDW10);
		return;
	}
	if (cqid == 0 || cqid >= c->nr_qids || !c->cq[cqid].live) {
		emu_fail(r, ST_CQ_INVALID, EMU_PLOC_CDW11 + 2);
		return;
	}
	uint32_t cc = atomic_load_explicit(&c->cc, memory_order_relaxed);
	struct nvme_sqe *ring = check_ring(c, cmd, entries, sizeof(struct nvme_sqe), NVME_CC_IOSQES(cc),
					   NVME_SQES_LOG2, r);
	if (!ring)
		return;

	struct emu_sq *sq = &c->sq[qid];
	struct emu_cq *cq = &c->cq[cqid];
	emu_spin_lock(&sq->busy); /* a stale doorbell thread may still be waiting on it */
	sq->ring = ring;
	sq->size = entries;
	sq->head = 0;
	sq->cq = cq;
	sq->nr_aborts = 0;
	sq->live = true;
	atomic_store_explicit(&sq->blocked, 0, memory_order_relaxed);
	atomic_store_explicit(&sq->tail_db, 0, memory_order_relaxed);
	emu_dbwin_clear(c, qid, true);
	emu_spin_unlock(&sq->busy);
	emu_cq_attach_sq(c, cq, sq);
	emu_active_sq_add(c, (uint16_t)qid);
	/* last: from here on the host's doorbell writes are accepted */
	atomic_store_explicit(&sq->db_limit, entries, memory_order_release);
	c->io_queue_created = true;
}

static void complete_deleted(struct emu_ctrl *c, uint16_t sqid, uint16_t cid)
{
	struct emu_result r = { .status = EMU_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION),
				.param_loc = EMU_PLOC_NONE };
	emu_complete(c, &c->sq[sqid], cid, &r, 0);
}

void emu_sq_delete(struct emu_ctrl *c, struct emu_sq *sq, bool post_aborts)
{
	struct emu_cq *cq = sq->cq;
	atomic_store_explicit(&sq->db_limit, 0, memory_order_release);
	emu_cq_quiesce(c, cq); /* includes sq itself */
	if (post_aborts) {
		emu_latency_take_sq(c, sq->qid, complete_deleted);
		emu_dropped_take_sq(c, sq->qid, complete_deleted);
		emu_abort_release_sq(c, sq);
	}
	sq->nr_aborts = 0;
	sq->live = false;
	emu_sq_retire_stats(c, sq);
	emu_cq_detach_sq(c, cq, sq);
	emu_active_sq_remove(c, sq->qid);
	emu_spin_unlock(&sq->busy);
	emu_cq_unquiesce(c, cq);
}

void emu_cmd_delete_sq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t qid = cmd->cdw10 & 0xffffu;
	if (qid == 0 || qid >= c->nr_qids || !c->sq[qid].live) {
		emu_fail(r, ST_INVALID_QID, EMU_PLOC_CDW10);
		return;
	}
	emu_sq_delete(c, &c->sq[qid], true);
}

void emu_cmd_delete_cq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t qid = cmd->cdw10 & 0xffffu;
	if (qid == 0 || qid >= c->nr_qids || !c->cq[qid].live) {
		emu_fail(r, ST_INVALID_QID, EMU_PLOC_CDW10);
		return;
	}
	struct emu_cq *cq = &c->cq[qid];
	if (cq->nr_sqs) {
		emu_fail(r, ST_INVALID_DEL, EMU_PLOC_CDW10);
		return;
	}
	atomic_store_explicit(&cq->db_limit, 0, memory_order_release);
	cq->live = false;
}
