/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA host's recovery, through the relay between host and target (rdma_env.h): a
 * cut connection and the reconnect, a target gone for longer than ctrl_loss_tmo (the
 * controller stays failed), the reconnect off the poll and a slow network on a live
 * association (fabrics_off_poll.h: Property and Keep Alive answers held), and a target
 * that lies (a CM reject, an accept with no NVMe/RDMA private data or too small a queue, a
 * response for a command not in flight or of the wrong length, a response that never comes).
 * Threaded (the target's pollers, the relay, keep alive): TSan runs it too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "fabrics_io.h"
#include "fabrics_off_poll.h"
#include "rdma_env.h"
#include "unvme/unvme.h"
#include "unvme/spec/rdma.h"
#include "lib/fabrics/rdma/cm_priv.h"
#include "lib/fabrics/rdma/verbs_fake.h"

/* A controller reached through the relay with an I/O queue pair: what these tests start from. */
struct relayed {
	unsigned port; /* the relay's */
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	struct unvme_ns *ns;
};

/* Starts the target and the relay in front of it: the relay's port, 0 (and nothing left
 * running) on failure. */
static unsigned relay_up(void)
{
	if (target_up())
		return 0;
	unsigned port = relay_start();
	if (!port)
		target_down();
	return port;
}

/* Stops the relay and the target: the host let go of every endpoint and region. */
static void relay_down(void)
{
	relay_stop();
	target_down();
	CHECK_EQ(rv_fake_live_eps(), 0u);
	CHECK_EQ(rv_fake_live_mrs(), 0u);
}

/* relay_up, then the controller opened through the relay with query and o (NULL: the
 * defaults) and an I/O queue pair. false when one fails (said on stderr, nothing left open). */
static bool relayed_open(struct relayed *r, const char *query, const struct unvme_ctrlr_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->port = relay_up();
	if (!r->port) {
		fprintf(stderr, "  no target or no relay\n");
		return false;
	}
	if (open_at(r->port, HOST_OK, query, o, &r->c) || unvme_qpair_create(r->c, NULL, &r->qp)) {
		fprintf(stderr, "  open through the relay: %s\n", unvme_errmsg());
		unvme_ctrlr_close(r->c);
		relay_down();
		return false;
	}
	r->ns = unvme_ctrlr_ns(r->c, 1);
	return true;
}

static void relayed_close(struct relayed *r)
{
	unvme_qpair_destroy(r->qp);
	unvme_ctrlr_close(r->c);
	relay_down();
}

/* The association came back (reset at least min_resets times) and is up. */
static void check_came_back(const struct relayed *x, unsigned min_resets)
{
	CHECK(unvme_ctrlr_reset_count(x->c) >= min_resets);
	CHECK(!unvme_ctrlr_is_failed(x->c));
}

/* Retries a synchronous command while the association comes back. */
static void test_reconnect_after_a_lost_connection(void)
{
	struct relayed x;
	REQUIRE(relayed_open(&x, "kato=1000&reconnect_delay=20", NULL));
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	int failures = 0;
	for (int round = 0; round < 3; round++) {
		memset(w, 0x30 + round, 4096);
		CHECK_EQ(fabrics_sync_retry(x.ns, x.qp, w, (uint64_t)round * 8, true, &failures, GUARD_MS), 0);
		unsigned before = relay_accepted();
		relay_cut(false);
		/* the next commands fail (Host Pathing Error) until the association is back */
		memset(r, 0, 4096);
		CHECK_EQ(fabrics_sync_retry(x.ns, x.qp, r, (uint64_t)round * 8, false, &failures, GUARD_MS), 0);
		CHECK(memcmp(w, r, 4096) == 0);
		CHECK(relay_accepted() >= before + 2); /* a new admin and a new I/O connection */
	}
	check_came_back(&x, 3);
	unvme_dma_free(w);
	unvme_dma_free(r);
	relayed_close(&x);
}

/* The target refuses every reconnect: after ctrl_loss_tmo the controller stays failed, its
 * commands fail at once, and closing it leaves nothing behind. */
static void test_reconnect_gives_up_after_ctrl_loss_tmo(void)
{
	struct relayed x;
	REQUIRE(relayed_open(&x, "ctrl_loss_tmo=300&reconnect_delay=20", NULL));
	uint8_t *b = unvme_dma_alloc(4096, 4096);
	REQUIRE(b);
	CHECK_EQ(unvme_read_sync(x.ns, x.qp, b, 0, 8), 0);
	unsigned before = relay_accepted();
	relay_reject(NVME_RDMA_CM_NO_RSC);
	relay_cut(false);
	uint64_t t0 = test_now_ms(), end = t0 + GUARD_MS;
	/* the reconnect runs off the poll (the commands fail at once meanwhile) until it gives
	 * up: then the controller stays failed and says so */
	bool gave_up = false;
	while (!gave_up && test_now_ms() < end) {
		CHECK(unvme_read_sync(x.ns, x.qp, b, 0, 8) != 0);
		gave_up = unvme_ctrlr_is_failed(x.c) && strstr(unvme_errmsg(), "controller has failed");
		if (!gave_up)
			test_sleep_ms(10);
	}
	CHECK(gave_up);
	CHECK(unvme_ctrlr_is_failed(x.c));
	/* it kept trying for ctrl_loss_tmo (reconnect_delay apart), not forever */
	CHECK(test_now_ms() - t0 >= 300);
	CHECK_EQ(relay_accepted(), before);
	CHECK(unvme_read_sync(x.ns, x.qp, b, 0, 8) != 0);
	unvme_dma_free(b);
	relayed_close(&x);
}

/* One lie in an I/O response: the read it answers fails (never success with data that did
 * not come), the connection ends, the association comes back and the data is intact. */
static void lie_case(enum lie lie, uint32_t io_timeout_ms)
{
	struct unvme_ctrlr_opts o;
	unvme_ctrlr_opts_default(&o);
	if (io_timeout_ms)
		o.io_timeout_ms = io_timeout_ms;
	struct relayed x;
	REQUIRE(relayed_open(&x, "reconnect_delay=20", &o));
	uint8_t *w = unvme_dma_alloc(65536, 4096), *r = unvme_dma_alloc(65536, 4096);
	REQUIRE(w && r);
	fabrics_fill(w, 65536, 5);
	CHECK_EQ(unvme_write_sync(x.ns, x.qp, w, 0, 128), 0);
	relay_lie(lie);
	memset(r, 0, 65536);
	int rc = unvme_read_sync(x.ns, x.qp, r, 0, 128);
	CHECK(rc != 0); /* the lie is never a success */
	CHECK_EQ(relay_lie_left(), LIE_NONE);
	int failures = 0;
	CHECK_EQ(fabrics_sync_retry(x.ns, x.qp, r, 0, false, &failures, GUARD_MS), 0);
	unvme_read_sync(x.ns, x.qp, r, 0, 128);
	CHECK(memcmp(w, r, 65536) == 0);
	check_came_back(&x, 1);
	unvme_dma_free(w);
	unvme_dma_free(r);
	relayed_close(&x);
}

static void test_a_response_for_a_command_not_in_flight(void)
{
	lie_case(LIE_CID_IDLE, 0);
}

static void test_a_response_naming_no_command_of_the_queue(void)
{
	lie_case(LIE_CID_RANGE, 0);
}

static void test_a_response_of_the_wrong_length(void)
{
	lie_case(LIE_LONG, 0);
	lie_case(LIE_SHORT, 0);
}

static void test_a_response_that_never_comes(void)
{
	lie_case(LIE_DROP, 300);
}

static void test_cm_rejects_and_bad_accepts(void)
{
	unsigned port = relay_up();
	REQUIRE(port);
	struct unvme_ctrlr *c;
	relay_reject(NVME_RDMA_CM_INVALID_HSQSIZE);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -ECONNREFUSED);
	CHECK(strstr(unvme_errmsg(), "refused queue 0") != NULL);
	CHECK(strstr(unvme_errmsg(), nvrdma_cm_status_name(NVME_RDMA_CM_INVALID_HSQSIZE)) != NULL);
	relay_reject(0);
	relay_bad_accept(1);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -EPROTO);
	CHECK(strstr(unvme_errmsg(), "not NVMe/RDMA's") != NULL);
	relay_bad_accept(2);
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), -EPROTO);
	CHECK(strstr(unvme_errmsg(), "takes 2 commands") != NULL);
	/* and then a proper one */
	CHECK_EQ(open_at(port, HOST_OK, NULL, NULL, &c), 0);
	unvme_ctrlr_close(c);
	relay_down();
}

/* ---- the recovery off the poll (fabrics_off_poll.h) ---- */

static void relay_hold_cb(void *arg, bool on)
{
	(void)arg;
	relay_hold(on);
}

static void relay_cut_cb(void *arg)
{
	(void)arg;
	relay_delay_connect(OFF_POLL_DELAY_MS);
	relay_cut(true);
}

/* Every connection cut under I/O, each new one's Connect answered 600 ms late: no poll or
 * submit of the application waits for it, the reads in flight complete once, I/O resumes. */
static void test_reconnect_never_waits_in_a_poll(void)
{
	struct relayed x;
	REQUIRE(relayed_open(&x, "kato=0&reconnect_delay=20", NULL));
	uint8_t *pattern = unvme_dma_alloc(4096, 4096);
	REQUIRE(pattern);
	fabrics_fill(pattern, 4096, 9);
	REQUIRE(unvme_write_sync(x.ns, x.qp, pattern, 0, 8) == 0);
	struct off_poll_result r;
	off_poll_run(x.c, x.qp, pattern, relay_hold_cb, relay_cut_cb, NULL, &r);
	fprintf(stderr, "  %u polls, slowest %llu us, I/O back after %llu ms, %u Connects held %u ms\n",
		r.polls, (unsigned long long)r.slowest_us, (unsigned long long)r.recovered_ms,
		relay_delayed(), OFF_POLL_DELAY_MS);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	CHECK(relay_delayed() >= 2); /* the admin and the I/O connection's */
	CHECK(r.recovered_ms >= OFF_POLL_DELAY_MS);
	CHECK(!unvme_ctrlr_is_failed(x.c));
	unvme_dma_free(pattern);
	relayed_close(&x);
}

/* ---- a slow network on a live association (fabrics_off_poll.h) ---- */

static void net_cut(void *arg)
{
	(void)arg;
	relay_cut(true);
}

static void net_delay_connect(void *arg, unsigned ms)
{
	(void)arg;
	relay_delay_connect(ms);
}

static void net_hold_answers(void *arg, unsigned kinds, unsigned ms)
{
	(void)arg;
	relay_hold_answers(kinds, ms);
}

static void net_refuse_io_connect(void *arg, unsigned n)
{
	(void)arg;
	relay_refuse_io_connect(n);
}

static unsigned net_seen(void *arg, enum off_poll_kind kind)
{
	(void)arg;
	return relay_seen(kind);
}

/* A controller through the relay with query, lba 0 written; then the case. */
static void live_case(const char *query,
		      void (*run)(struct unvme_ctrlr *, struct unvme_qpair *, const uint8_t *,
				  const struct off_poll_net *))
{
	struct relayed x;
	REQUIRE(relayed_open(&x, query, NULL));
	uint8_t *pattern = unvme_dma_alloc(4096, 4096);
	REQUIRE(pattern);
	fabrics_fill(pattern, 4096, 5);
	REQUIRE(unvme_write_sync(x.ns, x.qp, pattern, 0, 8) == 0);
	const struct off_poll_net net = {.hold = relay_hold_cb, .cut = net_cut,
					 .delay_connect = net_delay_connect,
					 .hold_answers = net_hold_answers,
					 .refuse_io_connect = net_refuse_io_connect,
					 .seen = net_seen};
	run(x.c, x.qp, pattern, &net);
	relay_delay_connect(0);
	unvme_dma_free(pattern);
	relayed_close(&x);
}

/* CSTS read and a live association ended by the steps, their answers 600 ms late. */
static void test_live_reset_never_waits_for_a_property(void)
{
	live_case("kato=0&reconnect_delay=20", off_poll_live_property);
}

/* The admin queue rung and reaped by the steps while a Keep Alive is 600 ms late. */
static void test_steps_never_wait_for_a_keep_alive(void)
{
	live_case("kato=1000&reconnect_delay=20", off_poll_keep_alive);
}

TEST_MAIN(TEST(test_reconnect_after_a_lost_connection),
	  TEST(test_reconnect_gives_up_after_ctrl_loss_tmo),
	  TEST(test_reconnect_never_waits_in_a_poll),
	  TEST(test_live_reset_never_waits_for_a_property),
	  TEST(test_steps_never_wait_for_a_keep_alive),
	  TEST(test_a_response_for_a_command_not_in_flight),
	  TEST(test_a_response_naming_no_command_of_the_queue),
	  TEST(test_a_response_of_the_wrong_length),
	  TEST(test_a_response_that_never_comes),
	  TEST(test_cm_rejects_and_bad_accepts))
