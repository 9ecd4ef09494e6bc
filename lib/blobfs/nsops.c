/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Namespace operations: stat, setattr, mkdir, rmdir, unlink, rename, symlinks, directory
 * listings, and the file system's own statistics. Each change is checked first (so a
 * refused operation changes nothing), then logged and applied as one record under jlock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

int bfs_ns_change(struct blobfs *fs, const struct bfs_rec *r, struct bfs_inode **dropped)
{
	struct bfs_inode *gone = NULL;
	pthread_mutex_lock(&fs->jlock);
	size_t mark = fs->j.len;
	uint32_t nmark = fs->j.nrec;
	int rc = bfs_jnl_append(fs, r);
	if (!rc) {
		rc = bfs_rec_apply_ns(fs, r, true, &gone);
		if (rc) {
			fs->j.len = mark;
			fs->j.nrec = nmark;
		} else {
			bfs_jnl_op_done(fs);
		}
	}
	pthread_mutex_unlock(&fs->jlock);
	if (dropped)
		*dropped = gone;
	else if (gone)
		bfs_inode_unref(fs, gone);
	return rc;
}

static int check_writable(struct blobfs *fs)
{
	if (fs->read_only)
		return bfs_err(-EROFS, "the file system is mounted read-only");
	if (fs->jnl_error)
		return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
	return 0;
}

int bfs_check_writable(struct blobfs *fs)
{
	return check_writable(fs);
}

/* Takes ns_lock (for writing when write) and resolves path, which must exist when
 * existing. On failure the lock is not held. */
static int ns_begin(struct blobfs *fs, const char *path, bool write, bool existing, struct bfs_path *p)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	int rc = write ? check_writable(fs) : 0;
	if (rc)
		return rc;
	if (write)
		pthread_rwlock_wrlock(&fs->ns_lock);
	else
		pthread_rwlock_rdlock(&fs->ns_lock);
	rc = bfs_path_resolve(fs, path, p);
	if (!rc && existing && !p->inode)
		rc = bfs_err(-ENOENT, "'%s' does not exist", path);
	if (rc)
		pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

int bfs_at_begin(struct blobfs *fs, struct bfs_inode *dir, const char *name, bool write,
		 bool existing, struct bfs_path *p)
{
	bfs_err_clear();
	memset(p, 0, sizeof(*p));
	if (!fs || !dir || !name)
		return bfs_err(-EINVAL, "no file system, directory or name given");
	int rc = write ? check_writable(fs) : 0;
	if (rc)
		return rc;
	size_t len = strnlen(name, BLOBFS_NAME_MAX + 1);
	if ((rc = bfs_name_check(name, len)) != 0)
		return rc;
	if (memchr(name, '/', len))
		return bfs_err(-EINVAL, "'%s' is not a single name", name);
	if (write)
		pthread_rwlock_wrlock(&fs->ns_lock);
	else
		pthread_rwlock_rdlock(&fs->ns_lock);
	if (dir->type != BLOBFS_TYPE_DIR)
		rc = bfs_err(-ENOTDIR, "inode %llu is not a directory", (unsigned long long)dir->ino);
	else if (!dir->linked)
		rc = bfs_err(-ENOENT, "directory inode %llu was removed", (unsigned long long)dir->ino);
	if (!rc) {
		p->parent = dir;
		p->inode = bfs_dir_find(dir, name, len);
		p->name = name;
		p->name_len = len;
		if (existing && !p->inode)
			rc = bfs_err(-ENOENT, "'%s' does not exist", name);
	}
	if (rc)
		pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

static bool has_data(uint8_t type)
{
	return type == BLOBFS_TYPE_FILE;
}

void bfs_fill_stat(struct blobfs *fs, struct bfs_inode *in, struct blobfs_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->ino = in->ino;
	st->type = (enum blobfs_type)in->type;
	st->mode = in->mode;
	st->uid = in->uid;
	st->gid = in->gid;
	st->rdev = in->rdev;
	st->atime_ns = atomic_load(&in->atime_ns);
	st->mtime_ns = atomic_load(&in->mtime_ns);
	st->ctime_ns = atomic_load(&in->ctime_ns);
	if (in->type == BLOBFS_TYPE_DIR) {
		/* A removed directory has no links, as on ext4 (fstat of an open one says 0). */
		st->nlink = in->linked ? 2 + in->dir.nsubdirs : 0;
		st->size = in->dir.n;
	} else {
		st->nlink = in->linked ? 1 : 0;
		st->size = in->type == BLOBFS_TYPE_FILE || in->type == BLOBFS_TYPE_SYMLINK ? bfs_load_size(in) : 0;
		if (has_data(in->type)) {
			pthread_mutex_lock(&fs->jlock);
			st->blocks = bfs_ext_clusters(&in->ext, 0, 0) * fs->g.blocks_per_cluster;
			pthread_mutex_unlock(&fs->jlock);
		}
	}
}

int blobfs_stat(struct blobfs *fs, const char *path, struct blobfs_stat *st)
{
	if (!st)
		return bfs_err(-EINVAL, "no stat buffer given");
	struct bfs_path p;
	int rc = ns_begin(fs, path, false, true, &p);
	if (rc)
		return rc;
	bfs_fill_stat(fs, p.inode, st);
	pthread_rwlock_unlock(&fs->ns_lock);
	return 0;
}

static int setattr_inode(struct blobfs *fs, struct bfs_inode *in, const struct blobfs_stat *st,
			 uint32_t mask)
{
	struct bfs_rec r = { .type = BFS_REC_SETATTR, .ino = in->ino, .mask = mask,
			     .mode = st->mode & 07777, .uid = st->uid, .gid = st->gid,
			     .atime = st->atime_ns, .mtime = st->mtime_ns, .ctime = bfs_now_ns() };
	if (in->linked)
		return bfs_ns_change(fs, &r, NULL);
	/* An unlinked file: nothing to log, it is gone at the next mount anyway. */
	if (mask & BLOBFS_SET_MODE)
		in->mode = r.mode;
	if (mask & BLOBFS_SET_UID)
		in->uid = r.uid;
	if (mask & BLOBFS_SET_GID)
		in->gid = r.gid;
	if (mask & BLOBFS_SET_ATIME)
		atomic_store(&in->atime_ns, r.atime);
	if (mask & BLOBFS_SET_MTIME)
		atomic_store(&in->mtime_ns, r.mtime);
	atomic_store(&in->ctime_ns, r.ctime);
	return 0;
}

int blobfs_setattr(struct blobfs *fs, const char *path, const struct blobfs_stat *st, uint32_t mask)
{
	if (!st)
		return bfs_err(-EINVAL, "no attributes given");
	struct bfs_path p;
	int rc = ns_begin(fs, path, true, true, &p);
	if (rc)
		return rc;
	rc = setattr_inode(fs, p.inode, st, mask & ~BLOBFS_SET_SIZE);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

int blobfs_fsetattr(struct blobfs_file *f, const struct blobfs_stat *st, uint32_t mask)
{
	bfs_err_clear();
	if (!f || !st)
		return bfs_err(-EINVAL, "no file or attributes given");
	return blobfs_inode_setattr(f->fs, (struct blobfs_inode *)f->in, st, mask & ~BLOBFS_SET_SIZE);
}

int blobfs_inode_setattr(struct blobfs *fs, struct blobfs_inode *h, const struct blobfs_stat *st,
			 uint32_t mask)
{
	bfs_err_clear();
	struct bfs_inode *in = (struct bfs_inode *)h;
	if (!fs || !in || !st)
		return bfs_err(-EINVAL, "no file system, inode or attributes given");
	int rc = check_writable(fs);
	if (rc)
		return rc;
	if (mask & BLOBFS_SET_SIZE) {
		rc = bfs_truncate_inode(fs, in, st->size);
		if (rc)
			return rc;
		mask &= ~BLOBFS_SET_SIZE;
	}
	if (!mask)
		return 0;
	pthread_rwlock_wrlock(&fs->ns_lock);
	rc = setattr_inode(fs, in, st, mask);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

/* ns_lock held for writing. */
static int make_locked(struct blobfs *fs, struct bfs_path *p, const struct blobfs_node *n, const char *what)
{
	if (!p->parent)
		return bfs_err(-EEXIST, "the root directory exists");
	if (p->inode)
		return bfs_err(-EEXIST, "'%s' exists already", what);
	return bfs_create_node(fs, p, n);
}

static int make_node(struct blobfs *fs, const char *path, uint8_t type, uint32_t mode, const char *link)
{
	if (link && strlen(link) > BLOBFS_PATH_MAX)
		return bfs_err(-ENAMETOOLONG, "symlink target is longer than %u bytes", BLOBFS_PATH_MAX);
	struct bfs_path p;
	int rc = ns_begin(fs, path, true, false, &p);
	if (rc)
		return rc;
	struct blobfs_node n = { .type = (enum blobfs_type)type, .mode = mode, .target = link };
	rc = make_locked(fs, &p, &n, path);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

int blobfs_mkdir(struct blobfs *fs, const char *path, uint32_t mode)
{
	return make_node(fs, path, BLOBFS_TYPE_DIR, mode, NULL);
}

int blobfs_symlink(struct blobfs *fs, const char *target, const char *path)
{
	if (!target || !*target)
		return bfs_err(-EINVAL, "empty symlink target");
	return make_node(fs, path, BLOBFS_TYPE_SYMLINK, 0777, target);
}

static ssize_t readlink_inode(struct bfs_inode *in, char *buf, size_t len, const char *what)
{
	if (in->type != BLOBFS_TYPE_SYMLINK)
		return bfs_err(-EINVAL, "'%s' is not a symbolic link", what);
	size_t n = strlen(in->link);
	size_t c = n < len - 1 ? n : len - 1;
	memcpy(buf, in->link, c);
	buf[c] = '\0';
	return (ssize_t)n;
}

ssize_t blobfs_readlink(struct blobfs *fs, const char *path, char *buf, size_t len)
{
	if (!buf || !len)
		return bfs_err(-EINVAL, "no buffer given");
	struct bfs_path p;
	ssize_t rc = ns_begin(fs, path, false, true, &p);
	if (rc)
		return rc;
	rc = readlink_inode(p.inode, buf, len, path);
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

/* ns_lock held for writing; *gone gets the entry's reference to drop after unlocking. */
static int remove_locked(struct blobfs *fs, struct bfs_path *p, bool dir, const char *what,
			 struct bfs_inode **gone)
{
	*gone = NULL;
	if (!p->parent)
		return bfs_err(-EBUSY, "the root directory cannot be removed");
	if (dir && p->inode->type != BLOBFS_TYPE_DIR)
		return bfs_err(-ENOTDIR, "'%s' is not a directory", what);
	if (!dir && p->inode->type == BLOBFS_TYPE_DIR)
		return bfs_err(-EISDIR, "'%s' is a directory (use rmdir)", what);
	if (dir && p->inode->dir.n)
		return bfs_err(-ENOTEMPTY, "directory '%s' is not empty", what);
	struct bfs_rec r = { .type = BFS_REC_UNLINK, .parent = p->parent->ino, .name = p->name,
			     .name_len = (uint16_t)p->name_len, .ctime = bfs_now_ns() };
	return bfs_ns_change(fs, &r, gone);
}

static int remove_node(struct blobfs *fs, const char *path, bool dir)
{
	struct bfs_path p;
	int rc = ns_begin(fs, path, true, true, &p);
	if (rc)
		return rc;
	struct bfs_inode *gone;
	rc = remove_locked(fs, &p, dir, path, &gone);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (gone)
		bfs_inode_unref(fs, gone);
	return rc;
}

int blobfs_unlink(struct blobfs *fs, const char *path)
{
	return remove_node(fs, path, false);
}

int blobfs_rmdir(struct blobfs *fs, const char *path)
{
	return remove_node(fs, path, true);
}

/* ns_lock held for writing; s and d resolved (s->inode may be NULL). */
static int rename_locked(struct blobfs *fs, struct bfs_path *s, struct bfs_path *d, uint32_t flags,
			 const char *from, const char *to, struct bfs_inode **gone)
{
	*gone = NULL;
	if (!s->inode)
		return bfs_err(-ENOENT, "'%s' does not exist", from);
	if (!s->parent)
		return bfs_err(-EBUSY, "the root directory cannot be renamed");
	if (!d->parent)
		return bfs_err(-EBUSY, "cannot rename over the root directory");
	if (s->inode->type == BLOBFS_TYPE_DIR) {
		for (struct bfs_inode *a = d->parent; a; a = a->parent)
			if (a == s->inode)
				return bfs_err(-EINVAL, "cannot move directory '%s' into itself ('%s')", from, to);
	}
	if (d->inode && d->inode != s->inode) {
		if (flags & BLOBFS_RENAME_NOREPLACE)
			return bfs_err(-EEXIST, "'%s' exists already", to);
		if (s->inode->type == BLOBFS_TYPE_DIR && d->inode->type != BLOBFS_TYPE_DIR)
			return bfs_err(-ENOTDIR, "cannot replace file '%s' with a directory", to);
		if (s->inode->type != BLOBFS_TYPE_DIR && d->inode->type == BLOBFS_TYPE_DIR)
			return bfs_err(-EISDIR, "cannot replace directory '%s' with a file", to);
		if (d->inode->type == BLOBFS_TYPE_DIR && d->inode->dir.n)
			return bfs_err(-ENOTEMPTY, "directory '%s' is not empty", to);
	}
	if (d->inode == s->inode)
		return 0;
	struct bfs_rec r = { .type = BFS_REC_RENAME, .parent = s->parent->ino,
			     .parent2 = d->parent->ino, .name = s->name,
			     .name_len = (uint16_t)s->name_len, .name2 = d->name,
			     .name2_len = (uint16_t)d->name_len, .ctime = bfs_now_ns() };
	return bfs_ns_change(fs, &r, gone);
}

int blobfs_rename(struct blobfs *fs, const char *from, const char *to, uint32_t flags)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	if (flags & ~BLOBFS_RENAME_NOREPLACE)
		return bfs_err(-EINVAL, "unknown rename flags 0x%x", flags);
	int rc = check_writable(fs);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&fs->ns_lock);
	struct bfs_path s, d;
	struct bfs_inode *gone = NULL;
	rc = bfs_path_resolve(fs, from, &s);
	if (!rc)
		rc = bfs_path_resolve(fs, to, &d);
	if (!rc)
		rc = rename_locked(fs, &s, &d, flags, from, to, &gone);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (gone)
		bfs_inode_unref(fs, gone);
	return rc;
}

/* ---- by inode handle ---- */

struct blobfs_inode *blobfs_root(struct blobfs *fs)
{
	if (!fs)
		return NULL;
	bfs_inode_ref(fs->root);
	return (struct blobfs_inode *)fs->root;
}

void blobfs_inode_put(struct blobfs *fs, struct blobfs_inode *h, uint64_t n)
{
	struct bfs_inode *in = (struct bfs_inode *)h;
	if (!fs || !in || !n)
		return;
	uint32_t was = atomic_fetch_sub(&in->refs, (uint32_t)n);
	if (was == n)
		bfs_inode_release(fs, in);
}

int blobfs_inode_stat(struct blobfs *fs, struct blobfs_inode *h, struct blobfs_stat *st)
{
	bfs_err_clear();
	if (!fs || !h || !st)
		return bfs_err(-EINVAL, "no file system, inode or stat buffer given");
	pthread_rwlock_rdlock(&fs->ns_lock);
	bfs_fill_stat(fs, (struct bfs_inode *)h, st);
	pthread_rwlock_unlock(&fs->ns_lock);
	return 0;
}

int blobfs_lookup(struct blobfs *fs, struct blobfs_inode *dir, const char *name,
		  struct blobfs_inode **out, struct blobfs_stat *st)
{
	if (!out)
		return bfs_err(-EINVAL, "no inode pointer given");
	struct bfs_path p;
	int rc = bfs_at_begin(fs, (struct bfs_inode *)dir, name, false, true, &p);
	if (rc)
		return rc;
	bfs_inode_ref(p.inode);
	if (st)
		bfs_fill_stat(fs, p.inode, st);
	pthread_rwlock_unlock(&fs->ns_lock);
	*out = (struct blobfs_inode *)p.inode;
	return 0;
}

int blobfs_make_at(struct blobfs *fs, struct blobfs_inode *dir, const char *name,
		   const struct blobfs_node *node, struct blobfs_inode **out, struct blobfs_stat *st)
{
	if (!node)
		return bfs_err(-EINVAL, "no node given");
	if (node->type == BLOBFS_TYPE_SYMLINK &&
	    (!node->target || !*node->target || strlen(node->target) > BLOBFS_PATH_MAX))
		return bfs_err(!node->target || !*node->target ? -EINVAL : -ENAMETOOLONG,
			       "symlink target is empty or longer than %u bytes", BLOBFS_PATH_MAX);
	struct bfs_path p;
	int rc = bfs_at_begin(fs, (struct bfs_inode *)dir, name, true, false, &p);
	if (rc)
		return rc;
	rc = make_locked(fs, &p, node, name);
	if (!rc) {
		if (out) {
			bfs_inode_ref(p.inode);
			*out = (struct blobfs_inode *)p.inode;
		}
		if (st)
			bfs_fill_stat(fs, p.inode, st);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

int blobfs_remove_at(struct blobfs *fs, struct blobfs_inode *parent, const char *name, bool dir)
{
	struct bfs_path p;
	int rc = bfs_at_begin(fs, (struct bfs_inode *)parent, name, true, true, &p);
	if (rc)
		return rc;
	struct bfs_inode *gone;
	rc = remove_locked(fs, &p, dir, name, &gone);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (gone)
		bfs_inode_unref(fs, gone);
	return rc;
}

int blobfs_rename_at(struct blobfs *fs, struct blobfs_inode *sdir, const char *sname,
		     struct blobfs_inode *ddir, const char *dname, uint32_t flags)
{
	if (flags & ~BLOBFS_RENAME_NOREPLACE)
		return bfs_err(-EINVAL, "unknown rename flags 0x%x", flags);
	struct bfs_path s, d;
	int rc = bfs_at_begin(fs, (struct bfs_inode *)sdir, sname, true, false, &s);
	if (rc)
		return rc;
	/* The second name under the lock already held. */
	size_t len = strnlen(dname ? dname : "", BLOBFS_NAME_MAX + 1);
	struct bfs_inode *dd = (struct bfs_inode *)ddir;
	if (!dname || !dd)
		rc = bfs_err(-EINVAL, "no target directory or name given");
	else if ((rc = bfs_name_check(dname, len)) != 0)
		;
	else if (memchr(dname, '/', len))
		rc = bfs_err(-EINVAL, "'%s' is not a single name", dname);
	else if (dd->type != BLOBFS_TYPE_DIR)
		rc = bfs_err(-ENOTDIR, "inode %llu is not a directory", (unsigned long long)dd->ino);
	else if (!dd->linked)
		rc = bfs_err(-ENOENT, "directory inode %llu was removed", (unsigned long long)dd->ino);
	struct bfs_inode *gone = NULL;
	if (!rc) {
		d = (struct bfs_path){ dd, bfs_dir_find(dd, dname, len), dname, len };
		rc = rename_locked(fs, &s, &d, flags, sname, dname, &gone);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	if (gone)
		bfs_inode_unref(fs, gone);
	return rc;
}

ssize_t blobfs_readlink_inode(struct blobfs *fs, struct blobfs_inode *h, char *buf, size_t len)
{
	bfs_err_clear();
	if (!fs || !h || !buf || !len)
		return bfs_err(-EINVAL, "no file system, inode or buffer given");
	pthread_rwlock_rdlock(&fs->ns_lock);
	ssize_t rc = readlink_inode((struct bfs_inode *)h, buf, len, "the inode");
	pthread_rwlock_unlock(&fs->ns_lock);
	return rc;
}

int blobfs_commit(struct blobfs *fs)
{
	bfs_err_clear();
	if (!fs)
		return bfs_err(-EINVAL, "no file system given");
	return bfs_jnl_commit(fs);
}

/* ---- listings ---- */

struct blobfs_dir {
	struct blobfs_dirent *e;
	uint32_t n, next;
};

struct collect {
	struct blobfs_dirent *e;
	uint32_t n;
};

static void collect_one(void *arg, const char *name, size_t len, struct bfs_inode *child)
{
	struct collect *c = arg;
	struct blobfs_dirent *d = &c->e[c->n++];
	memcpy(d->name, name, len);
	d->name[len] = '\0';
	d->ino = child->ino;
	d->type = (enum blobfs_type)child->type;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct blobfs_dirent *)a)->name, ((const struct blobfs_dirent *)b)->name);
}

/* ns_lock held. */
static int list_dir(struct bfs_inode *in, const char *what, struct blobfs_dir **out)
{
	if (in->type != BLOBFS_TYPE_DIR)
		return bfs_err(-ENOTDIR, "'%s' is not a directory", what);
	struct blobfs_dir *d = calloc(1, sizeof(*d));
	struct collect c = { calloc(in->dir.n ? in->dir.n : 1, sizeof(*c.e)), 0 };
	if (!d || !c.e) {
		free(d);
		free(c.e);
		return bfs_err(-ENOMEM, "out of memory listing '%s'", what);
	}
	bfs_dir_each(in, collect_one, &c);
	d->e = c.e;
	d->n = c.n;
	*out = d;
	return 0;
}

int blobfs_opendir_inode(struct blobfs *fs, struct blobfs_inode *h, struct blobfs_dir **out)
{
	bfs_err_clear();
	if (!fs || !h || !out)
		return bfs_err(-EINVAL, "no file system, inode or handle pointer given");
	struct blobfs_dir *d = NULL;
	pthread_rwlock_rdlock(&fs->ns_lock);
	int rc = list_dir((struct bfs_inode *)h, "the directory", &d);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (rc)
		return rc;
	qsort(d->e, d->n, sizeof(*d->e), cmp_name);
	*out = d;
	return 0;
}

int blobfs_opendir(struct blobfs *fs, const char *path, struct blobfs_dir **out)
{
	if (!out)
		return bfs_err(-EINVAL, "no handle pointer given");
	struct bfs_path p;
	int rc = ns_begin(fs, path, false, true, &p);
	if (rc)
		return rc;
	struct blobfs_dir *d = NULL;
	rc = list_dir(p.inode, path, &d);
	pthread_rwlock_unlock(&fs->ns_lock);
	if (rc)
		return rc;
	qsort(d->e, d->n, sizeof(*d->e), cmp_name);
	*out = d;
	return 0;
}

int blobfs_readdir(struct blobfs_dir *d, struct blobfs_dirent *ent)
{
	if (!d || !ent)
		return bfs_err(-EINVAL, "no directory handle or entry given");
	if (d->next >= d->n)
		return 0;
	*ent = d->e[d->next++];
	return 1;
}

void blobfs_closedir(struct blobfs_dir *d)
{
	if (!d)
		return;
	free(d->e);
	free(d);
}

int blobfs_statfs(struct blobfs *fs, struct blobfs_statfs *out)
{
	bfs_err_clear();
	if (!fs || !out)
		return bfs_err(-EINVAL, "no file system or buffer given");
	memset(out, 0, sizeof(*out));
	out->block_size = BFS_BLOCK;
	out->cluster_size = fs->g.cluster_size;
	out->clusters = fs->g.nclusters;
	/* As ext4 counts them: space freed by a remove is free at once (here: once its record
	 * commits, which a write short of space forces), and so is the space of removed files
	 * that nobody has open (FUSE's kernel side may still hold them until it forgets them). */
	pthread_rwlock_rdlock(&fs->ns_lock);
	out->files = fs->itab_n;
	pthread_mutex_lock(&fs->files_lock);
	pthread_mutex_lock(&fs->jlock);
	uint64_t pending = fs->j.deferred_clusters;
	for (struct bfs_inode *in = fs->orphans; in; in = in->onext)
		if (!in->nopen)
			pending += bfs_ext_clusters(&in->ext, 0, 0);
	out->free_clusters = bfs_alloc_nfree(&fs->alloc) + pending;
	pthread_mutex_unlock(&fs->jlock);
	pthread_mutex_unlock(&fs->files_lock);
	pthread_rwlock_unlock(&fs->ns_lock);
	out->free_clusters = BFS_MIN(out->free_clusters, out->clusters);
	out->meta_bytes = atomic_load(&fs->meta_bytes);
	out->meta_capacity = (fs->g.ckpt_blocks - 1) * BFS_BLOCK;
	out->journal_size = fs->g.jnl_blocks * BFS_BLOCK;
	memcpy(out->label, fs->sb.label, sizeof(out->label));
	out->label[sizeof(out->label) - 1] = '\0';
	memcpy(out->uuid, fs->sb.uuid, 16);
	return 0;
}

void blobfs_get_stats(struct blobfs *fs, struct blobfs_stats *o)
{
	memset(o, 0, sizeof(*o));
	if (!fs)
		return;
	o->cache_hits = atomic_load(&fs->st.cache_hits);
	o->cache_misses = atomic_load(&fs->st.cache_misses);
	o->prefetch_pages = atomic_load(&fs->st.prefetch_pages);
	o->prefetch_hits = atomic_load(&fs->st.prefetch_hits);
	o->evictions = atomic_load(&fs->st.evictions);
	o->dev_read_bytes = atomic_load(&fs->st.dev_read_bytes);
	o->dev_write_bytes = atomic_load(&fs->st.dev_write_bytes);
	o->dev_reads = atomic_load(&fs->st.dev_reads);
	o->dev_writes = atomic_load(&fs->st.dev_writes);
	o->dev_flushes = atomic_load(&fs->st.dev_flushes);
	o->commits = atomic_load(&fs->st.commits);
	o->checkpoints = atomic_load(&fs->st.checkpoints);
	o->replayed = atomic_load(&fs->st.replayed);
	o->shadow_replayed = fs->shadow_replayed;
	o->cache_bytes = (uint64_t)atomic_load(&fs->cache.nalloc) * fs->cache.unit_size;
	o->dirty_bytes = atomic_load(&fs->cache.dirty_pages) * BFS_PAGE;
	pthread_mutex_lock(&fs->ctx_lock);
	o->qpairs = fs->nctx;
	pthread_mutex_unlock(&fs->ctx_lock);
}
