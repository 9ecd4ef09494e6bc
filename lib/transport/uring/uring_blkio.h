/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path shared by the kernel block device and regular file transports: NVMe commands
 * become io_uring reads, writes, fsyncs and fallocates on one file descriptor (uring_blkio.c);
 * what the block layer has no operation for goes through the NVMe passthrough ioctl when the
 * kernel allows it. uring_block.c and uring_file.c only open the device and describe it.
 */
#ifndef UNVME_DRIVER_URING_BLKIO_H
#define UNVME_DRIVER_URING_BLKIO_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/driver/transport.h"
#include "uring_ident.h"
#include "uring_ring.h"

struct blk_dev {
	int fd;
	/* Holds the file's flock or the block device's exclusive claim. Not the I/O descriptor:
	 * rings keep references to their registered files after they are torn down, which would
	 * hold a lock on it for a while after the program ended. */
	int lock_fd;
	char path[PATH_MAX];
	char name[64];          /* for messages: "nvme0n1", or the file's base name */
	bool is_file;
	bool nvme;              /* an NVMe namespace (NVME_IOCTL_ID answered) */
	bool direct;            /* O_DIRECT */
	bool iopoll;
	bool fixedbufs;
	uint32_t nsid;
	uint32_t lba_shift;
	uint64_t nlbas;
	int zero_mode;          /* fallocate mode for Write Zeroes */
	bool can_punch;         /* fallocate works: Write Zeroes and Deallocate are served */
	int pt_fd;              /* NVMe I/O passthrough ioctl (-1: none) */
	int admin_fd;           /* NVMe admin passthrough ioctl (-1: identity from ident) */
	bool admin_own;         /* admin_fd is the controller's device, ours to close */
	char admin_name[64];
	struct uring_ident ident;
	struct uring_bufgen gen;
};

/* The message-based operations of both transports (admin: passthrough or ident). */
extern const struct unvme_msg_ops uring_blkio_msg_ops;

/* Fills the controller's fields every attach sets (cap, page size, transfer limit) and hands
 * it the device. */
void uring_blkio_attach(struct unvme_ctrlr *c, struct blk_dev *d);
void uring_blkio_detach(struct unvme_ctrlr *c);
int uring_blkio_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len);
void uring_blkio_dma_unmap(void *ctx, uint64_t iova, size_t len);

#endif
