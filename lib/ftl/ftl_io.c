/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTL's I/O: reads through the map (zero copy into the host's buffer when it is DMA
 * memory), writes into the buffer, units out of the buffer, trims.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ftl/ftl_internal.h"

#define ST_WRITE_FAULT     (uint16_t)(NVME_CQE_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT))
#define ST_READ_ERROR      (uint16_t)(NVME_CQE_STATUS(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ))
#define ST_CAPACITY        (uint16_t)(NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED) | 0x8000u)
#define ST_INTERNAL        (uint16_t)(NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL))

static uint16_t status_of(int rc)
{
	return rc == -ENOSPC ? ST_CAPACITY : rc ? ST_WRITE_FAULT : 0;
}

/* ---- iovec cursor ---- */

struct cursor {
	const struct iovec *iov;
	unsigned cnt, i;
	size_t off;
};

static void cur_copy_out(struct cursor *c, void *dst, size_t n)
{
	uint8_t *d = dst;
	while (n && c->i < c->cnt) {
		size_t avail = c->iov[c->i].iov_len - c->off, k = avail < n ? avail : n;
		memcpy(d, (uint8_t *)c->iov[c->i].iov_base + c->off, k);
		d += k;
		n -= k;
		c->off += k;
		if (c->off == c->iov[c->i].iov_len) {
			c->i++;
			c->off = 0;
		}
	}
}

static void cur_copy_in(struct cursor *c, const void *src, size_t n)
{
	const uint8_t *s = src;
	while (n && c->i < c->cnt) {
		size_t avail = c->iov[c->i].iov_len - c->off, k = avail < n ? avail : n;
		if (s)
			memcpy((uint8_t *)c->iov[c->i].iov_base + c->off, s, k);
		else
			memset((uint8_t *)c->iov[c->i].iov_base + c->off, 0, k);
		if (s)
			s += k;
		n -= k;
		c->off += k;
		if (c->off == c->iov[c->i].iov_len) {
			c->i++;
			c->off = 0;
		}
	}
}

/* Where the cursor stands, when the next n bytes are one run of DMA memory; else NULL. */
static uint8_t *cur_dma_run(const struct cursor *c, size_t n)
{
	if (c->i >= c->cnt || c->iov[c->i].iov_len - c->off < n)
		return NULL;
	uint8_t *p = (uint8_t *)c->iov[c->i].iov_base + c->off;
	return ((uintptr_t)p & 3u) == 0 && unvme_dma_contig(p) >= n ? p : NULL;
}

static void cur_skip(struct cursor *c, size_t n)
{
	while (n && c->i < c->cnt) {
		size_t avail = c->iov[c->i].iov_len - c->off, k = avail < n ? avail : n;
		n -= k;
		c->off += k;
		if (c->off == c->iov[c->i].iov_len) {
			c->i++;
			c->off = 0;
		}
	}
}

/* ---- streams and units ---- */

void ftl_invalidate(struct ftl *f, uint32_t ppa)
{
	if (f->p2l[ppa] == FTL_INVALID)
		return;
	f->p2l[ppa] = FTL_INVALID;
	f->vpc[ftl_zone_of(f, ppa)]--;
}

uint64_t ftl_stream_room(const struct ftl *f, const struct ftl_stream *s)
{
	return s->zone == UINT32_MAX ? 0 : zdev_room(f->z, s->zone);
}

int ftl_stream_close(struct ftl *f, struct ftl_stream *s)
{
	if (s->zone == UINT32_MAX)
		return 0;
	int rc = zdev_finish(f->z, s->zone);
	f->role[s->zone] = FTL_Z_USED;
	f->mtime[s->zone] = f->seq;
	s->zone = UINT32_MAX;
	return rc;
}

int ftl_take_zone(struct ftl *f, struct ftl_stream *s, bool gc)
{
	if (f->nfree <= (gc ? 0 : f->gc_reserve))
		return -ENOSPC;
	for (uint32_t i = 0; i < f->z->nzones; i++) {
		if (f->role[i] != FTL_Z_FREE)
			continue;
		f->role[i] = FTL_Z_OPEN;
		f->nfree--;
		s->zone = i;
		return 0;
	}
	return -ENOSPC;
}

int ftl_write_unit(struct ftl *f, struct ftl_stream *s, uint8_t *unit, const uint32_t *lpn,
		   uint32_t n, const uint64_t *trims, uint32_t ntrims, bool gc)
{
	struct ftl_unit_hdr *h = (struct ftl_unit_hdr *)unit;
	memset(h, 0, FTL_PAGE);
	h->magic = FTL_UNIT_MAGIC;
	h->instance = f->instance;
	h->seq = f->seq + 1;
	h->version = FTL_VERSION;
	h->nr_pages = n;
	h->nr_trims = ntrims;
	for (uint32_t i = 0; i < n; i++)
		h->ent[i] = lpn[i];
	for (uint32_t i = 0; i < ntrims; i++)
		h->ent[n + i] = trims[i] | FTL_TRIM_BIT;
	h->data_hash = zdev_sum64(unit + FTL_PAGE, (size_t)n * FTL_PAGE, h->seq);
	h->hdr_hash = zdev_hash64(h, FTL_PAGE, 0);
	uint64_t at;
	int rc = zdev_append(f->z, s->zone, unit, n + 1, &at);
	if (rc)
		return rc < 0 ? rc : -EIO;
	f->seq++;
	uint32_t zone = s->zone;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ppa = (uint32_t)(at + 1 + i), old = f->l2p[lpn[i]];
		if (gc && old >= FTL_BUF_BASE) {
			/* a pinned page: the durable version of a page whose newer version or trim
			 * waits in the buffer; the copy is pinned in its place, the map stays */
			uint32_t *pin = ftl_pin_of(f, lpn[i]);
			if (pin) {
				*pin = ppa;
				f->p2l[ppa] = lpn[i];
				f->vpc[zone]++;
			}
			continue;
		}
		f->p2l[ppa] = lpn[i];
		f->vpc[zone]++;
		if (old < FTL_BUF_BASE)
			ftl_invalidate(f, old); /* a copy made by garbage collection */
		f->l2p[lpn[i]] = ppa;
	}
	for (uint32_t i = 0; i < ntrims; i++)
		ftl_ztrims_add(f, zone, (uint32_t)trims[i], f->seq);
	f->st.media_pages += n + 1;
	if (gc)
		f->st.gc_pages += n;
	if (zdev_room(f->z, zone) < 2)
		return ftl_stream_close(f, s);
	return 0;
}

/* A zone for the user stream with room for a header and a page, collecting garbage first
 * when free zones run low. */
static int user_zone(struct ftl *f)
{
	if (ftl_stream_room(f, &f->user) >= 2)
		return 0;
	int rc = ftl_stream_close(f, &f->user);
	if (rc)
		return rc;
	if (f->nfree <= f->gc_low) {
		rc = ftl_gc(f);
		if (rc && rc != -ENOSPC)
			return rc;
	}
	return ftl_take_zone(f, &f->user, false);
}

/* The old version of a buffered page is no longer needed. */
static void unpin(struct ftl *f, uint32_t prev)
{
	if (prev < FTL_BUF_BASE)
		ftl_invalidate(f, prev);
}

uint32_t *ftl_pin_of(struct ftl *f, uint32_t lpn)
{
	struct ftl_buf *b = &f->buf;
	uint32_t v = f->l2p[lpn];
	if (in_buf(v) && b->prev[v - FTL_BUF_BASE] < FTL_BUF_BASE)
		return &b->prev[v - FTL_BUF_BASE];
	for (uint32_t i = 0; i < b->ntrims; i++)
		if (b->trims[i] == lpn && b->tprev[i] < FTL_BUF_BASE)
			return &b->tprev[i];
	return NULL;
}

uint32_t ftl_durable_of(struct ftl *f, uint32_t lpn)
{
	uint32_t v = f->l2p[lpn];
	if (v < FTL_BUF_BASE)
		return v;
	uint32_t *pin = ftl_pin_of(f, lpn);
	return pin ? *pin : FTL_UNMAPPED;
}

/* Moves slot from to slot to (page and logical page), keeping the map on it. */
static void move_slot(struct ftl *f, uint32_t from, uint32_t to)
{
	struct ftl_buf *b = &f->buf;
	uint8_t *pages = b->unit + FTL_PAGE;
	memcpy(pages + (size_t)to * FTL_PAGE, pages + (size_t)from * FTL_PAGE, FTL_PAGE);
	b->lpn[to] = b->lpn[from];
	b->prev[to] = b->prev[from];
	f->l2p[b->lpn[to]] = FTL_BUF_BASE + to;
}

int ftl_seal_units(struct ftl *f)
{
	struct ftl_buf *b = &f->buf;
	/* slots whose logical page was trimmed or rewritten elsewhere are dropped first */
	uint32_t live = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		if (f->l2p[b->lpn[i]] != FTL_BUF_BASE + i) {
			unpin(f, b->prev[i]);
			continue;
		}
		if (live != i)
			move_slot(f, i, live);
		live++;
	}
	b->n = live;
	while (b->n || b->ntrims) {
		int rc = user_zone(f);
		if (rc)
			return rc;
		/* trims go first: a trim waiting in the buffer is older than any write of its page
		 * there (a later trim drops the slot), and replay applies a unit's trims before its
		 * pages, units in order; a write in an earlier unit than its trim would be undone */
		uint64_t room = ftl_stream_room(f, &f->user) - 1;
		uint32_t t = b->ntrims < FTL_HDR_ENTS ? b->ntrims : (uint32_t)FTL_HDR_ENTS;
		uint32_t k = b->n < room ? b->n : (uint32_t)room;
		if (k > FTL_HDR_ENTS - t)
			k = (uint32_t)(FTL_HDR_ENTS - t);
		rc = ftl_write_unit(f, &f->user, b->unit, b->lpn, k, b->trims, t, false);
		if (rc)
			return rc;
		/* the new versions and trims are on the media: a flush covers them before any
		 * collection resets the old ones (it flushes its copies first) */
		for (uint32_t i = 0; i < k; i++)
			unpin(f, b->prev[i]);
		for (uint32_t i = 0; i < t; i++)
			unpin(f, b->tprev[i]);
		memmove(b->tprev, b->tprev + t, (size_t)(b->ntrims - t) * sizeof(*b->tprev));
		for (uint32_t i = k; i < b->n; i++)
			move_slot(f, i, i - k);
		b->n -= k;
		memmove(b->trims, b->trims + t, (size_t)(b->ntrims - t) * sizeof(*b->trims));
		b->ntrims -= t;
	}
	return 0;
}

int ftl_seal(struct ftl *f)
{
	int rc = ftl_seal_units(f);
	if (!rc && f->st.media_pages >= f->ck_due_pages)
		rc = ftl_checkpoint(f);
	return rc;
}

/* The buffer slot of logical page lpn, taking a new one (and sealing a full buffer) when it
 * has none. A partial write keeps the page's other bytes: fill says so. */
static int slot_for(struct ftl *f, uint32_t lpn, bool fill, uint32_t *slot)
{
	struct ftl_buf *b = &f->buf;
	uint32_t v = f->l2p[lpn];
	if (in_buf(v)) {
		*slot = v - FTL_BUF_BASE;
		return 0;
	}
	if (b->n == f->unit_pages) {
		int rc = ftl_seal(f);
		if (rc)
			return rc;
		v = f->l2p[lpn];
	}
	uint32_t s = b->n++;
	uint8_t *page = b->unit + (size_t)(s + 1) * FTL_PAGE;
	if (fill) {
		if (v == FTL_UNMAPPED)
			memset(page, 0, FTL_PAGE);
		else if (zdev_read(f->z, v, page, 1) != 0)
			return -EIO;
	}
	b->prev[s] = v; /* stays valid until the slot's unit is written (unpin) */
	f->l2p[lpn] = FTL_BUF_BASE + s;
	b->lpn[s] = lpn;
	*slot = s;
	return 0;
}

/* The end of a write or trim (lock held): a durable one goes to the media before the answer. */
static uint16_t end_update(struct ftl *f, bool durable, int rc)
{
	if (!rc && durable) {
		rc = ftl_seal(f);
		if (!rc)
			rc = zdev_flush(f->z);
	}
	pthread_rwlock_unlock(&f->lock);
	return status_of(rc);
}

uint16_t ftl_write(struct ftl *f, uint64_t off, const struct iovec *iov, unsigned iovcnt,
		   uint32_t len, bool durable)
{
	struct cursor c = { .iov = iov, .cnt = iovcnt };
	pthread_rwlock_wrlock(&f->lock);
	int rc = 0;
	while (len && !rc) {
		uint32_t lpn = (uint32_t)(off / FTL_PAGE), o = (uint32_t)(off % FTL_PAGE);
		uint32_t n = FTL_PAGE - o < len ? FTL_PAGE - o : len, slot;
		rc = slot_for(f, lpn, n != FTL_PAGE, &slot);
		if (rc)
			break;
		cur_copy_out(&c, f->buf.unit + (size_t)(slot + 1) * FTL_PAGE + o, n);
		f->st.host_pages++;
		off += n;
		len -= n;
	}
	return end_update(f, durable, rc);
}

uint16_t ftl_read(struct ftl *f, uint64_t off, const struct iovec *iov, unsigned iovcnt, uint32_t len)
{
	struct cursor c = { .iov = iov, .cnt = iovcnt };
	uint8_t *bounce = NULL;
	uint16_t st = 0;
	pthread_rwlock_rdlock(&f->lock);
	while (len && !st) {
		uint32_t lpn = (uint32_t)(off / FTL_PAGE), o = (uint32_t)(off % FTL_PAGE);
		uint32_t n = FTL_PAGE - o < len ? FTL_PAGE - o : len;
		uint32_t v = f->l2p[lpn];
		if (v == FTL_UNMAPPED) {
			cur_copy_in(&c, NULL, n);
		} else if (in_buf(v)) {
			cur_copy_in(&c, f->buf.unit + (size_t)(v - FTL_BUF_BASE + 1) * FTL_PAGE + o, n);
		} else if (o == 0 && n == FTL_PAGE) {
			/* whole pages: the run of pages stored one after another in one zone goes in
			 * one read, straight into the host's buffer when it is DMA memory */
			uint32_t run = 1, max = f->z->max_io_pages;
			while (run < max && (uint64_t)run * FTL_PAGE < len &&
			       len - (uint64_t)run * FTL_PAGE >= FTL_PAGE && f->l2p[lpn + run] == v + run &&
			       ftl_zone_of(f, v + run) == ftl_zone_of(f, v))
				run++;
			uint8_t *dst = cur_dma_run(&c, (size_t)run * FTL_PAGE);
			if (!dst) {
				run = 1;
				if (!bounce && !(bounce = unvme_dma_alloc(FTL_PAGE, FTL_PAGE)))
					st = ST_INTERNAL;
			}
			if (!st && zdev_read(f->z, v, dst ? dst : bounce, run) != 0)
				st = ST_READ_ERROR;
			if (!st && dst)
				cur_skip(&c, (size_t)run * FTL_PAGE);
			else if (!st)
				cur_copy_in(&c, bounce, FTL_PAGE);
			n = run * FTL_PAGE;
		} else {
			if (!bounce && !(bounce = unvme_dma_alloc(FTL_PAGE, FTL_PAGE)))
				st = ST_INTERNAL;
			else if (zdev_read(f->z, v, bounce, 1) != 0)
				st = ST_READ_ERROR;
			else
				cur_copy_in(&c, bounce + o, n);
		}
		off += n;
		len -= n;
	}
	pthread_rwlock_unlock(&f->lock);
	unvme_dma_free(bounce);
	return st;
}

/* Unmaps logical page lpn, remembering the trim for the next unit (lock held). */
static int trim_page(struct ftl *f, uint32_t lpn)
{
	struct ftl_buf *b = &f->buf;
	if (f->l2p[lpn] == FTL_UNMAPPED)
		return 0;
	if (b->ntrims == FTL_HDR_ENTS) {
		int rc = ftl_seal(f);
		if (rc)
			return rc;
	}
	/* the durable version stays valid (pinned by the trim) until the trim is on the media;
	 * a buffered slot of the page gives its pin to the trim (the slot is dropped) */
	uint32_t v = f->l2p[lpn], pin = v;
	if (in_buf(v)) {
		pin = b->prev[v - FTL_BUF_BASE];
		b->prev[v - FTL_BUF_BASE] = FTL_UNMAPPED;
	}
	f->l2p[lpn] = FTL_UNMAPPED;
	b->tprev[b->ntrims] = pin;
	b->trims[b->ntrims++] = lpn;
	return 0;
}

uint16_t ftl_trim(struct ftl *f, uint64_t off, uint64_t len, bool durable)
{
	pthread_rwlock_wrlock(&f->lock);
	int rc = 0;
	while (len && !rc) {
		uint32_t lpn = (uint32_t)(off / FTL_PAGE), o = (uint32_t)(off % FTL_PAGE);
		uint64_t n = FTL_PAGE - o < len ? FTL_PAGE - o : len;
		if (n == FTL_PAGE) {
			rc = trim_page(f, lpn);
		} else if (f->l2p[lpn] != FTL_UNMAPPED) {
			/* part of a page: its bytes read as zeroes, the rest stays */
			uint32_t slot;
			rc = slot_for(f, lpn, true, &slot);
			if (!rc)
				memset(f->buf.unit + (size_t)(slot + 1) * FTL_PAGE + o, 0, n);
		}
		off += n;
		len -= n;
	}
	return end_update(f, durable, rc);
}

int ftl_flush(struct ftl *f)
{
	pthread_rwlock_wrlock(&f->lock);
	int rc = ftl_seal(f);
	if (!rc)
		rc = zdev_flush(f->z);
	pthread_rwlock_unlock(&f->lock);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

uint64_t ftl_capacity(const struct ftl *f)
{
	return f->user_pages * FTL_PAGE;
}

void ftl_get_stats(struct ftl *f, struct ftl_stats *st)
{
	pthread_rwlock_rdlock(&f->lock);
	*st = f->st;
	st->user_pages = f->user_pages;
	st->free_zones = f->nfree;
	pthread_rwlock_unlock(&f->lock);
}
