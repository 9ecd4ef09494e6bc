/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host-testable parts of the VFIO transport: the IOVA space allocator, and the checks an
 * attach makes before touching VFIO (a missing device, a device that is not NVMe), each of
 * which must say what is wrong and what to run. The transport itself is tested in the QEMU
 * guest (tests/qemu).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unvme/unvme.h"
#include "lib/driver/vfio_iommu.h"
#include "test_util.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_alloc_is_aligned_and_disjoint(void)
{
	struct iova_space s;
	CHECK_EQ(iova_space_init(&s, 4 * GiB, 8 * GiB), 0);
	uint64_t a = iova_alloc(&s, 2 * MiB, 2 * MiB);
	uint64_t b = iova_alloc(&s, 6 * MiB, 2 * MiB);
	uint64_t c = iova_alloc(&s, 4096, 4096);
	uint64_t d = iova_alloc(&s, 2 * MiB, 2 * MiB);
	CHECK_EQ(a, 4 * GiB);
	CHECK_EQ(b, 4 * GiB + 2 * MiB);
	CHECK_EQ(c, 4 * GiB + 8 * MiB);
	CHECK_EQ(d, 4 * GiB + 10 * MiB); /* aligned up past c */
	CHECK_EQ(d % (2 * MiB), 0);
	CHECK_EQ(iova_space_free_bytes(&s), 4 * GiB - 12 * MiB + (2 * MiB - 4096)); /* the hole after c stays free */
	iova_space_fini(&s);
}

static void test_free_coalesces_and_reuses(void)
{
	struct iova_space s;
	CHECK_EQ(iova_space_init(&s, 0x100000000ull, 0x100000000ull + 16 * MiB), 0);
	uint64_t r[8];
	for (int i = 0; i < 8; i++)
		r[i] = iova_alloc(&s, 2 * MiB, 2 * MiB);
	CHECK_EQ(iova_alloc(&s, 2 * MiB, 2 * MiB), IOVA_NONE); /* full */
	CHECK_EQ(iova_space_free_bytes(&s), 0);
	/* Free out of order; neighbours merge back into one range. */
	CHECK_EQ(iova_free(&s, r[3], 2 * MiB), 0);
	CHECK_EQ(iova_free(&s, r[5], 2 * MiB), 0);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(iova_free(&s, r[4], 2 * MiB), 0);
	CHECK_EQ(s.n, 1);
	/* The freed 6 MiB hole is found again, first fit. */
	CHECK_EQ(iova_alloc(&s, 6 * MiB, 2 * MiB), r[3]);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(iova_free(&s, r[i], 2 * MiB), 0);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(iova_space_free_bytes(&s), 16 * MiB);
	iova_space_fini(&s);
}

static void test_bad_frees_are_refused(void)
{
	struct iova_space s;
	CHECK_EQ(iova_space_init(&s, 4 * GiB, 5 * GiB), 0);
	uint64_t a = iova_alloc(&s, 4 * MiB, 2 * MiB);
	CHECK_EQ(iova_free(&s, a, 4 * MiB), 0);
	CHECK_EQ(iova_free(&s, a, 4 * MiB), -EINVAL);         /* double free */
	CHECK_EQ(iova_free(&s, a + MiB, MiB), -EINVAL);       /* inside a free range */
	CHECK_EQ(iova_free(&s, 3 * GiB, MiB), -EINVAL);       /* below the window */
	CHECK_EQ(iova_free(&s, 5 * GiB - MiB, 2 * MiB), -EINVAL); /* past its end */
	CHECK_EQ(iova_space_free_bytes(&s), GiB);
	CHECK_EQ(iova_alloc(&s, 0, 4096), IOVA_NONE);
	CHECK_EQ(iova_alloc(&s, 4096, 3), IOVA_NONE);          /* alignment not a power of two */
	CHECK_EQ(iova_alloc(&s, 2 * GiB, 4096), IOVA_NONE);    /* larger than the space */
	iova_space_fini(&s);
	struct iova_space empty;
	CHECK(iova_space_init(&empty, 5, 5) == -EINVAL);
}

static void test_reserve_carves_holes(void)
{
	struct iova_space s;
	CHECK_EQ(iova_space_init(&s, 0, 8 * GiB), 0);
	/* The x86 MSI window, and everything below 1 MiB. */
	CHECK_EQ(iova_space_reserve(&s, 0xfee00000ull, 0xfef00000ull), 0);
	CHECK_EQ(iova_space_reserve(&s, 0, MiB), 0);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(iova_space_free_bytes(&s), 8 * GiB - MiB - MiB);
	/* Reserving a range that spans a hole removes only what is free. */
	CHECK_EQ(iova_space_reserve(&s, 0xfe000000ull, 0x100000000ull), 0);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.free[0].end, 0xfe000000ull);
	CHECK_EQ(s.free[1].start, 0x100000000ull);
	/* A 4 GiB allocation cannot straddle the hole: it lands above it. */
	CHECK_EQ(iova_alloc(&s, 4 * GiB, 2 * MiB), 0x100000000ull);
	uint64_t x = iova_alloc(&s, 2 * MiB, 2 * MiB);
	CHECK_EQ(x, 2 * MiB);
	CHECK(x + 2 * MiB <= 0xfe000000ull);
	iova_space_fini(&s);
}

static void test_churn_keeps_space_bounded(void)
{
	/* Allocate and free many chunks: with reuse, a small window is enough forever. */
	struct iova_space s;
	CHECK_EQ(iova_space_init(&s, 4 * GiB, 4 * GiB + 64 * MiB), 0);
	uint64_t live[16] = {0};
	int ok = 1;
	for (int round = 0; round < 10000 && ok; round++) {
		int k = round % 16;
		if (live[k])
			ok &= iova_free(&s, live[k], 4 * MiB) == 0;
		live[k] = iova_alloc(&s, 4 * MiB, 2 * MiB);
		ok &= live[k] != IOVA_NONE;
	}
	CHECK(ok);
	iova_space_fini(&s);
}

static void test_dma_memory_gets_distinct_reused_iovas(void)
{
	setenv("UNVME_QUIET", "1", 1);
	void *big1 = unvme_dma_alloc(4 << 20, 4096);
	void *big2 = unvme_dma_alloc(4 << 20, 4096);
	CHECK(big1 && big2);
	uint64_t i1 = unvme_dma_iova(big1), i2 = unvme_dma_iova(big2);
	CHECK(i1 != UINT64_MAX && i2 != UINT64_MAX);
	CHECK(i1 + (4 << 20) <= i2 || i2 + (4 << 20) <= i1);
	CHECK(i1 >= (1ull << 32));
	unvme_dma_free(big1);
	void *big3 = unvme_dma_alloc(4 << 20, 4096);
	CHECK(big3 != NULL);
	CHECK_EQ(unvme_dma_iova(big3), i1); /* the freed IOVA range is used again */
	unvme_dma_free(big2);
	unvme_dma_free(big3);
}

static void test_attach_errors_say_what_to_run(void)
{
	struct unvme_ctrlr *c = NULL;
	unsetenv("UNVME_DEVICES");
	setenv("UNVME_CONFIG", "/dev/null/none", 1);
	unsetenv("UNVME_CONFIG");
	setenv("HOME", "/nonexistent-home", 1);
	CHECK_EQ(unvme_ctrlr_open("0000:7e:1f.7", NULL, &c), -ENODEV);
	CHECK(strstr(unvme_errmsg(), "no such PCI device") != NULL);
	CHECK(strstr(unvme_errmsg(), "setup.sh status") != NULL);
	CHECK(c == NULL);
	/* Any PCI device of this machine that is not NVMe (a virtio or host bridge, usually). */
	DIR *dir = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	int tried = 0;
	while (dir && (e = readdir(dir)) != NULL && !tried) {
		if (e->d_name[0] == '.')
			continue;
		char path[512], cls[32] = "";
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(cls, sizeof(cls), f))
			cls[0] = '\0';
		fclose(f);
		if (strncmp(cls, "0x010802", 8) == 0)
			continue;
		tried = 1;
		CHECK_EQ(unvme_ctrlr_open(e->d_name, NULL, &c), -ENODEV);
		CHECK(strstr(unvme_errmsg(), "not an NVMe controller") != NULL);
	}
	if (dir)
		closedir(dir);
	if (!tried)
		printf("  (no non-NVMe PCI device here: that check is covered in the QEMU guest)\n");
}

TEST_MAIN(TEST(test_alloc_is_aligned_and_disjoint), TEST(test_free_coalesces_and_reuses),
	  TEST(test_bad_frees_are_refused), TEST(test_reserve_carves_holes),
	  TEST(test_churn_keeps_space_bounded), TEST(test_dma_memory_gets_distinct_reused_iovas),
	  TEST(test_attach_errors_say_what_to_run))
