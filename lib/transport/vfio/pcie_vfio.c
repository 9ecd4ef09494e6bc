/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VFIO transport: a real PCIe NVMe controller given to user space by vfio-pci.
 *
 * Each controller gets its own container (type1 IOMMU) holding its IOMMU group, so every
 * controller has its own IOVA page tables and the DMA layer maps each chunk into each of them
 * (VFIO_IOMMU_MAP_DMA). BAR0 is mmap()ed and the registers are plain volatile loads and
 * stores; bus mastering is switched on in the config space. Everything above this file (queue
 * pairs, admin path, controller bring-up honouring CAP) is the code that drives the emulated
 * controller: only register access and DMA mapping differ.
 *
 * Hot-plug. When the kernel wants the device back (a PCIe hot remove, an unbind), vfio-pci
 * signals the device request eventfd. The monitor thread then stops the device's DMA (bus
 * master off), puts pages of all ones where BAR0 was mapped (a register read on any thread
 * sees what a removed PCIe device answers, never an unmapped page), releases the device
 * (its file descriptor becomes /dev/null, so the kernel's removal completes while the
 * process runs on) and tells the driver: the controller is removed (hotplug.c), every
 * outstanding command comes back with an error, calls answer -ENODEV. The thread then
 * watches the address: when a device is bound to vfio-pci there again (the same one, or a
 * replacement in the slot), it takes it (its IOMMU group joins the controller's container
 * again and every DMA chunk is mapped into it), maps BAR0 back in place and the driver
 * attaches the controller again; queue pairs are re-created by their owners.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/common/anon_pages.h"
#include "lib/common/fdio.h"
#include "lib/common/env.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/devid.h"
#include "lib/driver/errmsg.h"
#include "lib/driver/transport.h"
#include "lib/common/thread.h"

#define NVME_CLASS_CODE 0x010802u
#define SETUP_HINT "scripts/setup.sh config"

struct vfio_dev {
	char bdf[13];
	int group_id;
	int container;
	int group;
	int device;
	volatile uint8_t *bar0;  /* NULL: access through pread/pwrite at bar0_off */
	size_t bar0_size;
	uint64_t bar0_off;
	uint64_t cfg_off;
	int req_fd;              /* device request eventfd, -1 if the kernel has none */
	int stop_fd;             /* eventfd that stops the monitor */
	pthread_t monitor;
	bool monitor_running;
	atomic_int gone;         /* the kernel asked for the device: registers read all ones */
	int iommu_type;
	struct unvme_ctrlr *ctrlr;
	struct vfio_dev *next;
};

#define ARRIVAL_POLL_MS 100

/* Open devices, to refuse a second attach of the same group in this process. */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vfio_dev *devs;

static int vfio_matches(const char *address)
{
	char bdf[13];
	return unvme_addr_parse_bdf(address, bdf);
}

/* Reads a sysfs attribute of the device into buf (newline stripped); 0 or -errno. */
static int sysfs_read(const char *bdf, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	return fd_read_text(path, buf, len);
}

/* The basename of a sysfs link of the device (driver, iommu_group), or "" if none. */
static void sysfs_link(const char *bdf, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	buf[0] = '\0';
	if (n <= 0)
		return;
	target[n] = '\0';
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	size_t n2 = strlen(base);
	if (n2 >= len)
		n2 = len - 1;
	memcpy(buf, base, n2);
	buf[n2] = '\0';
}

/* Every check that can be made before opening anything, each with what to run. */
static int check_device(const char *bdf, int *group_id)
{
	char path[PATH_MAX], buf[64];
	struct stat st;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	if (stat(path, &st) != 0)
		return unvme_fail(-ENODEV, "%s: no such PCI device for the VFIO transport (list the NVMe controllers with: "
				  "scripts/setup.sh status, or lspci -D -d ::0108)", bdf);
	if (sysfs_read(bdf, "class", buf, sizeof(buf)) == 0) {
		unsigned long cls = strtoul(buf, NULL, 16);
		if (cls != NVME_CLASS_CODE)
			return unvme_fail(-ENODEV, "%s: not an NVMe controller (PCI class %06lx, NVMe is "
					  "%06x)", bdf, cls, NVME_CLASS_CODE);
	}
	char drv[64];
	sysfs_link(bdf, "driver", drv, sizeof(drv));
	if (strcmp(drv, "vfio-pci") != 0) {
		if (drv[0])
			return unvme_fail(-EBUSY, "%s: bound to the kernel driver '%s', not to vfio-pci; "
					  "give it to uNVMe with: %s %s (scripts/setup.sh reset gives it "
					  "back)", bdf, drv, SETUP_HINT, bdf);
		return unvme_fail(-ENODEV, "%s: not bound to any driver; bind it to vfio-pci with: %s %s",
				  bdf, SETUP_HINT, bdf);
	}
	if (stat("/dev/vfio/vfio", &st) != 0)
		return unvme_fail(-ENODEV, "%s: /dev/vfio/vfio is missing: VFIO is not available "
				  "(modprobe vfio-pci)", bdf);
	char grp[32];
	sysfs_link(bdf, "iommu_group", grp, sizeof(grp));
	if (!grp[0])
		return unvme_fail(-ENODEV, "%s: has no IOMMU group: the IOMMU is off (boot with "
				  "intel_iommu=on or amd_iommu=on; QEMU needs -device intel-iommu)", bdf);
	*group_id = atoi(grp);
	return 0;
}

static int cfg_read16(struct vfio_dev *d, uint32_t off, uint16_t *v)
{
	return pread(d->device, v, 2, (off_t)(d->cfg_off + off)) == 2 ? 0 : -EIO;
}

static int cfg_write16(struct vfio_dev *d, uint32_t off, uint16_t v)
{
	return pwrite(d->device, &v, 2, (off_t)(d->cfg_off + off)) == 2 ? 0 : -EIO;
}

static void set_bus_master(struct vfio_dev *d, bool on)
{
	uint16_t cmd;
	if (cfg_read16(d, PCI_COMMAND, &cmd))
		return;
	if (on)
		cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE;
	else
		cmd &= (uint16_t)~PCI_COMMAND_MASTER;
	cfg_write16(d, PCI_COMMAND, cmd);
}

/* Opens IOMMU group gid, checks that it is viable and puts it into the controller's container
 * with the container's IOMMU model (d->iommu_type; a container whose last group went has
 * none any more). The group's descriptor, or -EBUSY (open elsewhere), -EPERM (not viable) or
 * another negative errno. */
static int join_group(struct vfio_dev *d, int gid)
{
	char path[64];
	snprintf(path, sizeof(path), "/dev/vfio/%d", gid);
	int group = open(path, O_RDWR | O_CLOEXEC);
	if (group < 0)
		return -errno;
	struct vfio_group_status gs = {.argsz = sizeof(gs)};
	int rc = ioctl(group, VFIO_GROUP_GET_STATUS, &gs) != 0	      ? -errno
		 : !(gs.flags & VFIO_GROUP_FLAGS_VIABLE)		      ? -EPERM
		 : ioctl(group, VFIO_GROUP_SET_CONTAINER, &d->container) != 0 ? -errno
		 : ioctl(d->container, VFIO_SET_IOMMU, d->iommu_type) != 0    ? -errno
									      : 0;
	if (rc) {
		close(group);
		return rc;
	}
	return group;
}

/* The device request eventfd: the kernel signals it when it wants the device back. */
static int arm_request(struct vfio_dev *d)
{
	struct vfio_irq_info irq = {.argsz = sizeof(irq), .index = VFIO_PCI_REQ_IRQ_INDEX};
	if (ioctl(d->device, VFIO_DEVICE_GET_IRQ_INFO, &irq) != 0 || irq.count == 0)
		return -ENOTSUP;
	int fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_REQ_IRQ_INDEX;
	set->start = 0;
	set->count = 1;
	memcpy(set->data, &fd, sizeof(int32_t));
	if (ioctl(d->device, VFIO_DEVICE_SET_IRQS, set) != 0) {
		close(fd);
		return -errno;
	}
	d->req_fd = fd;
	return 0;
}

static void disarm_request(struct vfio_dev *d)
{
	if (d->req_fd < 0)
		return;
	struct vfio_irq_set set = {.argsz = sizeof(set),
				   .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
				   .index = VFIO_PCI_REQ_IRQ_INDEX, .start = 0, .count = 0};
	ioctl(d->device, VFIO_DEVICE_SET_IRQS, &set);
	close(d->req_fd);
	d->req_fd = -1;
}

/* The kernel wants the device: stop it, give it up, tell the driver. */
static void release_device(struct vfio_dev *d)
{
	set_bus_master(d, false); /* no more DMA into our memory */
	atomic_store(&d->gone, 1);
	ctrlr_hotplug_removing(d->ctrlr);
	if (d->bar0) /* all ones where the registers were, as a removed device reads */
		(void)replace_with_anon_pages(d->bar0, d->bar0_size, 0xff);
	disarm_request(d);
	/* the descriptor's number stays valid (config space and BAR accesses fail harmlessly)
	 * and the device file's last reference goes: the kernel's removal completes */
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup3(nul, d->device, O_CLOEXEC);
		close(nul);
	}
	/* the group goes too (a device that comes back is in a new one, maybe of the same
	 * number), and with the container's last group its IOMMU mappings: they are made
	 * again on arrival */
	dma_mapper_unregister(&d->ctrlr->mapper);
	pthread_mutex_lock(&devs_lock);
	ioctl(d->group, VFIO_GROUP_UNSET_CONTAINER, &d->container);
	close(d->group);
	d->group = -1;
	pthread_mutex_unlock(&devs_lock);
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: the kernel took the device back (removal or unbind); it is "
			"attached again when a device is bound to vfio-pci at this address\n", d->bdf);
	ctrlr_hotplug_removed(d->ctrlr);
}

/* A device bound to vfio-pci at the address again: take it. 0, or a negative errno (then
 * the monitor looks again later). */
static int reacquire_device(struct vfio_dev *d)
{
	char drv[64], grp[32];
	sysfs_link(d->bdf, "driver", drv, sizeof(drv));
	if (strcmp(drv, "vfio-pci") != 0)
		return -ENODEV;
	sysfs_link(d->bdf, "iommu_group", grp, sizeof(grp));
	if (!grp[0])
		return -ENODEV;
	int gid = atoi(grp);
	int group = join_group(d, gid);
	if (group < 0)
		return group;
	int rc = 0;
	int dev = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, d->bdf);
	struct vfio_region_info reg = {.argsz = sizeof(reg), .index = VFIO_PCI_BAR0_REGION_INDEX};
	if (dev < 0 || ioctl(dev, VFIO_DEVICE_GET_REGION_INFO, &reg) != 0)
		rc = -errno;
	else if (reg.size != d->bar0_size)
		rc = -EXDEV; /* another BAR0: another kind of device */
	else if (d->bar0 && mmap((void *)d->bar0, reg.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				 dev, (off_t)reg.offset) == MAP_FAILED)
		rc = -errno;
	if (rc == 0) {
		/* every DMA chunk into the new group's page tables */
		rc = dma_mapper_register(&d->ctrlr->mapper);
		unvme_errmsg_clear();
	}
	if (rc) {
		if (dev >= 0)
			close(dev);
		ioctl(group, VFIO_GROUP_UNSET_CONTAINER, &d->container);
		close(group);
		return rc;
	}
	d->bar0_off = reg.offset;
	dup3(dev, d->device, O_CLOEXEC); /* the same descriptor number, the new device */
	close(dev);
	pthread_mutex_lock(&devs_lock);
	d->group = group;
	d->group_id = gid;
	pthread_mutex_unlock(&devs_lock);
	set_bus_master(d, true);
	arm_request(d);
	atomic_store(&d->gone, 0);
	ctrlr_hotplug_arrived(d->ctrlr);
	return 0;
}

static void *monitor_main(void *arg)
{
	struct vfio_dev *d = arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = d->req_fd, .events = POLLIN}, {.fd = d->stop_fd, .events = POLLIN}};
		int n = poll(p, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[1].revents & POLLIN))
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		uint64_t v;
		if (read(d->req_fd, &v, sizeof(v)) < 0) {
			/* nothing: the event is what counts */
		}
		release_device(d);
		/* until a device is at the address again, or the controller is closed */
		for (int last = 0;;) {
			struct pollfd s = {.fd = d->stop_fd, .events = POLLIN};
			if (poll(&s, 1, ARRIVAL_POLL_MS) > 0)
				return NULL;
			int rc = reacquire_device(d);
			if (rc == 0)
				break;
			if (rc != last && rc != -ENODEV && unvme_log_on())
				fprintf(stderr, "unvme: %s: a device is bound to vfio-pci again, but cannot "
					"be taken yet: %s\n", d->bdf, strerror(-rc));
			last = rc;
		}
	}
}

static void start_monitor(struct vfio_dev *d)
{
	d->req_fd = -1;
	d->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (d->stop_fd < 0)
		return;
	if (arm_request(d) == 0 && unvme_thread_start(&d->monitor, monitor_main, d) == 0) {
		d->monitor_running = true;
		return;
	}
	disarm_request(d);
	close(d->stop_fd);
	d->stop_fd = -1;
}

static void stop_monitor(struct vfio_dev *d)
{
	if (d->monitor_running) {
		uint64_t one = 1;
		if (write(d->stop_fd, &one, sizeof(one)) < 0) {
			/* cannot happen with a valid eventfd */
		}
		pthread_join(d->monitor, NULL);
		d->monitor_running = false;
	}
	disarm_request(d);
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	d->stop_fd = -1;
}

static void dev_close(struct vfio_dev *d)
{
	if (d->device >= 0) {
		stop_monitor(d);
		if (!atomic_load(&d->gone))
			set_bus_master(d, false);
		/* A function reset leaves the controller as the next user expects to find it. */
		ioctl(d->device, VFIO_DEVICE_RESET);
	}
	if (d->bar0)
		munmap((void *)d->bar0, d->bar0_size);
	if (d->device >= 0)
		close(d->device);
	if (d->group >= 0) {
		ioctl(d->group, VFIO_GROUP_UNSET_CONTAINER, &d->container);
		close(d->group);
	}
	if (d->container >= 0)
		close(d->container);
	free(d);
}

static int vfio_attach(struct unvme_ctrlr *ctrlr, const char *address)
{
	char bdf[13];
	if (!unvme_addr_parse_bdf(address, bdf))
		return unvme_fail(-EINVAL, "%s: not a PCI address", address);
	int group_id;
	int rc = check_device(bdf, &group_id);
	if (rc)
		return rc;

	pthread_mutex_lock(&devs_lock);
	for (struct vfio_dev *o = devs; o; o = o->next) {
		if (o->group_id == group_id) {
			pthread_mutex_unlock(&devs_lock);
			return unvme_fail(-EBUSY, "%s: IOMMU group %d is already attached in this process "
					  "(by %s); close that controller first", bdf, group_id, o->bdf);
		}
	}
	pthread_mutex_unlock(&devs_lock);

	struct vfio_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->group_id = group_id;
	d->container = d->group = d->device = d->req_fd = d->stop_fd = -1;

	d->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (d->container < 0) {
		rc = unvme_fail(-errno, "%s: cannot open /dev/vfio/vfio: %s (run as root)", bdf,
				strerror(errno));
		goto fail;
	}
	if (ioctl(d->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		rc = unvme_fail(-ENOTSUP, "%s: unknown VFIO API version", bdf);
		goto fail;
	}
	int iommu_type = VFIO_TYPE1v2_IOMMU;
	if (ioctl(d->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
		iommu_type = VFIO_TYPE1_IOMMU;
		if (ioctl(d->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
			rc = unvme_fail(-ENOTSUP, "%s: the kernel's VFIO has no type1 IOMMU backend "
					"(modprobe vfio_iommu_type1)", bdf);
			goto fail;
		}
	}
	d->iommu_type = iommu_type;
	d->group = join_group(d, group_id);
	if (d->group < 0) {
		int e = -d->group;
		if (e == EBUSY)
			rc = unvme_fail(-EBUSY, "%s: IOMMU group %d is in use by another process (another "
					"uNVMe program, or a VM, has the device)", bdf, group_id);
		else if (e == EPERM)
			rc = unvme_fail(-EPERM, "%s: IOMMU group %d is not viable: every device in "
					"/sys/kernel/iommu_groups/%d/devices must be bound to vfio-pci (or "
					"no driver)", bdf, group_id, group_id);
		else
			rc = unvme_fail(-e, "%s: cannot set up /dev/vfio/%d in an IOMMU container: %s",
					bdf, group_id, strerror(e));
		goto fail;
	}
	d->device = ioctl(d->group, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (d->device < 0) {
		rc = unvme_fail(-errno, "%s: cannot get the device from VFIO: %s", bdf, strerror(errno));
		goto fail;
	}
	struct vfio_device_info info = {.argsz = sizeof(info)};
	if (ioctl(d->device, VFIO_DEVICE_GET_INFO, &info) != 0 || !(info.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    info.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
		rc = unvme_fail(-ENODEV, "%s: VFIO does not describe it as a PCI device", bdf);
		goto fail;
	}
	struct vfio_region_info reg = {.argsz = sizeof(reg), .index = VFIO_PCI_CONFIG_REGION_INDEX};
	if (ioctl(d->device, VFIO_DEVICE_GET_REGION_INFO, &reg) != 0) {
		rc = unvme_fail(-errno, "%s: no PCI config space region: %s", bdf, strerror(errno));
		goto fail;
	}
	d->cfg_off = reg.offset;
	reg = (struct vfio_region_info){.argsz = sizeof(reg), .index = VFIO_PCI_BAR0_REGION_INDEX};
	if (ioctl(d->device, VFIO_DEVICE_GET_REGION_INFO, &reg) != 0 || reg.size < 0x2000) {
		rc = unvme_fail(-ENODEV, "%s: BAR0 is missing or too small for an NVMe controller", bdf);
		goto fail;
	}
	d->bar0_off = reg.offset;
	d->bar0_size = reg.size;
	if (reg.flags & VFIO_REGION_INFO_FLAG_MMAP) {
		void *p = mmap(NULL, reg.size, PROT_READ | PROT_WRITE, MAP_SHARED, d->device,
			       (off_t)reg.offset);
		if (p != MAP_FAILED)
			d->bar0 = p;
	}
	set_bus_master(d, true);
	d->ctrlr = ctrlr;
	start_monitor(d);

	pthread_mutex_lock(&devs_lock);
	d->next = devs;
	devs = d;
	pthread_mutex_unlock(&devs_lock);
	ctrlr->transport_ctx = d;
	return 0;
fail:
	dev_close(d);
	return rc;
}

static void vfio_detach(struct unvme_ctrlr *ctrlr)
{
	struct vfio_dev *d = ctrlr->transport_ctx;
	pthread_mutex_lock(&devs_lock);
	for (struct vfio_dev **pp = &devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	pthread_mutex_unlock(&devs_lock);
	dev_close(d);
	ctrlr->transport_ctx = NULL;
}

static uint32_t vfio_read32(void *ctx, uint32_t off)
{
	struct vfio_dev *d = ctx;
	if (atomic_load_explicit(&d->gone, memory_order_relaxed) || off + 4 > d->bar0_size)
		return UINT32_MAX;
	if (d->bar0)
		return *(volatile uint32_t *)(d->bar0 + off);
	uint32_t v;
	if (pread(d->device, &v, 4, (off_t)(d->bar0_off + off)) != 4)
		return UINT32_MAX;
	return v;
}

static void vfio_write32(void *ctx, uint32_t off, uint32_t val)
{
	struct vfio_dev *d = ctx;
	/* Release: the queue entries written before a doorbell reach memory before it. */
	atomic_thread_fence(memory_order_release);
	if (atomic_load_explicit(&d->gone, memory_order_relaxed) || off + 4 > d->bar0_size)
		return;
	if (d->bar0) {
		*(volatile uint32_t *)(d->bar0 + off) = val;
		return;
	}
	if (pwrite(d->device, &val, 4, (off_t)(d->bar0_off + off)) != 4) {
		/* a failed register write shows as a timeout above */
	}
}

/* 64-bit registers as two 32-bit accesses, low dword first: every controller accepts that. */
static uint64_t vfio_read64(void *ctx, uint32_t off)
{
	uint32_t lo = vfio_read32(ctx, off);
	uint32_t hi = vfio_read32(ctx, off + 4);
	return ((uint64_t)hi << 32) | lo;
}

static void vfio_write64(void *ctx, uint32_t off, uint64_t val)
{
	vfio_write32(ctx, off, (uint32_t)val);
	vfio_write32(ctx, off + 4, (uint32_t)(val >> 32));
}

static int vfio_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	struct vfio_dev *d = ctx;
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uint64_t)(uintptr_t)vaddr,
		.iova = iova,
		.size = len,
	};
	if (ioctl(d->container, VFIO_IOMMU_MAP_DMA, &m) != 0) {
		int e = errno;
		return unvme_fail(-e, "%s: VFIO_IOMMU_MAP_DMA of %zu bytes at IOVA 0x%llx: %s%s", d->bdf,
				  len, (unsigned long long)iova, strerror(e),
				  e == ENOMEM ? " (locked memory limit? run as root or raise ulimit -l)" : "");
	}
	return 0;
}

static void vfio_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct vfio_dev *d = ctx;
	struct vfio_iommu_type1_dma_unmap u = {.argsz = sizeof(u), .iova = iova, .size = len};
	ioctl(d->container, VFIO_IOMMU_UNMAP_DMA, &u);
}

/* Client processes (mp.h) ring their doorbells in BAR0 through the device's descriptor:
 * the pages from the end of the registers (1000h) on. */
static int vfio_share_doorbells(void *ctx, int *fd, uint64_t *off, size_t *len, uint64_t *wake_off)
{
	struct vfio_dev *d = ctx;
	*wake_off = UINT64_MAX; /* hardware watches its doorbells itself */
	if (!d->bar0)
		return -EOPNOTSUPP; /* a BAR0 without mmap: no doorbells to share */
	*fd = fcntl(d->device, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	*off = d->bar0_off + NVME_REG_DBS;
	*len = d->bar0_size - NVME_REG_DBS;
	return 0;
}

static const struct unvme_transport_ops vfio_ops = {
	.attach = vfio_attach,
	.detach = vfio_detach,
	.read32 = vfio_read32,
	.write32 = vfio_write32,
	.read64 = vfio_read64,
	.write64 = vfio_write64,
	.dma_map = vfio_dma_map,
	.dma_unmap = vfio_dma_unmap,
	.share_doorbells = vfio_share_doorbells,
};

static const struct unvme_transport unvme_transport_vfio = {
	.name = "vfio",
	.kind = UNVME_TRANSPORT_REGISTERS,
	.rank = 80,
	.matches = vfio_matches,
	.ops = &vfio_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_vfio);
