/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers the BlobFS unit tests share: an emulated controller with a memory (or file)
 * namespace, mkfs + mount in one call, a "crash" that drops the mount as kill -9 would, and
 * deterministic file contents that can be checked byte for byte.
 */
#ifndef BFS_TEST_H
#define BFS_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "test_util.h"
#include "unvme/blobfs.h"

static inline struct unvme_ctrlr *bt_open(const char *uri)
{
	struct unvme_ctrlr *c = NULL;
	int rc = unvme_ctrlr_open(uri, NULL, &c);
	if (rc)
		fprintf(stderr, "  open %s: %d %s\n", uri, rc, unvme_errmsg());
	return c;
}

static inline struct unvme_ns *bt_ns(struct unvme_ctrlr *c)
{
	return c ? unvme_ctrlr_ns(c, unvme_ctrlr_first_nsid(c)) : NULL;
}

/* mkfs with the given cluster size (0: default) and mount with opts (may be NULL). */
static inline struct blobfs *bt_fresh(struct unvme_ns *ns, uint32_t cluster, const struct blobfs_opts *o)
{
	struct blobfs_mkfs_opts m = { .cluster_size = cluster, .force = true };
	int rc = blobfs_mkfs(ns, &m);
	if (rc) {
		fprintf(stderr, "  mkfs: %d %s\n", rc, blobfs_errmsg());
		return NULL;
	}
	struct blobfs *fs = NULL;
	rc = blobfs_mount(ns, o, &fs);
	if (rc)
		fprintf(stderr, "  mount: %d %s\n", rc, blobfs_errmsg());
	return fs;
}

static inline struct blobfs *bt_mount(struct unvme_ns *ns, const struct blobfs_opts *o)
{
	struct blobfs *fs = NULL;
	int rc = blobfs_mount(ns, o, &fs);
	if (rc)
		fprintf(stderr, "  mount: %d %s\n", rc, blobfs_errmsg());
	return fs;
}

static inline uint8_t bt_byte(uint32_t seed, uint64_t off)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (off & 7)));
}

static inline void bt_fill(void *buf, size_t len, uint32_t seed, uint64_t off)
{
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		p[i] = bt_byte(seed, off + i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long bt_check(const void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i] != bt_byte(seed, off + i))
			return (long)i;
	return -1;
}

/* Writes len pattern bytes at off through a fresh handle. */
static inline int bt_write_file(struct blobfs *fs, const char *path, uint32_t seed, uint64_t off,
				size_t len, bool sync)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_RDWR | O_CREAT, 0644, &f);
	if (rc)
		return rc;
	uint8_t *b = malloc(len ? len : 1);
	bt_fill(b, len, seed, off);
	ssize_t w = blobfs_pwrite(f, b, len, off);
	free(b);
	if (w != (ssize_t)len) {
		blobfs_close(f);
		return w < 0 ? (int)w : -EIO;
	}
	if (sync && (rc = blobfs_fsync(f)) != 0) {
		blobfs_close(f);
		return rc;
	}
	return blobfs_close(f);
}

/* 0 when the file holds exactly len pattern bytes from off 0 (size len). */
static inline int bt_verify_file(struct blobfs *fs, const char *path, uint32_t seed, size_t len)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_RDONLY, 0, &f);
	if (rc)
		return rc;
	struct blobfs_stat st;
	blobfs_fstat(f, &st);
	if (st.size != len) {
		fprintf(stderr, "  %s: size %llu, expected %zu\n", path, (unsigned long long)st.size, len);
		blobfs_close(f);
		return -EBADMSG;
	}
	uint8_t *b = malloc(len + 1);
	ssize_t r = blobfs_pread(f, b, len + 1, 0);
	long bad = r == (ssize_t)len ? bt_check(b, len, seed, 0) : -2;
	free(b);
	blobfs_close(f);
	if (bad != -1) {
		fprintf(stderr, "  %s: read %zd, first bad byte %ld\n", path, r, bad);
		return -EBADMSG;
	}
	return 0;
}

/* TEST_MAIN with a setup (returns false to fail the run) and a teardown around the cases. */
#define BT_MAIN(setup, teardown, ...)                                                     \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		static const struct test_case cases[] = { __VA_ARGS__ };                 \
		if (!setup())                                                            \
			return 1;                                                        \
		int passed = 0, failed = 0;                                              \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {          \
			if (argc > 1 && !strstr(cases[i].name, argv[1]))                 \
				continue;                                                \
			test_failures_in_case = 0;                                       \
			cases[i].fn();                                                   \
			printf("%s %s\n", test_failures_in_case ? "FAIL" : "ok  ", cases[i].name); \
			if (test_failures_in_case)                                       \
				failed++;                                                \
			else                                                             \
				passed++;                                                \
		}                                                                        \
		teardown();                                                              \
		printf("%d passed, %d failed\n", passed, failed);                        \
		return failed ? 1 : 0;                                                   \
	}

/* The common case: one emulated controller for every test case, its first namespace in
 * `ns`. The test file defines `static struct unvme_ctrlr *ctrlr; static struct unvme_ns *ns;`. */
#define BT_DEVICE_MAIN(uri, ...)                                                          \
	static bool bt_setup(void)                                                       \
	{                                                                                \
		ctrlr = bt_open(uri);                                                    \
		ns = bt_ns(ctrlr);                                                       \
		return ns != NULL;                                                       \
	}                                                                                \
	static void bt_teardown(void)                                                    \
	{                                                                                \
		unvme_ctrlr_close(ctrlr);                                                \
	}                                                                                \
	BT_MAIN(bt_setup, bt_teardown, __VA_ARGS__)

#endif
