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
	f->next = fs->files;
	if (fs->files)
		fs->files->prev = f;
	fs->files = f;
	in->nopen++;
	pthread_mutex_unlock(&fs->files_lock);
	*out = f;
	return 0;
}

/* ns_lock held for writing. */
static int create_locked(struct blobfs *fs, struct bfs_path *p, uint8_t type, uint32_t mode,
			 const char *link)
{
	uint64_t est = sizeof(struct bfs_ckpt_inode) + p->name_len + (link ? strlen(link) : 0) + 8;
	if (atomic_load(&fs->meta_bytes) + est + BFS_BLOCK > (fs->g.ckpt_blocks - 1) * BFS_BLOCK)
		return bfs_err(-ENOSPC, "no space left for metadata (checkpoint slot of %llu bytes is full)",
			       (unsigned long long)((fs->g.ckpt_blocks - 1) * BFS_BLOCK));
	struct bfs_rec r = {
		.type = BFS_REC_CREATE, .ino = fs->next_ino, .parent = p->parent->ino, .ftype = type,
		.mode = mode & 07777, .ctime = bfs_now_ns(), .name = p->name,
		.name_len = (uint16_t)p->name_len, .link = link,
		.link_len = link ? (uint32_t)strlen(link) : 0,
	};
	int rc = bfs_ns_change(fs, &r, NULL);
	if (!rc)
		p->inode = bfs_dir_find(p->parent, p->name, p->name_len);
	return rc;
}

int bfs_create(struct blobfs *fs, struct bfs_path *p, uint8_t type, uint32_t mode, const char *link)
{
	return create_locked(fs, p, type, mode, link);
}

int blobfs_open(struct blobfs *fs, const char *path, int flags, uint32_t mode, struct blobfs_file **out)
{
	bfs_err_clear();
	if (!fs || !out)
		return bfs_err(-EINVAL, "no file system or handle pointer given");
	int acc = flags & O_ACCMODE;
	if (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR)
		return bfs_err(-EINVAL, "open flags 0x%x: access mode is not O_RDONLY, O_WRONLY or O_RDWR", flags);
	bool creating = flags & O_CREAT;
	bool writing = acc != O_RDONLY || (flags & O_TRUNC);
	if (fs->read_only && (creating || writing))
		return bfs_err(-EROFS, "'%s': the file system is mounted read-only", path);
	if ((creating || writing) && fs->jnl_error)
		return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
	if (creating)
		pthread_rwlock_wrlock(&fs->ns_lock);
	else
		pthread_rwlock_rdlock(&fs->ns_lock);
	struct bfs_path p;
	int rc = bfs_path_resolve(fs, path, &p);
	if (!rc && !p.inode) {
		if (!creating)
			rc = bfs_err(-ENOENT, "'%s' does not exist", path);
		else
			rc = create_locked(fs, &p, BLOBFS_TYPE_FILE, mode, NULL);
	} else if (!rc) {
		if (creating && (flags & O_EXCL))
			rc = bfs_err(-EEXIST, "'%s' exists already", path);
		else if (p.inode->type == BLOBFS_TYPE_DIR && writing)
			rc = bfs_err(-EISDIR, "'%s' is a directory", path);
		else if (p.inode->type == BLOBFS_TYPE_SYMLINK)
			rc = bfs_err(-ELOOP, "'%s' is a symbolic link (BlobFS does not follow them)", path);
	}
	if (!rc)
		bfs_inode_ref(p.inode);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (rc)
		return rc;
	struct blobfs_file *f = NULL;
	rc = bfs_open_inode(fs, p.inode, flags, &f);
	if (rc) {
		bfs_inode_unref(fs, p.inode);
		return rc;
	}
	if ((flags & O_TRUNC) && p.inode->type == BLOBFS_TYPE_FILE && bfs_load_size(p.inode)) {
		rc = blobfs_ftruncate(f, 0);
		if (rc) {
			blobfs_close(f);
			return rc;
		}
	}
	*out = f;
	return 0;
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
	if (in->linked && !fs->read_only) {
		struct bfs_rec r = { .type = BFS_REC_TRUNCATE, .ino = in->ino, .size = size,
				     .mtime = now, .ctime = now };
		rc = bfs_jnl_append(fs, &r);
		if (!rc) {
			in->logged_size = size;
			in->logged_mtime = now;
			bfs_jnl_op_done(fs);
		}
	}
	pthread_mutex_unlock(&fs->jlock);
	if (!rc)
		bfs_dirty_list_add(fs, in);
	return rc;
}

static int do_truncate(struct blobfs *fs, struct bfs_inode *in, uint64_t size)
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
	pthread_rwlock_wrlock(&in->rw);
	rc = truncate_locked(fs, q, in, size);
	pthread_rwlock_unlock(&in->rw);
	return rc;
}

int blobfs_ftruncate(struct blobfs_file *f, uint64_t size)
{
	bfs_err_clear();
	if (!f)
		return bfs_err(-EINVAL, "no file given");
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EBADF, "the file was opened read-only");
	return do_truncate(f->fs, f->in, size);
}

int blobfs_truncate(struct blobfs *fs, const char *path, uint64_t size)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs, path, O_WRONLY, 0, &f);
	if (rc)
		return rc;
	rc = do_truncate(fs, f->in, size);
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

int blobfs_fallocate(struct blobfs_file *f, uint64_t off, uint64_t len, bool keep_size)
{
	bfs_err_clear();
	if (!f || len == 0)
		return bfs_err(-EINVAL, "no file or an empty range given");
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EBADF, "the file was opened read-only");
	if (fs->read_only)
		return bfs_err(-EROFS, "the file system is mounted read-only");
	if (off > BLOBFS_FILE_MAX || len > BLOBFS_FILE_MAX - off)
		return bfs_err(-EFBIG, "range past the largest file size");
	int rc = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	pthread_rwlock_wrlock(&in->rw);
	uint64_t size = bfs_load_size(in);
	/* Clusters past the end are only kept while the file is open (they are preallocation);
	 * inside the size they are zeroed and logged like written data. */
	if (!keep_size && off + len > size)
		rc = truncate_locked(fs, q, in, off + len);
	bool fh, ft;
	if (!rc)
		rc = bfs_alloc_range(fs, q, in, off, off + len, bfs_load_size(in), &fh, &ft);
	if (!rc && !keep_size)
		rc = bfs_writeback(fs, q, in);
	pthread_rwlock_unlock(&in->rw);
	return rc;
}

int blobfs_file_set_opts(struct blobfs_file *f, const struct blobfs_file_opts *o)
{
	bfs_err_clear();
	if (!f || !o)
		return bfs_err(-EINVAL, "no file or options given");
	f->o = *o;
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
