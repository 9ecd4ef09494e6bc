/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated IOMMU's region table (hw/emu/emu_iommu.c): lookups against a reference model
 * under random map/unmap churn, and the bookkeeping bounds: appending and unmapping change
 * the table in place (a handful of rebuilt tables for thousands of mappings, not one each),
 * and replaced tables are bounded.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "hw/emu/emu_iommu.h"
#include "tests/unit/test_util.h"

#define PAGE 4096u
#define SLOTS 512u /* the model's address space: SLOTS pages at IOVA 0 */

static uint8_t backing[SLOTS * PAGE];

static uint32_t retired(const struct emu_iommu *m)
{
	return m->nr_retired;
}

static void test_appends_and_unmaps_in_place(void)
{
	struct emu_iommu m;
	REQUIRE(emu_iommu_init(&m) == 0);
	/* 10000 chunks of 2 MiB at ascending IOVAs, as the driver maps its DMA memory */
	const uint64_t base = 1ull << 32, chunk = 2u << 20;
	for (uint64_t i = 0; i < 10000; i++) {
		int rc = emu_iommu_add(&m, backing, base + i * chunk, chunk);
		if (rc) {
			CHECK_EQ(rc, 0);
			break;
		}
	}
	/* the table doubled as it grew: ~10 copies, not 10000 */
	CHECK(retired(&m) <= 12);
	CHECK(emu_iommu_translate(&m, base + 4321 * chunk + 100, 8) == backing + 100);
	emu_iommu_reclaim(&m);
	/* unmapping them all (the slab's fini) costs no copy per unmap either */
	for (uint64_t i = 0; i < 10000; i++)
		CHECK_EQ(emu_iommu_remove(&m, base + i * chunk, chunk), 0);
	CHECK(retired(&m) <= 12);
	CHECK(emu_iommu_translate(&m, base, 8) == NULL);
	/* and mapping again reuses the table */
	for (uint64_t i = 0; i < 100; i++)
		CHECK_EQ(emu_iommu_add(&m, backing, base + i * chunk, chunk), 0);
	CHECK(emu_iommu_translate(&m, base + 99 * chunk, chunk) == backing);
	CHECK(emu_iommu_translate(&m, base + 99 * chunk, chunk + 1) == NULL);
	emu_iommu_fini(&m);
}

/* Random map/unmap of page runs inside SLOTS pages against a model: every page either maps
 * to the backing page of its region or is unmapped. */
static void test_random_churn_matches_model(void)
{
	struct emu_iommu m;
	REQUIRE(emu_iommu_init(&m) == 0);
	static int16_t owner[SLOTS]; /* start page of the region covering a page, -1 none */
	struct reg {
		uint32_t start, pages;
		bool live;
	} regs[SLOTS];
	uint32_t nregs = 0;
	for (uint32_t i = 0; i < SLOTS; i++)
		owner[i] = -1;
	srand(7);
	unsigned bad = 0;
	for (int step = 0; step < 20000; step++) {
		if (rand() % 2 && nregs) {
			uint32_t k = (uint32_t)rand() % nregs;
			if (regs[k].live) {
				CHECK_EQ(emu_iommu_remove(&m, (uint64_t)regs[k].start * PAGE,
							  (size_t)regs[k].pages * PAGE), 0);
				for (uint32_t p = 0; p < regs[k].pages; p++)
					owner[regs[k].start + p] = -1;
				regs[k] = regs[--nregs];
			}
		} else {
			uint32_t start = (uint32_t)rand() % SLOTS;
			uint32_t pages = 1 + (uint32_t)rand() % 8;
			if (start + pages > SLOTS)
				pages = SLOTS - start;
			bool free_run = true;
			for (uint32_t p = 0; p < pages; p++)
				free_run &= owner[start + p] < 0;
			int rc = emu_iommu_add(&m, backing + (size_t)start * PAGE,
					       (uint64_t)start * PAGE, (size_t)pages * PAGE);
			CHECK_EQ(rc, free_run ? 0 : -EEXIST);
			if (rc == 0) {
				for (uint32_t p = 0; p < pages; p++)
					owner[start + p] = (int16_t)start;
				regs[nregs++] = (struct reg){ start, pages, true };
			}
		}
		if (step % 64 == 0)
			emu_iommu_reclaim(&m); /* the tests's grace period: no lookup runs now */
		for (int probe = 0; probe < 8; probe++) {
			uint32_t pg = (uint32_t)rand() % SLOTS;
			uint32_t in = (uint32_t)rand() % PAGE;
			uint8_t *p = emu_iommu_translate(&m, (uint64_t)pg * PAGE + in, 1);
			uint8_t *want = owner[pg] < 0 ? NULL : backing + (size_t)pg * PAGE + in;
			bad += p != want;
		}
	}
	CHECK_EQ(bad, 0);
	emu_iommu_fini(&m);
}

static void test_errors(void)
{
	struct emu_iommu m;
	REQUIRE(emu_iommu_init(&m) == 0);
	CHECK_EQ(emu_iommu_add(&m, backing, 0, 0), -EINVAL);
	CHECK_EQ(emu_iommu_add(&m, NULL, 0, PAGE), -EINVAL);
	CHECK_EQ(emu_iommu_add(&m, backing, UINT64_MAX - 10, PAGE), -EINVAL);
	CHECK_EQ(emu_iommu_add(&m, backing, 4 * PAGE, 4 * PAGE), 0);
	CHECK_EQ(emu_iommu_add(&m, backing, 7 * PAGE, PAGE), -EEXIST);
	CHECK_EQ(emu_iommu_add(&m, backing, 3 * PAGE, 2 * PAGE), -EEXIST);
	CHECK_EQ(emu_iommu_remove(&m, 4 * PAGE, PAGE), -ENOENT);
	CHECK_EQ(emu_iommu_remove(&m, 4 * PAGE, 4 * PAGE), 0);
	CHECK_EQ(emu_iommu_remove(&m, 4 * PAGE, 4 * PAGE), -ENOENT);
	/* a hole taken by a larger region must not hide the entry after it */
	CHECK_EQ(emu_iommu_add(&m, backing, 0, PAGE), 0);
	CHECK_EQ(emu_iommu_add(&m, backing, 10 * PAGE, PAGE), 0);
	CHECK_EQ(emu_iommu_add(&m, backing, 20 * PAGE, PAGE), 0);
	CHECK_EQ(emu_iommu_remove(&m, 10 * PAGE, PAGE), 0);
	CHECK_EQ(emu_iommu_add(&m, backing + PAGE, 9 * PAGE, 12 * PAGE), -EEXIST);
	CHECK_EQ(emu_iommu_add(&m, backing + PAGE, 9 * PAGE, 11 * PAGE), 0);
	CHECK(emu_iommu_translate(&m, 19 * PAGE, 1) == backing + PAGE + 10 * PAGE);
	CHECK(emu_iommu_translate(&m, 19 * PAGE, PAGE + 1) == NULL); /* two mappings */
	CHECK(emu_iommu_translate(&m, 20 * PAGE, 1) == backing);
	emu_iommu_fini(&m);
}

TEST_MAIN(TEST(test_appends_and_unmaps_in_place), TEST(test_random_churn_matches_model),
	  TEST(test_errors))
