/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot-plug of an emulated controller within the process: surprise removal during I/O gives
 * every outstanding command back with an error and nothing hangs; the handle answers
 * -ENODEV and says why; listeners hear REMOVED and ARRIVED; a card put back (the same one,
 * or a replacement with another serial number) is attached again by address and the same
 * queue pairs carry I/O again, on several threads (unshared queues) and through a split
 * queue's owner. Threaded: run under TSan too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unvme/emu.h"
#include "unvme/unvme.h"
#include "seen.h"
#include "test_util.h"
#include "test_tmpdir.h"

#define ABORTED NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION)

/* What the listener heard. */
struct heard {
	_Atomic int removed, arrived, last_status;
	char serial[21];
};

static void listen(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	(void)c;
	struct heard *h = arg;
	if (ev->type == UNVME_EVENT_REMOVED)
		atomic_fetch_add(&h->removed, 1);
	if (ev->type == UNVME_EVENT_ARRIVED) {
		memcpy(h->serial, ev->serial, sizeof(h->serial));
		atomic_store(&h->last_status, ev->status);
		atomic_fetch_add(&h->arrived, 1);
	}
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u);
}

/* A file namespace keeps its data in the file: the same card put back still has it. */
static void test_same_card_comes_back(void)
{
	char dev[512];
	snprintf(dev, sizeof(dev), "emu://hp1?ns=file:16M:512:%s/a.img&mode=thread&rlat=300ms", test_dir);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct heard h = { 0 };
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen, &h), 0);
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen, &h), -EEXIST);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 16 };
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	fill(w, 4096, 5);
	CHECK_EQ(unvme_write_sync(ns, qp, w, 8, 8), 0);
	char sn[21];
	memcpy(sn, unvme_ctrlr_identify_data(c)->sn, 20);
	sn[20] = '\0';
	for (int i = 19; i >= 0 && sn[i] == ' '; i--)
		sn[i] = '\0'; /* Identify pads with spaces, the event does not */

	/* a read in flight (300 ms in the device) when the card is pulled */
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(ns, qp, r, 8, 8, seen_cb, &s), 0);
	unvme_qpair_ring(qp);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(atomic_load(&h.removed), 1);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 1);
	CHECK_EQ(unvme_qpair_poll(qp, 0), -ENODEV);
	CHECK(strstr(unvme_errmsg(), "removed") != NULL);
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_qpair_outstanding(qp), 0);
	CHECK_EQ(unvme_read(ns, qp, r, 8, 8, seen_cb, &s), -ENODEV);
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), -ENODEV);
	CHECK_EQ(unvme_emu_unplug(dev), -EALREADY);

	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	CHECK_EQ(atomic_load(&h.arrived), 1);
	CHECK_EQ(atomic_load(&h.last_status), 0);
	CHECK_STREQ(h.serial, sn);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 0);
	CHECK_EQ(unvme_ctrlr_is_failed(c), 0);
	CHECK_EQ(unvme_emu_plug(dev, NULL), -EBUSY);
	/* the same queue pair and namespace pointer; the data written before is there */
	CHECK(unvme_ctrlr_ns(c, 1) == ns);
	memset(r, 0, 4096);
	CHECK_EQ(unvme_read_sync(ns, qp, r, 8, 8), 0);
	CHECK(memcmp(w, r, 4096) == 0);
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), 0);

	unvme_ctrlr_remove_event_cb(c, listen, &h);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(atomic_load(&h.removed), 1); /* not called after its removal */
	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* A replacement card with another serial number and other namespaces, at the same address. */
static void test_replacement_card(void)
{
	const char *dev = "emu://hp2?ns=mem:16M:512";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct heard h = { 0 };
	CHECK_EQ(unvme_ctrlr_add_event_cb(c, listen, &h), 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns1 = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(unvme_emu_plug(dev, "emu://spare?ns=mem:32M:4096&ns=mem:8M&serial=SPARE0001"), 0);
	/* re-attach, and the queue created again by this first command */
	CHECK_EQ(unvme_read_sync(ns1, qp, b, 0, 1), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  re-insertion to the first completed read: %.0f us\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
	CHECK_EQ(atomic_load(&h.arrived), 1);
	CHECK_STREQ(h.serial, "SPARE0001");
	CHECK(memcmp(unvme_ctrlr_identify_data(c)->sn, "SPARE0001", 9) == 0);
	/* namespace 1 is the same struct with the new geometry; namespace 2 is new */
	CHECK(unvme_ctrlr_ns(c, 1) == ns1);
	CHECK_EQ(unvme_ns_lba_size(ns1), 4096);
	CHECK(unvme_ctrlr_ns(c, 2) != NULL);
	fill(b, 4096, 9);
	CHECK_EQ(unvme_write_sync(ns1, qp, b, 3, 1), 0);
	CHECK_EQ(unvme_read_sync(ns1, qp, b, 3, 1), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_bad_requests(void)
{
	CHECK_EQ(unvme_emu_unplug("emu://nobody-opened-me"), -ENODEV);
	CHECK(strstr(unvme_errmsg(), "not open") != NULL);
	CHECK_EQ(unvme_emu_unplug("0000:02:00.0"), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "not an emulated device") != NULL);
	CHECK_EQ(unvme_emu_unplug(NULL), -EINVAL);
	CHECK_EQ(unvme_emu_plug("emu://nobody-opened-me", NULL), -ENODEV);
	const char *dev = "emu://hp3";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	CHECK_EQ(unvme_emu_plug(dev, NULL), -EBUSY);
	CHECK(strstr(unvme_errmsg(), "holds a card") != NULL);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(unvme_emu_plug(dev, "emu://x?ns=mem:3G:513"), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "513") != NULL);
	CHECK_EQ(unvme_emu_plug(dev, "/tmp/not-a-card"), -EINVAL);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 1); /* still empty */
	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 0);
	unvme_ctrlr_close(c);
}

/* Several threads, each with its own queue pair and commands in flight, while the card is
 * pulled and put back: every command submitted completes exactly once (with an error if it
 * was in flight at the removal), and every thread's I/O works again afterwards. */
#define NTHREADS 4
#define INFLIGHT 8

struct worker {
	pthread_t tid;
	struct unvme_ctrlr *c;
	struct unvme_ns *ns;
	_Atomic bool *stop;
	_Atomic int submitted, ok, failed, enodev_seen, ok_after_plug;
	_Atomic bool *plugged;
	int index;
	_Atomic bool setup_ok;
};

struct io {
	struct worker *w;
	uint8_t *buf;
	bool busy;
};

static void io_done(void *arg, const struct nvme_cqe *cpl)
{
	struct io *io = arg;
	io->busy = false;
	if (NVME_STATUS_FROM_CQE(cpl->status) == 0) {
		atomic_fetch_add(&io->w->ok, 1);
		if (atomic_load(io->w->plugged))
			atomic_fetch_add(&io->w->ok_after_plug, 1);
	} else {
		atomic_fetch_add(&io->w->failed, 1);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 32 };
	if (unvme_qpair_create(w->c, &o, &qp) != 0)
		return NULL;
	struct io ios[INFLIGHT];
	for (int i = 0; i < INFLIGHT; i++)
		ios[i] = (struct io){ w, unvme_dma_zalloc(4096, 4096), false };
	atomic_store(&w->setup_ok, true);
	uint32_t n = 0;
	while (!atomic_load(w->stop)) {
		for (int i = 0; i < INFLIGHT; i++) {
			if (ios[i].busy)
				continue;
			uint64_t lba = (uint64_t)(w->index * 1024 + (n++ % 1024)) * 8;
			ios[i].busy = true;
			int rc = (n & 1) ? unvme_write(w->ns, qp, ios[i].buf, lba, 8, io_done, &ios[i])
					 : unvme_read(w->ns, qp, ios[i].buf, lba, 8, io_done, &ios[i]);
			if (rc == 0) {
				atomic_fetch_add(&w->submitted, 1);
				continue;
			}
			ios[i].busy = false;
			if (rc == -ENODEV)
				atomic_fetch_add(&w->enodev_seen, 1);
			break;
		}
		int p = unvme_qpair_poll(qp, 0);
		if (p == -ENODEV) {
			atomic_fetch_add(&w->enodev_seen, 1);
			test_sleep_ms(1);
		}
	}
	/* drain what is left */
	uint64_t deadline = test_now_ms() + 5000;
	while (unvme_qpair_outstanding(qp) && test_now_ms() < deadline)
		(void)unvme_qpair_poll(qp, 0);
	for (int i = 0; i < INFLIGHT; i++)
		unvme_dma_free(ios[i].buf);
	unvme_qpair_destroy(qp);
	return NULL;
}

static void run_load(const char *dev)
{
	NEED_CPUS(2);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	_Atomic bool stop = false, plugged = false;
	struct worker ws[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		ws[i] = (struct worker){ .c = c, .ns = unvme_ctrlr_ns(c, 1), .stop = &stop,
					 .plugged = &plugged, .index = i };
		REQUIRE(pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) == 0);
	}
	/* every thread has its queue and I/O going (a loaded machine starts threads late) */
	uint64_t deadline = test_now_ms() + 10000;
	for (int i = 0; i < NTHREADS; i++)
		while ((!atomic_load(&ws[i].setup_ok) || atomic_load(&ws[i].ok) < 50) &&
		       test_now_ms() < deadline)
			test_sleep_ms(1);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	/* every thread notices, and nothing of theirs stays outstanding */
	deadline = test_now_ms() + 5000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].enodev_seen) == 0 && test_now_ms() < deadline)
			test_sleep_ms(1);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(atomic_load(&ws[i].enodev_seen) > 0);
		CHECK(atomic_load(&ws[i].ok) > 0); /* it did work before */
	}
	test_sleep_ms(20);
	atomic_store(&plugged, true);
	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	deadline = test_now_ms() + 10000;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&ws[i].ok_after_plug) < 200 && test_now_ms() < deadline)
			test_sleep_ms(1);
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(ws[i].tid, NULL);
		CHECK(atomic_load(&ws[i].setup_ok));
		CHECK(atomic_load(&ws[i].ok_after_plug) >= 200);
		/* exactly once each: what was submitted either succeeded or failed */
		CHECK_EQ(atomic_load(&ws[i].submitted), atomic_load(&ws[i].ok) + atomic_load(&ws[i].failed));
	}
	unvme_ctrlr_close(c);
}

static void test_load_inline(void)
{
	run_load("emu://hp4?ns=mem:64M:512");
}

/* thread mode with latency: many commands are inside the device when it goes */
static void test_load_thread_mode(void)
{
	run_load("emu://hp5?ns=mem:64M:512&rlat=200us&wlat=100us");
}

/* A split queue: the poller gives back what the removed device will never complete and
 * answers -ENODEV; once the card is back, the owner recovers the queue. */
static void test_split_queue(void)
{
	const char *dev = "emu://hp6?ns=mem:16M:512&rlat=300ms";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = { .depth = 16, .split = true };
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	struct seen s = { 0 };
	CHECK_EQ(unvme_read(ns, qp, b, 0, 8, seen_cb, &s), 0);
	unvme_qpair_ring(qp);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK_EQ(unvme_qpair_poll(qp, 0), -ENODEV);
	CHECK_EQ(atomic_load(&s.count), 1);
	CHECK_EQ(atomic_load(&s.status), ABORTED);
	CHECK_EQ(unvme_read(ns, qp, b, 0, 8, seen_cb, &s), -ENODEV);
	CHECK_EQ(unvme_qpair_recover(qp), -ENODEV);
	CHECK_EQ(unvme_emu_plug(dev, NULL), 0);
	CHECK_EQ(unvme_qpair_recover(qp), 0);
	CHECK_EQ(unvme_read(ns, qp, b, 0, 8, seen_cb, &s), 0);
	uint64_t deadline = test_now_ms() + 5000;
	while (atomic_load(&s.count) < 2 && test_now_ms() < deadline)
		(void)unvme_qpair_poll(qp, 0);
	CHECK_EQ(atomic_load(&s.count), 2);
	CHECK_EQ(atomic_load(&s.status), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

/* A queue pair created while the device is out is refused with -ENODEV; one created after
 * the card is back works. Closing a controller whose slot is empty works too. */
static void test_create_and_close_while_removed(void)
{
	const char *dev = "emu://hp7";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	struct unvme_qpair *qp = NULL;
	CHECK(unvme_qpair_create(c, NULL, &qp) != 0);
	unvme_ctrlr_close(c);
	/* opened again: a fresh card */
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	CHECK_EQ(unvme_ctrlr_is_removed(c), 0);
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *b = unvme_dma_zalloc(512, 4096);
	CHECK_EQ(unvme_read_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 1), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void setup_dir(void) __attribute__((constructor));
static void setup_dir(void)
{
	test_dir_make("unvme-hotplug");
}

TEST_MAIN(TEST(test_same_card_comes_back), TEST(test_replacement_card), TEST(test_bad_requests),
	  TEST(test_load_inline), TEST(test_load_thread_mode), TEST(test_split_queue),
	  TEST(test_create_and_close_while_removed))
