/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whole-length file I/O (internal): write(2), pwrite(2), pread(2) and pwritev(2) may move less
 * than asked (signals, file system limits), so every caller that must move all of it loops.
 * The one loop of each kind lives here. All return 0 or -errno.
 */
#ifndef UNVME_COMMON_FDIO_H
#define UNVME_COMMON_FDIO_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* write(2) of all len bytes at the file position. */
static inline int fd_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* pwrite(2) or pread(2) of all len bytes at off; a read that finds the end of the file
 * first gives -ENODATA. */
static inline int fd_pio1_all(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return write ? -EIO : -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static inline int fd_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	return fd_pio1_all(fd, (void *)buf, len, off, true);
}

static inline int fd_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	return fd_pio1_all(fd, buf, len, off, false);
}

/* Drops the first n bytes of an I/O vector (*iov and *iovcnt move past whole entries). */
static inline void iov_advance(struct iovec **iov, int *iovcnt, size_t n)
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

/*
 * Positioned vector I/O of every byte of iov at off: pwritev2(2) with *flags for a write,
 * preadv(2) for a read. Flags the kernel does not know (RWF_DSYNC before Linux 4.7) are
 * dropped (*flags becomes 0, so the caller knows to fdatasync) and the write goes on without
 * them. The iov array is consumed. Reading past the end of the file gives -ENODATA, a write
 * that moves nothing -ENOSPC.
 */
static inline int fd_pio_all(int fd, struct iovec *iov, int iovcnt, uint64_t off, bool write,
			     int *flags)
{
	iov_advance(&iov, &iovcnt, 0); /* skips empty leading entries */
	while (iovcnt > 0) {
		ssize_t n = write ? pwritev2(fd, iov, iovcnt, (off_t)off, *flags)
				  : preadv(fd, iov, iovcnt, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (write && *flags && (errno == EOPNOTSUPP || errno == ENOSYS)) {
				*flags = 0;
				continue;
			}
			return -errno;
		}
		if (n == 0)
			return write ? -ENOSPC : -ENODATA;
		off += (uint64_t)n;
		iov_advance(&iov, &iovcnt, (size_t)n);
	}
	return 0;
}

/* A small text file (a sysfs attribute) into buf, trailing white space removed; 0 or -errno.
 * One read(2): sysfs gives an attribute whole. */
static inline int fd_read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

#endif
