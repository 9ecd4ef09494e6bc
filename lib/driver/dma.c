/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA memory allocator. Small requests are served from power-of-two size classes carved out
 * of 2 MiB chunks (a class object is naturally aligned to its size because chunks are 2 MiB
 * aligned); larger ones get chunks of their own. Allocation takes a mutex; translation from
 * virtual address to IOVA, which the I/O path does per command, reads a copy-on-write chunk
 * table without locks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "dma.h"
#include "errmsg.h"
#include "vfio_iommu.h"

#define CLASS_MIN_SHIFT 6   /* 64 B */
#define CLASS_MAX_SHIFT 20  /* 1 MiB: anything larger gets whole chunks */
#define NCLASSES (CLASS_MAX_SHIFT - CLASS_MIN_SHIFT + 1)
#define MAX_MAPPERS 64
#define IOVA_BASE (1ull << 32)
/* 39 bits: the smallest address width of an Intel IOMMU (and QEMU's intel-iommu default). */
#define IOVA_LIMIT (1ull << 39)

struct dma_chunk {
	uint8_t *va;
	uint64_t iova;
	size_t len;
	int cls;      /* size class index, or -1 for a dedicated (large) allocation */
	bool huge;
};

struct chunk_table {
	size_t n;
	struct dma_chunk *chunk[]; /* sorted by va */
};

struct free_obj {
	struct free_obj *next;
};

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct chunk_table *) table;
/* Old tables stay allocated: a lock-free reader may still be walking one. They are small
 * and chunk creation is rare. */
static struct chunk_table *graveyard[4096];
static size_t graveyard_n;
static struct free_obj *free_list[NCLASSES];
static struct dma_mapper mappers[MAX_MAPPERS];
static size_t nmappers;
static struct iova_space iova_space; /* IOVAs of freed chunks are given out again */
static bool notice_given;

static void retire_table(struct chunk_table *t)
{
	if (!t)
		return;
	if (graveyard_n < sizeof(graveyard) / sizeof(graveyard[0]))
		graveyard[graveyard_n++] = t;
	/* else: leak; only reachable after thousands of large allocations and frees */
}

static int publish_with(struct dma_chunk *add, const struct dma_chunk *remove)
{
	struct chunk_table *old = atomic_load_explicit(&table, memory_order_relaxed);
	size_t n = old ? old->n : 0;
	struct chunk_table *t = malloc(sizeof(*t) + (n + 1) * sizeof(t->chunk[0]));
	if (!t)
		return -ENOMEM;
	size_t j = 0;
	bool placed = (add == NULL);
	for (size_t i = 0; i < n; i++) {
		struct dma_chunk *c = old->chunk[i];
		if (c == remove)
			continue;
		if (!placed && add->va < c->va) {
			t->chunk[j++] = add;
			placed = true;
		}
		t->chunk[j++] = c;
	}
	if (!placed)
		t->chunk[j++] = add;
	t->n = j;
	/* release: the chunk descriptors are complete before a reader can find them */
	atomic_store_explicit(&table, t, memory_order_release);
	retire_table(old);
	return 0;
}

static const struct dma_chunk *find_chunk(const void *vaddr)
{
	/* acquire: pairs with the release in publish_with */
	const struct chunk_table *t = atomic_load_explicit(&table, memory_order_acquire);
	if (!t)
		return NULL;
	const uint8_t *p = vaddr;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct dma_chunk *c = t->chunk[mid];
		if (p < c->va)
			hi = mid;
		else if (p >= c->va + c->len)
			lo = mid + 1;
		else
			return c;
	}
	return NULL;
}

uint64_t dma_translate(const void *vaddr, size_t *contig)
{
	const struct dma_chunk *c = find_chunk(vaddr);
	if (!c)
		return UINT64_MAX;
	size_t off = (size_t)((const uint8_t *)vaddr - c->va);
	if (contig)
		*contig = c->len - off;
	return c->iova + off;
}

void *dma_iova_to_va(uint64_t iova, size_t *contig)
{
	const struct chunk_table *t = atomic_load_explicit(&table, memory_order_acquire);
	for (size_t i = 0; t && i < t->n; i++) {
		const struct dma_chunk *c = t->chunk[i];
		if (iova >= c->iova && iova < c->iova + c->len) {
			if (contig)
				*contig = c->len - (size_t)(iova - c->iova);
			return c->va + (iova - c->iova);
		}
	}
	return NULL;
}

static void *map_memory(size_t len, bool *huge)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (p != MAP_FAILED) {
		*huge = true;
		return p;
	}
	/* No hugepages: over-allocate to get a 2 MiB aligned range of regular pages. */
	size_t span = len + DMA_CHUNK_SIZE;
	uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uintptr_t aligned = ((uintptr_t)raw + DMA_CHUNK_SIZE - 1) & ~(uintptr_t)(DMA_CHUNK_SIZE - 1);
	size_t head = aligned - (uintptr_t)raw;
	if (head)
		munmap(raw, head);
	size_t tail = span - head - len;
	if (tail)
		munmap((uint8_t *)aligned + len, tail);
	/* Pinning keeps the device's view valid; without the privilege the memory still works
	 * for the emulated device, which shares our address space. */
	bool locked = mlock((void *)aligned, len) == 0;
	if (!notice_given && !getenv("UNVME_QUIET")) {
		fprintf(stderr, "unvme: no hugepages reserved; DMA memory is %s regular memory "
			"(reserve some with: echo 1024 > /proc/sys/vm/nr_hugepages)\n",
			locked ? "locked" : "unlocked");
	}
	notice_given = true;
	*huge = false;
	return (void *)aligned;
}

/* Creates a chunk and maps it into every registered device. Called with dma_lock held. */
static struct dma_chunk *chunk_create(size_t len, int cls)
{
	struct dma_chunk *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->va = map_memory(len, &c->huge);
	if (!c->va) {
		free(c);
		return NULL;
	}
	c->len = len;
	c->cls = cls;
	if (!iova_space.hi && iova_space_init(&iova_space, IOVA_BASE, IOVA_LIMIT) != 0)
		c->iova = IOVA_NONE;
	else
		c->iova = iova_alloc(&iova_space, len, DMA_CHUNK_SIZE);
	if (c->iova == IOVA_NONE) {
		munmap(c->va, len);
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < nmappers; i++) {
		if (mappers[i].map(mappers[i].ctx, c->va, c->iova, c->len) != 0) {
			for (size_t j = 0; j < i; j++)
				mappers[j].unmap(mappers[j].ctx, c->iova, c->len);
			iova_free(&iova_space, c->iova, len);
			munmap(c->va, len);
			free(c);
			return NULL;
		}
	}
	if (publish_with(c, NULL) != 0) {
		for (size_t i = 0; i < nmappers; i++)
			mappers[i].unmap(mappers[i].ctx, c->iova, c->len);
		iova_free(&iova_space, c->iova, len);
		munmap(c->va, len);
		free(c);
		return NULL;
	}
	return c;
}

static void chunk_destroy(struct dma_chunk *c)
{
	publish_with(NULL, c);
	for (size_t i = 0; i < nmappers; i++)
		mappers[i].unmap(mappers[i].ctx, c->iova, c->len);
	/* Unmapped from every device first: only then may another chunk get this IOVA. */
	iova_free(&iova_space, c->iova, c->len);
	munmap(c->va, c->len);
	/* The descriptor may still be read by a lock-free translator holding an old table;
	 * keep it (it is 40 bytes) rather than free it under that reader. */
	c->len = 0;
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
	/* Thread the free list from the end so objects are handed out in address order. */
	for (size_t off = DMA_CHUNK_SIZE; off >= obj; off -= obj) {
		struct free_obj *o = (struct free_obj *)(c->va + off - obj);
		o->next = free_list[cls];
		free_list[cls] = o;
	}
	return true;
}

UNVME_API void *unvme_dma_alloc(size_t size, size_t align)
{
	if (size == 0 || (align & (align - 1)) != 0 || align > DMA_CHUNK_SIZE) {
		unvme_fail(-EINVAL, "unvme_dma_alloc: size %zu / alignment %zu invalid", size, align);
		return NULL;
	}
	void *p = NULL;
	pthread_mutex_lock(&dma_lock);
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
			p = c->va;
	}
	pthread_mutex_unlock(&dma_lock);
	if (!p)
		unvme_fail(-ENOMEM, "unvme_dma_alloc: cannot get %zu bytes of DMA memory", size);
	return p;
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
	struct dma_chunk *c = (struct dma_chunk *)find_chunk(buf);
	if (!c) {
		pthread_mutex_unlock(&dma_lock);
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
	const struct chunk_table *t = atomic_load_explicit(&table, memory_order_relaxed);
	size_t n = t ? t->n : 0;
	for (size_t i = 0; i < n; i++) {
		int rc = m->map(m->ctx, t->chunk[i]->va, t->chunk[i]->iova, t->chunk[i]->len);
		if (rc != 0) {
			for (size_t j = 0; j < i; j++)
				m->unmap(m->ctx, t->chunk[j]->iova, t->chunk[j]->len);
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
		const struct chunk_table *t = atomic_load_explicit(&table, memory_order_relaxed);
		for (size_t k = 0; t && k < t->n; k++)
			m->unmap(m->ctx, t->chunk[k]->iova, t->chunk[k]->len);
		mappers[i] = mappers[--nmappers];
		break;
	}
	pthread_mutex_unlock(&dma_lock);
}
