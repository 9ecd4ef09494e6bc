/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_db_bench's command line: db_bench's flag names, forms and defaults for the flags that
 * apply to a KV device (gflags forms: --flag=value, -flag=value, --flag value; booleans also
 * --flag and --noflag), plus --json (an SDK configuration, as kv_sdk_init(KV_SDK_INIT_FROM_JSON)
 * reads it) and --device (one device without a configuration file).
 */
#ifndef KVDB_FLAGS_H
#define KVDB_FLAGS_H

#include <stdbool.h>
#include <stdint.h>

#include "kv_exit.h" /* the exit codes, the other KV tools' */

#define KVDB_DEFAULT_BENCHMARKS \
	"fillseq,fillrandom,overwrite,readrandom,readseq,readwhilewriting,deleterandom"
#define KVDB_DEFAULT_DEVICE "emu://kvdbbench?ns=kv:1G"


struct kvdb_flags {
	const char *benchmarks;
	int64_t num;
	int32_t key_size;
	int32_t value_size;
	int32_t threads;
	int64_t reads;      /* < 0: num */
	bool histogram;
	int64_t seed;       /* 0: from the clock */
	const char *json;   /* SDK configuration file; NULL: device */
	const char *device;
};

/* Fills f from the command line (defaults first). Returns -1 to go on, else the exit code
 * (0 after --help or --version, 2 after a message naming the bad flag). */
int kvdb_flags_parse(struct kvdb_flags *f, int argc, char **argv);

#endif
