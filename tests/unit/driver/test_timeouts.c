/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commands that never complete, made for real by the emulated controller's fault injection
 * (DROP: Abort finds them; SWALLOW: lost for good, so only fencing the queue or resetting
 * the controller ends them):
 *   - a synchronous wait backs off instead of burning a CPU until the timeout recovers it;
 *   - a fenced unshared queue gives every command back once and works again, and a callback
 *     that resubmits from the abort completion is queued on the rebuilt queue, not lost;
 *   - a fenced split queue: its poller gives back what the device will never complete
 *     (submissions racing the fence included), submissions are refused while it is failed,
 *     and unvme_qpair_recover creates it again: no command id is left that never completes;
 *   - an admin command that never completes (a synchronous AER) is aborted and its slot comes
 *     back; one that Abort cannot find resets the controller: the admin queue never fills up.
 * Threaded: run under TSan too.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/driver/ctrlr.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define ABORTED NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION)
#define ABORT_REQ NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED)

static double secs(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int inject(struct unvme_ctrlr *c, uint32_t fault, uint32_t count, uint32_t cdw12)
{
	struct nvme_sqe cmd = { 0 };
	cmd.opc = NVME_ADM_EMU_FAULT;
	cmd.cdw10 = fault;
	cmd.cdw11 = count;
	cmd.cdw12 = cdw12;
	return unvme_admin(c, &cmd, NULL, 0, NULL);
}

static struct unvme_ctrlr *open_dev(const char *uri, uint32_t admin_timeout_ms)
{
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	if (admin_timeout_ms)
		o.admin_timeout_ms = admin_timeout_ms;
	struct unvme_ctrlr *c = NULL;
	if (unvme_ctrlr_open(uri, &o, &c) != 0)
		fprintf(stderr, "  open %s: %s\n", uri, unvme_errmsg());
	return c;
}

/* ---- 1. a synchronous wait on a command that never completes ---- */

static void test_sync_wait_backs_off(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to1?ns=mem:1M:512", 0);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 8, .timeout_ms = 1500 };
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_DROP, 1, 0), 0);
	double w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
	/* the timeout's Abort ends it after 1.5 to 3 s */
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 0, 1), ABORT_REQ);
	double wall = secs(CLOCK_MONOTONIC) - w0, cpu = secs(CLOCK_PROCESS_CPUTIME_ID) - c0;
	CHECK(wall >= 1.4);
	/* flat out polling would be ~100%; sleeping between polls a few percent */
	CHECK(cpu < 0.25 * wall);
	if (cpu >= 0.25 * wall)
		fprintf(stderr, "  %.3f s CPU in %.3f s\n", cpu, wall);
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 0, 1), 0);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* ---- 2. fencing an unshared queue ---- */

struct resubmit {
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	uint8_t *buf;
	_Atomic int first_status, first_count, second_status, second_count, resubmit_rc;
};

static void second_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct resubmit *r = arg;
	atomic_store(&r->second_status, NVME_STATUS_FROM_CQE(cpl->status));
	atomic_fetch_add(&r->second_count, 1);
}

/* The lost command's completion submits again, as an application retrying would. */
static void first_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct resubmit *r = arg;
	atomic_store(&r->first_status, NVME_STATUS_FROM_CQE(cpl->status));
	atomic_fetch_add(&r->first_count, 1);
	atomic_store(&r->resubmit_rc, unvme_read(r->ns, r->qp, r->buf, 1, 1, second_cb, r));
}

static void test_fence_unshared_queue(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to2?ns=mem:1M:512", 0);
	REQUIRE(c != NULL);
	struct resubmit r = { 0 };
	struct unvme_qpair_opts o = { .depth = 8, .timeout_ms = 50 };
	REQUIRE(unvme_qpair_create(c, &o, &r.qp) == 0);
	r.ns = unvme_ctrlr_ns(c, 1);
	r.buf = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_SWALLOW, 1, 0), 0);
	CHECK_EQ(unvme_read(r.ns, r.qp, r.buf, 0, 1, first_cb, &r), 0);
	double end = secs(CLOCK_MONOTONIC) + 10;
	while (atomic_load(&r.second_count) == 0 && secs(CLOCK_MONOTONIC) < end)
		REQUIRE(unvme_qpair_poll(r.qp, 0) >= 0);
	CHECK_EQ(atomic_load(&r.first_count), 1);
	CHECK_EQ(atomic_load(&r.first_status), ABORTED);
	CHECK_EQ(atomic_load(&r.resubmit_rc), 0);   /* queued on the rebuilt queue... */
	CHECK_EQ(atomic_load(&r.second_count), 1);  /* ...and completed there */
	CHECK_EQ(atomic_load(&r.second_status), 0);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0);    /* the queue alone was fenced */
	CHECK_EQ(unvme_qpair_outstanding(r.qp), 0);
	CHECK_EQ(unvme_read_sync(r.ns, r.qp, r.buf, 0, 1), 0);
	unvme_dma_free(r.buf);
	unvme_qpair_destroy(r.qp);
	unvme_ctrlr_close(c);
}

/* ---- 3. fencing a split queue while its submitter keeps going ---- */

enum { SPLIT_CMDS = 3000 };

struct split_run {
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
	uint8_t *buf;
	_Atomic uint8_t completions[SPLIT_CMDS];
	_Atomic int submitted, refused, done, aborted;
	_Atomic bool pause, paused, stop;
};

struct split_cmd {
	struct split_run *run;
	int i;
};
static struct split_cmd cmds[SPLIT_CMDS];

static void split_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct split_cmd *sc = arg;
	atomic_fetch_add(&sc->run->completions[sc->i], 1);
	if (NVME_STATUS_FROM_CQE(cpl->status) == ABORTED)
		atomic_fetch_add(&sc->run->aborted, 1);
	atomic_fetch_add(&sc->run->done, 1);
}

static void *split_submitter(void *arg)
{
	struct split_run *r = arg;
	for (int i = 0; i < SPLIT_CMDS && !atomic_load(&r->stop);) {
		if (atomic_load(&r->pause)) {
			atomic_store(&r->paused, true);
			while (atomic_load(&r->pause) && !atomic_load(&r->stop))
				sched_yield();
			atomic_store(&r->paused, false);
			continue;
		}
		cmds[i] = (struct split_cmd){ r, i };
		int rc = unvme_read(r->ns, r->qp, r->buf, (uint64_t)(i % 64), 1, split_cb, &cmds[i]);
		if (rc == -EAGAIN) {
			sched_yield();
			continue;
		}
		if (rc == 0)
			atomic_fetch_add(&r->submitted, 1);
		else
			atomic_fetch_add(&r->refused, 1); /* -EIO while the queue is failed */
		unvme_qpair_ring(r->qp);
		i++;
	}
	atomic_store(&r->stop, true);
	return NULL;
}

static void test_fence_split_queue(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to3?ns=mem:1M:512", 0);
	REQUIRE(c != NULL);
	static struct split_run r;
	memset(&r, 0, sizeof(r));
	struct unvme_qpair_opts o = { .depth = 16, .timeout_ms = 30, .split = true };
	REQUIRE(unvme_qpair_create(c, &o, &r.qp) == 0);
	r.ns = unvme_ctrlr_ns(c, 1);
	r.buf = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_SWALLOW, 2, 0), 0);
	pthread_t t;
	pthread_create(&t, NULL, split_submitter, &r);
	int recovers = 0;
	double end = secs(CLOCK_MONOTONIC) + 60;
	while (secs(CLOCK_MONOTONIC) < end) {
		int n = unvme_qpair_poll(r.qp, 0);
		if (n == -EIO) {
			/* the owner stops the submitter, then recovers the queue */
			atomic_store(&r.pause, true);
			while (!atomic_load(&r.paused) && !atomic_load(&r.stop))
				sched_yield();
			CHECK_EQ(unvme_qpair_recover(r.qp), 0);
			recovers++;
			atomic_store(&r.pause, false);
			continue;
		}
		REQUIRE(n >= 0 || n == -EAGAIN);
		if (atomic_load(&r.stop) &&
		    atomic_load(&r.done) == atomic_load(&r.submitted))
			break;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	int missing = 0, twice = 0;
	for (int i = 0; i < SPLIT_CMDS; i++) {
		int k = atomic_load(&r.completions[i]);
		missing += k == 0;
		twice += k > 1;
	}
	/* every submission was either refused or completed exactly once */
	CHECK_EQ(atomic_load(&r.submitted) + atomic_load(&r.refused), SPLIT_CMDS);
	CHECK_EQ(atomic_load(&r.done), atomic_load(&r.submitted));
	CHECK_EQ(missing, atomic_load(&r.refused));
	CHECK_EQ(twice, 0);
	CHECK(atomic_load(&r.aborted) >= 1);
	CHECK(recovers >= 1);
	CHECK_EQ(unvme_qpair_outstanding(r.qp), 0);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0);
	/* it works again */
	struct split_cmd last = { &r, 0 };
	atomic_store(&r.completions[0], 0);
	CHECK_EQ(unvme_read(r.ns, r.qp, r.buf, 0, 1, split_cb, &last), 0);
	for (int i = 0; i < 1000000 && atomic_load(&r.completions[0]) == 0; i++)
		unvme_qpair_poll(r.qp, 0);
	CHECK_EQ(atomic_load(&r.completions[0]), 1);
	unvme_dma_free(r.buf);
	unvme_qpair_destroy(r.qp);
	unvme_ctrlr_close(c);
}

/* ---- 4. admin commands that never complete ---- */

static void test_admin_aer_slot_comes_back(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to4?ns=mem:1M:512", 30);
	REQUIRE(c != NULL);
	/* more than the admin queue's 31 slots: each must come back */
	for (int i = 0; i < 40; i++) {
		struct nvme_sqe aer = { .opc = NVME_ADM_ASYNC_EVENT };
		int rc = unvme_admin(c, &aer, NULL, 0, NULL);
		CHECK_EQ(rc, -ETIMEDOUT);
		if (i == 0)
			CHECK(strstr(unvme_errmsg(), "aborted") != NULL);
		CHECK_EQ(unvme_qpair_outstanding(c->admin), 0);
	}
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), 0);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0); /* Abort did it, no reset */
	unvme_ctrlr_close(c);
}

static void test_admin_lost_resets_controller(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to5?ns=mem:1M:512", 30);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_zalloc(4096, 4096);
	memset(buf, 0x5a, 512);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 3, 1), 0);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_SWALLOW, 1, NVME_EMU_FAULT_ADMIN), 0);
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), -ETIMEDOUT);
	CHECK(strstr(unvme_errmsg(), "reset") != NULL);
	CHECK_EQ(unvme_ctrlr_reset_count(c), 1);
	CHECK_EQ(unvme_qpair_outstanding(c->admin), 0);
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), 0);
	/* the I/O queue comes back at its next use, with the data */
	memset(buf, 0, 512);
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 3, 1), 0);
	CHECK_EQ(buf[0], 0x5a);
	CHECK_EQ(buf[511], 0x5a);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* Format NVM and Sanitize rewrite whole namespaces: they wait UNVME_FORMAT_TIMEOUT_MS, not
 * the admin timeout every other admin command has (QEMU's format took over 10 s under TCG). */
static void test_format_waits_longer(void)
{
	struct unvme_ctrlr *c = open_dev("emu://to6?ns=mem:1M:512", 30);
	REQUIRE(c != NULL);
	setenv("UNVME_FORMAT_TIMEOUT_MS", "400", 1);
	CHECK_EQ(unvme_admin_limit_ms(c, NVME_ADM_FORMAT_NVM), 400);
	CHECK_EQ(unvme_admin_limit_ms(c, NVME_ADM_SANITIZE), 400);
	CHECK_EQ(unvme_admin_limit_ms(c, NVME_ADM_IDENTIFY), 30);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_SWALLOW, 1, NVME_EMU_FAULT_ADMIN), 0);
	struct nvme_sqe fmt = { .opc = NVME_ADM_FORMAT_NVM, .nsid = 1 };
	CHECK_EQ(unvme_admin(c, &fmt, NULL, 0, NULL), -ETIMEDOUT);
	CHECK(strstr(unvme_errmsg(), "admin command 0x80 got no completion within 400 ms") != NULL);
	/* never shorter than the admin timeout */
	setenv("UNVME_FORMAT_TIMEOUT_MS", "5", 1);
	CHECK_EQ(unvme_admin_limit_ms(c, NVME_ADM_FORMAT_NVM), 30);
	unsetenv("UNVME_FORMAT_TIMEOUT_MS");
	CHECK_EQ(unvme_admin_limit_ms(c, NVME_ADM_FORMAT_NVM), 600000);
	CHECK_EQ(unvme_admin(c, &fmt, NULL, 0, NULL), 0); /* the device formats again */
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_sync_wait_backs_off), TEST(test_fence_unshared_queue),
	  TEST(test_fence_split_queue), TEST(test_admin_aer_slot_comes_back),
	  TEST(test_admin_lost_resets_controller), TEST(test_format_waits_longer))
