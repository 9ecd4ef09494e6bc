/* SPDX-License-Identifier: BSD-3-Clause */
/* The SDK's slab allocator, single-threaded: classes, alignment, DMA-ness, the budget. */
#include <errno.h>
#include <stdbool.h>

#include "kv_slab.h"
#include "unvme/kv/kv_types.h"
#include "unvme/unvme.h"
#include "test_util.h"

#define MIB ((size_t)1 << 20)

static size_t expected_class(size_t size)
{
	if (size > 2 * MIB)
		return KV_SLAB_MAX_SIZE;
	size_t c = KV_SLAB_MIN_SIZE;
	while (c < size)
		c <<= 1;
	return c;
}

/* Every byte of [p, p + len) is DMA memory and the range is contiguous in IOVA space. */
static bool dma_contiguous(const void *p, size_t len)
{
	uint64_t iova = unvme_dma_iova(p);
	if (iova == UINT64_MAX)
		return false;
	for (size_t off = 4096; off < len; off += 4096)
		if (unvme_dma_iova((const uint8_t *)p + off) != iova + off)
			return false;
	return unvme_dma_iova((const uint8_t *)p + len - 1) == iova + len - 1;
}

static void test_classes_alignment_and_dma(void)
{
	REQUIRE(kv_slab_init(64 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	static const size_t sizes[] = {0, 1, 63, 64, 65, 100, 255, 256, 257, 4095, 4096, 4097,
				       65536, 65537, MIB, MIB + 1, 2 * MIB, 2 * MIB + 1,
				       KV_SLAB_MAX_SIZE};
	void *held[sizeof(sizes) / sizeof(sizes[0])];
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t want = sizes[i] ? sizes[i] : 1;
		uint8_t *p = kv_slab_alloc(sizes[i]);
		held[i] = p;
		REQUIRE(p != NULL);
		size_t cls = kv_slab_size_of(p);
		CHECK_EQ(cls, expected_class(want));
		size_t align = cls > 2 * MIB ? 4096 : cls;
		CHECK_EQ((uintptr_t)p % align, 0);
		CHECK(dma_contiguous(p, cls));
		/* the whole object is writable */
		memset(p, 0xA5, cls);
	}
	/* every class, at its exact size */
	for (size_t cls = KV_SLAB_MIN_SIZE; cls <= 2 * MIB; cls <<= 1) {
		uint8_t *p = kv_slab_alloc(cls);
		REQUIRE(p != NULL);
		CHECK_EQ(kv_slab_size_of(p), cls);
		CHECK_EQ((uintptr_t)p % cls, 0);
		CHECK(dma_contiguous(p, cls));
		kv_slab_free(p);
	}
	CHECK(kv_slab_alloc(KV_SLAB_MAX_SIZE + 1) == NULL);
	int local;
	CHECK_EQ(kv_slab_size_of(&local), 0);
	CHECK_EQ(kv_slab_size_of(NULL), 0);
	/* an interior pointer is not an object start */
	CHECK_EQ(kv_slab_size_of((uint8_t *)held[10] + 64), 0);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		kv_slab_free(held[i]);
	kv_slab_free(NULL);
	kv_slab_fini();
}

/* Keys of up to 255 bytes go out through one PRP entry: their buffer must not cross a page.
 * Also checks that live objects of mixed classes never overlap. */
static void test_small_objects_never_cross_a_page(void)
{
	REQUIRE(kv_slab_init(64 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	enum { N = 20000 };
	static uint8_t *objs[N];
	static size_t lens[N];
	uint32_t seed = 12345;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t len = 1 + (seed >> 8) % 4096; /* 1..4096: every class up to a page */
		objs[i] = kv_slab_alloc(len);
		lens[i] = kv_slab_size_of(objs[i]);
		REQUIRE(objs[i] != NULL);
		CHECK((uintptr_t)objs[i] / 4096 == ((uintptr_t)objs[i] + lens[i] - 1) / 4096);
		if (len <= 256)
			CHECK(lens[i] <= 256);
		/* tag the first and last byte with the object's index */
		objs[i][0] = (uint8_t)i;
		objs[i][lens[i] - 1] = (uint8_t)(i >> 8);
	}
	int bad = 0;
	for (int i = 0; i < N; i++)
		if (objs[i][0] != (uint8_t)i || objs[i][lens[i] - 1] != (uint8_t)(i >> 8))
			bad++;
	CHECK_EQ(bad, 0);
	for (int i = 0; i < N; i++)
		kv_slab_free(objs[i]);
	kv_slab_fini();
}

static void test_budget_exhaustion_and_reuse_across_classes(void)
{
	/* Two regions: four 2 MiB segments. */
	REQUIRE(kv_slab_init(8 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	struct kv_slab_stats st;
	kv_slab_stats(&st);
	CHECK_EQ(st.budget_bytes, 8 * MIB);
	CHECK_EQ(st.reserved_bytes, 0); /* POSIX: taken on demand */

	void *mb[9];
	int n = 0;
	while (n < 9 && (mb[n] = kv_slab_alloc(MIB)) != NULL)
		n++;
	CHECK_EQ(n, 8);
	kv_slab_stats(&st);
	CHECK_EQ(st.reserved_bytes, 8 * MIB);
	CHECK(st.alloc_failures >= 1);
	CHECK_EQ(st.outstanding_bytes, 8 * MIB);
	/* freeing one makes room for one */
	kv_slab_free(mb[3]);
	mb[3] = kv_slab_alloc(MIB);
	CHECK(mb[3] != NULL);
	CHECK(kv_slab_alloc(MIB) == NULL);
	for (int i = 0; i < 8; i++)
		kv_slab_free(mb[i]);

	/* the same memory now serves the largest class: one per region */
	void *big0 = kv_slab_alloc(KV_SLAB_MAX_SIZE);
	void *big1 = kv_slab_alloc(2 * MIB + 1);
	CHECK(big0 != NULL && big1 != NULL);
	CHECK(kv_slab_alloc(KV_SLAB_MAX_SIZE) == NULL);
	CHECK(kv_slab_alloc(64) == NULL); /* nothing left for small objects either */
	kv_slab_free(big1);

	/* half the budget is back: small objects fill exactly two segments */
	static void *small[2 * (2 << 20) / 64 + 1];
	size_t ns = 0;
	while (ns < sizeof(small) / sizeof(small[0]) && (small[ns] = kv_slab_alloc(64)) != NULL)
		ns++;
	CHECK_EQ(ns, 2 * (2 << 20) / 64);
	kv_slab_free(big0);
	for (size_t i = 0; i < ns; i++)
		kv_slab_free(small[i]);
	kv_slab_thread_flush();
	kv_slab_stats(&st);
	CHECK_EQ(st.outstanding_bytes, 0);
	CHECK_EQ(st.free_segment_bytes, 8 * MIB);
	for (int c = 0; c < KV_SLAB_NR_CLASSES; c++)
		CHECK_EQ(st.classes[c].segments, 0);
	kv_slab_fini();
}

/* A failing allocation first takes back what the calling thread has parked in its cache. */
static void test_exhaustion_reclaims_own_thread_cache(void)
{
	REQUIRE(kv_slab_init(4 * MIB, SLAB_MM_ALLOC_HUGE) == 0);
	struct kv_slab_stats st;
	kv_slab_stats(&st);
	CHECK_EQ(st.reserved_bytes, 4 * MIB); /* HUGE: taken up front */
	static void *small[2 * (2 << 20) / 4096];
	size_t n = 0;
	while (n < sizeof(small) / sizeof(small[0]) && (small[n] = kv_slab_alloc(4096)) != NULL)
		n++;
	CHECK_EQ(n, sizeof(small) / sizeof(small[0]));
	for (size_t i = 0; i < n; i++)
		kv_slab_free(small[i]); /* some stay in this thread's cache */
	void *big = kv_slab_alloc(KV_SLAB_MAX_SIZE);
	CHECK(big != NULL);
	kv_slab_free(big);
	/* the same through a size-classed allocation: 1 MiB objects need whole empty segments */
	for (size_t i = 0; i < n; i++)
		CHECK((small[i] = kv_slab_alloc(4096)) != NULL);
	for (size_t i = 0; i < n; i++)
		kv_slab_free(small[i]);
	void *mb[4];
	for (int i = 0; i < 4; i++)
		CHECK((mb[i] = kv_slab_alloc(MIB)) != NULL);
	for (int i = 0; i < 4; i++)
		kv_slab_free(mb[i]);
	kv_slab_fini();
}

static void test_policy_and_refcount(void)
{
	CHECK_EQ(kv_slab_init(0, SLAB_MM_ALLOC_POSIX), -EINVAL);
	CHECK_EQ(kv_slab_init(MIB, 0x42), -EINVAL);
	CHECK(kv_slab_alloc(64) == NULL); /* not initialised */

	REQUIRE(kv_slab_init(MIB, SLAB_MM_ALLOC_POSIX) == 0);
	CHECK_EQ(kv_slab_init(64 * MIB, SLAB_MM_ALLOC_HUGE), 0); /* a reference; first config stays */
	struct kv_slab_stats st;
	kv_slab_stats(&st);
	CHECK_EQ(st.budget_bytes, KV_SLAB_REGION_SIZE); /* 1 MiB rounds up to one region */
	void *p = kv_slab_alloc(100);
	CHECK(p != NULL);
	kv_slab_free(p); /* parked in this thread's cache */
	kv_slab_fini();
	CHECK(kv_slab_alloc(100) != NULL); /* still one reference */
	kv_slab_fini();
	CHECK(kv_slab_alloc(100) == NULL);
	kv_slab_fini(); /* extra: ignored */
	kv_slab_stats(&st);
	CHECK_EQ(st.budget_bytes, 0);

	/* A new slab: the thread cache of the old one must not hand out its stale objects. */
	REQUIRE(kv_slab_init(8 * MIB, SLAB_MM_ALLOC_POSIX) == 0);
	for (int i = 0; i < 200; i++) {
		void *q = kv_slab_alloc(100);
		REQUIRE(q != NULL);
		CHECK(unvme_dma_iova(q) != UINT64_MAX);
		CHECK_EQ(kv_slab_size_of(q), 128);
	}
	kv_slab_fini();
}

/* A budget beyond the machine's memory is refused up front, for either policy, instead of
 * growing into the OOM killer; one that fits still works afterwards. */
static void test_budget_beyond_memory_refused(void)
{
	uint64_t avail = unvme_dma_mem_available();
	REQUIRE(avail != UINT64_MAX);
	CHECK_EQ(kv_slab_init(avail + 1024 * MIB, SLAB_MM_ALLOC_HUGE), -ENOSPC);
	CHECK_EQ(kv_slab_init(avail + 1024 * MIB, SLAB_MM_ALLOC_POSIX), -ENOSPC);
	CHECK_EQ(kv_slab_init((uint64_t)100000 << 40, SLAB_MM_ALLOC_HUGE), -ENOSPC);
	REQUIRE(kv_slab_init(8 * MIB, SLAB_MM_ALLOC_HUGE) == 0);
	void *p = kv_slab_alloc(4096);
	CHECK(p != NULL);
	kv_slab_free(p);
	kv_slab_fini();
}

TEST_MAIN(TEST(test_classes_alignment_and_dma), TEST(test_small_objects_never_cross_a_page),
	  TEST(test_budget_exhaustion_and_reuse_across_classes),
	  TEST(test_exhaustion_reclaims_own_thread_cache), TEST(test_policy_and_refcount),
	  TEST(test_budget_beyond_memory_refused))
