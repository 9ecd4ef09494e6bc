/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IOMMU in front of the emulated controller: which bus addresses (IOVAs) the device may
 * touch and where they live in the process. Every data PRP goes through
 * emu_iommu_translate(), so lookups never lock: the regions sit in an array sorted by IOVA
 * and published through an atomic pointer, and a per-thread hint remembers the region of the
 * last hit, which is almost always the next one too.
 *
 * Mapping and unmapping cost O(1) amortized, with no copy of the table in the usual cases: a
 * region after the last one is appended in place (the table grows by doubling), an unmapped
 * region becomes a hole (length 0) in place, and a new region that fits a hole's place in the
 * order takes the hole. Only an insertion between two live regions, a full table, or holes
 * outnumbering live regions rebuild the table; the replaced table is freed after a grace
 * period in which no lookup can be running (every lookup runs under the controller lock or an
 * SQ's busy lock), at the latest when EMU_IOMMU_RETIRED_MAX are waiting.
 */
#ifndef UNVME_EMU_IOMMU_H
#define UNVME_EMU_IOMMU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Fields are atomics: a lookup may read a region while a map or unmap changes it in place.
 * A writer stores iova and vaddr before len (release); a reader loads len (acquire) first. */
struct emu_iommu_region {
	_Atomic uint64_t iova;
	_Atomic uint64_t len;           /* 0: a hole (unmapped) */
	uint8_t *_Atomic vaddr;
};

struct emu_iommu_table {
	struct emu_iommu_table *retired_next;
	uint32_t cap;
	_Atomic uint32_t n;             /* regions and holes, sorted by iova, never overlapping */
	struct emu_iommu_region r[];
};

struct emu_iommu {
	_Atomic(struct emu_iommu_table *) cur;
	_Atomic uint32_t gen;                /* moves at every map and unmap (emu_iommu_tlb) */
	pthread_mutex_t lock;                /* writers (map/unmap) */
	uint32_t holes;                      /* in cur */
	struct emu_iommu_table *retired;
	uint32_t nr_retired;
};

/* Retired tables kept before a grace period frees them (see emu_iommu_map). */
#define EMU_IOMMU_RETIRED_MAX 32u

/* Index of the region the calling thread hit last (any device: it is only a hint, always
 * checked against the current table). */
extern __thread uint32_t emu_iommu_hint;

int emu_iommu_init(struct emu_iommu *m);
void emu_iommu_fini(struct emu_iommu *m);
/* 0, -EINVAL (empty or wrapping), -EEXIST (overlaps a mapping), -ENOMEM. */
int emu_iommu_add(struct emu_iommu *m, void *vaddr, uint64_t iova, size_t len);
/* Unmaps exactly a region that was mapped: 0 or -ENOENT. */
int emu_iommu_remove(struct emu_iommu *m, uint64_t iova, size_t len);
/* Frees the retired tables. Caller guarantees that no lookup is in progress. */
void emu_iommu_reclaim(struct emu_iommu *m);
/* Slow path: binary search. */
uint8_t *emu_iommu_lookup(const struct emu_iommu_table *t, uint64_t iova, uint64_t len);

/* Host pointer for [iova, iova + len) if the whole range lies in region r, else NULL. */
static inline uint8_t *emu_iommu_region_at(const struct emu_iommu_region *r, uint64_t iova,
					   uint64_t len)
{
	uint64_t rlen = atomic_load_explicit(&r->len, memory_order_acquire);
	uint64_t start = atomic_load_explicit(&r->iova, memory_order_relaxed);
	uint64_t off = iova - start;
	if (iova >= start && off < rlen && len <= rlen - off)
		return atomic_load_explicit(&r->vaddr, memory_order_relaxed) + off;
	return NULL;
}

/* Host pointer for [iova, iova + len) if the whole range lies in one mapped region, else NULL.
 * len must be non-zero. */
static inline uint8_t *emu_iommu_translate(struct emu_iommu *m, uint64_t iova, uint64_t len)
{
	const struct emu_iommu_table *t = atomic_load_explicit(&m->cur, memory_order_acquire);
	uint32_t h = emu_iommu_hint;
	if (__builtin_expect(h < atomic_load_explicit(&t->n, memory_order_acquire), 1)) {
		uint8_t *p = emu_iommu_region_at(&t->r[h], iova, len);
		if (p)
			return p;
	}
	return emu_iommu_lookup(t, iova, len);
}

/*
 * A translator's memory of the region it hit last, for a run of translations that one holder
 * makes in a row (the fetch loop of one SQ, hw/emu/emu_io.c: a batch's buffers mostly share a
 * region). Its holder empties it when the IOMMU's generation moved since it was filled, at
 * the start of each run, so a mapping change between runs is always seen; within a run it
 * answers as the table did at the run's first translation into that region, as a device's
 * address translation cache would.
 */
struct emu_iommu_tlb {
	uint64_t iova;
	uint64_t len;
	uint8_t *vaddr;
};

/* The slow half of emu_iommu_translate_tlb: looks iova up and remembers its region. */
uint8_t *emu_iommu_tlb_fill(struct emu_iommu *m, struct emu_iommu_tlb *k, uint64_t iova,
			    uint64_t len);

static inline uint8_t *emu_iommu_translate_tlb(struct emu_iommu *m, struct emu_iommu_tlb *k,
					       uint64_t iova, uint64_t len)
{
	uint64_t off = iova - k->iova;
	if (__builtin_expect(off < k->len && len <= k->len - off, 1))
		return k->vaddr + off;
	return emu_iommu_tlb_fill(m, k, iova, len);
}

#endif
