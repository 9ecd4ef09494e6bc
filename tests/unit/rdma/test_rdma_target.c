/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target's NVMe/RDMA wire (lib/target/tgt_rdma.c) on the fake verbs: a whole target
 * (unvme_target_start with an "rdma:" listener, pollers, an emulated device) against hosts made
 * of lib/fabrics/rdma's host queue engine, each host a different liar:
 *   - the CM request's private data refused before any queue pair is made (length, queue id,
 *     queue size), with the status in the reject;
 *   - Connect: an allowed host gets a controller and serves I/O (in-capsule and keyed data);
 *     a host not on the allow-list and a subsystem that does not exist are answered alike;
 *   - a host lying about a command's length, or sending in-capsule data with a read;
 *   - a host giving an RKEY it never registered: its queue fails, the target goes on;
 *   - connection limits (per host, total) and the memory of receive buffers refused at the CM;
 *   - disconnects: the target's endpoints, regions and controllers go; Disconnect answers
 *     first; keep alive ends a silent controller.
 * Each test waits with generous hang guards only. With RDMA_TEST_VERBS=ibv RDMA_TEST_ADDR=<an
 * address of an RDMA device> the same tests run on librdmacm/libibverbs (the QEMU guest runs
 * them on soft-RoCE: our host engine against our target); the fake's own counters are then
 * not looked at.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "unvme/spec/cmd.h"
#include "unvme/spec/fabrics.h"
#include "unvme/spec/regs.h"
#include "unvme/spec/status.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/host_queue.h"
#include "lib/target/target.h"
#include "rdma_pair.h"

#define NQN "nqn.2024-01.io.unvme.test:rdma"
#define HOST_OK "nqn.2014-08.io.unvme.test:host-ok"
#define HOST_NO "nqn.2014-08.io.unvme.test:host-no"
#define ICD 8192u     /* the target's in-capsule data on I/O queues */
#define BLOCK 512u
#define GUARD_MS 5000 /* hang guard */

static uint64_t now_ms(void)
{
	return test_now_ms();
}

/* ---- the target ---- */

static struct unvme_target *tgt;
static char port[8];

/* A target with nlimits limits by their configuration keys (keys[i] = vals[i]). */
static int target_up_limits(const char *const *keys, const uint64_t *vals, int nlimits)
{
	char err[512];
	setenv("UNVME_MP", "0", 0); /* the device in this process */
	rv_set_default(pair_verbs());
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	char listen[80];
	snprintf(listen, sizeof(listen), "rdma:%s:0", pair_addr());
	int si = tgt_config_add_subsys(cfg, NQN, err, sizeof(err));
	int rc = si < 0 ? si : tgt_config_add_listen(cfg, listen, err, sizeof(err));
	if (rc == 0)
		rc = tgt_config_add_ns(cfg, si, "emu://rdmatgt?ns=mem:4M:512", 0, 0, err, sizeof(err));
	if (rc == 0)
		rc = tgt_config_add_host(cfg, si, HOST_OK, NULL, NULL, NULL, NULL, err, sizeof(err));
	for (int i = 0; rc == 0 && i < nlimits; i++)
		rc = tgt_config_set_limit(cfg, keys[i], vals[i], err, sizeof(err));
	if (rc == 0) {
		rc = unvme_target_start(cfg, &tgt, err, sizeof(err));
		cfg = NULL;
	}
	tgt_config_free(cfg);
	if (rc) {
		fprintf(stderr, "  target: %s\n", err);
		return rc;
	}
	snprintf(port, sizeof(port), "%u", unvme_target_port(tgt));
	return 0;
}

static int target_up(const char *limit, uint64_t value, int nlimits)
{
	return target_up_limits(&limit, &value, nlimits);
}

static void target_down(void)
{
	unvme_target_stop(tgt);
	tgt = NULL;
}

/* ---- a host queue ---- */

#define MAXQ 32

struct rhost {
	struct rv_ep *ep;
	struct nvrdma_hq q;
	bool q_up;
	struct nvme_cqe cqe[MAXQ];
	bool done[MAXQ];
	uint32_t lie_rkey;           /* nonzero: keyed SGLs name this RKEY instead */
	struct rv_mr fake_mr;
	bool failed;                 /* its queue pair reported an error (a completion's status) */
};

static void h_done(void *arg, uint16_t cid, const struct nvme_cqe *cqe)
{
	struct rhost *h = arg;
	if (cid < MAXQ) {
		h->cqe[cid] = *cqe;
		h->done[cid] = true;
	}
}

static struct rv_mr *h_find_mr(void *arg, const void *buf, uint32_t len)
{
	struct rhost *h = arg;
	if (!h->lie_rkey)
		return NULL; /* a region for the command alone */
	/* a region the host never registered: the address and key are made up */
	h->fake_mr = (struct rv_mr){.ops = pair_verbs(), .pd = h->ep->pd, .addr = (void *)buf, .len = len,
				    .lkey = h->lie_rkey, .rkey = h->lie_rkey};
	return &h->fake_mr;
}

/* Connects queue qid with hsqsize and the private data priv (NULL: a proper request). 0, or
 * -ECONNREFUSED with the reject's status in *sts. */
static int rhost_open(struct rhost *h, uint16_t qid, uint16_t hsqsize, const void *priv, uint32_t plen,
		      uint16_t *sts)
{
	memset(h, 0, sizeof(*h));
	uint16_t depth = (uint16_t)(hsqsize + 1u);
	struct rv_qp_caps caps = {.send_depth = 2u * MAXQ, .recv_depth = MAXQ, .max_sge = 1};
	const struct rv_ops *v = pair_verbs();
	int rc = v->ep_create(v, pair_addr(), port, &caps, GUARD_MS, &h->ep);
	if (rc)
		return rc;
	struct nvrdma_hq_cfg qc = {.qid = qid, .depth = depth < MAXQ ? depth : MAXQ,
				   .hrqsize = depth < MAXQ ? depth : MAXQ, .icd_max = qid ? ICD : 0,
				   .done = h_done, .find_mr = h_find_mr, .arg = h};
	if ((rc = nvrdma_hq_init(&h->q, h->ep, &qc)))
		return rc;
	h->q_up = true;
	struct nvme_rdma_cm_req req;
	nvrdma_cm_req_build(&req, qid, depth, hsqsize, 0xffff);
	if ((rc = rv_connect(h->ep, priv ? priv : (const void *)&req, priv ? plen : sizeof(req))))
		return rc;
	rc = rv_connect_wait(h->ep, GUARD_MS);
	if (rc == -ECONNREFUSED && sts)
		*sts = nvrdma_cm_rej_parse(h->ep->peer_priv, h->ep->peer_priv_len);
	return rc;
}

static void rhost_close(struct rhost *h)
{
	if (h->q_up) {
		nvrdma_hq_abort_all(&h->q, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION));
		nvrdma_hq_fini(&h->q);
	}
	rv_ep_destroy(h->ep);
	memset(h, 0, sizeof(*h));
}

/* Runs one command; its completion's status in CQE form (0 success), or -1 when the queue died
 * or the guard ran out. */
static int rhost_cmd(struct rhost *h, struct nvme_sqe *sqe, void *buf, uint32_t len, bool to_ctrl,
		     struct nvme_cqe *out)
{
	uint16_t cid = sqe->cid;
	h->done[cid] = false;
	if (nvrdma_hq_submit(&h->q, sqe, buf, len, to_ctrl))
		return -1;
	uint64_t end = now_ms() + GUARD_MS;
	while (!h->done[cid] && now_ms() < end) {
		/* a response handed on counts even when the queue ended right after it (the
		 * target answers Disconnect, then disconnects) */
		if (nvrdma_hq_poll(&h->q) < 0 && !h->done[cid]) {
			h->failed = true;
			return -1;
		}
		if (!h->done[cid])
			rv_wait(h->ep, 5);
	}
	if (!h->done[cid])
		return -1;
	if (out)
		*out = h->cqe[cid];
	return h->cqe[cid].status & 0xfffe;
}

static int connect_cmd(struct rhost *h, uint16_t qid, uint16_t sqsize, uint16_t cntlid, const char *hostnqn,
		       const char *subnqn, uint32_t kato, struct nvme_cqe *out)
{
	struct nvmf_connect_cmd c = {.opc = NVME_FABRICS_OPC, .cid = 1, .fctype = NVMF_FCTYPE_CONNECT,
				     .qid = qid, .sqsize = sqsize, .kato = kato};
	static struct nvmf_connect_data d;
	memset(&d, 0, sizeof(d));
	d.cntlid = cntlid;
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqn);
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqn);
	struct nvme_sqe sqe;
	memcpy(&sqe, &c, sizeof(sqe));
	return rhost_cmd(h, &sqe, &d, sizeof(d), true, out);
}

static int prop_set(struct rhost *h, uint32_t ofst, uint64_t v)
{
	struct nvmf_property_cmd p = {.opc = NVME_FABRICS_OPC, .cid = 2, .fctype = NVMF_FCTYPE_PROPERTY_SET,
				      .ofst = ofst, .value = v};
	struct nvme_sqe sqe;
	memcpy(&sqe, &p, sizeof(sqe));
	return rhost_cmd(h, &sqe, NULL, 0, false, NULL);
}

/* An enabled controller on an admin queue; its id, or -1. */
static int admin_up(struct rhost *a, uint32_t kato)
{
	struct nvme_cqe cqe;
	if (rhost_open(a, 0, 31, NULL, 0, NULL) || connect_cmd(a, 0, 31, 0xffff, HOST_OK, NQN, kato, &cqe))
		return -1;
	/* CC: EN, IOSQES 6, IOCQES 4 */
	if (prop_set(a, NVME_REG_CC, 1u | 6u << 16 | 4u << 20))
		return -1;
	return NVMF_CONNECT_RSP_CNTLID(cqe.dw0);
}

static int io_up(struct rhost *q, int cntlid)
{
	if (rhost_open(q, 1, 15, NULL, 0, NULL))
		return -1;
	return connect_cmd(q, 1, 15, (uint16_t)cntlid, HOST_OK, NQN, 0, NULL);
}

/* A target up, an enabled controller on admin queue a and I/O queue 1 of it on q: the
 * controller's id, or -1. */
static int session_up(struct rhost *a, struct rhost *q)
{
	if (target_up(NULL, 0, 0))
		return -1;
	int cntlid = admin_up(a, 0);
	return cntlid > 0 && io_up(q, cntlid) == 0 ? cntlid : -1;
}

static int rw(struct rhost *q, uint16_t cid, uint8_t opc, uint64_t lba, uint32_t blocks, void *buf, uint32_t len)
{
	struct nvme_sqe sqe = {.opc = opc, .cid = cid, .nsid = 1};
	sqe.cdw10 = (uint32_t)lba;
	sqe.cdw11 = (uint32_t)(lba >> 32);
	sqe.cdw12 = blocks - 1;
	return rhost_cmd(q, &sqe, buf, len, opc == NVME_CMD_WRITE, NULL);
}

/* Waits (guarded) until ep reports a disconnect. */
static bool disconnected(struct rv_ep *ep)
{
	uint64_t end = now_ms() + GUARD_MS;
	while (now_ms() < end) {
		enum rv_event ev = rv_ep_event(ep);
		if (ev == RV_EV_DISCONNECTED)
			return true;
		rv_wait(ep, 5);
	}
	return false;
}

/* The fake's live endpoints and regions back to what they were (the target let go of all it
 * made for its connections), waiting for its pollers (guarded). */
static bool settles_to(unsigned eps, unsigned mrs)
{
	if (!pair_is_fake())
		return true; /* a device's own resources are not counted here */
	uint64_t end = now_ms() + GUARD_MS;
	while (now_ms() < end) {
		if (rv_fake_live_eps() == eps && rv_fake_live_mrs() == mrs)
			return true;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "  live endpoints %u (want %u), regions %u (want %u)\n", rv_fake_live_eps(), eps,
		rv_fake_live_mrs(), mrs);
	return false;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 9));
}

/* ---- tests ---- */

static void test_allowed_host_connects_and_moves_incapsule_and_keyed_data(void)
{
	REQUIRE(target_up(NULL, 0, 0) == 0);
	struct rhost a, q;
	int cntlid = admin_up(&a, 0);
	CHECK(cntlid > 0);
	/* Identify Controller says keyed SGLs (a Linux host requires it) */
	static uint8_t id[4096];
	struct nvme_sqe ident = {.opc = NVME_ADM_IDENTIFY, .cid = 3, .cdw10 = 1};
	CHECK_EQ(rhost_cmd(&a, &ident, id, sizeof(id), false, NULL), 0);
	uint32_t sgls;
	memcpy(&sgls, id + 536, 4);
	CHECK(sgls & (1u << 2));
	CHECK_EQ(io_up(&q, cntlid), 0);
	static uint8_t small[4096], big[65536], back[65536];
	fill(small, sizeof(small), 1);
	fill(big, sizeof(big), 2);
	CHECK_EQ(rw(&q, 4, NVME_CMD_WRITE, 0, 8, small, sizeof(small)), 0);   /* in the capsule */
	CHECK_EQ(rw(&q, 5, NVME_CMD_WRITE, 64, 128, big, sizeof(big)), 0);    /* keyed: RDMA READ */
	memset(back, 0, sizeof(back));
	CHECK_EQ(rw(&q, 6, NVME_CMD_READ, 0, 8, back, sizeof(small)), 0);     /* RDMA WRITE */
	CHECK(memcmp(back, small, sizeof(small)) == 0);
	CHECK_EQ(rw(&q, 7, NVME_CMD_READ, 64, 128, back, sizeof(big)), 0);
	CHECK(memcmp(back, big, sizeof(big)) == 0);
	rhost_close(&q);
	rhost_close(&a);
	target_down();
}

static void test_unknown_and_forbidden_nqns_are_answered_alike(void)
{
	REQUIRE(target_up(NULL, 0, 0) == 0);
	struct rhost a, b;
	struct nvme_cqe forbidden, unknown;
	REQUIRE(rhost_open(&a, 0, 31, NULL, 0, NULL) == 0);
	int st1 = connect_cmd(&a, 0, 31, 0xffff, HOST_NO, NQN, 0, &forbidden);
	REQUIRE(rhost_open(&b, 0, 31, NULL, 0, NULL) == 0);
	int st2 = connect_cmd(&b, 0, 31, 0xffff, HOST_OK, "nqn.2024-01.io.unvme.test:none", 0, &unknown);
	CHECK_EQ((st1 >> 1) & 0xff, NVMF_SC_INVALID_HOST);
	CHECK_EQ((st1 >> 9) & 7, NVME_SCT_CMD);
	CHECK_EQ(st1, st2);
	CHECK_EQ(forbidden.dw0, unknown.dw0);
	/* nothing but Connect is served on such a queue */
	struct nvme_sqe ident = {.opc = NVME_ADM_IDENTIFY, .cid = 3, .cdw10 = 1};
	static uint8_t id[4096];
	CHECK_EQ((rhost_cmd(&a, &ident, id, sizeof(id), false, NULL) >> 1) & 0xff, NVME_SC_CMD_SEQ_ERROR);
	rhost_close(&a);
	rhost_close(&b);
	target_down();
}

static void test_cm_private_data_is_refused_before_a_queue_pair(void)
{
	REQUIRE(target_up("max_io_queues", 4, 1) == 0);
	unsigned eps = rv_fake_live_eps(), mrs = rv_fake_live_mrs();
	struct rhost h;
	uint16_t sts = 0;
	CHECK_EQ(rhost_open(&h, 0, 31, "short", 5, &sts), -ECONNREFUSED);
	/* a device's CM pads private data (RoCE: to 56 bytes): the length cannot tell there,
	 * the record format the padding leaves does */
	CHECK(sts == NVME_RDMA_CM_INVALID_LEN || (!pair_is_fake() && sts == NVME_RDMA_CM_INVALID_RECFMT));
	rhost_close(&h);
	sts = 0;
	CHECK_EQ(rhost_open(&h, 5, 15, NULL, 0, &sts), -ECONNREFUSED); /* qid past max_io_queues */
	CHECK_EQ(sts, NVME_RDMA_CM_INVALID_QID);
	rhost_close(&h);
	sts = 0;
	CHECK_EQ(rhost_open(&h, 0, 32, NULL, 0, &sts), -ECONNREFUSED); /* admin queue of 33 */
	CHECK_EQ(sts, NVME_RDMA_CM_INVALID_HSQSIZE);
	rhost_close(&h);
	sts = 0;
	CHECK_EQ(rhost_open(&h, 1, 256, NULL, 0, &sts), -ECONNREFUSED); /* past max_queue_depth */
	CHECK_EQ(sts, NVME_RDMA_CM_INVALID_HSQSIZE);
	rhost_close(&h);
	CHECK(settles_to(eps, mrs)); /* nothing was made for any of them */
	target_down();
}

static void test_a_host_lying_about_lengths_is_refused(void)
{
	struct rhost a, q;
	int cntlid = session_up(&a, &q);
	REQUIRE(cntlid > 0);
	static uint8_t buf[16384];
	fill(buf, sizeof(buf), 3);
	/* one block, but 8 KiB of data: in the capsule, and keyed */
	int st = rw(&q, 4, NVME_CMD_WRITE, 0, 1, buf, 8192);
	CHECK_EQ((st >> 1) & 0xff, NVME_SC_DATA_SGL_LEN_INVALID);
	CHECK(st & 0x8000); /* DNR */
	st = rw(&q, 5, NVME_CMD_WRITE, 0, 1, buf, 16384);
	CHECK_EQ((st >> 1) & 0xff, NVME_SC_DATA_SGL_LEN_INVALID);
	/* a read asking for less than it reads */
	st = rw(&q, 6, NVME_CMD_READ, 0, 8, buf, 512);
	CHECK_EQ((st >> 1) & 0xff, NVME_SC_DATA_SGL_LEN_INVALID);
	/* the queue goes on */
	CHECK_EQ(rw(&q, 7, NVME_CMD_WRITE, 0, 1, buf, BLOCK), 0);
	rhost_close(&q);
	rhost_close(&a);
	target_down();
}

static void test_a_host_lying_about_its_rkey_loses_only_its_queue(void)
{
	unsigned eps = rv_fake_live_eps(), mrs = rv_fake_live_mrs();
	struct rhost a, q;
	int cntlid = session_up(&a, &q);
	REQUIRE(cntlid > 0);
	static uint8_t buf[65536];
	fill(buf, sizeof(buf), 4);
	q.lie_rkey = 0x5a5a5a5a;
	CHECK_EQ(rw(&q, 4, NVME_CMD_WRITE, 0, 128, buf, sizeof(buf)), -1); /* its queue fails */
	/* The target ends the connection. On a device (soft-RoCE in the guest) the bad key
	 * fails the host's queue pair itself first (the responder's access error), and the
	 * connection manager's disconnect may come later than the guard: that failure is the
	 * end there. The fake has no such error: the target's disconnect must arrive. */
	CHECK((!pair_is_fake() && q.failed) || disconnected(q.ep));
	rhost_close(&q);
	/* the admin queue and a new I/O queue of the same controller go on (queue 1 is free
	 * again once the target's poller let the failed connection go) */
	struct rhost q2;
	uint64_t end = now_ms() + GUARD_MS;
	int rc;
	while ((rc = io_up(&q2, cntlid)) != 0 && now_ms() < end)
		rhost_close(&q2);
	CHECK_EQ(rc, 0);
	CHECK_EQ(rw(&q2, 4, NVME_CMD_WRITE, 0, 128, buf, sizeof(buf)), 0);
	rhost_close(&q2);
	rhost_close(&a);
	CHECK(settles_to(eps, mrs));
	target_down();
}

static void test_connection_limits_are_refused_at_the_cm(void)
{
	/* the fake's hosts all share one address ("fake"): the per-host limit counts them */
	REQUIRE(target_up("max_connections_per_host", 2, 1) == 0);
	struct rhost h[3];
	uint16_t sts = 0;
	CHECK_EQ(rhost_open(&h[0], 0, 31, NULL, 0, NULL), 0);
	CHECK_EQ(rhost_open(&h[1], 0, 31, NULL, 0, NULL), 0);
	CHECK_EQ(rhost_open(&h[2], 0, 31, NULL, 0, &sts), -ECONNREFUSED);
	CHECK_EQ(sts, NVME_RDMA_CM_NO_RSC);
	rhost_close(&h[2]);
	/* one goes: room for another */
	rhost_close(&h[0]);
	uint64_t end = now_ms() + GUARD_MS;
	int rc;
	do {
		rc = rhost_open(&h[0], 0, 31, NULL, 0, NULL);
		if (rc)
			rhost_close(&h[0]);
	} while (rc && now_ms() < end);
	CHECK_EQ(rc, 0);
	rhost_close(&h[0]);
	rhost_close(&h[1]);
	target_down();

	REQUIRE(target_up("max_connections", 1, 1) == 0);
	CHECK_EQ(rhost_open(&h[0], 0, 31, NULL, 0, NULL), 0);
	sts = 0;
	CHECK_EQ(rhost_open(&h[1], 0, 31, NULL, 0, &sts), -ECONNREFUSED);
	CHECK_EQ(sts, NVME_RDMA_CM_NO_RSC);
	rhost_close(&h[1]);
	rhost_close(&h[0]);
	target_down();
}

static void test_receive_buffers_count_against_the_memory_limit(void)
{
	/* 4 MiB in all: an I/O queue of 256 entries takes 256 x 8256 bytes of receive buffers
	 * (its capsules with 8 KiB of in-capsule data each), so one fits and a second does not */
	static const char *const keys[] = {"max_memory_mb", "max_connection_memory_mb"};
	static const uint64_t vals[] = {4, 4};
	REQUIRE(target_up_limits(keys, vals, 2) == 0);
	struct rhost q1, q2, q3;
	uint16_t sts = 0;
	CHECK_EQ(rhost_open(&q1, 1, 255, NULL, 0, NULL), 0);
	CHECK_EQ(rhost_open(&q2, 2, 255, NULL, 0, &sts), -ECONNREFUSED);
	CHECK_EQ(sts, NVME_RDMA_CM_NO_RSC);
	rhost_close(&q2);
	/* the first one's end gives its memory back */
	rhost_close(&q1);
	uint64_t end = now_ms() + GUARD_MS;
	int rc;
	while ((rc = rhost_open(&q3, 2, 255, NULL, 0, NULL)) != 0 && now_ms() < end)
		rhost_close(&q3);
	CHECK_EQ(rc, 0);
	rhost_close(&q3);
	target_down();
}

static void test_disconnects_release_everything_and_end_the_controller(void)
{
	unsigned eps = rv_fake_live_eps(), mrs = rv_fake_live_mrs();
	struct rhost a, q;
	int cntlid = session_up(&a, &q);
	REQUIRE(cntlid > 0);
	static uint8_t buf[65536];
	CHECK_EQ(rw(&q, 4, NVME_CMD_WRITE, 0, 128, buf, sizeof(buf)), 0);
	/* Disconnect on the I/O queue: answered, then the connection ends */
	struct nvmf_cmd d = {.opc = NVME_FABRICS_OPC, .cid = 5, .fctype = NVMF_FCTYPE_DISCONNECT};
	struct nvme_sqe sqe;
	memcpy(&sqe, &d, sizeof(sqe));
	CHECK_EQ(rhost_cmd(&q, &sqe, NULL, 0, false, NULL), 0);
	CHECK(disconnected(q.ep));
	rhost_close(&q);
	/* the host goes away without a word: the admin queue, so the controller, ends */
	rhost_close(&a);
	CHECK(settles_to(eps, mrs));
	struct rhost q2;
	REQUIRE(rhost_open(&q2, 1, 15, NULL, 0, NULL) == 0);
	struct nvme_cqe cqe;
	int st = connect_cmd(&q2, 1, 15, (uint16_t)cntlid, HOST_OK, NQN, 0, &cqe);
	CHECK_EQ((st >> 1) & 0xff, NVMF_SC_CONNECT_INVALID);
	rhost_close(&q2);
	target_down();
}

static void test_keep_alive_ends_a_silent_controller(void)
{
	REQUIRE(target_up(NULL, 0, 0) == 0);
	struct rhost a;
	CHECK(admin_up(&a, 200) > 0); /* KATO 200 ms, and then silence */
	CHECK(disconnected(a.ep));
	rhost_close(&a);
	target_down();
}

/* CPU time (ms) the target's first poller thread ("unvme-tgt0") used so far, or -1. */
static long poller_cpu_ms(void)
{
	char path[64], comm[32];
	for (int tid = getpid(); tid < getpid() + 4096; tid++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		bool it = fgets(comm, sizeof(comm), f) && !strncmp(comm, "unvme-tgt0", 10);
		fclose(f);
		if (!it)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		if (!(f = fopen(path, "r")))
			return -1;
		char line[1024];
		long ut = -1, st = -1;
		if (fgets(line, sizeof(line), f)) {
			const char *p = strrchr(line, ')'); /* fields after comm: state is the 3rd */
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) != 2)
				ut = -1;
		}
		fclose(f);
		return ut < 0 ? -1 : (ut + st) * 1000 / sysconf(_SC_CLK_TCK);
	}
	return -1;
}

static void test_an_idle_poller_sleeps_on_the_endpoints(void)
{
	struct rhost a, q;
	int cntlid = session_up(&a, &q);
	REQUIRE(cntlid > 0);
	struct timespec ts = {0, 100000000};
	nanosleep(&ts, NULL); /* past its spinning after the last work */
	long before = poller_cpu_ms();
	REQUIRE(before >= 0);
	uint64_t t0 = now_ms();
	ts.tv_nsec = 400000000;
	nanosleep(&ts, NULL);
	long used = poller_cpu_ms() - before;
	uint64_t elapsed = now_ms() - t0;
	/* a spinning poller would use about all of it; sleeping, a few keep-alive looks */
	CHECK(used * 4 < (long)elapsed);
	/* and it wakes for a command */
	static uint8_t buf[4096];
	CHECK_EQ(rw(&q, 4, NVME_CMD_WRITE, 0, 8, buf, sizeof(buf)), 0);
	rhost_close(&q);
	rhost_close(&a);
	target_down();
}

TEST_MAIN(TEST(test_allowed_host_connects_and_moves_incapsule_and_keyed_data),
	  TEST(test_unknown_and_forbidden_nqns_are_answered_alike),
	  TEST(test_cm_private_data_is_refused_before_a_queue_pair),
	  TEST(test_a_host_lying_about_lengths_is_refused),
	  TEST(test_a_host_lying_about_its_rkey_loses_only_its_queue),
	  TEST(test_connection_limits_are_refused_at_the_cm),
	  TEST(test_receive_buffers_count_against_the_memory_limit),
	  TEST(test_disconnects_release_everything_and_end_the_controller),
	  TEST(test_keep_alive_ends_a_silent_controller),
	  TEST(test_an_idle_poller_sleeps_on_the_endpoints))
