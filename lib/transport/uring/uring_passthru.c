/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The io_uring passthrough transport: NVMe namespaces the kernel keeps, reached through their
 * generic character devices (/dev/ngXnY, Linux 5.19+), which carry any I/O command, the KV
 * and zoned command sets included, with no block layer in the way.
 *
 *   I/O     one io_uring per queue pair with 128-byte SQEs and 32-byte CQEs; each command is
 *           an IORING_OP_URING_CMD (NVME_URING_CMD_IO) on a registered file, its data in a
 *           registered buffer when the kernel has IORING_URING_CMD_FIXED (6.1); completions
 *           are polled (IOPOLL) when the namespace's queue has poll queues, else they come by
 *           interrupt and are read from the CQ ring. The tracker index travels as user_data.
 *   admin   NVME_IOCTL_ADMIN64_CMD on the controller's character device (/dev/nvmeX), or on
 *           the namespace's device when the controller's cannot be opened (the kernel
 *           forwards admin ioctls); Identify and namespace discovery go through it.
 *
 * /dev/ngXnY opens the controller with that one namespace; /dev/nvmeX opens it with every
 * namespace that has a generic device. The kernel keeps the controller: no register access,
 * no queue creation, its own timeouts (our per-command timeout is passed down to it) and its
 * own recovery; unvme_ctrlr_reset asks it for a controller reset.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/common/env.h"
#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "uring_kdev.h"
#include "uring_map.h"
#include "uring_ring.h"

#define DRAIN_LIMIT_MS (5u * 60u * 1000u)

struct pt_dev {
	char name[64];                   /* "ng0n1" or "nvme0", for messages */
	char ctrl[32];                   /* "nvme0" */
	int admin_fd;
	bool admin_own;                  /* admin_fd is not one of fds */
	int fds[URING_MAX_FILES];
	uint32_t nsids[URING_MAX_FILES];
	char ngnames[URING_MAX_FILES][32];
	unsigned nns;
	bool iopoll;
	bool fixedbufs;
	bool probed;                     /* registered buffers tried on this kernel */
	struct uring_bufgen gen;
};

static inline bool qp_busy(const struct unvme_qpair *qp)
{
	return atomic_load_explicit(&qp->nsubmitted, memory_order_relaxed) !=
	       atomic_load_explicit(&qp->ncompleted, memory_order_relaxed);
}

static int pt_matches(const char *address)
{
	struct kdev_addr a;
	if (!kdev_addr_is_kernel(address) || kdev_parse(address, &a) != 0)
		return 0;
	return a.kind == KDEV_NS_CHAR || a.kind == KDEV_CTRL_CHAR;
}

/* Linux 6.1 added registered buffers for passthrough (IORING_URING_CMD_FIXED). */
static bool kernel_at_least(unsigned major, unsigned minor)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static int add_ns(struct pt_dev *d, const char *devname)
{
	if (d->nns == URING_MAX_FILES)
		return unvme_fail(-E2BIG, "%s: more than %u namespaces", d->name, URING_MAX_FILES);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/dev/%s", devname);
	int fd = kdev_open(path, O_RDWR);
	if (fd < 0)
		return fd;
	int nsid = kdev_nsid(fd);
	if (nsid <= 0) {
		close(fd);
		int err = nsid < 0 ? -nsid : EINVAL;
		return unvme_fail(-ENODEV, "%s: not an NVMe namespace (NVME_IOCTL_ID: %s): %s", path,
				  strerror(err), uring_map_errno_advice(err));
	}
	d->fds[d->nns] = fd;
	d->nsids[d->nns] = (uint32_t)nsid;
	kdev_copy(d->ngnames[d->nns], sizeof(d->ngnames[0]), devname);
	d->nns++;
	return 0;
}

/* /dev/nvmeX: the generic devices of its namespaces, in NSID order. */
static int add_ctrl_namespaces(struct pt_dev *d)
{
	DIR *dir = opendir("/sys/class/nvme-generic");
	if (!dir)
		return unvme_fail(-ENODEV, "%s: /sys/class/nvme-generic is missing: the kernel has no "
				  "NVMe generic devices (Linux 5.13+; passthrough needs 5.19)", d->name);
	char names[URING_MAX_FILES][64];
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) && n < URING_MAX_FILES) {
		char ctrl[32];
		if (e->d_name[0] == '.' || kdev_ctrl_of(e->d_name, ctrl, sizeof(ctrl)) != 0 ||
		    strcmp(ctrl, d->ctrl) != 0)
			continue;
		snprintf(names[n++], sizeof(names[0]), "%.63s", e->d_name);
	}
	closedir(dir);
	for (unsigned i = 0; i < n; i++) {
		int rc = add_ns(d, names[i]);
		if (rc)
			return rc;
	}
	if (!d->nns)
		return unvme_fail(-ENODEV, "/dev/%s: the kernel shows no namespace with a generic "
				  "device (/dev/ngXnY) on this controller", d->ctrl);
	/* NSID order, so file index 0 is the first namespace */
	for (unsigned i = 1; i < d->nns; i++)
		for (unsigned j = i; j > 0 && d->nsids[j - 1] > d->nsids[j]; j--) {
			uint32_t t = d->nsids[j];
			d->nsids[j] = d->nsids[j - 1];
			d->nsids[j - 1] = t;
			int f = d->fds[j];
			d->fds[j] = d->fds[j - 1];
			d->fds[j - 1] = f;
			char nm[sizeof(d->ngnames[0])];
			memcpy(nm, d->ngnames[j], sizeof(nm));
			memcpy(d->ngnames[j], d->ngnames[j - 1], sizeof(nm));
			memcpy(d->ngnames[j - 1], nm, sizeof(nm));
		}
	return 0;
}

static void pt_free(struct pt_dev *d)
{
	for (unsigned i = 0; i < d->nns; i++)
		close(d->fds[i]);
	if (d->admin_own && d->admin_fd >= 0)
		close(d->admin_fd);
	free(d);
}

static void set_limits(struct unvme_ctrlr *c, const char *blk)
{
	/* The kernel maps a passthrough buffer into one request: its hardware limits apply. */
	long kb = kdev_queue_attr(blk, "max_hw_sectors_kb");
	long segs = kdev_queue_attr(blk, "max_segments");
	uint64_t lim = 2u << 20;
	if (kb > 0 && (uint64_t)kb * 1024 < lim)
		lim = (uint64_t)kb * 1024;
	if (segs > 0 && (uint64_t)segs * 4096 < lim)
		lim = (uint64_t)segs * 4096; /* worst case: one page per segment */
	if (!c->xfer_limit || lim < c->xfer_limit)
		c->xfer_limit = (uint32_t)lim;
}

static int pt_attach(struct unvme_ctrlr *c, const char *address)
{
	struct kdev_addr a;
	int rc = kdev_parse(address, &a);
	if (rc)
		return rc;
	struct pt_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->admin_fd = -1;
	const char *base = strrchr(a.path, '/') + 1;
	snprintf(d->name, sizeof(d->name), "%s", base);
	if (a.kind == KDEV_NS_CHAR) {
		rc = add_ns(d, base);
		if (rc == 0 && kdev_ctrl_of(base, d->ctrl, sizeof(d->ctrl)) != 0)
			d->ctrl[0] = '\0'; /* no sysfs: admin through the namespace's device */
	} else {
		snprintf(d->ctrl, sizeof(d->ctrl), "%s", base);
		rc = add_ctrl_namespaces(d);
	}
	if (rc) {
		pt_free(d);
		return rc;
	}
	if (d->ctrl[0]) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "/dev/%s", d->ctrl);
		d->admin_fd = open(path, O_RDWR | O_CLOEXEC);
		d->admin_own = d->admin_fd >= 0;
		if (d->admin_fd < 0 && a.kind == KDEV_CTRL_CHAR) {
			rc = kdev_open(path, O_RDWR); /* for its message */
			pt_free(d);
			return rc < 0 ? rc : -EIO;
		}
	}
	if (d->admin_fd < 0)
		d->admin_fd = d->fds[0]; /* the kernel forwards admin ioctls from a namespace */

	/* The request queue of each namespace is its block device's: polled completions need
	 * poll queues on every one (nvme.poll_queues), and its limits bound a transfer. */
	bool polls = true;
	for (unsigned i = 0; i < d->nns; i++) {
		char blk[64];
		if (kdev_blockdev_of(d->ngnames[i], d->nsids[i], blk, sizeof(blk)) != 0) {
			polls = false; /* no block device (a command set the block layer lacks) */
			continue;
		}
		polls = polls && kdev_queue_attr(blk, "io_poll") == 1;
		set_limits(c, blk);
	}
	d->iopoll = a.iopoll == KDEV_AUTO ? polls : a.iopoll == KDEV_ON;
	uring_bufgen_init(&d->gen, true);
	d->fixedbufs = a.fixedbufs == KDEV_AUTO ? kernel_at_least(6, 1) : a.fixedbufs == KDEV_ON;

	c->transport_ctx = d;
	c->page_size = 4096;
	/* no CAP register: what a queue pair may ask for (io_uring rings up to 32768) */
	c->cap = (uint64_t)(4096 - 1) | (1ull << 16) | ((uint64_t)NVME_CAP_CSS_NVM << 37);
	snprintf(c->transport_info, sizeof(c->transport_info),
		 "io_uring passthrough on %.128s (%u namespace%s), admin through the ioctl on /dev/%s; "
		 "completions %s%s; buffers %s", a.path, d->nns, d->nns == 1 ? "" : "s",
		 d->admin_own ? d->ctrl : d->name,
		 d->iopoll ? "polled (IOPOLL)" : "by interrupt",
		 !d->iopoll && a.iopoll == KDEV_AUTO ? " (no poll queues: nvme.poll_queues=0)" : "",
		 d->fixedbufs ? "registered" : "unregistered");
	return 0;
}

static void pt_detach(struct unvme_ctrlr *c)
{
	pt_free(c->transport_ctx);
	c->transport_ctx = NULL;
}

static int pt_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	(void)ctx, (void)vaddr, (void)iova, (void)len;
	return 0; /* registered lazily, per ring, at first use */
}

static void pt_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct pt_dev *d = ctx;
	uring_bufgen_unmap(&d->gen, iova, len);
}

static void note_gone(struct unvme_ctrlr *c, int err)
{
	if (err == ENODEV || err == ENXIO) {
		atomic_store(&c->gave_up, true); /* nothing to recover here: the kernel tried */
		c->failed = 1;
	}
}

static int pt_admin(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		    struct nvme_cqe *cpl)
{
	struct pt_dev *d = c->transport_ctx;
	int rc = kdev_admin_ioctl(d->admin_fd, d->admin_own ? d->ctrl : d->name, cmd, buf, len,
				  c->opts.admin_timeout_ms, cpl);
	if (rc < 0)
		note_gone(c, -rc);
	return rc;
}

static int pt_ns_usable(struct unvme_ctrlr *c, uint32_t nsid)
{
	struct pt_dev *d = c->transport_ctx;
	for (unsigned i = 0; i < d->nns; i++)
		if (d->nsids[i] == nsid)
			return 1;
	return 0;
}

static int pt_reset(struct unvme_ctrlr *c)
{
	struct pt_dev *d = c->transport_ctx;
	if (!d->admin_own)
		return unvme_fail(-EOPNOTSUPP, "%s: a controller reset needs the controller's device "
				  "/dev/%s, which could not be opened", d->name,
				  d->ctrl[0] ? d->ctrl : "nvmeX");
	if (ioctl(d->admin_fd, NVME_IOCTL_RESET) != 0) {
		int err = errno;
		return unvme_fail(-err, "/dev/%s: controller reset: %s: %s", d->ctrl, strerror(err),
				  uring_map_errno_advice(err));
	}
	atomic_store(&c->gave_up, false);
	return 0;
}

/* Does this kernel take registered buffers for passthrough (IORING_URING_CMD_FIXED, 6.1)? A
 * kernel that does not refuses every such command with EINVAL; so one read of block 0 through
 * a registered buffer, on the first queue pair, decides for the controller. */
static void probe_fixedbufs(struct unvme_qpair *qp, struct pt_dev *d, struct uring_q *q)
{
	d->probed = true;
	struct unvme_ns *ns = unvme_ctrlr_ns(qp->ctrlr, d->nsids[0]);
	uint32_t bytes = ns ? unvme_ns_lba_size(ns) : 4096;
	void *buf = unvme_dma_alloc(bytes, 4096);
	int bi = buf ? uring_q_buf(q, buf, bytes) : -1;
	struct io_uring_sqe *sqe = bi >= 0 ? uring_q_sqe(q) : NULL;
	struct nvme_sqe cmd = { .opc = NVME_CMD_READ, .nsid = d->nsids[0] };
	if (!sqe || uring_map_cmd(&cmd, buf, bytes, d->nsids[0], 0,
				  (struct nvme_uring_cmd *)(void *)sqe->cmd) != 0) {
		unvme_dma_free(buf);
		return;
	}
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = q->fixed_files ? IOSQE_FIXED_FILE : 0;
	sqe->ioprio = 0;
	sqe->fd = q->fixed_files ? 0 : q->fds[0];
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->__pad1 = 0;
	sqe->addr = 0;
	sqe->len = 0;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->user_data = UINT64_MAX;
	sqe->buf_index = (uint16_t)bi;
	sqe->personality = 0;
	sqe->file_index = 0;
	uring_q_publish(q);
	int res = 0;
	for (uint64_t deadline = mono_ms_coarse() + 30000; mono_ms_coarse() < deadline;) {
		io_uring_enter((unsigned)q->ring.ring_fd, 1, 1, IORING_ENTER_GETEVENTS, NULL);
		struct io_uring_cqe *cqe = uring_q_cqe(q);
		if (cqe) {
			res = cqe->res;
			uring_q_cqe_done(q);
			break;
		}
	}
	unvme_dma_free(buf);
	if (res == -EINVAL || res == -EFAULT || res == -EOPNOTSUPP) {
		d->fixedbufs = false;
		q->bufs_on = false;
		size_t l = strlen(qp->ctrlr->transport_info);
		snprintf(qp->ctrlr->transport_info + l, sizeof(qp->ctrlr->transport_info) - l,
			 " (refused by this kernel for passthrough: unregistered)");
	}
}

static int pt_qp_create(struct unvme_qpair *qp)
{
	struct pt_dev *d = qp->ctrlr->transport_ctx;
	struct uring_q *q = aligned_alloc(_Alignof(struct uring_q), sizeof(*q));
	if (!q)
		return -ENOMEM;
	struct uring_q_opts o = {
		.entries = qp->depth,
		.passthru = true,
		.iopoll = d->iopoll,
		.fixedbufs = d->fixedbufs,
		.fds = d->fds,
		.nfds = d->nns,
		.gen = &d->gen,
		.qid = qp->qid,
	};
	int rc = uring_q_init(q, &o);
	if (rc) {
		free(q);
		return rc;
	}
	q->timeout_ms = qp->timeout_ms;
	memcpy(q->nsids, d->nsids, sizeof(d->nsids));
	if (q->bufs_on && !d->probed)
		probe_fixedbufs(qp, d, q);
	qp->mctx = q;
	return 0;
}

static int pt_qp_poll(struct unvme_qpair *qp, uint32_t max);

static void pt_qp_destroy(struct unvme_qpair *qp)
{
	struct uring_q *q = qp->mctx;
	/* The kernel cannot take a passthrough command back, and its data buffer is the caller's:
	 * wait for every command (the kernel's own timeout bounds each), then free the ring. */
	uint64_t deadline = mono_ms_coarse() + DRAIN_LIMIT_MS;
	while (qp_busy(qp) && mono_ms_coarse() < deadline) {
		if (pt_qp_poll(qp, 0) == 0)
			sched_yield();
	}
	if (qp_busy(qp)) {
		if (unvme_log_on())
			fprintf(stderr, "unvme: queue %u: %u commands still in the kernel after %u s; "
				"the ring is left open so that they cannot complete into freed memory\n",
				qp->qid, unvme_qpair_outstanding(qp), DRAIN_LIMIT_MS / 1000);
		return;
	}
	uring_q_fini(q);
	free(q);
}

static inline unsigned file_of(const struct uring_q *q, uint32_t nsid)
{
	for (unsigned i = 1; i < q->nfds; i++)
		if (q->nsids[i] == nsid)
			return i;
	return 0; /* the only (or first) namespace; uring_map_cmd checks the NSID */
}

static int pt_qp_submit(struct unvme_qpair *qp, uint16_t cid, const struct nvme_sqe *cmd,
			void *buf, size_t len)
{
	struct uring_q *q = qp->mctx;
	unsigned fi = q->nfds > 1 ? file_of(q, cmd->nsid) : 0;
	struct io_uring_sqe *sqe = uring_q_sqe(q);
	if (__builtin_expect(!sqe, 0))
		return -EAGAIN;
	int rc = uring_map_cmd(cmd, buf, len, q->nsids[fi], q->timeout_ms,
			       (struct nvme_uring_cmd *)(void *)sqe->cmd);
	if (__builtin_expect(rc != 0, 0))
		return rc;
	int bi = uring_q_buf(q, buf, len);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = q->fixed_files ? IOSQE_FIXED_FILE : 0;
	sqe->ioprio = 0;
	sqe->fd = q->fixed_files ? (int)fi : q->fds[fi];
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->__pad1 = 0;
	sqe->addr = 0;
	sqe->len = 0;
	sqe->uring_cmd_flags = bi >= 0 ? IORING_URING_CMD_FIXED : 0;
	sqe->user_data = cid;
	sqe->buf_index = (uint16_t)(bi >= 0 ? bi : 0);
	sqe->personality = 0;
	sqe->file_index = 0;
	uring_q_publish(q);
	return 0;
}

static void pt_qp_ring(struct unvme_qpair *qp)
{
	uring_q_ring(qp->mctx);
}

/* A command the kernel failed: say why on the polling thread, where its callback runs. */
/* The opcode of command cid; acquire: a split queue's submitter wrote it before it made the
 * tracker ACTIVE (release). */
static uint8_t opc_of(const struct unvme_qpair *qp, uint16_t cid)
{
	if (cid >= qp->depth - 1u ||
	    atomic_load_explicit(&qp->reqs[cid].state, memory_order_acquire) == REQ_FREE)
		return 0;
	return qp->reqs[cid].opc;
}

static void kernel_refused(struct unvme_qpair *qp, uint16_t cid, int32_t res)
{
	uint8_t opc = opc_of(qp, cid);
	unvme_fail(res, "queue %u: the kernel failed command 0x%02x: %s: %s", qp->qid, opc,
		   strerror(-res), uring_map_errno_advice(-res));
	note_gone(qp->ctrlr, -res);
}

static int pt_qp_poll(struct unvme_qpair *qp, uint32_t max)
{
	struct uring_q *q = qp->mctx;
	uring_q_kick(q, qp_busy(qp));
	uint32_t n = 0;
	struct io_uring_cqe *cqe;
	while ((max == 0 || n < max) && (cqe = uring_q_cqe(q)) != NULL) {
		uint16_t cid = (uint16_t)cqe->user_data;
		int32_t res = cqe->res;
		uint64_t result = cqe->big_cqe[0];
		uring_q_cqe_done(q); /* first: the callback may poll again */
		struct nvme_cqe cpl;
		if (__builtin_expect(res < 0, 0)) {
			bool write = opc_of(qp, cid) & 1u;
			uring_map_cqe(res, result, qp->qid, cid, write, &cpl);
			kernel_refused(qp, cid, res);
		} else {
			uring_map_cqe(res, result, qp->qid, cid, false, &cpl);
		}
		qpair_complete(qp, &cpl);
		n++;
	}
	return (int)n;
}

static const struct unvme_msg_ops pt_msg_ops = {
	.admin = pt_admin,
	.ns_usable = pt_ns_usable,
	.reset = pt_reset,
	.qp_create = pt_qp_create,
	.qp_destroy = pt_qp_destroy,
	.qp_submit = pt_qp_submit,
	.qp_ring = pt_qp_ring,
	.qp_poll = pt_qp_poll,
};

static const struct unvme_transport_ops uring_passthru_ops = {
	.attach = pt_attach,
	.detach = pt_detach,
	.dma_map = pt_dma_map,
	.dma_unmap = pt_dma_unmap,
	.msg = &pt_msg_ops,
};

static const struct unvme_transport unvme_transport_uring_passthru = {
	.name = "uring-passthru",
	.shape = kdev_addr_is_kernel,
	.explain = kdev_explain,
	.kind = UNVME_TRANSPORT_MESSAGE,
	.rank = 60,
	.matches = pt_matches,
	.ops = &uring_passthru_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_uring_passthru);
