/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cluster allocator: a bitmap in memory, never written to disk. It is rebuilt at mount from
 * the extents of the loaded metadata, so it cannot disagree with them after a crash. Files
 * ask for runs of contiguous clusters near a goal (right after their last cluster), which
 * keeps appended files in long extents; the mutex is taken once per run, not per block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

int bfs_alloc_init(struct bfs_alloc *a, uint64_t nclusters)
{
	memset(a, 0, sizeof(*a));
	a->bits = calloc((nclusters + 63) / 64, sizeof(uint64_t));
	if (!a->bits)
		return bfs_err(-ENOMEM, "out of memory for the allocation bitmap");
	a->n = nclusters;
	a->nfree = nclusters;
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

void bfs_alloc_fini(struct bfs_alloc *a)
{
	free(a->bits);
	a->bits = NULL;
	pthread_mutex_destroy(&a->lock);
}

static bool test_bit(const uint64_t *b, uint64_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static void set_range(uint64_t *b, uint64_t c, uint64_t n, bool v)
{
	for (uint64_t i = c; i < c + n; i++) {
		if (v)
			b[i >> 6] |= 1ull << (i & 63);
		else
			b[i >> 6] &= ~(1ull << (i & 63));
	}
}

bool bfs_alloc_mark(struct bfs_alloc *a, uint64_t c, uint64_t n)
{
	if (n == 0 || c >= a->n || n > a->n - c)
		return false;
	pthread_mutex_lock(&a->lock);
	bool ok = true;
	for (uint64_t i = c; i < c + n; i++)
		if (test_bit(a->bits, i))
			ok = false;
	if (ok) {
		set_range(a->bits, c, n, true);
		a->nfree -= n;
	}
	pthread_mutex_unlock(&a->lock);
	return ok;
}

/* First free cluster at or after `from`, wrapping around once; UINT64_MAX if none. Bits past
 * the last cluster are never set, so a free-looking bit there means "nothing in this word". */
static uint64_t next_free(const struct bfs_alloc *a, uint64_t from)
{
	uint64_t nw = (a->n + 63) / 64;
	uint64_t w = from >> 6;
	uint64_t word = ~a->bits[w] & (~0ull << (from & 63));
	for (uint64_t k = 0; k <= nw; k++) {
		if (word) {
			uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(word);
			if (c < a->n)
				return c;
		}
		w = (w + 1) % nw;
		word = ~a->bits[w];
	}
	return UINT64_MAX;
}

static uint64_t run_len(const struct bfs_alloc *a, uint64_t c, uint64_t max)
{
	uint64_t n = 0;
	while (c + n < a->n && n < max && !test_bit(a->bits, c + n))
		n++;
	return n;
}

uint64_t bfs_alloc_take(struct bfs_alloc *a, uint64_t goal, uint64_t want, uint64_t *out)
{
	if (want == 0)
		want = 1;
	pthread_mutex_lock(&a->lock);
	if (a->nfree == 0) {
		pthread_mutex_unlock(&a->lock);
		return 0;
	}
	if (goal >= a->n)
		goal = a->hint < a->n ? a->hint : 0;
	/* The goal itself when free (an append continues its extent). */
	uint64_t best = UINT64_MAX, best_len = 0;
	uint64_t len = run_len(a, goal, want);
	if (len) {
		best = goal;
		best_len = len;
	}
	/* Else the first run long enough after the goal (wrapping once); remember the longest
	 * run seen in case none is. */
	uint64_t c = goal;
	bool wrapped = false;
	while (best_len < want) {
		uint64_t f = next_free(a, c);
		if (f == UINT64_MAX)
			break;
		if (f < c) {
			if (wrapped)
				break;
			wrapped = true;
		}
		if (wrapped && f >= goal)
			break;
		uint64_t l = run_len(a, f, want);
		if (l > best_len) {
			best = f;
			best_len = l;
		}
		c = f + l;
		if (c >= a->n) {
			if (wrapped)
				break;
			wrapped = true;
			c = 0;
		}
	}
	if (best_len) {
		set_range(a->bits, best, best_len, true);
		a->nfree -= best_len;
		a->hint = best + best_len;
		*out = best;
	}
	pthread_mutex_unlock(&a->lock);
	return best_len;
}

void bfs_alloc_free(struct bfs_alloc *a, uint64_t c, uint64_t n)
{
	if (n == 0 || c >= a->n || n > a->n - c)
		return;
	pthread_mutex_lock(&a->lock);
	for (uint64_t i = c; i < c + n; i++) {
		if (test_bit(a->bits, i)) {
			a->bits[i >> 6] &= ~(1ull << (i & 63));
			a->nfree++;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

uint64_t bfs_alloc_nfree(struct bfs_alloc *a)
{
	pthread_mutex_lock(&a->lock);
	uint64_t n = a->nfree;
	pthread_mutex_unlock(&a->lock);
	return n;
}

bool bfs_alloc_is_used(struct bfs_alloc *a, uint64_t c)
{
	pthread_mutex_lock(&a->lock);
	bool u = c < a->n && test_bit(a->bits, c);
	pthread_mutex_unlock(&a->lock);
	return u;
}
