/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helper of scripts/bench_zns.py: the host FTL's steady state under uniform random 4 KiB writes.
 *
 *   ftl_waf DEVICE OPTIONS WARMUP MEASURE [SEED]
 *
 * Opens the FTL (lib/ftl) on DEVICE (a zoned namespace, normally an emulated one in memory)
 * with OPTIONS ("op=20&gc=greedy&format=1"), writes every logical page once in order, then
 * WARMUP times the capacity in uniform random pages, then MEASURE times the capacity more while
 * counting. Prints one JSON object: the write amplification of that window (data only: host
 * plus copied pages over host pages; and total: every page written, unit headers and
 * checkpoints included, over host pages), the random-write rate, and the FTL's geometry.
 * The FTL is called directly (no NVMe command in between): this measures the FTL's algorithm.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ftl/ftl_internal.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int write_page(struct ftl *f, uint8_t *page, uint64_t lpn)
{
	memcpy(page, &lpn, sizeof(lpn));
	struct iovec v = { page, FTL_PAGE };
	return ftl_write(f, lpn * FTL_PAGE, &v, 1, FTL_PAGE, false) ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ftl_waf DEVICE OPTIONS WARMUP MEASURE [SEED]\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc < 5) {
		usage(stderr);
		return 2;
	}
	double warm = atof(argv[3]), measure = atof(argv[4]);
	uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 0) : 88172645463325252ull;
	struct ftl_opts o;
	ftl_opts_default(&o);
	uint32_t nsid = 0;
	uint64_t zb = 0;
	char err[1024];
	struct zdev *z;
	struct ftl *f;
	if (ftl_parse_opts(argv[2], &o, &nsid, &zb, err, sizeof(err)) ||
	    zdev_open(argv[1], nsid, zb, &z, err, sizeof(err)) || ftl_open(z, &o, &f, err, sizeof(err))) {
		fprintf(stderr, "ftl_waf: %s\n", err);
		return 1;
	}
	uint64_t pages = ftl_capacity(f) / FTL_PAGE;
	uint8_t page[FTL_PAGE];
	memset(page, 0x5a, sizeof(page));
	for (uint64_t lpn = 0; lpn < pages; lpn++)
		if (write_page(f, page, lpn))
			goto io_error;
	for (uint64_t i = 0; i < (uint64_t)(warm * (double)pages); i++)
		if (write_page(f, page, rng(&seed) % pages))
			goto io_error;
	struct ftl_stats a, b;
	ftl_get_stats(f, &a);
	uint64_t n = (uint64_t)(measure * (double)pages);
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		if (write_page(f, page, rng(&seed) % pages))
			goto io_error;
	double secs = now_s() - t0;
	ftl_get_stats(f, &b);
	uint64_t host = b.host_pages - a.host_pages, gc = b.gc_pages - a.gc_pages;
	uint64_t media = b.media_pages - a.media_pages;
	printf("{\"user_pages\": %" PRIu64 ", \"zones\": %u, \"zone_pages\": %" PRIu64
	       ", \"unit_pages\": %u, \"op_pct\": %u, \"gc\": \"%s\", \"host_pages\": %" PRIu64
	       ", \"gc_pages\": %" PRIu64 ", \"media_pages\": %" PRIu64 ", \"waf\": %.4f, "
	       "\"waf_total\": %.4f, \"iops\": %.1f, \"gc_runs\": %" PRIu64 ", \"checkpoints\": %" PRIu64 "}\n",
	       pages, f->z->nzones, f->z->zcap_pages, f->unit_pages, f->o.op_pct,
	       o.gc == FTL_GC_GREEDY ? "greedy" : "cost-benefit", host, gc, media,
	       (double)(host + gc) / (double)host, (double)media / (double)host, (double)n / secs,
	       b.gc_runs - a.gc_runs, b.checkpoints - a.checkpoints);
	ftl_close(f);
	return 0;
io_error:
	fprintf(stderr, "ftl_waf: a write failed\n");
	ftl_close(f);
	return 1;
}
