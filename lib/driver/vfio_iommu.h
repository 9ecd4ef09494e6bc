/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IOVA space: the bus addresses DMA memory gets in the device's IOMMU. A sorted list of free
 * ranges, first fit, coalescing on free, so IOVAs of freed DMA chunks are used again and the
 * space never runs out under allocate/free churn. Ranges the IOMMU cannot translate (the MSI
 * window, addresses above its width) are carved out with iova_space_reserve. Not thread safe:
 * the DMA allocator calls it under its lock.
 */
#ifndef UNVME_DRIVER_VFIO_IOMMU_H
#define UNVME_DRIVER_VFIO_IOMMU_H

#include <stddef.h>
#include <stdint.h>

#define IOVA_NONE UINT64_MAX

struct iova_range {
	uint64_t start; /* inclusive */
	uint64_t end;   /* exclusive */
};

struct iova_space {
	struct iova_range *free; /* sorted, disjoint, never adjacent */
	size_t n, cap;
	uint64_t lo, hi;         /* the managed window [lo, hi) */
};

/* Manages [lo, hi). 0 or -EINVAL / -ENOMEM. */
int iova_space_init(struct iova_space *s, uint64_t lo, uint64_t hi);
void iova_space_fini(struct iova_space *s);
/* len bytes aligned to align (a power of two); IOVA_NONE when no free range fits. */
uint64_t iova_alloc(struct iova_space *s, uint64_t len, uint64_t align);
/* Returns [iova, iova + len) to the space. -EINVAL if it is outside the window or (partly)
 * free already: a double free is refused rather than corrupting the list. */
int iova_free(struct iova_space *s, uint64_t iova, uint64_t len);
/* Removes [start, end) from the free ranges (whatever part of it is free). 0 or -ENOMEM. */
int iova_space_reserve(struct iova_space *s, uint64_t start, uint64_t end);
/* Bytes free. */
uint64_t iova_space_free_bytes(const struct iova_space *s);

#endif
