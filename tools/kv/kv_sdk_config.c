/* SPDX-License-Identifier: BSD-3-Clause */
/* Building the SDK configuration file from tool options, and starting the SDK from it. */
#include <errno.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/common/env.h"
#include "lib/common/fdio.h"
#include "unvme/unvme.h"
#include "kv_errmsg.h"
#include "kv_ns_hint.h"
#include "kv_apis.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"

int kvt_cpu(int n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	int count = CPU_COUNT(&set);
	if (count <= 0)
		return 0;
	n %= count;
	/* the SDK's masks are 64 bits wide: CPUs past 63 cannot be named */
	for (int cpu = 0; cpu < MAX_CPU_CORES && cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && n-- == 0)
			return cpu;
	return 0;
}

void kvt_cfg_single(struct kvt_sdk_cfg *cfg, const char *devid, bool async, uint32_t qd)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ssd_type = KV_TYPE_SSD;
	cfg->ndev = 1;
	struct kvt_dev_cfg *d = &cfg->dev[0];
	d->devid = devid;
	/* the SDK keeps one slot of the queue free: QD in flight needs QD + 1 entries */
	d->queue_depth = qd ? qd + 1 : 0;
	if (d->queue_depth && d->queue_depth < 32)
		d->queue_depth = 32;
	int core = kvt_cpu(0), other = kvt_cpu(1);
	/* the SDK wants a completion thread on a CPU of its own: with a single CPU, async
	 * queues are left to its resource scheduler (masks 0) */
	if (async && other == core)
		return;
	d->core_mask = 1ull << core;
	d->sync_mask = async ? 0 : d->core_mask;
	d->cq_mask = async ? 1ull << other : 0;
}

static json_object *mask_str(uint64_t m)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)m);
	return json_object_new_string(buf);
}

int kvt_cfg_write(const struct kvt_sdk_cfg *cfg, const char *prog, char *path, size_t pathlen)
{
	json_object *root = json_object_new_object();
	json_object_object_add(root, "cache", json_object_new_string(cfg->cache ? "on" : "off"));
	if (cfg->slab_mb)
		json_object_object_add(root, "slab_size", json_object_new_int64(cfg->slab_mb));
	/* plain memory: the tools must run without reserved hugepages */
	json_object_object_add(root, "slab_alloc_policy", json_object_new_string("posix"));
	json_object_object_add(root, "ssd_type",
			       json_object_new_string(cfg->ssd_type == LBA_TYPE_SSD ? "lba" : "kv"));
	/* no log: kv_sdk_init explains its own failure on stderr, and at level 1 every missing
	 * key of a benchmark (an expected answer) would be logged as an error */
	json_object_object_add(root, "log_level", json_object_new_int(0));
	json_object *devs = json_object_new_array();
	for (int i = 0; i < cfg->ndev; i++) {
		const struct kvt_dev_cfg *d = &cfg->dev[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "dev_id", json_object_new_string(d->devid));
		if (d->core_mask) {
			json_object_object_add(o, "core_mask", mask_str(d->core_mask));
			json_object_object_add(o, "sync_mask", mask_str(d->sync_mask));
			json_object_object_add(o, "cq_thread_mask", mask_str(d->cq_mask));
		}
		if (d->queue_depth)
			json_object_object_add(o, "queue_depth", json_object_new_int64(d->queue_depth));
		json_object_array_add(devs, o);
	}
	json_object_object_add(root, "device_description", devs);

	const char *tmp = getenv("TMPDIR");
	snprintf(path, pathlen, "%s/kvtool-XXXXXX.json", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemps(path, 5);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot create a temporary configuration file %s: %s\n", prog,
			path, strerror(errno));
		json_object_put(root);
		return -1;
	}
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	int wr = fd_write_all(fd, text, strlen(text));
	if (wr) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(-wr));
		close(fd);
		unlink(path);
		json_object_put(root);
		return -1;
	}
	close(fd);
	json_object_put(root);
	return 0;
}

/* The tool prints the SDK's reason itself (kv_errmsg): the library's own line would repeat it,
 * unless the user asked for the library's output (UNVME_LOG, or unvme -v). */
void kvt_quiet_library(void)
{
	if (unvme_log_setting() < 0 && !getenv("UNVME_LOG"))
		unvme_set_log(0);
}

/* kv_errmsg() without the "config file 'PATH': " it starts with when PATH is a file the tool
 * wrote and removed (the user never saw it), and for one device without the
 * "device_description[0].dev_id 'ID' cannot be opened: " the tool's message says already. */
static const char *reason_after(const char *path, const char *devid)
{
	const char *m = kv_errmsg();
	char pre[4200];
	if (path) {
		snprintf(pre, sizeof(pre), "config file '%s': ", path);
		if (strncmp(m, pre, strlen(pre)) == 0)
			m += strlen(pre);
	}
	if (devid) {
		snprintf(pre, sizeof(pre), "device_description[0].dev_id '%s' cannot be opened: ", devid);
		if (strncmp(m, pre, strlen(pre)) == 0)
			m += strlen(pre);
	}
	return m;
}

int kvt_sdk_start(const char *json_path, const char *prog)
{
	kvt_quiet_library();
	kvt_remember_devices_of(json_path);
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)json_path);
	char rs[64];
	if (rc != 0) {
		const char *why = reason_after(json_path, NULL);
		fprintf(stderr, "%s: cannot initialize the SDK from %s: %s%s%s\n", prog, json_path,
			kvt_result_str(rc, rs, sizeof(rs)), *why ? ": " : "", why);
	}
	return rc;
}

int kvt_sdk_start_cfg(const struct kvt_sdk_cfg *cfg, const char *prog)
{
	char path[4096];
	if (kvt_cfg_write(cfg, prog, path, sizeof(path)) != 0)
		return -1;
	kvt_quiet_library();
	const char *ids[NR_MAX_SSD];
	for (int i = 0; i < cfg->ndev && i < NR_MAX_SSD; i++)
		ids[i] = cfg->dev[i].devid;
	kvt_remember_devices(ids, cfg->ndev < NR_MAX_SSD ? cfg->ndev : NR_MAX_SSD);
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, path);
	unlink(path);
	if (rc != 0) {
		fprintf(stderr, "%s: cannot initialize the SDK on", prog);
		for (int i = 0; i < cfg->ndev; i++)
			fprintf(stderr, "%s %s", i ? "," : "", cfg->dev[i].devid);
		char rs[64];
		const char *why = reason_after(path, cfg->ndev == 1 ? cfg->dev[0].devid : NULL);
		fprintf(stderr, ": %s%s%s\n", kvt_result_str(rc, rs, sizeof(rs)), *why ? ": " : "", why);
	}
	return rc;
}
