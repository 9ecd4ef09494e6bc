/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What sdk_perf, sdk_perf_async, sdk_iterate and sdk_iterate_async share: their options and
 * their run (start the SDK, store N pairs, retrieve and verify them or iterate over them,
 * delete them, report each phase). Each program is this with its mode fixed.
 */
#ifndef KVTOOLS_SDKBENCH_H
#define KVTOOLS_SDKBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "kv_exit.h"
#include "kv_phase.h"

#define KVT_DEFAULT_DEVICE "emu://sdkperf?ns=kv:1G"
/* the original sdk_perf's and sdk_perf_async's configuration files, read from the current
 * directory when neither -d nor -j is given and they exist */
#define KVT_SYNC_CONFIG "./kv_sdk_sync_config.json"
#define KVT_ASYNC_CONFIG "./kv_sdk_async_config.json"


struct kvt_bench {
	const char *prog;
	bool async;
	bool iterate;
	uint64_t n;
	uint32_t key_size;
	uint32_t value_size;
	const char *device;
	const char *json_config;
	bool json_is_default;      /* the original's ./kv_sdk_(a)sync_config.json */
	int ssd_type;              /* the configuration's (KV_TYPE_SSD without -j) */
	uint32_t qd;
	bool qd_given;
	bool json_out;
	uint32_t prefix;
	uint32_t bitmask;
};

/* Parses the command line; returns -1 to go on, else the exit code (help, usage error). */
int kvt_bench_parse(struct kvt_bench *b, int argc, char **argv);
/* The whole run; returns the exit code. */
int kvt_bench_main(struct kvt_bench *b);

/* kv_iterate_run.c: open an iterator on the stored keys, read it to the end, close it and
 * check every key 0..n-1 was seen exactly once. Prints (or adds to root) the iterator table
 * before and after and the outcome; adds the iterate-read phase (one operation per read) to
 * phases. Returns an exit code. */
struct json_object;
int kvt_iterate_run(const struct kvt_bench *b, uint64_t handle, const struct kvt_keyspec *ks,
		    struct json_object *root, struct json_object *phases);

#endif
