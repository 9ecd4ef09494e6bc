/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One NVMe/RDMA queue of the host (rdma_ctrlr.h): an RDMA connection run by the host queue
 * engine (lib/fabrics/rdma/host_queue.h) serving one of the driver's queue pairs.
 *
 * The generic queue pair (qpair.c) keeps its trackers, command ids and SQ / CQ rings in host
 * memory, as over PCIe and NVMe/TCP. What a controller does with the rings, this file does
 * with the connection: the SQ tail doorbell sends each new SQ entry as a command capsule
 * (in-capsule data for small writes on I/O queues, else a keyed SGL naming the buffer's
 * registered region); the pump, at the start of every poll, takes the responses and writes
 * them into the CQ ring with their phase, where the generic poll reaps them.
 *
 * Everything from the controller is checked before it is used: a response must be exactly
 * 16 bytes and name a command id in flight (the engine's checks; anything else ends the
 * connection), a work request that fails (the controller named memory outside a command's
 * region, or the fabric failed) ends it too, and a command that gets no answer within the
 * queue's timeout ends it. Ending a connection first moves the queue pair to the error state
 * (no more RDMA READ / WRITE reach host memory), then completes what was in flight with a
 * path error, so a buffer handed back is never written afterwards.
 *
 * Command id nreqs (one past the ring's) is the transport's own: Connect, properties, Keep
 * Alive and authentication run there, synchronously (rdma_nvmf_ops.exec) or in two halves
 * (send, then reap at each look: the fabrics layer's on a live association). On the admin
 * queue the caller holds rc->regs.lock for each call; an I/O queue's doorbell and pump take
 * q->mu.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "lib/fabrics/nvmf_cq.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "rdma_ctrlr.h"

#define SCAN_INTERVAL_MS 10u

int rdma_queue_init(struct rdma_queue *q, struct rdma_ctrlr *rc, uint16_t qid, uint16_t depth)
{
	memset(q, 0, sizeof(*q));
	q->rc = rc;
	q->qid = qid;
	q->depth = depth;
	q->nreqs = depth - 1u;
	pthread_mutex_init(&q->mu, NULL);
	q->reqs = calloc(q->nreqs ? q->nreqs : 1, sizeof(*q->reqs));
	if (!q->reqs) {
		pthread_mutex_destroy(&q->mu);
		return unvme_fail(-ENOMEM, "no memory for an NVMe/RDMA queue");
	}
	snprintf(q->peer, sizeof(q->peer), "%s:%s", rc->p.host, rc->p.port);
	rdma_queue_reset(q);
	return 0;
}

void rdma_queue_fini(struct rdma_queue *q)
{
	rdma_queue_close(q);
	free(q->reqs);
	q->reqs = NULL;
	pthread_mutex_destroy(&q->mu);
}

void rdma_queue_reset(struct rdma_queue *q)
{
	for (uint32_t i = 0; i < q->nreqs; i++)
		q->reqs[i].track.posted = true; /* a tracker of the lost connection is none of this one's */
	q->sq_sent = 0;
	nvmf_cq_reset(&q->cq);
	q->sync_active = false;
	q->sync_done = false;
	q->fail_done = false;
	q->timed_out = false;
}

void rdma_queue_close(struct rdma_queue *q)
{
	if (!q->ep)
		return;
	/* the queue pair goes first: no RDMA READ / WRITE reaches host memory afterwards */
	if (!atomic_load(&q->dead))
		rv_disconnect(q->ep);
	struct rv_ep *ep = q->ep;
	q->dropping = true;
	if (q->hq_up)
		nvrdma_hq_abort_all(&q->hq, NVME_CQE_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
	q->dropping = false;
	rv_ep_destroy(ep);
	if (q->hq_up)
		nvrdma_hq_fini(&q->hq);
	q->hq_up = false;
	q->ep = NULL;
	atomic_store(&q->dead, true);
}

/* ---- completions ---- */

static void post(struct rdma_queue *q, uint16_t cid, const struct nvme_cqe *cqe, uint16_t status)
{
	struct unvme_qpair *qp = q->qp;
	nvmf_cq_post(&q->cq, qp, q->qid, cid, cqe, status);
	q->reqs[cid].track.posted = true;
}

static void post_status(struct rdma_queue *q, uint16_t cid, uint16_t status)
{
	struct nvme_cqe cqe = {0};
	post(q, cid, &cqe, status);
}

/* The engine hands on a response (checked: 16 bytes, a command id in flight) or an abort. */
static void hq_done(void *arg, uint16_t cid, const struct nvme_cqe *cqe)
{
	struct rdma_queue *q = arg;
	if (q->dropping)
		return;
	if (cid == q->nreqs) {
		q->sync_cqe = *cqe;
		q->sync_done = true;
		return;
	}
	if (!q->qp || cid >= q->nreqs || q->reqs[cid].track.posted)
		return;
	post(q, cid, cqe, cqe->status);
}

static struct rv_mr *hq_find_mr(void *arg, const void *buf, uint32_t len)
{
	struct rdma_queue *q = arg;
	return rdma_mr_find(q->rc, q->ep->pd, buf, len);
}

/* ---- failure ---- */

void rdma_queue_mark_dead(struct rdma_queue *q, const char *why)
{
	if (atomic_exchange(&q->dead, true))
		return;
	snprintf(q->why_buf, sizeof(q->why_buf), "%s", why ? why : "connection lost");
	q->dead_why = q->why_buf;
	if (q->ep)
		rv_disconnect(q->ep); /* the queue pair to the error state: no more data moves */
	rdma_ctrlr_connection_lost(q->rc, q);
}

/* What was in flight on a dead connection completes: Command Aborted By Host when the host
 * ended it because a command got no answer in time, else Host Pathing Error (as NVMe/TCP). */
static void fail_in_flight(struct rdma_queue *q)
{
	bool aborted = q->timed_out && !q->fail_done;
	q->fail_done = true;
	uint16_t st = NVME_CQE_STATUS(NVME_SCT_PATH, aborted ? NVME_SC_ABORTED_BY_HOST : NVME_SC_HOST_PATH_ERROR);
	if (q->hq_up)
		nvrdma_hq_abort_all(&q->hq, st);
	for (uint32_t cid = 0; q->qp && cid < q->nreqs; cid++)
		if (atomic_load_explicit(&q->qp->reqs[cid].state, memory_order_acquire) != REQ_FREE &&
		    !q->reqs[cid].track.posted)
			post_status(q, (uint16_t)cid, st);
	if (q->sync_active && !q->sync_done) {
		q->sync_cqe = (struct nvme_cqe){.cid = (uint16_t)q->nreqs, .status = st};
		q->sync_done = true;
	}
}

static bool unanswered(const struct rdma_queue *q)
{
	return nvmf_unanswered(q->qp, NVMF_TRACKS(q->reqs), q->nreqs);
}

static void scan_timeouts(struct rdma_queue *q, uint64_t now)
{
	q->last_scan_ms = now;
	if (!q->timeout_ms || !q->qp)
		return;
	char why[96];
	if (!nvmf_overdue(q->qp, q->rc->c, q->qid, NVMF_TRACKS(q->reqs), q->nreqs, q->timeout_ms, now,
			  why, sizeof(why)))
		return;
	q->timed_out = true; /* before the mark: the commands' status depends on it */
	rdma_queue_mark_dead(q, why);
}

/* Completions, connection events and timeouts. */
static void take_in(struct rdma_queue *q)
{
	if (atomic_load(&q->dead) || !q->hq_up)
		return;
	if (nvrdma_hq_poll(&q->hq) < 0) {
		rdma_queue_mark_dead(q, q->hq.why);
		return;
	}
	uint64_t now = mono_ms_coarse();
	if (now - q->last_scan_ms >= SCAN_INTERVAL_MS) {
		nvrdma_hq_check_events(&q->hq);
		if (q->hq.dead)
			rdma_queue_mark_dead(q, q->hq.why);
		else
			scan_timeouts(q, now);
	}
}

int rdma_queue_pump(struct rdma_queue *q)
{
	take_in(q);
	if (atomic_load(&q->dead)) {
		bool first = !q->fail_done;
		if (first || unanswered(q))
			fail_in_flight(q);
		return first ? 1 : 0;
	}
	return 0;
}

/* ---- commands ---- */

/* Which way a command's data flows, by the opcode (bits 1:0), the fabrics type and the KV
 * vendor opcodes (nvmf_data_to_ctrl). */
int rdma_queue_map(struct rdma_queue *q, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len)
{
	if (cid >= q->nreqs)
		return -EINVAL;
	if (nvmf_kv_long_key(sqe))
		return unvme_fail(-EOPNOTSUPP, "KV commands with keys over %u bytes are not carried over "
				  "NVMe/RDMA", NVME_KVV_INLINE_KEY);
	if (len > NVME_RDMA_KEYED_MAX_LEN)
		return -E2BIG;
	struct rdma_req *r = &q->reqs[cid];
	r->buf = buf;
	r->len = (uint32_t)len;
	r->to_ctrl = nvmf_data_to_ctrl(q->qid, sqe);
	/* the capsule's SGL is the engine's to write (at the doorbell) */
	sqe->flags = (uint8_t)((sqe->flags & 0x3u) | NVME_CMD_FLAGS_PSDT_SGL);
	return 0;
}

void rdma_queue_doorbell(struct rdma_queue *q, uint16_t tail)
{
	struct unvme_qpair *qp = q->qp;
	if (!qp)
		return;
	uint64_t now = mono_ms_coarse();
	while (q->sq_sent != tail) {
		struct nvme_sqe sqe = qp->sq[q->sq_sent];
		q->sq_sent = (uint16_t)(q->sq_sent + 1u == qp->depth ? 0 : q->sq_sent + 1u);
		uint16_t cid = sqe.cid;
		if (cid >= q->nreqs)
			continue; /* not a command id of the ring: nothing to answer */
		struct rdma_req *r = &q->reqs[cid];
		r->track.posted = false;
		r->track.start_ms = now;
		if (atomic_load(&q->dead) || !q->hq_up) {
			post_status(q, cid, NVME_CQE_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
			continue;
		}
		int rc = nvrdma_hq_submit(&q->hq, &sqe, r->buf, r->len, r->to_ctrl);
		if (rc == -ECONNRESET) {
			rdma_queue_mark_dead(q, q->hq.why);
			post_status(q, cid, NVME_CQE_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR));
		} else if (rc) {
			/* the buffer could not be registered, or the send queue refused it */
			post_status(q, cid, NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) | NVME_CQE_DNR_BIT);
		}
	}
}

/* The transport's own command put on the wire (nvmf_queue_ops.send, and exec's first half). */
static int sync_send(struct rdma_queue *q, struct nvme_sqe *cmd, void *buf, size_t len, bool to_ctrl)
{
	if (atomic_load(&q->dead) || !q->hq_up)
		return unvme_fail(-ENOTCONN, "%s: not connected%s%s", q->peer, q->dead_why ? ": " : "",
				  q->dead_why ? q->dead_why : "");
	if (len > NVME_RDMA_KEYED_MAX_LEN)
		return unvme_fail(-EINVAL, "%s: fabrics command data of %zu bytes", q->peer, len);
	if (q->sync_active)
		return -EAGAIN;
	cmd->cid = (uint16_t)q->nreqs;
	q->sync_active = true;
	q->sync_done = false;
	q->sync_opc = cmd->opc;
	q->sync_fctype = ((struct nvmf_cmd *)cmd)->fctype;
	q->sync_start_ms = mono_ms_coarse();
	int rc = nvrdma_hq_submit(&q->hq, cmd, buf, (uint32_t)len, to_ctrl);
	if (rc) {
		q->sync_active = false;
		if (rc == -ECONNRESET)
			rdma_queue_mark_dead(q, q->hq.why);
		return unvme_fail(rc == -ECONNRESET ? rc : -EIO, "%s: cannot send a %s command: %s", q->peer,
				  cmd->opc == NVME_FABRICS_OPC ? "fabrics" : "admin",
				  q->hq.why ? q->hq.why : strerror(-rc));
	}
	return 0;
}

/* Its answer, without waiting (nvmf_queue_ops.reap, and exec's second half). */
static int sync_reap(struct rdma_queue *q, struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	if (!q->sync_active)
		return unvme_fail(-EINVAL, "%s: no command of the transport's in flight", q->peer);
	if (!q->sync_done && !atomic_load(&q->dead)) {
		take_in(q);
		uint64_t limit = (timeout_ms ? timeout_ms : 10000) + mono_coarse_slack_ms();
		if (!q->sync_done && !atomic_load(&q->dead) && mono_ms_coarse() >= q->sync_start_ms + limit) {
			char why[96];
			bool fab = q->sync_opc == NVME_FABRICS_OPC;
			snprintf(why, sizeof(why), "%s command (%s %#x) got no answer within %u ms",
				 fab ? "fabrics" : "admin", fab ? "type" : "opcode",
				 fab ? q->sync_fctype : q->sync_opc, timeout_ms);
			q->timed_out = true;
			rdma_queue_mark_dead(q, why);
		}
	}
	if (atomic_load(&q->dead) && (!q->fail_done || unanswered(q) || !q->sync_done))
		fail_in_flight(q);
	if (!q->sync_done)
		return -EINPROGRESS;
	q->sync_active = false;
	uint16_t sct = NVME_CQE_SCT(q->sync_cqe.status), sc = NVME_CQE_SC(q->sync_cqe.status);
	if (sct == NVME_SCT_PATH && (sc == NVME_SC_HOST_PATH_ERROR || sc == NVME_SC_ABORTED_BY_HOST) &&
	    atomic_load(&q->dead))
		return unvme_fail(sc == NVME_SC_ABORTED_BY_HOST ? -ETIMEDOUT : -ECONNRESET, "%s: %s", q->peer,
				  q->dead_why ? q->dead_why : "connection lost");
	if (cpl)
		*cpl = q->sync_cqe;
	return NVME_STATUS_FROM_CQE(q->sync_cqe.status);
}

/* The transport's own command, synchronously (nvmf_queue_ops.exec). */
static int rdma_exec(void *queue, struct nvme_sqe *cmd, void *buf, size_t len, bool to_ctrl,
		     struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	struct rdma_queue *q = queue;
	int rc = sync_send(q, cmd, buf, len, to_ctrl);
	if (rc == -EAGAIN)
		rc = unvme_fail(-EBUSY, "%s: the transport's command id is in flight", q->peer);
	if (rc)
		return rc;
	while ((rc = sync_reap(q, cpl, timeout_ms)) == -EINPROGRESS)
		rv_wait(q->ep, 1);
	return rc;
}

static int rdma_send(void *queue, struct nvme_sqe *cmd)
{
	return sync_send(queue, cmd, NULL, 0, false);
}

static int rdma_reap(void *queue, struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	return sync_reap(queue, cpl, timeout_ms);
}

static const char *rdma_peer(const void *queue)
{
	const struct rdma_queue *q = queue;
	return q->peer;
}

const struct nvmf_queue_ops rdma_nvmf_ops = {
	.exec = rdma_exec,
	.send = rdma_send,
	.reap = rdma_reap,
	.peer = rdma_peer,
};

/* ---- connecting ---- */

static const char *event_why(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no RDMA device (this kernel has no RDMA device or no RDMA connection manager: a "
		       "RoCE or InfiniBand NIC's driver, or soft-RoCE: modprobe rdma_rxe rdma_ucm; rdma link "
		       "add rxe0 type rxe netdev IFACE)";
	case -EHOSTUNREACH:
		return "no route to the address, or no RDMA device reaches it";
	case -ETIMEDOUT:
		return "no answer to the RDMA connection request";
	case -ECONNRESET:
		return "the connection ended while it was being made";
	default:
		return strerror(-rc);
	}
}

int rdma_queue_connect(struct rdma_queue *q, uint16_t cntlid, uint16_t *cntlid_out)
{
	rdma_queue_close(q);
	rdma_queue_reset(q);
	return rdma_queue_connect_conn(q, cntlid, cntlid_out);
}

int rdma_queue_connect_conn(struct rdma_queue *q, uint16_t cntlid, uint16_t *cntlid_out)
{
	struct rdma_ctrlr *rc = q->rc;
	q->dead_why = NULL;
	const struct rv_ops *v = rc->verbs;
	struct rv_qp_caps caps = {.send_depth = q->depth, .recv_depth = q->depth, .max_sge = 1};
	int tmo = (int)rc->p.connect_timeout_ms;
	int err = v->ep_create(v, rc->p.host, rc->p.port, &caps, tmo, &q->ep);
	if (err) {
		q->ep = NULL;
		return unvme_fail(err, "%s: cannot reach it over RDMA: %s", q->peer, event_why(err));
	}
	q->icd_max = 0;
	if (q->qid) {
		q->icd_max = nvmf_io_incapsule((const void *)rc->c->id.nvmeof);
		if (rc->p.incapsule >= 0 && (uint32_t)rc->p.incapsule < q->icd_max)
			q->icd_max = (uint32_t)rc->p.incapsule;
	}
	struct nvrdma_hq_cfg cfg = {.qid = q->qid, .depth = q->depth, .hrqsize = q->depth,
				    .icd_max = q->icd_max, .done = hq_done, .find_mr = hq_find_mr, .arg = q};
	err = nvrdma_hq_init(&q->hq, q->ep, &cfg);
	if (err) {
		rv_ep_destroy(q->ep);
		q->ep = NULL;
		return unvme_fail(err, "%s: cannot set up queue %u (%u entries) on the RDMA device: %s",
				  q->peer, q->qid, q->depth, strerror(-err));
	}
	q->hq_up = true;
	atomic_store(&q->dead, false);
	/* RDMA Transport Specification 3.1.4: the queue's id and sizes in the CM request */
	struct nvme_rdma_cm_req req;
	nvrdma_cm_req_build(&req, q->qid, q->depth, (uint16_t)(q->depth - 1u), cntlid);
	err = rv_connect(q->ep, &req, sizeof(req));
	if (err == 0)
		err = rv_connect_wait(q->ep, tmo);
	if (err == -ECONNREFUSED) {
		uint16_t sts = nvrdma_cm_rej_parse(q->ep->peer_priv, q->ep->peer_priv_len);
		if (sts)
			unvme_fail(-ECONNREFUSED, "%s: the controller refused queue %u: %s (RDMA CM status %u)",
				   q->peer, q->qid, nvrdma_cm_status_name(sts), sts);
		else
			unvme_fail(-ECONNREFUSED, "%s: connection refused (no NVMe/RDMA listener there?)", q->peer);
	} else if (err) {
		unvme_fail(err, "%s: cannot connect queue %u: %s", q->peer, q->qid, event_why(err));
	}
	uint16_t crqsize = 0;
	if (!err && nvrdma_cm_rep_parse(q->ep->peer_priv, q->ep->peer_priv_len, &crqsize)) {
		err = unvme_fail(-EPROTO, "%s: the controller accepted queue %u with private data that "
				 "is not NVMe/RDMA's", q->peer, q->qid);
	} else if (!err && crqsize < q->depth) {
		/* it could not take every command the host may send at once */
		err = unvme_fail(-EPROTO, "%s: the controller takes %u commands on queue %u, %u asked for",
				 q->peer, crqsize, q->qid, q->depth);
	}
	if (!err) {
		if (q->ep->peer[0])
			snprintf(q->peer, sizeof(q->peer), "%s", q->ep->peer);
		err = nvmf_connect(&rc->fab, q, q->qid, (uint16_t)(q->depth - 1u), cntlid, cntlid_out);
	}
	if (err) {
		atomic_store(&q->dead, true);
		rdma_queue_close(q);
	}
	return err;
}
