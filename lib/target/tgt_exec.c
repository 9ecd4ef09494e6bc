/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which commands may have their data taken, and where a command whose data is in goes:
 * fabrics commands, then (once connected, enabled and authenticated) admin or I/O. The gate is
 * passed at capsule time (before any buffer or R2T) and again here: the controller may have
 * been disabled while the data came.
 */
#include "unvme/spec/fabrics.h"
#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

int tgt_cmd_admissible(const struct tgt_conn *c, const struct nvme_sqe *sqe)
{
	if (sqe->opc == NVME_FABRICS_OPC) {
		uint8_t fctype = ((const struct nvmf_cmd *)sqe)->fctype;
		return fctype == NVMF_FCTYPE_CONNECT || c->connected
			       ? 0
			       : NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
	}
	if (!c->connected)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
	if (c->auth_needed)
		return NVME_STATUS(NVME_SCT_CMD, NVMF_SC_AUTH_REQUIRED);
	if (!(atomic_load_explicit(&c->ctrl->csts, memory_order_relaxed) & NVME_CSTS_RDY))
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR); /* not enabled */
	return 0;
}

int tgt_cmd_arrived(struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	if (c->connected && !c->auth_needed) /* a command received keeps its controller alive */
		atomic_store_explicit(&c->ctrl->last_ms, mono_ms_coarse(), memory_order_relaxed);
	int st = tgt_cmd_admissible(c, sqe);
	return st ? st : tgt_xfer_plan(c, sqe, x);
}

void tgt_exec(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	if (cmd->sqe.opc == NVME_FABRICS_OPC) {
		tgt_fabrics(cmd);
		return;
	}
	int st = tgt_cmd_admissible(c, &cmd->sqe);
	if (st) {
		tgt_complete(cmd, (uint16_t)NVME_STATUS_SCT(st), (uint8_t)NVME_STATUS_SC(st));
		return;
	}
	if (c->qid == 0)
		tgt_admin(cmd);
	else
		tgt_io(cmd);
}
