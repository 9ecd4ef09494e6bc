/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zoned Namespace Command Set (NVMe ZNS Command Set Specification 1.1, CSI 02h): opcodes, the
 * I/O command set specific Identify structures (CNS 05h/06h with CSI 02h), zone descriptors,
 * the Report Zones data structure and the Changed Zone List log page (BFh).
 * Statuses B8h..BFh (command specific) are in status.h.
 */
#ifndef UNVME_SPEC_ZNS_H
#define UNVME_SPEC_ZNS_H

#include <stdint.h>
#include "cmd.h"

/* I/O opcodes the ZNS set adds to the NVM ones. */
enum nvme_zns_opc {
	NVME_CMD_ZONE_MGMT_SEND = 0x79,
	NVME_CMD_ZONE_MGMT_RECV = 0x7a,
	NVME_CMD_ZONE_APPEND    = 0x7d,
};

/* Zone Management Send: CDW10/11 SLBA (a zone's ZSLBA), CDW13 ZSA (7:0), Select All (bit 8). */
enum nvme_zone_send_action {
	NVME_ZSA_CLOSE   = 0x01,
	NVME_ZSA_FINISH  = 0x02,
	NVME_ZSA_OPEN    = 0x03,
	NVME_ZSA_RESET   = 0x04,
	NVME_ZSA_OFFLINE = 0x05,
	NVME_ZSA_SET_ZDE = 0x10, /* Set Zone Descriptor Extension (needs ZDES != 0) */
};
#define NVME_ZSA_SELECT_ALL (1u << 8)

/* Zone Management Receive: CDW10/11 SLBA, CDW12 NUMD (0's based dwords), CDW13 ZRA (7:0),
 * ZRASF (15:8) the reporting option, bit 16 Partial Report. */
enum nvme_zone_recv_action {
	NVME_ZRA_REPORT_ZONES     = 0x00,
	NVME_ZRA_EXT_REPORT_ZONES = 0x01,
};
enum nvme_zone_report_opt {
	NVME_ZRAS_ALL       = 0x0,
	NVME_ZRAS_EMPTY     = 0x1,
	NVME_ZRAS_IMP_OPEN  = 0x2,
	NVME_ZRAS_EXP_OPEN  = 0x3,
	NVME_ZRAS_CLOSED    = 0x4,
	NVME_ZRAS_FULL      = 0x5,
	NVME_ZRAS_READ_ONLY = 0x6,
	NVME_ZRAS_OFFLINE   = 0x7,
};
#define NVME_ZRA_PARTIAL (1u << 16)

/* Zone Append: CDW10/11 ZSLBA, CDW12 NLB (15:0, 0's based), FUA (bit 30). The completion's DW0
 * (low) and DW1 (high) hold the LBA of the first block written. */

/* Zone states, as the Zone State field (bits 7:4 of the descriptor's ZS byte) holds them. */
enum nvme_zone_state {
	NVME_ZS_EMPTY     = 0x1,
	NVME_ZS_IMP_OPEN  = 0x2,
	NVME_ZS_EXP_OPEN  = 0x3,
	NVME_ZS_CLOSED    = 0x4,
	NVME_ZS_READ_ONLY = 0xd,
	NVME_ZS_FULL      = 0xe,
	NVME_ZS_OFFLINE   = 0xf,
};
#define NVME_ZONE_TYPE_SEQ_WRITE_REQ 0x2

/* Zone Attributes (ZA) */
#define NVME_ZA_ZFC  (1u << 0) /* zone finished by controller */
#define NVME_ZA_FZR  (1u << 1) /* finish zone recommended */
#define NVME_ZA_RZR  (1u << 2) /* reset zone recommended */
#define NVME_ZA_ZDEV (1u << 7) /* zone descriptor extension valid */

/* Zone Descriptor, 64 bytes */
struct nvme_zone_desc {
	uint8_t  zt;       /* bits 3:0 zone type */
	uint8_t  zs;       /* bits 7:4 zone state */
	uint8_t  za;
	uint8_t  zai;
	uint8_t  rsvd4[4];
	uint64_t zcap;     /* zone capacity, logical blocks */
	uint64_t zslba;
	uint64_t wp;
	uint8_t  rsvd32[32];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_zone_desc) == 64, "zone descriptor is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_zone_desc, zcap) == 8, "ZCAP at 8");
NVME_STATIC_ASSERT(offsetof(struct nvme_zone_desc, wp) == 24, "WP at 24");
static inline uint8_t nvme_zone_desc_state(const struct nvme_zone_desc *d)
{
	return (uint8_t)(d->zs >> 4);
}

/* Report Zones data: a 64-byte header, then the descriptors. */
struct nvme_zone_report_hdr {
	uint64_t nr_zones; /* matching zones (all of them, or those returned with Partial Report) */
	uint8_t  rsvd8[56];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_zone_report_hdr) == 64, "report header is 64 bytes");

/* LBA Format Extension (one per LBA format in the ZNS Identify Namespace), 16 bytes */
struct nvme_zns_lbafe {
	uint64_t zsze;     /* zone size, logical blocks */
	uint8_t  zdes;     /* zone descriptor extension size, 64-byte units */
	uint8_t  rsvd9[7];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_zns_lbafe) == 16, "LBA format extension is 16 bytes");

/* I/O Command Set specific Identify Namespace for ZNS (CNS 05h, CSI 02h), 4096 bytes */
struct nvme_id_ns_zns {
	uint16_t zoc;      /* bit 0 variable zone capacity, bit 1 zone active excursions */
	uint16_t ozcs;     /* bit 0 read across zone boundaries */
	uint32_t mar;      /* maximum active resources, 0's based; FFFFFFFFh no limit */
	uint32_t mor;      /* maximum open resources, 0's based; FFFFFFFFh no limit */
	uint32_t rrl;      /* reset recommended limit, seconds (0: not reported) */
	uint32_t frl;      /* finish recommended limit, seconds */
	uint32_t rrl1, rrl2, rrl3;
	uint32_t frl1, frl2, frl3;
	uint32_t numzrwa;
	uint16_t zrwafg;
	uint16_t zrwasz;
	uint8_t  zrwacap;
	uint8_t  rsvd53[2763];
	struct nvme_zns_lbafe lbafe[64];
	uint8_t  vs[256];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns_zns) == 4096, "ZNS Identify Namespace is 4096 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_zns, mar) == 4, "MAR at 4");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_zns, mor) == 8, "MOR at 8");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_zns, lbafe) == 2816, "LBAFE at 2816");
#define NVME_ZNS_OZCS_RAZB (1u << 0)
#define NVME_ZNS_NO_LIMIT  0xffffffffu

/* I/O Command Set specific Identify Controller for ZNS (CNS 06h, CSI 02h), 4096 bytes */
struct nvme_id_ctrl_zns {
	uint8_t zasl;      /* zone append size limit: 2^n minimum memory pages; 0 = MDTS */
	uint8_t rsvd1[4095];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl_zns) == 4096, "ZNS Identify Controller is 4096 bytes");

/* Changed Zone List log page (BFh, per namespace), 4096 bytes */
#define NVME_LOG_CHANGED_ZONES   0xbf
#define NVME_CHANGED_ZONES_MAX   511u
#define NVME_CHANGED_ZONES_OVERFLOW 0xffffu /* more zones changed than the list holds */
struct nvme_changed_zone_log {
	uint16_t nrzid;    /* identifiers that follow; FFFFh: too many, none listed */
	uint8_t  rsvd2[6];
	uint64_t zid[NVME_CHANGED_ZONES_MAX]; /* ZSLBAs of the zones whose descriptor changed */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_changed_zone_log) == 4096, "changed zone list is 4096 bytes");

/* Asynchronous event: Notice (type 2h), Zone Descriptor Changed (info EFh), log page BFh.
 * Enabled by Asynchronous Event Configuration bit 27; Identify Controller OAES bit 27. */
#define NVME_AEN_TYPE_NOTICE        0x2u
#define NVME_AEN_INFO_ZONE_CHANGED  0xefu
#define NVME_AEC_ZONE_CHANGED       (1u << 27)
#define NVME_OAES_ZONE_CHANGED      (1u << 27)

/* I/O Command Set profile (Identify CNS 1Ch): one 64-bit vector of command sets per
 * combination, bit n = CSI n. */
#define NVME_IOCS_VECTOR(csi) (1ull << (csi))

#endif
