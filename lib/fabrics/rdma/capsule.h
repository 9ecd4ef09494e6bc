/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/RDMA capsules (RDMA Transport Specification 3.3, Figure 9): a command capsule is the
 * 64-byte SQE, then in-capsule data on I/O queues; a response capsule is the 16-byte CQE.
 * The host names data either in the capsule (SGL Data Block, subtype Offset, from the start of
 * the in-capsule data) or in its registered memory (Keyed SGL Data Block: address, 24-bit
 * length, RKEY); the controller moves keyed data with RDMA READ / WRITE.
 *
 * The controller's parse checks a received capsule before anything in it is used: its length
 * against the SQE, the SGL's type against what the queue takes, in-capsule ranges against
 * the bytes that came and the queue's in-capsule size, keyed lengths against the transfer
 * limit. A capsule too short to hold a command cannot be answered (no command id): the
 * connection ends. Any other refusal is a status for the command's response. Shared by the
 * target and the fuzzer; the host builds SGLs with the helpers below.
 */
#ifndef UNVME_FABRICS_RDMA_CAPSULE_H
#define UNVME_FABRICS_RDMA_CAPSULE_H

#include <stdbool.h>
#include <stdint.h>

#include "unvme/spec/cmd.h"
#include "unvme/spec/rdma.h"

/* Host: SGL1 of a command (and PSDT = SGL). A command without data gets a keyed descriptor of
 * length 0, as Linux's host sends. */
void nvrdma_sgl_keyed(struct nvme_sqe *sqe, uint64_t addr, uint32_t len, uint32_t rkey);
void nvrdma_sgl_incapsule(struct nvme_sqe *sqe, uint32_t len);
void nvrdma_sgl_none(struct nvme_sqe *sqe);

enum nvrdma_data { NVRDMA_DATA_NONE = 0, NVRDMA_DATA_INCAPSULE, NVRDMA_DATA_KEYED };

/* What a queue takes. */
struct nvrdma_capsule_rules {
	bool admin;          /* admin queue: no in-capsule data (Figure 9) */
	uint32_t icd_max;    /* in-capsule data bytes at most (IOCCSZ x 16 - 64) */
	uint32_t max_data;   /* data bytes of one command at most (MDTS) */
};

struct nvrdma_capsule {
	struct nvme_sqe sqe;
	uint8_t kind;        /* enum nvrdma_data */
	uint32_t len;        /* data bytes */
	/* NVRDMA_DATA_INCAPSULE: the data, inside the received buffer */
	const uint8_t *icd;
	/* NVRDMA_DATA_KEYED */
	uint64_t addr;
	uint32_t rkey;
	bool invalidate;     /* the host asked for remote invalidation of rkey */
};

enum nvrdma_verdict {
	NVRDMA_OK = 0,
	NVRDMA_REFUSE,       /* answer the command (out->sqe.cid) with *status */
	NVRDMA_FATAL,        /* not a capsule: end the connection */
};

/* Parses a command capsule of len bytes. status: SCT << 8 | SC, with the reason in *why. */
enum nvrdma_verdict nvrdma_capsule_parse(const void *buf, uint32_t len,
					 const struct nvrdma_capsule_rules *r,
					 struct nvrdma_capsule *out, uint16_t *status,
					 const char **why);

/* Host: a response capsule of len bytes into *cqe; false if it is not one (the spec allows
 * exactly 16 bytes). */
bool nvrdma_rsp_parse(const void *buf, uint32_t len, struct nvme_cqe *cqe);

#endif
