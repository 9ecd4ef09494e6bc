/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File backend: the namespace's blocks are the bytes of a regular file, block n at offset
 * n * LBA size. Data goes straight between the file and the host's buffers (preadv/pwritev
 * on the host segments, no bounce copy).
 *
 * Durability follows a real drive with a volatile write cache: a completed write is in the
 * page cache, so it survives the death of this process (SIGKILL) but not a power loss;
 * Flush (fdatasync) or FUA / a disabled write cache (RWF_DSYNC) make it survive that too.
 *
 * An exclusive flock keeps two emulated devices (in this or another process) from writing
 * the same file, as two controllers cannot own one private namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hw/emu/ns/ns_backend.h"
#include "lib/common/crash_point.h"
#include "hw/emu/ns/ns_file.h"
#include "hw/emu/ns/ns_internal.h"

struct ns_file {
	struct emu_ns_backend base;
	int fd;
	struct emu_ns_file_zero_caps zero_caps;
};

static struct ns_file *to_file(struct emu_ns_backend *be)
{
	return (struct ns_file *)be;
}

/*
 * A failed file operation is a media error for the host: Unrecovered Read Error for reads,
 * Write Fault for writes (NVMe Base 2.0 section 4.6.1.2.4). No DNR: an I/O error of the
 * file (network file system, full disk) may well go away.
 */
static uint16_t media_error(bool write)
{
	return emu_ns_status(NVME_SCT_MEDIA, write ? NVME_SC_WRITE_FAULT : NVME_SC_UNRECOVERED_READ,
			     false);
}

/* The host segments covering len bytes, as an iovec array (at most EMU_XFER_MAX_SEGS). */
static int xfer_iov(const struct emu_xfer *x, uint32_t len, struct iovec *iov)
{
	int n = 0;
	uint32_t nseg = x->nseg < EMU_XFER_MAX_SEGS ? x->nseg : EMU_XFER_MAX_SEGS;
	for (uint32_t i = 0; i < nseg && len; i++) {
		uint32_t l = x->seg[i].len < len ? x->seg[i].len : len;
		iov[n].iov_base = x->seg[i].addr;
		iov[n].iov_len = l;
		n++;
		len -= l;
	}
	return n;
}

static uint16_t file_read(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			  uint32_t len)
{
	struct iovec iov[EMU_XFER_MAX_SEGS];
	int n = xfer_iov(x, len, iov);
	return emu_ns_file_pio(to_file(be)->fd, iov, n, off, false, false) ? media_error(false) : 0;
}

static uint16_t file_write(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			   uint32_t len, bool durable)
{
	struct iovec iov[EMU_XFER_MAX_SEGS];
	CRASH_POINT("ns.write.before");
	if (crash_point_due("ns.write.torn")) {
		/* the first half of the blocks reach the file, the rest never do */
		uint32_t part = len / 2 / 512 * 512;
		int n = xfer_iov(x, part ? part : len, iov);
		(void)emu_ns_file_pio(to_file(be)->fd, iov, n, off, true, false);
		crash_point_die("ns.write.torn");
	}
	int n = xfer_iov(x, len, iov);
	uint16_t st = emu_ns_file_pio(to_file(be)->fd, iov, n, off, true, durable) ? media_error(true) : 0;
	CRASH_POINT("ns.write.after");
	return st;
}

/* Reads the file in chunks and compares each with the host's data (Compare, NVM 3.2.1). */
static uint16_t file_compare(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			     uint32_t len)
{
	uint8_t buf[16384];
	int fd = to_file(be)->fd;

	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t seg_len = x->seg[i].len < len ? x->seg[i].len : len;
		for (uint32_t done = 0; done < seg_len;) {
			uint32_t n = seg_len - done < sizeof(buf) ? seg_len - done : (uint32_t)sizeof(buf);
			struct iovec v = { .iov_base = buf, .iov_len = n };
			if (emu_ns_file_pio(fd, &v, 1, off, false, false))
				return media_error(false);
			if (memcmp(buf, x->seg[i].addr + done, n) != 0)
				return emu_ns_status(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, true);
			off += n;
			done += n;
		}
		len -= seg_len;
	}
	return 0;
}

static uint16_t file_zero(struct emu_ns_backend *be, uint64_t off, uint64_t len, bool deallocate,
			  bool durable)
{
	struct ns_file *f = to_file(be);
	if (emu_ns_file_zero_range(&f->zero_caps, f->fd, off, len, deallocate) != 0)
		return media_error(true);
	if (durable && fdatasync(f->fd) != 0)
		return media_error(true);
	return 0;
}

static int file_flush(struct emu_ns_backend *be)
{
	CRASH_POINT("ns.flush.before");
	int r = fdatasync(to_file(be)->fd) == 0 ? 0 : -errno;
	CRASH_POINT("ns.flush.after");
	return r;
}

/*
 * Format NVM: every block must read as zeroes afterwards, and the file keeps its size
 * throughout, so a command already in flight when the format began still finds its blocks
 * (zeroes or old data, never the end of the file). A hole punched over the whole file does
 * that; a file system without hole punching gets the file cut to nothing and grown back,
 * which every file system can do. fsync makes the result durable.
 */
static int file_erase(struct emu_ns_backend *be)
{
	struct ns_file *f = to_file(be);
	int r = -EOPNOTSUPP;
	if (!atomic_load_explicit(&f->zero_caps.no_punch_hole, memory_order_relaxed)) {
		do
			r = fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				      (off_t)be->capacity) ? -errno : 0;
		while (r == -EINTR);
		if (r == -EOPNOTSUPP || r == -ENOSYS)
			atomic_store_explicit(&f->zero_caps.no_punch_hole, true, memory_order_relaxed);
		else if (r)
			return r;
	}
	if (r && (ftruncate(f->fd, 0) != 0 || ftruncate(f->fd, (off_t)be->capacity) != 0))
		return -errno;
	CRASH_POINT("ns.format.erased");
	return fsync(f->fd) == 0 ? 0 : -errno;
}

static void file_destroy(struct emu_ns_backend *be)
{
	struct ns_file *f = to_file(be);
	close(f->fd); /* also drops the flock */
	free(f);
}

static const struct emu_ns_backend_ops file_ops = {
	.read = file_read,
	.write = file_write,
	.compare = file_compare,
	.zero = file_zero,
	.flush = file_flush,
	.erase = file_erase,
	.destroy = file_destroy,
};

/* Opens (or creates, when a size is given) the file read-write; -errno with a message. */
static int open_backing_file(const char *path, uint64_t size_bytes, bool *created, char *err,
			     size_t errlen)
{
	*created = false;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno != ENOENT) {
		int e = errno;
		emu_ns_set_error(err, errlen, "cannot open backing file %s: %s", path, strerror(e));
		return -e;
	}
	if (size_bytes == 0) {
		emu_ns_set_error(err, errlen,
				 "backing file %s does not exist (give a size to create it)", path);
		return -ENOENT;
	}
	fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		*created = true;
		return fd;
	}
	if (errno == EEXIST) /* another process created it just now: use theirs */
		fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "cannot create backing file %s: %s", path, strerror(e));
		return -e;
	}
	return fd;
}

int emu_sync_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0; /* the root directory */
	else
		*slash = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) != 0 ? -errno : 0;
	close(fd);
	return rc;
}

/* Checks (and for a new or empty file, sets) the file's size; -errno with a message. */
static int settle_size(int fd, const char *path, uint64_t size_bytes, uint32_t lba_size,
		       uint64_t *capacity, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "cannot stat backing file %s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		emu_ns_set_error(err, errlen, "backing file %s is not a regular file", path);
		return -EINVAL;
	}
	uint64_t cur = (uint64_t)st.st_size;
	if (cur == 0 && size_bytes == 0) {
		emu_ns_set_error(err, errlen, "backing file %s is empty (give a size)", path);
		return -EINVAL;
	}
	if (cur != 0 && size_bytes != 0 && cur != size_bytes) {
		emu_ns_set_error(err, errlen,
				 "backing file %s has %llu bytes but a size of %llu bytes was asked for",
				 path, (unsigned long long)cur, (unsigned long long)size_bytes);
		return -EINVAL;
	}
	uint64_t size = size_bytes ? size_bytes : cur;
	if (size % lba_size) {
		emu_ns_set_error(err, errlen,
				 "backing file %s: size %llu is not a multiple of the LBA size %u",
				 path, (unsigned long long)size, lba_size);
		return -EINVAL;
	}
	/* An empty file (new, or made by mktemp) grows sparse: unwritten blocks read as zeroes. */
	if (cur == 0 && ftruncate(fd, (off_t)size) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "cannot size backing file %s to %llu bytes: %s", path,
				 (unsigned long long)size, strerror(e));
		return -e;
	}
	*capacity = size;
	return 0;
}

int emu_ns_file_open(const char *path, uint64_t size_bytes, uint32_t lba_size,
		     struct emu_ns_backend **out, char *err, size_t errlen)
{
	if (!path || !path[0]) {
		emu_ns_set_error(err, errlen, "a file namespace needs a path");
		return -EINVAL;
	}
	if (lba_size == 0 || size_bytes % lba_size) {
		emu_ns_set_error(err, errlen,
				 "backing file %s: size %llu is not a multiple of the LBA size %u",
				 path, (unsigned long long)size_bytes, lba_size);
		return -EINVAL;
	}
	bool created;
	int fd = open_backing_file(path, size_bytes, &created, err, errlen);
	if (fd < 0)
		return fd;

	int r;
	uint64_t capacity = 0;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		r = -errno;
		if (r == -EWOULDBLOCK)
			emu_ns_set_error(err, errlen, "backing file %s is in use by another process",
					 path);
		else
			emu_ns_set_error(err, errlen, "cannot lock backing file %s: %s", path,
					 strerror(-r));
		goto fail;
	}
	r = settle_size(fd, path, size_bytes, lba_size, &capacity, err, errlen);
	if (r)
		goto fail;
	if (created) {
		(void)fsync(fd); /* its size, before its name */
		/* A new file must still exist after a power loss for its flushed blocks to
		 * survive: its directory entry is made durable once, at creation. File systems
		 * that cannot sync a directory (some network ones) make theirs durable
		 * otherwise, so a failure is not an error. */
		(void)emu_sync_parent_dir(path);
	}

	struct ns_file *f = calloc(1, sizeof(*f));
	if (!f) {
		emu_ns_set_error(err, errlen, "out of memory");
		r = -ENOMEM;
		goto fail;
	}
	f->fd = fd;
	f->base.ops = &file_ops;
	f->base.capacity = capacity;
	*out = &f->base;
	return 0;

fail:
	if (created)
		unlink(path); /* leave no half-made file behind */
	close(fd);
	return r;
}
