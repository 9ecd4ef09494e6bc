/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a fabrics transport knows of the commands it carries for a queue pair, beside the
 * driver's trackers (qp->reqs, which say what is in flight): for each command id whether its
 * answer is already in the CQ ring and when it was sent. NVMe/TCP and NVMe/RDMA keep a struct
 * per command id that starts with a struct nvmf_track; the scans below walk such an array
 * (NVMF_TRACKS gives its address and element size).
 */
#ifndef UNVME_FABRICS_NVMF_INFLIGHT_H
#define UNVME_FABRICS_NVMF_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unvme_ctrlr;
struct unvme_qpair;

struct nvmf_track {
	bool posted;       /* no answer is expected: its completion is in the CQ ring, or it was
			    * not sent on this connection */
	uint64_t start_ms; /* when it was sent (coarse clock), for its timeout */
};

/* An array of a transport's per-command structs, each starting with a struct nvmf_track. */
#define NVMF_TRACKS(reqs) (const void *)(reqs), sizeof(*(reqs))

/* Whether a command the driver has in flight on qp got no completion here yet. */
bool nvmf_unanswered(const struct unvme_qpair *qp, const void *reqs, size_t stride, uint32_t nreqs);

/* Whether such a command passed its limit at now (coarse ms, the clock's slack added): then
 * why says which ("command 3 (opcode 0x2) got no answer within 30000 ms"). On the admin queue
 * (qid 0) each command's own limit (unvme_admin_limit_ms: Format NVM and Sanitize wait as
 * long as the driver's admin wait gives them), never one for an Asynchronous Event Request,
 * which completes only on an event; on an I/O queue io_ms. */
bool nvmf_overdue(const struct unvme_qpair *qp, const struct unvme_ctrlr *c, uint16_t qid,
		  const void *reqs, size_t stride, uint32_t nreqs, uint32_t io_ms, uint64_t now,
		  char *why, size_t whylen);

#endif
