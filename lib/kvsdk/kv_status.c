/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From driver results to kv_result. The Samsung vendor KV commands complete with status code
 * type 1 (command specific) and a status code that *is* the kv_result (0x10 key does not exist,
 * 0x80 idempotent store failed, 0x93 end of iteration, ...), so those pass through unchanged.
 * Only those: the same SCT 1 codes of any other command (admin commands such as Get Log Page,
 * block commands in LBA mode) mean something else (SC 09h is Invalid Log Page there, not a
 * misaligned value offset) and are mapped like every other status to the closest code,
 * KV_ERR_IO when nothing fits.
 */
#include <errno.h>

#include "kv_internal.h"

int kv_result_from_status(int status, bool vendor)
{
	if (status == 0)
		return KV_SUCCESS;
	unsigned sct = NVME_STATUS_SCT(status), sc = NVME_STATUS_SC(status);
	if (vendor && sct == NVME_SCT_CMD && sc != 0)
		return (int)sc;
	if (sct == NVME_SCT_CMD) {
		switch (sc) {
		case NVME_SC_INVALID_LOG_PAGE:
			return KV_ERR_DD_UNSUPPORTED_CMD; /* the device does not keep that log */
		case NVME_SC_INVALID_FORMAT:
			return KV_ERR_DD_INVALID_PARAM;
		default:
			return KV_ERR_IO;
		}
	}
	if (sct == NVME_SCT_GENERIC) {
		switch (sc) {
		case NVME_SC_INVALID_OPCODE:
			return KV_ERR_DD_UNSUPPORTED_CMD;
		case NVME_SC_INVALID_FIELD:
			return KV_ERR_DD_INVALID_PARAM;
		case NVME_SC_INVALID_NS_OR_FORMAT:
			return KV_ERR_DD_NO_DEVICE;
		case NVME_SC_CAPACITY_EXCEEDED:
			return KV_ERR_CAPACITY_EXCEEDED;
		case NVME_SC_LBA_OUT_OF_RANGE:
			return vendor ? KV_ERR_IO : KV_ERR_DD_INVALID_PARAM;
		default:
			return KV_ERR_IO;
		}
	}
	if (sct == NVME_SCT_MEDIA)
		return KV_ERR_UNRECOVERED_ERROR;
	return KV_ERR_IO;
}

int kv_result_from_errno(int rc)
{
	switch (rc) {
	case 0:
		return KV_SUCCESS;
	case -EAGAIN:
		return KV_ERR_DD_NO_AVAILABLE_QUEUE;
	case -EINVAL:
		return KV_ERR_DD_INVALID_PARAM;
	case -ENOMEM:
		return KV_ERR_HEAP_ALLOC_FAILURE;
	case -ENODEV:
	case -ENOENT:
		return KV_ERR_DD_NO_DEVICE;
	default:
		return KV_ERR_IO;
	}
}
