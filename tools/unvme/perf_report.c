/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unvme perf's results: per namespace and in total, IOPS, MiB/s, latency (average, min, max,
 * p50/p99/p99.9/p99.99, or the whole table with -L) and the CPU time per I/O, as a text table
 * or one JSON document with the same fields.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const double headline_pcts[] = { 50.0, 99.0, 99.9, 99.99 };
static const char *headline_names[] = { "p50", "p99", "p99.9", "p99.99" };
#define N_HEADLINE (sizeof(headline_pcts) / sizeof(headline_pcts[0]))

static const double table_pcts[] = { 1, 5, 10, 20, 30, 40, 50, 60, 70, 75, 80, 90, 95, 98, 99,
				     99.5, 99.9, 99.95, 99.99, 99.999, 99.9999 };
#define N_TABLE (sizeof(table_pcts) / sizeof(table_pcts[0]))

/* What one row of the report says. */
struct perf_row {
	char label[320];
	uint32_t nsid;       /* 0 for the total */
	uint64_t blocks, blocks_written; /* the namespace's size and NUSE at the start */
	uint64_t ios, errors, verify_errors, foreign;
	int first_status;
	uint64_t first_bad_lba;
	double iops;
	double mib_s;
	struct lat_histogram hist;
};

static double elapsed_s(const struct perf_config *cfg, const struct perf_thread *t)
{
	return (double)(t->end_ts - t->start_ts) / cfg->tsc_hz;
}

static double ticks_us(const struct perf_config *cfg, uint64_t ticks)
{
	return (double)ticks * 1e6 / cfg->tsc_hz;
}

/* Adds thread t's counters for target k to row r. */
static void add_stats(const struct perf_config *cfg, const struct perf_thread *t, unsigned k,
		      struct perf_row *r)
{
	const struct perf_stats *st = &t->stats[k];
	double secs = elapsed_s(cfg, t);
	r->ios += st->ios;
	if (st->errors && !r->errors)
		r->first_status = st->first_status;
	r->errors += st->errors;
	if (st->verify_errors && !r->verify_errors)
		r->first_bad_lba = st->first_bad_lba;
	r->verify_errors += st->verify_errors;
	r->foreign += st->foreign;
	if (secs > 0)
		r->iops += (double)st->ios / secs;
	lat_hist_merge(&r->hist, &st->hist);
}

static void finish_row(const struct perf_config *cfg, struct perf_row *r)
{
	r->mib_s = r->iops * (double)cfg->block_size / (1024.0 * 1024.0);
}

static json_object *row_json(const struct perf_config *cfg, const struct perf_row *r, bool total)
{
	json_object *o = json_object_new_object();
	if (!total) {
		json_object_object_add(o, "device", json_object_new_string(r->label));
		json_object_object_add(o, "nsid", json_object_new_int64(r->nsid));
		json_object_object_add(o, "blocks", json_object_new_int64((int64_t)r->blocks));
		json_object_object_add(o, "blocks_written",
				       json_object_new_int64((int64_t)r->blocks_written));
	}
	json_object_object_add(o, "ios", json_object_new_int64((int64_t)r->ios));
	json_object_object_add(o, "errors", json_object_new_int64((int64_t)r->errors));
	if (cfg->verify)
		json_object_object_add(o, "verify_errors",
				       json_object_new_int64((int64_t)r->verify_errors));
	if (cfg->verify)
		json_object_object_add(o, "verify_foreign", json_object_new_int64((int64_t)r->foreign));
	json_object_object_add(o, "iops", json_object_new_double(r->iops));
	json_object_object_add(o, "mib_per_s", json_object_new_double(r->mib_s));
	json_object *lat = json_object_new_object();
	bool any = r->hist.count > 0;
	json_object_object_add(lat, "avg", json_object_new_double(any ? lat_hist_mean(&r->hist) * 1e6 / cfg->tsc_hz : 0));
	json_object_object_add(lat, "min", json_object_new_double(any ? ticks_us(cfg, r->hist.min) : 0));
	json_object_object_add(lat, "max", json_object_new_double(any ? ticks_us(cfg, r->hist.max) : 0));
	for (size_t i = 0; i < N_HEADLINE; i++)
		json_object_object_add(lat, headline_names[i],
				       json_object_new_double(ticks_us(cfg, lat_hist_percentile(&r->hist,
											headline_pcts[i]))));
	json_object_object_add(o, "latency_us", lat);
	if (cfg->lat_table) {
		json_object *arr = json_object_new_array();
		for (size_t i = 0; i < N_TABLE; i++) {
			json_object *p = json_object_new_object();
			json_object_object_add(p, "percentile", json_object_new_double(table_pcts[i]));
			json_object_object_add(p, "latency_us",
					       json_object_new_double(ticks_us(cfg, lat_hist_percentile(
									 &r->hist, table_pcts[i]))));
			json_object_array_add(arr, p);
		}
		json_object_object_add(o, "percentiles", arr);
	}
	return o;
}

static void print_row(const struct perf_config *cfg, const struct perf_row *r, int width)
{
	bool any = r->hist.count > 0;
	printf("%-*s %12.2f %10.2f %10.2f %10.2f %10.2f", width, r->label, r->iops, r->mib_s,
	       any ? lat_hist_mean(&r->hist) * 1e6 / cfg->tsc_hz : 0.0,
	       any ? ticks_us(cfg, r->hist.min) : 0.0, any ? ticks_us(cfg, r->hist.max) : 0.0);
	for (size_t i = 0; i < N_HEADLINE; i++)
		printf(" %10.2f", ticks_us(cfg, lat_hist_percentile(&r->hist, headline_pcts[i])));
	printf("\n");
}

static void print_table(const struct perf_config *cfg, const struct perf_row *r)
{
	printf("\nLatency percentiles, %s (us):\n", r->label);
	for (size_t i = 0; i < N_TABLE; i++)
		printf("  %9.4f%% : %12.3f\n", table_pcts[i],
		       ticks_us(cfg, lat_hist_percentile(&r->hist, table_pcts[i])));
}

/*
 * What the run cost in CPU. Measured: the process's CPU time over the measured period (every
 * thread: the submitting threads and any other thread working for them, such as an emulated
 * device's engine threads in thread mode), and the submitting threads' own. Not CPU time but
 * reported next to it: the submitting threads' wall time per I/O, which is what a polling
 * thread costs, as it occupies its core whether it works or waits.
 */
struct perf_cpu {
	double wall_s;              /* measured period, average over the threads */
	double process_s;           /* CPU seconds of the whole process in the period */
	double ns_per_io;           /* process CPU / I/Os */
	double submit_ns_per_io;    /* the submitting threads' CPU / I/Os */
	double other_ns_per_io;     /* the rest of the process (engine threads) / I/Os */
	double busy_ns_per_io;      /* submitting threads x wall time / I/Os */
};

static void cpu_figures(const struct perf_config *cfg, const struct perf_thread *threads,
			uint64_t ios, struct perf_cpu *c)
{
	double thread_secs = 0, thread_cpu = 0;
	uint64_t proc_start = UINT64_MAX, proc_end = 0;
	for (unsigned i = 0; i < cfg->nthreads; i++) {
		const struct perf_thread *t = &threads[i];
		thread_secs += elapsed_s(cfg, t);
		thread_cpu += (double)(t->cpu_end_ns - t->cpu_start_ns) / 1e9;
		if (t->proc_start_ns < proc_start)
			proc_start = t->proc_start_ns;
		if (t->proc_end_ns > proc_end)
			proc_end = t->proc_end_ns;
	}
	memset(c, 0, sizeof(*c));
	c->wall_s = cfg->nthreads ? thread_secs / cfg->nthreads : 0;
	c->process_s = proc_end > proc_start ? (double)(proc_end - proc_start) / 1e9 : 0;
	if (!ios)
		return;
	c->ns_per_io = c->process_s * 1e9 / (double)ios;
	c->submit_ns_per_io = thread_cpu * 1e9 / (double)ios;
	/* the two clocks are read microseconds apart: never report a negative rest */
	c->other_ns_per_io = c->ns_per_io > c->submit_ns_per_io ? c->ns_per_io - c->submit_ns_per_io : 0;
	c->busy_ns_per_io = thread_secs * 1e9 / (double)ios;
}

/* "1.23M" style counts for the CPU line. */
static void short_count(uint64_t n, char *out, size_t len)
{
	if (n >= 1000000000ull)
		snprintf(out, len, "%.2fG", (double)n / 1e9);
	else if (n >= 1000000ull)
		snprintf(out, len, "%.2fM", (double)n / 1e6);
	else if (n >= 1000ull)
		snprintf(out, len, "%.2fK", (double)n / 1e3);
	else
		snprintf(out, len, "%llu", (unsigned long long)n);
}

int perf_report(const struct perf_config *cfg, struct perf_thread *threads)
{
	struct perf_row *rows = calloc(cfg->ntargets + 1, sizeof(*rows));
	if (!rows)
		return cli_fail("perf", EXIT_HOST, "out of memory");
	struct perf_row *total = &rows[cfg->ntargets];
	snprintf(total->label, sizeof(total->label), "Total");
	lat_hist_init(&total->hist);
	for (unsigned k = 0; k < cfg->ntargets; k++) {
		struct perf_row *r = &rows[k];
		snprintf(r->label, sizeof(r->label), "%s", cfg->targets[k].devid);
		r->nsid = cfg->targets[k].nsid;
		r->blocks = unvme_ns_nlbas(cfg->targets[k].ns);
		r->blocks_written = cfg->targets[k].nuse;
		lat_hist_init(&r->hist);
		for (unsigned i = 0; i < cfg->nthreads; i++)
			add_stats(cfg, &threads[i], k, r);
		finish_row(cfg, r);
		total->ios += r->ios;
		if (r->errors && !total->errors)
			total->first_status = r->first_status;
		total->errors += r->errors;
		total->verify_errors += r->verify_errors;
		total->foreign += r->foreign;
		total->iops += r->iops;
		lat_hist_merge(&total->hist, &r->hist);
	}
	finish_row(cfg, total);

	struct perf_cpu cpu;
	cpu_figures(cfg, threads, total->ios, &cpu);
	/* --unplug-at: from the re-insertion to the first I/O completed after it (any thread) */
	double back_us = -1;
	if (cfg->hotplug && perf_hotplug.done) {
		uint64_t first = 0;
		for (unsigned i = 0; i < cfg->nthreads; i++)
			if (threads[i].back_ns && (!first || threads[i].back_ns < first))
				first = threads[i].back_ns;
		if (first >= perf_hotplug.back_ns)
			back_us = (double)(first - perf_hotplug.back_ns) / 1e3;
	}

	if (cfg->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "workload", json_object_new_string(cfg->workload_name));
		if (cfg->mixed)
			json_object_object_add(o, "rwmixread", json_object_new_int((int)cfg->mix));
		json_object_object_add(o, "block_size", json_object_new_int64((int64_t)cfg->block_size));
		json_object_object_add(o, "queue_depth", json_object_new_int64(cfg->qd));
		json_object_object_add(o, "seconds", json_object_new_int64(cfg->seconds));
		json_object_object_add(o, "warmup", json_object_new_int64(cfg->warmup));
		json_object_object_add(o, "threads", json_object_new_int64(cfg->nthreads));
		json_object *cores = json_object_new_array();
		for (unsigned i = 0; cfg->pinned && i < cfg->nthreads; i++)
			json_object_array_add(cores, json_object_new_int(cfg->cpus[i]));
		json_object_object_add(o, "cores", cores);
		json_object_object_add(o, "elapsed_s", json_object_new_double(cpu.wall_s));
		/* how each device is reached (a kernel-kept device, another process's device) */
		json_object *tr = json_object_new_array();
		for (unsigned c = 0; c < cfg->nctrlrs; c++) {
			json_object *t = json_object_new_object();
			json_object_object_add(t, "device", json_object_new_string(cfg->ctrlr_names[c]));
			json_object_object_add(t, "transport",
					       json_object_new_string(unvme_ctrlr_transport(cfg->ctrlrs[c])));
			json_object_object_add(t, "transport_info", json_object_new_string(
				unvme_ctrlr_transport_info(cfg->ctrlrs[c])));
			json_object_array_add(tr, t);
		}
		json_object_object_add(o, "transports", tr);
		json_object *ns = json_object_new_array();
		for (unsigned k = 0; k < cfg->ntargets; k++)
			json_object_array_add(ns, row_json(cfg, &rows[k], false));
		json_object_object_add(o, "namespaces", ns);
		json_object_object_add(o, "total", row_json(cfg, total, true));
		json_object *jc = json_object_new_object();
		json_object_object_add(jc, "process_s", json_object_new_double(cpu.process_s));
		json_object_object_add(jc, "ns_per_io", json_object_new_double(cpu.ns_per_io));
		json_object_object_add(jc, "submitting_threads_ns_per_io",
				       json_object_new_double(cpu.submit_ns_per_io));
		json_object_object_add(jc, "other_threads_ns_per_io",
				       json_object_new_double(cpu.other_ns_per_io));
		json_object_object_add(o, "cpu", jc);
		json_object_object_add(o, "busy_ns_per_io", json_object_new_double(cpu.busy_ns_per_io));
		if (cfg->hotplug) {
			json_object *h = json_object_new_object();
			json_object_object_add(h, "unplug_at_ms", json_object_new_int64(cfg->unplug_at_ms));
			json_object_object_add(h, "plug_after_ms", json_object_new_int64(cfg->plug_after_ms));
			json_object_object_add(h, "done", json_object_new_boolean(perf_hotplug.done));
			json_object_object_add(h, "failed_ios", json_object_new_int64((int64_t)total->errors));
			json_object_object_add(h, "attach_us", json_object_new_double(
				perf_hotplug.done ? (double)(perf_hotplug.attached_ns - perf_hotplug.back_ns) / 1e3
						  : -1));
			json_object_object_add(h, "first_io_after_plug_us", json_object_new_double(back_us));
			json_object_object_add(o, "hotplug", h);
		}
		cli_json_print(o);
	} else {
		int width = 16;
		for (unsigned k = 0; k < cfg->ntargets; k++) {
			char l[sizeof(rows[k].label)];
			snprintf(l, sizeof(l), "%.280s nsid %u", rows[k].label, rows[k].nsid);
			snprintf(rows[k].label, sizeof(rows[k].label), "%s", l);
			if ((int)strlen(l) > width)
				width = (int)strlen(l);
		}
		printf("unvme perf: %s", cfg->workload_name);
		if (cfg->mixed)
			printf(" (%u%% reads)", cfg->mix);
		printf(", %llu-byte blocks, queue depth %u, %u thread%s", (unsigned long long)cfg->block_size,
		       cfg->qd, cfg->nthreads, cfg->nthreads == 1 ? "" : "s");
		if (cfg->pinned) {
			printf(" on CPU");
			for (unsigned i = 0; i < cfg->nthreads; i++)
				printf("%s%d", i ? "," : " ", cfg->cpus[i]);
		}
		printf(", %u s", cfg->seconds);
		if (cfg->warmup)
			printf(" after %u s warmup", cfg->warmup);
		for (unsigned c = 0; c < cfg->nctrlrs; c++) /* how a kernel-kept device is reached */
			if (unvme_ctrlr_transport_info(cfg->ctrlrs[c])[0])
				printf("\n%s: %s", cfg->ctrlr_names[c],
				       unvme_ctrlr_transport_info(cfg->ctrlrs[c]));
		printf("\n\n%-*s %12s %10s %10s %10s %10s %10s %10s %10s %10s\n", width, "Device", "IOPS",
		       "MiB/s", "avg(us)", "min(us)", "max(us)", "p50(us)", "p99(us)", "p99.9(us)",
		       "p99.99(us)");
		for (unsigned k = 0; k < cfg->ntargets; k++)
			print_row(cfg, &rows[k], width);
		print_row(cfg, total, width);
		char n[32];
		short_count(total->ios, n, sizeof(n));
		printf("\nCPU: %.1f ns per I/O (process CPU time, all threads: %.3f s / %s I/Os); "
		       "submitting thread%s %.1f ns, other threads %.1f ns\n", cpu.ns_per_io,
		       cpu.process_s, n, cfg->nthreads == 1 ? "" : "s", cpu.submit_ns_per_io,
		       cpu.other_ns_per_io);
		printf("Busy: %.1f ns per I/O (%u polling thread%s x %.3f s / %s I/Os: wall time, "
		       "a polling thread holds its core)\n", cpu.busy_ns_per_io, cfg->nthreads,
		       cfg->nthreads == 1 ? "" : "s", cpu.wall_s, n);
		if (cfg->verify)
			printf("verify: %llu blocks failed\n", (unsigned long long)total->verify_errors);
		if (cfg->hotplug && perf_hotplug.done) {
			printf("hot-plug: pulled out at %.0f ms, put back %.0f ms later; %llu I/Os in "
			       "flight failed; attached again in %.0f us, ",
			       (double)(perf_hotplug.out_ns - perf_hotplug.start_ns) / 1e6,
			       (double)(perf_hotplug.back_ns - perf_hotplug.out_ns) / 1e6,
			       (unsigned long long)total->errors,
			       (double)(perf_hotplug.attached_ns - perf_hotplug.back_ns) / 1e3);
			if (back_us >= 0)
				printf("first I/O completed %.0f us after the re-insertion\n", back_us);
			else
				printf("no I/O completed after it before the run ended\n");
		}
		if (cfg->lat_table) {
			for (unsigned k = 0; k < cfg->ntargets; k++)
				print_table(cfg, &rows[k]);
			if (cfg->ntargets > 1)
				print_table(cfg, total);
		}
	}
	fflush(stdout);

	int rc = EXIT_OK;
	for (unsigned i = 0; i < cfg->nthreads; i++) {
		const struct perf_thread *t = &threads[i];
		if (t->fatal && rc == EXIT_OK)
			rc = t->fatal > 0 ? cli_result("perf", t->fatal, 0)
					  : cli_fail("perf", EXIT_HOST, "thread %u stopped: %s", i,
						     t->fatal_msg[0] ? t->fatal_msg : "I/O failed");
		if (t->stuck)
			cli_fail("perf", EXIT_HOST, "thread %u: %u I/Os never completed", i, t->stuck);
	}
	if (cfg->hotplug && !perf_hotplug.done && rc == EXIT_OK)
		rc = cli_fail("perf", EXIT_HOST, "hot-plug: %s", perf_hotplug.msg[0] ? perf_hotplug.msg
							: "the device was not pulled out and put back");
	/* with --unplug-at, the commands in flight when the device went come back aborted: the
	 * hot-plug line counts them; any other error status is a failure */
	bool expected = cfg->hotplug && perf_hotplug.done &&
			total->first_status == NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	if (total->errors && !expected) {
		cli_fail("perf", EXIT_NVME, "%llu I/Os failed; the first with %s (SCT %Xh, SC %Xh)",
			 (unsigned long long)total->errors, unvme_status_str(total->first_status, 0),
			 NVME_STATUS_SCT(total->first_status), NVME_STATUS_SC(total->first_status));
		if (rc == EXIT_OK)
			rc = EXIT_NVME;
	}
	if (total->verify_errors) {
		for (unsigned k = 0; k < cfg->ntargets; k++)
			if (rows[k].verify_errors)
				cli_fail("perf", EXIT_NVME, "%s: %llu blocks failed verification, the first at "
					 "LBA %llu; %llu of them hold no stamp of perf's at all%s",
					 rows[k].label, (unsigned long long)rows[k].verify_errors,
					 (unsigned long long)rows[k].first_bad_lba,
					 (unsigned long long)rows[k].foreign,
					 rows[k].foreign ? " (data written before the run? --verify accepts only "
							   "zeroes and its own stamps: --fill or a format first)" : "");
		if (rc == EXIT_OK)
			rc = EXIT_NVME;
	}
	for (unsigned i = 0; i < cfg->nthreads && rc == EXIT_OK; i++)
		if (threads[i].stuck)
			rc = EXIT_HOST;
	if (perf_interrupted)
		fprintf(stderr, "unvme: perf: interrupted\n");
	free(rows);
	return rc;
}
