/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK's log: log_level 0 writes nothing, 1 errors (every failed call says why), 2 adds
 * initialisation and finalisation, 3 every I/O. Lines go to log_file (default /tmp/kvsdk.log),
 * opened for appending at kv_sdk_init. The level and path outlive kv_sdk_finalize so that a
 * call made after finalize can still say what was wrong. Every error line (level 1) is also
 * the calling thread's kv_errmsg(), whatever the level.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kv_internal.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_level;
static char log_path[1024] = "/tmp/kvsdk.log";
static FILE *log_fp;

void kv_log_configure(int level, const char *path)
{
	pthread_mutex_lock(&log_lock);
	log_level = level;
	if (path && path[0] && strcmp(path, log_path) != 0) {
		if (log_fp && log_fp != stderr && log_fp != stdout)
			fclose(log_fp);
		log_fp = NULL;
		snprintf(log_path, sizeof(log_path), "%s", path);
	}
	pthread_mutex_unlock(&log_lock);
}

void kv_log_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_fp && log_fp != stderr && log_fp != stdout)
		fclose(log_fp);
	log_fp = NULL;
	pthread_mutex_unlock(&log_lock);
}

int kv_log_level(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

void kv_log(int level, const char *fmt, ...)
{
	/* an error line is also the calling thread's kv_errmsg(), with the log off too */
	bool record = level == 1;
	if (level > kv_log_level() && !record)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (record)
		kv_errmsg_record(msg);
	if (level > kv_log_level())
		return;
	pthread_mutex_lock(&log_lock);
	if (!log_fp) {
		if (!strcmp(log_path, "stderr") || !strcmp(log_path, "/dev/stderr"))
			log_fp = stderr;
		else if (!strcmp(log_path, "stdout") || !strcmp(log_path, "/dev/stdout"))
			log_fp = stdout;
		else
			log_fp = fopen(log_path, "a");
		if (!log_fp) {
			/* the message must not be lost: say so once on stderr */
			fprintf(stderr, "kvsdk: cannot open log file '%s'; logging to stderr\n",
				log_path);
			log_fp = stderr;
		}
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	fprintf(log_fp, "[%02d:%02d:%02d.%06ld] kvsdk: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000, msg);
	fflush(log_fp);
	pthread_mutex_unlock(&log_lock);
}
