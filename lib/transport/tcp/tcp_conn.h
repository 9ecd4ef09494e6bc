/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One NVMe/TCP connection of the host: a non-blocking TCP socket after the ICReq/ICResp
 * exchange, with what was negotiated. Setup (connect, ICReq) blocks with a deadline; the data
 * path never blocks (tcp_tx.c, tcp_rx.c).
 */
#ifndef UNVME_DRIVER_TCP_CONN_H
#define UNVME_DRIVER_TCP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp_params.h"

struct tcp_tls;
struct tcp_tls_ctx;

struct tcp_conn {
	int fd;             /* -1 when closed */
	struct tcp_tls *tls; /* the TLS session (tcp_tls.h), NULL in the clear */
	bool hdgst, ddgst;  /* digests in force */
	uint32_t cpda;      /* alignment of data in PDUs we send, bytes */
	uint32_t hpda;      /* alignment we asked for in PDUs we receive, bytes */
	uint32_t maxh2cdata;
	char peer[300];     /* "host:port" for messages */
};

/* Connects to p->nvmf.host:p->nvmf.port, runs the TLS handshake when tls is not NULL, sends ICReq and
 * checks ICResp. 0, or a negative errno with a message (unreachable, refused, timed out, TLS
 * refused, or a bad ICResp). */
int tcp_conn_open(struct tcp_conn *c, const struct tcp_params *p, struct tcp_tls_ctx *tls,
		  uint32_t timeout_ms);
/* Closes the socket and ends its TLS session (idempotent). */
void tcp_conn_close(struct tcp_conn *c);
/* Stops all traffic without releasing the descriptor: safe while another thread may still be
 * inside send or recv on it. */
void tcp_conn_shutdown(struct tcp_conn *c);

/* Blocking transfer of exactly len bytes before the deadline (ms, mono_ms_coarse clock).
 * 0, -ETIMEDOUT, -ECONNRESET (peer closed) or another negative errno. */
int tcp_io_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ms);
int tcp_io_recv_all(int fd, void *buf, size_t len, uint64_t deadline_ms);
/* Waits until fd is readable (or writable) or the deadline passes: 1 ready, 0 timeout. */
int tcp_io_wait(int fd, bool for_write, uint64_t deadline_ms);

#endif
