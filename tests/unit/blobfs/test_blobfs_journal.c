/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Crash safety of the metadata journal. A "crash" here drops the mount without writing
 * anything (bfs_simulate_crash: what kill -9 leaves on the device), then mounts again on the
 * same memory namespace. Checked: synced data and metadata survive, unsynced changes vanish
 * as a whole, a torn transaction is ignored, clusters freed by an unsynced truncate are not
 * reused before it is durable, the journal wraps through checkpoints, a damaged newest
 * checkpoint falls back to the older one, and a failed commit stops further changes.
 * Large commits: thousands of operations in one sync replay whole (the regression of a
 * replay that lost the first block of any transaction larger than its buffer); they are
 * written as bounded transactions cut at operation boundaries, so losing the tail of a
 * commit leaves a prefix of whole operations; and a damaged transaction followed by whole
 * later ones (which proves it had been acknowledged) is an fsck error and stops a mount,
 * where a torn last one is only a warning.
 */
#include "bfs_test.h"

#define DEV "emu://bfsjnl?ns=mem:64M"

static struct unvme_ctrlr *ctrlr;
static struct unvme_ns *ns;
static struct unvme_qpair *qp;

/* No background commits: what reaches the disk is exactly what the test syncs. */
static const struct blobfs_opts quiet = { .commit_interval_ms = 3600 * 1000 };

static void crash(struct blobfs *fs)
{
	bfs_simulate_crash(fs);
}

static void test_synced_survives_unsynced_goes(void)
{
	struct blobfs *fs = bt_fresh(ns, 65536, &quiet);
	REQUIRE(fs);
	REQUIRE(blobfs_mkdir(fs, "/d", 0755) == 0);
	REQUIRE(bt_write_file(fs, "/d/synced", 1, 0, 300000, true) == 0);
	REQUIRE(bt_write_file(fs, "/d/unsynced", 2, 0, 300000, false) == 0);
	REQUIRE(blobfs_mkdir(fs, "/later", 0755) == 0);
	crash(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK(!r.clean_unmount);
	CHECK(r.replayed >= 1);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	struct blobfs_stats s;
	blobfs_get_stats(fs, &s);
	CHECK(s.replayed >= 1);
	CHECK_EQ(bt_verify_file(fs, "/d/synced", 1, 300000), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/d/unsynced", &st), -ENOENT);
	CHECK_EQ(blobfs_stat(fs, "/later", &st), -ENOENT);
	/* space of the lost file is free again */
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.clusters - sf.free_clusters, (300000 + 65535) / 65536);
	/* crash again right after the mount: the same state */
	crash(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/d/synced", 1, 300000), 0);
	blobfs_unmount(fs);
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK(r.clean_unmount);
	CHECK_EQ(r.errors + r.warnings, 0);
}

static void test_namespace_ops_replay(void)
{
	struct blobfs *fs = bt_fresh(ns, 4096, &quiet);
	REQUIRE(fs);
	REQUIRE(blobfs_mkdir(fs, "/a", 0755) == 0);
	REQUIRE(blobfs_mkdir(fs, "/a/b", 0755) == 0);
	REQUIRE(bt_write_file(fs, "/a/b/f1", 1, 0, 5000, false) == 0);
	REQUIRE(bt_write_file(fs, "/a/f2", 2, 0, 9000, false) == 0);
	REQUIRE(bt_write_file(fs, "/f3", 3, 0, 100, false) == 0);
	REQUIRE(blobfs_rename(fs, "/a/f2", "/a/b/f2", 0) == 0);
	REQUIRE(blobfs_rename(fs, "/f3", "/a/b/f1", 0) == 0); /* over an existing file */
	REQUIRE(blobfs_symlink(fs, "b/f2", "/a/link") == 0);
	REQUIRE(blobfs_truncate(fs, "/a/b/f2", 4000) == 0);
	REQUIRE(blobfs_mkdir(fs, "/gone", 0755) == 0);
	REQUIRE(blobfs_rmdir(fs, "/gone") == 0);
	REQUIRE(blobfs_sync(fs) == 0);
	crash(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/a/b/f1", 3, 100), 0);
	CHECK_EQ(bt_verify_file(fs, "/a/b/f2", 2, 4000), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/a/f2", &st), -ENOENT);
	CHECK_EQ(blobfs_stat(fs, "/f3", &st), -ENOENT);
	CHECK_EQ(blobfs_stat(fs, "/gone", &st), -ENOENT);
	char t[16];
	CHECK_EQ(blobfs_readlink(fs, "/a/link", t, sizeof(t)), 4);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	CHECK_EQ(sf.files, 6);
	CHECK_EQ(sf.clusters - sf.free_clusters, 1 + 1);
	blobfs_unmount(fs);
}

/* Finds the newest transaction in the journal and damages its payload. */
static void tear_last_txn(void)
{
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	REQUIRE(unvme_read_sync(ns, qp, b, 0, lpb) == 0);
	struct bfs_sb_disk sb;
	memcpy(&sb, b, sizeof(sb));
	uint64_t best = 0, best_blk = 0;
	for (uint64_t i = 0; i < sb.jnl_blocks; i++) {
		REQUIRE(unvme_read_sync(ns, qp, b, (sb.jnl_start + i) * lpb, lpb) == 0);
		struct bfs_txn_hdr h;
		memcpy(&h, b, sizeof(h));
		if (h.magic == BFS_TXN_MAGIC && !memcmp(h.uuid, sb.uuid, 16) && h.seq > best) {
			best = h.seq;
			best_blk = sb.jnl_start + i;
		}
	}
	REQUIRE(best > 0);
	REQUIRE(unvme_read_sync(ns, qp, b, best_blk * lpb, lpb) == 0);
	b[sizeof(struct bfs_txn_hdr) + 3] ^= 0xff;
	REQUIRE(unvme_write_sync(ns, qp, b, best_blk * lpb, lpb) == 0);
	unvme_dma_free(b);
}

static void test_torn_transaction_ignored(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/one", 1, 0, 1000, true) == 0);
	REQUIRE(bt_write_file(fs, "/two", 2, 0, 1000, true) == 0);
	crash(fs);
	tear_last_txn();
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK(r.warnings >= 1);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/one", 1, 1000), 0);
	/* /two's transaction is gone as a whole: the file is not there (or empty, never garbage) */
	struct blobfs_stat st;
	int rc = blobfs_stat(fs, "/two", &st);
	CHECK(rc == -ENOENT || (rc == 0 && st.size == 0));
	/* the file system goes on normally after it */
	CHECK_EQ(bt_write_file(fs, "/three", 3, 0, 5000, true), 0);
	crash(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/three", 3, 5000), 0);
	CHECK_EQ(bt_verify_file(fs, "/one", 1, 1000), 0);
	blobfs_unmount(fs);
}

static void test_freed_clusters_wait_for_commit(void)
{
	/* Write-back at every write, so the second file's data reaches the device at once. */
	struct blobfs_opts o = quiet;
	o.writeback_chunk = 4096;
	struct blobfs *fs = bt_fresh(ns, 65536, &o);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/a", 1, 0, 1u << 20, true) == 0);
	REQUIRE(blobfs_truncate(fs, "/a", 0) == 0);   /* not committed */
	REQUIRE(bt_write_file(fs, "/b", 2, 0, 1u << 20, false) == 0);
	crash(fs);
	fs = bt_mount(ns, &o);
	REQUIRE(fs);
	/* the truncate never became durable, and /b did not overwrite /a's clusters */
	CHECK_EQ(bt_verify_file(fs, "/a", 1, 1u << 20), 0);
	blobfs_unmount(fs);
}

static void test_journal_wraps_through_checkpoints(void)
{
	struct blobfs_mkfs_opts m = { .force = true, .journal_size = 256u << 10, .cluster_size = 4096 };
	REQUIRE(blobfs_mkfs(ns, &m) == 0);
	struct blobfs *fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	char p[64];
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/f%03d", i);
		REQUIRE(bt_write_file(fs, p, (uint32_t)i, 0, (size_t)(i * 13 + 1), true) == 0);
		if (i % 3 == 0) {
			snprintf(p, sizeof(p), "/f%03d", i - 1);
			blobfs_unlink(fs, p);
		}
	}
	struct blobfs_stats s;
	blobfs_get_stats(fs, &s);
	CHECK(s.checkpoints >= 2);
	CHECK(s.commits >= 250);
	crash(fs);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	int bad = 0;
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/f%03d", i);
		struct blobfs_stat st;
		bool gone = (i + 1) % 3 == 0 && i + 1 < 300;
		if (gone)
			bad += blobfs_stat(fs, p, &st) != -ENOENT;
		else
			bad += bt_verify_file(fs, p, (uint32_t)i, (size_t)(i * 13 + 1)) != 0;
	}
	CHECK_EQ(bad, 0);
	blobfs_unmount(fs);
}

static void test_damaged_checkpoint_falls_back(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/old", 1, 0, 1000, true) == 0);
	blobfs_unmount(fs); /* checkpoint 1 */
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/new", 2, 0, 1000, true) == 0);
	blobfs_unmount(fs); /* checkpoint 2, in the other slot */
	/* damage the newest checkpoint's payload */
	uint8_t *b = unvme_dma_zalloc(4096, 4096);
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	REQUIRE(unvme_read_sync(ns, qp, b, 0, lpb) == 0);
	struct bfs_sb_disk sb;
	memcpy(&sb, b, sizeof(sb));
	uint64_t slot[2] = { sb.ckpt_a, sb.ckpt_b }, seq[2];
	for (int i = 0; i < 2; i++) {
		REQUIRE(unvme_read_sync(ns, qp, b, slot[i] * lpb, lpb) == 0);
		struct bfs_ckpt_hdr h;
		memcpy(&h, b, sizeof(h));
		seq[i] = h.magic == BFS_CKPT_MAGIC ? h.seq : 0;
	}
	uint64_t newest = seq[1] > seq[0] ? slot[1] : slot[0];
	REQUIRE(unvme_read_sync(ns, qp, b, (newest + 1) * lpb, lpb) == 0);
	b[10] ^= 0x40;
	REQUIRE(unvme_write_sync(ns, qp, b, (newest + 1) * lpb, lpb) == 0);
	unvme_dma_free(b);
	char *report = NULL;
	size_t rlen = 0;
	FILE *out = open_memstream(&report, &rlen);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, out, &r), 0);
	fclose(out);
	CHECK(report && strstr(report, "payload checksum mismatch") != NULL);
	CHECK(report && strstr(report, "older checkpoint") != NULL);
	free(report);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/old", 1, 1000), 0);
	blobfs_unmount(fs);
}

static void inject_media_errors(uint32_t n)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_MEDIA_ERROR, .cdw11 = n };
	REQUIRE(unvme_admin(ctrlr, &cmd, NULL, 0, NULL) == 0);
}

static void clear_faults(void)
{
	struct nvme_sqe cmd = { .opc = NVME_ADM_EMU_FAULT, .cdw10 = NVME_EMU_FAULT_NONE };
	unvme_admin(ctrlr, &cmd, NULL, 0, NULL);
}

static void test_failed_writes(void)
{
	struct blobfs *fs = bt_fresh(ns, 0, &quiet);
	REQUIRE(fs);
	REQUIRE(bt_write_file(fs, "/kept", 1, 0, 10000, true) == 0);
	/* a data write-back that fails keeps the data dirty and says why */
	struct blobfs_file *f;
	REQUIRE(blobfs_open(fs, "/retry", O_RDWR | O_CREAT, 0644, &f) == 0);
	uint8_t buf[8192];
	bt_fill(buf, sizeof(buf), 5, 0);
	REQUIRE(blobfs_pwrite(f, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
	inject_media_errors(1);
	CHECK_EQ(blobfs_fsync(f), -EIO);
	CHECK(strstr(blobfs_errmsg(), "Write Fault") != NULL || strstr(blobfs_errmsg(), "failed") != NULL);
	clear_faults();
	CHECK_EQ(blobfs_fsync(f), 0); /* the retry succeeds */
	blobfs_close(f);
	/* a failed journal write stops all further changes until a remount */
	REQUIRE(bt_write_file(fs, "/x", 2, 0, 100, false) == 0);
	REQUIRE(blobfs_sync(fs) == 0);
	REQUIRE(blobfs_mkdir(fs, "/y", 0755) == 0);
	inject_media_errors(1);
	CHECK_EQ(blobfs_sync(fs), -EIO);
	clear_faults();
	CHECK_EQ(blobfs_mkdir(fs, "/z", 0755), -EIO);
	CHECK(strstr(blobfs_errmsg(), "stopped taking changes") != NULL);
	CHECK(blobfs_unmount(fs) != 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/kept", 1, 10000), 0);
	CHECK_EQ(bt_verify_file(fs, "/retry", 5, 8192), 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/x", &st), 0);
	CHECK_EQ(blobfs_stat(fs, "/y", &st), -ENOENT);
	blobfs_unmount(fs);
}


/* ---- large and split commits ---- */

struct jtxn {
	uint64_t seq, blk, nblocks, payload;
};

static uint8_t *jbuf;

/* REQUIRE for helpers that return a value. */
#define REQUIRE_OR(ret, cond)                                                    \
	do {                                                                     \
		if (!(cond)) {                                                   \
			CHECK(cond);                                             \
			return ret;                                              \
		}                                                                \
	} while (0)

static void read_sb(struct bfs_sb_disk *sb)
{
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	REQUIRE(unvme_read_sync(ns, qp, jbuf, 0, lpb) == 0);
	memcpy(sb, jbuf, sizeof(*sb));
}

/* The journal's transaction headers with seq > after, in journal order (not checksummed). */
static size_t list_txns(uint64_t after, struct jtxn *out, size_t max)
{
	struct bfs_sb_disk sb;
	read_sb(&sb);
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	size_t n = 0;
	for (uint64_t i = 0; i < sb.jnl_blocks && n < max; i++) {
		REQUIRE_OR(n, unvme_read_sync(ns, qp, jbuf, (sb.jnl_start + i) * lpb, lpb) == 0);
		struct bfs_txn_hdr h;
		memcpy(&h, jbuf, sizeof(h));
		if (h.magic == BFS_TXN_MAGIC && !memcmp(h.uuid, sb.uuid, 16) && h.seq > after) {
			out[n++] = (struct jtxn){ h.seq, sb.jnl_start + i, h.nblocks, h.payload_len };
			i += h.nblocks - 1;
		}
	}
	return n;
}

static void zero_block(uint64_t blk)
{
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	memset(jbuf, 0, 4096);
	REQUIRE(unvme_write_sync(ns, qp, jbuf, blk * lpb, lpb) == 0);
}

/* Damages a byte in the middle of a transaction's records (its checksum fails). */
static void damage_payload(const struct jtxn *t)
{
	uint64_t at = sizeof(struct bfs_txn_hdr) + t->payload / 2;
	uint64_t blk = t->blk + at / 4096;
	size_t off = (size_t)(at % 4096);
	uint32_t lpb = 4096 / unvme_ns_lba_size(ns);
	REQUIRE(unvme_read_sync(ns, qp, jbuf, blk * lpb, lpb) == 0);
	jbuf[off] ^= 0x5a;
	REQUIRE(unvme_write_sync(ns, qp, jbuf, blk * lpb, lpb) == 0);
}

#define NBULK 3000

/* Creates NBULK small files in /d (each closed, so each is CREATE, MAP, SETSIZE in the
 * buffer) and commits them all at once; returns the journal's transactions of that commit. */
static struct blobfs *bulk_commit(struct jtxn *t, size_t *nt, uint64_t *seq0)
{
	struct blobfs_mkfs_opts m = { .force = true, .cluster_size = 4096, .journal_size = 16u << 20 };
	REQUIRE_OR(NULL, blobfs_mkfs(ns, &m) == 0);
	struct blobfs *fs = bt_mount(ns, &quiet);
	REQUIRE_OR(NULL, fs);
	/* Small transactions (white box), so that one commit makes many of them. */
	fs->j.txn_max = 16u << 10;
	REQUIRE_OR(NULL, blobfs_mkdir(fs, "/d", 0755) == 0);
	REQUIRE_OR(NULL, blobfs_sync(fs) == 0);
	struct jtxn before[8];
	size_t nb = list_txns(0, before, 8);
	*seq0 = nb ? before[nb - 1].seq : 0;
	char p[64];
	for (int i = 0; i < NBULK; i++) {
		snprintf(p, sizeof(p), "/d/file%05d", i);
		REQUIRE_OR(NULL, bt_write_file(fs, p, (uint32_t)i, 0, (size_t)(100 + i % 300), false) == 0);
	}
	REQUIRE_OR(NULL, blobfs_sync(fs) == 0);
	*nt = list_txns(*seq0, t, 64);
	return fs;
}

/* Files of bulk_commit after a crash: a prefix of them, whole (the last one may exist
 * empty: its CREATE made it, its data did not). Returns how many are whole. */
static int check_prefix(struct blobfs *fs, int *broken)
{
	char p[64];
	int whole = 0, gaps = 0;
	bool ended = false;
	*broken = 0;
	for (int i = 0; i < NBULK; i++) {
		snprintf(p, sizeof(p), "/d/file%05d", i);
		struct blobfs_stat st;
		int rc = blobfs_stat(fs, p, &st);
		if (rc == -ENOENT) {
			ended = true;
			continue;
		}
		if (ended)
			gaps++;
		else if (st.size == 0 && !ended)
			ended = true; /* created, data in the lost part */
		else if (bt_verify_file(fs, p, (uint32_t)i, (size_t)(100 + i % 300)) == 0)
			whole++;
		else
			(*broken)++;
	}
	*broken += gaps;
	return whole;
}

static void test_large_commit_replays_whole(void)
{
	struct jtxn t[64];
	size_t nt;
	uint64_t seq0;
	struct blobfs *fs = bulk_commit(t, &nt, &seq0);
	/* bounded: several transactions, none over the bound */
	CHECK(nt >= 10);
	for (size_t i = 0; i < nt; i++) {
		CHECK(t[i].payload <= 16u << 10);
		CHECK_EQ(t[i].seq, seq0 + 1 + i);
	}
	crash(fs);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
	CHECK_EQ(r.replayed, nt + 1);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	int broken;
	CHECK_EQ(check_prefix(fs, &broken), NBULK);
	CHECK_EQ(broken, 0);
	blobfs_unmount(fs);
}

static void test_commit_cut_between_transactions(void)
{
	struct jtxn t[64];
	size_t nt;
	uint64_t seq0;
	struct blobfs *fs = bulk_commit(t, &nt, &seq0);
	REQUIRE(nt >= 3);
	crash(fs);
	/* As if the crash came after the first transactions of the commit were durable: the
	 * later ones were never written. */
	for (size_t i = nt / 2; i < nt; i++)
		zero_block(t[i].blk);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK_EQ(r.lost_transactions, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	int broken;
	int whole = check_prefix(fs, &broken);
	CHECK_EQ(broken, 0);
	CHECK(whole > 0 && whole < NBULK);
	blobfs_unmount(fs);
	/* no clusters past a file's end: a file's MAP and SETSIZE never part */
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors + r.warnings, 0);
}

static void test_torn_last_part_is_a_warning(void)
{
	struct jtxn t[64];
	size_t nt;
	uint64_t seq0;
	struct blobfs *fs = bulk_commit(t, &nt, &seq0);
	REQUIRE(nt >= 3);
	crash(fs);
	/* the write of the middle transaction was cut short, nothing came after it */
	size_t k = nt / 2;
	damage_payload(&t[k]);
	for (size_t i = k + 1; i < nt; i++)
		zero_block(t[i].blk);
	struct blobfs_fsck_result r;
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK_EQ(r.warnings, 1);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	int broken;
	check_prefix(fs, &broken);
	CHECK_EQ(broken, 0);
	blobfs_unmount(fs);
}

static char *fsck_report(uint32_t flags, struct blobfs_fsck_result *r)
{
	char *report = NULL;
	size_t rlen = 0;
	FILE *out = open_memstream(&report, &rlen);
	CHECK_EQ(blobfs_fsck(ns, flags, out, r), 0);
	fclose(out);
	return report;
}

/* A damaged transaction with whole ones after it had been acknowledged: an error, never a
 * silent drop; mount refuses, read-only mount and fsck --repair accept the loss. */
static void damaged_then_repaired(bool header)
{
	struct jtxn t[64];
	size_t nt;
	uint64_t seq0;
	struct blobfs *fs = bulk_commit(t, &nt, &seq0);
	REQUIRE(nt >= 3);
	REQUIRE(bt_write_file(fs, "/after", 77, 0, 5000, true) == 0);
	crash(fs);
	size_t k = nt / 2;
	if (header)
		zero_block(t[k].blk);         /* the chain seems to end there */
	else
		damage_payload(&t[k]);        /* its checksum fails */
	struct blobfs_fsck_result r;
	char *rep = fsck_report(0, &r);
	if (r.errors < 1)
		fprintf(stderr, "%s", rep);
	CHECK(r.errors >= 1);
	CHECK(r.lost_transactions >= nt - k - 1);
	CHECK(rep && strstr(rep, "acknowledged") != NULL);
	free(rep);
	struct blobfs *bad = NULL;
	CHECK_EQ(blobfs_mount(ns, &quiet, &bad), BLOBFS_EBADSB);
	CHECK(strstr(blobfs_errmsg(), "acknowledged") != NULL);
	struct blobfs_opts ro = quiet;
	ro.read_only = true;
	fs = bt_mount(ns, &ro);
	REQUIRE(fs);
	blobfs_unmount(fs);
	rep = fsck_report(BLOBFS_FSCK_REPAIR, &r);
	CHECK(r.errors >= 1 && r.repaired >= 1);
	free(rep);
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	int broken;
	check_prefix(fs, &broken);
	CHECK_EQ(broken, 0);
	struct blobfs_stat st;
	CHECK_EQ(blobfs_stat(fs, "/after", &st), -ENOENT);
	/* The file system goes on; the stale whole transactions left in the journal never pass
	 * for new ones (their numbers are not given out again). */
	REQUIRE(bt_write_file(fs, "/later", 78, 0, 3000, true) == 0);
	crash(fs);
	CHECK_EQ(blobfs_fsck(ns, 0, NULL, &r), 0);
	CHECK_EQ(r.errors, 0);
	CHECK_EQ(r.lost_transactions, 0);
	fs = bt_mount(ns, &quiet);
	REQUIRE(fs);
	CHECK_EQ(bt_verify_file(fs, "/later", 78, 3000), 0);
	CHECK_EQ(blobfs_stat(fs, "/after", &st), -ENOENT);
	blobfs_unmount(fs);
}

static void test_damaged_middle_transaction_is_an_error(void)
{
	damaged_then_repaired(false);
}

static void test_lost_header_with_later_transactions_is_an_error(void)
{
	damaged_then_repaired(true);
}

static bool setup(void)
{
	ctrlr = bt_open(DEV);
	ns = bt_ns(ctrlr);
	jbuf = unvme_dma_zalloc(4096, 4096);
	return ns && jbuf && unvme_qpair_create(ctrlr, NULL, &qp) == 0;
}

static void teardown(void)
{
	unvme_qpair_destroy(qp);
	unvme_dma_free(jbuf);
	unvme_ctrlr_close(ctrlr);
}

BT_MAIN(setup, teardown,
	TEST(test_synced_survives_unsynced_goes), TEST(test_namespace_ops_replay),
	TEST(test_torn_transaction_ignored), TEST(test_freed_clusters_wait_for_commit),
	TEST(test_journal_wraps_through_checkpoints), TEST(test_damaged_checkpoint_falls_back),
	TEST(test_failed_writes), TEST(test_large_commit_replays_whole),
	TEST(test_commit_cut_between_transactions), TEST(test_torn_last_part_is_a_warning),
	TEST(test_damaged_middle_transaction_is_an_error),
	TEST(test_lost_header_with_later_transactions_is_an_error))
