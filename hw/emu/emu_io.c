/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O command path: fetch from an I/O SQ, check the NSID, hand the command to its
 * namespace, post the completion (NVMe Base 2.0, 4.1 queue mechanics, 4.2 SQE, 4.6 CQE).
 *
 * This is the per-I/O overhead of the device, measured by the null namespace in inline mode:
 * no allocation, no locks for an SQ whose CQ is not shared, no clock reads unless a latency
 * model is on. CQ slots are claimed for a whole batch before fetching, so a command is
 * fetched only when its completion is sure to fit: with the CQ full the SQ stops (4.1: the
 * controller does not post to a full CQ) and resumes when the host moves the CQ head.
 *
 * Group commit: a command that changed a store promising durability at completion (a KV
 * namespace on a file or a host engine: what a KV SSD with power-loss protection promises)
 * leaves its namespace in io.commit. Its completion waits in the batch below; before the batch
 * is posted, each such namespace is made durable once (emu_ns_sync), so one sync covers every
 * store and delete fetched together. A failed sync fails them all with Write Fault.
 */
#include "emu_ctrl.h"

#define NSID_ALL 0xffffffffu

/* Best known location of the failing field for the error log, by status. */
static uint16_t param_loc_for(uint16_t status)
{
	switch (status & 0x0ffeu) {
	case NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE):
		return 0;
	case NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE):
		return EMU_PLOC_CDW10;
	case NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID):
		return EMU_PLOC_PRP1;
	default:
		return EMU_PLOC_NONE;
	}
}

/* Flush with NSID FFFFFFFFh applies to every namespace (Identify VWC bits 2:1 = 11b). */
static void flush_all(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
		      struct emu_result *r)
{
	for (uint32_t i = 0; i < c->nr_ns && !r->status; i++) {
		struct nvme_sqe one = *cmd;
		one.nsid = i + 1;
		struct emu_io_ctx io = { .ctrl = c, .stats = &sq->stats };
		r->status = emu_ns_execute(c->ns[i], &one, &io);
	}
}

/*
 * The Samsung KV vendor opcodes carry a keyspace id in NSID (0 or 1), not a namespace: they
 * go to the controller's first KV namespace, which judges the NSID (Invalid Keyspace ID
 * above 1). Looked up only on paths that are already failing, so NVM I/O pays nothing.
 */
static struct emu_ns *kv_vendor_target(const struct emu_ctrl *c, uint8_t opc)
{
	if (!nvme_kvv_opcode(opc))
		return NULL;
	for (uint32_t i = 0; i < c->nr_ns; i++)
		if (emu_ns_csi(c->ns[i]) == NVME_CSI_KV)
			return c->ns[i];
	return NULL;
}

/* Completions held back until their namespaces are durable (group commit, above). */
#define BATCH_MAX 64u
struct commit_batch {
	uint32_t n;
	struct {
		struct emu_ns *ns;
		struct emu_result r;
		struct nvme_sqe cmd;  /* the latency model times a completion by its command */
	} e[BATCH_MAX];
};

static void post(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
		 const struct emu_result *r)
{
	if (c->lat.enabled)
		emu_latency_submit(c, sq, cmd, r);
	else
		emu_complete(c, sq, cmd->cid, r, cmd->nsid);
}

/* Makes every namespace of the batch durable once, then posts the batch's completions. */
static void batch_commit(struct emu_ctrl *c, struct emu_sq *sq, struct commit_batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		struct emu_ns *ns = b->e[i].ns;
		bool first = true;
		for (uint32_t j = 0; j < i && first; j++)
			first = b->e[j].ns != ns;
		if (!first)
			continue;
		if (emu_ns_sync(ns) == 0)
			continue;
		for (uint32_t j = i; j < b->n; j++)
			if (b->e[j].ns == ns)
				emu_fail(&b->e[j].r, EMU_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT),
					 EMU_PLOC_NONE);
	}
	for (uint32_t i = 0; i < b->n; i++)
		post(c, sq, &b->e[i].cmd, &b->e[i].r);
	b->n = 0;
}

static void ns_run(struct emu_ctrl *c, struct emu_sq *sq, struct emu_ns *ns,
		   const struct nvme_sqe *cmd, struct emu_result *r, struct emu_ns **commit)
{
	struct emu_io_ctx io = { .ctrl = c, .stats = &sq->stats };
	r->status = emu_ns_execute(ns, cmd, &io);
	r->dw0 = io.dw0;
	r->dw1 = io.dw1;
	*commit = io.commit;
	if (__builtin_expect(r->status != 0, 0)) {
		r->lba = io.err_lba;
		r->param_loc = param_loc_for(r->status);
	}
}

static inline void io_execute(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			      struct commit_batch *b)
{
	struct emu_result r = { .param_loc = EMU_PLOC_NONE };
	struct emu_ns *commit = NULL;
	uint32_t nsid = cmd->nsid;
	struct emu_ns *ns = nsid - 1u < EMU_MAX_NS ? c->ns[nsid - 1u] : NULL;

	if (__builtin_expect(atomic_load_explicit(&c->faults, memory_order_relaxed) != 0, 0)) {
		switch (emu_fault_apply(c, sq, cmd, &r)) {
		case EMU_FAULT_DROPPED:
			return;
		case EMU_FAULT_FAILED:
			goto complete;
		case EMU_FAULT_NONE:
			break;
		}
	}
	if (__builtin_expect(cmd->flags != 0, 0)) {
		/* fused operations (Identify FUSES = 0) and SGLs (SGLS = 0) are not supported;
		 * bits 5:2 are reserved */
		r.status = EMU_ST_INVALID_FIELD;
		r.param_loc = EMU_PLOC_FLAGS;
	} else if (__builtin_expect(ns != NULL, 1)) {
		struct emu_io_ctx io = { .ctrl = c, .stats = &sq->stats };
		r.status = emu_ns_execute(ns, cmd, &io);
		r.dw0 = io.dw0;
		r.dw1 = io.dw1;
		commit = io.commit;
		if (__builtin_expect(r.status != 0, 0)) {
			r.lba = io.err_lba;
			r.param_loc = param_loc_for(r.status);
			/* a vendor KV command whose keyspace NSID names an NVM namespace */
			struct emu_ns *kv;
			if (r.status == EMU_ST_INVALID_OPCODE && emu_ns_csi(ns) != NVME_CSI_KV &&
			    (kv = kv_vendor_target(c, cmd->opc)) != NULL) {
				r = (struct emu_result){ .param_loc = EMU_PLOC_NONE };
				ns_run(c, sq, kv, cmd, &r, &commit);
			}
		}
	} else if ((ns = kv_vendor_target(c, cmd->opc)) != NULL) {
		ns_run(c, sq, ns, cmd, &r, &commit);
	} else if (nsid == NSID_ALL && cmd->opc == NVME_CMD_FLUSH) {
		flush_all(c, sq, cmd, &r);
	} else {
		/* NSID 0, an inactive NSID or the broadcast value for anything but Flush */
		r.status = EMU_ST_INVALID_NS;
		r.param_loc = EMU_PLOC_NSID;
	}
complete:
	if (__builtin_expect(commit != NULL, 0)) {
		if (b->n == BATCH_MAX)
			batch_commit(c, sq, b);
		b->e[b->n].ns = commit;
		b->e[b->n].r = r;
		b->e[b->n].cmd = *cmd;
		b->n++;
		return;
	}
	post(c, sq, cmd, &r);
}

uint32_t emu_sq_run(struct emu_ctrl *c, struct emu_sq *sq, uint32_t budget)
{
	struct emu_cq *cq = sq->cq;
	const uint32_t size = sq->size;
	uint32_t head = sq->head, done = 0;
	struct commit_batch b;
	b.n = 0;

	if (atomic_load_explicit(&sq->blocked, memory_order_relaxed))
		atomic_store_explicit(&sq->blocked, 0, memory_order_relaxed);
	while (done < budget) {
		uint32_t tail = atomic_load_explicit(&sq->tail_db, memory_order_acquire);
		if (__builtin_expect(tail >= size, 0))
			break; /* a stale value from an earlier queue with this QID: never index with it */
		uint32_t pending = tail >= head ? tail - head : tail + size - head;
		if (pending == 0)
			break;
		if (pending > budget - done)
			pending = budget - done;
		uint32_t n = emu_cq_reserve(cq, pending);
		if (n == 0) {
			/* CQ full: announce it, then look again, so that a CQ head doorbell written
			 * meanwhile on another thread is not missed (pairs with cq_head_write; the
			 * seq_cst load orders the re-check after the flag, and the acquire load in
			 * the re-check cannot see an older head than it) */
			atomic_store_explicit(&sq->blocked, 1, memory_order_seq_cst);
			(void)atomic_load_explicit(&cq->head_db, memory_order_seq_cst);
			n = emu_cq_reserve(cq, pending);
			if (n == 0)
				break;
			atomic_store_explicit(&sq->blocked, 0, memory_order_relaxed);
		}
		for (uint32_t i = 0; i < n; i++) {
			/* copy the entry: the namespace must see one consistent command even if the
			 * host scribbles on the slot meanwhile */
			struct nvme_sqe cmd = sq->ring[head];
			head = head + 1 == size ? 0 : head + 1;
			sq->head = head;
			if (__builtin_expect(sq->nr_aborts != 0, 0) && emu_abort_check_fetched(c, sq, cmd.cid))
				continue;
			io_execute(c, sq, &cmd, &b);
		}
		if (b.n)
			batch_commit(c, sq, &b);
		done += n;
	}
	return done;
}

void emu_sq_run_inline(struct emu_ctrl *c, struct emu_sq *sq)
{
	emu_spin_lock(&sq->busy);
	/* a reset or a deletion may have happened while this thread waited for the lock */
	if (__builtin_expect(sq->live && atomic_load_explicit(&c->running, memory_order_relaxed), 1))
		emu_sq_run(c, sq, UINT32_MAX);
	emu_spin_unlock(&sq->busy);
}
