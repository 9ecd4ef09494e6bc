/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Minimal unit-test helpers. A test file defines test functions, lists them in a
 * TEST_MAIN(...) table, and the runner prints one line per test and a closing
 * "N passed, S skipped, M failed" line. Exit status: 1 if anything failed, else 77 (meson's
 * "skipped") if a test could not run on this machine (SKIP_UNLESS, NEED_CPUS), else 0, so a
 * test that needs two CPUs shows as skipped on one instead of passing without running.
 *
 *   static void test_ring_wraps(void) { CHECK_EQ(1, 1); }
 *   TEST_MAIN(TEST(test_ring_wraps))
 */
#ifndef UNVME_TEST_UTIL_H
#define UNVME_TEST_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

static int test_failures_in_case __attribute__((unused));
static const char *test_skipped_in_case __attribute__((unused)); /* why the current test could not run, or NULL */

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures_in_case++;                                         \
		}                                                                        \
	} while (0)

#define CHECK_EQ(a, b)                                                                   \
	do {                                                                             \
		long long _a = (long long)(a), _b = (long long)(b);                      \
		if (_a != _b) {                                                          \
			fprintf(stderr, "  %s:%d: CHECK_EQ failed: %s == %s (%lld != %lld, 0x%llx != 0x%llx)\n", \
				__FILE__, __LINE__, #a, #b, _a, _b, (unsigned long long)_a,     \
				(unsigned long long)_b);                                 \
			test_failures_in_case++;                                         \
		}                                                                        \
	} while (0)

#define CHECK_STREQ(a, b)                                                                \
	do {                                                                             \
		const char *_a = (a), *_b = (b);                                         \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                 \
			fprintf(stderr, "  %s:%d: CHECK_STREQ failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, _a ? _a : "(null)", _b ? _b : "(null)"); \
			test_failures_in_case++;                                         \
		}                                                                        \
	} while (0)

/* Stops the current test (after recording the failure) when a precondition does not hold. */
#define REQUIRE(cond)                                                                    \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures_in_case++;                                         \
			return;                                                          \
		}                                                                        \
	} while (0)

/* Ends the current test as skipped when the machine cannot run it (never to hide a failure:
 * checks made before it still count). */
#define SKIP_UNLESS(cond, why)                                                           \
	do {                                                                             \
		if (!(cond)) {                                                           \
			test_skipped_in_case = (why);                                    \
			return;                                                          \
		}                                                                        \
	} while (0)

/* Memory resident for this process in bytes: its resident set (VmRSS) and its hugetlbfs
 * pages (HugetlbPages, which the resident set leaves out: an emulated device takes its memory
 * from hugepages where the machine has them reserved), or -1. */
static inline long long test_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	long long rss = -1, huge = 0, kb;
	char line[256];
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
			rss = kb * 1024;
		else if (sscanf(line, "HugetlbPages: %lld kB", &kb) == 1)
			huge = kb * 1024;
	}
	fclose(f);
	return rss < 0 ? -1 : rss + huge;
}

static inline long test_online_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* Threads pinned to CPU 1 and beyond, completion threads on a core of their own. */
#define NEED_CPUS(n) SKIP_UNLESS(test_online_cpus() >= (n), "needs " #n " online CPUs")

/* Monotonic milliseconds, and a sleep of ms milliseconds: deadlines of threaded tests. */
static inline uint64_t test_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void test_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

#define TEST(fn) { #fn, fn }

#define TEST_MAIN(...)                                                                   \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		static const struct test_case cases[] = { __VA_ARGS__ };                 \
		int passed = 0, skipped = 0, failed = 0;                                 \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {          \
			if (argc > 1 && !strstr(cases[i].name, argv[1]))                 \
				continue;                                                \
			test_failures_in_case = 0;                                       \
			test_skipped_in_case = NULL;                                     \
			cases[i].fn();                                                   \
			if (test_failures_in_case) {                                     \
				failed++;                                                \
				printf("FAIL %s\n", cases[i].name);                      \
			} else if (test_skipped_in_case) {                               \
				skipped++;                                               \
				printf("skip %s: %s\n", cases[i].name,                   \
				       test_skipped_in_case);                            \
			} else {                                                         \
				passed++;                                                \
				printf("ok   %s\n", cases[i].name);                      \
			}                                                                \
		}                                                                        \
		printf("%d passed, %d skipped, %d failed\n", passed, skipped, failed);   \
		return failed ? 1 : skipped ? 77 : 0;                                    \
	}

#endif
