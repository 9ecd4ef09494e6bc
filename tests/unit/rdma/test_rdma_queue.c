/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host's and the controller's NVMe/RDMA queue engines (host_queue.c, target_queue.c)
 * against each other over the fake verbs: a small controller in this file keeps a RAM
 * namespace (Write 01h, Read 02h with CDW10 the 512-byte LBA and CDW12 the count - 1) and
 * answers through nvrdma_tq. Connect goes through the RDMA CM private data checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "cm_priv.h"
#include "host_queue.h"
#include "rdma_pair.h"
#include "target_queue.h"
#include "unvme/spec/status.h"

#define DEPTH 32u
#define MAXDATA (128u * 1024u)
#define RAM_BYTES (4u << 20)
#define REQUIRE_RC(x) do { int _rc = (x); if (_rc) return _rc; } while (0)

struct ctl {
	struct nvrdma_tq q;
	uint8_t *ram;
	uint8_t *bufs;            /* a data buffer per slot */
	struct rv_mr *mr;
	unsigned incapsule, keyed_in, keyed_out;
	bool lie_rkey;            /* corrupt the next fetch's RKEY (a host that lies) */
	bool fatal;
	char why[128];
};

struct host {
	struct nvrdma_hq q;
	uint8_t *data;            /* registered once: find_mr names it */
	struct rv_mr *mr;
	struct nvme_cqe cqe[DEPTH];
	bool done[DEPTH];
	unsigned ndone;
	bool in_submit;
	bool callback_in_submit;
};

static uint64_t off_of(const struct nvme_sqe *s)
{
	return (uint64_t)s->cdw10 * 512u;
}

static uint32_t len_of(const struct nvme_sqe *s)
{
	return ((s->cdw12 & 0xffffu) + 1u) * 512u;
}

static void ctl_answer(struct ctl *c, struct nvrdma_tq_cmd *cmd, uint16_t status, uint32_t len)
{
	struct nvme_cqe cqe = { .status = status };
	CHECK_EQ(nvrdma_tq_respond(cmd, &cqe, c->bufs + (size_t)cmd->slot * MAXDATA, len, c->mr), 0);
}

static void ctl_capsule(void *arg, struct nvrdma_tq_cmd *cmd)
{
	struct ctl *c = arg;
	const struct nvme_sqe *s = &cmd->cap.sqe;
	uint8_t *buf = c->bufs + (size_t)cmd->slot * MAXDATA;
	uint64_t off = off_of(s);
	uint32_t len = len_of(s);
	if ((s->opc != 1 && s->opc != 2) || off + len > RAM_BYTES || len != cmd->cap.len) {
		ctl_answer(c, cmd, NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD), 0);
		return;
	}
	if (s->opc == 2) {
		memcpy(buf, c->ram + off, len);
		c->keyed_out++;
		ctl_answer(c, cmd, 0, len);
		return;
	}
	if (cmd->cap.kind == NVRDMA_DATA_INCAPSULE) {
		c->incapsule++;
		memcpy(c->ram + off, cmd->cap.icd, len);
		ctl_answer(c, cmd, 0, 0);
		return;
	}
	c->keyed_in++;
	if (c->lie_rkey) {
		cmd->cap.rkey ^= 0x1234;
		c->lie_rkey = false;
	}
	CHECK_EQ(nvrdma_tq_fetch(cmd, buf, c->mr), 0);
}

static void ctl_data_in(void *arg, struct nvrdma_tq_cmd *cmd, int status)
{
	struct ctl *c = arg;
	if (status) {
		nvrdma_tq_drop(cmd);
		return;
	}
	memcpy(c->ram + off_of(&cmd->cap.sqe), c->bufs + (size_t)cmd->slot * MAXDATA, cmd->cap.len);
	ctl_answer(c, cmd, 0, 0);
}

static void ctl_fatal(void *arg, const char *why)
{
	struct ctl *c = arg;
	c->fatal = true;
	snprintf(c->why, sizeof(c->why), "%s", why);
}

static void host_done(void *arg, uint16_t cid, const struct nvme_cqe *cqe)
{
	struct host *h = arg;
	if (h->in_submit)
		h->callback_in_submit = true;
	h->cqe[cid] = *cqe;
	h->done[cid] = true;
	h->ndone++;
}

static struct rv_mr *host_find_mr(void *arg, const void *buf, uint32_t len)
{
	struct host *h = arg;
	const uint8_t *b = buf;
	return b >= h->data && b + len <= h->data + RAM_BYTES ? h->mr : NULL;
}

static const struct rv_qp_caps caps = { .send_depth = 2 * DEPTH, .recv_depth = DEPTH, .max_sge = 1 };

struct rig {
	struct rdma_pair p;
	struct ctl c;
	struct host h;
};

/* Connects a host queue (I/O queue 1, hsqsize depth - 1) to the controller; 0 or the
 * negative errno of the connect (the reject's status in *rej). */
static int rig_up(struct rig *r, uint16_t hsqsize, uint32_t max_data, uint16_t *rej)
{
	memset(r, 0, sizeof(*r));
	struct nvme_rdma_cm_req req;
	nvrdma_cm_req_build(&req, 1, DEPTH, hsqsize, 1);
	int rc = pair_start(&r->p, &caps, &req, sizeof(req));
	if (rc)
		return rc;
	/* the controller's side of the CM: check, then make its queue, then accept */
	struct nvrdma_cm_limits lim = { .max_qid = 4, .admin_depth = 32, .io_depth = DEPTH };
	struct nvrdma_cm_params cp;
	int sts = nvrdma_cm_req_check(r->p.req->priv, r->p.req->priv_len, &lim, &cp);
	r->c.ram = calloc(1, RAM_BYTES);
	r->c.bufs = malloc((size_t)DEPTH * MAXDATA);
	r->h.data = calloc(1, RAM_BYTES);
	if (!r->c.ram || !r->c.bufs || !r->h.data)
		return -ENOMEM;
	if (sts) {
		struct nvme_rdma_cm_rej j;
		nvrdma_cm_rej_build(&j, (uint16_t)sts);
		rv_reject(r->p.req, &j, sizeof(j));
		r->p.req = NULL;
		r->p.s = NULL;
		rc = rv_connect_wait(r->p.c, 1000);
		*rej = nvrdma_cm_rej_parse(r->p.c->peer_priv, r->p.c->peer_priv_len);
		return rc;
	}
	REQUIRE_RC(rv_reg_mr(r->p.s->pd, r->c.bufs, (size_t)DEPTH * MAXDATA, RV_ACCESS_LOCAL_WRITE, &r->c.mr));
	struct nvrdma_tq_cfg tc = { .qid = cp.qid, .depth = cp.hsqsize + 1u,
				    .rules = { .admin = false, .icd_max = 8192, .max_data = max_data },
				    .capsule = ctl_capsule, .data_in = ctl_data_in, .fatal = ctl_fatal,
				    .arg = &r->c };
	REQUIRE_RC(nvrdma_tq_init(&r->c.q, r->p.s, &tc));
	struct nvme_rdma_cm_rep rep;
	nvrdma_cm_rep_build(&rep, (uint16_t)tc.depth);
	/* the host's queue posts its receives before the connection is up */
	REQUIRE_RC(rv_reg_mr(r->p.c->pd, r->h.data, RAM_BYTES, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ |
			     RV_ACCESS_REMOTE_WRITE, &r->h.mr));
	struct nvrdma_hq_cfg hc = { .qid = 1, .depth = DEPTH, .hrqsize = DEPTH, .icd_max = 8192,
				    .done = host_done, .find_mr = host_find_mr, .arg = &r->h };
	REQUIRE_RC(nvrdma_hq_init(&r->h.q, r->p.c, &hc));
	REQUIRE_RC(pair_accept(&r->p, &rep, sizeof(rep)));
	uint16_t crq = 0;
	REQUIRE_RC(nvrdma_cm_rep_parse(r->p.c->peer_priv, r->p.c->peer_priv_len, &crq));
	return crq == tc.depth ? 0 : -EPROTO;
}

static void rig_down(struct rig *r)
{
	if (r->h.q.mem)
		nvrdma_hq_fini(&r->h.q);
	if (r->c.q.mem)
		nvrdma_tq_fini(&r->c.q);
	rv_dereg_mr(r->h.mr);
	rv_dereg_mr(r->c.mr);
	pair_end(&r->p);
	free(r->c.ram);
	free(r->c.bufs);
	free(r->h.data);
}

/* Moves both ends until cid is answered (or nothing moves any more). */
static bool run_until(struct rig *r, uint16_t cid)
{
	for (int i = 0, idle = 0; i < 100000 && !r->h.done[cid] && idle < 5000; i++) {
		int a = nvrdma_tq_poll(&r->c.q);
		int b = nvrdma_hq_poll(&r->h.q);
		idle = a <= 0 && b <= 0 ? idle + 1 : 0;
		if (idle && !pair_is_fake())
			test_sleep_ms(1);
		if (idle > 100 && pair_is_fake())
			break;
	}
	return r->h.done[cid];
}

static int io(struct rig *r, uint16_t cid, uint8_t opc, uint32_t lba, uint32_t blocks, void *buf)
{
	struct nvme_sqe s = { .opc = opc, .cid = cid, .nsid = 1, .cdw10 = lba, .cdw12 = blocks - 1 };
	r->h.done[cid] = false;
	r->h.in_submit = true;
	int rc = nvrdma_hq_submit(&r->h.q, &s, buf, blocks * 512u, opc == 1);
	r->h.in_submit = false;
	return rc;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 9));
}

static void test_connect_reject_names_the_field(void)
{
	struct rig r;
	uint16_t rej = 0;
	CHECK_EQ(rig_up(&r, 2 * DEPTH - 1, MAXDATA, &rej), -ECONNREFUSED);
	CHECK_EQ(rej, NVME_RDMA_CM_INVALID_HSQSIZE);
	rig_down(&r);
	CHECK(!pair_is_fake() || rv_fake_live_eps() == 0);
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == 0);
}

static void test_writes_and_reads_in_capsule_and_keyed(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	uint8_t *small = r.h.data, *big = r.h.data + 65536, *back = r.h.data + 2 * 65536;
	fill(small, 4096, 1);
	fill(big, 65536, 2);
	CHECK_EQ(io(&r, 0, 1, 8, 8, small), 0);     /* 4 KiB: in the capsule */
	CHECK_EQ(io(&r, 1, 1, 100, 128, big), 0);   /* 64 KiB: keyed, RDMA READ */
	CHECK(run_until(&r, 0));
	CHECK(run_until(&r, 1));
	CHECK_EQ(r.h.cqe[0].status, 0);
	CHECK_EQ(r.h.cqe[1].status, 0);
	CHECK_EQ(r.h.cqe[1].sqid, 1);
	CHECK_EQ(r.c.incapsule, 1);
	CHECK_EQ(r.c.keyed_in, 1);
	CHECK(!memcmp(r.c.ram + 8 * 512, small, 4096));
	CHECK(!memcmp(r.c.ram + 100 * 512, big, 65536));
	CHECK_EQ(io(&r, 2, 2, 100, 128, back), 0);  /* RDMA WRITE, then the response */
	CHECK(run_until(&r, 2));
	CHECK(!memcmp(back, big, 65536));
	CHECK_EQ(io(&r, 3, 2, 8, 8, back), 0);
	CHECK(run_until(&r, 3));
	CHECK(!memcmp(back, small, 4096));
	CHECK(!r.c.fatal);
	CHECK(!r.h.callback_in_submit);
	rig_down(&r);
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == 0);
}

static void test_a_deep_queue_of_random_commands_matches_a_model(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	uint8_t *model = calloc(1, RAM_BYTES);
	REQUIRE(model);
	unsigned seed = 7, busy = 0;
	uint32_t lba[DEPTH], n[DEPTH];
	uint8_t opc[DEPTH];
	bool inflight[DEPTH] = { 0 };
	unsigned issued = 0, checked = 0, bad = 0;
	while (checked < 2000) {
		for (uint16_t cid = 0; cid < DEPTH && issued < 2000; cid++) {
			if (inflight[cid])
				continue;
			seed = seed * 1103515245u + 12345u;
			/* commands in flight at once touch distinct ranges: each cid its own 128 KiB */
			n[cid] = 1 + (seed >> 8) % 256;
			lba[cid] = cid * 256u;
			opc[cid] = (seed >> 20) & 1 ? 1 : 2;
			uint8_t *buf = r.h.data + (size_t)cid * MAXDATA;
			if (opc[cid] == 1) {
				fill(buf, n[cid] * 512u, seed);
				memcpy(model + (size_t)lba[cid] * 512, buf, n[cid] * 512u);
			}
			if (io(&r, cid, opc[cid], lba[cid], n[cid], buf))
				bad++;
			inflight[cid] = true;
			issued++;
			busy++;
		}
		nvrdma_tq_poll(&r.c.q);
		nvrdma_hq_poll(&r.h.q);
		for (uint16_t cid = 0; cid < DEPTH; cid++) {
			if (!inflight[cid] || !r.h.done[cid])
				continue;
			inflight[cid] = false;
			busy--;
			checked++;
			if (r.h.cqe[cid].status)
				bad++;
			if (opc[cid] == 2 && memcmp(r.h.data + (size_t)cid * MAXDATA, model + (size_t)lba[cid] * 512, n[cid] * 512u))
				bad++;
		}
		if (issued == 2000 && !busy)
			break;
	}
	CHECK_EQ(checked, 2000);
	CHECK_EQ(bad, 0);
	CHECK(r.c.incapsule > 0 && r.c.keyed_in > 0 && r.c.keyed_out > 0);
	CHECK(!memcmp(r.c.ram, model, RAM_BYTES));
	free(model);
	rig_down(&r);
}

static void test_unregistered_buffer_gets_a_region_of_its_own(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	unsigned before = rv_fake_live_mrs();
	uint8_t *mine = malloc(32768), *back = malloc(32768);
	REQUIRE(mine && back);
	fill(mine, 32768, 9);
	CHECK_EQ(io(&r, 5, 1, 0, 64, mine), 0);
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == before + 1);
	CHECK(run_until(&r, 5));
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == before); /* released with the response */
	CHECK_EQ(io(&r, 6, 2, 0, 64, back), 0);
	CHECK(run_until(&r, 6));
	CHECK(!memcmp(mine, back, 32768));
	free(mine);
	free(back);
	rig_down(&r);
}

static void test_controller_refuses_a_transfer_over_its_limit(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, 16384, &rej) == 0);
	CHECK_EQ(io(&r, 0, 2, 0, 64, r.h.data), 0); /* 32 KiB, the controller takes 16 */
	CHECK(run_until(&r, 0));
	CHECK_EQ(NVME_CQE_SC(r.h.cqe[0].status), NVME_SC_DATA_SGL_LEN_INVALID);
	CHECK(NVME_CQE_DNR(r.h.cqe[0].status));
	CHECK_EQ(r.c.q.refused, 1);
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), 0);  /* and the queue goes on */
	CHECK(run_until(&r, 0));
	CHECK_EQ(r.h.cqe[0].status, 0);
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), 0);
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), -EBUSY); /* a cid in flight */
	CHECK(run_until(&r, 0));
	rig_down(&r);
}

static void test_answer_before_send_completion_runs_no_callback_in_submit(void)
{
	FAKE_ONLY();
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	rv_fake_hold_send_wc(r.p.c, true);
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), 0);
	CHECK(run_until(&r, 0));          /* answered while its send completion is held */
	CHECK(r.h.q.reqs[0].send_pending);
	CHECK_EQ(io(&r, 1, 2, 8, 8, r.h.data + 4096), 0);
	nvrdma_tq_poll(&r.c.q);           /* cid 1's answer is now waiting at the host */
	rv_fake_hold_send_wc(r.p.c, false);
	/* cid 0 again: the submit reaps the send completion and holds cid 1's answer back */
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), 0);
	CHECK(!r.h.callback_in_submit);
	CHECK(!r.h.done[1]);
	CHECK_EQ(nvrdma_hq_poll(&r.h.q) >= 1, 1);
	CHECK(r.h.done[1]);
	CHECK(run_until(&r, 0));
	rig_down(&r);
}

static void test_lying_rkey_fails_the_queue_on_both_sides(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	r.c.lie_rkey = true;
	CHECK_EQ(io(&r, 0, 1, 0, 64, r.h.data), 0);
	CHECK_EQ(io(&r, 1, 2, 64, 8, r.h.data + 65536), 0);
	run_until(&r, 0);
	CHECK(r.c.fatal);
	CHECK(strstr(r.c.why, "remote access") != NULL);
	/* the host's queue pair failed too: its receives flush */
	int rc = 0;
	for (int i = 0; i < 5000 && (rc = nvrdma_hq_poll(&r.h.q)) >= 0; i++)
		test_sleep_ms(1);
	CHECK_EQ(rc, -ECONNRESET);
	CHECK(r.h.q.dead);
	nvrdma_hq_abort_all(&r.h.q, NVME_CQE_STATUS(NVME_SCT_PATH, 0x71));
	CHECK(r.h.done[0] && r.h.done[1]);
	CHECK_EQ(NVME_CQE_SCT(r.h.cqe[0].status), NVME_SCT_PATH);
	CHECK_EQ(io(&r, 2, 2, 0, 8, r.h.data), -ECONNRESET);
	rig_down(&r);
}

static void test_disconnect_is_seen_by_the_slow_path(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	CHECK_EQ(io(&r, 0, 2, 0, 8, r.h.data), 0);
	rv_disconnect(r.p.s);
	/* The controller's CM tells the host (a DISCONNECTED event), or, where that never comes
	 * (soft-RoCE in a loaded TCG guest sent no DREQ within 60 s: its CM had not seen the RTU,
	 * so the passive side's disconnect only moved its queue pair to the error state), the
	 * host's next command finds the dead peer: its send's retries run out and the failed
	 * completion ends the queue. Either way the host's slow path sees it. Hang guards only. */
	bool sent = false;
	for (int i = 0; i < 120000 && !r.h.q.dead; i++) {
		nvrdma_hq_check_events(&r.h.q);
		if (!r.h.q.dead && i >= 2000 && !sent) {
			int rc = io(&r, 1, 1, 64, 8, r.h.data + 65536);
			CHECK(rc == 0 || rc == -ECONNRESET);
			sent = true;
		}
		if (!r.h.q.dead && sent)
			(void)nvrdma_hq_poll(&r.h.q);
		if (!r.h.q.dead)
			test_sleep_ms(1);
	}
	CHECK(r.h.q.dead);
	CHECK_EQ(nvrdma_hq_poll(&r.h.q), -ECONNRESET);
	nvrdma_hq_abort_all(&r.h.q, NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT));
	CHECK(r.h.done[0]);
	int rc = 0;
	for (int i = 0; i < 5000 && (rc = nvrdma_tq_poll(&r.c.q)) >= 0; i++)
		test_sleep_ms(1);
	CHECK_EQ(rc, -ECONNRESET);
	rig_down(&r);
}

static void test_a_short_capsule_ends_the_controller_queue(void)
{
	struct rig r;
	uint16_t rej;
	REQUIRE(rig_up(&r, DEPTH - 1, MAXDATA, &rej) == 0);
	/* a lying host sends 10 bytes where a command must be */
	struct rv_sge s = { r.h.data, 10, r.h.mr->lkey };
	CHECK_EQ(rv_post_send(r.p.c, 99, &s, 1), 0);
	for (int i = 0; i < 5000 && !r.c.fatal; i++) {
		nvrdma_tq_poll(&r.c.q);
		if (!r.c.fatal)
			test_sleep_ms(1);
	}
	CHECK(r.c.fatal);
	CHECK(strstr(r.c.why, "shorter than a command") != NULL);
	rig_down(&r);
}

TEST_MAIN(TEST(test_connect_reject_names_the_field), TEST(test_writes_and_reads_in_capsule_and_keyed),
	  TEST(test_a_deep_queue_of_random_commands_matches_a_model),
	  TEST(test_unregistered_buffer_gets_a_region_of_its_own),
	  TEST(test_controller_refuses_a_transfer_over_its_limit),
	  TEST(test_answer_before_send_completion_runs_no_callback_in_submit),
	  TEST(test_lying_rkey_fails_the_queue_on_both_sides), TEST(test_disconnect_is_seen_by_the_slow_path),
	  TEST(test_a_short_capsule_ends_the_controller_queue))
