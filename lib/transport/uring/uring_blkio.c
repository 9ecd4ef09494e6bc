/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe commands on a block device or a regular file, through one io_uring per queue pair.
 *
 *   Read / Write      IORING_OP_READ/WRITE(_FIXED) at slba x block size, O_DIRECT when the
 *                     file system allows it; FUA writes carry RWF_DSYNC
 *   Flush             IORING_OP_FSYNC (fdatasync)
 *   Write Zeroes      IORING_OP_FALLOCATE: zero range on a block device, punch hole in a file
 *   Dataset Mgmt      Deallocate: one punch (discard) per range; without it, hints: success
 *   Compare / Verify  a read into a bounce buffer, compared with the command's data (Compare
 *                     Failure on a difference); on an NVMe block device the passthrough ioctl
 *                     sends the real command instead when the kernel allows it
 *   anything else     an NVMe block device: the passthrough ioctl (synchronously); a file:
 *                     Invalid Command Opcode, as from a controller without the command
 * The checks a controller makes first are made here (NSID, LBA range): their statuses are the
 * device's. Results the host produces at submission (those statuses, an ioctl's) complete
 * through the ring's local queue at the next poll, so callbacks still run only in polls.
 * With IOPOLL only reads and writes may enter the ring; flushes and fallocates then run
 * synchronously at submission.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/nvme_ioctl.h>

#include "lib/common/env.h"
#include "lib/common/clock.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "uring_blkio.h"
#include "uring_kdev.h"
#include "uring_map.h"

#define DRAIN_LIMIT_MS (5u * 60u * 1000u)

enum blk_kind { K_RW, K_SYNC, K_COMPARE, K_VERIFY, K_MULTI };

struct blk_cmd {
	/* Written by the submitter, read by the poller after the kernel completed the command:
	 * the kernel orders the two, but a split queue's threads need their own edge (for TSan
	 * too): the submitter publishes with a release store of seq, the poller acquires it. */
	_Atomic uint32_t seq;
	uint8_t kind;
	uint8_t write;
	uint16_t pending;    /* K_MULTI: completions still to come */
	int status;          /* K_MULTI: the first error */
	uint32_t expect;     /* bytes a read or write must move */
	void *bounce;        /* K_COMPARE / K_VERIFY: what was read */
	const void *cmp;     /* K_COMPARE: the command's data */
};

struct blk_q {
	struct blk_dev *d;
	struct blk_cmd cmds[];
};

static inline bool qp_busy(const struct unvme_qpair *qp)
{
	return atomic_load_explicit(&qp->nsubmitted, memory_order_relaxed) !=
	       atomic_load_explicit(&qp->ncompleted, memory_order_relaxed);
}

static inline void cmd_ready(struct blk_cmd *bc)
{
	atomic_store_explicit(&bc->seq, atomic_load_explicit(&bc->seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Describes command cid for its completion (the submitter's side). */
static inline struct blk_cmd *cmd_set(struct blk_q *bq, uint16_t cid, uint8_t kind, bool write,
				      uint16_t pending, uint32_t expect, void *bounce,
				      const void *cmp)
{
	struct blk_cmd *bc = &bq->cmds[cid];
	bc->kind = kind;
	bc->write = write;
	bc->pending = pending;
	bc->status = 0;
	bc->expect = expect;
	bc->bounce = bounce;
	bc->cmp = cmp;
	cmd_ready(bc);
	return bc;
}

static inline struct blk_cmd *cmd_get(struct blk_q *bq, uint16_t cid)
{
	struct blk_cmd *bc = &bq->cmds[cid];
	(void)atomic_load_explicit(&bc->seq, memory_order_acquire);
	return bc;
}

static void local_done(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid, int status,
		       uint32_t dw0)
{
	struct nvme_cqe cpl;
	uring_map_local_cqe(status, dw0, qp->qid, cid, &cpl);
	uring_q_local_push(q, &cpl);
}

static inline struct io_uring_sqe *prep(struct uring_q *q, int op, const void *addr,
					unsigned len, uint64_t off, uint16_t cid)
{
	struct io_uring_sqe *sqe = uring_q_sqe(q);
	if (!sqe)
		return NULL;
	io_uring_prep_rw(op, sqe, q->fixed_files ? 0 : q->fds[0], addr, len, off);
	if (q->fixed_files)
		sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = cid;
	return sqe;
}

/* A synchronous syscall's result (IOPOLL rings take no fsync or fallocate). */
static int sync_status(int rc, bool write)
{
	return rc == 0 ? 0 : uring_map_errno_status(errno, write);
}

static int fallocate_one(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid, int mode,
			 uint64_t off, uint64_t len)
{
	struct blk_q *bq = q->priv;
	if (q->iopoll) {
		int st = sync_status(fallocate(bq->d->fd, mode, (off_t)off, (off_t)len), true);
		struct blk_cmd *bc = &bq->cmds[cid];
		if (bc->kind == K_MULTI) {
			if (st && !bc->status)
				bc->status = st;
			if (--bc->pending == 0)
				local_done(qp, q, cid, bc->status, 0);
		} else {
			local_done(qp, q, cid, st, 0);
		}
		return 0;
	}
	struct io_uring_sqe *sqe = prep(q, IORING_OP_FALLOCATE, NULL, (unsigned)mode, off, cid);
	if (!sqe)
		return -EAGAIN;
	sqe->addr = len;
	uring_q_publish(q);
	return 0;
}

static bool range_ok(const struct blk_dev *d, uint64_t slba, uint64_t nlb)
{
	return slba < d->nlbas && d->nlbas - slba >= nlb;
}

/* Compare and Verify by reading: the data into a bounce buffer, checked at completion. */
static int read_to_check(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid, uint64_t off,
			 uint32_t bytes, const void *cmp)
{
	struct blk_q *bq = q->priv;
	void *bounce = aligned_alloc(4096, ((size_t)bytes + 4095) & ~(size_t)4095);
	if (!bounce)
		return unvme_fail(-ENOMEM, "no memory for a %u-byte compare", bytes);
	struct io_uring_sqe *sqe = prep(q, IORING_OP_READ, bounce, bytes, off, cid);
	if (!sqe) {
		free(bounce);
		return -EAGAIN;
	}
	cmd_set(bq, cid, cmp ? K_COMPARE : K_VERIFY, false, 0, bytes, bounce, cmp);
	uring_q_publish(q);
	return 0;
}

static int rw(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid, const struct nvme_sqe *cmd,
	      void *buf, size_t len)
{
	struct blk_q *bq = q->priv;
	const struct blk_dev *d = bq->d;
	uint64_t slba = cmd->cdw10 | (uint64_t)cmd->cdw11 << 32;
	uint32_t nlb = (cmd->cdw12 & 0xffffu) + 1u;
	if (!range_ok(d, slba, nlb)) {
		local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE), 0);
		return 0;
	}
	uint32_t bytes = nlb << d->lba_shift;
	uint64_t off = slba << d->lba_shift;
	bool has_data = cmd->opc != NVME_CMD_VERIFY;
	if (has_data && (!buf || len < bytes))
		return unvme_fail(-EINVAL, "command 0x%02x of %u blocks needs a %u-byte buffer, got %zu",
				  cmd->opc, nlb, bytes, buf ? len : 0);
	if (cmd->opc == NVME_CMD_COMPARE || cmd->opc == NVME_CMD_VERIFY)
		return read_to_check(qp, q, cid, off, bytes, cmd->opc == NVME_CMD_COMPARE ? buf : NULL);
	bool write = cmd->opc == NVME_CMD_WRITE;
	int bi = uring_q_buf(q, buf, bytes);
	int op = write ? (bi >= 0 ? IORING_OP_WRITE_FIXED : IORING_OP_WRITE)
		       : (bi >= 0 ? IORING_OP_READ_FIXED : IORING_OP_READ);
	struct io_uring_sqe *sqe = prep(q, op, buf, bytes, off, cid);
	if (__builtin_expect(!sqe, 0))
		return -EAGAIN;
	if (bi >= 0)
		sqe->buf_index = (uint16_t)bi;
	if (write && (cmd->cdw12 & NVME_RW_FUA))
		sqe->rw_flags = RWF_DSYNC;
	cmd_set(bq, cid, K_RW, write, 0, bytes, NULL, NULL);
	uring_q_publish(q);
	return 0;
}

static int dsm(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid, const struct nvme_sqe *cmd,
	       void *buf, size_t len)
{
	struct blk_q *bq = q->priv;
	const struct blk_dev *d = bq->d;
	if (!(cmd->cdw11 & NVME_DSM_ATTR_AD) || !d->can_punch) {
		/* access hints only, or a device that keeps everything: nothing to do */
		local_done(qp, q, cid, 0, 0);
		return 0;
	}
	unsigned nr = (cmd->cdw10 & 0xffu) + 1u;
	if (!buf || len < nr * sizeof(struct nvme_dsm_range))
		return unvme_fail(-EINVAL, "Dataset Management with %u ranges needs %zu bytes of "
				  "ranges, got %zu", nr, nr * sizeof(struct nvme_dsm_range), len);
	const struct nvme_dsm_range *r = buf;
	for (unsigned i = 0; i < nr; i++)
		if (!range_ok(d, r[i].slba, r[i].nlb)) {
			local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE), 0);
			return 0;
		}
	unsigned todo = 0;
	for (unsigned i = 0; i < nr; i++)
		todo += r[i].nlb != 0;
	if (!todo) {
		local_done(qp, q, cid, 0, 0);
		return 0;
	}
	cmd_set(bq, cid, K_MULTI, true, (uint16_t)todo, 0, NULL, NULL);
	if (!q->iopoll && q->sq_entries - (q->tail - *q->sq_khead) < todo)
		uring_q_ring(q); /* the kernel takes the queued SQEs: room for this one's ranges */
	for (unsigned i = 0; i < nr; i++) {
		if (r[i].nlb == 0)
			continue;
		int rc = fallocate_one(qp, q, cid, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       r[i].slba << d->lba_shift, (uint64_t)r[i].nlb << d->lba_shift);
		if (rc)
			return rc;
	}
	return 0;
}

/* What the block layer cannot express: the NVMe passthrough ioctl, synchronously. */
static int passthrough(struct unvme_qpair *qp, struct uring_q *q, uint16_t cid,
		       const struct nvme_sqe *cmd, void *buf, size_t len)
{
	const struct blk_dev *d = ((struct blk_q *)q->priv)->d;
	struct nvme_cqe cpl;
	int rc = kdev_io_ioctl(d->pt_fd, d->name, d->nsid, cmd, buf, len, qp->timeout_ms, &cpl);
	if (rc < 0)
		return rc;
	cpl.sqid = qp->qid;
	cpl.cid = cid;
	uring_q_local_push(q, &cpl);
	return 0;
}

static int blk_qp_submit(struct unvme_qpair *qp, uint16_t cid, const struct nvme_sqe *cmd,
			 void *buf, size_t len)
{
	struct uring_q *q = qp->mctx;
	struct blk_q *bq = q->priv;
	const struct blk_dev *d = bq->d;
	uint8_t opc = cmd->opc;
	bool nvm = opc == NVME_CMD_READ || opc == NVME_CMD_WRITE || opc == NVME_CMD_FLUSH ||
		   opc == NVME_CMD_WRITE_ZEROES || opc == NVME_CMD_DSM ||
		   ((opc == NVME_CMD_COMPARE || opc == NVME_CMD_VERIFY) && d->pt_fd < 0);
	if (!nvm) {
		if (d->pt_fd >= 0)
			return passthrough(qp, q, cid, cmd, buf, len);
		if (d->nvme)
			return unvme_fail(-EOPNOTSUPP, "%s: command 0x%02x needs NVMe passthrough, which "
					  "the kernel refused when the device was opened: %s", d->name,
					  opc, uring_map_errno_advice(EACCES));
		local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE), 0);
		return 0;
	}
	if (cmd->nsid != d->nsid && !(opc == NVME_CMD_FLUSH && cmd->nsid == 0xffffffffu)) {
		local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT), 0);
		return 0;
	}
	if (cmd->flags)
		return unvme_fail(-EINVAL, "command 0x%02x: flags 0x%02x (fused, SGL) are not "
				  "supported on %s", opc, cmd->flags, d->name);
	switch (opc) {
	case NVME_CMD_READ:
	case NVME_CMD_WRITE:
	case NVME_CMD_COMPARE:
	case NVME_CMD_VERIFY:
		return rw(qp, q, cid, cmd, buf, len);
	case NVME_CMD_FLUSH:
		if (q->iopoll) {
			local_done(qp, q, cid, sync_status(fdatasync(d->fd), true), 0);
			return 0;
		} else {
			struct io_uring_sqe *sqe = prep(q, IORING_OP_FSYNC, NULL, 0, 0, cid);
			if (!sqe)
				return -EAGAIN;
			sqe->fsync_flags = IORING_FSYNC_DATASYNC;
			cmd_set(bq, cid, K_SYNC, true, 0, 0, NULL, NULL);
			uring_q_publish(q);
			return 0;
		}
	case NVME_CMD_WRITE_ZEROES: {
		uint64_t slba = cmd->cdw10 | (uint64_t)cmd->cdw11 << 32;
		uint32_t nlb = (cmd->cdw12 & 0xffffu) + 1u;
		if (!range_ok(d, slba, nlb)) {
			local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE), 0);
			return 0;
		}
		if (!d->can_punch) {
			local_done(qp, q, cid, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE), 0);
			return 0;
		}
		cmd_set(bq, cid, K_SYNC, true, 0, 0, NULL, NULL);
		return fallocate_one(qp, q, cid, d->zero_mode, slba << d->lba_shift,
				     (uint64_t)nlb << d->lba_shift);
	}
	default: /* NVME_CMD_DSM */
		return dsm(qp, q, cid, cmd, buf, len);
	}
}

static void blk_qp_ring(struct unvme_qpair *qp)
{
	uring_q_ring(qp->mctx);
}

/* The status of one ring completion of command cid, or -1 while it has more to come. */
static int finish(struct unvme_qpair *qp, struct blk_cmd *bc, int32_t res)
{
	int err = res < 0 ? uring_map_errno_status(res, bc->write) : 0;
	if (res < 0) {
		const struct blk_dev *d = ((struct blk_q *)((struct uring_q *)qp->mctx)->priv)->d;
		unvme_fail(res, "queue %u: %s: %s: %s", qp->qid, d->name, strerror(-res),
			   uring_map_errno_advice(-res));
	}
	switch (bc->kind) {
	case K_RW:
		if (err)
			return err;
		/* a short transfer: the file shrank, or the device stopped */
		return (uint32_t)res == bc->expect ? 0
			: NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
	case K_COMPARE:
	case K_VERIFY: {
		int st = err ? err
			     : (uint32_t)res != bc->expect
				       ? NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ)
			     : bc->cmp && memcmp(bc->bounce, bc->cmp, bc->expect) != 0
				       ? NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE)
				       : 0;
		free(bc->bounce);
		bc->bounce = NULL;
		return st;
	}
	case K_MULTI:
		if (err && !bc->status)
			bc->status = err;
		return --bc->pending ? -1 : bc->status;
	default: /* K_SYNC */
		return err;
	}
}

static int blk_qp_poll(struct unvme_qpair *qp, uint32_t max)
{
	struct uring_q *q = qp->mctx;
	struct blk_q *bq = q->priv;
	uring_q_kick(q, qp_busy(qp));
	uint32_t n = 0;
	struct nvme_cqe cpl;
	while ((max == 0 || n < max) && uring_q_local_pop(q, &cpl)) {
		qpair_complete(qp, &cpl);
		n++;
	}
	struct io_uring_cqe *cqe;
	while ((max == 0 || n < max) && (cqe = uring_q_cqe(q)) != NULL) {
		uint16_t cid = (uint16_t)cqe->user_data;
		int32_t res = cqe->res;
		uring_q_cqe_done(q);
		if (cid >= qp->depth - 1u)
			continue;
		int st = finish(qp, cmd_get(bq, cid), res);
		if (st < 0)
			continue;
		uring_map_local_cqe(st, 0, qp->qid, cid, &cpl);
		qpair_complete(qp, &cpl);
		n++;
	}
	return (int)n;
}

static int blk_qp_create(struct unvme_qpair *qp)
{
	struct blk_dev *d = qp->ctrlr->transport_ctx;
	struct uring_q *q = aligned_alloc(_Alignof(struct uring_q), sizeof(*q));
	struct blk_q *bq = calloc(1, sizeof(*bq) + qp->depth * sizeof(bq->cmds[0]));
	if (!q || !bq) {
		free(q);
		free(bq);
		return unvme_fail(-ENOMEM, "no memory for a queue of depth %u", qp->depth);
	}
	bq->d = d;
	struct uring_q_opts o = {
		/* Dataset Management may take one SQE per range: room for the largest */
		.entries = qp->depth + NVME_DSM_MAX_RANGES,
		.iopoll = d->iopoll,
		.fixedbufs = d->fixedbufs,
		.fds = &d->fd,
		.nfds = 1,
		.gen = &d->gen,
		.qid = qp->qid,
	};
	int rc = uring_q_init(q, &o);
	if (rc) {
		free(q);
		free(bq);
		return rc;
	}
	q->priv = bq;
	q->timeout_ms = qp->timeout_ms;
	qp->mctx = q;
	return 0;
}

static void blk_qp_destroy(struct unvme_qpair *qp)
{
	struct uring_q *q = qp->mctx;
	/* in flight, a read may still land in the caller's buffer: wait for the kernel */
	uint64_t deadline = mono_ms_coarse() + DRAIN_LIMIT_MS;
	while (qp_busy(qp) && mono_ms_coarse() < deadline)
		if (blk_qp_poll(qp, 0) == 0)
			sched_yield();
	if (qp_busy(qp)) {
		if (unvme_log_on())
			fprintf(stderr, "unvme: queue %u: commands still in the kernel after %u s; the "
				"ring is left open\n", qp->qid, DRAIN_LIMIT_MS / 1000);
		return;
	}
	struct blk_q *bq = q->priv;
	uring_q_fini(q);
	free(bq);
	free(q);
}

static int blk_admin(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		     struct nvme_cqe *cpl)
{
	struct blk_dev *d = c->transport_ctx;
	if (d->admin_fd >= 0)
		return kdev_admin_ioctl(d->admin_fd, d->admin_name, cmd, buf, len,
					c->opts.admin_timeout_ms, cpl);
	return uring_ident_admin(&d->ident, cmd, buf, len, cpl);
}

static int blk_ns_usable(struct unvme_ctrlr *c, uint32_t nsid)
{
	const struct blk_dev *d = c->transport_ctx;
	return nsid == d->nsid;
}

static int blk_reset(struct unvme_ctrlr *c)
{
	struct blk_dev *d = c->transport_ctx;
	if (d->is_file)
		return 0; /* nothing runs a file */
	if (!d->admin_own)
		return unvme_fail(-EOPNOTSUPP, "%s: a controller reset needs the controller's device "
				  "(/dev/nvmeX), which could not be opened", d->name);
	if (ioctl(d->admin_fd, NVME_IOCTL_RESET) != 0) {
		int err = errno;
		return unvme_fail(-err, "/dev/%s: controller reset: %s: %s", d->admin_name,
				  strerror(err), uring_map_errno_advice(err));
	}
	return 0;
}

const struct unvme_msg_ops uring_blkio_msg_ops = {
	.admin = blk_admin,
	.ns_usable = blk_ns_usable,
	.reset = blk_reset,
	.qp_create = blk_qp_create,
	.qp_destroy = blk_qp_destroy,
	.qp_submit = blk_qp_submit,
	.qp_ring = blk_qp_ring,
	.qp_poll = blk_qp_poll,
};

void uring_blkio_attach(struct unvme_ctrlr *c, struct blk_dev *d)
{
	uring_bufgen_init(&d->gen, false); /* 2 MiB pieces: the block layer takes any part */
	c->transport_ctx = d;
	c->page_size = 4096;
	c->cap = (uint64_t)(4096 - 1) | (1ull << 16) | ((uint64_t)NVME_CAP_CSS_NVM << 37);
	c->xfer_limit = 2u << 20;
}

void uring_blkio_detach(struct unvme_ctrlr *c)
{
	struct blk_dev *d = c->transport_ctx;
	if (!d)
		return;
	if (d->admin_own && d->admin_fd >= 0)
		close(d->admin_fd);
	if (d->fd >= 0)
		close(d->fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d);
	c->transport_ctx = NULL;
}

int uring_blkio_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	(void)ctx, (void)vaddr, (void)iova, (void)len;
	return 0; /* registered lazily, per ring */
}

void uring_blkio_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct blk_dev *d = ctx;
	uring_bufgen_unmap(&d->gen, iova, len);
}
