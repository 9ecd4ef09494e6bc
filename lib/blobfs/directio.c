/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Direct reads and writes: the cache is bypassed. When the caller's buffer is DMA memory
 * (unvme_dma_alloc) and the range is block aligned, the device transfers straight to or
 * from it, with no copy at all; otherwise data passes through the thread's bounce buffer.
 * Dirty cached data of the file is written back first, so a direct read never misses a
 * buffered write, and a direct write drops cached copies of what it overwrites.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

static bool dma_ok(const void *buf, size_t len)
{
	return ((uintptr_t)buf % 4) == 0 && unvme_dma_contig(buf) >= len;
}

/* Queues reads of [off, off+len) of the file's blocks into dst (DMA memory, block aligned
 * range); holes become zeros. */
static int queue_blocks(struct blobfs *fs, struct bfs_batch *b, struct bfs_inode *in, uint8_t *dst,
			uint64_t off, uint64_t len)
{
	while (len) {
		uint64_t blk;
		bool hole;
		uint64_t n = bfs_map_run(fs, in, off, len, &blk, &hole);
		if (hole) {
			memset(dst, 0, n);
		} else {
			int rc = bfs_batch_read(b, dst, blk, n / BFS_BLOCK);
			if (rc)
				return rc;
		}
		off += n;
		dst += n;
		len -= n;
	}
	return 0;
}

/* Reads [off, off+len) of the file's blocks into dst and waits. */
static int read_blocks(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint8_t *dst,
		       uint64_t off, uint64_t len)
{
	struct bfs_batch b;
	bfs_io_lock(q);
	bfs_batch_init(&b, q);
	int rc = queue_blocks(fs, &b, in, dst, off, len);
	int w = bfs_batch_wait(&b, "direct read");
	bfs_io_unlock(q);
	return rc ? rc : w;
}

ssize_t bfs_direct_read(struct blobfs_file *f, struct bfs_qctx *q, void *buf, size_t len, uint64_t off)
{
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	int rc = 0;
	for (;;) {
		pthread_rwlock_rdlock(&in->rw);
		pthread_mutex_lock(&in->cache_lock);
		bool dirty = in->dirty_pages != 0;
		pthread_mutex_unlock(&in->cache_lock);
		if (!dirty)
			break;
		/* Buffered writes are not on the device yet: put them there first. */
		pthread_rwlock_unlock(&in->rw);
		pthread_rwlock_wrlock(&in->rw);
		rc = bfs_writeback(fs, q, in);
		pthread_rwlock_unlock(&in->rw);
		if (rc)
			return rc;
	}
	uint64_t size = bfs_load_size(in);
	if (off >= size) {
		pthread_rwlock_unlock(&in->rw);
		return 0;
	}
	len = (size_t)BFS_MIN((uint64_t)len, size - off);
	size_t done = 0;
	if (off % BFS_BLOCK == 0 && dma_ok(buf, len)) {
		/* Zero copy: whole blocks straight into the caller's buffer, the tail bounced. */
		size_t whole = len / BFS_BLOCK * BFS_BLOCK;
		rc = read_blocks(fs, q, in, buf, off, whole);
		done = rc ? 0 : whole;
	}
	uint8_t *bounce = rc ? NULL : bfs_qctx_bounce(q);
	if (!rc && !bounce)
		rc = -ENOMEM;
	while (!rc && done < len) {
		uint64_t o = off + done;
		uint64_t start = o / BFS_BLOCK * BFS_BLOCK;
		uint64_t stop = BFS_MIN((uint64_t)(off + len), start + BFS_BOUNCE);
		uint64_t span = (stop - start + BFS_BLOCK - 1) / BFS_BLOCK * BFS_BLOCK;
		rc = read_blocks(fs, q, in, bounce, start, span);
		if (!rc) {
			memcpy((uint8_t *)buf + done, bounce + (o - start), stop - o);
			done += stop - o;
		}
	}
	pthread_rwlock_unlock(&in->rw);
	atomic_fetch_add(&fs->st.cache_misses, (len + BFS_PAGE - 1) / BFS_PAGE);
	if (done == 0 && rc)
		return rc;
	return (ssize_t)done;
}

/* rw held for writing. */
ssize_t bfs_direct_write(struct blobfs_file *f, struct bfs_qctx *q, const void *buf, size_t len,
			 uint64_t off)
{
	struct blobfs *fs = f->fs;
	struct bfs_inode *in = f->in;
	int rc = bfs_space_check(fs, in, off, off + len);
	if (!rc)
		rc = bfs_writeback(fs, q, in);
	if (rc)
		return rc;
	uint64_t size = bfs_load_size(in);
	uint64_t end = off + len;
	if (off > size && (rc = bfs_zero_range(fs, q, in, size, off)) != 0)
		return rc;
	if (off > size)
		rc = bfs_writeback(fs, q, in); /* the zeroed partial page of the old end */
	if (rc)
		return rc;
	bool fh, ft;
	rc = bfs_alloc_range(fs, q, in, off, end, size, &fh, &ft);
	if (rc)
		return rc;
	uint8_t *bounce = bfs_qctx_bounce(q);
	if (!bounce)
		return -ENOMEM;
	size_t done = 0;
	bool zero_copy = off % BFS_BLOCK == 0 && dma_ok(buf, len);
	while (!rc && done < len) {
		uint64_t o = off + done;
		uint64_t start = o / BFS_BLOCK * BFS_BLOCK;
		uint64_t stop;
		const uint8_t *src;
		if (zero_copy && len - done >= BFS_BLOCK) {
			stop = o + (len - done) / BFS_BLOCK * BFS_BLOCK;
			src = (const uint8_t *)buf + done;
		} else {
			stop = BFS_MIN(end, start + BFS_BOUNCE);
			uint64_t span = (stop - start + BFS_BLOCK - 1) / BFS_BLOCK * BFS_BLOCK;
			/* Edge blocks that the write covers only in part keep their other bytes:
			 * read them unless they hold nothing yet (past the end, or just allocated). */
			uint64_t edges[2] = { start, start + span - BFS_BLOCK };
			for (int e = 0; e < 2 && !rc; e++) {
				uint64_t eb = edges[e];
				bool partial = eb < o || eb + BFS_BLOCK > stop;
				if (!partial || (e == 1 && edges[1] == edges[0]))
					continue;
				bool fresh = (eb / fs->g.cluster_size == off / fs->g.cluster_size && fh) ||
					     (eb / fs->g.cluster_size == (end - 1) / fs->g.cluster_size && ft);
				uint64_t blk;
				bool hole;
				bfs_map_run(fs, in, eb, BFS_BLOCK, &blk, &hole);
				if (!fresh && !hole && eb < size)
					rc = bfs_io_read(q, bounce + (eb - start), blk, 1, "read before a partial write");
				else
					memset(bounce + (eb - start), 0, BFS_BLOCK);
			}
			if (rc)
				break;
			memcpy(bounce + (o - start), (const uint8_t *)buf + done, stop - o);
			src = bounce;
			stop = start + span;
		}
		struct bfs_batch b;
		bfs_io_lock(q);
		bfs_batch_init(&b, q);
		for (uint64_t p = start; p < stop && !rc;) {
			uint64_t blk;
			bool hole;
			uint64_t n = bfs_map_run(fs, in, p, stop - p, &blk, &hole);
			if (!hole)
				rc = bfs_batch_write(&b, src + (p - start), blk, n / BFS_BLOCK);
			p += n;
		}
		int w = bfs_batch_wait(&b, "direct write");
		bfs_io_unlock(q);
		rc = rc ? rc : w;
		if (!rc)
			done += (size_t)(BFS_MIN(stop, end) - o);
	}
	if (done) {
		atomic_fetch_add(&fs->write_gen, 1);
		/* Cached copies of what was overwritten are stale now. */
		uint64_t us = fs->cache.unit_size;
		pthread_mutex_lock(&in->cache_lock);
		for (uint64_t idx = off / us; idx * us < off + done; idx++) {
			struct bfs_unit *u = bfs_umap_find(&in->units, idx);
			if (u && !u->loading && atomic_load(&u->pins) == 0)
				bfs_cache_drop(fs, in, u);
		}
		pthread_mutex_unlock(&in->cache_lock);
		if (off + done > size)
			atomic_store(&in->size, off + done);
		int64_t now = bfs_now_ns();
		atomic_store(&in->mtime_ns, now);
		atomic_store(&in->ctime_ns, now);
		int lrc = bfs_log_inode(fs, in);
		if (lrc && !rc)
			rc = lrc;
	}
	if (done == 0)
		return rc;
	return (ssize_t)done;
}
