/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices the kernel keeps: which device file an address names, where its controller and
 * namespace are in sysfs, and the passthrough ioctls. Shared by the io_uring passthrough,
 * kernel block and regular file transports.
 *
 * Addresses:
 *   /dev/ngXnY      a namespace's NVMe generic character device (io_uring passthrough)
 *   /dev/nvmeX      an NVMe controller's character device: every namespace that has a
 *                   generic character device
 *   /dev/nvmeXnY    a block device (any block device works: reads and writes go through
 *                   the block layer; NVMe-only commands through the passthrough ioctl)
 *   file:///path    a regular file (file:///p?lba=4096&size=1G&direct=0), or a bare
 *                   absolute path of an existing regular file
 * A device path may end in ?key=value&... options: iopoll=auto|0|1 (polled completions),
 * fixedbufs=1|0 (registered buffers).
 */
#ifndef UNVME_DRIVER_URING_KDEV_H
#define UNVME_DRIVER_URING_KDEV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unvme/spec.h"

enum kdev_kind {
	KDEV_NONE = 0,
	KDEV_NS_CHAR,   /* /dev/ngXnY */
	KDEV_CTRL_CHAR, /* /dev/nvmeX */
	KDEV_BLOCK,     /* a block device */
	KDEV_FILE,      /* file:// or a regular file */
};

enum kdev_tristate { KDEV_AUTO = -1, KDEV_OFF = 0, KDEV_ON = 1 };

/* An address taken apart: the path (percent-decoded for file://) and the options. */
struct kdev_addr {
	enum kdev_kind kind;
	char path[PATH_MAX];
	int iopoll;      /* enum kdev_tristate */
	int fixedbufs;   /* enum kdev_tristate */
	/* file:// only */
	uint32_t lba;    /* 0: default (512) */
	uint64_t size;   /* 0: the existing file's */
	int direct;      /* enum kdev_tristate */
};

/* Copies src into dst[len], cut to fit and NUL terminated. */
static inline void kdev_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Is addr a kernel device path or a file URI (resolved as is, never as an alias)? */
bool kdev_addr_is_kernel(const char *addr);
/* Takes addr apart and finds its kind (stat). A file:// that does not exist is KDEV_FILE
 * (it may be created); a path that names nothing usable is KDEV_NONE. Returns 0 or -EINVAL
 * with a message naming the bad part. */
int kdev_parse(const char *addr, struct kdev_addr *out);
/* Why no transport serves addr: a message for unvme_transport_find. Returns -ENODEV/-ENOENT. */
int kdev_explain(const char *addr);

/* Opens path with flags; on failure a message naming path, the errno and what to do. */
int kdev_open(const char *path, int flags);

/* The sysfs name of the controller that owns the namespace device name ("ng0n1", "nvme0n1"):
 * "nvme0". A multipath head picks the first live controller of its subsystem. 0 or -ENOENT. */
int kdev_ctrl_of(const char *devname, char *out, size_t outlen);
/* The block device of the namespace behind a generic device ("ng4n1" -> "nvme1n1"): the
 * numbers differ when the controller's and its subsystem's instances do (after a rebind).
 * Found in sysfs as the disk beside it with the same NSID. 0 or -ENOENT. */
int kdev_blockdev_of(const char *ngname, uint32_t nsid, char *out, size_t outlen);
/* Reads /sys/class/block/<name>/queue/<attr> as a number; -1 if absent. */
long kdev_queue_attr(const char *blockname, const char *attr);

/* Admin command through NVME_IOCTL_ADMIN64_CMD on fd: 0, NVMe status, or -errno with a
 * message (devname in it). cpl gets DW0/DW1 and the status. */
int kdev_admin_ioctl(int fd, const char *devname, const struct nvme_sqe *cmd, void *buf,
		     size_t len, uint32_t timeout_ms, struct nvme_cqe *cpl);
/* I/O command through NVME_IOCTL_IO64_CMD on a namespace's device file, synchronously. */
int kdev_io_ioctl(int fd, const char *devname, uint32_t ns_nsid, const struct nvme_sqe *cmd,
		  void *buf, size_t len, uint32_t timeout_ms, struct nvme_cqe *cpl);

/* The namespace id of an NVMe namespace device file (NVME_IOCTL_ID): > 0, or -errno. */
int kdev_nsid(int fd);

#endif
