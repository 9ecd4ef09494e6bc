/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `unvme fuse DEVICE MOUNTPOINT`: a BlobFS mounted through FUSE (libfuse3's low-level API,
 * multithreaded), so that any program can use it. Every FUSE worker thread does its I/O on
 * its own queue pair (BlobFS gives each thread one). SIGINT, SIGTERM and `fusermount3 -u`
 * end the loop; BlobFS is then unmounted cleanly (dirty data written back, a clean
 * checkpoint).
 *
 * The low-level API speaks in inodes, not paths: a FUSE node id is a BlobFS inode handle
 * (struct blobfs_inode *, the root is FUSE_ROOT_ID), and every reply that hands the kernel
 * a node (lookup, create, mkdir, mknod, symlink) takes a reference that the kernel's
 * FORGET gives back. So an inode lives while the kernel knows it, whatever happens to its
 * name: a file that was unlinked or renamed over answers fstat, read, write, truncate,
 * fsync and close through its descriptor as on ext4 (with the path API, libfuse itself
 * refused such calls with ESTALE).
 *
 * Without -f the command forks: the child opens the device, mounts, and tells the parent
 * through a pipe whether it worked, so the user sees errors and the exit code of the mount.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blobfs_fuse.h"
#include "unvme/blobfs.h"

/* The kernel caches names and attributes this long (libfuse's defaults); every change goes
 * through this server, and the kernel drops what a change of its own makes stale. */
#define ENTRY_TIMEOUT 1.0
#define ATTR_TIMEOUT 1.0

struct server {
	struct blobfs *fs;
	struct blobfs_inode *root;
};

static struct server *srv(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct blobfs_inode *node(fuse_req_t req, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? srv(req)->root : (struct blobfs_inode *)(uintptr_t)ino;
}

static struct blobfs_file *fh(const struct fuse_file_info *fi)
{
	return (struct blobfs_file *)(uintptr_t)fi->fh;
}

static mode_t type_bits(enum blobfs_type t)
{
	switch (t) {
	case BLOBFS_TYPE_DIR: return S_IFDIR;
	case BLOBFS_TYPE_SYMLINK: return S_IFLNK;
	case BLOBFS_TYPE_FIFO: return S_IFIFO;
	case BLOBFS_TYPE_CHR: return S_IFCHR;
	case BLOBFS_TYPE_BLK: return S_IFBLK;
	case BLOBFS_TYPE_SOCK: return S_IFSOCK;
	default: return S_IFREG;
	}
}

static void to_stat(const struct blobfs_stat *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = s->ino;
	st->st_mode = s->mode | type_bits(s->type);
	st->st_nlink = s->nlink;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_rdev = (dev_t)s->rdev;
	st->st_size = (off_t)s->size;
	st->st_blksize = BLOBFS_BLOCK_SIZE;
	st->st_blocks = (blkcnt_t)(s->blocks * (BLOBFS_BLOCK_SIZE / 512));
	st->st_atim.tv_sec = s->atime_ns / 1000000000;
	st->st_atim.tv_nsec = s->atime_ns % 1000000000;
	st->st_mtim.tv_sec = s->mtime_ns / 1000000000;
	st->st_mtim.tv_nsec = s->mtime_ns % 1000000000;
	st->st_ctim.tv_sec = s->ctime_ns / 1000000000;
	st->st_ctim.tv_nsec = s->ctime_ns % 1000000000;
}

/* Hands the kernel a node whose reference the caller took; gives it back if the reply
 * cannot be sent (the kernel then never learnt of it). */
static void reply_entry(fuse_req_t req, struct blobfs_inode *in, const struct blobfs_stat *s)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = in == srv(req)->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	e.generation = s->ino; /* inode numbers are never reused; node ids (addresses) may be */
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	to_stat(s, &e.attr);
	if (fuse_reply_entry(req, &e) != 0)
		blobfs_inode_put(srv(req)->fs, in, 1);
}

static void reply_attr(fuse_req_t req, struct blobfs_inode *in)
{
	struct blobfs_stat s;
	int rc = blobfs_inode_stat(srv(req)->fs, in, &s);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	struct stat st;
	to_stat(&s, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* Requests are read into memory (not spliced), whatever the kernel offers. */
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct blobfs_inode *in;
	struct blobfs_stat s;
	int rc = blobfs_lookup(srv(req)->fs, node(req, parent), name, &in, &s);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_entry(req, in, &s);
}

static void forget_one(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
	if (ino != FUSE_ROOT_ID) /* the server holds the root itself */
		blobfs_inode_put(srv(req)->fs, node(req, ino), n);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(req, ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
	for (size_t i = 0; i < count; i++)
		forget_one(req, f[i].ino, f[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	reply_attr(req, node(req, ino));
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ns(&t);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct blobfs *fs = srv(req)->fs;
	struct blobfs_inode *in = node(req, ino);
	struct blobfs_stat s = { .mode = attr->st_mode & 07777, .uid = attr->st_uid, .gid = attr->st_gid };
	uint32_t mask = 0;
	int rc = 0;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (attr->st_size < 0)
			rc = -EINVAL;
		else if (fi) /* ftruncate: the handle's access mode counts */
			rc = blobfs_ftruncate(fh(fi), (uint64_t)attr->st_size);
		else
			rc = blobfs_inode_setattr(fs, in, &(struct blobfs_stat){ .size = (uint64_t)attr->st_size },
						  BLOBFS_SET_SIZE);
	}
	if (to_set & FUSE_SET_ATTR_MODE)
		mask |= BLOBFS_SET_MODE;
	if (to_set & FUSE_SET_ATTR_UID)
		mask |= BLOBFS_SET_UID;
	if (to_set & FUSE_SET_ATTR_GID)
		mask |= BLOBFS_SET_GID;
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) {
		mask |= BLOBFS_SET_ATIME;
		s.atime_ns = to_set & FUSE_SET_ATTR_ATIME_NOW ? now_ns() : ts_ns(&attr->st_atim);
	}
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		mask |= BLOBFS_SET_MTIME;
		s.mtime_ns = to_set & FUSE_SET_ATTR_MTIME_NOW ? now_ns() : ts_ns(&attr->st_mtim);
	}
	if (!rc && mask)
		rc = blobfs_inode_setattr(fs, in, &s, mask);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_attr(req, in);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[BLOBFS_PATH_MAX + 1];
	ssize_t rc = blobfs_readlink_inode(srv(req)->fs, node(req, ino), buf, sizeof(buf));
	if (rc < 0)
		fuse_reply_err(req, (int)-rc);
	else
		fuse_reply_readlink(req, buf);
}

static void make(fuse_req_t req, fuse_ino_t parent, const char *name, enum blobfs_type type,
		 mode_t mode, dev_t rdev, const char *target)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct blobfs_node n = { .type = type, .mode = mode & 07777, .uid = c->uid, .gid = c->gid,
				 .rdev = rdev, .target = target };
	struct blobfs_inode *in;
	struct blobfs_stat s;
	int rc = blobfs_make_at(srv(req)->fs, node(req, parent), name, &n, &in, &s);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		reply_entry(req, in, &s);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	enum blobfs_type t;
	switch (mode & S_IFMT) {
	case S_IFREG: case 0: t = BLOBFS_TYPE_FILE; break;
	case S_IFIFO: t = BLOBFS_TYPE_FIFO; break;
	case S_IFCHR: t = BLOBFS_TYPE_CHR; break;
	case S_IFBLK: t = BLOBFS_TYPE_BLK; break;
	case S_IFSOCK: t = BLOBFS_TYPE_SOCK; break;
	default:
		fuse_reply_err(req, EINVAL);
		return;
	}
	make(req, parent, name, t, mode, rdev, NULL);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make(req, parent, name, BLOBFS_TYPE_DIR, mode, 0, NULL);
}

static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	make(req, parent, name, BLOBFS_TYPE_SYMLINK, 0777, 0, target);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -blobfs_remove_at(srv(req)->fs, node(req, parent), name, false));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -blobfs_remove_at(srv(req)->fs, node(req, parent), name, true));
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		fuse_reply_err(req, EINVAL); /* RENAME_EXCHANGE, RENAME_WHITEOUT */
		return;
	}
	fuse_reply_err(req, -blobfs_rename_at(srv(req)->fs, node(req, parent), name, node(req, newparent),
					      newname, flags & RENAME_NOREPLACE ? BLOBFS_RENAME_NOREPLACE : 0));
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	/* No hard links: what link(2) says on a file system without them. */
	fuse_reply_err(req, EPERM);
}

static void set_open_flags(struct fuse_file_info *fi, struct blobfs_file *f)
{
	fi->fh = (uint64_t)(uintptr_t)f;
	/* The kernel's page cache stays in front (mmap, as git and sqlite may use, needs it);
	 * it is dropped at each open. */
	fi->direct_io = 0;
	fi->keep_cache = 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct blobfs_file *f;
	int rc = blobfs_open_inode(srv(req)->fs, node(req, ino), fi->flags & ~(O_CREAT | O_EXCL), &f);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	set_open_flags(fi, f);
	if (fuse_reply_open(req, fi) != 0)
		blobfs_close(f); /* interrupted: the kernel has no handle */
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct blobfs *fs = srv(req)->fs;
	struct blobfs_file *f;
	struct blobfs_inode *in;
	int rc = blobfs_open_at(fs, node(req, parent), name, fi->flags | O_CREAT, mode & 07777,
				c->uid, c->gid, &f, &in);
	struct blobfs_stat s;
	if (!rc && (rc = blobfs_inode_stat(fs, in, &s)) != 0) {
		blobfs_close(f);
		blobfs_inode_put(fs, in, 1);
	}
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	set_open_flags(fi, f);
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = (fuse_ino_t)(uintptr_t)in;
	e.generation = s.ino;
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	to_stat(&s, &e.attr);
	if (fuse_reply_create(req, &e, fi) != 0) {
		blobfs_close(f);
		blobfs_inode_put(fs, in, 1);
	}
}

/* Read buffers: one per worker thread, grown to the largest read. */
static __thread char *rbuf;
static __thread size_t rbuf_cap;

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	if (size > rbuf_cap) {
		char *b = realloc(rbuf, size);
		if (!b) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		rbuf = b;
		rbuf_cap = size;
	}
	ssize_t r = blobfs_pread(fh(fi), rbuf, size, (uint64_t)off);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_buf(req, rbuf, (size_t)r);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)ino;
	ssize_t r = (fi->flags & O_APPEND) ? blobfs_append(fh(fi), buf, size)
					   : blobfs_pwrite(fh(fi), buf, size, (uint64_t)off);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_write(req, (size_t)r);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0); /* close(2) commits nothing on ext4 either */
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, -blobfs_close(fh(fi)));
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	fuse_reply_err(req, -blobfs_fsync(fh(fi)));
}

/* A directory handle: the listing taken at opendir, served by offset. */
struct dirlist {
	struct blobfs_dirent *e;
	size_t n;
};

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct blobfs_dir *d;
	int rc = blobfs_opendir_inode(srv(req)->fs, node(req, ino), &d);
	struct dirlist *l = rc ? NULL : calloc(1, sizeof(*l));
	size_t cap = 0;
	struct blobfs_dirent e;
	while (l && blobfs_readdir(d, &e) == 1) {
		if (l->n == cap) {
			cap = cap ? cap * 2 : 16;
			struct blobfs_dirent *ne = realloc(l->e, cap * sizeof(*ne));
			if (!ne) {
				free(l->e);
				free(l);
				l = NULL;
				break;
			}
			l->e = ne;
		}
		l->e[l->n++] = e;
	}
	if (!rc)
		blobfs_closedir(d);
	if (!rc && !l)
		rc = -ENOMEM;
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)l;
	if (fuse_reply_open(req, fi) != 0) {
		free(l->e);
		free(l);
	}
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct dirlist *l = (struct dirlist *)(uintptr_t)fi->fh;
	char *buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	/* Offsets: 0 ".", 1 "..", 2 + i entry i; each entry carries the offset of the next. */
	for (size_t k = off < 0 ? 0 : (size_t)off; k < l->n + 2; k++) {
		struct stat st = {0};
		const char *name;
		if (k < 2) {
			name = k ? ".." : ".";
			st.st_mode = S_IFDIR;
			st.st_ino = k ? 0 : (ino_t)ino;
		} else {
			name = l->e[k - 2].name;
			st.st_ino = l->e[k - 2].ino;
			st.st_mode = type_bits(l->e[k - 2].type);
		}
		size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)(k + 1));
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct dirlist *l = (struct dirlist *)(uintptr_t)fi->fh;
	free(l->e);
	free(l);
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	/* The names in the directory and, since `sync` and `syncfs` never reach a FUSE server,
	 * every file's data too: the one call a program can make for all of it. */
	fuse_reply_err(req, -blobfs_sync(srv(req)->fs));
}

/* Bytes of metadata slot per inode in `df -i`'s totals: a file's record, a short name and an
 * extent. */
#define INODE_BUDGET 128u

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct blobfs_statfs s;
	int rc = blobfs_statfs(srv(req)->fs, &s);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	struct statvfs sv;
	memset(&sv, 0, sizeof(sv));
	uint64_t per = s.cluster_size / BLOBFS_BLOCK_SIZE;
	sv.f_bsize = s.cluster_size;
	sv.f_frsize = BLOBFS_BLOCK_SIZE;
	sv.f_blocks = s.clusters * per;
	sv.f_bfree = sv.f_bavail = s.free_clusters * per;
	/* A fixed total, as a file system with an inode table has (the metadata slot divided by
	 * a typical inode's share), and exactly the inodes in use taken from it. Names and
	 * extents come out of the same slot, so creates can run out earlier (ENOSPC), as ext4
	 * can run out of blocks with inodes left. */
	uint64_t total = s.meta_capacity / INODE_BUDGET;
	if (total < s.files)
		total = s.files;
	sv.f_files = total;
	sv.f_ffree = sv.f_favail = total - s.files;
	sv.f_namemax = BLOBFS_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	(void)ino;
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_err(req, -blobfs_fallocate(fh(fi), (uint32_t)mode, (uint64_t)off, (uint64_t)len));
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	.create = op_create,
	.fallocate = op_fallocate,
};

/* ---- the command ---- */

struct fuse_args_own {
	const char *dev, *mnt;
	uint32_t nsid;
	bool foreground;
	unsigned threads;
	struct blobfs_opts o;
	const char *fuse_opts[16];
	int nfuse;
};

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "unvme: fuse: %s%s%s (see 'unvme fuse --help')\n", msg, arg ? " " : "", arg ? arg : "");
	return 2;
}

static bool size_arg(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return false;
	unsigned sh = *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 :
		      *end == 'g' || *end == 'G' ? 30 : 0;
	if (sh)
		end++;
	if (*end)
		return false;
	*out = (uint64_t)v << sh;
	return true;
}

static int parse(int argc, char **argv, struct fuse_args_own *a)
{
	memset(a, 0, sizeof(*a));
	a->threads = 8;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		if (strcmp(s, "-f") == 0 || strcmp(s, "--foreground") == 0) {
			a->foreground = true;
		} else if (strcmp(s, "-n") == 0 || strcmp(s, "--namespace-id") == 0) {
			if (!v || !size_arg(v, &n) || n > UINT32_MAX)
				return usage("-n needs a namespace id", NULL);
			a->nsid = (uint32_t)n;
			i++;
		} else if (strcmp(s, "-o") == 0) {
			if (!v || a->nfuse == 16)
				return usage("-o needs FUSE mount options", NULL);
			a->fuse_opts[a->nfuse++] = v;
			i++;
		} else if (strcmp(s, "--cache-size") == 0) {
			if (!v || !size_arg(v, &a->o.cache_size))
				return usage("--cache-size needs a size", NULL);
			i++;
		} else if (strcmp(s, "--prefetch-threshold") == 0) {
			if (!v || !size_arg(v, &n) || n > UINT32_MAX)
				return usage("--prefetch-threshold needs a size", NULL);
			a->o.prefetch_threshold = (uint32_t)n;
			i++;
		} else if (strcmp(s, "--threads") == 0) {
			if (!v || !size_arg(v, &n) || n < 1 || n > 256)
				return usage("--threads needs 1..256", NULL);
			a->threads = (unsigned)n;
			i++;
		} else if (strcmp(s, "--no-retain") == 0) {
			a->o.no_retain = true;
		} else if (strcmp(s, "--no-prefetch") == 0) {
			a->o.no_prefetch = true;
		} else if (strcmp(s, "--direct-read") == 0) {
			a->o.direct_read = true;
		} else if (strcmp(s, "--direct-write") == 0) {
			a->o.direct_write = true;
		} else if (s[0] == '-') {
			return usage("unknown option", s);
		} else if (!a->dev) {
			a->dev = s;
		} else if (!a->mnt) {
			a->mnt = s;
		} else {
			return usage("unexpected argument", s);
		}
	}
	if (!a->dev || !a->mnt)
		return usage("a device and a mount point are required", NULL);
	return 0;
}

/* Mounts and serves; ready_fd (-1 in the foreground) learns "ok" or the error once the
 * mount is up or has failed. Returns the exit code. */
static int serve(const struct fuse_args_own *a, int ready_fd)
{
	char err[600] = "";
	int code = 3;
	struct server sv = {0};
	struct fuse_session *se = NULL;
	bool mounted = false;
	char *fargv[40];
	int fargc = 0;
	fargv[fargc++] = (char *)"unvme-fuse";
	fargv[fargc++] = (char *)"-o";
	fargv[fargc++] = (char *)"fsname=blobfs,subtype=blobfs,default_permissions";
	for (int i = 0; i < a->nfuse; i++) {
		fargv[fargc++] = (char *)"-o";
		fargv[fargc++] = (char *)a->fuse_opts[i];
	}
	struct fuse_args args = FUSE_ARGS_INIT(fargc, fargv);
	int rc = blobfs_mount_dev(a->dev, a->nsid, &a->o, &sv.fs);
	if (rc) {
		snprintf(err, sizeof(err), "cannot mount BlobFS on %s: %s", a->dev, blobfs_errmsg());
		goto out;
	}
	sv.root = blobfs_root(sv.fs);
	se = fuse_session_new(&args, &ops, sizeof(ops), &sv);
	if (!se) {
		snprintf(err, sizeof(err), "FUSE refused the options");
		code = 2;
		goto out;
	}
	if (fuse_session_mount(se, a->mnt) != 0) {
		snprintf(err, sizeof(err), "cannot mount FUSE at %s (does it exist, and is /dev/fuse usable?)",
			 a->mnt);
		goto out;
	}
	mounted = true;
	if (fuse_set_signal_handlers(se) != 0) {
		snprintf(err, sizeof(err), "cannot install signal handlers");
		goto out;
	}
	if (ready_fd >= 0) {
		if (write(ready_fd, "ok", 2) != 2) {
			/* the parent is gone: serve anyway */
		}
		close(ready_fd);
		ready_fd = -1;
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, STDIN_FILENO);
			dup2(nul, STDOUT_FILENO);
			dup2(nul, STDERR_FILENO);
			if (nul > 2)
				close(nul);
		}
	}
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, a->threads);
	fuse_loop_cfg_set_idle_threads(cfg, a->threads);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_remove_signal_handlers(se);
	code = rc < 0 ? 3 : 0;
out:
	if (mounted)
		fuse_session_unmount(se);
	if (se)
		fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	if (sv.root)
		blobfs_inode_put(sv.fs, sv.root, 1);
	if (sv.fs && blobfs_unmount(sv.fs) != 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "unmount: %s", blobfs_errmsg());
		code = 3;
	}
	if (err[0]) {
		if (ready_fd >= 0) {
			if (write(ready_fd, err, strlen(err)) < 0) {
				/* nothing more to tell anyone */
			}
		} else {
			fprintf(stderr, "unvme: fuse: %s\n", err);
		}
	}
	if (ready_fd >= 0)
		close(ready_fd);
	return code;
}

int blobfs_fuse_main(int argc, char **argv)
{
	struct fuse_args_own a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.foreground)
		return serve(&a, -1);
	int p[2];
	if (pipe(p) != 0) {
		perror("unvme: fuse: pipe");
		return 3;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("unvme: fuse: fork");
		return 3;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		_exit(serve(&a, p[1]));
	}
	close(p[1]);
	char msg[600];
	ssize_t n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	msg[n > 0 ? n : 0] = '\0';
	if (n == 2 && memcmp(msg, "ok", 2) == 0)
		return 0;
	int status = 0;
	waitpid(pid, &status, 0);
	fprintf(stderr, "unvme: fuse: %s\n", msg[0] ? msg : "the server exited before mounting");
	return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 3;
}
