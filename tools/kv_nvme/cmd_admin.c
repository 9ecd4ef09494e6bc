/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_nvme's admin commands, with the original's options and output: list, id-ctrl,
 * list-ctrl, get-log, smart-log, format, fw-download (which also activates the image, slot 2
 * action 1, as the original's did) and reset. They go to the controller through the driver.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv_nvme.h"
#include "unvme/print.h"
#include "unvme/unvme.h"

static int open_ctrlr(const char *cmd, const char *dev, struct unvme_ctrlr **c)
{
	int rc = unvme_ctrlr_open(dev, NULL, c);
	if (rc) {
		fprintf(stderr, KVN_PROG ": %s: cannot open device '%s': %s\n", cmd, dev,
			unvme_errmsg());
		return KVT_EXIT_HOST;
	}
	return KVT_EXIT_OK;
}

/* The original's "NVMe Status:NAME(status)" for a status, or the host-side error. */
static int status_exit(const char *cmd, int st)
{
	if (st > 0) {
		fprintf(stderr, "NVMe Status:%s(%x)\n", unvme_status_str(st, NVME_CSI_NVM), st);
		return KVT_EXIT_DEVICE;
	}
	fprintf(stderr, KVN_PROG ": %s: %s\n", cmd, unvme_errmsg());
	return KVT_EXIT_HOST;
}

/* Output format of id-ctrl and smart-log: normal, json or binary. */
static int output_format(const char *cmd, const char *fmt, int *out)
{
	if (!fmt || strcmp(fmt, "normal") == 0)
		*out = 0;
	else if (strcmp(fmt, "json") == 0)
		*out = 1;
	else if (strcmp(fmt, "binary") == 0)
		*out = 2;
	else
		return kvn_usage_error(cmd, "invalid value '%s' for --output-format (-o): normal, "
				       "json or binary", fmt);
	return -1;
}

/* The start of a command that needs nothing more than its options, its output format (when
 * ofmt is not NULL) and the device: -1 to go on with *c open, or an exit code. */
static int parse_and_open(const struct kvn_cmd *cmd, int argc, char **argv,
			  const struct kvn_opt *opts, const char *const *ofmt, int *fmt,
			  const char **dev, struct unvme_ctrlr **c)
{
	int rc = kvn_parse(cmd, argc, argv, opts, dev);
	if (rc >= 0)
		return rc;
	if (ofmt && (rc = output_format(cmd->name, *ofmt, fmt)) >= 0)
		return rc;
	return open_ctrlr(cmd->name, *dev, c) ? KVT_EXIT_HOST : -1;
}

/* ---- list ---- */

struct devs {
	char name[64][PATH_MAX];
	int n;
};

static void add_dev(void *arg, const char *name, const char *address)
{
	(void)address;
	struct devs *d = arg;
	if (d->n < 64)
		snprintf(d->name[d->n++], PATH_MAX, "%s", name);
}

/* NVMe functions on the PCI bus that vfio-pci holds (the user-space driver's), as the
 * original listed the controllers its SPDK process had. */
static void add_vfio_functions(struct devs *d)
{
	DIR *dir = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	while (dir && (e = readdir(dir)) != NULL && d->n < 64) {
		char path[PATH_MAX], val[64] = "", link[PATH_MAX];
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", e->d_name);
		FILE *f = fopen(path, "r");
		bool nvme = f && fgets(val, sizeof(val), f) && strncmp(val, "0x010802", 8) == 0;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", e->d_name);
		ssize_t n = nvme ? readlink(path, link, sizeof(link) - 1) : -1;
		if (n > 0) {
			link[n] = '\0';
			if (strstr(link, "/vfio-pci"))
				snprintf(d->name[d->n++], PATH_MAX, "%s", e->d_name);
		}
	}
	if (dir)
		closedir(dir);
}

/* A size with the SI suffix the original used ("1.07 GB"). */
static void si(double v, char *out, size_t len, const char *unit)
{
	static const char *const pre[] = { "", "K", "M", "G", "T", "P" };
	int i = 0;
	while (v >= 1000.0 && i < 5) {
		v /= 1000.0;
		i++;
	}
	snprintf(out, len, "%6.2f %2s%s", v, pre[i], unit);
}

static void list_row(const char *name, struct unvme_ctrlr *c, struct unvme_ns *ns)
{
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
	const struct nvme_id_ns *nid = unvme_ns_identify_data(ns);
	uint32_t lba = unvme_ns_lba_size(ns);
	bool kv = unvme_ns_csi(ns) == NVME_CSI_KV;
	char usage[96], used[32], size[32], format[32];
	si((double)nid->nsze * lba, size, sizeof(size), "B");
	if (kv) {
		/* a KV SSD's usage in percent */
		double pct = nid->nsze ? 100.0 * (double)nid->nuse / (double)nid->nsze : 0;
		snprintf(usage, sizeof(usage), "%6.2f %2s  / %6.2f %2s ", pct, "%", 100.0, "%");
	} else {
		si((double)nid->nuse * lba, used, sizeof(used), "B");
		snprintf(usage, sizeof(usage), "%s / %s", used, size);
	}
	snprintf(format, sizeof(format), "%3u %2sB + %2u B", lba >= 1024 ? lba / 1024 : lba,
		 lba >= 1024 ? "Ki" : "", 0u);
	printf("%-16s %-20.20s %-40.40s %-9u %-26s %-16s %-10s %-.8s\n", name, id->sn, id->mn,
	       unvme_ns_id(ns), usage, format, kv ? "KV" : "LBA", id->fr);
}

int kvn_list(const struct kvn_cmd *cmd, int argc, char **argv)
{
	const char *fmt = NULL, *dev;
	const struct kvn_opt opts[] = {
		{ "output-format", 'o', KVN_STR, &fmt, "normal (json: use unvme list -o json)", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	if (fmt && strcmp(fmt, "normal") != 0)
		return kvn_usage_error(cmd->name, "--output-format %s: this tool lists in the "
				       "original's table only (unvme list -o json gives JSON)", fmt);
	struct devs *d = calloc(1, sizeof(*d));
	if (!d)
		return KVT_EXIT_HOST;
	if (dev)
		add_dev(d, dev, NULL);
	else {
		unvme_devid_list(add_dev, d);
		add_vfio_functions(d);
	}
	printf("%-16s %-20s %-40s %-9s %-26s %-16s %-10s %-8s\n", "BDF Address", "SN", "Model",
	       "Namespace", "Usage", "Format", "SSD Type", "FW Rev");
	printf("%-16s %-20s %-40s %-9s %-26s %-16s %-10s %-8s\n", "----------------",
	       "--------------------", "----------------------------------------", "---------",
	       "--------------------------", "----------------", "----------", "--------");
	for (int i = 0; i < d->n; i++) {
		struct unvme_ctrlr *c;
		if (unvme_ctrlr_open(d->name[i], NULL, &c)) {
			printf("%-16s (not available: %s)\n", d->name[i], unvme_errmsg());
			continue;
		}
		for (uint32_t nsid = unvme_ctrlr_first_nsid(c); nsid;
		     nsid = unvme_ctrlr_next_nsid(c, nsid)) {
			struct unvme_ns *ns = unvme_ctrlr_ns(c, nsid);
			if (ns)
				list_row(d->name[i], c, ns);
		}
		unvme_ctrlr_close(c);
	}
	free(d);
	return KVT_EXIT_OK;
}

/* ---- identify, logs ---- */

/* Prints (or writes) a structure the way id-ctrl and smart-log do: -b FILE, -o binary to
 * stdout, -o json, or text after a title. */
static int show(const char *cmd, const char *raw_file, int fmt, const void *data, size_t len,
		void (*print)(FILE *, const void *, enum unvme_fmt), const char *title)
{
	if (raw_file)
		return kvn_write_file(cmd, raw_file, data, len);
	if (fmt == 2)
		return fwrite(data, 1, len, stdout) == len ? KVT_EXIT_OK : KVT_EXIT_HOST;
	if (fmt == 0 && title)
		printf("%s\n", title);
	print(stdout, data, fmt == 1 ? UNVME_FMT_JSON : UNVME_FMT_TEXT);
	return KVT_EXIT_OK;
}

static void print_id_ctrl(FILE *f, const void *d, enum unvme_fmt fmt)
{
	unvme_print_id_ctrl(f, d, fmt);
}

static void print_smart(FILE *f, const void *d, enum unvme_fmt fmt)
{
	unvme_print_smart_log(f, d, fmt);
}

int kvn_id_ctrl(const struct kvn_cmd *cmd, int argc, char **argv)
{
	bool vs = false, human = false;
	const char *raw = NULL, *ofmt = NULL, *dev;
	const struct kvn_opt opts[] = {
		{ "vendor-specific", 'v', KVN_FLAG, &vs, "dump binary vendor infos (in the text)", NULL },
		{ "raw-binary", 'b', KVN_STR, &raw, "write the structure, in binary, to FILE", NULL },
		{ "human-readable", 'H', KVN_FLAG, &human, "show infos in readable format", NULL },
		{ "output-format", 'o', KVN_STR, &ofmt, "normal, json or binary", NULL },
		{ 0 },
	};
	int fmt = 0;
	struct unvme_ctrlr *c;
	int rc = parse_and_open(cmd, argc, argv, opts, &ofmt, &fmt, &dev, &c);
	if (rc >= 0)
		return rc;
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	int st = id ? unvme_identify(c, NVME_CNS_CTRL, 0, 0, id) : -ENOMEM;
	rc = st ? status_exit(cmd->name, st)
		: show(cmd->name, raw, fmt, id, sizeof(*id), print_id_ctrl, "NVME Identify Controller:");
	free(id);
	unvme_ctrlr_close(c);
	return rc;
}

int kvn_list_ctrl(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint16_t cntid = 0;
	uint32_t nsid = 0;
	const char *dev;
	const struct kvn_opt opts[] = {
		{ "cntid", 'c', KVN_U16, &cntid, "the first controller id to list", NULL },
		{ "namespace-id", 'n', KVN_U32, &nsid, "the controllers attached to this namespace", NULL },
		{ 0 },
	};
	struct unvme_ctrlr *c;
	int rc = parse_and_open(cmd, argc, argv, opts, NULL, NULL, &dev, &c);
	if (rc >= 0)
		return rc;
	uint16_t *list = calloc(1, 4096);
	int st = -ENOMEM;
	if (list) {
		/* Identify CNS 12h (attached to NSID) or 13h (the subsystem's), CNTID in CDW10 */
		struct nvme_sqe sqe = { .opc = NVME_ADM_IDENTIFY, .nsid = nsid,
					.cdw10 = (uint32_t)cntid << 16 |
						 (nsid ? NVME_CNS_NS_CTRL_LIST : NVME_CNS_CTRL_LIST) };
		st = unvme_admin(c, &sqe, list, 4096, NULL);
	}
	if (st == 0)
		for (unsigned i = 0; i < list[0] && i < 2047; i++)
			printf("[%4u]:%#x\n", i, list[i + 1]);
	rc = st ? status_exit(cmd->name, st) : KVT_EXIT_OK;
	free(list);
	unvme_ctrlr_close(c);
	return rc;
}

int kvn_get_log(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint8_t lid = 0;
	uint32_t len = 0, nsid = 0xffffffffu;
	const char *raw = NULL, *dev;
	const struct kvn_opt opts[] = {
		{ "log-id", 'i', KVN_U8, &lid, "identifier of log to retrieve", NULL },
		{ "log-len", 'l', KVN_U32, &len, "how many bytes to retrieve (required)", NULL },
		{ "raw-binary", 'b', KVN_STR, &raw, "write the log, in binary, to FILE", NULL },
		{ "namespace-id", 'n', KVN_U32, &nsid, "desired namespace [0xffffffff]", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	if (!len || len % 4)
		return kvn_usage_error(cmd->name, "--log-len %u: a non-zero multiple of 4 bytes is "
				       "required (log pages are read in dwords)", len);
	struct unvme_ctrlr *c;
	if ((rc = open_ctrlr(cmd->name, dev, &c)))
		return rc;
	uint8_t *buf = calloc(1, len);
	int st = buf ? unvme_get_log_page(c, lid, nsid, buf, len, 0) : -ENOMEM;
	if (st) {
		rc = status_exit(cmd->name, st);
	} else if (raw) {
		rc = kvn_write_file(cmd->name, raw, buf, len);
	} else {
		printf("Device:%s log-id:%d\n", dev, lid);
		kvn_hexdump(buf, len);
	}
	free(buf);
	unvme_ctrlr_close(c);
	return rc;
}

int kvn_smart_log(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint32_t nsid = 0xffffffffu;
	const char *raw = NULL, *ofmt = NULL, *dev;
	const struct kvn_opt opts[] = {
		{ "namespace-id", 'n', KVN_U32, &nsid, "(optional) desired namespace", NULL },
		{ "output-format", 'o', KVN_STR, &ofmt, "normal, json or binary", NULL },
		{ "raw-binary", 'b', KVN_STR, &raw, "write the log, in binary, to FILE", NULL },
		{ 0 },
	};
	int fmt = 0;
	struct unvme_ctrlr *c;
	int rc = parse_and_open(cmd, argc, argv, opts, &ofmt, &fmt, &dev, &c);
	if (rc >= 0)
		return rc;
	struct nvme_smart_log log;
	int st = unvme_get_log_page(c, NVME_LOG_SMART, nsid, &log, sizeof(log), 0);
	char title[PATH_MAX + 64];
	snprintf(title, sizeof(title), "Smart Log for NVME device:%s namespace-id:%x", dev, nsid);
	rc = st ? status_exit(cmd->name, st)
		: show(cmd->name, raw, fmt, &log, sizeof(log), print_smart, title);
	unvme_ctrlr_close(c);
	return rc;
}

/* ---- format, firmware, reset ---- */

int kvn_format(const struct kvn_cmd *cmd, int argc, char **argv)
{
	uint32_t nsid = 0xffffffffu, timeout = 120000;
	uint8_t lbaf = 0xff, ses = 1, pi = 0, pil = 0, ms = 0;
	bool reset = false;
	const char *dev;
	const struct kvn_opt opts[] = {
		{ "namespace-id", 'n', KVN_U32, &nsid, "identifier of desired namespace [all]", NULL },
		{ "timeout", 't', KVN_U32, &timeout, "timeout value, in milliseconds (accepted)", NULL },
		{ "lbaf", 'l', KVN_U8, &lbaf, "LBA format to apply [the current one]", NULL },
		{ "ses", 's', KVN_U8, &ses, "secure erase settings: 1 user data (default), 0 none, "
		  "2 cryptographic", NULL },
		{ "pi", 'i', KVN_U8, &pi, "protection information: 0 (no metadata here)", NULL },
		{ "pil", 'p', KVN_U8, &pil, "protection information location: 0", NULL },
		{ "ms", 'm', KVN_U8, &ms, "extended metadata: 0", NULL },
		{ "reset", 'r', KVN_FLAG, &reset, "reset the controller after a successful format", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	(void)timeout;
	if (ses > 7)
		return kvn_usage_error(cmd->name, "invalid secure erase settings: %u", ses);
	if (lbaf != 0xff && lbaf > 15)
		return kvn_usage_error(cmd->name, "invalid lbaf: %u", lbaf);
	/* the original formatted KV SSDs without metadata or protection information */
	if (pi || pil || ms)
		return kvn_usage_error(cmd->name, "--pi/--pil/--ms: the formats here carry no "
				       "metadata, so only 0 is valid");
	struct unvme_ctrlr *c;
	if ((rc = open_ctrlr(cmd->name, dev, &c)))
		return rc;
	if (lbaf == 0xff) {
		/* the format in use on the namespace (the first one for all of them) */
		uint32_t first = nsid == 0xffffffffu ? unvme_ctrlr_first_nsid(c) : nsid;
		struct unvme_ns *ns = first ? unvme_ctrlr_ns(c, first) : NULL;
		lbaf = ns ? (uint8_t)nvme_ns_flbas_index(unvme_ns_identify_data(ns)) : 0;
	}
	int st = unvme_format(c, nsid, lbaf, ses);
	if (st) {
		rc = st > 0 ? (fprintf(stderr, "NVME Admin command error:%s(%x)\n",
				       unvme_status_str(st, NVME_CSI_NVM), st), KVT_EXIT_DEVICE)
			    : status_exit(cmd->name, st);
	} else {
		printf("Success formatting namespace:%x\n", nsid);
		if (reset && (st = unvme_ctrlr_reset(c)))
			rc = status_exit(cmd->name, st);
	}
	unvme_ctrlr_close(c);
	return rc;
}

static const char *reset_kind(int st)
{
	switch (st & 0xff) {
	case NVME_SC_FW_NEEDS_CONV_RESET: return "conventional";
	case NVME_SC_FW_NEEDS_SUBSYS_RESET: return "subsystem";
	default: return "any controller";
	}
}

static bool needs_reset(int st)
{
	int sc = st & 0xff;
	return st >> 8 == NVME_SCT_CMD && (sc == NVME_SC_FW_NEEDS_CONV_RESET ||
					   sc == NVME_SC_FW_NEEDS_SUBSYS_RESET ||
					   sc == NVME_SC_FW_NEEDS_RESET);
}

int kvn_fw_download(const struct kvn_cmd *cmd, int argc, char **argv)
{
	const char *fw = NULL, *dev;
	uint32_t xfer = 4096, offset = 0;
	const struct kvn_opt opts[] = {
		{ "fw", 'f', KVN_STR, &fw, "firmware file (required)", NULL },
		{ "xfer", 'x', KVN_U32, &xfer, "transfer chunk size, a multiple of 4096 [4096]", NULL },
		{ "offset", 'o', KVN_U32, &offset, "starting dword offset [0]", NULL },
		{ 0 },
	};
	int rc = kvn_parse(cmd, argc, argv, opts, &dev);
	if (rc >= 0)
		return rc;
	if (!fw)
		return kvn_usage_error(cmd->name, "no firmware file provided (--fw FILE)");
	FILE *f = fopen(fw, "rb");
	struct stat sb;
	if (!f || fstat(fileno(f), &sb) != 0) {
		fprintf(stderr, KVN_PROG ": %s: cannot open %s: %s\n", cmd->name, fw, strerror(errno));
		if (f)
			fclose(f);
		return KVT_EXIT_HOST;
	}
	size_t size = (size_t)sb.st_size;
	uint8_t *img = size ? malloc(size) : NULL;
	bool read_ok = img && fread(img, 1, size, f) == size;
	fclose(f);
	if (!read_ok || size % 4) {
		free(img);
		if (size % 4 || !size)
			return kvn_usage_error(cmd->name, "invalid size %zu of the image %s: a non-zero "
					       "multiple of 4 bytes", size, fw);
		fprintf(stderr, KVN_PROG ": %s: cannot read %s\n", cmd->name, fw);
		return KVT_EXIT_HOST;
	}
	/* as the original: a chunk size that is not a multiple of 4 KiB becomes 4 KiB */
	if (xfer == 0 || xfer % 4096)
		xfer = 4096;
	struct unvme_ctrlr *c;
	if ((rc = open_ctrlr(cmd->name, dev, &c))) {
		free(img);
		return rc;
	}
	int st = 0;
	uint64_t at = (uint64_t)offset * 4;
	for (size_t done = 0; done < size && !st; done += xfer) {
		uint32_t n = (uint32_t)(size - done < xfer ? size - done : xfer);
		/* Firmware Image Download: NUMD 0's based (CDW10), OFST in dwords (CDW11) */
		struct nvme_sqe sqe = { .opc = NVME_ADM_FW_DOWNLOAD, .cdw10 = n / 4 - 1,
					.cdw11 = (uint32_t)((at + done) / 4) };
		st = unvme_admin(c, &sqe, img + done, n, NULL);
	}
	free(img);
	if (st) {
		rc = st > 0 ? (fprintf(stderr, "NVME Admin command error:%s(%x)\n",
				       unvme_status_str(st, NVME_CSI_NVM), st), KVT_EXIT_DEVICE)
			    : status_exit(cmd->name, st);
		unvme_ctrlr_close(c);
		return rc;
	}
	printf("Firmware download success\n");
	/* the original activated the image right away: slot 2, action 1 (replace and activate
	 * at the next reset) */
	const uint8_t slot = 2, action = 1;
	st = unvme_fw_commit(c, slot, action);
	if (st == 0) {
		printf("Success activating firmware action:%d slot:%d\n", action, slot);
	} else if (st > 0 && needs_reset(st)) {
		printf("Success activating firmware action:%d slot:%d, but firmware requires %s "
		       "reset\n", action, slot, reset_kind(st));
	} else {
		rc = st > 0 ? (fprintf(stderr, "NVME Admin command error:%s(%x)\n",
				       unvme_status_str(st, NVME_CSI_NVM), st), KVT_EXIT_DEVICE)
			    : status_exit(cmd->name, st);
	}
	unvme_ctrlr_close(c);
	return rc;
}

int kvn_reset(const struct kvn_cmd *cmd, int argc, char **argv)
{
	const char *dev;
	const struct kvn_opt opts[] = { { 0 } };
	struct unvme_ctrlr *c;
	int rc = parse_and_open(cmd, argc, argv, opts, NULL, NULL, &dev, &c);
	if (rc >= 0)
		return rc;
	int st = unvme_ctrlr_reset(c);
	rc = st ? status_exit(cmd->name, st) : KVT_EXIT_OK;
	if (!st)
		printf("reset: controller %s reset\n", dev);
	unvme_ctrlr_close(c);
	return rc;
}
