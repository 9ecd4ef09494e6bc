/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA host transport (nvme-rdma://HOST[:PORT]/NQN, or nvme-rdma://HOST[:PORT] for
 * the discovery controller, which the driver keeps to its admin queue): the association behind the
 * register interface, as NVMe/TCP's (lib/fabrics/nvmf_regs.h says how CC.EN maps onto
 * connecting and disconnecting), with each queue an RDMA connection (Reliable Connected queue
 * pair) made through lib/fabrics/rdma's verbs layer (rv) and run by its host queue engine
 * (nvrdma_hq: command capsules, in-capsule data, keyed SGLs, failure detection).
 *
 * Pieces: rdma_queue.c (one queue: CM connect with the NVMe/RDMA private data, the SQ
 * doorbell turning ring entries into capsules, responses into the CQ ring, timeouts,
 * the synchronous exchange of fabrics commands), rdma_mr.c (the driver's DMA chunks
 * registered once with the device, looked up per command), rdma_ctrlr.c (the association's
 * admin connection, the transport's hooks, the registration). Connect, properties, Keep
 * Alive, DH-HMAC-CHAP, the registers over the association, the reconnect policy, the
 * keep-alive thread and the CQ ring writes are lib/fabrics'.
 */
#ifndef UNVME_TRANSPORT_RDMA_CTRLR_H
#define UNVME_TRANSPORT_RDMA_CTRLR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"
#include "lib/fabrics/nvmf_async.h"
#include "lib/fabrics/nvmf_params.h"
#include "lib/fabrics/nvmf_cq.h"
#include "lib/fabrics/nvmf_host.h"
#include "lib/fabrics/nvmf_inflight.h"
#include "lib/fabrics/nvmf_keepalive.h"
#include "lib/fabrics/nvmf_regs.h"
#include "lib/fabrics/rdma/host_queue.h"
#include "lib/fabrics/rdma/verbs.h"

#define RDMA_SCHEME "nvme-rdma://"

struct unvme_ctrlr;
struct unvme_qpair;
struct rdma_ctrlr;

/* What the driver's ring knows of a command id. */
struct rdma_req {
	struct nvmf_track track;  /* first (nvmf_inflight.h): answered?, when it was sent */
	void *buf;
	uint32_t len;
	bool to_ctrl;
};

_Static_assert(offsetof(struct rdma_req, track) == 0, "nvmf_inflight.h scans the track at the start");

struct rdma_queue {
	struct rdma_ctrlr *rc;
	struct unvme_qpair *qp;   /* the queue pair served (NULL before it exists) */
	uint16_t qid;
	uint16_t depth;           /* SQ entries (sqsize + 1): ring command ids and the sync one */
	uint32_t nreqs;           /* ring command ids, 0 .. nreqs - 1; nreqs is the sync cid */
	uint32_t sq_db;
	uint32_t icd_max;
	uint32_t timeout_ms;
	bool locked;              /* the admin queue: callers hold rc->regs.lock */
	pthread_mutex_t mu;       /* an I/O queue's doorbell against its pump (split queues) */

	struct rv_ep *ep;         /* NULL: not connected */
	struct nvrdma_hq hq;
	bool hq_up;
	_Atomic bool dead;
	const char *dead_why;
	char why_buf[200];
	bool fail_done;           /* what was in flight got its error completion */
	bool timed_out;
	bool dropping;            /* closing: completions go nowhere */

	struct rdma_req *reqs;
	struct rdma_req sync;
	bool sync_active, sync_done;
	struct nvme_cqe sync_cqe;
	uint8_t sync_opc, sync_fctype; /* what it is, for the message of a timeout */
	uint64_t sync_start_ms;

	uint16_t sq_sent;         /* SQ entries up to here became capsules */
	struct nvmf_cq cq;         /* where the next completion goes in the CQ ring */
	uint64_t last_scan_ms;
	char peer[sizeof(((struct nvmf_params *)0)->host) + 24]; /* "host:port", then the connection's */

	/* A connect on a thread of its own (a rebuild inside a poll, rdma_ctrlr.c): meanwhile
	 * the connection is the thread's and the queue serves no queue pair (qp is NULL, kept
	 * in async_qp): the engine has only Connect and authentication in flight, nothing of
	 * the ring is touched. The owner's pump does nothing until it took the result. */
	struct nvmf_async async;
	bool connecting;          /* the owner's: a thread has the connection */
	struct unvme_qpair *async_qp;
	uint16_t async_cntlid;
};

/* A driver DMA chunk registered with the device. */
struct rdma_chunk_mr {
	uintptr_t va;
	size_t len;
	uint64_t iova;
	struct rv_mr *mr;
};

struct rdma_ctrlr {
	struct unvme_ctrlr *c;
	struct nvmf_params p;      /* the device id (rdma_params_parse) */
	const struct rv_ops *verbs;
	/* the registers over the association (lib/fabrics/nvmf_regs.h); its lock covers the
	 * admin queue too */
	struct nvmf_regs regs;
	struct rdma_queue admin;
	uint16_t admin_depth;
	struct nvmf_assoc fab;
	struct nvmf_keepalive ka;

	/* rdma_mr.c: the DMA chunks, sorted by address, in pd */
	pthread_rwlock_t mr_lock;
	struct rdma_chunk_mr *mrs;
	uint32_t nmrs, mrs_cap;
	struct rv_pd *pd;
};

/* rdma_queue.c */
int rdma_queue_init(struct rdma_queue *q, struct rdma_ctrlr *rc, uint16_t qid, uint16_t depth);
void rdma_queue_fini(struct rdma_queue *q);
/* Makes the queue's RDMA connection and runs Connect on it (then DH-HMAC-CHAP when asked).
 * cntlid NVMF_CNTLID_DYNAMIC for the admin queue; *cntlid_out (may be NULL) gets the one the
 * controller gave. 0, a negative errno or a positive NVMe status, with a message. */
int rdma_queue_connect(struct rdma_queue *q, uint16_t cntlid, uint16_t *cntlid_out);
/* rdma_queue_connect on a queue already closed and reset (a connect thread's part). */
int rdma_queue_connect_conn(struct rdma_queue *q, uint16_t cntlid, uint16_t *cntlid_out);
/* Ends the connection; what was in flight is dropped (the rings are rewound after this). */
void rdma_queue_close(struct rdma_queue *q);
/* The rings were rewound: nothing in flight, CQ from its start. */
void rdma_queue_reset(struct rdma_queue *q);
int rdma_queue_map(struct rdma_queue *q, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len);
void rdma_queue_doorbell(struct rdma_queue *q, uint16_t tail);
/* Moves responses into the CQ ring; returns 1 when the queue failed in this call. */
int rdma_queue_pump(struct rdma_queue *q);
/* Fails the connection: no more data moves, what is in flight completes with an error. */
void rdma_queue_mark_dead(struct rdma_queue *q, const char *why);
extern const struct nvmf_queue_ops rdma_nvmf_ops;

/* rdma_mr.c */
int rdma_mr_map(void *ctx, void *vaddr, uint64_t iova, size_t len);
void rdma_mr_unmap(void *ctx, uint64_t iova, size_t len);
struct rv_mr *rdma_mr_find(struct rdma_ctrlr *rc, struct rv_pd *pd, const void *buf, uint32_t len);
void rdma_mr_fini(struct rdma_ctrlr *rc);

/* rdma_ctrlr.c */
/* Parses an nvme-rdma:// device id: the fabrics keys every scheme has (nvmf_params.h), and
 * NVMe/TCP's own (tls*, hdgst, ddgst) refused with a message saying why. An id without a
 * subsystem NQN names the discovery controller (port 4420 unless given). */
int rdma_params_parse(const char *address, struct nvmf_params *p);
void rdma_ctrlr_connection_lost(struct rdma_ctrlr *rc, struct rdma_queue *q);
#define rdma_report(rc, ...) nvmf_report((rc)->c, __VA_ARGS__)

#endif
