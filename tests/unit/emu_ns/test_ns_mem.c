/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory backend's promises about memory: a namespace whose memory is made at creation
 * (hugetlbfs pages, or UNVME_EMU_PREFAULT=1 and at most a quarter of the memory available)
 * exists in full from then on, as a device's DRAM does, and keeps it; otherwise it is thin: it
 * costs only the pages written, and deallocation (Dataset Management AD, Write Zeroes) gives
 * whole pages back. Either way deallocated blocks read as zeroes, and Identify Namespace NUSE
 * counts the blocks written and not deallocated, in whole 4 KiB pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define MiB (1024u * 1024u)

/* A namespace far larger than the machine: thin. */
#define THIN_NS (16ull << 40)

static void test_pages_come_and_go(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, THIN_NS, 4096) == 0);
	const uint32_t chunk = 512; /* blocks of 4 KiB: 2 MiB per command */
	uint8_t *b = ns_test_alloc(2 * MiB);
	ns_test_pattern(b, 2 * MiB, 70);
	xfer_double_set_seg_size(4096);

	long long base = test_rss_bytes();
	REQUIRE(base > 0);
	/* reading never-written blocks allocates nothing */
	for (uint64_t lba = 0; lba < 16384; lba += chunk)
		CHECK_EQ(ns_read(f.ns, lba, chunk, b), 0);
	long long after_read = test_rss_bytes();
#ifndef __SANITIZE_THREAD__ /* ThreadSanitizer's shadow of the bytes read is resident too */
	CHECK(after_read - base < 4 * MiB);
#endif

	/* 64 MiB written: about 64 MiB more resident */
	ns_test_pattern(b, 2 * MiB, 71);
	for (uint64_t lba = 0; lba < 16384; lba += chunk)
		CHECK_EQ(ns_write(f.ns, lba, chunk, b), 0);
	long long written = test_rss_bytes();
	CHECK(written - after_read > 60 * MiB);

	/* half of it deallocated by DSM, a quarter by Write Zeroes: 48 MiB back */
	struct nvme_dsm_range *r = ns_test_alloc(sizeof(*r));
	r->cattr = 0, r->slba = 0, r->nlb = 8192;
	struct nvme_sqe c = ns_cmd_dsm(1, NVME_DSM_ATTR_AD, r);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 8192, 4096, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	long long released = test_rss_bytes();
	CHECK(written - released > 44 * MiB);
	printf("     (resident: +%lld MiB after reads, +%lld MiB after writes, -%lld MiB after deallocation)\n",
	       (after_read - base) / MiB, (written - after_read) / MiB, (written - released) / MiB);

	/* and what is left is the last quarter, intact */
	CHECK_EQ(ns_read(f.ns, 12288, chunk, b + 0), 0);
	uint8_t *want = ns_test_alloc(2 * MiB);
	ns_test_pattern(want, 2 * MiB, 71);
	CHECK(memcmp(b, want, 2 * MiB) == 0);
	CHECK_EQ(ns_read(f.ns, 8192, chunk, b), 0);
	CHECK(ns_test_all_zero(b, 2 * MiB));

	xfer_double_set_seg_size(0);
	free(want);
	free(r);
	free(b);
	ns_fixture_close(&f);
}

/* Asked for (UNVME_EMU_PREFAULT=1), a small namespace is all there at creation and stays:
 * nothing is faulted in by a write, nothing given back by deallocation, which writes zeroes. */
static void test_memory_exists_from_creation(void)
{
	setenv("UNVME_EMU_PREFAULT", "1", 1);
	long long base = test_rss_bytes();
	REQUIRE(base > 0);
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 64ull * MiB, 4096) == 0);
	long long created = test_rss_bytes();
	CHECK(created - base >= 64 * MiB);

	const uint32_t chunk = 512; /* 2 MiB per command */
	uint8_t *b = ns_test_alloc(2 * MiB);
	xfer_double_set_seg_size(4096);
	ns_test_pattern(b, 2 * MiB, 72);
	for (uint64_t lba = 0; lba < 16384; lba += chunk)
		CHECK_EQ(ns_write(f.ns, lba, chunk, b), 0);
	long long written = test_rss_bytes();
	CHECK(written - created < 8 * MiB); /* the test's own buffers at most */

	/* deallocation zeroes the blocks and keeps the memory */
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE_ZEROES, 0, 512, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK(test_rss_bytes() >= written - 1 * MiB);
	CHECK_EQ(ns_read(f.ns, 0, chunk, b), 0);
	CHECK(ns_test_all_zero(b, 2 * MiB));
	CHECK_EQ(ns_read(f.ns, chunk, chunk, b), 0);
	uint8_t *want = ns_test_alloc(2 * MiB);
	ns_test_pattern(want, 2 * MiB, 72);
	CHECK(memcmp(b, want, 2 * MiB) == 0);
	printf("     (resident: +%lld MiB at creation, +%lld MiB after 64 MiB of writes)\n",
	       (created - base) / MiB, (written - created) / MiB);

	xfer_double_set_seg_size(0);
	free(want);
	free(b);
	ns_fixture_close(&f);
	unsetenv("UNVME_EMU_PREFAULT");
}

static uint64_t nuse(struct emu_ns *ns)
{
	struct nvme_id_ns id;
	emu_ns_identify(ns, &id);
	return id.nuse;
}

static void test_utilization(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_MEM, 4 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(64 * 1024);
	ns_test_pattern(b, 64 * 1024, 3);
	CHECK_EQ(nuse(f.ns), 0);
	/* reads allocate nothing */
	CHECK_EQ(ns_read(f.ns, 0, 128, b), 0);
	CHECK_EQ(nuse(f.ns), 0);
	/* one 512-byte block: its whole 4 KiB page (8 blocks) */
	CHECK_EQ(ns_write(f.ns, 3, 1, b), 0);
	CHECK_EQ(nuse(f.ns), 8);
	CHECK_EQ(ns_write(f.ns, 0, 8, b), 0); /* the same page again */
	CHECK_EQ(nuse(f.ns), 8);
	/* blocks 7..16 touch pages 0, 1 and 2 */
	CHECK_EQ(ns_write(f.ns, 7, 10, b), 0);
	CHECK_EQ(nuse(f.ns), 24);
	/* Write Zeroes over page 1 releases it; a part of page 2 does not */
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE_ZEROES, 8, 10, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK_EQ(nuse(f.ns), 16);
	/* a failed write allocates nothing */
	c = ns_cmd(NVME_CMD_WRITE, 64, 8, NULL);
	CHECK(ns_exec(f.ns, &c, NULL, NULL) != 0);
	CHECK_EQ(nuse(f.ns), 16);
	/* the whole namespace: NUSE reaches NSZE, and Format gives it all back */
	for (uint64_t lba = 0; lba < 8192; lba += 128)
		CHECK_EQ(ns_write(f.ns, lba, 128, b), 0);
	CHECK_EQ(nuse(f.ns), 8192);
	CHECK_EQ(emu_ns_format(f.ns, 0, 0), 0);
	CHECK_EQ(nuse(f.ns), 0);
	free(b);
	ns_fixture_close(&f);
}

TEST_MAIN(TEST(test_pages_come_and_go), TEST(test_memory_exists_from_creation),
	  TEST(test_utilization))
