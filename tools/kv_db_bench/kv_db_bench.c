/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_db_bench: RocksDB db_bench's workloads, flags and output over the uNVMe KV SDK, so the
 * scripts that run and parse db_bench compare a KV device with a RocksDB store unchanged.
 * Flags, benchmarks and the differences from db_bench: docs/kv-tools.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv_apis.h"
#include "kv_sdk_config.h"
#include "kvdb_flags.h"
#include "kvdb_fresh.h"
#include "kvdb_run.h"
#include "lib/common/clock.h"

#ifndef UNVME_VERSION
#define UNVME_VERSION "unknown"
#endif

#define MAX_BENCHES 64

/* The --benchmarks list, checked whole before anything runs: a typo in the fifth name should
 * not surface after four benchmarks have run. */
static int parse_list(const char *list, enum kvdb_bench *out, int *count)
{
	*count = 0;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len) {
			if (*count == MAX_BENCHES) {
				fprintf(stderr, "kv_db_bench: --benchmarks: more than %d benchmarks\n",
					MAX_BENCHES);
				return KVT_EXIT_USAGE;
			}
			if (!kvdb_bench_find(p, len, &out[*count])) {
				fprintf(stderr, "kv_db_bench: --benchmarks: unknown benchmark '%.*s' "
						"(known: fillseq fillrandom overwrite readrandom readseq "
						"readwhilewriting deleterandom)\n", (int)len, p);
				return KVT_EXIT_USAGE;
			}
			(*count)++;
		}
		p += len + (comma ? 1 : 0);
	}
	return KVT_EXIT_OK;
}

static void header(const struct kvdb_flags *f, const struct kvdb_ctx *c)
{
	time_t now = time(NULL);
	char date[64];
	strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", localtime(&now));
	printf("uNVMe:      version %s (KV SDK)\n", UNVME_VERSION);
	printf("Date:       %s\n", date);
	printf("Devices:    %d (%s)\n", c->ndev, f->json ? f->json : f->device);
	printf("Keys:       %d bytes each\n", f->key_size);
	printf("Values:     %d bytes each\n", f->value_size);
	printf("Entries:    %lld\n", (long long)f->num);
	printf("Threads:    %d\n", f->threads);
	printf("------------------------------------------------\n");
}

int main(int argc, char **argv)
{
	struct kvdb_flags f;
	int rc = kvdb_flags_parse(&f, argc, argv);
	if (rc >= 0)
		return rc;
	enum kvdb_bench list[MAX_BENCHES];
	int count;
	rc = parse_list(f.benchmarks, list, &count);
	if (rc)
		return rc;

	struct kvdb_ctx c = {
		.f = &f,
		.ks = { .key_size = (uint32_t)f.key_size, .prefix = KVT_DEFAULT_PREFIX },
		.vs = { .size = (uint32_t)f.value_size, .fill = -1 },
	};
	const char *why = kvt_keys_check(&c.ks, (uint64_t)f.num);
	if (why) {
		fprintf(stderr, "kv_db_bench: --key_size=%d with --num=%lld: %s\n", f.key_size,
			(long long)f.num, why);
		return KVT_EXIT_USAGE;
	}

	if (f.json) {
		rc = kvt_sdk_start(f.json, "kv_db_bench");
	} else {
		struct kvt_sdk_cfg cfg;
		kvt_cfg_single(&cfg, f.device, false, 0);
		/* every thread calls synchronously; on its own core where there is one */
		cfg.dev[0].core_mask = cfg.dev[0].sync_mask = 0;
		for (int t = 0; t < f.threads && t < 64; t++)
			cfg.dev[0].core_mask |= 1ull << kvt_cpu(t);
		cfg.dev[0].sync_mask = cfg.dev[0].core_mask;
		rc = kvt_sdk_start_cfg(&cfg, "kv_db_bench");
	}
	if (rc)
		return KVT_EXIT_HOST;
	if (kv_get_device_handles(&c.ndev, c.handle) != KV_SUCCESS || c.ndev < 1) {
		fprintf(stderr, "kv_db_bench: the SDK started with no device\n");
		kv_sdk_finalize();
		return KVT_EXIT_HOST;
	}

	if (f.seed == 0) {
		c.seed = mono_ns() ^ (uint64_t)time(NULL) << 20;
		c.seed &= (uint64_t)INT64_MAX;
		printf("Set seed to %llu because --seed was 0\n", (unsigned long long)c.seed);
	} else {
		c.seed = (uint64_t)f.seed;
	}
	header(&f, &c);
	int result = KVT_EXIT_OK;
	for (int i = 0; i < count && result == KVT_EXIT_OK; i++) {
		if (list[i] == KVDB_FILLSEQ || list[i] == KVDB_FILLRANDOM)
			result = kvdb_fresh(c.handle, c.ndev, c.ks.prefix);
		if (result == KVT_EXIT_OK)
			result = kvdb_run(&c, list[i]);
	}
	fflush(stdout);
	kv_sdk_finalize();
	return result;
}
