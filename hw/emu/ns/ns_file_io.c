/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Positioned vector I/O that moves the whole request. preadv/pwritev may transfer less than
 * asked (signals, file system limits); a namespace command must move all of its blocks or
 * fail, so the remainder is retried here.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hw/emu/ns/ns_file.h"
#include "lib/common/fdio.h"

int emu_ns_file_pio(int fd, struct iovec *iov, int iovcnt, uint64_t off, bool write, bool dsync)
{
	int flags = write && dsync ? RWF_DSYNC : 0;
	int rc = fd_pio_all(fd, iov, iovcnt, off, write, &flags);
	/* a kernel without RWF_DSYNC (before Linux 4.7): sync afterwards */
	if (rc == 0 && write && dsync && !flags && fdatasync(fd) != 0)
		rc = -errno;
	return rc;
}
