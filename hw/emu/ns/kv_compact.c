/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compaction of a file-backed KV namespace: overwritten and deleted records are dead weight
 * in the append-only log. When they outweigh the live ones, the live records are copied (as
 * they are: same bytes, same CRC) into a new file, which is made durable and then renamed
 * over the old one. Either name is a complete log at every moment, so a crash during the
 * copy loses nothing: the old log is still in place, and a leftover ".compact" file is
 * simply overwritten next time. The copy counts as medium writes (write amplification).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "hw/emu/ns/kv_store_int.h"
#include "lib/common/crash_point.h"
#include "lib/common/fdio.h"

#define COMPACT_MIN_DEAD (1u << 20)   /* below this, a rewrite costs more than it frees */
#define COPY_BUF (1u << 20)
#define BUF_SIZE (COPY_BUF + KV_MAX_VALUE + 512u) /* a batch plus the largest record */

bool kv_compact_due(const struct kv_store *s)
{
	return s->file && s->dead >= COMPACT_MIN_DEAD && s->dead >= s->live;
}

int kv_sync_dir(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	int dfd = open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int r = fsync(dfd) != 0 ? -errno : 0;
	close(dfd);
	return r;
}

/* Copies every live record into fd from KV_SB_SIZE on; newloc[i] = new offset of the i-th
 * entry in index order. */
static int copy_live(struct kv_store *s, int fd, uint64_t *newloc, uint64_t *end)
{
	uint8_t *buf = malloc(BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	uint64_t out = KV_SB_SIZE;
	size_t fill = 0, i = 0;
	int r = 0;
	KV_INDEX_FOREACH(&s->ix, e) {
		uint64_t size = kv_rec_size(e->klen, e->vlen);
		if (fill + size > BUF_SIZE) {
			r = fd_pwrite_all(fd, buf, fill, out);
			if (r)
				goto done;
			out += fill;
			fill = 0;
		}
		/* the whole record, header included: it is read back and its CRC still holds */
		r = fd_pread_all(s->fd, buf + fill, size, e->loc);
		if (r)
			goto done;
		newloc[i++] = out + fill;
		fill += size;
	}
	r = fd_pwrite_all(fd, buf, fill, out);
	out += fill;
done:
	free(buf);
	*end = out;
	return r;
}

int kv_compact(struct kv_store *s)
{
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.compact", s->path);
	int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	uint64_t *newloc = malloc((s->ix.n ? s->ix.n : 1) * sizeof(*newloc));
	int r = newloc ? 0 : -ENOMEM;
	uint64_t end = 0;
	if (!r && flock(fd, LOCK_EX | LOCK_NB) != 0)
		r = -errno;
	if (!r)
		r = kv_file_init(fd);
	if (!r)
		r = copy_live(s, fd, newloc, &end);
	CRASH_POINT("kv.compact.copied");
	if (!r && fdatasync(fd) != 0)
		r = -errno;
	CRASH_POINT("kv.compact.before_rename");
	if (!r && rename(tmp, s->path) != 0)
		r = -errno;
	if (!r)
		CRASH_POINT("kv.compact.after_rename");
	if (r) {
		close(fd);
		unlink(tmp);
		free(newloc);
		return r;
	}
	/* the new log holds every record appended so far, synced; with its name synced too, a
	 * power cut keeps it. Without that the old log may come back: refuse writes from now on
	 * rather than acknowledge stores a power cut could take back */
	if (kv_sync_dir(s->path) == 0)
		kv_store_mark_synced(s);
	else
		atomic_store_explicit(&s->failed, true, memory_order_relaxed);
	close(s->fd);             /* drops the old file's lock: its name is gone already */
	s->fd = fd;
	size_t i = 0;
	KV_INDEX_FOREACH(&s->ix, e)
		e->loc = newloc[i++];
	free(newloc);
	s->media_bytes += end - KV_SB_SIZE;
	s->tail = end;
	s->dead = 0;
	s->compactions++;
	return 0;
}
