/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IOMMU in front of the emulated controller: which bus addresses (IOVAs) the device may
 * touch and where they live in the process. Every data PRP goes through
 * emu_iommu_translate(), so lookups are lock free: the region table is copy-on-write and
 * published through an atomic pointer; replaced tables are kept until the device is
 * destroyed (a lookup on another thread may still be reading one). A per-thread hint remembers
 * the region of the last hit, which is almost always the next one too. Replaced tables are
freed after a grace period in which no lookup can be running (every lookup runs under the
controller lock or an SQ's busy lock).
 */
#ifndef UNVME_EMU_IOMMU_H
#define UNVME_EMU_IOMMU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct emu_iommu_region {
	uint64_t iova;
	uint64_t len;
	uint8_t *vaddr;
};

struct emu_iommu_table {
	struct emu_iommu_table *retired_next;
	uint32_t n;                          /* regions, sorted by iova, never overlapping */
	struct emu_iommu_region r[];
};

struct emu_iommu {
	_Atomic(struct emu_iommu_table *) cur;
	pthread_mutex_t lock;                /* writers (map/unmap) */
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
int emu_iommu_add(struct emu_iommu *m, void *vaddr, uint64_t iova, size_t len);
int emu_iommu_remove(struct emu_iommu *m, uint64_t iova, size_t len);
/* Frees the retired tables. Caller guarantees that no lookup is in progress. */
void emu_iommu_reclaim(struct emu_iommu *m);
/* Slow path: binary search. */
uint8_t *emu_iommu_lookup(const struct emu_iommu_table *t, uint64_t iova, uint64_t len);

/* Host pointer for [iova, iova + len) if the whole range lies in one mapped region, else NULL.
 * len must be non-zero. */
static inline uint8_t *emu_iommu_translate(struct emu_iommu *m, uint64_t iova, uint64_t len)
{
	const struct emu_iommu_table *t = atomic_load_explicit(&m->cur, memory_order_acquire);
	uint32_t h = emu_iommu_hint;
	if (__builtin_expect(h < t->n, 1)) {
		const struct emu_iommu_region *r = &t->r[h];
		uint64_t off = iova - r->iova;
		if (iova >= r->iova && off < r->len && len <= r->len - off)
			return r->vaddr + off;
	}
	return emu_iommu_lookup(t, iova, len);
}

#endif
