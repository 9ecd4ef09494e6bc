/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin queue: fetch, dispatch by opcode, post (NVMe Base 2.0, 5 "Admin Command Set").
 * Runs under the controller lock (inline mode: on the host thread that rang the admin
 * doorbell; thread mode: in the engine). Commands are processed only while the controller is
 * ready, as on hardware.
 *
 * The admin CQ also receives completions from other threads (deferred Aborts, posted when
 * their target is fetched) and completions that wait for an event (AERs). Those never claim a
 * slot in advance: when the CQ is full they wait in a small backlog, drained as the host frees
 * entries. A new admin command is fetched only if a slot is free beyond the backlog, so the
 * backlog holds at most AERL+1 + ACL+1 + 1 entries (< EMU_ACQ_BACKLOG).
 */
#include "emu_ctrl.h"

typedef void (*admin_handler)(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);

static const admin_handler handlers[256] = {
	[NVME_ADM_DELETE_SQ] = emu_cmd_delete_sq,
	[NVME_ADM_CREATE_SQ] = emu_cmd_create_sq,
	[NVME_ADM_GET_LOG_PAGE] = emu_cmd_get_log_page,
	[NVME_ADM_DELETE_CQ] = emu_cmd_delete_cq,
	[NVME_ADM_CREATE_CQ] = emu_cmd_create_cq,
	[NVME_ADM_IDENTIFY] = emu_cmd_identify,
	[NVME_ADM_ABORT] = emu_cmd_abort,
	[NVME_ADM_SET_FEATURES] = emu_cmd_set_features,
	[NVME_ADM_GET_FEATURES] = emu_cmd_get_features,
	[NVME_ADM_ASYNC_EVENT] = emu_cmd_async_event,
	[NVME_ADM_FW_COMMIT] = emu_cmd_fw_commit,
	[NVME_ADM_FW_DOWNLOAD] = emu_cmd_fw_download,
	[NVME_ADM_FORMAT_NVM] = emu_cmd_format,
	[NVME_ADM_EMU_FAULT] = emu_cmd_fault,
};

bool emu_admin_opcode_supported(uint8_t opc)
{
	return handlers[opc] != NULL;
}

/* Writes one entry; caller holds the admin CQ lock and has checked for space. */
static void acq_write(struct emu_ctrl *c, uint16_t cid, uint16_t status, uint32_t dw0)
{
	struct emu_cq *cq = &c->cq[0];
	cq->reserved++; /* emu_cq_write consumes one reservation */
	emu_cq_write(cq, dw0, (uint16_t)c->sq[0].head, 0, cid, status);
}

void emu_acq_post(struct emu_ctrl *c, uint16_t cid, uint16_t status, uint32_t dw0)
{
	struct emu_cq *cq = &c->cq[0];
	emu_spin_lock(&cq->lock);
	if (cq->live) {
		if (c->acq_backlog_len == 0 && emu_cq_space(cq) > 0) {
			acq_write(c, cid, status, dw0);
		} else if (c->acq_backlog_len < EMU_ACQ_BACKLOG) {
			c->acq_backlog[c->acq_backlog_len++] =
				(struct emu_acq_backlog_entry){ .dw0 = dw0, .cid = cid, .status = status };
		}
		/* A full backlog cannot happen (see the top of this file). */
	}
	emu_spin_unlock(&cq->lock);
}

void emu_acq_drain(struct emu_ctrl *c)
{
	struct emu_cq *cq = &c->cq[0];
	emu_spin_lock(&cq->lock);
	uint32_t i = 0;
	while (cq->live && i < c->acq_backlog_len && emu_cq_space(cq) > 0) {
		const struct emu_acq_backlog_entry *e = &c->acq_backlog[i++];
		acq_write(c, e->cid, e->status, e->dw0);
	}
	for (uint32_t j = i; j < c->acq_backlog_len; j++)
		c->acq_backlog[j - i] = c->acq_backlog[j];
	c->acq_backlog_len -= i;
	emu_spin_unlock(&cq->lock);
}

/* Fetches the next admin command if there is one and room for its completion. */
static bool fetch(struct emu_ctrl *c, struct nvme_sqe *cmd)
{
	struct emu_sq *sq = &c->sq[0];
	struct emu_cq *cq = &c->cq[0];
	uint32_t tail = atomic_load_explicit(&sq->tail_db, memory_order_acquire);
	if (tail >= sq->size || tail == sq->head)
		return false;
	bool ok = false;
	emu_spin_lock(&cq->lock);
	if (emu_cq_space(cq) > c->acq_backlog_len) {
		*cmd = sq->ring[sq->head];
		sq->head = sq->head + 1 == sq->size ? 0 : sq->head + 1;
		ok = true;
	}
	emu_spin_unlock(&cq->lock);
	return ok;
}

static void execute(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r)
{
	admin_handler h = handlers[cmd->opc];
	if (!h) {
		r->status = EMU_ST_INVALID_OPCODE;
		r->param_loc = 0;
	} else if (cmd->flags) {
		/* no fused admin commands; SGLs are not used for admin commands over PCIe (4.2) */
		r->status = EMU_ST_INVALID_FIELD;
		r->param_loc = EMU_PLOC_FLAGS;
	} else {
		h(c, cmd, r);
	}
}

uint32_t emu_admin_run(struct emu_ctrl *c, uint32_t budget)
{
	struct emu_sq *sq = &c->sq[0];
	uint32_t n = 0;
	if (!sq->live)
		return 0;
	emu_acq_drain(c);
	while (n < budget && atomic_load_explicit(&c->running, memory_order_relaxed)) {
		struct nvme_sqe cmd;
		if (!fetch(c, &cmd))
			break;
		n++;
		if (__builtin_expect(c->admin_swallow != 0, 0)) {
			c->admin_swallow--; /* fault injection: fetched and lost for good */
			continue;
		}
		struct emu_result r = { .param_loc = EMU_PLOC_NONE };
		execute(c, &cmd, &r);
		if (r.deferred)
			continue;
		emu_acq_post(c, cmd.cid, r.status, r.dw0);
		if (r.status)
			emu_errlog_record(c, 0, cmd.cid, r.status, r.param_loc, r.lba, cmd.nsid);
	}
	return n;
}
