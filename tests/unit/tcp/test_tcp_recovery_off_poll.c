/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP's recovery off the poll (lib/fabrics/nvmf_regs.h, lib/driver/recovery.c): every
 * connection is cut under I/O and the target answers each new connection's Connect 600 ms
 * late (the proxy holds what the host sends after its ICReq), so making the association
 * again and the I/O queue's connection takes over 600 ms. No poll and no submit of the
 * application may wait for that: the association is made on the fabrics layer's connect
 * thread, the queue's connection on a thread of its own, and the polls only look at the
 * result (fabrics_off_poll.h says what is checked). Then the same with keep alive on, whose
 * thread runs the recovery too. Threaded: TSan runs it too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "tcp_env.h"
#include "fabrics_off_poll.h"


static void px_hold(void *arg, bool on)
{
	proxy_hold(arg, on);
}

static void px_cut(void *arg)
{
	proxy_delay_connect(arg, OFF_POLL_DELAY_MS);
	proxy_cut(arg);
}

static void off_poll_case(const char *query)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.offpoll", "emu://offpoll?ns=mem:16M", NULL, NULL, NULL, NULL);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	REQUIRE(px);
	char id[256];
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u/nqn.offpoll?%s", proxy_port(px), query);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *pattern = unvme_dma_alloc(4096, 4096);
	REQUIRE(pattern);
	for (int i = 0; i < 4096; i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	REQUIRE(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, pattern, 0, 8) == 0);
	unsigned delayed = proxy_delayed(px);
	struct off_poll_result r;
	off_poll_run(c, qp, pattern, px_hold, px_cut, px, &r);
	fprintf(stderr, "  %s: %u polls, slowest %llu us, I/O back after %llu ms, %u Connects "
		"held %u ms\n", query, r.polls, (unsigned long long)r.slowest_us,
		(unsigned long long)r.recovered_ms, proxy_delayed(px) - delayed, OFF_POLL_DELAY_MS);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	/* the network did take its time: the admin and the I/O connection were both held */
	CHECK(proxy_delayed(px) - delayed >= 2);
	CHECK(r.recovered_ms >= OFF_POLL_DELAY_MS);
	CHECK(unvme_ctrlr_reset_count(c) >= 1);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(pattern);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

/* Only the application's polls run the recovery. */
static void test_reconnect_never_waits_in_a_poll(void)
{
	off_poll_case("kato=0&reconnect_delay=20");
}

/* The keep-alive thread notices the loss too and runs the same steps. */
static void test_reconnect_with_keep_alive(void)
{
	off_poll_case("kato=1000&reconnect_delay=20");
}

/* Closing the controller while the connect thread is held in its Connect: it is stopped and
 * joined (ASan / TSan would see it touch what close freed). */
static void test_close_during_reconnect(void)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.offpoll2", "emu://offpoll2?ns=mem:8M", NULL, NULL, NULL, NULL);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	REQUIRE(px);
	char id[256];
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u/nqn.offpoll2?kato=0&reconnect_delay=20",
		 proxy_port(px));
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(id, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	REQUIRE(unvme_read_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 8) == 0);
	unsigned delayed = proxy_delayed(px);
	proxy_delay_connect(px, 1000);
	proxy_cut(px);
	/* polls until the association's Connect is being held */
	uint64_t end = env_now_ms() + 10000;
	while (proxy_delayed(px) == delayed && env_now_ms() < end)
		(void)unvme_qpair_poll(qp, 0);
	CHECK(proxy_delayed(px) > delayed);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

TEST_MAIN(TEST(test_reconnect_never_waits_in_a_poll), TEST(test_reconnect_with_keep_alive),
	  TEST(test_close_during_reconnect))
