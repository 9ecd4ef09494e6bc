/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport's controller: the association (admin connection + controller id),
 * the controller's registers as properties, keep alive and reconnection.
 *
 * An association is what NVMe over Fabrics has instead of a powered, enabled controller; the
 * fabrics layer maps the driver's register-level bring-up onto it (lib/fabrics/nvmf_regs.h:
 * CC.EN = 0 ends it, CC.EN = 1 makes one, a failed connection reads as CFS so the driver's
 * recovery reconnects); this transport gives it the admin connection (regs_connect, regs_end).
 */
#ifndef UNVME_DRIVER_TCP_CTRLR_H
#define UNVME_DRIVER_TCP_CTRLR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tcp_params.h"
#include "lib/fabrics/nvmf_host.h"
#include "lib/fabrics/nvmf_keepalive.h"
#include "lib/fabrics/nvmf_regs.h"
#include "tcp_queue.h"

struct tcp_tls_ctx;

struct unvme_ctrlr;

struct tcp_ctrlr {
	struct unvme_ctrlr *c;
	struct tcp_params p;
	/* the registers over the association (lib/fabrics/nvmf_regs.h); its lock covers the
	 * admin connection too */
	struct nvmf_regs regs;
	struct tcp_queue admin;
	struct nvmf_assoc fab;    /* the fabrics layer's view: who connects, the controller id */
	struct tcp_tls_ctx *tls;  /* TLS with a PSK on every connection (tls=1), else NULL */

	struct nvmf_keepalive ka;  /* tcp_keepalive.c */
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
/* tcp_fabrics_connect in two: the in-capsule size of queue qid set (the submitter's: it reads
 * it), then the connection made (a connect thread's). */
void tcp_fabrics_set_icd(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid);
int tcp_fabrics_connect_conn(struct tcp_ctrlr *tc, struct tcp_queue *q, uint16_t qid, uint16_t sqsize,
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
#define tcp_report(tc, ...) nvmf_report((tc)->c, __VA_ARGS__)

#endif
