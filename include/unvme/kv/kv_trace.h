/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tracing of Samsung's uNVMe 2.0 SDK (its "kv_trace.h"), for programs written for it:
 * timing macros (KVNVME_TIMESTART / KVNVME_TIMESTOP, as kv_perf uses them) and leveled
 * trace lines, printed on stdout as "file:: line:: function:: message".
 *
 * The level is the original's: 1 errors, 2 warnings, 3 information, 4 debug. A program
 * compiled with -DKVNVME_LOG_LEVEL=N (as the original's makefiles did) prints up to level N;
 * otherwise the level is read when the program runs: $KVNVME_LOG_LEVEL, or
 * kv_trace_set_level(), default 1 (errors). The SDK's driver-level calls (kvnvme.h) trace
 * through the same lines: a refused queue id at level 1, each call at level 4.
 */
#ifndef __KVNVME_TRACE_H__
#define __KVNVME_TRACE_H__

#include <stdio.h>
#include <sys/time.h>

#include "spdk/env.h" /* KV_API */

#ifdef __cplusplus
extern "C" {
#endif

#define KVNVME_LOG_ERR   0x01
#define KVNVME_LOG_WARN  0x02
#define KVNVME_LOG_INFO  0x03
#define KVNVME_LOG_DEBUG 0x04

/* The level in effect when KVNVME_LOG_LEVEL is not defined at compile time. */
KV_API int kv_trace_level(void);
/* Sets it (0: nothing, 1..4 as above); overrides $KVNVME_LOG_LEVEL. */
KV_API void kv_trace_set_level(int level);
/* One trace line on stdout, whatever the level (the macros decide). */
KV_API void kv_trace_printf(const char *file, int line, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#ifndef KVNVME_LOG_LEVEL
#define KVNVME_LOG_LEVEL (kv_trace_level())
#endif

/* time (a struct timeval) := now */
#define KVNVME_TIMESTART(time)                 \
	do {                                   \
		gettimeofday(&(time), NULL);   \
	} while (0)

/* time := now - time, and "[N ms]" printed, as the original did */
#define KVNVME_TIMESTOP(time)                                                           \
	do {                                                                            \
		struct timeval kvnvme_now_;                                             \
		gettimeofday(&kvnvme_now_, NULL);                                       \
		(time).tv_sec = kvnvme_now_.tv_sec - (time).tv_sec;                     \
		(time).tv_usec = kvnvme_now_.tv_usec - (time).tv_usec;                  \
		if ((time).tv_usec < 0) {                                               \
			(time).tv_sec--;                                                \
			(time).tv_usec += 1000000;                                      \
		}                                                                       \
		printf("[%ld ms]\n", (long)((time).tv_sec * 1000 + (time).tv_usec / 1000)); \
	} while (0)

#define KVNVME_TRACE(log_level, fmt, ...)                                                  \
	((void)(((log_level) <= KVNVME_LOG_LEVEL)                                           \
			? (kv_trace_printf(__FILE__, __LINE__, __func__, fmt, ##__VA_ARGS__), 0) \
			: 0))

#define KVNVME_ERR(fmt, ...)   KVNVME_TRACE(KVNVME_LOG_ERR, fmt, ##__VA_ARGS__)
#define KVNVME_WARN(fmt, ...)  KVNVME_TRACE(KVNVME_LOG_WARN, fmt, ##__VA_ARGS__)
#define KVNVME_INFO(fmt, ...)  KVNVME_TRACE(KVNVME_LOG_INFO, fmt, ##__VA_ARGS__)
#define KVNVME_DEBUG(fmt, ...) KVNVME_TRACE(KVNVME_LOG_DEBUG, fmt, ##__VA_ARGS__)

#define ENTER() KVNVME_DEBUG("Enter")
#define LEAVE() KVNVME_DEBUG("Leave")

#ifdef __cplusplus
}
#endif
#endif
