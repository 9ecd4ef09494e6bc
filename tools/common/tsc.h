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

#include "lib/common/clock.h" /* mono_ns: wall-clock monotonic nanoseconds (run durations) */

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t tsc_now(void)
{
	return __rdtsc();
}
#else
static inline uint64_t tsc_now(void)
{
	return mono_ns();
}
#endif

/* Ticks per second, calibrated once against CLOCK_MONOTONIC (about 20 ms, thread safe). */
double tsc_hz(void);
static inline double tsc_to_ns(uint64_t ticks)
{
	return (double)ticks * 1e9 / tsc_hz();
}

#endif
