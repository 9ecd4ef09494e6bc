/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The regular file transport: a file as a one-namespace NVM controller, the last resort when
 * there is no device at all (and the way the kernel-backed data path is tested on a machine
 * without NVMe). file:///path?lba=512|4096&size=1G&direct=auto|0|1&fixedbufs=auto|0|1, or a
 * bare absolute path of an existing file.
 *
 * The file is opened with O_DIRECT when its file system allows it (a probe read tells), else
 * through the page cache; either way an acknowledged write has reached the kernel, so it
 * survives the death of the process, and Flush (fdatasync) makes it durable. An exclusive
 * flock keeps a second program (or a second open in this one) off the file. The identity is
 * made up: model "uNVMe file backend", a serial derived from the file's absolute path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "uring_blkio.h"
#include "uring_kdev.h"
#include "uring_map.h"

#define FILE_LBA_DEFAULT 512u

static int file_matches(const char *address)
{
	struct kdev_addr a;
	return kdev_addr_is_kernel(address) && kdev_parse(address, &a) == 0 && a.kind == KDEV_FILE;
}

/* Opens (creating it with size bytes when it is missing and size is given), locks. */
static int open_file(const struct kdev_addr *a, bool direct)
{
	int flags = O_RDWR | (direct ? O_DIRECT : 0);
	int fd = open(a->path, flags | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && a->size) {
		fd = open(a->path, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 && ftruncate(fd, (off_t)a->size) != 0) {
			int err = errno;
			close(fd);
			unlink(a->path);
			return unvme_fail(-err, "%s: cannot make it %llu bytes: %s", a->path,
					  (unsigned long long)a->size, strerror(err));
		}
	}
	if (fd < 0) {
		int err = errno;
		if (err == EINVAL && direct)
			return -EINVAL; /* the file system has no O_DIRECT: the caller tries without */
		if (err == ENOENT)
			return unvme_fail(-ENOENT, "%s does not exist (give size=, e.g. "
					  "file://%s?size=1G, to create it)", a->path, a->path);
		return unvme_fail(-err, "cannot open %s: %s: %s", a->path, strerror(err),
				  uring_map_errno_advice(err));
	}
	return fd;
}

/* The lock lives on a descriptor of its own (see struct blk_dev). */
static int lock_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		return unvme_fail(-err, "cannot open %s: %s", path, strerror(err));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;
		close(fd);
		return unvme_fail(err == EWOULDBLOCK ? -EBUSY : -err, "%s is in use by another "
				  "program (or already open in this one)", path);
	}
	return fd;
}

/* Can O_DIRECT read one block into aligned memory here? (ext4 yes; some file systems refuse
 * at the first I/O rather than at open.) */
static bool direct_works(int fd, uint32_t lba)
{
	void *b = aligned_alloc(4096, 4096);
	if (!b)
		return false;
	ssize_t n = pread(fd, b, lba, 0);
	free(b);
	return n >= 0;
}

static int file_attach(struct unvme_ctrlr *c, const char *address)
{
	struct kdev_addr a;
	int rc = kdev_parse(address, &a);
	if (rc)
		return rc;
	uint32_t lba = a.lba ? a.lba : FILE_LBA_DEFAULT;
	bool direct = a.direct != KDEV_OFF;
	int fd = open_file(&a, direct);
	if (fd == -EINVAL && direct && a.direct == KDEV_AUTO) {
		direct = false;
		fd = open_file(&a, false);
	}
	if (fd < 0)
		return fd == -EINVAL ? unvme_fail(-EINVAL, "%s: the file system refuses O_DIRECT "
						  "(use direct=0)", a.path) : fd;
	if (direct && !direct_works(fd, lba)) {
		close(fd);
		if (a.direct == KDEV_ON)
			return unvme_fail(-EINVAL, "%s: O_DIRECT reads of %u bytes fail here (try "
					  "lba=4096 or direct=0)", a.path, lba);
		direct = false;
		fd = open_file(&a, false);
		if (fd < 0)
			return fd;
	}
	int lock_fd = lock_file(a.path);
	if (lock_fd < 0) {
		close(fd);
		return lock_fd;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(lock_fd);
		close(fd);
		return unvme_fail(-EINVAL, "%s is not a regular file", a.path);
	}
	uint64_t size = (uint64_t)st.st_size;
	if (a.size && size != a.size) {
		close(lock_fd);
		close(fd);
		return unvme_fail(-EINVAL, "%s is %llu bytes, but size=%llu was given (leave size= "
				  "out to take the file as it is)", a.path, (unsigned long long)size,
				  (unsigned long long)a.size);
	}
	if (size < lba) {
		close(lock_fd);
		close(fd);
		return unvme_fail(-EINVAL, "%s holds %llu bytes, less than one %u-byte block", a.path,
				  (unsigned long long)size, lba);
	}
	struct blk_dev *d = calloc(1, sizeof(*d));
	if (!d) {
		close(lock_fd);
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	d->lock_fd = lock_fd;
	d->pt_fd = d->admin_fd = -1;
	d->is_file = true;
	d->direct = direct;
	d->nsid = 1;
	d->lba_shift = lba == 4096 ? 12 : 9;
	d->nlbas = size / lba; /* a tail shorter than a block is left alone */
	snprintf(d->path, sizeof(d->path), "%s", a.path);
	const char *base = strrchr(a.path, '/');
	kdev_copy(d->name, sizeof(d->name), base ? base + 1 : a.path);
	/* Punching a hole past the end is a no-op on file systems that can punch at all. */
	d->can_punch = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)size, 4096) == 0;
	d->zero_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE; /* holes read back as zeroes */
	d->fixedbufs = a.fixedbufs != KDEV_OFF;
	d->iopoll = false; /* files have no poll queues */

	struct uring_ident *id = &d->ident;
	snprintf(id->model, sizeof(id->model), "uNVMe file backend");
	snprintf(id->firmware, sizeof(id->firmware), "FILE1.0");
	char real[PATH_MAX];
	uring_ident_serial(id, "FILE", realpath(a.path, real) ? real : a.path);
	id->nsid = 1;
	id->nlbas = d->nlbas;
	id->lba_size = lba;
	id->oncs = NVME_CTRL_ONCS_COMPARE | (d->can_punch ? NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WZ : 0) |
		   (1u << 7) /* Verify */;
	id->mdts = 9; /* 2 MiB */
	id->write_cache = true;
	id->nr_queues = c->opts.num_io_queues ? c->opts.num_io_queues : 1;

	uring_blkio_attach(c, d);
	snprintf(c->transport_info, sizeof(c->transport_info),
		 "regular file %.128s through io_uring (%s), %llu blocks of %u bytes; identity made up "
		 "(model \"%s\")", a.path, direct ? "O_DIRECT" : "page cache: the file system refuses "
		 "O_DIRECT", (unsigned long long)d->nlbas, lba, id->model);
	return 0;
}

static const struct unvme_transport_ops uring_file_ops = {
	.attach = file_attach,
	.detach = uring_blkio_detach,
	.dma_map = uring_blkio_dma_map,
	.dma_unmap = uring_blkio_dma_unmap,
	.msg = &uring_blkio_msg_ops,
};

static const char *const uring_file_schemes[] = {"file://", NULL};
static const struct unvme_transport unvme_transport_uring_file = {
	.name = "uring-file",
	.schemes = uring_file_schemes,
	.shape = kdev_addr_is_kernel,
	.explain = kdev_explain,
	.kind = UNVME_TRANSPORT_MESSAGE,
	.rank = 30,
	.matches = file_matches,
	.ops = &uring_file_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_uring_file);
