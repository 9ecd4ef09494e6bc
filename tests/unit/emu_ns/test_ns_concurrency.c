/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several host threads on one namespace at once, as in inline mode where every thread runs
 * its own queue: each thread owns a range of blocks and a set of counters, writes, zeroes,
 * deallocates and compares at random in its range and keeps a copy of what the range must
 * hold. Meant to run under ThreadSanitizer as well.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define THREADS       4
#define RANGE_BLOCKS  256u  /* per thread, 512-byte blocks: 128 KiB */
#define ITERATIONS    400
#define MAX_NLB       32u

struct worker {
	pthread_t tid;
	struct emu_ns *ns;
	unsigned index;
	uint64_t first;       /* first LBA of the thread's range */
	uint8_t *shadow;      /* what the range must hold */
	uint8_t *buf;
	struct emu_io_stats stats;
	uint64_t want_write_cmds, want_bytes_written, want_read_cmds, want_bytes_read;
	unsigned failures;
	bool keeps_data;
};

static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t seed = 0x9e3779b9u * (w->index + 1);

	for (unsigned it = 0; it < ITERATIONS; it++) {
		uint32_t rel = next_rand(&seed) % RANGE_BLOCKS;
		uint32_t nlb = 1 + next_rand(&seed) % MAX_NLB;
		if (rel + nlb > RANGE_BLOCKS)
			nlb = RANGE_BLOCKS - rel;
		uint64_t slba = w->first + rel;
		uint8_t *shadow = w->shadow + rel * 512;
		size_t len = nlb * 512u;
		struct nvme_sqe c;
		uint16_t st;

		switch (next_rand(&seed) % 5) {
		case 0:
		case 1: /* write */
			ns_test_pattern(w->buf, len, w->index * 100000 + it);
			c = ns_cmd(NVME_CMD_WRITE, slba, nlb, w->buf);
			st = ns_exec(w->ns, &c, &w->stats, NULL);
			if (st == 0) {
				memcpy(shadow, w->buf, len);
				w->want_write_cmds++;
				w->want_bytes_written += len;
			}
			break;
		case 2: /* write zeroes, with or without deallocation */
			c = ns_cmd(NVME_CMD_WRITE_ZEROES, slba, nlb, NULL);
			if (it & 1)
				c.cdw12 |= NVME_WZ_DEAC;
			st = ns_exec(w->ns, &c, &w->stats, NULL);
			if (st == 0)
				memset(shadow, 0, len);
			break;
		case 3: { /* deallocate */
			struct nvme_dsm_range r = { .cattr = 0, .nlb = nlb, .slba = slba };
			c = ns_cmd_dsm(1, NVME_DSM_ATTR_AD, &r);
			st = ns_exec(w->ns, &c, &w->stats, NULL);
			if (st == 0)
				memset(shadow, 0, len);
			break;
		}
		default: /* read back and compare with the shadow copy */
			c = ns_cmd(NVME_CMD_READ, slba, nlb, w->buf);
			st = ns_exec(w->ns, &c, &w->stats, NULL);
			if (st == 0) {
				w->want_read_cmds++;
				w->want_bytes_read += len;
				if (w->keeps_data && memcmp(w->buf, shadow, len) != 0)
					w->failures++;
			}
			break;
		}
		if (st != 0)
			w->failures++;
	}
	return NULL;
}

static void run(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, THREADS * RANGE_BLOCKS * 512ull, 512) == 0);
	struct worker w[THREADS];
	memset(w, 0, sizeof(w));
	xfer_double_set_seg_size(4096);

	for (unsigned i = 0; i < THREADS; i++) {
		w[i].ns = f.ns;
		w[i].index = i;
		w[i].first = (uint64_t)i * RANGE_BLOCKS;
		w[i].shadow = ns_test_alloc(RANGE_BLOCKS * 512);
		memset(w[i].shadow, 0, RANGE_BLOCKS * 512);
		w[i].buf = ns_test_alloc(MAX_NLB * 512);
		w[i].keeps_data = kind != EMU_NS_NULL;
	}
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&w[i].tid, NULL, worker_main, &w[i]), 0);
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(w[i].tid, NULL), 0);
	xfer_double_set_seg_size(0);

	uint8_t *r = ns_test_alloc(RANGE_BLOCKS * 512);
	for (unsigned i = 0; i < THREADS; i++) {
		CHECK_EQ(w[i].failures, 0);
		CHECK_EQ(w[i].stats.write_cmds, w[i].want_write_cmds);
		CHECK_EQ(w[i].stats.bytes_written, w[i].want_bytes_written);
		CHECK_EQ(w[i].stats.read_cmds, w[i].want_read_cmds);
		CHECK_EQ(w[i].stats.bytes_read, w[i].want_bytes_read);
		if (w[i].keeps_data) {
			CHECK_EQ(ns_read(f.ns, w[i].first, RANGE_BLOCKS, r), 0);
			CHECK(memcmp(r, w[i].shadow, RANGE_BLOCKS * 512) == 0);
		}
		free(w[i].shadow);
		free(w[i].buf);
	}
	free(r);
	ns_fixture_close(&f);
}

static void test_memory(void)
{
	run(EMU_NS_MEM);
}

static void test_file(void)
{
	run(EMU_NS_FILE);
}

static void test_null(void)
{
	run(EMU_NS_NULL);
}

/*
 * Format NVM while threads do I/O: every command either completes or gets Format In
 * Progress, nothing crashes, and afterwards the namespace has the new geometry.
 */
struct formatter_load {
	struct emu_ns *ns;
	volatile int stop;
	unsigned bad;
	unsigned busy;
};

static void *format_load_main(void *arg)
{
	struct formatter_load *l = arg;
	uint8_t *b = ns_test_alloc(4096);
	uint32_t seed = 12345;
	while (!__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
		struct nvme_sqe c = ns_cmd(next_rand(&seed) & 1 ? NVME_CMD_READ : NVME_CMD_WRITE,
					   next_rand(&seed) % 256, 1, b);
		uint16_t st = ns_exec(l->ns, &c, NULL, NULL);
		if (ST_SC(st) == NVME_SC_FORMAT_IN_PROGRESS)
			l->busy++;
		else if (st != 0)
			l->bad++;
	}
	free(b);
	return NULL;
}

static void format_under_load(enum emu_ns_kind kind)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, kind, 1024 * 1024, 512) == 0);
	struct formatter_load l = { .ns = f.ns };
	pthread_t tid;
	REQUIRE(pthread_create(&tid, NULL, format_load_main, &l) == 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(emu_ns_format(f.ns, (uint8_t)(i & 1), 0), 0);
	__atomic_store_n(&l.stop, 1, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	CHECK_EQ(l.bad, 0);
	CHECK_EQ(emu_ns_lba_size(f.ns), 4096);
	printf("     (%s: %u commands saw Format In Progress)\n", ns_kind_name(kind), l.busy);
	ns_fixture_close(&f);
}

static void test_format_under_load(void)
{
	format_under_load(EMU_NS_MEM);
	format_under_load(EMU_NS_FILE);
}

TEST_MAIN(TEST(test_memory), TEST(test_file), TEST(test_null), TEST(test_format_under_load))
