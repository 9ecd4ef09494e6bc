/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme list and unvme devices: what devices exist. `list` opens each known device (aliases,
 * the built-in emu0, NVMe functions on the PCI bus) and shows its identity and namespaces; a
 * device that cannot be opened is listed with the reason, never fatal. `devices` only shows
 * the names and what they resolve to, without opening anything.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lib/common/fdio.h"

#define MAX_DEVICES 128
#define PCI_CLASS_NVME "0x010802"

struct known_dev {
	char name[256];
	char address[PATH_MAX + 64];
	char note[160]; /* why we did not try to open it (PCI device owned by another driver) */
};

struct dev_list {
	struct known_dev d[MAX_DEVICES];
	unsigned n;
};

static void add_alias(void *arg, const char *name, const char *address)
{
	struct dev_list *l = arg;
	if (l->n == MAX_DEVICES)
		return;
	struct known_dev *d = &l->d[l->n++];
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
	snprintf(d->address, sizeof(d->address), "%s", address ? address : "");
	d->note[0] = '\0';
}

static bool read_sysfs(const char *dir, const char *file, char *out, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dir, file);
	return fd_read_text(path, out, len) == 0;
}

/* The kernel's name of the NVMe controller at a PCI address ("nvme0"), if it has one. */
static bool kernel_ctrl_name(const char *bdf, char *out, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/nvme", bdf);
	DIR *dir = opendir(path);
	if (!dir)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "nvme", 4) == 0) {
			snprintf(out, len, "%.*s", (int)(len - 1), e->d_name);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

/* NVMe functions on the PCI bus not already named by an alias. Only those bound to vfio-pci
 * are opened: touching a device the kernel's nvme driver owns would be wrong. */
static void add_pci_devices(struct dev_list *l)
{
	DIR *dir = opendir("/sys/bus/pci/devices");
	if (!dir)
		return;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL && l->n < MAX_DEVICES) {
		if (e->d_name[0] == '.')
			continue;
		char cls[32];
		if (!read_sysfs(e->d_name, "class", cls, sizeof(cls)) || strcmp(cls, PCI_CLASS_NVME) != 0)
			continue;
		bool known = false;
		for (unsigned i = 0; i < l->n; i++) {
			char resolved[PATH_MAX + 64];
			if (strcmp(l->d[i].address, e->d_name) == 0 ||
			    (unvme_devid_resolve(l->d[i].name, resolved, sizeof(resolved)) == 0 &&
			     strcmp(resolved, e->d_name) == 0))
				known = true;
		}
		if (known)
			continue;
		struct known_dev *d = &l->d[l->n++];
		snprintf(d->name, sizeof(d->name), "%s", e->d_name);
		snprintf(d->address, sizeof(d->address), "%s", e->d_name);
		d->note[0] = '\0';
		char link[PATH_MAX], target[PATH_MAX];
		snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/driver", e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n < 0) {
			snprintf(d->note, sizeof(d->note), "not bound to vfio-pci (no driver)");
		} else {
			target[n] = '\0';
			const char *drv = strrchr(target, '/');
			drv = drv ? drv + 1 : target;
			char ctrl[64];
			if (strcmp(drv, "nvme") == 0 && kernel_ctrl_name(e->d_name, ctrl, sizeof(ctrl)))
				snprintf(d->note, sizeof(d->note),
					 "kept by the kernel's nvme driver: use /dev/%.32s (or its "
					 "/dev/ng*n* namespaces), or give it to vfio-pci", ctrl);
			else if (strcmp(drv, "vfio-pci") != 0)
				snprintf(d->note, sizeof(d->note),
					 "bound to the kernel driver %.64s; unvme needs vfio-pci", drv);
		}
	}
	closedir(dir);
}

struct ns_row {
	uint32_t nsid;
	uint64_t nlbas;
	uint32_t lba_size;
};

static void print_text_header(void)
{
	printf("%-16s %-20s %-32s %5s %-11s %-8s %s\n", "Name", "Serial", "Model", "NSID", "Size",
	       "Format", "FW Rev");
	printf("%-16s %-20s %-32s %5s %-11s %-8s %s\n", "----------------", "--------------------",
	       "--------------------------------", "-----", "-----------", "--------", "--------");
}

/* One namespace as `nvme list -o json` (nvme-cli 2.x) shows it under "Devices", so scripts
 * written for it find their keys; DevicePath is our device name. */
static json_object *nvmecli_entry(const char *dev, const char *sn, const char *mn, const char *fr,
				  struct unvme_ns *ns, size_t index)
{
	uint64_t lba = unvme_ns_lba_size(ns);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "NameSpace", json_object_new_int64(unvme_ns_id(ns)));
	json_object_object_add(o, "DevicePath", json_object_new_string(dev));
	json_object_object_add(o, "Firmware", json_object_new_string(fr));
	json_object_object_add(o, "Index", json_object_new_int64((int64_t)index));
	json_object_object_add(o, "ModelNumber", json_object_new_string(mn));
	json_object_object_add(o, "SerialNumber", json_object_new_string(sn));
	json_object_object_add(o, "UsedBytes", json_object_new_uint64(
				       unvme_ns_identify_data(ns)->nuse * lba));
	json_object_object_add(o, "MaximumLBA", json_object_new_uint64(unvme_ns_nlbas(ns)));
	json_object_object_add(o, "PhysicalSize", json_object_new_uint64(unvme_ns_nlbas(ns) * lba));
	json_object_object_add(o, "SectorSize", json_object_new_uint64(lba));
	return o;
}

static json_object *ns_json(struct unvme_ns *ns)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "nsid", json_object_new_int64(unvme_ns_id(ns)));
	json_object_object_add(o, "csi", json_object_new_int(unvme_ns_csi(ns)));
	json_object_object_add(o, "nlbas", json_object_new_int64((int64_t)unvme_ns_nlbas(ns)));
	json_object_object_add(o, "lba_size", json_object_new_int64(unvme_ns_lba_size(ns)));
	json_object_object_add(o, "size_bytes",
			       json_object_new_int64((int64_t)(unvme_ns_nlbas(ns) *
							       unvme_ns_lba_size(ns))));
	return o;
}

int cmd_list(struct cli_args *a)
{
	struct dev_list *l = calloc(1, sizeof(*l));
	if (!l)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	int rc = unvme_devid_list(add_alias, l);
	if (rc < 0) {
		/* a broken devices file must not hide the rest: say why and go on */
		fprintf(stderr, "unvme: list: %s\n", unvme_errmsg());
	}
	add_pci_devices(l);

	json_object *jdevs = NULL, *nvmecli = NULL;
	if (a->fmt == UNVME_FMT_JSON) {
		jdevs = json_object_new_array();
		nvmecli = json_object_new_array();
	} else {
		print_text_header();
	}

	for (unsigned i = 0; i < l->n; i++) {
		struct known_dev *d = &l->d[i];
		const char *label = d->name[0] ? d->name : d->address;
		struct unvme_ctrlr *c = NULL;
		char reason[512] = "";
		if (d->note[0]) {
			snprintf(reason, sizeof(reason), "%s", d->note);
		} else {
			int orc = cli_try_open(label, &c);
			if (orc) {
				const char *msg = unvme_errmsg();
				snprintf(reason, sizeof(reason), "%s",
					 msg && *msg ? msg : strerror(orc < 0 ? -orc : EIO));
				c = NULL;
			}
		}
		if (!c) {
			if (jdevs) {
				json_object *o = json_object_new_object();
				json_object_object_add(o, "name", json_object_new_string(d->name));
				json_object_object_add(o, "address", json_object_new_string(d->address));
				json_object_object_add(o, "error", json_object_new_string(reason));
				json_object_array_add(jdevs, o);
			} else {
				printf("%-16s (not available: %s)\n", label, reason);
			}
			continue;
		}

		const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(c);
		char sn[21], mn[41], fr[9];
		cli_id_string(id->sn, sizeof(id->sn), sn, sizeof(sn));
		cli_id_string(id->mn, sizeof(id->mn), mn, sizeof(mn));
		cli_id_string(id->fr, sizeof(id->fr), fr, sizeof(fr));

		if (jdevs) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "name", json_object_new_string(d->name));
			json_object_object_add(o, "address",
					       json_object_new_string(unvme_ctrlr_address(c)));
			json_object_object_add(o, "transport",
					       json_object_new_string(unvme_ctrlr_transport(c)));
			if (unvme_ctrlr_transport_info(c)[0])
				json_object_object_add(o, "transport_info",
						       json_object_new_string(unvme_ctrlr_transport_info(c)));
			json_object_object_add(o, "serial", json_object_new_string(sn));
			json_object_object_add(o, "model", json_object_new_string(mn));
			json_object_object_add(o, "firmware", json_object_new_string(fr));
			json_object *jns = json_object_new_array();
			for (uint32_t nsid = unvme_ctrlr_first_nsid(c); nsid;
			     nsid = unvme_ctrlr_next_nsid(c, nsid)) {
				struct unvme_ns *ns = unvme_ctrlr_ns(c, nsid);
				if (ns) {
					json_object_array_add(jns, ns_json(ns));
					json_object_array_add(nvmecli, nvmecli_entry(d->name, sn, mn, fr,
									    ns, json_object_array_length(nvmecli)));
				}
			}
			json_object_object_add(o, "namespaces", jns);
			json_object_array_add(jdevs, o);
			continue;
		}

		bool any = false;
		for (uint32_t nsid = unvme_ctrlr_first_nsid(c); nsid; nsid = unvme_ctrlr_next_nsid(c, nsid)) {
			struct unvme_ns *ns = unvme_ctrlr_ns(c, nsid);
			if (!ns)
				continue;
			char size[32], fmt[16];
			cli_human_size(unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns), size, sizeof(size));
			snprintf(fmt, sizeof(fmt), "%u B", unvme_ns_lba_size(ns));
			printf("%-16s %-20s %-32s %5u %-11s %-8s %s\n", any ? "" : label, any ? "" : sn,
			       any ? "" : mn, nsid, size, fmt, any ? "" : fr);
			any = true;
		}
		if (!any)
			printf("%-16s %-20s %-32s %5s %-11s %-8s %s\n", label, sn, mn, "-", "-", "-", fr);
		if (unvme_ctrlr_transport_info(c)[0])
			printf("%-16s via %s\n", "", unvme_ctrlr_transport_info(c));
	}
	if (jdevs) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "devices", jdevs);
		json_object_object_add(root, "Devices", nvmecli);
		cli_json_print(root);
	}
	free(l);
	return EXIT_OK;
}

int cmd_devices(struct cli_args *a)
{
	struct dev_list *l = calloc(1, sizeof(*l));
	if (!l)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	int rc = unvme_devid_list(add_alias, l);
	int ret = EXIT_OK;
	if (rc < 0)
		ret = cli_result(a->cmd, rc, 0);

	json_object *jarr = a->fmt == UNVME_FMT_JSON ? json_object_new_array() : NULL;
	if (!jarr)
		printf("%-16s %s\n", "Name", "Device");
	for (unsigned i = 0; i < l->n; i++) {
		struct known_dev *d = &l->d[i];
		char resolved[PATH_MAX + 64];
		int rrc = unvme_devid_resolve(d->name, resolved, sizeof(resolved));
		const char *err = rrc ? unvme_errmsg() : NULL;
		if (jarr) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "name", json_object_new_string(d->name));
			json_object_object_add(o, "device", json_object_new_string(d->address));
			if (rrc)
				json_object_object_add(o, "error", json_object_new_string(err));
			else
				json_object_object_add(o, "resolved", json_object_new_string(resolved));
			json_object_array_add(jarr, o);
		} else {
			printf("%-16s %s", d->name, d->address);
			if (rrc)
				printf("  (does not resolve: %s)", err);
			else if (strcmp(resolved, d->address) != 0)
				printf("  -> %s", resolved);
			printf("\n");
		}
	}
	if (jarr) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "devices", jarr);
		cli_json_print(root);
	} else {
		const char *env = getenv("UNVME_DEVICES");
		const char *cfg = getenv("UNVME_CONFIG");
		printf("\nAliases come from $UNVME_DEVICES (%s), the devices file (%s), and the "
		       "built-in emu0.\n",
		       env && *env ? "set" : "not set",
		       cfg && *cfg ? cfg : "~/.config/unvme/devices.json or /etc/unvme/devices.json");
	}
	free(l);
	return ret;
}
