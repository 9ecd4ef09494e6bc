/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mount and unmount, and the lock that keeps two mounts off one namespace.
 *
 * The lock is a flock(2) on a small file named after the controller's serial number, the
 * namespace and the file system's uuid, in $UNVME_LOCK_DIR (else /run/lock, else /tmp). The
 * kernel drops it when the process dies, so a crash never leaves the namespace locked; the
 * file itself is removed at unmount, and stale ones of crashed processes are removed by the
 * next mount of the same namespace. Within a process a second open of the file conflicts
 * too (flock locks belong to the open file, not the process).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfs.h"
#include "lib/common/opts.h"

static _Atomic uint64_t mount_counter;

static const char *lock_dir(void)
{
	const char *d = getenv("UNVME_LOCK_DIR");
	if (d && *d)
		return d;
	if (access("/run/lock", W_OK) == 0)
		return "/run/lock";
	return "/tmp";
}

static void lock_prefix(struct unvme_ns *ns, char *out, size_t len)
{
	const struct nvme_id_ctrl *id = unvme_ctrlr_identify_data(unvme_ns_ctrlr(ns));
	char sn[24] = "";
	size_t k = 0;
	for (size_t i = 0; id && i < sizeof(id->sn) && k < sizeof(sn) - 1; i++) {
		char c = id->sn[i];
		if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
			sn[k++] = c;
	}
	sn[k] = '\0';
	snprintf(out, len, "unvme-blobfs-%s-ns%u-", k ? sn : "noserial", unvme_ns_id(ns));
}

/* Removes lock files of this namespace that nobody holds (left by crashed processes). */
static void sweep_stale(const char *dir, const char *prefix, const char *mine)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		/* Lock files only: a shadow (shadow.c) may share the directory and the prefix. */
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || strcmp(e->d_name, mine) == 0 ||
		    n < 5 || strcmp(e->d_name + n - 5, ".lock") != 0)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(path);
		close(fd);
	}
	closedir(d);
}

int bfs_ns_lock(struct unvme_ns *ns, const uint8_t uuid[16], bool shared, int *fd_out, char *path,
		size_t pathlen)
{
	const char *dir = lock_dir();
	char prefix[96], name[160];
	lock_prefix(ns, prefix, sizeof(prefix));
	int n = snprintf(name, sizeof(name), "%s", prefix);
	for (int i = 0; i < 16; i++)
		n += snprintf(name + n, sizeof(name) - (size_t)n, "%02x", uuid[i]);
	snprintf(name + n, sizeof(name) - (size_t)n, ".lock");
	snprintf(path, pathlen, "%s/%s", dir, name);
	sweep_stale(dir, prefix, name);
	for (int tries = 0; tries < 100; tries++) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return bfs_err(-errno, "cannot create the lock file %s: %s", path, strerror(errno));
		if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
			char who[32] = "";
			ssize_t r = pread(fd, who, sizeof(who) - 1, 0);
			who[r > 0 ? r : 0] = '\0';
			who[strcspn(who, "\n")] = '\0';
			close(fd);
			return bfs_err(-EBUSY, "namespace %u of %s is mounted already%s%s%s (lock %s)",
				       unvme_ns_id(ns), unvme_ctrlr_address(unvme_ns_ctrlr(ns)),
				       who[0] ? " by process " : "", who, shared ? " read-write" : "", path);
		}
		/* The holder may have removed the file between our open and flock: use the file
		 * only if it is still the one at the path. */
		struct stat a, b;
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			if (!shared) {
				char pid[32];
				int l = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
				if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)l, 0) != l) {
					/* the pid is only for messages */
				}
			}
			*fd_out = fd;
			return 0;
		}
		close(fd);
	}
	return bfs_err(-EBUSY, "the lock file %s keeps changing", path);
}

void bfs_ns_unlock(int fd, const char *path)
{
	if (fd < 0)
		return;
	/* Remove the file if nobody else (a read-only mount) holds it. */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlink(path);
	close(fd);
}

int bfs_standalone_qpair(struct unvme_ns *ns, struct bfs_qctx *q)
{
	struct unvme_qpair *qp;
	struct unvme_qpair_opts qo = { .depth = 64 };
	int rc = unvme_qpair_create(unvme_ns_ctrlr(ns), &qo, &qp);
	if (rc)
		return bfs_err(rc < 0 ? rc : -EIO, "cannot create an I/O queue pair: %s", unvme_errmsg());
	bfs_qctx_init_standalone(q, ns, qp);
	return 0;
}

static void set_defaults(struct blobfs_opts *o)
{
	if (!o->cache_size)
		o->cache_size = 256ull << 20;
	if (o->cache_size < (1u << 20))
		o->cache_size = 1u << 20;
	if (!o->cache_unit)
		o->cache_unit = 64u << 10;
	if (!o->prefetch_threshold)
		o->prefetch_threshold = 128u << 10;
	if (!o->prefetch_size)
		o->prefetch_size = 1u << 20;
	if (!o->commit_interval_ms)
		o->commit_interval_ms = 5000;
	if (!o->writeback_chunk)
		o->writeback_chunk = 4u << 20;
	if (!o->queue_depth)
		o->queue_depth = 128;
}

static int check_opts(const struct blobfs_opts *o)
{
	if (o->cache_unit < BFS_PAGE || o->cache_unit > 64 * BFS_PAGE || (o->cache_unit & (o->cache_unit - 1)))
		return bfs_err(-EINVAL, "cache_unit %u is not a power of two in 4 KiB..256 KiB", o->cache_unit);
	if (o->queue_depth < 2 || o->queue_depth > 65536)
		return bfs_err(-EINVAL, "queue_depth %u is outside 2..65536", o->queue_depth);
	if (o->shadow_size && (o->shadow_size < (64u << 10) || o->shadow_size > (1ull << 30)))
		return bfs_err(-EINVAL, "shadow_size %llu is outside 64 KiB..1 GiB",
			       (unsigned long long)o->shadow_size);
	return 0;
}

static void free_inode_cb(void *arg, struct bfs_inode *in)
{
	struct blobfs *fs = arg;
	pthread_mutex_lock(&in->cache_lock);
	bfs_cache_drop_from(fs, in, 0, false);
	pthread_mutex_unlock(&in->cache_lock);
	bfs_inode_destroy(fs, in);
}

static void fs_free(struct blobfs *fs)
{
	bfs_shadow_close(fs, false);
	if (fs->itab) {
		bfs_itable_each(fs, free_inode_cb, fs);
		free(fs->itab);
	}
	/* Removed inodes that references (not handles: those are closed) still held: their
	 * space is free in the metadata already, only the memory goes. */
	while (fs->orphans) {
		struct bfs_inode *in = fs->orphans;
		fs->orphans = in->onext;
		free_inode_cb(fs, in);
	}
	bfs_qctx_release_all(fs);
	if (fs->shared_qp)
		unvme_qpair_destroy(fs->shared_qp);
	bfs_cache_fini(fs);
	if (fs->alloc.bits)
		bfs_alloc_fini(&fs->alloc);
	unvme_dma_free(fs->jdma);
	free(fs->j.buf);
	free(fs->j.cuts);
	free(fs->j.defer);
	bfs_ns_unlock(fs->lock_fd, fs->lock_path);
	pthread_rwlock_destroy(&fs->ns_lock);
	pthread_mutex_destroy(&fs->commit_lock);
	pthread_mutex_destroy(&fs->jlock);
	pthread_mutex_destroy(&fs->ctx_lock);
	pthread_mutex_destroy(&fs->shared_lock);
	pthread_mutex_destroy(&fs->files_lock);
	pthread_mutex_destroy(&fs->dirty_lock);
	pthread_cond_destroy(&fs->dirty_cv);
	pthread_mutex_destroy(&fs->flusher_lock);
	pthread_cond_destroy(&fs->flusher_cv);
	pthread_mutex_destroy(&fs->ra_lock);
	pthread_cond_destroy(&fs->ra_cv);
	struct unvme_ctrlr *c = fs->own_ctrlr;
	free(fs);
	if (c)
		unvme_ctrlr_close(c);
}

struct mark_ctx {
	struct blobfs *fs;
	int rc;
};

static void mark_inode(void *arg, struct bfs_inode *in)
{
	struct mark_ctx *m = arg;
	for (uint32_t i = 0; i < in->ext.n && !m->rc; i++) {
		const struct bfs_extent *e = &in->ext.e[i];
		if (!bfs_alloc_mark(&m->fs->alloc, e->pclu, e->count))
			m->rc = bfs_err(BLOBFS_EBADSB, "cluster %llu (of %u) of inode %llu is used twice or "
					"lies outside the data area; run 'unvme fsck'",
					(unsigned long long)e->pclu, e->count, (unsigned long long)in->ino);
	}
	uint64_t end = 0;
	for (uint32_t i = 0; i < in->ext.n; i++)
		end = BFS_MAX(end, in->ext.e[i].pclu + in->ext.e[i].count);
	in->last_pclu_end = in->ext.n ? end : UINT64_MAX;
}

int bfs_mount_prepare(struct unvme_ns *ns, const struct blobfs_opts *opts, FILE *report,
		      const struct bfs_sb_disk *sb, struct blobfs **out, struct bfs_ckpt_hdr *hdr,
		      struct bfs_replay *rp)
{
	struct blobfs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return bfs_err(-ENOMEM, "out of memory");
	if (opts)
		fs->opts = *opts;
	set_defaults(&fs->opts);
	int rc = check_opts(&fs->opts);
	if (rc) {
		free(fs);
		return rc;
	}
	fs->ns = ns;
	fs->read_only = fs->opts.read_only;
	fs->lock_fd = -1;
	fs->mount_id = atomic_fetch_add(&mount_counter, 1) + 1;
	pthread_rwlock_init(&fs->ns_lock, NULL);
	pthread_mutex_init(&fs->commit_lock, NULL);
	pthread_mutex_init(&fs->jlock, NULL);
	pthread_mutex_init(&fs->ctx_lock, NULL);
	pthread_mutex_init(&fs->shared_lock, NULL);
	pthread_mutex_init(&fs->files_lock, NULL);
	pthread_mutex_init(&fs->dirty_lock, NULL);
	pthread_cond_init(&fs->dirty_cv, NULL);
	pthread_mutex_init(&fs->flusher_lock, NULL);
	pthread_cond_init(&fs->flusher_cv, NULL);
	pthread_mutex_init(&fs->ra_lock, NULL);
	pthread_cond_init(&fs->ra_cv, NULL);
	fs->next_ino = BFS_ROOT_INO + 1;
	/* One spare queue pair for threads the controller has no queue left for. */
	struct unvme_qpair_opts qo = { .depth = fs->opts.queue_depth };
	if (unvme_qpair_create(unvme_ns_ctrlr(ns), &qo, &fs->shared_qp) != 0)
		fs->shared_qp = NULL;

	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		goto fail;
	uint64_t ns_blocks = unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns) / BFS_BLOCK;
	if (sb)
		fs->sb = *sb;
	else if ((rc = bfs_sb_read(ns, q, false, &fs->sb)) != 0)
		goto fail;
	rc = bfs_sb_check(&fs->sb, ns_blocks, unvme_ns_lba_size(ns));
	if (rc == BLOBFS_EBADSB) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", blobfs_errmsg());
		struct bfs_sb_disk copy;
		bool good = bfs_sb_read(ns, q, true, &copy) == 0 &&
			    bfs_sb_check(&copy, ns_blocks, unvme_ns_lba_size(ns)) == 0;
		rc = bfs_err(BLOBFS_EBADSB, "namespace %u: %s%s", unvme_ns_id(ns), msg,
			     good ? "; the copy in the last block is good: 'unvme fsck --repair' restores it" : "");
	}
	if (rc)
		goto fail;
	bfs_sb_geom(&fs->sb, unvme_ns_lba_size(ns), &fs->g);
	/* A quarter of the journal at most, so several fit between checkpoints. */
	fs->j.txn_max = BFS_MIN((size_t)BFS_TXN_MAX, (size_t)(fs->g.jnl_blocks / 4) * BFS_BLOCK) -
			sizeof(struct bfs_txn_hdr);
	rc = bfs_alloc_init(&fs->alloc, fs->g.nclusters);
	if (!rc)
		rc = bfs_cache_init(fs);
	if (rc)
		goto fail;
	if (!report) {
		rc = bfs_ns_lock(ns, fs->sb.uuid, fs->read_only, &fs->lock_fd, fs->lock_path,
				 sizeof(fs->lock_path));
		if (rc)
			goto fail;
	}
	rc = bfs_ckpt_load(fs, q, hdr, &fs->j.last_ckpt_slot, report);
	if (rc)
		goto fail;
	rc = bfs_jnl_replay(fs, q, rp, report);
	if (rc)
		goto fail;
	atomic_store(&fs->st.replayed, rp->count);
	if (!report) {
		struct mark_ctx m = { fs, 0 };
		bfs_itable_each(fs, mark_inode, &m);
		rc = m.rc;
		if (rc)
			goto fail;
	}
	*out = fs;
	return 0;
fail:
	fs_free(fs);
	return rc;
}

void bfs_mount_abandon(struct blobfs *fs)
{
	fs_free(fs);
}

void bfs_simulate_crash(struct blobfs *fs)
{
	/* Threads stop, nothing more is written: what is on the device is what a kill -9 at
	 * this moment would leave (the device's volatile cache aside). */
	bfs_ra_stop(fs);
	bfs_flusher_stop(fs);
	bfs_shadow_close(fs, false);
	pthread_mutex_lock(&fs->files_lock);
	struct blobfs_file *f = fs->files;
	fs->files = NULL;
	pthread_mutex_unlock(&fs->files_lock);
	while (f) {
		struct blobfs_file *next = f->next;
		struct bfs_inode *in = f->in;
		/* A removed inode on the orphan list goes with fs_free below; a file that never had
		 * a name (O_TMPFILE) here with its last handle. */
		if (!in->linked && atomic_fetch_sub(&in->refs, 1) == 1 && !in->orphan)
			bfs_inode_destroy(fs, in);
		pthread_mutex_destroy(&f->pos_lock);
		pthread_mutex_destroy(&f->ra.lock);
		free(f);
		f = next;
	}
	fs_free(fs);
}

int blobfs_mount(struct unvme_ns *ns, const struct blobfs_opts *given, struct blobfs **out)
{
	bfs_err_clear();
	if (!ns || !out)
		return bfs_err(-EINVAL, "no namespace or file system pointer given");
	struct blobfs_opts o = {0};
	int orc = opts_take(&o, sizeof(o), given, OPTS_SIZE_THROUGH(struct blobfs_opts, shadow_all));
	if (orc)
		return bfs_err(orc, "mount: %s", opts_size_error(orc, given->size, sizeof(o)));
	const struct blobfs_opts *opts = &o;
	if (opts && opts->format_if_empty && !opts->read_only) {
		struct bfs_qctx q;
		int rc = bfs_standalone_qpair(ns, &q);
		if (rc)
			return rc;
		struct bfs_sb_disk sb;
		rc = bfs_sb_read(ns, &q, false, &sb);
		bfs_qctx_fini_standalone(&q);
		if (rc)
			return rc;
		uint64_t blocks = unvme_ns_nlbas(ns) * unvme_ns_lba_size(ns) / BFS_BLOCK;
		if (bfs_sb_check(&sb, blocks, unvme_ns_lba_size(ns)) == BLOBFS_ENOFS &&
		    (rc = blobfs_mkfs(ns, NULL)) != 0)
			return rc;
	}
	struct blobfs *fs;
	struct bfs_ckpt_hdr hdr;
	struct bfs_replay rp;
	int rc = bfs_mount_prepare(ns, opts, NULL, NULL, &fs, &hdr, &rp);
	if (rc)
		return rc;
	if (rp.lost && !fs->read_only) {
		/* Mounting would write a checkpoint without them and lose them for good. */
		rc = bfs_err(BLOBFS_EBADSB, "namespace %u: the journal is damaged: transaction %llu "
			     "(block %llu) cannot be read, but %llu later transaction%s (%llu..%llu) were "
			     "written after it, so it had been acknowledged; 'unvme fsck' reports, "
			     "'unvme fsck --repair' accepts the loss", unvme_ns_id(ns),
			     (unsigned long long)(hdr.seq + rp.count + 1),
			     (unsigned long long)(rp.torn ? rp.torn_blk : fs->j.head),
			     (unsigned long long)rp.lost, rp.lost == 1 ? "" : "s",
			     (unsigned long long)rp.lost_first, (unsigned long long)rp.lost_last);
		fs_free(fs);
		return rc;
	}
	if (!fs->read_only) {
		/* After a replay (or a torn transaction) start from a fresh checkpoint, so the journal
		 * behind it can never be read again. */
		if (fs->st.replayed || rp.torn || !hdr.clean)
			rc = bfs_jnl_checkpoint(fs, false);
		if (!rc)
			rc = bfs_flusher_start(fs);
		/* Writes a killed process had acknowledged come back before anyone looks. */
		if (!rc)
			rc = bfs_shadow_open(fs);
	}
	if (!rc)
		rc = bfs_ra_start(fs);
	if (rc) {
		bfs_flusher_stop(fs);
		fs_free(fs);
		return rc;
	}
	*out = fs;
	return 0;
}

int blobfs_mount_dev(const char *devid, uint32_t nsid, const struct blobfs_opts *opts,
		     struct blobfs **out)
{
	bfs_err_clear();
	if (!devid || !out)
		return bfs_err(-EINVAL, "no device or file system pointer given");
	struct unvme_ctrlr *c;
	int rc = unvme_ctrlr_open(devid, NULL, &c);
	if (rc)
		return bfs_err(rc < 0 ? rc : -EIO, "cannot open %s: %s", devid, unvme_errmsg());
	if (!nsid)
		nsid = unvme_ctrlr_first_nsid(c);
	struct unvme_ns *ns = nsid ? unvme_ctrlr_ns(c, nsid) : NULL;
	if (!ns) {
		unvme_ctrlr_close(c);
		return bfs_err(-ENODEV, "%s has no active namespace %u", devid, nsid);
	}
	struct blobfs *fs;
	rc = blobfs_mount(ns, opts, &fs);
	if (rc) {
		unvme_ctrlr_close(c);
		return rc;
	}
	fs->own_ctrlr = c;
	*out = fs;
	return 0;
}

int blobfs_unmount(struct blobfs *fs)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	int first = 0;
	for (;;) {
		pthread_mutex_lock(&fs->files_lock);
		struct blobfs_file *f = fs->files;
		pthread_mutex_unlock(&fs->files_lock);
		if (!f)
			break;
		int rc = blobfs_close(f);
		if (rc && !first)
			first = rc;
	}
	bfs_ra_stop(fs);
	bfs_flusher_stop(fs);
	if (!fs->read_only) {
		int rc = bfs_writeback_all(fs);
		if (rc && !first)
			first = rc;
		if (!fs->jnl_error) {
			rc = bfs_jnl_checkpoint(fs, true);
			if (rc && !first)
				first = rc;
			bfs_shadow_close(fs, !first);
		} else if (!first) {
			first = bfs_err(-EIO, "changes after the failed metadata write are lost");
		}
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", blobfs_errmsg());
	fs_free(fs);
	if (first)
		bfs_err(first, "%s", msg);
	return first;
}

struct unvme_ns *blobfs_ns(const struct blobfs *fs)
{
	return fs ? fs->ns : NULL;
}

int blobfs_sync(struct blobfs *fs)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	if (fs->read_only)
		return 0;
	int rc = bfs_writeback_all(fs);
	int c = bfs_jnl_commit(fs);
	return rc ? rc : c;
}

static void drop_clean(void *arg, struct bfs_inode *in)
{
	struct blobfs *fs = arg;
	pthread_rwlock_wrlock(&in->rw);
	pthread_mutex_lock(&in->cache_lock);
	bfs_cache_drop_from(fs, in, 0, true);
	pthread_mutex_unlock(&in->cache_lock);
	pthread_rwlock_unlock(&in->rw);
}

int blobfs_drop_cache(struct blobfs *fs)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	int rc = blobfs_sync(fs);
	/* Readahead in flight would refill it: let it finish first. */
	bfs_ra_wait_idle(fs);
	pthread_rwlock_rdlock(&fs->ns_lock);
	bfs_itable_each(fs, drop_clean, fs);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}
