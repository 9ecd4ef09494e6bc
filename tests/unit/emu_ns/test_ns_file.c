/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file backend: opening rules and their messages, the lock against a second user,
 * persistence (flush and reopen; SIGKILL of the writer; what a power loss would keep, seen
 * through the durability spy), media errors from the file, and zeroing with and without
 * fallocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/ns_file.h"
#include "durability_spy.h"
#include "ns_test_cmd.h"
#include "test_util.h"
#include "xfer_double.h"

#define MiB (1024u * 1024u)

static int open_file_ns(const char *path, uint64_t size, uint32_t lba, struct emu_ns **ns,
			char *err, size_t errlen)
{
	struct emu_ns_params p;
	memset(&p, 0, sizeof(p));
	p.kind = EMU_NS_FILE;
	p.size_bytes = size;
	p.lba_size = lba;
	snprintf(p.path, sizeof(p.path), "%s", path);
	err[0] = 0;
	*ns = NULL;
	return emu_ns_create(&p, 1, ns, err, errlen);
}

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void test_create_and_reopen(void)
{
	char dir[256], path[512], err[512];
	REQUIRE(ns_test_mkdtemp(dir, sizeof(dir)) == 0);
	snprintf(path, sizeof(path), "%s/disk.img", dir);
	struct emu_ns *ns;

	/* missing file and no size: refused, nothing created */
	CHECK_EQ(open_file_ns(path, 0, 512, &ns, err, sizeof(err)), -ENOENT);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof(want), "backing file %s does not exist (give a size to create it)",
		 path);
	CHECK_STREQ(err, want);
	CHECK_EQ(file_size(path), -1);

	/* a size that is no multiple of the LBA size: refused before creating anything */
	CHECK_EQ(open_file_ns(path, 1000, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "1000") && strstr(err, "512") && strstr(err, path));
	CHECK_EQ(file_size(path), -1);

	/* created with the size asked for, sparse */
	CHECK_EQ(open_file_ns(path, 8 * MiB, 512, &ns, err, sizeof(err)), 0);
	REQUIRE(ns != NULL);
	CHECK_EQ(file_size(path), 8 * MiB);
	CHECK_EQ(emu_ns_nlbas(ns), 8 * MiB / 512);
	emu_ns_destroy(ns);

	/* reopened: size 0 takes the file's, the same size is fine, another one is not */
	CHECK_EQ(open_file_ns(path, 0, 4096, &ns, err, sizeof(err)), 0);
	CHECK(ns && emu_ns_nlbas(ns) == 8 * MiB / 4096);
	emu_ns_destroy(ns);
	CHECK_EQ(open_file_ns(path, 8 * MiB, 512, &ns, err, sizeof(err)), 0);
	emu_ns_destroy(ns);
	CHECK_EQ(open_file_ns(path, 4 * MiB, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(ns == NULL);
	CHECK(strstr(err, path) && strstr(err, "8388608") && strstr(err, "4194304"));
	CHECK_EQ(file_size(path), 8 * MiB); /* untouched */

	/* an existing file whose size is no multiple of the LBA size */
	CHECK_EQ(truncate(path, 1000), 0);
	CHECK_EQ(open_file_ns(path, 0, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "1000") && strstr(err, "LBA size 512"));
	CHECK_EQ(open_file_ns(path, 1000, 512, &ns, err, sizeof(err)), -EINVAL);

	/* an empty existing file (as mktemp makes them) grows to the size given */
	CHECK_EQ(truncate(path, 0), 0);
	CHECK_EQ(open_file_ns(path, 0, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "empty") != NULL);
	CHECK_EQ(open_file_ns(path, 1 * MiB, 512, &ns, err, sizeof(err)), 0);
	CHECK_EQ(file_size(path), 1 * MiB);
	emu_ns_destroy(ns);

	ns_test_rmtree(dir);
}

static void test_unusable_paths(void)
{
	char dir[256], path[512], err[512];
	REQUIRE(ns_test_mkdtemp(dir, sizeof(dir)) == 0);
	struct emu_ns *ns;

	/* a directory cannot be opened for writing, even by root */
	CHECK_EQ(open_file_ns(dir, 0, 512, &ns, err, sizeof(err)), -EISDIR);
	CHECK(strstr(err, dir) != NULL);
	CHECK(strstr(err, strerror(EISDIR)) != NULL);
	CHECK_EQ(open_file_ns(dir, 1 * MiB, 512, &ns, err, sizeof(err)), -EISDIR);
	CHECK(ns == NULL);

	/* a missing parent directory */
	snprintf(path, sizeof(path), "%s/no/such/dir.img", dir);
	CHECK_EQ(open_file_ns(path, 1 * MiB, 512, &ns, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, path) != NULL);
	CHECK(strstr(err, strerror(ENOENT)) != NULL);

	/* not a regular file */
	CHECK(open_file_ns("/dev/null", 0, 512, &ns, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/dev/null") != NULL);

	/* no path */
	CHECK_EQ(open_file_ns("", 1 * MiB, 512, &ns, err, sizeof(err)), -EINVAL);
	CHECK(err[0] != 0);
	ns_test_rmtree(dir);
}

static void test_lock(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 1 * MiB, 512) == 0);
	char err[512], want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "backing file %s is in use by another process", f.path);
	struct emu_ns *second;

	/* a second open in this process */
	CHECK(open_file_ns(f.path, 0, 512, &second, err, sizeof(err)) < 0);
	CHECK_STREQ(err, want);
	CHECK(second == NULL);

	/* a second process */
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int r = open_file_ns(f.path, 0, 512, &second, err, sizeof(err));
		_exit(r < 0 && strcmp(err, want) == 0 ? 0 : 1);
	}
	int status;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* released with the namespace */
	ns_fixture_close_ns(&f);
	CHECK_EQ(open_file_ns(f.path, 0, 512, &second, err, sizeof(err)), 0);
	emu_ns_destroy(second);
	ns_fixture_close(&f);
}

static void test_flush_and_reopen(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 4 * MiB, 4096) == 0);
	uint8_t *w = ns_test_alloc(256 * 1024), *r = ns_test_alloc(256 * 1024);
	ns_test_pattern(w, 256 * 1024, 30);
	CHECK_EQ(ns_write(f.ns, 3, 64, w), 0);
	CHECK_EQ(ns_write(f.ns, 1023, 1, w), 0);
	struct nvme_sqe c;
	memset(&c, 0, sizeof(c));
	c.opc = NVME_CMD_FLUSH;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	ns_fixture_close_ns(&f);

	REQUIRE(ns_fixture_reopen(&f, 0, 4096) == 0);
	CHECK_EQ(ns_read(f.ns, 3, 64, r), 0);
	CHECK(memcmp(w, r, 256 * 1024) == 0);
	CHECK_EQ(ns_read(f.ns, 1023, 1, r), 0);
	CHECK(memcmp(w, r, 4096) == 0);
	CHECK_EQ(ns_read(f.ns, 0, 3, r), 0);
	CHECK(ns_test_all_zero(r, 3 * 4096));

	/* the same bytes seen through the other LBA format */
	ns_fixture_close_ns(&f);
	REQUIRE(ns_fixture_reopen(&f, 0, 512) == 0);
	CHECK_EQ(ns_read(f.ns, 3 * 8, 8, r), 0);
	CHECK(memcmp(w, r, 4096) == 0);
	free(w);
	free(r);
	ns_fixture_close(&f);
}

#define KILL_BLOCKS 1024u

/* The child writes blocks one by one and acknowledges each over the pipe, then waits. */
static void killed_writer(const char *path, int ack_fd)
{
	struct emu_ns *ns;
	char err[512];
	if (open_file_ns(path, KILL_BLOCKS * 4096ull, 4096, &ns, err, sizeof(err)) != 0)
		_exit(2);
	uint8_t *b = ns_test_alloc(4096);
	for (uint32_t lba = 0; lba < KILL_BLOCKS; lba++) {
		ns_test_pattern(b, 4096, 1000 + lba);
		if (ns_write(ns, lba, 1, b) != 0)
			_exit(3);
		if (write(ack_fd, &lba, sizeof(lba)) != (ssize_t)sizeof(lba))
			_exit(4);
	}
	for (;;)
		pause(); /* never flushes, never closes: SIGKILL ends it */
}

static void test_sigkill_keeps_acknowledged_writes(void)
{
	struct ns_fixture f;
	memset(&f, 0, sizeof(f));
	f.kind = EMU_NS_FILE;
	REQUIRE(ns_test_mkdtemp(f.dir, sizeof(f.dir)) == 0);
	snprintf(f.path, sizeof(f.path), "%s/ns.img", f.dir);
	int p[2];
	REQUIRE(pipe(p) == 0);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		killed_writer(f.path, p[1]);
	}
	close(p[1]);

	bool acked[KILL_BLOCKS] = { false };
	unsigned nacked = 0;
	uint32_t lba;
	while (nacked < 300 && read(p[0], &lba, sizeof(lba)) == (ssize_t)sizeof(lba)) {
		if (lba < KILL_BLOCKS && !acked[lba])
			acked[lba] = true, nacked++;
	}
	CHECK_EQ(kill(pid, SIGKILL), 0);
	int status;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* acknowledgements still in the pipe count too */
	while (read(p[0], &lba, sizeof(lba)) == (ssize_t)sizeof(lba))
		if (lba < KILL_BLOCKS && !acked[lba])
			acked[lba] = true, nacked++;
	close(p[0]);
	CHECK(nacked >= 300);

	REQUIRE(ns_fixture_reopen(&f, 0, 4096) == 0); /* the lock died with the child */
	uint8_t *want = ns_test_alloc(4096), *got = ns_test_alloc(4096);
	unsigned bad = 0;
	for (lba = 0; lba < KILL_BLOCKS; lba++) {
		if (!acked[lba])
			continue;
		ns_test_pattern(want, 4096, 1000 + lba);
		if (ns_read(f.ns, lba, 1, got) != 0 || memcmp(want, got, 4096) != 0)
			bad++;
	}
	CHECK_EQ(bad, 0);
	free(want);
	free(got);
	ns_fixture_close(&f);
}

static bool is_media(uint16_t st, unsigned sc)
{
	return ST_SCT(st) == NVME_SCT_MEDIA && ST_SC(st) == sc && !ST_DNR(st);
}

/* A read past the end of a file cut short behind the namespace's back. */
static void test_read_error(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 1 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(4096);
	ns_test_pattern(b, 4096, 40);
	CHECK_EQ(ns_write(f.ns, 100, 8, b), 0);
	REQUIRE(truncate(f.path, 4096) == 0);

	struct emu_io_stats st = { 0 };
	uint64_t err_lba;
	struct nvme_sqe c = ns_cmd(NVME_CMD_READ, 100, 8, b);
	CHECK(is_media(ns_exec(f.ns, &c, &st, &err_lba), NVME_SC_UNRECOVERED_READ));
	CHECK_EQ(err_lba, 100);
	c.opc = NVME_CMD_COMPARE;
	CHECK(is_media(ns_exec(f.ns, &c, &st, &err_lba), NVME_SC_UNRECOVERED_READ));
	CHECK_EQ(st.read_cmds, 0);
	/* what is still in the file reads fine */
	c = ns_cmd(NVME_CMD_READ, 0, 8, b);
	CHECK_EQ(ns_exec(f.ns, &c, &st, &err_lba), 0);
	free(b);
	ns_fixture_close(&f);
}

/* A write the file system refuses (here: beyond the process's file size limit). */
static void test_write_error(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 2 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(4096);
	ns_test_pattern(b, 4096, 41);

	struct rlimit old, lim;
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 1 * MiB;
	REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);

	struct emu_io_stats st = { 0 };
	uint64_t err_lba;
	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE, 3000, 8, b);
	uint16_t s1 = ns_exec(f.ns, &c, &st, &err_lba);
	uint64_t err1 = err_lba;
	c.cdw12 |= NVME_RW_FUA;
	uint16_t s2 = ns_exec(f.ns, &c, &st, &err_lba);
	c = ns_cmd(NVME_CMD_WRITE, 0, 8, b);
	uint16_t s3 = ns_exec(f.ns, &c, &st, &err_lba);

	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_handler);

	CHECK(is_media(s1, NVME_SC_WRITE_FAULT));
	CHECK_EQ(err1, 3000);
	CHECK(is_media(s2, NVME_SC_WRITE_FAULT));
	CHECK_EQ(s3, 0);
	CHECK_EQ(st.write_cmds, 1);
	free(b);
	ns_fixture_close(&f);
}

/* A scratch file of len bytes of pattern; returns its descriptor. */
static int pattern_file(const char *dir, size_t len, uint8_t **content)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/raw.img", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	*content = ns_test_alloc(len);
	ns_test_pattern(*content, len, 50);
	if (pwrite(fd, *content, len, 0) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool zeroed_exactly(int fd, const uint8_t *orig, size_t len, size_t lo, size_t hi)
{
	uint8_t *r = ns_test_alloc(len);
	bool ok = pread(fd, r, len, 0) == (ssize_t)len;
	for (size_t i = 0; ok && i < len; i++)
		ok = (i >= lo && i < hi) ? r[i] == 0 : r[i] == orig[i];
	free(r);
	return ok;
}

static void test_zero_fallbacks(void)
{
	char dir[256];
	REQUIRE(ns_test_mkdtemp(dir, sizeof(dir)) == 0);
	const size_t len = 4 * MiB;
	uint8_t *orig;
	int fd = pattern_file(dir, len, &orig);
	REQUIRE(fd >= 0);

	/* the last resort by itself: odd offsets, more than one batch of iovecs */
	CHECK_EQ(emu_ns_file_write_zeroes(fd, 1000, 300000), 0);
	CHECK(zeroed_exactly(fd, orig, len, 1000, 301000));
	CHECK_EQ(pwrite(fd, orig, len, 0), (ssize_t)len);
	CHECK_EQ(emu_ns_file_write_zeroes(fd, 512, 3 * MiB / 2 + 512), 0);
	CHECK(zeroed_exactly(fd, orig, len, 512, 512 + 3 * MiB / 2 + 512));

	/* a file system with neither fallocate mode */
	struct emu_ns_file_zero_caps none;
	atomic_init(&none.no_punch_hole, true);
	atomic_init(&none.no_zero_range, true);
	CHECK_EQ(pwrite(fd, orig, len, 0), (ssize_t)len);
	CHECK_EQ(emu_ns_file_zero_range(&none, fd, 4096, 8192 + 512, true), 0);
	CHECK(zeroed_exactly(fd, orig, len, 4096, 4096 + 8192 + 512));

	/* whatever this file system has: the data reads as zeroes either way */
	for (int deallocate = 0; deallocate < 2; deallocate++) {
		struct emu_ns_file_zero_caps caps;
		atomic_init(&caps.no_punch_hole, false);
		atomic_init(&caps.no_zero_range, false);
		CHECK_EQ(pwrite(fd, orig, len, 0), (ssize_t)len);
		CHECK_EQ(fsync(fd), 0);
		struct stat before, after;
		CHECK_EQ(fstat(fd, &before), 0);
		CHECK_EQ(emu_ns_file_zero_range(&caps, fd, 512, 2 * MiB, deallocate), 0);
		CHECK(zeroed_exactly(fd, orig, len, 512, 512 + 2 * MiB));
		CHECK_EQ(fstat(fd, &after), 0);
		CHECK_EQ(after.st_size, (off_t)len);
		/* a punched hole gives the space back */
		if (deallocate && !atomic_load(&caps.no_punch_hole))
			CHECK(after.st_blocks < before.st_blocks);
		printf("     (file system: punch hole %s, zero range %s)\n",
		       atomic_load(&caps.no_punch_hole) ? "no" : "yes",
		       atomic_load(&caps.no_zero_range) ? "no" : "yes");
	}
	close(fd);
	free(orig);
	ns_test_rmtree(dir);
}

/*
 * Write Zeroes keeps the blocks allocated unless DEAC asks for deallocation; Dataset
 * Management deallocates. Checked through the file's allocated size where the file system
 * can punch holes (it can on ext4, xfs, btrfs, tmpfs).
 */
static void test_deallocation_frees_space(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 8 * MiB, 4096) == 0);
	uint8_t *b = ns_test_alloc(2 * MiB);
	ns_test_pattern(b, 2 * MiB, 61);
	xfer_double_set_seg_size(4096);
	for (uint64_t lba = 0; lba < 2048; lba += 512)
		CHECK_EQ(ns_write(f.ns, lba, 512, b), 0);
	xfer_double_set_seg_size(0);
	CHECK_EQ(emu_ns_sync(f.ns), 0);
	struct stat full, kept, freed;
	CHECK_EQ(stat(f.path, &full), 0);

	struct nvme_sqe c = ns_cmd(NVME_CMD_WRITE_ZEROES, 0, 512, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK_EQ(stat(f.path, &kept), 0);
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 512, 512, NULL);
	c.cdw12 |= NVME_WZ_DEAC;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	struct nvme_dsm_range *r = ns_test_alloc(sizeof(*r));
	r->cattr = 0, r->slba = 1024, r->nlb = 512;
	c = ns_cmd_dsm(1, NVME_DSM_ATTR_AD, r);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK_EQ(stat(f.path, &freed), 0);

	/* probe: can this file system punch holes at all? */
	char probe[512];
	snprintf(probe, sizeof(probe), "%s/probe", f.dir);
	int fd = open(probe, O_RDWR | O_CREAT, 0644);
	bool can_punch = fd >= 0 && ftruncate(fd, 4096) == 0 &&
			 fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0;
	if (fd >= 0)
		close(fd);
	if (can_punch) {
		/* st_blocks counts 512-byte units: 2 MiB = 4096 of them */
		CHECK(kept.st_blocks >= full.st_blocks - 64);
		CHECK(freed.st_blocks <= kept.st_blocks - 2 * 4096 + 64);
	} else {
		printf("     (no hole punching here: allocation not checked)\n");
	}
	/* whatever the file system: zeroes where asked, data elsewhere */
	CHECK_EQ(ns_read(f.ns, 0, 512, b), 0);
	CHECK(ns_test_all_zero(b, 2 * MiB));
	CHECK_EQ(ns_read(f.ns, 1024, 512, b), 0);
	CHECK(ns_test_all_zero(b, 2 * MiB));
	uint8_t *want = ns_test_alloc(2 * MiB);
	ns_test_pattern(want, 2 * MiB, 61);
	CHECK_EQ(ns_read(f.ns, 1536, 512, b), 0);
	CHECK(memcmp(b, want, 2 * MiB) == 0);
	free(want);
	free(r);
	free(b);
	ns_fixture_close(&f);
}

/* Format of a file namespace keeps the file's size and leaves it sparse. */
static void test_format_keeps_file_size(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 4 * MiB, 512) == 0);
	uint8_t *b = ns_test_alloc(1 * MiB);
	ns_test_pattern(b, 1 * MiB, 60);
	CHECK_EQ(ns_write(f.ns, 0, 2048, b), 0);
	CHECK_EQ(emu_ns_format(f.ns, 1, 1), 0);
	CHECK_EQ(file_size(f.path), 4 * MiB);
	struct stat st;
	CHECK_EQ(stat(f.path, &st), 0);
	CHECK(st.st_blocks < 1 * MiB / 512);
	ns_fixture_close_ns(&f);
	REQUIRE(ns_fixture_reopen(&f, 0, 4096) == 0);
	CHECK_EQ(ns_read(f.ns, 0, 256, b), 0);
	CHECK(ns_test_all_zero(b, 1 * MiB));
	free(b);
	ns_fixture_close(&f);
}

/*
 * Reopening after a flush reads the data back from the page cache whether or not it was ever
 * synced; the spy tells what a power loss at the moment of each acknowledgement would lose.
 */
static void test_power_loss_keeps_what_was_made_durable(void)
{
	struct ns_fixture f;
	REQUIRE(ns_fixture_open(&f, EMU_NS_FILE, 4 * MiB, 4096) == 0);
	uint8_t *w = ns_test_alloc(64 * 1024);
	ns_test_pattern(w, 64 * 1024, 5);
	durability_spy_reset();

	/* volatile write cache on: a write completes from the page cache, Flush makes it stay */
	CHECK_EQ(ns_write(f.ns, 0, 16, w), 0);
	CHECK_EQ(durability_spy_file(f.path).unsynced_bytes, 64 * 1024);
	struct nvme_sqe c;
	memset(&c, 0, sizeof(c));
	c.opc = NVME_CMD_FLUSH;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK(durability_spy_durable(f.path));

	/* FUA: this write is durable when it completes */
	c = ns_cmd(NVME_CMD_WRITE, 16, 16, w);
	c.cdw12 |= NVME_RW_FUA;
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK(durability_spy_durable(f.path));

	/* write cache off: every write and Write Zeroes is */
	emu_ns_set_write_cache(f.ns, false);
	CHECK_EQ(ns_write(f.ns, 32, 16, w), 0);
	CHECK(durability_spy_durable(f.path));
	c = ns_cmd(NVME_CMD_WRITE_ZEROES, 40, 8, NULL);
	CHECK_EQ(ns_exec(f.ns, &c, NULL, NULL), 0);
	CHECK(durability_spy_durable(f.path));
	emu_ns_set_write_cache(f.ns, true);

	/* Format NVM and the controller's shutdown sync */
	CHECK_EQ(ns_write(f.ns, 48, 16, w), 0);
	CHECK_EQ(durability_spy_file(f.path).unsynced_bytes, 64 * 1024);
	CHECK_EQ(emu_ns_sync(f.ns), 0);
	CHECK(durability_spy_durable(f.path));
	CHECK_EQ(emu_ns_format(f.ns, 0, NVME_FMT_SES_NONE), 0);
	CHECK(durability_spy_durable(f.path));
	durability_spy_disarm();
	free(w);
	ns_fixture_close(&f);
}

TEST_MAIN(TEST(test_create_and_reopen), TEST(test_unusable_paths), TEST(test_lock),
	  TEST(test_flush_and_reopen), TEST(test_sigkill_keeps_acknowledged_writes),
	  TEST(test_read_error), TEST(test_write_error), TEST(test_zero_fallbacks),
	  TEST(test_deallocation_frees_space), TEST(test_format_keeps_file_size),
	  TEST(test_power_loss_keeps_what_was_made_durable))
