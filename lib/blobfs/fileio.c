/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The buffered read and write paths. Both work through the shared cache in steps of a few
 * units, pinning the units of a step while they copy; a reader holds the file's rw lock for
 * reading (readers of one file run in parallel), a writer for writing. Device I/O happens on
 * the calling thread's own queue pair, several commands in flight at once.
 *
 * A page that is missing is loaded by whoever needs it first: it marks the page "loading",
 * reads it without holding the cache lock, then marks it valid and wakes the others waiting
 * for it (readahead loads pages the same way, from its own thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

#define STEP_MAX 32u

struct ustep {
	struct bfs_unit *u;
	uint64_t want;   /* pages of the range in this unit */
	uint64_t mine;   /* pages this call is loading */
};

static uint32_t step_units(const struct blobfs *fs)
{
	uint32_t n = fs->cache.max_units / 16;
	return n < 1 ? 1 : n > STEP_MAX ? STEP_MAX : n;
}

static uint64_t page_mask(uint32_t first, uint32_t n)
{
	uint64_t m = n >= 64 ? ~0ull : ((1ull << n) - 1);
	return m << first;
}

/* Pages of unit idx that [off, end) touches. */
static uint64_t unit_pages(const struct blobfs *fs, uint64_t idx, uint64_t off, uint64_t end)
{
	uint64_t us = fs->cache.unit_size, base = idx * us;
	uint64_t a = BFS_MAX(off, base), b = BFS_MIN(end, base + us);
	if (b <= a)
		return 0;
	uint32_t p0 = (uint32_t)((a - base) / BFS_PAGE);
	uint32_t p1 = (uint32_t)((b - base + BFS_PAGE - 1) / BFS_PAGE);
	return page_mask(p0, p1 - p0);
}

/* Queues reads of the pages `pages` of u (holes become zeros). */
static int queue_loads(struct blobfs *fs, struct bfs_batch *b, struct bfs_inode *in,
		       struct bfs_unit *u, uint64_t pages)
{
	uint64_t us = fs->cache.unit_size;
	while (pages) {
		uint32_t p = (uint32_t)__builtin_ctzll(pages);
		uint32_t n = 0;
		while (p + n < 64 && (pages >> (p + n)) & 1)
			n++;
		pages &= ~page_mask(p, n);
		uint64_t fo = u->index * us + (uint64_t)p * BFS_PAGE;
		uint64_t left = (uint64_t)n * BFS_PAGE;
		uint8_t *dst = u->buf + (size_t)p * BFS_PAGE;
		while (left) {
			uint64_t blk;
			bool hole;
			uint64_t m = bfs_map_run(fs, in, fo, left, &blk, &hole);
			if (hole) {
				memset(dst, 0, m);
			} else {
				int rc = bfs_batch_read(b, dst, blk, m / BFS_BLOCK);
				if (rc)
					return rc;
			}
			fo += m;
			dst += m;
			left -= m;
		}
	}
	return 0;
}

/* Pins the units of [off, off+len) (at most step_units) with their pages valid. rw is held
 * (either mode). On failure nothing stays pinned. */
static int acquire(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		   uint64_t len, uint64_t size, bool prefetch, struct ustep *st, uint32_t *nst)
{
	uint64_t us = fs->cache.unit_size;
	uint64_t end = off + len;
	uint64_t eof_page_end = (size + BFS_PAGE - 1) / BFS_PAGE * BFS_PAGE;
	uint64_t first = off / us, last = (end - 1) / us;
	uint32_t n = (uint32_t)(last - first + 1);
	int rc = 0;
	pthread_mutex_lock(&in->cache_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct bfs_unit *u = bfs_cache_get(fs, in, first + i, true);
		if (!u) {
			for (uint32_t k = 0; k < i; k++)
				bfs_cache_unpin(st[k].u);
			pthread_mutex_unlock(&in->cache_lock);
			return -ENOMEM;
		}
		st[i] = (struct ustep){ u, unit_pages(fs, first + i, off, BFS_MIN(end, eof_page_end)), 0 };
	}
	uint64_t hits = 0, misses = 0, ahead_hits = 0;
	for (unsigned round = 0;; round++) {
		bool any = false;
		for (uint32_t i = 0; i < n; i++) {
			struct bfs_unit *u = st[i].u;
			uint64_t missing = st[i].want & ~u->valid;
			if (round == 0) {
				hits += (uint64_t)__builtin_popcountll(st[i].want & u->valid);
				if (!prefetch) {
					ahead_hits += (uint64_t)__builtin_popcountll(st[i].want & u->valid & u->ahead);
					u->ahead &= ~st[i].want;
				}
			}
			st[i].mine = missing & ~u->loading;
			u->loading |= st[i].mine;
			any |= st[i].mine != 0;
		}
		if (any) {
			pthread_mutex_unlock(&in->cache_lock);
			struct bfs_batch b;
			bfs_io_lock(q);
			bfs_batch_init(&b, q);
			for (uint32_t i = 0; i < n && !rc; i++)
				if (st[i].mine)
					rc = queue_loads(fs, &b, in, st[i].u, st[i].mine);
			int w = bfs_batch_wait(&b, "read");
			bfs_io_unlock(q);
			if (!rc)
				rc = w;
			pthread_mutex_lock(&in->cache_lock);
			for (uint32_t i = 0; i < n; i++) {
				struct bfs_unit *u = st[i].u;
				if (!rc) {
					u->valid |= st[i].mine;
					if (prefetch)
						u->ahead |= st[i].mine;
					misses += (uint64_t)__builtin_popcountll(st[i].mine);
				}
				u->loading &= ~st[i].mine;
				st[i].mine = 0;
			}
			pthread_cond_broadcast(&in->cache_cv);
		}
		if (rc)
			break;
		/* Wait for pages other threads are loading. */
		bool incomplete = false;
		for (uint32_t i = 0; i < n; i++) {
			struct bfs_unit *u = st[i].u;
			while (st[i].want & ~u->valid & u->loading)
				pthread_cond_wait(&in->cache_cv, &in->cache_lock);
			if (st[i].want & ~u->valid)
				incomplete = true; /* their load failed: try ourselves */
		}
		if (!incomplete)
			break;
		if (round > 3) {
			rc = bfs_err(-EIO, "pages of inode %llu could not be loaded", (unsigned long long)in->ino);
			break;
		}
	}
	if (rc)
		for (uint32_t i = 0; i < n; i++)
			bfs_cache_unpin(st[i].u);
	pthread_mutex_unlock(&in->cache_lock);
	if (prefetch) {
		atomic_fetch_add(&fs->st.prefetch_pages, misses);
	} else {
		atomic_fetch_add(&fs->st.cache_hits, hits);
		atomic_fetch_add(&fs->st.cache_misses, misses);
		atomic_fetch_add(&fs->st.prefetch_hits, ahead_hits);
	}
	*nst = rc ? 0 : n;
	return rc;
}

int bfs_load_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		   uint64_t len, bool prefetch)
{
	struct ustep st[STEP_MAX];
	uint64_t us = fs->cache.unit_size, size = bfs_load_size(in);
	if (off >= size)
		return 0;
	len = BFS_MIN(len, size - off);
	while (len) {
		uint64_t n = BFS_MIN(len, (uint64_t)step_units(fs) * us - off % us);
		uint32_t k;
		int rc = acquire(fs, q, in, off, n, size, prefetch, st, &k);
		if (rc)
			return rc;
		for (uint32_t i = 0; i < k; i++)
			bfs_cache_unpin(st[i].u);
		off += n;
		len -= n;
	}
	return 0;
}

/* Without "retain", a unit goes as soon as a read has used it to its end (or the file's). */
static void release(struct blobfs *fs, struct bfs_inode *in, struct ustep *st, uint32_t n,
		    uint64_t end, uint64_t size, bool retain)
{
	if (retain) {
		for (uint32_t i = 0; i < n; i++)
			bfs_cache_unpin(st[i].u);
		return;
	}
	uint64_t us = fs->cache.unit_size;
	pthread_mutex_lock(&in->cache_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct bfs_unit *u = st[i].u;
		bfs_cache_unpin(u);
		uint64_t unit_end = BFS_MIN((u->index + 1) * us, size);
		if (end >= unit_end && atomic_load(&u->pins) == 0 && !u->dirty && !u->loading)
			bfs_cache_drop(fs, in, u);
	}
	pthread_mutex_unlock(&in->cache_lock);
}

/* The thread's queue pair for a non-empty transfer (NULL with *rc set when it cannot have one,
 * or 0 in *rc for an empty one). */
static struct bfs_qctx *io_begin(struct blobfs *fs, size_t len, int *rc)
{
	*rc = 0;
	return len ? bfs_qctx_get(fs, rc) : NULL;
}

ssize_t bfs_read(struct blobfs_file *f, void *buf, size_t len, uint64_t off)
{
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	if (in->type == BLOBFS_TYPE_DIR)
		return bfs_err(-EISDIR, "cannot read a directory");
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return bfs_err(-EBADF, "the file was opened write-only");
	int rc;
	struct bfs_qctx *q = io_begin(fs, len, &rc);
	if (!q)
		return rc;
	if (bfs_file_direct_read(f))
		return bfs_direct_read(f, q, buf, len, off);
	pthread_rwlock_rdlock(&in->rw);
	uint64_t size = bfs_load_size(in);
	if (off >= size) {
		pthread_rwlock_unlock(&in->rw);
		return 0;
	}
	len = (size_t)BFS_MIN((uint64_t)len, size - off);
	uint64_t us = fs->cache.unit_size;
	bool retain = bfs_file_retain(f);
	struct ustep st[STEP_MAX];
	size_t done = 0;
	while (done < len) {
		uint64_t o = off + done;
		uint64_t n = BFS_MIN((uint64_t)(len - done), (uint64_t)step_units(fs) * us - o % us);
		uint32_t k;
		rc = acquire(fs, q, in, o, n, size, false, st, &k);
		if (rc)
			break;
		for (uint32_t i = 0; i < k; i++) {
			struct bfs_unit *u = st[i].u;
			uint64_t base = u->index * us;
			uint64_t a = BFS_MAX(o, base), b = BFS_MIN(o + n, base + us);
			memcpy((uint8_t *)buf + done + (a - o), u->buf + (a - base), b - a);
		}
		release(fs, in, st, k, o + n, size, retain);
		done += n;
	}
	pthread_rwlock_unlock(&in->rw);
	if (done == 0 && rc)
		return rc;
	bfs_ra_note(f, off, done, size);
	return (ssize_t)done;
}

int bfs_zero_bytes(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t from,
		   uint64_t to)
{
	uint64_t size = bfs_load_size(in), us = fs->cache.unit_size;
	to = BFS_MIN(to, size);
	struct ustep st[STEP_MAX];
	while (from < to) {
		uint64_t n = BFS_MIN(to - from, (uint64_t)step_units(fs) * us - from % us);
		uint32_t k;
		int rc = acquire(fs, q, in, from, n, size, false, st, &k);
		if (rc)
			return rc;
		pthread_mutex_lock(&in->cache_lock);
		for (uint32_t i = 0; i < k; i++) {
			struct bfs_unit *u = st[i].u;
			uint64_t base = u->index * us;
			uint64_t a = BFS_MAX(from, base), b = BFS_MIN(from + n, base + us);
			memset(u->buf + (a - base), 0, b - a);
			bfs_cache_mark_dirty(fs, in, u, unit_pages(fs, u->index, a, b));
			bfs_cache_unpin(u);
		}
		pthread_mutex_unlock(&in->cache_lock);
		from += n;
	}
	bfs_dirty_list_add(fs, in);
	return 0;
}

/* Partial pages at the edges of [o, end) that are not in the cache: read them first, or
 * zero them when they hold nothing yet. rw is held for writing. */
static int fill_edges(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, struct ustep *st,
		      uint32_t n, uint64_t o, uint64_t end, uint64_t size, bool fresh_head, bool fresh_tail)
{
	uint64_t us = fs->cache.unit_size;
	uint64_t edges[2] = { o / BFS_PAGE, (end - 1) / BFS_PAGE };
	bool partial[2] = { o % BFS_PAGE != 0 || (end - o < BFS_PAGE && end % BFS_PAGE),
			    end % BFS_PAGE != 0 };
	bool fresh[2] = { fresh_head, fresh_tail };
	for (int e = 0; e < 2; e++) {
		if (!partial[e] || (e == 1 && edges[1] == edges[0] && partial[0]))
			continue;
		uint64_t page = edges[e];
		uint64_t idx = page * BFS_PAGE / us;
		struct bfs_unit *u = st[idx - o / us].u;
		(void)n;
		uint32_t pg = (uint32_t)(page % fs->cache.unit_pages);
		uint64_t bit = 1ull << pg;
		if (u->valid & bit)
			continue;
		uint8_t *p = u->buf + (size_t)pg * BFS_PAGE;
		uint64_t blk;
		bool hole;
		bfs_map_run(fs, in, page * BFS_PAGE, BFS_PAGE, &blk, &hole);
		if (!fresh[e] && !hole && page * BFS_PAGE < size) {
			int rc = bfs_io_read(q, p, blk, 1, "read before a partial write");
			if (rc)
				return rc;
		} else {
			memset(p, 0, BFS_PAGE);
		}
		/* valid is set together with dirty by the caller */
	}
	return 0;
}

ssize_t bfs_write(struct blobfs_file *f, const void *buf, size_t len, uint64_t off, bool append)
{
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	if (in->type != BLOBFS_TYPE_FILE)
		return bfs_err(-EISDIR, "cannot write to a directory");
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return bfs_err(-EBADF, "the file was opened read-only");
	if (fs->read_only)
		return bfs_err(-EROFS, "the file system is mounted read-only");
	if (fs->jnl_error)
		return bfs_err(-EIO, "the file system stopped taking changes after a failed metadata write");
	int rc;
	struct bfs_qctx *q = io_begin(fs, len, &rc);
	if (!q)
		return rc;
	/* Room in the shadow first: a full one waits for the flusher, which needs in->rw. */
	struct bfs_shadow_slot slot;
	rc = bfs_shadow_reserve(fs, in, len, &slot);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&in->rw);
	if (append)
		off = bfs_load_size(in);
	if (off > BLOBFS_FILE_MAX || len > BLOBFS_FILE_MAX - off) {
		pthread_rwlock_unlock(&in->rw);
		bfs_shadow_unreserve(fs, &slot);
		return bfs_err(-EFBIG, "write past the largest file offset (%llu)",
			       (unsigned long long)BLOBFS_FILE_MAX);
	}
	if (bfs_file_direct_write(f)) {
		ssize_t r = bfs_direct_write(f, q, buf, len, off);
		if (r > 0 && (rc = bfs_shadow_write(fs, q, in, &slot, off, buf, (size_t)r)) != 0)
			r = rc;
		pthread_rwlock_unlock(&in->rw);
		bfs_shadow_unreserve(fs, &slot);
		return r;
	}
	/* All or nothing where it can be known beforehand: a write that cannot fit fails
	 * before changing anything (a concurrent writer can still take the space meanwhile;
	 * then the write is short, as POSIX allows). */
	rc = bfs_space_check(fs, in, off, off + len);
	if (rc) {
		pthread_rwlock_unlock(&in->rw);
		bfs_shadow_unreserve(fs, &slot);
		return rc;
	}
	uint64_t us = fs->cache.unit_size;
	struct ustep st[STEP_MAX];
	size_t done = 0;
	while (done < len) {
		uint64_t size = bfs_load_size(in);
		uint64_t o = off + done;
		uint64_t n = BFS_MIN((uint64_t)(len - done), (uint64_t)step_units(fs) * us - o % us);
		uint64_t end = o + n;
		if (o > size && (rc = bfs_zero_range(fs, q, in, size, o)) != 0)
			break;
		bool fh, ft;
		rc = bfs_alloc_range(fs, q, in, o, end, size, &fh, &ft);
		if (rc)
			break;
		uint64_t first = o / us;
		uint32_t k = (uint32_t)((end - 1) / us - first + 1);
		pthread_mutex_lock(&in->cache_lock);
		uint32_t got = 0;
		for (; got < k; got++) {
			st[got].u = bfs_cache_get(fs, in, first + got, true);
			if (!st[got].u)
				break;
		}
		pthread_mutex_unlock(&in->cache_lock);
		if (got < k) {
			rc = -ENOMEM;
		} else {
			rc = fill_edges(fs, q, in, st, k, o, end, size, fh, ft);
		}
		if (!rc) {
			for (uint32_t i = 0; i < k; i++) {
				struct bfs_unit *u = st[i].u;
				uint64_t base = u->index * us;
				uint64_t a = BFS_MAX(o, base), b = BFS_MIN(end, base + us);
				memcpy(u->buf + (a - base), (const uint8_t *)buf + done + (a - o), b - a);
			}
			pthread_mutex_lock(&in->cache_lock);
			for (uint32_t i = 0; i < k; i++) {
				uint64_t pages = unit_pages(fs, first + i, o, end);
				st[i].u->valid |= pages;
				st[i].u->ahead &= ~pages;
				bfs_cache_mark_dirty(fs, in, st[i].u, pages);
			}
			pthread_mutex_unlock(&in->cache_lock);
		}
		for (uint32_t i = 0; i < got; i++)
			bfs_cache_unpin(st[i].u);
		if (rc)
			break;
		if (end > size)
			atomic_store_explicit(&in->size, end, memory_order_release);
		done += n;
		/* A long write keeps the file's dirty data at most a chunk (and the cache's within
		 * its limit): write back as it goes. */
		if (done < len && (in->dirty_pages * BFS_PAGE >= fs->opts.writeback_chunk ||
				   atomic_load(&fs->cache.dirty_pages) > fs->cache.dirty_limit)) {
			rc = bfs_writeback(fs, q, in);
			if (rc)
				break;
		}
	}
	if (done) {
		int64_t now = bfs_now_ns();
		atomic_store(&in->mtime_ns, now);
		atomic_store(&in->ctime_ns, now);
		bfs_dirty_list_add(fs, in);
	}
	/* What was written is acknowledged once the shadow holds it (a short write's part). */
	int sh = done ? bfs_shadow_write(fs, q, in, &slot, off, buf, done) : 0;
	int wb = 0;
	if (done && (in->dirty_pages * BFS_PAGE >= fs->opts.writeback_chunk ||
		     atomic_load(&fs->cache.dirty_pages) > fs->cache.dirty_limit))
		wb = bfs_writeback(fs, q, in);
	pthread_rwlock_unlock(&in->rw);
	bfs_shadow_unreserve(fs, &slot);
	if (sh)
		return sh;
	bfs_throttle(fs);
	if (done == 0)
		return rc ? rc : wb;
	return (ssize_t)done;
}
