/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe submission and completion queue entries and opcodes
 * (NVMe Base 2.0 sections 4.2, 4.6, 5; NVM Command Set 1.0 section 3).
 */
#ifndef UNVME_SPEC_CMD_H
#define UNVME_SPEC_CMD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define NVME_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define NVME_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* Submission Queue Entry, 64 bytes (Figure "Common Command Format"). */
struct nvme_sqe {
	uint8_t  opc;
	uint8_t  flags;   /* bits 1:0 FUSE, bits 7:6 PSDT (0 = PRPs) */
	uint16_t cid;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	uint64_t prp1;    /* DPTR, PRP entry 1 */
	uint64_t prp2;    /* DPTR, PRP entry 2 or PRP list pointer */
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_sqe) == 64, "SQE is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, prp1) == 24, "DPTR at byte 24");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, cdw10) == 40, "CDW10 at byte 40");

/* Completion Queue Entry, 16 bytes. */
struct nvme_cqe {
	uint32_t dw0;     /* command specific */
	uint32_t dw1;
	uint16_t sqhd;    /* SQ head pointer */
	uint16_t sqid;
	uint16_t cid;
	uint16_t status;  /* bit 0 phase tag, bits 15:1 status field */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_cqe) == 16, "CQE is 16 bytes");

/* Status field decoding (Figure "Completion Queue Entry: Status Field"), on the 16-bit word
 * that includes the phase tag in bit 0. */
#define NVME_CQE_PHASE(st) ((st) & 0x1u)
#define NVME_CQE_SC(st)    (((st) >> 1) & 0xffu)
#define NVME_CQE_SCT(st)   (((st) >> 9) & 0x7u)
#define NVME_CQE_CRD(st)   (((st) >> 12) & 0x3u)
#define NVME_CQE_MORE(st)  (((st) >> 14) & 0x1u)
#define NVME_CQE_DNR(st)   (((st) >> 15) & 0x1u)
#define NVME_CQE_DNR_BIT   0x8000u
/* Builds the status word (without phase) from type and code. */
#define NVME_CQE_STATUS(sct, sc) ((uint16_t)((((sct) & 0x7u) << 9) | (((sc) & 0xffu) << 1)))

#define NVME_SQE_FUSE(flags) ((flags) & 0x3u)
#define NVME_SQE_PSDT(flags) (((flags) >> 6) & 0x3u)

#define NVME_SQES_LOG2 6 /* 64-byte SQ entries: CC.IOSQES */
#define NVME_CQES_LOG2 4 /* 16-byte CQ entries: CC.IOCQES */

/* Admin command opcodes (Base 2.0, Figure "Opcodes for Admin Commands") */
enum nvme_admin_opc {
	NVME_ADM_DELETE_SQ        = 0x00,
	NVME_ADM_CREATE_SQ        = 0x01,
	NVME_ADM_GET_LOG_PAGE     = 0x02,
	NVME_ADM_DELETE_CQ        = 0x04,
	NVME_ADM_CREATE_CQ        = 0x05,
	NVME_ADM_IDENTIFY         = 0x06,
	NVME_ADM_ABORT            = 0x08,
	NVME_ADM_SET_FEATURES     = 0x09,
	NVME_ADM_GET_FEATURES     = 0x0a,
	NVME_ADM_ASYNC_EVENT      = 0x0c,
	NVME_ADM_NS_MGMT          = 0x0d,
	NVME_ADM_FW_COMMIT        = 0x10,
	NVME_ADM_FW_DOWNLOAD      = 0x11,
	NVME_ADM_DEV_SELF_TEST    = 0x14,
	NVME_ADM_NS_ATTACH        = 0x15,
	NVME_ADM_KEEP_ALIVE       = 0x18,
	NVME_ADM_DIRECTIVE_SEND   = 0x19,
	NVME_ADM_DIRECTIVE_RECV   = 0x1a,
	NVME_ADM_VIRT_MGMT        = 0x1c,
	NVME_ADM_NVME_MI_SEND     = 0x1d,
	NVME_ADM_NVME_MI_RECV     = 0x1e,
	NVME_ADM_DOORBELL_BUF_CFG = 0x7c,
	NVME_ADM_FORMAT_NVM       = 0x80,
	NVME_ADM_SECURITY_SEND    = 0x81,
	NVME_ADM_SECURITY_RECV    = 0x82,
	NVME_ADM_SANITIZE         = 0x84,
	NVME_ADM_GET_LBA_STATUS   = 0x86,
};

/* NVM command set I/O opcodes (NVM Command Set 1.0, Figure "Opcodes for NVM Commands") */
enum nvme_nvm_opc {
	NVME_CMD_FLUSH         = 0x00,
	NVME_CMD_WRITE         = 0x01,
	NVME_CMD_READ          = 0x02,
	NVME_CMD_WRITE_UNCOR   = 0x04,
	NVME_CMD_COMPARE       = 0x05,
	NVME_CMD_WRITE_ZEROES  = 0x08,
	NVME_CMD_DSM           = 0x09,
	NVME_CMD_VERIFY        = 0x0c,
	NVME_CMD_RESV_REGISTER = 0x0d,
	NVME_CMD_RESV_REPORT   = 0x0e,
	NVME_CMD_RESV_ACQUIRE  = 0x11,
	NVME_CMD_RESV_RELEASE  = 0x15,
	NVME_CMD_COPY          = 0x19,
};

/* Read/Write/Compare/Write Zeroes: CDW10-11 SLBA, CDW12 bits 15:0 NLB (0's based). */
#define NVME_RW_FUA   (1u << 30)  /* CDW12 */
#define NVME_RW_LR    (1u << 31)  /* CDW12 limited retry */
#define NVME_WZ_DEAC  (1u << 25)  /* Write Zeroes: deallocate (CDW12) */

/* Dataset Management (NVM 1.0, 3.2.3): CDW10 NR (0's based), CDW11 attributes */
#define NVME_DSM_ATTR_IDR (1u << 0)
#define NVME_DSM_ATTR_IDW (1u << 1)
#define NVME_DSM_ATTR_AD  (1u << 2)  /* deallocate */
struct nvme_dsm_range {
	uint32_t cattr;
	uint32_t nlb;   /* 1's based length in logical blocks */
	uint64_t slba;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_dsm_range) == 16, "DSM range is 16 bytes");
#define NVME_DSM_MAX_RANGES 256

/* Create I/O CQ (Base 2.0, 5.4): CDW10 QSIZE(31:16, 0's based)|QID(15:0); CDW11 IV(31:16), IEN bit 1, PC bit 0 */
#define NVME_CREATE_CQ_PC  (1u << 0)
#define NVME_CREATE_CQ_IEN (1u << 1)
/* Create I/O SQ (5.5): CDW11 CQID(31:16), QPRIO(2:1), PC bit 0 */
#define NVME_CREATE_SQ_PC  (1u << 0)

/* Identify CNS values (Base 2.0, Figure "Identify - CNS Values") */
enum nvme_identify_cns {
	NVME_CNS_NS              = 0x00,
	NVME_CNS_CTRL            = 0x01,
	NVME_CNS_ACTIVE_NS_LIST  = 0x02,
	NVME_CNS_NS_DESC_LIST    = 0x03,
	NVME_CNS_NVMSET_LIST     = 0x04,
	NVME_CNS_CSI_NS          = 0x05,
	NVME_CNS_CSI_CTRL        = 0x06,
	NVME_CNS_CSI_ACTIVE_NS_LIST = 0x07,
	NVME_CNS_ALLOC_NS_LIST   = 0x10,
	NVME_CNS_NS_CTRL_LIST    = 0x12,  /* controllers attached to NSID */
	NVME_CNS_CTRL_LIST       = 0x13,  /* controllers in the NVM subsystem */
	NVME_CNS_CSI_ALLOC_NS_LIST = 0x1a,
	NVME_CNS_IOCS            = 0x1c,
};

/* Command Set Identifiers */
enum nvme_csi {
	NVME_CSI_NVM = 0x00,
	NVME_CSI_KV  = 0x01,
	NVME_CSI_ZNS = 0x02,
};

/* Firmware Commit (5.11): CDW10 BPID(31) CA(5:3) FS(2:0) */
enum nvme_fw_commit_action {
	NVME_FW_CA_REPLACE            = 0x0, /* download to slot, do not activate */
	NVME_FW_CA_REPLACE_ACTIVATE   = 0x1, /* download to slot, activate at next reset */
	NVME_FW_CA_ACTIVATE           = 0x2, /* activate existing image at next reset */
	NVME_FW_CA_ACTIVATE_NOW       = 0x3, /* activate immediately, no reset */
};

/* Format NVM (5.14): CDW10 LBAF(3:0) MSET(4) PI(7:5) PIL(8) SES(11:9) LBAFU(13:12) */
enum nvme_format_ses {
	NVME_FMT_SES_NONE   = 0,
	NVME_FMT_SES_USER   = 1, /* user data erase */
	NVME_FMT_SES_CRYPTO = 2,
};

/* Get Log Page (5.16): CDW10 LID(7:0) LSP(14:8) RAE(15) NUMDL(31:16); CDW11 NUMDU(15:0);
 * CDW12/13 LPO (bytes); CDW14 CSI(31:24) */
#define NVME_LOG_NUMD(len_bytes) ((uint32_t)((len_bytes) / 4 - 1))

/* Abort (5.1): CDW10 CID(31:16) SQID(15:0); DW0 bit 0 set = command was NOT aborted */

#endif

#ifndef UNVME_SPEC_CMD_VENDOR
#define UNVME_SPEC_CMD_VENDOR
/*
 * Vendor-specific admin command of uNVMe's emulated controller (admin opcodes C0h..FFh are
 * vendor specific): fault injection, so that the driver's error paths can be tested against
 * a device that really fails. CDW10 = enum nvme_emu_fault, CDW11 = count where it applies.
 * A real controller answers this opcode with Invalid Command Opcode.
 */
#define NVME_ADM_EMU_FAULT 0xc1
enum nvme_emu_fault {
	NVME_EMU_FAULT_NONE        = 0, /* clear all injected faults */
	NVME_EMU_FAULT_FATAL       = 1, /* set CSTS.CFS now; the controller stops processing until reset */
	NVME_EMU_FAULT_DROP        = 2, /* the next CDW11 I/O commands are fetched but never completed */
	NVME_EMU_FAULT_MEDIA_ERROR = 3, /* the next CDW11 reads/writes fail with a media error */
	NVME_EMU_FAULT_SWALLOW     = 4, /* as DROP, but Abort cannot find them either: lost for good
					 * until their SQ is deleted or the controller reset; with
					 * CDW12 bit 0 (NVME_EMU_FAULT_ADMIN) the next admin commands */
	NVME_EMU_FAULT_ZONE_READ_ONLY = 5, /* zoned namespace NSID: the zone holding LBA CDW12/13
					    * becomes Read Only (worn media), a Zone Descriptor
					    * Changed event follows */
};
#define NVME_EMU_FAULT_ADMIN 0x1u
#endif
