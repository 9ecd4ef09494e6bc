/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine's garbage collection: when free zones run low, a victim's live records
 * (those the index still points at) are copied into units of the collection stream, deletes
 * that may still hide an older store elsewhere on the media are carried along, the copies are
 * flushed, and the victim is reset. Victims: greedy (fewest live bytes) or cost-benefit (LFS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostkv/hkv_internal.h"

int hkv_take_zone(struct hkv *s, struct hkv_stream *st)
{
	if (!st->gc && s->nfree <= s->gc_low) {
		int rc = hkv_gc(s);
		if (rc && rc != -ENOSPC)
			return rc;
	}
	/* the last free zone is the collector's */
	if (s->nfree == 0 || (!st->gc && s->nfree <= 1))
		return -ENOSPC;
	for (uint32_t i = 0; i < s->z->nzones; i++) {
		if (s->role[i] != HKV_Z_FREE)
			continue;
		s->role[i] = HKV_Z_OPEN;
		s->nfree--;
		st->zone = i;
		return 0;
	}
	return -ENOSPC;
}

static uint32_t pick_victim(const struct hkv *s)
{
	uint64_t cap = s->z->zcap_pages * HKV_PAGE;
	uint32_t best = UINT32_MAX;
	double best_score = -1.0;
	for (uint32_t i = 0; i < s->z->nzones; i++) {
		if (s->role[i] != HKV_Z_USED || s->live[i] >= cap * 9 / 10)
			continue;
		double score;
		if (s->o.gc == HKV_GC_GREEDY) {
			score = (double)(cap - s->live[i]);
		} else {
			double u = (double)s->live[i] / (double)cap;
			score = (1.0 - u) * (double)(s->seq - s->mtime[i] + 1) / (1.0 + u);
		}
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best;
}

/* The oldest sequence number on the media outside zone v. A delete older than that hides
 * nothing any more (every store before it is gone with its zone): it need not be carried. */
static uint64_t oldest_elsewhere(const struct hkv *s, uint32_t v)
{
	uint64_t oldest = UINT64_MAX;
	for (uint32_t i = 0; i < s->z->nzones; i++)
		if (i != v && (s->role[i] == HKV_Z_USED || s->role[i] == HKV_Z_OPEN) && s->first_seq[i] &&
		    s->first_seq[i] < oldest)
			oldest = s->first_seq[i];
	return oldest;
}

static int collect(struct hkv *s, uint32_t v)
{
	struct zdev *z = s->z;
	uint8_t *dir = unvme_dma_alloc((size_t)(1 + HKV_DIR_PAGES) * HKV_PAGE, HKV_PAGE);
	if (!dir)
		return -ENOMEM;
	uint64_t oldest = oldest_elsewhere(s, v), off = 0, end = z->wp[v];
	int rc = 0;
	while (!rc && off + 1 <= end) {
		rc = zdev_read(z, zdev_page(z, v, off), dir, 1);
		if (rc)
			break;
		struct hkv_unit_hdr h;
		memcpy(&h, dir, sizeof(h));
		if (h.magic != HKV_UNIT_MAGIC || h.instance != s->instance || h.dir_pages > HKV_DIR_PAGES ||
		    off + 1 + h.dir_pages + h.data_pages > end)
			break; /* the zone's units end here */
		if (h.dir_pages)
			rc = zdev_read(z, zdev_page(z, v, off + 1), dir + HKV_PAGE, h.dir_pages);
		uint64_t data_base = zdev_page(z, v, off + 1 + h.dir_pages) * HKV_PAGE;
		uint32_t pos = 0;
		for (uint32_t i = 0; !rc && i < h.nrec && pos < h.dir_bytes; i++) {
			const struct hkv_dirent *d = (const struct hkv_dirent *)(dir + HKV_PAGE + pos);
			pos += hkv_dirent_size(d->klen);
			struct hkv_ent *e = hkv_index_find(&s->ix, d->ks, d->key, d->klen);
			uint32_t boff;
			if (d->type == HKV_REC_PUT && e && e->addr == data_base + d->voff) {
				rc = hkv_read_value(s, e->addr, d->vlen, s->gc_val);
				if (!rc)
					rc = hkv_append(s, &s->gcs, HKV_REC_PUT, d->ks, d->key, d->klen, s->gc_val,
							d->vlen, e->addr, &boff);
				s->gc_bytes += hkv_rec_bytes(d->klen, d->vlen);
			} else if (d->type == HKV_REC_DEL && !e && h.seq > oldest) {
				/* an older store of the key may still be on the media */
				rc = hkv_append(s, &s->gcs, HKV_REC_DEL, d->ks, d->key, d->klen, NULL, 0, 0, &boff);
			}
		}
		off += 1 + h.dir_pages + h.data_pages;
	}
	unvme_dma_free(dir);
	if (!rc)
		rc = hkv_seal(s, &s->gcs);
	/* the copies are durable before the originals go */
	if (!rc)
		rc = zdev_flush(z);
	if (!rc)
		rc = zdev_reset(z, v);
	if (rc)
		return rc < 0 ? rc : -EIO;
	s->live[v] = 0;
	s->first_seq[v] = 0;
	s->role[v] = HKV_Z_FREE;
	s->nfree++;
	s->gc_runs++;
	return 0;
}

int hkv_gc(struct hkv *s)
{
	while (s->nfree <= s->gc_low) {
		uint32_t v = pick_victim(s);
		if (v == UINT32_MAX)
			return -ENOSPC;
		int rc = collect(s, v);
		if (rc)
			return rc;
	}
	return 0;
}
