/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PDUs over a non-blocking socket (see tcp_stream.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "lib/util/crc.h"
#include "tcp_stream.h"
#include "tcp_tls.h"

#define TX_IOV_MAX 64
#define RX_DIRECT_MIN 4096u /* data this large with nothing staged is received in place */

int tcp_txq_init(struct tcp_txq *q, uint32_t n)
{
	memset(q, 0, sizeof(*q));
	q->pdu = calloc(n, sizeof(*q->pdu));
	q->n = n;
	return q->pdu ? 0 : -ENOMEM;
}

int tcp_txq_grow(struct tcp_txq *q, uint32_t n)
{
	if (n <= q->n)
		return 0;
	struct tcp_txpdu *p = calloc(n, sizeof(*p));
	if (!p)
		return -ENOMEM;
	uint32_t cnt = tcp_txq_count(q);
	for (uint32_t i = 0; i < cnt; i++)
		p[i] = q->pdu[(q->head + i) % q->n];
	free(q->pdu);
	q->pdu = p;
	q->n = n;
	q->head = 0;
	q->tail = cnt;
	return 0;
}

void tcp_txq_fini(struct tcp_txq *q)
{
	free(q->pdu);
	q->pdu = NULL;
}

void tcp_txq_reset(struct tcp_txq *q)
{
	q->head = q->tail = 0;
	q->off = 0;
}

void tcp_txpdu_header(struct tcp_txpdu *p, const void *hdr, uint32_t hlen, bool hdgst, uint32_t pdo)
{
	memcpy(p->hdr, hdr, hlen);
	uint32_t at = hlen;
	if (hdgst) {
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

static const uint8_t zeros[4];

void tcp_txpdu_ddgst(struct tcp_txpdu *p)
{
	uint32_t crc = crc32c(0, p->data, p->data_len);
	crc = crc32c(crc, zeros, p->pad_len);
	crc = crc32c(crc, p->data2, p->data2_len);
	memcpy(p->ddgst, &crc, 4);
	p->has_ddgst = true;
}

static size_t pdu_bytes(const struct tcp_txpdu *p)
{
	return (size_t)p->hdr_len + p->data_len + p->pad_len + p->data2_len +
	       (p->has_ddgst ? NVME_TCP_DIGEST_LEN : 0u);
}

/* PDUs of no bytes (markers that act when reached) are done as soon as they are first. */
static void retire_empty(struct tcp_txq *q, void (*done)(void *ctx, struct tcp_txpdu *p), void *ctx)
{
	while (q->head != q->tail && q->off == 0 && pdu_bytes(&q->pdu[q->head % q->n]) == 0) {
		struct tcp_txpdu *p = &q->pdu[q->head % q->n];
		q->head++;
		if (done)
			done(ctx, p);
	}
}

ssize_t tcp_txq_send(struct tcp_txq *q, int fd, void (*done)(void *ctx, struct tcp_txpdu *p), void *ctx)
{
	retire_empty(q, done, ctx);
	struct iovec iov[TX_IOV_MAX];
	int n = 0;
	/* with TLS, what the session took but did not send yet is not offered again */
	size_t skip = q->off + (q->tls ? tcp_tls_unsent(q->tls) : 0);
	for (uint32_t i = q->head; i != q->tail && n + 5 <= TX_IOV_MAX; i++) {
		struct tcp_txpdu *p = &q->pdu[i % q->n];
		const void *b[5] = {p->hdr, p->data, zeros, p->data2, p->ddgst};
		size_t l[5] = {p->hdr_len, p->data_len, p->pad_len, p->data2_len,
			       p->has_ddgst ? NVME_TCP_DIGEST_LEN : 0};
		for (int k = 0; k < 5; k++) {
			if (skip >= l[k]) {
				skip -= l[k];
				continue;
			}
			iov[n].iov_base = (uint8_t *)b[k] + skip;
			iov[n].iov_len = l[k] - skip;
			skip = 0;
			n++;
		}
	}
	ssize_t s;
	if (q->tls) {
		s = tcp_tls_sendv(q->tls, fd, iov, n);
		if (s <= 0)
			return s;
	} else {
		if (n == 0)
			return 0;
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		do {
			s = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		} while (s < 0 && errno == EINTR);
		if (s < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	}
	size_t left = (size_t)s;
	while (left) {
		struct tcp_txpdu *p = &q->pdu[q->head % q->n];
		size_t rest = pdu_bytes(p) - q->off;
		if (left < rest) {
			q->off += left;
			break;
		}
		left -= rest;
		q->head++;
		q->off = 0;
		if (done)
			done(ctx, p);
		retire_empty(q, done, ctx);
	}
	return s;
}

bool tcp_txq_between_pdus(const struct tcp_txq *q)
{
	return q->off == 0 && (!q->tls || tcp_tls_unsent(q->tls) == 0);
}

int tcp_rxq_init(struct tcp_rxq *r)
{
	memset(r, 0, sizeof(*r));
	r->buf = malloc(TCP_RX_BUF);
	return r->buf ? 0 : -ENOMEM;
}

void tcp_rxq_fini(struct tcp_rxq *r)
{
	free(r->buf);
	r->buf = NULL;
}

void tcp_rxq_reset(struct tcp_rxq *r)
{
	r->start = r->end = 0;
	tcp_rxq_next(r);
}

/* recv, or the TLS session's: bytes, 0 when nothing is there now, or a negative errno. */
static ssize_t rx_recv(struct tcp_rxq *r, int fd, void *buf, size_t len)
{
	if (r->tls)
		return tcp_tls_recv(r->tls, fd, buf, len);
	ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
	if (n > 0)
		return n;
	if (n == 0)
		return -ECONNRESET;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	return -errno;
}

int tcp_rxq_fill(struct tcp_rxq *r, int fd)
{
	if (r->tls && !tcp_tls_established(r->tls)) {
		int h = tcp_tls_handshake(r->tls, fd);
		if (h <= 0)
			return h;
	}
	if (r->start == r->end)
		r->start = r->end = 0;
	if (r->end == TCP_RX_BUF) {
		/* keep the unconsumed bytes, move them to the front */
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	ssize_t n = rx_recv(r, fd, r->buf + r->end, TCP_RX_BUF - r->end);
	if (n > 0)
		r->end += (uint32_t)n;
	return (int)n;
}

uint32_t tcp_rxq_take(struct tcp_rxq *r, void *dst, uint32_t want)
{
	uint32_t n = tcp_rxq_staged(r);
	if (n > want)
		n = want;
	if (dst)
		memcpy(dst, r->buf + r->start, n);
	r->start += n;
	return n;
}

enum tcp_rxq_step tcp_rxq_header(struct tcp_rxq *r, const struct tcp_pdu_rules *rules,
				 enum tcp_pdu_verdict *verdict)
{
	if (!r->checked) {
		if (r->have < sizeof(struct nvme_tcp_hdr))
			r->have += tcp_rxq_take(r, r->hdr + r->have, sizeof(struct nvme_tcp_hdr) - r->have);
		if (r->have < sizeof(struct nvme_tcp_hdr))
			return RXQ_MORE;
		*verdict = tcp_pdu_check((const void *)r->hdr, rules, &r->info);
		if (*verdict != TCP_PDU_OK)
			return RXQ_ERROR;
		r->checked = true;
	}
	const struct nvme_tcp_hdr *h = (const void *)r->hdr;
	bool term = h->type == NVME_TCP_H2C_TERM || h->type == NVME_TCP_C2H_TERM;
	uint32_t need = term ? r->info.plen : r->info.hdr_bytes;
	if (r->have < need)
		r->have += tcp_rxq_take(r, r->hdr + r->have, need - r->have);
	if (r->have < need)
		return RXQ_MORE;
	if (h->flags & NVME_TCP_F_HDGST) {
		uint32_t want = tcp_hdgst(r->hdr, h->hlen), got;
		memcpy(&got, r->hdr + h->hlen, 4);
		if (want != got) {
			r->info.fes = NVME_TCP_FES_HDR_DIGEST;
			r->info.fei = got;
			r->info.why = "header digest mismatch";
			*verdict = TCP_PDU_FATAL;
			return RXQ_ERROR;
		}
	}
	*verdict = TCP_PDU_OK;
	return RXQ_DONE;
}

void tcp_rxq_data_begin(struct tcp_rxq *r, void *dst, uint32_t len, bool digest)
{
	r->dst = dst;
	r->left = len;
	r->crc = 0;
	r->crc_on = digest;
	r->dg_have = 0;
}

static void account(struct tcp_rxq *r, uint32_t n)
{
	if (r->crc_on && r->dst)
		r->crc = crc32c(r->crc, r->dst, n);
	if (r->dst)
		r->dst += n;
	r->left -= n;
}

enum tcp_rxq_step tcp_rxq_data(struct tcp_rxq *r, int fd, bool *digest_ok, int *err)
{
	*err = 0;
	while (r->left) {
		if (tcp_rxq_staged(r)) {
			uint32_t n = tcp_rxq_staged(r) < r->left ? tcp_rxq_staged(r) : r->left;
			if (r->dst)
				memcpy(r->dst, r->buf + r->start, n);
			r->start += n;
			account(r, n);
			continue;
		}
		if (r->left < RX_DIRECT_MIN || !r->dst) {
			int f = tcp_rxq_fill(r, fd);
			if (f <= 0) {
				*err = f;
				return f < 0 ? RXQ_ERROR : RXQ_MORE;
			}
			continue;
		}
		ssize_t n = rx_recv(r, fd, r->dst, r->left);
		if (n > 0) {
			account(r, (uint32_t)n);
			continue;
		}
		if (n == 0)
			return RXQ_MORE;
		*err = (int)n;
		return RXQ_ERROR;
	}
	if (r->crc_on) {
		while (r->dg_have < 4) {
			if (!tcp_rxq_staged(r)) {
				int f = tcp_rxq_fill(r, fd);
				if (f <= 0) {
					*err = f;
					return f < 0 ? RXQ_ERROR : RXQ_MORE;
				}
			}
			r->dg_have += tcp_rxq_take(r, r->dg + r->dg_have, 4 - r->dg_have);
		}
		uint32_t got;
		memcpy(&got, r->dg, 4);
		*digest_ok = got == r->crc;
	} else {
		*digest_ok = true;
	}
	return RXQ_DONE;
}
