/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split queue pairs (unvme_qpair_opts.split): one thread submits, another polls, with no lock
 * between them; the poller rings what was submitted, and the submitter may ring too. Every
 * command completes exactly once with its own data, on the emulated controller in inline mode
 * (the doorbell runs the device on the ringing thread) and in thread mode (an engine thread),
 * with both sides ringing at once and with only the poller ringing; the _sync helpers are
 * refused; a timeout on the poller's side aborts while the submitter goes on. Threaded: it
 * runs under TSan, which checks the hand-over of trackers between the two sides.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "test_util.h"

enum { NCMDS = 20000, BLOCKS = 1024 };

struct run {
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint32_t *bufs;               /* one 512-byte block per command slot, DMA memory */
	_Atomic uint32_t *busy;       /* per buffer: its read is in flight */
	uint32_t nbufs;
	uint8_t *done;                /* per command: completions seen (poller only) */
	_Atomic uint32_t completed;
	uint32_t bad_status, bad_data, dup;
	_Atomic bool submitter_done;
	bool submitter_rings;         /* else only the poller's polls ring */
};

static void submitter_ring(struct run *r)
{
	if (r->submitter_rings)
		unvme_qpair_ring(r->qp);
}

struct cmd_ctx {
	struct run *r;
	uint32_t n;   /* command number */
	uint32_t buf; /* buffer it read into */
};

static struct cmd_ctx ctxs[NCMDS];

/* Runs on the poller: each read must bring back the stamp written to its block. */
static void on_read(void *arg, const struct nvme_cqe *cpl)
{
	struct cmd_ctx *x = arg;
	struct run *r = x->r;
	if (r->done[x->n]++)
		r->dup++;
	if (cpl->status >> 1)
		r->bad_status++;
	else if (r->bufs[x->buf * 128] != x->n % BLOCKS + 1)
		r->bad_data++;
	atomic_store_explicit(&r->busy[x->buf], 0, memory_order_release);
	atomic_fetch_add_explicit(&r->completed, 1, memory_order_release);
}

static void *submitter(void *arg)
{
	struct run *r = arg;
	uint32_t next_buf = 0;
	for (uint32_t n = 0; n < NCMDS; n++) {
		/* a free buffer: the poller gives them back in its callbacks */
		while (atomic_load_explicit(&r->busy[next_buf], memory_order_acquire)) {
			submitter_ring(r);
			sched_yield();
		}
		atomic_store_explicit(&r->busy[next_buf], 1, memory_order_relaxed);
		ctxs[n] = (struct cmd_ctx){ .r = r, .n = n, .buf = next_buf };
		int rc;
		while ((rc = unvme_read(r->ns, r->qp, &r->bufs[next_buf * 128], n % BLOCKS, 1,
					on_read, &ctxs[n])) == -EAGAIN) {
			submitter_ring(r); /* a full queue waits for what was not rung yet */
			sched_yield();
		}
		if (rc) {
			fprintf(stderr, "  submit %u: %d %s\n", n, rc, unvme_errmsg());
			break;
		}
		/* ring every few commands, as a submitter batching its burst would */
		if (n % 3 == 2 || n + 1 == NCMDS)
			submitter_ring(r);
		next_buf = next_buf + 1 == r->nbufs ? 0 : next_buf + 1;
	}
	submitter_ring(r);
	atomic_store_explicit(&r->submitter_done, true, memory_order_release);
	return NULL;
}

static void run_split(const char *uri, uint32_t depth, bool submitter_rings)
{
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open(uri, NULL, &c) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	REQUIRE(ns != NULL);

	/* stamp every block with its number + 1, through an ordinary queue */
	struct unvme_qpair *setup;
	REQUIRE(unvme_qpair_create(c, NULL, &setup) == 0);
	uint32_t *blk = unvme_dma_zalloc(512, 4096);
	for (uint32_t b = 0; b < BLOCKS; b++) {
		blk[0] = b + 1;
		REQUIRE(unvme_write_sync(ns, setup, blk, b, 1) == 0);
	}
	unvme_dma_free(blk);
	unvme_qpair_destroy(setup);

	struct run *r = calloc(1, sizeof(*r));
	struct unvme_qpair_opts o = { .depth = depth, .split = true };
	REQUIRE(unvme_qpair_create(c, &o, &r->qp) == 0);
	r->ns = ns;
	r->submitter_rings = submitter_rings;
	r->nbufs = depth * 2; /* more buffers than trackers: the queue itself fills up too */
	r->bufs = unvme_dma_zalloc((size_t)r->nbufs * 512, 4096);
	r->busy = calloc(r->nbufs, sizeof(*r->busy));
	r->done = calloc(NCMDS, 1);
	REQUIRE(r->bufs && r->busy && r->done);

	pthread_t t;
	pthread_create(&t, NULL, submitter, r);
	int failed = 0;
	while (atomic_load_explicit(&r->completed, memory_order_acquire) < NCMDS) {
		int rc = unvme_qpair_poll(r->qp, 0);
		if (rc < 0) {
			failed = rc;
			break;
		}
		if (atomic_load_explicit(&r->submitter_done, memory_order_acquire) &&
		    unvme_qpair_outstanding(r->qp) == 0)
			break;
	}
	pthread_join(t, NULL);
	CHECK_EQ(failed, 0);
	CHECK_EQ(atomic_load(&r->completed), NCMDS);
	CHECK_EQ(r->dup, 0);
	CHECK_EQ(r->bad_status, 0);
	CHECK_EQ(r->bad_data, 0);
	uint32_t missing = 0;
	for (uint32_t n = 0; n < NCMDS; n++)
		missing += r->done[n] == 0;
	CHECK_EQ(missing, 0);
	CHECK_EQ(unvme_qpair_outstanding(r->qp), 0);

	unvme_qpair_destroy(r->qp);
	unvme_dma_free(r->bufs);
	free(r->busy);
	free(r->done);
	free(r);
	unvme_ctrlr_close(c);
}

static void test_split_inline(void)
{
	run_split("emu://split?ns=mem:16M:512", 16, true);
}

static void test_split_inline_poller_rings(void)
{
	run_split("emu://splitp?ns=mem:16M:512", 16, false);
}

static void test_split_inline_depth_2(void)
{
	/* one tracker: every command waits for the previous one's hand-back */
	run_split("emu://split2?ns=mem:16M:512", 2, true);
}

static void test_split_device_thread(void)
{
	run_split("emu://splitt?ns=mem:16M:512&mode=thread", 32, true);
	run_split("emu://splitt?ns=mem:16M:512&mode=thread", 32, false);
}

static int count;
static void count_cb(void *arg, const struct nvme_cqe *cpl)
{
	(void)arg;
	(void)cpl;
	count++;
}

static void test_poll_rings_and_sync_is_refused(void)
{
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open("emu://split3?ns=mem:16M:512", NULL, &c) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 8, .split = true };
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	uint8_t *buf = unvme_dma_zalloc(4096, 4096);
	count = 0;
	CHECK_EQ(unvme_read(ns, qp, buf, 0, 1, count_cb, NULL), 0);
	CHECK_EQ(unvme_qpair_outstanding(qp), 1);
	/* nobody rang: the poller's poll does, and (inline device) reaps it at once */
	CHECK_EQ(unvme_qpair_poll(qp, 0), 1);
	CHECK_EQ(count, 1);
	/* the submitter rings; the poller's next ring finds nothing new to announce */
	CHECK_EQ(unvme_read(ns, qp, buf, 0, 1, count_cb, NULL), 0);
	unvme_qpair_ring(qp);
	int got = 0;
	for (int i = 0; i < 1000000 && !got; i++)
		got = unvme_qpair_poll(qp, 0);
	CHECK_EQ(got, 1);
	CHECK_EQ(count, 2);
	CHECK_EQ(unvme_qpair_outstanding(qp), 0);
	/* a synchronous helper would need to be both sides at once */
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 0, 1), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "split") != NULL);
	/* a refused submission gives its tracker back: all 7 are still there */
	CHECK_EQ(unvme_read(ns, qp, (uint8_t *)buf + 1, 0, 1, count_cb, NULL), -EINVAL);
	for (int i = 0; i < 7; i++)
		CHECK_EQ(unvme_read(ns, qp, buf, (uint64_t)i, 1, count_cb, NULL), 0);
	CHECK_EQ(unvme_read(ns, qp, buf, 7, 1, count_cb, NULL), -EAGAIN);
	unvme_qpair_ring(qp);
	for (int i = 0; i < 1000000 && count < 9; i++)
		unvme_qpair_poll(qp, 0);
	CHECK_EQ(count, 9);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static int inject(struct unvme_ctrlr *c, uint32_t fault, uint32_t count_)
{
	struct nvme_sqe cmd = { 0 };
	cmd.opc = NVME_ADM_EMU_FAULT;
	cmd.cdw10 = fault;
	cmd.cdw11 = count_;
	return unvme_admin(c, &cmd, NULL, 0, NULL);
}

struct abort_seen {
	_Atomic int n;
	_Atomic int aborted;
};

static void abort_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct abort_seen *s = arg;
	if (NVME_STATUS_FROM_CQE(cpl->status) ==
	    NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED))
		atomic_fetch_add(&s->aborted, 1);
	atomic_fetch_add(&s->n, 1);
}

struct abort_run {
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint8_t *buf;
	struct abort_seen *seen;
	_Atomic bool stop;
};

/* Keeps submitting while the poller's timeout scan looks at the trackers. */
static void *abort_submitter(void *arg)
{
	struct abort_run *a = arg;
	for (int i = 0; i < 400 && !atomic_load(&a->stop); i++) {
		while (unvme_read(a->ns, a->qp, a->buf, (uint64_t)(i % 64), 1, abort_cb, a->seen) ==
		       -EAGAIN)
			sched_yield();
		unvme_qpair_ring(a->qp);
		if (i % 50 == 0)
			usleep(2000);
	}
	return NULL;
}

static void test_timeout_abort_while_submitting(void)
{
	struct unvme_ctrlr *c = NULL;
	REQUIRE(unvme_ctrlr_open("emu://split4?ns=mem:16M:512", NULL, &c) == 0);
	struct abort_run a = { .ns = unvme_ctrlr_ns(c, 1) };
	struct unvme_qpair_opts o = { .depth = 16, .timeout_ms = 30, .split = true };
	REQUIRE(unvme_qpair_create(c, &o, &a.qp) == 0);
	a.buf = unvme_dma_zalloc(4096, 4096);
	struct abort_seen seen = { 0 };
	a.seen = &seen;
	CHECK_EQ(inject(c, NVME_EMU_FAULT_DROP, 1), 0); /* the first read is never completed */
	pthread_t t;
	pthread_create(&t, NULL, abort_submitter, &a);
	uint64_t spins = 0;
	while (atomic_load(&seen.n) < 400 && spins++ < 4000000000ull)
		REQUIRE(unvme_qpair_poll(a.qp, 0) >= 0);
	atomic_store(&a.stop, true);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&seen.n), 400);
	CHECK_EQ(atomic_load(&seen.aborted), 1);
	CHECK_EQ(unvme_qpair_outstanding(a.qp), 0);
	unvme_dma_free(a.buf);
	unvme_qpair_destroy(a.qp);
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_split_inline), TEST(test_split_inline_poller_rings), TEST(test_split_inline_depth_2),
	  TEST(test_split_device_thread), TEST(test_poll_rings_and_sync_is_refused),
	  TEST(test_timeout_abort_while_submitting))
