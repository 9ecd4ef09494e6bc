/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTL's life on the media: creation (format), checkpoints of the map, and recovery
 * (newest valid checkpoint + replay of the units written after it), open and close.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/ftl/ftl_internal.h"

#define CK_CHUNK 64u /* pages per checkpoint write or read */


static uint64_t map_pages(uint64_t user_pages)
{
	return (user_pages * sizeof(uint32_t) + FTL_PAGE - 1) / FTL_PAGE;
}

/* Zones per checkpoint slot: from the device's geometry alone (room for the largest map it
 * could ever need), so recovery finds slot 1 even when slot 0 is unreadable. */
static uint32_t ck_zones_for(const struct zdev *z)
{
	uint64_t most = (uint64_t)z->nzones * z->zcap_pages;
	return (uint32_t)((1 + map_pages(most) + z->zcap_pages - 1) / z->zcap_pages);
}

static uint32_t first_data_zone(const struct ftl *f)
{
	return 2 * f->ck_zones;
}

/* Data pages a data zone holds in units of unit_pages (each one header page more). */
static uint64_t zone_data_pages(const struct ftl *f)
{
	uint64_t cap = f->z->zcap_pages, u = f->unit_pages + 1;
	uint64_t full = cap / u, rest = cap % u;
	return full * f->unit_pages + (rest > 1 ? rest - 1 : 0);
}

/* ---- checkpoints ---- */

static int write_pages(struct ftl *f, uint32_t *zone, const void *buf, uint32_t n)
{
	const uint8_t *p = buf;
	while (n) {
		if (zdev_room(f->z, *zone) == 0)
			(*zone)++;
		uint64_t room = zdev_room(f->z, *zone);
		uint32_t k = n < room ? n : (uint32_t)room;
		uint64_t at;
		int rc = zdev_append(f->z, *zone, p, k, &at);
		if (rc)
			return rc < 0 ? rc : -EIO;
		f->st.media_pages += k;
		p += (size_t)k * FTL_PAGE;
		n -= k;
	}
	return 0;
}

int ftl_checkpoint(struct ftl *f)
{
	int rc = ftl_seal_units(f);
	if (!rc)
		rc = zdev_flush(f->z);
	if (rc)
		return rc;
	struct zdev *z = f->z;
	uint32_t first = f->ck_slot * f->ck_zones;
	for (uint32_t i = 0; i < f->ck_zones; i++) {
		rc = zdev_reset(z, first + i);
		if (rc)
			return rc < 0 ? rc : -EIO;
	}
	uint8_t *chunk = unvme_dma_zalloc((size_t)CK_CHUNK * FTL_PAGE, FTL_PAGE);
	if (!chunk)
		return -ENOMEM;
	size_t map_bytes = f->user_pages * sizeof(uint32_t);
	struct ftl_ck_hdr *h = (struct ftl_ck_hdr *)chunk;
	h->magic = FTL_CK_MAGIC;
	h->instance = f->instance;
	h->seq = f->seq;
	h->user_pages = f->user_pages;
	h->body_pages = map_pages(f->user_pages);
	h->body_hash = zdev_hash64(f->l2p, map_bytes, f->seq);
	h->version = FTL_VERSION;
	h->op_pct = f->o.op_pct;
	h->unit_pages = f->unit_pages;
	h->nzones = z->nzones;
	h->zone_pages = z->zone_pages;
	h->zcap_pages = z->zcap_pages;
	h->hdr_hash = zdev_hash64(h, FTL_PAGE, 0);
	uint32_t zone = first;
	rc = write_pages(f, &zone, chunk, 1);
	for (size_t done = 0; !rc && done < map_bytes;) {
		size_t n = map_bytes - done < (size_t)CK_CHUNK * FTL_PAGE ? map_bytes - done : (size_t)CK_CHUNK * FTL_PAGE;
		memset(chunk, 0, (size_t)CK_CHUNK * FTL_PAGE);
		memcpy(chunk, (const uint8_t *)f->l2p + done, n);
		rc = write_pages(f, &zone, chunk, (uint32_t)((n + FTL_PAGE - 1) / FTL_PAGE));
		done += n;
	}
	unvme_dma_free(chunk);
	if (!rc)
		rc = zdev_flush(z);
	if (rc)
		return rc < 0 ? rc : -EIO;
	f->ck_seq = f->seq;
	f->ck_slot ^= 1u;
	f->ck_due_pages = f->st.media_pages + f->user_pages * f->o.ck_pct / 100 + 1;
	f->trims_lost = false; /* every trim so far is in the map now */
	f->st.checkpoints++;
	return 0;
}

/* Reads checkpoint slot s: header into *h, the map into map (user_pages entries, when map is
 * not NULL). 0, or -EINVAL when the slot holds no valid checkpoint. */
static int read_ck(struct ftl *f, uint32_t s, struct ftl_ck_hdr *h, uint32_t *map)
{
	struct zdev *z = f->z;
	uint32_t zone = s * f->ck_zones;
	if (z->state[zone] == ZDEV_OFFLINE || (z->wp_known && z->wp[zone] == 0 && z->zoned))
		return -EINVAL;
	uint8_t *chunk = unvme_dma_alloc((size_t)CK_CHUNK * FTL_PAGE, FTL_PAGE);
	if (!chunk)
		return -ENOMEM;
	int rc = zdev_read(z, zdev_page(z, zone, 0), chunk, 1);
	memcpy(h, chunk, sizeof(*h));
	uint64_t hash = h->hdr_hash;
	((struct ftl_ck_hdr *)chunk)->hdr_hash = 0;
	if (rc || h->magic != FTL_CK_MAGIC || h->version != FTL_VERSION ||
	    hash != zdev_hash64(chunk, FTL_PAGE, 0) || h->body_pages != map_pages(h->user_pages) ||
	    1 + h->body_pages > (uint64_t)f->ck_zones * z->zcap_pages) {
		unvme_dma_free(chunk);
		return -EINVAL;
	}
	if (map) {
		size_t bytes = h->user_pages * sizeof(uint32_t);
		uint64_t page = 1;
		for (size_t done = 0; !rc && done < bytes;) {
			uint32_t n = (uint32_t)((bytes - done + FTL_PAGE - 1) / FTL_PAGE);
			if (n > CK_CHUNK)
				n = CK_CHUNK;
			/* page i of the checkpoint: zone first + i / zcap */
			for (uint32_t i = 0; !rc && i < n; i++) {
				uint64_t q = page + i;
				rc = zdev_read(z, zdev_page(z, zone + (uint32_t)(q / z->zcap_pages), q % z->zcap_pages),
					       chunk + (size_t)i * FTL_PAGE, 1);
			}
			size_t k = bytes - done < (size_t)n * FTL_PAGE ? bytes - done : (size_t)n * FTL_PAGE;
			memcpy((uint8_t *)map + done, chunk, k);
			done += k;
			page += n;
		}
		if (rc || zdev_hash64(map, bytes, h->seq) != h->body_hash)
			rc = -EINVAL;
	}
	unvme_dma_free(chunk);
	return rc;
}

/* ---- recovery: scanning units ---- */

struct replay {
	uint64_t seq;
	uint64_t first;   /* page of the first data page */
	uint32_t n, t;
	uint64_t *ent;
};

struct scan {
	struct replay *r;
	size_t n, cap;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct replay *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Walks zone zone's units from its start: each header valid (magic, hash, this FTL, a growing
 * sequence number), the data of units newer than the checkpoint matching their hash. Units
 * newer than the checkpoint are kept for replay; trims are remembered for collection. Returns
 * the pages covered by valid units. */
static int scan_zone(struct ftl *f, uint32_t zone, uint8_t *buf, struct scan *sc, uint64_t *end)
{
	struct zdev *z = f->z;
	uint64_t limit = z->zoned ? z->wp[zone] : z->zcap_pages, off = 0, last_seq = 0;
	while (off + 1 <= limit) {
		if (zdev_read(z, zdev_page(z, zone, off), buf, 1) != 0)
			break;
		struct ftl_unit_hdr *h = (struct ftl_unit_hdr *)buf;
		uint64_t hash = h->hdr_hash;
		h->hdr_hash = 0;
		if (h->magic != FTL_UNIT_MAGIC || h->instance != f->instance || h->version != FTL_VERSION ||
		    hash != zdev_hash64(h, FTL_PAGE, 0) || h->seq <= last_seq ||
		    h->nr_pages > FTL_MAX_UNIT || h->nr_pages + h->nr_trims > FTL_HDR_ENTS ||
		    off + 1 + h->nr_pages > limit)
			break;
		for (uint32_t i = 0; i < h->nr_pages + h->nr_trims; i++)
			if ((h->ent[i] & ~FTL_TRIM_BIT) >= f->user_pages)
				goto out; /* not a page of this FTL: corrupt */
		uint64_t seq = h->seq;
		uint32_t n = h->nr_pages, t = h->nr_trims;
		uint64_t *ent = NULL;
		if (seq > f->ck_seq) {
			ent = malloc((size_t)(n + t + 1) * sizeof(*ent));
			if (!ent)
				return -ENOMEM;
			memcpy(ent, h->ent, (size_t)(n + t) * sizeof(*ent));
			uint64_t data_hash = h->data_hash;
			if ((n && zdev_read(z, zdev_page(z, zone, off + 1), buf + FTL_PAGE, n) != 0) ||
			    zdev_sum64(buf + FTL_PAGE, (size_t)n * FTL_PAGE, seq) != data_hash) {
				free(ent);
				break; /* cut short by a crash: it was never acknowledged as durable */
			}
			if (sc->n == sc->cap) {
				size_t cap = sc->cap ? sc->cap * 2 : 256;
				struct replay *r = realloc(sc->r, cap * sizeof(*r));
				if (!r) {
					free(ent);
					return -ENOMEM;
				}
				sc->r = r;
				sc->cap = cap;
			}
			sc->r[sc->n++] = (struct replay){ .seq = seq, .first = zdev_page(z, zone, off + 1),
							  .n = n, .t = t, .ent = ent };
		}
		for (uint32_t i = 0; i < t; i++)
			ftl_ztrims_add(f, zone, (uint32_t)(h->ent[n + i] & ~FTL_TRIM_BIT), seq);
		if (seq > f->seq)
			f->seq = seq;
		f->mtime[zone] = seq;
		last_seq = seq;
		off += 1 + n;
	}
out:
	*end = off;
	return 0;
}

static void replay(struct ftl *f, struct scan *sc)
{
	if (sc->n)
		qsort(sc->r, sc->n, sizeof(*sc->r), cmp_seq);
	for (size_t k = 0; k < sc->n; k++) {
		struct replay *r = &sc->r[k];
		/* a unit's trims came before its writes (a page trimmed and written again while in
		 * the buffer has both in one unit) */
		for (uint32_t i = 0; i < r->t; i++)
			f->l2p[r->ent[r->n + i] & ~FTL_TRIM_BIT] = FTL_UNMAPPED;
		for (uint32_t i = 0; i < r->n; i++)
			f->l2p[r->ent[i]] = (uint32_t)(r->first + i);
		free(r->ent);
	}
	f->st.recovered_units = sc->n;
	free(sc->r);
}

/* Every data zone scanned, the map replayed, the reverse map, valid counts and zone roles
 * rebuilt from it. */
static int recover(struct ftl *f)
{
	struct zdev *z = f->z;
	uint8_t *buf = unvme_dma_alloc((size_t)(FTL_MAX_UNIT + 1) * FTL_PAGE, FTL_PAGE);
	if (!buf)
		return -ENOMEM;
	struct scan sc = { 0 };
	int rc = 0;
	for (uint32_t i = first_data_zone(f); i < z->nzones && !rc; i++) {
		if (z->state[i] == ZDEV_OFFLINE) {
			f->role[i] = FTL_Z_BAD;
			continue;
		}
		uint64_t end = 0;
		if (z->state[i] != ZDEV_EMPTY || !z->zoned)
			rc = scan_zone(f, i, buf, &sc, &end);
		if (rc)
			break;
		if (!z->zoned)
			zdev_set_wp(z, i, end);
		if (end == 0 && z->wp[i] == 0) {
			f->role[i] = FTL_Z_FREE;
			continue;
		}
		/* written before the crash: no more writes go there, collection frees it */
		rc = zdev_finish(z, i);
		f->role[i] = FTL_Z_USED;
	}
	unvme_dma_free(buf);
	if (rc) {
		for (size_t k = 0; k < sc.n; k++)
			free(sc.r[k].ent);
		free(sc.r);
		return rc < 0 ? rc : -EIO;
	}
	replay(f, &sc);
	for (uint64_t lpn = 0; lpn < f->user_pages; lpn++) {
		uint32_t v = f->l2p[lpn];
		if (v == FTL_UNMAPPED)
			continue;
		uint32_t zone = ftl_zone_of(f, v);
		if (zone < first_data_zone(f) || zone >= z->nzones || f->role[zone] != FTL_Z_USED ||
		    v % z->zone_pages >= z->wp[zone] || f->p2l[v] != FTL_INVALID) {
			f->l2p[lpn] = FTL_UNMAPPED; /* points nowhere valid: the map was damaged */
			continue;
		}
		f->p2l[v] = (uint32_t)lpn;
		f->vpc[zone]++;
	}
	return 0;
}

/* ---- creation and opening ---- */

static int layout(struct ftl *f, uint32_t op_pct, char *err, size_t errlen)
{
	struct zdev *z = f->z;
	uint32_t usable = 0;
	for (uint32_t i = first_data_zone(f); i < z->nzones; i++)
		usable += z->state[i] != ZDEV_OFFLINE;
	uint64_t per_zone = zone_data_pages(f), data = (uint64_t)usable * per_zone;
	uint64_t user = data * (100 - op_pct) / 100;
	/* collection needs spare zones: the reserve, the low mark and one being filled */
	uint64_t spare = (uint64_t)(f->gc_low + 2) * per_zone;
	if (usable < f->gc_low + 3 || data < spare || user > data - spare || user == 0)
		return zdev_fail(err, errlen, -EINVAL,
			    "op=%u%% leaves %llu spare pages in %u data zones of %llu pages; garbage "
			    "collection needs %llu: raise op or use smaller zones", op_pct,
			    (unsigned long long)(data - user), usable, (unsigned long long)per_zone,
			    (unsigned long long)spare);
	if (user >= FTL_BUF_BASE)
		return zdev_fail(err, errlen, -EINVAL, "%llu pages: more than the map addresses",
			    (unsigned long long)user);
	f->user_pages = user;
	return 0;
}

static int alloc_state(struct ftl *f)
{
	struct zdev *z = f->z;
	size_t phys = (size_t)z->nzones * z->zone_pages;
	if (phys >= FTL_BUF_BASE)
		return -E2BIG;
	f->l2p = malloc(f->user_pages * sizeof(*f->l2p));
	f->p2l = malloc(phys * sizeof(*f->p2l));
	f->vpc = calloc(z->nzones, sizeof(*f->vpc));
	f->role = calloc(z->nzones, 1);
	f->mtime = calloc(z->nzones, sizeof(*f->mtime));
	f->ztrims = calloc(z->nzones, sizeof(*f->ztrims));
	f->buf.unit = unvme_dma_zalloc((size_t)(FTL_MAX_UNIT + 1) * FTL_PAGE, FTL_PAGE);
	f->buf.lpn = calloc(FTL_MAX_UNIT, sizeof(*f->buf.lpn));
	f->buf.prev = calloc(FTL_MAX_UNIT, sizeof(*f->buf.prev));
	f->buf.trims = calloc(FTL_HDR_ENTS, sizeof(*f->buf.trims));
	f->buf.tprev = calloc(FTL_HDR_ENTS, sizeof(*f->buf.tprev));
	f->gc_unit = unvme_dma_zalloc((size_t)(FTL_MAX_UNIT + 1) * FTL_PAGE, FTL_PAGE);
	if (!f->l2p || !f->p2l || !f->vpc || !f->role || !f->mtime || !f->ztrims || !f->buf.unit ||
	    !f->buf.lpn || !f->buf.prev || !f->buf.trims || !f->buf.tprev ||
	    !f->gc_unit)
		return -ENOMEM;
	memset(f->l2p, 0xff, f->user_pages * sizeof(*f->l2p));
	memset(f->p2l, 0xff, phys * sizeof(*f->p2l));
	return 0;
}

static uint64_t new_instance(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return v ? v : 1;
}

/* A new FTL: every zone reset, an empty map, checkpoint 0. */
static int format(struct ftl *f, char *err, size_t errlen)
{
	struct zdev *z = f->z;
	for (uint32_t i = 0; i < z->nzones; i++) {
		if (z->state[i] == ZDEV_OFFLINE || (z->zoned && z->state[i] == ZDEV_EMPTY))
			continue;
		int rc = zdev_reset(z, i);
		if (rc)
			return zdev_fail(err, errlen, rc < 0 ? rc : -EIO, "cannot reset zone %u: %s", i,
				    rc > 0 ? unvme_status_str(rc, NVME_CSI_ZNS) : unvme_errmsg());
	}
	for (uint32_t i = 0; i < z->nzones; i++)
		if (!z->wp_known)
			zdev_set_wp(z, i, 0);
	f->instance = new_instance();
	f->seq = 0;
	f->ck_seq = 0;
	f->ck_slot = 0;
	return 0;
}

static void set_roles(struct ftl *f)
{
	struct zdev *z = f->z;
	f->nfree = 0;
	for (uint32_t i = 0; i < z->nzones; i++) {
		if (i < first_data_zone(f))
			f->role[i] = FTL_Z_CK;
		else if (z->state[i] == ZDEV_OFFLINE)
			f->role[i] = FTL_Z_BAD;
		else if (f->role[i] != FTL_Z_USED)
			f->role[i] = FTL_Z_FREE;
		f->nfree += f->role[i] == FTL_Z_FREE;
	}
}

int ftl_load(struct ftl *f, char *err, size_t errlen)
{
	struct zdev *z = f->z;
	f->ck_zones = ck_zones_for(z);
	if (z->nzones < 2 * f->ck_zones + 6)
		return zdev_fail(err, errlen, -EINVAL, "%u zones: an FTL needs %u for checkpoints and at least "
			    "6 for data", z->nzones, 2 * f->ck_zones);
	f->gc_low = 2;
	f->gc_reserve = 1;
	struct ftl_ck_hdr h[2];
	int valid[2];
	for (uint32_t s = 0; s < 2; s++)
		valid[s] = read_ck(f, s, &h[s], NULL) == 0;
	int best = valid[0] && (!valid[1] || h[0].seq >= h[1].seq) ? 0 : valid[1] ? 1 : -1;
	/* a slot whose map is unreadable does not count: the other one may still be whole */
	uint32_t *probe = NULL;
	while (best >= 0) {
		probe = malloc(h[best].user_pages * sizeof(uint32_t) + 1);
		if (!probe)
			return zdev_fail(err, errlen, -ENOMEM, "out of memory");
		if (read_ck(f, (uint32_t)best, &h[best], probe) == 0)
			break;
		free(probe);
		probe = NULL;
		valid[best] = 0;
		best = valid[best ^ 1] ? best ^ 1 : -1;
	}
	bool fresh = best < 0;
	if (fresh && !f->o.format && !z->zoned) {
		/* a conventional namespace cannot tell "never written" from someone else's data */
		free(probe);
		return zdev_fail(err, errlen, -EEXIST, "no FTL on this namespace: open with format=1 to create "
			    "one (everything on the namespace is lost)");
	}
	if (fresh && !f->o.format) {
		for (uint32_t i = 0; i < z->nzones; i++)
			if (z->zoned && z->state[i] != ZDEV_EMPTY && z->state[i] != ZDEV_OFFLINE) {
				free(probe);
				return zdev_fail(err, errlen, -EEXIST,
					    "the device holds data but no FTL checkpoint (zone %u is written): "
					    "open with format=1 to erase it and start a new FTL", i);
			}
	}
	if (!fresh && !f->o.format) {
		if (h[best].nzones != z->nzones || h[best].zone_pages != z->zone_pages ||
		    h[best].zcap_pages != z->zcap_pages) {
			free(probe);
			return zdev_fail(err, errlen, -EINVAL, "the FTL was created on %u zones of %llu pages, the "
				    "device has %u of %llu", h[best].nzones, (unsigned long long)h[best].zone_pages,
				    z->nzones, (unsigned long long)z->zone_pages);
		}
		if (f->o.op_given && f->o.op_pct != h[best].op_pct) {
			free(probe);
			return zdev_fail(err, errlen, -EINVAL, "the FTL was created with op=%u, not op=%u: "
				    "leave op out, or format=1 to start over", h[best].op_pct, f->o.op_pct);
		}
		f->o.op_pct = h[best].op_pct;
		f->unit_pages = h[best].unit_pages;
	}
	if (fresh || f->o.format) {
		free(probe);
		int rc = format(f, err, errlen);
		if (rc)
			return rc;
		rc = layout(f, f->o.op_pct, err, errlen);
		if (!rc)
			rc = alloc_state(f);
		if (rc)
			return rc == -ENOMEM ? zdev_fail(err, errlen, rc, "out of memory") : rc;
		set_roles(f);
		rc = ftl_checkpoint(f);
		return rc ? zdev_fail(err, errlen, rc, "cannot write the first checkpoint: %s", strerror(-rc)) : 0;
	}
	f->user_pages = h[best].user_pages;
	f->instance = h[best].instance;
	f->seq = f->ck_seq = h[best].seq;
	f->ck_slot = (uint32_t)best ^ 1u;
	int rc = alloc_state(f);
	if (rc) {
		free(probe);
		return zdev_fail(err, errlen, rc, "out of memory for %llu pages", (unsigned long long)f->user_pages);
	}
	memcpy(f->l2p, probe, f->user_pages * sizeof(*f->l2p));
	free(probe);
	rc = recover(f);
	if (rc)
		return zdev_fail(err, errlen, rc, "recovery failed: %s", strerror(-rc));
	set_roles(f);
	f->ck_due_pages = f->user_pages * f->o.ck_pct / 100 + 1;
	/* a fresh checkpoint keeps the next recovery short */
	rc = ftl_checkpoint(f);
	return rc ? zdev_fail(err, errlen, rc, "cannot write a checkpoint: %s", strerror(-rc)) : 0;
}

int ftl_open(struct zdev *z, const struct ftl_opts *o, struct ftl **out, char *err, size_t errlen)
{
	*out = NULL;
	struct ftl *f = calloc(1, sizeof(*f));
	if (!f) {
		zdev_close(z);
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	}
	f->z = z;
	f->o = *o;
	f->user.zone = f->gcs.zone = UINT32_MAX;
	pthread_rwlock_init(&f->lock, NULL);
	uint32_t most = z->zoned && z->max_append_pages >= 2 ? z->max_append_pages - 1 : z->max_io_pages - 1;
	if (most > FTL_MAX_UNIT)
		most = FTL_MAX_UNIT;
	if (z->zcap_pages >= 2 && most > z->zcap_pages / 2 - 1)
		most = (uint32_t)(z->zcap_pages / 2 - 1); /* two units at least per zone */
	if (o->unit_pages && o->unit_pages > most) {
		ftl_close(f);
		return zdev_fail(err, errlen, -EINVAL, "unit=%u: at most %u data pages fit one write of this "
			    "device", o->unit_pages, most);
	}
	f->unit_pages = o->unit_pages ? o->unit_pages : most;
	if (f->unit_pages == 0 || (uint64_t)f->unit_pages + 1 > z->zcap_pages) {
		ftl_close(f);
		return zdev_fail(err, errlen, -EINVAL, "the device's zones or transfers are too small for an FTL");
	}
	int rc = ftl_load(f, err, errlen);
	if (rc) {
		ftl_close(f);
		return rc;
	}
	f->loaded = true;
	*out = f;
	return 0;
}

static void free_state(struct ftl *f)
{
	if (f->ztrims)
		for (uint32_t i = 0; i < f->z->nzones; i++)
			free(f->ztrims[i].ent);
	free(f->ztrims);
	free(f->l2p);
	free(f->p2l);
	free(f->vpc);
	free(f->role);
	free(f->mtime);
	unvme_dma_free(f->buf.unit);
	free(f->buf.lpn);
	free(f->buf.prev);
	free(f->buf.trims);
	free(f->buf.tprev);
	unvme_dma_free(f->gc_unit);
}

void ftl_close(struct ftl *f)
{
	if (!f)
		return;
	if (f->loaded) {
		pthread_rwlock_wrlock(&f->lock);
		(void)ftl_checkpoint(f);
		pthread_rwlock_unlock(&f->lock);
	}
	free_state(f);
	zdev_close(f->z);
	pthread_rwlock_destroy(&f->lock);
	free(f);
}

int ftl_erase(struct ftl *f)
{
	pthread_rwlock_wrlock(&f->lock);
	struct zdev *z = f->z;
	int rc = 0;
	f->buf.n = 0;
	f->buf.ntrims = 0;
	f->user.zone = f->gcs.zone = UINT32_MAX;
	for (uint32_t i = first_data_zone(f); i < z->nzones && !rc; i++) {
		if (f->role[i] == FTL_Z_BAD)
			continue;
		if (z->state[i] != ZDEV_EMPTY)
			rc = zdev_reset(z, i);
		f->role[i] = FTL_Z_FREE;
		f->vpc[i] = 0;
		f->ztrims[i].n = 0;
	}
	memset(f->l2p, 0xff, f->user_pages * sizeof(*f->l2p));
	memset(f->p2l, 0xff, (size_t)z->nzones * z->zone_pages * sizeof(*f->p2l));
	set_roles(f);
	if (!rc)
		rc = ftl_checkpoint(f);
	pthread_rwlock_unlock(&f->lock);
	return rc < 0 ? rc : rc ? -EIO : 0;
}
