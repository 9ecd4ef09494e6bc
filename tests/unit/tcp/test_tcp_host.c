/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP host against the target, in one process over 127.0.0.1: the controller seen
 * through the fabric, I/O of every size across the in-capsule / R2T / C2H paths, with and
 * without digests, deep queues, a split queue pair driven from two threads, KV vendor
 * commands with long keys (the key travels in the capsule), device statuses passed through,
 * and the discovery log; the I/O cases again over TLS (a second target that requires it).
 * Threaded: run under TSan too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "fabrics_io.h"
#include "tcp_env.h"
#include "test_util.h"

#define NQN "nqn.2024-01.io.unvme.test:host"
#define MAXIO (2u << 20)

#define TLS_HOST "nqn.2014-08.io.unvme.test:tls-host"
#define TLS_KEY "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"

static struct unvme_target *tgt, *tls_tgt;
static uint16_t port, tls_port;
static bool over_tls; /* the tests' connections go to the TLS target */

static void devid(char *out, size_t len, const char *query)
{
	if (over_tls)
		snprintf(out, len, "nvme-tcp://127.0.0.1:%u/%s?hostnqn=%s&tls_key=%s%s%s", tls_port, NQN,
			 TLS_HOST, TLS_KEY, query ? "&" : "", query ? query : "");
	else
		snprintf(out, len, "nvme-tcp://127.0.0.1:%u/%s%s%s", port, NQN, query ? "?" : "",
			 query ? query : "");
}

static struct unvme_ctrlr *open_ctrlr(const char *query)
{
	char id[512];
	devid(id, sizeof(id), query);
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open(id, NULL, &c);
	if (rc)
		fprintf(stderr, "  open %s: %s\n", id, unvme_errmsg());
	return c;
}

static void test_controller(void)
{
	struct unvme_ctrlr *c = open_ctrlr(NULL);
	REQUIRE(c);
	CHECK_STREQ(unvme_ctrlr_transport(c), "tcp");
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	CHECK_EQ(id->cntrltype, NVME_CTRL_TYPE_IO);
	CHECK_STREQ(id->subnqn, NQN);
	CHECK_EQ(unvme_ctrlr_max_xfer(c), MAXIO);
	CHECK(unvme_ctrlr_max_io_queues(c) >= 1);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	REQUIRE(ns);
	CHECK_EQ(unvme_ns_lba_size(ns), 512);
	CHECK_EQ(unvme_ns_nlbas(ns), (64u << 20) / 512);
	/* registers are properties */
	struct nvme_regs_snapshot r;
	unvme_ctrlr_regs(c, &r);
	CHECK(r.csts & NVME_CSTS_RDY);
	CHECK(r.cc & NVME_CC_EN);
	CHECK_EQ(r.vs, NVME_VS(2, 0, 0));
	/* features and logs of the target controller */
	uint32_t v = 0;
	CHECK_EQ(unvme_get_features(c, NVME_FEAT_NUM_QUEUES, 0, 0, &v), 0);
	CHECK_EQ((v & 0xffff) + 1, unvme_ctrlr_max_io_queues(c));
	struct nvme_smart_log smart;
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_SMART, 0xffffffffu, &smart, sizeof(smart), 0), 0);
	unvme_ctrlr_close(c);
}

/* Writes and reads back transfers of sizes around every path boundary. */
static void io_sizes(const char *query)
{
	struct unvme_ctrlr *c = open_ctrlr(query);
	REQUIRE(c);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(MAXIO, 4096), *r = unvme_dma_alloc(MAXIO, 4096);
	REQUIRE(w && r);
	/* 8 KiB goes in the capsule, 8.5 KiB by R2T; 1 MiB is one H2C PDU, 2 MiB two */
	static const uint32_t sizes[] = {512, 4096, 8192, 8704, 65536, 131072, 1u << 20, MAXIO};
	fabrics_io_sizes(ns, qp, w, r, sizes, sizeof(sizes) / sizeof(sizes[0]));
	fabrics_device_statuses(ns, qp, w, r);
	CHECK_EQ(unvme_deallocate_sync(ns, qp, 8, 8), 0);
	CHECK_EQ(unvme_flush_sync(ns, qp), 0);
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_io_sizes(void)
{
	io_sizes(NULL);
}

static void test_io_sizes_digests(void)
{
	io_sizes("hdgst=1&ddgst=1");
}

static void test_io_sizes_without_incapsule(void)
{
	io_sizes("incapsule=0");
}

struct done {
	_Atomic int n;
	_Atomic int bad;
};

static void count_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct done *d = arg;
	if (cpl->status >> 1)
		atomic_fetch_add(&d->bad, 1);
	atomic_fetch_add(&d->n, 1);
}

static void test_deep_queue(void)
{
	struct unvme_ctrlr *c = open_ctrlr(NULL);
	REQUIRE(c);
	struct unvme_qpair_opts o = {.depth = 128};
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	enum { N = 127, SZ = 16384 };
	uint8_t *buf = unvme_dma_alloc((size_t)N * SZ, 4096), *back = unvme_dma_alloc((size_t)N * SZ, 4096);
	REQUIRE(buf && back);
	fabrics_fill(buf, (size_t)N * SZ, 9);
	struct done d = {0};
	for (int i = 0; i < N; i++)
		CHECK_EQ(unvme_write(ns, qp, buf + (size_t)i * SZ, (uint64_t)i * (SZ / 512), SZ / 512, count_cb, &d), 0);
	CHECK_EQ(unvme_write(ns, qp, buf, 0, 1, count_cb, &d), -EAGAIN); /* depth - 1 outstanding */
	uint64_t end = env_now_ms() + 20000;
	while (atomic_load(&d.n) < N && env_now_ms() < end)
		unvme_qpair_poll(qp, 0);
	CHECK_EQ(atomic_load(&d.n), N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(unvme_read(ns, qp, back + (size_t)i * SZ, (uint64_t)i * (SZ / 512), SZ / 512, count_cb, &d), 0);
	while (atomic_load(&d.n) < 2 * N && env_now_ms() < end)
		unvme_qpair_poll(qp, 0);
	CHECK_EQ(atomic_load(&d.n), 2 * N);
	CHECK_EQ(atomic_load(&d.bad), 0);
	CHECK(memcmp(buf, back, (size_t)N * SZ) == 0);
	unvme_dma_free(buf);
	unvme_dma_free(back);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* A split queue pair: one thread submits, another polls (the KV SDK's completion threads). */
struct split_run {
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint8_t *buf;
	struct done d;
	_Atomic bool stop;
	int total;
};

static void *poller(void *arg)
{
	struct split_run *s = arg;
	while (!atomic_load(&s->stop))
		unvme_qpair_poll(s->qp, 0);
	return NULL;
}

static void test_split_queue(void)
{
	struct unvme_ctrlr *c = open_ctrlr(NULL);
	REQUIRE(c);
	struct unvme_qpair_opts o = {.depth = 64, .split = true};
	struct split_run s = {.total = 2000};
	REQUIRE(unvme_qpair_create(c, &o, &s.qp) == 0);
	s.ns = unvme_ctrlr_ns(c, 1);
	s.buf = unvme_dma_alloc(4096 * 64, 4096);
	fabrics_fill(s.buf, 4096 * 64, 3);
	pthread_t th;
	pthread_create(&th, NULL, poller, &s);
	uint64_t end = env_now_ms() + 30000;
	for (int i = 0; i < s.total && env_now_ms() < end;) {
		bool read = i % 2;
		uint8_t *b = s.buf + (size_t)(i % 64) * 4096;
		int rc = read ? unvme_read(s.ns, s.qp, b, (uint64_t)(i % 64) * 8, 8, count_cb, &s.d)
			      : unvme_write(s.ns, s.qp, b, (uint64_t)(i % 64) * 8, 8, count_cb, &s.d);
		if (rc == -EAGAIN) {
			unvme_qpair_ring(s.qp);
			continue;
		}
		CHECK_EQ(rc, 0);
		if (rc)
			break;
		if (i % 7 == 0)
			unvme_qpair_ring(s.qp); /* the submitter sends some itself */
		i++;
	}
	while (atomic_load(&s.d.n) < s.total && env_now_ms() < end)
		;
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&s.d.n), s.total);
	CHECK_EQ(atomic_load(&s.d.bad), 0);
	unvme_dma_free(s.buf);
	unvme_qpair_destroy(s.qp);
	unvme_ctrlr_close(c);
}

/* KV vendor commands (what the KV SDK sends), keys up to 255 bytes. */
static int kvv(struct unvme_qpair *qp, uint8_t opc, uint8_t ks, const uint8_t *key, uint8_t klen,
	       void *keybuf, void *val, uint32_t vlen, uint32_t *dw0)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = opc;
	cmd.nsid = ks;
	cmd.cdw10 = (vlen + 3) / 4;
	cmd.cdw11 = NVME_KVV_CDW11(klen, 0, (4 - vlen % 4) % 4);
	if (klen <= 16) {
		uint32_t words[4] = {0};
		memcpy(words, key, klen);
		cmd.cdw12 = words[0];
		cmd.cdw13 = words[1];
		cmd.cdw14 = words[2];
		cmd.cdw15 = words[3];
	} else {
		memcpy(keybuf, key, klen);
		uint64_t iova = unvme_dma_iova(keybuf);
		cmd.cdw12 = (uint32_t)iova;
		cmd.cdw13 = (uint32_t)(iova >> 32);
	}
	struct nvme_cqe cpl;
	int rc = unvme_qpair_cmd_sync(qp, &cmd, vlen ? val : NULL, vlen ? ((vlen + 3) & ~3u) : 0, &cpl);
	if (dw0)
		*dw0 = cpl.dw0;
	return rc;
}

static void test_kv_vendor_commands(void)
{
	char id[256];
	struct unvme_target *kt = NULL;
	uint16_t kp = env_target(&kt, "nqn.kv", "emu://tcpkv?ns=kv:64M", NULL, NULL, NULL, NULL);
	REQUIRE(kp);
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u/nqn.kv", kp);
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	CHECK_EQ(unvme_ns_csi(unvme_ctrlr_ns(c, 1)), NVME_CSI_KV);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *keybuf = unvme_dma_alloc(256, 256), *val = unvme_dma_alloc(65536, 4096),
		*back = unvme_dma_alloc(65536, 4096);
	uint8_t key[255];
	for (int i = 0; i < 255; i++)
		key[i] = (uint8_t)(i * 3 + 1);
	static const uint8_t klens[] = {4, 16, 17, 100, 255};
	static const uint32_t vlens[] = {100, 4096, 8000, 9000, 65536};
	for (size_t i = 0; i < sizeof(klens); i++) {
		for (size_t j = 0; j < sizeof(vlens) / sizeof(vlens[0]); j++) {
			key[0] = (uint8_t)(i * 16 + j);
			fabrics_fill(val, vlens[j], (unsigned)(i + j));
			CHECK_EQ(kvv(qp, NVME_KVV_STORE, 0, key, klens[i], keybuf, val, vlens[j], NULL), 0);
			memset(back, 0, 65536);
			uint32_t dw0 = 0;
			CHECK_EQ(kvv(qp, NVME_KVV_RETRIEVE, 0, key, klens[i], keybuf, back, 65536, &dw0), 0);
			CHECK_EQ(dw0, vlens[j]); /* the value size, as the device says it */
			CHECK(memcmp(val, back, vlens[j]) == 0);
			CHECK_EQ(kvv(qp, NVME_KVV_EXIST, 0, key, klens[i], keybuf, NULL, 0, NULL), 0);
		}
	}
	key[0] = 0xee;
	CHECK_EQ(kvv(qp, NVME_KVV_RETRIEVE, 0, key, 100, keybuf, back, 4096, NULL),
		 NVME_STATUS(NVME_SCT_CMD, NVME_KVV_SC_KEY_NOT_EXIST));
	key[0] = 3 * 16; /* stored above with the 100-byte key length */
	CHECK_EQ(kvv(qp, NVME_KVV_DELETE, 0, key, 100, keybuf, NULL, 0, NULL), 0);
	CHECK_EQ(kvv(qp, NVME_KVV_EXIST, 0, key, 100, keybuf, NULL, 0, NULL),
		 NVME_STATUS(NVME_SCT_CMD, NVME_KVV_SC_KEY_NOT_EXIST));
	/* the vendor log pages come from the KV namespace's device */
	uint8_t log[512];
	CHECK_EQ(unvme_get_log_page(c, NVME_KVV_LOG_CAPACITY, 0, log, sizeof(log), 0), 0);
	unvme_dma_free(keybuf);
	unvme_dma_free(val);
	unvme_dma_free(back);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	unvme_target_stop(kt);
}

static void test_discovery(void)
{
	char id[256];
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u", port);
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	CHECK_EQ(unvme_ctrlr_identify_data(c)->cntrltype, NVME_CTRL_TYPE_DISCOVERY);
	CHECK_EQ(unvme_ctrlr_first_nsid(c), 0);
	uint8_t log[3 * 1024];
	REQUIRE(unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, log, sizeof(log), 0) == 0);
	const struct nvmf_disc_log_hdr *h = (const void *)log;
	CHECK_EQ(h->numrec, 2);
	const struct nvmf_disc_log_entry *e = (const void *)(log + 1024);
	CHECK_EQ(e[0].subtype, NVMF_SUBTYPE_DISCOVERY_CURRENT);
	CHECK_EQ(e[1].subtype, NVMF_SUBTYPE_NVME);
	CHECK_EQ(e[1].trtype, NVMF_TRTYPE_TCP);
	CHECK_STREQ(e[1].subnqn, NQN);
	CHECK_STREQ(e[1].traddr, "127.0.0.1");
	CHECK_EQ(atoi(e[1].trsvcid), port);
	/* an offset into the page: the second entry alone */
	uint8_t one[1024];
	CHECK_EQ(unvme_get_log_page(c, NVME_LOG_DISCOVERY, 0, one, sizeof(one), 2048), 0);
	CHECK(memcmp(one, &e[1], 1024) == 0);
	/* I/O queues do not exist on a discovery controller */
	struct unvme_qpair *qp;
	CHECK(unvme_qpair_create(c, NULL, &qp) != 0);
	unvme_ctrlr_close(c);
}

static void setup(void)
{
	setenv("UNVME_QUIET", "1", 1);
	port = env_target(&tgt, NQN, "emu://tcphost?ns=mem:64M", NULL, NULL, NULL, NULL);
	tls_port = env_target_tls(&tls_tgt, NQN, "emu://tcptls?ns=mem:64M", TLS_HOST, TLS_KEY);
}

static void teardown(void)
{
	unvme_target_stop(tgt);
	unvme_target_stop(tls_tgt);
}

/* The I/O paths again, every PDU inside TLS records. */
static void test_tls_io(void)
{
	over_tls = true;
	test_controller();
	io_sizes(NULL);
	io_sizes("hdgst=1&ddgst=1&incapsule=0&tls_identity=1");
	test_deep_queue();
	test_split_queue();
	over_tls = false;
}

static void test_setup(void)
{
	setup();
	CHECK(port != 0);
	CHECK(tls_port != 0);
}

static void test_teardown(void)
{
	teardown();
}

TEST_MAIN(TEST(test_setup), TEST(test_controller), TEST(test_io_sizes), TEST(test_io_sizes_digests),
	  TEST(test_io_sizes_without_incapsule), TEST(test_deep_queue), TEST(test_split_queue),
	  TEST(test_kv_vendor_commands), TEST(test_discovery), TEST(test_tls_io), TEST(test_teardown))
