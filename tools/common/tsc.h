/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cheap timestamps for per-I/O latency: the CPU's time-stamp counter where there is an
 * invariant one (x86-64), CLOCK_MONOTONIC elsewhere. A clock_gettime costs ~20 ns here, an
 * rdtsc a few, and the benchmarks take two per I/O.
 */
#ifndef UNVME_TOOLS_TSC_H
#define UNVME_TOOLS_TSC_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t tsc_now(void)
{
	return __rdtsc();
}
#else
static inline uint64_t tsc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#endif

/* Ticks per second, calibrated once against CLOCK_MONOTONIC (about 20 ms, thread safe). */
double tsc_hz(void);
static inline double tsc_to_ns(uint64_t ticks)
{
	return (double)ticks * 1e9 / tsc_hz();
}
/* Wall-clock monotonic nanoseconds (for run durations). */
uint64_t mono_ns(void);
/* CPU time in nanoseconds (user + system) of the calling thread, and of the whole process
 * (every thread, an emulated device's engine threads included): what "CPU per I/O" figures
 * are made of. A system call each (~100 ns): for the ends of a run, not per I/O. */
uint64_t thread_cpu_ns(void);
uint64_t process_cpu_ns(void);

#endif
