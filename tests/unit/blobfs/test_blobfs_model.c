/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS against a model: random overwrites, appends, truncates (growing and shrinking)
 * and renames on a few files, each followed by dropping the cache, so every check reads
 * what is on the device; every few steps a sync, and at the end an unmount and a fresh
 * mount. Any byte that differs from the model (stale data showing through a hole, a lost
 * write-back, a wrong extent) fails the test with the step that caused it.
 */
#include "bfs_test.h"

#define DEV "emu://bfsmodel?ns=mem:128M"
#define NFILES 3
#define MAXS (192u << 10)

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;

struct mf {
	char path[16];
	uint8_t *d;
	size_t size;
};

static int check(struct blobfs *fs, struct mf *m, int step, int kind)
{
	static uint8_t buf[MAXS + 1];
	struct blobfs_file *f;
	int rc = blobfs_open(fs, m->path, O_RDONLY, 0, &f);
	if (rc) {
		fprintf(stderr, "  step %d: %s: %s\n", step, m->path, blobfs_errmsg());
		return -1;
	}
	ssize_t r = blobfs_pread(f, buf, sizeof(buf), 0);
	blobfs_close(f);
	if (r == (ssize_t)m->size && memcmp(buf, m->d, m->size) == 0)
		return 0;
	size_t k = 0;
	while (r > 0 && k < (size_t)r && k < m->size && buf[k] == m->d[k])
		k++;
	fprintf(stderr, "  step %d (kind %d): %s read %zd of %zu bytes, first difference at %zu\n", step,
		kind, m->path, r, m->size, k);
	return -1;
}

static void run_model(uint32_t seed, uint32_t cluster)
{
	struct blobfs_opts o = { .commit_interval_ms = 3600 * 1000 };
	struct blobfs *fs = bt_fresh(ns, cluster, &o);
	REQUIRE(fs);
	struct mf m[NFILES];
	for (int i = 0; i < NFILES; i++) {
		snprintf(m[i].path, sizeof(m[i].path), "/m%d", i);
		m[i].d = calloc(1, MAXS);
		m[i].size = 0;
		REQUIRE(bt_write_file(fs, m[i].path, 0, 0, 0, false) == 0);
	}
	srand(seed);
	int bad = 0;
	for (int step = 0; step < 600 && !bad; step++) {
		struct mf *x = &m[rand() % NFILES];
		int kind = rand() % 4;
		struct blobfs_file *f;
		if (kind == 0 && x->size) { /* overwrite inside */
			size_t off = (size_t)rand() % x->size, len = (size_t)rand() % 20000;
			len = BFS_MIN(len, x->size - off);
			bt_fill(x->d + off, len, (uint32_t)step, off);
			REQUIRE(blobfs_open(fs, x->path, O_RDWR, 0, &f) == 0);
			CHECK_EQ(blobfs_pwrite(f, x->d + off, len, off), (ssize_t)len);
			blobfs_close(f);
		} else if (kind == 1) { /* append, or write past the end leaving a hole */
			size_t gap = rand() % 3 ? 0 : (size_t)rand() % 30000;
			size_t len = (size_t)rand() % 40000;
			if (x->size + gap + len > MAXS)
				continue;
			memset(x->d + x->size, 0, gap);
			bt_fill(x->d + x->size + gap, len, (uint32_t)step, 0);
			REQUIRE(blobfs_open(fs, x->path, O_RDWR, 0, &f) == 0);
			CHECK_EQ(blobfs_pwrite(f, x->d + x->size + gap, len, x->size + gap), (ssize_t)len);
			blobfs_close(f);
			if (len)
				x->size += gap + len;
		} else if (kind == 2) { /* truncate either way */
			size_t n = (size_t)rand() % MAXS;
			if (n > x->size)
				memset(x->d + x->size, 0, n - x->size);
			CHECK_EQ(blobfs_truncate(fs, x->path, n), 0);
			x->size = n;
		} else { /* swap two files' names through a third */
			struct mf *y = &m[rand() % NFILES];
			if (x == y)
				continue;
			CHECK_EQ(blobfs_rename(fs, x->path, "/tmp", 0), 0);
			CHECK_EQ(blobfs_rename(fs, y->path, x->path, 0), 0);
			CHECK_EQ(blobfs_rename(fs, "/tmp", y->path, 0), 0);
			struct mf t = *x;
			x->d = y->d;
			x->size = y->size;
			y->d = t.d;
			y->size = t.size;
		}
		if (step % 5 == 0)
			blobfs_sync(fs);
		blobfs_drop_cache(fs);
		for (int i = 0; i < NFILES && !bad; i++)
			bad |= check(fs, &m[i], step, kind) != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(blobfs_unmount(fs), 0);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	for (int i = 0; i < NFILES; i++) {
		CHECK_EQ(check(fs, &m[i], -1, -1), 0);
		free(m[i].d);
	}
	blobfs_unmount(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
}

static void test_model_4k_clusters(void)
{
	run_model(1, 4096);
	run_model(2, 4096);
}

static void test_model_16k_clusters(void)
{
	run_model(3, 16384);
}

static void test_model_1m_clusters(void)
{
	run_model(4, 1u << 20);
}

BT_DEVICE_MAIN(DEV, TEST(test_model_4k_clusters), TEST(test_model_16k_clusters),
	TEST(test_model_1m_clusters))
