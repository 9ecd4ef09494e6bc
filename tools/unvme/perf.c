/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf: checks the options against the devices, builds every thread's queue pairs and
 * I/O slots before the clock starts, runs the threads, and hands the counters to the report.
 * Everything that can be wrong with a request (block size, queue depth, namespace, CPU) is
 * found here and named, so the I/O loop has no checks to make.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/clock.h"
#include "perf.h"
#include "progress.h"
#include "tsc.h"

#define PERF_MIN_RING 64u /* queue entries at least, where the device allows */

#define PERF_IO_TIMEOUT_MS 30000

volatile sig_atomic_t perf_interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	perf_interrupted = 1;
}

static int parse_workload(struct cli_args *a, struct perf_config *cfg)
{
	static const struct {
		const char *name;
		enum perf_workload w;
		bool random, reads, mixed, zoned;
	} w[] = {
		{ "randread", PERF_RANDREAD, true, true, false, false },
		{ "randwrite", PERF_RANDWRITE, true, false, false, false },
		{ "read", PERF_READ, false, true, false, false },
		{ "write", PERF_WRITE, false, false, false, false },
		{ "randrw", PERF_RANDRW, true, false, true, false },
		{ "zone-write", PERF_ZONE_WRITE, false, false, false, true },
		{ "zone-append", PERF_ZONE_APPEND, false, false, false, true },
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (strcmp(a->workload, w[i].name) == 0) {
			cfg->workload = w[i].w;
			cfg->workload_name = w[i].name;
			cfg->random = w[i].random;
			cfg->all_reads = w[i].reads;
			cfg->mixed = w[i].mixed;
			cfg->zoned = w[i].zoned;
			return EXIT_OK;
		}
	}
	return cli_fail(a->cmd, EXIT_USAGE,
			"invalid value '%s' for --workload (-w): randread, randwrite, read, write, randrw, "
			"zone-write or zone-append",
			a->workload);
}

/* "0,1", "0-3", "2-3,6": each CPU once, and only CPUs this process may run on. */
static int parse_cores(struct cli_args *a, struct perf_config *cfg)
{
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return cli_fail(a->cmd, EXIT_HOST, "sched_getaffinity: %s", strerror(errno));
	if (!a->cores) {
		cfg->nthreads = 1;
		cfg->cpus[0] = -1;
		cfg->pinned = false;
		return EXIT_OK;
	}
	cfg->pinned = true;
	const char *p = a->cores;
	while (*p) {
		char *end;
		uint64_t lo, hi;
		errno = 0;
		if (*p < '0' || *p > '9')
			goto bad;
		lo = strtoull(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			hi = strtoull(p, &end, 10);
		}
		if (errno || hi < lo || (*end && *end != ','))
			goto bad;
		for (uint64_t c = lo; c <= hi; c++) {
			if (c >= CPU_SETSIZE || !CPU_ISSET((int)c, &allowed))
				return cli_fail(a->cmd, EXIT_USAGE,
						"invalid value '%s' for --cores (-c): CPU %llu is not "
						"available to this process (%d CPUs allowed)", a->cores,
						(unsigned long long)c, CPU_COUNT(&allowed));
			for (unsigned i = 0; i < cfg->nthreads; i++)
				if (cfg->cpus[i] == (int)c)
					return cli_fail(a->cmd, EXIT_USAGE,
							"invalid value '%s' for --cores (-c): CPU %llu "
							"given twice", a->cores, (unsigned long long)c);
			if (cfg->nthreads == PERF_MAX_THREADS)
				return cli_fail(a->cmd, EXIT_USAGE, "--cores: at most %d CPUs",
						PERF_MAX_THREADS);
			cfg->cpus[cfg->nthreads++] = (int)c;
		}
		p = *end ? end + 1 : end;
	}
	if (cfg->nthreads == 0)
		goto bad;
	return EXIT_OK;
bad:
	return cli_fail(a->cmd, EXIT_USAGE,
			"invalid value '%s' for --cores (-c): expected CPU numbers such as 0,1 or 0-3",
			a->cores);
}

/* Adds a namespace of controller ci as a target, checking the block size against it. */
static int add_target(struct cli_args *a, struct perf_config *cfg, unsigned ci, uint32_t nsid)
{
	struct unvme_ctrlr *c = cfg->ctrlrs[ci];
	const char *dev = cfg->ctrlr_names[ci];
	struct unvme_ns *ns = unvme_ctrlr_ns(c, nsid);
	if (!ns) {
		char active[256] = "";
		size_t off = 0;
		for (uint32_t id = unvme_ctrlr_first_nsid(c); id && off < sizeof(active) - 16;
		     id = unvme_ctrlr_next_nsid(c, id))
			off += (size_t)snprintf(active + off, sizeof(active) - off, "%s%u", off ? ", " : "", id);
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%s' for --namespace-id (-n): %s has no active namespace %u "
				"(active: %s)", a->nsid_list ? a->nsid_list : "", dev, nsid,
				off ? active : "none");
	}
	if (unvme_ns_csi(ns) == NVME_CSI_KV)
		return cli_fail(a->cmd, EXIT_USAGE,
				"%s namespace %u is a key-value namespace (the NVMe KV command set): perf "
				"reads and writes blocks (kv_perf and sdk_perf drive key-value namespaces)",
				dev, nsid);
	if (cfg->ntargets == PERF_MAX_TARGETS)
		return cli_fail(a->cmd, EXIT_USAGE, "at most %d namespaces per run", PERF_MAX_TARGETS);
	uint32_t lba = unvme_ns_lba_size(ns);
	if (cfg->block_size % lba != 0)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --block-size (-b): not a multiple of the %u-byte "
				"LBA size of %s namespace %u", (unsigned long long)cfg->block_size, lba, dev,
				nsid);
	if (cfg->block_size > unvme_ctrlr_max_xfer(c))
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --block-size (-b): %s moves at most %u bytes per "
				"command", (unsigned long long)cfg->block_size, dev, unvme_ctrlr_max_xfer(c));
	uint64_t nunits = unvme_ns_nlbas(ns) / (cfg->block_size / lba);
	if (nunits == 0)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%llu' for --block-size (-b): larger than %s namespace %u",
				(unsigned long long)cfg->block_size, dev, nsid);
	struct perf_target *tg = &cfg->targets[cfg->ntargets++];
	tg->devid = dev;
	tg->ns = ns;
	tg->nsid = nsid;
	tg->ctrlr = ci;
	tg->lba_size = lba;
	tg->lbas_per_io = (uint32_t)(cfg->block_size / lba);
	tg->nunits = nunits;
	return EXIT_OK;
}

/* --verify: the in-flight bitmaps (perf_target.busy). A namespace needs room for every
 * command in flight on distinct units, twice over, or picking a free one could stall. */
static int verify_prepare(struct cli_args *a, struct perf_config *cfg)
{
	uint64_t in_flight = (uint64_t)cfg->qd * cfg->nthreads;
	for (unsigned k = 0; k < cfg->ntargets; k++) {
		struct perf_target *tg = &cfg->targets[k];
		if (tg->nunits < 2 * in_flight)
			return cli_fail(a->cmd, EXIT_USAGE,
					"--verify: %s namespace %u has %llu I/O units, fewer than twice the "
					"%llu commands in flight (queue depth x threads): lower -q",
					tg->devid, tg->nsid, (unsigned long long)tg->nunits,
					(unsigned long long)in_flight);
		tg->busy = calloc((tg->nunits + 63) / 64, sizeof(uint64_t));
		if (!tg->busy)
			return cli_fail(a->cmd, EXIT_HOST, "--verify: no memory for the in-flight map of "
					"%llu units", (unsigned long long)tg->nunits);
	}
	return EXIT_OK;
}

static int open_targets(struct cli_args *a, struct perf_config *cfg)
{
	/* the positional device counts as one more -d when given explicitly */
	const char *devs[CLI_MAX_LIST + 1];
	unsigned ndevs = 0;
	if (!a->perf_ndevs || a->positional != cli_default_device)
		devs[ndevs++] = a->positional;
	for (unsigned i = 0; i < a->perf_ndevs; i++)
		devs[ndevs++] = a->perf_devs[i];
	for (unsigned d = 0; d < ndevs; d++) {
		for (unsigned k = 0; k < cfg->nctrlrs; k++)
			if (strcmp(cfg->ctrlr_names[k], devs[d]) == 0)
				return cli_fail(a->cmd, EXIT_USAGE, "device %s given twice", cli_echo(devs[d]));
		if (cfg->nctrlrs == PERF_MAX_CTRLRS)
			return cli_fail(a->cmd, EXIT_USAGE, "at most %d devices", PERF_MAX_CTRLRS);
		struct unvme_ctrlr *c;
		int rc = cli_open_devid(a->cmd, devs[d], &c);
		if (rc)
			return rc;
		unsigned ci = cfg->nctrlrs++;
		cfg->ctrlrs[ci] = c;
		cfg->ctrlr_names[ci] = devs[d];

		/* CAP.MQES+1 entries per queue, one always empty */
		uint32_t max_qd = NVME_CAP_MQES(unvme_ctrlr_cap(c));
		if (cfg->qd > max_qd)
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%u' for --queue-depth (-q): a queue of %s holds at "
					"most %u outstanding commands (CAP.MQES+1 = %u entries, one stays "
					"empty)", cfg->qd, devs[d], max_qd, max_qd + 1);
		if (cfg->nthreads > unvme_ctrlr_max_io_queues(c))
			return cli_fail(a->cmd, EXIT_USAGE,
					"invalid value '%s' for --cores (-c): %u threads need %u queue pairs "
					"on %s, which grants %u", a->cores ? a->cores : "", cfg->nthreads, cfg->nthreads,
					devs[d], unvme_ctrlr_max_io_queues(c));

		if (!a->nsid_list || strcmp(a->nsid_list, "all") == 0) {
			for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
				rc = add_target(a, cfg, ci, id);
				if (rc)
					return rc;
			}
			continue;
		}
		const char *p = a->nsid_list;
		while (*p) {
			char *end;
			uint64_t v;
			char word[32];
			size_t len = strcspn(p, ",");
			if (len == 0 || len >= sizeof(word))
				goto bad;
			memcpy(word, p, len);
			word[len] = '\0';
			if (!cli_parse_u64(word, &v) || v == 0 || v > UINT32_MAX)
				goto bad;
			rc = add_target(a, cfg, ci, (uint32_t)v);
			if (rc)
				return rc;
			end = (char *)p + len;
			p = *end ? end + 1 : end;
		}
	}
	if (cfg->ntargets == 0)
		return cli_fail(a->cmd, EXIT_USAGE, "no namespace to test: the devices have no active "
				"namespace");
	return EXIT_OK;
bad:
	return cli_fail(a->cmd, EXIT_USAGE,
			"invalid value '%s' for --namespace-id (-n): expected namespace ids such as 1 or 1,2",
			a->nsid_list);
}

/*
 * Reads of blocks that were never written may measure nothing: a thin emulated memory
 * namespace (one larger than its creation could fault in) answers them from the kernel's zero
 * page, an SSD from its mapping table without touching flash. Identify Namespace NUSE says how
 * many blocks were written; a read workload over a namespace with fewer gets a warning (the
 * run goes on: it may be what was meant).
 */
static void check_written(const struct perf_config *cfg, struct perf_target *tg)
{
	tg->nuse = unvme_ns_nlbas(tg->ns);
	if (unvme_ns_csi(tg->ns) != NVME_CSI_NVM)
		return;
	struct nvme_id_ns *id = unvme_dma_zalloc(4096, 4096);
	if (!id)
		return;
	if (unvme_identify(cfg->ctrlrs[tg->ctrlr], NVME_CNS_NS, tg->nsid, 0, id) == 0 &&
	    id->nuse < id->nsze)
		tg->nuse = id->nuse;
	unvme_dma_free(id);
	uint64_t nlbas = unvme_ns_nlbas(tg->ns);
	if (!(cfg->all_reads || cfg->mixed) || tg->nuse >= nlbas)
		return;
	fprintf(stderr,
		"unvme: perf: warning: %s namespace %u: %llu of its %llu blocks were ever written "
		"(Identify Namespace NUSE), so about %.0f%% of the reads hit never-written blocks, "
		"which may move no data (a thin memory namespace reads them from the kernel's zero "
		"page, an SSD from its mapping table) and inflate the figures: add --fill to write "
		"every block first\n",
		tg->devid, tg->nsid, (unsigned long long)tg->nuse, (unsigned long long)nlbas,
		100.0 * (double)(nlbas - tg->nuse) / (double)nlbas);
}

static void free_threads(struct perf_config *cfg, struct perf_thread *threads)
{
	for (unsigned i = 0; i < cfg->nthreads; i++) {
		struct perf_thread *t = &threads[i];
		for (unsigned k = 0; k < t->nqps; k++) {
			struct perf_qpair *q = &t->qps[k];
			if (q->qp)
				unvme_qpair_destroy(q->qp);
			if (q->bufs)
				unvme_dma_free(q->bufs);
			free(q->slots);
		}
		perf_zone_thread_free(t);
		free(t->stats);
	}
	free(threads);
}

/* Queue pairs, slots and buffers for every thread, all before the clock starts. */
static int build_threads(struct cli_args *a, struct perf_config *cfg, struct perf_thread **out)
{
	struct perf_thread *threads = calloc(cfg->nthreads, sizeof(*threads));
	if (!threads)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	size_t stride = (cfg->block_size + 4095) & ~(size_t)4095;
	for (unsigned i = 0; i < cfg->nthreads; i++) {
		struct perf_thread *t = &threads[i];
		t->cfg = cfg;
		t->index = i;
		t->cpu = cfg->cpus[i];
		t->rng = 0x9e3779b97f4a7c15ull * (i + 1) ^ tsc_now();
		if (!t->rng)
			t->rng = 1;
		t->stats = calloc(cfg->ntargets, sizeof(*t->stats));
		if (!t->stats)
			goto oom;
		for (unsigned k = 0; k < cfg->ntargets; k++) {
			lat_hist_init(&t->stats[k].hist);
			/* sequential runs start spread out so threads do not read the same blocks */
			t->stats[k].seq_next = cfg->targets[k].nunits * i / cfg->nthreads;
		}
		for (unsigned ci = 0; ci < cfg->nctrlrs; ci++) {
			struct perf_qpair *q = &t->qps[t->nqps++];
			q->t = t;
			for (unsigned k = 0; k < cfg->ntargets; k++)
				if (cfg->targets[k].ctrlr == ci)
					q->targets[q->ntargets++] = k;
			/* at least 64 entries where the device allows: with room in the CQ the
			 * driver writes its head doorbell only every few polls at low queue depths */
			uint32_t entries = NVME_CAP_MQES(unvme_ctrlr_cap(cfg->ctrlrs[ci])) + 1;
			uint32_t depth = cfg->qd + 1;
			if (depth < PERF_MIN_RING)
				depth = entries < PERF_MIN_RING ? (entries > depth ? entries : depth)
								: PERF_MIN_RING;
			struct unvme_qpair_opts qo = { .depth = depth, .timeout_ms = PERF_IO_TIMEOUT_MS };
			int rc = unvme_qpair_create(cfg->ctrlrs[ci], &qo, &q->qp);
			if (rc) {
				q->qp = NULL;
				free_threads(cfg, threads);
				return cli_fail(a->cmd, rc > 0 ? EXIT_NVME : EXIT_HOST,
						"cannot create queue pair %u on %s: %s", i + 1,
						cfg->ctrlr_names[ci],
						rc > 0 ? unvme_status_str(rc, 0) : unvme_errmsg());
			}
			q->nslots = cfg->qd;
			q->slots = calloc(q->nslots, sizeof(*q->slots));
			q->bufs = unvme_dma_zalloc(stride * q->nslots, 4096);
			if (!q->slots || !q->bufs)
				goto oom;
			for (uint32_t s = 0; s < q->nslots; s++) {
				q->slots[s].q = q;
				q->slots[s].buf = q->bufs + stride * s;
			}
		}
		if (cfg->zoned && perf_zone_thread_init(t) != 0)
			goto oom;
	}
	*out = threads;
	return EXIT_OK;
oom:
	free_threads(cfg, threads);
	return cli_fail(a->cmd, EXIT_HOST, "out of memory for %u slots of %llu bytes", cfg->qd,
			(unsigned long long)cfg->block_size);
}

static int run_threads(struct cli_args *a, struct perf_config *cfg, struct perf_thread *threads)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, cfg->nthreads);
	unsigned started = 0;
	int rc = EXIT_OK;
	for (unsigned i = 0; i < cfg->nthreads; i++) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		if (threads[i].cpu >= 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(threads[i].cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		threads[i].start = &start;
		int err = pthread_create(&threads[i].tid, &attr, perf_thread_main, &threads[i]);
		pthread_attr_destroy(&attr);
		if (err) {
			rc = cli_fail(a->cmd, EXIT_HOST, "cannot start thread for CPU %d: %s",
				      threads[i].cpu, strerror(err));
			break;
		}
		started++;
	}
	if (started < cfg->nthreads) {
		/* the barrier waits for everyone: stand in for the threads that did not start */
		perf_interrupted = 1;
		for (unsigned i = started; i < cfg->nthreads; i++)
			pthread_barrier_wait(&start);
	}
	/* the workers keep time themselves; the main thread only shows how far the run is (on
	 * a terminal) while it waits for them */
	struct progress prog;
	uint64_t t0 = mono_ns();
	progress_start(&prog, "perf", cfg->warmup ? "warmup + run" : "run",
		       (uint64_t)cfg->warmup + cfg->seconds, "s");
	for (unsigned i = 0; i < started; i++) {
		for (;;) {
			struct timespec until = clock_deadline_ms(CLOCK_REALTIME, 250);
			if (pthread_timedjoin_np(threads[i].tid, NULL, &until) != ETIMEDOUT)
				break;
			uint64_t s = (mono_ns() - t0) / 1000000000ull;
			progress_update(&prog, s < prog.total ? s : prog.total);
		}
	}
	progress_end(&prog);
	pthread_barrier_destroy(&start);
	return rc;
}

int cmd_perf(struct cli_args *a)
{
	struct perf_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	int rc = parse_workload(a, cfg);
	if (rc)
		goto out;
	if (a->mix > 100) {
		rc = cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --rwmixread (-M): 0..100", a->mix);
		goto out;
	}
	if (a->block_size == 0 || a->block_size % 512 != 0 || a->block_size > (1u << 30)) {
		rc = cli_fail(a->cmd, EXIT_USAGE,
			      "invalid value '%llu' for --block-size (-b): a non-zero multiple of 512 bytes",
			      (unsigned long long)a->block_size);
		goto out;
	}
	if (a->qd == 0 || a->qd > 65535) {
		rc = cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --queue-depth (-q): 1..65535",
			      a->qd);
		goto out;
	}
	if (a->seconds == 0 || a->seconds > 86400 || a->warmup > 86400) {
		rc = cli_fail(a->cmd, EXIT_USAGE, "invalid value for --time (-t) or --warmup: "
			      "1..86400 seconds of measurement");
		goto out;
	}
	cfg->mix = a->mix;
	cfg->read_threshold = (uint64_t)a->mix * 0x100000000ull / 100;
	cfg->block_size = a->block_size;
	cfg->qd = a->qd;
	cfg->seconds = a->seconds;
	cfg->warmup = a->warmup;
	cfg->verify = a->verify;
	cfg->lat_table = a->lat_table;
	cfg->fmt = a->fmt;
	rc = parse_cores(a, cfg);
	if (rc)
		goto out;
	rc = open_targets(a, cfg);
	if (rc)
		goto out;
	cfg->tsc_hz = tsc_hz();
	if (cfg->zoned) {
		if (a->fill) {
			rc = cli_fail(a->cmd, EXIT_USAGE, "--fill does not apply to zone workloads, "
				      "which start from empty zones");
			goto out;
		}
		rc = perf_zone_prepare(a, cfg);
		if (rc)
			goto out;
	}
	if (a->fill) {
		char why[512];
		int frc = perf_fill(cfg, why, sizeof(why));
		if (frc != 0) {
			rc = cli_fail(a->cmd, frc > 0 ? EXIT_NVME : EXIT_HOST, "%s", why);
			goto out;
		}
	}

	rc = perf_hotplug_check(a, cfg);
	if (rc)
		goto out;
	for (unsigned k = 0; k < cfg->ntargets; k++)
		check_written(cfg, &cfg->targets[k]);
	if (cfg->verify && !cfg->zoned) {
		rc = verify_prepare(a, cfg);
		if (rc)
			goto out;
	}

	/* no verification, zones, hot-plug or read/write mix: the worker's short path */
	cfg->plain = !cfg->verify && !cfg->zoned && !cfg->hotplug && !cfg->mixed;
	struct perf_thread *threads = NULL;
	rc = build_threads(a, cfg, &threads);
	if (rc)
		goto out;

	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	perf_interrupted = 0;
	sigaction(SIGINT, &sa, &old);
	int hrc = perf_hotplug_start(cfg);
	if (hrc)
		rc = cli_fail(a->cmd, EXIT_HOST, "cannot start the hot-plug thread: %s", strerror(-hrc));
	else
		rc = run_threads(a, cfg, threads);
	perf_hotplug_join();
	sigaction(SIGINT, &old, NULL);
	if (rc == EXIT_OK)
		rc = perf_report(cfg, threads);
	free_threads(cfg, threads);
out:
	for (unsigned k = 0; k < cfg->ntargets; k++)
		free((void *)cfg->targets[k].busy);
	free(cfg);
	return rc;
}
