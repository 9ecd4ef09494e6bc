/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log-linear latency histogram for the benchmark tools. Values (nanoseconds, or ticks) fall in
 * 64 power-of-two ranges, each split into 64 linear sub-buckets, so any percentile is reported
 * within 1/64 (1.6%) of the true value. Recording is O(1), branch-light and never allocates.
 * One histogram per thread; merge them for the report.
 */
#ifndef UNVME_TOOLS_HISTOGRAM_H
#define UNVME_TOOLS_HISTOGRAM_H

#include <stdint.h>

#define LAT_HIST_SUB_BITS 6
#define LAT_HIST_SUB      (1u << LAT_HIST_SUB_BITS)
#define LAT_HIST_RANGES   (64 - LAT_HIST_SUB_BITS + 1)

struct lat_histogram {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t bucket[LAT_HIST_RANGES][LAT_HIST_SUB];
};

void lat_hist_init(struct lat_histogram *h);
void lat_hist_merge(struct lat_histogram *dst, const struct lat_histogram *src);
/* The value at or below which pct percent (0 < pct <= 100) of the samples fall; 0 if empty. */
uint64_t lat_hist_percentile(const struct lat_histogram *h, double pct);
double lat_hist_mean(const struct lat_histogram *h);

/* Range 0 holds 0..63 exactly. Range r >= 1 holds values whose highest set bit is at position
 * r + LAT_HIST_SUB_BITS - 1; the sub-bucket is the LAT_HIST_SUB_BITS bits below that bit, so
 * every bucket spans at most 1/64 of its values. */
static inline void lat_hist_index(uint64_t v, unsigned *range, unsigned *sub)
{
	if (v < LAT_HIST_SUB) {
		*range = 0;
		*sub = (unsigned)v;
		return;
	}
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - LAT_HIST_SUB_BITS;
	*range = shift + 1;
	*sub = (unsigned)(v >> shift) & (LAT_HIST_SUB - 1);
}

static inline void lat_hist_record_n(struct lat_histogram *h, uint64_t v, uint64_t n)
{
	unsigned r, s;
	lat_hist_index(v, &r, &s);
	h->bucket[r][s] += n;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

static inline void lat_hist_record(struct lat_histogram *h, uint64_t v)
{
	lat_hist_record_n(h, v, 1);
}

#endif
