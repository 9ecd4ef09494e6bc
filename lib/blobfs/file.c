/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File handles: open (with create and truncate), close, positioned and sequential I/O,
 * truncate, fsync, fallocate, and the per-file cache controls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "lib/common/opts.h"

bool bfs_file_direct_read(const struct blobfs_file *f)
{
	if (f->o.direct_read)
		return f->o.direct_read > 0;
	return (f->flags & O_DIRECT) || f->fs->opts.direct_read;
}

bool bfs_file_direct_write(const struct blobfs_file *f)
{
	if (f->o.direct_write)
		return f->o.direct_write > 0;
	return (f->flags & O_DIRECT) || f->fs->opts.direct_write;
}

bool bfs_file_retain(const struct blobfs_file *f)
{
	if (f->o.retain)
		return f->o.retain > 0;
	return !f->fs->opts.no_retain;
}

int bfs_open_inode(struct blobfs *fs, struct bfs_inode *in, int flags, struct blobfs_file **out)
{
	struct blobfs_file *f = calloc(1, sizeof(*f));
	if (!f)
		return bfs_err(-ENOMEM, "out of memory for a file handle");
	f->fs = fs;
	f->in = in;
	f->flags = flags;
	pthread_mutex_init(&f->pos_lock, NULL);
	pthread_mutex_init(&f->ra.lock, NULL);
	pthread_mutex_lock(&fs->files_lock);
	if (in->reclaimed) {
		/* Removed, and its clusters went back to a write short of space while nobody had
		 * it open: as if the open had come after the kernel forgot the inode. */
		pthread_mutex_unlock(&fs->files_lock);
		pthread_mutex_destroy(&f->pos_lock);
		pthread_mutex_destroy(&f->ra.lock);
		free(f);
		return bfs_err(-ENOENT, "inode %llu was removed", (unsigned long long)in->ino);
	}
	f->next = fs->files;
	if (fs->files)
		fs->files->prev = f;
	fs->files = f;
	in->nopen++;
	pthread_mutex_unlock(&fs->files_lock);
	if (fs->opts.shadow_all && in->type == BLOBFS_TYPE_FILE)
		atomic_store(&in->shadowed, true);
	*out = f;
	return 0;
}

/* ns_lock held for writing. */
static int create_locked(struct blobfs *fs, struct bfs_path *p, const struct blobfs_node *n)
{
	uint8_t type = (uint8_t)n->type;
	const char *link = type == BLOBFS_TYPE_SYMLINK ? n->target : NULL;
	if (type < BLOBFS_TYPE_FILE || type > BFS_TYPE_MAX || (type == BLOBFS_TYPE_SYMLINK && !link))
		return bfs_err(-EINVAL, "cannot create '%.*s': node type %u", (int)p->name_len, p->name, type);
	if (type > BLOBFS_TYPE_SYMLINK && fs->sb.version < 2)
		return bfs_err(-EOPNOTSUPP, "cannot create '%.*s': FIFOs, devices and sockets need BlobFS "
			       "format version 2 (this file system is version %u)", (int)p->name_len, p->name,
			       fs->sb.version);
	uint64_t est = sizeof(struct bfs_ckpt_inode) + p->name_len + (link ? strlen(link) : 0) + 8;
	if (atomic_load(&fs->meta_bytes) + est + BFS_BLOCK > (fs->g.ckpt_blocks - 1) * BFS_BLOCK)
		return bfs_err(-ENOSPC, "no space left for metadata (checkpoint slot of %llu bytes is full)",
			       (unsigned long long)((fs->g.ckpt_blocks - 1) * BFS_BLOCK));
	struct bfs_rec r = {
		.type = BFS_REC_CREATE, .ino = fs->next_ino, .parent = p->parent->ino, .ftype = type,
		.mode = n->mode & 07777, .uid = n->uid, .gid = n->gid, .ctime = bfs_now_ns(),
		.name = p->name, .name_len = (uint16_t)p->name_len, .link = link,
		.link_len = link ? (uint32_t)strlen(link) : 0,
		.rdev = type == BLOBFS_TYPE_CHR || type == BLOBFS_TYPE_BLK ? n->rdev : 0,
	};
	int rc = bfs_ns_change(fs, &r, NULL);
	if (!rc)
		p->inode = bfs_dir_find(p->parent, p->name, p->name_len);
	return rc;
}

int bfs_create_node(struct blobfs *fs, struct bfs_path *p, const struct blobfs_node *n)
{
	return create_locked(fs, p, n);
}

int bfs_create(struct blobfs *fs, struct bfs_path *p, uint8_t type, uint32_t mode, const char *link)
{
	struct blobfs_node n = { .type = (enum blobfs_type)type, .mode = mode, .target = link };
	return create_locked(fs, p, &n);
}

/* The checks of an open before any lock. */
static int open_check(struct blobfs *fs, int flags, const char *what)
{
	int acc = flags & O_ACCMODE;
	if (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR)
		return bfs_err(-EINVAL, "open flags 0x%x: access mode is not O_RDONLY, O_WRONLY or O_RDWR", flags);
	bool writing = acc != O_RDONLY || (flags & O_TRUNC);
	if (fs->read_only && ((flags & O_CREAT) || writing))
		return bfs_err(-EROFS, "'%s': the file system is mounted read-only", what);
	if (((flags & O_CREAT) || writing) && fs->jnl_error)
		return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
	return 0;
}

/* ns_lock held (for writing with O_CREAT): creates p if needed, checks the inode and takes a
 * reference to it for the handle. */
static int open_locked(struct blobfs *fs, struct bfs_path *p, int flags, const struct blobfs_node *n,
		       const char *what)
{
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	int rc = 0;
	if (!p->inode) {
		if (!(flags & O_CREAT))
			rc = bfs_err(-ENOENT, "'%s' does not exist", what);
		else
			rc = create_locked(fs, p, n);
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		rc = bfs_err(-EEXIST, "'%s' exists already", what);
	} else if (p->inode->type == BLOBFS_TYPE_DIR && writing) {
		rc = bfs_err(-EISDIR, "'%s' is a directory", what);
	} else if (p->inode->type == BLOBFS_TYPE_SYMLINK) {
		rc = bfs_err(-ELOOP, "'%s' is a symbolic link (BlobFS does not follow them)", what);
	} else if (p->inode->type > BLOBFS_TYPE_SYMLINK) {
		rc = bfs_err(-ENXIO, "'%s' is a FIFO, device or socket: it has no data in BlobFS", what);
	}
	if (!rc)
		bfs_inode_ref(p->inode);
	return rc;
}

/* After open_locked: the handle, and O_TRUNC. */
static int open_finish(struct blobfs *fs, struct bfs_inode *in, int flags, struct blobfs_file **out)
{
	struct blobfs_file *f = NULL;
	int rc = bfs_open_inode(fs, in, flags, &f);
	if (rc) {
		bfs_inode_unref(fs, in);
		return rc;
	}
	if ((flags & O_TRUNC) && in->type == BLOBFS_TYPE_FILE && bfs_load_size(in)) {
		rc = blobfs_ftruncate(f, 0);
		if (rc) {
			blobfs_close(f);
			return rc;
		}
	}
	*out = f;
	return 0;
}

int blobfs_open(struct blobfs *fs, const char *path, int flags, uint32_t mode, struct blobfs_file **out)
{
	bfs_err_clear();
	if (!fs || !out)
		return bfs_err(-EINVAL, "no file system or handle pointer given");
	int rc = open_check(fs, flags, path);
	if (rc)
		return rc;
	bool creating = flags & O_CREAT;
	if (creating)
		pthread_rwlock_wrlock(&fs->ns_lock);
	else
		pthread_rwlock_rdlock(&fs->ns_lock);
	struct bfs_path p;
	rc = bfs_path_resolve(fs, path, &p);
	struct blobfs_node n = { .type = BLOBFS_TYPE_FILE, .mode = mode };
	if (!rc)
		rc = open_locked(fs, &p, flags, &n, path);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc ? rc : open_finish(fs, p.inode, flags, out);
}

int blobfs_open_at(struct blobfs *fs, struct blobfs_inode *dir, const char *name, int flags,
		   uint32_t mode, uint32_t uid, uint32_t gid, struct blobfs_file **file,
		   struct blobfs_inode **out)
{
	bfs_err_clear();
	if (!fs || !file)
		return bfs_err(-EINVAL, "no file system or handle pointer given");
	int rc = open_check(fs, flags, name ? name : "");
	if (rc)
		return rc;
	struct bfs_path p;
	rc = bfs_at_begin(fs, (struct bfs_inode *)dir, name, flags & O_CREAT, false, &p);
	if (rc)
		return rc;
	struct blobfs_node n = { .type = BLOBFS_TYPE_FILE, .mode = mode, .uid = uid, .gid = gid };
	rc = open_locked(fs, &p, flags, &n, name);
	if (!rc && out)
		bfs_inode_ref(p.inode);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (rc)
		return rc;
	rc = open_finish(fs, p.inode, flags, file);
	if (out) {
		if (rc)
			bfs_inode_unref(fs, p.inode);
		else
			*out = (struct blobfs_inode *)p.inode;
	}
	return rc;
}

int blobfs_open_inode(struct blobfs *fs, struct blobfs_inode *h, int flags, struct blobfs_file **file)
{
	bfs_err_clear();
	struct bfs_inode *in = (struct bfs_inode *)h;
	if (!fs || !in || !file)
		return bfs_err(-EINVAL, "no file system, inode or handle pointer given");
	int rc = open_check(fs, flags & ~(O_CREAT | O_EXCL), "the inode");
	if (rc)
		return rc;
	pthread_rwlock_rdlock(&fs->ns_lock);
	struct bfs_path p = { NULL, in, "", 0 };
	rc = open_locked(fs, &p, flags & ~(O_CREAT | O_EXCL), NULL, "the inode");
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc ? rc : open_finish(fs, in, flags, file);
}

struct blobfs_inode *blobfs_file_inode(struct blobfs_file *f)
{
	if (!f)
		return NULL;
	bfs_inode_ref(f->in);
	return (struct blobfs_inode *)f->in;
}

int blobfs_tmpfile_at(struct blobfs *fs, struct blobfs_inode *dir, int flags, uint32_t mode,
		      uint32_t uid, uint32_t gid, struct blobfs_file **file)
{
	bfs_err_clear();
	struct bfs_inode *d = (struct bfs_inode *)dir;
	if (!fs || !d || !file)
		return bfs_err(-EINVAL, "no file system, directory or handle pointer given");
	if ((flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EINVAL, "a file without a name must be opened for writing");
	int rc = bfs_check_writable(fs);
	if (rc)
		return rc;
	pthread_rwlock_rdlock(&fs->ns_lock);
	if (d->type != BLOBFS_TYPE_DIR)
		rc = bfs_err(-ENOTDIR, "inode %llu is not a directory", (unsigned long long)d->ino);
	else if (!d->linked)
		rc = bfs_err(-ENOENT, "directory inode %llu was removed", (unsigned long long)d->ino);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (rc)
		return rc;
	/* Never linked, never logged: its clusters stay unlogged and go with its last handle. */
	pthread_mutex_lock(&fs->jlock);
	uint64_t ino = fs->next_ino++;
	pthread_mutex_unlock(&fs->jlock);
	struct bfs_inode *in = bfs_inode_new(fs, ino, BLOBFS_TYPE_FILE);
	if (!in)
		return -ENOMEM;
	in->mode = mode & 07777;
	in->uid = uid;
	in->gid = gid;
	int64_t now = bfs_now_ns();
	atomic_store(&in->atime_ns, now);
	atomic_store(&in->mtime_ns, now);
	atomic_store(&in->ctime_ns, now);
	atomic_store(&in->refs, 1);
	rc = bfs_open_inode(fs, in, flags & ~(O_CREAT | O_EXCL | O_TRUNC), file);
	if (rc)
		bfs_inode_unref(fs, in);
	return rc;
}

int blobfs_close(struct blobfs_file *f)
{
	if (!f)
		return 0;
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	int rc = 0;
	bool wrote = (f->flags & O_ACCMODE) != O_RDONLY && in->type == BLOBFS_TYPE_FILE && !fs->read_only;
	pthread_mutex_lock(&fs->files_lock);
	if (f->prev)
		f->prev->next = f->next;
	else
		fs->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	bool last = --in->nopen == 0;
	pthread_mutex_unlock(&fs->files_lock);
	if (in->type == BLOBFS_TYPE_FILE && (wrote || last)) {
		struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
		pthread_rwlock_wrlock(&in->rw);
		if (q && wrote && in->linked)
			rc = bfs_writeback(fs, q, in);
		if (last && !fs->read_only) {
			/* Preallocated clusters past the end go back to the pool. */
			uint64_t cs = fs->g.cluster_size;
			bfs_free_from(fs, in, (bfs_load_size(in) + cs - 1) / cs, false);
		}
		if (last && !bfs_file_retain(f)) {
			pthread_mutex_lock(&in->cache_lock);
			bfs_cache_drop_from(fs, in, 0, true);
			pthread_mutex_unlock(&in->cache_lock);
		}
		pthread_rwlock_unlock(&in->rw);
	}
	pthread_mutex_destroy(&f->pos_lock);
	pthread_mutex_destroy(&f->ra.lock);
	free(f);
	bfs_inode_unref(fs, in);
	return rc;
}

ssize_t blobfs_pread(struct blobfs_file *f, void *buf, size_t len, uint64_t off)
{
	bfs_err_clear();
	if (!f || (!buf && len))
		return bfs_err(-EINVAL, "no file or buffer given");
	return bfs_read(f, buf, len, off);
}

ssize_t blobfs_pwrite(struct blobfs_file *f, const void *buf, size_t len, uint64_t off)
{
	bfs_err_clear();
	if (!f || (!buf && len))
		return bfs_err(-EINVAL, "no file or buffer given");
	return bfs_write(f, buf, len, off, false);
}

ssize_t blobfs_append(struct blobfs_file *f, const void *buf, size_t len)
{
	bfs_err_clear();
	if (!f || (!buf && len))
		return bfs_err(-EINVAL, "no file or buffer given");
	return bfs_write(f, buf, len, 0, true);
}

ssize_t blobfs_read(struct blobfs_file *f, void *buf, size_t len)
{
	bfs_err_clear();
	if (!f || (!buf && len))
		return bfs_err(-EINVAL, "no file or buffer given");
	pthread_mutex_lock(&f->pos_lock);
	ssize_t r = bfs_read(f, buf, len, f->pos);
	if (r > 0)
		f->pos += (uint64_t)r;
	pthread_mutex_unlock(&f->pos_lock);
	return r;
}

ssize_t blobfs_write(struct blobfs_file *f, const void *buf, size_t len)
{
	bfs_err_clear();
	if (!f || (!buf && len))
		return bfs_err(-EINVAL, "no file or buffer given");
	pthread_mutex_lock(&f->pos_lock);
	bool app = f->flags & O_APPEND;
	ssize_t r = bfs_write(f, buf, len, f->pos, app);
	if (r > 0)
		f->pos = app ? bfs_load_size(f->in) : f->pos + (uint64_t)r;
	pthread_mutex_unlock(&f->pos_lock);
	return r;
}

int64_t blobfs_seek(struct blobfs_file *f, int64_t off, int whence)
{
	bfs_err_clear();
	if (!f)
		return bfs_err(-EINVAL, "no file given");
	pthread_mutex_lock(&f->pos_lock);
	int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)f->pos
		       : whence == SEEK_END ? (int64_t)bfs_load_size(f->in) : -1;
	int64_t r;
	if (base < 0 && whence != SEEK_SET)
		r = bfs_err(-EINVAL, "whence %d is not SEEK_SET, SEEK_CUR or SEEK_END", whence);
	else if (base + off < 0 || (uint64_t)(base + off) > BLOBFS_FILE_MAX)
		r = bfs_err(-EINVAL, "seek to %lld is outside the file's range", (long long)(base + off));
	else
		r = (int64_t)(f->pos = (uint64_t)(base + off));
	pthread_mutex_unlock(&f->pos_lock);
	return r;
}

/* jlock held: a TRUNCATE or PUNCH of a file (nothing to log for one without a name). */
static int log_file_rec(struct blobfs *fs, struct bfs_inode *in, const struct bfs_rec *r)
{
	if (!in->linked || fs->read_only)
		return 0;
	int rc = bfs_jnl_append(fs, r);
	if (!rc) {
		if (r->type == BFS_REC_TRUNCATE)
			in->logged_size = r->size;
		in->logged_mtime = r->mtime;
		bfs_jnl_op_done(fs);
	}
	return rc;
}

/* rw held for writing. */
static int truncate_locked(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t size)
{
	uint64_t old = bfs_load_size(in);
	uint64_t cs = fs->g.cluster_size, us = fs->cache.unit_size;
	int64_t now = bfs_now_ns();
	int rc = 0;
	if (size > old) {
		rc = bfs_zero_range(fs, q, in, old, size);
		if (!rc) {
			atomic_store(&in->size, size);
			atomic_store(&in->mtime_ns, now);
			atomic_store(&in->ctime_ns, now);
			rc = bfs_writeback(fs, q, in);
		}
		return rc;
	}
	/* Shrink: cached data past the end goes (dirty or not), then the clusters, logged as one
	 * TRUNCATE record whose transaction also releases them. */
	pthread_mutex_lock(&in->cache_lock);
	bfs_cache_drop_from(fs, in, (size + us - 1) / us, false);
	struct bfs_unit *u = size % us ? bfs_umap_find(&in->units, size / us) : NULL;
	if (u) {
		uint32_t keep = (uint32_t)((size % us + BFS_PAGE - 1) / BFS_PAGE);
		uint64_t gone = keep >= 64 ? 0 : ~((1ull << keep) - 1);
		bfs_cache_clear_dirty(fs, in, u, u->dirty & gone);
		u->valid &= ~gone;
		u->ahead &= ~gone;
	}
	pthread_mutex_unlock(&in->cache_lock);
	atomic_store(&in->size, size);
	atomic_store(&in->mtime_ns, now);
	atomic_store(&in->ctime_ns, now);
	pthread_mutex_lock(&fs->jlock);
	bfs_free_from(fs, in, (size + cs - 1) / cs, true);
	struct bfs_rec r = { .type = BFS_REC_TRUNCATE, .ino = in->ino, .size = size, .mtime = now,
			     .ctime = now };
	rc = log_file_rec(fs, in, &r);
	pthread_mutex_unlock(&fs->jlock);
	if (!rc)
		bfs_dirty_list_add(fs, in);
	return rc;
}

int bfs_truncate_inode(struct blobfs *fs, struct bfs_inode *in, uint64_t size)
{
	if (in->type != BLOBFS_TYPE_FILE)
		return bfs_err(in->type == BLOBFS_TYPE_DIR ? -EISDIR : -EINVAL, "only files can be truncated");
	if (fs->read_only)
		return bfs_err(-EROFS, "the file system is mounted read-only");
	if (fs->jnl_error)
		return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
	if (size > BLOBFS_FILE_MAX)
		return bfs_err(-EFBIG, "size %llu is past the largest file size", (unsigned long long)size);
	int rc = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	struct bfs_shadow_slot slot;
	rc = bfs_shadow_reserve(fs, in, 0, &slot);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&in->rw);
	rc = truncate_locked(fs, q, in, size);
	if (!rc)
		bfs_shadow_trunc(fs, in, &slot, size);
	pthread_rwlock_unlock(&in->rw);
	bfs_shadow_unreserve(fs, &slot);
	return rc;
}

int blobfs_ftruncate(struct blobfs_file *f, uint64_t size)
{
	bfs_err_clear();
	if (!f)
		return bfs_err(-EINVAL, "no file given");
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EBADF, "the file was opened read-only");
	return bfs_truncate_inode(f->fs, f->in, size);
}

int blobfs_truncate(struct blobfs *fs, const char *path, uint64_t size)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_WRONLY, 0, &f);
	if (rc)
		return rc;
	rc = bfs_truncate_inode(fs, f->in, size);
	int c = blobfs_close(f);
	return rc ? rc : c;
}

int blobfs_fsync(struct blobfs_file *f)
{
	bfs_err_clear();
	if (!f)
		return bfs_err(-EINVAL, "no file given");
	struct blobfs *fs = f->fs;
	if (fs->read_only)
		return 0;
	int rc = 0;
	if (f->in->type == BLOBFS_TYPE_FILE) {
		struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
		if (!q)
			return rc;
		pthread_rwlock_wrlock(&f->in->rw);
		rc = bfs_writeback(fs, q, f->in);
		pthread_rwlock_unlock(&f->in->rw);
	}
	if (!rc)
		rc = bfs_jnl_commit(fs);
	return rc;
}

/* Cached pages of [from, to) (page aligned) read as zeros from now on and are not written
 * back (their clusters are being punched out). rw held for writing. */
static void zero_cached(struct blobfs *fs, struct bfs_inode *in, uint64_t from, uint64_t to)
{
	uint64_t us = fs->cache.unit_size;
	pthread_mutex_lock(&in->cache_lock);
	for (uint64_t idx = from / us; idx * us < to; idx++) {
		struct bfs_unit *u = bfs_umap_find(&in->units, idx);
		if (!u)
			continue;
		uint64_t pages = 0;
		for (uint32_t pg = 0; pg < fs->cache.unit_pages; pg++) {
			uint64_t po = idx * us + (uint64_t)pg * BFS_PAGE;
			if (po >= from && po + BFS_PAGE <= to)
				pages |= 1ull << pg;
		}
		for (uint32_t pg = 0; pg < fs->cache.unit_pages; pg++)
			if (pages & u->valid & (1ull << pg))
				memset(u->buf + (size_t)pg * BFS_PAGE, 0, BFS_PAGE);
		bfs_cache_clear_dirty(fs, in, u, u->dirty & pages);
	}
	pthread_mutex_unlock(&in->cache_lock);
}

/* FALLOC_FL_PUNCH_HOLE: [off, end) reads as zeros; the whole clusters in it are freed (once
 * the PUNCH record is durable), the bytes of partial ones zeroed. rw held for writing. */
static int punch_locked(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
			uint64_t end)
{
	uint64_t cs = fs->g.cluster_size;
	uint64_t c0 = (off + cs - 1) / cs, c1 = end / cs;
	int rc = 0;
	if (c1 <= c0) {
		rc = bfs_zero_bytes(fs, q, in, off, end); /* within one or two partial clusters */
	} else {
		rc = bfs_zero_bytes(fs, q, in, off, c0 * cs);
		if (!rc)
			rc = bfs_zero_bytes(fs, q, in, c1 * cs, end);
	}
	if (rc || c1 <= c0)
		return rc;
	zero_cached(fs, in, c0 * cs, c1 * cs);
	int64_t now = bfs_now_ns();
	atomic_store(&in->mtime_ns, now);
	atomic_store(&in->ctime_ns, now);
	pthread_mutex_lock(&fs->jlock);
	rc = bfs_ext_punch(&in->ext, c0, c1 - c0, 0, bfs_free_range, fs);
	bfs_meta_update(fs, in);
	if (!rc) {
		struct bfs_rec r = { .type = BFS_REC_PUNCH, .ino = in->ino, .lclu = c0, .size = c1 - c0,
				     .mtime = now, .ctime = now };
		rc = log_file_rec(fs, in, &r);
	}
	pthread_mutex_unlock(&fs->jlock);
	if (!rc)
		bfs_dirty_list_add(fs, in);
	return rc;
}

int blobfs_fallocate(struct blobfs_file *f, uint32_t mode, uint64_t off, uint64_t len)
{
	bfs_err_clear();
	if (!f)
		return bfs_err(-EINVAL, "no file given");
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	bool keep = mode & BLOBFS_FALLOC_KEEP_SIZE;
	bool punch = mode & BLOBFS_FALLOC_PUNCH_HOLE, zero = mode & BLOBFS_FALLOC_ZERO_RANGE;
	/* The errors Linux's fallocate(2) gives, in its order. */
	if (mode & ~(BLOBFS_FALLOC_KEEP_SIZE | BLOBFS_FALLOC_PUNCH_HOLE | BLOBFS_FALLOC_ZERO_RANGE))
		return bfs_err(-EOPNOTSUPP, "fallocate mode 0x%x: only keep-size, punch-hole and zero-range "
			       "are supported", mode);
	if (punch && (zero || !keep))
		return bfs_err(-EOPNOTSUPP, "fallocate: punch-hole goes with keep-size and without zero-range");
	if (len == 0)
		return bfs_err(-EINVAL, "fallocate of an empty range");
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EBADF, "the file was opened read-only");
	if (in->type != BLOBFS_TYPE_FILE)
		return bfs_err(in->type == BLOBFS_TYPE_DIR ? -EISDIR : -ENODEV, "fallocate works on files only");
	int rc = bfs_check_writable(fs);
	if (rc)
		return rc;
	if ((punch || zero) && fs->sb.version < 2)
		return bfs_err(-EOPNOTSUPP, "punch-hole and zero-range need BlobFS format version 2 "
			       "(this file system is version %u)", fs->sb.version);
	if (off > BLOBFS_FILE_MAX || len > BLOBFS_FILE_MAX - off)
		return bfs_err(-EFBIG, "range past the largest file size");
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	uint64_t end = off + len;
	/* The shadow has no entry for this: on a shadowed file it is made durable at once. */
	struct bfs_shadow_slot slot;
	rc = bfs_shadow_reserve(fs, in, SIZE_MAX / 2, &slot);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&in->rw);
	uint64_t size = bfs_load_size(in);
	if (punch || zero)
		rc = punch_locked(fs, q, in, off, end);
	if (!rc && !punch) {
		/* Space inside the file is zeroed and logged like written data; clusters past the
		 * end (keep-size) are preallocation, kept while the file is open. */
		if (!keep && end > size)
			rc = truncate_locked(fs, q, in, end);
		if (!rc)
			rc = bfs_space_check(fs, in, off, end);
		if (!rc)
			rc = bfs_alloc_fill(fs, q, in, off, end, bfs_load_size(in));
	}
	if (!rc && (bfs_load_size(in) != size || punch || zero))
		rc = bfs_writeback(fs, q, in);
	if (!rc)
		rc = bfs_shadow_write(fs, q, in, &slot, 0, NULL, 0);
	pthread_rwlock_unlock(&in->rw);
	bfs_shadow_unreserve(fs, &slot);
	return rc;
}

int blobfs_file_set_opts(struct blobfs_file *f, const struct blobfs_file_opts *o)
{
	bfs_err_clear();
	if (!f || !o)
		return bfs_err(-EINVAL, "no file or options given");
	struct blobfs_file_opts fo = {0};
	int rc = opts_take(&fo, sizeof(fo), o, OPTS_SIZE_THROUGH(struct blobfs_file_opts, shadow));
	if (rc)
		return bfs_err(rc, "%s", opts_size_error(rc, o->size, sizeof(fo)));
	f->o = fo;
	o = &fo;
	if (o->shadow > 0)
		atomic_store(&f->in->shadowed, true);
	return 0;
}

int blobfs_fstat(struct blobfs_file *f, struct blobfs_stat *st)
{
	bfs_err_clear();
	if (!f || !st)
		return bfs_err(-EINVAL, "no file or stat buffer given");
	pthread_rwlock_rdlock(&f->fs->ns_lock);
	bfs_fill_stat(f->fs, f->in, st);
	pthread_rwlock_unlock(&f->fs->ns_lock);
	return 0;
}
