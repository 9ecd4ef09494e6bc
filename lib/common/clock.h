/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Monotonic clocks for timeouts and pacing (internal). mono_ns is exact (about 20 ns a call
 * through the vDSO); mono_ms_coarse reads the tick-granular clock (a few ns, resolution of the
 * kernel tick, 1 to 4 ms), which is all a timeout scan needs.
 */
#ifndef UNVME_COMMON_CLOCK_H
#define UNVME_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on clock clk. */
static inline uint64_t clock_read_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ms milliseconds from now on clock clk, as the absolute time a timed wait takes
 * (pthread_cond_timedwait and pthread_mutex_timedlock: CLOCK_REALTIME, or the clock a
 * condition variable was made with). */
static inline struct timespec clock_deadline_ms(clockid_t clk, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += (time_t)(ms / 1000u);
	ts.tv_nsec += (long)(ms % 1000u) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static inline uint64_t mono_ns(void)
{
	return clock_read_ns(CLOCK_MONOTONIC);
}

static inline uint64_t mono_ms_coarse(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* What a timeout measured with mono_ms_coarse must add so that it never ends early: the
 * coarse clock's tick rounded up to whole ms (two readings a timeout apart may be up to a tick
 * less apart in truth), plus the 1 ms that truncating a reading to ms loses (a CI run saw
 * 1499.7 ms pass for 1500). Read once. */
static inline uint32_t mono_coarse_slack_ms(void)
{
	static uint32_t slack; /* __atomic builtins: C and C++ includers alike */
	uint32_t t = __atomic_load_n(&slack, __ATOMIC_RELAXED);
	if (!t) {
		struct timespec res = {0, 4000000};
		clock_getres(CLOCK_MONOTONIC_COARSE, &res);
		t = (uint32_t)(((uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec + 999999u) /
			       1000000u) + 1;
		__atomic_store_n(&slack, t, __ATOMIC_RELAXED);
	}
	return t;
}

/* CPU time in nanoseconds (user + system) of the calling thread, and of the whole process
 * (every thread, an emulated device's engine threads included): what "CPU per I/O" figures are
 * made of. A system call each (~100 ns): for the ends of a run, not per I/O. */
static inline uint64_t thread_cpu_ns(void)
{
	return clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline uint64_t process_cpu_ns(void)
{
	return clock_read_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Sleeps for us microseconds (an interrupted sleep simply ends early). */
static inline void sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000u), .tv_nsec = (long)(us % 1000000u) * 1000 };
	nanosleep(&ts, NULL);
}

#endif
