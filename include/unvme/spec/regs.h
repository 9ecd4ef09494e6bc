/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe controller registers (NVM Express Base Specification 2.0, section 3.1).
 * Offsets into BAR0 and bit-field accessors. Everything here is a wire fact.
 */
#ifndef UNVME_SPEC_REGS_H
#define UNVME_SPEC_REGS_H

#include <stdint.h>

enum nvme_reg {
	NVME_REG_CAP   = 0x00, /* 64-bit Controller Capabilities */
	NVME_REG_VS    = 0x08, /* Version */
	NVME_REG_INTMS = 0x0c, /* Interrupt Mask Set */
	NVME_REG_INTMC = 0x10, /* Interrupt Mask Clear */
	NVME_REG_CC    = 0x14, /* Controller Configuration */
	NVME_REG_CSTS  = 0x1c, /* Controller Status */
	NVME_REG_NSSR  = 0x20, /* NVM Subsystem Reset */
	NVME_REG_AQA   = 0x24, /* Admin Queue Attributes */
	NVME_REG_ASQ   = 0x28, /* 64-bit Admin SQ Base Address */
	NVME_REG_ACQ   = 0x30, /* 64-bit Admin CQ Base Address */
	NVME_REG_CMBLOC = 0x38,
	NVME_REG_CMBSZ = 0x3c,
	NVME_REG_DBS   = 0x1000, /* first doorbell (SQ0TDBL) */
};

/* CAP (3.1.1) */
#define NVME_CAP_MQES(cap)   ((uint32_t)((cap) & 0xffff))          /* max queue entries, 0's based */
#define NVME_CAP_CQR(cap)    ((uint32_t)(((cap) >> 16) & 0x1))     /* contiguous queues required */
#define NVME_CAP_AMS(cap)    ((uint32_t)(((cap) >> 17) & 0x3))
#define NVME_CAP_TO(cap)     ((uint32_t)(((cap) >> 24) & 0xff))    /* timeout, 500 ms units */
#define NVME_CAP_DSTRD(cap)  ((uint32_t)(((cap) >> 32) & 0xf))     /* doorbell stride 2^(2+DSTRD) */
#define NVME_CAP_NSSRS(cap)  ((uint32_t)(((cap) >> 36) & 0x1))
#define NVME_CAP_CSS(cap)    ((uint32_t)(((cap) >> 37) & 0xff))    /* command sets supported */
#define NVME_CAP_BPS(cap)    ((uint32_t)(((cap) >> 45) & 0x1))
#define NVME_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xf))     /* 2^(12+MPSMIN) */
#define NVME_CAP_MPSMAX(cap) ((uint32_t)(((cap) >> 52) & 0xf))

#define NVME_CAP_CSS_NVM   0x01u  /* bit 37: NVM command set */
#define NVME_CAP_CSS_IOCS  0x40u  /* bit 43: one or more I/O command sets (CC.CSS = 110b) */
#define NVME_CAP_CSS_NOIO  0x80u  /* bit 44: admin only */

static inline uint64_t nvme_cap_make(uint32_t mqes, uint32_t cqr, uint32_t to, uint32_t dstrd,
				     uint32_t css, uint32_t mpsmin, uint32_t mpsmax)
{
	return (uint64_t)(mqes & 0xffff) | ((uint64_t)(cqr & 1) << 16) | ((uint64_t)(to & 0xff) << 24) |
	       ((uint64_t)(dstrd & 0xf) << 32) | ((uint64_t)(css & 0xff) << 37) |
	       ((uint64_t)(mpsmin & 0xf) << 48) | ((uint64_t)(mpsmax & 0xf) << 52);
}

/* VS (3.1.2) */
#define NVME_VS(mjr, mnr, ter) (((uint32_t)(mjr) << 16) | ((uint32_t)(mnr) << 8) | (uint32_t)(ter))
#define NVME_VS_MJR(vs) ((vs) >> 16)
#define NVME_VS_MNR(vs) (((vs) >> 8) & 0xff)
#define NVME_VS_TER(vs) ((vs) & 0xff)

/* CC (3.1.5) */
#define NVME_CC_EN          (1u << 0)
#define NVME_CC_CSS(cc)     (((cc) >> 4) & 0x7)
#define NVME_CC_MPS(cc)     (((cc) >> 7) & 0xf)
#define NVME_CC_AMS(cc)     (((cc) >> 11) & 0x7)
#define NVME_CC_SHN(cc)     (((cc) >> 14) & 0x3)
#define NVME_CC_IOSQES(cc)  (((cc) >> 16) & 0xf)
#define NVME_CC_IOCQES(cc)  (((cc) >> 20) & 0xf)
#define NVME_CC_CSS_SET(v)    (((uint32_t)(v) & 0x7) << 4)
#define NVME_CC_MPS_SET(v)    (((uint32_t)(v) & 0xf) << 7)
#define NVME_CC_AMS_SET(v)    (((uint32_t)(v) & 0x7) << 11)
#define NVME_CC_SHN_SET(v)    (((uint32_t)(v) & 0x3) << 14)
#define NVME_CC_IOSQES_SET(v) (((uint32_t)(v) & 0xf) << 16)
#define NVME_CC_IOCQES_SET(v) (((uint32_t)(v) & 0xf) << 20)
#define NVME_CC_CSS_NVM   0x0  /* NVM command set */
#define NVME_CC_CSS_IOCS  0x6  /* all supported I/O command sets */
#define NVME_CC_CSS_ADMIN 0x7  /* admin command set only */
#define NVME_CC_SHN_NONE   0x0
#define NVME_CC_SHN_NORMAL 0x1
#define NVME_CC_SHN_ABRUPT 0x2

/* CSTS (3.1.6) */
#define NVME_CSTS_RDY      (1u << 0)
#define NVME_CSTS_CFS      (1u << 1)  /* controller fatal status */
#define NVME_CSTS_SHST(c)  (((c) >> 2) & 0x3)
#define NVME_CSTS_SHST_SET(v) (((uint32_t)(v) & 0x3) << 2)
#define NVME_CSTS_NSSRO    (1u << 4)
#define NVME_CSTS_PP       (1u << 5)
#define NVME_CSTS_SHST_NORMAL     0x0
#define NVME_CSTS_SHST_OCCURRING  0x1
#define NVME_CSTS_SHST_COMPLETE   0x2

/* NSSR: writing this value requests an NVM subsystem reset ("NVMe") */
#define NVME_NSSR_RESET 0x4E564D65u

/* AQA (3.1.8): sizes are 0's based */
#define NVME_AQA_ASQS(aqa) ((aqa) & 0xfff)
#define NVME_AQA_ACQS(aqa) (((aqa) >> 16) & 0xfff)
#define NVME_AQA_MAKE(sq_entries, cq_entries) \
	((((uint32_t)(sq_entries) - 1) & 0xfff) | ((((uint32_t)(cq_entries) - 1) & 0xfff) << 16))

/* A snapshot of the controller registers a host reads (for printing and diagnostics). */
struct nvme_regs_snapshot {
	uint64_t cap;
	uint32_t vs;
	uint32_t cc;
	uint32_t csts;
	uint32_t aqa;
	uint64_t asq;
	uint64_t acq;
};

/* Doorbells (3.1.24/25): SQy tail at 0x1000 + (2y) * stride, CQy head at 0x1000 + (2y+1) * stride */
static inline uint32_t nvme_sq_doorbell_offset(uint32_t qid, uint32_t dstrd)
{
	return NVME_REG_DBS + (2u * qid) * (4u << dstrd);
}
static inline uint32_t nvme_cq_doorbell_offset(uint32_t qid, uint32_t dstrd)
{
	return NVME_REG_DBS + (2u * qid + 1u) * (4u << dstrd);
}

#endif
