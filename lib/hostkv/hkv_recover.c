/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine on the media: the superblock, creating a store, and recovery: every
 * zone's units are walked (header and directory, and the last unit's data, whose hash tells
 * whether a crash cut it short), their directories replayed in sequence order into the
 * index, and the live bytes of each zone counted from it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/hostkv/hkv_internal.h"


struct unit_rec {
	uint64_t seq;
	uint64_t data_base;  /* device byte address of the data area */
	uint32_t nrec, dir_bytes;
	uint8_t *dir;
};

struct scan {
	struct unit_rec *u;
	size_t n, cap;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct unit_rec *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Walks the units of zone zone; *end = the pages they cover. */
static int scan_zone(struct hkv *s, uint32_t zone, uint8_t *buf, struct scan *sc, uint64_t *end)
{
	struct zdev *z = s->z;
	uint64_t limit = z->zoned ? z->wp[zone] : z->zcap_pages, off = 0, last_seq = 0;
	while (off + 1 <= limit) {
		if (zdev_read(z, zdev_page(z, zone, off), buf, 1) != 0)
			break;
		struct hkv_unit_hdr h;
		memcpy(&h, buf, sizeof(h));
		((struct hkv_unit_hdr *)buf)->hdr_hash = 0;
		if (h.magic != HKV_UNIT_MAGIC || h.instance != s->instance ||
		    h.hdr_hash != zdev_hash64(buf, HKV_PAGE, 0) || h.seq <= last_seq ||
		    h.dir_pages > HKV_DIR_PAGES || h.dir_bytes > h.dir_pages * HKV_PAGE ||
		    (uint64_t)h.data_pages * HKV_PAGE > HKV_DATA_MAX ||
		    off + 1 + h.dir_pages + h.data_pages > limit)
			break;
		if (h.dir_pages && zdev_read(z, zdev_page(z, zone, off + 1), buf + HKV_PAGE, h.dir_pages) != 0)
			break;
		if (zdev_hash64(buf + HKV_PAGE, (size_t)h.dir_pages * HKV_PAGE, h.seq) != h.dir_hash)
			break;
		/* the data of the zone's last unit may have been cut short */
		uint64_t next = off + 1 + h.dir_pages + h.data_pages;
		bool last = next + 1 > limit;
		if (!last) {
			uint8_t probe[HKV_PAGE];
			uint8_t *p = buf + (size_t)(1 + HKV_DIR_PAGES) * HKV_PAGE;
			last = zdev_read(z, zdev_page(z, zone, next), p, 1) != 0;
			memcpy(probe, p, sizeof(probe));
			const struct hkv_unit_hdr *nh = (const struct hkv_unit_hdr *)probe;
			last = last || nh->magic != HKV_UNIT_MAGIC || nh->instance != s->instance;
		}
		if (last && h.data_pages) {
			uint8_t *data = unvme_dma_alloc((size_t)h.data_pages * HKV_PAGE, HKV_PAGE);
			bool good = data && zdev_read(z, zdev_page(z, zone, off + 1 + h.dir_pages), data,
						      h.data_pages) == 0 &&
				    zdev_sum64(data, (size_t)h.data_pages * HKV_PAGE, h.seq) == h.data_hash;
			unvme_dma_free(data);
			if (!good)
				break;
		}
		if (sc->n == sc->cap) {
			size_t cap = sc->cap ? sc->cap * 2 : 256;
			struct unit_rec *u = realloc(sc->u, cap * sizeof(*u));
			if (!u)
				return -ENOMEM;
			sc->u = u;
			sc->cap = cap;
		}
		uint8_t *dir = malloc(h.dir_bytes ? h.dir_bytes : 1);
		if (!dir)
			return -ENOMEM;
		memcpy(dir, buf + HKV_PAGE, h.dir_bytes);
		sc->u[sc->n++] = (struct unit_rec){ .seq = h.seq, .nrec = h.nrec, .dir_bytes = h.dir_bytes,
						    .dir = dir,
						    .data_base = zdev_page(z, zone, off + 1 + h.dir_pages) * HKV_PAGE };
		if (!s->first_seq[zone])
			s->first_seq[zone] = h.seq;
		s->mtime[zone] = h.seq;
		if (h.seq > s->seq)
			s->seq = h.seq;
		last_seq = h.seq;
		off = next;
	}
	*end = off;
	return 0;
}

static int replay(struct hkv *s, struct scan *sc)
{
	if (sc->n)
		qsort(sc->u, sc->n, sizeof(*sc->u), cmp_seq);
	int rc = 0;
	for (size_t k = 0; k < sc->n; k++) {
		struct unit_rec *u = &sc->u[k];
		uint32_t pos = 0;
		for (uint32_t i = 0; !rc && i < u->nrec && pos + HKV_DIRENT_HDR <= u->dir_bytes; i++) {
			const struct hkv_dirent *d = (const struct hkv_dirent *)(u->dir + pos);
			pos += hkv_dirent_size(d->klen);
			if (pos > u->dir_bytes || d->ks > 1)
				break;
			struct hkv_ent *e = hkv_index_find(&s->ix, d->ks, d->key, d->klen);
			if (d->type == HKV_REC_DEL) {
				if (e)
					hkv_index_remove(&s->ix, e);
				continue;
			}
			if (!e && !(e = hkv_index_add(&s->ix, d->ks, d->key, d->klen)))
				rc = -ENOMEM;
			else {
				e->addr = u->data_base + d->voff;
				e->vlen = d->vlen;
			}
		}
		free(u->dir);
	}
	s->recovered_units = sc->n;
	free(sc->u);
	return rc;
}

static int write_sb(struct hkv *s)
{
	struct zdev *z = s->z;
	uint8_t *p = unvme_dma_zalloc(HKV_PAGE, HKV_PAGE);
	if (!p)
		return -ENOMEM;
	struct hkv_sb *sb = (struct hkv_sb *)p;
	sb->magic = HKV_SB_MAGIC;
	sb->instance = s->instance;
	sb->version = HKV_VERSION;
	sb->op_pct = s->o.op_pct;
	sb->nzones = z->nzones;
	sb->zone_pages = z->zone_pages;
	sb->zcap_pages = z->zcap_pages;
	sb->hash = zdev_hash64(sb, sizeof(*sb) - sizeof(sb->hash), 0);
	uint64_t at;
	int rc = zdev_reset(z, 0);
	if (!rc)
		rc = zdev_append(z, 0, p, 1, &at);
	if (!rc)
		rc = zdev_flush(z);
	unvme_dma_free(p);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

static bool read_sb(struct hkv *s, struct hkv_sb *out)
{
	struct zdev *z = s->z;
	if (z->state[0] == ZDEV_OFFLINE || (z->zoned && z->wp[0] == 0))
		return false;
	uint8_t *p = unvme_dma_alloc(HKV_PAGE, HKV_PAGE);
	bool ok = p && zdev_read(z, 0, p, 1) == 0;
	if (ok) {
		memcpy(out, p, sizeof(*out));
		ok = out->magic == HKV_SB_MAGIC && out->version == HKV_VERSION &&
		     out->hash == zdev_hash64(out, sizeof(*out) - sizeof(out->hash), 0);
	}
	unvme_dma_free(p);
	return ok;
}

static int format(struct hkv *s, char *err, size_t errlen)
{
	struct zdev *z = s->z;
	for (uint32_t i = 0; i < z->nzones; i++) {
		if (z->state[i] == ZDEV_OFFLINE || (z->zoned && z->state[i] == ZDEV_EMPTY))
			continue;
		int rc = zdev_reset(z, i);
		if (rc)
			return zdev_fail(err, errlen, rc < 0 ? rc : -EIO, "cannot reset zone %u", i);
	}
	for (uint32_t i = 0; !z->wp_known && i < z->nzones; i++)
		zdev_set_wp(z, i, 0);
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	s->instance = v ? v : 1;
	s->seq = 0;
	int rc = write_sb(s);
	return rc ? zdev_fail(err, errlen, rc, "cannot write the superblock") : 0;
}

static int size_it(struct hkv *s, char *err, size_t errlen)
{
	struct zdev *z = s->z;
	uint32_t usable = 0;
	for (uint32_t i = 1; i < z->nzones; i++)
		usable += z->state[i] != ZDEV_OFFLINE;
	uint64_t zone_bytes = z->zcap_pages * HKV_PAGE;
	uint64_t unit = (1 + HKV_DIR_PAGES) * (uint64_t)HKV_PAGE + HKV_DATA_MAX;
	if (zone_bytes < 2 * unit)
		return zdev_fail(err, errlen, -EINVAL, "zones of %llu KiB are too small: the KV engine needs at "
			    "least %llu KiB (a 2 MiB value and its unit, twice)",
			    (unsigned long long)zone_bytes >> 10, (unsigned long long)(2 * unit) >> 10);
	s->gc_low = 2;
	uint64_t data = (uint64_t)usable * zone_bytes, spare = (uint64_t)(s->gc_low + 3) * zone_bytes;
	s->capacity = data * (100 - s->o.op_pct) / 100 / HKV_PAGE * HKV_PAGE;
	if (usable < s->gc_low + 4 || data < spare || s->capacity > data - spare)
		return zdev_fail(err, errlen, -EINVAL, "op=%u%% leaves %llu spare bytes in %u zones; collection "
			    "needs %llu: raise op or use smaller zones", s->o.op_pct,
			    (unsigned long long)(data - s->capacity), usable, (unsigned long long)spare);
	return 0;
}

int hkv_load(struct hkv *s, char *err, size_t errlen)
{
	struct zdev *z = s->z;
	if (z->nzones < 8)
		return zdev_fail(err, errlen, -EINVAL, "%u zones: the KV engine needs at least 8", z->nzones);
	s->role = calloc(z->nzones, 1);
	s->live = calloc(z->nzones, sizeof(*s->live));
	s->mtime = calloc(z->nzones, sizeof(*s->mtime));
	s->first_seq = calloc(z->nzones, sizeof(*s->first_seq));
	if (!s->role || !s->live || !s->mtime || !s->first_seq || hkv_index_init(&s->ix))
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	struct hkv_sb sb;
	bool have = read_sb(s, &sb);
	if (have && !s->o.format) {
		if (sb.nzones != z->nzones || sb.zone_pages != z->zone_pages || sb.zcap_pages != z->zcap_pages)
			return zdev_fail(err, errlen, -EINVAL, "the store was created on %u zones of %llu pages, the "
				    "device has %u of %llu", sb.nzones, (unsigned long long)sb.zone_pages,
				    z->nzones, (unsigned long long)z->zone_pages);
		if (s->o.op_given && s->o.op_pct != sb.op_pct)
			return zdev_fail(err, errlen, -EINVAL, "the store was created with op=%u, not op=%u: leave "
				    "op out, or format=1 to start over", sb.op_pct, s->o.op_pct);
		s->o.op_pct = sb.op_pct;
		s->instance = sb.instance;
	} else if (!s->o.format && !z->zoned) {
		/* a conventional namespace cannot tell "never written" from someone else's data */
		return zdev_fail(err, errlen, -EEXIST, "no KV store on this namespace: open with format=1 to "
			    "create one (everything on the namespace is lost)");
	} else if (!s->o.format) {
		for (uint32_t i = 0; i < z->nzones; i++)
			if (z->zoned && z->state[i] != ZDEV_EMPTY && z->state[i] != ZDEV_OFFLINE)
				return zdev_fail(err, errlen, -EEXIST, "the device holds data but no KV store (zone "
					    "%u is written): open with format=1 to erase it", i);
	}
	int rc = size_it(s, err, errlen);
	if (rc)
		return rc;
	bool fresh = !have || s->o.format;
	if (fresh && (rc = format(s, err, errlen)))
		return rc;
	uint8_t *buf = unvme_dma_alloc((size_t)(2 + HKV_DIR_PAGES) * HKV_PAGE, HKV_PAGE);
	if (!buf)
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	struct scan sc = { 0 };
	s->nfree = 0;
	s->role[0] = HKV_Z_SB;
	for (uint32_t i = 1; i < z->nzones && !rc; i++) {
		if (z->state[i] == ZDEV_OFFLINE) {
			s->role[i] = HKV_Z_BAD;
			continue;
		}
		uint64_t end = 0;
		if (!fresh && (z->state[i] != ZDEV_EMPTY || !z->zoned))
			rc = scan_zone(s, i, buf, &sc, &end);
		if (!z->zoned)
			zdev_set_wp(z, i, fresh ? 0 : end);
		if (!rc && end == 0 && z->wp[i] == 0) {
			s->role[i] = HKV_Z_FREE;
			s->nfree++;
		} else if (!rc) {
			rc = zdev_finish(z, i); /* written before: collection frees it */
			s->role[i] = HKV_Z_USED;
		}
	}
	unvme_dma_free(buf);
	if (!rc)
		rc = replay(s, &sc);
	else {
		for (size_t k = 0; k < sc.n; k++)
			free(sc.u[k].dir);
		free(sc.u);
	}
	if (rc)
		return zdev_fail(err, errlen, rc, "recovery failed: %s", strerror(-rc));
	HKV_INDEX_FOREACH(&s->ix, e) {
		uint64_t b = hkv_rec_bytes(e->klen, e->vlen);
		s->used += b;
		s->nr_keys_ks[e->ks]++;
		s->live[hkv_zone_of(s, e->addr)] += b;
	}
	return 0;
}
