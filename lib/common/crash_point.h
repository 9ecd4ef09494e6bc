/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Crash points: named places in the code where a test can make the process die, to check
 * what a crash at exactly that moment leaves on disk (the crash harness, tests/crash, and
 * docs/reliability.md list them).
 *
 *   UNVME_CRASH_POINT=<name>[@<n>]
 *
 * The n-th time (default: the first) the process passes point <name>, it writes
 * "crash point <name> reached" to stderr and kills itself with SIGKILL, exactly as an
 * outside kill -9 would end it: no atexit handlers, no buffered output, no shutdown of the
 * device. With the variable unset a point costs one relaxed atomic load.
 *
 * CRASH_POINT(name) dies there. For a crash in the middle of an operation (a torn write),
 * the code asks crash_point_due(name), does part of the work and calls crash_point_die().
 * Each name appears in one source file only (the pass count is kept per file).
 */
#ifndef UNVME_COMMON_CRASH_POINT_H
#define UNVME_COMMON_CRASH_POINT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct crash_point_state {
	atomic_int armed;      /* -1 not read yet, 0 off, 1 on */
	atomic_ulong passes;   /* passes through the armed point so far */
	unsigned long at;      /* die at this pass */
	char name[64];
};

static struct crash_point_state crash_point_st __attribute__((unused)) = { -1, 0, 1, "" };
static pthread_once_t crash_point_once __attribute__((unused)) = PTHREAD_ONCE_INIT;

static inline void crash_point_read_env(void)
{
	struct crash_point_state *st = &crash_point_st;
	const char *v = getenv("UNVME_CRASH_POINT");
	int armed = 0;
	if (v && *v) {
		const char *at = strchr(v, '@');
		size_t n = at ? (size_t)(at - v) : strlen(v);
		if (n < sizeof(st->name)) {
			memcpy(st->name, v, n);
			st->name[n] = 0;
			st->at = at ? strtoul(at + 1, NULL, 10) : 1;
			if (st->at == 0)
				st->at = 1;
			armed = 1;
		}
	}
	atomic_store_explicit(&st->armed, armed, memory_order_release);
}

/* True when this pass through point name is the one UNVME_CRASH_POINT chose. */
static inline bool crash_point_due(const char *name)
{
	struct crash_point_state *st = &crash_point_st;
	int armed = atomic_load_explicit(&st->armed, memory_order_acquire);
	if (__builtin_expect(armed == 0, 1))
		return false;
	if (armed < 0) {
		pthread_once(&crash_point_once, crash_point_read_env);
		if (!atomic_load_explicit(&st->armed, memory_order_acquire))
			return false;
	}
	if (strcmp(st->name, name) != 0)
		return false;
	return atomic_fetch_add(&st->passes, 1) + 1 == st->at;
}

static inline __attribute__((noreturn)) void crash_point_die(const char *name)
{
	static const char pre[] = "crash point ", post[] = " reached\n";
	ssize_t w = write(2, pre, sizeof(pre) - 1);
	w = write(2, name, strlen(name));
	w = write(2, post, sizeof(post) - 1);
	(void)w;
	kill(getpid(), SIGKILL);
	_exit(137); /* not reached */
}

#define CRASH_POINT(name)                          \
	do {                                       \
		if (crash_point_due(name))         \
			crash_point_die(name);     \
	} while (0)

#endif
