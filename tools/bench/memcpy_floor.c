/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcpy_floor: the physical limit of a device in memory on one core. A read from an emulated
 * memory namespace is at least one copy of the block from the namespace's memory into the
 * host buffer, at a random place of a region far larger than the caches; a KV retrieve or
 * store likewise copies its value once. This program does nothing but those copies, block
 * by block, from random (or, with --seq, consecutive) block-aligned offsets of a region of the
 * same size into a ring of destination buffers (as many as I/Os in flight), and prints how
 * many one core makes per second of its CPU time: no benchmark of such a device on one core
 * can do more per CPU-second.
 *
 * As many copies are in flight as there are buffers, no more: which block a copy reads depends
 * on the data that the copy BUFFERS places before it left in its buffer (a dependency the core
 * must wait for, through an AND with zero), as a device learns of an I/O only when the host
 * sends one after a completion. The word depended on is the buffer's last, the copy's last
 * store: a completion comes after the whole block, and with the first word (as until
 * 2026-11-30) the core began the next copy's loads while the previous copy's last lines were
 * still arriving: 25-45% more copies per CPU-second at QD 1 (4 KiB of 1 GiB) than a
 * device could make one after the other.
 * With one buffer (QD 1) the copies run one after the other; with many the core overlaps
 * their cache misses as far as it can.
 *
 *   memcpy_floor [--seq] BLOCK [REGION_BYTES [SECONDS [CPU [BUFFERS]]]]
 *       prints {"block", "region", "cpu", "buffers", "pattern", "page_bytes",
 *               "copies_per_s" (per CPU-second), "copies_per_wall_s", "gib_per_s", ...}
 *
 * Per CPU-second, not per wall second: on a machine shared with other work the copier loses
 * time slices, which its CPU clock does not count (and neither does the CPU time a benchmark
 * of the device reports). The run lasts SECONDS of the thread's CPU time (at most five times
 * that of wall time).
 *
 * The region is the same kind of memory as the memory namespace's (hw/emu/ns/ns_memory.c, the
 * same code): 2 MiB pages from the reserved hugetlbfs pool when it has room for all of it, else
 * regular pages; faulted in and written before the clock starts (a never-written page would be the zero page,
 * which is always in the cache). "page_bytes" says which.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "hw/emu/ns/ns_memory.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int number(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memcpy_floor [--seq] BLOCK [REGION_BYTES [SECONDS [CPU [BUFFERS]]]]\n"
		   "  BLOCK 8 bytes..64 MiB, REGION_BYTES >= BLOCK, BUFFERS 1..4096; --seq: consecutive\n"
		   "  blocks instead of random ones\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	bool seq = false;
	if (argc > 1 && strcmp(argv[1], "--seq") == 0) {
		seq = true;
		argv++;
		argc--;
	}
	unsigned long long block = 4096, region = 1ull << 30, seconds = 1, nbuf = 32;
	long long cpu = -1;
	if (argc < 2 || argc > 6 || number(argv[1], &block) || block < 8 || block > (64u << 20) ||
	    (argc > 2 && number(argv[2], &region)) || (argc > 3 && number(argv[3], &seconds)) ||
	    (argc > 5 && (number(argv[5], &nbuf) || nbuf == 0 || nbuf > 4096))) {
		usage(stderr);
		return 2;
	}
	if (argc > 4) {
		unsigned long long c;
		if (number(argv[4], &c) || c >= CPU_SETSIZE) {
			fprintf(stderr, "memcpy_floor: invalid CPU '%s'\n", argv[4]);
			return 2;
		}
		cpu = (long long)c;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			fprintf(stderr, "memcpy_floor: cannot run on CPU %lld: %s\n", cpu, strerror(errno));
			return 1;
		}
	}
	if (region < block || seconds == 0) {
		fprintf(stderr, "memcpy_floor: the region must hold a block and the run last >= 1 s\n");
		return 2;
	}
	uint64_t nblocks = region / block;
	/* the memory namespace's allocator (hw/emu/ns/ns_memory.c): hugetlbfs pages when the pool
	 * has room, else regular ones, which the pattern below faults in */
	struct emu_mem_map map;
	uint8_t *src = emu_mem_map((size_t)region, 4096, &map) == 0 ? map.addr : NULL;
	uint64_t page = src && map.kind == EMU_MEM_HUGE ? 2u << 20 : 4096;
	uint8_t *dst = aligned_alloc(4096, (nbuf * block + 4095) / 4096 * 4096);
	if (!src || !dst) {
		fprintf(stderr, "memcpy_floor: cannot allocate %llu + %llu bytes\n", region,
			nbuf * block);
		return 1;
	}
	for (uint64_t i = 0; i + 8 <= region; i += 8)
		*(uint64_t *)(src + i) = i * 0x9e3779b97f4a7c15ull;
	memset(dst, 0, nbuf * block);

	/* the clocks every batch of copies: about a millisecond of copying, at least 256 */
	unsigned batch = block >= 4096 ? 256 : (unsigned)(1u << 20) / (unsigned)block;
	uint64_t rng = 0x2545f4914f6cdd1dull, copies = 0, slot = 0, next = 0;
	volatile uint64_t zero_v = 0;
	uint64_t zero = zero_v; /* unknown to the compiler: keeps the dependency below */
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t cpu_t = cpu0, wall_t = wall0;
	while (cpu_t - cpu0 < seconds * 1000000000ull && wall_t - wall0 < 5 * seconds * 1000000000ull) {
		for (unsigned i = 0; i < batch; i++) {
			uint64_t b;
			if (seq) {
				b = next;
				if (++next == nblocks)
					next = 0;
			} else {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				b = (uint64_t)(((unsigned __int128)rng * nblocks) >> 64);
			}
			uint8_t *d = dst + slot * block;
			/* the buffer's previous copy must be done before this one is known: its
			 * last word, the last a forward copy stores */
			b ^= *(const uint64_t *)(d + block - 8) & zero;
			memcpy(d, src + b * block, block);
			__asm__ volatile("" : : "r"(d) : "memory"); /* the copy is used */
			if (++slot == nbuf)
				slot = 0;
		}
		copies += batch;
		cpu_t = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		wall_t = clock_ns(CLOCK_MONOTONIC);
	}
	double cpu_s = (double)(cpu_t - cpu0) / 1e9, wall_s = (double)(wall_t - wall0) / 1e9;
	printf("{\"block\": %llu, \"region\": %llu, \"cpu\": %lld, \"buffers\": %llu, "
	       "\"pattern\": \"%s\", \"page_bytes\": %llu, \"cpu_s\": %.4f, \"wall_s\": %.4f, "
	       "\"copies_per_s\": %.0f, \"copies_per_wall_s\": %.0f, \"gib_per_s\": %.3f}\n", block,
	       region, cpu, nbuf, seq ? "sequential" : "random", (unsigned long long)page, cpu_s,
	       wall_s, (double)copies / cpu_s, (double)copies / wall_s,
	       (double)copies * (double)block / cpu_s / (1u << 30));
	munmap(src, map.len);
	free(dst);
	return 0;
}
