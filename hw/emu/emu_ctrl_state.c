/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's life cycle as the host drives it through CC (NVMe Base 2.0, 3.5
 * "Controller Initialization", 3.6 "Shutdown Processing", 3.7.2 "Controller Reset"):
 *
 *  - CC.EN 0 -> 1: check the admin queue and CC configuration; valid: CSTS.RDY = 1. Invalid:
 *    CSTS.CFS = 1 and RDY stays 0 (the host must clear CC.EN to recover).
 *  - CC.EN 1 -> 0 (Controller Reset): I/O queues deleted, commands in flight dropped, admin
 *    queue reset, RDY and CFS cleared, features back to their saved or default values, a
 *    firmware image committed "activate at next reset" becomes active.
 *  - CC.SHN = 01b or 10b: written data made durable, CSTS.SHST = 10b, clean shutdown recorded
 *    in the state file (the next power-on does not count an unsafe shutdown).
 * While enabled, CC writes change only EN and SHN; other fields keep their values.
 */
#include "emu_ctrl.h"

static void set_csts(struct emu_ctrl *c, uint32_t clear, uint32_t set)
{
	uint32_t v = atomic_load_explicit(&c->csts, memory_order_relaxed);
	atomic_store_explicit(&c->csts, (v & ~clear) | set, memory_order_release);
}

/* The CC and admin queue checks of CC.EN 0 -> 1. Returns false for a configuration a
 * controller cannot run with. */
static bool config_valid(struct emu_ctrl *c, uint32_t cc, struct nvme_sqe **asq, struct nvme_cqe **acq,
			 uint32_t *sq_entries, uint32_t *cq_entries)
{
	uint32_t aqa = atomic_load_explicit(&c->aqa, memory_order_relaxed);
	uint64_t asq_addr = atomic_load_explicit(&c->asq, memory_order_relaxed);
	uint64_t acq_addr = atomic_load_explicit(&c->acq, memory_order_relaxed);
	*sq_entries = NVME_AQA_ASQS(aqa) + 1;
	*cq_entries = NVME_AQA_ACQS(aqa) + 1;
	/* a queue needs at least two entries (one is always empty) */
	if (*sq_entries < 2 || *cq_entries < 2)
		return false;
	if ((asq_addr | acq_addr) & (EMU_PAGE_SIZE - 1))
		return false;
	if (NVME_CC_MPS(cc) != 0 || NVME_CC_AMS(cc) != 0)
		return false;
	uint32_t css = NVME_CC_CSS(cc);
	if (css != NVME_CC_CSS_NVM && css != NVME_CC_CSS_IOCS && css != NVME_CC_CSS_ADMIN)
		return false;
	/* entry sizes may still be 0 (set before creating I/O queues) or exactly ours */
	if ((NVME_CC_IOSQES(cc) && NVME_CC_IOSQES(cc) != NVME_SQES_LOG2) ||
	    (NVME_CC_IOCQES(cc) && NVME_CC_IOCQES(cc) != NVME_CQES_LOG2))
		return false;
	*asq = (struct nvme_sqe *)emu_iommu_translate(&c->iommu, asq_addr,
						      (uint64_t)*sq_entries * sizeof(struct nvme_sqe));
	*acq = (struct nvme_cqe *)emu_iommu_translate(&c->iommu, acq_addr,
						      (uint64_t)*cq_entries * sizeof(struct nvme_cqe));
	return *asq && *acq;
}

static void enable(struct emu_ctrl *c, uint32_t cc)
{
	struct nvme_sqe *asq;
	struct nvme_cqe *acq;
	uint32_t sq_entries, cq_entries;
	if (!config_valid(c, cc, &asq, &acq, &sq_entries, &cq_entries)) {
		set_csts(c, NVME_CSTS_RDY, NVME_CSTS_CFS);
		return;
	}
	struct emu_cq *cq = &c->cq[0];
	cq->ring = acq;
	cq->size = cq_entries;
	cq->tail = 0;
	cq->reserved = 0;
	cq->phase = 1;
	cq->live = true;
	cq->locked = true; /* I/O threads post deferred Abort completions here */
	cq->nr_sqs = 1;
	atomic_store_explicit(&cq->head_db, 0, memory_order_relaxed);
	atomic_store_explicit(&cq->db_limit, cq_entries, memory_order_release);
	struct emu_sq *sq = &c->sq[0];
	sq->ring = asq;
	sq->size = sq_entries;
	sq->head = 0;
	sq->cq = cq;
	sq->live = true;
	atomic_store_explicit(&sq->tail_db, 0, memory_order_relaxed);
	atomic_store_explicit(&sq->db_limit, sq_entries, memory_order_release);
	c->acq_backlog_len = 0;

	/* CC.CSS = 110b enables the I/O command sets of the selected profile (zone commands);
	 * 000b the NVM command set only */
	for (uint32_t i = 0; i < c->nr_ns; i++)
		emu_ns_set_command_sets(c->ns[i], NVME_CC_CSS(cc) == NVME_CC_CSS_IOCS);
	set_csts(c, NVME_CSTS_CFS | NVME_CSTS_SHST_SET(3), NVME_CSTS_RDY);
	atomic_store_explicit(&c->running, true, memory_order_release);

	/* running again after a clean shutdown: a crash from now on is an unsafe shutdown */
	if (c->has_state && !c->nv.running) {
		c->nv.running = true;
		emu_ctrl_persist(c);
	}
}

void emu_ctrl_teardown_queues(struct emu_ctrl *c)
{
	for (uint32_t qid = 1; qid < c->nr_qids; qid++)
		if (c->sq[qid].live)
			emu_sq_delete(c, &c->sq[qid], false);
	for (uint32_t qid = 0; qid < c->nr_qids; qid++) {
		struct emu_cq *cq = &c->cq[qid];
		atomic_store_explicit(&cq->db_limit, 0, memory_order_release);
		cq->live = false;
		cq->nr_sqs = 0;
		cq->locked = false;
		atomic_store_explicit(&cq->first_sq, 0, memory_order_relaxed);
	}
	struct emu_sq *asq = &c->sq[0];
	atomic_store_explicit(&asq->db_limit, 0, memory_order_release);
	asq->live = false;
	emu_spin_lock(&c->cq[0].lock);
	c->acq_backlog_len = 0;
	emu_spin_unlock(&c->cq[0].lock);
	/* commands in flight are dropped without completions */
	emu_latency_clear(c);
	emu_dropped_clear(c);
	atomic_store(&c->aborts_outstanding, 0);
	emu_aer_reset(c);
	c->io_queue_created = false;
	c->nr_active_sqs = 0;
}

static void reset(struct emu_ctrl *c)
{
	atomic_store(&c->running, false);
	emu_ctrl_teardown_queues(c);
	emu_faults_clear(c);
	emu_fw_reset(c);
	emu_features_reset(c);
	for (uint32_t i = 0; i < c->nr_ns; i++)
		emu_ns_reset(c->ns[i]);  /* KV iterators are volatile */
	set_csts(c, NVME_CSTS_RDY | NVME_CSTS_CFS, 0);
}

static void shutdown_ctrl(struct emu_ctrl *c)
{
	/* 3.6: complete outstanding writes to media before reporting the shutdown complete */
	emu_io_quiesce(c);
	for (uint32_t i = 0; i < c->nr_ns; i++)
		emu_ns_sync(c->ns[i]);
	emu_io_unquiesce(c);
	set_csts(c, NVME_CSTS_SHST_SET(3), NVME_CSTS_SHST_SET(NVME_CSTS_SHST_COMPLETE));
	if (c->has_state) {
		c->nv.running = false;
		emu_ctrl_persist(c);
	}
}

void emu_ctrl_cc_write(struct emu_ctrl *c, uint32_t val)
{
	pthread_mutex_lock(&c->lock);
	uint32_t old = atomic_load_explicit(&c->cc, memory_order_relaxed);
	bool was_en = old & NVME_CC_EN, en = val & NVME_CC_EN;
	uint32_t shn_mask = NVME_CC_SHN_SET(3);
	bool shn_new = NVME_CC_SHN(val) && !NVME_CC_SHN(old);
	if (was_en && en) {
		/* fields other than SHN must not change while enabled: keep the old ones */
		atomic_store_explicit(&c->cc, (old & ~shn_mask) | (val & shn_mask), memory_order_relaxed);
	} else {
		atomic_store_explicit(&c->cc, val, memory_order_relaxed);
		if (!was_en && en)
			enable(c, val);
		else if (was_en && !en)
			reset(c);
	}
	if (shn_new)
		shutdown_ctrl(c);
	pthread_mutex_unlock(&c->lock);
}

void emu_ctrl_fatal(struct emu_ctrl *c)
{
	atomic_store(&c->running, false);
	set_csts(c, 0, NVME_CSTS_CFS);
}
