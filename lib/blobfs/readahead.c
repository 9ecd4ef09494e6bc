/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Readahead ("prefetch control"): each file handle watches its reads; once prefetch_threshold
 * bytes have been read back to back (each read continuing the one before), the prefetch thread loads the next prefetch_size bytes
 * into the cache on its own queue pair while the reader goes on. A new window is requested
 * when the reader is within half a window of the end of the last one, so a steady reader
 * finds its data loaded. A read that jumps elsewhere resets the detector. The queue of
 * requests is bounded; when it is full a request is dropped (readahead is only a hint).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "lib/common/thread.h"

static bool file_prefetch(const struct blobfs_file *f)
{
	if (f->o.prefetch)
		return f->o.prefetch > 0;
	return !f->fs->opts.no_prefetch;
}

void bfs_ra_note(struct blobfs_file *f, uint64_t off, uint64_t len, uint64_t size)
{
	struct blobfs *fs = f->fs;
	if (!fs->ra_on || !file_prefetch(f) || len == 0)
		return;
	uint64_t threshold = f->o.prefetch_threshold ? f->o.prefetch_threshold : fs->opts.prefetch_threshold;
	uint64_t psize = f->o.prefetch_size ? f->o.prefetch_size : fs->opts.prefetch_size;
	struct bfs_ra *ra = &f->ra;
	uint64_t start = 0, end = 0;
	pthread_mutex_lock(&ra->lock);
	/* Only reads that continue the previous one count: one large read alone is not a
	 * sequential stream (random 1 MiB reads would otherwise each prefetch the next MiB). */
	if (off <= ra->last_end && off + len > ra->last_end && off >= ra->last_start) {
		ra->seq_bytes += off + len - ra->last_end;
	} else {
		ra->seq_bytes = 0;
		ra->window_end = 0;
	}
	ra->last_start = off;
	ra->last_end = off + len;
	if (ra->seq_bytes >= threshold && ra->last_end < size &&
	    ra->window_end < ra->last_end + psize / 2) {
		start = BFS_MAX(ra->last_end, ra->window_end);
		end = BFS_MIN(ra->last_end + psize, size);
		if (end > start)
			ra->window_end = end;
	}
	pthread_mutex_unlock(&ra->lock);
	if (end <= start)
		return;
	pthread_mutex_lock(&fs->ra_lock);
	if (fs->ra_n < sizeof(fs->ra_q) / sizeof(fs->ra_q[0]) && !fs->ra_stop) {
		bfs_inode_ref(f->in);
		uint32_t slot = (fs->ra_head + fs->ra_n) % (uint32_t)(sizeof(fs->ra_q) / sizeof(fs->ra_q[0]));
		fs->ra_q[slot] = (struct bfs_ra_req){ f->in, start, end - start };
		fs->ra_n++;
		pthread_cond_broadcast(&fs->ra_cv);
	}
	pthread_mutex_unlock(&fs->ra_lock);
}

static void *ra_main(void *arg)
{
	struct blobfs *fs = arg;
	int rc = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	pthread_mutex_lock(&fs->ra_lock);
	fs->ra_ready = true; /* bfs_ra_start waits for this: the queue pair exists now */
	pthread_cond_broadcast(&fs->ra_cv);
	for (;;) {
		while (!fs->ra_n && !fs->ra_stop)
			pthread_cond_wait(&fs->ra_cv, &fs->ra_lock);
		if (!fs->ra_n) {
			/* woken by a waiter's broadcast, or stopping with nothing queued */
			if (fs->ra_stop)
				break;
			continue;
		}
		struct bfs_ra_req r = fs->ra_q[fs->ra_head];
		fs->ra_head = (fs->ra_head + 1) % (uint32_t)(sizeof(fs->ra_q) / sizeof(fs->ra_q[0]));
		fs->ra_n--;
		bool stopping = fs->ra_stop;
		fs->ra_busy = true;
		pthread_mutex_unlock(&fs->ra_lock);
		if (q && !stopping) {
			pthread_rwlock_rdlock(&r.in->rw);
			bfs_load_range(fs, q, r.in, r.off, r.len, true);
			pthread_rwlock_unlock(&r.in->rw);
		}
		bfs_inode_unref(fs, r.in);
		pthread_mutex_lock(&fs->ra_lock);
		fs->ra_busy = false;
		pthread_cond_broadcast(&fs->ra_cv);
	}
	pthread_mutex_unlock(&fs->ra_lock);
	return NULL;
}

int bfs_ra_start(struct blobfs *fs)
{
	fs->ra_stop = false;
	int rc = unvme_thread_start(&fs->ra_thread, ra_main, fs);
	if (rc)
		return bfs_err(-rc, "cannot start the readahead thread");
	fs->ra_on = true;
	pthread_mutex_lock(&fs->ra_lock);
	while (!fs->ra_ready)
		pthread_cond_wait(&fs->ra_cv, &fs->ra_lock);
	pthread_mutex_unlock(&fs->ra_lock);
	return 0;
}

void bfs_ra_stop(struct blobfs *fs)
{
	if (!fs->ra_on)
		return;
	pthread_mutex_lock(&fs->ra_lock);
	fs->ra_stop = true;
	pthread_cond_broadcast(&fs->ra_cv);
	pthread_mutex_unlock(&fs->ra_lock);
	pthread_join(fs->ra_thread, NULL);
	fs->ra_on = false;
}

void bfs_ra_wait_idle(struct blobfs *fs)
{
	pthread_mutex_lock(&fs->ra_lock);
	while (fs->ra_on && (fs->ra_n || fs->ra_busy))
		pthread_cond_wait(&fs->ra_cv, &fs->ra_lock);
	pthread_mutex_unlock(&fs->ra_lock);
}
