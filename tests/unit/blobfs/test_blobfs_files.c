/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS files and directories through the public API on an emulated memory namespace:
 * create/read/write/append, holes and growth reading zeros, truncate, rename over, unlink
 * of open files, directories, names at and over 255 bytes, symlinks, attributes, lock
 * files, and everything surviving unmount + mount.
 */
#include "bfs_test.h"

#define DEV "emu://bfsfiles?ns=mem:64M"

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;

static void test_create_write_read(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	struct blobfs_file *f;
	CHECK_EQ(blobfs_open(fs, "/a", O_RDWR, 0, &f), -ENOENT);
	CHECK(strstr(blobfs_errmsg(), "'/a' does not exist") != NULL);
	REQUIRE(blobfs_open(fs, "/a", O_RDWR | O_CREAT, 0640, &f) == 0);
	char buf[100];
	CHECK_EQ(blobfs_pread(f, buf, sizeof(buf), 0), 0);
	CHECK_EQ(blobfs_write(f, "hello ", 6), 6);
	CHECK_EQ(blobfs_write(f, "world", 5), 5);
	CHECK_EQ(blobfs_pread(f, buf, sizeof(buf), 0), 11);
	CHECK(memcmp(buf, "hello world", 11) == 0);
	CHECK_EQ(blobfs_pwrite(f, "W", 1, 6), 1);
	CHECK_EQ(blobfs_pread(f, buf, 5, 6), 5);
	CHECK(memcmp(buf, "World", 5) == 0);
	CHECK_EQ(blobfs_append(f, "!", 1), 1);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, 12);
	CHECK_EQ(st.type, BLOBFS_TYPE_FILE);
	CHECK_EQ(st.mode, 0640);
	CHECK_EQ(st.nlink, 1);
	CHECK_EQ(blobfs_seek(f, 0, SEEK_SET), 0);
	CHECK_EQ(blobfs_read(f, buf, 5), 5);
	CHECK_EQ(blobfs_read(f, buf, 100), 7);
	CHECK(memcmp(buf, " World!", 7) == 0);
	CHECK_EQ(blobfs_read(f, buf, 100), 0);
	CHECK_EQ(blobfs_close(f), 0);
	/* O_EXCL, O_TRUNC, O_APPEND, read-only handles */
	CHECK_EQ(blobfs_open(fs, "/a", O_RDWR | O_CREAT | O_EXCL, 0, &f), -EEXIST);
	REQUIRE(blobfs_open(fs, "/a", O_RDONLY, 0, &f) == 0);
	CHECK_EQ(blobfs_write(f, "x", 1), -EBADF);
	CHECK_EQ(blobfs_ftruncate(f, 0), -EBADF);
	blobfs_close(f);
	REQUIRE(blobfs_open(fs, "/a", O_WRONLY | O_APPEND, 0, &f) == 0);
	CHECK_EQ(blobfs_pread(f, buf, 1, 0), -EBADF);
	CHECK_EQ(blobfs_write(f, "?", 1), 1);
	blobfs_close(f);
	CHECK_EQ(blobfs_stat(fs, "a", &st), 0);
	CHECK_EQ(st.size, 13);
	REQUIRE(blobfs_open(fs, "/a", O_RDWR | O_TRUNC, 0, &f) == 0);
	CHECK_EQ(blobfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, 0);
	blobfs_close(f);
	CHECK_EQ(blobfs_unmount(fs), 0);
}

static void test_large_and_unaligned(void)
{
	struct blobfs *fs = bt_fresh(ns, 16384, NULL);
	REQUIRE(fs);
	/* 5 MiB + 777 bytes in odd pieces, then read back in other odd pieces. */
	size_t len = (5u << 20) + 777;
	uint8_t *b = malloc(len);
	bt_fill(b, len, 7, 0);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/big", O_RDWR | O_CREAT, 0644, &f) == 0);
	size_t off = 0, piece = 1;
	while (off < len) {
		size_t n = BFS_MIN(piece, len - off);
		REQUIRE(blobfs_pwrite(f, b + off, n, off) == (ssize_t)n);
		off += n;
		piece = piece * 3 + 4095;
		if (piece > 700000)
			piece = 13;
	}
	uint8_t *r = malloc(len);
	memset(r, 0, len);
	off = 0;
	piece = 5000;
	while (off < len) {
		size_t n = BFS_MIN(piece, len - off);
		REQUIRE(blobfs_pread(f, r + off, n, off) == (ssize_t)n);
		off += n;
		piece = piece * 7 % 300001 + 1;
	}
	CHECK(memcmp(b, r, len) == 0);
	CHECK_EQ(blobfs_fsync(f), 0);
	blobfs_close(f);
	CHECK_EQ(blobfs_unmount(fs), 0);
	/* Persistent, and read through a cold cache. */
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/big", 7, len), 0);
	blobfs_unmount(fs);
	free(b);
	free(r);
}

static void test_holes_read_zero(void)
{
	struct blobfs *fs = bt_fresh(ns, 65536, NULL);
	REQUIRE(fs);
	/* Fill the device area with a pattern through one file, delete it, so new clusters
	 * hold old data that must never show through. */
	REQUIRE(bt_write_file(fs, "/junk", 99, 0, 8u << 20, true) == 0);
	CHECK_EQ(blobfs_unlink(fs, "/junk"), 0);
	CHECK_EQ(blobfs_sync(fs), 0);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/sparse", O_RDWR | O_CREAT, 0644, &f) == 0);
	/* write 10 bytes at 1 MiB + 100: everything before reads zero */
	CHECK_EQ(blobfs_pwrite(f, "0123456789", 10, (1u << 20) + 100), 10);
	uint8_t *r = malloc(2u << 20);
	CHECK_EQ(blobfs_pread(f, r, 2u << 20, 0), (1u << 20) + 110);
	bool zero = true;
	for (size_t i = 0; i < (1u << 20) + 100; i++)
		zero &= r[i] == 0;
	CHECK(zero);
	CHECK(memcmp(r + (1u << 20) + 100, "0123456789", 10) == 0);
	/* grow by truncate inside the written cluster, then by a write far away */
	CHECK_EQ(blobfs_ftruncate(f, (1u << 20) + 5000), 0);
	CHECK_EQ(blobfs_pwrite(f, "Z", 1, (3u << 20)), 1);
	CHECK_EQ(blobfs_fsync(f), 0);
	blobfs_close(f);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	REQUIRE(blobfs_open(fs, "/sparse", O_RDONLY, 0, &f) == 0);
	uint8_t *all = malloc((3u << 20) + 1);
	CHECK_EQ(blobfs_pread(f, all, (3u << 20) + 10, 0), (3u << 20) + 1);
	size_t nonzero = 0;
	for (size_t i = 0; i < (3u << 20); i++)
		if (all[i] && !(i >= (1u << 20) + 100 && i < (1u << 20) + 110))
			nonzero++;
	CHECK_EQ(nonzero, 0);
	CHECK_EQ(all[3u << 20], 'Z');
	struct blobfs_stat st;
	blobfs_fstat(f, &st);
	/* only the clusters written hold space: a sparse file */
	CHECK(st.blocks * BLOBFS_BLOCK_SIZE <= 4 * 65536);
	blobfs_close(f);
	blobfs_unmount(fs);
	free(r);
	free(all);
}

static void test_truncate(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, NULL);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/t", 3, 0, 100000, false) == 0);
	CHECK_EQ(blobfs_truncate(fs, "/t", 5000), 0);
	CHECK_EQ(bt_verify_file(fs, "/t", 3, 5000), 0);
	/* growing again: the cut tail reads as zeros, not the old bytes */
	CHECK_EQ(blobfs_truncate(fs, "/t", 9000), 0);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/t", O_RDONLY, 0, &f) == 0);
	uint8_t b[9000];
	CHECK_EQ(blobfs_pread(f, b, sizeof(b), 0), 9000);
	CHECK_EQ(bt_check(b, 5000, 3, 0), -1);
	bool zero = true;
	for (int i = 5000; i < 9000; i++)
		zero &= b[i] == 0;
	CHECK(zero);
	blobfs_close(f);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	uint64_t free_before = sf.free_clusters;
	CHECK_EQ(blobfs_truncate(fs, "/t", 0), 0);
	CHECK_EQ(blobfs_sync(fs), 0); /* freed clusters come back once the truncate is durable */
	blobfs_statfs(fs, &sf);
	CHECK(sf.free_clusters > free_before);
	CHECK_EQ(blobfs_truncate(fs, "/", 0), -EISDIR);
	CHECK_EQ(blobfs_truncate(fs, "/nope", 0), -ENOENT);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/t", &st), 0);
	CHECK_EQ(st.size, 0);
	blobfs_unmount(fs);
}

static void test_directories(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_mkdir(fs, "/d", 0755), 0);
	CHECK_EQ(blobfs_mkdir(fs, "/d", 0755), -EEXIST);
	CHECK_EQ(blobfs_mkdir(fs, "/d/e", 0700), 0);
	CHECK_EQ(blobfs_mkdir(fs, "/x/y", 0700), -ENOENT);
	CHECK_EQ(bt_write_file(fs, "/d/e/f1", 1, 0, 10, false), 0);
	CHECK_EQ(bt_write_file(fs, "/d/f0", 1, 0, 10, false), 0);
	CHECK_EQ(blobfs_mkdir(fs, "/d/f0/z", 0700), -ENOTDIR);
	CHECK_EQ(blobfs_rmdir(fs, "/d/e"), -ENOTEMPTY);
	CHECK_EQ(blobfs_rmdir(fs, "/d/f0"), -ENOTDIR);
	CHECK_EQ(blobfs_unlink(fs, "/d/e"), -EISDIR);
	CHECK_EQ(blobfs_rmdir(fs, "/"), -EBUSY);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/d", &st), 0);
	CHECK_EQ(st.type, BLOBFS_TYPE_DIR);
	CHECK_EQ(st.nlink, 3);
	struct blobfs_dir *d;
	REQUIRE(blobfs_opendir(fs, "/d", &d) == 0);
	struct blobfs_dirent e;
	CHECK_EQ(blobfs_readdir(d, &e), 1);
	CHECK_STREQ(e.name, "e");
	CHECK_EQ(e.type, BLOBFS_TYPE_DIR);
	CHECK_EQ(blobfs_readdir(d, &e), 1);
	CHECK_STREQ(e.name, "f0");
	CHECK_EQ(blobfs_readdir(d, &e), 0);
	blobfs_closedir(d);
	CHECK_EQ(blobfs_opendir(fs, "/d/f0", &d), -ENOTDIR);
	/* rename a directory into another, and refuse moving it into itself */
	CHECK_EQ(blobfs_mkdir(fs, "/other", 0755), 0);
	CHECK_EQ(blobfs_rename(fs, "/d", "/d/e/inside", 0), -EINVAL);
	CHECK_EQ(blobfs_rename(fs, "/d", "/other/d", 0), 0);
	CHECK_EQ(bt_verify_file(fs, "/other/d/e/f1", 1, 10), 0);
	CHECK_EQ(blobfs_unlink(fs, "/other/d/e/f1"), 0);
	CHECK_EQ(blobfs_rmdir(fs, "/other/d/e"), 0);
	CHECK_EQ(blobfs_stat(fs, "/other/d/e", &st), -ENOENT);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_stat(fs, "/other/d/f0", &st), 0);
	CHECK_EQ(blobfs_stat(fs, "/d", &st), -ENOENT);
	CHECK_EQ(blobfs_stat(fs, "/", &st), 0);
	CHECK_EQ(st.nlink, 3);
	blobfs_unmount(fs);
}

static void test_names(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	char name[300];
	memset(name, 'n', sizeof(name));
	name[0] = '/';
	name[256] = '\0'; /* 255 bytes after the slash */
	CHECK_EQ(bt_write_file(fs, name, 5, 0, 33, false), 0);
	name[256] = 'n';
	name[257] = '\0'; /* 256 */
	struct blobfs_file *f;
	CHECK_EQ(blobfs_open(fs, name, O_RDWR | O_CREAT, 0644, &f), -ENAMETOOLONG);
	CHECK(strstr(blobfs_errmsg(), "at most 255") != NULL);
	CHECK_EQ(blobfs_mkdir(fs, name, 0755), -ENAMETOOLONG);
	CHECK_EQ(blobfs_open(fs, "/../b", O_RDWR | O_CREAT, 0644, &f), -EINVAL);
	CHECK_EQ(blobfs_mkdir(fs, "/./b", 0755), -EINVAL);
	CHECK_EQ(blobfs_open(fs, "//spaced  name \xe2\x82\xac", O_RDWR | O_CREAT, 0644, &f), 0);
	blobfs_close(f);
	name[256] = '\0';
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, name, 5, 33), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "spaced  name \xe2\x82\xac", &st), 0);
	blobfs_unmount(fs);
}

static void test_rename_over_and_open_unlink(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/old", 1, 0, 70000, false) == 0);
	REQUIRE(bt_write_file(fs, "/new", 2, 0, 30000, false) == 0);
	/* a reader of the replaced file keeps reading its data */
	struct blobfs_file *r;
	REQUIRE(blobfs_open(fs, "/old", O_RDONLY, 0, &r) == 0);
	CHECK_EQ(blobfs_rename(fs, "/new", "/old", BLOBFS_RENAME_NOREPLACE), -EEXIST);
	CHECK_EQ(blobfs_rename(fs, "/new", "/old", 0), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/new", &st), -ENOENT);
	CHECK_EQ(bt_verify_file(fs, "/old", 2, 30000), 0);
	uint8_t b[70000];
	CHECK_EQ(blobfs_pread(r, b, sizeof(b), 0), 70000);
	CHECK_EQ(bt_check(b, 70000, 1, 0), -1);
	CHECK_EQ(blobfs_fstat(r, &st), 0);
	CHECK_EQ(st.nlink, 0);
	blobfs_close(r);
	/* unlink while open for writing: writes still work, the space returns at close */
	struct blobfs_file *w;
	REQUIRE(blobfs_open(fs, "/old", O_RDWR, 0, &w) == 0);
	CHECK_EQ(blobfs_unlink(fs, "/old"), 0);
	CHECK_EQ(blobfs_pwrite(w, "abc", 3, 50000), 3);
	CHECK_EQ(blobfs_pread(w, b, 3, 50000), 3);
	CHECK(memcmp(b, "abc", 3) == 0);
	blobfs_close(w);
	CHECK_EQ(blobfs_rename(fs, "/missing", "/x", 0), -ENOENT);
	CHECK_EQ(blobfs_mkdir(fs, "/dir", 0755), 0);
	CHECK_EQ(bt_write_file(fs, "/file", 1, 0, 1, false), 0);
	CHECK_EQ(blobfs_rename(fs, "/file", "/dir", 0), -EISDIR);
	CHECK_EQ(blobfs_rename(fs, "/dir", "/file", 0), -ENOTDIR);
	CHECK_EQ(blobfs_rename(fs, "/file", "/file", 0), 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_stat(fs, "/old", &st), -ENOENT);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.files, 3); /* root, /dir, /file */
	CHECK_EQ(sf.clusters - sf.free_clusters, 1);
	blobfs_unmount(fs);
}

static void test_symlink_setattr_lock(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_symlink(fs, "../target/file", "/ln"), 0);
	char t[64];
	CHECK_EQ(blobfs_readlink(fs, "/ln", t, sizeof(t)), 14);
	CHECK_STREQ(t, "../target/file");
	CHECK_EQ(blobfs_readlink(fs, "/ln", t, 4), 14);
	CHECK_STREQ(t, "../");
	struct blobfs_file *f;
	CHECK_EQ(blobfs_open(fs, "/ln", O_RDONLY, 0, &f), -ELOOP);
	REQUIRE(bt_write_file(fs, "/f", 1, 0, 10, false) == 0);
	CHECK_EQ(blobfs_readlink(fs, "/f", t, sizeof(t)), -EINVAL);
	struct blobfs_stat st = { .mode = 0600, .uid = 1000, .gid = 100, .mtime_ns = 1234567890123ll };
	CHECK_EQ(blobfs_setattr(fs, "/f", &st, BLOBFS_SET_MODE | BLOBFS_SET_UID | BLOBFS_SET_GID |
						 BLOBFS_SET_MTIME), 0);
	struct blobfs_lock *l1, *l2;
	CHECK_EQ(blobfs_lock_file(fs, "/LOCK", &l1), 0);
	CHECK_EQ(blobfs_lock_file(fs, "/LOCK", &l2), -EAGAIN);
	CHECK_EQ(blobfs_unlock_file(l1), 0);
	CHECK_EQ(blobfs_lock_file(fs, "/LOCK", &l2), 0);
	CHECK_EQ(blobfs_unlock_file(l2), 0);
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	CHECK_EQ(blobfs_stat(fs, "/f", &st), 0);
	CHECK_EQ(st.mode, 0600);
	CHECK_EQ(st.uid, 1000);
	CHECK_EQ(st.gid, 100);
	CHECK_EQ(st.mtime_ns, 1234567890123ll);
	CHECK_EQ(blobfs_stat(fs, "/ln", &st), 0);
	CHECK_EQ(st.type, BLOBFS_TYPE_SYMLINK);
	CHECK_EQ(st.size, 14);
	CHECK_EQ(blobfs_stat(fs, "/LOCK", &st), 0);
	blobfs_unmount(fs);
}

static void test_many_files(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, NULL);
	REQUIRE(fs);
	char p[64];
	for (int d = 0; d < 10; d++) {
		snprintf(p, sizeof(p), "/dir%d", d);
		REQUIRE(blobfs_mkdir(fs, p, 0755) == 0);
		for (int i = 0; i < 200; i++) {
			snprintf(p, sizeof(p), "/dir%d/file%03d", d, i);
			REQUIRE(bt_write_file(fs, p, (uint32_t)(d * 1000 + i), 0, (size_t)(i * 37 % 5000), false) == 0);
		}
	}
	blobfs_unmount(fs);
	fs = bt_mount(ns, NULL);
	REQUIRE(fs);
	int bad = 0;
	for (int d = 0; d < 10; d++)
		for (int i = 0; i < 200; i++) {
			snprintf(p, sizeof(p), "/dir%d/file%03d", d, i);
			bad += bt_verify_file(fs, p, (uint32_t)(d * 1000 + i), (size_t)(i * 37 % 5000)) != 0;
		}
	CHECK_EQ(bad, 0);
	struct blobfs_dir *dir;
	REQUIRE(blobfs_opendir(fs, "/dir3", &dir) == 0);
	struct blobfs_dirent e;
	int n = 0;
	while (blobfs_readdir(dir, &e) == 1)
		n++;
	CHECK_EQ(n, 200);
	blobfs_closedir(dir);
	blobfs_unmount(fs);
}

static void test_read_only_and_second_mount(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, NULL);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/f", 9, 0, 1000, false) == 0);
	struct blobfs *fs2 = NULL;
	CHECK_EQ(blobfs_mount(ns, NULL, &fs2), -EBUSY);
	CHECK(strstr(blobfs_errmsg(), "mounted already") != NULL);
	struct blobfs_opts ro = { .read_only = true };
	CHECK_EQ(blobfs_mount(ns, &ro, &fs2), -EBUSY);
	blobfs_unmount(fs);
	REQUIRE(blobfs_mount(ns, &ro, &fs) == 0);
	CHECK_EQ(blobfs_mount(ns, &ro, &fs2), 0); /* read-only mounts share */
	CHECK_EQ(bt_verify_file(fs, "/f", 9, 1000), 0);
	struct blobfs_file *f;
	CHECK_EQ(blobfs_open(fs, "/f", O_RDWR, 0, &f), -EROFS);
	CHECK_EQ(blobfs_mkdir(fs, "/d", 0755), -EROFS);
	CHECK_EQ(blobfs_unlink(fs, "/f"), -EROFS);
	struct blobfs *fs3 = NULL;
	CHECK_EQ(blobfs_mount(ns, NULL, &fs3), -EBUSY);
	blobfs_unmount(fs2);
	blobfs_unmount(fs);
}

BT_DEVICE_MAIN(DEV,
	TEST(test_create_write_read), TEST(test_large_and_unaligned), TEST(test_holes_read_zero),
	TEST(test_truncate), TEST(test_directories), TEST(test_names),
	TEST(test_rename_over_and_open_unlink), TEST(test_symlink_setattr_lock),
	TEST(test_many_files), TEST(test_read_only_and_second_mount))
