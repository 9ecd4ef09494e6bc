/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsck: checks a file system that is not mounted read-write. It reads what a mount reads
 * (superblock and its copy, the newest valid checkpoint, the journal after it) and then
 * checks what a mount trusts: every extent inside the data area and no cluster owned
 * twice, every inode reachable from the root exactly once under a valid name, symlinks with
 * targets, inode numbers below next_ino, and the space accounting. With BLOBFS_FSCK_REPAIR
 * it restores a damaged superblock from its copy, takes doubly owned clusters away from the
 * second owner (that range of the file becomes a hole), frees clusters past a file's end,
 * moves unreachable inodes into /lost+found, and writes a clean checkpoint.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

struct fsck {
	struct blobfs *fs;
	FILE *out;
	uint32_t flags;
	struct blobfs_fsck_result *res;
	uint64_t *used;          /* bitmap: clusters some inode owns (the first one checked) */
	uint64_t max_ino;
	bool changed;
};

static void say(struct fsck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct fsck *c, const char *fmt, ...)
{
	if (!c->out)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
}

static void path_of(const struct bfs_inode *in, char *buf, size_t len)
{
	const struct bfs_inode *chain[256];
	int n = 0;
	for (const struct bfs_inode *p = in; p && p->parent && n < 256; p = p->parent)
		chain[n++] = p;
	size_t o = 0;
	buf[0] = '\0';
	if (n == 0)
		snprintf(buf, len, "/");
	for (int i = n - 1; i >= 0 && o < len; i--)
		o += (size_t)snprintf(buf + o, len - o, "/%.*s", (int)chain[i]->name_len, chain[i]->name);
}

static bool reachable(const struct bfs_inode *in, const struct bfs_inode *root)
{
	uint32_t steps = 0;
	for (const struct bfs_inode *p = in; p; p = p->parent) {
		if (p == root)
			return true;
		if (++steps > 100000)
			return false;
	}
	return false;
}

static bool is_used(const struct fsck *c, uint64_t p)
{
	return c->used[p / 64] >> (p % 64) & 1;
}

static void set_used(struct fsck *c, uint64_t p)
{
	c->used[p / 64] |= 1ull << (p % 64);
}

/* The inode (other than not) whose extents hold cluster p: for the report only. */
struct find_owner {
	uint64_t p, found;
	const struct bfs_inode *not;
};

static void owner_cb(void *arg, struct bfs_inode *in)
{
	struct find_owner *f = arg;
	if (f->found || in == f->not)
		return;
	for (uint32_t i = 0; i < in->ext.n; i++)
		if (f->p >= in->ext.e[i].pclu && f->p < in->ext.e[i].pclu + in->ext.e[i].count)
			f->found = in->ino;
}

static uint64_t other_owner(struct fsck *c, const struct bfs_inode *in, uint64_t p)
{
	struct find_owner f = { p, 0, in };
	bfs_itable_each(c->fs, owner_cb, &f);
	return f.found;
}

/* Clusters freed by a repair: clusters have one owner once double use is resolved. */
static void trim_cb(void *arg, uint64_t pclu, uint32_t count, uint32_t flags)
{
	struct fsck *c = arg;
	(void)flags;
	for (uint64_t k = pclu; k < pclu + count; k++)
		c->used[k / 64] &= ~(1ull << (k % 64));
}

/* Records the inode's clusters; a cluster owned already is an error (repair: the file gets a
 * hole there). Clusters past the end are a warning (repair: freed): the file system never
 * logs them (preallocation past the end lives in memory only). */
static void check_extents(struct fsck *c, struct bfs_inode *in, const char *path)
{
	uint64_t cs = c->fs->g.cluster_size;
	uint64_t limit = (bfs_load_size(in) + cs - 1) / cs;
	bool repair = c->flags & BLOBFS_FSCK_REPAIR;
restart:
	for (uint32_t i = 0; i < in->ext.n; i++) {
		struct bfs_extent *e = &in->ext.e[i];
		for (uint64_t k = 0; k < e->count; k++) {
			uint64_t p = e->pclu + k;
			if (!is_used(c, p)) {
				set_used(c, p);
				continue;
			}
			c->res->errors++;
			say(c, "error: %s: cluster %llu is also used by inode %llu\n", path,
			    (unsigned long long)p, (unsigned long long)other_owner(c, in, p));
			if (!repair)
				continue;
			struct bfs_extents keep = {0};
			for (uint32_t j = 0; j < in->ext.n; j++) {
				struct bfs_extent *x = &in->ext.e[j];
				for (uint64_t m = 0; m < x->count; m++)
					if (x->pclu + m != p)
						bfs_ext_add(&keep, x->lclu + m, x->pclu + m, 1, x->flags);
			}
			bfs_ext_free(&in->ext);
			in->ext = keep;
			c->res->repaired++;
			c->changed = true;
			say(c, "  repaired: %s has a hole there now\n", path);
			goto restart;
		}
	}
	uint64_t past = 0;
	for (uint32_t i = 0; i < in->ext.n; i++) {
		struct bfs_extent *e = &in->ext.e[i];
		if (e->lclu + e->count > limit)
			past += e->lclu + e->count - BFS_MAX(limit, e->lclu);
	}
	if (past) {
		c->res->warnings++;
		say(c, "warning: %s: %llu clusters past the end of the file are allocated\n", path,
		    (unsigned long long)past);
		if (repair) {
			bfs_ext_trim(&in->ext, limit, trim_cb, c);
			c->res->repaired++;
			c->changed = true;
		}
	}
}

static void check_inode(void *arg, struct bfs_inode *in)
{
	struct fsck *c = arg;
	struct blobfs *fs = c->fs;
	char path[1024];
	path_of(in, path, sizeof(path));
	if (in->ino > c->max_ino)
		c->max_ino = in->ino;
	switch (in->type) {
	case BLOBFS_TYPE_DIR: c->res->dirs++; break;
	case BLOBFS_TYPE_SYMLINK: c->res->symlinks++; break;
	case BLOBFS_TYPE_FILE: c->res->files++; break;
	default: c->res->specials++; break;
	}
	if (c->flags & BLOBFS_FSCK_VERBOSE)
		say(c, "%8llu %s %12llu %s\n", (unsigned long long)in->ino,
		    in->type == BLOBFS_TYPE_DIR ? "dir " : in->type == BLOBFS_TYPE_SYMLINK ? "link" : "file",
		    (unsigned long long)bfs_load_size(in), path);
	if (in != fs->root && !reachable(in, fs->root)) {
		c->res->errors++;
		say(c, "error: inode %llu is not reachable from the root\n", (unsigned long long)in->ino);
	}
	if (in->name && (memchr(in->name, '/', in->name_len) || memchr(in->name, '\0', in->name_len))) {
		c->res->errors++;
		say(c, "error: %s: the name holds '/' or a NUL byte\n", path);
	}
	if (in->type == BLOBFS_TYPE_SYMLINK && (!in->link || !in->link[0])) {
		c->res->errors++;
		say(c, "error: %s: symbolic link without a target\n", path);
	}
	if (in->type != BLOBFS_TYPE_FILE && in->ext.n) {
		c->res->errors++;
		say(c, "error: %s: a %s owns clusters\n", path, in->type == BLOBFS_TYPE_DIR ? "directory" :
		    in->type == BLOBFS_TYPE_SYMLINK ? "symlink" : "special file");
	}
	check_extents(c, in, path);
}

static int move_to_lost_found(struct fsck *c, struct bfs_inode *in)
{
	struct blobfs *fs = c->fs;
	struct bfs_inode *lf = bfs_dir_find(fs->root, "lost+found", 10);
	if (!lf) {
		struct bfs_path p = { fs->root, NULL, "lost+found", 10 };
		int rc = bfs_create(fs, &p, BLOBFS_TYPE_DIR, 0700, NULL);
		if (rc)
			return rc;
		lf = p.inode;
	}
	char name[32];
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)in->ino);
	if (in->parent)
		bfs_dir_remove(in->parent, in->name, in->name_len);
	return bfs_dir_add(lf, name, strlen(name), in);
}

int blobfs_fsck(struct unvme_ns *ns, uint32_t flags, FILE *out, struct blobfs_fsck_result *res)
{
	bfs_err_clear();
	struct blobfs_fsck_result dummy;
	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!ns)
		return bfs_err(-EINVAL, "no namespace given");
	bool repair = flags & BLOBFS_FSCK_REPAIR;
	uint64_t blocks = unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns) / BFS_BLOCK;
	struct bfs_qctx q;
	int rc = bfs_standalone_qpair(ns, &q);
	if (rc)
		return rc;
	struct bfs_sb_disk sb, copy;
	rc = bfs_sb_read(ns, &q, false, &sb);
	int prc = rc ? rc : bfs_sb_check(&sb, blocks, unvme_ns_lba_size(ns));
	int crc = bfs_sb_read(ns, &q, true, &copy);
	if (!crc)
		crc = bfs_sb_check(&copy, blocks, unvme_ns_lba_size(ns));
	char pmsg[512];
	snprintf(pmsg, sizeof(pmsg), "%s", blobfs_errmsg());
	if (prc < 0 && prc != BLOBFS_ENOFS && prc != BLOBFS_EBADSB && prc != -EPROTONOSUPPORT) {
		bfs_qctx_fini_standalone(&q);
		return prc;
	}
	if (prc) {
		if (crc) {
			bfs_qctx_fini_standalone(&q);
			return bfs_err(prc, "%s", pmsg);
		}
		res->errors++;
		if (out)
			fprintf(out, "error: block 0: %s; the copy in block %llu is good\n", pmsg,
				(unsigned long long)(blocks - 1));
		if (repair) {
			uint8_t *buf = bfs_qctx_bounce(&q);
			rc = buf ? 0 : -ENOMEM;
			if (!rc) {
				memset(buf, 0, BFS_BLOCK);
				memcpy(buf, &copy, sizeof(copy));
				rc = bfs_io_write(&q, buf, 0, 1, "superblock repair");
			}
			if (!rc)
				rc = bfs_io_flush(&q);
			if (rc) {
				bfs_qctx_fini_standalone(&q);
				return rc;
			}
			res->repaired++;
			if (out)
				fprintf(out, "  repaired: the superblock was restored from its copy\n");
		}
		sb = copy;
	} else if (crc) {
		res->warnings++;
		if (out)
			fprintf(out, "warning: the superblock copy in the last block is bad\n");
		if (repair) {
			uint8_t *buf = bfs_qctx_bounce(&q);
			if (buf) {
				memset(buf, 0, BFS_BLOCK);
				memcpy(buf, &sb, sizeof(sb));
				if (bfs_io_write(&q, buf, blocks - 1, 1, "superblock copy repair") == 0 &&
				    bfs_io_flush(&q) == 0)
					res->repaired++;
			}
		}
	}
	bfs_qctx_fini_standalone(&q);

	int lock_fd = -1;
	char lock_path[256];
	rc = bfs_ns_lock(ns, sb.uuid, !repair, &lock_fd, lock_path, sizeof(lock_path));
	if (rc)
		return rc;
	struct blobfs_opts o = { .cache_size = 1u << 20, .read_only = !repair };
	struct blobfs *fs = NULL;
	struct bfs_ckpt_hdr hdr;
	struct bfs_replay rp;
	FILE *rep = out ? out : fopen("/dev/null", "w");
	rc = bfs_mount_prepare(ns, &o, rep, &sb, &fs, &hdr, &rp);
	if (rc) {
		if (rep != out)
			fclose(rep);
		bfs_ns_unlock(lock_fd, lock_path);
		if (rc == BLOBFS_EBADSB) {
			/* The metadata itself is beyond what a mount can use. */
			res->errors++;
			if (out)
				fprintf(out, "error: %s\n", blobfs_errmsg());
			return 0;
		}
		return rc;
	}
	fs->lock_fd = lock_fd;
	snprintf(fs->lock_path, sizeof(fs->lock_path), "%s", lock_path);
	res->replayed = atomic_load(&fs->st.replayed);
	bool torn = rp.torn;
	res->clean_unmount = hdr.clean && res->replayed == 0 && !torn && !rp.lost;
	res->lost_transactions = rp.lost;
	if (rp.lost) {
		/* Written after the one the chain stops at, which had therefore been acknowledged. */
		res->errors++;
		if (out)
			fprintf(out, "error: the journal lost acknowledged changes: %llu whole transaction%s "
				"after the one replay stops at cannot be applied%s\n",
				(unsigned long long)rp.lost, rp.lost == 1 ? "" : "s",
				repair ? "" : " (--repair drops them and keeps the rest)");
		if (repair) {
			res->repaired++;
			if (out)
				fprintf(out, "  repaired: the file system is the one before the damaged "
					"transaction\n");
		}
	} else if (torn) {
		res->warnings++;
		if (out)
			fprintf(out, "warning: the last journal transaction was torn by a crash (never "
				"acknowledged; it is ignored)\n");
	}
	if (out && res->replayed)
		fprintf(out, "journal: %llu transactions to replay after checkpoint %llu\n",
			(unsigned long long)res->replayed, (unsigned long long)hdr.seq);

	struct fsck c = { .fs = fs, .out = out, .flags = flags, .res = res };
	c.used = calloc((fs->g.nclusters + 63) / 64, sizeof(*c.used));
	if (!c.used) {
		bfs_mount_abandon(fs);
		if (rep != out)
			fclose(rep);
		return bfs_err(-ENOMEM, "out of memory for the cluster map");
	}
	bfs_itable_each(fs, check_inode, &c);
	/* Unreachable inodes (a cycle in the tree): into /lost+found. */
	if (repair) {
		size_t n = 0;
		struct bfs_inode **lost = calloc(fs->itab_n + 1, sizeof(*lost));
		for (uint64_t i = 0; lost && i < fs->itab_cap; i++)
			for (struct bfs_inode *in = fs->itab[i]; in; in = in->hnext)
				if (in != fs->root && !reachable(in, fs->root))
					lost[n++] = in;
		for (size_t i = 0; i < n; i++)
			if (move_to_lost_found(&c, lost[i]) == 0) {
				res->repaired++;
				c.changed = true;
			}
		free(lost);
	}
	if (fs->next_ino <= c.max_ino) {
		res->errors++;
		if (out)
			fprintf(out, "error: next inode number %llu is not above the highest in use (%llu)\n",
				(unsigned long long)fs->next_ino, (unsigned long long)c.max_ino);
		if (repair) {
			fs->next_ino = c.max_ino + 1;
			res->repaired++;
			c.changed = true;
		}
	}
	uint64_t used = 0;
	for (uint64_t i = 0; i < (fs->g.nclusters + 63) / 64; i++)
		used += (uint64_t)__builtin_popcountll(c.used[i]);
	res->used_clusters = used;
	res->free_clusters = fs->g.nclusters - used;
	free(c.used);
	if (repair && (c.changed || res->replayed || torn || rp.lost || !hdr.clean)) {
		fs->read_only = false;
		rc = bfs_jnl_checkpoint(fs, true);
		if (!rc && out)
			fprintf(out, "wrote a clean checkpoint\n");
	}
	if (out)
		fprintf(out, "%llu files, %llu directories, %llu symlinks, %llu special files; %llu of %llu "
			"clusters used (%llu KiB each); %u errors, %u repaired, %u warnings\n",
			(unsigned long long)res->files, (unsigned long long)res->dirs,
			(unsigned long long)res->symlinks, (unsigned long long)res->specials,
			(unsigned long long)res->used_clusters,
			(unsigned long long)fs->g.nclusters, (unsigned long long)(fs->g.cluster_size >> 10),
			res->errors, res->repaired, res->warnings);
	bfs_mount_abandon(fs);
	if (rep != out)
		fclose(rep);
	return rc;
}
