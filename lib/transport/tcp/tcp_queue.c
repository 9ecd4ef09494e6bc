/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP queue (see tcp_queue.h): command setup (the SGL data pointer, in-capsule
 * decisions), completion delivery into the generic CQ ring, timeouts, failure, and the
 * synchronous exchange the transport uses for fabrics commands.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/common/clock.h"
#include "unvme/spec/fabrics.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/dma.h"
#include "lib/driver/errmsg.h"
#include "lib/fabrics/nvmf_cq.h"
#include "tcp_ctrlr.h"
#include "tcp_queue.h"
#include "lib/fabrics/tcp/tcp_tls.h"

#define SCAN_INTERVAL_MS 10

int tcp_queue_init(struct tcp_queue *q, struct tcp_ctrlr *tc, uint16_t qid, uint32_t nreqs)
{
	memset(q, 0, sizeof(*q));
	q->conn.fd = -1;
	q->tc = tc;
	q->qid = qid;
	q->nreqs = nreqs;
	q->h2c_size = nreqs + 1;
	int rc = tcp_rxq_init(&q->rx);
	if (rc == 0)
		rc = tcp_txq_init(&q->tx, TCP_TX_SLOTS);
	q->reqs = nreqs ? calloc(nreqs, sizeof(*q->reqs)) : NULL;
	q->h2c = calloc(q->h2c_size, sizeof(*q->h2c));
	if (rc || (nreqs && !q->reqs) || !q->h2c) {
		tcp_queue_fini(q);
		return unvme_fail(-ENOMEM, "no memory for an NVMe/TCP queue");
	}
	tcp_queue_reset(q);
	return 0;
}

int tcp_queue_open_conn(struct tcp_queue *q)
{
	tcp_queue_close_conn(q);
	int rc = tcp_conn_open(&q->conn, &q->tc->p, q->tc->tls, q->tc->p.nvmf.connect_timeout_ms);
	q->rx.tls = q->tx.tls = q->conn.tls;
	return rc;
}

void tcp_queue_close_conn(struct tcp_queue *q)
{
	q->rx.tls = q->tx.tls = NULL;
	tcp_conn_close(&q->conn);
}

void tcp_queue_fini(struct tcp_queue *q)
{
	tcp_queue_close_conn(q);
	tcp_rxq_fini(&q->rx);
	tcp_txq_fini(&q->tx);
	free(q->reqs);
	free(q->h2c);
	q->reqs = NULL;
	q->h2c = NULL;
}

void tcp_queue_reset(struct tcp_queue *q)
{
	tcp_tx_reset(q);
	tcp_rx_reset(q);
	/* nothing is outstanding on a fresh connection: a tracker the generic code still holds
	 * (a command of the lost connection, given back by the rebuild) is no business of this
	 * one, neither for its data nor for its timeout */
	for (uint32_t i = 0; i < q->nreqs; i++) {
		q->reqs[i].track.posted = true;
		atomic_store_explicit(&q->reqs[i].h2c_busy, 0, memory_order_relaxed);
	}
	nvmf_cq_reset(&q->cq);
	q->sync_active = false;
	q->sync_done = false;
	q->fail_done = false;
	q->timed_out = false;
}

struct tcp_req *tcp_queue_req(struct tcp_queue *q, uint16_t cid)
{
	if (cid == TCP_SYNC_CID)
		return &q->sync;
	return cid < q->nreqs ? &q->reqs[cid] : NULL;
}

uint16_t tcp_req_status(const struct tcp_req *r, uint16_t status)
{
	if (NVME_CQE_SC(status) != 0 || NVME_CQE_SCT(status) != 0)
		return status; /* it failed anyway: what moved does not matter */
	if (r->violated)
		return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | NVME_CQE_DNR_BIT;
	if (r->data_error)
		return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT);
	bool all = r->len == 0 || (r->to_ctrl ? r->incapsule || r->r2t_next == r->len
					      : r->c2h_next == r->len);
	if (!all)
		return NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR) | NVME_CQE_DNR_BIT;
	return status;
}

static void set_sgl(uint64_t *at, uint64_t addr, uint32_t len, uint8_t type)
{
	struct nvme_sgl_desc d = {.addr = addr, .len = len, .type = type};
	memcpy(at, &d, sizeof(d));
}

static int prepare(struct tcp_queue *q, struct tcp_req *r, struct nvme_sqe *sqe, void *buf,
		   size_t len, bool to_ctrl)
{
	r->buf = buf;
	r->len = (uint32_t)len;
	r->c2h_next = 0;
	r->r2t_next = 0;
	r->track.posted = false;
	r->data_error = false;
	r->violated = false;
	r->to_ctrl = to_ctrl;
	r->key = NULL;
	r->klen = 0;
	atomic_store_explicit(&r->h2c_busy, 0, memory_order_relaxed);
	r->track.start_ms = mono_ms_coarse();
	uint32_t room = q->icd_max;
	if (nvmf_kv_long_key(sqe)) {
		uint64_t iova = (uint64_t)sqe->cdw12 | (uint64_t)sqe->cdw13 << 32;
		size_t contig = 0;
		const uint8_t *key = dma_iova_to_va(iova, &contig);
		uint16_t klen = (uint16_t)((sqe->cdw11 & 0xffu) + 1u);
		if (!key || contig < klen)
			return unvme_fail(-EINVAL, "KV key pointer %#llx is not DMA memory",
					  (unsigned long long)iova);
		r->key = key;
		r->klen = klen;
		room = room > klen + 3u ? room - klen - 3u : 0;
	}
	r->incapsule = len && to_ctrl && len <= room;
	if (r->klen) {
		uint32_t koff = r->incapsule ? ((uint32_t)len + 3u) & ~3u : 0;
		set_sgl((uint64_t *)&sqe->cdw12, koff, r->klen, NVME_SGL_INCAPSULE);
	}
	set_sgl(&sqe->prp1, 0, (uint32_t)len, r->incapsule ? NVME_SGL_INCAPSULE : NVME_SGL_TRANSPORT);
	sqe->flags = (uint8_t)((sqe->flags & 0x3u) | NVME_CMD_FLAGS_PSDT_SGL);
	return 0;
}

int tcp_queue_map(struct tcp_queue *q, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len)
{
	return prepare(q, &q->reqs[cid], sqe, buf, len, nvmf_data_to_ctrl(q->qid, sqe));
}

void tcp_queue_doorbell(struct tcp_queue *q, uint16_t tail)
{
	q->sq_rung = tail;
	tcp_tx_flush(q);
}

void tcp_queue_mark_dead(struct tcp_queue *q, const char *why)
{
	bool was = atomic_exchange(&q->dead, true);
	if (was)
		return;
	q->dead_why = why;
	tcp_conn_shutdown(&q->conn);
	tcp_ctrlr_connection_lost(q->tc, q);
}

/* Writes a completion into the CQ ring, where the generic poll finds it by its phase. */
static void post(struct tcp_queue *q, uint16_t cid, const struct nvme_cqe *cqe, uint16_t status)
{
	struct unvme_qpair *qp = q->qp;
	nvmf_cq_post(&q->cq, qp, q->qid, cid, cqe, status);
	q->reqs[cid].track.posted = true;
}

void tcp_queue_complete(struct tcp_queue *q, uint16_t cid, const struct nvme_cqe *cqe)
{
	struct tcp_req *r = tcp_queue_req(q, cid);
	uint16_t status = tcp_req_status(r, cqe->status);
	if (cid == TCP_SYNC_CID) {
		q->sync_cqe = *cqe;
		q->sync_cqe.status = status;
		q->sync_done = true;
		return;
	}
	post(q, cid, cqe, status);
}

/* The receiver completes what is in flight on a dead connection, and what is submitted to it
 * afterwards (until the queue is reset for a new connection): nothing waits for an answer
 * that cannot come. A command a PDU broke the rules about fails with Data Transfer Error; the
 * others in flight with Command Aborted By Host when the host ended the connection because a
 * command got no answer in time (the queue's timeout), else (closed, reset, protocol error)
 * with Host Pathing Error, as do commands submitted after the end. The socket is shut down,
 * so no more data lands in their buffers. */
static void fail_in_flight(struct tcp_queue *q)
{
	/* what was sent before the end is aborted by the host (a timeout) or lost with the path;
	 * what came later never left */
	bool aborted = q->timed_out && !q->fail_done;
	q->fail_done = true;
	uint16_t lost = NVME_CQE_STATUS(NVME_SCT_PATH, aborted ? NVME_SC_ABORTED_BY_HOST
							       : NVME_SC_HOST_PATH_ERROR);
	struct nvme_cqe cqe = {0};
	for (uint32_t cid = 0; q->qp && cid < q->nreqs; cid++) {
		if (atomic_load_explicit(&q->qp->reqs[cid].state, memory_order_acquire) == REQ_FREE ||
		    q->reqs[cid].track.posted)
			continue;
		post(q, (uint16_t)cid, &cqe,
		     q->reqs[cid].violated ? tcp_req_status(&q->reqs[cid], 0) : lost);
	}
	if (q->sync_active && !q->sync_done) {
		q->sync_cqe = (struct nvme_cqe){.cid = TCP_SYNC_CID, .status = lost};
		q->sync_done = true;
	}
}

/* Anything in flight the dead connection has not given back yet? */
static bool unanswered(const struct tcp_queue *q)
{
	return nvmf_unanswered(q->qp, NVMF_TRACKS(q->reqs), q->nreqs);
}

static void scan_timeouts(struct tcp_queue *q, uint64_t now)
{
	q->last_scan_ms = now;
	if (!q->timeout_ms || !q->qp)
		return;
	static __thread char why[96];
	if (!nvmf_overdue(q->qp, q->tc->c, q->qid, NVMF_TRACKS(q->reqs), q->nreqs, q->timeout_ms, now,
			  why, sizeof(why)))
		return;
	q->timed_out = true; /* before the mark: the commands' status depends on it */
	tcp_queue_mark_dead(q, why);
}

/* Sends what is pending; a split queue's transmit state needs its ring lock, which the
 * submitter may hold: then the submitter sends. */
static void flush_shared(struct tcp_queue *q)
{
	struct unvme_qpair *qp = q->qp;
	if (qp && qp->split) {
		if (atomic_flag_test_and_set_explicit(&qp->ring_lock, memory_order_acquire))
			return;
		tcp_tx_flush(q);
		atomic_flag_clear_explicit(&qp->ring_lock, memory_order_release);
		return;
	}
	tcp_tx_flush(q);
}

int tcp_queue_pump(struct tcp_queue *q)
{
	if (!atomic_load_explicit(&q->dead, memory_order_relaxed)) {
		tcp_rx_pump(q);
		flush_shared(q);
		uint64_t now = mono_ms_coarse();
		if (now - q->last_scan_ms >= SCAN_INTERVAL_MS)
			scan_timeouts(q, now);
	}
	if (atomic_load_explicit(&q->dead, memory_order_acquire)) {
		/* once for what was in flight (the caller starts recovery), then for whatever is
		 * submitted to the dead connection before it is replaced */
		bool first = !q->fail_done;
		if (first || unanswered(q))
			fail_in_flight(q);
		return first ? 1 : 0;
	}
	return 0;
}

void tcp_queue_protocol_error(struct tcp_queue *q, uint16_t fes, uint32_t fei, const char *why)
{
	/* The TermReq goes out only between PDUs; a half-sent PDU would swallow it. The transmit
	 * side is ours here unless a split queue's submitter holds it. */
	struct unvme_qpair *qp = q->qp;
	bool owned = !(qp && qp->split) ||
		     !atomic_flag_test_and_set_explicit(&qp->ring_lock, memory_order_acquire);
	if (owned && tcp_txq_between_pdus(&q->tx) && q->conn.fd >= 0) {
		uint8_t term[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
		size_t n = tcp_pdu_term(term, false, fes, fei, q->rx.hdr, q->rx.have);
		if (q->conn.tls) {
			struct iovec v = {term, n};
			(void)tcp_tls_sendv(q->conn.tls, q->conn.fd, &v, 1);
		} else {
			(void)!send(q->conn.fd, term, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
	}
	if (owned && qp && qp->split)
		atomic_flag_clear_explicit(&qp->ring_lock, memory_order_release);
	static __thread char msg[200];
	snprintf(msg, sizeof(msg), "protocol error from the target: %s (%s)", why, tcp_fes_name(fes));
	tcp_queue_mark_dead(q, msg);
}

/* Waits for the socket to have something to read, or room to write while we have data. */
static void wait_io(struct tcp_queue *q, uint64_t deadline)
{
	uint64_t now = mono_ms_coarse();
	if (now >= deadline)
		return;
	struct pollfd pfd = {.fd = q->conn.fd,
			     .events = (short)(POLLIN | (tcp_txq_count(&q->tx) ? POLLOUT : 0))};
	uint64_t left = deadline - now;
	poll(&pfd, 1, left > 10 ? 10 : (int)left);
}

int tcp_queue_send(struct tcp_queue *q, struct nvme_sqe *cmd, void *data, uint32_t len, bool to_ctrl)
{
	if (atomic_load(&q->dead) || q->conn.fd < 0)
		return unvme_fail(-ENOTCONN, "%s: not connected%s%s", q->conn.peer,
				  q->dead_why ? ": " : "", q->dead_why ? q->dead_why : "");
	if (q->sync_active)
		return -EAGAIN;
	if (tcp_txq_full(&q->tx)) {
		tcp_tx_flush(q);
		if (tcp_txq_full(&q->tx))
			return -EAGAIN;
	}
	cmd->cid = TCP_SYNC_CID;
	/* the direction of fabrics commands is not in their opcode: the caller says it */
	int rc = prepare(q, &q->sync, cmd, data, len, to_ctrl);
	if (rc)
		return rc;
	q->sync_active = true;
	q->sync_done = false;
	q->sync_opc = cmd->opc;
	q->sync_fctype = ((struct nvmf_cmd *)cmd)->fctype;
	tcp_tx_capsule(q, cmd, &q->sync);
	tcp_tx_flush(q);
	return 0;
}

/* The message of a command of the transport's that got no answer in time. */
static const char *sync_late(struct tcp_queue *q, uint32_t timeout_ms)
{
	static __thread char why[96];
	bool fab = q->sync_opc == NVME_FABRICS_OPC;
	snprintf(why, sizeof(why), "%s command (%s %#x) got no answer within %u ms",
		 fab ? "fabrics" : "admin", fab ? "type" : "opcode", fab ? q->sync_fctype : q->sync_opc,
		 timeout_ms);
	return why;
}

int tcp_queue_reap(struct tcp_queue *q, struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	if (!q->sync_active)
		return unvme_fail(-EINVAL, "%s: no command of the transport's in flight", q->conn.peer);
	if (!q->sync_done && !atomic_load(&q->dead)) {
		tcp_tx_flush(q);
		tcp_rx_pump(q);
		uint64_t now = mono_ms_coarse();
		/* the queue's own commands time out too (a keep alive on the admin connection: a
		 * stalled admin command must not wait for it) */
		if (now - q->last_scan_ms >= SCAN_INTERVAL_MS)
			scan_timeouts(q, now);
		uint64_t limit = (timeout_ms ? timeout_ms : 10000) + mono_coarse_slack_ms();
		if (!q->sync_done && !atomic_load(&q->dead) && now >= q->sync.track.start_ms + limit) {
			q->timed_out = true;
			tcp_queue_mark_dead(q, sync_late(q, timeout_ms));
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
		return unvme_fail(sc == NVME_SC_ABORTED_BY_HOST ? -ETIMEDOUT : -ECONNRESET, "%s: %s",
				  q->conn.peer, q->dead_why ? q->dead_why : "connection lost");
	if (cpl)
		*cpl = q->sync_cqe;
	return NVME_STATUS_FROM_CQE(q->sync_cqe.status);
}

int tcp_queue_exec(struct tcp_queue *q, struct nvme_sqe *cmd, void *data, uint32_t len,
		   bool to_ctrl, struct nvme_cqe *cpl, uint32_t timeout_ms)
{
	uint64_t deadline = mono_ms_coarse() + (timeout_ms ? timeout_ms : 10000) + mono_coarse_slack_ms();
	int rc;
	while ((rc = tcp_queue_send(q, cmd, data, len, to_ctrl)) == -EAGAIN) {
		if (mono_ms_coarse() >= deadline) {
			/* (the transmit queue stayed full: the connection does not move) */
			q->sync_opc = cmd->opc;
			q->sync_fctype = ((struct nvmf_cmd *)cmd)->fctype;
			q->timed_out = true;
			tcp_queue_mark_dead(q, sync_late(q, timeout_ms));
			fail_in_flight(q);
			return unvme_fail(-ETIMEDOUT, "%s: %s", q->conn.peer, q->dead_why);
		}
		wait_io(q, deadline);
	}
	if (rc)
		return rc;
	while ((rc = tcp_queue_reap(q, cpl, timeout_ms)) == -EINPROGRESS)
		wait_io(q, deadline);
	return rc;
}
