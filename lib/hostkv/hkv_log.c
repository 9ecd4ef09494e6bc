/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host KV engine's log: records gathered in a stream's buffer (directory and data apart)
 * and written as units, each with one append, the index pointed at them once they are on the
 * media, value reads, and the device flush that makes units durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostkv/hkv_internal.h"

int hkv_stream_init(struct hkv_stream *st, bool gc)
{
	memset(st, 0, sizeof(*st));
	st->zone = UINT32_MAX;
	st->gc = gc;
	st->buf = unvme_dma_zalloc((size_t)HKV_HEAD_MAX * HKV_PAGE + HKV_DATA_MAX, HKV_PAGE);
	st->data = st->buf ? st->buf + (size_t)HKV_HEAD_MAX * HKV_PAGE : NULL;
	st->dir = malloc(HKV_DIR_MAX);
	st->src = calloc(HKV_REC_MAX, sizeof(*st->src));
	return st->buf && st->dir && st->src ? 0 : -ENOMEM;
}

void hkv_stream_free(struct hkv_stream *st)
{
	unvme_dma_free(st->buf);
	free(st->dir);
	free(st->src);
	st->buf = st->data = st->dir = NULL;
	st->src = NULL;
}

void hkv_forget(struct hkv *s, const struct hkv_ent *e)
{
	if (hkv_in_buf(e->addr))
		return;
	uint32_t zone = hkv_zone_of(s, e->addr);
	uint64_t b = hkv_rec_bytes(e->klen, e->vlen);
	s->live[zone] = s->live[zone] > b ? s->live[zone] - b : 0;
}

static uint32_t unit_limit(const struct hkv *s, const struct hkv_stream *st)
{
	return st->gc ? HKV_DATA_MAX : s->o.unit_kib * 1024u;
}

int hkv_append(struct hkv *s, struct hkv_stream *st, uint8_t type, uint8_t ks, const uint8_t *key,
	       uint8_t klen, const uint8_t *val, uint32_t vlen, uint64_t src, uint32_t *boff,
	       uint32_t *rec)
{
	uint32_t dsz = hkv_dirent_size(klen);
	/* values of whole pages start on a page, so that reading one reads no neighbour */
	uint32_t align = vlen && vlen % HKV_PAGE == 0 ? HKV_PAGE : 8u;
	uint32_t voff = (st->data_used + align - 1) & ~(align - 1);
	if (st->nrec && ((uint64_t)voff + vlen > unit_limit(s, st) ||
			 st->dir_used + dsz > HKV_DIR_MAX || st->nrec == HKV_REC_MAX)) {
		int rc = hkv_seal(s, st);
		if (rc)
			return rc;
		voff = 0;
	}
	struct hkv_dirent *d = (struct hkv_dirent *)(st->dir + st->dir_used);
	memset(d, 0, dsz);
	d->type = type;
	d->ks = ks;
	d->klen = klen;
	d->vlen = vlen;
	d->voff = voff;
	memcpy(d->key, key, klen);
	if (vlen)
		memcpy(st->data + voff, val, vlen);
	st->src[st->nrec] = src;
	st->dir_used += dsz;
	st->data_used = voff + vlen;
	*boff = voff;
	*rec = st->nrec++;
	return 0;
}

static int stream_close(struct hkv *s, struct hkv_stream *st)
{
	if (st->zone == UINT32_MAX)
		return 0;
	int rc = zdev_finish(s->z, st->zone);
	s->role[st->zone] = HKV_Z_USED;
	s->mtime[st->zone] = s->seq;
	st->zone = UINT32_MAX;
	return rc;
}

/* Points the index at the records of the unit just written: the user's from their place in
 * the buffer, the collector's from where they were copied from (a pinned version's copy
 * moves the pin: the user record that supersedes it now names the copy). */
static void map_unit(struct hkv *s, struct hkv_stream *st, uint64_t data_base, uint32_t zone)
{
	uint32_t off = 0;
	for (uint32_t i = 0; i < st->nrec; i++) {
		const struct hkv_dirent *d = (const struct hkv_dirent *)(st->dir + off);
		off += hkv_dirent_size(d->klen);
		struct hkv_ent *e = hkv_index_find(&s->ix, d->ks, d->key, d->klen);
		if (d->type == HKV_REC_DEL && !st->gc && e && e->addr == hkv_tomb_addr(i))
			hkv_index_remove(&s->ix, e); /* the delete is on the media: no pin needed */
		if (d->type != HKV_REC_PUT)
			continue;
		uint64_t from = st->gc ? st->src[i] : hkv_buf_addr(i, d->voff);
		if (e && st->gc && e->addr != from && hkv_in_buf(e->addr) &&
		    s->user.src[hkv_buf_rec(e->addr)] == from) {
			s->user.src[hkv_buf_rec(e->addr)] = data_base + d->voff;
			continue;
		}
		if (!e || e->addr != from)
			continue; /* overwritten or deleted since: dead on arrival */
		if (st->gc)
			hkv_forget(s, e);
		e->addr = data_base + d->voff;
		s->live[zone] += hkv_rec_bytes(d->klen, d->vlen);
	}
}

int hkv_seal(struct hkv *s, struct hkv_stream *st)
{
	if (!st->nrec)
		return 0;
	if (s->failed)
		return -EIO;
	struct zdev *z = s->z;
	uint32_t head_pages = (HKV_HDR_BYTES + st->dir_used + HKV_PAGE - 1) / HKV_PAGE;
	uint32_t data_pages = (st->data_used + HKV_PAGE - 1) / HKV_PAGE;
	uint32_t total = head_pages + data_pages;
	if (st->zone == UINT32_MAX || zdev_room(z, st->zone) < total) {
		int rc = stream_close(s, st);
		if (!rc)
			rc = hkv_take_zone(s, st);
		if (rc)
			return rc;
		if (zdev_room(z, st->zone) < total)
			return -ENOSPC; /* zones smaller than a unit: refused at open */
	}
	/* the head goes right before the data, so that the unit is one buffer and one append */
	uint8_t *head = st->data - (size_t)head_pages * HKV_PAGE;
	size_t dir_area = (size_t)head_pages * HKV_PAGE - HKV_HDR_BYTES;
	memcpy(head + HKV_HDR_BYTES, st->dir, st->dir_used);
	memset(head + HKV_HDR_BYTES + st->dir_used, 0, dir_area - st->dir_used);
	memset(st->data + st->data_used, 0, (size_t)data_pages * HKV_PAGE - st->data_used);
	struct hkv_unit_hdr h;
	memset(head, 0, HKV_HDR_BYTES);
	memset(&h, 0, sizeof(h));
	h.magic = HKV_UNIT_MAGIC;
	h.instance = s->instance;
	h.seq = s->seq + 1;
	h.epoch = s->epoch;
	h.durable_seq = s->durable_seq;
	h.head_pages = head_pages;
	h.data_pages = data_pages;
	h.nrec = st->nrec;
	h.dir_bytes = st->dir_used;
	h.dir_hash = zdev_hash64(head + HKV_HDR_BYTES, dir_area, h.seq);
	h.data_hash = zdev_sum64(st->data, (size_t)data_pages * HKV_PAGE, h.seq);
	memcpy(head, &h, sizeof(h));
	h.hdr_hash = zdev_hash64(head, HKV_HDR_BYTES, 0);
	memcpy(head, &h, sizeof(h));
	uint64_t at;
	int rc = zdev_append(z, st->zone, head, total, &at);
	if (rc) {
		/* the zone's state is unknown now: nothing more is written until the next open */
		s->failed = true;
		return rc < 0 ? rc : -EIO;
	}
	s->seq++;
	uint32_t zone = st->zone;
	if (!s->first_seq[zone])
		s->first_seq[zone] = s->seq;
	s->vend[zone] = at + total - zdev_page(z, zone, 0);
	s->media_bytes += (uint64_t)total * HKV_PAGE;
	map_unit(s, st, (at + head_pages) * HKV_PAGE, zone);
	st->nrec = 0;
	st->dir_used = 0;
	st->data_used = 0;
	if (zdev_room(z, zone) < 2)
		return stream_close(s, st);
	return 0;
}

int hkv_media_flush(struct hkv *s)
{
	uint64_t sealed = s->seq;
	int rc = zdev_flush(s->z);
	if (rc) {
		s->failed = true;
		return rc < 0 ? rc : -EIO;
	}
	if (sealed > s->durable_seq)
		s->durable_seq = sealed;
	return 0;
}

int hkv_read_value(struct hkv *s, uint64_t addr, uint32_t len, void *dst)
{
	if (!len)
		return 0;
	uint64_t first = addr / HKV_PAGE, last = (addr + len - 1) / HKV_PAGE;
	uint32_t n = (uint32_t)(last - first + 1);
	/* whole pages straight into DMA memory; otherwise through a buffer of our own */
	if (addr % HKV_PAGE == 0 && len % HKV_PAGE == 0 && unvme_dma_contig(dst) >= len)
		return zdev_read(s->z, first, dst, n);
	uint8_t *b = unvme_dma_alloc((size_t)n * HKV_PAGE, HKV_PAGE);
	if (!b)
		return -ENOMEM;
	int rc = zdev_read(s->z, first, b, n);
	if (!rc)
		memcpy(dst, b + addr % HKV_PAGE, len);
	unvme_dma_free(b);
	return rc;
}
