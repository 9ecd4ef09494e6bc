/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs inside the QEMU guest against real (QEMU-emulated) NVMe controllers bound to vfio-pci.
 * Each subcommand prints "PASS <name>" or "FAIL <name>: why" lines and exits non-zero on any
 * failure; tests/qemu/guest.sh turns them into the markers the host parses.
 *
 *   io BDF...          every controller open at once; several queue pairs of different depths
 *                      per controller, each writing its own LBA range with a per-block pattern at
 *                      full depth, then reading back and verifying (zoned namespaces: sequential
 *                      writes from the zone start)
 *   reset-inflight BDF a controller reset with commands in flight: each completes with an error
 *                      status to its callback, then I/O works again
 *   cfs BDF            the controller itself resets and reports a fatal status (CSTS.CFS), behind
 *                      the driver's back: the driver notices by polling, resets the controller
 *                      by itself, completes every pending command with an error and the queue
 *                      works again
 *   unbind BDF         the device is unbound from vfio-pci while I/O is in flight: the commands
 *                      fail, nothing hangs, the device goes back to the kernel
 *   hotplug BDF        real PCIe hot-plug (the device behind a hot-plug root port): during I/O
 *                      the test asks the host for QEMU's device_del ("UNVME-HOTPLUG del" on the
 *                      serial console, scripts/qemu/hotplug_agent.py), every command comes back
 *                      with an error, the controller reports REMOVED and -ENODEV; then
 *                      device_add puts a controller with another serial on the same drive,
 *                      the test binds it to vfio-pci, the driver attaches it by itself
 *                      (ARRIVED) and the same queue pair reads the data written before
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "unvme/spec/regs.h"

static int failures;

#define FAIL(name, ...)                                                                          \
	do {                                                                                     \
		printf("FAIL %s: ", name);                                                       \
		printf(__VA_ARGS__);                                                             \
		printf("\n");                                                                    \
		fflush(stdout);                                                                  \
		failures++;                                                                      \
	} while (0)
#define PASS(...)                                                                                \
	do {                                                                                     \
		printf("PASS ");                                                                 \
		printf(__VA_ARGS__);                                                             \
		printf("\n");                                                                    \
		fflush(stdout);                                                                  \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Every 8-byte word of a block says which controller, queue and LBA wrote it. */
static void fill(void *buf, uint32_t lba_size, uint64_t tag, uint64_t lba)
{
	uint64_t *w = buf;
	for (uint32_t i = 0; i < lba_size / 8; i++)
		w[i] = (tag << 40) ^ (lba << 8) ^ i;
}

static bool check(const void *buf, uint32_t lba_size, uint64_t tag, uint64_t lba)
{
	const uint64_t *w = buf;
	for (uint32_t i = 0; i < lba_size / 8; i++)
		if (w[i] != ((tag << 40) ^ (lba << 8) ^ i))
			return false;
	return true;
}

struct slot {
	void *buf;
	uint64_t lba;
	int done;
	int status;
};

static void slot_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct slot *s = arg;
	s->status = NVME_STATUS_FROM_CQE(cpl->status);
	s->done = 1;
}

/* Writes (or reads and verifies) n blocks from first, keeping up to qd commands in flight. */
static int run_pass(struct unvme_ns *ns, struct unvme_qpair *qp, uint32_t qd, uint64_t first,
		    uint64_t n, uint64_t tag, bool write, const char *name)
{
	uint32_t bs = unvme_ns_lba_size(ns);
	struct slot *slots = calloc(qd, sizeof(*slots));
	for (uint32_t i = 0; i < qd; i++) {
		slots[i].buf = unvme_dma_alloc(bs, 4096);
		slots[i].done = 1;
		slots[i].lba = UINT64_MAX;
	}
	uint64_t next = 0, finished = 0;
	int rc = 0;
	uint64_t deadline = now_ms() + 60000;
	while (finished < n && rc == 0) {
		for (uint32_t i = 0; i < qd && rc == 0; i++) {
			struct slot *s = &slots[i];
			if (!s->done)
				continue;
			if (s->lba != UINT64_MAX) {
				if (s->status) {
					FAIL(name, "%s LBA %" PRIu64 ": %s", write ? "write" : "read", s->lba,
					     unvme_status_str(s->status, unvme_ns_csi(ns)));
					rc = -1;
					break;
				}
				if (!write && !check(s->buf, bs, tag, s->lba)) {
					FAIL(name, "LBA %" PRIu64 ": data differs from what was written", s->lba);
					rc = -1;
					break;
				}
				finished++;
				s->lba = UINT64_MAX;
			}
			if (next < n) {
				s->lba = first + next++;
				s->done = 0;
				int src;
				if (write) {
					fill(s->buf, bs, tag, s->lba);
					src = unvme_write(ns, qp, s->buf, s->lba, 1, slot_cb, s);
				} else {
					memset(s->buf, 0, bs);
					src = unvme_read(ns, qp, s->buf, s->lba, 1, slot_cb, s);
				}
				if (src) {
					FAIL(name, "submit: %d %s", src, unvme_errmsg());
					rc = -1;
				}
			}
		}
		if (rc)
			break;
		if (unvme_qpair_poll(qp, 0) < 0) {
			FAIL(name, "poll: %s", unvme_errmsg());
			rc = -1;
		}
		if (now_ms() > deadline) {
			FAIL(name, "timed out");
			rc = -1;
		}
	}
	/* Drain what is in flight before the buffers go. */
	for (uint64_t t0 = now_ms(); unvme_qpair_outstanding(qp) && now_ms() - t0 < 10000;)
		if (unvme_qpair_poll(qp, 0) < 0)
			break;
	for (uint32_t i = 0; i < qd; i++)
		unvme_dma_free(slots[i].buf);
	free(slots);
	return rc;
}

#define MAX_CTRLS 8

static int cmd_io(int argc, char **argv)
{
	struct unvme_ctrlr *c[MAX_CTRLS] = {0};
	int n = argc < MAX_CTRLS ? argc : MAX_CTRLS;
	for (int i = 0; i < n; i++) {
		if (unvme_ctrlr_open(argv[i], NULL, &c[i])) {
			FAIL("open", "%s: %s", argv[i], unvme_errmsg());
			return 1;
		}
		uint64_t cap = unvme_ctrlr_cap(c[i]);
		printf("# %s: transport %s, MQES %u, DSTRD %u, TO %u, MPSMIN %u, MPSMAX %u, %u I/O queues\n",
		       argv[i], unvme_ctrlr_transport(c[i]), NVME_CAP_MQES(cap) + 1, NVME_CAP_DSTRD(cap),
		       NVME_CAP_TO(cap), NVME_CAP_MPSMIN(cap), NVME_CAP_MPSMAX(cap),
		       unvme_ctrlr_max_io_queues(c[i]));
		if (strcmp(unvme_ctrlr_transport(c[i]), "vfio") != 0)
			FAIL("open", "%s: transport is %s, not vfio", argv[i], unvme_ctrlr_transport(c[i]));
	}
	PASS("open-%d-controllers-at-once", n);
	static const uint32_t depths[] = {2, 16, 64, 256};
	for (int i = 0; i < n; i++) {
		uint32_t nsid = unvme_ctrlr_first_nsid(c[i]);
		struct unvme_ns *ns = unvme_ctrlr_ns(c[i], nsid);
		if (!ns) {
			FAIL("io", "%s: no namespace", argv[i]);
			continue;
		}
		bool zoned = unvme_ns_csi(ns) == NVME_CSI_ZNS;
		uint32_t mqes = NVME_CAP_MQES(unvme_ctrlr_cap(c[i])) + 1;
		struct unvme_qpair *qp[4] = {0};
		int nq = zoned ? 1 : 4;
		char name[96];
		int ok = 1;
		for (int q = 0; q < nq; q++) {
			struct unvme_qpair_opts o = {.depth = depths[q] < mqes ? depths[q] : mqes};
			if (zoned)
				o.depth = 64;
			if (unvme_qpair_create(c[i], &o, &qp[q])) {
				FAIL("io", "%s: queue pair %d (depth %u): %s", argv[i], q, o.depth, unvme_errmsg());
				ok = 0;
			}
		}
		/* Interleave the queues: each writes its own 512-block range, then reads it back. */
		uint64_t per_q = 512;
		for (int q = 0; q < nq && ok; q++) {
			uint32_t qd = zoned ? 1 : depths[q] - 1; /* zoned: writes must land in order */
			snprintf(name, sizeof(name), "io-%s-q%u-qd%u%s", argv[i], unvme_qpair_id(qp[q]), qd,
				 zoned ? "-zoned" : "");
			uint64_t tag = (uint64_t)(i * 16 + q + 1);
			if (run_pass(ns, qp[q], qd, q * per_q, per_q, tag, true, name) == 0 &&
			    run_pass(ns, qp[q], zoned ? 32 : qd, q * per_q, per_q, tag, false, name) == 0)
				PASS("%s (%" PRIu64 " blocks of %u bytes written and verified)", name, per_q,
				     unvme_ns_lba_size(ns));
		}
		for (int q = 0; q < nq; q++)
			unvme_qpair_destroy(qp[q]);
	}
	for (int i = 0; i < n; i++)
		unvme_ctrlr_close(c[i]);
	return failures ? 1 : 0;
}

/* Submits n reads, then hands control to fault(); checks every callback got an error. */
struct inflight {
	struct slot s[64];
	int n;
};

static int submit_reads(struct unvme_ns *ns, struct unvme_qpair *qp, struct inflight *f, int n)
{
	f->n = n;
	for (int i = 0; i < n; i++) {
		f->s[i].buf = unvme_dma_alloc(unvme_ns_lba_size(ns), 4096);
		f->s[i].done = 0;
		f->s[i].lba = (uint64_t)i * 8;
		if (unvme_read(ns, qp, f->s[i].buf, f->s[i].lba, 1, slot_cb, &f->s[i]))
			return -1;
	}
	unvme_qpair_ring(qp);
	return 0;
}

/* How many of the in-flight commands have completed, and how many of those with an error. */
static void tally(struct inflight *f, int *done, int *errors)
{
	*done = *errors = 0;
	for (int i = 0; i < f->n; i++) {
		*done += f->s[i].done;
		*errors += f->s[i].done && f->s[i].status != 0;
	}
}

static void free_inflight(struct inflight *f)
{
	for (int i = 0; i < f->n; i++)
		unvme_dma_free(f->s[i].buf);
}

static int io_works(struct unvme_ctrlr *c, struct unvme_qpair *qp, const char *name)
{
	struct unvme_ns *ns = unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
	return run_pass(ns, qp, 8, 4096, 64, 99, true, name) == 0 &&
	       run_pass(ns, qp, 8, 4096, 64, 99, false, name) == 0;
}

static int cmd_reset_inflight(const char *bdf)
{
	const char *name = "reset-with-io-in-flight";
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	if (unvme_ctrlr_open(bdf, NULL, &c) || unvme_qpair_create(c, NULL, &qp)) {
		FAIL(name, "%s", unvme_errmsg());
		return 1;
	}
	struct unvme_ns *ns = unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
	struct inflight f = {0};
	if (submit_reads(ns, qp, &f, 48)) {
		FAIL(name, "submit: %s", unvme_errmsg());
		return 1;
	}
	/* Do not poll: the device may have done some, the driver has reaped none. */
	int rc = unvme_ctrlr_reset(c);
	int done, errors;
	tally(&f, &done, &errors);
	if (rc)
		FAIL(name, "reset failed: %s", unvme_errmsg());
	else if (done != f.n || errors != f.n)
		FAIL(name, "after the reset %d of %d commands completed, %d with an error", done, f.n, errors);
	else if (!io_works(c, qp, name))
		FAIL(name, "I/O does not work after the reset");
	else
		PASS("%s (%d commands completed with an error status, I/O works after)", name, f.n);
	free_inflight(&f);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	return failures ? 1 : 0;
}

/* BAR0 through sysfs: a second, independent view of the registers, the way a misbehaving
 * controller (or another agent) changes them behind the driver's back. */
static volatile uint32_t *map_bar0(const char *bdf, int *fd)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	*fd = open(path, O_RDWR | O_SYNC);
	if (*fd < 0)
		return NULL;
	void *p = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int cmd_cfs(const char *bdf)
{
	const char *name = "controller-fatal-status";
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 64, .timeout_ms = 2000};
	if (unvme_ctrlr_open(bdf, NULL, &c) || unvme_qpair_create(c, &o, &qp)) {
		FAIL(name, "%s", unvme_errmsg());
		return 1;
	}
	int fd;
	volatile uint32_t *bar = map_bar0(bdf, &fd);
	if (!bar) {
		FAIL(name, "cannot map %s resource0", bdf);
		return 1;
	}
	struct unvme_ns *ns = unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
	struct inflight f = {0};
	/* The controller resets itself and comes back failed: CC.EN off, then on with an admin SQ
	 * address that is not page aligned, which the controller answers with CSTS.CFS. */
	bar[NVME_REG_CC / 4] &= ~NVME_CC_EN;
	for (int i = 0; i < 1000 && (bar[NVME_REG_CSTS / 4] & NVME_CSTS_RDY); i++)
		usleep(1000);
	bar[NVME_REG_ASQ / 4] = 0x123;
	bar[NVME_REG_CC / 4] |= NVME_CC_EN;
	usleep(10000);
	uint32_t csts = bar[NVME_REG_CSTS / 4];
	if (!(csts & NVME_CSTS_CFS)) {
		FAIL(name, "could not make the controller report CFS (CSTS %#x)", csts);
		return 1;
	}
	/* Commands queued now reach a failed controller: they must come back with an error. */
	if (submit_reads(ns, qp, &f, 32)) {
		FAIL(name, "submit: %s", unvme_errmsg());
		return 1;
	}
	/* The driver must notice on its own, by polling, reset the controller, give the pending
	 * commands back with an error and bring the queue back, with no call from us. */
	uint64_t t0 = now_ms();
	int prc = 0, done = 0, errors = 0;
	while (now_ms() - t0 < 10000 && done < f.n) {
		if ((prc = unvme_qpair_poll(qp, 0)) < 0)
			break;
		tally(&f, &done, &errors);
	}
	uint64_t noticed = now_ms() - t0;
	if (prc < 0)
		FAIL(name, "poll failed instead of recovering: %s", unvme_errmsg());
	else if (done != f.n || errors != f.n)
		FAIL(name, "within 10 s %d of %d pending commands completed, %d with an error", done,
		     f.n, errors);
	else if (unvme_ctrlr_reset_count(c) != 1 || unvme_ctrlr_is_failed(c))
		FAIL(name, "automatic resets %u, failed %d", unvme_ctrlr_reset_count(c),
		     unvme_ctrlr_is_failed(c));
	else if (!io_works(c, qp, name))
		FAIL(name, "I/O does not work after the automatic reset");
	else
		PASS("%s (reset by the driver in %" PRIu64 " ms, %d pending commands failed, I/O "
		     "works)", name, noticed, f.n);
	free_inflight(&f);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	munmap((void *)bar, 0x2000);
	close(fd);
	return failures ? 1 : 0;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -e;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int cmd_unbind(const char *bdf)
{
	const char *name = "unbind-with-io-in-flight";
	/* The unbinding process is forked before the controller is opened: a child forked later
	 * would inherit the VFIO file descriptors and the unbind would wait for itself. */
	int go[2];
	if (pipe(go)) {
		FAIL(name, "pipe");
		return 1;
	}
	pid_t child = fork();
	if (child == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		usleep(200000);
		int r = write_file("/sys/bus/pci/drivers/vfio-pci/unbind", bdf);
		_exit(r ? 1 : 0);
	}
	close(go[0]);
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 64, .timeout_ms = 2000};
	if (unvme_ctrlr_open(bdf, NULL, &c) || unvme_qpair_create(c, &o, &qp)) {
		FAIL(name, "%s", unvme_errmsg());
		kill(child, SIGKILL);
		return 1;
	}
	struct unvme_ns *ns = unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
	if (write(go[1], "g", 1) != 1)
		FAIL(name, "cannot start the unbinding process");
	close(go[1]);
	/* Keep 32 reads in flight until the driver says the device is gone. */
	struct slot s[32] = {0};
	uint32_t bs = unvme_ns_lba_size(ns);
	for (int i = 0; i < 32; i++) {
		s[i].buf = unvme_dma_alloc(bs, 4096);
		s[i].done = 1;
	}
	uint64_t t0 = now_ms(), ios = 0;
	int prc = 0;
	while (now_ms() - t0 < 15000) {
		for (int i = 0; i < 32; i++) {
			if (!s[i].done)
				continue;
			ios++;
			s[i].done = 0;
			s[i].lba = (ios * 7) % 1024;
			if (unvme_read(ns, qp, s[i].buf, s[i].lba, 1, slot_cb, &s[i]))
				s[i].done = 1;
		}
		if ((prc = unvme_qpair_poll(qp, 0)) < 0)
			break;
	}
	if (prc >= 0) {
		FAIL(name, "I/O went on for 15 s after the unbind");
	} else {
		printf("# driver reported after %" PRIu64 " I/Os: %s\n", ios, unvme_errmsg());
		/* the poll that said so gave the commands back: the device is disabled or gone */
		int pending = 0, errors = 0;
		for (int i = 0; i < 32; i++) {
			pending += !s[i].done;
			errors += s[i].done && s[i].status != 0;
		}
		unvme_qpair_destroy(qp);
		qp = NULL;
		unvme_ctrlr_close(c);
		c = NULL;
		int st = -1;
		signal(SIGALRM, on_alarm);
		alarm(20);
		waitpid(child, &st, 0);
		alarm(0);
		if (pending)
			FAIL(name, "%d commands never completed", pending);
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			FAIL(name, "the unbind did not finish after the controller was closed");
		else
			PASS("%s (%d in-flight commands completed with an error, device released)", name,
			     errors);
	}
	for (int i = 0; i < 32; i++)
		unvme_dma_free(s[i].buf);
	if (qp)
		unvme_qpair_destroy(qp);
	if (c)
		unvme_ctrlr_close(c);
	/* Give the device back to vfio-pci for the tests that follow. */
	write_file("/sys/bus/pci/drivers_probe", bdf);
	return failures ? 1 : 0;
}

/* A line for the host (scripts/qemu/hotplug_agent.py) on the serial console, whatever our
 * stdout is. */
static void tell_host(const char *what)
{
	int fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
	if (fd < 0)
		fd = open("/dev/console", O_WRONLY | O_NOCTTY);
	char line[64];
	int n = snprintf(line, sizeof(line), "\nUNVME-HOTPLUG %s\n", what);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		printf("# cannot write to the console\n");
	if (fd >= 0)
		close(fd);
	printf("# asked the host: %s\n", what);
}

static bool path_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

struct hp_heard {
	volatile int removed, arrived, status;
	char serial[21];
};

static void hp_listen(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	(void)c;
	struct hp_heard *h = arg;
	if (ev->type == UNVME_EVENT_REMOVED)
		__atomic_add_fetch(&h->removed, 1, __ATOMIC_SEQ_CST);
	if (ev->type == UNVME_EVENT_ARRIVED) {
		memcpy(h->serial, ev->serial, sizeof(h->serial));
		h->status = ev->status;
		__atomic_add_fetch(&h->arrived, 1, __ATOMIC_SEQ_CST);
	}
}

static int cmd_hotplug(const char *bdf)
{
	const char *name = "hotplug-pcie-removal-and-reinsertion";
	char dev_dir[128];
	snprintf(dev_dir, sizeof(dev_dir), "/sys/bus/pci/devices/%s", bdf);
	/* the device that comes back should not be taken by the kernel's nvme driver first */
	if (write_file("/sys/bus/pci/drivers_autoprobe", "0"))
		printf("# cannot switch autoprobe off: %s\n", strerror(errno));
	struct unvme_ctrlr *c;
	struct unvme_qpair *qp;
	struct unvme_qpair_opts o = {.depth = 64, .timeout_ms = 2000};
	struct hp_heard h = {0};
	if (unvme_ctrlr_open(bdf, NULL, &c) || unvme_qpair_create(c, &o, &qp) ||
	    unvme_ctrlr_add_event_cb(c, hp_listen, &h)) {
		FAIL(name, "%s", unvme_errmsg());
		write_file("/sys/bus/pci/drivers_autoprobe", "1");
		return 1;
	}
	struct unvme_ns *ns = unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c));
	uint32_t bs = unvme_ns_lba_size(ns);
	enum { N = 64, QD = 16 };
	void *b = unvme_dma_alloc(bs, 4096);
	for (uint64_t lba = 0; lba < N; lba++) {
		fill(b, bs, 0x77, lba);
		if (unvme_write_sync(ns, qp, b, lba, 1)) {
			FAIL(name, "writing the data before the removal: %s", unvme_errmsg());
			goto out;
		}
	}
	/* reads of the written blocks in flight, checked, until the device is gone */
	struct slot s[QD] = {0};
	for (int i = 0; i < QD; i++) {
		s[i].buf = unvme_dma_alloc(bs, 4096);
		s[i].done = 1;
	}
	uint64_t t0 = now_ms(), ios = 0, bad = 0, errors = 0;
	bool asked = false;
	while (now_ms() - t0 < 90000) {
		for (int i = 0; i < QD && !h.removed; i++) {
			if (!s[i].done)
				continue;
			if (ios >= QD) { /* a completion: check what came back */
				if (s[i].status)
					errors++;
				else if (!check(s[i].buf, bs, 0x77, s[i].lba))
					bad++;
			}
			ios++;
			s[i].done = 0;
			s[i].lba = (ios * 13) % N;
			if (unvme_read(ns, qp, s[i].buf, s[i].lba, 1, slot_cb, &s[i]))
				s[i].done = 1;
		}
		int prc = unvme_qpair_poll(qp, 0);
		if (!asked && now_ms() - t0 > 300) {
			tell_host("del");
			asked = true;
		}
		if (h.removed && prc < 0)
			break;
	}
	int pending = 0;
	for (int i = 0; i < QD; i++)
		pending += !s[i].done;
	if (!h.removed) {
		FAIL(name, "no REMOVED event within 90 s of device_del (%" PRIu64 " I/Os)", ios);
		goto out_slots;
	}
	if (pending || bad) {
		FAIL(name, "%d commands never came back, %" PRIu64 " reads returned wrong data", pending, bad);
		goto out_slots;
	}
	int rc = unvme_read_sync(ns, qp, b, 0, 1);
	printf("# removed after %" PRIu64 " I/Os (%" PRIu64 " came back with an error); a read now: %d (%s)\n",
	       ios, errors, rc, unvme_errmsg());
	if (rc != -ENODEV) {
		FAIL(name, "a read after the removal returned %d, not -ENODEV", rc);
		goto out_slots;
	}
	uint64_t t1 = now_ms();
	while (path_exists(dev_dir) && now_ms() - t1 < 30000)
		usleep(100000);
	if (path_exists(dev_dir)) {
		FAIL(name, "the kernel did not remove %s within 30 s (the driver kept it?)", bdf);
		goto out_slots;
	}
	PASS("hotplug-removal (%" PRIu64 " I/Os, %" PRIu64 " failed, none lost; the kernel removed the device)",
	     ios, errors);
	tell_host("add");
	t1 = now_ms();
	while (!path_exists(dev_dir) && now_ms() - t1 < 60000)
		usleep(100000);
	char p[192], u[192];
	snprintf(p, sizeof(p), "%s/driver_override", dev_dir);
	snprintf(u, sizeof(u), "%s/driver/unbind", dev_dir);
	usleep(500000);
	if (path_exists(u)) /* the kernel's nvme driver took it (autoprobe) */
		write_file(u, bdf);
	if (!path_exists(dev_dir) || write_file(p, "vfio-pci") || write_file("/sys/bus/pci/drivers_probe", bdf)) {
		FAIL(name, "the device did not come back at %s, or cannot be bound to vfio-pci", bdf);
		goto out_slots;
	}
	t1 = now_ms();
	while (!h.arrived && now_ms() - t1 < 30000)
		usleep(10000);
	if (!h.arrived || h.status) {
		FAIL(name, "no ARRIVED event (or a failed attach, %d) within 30 s", h.status);
		goto out_slots;
	}
	printf("# attached again in %" PRIu64 " ms after the bind, serial %s\n", now_ms() - t1, h.serial);
	/* the same queue pair, re-created by its owner at its next use */
	uint64_t wrong = 0;
	for (uint64_t lba = 0; lba < N; lba++) {
		uint64_t t2 = now_ms();
		while ((rc = unvme_read_sync(ns, qp, b, lba, 1)) == -EAGAIN && now_ms() - t2 < 10000)
			usleep(1000);
		if (rc) {
			FAIL(name, "read of LBA %" PRIu64 " after the re-insertion: %d (%s)", lba, rc, unvme_errmsg());
			goto out_slots;
		}
		wrong += !check(b, bs, 0x77, lba);
	}
	if (wrong)
		FAIL(name, "%" PRIu64 " blocks read back wrong from the drive after the re-insertion", wrong);
	else if (strncmp(h.serial, "unvme-hp2", 9) != 0)
		FAIL(name, "the ARRIVED event names serial '%s', not the replacement's", h.serial);
	else
		PASS("%s (the replacement %s attached by the driver, the data read back through the same queue pair)",
		     name, h.serial);
out_slots:
	for (int i = 0; i < QD; i++)
		unvme_dma_free(s[i].buf);
out:
	unvme_dma_free(b);
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(c);
	write_file("/sys/bus/pci/drivers_autoprobe", "1");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s io BDF... | reset-inflight BDF | cfs BDF | unbind BDF | hotplug BDF\n",
			argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "io") == 0)
		return cmd_io(argc - 2, argv + 2);
	if (strcmp(argv[1], "reset-inflight") == 0)
		return cmd_reset_inflight(argv[2]);
	if (strcmp(argv[1], "cfs") == 0)
		return cmd_cfs(argv[2]);
	if (strcmp(argv[1], "unbind") == 0)
		return cmd_unbind(argv[2]);
	if (strcmp(argv[1], "hotplug") == 0)
		return cmd_hotplug(argv[2]);
	fprintf(stderr, "unknown test %s\n", argv[1]);
	return 2;
}
