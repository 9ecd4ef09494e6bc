/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A multi-process client's recovery off its poll (lib/driver/mp/mp_channel.c): the process
 * that runs the controller answers the client's recovery requests (Abort, Delete and Create
 * I/O SQ/CQ, and the queue creations) OFF_POLL_DELAY_MS late, through a relay this test puts
 * between them on the server's socket, as a server busy with its device would. The client,
 * a child of the test (the test process is the primary, UNVME_MP=primary), runs
 * tests/unit/fabrics_off_poll.h's run: reads in flight are lost, the application only polls
 * and submits, and the driver's recovery inside those calls brings the queue back:
 *   - a timeout: the reads are swallowed (the emulated device's SWALLOW fault: Abort cannot
 *     find them), the queue's timeout sends Abort, then fences it (Delete I/O SQ, Delete I/O
 *     CQ) and creates it again: four round trips to the server, each 600 ms late;
 *   - a reset of the primary's controller: every client's queues go (QUEUES_LOST), and the
 *     client creates its queue again: one round trip, 600 ms late.
 * What must hold, as for the fabrics: no poll or submit of the client takes over
 * OFF_POLL_SLOW_MS (500 ms: a call that waited for a reply took at least 600), every read in
 * flight completes exactly once with an error, and a read after them returns the data.
 * Before these requests were sent without waiting, the first poll that sent one waited for
 * its reply (600 ms and more). Threaded (the relay, the server): run under TSan too.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/driver/ctrlr.h"
#include "lib/driver/mp/mp.h"
#include "fabrics_off_poll.h"
#include "test_tmpdir.h"
#include "test_util.h"

#define DEV "emu://utmpop?ns=mem:16M:512&mode=thread"
#define SWALLOWED_TIMEOUT 9 /* the 8 reads in flight and the first read after them */


/* ---- the relay between the client and the server ---- */

#define RELAY_HELD 256

struct relay {
	int lfd;                   /* where clients connect (the server's own address) */
	struct sockaddr_un real;   /* where the server listens from now on */
	struct sockaddr_un addr;
	int cli, srv;
	pthread_t thread, down;
	pthread_mutex_t lock;
	bool held[RELAY_HELD];     /* per request forwarded, in order: is its reply late? */
	bool create[RELAY_HELD];   /* ...and is it a queue's creation? */
	_Atomic uint32_t lie_qid;  /* not 0: the queue id every creation's reply claims */
	unsigned head, tail;
	_Atomic unsigned late;     /* replies held back so far */
	_Atomic bool stop;
};

static struct mp_req request_of(const uint8_t *msg, ssize_t n)
{
	struct mp_req rq;
	memset(&rq, 0, sizeof(rq));
	memcpy(&rq, msg, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
	return rq;
}

/* Is the reply to this request one of a recovery's (held back)? */
static bool recovery_request(const uint8_t *msg, ssize_t n)
{
	struct mp_req rq = request_of(msg, n);
	if (rq.op == MP_QUEUE_CREATE)
		return true;
	if (rq.op != MP_ADMIN)
		return false;
	uint8_t opc = rq.admin.sqe.opc;
	return opc == NVME_ADM_ABORT || opc == NVME_ADM_DELETE_SQ || opc == NVME_ADM_DELETE_CQ ||
	       opc == NVME_ADM_CREATE_SQ || opc == NVME_ADM_CREATE_CQ;
}

static void close_all(int *fds)
{
	for (unsigned i = 0; i < MP_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static unsigned nr_fds(const int *fds)
{
	unsigned n = 0;
	while (n < MP_MAX_FDS && fds[n] >= 0)
		n++;
	return n;
}

/* A reply read from the server, sent on to the client when it is due. */
struct relay_msg {
	uint8_t buf[sizeof(struct mp_rep)];
	ssize_t n;
	int fds[MP_MAX_FDS];
	uint64_t due_us;
};

/* server -> client: the replies, in order; a recovery's OFF_POLL_DELAY_MS after the server
 * sent it (each request is late by as much, not by the sum of those before it) */
static void *relay_down(void *arg)
{
	struct relay *r = arg;
	static struct relay_msg q[64];
	unsigned head = 0, tail = 0;
	bool open = true;
	while (!atomic_load(&r->stop) && (open || head != tail)) {
		uint64_t now = off_poll_now_us();
		while (head != tail && q[head % 64].due_us <= now) {
			struct relay_msg *m = &q[head++ % 64];
			int rc = mp_send(r->cli, m->buf, (size_t)m->n, m->fds, nr_fds(m->fds));
			close_all(m->fds);
			if (rc)
				open = false;
		}
		int wait_ms = 100;
		if (head != tail)
			wait_ms = (int)((q[head % 64].due_us - now) / 1000u) + 1;
		if (!open || tail - head == 64) {
			struct timespec ts = { 0, 1000000l * wait_ms };
			nanosleep(&ts, NULL);
			continue;
		}
		struct relay_msg *m = &q[tail % 64];
		m->n = mp_recv(r->srv, m->buf, sizeof(m->buf), m->fds, MP_MAX_FDS, wait_ms);
		if (m->n == -ETIMEDOUT)
			continue;
		if (m->n <= 0) {
			open = false;
			continue;
		}
		pthread_mutex_lock(&r->lock);
		bool create = r->head != r->tail && r->create[r->head % RELAY_HELD];
		bool late = r->head != r->tail && r->held[r->head++ % RELAY_HELD];
		pthread_mutex_unlock(&r->lock);
		uint32_t lie = atomic_load(&r->lie_qid);
		if (create && lie && m->n == (ssize_t)sizeof(struct mp_rep))
			((struct mp_rep *)m->buf)->queue.qid = lie; /* a server that lies */
		m->due_us = off_poll_now_us() + (late ? OFF_POLL_DELAY_MS * 1000ull : 0);
		if (head != tail && q[(tail - 1) % 64].due_us > m->due_us)
			m->due_us = q[(tail - 1) % 64].due_us; /* (in order) */
		if (late)
			atomic_fetch_add(&r->late, 1);
		tail++;
	}
	for (; head != tail; head++)
		close_all(q[head % 64].fds);
	shutdown(r->cli, SHUT_RDWR);
	return NULL;
}

/* accepts the client, connects to the server, then client -> server: the requests */
static void *relay_main(void *arg)
{
	struct relay *r = arg;
	static uint8_t buf[8192];
	int fds[MP_MAX_FDS];
	r->cli = r->srv = -1;
	while (!atomic_load(&r->stop) && r->cli < 0) {
		struct pollfd p = { .fd = r->lfd, .events = POLLIN };
		if (poll(&p, 1, 100) == 1)
			r->cli = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
	}
	if (r->cli < 0)
		return NULL;
	r->srv = mp_connect(&r->real);
	if (r->srv < 0 || pthread_create(&r->down, NULL, relay_down, r) != 0) {
		close(r->cli);
		r->cli = -1;
		return NULL;
	}
	while (!atomic_load(&r->stop)) {
		ssize_t n = mp_recv(r->cli, buf, sizeof(buf), fds, MP_MAX_FDS, 100);
		if (n == -ETIMEDOUT)
			continue;
		if (n <= 0)
			break;
		pthread_mutex_lock(&r->lock);
		if (r->tail - r->head < RELAY_HELD) {
			r->create[r->tail % RELAY_HELD] = request_of(buf, n).op == MP_QUEUE_CREATE;
			r->held[r->tail++ % RELAY_HELD] = recovery_request(buf, n);
		}
		pthread_mutex_unlock(&r->lock);
		int rc = mp_send(r->srv, buf, (size_t)n, fds, nr_fds(fds));
		close_all(fds);
		if (rc)
			break;
	}
	shutdown(r->srv, SHUT_RDWR); /* the server ends the session: the client went */
	pthread_join(r->down, NULL);
	return NULL;
}

/* Moves the server of c to another address and listens at its own for one client. */
static int relay_start(struct unvme_ctrlr *c, struct relay *r)
{
	memset(r, 0, sizeof(*r));
	struct mp_where w;
	if (mp_where(c->address, &w) != 0)
		return -1;
	r->addr = w.sock;
	r->real = w.sock;
	size_t n = strlen(r->addr.sun_path);
	if (n + sizeof(".real") > sizeof(r->real.sun_path))
		return -1;
	memcpy(r->real.sun_path + n, ".real", sizeof(".real"));
	if (rename(r->addr.sun_path, r->real.sun_path) != 0)
		return -1;
	r->lfd = mp_listen(&r->addr);
	pthread_mutex_init(&r->lock, NULL);
	if (r->lfd < 0 || pthread_create(&r->thread, NULL, relay_main, r) != 0)
		return -1;
	return 0;
}

static void relay_stop(struct relay *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	if (r->cli >= 0)
		close(r->cli);
	if (r->srv >= 0)
		close(r->srv);
	close(r->lfd);
	rename(r->real.sun_path, r->addr.sun_path); /* the server's again (it removes it) */
	pthread_mutex_destroy(&r->lock);
}

/* ---- the client (a child) ---- */

struct child_report {
	struct off_poll_result res;
	int failures;              /* its CHECKs that failed */
	uint32_t qid_before, qid_after;
};

struct child_ctx {
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	uint32_t swallow;          /* commands the device swallows from the hold on */
	int cmd_fd, ack_fd;        /* a reset scenario asks the primary for the reset */
};

static void child_hold(void *arg, bool on)
{
	struct child_ctx *x = arg;
	if (!on)
		return;
	/* the reads from now on are fetched and never completed (Abort cannot find them) */
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_SWALLOW,
			      .cdw11 = x->swallow };
	CHECK_EQ(unvme_admin(x->c, &f, NULL, 0, NULL), 0);
}

static void child_cut(void *arg)
{
	struct child_ctx *x = arg;
	if (x->cmd_fd < 0)
		return; /* a timeout: the queue's own recovery finds the reads late */
	char b = 'C';
	CHECK(write(x->cmd_fd, &b, 1) == 1);
	CHECK(read(x->ack_fd, &b, 1) == 1);
	/* the primary's reset is done: this process hears its queues went (QUEUES_LOST) */
	uint64_t end = off_poll_now_us() + OFF_POLL_GUARD_MS * 1000ull;
	while (!atomic_load(&x->qp->failed) && off_poll_now_us() < end)
		usleep(1000);
	CHECK(atomic_load(&x->qp->failed));
}

static int child_run(bool reset, int out_fd, int cmd_fd, int ack_fd)
{
	struct child_ctx x = { .cmd_fd = cmd_fd, .ack_fd = ack_fd,
			       .swallow = reset ? OFF_POLL_LOST : SWALLOWED_TIMEOUT };
	if (unvme_ctrlr_open(DEV, NULL, &x.c) != 0)
		return 10;
	if (strcmp(unvme_ctrlr_transport(x.c), "secondary") != 0)
		return 11;
	/* a timeout: 100 ms; a reset: none that could run out before it */
	struct unvme_qpair_opts o = { .depth = 32, .timeout_ms = reset ? 600000 : 100 };
	if (unvme_qpair_create(x.c, &o, &x.qp) != 0)
		return 12;
	uint8_t pattern[4096];
	memset(pattern, 0x5a, sizeof(pattern));
	struct child_report rep = { .qid_before = unvme_qpair_id(x.qp) };
	off_poll_run(x.c, x.qp, pattern, child_hold, child_cut, &x, &rep.res);
	rep.qid_after = unvme_qpair_id(x.qp);
	rep.failures = test_failures_in_case;
	if (write(out_fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		return 13;
	unvme_qpair_destroy(x.qp);
	unvme_ctrlr_close(x.c);
	return 0;
}

/* A client whose server claims a queue id beyond the controller's grant: the create fails
 * with a message, nothing is written past the client's table (ASan), the device stays usable
 * for the application to close. */
static int child_lied_to(void)
{
	struct unvme_ctrlr *c;
	if (unvme_ctrlr_open(DEV, NULL, &c) != 0)
		return 20;
	struct unvme_qpair *qp = NULL;
	int rc = unvme_qpair_create(c, NULL, &qp);
	int ret = rc == -EPROTO && qp == NULL && strstr(unvme_errmsg(), "gave queue id 60000") ? 0 : 21;
	if (ret)
		fprintf(stderr, "  lied to: create %d (%s)\n", rc, unvme_errmsg());
	unvme_ctrlr_close(c);
	return ret;
}

__attribute__((constructor)) static void child_main(void)
{
	const char *role = getenv("UNVME_TEST_MPOP_ROLE");
	if (!role) {
		/* a run directory of the test's own, which its children inherit */
		test_dir_make("unvme-mpop");
		setenv("UNVME_RUN_DIR", test_dir, 1);
		signal(SIGPIPE, SIG_IGN); /* (the relay's peers may go first) */
		return;
	}
	if (strcmp(role, "lie") == 0)
		_exit(child_lied_to());
	int out = atoi(getenv("UNVME_TEST_MPOP_OUT"));
	int cmd = atoi(getenv("UNVME_TEST_MPOP_CMD"));
	int ack = atoi(getenv("UNVME_TEST_MPOP_ACK"));
	_exit(child_run(strcmp(role, "reset") == 0, out, cmd, ack));
}

/* ---- the primary (this process) ---- */

static void scenario(bool reset)
{
	setenv("UNVME_MP", "primary", 1);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	REQUIRE(c->mp != NULL);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	REQUIRE(buf != NULL);
	memset(buf, 0x5a, 4096);
	CHECK_EQ(unvme_write_sync(unvme_ctrlr_ns(c, 1), qp, buf, 0, 8), 0);
	struct relay r;
	REQUIRE(relay_start(c, &r) == 0);
	int out[2], cmd[2], ack[2];
	REQUIRE(pipe(out) == 0 && pipe(cmd) == 0 && pipe(ack) == 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char a[16], b[16], d[16];
		snprintf(a, sizeof(a), "%d", out[1]);
		snprintf(b, sizeof(b), "%d", reset ? cmd[1] : -1);
		snprintf(d, sizeof(d), "%d", ack[0]);
		setenv("UNVME_TEST_MPOP_ROLE", reset ? "reset" : "timeout", 1);
		setenv("UNVME_TEST_MPOP_OUT", a, 1);
		setenv("UNVME_TEST_MPOP_CMD", b, 1);
		setenv("UNVME_TEST_MPOP_ACK", d, 1);
		execl("/proc/self/exe", "test_driver_mp_off_poll", (char *)NULL);
		_exit(98);
	}
	close(out[1]);
	close(cmd[1]);
	close(ack[0]);
	if (reset) {
		char b;
		if (read(cmd[0], &b, 1) == 1) {
			CHECK_EQ(unvme_ctrlr_reset(c), 0); /* every queue on the device goes */
			CHECK(write(ack[1], "D", 1) == 1);
		}
	}
	struct child_report rep;
	memset(&rep, 0, sizeof(rep));
	ssize_t got = read(out[0], &rep, sizeof(rep));
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "  the client ended with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	REQUIRE(got == (ssize_t)sizeof(rep));
	fprintf(stderr, "  %s: %u polls, the slowest poll or submit %.1f ms, recovered in %llu ms, "
		"%u replies held %u ms, queue %u -> %u\n", reset ? "a reset" : "a timeout",
		rep.res.polls, rep.res.slowest_us / 1000.0,
		(unsigned long long)rep.res.recovered_ms, atomic_load(&r.late), OFF_POLL_DELAY_MS,
		rep.qid_before, rep.qid_after);
	CHECK_EQ(rep.failures, 0);
	CHECK_EQ(rep.res.slow_calls, 0);  /* no poll or submit waited for the server */
	CHECK(rep.res.lost_once);         /* each read in flight completed exactly once... */
	CHECK(rep.res.lost_failed);       /* ...with an error: it was lost */
	CHECK(rep.res.resumed);           /* and a read afterwards returned the data */
	/* the recovery's requests were held: Abort, Delete SQ, Delete CQ, the create; or the
	 * create after the reset (and the first, at the queue's creation) */
	CHECK(atomic_load(&r.late) >= (reset ? 2u : 4u));
	close(out[0]);
	close(cmd[0]);
	close(ack[1]);
	relay_stop(&r);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_client_timeout_recovery_never_waits_in_a_poll(void)
{
	scenario(false);
}

static void test_client_rebuild_after_primary_reset_never_waits_in_a_poll(void)
{
	scenario(true);
}

/* The queue id a server's reply claims is an index into the client's tables: checked against
 * the controller's grant before use (before, a lying server could make the client write past
 * its array). */
static void test_client_refuses_a_queue_id_beyond_the_grant(void)
{
	setenv("UNVME_MP", "primary", 1);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	struct relay r;
	REQUIRE(relay_start(c, &r) == 0);
	atomic_store(&r.lie_qid, 60000);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("UNVME_TEST_MPOP_ROLE", "lie", 1);
		execl("/proc/self/exe", "test_driver_mp_off_poll", (char *)NULL);
		_exit(98);
	}
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	relay_stop(&r);
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_client_timeout_recovery_never_waits_in_a_poll),
	  TEST(test_client_rebuild_after_primary_reset_never_waits_in_a_poll),
	  TEST(test_client_refuses_a_queue_id_beyond_the_grant))
