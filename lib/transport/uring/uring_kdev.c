/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices the kernel keeps: addresses, sysfs, the passthrough ioctls (see uring_kdev.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/common/fdio.h"
#include "lib/common/uriparse.h"
#include "lib/driver/errmsg.h"
#include "uring_kdev.h"
#include "uring_map.h"

bool kdev_addr_is_kernel(const char *addr)
{
	return addr[0] == '/' || strncmp(addr, "file://", 7) == 0;
}

static int parse_tristate(const char *v, int *out)
{
	if (!strcmp(v, "auto"))
		*out = KDEV_AUTO;
	else if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"))
		*out = KDEV_OFF;
	else if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes"))
		*out = KDEV_ON;
	else
		return -EINVAL;
	return 0;
}

static int parse_option(const char *addr, struct kdev_addr *a, const char *key, const char *val,
			bool file_uri)
{
	int rc = -EINVAL;
	const char *want = "";
	if (!strcmp(key, "iopoll")) {
		rc = parse_tristate(val, &a->iopoll);
		want = "auto, 0 or 1";
	} else if (!strcmp(key, "fixedbufs")) {
		rc = parse_tristate(val, &a->fixedbufs);
		want = "auto, 0 or 1";
	} else if (file_uri && !strcmp(key, "direct")) {
		rc = parse_tristate(val, &a->direct);
		want = "auto, 0 or 1";
	} else if (file_uri && !strcmp(key, "lba")) {
		uint64_t v = 0;
		rc = parse_size(val, &v);
		if (rc == 0 && v != 512 && v != 4096)
			rc = -EINVAL;
		a->lba = (uint32_t)v;
		want = "512 or 4096";
	} else if (file_uri && !strcmp(key, "size")) {
		rc = parse_size(val, &a->size);
		if (rc == 0 && a->size == 0)
			rc = -EINVAL;
		want = "a size such as 64M or 1G";
	} else {
		return unvme_fail(-EINVAL, "device id '%s': unknown option '%s' (known: %s)", addr, key,
				  file_uri ? "lba, size, direct, fixedbufs"
					   : "iopoll, fixedbufs");
	}
	if (rc)
		return unvme_fail(-EINVAL, "device id '%s': %s=%s is not %s", addr, key, val, want);
	return 0;
}

static enum kdev_kind kind_of(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return KDEV_NONE;
	if (S_ISBLK(st.st_mode))
		return KDEV_BLOCK;
	if (S_ISREG(st.st_mode))
		return KDEV_FILE;
	if (!S_ISCHR(st.st_mode))
		return KDEV_NONE;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	unsigned x, y;
	char tail;
	if (sscanf(base, "ng%un%u%c", &x, &y, &tail) == 2)
		return KDEV_NS_CHAR;
	if (sscanf(base, "nvme%u%c", &x, &tail) == 1)
		return KDEV_CTRL_CHAR;
	return KDEV_NONE;
}

int kdev_parse(const char *addr, struct kdev_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->iopoll = out->fixedbufs = out->direct = KDEV_AUTO;
	bool file_uri = strncmp(addr, "file://", 7) == 0;
	const char *p = file_uri ? addr + 7 : addr;
	const char *q = strchr(p, '?');
	size_t plen = q ? (size_t)(q - p) : strlen(p);
	if (plen == 0 || p[0] != '/')
		return unvme_fail(-EINVAL, "device id '%s': the path must be absolute (file:///dir/file)",
				  addr);
	int rc = file_uri ? percent_decode(p, plen, out->path, sizeof(out->path))
			  : (plen < sizeof(out->path) ? 0 : -ENAMETOOLONG);
	if (!file_uri && rc == 0) {
		memcpy(out->path, p, plen);
		out->path[plen] = '\0';
	}
	if (rc)
		return unvme_fail(rc == -ENAMETOOLONG ? rc : -EINVAL, "device id '%s': bad path (%s)",
				  addr, rc == -ENAMETOOLONG ? "too long" : "a bad %XX escape");
	for (const char *o = q ? q + 1 : NULL; o && *o;) {
		const char *end = strchr(o, '&');
		size_t n = end ? (size_t)(end - o) : strlen(o);
		char kv[256], key[64], val[192];
		if (n >= sizeof(kv))
			return unvme_fail(-EINVAL, "device id '%s': option too long", addr);
		memcpy(kv, o, n);
		kv[n] = '\0';
		char *eq = strchr(kv, '=');
		if (!eq || eq == kv || strlen(eq + 1) >= sizeof(val) || (size_t)(eq - kv) >= sizeof(key))
			return unvme_fail(-EINVAL, "device id '%s': option '%s' is not key=value", addr, kv);
		*eq = '\0';
		snprintf(key, sizeof(key), "%.63s", kv);
		snprintf(val, sizeof(val), "%s", eq + 1);
		rc = parse_option(addr, out, key, val, file_uri);
		if (rc)
			return rc;
		o = end ? end + 1 : NULL;
	}
	out->kind = kind_of(out->path);
	struct stat st;
	if (file_uri) {
		if (stat(out->path, &st) == 0 && !S_ISREG(st.st_mode))
			return unvme_fail(-EINVAL, "device id '%s': %s is not a regular file (name block "
					  "and character devices by their path)", addr, out->path);
		out->kind = KDEV_FILE;
	} else if (out->kind == KDEV_FILE && (q && strstr(q, "iopoll="))) {
		return unvme_fail(-EINVAL, "device id '%s': iopoll applies to devices, not files", addr);
	}
	return 0;
}

int kdev_explain(const char *addr)
{
	struct kdev_addr a;
	int rc = kdev_parse(addr, &a);
	if (rc)
		return rc;
	struct stat st;
	if (stat(a.path, &st) != 0) {
		int err = errno;
		return unvme_fail(-err, "%s: %s: %s", a.path, strerror(err), uring_map_errno_advice(err));
	}
	if (S_ISCHR(st.st_mode))
		return unvme_fail(-ENODEV, "%s is a character device but not an NVMe one: name a "
				  "namespace's generic device /dev/ngXnY, a controller /dev/nvmeX, or a "
				  "block device /dev/nvmeXnY", a.path);
	return unvme_fail(-ENODEV, "%s is neither a device (/dev/ngXnY, /dev/nvmeX, a block "
			  "device) nor a regular file", a.path);
}

int kdev_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int err = errno;
	return unvme_fail(-err, "cannot open %s: %s: %s", path, strerror(err),
			  uring_map_errno_advice(err));
}

long kdev_queue_attr(const char *blockname, const char *attr)
{
	char path[PATH_MAX], buf[64];
	snprintf(path, sizeof(path), "/sys/class/block/%s/queue/%s", blockname, attr);
	if (fd_read_text(path, buf, sizeof(buf)) != 0)
		return -1;
	char *end;
	long v = strtol(buf, &end, 10);
	return end == buf ? -1 : v;
}

static bool is_ctrl_name(const char *s)
{
	unsigned x;
	char tail;
	return sscanf(s, "nvme%u%c", &x, &tail) == 1;
}

/* A live controller under a subsystem's sysfs directory. */
static int ctrl_in_subsys(const char *subsys, char *out, size_t outlen)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "/sys/class/nvme-subsystem/%.200s", subsys);
	DIR *d = opendir(dir);
	if (!d)
		return -ENOENT;
	int rc = -ENOENT;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_ctrl_name(e->d_name))
			continue;
		char path[PATH_MAX], state[32];
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/state", e->d_name);
		if (fd_read_text(path, state, sizeof(state)) == 0 && strcmp(state, "live") != 0)
			continue;
		snprintf(out, outlen, "%s", e->d_name);
		rc = 0;
		break;
	}
	closedir(d);
	return rc;
}

int kdev_ctrl_of(const char *devname, char *out, size_t outlen)
{
	const char *cls = strncmp(devname, "ng", 2) == 0 ? "nvme-generic" : "block";
	char link[PATH_MAX], real[PATH_MAX];
	snprintf(link, sizeof(link), "/sys/class/%s/%s", cls, devname);
	if (!realpath(link, real))
		return -ENOENT;
	/* .../nvme/nvme0/ng0n1, or .../nvme-subsystem/nvme-subsys0/ng0n1 for a multipath head */
	char *slash = strrchr(real, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	const char *parent = strrchr(real, '/');
	parent = parent ? parent + 1 : real;
	if (is_ctrl_name(parent)) {
		snprintf(out, outlen, "%s", parent);
		return 0;
	}
	if (strncmp(parent, "nvme-subsys", 11) == 0)
		return ctrl_in_subsys(parent, out, outlen);
	return -ENOENT;
}

int kdev_blockdev_of(const char *ngname, uint32_t nsid, char *out, size_t outlen)
{
	char link[PATH_MAX], dir[PATH_MAX];
	snprintf(link, sizeof(link), "/sys/class/nvme-generic/%.64s", ngname);
	if (!realpath(link, dir))
		return -ENOENT;
	/* beside it: .../nvme/nvme4/{ng4n1,nvme1n1}, or a multipath head's subsystem directory */
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return -ENOENT;
	int rc = -ENOENT;
	struct dirent *e;
	while (rc && (e = readdir(d))) {
		unsigned x, y;
		char tail, path[PATH_MAX + 80], buf[32];
		if (sscanf(e->d_name, "nvme%un%u%c", &x, &y, &tail) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%.64s/nsid", dir, e->d_name);
		if (fd_read_text(path, buf, sizeof(buf)) == 0 && strtoul(buf, NULL, 10) == nsid) {
			snprintf(out, outlen, "%.*s", (int)(outlen - 1), e->d_name);
			rc = 0;
		}
	}
	closedir(d);
	return rc;
}

int kdev_nsid(int fd)
{
	int id = ioctl(fd, NVME_IOCTL_ID);
	return id < 0 ? -errno : id;
}

/* The ioctls answer the status field without the phase tag (> 0), or -1 with errno. */
static int ioctl_result(int rc, uint64_t result, struct nvme_cqe *cpl)
{
	cpl->dw0 = (uint32_t)result;
	cpl->dw1 = (uint32_t)(result >> 32);
	cpl->status = (uint16_t)((unsigned)rc << 1);
	return rc ? NVME_STATUS_FROM_CQE(cpl->status) : 0;
}

int kdev_admin_ioctl(int fd, const char *devname, const struct nvme_sqe *cmd, void *buf,
		     size_t len, uint32_t timeout_ms, struct nvme_cqe *cpl)
{
	struct nvme_passthru_cmd64 pc;
	int rc = uring_map_admin(cmd, buf, len, timeout_ms, &pc);
	if (rc)
		return rc;
	rc = ioctl(fd, NVME_IOCTL_ADMIN64_CMD, &pc);
	if (rc < 0) {
		int err = errno;
		return unvme_fail(-err, "%s: admin command 0x%02x: %s: %s", devname, cmd->opc,
				  strerror(err), uring_map_errno_advice(err));
	}
	return ioctl_result(rc, pc.result, cpl);
}

int kdev_io_ioctl(int fd, const char *devname, uint32_t ns_nsid, const struct nvme_sqe *cmd,
		  void *buf, size_t len, uint32_t timeout_ms, struct nvme_cqe *cpl)
{
	struct nvme_uring_cmd uc;
	int rc = uring_map_cmd(cmd, buf, len, ns_nsid, timeout_ms, &uc);
	if (rc)
		return rc;
	struct nvme_passthru_cmd64 pc;
	uring_map_to_ioctl(&uc, &pc);
	rc = ioctl(fd, NVME_IOCTL_IO64_CMD, &pc);
	if (rc < 0) {
		int err = errno;
		return unvme_fail(-err, "%s: command 0x%02x through the passthrough ioctl: %s: %s",
				  devname, cmd->opc, strerror(err), uring_map_errno_advice(err));
	}
	return ioctl_result(rc, pc.result, cpl);
}
