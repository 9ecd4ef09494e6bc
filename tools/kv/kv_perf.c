/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf: store / retrieve / delete / blend benchmark, as the original ran it: one I/O
 * thread per core of each device's core_mask (pinned to it where the CPU exists), each with
 * keys of its own, sync or async by its core's queue type, through the driver-level calls of
 * kvnvme.h on that core's queue (or the kv_* calls with -L). Every phase is reported per
 * device (its threads together) and in total like sdk_perf, followed by the original's own
 * result lines, which its scripts parse.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_apis.h"
#include "kvnvme.h"
#include "kv_perf.h"
#include "kv_report.h"
#include "kv_result_name.h"
#include "kv_sdk_config.h"

#define PROG "kv_perf"
#define MAX_WORKERS (NR_MAX_SSD * 8)
/* -p 3 without -y: the original's key ranges */
#define KV_RANGE_END 0xC0000000ull

struct kvp_dev {
	uint64_t handle;
	char label[256];
	uint32_t qd;
	struct kvt_keyspec ks;
	int nworkers;
	/* -i */
	uint64_t log_reads, log_errors, used;
	double ops_per_sec[4];   /* the last test's, per phase kind: the summary lines */
	uint64_t miscompares;
};

struct kvp_worker {
	int dev, core, thread_index, index;
	bool async;
	uint64_t seed;
	uint64_t *order[KVP_NOPS];  /* key indexes of each operation's keys */
	uint64_t *mixed;            /* blend: the three shuffled together */
	uint8_t *ops;
	uint64_t nmixed;
	struct kvt_phase *phase;
	pthread_t tid;
};

struct kvp_run {
	struct kvp_opts *o;
	struct kvp_dev dev[NR_MAX_SSD];
	int ndev;
	struct kvp_worker w[MAX_WORKERS];
	int nw;
	uint64_t span;              /* key indexes of one thread: index * span + key id */
	struct kvt_valuespec vs;
	uint8_t *pattern;           /* -k / -F: the bytes of every value */
	atomic_bool logging;
	int ncpu;
};

#define PICK(arr, n, i, def) ((n) ? (arr)[(i) < (n) ? (i) : (n) - 1] : (def))

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64: good enough spread for key orders, reproducible from -g */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t ops_of(const struct kvp_opts *o, int k)
{
	return o->blend || k == 0 ? o->num_keys[k] : 0;
}

/* The key ids of operation k of one thread from seed s, as the original's distributions. */
static void fill_order(const struct kvp_opts *o, int k, uint64_t base, uint64_t s, uint64_t *out)
{
	uint64_t n = ops_of(o, k), off = o->key_offset[k];
	uint64_t lo = o->range_lo[k], width = o->range_hi[k] - o->range_lo[k] + 1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id;
		switch (o->dist[k]) {
		case KVP_SEQ_INC: id = off + i; break;
		case KVP_SEQ_DEC: id = off + n - 1 - i; break;
		case KVP_RAND_RANGE: id = lo + rnd(&s) % width; break;
		case KVP_RAND_NOC: id = off + i; break;
		default: id = off + rnd(&s) % n; break;  /* 2, 5 */
		}
		out[i] = base + id;
	}
	if (o->dist[k] == KVP_RAND_NOC)
		for (uint64_t i = n; i > 1; i--) {
			uint64_t j = rnd(&s) % i, t = out[i - 1];
			out[i - 1] = out[j];
			out[j] = t;
		}
}

/* A blend: each operation's keys, all shuffled together (seeded). */
static void mix(const struct kvp_opts *o, struct kvp_worker *w)
{
	uint64_t n = 0;
	for (int k = 0; k < KVP_NOPS; k++)
		for (uint64_t i = 0; i < ops_of(o, k); i++, n++) {
			w->mixed[n] = w->order[k][i];
			w->ops[n] = (uint8_t)k; /* KVT_STORE, _RETRIEVE, _DELETE */
		}
	uint64_t s = w->seed ^ 0xb1e4d;
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = rnd(&s) % i, t = w->mixed[i - 1];
		uint8_t op = w->ops[i - 1];
		w->mixed[i - 1] = w->mixed[j];
		w->ops[i - 1] = w->ops[j];
		w->mixed[j] = t;
		w->ops[j] = op;
	}
}

static int make_orders(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	for (int i = 0; i < r->nw; i++) {
		struct kvp_worker *w = &r->w[i];
		w->seed = PICK(o->seed, o->nseed, w->thread_index, 1) * 0x100000001b3ull +
			  (uint64_t)w->index;
		uint64_t total = 0;
		for (int k = 0; k < KVP_NOPS; k++) {
			uint64_t n = ops_of(o, k);
			total += n;
			w->order[k] = malloc((n ? n : 1) * sizeof(uint64_t));
			if (!w->order[k])
				return KVT_EXIT_HOST;
			fill_order(o, k, (uint64_t)w->index * r->span, w->seed + (uint64_t)k, w->order[k]);
		}
		if (o->blend) {
			w->mixed = malloc(total * sizeof(uint64_t));
			w->ops = malloc(total);
			if (!w->mixed || !w->ops)
				return KVT_EXIT_HOST;
			w->nmixed = total;
			mix(o, w);
		}
		w->phase = calloc(1, sizeof(*w->phase));
		if (!w->phase)
			return KVT_EXIT_HOST;
	}
	return KVT_EXIT_OK;
}

/* -k STRING / -F FILE: the content every value starts with, repeated to the largest size. */
static int load_values(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	r->vs.fill = -1;
	r->vs.size = 0;
	r->vs.nsizes = (uint32_t)o->nvalues;
	for (int i = 0; i < o->nvalues; i++) {
		r->vs.sizes[i] = o->value_size[i];
		if (o->value_size[i] > r->vs.size)
			r->vs.size = o->value_size[i];
	}
	if (!o->pattern && !o->value_file)
		return KVT_EXIT_OK;
	r->pattern = malloc(r->vs.size ? r->vs.size : 1);
	if (!r->pattern)
		return KVT_EXIT_HOST;
	size_t got;
	if (o->pattern) {
		got = strlen(o->pattern);
		memcpy(r->pattern, o->pattern, got < r->vs.size ? got : r->vs.size);
	} else {
		FILE *f = fopen(o->value_file, "rb");
		if (!f) {
			fprintf(stderr, PROG ": -F %s: %s\n", o->value_file, strerror(errno));
			return KVT_EXIT_USAGE;
		}
		got = fread(r->pattern, 1, r->vs.size, f);
		fclose(f);
		if (got == 0 && r->vs.size) {
			fprintf(stderr, PROG ": -F %s: the file is empty\n", o->value_file);
			return KVT_EXIT_USAGE;
		}
	}
	for (size_t p = got; p < r->vs.size; p++)
		r->pattern[p] = r->pattern[p % got];
	r->vs.file = r->pattern;
	return KVT_EXIT_OK;
}

/* Each device's cores become its I/O threads; the key space each thread gets. */
static int find_devices(struct kvp_run *r, const uint32_t qd[KVP_MAX_DEV], char labels[][256])
{
	struct kvp_opts *o = r->o;
	uint64_t handles[NR_MAX_SSD];
	int nr = 0;
	if (kv_get_device_handles(&nr, handles) != KV_SUCCESS || nr < 1) {
		fprintf(stderr, PROG ": the SDK started with no device\n");
		return KVT_EXIT_HOST;
	}
	r->ndev = nr;
	r->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 0; i < nr; i++) {
		struct kvp_dev *d = &r->dev[i];
		d->handle = handles[i];
		int idx = kv_get_dev_idx_on_handle(handles[i]);
		idx = idx >= 0 && idx < KVP_MAX_DEV ? idx : i;
		snprintf(d->label, sizeof(d->label), "%s", labels[idx]);
		d->qd = qd[idx] ? qd[idx] : 1;
		d->ks.key_size = o->key_size;
		d->ks.prefix = KVT_DEFAULT_PREFIX;
		int ncore = 0, cores[MAX_CPU_CORES];
		if (kv_get_cpus_on_device(handles[i], &ncore, cores) != KV_SUCCESS || ncore < 1)
			ncore = 0;
		for (int c = 0; c < ncore && r->nw < MAX_WORKERS; c++) {
			struct kvp_worker *w = &r->w[r->nw];
			w->dev = i;
			w->core = cores[c];
			w->thread_index = c;
			w->index = r->nw++;
			w->async = kv_io_queue_type(handles[i], cores[c]) == ASYNC_IO_QUEUE;
			d->nworkers++;
		}
		if (!d->nworkers) {
			fprintf(stderr, PROG ": %s: the SDK gave the device no core\n", d->label);
			return KVT_EXIT_HOST;
		}
	}
	/* the key ids one thread may use; threads' keys lie apart */
	r->span = 1;
	for (int k = 0; k < KVP_NOPS; k++) {
		if (!ops_of(o, k))
			continue;
		if (o->dist[k] == KVP_RAND_RANGE && !o->range_given[k]) {
			o->range_lo[k] = 0;
			o->range_hi[k] = KV_RANGE_END;
			if (o->ssd_type == LBA_TYPE_SSD) {
				/* the whole device, shared by the threads */
				uint64_t total = kv_get_total_size(handles[0]);
				uint64_t fit = total == KV_ERR_INVALID_VALUE || !r->vs.size ? 1
					       : total / r->vs.size / (uint64_t)r->nw;
				o->range_hi[k] = fit ? fit - 1 : 0;
			}
		}
		uint64_t end = o->dist[k] == KVP_RAND_RANGE ? o->range_hi[k] + 1
							     : o->key_offset[k] + ops_of(o, k);
		if (end > r->span)
			r->span = end;
	}
	uint64_t keys = r->span * (uint64_t)r->nw;
	for (int i = 0; i < nr; i++) {
		struct kvp_dev *d = &r->dev[i];
		/* block SSDs: whole sectors per value, and room for every key's extent */
		if (o->ssd_type == LBA_TYPE_SSD) {
			uint32_t sector = kv_get_sector_size(d->handle);
			for (uint32_t v = 0; v < r->vs.nsizes; v++)
				if (!sector || r->vs.sizes[v] == 0 || r->vs.sizes[v] % sector) {
					fprintf(stderr, PROG ": %s: a block SSD needs value sizes that "
						"are non-zero multiples of the sector size (%u)\n",
						d->label, sector);
					return KVT_EXIT_USAGE;
				}
			d->ks.lba = true;
			d->ks.blocks_per_value = r->vs.size / sector;
			uint64_t total = kv_get_total_size(d->handle);
			if (total != KV_ERR_INVALID_VALUE && keys > total / r->vs.size) {
				fprintf(stderr, PROG ": %s: %llu values of %u bytes do not fit in %llu "
					"bytes\n", d->label, (unsigned long long)keys, r->vs.size,
					(unsigned long long)total);
				return KVT_EXIT_USAGE;
			}
		}
		const char *why = kvt_keys_check(&d->ks, keys);
		if (why) {
			fprintf(stderr, PROG ": key ids up to %llu with %u-byte keys: %s\n",
				(unsigned long long)keys, o->key_size, why);
			return KVT_EXIT_USAGE;
		}
	}
	return KVT_EXIT_OK;
}

static void *worker_thread(void *arg)
{
	struct kvp_worker *w = arg;
	struct kvt_phase *p = w->phase;
	/* on its core, as the original pinned its I/O threads (a core this machine lacks: not
	 * pinned; its queue is named all the same) */
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (w->core < ncpu && w->core < CPU_SETSIZE) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->core, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (kvt_phase_run(p, PROG) != 0)
		p->errors = p->errors ? p->errors : 1;
	return NULL;
}

/* -i: reads the utilization log page of every device while a phase runs. */
static void *log_thread(void *arg)
{
	struct kvp_run *r = arg;
	uint8_t page[512];
	do {
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
	} while (atomic_load(&r->logging));
	return NULL;
}

static const char *const orig_op[3] = { "[WRITE]", "[READ]", "[DEL]" };

/* The original's result lines for one device and phase (its scripts parse them). */
static void original_lines(const struct kvp_run *r, const struct kvt_phase *p, bool blend)
{
	const struct kvp_opts *o = r->o;
	printf("[WRITE]:[READ]:[DEL] = %llu:%llu:%llu\n", (unsigned long long)p->op_ops[0],
	       (unsigned long long)p->op_ops[1], (unsigned long long)p->op_ops[2]);
	uint64_t total_ops = 0;
	double value_kb = 0;
	for (int k = 0; k < 3; k++) {
		if (!p->op_ops[k])
			continue;
		for (uint32_t v = 0; v < r->vs.nsizes; v++)
			printf("%s operations: %llu, Key size: %u, Value size: %u\n", orig_op[k],
			       (unsigned long long)p->op_size_ops[k][v], o->key_size,
			       r->vs.sizes[v]);
		printf("%s Total Key Size: %llu\n", orig_op[k],
		       (unsigned long long)(p->op_ops[k] * o->key_size));
		printf("%s Total Value Size: %llu\n", orig_op[k],
		       (unsigned long long)p->op_value_bytes[k]);
		total_ops += p->op_ops[k];
		value_kb = (double)p->op_value_bytes[k] / 1024.0;
	}
	uint64_t us = (p->end_ns - p->start_ns) / 1000u;
	if (!us)
		us = 1;
	printf("Latency: %.4f usec\n", total_ops ? (double)us / (double)total_ops : 0.0);
	printf("OPS/sec: %.2f, ", (double)total_ops * 1e6 / (double)us);
	if (!blend)
		printf("Throughput: %.2f KB\n", value_kb * 1e6 / (double)us);
	printf("Test time: %llu usec\n", (unsigned long long)us);
}

/* Runs one phase on every thread of every device at once; reports it; whether it failed. */
static bool run_phase(struct kvp_run *r, enum kvt_op op, uint32_t test, json_object *jtest)
{
	struct kvp_opts *o = r->o;
	pthread_t logger;
	bool logging = false;
	if (o->getlog) {
		atomic_store(&r->logging, true);
		logging = pthread_create(&logger, NULL, log_thread, r) == 0;
	}
	for (int i = 0; i < r->nw; i++) {
		struct kvp_worker *w = &r->w[i];
		struct kvp_dev *d = &r->dev[w->dev];
		struct kvt_phase *p = w->phase;
		/* -p 5: the keys of this phase of this test are drawn anew */
		if (o->dist[0] == KVP_RAND_PHASE && op != KVT_BLEND)
			fill_order(o, 0, (uint64_t)w->index * r->span,
				   w->seed ^ ((uint64_t)test << 32 | (uint64_t)op) * 0xd1b54a32d192ed03ull,
				   w->order[0]);
		memset(p, 0, sizeof(*p));
		p->op = op;
		p->handle = d->handle;
		p->ks = &d->ks;
		p->vs = &r->vs;
		p->order = op == KVT_BLEND ? w->mixed : w->order[0];
		p->op_list = op == KVT_BLEND ? w->ops : NULL;
		p->n = op == KVT_BLEND ? w->nmixed : o->num_keys[0];
		p->async = w->async;
		p->qd = d->qd;
		p->driver = !o->sdk_level;
		p->qid = w->core;
		p->verify = o->verify && !(d->ks.lba && op == KVT_BLEND);
		p->offset = d->ks.lba ? 0 : o->value_offset;
		/* repeated keys (random orders) meet their own deletes, and a blend deletes (and
		 * reads deleted or never written keys): then a missing key is an expected answer */
		int dist = o->dist[0];
		p->missing_ok = op == KVT_BLEND ||
				(op == KVT_DELETE && (dist == KVP_RAND || dist == KVP_RAND_RANGE ||
						      dist == KVP_RAND_PHASE || o->blend)) ||
				(op != KVT_STORE && dist == KVP_RAND_PHASE);
		p->seed = w->seed + test * 7919u;
		p->progress = i == 0; /* the first thread's stands for all: one line */
		if (pthread_create(&w->tid, NULL, worker_thread, w) != 0) {
			w->tid = 0;
			worker_thread(w);
		}
	}
	for (int i = 0; i < r->nw; i++)
		if (r->w[i].tid)
			pthread_join(r->w[i].tid, NULL);
	if (logging) {
		atomic_store(&r->logging, false);
		pthread_join(logger, NULL);
	}

	struct kvt_phase *total = calloc(1, sizeof(*total)), *dp = calloc(1, sizeof(*dp));
	if (!total || !dp) {
		free(total);
		free(dp);
		fprintf(stderr, PROG ": out of memory\n");
		return true;
	}
	lat_hist_init(&total->hist);
	bool failed = false;
	const char *name = kvt_op_name(op);
	json_object *jdevs = json_object_new_array();
	for (int i = 0; i < r->ndev; i++) {
		struct kvp_dev *d = &r->dev[i];
		memset(dp, 0, sizeof(*dp));
		lat_hist_init(&dp->hist);
		bool first = true;
		for (int k = 0; k < r->nw; k++)
			if (r->w[k].dev == i) {
				kvt_phase_merge(dp, r->w[k].phase, first);
				first = false;
			}
		kvt_phase_merge(total, dp, i == 0);
		uint64_t ns = dp->end_ns - dp->start_ns;
		d->ops_per_sec[op == KVT_BLEND ? 3 : op] = ns ? (double)dp->ops * 1e9 / (double)ns : 0;
		if (op == KVT_RETRIEVE)
			d->miscompares = dp->verify_errors;
		char title[400];
		snprintf(title, sizeof(title), "test %u %s on %s", test, name, d->label);
		if (o->json_out) {
			json_object *j = kvt_report_json(name, dp);
			json_object_object_add(j, "device", json_object_new_string(d->label));
			json_object_object_add(j, "threads", json_object_new_int(d->nworkers));
			if (o->getlog) {
				json_object_object_add(j, "log_reads", json_object_new_uint64(d->log_reads));
				json_object_object_add(j, "used_pct_x100", json_object_new_uint64(d->used));
			}
			json_object_array_add(jdevs, j);
		} else {
			kvt_report_text(stdout, title, dp);
			if (o->getlog)
				printf("  log page reads during the phase: %llu (%llu failed), "
				       "utilization %.2f%%\n", (unsigned long long)d->log_reads,
				       (unsigned long long)d->log_errors, (double)d->used / 100.0);
			original_lines(r, dp, op == KVT_BLEND);
			if (op == KVT_RETRIEVE && o->verify)
				printf("Miscompare count: %llu\n", (unsigned long long)dp->verify_errors);
			printf("\n");
		}
		if (kvt_phase_failed(dp)) {
			kvt_report_failure(PROG, title, dp);
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
	free(dp);
	return failed;
}

/* -f: every thread's keys retrieved once more and written as the original's records. */
static bool dump_pairs(struct kvp_run *r)
{
	FILE *f = fopen(r->o->dump_file, "w");
	if (!f) {
		fprintf(stderr, PROG ": -f %s: %s\n", r->o->dump_file, strerror(errno));
		return true;
	}
	uint8_t key[KV_MAX_KEY_LEN + 8];
	uint8_t *val = malloc(r->vs.size + 4);
	bool failed = !val;
	for (int i = 0; i < r->nw && !failed; i++) {
		struct kvp_worker *w = &r->w[i];
		const struct kvp_dev *d = &r->dev[w->dev];
		for (uint64_t n = 0; n < r->o->num_keys[0]; n++) {
			uint64_t idx = w->order[0][n];
			kvt_key_make(&d->ks, idx, key);
			kv_pair kv;
			memset(&kv, 0, sizeof(kv));
			kv.key.key = key;
			kv.key.length = (uint16_t)d->ks.key_size;
			kv.value.value = val;
			kv.value.length = (kvt_value_size(&r->vs, idx) + 3u) & ~3u;
			int rc = kv_retrieve(d->handle, &kv);
			if (rc == KV_ERR_NOT_EXIST_KEY)
				continue;
			if (rc != KV_SUCCESS) {
				char rs[64];
				fprintf(stderr, PROG ": -f: retrieve on %s: %s\n", d->label,
					kvt_result_str(rc, rs, sizeof(rs)));
				failed = true;
				break;
			}
			fputs("KEY:\n", f);
			fwrite(key, 1, d->ks.key_size, f);
			fputs("\n=========\nVALUE:\n", f);
			fwrite(val, 1, kv.value.length, f);
			fputs("\n=========\n", f);
		}
	}
	free(val);
	if (fclose(f) != 0)
		failed = true;
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
			printf("Successfully formatted the device: %s\n", r->dev[i].label);
		}
	}
	return failed;
}

/* -i alone: the utilization log page of each device, once. */
static bool show_log_pages(struct kvp_run *r)
{
	bool failed = false;
	for (int i = 0; i < r->ndev; i++) {
		uint8_t page[512];
		int rc = kv_get_log_page(r->dev[i].handle, 0xC0, page, sizeof(page));
		uint64_t used = kv_get_used_size(r->dev[i].handle);
		char rs[64];
		if (rc != KV_SUCCESS) {
			fprintf(stderr, PROG ": log page C0h of %s: %s\n", r->dev[i].label,
				kvt_result_str(rc, rs, sizeof(rs)));
			failed = true;
			continue;
		}
		if (r->o->json_out)
			continue;
		printf("log page 0xc0 of %s (utilization %.2f%%):\n", r->dev[i].label,
		       used == KV_ERR_INVALID_VALUE ? 0.0 : (double)used / 100.0);
		for (int row = 0; row < (int)sizeof(page); row += 16) {
			printf("%04x:", row);
			for (int b = row; b < row + 16; b++)
				printf(" %02x", page[b]);
			printf("\n");
		}
	}
	return failed;
}

static void summary_lines(const struct kvp_run *r)
{
	static const char *const what[4] = { "Write", "Read", "Delete", "Blend" };
	for (int i = 0; i < r->ndev; i++)
		for (int k = 0; k < 4; k++)
			printf("%s Device's %s OPS/sec: %.2f\n", r->dev[i].label, what[k],
			       r->dev[i].ops_per_sec[k]);
}

static int run(struct kvp_run *r)
{
	struct kvp_opts *o = r->o;
	json_object *root = json_object_new_object();
	json_object *tests = json_object_new_array();
	json_object_object_add(root, "program", json_object_new_string(PROG));
	json_object_object_add(root, "keys", json_object_new_uint64(o->num_keys[0]));
	json_object_object_add(root, "key_size", json_object_new_int64(o->key_size));
	json_object_object_add(root, "value_size", json_object_new_int64(o->value_size[0]));
	json_object *jsizes = json_object_new_array();
	for (int i = 0; i < o->nvalues; i++)
		json_object_array_add(jsizes, json_object_new_int64(o->value_size[i]));
	json_object_object_add(root, "value_sizes", jsizes);
	json_object_object_add(root, "distribution", json_object_new_int(o->dist[0]));
	json_object_object_add(root, "calls", json_object_new_string(o->sdk_level ? "sdk"
										 : "driver"));
	json_object_object_add(root, "ssd_type", json_object_new_string(
				       o->ssd_type == LBA_TYPE_SSD ? "lba" : "kv"));
	if (o->json_config)
		json_object_object_add(root, "config", json_object_new_string(o->json_config));
	json_object *jdevs = json_object_new_array();
	for (int i = 0; i < r->ndev; i++) {
		const struct kvp_dev *d = &r->dev[i];
		json_object *jd = json_object_new_object();
		json_object *jt = json_object_new_array();
		bool any_async = false;
		if (!o->json_out)
			printf("device %d: %s:", i, d->label);
		for (int k = 0; k < r->nw; k++) {
			const struct kvp_worker *w = &r->w[k];
			if (w->dev != i)
				continue;
			json_object *t = json_object_new_object();
			json_object_object_add(t, "core", json_object_new_int(w->core));
			json_object_object_add(t, "mode", json_object_new_string(w->async ? "async"
											   : "sync"));
			json_object_array_add(jt, t);
			any_async |= w->async;
			if (!o->json_out)
				printf(" core %d %s", w->core, w->async ? "async" : "sync");
		}
		json_object_object_add(jd, "device", json_object_new_string(d->label));
		json_object_object_add(jd, "mode", json_object_new_string(any_async ? "async" : "sync"));
		if (any_async)
			json_object_object_add(jd, "queue_depth", json_object_new_int64(d->qd));
		json_object_object_add(jd, "threads", jt);
		json_object_array_add(jdevs, jd);
		if (!o->json_out)
			printf(any_async ? " (queue depth %u)\n" : "\n", d->qd);
	}
	json_object_object_add(root, "devices", jdevs);
	if (!o->json_out) {
		printf("%llu keys per thread of %u bytes, values of", (unsigned long long)o->num_keys[0],
		       o->key_size);
		for (int i = 0; i < o->nvalues; i++)
			printf(" %u", o->value_size[i]);
		printf(" bytes, key distribution %d, %s calls%s%s\n\n", o->dist[0],
		       o->sdk_level ? "kv_*" : "driver-level (kvnvme.h)",
		       o->json_config ? ", configuration " : "", o->json_config ? o->json_config : "");
	}

	bool failed = o->format && format_all(r);
	bool io = o->write || o->read || o->blend || o->del;
	if (!failed && !io && o->getlog)
		failed = show_log_pages(r);
	for (uint32_t t = 1; io && t <= o->num_tests && !failed; t++) {
		json_object *jt = json_object_new_array();
		if (o->write)
			failed |= run_phase(r, KVT_STORE, t, jt);
		if (o->read && !failed)
			failed |= run_phase(r, KVT_RETRIEVE, t, jt);
		if (o->read && !failed && o->dump_file)
			failed |= dump_pairs(r);
		if (o->blend && !failed)
			failed |= run_phase(r, KVT_BLEND, t, jt);
		if (o->del && !failed)
			failed |= run_phase(r, KVT_DELETE, t, jt);
		json_object_array_add(tests, jt);
	}
	json_object_object_add(root, "tests", tests);
	json_object_object_add(root, "result", json_object_new_string(failed ? "FAIL" : "PASS"));
	if (o->json_out) {
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		if (io)
			summary_lines(r);
		printf("result: %s\n", failed ? "FAIL" : "PASS");
	}
	json_object_put(root);
	return failed ? KVT_EXIT_DEVICE : KVT_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct kvp_opts *o = calloc(1, sizeof(*o));
	struct kvp_run *r = calloc(1, sizeof(*r));
	static char labels[KVP_MAX_DEV][256];
	uint32_t qd[KVP_MAX_DEV] = { 0 };
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
	rc = kvp_start_sdk(o, qd, labels);
	if (rc)
		goto out;
	rc = find_devices(r, qd, labels);
	if (rc == KVT_EXIT_OK)
		rc = make_orders(r);
	if (rc == KVT_EXIT_OK)
		rc = run(r);
	fflush(stdout);
	kv_sdk_finalize();
out:
	for (int i = 0; i < r->nw; i++) {
		for (int k = 0; k < KVP_NOPS; k++)
			free(r->w[i].order[k]);
		free(r->w[i].mixed);
		free(r->w[i].ops);
		free(r->w[i].phase);
	}
	free(r->pattern);
	free(r);
	free(o);
	return rc;
}
