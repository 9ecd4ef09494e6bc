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
#include <string.h>

#include "emu_ctrl.h"
#include "hw/emu/ns/nvm_fast.h"

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
		struct emu_io_ctx io = { .ctrl = c, .iommu = &c->iommu, .stats = &sq->stats };
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

static void ns_run(struct emu_ctrl *c, struct emu_sq *sq, struct emu_ns *ns,
		   const struct nvme_sqe *cmd, struct emu_result *r, struct emu_ns **commit)
{
	struct emu_io_ctx io = { .ctrl = c, .iommu = &c->iommu, .stats = &sq->stats };
	r->status = emu_ns_execute(ns, cmd, &io);
	r->dw0 = io.dw0;
	r->dw1 = io.dw1;
	*commit = io.commit;
	if (__builtin_expect(r->status != 0, 0)) {
		r->lba = io.err_lba;
		r->param_loc = param_loc_for(r->status);
	}
}

/* The completion of a command that succeeded with DW0 and DW1 0, with nothing to record. */
static inline void emu_post_ok(struct emu_sq *sq, uint16_t cid)
{
	struct emu_cq *cq = sq->cq;
	if (cq->locked)
		emu_spin_lock(&cq->lock);
	emu_cq_write(cq, 0, 0, (uint16_t)sq->head, sq->qid, cid, 0);
	if (cq->locked)
		emu_spin_unlock(&cq->lock);
}

/* The completion of a command: now, or when the latency model says (thread mode). */
static void io_post(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
		    struct emu_result *r)
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
		if (!first || emu_ns_sync(ns) == 0)
			continue;
		for (uint32_t j = i; j < b->n; j++)
			if (b->e[j].ns == ns)
				emu_fail(&b->e[j].r, EMU_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT),
					 EMU_PLOC_NONE);
	}
	for (uint32_t i = 0; i < b->n; i++)
		io_post(c, sq, &b->e[i].cmd, &b->e[i].r);
	b->n = 0;
}

/* A completion: held in the batch when the command left its namespace to make durable. */
static void io_post_after(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			  struct emu_result *r, struct emu_ns *commit, struct commit_batch *b)
{
	if (__builtin_expect(commit == NULL || b == NULL, 1)) {
		io_post(c, sq, cmd, r);
		return;
	}
	if (b->n == BATCH_MAX)
		batch_commit(c, sq, b);
	b->e[b->n].ns = commit;
	b->e[b->n].r = *r;
	b->e[b->n].cmd = *cmd;
	b->n++;
}

/* After a namespace executed a command, unless it simply succeeded inline: the error log's
 * fields, a vendor KV command that went to an NVM namespace, the completion. */
static void io_finish(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
		      struct emu_ns *ns, const struct emu_io_ctx *io, uint16_t st,
		      struct commit_batch *b)
{
	struct emu_result r = { .status = st, .dw0 = io->dw0, .dw1 = io->dw1,
				.param_loc = EMU_PLOC_NONE };
	struct emu_ns *commit = io->commit;
	if (st != 0) {
		r.lba = io->err_lba;
		r.param_loc = param_loc_for(st);
		/* a vendor KV command whose keyspace NSID names an NVM namespace */
		struct emu_ns *kv;
		if (st == EMU_ST_INVALID_OPCODE && emu_ns_csi(ns) != NVME_CSI_KV &&
		    (kv = kv_vendor_target(c, cmd->opc)) != NULL) {
			r = (struct emu_result){ .param_loc = EMU_PLOC_NONE };
			ns_run(c, sq, kv, cmd, &r, &commit);
		}
	}
	io_post_after(c, sq, cmd, &r, commit, b);
}

/* The completion of a Read or Write that failed on the inline path (a media error): its
 * opcode, CID and NSID are in the first word of the entry. */
static __attribute__((noinline)) void inline_failed(struct emu_ctrl *c, struct emu_sq *sq,
						    uint64_t w0, struct emu_ns *ns,
						    const struct emu_io_ctx *io, uint16_t st)
{
	struct nvme_sqe cmd = { .opc = (uint8_t)w0, .cid = (uint16_t)(w0 >> 16),
				.nsid = (uint32_t)(w0 >> 32) };
	io_finish(c, sq, &cmd, ns, io, st, NULL); /* a Read or Write: nothing to commit */
}

/* Everything but a plain command to an active namespace: injected faults, bad flags, NSIDs
 * that name no namespace. */
static void io_execute_slow(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			    struct emu_ns *ns, bool faults, struct commit_batch *b)
{
	struct emu_result r = { .param_loc = EMU_PLOC_NONE };
	struct emu_ns *commit = NULL;
	if (faults) {
		switch (emu_fault_apply(c, sq, cmd, &r)) {
		case EMU_FAULT_DROPPED:
			return;
		case EMU_FAULT_FAILED:
			io_post(c, sq, cmd, &r);
			return;
		case EMU_FAULT_NONE:
			break;
		}
	}
	if (cmd->flags != 0) {
		/* fused operations (Identify FUSES = 0) and SGLs (SGLS = 0) are not supported;
		 * bits 5:2 are reserved */
		r.status = EMU_ST_INVALID_FIELD;
		r.param_loc = EMU_PLOC_FLAGS;
	} else if (ns != NULL) {
		struct emu_io_ctx io = { .ctrl = c, .iommu = &c->iommu, .stats = &sq->stats };
		uint16_t st = emu_ns_execute(ns, cmd, &io);
		io_finish(c, sq, cmd, ns, &io, st, b);
		return;
	} else if ((ns = kv_vendor_target(c, cmd->opc)) != NULL) {
		ns_run(c, sq, ns, cmd, &r, &commit);
	} else if (cmd->nsid == NSID_ALL && cmd->opc == NVME_CMD_FLUSH) {
		flush_all(c, sq, cmd, &r);
	} else {
		/* NSID 0, an inactive NSID or the broadcast value for anything but Flush */
		r.status = EMU_ST_INVALID_NS;
		r.param_loc = EMU_PLOC_NSID;
	}
	io_post_after(c, sq, cmd, &r, commit, b);
}

static inline void io_execute(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			      struct commit_batch *b)
{
	uint32_t nsid = cmd->nsid;
	struct emu_ns *ns = nsid - 1u < EMU_MAX_NS ? c->ns[nsid - 1u] : NULL;
	bool faults = atomic_load_explicit(&c->faults, memory_order_relaxed) != 0;

	/* The I/O path: an active namespace, no injected faults, no latency model, and a
	 * command that succeeds: its completion goes out with nothing else to record. */
	if (__builtin_expect(!faults && cmd->flags == 0 && ns != NULL, 1)) {
		struct emu_io_ctx io = { .ctrl = c, .iommu = &c->iommu, .stats = &sq->stats };
		uint16_t st = emu_ns_execute(ns, cmd, &io);
		if (__builtin_expect(st == 0 && io.dw0 == 0 && io.dw1 == 0 && !io.commit &&
				     !c->lat.enabled, 1)) {
			emu_post_ok(sq, cmd->cid);
			return;
		}
		io_finish(c, sq, cmd, ns, &io, st, b);
		return;
	}
	io_execute_slow(c, sq, cmd, ns, faults, b);
}

/* An SQE read as eight 8-byte loads, as the driver writes it (lib/driver/qpair_submit.h): in
 * inline mode the entry was written a moment ago on this core, and loads that match the
 * stores' width are served from the store buffer. */
static inline struct nvme_sqe sqe_fetch(const struct nvme_sqe *slot)
{
	const volatile uint64_t *s = (const volatile uint64_t *)slot;
	uint64_t q[8];
	for (int i = 0; i < 8; i++)
		q[i] = s[i];
	struct nvme_sqe cmd;
	memcpy(&cmd, q, sizeof(cmd));
	return cmd;
}

/* A fetched command that is not a plain Read or Write (or one the inline path left): a copy
 * of the whole entry, so that the command executed is one consistent command even if the host
 * scribbles on the slot meanwhile. Out of line: the fetch loop keeps its registers. */
static __attribute__((noinline)) void run_general(struct emu_ctrl *c, struct emu_sq *sq,
						  const struct nvme_sqe *slot, struct commit_batch *b)
{
	struct nvme_sqe cmd = sqe_fetch(slot);
	if (__builtin_expect(sq->nr_aborts != 0, 0) && emu_abort_check_fetched(c, sq, cmd.cid))
		return;
	io_execute(c, sq, &cmd, b);
}

/* How many commands ahead the fetch loop loads a flat namespace's data. */
#define PREFETCH 4u

/* Starts loading the data of the command k entries after head, when it is a plain Read or
 * Write of ns (a hint: the command itself is checked when its turn comes). */
static inline void prefetch_cmd(const struct emu_ctrl *c, const struct emu_sq *sq,
				const struct emu_ns *ns, const uint8_t *flat, unsigned shift,
				uint32_t head, uint32_t k, uint32_t size)
{
	uint32_t at = head + k;
	if (at >= size)
		at -= size;
	const volatile uint64_t *w = (const volatile uint64_t *)&sq->ring[at];
	uint64_t w0 = w[0];
	uint32_t nsid = (uint32_t)(w0 >> 32);
	if (nsid - 1u < EMU_MAX_NS && c->ns[nsid - 1u] == ns && !(w0 & 0xff00u))
		emu_nvm_prefetch(ns->be, flat, shift, (uint8_t)w0, w[5], (uint32_t)w[6]);
}

/*
 * The fetch loop, for the engine (emu_sq_run, a budget per pass) and for a host thread that
 * rang the doorbell in inline mode (emu_sq_run_inline), which it is inlined into: at QD 1
 * every command pays this function's entry and exit, so the inline caller does not pay a
 * second call frame.
 *
 * once: stop after a batch that took every command up to the tail read (inline mode). The
 * engine looks at the tail again, as it sleeps on nothing newer; a host thread need not: every
 * tail written meanwhile is followed by its writer's own emu_sq_run_inline, which waits for
 * this SQ's fetch lock and then runs those commands (sq_tail_write), so reading the tail a
 * second time only found nothing at QD 1 (about 15 instructions a command).
 */
static inline __attribute__((always_inline)) uint32_t sq_run(struct emu_ctrl *c,
							     struct emu_sq *sq, uint32_t budget,
							     bool once)
{
	struct emu_cq *cq = sq->cq;
	const uint32_t size = sq->size;
	uint32_t head = sq->head, done = 0;

	if (atomic_load_explicit(&sq->blocked, memory_order_relaxed))
		atomic_store_explicit(&sq->blocked, 0, memory_order_relaxed);
	/* the context of the Reads and Writes run inline (their dw0 and dw1 stay 0) */
	uint32_t gen = atomic_load_explicit(&c->iommu.gen, memory_order_acquire);
	if (__builtin_expect(sq->tlb_gen != gen, 0)) {
		sq->tlb.len = 0;
		sq->tlb_gen = gen;
	}
	struct emu_io_ctx io = { .ctrl = c, .iommu = &c->iommu, .tlb = &sq->tlb, .stats = &sq->stats };
	struct emu_xfer x;
	struct commit_batch b;
	b.n = 0;
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
		/* Plain Reads and Writes of this batch run inline unless the device has injected
		 * faults, a latency model or aborts waiting (looked at once per batch: all three
		 * change only under the controller lock, between commands) */
		bool plain = !atomic_load_explicit(&c->faults, memory_order_relaxed) &&
			     !c->lat.enabled && sq->nr_aborts == 0;
		/* With more than one command fetched and the first one's namespace flat in
		 * memory, the data of the command PREFETCH places ahead starts loading while this
		 * one runs (nvm_fast.h): a device's DMA engine keeps several transfers in flight */
		const struct emu_ns *pf_ns = NULL;
		const uint8_t *pf_flat = NULL;
		unsigned pf_shift = 0;
		if (n > 1 && plain) {
			uint64_t w0 = ((const volatile uint64_t *)&sq->ring[head])[0];
			uint32_t nsid = (uint32_t)(w0 >> 32);
			if (nsid - 1u < EMU_MAX_NS && (pf_ns = c->ns[nsid - 1u]) != NULL &&
			    (pf_flat = emu_nvm_flat(pf_ns, &pf_shift)) != NULL) {
				/* the first commands' data now, the rest one command ahead each */
				for (uint32_t j = 0; j < PREFETCH && j < n; j++)
					prefetch_cmd(c, sq, pf_ns, pf_flat, pf_shift, head, j, size);
			}
		}
		for (uint32_t i = 0; i < n; i++) {
			if (pf_flat && i + PREFETCH < n)
				prefetch_cmd(c, sq, pf_ns, pf_flat, pf_shift, head, PREFETCH, size);
			const struct nvme_sqe *slot = &sq->ring[head];
			head = head + 1 == size ? 0 : head + 1;
			sq->head = head;
			/* A plain Read or Write runs on the words it needs, each read once (8-byte
			 * loads, as the driver writes them: lib/driver/qpair_submit.h): OPC, FUSE,
			 * PSDT, CID, NSID | PRP1 | SLBA | CDW12. */
			const volatile uint64_t *w = (const volatile uint64_t *)slot;
			uint64_t w0 = w[0];
			uint32_t nsid = (uint32_t)(w0 >> 32);
			struct emu_ns *ns;
			uint16_t st;
			if (__builtin_expect(plain && ((w0 >> 8) & 0xffu) == 0 && nsid - 1u < EMU_MAX_NS, 1) &&
			    (ns = c->ns[nsid - 1u]) != NULL &&
			    emu_nvm_rw_inline(ns, (uint8_t)w0, w[3], w[5], (uint32_t)w[6], &io, &x, &st)) {
				if (__builtin_expect(st == 0, 1)) {
					emu_post_ok(sq, (uint16_t)(w0 >> 16));
				} else {
					inline_failed(c, sq, w0, ns, &io, st);
				}
				continue;
			}
			run_general(c, sq, slot, &b);
		}
		if (b.n)
			batch_commit(c, sq, &b);
		done += n;
		if (once && n == pending)
			break;
	}
	return done;
}

uint32_t emu_sq_run(struct emu_ctrl *c, struct emu_sq *sq, uint32_t budget)
{
	return sq_run(c, sq, budget, false);
}

void emu_sq_run_inline(struct emu_ctrl *c, struct emu_sq *sq)
{
	emu_spin_lock(&sq->busy);
	/* a reset or a deletion may have happened while this thread waited for the lock */
	if (__builtin_expect(sq->live && atomic_load_explicit(&c->running, memory_order_relaxed), 1))
		(void)sq_run(c, sq, UINT32_MAX, true);
	emu_spin_unlock(&sq->busy);
}
