/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host transmit path: CapsuleCmd PDUs for submitted commands (with in-capsule data for small
 * writes) and H2CData PDUs answering R2Ts, gathered into one sendmsg per flush. Data is sent
 * from the caller's buffer (scatter-gather), never copied. A flush sends what the socket
 * takes and keeps the rest for the next one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "lib/util/crc.h"
#include "ctrlr.h"
#include "tcp_ctrlr.h"
#include "tcp_queue.h"

#define TX_IOV_MAX 64

static inline uint32_t tx_count(const struct tcp_queue *q)
{
	return q->tx_tail - q->tx_head;
}

bool tcp_tx_full(const struct tcp_queue *q)
{
	return tx_count(q) >= TCP_TX_SLOTS;
}

void tcp_tx_reset(struct tcp_queue *q)
{
	q->tx_head = q->tx_tail = 0;
	q->tx_off = 0;
	q->sq_sent = q->sq_rung = 0;
	atomic_store(&q->h2c_prod, 0);
	atomic_store(&q->h2c_cons, 0);
	q->h2c_off = 0;
}

static uint32_t pdu_bytes(const struct tcp_txpdu *p)
{
	return p->hdr_len + p->data_len + p->extra_len + (p->has_ddgst ? NVME_TCP_DIGEST_LEN : 0u);
}

/* Common header, header digest and padding up to pdo. */
static void put_header(struct tcp_txpdu *p, const struct tcp_queue *q, const void *hdr, uint32_t hlen,
		       uint32_t pdo)
{
	memcpy(p->hdr, hdr, hlen);
	uint32_t at = hlen;
	if (q->conn.hdgst) {
		uint32_t d = tcp_hdgst(p->hdr, hlen);
		memcpy(p->hdr + at, &d, 4);
		at += 4;
	}
	if (pdo > at) {
		memset(p->hdr + at, 0, pdo - at);
		at = pdo;
	}
	p->hdr_len = (uint16_t)at;
}

static void put_ddgst(struct tcp_txpdu *p)
{
	uint32_t crc = crc32c(0, p->data, p->data_len);
	crc = crc32c(crc, p->extra, p->extra_len);
	memcpy(p->ddgst, &crc, 4);
	p->has_ddgst = true;
}

int tcp_tx_capsule(struct tcp_queue *q, const struct nvme_sqe *sqe, struct tcp_req *r)
{
	if (tcp_tx_full(q))
		return -EAGAIN;
	struct tcp_txpdu *p = &q->tx[q->tx_tail % TCP_TX_SLOTS];
	uint32_t vlen = r && r->incapsule ? r->len : 0;
	uint32_t klen = r ? r->klen : 0;
	uint32_t kpad = klen ? ((vlen + 3u) & ~3u) - vlen : 0;
	uint32_t icd = vlen + kpad + klen;
	struct nvme_tcp_cmd h = {0};
	h.hdr.type = NVME_TCP_CAPSULE_CMD;
	h.hdr.flags = q->conn.hdgst ? NVME_TCP_F_HDGST : 0;
	h.hdr.hlen = sizeof(h);
	h.sqe = *sqe;
	uint32_t pdo = 0, plen;
	if (icd) {
		pdo = tcp_pdu_data_offset(sizeof(h), q->conn.hdgst, q->conn.cpda);
		plen = pdo + icd + (q->conn.ddgst ? NVME_TCP_DIGEST_LEN : 0);
		if (q->conn.ddgst)
			h.hdr.flags |= NVME_TCP_F_DDGST;
	} else {
		plen = sizeof(h) + (q->conn.hdgst ? NVME_TCP_DIGEST_LEN : 0);
	}
	h.hdr.pdo = (uint8_t)pdo;
	h.hdr.plen = plen;
	put_header(p, q, &h, sizeof(h), pdo);
	p->data = vlen ? r->buf : NULL;
	p->data_len = vlen;
	memset(p->extra, 0, kpad);
	if (klen)
		memcpy(p->extra + kpad, r->key, klen);
	p->extra_len = (uint16_t)(kpad + klen);
	p->has_ddgst = false;
	if (icd && q->conn.ddgst)
		put_ddgst(p);
	p->h2c_last = false;
	p->cid = sqe->cid;
	q->tx_tail++;
	return 0;
}

/* The next H2CData PDU of the transfer at the head of the FIFO. Returns false when there is
 * none to make. */
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
	struct tcp_txpdu *p = &q->tx[q->tx_tail % TCP_TX_SLOTS];
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
	put_header(p, q, &h, sizeof(h), pdo);
	p->data = r->buf + t->off + q->h2c_off;
	p->data_len = chunk;
	p->extra_len = 0;
	p->has_ddgst = false;
	if (q->conn.ddgst)
		put_ddgst(p);
	p->h2c_last = last;
	p->cid = t->cid;
	q->tx_tail++;
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
	while (!tcp_tx_full(q)) {
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

/* Marks the head PDU sent: an R2T's last PDU lets the receiver accept the next R2T. */
static void retire_head(struct tcp_queue *q)
{
	struct tcp_txpdu *p = &q->tx[q->tx_head % TCP_TX_SLOTS];
	if (p->h2c_last) {
		struct tcp_req *r = tcp_queue_req(q, p->cid);
		if (r)
			atomic_store_explicit(&r->h2c_busy, 0, memory_order_release);
	}
	q->tx_head++;
	q->tx_off = 0;
}

/* One sendmsg of as much as is queued. Returns bytes sent, 0 when the socket is full, or a
 * negative errno. */
static ssize_t send_some(struct tcp_queue *q)
{
	struct iovec iov[TX_IOV_MAX];
	int n = 0;
	size_t skip = q->tx_off;
	for (uint32_t i = q->tx_head; i != q->tx_tail && n + 4 <= TX_IOV_MAX; i++) {
		struct tcp_txpdu *p = &q->tx[i % TCP_TX_SLOTS];
		struct {
			const void *b;
			size_t l;
		} parts[4] = {{p->hdr, p->hdr_len}, {p->data, p->data_len}, {p->extra, p->extra_len},
			      {p->ddgst, p->has_ddgst ? NVME_TCP_DIGEST_LEN : 0}};
		for (int k = 0; k < 4; k++) {
			size_t l = parts[k].l;
			const uint8_t *b = parts[k].b;
			if (skip >= l) {
				skip -= l;
				continue;
			}
			iov[n].iov_base = (void *)(b + skip);
			iov[n].iov_len = l - skip;
			skip = 0;
			n++;
		}
	}
	if (n == 0)
		return 0;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
	for (;;) {
		ssize_t s = sendmsg(q->conn.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (s >= 0)
			return s;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -errno;
	}
}

void tcp_tx_flush(struct tcp_queue *q)
{
	if (atomic_load_explicit(&q->dead, memory_order_relaxed) || q->conn.fd < 0)
		return;
	for (;;) {
		refill(q);
		if (tx_count(q) == 0)
			return;
		ssize_t s = send_some(q);
		if (s < 0) {
			tcp_queue_mark_dead(q, s == -EPIPE || s == -ECONNRESET ? "connection closed by the target"
									 : "send failed");
			return;
		}
		if (s == 0)
			return; /* the socket is full: the next doorbell or pump goes on */
		size_t left = (size_t)s;
		while (left) {
			struct tcp_txpdu *p = &q->tx[q->tx_head % TCP_TX_SLOTS];
			size_t rest = pdu_bytes(p) - q->tx_off;
			if (left < rest) {
				q->tx_off += left;
				return; /* partial: the socket took what it could */
			}
			left -= rest;
			retire_head(q);
		}
	}
}
