/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several processes on one emulated controller (lib/driver/mp_*.c). The test process and
 * children it starts (this binary again, with UNVME_TEST_MP_ROLE saying what to do) open
 * the same device: the first is the primary, the others secondaries with their own queues.
 * Checked: data one process writes the other reads; a secondary's admin commands; queue
 * ids and memory given back when a secondary closes or is killed; a secondary whose primary
 * is killed gets its commands back and -ENODEV, and the next open makes it the primary;
 * malformed requests on the primary's socket are answered with an error and a message.
 * Threaded (the primary's server, the secondaries' watchers): run under TSan too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/driver/ctrlr.h"
#include "lib/driver/mp.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define DEV "emu://utmp?ns=mem:16M:512&mode=thread"

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u);
}

/* ---- the children ---- */

static int child_secondary_io(void)
{
	struct unvme_ctrlr *c;
	if (unvme_ctrlr_open(DEV, NULL, &c) != 0)
		return 10;
	if (strcmp(unvme_ctrlr_transport(c), "secondary") != 0)
		return 11;
	struct unvme_qpair *qp;
	if (unvme_qpair_create(c, NULL, &qp) != 0)
		return 12;
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(8 * 512, 4096), want[8 * 512];
	if (!ns || !buf || unvme_read_sync(ns, qp, buf, 0, 8) != 0)
		return 13;
	fill(want, sizeof(want), 1);
	if (memcmp(buf, want, sizeof(want)) != 0)
		return 14; /* not what the primary wrote */
	fill(buf, 8 * 512, 2);
	if (unvme_write_sync(ns, qp, buf, 8, 8) != 0)
		return 15;
	struct nvme_id_ctrl id;
	if (unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id) != 0 || id.vid != unvme_ctrlr_identify_data(c)->vid)
		return 16;
	if (unvme_ctrlr_reset(c) != -EPERM)
		return 17; /* the controller is the primary's to reset */
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return 0;
}

/* Opens, says so on fd, then writes until killed. */
static int child_spin(int fd)
{
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	if (unvme_ctrlr_open(DEV, NULL, &c) != 0 || unvme_qpair_create(c, NULL, &qp) != 0)
		return 20;
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	if (write(fd, "R", 1) != 1)
		return 21;
	for (uint64_t lba = 0;; lba = (lba + 8) % 1024) {
		fill(buf, 4096, (uint32_t)lba);
		if (unvme_write(ns, qp, buf, 1024 + lba, 8, NULL, NULL) == 0)
			unvme_qpair_poll(qp, 0);
		else
			unvme_qpair_poll(qp, 0);
	}
}

/* The primary: opens, says so on fd, waits to be killed. */
static int child_hold(int fd)
{
	struct unvme_ctrlr *c;
	if (unvme_ctrlr_open(DEV, NULL, &c) != 0 || !c->mp)
		return 30;
	if (write(fd, "R", 1) != 1)
		return 31;
	for (;;)
		pause();
}

static char run_dir[64];

static void remove_run_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		(void)0;
}

__attribute__((constructor)) static void child_main(void)
{
	const char *role = getenv("UNVME_TEST_MP_ROLE");
	if (!role) {
		/* a run directory of the test's own, which its children inherit */
		snprintf(run_dir, sizeof(run_dir), "/tmp/unvme-test-mp-XXXXXX");
		if (mkdtemp(run_dir)) {
			setenv("UNVME_RUN_DIR", run_dir, 1);
			atexit(remove_run_dir);
		}
		return;
	}
	int fd = getenv("UNVME_TEST_MP_FD") ? atoi(getenv("UNVME_TEST_MP_FD")) : -1;
	int rc = strcmp(role, "secondary-io") == 0 ? child_secondary_io()
		 : strcmp(role, "spin") == 0	 ? child_spin(fd)
		 : strcmp(role, "hold") == 0	 ? child_hold(fd)
						 : 99;
	_exit(rc);
}

/* ---- the parent ---- */

/* This binary again in the given role; with ready, waits for its "R" on a pipe. */
static pid_t start_child(const char *role, bool ready)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", p[1]);
		close(p[0]);
		setenv("UNVME_TEST_MP_ROLE", role, 1);
		setenv("UNVME_TEST_MP_FD", fd, 1);
		execl("/proc/self/exe", "test_driver_mp", (char *)NULL);
		_exit(98);
	}
	close(p[1]);
	if (ready) {
		char c;
		if (read(p[0], &c, 1) != 1) {
			close(p[0]);
			return -1;
		}
	}
	close(p[0]);
	return pid;
}

static int wait_child(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Waits until the primary has released every secondary: no connection, no queue id. */
static bool all_released(struct unvme_ctrlr *c, const uint8_t *before)
{
	for (int i = 0; i < 5000; i++) {
		bool clear = mp_server_sessions(c) == 0;
		for (uint32_t q = 1; clear && q <= c->max_io_queues; q++)
			clear = c->qid_used[q] == before[q];
		if (clear)
			return true;
		test_sleep_ms(1);
	}
	return false;
}

static void test_secondary_shares_data_and_admin(void)
{
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	CHECK(c->mp != NULL); /* the first opener is the primary */
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(8 * 512, 4096), want[8 * 512];
	fill(buf, 8 * 512, 1);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 8), 0);
	uint8_t before[256] = {0};
	memcpy(before, c->qid_used, c->max_io_queues + 1 < 256 ? c->max_io_queues + 1 : 256);
	CHECK_EQ(wait_child(start_child("secondary-io", false)), 0);
	CHECK(all_released(c, before));
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 8, 8), 0);
	fill(want, sizeof(want), 2);
	CHECK(memcmp(buf, want, sizeof(want)) == 0); /* what the secondary wrote */
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_killed_secondary_releases_its_queues(void)
{
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	uint8_t before[256] = {0};
	memcpy(before, c->qid_used, c->max_io_queues + 1 < 256 ? c->max_io_queues + 1 : 256);
	for (int round = 0; round < 3; round++) {
		pid_t pid = start_child("spin", true);
		REQUIRE(pid > 0);
		CHECK_EQ(mp_server_sessions(c), 1);
		test_sleep_ms(50);
		kill(pid, SIGKILL);
		CHECK_EQ(wait_child(pid), 128 + SIGKILL);
		CHECK(all_released(c, before));
	}
	/* the primary's own I/O never noticed */
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	CHECK_EQ(unvme_read_sync(ns, qp, buf, 0, 8), 0);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
}

static void test_secondary_outlives_its_primary(void)
{
	pid_t pid = start_child("hold", true);
	REQUIRE(pid > 0);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	CHECK_STREQ(unvme_ctrlr_transport(c), "secondary");
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 8), 0);
	kill(pid, SIGKILL);
	CHECK_EQ(wait_child(pid), 128 + SIGKILL);
	/* removed within a bounded time; then calls answer -ENODEV, nothing hangs */
	uint64_t deadline = test_now_ms() + 10000;
	while (!unvme_ctrlr_is_removed(c) && test_now_ms() < deadline)
		test_sleep_ms(1);
	CHECK(unvme_ctrlr_is_removed(c));
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 8), -ENODEV);
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), -ENODEV);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	/* the lock went with the dead primary: this process is the primary now */
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	CHECK(c->mp != NULL);
	CHECK_STREQ(unvme_ctrlr_transport(c), "emu");
	unvme_ctrlr_close(c);
}

/* One raw request on the primary's socket (fd: sent with it); the reply's rc. */
static int raw_request(struct unvme_ctrlr *c, const struct mp_req *rq, size_t len, int fd,
		       char *msg, size_t msglen)
{
	struct mp_where w;
	if (mp_where(c->address, &w) != 0)
		return -9999;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (connect(s, (struct sockaddr *)&w.sock, sizeof(w.sock)) != 0) {
		close(s);
		return -9998;
	}
	struct mp_rep rep = {0};
	int rc = mp_send(s, rq, len, &fd, fd >= 0 ? 1 : 0) == 0 &&
				 mp_recv(s, &rep, sizeof(rep), NULL, 0, 10000) == (ssize_t)sizeof(rep)
			 ? rep.rc
			 : -9997;
	snprintf(msg, msglen, "%s", rep.msg);
	close(s);
	return rc;
}

static void test_malformed_requests_are_refused(void)
{
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	char msg[256];
	struct mp_req rq = { .op = MP_HELLO };
	rq.hello.version = MP_VERSION + 7;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "version") != NULL);
	rq = (struct mp_req){ .op = 4242 };
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EPROTO);
	rq = (struct mp_req){ .op = MP_REG_READ };
	rq.reg.off = 0x1000;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EINVAL);
	rq = (struct mp_req){ .op = MP_DMA_MAP };
	rq.map.iova = 1ull << 44;
	rq.map.len = 4096;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EBADF);
	/* pages past the end of the file, and a file that could shrink */
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	REQUIRE(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	rq.map.len = 4 << 20;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), fd, msg, sizeof(msg)), -EINVAL);
	rq.map.len = 4096;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), fd, msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "sealed") != NULL);
	REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), fd, msg, sizeof(msg)), 0);
	/* admin data outside what the session mapped; queue commands by admin opcode */
	rq = (struct mp_req){ .op = MP_ADMIN };
	rq.admin.sqe.opc = NVME_ADM_IDENTIFY;
	rq.admin.sqe.cdw10 = NVME_CNS_CTRL;
	rq.admin.data_iova = 1ull << 45;
	rq.admin.len = 4096;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EFAULT);
	rq.admin.sqe.opc = NVME_ADM_CREATE_SQ;
	rq.admin.len = 0;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EPERM);
	rq = (struct mp_req){ .op = MP_QUEUE_DELETE };
	rq.qdelete.qid = 1;
	CHECK_EQ(raw_request(c, &rq, sizeof(rq), -1, msg, sizeof(msg)), -ENOENT);
	close(fd);
	uint8_t none[256] = {0};
	CHECK(all_released(c, none));
	unvme_ctrlr_close(c);
}

TEST_MAIN(TEST(test_secondary_shares_data_and_admin), TEST(test_killed_secondary_releases_its_queues),
	  TEST(test_secondary_outlives_its_primary), TEST(test_malformed_requests_are_refused))
