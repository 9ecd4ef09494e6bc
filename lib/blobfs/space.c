/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's space: mapping file offsets to device blocks, giving a file clusters when it is
 * written, zeroing what must read as zeros, and taking clusters back at truncate.
 *
 * The rule that keeps old data from showing through: a byte inside the file's size reads
 * either what was written there or zero. So when clusters are allocated for a write, their
 * parts that the write does not cover but that lie inside the file are zeroed on the
 * device; when a file grows past its end, the allocated space between the old end and the
 * new data is zeroed (zero_range). Clusters beyond the end may hold anything.
 *
 * Clusters given to a file stay "unlogged" (in memory only) until write-back has put their
 * data on the device and logged a MAP record; a crash before that simply frees them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

#define PREALLOC_BYTES (16u << 20) /* what an append may take ahead of need, at most */

uint64_t bfs_map_run(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t max,
		     uint64_t *blk, bool *hole)
{
	uint64_t cs = fs->g.cluster_size;
	uint64_t lclu = off / cs, pclu = 0, run = 0;
	uint64_t within = off % cs;
	if (bfs_ext_lookup(&in->ext, lclu, &pclu, &run, NULL)) {
		*hole = false;
		*blk = bfs_cluster_blk(fs, pclu) + within / BFS_BLOCK;
	} else {
		*hole = true;
		*blk = 0;
	}
	uint64_t bytes = run == UINT64_MAX ? max : run * cs - within;
	return bytes < max ? bytes : max;
}

void bfs_free_range(void *arg, uint64_t pclu, uint32_t count, uint32_t flags)
{
	struct blobfs *fs = arg;
	if (flags & BFS_UNLOGGED)
		bfs_alloc_free(&fs->alloc, pclu, count);
	else
		bfs_jnl_defer_free(fs, pclu, count);
}

void bfs_free_from(struct blobfs *fs, struct bfs_inode *in, uint64_t lclu, bool locked_j)
{
	if (!locked_j)
		pthread_mutex_lock(&fs->jlock);
	bfs_ext_trim(&in->ext, lclu, bfs_free_range, fs);
	bfs_meta_update(fs, in);
	if (!locked_j)
		pthread_mutex_unlock(&fs->jlock);
}

/* Frees the clusters a failed allocation had taken. */
struct taken {
	uint64_t lclu, pclu, count;
};

static void undo(struct blobfs *fs, struct bfs_inode *in, const struct taken *t, uint32_t n)
{
	pthread_mutex_lock(&fs->jlock);
	for (uint32_t i = 0; i < n; i++) {
		/* Cut the file's map at the taken range and put back what followed it. */
		struct bfs_extents keep = {0};
		for (uint32_t k = 0; k < in->ext.n; k++) {
			struct bfs_extent *e = &in->ext.e[k];
			if (e->lclu >= t[i].lclu + t[i].count || e->lclu + e->count <= t[i].lclu)
				bfs_ext_add(&keep, e->lclu, e->pclu, e->count, e->flags);
		}
		bfs_ext_free(&in->ext);
		in->ext = keep;
		bfs_alloc_free(&fs->alloc, t[i].pclu, t[i].count);
	}
	pthread_mutex_unlock(&fs->jlock);
}

/* Zeroes on the device the parts of a new cluster run that must read as zero: for a write,
 * what it does not cover inside the file; with fill (fallocate: nothing covers it), all of
 * it inside the file (size is then the file's size afterwards). */
static int zero_fresh(struct blobfs *fs, struct bfs_qctx *q, uint64_t lclu, uint64_t pclu,
		      uint64_t count, uint64_t off, uint64_t end, uint64_t size, bool fill)
{
	uint64_t cs = fs->g.cluster_size;
	uint64_t start = lclu * cs, stop = (lclu + count) * cs;
	if (fill) {
		uint64_t to = BFS_MIN(stop, (size + BFS_PAGE - 1) / BFS_PAGE * BFS_PAGE);
		return to > start ? bfs_io_zero(q, bfs_cluster_blk(fs, pclu), (to - start) / BFS_BLOCK) : 0;
	}
	uint64_t inside = BFS_MAX(size, end); /* the file's size once written */
	/* [start, off) lies inside the file when the run starts before the write. */
	uint64_t a0 = start, a1 = BFS_MIN(BFS_MAX(off, start), stop);
	/* [end, min(stop, inside)) when the write fills a hole inside the file. */
	uint64_t b0 = BFS_MAX(end, start), b1 = BFS_MIN(stop, inside);
	a1 = BFS_MIN(a1, inside);
	int rc = 0;
	/* Whole pages only: the partial pages at the write's edges are zero-filled in the cache. */
	uint64_t pa0 = a0, pa1 = a1 / BFS_PAGE * BFS_PAGE;
	if (pa1 > pa0)
		rc = bfs_io_zero(q, bfs_cluster_blk(fs, pclu) + (pa0 - start) / BFS_BLOCK,
				 (pa1 - pa0) / BFS_BLOCK);
	uint64_t pb0 = (b0 + BFS_PAGE - 1) / BFS_PAGE * BFS_PAGE, pb1 = (b1 + BFS_PAGE - 1) / BFS_PAGE * BFS_PAGE;
	pb1 = BFS_MIN(pb1, stop);
	if (!rc && pb1 > pb0)
		rc = bfs_io_zero(q, bfs_cluster_blk(fs, pclu) + (pb0 - start) / BFS_BLOCK,
				 (pb1 - pb0) / BFS_BLOCK);
	return rc;
}

uint64_t bfs_holes_in(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t end)
{
	uint64_t cs = fs->g.cluster_size, n = 0;
	for (uint64_t c = off / cs, last = (end - 1) / cs; c <= last;) {
		uint64_t pclu, run;
		bool mapped = bfs_ext_lookup(&in->ext, c, &pclu, &run, NULL);
		uint64_t len = BFS_MIN(run, last - c + 1);
		if (!mapped)
			n += len;
		c += len;
	}
	return n;
}

/* Short of space: removed files nobody has open give theirs back, and clusters freed by
 * records not yet durable come back after a commit. */
static int make_room(struct blobfs *fs)
{
	bfs_orphans_reclaim(fs);
	return bfs_jnl_commit(fs);
}

int bfs_space_check(struct blobfs *fs, struct bfs_inode *in, uint64_t off, uint64_t end)
{
	uint64_t need = bfs_holes_in(fs, in, off, end);
	if (need == 0 || need <= bfs_alloc_nfree(&fs->alloc))
		return 0;
	int rc = make_room(fs);
	if (rc)
		return rc;
	uint64_t nfree = bfs_alloc_nfree(&fs->alloc);
	if (need <= nfree)
		return 0;
	return bfs_err(-ENOSPC, "no space left on the file system: the write needs %llu clusters of "
		       "%u KiB, %llu are free", (unsigned long long)need, fs->g.cluster_size >> 10,
		       (unsigned long long)nfree);
}

static int alloc_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		       uint64_t end, uint64_t size, bool fill, bool *fresh_head, bool *fresh_tail)
{
	uint64_t cs = fs->g.cluster_size;
	uint64_t first = off / cs, last = (end - 1) / cs;
	struct taken t[64];
	uint32_t nt = 0;
	*fresh_head = *fresh_tail = false;
	bool committed = false;
	uint64_t lclu = first;
	while (lclu <= last) {
		uint64_t pclu, run;
		if (bfs_ext_lookup(&in->ext, lclu, &pclu, &run, NULL)) {
			lclu += run;
			continue;
		}
		uint64_t need = BFS_MIN(run, last - lclu + 1);
		/* Appending (the write ends the file, and no extent follows): take some more, so
		 * the file stays contiguous. The extra clusters lie past the new end, where their
		 * old contents can never be read. */
		uint64_t want = need;
		if (run == UINT64_MAX && end >= size) {
			uint64_t file_clusters = (BFS_MAX(size, end) + cs - 1) / cs;
			want = BFS_MAX(need, BFS_MIN((uint64_t)PREALLOC_BYTES / cs, file_clusters / 4));
		}
		uint64_t goal = UINT64_MAX, ppc, prun;
		if (lclu > 0 && bfs_ext_lookup(&in->ext, lclu - 1, &ppc, &prun, NULL))
			goal = ppc + 1;
		else if (in->last_pclu_end != UINT64_MAX)
			goal = in->last_pclu_end;
		uint64_t meta_need = sizeof(struct bfs_extent_disk);
		if (atomic_load(&fs->meta_bytes) + meta_need + BFS_BLOCK > (fs->g.ckpt_blocks - 1) * BFS_BLOCK) {
			undo(fs, in, t, nt);
			return bfs_err(-ENOSPC, "no space left for metadata (the checkpoint slot of %llu bytes is "
				       "full); remove files or mkfs with a larger meta_size",
				       (unsigned long long)((fs->g.ckpt_blocks - 1) * BFS_BLOCK));
		}
		uint64_t got = bfs_alloc_take(&fs->alloc, goal, want, &pclu);
		if (got == 0 && !committed) {
			committed = true;
			int rc = make_room(fs);
			if (rc) {
				undo(fs, in, t, nt);
				return rc;
			}
			continue;
		}
		if (got == 0 || nt == 64) {
			if (got)
				bfs_alloc_free(&fs->alloc, pclu, got);
			undo(fs, in, t, nt);
			if (got)
				return bfs_err(-ENOSPC, "write too fragmented: more than 64 free-space pieces "
					       "would be needed at once");
			return bfs_err(-ENOSPC, "no space left on the file system (%llu clusters of %llu KiB, "
				       "all in use)", (unsigned long long)fs->g.nclusters,
				       (unsigned long long)(cs >> 10));
		}
		pthread_mutex_lock(&fs->jlock);
		int rc = bfs_ext_add(&in->ext, lclu, pclu, (uint32_t)got, BFS_UNLOGGED);
		pthread_mutex_unlock(&fs->jlock);
		if (rc) {
			bfs_alloc_free(&fs->alloc, pclu, got);
			undo(fs, in, t, nt);
			return rc;
		}
		t[nt++] = (struct taken){ lclu, pclu, got };
		in->last_pclu_end = pclu + got;
		uint64_t used = BFS_MIN(got, need);
		if (first >= lclu && first < lclu + used)
			*fresh_head = true;
		if (last >= lclu && last < lclu + used)
			*fresh_tail = true;
		rc = zero_fresh(fs, q, lclu, pclu, used, off, end, size, fill);
		if (rc) {
			undo(fs, in, t, nt);
			return rc;
		}
		lclu += used;
	}
	return 0;
}

int bfs_alloc_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		    uint64_t end, uint64_t size, bool *fresh_head, bool *fresh_tail)
{
	return alloc_range(fs, q, in, off, end, size, false, fresh_head, fresh_tail);
}

int bfs_alloc_fill(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t off,
		   uint64_t end, uint64_t size)
{
	bool fh, ft;
	return alloc_range(fs, q, in, off, end, size, true, &fh, &ft);
}

int bfs_zero_range(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in, uint64_t from,
		   uint64_t to)
{
	if (to <= from)
		return 0;
	uint64_t us = fs->cache.unit_size;
	uint64_t size = bfs_load_size(in);
	uint64_t blk;
	bool hole;
	/* The page holding `from`: zero its tail, in the cache if it is there, else on the
	 * device (read, zero, write back through the bounce buffer). */
	if (from % BFS_PAGE) {
		bfs_map_run(fs, in, from / BFS_PAGE * BFS_PAGE, BFS_PAGE, &blk, &hole);
		if (!hole) {
			uint64_t page = from / BFS_PAGE;
			uint64_t pbit = 1ull << (page % fs->cache.unit_pages);
			int rc = 0;
			pthread_mutex_lock(&in->cache_lock);
			struct bfs_unit *u = bfs_cache_get(fs, in, from / us, false);
			if (u && !(u->valid & pbit)) {
				bfs_cache_unpin(u);
				u = NULL;
			}
			pthread_mutex_unlock(&in->cache_lock);
			if (u) {
				uint8_t *p = u->buf + (page % fs->cache.unit_pages) * BFS_PAGE;
				memset(p + from % BFS_PAGE, 0, BFS_PAGE - from % BFS_PAGE);
				pthread_mutex_lock(&in->cache_lock);
				bfs_cache_mark_dirty(fs, in, u, pbit);
				pthread_mutex_unlock(&in->cache_lock);
				bfs_cache_unpin(u);
			} else {
				uint8_t *b = bfs_qctx_bounce(q);
				rc = b ? 0 : -ENOMEM;
				if (!rc && page * BFS_PAGE < size)
					rc = bfs_io_read(q, b, blk, 1, "read before zeroing");
				else if (!rc)
					memset(b, 0, BFS_PAGE);
				if (!rc) {
					memset(b + from % BFS_PAGE, 0, BFS_PAGE - from % BFS_PAGE);
					rc = bfs_io_write(q, b, blk, 1, "zeroing past the end");
				}
				if (!rc)
					atomic_fetch_add(&fs->write_gen, 1);
			}
			if (rc)
				return rc;
		}
		from = (from / BFS_PAGE + 1) * BFS_PAGE;
	}
	/* Whole clusters of preallocation in the gap become holes again: cheaper than zeroing
	 * them, and the file stays sparse. */
	uint64_t cs = fs->g.cluster_size;
	uint64_t c0 = (from + cs - 1) / cs, c1 = to / cs;
	if (c1 > c0) {
		pthread_mutex_lock(&fs->jlock);
		int rc = bfs_ext_punch(&in->ext, c0, c1 - c0, BFS_UNLOGGED, bfs_free_range, fs);
		pthread_mutex_unlock(&fs->jlock);
		if (rc)
			return rc;
	}
	/* Whole pages up to the page holding `to`: zero on the device, and in the cache. */
	uint64_t stop = (to + BFS_PAGE - 1) / BFS_PAGE * BFS_PAGE;
	for (uint64_t o = from; o < stop;) {
		uint64_t n = bfs_map_run(fs, in, o, stop - o, &blk, &hole);
		if (!hole) {
			int rc = bfs_io_zero(q, blk, n / BFS_BLOCK);
			if (rc)
				return rc;
		}
		o += n;
	}
	pthread_mutex_lock(&in->cache_lock);
	for (uint64_t idx = from / us; idx * us < stop; idx++) {
		struct bfs_unit *u = bfs_umap_find(&in->units, idx);
		if (!u)
			continue;
		for (uint32_t pg = 0; pg < fs->cache.unit_pages; pg++) {
			uint64_t po = idx * us + (uint64_t)pg * BFS_PAGE;
			if (po >= from && po < stop && (u->valid & (1ull << pg)))
				memset(u->buf + (size_t)pg * BFS_PAGE, 0, BFS_PAGE);
		}
	}
	pthread_mutex_unlock(&in->cache_lock);
	return 0;
}
