/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Power-loss simulation for the crash harness: an LD_PRELOAD library that journals, for the
 * files under one directory, every change the page cache holds until a sync. After the
 * process is killed, tests/crash/powercut.py reads the journal and undoes a random choice of
 * the changes that were never synced, which leaves the files as a power cut at that moment
 * could have left them (the technique of LevelDB's and RocksDB's fault-injection
 * environments, applied from outside the process).
 *
 *   UNVME_POWERLOSS_JOURNAL=<file>   where the journal goes (appended)
 *   UNVME_POWERLOSS_DIR=<dir>        the files to watch: everything under this directory
 *
 * Journal records (little endian, each one write(2)):
 *   u32 type, u32 path length, u64 inode, u64 offset, u64 length, u64 old file size,
 *   u32 flags, u32 old-data length, path bytes, old data bytes
 *   WRITE    length bytes at offset; old data = the bytes it covered that existed before
 *            (flags bit 0: written with RWF_DSYNC / O_DSYNC, durable at once)
 *   TRUNC    the size became offset (old data = the bytes cut off when it shrank)
 *   SYNC     fsync / fdatasync of the inode: its changes so far are durable
 *   CREATE   the file did not exist before this open
 *   RENAME   path became the target (second path in the data field); a target that existed
 *            was first saved as <target>.plsave.<n> (offset = n, flags bit 1, length = the
 *            replaced file's inode)
 *   UNLINK   the file was moved to <path>.plsave.<n> instead (offset = n)
 *   DIRSYNC  fsync of a directory: its entries (creates, renames, unlinks) are durable
 *   MAP      a shared writable mapping of length bytes at offset (the zone table of a zoned
 *            namespace): old data = the range's bytes when it was mapped
 *   MSYNC    msync(MS_SYNC) of such a mapping: old data = its bytes as the call began, all
 *            durable once it returned (stores to a mapping reach the file at any moment, so
 *            a power cut leaves each page as the last MSYNC (or MAP) saw it or as it is now)
 * The journal itself is not watched: it is the record of what happened, kept in the page
 * cache like any file (the harness kills processes, the machine stays up).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum { PL_WRITE = 1, PL_TRUNC, PL_SYNC, PL_CREATE, PL_RENAME, PL_UNLINK, PL_DIRSYNC, PL_MAP,
       PL_MSYNC };

struct pl_rec {
	uint32_t type, plen;
	uint64_t ino, off, len, old_size;
	uint32_t flags, dlen;
};

#define MAX_FD 4096

/* recursive: the shim itself calls close() and friends while holding it */
static pthread_mutex_t pl_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int jfd = -2;           /* -2: not set up yet, -1: off */
static char watch[PATH_MAX];
static size_t watch_len;
static char *fd_path[MAX_FD];  /* watched descriptors: their absolute path */
static unsigned long save_seq;

#define REAL(ret, name, ...)                                           \
	static ret (*real_##name)(__VA_ARGS__);                        \
	if (!real_##name)                                              \
		real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static void pl_setup(void)
{
	if (jfd != -2)
		return;
	const char *j = getenv("UNVME_POWERLOSS_JOURNAL"), *d = getenv("UNVME_POWERLOSS_DIR");
	jfd = -1;
	if (!j || !d || !realpath(d, watch))
		return;
	watch_len = strlen(watch);
	REAL(int, open, const char *, int, ...);
	jfd = real_open(j, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	save_seq = (unsigned long)getpid() << 20;
}

static bool watched(const char *abs)
{
	return jfd >= 0 && !strncmp(abs, watch, watch_len) &&
	       (abs[watch_len] == '/' || abs[watch_len] == 0);
}

/* Absolute form of path (the file may not exist yet: its directory does). */
static bool abs_path(const char *path, char *out)
{
	if (realpath(path, out))
		return true;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = path;
	if (slash) {
		*slash = 0;
		base = slash + 1;
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	char rdir[PATH_MAX];
	if (!realpath(dir[0] ? dir : "/", rdir))
		return false;
	return snprintf(out, PATH_MAX, "%s/%s", rdir, base) < PATH_MAX;
}

static void emit(const struct pl_rec *r, const char *path, const void *data)
{
	struct iovec v[3] = { { (void *)r, sizeof(*r) }, { (void *)path, r->plen },
			      { (void *)data, r->dlen } };
	REAL(ssize_t, writev, int, const struct iovec *, int);
	ssize_t n = real_writev(jfd, v, 3);
	if (n != (ssize_t)(sizeof(*r) + r->plen + r->dlen))
		abort(); /* a journal that misses a change would make every check meaningless */
}

static uint64_t ino_of(int fd, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return 0;
	if (size)
		*size = (uint64_t)st.st_size;
	return (uint64_t)st.st_ino;
}

/* Old bytes of [off, off + len) that exist (below the size), read through a second
 * descriptor (fd may be write-only). */
static void *old_bytes(int fd, uint64_t off, uint64_t len, uint64_t size, uint32_t *got)
{
	*got = 0;
	if (off >= size || !len)
		return NULL;
	if (off + len > size)
		len = size - off;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	REAL(int, open, const char *, int, ...);
	int rfd = real_open(proc, O_RDONLY | O_CLOEXEC);
	void *buf = malloc(len);
	if (rfd < 0 || !buf)
		abort();
	REAL(ssize_t, pread, int, void *, size_t, off_t);
	ssize_t n = real_pread(rfd, buf, len, (off_t)off);
	close(rfd);
	if (n != (ssize_t)len)
		abort();
	*got = (uint32_t)len;
	return buf;
}

/* Journals a write of len bytes at off on fd, before it happens. */
static void note_write(int fd, uint64_t off, uint64_t len, bool dsync)
{
	if (fd < 0 || fd >= MAX_FD || !fd_path[fd] || !len)
		return;
	uint64_t size = 0;
	struct pl_rec r = { .type = PL_WRITE, .ino = ino_of(fd, &size), .off = off, .len = len,
			    .flags = dsync };
	r.old_size = size;
	void *old = old_bytes(fd, off, len, size, &r.dlen);
	r.plen = (uint32_t)strlen(fd_path[fd]);
	emit(&r, fd_path[fd], old);
	free(old);
}

static void note_simple(uint32_t type, const char *path, uint64_t ino, uint64_t off,
			const void *data, uint32_t dlen, uint32_t flags)
{
	struct pl_rec r = { .type = type, .plen = (uint32_t)strlen(path), .ino = ino, .off = off,
			    .flags = flags, .dlen = dlen };
	emit(&r, path, data);
}

static void track(int fd, const char *path, bool existed, int flags)
{
	char abs[PATH_MAX];
	if (fd < 0 || fd >= MAX_FD || !abs_path(path, abs) || !watched(abs))
		return;
	free(fd_path[fd]);
	fd_path[fd] = strdup(abs);
	if (!existed)
		note_simple(PL_CREATE, abs, ino_of(fd, NULL), 0, NULL, 0, 0);
	if (existed && (flags & O_TRUNC)) {
		/* O_TRUNC already happened: the old bytes are gone. The harness's programs only
		 * truncate files they create (temporary copies): record the new size. */
		note_simple(PL_TRUNC, abs, ino_of(fd, NULL), 0, NULL, 0, 0);
	}
}

/* ---- the intercepted calls ---- */

static int do_open(int dirfd, const char *path, int flags, mode_t mode, bool at)
{
	pthread_mutex_lock(&pl_lock);
	pl_setup();
	bool existed = true;
	if (jfd >= 0 && (flags & O_CREAT))
		existed = faccessat(dirfd, path, F_OK, 0) == 0;
	int fd;
	if (at) {
		REAL(int, openat, int, const char *, int, ...);
		fd = real_openat(dirfd, path, flags, mode);
	} else {
		REAL(int, open, const char *, int, ...);
		fd = real_open(path, flags, mode);
	}
	int e = errno;
	if (fd >= 0 && jfd >= 0 && (flags & (O_WRONLY | O_RDWR)) && (at ? dirfd == AT_FDCWD || path[0] == '/' : true))
		track(fd, path, existed, flags);
	else if (fd >= 0 && jfd >= 0 && (flags & O_DIRECTORY))
		track(fd, path, true, 0);
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return do_open(AT_FDCWD, path, flags, mode, false);
}
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return do_open(dirfd, path, flags, mode, true);
}
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int close(int fd)
{
	REAL(int, close, int);
	pthread_mutex_lock(&pl_lock);
	if (fd >= 0 && fd < MAX_FD && fd_path[fd]) {
		free(fd_path[fd]);
		fd_path[fd] = NULL;
	}
	int r = real_close(fd);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}

static size_t iov_len(const struct iovec *v, int n)
{
	size_t t = 0;
	for (int i = 0; i < n; i++)
		t += v[i].iov_len;
	return t;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
	pthread_mutex_lock(&pl_lock);
	note_write(fd, (uint64_t)off, len, false);
	ssize_t n = real_pwrite(fd, buf, len, off);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return n;
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) __attribute__((alias("pwrite")));

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(ssize_t, write, int, const void *, size_t);
	if (fd < 0 || fd >= MAX_FD || !fd_path[fd])
		return real_write(fd, buf, len);
	pthread_mutex_lock(&pl_lock);
	uint64_t size = 0;
	off_t at = fcntl(fd, F_GETFL) & O_APPEND ? (ino_of(fd, &size), (off_t)size)
						  : lseek(fd, 0, SEEK_CUR);
	note_write(fd, (uint64_t)at, len, false);
	ssize_t n = real_write(fd, buf, len);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return n;
}

ssize_t pwritev(int fd, const struct iovec *v, int n, off_t off)
{
	REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
	pthread_mutex_lock(&pl_lock);
	note_write(fd, (uint64_t)off, iov_len(v, n), false);
	ssize_t r = real_pwritev(fd, v, n, off);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}
ssize_t pwritev64(int fd, const struct iovec *v, int n, off_t off) __attribute__((alias("pwritev")));

ssize_t pwritev2(int fd, const struct iovec *v, int n, off_t off, int flags)
{
	REAL(ssize_t, pwritev2, int, const struct iovec *, int, off_t, int);
	pthread_mutex_lock(&pl_lock);
	note_write(fd, (uint64_t)off, iov_len(v, n), (flags & (RWF_DSYNC | RWF_SYNC)) != 0);
	ssize_t r = real_pwritev2(fd, v, n, off, flags);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}
ssize_t pwritev64v2(int fd, const struct iovec *v, int n, off_t off, int flags)
	__attribute__((alias("pwritev2")));

int ftruncate(int fd, off_t len)
{
	REAL(int, ftruncate, int, off_t);
	pthread_mutex_lock(&pl_lock);
	if (fd >= 0 && fd < MAX_FD && fd_path[fd]) {
		uint64_t size = 0, ino = ino_of(fd, &size);
		uint32_t dlen = 0;
		void *old = (uint64_t)len < size ? old_bytes(fd, (uint64_t)len, size - (uint64_t)len,
							      size, &dlen) : NULL;
		struct pl_rec r = { .type = PL_TRUNC, .plen = (uint32_t)strlen(fd_path[fd]), .ino = ino,
				    .off = (uint64_t)len, .old_size = size, .dlen = dlen };
		emit(&r, fd_path[fd], old);
		free(old);
	}
	int ret = real_ftruncate(fd, len);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return ret;
}
int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

int fallocate(int fd, int mode, off_t off, off_t len)
{
	REAL(int, fallocate, int, int, off_t, off_t);
	pthread_mutex_lock(&pl_lock);
	/* punching a hole or zeroing a range changes the bytes like a write of zeroes; plain
	 * allocation (mode 0) changes no byte that can be read */
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		note_write(fd, (uint64_t)off, (uint64_t)len, false);
	int r = real_fallocate(fd, mode, off, len);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}
int fallocate64(int fd, int mode, off_t off, off_t len) __attribute__((alias("fallocate")));

static int do_sync(int fd, bool data_only)
{
	int r;
	if (data_only) {
		REAL(int, fdatasync, int);
		r = real_fdatasync(fd);
	} else {
		REAL(int, fsync, int);
		r = real_fsync(fd);
	}
	int e = errno;
	pthread_mutex_lock(&pl_lock);
	if (r == 0 && fd >= 0 && fd < MAX_FD && fd_path[fd] && !getenv("UNVME_POWERLOSS_LYING_SYNC")) {
		struct stat st;
		if (fstat(fd, &st) == 0)
			note_simple(S_ISDIR(st.st_mode) ? PL_DIRSYNC : PL_SYNC, fd_path[fd],
				    (uint64_t)st.st_ino, 0, NULL, 0, 0);
	}
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}

int fsync(int fd) { return do_sync(fd, false); }
int fdatasync(int fd) { return do_sync(fd, true); }

int rename(const char *from, const char *to)
{
	REAL(int, rename, const char *, const char *);
	REAL(int, link, const char *, const char *);
	pthread_mutex_lock(&pl_lock);
	pl_setup();
	char a[PATH_MAX], b[PATH_MAX];
	bool w = abs_path(from, a) && abs_path(to, b) && watched(a) && watched(b);
	unsigned long n = 0;
	uint32_t flags = 0;
	uint64_t replaced = 0;
	struct stat st;
	if (w && stat(b, &st) == 0) {
		replaced = (uint64_t)st.st_ino;
		/* keep the file the rename replaces, so that undoing the rename can bring it back */
		char save[PATH_MAX + 32];
		n = ++save_seq;
		snprintf(save, sizeof(save), "%s.plsave.%lu", b, n);
		if (real_link(b, save) == 0)
			flags = 2;
	}
	int r = real_rename(from, to);
	int e = errno;
	if (w && r == 0) {
		struct pl_rec rec = { .type = PL_RENAME, .plen = (uint32_t)strlen(a),
				      .ino = stat(b, &st) == 0 ? (uint64_t)st.st_ino : 0, .off = n,
				      .len = replaced, .flags = flags, .dlen = (uint32_t)strlen(b) };
		emit(&rec, a, b);
	}
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}

int unlink(const char *path)
{
	REAL(int, unlink, const char *);
	REAL(int, rename, const char *, const char *);
	pthread_mutex_lock(&pl_lock);
	pl_setup();
	char a[PATH_MAX];
	int r;
	if (abs_path(path, a) && watched(a) && access(a, F_OK) == 0) {
		char save[PATH_MAX + 32];
		unsigned long n = ++save_seq;
		snprintf(save, sizeof(save), "%s.plsave.%lu", a, n);
		struct stat st;
		uint64_t ino = stat(a, &st) == 0 ? (uint64_t)st.st_ino : 0;
		r = real_rename(a, save);
		if (r == 0)
			note_simple(PL_UNLINK, a, ino, n, NULL, 0, 0);
	} else {
		r = real_unlink(path);
	}
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}

/* ---- shared writable mappings of watched files ---- */

#define MAX_MAPS 64
static struct pl_map {
	void *addr;
	size_t len;
	uint64_t off, ino;
	char *path;
} maps[MAX_MAPS];

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap, void *, size_t, int, int, int, off_t);
	pthread_mutex_lock(&pl_lock);
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	int e = errno;
	if (p != MAP_FAILED && (flags & MAP_SHARED) && (prot & PROT_WRITE) && fd >= 0 &&
	    fd < MAX_FD && fd_path[fd]) {
		for (unsigned i = 0; i < MAX_MAPS; i++) {
			if (maps[i].addr)
				continue;
			uint64_t size = 0;
			struct pl_map *m = &maps[i];
			*m = (struct pl_map){ p, len, (uint64_t)off, ino_of(fd, &size), strdup(fd_path[fd]) };
			uint32_t got = 0;
			void *old = old_bytes(fd, (uint64_t)off, len, size, &got);
			struct pl_rec r = { .type = PL_MAP, .plen = (uint32_t)strlen(m->path), .ino = m->ino,
					    .off = m->off, .len = len, .old_size = size, .dlen = got };
			emit(&r, m->path, old);
			free(old);
			break;
		}
	}
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return p;
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

int munmap(void *addr, size_t len)
{
	REAL(int, munmap, void *, size_t);
	pthread_mutex_lock(&pl_lock);
	for (unsigned i = 0; i < MAX_MAPS; i++)
		if (maps[i].addr == addr) {
			free(maps[i].path);
			maps[i] = (struct pl_map){ 0 };
		}
	int r = real_munmap(addr, len);
	int e = errno;
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}

int msync(void *addr, size_t len, int flags)
{
	REAL(int, msync, void *, size_t, int);
	pthread_mutex_lock(&pl_lock);
	struct pl_map *m = NULL;
	for (unsigned i = 0; i < MAX_MAPS && !m; i++)
		if (maps[i].addr && (uint8_t *)addr >= (uint8_t *)maps[i].addr &&
		    (uint8_t *)addr < (uint8_t *)maps[i].addr + maps[i].len)
			m = &maps[i];
	/* what the mapping holds as the call begins is durable once it returns */
	void *snap = m && (flags & MS_SYNC) ? malloc(m->len) : NULL;
	if (snap)
		memcpy(snap, m->addr, m->len);
	int r = real_msync(addr, len, flags);
	int e = errno;
	if (snap && r == 0 && !getenv("UNVME_POWERLOSS_LYING_SYNC")) {
		struct pl_rec rec = { .type = PL_MSYNC, .plen = (uint32_t)strlen(m->path), .ino = m->ino,
				      .off = m->off, .len = m->len, .dlen = (uint32_t)m->len };
		emit(&rec, m->path, snap);
	}
	free(snap);
	pthread_mutex_unlock(&pl_lock);
	errno = e;
	return r;
}
