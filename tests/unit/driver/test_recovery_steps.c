/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery off the hot path (recovery.c), against a fake controller this test runs itself: a
 * REGISTERS transport registered here ("fake://"), whose admin queue is answered only when the
 * test says so (tick, between polls, never inside one) and whose CSTS.RDY follows CC.EN only
 * at a tick as well. So a poll or submit that waited for an admin command or for CSTS.RDY
 * would never see it come within that call. The test checks:
 *   - no admin wait is entered inside a queue pair's poll or submit: the driver counts those
 *     entered inside their recovery step (admin_waits_in_hot_path), and a wait anywhere else
 *     in them would never see its answer (the fake answers between polls only);
 *   - each recovery admin command goes out only after the previous one was answered, at a
 *     later poll: the state machine advances step by step, it does not wait;
 *   - a command that never completes: ABORT (not found) -> FENCE (Delete SQ, Delete CQ) ->
 *     REBUILD (Create CQ, Create SQ); a submission made while the queue is REBUILDING is
 *     queued without a doorbell until Create SQ completed, then runs; the lost command
 *     completes exactly once with ABORTED_SQ_DELETION, from the queue's own poll;
 *   - a fatal status: RESET (CC.EN 0, RDY 0 at a later step; CC.EN 1, RDY 1 at a later step;
 *     CSTS read a few times per poll, never waited on) -> REINIT (Set Features) -> REBUILD;
 *     the reset counted once, the lost command completed once;
 *   - the device taken away during that reset (its Set Features never answered, as after an
 *     unbind that turned bus mastering off): the reset ends at the next step instead of
 *     waiting out its limit, the lost command is not given back while the device may still
 *     touch it (only "removing"), and the poll that first reports -ENODEV, once the transport
 *     said "removed", is the one that gave it back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unvme/unvme.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "lib/driver/transport.h"
#include "test_util.h"

#define ABORTED NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION)
#define FAKE_QUEUES 4
#define MAX_MAPS 64
#define MAX_LOG 64

/* ---- the fake controller ---- */

struct fake_q {
	bool sq, cq;
	uint64_t sq_iova, cq_iova;
	uint32_t size;      /* entries */
	uint32_t sq_head, sq_tail, cq_tail;
	uint8_t phase;
	uint16_t held[8];   /* cids swallowed: never completed, unless the SQ is deleted */
	int nr_held;
};

static struct fake {
	uint64_t cap;
	uint32_t cc, csts, aqa;
	uint64_t asq, acq;
	struct { void *va; uint64_t iova; size_t len; } maps[MAX_MAPS];
	int nr_maps;
	struct fake_q q[FAKE_QUEUES + 1]; /* 0: admin */
	bool defer_admin;   /* admin commands wait for tick() */
	bool defer_ready;   /* CSTS.RDY follows CC.EN at tick() */
	bool rdy_pending;
	int swallow;        /* I/O commands to keep for ever */
	bool mute;          /* bus mastering off: admin commands are never answered */
	bool gone;          /* pulled out: registers read all ones */
	uint8_t log[MAX_LOG];     /* admin opcodes, in the order they were answered */
	uint64_t log_sent_poll[MAX_LOG]; /* the test's poll count when each was submitted */
	uint64_t log_done_tick[MAX_LOG]; /* the tick that answered it */
	int nr_log;
	uint32_t admin_seen_tail; /* admin SQ entries already stamped with a poll count */
	uint64_t sent_at[64];     /* by admin SQ slot: the poll count at its doorbell */
	int bad_doorbells;  /* an I/O SQ doorbell for a queue the device does not have */
	int cc_en_writes[2];      /* CC writes clearing / setting EN */
	int csts_reads_in_call, max_csts_reads_in_call; /* while an RDY change is pending */
} fk;

static int hot;             /* inside the test's poll or submit */
static uint64_t polls, ticks;

static void *va(uint64_t iova)
{
	for (int i = 0; i < fk.nr_maps; i++)
		if (iova >= fk.maps[i].iova && iova < fk.maps[i].iova + fk.maps[i].len)
			return (char *)fk.maps[i].va + (iova - fk.maps[i].iova);
	fprintf(stderr, "  fake: iova 0x%llx is not mapped\n", (unsigned long long)iova);
	abort();
}

static void post(struct fake_q *q, uint16_t sqid, uint16_t cid, int status, uint32_t dw0)
{
	struct nvme_cqe *cq = va(q->cq_iova);
	struct nvme_cqe e = { .dw0 = dw0, .sqhd = (uint16_t)q->sq_head, .sqid = sqid, .cid = cid,
			      .status = (uint16_t)(NVME_CQE_STATUS(status >> 8, status & 0xff) |
						   q->phase) };
	cq[q->cq_tail] = e;
	if (++q->cq_tail == q->size) {
		q->cq_tail = 0;
		q->phase ^= 1u;
	}
}

static int admin_one(const struct nvme_sqe *cmd, uint32_t *dw0)
{
	uint16_t qid = (uint16_t)cmd->cdw10;
	uint32_t size = (cmd->cdw10 >> 16) + 1;
	*dw0 = 0;
	switch (cmd->opc) {
	case NVME_ADM_IDENTIFY:
		memset(va(cmd->prp1), 0, 4096);
		return 0;
	case NVME_ADM_SET_FEATURES:
		*dw0 = (FAKE_QUEUES - 1u) << 16 | (FAKE_QUEUES - 1u);
		return 0;
	case NVME_ADM_CREATE_CQ:
		if (qid == 0 || qid > FAKE_QUEUES || fk.q[qid].cq)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
		fk.q[qid] = (struct fake_q){ .cq = true, .cq_iova = cmd->prp1, .size = size, .phase = 1 };
		return 0;
	case NVME_ADM_CREATE_SQ:
		if (qid == 0 || qid > FAKE_QUEUES || !fk.q[qid].cq || fk.q[qid].sq)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
		fk.q[qid].sq = true;
		fk.q[qid].sq_iova = cmd->prp1;
		fk.q[qid].sq_head = fk.q[qid].sq_tail = 0;
		return 0;
	case NVME_ADM_DELETE_SQ:
		if (qid == 0 || qid > FAKE_QUEUES || !fk.q[qid].sq)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
		/* what it held completes as aborted by the deletion (the host must not reap
		 * it: it completes once, from the rebuild) */
		for (int i = 0; i < fk.q[qid].nr_held; i++)
			post(&fk.q[qid], qid, fk.q[qid].held[i], ABORTED, 0);
		fk.q[qid].nr_held = 0;
		fk.q[qid].sq = false;
		return 0;
	case NVME_ADM_DELETE_CQ:
		if (qid == 0 || qid > FAKE_QUEUES || !fk.q[qid].cq || fk.q[qid].sq)
			return NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
		fk.q[qid].cq = false;
		return 0;
	case NVME_ADM_ABORT:
		*dw0 = 1; /* not aborted: the command is lost for good */
		return 0;
	default:
		return 0;
	}
}

static void admin_run(void)
{
	struct fake_q *q = &fk.q[0];
	if (!q->sq || fk.mute)
		return;
	struct nvme_sqe *sq = va(q->sq_iova);
	while (q->sq_head != q->sq_tail) {
		uint32_t slot = q->sq_head;
		struct nvme_sqe cmd = sq[slot];
		q->sq_head = (q->sq_head + 1) % q->size;
		uint32_t dw0;
		int st = admin_one(&cmd, &dw0);
		if (fk.nr_log < MAX_LOG) {
			fk.log[fk.nr_log] = cmd.opc;
			fk.log_sent_poll[fk.nr_log] = fk.sent_at[slot % 64];
			fk.log_done_tick[fk.nr_log] = ticks;
			fk.nr_log++;
		}
		post(q, 0, cmd.cid, st, dw0);
	}
}

static void io_run(uint16_t qid)
{
	struct fake_q *q = &fk.q[qid];
	struct nvme_sqe *sq = va(q->sq_iova);
	while (q->sq_head != q->sq_tail) {
		struct nvme_sqe cmd = sq[q->sq_head];
		q->sq_head = (q->sq_head + 1) % q->size;
		if (fk.swallow > 0 && q->nr_held < 8) {
			fk.swallow--;
			q->held[q->nr_held++] = cmd.cid;
			continue;
		}
		post(q, qid, cmd.cid, 0, 0);
	}
}

static void ready_follows_enable(void)
{
	fk.rdy_pending = false;
	if (fk.cc & NVME_CC_EN)
		fk.csts = (fk.csts & ~NVME_CSTS_CFS) | NVME_CSTS_RDY;
	else
		fk.csts &= ~(NVME_CSTS_RDY | NVME_CSTS_CFS);
}

/* The device's time: what it deferred happens now (never inside a poll or submit). */
static void tick(void)
{
	REQUIRE(hot == 0);
	ticks++;
	if (fk.rdy_pending)
		ready_follows_enable();
	admin_run();
}

static void fake_write_cc(uint32_t val)
{
	bool was = fk.cc & NVME_CC_EN, now = val & NVME_CC_EN;
	fk.cc = val;
	if (val & NVME_CC_SHN_SET(3))
		fk.csts |= NVME_CSTS_SHST_SET(NVME_CSTS_SHST_COMPLETE); /* nothing to flush */
	if (was == now)
		return;
	fk.cc_en_writes[now]++;
	if (!now) {
		/* disabled: every queue gone */
		for (int i = 0; i <= FAKE_QUEUES; i++)
			fk.q[i] = (struct fake_q){0};
	} else {
		fk.q[0] = (struct fake_q){ .sq = true, .cq = true, .sq_iova = fk.asq, .cq_iova = fk.acq,
					   .size = NVME_AQA_ASQS(fk.aqa) + 1, .phase = 1 };
	}
	if (fk.defer_ready)
		fk.rdy_pending = true;
	else
		ready_follows_enable();
}

static uint32_t fake_read32(void *ctx, uint32_t off)
{
	(void)ctx;
	if (fk.gone)
		return UINT32_MAX;
	switch (off) {
	case NVME_REG_CSTS:
		if (fk.rdy_pending && hot) {
			fk.csts_reads_in_call++;
			if (fk.csts_reads_in_call > fk.max_csts_reads_in_call)
				fk.max_csts_reads_in_call = fk.csts_reads_in_call;
		}
		return fk.csts;
	case NVME_REG_CC: return fk.cc;
	case NVME_REG_VS: return 0x20000;
	case NVME_REG_AQA: return fk.aqa;
	default: return 0;
	}
}

static void fake_write32(void *ctx, uint32_t off, uint32_t val)
{
	(void)ctx;
	if (off == NVME_REG_CC) {
		fake_write_cc(val);
		return;
	}
	if (off == NVME_REG_AQA) {
		fk.aqa = val;
		return;
	}
	if (off < NVME_REG_DBS)
		return;
	uint32_t idx = (off - NVME_REG_DBS) / 4, qid = idx / 2;
	if (qid > FAKE_QUEUES)
		return;
	if (idx % 2)
		return; /* a CQ head: the fake never runs out of CQ room in these tests */
	struct fake_q *q = &fk.q[qid];
	if (!q->sq) {
		fk.bad_doorbells++;
		return;
	}
	if (qid == 0) {
		for (uint32_t s = q->sq_tail; s != val; s = (s + 1) % q->size)
			fk.sent_at[s % 64] = polls;
	}
	q->sq_tail = val;
	if (qid == 0) {
		if (!fk.defer_admin)
			admin_run();
	} else {
		io_run((uint16_t)qid);
	}
}

static uint64_t fake_read64(void *ctx, uint32_t off)
{
	(void)ctx;
	if (off == NVME_REG_CAP)
		return fk.cap;
	if (off == NVME_REG_ASQ)
		return fk.asq;
	if (off == NVME_REG_ACQ)
		return fk.acq;
	return 0;
}

static void fake_write64(void *ctx, uint32_t off, uint64_t val)
{
	(void)ctx;
	if (off == NVME_REG_ASQ)
		fk.asq = val;
	else if (off == NVME_REG_ACQ)
		fk.acq = val;
}

static int fake_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	(void)ctx;
	if (fk.nr_maps == MAX_MAPS)
		return -ENOMEM;
	fk.maps[fk.nr_maps].va = vaddr;
	fk.maps[fk.nr_maps].iova = iova;
	fk.maps[fk.nr_maps].len = len;
	fk.nr_maps++;
	return 0;
}

static void fake_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	(void)ctx;
	(void)len;
	for (int i = 0; i < fk.nr_maps; i++) {
		if (fk.maps[i].iova == iova) {
			fk.maps[i] = fk.maps[--fk.nr_maps];
			return;
		}
	}
}

static int fake_attach(struct unvme_ctrlr *c, const char *address)
{
	(void)address;
	memset(&fk, 0, sizeof(fk)); /* (the mapper maps every DMA chunk after the attach) */
	/* MQES 63, CQR, TO 1 s, DSTRD 0, CSS NVM, MPSMIN 0 */
	fk.cap = 63u | 1u << 16 | (uint64_t)2 << 24 | (uint64_t)NVME_CAP_CSS_NVM << 37;
	c->transport_ctx = &fk;
	snprintf(c->transport_info, sizeof(c->transport_info), "the test's fake controller");
	return 0;
}

static void fake_detach(struct unvme_ctrlr *c)
{
	c->transport_ctx = NULL;
}

static int fake_matches(const char *address)
{
	return strncmp(address, "fake://", 7) == 0;
}

static const struct unvme_transport_ops fake_ops = {
	.attach = fake_attach, .detach = fake_detach,
	.read32 = fake_read32, .write32 = fake_write32,
	.read64 = fake_read64, .write64 = fake_write64,
	.dma_map = fake_dma_map, .dma_unmap = fake_dma_unmap,
};
static const char *const fake_schemes[] = { "fake://", NULL };
static const struct unvme_transport fake_transport = {
	.name = "fake", .schemes = fake_schemes, .kind = UNVME_TRANSPORT_REGISTERS, .rank = 99,
	.matches = fake_matches, .ops = &fake_ops,
};
UNVME_TRANSPORT_REGISTER(fake_transport)

/* ---- the host side, bracketed ---- */

struct cmd_seen {
	int count, status;
};

static void seen_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct cmd_seen *s = arg;
	s->count++;
	s->status = NVME_STATUS_FROM_CQE(cpl->status);
}

static int poll_once(struct unvme_qpair *qp)
{
	hot++;
	polls++;
	fk.csts_reads_in_call = 0;
	int rc = unvme_qpair_poll(qp, 0);
	hot--;
	return rc;
}

/* A poll that must not fail: false (reported) when it did. */
static bool poll_ok(struct unvme_qpair *qp)
{
	int rc = poll_once(qp);
	if (rc < 0) {
		fprintf(stderr, "  poll: %d: %s\n", rc, unvme_errmsg());
		CHECK(rc >= 0);
		return false;
	}
	return true;
}

static int submit(struct unvme_qpair *qp, struct cmd_seen *s)
{
	struct nvme_sqe cmd = { .opc = 0x00 /* Flush */, .nsid = 1 };
	hot++;
	fk.csts_reads_in_call = 0;
	int rc = unvme_qpair_submit(qp, &cmd, NULL, 0, seen_cb, s);
	hot--;
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct unvme_ctrlr *open_fake(const char *uri)
{
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	o.admin_timeout_ms = 2000;
	o.num_io_queues = FAKE_QUEUES;
	struct unvme_ctrlr *c = NULL;
	if (unvme_ctrlr_open(uri, &o, &c) != 0)
		fprintf(stderr, "  open %s: %s\n", uri, unvme_errmsg());
	return c;
}

/* Where opc first appears in the admin log from index from on, or -1. */
static int log_find(int from, uint8_t opc)
{
	for (int i = from; i < fk.nr_log; i++)
		if (fk.log[i] == opc)
			return i;
	return -1;
}

/* Each command of the chain went out at a poll after the tick that answered the one before:
 * the machine took a step per answer, it did not wait for it inside a poll. */
static void check_chain(const int *idx, int n)
{
	for (int i = 0; i < n; i++)
		REQUIRE(idx[i] >= 0);
	for (int i = 1; i < n; i++) {
		CHECK(idx[i] > idx[i - 1]);
		CHECK(fk.log_sent_poll[idx[i]] > 0);
		CHECK(fk.log_done_tick[idx[i]] > fk.log_done_tick[idx[i - 1]]);
	}
}

static void test_timeout_abort_fence_rebuild(void)
{
	uint32_t nested0 = admin_waits_in_hot_path();
	struct unvme_ctrlr *c = open_fake("fake://timeout");
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 8, .timeout_ms = 20 };
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct cmd_seen lost = {0}, fine = {0}, during = {0};
	fk.swallow = 1;
	CHECK_EQ(submit(qp, &lost), 0);
	CHECK_EQ(submit(qp, &fine), 0);
	/* from here on the fake answers admin commands only between polls */
	fk.defer_admin = true;
	int from = fk.nr_log;
	bool submitted_during = false;
	double end = now_s() + 20;
	while ((lost.count == 0 || during.count == 0) && now_s() < end) {
		if (!poll_ok(qp))
			break;
		tick();
		/* Create I/O CQ answered, Create I/O SQ not yet: the queue is REBUILDING */
		if (!submitted_during && log_find(from, NVME_ADM_CREATE_CQ) >= 0 &&
		    log_find(from, NVME_ADM_CREATE_SQ) < 0 && qp->rec != QP_REC_NONE) {
			CHECK_EQ(submit(qp, &during), 0); /* queued, no doorbell */
			submitted_during = true;
			CHECK_EQ(fk.bad_doorbells, 0);
		}
	}
	CHECK(submitted_during);
	CHECK_EQ(fine.count, 1);
	CHECK_EQ(fine.status, 0);
	CHECK_EQ(lost.count, 1);
	CHECK_EQ(lost.status, ABORTED);
	CHECK_EQ(during.count, 1);
	CHECK_EQ(during.status, 0);
	CHECK_EQ(fk.bad_doorbells, 0);
	int chain[5] = { log_find(from, NVME_ADM_ABORT), log_find(from, NVME_ADM_DELETE_SQ),
			 log_find(from, NVME_ADM_DELETE_CQ), log_find(from, NVME_ADM_CREATE_CQ),
			 log_find(from, NVME_ADM_CREATE_SQ) };
	check_chain(chain, 5);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0); /* the queue alone was fenced */
	CHECK_EQ(unvme_qpair_outstanding(qp), 0);
	/* it works, and polling more completes nothing twice */
	struct cmd_seen after = {0};
	CHECK_EQ(submit(qp, &after), 0);
	for (int i = 0; i < 10; i++)
		CHECK(poll_once(qp) >= 0);
	CHECK_EQ(after.count, 1);
	CHECK_EQ(lost.count, 1);
	CHECK_EQ(admin_waits_in_hot_path(), nested0);
	fk.defer_admin = false;
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* A controller with one queue pair holding a command the device keeps (lost); from here on
 * the fake answers admin commands and moves CSTS.RDY only at tick(). NULL on failure. */
static struct unvme_ctrlr *open_with_lost(const char *uri, struct unvme_qpair **qp,
					  struct cmd_seen *lost)
{
	struct unvme_ctrlr *c = open_fake(uri);
	struct unvme_qpair_opts o = { .depth = 8, .timeout_ms = 5000 };
	if (!c || unvme_qpair_create(c, &o, qp) != 0) {
		if (c)
			unvme_ctrlr_close(c);
		return NULL;
	}
	fk.swallow = 1;
	CHECK_EQ(submit(*qp, lost), 0);
	CHECK_EQ(poll_once(*qp), 0);
	fk.defer_admin = true;
	fk.defer_ready = true;
	return c;
}

/* No admin wait was entered inside a poll or submit; the fake answers at once again. */
static void finish(struct unvme_ctrlr *c, struct unvme_qpair *qp, uint32_t nested0)
{
	CHECK_EQ(admin_waits_in_hot_path(), nested0);
	fk.defer_admin = false;
	fk.defer_ready = false;
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_fatal_reset_rebuild(void)
{
	uint32_t nested0 = admin_waits_in_hot_path();
	struct unvme_qpair *qp;
	struct cmd_seen lost = {0};
	struct unvme_ctrlr *c = open_with_lost("fake://fatal", &qp, &lost);
	REQUIRE(c != NULL);
	int from = fk.nr_log;
	int en0 = fk.cc_en_writes[0], en1 = fk.cc_en_writes[1];
	fk.csts |= NVME_CSTS_CFS;
	double end = now_s() + 20;
	while ((lost.count == 0 || qp->failed) && now_s() < end) {
		if (!poll_ok(qp))
			break;
		tick();
	}
	CHECK_EQ(lost.count, 1);
	CHECK_EQ(lost.status, ABORTED);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 1);
	CHECK_EQ(unvme_ctrlr_is_failed(c), 0);
	CHECK_EQ(fk.cc_en_writes[0], en0 + 1);
	CHECK_EQ(fk.cc_en_writes[1], en1 + 1);
	/* RDY was looked at a few times per poll while it changed, never waited on */
	CHECK(fk.max_csts_reads_in_call >= 1);
	CHECK(fk.max_csts_reads_in_call <= 4);
	int chain[3] = { log_find(from, NVME_ADM_SET_FEATURES), log_find(from, NVME_ADM_CREATE_CQ),
			 log_find(from, NVME_ADM_CREATE_SQ) };
	check_chain(chain, 3);
	CHECK_EQ(fk.bad_doorbells, 0);
	struct cmd_seen after = {0};
	CHECK_EQ(submit(qp, &after), 0);
	for (int i = 0; i < 10 && after.count == 0; i++)
		CHECK(poll_once(qp) >= 0);
	CHECK_EQ(after.count, 1);
	CHECK_EQ(after.status, 0);
	CHECK_EQ(lost.count, 1);
	finish(c, qp, nested0);
}

static void test_removed_during_reset(void)
{
	uint32_t nested0 = admin_waits_in_hot_path();
	struct unvme_qpair *qp;
	struct cmd_seen lost = {0};
	struct unvme_ctrlr *c = open_with_lost("fake://removed", &qp, &lost);
	REQUIRE(c != NULL);
	fk.csts |= NVME_CSTS_CFS;
	double end = now_s() + 20;
	while (atomic_load(&c->rec_phase) != CTRLR_REC_REINIT && now_s() < end) {
		REQUIRE(poll_once(qp) >= 0);
		if (atomic_load(&c->rec_phase) == CTRLR_REC_REINIT)
			break;
		tick();
	}
	REQUIRE(atomic_load(&c->rec_phase) == CTRLR_REC_REINIT);
	/* the unbind: bus mastering off first (Set Features is never answered) */
	fk.mute = true;
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(poll_once(qp), 0);
		tick();
	}
	CHECK_EQ(lost.count, 0);
	/* the transport: removing, the registers gone */
	ctrlr_hotplug_removing(c);
	fk.gone = true;
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(poll_once(qp), 0); /* nothing decided while the device may touch memory */
		tick();
	}
	CHECK_EQ(atomic_load(&c->rec_phase), CTRLR_REC_IDLE); /* the reset ended at once */
	CHECK_EQ(lost.count, 0);
	/* the transport: the device touches nothing any more */
	ctrlr_hotplug_removed(c);
	int rc = poll_once(qp);
	CHECK_EQ(rc, -ENODEV);
	CHECK_EQ(lost.count, 1); /* given back by the poll that reported it */
	CHECK_EQ(lost.status, ABORTED);
	CHECK_EQ(poll_once(qp), -ENODEV);
	CHECK_EQ(lost.count, 1);
	struct cmd_seen after = {0};
	CHECK_EQ(submit(qp, &after), -ENODEV);
	CHECK_EQ(after.count, 0);
	finish(c, qp, nested0);
}

TEST_MAIN(TEST(test_timeout_abort_fence_rebuild), TEST(test_fatal_reset_rebuild),
	  TEST(test_removed_during_reset))
