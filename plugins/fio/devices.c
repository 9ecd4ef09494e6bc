/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices of one fio run. fio runs every job as a thread of one process (thread=1), so a
 * controller is opened once, by the first job naming it, and closed when the last job using it
 * ends. Each job then creates its own queue pair on it (engine.c): queue pairs take no locks.
 *
 * Jobs to cores, as the original SDK's core_mask did: the k-th job to use a device gets the
 * (k mod n)-th of the n cores of its core_mask; from the (n+1)-th job on, jobs share cores.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unvme_fio.h"

#define MAX_DEVS 64
#define MAX_CONFIGS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ufio_dev *devs[MAX_DEVS];
static struct ufio_config configs[MAX_CONFIGS];
static int nconfigs;

void ufio_name_normalise(const char *in, char *out, size_t outlen)
{
	/* dddd.bb.dd.f: the original plugin's PCI address, dots because fio splits on ':' */
	unsigned d, b, s, f;
	char tail;
	if (strlen(in) == 12 && sscanf(in, "%4x.%2x.%2x.%1x%c", &d, &b, &s, &f, &tail) == 4 &&
	    in[4] == '.' && in[7] == '.' && in[10] == '.') {
		snprintf(out, outlen, "%04x:%02x:%02x.%x", d, b, s, f);
		return;
	}
	snprintf(out, outlen, "%s", in);
}

static struct ufio_config *config_get(const char *path, char *err, size_t errlen)
{
	for (int i = 0; i < nconfigs; i++)
		if (!strcmp(configs[i].path, path))
			return &configs[i];
	if (nconfigs == MAX_CONFIGS) {
		snprintf(err, errlen, "more than %d different json_path files in one run", MAX_CONFIGS);
		return NULL;
	}
	if (ufio_config_load(path, &configs[nconfigs], err, errlen))
		return NULL;
	return &configs[nconfigs++];
}

static void all_cpus(struct ufio_dev *d)
{
	cpu_set_t set;
	d->ncores = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE && d->ncores < UFIO_MAX_CORES; c++)
			if (CPU_ISSET(c, &set))
				d->cores[d->ncores++] = (uint16_t)c;
	}
	if (!d->ncores)
		d->cores[d->ncores++] = 0;
}

static struct unvme_ns *pick_ns(struct unvme_ctrlr *c, int want_csi)
{
	for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
		struct unvme_ns *ns = unvme_ctrlr_ns(c, id);
		if (ns && (want_csi < 0 || unvme_ns_csi(ns) == want_csi))
			return ns;
	}
	return NULL;
}

static struct ufio_dev *dev_open(const char *name, const char *addr, const char *cfgname,
				 uint64_t core_mask, uint32_t qd, int want_csi, char *err,
				 size_t errlen)
{
	struct ufio_dev *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc = unvme_ctrlr_open(addr, NULL, &d->ctrlr);
	if (rc) {
		snprintf(err, errlen, "%s%s%s: cannot open: %s", name, cfgname ? " of " : "",
			 cfgname ? cfgname : "", unvme_errmsg());
		free(d);
		return NULL;
	}
	d->ns = pick_ns(d->ctrlr, want_csi);
	if (!d->ns) {
		snprintf(err, errlen, "%s: no %s namespace (ssd_type %s in %s)", name,
			 want_csi == NVME_CSI_KV ? "key-value" : "NVM",
			 want_csi == NVME_CSI_KV ? "\"kv\"" : "\"lba\"", cfgname ? cfgname : "?");
		if (want_csi < 0)
			snprintf(err, errlen, "%s: the controller has no active namespace", name);
		unvme_ctrlr_close(d->ctrlr);
		free(d);
		return NULL;
	}
	d->name = strdup(name);
	d->addr = strdup(addr);
	d->kind = unvme_ns_csi(d->ns) == NVME_CSI_KV ? UFIO_KV : UFIO_BLOCK;
	d->lba_size = unvme_ns_lba_size(d->ns);
	d->capacity = unvme_ns_nlbas(d->ns) * (uint64_t)d->lba_size;
	d->max_xfer = unvme_ctrlr_max_xfer(d->ctrlr);
	d->max_value = d->max_xfer < (2u << 20) ? d->max_xfer : (2u << 20);
	d->queue_depth = qd;
	d->core_mask = core_mask;
	if (core_mask) {
		for (unsigned c = 0; c < 64; c++)
			if (core_mask & (1ull << c))
				d->cores[d->ncores++] = (uint16_t)c;
	} else {
		all_cpus(d);
	}
	return d;
}

struct ufio_dev *ufio_dev_get(const char *json_path, const char *name, char *err, size_t errlen)
{
	char norm[4096], addr[4096];
	ufio_name_normalise(name, norm, sizeof(norm));
	pthread_mutex_lock(&lock);
	struct ufio_dev *d = NULL;
	if (unvme_devid_resolve(norm, addr, sizeof(addr)) != 0) {
		snprintf(err, errlen, "filename '%s': %s", name, unvme_errmsg());
		goto out;
	}
	uint64_t mask = 0;
	uint32_t qd = 32;
	int want_csi = -1;
	const char *cfgname = NULL;
	if (json_path && *json_path) {
		struct ufio_config *cfg = config_get(json_path, err, errlen);
		if (!cfg)
			goto out;
		int found = -1;
		char list[1024] = "";
		for (int i = 0; i < cfg->ndev && found < 0; i++) {
			char a[4096], n2[4096];
			ufio_name_normalise(cfg->dev_id[i], n2, sizeof(n2));
			if (unvme_devid_resolve(n2, a, sizeof(a)) == 0 && !strcmp(a, addr))
				found = i;
			size_t l = strlen(list);
			snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", cfg->dev_id[i]);
		}
		if (found < 0) {
			snprintf(err, errlen, "device '%s' is not in json_path '%s' (its devices: %s)",
				 name, json_path, list);
			goto out;
		}
		mask = cfg->core_mask[found];
		qd = cfg->queue_depth[found];
		want_csi = cfg->lba_mode ? NVME_CSI_NVM : NVME_CSI_KV;
		cfgname = json_path;
	}
	for (int i = 0; i < MAX_DEVS; i++) {
		if (devs[i] && !strcmp(devs[i]->addr, addr)) {
			d = devs[i];
			d->refs++;
			goto out;
		}
	}
	int slot = -1;
	for (int i = 0; i < MAX_DEVS && slot < 0; i++)
		if (!devs[i])
			slot = i;
	if (slot < 0) {
		snprintf(err, errlen, "more than %d devices in one run", MAX_DEVS);
		goto out;
	}
	d = dev_open(name, addr, cfgname, mask, qd, want_csi, err, errlen);
	if (d) {
		d->refs = 1;
		devs[slot] = d;
	}
out:
	pthread_mutex_unlock(&lock);
	return d;
}

int ufio_dev_assign_core(struct ufio_dev *d, bool *shared, unsigned *slot)
{
	pthread_mutex_lock(&lock);
	unsigned k = d->users++;
	*slot = k;
	*shared = k >= d->ncores && !d->warned_share; /* said once per device */
	if (*shared)
		d->warned_share = true;
	int core = d->cores[k % d->ncores];
	pthread_mutex_unlock(&lock);
	return core;
}

void ufio_dev_put(struct ufio_dev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&lock);
	if (--d->refs == 0) {
		for (int i = 0; i < MAX_DEVS; i++)
			if (devs[i] == d)
				devs[i] = NULL;
		unvme_ctrlr_close(d->ctrlr);
		free(d->name);
		free(d->addr);
		free(d);
	}
	pthread_mutex_unlock(&lock);
}
