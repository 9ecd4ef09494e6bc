/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Garbage collection: when free zones run low, a victim zone's valid pages (those whose
 * logical page still maps to them) are copied into units of the collection stream, trims it
 * holds that are newer than the last checkpoint are carried along, the copies are flushed,
 * and the victim is reset and freed.
 *
 * Victims: greedy takes the zone with the fewest valid pages; cost-benefit (LFS) the one
 * with the highest (1 - u) * age / (1 + u), u its valid fraction, age the units written since
 * it filled: cold zones are collected at a higher utilisation than hot ones, which leaves the
 * hot data time to invalidate itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ftl/ftl_internal.h"

void ftl_ztrims_add(struct ftl *f, uint32_t zone, uint32_t lpn, uint64_t seq)
{
	struct ftl_ztrims *t = &f->ztrims[zone];
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		uint64_t *e = realloc(t->ent, (size_t)cap * 2 * sizeof(*e));
		if (!e) {
			/* a checkpoint makes the trim unnecessary; until then nothing is collected */
			f->trims_lost = true;
			return;
		}
		t->ent = e;
		t->cap = cap;
	}
	t->ent[2 * t->n] = lpn;
	t->ent[2 * t->n + 1] = seq;
	t->n++;
}

static uint32_t pick_victim(const struct ftl *f)
{
	uint32_t best = UINT32_MAX;
	double best_score = -1.0;
	uint64_t cap = f->z->zcap_pages;
	for (uint32_t i = 0; i < f->z->nzones; i++) {
		if (f->role[i] != FTL_Z_USED || f->vpc[i] >= cap - cap / (f->unit_pages + 1))
			continue; /* open, free, or nothing to win */
		double score;
		if (f->o.gc == FTL_GC_GREEDY) {
			score = (double)(cap - f->vpc[i]);
		} else {
			double u = (double)f->vpc[i] / (double)cap;
			double age = (double)(f->seq - f->mtime[i] + 1);
			score = (1.0 - u) * age / (1.0 + u);
		}
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best;
}

/* Writes the collection unit's first k pages and the trims, through as many zones as it
 * takes; the pages after a partial unit move down. */
static int gc_write(struct ftl *f, uint32_t *lpn, uint32_t k, uint64_t *trims, uint32_t ntrims)
{
	while (k || ntrims) {
		if (ftl_stream_room(f, &f->gcs) < 2) {
			int rc = ftl_stream_close(f, &f->gcs);
			if (!rc)
				rc = ftl_take_zone(f, &f->gcs, true);
			if (rc)
				return rc;
		}
		uint64_t room = ftl_stream_room(f, &f->gcs) - 1;
		uint32_t m = k < room ? k : (uint32_t)room;
		uint32_t t = ntrims < FTL_HDR_ENTS - m ? ntrims : (uint32_t)(FTL_HDR_ENTS - m);
		int rc = ftl_write_unit(f, &f->gcs, f->gc_unit, lpn, m, trims, t, true);
		if (rc)
			return rc;
		if (m < k) {
			memmove(f->gc_unit + FTL_PAGE, f->gc_unit + (size_t)(m + 1) * FTL_PAGE,
				(size_t)(k - m) * FTL_PAGE);
			memmove(lpn, lpn + m, (size_t)(k - m) * sizeof(*lpn));
		}
		k -= m;
		trims += t;
		ntrims -= t;
	}
	return 0;
}

/* A page to keep: the one its logical page maps to, or the pinned durable version of a
 * logical page whose newer version or trim is still only in the write buffer (a crash before
 * that is written must find the old one). Pages are invalidated exactly when neither. */
static bool valid(const struct ftl *f, uint64_t ppa)
{
	return f->p2l[ppa] != FTL_INVALID;
}

static int collect(struct ftl *f, uint32_t v)
{
	struct zdev *z = f->z;
	uint64_t base = (uint64_t)v * z->zone_pages, end = base + z->wp[v];
	uint32_t lpn[FTL_MAX_UNIT], k = 0;
	int rc = 0;
	for (uint64_t p = base; p < end && !rc;) {
		if (!valid(f, p)) {
			p++;
			continue;
		}
		/* a run of valid pages in one read, as far as the unit has room */
		uint32_t run = 1, max = f->unit_pages - k < z->max_io_pages ? f->unit_pages - k : z->max_io_pages;
		while (run < max && p + run < end && valid(f, p + run))
			run++;
		rc = zdev_read(z, p, f->gc_unit + (size_t)(k + 1) * FTL_PAGE, run);
		for (uint32_t i = 0; !rc && i < run; i++)
			lpn[k++] = f->p2l[p + i];
		p += run;
		if (!rc && k == f->unit_pages) {
			rc = gc_write(f, lpn, k, NULL, 0);
			k = 0;
		}
	}
	/* trims newer than the checkpoint still hide older copies of their pages: carry them */
	struct ftl_ztrims *t = &f->ztrims[v];
	uint64_t *carry = NULL;
	uint32_t ncarry = 0;
	if (!rc && t->n) {
		carry = malloc((size_t)t->n * sizeof(*carry));
		if (!carry)
			rc = -ENOMEM;
		for (uint32_t i = 0; carry && i < t->n; i++)
			/* only while the trim is what the media says: a durable write after it
			 * (or its pinned page) must not be undone by a copy of the trim that
			 * replays later */
			if (t->ent[2 * i + 1] > f->ck_seq &&
			    ftl_durable_of(f, (uint32_t)t->ent[2 * i]) == FTL_UNMAPPED)
				carry[ncarry++] = t->ent[2 * i];
	}
	if (!rc)
		rc = gc_write(f, lpn, k, carry, ncarry);
	free(carry);
	/* the copies are durable before the originals go */
	if (!rc)
		rc = zdev_flush(z);
	if (!rc)
		rc = zdev_reset(z, v);
	if (rc)
		return rc < 0 ? rc : -EIO;
	for (uint64_t p = base; p < end; p++)
		f->p2l[p] = FTL_INVALID;
	f->vpc[v] = 0;
	t->n = 0;
	f->role[v] = FTL_Z_FREE;
	f->nfree++;
	f->st.gc_runs++;
	return 0;
}

int ftl_gc(struct ftl *f)
{
	if (f->trims_lost)
		return -ENOMEM;
	while (f->nfree <= f->gc_low) {
		uint32_t v = pick_victim(f);
		if (v == UINT32_MAX)
			return -ENOSPC;
		int rc = collect(f, v);
		if (rc)
			return rc;
	}
	return 0;
}
