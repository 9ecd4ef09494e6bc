/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The read cache and its three controls: readahead (sequential detection, threshold and
 * size per file system and per file), retain (keep cached data after a hit and after close,
 * or evict it), direct I/O (bypass, coherent with buffered data, zero copy from DMA memory);
 * plus eviction under a small cache, dropping the cache, and write-back in chunks.
 */
#include "bfs_test.h"

#define DEV "emu://bfscache?ns=mem:128M"
#define FSIZE (8u << 20)

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;

static struct blobfs *setup_file(const struct blobfs_opts *o)
{
	struct blobfs *fs = bt_fresh(ns, 65536, o);
	if (fs && bt_write_file(fs, "/f", 1, 0, FSIZE, true) != 0) {
		blobfs_unmount(fs);
		return NULL;
	}
	if (fs)
		blobfs_drop_cache(fs);
	return fs;
}

/* Reads the whole file in pieces of bs (sequentially, or in a scrambled order). With
 * settle, each read waits for the readahead it started, so what the counters show does not
 * depend on how the threads were scheduled. */
static int read_all_s(struct blobfs *fs, size_t bs, bool random, const struct blobfs_file_opts *fo,
		      bool settle)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, "/f", O_RDONLY, 0, &f);
	if (rc)
		return rc;
	if (fo)
		blobfs_file_set_opts(f, fo);
	uint8_t *b = malloc(bs);
	size_t n = FSIZE / bs;
	for (size_t i = 0; i < n && !rc; i++) {
		size_t k = random ? (i * 7919) % n : i;
		if (blobfs_pread(f, b, bs, k * bs) != (ssize_t)bs || bt_check(b, bs, 1, k * bs) != -1)
			rc = -EBADMSG;
		if (settle)
			bfs_ra_wait_idle(fs);
	}
	free(b);
	blobfs_close(f);
	return rc;
}

static int read_all(struct blobfs *fs, size_t bs, bool random, const struct blobfs_file_opts *fo)
{
	return read_all_s(fs, bs, random, fo, false);
}

static void test_readahead_sequential_only(void)
{
	struct blobfs *fs = setup_file(NULL);
	REQUIRE(fs);
	struct blobfs_stats a, b;
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all_s(fs, 4096, false, NULL, true), 0);
	blobfs_get_stats(fs, &b);
	uint64_t pages = FSIZE / 4096;
	CHECK(b.prefetch_pages - a.prefetch_pages > pages / 2);
	CHECK(b.prefetch_hits - a.prefetch_hits > pages / 2);
	/* the reader itself fetched only the first pages before readahead took over */
	CHECK(b.cache_misses - a.cache_misses < pages / 4);
	blobfs_drop_cache(fs);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all(fs, 4096, true, NULL), 0);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.prefetch_pages - a.prefetch_pages, 0);
	CHECK_EQ(b.cache_misses - a.cache_misses, pages);
	/* per file: readahead off for this file */
	blobfs_drop_cache(fs);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all(fs, 4096, false, &(struct blobfs_file_opts){ .prefetch = -1 }), 0);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.prefetch_pages - a.prefetch_pages, 0);
	blobfs_unmount(fs);

	/* off for the file system, on for one file with its own threshold */
	struct blobfs_opts o = { .no_prefetch = true };
	fs = setup_file(&o);
	REQUIRE(fs);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all(fs, 4096, false, NULL), 0);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.prefetch_pages - a.prefetch_pages, 0);
	blobfs_drop_cache(fs);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all_s(fs, 4096, false, &(struct blobfs_file_opts){ .prefetch = 1,
		.prefetch_threshold = 8192, .prefetch_size = 256u << 10 }, true), 0);
	blobfs_get_stats(fs, &b);
	CHECK(b.prefetch_pages - a.prefetch_pages > pages / 2);
	blobfs_unmount(fs);
}

static void test_retain_policy(void)
{
	struct blobfs *fs = setup_file(NULL);
	REQUIRE(fs);
	struct blobfs_stats a, b;
	CHECK_EQ(read_all(fs, 65536, false, NULL), 0);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all(fs, 65536, true, NULL), 0);
	blobfs_get_stats(fs, &b);
	/* retained across close: the second pass hits everything; and nothing was evicted
	 * while the pool could still grow */
	CHECK_EQ(b.cache_misses, a.cache_misses);
	CHECK_EQ(b.cache_hits - a.cache_hits, FSIZE / 4096);
	CHECK_EQ(b.evictions, 0);
	blobfs_unmount(fs);

	struct blobfs_opts o = { .no_retain = true, .no_prefetch = true };
	fs = setup_file(&o);
	REQUIRE(fs);
	CHECK_EQ(read_all(fs, 65536, false, NULL), 0);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(read_all(fs, 65536, false, NULL), 0);
	blobfs_get_stats(fs, &b);
	/* evicted after the read: the second pass reads the device again */
	CHECK_EQ(b.cache_misses - a.cache_misses, FSIZE / 4096);
	/* but a buffer read in part stays until its end is read */
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/f", O_RDONLY, 0, &f) == 0);
	uint8_t buf[4096];
	blobfs_get_stats(fs, &a);
	CHECK_EQ(blobfs_pread(f, buf, 4096, 0), 4096);
	CHECK_EQ(blobfs_pread(f, buf, 4096, 0), 4096);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.cache_misses - a.cache_misses, 1);
	CHECK_EQ(b.cache_hits - a.cache_hits, 1);
	/* per file retain on a no-retain mount */
	struct blobfs_file_opts fo = { .retain = 1 };
	blobfs_file_set_opts(f, &fo);
	CHECK_EQ(blobfs_pread(f, buf, 4096, 65536 - 4096), 4096);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(blobfs_pread(f, buf, 4096, 65536 - 4096), 4096);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.cache_misses - a.cache_misses, 0);
	blobfs_close(f);
	blobfs_unmount(fs);
}

static void test_direct_io(void)
{
	struct blobfs *fs = setup_file(NULL);
	REQUIRE(fs);
	struct blobfs_stats a, b;
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/f", O_RDWR | O_DIRECT, 0, &f) == 0);
	/* zero copy into DMA memory: the device reads exactly what was asked */
	uint8_t *dma = unvme_dma_alloc(1u << 20, 4096);
	blobfs_get_stats(fs, &a);
	CHECK_EQ(blobfs_pread(f, dma, 1u << 20, 1u << 20), 1u << 20);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(bt_check(dma, 1u << 20, 1, 1u << 20), -1);
	CHECK_EQ(b.dev_read_bytes - a.dev_read_bytes, 1u << 20);
	CHECK_EQ(b.cache_bytes, a.cache_bytes); /* nothing cached */
	/* unaligned, through the bounce buffer */
	uint8_t odd[10001];
	CHECK_EQ(blobfs_pread(f, odd, sizeof(odd), 12345), (ssize_t)sizeof(odd));
	CHECK_EQ(bt_check(odd, sizeof(odd), 1, 12345), -1);
	/* direct write from DMA memory and from an unaligned buffer; buffered readers see it */
	bt_fill(dma, 1u << 20, 2, 0);
	CHECK_EQ(blobfs_pwrite(f, dma, 1u << 20, 0), 1u << 20);
	bt_fill(odd, sizeof(odd), 3, 0);
	CHECK_EQ(blobfs_pwrite(f, odd, sizeof(odd), 3333333), (ssize_t)sizeof(odd));
	blobfs_close(f);
	REQUIRE(blobfs_open(fs, "/f", O_RDWR, 0, &f) == 0);
	uint8_t *r = malloc(1u << 20);
	CHECK_EQ(blobfs_pread(f, r, 1u << 20, 0), 1u << 20);
	CHECK_EQ(bt_check(r, 1u << 20, 2, 0), -1);
	CHECK_EQ(blobfs_pread(f, r, sizeof(odd), 3333333), (ssize_t)sizeof(odd));
	CHECK_EQ(bt_check(r, sizeof(odd), 3, 0), -1);
	CHECK_EQ(bt_check(r - 0, 0, 3, 0), -1);
	/* a buffered write still in the cache is seen by a direct read */
	CHECK_EQ(blobfs_pwrite(f, "buffered", 8, 7000000), 8);
	struct blobfs_file *d;
	REQUIRE(blobfs_open(fs, "/f", O_RDONLY | O_DIRECT, 0, &d) == 0);
	char s[8];
	CHECK_EQ(blobfs_pread(d, s, 8, 7000000), 8);
	CHECK(memcmp(s, "buffered", 8) == 0);
	/* a direct write past the end leaves zeros behind it */
	CHECK_EQ(blobfs_pwrite(f, "x", 1, FSIZE + 100000), 1);
	blobfs_close(d);
	blobfs_close(f);
	blobfs_unmount(fs);
	/* the same with direct I/O set for the whole mount */
	struct blobfs_opts o = { .direct_read = true, .direct_write = true };
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	REQUIRE(blobfs_open(fs, "/f", O_RDWR, 0, &f) == 0);
	CHECK_EQ(blobfs_pwrite(f, "tail", 4, FSIZE + 200000), 4);
	CHECK_EQ(blobfs_pread(f, r, 8, FSIZE + 199998), 6);
	CHECK(r[0] == 0 && r[1] == 0 && memcmp(r + 2, "tail", 4) == 0);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.cache_bytes, 0);
	blobfs_close(f);
	blobfs_unmount(fs);
	unvme_dma_free(dma);
	free(r);
}

static void test_small_cache_evicts(void)
{
	struct blobfs_opts o = { .cache_size = 1u << 20, .writeback_chunk = 256u << 10 };
	struct blobfs *fs = setup_file(&o);
	REQUIRE(fs);
	CHECK_EQ(read_all(fs, 100000 / 4096 * 4096, false, NULL), 0);
	CHECK_EQ(read_all(fs, 4096, true, NULL), 0);
	struct blobfs_stats s;
	blobfs_get_stats(fs, &s);
	CHECK(s.evictions > 100);
	CHECK(s.cache_bytes <= (1u << 20));
	/* writing more than the cache holds: write-back keeps it going */
	CHECK_EQ(bt_write_file(fs, "/g", 9, 0, 5u << 20, false), 0);
	blobfs_get_stats(fs, &s);
	CHECK(s.dev_write_bytes >= (4u << 20));
	CHECK(s.dirty_bytes <= (1u << 20));
	CHECK_EQ(bt_verify_file(fs, "/g", 9, 5u << 20), 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/g", 9, 5u << 20), 0);
	blobfs_unmount(fs);
}

static void test_drop_cache(void)
{
	struct blobfs *fs = setup_file(NULL);
	REQUIRE(fs);
	CHECK_EQ(read_all(fs, 65536, false, NULL), 0);
	struct blobfs_stats a, b;
	blobfs_get_stats(fs, &a);
	CHECK_EQ(blobfs_drop_cache(fs), 0);
	CHECK_EQ(read_all(fs, 65536, true, NULL), 0);
	blobfs_get_stats(fs, &b);
	CHECK_EQ(b.cache_misses - a.cache_misses, FSIZE / 4096);
	/* dirty data is written back, not lost, by a drop */
	CHECK_EQ(bt_write_file(fs, "/d", 4, 0, 100000, false), 0);
	CHECK_EQ(blobfs_drop_cache(fs), 0);
	CHECK_EQ(bt_verify_file(fs, "/d", 4, 100000), 0);
	blobfs_unmount(fs);
}

BT_DEVICE_MAIN(DEV,
	TEST(test_readahead_sequential_only), TEST(test_retain_policy), TEST(test_direct_io),
	TEST(test_small_cache_evicts), TEST(test_drop_cache))
