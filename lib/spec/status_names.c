/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names of NVMe completion statuses, as the specifications write them. Each status code type
 * has a sparse table indexed by the 8-bit status code. Generic codes 80h..BFh belong to the I/O
 * command set of the namespace, so they have one table per command set.
 */
#include <stdio.h>
#include <string.h>

#include <unvme/unvme.h>

/* Generic status codes from here to IOCS_GENERIC_LAST are I/O command set specific. */
#define IOCS_GENERIC_FIRST 0x80
#define IOCS_GENERIC_LAST  0xbf

static const char *const generic_names[256] = {
	[NVME_SC_SUCCESS]                = "Successful Completion",
	[NVME_SC_INVALID_OPCODE]         = "Invalid Command Opcode",
	[NVME_SC_INVALID_FIELD]          = "Invalid Field in Command",
	[NVME_SC_CID_CONFLICT]           = "Command ID Conflict",
	[NVME_SC_DATA_TRANSFER_ERROR]    = "Data Transfer Error",
	[NVME_SC_ABORTED_POWER_LOSS]     = "Commands Aborted due to Power Loss Notification",
	[NVME_SC_INTERNAL]               = "Internal Error",
	[NVME_SC_ABORT_REQUESTED]        = "Command Abort Requested",
	[NVME_SC_ABORTED_SQ_DELETION]    = "Command Aborted due to SQ Deletion",
	[NVME_SC_ABORTED_FAILED_FUSED]   = "Command Aborted due to Failed Fused Command",
	[NVME_SC_ABORTED_MISSING_FUSED]  = "Command Aborted due to Missing Fused Command",
	[NVME_SC_INVALID_NS_OR_FORMAT]   = "Invalid Namespace or Format",
	[NVME_SC_CMD_SEQ_ERROR]          = "Command Sequence Error",
	[NVME_SC_INVALID_SGL_SEG_DESC]   = "Invalid SGL Segment Descriptor",
	[NVME_SC_INVALID_NUM_SGL_DESC]   = "Invalid Number of SGL Descriptors",
	[NVME_SC_DATA_SGL_LEN_INVALID]   = "Data SGL Length Invalid",
	[NVME_SC_MD_SGL_LEN_INVALID]     = "Metadata SGL Length Invalid",
	[NVME_SC_SGL_DESC_TYPE_INVALID]  = "SGL Descriptor Type Invalid",
	[NVME_SC_INVALID_CMB_USE]        = "Invalid Use of Controller Memory Buffer",
	[NVME_SC_PRP_OFFSET_INVALID]     = "PRP Offset Invalid",
	[NVME_SC_ATOMIC_WU_EXCEEDED]     = "Atomic Write Unit Exceeded",
	[NVME_SC_OPERATION_DENIED]       = "Operation Denied",
	[NVME_SC_SGL_OFFSET_INVALID]     = "SGL Offset Invalid",
	[NVME_SC_HOSTID_INCONSISTENT]    = "Host Identifier Inconsistent Format",
	[NVME_SC_KA_EXPIRED]             = "Keep Alive Timer Expired",
	[NVME_SC_KA_INVALID]             = "Keep Alive Timeout Invalid",
	[NVME_SC_ABORTED_PREEMPT]        = "Command Aborted due to Preempt and Abort",
	[NVME_SC_SANITIZE_FAILED]        = "Sanitize Failed",
	[NVME_SC_SANITIZE_IN_PROGRESS]   = "Sanitize In Progress",
	[NVME_SC_SGL_DATA_BLK_GRAN]      = "SGL Data Block Granularity Invalid",
	[NVME_SC_CMD_NOT_SUP_CMB_QUEUE]  = "Command Not Supported for Queue in CMB",
	[NVME_SC_NS_WRITE_PROTECTED]     = "Namespace is Write Protected",
	[NVME_SC_CMD_INTERRUPTED]        = "Command Interrupted",
	[NVME_SC_TRANSIENT_TRANSPORT]    = "Transient Transport Error",
	[NVME_SC_PROHIBITED_BY_LOCKDOWN] = "Command Prohibited by Command and Feature Lockdown",
	[NVME_SC_ADMIN_MEDIA_NOT_READY]  = "Admin Command Media Not Ready",
};

/* NVM Command Set 1.0, "Status Code - Generic Command Status Values"; the Zoned Namespace
 * command set uses the same ones. */
static const char *const nvm_generic_names[256] = {
	[NVME_SC_LBA_OUT_OF_RANGE]     = "LBA Out of Range",
	[NVME_SC_CAPACITY_EXCEEDED]    = "Capacity Exceeded",
	[NVME_SC_NS_NOT_READY]         = "Namespace Not Ready",
	[NVME_SC_RESERVATION_CONFLICT] = "Reservation Conflict",
	[NVME_SC_FORMAT_IN_PROGRESS]   = "Format In Progress",
};

/* Key Value Command Set 1.0: a key value namespace has no LBAs, so 80h is not used, and
 * 85h..89h name key and value errors. */
static const char *const kv_generic_names[256] = {
	[NVME_SC_CAPACITY_EXCEEDED]     = "Capacity Exceeded",
	[NVME_SC_NS_NOT_READY]          = "Namespace Not Ready",
	[NVME_SC_RESERVATION_CONFLICT]  = "Reservation Conflict",
	[NVME_SC_FORMAT_IN_PROGRESS]    = "Format In Progress",
	[NVME_SC_KV_INVALID_VALUE_SIZE] = "Invalid Value Size",
	[NVME_SC_KV_INVALID_KEY_SIZE]   = "Invalid Key Size",
	[NVME_SC_KV_KEY_NOT_EXIST]      = "Key Does Not Exist",
	[NVME_SC_KV_UNRECOVERED]        = "Unrecovered Error",
	[NVME_SC_KV_KEY_EXISTS]         = "Key Exists",
};

static const char *const cmd_specific_names[256] = {
	[NVME_SC_CQ_INVALID]               = "Completion Queue Invalid",
	[NVME_SC_INVALID_QID]              = "Invalid Queue Identifier",
	[NVME_SC_INVALID_QSIZE]            = "Invalid Queue Size",
	[NVME_SC_ABORT_LIMIT]              = "Abort Command Limit Exceeded",
	[NVME_SC_AER_LIMIT]                = "Asynchronous Event Request Limit Exceeded",
	[NVME_SC_INVALID_FW_SLOT]          = "Invalid Firmware Slot",
	[NVME_SC_INVALID_FW_IMAGE]         = "Invalid Firmware Image",
	[NVME_SC_INVALID_INT_VECTOR]       = "Invalid Interrupt Vector",
	[NVME_SC_INVALID_LOG_PAGE]         = "Invalid Log Page",
	[NVME_SC_INVALID_FORMAT]           = "Invalid Format",
	[NVME_SC_FW_NEEDS_CONV_RESET]      = "Firmware Activation Requires Conventional Reset",
	[NVME_SC_INVALID_QUEUE_DELETION]   = "Invalid Queue Deletion",
	[NVME_SC_FEATURE_NOT_SAVEABLE]     = "Feature Identifier Not Saveable",
	[NVME_SC_FEATURE_NOT_CHANGEABLE]   = "Feature Not Changeable",
	[NVME_SC_FEATURE_NOT_NS_SPECIFIC]  = "Feature Not Namespace Specific",
	[NVME_SC_FW_NEEDS_SUBSYS_RESET]    = "Firmware Activation Requires NVM Subsystem Reset",
	[NVME_SC_FW_NEEDS_RESET]           = "Firmware Activation Requires Controller Level Reset",
	[NVME_SC_FW_NEEDS_MAX_TIME]        = "Firmware Activation Requires Maximum Time Violation",
	[NVME_SC_FW_ACTIVATION_PROHIBITED] = "Firmware Activation Prohibited",
	[NVME_SC_OVERLAPPING_RANGE]        = "Overlapping Range",
	[NVME_SC_NS_INSUFFICIENT_CAP]      = "Namespace Insufficient Capacity",
	[NVME_SC_NS_ID_UNAVAILABLE]        = "Namespace Identifier Unavailable",
	[NVME_SC_NS_ALREADY_ATTACHED]      = "Namespace Already Attached",
	[NVME_SC_NS_IS_PRIVATE]            = "Namespace Is Private",
	[NVME_SC_NS_NOT_ATTACHED]          = "Namespace Not Attached",
	[NVME_SC_THIN_PROV_NOT_SUP]        = "Thin Provisioning Not Supported",
	[NVME_SC_CTRL_LIST_INVALID]        = "Controller List Invalid",
	[NVME_SC_SELF_TEST_IN_PROGRESS]    = "Device Self-test In Progress",
	[NVME_SC_BP_WRITE_PROHIBITED]      = "Boot Partition Write Prohibited",
	[NVME_SC_INVALID_CTRL_ID]          = "Invalid Controller Identifier",
	/* NVM command set */
	[NVME_SC_CONFLICTING_ATTRS]        = "Conflicting Attributes",
	[NVME_SC_INVALID_PI]               = "Invalid Protection Information",
	[NVME_SC_READ_ONLY_RANGE]          = "Attempted Write to Read Only Range",
	/* Zoned namespace command set: the codes are reserved elsewhere, so naming them for every
	 * command set costs nothing and helps when the caller does not know the namespace's set. */
	[NVME_SC_ZONE_BOUNDARY_ERROR]      = "Zone Boundary Error",
	[NVME_SC_ZONE_FULL]                = "Zone Is Full",
	[NVME_SC_ZONE_READ_ONLY]           = "Zone Is Read Only",
	[NVME_SC_ZONE_OFFLINE]             = "Zone Is Offline",
	[NVME_SC_ZONE_INVALID_WRITE]       = "Zone Invalid Write",
	[NVME_SC_ZONE_TOO_MANY_ACTIVE]     = "Too Many Active Zones",
	[NVME_SC_ZONE_TOO_MANY_OPEN]       = "Too Many Open Zones",
	[NVME_SC_ZONE_INVALID_TRANSITION]  = "Invalid Zone State Transition",
};

static const char *const media_names[256] = {
	[NVME_SC_WRITE_FAULT]       = "Write Fault",
	[NVME_SC_UNRECOVERED_READ]  = "Unrecovered Read Error",
	[NVME_SC_GUARD_CHECK]       = "End-to-end Guard Check Error",
	[NVME_SC_APPTAG_CHECK]      = "End-to-end Application Tag Check Error",
	[NVME_SC_REFTAG_CHECK]      = "End-to-end Reference Tag Check Error",
	[NVME_SC_COMPARE_FAILURE]   = "Compare Failure",
	[NVME_SC_ACCESS_DENIED]     = "Access Denied",
	[NVME_SC_DEALLOCATED_BLOCK] = "Deallocated or Unwritten Logical Block",
};

static const char *const path_names[256] = {
	[NVME_SC_INTERNAL_PATH_ERROR] = "Internal Path Error",
	[NVME_SC_ANA_PERSISTENT_LOSS] = "Asymmetric Access Persistent Loss",
	[NVME_SC_ANA_INACCESSIBLE]    = "Asymmetric Access Inaccessible",
	[NVME_SC_ANA_TRANSITION]      = "Asymmetric Access Transition",
	[NVME_SC_CTRL_PATH_ERROR]     = "Controller Pathing Error",
	[NVME_SC_HOST_PATH_ERROR]     = "Host Pathing Error",
	[NVME_SC_ABORTED_BY_HOST]     = "Command Aborted By Host",
};

static const char *generic_name(unsigned sc, uint8_t csi)
{
	if (sc < IOCS_GENERIC_FIRST || sc > IOCS_GENERIC_LAST)
		return generic_names[sc];
	/* Only Key Value renames the range; ZNS and any set we do not know use the NVM names,
	 * which is what a controller of an unknown set most likely means. */
	return csi == NVME_CSI_KV ? kv_generic_names[sc] : nvm_generic_names[sc];
}

/* The Samsung KV SSD protocol (the original uNVMe SDK's) reports its errors as command
 * specific statuses of its vendor I/O opcodes; on a KV namespace these names come first. */
static const char *const kv_vendor_names[256] = {
	[NVME_KVV_SC_INVALID_VALUE_SIZE]      = "KV Invalid Value Size",
	[NVME_KVV_SC_INVALID_VALUE_OFFSET]    = "KV Invalid Value Offset",
	[NVME_KVV_SC_INVALID_KEY_SIZE]        = "KV Invalid Key Size",
	[NVME_KVV_SC_INVALID_OPTION]          = "KV Invalid Option",
	[NVME_KVV_SC_INVALID_KEYSPACE]        = "KV Invalid Keyspace",
	[NVME_KVV_SC_MISALIGNED_VALUE_SIZE]   = "KV Misaligned Value Size",
	[NVME_KVV_SC_MISALIGNED_VALUE_OFFSET] = "KV Misaligned Value Offset",
	[NVME_KVV_SC_MISALIGNED_KEY_SIZE]     = "KV Misaligned Key Size",
	[NVME_KVV_SC_KEY_NOT_EXIST]           = "KV Key Does Not Exist",
	[NVME_KVV_SC_UNRECOVERED]             = "KV Unrecovered Error",
	[NVME_KVV_SC_CAPACITY_EXCEEDED]       = "KV Capacity Exceeded",
	[NVME_KVV_SC_IDEMPOTENT_STORE_FAIL]   = "KV Idempotent Store Failed (key exists)",
	[NVME_KVV_SC_MAX_VALUE_SIZE]          = "KV Maximum Value Size Exceeded",
	[NVME_KVV_SC_ITER_FAIL]               = "KV Iterator Failed To Process Request",
	[NVME_KVV_SC_ITER_NO_HANDLE]          = "KV No Iterator Handle Available",
	[NVME_KVV_SC_ITER_ALREADY_OPEN]       = "KV Iterator Already Open",
	[NVME_KVV_SC_ITER_EOF]                = "KV Iterate Read End Of Data",
	[NVME_KVV_SC_ITER_REQUEST_FAIL]       = "KV Iterate Request Failed",
	[NVME_KVV_SC_ITER_TCG_LOCKED]         = "KV Iterator TCG Locked",
	[NVME_KVV_SC_ITER_ERROR]              = "KV Iterator Error",
};

static const char *known_status_name(unsigned sct, unsigned sc, uint8_t csi)
{
	switch (sct) {
	case NVME_SCT_GENERIC:
		return generic_name(sc, csi);
	case NVME_SCT_CMD:
		if (csi == NVME_CSI_KV && kv_vendor_names[sc])
			return kv_vendor_names[sc];
		return cmd_specific_names[sc];
	case NVME_SCT_MEDIA:
		return media_names[sc];
	case NVME_SCT_PATH:
		return path_names[sc];
	default:
		return NULL;
	}
}

const char *unvme_status_str(int status, uint8_t csi)
{
	/* Unnamed statuses are formatted per thread so concurrent callers never see each
	 * other's text; the string stays valid until the thread's next unnamed lookup. */
	static _Thread_local char buf[96];

	if (status < 0) {
		char err[64];
		snprintf(buf, sizeof(buf), "Host error: %s", strerror_r(-status, err, sizeof(err)));
		return buf;
	}
	unsigned sct = NVME_STATUS_SCT(status), sc = NVME_STATUS_SC(status);
	const char *name = known_status_name(sct, sc, csi);
	if (name)
		return name;
	if (sct == NVME_SCT_VENDOR)
		snprintf(buf, sizeof(buf), "Vendor Specific status (SC %02Xh)", sc);
	else
		snprintf(buf, sizeof(buf), "Unknown status (SCT %Xh, SC %02Xh)", sct, sc);
	return buf;
}

const char *unvme_sct_str(unsigned sct)
{
	switch (sct) {
	case NVME_SCT_GENERIC:
		return "Generic Command Status";
	case NVME_SCT_CMD:
		return "Command Specific Status";
	case NVME_SCT_MEDIA:
		return "Media and Data Integrity Errors";
	case NVME_SCT_PATH:
		return "Path Related Status";
	case NVME_SCT_VENDOR:
		return "Vendor Specific";
	default:
		return "Reserved";
	}
}
