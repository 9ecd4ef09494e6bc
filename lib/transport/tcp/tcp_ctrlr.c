/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport (see tcp_ctrlr.h): device ids nvme-tcp://HOST:PORT/NQN, the
 * association behind the register interface, and the queue-pair hooks that put each queue on
 * a connection of its own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "tcp_ctrlr.h"
#include "lib/fabrics/tcp/tcp_tls.h"
#include "lib/driver/transport.h"

static struct tcp_ctrlr *ctx_of(void *ctx)
{
	return ctx;
}

void tcp_ctrlr_break(struct tcp_ctrlr *tc)
{
	int live = NVMF_ASSOC_LIVE;
	if (atomic_compare_exchange_strong(&tc->regs.assoc, &live, NVMF_ASSOC_BROKEN))
		tcp_conn_shutdown(&tc->admin.conn); /* anyone on it sees the end at once */
	tc->c->failed = 1;
}

void tcp_ctrlr_connection_lost(struct tcp_ctrlr *tc, struct tcp_queue *q)
{
	if (q != &tc->admin)
		return; /* the queue's owner sees it in its next poll */
	int live = NVMF_ASSOC_LIVE;
	if (atomic_compare_exchange_strong(&tc->regs.assoc, &live, NVMF_ASSOC_BROKEN)) {
		tc->c->failed = 1;
		tcp_report(tc, "admin connection lost: %s", q->dead_why ? q->dead_why : "?");
	}
}

/* A new association: admin connection, Connect (controller id FFFFh), CAP and VS. tc->regs.lock
 * held. */
static int assoc_connect(struct tcp_ctrlr *tc)
{
	struct tcp_queue *q = &tc->admin;
	tcp_queue_close_conn(q);
	tcp_queue_reset(q);
	uint32_t adepth = tc->c->opts.admin_queue_depth ? tc->c->opts.admin_queue_depth : 32;
	int rc = tcp_fabrics_connect(tc, q, 0, (uint16_t)(adepth - 1), NVMF_CNTLID_DYNAMIC,
				     &tc->fab.cntlid);
	uint64_t cap = 0, vs = 0;
	if (rc == 0)
		rc = nvmf_prop_get(&tc->fab, NVME_REG_CAP, true, &cap);
	if (rc == 0)
		rc = nvmf_prop_get(&tc->fab, NVME_REG_VS, false, &vs);
	if (rc) {
		tcp_queue_close_conn(q);
		return rc;
	}
	nvmf_regs_live(&tc->regs, cap, (uint32_t)vs);
	return 0;
}

static void assoc_end(struct tcp_ctrlr *tc)
{
	tcp_conn_shutdown(&tc->admin.conn);
	tcp_queue_close_conn(&tc->admin);
	atomic_store(&tc->regs.assoc, NVMF_ASSOC_DOWN);
}

static int regs_connect(void *arg)
{
	return assoc_connect(arg);
}

static void regs_end(void *arg)
{
	assoc_end(arg);
}

static const struct nvmf_regs_ops tcp_regs_ops = {
	.connect = regs_connect,
	.end = regs_end,
};

/* ---- registers: the fabrics layer's, over the association (nvmf_regs.h) ---- */

static uint32_t tcp_read32(void *ctx, uint32_t off)
{
	return nvmf_regs_read32(&ctx_of(ctx)->regs, off);
}

static uint32_t tcp_read32_nowait(void *ctx, uint32_t off)
{
	return nvmf_regs_read32_nowait(&ctx_of(ctx)->regs, off);
}

static uint64_t tcp_read64(void *ctx, uint32_t off)
{
	return nvmf_regs_read64(&ctx_of(ctx)->regs, off);
}

static void tcp_write32(void *ctx, uint32_t off, uint32_t val)
{
	nvmf_regs_write32(&ctx_of(ctx)->regs, off, val);
}

static void tcp_write64(void *ctx, uint32_t off, uint64_t val)
{
	nvmf_regs_write64(&ctx_of(ctx)->regs, off, val);
}

/* The data goes through the socket: nothing to map. */
static int tcp_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	return 0;
}

static void tcp_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
}

/* ---- attach ---- */

static int tcp_matches(const char *address)
{
	return unvme_addr_is_tcp(address);
}

static void tcp_free(struct tcp_ctrlr *tc)
{
	tcp_queue_fini(&tc->admin);
	tcp_tls_ctx_free(tc->tls);
	nvmf_regs_fini(&tc->regs);
	nvmf_keepalive_destroy(&tc->ka);
	free(tc);
}

static int tcp_attach(struct unvme_ctrlr *c, const char *address)
{
	struct tcp_ctrlr *tc = calloc(1, sizeof(*tc));
	if (!tc)
		return -ENOMEM;
	tc->c = c;
	nvmf_keepalive_init(&tc->ka);
	int rc = tcp_params_parse(address, &tc->p);
	nvmf_regs_init(&tc->regs, c, &tc->fab, tc->p.nvmf.ctrl_loss_tmo_ms, tc->p.nvmf.reconnect_delay_ms,
		       nvmf_attempt_limit_ms(&tc->p.nvmf, c->opts.admin_timeout_ms), &tcp_regs_ops, tc);
	if (rc == 0 && tc->p.tls) {
		/* one identity for every connection of the controller (host NQN, subsystem NQN) */
		char err[256];
		rc = tcp_tls_ctx_client(&tc->tls, &tc->p.tls_key, tc->p.tls_identity, tc->p.nvmf.hostnqn,
					tc->p.nvmf.subnqn, err, sizeof(err));
		if (rc)
			unvme_fail(rc, "%s: %s", address, err);
	}
	if (rc == 0)
		rc = tcp_queue_init(&tc->admin, tc, 0, 0);
	if (rc) {
		tcp_free(tc);
		return rc;
	}
	tcp_fabrics_init(tc);
	tc->admin.locked = true;
	tc->admin.timeout_ms = c->opts.admin_timeout_ms;
	rc = nvmf_regs_connect_first(&tc->regs);
	if (rc) {
		tcp_free(tc);
		return rc < 0 ? rc : -ECONNREFUSED; /* refused with an NVMe status: the message says which */
	}
	c->transport_ctx = tc;
	tcp_keepalive_start(tc);
	return 0;
}

static void tcp_quiesce(struct unvme_ctrlr *c)
{
	struct tcp_ctrlr *tc = c->transport_ctx;
	/* a connect thread first: the keep-alive thread's recovery may wait for its end */
	nvmf_regs_stop(&tc->regs);
	tcp_keepalive_stop(tc);
}

static uint64_t tcp_enable_limit_ms(struct unvme_ctrlr *c)
{
	struct tcp_ctrlr *tc = c->transport_ctx;
	return nvmf_regs_enable_limit_ms(&tc->regs);
}

static void tcp_detach(struct unvme_ctrlr *c)
{
	struct tcp_ctrlr *tc = c->transport_ctx;
	tcp_quiesce(c);
	pthread_mutex_lock(&tc->regs.lock);
	assoc_end(tc);
	pthread_mutex_unlock(&tc->regs.lock);
	if (c->admin)
		c->admin->bus = NULL; /* its transport queue was tc's: freed with it */
	tcp_free(tc);
	c->transport_ctx = NULL;
}

/* ---- queue pairs ---- */

static void tcp_qp_doorbell(void *bus, uint32_t off, uint32_t val)
{
	struct tcp_queue *q = bus;
	if (off != q->sq_db)
		return; /* a CQ head doorbell: the controller does not need to know */
	if (q->locked) {
		/* (nothing is submitted while the association is being made: the driver's reset
		 * holds the admin queue down until CSTS.RDY = 1) */
		if (nvmf_regs_enter(&q->tc->regs)) {
			tcp_queue_doorbell(q, (uint16_t)val);
			pthread_mutex_unlock(&q->tc->regs.lock);
		}
		return;
	}
	tcp_queue_doorbell(q, (uint16_t)val);
}

static int resize_reqs(struct tcp_queue *q, uint32_t nreqs)
{
	struct tcp_req *r = calloc(nreqs, sizeof(*r));
	struct tcp_h2c *h = calloc(nreqs + 1, sizeof(*h));
	if (!r || !h) {
		free(r);
		free(h);
		return -ENOMEM;
	}
	free(q->reqs);
	free(q->h2c);
	q->reqs = r;
	q->h2c = h;
	q->nreqs = nreqs;
	q->h2c_size = nreqs + 1;
	return 0;
}

static int tcp_qp_init(struct unvme_qpair *qp)
{
	struct tcp_ctrlr *tc = qp->ctrlr->transport_ctx;
	struct tcp_queue *q;
	int rc;
	if (qp->qid == 0) {
		q = &tc->admin;
		pthread_mutex_lock(&tc->regs.lock);
		nvmf_regs_idle(&tc->regs); /* (a Keep Alive may be in flight) */
		rc = resize_reqs(q, qp->depth - 1u);
		if (rc == 0) {
			q->qp = qp;
			tcp_queue_reset(q);
		}
		pthread_mutex_unlock(&tc->regs.lock);
	} else {
		q = malloc(sizeof(*q));
		rc = q ? tcp_queue_init(q, tc, qp->qid, qp->depth - 1u) : -ENOMEM;
		if (rc) {
			free(q);
			return unvme_fail(rc, "no memory for an NVMe/TCP queue");
		}
		q->qp = qp;
		q->timeout_ms = qp->timeout_ms;
	}
	if (rc)
		return unvme_fail(rc, "no memory for an NVMe/TCP queue");
	q->sq_db = qp->sq_db;
	qp->bus = q;
	qp->write32 = tcp_qp_doorbell;
	return 0;
}

/* A connect thread's end waited for, its connection kept (the caller closes or uses it) and
 * the queue pair served again. */
static int settle(struct tcp_queue *q)
{
	if (!q->connecting)
		return 0;
	int rc = nvmf_async_wait(&q->async);
	q->qp = q->async_qp;
	q->connecting = false;
	return rc;
}

static void tcp_qp_fini(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	if (!q)
		return;
	if (qp->qid != 0)
		(void)settle(q);
	if (qp->qid == 0) {
		pthread_mutex_lock(&q->tc->regs.lock);
		q->qp = NULL;
		pthread_mutex_unlock(&q->tc->regs.lock);
		return;
	}
	tcp_queue_fini(q);
	free(q);
	qp->bus = NULL;
}

static void tcp_qp_reset(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	if (qp->qid == 0) {
		/* the admin connection is the association's: CC writes open and close it (a
		 * connect thread resets it at each attempt) */
		if (nvmf_regs_enter(&q->tc->regs)) {
			nvmf_regs_idle(&q->tc->regs);
			tcp_queue_reset(q);
			pthread_mutex_unlock(&q->tc->regs.lock);
		}
		return;
	}
	(void)settle(q);
	tcp_queue_close_conn(q);
	tcp_queue_reset(q);
}

/* A queue's connection made again: the old one closed and its state reset; -EIO when the
 * association it belongs to is not live. */
static int conn_prepare(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	struct tcp_ctrlr *tc = q->tc;
	(void)settle(q);
	tcp_queue_close_conn(q);
	tcp_queue_reset(q);
	q->timeout_ms = qp->timeout_ms;
	if (atomic_load(&tc->regs.assoc) != NVMF_ASSOC_LIVE)
		return unvme_fail(-EIO, "%s: queue %u: no association with the controller", tc->c->devid,
				  qp->qid);
	return 0;
}

static int tcp_qp_connect(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	struct tcp_ctrlr *tc = q->tc;
	int rc = conn_prepare(qp);
	if (rc)
		return rc;
	return tcp_fabrics_connect(tc, q, qp->qid, (uint16_t)(qp->depth - 1u), tc->fab.cntlid, NULL);
}

/* The connect thread's job: the connection and Connect (then authentication), on a queue
 * that serves no queue pair meanwhile. */
static int connect_job(void *arg)
{
	struct tcp_queue *q = arg;
	return tcp_fabrics_connect_conn(q->tc, q, q->qid, (uint16_t)q->nreqs, q->async_cntlid, NULL);
}

static int tcp_qp_connect_start(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	struct tcp_ctrlr *tc = q->tc;
	int rc = conn_prepare(qp);
	if (rc)
		return rc;
	tcp_fabrics_set_icd(tc, q, qp->qid); /* before: the submitter reads it */
	q->async_cntlid = tc->fab.cntlid;
	q->async_qp = q->qp;
	q->qp = NULL;
	rc = nvmf_async_start(&q->async, connect_job, q);
	if (rc) {
		q->qp = q->async_qp;
		return rc;
	}
	q->connecting = true;
	return 0;
}

static int tcp_qp_connect_done(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	if (!q->connecting)
		return 0;
	int rc = nvmf_async_take(&q->async);
	if (rc == -EINPROGRESS)
		return rc;
	q->qp = q->async_qp;
	q->connecting = false;
	return rc;
}

static void tcp_qp_disconnect(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	(void)settle(q);
	tcp_fabrics_disconnect(q->tc, q);
	tcp_conn_shutdown(&q->conn);
	tcp_queue_close_conn(q);
}

static int tcp_qp_map(struct unvme_qpair *qp, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len)
{
	return tcp_queue_map(qp->bus, cid, sqe, buf, len);
}

static void tcp_qp_pump(struct unvme_qpair *qp)
{
	struct tcp_queue *q = qp->bus;
	if (q->locked) {
		if (nvmf_regs_enter(&q->tc->regs)) { /* (not while a connect thread has it) */
			tcp_queue_pump(q);
			pthread_mutex_unlock(&q->tc->regs.lock);
		}
		return; /* the admin path holds locks recovery needs: keep alive or I/O recovers */
	}
	if (q->connecting)
		return; /* the connection is a connect thread's until the recovery takes it */
	/* A reset by another thread: this queue's connection belongs to the old association. */
	if (atomic_load_explicit(&qp->failed, memory_order_relaxed) &&
	    !atomic_load_explicit(&q->dead, memory_order_relaxed))
		tcp_queue_mark_dead(q, "the controller is being reset");
	if (tcp_queue_pump(q) && !atomic_load(&qp->failed)) {
		/* As Linux's host: a queue that fails takes the association with it; the poll
		 * reconnects everything once this queue's commands are given back. */
		tcp_report(q->tc, "queue %u: %s", qp->qid, q->dead_why ? q->dead_why : "connection lost");
		tcp_ctrlr_break(q->tc);
		qp->ctrlr->failed = 1;
	}
}

static const struct unvme_transport_ops tcp_ops = {
	.attach = tcp_attach,
	.detach = tcp_detach,
	.quiesce = tcp_quiesce,
	.read32 = tcp_read32,
	.write32 = tcp_write32,
	.read64 = tcp_read64,
	.read32_nowait = tcp_read32_nowait,
	.write64 = tcp_write64,
	.dma_map = tcp_dma_map,
	.dma_unmap = tcp_dma_unmap,
	.qp_init = tcp_qp_init,
	.qp_fini = tcp_qp_fini,
	.qp_reset = tcp_qp_reset,
	.qp_connect = tcp_qp_connect,
	.qp_disconnect = tcp_qp_disconnect,
	.qp_map = tcp_qp_map,
	.qp_pump = tcp_qp_pump,
	.qp_connect_start = tcp_qp_connect_start,
	.qp_connect_done = tcp_qp_connect_done,
	.enable_limit_ms = tcp_enable_limit_ms,
};

static const char *const tcp_schemes[] = {TCP_SCHEME, NULL};
static const struct unvme_transport unvme_transport_tcp = {
	.name = "tcp",
	.schemes = tcp_schemes,
	.kind = UNVME_TRANSPORT_FABRICS,
	.rank = 20,
	.matches = tcp_matches,
	.ops = &tcp_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_tcp);
