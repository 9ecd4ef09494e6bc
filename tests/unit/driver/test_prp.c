/* SPDX-License-Identifier: BSD-3-Clause */
/* PRP construction (NVMe Base 2.0 section 4.3.1) from DMA buffers. */
#include <errno.h>

#include "lib/driver/prp.h"
#include "test_util.h"

static struct unvme_qpair qp = {.page_size = 4096};
static struct unvme_req req;

static void build(void *buf, size_t len, struct nvme_sqe *sqe, int *rc)
{
	*sqe = (struct nvme_sqe){0};
	*rc = prp_build(&qp, &req, sqe, buf, len);
}

static void test_one_aligned_page(void)
{
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	struct nvme_sqe sqe;
	int rc;
	build(buf, 4096, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp1, unvme_dma_iova(buf));
	CHECK_EQ(sqe.prp2, 0);
	unvme_dma_free(buf);
}

static void test_unaligned_within_page(void)
{
	uint8_t *buf = unvme_dma_alloc(8192, 4096);
	struct nvme_sqe sqe;
	int rc;
	build(buf + 512, 512, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp1, unvme_dma_iova(buf) + 512);
	CHECK_EQ(sqe.prp2, 0);
	/* ends exactly at the page boundary: still one entry */
	build(buf + 1024, 3072, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp2, 0);
	unvme_dma_free(buf);
}

static void test_page_crossing_uses_prp2(void)
{
	uint8_t *buf = unvme_dma_alloc(16384, 4096);
	uint64_t iova = unvme_dma_iova(buf);
	struct nvme_sqe sqe;
	int rc;
	/* 4 KiB starting mid-page: two pages, PRP2 is the second page's address, offset 0 */
	build(buf + 2048, 4096, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp1, iova + 2048);
	CHECK_EQ(sqe.prp2, iova + 4096);
	/* exactly two aligned pages */
	build(buf, 8192, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp2, iova + 4096);
	unvme_dma_free(buf);
}

static void test_list_for_three_pages(void)
{
	uint8_t *buf = unvme_dma_alloc(65536, 4096);
	uint64_t iova = unvme_dma_iova(buf);
	struct nvme_sqe sqe;
	int rc;
	build(buf, 12288, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp1, iova);
	REQUIRE(req.prp_list != NULL);
	CHECK_EQ(sqe.prp2, req.prp_list_iova);
	CHECK_EQ(req.prp_list[0], iova + 4096);
	CHECK_EQ(req.prp_list[1], iova + 8192);
	/* unaligned start: the list holds every following page, each with offset 0 */
	build(buf + 100, 12288, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sqe.prp1, iova + 100);
	CHECK_EQ(req.prp_list[0], iova + 4096);
	CHECK_EQ(req.prp_list[1], iova + 8192);
	CHECK_EQ(req.prp_list[2], iova + 12288);
	CHECK_EQ(req.prp_list_iova & 4095, 0);
	unvme_dma_free(buf);
}

static void test_largest_transfer_fits_one_list_page(void)
{
	size_t len = 2u << 20;
	uint8_t *buf = unvme_dma_alloc(len + 8192, 4096);
	uint64_t iova = unvme_dma_iova(buf);
	struct nvme_sqe sqe;
	int rc;
	/* 2 MiB from an unaligned start: 1 partial page in PRP1, 512 entries in the list */
	build(buf + 4, len, &sqe, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(req.prp_list[511], iova + 512u * 4096u);
	/* more than one list page of entries is refused rather than chained */
	build(buf + 4, len + 4096, &sqe, &rc);
	CHECK_EQ(rc, -EINVAL);
	unvme_dma_free(buf);
}

static void test_rejects_non_dma_and_misaligned(void)
{
	static uint8_t not_dma[8192];
	struct nvme_sqe sqe;
	int rc;
	build(not_dma, 4096, &sqe, &rc);
	CHECK_EQ(rc, -EINVAL);
	uint8_t *buf = unvme_dma_alloc(4096, 4096);
	build(buf + 2, 16, &sqe, &rc); /* PRP offsets must be dword aligned */
	CHECK_EQ(rc, -EINVAL);
	/* a range running past the end of DMA memory */
	uint8_t *big = unvme_dma_alloc(4u << 20, 4096);
	build(big + (4u << 20) - 4096, 8192, &sqe, &rc);
	CHECK_EQ(rc, -EINVAL);
	unvme_dma_free(buf);
	unvme_dma_free(big);
}

TEST_MAIN(TEST(test_one_aligned_page), TEST(test_unaligned_within_page),
	  TEST(test_page_crossing_uses_prp2), TEST(test_list_for_three_pages),
	  TEST(test_largest_transfer_fits_one_list_page), TEST(test_rejects_non_dma_and_misaligned))
