/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From NVMe commands to what the kernel's NVMe driver takes, and from what it answers back to
 * NVMe completions. Pure functions (no system calls), shared by the io_uring passthrough and
 * kernel block transports and unit tested on their own.
 */
#ifndef UNVME_DRIVER_URING_MAP_H
#define UNVME_DRIVER_URING_MAP_H

#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"

/* Is opc one of the Samsung KV vendor opcodes the KV SDK sends (81h, 83h, 90h, A1h, B1h..B3h)? */
bool uring_map_is_kv_vendor(uint8_t opc);

/*
 * Fills a passthrough command (io_uring NVME_URING_CMD_IO or the NVME_IOCTL_IO64_CMD ioctl,
 * which share the layout up to timeout_ms) from cmd and its data buffer. ns_nsid is the
 * namespace the kernel binds the device file to: the kernel refuses any other NSID. Returns 0,
 * or -EINVAL with a message for what the kernel would refuse or cannot carry:
 *   - FUSE or PSDT bits (the kernel builds the data pointer and takes no fused pairs);
 *   - a metadata pointer (CDW4-5): the kernel overwrites it; for the KV vendor protocol
 *     that is the value offset;
 *   - an NSID other than ns_nsid; the KV vendor protocol's NSID 0 (keyspace 0) is sent as
 *     ns_nsid, the namespace itself, which is how a kernel-kept KV SSD is addressed;
 *   - KV vendor keys over 16 bytes (they travel by a PRP in CDW12-13, which the kernel cannot
 *     map);
 *   - data without a buffer.
 * The data direction is the opcode's (bit 0 set: to the device), as the kernel decides it.
 */
int uring_map_cmd(const struct nvme_sqe *cmd, void *buf, size_t len, uint32_t ns_nsid,
		  uint32_t timeout_ms, struct nvme_uring_cmd *out);

/* The same command for the passthrough ioctls (NVME_IOCTL_IO64_CMD), whose layout agrees up
 * to timeout_ms. */
void uring_map_to_ioctl(const struct nvme_uring_cmd *u, struct nvme_passthru_cmd64 *out);

/* An admin command for NVME_IOCTL_ADMIN64_CMD. Refuses (-EPERM, message) the commands that
 * would take the I/O queues from under the kernel's driver (Create/Delete I/O SQ/CQ). */
int uring_map_admin(const struct nvme_sqe *cmd, void *buf, size_t len, uint32_t timeout_ms,
		    struct nvme_passthru_cmd64 *out);

/* A host-side failure (negative errno from the kernel) as the NVMe status (library form,
 * NVME_STATUS(sct, sc)) a completion carries: media errors as media errors, a range the
 * kernel refused as LBA Out of Range, cancellations as Command Aborted By Host, the rest as
 * Host Pathing Error (SCT 3h/SC 70h). write: the command moved data to the device. */
int uring_map_errno_status(int err, bool write);

/* The completion of a passthrough command: res is the CQE's result (the NVMe status field the
 * device returned, >= 0, or a negative errno from the kernel), result the command's DW0/DW1.
 * A negative res becomes uring_map_errno_status() with DNR set and the errno in DW1. */
void uring_map_cqe(int32_t res, uint64_t result, uint16_t qid, uint16_t cid, bool write,
		   struct nvme_cqe *out);

/* A completion made by the host for command cid (status in the library's form). */
void uring_map_local_cqe(int status, uint32_t dw0, uint16_t qid, uint16_t cid,
			 struct nvme_cqe *out);

/* What to do about errno err from the kernel for a device, one sentence, e.g. for EACCES that
 * passthrough needs CAP_SYS_ADMIN before Linux 6.2. */
const char *uring_map_errno_advice(int err);

#endif
