/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery from a controller fatal status (CSTS.CFS, injected through the emulated
 * controller's vendor admin command): the driver resets the controller by itself and reports
 * it; commands in flight come back with ABORTED_SQ_DELETION; every queue pair, on its own
 * thread, works again with the data intact; a split queue pair comes back through
 * unvme_qpair_recover; a controller that keeps failing stays failed, gives its commands back
 * and comes back with unvme_ctrlr_reset. Threaded: run under TSan too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unvme/unvme.h"
#include "seen.h"
#include "test_util.h"

#define DEV "emu://rec?ns=mem:16M:512"
#define ABORTED NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int inject_fatal(struct unvme_ctrlr *c)
{
	struct nvme_sqe cmd = { 0 };
	cmd.opc = NVME_ADM_EMU_FAULT;
	cmd.cdw10 = NVME_EMU_FAULT_FATAL;
	return unvme_admin(c, &cmd, NULL, 0, NULL);
}

/* Polls until the command behind s completes (or 10 s pass). Returns the last poll's result. */
static int poll_until(struct unvme_qpair *qp, struct seen *s, int want)
{
	uint64_t deadline = now_ms() + 10000;
	int rc = 0;
	while (atomic_load(&s->count) < want && now_ms() < deadline) {
		rc = unvme_qpair_poll(qp, 0);
		if (rc < 0 && rc != -EAGAIN)
			break;
	}
	return rc;
}

/* A controller on DEV with one queue pair (depth 16, 1 s timeout) and a 4 KiB DMA buffer. */
struct fixture {
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint8_t *r;
};

static bool setup(struct fixture *f, bool split)
{
	*f = (struct fixture){ 0 };
	struct unvme_qpair_opts o = { .depth = 16, .timeout_ms = 1000, .split = split };
	if (unvme_ctrlr_open(DEV, NULL, &f->c) != 0 || unvme_qpair_create(f->c, &o, &f->qp) != 0)
		return false;
	f->ns = unvme_ctrlr_ns(f->c, 1);
	f->r = unvme_dma_alloc(4096, 4096);
	return f->r != NULL;
}

static void teardown(struct fixture *f)
{
	unvme_dma_free(f->r);
	if (f->qp)
		unvme_qpair_destroy(f->qp);
	unvme_ctrlr_close(f->c);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u);
}

static void test_recovers_by_itself(void)
{
	struct fixture f;
	REQUIRE(setup(&f, false));
	uint8_t *w = unvme_dma_alloc(4096, 4096);
	fill(w, 4096, 3);
	CHECK_EQ(unvme_write_sync(f.ns, f.qp, w, 40, 8), 0);
	CHECK_EQ(unvme_ctrlr_reset_count(f.c), 0);

	CHECK_EQ(inject_fatal(f.c), 0);
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 40, 8, seen_cb, &s), 0);
	/* no unvme_ctrlr_reset: polling alone brings the command back, with an error */
	CHECK(poll_until(f.qp, &s, 1) >= 0);
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_ctrlr_reset_count(f.c), 1);
	CHECK_EQ(unvme_ctrlr_is_failed(f.c), 0);
	/* the queue works again and what was written before is there */
	memset(f.r, 0, 4096);
	CHECK_EQ(unvme_read_sync(f.ns, f.qp, f.r, 40, 8), 0);
	CHECK(memcmp(w, f.r, 4096) == 0);
	/* admin commands too */
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(f.c, NVME_CNS_CTRL, 0, 0, &id), 0);
	unvme_dma_free(w);
	teardown(&f);
}

static void test_manual_reset_still_works(void)
{
	struct fixture f;
	REQUIRE(setup(&f, false));
	CHECK_EQ(inject_fatal(f.c), 0);
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), 0);
	unvme_qpair_ring(f.qp);
	/* the application resets before any poll noticed */
	CHECK_EQ(unvme_ctrlr_reset(f.c), 0);
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_ctrlr_reset_count(f.c), 0); /* not an automatic one */
	CHECK_EQ(unvme_read_sync(f.ns, f.qp, f.r, 0, 1), 0);
	teardown(&f);
}

/* ---- several threads, each with its own queue pair, through a reset ---- */

enum { THREADS = 3 };

struct worker {
	struct unvme_ctrlr *c;
	int id;
	_Atomic int *rounds_done;
	_Atomic bool *stop;
	pthread_barrier_t *ready;
	int bad_data, errors, aborted;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 8, .timeout_ms = 1000 };
	if (unvme_qpair_create(wk->c, &o, &qp) != 0) {
		fprintf(stderr, "  thread %d: create: %s\n", wk->id, unvme_errmsg());
		wk->errors++;
		pthread_barrier_wait(wk->ready);
		return NULL;
	}
	pthread_barrier_wait(wk->ready); /* every queue exists before the fatal status */
	struct unvme_ns *ns = unvme_ctrlr_ns(wk->c, 1);
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	for (int i = 0; !atomic_load(wk->stop); i++) {
		uint64_t lba = (uint64_t)wk->id * 4096 + (uint64_t)(i % 256) * 8;
		fill(w, 4096, (uint32_t)(wk->id * 100000 + i));
		/* a command caught by the reset comes back aborted: do it again, as an application
		 * would; -EAGAIN while the reset is under way */
		int st;
		for (int tries = 0; tries < 100000; tries++) {
			st = unvme_write_sync(ns, qp, w, lba, 8);
			if (st != ABORTED && st != -EAGAIN)
				break;
			wk->aborted++;
		}
		if (st) {
			fprintf(stderr, "  thread %d: write: %d %s\n", wk->id, st, unvme_errmsg());
			wk->errors++;
			continue;
		}
		for (int tries = 0; tries < 100000; tries++) {
			st = unvme_read_sync(ns, qp, r, lba, 8);
			if (st != ABORTED && st != -EAGAIN)
				break;
			wk->aborted++;
		}
		if (st) {
			fprintf(stderr, "  thread %d: read: %d %s\n", wk->id, st, unvme_errmsg());
			wk->errors++;
		} else if (memcmp(w, r, 4096))
			wk->bad_data++;
		atomic_fetch_add(wk->rounds_done, 1);
	}
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	return NULL;
}

static void test_threads_recover(void)
{
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open("emu://recmt?ns=mem:64M:512", NULL, &c) == 0);
	_Atomic int done = 0;
	_Atomic bool stop = false;
	pthread_t t[THREADS];
	struct worker wk[THREADS];
	pthread_barrier_t ready;
	pthread_barrier_init(&ready, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++) {
		wk[i] = (struct worker){ .c = c, .id = i, .rounds_done = &done, .stop = &stop,
					 .ready = &ready };
		pthread_create(&t[i], NULL, worker_main, &wk[i]);
	}
	pthread_barrier_wait(&ready);
	/* a fatal status in the middle of the I/O; then every thread goes on for a while */
	while (atomic_load(&done) < 300)
		sched_yield();
	CHECK_EQ(inject_fatal(c), 0);
	uint64_t deadline = now_ms() + 10000;
	while (unvme_ctrlr_reset_count(c) == 0 && now_ms() < deadline)
		sched_yield();
	int after = atomic_load(&done) + 600;
	while (atomic_load(&done) < after && now_ms() < deadline)
		sched_yield();
	atomic_store(&stop, true);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(wk[i].errors, 0);
		CHECK_EQ(wk[i].bad_data, 0);
	}
	CHECK(atomic_load(&done) >= after);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 1);
	CHECK_EQ(unvme_ctrlr_is_failed(c), 0);
	pthread_barrier_destroy(&ready);
	unvme_ctrlr_close(c);
}

/* A queue created while the fatal status is set and no poll has seen it yet: the create
 * notices it at once (not after the admin timeout), resets and creates the queue. */
static void test_create_during_fatal(void)
{
	struct unvme_ctrlr *c = NULL;
	struct unvme_ctrlr_opts co = { .admin_timeout_ms = 60000 };
	REQUIRE(unvme_ctrlr_open(DEV, &co, &c) == 0);
	CHECK_EQ(inject_fatal(c), 0);
	uint64_t t0 = now_ms();
	struct unvme_qpair *qp = NULL;
	CHECK_EQ(unvme_qpair_create(c, NULL, &qp), 0);
	CHECK(now_ms() - t0 < 30000);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 1);
	uint8_t *r = unvme_dma_alloc(4096, 4096);
	CHECK_EQ(unvme_read_sync(unvme_ctrlr_ns(c, 1), qp, r, 0, 1), 0);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* ---- a split queue pair: one side cannot rebuild it ---- */

static void test_split_queue_recovers_through_its_owner(void)
{
	struct fixture f;
	REQUIRE(setup(&f, true));
	CHECK_EQ(unvme_qpair_recover(f.qp), 0); /* nothing to recover */
	CHECK_EQ(inject_fatal(f.c), 0);
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), 0);
	unvme_qpair_ring(f.qp);
	int rc = 0;
	uint64_t deadline = now_ms() + 10000;
	while (rc >= 0 && now_ms() < deadline)
		rc = unvme_qpair_poll(f.qp, 0);
	CHECK_EQ(rc, -EIO);
	CHECK(strstr(unvme_errmsg(), "unvme_qpair_recover") != NULL);
	/* the poller gave the command back: the device no longer has the queue */
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), -EIO);
	CHECK_EQ(unvme_ctrlr_reset_count(f.c), 1);
	CHECK_EQ(unvme_qpair_recover(f.qp), 0);
	CHECK_EQ(atomic_load(&s.count), 1);
	/* and it works again */
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), 0);
	unvme_qpair_ring(f.qp);
	CHECK(poll_until(f.qp, &s, 2) >= 0);
	CHECK_EQ(atomic_load(&s.count), 2);
	CHECK_EQ(atomic_load(&s.status), 0);
	teardown(&f);
}

/* ---- a controller that keeps failing ---- */

static void test_gives_up_then_manual_reset(void)
{
	struct fixture f;
	REQUIRE(setup(&f, false));
	/* three fatal statuses in a row are reset automatically */
	for (int i = 1; i <= 3; i++) {
		CHECK_EQ(inject_fatal(f.c), 0);
		struct seen s = { 0 };
		CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), 0);
		CHECK(poll_until(f.qp, &s, 1) >= 0);
		CHECK_EQ(atomic_load(&s.status), ABORTED);
		CHECK_EQ(unvme_ctrlr_reset_count(f.c), (uint32_t)i);
	}
	/* the fourth within 10 s: the driver stops trying, and still gives the command back */
	CHECK_EQ(inject_fatal(f.c), 0);
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), 0);
	int rc = poll_until(f.qp, &s, 1);
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_ctrlr_reset_count(f.c), 3);
	CHECK_EQ(unvme_ctrlr_is_failed(f.c), 1);
	rc = unvme_qpair_poll(f.qp, 0);
	CHECK_EQ(rc, -EIO);
	CHECK(strstr(unvme_errmsg(), "failed") != NULL);
	CHECK_EQ(unvme_read(f.ns, f.qp, f.r, 0, 1, seen_cb, &s), -EIO);
	/* the application's reset brings it back */
	CHECK_EQ(unvme_ctrlr_reset(f.c), 0);
	CHECK_EQ(unvme_ctrlr_is_failed(f.c), 0);
	CHECK_EQ(unvme_read_sync(f.ns, f.qp, f.r, 0, 1), 0);
	teardown(&f);
}

TEST_MAIN(TEST(test_recovers_by_itself), TEST(test_manual_reset_still_works),
	  TEST(test_threads_recover), TEST(test_create_during_fatal),
	  TEST(test_split_queue_recovers_through_its_owner), TEST(test_gives_up_then_manual_reset))
