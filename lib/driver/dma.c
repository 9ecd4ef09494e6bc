/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA memory allocator. Small requests are served from power-of-two size classes carved out
 * of 2 MiB chunks (a class object is naturally aligned to its size because chunks are 2 MiB
 * aligned); larger ones get chunks of their own.
 *
 * Bookkeeping is O(1) per 2 MiB of memory and never republishes anything: every chunk starts
 * on a 2 MiB boundary, so the 2 MiB slot of an address, found in a two-level table indexed by
 * the address bits (8192 x 16384 slots over 48 bits of address space, leaves made on first
 * use), names its chunk directly. Translation from virtual address to IOVA, which the I/O
 * path does per command, reads that table without locks; creating and freeing chunks takes a
 * mutex. Chunk descriptors are recycled through a free list rather than freed, so a lock-free
 * reader holding a stale one never touches freed memory, and their number is bounded by the
 * most chunks ever alive at once. Leaves are never freed either: at most one per 32 GiB of
 * address space ever used.
 *
 * Chunks are pages of a memfd (one for hugepages, one for regular pages) at the offset of
 * their IOVA within the process's IOVA window, so that another process can map exactly the
 * same pages: a primary process maps a secondary's DMA memory into the device it runs
 * (mp_*.c). Each process leases a window of its own (a flock on a lock file in the run
 * directory), so the IOVAs of processes sharing a device never collide. A forked child gets
 * private copies of the chunks it inherits (their free lists live in the chunks themselves,
 * so sharing them with the parent would corrupt both) and memfds of its own for new ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/common/env.h"
#include "unvme/unvme.h"
#include "dma.h"
#include "errmsg.h"
#include "rundir.h"
#include "vfio_iommu.h"

#define CLASS_MIN_SHIFT 6   /* 64 B */
#define CLASS_MAX_SHIFT 20  /* 1 MiB: anything larger gets whole chunks */
#define NCLASSES (CLASS_MAX_SHIFT - CLASS_MIN_SHIFT + 1)
#define MAX_MAPPERS 64
/* IOVA windows of 64 GiB, one per process: window k is [k << 36, (k + 1) << 36). The first
 * seven lie within 39 bits, the smallest address width of an Intel IOMMU (and QEMU's
 * intel-iommu default), which a VFIO process needs; the emulated device takes any. */
#define IOVA_WINDOW_SHIFT 36
#define IOVA_WINDOW_SIZE (1ull << IOVA_WINDOW_SHIFT)
#define IOVA_WINDOWS 4096u

/* The slot table: 48-bit user addresses in 2 MiB slots, 2^13 leaves of 2^14 slots. */
#define VA_BITS 48
#define SLOT_SHIFT 21
#define LEAF_BITS 14
#define TOP_BITS (VA_BITS - SLOT_SHIFT - LEAF_BITS)
#define LEAF_SLOTS (1u << LEAF_BITS)
_Static_assert((1u << SLOT_SHIFT) == DMA_CHUNK_SIZE, "a slot is a chunk");

#define DESC_BLOCK 256      /* descriptors allocated at a time */
/* Available memory is read again after this much was taken without hugepages. */
#define MEMINFO_REFRESH (256ull << 20)

struct dma_chunk {
	/* Read by lock-free translators: atomics, so a reader of a recycled descriptor reads
	 * whole values (it then finds the address outside and gives up). */
	_Atomic uintptr_t va;
	_Atomic size_t len;       /* 0 while the descriptor is free */
	_Atomic uint64_t iova;
	/* Under dma_lock. */
	int cls;                  /* size class index, or -1 for a dedicated (large) allocation */
	bool huge;
	bool shared;              /* pages of mem_fd[huge] at iova - iova_lo (else private) */
	struct dma_chunk *prev, *next; /* live chunks; free descriptors use next only */
};

struct free_obj {
	struct free_obj *next;
};

typedef struct dma_chunk *_Atomic slot_t;

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(slot_t *) slot_top[1u << TOP_BITS];
static struct dma_chunk *live;          /* every chunk, for mappers registered later */
static struct dma_chunk *free_descs;
static struct free_obj *free_list[NCLASSES];
static struct dma_mapper mappers[MAX_MAPPERS];
static size_t nmappers;
static struct iova_space iova_space; /* IOVAs of freed chunks are given out again */
static uint64_t iova_lo, iova_hi;    /* the process's window */
static int mem_fd[2] = { -1, -1 };   /* backing of the chunks: [0] regular pages, [1] huge */
static bool notice_given;
static uint64_t regular_budget;      /* regular memory we may still take before reading
				      * /proc/meminfo again (0: read it now) */

/* ---- the slot table ---- */

static slot_t *leaf_of(uintptr_t va, bool create)
{
	size_t t = (size_t)(va >> (SLOT_SHIFT + LEAF_BITS));
	slot_t *leaf = atomic_load_explicit(&slot_top[t], memory_order_acquire);
	if (leaf || !create)
		return leaf;
	leaf = calloc(LEAF_SLOTS, sizeof(*leaf)); /* dma_lock held: no other creator */
	if (leaf)
		atomic_store_explicit(&slot_top[t], leaf, memory_order_release);
	return leaf;
}

/* Points the slots of [va, va + len) at c (NULL clears them). Every leaf exists already
 * when c is NULL; otherwise -ENOMEM if one cannot be made. */
static int set_slots(uintptr_t va, size_t len, struct dma_chunk *c)
{
	for (uintptr_t a = va; a < va + len; a += DMA_CHUNK_SIZE) {
		slot_t *leaf = leaf_of(a, c != NULL);
		if (!leaf)
			return -ENOMEM;
		/* release: the descriptor is complete before a reader can find it */
		atomic_store_explicit(&leaf[(a >> SLOT_SHIFT) & (LEAF_SLOTS - 1)], c,
				      memory_order_release);
	}
	return 0;
}

static struct dma_chunk *find_chunk(const void *vaddr)
{
	uintptr_t v = (uintptr_t)vaddr;
	if (v >> VA_BITS)
		return NULL;
	slot_t *leaf = leaf_of(v, false);
	if (!leaf)
		return NULL;
	struct dma_chunk *c = atomic_load_explicit(&leaf[(v >> SLOT_SHIFT) & (LEAF_SLOTS - 1)],
						   memory_order_acquire);
	if (!c)
		return NULL;
	uintptr_t va = atomic_load_explicit(&c->va, memory_order_relaxed);
	size_t len = atomic_load_explicit(&c->len, memory_order_relaxed);
	return v >= va && v - va < len ? c : NULL;
}

_Atomic uint32_t dma_generation;

uint64_t dma_translate_fill(struct dma_xlate_cache *tc, const void *vaddr, size_t *contig)
{
	/* the generation first: a chunk that goes after this load moves it, so an entry made
	 * from a chunk found going is never used */
	uint32_t gen = atomic_load_explicit(&dma_generation, memory_order_acquire);
	const struct dma_chunk *c = find_chunk(vaddr);
	if (!c) {
		tc->len = 0;
		return UINT64_MAX;
	}
	tc->va = atomic_load_explicit(&c->va, memory_order_relaxed);
	tc->len = atomic_load_explicit(&c->len, memory_order_relaxed);
	tc->iova = atomic_load_explicit(&c->iova, memory_order_relaxed);
	tc->gen = gen;
	size_t off = (size_t)((uintptr_t)vaddr - tc->va);
	if (off >= tc->len) { /* a descriptor recycled under us */
		tc->len = 0;
		return UINT64_MAX;
	}
	*contig = tc->len - off;
	return tc->iova + off;
}

uint64_t dma_translate(const void *vaddr, size_t *contig)
{
	const struct dma_chunk *c = find_chunk(vaddr);
	if (!c)
		return UINT64_MAX;
	size_t off = (size_t)((uintptr_t)vaddr - atomic_load_explicit(&c->va, memory_order_relaxed));
	if (contig)
		*contig = atomic_load_explicit(&c->len, memory_order_relaxed) - off;
	return atomic_load_explicit(&c->iova, memory_order_relaxed) + off;
}

/* ---- descriptors (dma_lock held) ---- */

static struct dma_chunk *desc_get(void)
{
	if (!free_descs) {
		struct dma_chunk *block = calloc(DESC_BLOCK, sizeof(*block));
		if (!block)
			return NULL;
		for (size_t i = 0; i < DESC_BLOCK; i++) {
			block[i].next = free_descs;
			free_descs = &block[i];
		}
	}
	struct dma_chunk *c = free_descs;
	free_descs = c->next;
	c->prev = c->next = NULL;
	return c;
}

static void desc_put(struct dma_chunk *c)
{
	atomic_store_explicit(&c->len, 0, memory_order_relaxed);
	c->next = free_descs;
	free_descs = c;
}

static void live_add(struct dma_chunk *c)
{
	c->prev = NULL;
	c->next = live;
	if (live)
		live->prev = c;
	live = c;
}

static void live_remove(struct dma_chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		live = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

/* Maps chunk c into the mapper's device, with its backing when the mapper wants it. */
static int mapper_map(const struct dma_mapper *m, const struct dma_chunk *c)
{
	void *va = (void *)atomic_load_explicit(&c->va, memory_order_relaxed);
	uint64_t iova = atomic_load_explicit(&c->iova, memory_order_relaxed);
	size_t len = atomic_load_explicit(&c->len, memory_order_relaxed);
	if (m->map_shared)
		return m->map_shared(m->ctx, va, iova, len, c->shared ? mem_fd[c->huge] : -1,
				     iova - iova_lo);
	return m->map(m->ctx, va, iova, len);
}

/* ---- memory ---- */

/* Bytes the machine can still give as DMA memory: free hugepages, plus regular memory the
 * kernel reports available. */
static uint64_t meminfo(uint64_t *huge_free, uint64_t *regular)
{
	*huge_free = *regular = 0;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return UINT64_MAX; /* cannot tell: do not refuse on a guess */
	char line[128];
	uint64_t pages = 0, page_kb = 0, avail_kb = 0;
	bool have_avail = false;
	while (fgets(line, sizeof(line), f)) {
		uint64_t v;
		if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1)
			pages = v;
		else if (sscanf(line, "Hugepagesize: %" SCNu64, &v) == 1)
			page_kb = v;
		else if (sscanf(line, "MemAvailable: %" SCNu64, &v) == 1) {
			avail_kb = v;
			have_avail = true;
		}
	}
	fclose(f);
	if (!have_avail)
		return UINT64_MAX;
	*huge_free = pages * page_kb * 1024;
	*regular = avail_kb * 1024;
	return *huge_free + *regular;
}

UNVME_API uint64_t unvme_dma_mem_available(void)
{
	uint64_t huge, regular;
	return meminfo(&huge, &regular);
}

/* May len more bytes of regular memory be taken? Reads /proc/meminfo only every
 * MEMINFO_REFRESH bytes, so a large allocation costs no more than a few reads. */
static bool regular_memory_left(size_t len)
{
	if (regular_budget < len) {
		uint64_t huge, regular;
		if (meminfo(&huge, &regular) == UINT64_MAX)
			return true;
		regular_budget = regular;
		if (regular_budget < len)
			return false;
	}
	regular_budget -= len;
	if (regular_budget > MEMINFO_REFRESH)
		regular_budget = MEMINFO_REFRESH;
	return true;
}

/* Why the last chunk could not be made (dma_lock held). */
static enum { WHY_NONE, WHY_NO_MEMORY, WHY_MACHINE_FULL, WHY_IOVA } why;

/* Walks the live chunks under dma_lock: only NVMe/TCP's KV commands with a key in host memory
 * come here, once per command. */
void *dma_iova_to_va(uint64_t iova, size_t *contig)
{
	void *va = NULL;
	pthread_mutex_lock(&dma_lock);
	for (const struct dma_chunk *c = live; c; c = c->next) {
		uint64_t base = atomic_load_explicit(&c->iova, memory_order_relaxed);
		size_t len = atomic_load_explicit(&c->len, memory_order_relaxed);
		if (iova >= base && iova - base < len) {
			if (contig)
				*contig = len - (size_t)(iova - base);
			va = (void *)(atomic_load_explicit(&c->va, memory_order_relaxed) + (uintptr_t)(iova - base));
			break;
		}
	}
	pthread_mutex_unlock(&dma_lock);
	return va;
}

/* The memfd behind chunks of one kind, created at first use, as large as the window. */
static int backing_fd(bool huge)
{
	if (mem_fd[huge] < 0) {
		int fd = memfd_create(huge ? "unvme-dma-huge" : "unvme-dma",
				      MFD_CLOEXEC | MFD_ALLOW_SEALING | (huge ? MFD_HUGETLB : 0));
		if (fd < 0)
			return -1;
		/* sealed against shrinking: a process that maps these pages (a primary serving
		 * this one) can never find its mapping past the end of the file (SIGBUS) */
		if (ftruncate(fd, (off_t)(iova_hi - iova_lo)) != 0 ||
		    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
			close(fd);
			return -1;
		}
		mem_fd[huge] = fd;
	}
	return mem_fd[huge];
}

/* len bytes of pinned memory, 2 MiB aligned, the pages of the backing memfd at off. */
static void *map_memory(size_t len, uint64_t off, bool *huge)
{
	int fd = backing_fd(true);
	if (fd >= 0) {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			       (off_t)off);
		if (p != MAP_FAILED && ((uintptr_t)p & (DMA_CHUNK_SIZE - 1)) == 0) {
			*huge = true;
			return p;
		}
		if (p != MAP_FAILED)
			munmap(p, len); /* hugepages larger than a chunk are of no use here */
	}
	/* No hugepages (left): regular pages, pinned, which must not push the machine into its
	 * OOM killer: refuse what the kernel says it does not have. */
	if (!regular_memory_left(len)) {
		why = WHY_MACHINE_FULL;
		return NULL;
	}
	fd = backing_fd(false);
	if (fd < 0) {
		why = WHY_NO_MEMORY;
		return NULL;
	}
	/* Reserve more to find a 2 MiB aligned range, then put the pages there. */
	size_t span = len + DMA_CHUNK_SIZE;
	uint8_t *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED) {
		why = WHY_NO_MEMORY;
		return NULL;
	}
	uintptr_t aligned = ((uintptr_t)raw + DMA_CHUNK_SIZE - 1) & ~(uintptr_t)(DMA_CHUNK_SIZE - 1);
	size_t head = aligned - (uintptr_t)raw;
	if (head)
		munmap(raw, head);
	size_t tail = span - head - len;
	if (tail)
		munmap((uint8_t *)aligned + len, tail);
	if (mmap((void *)aligned, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		 fd, (off_t)off) == MAP_FAILED) {
		munmap((void *)aligned, len);
		why = WHY_NO_MEMORY;
		return NULL;
	}
	/* Pinning keeps the device's view valid; without the privilege the memory still works
	 * for the emulated device, which shares our address space. */
	bool locked = mlock((void *)aligned, len) == 0;
	if (!notice_given && unvme_log_on()) {
		fprintf(stderr, "unvme: no hugepages reserved; DMA memory is %s regular memory "
			"(reserve some with: echo 1024 > /proc/sys/vm/nr_hugepages)\n",
			locked ? "locked" : "unlocked");
	}
	notice_given = true;
	*huge = false;
	return (void *)aligned;
}

/* Gives a chunk's pages back: unmapped here and dropped from its memfd. */
static void unmap_memory(void *va, size_t len, const struct dma_chunk *c, uint64_t iova)
{
	munmap(va, len);
	if (c->shared && mem_fd[c->huge] >= 0)
		fallocate(mem_fd[c->huge], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)(iova - iova_lo), (off_t)len);
}

/* The process's IOVA window: the first lock file iova-<k>.lock of the run directory that no
 * other process holds (the lock goes with the process). Without a run directory, window 1
 * (the process then cannot share a device with another). */
static void lease_window(void)
{
	char dir[4096];
	unsigned k = 1;
	if (unvme_rundir(dir, sizeof(dir)) == 0) {
		for (unsigned i = 1; i < IOVA_WINDOWS; i++) {
			char path[4200];
			snprintf(path, sizeof(path), "%s/iova-%u.lock", dir, i);
			int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0)
				break;
			if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
				k = i; /* the descriptor stays open: it is the lease */
				break;
			}
			close(fd);
		}
		unvme_errmsg_clear();
	}
	iova_lo = (uint64_t)k << IOVA_WINDOW_SHIFT;
	iova_hi = iova_lo + IOVA_WINDOW_SIZE;
}

/* fork: the child keeps the parent's chunks as private copies. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&dma_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&dma_lock);
}

static void fork_child(void)
{
	for (struct dma_chunk *c = live; c; c = c->next) {
		if (!c->shared)
			continue;
		void *va = (void *)atomic_load_explicit(&c->va, memory_order_relaxed);
		size_t len = atomic_load_explicit(&c->len, memory_order_relaxed);
		void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | (c->huge ? MAP_HUGETLB : 0), -1, 0);
		if (copy == MAP_FAILED && c->huge)
			copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (copy == MAP_FAILED)
			continue; /* stays shared with the parent: nothing better to do */
		memcpy(copy, va, len);
		if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, va) == MAP_FAILED) {
			munmap(copy, len);
			continue;
		}
		mlock(va, len);
		c->shared = false;
	}
	for (int i = 0; i < 2; i++) {
		if (mem_fd[i] >= 0)
			close(mem_fd[i]);
		mem_fd[i] = -1;
	}
	pthread_mutex_unlock(&dma_lock);
}

/* Creates a chunk and maps it into every registered device. Called with dma_lock held. */
static struct dma_chunk *chunk_create(size_t len, int cls)
{
	uint64_t huge_free, regular;
	if (len >= IOVA_WINDOW_SIZE && meminfo(&huge_free, &regular) < len) {
		why = WHY_MACHINE_FULL; /* the more useful of the two reasons */
		return NULL;
	}
	struct dma_chunk *c = desc_get();
	if (!c)
		return NULL;
	uint64_t iova = IOVA_NONE;
	if (!iova_hi) { /* the first chunk of the process */
		lease_window();
		pthread_atfork(fork_prepare, fork_parent, fork_child);
	}
	if (iova_space.hi || iova_space_init(&iova_space, iova_lo, iova_hi) == 0)
		iova = iova_alloc(&iova_space, len, DMA_CHUNK_SIZE);
	if (iova == IOVA_NONE) {
		why = WHY_IOVA;
		desc_put(c);
		return NULL;
	}
	bool huge = false;
	uint8_t *va = map_memory(len, iova - iova_lo, &huge);
	if (!va) {
		iova_free(&iova_space, iova, len);
		desc_put(c);
		return NULL;
	}
	c->huge = huge;
	c->shared = true;
	if ((uintptr_t)va + len > (1ull << VA_BITS)) {
		unmap_memory(va, len, c, iova); /* above any address a user mapping gets unasked */
		iova_free(&iova_space, iova, len);
		desc_put(c);
		return NULL;
	}
	atomic_store_explicit(&c->va, (uintptr_t)va, memory_order_relaxed);
	atomic_store_explicit(&c->len, len, memory_order_relaxed);
	atomic_store_explicit(&c->iova, iova, memory_order_relaxed);
	c->cls = cls;
	size_t mapped = 0;
	for (; mapped < nmappers; mapped++)
		if (mapper_map(&mappers[mapped], c) != 0)
			break;
	if (mapped < nmappers || set_slots((uintptr_t)va, len, c) != 0) {
		set_slots((uintptr_t)va, len, NULL);
		for (size_t j = 0; j < mapped; j++)
			mappers[j].unmap(mappers[j].ctx, iova, len);
		unmap_memory(va, len, c, iova);
		iova_free(&iova_space, iova, len);
		desc_put(c);
		return NULL;
	}
	live_add(c);
	return c;
}

static void chunk_destroy(struct dma_chunk *c)
{
	uintptr_t va = atomic_load_explicit(&c->va, memory_order_relaxed);
	size_t len = atomic_load_explicit(&c->len, memory_order_relaxed);
	uint64_t iova = atomic_load_explicit(&c->iova, memory_order_relaxed);
	set_slots(va, len, NULL);
	/* every translation cache forgets it before its IOVA or its address can be reused */
	atomic_fetch_add_explicit(&dma_generation, 1, memory_order_acq_rel);
	live_remove(c);
	for (size_t i = 0; i < nmappers; i++)
		mappers[i].unmap(mappers[i].ctx, iova, len);
	/* Unmapped from every device first: only then may another chunk get this IOVA. */
	unmap_memory((void *)va, len, c, iova);
	iova_free(&iova_space, iova, len);
	if (!c->huge)
		regular_budget += len;
	desc_put(c);
}

static int size_class(size_t size, size_t align)
{
	size_t need = size > align ? size : align;
	if (need > (1u << CLASS_MAX_SHIFT))
		return -1;
	int shift = CLASS_MIN_SHIFT;
	while (((size_t)1 << shift) < need)
		shift++;
	return shift - CLASS_MIN_SHIFT;
}

static bool refill_class(int cls)
{
	struct dma_chunk *c = chunk_create(DMA_CHUNK_SIZE, cls);
	if (!c)
		return false;
	size_t obj = (size_t)1 << (cls + CLASS_MIN_SHIFT);
	uint8_t *va = (uint8_t *)atomic_load_explicit(&c->va, memory_order_relaxed);
	/* Thread the free list from the end so objects are handed out in address order. */
	for (size_t off = DMA_CHUNK_SIZE; off >= obj; off -= obj) {
		struct free_obj *o = (struct free_obj *)(va + off - obj);
		o->next = free_list[cls];
		free_list[cls] = o;
	}
	return true;
}

UNVME_API void *unvme_dma_alloc(size_t size, size_t align)
{
	if (size == 0 || (align & (align - 1)) != 0 || align > DMA_CHUNK_SIZE ||
	    size > (1ull << VA_BITS)) {
		unvme_fail(-EINVAL, "unvme_dma_alloc: size %zu / alignment %zu invalid", size, align);
		return NULL;
	}
	void *p = NULL;
	pthread_mutex_lock(&dma_lock);
	why = WHY_NO_MEMORY;
	int cls = size_class(size, align);
	if (cls >= 0) {
		if (free_list[cls] || refill_class(cls)) {
			p = free_list[cls];
			free_list[cls] = free_list[cls]->next;
		}
	} else {
		size_t len = (size + DMA_CHUNK_SIZE - 1) & ~(size_t)(DMA_CHUNK_SIZE - 1);
		struct dma_chunk *c = chunk_create(len, -1);
		if (c)
			p = (void *)atomic_load_explicit(&c->va, memory_order_relaxed);
	}
	int reason = why;
	pthread_mutex_unlock(&dma_lock);
	if (p)
		return p;
	if (reason == WHY_MACHINE_FULL)
		unvme_fail(-ENOMEM, "unvme_dma_alloc: %zu bytes asked, but the machine has no free "
			   "hugepages and only %" PRIu64 " MB of memory available", size,
			   unvme_dma_mem_available() >> 20);
	else if (reason == WHY_IOVA)
		unvme_fail(-ENOMEM, "unvme_dma_alloc: %zu bytes asked, but the device address space "
			   "(IOVA, %llu GiB) is used up", size, IOVA_WINDOW_SIZE >> 30);
	else
		unvme_fail(-ENOMEM, "unvme_dma_alloc: cannot get %zu bytes of DMA memory", size);
	return NULL;
}

UNVME_API void *unvme_dma_zalloc(size_t size, size_t align)
{
	void *p = unvme_dma_alloc(size, align);
	if (p)
		memset(p, 0, size);
	return p;
}

UNVME_API void unvme_dma_free(void *buf)
{
	if (!buf)
		return;
	pthread_mutex_lock(&dma_lock);
	struct dma_chunk *c = find_chunk(buf);
	if (!c) {
		pthread_mutex_unlock(&dma_lock);
		if (unvme_log_on())
			fprintf(stderr, "unvme: unvme_dma_free(%p): not DMA memory, ignored\n", buf);
		return;
	}
	if (c->cls < 0) {
		chunk_destroy(c);
	} else {
		struct free_obj *o = buf;
		o->next = free_list[c->cls];
		free_list[c->cls] = o;
	}
	pthread_mutex_unlock(&dma_lock);
}

UNVME_API uint64_t unvme_dma_iova(const void *buf)
{
	return dma_translate(buf, NULL);
}

UNVME_API size_t unvme_dma_contig(const void *buf)
{
	size_t contig = 0;
	return dma_translate(buf, &contig) == UINT64_MAX ? 0 : contig;
}

int dma_mapper_register(const struct dma_mapper *m)
{
	pthread_mutex_lock(&dma_lock);
	if (nmappers == MAX_MAPPERS) {
		pthread_mutex_unlock(&dma_lock);
		return unvme_fail(-ENOSPC, "too many controllers attached (%d)", MAX_MAPPERS);
	}
	for (struct dma_chunk *c = live; c; c = c->next) {
		int rc = mapper_map(m, c);
		if (rc != 0) {
			for (struct dma_chunk *d = live; d != c; d = d->next)
				m->unmap(m->ctx, atomic_load_explicit(&d->iova, memory_order_relaxed),
					 atomic_load_explicit(&d->len, memory_order_relaxed));
			pthread_mutex_unlock(&dma_lock);
			return unvme_fail(rc, "cannot map DMA memory for the device (%d)", rc);
		}
	}
	mappers[nmappers++] = *m;
	pthread_mutex_unlock(&dma_lock);
	return 0;
}

void dma_mapper_unregister(const struct dma_mapper *m)
{
	pthread_mutex_lock(&dma_lock);
	for (size_t i = 0; i < nmappers; i++) {
		if (mappers[i].ctx != m->ctx)
			continue;
		for (struct dma_chunk *c = live; c; c = c->next)
			m->unmap(m->ctx, atomic_load_explicit(&c->iova, memory_order_relaxed),
				 atomic_load_explicit(&c->len, memory_order_relaxed));
		mappers[i] = mappers[--nmappers];
		break;
	}
	pthread_mutex_unlock(&dma_lock);
}

void dma_stats(struct dma_stats *st)
{
	pthread_mutex_lock(&dma_lock);
	memset(st, 0, sizeof(*st));
	for (struct dma_chunk *c = live; c; c = c->next) {
		st->chunks++;
		st->bytes += atomic_load_explicit(&c->len, memory_order_relaxed);
	}
	for (struct dma_chunk *c = free_descs; c; c = c->next)
		st->free_descriptors++;
	for (size_t t = 0; t < (1u << TOP_BITS); t++)
		st->leaves += atomic_load_explicit(&slot_top[t], memory_order_relaxed) != NULL;
	pthread_mutex_unlock(&dma_lock);
}
