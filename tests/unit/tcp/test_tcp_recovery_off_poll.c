/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP's recovery off the poll (lib/fabrics/nvmf_regs.h, lib/driver/recovery.c): every
 * connection is cut under I/O and the target answers each new connection's Connect 600 ms
 * late (the proxy holds what the host sends after its ICReq), so making the association
 * again and the I/O queue's connection takes over 600 ms. No poll and no submit of the
 * application may wait for that: the association is made on the fabrics layer's connect
 * thread, the queue's connection on a thread of its own, and the polls only look at the
 * result (fabrics_off_poll.h says what is checked). Then the same with keep alive on, whose
 * thread runs the recovery too; then a slow network on a live association: the answers to
 * Property Get / Set of CC and CSTS, or to Keep Alive, 600 ms late while recovery steps run
 * (the proxy reads the host's capsules to tell them apart). Threaded: TSan runs it too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/unvme.h"
#include "lib/driver/ctrlr.h"
#include "lib/transport/tcp/tcp_ctrlr.h"
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

/* A target exporting nqn through the proxy, the controller opened with query, a queue pair,
 * lba 0 written with a pattern: what these cases start from. */
struct proxied {
	struct unvme_target *t;
	struct proxy *px;
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	uint8_t *pattern;
};

static void proxied_open(struct proxied *x, const char *name, const char *query)
{
	char nqn[64], dev[96], id[256];
	snprintf(nqn, sizeof(nqn), "nqn.%s", name);
	snprintf(dev, sizeof(dev), "emu://%s?ns=mem:16M", name);
	uint16_t port = env_target(&x->t, nqn, dev, NULL, NULL, NULL, NULL);
	REQUIRE(port);
	x->px = proxy_start(port);
	REQUIRE(x->px);
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u/%s?%s", proxy_port(x->px), nqn, query);
	REQUIRE(unvme_ctrlr_open(id, NULL, &x->c) == 0);
	REQUIRE(unvme_qpair_create(x->c, NULL, &x->qp) == 0);
	x->pattern = unvme_dma_alloc(4096, 4096);
	REQUIRE(x->pattern);
	for (int i = 0; i < 4096; i++)
		x->pattern[i] = (uint8_t)(i * 7 + 3);
	REQUIRE(unvme_write_sync(unvme_ctrlr_ns(x->c, 1), x->qp, x->pattern, 0, 8) == 0);
}

static void proxied_close(struct proxied *x)
{
	unvme_dma_free(x->pattern);
	unvme_qpair_destroy(x->qp);
	unvme_ctrlr_close(x->c);
	proxy_stop(x->px);
	unvme_target_stop(x->t);
}

static void off_poll_case(const char *query)
{
	struct proxied x;
	proxied_open(&x, "offpoll", query);
	unsigned delayed = proxy_delayed(x.px);
	struct off_poll_result r;
	off_poll_run(x.c, x.qp, x.pattern, px_hold, px_cut, x.px, &r);
	fprintf(stderr, "  %s: %u polls, slowest %llu us, I/O back after %llu ms, %u Connects "
		"held %u ms\n", query, r.polls, (unsigned long long)r.slowest_us,
		(unsigned long long)r.recovered_ms, proxy_delayed(x.px) - delayed, OFF_POLL_DELAY_MS);
	CHECK_EQ(r.slow_calls, 0);
	CHECK(r.resumed);
	CHECK(r.lost_once);
	CHECK(r.lost_failed);
	/* the network did take its time: the admin and the I/O connection were both held */
	CHECK(proxy_delayed(x.px) - delayed >= 2);
	CHECK(r.recovered_ms >= OFF_POLL_DELAY_MS);
	CHECK(unvme_ctrlr_reset_count(x.c) >= 1);
	CHECK(!unvme_ctrlr_is_failed(x.c));
	proxied_close(&x);
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

/* ---- a slow network on a live association (fabrics_off_poll.h) ---- */

static void net_cut(void *arg)
{
	proxy_cut(arg);
}

static void net_delay_connect(void *arg, unsigned ms)
{
	proxy_delay_connect(arg, ms);
}

static void net_hold_answers(void *arg, unsigned kinds, unsigned ms)
{
	proxy_hold_answers(arg, kinds, ms);
}

static void net_refuse_io_connect(void *arg, unsigned n)
{
	proxy_refuse_io_connect(arg, n);
}

static unsigned net_seen(void *arg, enum off_poll_kind kind)
{
	return proxy_seen(arg, kind);
}

/* A controller through the proxy with query (proxied_open); then the case. */
static void live_case(const char *query,
		      void (*run)(struct unvme_ctrlr *, struct unvme_qpair *, const uint8_t *,
				  const struct off_poll_net *))
{
	struct proxied x;
	proxied_open(&x, "offlive", query);
	const struct off_poll_net net = {.hold = px_hold, .cut = net_cut,
					 .delay_connect = net_delay_connect,
					 .hold_answers = net_hold_answers,
					 .refuse_io_connect = net_refuse_io_connect,
					 .seen = net_seen, .arg = x.px};
	run(x.c, x.qp, x.pattern, &net);
	proxied_close(&x);
}

/* (a), (b): CSTS read and a live association ended by the steps, its answers 600 ms late. */
static void test_live_reset_never_waits_for_a_property(void)
{
	live_case("kato=0&reconnect_delay=20", off_poll_live_property);
}

/* (c): the admin queue rung and reaped by the steps while a Keep Alive is 600 ms late. */
static void test_steps_never_wait_for_a_keep_alive(void)
{
	live_case("kato=1000&reconnect_delay=20", off_poll_keep_alive);
}

/* The CSTS a step reads when none is known of the live association (as after a CC write):
 * a Property Get sent in the background, "not ready" meanwhile, its answer (600 ms late)
 * taken by a later read. No read waits for it, and one Property Get serves them all. */
static void test_step_reads_csts_in_the_background(void)
{
	struct proxied x;
	proxied_open(&x, "offcsts", "kato=0");
	struct unvme_ctrlr *c = x.c;
	struct proxy *px = x.px;
	struct tcp_ctrlr *tc = c->transport_ctx;
	pthread_mutex_lock(&tc->regs.lock);
	CHECK(tc->regs.csts_known); /* unvme_ctrlr_open's reads left it known */
	tc->regs.csts_known = false;
	pthread_mutex_unlock(&tc->regs.lock);
	proxy_hold_answers(px, 1u << OFF_POLL_PROPERTY, OFF_POLL_DELAY_MS);
	unsigned seen0 = proxy_seen(px, OFF_POLL_PROPERTY);
	uint64_t t0 = env_now_ms(), slowest = 0;
	uint32_t csts = 0;
	unsigned reads = 0, not_ready = 0;
	while (!(csts & NVME_CSTS_RDY) && env_now_ms() - t0 < OFF_POLL_GUARD_MS) {
		uint64_t s = off_poll_now_us();
		csts = c->ops->read32_nowait(c->transport_ctx, NVME_REG_CSTS);
		uint64_t d = off_poll_now_us() - s;
		slowest = d > slowest ? d : slowest;
		reads++;
		not_ready += !(csts & NVME_CSTS_RDY);
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	uint64_t took = env_now_ms() - t0;
	fprintf(stderr, "  %u reads (%u not ready), slowest %llu us, RDY after %llu ms, %u Property "
		"Gets\n", reads, not_ready, (unsigned long long)slowest, (unsigned long long)took,
		proxy_seen(px, OFF_POLL_PROPERTY) - seen0);
	CHECK(csts & NVME_CSTS_RDY);
	CHECK(!(csts & NVME_CSTS_CFS));
	CHECK(took >= OFF_POLL_DELAY_MS);
	CHECK(not_ready >= 2);
	CHECK(slowest < OFF_POLL_SLOW_MS * 1000u);
	CHECK_EQ(proxy_seen(px, OFF_POLL_PROPERTY) - seen0, 1);
	proxy_hold_answers(px, 0, 0);
	proxied_close(&x);
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
	  TEST(test_live_reset_never_waits_for_a_property), TEST(test_steps_never_wait_for_a_keep_alive),
	  TEST(test_step_reads_csts_in_the_background),
	  TEST(test_close_during_reconnect))
