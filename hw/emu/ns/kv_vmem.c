/* SPDX-License-Identifier: BSD-3-Clause */
/* Size-class value memory of in-memory KV namespaces (see kv_vmem.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/emu/ns/kv_vmem.h"
#include "hw/emu/ns/ns_memory.h"

#define SLAB   (2u << 20)           /* one class's unit of growth; a huge page */
#define REGION (32ull << 20)        /* address space mapped at a time */

struct kv_vmem_region {
	struct kv_vmem_region *next;
	void  *base;
	size_t len;
};

/* Up to 128 bytes: steps of 16. Above: four classes per power of two, so no value wastes
 * more than a quarter of its object; 4 KiB values get exactly 4 KiB, page aligned. */
unsigned kv_vmem_class_of(uint32_t len)
{
	if (len <= 128)
		return len ? (len + 15) / 16 - 1 : 0;
	unsigned p = 31u - (unsigned)__builtin_clz(len - 1);   /* 2^p < len <= 2^(p+1) */
	uint32_t step = 1u << (p - 2);
	uint32_t k = (len - (1u << p) + step - 1) / step;      /* 1..4 */
	return 8 + (p - 7) * 4 + (k - 1);
}

uint32_t kv_vmem_class_size(unsigned cls)
{
	if (cls < 8)
		return (cls + 1) * 16;
	unsigned c = cls - 8, p = 7 + c / 4;
	return (1u << p) + (c % 4 + 1) * (1u << (p - 2));
}

void kv_vmem_init(struct kv_vmem *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
}

void kv_vmem_destroy(struct kv_vmem *m)
{
	struct kv_vmem_region *r = m->regions;
	while (r) {
		struct kv_vmem_region *next = r->next;
		munmap(r->base, r->len);
		free(r);
		r = next;
	}
	pthread_mutex_destroy(&m->lock);
	memset(m, 0, sizeof(*m));
}

/* Maps a new region whose slabs are huge-page aligned. Caller holds the lock. */
static int map_region(struct kv_vmem *m)
{
	struct kv_vmem_region *r = malloc(sizeof(*r));
	if (!r)
		return -1;
	r->len = REGION + SLAB;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (r->base == MAP_FAILED) {
		free(r);
		return -1;
	}
	uintptr_t a = ((uintptr_t)r->base + SLAB - 1) & ~(uintptr_t)(SLAB - 1);
	/* a hint: without THP the pool still works, with 4 KiB pages */
	(void)madvise((void *)a, REGION, MADV_HUGEPAGE);
	r->next = m->regions;
	m->regions = r;
	m->slab_next = (uint8_t *)a;
	m->slab_end = (uint8_t *)a + REGION;
	m->mapped += r->len;
	return 0;
}

int kv_vmem_reserve(struct kv_vmem *m, uint64_t bytes)
{
	struct emu_mem_map map;
	if (emu_mem_map((size_t)((bytes + SLAB - 1) / SLAB * SLAB), SLAB, &map) != 0)
		return -1;
	if (map.kind == EMU_MEM_THIN) {
		munmap(map.addr, map.len); /* regions come as values need them, as before */
		return 0;
	}
	struct kv_vmem_region *r = malloc(sizeof(*r));
	if (!r) {
		munmap(map.addr, map.len);
		return -1;
	}
	r->base = map.addr;
	r->len = map.len;
	pthread_mutex_lock(&m->lock);
	r->next = m->regions;
	m->regions = r;
	m->slab_next = map.addr;
	m->slab_end = map.addr + map.len;
	m->mapped += map.len;
	m->reserved = map.len;
	pthread_mutex_unlock(&m->lock);
	return 1;
}

void *kv_vmem_alloc(struct kv_vmem *m, uint32_t len)
{
	if (len == 0 || len > SLAB)
		return NULL;
	unsigned c = kv_vmem_class_of(len);
	uint32_t size = kv_vmem_class_size(c);
	struct kv_vmem_class *k = &m->cls[c];
	void *p = NULL;
	pthread_mutex_lock(&m->lock);
	if (k->free) {
		p = k->free;
		memcpy(&k->free, p, sizeof(void *));
	} else {
		if ((size_t)(k->end - k->bump) < size) {
			if (m->slab_next == m->slab_end && map_region(m) != 0)
				goto out;
			k->bump = m->slab_next;
			k->end = m->slab_next + SLAB;
			m->slab_next += SLAB;
		}
		p = k->bump;
		k->bump += size;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return p;
}

void kv_vmem_free(struct kv_vmem *m, void *p, uint32_t len)
{
	if (!p)
		return;
	struct kv_vmem_class *k = &m->cls[kv_vmem_class_of(len)];
	pthread_mutex_lock(&m->lock);
	memcpy(p, &k->free, sizeof(void *));
	k->free = p;
	pthread_mutex_unlock(&m->lock);
}
