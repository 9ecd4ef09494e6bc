/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine on the media: the superblock, creating a store, and recovery. Every
 * zone's units are walked (header and directory hashes); the units a completed flush may not
 * have covered get their data checked (hkv_internal.h: epochs and durable marks), the first
 * that fails ends its zone; the kept directories are replayed in sequence order into the
 * index, an erase the crash cut short is finished, and the live bytes of each zone are
 * counted from the index.
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
	uint64_t seq, epoch, durable_seq;
	uint32_t zone;
	uint64_t off;        /* its first page in the zone */
	uint32_t head_pages, data_pages;
	uint64_t data_hash;
	uint64_t data_base;  /* device byte address of the data area */
	uint32_t nrec, dir_bytes;
	uint8_t *dir;
	bool dropped;
};

struct scan {
	struct unit_rec *u;
	size_t n, cap;
	uint64_t max_seq;    /* of every genuine header seen, kept or not */
};

static int cmp_seq(const void *a, const void *b)
{
	const struct unit_rec *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_epoch(const void *a, const void *b)
{
	const struct unit_rec *x = *(const struct unit_rec *const *)a, *y = *(const struct unit_rec *const *)b;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Walks the units of zone zone whose header and directory are intact, in order, until the
 * first that is not (or whose sequence number does not grow): the first pass. */
static int scan_zone(struct hkv *s, uint32_t zone, uint8_t *buf, struct scan *sc)
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
		    h.hdr_hash != zdev_hash64(buf, HKV_HDR_BYTES, 0))
			break;
		if (h.seq > sc->max_seq)
			sc->max_seq = h.seq;
		if (h.seq <= last_seq || h.head_pages == 0 || h.head_pages > HKV_HEAD_MAX ||
		    h.dir_bytes > h.head_pages * HKV_PAGE - HKV_HDR_BYTES || h.epoch > h.seq ||
		    h.durable_seq >= h.seq || (uint64_t)h.data_pages * HKV_PAGE > HKV_DATA_MAX ||
		    off + h.head_pages + h.data_pages > limit)
			break;
		if (h.head_pages > 1 &&
		    zdev_read(z, zdev_page(z, zone, off + 1), buf + HKV_PAGE, h.head_pages - 1) != 0)
			break;
		if (zdev_hash64(buf + HKV_HDR_BYTES, (size_t)h.head_pages * HKV_PAGE - HKV_HDR_BYTES, h.seq) !=
		    h.dir_hash)
			break;
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
		memcpy(dir, buf + HKV_HDR_BYTES, h.dir_bytes);
		sc->u[sc->n++] = (struct unit_rec){
			.seq = h.seq, .epoch = h.epoch, .durable_seq = h.durable_seq, .zone = zone,
			.off = off, .head_pages = h.head_pages, .data_pages = h.data_pages,
			.data_hash = h.data_hash, .nrec = h.nrec, .dir_bytes = h.dir_bytes, .dir = dir,
			.data_base = zdev_page(z, zone, off + h.head_pages) * HKV_PAGE };
		last_seq = h.seq;
		off += h.head_pages + h.data_pages;
	}
	return 0;
}

static bool data_intact(struct hkv *s, const struct unit_rec *u)
{
	if (!u->data_pages)
		return true;
	uint8_t *data = unvme_dma_alloc((size_t)u->data_pages * HKV_PAGE, HKV_PAGE);
	bool good = data && zdev_read(s->z, u->data_base / HKV_PAGE, data, u->data_pages) == 0 &&
		    zdev_sum64(data, (size_t)u->data_pages * HKV_PAGE, u->seq) == u->data_hash;
	unvme_dma_free(data);
	return good;
}

/* The second pass: the units a completed flush covered are trusted; every other one has its
 * data checked, and the first that fails drops itself and everything after it in its zone. */
static int vouch(struct hkv *s, struct scan *sc)
{
	if (!sc->n)
		return 0;
	struct unit_rec **by = malloc(sc->n * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t k = 0; k < sc->n; k++)
		by[k] = &sc->u[k];
	qsort(by, sc->n, sizeof(*by), cmp_epoch);
	for (size_t a = 0, b; a < sc->n; a = b) {
		uint64_t mark = 0;
		for (b = a; b < sc->n && by[b]->epoch == by[a]->epoch; b++)
			if (by[b]->durable_seq > mark)
				mark = by[b]->durable_seq;
		for (size_t k = a; k < b; k++) {
			struct unit_rec *u = by[k];
			if (u->seq <= mark)
				continue;
			s->checked_units++;
			if (!data_intact(s, u))
				u->dropped = true;
		}
	}
	free(by);
	/* units are in zone order within each zone (the first pass): drop the rest of a zone */
	uint32_t cut_zone = UINT32_MAX;
	for (size_t k = 0; k < sc->n; k++) {
		struct unit_rec *u = &sc->u[k];
		if (u->zone == cut_zone || u->dropped) {
			cut_zone = u->zone;
			u->dropped = true;
			s->dropped_units++;
		}
	}
	return 0;
}

/* Every kept unit's records into the index in sequence order; *erased = the sequence number
 * of the last erase record (0: none). */
static int replay(struct hkv *s, struct scan *sc, uint64_t *erased)
{
	if (sc->n)
		qsort(sc->u, sc->n, sizeof(*sc->u), cmp_seq);
	*erased = 0;
	int rc = 0;
	for (size_t k = 0; k < sc->n && !rc; k++) {
		struct unit_rec *u = &sc->u[k];
		if (u->dropped)
			continue;
		s->recovered_units++;
		uint32_t pos = 0;
		for (uint32_t i = 0; !rc && i < u->nrec && pos + HKV_DIRENT_HDR <= u->dir_bytes; i++) {
			const struct hkv_dirent *d = (const struct hkv_dirent *)(u->dir + pos);
			pos += hkv_dirent_size(d->klen);
			if (pos > u->dir_bytes || d->ks > 1)
				break;
			if (d->type == HKV_REC_ERASE) {
				hkv_index_free(&s->ix);
				rc = hkv_index_init(&s->ix);
				*erased = u->seq;
				continue;
			}
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
	}
	return rc;
}

static void scan_free(struct scan *sc)
{
	for (size_t k = 0; k < sc->n; k++)
		free(sc->u[k].dir);
	free(sc->u);
	memset(sc, 0, sizeof(*sc));
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
		ok = out->magic == HKV_SB_MAGIC &&
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
	uint64_t unit = (uint64_t)HKV_HEAD_MAX * HKV_PAGE + HKV_DATA_MAX;
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

/* A crash while the collector held the last free zone (its copies flushed, the victim not
 * reset yet: hkv.gc.flushed) leaves no zone free after recovery, and collection needs room
 * to copy into before it frees one: without it every commit fails (KV Capacity Exceeded)
 * however empty the store is. The collector gets the written zone with the most room left,
 * where appends can resume: an emulated zone from where its valid units end, a zoned one
 * only if its write pointer is there (a torn unit past them would hide what follows).
 * UINT32_MAX: none has room. */
static uint32_t collector_zone(const struct hkv *s)
{
	const struct zdev *z = s->z;
	uint32_t best = UINT32_MAX;
	uint64_t best_room = 1; /* a unit takes two pages at least */
	for (uint32_t i = 1; i < z->nzones; i++) {
		if (s->role[i] != HKV_Z_USED || z->wp[i] != s->vend[i])
			continue;
		uint64_t room = zdev_room(z, i);
		if (room > best_room) {
			best_room = room;
			best = i;
		}
	}
	return best;
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
	s->vend = calloc(z->nzones, sizeof(*s->vend));
	if (!s->role || !s->live || !s->mtime || !s->first_seq || !s->vend || hkv_index_init(&s->ix))
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	struct hkv_sb sb;
	bool have = read_sb(s, &sb);
	if (have && !s->o.format) {
		if (sb.version != HKV_VERSION)
			return zdev_fail(err, errlen, -EINVAL, "the store has format version %u, this engine "
				    "reads version %u (units written whole, with durable marks): open "
				    "with format=1 to start over (its keys are lost)", sb.version, HKV_VERSION);
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
	uint8_t *buf = unvme_dma_alloc((size_t)HKV_HEAD_MAX * HKV_PAGE, HKV_PAGE);
	if (!buf)
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	struct scan sc = { 0 };
	s->role[0] = HKV_Z_SB;
	for (uint32_t i = 1; i < z->nzones && !rc; i++)
		if (!fresh && z->state[i] != ZDEV_OFFLINE && (z->state[i] != ZDEV_EMPTY || !z->zoned))
			rc = scan_zone(s, i, buf, &sc);
	unvme_dma_free(buf);
	if (!rc)
		rc = vouch(s, &sc);
	uint64_t erased = 0;
	if (!rc)
		rc = replay(s, &sc, &erased);
	/* sc is in sequence order now: what each zone holds */
	uint64_t *last = calloc(z->nzones, sizeof(*last));
	if (!rc && !last)
		rc = -ENOMEM;
	for (size_t k = 0; k < sc.n && !rc; k++) {
		const struct unit_rec *u = &sc.u[k];
		if (u->dropped)
			continue;
		if (!s->first_seq[u->zone])
			s->first_seq[u->zone] = u->seq;
		s->mtime[u->zone] = last[u->zone] = u->seq;
		uint64_t end = u->off + u->head_pages + u->data_pages;
		if (end > s->vend[u->zone])
			s->vend[u->zone] = end;
	}
	s->seq = sc.max_seq > s->seq ? sc.max_seq : s->seq;
	scan_free(&sc);
	s->nfree = 0;
	for (uint32_t i = 1; i < z->nzones && !rc; i++) {
		if (z->state[i] == ZDEV_OFFLINE) {
			s->role[i] = HKV_Z_BAD;
			continue;
		}
		/* an erase the crash cut short: the zones wholly before it go now (nothing in
		 * them counts), before anything could let the erase record itself go */
		if (erased && last[i] && last[i] < erased) {
			rc = zdev_reset(z, i);
			last[i] = s->first_seq[i] = s->vend[i] = 0;
		}
		if (!z->zoned)
			zdev_set_wp(z, i, fresh ? 0 : s->vend[i]);
		if (!rc && s->vend[i] == 0 && z->wp[i] == 0) {
			s->role[i] = HKV_Z_FREE;
			s->nfree++;
		} else if (!rc) {
			s->role[i] = HKV_Z_USED; /* written before: collection frees it */
		}
	}
	free(last);
	uint32_t resume = !rc && s->nfree == 0 ? collector_zone(s) : UINT32_MAX;
	for (uint32_t i = 1; i < z->nzones && !rc; i++)
		if (s->role[i] == HKV_Z_USED && i != resume)
			rc = zdev_finish(z, i);
	if (!rc && resume != UINT32_MAX) {
		/* nothing stale may follow the units appended there, even across a power cut */
		rc = zdev_zero_rest(z, resume);
		if (!rc)
			rc = zdev_flush(z);
		if (!rc) {
			s->role[resume] = HKV_Z_OPEN;
			s->gcs.zone = resume;
		}
	}
	if (rc)
		return zdev_fail(err, errlen, rc < 0 ? rc : -EIO, "recovery failed: %s",
				 strerror(rc < 0 ? -rc : EIO));
	HKV_INDEX_FOREACH(&s->ix, e) {
		uint64_t b = hkv_rec_bytes(e->klen, e->vlen);
		s->used += b;
		s->nr_keys_ks[e->ks]++;
		s->live[hkv_zone_of(s, e->addr)] += b;
	}
	/* this open is an epoch of its own: its units claim nothing about earlier ones */
	s->epoch = s->seq + 1;
	s->durable_seq = s->seq;
	return 0;
}
