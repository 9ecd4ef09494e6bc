/* SPDX-License-Identifier: BSD-3-Clause */
/* The host's end of an NVMe/RDMA queue (host_queue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capsule.h"
#include "host_queue.h"

/* wr_id: kind in the top byte, the slot below */
#define WR_SEND (1ull << 56)
#define WR_RECV (2ull << 56)
#define WR_KIND(id) ((id) & (0xffull << 56))
#define WR_SLOT(id) ((uint32_t)((id) & 0xffffffffu))

#define RSP_BUF 64u   /* a response is 16 bytes; a longer message fails the receive (LOC_LEN) */

static void die(struct nvrdma_hq *q, const char *fmt, const char *arg)
{
	if (q->dead)
		return;
	q->dead = true;
	snprintf(q->why_buf, sizeof(q->why_buf), fmt, arg);
	q->why = q->why_buf;
}

static uint8_t *capsule_at(struct nvrdma_hq *q, uint32_t cid)
{
	return q->mem + (size_t)cid * q->capsule_size;
}

static uint8_t *rsp_at(struct nvrdma_hq *q, uint32_t i)
{
	return q->mem + (size_t)q->cfg.depth * q->capsule_size + (size_t)i * RSP_BUF;
}

static int post_rsp(struct nvrdma_hq *q, uint32_t i)
{
	struct rv_sge s = { .addr = rsp_at(q, i), .len = RSP_BUF, .lkey = q->mr->lkey };
	return rv_post_recv(q->ep, WR_RECV | i, &s);
}

int nvrdma_hq_init(struct nvrdma_hq *q, struct rv_ep *ep, const struct nvrdma_hq_cfg *cfg)
{
	memset(q, 0, sizeof(*q));
	if (!cfg->depth || cfg->hrqsize < cfg->depth || !cfg->done)
		return -EINVAL;
	if (cfg->hrqsize > ep->caps.recv_depth || cfg->depth > ep->caps.send_depth)
		return -EINVAL;
	q->ep = ep;
	q->cfg = *cfg;
	q->capsule_size = (uint32_t)sizeof(struct nvme_sqe) + cfg->icd_max;
	size_t bytes = (size_t)cfg->depth * q->capsule_size + (size_t)cfg->hrqsize * RSP_BUF;
	q->mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
	q->reqs = calloc(cfg->depth, sizeof(*q->reqs));
	q->held = calloc(cfg->depth, sizeof(*q->held));
	int rc = -ENOMEM;
	if (!q->mem || !q->reqs || !q->held)
		goto fail;
	memset(q->mem, 0, bytes);
	if ((rc = rv_reg_mr(ep->pd, q->mem, bytes, RV_ACCESS_LOCAL_WRITE, &q->mr)))
		goto fail;
	for (uint32_t i = 0; i < cfg->hrqsize; i++)
		if ((rc = post_rsp(q, i)))
			goto fail;
	return 0;
fail:
	nvrdma_hq_fini(q);
	return rc;
}

void nvrdma_hq_fini(struct nvrdma_hq *q)
{
	if (q->reqs)
		for (uint32_t i = 0; i < q->cfg.depth; i++)
			rv_dereg_mr(q->reqs[i].own_mr);
	rv_dereg_mr(q->mr);
	free(q->mem);
	free(q->reqs);
	free(q->held);
	q->mr = NULL;
	q->mem = NULL;
	q->reqs = NULL;
	q->held = NULL;
}

static void finish(struct nvrdma_hq *q, uint16_t cid, const struct nvme_cqe *cqe)
{
	struct nvrdma_hq_req *r = &q->reqs[cid];
	r->active = false;
	q->inflight--;
	if (r->own_mr) {
		rv_dereg_mr(r->own_mr);
		r->own_mr = NULL;
	}
	q->cfg.done(q->cfg.arg, cid, cqe);
}

/* One completion. Responses are handed on (deliver) or held. Returns 1 for a response. */
static int reap_one(struct nvrdma_hq *q, const struct rv_wc *wc, bool deliver)
{
	uint32_t slot = WR_SLOT(wc->wr_id);
	if (wc->status != RV_WC_OK) {
		die(q, "a work request failed: %s", rv_wc_status_name(wc->status));
		if (WR_KIND(wc->wr_id) == WR_SEND && slot < q->cfg.depth)
			q->reqs[slot].send_pending = false;
		return 0;
	}
	if (WR_KIND(wc->wr_id) == WR_SEND) {
		if (slot < q->cfg.depth)
			q->reqs[slot].send_pending = false;
		return 0;
	}
	if (WR_KIND(wc->wr_id) != WR_RECV || slot >= q->cfg.hrqsize)
		return 0;
	struct nvme_cqe cqe;
	if (!nvrdma_rsp_parse(rsp_at(q, slot), wc->byte_len, &cqe)) {
		die(q, "a response capsule of %s bytes (16 expected)", wc->byte_len > 16 ? "more" : "fewer");
		return 0;
	}
	/* the buffer is free again once the completion is copied out */
	if (!q->dead && post_rsp(q, slot))
		die(q, "%s", "re-posting a receive failed");
	if (cqe.cid >= q->cfg.depth || !q->reqs[cqe.cid].active) {
		die(q, "%s", "a response for a command not in flight");
		return 0;
	}
	if (!deliver) {
		q->held[q->nheld++] = cqe;
		q->reqs[cqe.cid].active = false; /* answered: no second response is taken */
		return 0;
	}
	finish(q, cqe.cid, &cqe);
	return 1;
}

static int reap(struct nvrdma_hq *q, bool deliver)
{
	struct rv_wc wc[32];
	int n, got = 0;
	while ((n = rv_poll(q->ep, wc, 32)) > 0) {
		for (int i = 0; i < n; i++)
			got += reap_one(q, &wc[i], deliver);
		if (n < 32)
			break;
	}
	return got;
}

static int deliver_held(struct nvrdma_hq *q)
{
	uint32_t n = q->nheld;
	for (uint32_t i = 0; i < n; i++) {
		q->reqs[q->held[i].cid].active = true; /* finish clears it */
		finish(q, q->held[i].cid, &q->held[i]);
	}
	q->nheld = 0;
	return (int)n;
}

int nvrdma_hq_submit(struct nvrdma_hq *q, const struct nvme_sqe *sqe, void *buf, uint32_t len,
		     bool to_ctrl)
{
	uint16_t cid = sqe->cid;
	if (q->dead)
		return -ECONNRESET;
	if (cid >= q->cfg.depth || (len && !buf) || len > NVME_RDMA_KEYED_MAX_LEN)
		return -EINVAL;
	struct nvrdma_hq_req *r = &q->reqs[cid];
	if (r->active)
		return -EBUSY;
	/* the slot's previous capsule may still be the device's: wait for its completion */
	while (r->send_pending && !q->dead) {
		reap(q, false);
		if (r->send_pending && !q->dead)
			rv_wait(q->ep, 1);
	}
	if (q->dead)
		return -ECONNRESET;
	uint8_t *cap = capsule_at(q, cid);
	struct nvme_sqe *c = (struct nvme_sqe *)cap;
	*c = *sqe;
	uint32_t send_len = (uint32_t)sizeof(*c);
	r->buf = buf;
	r->len = len;
	if (!len) {
		nvrdma_sgl_none(c);
	} else if (to_ctrl && len <= q->cfg.icd_max) {
		memcpy(cap + sizeof(*c), buf, len);
		nvrdma_sgl_incapsule(c, len);
		send_len += len;
	} else {
		struct rv_mr *m = q->cfg.find_mr ? q->cfg.find_mr(q->cfg.arg, buf, len) : NULL;
		if (!m) {
			int rc = rv_reg_mr(q->ep->pd, buf, len, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ |
					   RV_ACCESS_REMOTE_WRITE, &r->own_mr);
			if (rc)
				return rc;
			m = r->own_mr;
		}
		nvrdma_sgl_keyed(c, (uint64_t)(uintptr_t)buf, len, m->rkey);
	}
	struct rv_sge s = { .addr = cap, .len = send_len, .lkey = q->mr->lkey };
	r->active = true;
	r->send_pending = true;
	q->inflight++;
	int rc = rv_post_send(q->ep, WR_SEND | cid, &s, 1);
	if (rc) {
		r->active = false;
		r->send_pending = false;
		q->inflight--;
		rv_dereg_mr(r->own_mr);
		r->own_mr = NULL;
	}
	return rc;
}

int nvrdma_hq_poll(struct nvrdma_hq *q)
{
	int n = deliver_held(q);
	n += reap(q, true);
	return q->dead ? -ECONNRESET : n;
}

void nvrdma_hq_check_events(struct nvrdma_hq *q)
{
	enum rv_event ev;
	while ((ev = rv_ep_event(q->ep)) != RV_EV_NONE)
		if (ev == RV_EV_DISCONNECTED)
			die(q, "%s", "the controller disconnected");
}

void nvrdma_hq_abort_all(struct nvrdma_hq *q, uint16_t status)
{
	deliver_held(q);
	for (uint32_t cid = 0; cid < q->cfg.depth; cid++) {
		if (!q->reqs[cid].active)
			continue;
		struct nvme_cqe cqe = { .cid = (uint16_t)cid, .sqid = q->cfg.qid, .status = status };
		finish(q, (uint16_t)cid, &cqe);
	}
}
