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
