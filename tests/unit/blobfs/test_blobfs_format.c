/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The superblock and mkfs, and the errors around them: a namespace without a file system, a
 * damaged superblock (and fsck restoring it from its copy), a newer format version, mkfs
 * over an existing or mounted file system, geometry limits, a full device and full metadata
 * (ENOSPC that changes nothing), and mkfs on first mount.
 */
#include "bfs_test.h"

#define DEV "emu://bfsfmt?ns=mem:32M&ns=mem:4M&ns=mem:32M:4096"

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns, *tiny, *ns4k;
static struct unvme_qpair *qp;

static int raw_block(struct unvme_ns *n, uint64_t blk, void *buf, bool write)
{
	uint32_t lpb = BLOBFS_BLOCK_SIZE / unvme_ns_lba_size(n);
	return write ? unvme_write_sync(n, qp, buf, blk * lpb, lpb) : unvme_read_sync(n, qp, buf, blk * lpb, lpb);
}

static void wipe_block0(struct unvme_ns *n)
{
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	raw_block(n, 0, b, true);
	raw_block(n, unvme_ns_nlbas(n) * unvme_ns_lba_size(n) / 4096 - 1, b, true);
	unvme_dma_free(b);
}

static void test_no_fs(void)
{
	wipe_block0(ns);
	struct blobfs *fs = NULL;
	CHECK_EQ(blobfs_mount(ns, NULL, &fs), BLOBFS_ENOFS);
	CHECK(strstr(blobfs_errmsg(), "no BlobFS") != NULL);
	CHECK_STREQ(blobfs_strerror(BLOBFS_ENOFS), "no file system");
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), BLOBFS_ENOFS);
	/* format_if_empty makes one, but only where there is none */
	struct blobfs_opts o = { .format_if_empty = true };
	REQUIRE(blobfs_mount(ns, &o, &fs) == 0);
	REQUIRE(bt_write_file(fs, "/keep", 1, 0, 100, false) == 0);
	blobfs_unmount(fs);
	REQUIRE(blobfs_mount(ns, &o, &fs) == 0);
	CHECK_EQ(bt_verify_file(fs, "/keep", 1, 100), 0);
	blobfs_unmount(fs);
}

static void test_mkfs_refuses_existing_and_mounted(void)
{
	REQUIRE(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .label = "first" }) == 0);
	CHECK_EQ(blobfs_mkfs(ns, NULL), -EEXIST);
	CHECK(strstr(blobfs_errmsg(), "label 'first'") != NULL);
	struct blobfs *fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true }), -EBUSY);
	struct blobfs_statfs sf;
	CHECK_EQ(blobfs_statfs(fs, &sf), 0);
	CHECK_STREQ(sf.label, "first");
	CHECK_EQ(sf.cluster_size, 4096); /* the default below 1 GiB */
	blobfs_unmount(fs);
	CHECK_EQ(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .cluster_size = 1u << 20 }), 0);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.cluster_size, 1u << 20);
	CHECK_EQ(sf.files, 1);
	blobfs_unmount(fs);
}

static void test_geometry_limits(void)
{
	CHECK_EQ(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .cluster_size = 3000 }), -EINVAL);
	CHECK(strstr(blobfs_errmsg(), "power of two") != NULL);
	CHECK_EQ(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .cluster_size = 128u << 20 }), -EINVAL);
	CHECK_EQ(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .label =
		"a label that is much longer than thirty-one bytes" }), -EINVAL);
	CHECK_EQ(blobfs_mkfs(tiny, NULL), -EINVAL);
	CHECK(strstr(blobfs_errmsg(), "at least 8 MiB") != NULL);
	/* 4 KiB LBAs work the same */
	REQUIRE(blobfs_mkfs(ns4k, &(struct blobfs_mkfs_opts){ .force = true }) == 0);
	struct blobfs *fs = bt_mount(ns4k, NULL);
	REQUIRE(fs);
	CHECK_EQ(bt_write_file(fs, "/x", 4, 3, 100000, true), 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns4k, NULL);
	REQUIRE(fs);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/x", O_RDONLY, 0, &f) == 0);
	uint8_t b[100003];
	CHECK_EQ(blobfs_pread(f, b, sizeof(b), 0), 100003);
	CHECK_EQ(bt_check(b + 3, 100000, 4, 3), -1);
	blobfs_close(f);
	blobfs_unmount(fs);
}

static void test_bad_superblock_and_repair(void)
{
	REQUIRE(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true }) == 0);
	struct blobfs *fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/data", 11, 0, 50000, true) == 0);
	blobfs_unmount(fs);
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	REQUIRE(raw_block(ns, 0, b, false) == 0);
	b[40] ^= 0x5a; /* inside the geometry: the checksum catches it */
	REQUIRE(raw_block(ns, 0, b, true) == 0);
	CHECK_EQ(blobfs_mount(ns, NULL, &fs), BLOBFS_EBADSB);
	CHECK(strstr(blobfs_errmsg(), "checksum mismatch") != NULL);
	CHECK(strstr(blobfs_errmsg(), "fsck --repair") != NULL);
	CHECK_STREQ(blobfs_strerror(BLOBFS_EBADSB), "bad superblock or metadata");
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 1);
	CHECK_EQ(r.repaired, 0);
	CHECK_EQ(blobfs_fsck(ns, BLOBFS_FSCK_REPAIR, NULL, &r), 0);
	CHECK_EQ(r.repaired, 1);
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK(r.clean_unmount);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/data", 11, 50000), 0);
	blobfs_unmount(fs);
	/* A newer version is refused by name. */
	REQUIRE(raw_block(ns, 0, b, false) == 0);
	struct bfs_sb_disk sb;
	memcpy(&sb, b, sizeof(sb));
	sb.version = 9;
	bfs_sb_seal(&sb);
	memcpy(b, &sb, sizeof(sb));
	REQUIRE(raw_block(ns, 0, b, true) == 0);
	CHECK_EQ(blobfs_mount(ns, NULL, &fs), -EPROTONOSUPPORT);
	CHECK(strstr(blobfs_errmsg(), "version 9") != NULL);
	unvme_dma_free(b);
}

static void test_enospc_changes_nothing(void)
{
	/* 32 MiB with 1 MiB clusters: about 28 clusters of data. */
	REQUIRE(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .cluster_size = 1u << 20 }) == 0);
	struct blobfs *fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	uint64_t total = sf.clusters;
	REQUIRE(total > 4);
	REQUIRE(bt_write_file(fs, "/a", 1, 0, (size_t)(total - 2) << 20, true) == 0);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/b", O_RDWR | O_CREAT, 0644, &f) == 0);
	uint8_t *big = malloc(3u << 20);
	bt_fill(big, 3u << 20, 2, 0);
	CHECK_EQ(blobfs_pwrite(f, big, 3u << 20, 0), -ENOSPC);
	CHECK(strstr(blobfs_errmsg(), "no space left") != NULL);
	struct blobfs_stat st;
	blobfs_fstat(f, &st);
	CHECK_EQ(st.size, 0);
	/* what fits still goes in */
	CHECK_EQ(blobfs_pwrite(f, big, 2u << 20, 0), 2u << 20);
	CHECK_EQ(blobfs_pwrite(f, big, 1, 2u << 20), -ENOSPC);
	CHECK_EQ(blobfs_fsync(f), 0);
	blobfs_close(f);
	/* deleting frees the space for others */
	CHECK_EQ(blobfs_unlink(fs, "/a"), 0);
	CHECK_EQ(bt_write_file(fs, "/c", 3, 0, 3u << 20, true), 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/c", 3, 3u << 20), 0);
	REQUIRE(blobfs_open(fs, "/b", O_RDONLY, 0, &f) == 0);
	CHECK_EQ(blobfs_pread(f, big, 3u << 20, 0), 2u << 20);
	CHECK_EQ(bt_check(big, 2u << 20, 2, 0), -1);
	blobfs_close(f);
	blobfs_unmount(fs);
	free(big);
}

static void test_metadata_full(void)
{
	/* A 64 KiB metadata slot holds a few hundred files. */
	REQUIRE(blobfs_mkfs(ns, &(struct blobfs_mkfs_opts){ .force = true, .meta_size = 64u << 10,
							   .cluster_size = 4096 }) == 0);
	struct blobfs *fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	char p[300];
	int made = 0, rc = 0;
	for (int i = 0; i < 5000; i++) {
		snprintf(p, sizeof(p), "/%0200d", i);
		struct blobfs_file *f;
		rc = blobfs_open(fs, p, O_RDWR | O_CREAT, 0644, &f);
		if (rc)
			break;
		blobfs_close(f);
		made++;
	}
	CHECK_EQ(rc, -ENOSPC);
	CHECK(strstr(blobfs_errmsg(), "metadata") != NULL);
	CHECK(made > 100);
	struct blobfs_stat st;
	snprintf(p, sizeof(p), "/%0200d", made);
	CHECK_EQ(blobfs_stat(fs, p, &st), -ENOENT);
	blobfs_unmount(fs);
	/* everything made is there after a remount (the checkpoint fits) */
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.files, (uint64_t)made + 1);
	blobfs_unmount(fs);
}

static bool setup(void)
{
	ctrlr = bt_open(DEV);
	if (!ctrlr)
		return false;
	ns = unvme_ctrlr_ns(ctrlr, 1);
	tiny = unvme_ctrlr_ns(ctrlr, 2);
	ns4k = unvme_ctrlr_ns(ctrlr, 3);
	return unvme_qpair_create(ctrlr, NULL, &qp) == 0;
}

static void teardown(void)
{
	unvme_qpair_destroy(qp);
	unvme_ctrlr_close(ctrlr);
}

BT_MAIN(setup, teardown,
	TEST(test_no_fs), TEST(test_mkfs_refuses_existing_and_mounted), TEST(test_geometry_limits),
	TEST(test_bad_superblock_and_repair), TEST(test_enospc_changes_nothing),
	TEST(test_metadata_full))
