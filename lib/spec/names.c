/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names of NVMe identifiers, as the specifications write them. Tables are sparse arrays indexed
 * by the 8-bit identifier, so a lookup is one bounds-free load and adding a name is one line.
 */
#include "names.h"

#include <unvme/spec.h>

/* Opcodes, log pages and features from C0h up are vendor specific in every table below. */
#define VENDOR_SPECIFIC_FIRST 0xc0

static const char *const admin_opc_names[256] = {
	[NVME_ADM_DELETE_SQ]        = "Delete I/O Submission Queue",
	[NVME_ADM_CREATE_SQ]        = "Create I/O Submission Queue",
	[NVME_ADM_GET_LOG_PAGE]     = "Get Log Page",
	[NVME_ADM_DELETE_CQ]        = "Delete I/O Completion Queue",
	[NVME_ADM_CREATE_CQ]        = "Create I/O Completion Queue",
	[NVME_ADM_IDENTIFY]         = "Identify",
	[NVME_ADM_ABORT]            = "Abort",
	[NVME_ADM_SET_FEATURES]     = "Set Features",
	[NVME_ADM_GET_FEATURES]     = "Get Features",
	[NVME_ADM_ASYNC_EVENT]      = "Asynchronous Event Request",
	[NVME_ADM_NS_MGMT]          = "Namespace Management",
	[NVME_ADM_FW_COMMIT]        = "Firmware Commit",
	[NVME_ADM_FW_DOWNLOAD]      = "Firmware Image Download",
	[NVME_ADM_DEV_SELF_TEST]    = "Device Self-test",
	[NVME_ADM_NS_ATTACH]        = "Namespace Attachment",
	[NVME_ADM_KEEP_ALIVE]       = "Keep Alive",
	[NVME_ADM_DIRECTIVE_SEND]   = "Directive Send",
	[NVME_ADM_DIRECTIVE_RECV]   = "Directive Receive",
	[NVME_ADM_VIRT_MGMT]        = "Virtualization Management",
	[NVME_ADM_NVME_MI_SEND]     = "NVMe-MI Send",
	[NVME_ADM_NVME_MI_RECV]     = "NVMe-MI Receive",
	[NVME_ADM_DOORBELL_BUF_CFG] = "Doorbell Buffer Config",
	[NVME_ADM_FORMAT_NVM]       = "Format NVM",
	[NVME_ADM_SECURITY_SEND]    = "Security Send",
	[NVME_ADM_SECURITY_RECV]    = "Security Receive",
	[NVME_ADM_SANITIZE]         = "Sanitize",
	[NVME_ADM_GET_LBA_STATUS]   = "Get LBA Status",
};

static const char *const nvm_opc_names[256] = {
	[NVME_CMD_FLUSH]         = "Flush",
	[NVME_CMD_WRITE]         = "Write",
	[NVME_CMD_READ]          = "Read",
	[NVME_CMD_WRITE_UNCOR]   = "Write Uncorrectable",
	[NVME_CMD_COMPARE]       = "Compare",
	[NVME_CMD_WRITE_ZEROES]  = "Write Zeroes",
	[NVME_CMD_DSM]           = "Dataset Management",
	[NVME_CMD_VERIFY]        = "Verify",
	[NVME_CMD_RESV_REGISTER] = "Reservation Register",
	[NVME_CMD_RESV_REPORT]   = "Reservation Report",
	[NVME_CMD_RESV_ACQUIRE]  = "Reservation Acquire",
	[NVME_CMD_RESV_RELEASE]  = "Reservation Release",
	[NVME_CMD_COPY]          = "Copy",
};

/* Zoned Namespace Command Set 1.1, "Opcodes for Zoned Namespace Commands" (only the commands
 * ZNS adds; the NVM ones apply too). */
static const char *const zns_opc_names[256] = {
	[0x79] = "Zone Management Send",
	[0x7a] = "Zone Management Receive",
	[0x7d] = "Zone Append",
};

/* Key Value Command Set 1.0, "Opcodes for Key Value Commands". */
static const char *const kv_opc_names[256] = {
	[0x00] = "Flush",
	[0x01] = "Store",
	[0x02] = "Retrieve",
	[0x06] = "List",
	[0x10] = "Delete",
	[0x14] = "Exist",
};

static const char *const log_page_names[256] = {
	[0x00]                   = "Supported Log Pages",
	[NVME_LOG_ERROR]         = "Error Information",
	[NVME_LOG_SMART]         = "SMART / Health Information",
	[NVME_LOG_FW_SLOT]       = "Firmware Slot Information",
	[NVME_LOG_CHANGED_NS]    = "Changed Namespace List",
	[NVME_LOG_CMD_EFFECTS]   = "Commands Supported and Effects",
	[NVME_LOG_DEV_SELF_TEST] = "Device Self-test",
	[0x07]                   = "Telemetry Host-Initiated",
	[0x08]                   = "Telemetry Controller-Initiated",
	[0x09]                   = "Endurance Group Information",
	[0x0a]                   = "Predictable Latency Per NVM Set",
	[0x0b]                   = "Predictable Latency Event Aggregate",
	[0x0c]                   = "Asymmetric Namespace Access",
	[0x0d]                   = "Persistent Event Log",
	[0x0f]                   = "Endurance Group Event Aggregate",
	[0x10]                   = "Media Unit Status",
	[0x11]                   = "Supported Capacity Configuration List",
	[0x12]                   = "Feature Identifiers Supported and Effects",
	[0x13]                   = "NVMe-MI Commands Supported and Effects",
	[0x14]                   = "Command and Feature Lockdown",
	[0x15]                   = "Boot Partition",
	[0x70]                   = "Discovery",
	[0x80]                   = "Reservation Notification",
	[0x81]                   = "Sanitize Status",
	[0xbf]                   = "Changed Zone List",
};

static const char *const feature_names[256] = {
	[NVME_FEAT_ARBITRATION]   = "Arbitration",
	[NVME_FEAT_POWER_MGMT]    = "Power Management",
	[NVME_FEAT_LBA_RANGE]     = "LBA Range Type",
	[NVME_FEAT_TEMP_THRESH]   = "Temperature Threshold",
	[NVME_FEAT_ERR_RECOVERY]  = "Error Recovery",
	[NVME_FEAT_VOLATILE_WC]   = "Volatile Write Cache",
	[NVME_FEAT_NUM_QUEUES]    = "Number of Queues",
	[NVME_FEAT_IRQ_COALESCE]  = "Interrupt Coalescing",
	[NVME_FEAT_IRQ_CONFIG]    = "Interrupt Vector Configuration",
	[NVME_FEAT_WRITE_ATOMIC]  = "Write Atomicity Normal",
	[NVME_FEAT_ASYNC_EVENT]   = "Asynchronous Event Configuration",
	[NVME_FEAT_AUTO_PST]      = "Autonomous Power State Transition",
	[NVME_FEAT_HOST_MEM_BUF]  = "Host Memory Buffer",
	[NVME_FEAT_TIMESTAMP]     = "Timestamp",
	[NVME_FEAT_KATO]          = "Keep Alive Timer",
	[NVME_FEAT_HCTM]          = "Host Controlled Thermal Management",
	[NVME_FEAT_NOPSC]         = "Non-Operational Power State Config",
	[NVME_FEAT_RRL]           = "Read Recovery Level Config",
	[NVME_FEAT_PLM_CONFIG]    = "Predictable Latency Mode Config",
	[NVME_FEAT_PLM_WINDOW]    = "Predictable Latency Mode Window",
	[NVME_FEAT_HOST_BEHAVIOR] = "Host Behavior Support",
	[NVME_FEAT_SANITIZE]      = "Sanitize Config",
	[NVME_FEAT_ENDURANCE_EVT] = "Endurance Group Event Configuration",
	[NVME_FEAT_IOCS_PROFILE]  = "I/O Command Set Profile",
	[NVME_FEAT_SW_PROGRESS]   = "Software Progress Marker",
	[NVME_FEAT_HOST_ID]       = "Host Identifier",
	[NVME_FEAT_RESV_MASK]     = "Reservation Notification Mask",
	[NVME_FEAT_RESV_PERSIST]  = "Reservation Persistence",
	[NVME_FEAT_WRITE_PROTECT] = "Namespace Write Protection Config",
};

static const char *const cns_names[256] = {
	[NVME_CNS_NS]                 = "Identify Namespace",
	[NVME_CNS_CTRL]               = "Identify Controller",
	[NVME_CNS_ACTIVE_NS_LIST]     = "Active Namespace ID List",
	[NVME_CNS_NS_DESC_LIST]       = "Namespace Identification Descriptor List",
	[NVME_CNS_NVMSET_LIST]        = "NVM Set List",
	[NVME_CNS_CSI_NS]             = "I/O Command Set Specific Identify Namespace",
	[NVME_CNS_CSI_CTRL]           = "I/O Command Set Specific Identify Controller",
	[NVME_CNS_CSI_ACTIVE_NS_LIST] = "I/O Command Set Specific Active Namespace ID List",
	[0x10]                        = "Allocated Namespace ID List",
	[0x11]                        = "Identify Namespace for an Allocated Namespace ID",
	[0x12]                        = "Namespace Attached Controller List",
	[0x13]                        = "Controller List",
	[0x14]                        = "Primary Controller Capabilities",
	[0x15]                        = "Secondary Controller List",
	[0x16]                        = "Namespace Granularity List",
	[0x17]                        = "UUID List",
	[NVME_CNS_IOCS]               = "I/O Command Set",
};

const char *nvme_admin_opc_name(uint8_t opc)
{
	if (opc >= VENDOR_SPECIFIC_FIRST)
		return "Vendor Specific";
	return admin_opc_names[opc];
}

const char *nvme_io_opc_name(uint8_t opc, uint8_t csi)
{
	/* I/O opcodes 80h..FFh are vendor specific in every command set. */
	if (opc >= 0x80)
		return "Vendor Specific";
	switch (csi) {
	case NVME_CSI_KV:
		return kv_opc_names[opc];
	case NVME_CSI_ZNS:
		return zns_opc_names[opc] ? zns_opc_names[opc] : nvm_opc_names[opc];
	case NVME_CSI_NVM:
		return nvm_opc_names[opc];
	default:
		return NULL;
	}
}

const char *nvme_log_page_name(uint8_t lid)
{
	if (lid >= VENDOR_SPECIFIC_FIRST)
		return "Vendor Specific";
	return log_page_names[lid];
}

const char *nvme_feature_name(uint8_t fid)
{
	if (fid >= VENDOR_SPECIFIC_FIRST)
		return "Vendor Specific";
	return feature_names[fid];
}

const char *nvme_cns_name(uint8_t cns)
{
	return cns_names[cns];
}

const char *nvme_csi_name(uint8_t csi)
{
	switch (csi) {
	case NVME_CSI_NVM:
		return "NVM";
	case NVME_CSI_KV:
		return "Key Value";
	case NVME_CSI_ZNS:
		return "Zoned Namespace";
	default:
		return NULL;
	}
}

const char *nvme_nidt_name(uint8_t nidt)
{
	switch (nidt) {
	case NVME_NIDT_EUI64:
		return "eui64";
	case NVME_NIDT_NGUID:
		return "nguid";
	case NVME_NIDT_UUID:
		return "uuid";
	case NVME_NIDT_CSI:
		return "csi";
	default:
		return NULL;
	}
}
