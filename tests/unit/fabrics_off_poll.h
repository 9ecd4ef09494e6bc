/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabrics recovery off the poll, as an application sees it (NVMe/TCP's and NVMe/RDMA's
 * tests): reads are in flight when every connection is cut, and the target (through the
 * test's proxy or relay) answers each new connection's Connect OFF_POLL_DELAY_MS late. The application
 * only polls and submits, as a poll loop does; the driver's recovery reconnects the
 * association and the queue inside those calls. What must hold:
 *   - no poll and no submit waits for the network: none of them takes over 500 ms, a bound
 *     far above a poll's cost (14 ms at most beside stress-ng; 243 ms once, under ASan beside
 *     the QEMU guest and the integration suite) and below the 600 ms a held Connect takes: a
 *     loaded machine does not fail it, a poll that made the connection would;
 *   - the reset completes and the I/O resumes: a read submitted after the cut completes
 *     successfully with the data written before;
 *   - the commands that were in flight complete exactly once each (with an error: they
 *     were lost with the connection), also after many more polls.
 * The same holds when the network is slow on a live association (off_poll_live_property,
 * off_poll_keep_alive): the answers to the Property Gets and Sets of CC and CSTS, or to the
 * Keep Alives, come OFF_POLL_DELAY_MS late, while a recovery step would read CSTS, end a
 * live association (CC.EN = 0) or ring and reap the admin queue.
 * Header only: both tests include it with their own proxy.
 */
#ifndef UNVME_TEST_FABRICS_OFF_POLL_H
#define UNVME_TEST_FABRICS_OFF_POLL_H

#include <errno.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "fabrics_capsule.h"
#include "test_util.h"
#include "unvme/unvme.h"

#define OFF_POLL_LOST 8            /* reads in flight at the cut */
#define OFF_POLL_DELAY_MS 600u     /* how late the proxy answers each new Connect */
#define OFF_POLL_SLOW_MS 500u      /* a call slower than this waited for something */
#define OFF_POLL_GUARD_MS 30000u   /* hang guard */

struct off_poll_cmd {
	int calls;                 /* completions seen: must end at 1 */
	uint16_t status;
};

static void off_poll_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct off_poll_cmd *o = arg;
	o->calls++;
	o->status = NVME_STATUS_FROM_CQE(cpl->status);
}

static uint64_t off_poll_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct off_poll_result {
	unsigned slow_calls;       /* polls and submits over OFF_POLL_SLOW_MS */
	uint64_t slowest_us;
	unsigned polls;
	uint64_t recovered_ms;     /* from the cut to the first good read */
	bool resumed;              /* a read after the cut completed with the data */
	bool lost_once;            /* every read in flight at the cut completed exactly once */
	bool lost_failed;          /* ... with an error (it was lost) */
};

/* hold(arg, true) stops the proxy from forwarding (the reads stay in flight), cut(arg) cuts
 * every connection and makes the next ones' Connect late, hold(arg, false) forwards again.
 * lba 0 holds `pattern` (8 blocks of 512 bytes). */
static void off_poll_run(struct unvme_ctrlr *c, struct unvme_qpair *qp, const uint8_t *pattern,
			 void (*hold)(void *arg, bool on), void (*cut)(void *arg), void *arg,
			 struct off_poll_result *res)
{
	memset(res, 0, sizeof(*res));
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *lost_buf = unvme_dma_alloc(4096u * OFF_POLL_LOST, 4096);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	if (!ns || !lost_buf || !buf) {
		CHECK(!"no namespace or no DMA memory");
		unvme_dma_free(lost_buf);
		unvme_dma_free(buf);
		return;
	}
	struct off_poll_cmd lost[OFF_POLL_LOST] = {0};
	hold(arg, true);
	for (int i = 0; i < OFF_POLL_LOST; i++)
		CHECK_EQ(unvme_read(ns, qp, lost_buf + 4096u * i, 0, 8, off_poll_cb, &lost[i]), 0);
	unvme_qpair_poll(qp, 0); /* rung: on the wire, the proxy holds them */
	uint64_t t0 = off_poll_now_us();
	cut(arg);
	hold(arg, false);
	/* the reads after the cut: one at a time, each must complete once */
	struct off_poll_cmd after[64] = {0};
	int n_after = 0;
	bool in_flight = false;
	uint64_t end = t0 + (uint64_t)OFF_POLL_GUARD_MS * 1000u;
	int done_polls = -1; /* polls still to make once done, to see nothing completes twice */
	while (off_poll_now_us() < end && done_polls != 0) {
		if (!in_flight && !res->resumed && n_after < 64) {
			memset(buf, 0, 4096);
			uint64_t s = off_poll_now_us();
			int rc = unvme_read(ns, qp, buf, 0, 8, off_poll_cb, &after[n_after]);
			uint64_t d = off_poll_now_us() - s;
			if (d > res->slowest_us)
				res->slowest_us = d;
			if (d > OFF_POLL_SLOW_MS * 1000u)
				res->slow_calls++;
			if (rc == 0) {
				in_flight = true;
				n_after++;
			}
		}
		uint64_t s = off_poll_now_us();
		(void)unvme_qpair_poll(qp, 0);
		uint64_t d = off_poll_now_us() - s;
		res->polls++;
		if (d > res->slowest_us)
			res->slowest_us = d;
		if (d > OFF_POLL_SLOW_MS * 1000u)
			res->slow_calls++;
		if (in_flight && after[n_after - 1].calls) {
			in_flight = false;
			if (after[n_after - 1].status == 0 && memcmp(buf, pattern, 4096) == 0) {
				res->resumed = true;
				res->recovered_ms = (off_poll_now_us() - t0) / 1000u;
			}
		}
		bool all_lost = true;
		for (int i = 0; i < OFF_POLL_LOST; i++)
			all_lost = all_lost && lost[i].calls;
		if (done_polls < 0 && res->resumed && all_lost)
			done_polls = 2000;
		else if (done_polls > 0)
			done_polls--;
		if (!res->resumed && !in_flight) {
			struct timespec ts = {0, 1000000}; /* a refused submit: try again soon */
			nanosleep(&ts, NULL);
		}
	}
	res->lost_once = true;
	res->lost_failed = true;
	for (int i = 0; i < OFF_POLL_LOST; i++) {
		res->lost_once = res->lost_once && lost[i].calls == 1;
		res->lost_failed = res->lost_failed && lost[i].status != 0;
	}
	for (int i = 0; i < n_after; i++)
		CHECK(after[i].calls <= 1);
	/* a read still in flight at the guard would complete into this frame: wait it out */
	while (in_flight && !after[n_after - 1].calls && off_poll_now_us() < end + 10000000u)
		(void)unvme_qpair_poll(qp, 0);
	unvme_dma_free(lost_buf);
	unvme_dma_free(buf);
}

struct off_poll_net {
	void (*hold)(void *arg, bool on);
	void (*cut)(void *arg);                     /* every connection cut, nothing else */
	void (*delay_connect)(void *arg, unsigned ms); /* new connections' Connect that late */
	/* from now on the answer to each host command of the kinds in the mask (1u << kind)
	 * comes ms late (0: no more) */
	void (*hold_answers)(void *arg, unsigned kinds, unsigned ms);
	void (*refuse_io_connect)(void *arg, unsigned n); /* the next n I/O queues' Connects */
	unsigned (*seen)(void *arg, enum off_poll_kind kind); /* host commands of a kind so far */
	void *arg;
};

__attribute__((unused)) static void off_poll_report(const char *what, const struct off_poll_result *r)
{
	fprintf(stderr, "  %s: %u polls, slowest %llu us, I/O back after %llu ms\n", what, r->polls,
		(unsigned long long)r->slowest_us, (unsigned long long)r->recovered_ms);
}

/*
 * (a), (b): every connection cut under I/O; on the new association the answers to the
 * Property Gets and Sets of CC and CSTS come 600 ms late, and the I/O queue's first Connect is
 * refused, so the association is reset while it is live (a refused queue connect). The steps
 * that find the association live after each reconnect read CSTS (before: a Property Get
 * inside the step, 600 ms), and the reset ends a live association (before: Property Get of
 * CSTS and CC, then Property Set CC.EN = 0, each waited for inside the step). Now: no
 * application call over 500 ms, the Property Set CC.EN = 0 still went to the target, every
 * read in flight completed once, I/O resumes with the data.
 */
__attribute__((unused)) static void off_poll_live_property(struct unvme_ctrlr *c, struct unvme_qpair *qp,
				   const uint8_t *pattern, const struct off_poll_net *net)
{
	unsigned held0 = net->seen(net->arg, OFF_POLL_PROPERTY);
	unsigned off0 = net->seen(net->arg, OFF_POLL_DISABLE);
	unsigned refused0 = net->seen(net->arg, OFF_POLL_REFUSED);
	uint32_t resets0 = unvme_ctrlr_reset_count(c);
	net->hold_answers(net->arg, 1u << OFF_POLL_PROPERTY, OFF_POLL_DELAY_MS);
	net->refuse_io_connect(net->arg, 1);
	struct off_poll_result r;
	off_poll_run(c, qp, pattern, net->hold, net->cut, net->arg, &r);
	net->hold_answers(net->arg, 0, 0);
	off_poll_report("property answers held", &r);
	fprintf(stderr, "    %u property commands held %u ms, %u CC.EN = 0 sent, %u queue "
		"connect refused, %u resets\n", net->seen(net->arg, OFF_POLL_PROPERTY) - held0,
		OFF_POLL_DELAY_MS, net->seen(net->arg, OFF_POLL_DISABLE) - off0,
		net->seen(net->arg, OFF_POLL_REFUSED) - refused0, unvme_ctrlr_reset_count(c) - resets0);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	/* the network did take its time: two associations' Set CC and Get CSTS held */
	CHECK(net->seen(net->arg, OFF_POLL_PROPERTY) - held0 >= 4);
	CHECK(r.recovered_ms >= 2 * OFF_POLL_DELAY_MS);
	/* the reset of the live association happened, and still told the target */
	CHECK_EQ(net->seen(net->arg, OFF_POLL_REFUSED) - refused0, 1);
	CHECK(net->seen(net->arg, OFF_POLL_DISABLE) - off0 >= 1);
	CHECK(unvme_ctrlr_reset_count(c) - resets0 >= 2);
	CHECK(!unvme_ctrlr_is_failed(c));
}

/*
 * (c): the same cut with keep alive on (the controller opened with a KATO of 1000 ms: a Keep
 * Alive every 500 ms, the target's grace of 1.5 KATO outlasts one held 600 ms) and the answer
 * to every Keep Alive 600 ms late, each new Connect 1200 ms late: while the I/O queue's
 * connection is being made on the live association (1200 ms), a Keep Alive goes out and
 * every step rings and reaps the admin queue (before: each waited for the keep-alive
 * thread's lock while its Keep Alive was in flight). Now: no application call over 500 ms,
 * I/O resumes, also while Keep Alives go on being late.
 */
__attribute__((unused)) static void off_poll_keep_alive(struct unvme_ctrlr *c, struct unvme_qpair *qp,
				const uint8_t *pattern, const struct off_poll_net *net)
{
	unsigned held0 = net->seen(net->arg, OFF_POLL_KEEP_ALIVE);
	net->hold_answers(net->arg, 1u << OFF_POLL_KEEP_ALIVE, OFF_POLL_DELAY_MS);
	net->delay_connect(net->arg, 2 * OFF_POLL_DELAY_MS);
	struct off_poll_result r;
	off_poll_run(c, qp, pattern, net->hold, net->cut, net->arg, &r);
	net->delay_connect(net->arg, 0);
	unsigned held = net->seen(net->arg, OFF_POLL_KEEP_ALIVE) - held0;
	off_poll_report("keep-alive answers held", &r);
	fprintf(stderr, "    %u Keep Alives held %u ms\n", held, OFF_POLL_DELAY_MS);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	CHECK(held >= 1);
	CHECK(r.recovered_ms >= OFF_POLL_DELAY_MS);
	CHECK(!unvme_ctrlr_is_failed(c));
	/* the Keep Alives go on being held after the recovery: I/O still works meanwhile */
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	CHECK(b && unvme_read_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 8) == 0 &&
	      memcmp(b, pattern, 4096) == 0);
	unvme_dma_free(b);
	net->hold_answers(net->arg, 0, 0);
}

#endif
