/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP when things go wrong: a host not on the allow-list, DH-HMAC-CHAP with right and
 * wrong keys (both directions, with and without a DH group), connections cut under I/O (the
 * host reconnects and the data is intact), a target that stops answering (commands time out
 * with Command Aborted By Host instead of hanging, then the host reconnects), keep alive on an
 * idle controller, and a misbehaving target (bad ICResp, a response for no command, a
 * termination request): the host refuses it with the reason. Threaded: run under TSan too.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "unvme/spec/tcp.h"
#include "lib/fabrics/dhchap.h"
#include "fabrics_io.h"
#include "tcp_env.h"
#include "test_util.h"

#define HOST "nqn.2014-08.io.unvme.test:host-a"
#define KEY1 "DHHC-1:00:QH1FKOt525UX4Tjtw7N6MRy/KmFCzTsukXIQJ7FDnjVkKI+m:"

static char *new_key(uint8_t transform)
{
	struct dhchap_key k = {.len = 32, .transform = transform};
	dhchap_random(k.key, k.len);
	char *s = malloc(256);
	dhchap_key_format(&k, s, 256);
	return s;
}

static int try_open(uint16_t port, const char *nqn, const char *query, struct unvme_ctrlr **c)
{
	char id[1400];
	snprintf(id, sizeof(id), "nvme-tcp://127.0.0.1:%u/%s?%s", port, nqn, query);
	*c = NULL;
	return unvme_ctrlr_open(id, NULL, c);
}

static void test_allow_list(void)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.acl", "emu://acl?ns=mem:8M", HOST, NULL, NULL, NULL);
	REQUIRE(port);
	struct unvme_ctrlr *c;
	CHECK_EQ(try_open(port, "nqn.acl", "hostnqn=" HOST, &c), 0);
	unvme_ctrlr_close(c);
	CHECK(try_open(port, "nqn.acl", "hostnqn=nqn.2014-08.io.unvme.test:intruder", &c) < 0);
	CHECK(strstr(unvme_errmsg(), "does not allow host"));
	CHECK(strstr(unvme_errmsg(), "Connect Invalid Host"));
	/* an unknown subsystem answers as a forbidden one: names cannot be probed */
	CHECK(try_open(port, "nqn.nothere", "hostnqn=" HOST, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "does not allow host"));
	CHECK(strstr(unvme_errmsg(), "Connect Invalid Host"));
	unvme_target_stop(t);
}

/* The right key works; a wrong one is refused; the controller proves its own key. */
static void auth_case(const char *dhgroup, uint8_t transform)
{
	char *hk = new_key(transform), *ck = new_key(transform), *bad = new_key(transform);
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.auth", "emu://auth?ns=mem:8M", HOST, hk, ck, dhgroup);
	REQUIRE(port);
	char q[1200];
	struct unvme_ctrlr *c;
	snprintf(q, sizeof(q), "hostnqn=%s&dhchap_secret=%s", HOST, hk);
	CHECK_EQ(try_open(port, "nqn.auth", q, &c), 0);
	if (c) {
		/* the I/O queues authenticate too */
		struct unvme_qpair *qp;
		CHECK_EQ(unvme_qpair_create(c, NULL, &qp), 0);
		uint8_t *b = unvme_dma_zalloc(4096, 4096);
		CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 8), 0);
		unvme_dma_free(b);
		unvme_qpair_destroy(qp);
		unvme_ctrlr_close(c);
	}
	snprintf(q, sizeof(q), "hostnqn=%s&dhchap_secret=%s&dhchap_ctrl_secret=%s", HOST, hk, ck);
	CHECK_EQ(try_open(port, "nqn.auth", q, &c), 0);
	unvme_ctrlr_close(c);
	snprintf(q, sizeof(q), "hostnqn=%s&dhchap_secret=%s", HOST, bad);
	CHECK(try_open(port, "nqn.auth", q, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "refused the host"));
	snprintf(q, sizeof(q), "hostnqn=%s&dhchap_secret=%s&dhchap_ctrl_secret=%s", HOST, hk, bad);
	CHECK(try_open(port, "nqn.auth", q, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "did not prove"));
	snprintf(q, sizeof(q), "hostnqn=%s", HOST);
	CHECK(try_open(port, "nqn.auth", q, &c) < 0);
	CHECK(strstr(unvme_errmsg(), "requires DH-HMAC-CHAP"));
	unvme_target_stop(t);
	free(hk);
	free(ck);
	free(bad);
}

static void test_auth_null_group(void)
{
	auth_case(NULL, 0);
}

static void test_auth_ffdhe2048_transformed_keys(void)
{
	auth_case("ffdhe2048", 1);
}

/* Retries a synchronous command while the connection comes back. */
static void test_reconnect_after_cut(void)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.cut", "emu://cut?ns=mem:16M", NULL, NULL, NULL, NULL);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	REQUIRE(px);
	struct unvme_ctrlr *c;
	REQUIRE(try_open(proxy_port(px), "nqn.cut", "kato=2000", &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *w = unvme_dma_alloc(4096, 4096), *r = unvme_dma_alloc(4096, 4096);
	int failures = 0;
	for (int round = 0; round < 3; round++) {
		memset(w, 0x30 + round, 4096);
		CHECK_EQ(fabrics_sync_retry(ns, qp, w, (uint64_t)round * 8, true, &failures, 20000), 0);
		unsigned before = proxy_accepted(px);
		proxy_cut(px);
		/* the next commands fail (Host Pathing Error) until the association is back */
		memset(r, 0, 4096);
		CHECK_EQ(fabrics_sync_retry(ns, qp, r, (uint64_t)round * 8, false, &failures, 20000), 0);
		CHECK(memcmp(w, r, 4096) == 0);
		CHECK(proxy_accepted(px) >= before + 2); /* a new admin and a new I/O connection */
	}
	CHECK(unvme_ctrlr_reset_count(c) >= 3);
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(w);
	unvme_dma_free(r);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

struct one {
	_Atomic int done;
	_Atomic int status;
	_Atomic uint64_t at;
};

static void one_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct one *o = arg;
	atomic_store(&o->status, NVME_STATUS_FROM_CQE(cpl->status));
	atomic_store(&o->at, env_now_ms());
	atomic_store(&o->done, 1);
}

/* Lets the proxy forward again after a while (the host is busy reconnecting meanwhile). */
static void *release_later(void *arg)
{
	struct timespec ts = {1, 500000000};
	nanosleep(&ts, NULL);
	proxy_hold(arg, false);
	return NULL;
}

static void test_timeout_then_reconnect(void)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.to", "emu://to?ns=mem:16M", NULL, NULL, NULL, NULL);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	struct unvme_ctrlr *c;
	REQUIRE(try_open(proxy_port(px), "nqn.to", "kato=0", &c) == 0);
	struct unvme_qpair_opts o = {.timeout_ms = 500};
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, &o, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	proxy_hold(px, true); /* the target never hears of the command */
	pthread_t th;
	pthread_create(&th, NULL, release_later, px);
	struct one w = {0};
	uint64_t start = env_now_ms();
	CHECK_EQ(unvme_read(ns, qp, b, 0, 8, one_cb, &w), 0);
	while (!atomic_load(&w.done) && env_now_ms() - start < 10000)
		unvme_qpair_poll(qp, 0);
	uint64_t took = atomic_load(&w.at) - start;
	CHECK(atomic_load(&w.done));
	CHECK_EQ(atomic_load(&w.status), NVME_STATUS(NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST));
	/* never before its timeout; the upper bound only says it fired at all (the loop above
	 * gives up at 10 s): a loaded machine may poll late, and speed is no test's business */
	CHECK(took >= 500 && took < 10000);
	pthread_join(th, NULL);
	int failures = 0;
	CHECK_EQ(fabrics_sync_retry(ns, qp, b, 0, true, &failures, 20000), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

/* A queue pair destroyed and created again at once: the target may not yet have seen the old
 * connection end, its queue id still taken. The host takes another id while one is free, and
 * otherwise tries the id again until the target gives it back (it answers Command Sequence
 * Error meanwhile, as the spec and Linux nvmet do): the create succeeds either way. */
static void queue_again(unsigned max_io_queues, bool expect_wait)
{
	struct unvme_target *t;
	uint16_t port = env_target_limited(&t, "nqn.again", "emu://again?ns=mem:8M", "max_io_queues",
					   max_io_queues);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	REQUIRE(px);
	struct unvme_ctrlr *c;
	REQUIRE(try_open(proxy_port(px), "nqn.again", "kato=0", &c) == 0);
	CHECK_EQ(unvme_ctrlr_max_io_queues(c), max_io_queues);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	REQUIRE(b);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint16_t first = unvme_qpair_id(qp);
	CHECK_EQ(unvme_write_sync(ns, qp, b, 0, 8), 0);
	proxy_linger_close(px, 400); /* the target hears of each queue's end 400 ms late */
	unvme_qpair_destroy(qp);
	unsigned before = proxy_accepted(px);
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	unsigned attempts = proxy_accepted(px) - before;
	if (expect_wait) {
		/* the only id: refused while the old connection lingers, then taken */
		CHECK_EQ(unvme_qpair_id(qp), first);
		CHECK(attempts > 1);
	} else {
		/* another id at once */
		CHECK(unvme_qpair_id(qp) != first);
		CHECK_EQ(attempts, 1);
	}
	CHECK_EQ(unvme_read_sync(ns, qp, b, 0, 8), 0);
	unvme_qpair_destroy(qp);
	unvme_dma_free(b);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

static void test_queue_id_still_held_by_the_target(void)
{
	queue_again(1, true);
}

static void test_queue_ids_taken_in_turn(void)
{
	queue_again(2, false);
}

/* A target that never gives a queue id back (or says so forever): the create gives up after
 * its 3 s of retries with the status and a message that says why, instead of hanging. */
static void test_queue_id_never_given_back(void)
{
	struct unvme_target *t;
	uint16_t port = env_target_limited(&t, "nqn.never", "emu://never?ns=mem:8M", "max_io_queues", 1);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	REQUIRE(px);
	struct unvme_ctrlr *c;
	REQUIRE(try_open(proxy_port(px), "nqn.never", "kato=0", &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	proxy_linger_close(px, 60000); /* the target hears of the end only when the proxy stops */
	unvme_qpair_destroy(qp);
	unsigned before = proxy_accepted(px);
	int rc = unvme_qpair_create(c, NULL, &qp);
	CHECK_EQ(rc, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR));
	CHECK(strstr(unvme_errmsg(), "still releasing the queue id") != NULL);
	CHECK(proxy_accepted(px) - before > 1); /* it did try again */
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

static void test_keep_alive_idle(void)
{
	struct unvme_target *t;
	uint16_t port = env_target(&t, "nqn.ka", "emu://ka?ns=mem:8M", NULL, NULL, NULL, NULL);
	REQUIRE(port);
	struct proxy *px = proxy_start(port);
	struct unvme_ctrlr *c;
	/* KATO 1 s: the target ends a silent controller after 1.5 s; keep alive prevents it */
	REQUIRE(try_open(proxy_port(px), "nqn.ka", "kato=1000", &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	unsigned conns = proxy_accepted(px);
	struct timespec ts = {3, 0};
	nanosleep(&ts, NULL);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, b, 0, 8), 0);
	CHECK_EQ(proxy_accepted(px), conns); /* no reconnect was needed */
	CHECK_EQ(unvme_ctrlr_reset_count(c), 0);
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	proxy_stop(px);
	unvme_target_stop(t);
}

/* ---- a misbehaving target: answers ICReq and then does as told ---- */

enum fake_mode { FAKE_BAD_ICRESP, FAKE_WRONG_CID, FAKE_TERMREQ };

struct fake {
	int lfd;
	uint16_t port;
	enum fake_mode mode;
	pthread_t th;
};

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	struct nvme_tcp_icreq req;
	if (recv(fd, &req, sizeof(req), MSG_WAITALL) != sizeof(req)) {
		close(fd);
		return NULL;
	}
	struct nvme_tcp_icresp rsp = {0};
	rsp.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_ICRESP, .hlen = 128, .plen = 128};
	rsp.maxh2cdata = f->mode == FAKE_BAD_ICRESP ? 100 : 65536;
	send(fd, &rsp, sizeof(rsp), MSG_NOSIGNAL);
	uint8_t cap[72 + 1024];
	if (f->mode != FAKE_BAD_ICRESP && recv(fd, cap, sizeof(cap), MSG_WAITALL) == sizeof(cap)) {
		if (f->mode == FAKE_WRONG_CID) {
			struct nvme_tcp_rsp r = {0};
			r.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_CAPSULE_RESP, .hlen = 24, .plen = 24};
			r.cqe.cid = 0x1234;
			send(fd, &r, sizeof(r), MSG_NOSIGNAL);
		} else {
			uint8_t t[24 + 8];
			size_t n = 0;
			struct nvme_tcp_term h = {0};
			h.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_C2H_TERM, .hlen = 24, .plen = 32};
			h.fes = NVME_TCP_FES_DATA_RANGE;
			memcpy(t, &h, 24);
			memcpy(t + 24, cap, 8);
			n = sizeof(t);
			send(fd, t, n, MSG_NOSIGNAL);
		}
	}
	/* the host answers a protocol error with an H2CTermReq, then closes */
	char buf[256];
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	close(fd);
	return NULL;
}

static struct fake *fake_start(enum fake_mode mode)
{
	struct fake *f = calloc(1, sizeof(*f));
	f->mode = mode;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	bind(f->lfd, (struct sockaddr *)&a, sizeof(a));
	listen(f->lfd, 4);
	getsockname(f->lfd, (struct sockaddr *)&a, &al);
	f->port = ntohs(a.sin_port);
	pthread_create(&f->th, NULL, fake_main, f);
	return f;
}

static void fake_stop(struct fake *f)
{
	pthread_join(f->th, NULL);
	close(f->lfd);
	free(f);
}

static void test_misbehaving_target(void)
{
	struct unvme_ctrlr *c;
	struct fake *f = fake_start(FAKE_BAD_ICRESP);
	CHECK(try_open(f->port, "nqn.fake", "connect_timeout=2000", &c) < 0);
	CHECK(strstr(unvme_errmsg(), "invalid ICResp"));
	fake_stop(f);
	f = fake_start(FAKE_WRONG_CID);
	CHECK(try_open(f->port, "nqn.fake", "connect_timeout=2000", &c) < 0);
	CHECK(strstr(unvme_errmsg(), "not outstanding"));
	fake_stop(f);
	f = fake_start(FAKE_TERMREQ);
	CHECK(try_open(f->port, "nqn.fake", "connect_timeout=2000", &c) < 0);
	CHECK(strstr(unvme_errmsg(), "terminated the connection"));
	CHECK(strstr(unvme_errmsg(), "Data Transfer Out of Range"));
	fake_stop(f);
}

TEST_MAIN(TEST(test_allow_list), TEST(test_auth_null_group), TEST(test_auth_ffdhe2048_transformed_keys),
	  TEST(test_reconnect_after_cut), TEST(test_timeout_then_reconnect), TEST(test_queue_id_still_held_by_the_target),
	  TEST(test_queue_ids_taken_in_turn), TEST(test_queue_id_never_given_back),
	  TEST(test_keep_alive_idle),
	  TEST(test_misbehaving_target))
