/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_threads: many threads storing keys through the KV SDK at once, the way the original
 * SDK's test_simple_config_adv did (our own program, for scripts/bench_poll.py): the SDK
 * started from a kv_sdk structure that names only the device (the automatic core masks and
 * queue depth), THREADS threads each storing KEYS keys of 16 bytes with VALUE-byte values,
 * every odd key with kv_store and every even one with kv_store_async, then waiting for its
 * callbacks. Prints one JSON object: stores per second over the whole run and the per-store
 * latency (a sync call's duration; an async store's submission to its callback) p50, p99,
 * p99.99 in microseconds.
 *
 *   kv_threads DEVID THREADS KEYS VALUE [CORE_MASK SYNC_MASK CQ_MASK]
 * DEVID is at most 31 characters (the kv_sdk structure's): an alias from UNVME_DEVICES.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unvme/kv/kv_apis.h"

struct op {
	kv_pair kv;
	char key[16];
	uint64_t start_ns;
	struct worker *w;
};

struct worker {
	pthread_t thread;
	uint64_t handle;
	int id;
	uint32_t nkeys;
	struct op *ops;
	void *value;
	uint64_t *lat_ns;          /* per op */
	_Atomic uint32_t async_done;
	_Atomic uint32_t errors;
};

static uint32_t value_size;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	struct op *o = kv->param.private_data;
	struct worker *w = o->w;
	w->lat_ns[o - w->ops] = now_ns() - o->start_ns;
	if (status != KV_SUCCESS)
		atomic_fetch_add(&w->errors, 1);
	atomic_fetch_add_explicit(&w->async_done, 1, memory_order_release);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint32_t async = 0;
	for (uint32_t i = 0; i < w->nkeys; i++) {
		struct op *o = &w->ops[i];
		snprintf(o->key, sizeof(o->key), "t%03dk%010u", w->id, i);
		memset(&o->kv, 0, sizeof(o->kv));
		o->kv.key.key = o->key;
		o->kv.key.length = 16;
		o->kv.value.value = w->value;
		o->kv.value.length = value_size;
		o->kv.param.async_cb = on_done;
		o->kv.param.private_data = o;
		o->kv.param.io_option.store_option = KV_STORE_DEFAULT;
		o->w = w;
		o->start_ns = now_ns();
		if (i & 1) {
			if (kv_store(w->handle, &o->kv) != KV_SUCCESS)
				atomic_fetch_add(&w->errors, 1);
			w->lat_ns[i] = now_ns() - o->start_ns;
		} else {
			async++;
			if (kv_store_async(w->handle, &o->kv) != KV_SUCCESS) {
				atomic_fetch_add(&w->errors, 1);
				async--;
			}
		}
	}
	while (atomic_load_explicit(&w->async_done, memory_order_acquire) < async) {
		struct timespec ts = { 0, 1000 };
		nanosleep(&ts, NULL); /* the original's usleep(1) */
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#define USAGE "usage: kv_threads DEVID THREADS KEYS VALUE [CORE_MASK SYNC_MASK CQ_MASK]\n" \
	      "  THREADS threads store KEYS keys each (16 bytes, VALUE-byte values), every odd one\n" \
	      "  with kv_store, every even one with kv_store_async; the SDK's automatic masks, or\n" \
	      "  the given ones (hexadecimal). Prints stores/s and latency percentiles as JSON.\n"

int main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(USAGE, stdout);
		return 0;
	}
	if (argc != 5 && argc != 8) {
		fputs(USAGE, stderr);
		return 2;
	}
	int nthreads = atoi(argv[2]);
	uint32_t nkeys = (uint32_t)strtoul(argv[3], NULL, 10);
	value_size = (uint32_t)strtoul(argv[4], NULL, 10);
	if (nthreads < 1 || nthreads > 256 || nkeys < 1 || strlen(argv[1]) >= DEV_ID_LEN) {
		fprintf(stderr, "kv_threads: 1..256 threads, 1 key or more, a device id of at most "
			"%d characters\n", DEV_ID_LEN - 1);
		return 2;
	}
	kv_sdk opt;
	memset(&opt, 0, sizeof(opt));
	snprintf(opt.dev_id[0], DEV_ID_LEN, "%s", argv[1]);
	opt.nr_ssd = 1;
	if (argc == 8) {
		opt.dd_options[0].core_mask = strtoull(argv[5], NULL, 16);
		opt.dd_options[0].sync_mask = strtoull(argv[6], NULL, 16);
		opt.dd_options[0].cq_thread_mask = strtoull(argv[7], NULL, 16);
	}
	if (kv_sdk_init(KV_SDK_INIT_FROM_STR, &opt) != KV_SUCCESS) {
		fprintf(stderr, "kv_threads: kv_sdk_init failed on %s\n", argv[1]);
		return 3;
	}
	int nr = 0;
	uint64_t handles[NR_MAX_SSD];
	if (kv_get_device_handles(&nr, handles) != KV_SUCCESS || nr < 1) {
		fprintf(stderr, "kv_threads: no device handle\n");
		return 3;
	}
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	for (int t = 0; t < nthreads; t++) {
		w[t].handle = handles[0];
		w[t].id = t;
		w[t].nkeys = nkeys;
		w[t].ops = calloc(nkeys, sizeof(*w[t].ops));
		w[t].lat_ns = calloc(nkeys, sizeof(*w[t].lat_ns));
		w[t].value = malloc(value_size ? value_size : 1);
		if (!w[t].ops || !w[t].lat_ns || !w[t].value)
			return 3;
		memset(w[t].value, 'a' + t % 25, value_size);
	}
	uint64_t t0 = now_ns();
	for (int t = 0; t < nthreads; t++)
		pthread_create(&w[t].thread, NULL, run, &w[t]);
	for (int t = 0; t < nthreads; t++)
		pthread_join(w[t].thread, NULL);
	double secs = (double)(now_ns() - t0) / 1e9;
	size_t n = (size_t)nthreads * nkeys;
	uint64_t *all = malloc(n * sizeof(*all));
	uint32_t errors = 0;
	for (int t = 0; t < nthreads; t++) {
		memcpy(all + (size_t)t * nkeys, w[t].lat_ns, nkeys * sizeof(*all));
		errors += atomic_load(&w[t].errors);
	}
	qsort(all, n, sizeof(*all), cmp_u64);
#define PCT(p) ((double)all[(size_t)((double)(n - 1) * (p))] / 1000.0)
	printf("{\"threads\": %d, \"stores\": %zu, \"seconds\": %.3f, \"ops_per_s\": %.1f, "
	       "\"p50_us\": %.1f, \"p99_us\": %.1f, \"p9999_us\": %.1f, \"errors\": %u}\n", nthreads,
	       n, secs, (double)n / secs, PCT(0.5), PCT(0.99), PCT(0.9999), errors);
	kv_sdk_finalize();
	return errors ? 1 : 0;
}
