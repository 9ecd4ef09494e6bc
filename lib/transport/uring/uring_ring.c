/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring per queue pair: setup with fallbacks, registered files and buffers, entering the
 * kernel (see uring_ring.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lib/driver/dma.h"
#include "lib/driver/errmsg.h"
#include "uring_ring.h"

void uring_bufgen_init(struct uring_bufgen *g, bool exact)
{
	g->exact = exact;
	g->piece_shift = exact ? 12 : 21;
}

void uring_bufgen_unmap(struct uring_bufgen *g, uint64_t iova, size_t len)
{
	uint64_t piece = 1ull << g->piece_shift, end = iova + len;
	for (uint64_t p = iova & ~(piece - 1); p < end; p += piece)
		atomic_fetch_add_explicit(&g->gen[(p >> g->piece_shift) % URING_BUF_SLOTS], 1,
					  memory_order_relaxed);
}

static int setup_error(int rc, const struct uring_q_opts *o)
{
	switch (-rc) {
	case ENOSYS:
		return unvme_fail(rc, "io_uring is not available: the kernel was built without it");
	case EPERM:
		return unvme_fail(rc, "io_uring is disabled for this process (sysctl "
				  "kernel.io_uring_disabled, or a seccomp filter such as a container's)");
	case ENOMEM:
		return unvme_fail(rc, "cannot set up an io_uring of %u entries: locked memory limit "
				  "reached (raise it with ulimit -l, or use a smaller queue depth)",
				  o->entries);
	case EINVAL:
		if (o->passthru)
			return unvme_fail(-EOPNOTSUPP, "the kernel is too old for NVMe passthrough "
					  "through io_uring (big SQEs and CQEs need Linux 5.19): use the "
					  "block device /dev/nvmeXnY or the VFIO transport");
		return unvme_fail(rc, "io_uring refused a ring of %u entries", o->entries);
	default:
		return unvme_fail(rc, "io_uring setup failed: %s", strerror(-rc));
	}
}

static int ring_setup(struct uring_q *q, const struct uring_q_opts *o)
{
	unsigned base = IORING_SETUP_CQSIZE;
	if (o->passthru)
		base |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	if (o->iopoll)
		base |= IORING_SETUP_IOPOLL;
	/* COOP_TASKRUN: completions are posted when we enter, not by interrupting the thread;
	 * TASKRUN_FLAG: the kernel raises IORING_SQ_TASKRUN when there are some (5.19). */
	unsigned tries[] = { base | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG, base };
	int rc = -EINVAL;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		struct io_uring_params p;
		memset(&p, 0, sizeof(p));
		p.flags = tries[i];
		p.cq_entries = o->entries * 2;
		rc = io_uring_queue_init_params(o->entries, &q->ring, &p);
		if (rc == 0) {
			q->setup_flags = tries[i];
			q->taskrun_flag = (tries[i] & IORING_SETUP_TASKRUN_FLAG) != 0;
			return 0;
		}
		if (rc != -EINVAL)
			break;
	}
	return setup_error(rc, o);
}

int uring_q_init(struct uring_q *q, const struct uring_q_opts *o)
{
	memset(q, 0, sizeof(*q));
	q->ring.ring_fd = -1;
	if (o->nfds > URING_MAX_FILES)
		return unvme_fail(-EINVAL, "too many device files (%u) for one ring", o->nfds);
	int rc = ring_setup(q, o);
	if (rc)
		return rc;
	struct io_uring_sq *sq = &q->ring.sq;
	struct io_uring_cq *cq = &q->ring.cq;
	/* identity SQ index array: SQE i is slot i */
	for (unsigned i = 0; i < sq->ring_entries; i++)
		sq->array[i] = i;
	q->sqes = sq->sqes;
	q->sq_ktail = sq->ktail;
	q->sq_khead = sq->khead;
	q->sq_kflags = sq->kflags;
	q->sq_mask = sq->ring_mask;
	q->sq_entries = sq->ring_entries;
	q->sqe_shift = o->passthru ? 1 : 0;
	q->tail = *sq->ktail;
	q->cqes = cq->cqes;
	q->cq_ktail = cq->ktail;
	q->cq_khead = cq->khead;
	q->cq_mask = cq->ring_mask;
	q->cqe_shift = o->passthru ? 1 : 0;
	q->iopoll = o->iopoll;
	q->qid = o->qid;

	uint32_t lsize = 1;
	while (lsize < o->entries)
		lsize <<= 1;
	q->local = calloc(lsize, sizeof(*q->local));
	if (!q->local) {
		uring_q_fini(q);
		return unvme_fail(-ENOMEM, "no memory for a queue of depth %u", o->entries);
	}
	q->local_mask = lsize - 1;

	q->nfds = o->nfds;
	memcpy(q->fds, o->fds, o->nfds * sizeof(int));
	/* Registered files spare the kernel a file table look-up and reference per command; a
	 * kernel that refuses keeps plain descriptors. */
	q->fixed_files = o->nfds && io_uring_register_files(&q->ring, o->fds, o->nfds) == 0;

	if (o->fixedbufs && o->gen) {
		q->reg_start = malloc(URING_BUF_SLOTS * sizeof(*q->reg_start));
		q->reg_len = malloc(URING_BUF_SLOTS * sizeof(*q->reg_len));
		q->reg_gen = malloc(URING_BUF_SLOTS * sizeof(*q->reg_gen));
		if (q->reg_start && q->reg_len && q->reg_gen &&
		    io_uring_register_buffers_sparse(&q->ring, URING_BUF_SLOTS) == 0) {
			for (unsigned i = 0; i < URING_BUF_SLOTS; i++)
				q->reg_start[i] = UINT64_MAX;
			q->gen = o->gen;
			q->piece_shift = o->gen->piece_shift;
			q->exact = o->gen->exact;
			q->bufs_on = true;
		}
	}
	return 0;
}

void uring_q_fini(struct uring_q *q)
{
	if (q->ring.ring_fd >= 0)
		io_uring_queue_exit(&q->ring); /* also drops the registered files and buffers */
	q->ring.ring_fd = -1;
	free(q->local);
	free(q->reg_start);
	free(q->reg_len);
	free(q->reg_gen);
	q->local = NULL;
	q->reg_start = NULL;
	q->reg_len = NULL;
	q->reg_gen = NULL;
}

int uring_q_buf_slow(struct uring_q *q, const void *buf, size_t len)
{
	size_t contig;
	uint64_t iova = dma_translate(buf, &contig);
	if (iova == UINT64_MAX || contig < len)
		return -1;
	uint64_t start, end;
	if (q->exact) {
		/* chunks are page aligned, so the last page is still in buf's chunk */
		start = iova & ~(uint64_t)4095;
		end = (iova + len + 4095) & ~(uint64_t)4095;
		if (end - start > 4096)
			return -1; /* see uring_ring.h: only single pages pay on Linux 6.1 */
	} else {
		uint64_t psize = 1ull << q->piece_shift;
		start = iova & ~(psize - 1);
		if (((iova + len - 1) & ~(psize - 1)) != start)
			return -1; /* crosses into the next piece */
		/* the piece ends with buf's chunk or a piece later */
		end = iova + contig < start + psize ? iova + contig : start + psize;
	}
	unsigned slot = (unsigned)((start >> q->piece_shift) % URING_BUF_SLOTS);
	uint32_t g = atomic_load_explicit(&q->gen->gen[slot], memory_order_acquire);
	q->buf_lookups++;
	if (__builtin_expect(q->reg_start[slot] == start && iova + len <= start + q->reg_len[slot] &&
			     q->reg_gen[slot] == g, 1))
		return (int)slot;
	/* First use here (or the memory was freed and reused, or another buffer took the slot).
	 * Registrations are aligned in both spaces: the region starts (iova - start) bytes before
	 * buf. */
	struct iovec iov = { .iov_base = (uint8_t *)buf - (iova - start),
			     .iov_len = (size_t)(end - start) };
	__u64 tag = 0;
	int rc = io_uring_register_buffers_update_tag(&q->ring, slot, &iov, &tag, 1);
	if (rc != 1 || (++q->buf_regs % 256 == 0 && q->buf_regs * 8ull > q->buf_lookups)) {
		/* refused (e.g. the locked memory limit), or more than one registration per eight
		 * commands: unregistered buffers cost less from here on */
		q->bufs_on = false;
		return -1;
	}
	q->reg_start[slot] = start;
	q->reg_len[slot] = (uint32_t)(end - start);
	q->reg_gen[slot] = g;
	return (int)slot;
}

void uring_q_enter(struct uring_q *q, unsigned to_submit, bool getevents)
{
	unsigned flags = getevents ? IORING_ENTER_GETEVENTS : 0;
	/* -EAGAIN / -EBUSY (the kernel is short of something) and -EINTR: the next poll tries
	 * again; what was not submitted stays in the ring. */
	(void)io_uring_enter((unsigned)q->ring.ring_fd, to_submit, 0, flags, NULL);
}
