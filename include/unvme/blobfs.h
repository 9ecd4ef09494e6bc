/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS: a file system on an NVMe block namespace, in user space, on the public driver API
 * (unvme.h) only. No kernel file system and no system call sits on the I/O path: reads and
 * writes go from the calling thread's own queue pair to the device.
 *
 * Format (docs/blobfs.md has the byte layout): a superblock (block 0, copy in the last block)
 * with magic, version, geometry and checksum; two checkpoint slots holding a checksummed
 * snapshot of all metadata; a circular metadata journal of checksummed transactions; then the
 * data area, allocated in clusters. Files are extent lists; directories hold names of up to
 * 255 bytes.
 *
 * Guarantees:
 *   - Every metadata change (create, mkdir, rename, unlink, rmdir, extend, truncate, setattr)
 *     is atomic. After a crash (kill -9, power loss) the next mount replays the journal by
 *     itself and finds the file system as it was after some prefix of the operations, which
 *     includes every operation completed before the last successful blobfs_fsync() or
 *     blobfs_sync() (any file's fsync commits all metadata changes made before it).
 *   - Data written to a file is durable once blobfs_fsync() on it (or blobfs_sync()) returns:
 *     the data is written, the device's volatile cache flushed (NVMe Flush), the metadata that
 *     reaches it (extents, size) committed, and flushed again. A file's size never covers
 *     blocks whose data did not reach the device (ordered mode): after a crash, a file is at
 *     most as long as its written data, and never shows another file's old data.
 *   - Without fsync, data and metadata are written back and committed in the background every
 *     commit_interval_ms (default 5 s).
 *   - One process mounts a namespace at a time (read-write); read-only mounts may share it.
 *
 * Threading: every function may be called from any thread. Each thread does its I/O on a
 * queue pair of its own, created at its first I/O and released when the thread exits or at
 * unmount. Reads and writes of different files take no common lock; the namespace (lookups,
 * create, rename, unlink) has a reader-writer lock, the cluster allocator and the journal
 * each a short mutex taken when a file grows or its metadata is logged. blobfs_unmount()
 * must not run while another thread is inside a call on the same file system. A file handle
 * may be used by several threads at once (its position for blobfs_read/write is shared).
 *
 * Return convention: 0 (or a byte count for read/write) on success, a negative errno on
 * failure. The calling thread's blobfs_errmsg() then says what went wrong in words, naming
 * the path or device. The error codes, everywhere:
 *   BLOBFS_ENOFS   (-EMEDIUMTYPE)  the namespace holds no BlobFS (no magic in block 0)
 *   BLOBFS_EBADSB  (-EUCLEAN)      the superblock or a checkpoint is corrupt (checksum, geometry);
 *                                  `unvme fsck --repair` restores it from its copy
 *   -EPROTONOSUPPORT               a BlobFS of a newer format version
 *   -EBUSY                         the namespace is mounted already (this or another process;
 *                                  the message names the pid), or a directory is in use
 *   -EEXIST                        mkfs over an existing BlobFS without force; create of a name
 *                                  that exists with O_EXCL; mkdir of an existing name
 *   -ENOENT                        a missing file or directory (or path component)
 *   -ENOTDIR / -EISDIR             a path component is not a directory / a directory where a
 *                                  file is needed
 *   -ENOTEMPTY                     rmdir, or rename over, a directory that has entries
 *   -ENAMETOOLONG                  a name longer than BLOBFS_NAME_MAX bytes (or a path longer
 *                                  than BLOBFS_PATH_MAX)
 *   -ENOSPC                        no free cluster, or the metadata no longer fits its checkpoint
 *                                  slot; nothing is half-done: the call changed nothing
 *   -EAGAIN                        blobfs_lock_file() on a file locked already
 *   -EROFS                         a change on a read-only mount
 *   -EINVAL                        a bad argument (flags, offset, option, mkfs geometry)
 *   -EBADF                         a write on a file opened read-only, or a read on write-only
 *   -EFBIG                         an offset past BLOBFS_FILE_MAX
 *   -EIO                           the device failed a command (its NVMe status is named in
 *                                  blobfs_errmsg()); dirty data stays cached for a retry
 *   -ENOMEM                        out of memory (including DMA memory for the cache)
 */
#ifndef UNVME_BLOBFS_H
#define UNVME_BLOBFS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "unvme.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BLOBFS_ENOFS (-EMEDIUMTYPE)
#define BLOBFS_EBADSB (-EUCLEAN)

#define BLOBFS_NAME_MAX 255u      /* bytes of one path component */
#define BLOBFS_PATH_MAX 4096u     /* bytes of a whole path, and of a symlink target */
#define BLOBFS_BLOCK_SIZE 4096u   /* the file system's block: metadata unit and I/O granule */
#define BLOBFS_FILE_MAX (1ull << 50)
#define BLOBFS_VERSION 2u         /* on-disk format version written by mkfs (1 is read too) */

/* ---- messages ---- */
/* Why the calling thread's last BlobFS call failed, "" if it did not. */
UNVME_API const char *blobfs_errmsg(void);
/* Short name of a BlobFS result: "no file system", "bad superblock", strerror() otherwise. */
UNVME_API const char *blobfs_strerror(int rc);

/* ---- mkfs ---- */
struct blobfs_mkfs_opts {
	size_t size;                 /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	uint32_t cluster_size;  /* allocation unit in bytes: power of two, 4 KiB..64 MiB, and a
	                           multiple of the LBA size (0: 4 KiB, doubled on namespaces
	                           over 1 TiB so that there are at most 2^28 clusters) */
	uint64_t journal_size;  /* bytes of the metadata journal (0: 1/64 of the device, 1..64 MiB) */
	uint64_t meta_size;     /* bytes of each of the two checkpoint slots, which bounds the
	                           metadata: about 300 bytes per file plus 24 per extent
	                           (0: 1/64 of the device, 256 KiB..256 MiB) */
	const char *label;      /* up to 31 bytes, may be NULL */
	bool force;             /* overwrite an existing BlobFS (else -EEXIST) */
	bool discard;           /* deallocate the data area (Dataset Management) */
};

/* Writes a new, empty file system on the namespace. The namespace must be an NVM namespace
 * of at least 8 MiB with 512-byte or 4 KiB blocks. Refuses (-EEXIST) a namespace holding a
 * BlobFS unless opts->force, and (-EBUSY) one that is mounted. opts may be NULL. */
UNVME_API int blobfs_mkfs(struct unvme_ns *ns, const struct blobfs_mkfs_opts *opts);

/* ---- mount ---- */
struct blobfs_opts {
	size_t size;                 /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	uint64_t cache_size;         /* bytes of the shared read/write cache (0: 256 MiB; at least 1 MiB) */
	uint32_t cache_unit;         /* bytes per cache buffer: power of two, 4..256 KiB (0: 64 KiB) */
	bool no_prefetch;            /* turn sequential readahead off ("prefetch control") */
	uint32_t prefetch_threshold; /* sequential bytes read before readahead starts (0: 128 KiB) */
	uint32_t prefetch_size;      /* bytes read ahead (0: 1 MiB) */
	bool no_retain;              /* evict cached data after it is read and at close, as the
	                                original BlobFS did (default: retain until LRU eviction) */
	bool direct_read;            /* every file bypasses the cache for reads */
	bool direct_write;           /* every file writes through to the device, bypassing the cache */
	uint32_t commit_interval_ms; /* background write-back and journal commit (0: 5000) */
	uint32_t writeback_chunk;    /* a file's dirty bytes that start a write-back (0: 4 MiB) */
	uint32_t queue_depth;        /* entries of each thread's queue pair (0: 128) */
	bool read_only;              /* mount read-only: replay the journal in memory, write nothing */
	bool format_if_empty;        /* run blobfs_mkfs() first when the namespace holds no BlobFS
	                                (BLOBFS_ENOFS only: never over a corrupt one) */
	/* Kill-safe writes ("the shadow"): a directory on tmpfs (say /dev/shm) where a read-write
	 * mount keeps a copy of every write (and truncate) to shadowed files until the flusher
	 * has written it back and committed it. A kill of the process then loses none of them:
	 * the next mount replays the copy, as ext4 keeps what sits in the page cache when a
	 * process dies. A power cut takes tmpfs with it (only fsync'ed data is promised then).
	 * NULL: off. Files are shadowed with blobfs_file_opts.shadow, or all with shadow_all. */
	const char *shadow_dir;
	uint64_t shadow_size;        /* bytes of each of the shadow's two halves: 64 KiB..1 GiB
	                                (0: 16 MiB) */
	bool shadow_all;             /* every file's writes are shadowed */
};

struct blobfs;
/* Mounts the file system on ns: checks the superblock, loads the newest valid checkpoint and
 * replays the journal (an unclean stop is repaired here), then takes the namespace's lock.
 * opts may be NULL for the defaults. The controller must stay open until blobfs_unmount(). */
UNVME_API int blobfs_mount(struct unvme_ns *ns, const struct blobfs_opts *opts, struct blobfs **out);
/* The same on a device id: opens the controller (namespace nsid, 0 = the first active one)
 * and closes it at unmount. */
UNVME_API int blobfs_mount_dev(const char *devid, uint32_t nsid, const struct blobfs_opts *opts,
			       struct blobfs **out);
/* Writes back every file, commits, writes a checkpoint (so the next mount replays nothing),
 * flushes, releases the lock and frees everything. Open files and directory handles are
 * closed. Returns the first error of the final write-back (the file system is released anyway). */
UNVME_API int blobfs_unmount(struct blobfs *fs);
/* Writes back every file and commits the journal: everything done so far is durable. */
UNVME_API int blobfs_sync(struct blobfs *fs);
/* Drops every clean cached buffer (blobfs_perf's "drop cache before reading"); dirty data is
 * written back first. */
UNVME_API int blobfs_drop_cache(struct blobfs *fs);
UNVME_API struct unvme_ns *blobfs_ns(const struct blobfs *fs);

struct blobfs_statfs {
	uint64_t block_size;      /* BLOBFS_BLOCK_SIZE */
	uint64_t cluster_size;
	uint64_t clusters;        /* data clusters in all */
	uint64_t free_clusters;   /* free now (reserved or not yet released ones excluded) */
	uint64_t files;           /* inodes in use, directories included */
	uint64_t meta_bytes;      /* size of the metadata snapshot now */
	uint64_t meta_capacity;   /* checkpoint slot size */
	uint64_t journal_size;
	char label[32];
	uint8_t uuid[16];
};
UNVME_API int blobfs_statfs(struct blobfs *fs, struct blobfs_statfs *out);

/* Counters since mount, for tools and tests. */
struct blobfs_stats {
	uint64_t cache_hits;        /* pages served from the cache */
	uint64_t cache_misses;      /* pages read from the device on demand */
	uint64_t prefetch_pages;    /* pages read ahead */
	uint64_t prefetch_hits;     /* pages read ahead and then read */
	uint64_t evictions;         /* cache buffers reused for other data */
	uint64_t dev_read_bytes;    /* bytes read from the device (all paths) */
	uint64_t dev_write_bytes;   /* bytes written to the device, data and metadata */
	uint64_t dev_reads, dev_writes, dev_flushes;
	uint64_t commits;           /* journal transactions written */
	uint64_t checkpoints;
	uint64_t replayed;          /* transactions replayed at mount */
	uint64_t shadow_replayed;   /* writes and truncates brought back from the shadow at mount */
	uint64_t cache_bytes;       /* DMA memory held by the cache now */
	uint64_t dirty_bytes;
	uint32_t qpairs;            /* per-thread queue pairs alive */
};
UNVME_API void blobfs_get_stats(struct blobfs *fs, struct blobfs_stats *out);

/* ---- files ----
 * flags: O_RDONLY, O_WRONLY or O_RDWR, with O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECT
 * (bypass the cache for this file's reads and writes) from <fcntl.h>; others are ignored.
 * mode: permission bits for O_CREAT (stored for FUSE; BlobFS itself does not check them).
 * Paths are absolute or relative to the root, '/' separated; "." and ".." are refused. */
struct blobfs_file;
UNVME_API int blobfs_open(struct blobfs *fs, const char *path, int flags, uint32_t mode,
			  struct blobfs_file **out);
/* Closes the handle. An unlinked file's space is released with its last handle. Returns 0,
 * or the error of a write-back that failed (the handle is closed anyway). */
UNVME_API int blobfs_close(struct blobfs_file *f);
/* Reads at the handle's position / at off. Returns bytes read (0 at end of file, fewer than
 * len at the end) or a negative errno. */
UNVME_API ssize_t blobfs_read(struct blobfs_file *f, void *buf, size_t len);
UNVME_API ssize_t blobfs_pread(struct blobfs_file *f, void *buf, size_t len, uint64_t off);
/* Writes at the handle's position (the end with O_APPEND) / at off. Returns len or a
 * negative errno (nothing written on failure). Writing past the end leaves a hole that
 * reads as zeros. */
UNVME_API ssize_t blobfs_write(struct blobfs_file *f, const void *buf, size_t len);
UNVME_API ssize_t blobfs_pwrite(struct blobfs_file *f, const void *buf, size_t len, uint64_t off);
/* Appends at the end of the file, whatever the handle's flags. */
UNVME_API ssize_t blobfs_append(struct blobfs_file *f, const void *buf, size_t len);
/* Moves the position (SEEK_SET, SEEK_CUR, SEEK_END); returns the new position. */
UNVME_API int64_t blobfs_seek(struct blobfs_file *f, int64_t off, int whence);
UNVME_API int blobfs_ftruncate(struct blobfs_file *f, uint64_t size);
UNVME_API int blobfs_truncate(struct blobfs *fs, const char *path, uint64_t size);
/* Makes the file's data and all metadata changes so far durable (see Guarantees). On a
 * directory handle it commits the metadata. */
UNVME_API int blobfs_fsync(struct blobfs_file *f);
/* fallocate(2) on a file, with Linux's mode bits and errors. 0: clusters for [off, off+len)
 * (zeros where they were holes) so later writes there cannot fail with -ENOSPC, the size
 * extended to off+len; KEEP_SIZE: the size stays (clusters past the end are preallocation,
 * kept while the file is open, not across a remount); PUNCH_HOLE (with KEEP_SIZE): the
 * range reads as zeros and its whole clusters are freed; ZERO_RANGE: the range reads as
 * zeros and has clusters. Other modes: -EOPNOTSUPP; PUNCH_HOLE and ZERO_RANGE need format
 * version 2. */
#define BLOBFS_FALLOC_KEEP_SIZE 0x01u  /* FALLOC_FL_KEEP_SIZE */
#define BLOBFS_FALLOC_PUNCH_HOLE 0x02u /* FALLOC_FL_PUNCH_HOLE */
#define BLOBFS_FALLOC_ZERO_RANGE 0x10u /* FALLOC_FL_ZERO_RANGE */
UNVME_API int blobfs_fallocate(struct blobfs_file *f, uint32_t mode, uint64_t off, uint64_t len);

/* Per-file cache controls; a field left 0 / false keeps the file system's setting. */
struct blobfs_file_opts {
	size_t size;                 /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	int prefetch;                /* 1 on, -1 off, 0 the mount's */
	uint32_t prefetch_threshold;
	uint32_t prefetch_size;
	int retain;                  /* 1 retain, -1 evict after read and close, 0 the mount's */
	int direct_read;             /* 1 bypass the cache for reads, -1 use it, 0 the mount's */
	int direct_write;
	int shadow;                  /* 1: this file's writes (any handle's, from now on) go to the
	                                mount's shadow (blobfs_opts.shadow_dir) */
};
UNVME_API int blobfs_file_set_opts(struct blobfs_file *f, const struct blobfs_file_opts *o);

/* ---- metadata ---- */
/* FIFO, character and block devices and sockets (format version 2) hold no data: BlobFS
 * keeps their name, attributes and device number; FUSE's kernel side gives them meaning. */
enum blobfs_type {
	BLOBFS_TYPE_FILE = 1, BLOBFS_TYPE_DIR = 2, BLOBFS_TYPE_SYMLINK = 3, BLOBFS_TYPE_FIFO = 4,
	BLOBFS_TYPE_CHR = 5, BLOBFS_TYPE_BLK = 6, BLOBFS_TYPE_SOCK = 7,
};

struct blobfs_stat {
	uint64_t ino;
	enum blobfs_type type;
	uint32_t mode;      /* permission bits */
	uint32_t uid, gid;
	uint32_t nlink;     /* 1 for files, 2 + subdirectories for directories */
	uint64_t size;      /* bytes (a symlink: its target's length; a directory: entries) */
	uint64_t blocks;    /* BLOBFS_BLOCK_SIZE blocks allocated */
	int64_t atime_ns, mtime_ns, ctime_ns;   /* nanoseconds since the epoch */
	uint64_t rdev;      /* character and block devices: the device number (makedev) */
};
UNVME_API int blobfs_stat(struct blobfs *fs, const char *path, struct blobfs_stat *st);
/* lstat semantics: a symlink is described, not followed. BlobFS never follows symlinks
 * itself; they exist for FUSE, which resolves them in the kernel. */
UNVME_API int blobfs_fstat(struct blobfs_file *f, struct blobfs_stat *st);

/* Which fields of struct blobfs_stat blobfs_setattr() applies. */
#define BLOBFS_SET_MODE 0x1u
#define BLOBFS_SET_UID 0x2u
#define BLOBFS_SET_GID 0x4u
#define BLOBFS_SET_ATIME 0x8u
#define BLOBFS_SET_MTIME 0x10u
UNVME_API int blobfs_setattr(struct blobfs *fs, const char *path, const struct blobfs_stat *st,
			     uint32_t mask);
/* The same through a handle (also works on an unlinked file). */
UNVME_API int blobfs_fsetattr(struct blobfs_file *f, const struct blobfs_stat *st, uint32_t mask);

/* Renames atomically; an existing target (a file, or an empty directory when the source is
 * one) is replaced in the same step. flags: BLOBFS_RENAME_NOREPLACE fails with -EEXIST
 * instead. Moving a directory into itself is -EINVAL. */
#define BLOBFS_RENAME_NOREPLACE 0x1u
UNVME_API int blobfs_rename(struct blobfs *fs, const char *from, const char *to, uint32_t flags);
UNVME_API int blobfs_unlink(struct blobfs *fs, const char *path);
UNVME_API int blobfs_mkdir(struct blobfs *fs, const char *path, uint32_t mode);
UNVME_API int blobfs_rmdir(struct blobfs *fs, const char *path);
UNVME_API int blobfs_symlink(struct blobfs *fs, const char *target, const char *path);
/* Copies the target (NUL terminated, cut to len-1) and returns its full length. */
UNVME_API ssize_t blobfs_readlink(struct blobfs *fs, const char *path, char *buf, size_t len);

/* Directory listing: a snapshot of the entries taken at opendir, sorted by name. */
struct blobfs_dir;
struct blobfs_dirent {
	char name[BLOBFS_NAME_MAX + 1];
	uint64_t ino;
	enum blobfs_type type;
};
UNVME_API int blobfs_opendir(struct blobfs *fs, const char *path, struct blobfs_dir **out);
/* 1 and the next entry, 0 at the end. */
UNVME_API int blobfs_readdir(struct blobfs_dir *d, struct blobfs_dirent *ent);
UNVME_API void blobfs_closedir(struct blobfs_dir *d);

/* Makes the namespace changes made so far durable (one journal commit), without writing
 * back file data: what fsync of a directory needs. blobfs_sync() does both. */
UNVME_API int blobfs_commit(struct blobfs *fs);

/* ---- inode handles ----
 * For callers that hold on to inodes rather than paths (a FUSE low-level server): a handle
 * is a counted reference that stays valid while its name changes or goes (unlink, rename
 * over), as an open file does on any POSIX file system; an unlinked inode's space is
 * released with its last reference. Names are single components (no '/'). Every function
 * takes ns_lock the way its path-based twin does. */
struct blobfs_inode;
/* A new reference to the root directory. */
UNVME_API struct blobfs_inode *blobfs_root(struct blobfs *fs);
/* Looks name up in directory dir: *out gets a new reference, st (may be NULL) its stat. */
UNVME_API int blobfs_lookup(struct blobfs *fs, struct blobfs_inode *dir, const char *name,
			    struct blobfs_inode **out, struct blobfs_stat *st);
/* Drops n references. */
UNVME_API void blobfs_inode_put(struct blobfs *fs, struct blobfs_inode *in, uint64_t n);
UNVME_API int blobfs_inode_stat(struct blobfs *fs, struct blobfs_inode *in, struct blobfs_stat *st);
/* setattr by handle; BLOBFS_SET_SIZE truncates (files only). */
#define BLOBFS_SET_SIZE 0x20u
UNVME_API int blobfs_inode_setattr(struct blobfs *fs, struct blobfs_inode *in,
				   const struct blobfs_stat *st, uint32_t mask);
/* What blobfs_make_at creates: type, permission bits, owner, and for a symlink its target,
 * for a device its number. */
struct blobfs_node {
	enum blobfs_type type;
	uint32_t mode, uid, gid;
	uint64_t rdev;
	const char *target;
};
/* Creates name in dir (any type; -EEXIST if it exists): *out (may be NULL) gets a new
 * reference, st (may be NULL) its stat. FIFOs, devices and sockets need format version 2
 * (-EOPNOTSUPP on a version 1 file system). */
UNVME_API int blobfs_make_at(struct blobfs *fs, struct blobfs_inode *dir, const char *name,
			     const struct blobfs_node *node, struct blobfs_inode **out,
			     struct blobfs_stat *st);
/* Opens name in dir as blobfs_open() would (O_CREAT, O_EXCL, O_TRUNC, with owner uid/gid
 * for a new file); *out (may be NULL) gets a reference to the inode. */
UNVME_API int blobfs_open_at(struct blobfs *fs, struct blobfs_inode *dir, const char *name,
			     int flags, uint32_t mode, uint32_t uid, uint32_t gid,
			     struct blobfs_file **file, struct blobfs_inode **out);
/* Opens an inode (a file) by handle, unlinked or not. */
UNVME_API int blobfs_open_inode(struct blobfs *fs, struct blobfs_inode *in, int flags,
				struct blobfs_file **file);
/* The inode a handle is open on (a new reference). */
UNVME_API struct blobfs_inode *blobfs_file_inode(struct blobfs_file *f);
/* A file without a name (O_TMPFILE): it lives while its handle is open and is never
 * written to the journal, so a crash leaves nothing of it. dir must be a directory. */
UNVME_API int blobfs_tmpfile_at(struct blobfs *fs, struct blobfs_inode *dir, int flags,
				uint32_t mode, uint32_t uid, uint32_t gid, struct blobfs_file **file);
/* unlink (dir false) or rmdir (dir true) of name in parent. */
UNVME_API int blobfs_remove_at(struct blobfs *fs, struct blobfs_inode *parent, const char *name,
			       bool dir);
UNVME_API int blobfs_rename_at(struct blobfs *fs, struct blobfs_inode *sdir, const char *sname,
			       struct blobfs_inode *ddir, const char *dname, uint32_t flags);
UNVME_API int blobfs_opendir_inode(struct blobfs *fs, struct blobfs_inode *in, struct blobfs_dir **out);
UNVME_API ssize_t blobfs_readlink_inode(struct blobfs *fs, struct blobfs_inode *in, char *buf,
					size_t len);

/* ---- lock files (RocksDB's LOCK) ----
 * Creates the file if missing and locks it for this mount: a second lock of the same file
 * fails with -EAGAIN until blobfs_unlock_file(). Other processes cannot mount the namespace
 * at all while it is mounted, so the lock covers them too. Unlock before blobfs_unmount():
 * unmount closes the file under a lock still held, and the lock must not be used after. */
struct blobfs_lock;
UNVME_API int blobfs_lock_file(struct blobfs *fs, const char *path, struct blobfs_lock **out);
UNVME_API int blobfs_unlock_file(struct blobfs_lock *l);

/* ---- fsck ---- */
#define BLOBFS_FSCK_REPAIR 0x1u   /* fix what can be fixed and write a new checkpoint */
#define BLOBFS_FSCK_VERBOSE 0x2u  /* list every file checked */

struct blobfs_fsck_result {
	uint32_t errors;        /* inconsistencies found (0: clean) */
	uint32_t repaired;      /* of those, fixed (with BLOBFS_FSCK_REPAIR) */
	uint32_t warnings;      /* harmless findings (leaked clusters, a torn last transaction) */
	uint64_t files, dirs, symlinks;
	uint64_t specials;      /* FIFOs, devices and sockets */
	uint64_t used_clusters, free_clusters;
	uint64_t replayed;      /* journal transactions that a mount would replay */
	uint64_t lost_transactions; /* whole transactions the replay cannot reach although they
	                           were written after the one it stops at (an error: that one had
	                           been acknowledged, so acknowledged changes are lost) */
	bool clean_unmount;     /* the last stop was an unmount (nothing to replay) */
};
/* Checks the file system on ns without mounting it (it must not be mounted read-write):
 * superblock and its copy, both checkpoints, the journal, every inode's extents (inside the
 * data area, no cluster used twice), the directory tree (every inode reachable once, names
 * valid and unique), and space accounting. Writes a report to out (may be NULL). Returns 0
 * when it ran (look at res->errors), or a negative errno when it could not check at all
 * (BLOBFS_ENOFS, -EBUSY, -EIO, ...). */
UNVME_API int blobfs_fsck(struct unvme_ns *ns, uint32_t flags, FILE *out,
			  struct blobfs_fsck_result *res);

#ifdef __cplusplus
}
#endif
#endif
