/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS internals shared by the files of lib/blobfs. One concept per file:
 *   errmsg.c      thread-local error message
 *   superblock.c  geometry, superblock encode/check, mkfs
 *   io.c          per-thread queue pairs and block I/O on them
 *   alloc.c       cluster bitmap allocator
 *   extent.c      a file's extent list
 *   inode.c       inode table, lifetime, directory entries
 *   path.c        path parsing and lookup
 *   record.c      journal records: encode, and apply to the namespace (runtime and replay)
 *   journal.c     transaction commit, deferred frees, replay
 *   checkpoint.c  metadata snapshot: write and load
 *   mount.c       mount, unmount, the namespace lock
 *   cache.c       shared cache buffers, CLOCK eviction, per-file unit tables
 *   space.c       offset-to-block mapping, cluster allocation for writes, zeroing
 *   readahead.c   sequential detection, the prefetch thread
 *   writeback.c   dirty data write-back, the flusher thread
 *   fileio.c      the buffered read and write paths
 *   directio.c    direct (cache-bypassing, zero-copy) reads and writes
 *   file.c        open/close/truncate/fsync and per-file options
 *   nsops.c       create, mkdir, rename, unlink, stat, readdir, symlink
 *   lockfile.c    lock files
 *   fsck.c        the checker
 *   shadow.c      copies of unsynced writes outside the process (kill-safe RocksDB WALs)
 *
 * Lock order (outer first): fs->ns_lock (rwlock) -> inode->rw (rwlock) -> inode->cache_lock
 * -> unit->lock; fs->commit_lock -> fs->jlock -> fs->alloc.lock. Namespace structure
 * (directories, the inode table, names, `linked`) and every inode's logged state change only
 * with jlock held, so a checkpoint taken under jlock is exactly the state after the records
 * appended so far. The cache evictor takes unit->lock then only *tries* cache_lock.
 */
#ifndef BLOBFS_BFS_H
#define BLOBFS_BFS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "unvme/blobfs.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "BlobFS writes its structures as they are in memory: a little-endian host is required"
#endif

#define BFS_BLOCK BLOBFS_BLOCK_SIZE

/* Thread-locals read on every call use the initial-exec model in the RocksDB plugin (loaded
 * with LD_PRELOAD at start-up, where it is allowed: a plain load instead of a
 * __tls_get_addr call), and the default model in libunvme.so: a shared library with
 * initial-exec TLS cannot be dlopen'ed (Python's ctypes, other languages' FFI), glibc
 * refusing it with "cannot allocate memory in static TLS block". */
#ifdef BFS_TLS_INITIAL_EXEC
#define BFS_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define BFS_TLS_MODEL
#endif
#define BFS_PAGE_SHIFT 12
#define BFS_PAGE (1u << BFS_PAGE_SHIFT)
#define BFS_UNLOGGED 0x1u /* extent flag: allocated in memory, no MAP record yet */
#define BFS_TXN_MAX (1u << 20) /* bytes of one journal transaction, at most a quarter of the journal */

/* ---- errmsg.c ---- */
/* Sets the thread's message and returns rc, so `return bfs_err(-ENOENT, "...")` works. */
int bfs_err(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bfs_err_clear(void);
uint32_t bfs_crc(const void *buf, size_t len);
uint32_t bfs_crc_update(uint32_t crc, const void *buf, size_t len);
int64_t bfs_now_ns(void);

/* ---- superblock.c ---- */
struct bfs_geom {
	uint32_t lba_size;
	uint32_t lbas_per_block;
	uint32_t cluster_size;
	uint32_t blocks_per_cluster;
	uint64_t total_blocks;
	uint64_t ckpt[2];
	uint64_t ckpt_blocks;
	uint64_t jnl_start, jnl_blocks;
	uint64_t data_start;
	uint64_t nclusters;
};
/* Checks a superblock read from disk. 0, BLOBFS_ENOFS, BLOBFS_EBADSB or -EPROTONOSUPPORT,
 * with a message naming what is wrong. */
int bfs_sb_check(const struct bfs_sb_disk *sb, uint64_t ns_blocks, uint32_t lba_size);
void bfs_sb_geom(const struct bfs_sb_disk *sb, uint32_t lba_size, struct bfs_geom *g);
void bfs_sb_seal(struct bfs_sb_disk *sb);
/* Reads the superblock (block 0, or the copy when `backup`) into sb. */
struct bfs_qctx;
int bfs_sb_read(struct unvme_ns *ns, struct bfs_qctx *q, bool backup, struct bfs_sb_disk *sb);

/* ---- io.c: queue pairs and block I/O ---- */
struct bfs_qctx {
	struct blobfs *fs;          /* NULL for a standalone context (mkfs, fsck) */
	uint64_t mount_id;
	struct unvme_ns *ns;
	struct unvme_qpair *qp;
	pthread_mutex_t *shared;    /* the queue pair is shared: hold this around its use */
	uint8_t *bounce;            /* DMA buffer of BFS_BOUNCE bytes, allocated on first use */
	struct bfs_qctx *fs_next, *fs_prev; /* fs->ctxs */
	struct bfs_qctx *t_next;    /* the thread's contexts */
	_Atomic bool detached;      /* unmount released it; the thread frees the shell */
};
#define BFS_BOUNCE (1u << 20)

/* An asynchronous batch of commands on one context: submit, then wait for all. */
struct bfs_batch {
	struct bfs_qctx *q;
	uint32_t inflight;
	int status;                 /* first failure: NVMe status > 0 or -errno */
	uint64_t failed_blk;        /* first block of the batch's first command */
};

/* The calling thread's context for fs (created at first use). Never NULL unless -ENOMEM /
 * no queue can be created and no shared one exists (then *rc says why). */
struct bfs_qctx *bfs_qctx_get(struct blobfs *fs, int *rc);
/* Standalone context over a queue pair the caller created (mkfs, fsck, mount before fs). */
void bfs_qctx_init_standalone(struct bfs_qctx *q, struct unvme_ns *ns, struct unvme_qpair *qp);
void bfs_qctx_fini_standalone(struct bfs_qctx *q);
void bfs_qctx_release_all(struct blobfs *fs);
uint8_t *bfs_qctx_bounce(struct bfs_qctx *q);
void bfs_io_lock(struct bfs_qctx *q);
void bfs_io_unlock(struct bfs_qctx *q);

void bfs_batch_init(struct bfs_batch *b, struct bfs_qctx *q);
/* Queue a read/write of nblk blocks at block blk from/into DMA buffer buf (split at the
 * controller's transfer limit). Polls when the queue is full. */
int bfs_batch_read(struct bfs_batch *b, void *buf, uint64_t blk, uint64_t nblk);
int bfs_batch_write(struct bfs_batch *b, const void *buf, uint64_t blk, uint64_t nblk);
/* Waits for everything; returns 0, or -EIO (status named in the message) / -errno. */
int bfs_batch_wait(struct bfs_batch *b, const char *what);
int bfs_io_read(struct bfs_qctx *q, void *buf, uint64_t blk, uint64_t nblk, const char *what);
int bfs_io_write(struct bfs_qctx *q, const void *buf, uint64_t blk, uint64_t nblk, const char *what);
int bfs_io_write_fua(struct bfs_qctx *q, const void *buf, uint64_t blk, uint64_t nblk, const char *what);
int bfs_io_flush(struct bfs_qctx *q);
int bfs_io_zero(struct bfs_qctx *q, uint64_t blk, uint64_t nblk);
int bfs_io_discard(struct bfs_qctx *q, uint64_t blk, uint64_t nblk);

/* ---- alloc.c ---- */
struct bfs_alloc {
	pthread_mutex_t lock;
	uint64_t *bits;
	uint64_t n;
	uint64_t nfree;
	uint64_t hint;
};
int bfs_alloc_init(struct bfs_alloc *a, uint64_t nclusters);
void bfs_alloc_fini(struct bfs_alloc *a);
/* Marks [c, c+n) used at load time; false if a cluster is out of range or used already. */
bool bfs_alloc_mark(struct bfs_alloc *a, uint64_t c, uint64_t n);
/* Takes up to want (at least 1) contiguous clusters, preferably starting at goal. Returns the
 * count (0: none free) and the first cluster in *out. */
uint64_t bfs_alloc_take(struct bfs_alloc *a, uint64_t goal, uint64_t want, uint64_t *out);
void bfs_alloc_free(struct bfs_alloc *a, uint64_t c, uint64_t n);
uint64_t bfs_alloc_nfree(struct bfs_alloc *a);
bool bfs_alloc_is_used(struct bfs_alloc *a, uint64_t c);

/* ---- extent.c ---- */
struct bfs_extent {
	uint64_t lclu, pclu;
	uint32_t count;
	uint32_t flags;             /* BFS_UNLOGGED */
};
struct bfs_extents {
	struct bfs_extent *e;
	uint32_t n, cap;
};
/* Physical cluster of file cluster lclu, with the number of clusters that follow
 * contiguously in the same extent (*run) and its flags. False for a hole. */
bool bfs_ext_lookup(const struct bfs_extents *x, uint64_t lclu, uint64_t *pclu, uint64_t *run,
		    uint32_t *flags);
/* Adds a mapping for clusters that are holes now; merges with neighbours of equal flags. */
int bfs_ext_add(struct bfs_extents *x, uint64_t lclu, uint64_t pclu, uint32_t count, uint32_t flags);
/* Removes every mapping at or after lclu; calls fn for each removed physical range. */
void bfs_ext_trim(struct bfs_extents *x, uint64_t lclu,
		  void (*fn)(void *arg, uint64_t pclu, uint32_t count, uint32_t flags), void *arg);
/* Removes the mappings inside [lclu, lclu+count) whose flags include `flags` (splitting
 * extents at the edges), calling fn for each removed range. */
int bfs_ext_punch(struct bfs_extents *x, uint64_t lclu, uint64_t count, uint32_t flags,
		  void (*fn)(void *arg, uint64_t pclu, uint32_t count, uint32_t flags), void *arg);
/* Clears BFS_UNLOGGED on [lclu, lclu+count) (splitting extents), calling fn per range. */
int bfs_ext_set_logged(struct bfs_extents *x, uint64_t lclu, uint64_t count,
		       void (*fn)(void *arg, const struct bfs_extent *e), void *arg);
void bfs_ext_free(struct bfs_extents *x);
uint64_t bfs_ext_clusters(const struct bfs_extents *x, uint32_t flags_mask, uint32_t flags);
/* Number of extents whose flags match. */
uint64_t bfs_ext_clusters_count(const struct bfs_extents *x, uint32_t flags_mask, uint32_t flags);

/* ---- inodes ---- */
struct bfs_unit;
struct bfs_umap {                /* unit index -> cache unit, open addressing */
	uint64_t *keys;
	struct bfs_unit **vals;
	uint32_t cap, n;
};

struct bfs_dirent_mem {
	struct bfs_dirent_mem *next; /* hash chain */
	struct bfs_inode *inode;
	uint32_t hash;
	uint16_t len;
	char name[];
};
struct bfs_dirtab {
	struct bfs_dirent_mem **b;
	uint32_t nb, n;
	uint32_t nsubdirs;
};

struct bfs_inode {
	uint64_t ino;
	uint8_t type;                /* enum blobfs_type */
	/* namespace: change under ns_lock (write) + jlock */
	struct bfs_inode *parent;
	char *name;
	uint16_t name_len;
	bool linked;
	struct bfs_dirtab dir;       /* directories */
	char *link;                  /* symlinks */
	struct bfs_inode *hnext;     /* inode table chain */
	/* attributes: under rw (write) or ns_lock+jlock; read them under either */
	uint32_t mode, uid, gid;
	uint64_t rdev;               /* character and block devices */
	_Atomic int64_t atime_ns, mtime_ns, ctime_ns;
	_Atomic uint32_t refs;       /* link + open handles + transient users */
	uint32_t nopen;              /* under fs->files_lock */
	bool lock_held;              /* lock file, under fs->files_lock */
	/* data: under rw */
	pthread_rwlock_t rw;
	_Atomic uint64_t size;
	struct bfs_extents ext;      /* changes need rw (write) and jlock; reads either */
	uint64_t last_pclu_end;      /* allocation goal for appends */
	/* logged state: under jlock (and rw) */
	uint64_t logged_size;
	int64_t logged_mtime;
	uint64_t meta_est;           /* its share of fs->meta_bytes now (jlock) */
	/* cache: under cache_lock */
	pthread_mutex_t cache_lock;
	pthread_cond_t cache_cv;
	struct bfs_umap units;
	uint64_t dirty_pages;
	_Atomic bool on_dirty_list;  /* set/cleared under fs->dirty_lock and rw (write) */
	struct bfs_inode *dnext, *dprev;
	struct bfs_inode *onext, *oprev; /* fs->orphans (under jlock) */
	bool orphan;
	bool reclaimed;              /* an orphan whose clusters went back (files_lock+jlock) */
	_Atomic bool shadowed;       /* its writes go to the shadow (set once, never cleared) */
};

struct bfs_inode *bfs_inode_new(struct blobfs *fs, uint64_t ino, uint8_t type);
/* Frees an inode that is in no table and has no users (its units must be gone). */
void bfs_inode_destroy(struct blobfs *fs, struct bfs_inode *in);
void bfs_inode_ref(struct bfs_inode *in);
/* Drops a reference; the last one of an unlinked inode releases its clusters and cache. */
void bfs_inode_unref(struct blobfs *fs, struct bfs_inode *in);
/* Releases an unlinked inode whose last reference is gone. */
void bfs_inode_release(struct blobfs *fs, struct bfs_inode *in);
/* Removed files that nobody has open give their clusters back now (as statfs counts them
 * free already): called by a write short of space, before its commit. FUSE's kernel side
 * holds such an inode until it forgets it, which may come late; the inode lives on for that
 * reference but can no longer be opened. Skips an inode whose rw is held. */
void bfs_orphans_reclaim(struct blobfs *fs);
struct bfs_inode *bfs_itable_find(struct blobfs *fs, uint64_t ino);
int bfs_itable_insert(struct blobfs *fs, struct bfs_inode *in);
void bfs_itable_remove(struct blobfs *fs, struct bfs_inode *in);
/* Calls fn for every inode in the table (caller holds jlock or ns_lock). */
void bfs_itable_each(struct blobfs *fs, void (*fn)(void *arg, struct bfs_inode *in), void *arg);
/* Bytes the inode takes in a checkpoint: its record, name, target and logged extents. */
uint64_t bfs_inode_meta_est(const struct bfs_inode *in);
/* Brings fs->meta_bytes up to date with in (0 when unlinked); jlock held. */
void bfs_meta_update(struct blobfs *fs, struct bfs_inode *in);

uint32_t bfs_name_hash(const char *name, size_t len);
struct bfs_inode *bfs_dir_find(const struct bfs_inode *dir, const char *name, size_t len);
int bfs_dir_add(struct bfs_inode *dir, const char *name, size_t len, struct bfs_inode *child);
struct bfs_inode *bfs_dir_remove(struct bfs_inode *dir, const char *name, size_t len);
void bfs_dir_free(struct bfs_inode *dir);
void bfs_dir_each(struct bfs_inode *dir, void (*fn)(void *arg, const char *name, size_t len,
						       struct bfs_inode *child), void *arg);

/* ---- path.c ---- */
struct bfs_path {
	struct bfs_inode *parent;    /* the directory that holds (or would hold) the last name */
	struct bfs_inode *inode;     /* the last component, NULL when missing */
	const char *name;            /* last component (points into the path) */
	size_t name_len;
};
/* Resolves path under ns_lock (either mode). The root resolves to parent = NULL. */
int bfs_path_resolve(struct blobfs *fs, const char *path, struct bfs_path *out);
int bfs_name_check(const char *name, size_t len);

/* ---- record.c ---- */
struct bfs_rec {
	enum bfs_rec_type type;
	uint64_t ino, parent, parent2, rdev;
	uint64_t size, lclu, pclu;
	uint32_t count, mode, uid, gid, mask;
	uint8_t ftype;
	int64_t atime, mtime, ctime;
	const char *name, *name2, *link;
	uint16_t name_len, name2_len;
	uint32_t link_len;
};
/* Bytes rec takes in the journal. */
size_t bfs_rec_size(const struct bfs_rec *r);
size_t bfs_rec_encode(const struct bfs_rec *r, uint8_t *out);
/* Decodes one record at p (at most avail bytes); returns its length or 0 if malformed. */
size_t bfs_rec_decode(const uint8_t *p, size_t avail, struct bfs_rec *r);
/* Applies a namespace record (CREATE, UNLINK, RENAME, SETATTR) to the in-memory tree. At
 * replay (runtime = false) an unlinked inode goes at once; at runtime *dropped gets it and
 * the caller drops its entry reference after releasing jlock. Returns 0 or a negative errno
 * naming an inconsistency (replay only). */
int bfs_rec_apply_ns(struct blobfs *fs, const struct bfs_rec *r, bool runtime,
		     struct bfs_inode **dropped);
/* Applies MAP, SETSIZE, TRUNCATE, PUNCH at replay. */
int bfs_rec_replay_data(struct blobfs *fs, const struct bfs_rec *r);

/* ---- journal.c ---- */
struct bfs_deferred {
	uint64_t pclu, count, seq;
};
struct bfs_jcut {                /* the end of an operation's records in the buffer */
	size_t len;
	uint32_t nrec;
};
struct bfs_journal {
	uint8_t *buf;                /* records not yet committed */
	size_t len, cap;
	uint32_t nrec;
	struct bfs_jcut *cuts;       /* where a transaction may end */
	size_t ncuts, capcuts;
	size_t txn_max;              /* record bytes per transaction (one operation may exceed it) */
	bool kicked;                 /* the flusher was woken for a full buffer */
	uint64_t seq;                /* the transaction the buffer will become */
	uint64_t head;               /* journal block where it will be written */
	uint64_t committed_seq;      /* last durable transaction */
	struct bfs_deferred *defer;  /* clusters freed by records not yet durable */
	size_t ndefer, capdefer;
	uint64_t deferred_clusters;  /* their sum */
	int64_t first_rec_ns;        /* when the oldest pending record was appended */
	uint32_t last_ckpt_slot;     /* slot of the newest checkpoint (0 A, 1 B) */
};
/* Appends a record (caller holds jlock). -ENOMEM only. */
int bfs_jnl_append(struct blobfs *fs, const struct bfs_rec *r);
/* The records appended so far form whole operations: a transaction may end here (caller
 * holds jlock; every path that appends calls it before releasing jlock). */
void bfs_jnl_op_done(struct blobfs *fs);
/* Frees clusters once the current transaction is durable (caller holds jlock). */
void bfs_jnl_defer_free(struct blobfs *fs, uint64_t pclu, uint64_t count);
/* Makes every record appended so far durable (group commit): Flush, transaction, Flush;
 * a checkpoint instead when the journal is full. */
int bfs_jnl_commit(struct blobfs *fs);
bool bfs_jnl_pending(struct blobfs *fs);
/* Writes a checkpoint now (folding pending records into it); clean marks an unmount. */
int bfs_jnl_checkpoint(struct blobfs *fs, bool clean);
/* What a replay found. */
struct bfs_replay {
	uint64_t count;              /* transactions applied */
	bool torn;                   /* the chain ended at an incomplete transaction */
	uint64_t torn_seq, torn_blk;
	uint64_t lost;               /* whole transactions newer than the chain's end: acknowledged
	                                work it cannot reach (damage, not a crash) */
	uint64_t lost_first, lost_last, lost_blk;
	uint64_t max_seq;            /* highest sequence number of a whole transaction seen */
};
/* Replays transactions after the loaded checkpoint, then scans the rest of the journal for
 * whole transactions the chain did not reach. */
int bfs_jnl_replay(struct blobfs *fs, struct bfs_qctx *q, struct bfs_replay *rp, FILE *report);
/* The commit DMA buffer, at least bytes long (commit_lock held, or mount). */
int bfs_jdma_reserve(struct blobfs *fs, size_t bytes);

/* ---- checkpoint.c ---- */
/* Serializes the logged state (caller holds jlock) into a malloc'ed payload. */
int bfs_ckpt_build(struct blobfs *fs, uint8_t **payload, size_t *len, uint64_t *ninodes);
int bfs_ckpt_write(struct blobfs *fs, struct bfs_qctx *q, uint32_t slot, uint64_t seq,
		   uint64_t jnl_head, const uint8_t *payload, size_t len, uint64_t ninodes, bool clean);
/* Loads the newest valid checkpoint into fs (tree, inodes, next_ino). */
int bfs_ckpt_load(struct blobfs *fs, struct bfs_qctx *q, struct bfs_ckpt_hdr *hdr_out,
		  uint32_t *slot_out, FILE *report);

/* ---- cache.c ---- */
struct bfs_unit {
	pthread_mutex_t lock;        /* owner/index changes; the evictor's entry point */
	struct bfs_inode *owner;     /* NULL: free or claimed */
	bool claimed;
	uint64_t index;
	uint8_t *buf;
	uint64_t valid, dirty, loading, ahead; /* page bitmaps, under owner->cache_lock */
	_Atomic uint32_t pins;
	_Atomic uint8_t ref;         /* CLOCK second chance */
};
struct bfs_cache {
	uint32_t unit_size, unit_pages, unit_shift;
	uint32_t max_units;
	struct bfs_unit *units;
	_Atomic uint32_t nalloc;     /* units with a buffer */
	_Atomic bool grow_failed;    /* DMA memory ran out: evict instead of growing */
	pthread_mutex_t grow_lock;
	uint8_t **chunks;
	uint32_t nchunks;
	_Atomic uint64_t hand;
	_Atomic uint64_t dirty_pages;
	uint64_t dirty_limit;        /* pages */
};
int bfs_cache_init(struct blobfs *fs);
void bfs_cache_fini(struct blobfs *fs);
/* A free unit for the caller (evicting a clean one). NULL: all buffers busy (-ENOMEM set). */
struct bfs_unit *bfs_cache_claim(struct blobfs *fs);
/* Returns a claimed unit that was not inserted. */
void bfs_cache_unclaim(struct bfs_unit *u);
/* The unit holding index of in, inserting a new one if absent; pinned. Caller holds
 * in->cache_lock; may drop and retake it to claim. NULL on -ENOMEM. */
struct bfs_unit *bfs_cache_get(struct blobfs *fs, struct bfs_inode *in, uint64_t index, bool create);
void bfs_cache_unpin(struct bfs_unit *u);
/* Removes a unit from its owner (cache_lock held, unit unpinned by others). */
void bfs_cache_drop(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u);
/* Drops every unit of in at or after unit index `from` (cache_lock held; waits for loads);
 * dirty ones are discarded. */
void bfs_cache_drop_from(struct blobfs *fs, struct bfs_inode *in, uint64_t from, bool clean_only);
void bfs_cache_mark_dirty(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u, uint64_t pages);
void bfs_cache_clear_dirty(struct blobfs *fs, struct bfs_inode *in, struct bfs_unit *u, uint64_t pages);
/* Units of in sorted by index (cache_lock held); caller frees the array. */
int bfs_cache_units_sorted(struct bfs_inode *in, struct bfs_unit ***out, uint32_t *n);

struct bfs_unit *bfs_umap_find(const struct bfs_umap *m, uint64_t key);
int bfs_umap_insert(struct bfs_umap *m, uint64_t key, struct bfs_unit *u);
void bfs_umap_remove(struct bfs_umap *m, uint64_t key);

/* ---- fileio.c ---- */
ssize_t bfs_read(struct blobfs_file *f, void *buf, size_t len, uint64_t off);
ssize_t bfs_write(struct blobfs_file *f, const void *buf, size_t len, uint64_t off, bool append);
/* Loads [off, off+len) of in into the cache (readahead); in->rw held for reading. */
int bfs_load_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		   uint64_t len, bool prefetch);
/* Zeroes the file's bytes in [from, to) that lie in mapped clusters (rw held for writing). */
int bfs_zero_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t from,
		   uint64_t to);
/* Device block of file offset off (page aligned) and how many bytes from there are
 * contiguous on the device (or a hole, *hole), at most max. Needs rw or jlock. */
uint64_t bfs_map_run(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t max,
		     uint64_t *blk, bool *hole);
/* Gives the holes in [off, end) clusters (rw held for writing), zeroing on the device what
 * must read as zero; size is the file's size before the write. *fresh_head / *fresh_tail:
 * the clusters of the first / last byte are new (their pages were never written). On
 * failure nothing stays allocated. */
int bfs_alloc_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		    uint64_t end, uint64_t size, bool *fresh_head, bool *fresh_tail);
/* The holes in [off, end) get clusters (fallocate): zeroed on the device as far as they lie
 * inside the file, whose size afterwards is size. */
int bfs_alloc_fill(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		   uint64_t end, uint64_t size);
/* Zeroes the bytes [from, to) of in (inside its size) through the cache, exactly (rw held
 * for writing). */
int bfs_zero_bytes(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t from,
		   uint64_t to);
/* Clusters [off, end) still needs, and whether the file system has them (-ENOSPC with a
 * message if not, after a commit has returned what deferred frees hold back). */
uint64_t bfs_holes_in(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t end);
int bfs_space_check(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t end);
/* An extent callback (arg: the file system): frees an unlogged range now, a logged one once
 * the current transaction is durable (jlock held). */
void bfs_free_range(void *arg, uint64_t pclu, uint32_t count, uint32_t flags);
/* Frees clusters of in from file cluster lclu on (rw held for writing): logged ones once the
 * next transaction is durable, unlogged ones now. Takes jlock. */
void bfs_free_from(struct blobfs *fs, struct bfs_inode *in, uint64_t lclu, bool locked_j);

/* ---- directio.c ---- */
ssize_t bfs_direct_read(struct blobfs_file *f, struct bfs_qctx *q, void *buf, size_t len, uint64_t off);
/* rw held for writing. */
ssize_t bfs_direct_write(struct blobfs_file *f, struct bfs_qctx *q, const void *buf, size_t len,
			 uint64_t off);

/* ---- readahead.c ---- */
struct bfs_ra {
	pthread_mutex_t lock;
	uint64_t last_start, last_end;
	uint64_t seq_bytes;
	uint64_t window_end;
};
int bfs_ra_start(struct blobfs *fs);
void bfs_ra_stop(struct blobfs *fs);
/* Notes a read of [off, off+len) on f and queues readahead when it is sequential enough. */
void bfs_ra_note(struct blobfs_file *f, uint64_t off, uint64_t len, uint64_t size);
/* Waits until the prefetch thread has nothing queued or running (drop_cache, tests). */
void bfs_ra_wait_idle(struct blobfs *fs);

/* ---- writeback.c ---- */
/* Writes back in's dirty pages and logs its new extents and size (rw held for writing). */
int bfs_writeback(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in);
/* Logs extents and size of in without writing (nothing dirty; rw held for writing). */
int bfs_log_inode(struct blobfs *fs, struct bfs_inode *in);
void bfs_dirty_list_add(struct blobfs *fs, struct bfs_inode *in);
void bfs_dirty_list_remove(struct blobfs *fs, struct bfs_inode *in);
/* Writes back every dirty inode. */
int bfs_writeback_all(struct blobfs *fs);
int bfs_flusher_start(struct blobfs *fs);
void bfs_flusher_stop(struct blobfs *fs);
void bfs_flusher_kick(struct blobfs *fs);
/* Blocks the caller while dirty data is over the limit (not holding any inode lock). */
void bfs_throttle(struct blobfs *fs);

/* ---- shadow.c ---- */
struct bfs_shadow;
struct bfs_shadow_slot {         /* space a writer reserved before taking the inode's lock */
	size_t bytes;
	bool sync;                   /* too large to copy: write back and commit instead */
};
/* At a read-write mount with opts.shadow_dir: replays a shadow a killed process left, then
 * starts this mount's. */
int bfs_shadow_open(struct blobfs *fs);
/* Unmount (durable: everything was written back and committed, so the file goes; else, as
 * after a crash, it stays for the next mount). */
void bfs_shadow_close(struct blobfs *fs, bool durable);
/* Before taking in->rw for a write or truncate of len bytes (nothing when in is not
 * shadowed); may wait for the flusher to make room. */
int bfs_shadow_reserve(struct blobfs *fs, struct bfs_inode *in, size_t len, struct bfs_shadow_slot *slot);
void bfs_shadow_unreserve(struct blobfs *fs, struct bfs_shadow_slot *slot);
/* rw held: the write just made (len bytes at off) goes to the shadow. */
int bfs_shadow_write(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in,
		     struct bfs_shadow_slot *slot, uint64_t off, const void *buf, size_t len);
void bfs_shadow_trunc(struct blobfs *fs, struct bfs_inode *in, struct bfs_shadow_slot *slot, uint64_t size);
/* The flusher's round: write back every file and commit (switching the shadow's halves
 * first and clearing the old one after). */
int bfs_shadow_cycle(struct blobfs *fs);

/* ---- file handles ---- */
struct blobfs_file {
	struct blobfs *fs;
	struct bfs_inode *in;
	int flags;
	pthread_mutex_t pos_lock;
	uint64_t pos;
	struct blobfs_file_opts o;
	struct bfs_ra ra;
	struct blobfs_file *next, *prev; /* fs->files */
};
bool bfs_file_direct_read(const struct blobfs_file *f);
bool bfs_file_direct_write(const struct blobfs_file *f);
bool bfs_file_retain(const struct blobfs_file *f);
int bfs_open_inode(struct blobfs *fs, struct bfs_inode *in, int flags, struct blobfs_file **out);

/* ---- nsops.c / file.c ---- */
/* Logs a namespace record and applies it (ns_lock held for writing); the buffer is rolled
 * back if it cannot be applied. *dropped (may be NULL) as for bfs_rec_apply_ns; it is
 * released here when NULL is passed. */
int bfs_ns_change(struct blobfs *fs, const struct bfs_rec *r, struct bfs_inode **dropped);
/* Creates p's last component (ns_lock held for writing); p->inode gets the new inode. */
int bfs_create(struct blobfs *fs, struct bfs_path *p, uint8_t type, uint32_t mode, const char *link);
int bfs_create_node(struct blobfs *fs, struct bfs_path *p, const struct blobfs_node *n);
/* Resolves name in directory dir like a path (ns_lock taken, for writing when write; not
 * held on failure). */
int bfs_at_begin(struct blobfs *fs, struct bfs_inode *dir, const char *name, bool write,
		 bool existing, struct bfs_path *p);
/* -EROFS / -EIO when the file system takes no changes. */
int bfs_check_writable(struct blobfs *fs);
int bfs_truncate_inode(struct blobfs *fs, struct bfs_inode *in, uint64_t size);
void bfs_fill_stat(struct blobfs *fs, struct bfs_inode *in, struct blobfs_stat *st);

/* ---- the file system ---- */
struct bfs_stats_atomic {
	_Atomic uint64_t cache_hits, cache_misses, prefetch_pages, prefetch_hits, evictions;
	_Atomic uint64_t dev_read_bytes, dev_write_bytes, dev_reads, dev_writes, dev_flushes;
	_Atomic uint64_t commits, checkpoints, replayed;
};

struct bfs_ra_req {
	struct bfs_inode *in;
	uint64_t off, len;
};

struct blobfs {
	struct unvme_ctrlr *own_ctrlr;   /* closed at unmount (blobfs_mount_dev) */
	struct unvme_ns *ns;
	struct bfs_geom g;
	struct bfs_sb_disk sb;
	struct blobfs_opts opts;
	uint64_t mount_id;
	bool read_only;
	uint32_t max_xfer_blocks;
	bool has_write_zeroes, has_discard;

	pthread_rwlock_t ns_lock;
	struct bfs_inode *root;
	struct bfs_inode **itab;
	uint64_t itab_n, itab_cap;
	uint64_t next_ino;
	_Atomic uint64_t meta_bytes;
	struct bfs_inode *orphans;        /* unlinked, still referenced (jlock) */

	pthread_mutex_t commit_lock;
	pthread_mutex_t jlock;
	struct bfs_journal j;
	uint8_t *jdma;                    /* DMA buffer for transactions and checkpoints */
	size_t jdma_cap;
	int jnl_error;                    /* a commit failed: refuse further changes */
	_Atomic uint64_t write_gen;       /* data writes completed */
	uint64_t flushed_gen;             /* write_gen covered by the last Flush (commit_lock) */

	struct bfs_alloc alloc;
	struct bfs_cache cache;

	pthread_mutex_t ctx_lock;
	struct bfs_qctx *ctxs;
	uint32_t nctx;
	struct unvme_qpair *shared_qp;    /* when the controller grants no more queues */
	pthread_mutex_t shared_lock;

	pthread_mutex_t files_lock;
	struct blobfs_file *files;

	pthread_mutex_t dirty_lock;
	pthread_cond_t dirty_cv;          /* throttled writers wait for the flusher */
	struct bfs_inode *dirty_head;

	pthread_t flusher;
	bool flusher_on, flusher_stop, flusher_kicked, flusher_ready;
	pthread_mutex_t flusher_lock;
	pthread_cond_t flusher_cv;

	pthread_t ra_thread;
	bool ra_on, ra_stop, ra_busy, ra_ready;
	pthread_mutex_t ra_lock;
	pthread_cond_t ra_cv;
	struct bfs_ra_req ra_q[64];
	uint32_t ra_head, ra_n;

	int lock_fd;
	char lock_path[256];

	_Atomic(struct bfs_shadow *) shadow; /* set once the replay is done (the flusher runs) */
	char shadow_path[512];
	uint64_t shadow_replayed;         /* entries applied at mount */

	struct bfs_stats_atomic st;
};

/* mount.c: the namespace lock. shared: read-only mount / fsck. */
int bfs_ns_lock(struct unvme_ns *ns, const uint8_t uuid[16], bool shared, int *fd, char *path,
		size_t pathlen);
void bfs_ns_unlock(int fd, const char *path);
/* Mounts without starting threads. With report (fsck): no lock, no allocation bitmap, and
 * sb (may be NULL) used instead of block 0. */
int bfs_mount_prepare(struct unvme_ns *ns, const struct blobfs_opts *opts, FILE *report,
		      const struct bfs_sb_disk *sb, struct blobfs **out, struct bfs_ckpt_hdr *hdr,
		      struct bfs_replay *rp);
void bfs_mount_abandon(struct blobfs *fs);
/* Test hook: drops the mount as a kill -9 would, writing nothing (handles are freed; dirty
 * data and uncommitted records are lost). */
void bfs_simulate_crash(struct blobfs *fs);
/* Standalone queue pair for mkfs/fsck. */
int bfs_standalone_qpair(struct unvme_ns *ns, struct bfs_qctx *q);

static inline uint64_t bfs_load_size(const struct bfs_inode *in)
{
	return atomic_load_explicit(&in->size, memory_order_acquire);
}

static inline uint64_t bfs_cluster_bytes(const struct blobfs *fs)
{
	return fs->g.cluster_size;
}

/* First block of data-area cluster pclu. */
static inline uint64_t bfs_cluster_blk(const struct blobfs *fs, uint64_t pclu)
{
	return fs->g.data_start + pclu * fs->g.blocks_per_cluster;
}

#define BFS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BFS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
