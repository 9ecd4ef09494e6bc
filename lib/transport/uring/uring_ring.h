/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One io_uring per queue pair: the kernel-facing half of a message-based queue pair.
 *
 * The submission side writes SQEs straight into the ring and publishes the tail; nothing is
 * sent until the poll (or unvme_qpair_ring) enters the kernel once for the whole burst, as
 * the PCIe queue pairs ring their doorbell once per poll. Completions are read straight from
 * the CQ ring; the kernel is entered to reap only when it asks for it (IORING_SQ_TASKRUN with
 * COOP_TASKRUN|TASKRUN_FLAG) or when completions are polled (IOPOLL), so a poll that finds
 * nothing to do costs two loads.
 *
 * A split queue pair (one thread submits, another polls) needs nothing more: the submitter
 * is the only writer of SQEs and the tail, the poller the only one that reaps, and either may
 * enter the kernel (io_uring serialises that itself).
 *
 * Buffers: DMA memory is contiguous and aligned in both virtual and IOVA space within its
 * 2 MiB chunks. A ring registers what a command's buffer lies in (io_uring fixed buffers) the
 * first time it sees it, in a slot found from the IOVA, and uses the registration while the
 * slot's generation (bumped by the DMA layer's unmap, per controller) is unchanged. So the
 * kernel does not pin pages per I/O, and freed memory is never reached through an old
 * registration. Two ways to cut:
 *   - pieces (block devices, files): the 2 MiB piece around the buffer; the block layer
 *     takes any part of a large registered buffer at no extra cost;
 *   - exact (passthrough): a single-page buffer's own page, slot by that page. Linux 6.1
 *     maps a registered buffer for passthrough by walking every page from the buffer to the
 *     end of the registration, and refuses (EINVAL) more pages than the queue's segment
 *     limit. Measured in the QEMU guest (6.1): 4 KiB reads through a 2 MiB registration took
 *     ~1.8x the time of unregistered ones, through a one-page registration ~0.9x; 16 and
 *     64 KiB commands through their own pages' registration ~1.5x: so only one-page
 *     commands are registered.
 * A ring whose registrations keep being replaced (buffers that move around, or collide in the
 * slot table) stops registering: a registration is a system call.
 * Commands whose buffer is not DMA memory, or crosses a piece, go unregistered.
 *
 * Completions the host makes itself (a command refused before it reached the kernel, an ioctl
 * made at submission) go to a small single-producer single-consumer queue that the poll
 * drains before the CQ ring.
 */
#ifndef UNVME_DRIVER_URING_RING_H
#define UNVME_DRIVER_URING_RING_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec.h"

#define URING_BUF_SLOTS 4096u
#define URING_MAX_FILES 64u

/* Per controller: how its rings cut registrations, and a generation per buffer slot, bumped
 * when DMA memory there goes away. */
struct uring_bufgen {
	bool exact;            /* the buffer's own pages, else its 2 MiB piece */
	uint32_t piece_shift;  /* 12 (pages) or 21 */
	_Atomic uint32_t gen[URING_BUF_SLOTS];
};
void uring_bufgen_init(struct uring_bufgen *g, bool exact);
/* The DMA layer's unmap of [iova, iova + len): registrations of it are stale from now on. */
void uring_bufgen_unmap(struct uring_bufgen *g, uint64_t iova, size_t len);

struct uring_q_opts {
	unsigned entries;          /* SQ entries (the queue pair's depth); the CQ gets twice */
	bool passthru;             /* SQE128 | CQE32, for IORING_OP_URING_CMD */
	bool iopoll;               /* IORING_SETUP_IOPOLL */
	bool fixedbufs;            /* register DMA pieces */
	const int *fds;            /* files to register (fixed file index = position) */
	unsigned nfds;
	struct uring_bufgen *gen;  /* NULL: no registered buffers */
	uint16_t qid;
};

struct uring_q {
	/* hot: submission */
	struct io_uring_sqe *sqes;
	unsigned *sq_ktail;
	unsigned *sq_khead;
	unsigned *sq_kflags;
	unsigned sq_mask;
	unsigned sq_entries;
	unsigned sqe_shift;
	unsigned tail;             /* the submitter's: next SQE to fill */
	bool fixed_files;
	bool bufs_on;
	bool iopoll;
	bool taskrun_flag;         /* the kernel tells us when it has completions to post */
	uint16_t qid;
	uint32_t timeout_ms;       /* per-command timeout the kernel enforces (passthrough) */
	int fds[URING_MAX_FILES];
	uint32_t nsids[URING_MAX_FILES]; /* passthrough: the namespace behind each file */
	unsigned nfds;
	void *priv;                /* the transport's per-queue data */

	/* hot: completion */
	_Alignas(64) struct io_uring_cqe *cqes;
	unsigned *cq_ktail;
	unsigned *cq_khead;
	unsigned cq_mask;
	unsigned cqe_shift;

	/* host-made completions: the submitter pushes, the poller pops */
	_Alignas(64) _Atomic uint32_t local_tail;
	_Alignas(64) _Atomic uint32_t local_head;
	struct nvme_cqe *local;
	uint32_t local_mask;

	/* cold */
	_Alignas(64) struct io_uring ring;
	struct uring_bufgen *gen;
	uint64_t *reg_start;       /* per slot: the registration's first IOVA (UINT64_MAX: none) */
	uint32_t *reg_len;         /* per slot: its length */
	uint32_t *reg_gen;         /* per slot: the generation it was registered at */
	uint32_t piece_shift;
	bool exact;
	uint32_t buf_lookups;      /* commands that asked for a registered buffer ... */
	uint32_t buf_regs;         /* ... and the registrations they cost */
	uint32_t setup_flags;
};

/* Sets the ring up. -errno with a message saying what the kernel lacks and what to do. */
int uring_q_init(struct uring_q *q, const struct uring_q_opts *o);
void uring_q_fini(struct uring_q *q);

/* The next SQE to fill, or NULL if the ring is full (cannot happen while the queue pair's
 * trackers bound the commands in flight to the ring's size). */
static inline struct io_uring_sqe *uring_q_sqe(struct uring_q *q)
{
	unsigned head = __atomic_load_n(q->sq_khead, __ATOMIC_ACQUIRE);
	if (__builtin_expect(q->tail - head >= q->sq_entries, 0))
		return NULL;
	return &q->sqes[(q->tail & q->sq_mask) << q->sqe_shift];
}

/* Takes the SQE uring_q_sqe returned and makes it visible to whoever enters next. */
static inline void uring_q_publish(struct uring_q *q)
{
	q->tail++;
	__atomic_store_n(q->sq_ktail, q->tail, __ATOMIC_RELEASE);
}

/* The registered buffer index for [buf, buf + len), or -1 to send it unregistered. */
int uring_q_buf_slow(struct uring_q *q, const void *buf, size_t len);
static inline int uring_q_buf(struct uring_q *q, const void *buf, size_t len)
{
	if (!q->bufs_on || !len)
		return -1;
	return uring_q_buf_slow(q, buf, len);
}

/* Enters the kernel: submits what is published and, with getevents, reaps/polls. */
void uring_q_enter(struct uring_q *q, unsigned to_submit, bool getevents);

/* Submits what is published (unvme_qpair_ring). */
static inline void uring_q_ring(struct uring_q *q)
{
	unsigned pending = __atomic_load_n(q->sq_ktail, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(q->sq_khead, __ATOMIC_ACQUIRE);
	if (pending)
		uring_q_enter(q, pending, false);
}

/* The poll's kernel part: one io_uring_enter when there is something to submit, completions
 * to poll for (IOPOLL, busy) or task work the kernel wants run; none otherwise. */
static inline void uring_q_kick(struct uring_q *q, bool busy)
{
	unsigned pending = __atomic_load_n(q->sq_ktail, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(q->sq_khead, __ATOMIC_ACQUIRE);
	/* IORING_SQ_CQ_OVERFLOW: completions wait in the kernel for room in the CQ ring */
	unsigned kflags = __atomic_load_n(q->sq_kflags, __ATOMIC_RELAXED);
	bool events = busy && (q->iopoll || (kflags & IORING_SQ_CQ_OVERFLOW) ||
			       (q->taskrun_flag && (kflags & IORING_SQ_TASKRUN)));
	if (pending || events)
		uring_q_enter(q, pending, events);
}

/* The next CQE, or NULL. Consume it with uring_q_cqe_done before running its callback. */
static inline struct io_uring_cqe *uring_q_cqe(struct uring_q *q)
{
	unsigned head = *q->cq_khead;
	if (head == __atomic_load_n(q->cq_ktail, __ATOMIC_ACQUIRE))
		return NULL;
	return &q->cqes[(head & q->cq_mask) << q->cqe_shift];
}

static inline void uring_q_cqe_done(struct uring_q *q)
{
	__atomic_store_n(q->cq_khead, *q->cq_khead + 1, __ATOMIC_RELEASE);
}

/* Host-made completions (the submitter's side). */
static inline void uring_q_local_push(struct uring_q *q, const struct nvme_cqe *cpl)
{
	uint32_t t = atomic_load_explicit(&q->local_tail, memory_order_relaxed);
	q->local[t & q->local_mask] = *cpl;
	atomic_store_explicit(&q->local_tail, t + 1, memory_order_release);
}

/* The poller's side: true and *cpl while there is one. */
static inline bool uring_q_local_pop(struct uring_q *q, struct nvme_cqe *cpl)
{
	uint32_t h = atomic_load_explicit(&q->local_head, memory_order_relaxed);
	if (h == atomic_load_explicit(&q->local_tail, memory_order_acquire))
		return false;
	*cpl = q->local[h & q->local_mask];
	atomic_store_explicit(&q->local_head, h + 1, memory_order_release);
	return true;
}

#endif
