/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's extent list: sorted, non-overlapping runs of file clusters mapped to contiguous
 * data-area clusters. Binary search on the read path; neighbours merge when both the file
 * and the device side continue and the flags agree, so an appended file stays a few extents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

/* Index of the first extent whose end is after lclu (n if none). */
static uint32_t find(const struct bfs_extents *x, uint64_t lclu)
{
	uint32_t lo = 0, hi = x->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct bfs_extent *e = &x->e[mid];
		if (e->lclu + e->count <= lclu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool bfs_ext_lookup(const struct bfs_extents *x, uint64_t lclu, uint64_t *pclu, uint64_t *run,
		    uint32_t *flags)
{
	uint32_t i = find(x, lclu);
	if (i == x->n || x->e[i].lclu > lclu) {
		/* A hole: *run says how long, up to the next extent (or "to the end"). */
		if (run)
			*run = i == x->n ? UINT64_MAX : x->e[i].lclu - lclu;
		return false;
	}
	const struct bfs_extent *e = &x->e[i];
	*pclu = e->pclu + (lclu - e->lclu);
	if (run)
		*run = e->lclu + e->count - lclu;
	if (flags)
		*flags = e->flags;
	return true;
}

static int reserve(struct bfs_extents *x, uint32_t need)
{
	if (x->n + need <= x->cap)
		return 0;
	uint32_t cap = x->cap ? x->cap * 2 : 4;
	while (cap < x->n + need)
		cap *= 2;
	struct bfs_extent *e = realloc(x->e, cap * sizeof(*e));
	if (!e)
		return bfs_err(-ENOMEM, "out of memory for an extent list");
	x->e = e;
	x->cap = cap;
	return 0;
}

static bool joins(const struct bfs_extent *a, const struct bfs_extent *b)
{
	return a->flags == b->flags && a->lclu + a->count == b->lclu &&
	       a->pclu + a->count == b->pclu && (uint64_t)a->count + b->count <= UINT32_MAX;
}

int bfs_ext_add(struct bfs_extents *x, uint64_t lclu, uint64_t pclu, uint32_t count, uint32_t flags)
{
	if (!count)
		return 0;
	uint32_t i = find(x, lclu);
	if (i < x->n && x->e[i].lclu < lclu + count)
		return bfs_err(-EEXIST, "file cluster %llu is mapped already", (unsigned long long)lclu);
	struct bfs_extent ne = { lclu, pclu, count, flags };
	if (i > 0 && joins(&x->e[i - 1], &ne)) {
		x->e[i - 1].count += count;
		if (i < x->n && joins(&x->e[i - 1], &x->e[i])) {
			x->e[i - 1].count += x->e[i].count;
			memmove(&x->e[i], &x->e[i + 1], (x->n - i - 1) * sizeof(*x->e));
			x->n--;
		}
		return 0;
	}
	if (i < x->n && joins(&ne, &x->e[i])) {
		x->e[i].lclu = lclu;
		x->e[i].pclu = pclu;
		x->e[i].count += count;
		return 0;
	}
	int rc = reserve(x, 1);
	if (rc)
		return rc;
	memmove(&x->e[i + 1], &x->e[i], (x->n - i) * sizeof(*x->e));
	x->e[i] = ne;
	x->n++;
	return 0;
}

void bfs_ext_trim(struct bfs_extents *x, uint64_t lclu,
		  void (*fn)(void *arg, uint64_t pclu, uint32_t count, uint32_t flags), void *arg)
{
	uint32_t i = find(x, lclu);
	if (i == x->n)
		return;
	uint32_t keep = i;
	struct bfs_extent *e = &x->e[i];
	if (e->lclu < lclu) {
		/* Cut this extent: its head stays. */
		uint32_t cut = (uint32_t)(lclu - e->lclu);
		if (fn)
			fn(arg, e->pclu + cut, e->count - cut, e->flags);
		e->count = cut;
		keep = i + 1;
		i++;
	}
	for (; i < x->n; i++)
		if (fn)
			fn(arg, x->e[i].pclu, x->e[i].count, x->e[i].flags);
	x->n = keep;
}

/* Splits the extent holding lclu so that one starts exactly at lclu. */
static int split_at(struct bfs_extents *x, uint64_t lclu)
{
	uint32_t i = find(x, lclu);
	if (i == x->n || x->e[i].lclu >= lclu)
		return 0;
	int rc = reserve(x, 1);
	if (rc)
		return rc;
	struct bfs_extent *e = &x->e[i];
	uint32_t head = (uint32_t)(lclu - e->lclu);
	struct bfs_extent tail = { lclu, e->pclu + head, e->count - head, e->flags };
	e->count = head;
	memmove(&x->e[i + 2], &x->e[i + 1], (x->n - i - 1) * sizeof(*x->e));
	x->e[i + 1] = tail;
	x->n++;
	return 0;
}

/* Extents start exactly at lclu and at lclu + count. */
static int split_range(struct bfs_extents *x, uint64_t lclu, uint64_t count)
{
	int rc = split_at(x, lclu);
	return rc ? rc : split_at(x, lclu + count);
}

int bfs_ext_set_logged(struct bfs_extents *x, uint64_t lclu, uint64_t count,
		       void (*fn)(void *arg, const struct bfs_extent *e), void *arg)
{
	if (!count)
		return 0;
	int rc = split_range(x, lclu, count);
	if (rc)
		return rc;
	for (uint32_t i = find(x, lclu); i < x->n && x->e[i].lclu < lclu + count; i++) {
		if (!(x->e[i].flags & BFS_UNLOGGED))
			continue;
		x->e[i].flags &= ~BFS_UNLOGGED;
		if (fn)
			fn(arg, &x->e[i]);
	}
	/* Merge what became equal. */
	uint32_t w = 0;
	for (uint32_t r = 0; r < x->n; r++) {
		if (w > 0 && joins(&x->e[w - 1], &x->e[r]))
			x->e[w - 1].count += x->e[r].count;
		else
			x->e[w++] = x->e[r];
	}
	x->n = w;
	return 0;
}

void bfs_ext_free(struct bfs_extents *x)
{
	free(x->e);
	memset(x, 0, sizeof(*x));
}

uint64_t bfs_ext_clusters_count(const struct bfs_extents *x, uint32_t flags_mask, uint32_t flags)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < x->n; i++)
		if ((x->e[i].flags & flags_mask) == flags)
			n++;
	return n;
}

uint64_t bfs_ext_clusters(const struct bfs_extents *x, uint32_t flags_mask, uint32_t flags)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < x->n; i++)
		if ((x->e[i].flags & flags_mask) == flags)
			n += x->e[i].count;
	return n;
}

int bfs_ext_punch(struct bfs_extents *x, uint64_t lclu, uint64_t count, uint32_t flags,
		  void (*fn)(void *arg, uint64_t pclu, uint32_t count, uint32_t flags), void *arg)
{
	if (!count)
		return 0;
	int rc = split_range(x, lclu, count);
	if (rc)
		return rc;
	uint32_t w = 0;
	for (uint32_t r = 0; r < x->n; r++) {
		struct bfs_extent *e = &x->e[r];
		bool inside = e->lclu >= lclu && e->lclu + e->count <= lclu + count;
		if (inside && (e->flags & flags) == flags) {
			if (fn)
				fn(arg, e->pclu, e->count, e->flags);
			continue;
		}
		x->e[w++] = *e;
	}
	x->n = w;
	return 0;
}
