/* SPDX-License-Identifier: BSD-3-Clause */
/* DMA memory: size classes, alignment, IOVA translation, device mappers, bounded
 * bookkeeping under churn, and refusal of more memory than the machine has. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lib/driver/dma.h"
#include "unvme/unvme.h"
#include "test_util.h"

struct mapping {
	void *va;
	uint64_t iova;
	size_t len;
	bool live;
};
static struct mapping maps[256];
static int nmaps;

static int fake_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	(void)ctx;
	maps[nmaps++] = (struct mapping){vaddr, iova, len, true};
	return 0;
}

static void fake_unmap(void *ctx, uint64_t iova, size_t len)
{
	(void)ctx;
	for (int i = 0; i < nmaps; i++)
		if (maps[i].iova == iova && maps[i].len == len)
			maps[i].live = false;
}

static void test_alignment_and_translation(void)
{
	for (size_t size = 1; size <= (4u << 20); size = size * 3 + 1) {
		uint8_t *p = unvme_dma_alloc(size, 64);
		REQUIRE(p != NULL);
		CHECK_EQ((uintptr_t)p % 64, 0);
		size_t contig = 0;
		uint64_t iova = dma_translate(p, &contig);
		CHECK(iova != UINT64_MAX);
		CHECK(contig >= size);
		/* translation is linear inside an allocation */
		CHECK_EQ(dma_translate(p + size - 1, NULL), iova + size - 1);
		p[0] = 1;
		p[size - 1] = 2;
		unvme_dma_free(p);
	}
	uint8_t *page = unvme_dma_alloc(100, 4096);
	CHECK_EQ((uintptr_t)page % 4096, 0);
	/* the buffer can go to a device as it is, and the count shrinks with the offset */
	size_t span = unvme_dma_contig(page);
	CHECK(span >= 100);
	CHECK_EQ(unvme_dma_contig(page + 10), span - 10);
	unvme_dma_free(page);
}

static void test_not_dma_memory(void)
{
	int local = 0;
	CHECK_EQ(unvme_dma_iova(&local), UINT64_MAX);
	CHECK_EQ(unvme_dma_contig(&local), 0);
	CHECK(unvme_dma_alloc(0, 0) == NULL);
	CHECK(unvme_dma_alloc(16, 3) == NULL); /* alignment not a power of two */
}

static void test_free_and_reuse(void)
{
	void *a = unvme_dma_alloc(4096, 4096);
	unvme_dma_free(a);
	void *b = unvme_dma_alloc(4096, 4096);
	CHECK(a == b); /* the class free list hands the object back */
	unvme_dma_free(b);
	void *z = unvme_dma_zalloc(8192, 64);
	bool zero = true;
	for (int i = 0; i < 8192; i++)
		zero &= ((uint8_t *)z)[i] == 0;
	CHECK(zero);
	unvme_dma_free(z);
}

static void test_mappers_see_old_and_new_chunks(void)
{
	void *before = unvme_dma_alloc(1u << 20, 4096);
	struct dma_mapper m = {.map = fake_map, .unmap = fake_unmap, .ctx = &nmaps};
	nmaps = 0;
	CHECK_EQ(dma_mapper_register(&m), 0);
	int existing = nmaps;
	CHECK(existing > 0);
	bool found = false;
	uint64_t iova = unvme_dma_iova(before);
	for (int i = 0; i < nmaps; i++)
		found |= iova >= maps[i].iova && iova < maps[i].iova + maps[i].len;
	CHECK(found);
	/* a large allocation makes a new chunk that must reach the mapper */
	void *big = unvme_dma_alloc(6u << 20, 4096);
	CHECK(nmaps > existing);
	CHECK_EQ(maps[nmaps - 1].iova, unvme_dma_iova(big));
	CHECK(maps[nmaps - 1].len >= (6u << 20));
	unvme_dma_free(big);
	CHECK(!maps[nmaps - 1].live);
	dma_mapper_unregister(&m);
	bool any_live = false;
	for (int i = 0; i < nmaps; i++)
		any_live |= maps[i].live;
	CHECK(!any_live);
	unvme_dma_free(before);
}

/* Chunks made and freed over and over, as a slab set up and torn down repeatedly: the
 * descriptors are recycled (none leaks, none is kept per free), every address translates to
 * its own chunk, and a freed chunk's addresses stop translating. */
static void test_bookkeeping_bounded_under_churn(void)
{
	struct dma_stats base, st;
	dma_stats(&base);
	enum { N = 64 };
	uint8_t *p[N];
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < N; i++) {
			p[i] = unvme_dma_alloc((size_t)(1 + i % 3) << 21, 4096);
			REQUIRE(p[i] != NULL);
		}
		for (int i = 0; i < N; i++) {
			size_t len = (size_t)(1 + i % 3) << 21;
			size_t contig = 0;
			uint64_t iova = dma_translate(p[i] + len - 1, &contig);
			CHECK(iova != UINT64_MAX && contig == 1);
			CHECK_EQ(dma_translate(p[i], NULL), iova - (len - 1));
		}
		dma_stats(&st);
		CHECK_EQ(st.chunks, base.chunks + N);
		for (int i = 0; i < N; i++)
			unvme_dma_free(p[i]);
		CHECK_EQ(unvme_dma_iova(p[0]), UINT64_MAX);
	}
	dma_stats(&st);
	CHECK_EQ(st.chunks, base.chunks);
	CHECK_EQ(st.bytes, base.bytes);
	/* every descriptor ever made is live or free for reuse: at most one block beyond
	 * the N the churn needed at once */
	CHECK(st.chunks + st.free_descriptors <= base.chunks + base.free_descriptors + N + 256);
	CHECK(st.leaves <= base.leaves + 2);
}

/* More than the machine can give is refused with a message, not left to the OOM killer. */
static void test_refuses_more_than_the_machine_has(void)
{
	uint64_t avail = unvme_dma_mem_available();
	REQUIRE(avail != UINT64_MAX && avail > 0);
	void *p = unvme_dma_alloc((size_t)(avail + (64ull << 30)), 4096);
	CHECK(p == NULL);
	CHECK(strstr(unvme_errmsg(), "available") != NULL);
	/* and the allocator still works afterwards */
	void *q = unvme_dma_alloc(4u << 20, 4096);
	CHECK(q != NULL);
	unvme_dma_free(q);
}

TEST_MAIN(TEST(test_alignment_and_translation), TEST(test_not_dma_memory), TEST(test_free_and_reuse),
	  TEST(test_mappers_see_old_and_new_chunks), TEST(test_bookkeeping_bounded_under_churn),
	  TEST(test_refuses_more_than_the_machine_has))
