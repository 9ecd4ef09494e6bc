/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Minimal unit-test helpers. A test file defines test functions, lists them in a
 * TEST_MAIN(...) table, and the runner prints one line per test and a closing
 * "N passed, M failed" line; the exit status is non-zero if anything failed.
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

struct test_case {
	const char *name;
	void (*fn)(void);
};

static int test_failures_in_case;

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

#define TEST(fn) { #fn, fn }

#define TEST_MAIN(...)                                                                   \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		static const struct test_case cases[] = { __VA_ARGS__ };                 \
		int passed = 0, failed = 0;                                              \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {          \
			if (argc > 1 && !strstr(cases[i].name, argv[1]))                 \
				continue;                                                \
			test_failures_in_case = 0;                                       \
			cases[i].fn();                                                   \
			if (test_failures_in_case) {                                     \
				failed++;                                                \
				printf("FAIL %s\n", cases[i].name);                      \
			} else {                                                         \
				passed++;                                                \
				printf("ok   %s\n", cases[i].name);                      \
			}                                                                \
		}                                                                        \
		printf("%d passed, %d failed\n", passed, failed);                        \
		return failed ? 1 : 0;                                                   \
	}

#endif
