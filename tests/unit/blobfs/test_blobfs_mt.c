/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS with many threads (run under TSan too): each thread does its I/O on a queue pair
 * of its own; writers of different files, readers of one shared file, namespace changes in
 * one directory, fsyncs and the flusher all at once; then everything checked and checked
 * again after a remount.
 */
#include <pthread.h>

#include "bfs_test.h"

#define DEV "emu://bfsmt?ns=mem:256M"
#define THREADS 4

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;
static struct blobfs *gfs;
static _Atomic int failures;

struct job {
	int id;
};

static void *writer(void *arg)
{
	struct job *j = arg;
	char p[64];
	for (int round = 0; round < 6; round++) {
		snprintf(p, sizeof(p), "/w%d_%d", j->id, round);
		size_t len = (size_t)(100000 + j->id * 33333 + round * 7777);
		if (bt_write_file(gfs, p, (uint32_t)(j->id * 100 + round), 0, len, round % 2 == 0) != 0)
			failures++;
		if (bt_verify_file(gfs, p, (uint32_t)(j->id * 100 + round), len) != 0)
			failures++;
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	struct blobfs_file *f;
	if (blobfs_open(gfs, "/shared", O_RDONLY, 0, &f) != 0) {
		failures++;
		return NULL;
	}
	uint8_t b[12288];
	for (int i = 0; i < 400; i++) {
		uint64_t off = (uint64_t)(i * 104729) % ((4u << 20) - sizeof(b));
		if (blobfs_pread(f, b, sizeof(b), off) != (ssize_t)sizeof(b) || bt_check(b, sizeof(b), 42, off) != -1)
			failures++;
	}
	blobfs_close(f);
	return NULL;
}

static void *namer(void *arg)
{
	struct job *j = arg;
	char a[64], b[64];
	for (int i = 0; i < 50; i++) {
		snprintf(a, sizeof(a), "/dir/n%d_%d", j->id, i);
		snprintf(b, sizeof(b), "/dir/m%d_%d", j->id, i);
		struct blobfs_file *f;
		if (blobfs_open(gfs, a, O_RDWR | O_CREAT | O_EXCL, 0644, &f) != 0) {
			failures++;
			continue;
		}
		blobfs_pwrite(f, a, strlen(a), 0);
		blobfs_close(f);
		if (blobfs_rename(gfs, a, b, 0) != 0)
			failures++;
		if (i % 2 && blobfs_unlink(gfs, b) != 0)
			failures++;
		if (i % 10 == 0)
			blobfs_sync(gfs);
	}
	return NULL;
}

static void test_parallel_everything(void)
{
	struct blobfs_opts o = { .cache_size = 16u << 20, .commit_interval_ms = 50, .writeback_chunk = 1u << 20 };
	gfs = bt_fresh(ns, 16384, &o);
	REQUIRE(gfs);
	REQUIRE(bt_write_file(gfs, "/shared", 42, 0, 4u << 20, true) == 0);
	REQUIRE(blobfs_mkdir(gfs, "/dir", 0755) == 0);
	pthread_t t[3 * THREADS];
	struct job jobs[THREADS];
	for (int i = 0; i < THREADS; i++) {
		jobs[i].id = i;
		pthread_create(&t[i], NULL, writer, &jobs[i]);
		pthread_create(&t[THREADS + i], NULL, reader, NULL);
		pthread_create(&t[2 * THREADS + i], NULL, namer, &jobs[i]);
	}
	struct blobfs_stats s;
	uint32_t max_qpairs = 0;
	for (int k = 0; k < 50; k++) {
		blobfs_get_stats(gfs, &s);
		if (s.qpairs > max_qpairs)
			max_qpairs = s.qpairs;
	}
	for (int i = 0; i < 3 * THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(failures, 0);
	/* threads that ended gave their queue pairs back */
	blobfs_get_stats(gfs, &s);
	CHECK(s.qpairs <= 3);
	CHECK(max_qpairs >= 2);
	struct blobfs_dir *d;
	REQUIRE(blobfs_opendir(gfs, "/dir", &d) == 0);
	struct blobfs_dirent e;
	int n = 0;
	while (blobfs_readdir(d, &e) == 1)
		n += e.name[0] == 'm';
	blobfs_closedir(d);
	CHECK_EQ(n, THREADS * 25);
	CHECK_EQ(blobfs_unmount(gfs), 0);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
	gfs = bt_mount(ns, &o);
	REQUIRE(gfs);
	char p[64];
	int bad = 0;
	for (int id = 0; id < THREADS; id++)
		for (int round = 0; round < 6; round++) {
			snprintf(p, sizeof(p), "/w%d_%d", id, round);
			bad += bt_verify_file(gfs, p, (uint32_t)(id * 100 + round),
					      (size_t)(100000 + id * 33333 + round * 7777)) != 0;
		}
	CHECK_EQ(bad, 0);
	blobfs_unmount(gfs);
}

/* Two threads append to one file through one handle: every record lands whole. */
struct app {
	struct blobfs_file *f;
	char c;
};

static void *appender(void *arg)
{
	struct app *a = arg;
	char rec[100];
	memset(rec, a->c, sizeof(rec));
	for (int i = 0; i < 300; i++)
		if (blobfs_append(a->f, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			failures++;
	return NULL;
}

static void test_concurrent_appends(void)
{
	gfs = bt_fresh(ns, 0, NULL);
	REQUIRE(gfs);
	struct blobfs_file *f;
	REQUIRE(blobfs_open(gfs, "/log", O_RDWR | O_CREAT, 0644, &f) == 0);
	struct app a[2] = { { f, 'a' }, { f, 'b' } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, appender, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(failures, 0);
	static char buf[60000];
	CHECK_EQ(blobfs_pread(f, buf, sizeof(buf), 0), 60000);
	int torn = 0;
	for (int i = 0; i < 600; i++)
		for (int k = 1; k < 100; k++)
			torn += buf[i * 100 + k] != buf[i * 100];
	CHECK_EQ(torn, 0);
	blobfs_close(f);
	blobfs_unmount(gfs);
}

static bool setup(void)
{
	ctrlr = bt_open(DEV);
	ns = bt_ns(ctrlr);
	return ns != NULL;
}

static void teardown(void)
{
	unvme_ctrlr_close(ctrlr);
}

BT_MAIN(setup, teardown, TEST(test_parallel_everything), TEST(test_concurrent_appends))
