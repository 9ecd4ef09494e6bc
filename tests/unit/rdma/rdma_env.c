/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVMe/RDMA host's test environment (see rdma_env.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma_env.h"
#include "test_util.h"
#include "unvme/spec/cmd.h"
#include "unvme/spec/rdma.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/verbs_fake.h"
#include "lib/target/target.h"

/* The host transport's verbs: the fake fabric of this process. */
__attribute__((constructor)) static void rdma_env_setup(void)
{
	setenv("UNVME_MP", "0", 0);
	rv_set_default(&rv_fake);
}

/* ---- the target ---- */

static struct unvme_target *tgt;
unsigned tgt_port;

int target_up_auth(const char *secret, const char *ctrl_secret, const char *dhgroup)
{
	char err[512];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	int si = tgt_config_add_subsys(cfg, NQN, err, sizeof(err));
	int rc = si < 0 ? si : tgt_config_add_listen(cfg, "rdma:" ADDR ":0", err, sizeof(err));
	if (rc == 0)
		rc = tgt_config_add_ns(cfg, si, "emu://rdmahost?ns=mem:16M:512", 0, 0, err, sizeof(err));
	if (rc == 0)
		rc = tgt_config_add_host(cfg, si, HOST_OK, secret, ctrl_secret, NULL, dhgroup, err, sizeof(err));
	if (rc == 0) {
		rc = unvme_target_start(cfg, &tgt, err, sizeof(err));
		cfg = NULL;
	}
	tgt_config_free(cfg);
	if (rc) {
		fprintf(stderr, "  target: %s\n", err);
		return rc;
	}
	tgt_port = unvme_target_port(tgt);
	return 0;
}

int target_up(void)
{
	return target_up_auth(NULL, NULL, NULL);
}

void target_down(void)
{
	unvme_target_stop(tgt);
	tgt = NULL;
}

int open_at(unsigned port, const char *host, const char *query, const struct unvme_ctrlr_opts *o,
		   struct unvme_ctrlr **c)
{
	char id[1800];
	snprintf(id, sizeof(id), "nvme-rdma://" ADDR ":%u/" NQN "?hostnqn=%s%s%s", port, host,
		 query ? "&" : "", query ? query : "");
	*c = NULL;
	int rc = unvme_ctrlr_open(id, o, c);
	if (rc && getenv("RDMA_TEST_VERBOSE"))
		fprintf(stderr, "  open %s: %s\n", id, unvme_errmsg());
	return rc;
}

/* ---- a relay between host and target, and its lies ---- */

#define PX_LINKS 16
#define PX_BUF 16384u
#define WR_SEND (1ull << 40)
#define WR_UP (1ull << 32)

struct px_link {
	struct rv_ep *down, *up;  /* the host's connection, ours to the target */
	uint16_t qid, depth;
	unsigned delay_ms;        /* hold the target's first response (Connect's) this long */
	bool answered;            /* its first response went */
	uint8_t *mem;             /* depth buffers for capsules, then depth for responses */
	struct rv_mr *mr;
};

static struct {
	pthread_t th;
	struct rv_listener *l;
	_Atomic bool stop;
	_Atomic int lie;           /* enum lie, taken by the response it changes */
	_Atomic int cut;           /* break every connection */
	_Atomic uint16_t reject;   /* reject connection requests with this CM status */
	_Atomic int bad_accept;    /* 1: accept without private data; 2: a CRQSIZE of 2 */
	_Atomic unsigned accepted;
	_Atomic bool hold;         /* move nothing (what is sent stays in flight) */
	_Atomic unsigned delay_ms; /* links accepted from now on answer Connect this late */
	_Atomic unsigned delayed;  /* Connect answers held so far */
	struct px_link links[PX_LINKS];
} px;

static uint8_t *px_buf(struct px_link *k, uint32_t i)
{
	return k->mem + (size_t)i * PX_BUF;
}

static int px_post_recv(struct px_link *k, uint32_t i)
{
	struct rv_sge s = {px_buf(k, i), PX_BUF, k->mr->lkey};
	return rv_post_recv(i < k->depth ? k->down : k->up, (i < k->depth ? 0 : WR_UP) | i, &s);
}

static void px_drop(struct px_link *k)
{
	if (k->down)
		rv_disconnect(k->down);
	if (k->up)
		rv_disconnect(k->up);
	rv_ep_destroy(k->down);
	rv_ep_destroy(k->up);
	rv_dereg_mr(k->mr);
	free(k->mem);
	memset(k, 0, sizeof(*k));
}

static void px_accept(struct rv_req *req)
{
	struct px_link *k = NULL;
	for (int i = 0; i < PX_LINKS && !k; i++)
		if (!px.links[i].down && !px.links[i].up)
			k = &px.links[i];
	uint16_t sts = atomic_load(&px.reject);
	if (!k || sts || req->priv_len < sizeof(struct nvme_rdma_cm_req)) {
		struct nvme_rdma_cm_rej rej;
		nvrdma_cm_rej_build(&rej, sts ? sts : NVME_RDMA_CM_NO_RSC);
		rv_reject(req, &rej, sizeof(rej));
		return;
	}
	struct nvme_rdma_cm_req cr;
	memcpy(&cr, req->priv, sizeof(cr));
	k->qid = cr.qid;
	k->depth = (uint16_t)(cr.hsqsize + 1u);
	struct rv_qp_caps caps = {.send_depth = 2u * k->depth, .recv_depth = k->depth, .max_sge = 1};
	char port[8];
	snprintf(port, sizeof(port), "%u", tgt_port);
	k->mem = calloc(2u * k->depth, PX_BUF);
	int rc = k->mem ? rv_fake.ep_create(&rv_fake, ADDR, port, &caps, 2000, &k->up) : -ENOMEM;
	if (rc == 0)
		rc = rv_reg_mr(k->up->pd, k->mem, 2u * k->depth * PX_BUF, RV_ACCESS_LOCAL_WRITE, &k->mr);
	for (uint32_t i = k->depth; rc == 0 && i < 2u * k->depth; i++)
		rc = px_post_recv(k, i);
	if (rc == 0)
		rc = rv_connect(k->up, req->priv, req->priv_len);
	if (rc == 0)
		rc = rv_connect_wait(k->up, 2000);
	if (rc == -ECONNREFUSED) {
		rv_reject(req, k->up->peer_priv, k->up->peer_priv_len); /* the target's answer, passed on */
		px_drop(k);
		return;
	}
	if (rc == 0)
		rc = rv_req_ep(req, &caps);
	k->down = req->ep;
	for (uint32_t i = 0; rc == 0 && i < k->depth; i++)
		rc = px_post_recv(k, i);
	if (rc) {
		rv_reject(req, NULL, 0);
		k->down = NULL;
		px_drop(k);
		return;
	}
	int bad = atomic_exchange(&px.bad_accept, 0);
	struct nvme_rdma_cm_rep rep;
	nvrdma_cm_rep_build(&rep, 2);
	if (bad == 1)
		rc = rv_accept(req, "no", 2);
	else if (bad == 2)
		rc = rv_accept(req, &rep, sizeof(rep));
	else
		rc = rv_accept(req, k->up->peer_priv, k->up->peer_priv_len);
	if (rc) {
		px_drop(k);
		return;
	}
	k->delay_ms = atomic_load(&px.delay_ms);
	atomic_fetch_add(&px.accepted, 1);
}

/* A response from the target on its way to the host: the lie asked for, on I/O queues. */
static bool px_respond(struct px_link *k, uint32_t j, uint32_t len)
{
	uint8_t *b = px_buf(k, j);
	if (k->delay_ms && !k->answered) {
		/* the relay is the network: a slow one holds everything meanwhile */
		test_sleep_ms(k->delay_ms);
		atomic_fetch_add(&px.delayed, 1);
	}
	k->answered = true;
	int lie = k->qid ? atomic_load(&px.lie) : LIE_NONE;
	if (lie != LIE_NONE && len == sizeof(struct nvme_cqe)) {
		struct nvme_cqe cqe;
		memcpy(&cqe, b, sizeof(cqe));
		if (cqe.status >> 1 == 0 && atomic_compare_exchange_strong(&px.lie, &lie, LIE_NONE)) {
			if (lie == LIE_CID_IDLE)
				cqe.cid = (uint16_t)((cqe.cid + 1u) % k->depth);
			else if (lie == LIE_CID_RANGE)
				cqe.cid = k->depth;
			else if (lie == LIE_LONG)
				len = 20;
			else if (lie == LIE_SHORT)
				len = 8;
			else if (lie == LIE_DROP)
				return false;
			memcpy(b, &cqe, sizeof(cqe));
		}
	}
	struct rv_sge s = {b, len, k->mr->lkey};
	return rv_post_send(k->down, WR_SEND | WR_UP | j, &s, 1) == 0;
}

static bool px_link_poll(struct px_link *k)
{
	struct rv_wc wc[32];
	for (int side = 0; side < 2; side++) {
		struct rv_ep *ep = side ? k->up : k->down;
		int n = rv_poll(ep, wc, 32);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != RV_WC_OK)
				return false;
			uint32_t b = (uint32_t)(wc[i].wr_id & 0xffffffffu);
			bool send = wc[i].wr_id & WR_SEND;
			if (send) {
				/* the buffer went out: it takes the next message of its side again */
				if (px_post_recv(k, b))
					return false;
			} else if (b < k->depth) {
				struct rv_sge s = {px_buf(k, b), wc[i].byte_len, k->mr->lkey};
				if (rv_post_send(k->up, WR_SEND | b, &s, 1))
					return false;
			} else if (!px_respond(k, b, wc[i].byte_len) && px_post_recv(k, b)) {
				return false;
			}
		}
		enum rv_event ev;
		while ((ev = rv_ep_event(ep)) != RV_EV_NONE)
			if (ev == RV_EV_DISCONNECTED)
				return false;
	}
	return true;
}

static void *px_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&px.stop)) {
		struct rv_req *req;
		while (rv_listen_get(px.l, &req) == 1)
			px_accept(req);
		bool cut = atomic_exchange(&px.cut, 0);
		for (int i = 0; i < PX_LINKS; i++) {
			struct px_link *k = &px.links[i];
			if (!k->down)
				continue;
			if (cut)
				rv_fake_break(k->down);
			if (!atomic_load(&px.hold) && !px_link_poll(k))
				px_drop(k);
		}
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < PX_LINKS; i++)
		if (px.links[i].down || px.links[i].up)
			px_drop(&px.links[i]);
	return NULL;
}

unsigned relay_start(void)
{
	memset(&px, 0, sizeof(px));
	if (rv_fake.listen(&rv_fake, ADDR, "0", &px.l))
		return 0;
	if (pthread_create(&px.th, NULL, px_main, NULL)) {
		rv_listen_close(px.l);
		return 0;
	}
	return px.l->port;
}

void relay_stop(void)
{
	atomic_store(&px.stop, true);
	pthread_join(px.th, NULL);
	rv_listen_close(px.l);
}

void relay_cut(bool wait)
{
	atomic_store(&px.cut, 1);
	while (wait && atomic_load(&px.cut))
		test_sleep_ms(1);
}

void relay_lie(enum lie lie)
{
	atomic_store(&px.lie, lie);
}

enum lie relay_lie_left(void)
{
	return atomic_load(&px.lie);
}

void relay_reject(uint16_t cm_status)
{
	atomic_store(&px.reject, cm_status);
}

void relay_bad_accept(int how)
{
	atomic_store(&px.bad_accept, how);
}

void relay_hold(bool hold)
{
	atomic_store(&px.hold, hold);
}

void relay_delay_connect(unsigned ms)
{
	atomic_store(&px.delay_ms, ms);
}

unsigned relay_delayed(void)
{
	return atomic_load(&px.delayed);
}

unsigned relay_accepted(void)
{
	return atomic_load(&px.accepted);
}
