/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA memory: pinned host memory with a bus address (IOVA) per byte.
 *
 * Memory comes in 2 MiB chunks (hugepages when reserved, else locked regular pages), each
 * given an IOVA range of its own; regular pages are refused beyond what the kernel reports
 * available (MemAvailable), rather than left to the OOM killer. Every device attached to the process sees every chunk:
 * transports register a mapper, which is told about all existing chunks at once and about
 * each new chunk as it is created (VFIO_IOMMU_MAP_DMA for a PCIe device, the emulated
 * platform's IOMMU for an emulated one).
 */
#ifndef UNVME_DRIVER_DMA_H
#define UNVME_DRIVER_DMA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DMA_CHUNK_SIZE (2u << 20)

struct dma_mapper {
	int (*map)(void *ctx, void *vaddr, uint64_t iova, size_t len);
	void (*unmap)(void *ctx, uint64_t iova, size_t len);
	void *ctx;
	/* Optional, instead of map: also told where the memory's pages are (fd, off), for a
	 * device run by another process, which maps them itself; fd is -1 for memory that
	 * cannot be shared (a forked child's inherited copies). */
	int (*map_shared)(void *ctx, void *vaddr, uint64_t iova, size_t len, int fd, uint64_t off);
};


/* Registers a mapper and maps every existing chunk through it; 0 or the mapper's error. */
int dma_mapper_register(const struct dma_mapper *m);
/* Unmaps every chunk from the mapper and forgets it. */
void dma_mapper_unregister(const struct dma_mapper *m);

/* The IOVA of vaddr and how many bytes from vaddr on are contiguous in IOVA space (to the
 * end of its allocation's chunk). Returns UINT64_MAX when vaddr is not DMA memory. Lock free. */
uint64_t dma_translate(const void *vaddr, size_t *contig);

/*
 * A one-entry cache of the chunk a thread's last buffer lay in, kept by its owner (a queue
 * pair's submitter): the I/O path then translates with two compares and an add instead of
 * the slot table's walk, since a thread's buffers mostly share one chunk. dma_generation
 * moves whenever a chunk goes away, which empties every cache (an address of a freed chunk
 * may belong to another chunk later, with another IOVA).
 */
struct dma_xlate_cache {
	uintptr_t va;     /* the chunk's start; len 0: empty */
	size_t len;
	uint64_t iova;
	uint32_t gen;     /* dma_generation when filled */
};
extern _Atomic uint32_t dma_generation;
/* dma_translate, filling the cache (the slow half of dma_translate_cached). */
uint64_t dma_translate_fill(struct dma_xlate_cache *tc, const void *vaddr, size_t *contig);

static inline uint64_t dma_translate_cached(struct dma_xlate_cache *tc, const void *vaddr,
					    size_t *contig)
{
	uintptr_t off = (uintptr_t)vaddr - tc->va;
	if (__builtin_expect(off < tc->len &&
			     tc->gen == atomic_load_explicit(&dma_generation, memory_order_acquire), 1)) {
		*contig = tc->len - off;
		return tc->iova + off;
	}
	return dma_translate_fill(tc, vaddr, contig);
}
/* The reverse: the address of the DMA memory at iova and how many bytes from it are
 * contiguous, or NULL. For transports that carry data themselves (NVMe/TCP) when a command
 * holds a bus address (a KV key pointer). Takes the allocator lock; linear in the chunks. */
void *dma_iova_to_va(uint64_t iova, size_t *contig);

/* The allocator's own bookkeeping, for tests: live chunks and their bytes, descriptors kept
 * for reuse, leaves of the slot table. */
struct dma_stats {
	uint64_t chunks, bytes, free_descriptors, leaves;
};
void dma_stats(struct dma_stats *st);

#endif
