/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write-back: dirty pages go to the device in ascending file order, all of a file's dirty
 * runs in flight at once on the writer's queue pair (runs adjacent on the device and in
 * memory merged into one command, up to the controller's transfer size); then the file's new extents (MAP) and
 * size (SETSIZE) are logged. Logging only after the data is written, and committing only
 * after a Flush, is what keeps a file's durable size from covering unwritten blocks.
 *
 * Write-back starts when a file has writeback_chunk dirty bytes (in the writer's thread),
 * at fsync/sync/close, when the cache is over its dirty limit, and every commit interval in
 * the flusher thread, which also commits the journal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bfs.h"
#include "lib/common/clock.h"
#include "lib/common/thread.h"

void bfs_dirty_list_add(struct blobfs *fs, struct bfs_inode *in)
{
	/* The flag changes only with the inode's rw lock held for writing (as here), so a
	 * write to a file already on the list takes no global lock. */
	if (atomic_load_explicit(&in->on_dirty_list, memory_order_relaxed))
		return;
	pthread_mutex_lock(&fs->dirty_lock);
	if (!in->on_dirty_list) {
		in->on_dirty_list = true;
		in->dprev = NULL;
		in->dnext = fs->dirty_head;
		if (fs->dirty_head)
			fs->dirty_head->dprev = in;
		fs->dirty_head = in;
	}
	pthread_mutex_unlock(&fs->dirty_lock);
}

void bfs_dirty_list_remove(struct blobfs *fs, struct bfs_inode *in)
{
	pthread_mutex_lock(&fs->dirty_lock);
	if (in->on_dirty_list) {
		if (in->dprev)
			in->dprev->dnext = in->dnext;
		else
			fs->dirty_head = in->dnext;
		if (in->dnext)
			in->dnext->dprev = in->dprev;
		in->on_dirty_list = false;
	}
	pthread_cond_broadcast(&fs->dirty_cv);
	pthread_mutex_unlock(&fs->dirty_lock);
}

struct log_ctx {
	struct blobfs *fs;
	uint64_t ino;
	int rc;
};

static void log_map(void *arg, const struct bfs_extent *e)
{
	struct log_ctx *c = arg;
	struct bfs_rec r = { .type = BFS_REC_MAP, .ino = c->ino, .lclu = e->lclu, .pclu = e->pclu,
			     .count = e->count };
	int rc = bfs_jnl_append(c->fs, &r);
	if (rc && !c->rc)
		c->rc = rc;
}

int bfs_log_inode(struct blobfs *fs, struct bfs_inode *in)
{
	if (fs->read_only || in->type != BLOBFS_TYPE_FILE)
		return 0;
	uint64_t cs = fs->g.cluster_size;
	uint64_t size = bfs_load_size(in);
	int64_t mtime = atomic_load(&in->mtime_ns);
	struct log_ctx c = { fs, in->ino, 0 };
	pthread_mutex_lock(&fs->jlock);
	if (in->linked) {
		c.rc = bfs_ext_set_logged(&in->ext, 0, (size + cs - 1) / cs, log_map, &c);
		bfs_meta_update(fs, in);
		if (!c.rc && (size != in->logged_size || mtime != in->logged_mtime)) {
			struct bfs_rec r = { .type = BFS_REC_SETSIZE, .ino = in->ino, .size = size,
					     .mtime = mtime, .ctime = atomic_load(&in->ctime_ns) };
			c.rc = bfs_jnl_append(fs, &r);
			if (!c.rc) {
				in->logged_size = size;
				in->logged_mtime = mtime;
			}
		}
		/* The file's MAP and SETSIZE records go in one transaction: a file never has
		 * logged clusters past its logged end. */
		bfs_jnl_op_done(fs);
	}
	pthread_mutex_unlock(&fs->jlock);
	return c.rc;
}

/* Pieces of a write-back that continue each other both on the device and in memory (units
 * of one pool chunk lie side by side, as they do when a file was written into a growing
 * cache) go out as one command: large sequential writes. */
struct wb_run {
	const uint8_t *buf;
	uint64_t blk, nblk;
};

static int wb_piece(struct bfs_batch *b, struct wb_run *r, const uint8_t *buf, uint64_t blk, uint64_t nblk)
{
	if (r->nblk && r->buf + r->nblk * BFS_BLOCK == buf && r->blk + r->nblk == blk &&
	    unvme_dma_contig(r->buf) >= (r->nblk + nblk) * BFS_BLOCK) {
		r->nblk += nblk;
		return 0;
	}
	int rc = r->nblk ? bfs_batch_write(b, r->buf, r->blk, r->nblk) : 0;
	*r = (struct wb_run){ buf, blk, nblk };
	return rc;
}

int bfs_writeback(struct blobfs *fs, struct bfs_qctx *q, struct bfs_inode *in)
{
	uint64_t us = fs->cache.unit_size;
	int rc = 0;
	struct bfs_unit **v = NULL;
	uint32_t n = 0, k = 0;
	pthread_mutex_lock(&in->cache_lock);
	if (in->dirty_pages) {
		rc = bfs_cache_units_sorted(in, &v, &n);
		/* Keep the dirty ones, pinned against eviction. */
		for (uint32_t i = 0; !rc && i < n; i++) {
			if (v[i]->dirty) {
				atomic_fetch_add(&v[i]->pins, 1);
				v[k++] = v[i];
			}
		}
	}
	pthread_mutex_unlock(&in->cache_lock);
	if (rc)
		return rc;
	if (k) {
		struct bfs_batch b;
		struct wb_run run = { NULL, 0, 0 };
		bfs_io_lock(q);
		bfs_batch_init(&b, q);
		for (uint32_t i = 0; i < k && !rc; i++) {
			struct bfs_unit *u = v[i];
			uint64_t pages = u->dirty;
			while (pages && !rc) {
				uint32_t p = (uint32_t)__builtin_ctzll(pages);
				uint32_t cnt = 0;
				while (p + cnt < 64 && (pages >> (p + cnt)) & 1)
					cnt++;
				pages &= cnt >= 64 ? 0 : ~(((1ull << cnt) - 1) << p);
				uint64_t fo = u->index * us + (uint64_t)p * BFS_PAGE;
				uint64_t left = (uint64_t)cnt * BFS_PAGE;
				const uint8_t *src = u->buf + (size_t)p * BFS_PAGE;
				while (left && !rc) {
					uint64_t blk;
					bool hole;
					uint64_t m = bfs_map_run(fs, in, fo, left, &blk, &hole);
					/* A dirty page in a hole cannot happen (writes allocate first);
					 * nothing to write there if it did. */
					if (!hole)
						rc = wb_piece(&b, &run, src, blk, m / BFS_BLOCK);
					fo += m;
					src += m;
					left -= m;
				}
			}
		}
		if (!rc && run.nblk)
			rc = bfs_batch_write(&b, run.buf, run.blk, run.nblk);
		int w = bfs_batch_wait(&b, "write-back");
		bfs_io_unlock(q);
		if (!rc)
			rc = w;
		pthread_mutex_lock(&in->cache_lock);
		for (uint32_t i = 0; i < k; i++) {
			if (!rc)
				bfs_cache_clear_dirty(fs, in, v[i], v[i]->dirty);
			bfs_cache_unpin(v[i]);
		}
		pthread_mutex_unlock(&in->cache_lock);
		if (!rc)
			atomic_fetch_add(&fs->write_gen, 1);
	}
	free(v);
	if (rc)
		return rc;
	rc = bfs_log_inode(fs, in);
	if (!rc && in->dirty_pages == 0)
		bfs_dirty_list_remove(fs, in);
	return rc;
}

/* A reference unless the inode is already on its way out (refs 0). */
static bool ref_if_alive(struct bfs_inode *in)
{
	uint32_t r = atomic_load(&in->refs);
	while (r) {
		if (atomic_compare_exchange_weak(&in->refs, &r, r + 1))
			return true;
	}
	return false;
}

int bfs_writeback_all(struct blobfs *fs)
{
	int rc = 0, first = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	pthread_mutex_lock(&fs->dirty_lock);
	size_t n = 0, cap = 64;
	struct bfs_inode **v = malloc(cap * sizeof(*v));
	for (struct bfs_inode *in = fs->dirty_head; v && in; in = in->dnext) {
		if (n == cap) {
			struct bfs_inode **nv = realloc(v, cap * 2 * sizeof(*v));
			if (!nv)
				break;
			v = nv;
			cap *= 2;
		}
		if (ref_if_alive(in))
			v[n++] = in;
	}
	pthread_mutex_unlock(&fs->dirty_lock);
	if (!v)
		return bfs_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		pthread_rwlock_wrlock(&v[i]->rw);
		rc = bfs_writeback(fs, q, v[i]);
		pthread_rwlock_unlock(&v[i]->rw);
		if (rc && !first)
			first = rc;
		bfs_inode_unref(fs, v[i]);
	}
	free(v);
	return first;
}

/* ---- the flusher thread ---- */

static void *flusher_main(void *arg)
{
	struct blobfs *fs = arg;
	int rc = 0;
	bfs_qctx_get(fs, &rc); /* its queue pair, now rather than at the first write-back */
	pthread_mutex_lock(&fs->flusher_lock);
	fs->flusher_ready = true;
	pthread_cond_broadcast(&fs->flusher_cv);
	while (!fs->flusher_stop) {
		if (!fs->flusher_kicked) {
			struct timespec ts = clock_deadline_ms(CLOCK_REALTIME,
							       fs->opts.commit_interval_ms);
			pthread_cond_timedwait(&fs->flusher_cv, &fs->flusher_lock, &ts);
		}
		if (fs->flusher_stop)
			break;
		fs->flusher_kicked = false;
		pthread_mutex_unlock(&fs->flusher_lock);
		bfs_shadow_cycle(fs);
		pthread_mutex_lock(&fs->dirty_lock);
		pthread_cond_broadcast(&fs->dirty_cv);
		pthread_mutex_unlock(&fs->dirty_lock);
		pthread_mutex_lock(&fs->flusher_lock);
	}
	pthread_mutex_unlock(&fs->flusher_lock);
	return NULL;
}

int bfs_flusher_start(struct blobfs *fs)
{
	fs->flusher_stop = false;
	int rc = unvme_thread_start(&fs->flusher, flusher_main, fs);
	if (rc)
		return bfs_err(-rc, "cannot start the flusher thread");
	fs->flusher_on = true;
	pthread_mutex_lock(&fs->flusher_lock);
	while (!fs->flusher_ready)
		pthread_cond_wait(&fs->flusher_cv, &fs->flusher_lock);
	pthread_mutex_unlock(&fs->flusher_lock);
	return 0;
}

void bfs_flusher_stop(struct blobfs *fs)
{
	if (!fs->flusher_on)
		return;
	pthread_mutex_lock(&fs->flusher_lock);
	fs->flusher_stop = true;
	pthread_cond_signal(&fs->flusher_cv);
	pthread_mutex_unlock(&fs->flusher_lock);
	pthread_join(fs->flusher, NULL);
	fs->flusher_on = false;
}

void bfs_flusher_kick(struct blobfs *fs)
{
	if (!fs->flusher_on)
		return;
	pthread_mutex_lock(&fs->flusher_lock);
	if (!fs->flusher_kicked) {
		fs->flusher_kicked = true;
		pthread_cond_signal(&fs->flusher_cv);
	}
	pthread_mutex_unlock(&fs->flusher_lock);
}

void bfs_throttle(struct blobfs *fs)
{
	for (int i = 0; i < 1000 && atomic_load(&fs->cache.dirty_pages) > fs->cache.dirty_limit; i++) {
		bfs_flusher_kick(fs);
		struct timespec ts = clock_deadline_ms(CLOCK_REALTIME, 10);
		pthread_mutex_lock(&fs->dirty_lock);
		pthread_cond_timedwait(&fs->dirty_cv, &fs->dirty_lock, &ts);
		pthread_mutex_unlock(&fs->dirty_lock);
	}
}
