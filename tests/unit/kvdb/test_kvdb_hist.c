/* SPDX-License-Identifier: BSD-3-Clause */
/* kv_db_bench's histogram: db_bench's bucket limits, statistics and printed block. */
#include <math.h>

#include "kvdb_hist.h"
#include "tests/unit/test_util.h"

/* db_bench 7.8's first limits, as its --histogram=1 tables show them */
static void test_limits_are_db_benchs(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250,
					 380, 580, 870, 1300, 1900, 2900, 4400, 6600, 9900,
					 14000, 22000, 33000 };
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(kvdb_hist_limit(i), want[i]);
	unsigned n = kvdb_hist_buckets();
	CHECK(n > 100 && n <= KVDB_HIST_MAX_BUCKETS);
	for (unsigned i = 1; i < n; i++)
		CHECK(kvdb_hist_limit(i) > kvdb_hist_limit(i - 1));
}

static void test_statistics(void)
{
	struct kvdb_hist h;
	kvdb_hist_init(&h);
	for (uint64_t v = 1; v <= 4; v++)
		kvdb_hist_add(&h, v);
	CHECK_EQ(h.num, 4);
	CHECK_EQ(h.min, 1);
	CHECK_EQ(h.max, 4);
	CHECK(fabs(kvdb_hist_average(&h) - 2.5) < 1e-9);
	CHECK(fabs(kvdb_hist_stddev(&h) - sqrt(1.25)) < 1e-9);
	/* one value per bucket (1], (1,2], (2,3], (3,4]: P50 is the top of the second */
	CHECK(fabs(kvdb_hist_percentile(&h, 50) - 2.0) < 1e-9);
	/* interpolated inside a bucket, clamped to the max */
	CHECK(fabs(kvdb_hist_percentile(&h, 100) - 4.0) < 1e-9);

	struct kvdb_hist g;
	kvdb_hist_init(&g);
	kvdb_hist_add(&g, 0);
	kvdb_hist_add(&g, 1000000);
	kvdb_hist_merge(&h, &g);
	CHECK_EQ(h.num, 6);
	CHECK_EQ(h.min, 0);
	CHECK_EQ(h.max, 1000000);
}

static void test_printed_block(void)
{
	struct kvdb_hist h;
	kvdb_hist_init(&h);
	for (int i = 0; i < 3; i++)
		kvdb_hist_add(&h, 2);
	kvdb_hist_add(&h, 5);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	REQUIRE(f);
	kvdb_hist_print(f, &h);
	fclose(f);
	CHECK_STREQ(text,
		    "Count: 4 Average: 2.7500  StdDev: 1.30\n"
		    "Min: 2  Median: 2.0000  Max: 5\n"
		    "Percentiles: P50: 2.00 P75: 2.00 P99: 5.00 P99.9: 5.00 P99.99: 5.00\n"
		    "------------------------------------------------------\n"
		    "(       1,       2 ]        3  75.000%  75.000% ###############\n"
		    "(       4,       6 ]        1  25.000% 100.000% #####\n");
	free(text);

	kvdb_hist_init(&h);
	f = open_memstream(&text, &len);
	REQUIRE(f);
	kvdb_hist_print(f, &h);
	fclose(f);
	CHECK_STREQ(text, "Count: 0 Average: 0.0000  StdDev: 0.00\n"
			  "Min: 0  Median: 0.0000  Max: 0\n"
			  "Percentiles: P50: 0.00 P75: 0.00 P99: 0.00 P99.9: 0.00 P99.99: 0.00\n"
			  "------------------------------------------------------\n");
	free(text);
}

TEST_MAIN(TEST(test_limits_are_db_benchs), TEST(test_statistics), TEST(test_printed_block))
