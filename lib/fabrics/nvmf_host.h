/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe over Fabrics, the host's side, for every fabrics transport (NVMe Base 2.0 section 6):
 * Connect (and DH-HMAC-CHAP when the controller asks for it), Property Get / Set, Disconnect
 * and Keep Alive. They run on an association (struct nvmf_assoc: who the host is, whom it
 * connects to, the controller id it got) and on a transport's queues through
 * struct nvmf_queue_ops, so no transport's struct reaches this layer: NVMe/TCP gives its
 * connections (lib/transport/tcp/tcp_fabrics.c), NVMe/RDMA its queue pairs.
 */
#ifndef UNVME_FABRICS_NVMF_HOST_H
#define UNVME_FABRICS_NVMF_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"
#include "unvme/spec/fabrics.h"

struct nvmf_queue_ops {
	/* Runs cmd on queue synchronously, moving len bytes of buf (to the controller when
	 * to_ctrl); cpl (may be NULL) gets the completion. 0, a positive NVMe status or a
	 * negative errno with a message. */
	int (*exec)(void *queue, struct nvme_sqe *cmd, void *buf, size_t len, bool to_ctrl,
		    struct nvme_cqe *cpl, uint32_t timeout_ms);
	/* exec in two halves, for a command without data on the admin queue of a live
	 * association (lib/fabrics/nvmf_regs.c: nobody waits for the network while holding the
	 * lock that serialises the queue; the caller holds it for each call). send puts cmd on
	 * the wire on the transport's own command id and returns: 0, -EAGAIN when that id is in
	 * flight or the queue cannot take it now, or a negative errno with a message (not
	 * connected). */
	int (*send)(void *queue, struct nvme_sqe *cmd);
	/* Takes what arrived (without waiting) and says whether the answer to what send put on
	 * the wire came: -EINPROGRESS not yet; else as exec (0, an NVMe status, a negative errno
	 * with a message). One unanswered timeout_ms after send ends the connection
	 * (-ETIMEDOUT), as exec's. */
	int (*reap)(void *queue, struct nvme_cqe *cpl, uint32_t timeout_ms);
	/* Who is at the other end, for messages ("10.0.0.1:4420"). */
	const char *(*peer)(const void *queue);
};

struct nvmf_assoc {
	const struct nvmf_queue_ops *ops;
	void *admin;                    /* the admin queue, for properties and Keep Alive */
	const char *hostnqn, *subnqn;   /* NUL terminated, at most NVMF_NQN_MAX */
	const uint8_t *hostid;          /* 16 bytes */
	const char *dhchap_secret;      /* the host's key ("DHHC-1:..."), "" for none */
	const char *dhchap_ctrl_secret; /* the controller's key: bidirectional; "" for none */
	uint32_t kato_ms;               /* Keep Alive Timeout asked for in the admin Connect */
	uint32_t timeout_ms;            /* of each command */
	uint16_t cntlid;                /* the controller the admin Connect got */
	uint16_t next_tid;              /* authentication transaction ids */
};

struct nvmf_params;
/* The association a device id describes (nvmf_params.h: host and subsystem NQNs,
 * host id, DH-HMAC-CHAP secrets, KATO), on a transport's queues; commands time out after
 * timeout_ms (0: 10 s). p must outlive a. */
void nvmf_assoc_init(struct nvmf_assoc *a, const struct nvmf_queue_ops *ops, void *admin,
		     const struct nvmf_params *p, uint32_t timeout_ms);

/* Connect of queue qid (depth sqsize + 1) on queue, to controller cntlid (NVMF_CNTLID_DYNAMIC
 * for the admin queue), then DH-HMAC-CHAP when the controller asks for it. 0, or a negative
 * errno / positive NVMe status with a message naming the peer. *cntlid_out (may be NULL)
 * gets the controller id. */
int nvmf_connect(struct nvmf_assoc *a, void *queue, uint16_t qid, uint16_t sqsize,
		 uint16_t cntlid, uint16_t *cntlid_out);
/* DH-HMAC-CHAP as the host (nvmf_auth_host.c), on a queue whose Connect asked for it. */
int nvmf_auth_host(struct nvmf_assoc *a, void *queue, uint16_t qid);
/* The controller's register at off (4 or 8 bytes wide) on the admin queue, synchronously
 * (exec: the connect thread's, which has the admin queue to itself). */
int nvmf_prop_get(struct nvmf_assoc *a, uint32_t off, bool wide, uint64_t *val);
int nvmf_prop_set(struct nvmf_assoc *a, uint32_t off, bool wide, uint64_t val);
/* The same in parts, for send / reap (nvmf_regs.c): the commands, and what an answer means
 * (rc as exec's or reap's: 0 and *val, or the error with a message naming the register). */
void nvmf_prop_get_cmd(struct nvme_sqe *cmd, uint32_t off, bool wide);
void nvmf_prop_set_cmd(struct nvme_sqe *cmd, uint32_t off, bool wide, uint64_t val);
int nvmf_prop_get_result(struct nvmf_assoc *a, uint32_t off, bool wide, int rc,
			 const struct nvme_cqe *cpl, uint64_t *val);
int nvmf_prop_set_result(struct nvmf_assoc *a, uint32_t off, int rc);
/* Disconnect of an I/O queue (the caller decides whether the controller supports it). */
int nvmf_disconnect(struct nvmf_assoc *a, void *queue);
/* Keep Alive (NVMe Base 2.0 5.15): sent on the admin queue by the keep-alive thread
 * (nvmf_regs_keep_alive_tick), with send / reap. */
void nvmf_keep_alive_cmd(struct nvme_sqe *cmd);
/* In-capsule data bytes an I/O queue takes, from Identify Controller's fabrics fields (IOCCSZ
 * counts 16-byte units of the whole capsule; data at an offset, ICDOFF, is not used). */
uint32_t nvmf_io_incapsule(const struct nvmf_id_ctrl_fabrics *f);

/* Which way the data of a command sent on queue qid flows: true host to controller. By the
 * opcode (bits 1:0, NVMe Base 2.0 figure "Opcodes for Admin Commands"), the fabrics type, and
 * the Samsung KV vendor opcodes, which do not follow the convention (as the target reads
 * them, lib/target/tgt_exec.c). Every fabrics transport's. */
bool nvmf_data_to_ctrl(uint16_t qid, const struct nvme_sqe *sqe);
/* A Samsung KV vendor command whose key (over 16 bytes) is named by a PRP in CDW12-13: over a
 * fabric the key must travel in the capsule (docs/nvme-tcp.md, "KV commands over NVMe/TCP"). */
bool nvmf_kv_long_key(const struct nvme_sqe *sqe);

#endif
