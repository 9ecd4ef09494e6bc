/* SPDX-License-Identifier: BSD-3-Clause */
/* The tools' timestamp helpers: calibration happens once, and ticks convert to real time. */
#include <pthread.h>

#include "tools/common/tsc.h"
#include "tests/unit/test_util.h"

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *hz_in_thread(void *arg)
{
	*(double *)arg = tsc_hz();
	return NULL;
}

static void test_calibrated_once_for_all_threads(void)
{
	enum { THREADS = 8 };
	pthread_t t[THREADS];
	double hz[THREADS];
	for (int i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, hz_in_thread, &hz[i]) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/* Racing first callers must all see the one calibration, and so must later ones. */
	for (int i = 0; i < THREADS; i++)
		CHECK(hz[i] == hz[0]);
	CHECK(tsc_hz() == hz[0]);
	/* Any real counter runs between 10 MHz and 100 GHz. */
	CHECK(hz[0] > 1e7 && hz[0] < 1e11);
}

static void test_mono_ns_advances(void)
{
	uint64_t a = mono_ns();
	sleep_ns(5000000);
	uint64_t b = mono_ns();
	CHECK(b >= a + 5000000);
	CHECK(b - a < 5000000000ull); /* a loaded machine, but not five seconds late */
}

static void test_ticks_convert_to_elapsed_time(void)
{
	(void)tsc_hz(); /* calibrate outside the measured interval */
	uint64_t ns0 = mono_ns(), t0 = tsc_now();
	sleep_ns(30000000);
	uint64_t t1 = tsc_now(), ns1 = mono_ns();
	double ticks_ns = tsc_to_ns(t1 - t0), wall_ns = (double)(ns1 - ns0);
	/* Both clocks measured the same interval; the tick one sits inside the wall one. */
	CHECK(ticks_ns >= 30e6 * 0.95);
	CHECK(ticks_ns <= wall_ns * 1.05);
}

TEST_MAIN(TEST(test_calibrated_once_for_all_threads), TEST(test_mono_ns_advances),
	  TEST(test_ticks_convert_to_elapsed_time))
