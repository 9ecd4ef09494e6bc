/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sleeping on a 32-bit word until another thread (or, for a word in shared memory, another
 * process) says there is work: the wait of a poller that found nothing for a while
 * (internal). A waiter announces itself in the word (futex_announce), checks for work once
 * more and then sleeps while the word still says so; a producer that finds the announcement
 * clears it and wakes (futex_kick). Nothing is lost between the check and the sleep: the
 * kernel compares the word before sleeping.
 */
#ifndef UNVME_COMMON_FUTEX_H
#define UNVME_COMMON_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == val, at most timeout_ns (0: no limit). shared: the word may be in
 * memory other processes map (a private futex is cheaper within a process). Returns when
 * woken, on a timeout, on a signal, or at once when the word differs. */
static inline void futex_wait_word(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns,
				   bool shared)
{
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000u),
			       .tv_nsec = (long)(timeout_ns % 1000000000u) };
	syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val,
		timeout_ns ? &ts : NULL, NULL, 0);
}

/* Wakes up to n sleepers of word. */
static inline void futex_wake_word(_Atomic uint32_t *word, int n, bool shared)
{
	syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, NULL,
		NULL, 0);
}

/* The poller's side: announces that it is about to sleep (the word is 1). An exchange, not a
 * store: with futex_kick's it orders the announcement against the producers' work (one of
 * the two exchanges comes first; the other then sees its side), with no fence. Look for work
 * once more after it, then sleep with futex_wait_word(word, 1, ...). */
static inline void futex_announce(_Atomic uint32_t *word)
{
	(void)atomic_exchange_explicit(word, 1, memory_order_acq_rel);
}

/* The producer's side: after making work visible, wakes the poller if it announced that it
 * sleeps, once however many producers find it so. */
static inline void futex_kick(_Atomic uint32_t *word, bool shared)
{
	if (atomic_exchange_explicit(word, 0, memory_order_acq_rel))
		futex_wake_word(word, 1, shared);
}

#endif
