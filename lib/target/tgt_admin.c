/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands of the target's controllers. A target controller is virtual: it belongs to
 * one host and lives as long as its admin connection, so it answers Identify, log pages and
 * features itself and reaches the backing devices only for what is theirs (namespace data,
 * the health log, the volatile write cache). A discovery controller knows Identify, the
 * discovery log, Keep Alive, a few features and Asynchronous Event Requests.
 */
#include <string.h>

#include "unvme/spec/features.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

static void done(struct tgt_cmd *cmd, int st)
{
	tgt_complete(cmd, (uint16_t)NVME_STATUS_SCT(st), (uint8_t)NVME_STATUS_SC(st));
}

/* Data for the host: into the command's buffer, at most the length it gave. */
static void *data(struct tgt_cmd *cmd, uint32_t want)
{
	if (cmd->len < want || !cmd->buf)
		return NULL;
	memset(cmd->buf, 0, cmd->len);
	cmd->send_len = cmd->len;
	return cmd->buf;
}

static int number_of_queues(struct tgt_cmd *cmd, bool set)
{
	struct tgt_conn *c = cmd->conn;
	struct tgt_ctrl *ctrl = c->ctrl;
	if (set) {
		uint32_t nsq = (cmd->sqe.cdw11 & 0xffffu) + 1u, ncq = (cmd->sqe.cdw11 >> 16) + 1u;
		if (nsq == 0x10000u || ncq == 0x10000u)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		uint32_t want = nsq < ncq ? nsq : ncq, max = c->t->cfg->lim.max_io_queues;
		pthread_mutex_lock(&c->ss->lock);
		bool busy = false;
		for (uint32_t q = 1; q <= ctrl->nr_io; q++)
			busy |= ctrl->qid_used[q] != 0;
		if (!busy)
			ctrl->nr_io = want < max ? want : max;
		pthread_mutex_unlock(&c->ss->lock);
		if (busy)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
	}
	cmd->cqe.dw0 = (ctrl->nr_io - 1u) | (ctrl->nr_io - 1u) << 16;
	return 0;
}

static int features(struct tgt_cmd *cmd, bool set)
{
	struct tgt_conn *c = cmd->conn;
	struct tgt_ctrl *ctrl = c->ctrl;
	uint8_t fid = (uint8_t)cmd->sqe.cdw10;
	uint32_t v = cmd->sqe.cdw11;
	if (set && (cmd->sqe.cdw10 & NVME_FEAT_SAVE))
		return NVME_STATUS(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_SAVEABLE);
	if (!set && ((cmd->sqe.cdw10 >> 8) & 7u) > 3)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	uint32_t *slot = NULL;
	switch (fid) {
	case NVME_FEAT_ASYNC_EVENT:
		slot = &ctrl->aen_cfg;
		break;
	case NVME_FEAT_KATO:
		if (set)
			ctrl->kato_ms = v;
		cmd->cqe.dw0 = ctrl->kato_ms;
		return 0;
	default:
		if (c->ss->discovery)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	switch (fid) {
	case NVME_FEAT_ARBITRATION:
		slot = &ctrl->feat_arb;
		break;
	case NVME_FEAT_POWER_MGMT:
		if (set && (v & 0x1fu))
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD); /* one power state */
		slot = &ctrl->feat_power;
		break;
	case NVME_FEAT_TEMP_THRESH:
		slot = &ctrl->feat_temp;
		break;
	case NVME_FEAT_ERR_RECOVERY:
		slot = &ctrl->feat_errrec;
		break;
	case NVME_FEAT_IRQ_COALESCE:
		slot = &ctrl->feat_coal;
		break;
	case NVME_FEAT_VOLATILE_WC:
		if (!(c->ss->vwc & 1u))
			return set ? NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
				   : (cmd->cqe.dw0 = 0, 0);
		if (set) {
			/* the cache is the devices': tell them (every host shares it) */
			for (int b = 0; b < c->ss->nbacks; b++)
				unvme_set_features(c->ss->backs[b]->ctrlr, NVME_FEAT_VOLATILE_WC, 0, v & 1u,
						   false, NULL);
		}
		slot = &ctrl->feat_vwc;
		v &= 1u;
		break;
	case NVME_FEAT_NUM_QUEUES:
		return number_of_queues(cmd, set);
	case NVME_FEAT_HOST_ID: {
		if (set)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_FEATURE_NOT_CHANGEABLE);
		uint8_t *d = data(cmd, 16);
		if (!d)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
		memcpy(d, ctrl->hostid, 16);
		return 0;
	}
	default:
		if (!slot)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	if (set)
		*slot = v;
	cmd->cqe.dw0 = *slot;
	return 0;
}

static void async_event(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	uint32_t held = 0;
	for (uint32_t i = 0; i < c->ncmds; i++)
		held += c->cmds[i]->state == CMD_HELD;
	if (held > TGT_AERL) {
		done(cmd, NVME_STATUS(NVME_SCT_CMD, NVME_SC_AER_LIMIT));
		return;
	}
	/* no event source yet (the namespaces are fixed for the target's life): it waits */
	cmd->state = CMD_HELD;
}

void tgt_admin(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	bool disc = c->ss->discovery;
	int st;
	switch (cmd->sqe.opc) {
	case NVME_ADM_IDENTIFY:
		st = tgt_identify(cmd);
		break;
	case NVME_ADM_GET_LOG_PAGE:
		st = tgt_get_log(cmd);
		break;
	case NVME_ADM_SET_FEATURES:
		st = features(cmd, true);
		break;
	case NVME_ADM_GET_FEATURES:
		st = features(cmd, false);
		break;
	case NVME_ADM_KEEP_ALIVE:
		st = 0;
		break;
	case NVME_ADM_ASYNC_EVENT:
		async_event(cmd);
		return;
	case NVME_ADM_ABORT:
		if (disc) {
			st = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
			break;
		}
		/* commands reach the devices at once: there is nothing queued here to abort */
		cmd->cqe.dw0 = 1;
		st = 0;
		break;
	default:
		st = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
	}
	if (st)
		cmd->send_len = 0;
	done(cmd, st);
}
