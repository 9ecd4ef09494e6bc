/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf: the original SDK's benchmark with its options (docs/kv-tools.md). The options
 * (kv_perf_opts.c) and the run over one or more devices (kv_perf.c).
 */
#ifndef KVTOOLS_KV_PERF_H
#define KVTOOLS_KV_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "kv_sdkbench.h"
#include "kv_types.h"

#define KVP_MAX_DEV 16

struct kvp_opts {
	bool write, read, verify, del, blend, format, getlog, cache, sdk_level, json_out;
	uint64_t num_keys;
	uint32_t num_tests;
	uint32_t value_size;
	uint32_t key_size;
	int dist;              /* 0 seq inc, 1 seq dec, 2 random, 3 unique random, 4 range random,
				* 5 random drawn anew per phase (db_bench's *random benchmarks) */
	const char *json_config;
	uint32_t slab_mb;
	int ssd_type;
	uint32_t offset;
	uint64_t seed;
	int fill;              /* -1: derived from the key */
	const char *read_file;
	uint64_t key_range;    /* -y, for -p 4 */
	/* per device: several values select several devices; a shorter list repeats its last */
	const char *dev[KVP_MAX_DEV];
	int ndev;
	uint64_t core_mask[KVP_MAX_DEV]; int ncore;
	uint64_t sync_mask[KVP_MAX_DEV]; int nsync;
	uint64_t cq_mask[KVP_MAX_DEV]; int ncq;
	uint32_t qd[KVP_MAX_DEV]; int nqd;
};

/* Parses argv; -1 to go on, else an exit code (help: 0, usage error: 2, message printed). */
int kvp_parse(struct kvp_opts *o, int argc, char **argv);
void kvp_usage(FILE *f);

#endif
