/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA host transport (lib/transport/rdma) as a user drives it: unvme_ctrlr_open on an
 * nvme-rdma:// id, against our own target (lib/target with an "rdma:" listener) over the fake
 * verbs (rv_fake, chosen with rv_set_default: no RDMA device is needed), in one process:
 *   - device ids: the keys nvme-tcp:// shares, TLS and digests refused, bad ids named;
 *   - an id without an NQN: the discovery controller, its log's RDMA entries;
 *   - the controller through the fabric (identify, features, logs, properties), block I/O of
 *     sizes across the in-capsule / keyed paths, compare, a device's status passed through,
 *     DMA memory registered once, a full queue, a split queue pair driven from two threads;
 *   - a host not on the allow-list and an unknown subsystem refused at Connect; DH-HMAC-CHAP
 *     (both ways, on every queue; a wrong key either way and a missing one refused);
 *   - keep alive holding an idle association;
 *   - through a relay between host and target (the fake's keys are the fabric's, so a relay
 *     can pass capsules on while the target moves data with the host's keys): a cut
 *     connection and the reconnect, a target gone for longer than ctrl_loss_tmo (the
 *     controller stays failed), and a target that lies (a CM reject, an accept with no
 *     NVMe/RDMA private data or too small a queue, a response for a command not in flight or
 *     of the wrong length, a response that never comes).
 * Threaded (the target's pollers, the relay, keep alive): TSan runs it too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "fabrics_off_poll.h"
#include "unvme/unvme.h"
#include "unvme/spec/cmd.h"
#include "unvme/spec/rdma.h"
#include "unvme/spec/status.h"
#include "lib/fabrics/dhchap.h"
#include "lib/driver/transport.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/verbs_fake.h"
#include "lib/target/target.h"
#include "lib/transport/rdma/rdma_ctrlr.h"
#include "lib/transport/tcp/tcp_params.h"

#define NQN "nqn.2024-01.io.unvme.test:rdma-host"
#define HOST_OK "nqn.2014-08.io.unvme.test:rdma-host-ok"
#define HOST_NO "nqn.2014-08.io.unvme.test:rdma-host-no"
#define ADDR "10.9.9.9"
#define GUARD_MS 10000 /* hang guard */

/* ---- the target ---- */

static struct unvme_target *tgt;
static unsigned tgt_port;

static int target_up_auth(const char *secret, const char *ctrl_secret, const char *dhgroup)
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

static int target_up(void)
{
	return target_up_auth(NULL, NULL, NULL);
}

static void target_down(void)
{
	unvme_target_stop(tgt);
	tgt = NULL;
}

static int open_at(unsigned port, const char *host, const char *query, const struct unvme_ctrlr_opts *o,
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

static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

/* ---- a relay between host and target, and its lies ---- */

enum lie {
	LIE_NONE,
	LIE_CID_IDLE,      /* the next I/O response names a command id that is not in flight */
	LIE_CID_RANGE,     /* ... one past every id of the queue */
	LIE_LONG,          /* ... is 20 bytes */
	LIE_SHORT,         /* ... is 8 bytes */
	LIE_DROP,          /* ... never comes */
};

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

/* The relay's port, 0 on failure. */
static unsigned px_start(void)
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

static void px_stop(void)
{
	atomic_store(&px.stop, true);
	pthread_join(px.th, NULL);
	rv_listen_close(px.l);
}

/* ---- tests ---- */

static void test_device_ids(void)
{
	struct nvmf_params p;
	CHECK_EQ(rdma_params_parse("nvme-rdma://10.0.0.1/" NQN, &p), 0);
	CHECK_STREQ(p.port, "4420");
	CHECK_STREQ(p.host, "10.0.0.1");
	CHECK_STREQ(p.subnqn, NQN);
	CHECK_EQ(rdma_params_parse("nvme-rdma://[fe80::1]:4421/" NQN "?hostnqn=" HOST_OK
				   "&kato=700&ctrl_loss_tmo=900&reconnect_delay=50&incapsule=0", &p), 0);
	CHECK_STREQ(p.host, "fe80::1");
	CHECK_STREQ(p.port, "4421");
	CHECK_STREQ(p.hostnqn, HOST_OK);
	CHECK_EQ(p.kato_ms, 700);
	CHECK_EQ(p.ctrl_loss_tmo_ms, 900);
	CHECK_EQ(p.reconnect_delay_ms, 50);
	CHECK_EQ(p.incapsule, 0);
	/* no subsystem NQN: the discovery controller, on the NVMe/RDMA port (nvme-tcp:// keeps
	 * its 8009), no keep alive */
	static const char *const disc[] = {"nvme-rdma://10.0.0.1", "nvme-rdma://10.0.0.1/",
					   ("nvme-rdma://10.0.0.1/" NVMF_DISCOVERY_NQN)};
	for (size_t i = 0; i < sizeof(disc) / sizeof(disc[0]); i++) {
		CHECK_EQ(rdma_params_parse(disc[i], &p), 0);
		CHECK(p.discovery);
		CHECK_STREQ(p.subnqn, NVMF_DISCOVERY_NQN);
		CHECK_STREQ(p.port, "4420");
		CHECK_EQ(p.kato_ms, 0);
	}
	CHECK_EQ(rdma_params_parse("nvme-rdma://10.0.0.1:4421", &p), 0);
	CHECK(p.discovery);
	CHECK_STREQ(p.port, "4421");
	/* bad ids: refused before anything is reached, with the scheme and the part named */
	static const struct {
		const char *id, *says;
	} bad[] = {
		{"nvme-rdma://h/" NQN "?tls=1", "nvme-rdma option tls: NVMe/RDMA has no TLS"},
		{"nvme-rdma://h/" NQN "?tls_key=NVMeTLSkey-1:01:x:", "has no TLS"},
		{"nvme-rdma://h/" NQN "?hdgst=1", "nvme-rdma option hdgst: NVMe/RDMA has no digests"},
		{"nvme-rdma://h/" NQN "?bogus=1", "nvme-rdma option 'bogus' is unknown"},
		{"nvme-rdma://h/" NQN "?kato=x", "nvme-rdma option kato=x: expected a number"},
		{"nvme-rdma://:4420/" NQN, "no host (nvme-rdma://HOST:PORT/NQN)"},
		{"nvme-rdma://h:99999/" NQN, "port 99999 is outside 1..65535"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct unvme_ctrlr *c = NULL;
		CHECK_EQ(unvme_ctrlr_open(bad[i].id, NULL, &c), -EINVAL);
		CHECK(c == NULL);
		if (!strstr(unvme_errmsg(), bad[i].says)) {
			fprintf(stderr, "  %s: '%s' does not say '%s'\n", bad[i].id, unvme_errmsg(), bad[i].says);
			CHECK(0);
		}
	}
	/* nvme-tcp:// messages still name nvme-tcp, and keep TLS */
	struct tcp_params tp;
	CHECK_EQ(tcp_params_parse("nvme-tcp://h/" NQN "?bogus=1", &tp), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "nvme-tcp option 'bogus' is unknown") != NULL);
	CHECK_EQ(tcp_params_parse("nvme-tcp://h", &tp), 0);
	CHECK(tp.nvmf.discovery);
	CHECK_STREQ(tp.nvmf.port, "8009");
	/* the scheme is listed */
	CHECK(strstr(unvme_transport_schemes(), "nvme-rdma://") != NULL);
}

/* The DMA chunk table (rdma_mr.c): a buffer finds its chunk's region only when it lies wholly
 * inside one, on the protection domain the region was registered in. */
static void test_chunk_table(void)
{
	struct rv_listener *l;
	REQUIRE(rv_fake.listen(&rv_fake, ADDR, "0", &l) == 0);
	char port[8];
	snprintf(port, sizeof(port), "%u", l->port);
	struct rv_qp_caps caps = {.send_depth = 4, .recv_depth = 4, .max_sge = 1};
	struct rv_ep *ep;
	REQUIRE(rv_fake.ep_create(&rv_fake, ADDR, port, &caps, 1000, &ep) == 0);
	static struct rdma_ctrlr rc;
	memset(&rc, 0, sizeof(rc));
	pthread_rwlock_init(&rc.mr_lock, NULL);
	rc.pd = ep->pd;
	static uint8_t mem[3][8192];
	unsigned mrs = rv_fake_live_mrs();
	/* out of address order, as chunks come */
	CHECK_EQ(rdma_mr_map(&rc, mem[2], 0x30000, sizeof(mem[2])), 0);
	CHECK_EQ(rdma_mr_map(&rc, mem[0], 0x10000, sizeof(mem[0])), 0);
	CHECK_EQ(rdma_mr_map(&rc, mem[1], 0x20000, 4096), 0); /* half of mem[1] */
	CHECK_EQ(rv_fake_live_mrs(), mrs + 3);
	struct rv_mr *m0 = rdma_mr_find(&rc, ep->pd, mem[0], 8192);
	REQUIRE(m0);
	CHECK(m0->addr == mem[0] && m0->len == 8192);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[0] + 4096, 4096) == m0);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[0] + 8191, 1) == m0);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[0] + 4096, 4097) == NULL); /* past its end */
	CHECK(rdma_mr_find(&rc, ep->pd, mem[1], 4096) != NULL);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[1] + 4096, 512) == NULL);   /* outside every chunk */
	CHECK(rdma_mr_find(&rc, ep->pd, mem[1] + 2048, 4096) == NULL);  /* straddles the end */
	CHECK(rdma_mr_find(&rc, ep->pd, mem[2] + 100, 8000) != NULL);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[0] + 8000, 300) == NULL);   /* spans two chunks */
	struct rv_pd other = {.ops = &rv_fake};
	CHECK(rdma_mr_find(&rc, &other, mem[0], 512) == NULL); /* another device's domain */
	rdma_mr_unmap(&rc, 0x20000, 4096);
	CHECK(rdma_mr_find(&rc, ep->pd, mem[1], 4096) == NULL);
	CHECK_EQ(rv_fake_live_mrs(), mrs + 2);
	rdma_mr_fini(&rc);
	CHECK_EQ(rv_fake_live_mrs(), mrs);
	pthread_rwlock_destroy(&rc.mr_lock);
	rv_ep_destroy(ep);
	rv_listen_close(l);
}

static void test_controller_admin_and_io(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(tgt_port, HOST_OK, NULL, NULL, &c) == 0);
	CHECK_STREQ(unvme_ctrlr_transport(c), "rdma");
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	CHECK_STREQ(id->subnqn, NQN);
	CHECK(unvme_ctrlr_max_io_queues(c) >= 1);
	struct nvme_regs_snapshot r;
	unvme_ctrlr_regs(c, &r); /* registers are properties */
	CHECK(r.csts & NVME_CSTS_RDY);
	CHECK(r.cc & NVME_CC_EN);
	uint32_t v = 0;
	CHECK_EQ(unvme_get_features(c, NVME_FEAT_NUM_QUEUES, 0, 0, &v), 0);
	CHECK_EQ((v & 0xffff) + 1, unvme_ctrlr_max_io_queues(c));
	struct nvme_smart_log smart;
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_SMART, 0xffffffffu, &smart, sizeof(smart), 0), 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	REQUIRE(ns);
	CHECK_EQ(unvme_ns_lba_size(ns), 512);
	CHECK_EQ(unvme_ns_nlbas(ns), (16u << 20) / 512);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	/* DMA memory is registered with the device once, when the driver takes it in */
	unsigned mrs = rv_fake_live_mrs();
	void *big = unvme_dma_alloc(32u << 20, 4096);
	REQUIRE(big);
	CHECK(rv_fake_live_mrs() > mrs);
	unvme_dma_free(big);
	uint32_t maxio = unvme_ctrlr_max_xfer(c);
	REQUIRE(maxio >= 65536);
	uint8_t *w = unvme_dma_alloc(maxio, 4096), *b = unvme_dma_alloc(maxio, 4096);
	REQUIRE(w && b);
	/* in the capsule (up to the target's 8 KiB), keyed past it, up to the transfer limit */
	const uint32_t sizes[] = {512, 4096, 8192, 8704, 65536, maxio};
	uint64_t lba = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t nlb = sizes[i] / 512;
		fill(w, sizes[i], (unsigned)i + 1);
		memset(b, 0, sizes[i]);
		CHECK_EQ(unvme_write_sync(ns, qp, w, lba, nlb), 0);
		CHECK_EQ(unvme_read_sync(ns, qp, b, lba, nlb), 0);
		CHECK(memcmp(w, b, sizes[i]) == 0);
		CHECK_EQ(unvme_compare_sync(ns, qp, w, lba, nlb), 0);
		lba += nlb;
	}
	/* a device's status comes back as it is */
	w[0] ^= 0xff;
	CHECK_EQ(unvme_compare_sync(ns, qp, w, 0, 1), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	CHECK_EQ(unvme_read_sync(ns, qp, b, unvme_ns_nlbas(ns), 1),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(unvme_write_zeroes_sync(ns, qp, 0, 8), 0);
	CHECK_EQ(unvme_read_sync(ns, qp, b, 0, 8), 0);
	CHECK(b[0] == 0 && b[4095] == 0);
	CHECK_EQ(unvme_flush_sync(ns, qp), 0);
	CHECK(unvme_ctrlr_reset_count(c) == 0);
	unvme_dma_free(w);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u); /* every endpoint and region of the host let go */
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

/* The discovery controller over RDMA: an id without an NQN reaches the target's discovery
 * subsystem, which keeps to its admin queue and lists the subsystem at the address and port
 * the host reached, as an RDMA entry (RDMA Transport Specification Figure 3's TSAS). */
static void test_discovery_controller(void)
{
	REQUIRE(target_up() == 0);
	char id[256];
	snprintf(id, sizeof(id), "nvme-rdma://" ADDR ":%u?hostnqn=" HOST_OK, tgt_port);
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	const struct nvme_id_ctrl *idc = unvme_ctrlr_identify_data(c);
	CHECK_STREQ(idc->subnqn, NVMF_DISCOVERY_NQN);
	CHECK_EQ(idc->cntrltype, NVME_CTRL_TYPE_DISCOVERY);
	CHECK(unvme_ctrlr_first_nsid(c) == 0);
	uint8_t log[4096];
	memset(log, 0xee, sizeof(log));
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, log, sizeof(log), 0), 0);
	const struct nvmf_disc_log_hdr *h = (const void *)log;
	REQUIRE(h->numrec == 2); /* the discovery subsystem itself and NQN */
	const struct nvmf_disc_log_entry *e = (const void *)(log + sizeof(*h));
	char port[16];
	snprintf(port, sizeof(port), "%u", tgt_port);
	bool seen_nvm = false, seen_disc = false;
	for (int i = 0; i < 2; i++) {
		const struct nvmf_rdma_tsas *ts = (const void *)e[i].tsas;
		CHECK_EQ(e[i].trtype, NVMF_TRTYPE_RDMA);
		CHECK_EQ(e[i].adrfam, NVMF_ADRFAM_IPV4);
		CHECK_STREQ(e[i].traddr, ADDR);
		CHECK_STREQ(e[i].trsvcid, port);
		CHECK_EQ(ts->qptype, NVMF_RDMA_QPTYPE_CONNECTED);
		CHECK_EQ(ts->prtype, NVMF_RDMA_PRTYPE_NOT_SPECIFIED);
		CHECK_EQ(ts->cms, NVMF_RDMA_CMS_RDMA_CM);
		if (e[i].subtype == NVMF_SUBTYPE_NVME && !strcmp(e[i].subnqn, NQN))
			seen_nvm = true;
		if (e[i].subtype == NVMF_SUBTYPE_DISCOVERY_CURRENT && !strcmp(e[i].subnqn, NVMF_DISCOVERY_NQN))
			seen_disc = true;
	}
	CHECK(seen_nvm && seen_disc);
	unvme_ctrlr_close(c);
	/* a host not on the allow-list may ask, and is shown nothing but discovery itself */
	snprintf(id, sizeof(id), "nvme-rdma://" ADDR ":%u/?hostnqn=" HOST_NO, tgt_port);
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, log, sizeof(log), 0), 0);
	CHECK_EQ(h->numrec, 1);
	CHECK_EQ(e[0].subtype, NVMF_SUBTYPE_DISCOVERY_CURRENT);
	unvme_ctrlr_close(c);
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

/* Every write's data by RDMA READ (incapsule=0), every size read back; a small admin queue. */
static void test_io_without_incapsule(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	o.admin_queue_depth = 8;
	struct unvme_ctrlr *c;
	REQUIRE(open_at(tgt_port, HOST_OK, "incapsule=0", &o, &c) == 0);
	uint32_t v = 0;
	CHECK_EQ(unvme_get_features(c, NVME_FEAT_NUM_QUEUES, 0, 0, &v), 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(65536, 4096), *b = unvme_dma_alloc(65536, 4096);
	REQUIRE(w && b);
	const uint32_t sizes[] = {512, 4096, 8192, 65536};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(w, sizes[i], (unsigned)i + 11);
		memset(b, 0, sizes[i]);
		CHECK_EQ(unvme_write_sync(ns, qp, w, 1024, sizes[i] / 512), 0);
		CHECK_EQ(unvme_read_sync(ns, qp, b, 1024, sizes[i] / 512), 0);
		CHECK(memcmp(w, b, sizes[i]) == 0);
	}
	unvme_dma_free(w);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	target_down();
}

/* Many commands in flight at once on one queue: a full ring of reads and writes. */
struct qd_state {
	_Atomic int done, bad;
};

static void qd_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct qd_state *s = arg;
	if (NVME_CQE_SC(cpl->status) || NVME_CQE_SCT(cpl->status))
		atomic_fetch_add(&s->bad, 1);
	atomic_fetch_add(&s->done, 1);
}

static void test_deep_queue(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(tgt_port, HOST_OK, NULL, NULL, &c) == 0);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts qo = {.depth = 64};
	REQUIRE(unvme_qpair_create(c, &qo, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	enum { N = 63, BS = 16384 };
	uint8_t *w = unvme_dma_alloc((size_t)N * BS, 4096), *b = unvme_dma_alloc((size_t)N * BS, 4096);
	REQUIRE(w && b);
	fill(w, (size_t)N * BS, 9);
	memset(b, 0, (size_t)N * BS);
	struct qd_state s = {0};
	for (int i = 0; i < N; i++)
		CHECK_EQ(unvme_write(ns, qp, w + (size_t)i * BS, (uint64_t)i * (BS / 512), BS / 512, qd_cb, &s), 0);
	uint64_t end = test_now_ms() + GUARD_MS;
	while (atomic_load(&s.done) < N && test_now_ms() < end)
		unvme_qpair_poll(qp, 0);
	CHECK_EQ(atomic_load(&s.done), N);
	s.done = 0;
	for (int i = 0; i < N; i++)
		CHECK_EQ(unvme_read(ns, qp, b + (size_t)i * BS, (uint64_t)i * (BS / 512), BS / 512, qd_cb, &s), 0);
	while (atomic_load(&s.done) < N && test_now_ms() < end)
		unvme_qpair_poll(qp, 0);
	CHECK_EQ(atomic_load(&s.done), N);
	CHECK_EQ(atomic_load(&s.bad), 0);
	CHECK(memcmp(w, b, (size_t)N * BS) == 0);
	unvme_dma_free(w);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	target_down();
}

/* A split queue pair: one thread submits (the doorbell sends capsules), another polls (the
 * pump takes responses), as the KV SDK's completion threads do. */
struct split_run {
	struct unvme_qpair *qp;
	struct qd_state d;
	_Atomic bool stop;
};

static void *split_poller(void *arg)
{
	struct split_run *s = arg;
	while (!atomic_load(&s->stop))
		unvme_qpair_poll(s->qp, 0);
	return NULL;
}

static void test_split_queue(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(tgt_port, HOST_OK, NULL, NULL, &c) == 0);
	struct unvme_qpair_opts o = {.depth = 32, .split = true};
	struct split_run s = {0};
	REQUIRE(unvme_qpair_create(c, &o, &s.qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096 * 32, 4096);
	REQUIRE(buf);
	fill(buf, 4096 * 32, 3);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, split_poller, &s) == 0);
	enum { TOTAL = 1000 };
	uint64_t end = test_now_ms() + GUARD_MS;
	for (int i = 0; i < TOTAL && test_now_ms() < end;) {
		uint8_t *b = buf + (size_t)(i % 32) * 4096;
		/* writes of 4 KiB go in the capsule, reads are keyed */
		int rc = i % 2 ? unvme_read(ns, s.qp, b, (uint64_t)(i % 32) * 8, 8, qd_cb, &s.d)
			       : unvme_write(ns, s.qp, b, (uint64_t)(i % 32) * 8, 8, qd_cb, &s.d);
		if (rc == -EAGAIN) {
			unvme_qpair_ring(s.qp);
			continue;
		}
		CHECK_EQ(rc, 0);
		if (rc)
			break;
		if (i % 7 == 0)
			unvme_qpair_ring(s.qp);
		i++;
	}
	unvme_qpair_ring(s.qp);
	while (atomic_load(&s.d.done) < TOTAL && test_now_ms() < end)
		test_sleep_ms(1);
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&s.d.done), TOTAL);
	CHECK_EQ(atomic_load(&s.d.bad), 0);
	unvme_dma_free(buf);
	unvme_qpair_destroy(s.qp);
	unvme_ctrlr_close(c);
	target_down();
}

static void test_allow_list_and_unknown_subsystem_refused(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr *c;
	int rc = open_at(tgt_port, HOST_NO, NULL, NULL, &c);
	CHECK(rc != 0);
	CHECK(c == NULL);
	CHECK(strstr(unvme_errmsg(), "Connect") != NULL || strstr(unvme_errmsg(), "refused") != NULL);
	char id[256];
	snprintf(id, sizeof(id), "nvme-rdma://" ADDR ":%u/nqn.2024-01.io.unvme.test:none?hostnqn=" HOST_OK,
		 tgt_port);
	CHECK(unvme_ctrlr_open(id, NULL, &c) != 0);
	CHECK(c == NULL);
	/* nobody listening on the port */
	snprintf(id, sizeof(id), "nvme-rdma://" ADDR ":%u/" NQN "?connect_timeout=500", tgt_port + 1000);
	CHECK(unvme_ctrlr_open(id, NULL, &c) < 0);
	CHECK(strstr(unvme_errmsg(), ADDR) != NULL);
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

static char *new_key(void)
{
	struct dhchap_key k = {.len = 32};
	dhchap_random(k.key, k.len);
	char *s = malloc(256);
	if (s)
		dhchap_key_format(&k, s, 256);
	return s;
}

/* DH-HMAC-CHAP over RDMA: the fabrics layer's, on every queue of the association. */
static void test_dhchap(void)
{
	char *hk = new_key(), *ck = new_key(), *bad = new_key();
	REQUIRE(hk && ck && bad);
	REQUIRE(target_up_auth(hk, ck, "ffdhe2048") == 0);
	char q[1200];
	struct unvme_ctrlr *c;
	snprintf(q, sizeof(q), "dhchap_secret=%s&dhchap_ctrl_secret=%s", hk, ck);
	CHECK_EQ(open_at(tgt_port, HOST_OK, q, NULL, &c), 0);
	if (c) {
		/* the I/O queues authenticate too */
		struct unvme_qpair *qp;
		CHECK_EQ(unvme_qpair_create(c, NULL, &qp), 0);
		uint8_t *b = unvme_dma_zalloc(4096, 4096);
		CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 8), 0);
		unvme_dma_free(b);
		unvme_qpair_destroy(qp);
		unvme_ctrlr_close(c);
	}
	snprintf(q, sizeof(q), "dhchap_secret=%s", bad);
	CHECK(open_at(tgt_port, HOST_OK, q, NULL, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "refused the host") != NULL);
	snprintf(q, sizeof(q), "dhchap_secret=%s&dhchap_ctrl_secret=%s", hk, bad);
	CHECK(open_at(tgt_port, HOST_OK, q, NULL, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "did not prove") != NULL);
	CHECK(open_at(tgt_port, HOST_OK, NULL, NULL, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "requires DH-HMAC-CHAP") != NULL);
	target_down();
	free(hk);
	free(ck);
	free(bad);
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

static void test_keep_alive_holds_an_idle_association(void)
{
	REQUIRE(target_up() == 0);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(tgt_port, HOST_OK, "kato=400", NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_alloc(4096, 4096);
	REQUIRE(b);
	/* three keep-alive timeouts without a command of ours: the target would end it */
	test_sleep_ms(1300);
	CHECK_EQ(unvme_read_sync(ns, qp, b, 0, 8), 0);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0u);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	target_down();
}

/* Retries a synchronous command while the association comes back. */
static int sync_retry(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf, uint64_t lba, bool write,
		      int *failures)
{
	uint64_t end = test_now_ms() + GUARD_MS;
	int rc;
	do {
		rc = write ? unvme_write_sync(ns, qp, buf, lba, 8) : unvme_read_sync(ns, qp, buf, lba, 8);
		if (rc)
			(*failures)++;
	} while (rc && test_now_ms() < end);
	return rc;
}

static void test_reconnect_after_a_lost_connection(void)
{
	REQUIRE(target_up() == 0);
	unsigned port = px_start();
	REQUIRE(port);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(port, HOST_OK, "kato=1000&reconnect_delay=20", NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	int failures = 0;
	for (int round = 0; round < 3; round++) {
		memset(w, 0x30 + round, 4096);
		CHECK_EQ(sync_retry(ns, qp, w, (uint64_t)round * 8, true, &failures), 0);
		unsigned before = atomic_load(&px.accepted);
		atomic_store(&px.cut, 1);
		/* the next commands fail (Host Pathing Error) until the association is back */
		memset(r, 0, 4096);
		CHECK_EQ(sync_retry(ns, qp, r, (uint64_t)round * 8, false, &failures), 0);
		CHECK(memcmp(w, r, 4096) == 0);
		CHECK(atomic_load(&px.accepted) >= before + 2); /* a new admin and a new I/O connection */
	}
	CHECK(unvme_ctrlr_reset_count(c) >= 3);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	px_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

/* The target refuses every reconnect: after ctrl_loss_tmo the controller stays failed, its
 * commands fail at once, and closing it leaves nothing behind. */
static void test_reconnect_gives_up_after_ctrl_loss_tmo(void)
{
	REQUIRE(target_up() == 0);
	unsigned port = px_start();
	REQUIRE(port);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(port, HOST_OK, "ctrl_loss_tmo=300&reconnect_delay=20", NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_alloc(4096, 4096);
	REQUIRE(b);
	CHECK_EQ(unvme_read_sync(ns, qp, b, 0, 8), 0);
	unsigned before = atomic_load(&px.accepted);
	atomic_store(&px.reject, NVME_RDMA_CM_NO_RSC);
	atomic_store(&px.cut, 1);
	uint64_t t0 = test_now_ms(), end = t0 + GUARD_MS;
	/* the reconnect runs off the poll (the commands fail at once meanwhile) until it gives
	 * up: then the controller stays failed and says so */
	bool gave_up = false;
	while (!gave_up && test_now_ms() < end) {
		CHECK(unvme_read_sync(ns, qp, b, 0, 8) != 0);
		gave_up = unvme_ctrlr_is_failed(c) && strstr(unvme_errmsg(), "controller has failed");
		if (!gave_up)
			test_sleep_ms(10);
	}
	CHECK(gave_up);
	CHECK(unvme_ctrlr_is_failed(c));
	/* it kept trying for ctrl_loss_tmo (reconnect_delay apart), not forever */
	CHECK(test_now_ms() - t0 >= 300);
	CHECK_EQ(atomic_load(&px.accepted), before);
	CHECK(unvme_read_sync(ns, qp, b, 0, 8) != 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	px_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

/* One lie in an I/O response: the read it answers fails (never success with data that did
 * not come), the connection ends, the association comes back and the data is intact. */
static void lie_case(int lie, uint32_t io_timeout_ms)
{
	REQUIRE(target_up() == 0);
	unsigned port = px_start();
	REQUIRE(port);
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	if (io_timeout_ms)
		o.io_timeout_ms = io_timeout_ms;
	struct unvme_ctrlr *c;
	REQUIRE(open_at(port, HOST_OK, "reconnect_delay=20", &o, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(65536, 4096), *r = unvme_dma_alloc(65536, 4096);
	REQUIRE(w && r);
	fill(w, 65536, 5);
	CHECK_EQ(unvme_write_sync(ns, qp, w, 0, 128), 0);
	atomic_store(&px.lie, lie);
	memset(r, 0, 65536);
	int rc = unvme_read_sync(ns, qp, r, 0, 128);
	CHECK(rc != 0); /* the lie is never a success */
	CHECK_EQ(atomic_load(&px.lie), LIE_NONE);
	int failures = 0;
	CHECK_EQ(sync_retry(ns, qp, r, 0, false, &failures), 0);
	unvme_read_sync(ns, qp, r, 0, 128);
	CHECK(memcmp(w, r, 65536) == 0);
	CHECK(unvme_ctrlr_reset_count(c) >= 1);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	px_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

static void test_a_response_for_a_command_not_in_flight(void)
{
	lie_case(LIE_CID_IDLE, 0);
}

static void test_a_response_naming_no_command_of_the_queue(void)
{
	lie_case(LIE_CID_RANGE, 0);
}

static void test_a_response_of_the_wrong_length(void)
{
	lie_case(LIE_LONG, 0);
	lie_case(LIE_SHORT, 0);
}

static void test_a_response_that_never_comes(void)
{
	lie_case(LIE_DROP, 300);
}

static void test_cm_rejects_and_bad_accepts(void)
{
	REQUIRE(target_up() == 0);
	unsigned port = px_start();
	REQUIRE(port);
	struct unvme_ctrlr *c;
	atomic_store(&px.reject, NVME_RDMA_CM_INVALID_HSQSIZE);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -ECONNREFUSED);
	CHECK(strstr(unvme_errmsg(), "refused queue 0") != NULL);
	CHECK(strstr(unvme_errmsg(), nvrdma_cm_status_name(NVME_RDMA_CM_INVALID_HSQSIZE)) != NULL);
	atomic_store(&px.reject, 0);
	atomic_store(&px.bad_accept, 1);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -EPROTO);
	CHECK(strstr(unvme_errmsg(), "not NVMe/RDMA's") != NULL);
	atomic_store(&px.bad_accept, 2);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -EPROTO);
	CHECK(strstr(unvme_errmsg(), "takes 2 commands") != NULL);
	/* and then a proper one */
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), 0);
	unvme_ctrlr_close(c);
	px_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

__attribute__((constructor)) static void setup(void)
{
	setenv("UNVME_MP", "0", 0);
	rv_set_default(&rv_fake); /* the host transport's verbs: the fake fabric of this process */
}

/* ---- the recovery off the poll (fabrics_off_poll.h) ---- */


static void px_hold_cb(void *arg, bool on)
{
	atomic_store(&px.hold, on);
}

static void px_cut_cb(void *arg)
{
	atomic_store(&px.delay_ms, OFF_POLL_DELAY_MS);
	atomic_store(&px.cut, 1);
	while (atomic_load(&px.cut))
		test_sleep_ms(1);
}

/* Every connection cut under I/O, each new one's Connect answered 600 ms late: no poll or
 * submit of the application waits for it, the reads in flight complete once, I/O resumes. */
static void test_reconnect_never_waits_in_a_poll(void)
{
	REQUIRE(target_up() == 0);
	unsigned port = px_start();
	REQUIRE(port);
	struct unvme_ctrlr *c;
	REQUIRE(open_at(port, HOST_OK, "kato=0&reconnect_delay=20", NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *pattern = unvme_dma_alloc(4096, 4096);
	REQUIRE(pattern);
	fill(pattern, 4096, 9);
	REQUIRE(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, pattern, 0, 8) == 0);
	struct off_poll_result r;
	off_poll_run(c, qp, pattern, px_hold_cb, px_cut_cb, NULL, &r);
	fprintf(stderr, "  %u polls, slowest %llu us, I/O back after %llu ms, %u Connects held %u ms\n",
		r.polls, (unsigned long long)r.slowest_us, (unsigned long long)r.recovered_ms,
		atomic_load(&px.delayed), OFF_POLL_DELAY_MS);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	CHECK(atomic_load(&px.delayed) >= 2); /* the admin and the I/O connection's */
	CHECK(r.recovered_ms >= OFF_POLL_DELAY_MS);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(pattern);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	px_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

TEST_MAIN(TEST(test_device_ids),
	  TEST(test_chunk_table),
	  TEST(test_controller_admin_and_io),
	  TEST(test_io_without_incapsule),
	  TEST(test_deep_queue),
	  TEST(test_split_queue),
	  TEST(test_allow_list_and_unknown_subsystem_refused),
	  TEST(test_discovery_controller),
	  TEST(test_dhchap),
	  TEST(test_keep_alive_holds_an_idle_association),
	  TEST(test_reconnect_after_a_lost_connection),
	  TEST(test_reconnect_gives_up_after_ctrl_loss_tmo),
	  TEST(test_reconnect_never_waits_in_a_poll),
	  TEST(test_a_response_for_a_command_not_in_flight),
	  TEST(test_a_response_naming_no_command_of_the_queue),
	  TEST(test_a_response_of_the_wrong_length),
	  TEST(test_a_response_that_never_comes),
	  TEST(test_cm_rejects_and_bad_accepts))
