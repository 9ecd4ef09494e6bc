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

/* Drops the first n bytes of the vector. */
static void iov_advance(struct iovec **iov, int *iovcnt, size_t n)
{
	while (*iovcnt > 0 && n >= (*iov)->iov_len) {
		n -= (*iov)->iov_len;
		(*iov)++;
		(*iovcnt)--;
	}
	if (*iovcnt > 0 && n) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + n;
		(*iov)->iov_len -= n;
	}
}

int emu_ns_file_pio(int fd, struct iovec *iov, int iovcnt, uint64_t off, bool write, bool dsync)
{
	int flags = write && dsync ? RWF_DSYNC : 0;
	bool sync_after = false;

	iov_advance(&iov, &iovcnt, 0); /* skips empty leading entries */
	while (iovcnt > 0) {
		ssize_t n = write ? pwritev2(fd, iov, iovcnt, (off_t)off, flags)
				  : preadv(fd, iov, iovcnt, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (flags && (errno == EOPNOTSUPP || errno == ENOSYS)) {
				/* a kernel without RWF_DSYNC (before Linux 4.7): sync afterwards */
				flags = 0;
				sync_after = true;
				continue;
			}
			return -errno;
		}
		if (n == 0)
			return write ? -ENOSPC : -ENODATA; /* the file shrank under us */
		off += (uint64_t)n;
		iov_advance(&iov, &iovcnt, (size_t)n);
	}
	if (sync_after && fdatasync(fd) != 0)
		return -errno;
	return 0;
}
