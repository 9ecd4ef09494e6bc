/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One host connection of the target: the ICReq exchange, then PDUs (NVMe TCP Transport 1.0).
 * Received headers are checked before use (lib/driver/tcp_pdu.c); everything a host says is
 * checked against the state of its commands, and each command's data descriptor against what
 * the command moves (tgt_xfer.c) before any of its data is taken. A fatal error (bad header, header digest, data
 * out of range or beyond the command, H2C data nobody asked for, a queue overrun) answers
 * with a C2HTermReq naming the status and the field, then closes this connection only: other
 * connections, served by the same or other pollers, are not touched.
 *
 * In-capsule data and H2C data land straight in the command's DMA buffer; C2H data is sent
 * from it. A command's last PDU carries the command, released when the socket took it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "tgt.h"

enum { PDU_PLAIN = 0, PDU_RELEASE, PDU_CLOSE };

static void addr_str(const struct sockaddr_storage *ss, char *host, size_t hl, char *port, size_t pl,
		     struct tgt_addr *key)
{
	uint16_t p = 0;
	memset(key, 0, sizeof(*key));
	key->b[0] = (uint8_t)ss->ss_family;
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, (socklen_t)hl);
		memcpy(key->b + 1, &a->sin6_addr, 16);
		p = ntohs(a->sin6_port);
	} else if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;
		inet_ntop(AF_INET, &a->sin_addr, host, (socklen_t)hl);
		memcpy(key->b + 1, &a->sin_addr, 4);
		p = ntohs(a->sin_port);
	}
	snprintf(port, pl, "%u", p);
}

void tgt_conn_peer(int fd, char *peer, size_t len, struct tgt_addr *key)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl = sizeof(ss);
	char host[64] = "?", port[8] = "?";
	memset(key, 0, sizeof(*key));
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		addr_str(&ss, host, sizeof(host), port, sizeof(port), key);
	snprintf(peer, len, "%s:%s", host, port);
}

struct tgt_conn *tgt_conn_new(struct unvme_target *t, int fd)
{
	struct tgt_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->t = t;
	c->fd = fd;
	c->born_ms = mono_ms_coarse();
	tgt_conn_peer(fd, c->peer, sizeof(c->peer), &c->addr);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		struct tgt_addr local;
		addr_str(&ss, c->local_addr, sizeof(c->local_addr), c->local_port, sizeof(c->local_port),
			 &local);
		c->adrfam = ss.ss_family == AF_INET6 ? NVMF_ADRFAM_IPV6 : NVMF_ADRFAM_IPV4;
	}
	c->rx_state = RX_ICREQ;
	if (tcp_rxq_init(&c->rx) || tcp_txq_init(&c->tx, 8) || tgt_conn_size(c, 1) || tgt_tls_conn_init(c)) {
		tgt_conn_free(c);
		return NULL;
	}
	return c;
}

int tgt_conn_size(struct tgt_conn *c, uint32_t slots)
{
	if (slots <= c->ncmds)
		return 0;
	struct tgt_cmd **n = realloc(c->cmds, slots * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->cmds = n;
	for (uint32_t i = c->ncmds; i < slots; i++) {
		struct tgt_cmd *cmd = calloc(1, sizeof(*cmd));
		if (!cmd)
			return -ENOMEM;
		cmd->conn = c;
		cmd->idx = (uint16_t)i;
		cmd->next_free = c->free_cmds;
		c->free_cmds = cmd;
		c->cmds[i] = cmd;
		c->ncmds = i + 1;
	}
	if (c->rdma)
		return 0; /* the queue pair's slots are its own (tgt_rdma.c) */
	/* a command has at most two PDUs queued (R2T, or C2H data and the response) */
	return tcp_txq_grow(&c->tx, 2 * slots + 8);
}

/* ---- commands ---- */

struct tgt_cmd *tgt_cmd_get(struct tgt_conn *c)
{
	struct tgt_cmd *cmd = c->free_cmds;
	if (!cmd)
		return NULL;
	c->free_cmds = cmd->next_free;
	cmd->state = CMD_RECV;
	cmd->to_ctrl = false;
	cmd->data_error = false;
	cmd->discard = false;
	cmd->fills = false;
	cmd->len = cmd->icd_len = cmd->icd_off = cmd->h2c_got = cmd->send_len = 0;
	cmd->wire = NULL;
	memset(&cmd->cqe, 0, sizeof(cmd->cqe));
	return cmd;
}

void tgt_cmd_release(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	tgt_buf_put(c, cmd->buf, cmd->buf_cap);
	cmd->buf = NULL;
	cmd->buf_cap = 0;
	cmd->state = CMD_FREE;
	cmd->next_free = c->free_cmds;
	c->free_cmds = cmd;
}

/* ---- transmit ---- */

static void sent(void *ctx, struct tcp_txpdu *p)
{
	struct tgt_conn *c = ctx;
	if (p->kind == PDU_RELEASE && p->owner)
		tgt_cmd_release(p->owner);
	else if (p->kind == PDU_CLOSE)
		tgt_conn_close(c, "%s", c->why[0] ? c->why : "closed after its last response");
}

static int flush(struct tgt_conn *c)
{
	int work = 0;
	while (tcp_txq_count(&c->tx)) {
		ssize_t s = tcp_txq_send(&c->tx, c->fd, sent, c);
		if (s < 0) {
			tgt_conn_close(c, "send failed: %s", strerror((int)-s));
			/* what is queued will never go: give the commands back */
			while (tcp_txq_count(&c->tx)) {
				struct tcp_txpdu *p = &c->tx.pdu[c->tx.head % c->tx.n];
				c->tx.head++;
				if (p->kind == PDU_RELEASE && p->owner)
					tgt_cmd_release(p->owner);
			}
			c->tx.off = 0;
			return work;
		}
		if (s == 0)
			break;
		work = 1;
	}
	/* the socket takes no more: after a moment the poller waits for room (EPOLLOUT)
	 * instead of retrying (tgt_poller.c) */
	if (!tcp_txq_count(&c->tx))
		c->tx_stall_ms = 0;
	else if (!work && !c->tx_stall_ms)
		c->tx_stall_ms = mono_ms_coarse() | 1;
	return work;
}

int tgt_conn_wait_fd(const struct tgt_conn *c)
{
	return c->rdma ? tgt_rdma_fd(c) : c->fd;
}

bool tgt_conn_tx_pending(const struct tgt_conn *c)
{
	/* an RDMA connection closes once its last response was sent (tgt_rdma.c) */
	return !c->rdma && tcp_txq_count(&c->tx) > 0;
}

uint32_t tgt_conn_events(const struct tgt_conn *c, uint64_t now_ms)
{
	uint32_t ev = 0;
	if (c->rdma) /* completions and connection events; the host's credits bound what comes */
		return EPOLLIN;
	if (!c->wait_cmd && c->rx_state != RX_DEAD)
		ev |= EPOLLIN; /* waiting for memory: stop reading, TCP pushes back on the host */
	if (c->tx_stall_ms && now_ms - c->tx_stall_ms >= TGT_TX_SPIN_MS)
		ev |= EPOLLOUT;
	return ev;
}

static struct tcp_txpdu *pdu_new(struct tgt_conn *c)
{
	/* cannot fill up: every command has room for its PDUs (tgt_conn_size) */
	return tcp_txq_full(&c->tx) ? NULL : tcp_txq_slot(&c->tx);
}

static void send_r2t(struct tgt_cmd *cmd)
{
	struct tgt_conn *c = cmd->conn;
	struct tcp_txpdu *p = pdu_new(c);
	if (!p)
		return;
	struct nvme_tcp_data h = {0};
	h.hdr.type = NVME_TCP_R2T;
	h.hdr.flags = c->hdgst ? NVME_TCP_F_HDGST : 0;
	h.hdr.hlen = sizeof(h);
	h.hdr.plen = sizeof(h) + (c->hdgst ? NVME_TCP_DIGEST_LEN : 0);
	h.cccid = cmd->sqe.cid;
	h.ttag = cmd->idx;
	h.datao = 0;
	h.datal = cmd->len;
	tcp_txpdu_header(p, &h, sizeof(h), c->hdgst, 0);
	tcp_txq_push(&c->tx);
	cmd->state = CMD_H2C;
	cmd->h2c_got = 0;
}

void tgt_complete(struct tgt_cmd *cmd, uint16_t sct, uint8_t sc)
{
	uint16_t status = NVME_CQE_STATUS(sct, sc);
	if (sct || sc)
		status |= 0x8000u; /* DNR: our refusals do not change by retrying */
	if (sct == NVME_SCT_GENERIC && (sc == NVME_SC_TRANSIENT_TRANSPORT || sc == NVME_SC_INTERNAL))
		status &= 0x7fffu;
	tgt_complete_raw(cmd, status);
}

void tgt_complete_raw(struct tgt_cmd *cmd, uint16_t status)
{
	struct tgt_conn *c = cmd->conn;
	if (c->closing) {
		tgt_cmd_release(cmd);
		return;
	}
	status &= 0xfffeu;
	if (c->rdma) {
		tgt_rdma_respond(cmd, status);
		return;
	}
	cmd->state = CMD_SENDING;
	bool ok = status == 0;
	if (cmd->send_len) {
		struct tcp_txpdu *p = pdu_new(c);
		if (!p)
			return;
		bool success = ok && c->sqflow_off;
		struct nvme_tcp_data h = {0};
		h.hdr.type = NVME_TCP_C2H_DATA;
		h.hdr.flags = (uint8_t)((c->hdgst ? NVME_TCP_F_HDGST : 0) | (c->ddgst ? NVME_TCP_F_DDGST : 0) |
					NVME_TCP_F_LAST_PDU | (success ? NVME_TCP_F_SUCCESS : 0));
		h.hdr.hlen = sizeof(h);
		uint32_t pdo = tcp_pdu_data_offset(sizeof(h), c->hdgst, c->hpda);
		h.hdr.pdo = (uint8_t)pdo;
		h.hdr.plen = pdo + cmd->send_len + (c->ddgst ? NVME_TCP_DIGEST_LEN : 0);
		h.cccid = cmd->sqe.cid;
		h.datal = cmd->send_len;
		tcp_txpdu_header(p, &h, sizeof(h), c->hdgst, pdo);
		p->data = cmd->buf;
		p->data_len = cmd->send_len;
		if (c->ddgst)
			tcp_txpdu_ddgst(p);
		if (success) {
			p->kind = PDU_RELEASE; /* no response follows */
			p->owner = cmd;
			tcp_txq_push(&c->tx);
			return;
		}
		tcp_txq_push(&c->tx);
	}
	struct tcp_txpdu *p = pdu_new(c);
	if (!p)
		return;
	struct nvme_tcp_rsp h = {0};
	h.hdr.type = NVME_TCP_CAPSULE_RESP;
	h.hdr.flags = c->hdgst ? NVME_TCP_F_HDGST : 0;
	h.hdr.hlen = sizeof(h);
	h.hdr.plen = sizeof(h) + (c->hdgst ? NVME_TCP_DIGEST_LEN : 0);
	h.cqe = cmd->cqe;
	h.cqe.cid = cmd->sqe.cid;
	h.cqe.sqid = c->qid;
	h.cqe.sqhd = c->sqhd;
	h.cqe.status = status;
	tcp_txpdu_header(p, &h, sizeof(h), c->hdgst, 0);
	p->kind = PDU_RELEASE;
	p->owner = cmd;
	tcp_txq_push(&c->tx);
}

/* Queues a PDU that closes the connection once sent (after a refusal the host must see). */
void tgt_conn_close_after_send(struct tgt_conn *c)
{
	if (c->rdma) {
		tgt_rdma_close_after_send(c);
		return;
	}
	struct tcp_txpdu *p = pdu_new(c);
	if (!p) {
		tgt_conn_close(c, "%s", c->why);
		return;
	}
	p->hdr_len = 0;
	p->kind = PDU_CLOSE;
	tcp_txq_push(&c->tx);
	c->rx_state = RX_DEAD;
}

void tgt_conn_close(struct tgt_conn *c, const char *fmt, ...)
{
	if (c->closing)
		return;
	va_list ap;
	va_start(ap, fmt);
	char why[200];
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(c->why, sizeof(c->why), "%s", why);
	c->closing = true;
	c->rx_state = RX_DEAD;
}

void tgt_conn_fatal(struct tgt_conn *c, uint16_t fes, uint32_t fei, const char *why)
{
	tgt_log(c->t, "host %s (%s): protocol error: %s (%s, field at byte %u): connection closed",
		c->peer, c->ctrl ? c->ctrl->hostnqn : "not connected", why, tcp_fes_name(fes), fei);
	struct tcp_txpdu *p = pdu_new(c);
	if (p) {
		uint8_t term[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
		size_t n = tcp_pdu_term(term, true, fes, fei, c->rx.hdr, c->rx.have);
		size_t hl = n < sizeof(p->hdr) ? n : sizeof(p->hdr);
		memcpy(p->hdr, term, hl);
		p->hdr_len = (uint16_t)hl;
		/* the TermReq header says PLEN = n: its echoed bytes beyond 128 go as data */
		if (n > hl) {
			memcpy(c->term_spill, term + hl, n - hl);
			p->data = c->term_spill;
			p->data_len = (uint32_t)(n - hl);
		}
		tcp_txq_push(&c->tx);
	}
	snprintf(c->why, sizeof(c->why), "protocol error: %s", why);
	tgt_conn_close_after_send(c);
}

/* ---- receive ---- */

static void send_icresp(struct tgt_conn *c, const struct nvme_tcp_icreq *req)
{
	struct nvme_tcp_icresp rsp = {0};
	rsp.hdr.type = NVME_TCP_ICRESP;
	rsp.hdr.hlen = sizeof(rsp);
	rsp.hdr.plen = sizeof(rsp);
	rsp.pfv = 0;
	rsp.cpda = 0;
	rsp.dgst = req->dgst & (NVME_TCP_DGST_HDR | NVME_TCP_DGST_DATA);
	rsp.maxh2cdata = TGT_MAXH2CDATA;
	c->hdgst = rsp.dgst & NVME_TCP_DGST_HDR;
	c->ddgst = rsp.dgst & NVME_TCP_DGST_DATA;
	c->hpda = 4u * (req->hpda + 1u);
	struct tcp_txpdu *p = pdu_new(c);
	if (p) {
		tcp_txpdu_header(p, &rsp, sizeof(rsp), false, 0);
		tcp_txq_push(&c->tx);
	}
}

static bool on_icreq(struct tgt_conn *c)
{
	if (c->rx.have < sizeof(struct nvme_tcp_icreq))
		c->rx.have += tcp_rxq_take(&c->rx, c->rx.hdr + c->rx.have,
					   sizeof(struct nvme_tcp_icreq) - c->rx.have);
	if (c->rx.have < sizeof(struct nvme_tcp_icreq))
		return false;
	struct tcp_pdu_info info;
	const struct nvme_tcp_icreq *req = (const void *)c->rx.hdr;
	if (tcp_pdu_check_icreq(req, &info) != TCP_PDU_OK) {
		tgt_conn_fatal(c, info.fes, info.fei, info.why);
		return false;
	}
	send_icresp(c, req);
	tcp_rxq_next(&c->rx);
	c->rx_state = RX_HDR;
	return true;
}

/* After the capsule and its in-capsule data: ask for the rest of the data or execute. */
static void capsule_ready(struct tgt_cmd *cmd)
{
	uint16_t st = cmd->cqe.status;
	if (cmd->data_error) {
		tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT);
		return;
	}
	if (st) {
		tgt_complete(cmd, (uint16_t)(st >> 8), (uint8_t)st);
		return;
	}
	const struct nvme_sgl_desc *sgl = (const void *)&cmd->sqe.prp1;
	if (cmd->to_ctrl && cmd->len && sgl->type == NVME_SGL_TRANSPORT) {
		send_r2t(cmd);
		return;
	}
	tgt_exec(cmd);
}

/* A refusal decided at capsule time: the in-capsule data (if any) is taken off the wire into
 * no buffer, no R2T is sent, the command never reaches a device. */
static void refuse(struct tgt_cmd *cmd, int st)
{
	cmd->cqe.status = (uint16_t)st;
	cmd->discard = true;
}

/* The in-capsule data, if any, into the command's buffer (or nowhere when refused). */
static void capsule_data(struct tgt_conn *c, struct tgt_cmd *cmd)
{
	if (cmd->icd_len) {
		tcp_rxq_data_begin(&c->rx, cmd->discard || !cmd->buf ? NULL : cmd->buf + cmd->icd_off,
				   cmd->icd_len, cmd->icd_ddgst);
		c->rx_cmd = cmd;
		c->rx_state = RX_CAPSULE_DATA;
		return;
	}
	tcp_rxq_next(&c->rx);
	capsule_ready(cmd);
}

/* The command's buffer: its data, and in-capsule bytes at icd_off. false while it waits for
 * memory (the connection receives nothing meanwhile: the capsule's data stays in the socket). */
static bool capsule_buffer(struct tgt_conn *c, struct tgt_cmd *cmd)
{
	uint32_t need = cmd->icd_len ? cmd->icd_off + cmd->icd_len : 0;
	if (need < cmd->len)
		need = cmd->len;
	if (!need || cmd->discard)
		return true;
	void *buf;
	int rc = tgt_buf_get(c, need, &buf, &cmd->buf_cap);
	if (rc == -EAGAIN) {
		cmd->state = CMD_WAIT_BUF;
		c->wait_cmd = cmd;
		return false;
	}
	if (rc) {
		tgt_log(c->t, "host %s: no memory for a command's data (%u bytes)", c->peer, need);
		refuse(cmd, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL));
		return true;
	}
	cmd->buf = buf;
	cmd->state = CMD_RECV;
	return true;
}

/* A capsule that waited for memory: take its buffer now if there is room. */
static bool capsule_resume(struct tgt_conn *c)
{
	struct tgt_cmd *cmd = c->wait_cmd;
	c->wait_cmd = NULL;
	if (!capsule_buffer(c, cmd))
		return false;
	capsule_data(c, cmd);
	return true;
}

static void on_capsule(struct tgt_conn *c)
{
	const struct nvme_tcp_cmd *h = (const void *)c->rx.hdr;
	uint32_t icd = c->rx.info.data_len;
	uint32_t icd_max = c->qid == 0 ? NVME_TCP_ADMIN_CCSZ : TGT_ICD;
	if (icd > icd_max) {
		tgt_conn_fatal(c, NVME_TCP_FES_DATA_LIMIT, offsetof(struct nvme_tcp_hdr, plen),
			       "more in-capsule data than the controller takes");
		return;
	}
	struct tgt_cmd *cmd = tgt_cmd_get(c);
	if (!cmd) {
		tgt_conn_fatal(c, NVME_TCP_FES_PDU_SEQUENCE, 0,
			       "more commands outstanding than the queue holds");
		return;
	}
	cmd->sqe = h->sqe;
	if (c->connected)
		c->sqhd = (uint16_t)((c->sqhd + 1u) % (c->sqsize + 1u));
	cmd->icd_len = icd;
	cmd->icd_ddgst = (h->hdr.flags & NVME_TCP_F_DDGST) != 0;
	/* Before any byte of data is taken: may this queue run it, what does the command itself
	 * say it moves, and does the transport's descriptor say exactly that (tgt_xfer.c)? */
	struct tgt_xfer x;
	int st = tgt_cmd_arrived(c, &cmd->sqe, &x);
	if (!st)
		st = tgt_xfer_check_sgl(&cmd->sqe, &x, icd, &cmd->icd_off);
	if (st) {
		refuse(cmd, st);
	} else {
		cmd->len = x.len;
		cmd->to_ctrl = x.to_ctrl;
		cmd->fills = x.fills;
	}
	if (!capsule_buffer(c, cmd))
		return; /* resumed by rx() once memory comes back */
	capsule_data(c, cmd);
}

static void on_h2c(struct tgt_conn *c)
{
	const struct nvme_tcp_data *h = (const void *)c->rx.hdr;
	struct tgt_cmd *cmd = h->ttag < c->ncmds ? c->cmds[h->ttag] : NULL;
	if (!cmd || cmd->state != CMD_H2C || cmd->sqe.cid != h->cccid) {
		tgt_conn_fatal(c, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_data, ttag),
			       "H2CData without an R2T for it");
		return;
	}
	if (h->datao != cmd->h2c_got) {
		tgt_conn_fatal(c, NVME_TCP_FES_PDU_SEQUENCE, offsetof(struct nvme_tcp_data, datao),
			       "H2CData out of order");
		return;
	}
	if ((uint64_t)h->datao + h->datal > cmd->len || h->datal != c->rx.info.data_len) {
		tgt_conn_fatal(c, NVME_TCP_FES_DATA_RANGE, offsetof(struct nvme_tcp_data, datal),
			       "H2CData beyond the command's data");
		return;
	}
	if (h->datal > TGT_MAXH2CDATA) {
		tgt_conn_fatal(c, NVME_TCP_FES_DATA_LIMIT, offsetof(struct nvme_tcp_data, datal),
			       "H2CData larger than MAXH2CDATA");
		return;
	}
	bool last = h->datao + h->datal == cmd->len;
	if (last != ((h->hdr.flags & NVME_TCP_F_LAST_PDU) != 0)) {
		tgt_conn_fatal(c, NVME_TCP_FES_INVALID_HEADER, offsetof(struct nvme_tcp_hdr, flags),
			       "LAST_PDU does not match the end of the R2T's data");
		return;
	}
	c->rx_cmd = cmd;
	c->rx_state = RX_H2C_DATA;
	tcp_rxq_data_begin(&c->rx, cmd->buf + h->datao, h->datal, (h->hdr.flags & NVME_TCP_F_DDGST) != 0);
}

static void on_term(struct tgt_conn *c)
{
	const struct nvme_tcp_term *t = (const void *)c->rx.hdr;
	tgt_log(c->t, "host %s terminated the connection: %s", c->peer, tcp_fes_name(t->fes));
	tgt_conn_close(c, "terminated by the host");
}

static int rx(struct tgt_conn *c)
{
	int work = 0;
	struct tcp_pdu_rules rules = {.controller = true, .hdgst = c->hdgst, .ddgst = c->ddgst, .pda = 4};
	if (c->wait_cmd) {
		if (!capsule_resume(c))
			return 0;
		work++;
	}
	while (c->rx_state != RX_DEAD && !c->wait_cmd) {
		if (c->rx_state == RX_CAPSULE_DATA || c->rx_state == RX_H2C_DATA) {
			bool ok;
			int err;
			enum tcp_rxq_step st = tcp_rxq_data(&c->rx, c->fd, &ok, &err);
			if (st == RXQ_ERROR) {
				tgt_conn_close(c, "%s", err == -ECONNRESET ? "closed by the host" : strerror(-err));
				break;
			}
			if (st == RXQ_MORE)
				break;
			struct tgt_cmd *cmd = c->rx_cmd;
			bool h2c = c->rx_state == RX_H2C_DATA;
			uint32_t got = c->rx.info.data_len;
			c->rx_cmd = NULL;
			c->rx_state = RX_HDR;
			tcp_rxq_next(&c->rx);
			work++;
			if (!ok)
				cmd->data_error = true;
			if (!h2c) {
				capsule_ready(cmd);
				continue;
			}
			cmd->h2c_got += got;
			if (cmd->h2c_got == cmd->len) {
				if (cmd->data_error)
					tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT);
				else
					tgt_exec(cmd);
			}
			continue;
		}
		if (!tcp_rxq_staged(&c->rx)) {
			int f = tcp_rxq_fill(&c->rx, c->fd);
			if (f < 0) {
				const char *tls = tgt_tls_failure(c, f);
				if (tls)
					tgt_log(c->t, "host %s: refused: %s", c->peer, tls);
				tgt_conn_close(c, "%s", tls ? tls : f == -ECONNRESET ? "closed by the host" : strerror(-f));
				break;
			}
			if (f == 0)
				break;
		}
		if (c->rx_state == RX_ICREQ) {
			work += on_icreq(c);
			continue;
		}
		enum tcp_pdu_verdict v;
		enum tcp_rxq_step st = tcp_rxq_header(&c->rx, &rules, &v);
		if (st == RXQ_MORE)
			continue;
		if (st == RXQ_ERROR) {
			if (v == TCP_PDU_DROP) {
				tgt_log(c->t, "host %s: %s: connection closed", c->peer, c->rx.info.why);
				tgt_conn_close(c, "%s", c->rx.info.why);
			} else {
				tgt_conn_fatal(c, c->rx.info.fes, c->rx.info.fei, c->rx.info.why);
			}
			break;
		}
		work++;
		switch (c->rx.hdr[0]) {
		case NVME_TCP_CAPSULE_CMD:
			on_capsule(c);
			break;
		case NVME_TCP_H2C_DATA:
			on_h2c(c);
			break;
		default: /* H2CTermReq */
			on_term(c);
			break;
		}
	}
	return work;
}

int tgt_conn_service(struct tgt_conn *c)
{
	int work = 0;
	if (!c->closing) {
		work += c->rdma ? tgt_rdma_rx(c) : rx(c);
		if (c->connected && c->ctrl) {
			if (atomic_load_explicit(&c->ctrl->dead, memory_order_relaxed))
				tgt_conn_close(c, "its controller ended");
			else if (c->qid && atomic_load_explicit(&c->ctrl->gen, memory_order_relaxed) != c->ctrl_gen)
				tgt_conn_close(c, "its controller was reset");
		}
	}
	if (c->in_backing)
		work += tgt_io_poll(c);
	if (!c->rdma)
		work += flush(c);
	return work;
}

void tgt_conn_free(struct tgt_conn *c)
{
	c->closing = true;
	tgt_io_close_queues(c); /* commands at the devices come back (and are released) */
	while (!c->rdma && tcp_txq_count(&c->tx)) {
		struct tcp_txpdu *p = &c->tx.pdu[c->tx.head % c->tx.n];
		c->tx.head++;
		if (p->kind == PDU_RELEASE && p->owner)
			tgt_cmd_release(p->owner);
	}
	if (c->ctrl) {
		struct tgt_ctrl *ctrl = c->ctrl;
		if (c->connected) {
			pthread_mutex_lock(&ctrl->ss->lock);
			if (c->qid && c->qid <= ctrl->nr_io && ctrl->qid_used)
				ctrl->qid_used[c->qid] = 0;
			pthread_mutex_unlock(&ctrl->ss->lock);
			if (c->qid == 0) {
				/* the admin queue is the controller: without it, it ends */
				atomic_store(&ctrl->dead, true);
			}
		}
		tgt_ctrl_put(ctrl);
		c->ctrl = NULL;
	}
	tgt_auth_reset(c);
	/* the host sees an RDMA connection end here, after its queue id and controller were
	 * given back (it may connect that queue again at once), and before the buffers go:
	 * nothing lands in them after this */
	if (c->rdma)
		tgt_rdma_stop(c);
	for (uint32_t i = 0; i < c->ncmds; i++) {
		struct tgt_cmd *cmd = c->cmds[i];
		tgt_buf_put(c, cmd->buf, cmd->buf_cap);
		free(cmd);
	}
	free(c->cmds);
	tgt_bufs_release(c);
	if (c->counted)
		tgt_conn_retire(c->t, &c->addr);
	if (!c->rdma) {
		tgt_tls_conn_fini(c);
		tcp_rxq_fini(&c->rx);
		tcp_txq_fini(&c->tx);
	}
	free(c->rdma);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
