/* SPDX-License-Identifier: BSD-3-Clause */
/* Time-stamp counter calibration against CLOCK_MONOTONIC. */
#include "tsc.h"

#include <errno.h>
#include <pthread.h>

#if defined(__x86_64__)

#define CALIBRATION_NS 20000000L /* 20 ms: clock read jitter stays far below 0.1% */

static double calibrated_hz;
static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;

static void calibrate(void)
{
	uint64_t ns0 = mono_ns(), t0 = tsc_now();
	struct timespec nap = { 0, CALIBRATION_NS };
	/* Sleeping rather than spinning: an invariant counter keeps counting while the thread
	 * sleeps, and the calibration does not burn a core. A signal only shortens the nap;
	 * the measured interval stays correct either way, so resume the remainder. */
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	uint64_t ns1 = mono_ns(), t1 = tsc_now();
	calibrated_hz = (double)(t1 - t0) * 1e9 / (double)(ns1 - ns0);
}

double tsc_hz(void)
{
	pthread_once(&calibrate_once, calibrate);
	return calibrated_hz;
}

#else

/* tsc_now() reads CLOCK_MONOTONIC in nanoseconds here: nothing to calibrate. */
double tsc_hz(void)
{
	return 1e9;
}

#endif
