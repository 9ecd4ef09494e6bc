/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe status code types and status codes (NVMe Base 2.0 section 4.6.1.2;
 * NVM Command Set 1.0; Key Value Command Set 1.0; Zoned Namespace Command Set 1.1).
 */
#ifndef UNVME_SPEC_STATUS_H
#define UNVME_SPEC_STATUS_H

#include <stdint.h>

enum nvme_sct {
	NVME_SCT_GENERIC   = 0x0,
	NVME_SCT_CMD       = 0x1, /* command specific */
	NVME_SCT_MEDIA     = 0x2, /* media and data integrity errors */
	NVME_SCT_PATH      = 0x3,
	NVME_SCT_VENDOR    = 0x7,
};

/* Generic command status (SCT 0) */
enum nvme_sc_generic {
	NVME_SC_SUCCESS                 = 0x00,
	NVME_SC_INVALID_OPCODE          = 0x01,
	NVME_SC_INVALID_FIELD           = 0x02,
	NVME_SC_CID_CONFLICT            = 0x03,
	NVME_SC_DATA_TRANSFER_ERROR     = 0x04,
	NVME_SC_ABORTED_POWER_LOSS      = 0x05,
	NVME_SC_INTERNAL                = 0x06,
	NVME_SC_ABORT_REQUESTED         = 0x07,
	NVME_SC_ABORTED_SQ_DELETION     = 0x08,
	NVME_SC_ABORTED_FAILED_FUSED    = 0x09,
	NVME_SC_ABORTED_MISSING_FUSED   = 0x0a,
	NVME_SC_INVALID_NS_OR_FORMAT    = 0x0b,
	NVME_SC_CMD_SEQ_ERROR           = 0x0c,
	NVME_SC_INVALID_SGL_SEG_DESC    = 0x0d,
	NVME_SC_INVALID_NUM_SGL_DESC    = 0x0e,
	NVME_SC_DATA_SGL_LEN_INVALID    = 0x0f,
	NVME_SC_MD_SGL_LEN_INVALID      = 0x10,
	NVME_SC_SGL_DESC_TYPE_INVALID   = 0x11,
	NVME_SC_INVALID_CMB_USE         = 0x12,
	NVME_SC_PRP_OFFSET_INVALID      = 0x13,
	NVME_SC_ATOMIC_WU_EXCEEDED      = 0x14,
	NVME_SC_OPERATION_DENIED        = 0x15,
	NVME_SC_SGL_OFFSET_INVALID      = 0x16,
	NVME_SC_HOSTID_INCONSISTENT     = 0x18,
	NVME_SC_KA_EXPIRED              = 0x19,
	NVME_SC_KA_INVALID              = 0x1a,
	NVME_SC_ABORTED_PREEMPT         = 0x1b,
	NVME_SC_SANITIZE_FAILED         = 0x1c,
	NVME_SC_SANITIZE_IN_PROGRESS    = 0x1d,
	NVME_SC_SGL_DATA_BLK_GRAN       = 0x1e,
	NVME_SC_CMD_NOT_SUP_CMB_QUEUE   = 0x1f,
	NVME_SC_NS_WRITE_PROTECTED      = 0x20,
	NVME_SC_CMD_INTERRUPTED         = 0x21,
	NVME_SC_TRANSIENT_TRANSPORT     = 0x22,
	NVME_SC_PROHIBITED_BY_LOCKDOWN  = 0x23,
	NVME_SC_ADMIN_MEDIA_NOT_READY   = 0x24,
	/* I/O command set specific generic status (0x80..0xbf) */
	NVME_SC_LBA_OUT_OF_RANGE        = 0x80,
	NVME_SC_CAPACITY_EXCEEDED       = 0x81,
	NVME_SC_NS_NOT_READY            = 0x82,
	NVME_SC_RESERVATION_CONFLICT    = 0x83,
	NVME_SC_FORMAT_IN_PROGRESS      = 0x84,
	/* Key Value command set (KV 1.0 section 4.1.1.1) */
	NVME_SC_KV_INVALID_VALUE_SIZE   = 0x85,
	NVME_SC_KV_INVALID_KEY_SIZE     = 0x86,
	NVME_SC_KV_KEY_NOT_EXIST        = 0x87,
	NVME_SC_KV_UNRECOVERED          = 0x88,
	NVME_SC_KV_KEY_EXISTS           = 0x89,
};

/* Command specific status (SCT 1) */
enum nvme_sc_cmd {
	NVME_SC_CQ_INVALID              = 0x00,
	NVME_SC_INVALID_QID             = 0x01,
	NVME_SC_INVALID_QSIZE           = 0x02,
	NVME_SC_ABORT_LIMIT             = 0x03,
	NVME_SC_AER_LIMIT               = 0x05,
	NVME_SC_INVALID_FW_SLOT         = 0x06,
	NVME_SC_INVALID_FW_IMAGE        = 0x07,
	NVME_SC_INVALID_INT_VECTOR      = 0x08,
	NVME_SC_INVALID_LOG_PAGE        = 0x09,
	NVME_SC_INVALID_FORMAT          = 0x0a,
	NVME_SC_FW_NEEDS_CONV_RESET     = 0x0b,
	NVME_SC_INVALID_QUEUE_DELETION  = 0x0c,
	NVME_SC_FEATURE_NOT_SAVEABLE    = 0x0d,
	NVME_SC_FEATURE_NOT_CHANGEABLE  = 0x0e,
	NVME_SC_FEATURE_NOT_NS_SPECIFIC = 0x0f,
	NVME_SC_FW_NEEDS_SUBSYS_RESET   = 0x10,
	NVME_SC_FW_NEEDS_RESET          = 0x11,
	NVME_SC_FW_NEEDS_MAX_TIME       = 0x12,
	NVME_SC_FW_ACTIVATION_PROHIBITED = 0x13,
	NVME_SC_OVERLAPPING_RANGE       = 0x14,
	NVME_SC_NS_INSUFFICIENT_CAP     = 0x15,
	NVME_SC_NS_ID_UNAVAILABLE       = 0x16,
	NVME_SC_NS_ALREADY_ATTACHED     = 0x18,
	NVME_SC_NS_IS_PRIVATE           = 0x19,
	NVME_SC_NS_NOT_ATTACHED         = 0x1a,
	NVME_SC_THIN_PROV_NOT_SUP       = 0x1b,
	NVME_SC_CTRL_LIST_INVALID       = 0x1c,
	NVME_SC_SELF_TEST_IN_PROGRESS   = 0x1d,
	NVME_SC_BP_WRITE_PROHIBITED     = 0x1e,
	NVME_SC_INVALID_CTRL_ID         = 0x1f,
	/* NVM command set specific (0x80..) */
	NVME_SC_CONFLICTING_ATTRS       = 0x80,
	NVME_SC_INVALID_PI              = 0x81,
	NVME_SC_READ_ONLY_RANGE         = 0x82,
	/* Zoned namespaces */
	NVME_SC_ZONE_BOUNDARY_ERROR     = 0xb8,
	NVME_SC_ZONE_FULL               = 0xb9,
	NVME_SC_ZONE_READ_ONLY          = 0xba,
	NVME_SC_ZONE_OFFLINE            = 0xbb,
	NVME_SC_ZONE_INVALID_WRITE      = 0xbc,
	NVME_SC_ZONE_TOO_MANY_ACTIVE    = 0xbd,
	NVME_SC_ZONE_TOO_MANY_OPEN      = 0xbe,
	NVME_SC_ZONE_INVALID_TRANSITION = 0xbf,
};

/* Media and data integrity errors (SCT 2) */
enum nvme_sc_media {
	NVME_SC_WRITE_FAULT             = 0x80,
	NVME_SC_UNRECOVERED_READ        = 0x81,
	NVME_SC_GUARD_CHECK             = 0x82,
	NVME_SC_APPTAG_CHECK            = 0x83,
	NVME_SC_REFTAG_CHECK            = 0x84,
	NVME_SC_COMPARE_FAILURE         = 0x85,
	NVME_SC_ACCESS_DENIED           = 0x86,
	NVME_SC_DEALLOCATED_BLOCK       = 0x87,
};

/* Path related status (SCT 3) */
enum nvme_sc_path {
	NVME_SC_INTERNAL_PATH_ERROR     = 0x00,
	NVME_SC_ANA_PERSISTENT_LOSS     = 0x01,
	NVME_SC_ANA_INACCESSIBLE        = 0x02,
	NVME_SC_ANA_TRANSITION          = 0x03,
	NVME_SC_CTRL_PATH_ERROR         = 0x60,
	NVME_SC_HOST_PATH_ERROR         = 0x70,
	NVME_SC_ABORTED_BY_HOST         = 0x71,
};

/*
 * A status as the library reports it: (SCT << 8) | SC, always positive and non-zero for an
 * error. Functions that return "int status" return 0 on success, this value for an NVMe
 * error, and a negative errno for a host-side failure.
 */
#define NVME_STATUS(sct, sc) ((int)((((unsigned)(sct) & 0x7u) << 8) | ((unsigned)(sc) & 0xffu)))
#define NVME_STATUS_SCT(s) (((unsigned)(s) >> 8) & 0x7u)
#define NVME_STATUS_SC(s)  ((unsigned)(s) & 0xffu)
/* From a completion's status word (with phase bit) to the library's form. */
#define NVME_STATUS_FROM_CQE(st) NVME_STATUS(((st) >> 9) & 0x7u, ((st) >> 1) & 0xffu)

#endif
