/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Abort (NVMe Base 2.0, 5.1). CDW10: CID (31:16), SQID (15:0). Completion DW0 bit 0 is
 * cleared when the command was aborted, set when it was not.
 *
 * The target is looked for among the commands in flight (completions the latency model has
 * not posted yet, commands swallowed by the DROP fault): found, it completes at once with
 * Command Abort Requested and so does the Abort. A target still waiting in its SQ (the SQ is
 * stopped on a full CQ, or the engine has not fetched it yet) is marked; the Abort stays
 * outstanding until the target is fetched, which then completes with Command Abort Requested
 * instead of executing, followed by the Abort. Only such outstanding Aborts count against
 * the Abort Command Limit (Identify ACL = 3: four at a time); one more gets Abort Command
 * Limit Exceeded. A command that is not found (already completed, unknown SQ) is not aborted.
 *
 * On the admin queue (SQID 0) the only commands that wait are Asynchronous Event Requests:
 * one that is outstanding is aborted (it completes with Command Abort Requested), so a host
 * that timed out on an AER gets its command slot back without a reset.
 */
#include "emu_ctrl.h"

#define ST_ABORT_REQUESTED EMU_ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED)
#define DW0_NOT_ABORTED 1u

static void complete_target(struct emu_ctrl *c, struct emu_sq *sq, uint16_t cid)
{
	struct emu_result r = { .status = ST_ABORT_REQUESTED, .param_loc = EMU_PLOC_NONE };
	emu_complete(c, sq, cid, &r, 0);
}

/* Is cid among the entries the host has submitted and the device not fetched yet? */
static bool in_sq(const struct emu_sq *sq, uint16_t cid)
{
	uint32_t tail = atomic_load_explicit(&sq->tail_db, memory_order_acquire);
	if (tail >= sq->size)
		return false;
	for (uint32_t i = sq->head; i != tail; i = i + 1 == sq->size ? 0 : i + 1) {
		uint16_t ecid;
		__builtin_memcpy(&ecid, &sq->ring[i].cid, sizeof(ecid));
		if (ecid == cid)
			return true;
	}
	return false;
}

void emu_cmd_abort(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	uint32_t sqid = cmd->cdw10 & 0xffffu;
	uint16_t cid = (uint16_t)(cmd->cdw10 >> 16);
	if (atomic_load(&c->aborts_outstanding) >= EMU_ACL + 1) {
		r->status = EMU_ST(NVME_SCT_CMD, NVME_SC_ABORT_LIMIT);
		return;
	}
	r->dw0 = DW0_NOT_ABORTED;
	if (sqid == 0) {
		if (emu_aer_abort(c, cid))
			r->dw0 = 0;
		return;
	}
	if (sqid >= c->nr_qids || !c->sq[sqid].live)
		return;
	struct emu_sq *sq = &c->sq[sqid];
	emu_cq_quiesce(c, sq->cq);
	if (emu_latency_take(c, (uint16_t)sqid, cid) || emu_dropped_take(c, (uint16_t)sqid, cid)) {
		complete_target(c, sq, cid);
		r->dw0 = 0;
	} else if (in_sq(sq, cid)) {
		bool already = false;
		for (uint32_t i = 0; i < sq->nr_aborts; i++)
			already |= sq->aborts[i].target_cid == cid;
		if (!already && sq->nr_aborts < EMU_ACL + 1) {
			sq->aborts[sq->nr_aborts++] =
				(struct emu_pending_abort){ .target_cid = cid, .abort_cid = cmd->cid };
			atomic_fetch_add(&c->aborts_outstanding, 1);
			r->deferred = true;
		}
	}
	emu_cq_unquiesce(c, sq->cq);
}

bool emu_abort_check_fetched(struct emu_ctrl *c, struct emu_sq *sq, uint16_t cid)
{
	for (uint32_t i = 0; i < sq->nr_aborts; i++) {
		if (sq->aborts[i].target_cid != cid)
			continue;
		uint16_t abort_cid = sq->aborts[i].abort_cid;
		sq->aborts[i] = sq->aborts[--sq->nr_aborts];
		complete_target(c, sq, cid);
		emu_acq_post(c, abort_cid, 0, 0);
		atomic_fetch_sub(&c->aborts_outstanding, 1);
		return true;
	}
	return false;
}

void emu_abort_release_sq(struct emu_ctrl *c, struct emu_sq *sq)
{
	for (uint32_t i = 0; i < sq->nr_aborts; i++) {
		emu_acq_post(c, sq->aborts[i].abort_cid, 0, DW0_NOT_ABORTED);
		atomic_fetch_sub(&c->aborts_outstanding, 1);
	}
	sq->nr_aborts = 0;
}
