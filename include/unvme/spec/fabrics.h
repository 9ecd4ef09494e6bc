/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe over Fabrics (NVMe Base 2.0 section 6 "Fabrics Command Set", NVMe over Fabrics 1.1):
 * the fabrics commands (Connect, Property Get/Set, Authentication Send/Receive, Disconnect),
 * the Connect data, fabrics statuses, the Discovery log page and the fabrics fields of
 * Identify Controller. Transport bindings (TCP) are in tcp.h, DH-HMAC-CHAP messages in auth.h.
 */
#ifndef UNVME_SPEC_FABRICS_H
#define UNVME_SPEC_FABRICS_H

#include <stdint.h>

#include "cmd.h"

#define NVME_FABRICS_OPC 0x7f /* every fabrics command; the type is in FCTYPE (byte 4) */

enum nvmf_fctype {
	NVMF_FCTYPE_PROPERTY_SET = 0x00,
	NVMF_FCTYPE_CONNECT      = 0x01,
	NVMF_FCTYPE_PROPERTY_GET = 0x04,
	NVMF_FCTYPE_AUTH_SEND    = 0x05,
	NVMF_FCTYPE_AUTH_RECV    = 0x06,
	NVMF_FCTYPE_DISCONNECT   = 0x08,
};

/* SGL descriptor, 16 bytes (Base 2.0 4.3.2): the DPTR of every fabrics capsule. */
struct nvme_sgl_desc {
	uint64_t addr;     /* address, or offset into the in-capsule data */
	uint32_t len;
	uint8_t  rsvd12[3];
	uint8_t  type;     /* 7:4 descriptor type, 3:0 subtype */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_sgl_desc) == 16, "SGL descriptor is 16 bytes");

#define NVME_SGL_TYPE_DATA_BLOCK      0x0
#define NVME_SGL_TYPE_TRANSPORT_BLOCK 0x5
#define NVME_SGL_SUBTYPE_ADDRESS      0x0
#define NVME_SGL_SUBTYPE_OFFSET       0x1
#define NVME_SGL_SUBTYPE_TRANSPORT    0xa
#define NVME_SGL_ID(type, sub) ((uint8_t)(((type) << 4) | (sub)))
/* Data that follows the command inside the capsule (in-capsule data). */
#define NVME_SGL_INCAPSULE NVME_SGL_ID(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET)
/* Data moved by the transport (TCP: C2HData, R2T + H2CData). */
#define NVME_SGL_TRANSPORT NVME_SGL_ID(NVME_SGL_TYPE_TRANSPORT_BLOCK, NVME_SGL_SUBTYPE_TRANSPORT)

/* Fabrics capsules use SGLs for the data pointer: PSDT 01b in the command's flags. */
#define NVME_CMD_FLAGS_PSDT_SGL (1u << 6)

/* The common layout: opcode 7Fh, CID, FCTYPE, SGL1, 24 bytes of fabrics specific fields. */
struct nvmf_cmd {
	uint8_t  opc;
	uint8_t  flags;
	uint16_t cid;
	uint8_t  fctype;
	uint8_t  rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint8_t  fcs[24];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_cmd) == 64, "fabrics command is 64 bytes");

struct nvmf_connect_cmd {
	uint8_t  opc;
	uint8_t  flags;
	uint16_t cid;
	uint8_t  fctype;
	uint8_t  rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint16_t recfmt;   /* byte 40: record format, 0 */
	uint16_t qid;      /* byte 42 */
	uint16_t sqsize;   /* byte 44: 0's based */
	uint8_t  cattr;    /* byte 46: 1:0 priority class, 2 disable SQ flow control */
	uint8_t  rsvd47;
	uint32_t kato;     /* byte 48: keep alive timeout in ms (admin queue), 0 = none */
	uint8_t  rsvd52[12];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_connect_cmd) == 64, "Connect is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvmf_connect_cmd, qid) == 42, "QID at byte 42");
NVME_STATIC_ASSERT(offsetof(struct nvmf_connect_cmd, kato) == 48, "KATO at byte 48");

#define NVMF_CONNECT_CATTR_DISABLE_SQFLOW (1u << 2)

/* Connect data, 1024 bytes, host to controller. */
struct nvmf_connect_data {
	uint8_t  hostid[16];
	uint16_t cntlid;         /* FFFFh: any controller (dynamic model) on the admin queue */
	uint8_t  rsvd18[238];
	char     subnqn[256];
	char     hostnqn[256];
	uint8_t  rsvd768[256];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_connect_data) == 1024, "Connect data is 1024 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvmf_connect_data, subnqn) == 256, "SUBNQN at byte 256");
NVME_STATIC_ASSERT(offsetof(struct nvmf_connect_data, hostnqn) == 512, "HOSTNQN at byte 512");

#define NVMF_CNTLID_DYNAMIC 0xffffu
#define NVMF_CNTLID_MAX     0xffefu

/* Connect completion DW0: on success 15:0 CNTLID and the authentication requirements. */
#define NVMF_CONNECT_RSP_CNTLID(dw0) ((uint16_t)((dw0) & 0xffffu))
#define NVMF_CONNECT_AUTHREQ_ATR  (1u << 17) /* an authentication transaction is required */
#define NVMF_CONNECT_AUTHREQ_ASCR (1u << 18) /* ... with a secure channel (not supported) */
/* Connect Invalid Parameters DW0: IPO (byte offset of the invalid field) in bits 15:0, IATTR in
 * bits 23:16 (1 = the field is in the Connect data, 0 = in the command). */
#define NVMF_CONNECT_INVALID_PARAM(in_data, offset) \
	((uint32_t)((offset) & 0xffffu) | ((in_data) ? (1u << 16) : 0u))

struct nvmf_property_cmd {
	uint8_t  opc;
	uint8_t  flags;
	uint16_t cid;
	uint8_t  fctype;
	uint8_t  rsvd5[35];
	uint8_t  attrib;   /* byte 40: 2:0 size, 0 = 4 bytes, 1 = 8 bytes */
	uint8_t  rsvd41[3];
	uint32_t ofst;     /* byte 44: register offset */
	uint64_t value;    /* byte 48: Property Set only */
	uint8_t  rsvd56[8];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_property_cmd) == 64, "Property Get/Set is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvmf_property_cmd, ofst) == 44, "OFST at byte 44");
NVME_STATIC_ASSERT(offsetof(struct nvmf_property_cmd, value) == 48, "VALUE at byte 48");
#define NVMF_PROP_SIZE_4 0u
#define NVMF_PROP_SIZE_8 1u

struct nvmf_auth_cmd {
	uint8_t  opc;
	uint8_t  flags;
	uint16_t cid;
	uint8_t  fctype;   /* Authentication Send or Receive */
	uint8_t  rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint8_t  rsvd40;
	uint8_t  spsp0;    /* byte 41 */
	uint8_t  spsp1;    /* byte 42 */
	uint8_t  secp;     /* byte 43: E9h for NVMe in-band authentication */
	uint32_t len;      /* byte 44: TL (send) or AL (receive) in bytes */
	uint8_t  rsvd48[16];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_auth_cmd) == 64, "Authentication Send/Receive is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvmf_auth_cmd, secp) == 43, "SECP at byte 43");

struct nvmf_disconnect_cmd {
	uint8_t  opc;
	uint8_t  flags;
	uint16_t cid;
	uint8_t  fctype;
	uint8_t  rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint16_t recfmt;   /* byte 40 */
	uint8_t  rsvd42[22];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_disconnect_cmd) == 64, "Disconnect is 64 bytes");

/* Fabrics command specific statuses (SCT 1). */
enum nvmf_sc {
	NVMF_SC_INCOMPATIBLE_FORMAT = 0x80,
	NVMF_SC_CTRL_BUSY           = 0x81,
	NVMF_SC_CONNECT_INVALID     = 0x82, /* Connect Invalid Parameters */
	NVMF_SC_RESTART_DISCOVERY   = 0x83,
	NVMF_SC_INVALID_HOST        = 0x84, /* Connect Invalid Host */
	NVMF_SC_INVALID_QUEUE_TYPE  = 0x85,
	NVMF_SC_DISCOVER_RESTART    = 0x90,
	NVMF_SC_AUTH_REQUIRED       = 0x91,
};

/* Keep Alive Timeout command status (SCT 0, 19h) is NVME_SC_KA_EXPIRED in status.h. */

/* ---- Discovery ---- */

#define NVMF_DISCOVERY_NQN "nqn.2014-08.org.nvmexpress.discovery"
#define NVMF_NQN_MAX 223              /* characters, the terminator not counted */
#define NVMF_NQN_FIELD 256
#define NVME_LOG_DISCOVERY 0x70

enum nvmf_trtype { NVMF_TRTYPE_RDMA = 1, NVMF_TRTYPE_FC = 2, NVMF_TRTYPE_TCP = 3 };
enum nvmf_adrfam { NVMF_ADRFAM_IPV4 = 1, NVMF_ADRFAM_IPV6 = 2, NVMF_ADRFAM_IB = 3 /* InfiniBand (AF_IB), RDMA only */ };
enum nvmf_subtype {
	NVMF_SUBTYPE_DISCOVERY_REFERRAL = 1,
	NVMF_SUBTYPE_NVME               = 2,
	NVMF_SUBTYPE_DISCOVERY_CURRENT  = 3,
};
/* TREQ 1:0 secure channel: 0 not specified, 1 required, 2 not required; bit 2: the
 * controller supports turning off SQ flow control. */
#define NVMF_TREQ_SECURE_REQUIRED     0x1u
#define NVMF_TREQ_SECURE_NOT_REQUIRED 0x2u
#define NVMF_TREQ_DISABLE_SQFLOW      0x4u
/* TSAS for TCP: byte 0 SECTYPE (NVMe TCP Transport 1.1 figure "TSAS for TCP"). */
#define NVMF_TCP_SECTYPE_NONE  0u
#define NVMF_TCP_SECTYPE_TLS12 1u
#define NVMF_TCP_SECTYPE_TLS13 2u

struct nvmf_disc_log_entry {
	uint8_t  trtype;
	uint8_t  adrfam;
	uint8_t  subtype;
	uint8_t  treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t  rsvd12[20];
	char     trsvcid[32];
	uint8_t  rsvd64[192];
	char     subnqn[256];
	char     traddr[256];
	uint8_t  tsas[256];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_disc_log_entry) == 1024, "discovery log entry is 1024 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvmf_disc_log_entry, trsvcid) == 32, "TRSVCID at byte 32");
NVME_STATIC_ASSERT(offsetof(struct nvmf_disc_log_entry, subnqn) == 256, "SUBNQN at byte 256");
NVME_STATIC_ASSERT(offsetof(struct nvmf_disc_log_entry, traddr) == 512, "TRADDR at byte 512");

struct nvmf_disc_log_hdr {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t  rsvd18[1006];
	/* numrec entries of struct nvmf_disc_log_entry follow */
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_disc_log_hdr) == 1024, "discovery log header is 1024 bytes");

/* ---- Identify Controller, fabrics part (bytes 1792..2047, nvme_id_ctrl.nvmeof) ---- */

struct nvmf_id_ctrl_fabrics {
	uint32_t ioccsz;   /* I/O queue command capsule size, 16-byte units (4 = no in-capsule data) */
	uint32_t iorcsz;   /* I/O queue response capsule size, 16-byte units */
	uint16_t icdoff;   /* in-capsule data offset, 16-byte units */
	uint8_t  fcatt;    /* bit 0: static controller model */
	uint8_t  msdbd;    /* maximum SGL data block descriptors */
	uint16_t ofcs;     /* optional fabrics commands: bit 0 Disconnect */
	uint8_t  rsvd14[242];
};
NVME_STATIC_ASSERT(sizeof(struct nvmf_id_ctrl_fabrics) == 256, "fabrics part of Identify is 256 bytes");

#define NVME_CTRL_TYPE_IO        1
#define NVME_CTRL_TYPE_DISCOVERY 2
#define NVME_CTRL_TYPE_ADMIN     3

/* SGLS (Identify Controller byte 536): bit 0 SGLs supported (with no alignment requirement),
 * bit 2 Keyed SGL, bit 20 Offset for in-capsule data. */
#define NVME_CTRL_SGLS_SUPPORTED (1u << 0)
#define NVME_CTRL_SGLS_OFFSET    (1u << 20)

#endif
