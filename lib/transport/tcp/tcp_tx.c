/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host transmit path: CapsuleCmd PDUs for submitted commands (with in-capsule data for small
 * writes) and H2CData PDUs answering R2Ts, gathered into one sendmsg per flush (tcp_stream.c).
 * Data is sent from the caller's buffer, never copied. A flush sends what the socket takes and
 * keeps the rest for the next one.
 */
#include <errno.h>
#include <string.h>

#include "lib/driver/ctrlr.h"
#include "tcp_ctrlr.h"
#include "tcp_queue.h"

enum { PDU_CAPSULE = 1, PDU_H2C_LAST = 2 };

void tcp_tx_reset(struct tcp_queue *q)
{
	tcp_txq_reset(&q->tx);
	q->sq_sent = q->sq_rung = 0;
	atomic_store(&q->h2c_prod, 0);
	atomic_store(&q->h2c_cons, 0);
	q->h2c_off = 0;
}

int tcp_tx_capsule(struct tcp_queue *q, const struct nvme_sqe *sqe, struct tcp_req *r)
{
	if (tcp_txq_full(&q->tx))
		return -EAGAIN;
	struct tcp_txpdu *p = tcp_txq_slot(&q->tx);
	uint32_t vlen = r && r->incapsule ? r->len : 0;
	uint32_t klen = r ? r->klen : 0;
	uint32_t kpad = klen ? ((vlen + 3u) & ~3u) - vlen : 0;
	uint32_t icd = vlen + kpad + klen;
	struct nvme_tcp_cmd h = {0};
	h.hdr.type = NVME_TCP_CAPSULE_CMD;
	h.hdr.flags = q->conn.hdgst ? NVME_TCP_F_HDGST : 0;
	h.hdr.hlen = sizeof(h);
	h.sqe = *sqe;
	uint32_t pdo = 0;
	if (icd) {
		pdo = tcp_pdu_data_offset(sizeof(h), q->conn.hdgst, q->conn.cpda);
		h.hdr.plen = pdo + icd + (q->conn.ddgst ? NVME_TCP_DIGEST_LEN : 0);
		if (q->conn.ddgst)
			h.hdr.flags |= NVME_TCP_F_DDGST;
	} else {
		h.hdr.plen = sizeof(h) + (q->conn.hdgst ? NVME_TCP_DIGEST_LEN : 0);
	}
	h.hdr.pdo = (uint8_t)pdo;
	tcp_txpdu_header(p, &h, sizeof(h), q->conn.hdgst, pdo);
	p->data = vlen ? r->buf : NULL;
	p->data_len = vlen;
	p->pad_len = (uint8_t)kpad;
	p->data2 = klen ? r->key : NULL;
	p->data2_len = klen;
	if (icd && q->conn.ddgst)
		tcp_txpdu_ddgst(p);
	p->kind = PDU_CAPSULE;
	p->cid = sqe->cid;
	tcp_txq_push(&q->tx);
	return 0;
}

/* The next H2CData PDU of the transfer at the head of the FIFO. False when there is none. */
static bool tx_h2c(struct tcp_queue *q)
{
	uint32_t cons = atomic_load_explicit(&q->h2c_cons, memory_order_relaxed);
	/* acquire: the transfer's fields are written before the receiver published it */
	if (cons == atomic_load_explicit(&q->h2c_prod, memory_order_acquire))
		return false;
	const struct tcp_h2c *t = &q->h2c[cons % q->h2c_size];
	struct tcp_req *r = tcp_queue_req(q, t->cid);
	uint32_t chunk = t->len - q->h2c_off;
	if (chunk > q->conn.maxh2cdata)
		chunk = q->conn.maxh2cdata;
	bool last = q->h2c_off + chunk == t->len;
	struct tcp_txpdu *p = tcp_txq_slot(&q->tx);
	struct nvme_tcp_data h = {0};
	h.hdr.type = NVME_TCP_H2C_DATA;
	h.hdr.flags = (uint8_t)((q->conn.hdgst ? NVME_TCP_F_HDGST : 0) |
				(q->conn.ddgst ? NVME_TCP_F_DDGST : 0) | (last ? NVME_TCP_F_LAST_PDU : 0));
	h.hdr.hlen = sizeof(h);
	uint32_t pdo = tcp_pdu_data_offset(sizeof(h), q->conn.hdgst, q->conn.cpda);
	h.hdr.pdo = (uint8_t)pdo;
	h.hdr.plen = pdo + chunk + (q->conn.ddgst ? NVME_TCP_DIGEST_LEN : 0);
	h.cccid = t->cid;
	h.ttag = t->ttag;
	h.datao = t->off + q->h2c_off;
	h.datal = chunk;
	tcp_txpdu_header(p, &h, sizeof(h), q->conn.hdgst, pdo);
	p->data = r->buf + t->off + q->h2c_off;
	p->data_len = chunk;
	if (q->conn.ddgst)
		tcp_txpdu_ddgst(p);
	p->kind = last ? PDU_H2C_LAST : 0;
	p->cid = t->cid;
	tcp_txq_push(&q->tx);
	if (last) {
		q->h2c_off = 0;
		atomic_store_explicit(&q->h2c_cons, cons + 1, memory_order_release);
	} else {
		q->h2c_off += chunk;
	}
	return true;
}

/* Turns pending work into PDUs while there is room: H2C data first (it frees the target's
 * buffers and completes commands), then new capsules from the SQ ring. */
static void refill(struct tcp_queue *q)
{
	while (!tcp_txq_full(&q->tx)) {
		if (tx_h2c(q))
			continue;
		if (q->qp && q->sq_sent != q->sq_rung) {
			struct unvme_qpair *qp = q->qp;
			const struct nvme_sqe *sqe = &qp->sq[q->sq_sent];
			tcp_tx_capsule(q, sqe, tcp_queue_req(q, sqe->cid));
			q->sq_sent = (uint16_t)(q->sq_sent + 1u == qp->depth ? 0 : q->sq_sent + 1u);
			continue;
		}
		break;
	}
}

/* An R2T's last PDU left: the receiver may accept the command's next R2T. */
static void sent(void *ctx, struct tcp_txpdu *p)
{
	struct tcp_queue *q = ctx;
	if (p->kind == PDU_H2C_LAST) {
		struct tcp_req *r = tcp_queue_req(q, p->cid);
		if (r)
			atomic_store_explicit(&r->h2c_busy, 0, memory_order_release);
	}
}

void tcp_tx_flush(struct tcp_queue *q)
{
	if (atomic_load_explicit(&q->dead, memory_order_relaxed) || q->conn.fd < 0)
		return;
	for (;;) {
		refill(q);
		if (tcp_txq_count(&q->tx) == 0)
			return;
		uint32_t before = q->tx.head;
		ssize_t s = tcp_txq_send(&q->tx, q->conn.fd, sent, q);
		if (s < 0) {
			tcp_queue_mark_dead(q, s == -EPIPE || s == -ECONNRESET ? "connection closed by the target"
									 : "send failed");
			return;
		}
		if (s == 0 || q->tx.head == before)
			return; /* the socket is full (or took part of a PDU): the next flush goes on */
	}
}
