/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS with many threads (run under TSan too): each thread does its I/O on a queue pair
 * of its own; writers of different files, readers of one shared file, namespace changes in
 * one directory, fsyncs and the flusher all at once; then everything checked and checked
 * again after a remount.
 */
#include <pthread.h>
#include <time.h>

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
	for (int i = 0; i < 3 * THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(failures, 0);
	/* threads that ended gave their queue pairs back (left: this thread's, the flusher's
	 * and the prefetch thread's) */
	struct blobfs_stats s;
	blobfs_get_stats(gfs, &s);
	CHECK(s.qpairs <= 3);
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

/* Each thread does its I/O on a queue pair of its own. */
static pthread_barrier_t held;

static void *one_io_then_wait(void *arg)
{
	(void)arg;
	char b[8];
	struct blobfs_file *f;
	if (blobfs_open(gfs, "/q", O_RDONLY, 0, &f) != 0 || blobfs_pread(f, b, sizeof(b), 0) != sizeof(b))
		failures++;
	blobfs_close(f);
	pthread_barrier_wait(&held); /* all have done I/O */
	pthread_barrier_wait(&held); /* the main thread has counted */
	return NULL;
}

static void test_threads_get_own_queue_pairs(void)
{
	gfs = bt_fresh(ns, 0, NULL);
	REQUIRE(gfs);
	REQUIRE(bt_write_file(gfs, "/q", 1, 0, 100, true) == 0);
	struct blobfs_stats s0, s1, s2;
	blobfs_get_stats(gfs, &s0);
	failures = 0;
	pthread_barrier_init(&held, NULL, THREADS + 1);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, one_io_then_wait, NULL);
	pthread_barrier_wait(&held);
	blobfs_get_stats(gfs, &s1);
	pthread_barrier_wait(&held);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&held);
	blobfs_get_stats(gfs, &s2);
	CHECK_EQ(failures, 0);
	CHECK_EQ(s1.qpairs, s0.qpairs + THREADS);
	CHECK_EQ(s2.qpairs, s0.qpairs);
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

/* One file, everyone at once, in a tiny cache: a writer overwriting and appending stamped
 * blocks, a truncater, sequential readers (readahead) and random readers, and cache drops.
 * A read never sees a block torn between two writes: each 4 KiB block read is all zeros
 * (a hole or past a truncate) or all one stamp. TSan watches the locks. */
#define SBLK 4096
static _Atomic bool stop_all;
static struct blobfs_file *shared_f;

static void stamp_block(uint64_t *w, uint64_t blk, uint64_t gen)
{
	for (size_t i = 0; i < SBLK / 8; i++)
		w[i] = (blk << 32) | gen;
}

static bool block_ok(const uint64_t *w, uint64_t blk)
{
	if (w[0] == 0) {
		for (size_t i = 1; i < SBLK / 8; i++)
			if (w[i])
				return false;
		return true;
	}
	if (w[0] >> 32 != blk)
		return false;
	for (size_t i = 1; i < SBLK / 8; i++)
		if (w[i] != w[0])
			return false;
	return true;
}

static void *s_writer(void *arg)
{
	(void)arg;
	uint64_t w[SBLK / 8];
	for (uint64_t gen = 1; !atomic_load(&stop_all); gen++) {
		uint64_t blk = (gen * 7919) % 600;
		stamp_block(w, blk, gen);
		if (blobfs_pwrite(shared_f, w, SBLK, blk * SBLK) != SBLK)
			failures++;
	}
	return NULL;
}

static void *s_truncater(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load(&stop_all); i++) {
		if (blobfs_ftruncate(shared_f, (uint64_t)((i * 37) % 600 + 50) * SBLK) != 0)
			failures++;
		if (i % 16 == 0 && blobfs_fsync(shared_f) != 0)
			failures++;
		if (i % 8 == 0)
			blobfs_drop_cache(gfs);
	}
	return NULL;
}

static void *s_reader(void *arg)
{
	bool seq = arg != NULL;
	uint64_t buf[8 * SBLK / 8];
	for (uint64_t i = 0; !atomic_load(&stop_all); i++) {
		uint64_t blk = seq ? (i * 8) % 600 : (i * 104729) % 600;
		ssize_t r = blobfs_pread(shared_f, buf, sizeof(buf), blk * SBLK);
		if (r < 0) {
			failures++;
			continue;
		}
		for (ssize_t k = 0; k + SBLK <= r; k += SBLK)
			if (!block_ok(buf + k / 8, blk + (uint64_t)k / SBLK))
				failures++;
	}
	return NULL;
}

static void test_one_file_everyone_at_once(void)
{
	struct blobfs_opts o = { .cache_size = 1u << 20, .commit_interval_ms = 20,
				 .writeback_chunk = 64u << 10, .prefetch_threshold = 16384 };
	gfs = bt_fresh(ns, 4096, &o);
	REQUIRE(gfs);
	REQUIRE(blobfs_open(gfs, "/s", O_RDWR | O_CREAT, 0644, &shared_f) == 0);
	failures = 0;
	atomic_store(&stop_all, false);
	pthread_t t[5];
	pthread_create(&t[0], NULL, s_writer, NULL);
	pthread_create(&t[1], NULL, s_truncater, NULL);
	pthread_create(&t[2], NULL, s_reader, (void *)1);
	pthread_create(&t[3], NULL, s_reader, NULL);
	pthread_create(&t[4], NULL, s_reader, (void *)1);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	atomic_store(&stop_all, true);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(failures, 0);
	blobfs_close(shared_f);
	CHECK_EQ(blobfs_unmount(gfs), 0);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
}

BT_DEVICE_MAIN(DEV, TEST(test_parallel_everything), TEST(test_threads_get_own_queue_pairs),
	TEST(test_concurrent_appends), TEST(test_one_file_everyone_at_once))
