/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvrdma_tq: the controller's end of one NVMe/RDMA queue on an accepted rv endpoint, with no
 * target internals: the target (and the tests) take parsed commands through a callback, give
 * it buffers for host-to-controller data to fetch, and hand back responses with their data.
 *
 * One slot per command the host may have outstanding (its HSQSIZE + 1): a receive buffer for
 * the capsule (64 bytes and the in-capsule data the queue takes), a response buffer, and the
 * command's state. The receive of a slot is posted again only after the command's response
 * was sent (its completion came), so in-capsule data is used where it landed, with no copy.
 *
 * A command's life: its capsule arrives and is checked (capsule.h); one the queue refuses is
 * answered here with the status (the owner never sees it); otherwise the owner's capsule
 * callback gets it. In-capsule data is there already; keyed host-to-controller data the owner
 * fetches into its buffer (nvrdma_tq_fetch: an RDMA READ, then the data_in callback);
 * nvrdma_tq_respond sends controller-to-host data (RDMA WRITE) and then the response, which
 * RC orders after the write (RDMA spec 3.3). A completion in error, or a capsule too short to
 * be one, ends the queue (the fatal callback). Single threaded.
 */
#ifndef UNVME_FABRICS_RDMA_TARGET_QUEUE_H
#define UNVME_FABRICS_RDMA_TARGET_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capsule.h"
#include "verbs.h"

struct nvrdma_tq;

struct nvrdma_tq_cmd {
	struct nvrdma_tq *q;
	uint32_t slot;
	struct nvrdma_capsule cap; /* the parsed capsule (cap.icd points into the receive buffer) */
	void *owner;               /* the owner's per-command state */
	uint8_t state;
};

struct nvrdma_tq_cfg {
	uint16_t qid;
	uint32_t depth;            /* slots: HSQSIZE + 1 */
	struct nvrdma_capsule_rules rules;
	/* A command arrived. */
	void (*capsule)(void *arg, struct nvrdma_tq_cmd *cmd);
	/* Its keyed data is in the owner's buffer (status 0) or could not be read (< 0: the
	 * queue is failing). */
	void (*data_in)(void *arg, struct nvrdma_tq_cmd *cmd, int status);
	/* The queue failed; why says how. Commands still with the owner stay its own to
	 * release with nvrdma_tq_drop. */
	void (*fatal)(void *arg, const char *why);
	/* Optional: the response of a command the owner answered was sent (its data, written
	 * before it, is at the host too): the owner's buffer is its own again. Not called for
	 * commands the queue refused itself, nor once the queue is dead. */
	void (*sent)(void *arg, struct nvrdma_tq_cmd *cmd);
	void *arg;
};

struct nvrdma_tq {
	struct rv_ep *ep;
	struct nvrdma_tq_cfg cfg;
	uint32_t recv_size;
	uint8_t *mem;              /* receive buffers, then response buffers */
	struct rv_mr *mr;
	struct nvrdma_tq_cmd *cmds;
	uint16_t sqhd;             /* SQ head for responses: advances with each capsule taken */
	bool dead;
	char why[128];
	uint64_t refused;          /* commands answered here (bad SGLs) */
};

/* The bytes of receive and response buffers a queue of depth slots with icd_max bytes of
 * in-capsule data takes (what nvrdma_tq_init allocates and registers). */
size_t nvrdma_tq_mem_bytes(uint32_t depth, uint32_t icd_max);
/* Sets the queue up on ep (made from the request, not yet accepted): registers and posts the
 * receives. 0 or a negative errno. */
int nvrdma_tq_init(struct nvrdma_tq *q, struct rv_ep *ep, const struct nvrdma_tq_cfg *cfg);
void nvrdma_tq_fini(struct nvrdma_tq *q);

/* Reads cmd's keyed data (cmd->cap.len bytes) into buf, which lies in region mr. */
int nvrdma_tq_fetch(struct nvrdma_tq_cmd *cmd, void *buf, const struct rv_mr *mr);
/* Answers cmd: len bytes at buf (region mr) go to the host first when the command reads
 * (len is at most cmd->cap.len); the response carries cqe's dw0, dw1 and status, the rest is
 * filled here. The slot is the queue's again when the send completes. */
int nvrdma_tq_respond(struct nvrdma_tq_cmd *cmd, const struct nvme_cqe *cqe, const void *buf,
		      uint32_t len, const struct rv_mr *mr);
/* The owner gives up a command without answering (the queue is dead). */
void nvrdma_tq_drop(struct nvrdma_tq_cmd *cmd);
/* Reaps completions: capsules, fetched data, sent responses. Returns the work done, or
 * -ECONNRESET once the queue is dead. */
int nvrdma_tq_poll(struct nvrdma_tq *q);

#endif
