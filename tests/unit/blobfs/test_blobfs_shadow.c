/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shadow (kill-safe writes, lib/blobfs/shadow.c): writes and truncates of shadowed files
 * come back after a crash that loses everything not synced, whatever the shadow's halves
 * were doing (switching under load, a write too large to copy, several writers at once);
 * unshadowed files keep the old promise; a clean unmount leaves no shadow behind; and a
 * shadow file that is not to be trusted (others may write it, another file system's, the
 * device older than it, garbage in it) is refused or ignored without harm.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfs_test.h"

#define DEV "emu://bfsshadow?ns=mem:128M"

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;
static char dir[256];

static struct blobfs_opts opts(uint64_t half)
{
	/* No background commit unless the shadow asks for one: what a crash loses is known. */
	struct blobfs_opts o = { .commit_interval_ms = 3600 * 1000, .shadow_dir = dir, .shadow_size = half };
	return o;
}

static struct blobfs_file *open_shadowed(struct blobfs *fs, const char *path)
{
	struct blobfs_file *f = NULL;
	if (blobfs_open(fs, path, O_RDWR | O_CREAT, 0644, &f) != 0)
		return NULL;
	struct blobfs_file_opts fo = { .shadow = 1 };
	blobfs_file_set_opts(f, &fo);
	return f;
}

static int shadow_files(void)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "ls %s/*.shadow 2>/dev/null | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/* Appends like a WAL: records of varying size, fresh bytes each. */
static int wal_append(struct blobfs_file *f, uint32_t seed, uint64_t *size, size_t len)
{
	uint8_t *b = malloc(len);
	bt_fill(b, len, seed, *size);
	ssize_t w = blobfs_pwrite(f, b, len, *size);
	free(b);
	if (w != (ssize_t)len)
		return -EIO;
	*size += len;
	return 0;
}

static void test_unsynced_shadowed_writes_survive(void)
{
	struct blobfs_opts o = opts(0);
	struct blobfs *fs = bt_fresh(ns, 0, &o);
	REQUIRE(fs);
	CHECK_EQ(shadow_files(), 1);
	REQUIRE(blobfs_mkdir(fs, "/db", 0755) == 0);
	struct blobfs_file *wal = open_shadowed(fs, "/db/000001.log");
	REQUIRE(wal);
	REQUIRE(blobfs_commit(fs) == 0); /* the name durable, as the plugin does */
	uint64_t size = 0;
	for (int i = 0; i < 200; i++)
		REQUIRE(wal_append(wal, 1, &size, 100 + (size_t)i * 37) == 0);
	/* a truncate, then more */
	REQUIRE(blobfs_ftruncate(wal, size / 2) == 0);
	size /= 2;
	for (int i = 0; i < 50; i++)
		REQUIRE(wal_append(wal, 1, &size, 3000) == 0);
	/* an unshadowed file's unsynced writes: the old promise, lost */
	REQUIRE(bt_write_file(fs, "/db/plain", 2, 0, 5000, false) == 0);
	bfs_simulate_crash(fs);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	struct blobfs_stats st;
	blobfs_get_stats(fs, &st);
	CHECK_EQ(st.shadow_replayed, 251);
	CHECK_EQ(bt_verify_file(fs, "/db/000001.log", 1, size), 0);
	struct blobfs_stat s;
	CHECK_EQ(blobfs_stat(fs, "/db/plain", &s), -ENOENT);
	CHECK_EQ(shadow_files(), 1); /* this mount's own, fresh */
	/* crash again at once: the replayed writes were made durable before the old shadow went */
	bfs_simulate_crash(fs);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	blobfs_get_stats(fs, &st);
	CHECK_EQ(st.shadow_replayed, 0);
	CHECK_EQ(bt_verify_file(fs, "/db/000001.log", 1, size), 0);
	blobfs_unmount(fs);
	CHECK_EQ(shadow_files(), 0);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
}

static void test_halves_switch_and_large_writes(void)
{
	/* 64 KiB halves: the flusher switches them again and again; 20 KiB writes take the
	 * write-back path (over a quarter of a half) and leave a DROP entry. */
	struct blobfs_opts o = opts(64u << 10);
	o.commit_interval_ms = 50;
	struct blobfs *fs = bt_fresh(ns, 0, &o);
	REQUIRE(fs);
	struct blobfs_file *wal = open_shadowed(fs, "/w.log");
	REQUIRE(wal);
	REQUIRE(blobfs_commit(fs) == 0);
	uint64_t size = 0;
	for (int i = 0; i < 3000; i++)
		REQUIRE(wal_append(wal, 3, &size, i % 100 == 7 ? 20000 : 200 + (size_t)(i % 13) * 50) == 0);
	struct blobfs_stats st;
	blobfs_get_stats(fs, &st);
	CHECK(st.commits >= 10);
	bfs_simulate_crash(fs);
	o.commit_interval_ms = 3600 * 1000;
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/w.log", 3, size), 0);
	blobfs_unmount(fs);
}

struct writer {
	struct blobfs *fs;
	int id;
	uint64_t size;
	int rc;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char p[32];
	snprintf(p, sizeof(p), "/t%d.log", w->id);
	struct blobfs_file *f = open_shadowed(w->fs, p);
	if (!f) {
		w->rc = -EIO;
		return NULL;
	}
	for (int i = 0; i < 800 && !w->rc; i++) {
		w->rc = wal_append(f, (uint32_t)(10 + w->id), &w->size, 64 + (size_t)((i * 7 + w->id) % 40) * 100);
		if (!w->rc && i % 200 == 199)
			w->rc = blobfs_ftruncate(f, w->size -= 1000);
	}
	return NULL;
}

static void test_writers_at_once(void)
{
	struct blobfs_opts o = opts(128u << 10);
	o.commit_interval_ms = 20;
	struct blobfs *fs = bt_fresh(ns, 0, &o);
	REQUIRE(fs);
	struct writer w[4];
	char p[32];
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "/t%d.log", i);
		REQUIRE(bt_write_file(fs, p, 0, 0, 0, false) == 0);
	}
	REQUIRE(blobfs_commit(fs) == 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct writer){ fs, i, 0, 0 };
		pthread_create(&t[i], NULL, writer_main, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(w[i].rc, 0);
	bfs_simulate_crash(fs);
	o.commit_interval_ms = 3600 * 1000;
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "/t%d.log", i);
		CHECK_EQ(bt_verify_file(fs, p, (uint32_t)(10 + i), w[i].size), 0);
	}
	blobfs_unmount(fs);
}

/* In the lock directory itself, where the mount sweeps stale lock files of the same
 * prefix: the shadow is not one of them (the sweep once took it for one). */
static void test_shadow_beside_lock_files(void)
{
	const char *locks = getenv("UNVME_LOCK_DIR");
	SKIP_UNLESS(locks && *locks, "UNVME_LOCK_DIR is not set");
	struct blobfs_opts o = opts(0);
	o.shadow_dir = locks;
	struct blobfs *fs = bt_fresh(ns, 0, &o);
	REQUIRE(fs);
	struct blobfs_file *f = open_shadowed(fs, "/beside.log");
	REQUIRE(f);
	REQUIRE(blobfs_commit(fs) == 0);
	uint64_t size = 0;
	REQUIRE(wal_append(f, 8, &size, 5000) == 0);
	bfs_simulate_crash(fs);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	struct blobfs_stats st;
	blobfs_get_stats(fs, &st);
	CHECK_EQ(st.shadow_replayed, 1);
	CHECK_EQ(bt_verify_file(fs, "/beside.log", 8, size), 0);
	blobfs_unmount(fs);
}

/* The path of the one shadow file in dir. */
static void shadow_path(char *out, size_t len)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "ls %s/*.shadow 2>/dev/null | head -1", dir);
	FILE *p = popen(cmd, "r");
	out[0] = '\0';
	if (p && fgets(out, (int)len, p))
		out[strcspn(out, "\n")] = '\0';
	if (p)
		pclose(p);
}

/* A crash that leaves a shadow with one shadowed write in it; returns its path. */
static void crashed_with_shadow(char *path, size_t len)
{
	struct blobfs_opts o = opts(0);
	struct blobfs *fs = bt_fresh(ns, 0, &o);
	if (!fs)
		return;
	struct blobfs_file *f = open_shadowed(fs, "/x.log");
	blobfs_commit(fs);
	uint64_t size = 0;
	wal_append(f, 5, &size, 1000);
	bfs_simulate_crash(fs);
	shadow_path(path, len);
}

static void test_untrusted_shadows(void)
{
	char path[320];
	struct blobfs_opts o = opts(0);
	struct blobfs *fs = NULL;
	/* a shadow too small to hold an entry is a bad option, not a hang */
	struct blobfs_opts tiny = opts(4096);
	CHECK_EQ(blobfs_mount(ns, &tiny, &fs), -EINVAL);
	CHECK(strstr(blobfs_errmsg(), "shadow_size") != NULL);
	/* others may write it: refused, named */
	crashed_with_shadow(path, sizeof(path));
	REQUIRE(path[0]);
	chmod(path, 0666);
	CHECK_EQ(blobfs_mount(ns, &o, &fs), -EPERM);
	CHECK(strstr(blobfs_errmsg(), "not trusted") != NULL);
	/* the device older than the shadow: refused (it lost synced changes) */
	chmod(path, 0600);
	int fd = open(path, O_RDWR);
	REQUIRE(fd >= 0);
	uint64_t base = 1ull << 40;
	REQUIRE(pwrite(fd, &base, 8, 32) == 8); /* the first half's base_seq */
	CHECK_EQ(blobfs_mount(ns, &o, &fs), BLOBFS_EBADSB);
	CHECK(strstr(blobfs_errmsg(), "lost synced changes") != NULL);
	/* garbage after a good header: the entries stop at it, nothing breaks */
	base = 0;
	REQUIRE(pwrite(fd, &base, 8, 32) == 8);
	uint8_t junk[4096];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	REQUIRE(pwrite(fd, junk, sizeof(junk), 80) == (ssize_t)sizeof(junk));
	uint64_t used = sizeof(junk);
	REQUIRE(pwrite(fd, &used, 8, 48) == 8); /* used */
	close(fd);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	struct blobfs_stats st;
	blobfs_get_stats(fs, &st);
	CHECK_EQ(st.shadow_replayed, 0);
	blobfs_unmount(fs);
	/* another file system's shadow under this one's name: ignored (the uuid differs) */
	crashed_with_shadow(path, sizeof(path));
	REQUIRE(path[0]);
	char old[400];
	snprintf(old, sizeof(old), "%s.old", path);
	REQUIRE(rename(path, old) == 0);
	struct blobfs_mkfs_opts m = { .force = true };
	REQUIRE(blobfs_mkfs(ns, &m) == 0);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	shadow_path(path, sizeof(path));
	blobfs_unmount(fs);
	REQUIRE(rename(old, path) == 0);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	blobfs_get_stats(fs, &st);
	CHECK_EQ(st.shadow_replayed, 0);
	blobfs_unmount(fs);
	CHECK_EQ(shadow_files(), 0);
}

static bool setup(void)
{
	const char *base = getenv("UNVME_LOCK_DIR");
	snprintf(dir, sizeof(dir), "%s/bfs-shadow-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir))
		return false;
	ctrlr = bt_open(DEV);
	ns = bt_ns(ctrlr);
	return ns != NULL;
}

static void teardown(void)
{
	unvme_ctrlr_close(ctrlr);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  could not remove %s\n", dir);
}

BT_MAIN(setup, teardown, TEST(test_unsynced_shadowed_writes_survive),
	TEST(test_halves_switch_and_large_writes), TEST(test_writers_at_once),
	TEST(test_untrusted_shadows), TEST(test_shadow_beside_lock_files))
