/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host receive path: a byte stream from the controller parsed PDU by PDU without blocking.
 * Headers are gathered in rx_hdr and checked before use; C2HData goes to the command's buffer,
 * copied from the staging buffer when it arrived with other PDUs, else received straight into
 * place; R2Ts are queued for the transmitter; responses become CQ entries.
 *
 * Everything the controller says is checked against what the host knows: a response, data or
 * R2T for a command that is not outstanding, data beyond the command's buffer or out of order,
 * a second R2T while one is being answered, a header digest that does not match: each is a
 * fatal protocol error (H2CTermReq with its status, then the connection is closed). A data
 * digest that does not match fails only its command (Transient Transport Error), as the
 * transport binding says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/util/crc.h"
#include "ctrlr.h"
#include "tcp_ctrlr.h"
#include "tcp_queue.h"

#define RX_DIRECT_MIN 4096u /* data this large with nothing staged is received in place */

void tcp_rx_reset(struct tcp_queue *q)
{
	q->rx_start = q->rx_end = 0;
	q->rx_state = RX_HDR;
	q->rx_have = 0;
	q->rx_dst = NULL;
	q->rx_left = 0;
	q->rx_req = NULL;
	q->rx_dg_have = 0;
}

/* recv into the staging buffer. >0 bytes, 0 nothing now, <0 the connection failed. */
static int fill(struct tcp_queue *q)
{
	if (q->rx_start == q->rx_end)
		q->rx_start = q->rx_end = 0;
	if (q->rx_end == TCP_RX_BUF)
		return 0; /* unreachable: the parser always consumes before refilling */
	ssize_t n = recv(q->conn.fd, q->rxbuf + q->rx_end, TCP_RX_BUF - q->rx_end, MSG_DONTWAIT);
	if (n > 0) {
		q->rx_end += (uint32_t)n;
		return (int)n;
	}
	if (n == 0) {
		tcp_queue_mark_dead(q, "connection closed by the target");
		return -ECONNRESET;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	tcp_queue_mark_dead(q, "receive failed");
	return -errno;
}

static uint32_t staged(const struct tcp_queue *q)
{
	return q->rx_end - q->rx_start;
}

/* Takes up to want bytes from staging into dst. */
static uint32_t take(struct tcp_queue *q, void *dst, uint32_t want)
{
	uint32_t n = staged(q);
	if (n > want)
		n = want;
	memcpy(dst, q->rxbuf + q->rx_start, n);
	q->rx_start += n;
	return n;
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
	return r->posted ? NULL : r;
}

static void on_response(struct tcp_queue *q)
{
	const struct nvme_tcp_rsp *h = (const void *)q->rx_hdr;
	struct nvme_cqe cqe = h->cqe;
	struct tcp_req *r = live_req(q, cqe.cid);
	if (!r) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, 0,
					 "response for a command that is not outstanding");
		return;
	}
	if (atomic_load_explicit(&r->h2c_busy, memory_order_acquire)) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, 0,
					 "response while the command's data is still being sent");
		return;
	}
	tcp_queue_complete(q, cqe.cid, &cqe);
}

static void on_c2h_data(struct tcp_queue *q)
{
	const struct nvme_tcp_data *h = (const void *)q->rx_hdr;
	struct tcp_req *r = live_req(q, h->cccid);
	if (!r || r->incapsule) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
					 "C2HData for a command that is not outstanding or sends data");
		return;
	}
	if (h->datao != r->c2h_next) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_data, datao),
					 "C2HData out of order");
		return;
	}
	if ((uint64_t)h->datao + h->datal > r->len || h->datal != q->rx_info.data_len) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_DATA_RANGE, offsetof(struct nvme_tcp_data, datal),
					 "C2HData beyond the command's buffer");
		return;
	}
	if ((h->hdr.flags & NVME_TCP_F_SUCCESS) && h->datao + h->datal != r->len) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_hdr, flags),
					 "SUCCESS before all of the command's data");
		return;
	}
	r->c2h_next = h->datao + h->datal;
	q->rx_req = r;
	q->rx_cid = h->cccid;
	q->rx_dst = r->buf + h->datao;
	q->rx_left = h->datal;
	q->rx_crc = 0;
	q->rx_dg_have = 0;
	q->rx_state = RX_DATA;
}

static void on_r2t(struct tcp_queue *q)
{
	const struct nvme_tcp_data *h = (const void *)q->rx_hdr;
	struct tcp_req *r = live_req(q, h->cccid);
	if (!r || r->incapsule) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, cccid),
					 "R2T for a command that is not outstanding or has no data to send");
		return;
	}
	if (atomic_load_explicit(&r->h2c_busy, memory_order_acquire)) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_DATA_LIMIT, 0, "R2T while one is being answered "
					 "(MAXR2T is 1)");
		return;
	}
	if (h->datao != r->r2t_next) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_data, datao),
					 "R2T out of order");
		return;
	}
	if (h->datal == 0 || (uint64_t)h->datao + h->datal > r->len) {
		tcp_queue_protocol_error(q, NVME_TCP_FES_DATA_RANGE, offsetof(struct nvme_tcp_data, datal),
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
	const struct nvme_tcp_term *t = (const void *)q->rx_hdr;
	uint32_t fei = (uint32_t)t->fei[0] | (uint32_t)t->fei[1] << 8 | (uint32_t)t->fei[2] << 16 |
		       (uint32_t)t->fei[3] << 24;
	static __thread char why[160];
	snprintf(why, sizeof(why), "the target terminated the connection: %s (FES %u, FEI %u)",
		 tcp_fes_name(t->fes), t->fes, fei);
	tcp_queue_mark_dead(q, why);
}

/* A whole header is in rx_hdr: check its digest and act on it. */
static void on_header(struct tcp_queue *q)
{
	const struct nvme_tcp_hdr *h = (const void *)q->rx_hdr;
	if (h->flags & NVME_TCP_F_HDGST) {
		uint32_t want = tcp_hdgst(q->rx_hdr, h->hlen), got;
		memcpy(&got, q->rx_hdr + h->hlen, 4);
		if (want != got) {
			tcp_queue_protocol_error(q, NVME_TCP_FES_HDR_DIGEST, got, "header digest mismatch");
			return;
		}
	}
	q->rx_state = RX_HDR;
	q->rx_have = 0;
	switch (h->type) {
	case NVME_TCP_CAPSULE_RESP:
		on_response(q);
		break;
	case NVME_TCP_C2H_DATA:
		on_c2h_data(q);
		break;
	case NVME_TCP_R2T:
		on_r2t(q);
		break;
	default: /* C2HTermReq: handled by the caller */
		break;
	}
}

/* The data of a C2HData PDU (and its digest) arrived. */
static void data_done(struct tcp_queue *q)
{
	const struct nvme_tcp_data *h = (const void *)q->rx_hdr;
	struct tcp_req *r = q->rx_req;
	if (h->hdr.flags & NVME_TCP_F_DDGST) {
		uint32_t got;
		memcpy(&got, q->rx_dg, 4);
		if (got != q->rx_crc)
			r->data_error = true;
	}
	q->rx_state = RX_HDR;
	q->rx_have = 0;
	q->rx_req = NULL;
	if (h->hdr.flags & NVME_TCP_F_SUCCESS) {
		struct nvme_cqe cqe = {.cid = q->rx_cid, .sqid = q->qid};
		tcp_queue_complete(q, q->rx_cid, &cqe);
	}
}

/* Gathers header bytes; returns true when the PDU header (with digest and padding) is whole. */
static bool gather_header(struct tcp_queue *q)
{
	if (q->rx_have < sizeof(struct nvme_tcp_hdr)) {
		q->rx_have += take(q, q->rx_hdr + q->rx_have, sizeof(struct nvme_tcp_hdr) - q->rx_have);
		if (q->rx_have < sizeof(struct nvme_tcp_hdr))
			return false;
		struct tcp_pdu_rules rules = {.controller = false, .hdgst = q->conn.hdgst,
					      .ddgst = q->conn.ddgst, .pda = q->conn.hpda};
		enum tcp_pdu_verdict v = tcp_pdu_check((const void *)q->rx_hdr, &rules, &q->rx_info);
		if (v == TCP_PDU_DROP) {
			tcp_queue_mark_dead(q, q->rx_info.why);
			return false;
		}
		if (v == TCP_PDU_FATAL) {
			tcp_queue_protocol_error(q, q->rx_info.fes, q->rx_info.fei, q->rx_info.why);
			return false;
		}
	}
	uint32_t need = q->rx_info.hdr_bytes;
	if (q->rx_hdr[0] == NVME_TCP_C2H_TERM)
		need = q->rx_info.plen; /* the header and the echoed bytes, at most 152 */
	if (q->rx_have < need)
		q->rx_have += take(q, q->rx_hdr + q->rx_have, need - q->rx_have);
	return q->rx_have == need;
}

/* Moves C2HData bytes into place. Returns false when it must wait for the socket. */
static bool move_data(struct tcp_queue *q)
{
	if (staged(q)) {
		uint32_t n = take(q, q->rx_dst, q->rx_left);
		if (q->conn.ddgst)
			q->rx_crc = crc32c(q->rx_crc, q->rx_dst, n);
		q->rx_dst += n;
		q->rx_left -= n;
		return true;
	}
	if (q->rx_left < RX_DIRECT_MIN)
		return fill(q) > 0;
	ssize_t n = recv(q->conn.fd, q->rx_dst, q->rx_left, MSG_DONTWAIT);
	if (n > 0) {
		if (q->conn.ddgst)
			q->rx_crc = crc32c(q->rx_crc, q->rx_dst, (size_t)n);
		q->rx_dst += n;
		q->rx_left -= (uint32_t)n;
		return true;
	}
	if (n == 0)
		tcp_queue_mark_dead(q, "connection closed by the target");
	else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		tcp_queue_mark_dead(q, "receive failed");
	return false;
}

int tcp_rx_pump(struct tcp_queue *q)
{
	int events = 0;
	while (!atomic_load_explicit(&q->dead, memory_order_relaxed)) {
		switch (q->rx_state) {
		case RX_HDR:
			if (!staged(q) && fill(q) <= 0)
				return events;
			if (gather_header(q)) {
				events++;
				if (q->rx_hdr[0] == NVME_TCP_C2H_TERM)
					on_term(q);
				else
					on_header(q);
			}
			break;
		case RX_DATA:
			if (q->rx_left == 0) {
				if (q->rx_info.plen > q->rx_info.hdr_bytes + q->rx_info.data_len) {
					q->rx_state = RX_DDGST;
				} else {
					data_done(q);
					events++;
				}
				break;
			}
			if (!move_data(q))
				return events;
			break;
		case RX_DDGST:
			if (!staged(q) && fill(q) <= 0)
				return events;
			q->rx_dg_have += take(q, q->rx_dg + q->rx_dg_have, 4 - q->rx_dg_have);
			if (q->rx_dg_have == 4) {
				data_done(q);
				events++;
			}
			break;
		}
	}
	return events;
}
