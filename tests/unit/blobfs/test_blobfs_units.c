/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS building blocks alone, without a device: the cluster allocator, extent lists and
 * journal records (their byte form round trip and the rejection of malformed ones).
 */
#include "bfs_test.h"

static void test_alloc_contiguous_and_goal(void)
{
	struct bfs_alloc a;
	REQUIRE(bfs_alloc_init(&a, 1000) == 0);
	uint64_t c;
	CHECK_EQ(bfs_alloc_take(&a, 0, 10, &c), 10);
	CHECK_EQ(c, 0);
	/* the goal is honoured when free */
	CHECK_EQ(bfs_alloc_take(&a, 500, 20, &c), 20);
	CHECK_EQ(c, 500);
	/* a goal inside a used run moves to the next free run that is long enough */
	CHECK_EQ(bfs_alloc_take(&a, 505, 5, &c), 5);
	CHECK_EQ(c, 520);
	CHECK_EQ(bfs_alloc_nfree(&a), 1000 - 35);
	/* a hole of 3 between used clusters is skipped for a run of 5 */
	bfs_alloc_free(&a, 2, 3);
	CHECK_EQ(bfs_alloc_take(&a, 0, 5, &c), 5);
	CHECK(c >= 10);
	CHECK_EQ(bfs_alloc_take(&a, 0, 3, &c), 3);
	CHECK_EQ(c, 2);
	/* marking: double use and out of range are refused */
	CHECK(!bfs_alloc_mark(&a, 500, 1));
	CHECK(!bfs_alloc_mark(&a, 999, 2));
	CHECK(bfs_alloc_mark(&a, 900, 10));
	CHECK(bfs_alloc_is_used(&a, 905));
	bfs_alloc_fini(&a);
}

static void test_alloc_fragmented_and_full(void)
{
	struct bfs_alloc a;
	REQUIRE(bfs_alloc_init(&a, 130) == 0);
	uint64_t c;
	/* every other cluster used: no run of 2 exists, the longest (1) is returned */
	for (uint64_t i = 0; i < 130; i += 2)
		CHECK(bfs_alloc_mark(&a, i, 1));
	CHECK_EQ(bfs_alloc_take(&a, 64, 4, &c), 1);
	CHECK_EQ(c % 2, 1);
	uint64_t got = 1;
	while (bfs_alloc_take(&a, 0, 8, &c))
		got++;
	CHECK_EQ(got, 65);
	CHECK_EQ(bfs_alloc_nfree(&a), 0);
	CHECK_EQ(bfs_alloc_take(&a, 0, 1, &c), 0);
	/* wrap-around from a goal near the end */
	bfs_alloc_free(&a, 3, 1);
	CHECK_EQ(bfs_alloc_take(&a, 129, 1, &c), 1);
	CHECK_EQ(c, 3);
	bfs_alloc_fini(&a);
}

static void test_extents(void)
{
	struct bfs_extents x = {0};
	uint64_t p, run;
	uint32_t fl;
	CHECK(!bfs_ext_lookup(&x, 5, &p, &run, NULL));
	CHECK_EQ(run, UINT64_MAX);
	CHECK_EQ(bfs_ext_add(&x, 0, 100, 4, BFS_UNLOGGED), 0);
	CHECK_EQ(bfs_ext_add(&x, 4, 104, 4, BFS_UNLOGGED), 0); /* merges */
	CHECK_EQ(x.n, 1);
	CHECK_EQ(bfs_ext_add(&x, 10, 200, 2, 0), 0);
	CHECK_EQ(bfs_ext_add(&x, 8, 108, 2, 0), 0); /* flags differ: no merge */
	CHECK_EQ(x.n, 3);
	CHECK_EQ(bfs_ext_add(&x, 9, 300, 1, 0), -EEXIST);
	CHECK(bfs_ext_lookup(&x, 6, &p, &run, &fl));
	CHECK_EQ(p, 106);
	CHECK_EQ(run, 2);
	CHECK_EQ(fl, BFS_UNLOGGED);
	CHECK(!bfs_ext_lookup(&x, 12, &p, &run, NULL));
	/* logging the first 6 clusters splits the first extent */
	CHECK_EQ(bfs_ext_set_logged(&x, 0, 6, NULL, NULL), 0);
	CHECK(bfs_ext_lookup(&x, 5, &p, &run, &fl));
	CHECK_EQ(fl, 0);
	CHECK_EQ(run, 1);
	CHECK(bfs_ext_lookup(&x, 6, &p, &run, &fl));
	CHECK_EQ(fl, BFS_UNLOGGED);
	/* logging the rest merges everything contiguous: 0..9 -> 100..109, 10..11 -> 200 */
	CHECK_EQ(bfs_ext_set_logged(&x, 0, 12, NULL, NULL), 0);
	CHECK_EQ(x.n, 2);
	CHECK_EQ(bfs_ext_clusters(&x, 0, 0), 12);
	/* punch only what has the flag; trim from a middle */
	CHECK_EQ(bfs_ext_add(&x, 20, 400, 5, BFS_UNLOGGED), 0);
	CHECK_EQ(bfs_ext_punch(&x, 0, 100, BFS_UNLOGGED, NULL, NULL), 0);
	CHECK_EQ(bfs_ext_clusters(&x, 0, 0), 12);
	CHECK_EQ(bfs_ext_clusters(&x, BFS_UNLOGGED, BFS_UNLOGGED), 0);
	bfs_ext_trim(&x, 3, NULL, NULL);
	CHECK_EQ(bfs_ext_clusters(&x, 0, 0), 3);
	CHECK_EQ(x.n, 1);
	bfs_ext_free(&x);
}

static void roundtrip(const struct bfs_rec *r)
{
	uint8_t buf[8192];
	size_t n = bfs_rec_encode(r, buf);
	CHECK_EQ(n, bfs_rec_size(r));
	struct bfs_rec d;
	CHECK_EQ(bfs_rec_decode(buf, n, &d), n);
	CHECK_EQ(d.type, r->type);
	CHECK_EQ(d.ino, r->ino);
	CHECK_EQ(d.parent, r->parent);
	CHECK_EQ(d.parent2, r->parent2);
	CHECK_EQ(d.size, r->size);
	CHECK_EQ(d.lclu, r->lclu);
	CHECK_EQ(d.pclu, r->pclu);
	CHECK_EQ(d.count, r->count);
	CHECK_EQ(d.name_len, r->name_len);
	if (r->name_len)
		CHECK(memcmp(d.name, r->name, r->name_len) == 0);
	if (r->name2_len)
		CHECK(memcmp(d.name2, r->name2, r->name2_len) == 0);
	CHECK_EQ(d.link_len, r->link_len);
	/* every shorter prefix is malformed, never read past its end */
	for (size_t k = 0; k < n; k++)
		CHECK_EQ(bfs_rec_decode(buf, k, &d), 0);
}

static void test_records(void)
{
	char longname[255];
	memset(longname, 'q', sizeof(longname));
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_CREATE, .ino = 77, .parent = 1, .ftype = 3,
				     .mode = 0777, .ctime = 5, .name = longname, .name_len = 255,
				     .link = "target", .link_len = 6 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_UNLINK, .parent = 9, .name = "x", .name_len = 1 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_RENAME, .parent = 2, .parent2 = 3, .name = "ab",
				     .name_len = 2, .name2 = "cde", .name2_len = 3 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_MAP, .ino = 5, .lclu = 1ull << 40, .pclu = 99, .count = 7 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_SETSIZE, .ino = 5, .size = 123456789 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_TRUNCATE, .ino = 5, .size = 1 });
	roundtrip(&(struct bfs_rec){ .type = BFS_REC_SETATTR, .ino = 5, .mask = 3, .mode = 0600 });
	/* unknown type and a length that lies */
	uint8_t buf[64] = { 99, 0, 4, 0 };
	struct bfs_rec d;
	CHECK_EQ(bfs_rec_decode(buf, sizeof(buf), &d), 0);
	size_t n = bfs_rec_encode(&(struct bfs_rec){ .type = BFS_REC_MAP, .ino = 1, .count = 1 }, buf);
	buf[2]++;
	CHECK_EQ(bfs_rec_decode(buf, n + 10, &d), 0);
}

static bool setup(void)
{
	return true;
}

static void teardown(void)
{
}

BT_MAIN(setup, teardown,
	TEST(test_alloc_contiguous_and_goal), TEST(test_alloc_fragmented_and_full), TEST(test_extents),
	TEST(test_records))
