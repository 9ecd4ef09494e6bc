/* SPDX-License-Identifier: BSD-3-Clause */
/* db_bench's histogram: bucket limits, statistics and the printed block (kvdb_hist.h). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>

#include "kvdb_hist.h"

static uint64_t limits[KVDB_HIST_MAX_BUCKETS];
static unsigned nlimits;
static pthread_once_t limits_once = PTHREAD_ONCE_INIT;

static void limits_build(void)
{
	limits[0] = 1;
	limits[1] = 2;
	nlimits = 2;
	/* the growth runs on the unrounded value; only the stored limit keeps two digits */
	double v = 2.0;
	while ((v *= 1.5) <= (double)UINT64_MAX && nlimits < KVDB_HIST_MAX_BUCKETS) {
		uint64_t l = (uint64_t)v, scale = 1;
		while (l / 10 > 10) {
			l /= 10;
			scale *= 10;
		}
		limits[nlimits++] = l * scale;
	}
}

unsigned kvdb_hist_buckets(void)
{
	pthread_once(&limits_once, limits_build);
	return nlimits;
}

uint64_t kvdb_hist_limit(unsigned b)
{
	pthread_once(&limits_once, limits_build);
	return limits[b];
}

void kvdb_hist_init(struct kvdb_hist *h)
{
	*h = (struct kvdb_hist){ .min = UINT64_MAX };
	pthread_once(&limits_once, limits_build);
}

/* The first bucket whose limit is >= v; the last one for anything beyond it. */
static unsigned index_for(uint64_t v)
{
	unsigned lo = 0, hi = nlimits - 1;
	if (v >= limits[hi])
		return hi;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (limits[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void kvdb_hist_add(struct kvdb_hist *h, uint64_t micros)
{
	h->bucket[index_for(micros)]++;
	if (micros < h->min)
		h->min = micros;
	if (micros > h->max)
		h->max = micros;
	h->num++;
	h->sum += micros;
	h->sum_squares += (double)micros * (double)micros;
}

void kvdb_hist_merge(struct kvdb_hist *dst, const struct kvdb_hist *src)
{
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->num += src->num;
	dst->sum += src->sum;
	dst->sum_squares += src->sum_squares;
	for (unsigned b = 0; b < KVDB_HIST_MAX_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
}

double kvdb_hist_percentile(const struct kvdb_hist *h, double p)
{
	double threshold = (double)h->num * (p / 100.0);
	uint64_t cumulative = 0;
	for (unsigned b = 0; b < nlimits; b++) {
		uint64_t count = h->bucket[b];
		cumulative += count;
		if ((double)cumulative < threshold)
			continue;
		double left = b == 0 ? 0.0 : (double)limits[b - 1];
		double right = (double)limits[b];
		double pos = count ? (threshold - (double)(cumulative - count)) / (double)count : 0.0;
		double r = left + (right - left) * pos;
		if (r < (double)h->min)
			r = (double)h->min;
		if (r > (double)h->max)
			r = (double)h->max;
		return r;
	}
	return (double)h->max;
}

double kvdb_hist_average(const struct kvdb_hist *h)
{
	return h->num ? (double)h->sum / (double)h->num : 0.0;
}

double kvdb_hist_stddev(const struct kvdb_hist *h)
{
	if (!h->num)
		return 0.0;
	double n = (double)h->num, s = (double)h->sum;
	double var = (h->sum_squares * n - s * s) / (n * n);
	return var > 0 ? sqrt(var) : 0.0;
}

void kvdb_hist_print(FILE *f, const struct kvdb_hist *h)
{
	fprintf(f, "Count: %" PRIu64 " Average: %.4f  StdDev: %.2f\n", h->num,
		kvdb_hist_average(h), kvdb_hist_stddev(h));
	fprintf(f, "Min: %" PRIu64 "  Median: %.4f  Max: %" PRIu64 "\n", h->num ? h->min : 0,
		kvdb_hist_percentile(h, 50), h->num ? h->max : 0);
	fprintf(f, "Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f\n",
		kvdb_hist_percentile(h, 50), kvdb_hist_percentile(h, 75),
		kvdb_hist_percentile(h, 99), kvdb_hist_percentile(h, 99.9),
		kvdb_hist_percentile(h, 99.99));
	fprintf(f, "------------------------------------------------------\n");
	if (!h->num)
		return;
	double mult = 100.0 / (double)h->num;
	uint64_t cumulative = 0;
	for (unsigned b = 0; b < nlimits; b++) {
		uint64_t count = h->bucket[b];
		if (!count)
			continue;
		cumulative += count;
		fprintf(f, "%c %7" PRIu64 ", %7" PRIu64 " ] %8" PRIu64 " %7.3f%% %7.3f%% ",
			b == 0 ? '[' : '(', b == 0 ? 0 : limits[b - 1], limits[b], count,
			mult * (double)count, mult * (double)cumulative);
		for (unsigned m = (unsigned)(mult * (double)count / 5 + 0.5); m > 0; m--)
			fputc('#', f);
		fputc('\n', f);
	}
}
