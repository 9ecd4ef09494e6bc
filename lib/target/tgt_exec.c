/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which way a command's data flows, and where a command whose data is in goes: fabrics
 * commands, then (once connected, enabled and authenticated) admin or I/O.
 */
#include "lib/common/clock.h"
#include "unvme/spec/fabrics.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

static int direction(uint8_t opc, bool *to_ctrl)
{
	switch (opc & 0x3u) {
	case 0x1:
		*to_ctrl = true;
		return 0;
	case 0x3:
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE); /* bidirectional */
	default:
		*to_ctrl = false;
		return 0;
	}
}

int tgt_cmd_to_ctrl(const struct tgt_conn *c, const struct nvme_sqe *sqe, bool *to_ctrl)
{
	*to_ctrl = false;
	if (sqe->opc == NVME_FABRICS_OPC) {
		switch (((const struct nvmf_cmd *)sqe)->fctype) {
		case NVMF_FCTYPE_CONNECT:
		case NVMF_FCTYPE_AUTH_SEND:
			*to_ctrl = true;
			return 0;
		case NVMF_FCTYPE_PROPERTY_GET:
		case NVMF_FCTYPE_PROPERTY_SET:
		case NVMF_FCTYPE_AUTH_RECV:
		case NVMF_FCTYPE_DISCONNECT:
			return 0;
		default:
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		}
	}
	if (c->qid == 0)
		return direction(sqe->opc, to_ctrl);
	/* The Samsung KV vendor opcodes do not follow the opcode direction convention. */
	switch (sqe->opc) {
	case NVME_KVV_STORE:
		*to_ctrl = true;
		return 0;
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_ITER_READ:
	case NVME_KVV_DELETE:
	case NVME_KVV_EXIST:
	case NVME_KVV_ITER_REQ:
		return 0;
	default:
		return direction(sqe->opc, to_ctrl);
	}
}

void tgt_exec(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	if (cmd->sqe.opc == NVME_FABRICS_OPC) {
		tgt_fabrics(cmd);
		return;
	}
	if (!c->connected) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
		return;
	}
	if (c->auth_needed) {
		tgt_complete(cmd, NVME_SCT_CMD, NVMF_SC_AUTH_REQUIRED);
		return;
	}
	struct tgt_ctrl *ctrl = c->ctrl;
	atomic_store_explicit(&ctrl->last_ms, mono_ms_coarse(), memory_order_relaxed);
	if (!(atomic_load(&ctrl->csts) & NVME_CSTS_RDY)) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR); /* not enabled */
		return;
	}
	if (c->qid == 0)
		tgt_admin(cmd);
	else
		tgt_io(cmd);
}
