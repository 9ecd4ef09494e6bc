/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA transport (rdma_ctrlr.h): device ids nvme-rdma://HOST[:PORT]/NQN, the
 * association behind the register interface (the same mapping of CC.EN onto connecting as
 * NVMe/TCP's, lib/transport/tcp/tcp_ctrlr.h), and the queue-pair hooks that put each queue on
 * an RDMA connection of its own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/env.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "lib/driver/transport.h"
#include "rdma_ctrlr.h"

static void assoc_break(struct rdma_ctrlr *rc, const char *why)
{
	int live = NVMF_ASSOC_LIVE;
	if (atomic_compare_exchange_strong(&rc->regs.assoc, &live, NVMF_ASSOC_BROKEN))
		rdma_report(rc, "association lost: %s", why ? why : "?");
	rc->c->failed = 1;
}

void rdma_ctrlr_connection_lost(struct rdma_ctrlr *rc, struct rdma_queue *q)
{
	if (q == &rc->admin)
		assoc_break(rc, q->dead_why);
	/* an I/O queue: its owner's poll sees it (rdma_qp_pump) and breaks the association */
}

/* A new association: admin connection, Connect (controller id FFFFh), CAP and VS. rc->regs.lock
 * held. */
static int assoc_connect(struct rdma_ctrlr *rc)
{
	int err = rdma_queue_connect(&rc->admin, NVMF_CNTLID_DYNAMIC, &rc->fab.cntlid);
	uint64_t cap = 0, vs = 0;
	if (err == 0)
		err = nvmf_prop_get(&rc->fab, NVME_REG_CAP, true, &cap);
	if (err == 0)
		err = nvmf_prop_get(&rc->fab, NVME_REG_VS, false, &vs);
	if (err) {
		rdma_queue_close(&rc->admin);
		return err;
	}
	if (!rc->pd)
		rc->pd = rc->admin.ep->pd; /* where the DMA chunks get registered (rdma_mr.c) */
	nvmf_regs_live(&rc->regs, cap, (uint32_t)vs);
	return 0;
}

static void assoc_end(struct rdma_ctrlr *rc)
{
	rdma_queue_close(&rc->admin);
	atomic_store(&rc->regs.assoc, NVMF_ASSOC_DOWN);
}

static int regs_connect(void *arg)
{
	return assoc_connect(arg);
}

static void regs_end(void *arg)
{
	assoc_end(arg);
}

static const struct nvmf_regs_ops rdma_regs_ops = {
	.connect = regs_connect,
	.end = regs_end,
};

/* ---- registers: the fabrics layer's, over the association (nvmf_regs.h) ---- */

static uint32_t rdma_read32(void *ctx, uint32_t off)
{
	return nvmf_regs_read32(&((struct rdma_ctrlr *)ctx)->regs, off);
}

static uint32_t rdma_read32_nowait(void *ctx, uint32_t off)
{
	return nvmf_regs_read32_nowait(&((struct rdma_ctrlr *)ctx)->regs, off);
}

static uint64_t rdma_read64(void *ctx, uint32_t off)
{
	return nvmf_regs_read64(&((struct rdma_ctrlr *)ctx)->regs, off);
}

static void rdma_write32(void *ctx, uint32_t off, uint32_t val)
{
	nvmf_regs_write32(&((struct rdma_ctrlr *)ctx)->regs, off, val);
}

static void rdma_write64(void *ctx, uint32_t off, uint64_t val)
{
	nvmf_regs_write64(&((struct rdma_ctrlr *)ctx)->regs, off, val);
}

/* ---- attach ---- */

static int rdma_matches(const char *address)
{
	return strncmp(address, RDMA_SCHEME, strlen(RDMA_SCHEME)) == 0;
}

/* NVMe/TCP's keys in an nvme-rdma:// id: refused, saying why; any other key is unknown. */
static int rdma_option(void *arg, const char *word, const char *key, const char *val)
{
	if (!strcmp(key, "tls") || !strcmp(key, "tls_key") || !strcmp(key, "tls_identity"))
		return unvme_fail(-EINVAL, "%s option %s: NVMe/RDMA has no TLS (TLS is NVMe/TCP's; "
				  "an RDMA fabric is secured below NVMe, e.g. by IPsec for RoCEv2)", word, key);
	if (!strcmp(key, "hdgst") || !strcmp(key, "ddgst"))
		return unvme_fail(-EINVAL, "%s option %s: NVMe/RDMA has no digests (the RDMA transport "
				  "checks its own CRCs)", word, key);
	return 1;
}

int rdma_params_parse(const char *address, struct nvmf_params *p)
{
	/* the discovery service listens on the IANA NVMe/RDMA port too (nvme-cli's default for
	 * `discover -t rdma`) */
	const struct nvmf_params_keys keys = {.option = rdma_option, .disc_port = "4420"};
	return nvmf_params_parse(address, RDMA_SCHEME, &keys, p);
}

static void rdma_free(struct rdma_ctrlr *rc)
{
	rdma_queue_fini(&rc->admin);
	rdma_mr_fini(rc);
	pthread_rwlock_destroy(&rc->mr_lock);
	nvmf_keepalive_destroy(&rc->ka);
	nvmf_regs_fini(&rc->regs);
	free(rc);
}

static int rdma_attach(struct unvme_ctrlr *c, const char *address)
{
	const struct rv_ops *verbs = rv_default();
	if (!verbs)
		return unvme_fail(-ENODEV, "%s: this build has no RDMA verbs (rdma-core's libibverbs and "
				  "librdmacm were not there when it was built)", address);
	struct rdma_ctrlr *rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	rc->c = c;
	rc->verbs = verbs;
	pthread_rwlock_init(&rc->mr_lock, NULL);
	nvmf_keepalive_init(&rc->ka);
	int err = rdma_params_parse(address, &rc->p);
	nvmf_regs_init(&rc->regs, c, &rc->fab, rc->p.ctrl_loss_tmo_ms, rc->p.reconnect_delay_ms,
		       nvmf_attempt_limit_ms(&rc->p, c->opts.admin_timeout_ms), &rdma_regs_ops, rc);
	uint32_t adepth = c->opts.admin_queue_depth ? c->opts.admin_queue_depth : 32;
	if (adepth > 4096)
		adepth = 4096; /* as the driver's admin queue (AQA holds 12 bits) */
	rc->admin_depth = (uint16_t)adepth;
	if (err == 0)
		err = rdma_queue_init(&rc->admin, rc, 0, rc->admin_depth);
	if (err) {
		rdma_free(rc);
		return err;
	}
	nvmf_assoc_init(&rc->fab, &rdma_nvmf_ops, &rc->admin, &rc->p, c->opts.admin_timeout_ms);
	rc->admin.locked = true;
	rc->admin.timeout_ms = c->opts.admin_timeout_ms;
	err = nvmf_regs_connect_first(&rc->regs);
	if (err) {
		rdma_free(rc);
		return err < 0 ? err : -ECONNREFUSED; /* refused with an NVMe status: the message says which */
	}
	c->transport_ctx = rc;
	if (nvmf_keepalive_start(&rc->ka, rc->p.kato_ms, nvmf_regs_keep_alive_tick, &rc->regs))
		rdma_report(rc, "cannot start the keep-alive thread: the controller may end the "
			    "association after %u ms without commands", rc->p.kato_ms);
	return 0;
}

static void rdma_quiesce(struct unvme_ctrlr *c)
{
	struct rdma_ctrlr *rc = c->transport_ctx;
	/* a connect thread first: the keep-alive thread's recovery may wait for its end */
	nvmf_regs_stop(&rc->regs);
	nvmf_keepalive_stop(&rc->ka);
}

static uint64_t rdma_enable_limit_ms(struct unvme_ctrlr *c)
{
	struct rdma_ctrlr *rc = c->transport_ctx;
	return nvmf_regs_enable_limit_ms(&rc->regs);
}

static void rdma_detach(struct unvme_ctrlr *c)
{
	struct rdma_ctrlr *rc = c->transport_ctx;
	rdma_quiesce(c);
	pthread_mutex_lock(&rc->regs.lock);
	assoc_end(rc);
	pthread_mutex_unlock(&rc->regs.lock);
	if (c->admin)
		c->admin->bus = NULL; /* its transport queue was rc's: freed with it */
	rdma_free(rc);
	c->transport_ctx = NULL;
}

/* ---- queue pairs ---- */

static void rdma_qp_doorbell(void *bus, uint32_t off, uint32_t val)
{
	struct rdma_queue *q = bus;
	if (off != q->sq_db)
		return; /* a CQ head doorbell: the controller does not need to know */
	if (q->locked) {
		/* (nothing is submitted while the association is being made: the driver's reset
		 * holds the admin queue down until CSTS.RDY = 1) */
		if (nvmf_regs_enter(&q->rc->regs)) {
			rdma_queue_doorbell(q, (uint16_t)val);
			pthread_mutex_unlock(&q->rc->regs.lock);
		}
		return;
	}
	pthread_mutex_lock(&q->mu);
	rdma_queue_doorbell(q, (uint16_t)val);
	pthread_mutex_unlock(&q->mu);
}

static int rdma_qp_init(struct unvme_qpair *qp)
{
	struct rdma_ctrlr *rc = qp->ctrlr->transport_ctx;
	struct rdma_queue *q;
	if (qp->qid == 0) {
		q = &rc->admin;
		/* its command ids must be the connection's (the last one is the transport's own) */
		if (qp->depth > rc->admin_depth)
			return unvme_fail(-EINVAL, "%s: admin queue of %u entries, the connection has %u",
					  rc->c->devid, qp->depth, rc->admin_depth);
		pthread_mutex_lock(&rc->regs.lock);
		nvmf_regs_idle(&rc->regs); /* (a Keep Alive may be in flight) */
		q->qp = qp;
		rdma_queue_reset(q);
		pthread_mutex_unlock(&rc->regs.lock);
	} else {
		q = malloc(sizeof(*q));
		int err = q ? rdma_queue_init(q, rc, qp->qid, qp->depth) : -ENOMEM;
		if (err) {
			free(q);
			return unvme_fail(err, "no memory for an NVMe/RDMA queue");
		}
		q->qp = qp;
		q->timeout_ms = qp->timeout_ms;
	}
	q->sq_db = qp->sq_db;
	qp->bus = q;
	qp->write32 = rdma_qp_doorbell;
	return 0;
}

/* A connect thread's end waited for, its connection kept (the caller closes or uses it) and
 * the queue pair served again. */
static int settle(struct rdma_queue *q)
{
	if (!q->connecting)
		return 0;
	int err = nvmf_async_wait(&q->async);
	q->qp = q->async_qp;
	q->connecting = false;
	return err;
}

static void rdma_qp_fini(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	if (!q)
		return;
	if (qp->qid != 0)
		(void)settle(q);
	if (qp->qid == 0) {
		pthread_mutex_lock(&q->rc->regs.lock);
		q->qp = NULL;
		pthread_mutex_unlock(&q->rc->regs.lock);
		return;
	}
	rdma_queue_fini(q);
	free(q);
	qp->bus = NULL;
}

static void rdma_qp_reset(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	if (qp->qid == 0) {
		/* the admin connection is the association's: CC writes open and close it (a
		 * connect thread resets it at each attempt) */
		if (nvmf_regs_enter(&q->rc->regs)) {
			nvmf_regs_idle(&q->rc->regs);
			rdma_queue_reset(q);
			pthread_mutex_unlock(&q->rc->regs.lock);
		}
		return;
	}
	(void)settle(q);
	pthread_mutex_lock(&q->mu);
	rdma_queue_close(q);
	rdma_queue_reset(q);
	pthread_mutex_unlock(&q->mu);
}

/* Before a queue's connection is made again: what it had settled; -EIO when the association
 * it belongs to is not live. */
static int conn_prepare(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	struct rdma_ctrlr *rc = q->rc;
	(void)settle(q);
	q->timeout_ms = qp->timeout_ms;
	if (atomic_load(&rc->regs.assoc) != NVMF_ASSOC_LIVE)
		return unvme_fail(-EIO, "%s: queue %u: no association with the controller", rc->c->devid,
				  qp->qid);
	return 0;
}

static int rdma_qp_connect(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	struct rdma_ctrlr *rc = q->rc;
	int err = conn_prepare(qp);
	if (err)
		return err;
	pthread_mutex_lock(&q->mu);
	err = rdma_queue_connect(q, rc->fab.cntlid, NULL);
	pthread_mutex_unlock(&q->mu);
	return err;
}

/* The connect thread's job: the RDMA connection and Connect (then authentication), on a
 * queue that serves no queue pair meanwhile. */
static int connect_job(void *arg)
{
	struct rdma_queue *q = arg;
	return rdma_queue_connect_conn(q, q->async_cntlid, NULL);
}

static int rdma_qp_connect_start(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	struct rdma_ctrlr *rc = q->rc;
	int err = conn_prepare(qp);
	if (err)
		return err;
	pthread_mutex_lock(&q->mu);
	rdma_queue_close(q);
	rdma_queue_reset(q);
	pthread_mutex_unlock(&q->mu);
	q->async_cntlid = rc->fab.cntlid;
	q->async_qp = q->qp;
	q->qp = NULL;
	err = nvmf_async_start(&q->async, connect_job, q);
	if (err) {
		q->qp = q->async_qp;
		return err;
	}
	q->connecting = true;
	return 0;
}

static int rdma_qp_connect_done(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	if (!q->connecting)
		return 0;
	int err = nvmf_async_take(&q->async);
	if (err == -EINPROGRESS)
		return err;
	q->qp = q->async_qp;
	q->connecting = false;
	return err;
}

static void rdma_qp_disconnect(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	(void)settle(q);
	const struct nvmf_id_ctrl_fabrics *f = (const void *)q->rc->c->id.nvmeof;
	pthread_mutex_lock(&q->mu);
	/* Disconnect is optional (OFCS bit 0): ending the connection says the same */
	if ((f->ofcs & 1u) && q->hq_up && !atomic_load(&q->dead))
		nvmf_disconnect(&q->rc->fab, q);
	rdma_queue_close(q);
	pthread_mutex_unlock(&q->mu);
}

static int rdma_qp_map(struct unvme_qpair *qp, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len)
{
	return rdma_queue_map(qp->bus, cid, sqe, buf, len);
}

static void rdma_qp_pump(struct unvme_qpair *qp)
{
	struct rdma_queue *q = qp->bus;
	if (q->locked) {
		if (nvmf_regs_enter(&q->rc->regs)) { /* (not while a connect thread has it) */
			rdma_queue_pump(q);
			pthread_mutex_unlock(&q->rc->regs.lock);
		}
		return; /* the admin path holds locks recovery needs: keep alive or I/O recovers */
	}
	if (q->connecting)
		return; /* the connection is a connect thread's until the recovery takes it */
	pthread_mutex_lock(&q->mu);
	/* a reset by another thread: this queue's connection belongs to the old association */
	if (atomic_load_explicit(&qp->failed, memory_order_relaxed) && !atomic_load(&q->dead))
		rdma_queue_mark_dead(q, "the controller is being reset");
	bool failed_now = rdma_queue_pump(q);
	pthread_mutex_unlock(&q->mu);
	if (failed_now && !atomic_load(&qp->failed)) {
		/* as Linux's host: a queue that fails takes the association with it; the poll
		 * reconnects everything once this queue's commands are given back */
		rdma_report(q->rc, "queue %u: %s", qp->qid, q->dead_why ? q->dead_why : "connection lost");
		assoc_break(q->rc, q->dead_why);
		qp->ctrlr->failed = 1;
	}
}

static const struct unvme_transport_ops rdma_ops = {
	.attach = rdma_attach,
	.detach = rdma_detach,
	.quiesce = rdma_quiesce,
	.read32 = rdma_read32,
	.write32 = rdma_write32,
	.read64 = rdma_read64,
	.read32_nowait = rdma_read32_nowait,
	.write64 = rdma_write64,
	.dma_map = rdma_mr_map,
	.dma_unmap = rdma_mr_unmap,
	.qp_init = rdma_qp_init,
	.qp_fini = rdma_qp_fini,
	.qp_reset = rdma_qp_reset,
	.qp_connect = rdma_qp_connect,
	.qp_disconnect = rdma_qp_disconnect,
	.qp_map = rdma_qp_map,
	.qp_pump = rdma_qp_pump,
	.qp_connect_start = rdma_qp_connect_start,
	.qp_connect_done = rdma_qp_connect_done,
	.enable_limit_ms = rdma_enable_limit_ms,
};

static const char *const rdma_schemes[] = {RDMA_SCHEME, NULL};
static const struct unvme_transport unvme_transport_rdma = {
	.name = "rdma",
	.schemes = rdma_schemes,
	.kind = UNVME_TRANSPORT_FABRICS,
	.rank = 25,
	.matches = rdma_matches,
	.ops = &rdma_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_rdma);
