/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The durability spy (durability_spy.h): this file defines the C library's write and sync
 * entry points, so every call in the test process, the code under test included, comes here
 * first; each records what it did to which file and passes the call on to the next definition
 * (the C library, or a sanitizer's interceptor in front of it) found with dlsym(RTLD_NEXT).
 *
 * The build defines _FILE_OFFSET_BITS=64, under which glibc's headers turn pwrite into
 * pwrite64 and so on: the code under test calls the 64-bit names. This file undefines it so
 * that both spellings can be defined here, one forwarding to the other's real function.
 */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "durability_spy.h"

#define MAX_FILES 256

struct entry {
	dev_t dev;
	ino_t ino;
	struct durability_state st;
	unsigned unsynced_names; /* directories: entries renamed in since its last fsync */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry files[MAX_FILES];
static unsigned nfiles;
static atomic_bool armed;

/* The next definition of name: the C library's, or a sanitizer's interceptor of it. */
static void *next_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f) {
		fprintf(stderr, "durability_spy: no %s after this one: %s\n", name, dlerror());
		abort();
	}
	return f;
}

/* The real functions, resolved before main (the constructor below) so that threads of the
 * test only ever read these pointers. */
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);
static ssize_t (*real_pwritev64v2)(int, const struct iovec *, int, off64_t, int);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fallocate64)(int, int, off64_t, off64_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);

__attribute__((constructor)) static void resolve(void)
{
	if (real_write)
		return;
	real_pwrite = next_fn("pwrite");
	real_pwrite64 = next_fn("pwrite64");
	real_pwritev = next_fn("pwritev");
	real_pwritev64 = next_fn("pwritev64");
	real_pwritev2 = next_fn("pwritev2");
	real_pwritev64v2 = next_fn("pwritev64v2");
	real_fallocate = next_fn("fallocate");
	real_fallocate64 = next_fn("fallocate64");
	real_ftruncate = next_fn("ftruncate");
	real_ftruncate64 = next_fn("ftruncate64");
	real_fsync = next_fn("fsync");
	real_fdatasync = next_fn("fdatasync");
	real_rename = next_fn("rename");
	real_write = next_fn("write"); /* last: the guard above */
}

/* A call made before the constructor ran (another constructor's) resolves them itself. */
#define NEXT(name)                                                                      \
	if (!real_##name)                                                               \
	resolve()

/* The entry of the file st describes; the caller holds the lock. NULL when the table is full. */
static struct entry *entry_of(const struct stat *st)
{
	for (unsigned i = 0; i < nfiles; i++)
		if (files[i].dev == st->st_dev && files[i].ino == st->st_ino)
			return &files[i];
	if (nfiles == MAX_FILES)
		return NULL;
	struct entry *e = &files[nfiles++];
	memset(e, 0, sizeof(*e));
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	return e;
}

enum change { DATA, META, SYNC };

/* Records what a successful call did to fd's file; durable: the write carried its own sync. */
static void note(int fd, enum change what, uint64_t bytes, bool durable)
{
	if (!atomic_load(&armed))
		return;
	int saved = errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (what == SYNC && S_ISDIR(st.st_mode)))) {
		errno = saved;
		return;
	}
	if (what == DATA && !durable) {
		int fl = fcntl(fd, F_GETFL);
		durable = fl >= 0 && (fl & O_DSYNC); /* O_SYNC includes the O_DSYNC bit */
	}
	pthread_mutex_lock(&lock);
	struct entry *e = entry_of(&st);
	if (!e) {
		fprintf(stderr, "durability_spy: more than %d files\n", MAX_FILES);
		abort();
	}
	switch (what) {
	case DATA:
		if (durable)
			e->st.durable_writes++;
		else
			e->st.unsynced_bytes += bytes;
		break;
	case META:
		e->st.unsynced_meta++;
		break;
	case SYNC:
		e->st.unsynced_bytes = 0;
		e->st.unsynced_meta = 0;
		e->unsynced_names = 0;
		e->st.syncs++;
		break;
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
}

/* The directory that holds path (a copy: dirname may modify its argument). */
static int stat_dir_of(const char *path, struct stat *st)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	return stat(dirname(tmp), st);
}

void durability_spy_reset(void)
{
	pthread_mutex_lock(&lock);
	nfiles = 0;
	pthread_mutex_unlock(&lock);
	atomic_store(&armed, true);
}

void durability_spy_disarm(void)
{
	atomic_store(&armed, false);
}

/* A copy of what is known about the file st describes (zeroes for one never seen). */
static struct entry lookup(const struct stat *st)
{
	struct entry out = { 0 };
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nfiles; i++)
		if (files[i].dev == st->st_dev && files[i].ino == st->st_ino)
			out = files[i];
	pthread_mutex_unlock(&lock);
	return out;
}

struct durability_state durability_spy_file(const char *path)
{
	struct stat st;
	struct durability_state none = { 0 };
	return stat(path, &st) == 0 ? lookup(&st).st : none;
}

unsigned durability_spy_unsynced_names(const char *path)
{
	struct stat st;
	return stat_dir_of(path, &st) == 0 ? lookup(&st).unsynced_names : 0;
}

bool durability_spy_durable(const char *path)
{
	struct durability_state s = durability_spy_file(path);
	bool ok = s.unsynced_bytes == 0 && s.unsynced_meta == 0 &&
		  durability_spy_unsynced_names(path) == 0;
	if (!ok)
		fprintf(stderr, "  durability_spy: a power loss now would lose %llu bytes, %u size "
			"changes and %u names of %s\n", (unsigned long long)s.unsynced_bytes,
			s.unsynced_meta, durability_spy_unsynced_names(path), path);
	return ok;
}

/* ---- the interposed calls ---- */

static _Atomic bool fail_syncs, fail_truncates;
static _Atomic unsigned sync_calls;

/* A call that writes data (durable: it carried its own sync) or changes the file's size. */
#define DATA_CALL(ret, name, params, args, durable)                                     \
	ret name params                                                                 \
	{                                                                               \
		NEXT(name);                                                             \
		ret r = real_##name args;                                               \
		if (r > 0)                                                              \
			note(fd, DATA, (uint64_t)r, durable);                           \
		return r;                                                               \
	}
#define META_CALL(name, params, args, can_fail)                                         \
	int name params                                                                 \
	{                                                                               \
		NEXT(name);                                                             \
		if ((can_fail) && atomic_load(&fail_truncates)) {                      \
			errno = EIO;                                                    \
			return -1;                                                      \
		}                                                                       \
		int r = real_##name args;                                               \
		if (r == 0)                                                             \
			note(fd, META, 0, false);                                       \
		return r;                                                               \
	}
#define DSYNC(flags) (((flags) & (RWF_DSYNC | RWF_SYNC)) != 0)

DATA_CALL(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), false)
DATA_CALL(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), false)
DATA_CALL(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off),
	  false)
DATA_CALL(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),
	  (fd, iov, cnt, off), false)
DATA_CALL(ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off),
	  (fd, iov, cnt, off), false)
DATA_CALL(ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
	  (fd, iov, cnt, off, flags), DSYNC(flags))
DATA_CALL(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int flags),
	  (fd, iov, cnt, off, flags), DSYNC(flags))
META_CALL(fallocate, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len), false)
META_CALL(fallocate64, (int fd, int mode, off64_t off, off64_t len), (fd, mode, off, len), false)
META_CALL(ftruncate, (int fd, off_t len), (fd, len), true)
META_CALL(ftruncate64, (int fd, off64_t len), (fd, len), true)

void durability_spy_fail_syncs(bool on)
{
	atomic_store(&fail_syncs, on);
}

void durability_spy_fail_truncates(bool on)
{
	atomic_store(&fail_truncates, on);
}

unsigned durability_spy_sync_calls(void)
{
	return atomic_load(&sync_calls);
}

/* Counts a sync call; true when it is to fail (errno set). */
static bool sync_fails(void)
{
	atomic_fetch_add(&sync_calls, 1);
	if (!atomic_load(&fail_syncs))
		return false;
	errno = EIO;
	return true;
}

int fsync(int fd)
{
	NEXT(fsync);
	if (sync_fails())
		return -1;
	int r = real_fsync(fd);
	if (r == 0)
		note(fd, SYNC, 0, false);
	return r;
}

int fdatasync(int fd)
{
	NEXT(fdatasync);
	if (sync_fails())
		return -1;
	int r = real_fdatasync(fd);
	if (r == 0)
		note(fd, SYNC, 0, false);
	return r;
}

int rename(const char *from, const char *to)
{
	NEXT(rename);
	int r = real_rename(from, to);
	if (r != 0 || !atomic_load(&armed))
		return r;
	int saved = errno;
	struct stat st;
	if (stat_dir_of(to, &st) == 0) {
		pthread_mutex_lock(&lock);
		struct entry *e = entry_of(&st);
		if (e)
			e->unsynced_names++;
		pthread_mutex_unlock(&lock);
	}
	errno = saved;
	return r;
}
