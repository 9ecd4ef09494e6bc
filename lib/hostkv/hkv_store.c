/* SPDX-License-Identifier: BSD-3-Clause */
/* The host KV engine's operations (hkv.h) and options. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostkv/hkv_internal.h"
#include "lib/common/crash_point.h"
#include "lib/common/keylist.h"

void hkv_opts_default(struct hkv_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->op_pct = 20;
	o->gc = HKV_GC_GREEDY;
	o->unit_kib = 256;
}


int hkv_parse_opts(const char *s, struct hkv_opts *o, uint32_t *nsid, uint64_t *zone_bytes,
		   char *err, size_t errlen)
{
	char buf[512];
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "KV engine options too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *kv = strtok_r(buf, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, errlen, "KV engine option '%s' is not key=value", kv);
			return -EINVAL;
		}
		*eq = '\0';
		const char *v = eq + 1, *want = NULL;
		uint64_t n;
		if (!strcmp(kv, "op")) {
			if (zdev_parse_num(v, 1, 90, &n))
				want = "a percentage 1..90";
			o->op_pct = (uint32_t)n;
			o->op_given = true;
		} else if (!strcmp(kv, "gc")) {
			if (!strcmp(v, "greedy"))
				o->gc = HKV_GC_GREEDY;
			else if (!strcmp(v, "cb") || !strcmp(v, "cost-benefit"))
				o->gc = HKV_GC_COST_BENEFIT;
			else
				want = "greedy or cb";
		} else if (!strcmp(kv, "format")) {
			if (strcmp(v, "0") && strcmp(v, "1"))
				want = "0 or 1";
			o->format = v[0] == '1';
		} else if (!strcmp(kv, "unit")) {
			if (zdev_parse_num(v, 4, 2048, &n))
				want = "KiB 4..2048";
			o->unit_kib = (uint32_t)n;
		} else if (!strcmp(kv, "nsid")) {
			if (zdev_parse_num(v, 1, 0xfffffffeu, &n))
				want = "a namespace id";
			*nsid = (uint32_t)n;
		} else if (!strcmp(kv, "zone")) {
			if (zdev_parse_num(v, 4096, 1ull << 40, &n) || n % 4096)
				want = "a size, a multiple of 4K";
			*zone_bytes = n;
		} else {
			snprintf(err, errlen, "unknown KV engine option '%s' (op, gc, format, unit, nsid, zone)", kv);
			return -EINVAL;
		}
		if (want) {
			snprintf(err, errlen, "KV engine option %s=%s: expected %s", kv, v, want);
			return -EINVAL;
		}
	}
	return 0;
}

int hkv_open(struct zdev *z, const struct hkv_opts *o, struct hkv **out, char *err, size_t errlen)
{
	*out = NULL;
	struct hkv *s = calloc(1, sizeof(*s));
	if (!s) {
		zdev_close(z);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->z = z;
	s->o = *o;
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->commit_lock, NULL);
	pthread_cond_init(&s->commit_done, NULL);
	int rc = hkv_stream_init(&s->user, false);
	if (!rc)
		rc = hkv_stream_init(&s->gcs, true);
	if (!rc && !(s->gc_val = malloc(HKV_MAX_VALUE)))
		rc = -ENOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory");
	else
		rc = hkv_load(s, err, errlen);
	if (rc) {
		hkv_close(s);
		return rc;
	}
	s->loaded = true;
	*out = s;
	return 0;
}

void hkv_close(struct hkv *s)
{
	if (!s)
		return;
	if (s->loaded)
		(void)hkv_flush(s);
	hkv_stream_free(&s->user);
	hkv_stream_free(&s->gcs);
	hkv_index_free(&s->ix);
	free(s->gc_val);
	free(s->role);
	free(s->live);
	free(s->mtime);
	free(s->first_seq);
	free(s->vend);
	zdev_close(s->z);
	pthread_rwlock_destroy(&s->lock);
	pthread_mutex_destroy(&s->commit_lock);
	pthread_cond_destroy(&s->commit_done);
	free(s);
}

static bool key_ok(uint8_t ks, uint8_t klen)
{
	return ks <= 1 && klen >= 1;
}

/* The value of entry e (len bytes from off) into dst. Lock held. */
static int read_ent(struct hkv *s, const struct hkv_ent *e, uint32_t off, uint32_t len, void *dst)
{
	if (hkv_in_buf(e->addr)) {
		memcpy(dst, s->user.data + hkv_buf_off(e->addr) + off, len);
		return 0;
	}
	return hkv_read_value(s, e->addr + off, len, dst);
}

static int rc_of(int rc)
{
	return rc == 0 ? HKV_OK : rc == -ENOSPC ? HKV_NOSPC : rc == -ENOMEM ? HKV_NOMEM : HKV_EIO;
}

int hkv_put(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, const uint8_t *val,
	    uint32_t len, uint32_t off, unsigned flags, bool durable)
{
	if (!key_ok(ks, klen))
		return HKV_NOENT;
	if ((uint64_t)off + len > HKV_MAX_VALUE)
		return HKV_TOOBIG;
	pthread_rwlock_wrlock(&s->lock);
	struct hkv_ent *e = hkv_live(hkv_index_find(&s->ix, ks, key, klen));
	int rc = HKV_OK;
	uint8_t *merged = NULL;
	if ((flags & HKV_MUST_EXIST) && !e)
		rc = HKV_NOENT;
	else if ((flags & HKV_MUST_NOT_EXIST) && e)
		rc = HKV_EXISTS;
	else if (off && (!e || off > e->vlen))
		rc = HKV_BADOFF;
	if (rc == HKV_OK && off) {
		/* a store at an offset keeps the value's other bytes */
		uint32_t size = off + len > e->vlen ? off + len : e->vlen;
		merged = malloc(size);
		if (!merged)
			rc = HKV_NOMEM;
		else if (read_ent(s, e, 0, e->vlen, merged) != 0)
			rc = HKV_EIO;
		else {
			memcpy(merged + off, val, len);
			val = merged;
			len = size;
		}
	}
	uint64_t nb = hkv_rec_bytes(klen, len), ob = e ? hkv_rec_bytes(e->klen, e->vlen) : 0;
	if (rc == HKV_OK && s->used - ob + nb > s->capacity)
		rc = HKV_NOSPC;
	if (rc == HKV_OK && s->failed)
		rc = HKV_EIO;
	uint32_t boff, rec;
	if (rc == HKV_OK) {
		int r = hkv_append(s, &s->user, HKV_REC_PUT, ks, key, klen, val, len, HKV_NO_ADDR,
				   &boff, &rec);
		rc = rc_of(r);
	}
	if (rc == HKV_OK) {
		/* the append may have sealed the buffer: e's address is current only now. The
		 * durable version this store supersedes stays pinned until it is committed. */
		e = hkv_index_find(&s->ix, ks, key, klen);
		if (e) {
			hkv_forget(s, e);
			s->user.src[rec] = hkv_in_buf(e->addr) ? s->user.src[hkv_buf_rec(e->addr)] : e->addr;
			if (hkv_is_tomb(e->addr))
				s->nr_keys_ks[ks]++; /* stored again after a delete in the buffer */
		} else if ((e = hkv_index_add(&s->ix, ks, key, klen)) != NULL) {
			s->nr_keys_ks[ks]++;
		}
		if (!e) {
			rc = HKV_NOMEM;
		} else {
			e->addr = hkv_buf_addr(rec, boff);
			e->vlen = len;
			s->used = s->used - ob + nb;
			s->host_bytes += len;
			atomic_fetch_add_explicit(&s->appended, 1, memory_order_relaxed);
		}
	}
	pthread_rwlock_unlock(&s->lock);
	free(merged);
	if (rc == HKV_OK && durable)
		rc = rc_of(hkv_flush(s));
	return rc;
}

int hkv_get(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, uint32_t off,
	    const struct iovec *iov, unsigned iovcnt, uint32_t max, uint32_t *size, uint32_t *copied)
{
	*copied = 0;
	if (!key_ok(ks, klen))
		return HKV_NOENT;
	pthread_rwlock_rdlock(&s->lock);
	const struct hkv_ent *e = hkv_live(hkv_index_find(&s->ix, ks, key, klen));
	int rc = HKV_OK;
	if (!e) {
		rc = HKV_NOENT;
	} else if (off > e->vlen) {
		*size = e->vlen;
		rc = HKV_BADOFF;
	} else {
		*size = e->vlen;
		uint32_t n = e->vlen - off < max ? e->vlen - off : max;
		if (n && iovcnt == 1 && iov[0].iov_len >= n) {
			if (read_ent(s, e, off, n, iov[0].iov_base) != 0)
				rc = HKV_EIO;
		} else if (n) {
			uint8_t *tmp = malloc(n);
			if (!tmp || read_ent(s, e, off, n, tmp) != 0) {
				rc = tmp ? HKV_EIO : HKV_NOMEM;
			} else {
				uint32_t done = 0;
				for (unsigned i = 0; i < iovcnt && done < n; i++) {
					uint32_t k = iov[i].iov_len < n - done ? (uint32_t)iov[i].iov_len : n - done;
					memcpy(iov[i].iov_base, tmp + done, k);
					done += k;
				}
			}
			free(tmp);
		}
		if (rc == HKV_OK)
			*copied = n;
	}
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

int hkv_del(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, bool durable)
{
	if (!key_ok(ks, klen))
		return HKV_NOENT;
	pthread_rwlock_wrlock(&s->lock);
	struct hkv_ent *e = hkv_live(hkv_index_find(&s->ix, ks, key, klen));
	int rc = HKV_NOENT;
	if (e && s->failed)
		rc = HKV_EIO;
	else if (e) {
		uint32_t boff, rec;
		rc = rc_of(hkv_append(s, &s->user, HKV_REC_DEL, ks, key, klen, NULL, 0, HKV_NO_ADDR,
				      &boff, &rec));
		if (rc == HKV_OK) {
			e = hkv_index_find(&s->ix, ks, key, klen); /* a seal may have moved it */
			hkv_forget(s, e);
			s->used -= hkv_rec_bytes(e->klen, e->vlen);
			s->nr_keys_ks[ks]--;
			/* a tombstone until the delete is written: the durable version stays pinned */
			s->user.src[rec] = hkv_in_buf(e->addr) ? s->user.src[hkv_buf_rec(e->addr)] : e->addr;
			e->addr = hkv_tomb_addr(rec);
			e->vlen = 0;
			atomic_fetch_add_explicit(&s->appended, 1, memory_order_relaxed);
		}
	}
	pthread_rwlock_unlock(&s->lock);
	if (rc == HKV_OK && durable)
		rc = rc_of(hkv_flush(s));
	return rc;
}

bool hkv_exist(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	if (!key_ok(ks, klen))
		return false;
	pthread_rwlock_rdlock(&s->lock);
	bool found = hkv_live(hkv_index_find(&s->ix, ks, key, klen)) != NULL;
	pthread_rwlock_unlock(&s->lock);
	return found;
}

/* Group commit: every store and delete appended before the call is durable when it returns.
 * One caller at a time writes the buffer as a unit and flushes the device, for everything
 * appended until then; callers arriving meanwhile wait for it, and one of them then commits
 * for all of them (their records went into the buffer while the first one flushed... or
 * before it started: then they are covered already). */
int hkv_flush(struct hkv *s)
{
	uint64_t want = atomic_load_explicit(&s->appended, memory_order_relaxed);
	int rc = 0;
	pthread_mutex_lock(&s->commit_lock);
	while (s->committed < want) {
		if (s->committing) {
			pthread_cond_wait(&s->commit_done, &s->commit_lock);
			continue;
		}
		s->committing = true;
		pthread_mutex_unlock(&s->commit_lock);
		pthread_rwlock_wrlock(&s->lock);
		uint64_t target = atomic_load_explicit(&s->appended, memory_order_relaxed);
		rc = hkv_seal(s, &s->user);
		if (!rc)
			CRASH_POINT("hkv.commit.sealed");
		if (!rc)
			rc = hkv_media_flush(s);
		if (!rc)
			s->commits++;
		pthread_rwlock_unlock(&s->lock);
		pthread_mutex_lock(&s->commit_lock);
		s->committing = false;
		if (!rc && target > s->committed)
			s->committed = target;
		pthread_cond_broadcast(&s->commit_done);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&s->commit_lock);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

/* Removes every key, atomically across a crash: an erase record is made durable first (in
 * the collector's stream: it may take the last free zone), then every other zone is reset.
 * Recovery replays the record like any other, so every unit before it is void whether or not
 * the resets happened, and finishes the resets the crash cut short. Until the record is
 * durable nothing changes: an erase that fails there leaves the store as it was, and its
 * record is dropped from the buffer (written by a later seal, it would void every store
 * acknowledged in between). */
int hkv_erase(struct hkv *s)
{
	pthread_rwlock_wrlock(&s->lock);
	struct zdev *z = s->z;
	int rc = s->failed ? -EIO : 0;
	uint32_t boff, rec;
	if (!rc)
		rc = hkv_append(s, &s->gcs, HKV_REC_ERASE, 0, (const uint8_t *)"", 0, NULL, 0,
				HKV_NO_ADDR, &boff, &rec);
	if (!rc)
		rc = hkv_seal(s, &s->gcs);
	if (!rc)
		rc = hkv_media_flush(s);
	uint32_t keep = s->gcs.zone;  /* the erase record's zone (still open) */
	if (!rc && keep == UINT32_MAX)
		rc = -EIO;
	if (rc) {
		s->gcs.nrec = s->gcs.dir_used = s->gcs.data_used = 0;
		pthread_rwlock_unlock(&s->lock);
		return rc < 0 ? rc : -EIO;
	}
	CRASH_POINT("hkv.erase.marked");
	/* the erase happened: what waits in the user buffer goes with everything else */
	s->user.nrec = s->user.dir_used = s->user.data_used = 0;
	s->user.zone = UINT32_MAX; /* reset below like the others */
	for (uint32_t i = 1; i < z->nzones; i++) {
		if (s->role[i] == HKV_Z_BAD || i == keep)
			continue;
		if (!rc && z->state[i] != ZDEV_EMPTY)
			rc = zdev_reset(z, i);
		if (rc) {
			/* the zone's state is unknown: nothing more is written until the next open,
			 * whose recovery finishes the erase */
			s->failed = true;
			break;
		}
		if (s->role[i] != HKV_Z_FREE)
			s->nfree++;
		s->role[i] = HKV_Z_FREE;
		s->live[i] = 0;
		s->first_seq[i] = 0;
		s->vend[i] = 0;
	}
	s->live[keep] = 0;
	hkv_index_free(&s->ix);
	int irc = hkv_index_init(&s->ix);
	if (!rc)
		rc = irc;
	s->used = 0;
	s->nr_keys_ks[0] = s->nr_keys_ks[1] = 0;
	if (!rc)
		rc = hkv_media_flush(s);
	pthread_rwlock_unlock(&s->lock);
	/* nothing buffered is left to commit */
	pthread_mutex_lock(&s->commit_lock);
	s->committed = atomic_load_explicit(&s->appended, memory_order_relaxed);
	pthread_mutex_unlock(&s->commit_lock);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

void hkv_usage(struct hkv *s, struct hkv_usage *u)
{
	pthread_rwlock_rdlock(&s->lock);
	u->capacity = s->capacity;
	u->used = s->used;
	u->nr_keys_ks[0] = s->nr_keys_ks[0];
	u->nr_keys_ks[1] = s->nr_keys_ks[1];
	u->nr_keys = s->nr_keys_ks[0] + s->nr_keys_ks[1];
	u->host_bytes = s->host_bytes;
	u->media_bytes = s->media_bytes;
	u->gc_bytes = s->gc_bytes;
	u->gc_runs = s->gc_runs;
	u->recovered_units = s->recovered_units;
	pthread_rwlock_unlock(&s->lock);
}

int hkv_keys(struct hkv *s, uint8_t ks, bool (*filter)(const uint8_t *key, uint8_t klen, const void *arg),
	     const void *arg, uint8_t **buf, size_t *len, size_t *count)
{
	pthread_rwlock_rdlock(&s->lock);
	struct keylist l;
	int rc = keylist_init(&l);
	HKV_INDEX_FOREACH(&s->ix, e) {
		if (rc)
			break;
		if (e->ks != ks || hkv_is_tomb(e->addr) || (filter && !filter(e->key, e->klen, arg)))
			continue;
		rc = keylist_add(&l, e->key, e->klen);
	}
	pthread_rwlock_unlock(&s->lock);
	return keylist_finish(&l, rc, buf, len, count);
}
