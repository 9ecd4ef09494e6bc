/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One phase of a KV benchmark: the same operation (or a blend) on n keys of one device,
 * synchronous (one call at a time) or asynchronous (qd calls in flight, callbacks count the
 * completions), with the per-I/O latency of every call in a histogram.
 */
#ifndef KVTOOLS_PHASE_H
#define KVTOOLS_PHASE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "histogram.h"
#include "kv_keys.h"

enum kvt_op {
	KVT_STORE,
	KVT_RETRIEVE,
	KVT_DELETE,
	KVT_EXIST,
	KVT_BLEND, /* each I/O a store, retrieve or delete at random (seeded) */
};

const char *kvt_op_name(enum kvt_op op);

struct kvt_phase {
	/* what to do */
	enum kvt_op op;
	uint64_t handle;
	const struct kvt_keyspec *ks;
	const struct kvt_valuespec *vs;
	const uint64_t *order;  /* key index of the n-th I/O; NULL: the n-th key */
	const uint8_t *op_list; /* blend: the operation of the n-th I/O (KVT_STORE, _RETRIEVE,
				 * _DELETE); NULL: each drawn at random (seeded) */
	bool driver;            /* the driver-level calls of kvnvme.h on the queue of core qid,
				 * instead of the kv_* calls */
	int qid;
	uint64_t n;
	bool async;
	uint32_t qd;            /* async: calls kept in flight */
	bool verify;            /* retrieve: compare the data with what store wrote */
	uint32_t offset;        /* retrieve: value offset */
	bool missing_ok;        /* KV_ERR_NOT_EXIST_KEY is counted, not an error */
	uint64_t seed;          /* blend */
	bool progress;          /* a progress line on a terminal (one phase at a time) */

	/* Async: completion threads write the results while the submitter reads the above on
	 * another core; a line of space keeps them from sharing one (false sharing would cost a
	 * cache miss per call, measured as the SDK's). */
	char separation_[64];

	/* results */
	uint64_t ops;           /* calls completed */
	uint64_t errors;        /* calls that failed (not counting missing_ok not-found) */
	uint64_t not_found;     /* KV_ERR_NOT_EXIST_KEY answers */
	uint64_t verify_errors;
	int first_error;        /* kv_result of the first failure */
	uint64_t first_error_key;
	uint64_t first_bad_key; /* first verification failure */
	uint64_t bytes;         /* key and value bytes carried */
	/* per operation (store, retrieve, delete: a blend's mix) and per value size (the
	 * i mod nsizes-th): calls that went through, and their value bytes */
	uint64_t op_ops[3];
	uint64_t op_value_bytes[3];
	uint64_t op_size_ops[3][KVT_MAX_VALUE_SIZES];
	struct timespec start_wall, end_wall;
	uint64_t start_ns, end_ns; /* monotonic */
	struct lat_histogram hist; /* per-I/O latency, TSC ticks */
};

/* Runs the phase; 0, or -1 with a message (prog: ...) when it could not start (memory). */
int kvt_phase_run(struct kvt_phase *p, const char *prog);

#endif
