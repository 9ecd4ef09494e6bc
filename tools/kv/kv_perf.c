/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf: store / retrieve / delete / blend benchmark over one or more devices through the
 * SDK, one thread per device, every phase reported per device and in total like sdk_perf.
 * Without -j the SDK configuration is built from the options (a temporary JSON file: emu://
 * URIs do not fit kv_sdk.dev_id).
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_apis.h"
#include "kv_perf.h"
#include "kv_report.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"

#define PROG "kv_perf"

struct kvp_dev {
	uint64_t handle;
	char label[256];
	bool async;
	uint32_t qd;
	struct kvt_keyspec ks;
	struct kvt_phase *phase;
	pthread_t tid;
	/* -i */
	uint64_t log_reads, log_errors, used;
};

struct kvp_run {
	struct kvp_opts *o;
	struct kvp_dev dev[NR_MAX_SSD];
	int ndev;
	struct kvt_valuespec vs;
	uint8_t *file_value;
	uint64_t *order;
	atomic_bool logging;
	uint32_t cfg_qd[KVP_MAX_DEV]; /* -j: the file's queue depths less the SDK's free slot */
};

/* The device list's i-th value, or its last one for a shorter list. */
#define PICK(arr, n, i, def) ((n) ? (arr)[(i) < (n) ? (i) : (n) - 1] : (def))

static int start_sdk(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	if (o->json_config) {
		/* the file says whether the SSDs are block SSDs (the keys are then LBAs) and how
		 * deep their queues are; a file the SDK cannot read fails in kv_sdk_init below */
		kv_sdk *k = calloc(1, sizeof(*k));
		kvt_quiet_library();
		if (k && kv_sdk_load_option(k, (char *)o->json_config) == 0) {
			if (k->ssd_type == LBA_TYPE_SSD)
				o->ssd_type = LBA_TYPE_SSD;
			for (int i = 0; i < k->nr_ssd && i < KVP_MAX_DEV && !o->nqd; i++)
				r->cfg_qd[i] = k->dd_options[i].queue_depth > 1
						       ? k->dd_options[i].queue_depth - 1 : 0;
		}
		free(k);
		return kvt_sdk_start(o->json_config, PROG) ? KVT_EXIT_HOST : KVT_EXIT_OK;
	}
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
		d->core_mask = PICK(o->core_mask, o->ncore, i, 1ull << kvt_cpu(i));
		d->sync_mask = PICK(o->sync_mask, o->nsync, i, d->core_mask);
		d->sync_mask &= d->core_mask;
		uint64_t async_bits = d->core_mask & ~d->sync_mask;
		/* a completion thread only when some core is async: next to the submitting one */
		d->cq_mask = PICK(o->cq_mask, o->ncq, i, async_bits ? 1ull << kvt_cpu(i + 1) : 0);
		uint32_t qd = PICK(o->qd, o->nqd, i, 64);
		d->queue_depth = qd + 1 < 32 ? 32 : qd + 1;
	}
	int rc = kvt_sdk_start_cfg(cfg, PROG);
	free(cfg);
	return rc ? KVT_EXIT_HOST : KVT_EXIT_OK;
}

/* Handles in configuration order, whether each is driven sync or async, and the labels. */
static int find_devices(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	uint64_t handles[NR_MAX_SSD];
	int nr = 0;
	if (kv_get_device_handles(&nr, handles) != KV_SUCCESS || nr < 1) {
		fprintf(stderr, PROG ": the SDK started with no device\n");
		return KVT_EXIT_HOST;
	}
	r->ndev = nr;
	for (int i = 0; i < nr; i++) {
		struct kvp_dev *d = &r->dev[i];
		d->handle = handles[i];
		int idx = kv_get_dev_idx_on_handle(handles[i]);
		if (o->json_config)
			snprintf(d->label, sizeof(d->label), "%s device %d", o->json_config, idx);
		else
			snprintf(d->label, sizeof(d->label), "%s",
				 o->ndev ? o->dev[idx >= 0 && idx < o->ndev ? idx : i]
					 : KVT_DEFAULT_DEVICE);
		int ncore = 0, cores[MAX_CPU_CORES];
		d->async = false;
		if (kv_get_cpus_on_device(handles[i], &ncore, cores) == KV_SUCCESS && ncore > 0)
			d->async = kv_io_queue_type(handles[i], cores[0]) == 2;
		d->qd = PICK(o->qd, o->nqd, i, 64);
		if (!o->nqd && i < KVP_MAX_DEV && r->cfg_qd[i])
			d->qd = r->cfg_qd[i];
		d->ks.key_size = o->key_size;
		d->ks.prefix = KVT_DEFAULT_PREFIX;
		/* block SSDs: whole sectors per value, and room for every key's extent */
		if (o->ssd_type == LBA_TYPE_SSD) {
			uint32_t sector = kv_get_sector_size(handles[i]);
			if (!sector || o->value_size == 0 || o->value_size % sector) {
				fprintf(stderr, PROG ": %s: -m lba needs a value size that is a non-zero "
					"multiple of the sector size (%u)\n", d->label, sector);
				return KVT_EXIT_USAGE;
			}
			d->ks.lba = true;
			d->ks.blocks_per_value = o->value_size / sector;
			uint64_t keys = o->dist == 4 ? o->key_range : o->num_keys;
			uint64_t total = kv_get_total_size(handles[i]);
			if (total != KV_ERR_INVALID_VALUE && keys > total / o->value_size) {
				fprintf(stderr, PROG ": %s: %llu values of %u bytes do not fit in %llu "
					"bytes\n", d->label, (unsigned long long)keys, o->value_size,
					(unsigned long long)total);
				return KVT_EXIT_USAGE;
			}
		}
		uint64_t keys = o->dist == 4 ? o->key_range : o->num_keys;
		const char *why = kvt_keys_check(&d->ks, keys);
		if (why) {
			fprintf(stderr, PROG ": %llu keys of %u bytes: %s\n", (unsigned long long)keys,
				o->key_size, why);
			return KVT_EXIT_USAGE;
		}
		d->phase = calloc(1, sizeof(*d->phase));
		if (!d->phase)
			return KVT_EXIT_HOST;
	}
	return KVT_EXIT_OK;
}

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64: good enough spread for key orders, reproducible from -g */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The key index of every I/O from seed s. Orders 0-4 are made once and are the same for every
 * phase, so that what was stored is read; order 5 is drawn again for every phase (draw_order)
 * as db_bench's fillrandom, readrandom and deleterandom each draw their own uniform keys, so
 * a read or delete may find no key (about 1/e of them after one fill of n draws). */
static void fill_order(struct kvp_run *r, uint64_t s)
{
	struct kvp_opts *o = r->o;
	uint64_t n = o->num_keys;
	for (uint64_t i = 0; i < n; i++) {
		switch (o->dist) {
		case 0: r->order[i] = i; break;
		case 1: r->order[i] = n - 1 - i; break;
		case 2: case 5: r->order[i] = rnd(&s) % n; break;
		case 3: r->order[i] = i; break;
		default: r->order[i] = rnd(&s) % o->key_range; break;
		}
	}
	if (o->dist == 3)
		for (uint64_t i = n - 1; i > 0; i--) {
			uint64_t j = rnd(&s) % (i + 1), t = r->order[i];
			r->order[i] = r->order[j];
			r->order[j] = t;
		}
}

static int make_order(struct kvp_run *r)
{
	r->order = malloc(r->o->num_keys * sizeof(*r->order));
	if (!r->order)
		return KVT_EXIT_HOST;
	fill_order(r, r->o->seed);
	return KVT_EXIT_OK;
}

/* Order 5: the keys of this phase of this test, from a seed of their own. */
static void draw_order(struct kvp_run *r, enum kvt_op op, uint32_t test)
{
	if (r->o->dist == 5)
		fill_order(r, r->o->seed ^ ((uint64_t)test << 32 | (uint64_t)op) * 0xd1b54a32d192ed03ull);
}

static int load_values(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	r->vs.size = o->value_size;
	r->vs.fill = o->fill;
	if (!o->read_file)
		return KVT_EXIT_OK;
	FILE *f = fopen(o->read_file, "rb");
	if (!f) {
		fprintf(stderr, PROG ": -f %s: %s\n", o->read_file, strerror(errno));
		return KVT_EXIT_USAGE;
	}
	r->file_value = malloc(o->value_size ? o->value_size : 1);
	size_t got = r->file_value ? fread(r->file_value, 1, o->value_size, f) : 0;
	fclose(f);
	if (!r->file_value)
		return KVT_EXIT_HOST;
	if (got == 0 && o->value_size) {
		fprintf(stderr, PROG ": -f %s: the file is empty\n", o->read_file);
		return KVT_EXIT_USAGE;
	}
	/* a short file is repeated to fill the value */
	for (size_t p = got; p < o->value_size; p++)
		r->file_value[p] = r->file_value[p % got];
	r->vs.file = r->file_value;
	return KVT_EXIT_OK;
}

static void *dev_thread(void *arg)
{
	struct kvt_phase *p = arg;
	if (kvt_phase_run(p, PROG) != 0)
		p->errors = p->errors ? p->errors : 1;
	return NULL;
}

/* -i: reads the utilization log page of every device while a phase runs. */
static void *log_thread(void *arg)
{
	struct kvp_run *r = arg;
	uint8_t page[512];
	while (atomic_load(&r->logging)) {
		for (int i = 0; i < r->ndev; i++) {
			struct kvp_dev *d = &r->dev[i];
			if (kv_get_log_page(d->handle, 0xC0, page, sizeof(page)) == KV_SUCCESS)
				d->log_reads++;
			else
				d->log_errors++;
			uint64_t used = kv_get_used_size(d->handle);
			if (used != KV_ERR_INVALID_VALUE)
				d->used = used;
		}
		usleep(10000);
	}
	return NULL;
}

/* Runs one phase on every device at once; reports it; returns whether it failed. */
static bool run_phase(struct kvp_run *r, enum kvt_op op, uint32_t test, json_object *jtest)
{
	struct kvp_opts *o = r->o;
	pthread_t logger;
	bool logging = false;
	draw_order(r, op, test);
	if (o->getlog) {
		atomic_store(&r->logging, true);
		logging = pthread_create(&logger, NULL, log_thread, r) == 0;
	}
	for (int i = 0; i < r->ndev; i++) {
		struct kvp_dev *d = &r->dev[i];
		struct kvt_phase *p = d->phase;
		memset(p, 0, sizeof(*p));
		p->op = op;
		p->handle = d->handle;
		p->ks = &d->ks;
		p->vs = &r->vs;
		p->order = r->order;
		p->n = o->num_keys;
		p->async = d->async;
		p->qd = d->qd;
		p->verify = o->verify && !(d->ks.lba && op == KVT_BLEND);
		p->offset = d->ks.lba ? 0 : o->offset;
		/* repeated keys (random orders) meet their own deletes, and a blend deletes (and
		 * reads deleted keys) at random: then a missing key is an expected answer */
		p->missing_ok = op == KVT_BLEND ||
				(op == KVT_DELETE && (o->dist == 2 || o->dist == 4 || o->blend)) ||
				(op != KVT_STORE && o->dist == 5);
		p->seed = o->seed + test * 7919u + (uint64_t)i;
		p->progress = i == 0; /* the first device's stands for all: one line */
		if (pthread_create(&d->tid, NULL, dev_thread, p) != 0) {
			d->tid = 0;
			dev_thread(p);
		}
	}
	for (int i = 0; i < r->ndev; i++)
		if (r->dev[i].tid)
			pthread_join(r->dev[i].tid, NULL);
	if (logging) {
		atomic_store(&r->logging, false);
		pthread_join(logger, NULL);
	}

	struct kvt_phase *total = calloc(1, sizeof(*total));
	if (!total) {
		fprintf(stderr, PROG ": out of memory\n");
		return true;
	}
	lat_hist_init(&total->hist);
	bool failed = false;
	const char *name = kvt_op_name(op);
	json_object *jdevs = json_object_new_array();
	for (int i = 0; i < r->ndev; i++) {
		struct kvp_dev *d = &r->dev[i];
		kvt_phase_merge(total, d->phase, i == 0);
		char title[400];
		snprintf(title, sizeof(title), "test %u %s on %s", test, name, d->label);
		if (o->json_out) {
			json_object *j = kvt_report_json(name, d->phase);
			json_object_object_add(j, "device", json_object_new_string(d->label));
			json_object_object_add(j, "mode", json_object_new_string(d->async ? "async"
											   : "sync"));
			if (o->getlog) {
				json_object_object_add(j, "log_reads", json_object_new_uint64(d->log_reads));
				json_object_object_add(j, "used_pct_x100", json_object_new_uint64(d->used));
			}
			json_object_array_add(jdevs, j);
		} else {
			kvt_report_text(stdout, title, d->phase);
			if (o->getlog)
				printf("  log page reads during the phase: %llu (%llu failed), "
				       "utilization %.2f%%\n", (unsigned long long)d->log_reads,
				       (unsigned long long)d->log_errors, (double)d->used / 100.0);
			printf("\n");
		}
		if (kvt_phase_failed(d->phase)) {
			kvt_report_failure(PROG, title, d->phase);
			failed = true;
		}
		d->log_reads = d->log_errors = 0;
	}
	if (o->json_out) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "phase", json_object_new_string(name));
		json_object_object_add(j, "devices", jdevs);
		json_object_object_add(j, "total", kvt_report_json(name, total));
		json_object_array_add(jtest, j);
	} else {
		json_object_put(jdevs);
		char title[64];
		snprintf(title, sizeof(title), "test %u %s total (%d device%s)", test, name, r->ndev,
			 r->ndev == 1 ? "" : "s");
		kvt_report_text(stdout, title, total);
		printf("\n");
	}
	free(total);
	return failed;
}

static bool format_all(struct kvp_run *r)
{
	bool failed = false;
	for (int i = 0; i < r->ndev; i++) {
		int rc = kv_format_device(r->dev[i].handle, KV_FORMAT_USERDATA);
		char rs[64];
		if (rc != KV_SUCCESS) {
			fprintf(stderr, PROG ": format of %s: %s\n", r->dev[i].label,
				kvt_result_str(rc, rs, sizeof(rs)));
			failed = true;
		} else if (!r->o->json_out) {
			printf("formatted %s\n", r->dev[i].label);
		}
	}
	return failed;
}

static int run(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	json_object *root = json_object_new_object();
	json_object *tests = json_object_new_array();
	json_object_object_add(root, "program", json_object_new_string(PROG));
	json_object_object_add(root, "keys", json_object_new_uint64(o->num_keys));
	json_object_object_add(root, "key_size", json_object_new_int64(o->key_size));
	json_object_object_add(root, "value_size", json_object_new_int64(o->value_size));
	json_object_object_add(root, "distribution", json_object_new_int(o->dist));
	json_object_object_add(root, "ssd_type", json_object_new_string(
				       o->ssd_type == LBA_TYPE_SSD ? "lba" : "kv"));
	json_object *jdevs = json_object_new_array();
	for (int i = 0; i < r->ndev; i++) {
		json_object *d = json_object_new_object();
		json_object_object_add(d, "device", json_object_new_string(r->dev[i].label));
		json_object_object_add(d, "mode", json_object_new_string(r->dev[i].async ? "async"
											 : "sync"));
		if (r->dev[i].async)
			json_object_object_add(d, "queue_depth", json_object_new_int64(r->dev[i].qd));
		json_object_array_add(jdevs, d);
		if (!o->json_out && r->dev[i].async)
			printf("device %d: %s (async, queue depth %u)\n", i, r->dev[i].label,
			       r->dev[i].qd);
		else if (!o->json_out)
			printf("device %d: %s (sync)\n", i, r->dev[i].label);
	}
	json_object_object_add(root, "devices", jdevs);
	if (!o->json_out) {
		printf("%llu keys of %u bytes, values of %u bytes, key distribution %d\n\n",
		       (unsigned long long)o->num_keys, o->key_size, o->value_size, o->dist);
	}

	bool failed = o->format && format_all(r);
	if (!failed) {
		for (uint32_t t = 1; t <= o->num_tests && !failed; t++) {
			json_object *jt = json_object_new_array();
			if (o->write)
				failed |= run_phase(r, KVT_STORE, t, jt);
			if (o->read && !failed)
				failed |= run_phase(r, KVT_RETRIEVE, t, jt);
			if (o->blend && !failed)
				failed |= run_phase(r, KVT_BLEND, t, jt);
			if (o->del && !failed)
				failed |= run_phase(r, KVT_DELETE, t, jt);
			json_object_array_add(tests, jt);
		}
	}
	json_object_object_add(root, "tests", tests);
	json_object_object_add(root, "result", json_object_new_string(failed ? "FAIL" : "PASS"));
	if (o->json_out)
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		printf("result: %s\n", failed ? "FAIL" : "PASS");
	json_object_put(root);
	return failed ? KVT_EXIT_DEVICE : KVT_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct kvp_opts *o = calloc(1, sizeof(*o));
	struct kvp_run *r = calloc(1, sizeof(*r));
	if (!o || !r) {
		fprintf(stderr, PROG ": out of memory\n");
		return KVT_EXIT_HOST;
	}
	int rc = kvp_parse(o, argc, argv);
	if (rc >= 0)
		goto out;
	r->o = o;
	rc = load_values(r);
	if (rc)
		goto out;
	rc = start_sdk(r);
	if (rc)
		goto out;
	rc = find_devices(r);
	if (rc == KVT_EXIT_OK)
		rc = make_order(r);
	if (rc == KVT_EXIT_OK)
		rc = run(r);
	fflush(stdout);
	kv_sdk_finalize();
out:
	for (int i = 0; i < r->ndev; i++)
		free(r->dev[i].phase);
	free(r->order);
	free(r->file_value);
	free(r);
	free(o);
	return rc;
}
