/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host receive path: the controller's byte stream parsed PDU by PDU without blocking
 * (tcp_stream.c gathers and checks headers and moves data). C2HData goes to the command's
 * buffer, R2Ts are queued for the transmitter, responses become CQ entries.
 *
 * Everything the controller says is checked against what the host knows: a response, data or
 * R2T for a command that is not outstanding, data in the wrong direction (C2HData for a
 * write, an R2T for a read), data beyond the command's buffer or out of order, a second R2T
 * while one is being answered, a header digest that does not match: each is a fatal protocol
 * error (H2CTermReq with its status, then the connection is closed; the command it was about
 * fails with Data Transfer Error). A response is taken as a success only when every byte of
 * the command moved (tcp_req_status), else the command fails with Data Transfer Error and the
 * connection goes on. A data digest that does not match fails only its command (Transient
 * Transport Error), as the transport binding says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/driver/ctrlr.h"
#include "tcp_ctrlr.h"
#include "tcp_queue.h"

void tcp_rx_reset(struct tcp_queue *q)
{
	tcp_rxq_reset(&q->rx);
	q->rx_in_data = false;
	q->rx_req = NULL;
}

/* Is cid a command the controller may talk about now? */
static struct tcp_req *live_req(struct tcp_queue *q, uint16_t cid)
{
	if (cid == TCP_SYNC_CID)
		return q->sync_active && !q->sync_done ? &q->sync : NULL;
	if (!q->qp || cid >= q->nreqs)
		return NULL;
	/* acquire: the submitter filled the tracker (and map() this request) before ACTIVE */
	if (atomic_load_explicit(&q->qp->reqs[cid].state, memory_order_acquire) == REQ_FREE)
		return NULL;
	struct tcp_req *r = &q->reqs[cid];
	return r->track.posted ? NULL : r;
}

static void violation(struct tcp_queue *q, struct tcp_req *r, uint16_t fes, uint32_t fei, const char *why);

static void on_response(struct tcp_queue *q)
{
	const struct nvme_tcp_rsp *h = (const void *)q->rx.hdr;
	struct nvme_cqe cqe = h->cqe;
	struct tcp_req *r = live_req(q, cqe.cid);
	if (!r) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, 0,
					 "response for a command that is not outstanding");
		return;
	}
	if (atomic_load_explicit(&r->h2c_busy, memory_order_acquire)) {
		violation(q, r, NVME_TCP_FES_PDU_SEQUENCE, 0, "response while the command's data is still being sent");
		return;
	}
	/* a success before all the data moved fails the command (tcp_req_status): the framing
	 * is intact, so the connection goes on */
	tcp_queue_complete(q, cqe.cid, &cqe);
}

/* A PDU about command r broke the rules: r fails with Data Transfer Error (the others in
 * flight with Host Pathing Error, as after any loss of the connection). */
static void violation(struct tcp_queue *q, struct tcp_req *r, uint16_t fes, uint32_t fei, const char *why)
{
	if (r)
		r->violated = true;
	tcp_queue_protocol_error(q, fes, fei, why);
}

static void on_c2h_data(struct tcp_queue *q)
{
	const struct nvme_tcp_data *h = (const void *)q->rx.hdr;
	struct tcp_req *r = live_req(q, h->cccid);
	if (!r) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
					 "C2HData for a command that is not outstanding");
		return;
	}
	/* Data comes to the host only for a command that reads: a write's buffer is never
	 * written (the caller's data would change under a write that then "succeeds"). */
	if (r->to_ctrl || r->len == 0) {
		violation(q, r, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
			  r->len ? "C2HData for a command that sends data to the controller"
				 : "C2HData for a command without data");
		return;
	}
	if (h->datao != r->c2h_next) {
		violation(q, r, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_data, datao),
			  "C2HData out of order");
		return;
	}
	if ((uint64_t)h->datao + h->datal > r->len || h->datal != q->rx.info.data_len) {
		violation(q, r, NVME_TCP_FES_DATA_RANGE, offsetof(struct nvme_tcp_data, datal),
			  "C2HData beyond the command's buffer");
		return;
	}
	if ((h->hdr.flags & NVME_TCP_F_SUCCESS) && h->datao + h->datal != r->len) {
		violation(q, r, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_hdr, flags),
			  "SUCCESS before all of the command's data");
		return;
	}
	r->c2h_next = h->datao + h->datal;
	q->rx_req = r;
	q->rx_cid = h->cccid;
	q->rx_in_data = true;
	tcp_rxq_data_begin(&q->rx, r->buf + h->datao, h->datal, h->hdr.flags & NVME_TCP_F_DDGST);
}

static void on_r2t(struct tcp_queue *q)
{
	const struct nvme_tcp_data *h = (const void *)q->rx.hdr;
	struct tcp_req *r = live_req(q, h->cccid);
	if (!r) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
					 "R2T for a command that is not outstanding");
		return;
	}
	/* The host sends only what a write carries: an R2T for a read would send the read
	 * buffer's earlier contents (host memory) to the controller. */
	if (!r->to_ctrl || r->incapsule || r->len == 0) {
		violation(q, r, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
			  !r->to_ctrl && r->len ? "R2T for a command that reads (it has nothing to send)"
						: "R2T for a command that has no data left to send");
		return;
	}
	if (atomic_load_explicit(&r->h2c_busy, memory_order_acquire)) {
		violation(q, r, NVME_TCP_FES_DATA_LIMIT, 0, "R2T while one is being answered (MAXR2T is 1)");
		return;
	}
	if (h->datao != r->r2t_next) {
		violation(q, r, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_data, datao),
			  "R2T out of order");
		return;
	}
	if (h->datal == 0 || (uint64_t)h->datao + h->datal > r->len) {
		violation(q, r, NVME_TCP_FES_DATA_RANGE, offsetof(struct nvme_tcp_data, datal),
			  "R2T beyond the command's data");
		return;
	}
	r->r2t_next = h->datao + h->datal;
	atomic_store_explicit(&r->h2c_busy, 1, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&q->h2c_prod, memory_order_relaxed);
	struct tcp_h2c *t = &q->h2c[prod % q->h2c_size];
	t->cid = h->cccid;
	t->ttag = h->ttag;
	t->off = h->datao;
	t->len = h->datal;
	atomic_store_explicit(&q->h2c_prod, prod + 1, memory_order_release);
}

static void on_term(struct tcp_queue *q)
{
	const struct nvme_tcp_term *t = (const void *)q->rx.hdr;
	uint32_t fei = (uint32_t)t->fei[0] | (uint32_t)t->fei[1] << 8 | (uint32_t)t->fei[2] << 16 |
		       (uint32_t)t->fei[3] << 24;
	static __thread char why[160];
	snprintf(why, sizeof(why), "the target terminated the connection: %s (FES %u, FEI %u)",
		 tcp_fes_name(t->fes), t->fes, fei);
	tcp_queue_mark_dead(q, why);
}

/* The data of a C2HData PDU (and its digest) arrived. */
static void data_done(struct tcp_queue *q, bool digest_ok)
{
	const struct nvme_tcp_data *h = (const void *)q->rx.hdr;
	if (!digest_ok)
		q->rx_req->data_error = true;
	uint8_t flags = h->hdr.flags;
	uint16_t cid = q->rx_cid;
	q->rx_in_data = false;
	q->rx_req = NULL;
	tcp_rxq_next(&q->rx);
	if (flags & NVME_TCP_F_SUCCESS) {
		struct nvme_cqe cqe = {.cid = cid, .sqid = q->qid};
		tcp_queue_complete(q, cid, &cqe);
	}
}

static void lost(struct tcp_queue *q, int err)
{
	tcp_queue_mark_dead(q, err == -ECONNRESET ? "connection closed by the target" : "receive failed");
}

int tcp_rx_pump(struct tcp_queue *q)
{
	int events = 0;
	struct tcp_pdu_rules rules = {.controller = false, .hdgst = q->conn.hdgst,
				      .ddgst = q->conn.ddgst, .pda = q->conn.hpda};
	while (!atomic_load_explicit(&q->dead, memory_order_relaxed)) {
		if (q->rx_in_data) {
			bool ok;
			int err;
			enum tcp_rxq_step st = tcp_rxq_data(&q->rx, q->conn.fd, &ok, &err);
			if (st == RXQ_ERROR)
				lost(q, err);
			if (st != RXQ_DONE)
				return events;
			data_done(q, ok);
			events++;
			continue;
		}
		if (!tcp_rxq_staged(&q->rx)) {
			int f = tcp_rxq_fill(&q->rx, q->conn.fd);
			if (f < 0)
				lost(q, f);
			if (f <= 0)
				return events;
		}
		enum tcp_pdu_verdict v;
		enum tcp_rxq_step st = tcp_rxq_header(&q->rx, &rules, &v);
		if (st == RXQ_MORE)
			continue;
		if (st == RXQ_ERROR) {
			if (v == TCP_PDU_DROP)
				tcp_queue_mark_dead(q, q->rx.info.why);
			else
				tcp_queue_protocol_error(q, q->rx.info.fes, q->rx.info.fei, q->rx.info.why);
			return events;
		}
		events++;
		switch (q->rx.hdr[0]) {
		case NVME_TCP_CAPSULE_RESP:
			on_response(q);
			tcp_rxq_next(&q->rx);
			break;
		case NVME_TCP_C2H_DATA:
			on_c2h_data(q); /* the data follows (rx_in_data) */
			break;
		case NVME_TCP_R2T:
			on_r2t(q);
			tcp_rxq_next(&q->rx);
			break;
		default: /* C2HTermReq (the only other type the check lets through) */
			on_term(q);
			break;
		}
	}
	return events;
}
