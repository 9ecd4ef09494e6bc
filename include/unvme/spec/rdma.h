/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/RDMA transport binding (NVM Express RDMA Transport Specification 1.0; the Keyed
 * SGL Data Block descriptor of NVMe Base 2.0 4.3.2): the RDMA CM private data a host and a
 * controller exchange when a queue's RDMA QP connects, its reject statuses, the keyed SGL
 * that names host memory by RKEY, and the discovery log's transport specific address subtype.
 *
 * A queue is one Reliable Connected QP (RDMA spec 3.2). Capsules travel in RDMA_SEND: a command
 * capsule is the 64-byte SQE followed by in-capsule data (I/O queues only, at most IOCCSZ x 16
 * bytes in all), a response capsule is the 16-byte CQE and nothing else (3.3, Figure 9). Data
 * that is not in the capsule is moved by the controller: RDMA_WRITE into host memory for
 * controller-to-host data, RDMA_READ from it for host-to-controller data, against the keyed
 * SGL of the command, and the response goes after the writes on the same QP.
 */
#ifndef UNVME_SPEC_RDMA_H
#define UNVME_SPEC_RDMA_H

#include <stdint.h>

#include "cmd.h"
#include "fabrics.h"

#define NVME_RDMA_PORT         4420  /* IANA: UDP 4420 for RoCEv2, TCP 4420 for iWARP (3.1.1) */
#define NVME_RDMA_CMD_CAPSULE  64u   /* fabrics and admin command capsules, no in-capsule data */
#define NVME_RDMA_RSP_CAPSULE  16u
#define NVME_RDMA_RNR_INFINITE 7u    /* RNR_RETRY_COUNT a host should set (3.1.4) */
#define NVME_RDMA_KEYED_MAX_LEN 0xffffffu /* the keyed descriptor's length is 3 bytes */

/* RDMA_CM_REQUEST private data, host to controller (Figure 5), 32 bytes. */
struct nvme_rdma_cm_req {
	uint16_t recfmt;   /* 0 */
	uint16_t qid;      /* 0 for the admin queue */
	uint16_t hrqsize;  /* receive queue entries the host posted for responses (not 0's based) */
	uint16_t hsqsize;  /* the queue's SQSIZE (0's based), as Connect will say */
	uint16_t cntlid;   /* I/O queues: the controller id of the association (else 0) */
	uint8_t  rsvd10[22];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_req) == 32, "RDMA_CM_REQUEST private data is 32 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_req, cntlid) == 8, "CNTLID at byte 8");

/* RDMA_CM_ACCEPT private data, controller to host (Figure 6), 32 bytes. */
struct nvme_rdma_cm_rep {
	uint16_t recfmt;   /* 0 */
	uint16_t crqsize;  /* receive queue entries the controller posted for command capsules */
	uint8_t  rsvd4[28];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_rep) == 32, "RDMA_CM_ACCEPT private data is 32 bytes");

/* RDMA_CM_REJECT private data (Figure 7), 4 bytes. */
struct nvme_rdma_cm_rej {
	uint16_t recfmt;   /* 0 */
	uint16_t sts;      /* enum nvme_rdma_cm_status */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_rej) == 4, "RDMA_CM_REJECT private data is 4 bytes");

#define NVME_RDMA_CM_RECFMT 0u

/* RDMA transport errors during QP establishment (Figure 11): the STS of a reject. */
enum nvme_rdma_cm_status {
	NVME_RDMA_CM_INVALID_LEN     = 0x01, /* private data of the wrong size */
	NVME_RDMA_CM_INVALID_RECFMT  = 0x02,
	NVME_RDMA_CM_INVALID_QID     = 0x03,
	NVME_RDMA_CM_INVALID_HSQSIZE = 0x04,
	NVME_RDMA_CM_INVALID_HRQSIZE = 0x05,
	NVME_RDMA_CM_NO_RSC          = 0x06, /* the controller cannot create the QP */
	NVME_RDMA_CM_INVALID_IRD     = 0x07,
	NVME_RDMA_CM_INVALID_ORD     = 0x08,
	NVME_RDMA_CM_INVALID_CNTLID  = 0x09,
};

/* Keyed SGL Data Block descriptor (Base 2.0 4.3.2.1.4), 16 bytes: host memory named by
 * address, length (24 bits) and RKEY. */
struct nvme_sgl_keyed {
	uint64_t addr;
	uint8_t  len[3];   /* little endian */
	uint8_t  key[4];   /* the RKEY, little endian, unaligned */
	uint8_t  type;     /* 7:4 descriptor type 4h, 3:0 subtype */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_sgl_keyed) == 16, "keyed SGL descriptor is 16 bytes");

#define NVME_SGL_TYPE_KEYED_DATA_BLOCK 0x4
/* Keyed SGL subtypes (RDMA spec Figure 10): 0h an address; Fh the controller should
 * invalidate the RKEY remotely (RDMA_SEND_INVALIDATE with the response). */
#define NVME_SGL_SUBTYPE_INVALIDATE_KEY 0xf
#define NVME_SGL_KEYED         NVME_SGL_ID(NVME_SGL_TYPE_KEYED_DATA_BLOCK, NVME_SGL_SUBTYPE_ADDRESS)
#define NVME_SGL_KEYED_INVALIDATE NVME_SGL_ID(NVME_SGL_TYPE_KEYED_DATA_BLOCK, NVME_SGL_SUBTYPE_INVALIDATE_KEY)

/* Identify Controller SGLS bit 2: Keyed SGL Data Block descriptors supported. */
#define NVME_CTRL_SGLS_KEYED (1u << 2)

/* Discovery log entry TSAS for RDMA (Figure 3). */
struct nvmf_rdma_tsas {
	uint8_t  qptype;   /* 1 reliable connected, 2 reliable datagram */
	uint8_t  prtype;   /* 1 none specified, 2 InfiniBand, 3 RoCE, 4 RoCEv2, 5 iWARP */
	uint8_t  cms;      /* 1 RDMA_IP_CM */
	uint8_t  rsvd3[5];
	uint16_t pkey;     /* AF_IB only */
	uint8_t  rsvd10[246];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_rdma_tsas) == 256, "RDMA TSAS is 256 bytes");

#define NVMF_RDMA_QPTYPE_CONNECTED 1u
#define NVMF_RDMA_PRTYPE_NOT_SPECIFIED 1u
#define NVMF_RDMA_PRTYPE_ROCEV2 4u
#define NVMF_RDMA_CMS_RDMA_CM 1u

#endif
