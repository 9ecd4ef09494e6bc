/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the file backend (ns_file.c): whole-length positioned I/O and range zeroing. */
#ifndef UNVME_EMU_NS_FILE_H
#define UNVME_EMU_NS_FILE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * Moves every byte of iov (iovcnt entries) at file offset off, retrying interrupted and
 * short transfers. write with dsync: the data is on stable storage on return (RWF_DSYNC, or
 * fdatasync where the kernel lacks it). The iov array is consumed (modified).
 * Returns 0 or -errno; reading past the end of the file gives -ENODATA.
 */
int emu_ns_file_pio(int fd, struct iovec *iov, int iovcnt, uint64_t off, bool write, bool dsync);

/*
 * What fallocate modes the file system refused (EOPNOTSUPP), remembered so that a file system
 * without them costs one failed system call, not one per command.
 */
struct emu_ns_file_zero_caps {
	atomic_bool no_punch_hole;
	atomic_bool no_zero_range;
};

/*
 * Makes [off, off + len) of the file read as zeroes without changing its size:
 * deallocate prefers FALLOC_FL_PUNCH_HOLE (the blocks go back to the file system), otherwise
 * FALLOC_FL_ZERO_RANGE (the blocks stay allocated); either one is the fallback of the other,
 * and writing zeroes is the last resort. Returns 0 or -errno.
 */
int emu_ns_file_zero_range(struct emu_ns_file_zero_caps *caps, int fd, uint64_t off,
			   uint64_t len, bool deallocate);
/* The last resort: writes zeroes over [off, off + len). Returns 0 or -errno. */
int emu_ns_file_write_zeroes(int fd, uint64_t off, uint64_t len);

#endif
