/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The KV storage engine: capacity accounting, option checks and locking around the index
 * (kv_index.c) and, when file-backed, the log (kv_file.c, kv_compact.c).
 *
 * Capacity counts each live key as the size of its record (header + key + value, 8-byte
 * aligned) in both engines, so a namespace fills at the same point in memory and in a file,
 * and deleting keys lowers utilization at once (the file's dead space is reclaimed by
 * compaction, which runs on its own when dead records outweigh live ones).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "hw/emu/emu_device.h"
#include "lib/common/keylist.h"
#include "hw/emu/ns/kv_store_int.h"
#include "hw/emu/ns/ns_internal.h"
#include "lib/common/crash_point.h"

int kv_store_open(uint64_t capacity, const char *path, struct kv_store **out, char *err,
		  size_t errlen)
{
	*out = NULL;
	struct kv_store *s = calloc(1, sizeof(*s));
	if (!s || kv_index_init(&s->ix) != 0) {
		free(s);
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->capacity = capacity;
	s->fd = -1;
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->sync_lock, NULL);
	pthread_cond_init(&s->sync_done, NULL);
	kv_vmem_init(&s->vmem);
	/* the device's memory for values exists from the start (values are held in memory
	 * whether or not a log file backs them) */
	(void)kv_vmem_reserve(&s->vmem, capacity);
	if (path && *path) {
		s->file = true;
		snprintf(s->path, sizeof(s->path), "%s", path);
		bool existed = access(path, F_OK) == 0;
		s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		int r = 0;
		if (s->fd < 0) {
			r = -errno;
			emu_ns_set_error(err, errlen, "%s: %s", path, strerror(errno));
		} else if (flock(s->fd, LOCK_EX | LOCK_NB) != 0) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			emu_ns_set_error(err, errlen, "%s is in use by another emulated device", path);
		} else {
			/* a compaction cut short by a crash leaves its half-written copy behind */
			char stale[PATH_MAX + 16];
			snprintf(stale, sizeof(stale), "%s.compact", path);
			unlink(stale);
			r = kv_file_load(s, err, errlen);
			/* a new log must keep its name through a power loss, or every store
			 * made durable in it would go with it */
			if (!r && !existed)
				(void)kv_sync_dir(path);
		}
		if (r) {
			kv_store_close(s);
			return r;
		}
	}
	*out = s;
	return 0;
}

void kv_store_close(struct kv_store *s)
{
	if (!s)
		return;
	if (s->ext)
		s->ext->close(s->ext_ctx);
	kv_index_free(&s->ix);
	kv_vmem_destroy(&s->vmem);   /* every value of the memory engine with it */
	if (s->fd >= 0)
		close(s->fd);
	pthread_rwlock_destroy(&s->lock);
	pthread_mutex_destroy(&s->sync_lock);
	pthread_cond_destroy(&s->sync_done);
	free(s);
}

bool kv_store_persistent(const struct kv_store *s)
{
	return s->file || s->ext;
}

uint64_t kv_store_capacity(const struct kv_store *s)
{
	return s->capacity;
}

uint8_t *kv_store_value_alloc(struct kv_store *s, uint32_t len)
{
	if (s->ext)
		return malloc(len ? len : 1);
	return kv_vmem_alloc(&s->vmem, len);
}

void kv_store_value_free(struct kv_store *s, uint8_t *val, uint32_t len)
{
	if (s->ext) {
		free(val);
		return;
	}
	kv_vmem_free(&s->vmem, val, len);
}

/* Unlinked entry e goes away with its value (the memory engine's). */
static void ent_drop(struct kv_store *s, struct kv_ent *e)
{
	if (!e)
		return;
	if (!s->file)
		kv_store_value_free(s, e->val, e->vlen);
	kv_ent_free(e);
}

/* Builds the value a store with an offset leaves: the old bytes with [off, off+len)
 * replaced. Returns the merged buffer (new size in *nlen) or NULL; val stays the caller's. */
static uint8_t *merge(struct kv_store *s, const struct kv_ent *old, const uint8_t *val,
		      uint32_t len, uint32_t off, uint32_t *nlen, enum kv_rc *rc)
{
	uint32_t size = off + len > old->vlen ? off + len : old->vlen;
	uint8_t *m = size ? kv_store_value_alloc(s, size) : NULL;
	if (size && !m) {
		*rc = KV_NOMEM;
		return NULL;
	}
	if (s->file) {
		if (old->vlen && kv_file_read_value(s, old->loc, old->klen, 0, m, old->vlen) != 0) {
			kv_store_value_free(s, m, size);
			*rc = KV_EIO;
			return NULL;
		}
	} else if (old->vlen) {
		memcpy(m, old->val, old->vlen);
	}
	if (len)
		memcpy(m + off, val, len);
	*nlen = size;
	*rc = KV_OK;
	return m;
}

enum kv_rc kv_store_put(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			uint8_t *val, uint32_t len, uint32_t off, unsigned flags, bool durable)
{
	if (s->ext)
		return kv_ext_put(s, ks, key, klen, val, len, off, flags, durable);
	enum kv_rc rc = KV_OK;
	if ((uint64_t)off + len > KV_MAX_VALUE) {
		kv_store_value_free(s, val, len);
		return KV_TOOBIG;
	}
	struct kv_ent *e = kv_ent_new(ks, key, klen);
	if (!e) {
		kv_store_value_free(s, val, len);
		return KV_NOMEM;
	}
	pthread_rwlock_wrlock(&s->lock);
	struct kv_ent *old = kv_index_find(&s->ix, ks, key, klen);
	if ((flags & KV_PUT_MUST_EXIST) && !old) {
		rc = KV_NOENT;
		goto fail;
	}
	if ((flags & KV_PUT_MUST_NOT_EXIST) && old) {
		rc = KV_EXISTS;
		goto fail;
	}
	if (off) {
		if (!old || off > old->vlen) {
			rc = KV_BADOFF;
			goto fail;
		}
		uint32_t mlen;
		uint8_t *m = merge(s, old, val, len, off, &mlen, &rc);
		if (!m && rc != KV_OK)
			goto fail;
		kv_store_value_free(s, val, len);
		val = m;
		len = mlen;
	}
	uint64_t size = kv_rec_size(klen, len);
	uint64_t osize = old ? kv_rec_size(old->klen, old->vlen) : 0;
	if (s->live - osize + size > s->capacity) {
		rc = KV_NOSPC;
		goto fail;
	}
	e->vlen = len;
	if (s->file) {
		if (atomic_load_explicit(&s->failed, memory_order_relaxed)) {
			rc = KV_EIO;
			goto fail;
		}
		CRASH_POINT("kv.put.before_append");
		if (kv_file_append(s, KV_REC_PUT, ks, key, klen, val, len, &e->loc) != 0) {
			rc = KV_EIO;
			goto fail;
		}
		if (crash_point_due("kv.put.torn")) {
			/* what a crash in the middle of the append leaves: half a record */
			int ignored = ftruncate(s->fd, (off_t)(e->loc + size / 2));
			(void)ignored;
			crash_point_die("kv.put.torn");
		}
		CRASH_POINT("kv.put.before_sync");
		if (durable && fdatasync(s->fd) != 0) {
			/* failed, so it must not come back at the next open */
			kv_file_revoke(s, e->loc);
			rc = KV_EIO;
			goto fail;
		}
		CRASH_POINT("kv.put.before_index");
		atomic_fetch_add_explicit(&s->appended, 1, memory_order_relaxed);
		kv_store_value_free(s, val, len);
		s->dead += osize;
	} else {
		e->val = val;
		s->media_bytes += size;
	}
	val = NULL;
	s->live += size - osize;
	s->host_bytes += (uint64_t)klen + len;
	old = kv_index_put(&s->ix, e);
	if (old)
		ent_drop(s, old);
	else
		s->nr_keys_ks[ks]++;
	if (kv_compact_due(s))
		(void)kv_compact(s); /* on failure the old log simply stays; retried later */
	pthread_rwlock_unlock(&s->lock);
	return KV_OK;
fail:
	pthread_rwlock_unlock(&s->lock);
	kv_store_value_free(s, val, len);
	kv_ent_free(e);
	return rc;
}

enum kv_rc kv_store_get(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			uint32_t off, const struct emu_xfer *x, uint32_t max, uint32_t *size,
			uint32_t *copied)
{
	if (s->ext)
		return kv_ext_get(s, ks, key, klen, off, x, max, size, copied);
	enum kv_rc rc = KV_OK;
	*copied = 0;
	pthread_rwlock_rdlock(&s->lock);
	const struct kv_ent *e = kv_index_find(&s->ix, ks, key, klen);
	if (!e) {
		rc = KV_NOENT;
		goto out;
	}
	*size = e->vlen;
	if (off > e->vlen) {
		rc = KV_BADOFF;
		goto out;
	}
	uint32_t n = e->vlen - off < max ? e->vlen - off : max;
	if (n) {
		if (s->file) {
			if (kv_file_read_value_xfer(s, e->loc, e->klen, off, x, n) != 0)
				rc = KV_EIO;
		} else {
			emu_xfer_to_host(x, e->val + off, n);
		}
	}
	if (rc == KV_OK)
		*copied = n;
out:
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

enum kv_rc kv_store_del(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
			bool durable)
{
	if (s->ext)
		return (enum kv_rc)s->ext->del(s->ext_ctx, ks, key, klen, durable);
	enum kv_rc rc = KV_OK;
	pthread_rwlock_wrlock(&s->lock);
	struct kv_ent *e = kv_index_find(&s->ix, ks, key, klen);
	if (!e) {
		rc = KV_NOENT;
		goto out;
	}
	uint64_t osize = kv_rec_size(e->klen, e->vlen);
	if (s->file) {
		uint64_t at;
		if (atomic_load_explicit(&s->failed, memory_order_relaxed) ||
		    kv_file_append(s, KV_REC_DEL, ks, key, klen, NULL, 0, &at) != 0) {
			rc = KV_EIO;
			goto out;
		}
		CRASH_POINT("kv.del.before_sync");
		if (durable && fdatasync(s->fd) != 0) {
			kv_file_revoke(s, at);
			rc = KV_EIO;
			goto out;
		}
		CRASH_POINT("kv.del.before_index");
		atomic_fetch_add_explicit(&s->appended, 1, memory_order_relaxed);
		s->dead += osize + kv_rec_size(klen, 0);
	}
	ent_drop(s, kv_index_remove(&s->ix, ks, key, klen));
	s->live -= osize;
	s->nr_keys_ks[ks]--;
	if (kv_compact_due(s))
		(void)kv_compact(s);
out:
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

bool kv_store_exist(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	if (s->ext)
		return s->ext->exist(s->ext_ctx, ks, key, klen);
	pthread_rwlock_rdlock(&s->lock);
	bool found = kv_index_find(&s->ix, ks, key, klen) != NULL;
	pthread_rwlock_unlock(&s->lock);
	return found;
}

void kv_store_mark_synced(struct kv_store *s)
{
	pthread_mutex_lock(&s->sync_lock);
	s->synced = atomic_load_explicit(&s->appended, memory_order_relaxed);
	pthread_mutex_unlock(&s->sync_lock);
}

int kv_store_flush(struct kv_store *s)
{
	if (s->ext)
		return s->ext->flush(s->ext_ctx);
	if (!s->file)
		return 0;
	/* every record appended so far, this caller's own included (appends count themselves
	 * before they return) */
	uint64_t want = atomic_load_explicit(&s->appended, memory_order_relaxed);
	int r = 0;
	pthread_mutex_lock(&s->sync_lock);
	while (s->synced < want) {
		if (atomic_load_explicit(&s->failed, memory_order_relaxed)) {
			r = -EIO;
			break;
		}
		if (s->syncing) {
			/* a sync is running, perhaps started before our record: wait for it, then
			 * for the one after it if needed (whoever finds none running starts it) */
			pthread_cond_wait(&s->sync_done, &s->sync_lock);
			continue;
		}
		s->syncing = true;
		pthread_mutex_unlock(&s->sync_lock);
		/* the read lock keeps compaction from swapping the descriptor meanwhile, and
		 * keeps appends out: everything counted is written */
		pthread_rwlock_rdlock(&s->lock);
		uint64_t target = atomic_load_explicit(&s->appended, memory_order_relaxed);
		int e = fdatasync(s->fd) != 0 ? -errno : 0;
		pthread_rwlock_unlock(&s->lock);
		pthread_mutex_lock(&s->sync_lock);
		s->syncing = false;
		if (e) {
			atomic_store_explicit(&s->failed, true, memory_order_relaxed);
			r = e;
		} else if (target > s->synced) {
			s->synced = target;
		}
		pthread_cond_broadcast(&s->sync_done);
		if (e)
			break;
	}
	pthread_mutex_unlock(&s->sync_lock);
	return r;
}

int kv_store_erase(struct kv_store *s)
{
	if (s->ext)
		return s->ext->erase(s->ext_ctx);
	int r = 0;
	pthread_rwlock_wrlock(&s->lock);
	if (s->file) {
		if (crash_point_due("kv.format.truncated")) {
			/* the old log is gone, the new superblock not written yet */
			int ignored = ftruncate(s->fd, 0);
			(void)ignored;
			crash_point_die("kv.format.truncated");
		}
		r = kv_file_init(s->fd);
		CRASH_POINT("kv.format.done");
		s->tail = KV_SB_SIZE;
		if (!r)
			kv_store_mark_synced(s); /* the log is empty and synced */
	} else {
		KV_INDEX_FOREACH(&s->ix, e)
			kv_store_value_free(s, e->val, e->vlen);
	}
	kv_index_clear(&s->ix);
	s->live = 0;
	s->dead = 0;
	s->nr_keys_ks[0] = s->nr_keys_ks[1] = 0;
	pthread_rwlock_unlock(&s->lock);
	return r;
}

void kv_store_get_stats(struct kv_store *s, struct kv_store_stats *st)
{
	if (s->ext) {
		kv_ext_stats(s, st);
		return;
	}
	pthread_rwlock_rdlock(&s->lock);
	st->capacity = s->capacity;
	st->used = s->live;
	st->nr_keys_ks[0] = s->nr_keys_ks[0];
	st->nr_keys_ks[1] = s->nr_keys_ks[1];
	st->nr_keys = s->nr_keys_ks[0] + s->nr_keys_ks[1];
	st->host_bytes = s->host_bytes;
	st->media_bytes = s->media_bytes;
	st->compactions = s->compactions;
	st->file_size = s->file ? s->tail : 0;
	st->damaged_spans = s->damaged_spans;
	st->damaged_bytes = s->damaged_bytes;
	pthread_rwlock_unlock(&s->lock);
}

int kv_store_keys(struct kv_store *s, uint8_t ks, kv_key_filter filter, const void *arg,
		  uint8_t **buf, size_t *len, size_t *count)
{
	if (s->ext)
		return s->ext->keys(s->ext_ctx, ks, filter, arg, buf, len, count);
	pthread_rwlock_rdlock(&s->lock);
	struct keylist l;
	int r = keylist_init(&l);
	KV_INDEX_FOREACH(&s->ix, e) {
		if (r)
			break;
		if (e->ks != ks || (filter && !filter(e->key, e->klen, arg)))
			continue;
		r = keylist_add(&l, e->key, e->klen);
	}
	pthread_rwlock_unlock(&s->lock);
	return keylist_finish(&l, r, buf, len, count);
}
