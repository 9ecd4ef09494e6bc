/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe commands into the kernel's passthrough layout and kernel answers into completions.
 * The rules here are the kernel's (drivers/nvme/host/ioctl.c): it builds the data pointer
 * itself from one user buffer, zeroes the metadata pointer unless it maps a metadata buffer,
 * refuses non-zero flags and any NSID but the device file's own namespace, and decides the
 * data direction from bit 0 of the opcode.
 */
#include <errno.h>
#include <string.h>

#include "lib/driver/errmsg.h"
#include "uring_map.h"

bool uring_map_is_kv_vendor(uint8_t opc)
{
	switch (opc) {
	case NVME_KVV_STORE:
	case NVME_KVV_APPEND:
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_DELETE:
	case NVME_KVV_ITER_REQ:
	case NVME_KVV_ITER_READ:
	case NVME_KVV_EXIST:
		return true;
	default:
		return false;
	}
}

/* The KV vendor commands that carry a key: its length is CDW11 7:0 plus one. */
static bool kv_has_key(uint8_t opc)
{
	return opc == NVME_KVV_STORE || opc == NVME_KVV_APPEND || opc == NVME_KVV_RETRIEVE ||
	       opc == NVME_KVV_DELETE || opc == NVME_KVV_EXIST;
}

/* The fields both passthrough layouts share (up to timeout_ms): the command's dwords, the
 * buffer the kernel maps, no metadata. */
static void fill(const struct nvme_sqe *cmd, uint32_t nsid, void *buf, size_t len,
		 uint32_t timeout_ms, struct nvme_uring_cmd *out)
{
	memset(out, 0, sizeof(*out));
	out->opcode = cmd->opc;
	out->nsid = nsid;
	out->cdw2 = cmd->cdw2;
	out->cdw3 = cmd->cdw3;
	out->addr = len ? (uint64_t)(uintptr_t)buf : 0;
	out->data_len = (uint32_t)len;
	out->cdw10 = cmd->cdw10;
	out->cdw11 = cmd->cdw11;
	out->cdw12 = cmd->cdw12;
	out->cdw13 = cmd->cdw13;
	out->cdw14 = cmd->cdw14;
	out->cdw15 = cmd->cdw15;
	out->timeout_ms = timeout_ms;
}

void uring_map_to_ioctl(const struct nvme_uring_cmd *u, struct nvme_passthru_cmd64 *out)
{
	_Static_assert(offsetof(struct nvme_uring_cmd, timeout_ms) ==
			       offsetof(struct nvme_passthru_cmd64, timeout_ms),
		       "the io_uring and ioctl passthrough layouts agree up to timeout_ms");
	memset(out, 0, sizeof(*out));
	memcpy(out, u, offsetof(struct nvme_uring_cmd, timeout_ms) + sizeof(u->timeout_ms));
}

int uring_map_cmd(const struct nvme_sqe *cmd, void *buf, size_t len, uint32_t ns_nsid,
		  uint32_t timeout_ms, struct nvme_uring_cmd *out)
{
	bool kv = uring_map_is_kv_vendor(cmd->opc);
	if (__builtin_expect(cmd->flags != 0, 0))
		return unvme_fail(-EINVAL, "command 0x%02x: flags 0x%02x (fused commands, SGL data "
				  "pointers) cannot pass through the kernel's NVMe driver, which builds "
				  "the data pointer itself", cmd->opc, cmd->flags);
	uint32_t nsid = cmd->nsid;
	if (__builtin_expect(nsid != ns_nsid, 0)) {
		if (kv && nsid == 0) {
			nsid = ns_nsid; /* keyspace 0: the namespace itself */
		} else if (kv) {
			return unvme_fail(-EINVAL, "KV command 0x%02x for keyspace %u: through the "
					  "kernel's driver a KV command can only name its namespace "
					  "(NSID %u), so only keyspace 0 is reachable; use the VFIO "
					  "transport for other keyspaces", cmd->opc, cmd->nsid, ns_nsid);
		} else {
			return unvme_fail(-EINVAL, "command 0x%02x names NSID %u, but this device file "
					  "is namespace %u: the kernel takes commands only for the "
					  "namespace of the file (open the controller or the other "
					  "namespace's device instead)", cmd->opc, cmd->nsid, ns_nsid);
		}
	}
	if (__builtin_expect(cmd->mptr != 0, 0))
		return unvme_fail(-EINVAL, kv ? "KV command 0x%02x with a value offset (CDW4-5): the "
					       "kernel's driver overwrites that field, so offsets cannot "
					       "pass through it"
					     : "command 0x%02x carries a metadata pointer (CDW4-5), which "
					       "the kernel's driver overwrites", cmd->opc);
	if (kv && kv_has_key(cmd->opc) && (cmd->cdw11 & 0xffu) + 1u > NVME_KVV_INLINE_KEY)
		return unvme_fail(-EINVAL, "KV command 0x%02x with a %u-byte key: keys over %u bytes "
				  "travel by a PRP in CDW12-13, which the kernel's driver cannot map; "
				  "use keys of at most %u bytes or the VFIO transport", cmd->opc,
				  (cmd->cdw11 & 0xffu) + 1u, NVME_KVV_INLINE_KEY, NVME_KVV_INLINE_KEY);
	if (__builtin_expect(len && !buf, 0))
		return unvme_fail(-EINVAL, "command 0x%02x: %zu bytes of data but no buffer", cmd->opc,
				  len);
	fill(cmd, nsid, buf, len, timeout_ms, out);
	return 0;
}

int uring_map_admin(const struct nvme_sqe *cmd, void *buf, size_t len, uint32_t timeout_ms,
		    struct nvme_passthru_cmd64 *out)
{
	switch (cmd->opc) {
	case NVME_ADM_DELETE_SQ:
	case NVME_ADM_CREATE_SQ:
	case NVME_ADM_DELETE_CQ:
	case NVME_ADM_CREATE_CQ:
		return unvme_fail(-EPERM, "admin command 0x%02x (create/delete an I/O queue) refused: "
				  "the kernel's NVMe driver owns this controller's queues; unbind it "
				  "(scripts/setup.sh config) to manage queues yourself", cmd->opc);
	default:
		break;
	}
	if (cmd->flags != 0)
		return unvme_fail(-EINVAL, "admin command 0x%02x: flags 0x%02x cannot pass through "
				  "the kernel's NVMe driver", cmd->opc, cmd->flags);
	if (len && !buf)
		return unvme_fail(-EINVAL, "admin command 0x%02x: %zu bytes of data but no buffer",
				  cmd->opc, len);
	struct nvme_uring_cmd u;
	fill(cmd, cmd->nsid, buf, len, timeout_ms, &u);
	uring_map_to_ioctl(&u, out);
	return 0;
}

int uring_map_errno_status(int err, bool write)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return 0;
	case ENODATA: /* BLK_STS_MEDIUM */
		return write ? NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT)
			     : NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ);
	case EILSEQ: /* BLK_STS_PROTECTION */
		return NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK);
	case EREMOTEIO: /* BLK_STS_TARGET: the device refused the range */
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
	case ENOSPC:
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED);
	case EOPNOTSUPP:
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
	case EBADE: /* BLK_STS_RESV_CONFLICT (BLK_STS_NEXUS before 6.5) */
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT);
	case ECANCELED:
	case EINTR:
	case ETIMEDOUT:
		return NVME_STATUS(NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST);
	default:
		return NVME_STATUS(NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR);
	}
}

void uring_map_local_cqe(int status, uint32_t dw0, uint16_t qid, uint16_t cid,
			 struct nvme_cqe *out)
{
	out->dw0 = dw0;
	out->dw1 = 0;
	out->sqhd = 0;
	out->sqid = qid;
	out->cid = cid;
	out->status = (uint16_t)(((unsigned)NVME_STATUS_SCT(status) << 9) |
				 ((unsigned)NVME_STATUS_SC(status) << 1));
}

void uring_map_cqe(int32_t res, uint64_t result, uint16_t qid, uint16_t cid, bool write,
		   struct nvme_cqe *out)
{
	out->sqhd = 0;
	out->sqid = qid;
	out->cid = cid;
	if (__builtin_expect(res >= 0, 1)) {
		out->dw0 = (uint32_t)result;
		out->dw1 = (uint32_t)(result >> 32);
		/* the kernel hands back the status field without the phase tag */
		out->status = (uint16_t)((uint32_t)res << 1);
		return;
	}
	uring_map_local_cqe(uring_map_errno_status(res, write), 0, qid, cid, out);
	out->dw1 = (uint32_t)-res;
	out->status |= 1u << 15; /* DNR: the host will refuse it again */
}

const char *uring_map_errno_advice(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EACCES:
	case EPERM:
		return "the kernel refused access: NVMe passthrough needs CAP_SYS_ADMIN (run as root) "
		       "before Linux 6.2, and read and write permission on the device file (a udev "
		       "rule or chmod gives a user that); block I/O needs read/write permission (group "
		       "disk)";
	case ENOENT:
		return "no such device file (list the kernel's NVMe devices with: nvme list, or "
		       "ls /dev/ng* /dev/nvme*)";
	case ENODEV:
	case ENXIO:
		return "the device is gone (removed, or its controller failed): check dmesg";
	case ENOTTY:
		return "this device file does not take NVMe passthrough (not an NVMe device, or the "
		       "kernel lacks the ioctl)";
	case EINVAL:
		return "the kernel refused the command as invalid (a field it checks: NSID, flags, "
		       "transfer size or buffer alignment)";
	case EOPNOTSUPP:
		return "the kernel or the device does not support this operation";
	case EBUSY:
		return "the device is in use (mounted, part of a RAID or LVM volume, or opened "
		       "exclusively by another program): uNVMe will not write under a file system";
	case EROFS:
		return "the device is read-only";
	case ENOMEM:
		return "out of memory (for registered buffers: raise RLIMIT_MEMLOCK, ulimit -l)";
	default:
		return "see the kernel log (dmesg) for the driver's view";
	}
}
