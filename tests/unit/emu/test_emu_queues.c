/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue mechanics (NVMe Base 2.0, 3.3, 4.1, 5.3-5.6): create/delete checks, ring wrap and
 * phase tags, CQ-full back-pressure, invalid doorbell writes, CQs shared by several SQs.
 * Ring behaviour is checked in both execution modes.
 */
#include <stdio.h>

#include "emu_test_host.h"
#include "tests/unit/test_util.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)

static int create_cq(struct th *h, uint16_t qid, uint32_t entries, uint64_t base, uint32_t cdw11)
{
	struct nvme_sqe c = { .opc = NVME_ADM_CREATE_CQ, .prp1 = base,
			      .cdw10 = (entries - 1) << 16 | qid, .cdw11 = cdw11 };
	return th_admin(h, &c, NULL);
}

static int create_sq(struct th *h, uint16_t qid, uint32_t entries, uint64_t base, uint16_t cqid,
		     uint32_t pc)
{
	struct nvme_sqe s = { .opc = NVME_ADM_CREATE_SQ, .prp1 = base,
			      .cdw10 = (entries - 1) << 16 | qid, .cdw11 = (uint32_t)cqid << 16 | pc };
	return th_admin(h, &s, NULL);
}

static int delete_q(struct th *h, uint8_t opc, uint16_t qid)
{
	struct nvme_sqe d = { .opc = opc, .cdw10 = qid };
	return th_admin(h, &d, NULL);
}

static int set_num_queues(struct th *h, uint32_t nsq, uint32_t ncq, uint32_t *dw0)
{
	struct nvme_cqe e;
	struct nvme_sqe s = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES,
			      .cdw11 = (ncq - 1) << 16 | (nsq - 1) };
	int st = th_admin(h, &s, &e);
	if (dw0)
		*dw0 = e.dw0;
	return st;
}

static void test_create_delete_checks(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t?ns=mem:1M&queues=8&mqes=64") == 0);
	REQUIRE((th_enable(&h, 16, 16) & NVME_CSTS_RDY) != 0);
	uint32_t dw0;
	CHECK_EQ(set_num_queues(&h, 2, 3, &dw0), 0);
	CHECK_EQ(dw0, (2u << 16) | 1u);
	/* more than the controller has: granted the maximum */
	CHECK_EQ(set_num_queues(&h, 100, 100, &dw0), 0);
	CHECK_EQ(dw0, (7u << 16) | 7u);
	CHECK_EQ(set_num_queues(&h, 0x10000, 1, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK_EQ(set_num_queues(&h, 2, 2, &dw0), 0);

	uint64_t ring, ring2;
	th_alloc(&h, 64 * 64, 4096, &ring);
	th_alloc(&h, 64 * 64, 4096, &ring2);
	const int invalid_qid = ST(NVME_SCT_CMD, NVME_SC_INVALID_QID);
	const int invalid_size = ST(NVME_SCT_CMD, NVME_SC_INVALID_QSIZE);
	const int invalid_field = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	const int prp_offset = ST(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID);

	/* Create I/O CQ */
	CHECK_EQ(create_cq(&h, 0, 16, ring, 1), invalid_qid);
	CHECK_EQ(create_cq(&h, 3, 16, ring, 1), invalid_qid); /* above the 2 granted */
	CHECK_EQ(create_cq(&h, 1, 1, ring, 1), invalid_size);
	CHECK_EQ(create_cq(&h, 1, 65, ring, 1), invalid_size); /* above MQES + 1 */
	CHECK_EQ(create_cq(&h, 1, 16, ring, 0), invalid_field); /* PC = 0 */
	CHECK_EQ(create_cq(&h, 1, 16, ring + 512, 1), prp_offset);
	CHECK_EQ(create_cq(&h, 1, 16, 0x7000, 1), invalid_field); /* not mapped */
	CHECK_EQ(create_cq(&h, 1, 16, ring, 1 | NVME_CREATE_CQ_IEN | (100u << 16)),
		 ST(NVME_SCT_CMD, NVME_SC_INVALID_INT_VECTOR));
	CHECK_EQ(create_cq(&h, 1, 64, ring, 1 | NVME_CREATE_CQ_IEN | (1u << 16)), 0);
	CHECK_EQ(create_cq(&h, 1, 16, ring, 1), invalid_qid); /* exists */

	/* Create I/O SQ */
	const int cq_invalid = ST(NVME_SCT_CMD, NVME_SC_CQ_INVALID);
	CHECK_EQ(create_sq(&h, 0, 16, ring2, 1, 1), invalid_qid);
	CHECK_EQ(create_sq(&h, 3, 16, ring2, 1, 1), invalid_qid);
	CHECK_EQ(create_sq(&h, 1, 16, ring2, 2, 1), cq_invalid); /* CQ 2 does not exist */
	CHECK_EQ(create_sq(&h, 1, 16, ring2, 0, 1), cq_invalid); /* the admin CQ */
	CHECK_EQ(create_sq(&h, 1, 1, ring2, 1, 1), invalid_size);
	CHECK_EQ(create_sq(&h, 1, 65, ring2, 1, 1), invalid_size);
	CHECK_EQ(create_sq(&h, 1, 16, ring2, 1, 0), invalid_field);
	CHECK_EQ(create_sq(&h, 1, 16, ring2 + 64, 1, 1), prp_offset);
	CHECK_EQ(create_sq(&h, 1, 16, 0x7000, 1, 1), invalid_field);
	CHECK_EQ(create_sq(&h, 1, 64, ring2, 1, 1), 0);
	CHECK_EQ(create_sq(&h, 1, 16, ring2, 1, 1), invalid_qid);

	/* Delete */
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), ST(NVME_SCT_CMD, NVME_SC_INVALID_QUEUE_DELETION));
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 0), invalid_qid);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 0), invalid_qid);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 2), invalid_qid);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 100), invalid_qid);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 1), 0);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 1), invalid_qid);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), 0);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), invalid_qid);
	/* the QID is free again */
	CHECK_EQ(create_cq(&h, 1, 16, ring, 1), 0);
	th_close(&h);
}

/* A ring must lie in one IOMMU mapping for its whole length. */
static void test_ring_past_mapping(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	REQUIRE((th_enable(&h, 16, 16) & NVME_CSTS_RDY) != 0);
	const uint64_t last_page = TH_IOVA_BASE + TH_ARENA_SIZE - 4096;
	CHECK_EQ(create_cq(&h, 1, 1024, last_page, 1), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK_EQ(create_cq(&h, 1, 256, last_page, 1), 0); /* exactly one page: fits */
	CHECK_EQ(create_sq(&h, 1, 256, last_page - 8192, 1, 1), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	CHECK_EQ(create_sq(&h, 1, 256, last_page - 12288, 1, 1), 0); /* 16 KiB: fits */
	/* the admin queue too: CFS */
	th_write32(&h, NVME_REG_CC, 0);
	th_write32(&h, NVME_REG_AQA, NVME_AQA_MAKE(4096, 2));
	th_write64(&h, NVME_REG_ASQ, last_page);
	th_write32(&h, NVME_REG_CC, NVME_CC_EN);
	CHECK_EQ(th_read32(&h, NVME_REG_CSTS) & (NVME_CSTS_RDY | NVME_CSTS_CFS), NVME_CSTS_CFS);
	th_close(&h);
}

/* Entry sizes must be set in CC before I/O queues are created. */
static void test_entry_sizes_required(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	th_write32(&h, NVME_REG_CC, 0);
	th_write32(&h, NVME_REG_CC, NVME_CC_EN); /* IOSQES = IOCQES = 0 */
	REQUIRE((th_read32(&h, NVME_REG_CSTS) & NVME_CSTS_RDY) != 0);
	h.admin.sq_tail = h.admin.cq_head = 0;
	h.admin.phase = 1;
	memset(h.admin.cq, 0, 8 * sizeof(struct nvme_cqe));
	uint64_t ring;
	th_alloc(&h, 4096, 4096, &ring);
	CHECK_EQ(create_cq(&h, 1, 16, ring, 1), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	th_close(&h);
}

/* Submits one read at a time for several laps of a 4-entry ring: phase flips each lap, SQ
 * head and CID are reported. */
static void ring_laps(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 4, 4) & NVME_CSTS_RDY) != 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 4) == 0);
	uint8_t *buf = th_alloc(&h, 4096, 4096, NULL);
	uint8_t expect_phase = 1;
	for (int i = 0; i < 20; i++) {
		struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = 1, .prp1 = th_iova(&h, buf) };
		uint16_t cid = th_place(&q, &cmd, false);
		th_ring_sq(&h, &q);
		struct nvme_cqe e;
		uint32_t slot = q.cq_head;
		REQUIRE(th_poll(&h, &q, &e, 2000, true));
		CHECK_EQ(e.status, expect_phase); /* success, phase of this lap */
		CHECK_EQ(e.cid, cid);
		CHECK_EQ(e.sqid, 1);
		CHECK_EQ(e.sqhd, (uint32_t)(i + 1) % 4);
		if (slot == 3)
			expect_phase ^= 1;
	}
	/* full batches of size - 1 */
	for (int lap = 0; lap < 6; lap++) {
		for (int i = 0; i < 3; i++) {
			struct nvme_sqe cmd = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
			th_place(&q, &cmd, false);
		}
		th_ring_sq(&h, &q);
		for (int i = 0; i < 3; i++) {
			struct nvme_cqe e;
			REQUIRE(th_poll(&h, &q, &e, 2000, false));
			CHECK_EQ(th_status(&e), 0);
		}
		th_ring_cq(&h, &q);
	}
	/* the admin queue wraps too */
	uint8_t *id = th_alloc(&h, 4096, 4096, NULL);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(th_identify(&h, NVME_CNS_CTRL, 0, 0, id), 0);
	th_close(&h);
}

static void test_ring_laps_inline(void) { ring_laps("emu://t?ns=mem:1M"); }
static void test_ring_laps_thread(void) { ring_laps("emu://t?ns=mem:1M&mode=thread"); }

/* With the CQ full the device stops fetching, and resumes when the host frees entries. */
static void cq_backpressure(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue q;
	memset(&q, 0, sizeof(q));
	q.qid = 1;
	q.sq_size = 16;
	q.cq_size = 4; /* three usable slots */
	q.phase = 1;
	q.sq = th_alloc(&h, 16 * 64, 4096, &q.sq_iova);
	q.cq = th_alloc(&h, 4 * 16, 4096, &q.cq_iova);
	REQUIRE(create_cq(&h, 1, 4, q.cq_iova, 1) == 0);
	REQUIRE(create_sq(&h, 1, 16, q.sq_iova, 1, 1) == 0);
	for (int i = 0; i < 10; i++) {
		struct nvme_sqe cmd = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
		th_place(&q, &cmd, false);
	}
	th_ring_sq(&h, &q);
	/* three completions, then nothing: the fourth slot stays untouched */
	struct nvme_cqe e;
	for (int i = 0; i < 3; i++) {
		REQUIRE(th_poll(&h, &q, &e, 2000, false));
		CHECK_EQ(e.cid, i);
		CHECK_EQ(e.sqhd, i + 1);
	}
	CHECK(!th_poll(&h, &q, &e, 50, false));
	CHECK_EQ(q.cq[3].status, 0);
	/* free the three entries: the device continues */
	th_ring_cq(&h, &q);
	int got = 3;
	while (got < 10) {
		if (!th_poll(&h, &q, &e, 2000, true))
			break;
		CHECK_EQ(e.cid, got);
		CHECK_EQ(th_status(&e), 0);
		got++;
	}
	CHECK_EQ(got, 10);
	th_close(&h);
}

static void test_cq_backpressure_inline(void) { cq_backpressure("emu://t?ns=mem:1M"); }
static void test_cq_backpressure_thread(void) { cq_backpressure("emu://t?ns=mem:1M&mode=thread"); }

/* Two SQs feeding one CQ (allowed by the spec): all completions arrive, tagged with their
 * SQ; the CQ cannot be deleted while either SQ exists. */
static void shared_cq(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue a, b;
	REQUIRE(th_create_qpair(&h, &a, 1, 64) == 0);
	memset(&b, 0, sizeof(b));
	b.qid = 2;
	b.sq_size = 16;
	b.sq = th_alloc(&h, 16 * 64, 4096, &b.sq_iova);
	REQUIRE(create_sq(&h, 2, 16, b.sq_iova, 1, 1) == 0);
	int per_sqid[3] = { 0 };
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 5; i++) {
			struct nvme_sqe cmd = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
			th_place(&a, &cmd, false);
			struct nvme_sqe cmd2 = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
			th_place(&b, &cmd2, false);
		}
		th_ring_sq(&h, &a);
		th_ring_sq(&h, &b);
		for (int i = 0; i < 10; i++) {
			struct nvme_cqe e;
			REQUIRE(th_poll(&h, &a, &e, 2000, true));
			CHECK_EQ(th_status(&e), 0);
			if (e.sqid == 1 || e.sqid == 2)
				per_sqid[e.sqid]++;
		}
	}
	CHECK_EQ(per_sqid[1], 100);
	CHECK_EQ(per_sqid[2], 100);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), ST(NVME_SCT_CMD, NVME_SC_INVALID_QUEUE_DELETION));
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 1), 0);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), ST(NVME_SCT_CMD, NVME_SC_INVALID_QUEUE_DELETION));
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_SQ, 2), 0);
	CHECK_EQ(delete_q(&h, NVME_ADM_DELETE_CQ, 1), 0);
	th_close(&h);
}

static void test_shared_cq_inline(void) { shared_cq("emu://t?ns=mem:1M"); }
static void test_shared_cq_thread(void) { shared_cq("emu://t?ns=mem:1M&mode=thread"); }

/* Two SQs stopped on one full CQ both resume when the host frees entries. */
static void shared_cq_backpressure(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue a, b;
	memset(&a, 0, sizeof(a));
	a.qid = 1;
	a.sq_size = 16;
	a.cq_size = 4;
	a.phase = 1;
	a.sq = th_alloc(&h, 16 * 64, 4096, &a.sq_iova);
	a.cq = th_alloc(&h, 4 * 16, 4096, &a.cq_iova);
	REQUIRE(create_cq(&h, 1, 4, a.cq_iova, 1) == 0);
	REQUIRE(create_sq(&h, 1, 16, a.sq_iova, 1, 1) == 0);
	b = a;
	b.qid = 2;
	b.sq = th_alloc(&h, 16 * 64, 4096, &b.sq_iova);
	REQUIRE(create_sq(&h, 2, 16, b.sq_iova, 1, 1) == 0);
	for (int i = 0; i < 5; i++) {
		struct nvme_sqe cmd = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
		th_place(&a, &cmd, false);
		struct nvme_sqe cmd2 = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
		th_place(&b, &cmd2, false);
	}
	th_ring_sq(&h, &a);
	th_ring_sq(&h, &b);
	int per_sqid[3] = { 0 }, got = 0;
	struct nvme_cqe e;
	/* consume without freeing: at most three fit */
	while (got < 3 && th_poll(&h, &a, &e, 2000, false)) {
		per_sqid[e.sqid % 3]++;
		got++;
	}
	CHECK_EQ(got, 3);
	CHECK(!th_poll(&h, &a, &e, 50, false));
	th_ring_cq(&h, &a);
	while (got < 10 && th_poll(&h, &a, &e, 2000, true)) {
		CHECK_EQ(th_status(&e), 0);
		per_sqid[e.sqid % 3]++;
		got++;
	}
	CHECK_EQ(got, 10);
	CHECK_EQ(per_sqid[1], 5);
	CHECK_EQ(per_sqid[2], 5);
	th_close(&h);
}

static void test_shared_cq_backpressure_inline(void) { shared_cq_backpressure("emu://t?ns=mem:1M"); }
static void test_shared_cq_backpressure_thread(void) { shared_cq_backpressure("emu://t?ns=mem:1M&mode=thread"); }

static void submit_aer(struct th *h)
{
	struct nvme_sqe aer = { .opc = NVME_ADM_ASYNC_EVENT };
	th_place(&h->admin, &aer, false);
	th_ring_sq(h, &h->admin);
}

/* Bad doorbell writes are ignored, logged, and reported through Asynchronous Events. */
static void invalid_doorbells(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	submit_aer(&h);
	submit_aer(&h);
	struct nvme_cqe e;
	CHECK(!th_poll(&h, &h.admin, &e, 20, false)); /* held */

	/* doorbell of queue 5, which does not exist */
	uint32_t off = nvme_sq_doorbell_offset(5, h.dstrd);
	th_write32(&h, off, 1);
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	CHECK_EQ(th_status(&e), 0);
	CHECK_EQ(e.dw0, 0x00 | 0x00 << 8 | NVME_LOG_ERROR << 16);

	/* value past the queue's end: ignored, but the event type is masked until the log
	 * page is read, so the second AER stays outstanding */
	th_write32(&h, nvme_sq_doorbell_offset(1, h.dstrd), 16);
	th_write32(&h, nvme_cq_doorbell_offset(1, h.dstrd), 99);
	CHECK(!th_poll(&h, &h.admin, &e, 50, true));
	struct nvme_error_log *log = th_alloc(&h, 4096, 4096, NULL);
	struct nvme_sqe glp = { .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = NVME_LOG_ERROR | 1023u << 16,
				.prp1 = th_iova(&h, log) };
	th_place(&h.admin, &glp, false);
	th_ring_sq(&h, &h.admin);
	/* the log page completes, then the AER with the pending event */
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	uint16_t first_cid = e.cid;
	uint32_t log_first_dw0 = e.dw0;
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	CHECK(first_cid == glp.cid || e.cid == glp.cid);
	uint32_t aer_dw0 = e.cid == glp.cid ? log_first_dw0 : e.dw0;
	CHECK_EQ(aer_dw0, 0x01 << 8 | NVME_LOG_ERROR << 16);
	/* newest first: CQ head value, SQ tail value, then the missing queue */
	CHECK_EQ(log[0].error_count, 3);
	CHECK_EQ(log[0].csi, nvme_cq_doorbell_offset(1, h.dstrd));
	CHECK_EQ(log[1].error_count, 2);
	CHECK_EQ(log[1].csi, nvme_sq_doorbell_offset(1, h.dstrd));
	CHECK_EQ(log[2].error_count, 1);
	CHECK_EQ(log[2].sqid, 0xffff);
	CHECK_EQ(log[2].cid, 0xffff);
	CHECK_EQ(log[2].csi, off);
	CHECK_EQ(log[3].error_count, 0);
	/* the queue still works: the bad values were ignored */
	uint8_t *buf = th_alloc(&h, 4096, 4096, NULL);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 0, 1, buf), 0);
	th_close(&h);
}

static void test_invalid_doorbells_inline(void) { invalid_doorbells("emu://t?ns=mem:1M"); }
static void test_invalid_doorbells_thread(void) { invalid_doorbells("emu://t?ns=mem:1M&mode=thread"); }

/* An event completing an AER while the admin CQ is full waits until the host frees an entry. */
static void aer_when_admin_cq_full(const char *uri)
{
	struct th h;
	REQUIRE(th_open(&h, uri) == 0);
	REQUIRE((th_enable(&h, 8, 2) & NVME_CSTS_RDY) != 0);
	submit_aer(&h);
	struct nvme_sqe id = { .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_CTRL };
	id.prp1 = th_iova(&h, th_alloc(&h, 4096, 4096, NULL));
	th_place(&h.admin, &id, false);
	th_ring_sq(&h, &h.admin);
	struct nvme_cqe e;
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, false)); /* seen, not yet freed: CQ full */
	CHECK_EQ(e.cid, id.cid);
	th_write32(&h, nvme_sq_doorbell_offset(9, h.dstrd), 1); /* event */
	CHECK(!th_poll(&h, &h.admin, &e, 50, false));
	th_ring_cq(&h, &h.admin);
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	CHECK_EQ(e.cid, 0); /* the AER */
	CHECK_EQ(e.dw0, NVME_LOG_ERROR << 16);
	th_close(&h);
}

static void test_aer_when_admin_cq_full_inline(void) { aer_when_admin_cq_full("emu://t"); }
static void test_aer_when_admin_cq_full_thread(void) { aer_when_admin_cq_full("emu://t?mode=thread"); }

static void test_aer_limit(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t") == 0);
	REQUIRE((th_enable(&h, 16, 16) & NVME_CSTS_RDY) != 0);
	for (int i = 0; i < 4; i++)
		submit_aer(&h);
	struct nvme_cqe e;
	CHECK(!th_poll(&h, &h.admin, &e, 20, false));
	submit_aer(&h);
	REQUIRE(th_poll(&h, &h.admin, &e, 2000, true));
	CHECK_EQ(th_status(&e), ST(NVME_SCT_CMD, NVME_SC_AER_LIMIT));
	th_close(&h);
}

/* I/O command checks of the controller: NSID and flags. */
static void test_io_nsid_checks(void)
{
	struct th h;
	REQUIRE(th_open(&h, "emu://t?ns=mem:1M&ns=null:1M") == 0);
	REQUIRE((th_enable(&h, 8, 8) & NVME_CSTS_RDY) != 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *buf = th_alloc(&h, 4096, 4096, NULL);
	const int invalid_ns = ST(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 0, 0, 1, buf), invalid_ns);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 3, 0, 1, buf), invalid_ns);   /* inactive */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 33, 0, 1, buf), invalid_ns);  /* above NN */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 0xffffffffu, 0, 1, buf), invalid_ns);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_FLUSH, 0xffffffffu, 0, 1, NULL), 0); /* flush: all */
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 2, 0, 1, buf), 0);
	struct nvme_sqe fused = { .opc = NVME_CMD_READ, .nsid = 1, .flags = 1, .prp1 = th_iova(&h, buf) };
	CHECK_EQ(th_cmd(&h, &q, &fused, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	struct nvme_sqe sgl = { .opc = NVME_CMD_FLUSH, .nsid = 1, .flags = 0x40 };
	CHECK_EQ(th_cmd(&h, &q, &sgl, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
	/* unknown admin opcode */
	struct nvme_sqe bad = { .opc = 0x7f };
	CHECK_EQ(th_admin(&h, &bad, NULL), ST(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	th_close(&h);
}

TEST_MAIN(TEST(test_create_delete_checks), TEST(test_ring_past_mapping), TEST(test_entry_sizes_required),
	  TEST(test_ring_laps_inline), TEST(test_ring_laps_thread),
	  TEST(test_cq_backpressure_inline), TEST(test_cq_backpressure_thread),
	  TEST(test_shared_cq_inline), TEST(test_shared_cq_thread),
	  TEST(test_invalid_doorbells_inline), TEST(test_invalid_doorbells_thread),
	  TEST(test_shared_cq_backpressure_inline), TEST(test_shared_cq_backpressure_thread),
	  TEST(test_aer_when_admin_cq_full_inline), TEST(test_aer_when_admin_cq_full_thread),
	  TEST(test_aer_limit), TEST(test_io_nsid_checks))
