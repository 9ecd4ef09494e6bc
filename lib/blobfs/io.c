/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Block I/O for BlobFS on per-thread queue pairs (the multi-queue design: no I/O thread, no
 * queue shared by all readers). Each thread gets one context per mounted file system at its
 * first I/O: a queue pair and a bounce buffer. A thread's contexts are released when it exits
 * (a pthread key destructor); unmount releases the rest and leaves the thread an empty shell
 * that it frees at its next look-up or exit. When the controller grants no more queues, a
 * thread falls back to the file system's one shared queue pair, used under a mutex.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t ctx_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static __thread struct bfs_qctx *t_ctxs BFS_TLS_MODEL;

static void release_ctx_io(struct bfs_qctx *q)
{
	if (q->qp && !q->shared)
		unvme_qpair_destroy(q->qp);
	q->qp = NULL;
	if (q->bounce)
		unvme_dma_free(q->bounce);
	q->bounce = NULL;
}

/* Thread exit: release what unmount has not released already. */
static void thread_exit(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&reg_lock);
	struct bfs_qctx *q = t_ctxs;
	while (q) {
		struct bfs_qctx *next = q->t_next;
		if (!atomic_load(&q->detached)) {
			struct blobfs *fs = q->fs;
			pthread_mutex_lock(&fs->ctx_lock);
			if (q->fs_prev)
				q->fs_prev->fs_next = q->fs_next;
			else
				fs->ctxs = q->fs_next;
			if (q->fs_next)
				q->fs_next->fs_prev = q->fs_prev;
			fs->nctx--;
			pthread_mutex_unlock(&fs->ctx_lock);
			release_ctx_io(q);
		}
		free(q);
		q = next;
	}
	t_ctxs = NULL;
	pthread_mutex_unlock(&reg_lock);
}

static void make_key(void)
{
	pthread_key_create(&ctx_key, thread_exit);
}

struct bfs_qctx *bfs_qctx_get(struct blobfs *fs, int *rc)
{
	/* Look-up: a short list walk, no lock. Shells of unmounted file systems are freed. */
	struct bfs_qctx **pp = &t_ctxs;
	while (*pp) {
		struct bfs_qctx *q = *pp;
		if (atomic_load(&q->detached)) {
			pthread_mutex_lock(&reg_lock);
			*pp = q->t_next;
			pthread_mutex_unlock(&reg_lock);
			free(q);
			continue;
		}
		if (q->fs == fs && q->mount_id == fs->mount_id)
			return q;
		pp = &q->t_next;
	}

	pthread_once(&key_once, make_key);
	struct bfs_qctx *q = calloc(1, sizeof(*q));
	if (!q) {
		*rc = bfs_err(-ENOMEM, "out of memory for a queue context");
		return NULL;
	}
	q->fs = fs;
	q->mount_id = fs->mount_id;
	q->ns = fs->ns;
	struct unvme_qpair_opts qo = { .depth = fs->opts.queue_depth, .timeout_ms = 0 };
	int r = unvme_qpair_create(unvme_ns_ctrlr(fs->ns), &qo, &q->qp);
	if (r != 0) {
		/* Out of queues (or the device refused): share the file system's spare one. */
		q->qp = fs->shared_qp;
		q->shared = &fs->shared_lock;
		if (!q->qp) {
			free(q);
			*rc = bfs_err(r < 0 ? r : -EIO, "cannot create an I/O queue pair: %s",
				      unvme_errmsg());
			return NULL;
		}
	}
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&fs->ctx_lock);
	q->fs_next = fs->ctxs;
	if (fs->ctxs)
		fs->ctxs->fs_prev = q;
	fs->ctxs = q;
	fs->nctx++;
	pthread_mutex_unlock(&fs->ctx_lock);
	q->t_next = t_ctxs;
	t_ctxs = q;
	pthread_mutex_unlock(&reg_lock);
	pthread_setspecific(ctx_key, (void *)1);
	return q;
}

void bfs_qctx_release_all(struct blobfs *fs)
{
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&fs->ctx_lock);
	for (struct bfs_qctx *q = fs->ctxs; q; q = q->fs_next) {
		release_ctx_io(q);
		atomic_store(&q->detached, true);
	}
	fs->ctxs = NULL;
	fs->nctx = 0;
	pthread_mutex_unlock(&fs->ctx_lock);
	pthread_mutex_unlock(&reg_lock);
}

void bfs_qctx_init_standalone(struct bfs_qctx *q, struct unvme_ns *ns, struct unvme_qpair *qp)
{
	memset(q, 0, sizeof(*q));
	q->ns = ns;
	q->qp = qp;
}

void bfs_qctx_fini_standalone(struct bfs_qctx *q)
{
	release_ctx_io(q);
}

uint8_t *bfs_qctx_bounce(struct bfs_qctx *q)
{
	if (!q->bounce)
		q->bounce = unvme_dma_alloc(BFS_BOUNCE, BFS_PAGE);
	if (!q->bounce)
		bfs_err(-ENOMEM, "out of DMA memory for a %u KiB bounce buffer", BFS_BOUNCE >> 10);
	return q->bounce;
}

void bfs_io_lock(struct bfs_qctx *q)
{
	if (q->shared)
		pthread_mutex_lock(q->shared);
}

void bfs_io_unlock(struct bfs_qctx *q)
{
	if (q->shared)
		pthread_mutex_unlock(q->shared);
}

/* ---- batches ---- */

static void batch_done(void *arg, const struct nvme_cqe *cpl)
{
	struct bfs_batch *b = arg;
	int st = NVME_STATUS_FROM_CQE(cpl->status);
	if (st && !b->status)
		b->status = st;
	b->inflight--;
}

void bfs_batch_init(struct bfs_batch *b, struct bfs_qctx *q)
{
	memset(b, 0, sizeof(*b));
	b->q = q;
}

static struct blobfs *ctx_fs(struct bfs_qctx *q)
{
	return q->fs;
}

static uint32_t max_blocks(struct bfs_qctx *q)
{
	uint32_t lba = unvme_ns_lba_size(q->ns);
	uint32_t mx = unvme_ctrlr_max_xfer(unvme_ns_ctrlr(q->ns));
	uint32_t blocks = mx / BFS_BLOCK;
	/* The NLB field holds at most 65536 blocks of the namespace. */
	uint32_t cap = (uint32_t)(65536ull * lba / BFS_BLOCK);
	if (blocks > cap)
		blocks = cap;
	return blocks ? blocks : 1;
}

enum io_op { IO_READ, IO_WRITE, IO_WRITE_FUA, IO_ZERO, IO_DISCARD };

/* A Write with Force Unit Access: durable when it completes, without a Flush of everything
 * else in the device's volatile cache. Built by hand (unvme_write has no flags). */
static int write_fua(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf, uint64_t slba,
		     uint32_t nlb, unvme_cmd_cb cb, void *arg)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_CMD_WRITE;
	cmd.nsid = unvme_ns_id(ns);
	cmd.cdw10 = (uint32_t)slba;
	cmd.cdw11 = (uint32_t)(slba >> 32);
	cmd.cdw12 = (nlb - 1) | NVME_RW_FUA;
	return unvme_qpair_submit(qp, &cmd, (void *)buf, (size_t)nlb * unvme_ns_lba_size(ns), cb, arg);
}

static int submit_one(struct bfs_batch *b, enum io_op op, void *buf, uint64_t blk, uint64_t nblk)
{
	struct bfs_qctx *q = b->q;
	uint32_t lpb = BFS_BLOCK / unvme_ns_lba_size(q->ns);
	uint64_t slba = blk * lpb;
	uint32_t nlb = (uint32_t)(nblk * lpb);
	if (!q->qp)
		return bfs_err(-EIO, "this thread's queue pair was lost with a failed controller");
	for (;;) {
		int rc;
		switch (op) {
		case IO_READ: rc = unvme_read(q->ns, q->qp, buf, slba, nlb, batch_done, b); break;
		case IO_WRITE: rc = unvme_write(q->ns, q->qp, buf, slba, nlb, batch_done, b); break;
		case IO_WRITE_FUA: rc = write_fua(q->ns, q->qp, buf, slba, nlb, batch_done, b); break;
		case IO_ZERO: rc = unvme_write_zeroes(q->ns, q->qp, slba, nlb, batch_done, b); break;
		default: rc = unvme_deallocate(q->ns, q->qp, slba, nlb, batch_done, b); break;
		}
		if (rc == 0) {
			if (!b->inflight)
				b->failed_blk = blk;
			b->inflight++;
			return 0;
		}
		if (rc != -EAGAIN)
			return bfs_err(rc, "cannot submit I/O at block %llu: %s",
				       (unsigned long long)blk, unvme_errmsg());
		/* Queue full: reap some and try again. */
		int p = unvme_qpair_poll(q->qp, 0);
		if (p < 0)
			return bfs_err(p, "polling the queue failed: %s", unvme_errmsg());
	}
}

static int batch_op(struct bfs_batch *b, enum io_op op, void *buf, uint64_t blk, uint64_t nblk)
{
	uint32_t mx = (op == IO_READ || op == IO_WRITE || op == IO_WRITE_FUA) ? max_blocks(b->q)
						       : (uint32_t)(65536ull * unvme_ns_lba_size(b->q->ns) / BFS_BLOCK);
	uint8_t *p = buf;
	struct blobfs *fs = ctx_fs(b->q);
	while (nblk) {
		uint64_t n = nblk < mx ? nblk : mx;
		int rc = submit_one(b, op, p, blk, n);
		if (rc)
			return rc;
		if (fs) {
			if (op == IO_READ) {
				atomic_fetch_add(&fs->st.dev_reads, 1);
				atomic_fetch_add(&fs->st.dev_read_bytes, n * BFS_BLOCK);
			} else if (op == IO_WRITE || op == IO_WRITE_FUA) {
				atomic_fetch_add(&fs->st.dev_writes, 1);
				atomic_fetch_add(&fs->st.dev_write_bytes, n * BFS_BLOCK);
			}
		}
		blk += n;
		nblk -= n;
		if (p)
			p += n * BFS_BLOCK;
	}
	return 0;
}

int bfs_batch_read(struct bfs_batch *b, void *buf, uint64_t blk, uint64_t nblk)
{
	return batch_op(b, IO_READ, buf, blk, nblk);
}

int bfs_batch_write(struct bfs_batch *b, const void *buf, uint64_t blk, uint64_t nblk)
{
	return batch_op(b, IO_WRITE, (void *)buf, blk, nblk);
}

/* The controller failed for good while commands were in flight: deleting the queue pair
 * completes them (their callbacks run, so the batch on the caller's stack is done with),
 * and the context tries to get a new one for later calls. */
static void abandon_qpair(struct bfs_qctx *q)
{
	if (q->shared)
		return;
	struct unvme_ctrlr *c = unvme_ns_ctrlr(q->ns);
	unvme_qpair_destroy(q->qp);
	q->qp = NULL;
	struct unvme_qpair_opts qo = { .depth = q->fs ? q->fs->opts.queue_depth : 0 };
	if (unvme_qpair_create(c, &qo, &q->qp) != 0)
		q->qp = NULL;
}

int bfs_batch_wait(struct bfs_batch *b, const char *what)
{
	unsigned failures = 0;
	while (b->inflight) {
		int p = unvme_qpair_poll(b->q->qp, 0);
		if (p >= 0) {
			failures = 0;
			continue;
		}
		if (!b->status)
			b->status = p;
		/* A reset under way recovers the queue at a later poll; a dead controller never. */
		if (++failures > 100000 && unvme_ctrlr_is_failed(unvme_ns_ctrlr(b->q->ns))) {
			abandon_qpair(b->q);
			b->inflight = 0;
		}
	}
	int st = b->status;
	if (st > 0)
		return bfs_err(-EIO, "%s (from block %llu) failed: %s", what ? what : "I/O",
			       (unsigned long long)b->failed_blk, unvme_status_str(st, NVME_CSI_NVM));
	if (st < 0)
		return bfs_err(st, "%s failed: %s", what ? what : "I/O", unvme_errmsg());
	return 0;
}

static int sync_op(struct bfs_qctx *q, enum io_op op, void *buf, uint64_t blk, uint64_t nblk,
		   const char *what)
{
	struct bfs_batch b;
	bfs_io_lock(q);
	bfs_batch_init(&b, q);
	int rc = batch_op(&b, op, buf, blk, nblk);
	int w = bfs_batch_wait(&b, what);
	bfs_io_unlock(q);
	return rc ? rc : w;
}

int bfs_io_read(struct bfs_qctx *q, void *buf, uint64_t blk, uint64_t nblk, const char *what)
{
	return sync_op(q, IO_READ, buf, blk, nblk, what ? what : "read");
}

int bfs_io_write(struct bfs_qctx *q, const void *buf, uint64_t blk, uint64_t nblk, const char *what)
{
	return sync_op(q, IO_WRITE, (void *)buf, blk, nblk, what ? what : "write");
}

int bfs_io_write_fua(struct bfs_qctx *q, const void *buf, uint64_t blk, uint64_t nblk, const char *what)
{
	return sync_op(q, IO_WRITE_FUA, (void *)buf, blk, nblk, what ? what : "write");
}

int bfs_io_flush(struct bfs_qctx *q)
{
	if (!q->qp)
		return bfs_err(-EIO, "this thread's queue pair was lost with a failed controller");
	bfs_io_lock(q);
	int rc = unvme_flush_sync(q->ns, q->qp);
	bfs_io_unlock(q);
	if (q->fs)
		atomic_fetch_add(&q->fs->st.dev_flushes, 1);
	if (rc > 0)
		return bfs_err(-EIO, "Flush failed: %s", unvme_status_str(rc, NVME_CSI_NVM));
	if (rc < 0)
		return bfs_err(rc, "Flush failed: %s", unvme_errmsg());
	return 0;
}

static bool ctrl_has(struct unvme_ns *ns, uint16_t bit)
{
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(unvme_ns_ctrlr(ns));
	return id && (id->oncs & bit);
}

int bfs_io_zero(struct bfs_qctx *q, uint64_t blk, uint64_t nblk)
{
	if (q->fs)
		atomic_fetch_add(&q->fs->write_gen, 1); /* a data write a commit must flush */
	if (ctrl_has(q->ns, NVME_CTRL_ONCS_WZ)) {
		int rc = sync_op(q, IO_ZERO, NULL, blk, nblk, "Write Zeroes");
		if (rc == 0)
			return 0;
	}
	/* No Write Zeroes (or it failed): write a zeroed bounce buffer. */
	uint8_t *z = bfs_qctx_bounce(q);
	if (!z)
		return -ENOMEM;
	memset(z, 0, BFS_BOUNCE);
	while (nblk) {
		uint64_t n = BFS_MIN(nblk, (uint64_t)BFS_BOUNCE / BFS_BLOCK);
		int rc = bfs_io_write(q, z, blk, n, "zeroing");
		if (rc)
			return rc;
		blk += n;
		nblk -= n;
	}
	return 0;
}

int bfs_io_discard(struct bfs_qctx *q, uint64_t blk, uint64_t nblk)
{
	if (!ctrl_has(q->ns, NVME_CTRL_ONCS_DSM))
		return 0;
	return sync_op(q, IO_DISCARD, NULL, blk, nblk, "Deallocate");
}
