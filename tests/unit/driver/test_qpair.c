/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs end to end against the emulated controller: ring wrap-around and phase
 * inversion, command id reuse, a full queue, error statuses, timeouts with Abort (a fatal
 * controller status: test_recovery.c; fences: test_timeouts.c), polls from completion
 * callbacks of the same queue pair.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "test_util.h"

#define DEV_MEM "emu://qp?ns=mem:16M:512&ns=null:1G:4096"

static struct unvme_ctrlr *open_dev(const char *uri)
{
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open(uri, NULL, &c);
	if (rc)
		fprintf(stderr, "  open %s: %d %s\n", uri, rc, unvme_errmsg());
	return c;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 9));
}

static void test_open_identify_close(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	CHECK_STREQ(unvme_ctrlr_transport(c), "emu");
	CHECK_EQ(unvme_ctrlr_first_nsid(c), 1);
	CHECK_EQ(unvme_ctrlr_next_nsid(c, 1), 2);
	CHECK_EQ(unvme_ctrlr_next_nsid(c, 2), 0);
	struct unvme_ns *ns1 = unvme_ctrlr_ns(c, 1), *ns2 = unvme_ctrlr_ns(c, 2);
	REQUIRE(ns1 && ns2);
	CHECK(unvme_ctrlr_ns(c, 3) == NULL);
	CHECK_EQ(unvme_ns_lba_size(ns1), 512);
	CHECK_EQ(unvme_ns_nlbas(ns1), (16u << 20) / 512);
	CHECK_EQ(unvme_ns_lba_size(ns2), 4096);
	CHECK_EQ(unvme_ns_csi(ns1), NVME_CSI_NVM);
	CHECK(unvme_ctrlr_max_io_queues(c) >= 1);
	CHECK_EQ(unvme_ctrlr_max_xfer(c), 2u << 20);
	CHECK(unvme_ctrlr_identify_data(c)->nn >= 2); /* NN is the highest NSID the controller supports */
	unvme_ctrlr_close(c);
}

static void test_read_write_roundtrip(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	size_t len = 256 * 1024; /* a PRP list */
	uint8_t *w = unvme_dma_alloc(len + 4096, 4096), *r = unvme_dma_alloc(len + 4096, 4096);
	fill(w, len + 4096, 1);
	CHECK_EQ(unvme_write_sync(ns, qp, w, 100, (uint32_t)(len / 512)), 0);
	memset(r, 0, len);
	CHECK_EQ(unvme_read_sync(ns, qp, r, 100, (uint32_t)(len / 512)), 0);
	CHECK(memcmp(w, r, len) == 0);
	/* a buffer that starts mid-page */
	CHECK_EQ(unvme_write_sync(ns, qp, w + 512, 7, 9), 0);
	memset(r, 0, 8192);
	CHECK_EQ(unvme_read_sync(ns, qp, r + 1024, 7, 9), 0);
	CHECK(memcmp(w + 512, r + 1024, 9 * 512) == 0);
	CHECK_EQ(unvme_compare_sync(ns, qp, w + 512, 7, 9), 0);
	w[600] ^= 0xff;
	CHECK_EQ(unvme_compare_sync(ns, qp, w + 512, 7, 9), NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	/* write zeroes and deallocate read back as zeroes */
	CHECK_EQ(unvme_write_zeroes_sync(ns, qp, 100, 8), 0);
	CHECK_EQ(unvme_deallocate_sync(ns, qp, 108, 8), 0);
	CHECK_EQ(unvme_read_sync(ns, qp, r, 100, 16), 0);
	int nonzero = 0;
	for (int i = 0; i < 16 * 512; i++)
		nonzero += r[i] != 0;
	CHECK_EQ(nonzero, 0);
	CHECK_EQ(unvme_flush_sync(ns, qp), 0);
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

struct seen {
	int count;
	int status;
	uint16_t max_cid;
	uint16_t last_sqid;
};

static void count_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct seen *s = arg;
	s->count++;
	s->status = NVME_STATUS_FROM_CQE(cpl->status);
	if (cpl->cid > s->max_cid)
		s->max_cid = cpl->cid;
	s->last_sqid = cpl->sqid;
}

static void test_ring_wraps_and_cids_are_reused(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 4};
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096), *rd = unvme_dma_alloc(4096, 4096);
	struct seen s = {0};
	/* 1000 commands through 4-entry rings: 250 laps, the phase flips every lap */
	int ok = 1;
	for (uint32_t i = 0; i < 1000; i++) {
		fill(buf, 512, i);
		CHECK_EQ(unvme_write(ns, qp, buf, i % 64, 1, count_cb, &s), 0);
		while (unvme_qpair_outstanding(qp))
			unvme_qpair_poll(qp, 0);
		CHECK_EQ(unvme_read_sync(ns, qp, rd, i % 64, 1), 0);
		ok &= memcmp(buf, rd, 512) == 0;
	}
	CHECK(ok);
	CHECK_EQ(s.count, 1000);
	CHECK_EQ(s.status, 0);
	CHECK(s.max_cid < 3); /* depth 4: three trackers, reused over and over */
	CHECK_EQ(s.last_sqid, unvme_qpair_id(qp));
	unvme_dma_free(buf);
	unvme_dma_free(rd);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_full_queue(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 8};
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 2);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	struct seen s = {0};
	for (int i = 0; i < 7; i++)
		CHECK_EQ(unvme_read(ns, qp, buf, (uint64_t)i, 1, count_cb, &s), 0);
	CHECK_EQ(unvme_read(ns, qp, buf, 7, 1, count_cb, &s), -EAGAIN);
	CHECK_EQ(unvme_qpair_outstanding(qp), 7);
	int n = 0;
	while (n < 7) {
		int rc = unvme_qpair_poll(qp, 0);
		REQUIRE(rc >= 0);
		n += rc;
	}
	CHECK_EQ(s.count, 7);
	CHECK_EQ(unvme_read(ns, qp, buf, 7, 1, count_cb, &s), 0);
	while (unvme_qpair_outstanding(qp))
		unvme_qpair_poll(qp, 0);
	/* a depth above CAP.MQES + 1 is refused */
	struct unvme_qpair *big;
	struct unvme_qpair_opts ob = {.depth = 70000};
	CHECK_EQ(unvme_qpair_create(c, &ob, &big), -EINVAL);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_device_statuses(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(8192, 4096);
	int st = unvme_read_sync(ns, qp, buf, unvme_ns_nlbas(ns) - 1, 2);
	CHECK_EQ(st, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_STREQ(unvme_status_str(st, NVME_CSI_NVM), "LBA Out of Range");
	struct nvme_sqe cmd = {0};
	cmd.opc = 0x7f; /* not an NVM opcode */
	cmd.nsid = 1;
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, NULL, 0, NULL),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	cmd.opc = NVME_CMD_READ;
	cmd.nsid = 9;
	CHECK_EQ(unvme_qpair_cmd_sync(qp, &cmd, buf, 512, NULL),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	/* admin: a queue id that already exists */
	struct nvme_sqe a = {0};
	a.opc = NVME_ADM_CREATE_CQ;
	a.cdw10 = (15u << 16) | unvme_qpair_id(qp);
	a.cdw11 = NVME_CREATE_CQ_PC;
	a.prp1 = unvme_dma_iova(buf);
	CHECK_EQ(unvme_admin(c, &a, NULL, 0, NULL), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	a.opc = 0x7e;
	CHECK_EQ(unvme_admin(c, &a, NULL, 0, NULL), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	/* data written before the errors is still there */
	uint8_t *w = unvme_dma_alloc(512, 512);
	fill(w, 512, 77);
	CHECK_EQ(unvme_write_sync(ns, qp, w, 3, 1), 0);
	CHECK_EQ(unvme_read_sync(ns, qp, buf, unvme_ns_nlbas(ns), 1),
		 NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE));
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 3, 1), 0);
	CHECK(memcmp(w, buf, 512) == 0);
	/* the host refuses memory the device could not reach */
	static uint8_t stack_buf[4096];
	CHECK_EQ(unvme_read_sync(ns, qp, stack_buf, 0, 1), -EINVAL);
	unvme_dma_free(w);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static int inject(struct unvme_ctrlr *c, uint32_t fault, uint32_t count)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_EMU_FAULT;
	cmd.cdw10 = fault;
	cmd.cdw11 = count;
	return unvme_admin(c, &cmd, NULL, 0, NULL);
}

static void test_timeout_sends_abort(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 16, .timeout_ms = 50};
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	CHECK_EQ(inject(c, NVME_EMU_FAULT_DROP, 1), 0);
	struct seen s = {0};
	CHECK_EQ(unvme_read(ns, qp, buf, 0, 1, count_cb, &s), 0);
	uint64_t spins = 0;
	while (s.count == 0 && spins++ < 2000000000ull)
		REQUIRE(unvme_qpair_poll(qp, 0) >= 0);
	CHECK_EQ(s.count, 1);
	CHECK_EQ(s.status, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED));
	/* the queue goes on working */
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 0, 1), 0);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* ---- polling from a completion callback of the same queue pair ---- */

struct nested {
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	uint8_t *bufs[6];
	uint8_t *inner;
	int calls[6];
	int bad_data;
	int inner_rc;
	int depth, max_depth, deepest_rc;
};

struct nested_cmd {
	struct nested *n;
	int i;
};

static bool block_is(const uint8_t *p, uint32_t lba)
{
	uint8_t want[512];
	fill(want, 512, lba);
	return memcmp(p, want, 512) == 0;
}

static void nested_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct nested_cmd *nc = arg;
	struct nested *n = nc->n;
	n->calls[nc->i]++;
	if (NVME_STATUS_FROM_CQE(cpl->status) != 0 || !block_is(n->bufs[nc->i], (uint32_t)nc->i))
		n->bad_data++;
	if (nc->i == 0) {
		/* a synchronous read from inside the callback: polls the same queue pair, which
		 * reaps the other reads' completions (their callbacks run nested) and its own */
		n->inner_rc = unvme_read_sync(n->ns, n->qp, n->inner, 9, 1);
		if (n->inner_rc == 0 && !block_is(n->inner, 9))
			n->bad_data++;
	}
}

static void deep_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct nested *n = arg;
	(void)cpl;
	if (++n->depth > n->max_depth)
		n->max_depth = n->depth;
	if (n->deepest_rc) { /* refused once: stop the chain */
		n->depth--;
		return;
	}
	int rc = unvme_read(n->ns, n->qp, n->inner, 9, 1, deep_cb, n);
	if (rc == 0) {
		int p = 0;
		while ((p = unvme_qpair_poll(n->qp, 0)) == 0)
			;
		if (p < 0 && !n->deepest_rc) {
			n->deepest_rc = p;
			/* the refused poll left the command queued: the outer polls reap it */
		}
	}
	n->depth--;
}

static void test_poll_from_callback(void)
{
	struct unvme_ctrlr *c = open_dev(DEV_MEM);
	REQUIRE(c != NULL);
	struct nested n = { 0 };
	struct unvme_qpair_opts o = { .depth = 32 };
	REQUIRE(unvme_qpair_create(c, &o, &n.qp) == 0);
	n.ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(512, 512);
	for (uint32_t lba = 0; lba < 10; lba++) {
		fill(w, 512, lba);
		REQUIRE(unvme_write_sync(n.ns, n.qp, w, lba, 1) == 0);
	}
	for (int i = 0; i < 6; i++)
		n.bufs[i] = unvme_dma_zalloc(512, 512);
	n.inner = unvme_dma_zalloc(512, 512);
	/* several rounds, so the CQ wraps (and the phase flips) inside nested polls */
	struct nested_cmd nc[6];
	for (int round = 0; round < 20; round++) {
		memset(n.calls, 0, sizeof(n.calls));
		for (int i = 0; i < 6; i++) {
			nc[i] = (struct nested_cmd){ &n, i };
			memset(n.bufs[i], 0, 512);
			REQUIRE(unvme_read(n.ns, n.qp, n.bufs[i], (uint64_t)i, 1, nested_cb, &nc[i]) == 0);
		}
		int total = 0;
		for (int spins = 0; total < 6 && spins < 1000000; spins++) {
			int r = unvme_qpair_poll(n.qp, 1); /* one at a time: the rest are left for the
							    * nested poll to find */
			REQUIRE(r >= 0);
			total = 0;
			for (int i = 0; i < 6; i++)
				total += n.calls[i];
		}
		for (int i = 0; i < 6; i++)
			CHECK_EQ(n.calls[i], 1);
		CHECK_EQ(n.inner_rc, 0);
	}
	CHECK_EQ(n.bad_data, 0);
	CHECK_EQ(unvme_qpair_outstanding(n.qp), 0);

	/* nesting is bounded: the 8th level is refused with -EDEADLK, nothing is lost */
	REQUIRE(unvme_read(n.ns, n.qp, n.inner, 9, 1, deep_cb, &n) == 0);
	for (int spins = 0; unvme_qpair_outstanding(n.qp) && spins < 1000000; spins++)
		REQUIRE(unvme_qpair_poll(n.qp, 0) >= 0);
	CHECK_EQ(n.deepest_rc, -EDEADLK);
	CHECK_EQ(n.max_depth, 8);
	CHECK_EQ(unvme_qpair_outstanding(n.qp), 0);

	for (int i = 0; i < 6; i++)
		unvme_dma_free(n.bufs[i]);
	unvme_dma_free(n.inner);
	unvme_dma_free(w);
	unvme_qpair_destroy(n.qp);
	unvme_ctrlr_close(c);
}

static void test_bad_device_ids(void)
{
	struct unvme_ctrlr *c = NULL;
	CHECK_EQ(unvme_ctrlr_open("emu://x?ns=mem:3G:513", NULL, &c), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "513") != NULL);
	CHECK(c == NULL);
	CHECK(unvme_ctrlr_open("emu://x?ns=file:0:512:/nonexistent/dir/img", NULL, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "/nonexistent/dir/img") != NULL);
	CHECK_EQ(unvme_ctrlr_open("0000:77:00.0", NULL, &c), -ENODEV);
	CHECK(strstr(unvme_errmsg(), "VFIO") != NULL);
}

struct worker {
	struct unvme_ctrlr *c;
	int id;
	int ok;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct unvme_qpair *qp;
	if (unvme_qpair_create(wk->c, NULL, &qp) != 0)
		return NULL;
	struct unvme_ns *ns = unvme_ctrlr_ns(wk->c, 1);
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	int ok = 1;
	for (uint32_t i = 0; i < 2000; i++) {
		uint64_t lba = (uint64_t)wk->id * 4096 + (i % 512) * 8;
		fill(w, 4096, i + (uint32_t)wk->id * 100000u);
		ok &= unvme_write_sync(ns, qp, w, lba, 8) == 0;
		ok &= unvme_read_sync(ns, qp, r, lba, 8) == 0;
		ok &= memcmp(w, r, 4096) == 0;
	}
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	wk->ok = ok;
	return NULL;
}

static void run_threads(const char *uri)
{
	struct unvme_ctrlr *c = open_dev(uri);
	REQUIRE(c != NULL);
	pthread_t t[3];
	struct worker wk[3];
	for (int i = 0; i < 3; i++) {
		wk[i] = (struct worker){.c = c, .id = i};
		pthread_create(&t[i], NULL, worker_main, &wk[i]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		CHECK(wk[i].ok);
	}
	unvme_ctrlr_close(c);
}

static void test_threads_inline(void)
{
	run_threads("emu://mt?ns=mem:64M:512");
}

static void test_threads_device_thread(void)
{
	run_threads("emu://mtt?ns=mem:64M:512&mode=thread");
}

TEST_MAIN(TEST(test_open_identify_close), TEST(test_read_write_roundtrip),
	  TEST(test_ring_wraps_and_cids_are_reused), TEST(test_full_queue), TEST(test_device_statuses),
	  TEST(test_timeout_sends_abort), TEST(test_poll_from_callback), TEST(test_bad_device_ids),
	  TEST(test_threads_inline), TEST(test_threads_device_thread))
