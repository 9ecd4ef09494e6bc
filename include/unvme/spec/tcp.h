/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport binding (NVMe TCP Transport Specification 1.0): PDU headers, flags
 * and fatal error statuses. Every PDU starts with the 8-byte common header; HLEN counts the
 * header without its digest, PDO is where the data starts, PLEN is the whole PDU (header,
 * header digest, padding, data and data digest). Digests are CRC32C, little endian.
 */
#ifndef UNVME_SPEC_TCP_H
#define UNVME_SPEC_TCP_H

#include <stdint.h>

#include "cmd.h"

#define NVME_TCP_PORT           4420
#define NVME_TCP_DISC_PORT      8009
#define NVME_TCP_DIGEST_LEN     4
#define NVME_TCP_ADMIN_CCSZ     8192u  /* in-capsule data the admin queue always accepts */
#define NVME_TCP_MIN_MAXH2CDATA 4096u
#define NVME_TCP_PDA_MAX        31u    /* HPDA/CPDA: 0's based dwords */
#define NVME_TCP_TERM_MAX_DATA  128u   /* bytes of the offending PDU a TermReq echoes */

enum nvme_tcp_pdu_type {
	NVME_TCP_ICREQ        = 0x00,
	NVME_TCP_ICRESP       = 0x01,
	NVME_TCP_H2C_TERM     = 0x02,
	NVME_TCP_C2H_TERM     = 0x03,
	NVME_TCP_CAPSULE_CMD  = 0x04,
	NVME_TCP_CAPSULE_RESP = 0x05,
	NVME_TCP_H2C_DATA     = 0x06,
	NVME_TCP_C2H_DATA     = 0x07,
	NVME_TCP_R2T          = 0x09,
};

/* Common header flags */
#define NVME_TCP_F_HDGST     (1u << 0)  /* a header digest follows the header */
#define NVME_TCP_F_DDGST     (1u << 1)  /* a data digest follows the data */
#define NVME_TCP_F_LAST_PDU  (1u << 2)  /* H2CData / C2HData: last of the transfer */
#define NVME_TCP_F_SUCCESS   (1u << 3)  /* C2HData: the command succeeded, no CapsuleResp */

/* ICReq/ICResp DGST byte */
#define NVME_TCP_DGST_HDR  (1u << 0)
#define NVME_TCP_DGST_DATA (1u << 1)

/* Fatal error status of a TermReq */
enum nvme_tcp_fes {
	NVME_TCP_FES_INVALID_HEADER  = 0x01, /* FEI = byte offset of the bad field */
	NVME_TCP_FES_PDU_SEQUENCE    = 0x02,
	NVME_TCP_FES_HDR_DIGEST      = 0x03, /* FEI = the digest received */
	NVME_TCP_FES_DATA_RANGE      = 0x04, /* data transfer out of range */
	NVME_TCP_FES_DATA_LIMIT      = 0x05, /* data transfer (or R2T) limit exceeded */
	NVME_TCP_FES_UNSUPPORTED     = 0x06, /* unsupported parameter; FEI = its offset */
};

struct nvme_tcp_hdr {
	uint8_t  type;
	uint8_t  flags;
	uint8_t  hlen;
	uint8_t  pdo;
	uint32_t plen;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_hdr) == 8, "common header is 8 bytes");

struct nvme_tcp_icreq {
	struct nvme_tcp_hdr hdr;
	uint16_t pfv;      /* PDU format version, 0 */
	uint8_t  hpda;     /* host PDU data alignment, 0's based dwords */
	uint8_t  dgst;     /* digests the host wants */
	uint32_t maxr2t;   /* R2Ts per command the host accepts, 0's based */
	uint8_t  rsvd16[112];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_icreq) == 128, "ICReq is 128 bytes");

struct nvme_tcp_icresp {
	struct nvme_tcp_hdr hdr;
	uint16_t pfv;
	uint8_t  cpda;     /* controller PDU data alignment, 0's based dwords */
	uint8_t  dgst;     /* digests enabled on the connection */
	uint32_t maxh2cdata; /* bytes of data per H2CData PDU, >= 4096 */
	uint8_t  rsvd16[112];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_icresp) == 128, "ICResp is 128 bytes");

struct nvme_tcp_term {
	struct nvme_tcp_hdr hdr;
	uint16_t fes;
	uint8_t  fei[4];   /* little endian, unaligned */
	uint8_t  rsvd14[10];
	/* up to 128 bytes of the PDU header in error follow */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_term) == 24, "TermReq header is 24 bytes");

struct nvme_tcp_cmd {
	struct nvme_tcp_hdr hdr;
	struct nvme_sqe sqe;
	/* header digest, padding to PDO, in-capsule data, data digest */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_cmd) == 72, "CapsuleCmd header is 72 bytes");

struct nvme_tcp_rsp {
	struct nvme_tcp_hdr hdr;
	struct nvme_cqe cqe;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_rsp) == 24, "CapsuleResp is 24 bytes");

/* H2CData, C2HData and R2T share one layout: CCCID, TTAG (reserved in C2HData), offset and
 * length of the data. */
struct nvme_tcp_data {
	struct nvme_tcp_hdr hdr;
	uint16_t cccid;    /* command capsule CID */
	uint16_t ttag;     /* transfer tag from the R2T (H2CData, R2T) */
	uint32_t datao;    /* offset into the command's data (R2T: R2TO) */
	uint32_t datal;    /* bytes (R2T: R2TL) */
	uint8_t  rsvd20[4];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_tcp_data) == 24, "data and R2T headers are 24 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_tcp_data, datao) == 12, "DATAO at byte 12");

/* The longest header any PDU has, with its digest. */
#define NVME_TCP_MAX_HDR (sizeof(struct nvme_tcp_icreq))

#endif
