/* SPDX-License-Identifier: BSD-3-Clause */
/* The tools' log-linear latency histogram: percentiles, extremes, mean, merging. */
#include <math.h>

#include "tools/common/histogram.h"
#include "tests/unit/test_util.h"

/*
 * Bound on how far a reported percentile may sit above the true sample. With the bucket
 * layout of histogram.h (values of 64 and up keep their top six bits, leading one included)
 * a bucket spans 1/32 of its lower edge at worst, e.g. 1024..1055.
 */
#define MAX_REL_ERROR (1.0 / 64)

static struct lat_histogram hist_a, hist_b, hist_all;

static void record_uniform(struct lat_histogram *h, uint64_t first, uint64_t last, uint64_t step)
{
	for (uint64_t v = first; v <= last; v += step)
		lat_hist_record(h, v);
}

static int within(double got, double want, double rel)
{
	return fabs(got - want) <= want * rel;
}

static void test_init_is_empty(void)
{
	lat_hist_init(&hist_a);
	CHECK_EQ(hist_a.count, 0);
	CHECK_EQ(hist_a.sum, 0);
	CHECK(hist_a.min == UINT64_MAX);
	CHECK_EQ(hist_a.max, 0);
	CHECK_EQ(lat_hist_percentile(&hist_a, 50), 0);
	CHECK(lat_hist_mean(&hist_a) == 0.0);
}

static void test_uniform_distribution(void)
{
	lat_hist_init(&hist_a);
	record_uniform(&hist_a, 1, 100000, 1);
	CHECK_EQ(hist_a.count, 100000);
	CHECK_EQ(hist_a.min, 1);
	CHECK_EQ(hist_a.max, 100000);
	CHECK(lat_hist_mean(&hist_a) == 50000.5);
	uint64_t p50 = lat_hist_percentile(&hist_a, 50);
	CHECK(within((double)p50, 50000, 0.02));
	CHECK(p50 >= 50000); /* the upper edge of the bucket: never below the true value */
	uint64_t p9999 = lat_hist_percentile(&hist_a, 99.99);
	CHECK(within((double)p9999, 99990, 0.02));
	CHECK(p9999 >= 99990);
	CHECK(within((double)lat_hist_percentile(&hist_a, 1), 1000, 0.02));
	CHECK_EQ(lat_hist_percentile(&hist_a, 100), 100000); /* capped at the exact maximum */
	CHECK_EQ(lat_hist_percentile(&hist_a, 0.0001), 1);
}

static void test_every_percentile_within_bucket_error(void)
{
	/* Values spread over six decades; the k-th smallest is the true percentile. */
	lat_hist_init(&hist_a);
	uint64_t v = 1;
	uint64_t values[2000];
	for (unsigned i = 0; i < 2000; i++) {
		values[i] = v;
		lat_hist_record(&hist_a, v);
		v = v + v / 128 + 1; /* increasing, about 0.8% apart at the top */
	}
	for (unsigned k = 1; k <= 2000; k++) {
		double pct = 100.0 * k / 2000;
		uint64_t got = lat_hist_percentile(&hist_a, pct), want = values[k - 1];
		if (got < want || (double)(got - want) > MAX_REL_ERROR * (double)want) {
			fprintf(stderr, "  p%.2f: got %llu, true %llu\n", pct, (unsigned long long)got,
				(unsigned long long)want);
			CHECK(0);
			break;
		}
	}
}

static void test_small_values_are_exact(void)
{
	/* Below 64 every value has its own bucket. */
	lat_hist_init(&hist_a);
	record_uniform(&hist_a, 0, 63, 1);
	CHECK_EQ(lat_hist_percentile(&hist_a, 50), 31);
	CHECK_EQ(lat_hist_percentile(&hist_a, 25), 15);
	CHECK_EQ(lat_hist_percentile(&hist_a, 100), 63);
	CHECK_EQ(hist_a.min, 0);
}

static void test_weighted_records_and_extremes(void)
{
	lat_hist_init(&hist_a);
	lat_hist_record_n(&hist_a, 1000, 99);
	lat_hist_record(&hist_a, 5000000);
	CHECK_EQ(hist_a.count, 100);
	CHECK(lat_hist_mean(&hist_a) == (99.0 * 1000 + 5000000) / 100);
	/* 99% of the samples are 1000: p99 is 1000's bucket, p99.5 the outlier's. */
	uint64_t p99 = lat_hist_percentile(&hist_a, 99);
	CHECK(p99 >= 1000 && p99 <= 1000 * (1 + MAX_REL_ERROR));
	CHECK_EQ(lat_hist_percentile(&hist_a, 99.5), 5000000);
	/* Out-of-range requests are clamped to the extremes. */
	CHECK_EQ(lat_hist_percentile(&hist_a, 0), 1000);
	CHECK_EQ(lat_hist_percentile(&hist_a, 250), 5000000);
}

static void test_largest_values(void)
{
	lat_hist_init(&hist_a);
	lat_hist_record(&hist_a, UINT64_MAX);
	lat_hist_record(&hist_a, UINT64_MAX - 1);
	lat_hist_record(&hist_a, 1ull << 63);
	CHECK(lat_hist_percentile(&hist_a, 100) == UINT64_MAX);
	uint64_t p1 = lat_hist_percentile(&hist_a, 1);
	CHECK(p1 >= 1ull << 63 && (double)(p1 - (1ull << 63)) <= MAX_REL_ERROR * 0x1p63);
}

static void test_merge_equals_recording_everything(void)
{
	lat_hist_init(&hist_a);
	lat_hist_init(&hist_b);
	lat_hist_init(&hist_all);
	record_uniform(&hist_a, 1, 100000, 2);  /* odd values */
	record_uniform(&hist_b, 2, 100000, 2);  /* even values */
	record_uniform(&hist_all, 1, 100000, 1);

	struct lat_histogram *merged = &hist_b;
	lat_hist_merge(merged, &hist_a);
	CHECK_EQ(merged->count, hist_all.count);
	CHECK_EQ(merged->sum, hist_all.sum);
	CHECK_EQ(merged->min, 1);
	CHECK_EQ(merged->max, 100000);
	CHECK(memcmp(merged->bucket, hist_all.bucket, sizeof(hist_all.bucket)) == 0);
	static const double pcts[] = { 1, 50, 90, 99, 99.9, 99.99, 100 };
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		CHECK_EQ(lat_hist_percentile(merged, pcts[i]), lat_hist_percentile(&hist_all, pcts[i]));
}

static void test_merge_into_empty_keeps_extremes(void)
{
	lat_hist_init(&hist_a);
	lat_hist_init(&hist_b);
	record_uniform(&hist_a, 500, 900, 100);
	lat_hist_merge(&hist_b, &hist_a);
	CHECK_EQ(hist_b.min, 500); /* not 0: an empty histogram's minimum is UINT64_MAX */
	CHECK_EQ(hist_b.max, 900);
	CHECK_EQ(hist_b.count, 5);
	/* Merging an empty one changes nothing. */
	lat_hist_init(&hist_all);
	lat_hist_merge(&hist_b, &hist_all);
	CHECK_EQ(hist_b.min, 500);
	CHECK_EQ(hist_b.max, 900);
	CHECK_EQ(hist_b.count, 5);
}

TEST_MAIN(TEST(test_init_is_empty), TEST(test_uniform_distribution), TEST(test_every_percentile_within_bucket_error),
	  TEST(test_small_values_are_exact), TEST(test_weighted_records_and_extremes), TEST(test_largest_values),
	  TEST(test_merge_equals_recording_everything), TEST(test_merge_into_empty_keeps_extremes))
