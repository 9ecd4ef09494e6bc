/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a FUSE low-level server and ext4-minded programs need from BlobFS: inode handles
 * that outlive their names (stat, open, truncate of an unlinked or renamed-over inode),
 * FIFOs, devices and sockets that survive a crash, a file without a name (O_TMPFILE) that
 * a crash leaves nothing of, fallocate's modes with Linux's errors (punch-hole and
 * zero-range replayed after a crash, fresh clusters reading zeros), and statfs counts that
 * are exact right after removes.
 */
#include "bfs_test.h"

#define DEV "emu://bfsinodes?ns=mem:64M"

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;

static const struct blobfs_opts quiet = { .commit_interval_ms = 3600 * 1000 };

static void test_handles_outlive_names(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	struct blobfs_inode *root = blobfs_root(fs), *d, *a, *b;
	struct blobfs_stat st;
	struct blobfs_node dir = { .type = BLOBFS_TYPE_DIR, .mode = 0750, .uid = 12, .gid = 34 };
	REQUIRE(blobfs_make_at(fs, root, "d", &dir, &d, &st) == 0);
	CHECK_EQ(st.uid, 12);
	CHECK_EQ(st.gid, 34);
	CHECK_EQ(st.nlink, 2);
	CHECK_EQ(blobfs_make_at(fs, root, "d", &dir, NULL, NULL), -EEXIST);
	CHECK_EQ(blobfs_make_at(fs, root, "x/y", &dir, NULL, NULL), -EINVAL);
	CHECK_EQ(blobfs_lookup(fs, root, "nope", &a, NULL), -ENOENT);
	struct blobfs_file *f;
	REQUIRE(blobfs_open_at(fs, d, "a", O_RDWR | O_CREAT, 0600, 5, 6, &f, &a) == 0);
	CHECK_EQ(blobfs_pwrite(f, "first", 5, 0), 5);
	REQUIRE(bt_write_file(fs, "/d/b", 9, 0, 3000, false) == 0);
	REQUIRE(blobfs_lookup(fs, d, "b", &b, &st) == 0);
	CHECK_EQ(st.size, 3000);
	/* renamed over: the old inode keeps its data through the handle, with no link */
	REQUIRE(blobfs_rename_at(fs, d, "b", d, "a", 0) == 0);
	CHECK_EQ(blobfs_inode_stat(fs, a, &st), 0);
	CHECK_EQ(st.nlink, 0);
	CHECK_EQ(st.size, 5);
	CHECK_EQ(st.uid, 5);
	char buf[8];
	CHECK_EQ(blobfs_pread(f, buf, 8, 0), 5);
	CHECK(memcmp(buf, "first", 5) == 0);
	struct blobfs_stat set = { .size = 2 };
	CHECK_EQ(blobfs_inode_setattr(fs, a, &set, BLOBFS_SET_SIZE), 0);
	CHECK_EQ(blobfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, 2);
	/* the new name holds the other inode */
	struct blobfs_inode *again;
	REQUIRE(blobfs_lookup(fs, d, "a", &again, &st) == 0);
	CHECK(again == b);
	CHECK_EQ(st.size, 3000);
	blobfs_inode_put(fs, again, 1);
	/* unlinked, still open by handle (not by a file handle) */
	REQUIRE(blobfs_remove_at(fs, d, "a", false) == 0);
	CHECK_EQ(blobfs_inode_stat(fs, b, &st), 0);
	CHECK_EQ(st.nlink, 0);
	struct blobfs_file *g;
	REQUIRE(blobfs_open_inode(fs, b, O_RDONLY, &g) == 0);
	CHECK_EQ(blobfs_pread(g, buf, 8, 0), 8);
	blobfs_close(g);
	blobfs_inode_put(fs, b, 1);
	/* a removed directory: its handle works, nothing can be made in it */
	REQUIRE(blobfs_remove_at(fs, root, "d", true) == 0);
	CHECK_EQ(blobfs_inode_stat(fs, d, &st), 0);
	CHECK_EQ(st.nlink, 0);
	CHECK_EQ(blobfs_make_at(fs, d, "z", &dir, NULL, NULL), -ENOENT);
	CHECK_EQ(blobfs_close(f), 0);
	blobfs_inode_put(fs, a, 1);
	blobfs_inode_put(fs, d, 1);
	blobfs_inode_put(fs, root, 1);
	struct blobfs_statfs sf;
	CHECK_EQ(blobfs_statfs(fs, &sf), 0);
	CHECK_EQ(sf.files, 1);
	CHECK_EQ(sf.free_clusters, sf.clusters);
	blobfs_unmount(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
}

static void test_special_files_survive_a_crash(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	struct blobfs_inode *root = blobfs_root(fs);
	struct blobfs_node n[] = {
		{ .type = BLOBFS_TYPE_FIFO, .mode = 0644 },
		{ .type = BLOBFS_TYPE_CHR, .mode = 0600, .rdev = (1u << 8) | 3 },
		{ .type = BLOBFS_TYPE_BLK, .mode = 0660, .rdev = (7u << 8) | 2 },
		{ .type = BLOBFS_TYPE_SOCK, .mode = 0755 },
	};
	const char *names[] = { "fifo", "chr", "blk", "sock" };
	for (int i = 0; i < 4; i++)
		CHECK_EQ(blobfs_make_at(fs, root, names[i], &n[i], NULL, NULL), 0);
	struct blobfs_file *f;
	CHECK_EQ(blobfs_open(fs, "/fifo", O_RDONLY, 0, &f), -ENXIO);
	REQUIRE(blobfs_sync(fs) == 0);
	/* four in the checkpoint, one in the journal */
	blobfs_inode_put(fs, root, 1);
	blobfs_unmount(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	root = blobfs_root(fs);
	struct blobfs_node late = { .type = BLOBFS_TYPE_CHR, .mode = 0600, .rdev = 0x1234 };
	CHECK_EQ(blobfs_make_at(fs, root, "late", &late, NULL, NULL), 0);
	CHECK_EQ(blobfs_commit(fs), 0);
	blobfs_inode_put(fs, root, 1);
	bfs_simulate_crash(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK_EQ(r.specials, 5);
	CHECK_EQ(r.files, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	struct blobfs_stat st;
	for (int i = 0; i < 4; i++) {
		char p[16];
		snprintf(p, sizeof(p), "/%s", names[i]);
		REQUIRE(blobfs_stat(fs, p, &st) == 0);
		CHECK_EQ(st.type, n[i].type);
		CHECK_EQ(st.mode, n[i].mode);
		CHECK_EQ(st.rdev, n[i].rdev);
		CHECK_EQ(st.size, 0);
	}
	REQUIRE(blobfs_stat(fs, "/late", &st) == 0);
	CHECK_EQ(st.rdev, 0x1234);
	blobfs_unmount(fs);
}

static void test_version_1_refuses_new_features(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	fs->sb.version = 1; /* white box: a file system made by the version 1 library */
	struct blobfs_inode *root = blobfs_root(fs);
	struct blobfs_node fifo = { .type = BLOBFS_TYPE_FIFO, .mode = 0644 };
	CHECK_EQ(blobfs_make_at(fs, root, "fifo", &fifo, NULL, NULL), -EOPNOTSUPP);
	CHECK(strstr(blobfs_errmsg(), "version 2") != NULL);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/f", O_RDWR | O_CREAT, 0644, &f) == 0);
	CHECK_EQ(blobfs_fallocate(f, BLOBFS_FALLOC_KEEP_SIZE | BLOBFS_FALLOC_PUNCH_HOLE, 0, 4096), -EOPNOTSUPP);
	CHECK_EQ(blobfs_fallocate(f, 0, 0, 4096), 0);
	blobfs_close(f);
	blobfs_inode_put(fs, root, 1);
	fs->sb.version = BLOBFS_VERSION;
	blobfs_unmount(fs);
}

static void test_tmpfile_leaves_nothing(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	struct blobfs_inode *root = blobfs_root(fs);
	struct blobfs_file *t, *u;
	CHECK_EQ(blobfs_tmpfile_at(fs, root, O_RDONLY, 0600, 0, 0, &t), -EINVAL);
	REQUIRE(blobfs_tmpfile_at(fs, root, O_RDWR, 0600, 0, 0, &t) == 0);
	uint8_t *b = malloc(200000);
	bt_fill(b, 200000, 3, 0);
	CHECK_EQ(blobfs_pwrite(t, b, 200000, 0), 200000);
	CHECK_EQ(blobfs_fsync(t), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_fstat(t, &st), 0);
	CHECK_EQ(st.nlink, 0);
	CHECK_EQ(st.size, 200000);
	memset(b, 0, 200000);
	CHECK_EQ(blobfs_pread(t, b, 200000, 0), 200000);
	CHECK_EQ(bt_check(b, 200000, 3, 0), -1);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	CHECK(sf.free_clusters < sf.clusters);
	/* closed: its space is back */
	REQUIRE(blobfs_tmpfile_at(fs, root, O_RDWR, 0600, 0, 0, &u) == 0);
	CHECK_EQ(blobfs_pwrite(u, b, 100000, 0), 100000);
	CHECK_EQ(blobfs_close(t), 0);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.clusters - sf.free_clusters, (100000 + 4095) / 4096);
	CHECK_EQ(sf.files, 1);
	/* a crash with one open: nothing of it after the replay */
	CHECK_EQ(blobfs_fsync(u), 0);
	blobfs_inode_put(fs, root, 1);
	bfs_simulate_crash(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
	CHECK_EQ(r.used_clusters, 0);
	free(b);
}

static void test_fallocate_modes(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, &quiet);
	REQUIRE(fs);
	/* A file's old data, freed and durable: fallocate must never show it. */
	REQUIRE(bt_write_file(fs, "/old", 7, 0, 1u << 20, true) == 0);
	REQUIRE(blobfs_unlink(fs, "/old") == 0);
	REQUIRE(blobfs_sync(fs) == 0);
	struct blobfs_file *f, *ro;
	REQUIRE(blobfs_open(fs, "/f", O_RDWR | O_CREAT, 0644, &f) == 0);
	REQUIRE(blobfs_open(fs, "/f", O_RDONLY, 0, &ro) == 0);
	/* Linux's errors */
	CHECK_EQ(blobfs_fallocate(f, 0x8, 0, 4096), -EOPNOTSUPP);           /* collapse-range */
	CHECK_EQ(blobfs_fallocate(f, BLOBFS_FALLOC_PUNCH_HOLE, 0, 4096), -EOPNOTSUPP);
	CHECK_EQ(blobfs_fallocate(f, BLOBFS_FALLOC_PUNCH_HOLE | BLOBFS_FALLOC_ZERO_RANGE |
				  BLOBFS_FALLOC_KEEP_SIZE, 0, 4096), -EOPNOTSUPP);
	CHECK_EQ(blobfs_fallocate(f, 0, 0, 0), -EINVAL);
	CHECK_EQ(blobfs_fallocate(ro, 0, 0, 4096), -EBADF);
	CHECK_EQ(blobfs_fallocate(f, 0, BLOBFS_FILE_MAX, 4096), -EFBIG);
	blobfs_close(ro);
	/* allocate: size grows, the space reads zeros (not /old's bytes) and is counted */
	REQUIRE(blobfs_fallocate(f, 0, 0, 1u << 20) == 0);
	struct blobfs_stat st;
	blobfs_fstat(f, &st);
	CHECK_EQ(st.size, 1u << 20);
	CHECK_EQ(st.blocks, 256);
	uint8_t *b = malloc(1u << 20), *z = calloc(1, 1u << 20);
	CHECK_EQ(blobfs_pread(f, b, 1u << 20, 0), 1 << 20);
	CHECK(memcmp(b, z, 1u << 20) == 0);
	/* keep-size: preallocation past the end, the size stays */
	REQUIRE(blobfs_fallocate(f, BLOBFS_FALLOC_KEEP_SIZE, 1u << 20, 1u << 20) == 0);
	blobfs_fstat(f, &st);
	CHECK_EQ(st.size, 1u << 20);
	CHECK_EQ(st.blocks, 512);
	/* data, then a hole punched in the middle (unaligned edges) */
	bt_fill(b, 1u << 20, 11, 0);
	CHECK_EQ(blobfs_pwrite(f, b, 1u << 20, 0), 1 << 20);
	CHECK_EQ(blobfs_fsync(f), 0);
	REQUIRE(blobfs_fallocate(f, BLOBFS_FALLOC_KEEP_SIZE | BLOBFS_FALLOC_PUNCH_HOLE, 5000, 100000) == 0);
	blobfs_fstat(f, &st);
	CHECK_EQ(st.size, 1u << 20);
	/* whole clusters 8192..102400 are gone: 23 clusters */
	CHECK_EQ(st.blocks, 512 - 23);
	/* zero-range over the first bytes: zeros, still allocated */
	REQUIRE(blobfs_fallocate(f, BLOBFS_FALLOC_ZERO_RANGE, 200000, 10000) == 0);
	CHECK_EQ(blobfs_fsync(f), 0);
	/* it all replays after a crash */
	blobfs_close(f);
	bfs_simulate_crash(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	REQUIRE(blobfs_open(fs, "/f", O_RDWR, 0, &f) == 0);
	blobfs_fstat(f, &st);
	CHECK_EQ(st.size, 1u << 20);
	CHECK_EQ(st.blocks, 256 - 23); /* the preallocation past the end lived in memory only */
	uint8_t *g = malloc(1u << 20);
	CHECK_EQ(blobfs_pread(f, g, 1u << 20, 0), 1 << 20);
	memset(b + 5000, 0, 100000);
	memset(b + 200000, 0, 10000);
	CHECK(memcmp(g, b, 1u << 20) == 0);
	/* a write into the hole fills it again */
	CHECK_EQ(blobfs_pwrite(f, "abc", 3, 50000), 3);
	CHECK_EQ(blobfs_pread(f, g, 4, 49999), 4);
	CHECK(memcmp(g, "\0abc", 4) == 0);
	blobfs_close(f);
	blobfs_unmount(fs);
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
	free(b);
	free(z);
	free(g);
}

/* Clusters a deleted file had, given to fallocate (the file system has no others): they read
 * zeros, never the deleted file's bytes. */
static void test_fallocate_never_shows_old_data(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, &quiet);
	REQUIRE(fs);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	size_t len = (size_t)(sf.free_clusters - 64) * 4096;
	REQUIRE(bt_write_file(fs, "/old", 9, 0, len, true) == 0);
	REQUIRE(blobfs_unlink(fs, "/old") == 0);
	REQUIRE(blobfs_sync(fs) == 0);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/new", O_RDWR | O_CREAT, 0644, &f) == 0);
	REQUIRE(blobfs_fallocate(f, 0, 0, len) == 0);
	REQUIRE(blobfs_fallocate(f, BLOBFS_FALLOC_KEEP_SIZE, len, 4096) == 0);
	uint8_t *b = malloc(len);
	CHECK_EQ(blobfs_pread(f, b, len, 0), (ssize_t)len);
	size_t nonzero = 0;
	for (size_t i = 0; i < len; i++)
		nonzero += b[i] != 0;
	CHECK_EQ(nonzero, 0);
	/* and after a remount, read from the device */
	blobfs_close(f);
	blobfs_unmount(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	REQUIRE(blobfs_open(fs, "/new", O_RDONLY, 0, &f) == 0);
	CHECK_EQ(blobfs_pread(f, b, len, 0), (ssize_t)len);
	nonzero = 0;
	for (size_t i = 0; i < len; i++)
		nonzero += b[i] != 0;
	CHECK_EQ(nonzero, 0);
	blobfs_close(f);
	blobfs_unmount(fs);
	free(b);
}

static void test_statfs_exact_after_removes(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, &quiet);
	REQUIRE(fs);
	struct blobfs_statfs before, sf;
	blobfs_statfs(fs, &before);
	REQUIRE(blobfs_mkdir(fs, "/t", 0755) == 0);
	char p[32];
	for (int i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "/t/f%d", i);
		REQUIRE(bt_write_file(fs, p, (uint32_t)i, 0, 10000, false) == 0);
	}
	REQUIRE(blobfs_sync(fs) == 0);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(before.free_clusters - sf.free_clusters, 50 * 3);
	CHECK_EQ(sf.files, 52);
	/* removed, not committed: free at once, as on ext4 */
	for (int i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "/t/f%d", i);
		REQUIRE(blobfs_unlink(fs, p) == 0);
	}
	REQUIRE(blobfs_rmdir(fs, "/t") == 0);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.free_clusters, before.free_clusters);
	CHECK_EQ(sf.files, 1);
	/* held by a reference only (FUSE's kernel side): free too; by an open handle: used */
	REQUIRE(bt_write_file(fs, "/h", 1, 0, 40960, true) == 0);
	REQUIRE(bt_write_file(fs, "/o", 2, 0, 40960, true) == 0);
	struct blobfs_inode *root = blobfs_root(fs), *h;
	REQUIRE(blobfs_lookup(fs, root, "h", &h, NULL) == 0);
	struct blobfs_file *o;
	REQUIRE(blobfs_open(fs, "/o", O_RDONLY, 0, &o) == 0);
	REQUIRE(blobfs_unlink(fs, "/h") == 0);
	REQUIRE(blobfs_unlink(fs, "/o") == 0);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(before.free_clusters - sf.free_clusters, 10);
	blobfs_close(o);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.free_clusters, before.free_clusters);
	/* and the space is really there, the removed file's too while its reference is still
	 * held (FUSE's FORGET may come late): a file as large as everything is written */
	REQUIRE(blobfs_sync(fs) == 0);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.free_clusters, before.free_clusters);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/all", O_RDWR | O_CREAT, 0644, &f) == 0);
	CHECK_EQ(blobfs_fallocate(f, 0, 0, sf.free_clusters * 4096), 0);
	blobfs_close(f);
	/* its clusters went to that file: it can no longer be opened, only stat'ed and put */
	struct blobfs_file *g;
	CHECK_EQ(blobfs_open_inode(fs, h, O_RDONLY, &g), -ENOENT);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_inode_stat(fs, h, &st), 0);
	CHECK_EQ(st.nlink, 0);
	blobfs_inode_put(fs, h, 1);
	blobfs_inode_put(fs, root, 1);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.free_clusters, 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.free_clusters, 0);
	blobfs_unmount(fs);
}

/* The clusters of a removed file that only a reference still holds (FUSE's, until its FORGET)
 * go to a write short of space, and only once the removal is durable. A kill -9 after the
 * new file's data reached those clusters, before anything was synced, must find the old file
 * either gone or whole: never back, holding the new file's bytes. */
static void test_reclaimed_space_survives_a_crash(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, &quiet);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/old", 5, 0, 409600, true) == 0);
	struct blobfs_inode *root = blobfs_root(fs), *h;
	REQUIRE(blobfs_lookup(fs, root, "old", &h, NULL) == 0);
	REQUIRE(blobfs_unlink(fs, "/old") == 0); /* its record not committed (commit interval 1 h) */
	struct blobfs_statfs sf;
	REQUIRE(blobfs_statfs(fs, &sf) == 0);
	size_t len = (size_t)sf.free_clusters * 4096u;
	/* written back at close (its data on the device), not synced */
	CHECK_EQ(bt_write_file(fs, "/new", 6, 0, len, false), 0);
	bfs_simulate_crash(fs); /* the reference still held, as FUSE's would be */
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	struct blobfs_stat st;
	if (blobfs_stat(fs, "/old", &st) == 0)
		CHECK_EQ(bt_verify_file(fs, "/old", 5, 409600), 0);
	/* here it is gone: the commit that gave the space back made the removal durable */
	CHECK_EQ(blobfs_stat(fs, "/old", &st), -ENOENT);
	blobfs_unmount(fs);
}

BT_DEVICE_MAIN(DEV, TEST(test_handles_outlive_names), TEST(test_special_files_survive_a_crash),
	       TEST(test_version_1_refuses_new_features), TEST(test_tmpfile_leaves_nothing),
	       TEST(test_fallocate_modes), TEST(test_fallocate_never_shows_old_data),
	       TEST(test_statfs_exact_after_removes),
	       TEST(test_reclaimed_space_survives_a_crash))
