/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SDK's slab allocator for I/O buffers (keys and values handed to the device).
 *
 * Every object is DMA memory from unvme_dma_alloc(), so it can go straight into a command's
 * PRP entries. The slab takes DMA memory from the driver in 4 MiB regions (each two 2 MiB
 * segments, 2 MiB aligned, contiguous in IOVA space) up to a byte budget, and carves objects
 * of power-of-two size classes out of segments:
 *
 *   64 B, 128 B, ..., 1 MiB, 2 MiB   objects carved from one 2 MiB segment, each aligned to its
 *                                    own size: objects of 4 KiB and more are page aligned and
 *                                    objects of at most 4 KiB never cross a 4 KiB page (so a key
 *                                    of up to 255 bytes always fits one PRP entry).
 *   2 MiB + 4 KiB (KV_SLAB_MAX_SIZE) a whole region (both segments); page aligned, IOVA
 *                                    contiguous. Charged 4 MiB of the budget, and needs a
 *                                    region whose two segments are both empty: small objects
 *                                    scattered over every region can make it fail while
 *                                    free segments remain.
 *
 * A segment whose objects are all free goes back to a shared pool and can serve any class, so
 * the budget limits live bytes (plus per-thread caches and fragmentation), not a fixed split
 * between classes. DMA memory is given back to the driver only by the last kv_slab_fini().
 *
 * Hot path: each thread keeps a small bounded cache of free objects per class (classes up to
 * 128 KiB; at most 64 objects and 256 KiB per class), so an alloc/free pair normally takes
 * no lock. Refills and flushes move half a cache at a time under a per-class mutex. A thread's
 * cache is flushed back when the thread exits, when kv_slab_thread_flush() is called, and
 * when one of the calling thread's allocations would otherwise fail on the budget. Objects
 * parked in *other* threads' caches are not reachable until those threads flush them: at most
 * about 1.8 MiB per thread.
 *
 * All functions are thread safe, except that kv_slab_init()/kv_slab_fini() must not run
 * concurrently with allocations (the SDK calls them from kv_sdk_init/kv_sdk_finalize).
 */
#ifndef UNVME_KVSDK_KV_SLAB_H
#define UNVME_KVSDK_KV_SLAB_H

#include <stddef.h>
#include <stdint.h>

/* Largest request kv_slab_alloc() serves: a 2 MiB value plus one page. */
#define KV_SLAB_MAX_SIZE ((size_t)(2u << 20) + 4096u)
/* Smallest class. */
#define KV_SLAB_MIN_SIZE ((size_t)64)
/* 64 B .. 2 MiB (16 power-of-two classes) plus the 2 MiB + 4 KiB class. */
#define KV_SLAB_NR_CLASSES 17
/* The DMA memory unit the budget is counted in. */
#define KV_SLAB_REGION_SIZE ((size_t)(4u << 20))

/*
 * Sets the slab up, or (when already set up) only takes another reference: the budget and
 * policy of the first call stay in force. budget_bytes is rounded up to whole 4 MiB regions,
 * at least one. policy (kv_types.h) decides *when* DMA memory is taken, not what kind: the
 * driver itself uses hugepages when some are reserved and locked regular pages otherwise,
 * whichever policy is given, and every object is DMA memory either way.
 *   SLAB_MM_ALLOC_HUGE:  the whole budget is taken from the driver now (as the original took
 *                        its hugepage slab up front); init fails if it cannot be had.
 *   SLAB_MM_ALLOC_POSIX: regions are taken from the driver on demand, up to the budget.
 * Returns 0, -EINVAL for an unknown policy or a zero budget, -ENOSPC when the budget exceeds
 * the memory the machine can provide now (unvme_dma_mem_available: checked up front, so an
 * impossible budget fails at once instead of growing into the OOM killer), -ENOMEM when
 * memory for the slab's own bookkeeping or (HUGE) the DMA memory cannot be had.
 */
int kv_slab_init(uint64_t budget_bytes, int policy);

/*
 * An object of at least size bytes (size 0 counts as 1), aligned to its class size up to
 * 2 MiB (to 4 KiB for the largest class). Contents are undefined. NULL when size exceeds
 * KV_SLAB_MAX_SIZE, the slab is not initialised, or the budget is exhausted (the SDK then
 * reports KV_ERR_SLAB_ALLOC_FAILURE).
 */
void *kv_slab_alloc(size_t size);

/* Returns an object from kv_slab_alloc(); any thread may free it. NULL is ignored; a pointer
 * that is not the start of a slab object is reported on stderr and ignored. */
void kv_slab_free(void *p);

/* The usable size of an object from kv_slab_alloc() (its class size); 0 for NULL or a
 * pointer the slab does not own. */
size_t kv_slab_size_of(const void *p);

/* Hands the calling thread's cached free objects back to the shared lists. */
void kv_slab_thread_flush(void);

struct kv_slab_class_stats {
	uint64_t size;        /* object size of the class */
	uint64_t outstanding; /* objects out of the shared lists: in use or in a thread's cache */
	uint64_t segments;    /* 2 MiB segments currently assigned to the class */
};

struct kv_slab_stats {
	uint64_t budget_bytes;      /* the budget, rounded up to whole regions */
	uint64_t reserved_bytes;    /* DMA memory taken from the driver so far */
	uint64_t outstanding_bytes; /* sum over classes of size * outstanding */
	uint64_t free_segment_bytes;/* bytes in empty segments, ready for any class */
	uint64_t alloc_failures;    /* kv_slab_alloc() calls that returned NULL */
	uint32_t nr_classes;        /* KV_SLAB_NR_CLASSES */
	struct kv_slab_class_stats classes[KV_SLAB_NR_CLASSES];
};

/* A snapshot; zeroes when the slab is not initialised. Takes every lock: not for hot paths. */
void kv_slab_stats(struct kv_slab_stats *st);

/* Drops a reference; the last one returns all DMA memory to the driver (objects still
 * allocated become invalid) and lets a later kv_slab_init() start over. Extra calls are
 * ignored. */
void kv_slab_fini(void);

#endif
