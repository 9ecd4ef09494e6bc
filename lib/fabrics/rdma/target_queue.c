/* SPDX-License-Identifier: BSD-3-Clause */
/* The controller's end of an NVMe/RDMA queue (target_queue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target_queue.h"

#define WR_RECV  (1ull << 56)
#define WR_READ  (2ull << 56)
#define WR_WRITE (3ull << 56)
#define WR_SEND  (4ull << 56)
#define WR_KIND(id) ((id) & (0xffull << 56))
#define WR_SLOT(id) ((uint32_t)((id) & 0xffffffffu))

enum { SLOT_RECV = 0, SLOT_OWNER, SLOT_FETCH, SLOT_SEND, SLOT_DROPPED };

static void die(struct nvrdma_tq *q, const char *why)
{
	if (q->dead)
		return;
	q->dead = true;
	snprintf(q->why, sizeof(q->why), "%s", why);
	if (q->cfg.fatal)
		q->cfg.fatal(q->cfg.arg, q->why);
}

static uint8_t *recv_at(struct nvrdma_tq *q, uint32_t i)
{
	return q->mem + (size_t)i * q->recv_size;
}

static struct nvme_cqe *rsp_at(struct nvrdma_tq *q, uint32_t i)
{
	return (struct nvme_cqe *)(q->mem + (size_t)q->cfg.depth * q->recv_size) + i;
}

static int post_recv(struct nvrdma_tq *q, uint32_t i)
{
	struct rv_sge s = { .addr = recv_at(q, i), .len = q->recv_size, .lkey = q->mr->lkey };
	q->cmds[i].state = SLOT_RECV;
	q->cmds[i].owner = NULL;
	return rv_post_recv(q->ep, WR_RECV | i, &s);
}

/* receive buffers whole 64-byte multiples, so in-capsule data starts aligned */
static uint32_t recv_size_of(uint32_t icd_max)
{
	return ((uint32_t)sizeof(struct nvme_sqe) + icd_max + 63u) & ~63u;
}

size_t nvrdma_tq_mem_bytes(uint32_t depth, uint32_t icd_max)
{
	return (size_t)depth * recv_size_of(icd_max) + (size_t)depth * sizeof(struct nvme_cqe);
}

int nvrdma_tq_init(struct nvrdma_tq *q, struct rv_ep *ep, const struct nvrdma_tq_cfg *cfg)
{
	memset(q, 0, sizeof(*q));
	if (!cfg->depth || !cfg->capsule || !cfg->data_in || cfg->depth > ep->caps.recv_depth ||
	    2 * cfg->depth > ep->caps.send_depth)
		return -EINVAL;
	q->ep = ep;
	q->cfg = *cfg;
	q->recv_size = recv_size_of(cfg->rules.icd_max);
	size_t bytes = nvrdma_tq_mem_bytes(cfg->depth, cfg->rules.icd_max);
	q->mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
	q->cmds = calloc(cfg->depth, sizeof(*q->cmds));
	int rc = -ENOMEM;
	if (!q->mem || !q->cmds)
		goto fail;
	memset(q->mem, 0, bytes);
	if ((rc = rv_reg_mr(ep->pd, q->mem, bytes, RV_ACCESS_LOCAL_WRITE, &q->mr)))
		goto fail;
	for (uint32_t i = 0; i < cfg->depth; i++) {
		q->cmds[i].q = q;
		q->cmds[i].slot = i;
		if ((rc = post_recv(q, i)))
			goto fail;
	}
	return 0;
fail:
	nvrdma_tq_fini(q);
	return rc;
}

void nvrdma_tq_fini(struct nvrdma_tq *q)
{
	rv_dereg_mr(q->mr);
	free(q->mem);
	free(q->cmds);
	q->mr = NULL;
	q->mem = NULL;
	q->cmds = NULL;
}

static int send_rsp(struct nvrdma_tq_cmd *cmd, const struct nvme_cqe *cqe)
{
	struct nvrdma_tq *q = cmd->q;
	struct nvme_cqe *r = rsp_at(q, cmd->slot);
	*r = (struct nvme_cqe){ .dw0 = cqe->dw0, .dw1 = cqe->dw1, .sqhd = q->sqhd,
				.sqid = q->cfg.qid, .cid = cmd->cap.sqe.cid,
				.status = (uint16_t)(cqe->status & ~1u) };
	struct rv_sge s = { .addr = r, .len = sizeof(*r), .lkey = q->mr->lkey };
	cmd->state = SLOT_SEND;
	return rv_post_send(q->ep, WR_SEND | cmd->slot, &s, 1);
}

int nvrdma_tq_fetch(struct nvrdma_tq_cmd *cmd, void *buf, const struct rv_mr *mr)
{
	struct nvrdma_tq *q = cmd->q;
	if (q->dead)
		return -ECONNRESET;
	if (cmd->state != SLOT_OWNER || cmd->cap.kind != NVRDMA_DATA_KEYED)
		return -EINVAL;
	struct rv_sge s = { .addr = buf, .len = cmd->cap.len, .lkey = mr->lkey };
	cmd->state = SLOT_FETCH;
	int rc = rv_post_read(q->ep, WR_READ | cmd->slot, &s, cmd->cap.addr, cmd->cap.rkey);
	if (rc)
		cmd->state = SLOT_OWNER;
	return rc;
}

int nvrdma_tq_respond(struct nvrdma_tq_cmd *cmd, const struct nvme_cqe *cqe, const void *buf,
		      uint32_t len, const struct rv_mr *mr)
{
	struct nvrdma_tq *q = cmd->q;
	if (q->dead)
		return -ECONNRESET;
	if (cmd->state != SLOT_OWNER)
		return -EINVAL;
	if (len) {
		/* data to the host goes only where its keyed SGL said, never past it */
		if (cmd->cap.kind != NVRDMA_DATA_KEYED || len > cmd->cap.len || !mr)
			return -EINVAL;
		struct rv_sge s = { .addr = (void *)buf, .len = len, .lkey = mr->lkey };
		int rc = rv_post_write(q->ep, WR_WRITE | cmd->slot, &s, cmd->cap.addr, cmd->cap.rkey);
		if (rc)
			return rc;
	}
	return send_rsp(cmd, cqe);
}

void nvrdma_tq_drop(struct nvrdma_tq_cmd *cmd)
{
	cmd->state = SLOT_DROPPED;
	cmd->owner = NULL;
}

static void capsule_in(struct nvrdma_tq *q, uint32_t slot, uint32_t len)
{
	struct nvrdma_tq_cmd *cmd = &q->cmds[slot];
	uint16_t status;
	const char *why;
	enum nvrdma_verdict v = nvrdma_capsule_parse(recv_at(q, slot), len, &q->cfg.rules, &cmd->cap,
						     &status, &why);
	if (v == NVRDMA_FATAL) {
		die(q, why);
		return;
	}
	q->sqhd = (uint16_t)((q->sqhd + 1u) % q->cfg.depth);
	cmd->state = SLOT_OWNER;
	if (v == NVRDMA_REFUSE) {
		struct nvme_cqe cqe = { .status = (uint16_t)(status | 0x8000u) }; /* DNR: it would fail again */
		q->refused++;
		if (send_rsp(cmd, &cqe))
			die(q, "could not send a response");
		return;
	}
	q->cfg.capsule(q->cfg.arg, cmd);
}

int nvrdma_tq_poll(struct nvrdma_tq *q)
{
	struct rv_wc wc[32];
	int n, work = 0;
	if (q->dead)
		return -ECONNRESET;
	while ((n = rv_poll(q->ep, wc, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t slot = WR_SLOT(wc[i].wr_id);
			uint64_t kind = WR_KIND(wc[i].wr_id);
			if (slot >= q->cfg.depth)
				continue;
			struct nvrdma_tq_cmd *cmd = &q->cmds[slot];
			work++;
			if (wc[i].status != RV_WC_OK) {
				char why[96];
				snprintf(why, sizeof(why), "%s %s",
					 kind == WR_READ ? "reading host memory:" :
					 kind == WR_WRITE ? "writing host memory:" :
					 kind == WR_SEND ? "sending a response:" : "receiving:",
					 rv_wc_status_name(wc[i].status));
				if (kind == WR_READ && cmd->state == SLOT_FETCH) {
					cmd->state = SLOT_OWNER;
					die(q, why);
					q->cfg.data_in(q->cfg.arg, cmd, -EIO);
				} else {
					die(q, why);
				}
				continue;
			}
			if (kind == WR_RECV)
				capsule_in(q, slot, wc[i].byte_len);
			else if (kind == WR_READ && cmd->state == SLOT_FETCH) {
				cmd->state = SLOT_OWNER;
				q->cfg.data_in(q->cfg.arg, cmd, 0);
			} else if (kind == WR_SEND && cmd->state == SLOT_SEND && !q->dead) {
				if (cmd->owner && q->cfg.sent)
					q->cfg.sent(q->cfg.arg, cmd);
				if (post_recv(q, slot))
					die(q, "re-posting a receive failed");
			}
		}
		if (n < 32)
			break;
	}
	return q->dead ? -ECONNRESET : work;
}
