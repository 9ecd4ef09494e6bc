/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The original SDK's trace lines (kv_trace.h): "file:: line:: function:: message" on stdout,
 * as its driver printed them, up to a level read from $KVNVME_LOG_LEVEL when first needed
 * (default 1, errors) or set by kv_trace_set_level. Each line is written with one call, so
 * lines of several threads do not mix.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kv_internal.h"

#define LEVEL_UNSET (-1)
static int trace_level = LEVEL_UNSET;

KV_API int kv_trace_level(void)
{
	int level = __atomic_load_n(&trace_level, __ATOMIC_RELAXED);
	if (level != LEVEL_UNSET)
		return level;
	level = KVNVME_LOG_ERR;
	const char *env = getenv("KVNVME_LOG_LEVEL");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 0);
		if (*end == '\0' && v >= 0 && v <= KVNVME_LOG_DEBUG)
			level = (int)v;
		else
			fprintf(stderr, "kvsdk: KVNVME_LOG_LEVEL='%s' is not 0..4; tracing errors (1)\n",
				env);
	}
	int unset = LEVEL_UNSET;
	/* a concurrent kv_trace_set_level wins */
	if (!__atomic_compare_exchange_n(&trace_level, &unset, level, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		level = unset;
	return level;
}

KV_API void kv_trace_set_level(int level)
{
	if (level < 0)
		level = 0;
	if (level > KVNVME_LOG_DEBUG)
		level = KVNVME_LOG_DEBUG;
	__atomic_store_n(&trace_level, level, __ATOMIC_RELAXED);
}

static void vtrace(const char *file, int line, const char *func, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* one write per line: printf locks the stream for the call */
	printf("%s:: %d:: %s:: %s\n", file, line, func, msg);
}

KV_API void kv_trace_printf(const char *file, int line, const char *func, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vtrace(file, line, func, fmt, ap);
	va_end(ap);
}

void kv_trace_print(int level, const char *file, int line, const char *func, const char *fmt, ...)
{
	if (level > kv_trace_level())
		return;
	va_list ap;
	va_start(ap, fmt);
	vtrace(file, line, func, fmt, ap);
	va_end(ap);
}
