/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel block device transport: /dev/nvmeXnY (or any block device) through the block
 * layer, for reads and writes with O_DIRECT through io_uring; polled (IOPOLL) when the
 * device's queue has poll queues.
 *
 * The device is opened exclusively (O_EXCL), so one that is mounted or held by another
 * driver (LVM, RAID) is refused, and nothing can mount it while we write. On an NVMe
 * namespace the admin commands go through the controller's passthrough ioctl (/dev/nvmeX,
 * else the block device's), and so do the I/O commands the block layer has no operation for
 * (Compare, zone management, KV, vendor commands). When the kernel refuses passthrough (no
 * CAP_SYS_ADMIN before Linux 6.2) the device still works for block I/O: its identity is then
 * made from sysfs (model, serial, firmware revision) and the size the block layer reports,
 * and NVMe-only commands fail with that reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/common/fdio.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "uring_blkio.h"
#include "uring_kdev.h"
#include "uring_map.h"

static int block_matches(const char *address)
{
	struct kdev_addr a;
	return kdev_addr_is_kernel(address) && kdev_parse(address, &a) == 0 && a.kind == KDEV_BLOCK;
}

static void sysfs_field(const char *name, const char *attr, char *out, size_t len,
			const char *fallback)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/class/block/%s/device/%s", name, attr);
	if (fd_read_text(path, out, len) != 0 || !out[0])
		kdev_copy(out, len, fallback);
}

/* Admin passthrough: the controller's device if we may open it, else the namespace's. Kept
 * only if Identify Controller goes through; the reason it did not is left in why. */
static void probe_admin(struct blk_dev *d, uint32_t timeout_ms, char *why, size_t whylen)
{
	char ctrl[32];
	if (kdev_ctrl_of(d->name, ctrl, sizeof(ctrl)) == 0) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "/dev/%s", ctrl);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			d->admin_fd = fd;
			d->admin_own = true;
			snprintf(d->admin_name, sizeof(d->admin_name), "%s", ctrl);
		}
	}
	if (d->admin_fd < 0) {
		d->admin_fd = d->fd;
		snprintf(d->admin_name, sizeof(d->admin_name), "%s", d->name);
	}
	void *idbuf = aligned_alloc(4096, 4096);
	struct nvme_sqe cmd = { .opc = NVME_ADM_IDENTIFY, .cdw10 = NVME_CNS_CTRL };
	struct nvme_cqe cpl;
	int rc = idbuf ? kdev_admin_ioctl(d->admin_fd, d->admin_name, &cmd, idbuf, 4096, timeout_ms,
					  &cpl) : -ENOMEM;
	free(idbuf);
	if (rc == 0) {
		d->pt_fd = d->fd;
		return;
	}
	snprintf(why, whylen, "%s", rc < 0 ? strerror(-rc) : "Identify failed");
	unvme_errmsg_clear();
	if (d->admin_own)
		close(d->admin_fd);
	d->admin_fd = -1;
	d->admin_own = false;
}

static void make_identity(struct blk_dev *d, uint32_t lba, uint32_t queues, int discard_ok,
			  int write_back)
{
	struct uring_ident *id = &d->ident;
	char fallback[64];
	snprintf(fallback, sizeof(fallback), "Linux block device %.20s", d->name);
	sysfs_field(d->name, "model", id->model, sizeof(id->model), fallback);
	sysfs_field(d->name, "firmware_rev", id->firmware, sizeof(id->firmware), "BLK");
	char serial[64];
	sysfs_field(d->name, "serial", serial, sizeof(serial), "");
	if (serial[0])
		kdev_copy(id->serial, sizeof(id->serial), serial);
	else
		uring_ident_serial(id, "BLK", d->path);
	id->nsid = d->nsid;
	id->nlbas = d->nlbas;
	id->lba_size = lba;
	id->oncs = NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WZ | (1u << 7) /* Verify */ |
		   (discard_ok ? NVME_CTRL_ONCS_DSM : 0);
	id->mdts = 9;
	id->write_cache = write_back;
	id->nr_queues = queues ? queues : 1;
}

static int block_attach(struct unvme_ctrlr *c, const char *address)
{
	struct kdev_addr a;
	int rc = kdev_parse(address, &a);
	if (rc)
		return rc;
	/* O_EXCL on a block device: refused while mounted or held, and held while we use it;
	 * on a descriptor of its own (see struct blk_dev), the I/O one opened after it */
	int lock_fd = open(a.path, O_RDONLY | O_EXCL | O_CLOEXEC);
	int fd = lock_fd < 0 ? -1 : open(a.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (lock_fd >= 0)
			close(lock_fd);
		return unvme_fail(-err, "cannot open %s: %s: %s", a.path, strerror(err),
				  uring_map_errno_advice(err));
	}
	int lbsz = 0;
	uint64_t bytes = 0;
	if (ioctl(fd, BLKSSZGET, &lbsz) != 0 || ioctl(fd, BLKGETSIZE64, &bytes) != 0 || lbsz < 512 ||
	    (lbsz & (lbsz - 1))) {
		int err = errno;
		close(fd);
		close(lock_fd);
		return unvme_fail(-ENODEV, "%s: cannot read its block size and capacity: %s", a.path,
				  strerror(err));
	}
	struct blk_dev *d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		close(lock_fd);
		return -ENOMEM;
	}
	d->fd = fd;
	d->lock_fd = lock_fd;
	d->pt_fd = d->admin_fd = -1;
	d->direct = true;
	snprintf(d->path, sizeof(d->path), "%s", a.path);
	char real[PATH_MAX];
	const char *rp = realpath(a.path, real) ? real : a.path;
	const char *base = strrchr(rp, '/');
	kdev_copy(d->name, sizeof(d->name), base ? base + 1 : rp);
	d->lba_shift = (uint32_t)__builtin_ctz((unsigned)lbsz);
	d->nlbas = bytes >> d->lba_shift;
	int nsid = kdev_nsid(fd);
	d->nvme = nsid > 0;
	d->nsid = nsid > 0 ? (uint32_t)nsid : 1;
	d->zero_mode = FALLOC_FL_ZERO_RANGE;
	d->can_punch = true;
	long discard = kdev_queue_attr(d->name, "discard_max_bytes");
	char wc[32] = "";
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/class/block/%s/queue/write_cache", d->name);
	fd_read_text(path, wc, sizeof(wc));

	char why[128] = "not an NVMe device";
	if (d->nvme)
		probe_admin(d, c->opts.admin_timeout_ms, why, sizeof(why));
	if (d->admin_fd < 0)
		make_identity(d, (uint32_t)lbsz, c->opts.num_io_queues, discard > 0,
			      strcmp(wc, "write back") == 0);

	long poll = kdev_queue_attr(d->name, "io_poll");
	d->iopoll = a.iopoll == KDEV_AUTO ? poll == 1 : a.iopoll == KDEV_ON;
	d->fixedbufs = a.fixedbufs != KDEV_OFF;
	uring_blkio_attach(c, d);
	snprintf(c->transport_info, sizeof(c->transport_info),
		 "block device %.128s through io_uring (O_DIRECT, exclusive), completions %s; %s%s%s",
		 d->path, d->iopoll ? "polled (IOPOLL)" : "by interrupt",
		 d->admin_fd >= 0 ? "admin and NVMe-only commands through the passthrough ioctl on /dev/"
				  : "identity from sysfs, no NVMe passthrough: ",
		 d->admin_fd >= 0 ? d->admin_name : why, "");
	return 0;
}

static const struct unvme_transport_ops uring_block_ops = {
	.attach = block_attach,
	.detach = uring_blkio_detach,
	.dma_map = uring_blkio_dma_map,
	.dma_unmap = uring_blkio_dma_unmap,
	.msg = &uring_blkio_msg_ops,
};

static const struct unvme_transport unvme_transport_uring_block = {
	.name = "uring-block",
	.shape = kdev_addr_is_kernel,
	.explain = kdev_explain,
	.kind = UNVME_TRANSPORT_MESSAGE,
	.rank = 70,
	.matches = block_matches,
	.ops = &uring_block_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_uring_block);
