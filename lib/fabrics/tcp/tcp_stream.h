/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moving NVMe/TCP PDUs over a non-blocking socket, for the host transport and the target
 * alike: an output queue of PDUs sent with one sendmsg per flush (data straight from the
 * caller's buffers), and an input side that gathers and checks headers and moves data into
 * place, copied from a staging buffer when it arrived with other PDUs, else received straight
 * into the destination. What a PDU means is the caller's business.
 */
#ifndef UNVME_DRIVER_TCP_STREAM_H
#define UNVME_DRIVER_TCP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tcp_pdu.h"

/* One PDU on its way out: header (+ digest + padding), data from the caller's buffer, then
 * optionally zero padding to a dword and a second piece (a long KV key), then the data
 * digest. The buffers must stay put until the PDU is sent. */
struct tcp_txpdu {
	uint8_t hdr[128];
	uint16_t hdr_len;
	uint8_t pad_len;
	bool has_ddgst;
	uint32_t data_len;
	const uint8_t *data;
	const uint8_t *data2;
	uint32_t data2_len;
	uint8_t ddgst[4];
	uint8_t kind;             /* the user's: what to do when it is sent */
	uint16_t cid;
	void *owner;
};

struct tcp_tls;

struct tcp_txq {
	struct tcp_txpdu *pdu;
	uint32_t n;
	uint32_t head, tail;      /* free running; tail - head PDUs queued */
	size_t off;               /* bytes of the head PDU already sent */
	struct tcp_tls *tls;      /* the connection's TLS session (tcp_tls.h), NULL in the clear */
};

int tcp_txq_init(struct tcp_txq *q, uint32_t n);
/* Room for n PDUs, keeping those queued (in order). */
int tcp_txq_grow(struct tcp_txq *q, uint32_t n);
void tcp_txq_fini(struct tcp_txq *q);
void tcp_txq_reset(struct tcp_txq *q);
static inline uint32_t tcp_txq_count(const struct tcp_txq *q)
{
	return q->tail - q->head;
}
static inline bool tcp_txq_full(const struct tcp_txq *q)
{
	return tcp_txq_count(q) >= q->n;
}
/* The next free slot, to fill and then push. */
static inline struct tcp_txpdu *tcp_txq_slot(struct tcp_txq *q)
{
	struct tcp_txpdu *p = &q->pdu[q->tail % q->n];
	p->data = NULL;
	p->data_len = 0;
	p->pad_len = 0;
	p->data2 = NULL;
	p->data2_len = 0;
	p->has_ddgst = false;
	p->kind = 0;
	p->owner = NULL;
	return p;
}
static inline void tcp_txq_push(struct tcp_txq *q)
{
	q->tail++;
}
/* Copies the header, appends its digest when on, pads with zeros up to pdo. */
void tcp_txpdu_header(struct tcp_txpdu *p, const void *hdr, uint32_t hlen, bool hdgst, uint32_t pdo);
/* Computes the data digest over data, padding and the second piece. */
void tcp_txpdu_ddgst(struct tcp_txpdu *p);

/* Sends as much as the socket takes, calling done(ctx, pdu) for each PDU fully sent (with TLS:
 * once its records left the socket). Returns bytes sent (0: nothing queued or the socket is
 * full) or a negative errno. */
ssize_t tcp_txq_send(struct tcp_txq *q, int fd, void (*done)(void *ctx, struct tcp_txpdu *p), void *ctx);
/* Nothing of a PDU is on its way: another PDU (a termination request) may be written now. */
bool tcp_txq_between_pdus(const struct tcp_txq *q);

#define TCP_RX_BUF (64u * 1024)  /* staging; larger data goes straight to the destination */
#define TCP_RX_HDR_MAX 256u      /* a header with digest and padding (PDO is one byte) */

struct tcp_rxq {
	uint8_t *buf;
	uint32_t start, end;
	uint8_t hdr[TCP_RX_HDR_MAX + 8];
	uint32_t have;            /* header bytes gathered */
	bool checked;             /* the common header passed tcp_pdu_check */
	struct tcp_pdu_info info;
	uint8_t *dst;             /* where the current data goes (NULL: discard) */
	uint32_t left;            /* data bytes still to come */
	uint32_t crc;             /* data digest so far */
	bool crc_on;
	uint8_t dg[4];
	uint32_t dg_have;
	struct tcp_tls *tls;      /* the connection's TLS session, NULL in the clear; the first
				     fill runs its handshake */
};

int tcp_rxq_init(struct tcp_rxq *r);
void tcp_rxq_fini(struct tcp_rxq *r);
void tcp_rxq_reset(struct tcp_rxq *r);
static inline uint32_t tcp_rxq_staged(const struct tcp_rxq *r)
{
	return r->end - r->start;
}
/* recv into staging: bytes (> 0), 0 when nothing is there now, -ECONNRESET when the peer
 * closed, another negative errno on error (with TLS: -EACCES or -EPROTO when the handshake
 * failed, tcp_tls_why says why). */
int tcp_rxq_fill(struct tcp_rxq *r, int fd);
/* Takes up to want staged bytes into dst. */
uint32_t tcp_rxq_take(struct tcp_rxq *r, void *dst, uint32_t want);

enum tcp_rxq_step { RXQ_MORE, RXQ_DONE, RXQ_ERROR };
/* Gathers a header: the common header is checked against rules (once), then bytes up to
 * info.hdr_bytes (a TermReq: the whole PDU) are gathered. RXQ_ERROR leaves the verdict in
 * *verdict and the reason in r->info. Checks the header digest when present (a mismatch is
 * FATAL with FES Header Digest Error). */
enum tcp_rxq_step tcp_rxq_header(struct tcp_rxq *r, const struct tcp_pdu_rules *rules,
				 enum tcp_pdu_verdict *verdict);
/* Begins receiving len data bytes into dst (NULL: discard them). */
void tcp_rxq_data_begin(struct tcp_rxq *r, void *dst, uint32_t len, bool digest);
/* Moves data (staged or received in place) and then the data digest. RXQ_DONE when all of
 * it is in; *digest_ok tells whether the digest matched (true without a digest). RXQ_ERROR
 * on a socket error (*err). */
enum tcp_rxq_step tcp_rxq_data(struct tcp_rxq *r, int fd, bool *digest_ok, int *err);
/* Ready for the next PDU. */
static inline void tcp_rxq_next(struct tcp_rxq *r)
{
	r->have = 0;
	r->checked = false;
	r->dst = NULL;
	r->left = 0;
	r->dg_have = 0;
}

#endif
