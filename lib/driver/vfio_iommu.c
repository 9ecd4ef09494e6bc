/* SPDX-License-Identifier: BSD-3-Clause */
/* IOVA space allocator; see vfio_iommu.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfio_iommu.h"

static int grow(struct iova_space *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap * 2 : 8;
	while (cap < need)
		cap *= 2;
	struct iova_range *r = realloc(s->free, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->free = r;
	s->cap = cap;
	return 0;
}

static int insert_at(struct iova_space *s, size_t i, uint64_t start, uint64_t end)
{
	if (grow(s, s->n + 1))
		return -ENOMEM;
	memmove(&s->free[i + 1], &s->free[i], (s->n - i) * sizeof(s->free[0]));
	s->free[i] = (struct iova_range){start, end};
	s->n++;
	return 0;
}

static void remove_at(struct iova_space *s, size_t i)
{
	memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof(s->free[0]));
	s->n--;
}

int iova_space_init(struct iova_space *s, uint64_t lo, uint64_t hi)
{
	memset(s, 0, sizeof(*s));
	if (lo >= hi)
		return -EINVAL;
	s->lo = lo;
	s->hi = hi;
	return insert_at(s, 0, lo, hi);
}

void iova_space_fini(struct iova_space *s)
{
	free(s->free);
	memset(s, 0, sizeof(*s));
}

/* Takes [start, end) out of free range i, which contains it. */
static int carve(struct iova_space *s, size_t i, uint64_t start, uint64_t end)
{
	struct iova_range r = s->free[i];
	if (r.start == start && r.end == end) {
		remove_at(s, i);
	} else if (r.start == start) {
		s->free[i].start = end;
	} else if (r.end == end) {
		s->free[i].end = start;
	} else {
		if (insert_at(s, i + 1, end, r.end))
			return -ENOMEM;
		s->free[i].end = start;
	}
	return 0;
}

uint64_t iova_alloc(struct iova_space *s, uint64_t len, uint64_t align)
{
	if (len == 0 || align == 0 || (align & (align - 1)))
		return IOVA_NONE;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t start = (s->free[i].start + align - 1) & ~(align - 1);
		if (start < s->free[i].start) /* wrapped */
			continue;
		if (start >= s->free[i].end || s->free[i].end - start < len)
			continue;
		if (carve(s, i, start, start + len))
			return IOVA_NONE;
		return start;
	}
	return IOVA_NONE;
}

int iova_free(struct iova_space *s, uint64_t iova, uint64_t len)
{
	uint64_t end = iova + len;
	if (len == 0 || end < iova || iova < s->lo || end > s->hi)
		return -EINVAL;
	/* First free range starting at or after end. */
	size_t i = 0;
	while (i < s->n && s->free[i].start < end)
		i++;
	/* Overlap with the range before, or with range i? Then it was free already. */
	if (i > 0 && s->free[i - 1].end > iova)
		return -EINVAL;
	int merge_prev = (i > 0 && s->free[i - 1].end == iova);
	int merge_next = (i < s->n && s->free[i].start == end);
	if (merge_prev && merge_next) {
		s->free[i - 1].end = s->free[i].end;
		remove_at(s, i);
	} else if (merge_prev) {
		s->free[i - 1].end = end;
	} else if (merge_next) {
		s->free[i].start = iova;
	} else {
		return insert_at(s, i, iova, end);
	}
	return 0;
}

int iova_space_reserve(struct iova_space *s, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < s->n && start < end;) {
		struct iova_range r = s->free[i];
		uint64_t a = start > r.start ? start : r.start;
		uint64_t b = end < r.end ? end : r.end;
		if (a >= b) {
			i++;
			continue;
		}
		size_t before = s->n;
		if (carve(s, i, a, b))
			return -ENOMEM;
		/* A removed range leaves i at the next one; a trimmed or split one stays at i. */
		if (s->n >= before)
			i++;
	}
	return 0;
}

uint64_t iova_space_free_bytes(const struct iova_space *s)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += s->free[i].end - s->free[i].start;
	return sum;
}
