/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running one db_bench workload over the KV SDK: its threads (each does what a db_bench
 * thread does: --num writes, --reads reads), their statistics merged as db_bench merges them,
 * and db_bench's report line and histogram block.
 */
#ifndef KVDB_RUN_H
#define KVDB_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "kv_keys.h"
#include "kv_types.h"
#include "kvdb_flags.h"
#include "kvdb_hist.h"

enum kvdb_bench {
	KVDB_FILLSEQ,
	KVDB_FILLRANDOM,
	KVDB_OVERWRITE,
	KVDB_READRANDOM,
	KVDB_READSEQ,
	KVDB_READWHILEWRITING,
	KVDB_DELETERANDOM,
};

/* The benchmark called name (db_bench's spelling); false when there is none. */
bool kvdb_bench_find(const char *name, size_t len, enum kvdb_bench *out);
const char *kvdb_bench_name(enum kvdb_bench b);

struct kvdb_ctx {
	const struct kvdb_flags *f;
	uint64_t handle[NR_MAX_SSD]; /* key i lives on device i % ndev */
	int ndev;
	struct kvt_keyspec ks;
	struct kvt_valuespec vs;
	uint64_t seed;             /* the base; each run and thread derive their own */
	unsigned runs;             /* benchmarks started so far (seeds differ per run) */
};

/* What one thread (or all of them, merged) did. */
struct kvdb_stats {
	uint64_t done;
	uint64_t bytes;
	uint64_t found;            /* reads: keys that existed */
	uint64_t start_ns, finish_ns;
	double seconds;            /* summed over threads: db_bench's micros/op is per thread */
	uint64_t last_ns;          /* when the previous operation finished (histogram) */
	int error;                 /* kv_result of the first failed call, 0 if none */
	const char *error_call;
	uint64_t error_key;
	bool bad_data;             /* a read returned other bytes than were stored */
	struct kvdb_hist hist;
};

/* Runs benchmark b with ctx->f->threads threads and prints its report. Returns an exit code:
 * 0, 1 when a call failed or data did not verify (said on stderr), 3 when threads or memory
 * could not be had. */
int kvdb_run(struct kvdb_ctx *ctx, enum kvdb_bench b);

#endif
