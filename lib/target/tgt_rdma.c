/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/RDMA connections of the target (docs/nvme-rdma.md): a second wire under the same
 * subsystems, controllers, allow-lists, limits and command handling as NVMe/TCP (tgt_conn.c is
 * the TCP wire). lib/fabrics/rdma's controller queue engine (nvrdma_tq) receives and checks
 * capsules and moves keyed data; this file maps its slots to the target's commands.
 *
 * A connection request is checked before anything is made for it: its private data (RDMA
 * Transport Specification 3.1.4: format, queue id and queue sizes against the limits, through
 * cm_priv.c), then the connection limits in total and per host address, counted as a TCP
 * accept is, and the memory its receive buffers take (max_memory_mb, with the data buffers). A refusal is a CM reject carrying the status. Then the queue pair with one slot
 * per command the host may have outstanding (HSQSIZE + 1), its receives posted, the accept
 * (CRQSIZE), and a poller takes the connection. The host's NQN, the subsystem and the
 * allow-list come with Connect, exactly as on TCP (tgt_fabrics.c).
 *
 * A command: its capsule is checked by the engine (SGL type, in-capsule ranges, the keyed
 * length limit), then here as on TCP: the gate, the command's own plan of its data
 * (tgt_xfer.c), and the SGL must describe exactly those bytes, in-capsule data only towards the
 * controller. A vendor KV key over 16 bytes, which NVMe/TCP carries in the capsule, has no
 * place in an RDMA capsule here: Invalid Field. Host-to-controller data is copied from the
 * capsule or fetched by RDMA READ into the command's DMA buffer; controller-to-host data goes
 * by RDMA WRITE from it, then the response (RC orders them). A command whose buffer must wait
 * for memory (tgt_buf.c) waits in arrival order, its capsule left in its receive buffer.
 *
 * Memory regions: the target's DMA buffers are registered for local access only (a host never
 * reaches the target's memory; the target reads and writes the host's), once per buffer while
 * the connection holds it (a table by address), released when the buffer leaves the
 * connection or the connection ends, so a buffer handed to another connection carries no
 * registration of this one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/clock.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/target_queue.h"
#include "tgt.h"

struct rdma_mr {
	void *buf;
	struct rv_mr *mr;
};

struct tgt_rdma {
	struct rv_ep *ep;
	struct nvrdma_tq tq;
	bool tq_up;
	bool close_after;          /* close once the last response was sent (Disconnect) */
	uint32_t sending;          /* responses posted whose send has not completed */
	uint64_t mem;              /* its receive and response buffers, counted in t->mem */
	struct tgt_cmd *wait_head, *wait_tail; /* waiting for buffer memory, in arrival order */
	struct rdma_mr *mrs;       /* open addressing by buffer address, linear probing */
	uint32_t mrs_cap, mrs_n;
};

const char *tgt_rdma_unavailable(void)
{
	return rv_default() ? NULL
			    : "this build has no NVMe/RDMA: rdma-core's headers (libibverbs-dev, "
			      "librdmacm-dev) were not installed when it was built";
}

/* ---- registered regions of the connection's buffers ---- */

static uint32_t mr_home(const struct tgt_rdma *r, const void *buf)
{
	uint64_t h = ((uint64_t)(uintptr_t)buf >> 12) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & (r->mrs_cap - 1);
}

static void mr_put(struct tgt_rdma *r, struct rdma_mr e)
{
	uint32_t i = mr_home(r, e.buf);
	while (r->mrs[i].buf)
		i = (i + 1) & (r->mrs_cap - 1);
	r->mrs[i] = e;
	r->mrs_n++;
}

static int mr_grow(struct tgt_rdma *r)
{
	uint32_t ocap = r->mrs_cap, cap = ocap ? 2 * ocap : 64;
	struct rdma_mr *old = r->mrs, *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->mrs = n;
	r->mrs_cap = cap;
	r->mrs_n = 0;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].buf)
			mr_put(r, old[i]);
	free(old);
	return 0;
}

static int64_t mr_find(const struct tgt_rdma *r, const void *buf)
{
	if (!r->mrs_cap)
		return -1;
	for (uint32_t i = mr_home(r, buf); r->mrs[i].buf; i = (i + 1) & (r->mrs_cap - 1))
		if (r->mrs[i].buf == buf)
			return i;
	return -1;
}

/* The region of a command's buffer (cap bytes: the whole buffer), registered at first use. */
static struct rv_mr *mr_of(struct tgt_conn *c, void *buf, uint32_t cap)
{
	struct tgt_rdma *r = c->rdma;
	int64_t i = mr_find(r, buf);
	if (i >= 0)
		return r->mrs[i].mr;
	if ((r->mrs_n + 1) * 2 > r->mrs_cap && mr_grow(r))
		return NULL;
	struct rv_mr *mr;
	int rc = rv_reg_mr(r->ep->pd, buf, cap, RV_ACCESS_LOCAL_WRITE, &mr);
	if (rc) {
		tgt_log(c->t, "host %s: cannot register a %u-byte buffer with the RDMA device: %s", c->peer,
			cap, strerror(-rc));
		return NULL;
	}
	mr_put(r, (struct rdma_mr){.buf = buf, .mr = mr});
	return mr;
}

void tgt_rdma_buf_gone(struct tgt_conn *c, void *buf)
{
	struct tgt_rdma *r = c->rdma;
	int64_t found = mr_find(r, buf);
	if (found < 0)
		return;
	uint32_t i = (uint32_t)found, m = r->mrs_cap - 1;
	rv_dereg_mr(r->mrs[i].mr);
	r->mrs[i].buf = NULL;
	r->mrs_n--;
	/* close the gap: an entry further on moves back unless its home lies after the gap */
	for (uint32_t j = (i + 1) & m; r->mrs[j].buf; j = (j + 1) & m) {
		uint32_t k = mr_home(r, r->mrs[j].buf);
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			r->mrs[i] = r->mrs[j];
			r->mrs[j].buf = NULL;
			i = j;
		}
	}
}

static void mrs_release(struct tgt_rdma *r)
{
	for (uint32_t i = 0; i < r->mrs_cap; i++)
		if (r->mrs[i].buf)
			rv_dereg_mr(r->mrs[i].mr);
	free(r->mrs);
	r->mrs = NULL;
	r->mrs_cap = r->mrs_n = 0;
}

/* ---- commands ---- */

/* SGL1 (as the engine parsed it) against what the command moves (tgt_xfer.c); 0 or a status. */
static int check_sgl(const struct nvme_sqe *sqe, const struct nvrdma_capsule *cap, const struct tgt_xfer *x)
{
	if (tgt_kv_key_desc(sqe))
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	if (cap->kind == NVRDMA_DATA_INCAPSULE && !x->to_ctrl)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_OFFSET_INVALID);
	if (cap->len != x->len)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID);
	return 0;
}

/* Its buffer, its data in: false while it waits for memory. */
static bool start(struct tgt_conn *c, struct tgt_cmd *cmd)
{
	struct nvrdma_tq_cmd *tc = cmd->wire;
	if (cmd->len) {
		void *buf;
		int rc = tgt_buf_get(c, cmd->len, &buf, &cmd->buf_cap);
		if (rc == -EAGAIN) {
			cmd->state = CMD_WAIT_BUF;
			return false;
		}
		if (rc) {
			tgt_log(c->t, "host %s: no memory for a command's data (%u bytes)", c->peer, cmd->len);
			tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INTERNAL);
			return true;
		}
		cmd->buf = buf;
	}
	cmd->state = CMD_RECV;
	if (tc->cap.kind == NVRDMA_DATA_INCAPSULE) {
		memcpy(cmd->buf, tc->cap.icd, cmd->len);
	} else if (cmd->to_ctrl && cmd->len) {
		struct rv_mr *mr = mr_of(c, cmd->buf, cmd->buf_cap);
		if (!mr) {
			tgt_complete(cmd, NVME_SCT_GENERIC, NVME_SC_INTERNAL);
			return true;
		}
		cmd->state = CMD_H2C;
		int rc = nvrdma_tq_fetch(tc, cmd->buf, mr);
		if (rc)
			tgt_conn_close(c, "reading the host's data failed: %s", strerror(-rc));
		return true; /* on_data_in goes on */
	}
	tgt_exec(cmd);
	return true;
}

static void on_capsule(void *arg, struct nvrdma_tq_cmd *tc)
{
	struct tgt_conn *c = arg;
	struct tgt_rdma *r = c->rdma;
	if (c->closing || c->rx_state == RX_DEAD) {
		nvrdma_tq_drop(tc); /* after Disconnect nothing more is taken */
		return;
	}
	struct tgt_cmd *cmd = tgt_cmd_get(c);
	if (!cmd) { /* one command per slot of the engine: cannot happen */
		nvrdma_tq_drop(tc);
		tgt_conn_close(c, "more commands than the queue's slots");
		return;
	}
	cmd->wire = tc;
	tc->owner = cmd;
	cmd->sqe = tc->cap.sqe;
	struct tgt_xfer x;
	int st = tgt_cmd_arrived(c, &cmd->sqe, &x);
	if (!st)
		st = check_sgl(&cmd->sqe, &tc->cap, &x);
	if (st) {
		tgt_complete(cmd, (uint16_t)NVME_STATUS_SCT(st), (uint8_t)NVME_STATUS_SC(st));
		return;
	}
	cmd->len = x.len;
	cmd->to_ctrl = x.to_ctrl;
	cmd->fills = x.fills;
	if (!r->wait_head && start(c, cmd))
		return;
	/* behind the ones waiting already, or waiting itself */
	cmd->state = CMD_WAIT_BUF;
	cmd->next_free = NULL;
	if (r->wait_tail)
		r->wait_tail->next_free = cmd;
	else
		r->wait_head = cmd;
	r->wait_tail = cmd;
	c->wait_cmd = r->wait_head;
}

static void on_data_in(void *arg, struct nvrdma_tq_cmd *tc, int status)
{
	(void)arg;
	struct tgt_cmd *cmd = tc->owner;
	/* status < 0: the queue failed (on_fatal closes the connection, which releases cmd) */
	if (cmd && status == 0)
		tgt_exec(cmd);
}

static void on_sent(void *arg, struct nvrdma_tq_cmd *tc)
{
	struct tgt_conn *c = arg;
	struct tgt_rdma *r = c->rdma;
	struct tgt_cmd *cmd = tc->owner;
	tc->owner = NULL;
	r->sending--;
	tgt_cmd_release(cmd);
	if (r->close_after && r->sending == 0)
		tgt_conn_close(c, "%s", c->why[0] ? c->why : "closed after its last response");
}

static void on_fatal(void *arg, const char *why)
{
	struct tgt_conn *c = arg;
	/* a queue pair flushed by a disconnect is the normal end; anything else is the host's
	 * doing (a capsule too short to be one, a key or range it did not grant) */
	if (!strstr(why, "flushed") && !c->closing)
		tgt_log(c->t, "host %s (%s): NVMe/RDMA queue %u failed: %s: connection closed", c->peer,
			c->ctrl ? c->ctrl->hostnqn : "not connected", c->qid, why);
	tgt_conn_close(c, "%s", why);
}

void tgt_rdma_respond(struct tgt_cmd *cmd, uint16_t status)
{
	struct tgt_conn *c = cmd->conn;
	struct tgt_rdma *r = c->rdma;
	struct nvme_cqe cqe = cmd->cqe;
	cqe.status = status;
	struct rv_mr *mr = NULL;
	if (cmd->send_len && !(mr = mr_of(c, cmd->buf, cmd->buf_cap))) {
		cqe.status = NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
		cmd->send_len = 0;
	}
	cmd->state = CMD_SENDING;
	int rc = nvrdma_tq_respond(cmd->wire, &cqe, cmd->buf, cmd->send_len, mr);
	if (rc) {
		tgt_cmd_release(cmd);
		tgt_conn_close(c, "sending a response failed: %s", strerror(-rc));
		return;
	}
	r->sending++;
}

void tgt_rdma_close_after_send(struct tgt_conn *c)
{
	c->rx_state = RX_DEAD;
	c->rdma->close_after = true;
	if (c->rdma->sending == 0)
		tgt_conn_close(c, "%s", c->why[0] ? c->why : "closed");
}

/* ---- the connection on its poller ---- */

int tgt_rdma_rx(struct tgt_conn *c)
{
	struct tgt_rdma *r = c->rdma;
	int work = 0;
	enum rv_event ev;
	while ((ev = rv_ep_event(r->ep)) != RV_EV_NONE) {
		work++;
		if (ev == RV_EV_DISCONNECTED) {
			tgt_conn_close(c, "disconnected by the host");
			return work;
		}
	}
	while (r->wait_head && !c->closing) {
		struct tgt_cmd *cmd = r->wait_head;
		r->wait_head = cmd->next_free;
		if (!r->wait_head)
			r->wait_tail = NULL;
		if (!start(c, cmd)) {
			cmd->next_free = r->wait_head;
			r->wait_head = cmd;
			if (!r->wait_tail)
				r->wait_tail = cmd;
			break;
		}
		work++;
	}
	c->wait_cmd = r->wait_head;
	if (c->closing)
		return work;
	int n = nvrdma_tq_poll(&r->tq);
	if (n < 0)
		tgt_conn_close(c, "%s", r->tq.why); /* on_fatal said why */
	else
		work += n;
	return work;
}

int tgt_rdma_fd(const struct tgt_conn *c)
{
	return c->rdma->ep->ops->fd(c->rdma->ep);
}

int tgt_rdma_arm(struct tgt_conn *c)
{
	rv_wait(c->rdma->ep, 0);
	return tgt_conn_service(c);
}

void tgt_rdma_stop(struct tgt_conn *c)
{
	struct tgt_rdma *r = c->rdma;
	if (r->ep) {
		rv_disconnect(r->ep);
		rv_ep_destroy(r->ep); /* what was posted is gone: nothing lands in a buffer now */
		r->ep = NULL;
	}
	if (r->tq_up)
		nvrdma_tq_fini(&r->tq);
	r->tq_up = false;
	atomic_fetch_sub_explicit(&c->t->mem, r->mem, memory_order_relaxed);
	r->mem = 0;
	mrs_release(r);
	r->wait_head = r->wait_tail = NULL;
	c->wait_cmd = NULL;
}

/* ---- listeners and connection requests ---- */

/* "ADDRESS:PORT" (IPv6 without brackets) into its parts, its family and a per-host key; an
 * address that is not IP (the fake verbs' "fake:N") is keyed by its text. */
static void split_addr(const char *s, char *host, size_t hl, char *port, size_t pl, uint8_t *adrfam,
		       struct tgt_addr *key)
{
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	snprintf(host, hl, "%.*s", (int)n, s);
	snprintf(port, pl, "%s", colon ? colon + 1 : "");
	memset(key, 0, sizeof(*key));
	uint8_t a[16];
	if (inet_pton(AF_INET, host, a) == 1) {
		key->b[0] = AF_INET;
		memcpy(key->b + 1, a, 4);
		*adrfam = NVMF_ADRFAM_IPV4;
	} else if (inet_pton(AF_INET6, host, a) == 1) {
		key->b[0] = AF_INET6;
		memcpy(key->b + 1, a, 16);
		*adrfam = NVMF_ADRFAM_IPV6;
	} else {
		memcpy(key->b + 1, host, strnlen(host, 16));
		*adrfam = NVMF_ADRFAM_IPV4;
	}
}

static const char *listen_failure(int rc)
{
	switch (rc) {
	case -ENODEV:
	case -ENOENT:
		return "no RDMA device: this kernel has no RDMA device or no RDMA connection manager "
		       "(a RoCE or InfiniBand NIC's driver, or soft-RoCE: modprobe rdma_rxe rdma_ucm; "
		       "rdma link add rxe0 type rxe netdev IFACE)";
	case -EADDRNOTAVAIL:
	case -EINVAL:
		return "no RDMA device has this address";
	default:
		return strerror(-rc);
	}
}

int tgt_rdma_listen(struct unvme_target *t, const struct tgt_listen_cfg *l, char *err, size_t errlen)
{
	const struct rv_ops *v = rv_default();
	if (!v)
		return tgt_fail(err, errlen, -ENOTSUP, "rdma:%s:%s: %s", l->addr, l->port, tgt_rdma_unavailable());
	/* the address itself first: a wrong one is named as such, not as a device problem */
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(l->addr, l->port, &hints, &res);
	if (g)
		return tgt_fail(err, errlen, -EINVAL, "listen address rdma:%s:%s: %s", l->addr, l->port,
				gai_strerror(g));
	freeaddrinfo(res);
	struct rv_listener *rl;
	int rc = v->listen(v, l->addr, l->port, &rl);
	if (rc)
		return tgt_fail(err, errlen, rc, "cannot listen on rdma:%s:%s: %s", l->addr, l->port,
				listen_failure(rc));
	if (t->nlfds == 0 && t->nrls == 0)
		t->port = rl->port;
	t->rls[t->nrls++] = rl;
	tgt_info(t, "NVMe/RDMA listener on %s (%s verbs)", rl->local, v->name);
	return 0;
}

int tgt_rdma_listen_fd(const struct unvme_target *t, int i)
{
	return t->rls[i]->ops->listen_fd(t->rls[i]);
}

void tgt_rdma_listen_close(struct unvme_target *t)
{
	for (int i = 0; i < t->nrls; i++)
		rv_listen_close(t->rls[i]);
	free(t->rls);
	t->rls = NULL;
	t->nrls = 0;
}

static void refuse(struct rv_req *req, uint16_t sts)
{
	struct nvme_rdma_cm_rej rej;
	nvrdma_cm_rej_build(&rej, sts);
	rv_reject(req, &rej, sizeof(rej));
}

/* The connection of an accepted request (not yet adopted by a poller). */
static struct tgt_conn *conn_new(struct unvme_target *t, const struct rv_req *req,
				 const struct tgt_addr *key, uint32_t depth)
{
	struct tgt_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->rdma = calloc(1, sizeof(*c->rdma));
	c->t = t;
	c->fd = -1;
	c->addr = *key;
	c->born_ms = mono_ms_coarse();
	c->rx_state = RX_HDR; /* no ICReq on RDMA: the CM request was it */
	snprintf(c->peer, sizeof(c->peer), "%s", req->peer);
	struct tgt_addr local;
	split_addr(req->local, c->local_addr, sizeof(c->local_addr), c->local_port, sizeof(c->local_port),
		   &c->adrfam, &local);
	if (!c->rdma || tgt_conn_size(c, depth)) {
		tgt_conn_free(c);
		return NULL;
	}
	return c;
}

struct tgt_conn *tgt_rdma_conn_accept(struct unvme_target *t, struct rv_req *req)
{
	const struct tgt_limits *lim = &t->cfg->lim;
	struct nvrdma_cm_limits cl = {
		.max_qid = (uint16_t)(lim->max_io_queues < 0xffff ? lim->max_io_queues : 0xffff),
		.admin_depth = TGT_ADMIN_SLOTS,
		.io_depth = (uint16_t)(lim->queue_depth < 0xffff ? lim->queue_depth : 0xffff),
	};
	struct nvrdma_cm_params prm;
	int sts = nvrdma_cm_req_check(req->priv, req->priv_len, &cl, &prm);
	if (sts == NVME_RDMA_CM_INVALID_QID || sts == NVME_RDMA_CM_INVALID_HSQSIZE) {
		tgt_limit_hit(t, &t->lim_queues, "host %s: RDMA queue refused: %s (max_io_queues %u, "
			      "max_queue_depth %u, admin queue %u entries)", req->peer,
			      nvrdma_cm_status_name((uint16_t)sts), lim->max_io_queues, lim->queue_depth,
			      TGT_ADMIN_SLOTS);
	} else if (sts) {
		tgt_log(t, "host %s: RDMA connection refused: %s", req->peer, nvrdma_cm_status_name((uint16_t)sts));
	}
	if (sts) {
		refuse(req, (uint16_t)sts);
		return NULL;
	}
	struct tgt_addr key;
	char host[64], port[8];
	uint8_t fam;
	split_addr(req->peer, host, sizeof(host), port, sizeof(port), &fam, &key);
	if (!tgt_conn_admit(t, &key, req->peer)) {
		refuse(req, NVME_RDMA_CM_NO_RSC);
		return NULL;
	}
	uint32_t depth = prm.hsqsize + 1u;
	struct tgt_conn *c = conn_new(t, req, &key, depth);
	if (!c) {
		tgt_conn_retire(t, &key);
		tgt_log(t, "out of memory for a new connection from %s", req->peer);
		refuse(req, NVME_RDMA_CM_NO_RSC);
		return NULL;
	}
	c->counted = true;
	/* its receive buffers (HSQSIZE + 1 capsules with their in-capsule data) are memory a host
	 * makes the target hold: they count against max_memory_mb with the data buffers */
	uint32_t icd = prm.qid ? TGT_ICD : 0;
	uint64_t qmem = nvrdma_tq_mem_bytes(depth, icd);
	if (atomic_fetch_add_explicit(&t->mem, qmem, memory_order_relaxed) + qmem > lim->memory) {
		atomic_fetch_sub_explicit(&t->mem, qmem, memory_order_relaxed);
		tgt_limit_hit(t, &t->lim_mem, "host %s: RDMA queue %u refused: its %u receive buffers "
			      "(%llu KiB) would pass max_memory_mb (%llu MiB)", req->peer, prm.qid, depth,
			      (unsigned long long)(qmem >> 10), (unsigned long long)(lim->memory >> 20));
		refuse(req, NVME_RDMA_CM_NO_RSC);
		tgt_conn_free(c);
		return NULL;
	}
	c->rdma->mem = qmem;
	/* a command has at most two requests posted at once: its RDMA READ or WRITE, and its
	 * response */
	struct rv_qp_caps caps = {.send_depth = 2 * depth, .recv_depth = depth, .max_sge = 1};
	struct nvrdma_tq_cfg qc = {
		.qid = prm.qid,
		.depth = depth,
		.rules = {.admin = prm.qid == 0, .icd_max = icd,
			  .max_data = prm.qid ? TGT_MAX_CMD_BUF : TGT_ADMIN_MAX_XFER},
		.capsule = on_capsule,
		.data_in = on_data_in,
		.fatal = on_fatal,
		.sent = on_sent,
		.arg = c,
	};
	int rc = rv_req_ep(req, &caps);
	if (rc == 0 && (rc = nvrdma_tq_init(&c->rdma->tq, req->ep, &qc)) == 0)
		c->rdma->tq_up = true;
	if (rc) {
		tgt_log(t, "host %s: no RDMA queue pair of %u entries for queue %u: %s", req->peer, depth,
			prm.qid, strerror(-rc));
		refuse(req, NVME_RDMA_CM_NO_RSC); /* destroys the endpoint, if made */
		tgt_conn_free(c);
		return NULL;
	}
	struct rv_ep *ep = req->ep;
	c->rdma->ep = ep;
	struct nvme_rdma_cm_rep rep;
	nvrdma_cm_rep_build(&rep, (uint16_t)depth);
	rc = rv_accept(req, &rep, sizeof(rep));
	if (rc) {
		tgt_info(t, "host %s: accepting its RDMA connection failed: %s", c->peer, strerror(-rc));
		tgt_conn_free(c); /* the endpoint is ours: tgt_rdma_stop destroys it */
		return NULL;
	}
	return c;
}

void tgt_rdma_accept(struct unvme_target *t, int i)
{
	struct rv_req *req;
	/* a bounded batch: the other listeners and stop are looked at in between */
	for (int n = 0; n < 64 && rv_listen_get(t->rls[i], &req) == 1; n++) {
		struct tgt_conn *c = tgt_rdma_conn_accept(t, req);
		if (c)
			tgt_poller_adopt(t, c);
	}
}
