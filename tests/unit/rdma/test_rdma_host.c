/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA host transport (lib/transport/rdma) as a user drives it: unvme_ctrlr_open on an
 * nvme-rdma:// id, against our own target (lib/target with an "rdma:" listener) over the fake
 * verbs (rdma_env.h: no RDMA device is needed), in one process:
 *   - device ids: the keys nvme-tcp:// shares, TLS and digests refused, bad ids named;
 *   - an id without an NQN: the discovery controller, its log's RDMA entries;
 *   - the controller through the fabric (identify, features, logs, properties), block I/O of
 *     sizes across the in-capsule / keyed paths, compare, a device's status passed through,
 *     DMA memory registered once, a full queue, a split queue pair driven from two threads;
 *   - a host not on the allow-list and an unknown subsystem refused at Connect; DH-HMAC-CHAP
 *     (both ways, on every queue; a wrong key either way and a missing one refused);
 *   - keep alive holding an idle association.
 * The reconnects and a target that lies, through the relay: test_rdma_recovery.c.
 * Threaded (the target's pollers, keep alive): TSan runs it too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "fabrics_io.h"
#include "rdma_env.h"
#include "unvme/unvme.h"
#include "unvme/spec/cmd.h"
#include "unvme/spec/rdma.h"
#include "unvme/spec/status.h"
#include "lib/fabrics/dhchap.h"
#include "lib/driver/transport.h"
#include "lib/fabrics/rdma/verbs_fake.h"
#include "lib/transport/rdma/rdma_ctrlr.h"
#include "lib/transport/tcp/tcp_params.h"

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
	fabrics_io_sizes(ns, qp, w, b, sizes, sizeof(sizes) / sizeof(sizes[0]));
	/* a device's status comes back as it is */
	fabrics_device_statuses(ns, qp, w, b);
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
		fabrics_fill(w, sizes[i], (unsigned)i + 11);
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
	fabrics_fill(w, (size_t)N * BS, 9);
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
	fabrics_fill(buf, 4096 * 32, 3);
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

TEST_MAIN(TEST(test_device_ids),
	  TEST(test_chunk_table),
	  TEST(test_controller_admin_and_io),
	  TEST(test_io_without_incapsule),
	  TEST(test_deep_queue),
	  TEST(test_split_queue),
	  TEST(test_allow_list_and_unknown_subsystem_refused),
	  TEST(test_discovery_controller),
	  TEST(test_dhchap),
	  TEST(test_keep_alive_holds_an_idle_association))
