/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_bench's latency histogram, rebuilt so kv_db_bench prints the very block db_bench prints
 * with --histogram=1 (scripts that parse one parse the other): whole microseconds in buckets
 * whose limits are 1, 2, then each previous limit times 1.5 cut to its two leading digits
 * (3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, ...), percentiles interpolated linearly inside
 * their bucket and clamped to the observed min and max.
 */
#ifndef KVDB_HIST_H
#define KVDB_HIST_H

#include <stdint.h>
#include <stdio.h>

#define KVDB_HIST_MAX_BUCKETS 128

struct kvdb_hist {
	uint64_t num;
	uint64_t sum;
	double sum_squares; /* double: microsecond squares overflow 64 bits on long stalls */
	uint64_t min;
	uint64_t max;
	uint64_t bucket[KVDB_HIST_MAX_BUCKETS];
};

/* The number of buckets and the upper limit of bucket b (b < that number). */
unsigned kvdb_hist_buckets(void);
uint64_t kvdb_hist_limit(unsigned b);

void kvdb_hist_init(struct kvdb_hist *h);
void kvdb_hist_add(struct kvdb_hist *h, uint64_t micros);
void kvdb_hist_merge(struct kvdb_hist *dst, const struct kvdb_hist *src);
double kvdb_hist_percentile(const struct kvdb_hist *h, double p);
double kvdb_hist_average(const struct kvdb_hist *h);
double kvdb_hist_stddev(const struct kvdb_hist *h);
/* The block: Count/Average/StdDev, Min/Median/Max, Percentiles, a rule, one line per
 * non-empty bucket with its share, the running total and a bar of '#' (20 for 100%). */
void kvdb_hist_print(FILE *f, const struct kvdb_hist *h);

#endif
