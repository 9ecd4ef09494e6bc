/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The value memory of in-memory KV namespaces: class boundaries, alignment, reuse of freed
 * objects (memory is kept, not returned), and values that never overlap.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/ns/kv_vmem.h"
#include "tests/unit/test_util.h"

static void test_classes(void)
{
	/* every length fits its class, and the class below would not hold it */
	for (uint32_t len = 1; len <= (2u << 20); len += len < 4096 ? 1 : 509) {
		unsigned c = kv_vmem_class_of(len);
		REQUIRE(c < KV_VMEM_CLASSES);
		CHECK(kv_vmem_class_size(c) >= len);
		if (c > 0)
			CHECK(kv_vmem_class_size(c - 1) < len);
		/* at most a quarter wasted above 128 bytes */
		if (len > 128)
			CHECK((uint64_t)kv_vmem_class_size(c) * 4 <= (uint64_t)len * 5 + 4);
	}
	CHECK_EQ(kv_vmem_class_size(kv_vmem_class_of(4096)), 4096);
	CHECK_EQ(kv_vmem_class_size(kv_vmem_class_of(1024)), 1024);
	CHECK_EQ(kv_vmem_class_of(2u << 20), KV_VMEM_CLASSES - 1);
	CHECK_EQ(kv_vmem_class_size(KV_VMEM_CLASSES - 1), 2u << 20);
}

static void test_alloc_free_reuse(void)
{
	struct kv_vmem m;
	kv_vmem_init(&m);
	CHECK(kv_vmem_alloc(&m, 0) == NULL);
	CHECK(kv_vmem_alloc(&m, (2u << 20) + 1) == NULL);

	enum { N = 1000 };
	uint8_t *v[N];
	for (unsigned i = 0; i < N; i++) {
		v[i] = kv_vmem_alloc(&m, 4096);
		REQUIRE(v[i] != NULL);
		CHECK(((uintptr_t)v[i] & 4095) == 0);   /* 4 KiB values are page aligned */
		memset(v[i], (int)(i & 0xff), 4096);
	}
	for (unsigned i = 0; i < N; i++)                 /* no two values overlap */
		CHECK(v[i][0] == (uint8_t)i && v[i][4095] == (uint8_t)i);
	uint64_t mapped = m.mapped;
	for (unsigned i = 0; i < N; i++)
		kv_vmem_free(&m, v[i], 4096);
	/* freed objects come back before new memory is mapped */
	for (unsigned i = 0; i < N; i++) {
		uint8_t *p = kv_vmem_alloc(&m, 4000);   /* same class */
		REQUIRE(p != NULL);
		bool known = false;
		for (unsigned j = 0; j < N && !known; j++)
			known = p == v[j];
		CHECK(known);
	}
	CHECK_EQ(m.mapped, mapped);

	/* a spread of sizes, each written whole, then all checked */
	uint8_t *w[64];
	uint32_t wl[64];
	for (unsigned i = 0; i < 64; i++) {
		wl[i] = 1u + (uint32_t)((i * 2654435761u) % (2u << 20));
		w[i] = kv_vmem_alloc(&m, wl[i]);
		REQUIRE(w[i] != NULL);
		memset(w[i], (int)i, wl[i]);
	}
	for (unsigned i = 0; i < 64; i++)
		CHECK(w[i][0] == i && w[i][wl[i] - 1] == i);
	for (unsigned i = 0; i < 64; i++)
		kv_vmem_free(&m, w[i], wl[i]);
	kv_vmem_free(&m, NULL, 10);
	kv_vmem_destroy(&m);
}

/* Reserved memory exists at once (UNVME_EMU_PREFAULT=1 without hugepages) and values come
 * from it; without the switch or hugepages the pool stays thin, as before. */
static void test_reserve(void)
{
	struct kv_vmem m;
	kv_vmem_init(&m);
	unsetenv("UNVME_EMU_PREFAULT");
	int thin = kv_vmem_reserve(&m, 16u << 20);
	CHECK(thin == 0 || thin == 1); /* 1 only when hugepages are reserved on this machine */
	kv_vmem_destroy(&m);

	setenv("UNVME_EMU_PREFAULT", "1", 1);
	kv_vmem_init(&m);
	long long before = test_rss_bytes();
	CHECK_EQ(kv_vmem_reserve(&m, 16u << 20), 1);
	CHECK(test_rss_bytes() - before >= 15ll << 20);
	CHECK(m.reserved >= 16u << 20);
	uint8_t *v = kv_vmem_alloc(&m, 4096);
	REQUIRE(v != NULL);
	memset(v, 7, 4096);
	CHECK(m.mapped == m.reserved); /* no region mapped beyond the reserved one */
	kv_vmem_free(&m, v, 4096);
	kv_vmem_destroy(&m);
	unsetenv("UNVME_EMU_PREFAULT");
}

TEST_MAIN(TEST(test_classes), TEST(test_alloc_free_reuse), TEST(test_reserve))
