/* SPDX-License-Identifier: BSD-3-Clause */
/* Feature identifiers (NVMe Base 2.0 section 5.27.1). */
#ifndef UNVME_SPEC_FEATURES_H
#define UNVME_SPEC_FEATURES_H

enum nvme_feat_id {
	NVME_FEAT_ARBITRATION     = 0x01, /* DW11: AB(2:0) LPW(15:8) MPW(23:16) HPW(31:24) */
	NVME_FEAT_POWER_MGMT      = 0x02,
	NVME_FEAT_LBA_RANGE       = 0x03,
	NVME_FEAT_TEMP_THRESH     = 0x04,
	NVME_FEAT_ERR_RECOVERY    = 0x05,
	NVME_FEAT_VOLATILE_WC     = 0x06, /* DW11 bit 0 WCE */
	NVME_FEAT_NUM_QUEUES      = 0x07, /* DW11: NSQR(15:0) NCQR(31:16), 0's based; DW0 the same, allocated */
	NVME_FEAT_IRQ_COALESCE    = 0x08,
	NVME_FEAT_IRQ_CONFIG      = 0x09,
	NVME_FEAT_WRITE_ATOMIC    = 0x0a,
	NVME_FEAT_ASYNC_EVENT     = 0x0b,
	NVME_FEAT_AUTO_PST        = 0x0c,
	NVME_FEAT_HOST_MEM_BUF    = 0x0d,
	NVME_FEAT_TIMESTAMP       = 0x0e,
	NVME_FEAT_KATO            = 0x0f,
	NVME_FEAT_HCTM            = 0x10,
	NVME_FEAT_NOPSC           = 0x11,
	NVME_FEAT_RRL             = 0x12,
	NVME_FEAT_PLM_CONFIG      = 0x13,
	NVME_FEAT_PLM_WINDOW      = 0x14,
	NVME_FEAT_HOST_BEHAVIOR   = 0x16,
	NVME_FEAT_SANITIZE        = 0x17,
	NVME_FEAT_ENDURANCE_EVT   = 0x18,
	NVME_FEAT_IOCS_PROFILE    = 0x19,
	NVME_FEAT_SW_PROGRESS     = 0x80,
	NVME_FEAT_HOST_ID         = 0x81,
	NVME_FEAT_RESV_MASK       = 0x82,
	NVME_FEAT_RESV_PERSIST    = 0x83,
	NVME_FEAT_WRITE_PROTECT   = 0x84,
};

/* Get Features CDW10 SEL (10:8) */
enum nvme_feat_sel {
	NVME_FEAT_SEL_CURRENT   = 0,
	NVME_FEAT_SEL_DEFAULT   = 1,
	NVME_FEAT_SEL_SAVED     = 2,
	NVME_FEAT_SEL_SUPPORTED = 3,
};
/* Set Features CDW10 bit 31: save */
#define NVME_FEAT_SAVE (1u << 31)

#endif
