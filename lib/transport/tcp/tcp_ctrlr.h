/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport's controller: the association (admin connection + controller id),
 * the controller's registers as properties, keep alive and reconnection.
 *
 * An association is what NVMe over Fabrics has instead of a powered, enabled controller. The
 * driver's register-level bring-up (ctrlr.c) maps onto it:
 *   - writing CC.EN = 0 (disable, reset, shutdown's end) ends the association: the admin
 *     connection is closed and registers read as a disabled controller's;
 *   - writing CC.EN = 1 when there is no association makes one: connect, Connect with
 *     controller id FFFFh, authenticate, then Property Set CC; after a loss this retries for
 *     ctrl_loss_tmo;
 *   - a connection that fails makes CSTS read CFS set (a fatal status), so the driver's
 *     recovery (recovery.c) resets the controller, which is exactly a reconnect, and every
 *     queue pair's owner connects its queue again.
 * AQA, ASQ and ACQ mean nothing over a fabric: writes are kept for reads, not sent.
 */
#ifndef UNVME_DRIVER_TCP_CTRLR_H
#define UNVME_DRIVER_TCP_CTRLR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/driver/tcp_params.h"
#include "lib/fabrics/nvmf_host.h"
#include "lib/fabrics/nvmf_keepalive.h"
#include "tcp_queue.h"

struct tcp_tls_ctx;

struct unvme_ctrlr;

enum tcp_assoc {
	ASSOC_DOWN = 0, /* none (before the first, after a disable): reads as a disabled controller */
	ASSOC_LIVE,     /* connected */
	ASSOC_BROKEN,   /* a connection failed: CSTS reads CFS until the driver resets */
	ASSOC_DEAD,     /* reconnecting failed for ctrl_loss_tmo: registers read all ones */
};

struct tcp_ctrlr {
	struct unvme_ctrlr *c;
	struct tcp_params p;
	pthread_mutex_t lock;     /* the admin connection and the cached registers */
	struct tcp_queue admin;
	_Atomic int assoc;        /* enum tcp_assoc */
	struct nvmf_assoc fab;    /* the fabrics layer's view: who connects, the controller id */
	bool ever_live;           /* a CC.EN = 1 after this is a reconnect: retry it */
	uint64_t cap;
	uint32_t vs;
	uint32_t cc;
	uint32_t aqa;
	uint64_t asq, acq;
	struct tcp_tls_ctx *tls;  /* TLS with a PSK on every connection (tls=1), else NULL */

	struct nvmf_keepalive ka;  /* tcp_keepalive.c */
	_Atomic bool closing;     /* the controller is being closed: stop retrying */
};

/* tcp_fabrics.c: the fabrics layer (lib/fabrics/nvmf_host.h) on connections. init fills
 * tc->fab once the parameters are parsed; properties and Keep Alive are nvmf_* on it. */
void tcp_fabrics_init(struct tcp_ctrlr *tc);
/* Opens the connection of queue qid and connects it (nvmf_connect: Connect, then
 * authentication when the controller asks). cntlid FFFFh for the admin queue. 0 or a negative
 * errno / positive NVMe status, with a message. *cntlid_out (may be NULL) gets the controller
 * id. */
int tcp_fabrics_connect(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid, uint16_t sqsize,
			uint16_t cntlid, uint16_t *cntlid_out);
int tcp_fabrics_disconnect(struct tcp_ctrlr *tc, struct tcp_queue *q);

/* tcp_keepalive.c */
void tcp_keepalive_start(struct tcp_ctrlr *tc);
void tcp_keepalive_stop(struct tcp_ctrlr *tc);

/* tcp_ctrlr.c: the association is broken (an I/O connection failed): registers read a fatal
 * status until the driver's recovery reconnects. Any thread. */
void tcp_ctrlr_break(struct tcp_ctrlr *tc);
/* A connection failed; the association is broken (admin) or the queue's owner will see it
 * (I/O). */
void tcp_ctrlr_connection_lost(struct tcp_ctrlr *tc, struct tcp_queue *q);
/* Prints a line about the association on stderr when the library log is on (unvme_set_log, UNVME_LOG). */
void tcp_report(const struct tcp_ctrlr *tc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
