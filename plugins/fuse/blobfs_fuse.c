/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `unvme fuse DEVICE MOUNTPOINT`: a BlobFS mounted through FUSE (libfuse3's path API,
 * multithreaded), so that any program can use it. Every FUSE worker thread does its I/O on
 * its own queue pair (BlobFS gives each thread one). Unlinked files stay usable through
 * their open handles (hard_remove + nullpath_ok: operations on them get the handle, not a
 * path). SIGINT, SIGTERM and `fusermount3 -u` end the loop; BlobFS is then unmounted
 * cleanly (dirty data written back, a clean checkpoint).
 *
 * Without -f the command forks: the child opens the device, mounts, and tells the parent
 * through a pipe whether it worked, so the user sees errors and the exit code of the mount.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blobfs_fuse.h"
#include "unvme/blobfs.h"

static struct blobfs *fs_of(void)
{
	return fuse_get_context()->private_data;
}

static struct blobfs_file *fh(const struct fuse_file_info *fi)
{
	return fi ? (struct blobfs_file *)(uintptr_t)fi->fh : NULL;
}

static void to_stat(const struct blobfs_stat *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = s->ino;
	st->st_mode = s->mode | (s->type == BLOBFS_TYPE_DIR ? S_IFDIR :
				 s->type == BLOBFS_TYPE_SYMLINK ? S_IFLNK : S_IFREG);
	st->st_nlink = s->nlink;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
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

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct blobfs_stat s;
	int rc = fi ? blobfs_fstat(fh(fi), &s) : blobfs_stat(fs_of(), path, &s);
	if (!rc)
		to_stat(&s, st);
	return rc;
}

static int op_readlink(const char *path, char *buf, size_t len)
{
	ssize_t rc = blobfs_readlink(fs_of(), path, buf, len);
	return rc < 0 ? (int)rc : 0;
}

/* New nodes belong to the caller, as on any file system. */
static void own(const char *path)
{
	struct fuse_context *c = fuse_get_context();
	if (!c->uid && !c->gid)
		return;
	struct blobfs_stat s = { .uid = c->uid, .gid = c->gid };
	blobfs_setattr(fs_of(), path, &s, BLOBFS_SET_UID | BLOBFS_SET_GID);
}

static int op_mkdir(const char *path, mode_t mode)
{
	int rc = blobfs_mkdir(fs_of(), path, mode & 07777);
	if (!rc)
		own(path);
	return rc;
}

static int op_unlink(const char *path)
{
	return blobfs_unlink(fs_of(), path);
}

static int op_rmdir(const char *path)
{
	return blobfs_rmdir(fs_of(), path);
}

static int op_symlink(const char *target, const char *path)
{
	int rc = blobfs_symlink(fs_of(), target, path);
	if (!rc)
		own(path);
	return rc;
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
	return blobfs_rename(fs_of(), from, to, flags & RENAME_NOREPLACE ? BLOBFS_RENAME_NOREPLACE : 0);
}

/* With nullpath_ok, calls through a file descriptor come with the handle and maybe no path. */
static int setattr(const char *path, struct fuse_file_info *fi, const struct blobfs_stat *s, uint32_t mask)
{
	return fi ? blobfs_fsetattr(fh(fi), s, mask) : blobfs_setattr(fs_of(), path, s, mask);
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct blobfs_stat s = { .mode = mode & 07777 };
	return setattr(path, fi, &s, BLOBFS_SET_MODE);
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct blobfs_stat s = { .uid = uid, .gid = gid };
	uint32_t mask = (uid != (uid_t)-1 ? BLOBFS_SET_UID : 0) | (gid != (gid_t)-1 ? BLOBFS_SET_GID : 0);
	return mask ? setattr(path, fi, &s, mask) : 0;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (size < 0)
		return -EINVAL;
	/* libfuse passes only the handle (not its open flags) for an ftruncate. */
	if (fi)
		return blobfs_ftruncate(fh(fi), (uint64_t)size);
	return blobfs_truncate(fs_of(), path, (uint64_t)size);
}

static int64_t ts_ns(const struct timespec *t)
{
	struct timespec now;
	if (t->tv_nsec == UTIME_NOW) {
		clock_gettime(CLOCK_REALTIME, &now);
		t = &now;
	}
	return (int64_t)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct blobfs_stat s = {0};
	uint32_t mask = 0;
	if (tv[0].tv_nsec != UTIME_OMIT) {
		s.atime_ns = ts_ns(&tv[0]);
		mask |= BLOBFS_SET_ATIME;
	}
	if (tv[1].tv_nsec != UTIME_OMIT) {
		s.mtime_ns = ts_ns(&tv[1]);
		mask |= BLOBFS_SET_MTIME;
	}
	return mask ? setattr(path, fi, &s, mask) : 0;
}

static int open_common(const char *path, int flags, mode_t mode, struct fuse_file_info *fi)
{
	struct blobfs_file *f;
	int rc = blobfs_open(fs_of(), path, flags, mode & 07777, &f);
	if (rc)
		return rc;
	fi->fh = (uint64_t)(uintptr_t)f;
	/* The kernel's page cache stays in front (mmap, as git and sqlite may use, needs it);
	 * it is dropped at each open, since BlobFS can change underneath only through us. */
	fi->direct_io = 0;
	fi->keep_cache = 0;
	return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int rc = open_common(path, fi->flags | O_CREAT, mode, fi);
	if (!rc)
		own(path);
	return rc;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	return open_common(path, fi->flags, 0, fi);
}

static int op_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t r = blobfs_pread(fh(fi), buf, len, (uint64_t)off);
	return (int)r;
}

static int op_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t r = (fi->flags & O_APPEND) ? blobfs_append(fh(fi), buf, len)
					   : blobfs_pwrite(fh(fi), buf, len, (uint64_t)off);
	return (int)r;
}

static int op_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	struct blobfs_statfs s;
	int rc = blobfs_statfs(fs_of(), &s);
	if (rc)
		return rc;
	memset(sv, 0, sizeof(*sv));
	uint64_t per = s.cluster_size / BLOBFS_BLOCK_SIZE;
	sv->f_bsize = s.cluster_size;
	sv->f_frsize = BLOBFS_BLOCK_SIZE;
	sv->f_blocks = s.clusters * per;
	sv->f_bfree = sv->f_bavail = s.free_clusters * per;
	/* Files are bounded by the metadata slot: about 300 bytes each. */
	uint64_t room = s.meta_capacity > s.meta_bytes ? (s.meta_capacity - s.meta_bytes) / 300 : 0;
	sv->f_files = s.files + room;
	sv->f_ffree = sv->f_favail = room;
	sv->f_namemax = BLOBFS_NAME_MAX;
	return 0;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	return blobfs_close(fh(fi));
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	return blobfs_fsync(fh(fi));
}

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	struct blobfs_dir *d;
	int rc = blobfs_opendir(fs_of(), path, &d);
	if (!rc)
		fi->fh = (uint64_t)(uintptr_t)d;
	return rc;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)path;
	(void)off;
	(void)flags;
	struct blobfs_dir *d = (struct blobfs_dir *)(uintptr_t)fi->fh;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	struct blobfs_dirent e;
	while (blobfs_readdir(d, &e) == 1) {
		struct stat st = { .st_ino = e.ino, .st_mode = e.type == BLOBFS_TYPE_DIR ? S_IFDIR :
						e.type == BLOBFS_TYPE_SYMLINK ? S_IFLNK : S_IFREG };
		if (fill(buf, e.name, &st, 0, 0))
			break;
	}
	return 0;
}

static int op_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	blobfs_closedir((struct blobfs_dir *)(uintptr_t)fi->fh);
	return 0;
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return blobfs_sync(fs_of());
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)path;
	if (mode & ~FALLOC_FL_KEEP_SIZE)
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	return blobfs_fallocate(fh(fi), (uint64_t)off, (uint64_t)len, mode & FALLOC_FL_KEEP_SIZE);
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	cfg->hard_remove = 1;
	cfg->nullpath_ok = 1;
	return fuse_get_context()->private_data;
}

static const struct fuse_operations ops = {
	.getattr = op_getattr,
	.readlink = op_readlink,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.chmod = op_chmod,
	.chown = op_chown,
	.truncate = op_truncate,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.statfs = op_statfs,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.init = op_init,
	.create = op_create,
	.utimens = op_utimens,
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
	struct blobfs *fs = NULL;
	struct fuse *f = NULL;
	struct fuse_loop_config *cfg = NULL;
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
	int rc = blobfs_mount_dev(a->dev, a->nsid, &a->o, &fs);
	if (rc) {
		snprintf(err, sizeof(err), "cannot mount BlobFS on %s: %s", a->dev, blobfs_errmsg());
		goto out;
	}
	f = fuse_new(&args, &ops, sizeof(ops), fs);
	if (!f) {
		snprintf(err, sizeof(err), "FUSE refused the options");
		code = 2;
		goto out;
	}
	if (fuse_mount(f, a->mnt) != 0) {
		snprintf(err, sizeof(err), "cannot mount FUSE at %s (does it exist, and is /dev/fuse usable?)",
			 a->mnt);
		goto out;
	}
	if (fuse_set_signal_handlers(fuse_get_session(f)) != 0) {
		snprintf(err, sizeof(err), "cannot install signal handlers");
		fuse_unmount(f);
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
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, a->threads);
	fuse_loop_cfg_set_idle_threads(cfg, a->threads);
	rc = fuse_loop_mt(f, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_remove_signal_handlers(fuse_get_session(f));
	fuse_unmount(f);
	code = rc < 0 ? 3 : 0;
out:
	if (f)
		fuse_destroy(f);
	fuse_opt_free_args(&args);
	if (fs && blobfs_unmount(fs) != 0) {
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
