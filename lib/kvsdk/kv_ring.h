/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bounded lock-free ring with many producers and one consumer: API threads hand prepared
 * commands to the completion thread that owns an async queue pair. Each slot carries a sequence
 * number, so a producer claims a slot with one compare-and-swap on the head and publishes it
 * with one release store; the consumer needs no atomic read-modify-write at all.
 */
#ifndef KVSDK_RING_H
#define KVSDK_RING_H

#include <stdatomic.h>
#include <stddef.h>

struct kv_ring_slot {
	_Atomic size_t seq;
	void *item;
};

struct kv_ring {
	struct kv_ring_slot *slots;
	size_t mask;
	/* producers and the consumer write different cache lines */
	_Alignas(64) _Atomic size_t head;
	_Alignas(64) size_t tail;
};

/* capacity is rounded up to a power of two (at least 2). 0 or -ENOMEM. */
int kv_ring_init(struct kv_ring *r, size_t capacity);
void kv_ring_fini(struct kv_ring *r);
/* Any thread. 0, or -1 when the ring is full. */
int kv_ring_push(struct kv_ring *r, void *item);
/* The consumer thread only. NULL when empty. */
void *kv_ring_pop(struct kv_ring *r);

#endif
