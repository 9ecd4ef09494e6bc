/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Branch hints and the spin-wait pause, for every part of the tree (driver, emulated device,
 * SDK, tools, plugins). Internal: not installed, never included by a public header.
 */
#ifndef UNVME_COMMON_COMPILER_H
#define UNVME_COMMON_COMPILER_H

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* One iteration of a spin wait: tells the core (and its SMT sibling) that this thread is only
 * waiting, and orders nothing. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
