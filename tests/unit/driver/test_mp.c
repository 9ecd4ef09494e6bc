/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several processes on one emulated controller (lib/driver/mp/). The test process and
 * children it starts (this binary again, with UNVME_TEST_MP_ROLE saying what to do) open
 * the same device.
 *
 * The primary model (UNVME_MP=primary, as for a VFIO controller): the first opener runs the
 * device, the others are secondaries with their own queues. Checked: data one process writes
 * the other reads; a secondary's admin commands; queue ids and memory given back when a
 * secondary closes or is killed; a secondary whose primary is killed gets its commands back
 * and -ENODEV, and the next open makes it the primary; a reset of the primary's controller
 * makes a secondary create its queues again instead of losing the device; malformed and
 * foreign requests on the socket are answered with an error and a message, every length
 * checked; a peer of another user is refused; the admin policy's lengths (a client's checks
 * of the server's replies: test_mp_channel.c).
 *
 * Device processes (the default for a named or file-backed emulated device): the device
 * outlives the process that opened it first (killed or not, a client's writes go on and
 * read back), a killed device process is a removal for its clients and the next open
 * starts a new one on the same files, an idle one ends, one run by unvme_serve stops when
 * told, a card pulled out and put back through it, Asynchronous Events forwarded, and a
 * fatal status it resets makes its clients create their queues again.
 * Threaded (the server, the clients' watchers): run under TSan too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unvme/emu.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/mp/mp.h"
#include "lib/driver/mp/mp_admin_policy.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define DEV "emu://utmp?ns=mem:16M:512&mode=thread"
#define NBLK 128 /* blocks the device-process writer writes */

static char run_dir[64];
static char devp[256];  /* a file-backed device: a device process runs it */

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u);
}

static void primary_model(void)
{
	setenv("UNVME_MP", "primary", 1);
}

static void device_model(void)
{
	unsetenv("UNVME_MP");
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

/* Opens the device (UNVME_TEST_MP_DEV, else DEV), says so on fd, waits to be killed. */
static int child_hold(int fd)
{
	const char *dev = getenv("UNVME_TEST_MP_DEV") ? getenv("UNVME_TEST_MP_DEV") : DEV;
	struct unvme_ctrlr *c;
	if (unvme_ctrlr_open(dev, NULL, &c) != 0)
		return 30;
	if (write(fd, "R", 1) != 1)
		return 31;
	for (;;)
		pause();
}

/* A sync write that a reset may abort (ABORTED_SQ_DELETION: written again); a negative
 * answer (the device lost) fails. */
static int write_through_resets(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf,
				uint64_t lba, uint32_t n)
{
	for (int tries = 0; tries < 1000; tries++) {
		int rc = unvme_write_sync(ns, qp, buf, lba, n);
		if (rc <= 0)
			return rc;
		if (rc != NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION))
			return rc;
	}
	return -ETIMEDOUT;
}

/* A secondary that writes for a while, through the primary's resets: never -ENODEV. */
static int child_survive_reset(int fd)
{
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	if (unvme_ctrlr_open(DEV, NULL, &c) != 0 || unvme_qpair_create(c, NULL, &qp) != 0)
		return 40;
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	if (write(fd, "R", 1) != 1)
		return 41;
	uint64_t end = test_now_ms() + 1500;
	for (uint64_t lba = 0; test_now_ms() < end; lba = (lba + 8) % 2048) {
		fill(buf, 4096, (uint32_t)lba);
		int rc = write_through_resets(ns, qp, buf, lba, 8);
		if (rc)
			return rc < 0 ? 42 : 43;
	}
	if (unvme_ctrlr_is_removed(c))
		return 44;
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return 0;
}

/* The device process's client: writes blocks [from, from + NBLK/2) of devp with their
 * pattern, each acknowledged before the next. */
static int child_writer(int fd)
{
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	if (unvme_ctrlr_open(devp, NULL, &c) != 0 || unvme_qpair_create(c, NULL, &qp) != 0)
		return 50;
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(512, 4096);
	uint64_t from = strtoull(getenv("UNVME_TEST_MP_FROM"), NULL, 10);
	for (uint64_t lba = from; lba < from + NBLK / 2; lba++) {
		fill(buf, 512, (uint32_t)lba);
		if (unvme_write_sync(ns, qp, buf, lba, 1) != 0)
			return 51;
		if (lba == from + 4 && write(fd, "R", 1) != 1)
			return 52;
		test_sleep_ms(2); /* the others come and go meanwhile */
	}
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return 0;
}

/* A device process that outlives the test ends anyway when its socket file goes with the
 * run directory (mp_server.c). */
static void remove_run_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		(void)0;
}

/* serve: runs devp's device process in this child until told to stop. */
static int child_serve(int fd)
{
	struct unvme_serve_opts o = { .idle_ms = 0 };
	int rc = unvme_serve(devp, &o);
	return rc == 0 ? 0 : 60;
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
	} else {
		snprintf(run_dir, sizeof(run_dir), "%s", getenv("UNVME_RUN_DIR"));
	}
	snprintf(devp, sizeof(devp), "emu://utdp?ns=file:1M:512:%s/dp.img", run_dir);
	if (!role)
		return;
	int fd = getenv("UNVME_TEST_MP_FD") ? atoi(getenv("UNVME_TEST_MP_FD")) : -1;
	int rc = strcmp(role, "secondary-io") == 0   ? child_secondary_io()
		 : strcmp(role, "spin") == 0	     ? child_spin(fd)
		 : strcmp(role, "hold") == 0	     ? child_hold(fd)
		 : strcmp(role, "survive-reset") == 0 ? child_survive_reset(fd)
		 : strcmp(role, "writer") == 0	     ? child_writer(fd)
		 : strcmp(role, "serve") == 0	     ? child_serve(fd)
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

/* Waits until the server has released every client: no session, no queue id. */
static bool all_released(struct unvme_ctrlr *c, const uint8_t *before)
{
	for (int i = 0; i < 5000; i++) {
		bool clear = mp_server_sessions(c) == 0;
		ctrlr_lock_qps(c); /* the server thread hands out queue ids under it */
		for (uint32_t q = 1; clear && q <= c->max_io_queues; q++)
			clear = c->qid_used[q] == before[q];
		ctrlr_unlock_qps(c);
		if (clear)
			return true;
		test_sleep_ms(1);
	}
	return false;
}

static void test_secondary_shares_data_and_admin(void)
{
	primary_model();
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
	primary_model();
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
	primary_model();
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
	uint64_t deadline = test_now_ms() + 60000;
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

static void test_primary_reset_rebuilds_secondary_queues(void)
{
	primary_model();
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	pid_t pid = start_child("survive-reset", true);
	REQUIRE(pid > 0);
	for (int i = 0; i < 3; i++) {
		test_sleep_ms(150);
		CHECK_EQ(unvme_ctrlr_reset(c), 0); /* every queue on the device goes */
	}
	CHECK_EQ(wait_child(pid), 0); /* its writes went on, never -ENODEV */
	unvme_ctrlr_close(c);
}

/* One raw request on the server's socket (fd: sent with it); the reply's rc. A HELLO first
 * when hello is set (the session's own notice and window descriptors are closed). */
static int raw_session(struct unvme_ctrlr *c, bool hello, const void *rq, size_t len, int fd,
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
	int fds[MP_MAX_FDS];
	if (hello) {
		struct mp_req h = { .op = MP_HELLO };
		h.hello.version = MP_VERSION;
		if (mp_send(s, &h, mp_req_len(MP_HELLO, 0), NULL, 0) != 0 ||
		    mp_recv(s, &rep, sizeof(rep), fds, MP_MAX_FDS, 60000) != (ssize_t)sizeof(rep) ||
		    rep.rc != 0) {
			close(s);
			return -9996;
		}
		for (unsigned i = 0; i < MP_MAX_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	int rc = mp_send(s, rq, len, &fd, fd >= 0 ? 1 : 0) == 0 &&
				 mp_recv(s, &rep, sizeof(rep), fds, MP_MAX_FDS, 60000) == (ssize_t)sizeof(rep)
			 ? rep.rc
			 : -9997;
	for (unsigned i = 0; rc != -9997 && i < MP_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	snprintf(msg, msglen, "%s", rep.msg);
	close(s);
	return rc;
}

static int raw(struct unvme_ctrlr *c, const struct mp_req *rq, int fd, char *msg, size_t msglen)
{
	return raw_session(c, true, rq, mp_req_len(rq->op, rq->op == MP_PLUG ? rq->card.len : 0),
			   fd, msg, msglen);
}

static void test_malformed_requests_are_refused(void)
{
	primary_model();
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(DEV, NULL, &c) == 0);
	char msg[256];
	/* the protocol: the version, exact lengths, no request before HELLO, no stray fd */
	struct mp_req rq = { .op = MP_HELLO };
	rq.hello.version = MP_VERSION + 7;
	CHECK_EQ(raw_session(c, false, &rq, mp_req_len(MP_HELLO, 0), -1, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "version") != NULL);
	rq = (struct mp_req){ .op = 4242 };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -9997); /* (no length for it: not sent) */
	CHECK_EQ(raw_session(c, true, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EPROTO);
	rq = (struct mp_req){ .op = MP_REG_READ, .reg = { .off = 0x1c, .width = 4 } };
	CHECK_EQ(raw_session(c, true, &rq, sizeof(rq), -1, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "bytes") != NULL);
	CHECK_EQ(raw_session(c, true, &rq, 6, -1, msg, sizeof(msg)), -EPROTO);
	CHECK_EQ(raw_session(c, false, &rq, mp_req_len(MP_REG_READ, 0), -1, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "before HELLO") != NULL);
	CHECK_EQ(raw(c, &rq, 0, msg, sizeof(msg)), -EPROTO); /* a descriptor with it */
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), 0);
	rq = (struct mp_req){ .op = MP_HELLO };
	rq.hello.version = MP_VERSION;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EALREADY);
	/* registers: below the doorbells, aligned */
	rq = (struct mp_req){ .op = MP_REG_READ, .reg = { .off = 0x1000, .width = 4 } };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	rq.reg.off = 0xffc;
	rq.reg.width = 8;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	rq.reg.off = 0x2;
	rq.reg.width = 4;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	rq.reg.off = 0x0;
	rq.reg.width = 3;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	/* DMA maps: a sealed memfd's whole pages */
	rq = (struct mp_req){ .op = MP_DMA_MAP };
	rq.map.iova = 1ull << 44;
	rq.map.len = 4096;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EBADF);
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	REQUIRE(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	rq.map.len = 4 << 20;
	CHECK_EQ(raw(c, &rq, fd, msg, sizeof(msg)), -EINVAL);
	rq.map.len = 4096;
	CHECK_EQ(raw(c, &rq, fd, msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "sealed") != NULL);
	REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
	rq.map.iova = UINT64_MAX - 4095; /* past the end of the IOVA space */
	CHECK_EQ(raw(c, &rq, fd, msg, sizeof(msg)), -EINVAL);
	rq.map.iova = 1ull << 44;
	CHECK_EQ(raw(c, &rq, fd, msg, sizeof(msg)), 0);
	/* admin: data outside what the session mapped; queue commands by admin opcode; pointers
	 * to memory by address */
	rq = (struct mp_req){ .op = MP_ADMIN };
	rq.admin.sqe.opc = NVME_ADM_IDENTIFY;
	rq.admin.sqe.cdw10 = NVME_CNS_CTRL;
	rq.admin.data_iova = 1ull << 45;
	rq.admin.len = 4096;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EFAULT);
	rq.admin.sqe.opc = NVME_ADM_CREATE_SQ;
	rq.admin.len = 0;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EPERM);
	rq.admin.sqe.opc = NVME_ADM_DOORBELL_BUF_CFG;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EPERM);
	rq.admin.sqe.opc = NVME_ADM_SET_FEATURES;
	rq.admin.sqe.cdw10 = NVME_FEAT_HOST_MEM_BUF;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EPERM);
	/* another process's queue: the primary's own qpair */
	struct unvme_qpair *own;
	REQUIRE(unvme_qpair_create(c, NULL, &own) == 0);
	/* (answered as for a queue the controller does not have: nothing touched, nothing told) */
	rq.admin.sqe = (struct nvme_sqe){ .opc = NVME_ADM_ABORT, .cdw10 = unvme_qpair_id(own) };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), 0); /* DW0 bit 0: not aborted */
	rq.admin.sqe.opc = NVME_ADM_DELETE_SQ;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	rq.admin.sqe.opc = NVME_ADM_DELETE_CQ;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	/* Number of Queues with I/O queues in use, as the controller answers it */
	rq.admin.sqe = (struct nvme_sqe){ .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES,
					  .cdw11 = 0x00030003 };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR));
	/* a Get Log Page that says it moves more than the controller's maximum transfer */
	rq.admin.sqe = (struct nvme_sqe){ .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = 2u | 0xffffu << 16,
					  .cdw11 = 0xffff };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	/* with pointers of its own and no data: they never reach the device (a SMART log
	 * into IOVA 0 would fail with a data transfer error) */
	rq.admin.sqe = (struct nvme_sqe){ .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = 2u | 127u << 16,
					  .prp1 = 1ull << 44, .prp2 = 0x1000 };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), 0);
	/* queues: rings inside the session's own memory only */
	rq = (struct mp_req){ .op = MP_QUEUE_CREATE };
	rq.qcreate.depth = 64;
	rq.qcreate.sq_iova = rq.qcreate.cq_iova = 1ull << 45;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EFAULT);
	rq.qcreate.sq_iova = own->sq_iova; /* the primary's own ring */
	rq.qcreate.cq_iova = own->cq_iova;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EFAULT);
	rq.qcreate.depth = 1;
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	rq = (struct mp_req){ .op = MP_QUEUE_DELETE };
	rq.qdelete.qid = unvme_qpair_id(own);
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -ENOENT);
	/* a card URI with a NUL inside, one longer than its message */
	rq = (struct mp_req){ .op = MP_PLUG };
	rq.card.len = 4;
	memcpy(rq.card.uri, "ab\0c", 4);
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EINVAL);
	rq.card.len = MP_URI_MAX + 1;
	CHECK_EQ(raw_session(c, true, &rq, offsetof(struct mp_req, card.uri) + 8, -1, msg,
			     sizeof(msg)), -EPROTO);
	/* a primary is not a device process */
	rq = (struct mp_req){ .op = MP_STOP };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EOPNOTSUPP);
	rq = (struct mp_req){ .op = MP_AER_SUBSCRIBE };
	CHECK_EQ(raw(c, &rq, -1, msg, sizeof(msg)), -EOPNOTSUPP);
	close(fd);
	unvme_qpair_destroy(own);
	uint8_t none[256] = {0};
	CHECK(all_released(c, none));
	unvme_ctrlr_close(c);
}

static void test_peer_of_another_user_is_refused(void)
{
	SKIP_UNLESS(geteuid() == 0, "acting as another user needs root");
	primary_model();
	mode_t old = umask(0); /* the socket is 0600 whatever the umask */
	struct unvme_ctrlr *c;
	int orc = unvme_ctrlr_open(DEV, NULL, &c);
	umask(old);
	REQUIRE(orc == 0);
	struct mp_where w;
	REQUIRE(mp_where(c->address, &w) == 0);
	struct stat st;
	REQUIRE(stat(w.sock.sun_path, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	/* let another user reach it, as a run directory shared by mistake would */
	REQUIRE(chmod(run_dir, 0755) == 0 && chmod(w.sock.sun_path, 0666) == 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (connect(s, (struct sockaddr *)&w.sock, sizeof(w.sock)) != 0)
			_exit(3);
		struct mp_req rq = { .op = MP_HELLO };
		rq.hello.version = MP_VERSION;
		struct mp_rep rep;
		(void)mp_send(s, &rq, mp_req_len(MP_HELLO, 0), NULL, 0);
		ssize_t n = mp_recv(s, &rep, sizeof(rep), NULL, 0, 60000);
		if (n != (ssize_t)sizeof(rep)) {
			fprintf(stderr, "  the refused peer got %zd bytes, not a reply\n", n);
			_exit(4);
		}
		_exit(rep.rc == -EACCES && strstr(rep.msg, "may not") ? 0 : 5);
	}
	CHECK_EQ(wait_child(pid), 0);
	CHECK_EQ(mp_server_sessions(c), 0);
	chmod(w.sock.sun_path, 0600);
	chmod(run_dir, 0700);
	unvme_ctrlr_close(c);
}

static void test_admin_lengths_come_from_the_command(void)
{
	uint32_t x;
	char why[200];
	struct nvme_sqe s = { .opc = NVME_ADM_IDENTIFY };
	CHECK_EQ(mp_admin_check(&s, 512, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 4096); /* whatever the client's buffer, the command moves 4 KiB */
	s = (struct nvme_sqe){ .opc = NVME_ADM_GET_LOG_PAGE, .cdw10 = 2u | (1023u << 16) };
	CHECK_EQ(mp_admin_check(&s, 512, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 4096);
	s.cdw11 = 1; /* NUMDU: (1 << 16) + 1023 + 1 dwords */
	CHECK_EQ(mp_admin_check(&s, 512, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, (65536u + 1024u) * 4u);
	s.cdw11 = 0xffff;
	CHECK_EQ(mp_admin_check(&s, 512, 4096, 1 << 21, &x, why, sizeof(why)), -EINVAL);
	s = (struct nvme_sqe){ .opc = NVME_ADM_FW_DOWNLOAD, .cdw10 = 1023 };
	CHECK_EQ(mp_admin_check(&s, 4096, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 4096);
	s = (struct nvme_sqe){ .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_TIMESTAMP };
	CHECK_EQ(mp_admin_check(&s, 4096, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 8);
	s = (struct nvme_sqe){ .opc = NVME_ADM_GET_FEATURES, .cdw10 = NVME_FEAT_LBA_RANGE | 3u << 8 };
	CHECK_EQ(mp_admin_check(&s, 4096, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 0); /* supported capabilities: DW0 only */
	s = (struct nvme_sqe){ .opc = NVME_ADM_FORMAT_NVM, .cdw10 = 0xffffffff };
	CHECK_EQ(mp_admin_check(&s, 4096, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 0); /* no data direction */
	s = (struct nvme_sqe){ .opc = 0xc2, .cdw10 = 16 }; /* vendor: NDT */
	CHECK_EQ(mp_admin_check(&s, 0, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 64);
	s = (struct nvme_sqe){ .opc = 0x7e }; /* unknown, with data: one page at most */
	CHECK_EQ(mp_admin_check(&s, 4096, 4096, 1 << 21, &x, why, sizeof(why)), 0);
	CHECK_EQ(x, 4096);
	CHECK_EQ(mp_admin_check(&s, 8192, 4096, 1 << 21, &x, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "one page") != NULL);
	s = (struct nvme_sqe){ .opc = NVME_ADM_ASYNC_EVENT };
	CHECK_EQ(mp_admin_check(&s, 0, 4096, 1 << 21, &x, why, sizeof(why)), -EOPNOTSUPP);
	s = (struct nvme_sqe){ .opc = NVME_ADM_IDENTIFY, .flags = 0xc1, .cid = 7, .mptr = 9,
			       .prp1 = 0x1000, .prp2 = 0x2000, .cdw10 = 1 };
	mp_admin_scrub(&s);
	CHECK(s.flags == 0 && s.cid == 0 && s.mptr == 0 && s.prp1 == 0 && s.prp2 == 0);
	CHECK_EQ(s.cdw10, 1);
}

/* ---- device processes ---- */

static int server_pid(const char *dev)
{
	struct unvme_serve_status st;
	return unvme_serve_status(dev, &st) == 0 && st.device_process ? st.pid : 0;
}

static bool read_back(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t from, uint64_t n)
{
	uint8_t *buf = unvme_dma_alloc(512, 4096), want[512];
	bool ok = buf != NULL;
	for (uint64_t lba = from; ok && lba < from + n; lba++) {
		fill(want, sizeof(want), (uint32_t)lba);
		ok = unvme_read_sync(ns, qp, buf, lba, 1) == 0 && memcmp(buf, want, sizeof(want)) == 0;
	}
	unvme_dma_free(buf);
	return ok;
}

static void stop_device(const char *dev)
{
	int rc = unvme_serve_stop(dev, 30000);
	CHECK(rc == 0 || rc == -ESRCH);
	CHECK_EQ(server_pid(dev), 0);
}

/* The first opener killed, the next one exiting: a client's writes go on and every
 * acknowledged one reads back. */
static void test_device_outlives_its_first_opener(void)
{
	device_model();
	setenv("UNVME_TEST_MP_DEV", devp, 1);
	pid_t first = start_child("hold", true);
	REQUIRE(first > 0);
	int dp = server_pid(devp);
	CHECK(dp > 0 && dp != first); /* a process of its own, not the opener */
	setenv("UNVME_TEST_MP_FROM", "0", 1);
	pid_t w1 = start_child("writer", true);
	REQUIRE(w1 > 0);
	kill(first, SIGKILL); /* the first opener, killed during the writes */
	CHECK_EQ(wait_child(first), 128 + SIGKILL);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(devp, NULL, &c) == 0);
	CHECK_STREQ(unvme_ctrlr_transport(c), "client");
	setenv("UNVME_TEST_MP_FROM", "64", 1);
	pid_t w2 = start_child("writer", true);
	REQUIRE(w2 > 0);
	unvme_ctrlr_close(c); /* this one exits normally during the writes */
	CHECK_EQ(wait_child(w1), 0);
	CHECK_EQ(wait_child(w2), 0);
	CHECK_EQ(server_pid(devp), dp);
	REQUIRE(unvme_ctrlr_open(devp, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	CHECK(read_back(unvme_ctrlr_ns(c, 1), qp, 0, NBLK));
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	stop_device(devp);
	unsetenv("UNVME_TEST_MP_DEV");
}

static void test_killed_device_process_is_a_removal(void)
{
	device_model();
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(devp, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(512, 4096);
	fill(buf, 512, 200);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 200, 1), 0);
	int dp = server_pid(devp);
	REQUIRE(dp > 0);
	kill(dp, SIGKILL);
	uint64_t deadline = test_now_ms() + 60000;
	while (!unvme_ctrlr_is_removed(c) && test_now_ms() < deadline)
		test_sleep_ms(1);
	CHECK(unvme_ctrlr_is_removed(c));
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 1), -ENODEV);
	struct nvme_id_ctrl id;
	CHECK_EQ(unvme_identify(c, NVME_CNS_CTRL, 0, 0, &id), -ENODEV);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	/* the next open starts a new one on the same file: the acknowledged write is there */
	REQUIRE(unvme_ctrlr_open(devp, NULL, &c) == 0);
	CHECK(server_pid(devp) > 0 && server_pid(devp) != dp);
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	CHECK(read_back(unvme_ctrlr_ns(c, 1), qp, 200, 1));
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	stop_device(devp);
}

static void test_idle_device_process_ends(void)
{
	device_model();
	setenv("UNVME_DEVICE_IDLE_MS", "200", 1);
	const char *dev = "emu://utidle?ns=mem:4M:512";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	CHECK_STREQ(unvme_ctrlr_transport(c), "client");
	unvme_ctrlr_close(c);
	unsetenv("UNVME_DEVICE_IDLE_MS");
	uint64_t deadline = test_now_ms() + 120000;
	while (server_pid(dev) && test_now_ms() < deadline)
		test_sleep_ms(20);
	CHECK_EQ(server_pid(dev), 0);
}

static void test_served_device_stops_when_told(void)
{
	device_model();
	pid_t srv = start_child("serve", false);
	REQUIRE(srv > 0);
	uint64_t deadline = test_now_ms() + 120000;
	while (server_pid(devp) != srv && test_now_ms() < deadline)
		test_sleep_ms(10);
	REQUIRE(server_pid(devp) == srv);
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(devp, NULL, &c) == 0);
	struct unvme_serve_status st;
	CHECK_EQ(unvme_serve_status(devp, &st), 0);
	CHECK_EQ(st.clients, 1);
	CHECK_EQ(st.idle_ms, 0);
	CHECK_EQ(unvme_serve_stop(devp, 30000), 0);
	CHECK_EQ(wait_child(srv), 0);
	deadline = test_now_ms() + 60000;
	while (!unvme_ctrlr_is_removed(c) && test_now_ms() < deadline)
		test_sleep_ms(1);
	CHECK(unvme_ctrlr_is_removed(c)); /* its clients see the device go */
	unvme_ctrlr_close(c);
	CHECK_EQ(unvme_serve_stop(devp, 1000), -ESRCH);
}

static void test_card_pulled_and_back_through_the_device_process(void)
{
	device_model();
	const char *dev = "emu://uthp?ns=mem:4M:512";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(512, 4096);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 1), 0);
	CHECK_EQ(unvme_emu_unplug(dev), 0);
	CHECK(unvme_ctrlr_is_removed(c)); /* before unplug returned */
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 1), -ENODEV);
	CHECK_EQ(unvme_emu_unplug(dev), -EALREADY);
	CHECK_EQ(unvme_emu_plug(dev, "emu://spare?ns=mem:8M:512&serial=SPARE7"), 0);
	CHECK(!unvme_ctrlr_is_removed(c));
	CHECK_EQ(write_through_resets(ns, qp, buf, 0, 1), 0); /* the same handles go on */
	char sn[21];
	snprintf(sn, sizeof(sn), "%.20s", unvme_ctrlr_identify_data(c)->sn);
	CHECK(strncmp(sn, "SPARE7", 6) == 0);
	CHECK_EQ(unvme_ns_nlbas(ns), 8u << 11);
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	stop_device(dev);
}

static void count_aer(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	if (ev->type == UNVME_EVENT_AER)
		++*(int *)arg;
}

static void test_events_reach_clients(void)
{
	device_model();
	const char *dev = "emu://utaer?ns=mem:4M:512";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	int seen = 0;
	REQUIRE(unvme_ctrlr_add_event_cb(c, count_aer, &seen) == 0);
	CHECK_EQ(unvme_ctrlr_aer_enable(c), 0);
	/* temperature events on; a threshold below the device's 313 K: an event */
	CHECK_EQ(unvme_set_features(c, NVME_FEAT_ASYNC_EVENT, 0, 2, false, NULL), 0);
	CHECK_EQ(unvme_set_features(c, NVME_FEAT_TEMP_THRESH, 0, 300, false, NULL), 0);
	uint64_t deadline = test_now_ms() + 60000;
	while (!seen && test_now_ms() < deadline) {
		CHECK(unvme_ctrlr_process_events(c) >= 0);
		test_sleep_ms(5);
	}
	CHECK_EQ(seen, 1);
	unvme_ctrlr_remove_event_cb(c, count_aer, &seen);
	unvme_ctrlr_close(c);
	stop_device(dev);
}

static void test_fatal_status_reset_rebuilds_clients(void)
{
	device_model();
	const char *dev = "emu://utfatal?ns=mem:4M:512";
	struct unvme_ctrlr *c;
	REQUIRE(unvme_ctrlr_open(dev, NULL, &c) == 0);
	struct unvme_qpair *qp;
	REQUIRE(unvme_qpair_create(c, NULL, &qp) == 0);
	struct unvme_ns *ns = unvme_ctrlr_ns(c, 1);
	uint8_t *buf = unvme_dma_alloc(512, 4096);
	CHECK_EQ(unvme_write_sync(ns, qp, buf, 0, 1), 0);
	struct nvme_sqe f = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = 1 /* FATAL */ };
	CHECK_EQ(unvme_admin(c, &f, NULL, 0, NULL), 0);
	/* the device process resets its controller; this client's queue comes back */
	for (int i = 0; i < 20; i++)
		CHECK_EQ(write_through_resets(ns, qp, buf, (uint64_t)i, 1), 0);
	CHECK(!unvme_ctrlr_is_removed(c));
	CHECK(!unvme_ctrlr_is_failed(c));
	unvme_dma_free(buf);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	stop_device(dev);
}

TEST_MAIN(TEST(test_secondary_shares_data_and_admin), TEST(test_killed_secondary_releases_its_queues),
	  TEST(test_secondary_outlives_its_primary), TEST(test_primary_reset_rebuilds_secondary_queues),
	  TEST(test_malformed_requests_are_refused), TEST(test_peer_of_another_user_is_refused),
	  TEST(test_admin_lengths_come_from_the_command),
	  TEST(test_device_outlives_its_first_opener),
	  TEST(test_killed_device_process_is_a_removal), TEST(test_idle_device_process_ends),
	  TEST(test_served_device_stops_when_told),
	  TEST(test_card_pulled_and_back_through_the_device_process),
	  TEST(test_events_reach_clients), TEST(test_fatal_status_reset_rebuilds_clients))
