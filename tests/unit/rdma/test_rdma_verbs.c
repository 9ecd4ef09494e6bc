/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fake verbs (lib/fabrics/rdma/verbs_fake.c) keep the Reliable Connected rules the
 * NVMe/RDMA queue logic is tested against: connection management with private data, sends
 * that wait for receives in order, RDMA READ / WRITE against registered memory with RKEY,
 * access and range checks, errors that fail both queue pairs and flush what was posted.
 */
#include <stdint.h>
#include <string.h>

#include "../test_util.h"
#include "rdma_pair.h"

static const struct rv_qp_caps caps8 = { .send_depth = 8, .recv_depth = 8, .max_sge = 2 };

static void test_connect_exchanges_private_data(void)
{
	struct rdma_pair p = { 0 };
	uint8_t req[32], rep[32];
	memset(req, 0xa1, sizeof(req));
	memset(rep, 0x5c, sizeof(rep));
	REQUIRE(pair_start(&p, &caps8, req, sizeof(req)) == 0);
	CHECK(p.req->priv_len >= 32); /* a CM pads private data */
	CHECK(!memcmp(p.req->priv, req, sizeof(req)));
	CHECK_EQ(rv_ep_event(p.c), RV_EV_NONE); /* not yet answered */
	CHECK_EQ(pair_accept(&p, rep, sizeof(rep)), 0);
	CHECK(p.c->connected);
	CHECK(p.c->peer_priv_len >= 32);
	CHECK(!memcmp(p.c->peer_priv, rep, sizeof(rep)));
	CHECK(p.s->connected); /* pair_accept waited for its RV_EV_ESTABLISHED */
	CHECK_EQ(rv_ep_event(p.s), RV_EV_NONE); /* and it came once */
	pair_end(&p);
	CHECK(!pair_is_fake() || rv_fake_live_eps() == 0);
}

static void test_reject_carries_private_data(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_start(&p, &caps8, "x", 1) == 0);
	uint8_t rej[4] = { 0, 0, 4, 0 };
	rv_reject(p.req, rej, sizeof(rej));
	p.req = NULL;
	p.s = NULL; /* destroyed with the request */
	CHECK_EQ(rv_connect_wait(p.c, 1000), -ECONNREFUSED);
	CHECK(p.c->peer_priv_len >= 4);
	CHECK_EQ(p.c->peer_priv[2], 4);
	pair_end(&p);
	CHECK(!pair_is_fake() || rv_fake_live_eps() == 0);
}

static void test_nobody_listening_is_refused_without_data(void)
{
	struct rv_ep *c;
	const struct rv_ops *v = pair_verbs();
	REQUIRE(v->ep_create(v, pair_addr(), "4999", &caps8, 2000, &c) == 0);
	CHECK_EQ(rv_connect(c, "x", 1), 0);
	CHECK_EQ(rv_connect_wait(c, 2000), -ECONNREFUSED);
	CHECK_EQ(c->peer_priv_len, 0);
	rv_ep_destroy(c);
	struct rv_ep *bad;
	CHECK(v->ep_create(v, "h", "port", &caps8, 100, &bad) < 0);
}

static void test_sends_wait_for_receives_and_keep_order(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char src[3][16], dst[3][16];
	struct rv_mr *ms, *md;
	REQUIRE(rv_reg_mr(p.c->pd, src, sizeof(src), 0, &ms) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, dst, sizeof(dst), RV_ACCESS_LOCAL_WRITE, &md) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(src[i], 16, "message %d", i);
		struct rv_sge s = { src[i], 10, ms->lkey };
		CHECK_EQ(rv_post_send(p.c, 100 + i, &s, 1), 0);
	}
	struct rv_wc wc[8];
	CHECK_EQ(rv_poll(p.c, wc, 8), 0); /* receiver not ready: nothing went */
	for (int i = 0; i < 3; i++) {
		struct rv_sge r = { dst[i], 16, md->lkey };
		CHECK_EQ(rv_post_recv(p.s, 200 + i, &r), 0);
	}
	int n = pair_poll(p.s, wc, 8);
	REQUIRE(n == 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(wc[i].wr_id, 200 + i);
		CHECK_EQ(wc[i].op, RV_OP_RECV);
		CHECK_EQ(wc[i].status, RV_WC_OK);
		CHECK_EQ(wc[i].byte_len, 10);
		CHECK(!memcmp(dst[i], src[i], 10));
	}
	CHECK_EQ(pair_poll(p.c, wc, 8), 3);
	CHECK_EQ(wc[0].op, RV_OP_SEND);
	rv_dereg_mr(ms);
	rv_dereg_mr(md);
	pair_end(&p);
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == 0);
}

static void test_gather_send_of_two_pieces(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char a[8] = "abcdefg", b[8] = "1234567", d[32];
	struct rv_mr *ma, *md;
	REQUIRE(rv_reg_mr(p.c->pd, a, sizeof(a), 0, &ma) == 0);
	struct rv_mr *mb;
	REQUIRE(rv_reg_mr(p.c->pd, b, sizeof(b), 0, &mb) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, d, sizeof(d), RV_ACCESS_LOCAL_WRITE, &md) == 0);
	struct rv_sge r = { d, sizeof(d), md->lkey };
	CHECK_EQ(rv_post_recv(p.s, 1, &r), 0);
	struct rv_sge s[2] = { { a, 7, ma->lkey }, { b, 7, mb->lkey } };
	CHECK_EQ(rv_post_send(p.c, 2, s, 2), 0);
	struct rv_wc wc;
	REQUIRE(pair_poll(p.s, &wc, 1) == 1);
	CHECK_EQ(wc.byte_len, 14);
	CHECK(!memcmp(d, "abcdefg1234567", 14));
	rv_dereg_mr(ma);
	rv_dereg_mr(mb);
	rv_dereg_mr(md);
	pair_end(&p);
}

static void test_send_longer_than_receive_fails_both_sides(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char big[64], small[16];
	struct rv_mr *mb, *ms;
	REQUIRE(rv_reg_mr(p.c->pd, big, sizeof(big), 0, &mb) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, small, sizeof(small), RV_ACCESS_LOCAL_WRITE, &ms) == 0);
	struct rv_sge r = { small, 16, ms->lkey };
	CHECK_EQ(rv_post_recv(p.s, 1, &r), 0);
	CHECK_EQ(rv_post_recv(p.s, 2, &r), 0);
	struct rv_sge s = { big, 64, mb->lkey };
	CHECK_EQ(rv_post_send(p.c, 3, &s, 1), 0);
	struct rv_wc wc[4];
	int n = pair_poll(p.s, wc, 4);
	REQUIRE(n == 2);
	/* (a device may name the failure otherwise: the fake says what RC specifies) */
	CHECK(pair_is_fake() ? wc[0].status == RV_WC_LOC_LEN : wc[0].status != RV_WC_OK);
	if (wc[0].status != RV_WC_LOC_LEN)
		printf("# the receiver's status: %s (device status %u)\n", rv_wc_status_name(wc[0].status), wc[0].raw);
	CHECK_EQ(wc[0].op, 0); /* a failed request does not say its kind */
	CHECK_EQ(wc[1].wr_id, 2);
	CHECK_EQ(wc[1].status, RV_WC_FLUSH);
	REQUIRE(pair_poll(p.c, wc, 4) == 1);
	CHECK(pair_is_fake() ? wc[0].status == RV_WC_REM_INV_REQ : wc[0].status != RV_WC_OK);
	if (wc[0].status != RV_WC_REM_INV_REQ)
		printf("# the sender's status: %s (device status %u)\n", rv_wc_status_name(wc[0].status), wc[0].raw);
	if (pair_is_fake()) { /* a device's CM says nothing of a failed queue pair */
		/* both sides' ESTABLISHED were taken by pair_accept's waits */
		CHECK_EQ(rv_ep_event(p.c), RV_EV_DISCONNECTED);
		CHECK_EQ(rv_ep_event(p.s), RV_EV_DISCONNECTED);
		CHECK(!p.c->connected);
	}
	/* posting on a failed queue pair completes flushed */
	CHECK_EQ(rv_post_send(p.c, 4, &s, 1), 0);
	REQUIRE(pair_poll(p.c, wc, 4) == 1);
	CHECK_EQ(wc[0].wr_id, 4);
	CHECK_EQ(wc[0].status, RV_WC_FLUSH);
	rv_dereg_mr(mb);
	rv_dereg_mr(ms);
	pair_end(&p);
}

static void test_rdma_write_and_read_with_rkey(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static uint8_t host[4096], local[4096], back[4096];
	for (int i = 0; i < 4096; i++)
		local[i] = (uint8_t)(i * 7);
	struct rv_mr *mh, *ml, *mk;
	REQUIRE(rv_reg_mr(p.c->pd, host, sizeof(host), RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ |
			  RV_ACCESS_REMOTE_WRITE, &mh) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, local, sizeof(local), 0, &ml) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, back, sizeof(back), RV_ACCESS_LOCAL_WRITE, &mk) == 0);
	CHECK(!pair_is_fake() || mh->lkey != mh->rkey); /* (rxe uses one key for both) */
	struct rv_sge w = { local + 100, 3000, ml->lkey };
	CHECK_EQ(rv_post_write(p.s, 1, &w, (uint64_t)(uintptr_t)(host + 50), mh->rkey), 0);
	struct rv_sge r = { back, 3000, mk->lkey };
	CHECK_EQ(rv_post_read(p.s, 2, &r, (uint64_t)(uintptr_t)(host + 50), mh->rkey), 0);
	struct rv_wc wc[2];
	REQUIRE(pair_poll(p.s, wc, 2) == 2);
	CHECK_EQ(wc[0].op, RV_OP_WRITE);
	CHECK_EQ(wc[0].status, RV_WC_OK);
	CHECK_EQ(wc[1].op, RV_OP_READ);
	CHECK_EQ(wc[1].status, RV_WC_OK);
	CHECK(!memcmp(host + 50, local + 100, 3000));
	CHECK(!memcmp(back, local + 100, 3000));
	CHECK_EQ(rv_poll(p.c, wc, 2), 0); /* one-sided: the host sees nothing */
	rv_dereg_mr(mh);
	rv_dereg_mr(ml);
	rv_dereg_mr(mk);
	pair_end(&p);
}

/* One remote access the responder must refuse; returns the initiator's completion status. */
static int remote_access(bool read, uint64_t off, uint32_t len, unsigned access, int key_kind)
{
	struct rdma_pair p = { 0 };
	if (pair_connect(&p, &caps8))
		return -1;
	static uint8_t host[256], local[512];
	struct rv_mr *mh, *ml;
	rv_reg_mr(p.c->pd, host, sizeof(host), access, &mh);
	rv_reg_mr(p.s->pd, local, sizeof(local), RV_ACCESS_LOCAL_WRITE, &ml);
	uint32_t key = key_kind == 0 ? mh->rkey : key_kind == 1 ? mh->lkey : mh->rkey + 1;
	struct rv_sge s = { local, len, ml->lkey };
	uint64_t raddr = (uint64_t)(uintptr_t)host + off;
	if (read)
		rv_post_read(p.s, 9, &s, raddr, key);
	else
		rv_post_write(p.s, 9, &s, raddr, key);
	struct rv_wc wc;
	int st = pair_poll(p.s, &wc, 1) == 1 ? wc.status : -2;
	/* both sides failed (the fake; a device may leave the responder up): the host's posted
	 * receive flushes */
	struct rv_sge r = { host, 16, mh->lkey };
	rv_post_recv(p.c, 1, &r);
	if (pair_is_fake() && st != RV_WC_OK && (pair_poll(p.c, &wc, 1) != 1 || wc.status != RV_WC_FLUSH))
		st = -3;
	rv_dereg_mr(mh);
	rv_dereg_mr(ml);
	pair_end(&p);
	return st;
}

static void test_remote_access_is_checked(void)
{
	unsigned all = RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ | RV_ACCESS_REMOTE_WRITE;
	CHECK_EQ(remote_access(false, 0, 256, all, 0), RV_WC_OK);
	if (pair_is_fake())
		CHECK_EQ(remote_access(false, 0, 256, all, 1), RV_WC_REM_ACCESS); /* the LKEY is no RKEY */
	CHECK_EQ(remote_access(false, 0, 256, all, 2), RV_WC_REM_ACCESS);   /* no such key */
	CHECK_EQ(remote_access(false, 1, 256, all, 0), RV_WC_REM_ACCESS);   /* one byte past the end */
	CHECK_EQ(remote_access(true, 200, 100, all, 0), RV_WC_REM_ACCESS);
	CHECK_EQ(remote_access(false, 0, 16, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ, 0), RV_WC_REM_ACCESS);
	CHECK_EQ(remote_access(true, 0, 16, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_WRITE, 0), RV_WC_REM_ACCESS);
	CHECK_EQ(remote_access(true, 0, 16, RV_ACCESS_LOCAL_WRITE | RV_ACCESS_REMOTE_READ, 0), RV_WC_OK);
	CHECK(!pair_is_fake() || rv_fake_live_mrs() == 0);
	CHECK(!pair_is_fake() || rv_fake_live_eps() == 0);
}

static void test_local_buffer_outside_its_region_fails(void)
{
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char a[64];
	struct rv_mr *m;
	REQUIRE(rv_reg_mr(p.c->pd, a, 32, 0, &m) == 0);
	struct rv_sge s = { a, 64, m->lkey };
	CHECK_EQ(rv_post_send(p.c, 1, &s, 1), 0);
	struct rv_wc wc;
	REQUIRE(pair_poll(p.c, &wc, 1) == 1);
	CHECK_EQ(wc.status, RV_WC_LOC_PROT);
	rv_dereg_mr(m);
	pair_end(&p);
}

static void test_queue_depths_are_kept(void)
{
	FAKE_ONLY();
	struct rv_qp_caps c2 = { .send_depth = 2, .recv_depth = 2, .max_sge = 1 };
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &c2) == 0);
	static char a[8];
	struct rv_mr *m;
	REQUIRE(rv_reg_mr(p.c->pd, a, sizeof(a), RV_ACCESS_LOCAL_WRITE, &m) == 0);
	struct rv_sge s = { a, 8, m->lkey };
	CHECK_EQ(rv_post_send(p.c, 1, &s, 1), 0);
	CHECK_EQ(rv_post_send(p.c, 2, &s, 1), 0);
	CHECK_EQ(rv_post_send(p.c, 3, &s, 1), -ENOMEM); /* both wait for receives */
	struct rv_sge two[2] = { s, s };
	CHECK_EQ(rv_post_send(p.c, 4, two, 2), -EINVAL); /* more pieces than max_sge */
	CHECK_EQ(rv_post_recv(p.c, 5, &s), 0);
	CHECK_EQ(rv_post_recv(p.c, 6, &s), 0);
	CHECK_EQ(rv_post_recv(p.c, 7, &s), -ENOMEM);
	rv_dereg_mr(m);
	pair_end(&p);
}

static void test_break_flushes_and_disconnects_both(void)
{
	FAKE_ONLY();
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char a[8];
	struct rv_mr *m;
	REQUIRE(rv_reg_mr(p.s->pd, a, sizeof(a), RV_ACCESS_LOCAL_WRITE, &m) == 0);
	struct rv_sge s = { a, 8, m->lkey };
	CHECK_EQ(rv_post_recv(p.s, 1, &s), 0);
	rv_fake_break(p.c);
	struct rv_wc wc;
	REQUIRE(pair_poll(p.s, &wc, 1) == 1);
	CHECK_EQ(wc.status, RV_WC_FLUSH);
	CHECK_EQ(rv_ep_event(p.s), RV_EV_DISCONNECTED); /* its ESTABLISHED taken by pair_accept */
	rv_dereg_mr(m);
	pair_end(&p);
}

static void test_held_send_completion_comes_after_the_answer(void)
{
	FAKE_ONLY();
	struct rdma_pair p = { 0 };
	REQUIRE(pair_connect(&p, &caps8) == 0);
	static char a[8] = "ping", b[8];
	struct rv_mr *ma, *mb;
	REQUIRE(rv_reg_mr(p.c->pd, a, sizeof(a), RV_ACCESS_LOCAL_WRITE, &ma) == 0);
	REQUIRE(rv_reg_mr(p.s->pd, b, sizeof(b), RV_ACCESS_LOCAL_WRITE, &mb) == 0);
	struct rv_sge ra = { a, 8, ma->lkey }, rb = { b, 8, mb->lkey };
	CHECK_EQ(rv_post_recv(p.s, 1, &rb), 0);
	CHECK_EQ(rv_post_recv(p.c, 2, &ra), 0);
	rv_fake_hold_send_wc(p.c, true);
	CHECK_EQ(rv_post_send(p.c, 3, &ra, 1), 0);
	CHECK_EQ(rv_post_send(p.s, 4, &rb, 1), 0); /* the answer */
	struct rv_wc wc[2];
	REQUIRE(pair_poll(p.c, wc, 2) == 1);
	CHECK_EQ(wc[0].op, RV_OP_RECV);
	rv_fake_hold_send_wc(p.c, false);
	REQUIRE(pair_poll(p.c, wc, 2) == 1);
	CHECK_EQ(wc[0].op, RV_OP_SEND);
	CHECK_EQ(wc[0].wr_id, 3);
	rv_dereg_mr(ma);
	rv_dereg_mr(mb);
	pair_end(&p);
}

static void test_client_gone_before_accept(void)
{
	FAKE_ONLY();
	struct rdma_pair p = { 0 };
	REQUIRE(pair_start(&p, &caps8, "x", 1) == 0);
	rv_ep_destroy(p.c);
	p.c = NULL;
	CHECK_EQ(rv_accept(p.req, "y", 1), -ECONNABORTED);
	p.req = NULL;
	pair_end(&p); /* a failed accept leaves the endpoint to its owner, as rv_ibv does */
	CHECK(!pair_is_fake() || rv_fake_live_eps() == 0);
}

TEST_MAIN(TEST(test_connect_exchanges_private_data), TEST(test_reject_carries_private_data),
	  TEST(test_nobody_listening_is_refused_without_data),
	  TEST(test_sends_wait_for_receives_and_keep_order), TEST(test_gather_send_of_two_pieces),
	  TEST(test_send_longer_than_receive_fails_both_sides), TEST(test_rdma_write_and_read_with_rkey),
	  TEST(test_remote_access_is_checked), TEST(test_local_buffer_outside_its_region_fails),
	  TEST(test_queue_depths_are_kept), TEST(test_break_flushes_and_disconnects_both),
	  TEST(test_held_send_completion_comes_after_the_answer), TEST(test_client_gone_before_accept))
