/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvrdma_hq: the host's end of one NVMe/RDMA queue on a connected rv endpoint, with no driver
 * internals: the driver's transport and the tests give it commands by command id and take
 * responses through a callback.
 *
 * Memory: one registered region holds a command capsule per command id (the SQE and room for
 * in-capsule data) and a receive buffer per response the host can take (hrqsize of them, all
 * posted before the connection is made, re-posted as each response is handed on). A command's
 * data goes in the capsule when it flows to the controller and fits (I/O queues only); else
 * the SGL is keyed: the buffer's RKEY comes from the region table the owner keeps
 * (nvrdma_hq_cfg.find_mr, e.g. the driver's DMA chunks registered once), or a region
 * registered for this command alone and released at its response.
 *
 * A command id is busy from submit until both its response and its send completion came
 * (a device may report them in either order): a submit that finds its slot's send not yet
 * completed reaps send completions first, holding back the responses met meanwhile for the
 * next poll, so no callback runs inside submit.
 *
 * Failure: a completion in error (the queue pair failed: a flush, a remote access error),
 * a response that is not 16 bytes or names a command id not in flight, or a disconnect seen by
 * nvrdma_hq_check_events make the queue dead; nothing is sent after that, and the owner ends
 * what is in flight with nvrdma_hq_abort_all. Single threaded: one owner at a time.
 */
#ifndef UNVME_FABRICS_RDMA_HOST_QUEUE_H
#define UNVME_FABRICS_RDMA_HOST_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec/cmd.h"
#include "verbs.h"

struct nvrdma_hq_cfg {
	uint16_t qid;
	uint16_t depth;          /* command ids 0 .. depth - 1 */
	uint16_t hrqsize;        /* responses that can be outstanding (>= depth) */
	uint32_t icd_max;        /* in-capsule data bytes the controller takes (0: admin) */
	/* A response (or an abort): cid, the completion as the controller sent it. */
	void (*done)(void *arg, uint16_t cid, const struct nvme_cqe *cqe);
	/* The registered region holding [buf, buf + len), or NULL: the owner's table. */
	struct rv_mr *(*find_mr)(void *arg, const void *buf, uint32_t len);
	void *arg;
};

struct nvrdma_hq_req {
	void *buf;
	uint32_t len;
	struct rv_mr *own_mr;    /* registered for this command alone */
	bool active;             /* submitted, response not yet handed on */
	bool send_pending;       /* its capsule's send completion has not come */
};

struct nvrdma_hq {
	struct rv_ep *ep;
	struct nvrdma_hq_cfg cfg;
	uint32_t capsule_size;   /* 64 + icd_max */
	uint8_t *mem;            /* capsules, then receive buffers */
	struct rv_mr *mr;
	struct nvrdma_hq_req *reqs;
	/* responses reaped inside submit, handed on at the next poll */
	struct nvme_cqe *held;
	uint32_t nheld;
	uint32_t inflight;
	bool dead;
	const char *why;
	char why_buf[128];
};

/* Sets the queue up on ep (made, not yet connected): registers its buffers and posts the
 * receives. 0 or a negative errno. */
int nvrdma_hq_init(struct nvrdma_hq *q, struct rv_ep *ep, const struct nvrdma_hq_cfg *cfg);
/* Releases what init took (not the endpoint). No command may be in flight. */
void nvrdma_hq_fini(struct nvrdma_hq *q);

/* Sends command sqe (its cid names the slot) with len bytes at buf, to the controller
 * (to_ctrl) or from it. 0, -EBUSY (the cid is in flight), -EINVAL, -ENOMEM (no region for the
 * buffer), -ECONNRESET (the queue is dead). */
int nvrdma_hq_submit(struct nvrdma_hq *q, const struct nvme_sqe *sqe, void *buf, uint32_t len,
		     bool to_ctrl);
/* Reaps completions and hands responses on (done). Returns the responses handed on, or
 * -ECONNRESET once the queue is dead. */
int nvrdma_hq_poll(struct nvrdma_hq *q);
/* The slow path's look at the connection (a disconnect the completions do not show). */
void nvrdma_hq_check_events(struct nvrdma_hq *q);
/* Completes every command in flight with status (SCT << 8 | SC) and dnr. */
void nvrdma_hq_abort_all(struct nvrdma_hq *q, uint16_t status);

#endif
