/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread mode: the engine polls doorbells; the latency model delays completions; Abort and
 * SQ deletion reach commands in flight; several host threads drive different queues at once
 * (in both modes). Timing checks are lower bounds only: machines are noisy.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "emu_test_host.h"
#include "tests/unit/test_util.h"

#define ST(sct, sc) NVME_STATUS(sct, sc)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_ready(struct th *h, const char *uri)
{
	if (th_open(h, uri)) {
		fprintf(stderr, "  create: %s\n", h->err);
		return -1;
	}
	return (th_enable(h, 32, 32) & NVME_CSTS_RDY) ? 0 : -1;
}

static void test_qd1_read_latency(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://lat?ns=mem:1M&rlat=200us&wlat=50us") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	for (int i = 0; i < 20; i++) {
		uint64_t t0 = now_ns();
		CHECK_EQ(th_rw(&h, &q, NVME_CMD_READ, 1, 0, 8, data), 0);
		uint64_t dt = now_ns() - t0;
		if (dt < 200000) {
			fprintf(stderr, "  read %d took %llu ns\n", i, (unsigned long long)dt);
			CHECK(0);
		}
	}
	uint64_t t0 = now_ns();
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_WRITE, 1, 0, 8, data), 0);
	CHECK(now_ns() - t0 >= 50000);
	th_close(&h);
}

/* Submits n commands at once and returns the time until the last completion. */
static uint64_t batch(struct th *h, struct th_queue *q, uint8_t opc, int n, uint32_t nlb, uint8_t *data,
		      int *errors)
{
	uint64_t t0 = now_ns();
	for (int i = 0; i < n; i++) {
		struct nvme_sqe cmd = { .opc = opc, .nsid = 1, .cdw10 = (uint32_t)i * nlb, .cdw12 = nlb - 1,
					.prp1 = th_iova(h, data) };
		if (nlb * 512 > 4096) {
			cmd.prp2 = th_iova(h, data) + 4096;
			if (nlb * 512 > 8192) {
				for (uint32_t p = 0; p < nlb * 512 / 4096 - 1; p++)
					h->prp_list[p] = th_iova(h, data) + 4096 * (p + 1);
				cmd.prp2 = h->prp_list_iova;
			}
		}
		th_place(q, &cmd, false);
	}
	th_ring_sq(h, q);
	for (int i = 0; i < n; i++) {
		struct nvme_cqe e;
		if (!th_poll(h, q, &e, 5000, true) || th_status(&e))
			(*errors)++;
	}
	return now_ns() - t0;
}

static void test_units_limit_parallelism(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://units?ns=mem:1M&rlat=2ms&units=2") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	int errors = 0;
	/* 6 reads on 2 units: three rounds of 2 ms */
	uint64_t dt = batch(&h, &q, NVME_CMD_READ, 6, 1, data, &errors);
	CHECK_EQ(errors, 0);
	CHECK(dt >= 6000000);
	th_close(&h);
}

static void test_bandwidth_pipe(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://bw?ns=mem:4M&bw=16M") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 65536, 4096, NULL);
	int errors = 0;
	/* 8 x 64 KiB through 16 MiB/s: 32 ms, whatever the queue depth */
	uint64_t dt = batch(&h, &q, NVME_CMD_WRITE, 8, 128, data, &errors);
	CHECK_EQ(errors, 0);
	CHECK(dt >= 31250000);
	th_close(&h);
}

static void test_abort_in_flight(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://abt?ns=mem:1M&rlat=400ms") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	uint16_t cid[3];
	for (int i = 0; i < 3; i++) {
		struct nvme_sqe rd = { .opc = NVME_CMD_READ, .nsid = 1, .prp1 = th_iova(&h, data) };
		cid[i] = th_place(&q, &rd, false);
	}
	th_ring_sq(&h, &q);
	/* give the engine a moment to fetch them (their completions are 400 ms away) */
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	struct nvme_cqe e;
	struct nvme_sqe ab = { .opc = NVME_ADM_ABORT, .cdw10 = (uint32_t)cid[1] << 16 | 1 };
	CHECK_EQ(th_admin(&h, &ab, &e), 0);
	CHECK_EQ(e.dw0 & 1, 0);
	REQUIRE(th_poll(&h, &q, &e, 5000, true));
	CHECK_EQ(e.cid, cid[1]);
	CHECK_EQ(th_status(&e), ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED));
	CHECK_EQ(e.sqhd, 3);
	/* delete the SQ: the other two complete as aborted by the deletion, not after 400 ms */
	struct nvme_sqe del = { .opc = NVME_ADM_DELETE_SQ, .cdw10 = 1 };
	CHECK_EQ(th_admin(&h, &del, NULL), 0);
	for (int i = 0; i < 2; i++) {
		REQUIRE(th_poll(&h, &q, &e, 5000, true));
		CHECK(e.cid == cid[0] || e.cid == cid[2]);
		CHECK_EQ(th_status(&e), ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION));
	}
	th_close(&h);
}

/* Abort finds a dropped command in thread mode too. */
static void test_drop_abort_thread(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://dropt?ns=mem:1M&mode=thread") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_DROP, .cdw11 = 1 };
	CHECK_EQ(th_admin(&h, &f, NULL), 0);
	struct nvme_sqe fl = { .opc = NVME_CMD_FLUSH, .nsid = 1 };
	uint16_t cid = th_place(&q, &fl, false);
	th_ring_sq(&h, &q);
	struct nvme_cqe e;
	CHECK(!th_poll(&h, &q, &e, 50, true));
	struct nvme_sqe ab = { .opc = NVME_ADM_ABORT, .cdw10 = (uint32_t)cid << 16 | 1 };
	CHECK_EQ(th_admin(&h, &ab, &e), 0);
	CHECK_EQ(e.dw0 & 1, 0);
	REQUIRE(th_poll(&h, &q, &e, 2000, true));
	CHECK_EQ(e.cid, cid);
	CHECK_EQ(th_status(&e), ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED));
	th_close(&h);
}

/* A reset drops commands in flight: no completion appears later, and the new queues work. */
static void test_reset_with_commands_in_flight(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://rst?ns=mem:1M&rlat=100ms") == 0);
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	uint8_t *data = th_alloc(&h, 4096, 4096, NULL);
	for (int i = 0; i < 4; i++) {
		struct nvme_sqe rd = { .opc = NVME_CMD_READ, .nsid = 1, .prp1 = th_iova(&h, data) };
		th_place(&q, &rd, false);
	}
	th_ring_sq(&h, &q);
	struct timespec ts = { 0, 10000000 };
	nanosleep(&ts, NULL);
	th_disable(&h);
	REQUIRE(th_enable(&h, 8, 8) & NVME_CSTS_RDY);
	struct nvme_cqe e;
	CHECK(!th_poll(&h, &q, &e, 250, false)); /* the old CQ stays silent */
	struct th_queue q2;
	REQUIRE(th_create_qpair(&h, &q2, 1, 16) == 0);
	CHECK_EQ(th_rw(&h, &q2, NVME_CMD_READ, 1, 0, 1, data), 0);
	th_close(&h);
}

struct worker {
	struct th *h;
	struct th_queue q;
	uint8_t *buf;
	uint32_t first_lba;
	int ios;
	int errors;
};

/* Writes a block pattern then reads it back, at queue depth 8, on the worker's own queue. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct th *h = w->h;
	const int qd = 8;
	int submitted = 0, completed = 0;
	uint16_t lba_of[65536];
	while (completed < w->ios) {
		while (submitted < w->ios && submitted - completed < qd) {
			uint32_t lba = w->first_lba + (uint32_t)(submitted % 64);
			bool write = (submitted / 64) % 2 == 0;
			uint8_t *b = w->buf + (size_t)(submitted % qd) * 512;
			if (write)
				memset(b, (int)(lba * 7 + (uint32_t)(submitted / 128)), 512);
			struct nvme_sqe cmd = { .opc = write ? NVME_CMD_WRITE : NVME_CMD_READ, .nsid = 1,
						.cdw10 = lba, .prp1 = th_iova(h, b) };
			uint16_t cid = th_place(&w->q, &cmd, false);
			lba_of[cid] = (uint16_t)lba;
			submitted++;
			th_ring_sq(h, &w->q);
		}
		struct nvme_cqe e;
		if (!th_poll(h, &w->q, &e, 5000, true)) {
			w->errors++;
			break;
		}
		if (th_status(&e) || e.sqid != w->q.qid)
			w->errors++;
		(void)lba_of;
		completed++;
	}
	return NULL;
}

static void host_threads(const char *uri)
{
	struct th h;
	REQUIRE(open_ready(&h, uri) == 0);
	enum { NT = 4 };
	struct worker w[NT];
	pthread_t tid[NT];
	for (int i = 0; i < NT; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].h = &h;
		REQUIRE(th_create_qpair(&h, &w[i].q, (uint16_t)(i + 1), 32) == 0);
		w[i].buf = th_alloc(&h, 8 * 512, 4096, NULL);
		w[i].first_lba = (uint32_t)i * 64;
		w[i].ios = 4000;
	}
	for (int i = 0; i < NT; i++)
		pthread_create(&tid[i], NULL, worker_main, &w[i]);
	for (int i = 0; i < NT; i++)
		pthread_join(tid[i], NULL);
	int errors = 0;
	for (int i = 0; i < NT; i++)
		errors += w[i].errors;
	CHECK_EQ(errors, 0);
	/* every I/O was counted, on its own queue */
	struct nvme_smart_log *s = th_alloc(&h, 4096, 4096, NULL);
	REQUIRE(th_get_log(&h, NVME_LOG_SMART, 0, 0, 512, s) == 0);
	CHECK_EQ(s->host_reads.lo + s->host_writes.lo, NT * 4000);
	/* the data of each thread's blocks is its own: read back the last pattern written */
	uint8_t *b = th_alloc(&h, 512, 4096, NULL);
	struct th_queue *q0 = &w[0].q;
	for (int i = 0; i < NT; i++) {
		uint32_t lba = w[i].first_lba + 5;
		CHECK_EQ(th_rw(&h, q0, NVME_CMD_READ, 1, lba, 1, b), 0);
		/* the pattern of the last submission that wrote this LBA */
		int last = -1;
		for (int sub = 0; sub < w[i].ios; sub++)
			if (sub % 64 == 5 && (sub / 64) % 2 == 0)
				last = sub;
		REQUIRE(last >= 0);
		CHECK_EQ(b[0], (uint8_t)(lba * 7 + (uint32_t)last / 128));
	}
	th_close(&h);
}

static void test_host_threads_thread_mode(void) { host_threads("emu://mt?ns=mem:1M&mode=thread"); }
static void test_host_threads_inline_mode(void) { host_threads("emu://mi?ns=mem:1M"); }

/* Devices on one engine share its thread; removing one leaves the other running. */
static void test_shared_engine(void)
{
	struct th a, b;
	REQUIRE(open_ready(&a, "emu://ea?ns=mem:1M&mode=thread&engine=5") == 0);
	REQUIRE(open_ready(&b, "emu://eb?ns=null:1M&mode=thread&engine=5") == 0);
	struct th_queue qa, qb;
	REQUIRE(th_create_qpair(&a, &qa, 1, 16) == 0);
	REQUIRE(th_create_qpair(&b, &qb, 1, 16) == 0);
	uint8_t *da = th_alloc(&a, 4096, 4096, NULL), *db = th_alloc(&b, 4096, 4096, NULL);
	CHECK_EQ(th_rw(&a, &qa, NVME_CMD_WRITE, 1, 0, 1, da), 0);
	CHECK_EQ(th_rw(&b, &qb, NVME_CMD_WRITE, 1, 0, 1, db), 0);
	th_close(&a);
	CHECK_EQ(th_rw(&b, &qb, NVME_CMD_READ, 1, 0, 1, db), 0);
	th_close(&b);
	/* the engine index is free again: a new device starts a new thread */
	REQUIRE(open_ready(&a, "emu://ec?ns=mem:1M&mode=thread&engine=5&cpu=0") == 0);
	REQUIRE(th_create_qpair(&a, &qa, 1, 16) == 0);
	da = th_alloc(&a, 4096, 4096, NULL);
	CHECK_EQ(th_rw(&a, &qa, NVME_CMD_READ, 1, 0, 1, da), 0);
	th_close(&a);
}

/* An idle engine backs off instead of burning a core. */
static void test_idle_engine_sleeps(void)
{
	struct th h;
	REQUIRE(open_ready(&h, "emu://idle?ns=null:1M&mode=thread") == 0);
	struct timespec c0, c1, settle = { 0, 50000000 }, wait = { 0, 400000000 };
	nanosleep(&settle, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	nanosleep(&wait, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	if (cpu > 0.2) {
		fprintf(stderr, "  idle engine used %.3f s of CPU in 0.4 s\n", cpu);
		CHECK(0);
	}
	/* and wakes up for work */
	struct th_queue q;
	REQUIRE(th_create_qpair(&h, &q, 1, 16) == 0);
	CHECK_EQ(th_rw(&h, &q, NVME_CMD_FLUSH, 1, 0, 1, NULL), 0);
	th_close(&h);
}

TEST_MAIN(TEST(test_qd1_read_latency), TEST(test_units_limit_parallelism), TEST(test_bandwidth_pipe),
	  TEST(test_abort_in_flight), TEST(test_drop_abort_thread), TEST(test_reset_with_commands_in_flight), TEST(test_host_threads_thread_mode),
	  TEST(test_host_threads_inline_mode), TEST(test_shared_engine), TEST(test_idle_engine_sleeps))
