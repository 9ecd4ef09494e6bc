/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine's garbage collection: when free zones run low, a victim's live records
 * (those the index points at, and durable versions pinned by newer ones still in the user
 * buffer) are copied into units of the collection stream, deletes that may still hide an
 * older store elsewhere on the media are carried along, the copies are flushed, and
 * the victim is reset. Victims: greedy (fewest live bytes) or cost-benefit (LFS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/crash_point.h"
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

/* The durable state of a key whose entry waits in the user buffer: the address of the
 * version the buffered record supersedes (HKV_NO_ADDR: absent, or deleted). */
static uint64_t pinned(const struct hkv *s, const struct hkv_ent *e)
{
	return hkv_in_buf(e->addr) ? s->user.src[hkv_buf_rec(e->addr)] : HKV_NO_ADDR;
}

/* Whether record d of a victim's unit (seq, value at addr) must survive the victim: the
 * newest durable version of its key (the index's, or pinned by a buffered newer one), or a
 * delete that may still hide an older store elsewhere while the key is absent (or absent
 * durably, its buffered store not committed). A copy gets a new sequence number, which is
 * why a delete is carried only while no store of the key came after it. An erase is never
 * carried: by the time its zone is collected no older unit is left anywhere (the erase reset
 * them all, or recovery finished doing so: hkv_recover.c). */
static bool survives(const struct hkv *s, const struct hkv_dirent *d, uint64_t seq, uint64_t addr,
		     uint64_t oldest)
{
	const struct hkv_ent *e = hkv_index_find(&s->ix, d->ks, d->key, d->klen);
	if (d->type == HKV_REC_PUT)
		return e && (e->addr == addr || pinned(s, e) == addr);
	return d->type == HKV_REC_DEL && seq > oldest && (!e || (hkv_in_buf(e->addr) && pinned(s, e) == HKV_NO_ADDR));
}

static int collect(struct hkv *s, uint32_t v)
{
	struct zdev *z = s->z;
	uint8_t *head = unvme_dma_alloc((size_t)HKV_HEAD_MAX * HKV_PAGE, HKV_PAGE);
	if (!head)
		return -ENOMEM;
	/* only the units recovery or this run vouched for (a unit a crash cut short is never
	 * read again: its records are no one's) */
	uint64_t oldest = oldest_elsewhere(s, v), off = 0, end = s->vend[v];
	int rc = 0;
	while (!rc && off < end) {
		rc = zdev_read(z, zdev_page(z, v, off), head, 1);
		if (rc)
			break;
		struct hkv_unit_hdr h;
		memcpy(&h, head, sizeof(h));
		if (h.magic != HKV_UNIT_MAGIC || h.instance != s->instance || h.head_pages == 0 ||
		    h.head_pages > HKV_HEAD_MAX || h.dir_bytes > h.head_pages * HKV_PAGE - HKV_HDR_BYTES ||
		    off + h.head_pages + h.data_pages > end) {
			rc = -EIO; /* a unit vouched for is not what was written */
			break;
		}
		if (h.head_pages > 1)
			rc = zdev_read(z, zdev_page(z, v, off + 1), head + HKV_PAGE, h.head_pages - 1);
		uint64_t data_base = zdev_page(z, v, off + h.head_pages) * HKV_PAGE;
		const uint8_t *dir = head + HKV_HDR_BYTES;
		uint32_t pos = 0;
		for (uint32_t i = 0; !rc && i < h.nrec && pos + HKV_DIRENT_HDR <= h.dir_bytes; i++) {
			const struct hkv_dirent *d = (const struct hkv_dirent *)(dir + pos);
			pos += hkv_dirent_size(d->klen);
			uint64_t addr = data_base + d->voff;
			if (pos > h.dir_bytes || !survives(s, d, h.seq, addr, oldest))
				continue;
			uint32_t boff, rec;
			if (d->type == HKV_REC_PUT) {
				rc = hkv_read_value(s, addr, d->vlen, s->gc_val);
				if (!rc)
					rc = hkv_append(s, &s->gcs, HKV_REC_PUT, d->ks, d->key, d->klen, s->gc_val,
							d->vlen, addr, &boff, &rec);
				s->gc_bytes += hkv_rec_bytes(d->klen, d->vlen);
			} else {
				rc = hkv_append(s, &s->gcs, d->type, d->ks, d->key, d->klen, NULL, 0,
						HKV_NO_ADDR, &boff, &rec);
			}
		}
		off += h.head_pages + h.data_pages;
	}
	unvme_dma_free(head);
	if (!rc)
		rc = hkv_seal(s, &s->gcs);
	/* the copies are durable before the originals go */
	if (!rc)
		rc = hkv_media_flush(s);
	if (!rc)
		CRASH_POINT("hkv.gc.flushed");
	if (!rc)
		rc = zdev_reset(z, v);
	if (rc) {
		/* copies not written yet are dropped (the originals stay, the index names them): a
		 * later seal must not write them, with sequence numbers newer than versions stored
		 * meanwhile, nor pile up copies of the same records attempt after attempt */
		s->gcs.nrec = s->gcs.dir_used = s->gcs.data_used = 0;
		return rc < 0 ? rc : -EIO;
	}
	s->live[v] = 0;
	s->first_seq[v] = 0;
	s->vend[v] = 0;
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
