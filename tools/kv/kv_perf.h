/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf: the original SDK's benchmark with its command line (docs/kv-tools.md). The options
 * (kv_perf_opts.c), the SDK configuration they make (kv_perf_config.c) and the run over the
 * devices' cores (kv_perf.c).
 */
#ifndef KVTOOLS_KV_PERF_H
#define KVTOOLS_KV_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kv_keys.h"
#include "kv_sdkbench.h"
#include "kv_types.h"

#define KVP_MAX_DEV 16
/* the original's per-operation lists (-n -o -p -y) for a blend: store, retrieve, delete */
#define KVP_NOPS 3
/* the original's default configuration file, read when no -j is given and it exists */
#define KVP_DEFAULT_JSON "./kv_perf_scripts/kv_perf_default_config.json"
#define KVP_DEFAULT_KEYS 1000
/* calls in flight when the configuration file gives no queue depth: the SDK's default, 32,
 * less the slot it keeps free */
#define KV_DEFAULT_QUEUE_SLOTS 31

enum kvp_dist {
	KVP_SEQ_INC = 0,
	KVP_SEQ_DEC = 1,
	KVP_RAND = 2,       /* uniform in offset .. offset + n - 1, repeats possible */
	KVP_RAND_RANGE = 3, /* uniform in the -y range */
	KVP_RAND_NOC = 4,   /* offset .. offset + n - 1 in a random order (no repeats) */
	KVP_RAND_PHASE = 5, /* ours: drawn anew for every phase (db_bench's *random) */
};

struct kvp_opts {
	bool write, read, verify, del, blend, format, getlog, cache, sdk_level, json_out;
	/* per blend operation (store, retrieve, delete); without -b only [0] counts */
	uint64_t num_keys[KVP_NOPS];
	int dist[KVP_NOPS];
	uint64_t key_offset[KVP_NOPS];
	uint64_t range_lo[KVP_NOPS], range_hi[KVP_NOPS];
	bool range_given[KVP_NOPS];
	uint32_t num_tests;
	uint32_t value_size[KVT_MAX_VALUE_SIZES];
	int nvalues;
	uint32_t key_size;
	const char *json_config;   /* -j, or the default file when it exists */
	bool json_is_default;
	uint32_t slab_mb;
	int ssd_type;
	bool ssd_type_given;
	uint32_t value_offset;     /* -O */
	const char *pattern;       /* -k: every value is this string repeated */
	const char *dump_file;     /* -f: the retrieved pairs are written here */
	const char *value_file;    /* -F: every value is this file's content, repeated */
	uint64_t seed[KVP_MAX_DEV * 8];
	int nseed;
	/* per device: several values select several devices; a shorter list repeats its last */
	const char *dev[KVP_MAX_DEV];
	int ndev;
	const char *core_mask[KVP_MAX_DEV]; int ncore;
	const char *sync_mask[KVP_MAX_DEV]; int nsync;
	const char *cq_mask[KVP_MAX_DEV]; int ncq;
	uint32_t qd[KVP_MAX_DEV]; int nqd;
};

/* Parses argv; -1 to go on, else an exit code (help: 0, usage error: 2, message printed). */
int kvp_parse(struct kvp_opts *o, int argc, char **argv);
void kvp_usage(FILE *f);
/* Hexadecimal like the JSON configuration's masks: "F0" and "0xF0" alike. */
bool kvp_hexmask(const char *s, uint64_t *out);

/* kv_perf_config.c: starts the SDK on the configuration the options describe: the JSON file
 * (-j, or the default one) with the command line's -d -c -s -q -a -m -l -u put over it, as
 * the original did, or a configuration made from the options alone. Per device, the queue
 * depth (calls in flight) the options or the file give is stored in qd_out. Returns an exit
 * code. */
int kvp_start_sdk(struct kvp_opts *o, uint32_t qd_out[KVP_MAX_DEV], char labels[][256]);

#endif
