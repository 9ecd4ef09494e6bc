/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcpy_floor: the physical limit of a device in memory on one core. A read from an emulated
 * memory namespace is at least one copy of the block from the namespace's memory into the
 * host buffer, at a random place of a region far larger than the caches; a KV retrieve or
 * store likewise copies its value once. This program does nothing but those copies, block
 * by block, from random block-aligned offsets of a region of the same size into a ring of
 * destination buffers (as many as I/Os in flight), and prints how many one core makes per
 * second: no benchmark of such a device on one core can go faster.
 *
 *   memcpy_floor BLOCK [REGION_BYTES [SECONDS [CPU [BUFFERS]]]]
 *       prints {"block":..,"region":..,"cpu":..,"copies_per_s":..,"gib_per_s":..}
 *
 * The region is written before the clock starts (a never-written page would be the zero
 * page, which is always in the cache).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
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
	fprintf(f, "usage: memcpy_floor BLOCK [REGION_BYTES [SECONDS [CPU [BUFFERS]]]]\n"
		   "  BLOCK 1..64 MiB, REGION_BYTES >= BLOCK, BUFFERS 1..4096\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	unsigned long long block = 4096, region = 1ull << 30, seconds = 1, nbuf = 32;
	long long cpu = -1;
	if (argc < 2 || argc > 6 || number(argv[1], &block) || block == 0 || block > (64u << 20) ||
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
	/* the same kind of memory as the memory namespace's (hw/emu/ns/ns_mem.c) */
	uint8_t *src = mmap(NULL, region, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *dst = aligned_alloc(4096, (nbuf * block + 4095) / 4096 * 4096);
	if (src == MAP_FAILED || !dst) {
		fprintf(stderr, "memcpy_floor: cannot allocate %llu + %llu bytes\n", region,
			nbuf * block);
		return 1;
	}
	for (uint64_t i = 0; i < region; i += 8)
		*(uint64_t *)(src + i) = i * 0x9e3779b97f4a7c15ull;
	memset(dst, 0, nbuf * block);

	uint64_t rng = 0x2545f4914f6cdd1dull, copies = 0, slot = 0;
	uint64_t start = now_ns(), end = start + seconds * 1000000000ull, t = start;
	while (t < end) {
		for (int i = 0; i < 256; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			uint64_t b = (uint64_t)(((unsigned __int128)rng * nblocks) >> 64);
			uint8_t *d = dst + slot * block;
			memcpy(d, src + b * block, block);
			__asm__ volatile("" : : "r"(d) : "memory"); /* the copy is used */
			if (++slot == nbuf)
				slot = 0;
		}
		copies += 256;
		t = now_ns();
	}
	double secs = (double)(t - start) / 1e9;
	printf("{\"block\": %llu, \"region\": %llu, \"cpu\": %lld, \"buffers\": %llu, "
	       "\"copies_per_s\": %.0f, \"gib_per_s\": %.3f}\n", block, region, cpu, nbuf,
	       (double)copies / secs, (double)copies * (double)block / secs / (1u << 30));
	munmap(src, region);
	free(dst);
	return 0;
}
