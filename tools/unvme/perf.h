/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf: the benchmark's shared structures. perf.c sets a run up (options, devices,
 * namespaces, queue pairs, threads), perf_worker.c is the per-thread I/O loop, perf_report.c
 * turns the counters and histograms into text or JSON.
 */
#ifndef UNVME_TOOL_PERF_H
#define UNVME_TOOL_PERF_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "histogram.h"

#define PERF_MAX_TARGETS 64
#define PERF_MAX_CTRLRS 16
#define PERF_MAX_THREADS 256

/* A namespace under test, shared read-only by every thread. */
struct perf_target {
	const char *devid;
	uint64_t nuse;        /* blocks ever written (Identify NUSE) when the run started */
	struct unvme_ns *ns;
	uint32_t nsid;
	unsigned ctrlr;       /* index in perf_config.ctrlrs */
	uint32_t lba_size;
	uint32_t lbas_per_io; /* block size / LBA size */
	uint64_t nunits;      /* whole I/O-sized units in the namespace */
	bool zoned;           /* zone workloads (perf_zone.c): the zone geometry */
	uint64_t zone_size;   /* blocks */
	uint64_t zone_cap;    /* blocks */
	uint64_t nzones;
	/* --verify: one bit per unit with a command in flight, so that no two commands (of any
	 * thread) touch a block at once: a read racing the block's first write could see half of
	 * it (a buffered file copies without atomicity) and fail a block that is fine */
	_Atomic uint64_t *busy;
};

/* Counters of one thread for one target. */
struct perf_stats {
	uint64_t ios;           /* completed without error while measuring */
	uint64_t errors;        /* completed with an error status while measuring */
	uint64_t verify_errors; /* blocks whose stamp did not match (--verify reads) */
	uint64_t foreign;       /* of those, blocks with no stamp at all: data perf never wrote */
	int first_status;       /* the first error status seen, library form */
	uint64_t first_bad_lba; /* the first block that failed verification */
	uint64_t seq_next;      /* next unit for sequential workloads */
	/* I/Os reaped in one poll share its timestamp, those submitted together share theirs:
	 * a run of completions with the same submission time is recorded in one go. */
	uint64_t run_submit_ts;
	uint64_t run_n;
	struct lat_histogram hist; /* latency in TSC ticks; stays the last member (reset_stats) */
};

struct perf_qpair;

/* One outstanding I/O: its buffer and what was asked. Preallocated, reused forever. */
struct perf_slot {
	struct perf_qpair *q;
	uint8_t *buf;
	uint64_t submit_ts;
	uint64_t slba;
	uint32_t target;
	bool is_read;
	/* zone workloads (perf_zone.c) */
	uint8_t op;           /* PERF_OP_DATA or PERF_OP_RESET */
	bool zone_dirty;      /* zone-write: old_zone waits for its reset */
	uint64_t zone;        /* the zone the command names */
	uint64_t zone_first, zone_stride, zwp, old_zone; /* zone-write: the slot's zones */
	uint64_t zindex;      /* zone-append: index among the thread's zones */
	bool waiting;         /* --unplug-at: parked until the device takes commands again */
};
#define PERF_OP_DATA  0
#define PERF_OP_RESET 1
#define PERF_PARKED   1 /* perf_zone_submit: the slot waits for a zone reset, nothing sent */

/* A thread's queue pair on one controller, with the targets on that controller. */
struct perf_qpair {
	struct perf_thread *t;
	struct unvme_qpair *qp;
	uint32_t targets[PERF_MAX_TARGETS];
	uint32_t ntargets;
	uint32_t next_target; /* round robin cursor */
	struct perf_slot *slots;
	uint32_t nslots;
	uint32_t outstanding;
	uint32_t parked;      /* --unplug-at: slots waiting for the device to come back */
	uint8_t *bufs;        /* DMA memory of all slots */
};

struct perf_config;
struct perf_zstream;

struct perf_thread {
	const struct perf_config *cfg;
	pthread_barrier_t *start; /* all threads begin together */
	unsigned index;
	int cpu;              /* -1: not pinned */
	pthread_t tid;
	uint64_t rng;         /* xorshift64 state */
	uint64_t poll_ts;     /* timestamp of the current poll's completions, 0 = not taken yet */
	bool measuring;       /* completions count */
	bool stopping;        /* completions are not resubmitted */
	struct perf_qpair qps[PERF_MAX_CTRLRS];
	unsigned nqps;
	struct perf_stats *stats; /* [cfg->ntargets] */
	uint64_t start_ts, end_ts; /* the measured period, ticks */
	/* CPU time at the ends of the measured period, ns: this thread's, and the process's
	 * (every thread, engine threads included) as this thread saw it */
	uint64_t cpu_start_ns, cpu_end_ns;
	uint64_t proc_start_ns, proc_end_ns;
	uint64_t submit_failures;
	int fatal;            /* a poll or submit failed: the library's result */
	char fatal_msg[256];
	uint32_t stuck;       /* I/Os that never completed after the run */
	uint64_t back_ns;     /* --unplug-at: first I/O completed after the re-insertion
			       * (CLOCK_MONOTONIC: TSCs of two cores need not agree) */
	struct perf_zstream *zstream; /* zone-append state (perf_zone.c) */
};

enum perf_workload {
	PERF_RANDREAD,
	PERF_RANDWRITE,
	PERF_READ,
	PERF_WRITE,
	PERF_RANDRW,
	PERF_ZONE_WRITE,  /* sequential writes at each zone's write pointer */
	PERF_ZONE_APPEND, /* Zone Append at full queue depth */
};

struct perf_config {
	enum perf_workload workload;
	const char *workload_name;
	bool random;
	bool mixed;
	uint64_t read_threshold; /* randrw: read when (rand & 0xffffffff) < this */
	bool all_reads;          /* read or randread */
	bool zoned;              /* zone-write or zone-append (perf_zone.c) */
	uint32_t mix;
	uint64_t block_size;
	uint32_t qd;
	uint32_t seconds;
	uint32_t warmup;
	bool verify;
	bool lat_table;
	enum unvme_fmt fmt;
	struct unvme_ctrlr *ctrlrs[PERF_MAX_CTRLRS];
	const char *ctrlr_names[PERF_MAX_CTRLRS];
	unsigned nctrlrs;
	struct perf_target targets[PERF_MAX_TARGETS];
	unsigned ntargets;
	int cpus[PERF_MAX_THREADS];
	unsigned nthreads;
	bool pinned;
	double tsc_hz;
	bool hotplug;            /* --unplug-at / --plug-after (perf_hotplug.c) */
	bool plain;              /* none of verify, zoned, hotplug, mixed: perf_worker.c's
				  * short path, which tests one flag per I/O instead of five */
	uint32_t unplug_at_ms, plug_after_ms;
};

/* Set from the SIGINT handler: threads stop measuring and drain. */
extern volatile sig_atomic_t perf_interrupted;

/* perf_worker.c */
void *perf_thread_main(void *arg);

/* perf_report.c: prints the results; returns the exit code they call for. */
int perf_report(const struct perf_config *cfg, struct perf_thread *threads);
/* perf_zone.c: zone workloads on one zoned namespace. prepare checks the request against the
 * zone geometry and resets every zone; submit sends the slot's next command (PERF_PARKED:
 * nothing sent, the slot waits in perf_zone_unpark's list); done updates the zone state and
 * says whether the completion was a counted data I/O (not a reset). */
int perf_zone_prepare(struct cli_args *a, struct perf_config *cfg);
int perf_zone_thread_init(struct perf_thread *t);
void perf_zone_thread_free(struct perf_thread *t);
int perf_zone_submit(struct perf_qpair *q, struct perf_slot *s, uint64_t now, unvme_cmd_cb done);
bool perf_zone_done(struct perf_slot *s, const struct nvme_cqe *cpl, struct perf_stats *st);
struct perf_slot *perf_zone_unpark(struct perf_thread *t);

/* perf_hotplug.c: pulls the emulated devices out during the run and puts them back. */
struct perf_hotplug_result {
	int rc;                 /* 0, or the failed unplug / plug */
	char msg[320];
	bool done;              /* pulled out and put back */
	uint64_t start_ns, out_ns, back_ns, attached_ns; /* CLOCK_MONOTONIC */
};
extern struct perf_hotplug_result perf_hotplug;
/* Set when the re-insertion starts: a command that succeeds from then on was served by the
 * card put back (the one pulled out had given everything back by then). */
extern _Atomic bool perf_plugging;
int perf_hotplug_check(struct cli_args *a, struct perf_config *cfg);
int perf_hotplug_start(const struct perf_config *cfg);
void perf_hotplug_join(void);

/* perf_fill.c: writes every block of every target once (--fill). 0, or an error with err set. */
int perf_fill(const struct perf_config *cfg, char *err, size_t errlen);

#endif
