/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK configuration of a kv_perf run. With a JSON file (-j, or the original's default
 * ./kv_perf_scripts/kv_perf_default_config.json when it exists) the file is the base and the
 * command line's device options are put over it, as the original's set_cmd_opt_to_sdk did:
 * -d -c -s -q -a replace the n-th device's id and masks, and when any of them is given the run
 * has as many devices as the longest of them ("json: 2 devices, user: 1 device: test 1
 * device"); -m, -l and -u replace ssd_type, slab_size and cache. Everything else in the file
 * stays. The result is written to a temporary file for kv_sdk_init (device ids may be longer
 * than the kv_sdk struct holds). Without a file the configuration is made from the options.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/common/fdio.h"
#include "kv_apis.h"
#include "kv_perf.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"

#define PROG "kv_perf"

/* The list's i-th value, or its last one for a shorter list. */
#define PICK(arr, n, i, def) ((n) ? (arr)[(i) < (n) ? (i) : (n) - 1] : (def))

static int max4(int a, int b, int c, int d)
{
	int m = a > b ? a : b;
	m = m > c ? m : c;
	return m > d ? m : d;
}

static json_object *mask(const char *text)
{
	/* the SDK reads a JSON string as hexadecimal, with or without 0x, as -c takes it */
	return json_object_new_string(text);
}

/* The queue depth of a device object: a number, or a decimal string; 0 if absent. */
static uint32_t file_qd(json_object *dev)
{
	json_object *v;
	if (!json_object_object_get_ex(dev, "queue_depth", &v))
		return 0;
	int64_t q = json_object_get_int64(v);
	return q > 0 && q <= 65535 ? (uint32_t)q : 0;
}

static int write_temp(json_object *root, char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(path, len, "%s/kv_perf-XXXXXX.json", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemps(path, 5);
	if (fd < 0) {
		fprintf(stderr, PROG ": cannot create a temporary configuration file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	int wr = fd_write_all(fd, text, strlen(text));
	close(fd);
	if (wr) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(-wr));
		unlink(path);
		return -1;
	}
	return 0;
}

/* The file's devices with the command line put over them; an exit code. */
static int start_from_file(struct kvp_opts *o, uint32_t qd_out[KVP_MAX_DEV], char labels[][256])
{
	json_object *root = json_object_from_file(o->json_config);
	json_object *desc = NULL;
	if (!root || !json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "device_description", &desc)) {
		/* a broken or incomplete file: the SDK says what is wrong with it */
		json_object_put(root);
		return kvt_sdk_start(o->json_config, PROG) ? KVT_EXIT_HOST : KVT_EXIT_USAGE;
	}
	/* one object or an array of them, as the SDK takes it */
	json_object *devs = json_object_new_array();
	if (json_object_is_type(desc, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(desc) && i < KVP_MAX_DEV; i++)
			json_object_array_add(devs, json_object_get(json_object_array_get_idx(desc, i)));
	} else {
		json_object_array_add(devs, json_object_get(desc));
	}
	int nfile = (int)json_object_array_length(devs);
	int ncmd = max4(o->ndev, max4(o->ncore, o->nsync, o->ncq, o->nqd), 0, 0);
	int n = ncmd ? ncmd : nfile;
	if (n > nfile && !o->ndev) {
		fprintf(stderr, PROG ": the command line configures %d devices but %s describes %d: "
			"name the others with -d\n", n, o->json_config, nfile);
		json_object_put(devs);
		json_object_put(root);
		return KVT_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		json_object *d = i < nfile ? json_object_array_get_idx(devs, (size_t)i) : NULL;
		if (!d) {
			d = json_object_new_object();
			json_object_array_add(devs, d);
		}
		if (o->ndev)
			json_object_object_add(d, "dev_id", json_object_new_string(PICK(o->dev, o->ndev, i, "")));
		if (o->ncore)
			json_object_object_add(d, "core_mask", mask(PICK(o->core_mask, o->ncore, i, "1")));
		if (o->nsync)
			json_object_object_add(d, "sync_mask", mask(PICK(o->sync_mask, o->nsync, i, "0")));
		if (o->ncq)
			json_object_object_add(d, "cq_thread_mask", mask(PICK(o->cq_mask, o->ncq, i, "0")));
		uint32_t qd = PICK(o->qd, o->nqd, i, 0);
		if (qd)
			json_object_object_add(d, "queue_depth",
					       json_object_new_int64(qd + 1 < 32 ? 32 : qd + 1));
		/* calls in flight: -a, else the file's queue less the slot the SDK keeps free */
		uint32_t fq = file_qd(d);
		qd_out[i] = qd ? qd : fq > 1 ? fq - 1 : KV_DEFAULT_QUEUE_SLOTS;
		json_object *id;
		snprintf(labels[i], 256, "%s", json_object_object_get_ex(d, "dev_id", &id)
					       ? json_object_get_string(id) : "?");
	}
	while ((int)json_object_array_length(devs) > n)
		json_object_array_del_idx(devs, json_object_array_length(devs) - 1, 1);
	json_object_object_add(root, "device_description", devs);
	if (o->ssd_type_given)
		json_object_object_add(root, "ssd_type", json_object_new_string(
					       o->ssd_type == LBA_TYPE_SSD ? "lba" : "kv"));
	if (o->slab_mb)
		json_object_object_add(root, "slab_size", json_object_new_int64(o->slab_mb));
	if (o->cache)
		json_object_object_add(root, "cache", json_object_new_string("on"));
	json_object *t;
	o->ssd_type = json_object_object_get_ex(root, "ssd_type", &t) &&
				      strcmp(json_object_get_string(t), "lba") == 0
			      ? LBA_TYPE_SSD : KV_TYPE_SSD;

	char path[4096];
	int rc = write_temp(root, path, sizeof(path));
	json_object_put(root);
	if (rc)
		return KVT_EXIT_HOST;
	rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, path);
	unlink(path);
	if (rc != KV_SUCCESS) {
		char rs[64];
		fprintf(stderr, PROG ": cannot initialize the SDK from %s%s: %s\n", o->json_config,
			ncmd || o->ssd_type_given || o->slab_mb || o->cache
				? " with the command line's options over it" : "",
			kvt_result_str(rc, rs, sizeof(rs)));
		return KVT_EXIT_HOST;
	}
	return KVT_EXIT_OK;
}

static int start_from_options(struct kvp_opts *o, uint32_t qd_out[KVP_MAX_DEV],
			      char labels[][256])
{
	struct kvt_sdk_cfg *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return KVT_EXIT_HOST;
	cfg->ssd_type = o->ssd_type;
	cfg->cache = o->cache;
	cfg->slab_mb = o->slab_mb;
	cfg->ndev = o->ndev ? o->ndev : 1;
	for (int i = 0; i < cfg->ndev; i++) {
		struct kvt_dev_cfg *d = &cfg->dev[i];
		d->devid = o->ndev ? o->dev[i] : KVT_DEFAULT_DEVICE;
		snprintf(labels[i], 256, "%s", d->devid);
		uint64_t m = 0;
		d->core_mask = o->ncore && kvp_hexmask(PICK(o->core_mask, o->ncore, i, "1"), &m)
				       ? m : 1ull << kvt_cpu(i);
		d->sync_mask = o->nsync && kvp_hexmask(PICK(o->sync_mask, o->nsync, i, "0"), &m)
				       ? m : d->core_mask;
		d->sync_mask &= d->core_mask;
		uint64_t async_bits = d->core_mask & ~d->sync_mask;
		/* a completion thread only when some core is async: next to the submitting one */
		d->cq_mask = o->ncq && kvp_hexmask(PICK(o->cq_mask, o->ncq, i, "0"), &m)
				     ? m : async_bits ? 1ull << kvt_cpu(i + 1) : 0;
		uint32_t qd = PICK(o->qd, o->nqd, i, 64);
		d->queue_depth = qd + 1 < 32 ? 32 : qd + 1;
		qd_out[i] = qd;
	}
	int rc = kvt_sdk_start_cfg(cfg, PROG);
	free(cfg);
	return rc ? KVT_EXIT_HOST : KVT_EXIT_OK;
}

int kvp_start_sdk(struct kvp_opts *o, uint32_t qd_out[KVP_MAX_DEV], char labels[][256])
{
	return o->json_config ? start_from_file(o, qd_out, labels)
			      : start_from_options(o, qd_out, labels);
}
