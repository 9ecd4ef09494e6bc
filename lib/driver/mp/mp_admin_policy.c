/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which admin commands a server runs for its clients, and how many bytes each moves
 * (mp_requests.c). A client's command reaches the server's admin queue, where the device
 * reads its data pointers and, for a command with data, its own idea of the length (NUMD,
 * AL, ...): a command that says it moves more than the client's buffer would have the device
 * walk past the PRPs the server built for the buffer (into a PRP list page whose stale
 * entries, or the client's own bytes, it would take for addresses). So the length comes from
 * the command itself (NVMe Base 2.0, each command's section), the server's buffer is exactly
 * that long, and the client's pointers never reach the device:
 *   - no data direction (opcode bits 1:0 = 00b): nothing moves;
 *   - a command whose length the specification gives: that length (at most the controller's
 *     maximum transfer);
 *   - vendor specific (C0h..FFh): Number of Dwords in Data Transfer (CDW10), the vendor
 *     specific command format's, when it is not 0;
 *   - anything else with data: at most one memory page (its PRP entry 2 is then 0, which no
 *     mapping covers: the device cannot reach past the page).
 * Commands that name host memory by address (Doorbell Buffer Config, Set Features Host
 * Memory Buffer) are refused, as are those only the queue-pair requests may send (Create
 * I/O SQ/CQ) and the Asynchronous Event Request (MP_AER_SUBSCRIBE); Abort and Delete I/O
 * SQ/CQ are checked against the queues the client owns by the caller.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mp_admin_policy.h"

/* Get/Set Features data structures (Base 2.0 5.27.1, "Feature Identifiers"). */
static uint32_t feature_bytes(const struct nvme_sqe *cmd)
{
	switch (cmd->cdw10 & 0xffu) {
	case NVME_FEAT_LBA_RANGE: return 4096;   /* 64 LBA Range Type entries of 64 bytes */
	case NVME_FEAT_AUTO_PST: return 256;     /* 32 entries of 8 bytes */
	case NVME_FEAT_HOST_MEM_BUF: return 4096; /* Get: the Host Memory Buffer attributes */
	case NVME_FEAT_TIMESTAMP: return 8;
	case NVME_FEAT_PLM_CONFIG: return 512;
	case NVME_FEAT_HOST_BEHAVIOR: return 512;
	case NVME_FEAT_HOST_ID: return (cmd->cdw11 & 1u) ? 16 : 8; /* EXHID: 128-bit */
	default: return 0;
	}
}

static uint64_t numd_bytes(uint64_t numd0)
{
	return (numd0 + 1) * 4; /* 0's based dword counts */
}

int mp_admin_check(const struct nvme_sqe *cmd, uint32_t len, uint32_t page_size,
		   uint32_t max_xfer, uint32_t *xfer, char *why, size_t whylen)
{
	uint64_t bytes;
	bool known = true;
	*xfer = 0;
	switch (cmd->opc) {
	case NVME_ADM_CREATE_SQ:
	case NVME_ADM_CREATE_CQ:
		snprintf(why, whylen, "a client's I/O queues are created through its queue pairs, "
			 "not by admin commands");
		return -EPERM;
	case NVME_ADM_ASYNC_EVENT:
		snprintf(why, whylen, "Asynchronous Event Requests are the server's own: a client "
			 "subscribes to the events (unvme_ctrlr_aer_enable)");
		return -EOPNOTSUPP;
	case NVME_ADM_DOORBELL_BUF_CFG:
		snprintf(why, whylen, "Doorbell Buffer Config names host memory by address: not "
			 "for a client");
		return -EPERM;
	case NVME_ADM_GET_LOG_PAGE: /* NUMDU (CDW11 15:0), NUMDL (CDW10 31:16) */
		bytes = numd_bytes(((uint64_t)(cmd->cdw11 & 0xffffu) << 16) | (cmd->cdw10 >> 16));
		break;
	case NVME_ADM_IDENTIFY:
		bytes = 4096;
		break;
	case NVME_ADM_SET_FEATURES:
		if ((cmd->cdw10 & 0xffu) == NVME_FEAT_HOST_MEM_BUF) {
			snprintf(why, whylen, "Set Features Host Memory Buffer names host memory by "
				 "address: not for a client");
			return -EPERM;
		}
		bytes = feature_bytes(cmd);
		break;
	case NVME_ADM_GET_FEATURES:
		/* Select = 011b (supported capabilities) answers in DW0 only */
		bytes = ((cmd->cdw10 >> 8) & 7u) == 3u ? 0 : feature_bytes(cmd);
		break;
	case NVME_ADM_FW_DOWNLOAD: /* NUMD, CDW10 */
	case NVME_ADM_DIRECTIVE_SEND:
	case NVME_ADM_DIRECTIVE_RECV:
		bytes = numd_bytes(cmd->cdw10);
		break;
	case NVME_ADM_SECURITY_SEND: /* Allocation / Transfer Length in bytes, CDW11 */
	case NVME_ADM_SECURITY_RECV:
		bytes = cmd->cdw11;
		break;
	case NVME_ADM_NS_MGMT: /* SEL 0h create: the namespace's data structure */
		bytes = (cmd->cdw10 & 0xfu) == 0 ? 4096 : 0;
		break;
	case NVME_ADM_NS_ATTACH: /* a Controller List */
		bytes = 4096;
		break;
	case NVME_ADM_GET_LBA_STATUS: /* MNDW, CDW12 */
		bytes = numd_bytes(cmd->cdw12);
		break;
	default:
		known = false;
		bytes = 0;
		break;
	}
	if ((cmd->opc & 3u) == 0) {
		*xfer = 0; /* no data transfer whatever the dwords say */
		return 0;
	}
	if (!known && cmd->opc >= 0xc0 && cmd->cdw10) {
		known = true;
		bytes = (uint64_t)cmd->cdw10 * 4; /* NDT: Number of Dwords in Data Transfer */
	}
	if (!known) {
		if (len > page_size) {
			snprintf(why, whylen, "admin opcode %02xh with %u bytes of data: the length of "
				 "its transfer is not known here, so at most one page (%u bytes) is "
				 "allowed", cmd->opc, len, page_size);
			return -EINVAL;
		}
		*xfer = len ? page_size : 0;
		return 0;
	}
	if (bytes > max_xfer) {
		snprintf(why, whylen, "admin opcode %02xh would move %llu bytes, more than the "
			 "controller's maximum transfer of %u", cmd->opc, (unsigned long long)bytes,
			 max_xfer);
		return -EINVAL;
	}
	*xfer = (uint32_t)bytes;
	return 0;
}

void mp_admin_scrub(struct nvme_sqe *cmd)
{
	/* the server's own buffer is the data: no pointer of the client reaches the device */
	cmd->flags = 0; /* no fused operation, PRPs (PSDT 00b) */
	cmd->cid = 0;
	cmd->mptr = 0;
	cmd->prp1 = 0;
	cmd->prp2 = 0;
}
