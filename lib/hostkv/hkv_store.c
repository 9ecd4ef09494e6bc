/* SPDX-License-Identifier: BSD-3-Clause */
/* The host KV engine's operations (hkv.h) and options. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostkv/hkv_internal.h"
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
	zdev_close(s->z);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

static bool key_ok(uint8_t ks, uint8_t klen)
{
	return ks <= 1 && klen >= 1;
}

/* The value of entry e (len bytes from off) into dst. Lock held. */
static int read_ent(struct hkv *s, const struct hkv_ent *e, uint32_t off, uint32_t len, void *dst)
{
	if (e->addr & HKV_IN_BUF) {
		memcpy(dst, s->user.data + (e->addr & ~HKV_IN_BUF) + off, len);
		return 0;
	}
	return hkv_read_value(s, e->addr + off, len, dst);
}

static int durable_end(struct hkv *s, bool durable, int rc)
{
	if (!rc && durable) {
		rc = hkv_seal(s, &s->user);
		if (!rc)
			rc = zdev_flush(s->z);
	}
	return rc;
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
	struct hkv_ent *e = hkv_index_find(&s->ix, ks, key, klen);
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
	uint32_t boff;
	if (rc == HKV_OK) {
		int r = hkv_append(s, &s->user, HKV_REC_PUT, ks, key, klen, val, len, 0, &boff);
		rc = rc_of(r);
	}
	if (rc == HKV_OK) {
		/* the append may have sealed the buffer: e's address is current only now */
		e = hkv_index_find(&s->ix, ks, key, klen);
		if (e)
			hkv_forget(s, e);
		else if ((e = hkv_index_add(&s->ix, ks, key, klen)) != NULL)
			s->nr_keys_ks[ks]++;
		if (!e) {
			rc = HKV_NOMEM;
		} else {
			e->addr = HKV_IN_BUF | boff;
			e->vlen = len;
			s->used = s->used - ob + nb;
			s->host_bytes += len;
			rc = rc_of(durable_end(s, durable, 0));
		}
	}
	pthread_rwlock_unlock(&s->lock);
	free(merged);
	return rc;
}

int hkv_get(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen, uint32_t off,
	    const struct iovec *iov, unsigned iovcnt, uint32_t max, uint32_t *size, uint32_t *copied)
{
	*copied = 0;
	if (!key_ok(ks, klen))
		return HKV_NOENT;
	pthread_rwlock_rdlock(&s->lock);
	const struct hkv_ent *e = hkv_index_find(&s->ix, ks, key, klen);
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
	struct hkv_ent *e = hkv_index_find(&s->ix, ks, key, klen);
	int rc = HKV_NOENT;
	if (e) {
		uint32_t boff;
		rc = rc_of(hkv_append(s, &s->user, HKV_REC_DEL, ks, key, klen, NULL, 0, 0, &boff));
		if (rc == HKV_OK) {
			e = hkv_index_find(&s->ix, ks, key, klen); /* a seal may have moved it */
			hkv_forget(s, e);
			s->used -= hkv_rec_bytes(e->klen, e->vlen);
			s->nr_keys_ks[ks]--;
			hkv_index_remove(&s->ix, e);
			rc = rc_of(durable_end(s, durable, 0));
		}
	}
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

bool hkv_exist(struct hkv *s, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	if (!key_ok(ks, klen))
		return false;
	pthread_rwlock_rdlock(&s->lock);
	bool found = hkv_index_find(&s->ix, ks, key, klen) != NULL;
	pthread_rwlock_unlock(&s->lock);
	return found;
}

int hkv_flush(struct hkv *s)
{
	pthread_rwlock_wrlock(&s->lock);
	int rc = durable_end(s, true, 0);
	pthread_rwlock_unlock(&s->lock);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

int hkv_erase(struct hkv *s)
{
	pthread_rwlock_wrlock(&s->lock);
	struct zdev *z = s->z;
	int rc = 0;
	s->user.nrec = s->user.dir_used = s->user.data_used = 0;
	s->user.zone = s->gcs.zone = UINT32_MAX;
	for (uint32_t i = 1; i < z->nzones && !rc; i++) {
		if (s->role[i] == HKV_Z_BAD)
			continue;
		if (z->state[i] != ZDEV_EMPTY)
			rc = zdev_reset(z, i);
		if (s->role[i] != HKV_Z_FREE)
			s->nfree++;
		s->role[i] = HKV_Z_FREE;
		s->live[i] = 0;
		s->first_seq[i] = 0;
	}
	hkv_index_free(&s->ix);
	if (!rc)
		rc = hkv_index_init(&s->ix);
	s->used = 0;
	s->nr_keys_ks[0] = s->nr_keys_ks[1] = 0;
	if (!rc)
		rc = zdev_flush(z);
	pthread_rwlock_unlock(&s->lock);
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
		if (e->ks != ks || (filter && !filter(e->key, e->klen, arg)))
			continue;
		rc = keylist_add(&l, e->key, e->klen);
	}
	pthread_rwlock_unlock(&s->lock);
	return keylist_finish(&l, rc, buf, len, count);
}
