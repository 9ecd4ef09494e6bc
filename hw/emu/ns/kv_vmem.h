/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Value memory of an in-memory KV namespace: the device's "DRAM". Values live in size
 * classes carved from 2 MiB slabs of transparent-huge-page regions, and freed values go back
 * to their class, never to the operating system, while the namespace exists.
 *
 * Why not malloc: glibc hands large blocks of a thread's arena back to the kernel when they
 * are freed, so a store after a delete faults in and zeroes fresh pages again (on the VMs
 * here that was 40% of a store's time), and 4 KiB pages make every random retrieve of a big
 * namespace a TLB miss. A device keeps its memory; so does this pool.
 *
 * The pool's memory exists before the first store when it can, as a device's DRAM does
 * (kv_vmem_reserve, ns_memory.h: the hugetlbfs pool, or regular pages faulted in when asked);
 * a store then never waits for the kernel to find and zero a page.
 *
 * Thread safe (one mutex: device threads allocate outside the store's lock).
 */
#ifndef UNVME_EMU_KV_VMEM_H
#define UNVME_EMU_KV_VMEM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define KV_VMEM_CLASSES 64u

struct kv_vmem_class {
	void    *free;      /* freed objects, linked through their first word */
	uint8_t *bump;      /* the class's current slab: next never-used object */
	uint8_t *end;
};

struct kv_vmem_region;

struct kv_vmem {
	pthread_mutex_t lock;
	struct kv_vmem_class cls[KV_VMEM_CLASSES];
	struct kv_vmem_region *regions;   /* every mapping, unmapped by kv_vmem_destroy */
	uint8_t *slab_next;               /* next unused slab of the newest region */
	uint8_t *slab_end;
	uint64_t mapped;                  /* bytes of address space mapped */
	uint64_t reserved;                /* of which faulted in by kv_vmem_reserve */
};

void kv_vmem_init(struct kv_vmem *m);
/* Unmaps everything: every value of the pool is gone. */
void kv_vmem_destroy(struct kv_vmem *m);
/* Makes bytes of value memory exist now when ns_memory.h's policy allows. Returns 1 when it
 * did, 0 when the pool stays thin (regions mapped as values need them), -1 when out of
 * memory. Call once, before any value is allocated. */
int kv_vmem_reserve(struct kv_vmem *m, uint64_t bytes);
/* Memory for a value of len bytes (1..2 MiB), or NULL when none can be mapped. */
void *kv_vmem_alloc(struct kv_vmem *m, uint32_t len);
/* Gives back p, allocated with the same len. NULL is ignored. */
void kv_vmem_free(struct kv_vmem *m, void *p, uint32_t len);

/* The class of a value of len bytes and the size of that class's objects (for the tests). */
unsigned kv_vmem_class_of(uint32_t len);
uint32_t kv_vmem_class_size(unsigned cls);

#endif
