/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The superblock: geometry chosen at mkfs, its checks at mount, and mkfs itself. The
 * superblock is written only by mkfs (and fsck --repair), so it cannot be torn by normal
 * operation; a copy in the namespace's last block lets fsck restore a damaged block 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfs.h"
#include "lib/common/opts.h"

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

void bfs_sb_seal(struct bfs_sb_disk *sb)
{
	sb->crc = 0;
	sb->crc = bfs_crc(sb, sizeof(*sb));
}

int bfs_sb_check(const struct bfs_sb_disk *sb, uint64_t ns_blocks, uint32_t lba_size)
{
	if (memcmp(sb->magic, BFS_MAGIC, 8) != 0)
		return bfs_err(BLOBFS_ENOFS, "no BlobFS on this namespace (no magic in block 0); "
			       "create one with 'unvme mkfs'");
	struct bfs_sb_disk c = *sb;
	c.crc = 0;
	if (bfs_crc(&c, sizeof(c)) != sb->crc)
		return bfs_err(BLOBFS_EBADSB, "bad superblock: checksum mismatch (stored %08x, computed %08x)",
			       sb->crc, bfs_crc(&c, sizeof(c)));
	if (sb->version > BLOBFS_VERSION || sb->version == 0)
		return bfs_err(-EPROTONOSUPPORT, "BlobFS format version %u is not supported (this "
			       "library reads version %u)", sb->version, BLOBFS_VERSION);
	const char *why = NULL;
	uint64_t bpc = sb->cluster_size / BFS_BLOCK;
	if (sb->block_size != BFS_BLOCK)
		why = "block size is not 4096";
	else if (!is_pow2(sb->cluster_size) || sb->cluster_size < BFS_BLOCK || sb->cluster_size > (64u << 20))
		why = "cluster size is not a power of two in 4 KiB..64 MiB";
	else if (lba_size > BFS_BLOCK || BFS_BLOCK % lba_size)
		why = "the namespace's LBA size does not divide 4096";
	else if (sb->total_blocks > ns_blocks)
		why = "the namespace is smaller than the file system";
	else if (sb->ckpt_a != 1 || sb->ckpt_b != sb->ckpt_a + sb->ckpt_blocks || sb->ckpt_blocks < 2)
		why = "checkpoint slots are misplaced";
	else if (sb->jnl_start != sb->ckpt_b + sb->ckpt_blocks || sb->jnl_blocks < 2)
		why = "the journal is misplaced";
	else if (sb->data_start < sb->jnl_start + sb->jnl_blocks || sb->data_start % bpc)
		why = "the data area is misplaced";
	else if (sb->nclusters == 0 || sb->data_start + sb->nclusters * bpc > sb->total_blocks - 1)
		why = "the data area runs past the end";
	if (why)
		return bfs_err(BLOBFS_EBADSB, "bad superblock: %s", why);
	return 0;
}

void bfs_sb_geom(const struct bfs_sb_disk *sb, uint32_t lba_size, struct bfs_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->lba_size = lba_size;
	g->lbas_per_block = BFS_BLOCK / lba_size;
	g->cluster_size = sb->cluster_size;
	g->blocks_per_cluster = sb->cluster_size / BFS_BLOCK;
	g->total_blocks = sb->total_blocks;
	g->ckpt[0] = sb->ckpt_a;
	g->ckpt[1] = sb->ckpt_b;
	g->ckpt_blocks = sb->ckpt_blocks;
	g->jnl_start = sb->jnl_start;
	g->jnl_blocks = sb->jnl_blocks;
	g->data_start = sb->data_start;
	g->nclusters = sb->nclusters;
}

static uint64_t ns_blocks(struct unvme_ns *ns)
{
	return unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns) / BFS_BLOCK;
}

int bfs_sb_read(struct unvme_ns *ns, struct bfs_qctx *q, bool backup, struct bfs_sb_disk *sb)
{
	uint8_t *buf = bfs_qctx_bounce(q);
	if (!buf)
		return -ENOMEM;
	uint64_t blk = backup ? ns_blocks(ns) - 1 : 0;
	int rc = bfs_io_read(q, buf, blk, 1, "superblock read");
	if (rc)
		return rc;
	memcpy(sb, buf, sizeof(*sb));
	return 0;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int make_geometry(struct unvme_ns *ns, const struct blobfs_mkfs_opts *o, struct bfs_sb_disk *sb)
{
	uint32_t lba = unvme_ns_lba_size(ns);
	uint64_t total = ns_blocks(ns);
	if (unvme_ns_csi(ns) != NVME_CSI_NVM)
		return bfs_err(-EINVAL, "namespace %u is not an NVM (block) namespace", unvme_ns_id(ns));
	if (lba != 512 && lba != 4096)
		return bfs_err(-EINVAL, "namespace %u has %u-byte blocks; BlobFS needs 512 or 4096",
			       unvme_ns_id(ns), lba);
	if (total * BFS_BLOCK < BFS_MIN_DEVICE)
		return bfs_err(-EINVAL, "namespace %u holds %llu bytes; BlobFS needs at least 8 MiB",
			       unvme_ns_id(ns), (unsigned long long)(total * BFS_BLOCK));
	/* 4 KiB clusters, as ext4's blocks: a small file takes 4 KiB, not a large cluster, and
	 * large files stay contiguous anyway (appends take runs of clusters ahead). Past
	 * BFS_CLUSTERS_MAX clusters (1 TiB) the cluster doubles, which bounds the allocation
	 * bitmap (32 MiB) and fsck's map. */
	uint64_t cs = o->cluster_size;
	if (!cs)
		for (cs = BFS_BLOCK; total * BFS_BLOCK / cs > BFS_CLUSTERS_MAX; cs *= 2)
			;
	if (!is_pow2(cs) || cs < BFS_BLOCK || cs > (64u << 20))
		return bfs_err(-EINVAL, "cluster size %llu is not a power of two in 4 KiB..64 MiB",
			       (unsigned long long)cs);
	uint64_t bpc = cs / BFS_BLOCK;
	uint64_t ck = o->meta_size ? o->meta_size / BFS_BLOCK : clamp_u64(total / 64, 64, 65536);
	uint64_t jn = o->journal_size ? o->journal_size / BFS_BLOCK : clamp_u64(total / 64, 256, 16384);
	if (ck < 16)
		return bfs_err(-EINVAL, "metadata slot of %llu bytes is below 64 KiB",
			       (unsigned long long)(ck * BFS_BLOCK));
	if (jn < 64)
		return bfs_err(-EINVAL, "journal of %llu bytes is below 256 KiB",
			       (unsigned long long)(jn * BFS_BLOCK));
	memset(sb, 0, sizeof(*sb));
	memcpy(sb->magic, BFS_MAGIC, 8);
	sb->version = BLOBFS_VERSION;
	sb->block_size = BFS_BLOCK;
	sb->lba_size = lba;
	sb->cluster_size = (uint32_t)cs;
	sb->total_blocks = total;
	sb->ckpt_a = 1;
	sb->ckpt_blocks = ck;
	sb->ckpt_b = 1 + ck;
	sb->jnl_start = 1 + 2 * ck;
	sb->jnl_blocks = jn;
	sb->data_start = (sb->jnl_start + jn + bpc - 1) / bpc * bpc;
	if (sb->data_start + 4 * bpc > total - 1)
		return bfs_err(-EINVAL, "namespace %u is too small for this geometry (metadata %llu KiB "
			       "x2, journal %llu KiB, clusters of %llu KiB)", unvme_ns_id(ns),
			       (unsigned long long)(ck * 4), (unsigned long long)(jn * 4),
			       (unsigned long long)(cs >> 10));
	sb->nclusters = (total - 1 - sb->data_start) / bpc;
	if (o->label) {
		if (strlen(o->label) >= sizeof(sb->label))
			return bfs_err(-EINVAL, "label '%s' is longer than 31 bytes", o->label);
		strcpy(sb->label, o->label);
	}
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	bool got = fd >= 0 && read(fd, sb->uuid, 16) == 16;
	if (fd >= 0)
		close(fd);
	if (!got) {
		uint64_t t = (uint64_t)bfs_now_ns() ^ ((uint64_t)getpid() << 32);
		memcpy(sb->uuid, &t, 8);
		t *= 0x9e3779b97f4a7c15ull;
		memcpy(sb->uuid + 8, &t, 8);
	}
	sb->uuid[6] = (uint8_t)((sb->uuid[6] & 0x0f) | 0x40); /* RFC 4122 version 4 */
	sb->uuid[8] = (uint8_t)((sb->uuid[8] & 0x3f) | 0x80);
	sb->mkfs_time_ns = bfs_now_ns();
	bfs_sb_seal(sb);
	return 0;
}

/* The first checkpoint: the root directory alone. */
static int write_first_checkpoint(struct bfs_qctx *q, const struct bfs_sb_disk *sb)
{
	uint8_t *buf = bfs_qctx_bounce(q);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0, 3 * BFS_BLOCK);
	struct bfs_ckpt_inode root = {
		.ino = BFS_ROOT_INO, .parent = 0, .type = BLOBFS_TYPE_DIR, .mode = 0755,
		.atime_ns = sb->mkfs_time_ns, .mtime_ns = sb->mkfs_time_ns, .ctime_ns = sb->mkfs_time_ns,
	};
	uint8_t *payload = buf + BFS_BLOCK;
	memcpy(payload, &root, sizeof(root));
	struct bfs_ckpt_hdr h = {
		.magic = BFS_CKPT_MAGIC, .seq = 0, .jnl_head = 0, .next_ino = BFS_ROOT_INO + 1,
		.ninodes = 1, .payload_len = sizeof(root), .clean = 1, .time_ns = sb->mkfs_time_ns,
	};
	memcpy(h.uuid, sb->uuid, 16);
	h.payload_crc = bfs_crc(payload, sizeof(root));
	h.crc = bfs_crc(&h, sizeof(h));
	memcpy(buf, &h, sizeof(h));
	int rc = bfs_io_write(q, buf, sb->ckpt_a, 2, "mkfs checkpoint");
	if (rc)
		return rc;
	/* Slot B and the journal's first block start empty. */
	memset(buf, 0, BFS_BLOCK);
	rc = bfs_io_write(q, buf, sb->ckpt_b, 1, "mkfs checkpoint B");
	if (!rc)
		rc = bfs_io_write(q, buf, sb->jnl_start, 1, "mkfs journal");
	return rc;
}

int blobfs_mkfs(struct unvme_ns *ns, const struct blobfs_mkfs_opts *opts)
{
	bfs_err_clear();
	if (!ns)
		return bfs_err(-EINVAL, "no namespace given");
	struct blobfs_mkfs_opts def = {0};
	int orc = opts_take(&def, sizeof(def), opts, OPTS_SIZE_THROUGH(struct blobfs_mkfs_opts, discard));
	if (orc)
		return bfs_err(orc, "mkfs: %s", opts_size_error(orc, opts->size, sizeof(def)));
	const struct blobfs_mkfs_opts *o = &def;
	struct bfs_sb_disk sb;
	int rc = make_geometry(ns, o, &sb);
	if (rc)
		return rc;

	struct bfs_qctx q;
	rc = bfs_standalone_qpair(ns, &q);
	if (rc)
		return rc;
	int lock_fd = -1;
	char lock_path[256] = "";
	struct bfs_sb_disk old;
	rc = bfs_sb_read(ns, &q, false, &old);
	if (rc)
		goto out;
	int chk = bfs_sb_check(&old, ns_blocks(ns), unvme_ns_lba_size(ns));
	if (chk != BLOBFS_ENOFS) {
		if (!o->force) {
			rc = bfs_err(-EEXIST, "namespace %u already holds a BlobFS%s%s%s; use force to "
				     "overwrite it", unvme_ns_id(ns), old.label[0] ? " (label '" : "",
				     old.label[0] ? old.label : "", old.label[0] ? "')" : "");
			goto out;
		}
		if (chk == 0) {
			/* Never under a mounted file system's feet. */
			rc = bfs_ns_lock(ns, old.uuid, false, &lock_fd, lock_path, sizeof(lock_path));
			if (rc)
				goto out;
		}
	}
	rc = write_first_checkpoint(&q, &sb);
	if (!rc)
		rc = bfs_io_flush(&q);
	if (!rc && o->discard) {
		uint64_t bpc = sb.cluster_size / BFS_BLOCK;
		rc = bfs_io_discard(&q, sb.data_start, sb.nclusters * bpc);
	}
	if (rc)
		goto out;
	uint8_t *buf = bfs_qctx_bounce(&q);
	memset(buf, 0, BFS_BLOCK);
	memcpy(buf, &sb, sizeof(sb));
	rc = bfs_io_write(&q, buf, ns_blocks(ns) - 1, 1, "superblock copy write");
	if (!rc)
		rc = bfs_io_write(&q, buf, 0, 1, "superblock write");
	if (!rc)
		rc = bfs_io_flush(&q);
out:
	if (lock_fd >= 0)
		bfs_ns_unlock(lock_fd, lock_path);
	bfs_qctx_fini_standalone(&q);
	return rc;
}
