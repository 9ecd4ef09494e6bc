/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a thread that polls waits while its looks find nothing (internal): the one policy of
 * every poller of the tree (synchronous waits, completion threads, the emulated device's
 * engine and doorbell watcher).
 *
 * Whoever makes the work a poller waits for (a device's engine or doorbell watcher, a
 * completion thread, a submitter, another process's device) may be waiting for this very
 * CPU when threads outnumber CPUs (a completion thread on the submitting core, more pollers
 * than cores, a loaded machine). A poller that only spins keeps it off that CPU until the
 * kernel preempts the spinner, a time slice (milliseconds) per hand-over: measured, a
 * client storing keys synchronously through a device process on the same CPU did 84 stores
 * a second that way and 17,760 with a yield every 16 looks. So every BACKOFF_YIELD_EVERY-th
 * look that finds nothing gives the CPU away (sched_yield, which returns at once when nobody
 * else wants the CPU), from the first idle look on; the other looks only pause the core
 * (cpu_relax), so a completion that arrives a few hundred nanoseconds later costs no system
 * call. After yield_ns of looking the poller sleeps between looks in growing steps (from
 * sleep_min_ns, doubling, at most an eighth of the time waited and sleep_max_ns): a wait
 * that lasts costs a few wake-ups a second, not a CPU. Pollers that can be told of new work
 * sleep on a futex instead (lib/common/futex.h): backoff_wait says when (BACKOFF_SLEEP).
 */
#ifndef UNVME_COMMON_BACKOFF_H
#define UNVME_COMMON_BACKOFF_H

#include <sched.h>
#include <stdint.h>

#include "clock.h"
#include "compiler.h"

#define BACKOFF_YIELD_EVERY 16u /* looks that find nothing between two yields */

struct backoff_policy {
	uint64_t yield_ns;     /* look, yielding now and then, this long; then sleep */
	uint64_t sleep_min_ns; /* the first sleep */
	uint64_t sleep_max_ns; /* the longest */
};

struct backoff {
	uint64_t since;        /* when the looks began to find nothing (0: the last one found work) */
	uint64_t sleep_ns;     /* the last sleep */
	uint32_t looks;        /* idle looks since the clock was read */
};

enum backoff_step {
	BACKOFF_LOOK,          /* look again now */
	BACKOFF_SLEEP,         /* sleep (a poller with a futex sleeps there; backoff_sleep else) */
};

/* The last look found work. */
static inline void backoff_reset(struct backoff *b)
{
	b->since = 0;
	b->sleep_ns = 0;
	b->looks = 0;
}

/* How long the looks have found nothing, in ns (0 before the clock was read). */
static inline uint64_t backoff_idle_ns(const struct backoff *b)
{
	return b->since ? mono_ns() - b->since : 0;
}

/* After a look that found nothing: pauses (or yields), and says whether to sleep now. */
static inline enum backoff_step backoff_wait(struct backoff *b, const struct backoff_policy *p)
{
	if (unlikely(!b->since))
		b->since = mono_ns();
	if (++b->looks % BACKOFF_YIELD_EVERY) {
		cpu_relax();
		return BACKOFF_LOOK;
	}
	if (mono_ns() - b->since < p->yield_ns) {
		sched_yield();
		return BACKOFF_LOOK;
	}
	return BACKOFF_SLEEP;
}

/* The sleep of BACKOFF_SLEEP for a poller that cannot be told of work: ns to sleep now. */
static inline uint64_t backoff_sleep_ns(struct backoff *b, const struct backoff_policy *p)
{
	uint64_t waited = mono_ns() - b->since;
	uint64_t cap = waited / 8 < p->sleep_max_ns ? waited / 8 : p->sleep_max_ns;
	b->sleep_ns = b->sleep_ns ? b->sleep_ns * 2 : p->sleep_min_ns;
	if (b->sleep_ns > cap)
		b->sleep_ns = cap > p->sleep_min_ns ? cap : p->sleep_min_ns;
	return b->sleep_ns;
}

#endif
