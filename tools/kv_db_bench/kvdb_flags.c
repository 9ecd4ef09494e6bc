/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing kv_db_bench's gflags-style command line (kvdb_flags.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kv_types.h"
#include "kvdb_flags.h"

#ifndef UNVME_VERSION
#define UNVME_VERSION "unknown"
#endif

#define PROG "kv_db_bench"

enum kind { K_STR, K_I64, K_I32, K_BOOL };

struct flag {
	const char *name;
	enum kind kind;
	size_t off;
	int64_t min, max;
	const char *help;
};

#define F(n, k, mn, mx, h) { #n, k, offsetof(struct kvdb_flags, n), mn, mx, h }
static const struct flag flags[] = {
	F(benchmarks, K_STR, 0, 0, "comma-separated list of benchmarks to run in order"),
	F(num, K_I64, 1, 1000000000, "number of key/values to place in the store"),
	F(key_size, K_I32, KV_MIN_KEY_LEN, KV_MAX_KEY_LEN, "size of each key (4..255)"),
	F(value_size, K_I32, 0, KV_MAX_IO_VALUE_LEN, "size of each value (0..2097152)"),
	F(threads, K_I32, 1, 64, "number of concurrent threads to run (1..64)"),
	F(reads, K_I64, -1, 1000000000, "number of read operations to do; -1: num"),
	F(histogram, K_BOOL, 0, 1, "print a histogram of operation timings"),
	F(seed, K_I64, 0, INT64_MAX, "seed base for random keys; 0: derived from the time"),
	F(json, K_STR, 0, 0, "SDK JSON configuration (kv_sdk_init); keys spread over its devices"),
	F(device, K_STR, 0, 0, "device id when there is no --json (emu:// URI, alias, PCI address)"),
};
#undef F

static void usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [--flag=value ...]\n"
		     "  RocksDB db_bench's workloads over the uNVMe KV SDK, with db_bench's flags and "
		     "output.\n\n");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		fprintf(out, "  --%-11s %s\n", flags[i].name, flags[i].help);
	fprintf(out, "\n  benchmarks: fillseq fillrandom overwrite readrandom readseq "
		     "readwhilewriting deleterandom\n"
		     "  defaults: --benchmarks=" KVDB_DEFAULT_BENCHMARKS "\n"
		     "            --num=1000000 --key_size=16 --value_size=100 --threads=1 --reads=-1\n"
		     "            --histogram=0 --seed=0 --device=" KVDB_DEFAULT_DEVICE "\n\n"
		     "exit codes: 0 success, 1 a call failed or a read returned wrong data, 2 usage "
		     "error,\n3 the SDK could not be started (device or configuration)\n");
}

static int bad(const char *name, const char *val, const char *why)
{
	fprintf(stderr, PROG ": invalid value '%s' for --%s: %s (see " PROG " --help)\n", val, name,
		why);
	return KVT_EXIT_USAGE;
}

static int set(struct kvdb_flags *f, const struct flag *fl, const char *val)
{
	char *field = (char *)f + fl->off;
	if (fl->kind == K_STR) {
		if (!*val)
			return bad(fl->name, val, "expected a non-empty string");
		*(const char **)field = val;
		return -1;
	}
	if (fl->kind == K_BOOL) {
		static const char *yes[] = { "1", "true", "t", "yes", "y" };
		static const char *no[] = { "0", "false", "f", "no", "n" };
		for (int i = 0; i < 5; i++) {
			if (strcasecmp(val, yes[i]) == 0) {
				*(bool *)field = true;
				return -1;
			}
			if (strcasecmp(val, no[i]) == 0) {
				*(bool *)field = false;
				return -1;
			}
		}
		return bad(fl->name, val, "expected a boolean (1, 0, true, false)");
	}
	char *end;
	errno = 0;
	long long v = strtoll(val, &end, 10);
	char why[96];
	snprintf(why, sizeof(why), "expected an integer %lld..%lld", (long long)fl->min,
		 (long long)fl->max);
	if (!*val || errno || *end || v < fl->min || v > fl->max)
		return bad(fl->name, val, why);
	if (fl->kind == K_I32)
		*(int32_t *)field = (int32_t)v;
	else
		*(int64_t *)field = v;
	return -1;
}

static const struct flag *find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
			return &flags[i];
	return NULL;
}

int kvdb_flags_parse(struct kvdb_flags *f, int argc, char **argv)
{
	*f = (struct kvdb_flags){
		.benchmarks = KVDB_DEFAULT_BENCHMARKS,
		.num = 1000000,
		.key_size = 16,
		.value_size = 100,
		.threads = 1,
		.reads = -1,
		.device = KVDB_DEFAULT_DEVICE,
	};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (arg[0] != '-' || arg[1] == '\0') {
			fprintf(stderr, PROG ": unexpected argument '%s': flags are --name=value "
					"(see " PROG " --help)\n", arg);
			return KVT_EXIT_USAGE;
		}
		const char *name = arg + (arg[1] == '-' ? 2 : 1);
		if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0) {
			usage(stdout);
			return KVT_EXIT_OK;
		}
		if (strcmp(name, "version") == 0) {
			printf(PROG " (uNVMe %s)\n", UNVME_VERSION);
			return KVT_EXIT_OK;
		}
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag *fl = find(name, len);
		if (!fl && !eq && len > 2 && strncmp(name, "no", 2) == 0) {
			/* gflags' --noflag: a boolean set to false */
			const struct flag *b = find(name + 2, len - 2);
			if (b && b->kind == K_BOOL) {
				*(bool *)((char *)f + b->off) = false;
				continue;
			}
		}
		if (!fl) {
			fprintf(stderr, PROG ": unknown flag '--%.*s' (see " PROG " --help)\n",
				(int)len, name);
			return KVT_EXIT_USAGE;
		}
		const char *val;
		if (eq) {
			val = eq + 1;
		} else if (fl->kind == K_BOOL) {
			val = "true";
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, PROG ": flag '--%s' needs a value (see " PROG " --help)\n",
				fl->name);
			return KVT_EXIT_USAGE;
		}
		int rc = set(f, fl, val);
		if (rc >= 0)
			return rc;
	}
	return -1;
}
