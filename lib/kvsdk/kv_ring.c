/* SPDX-License-Identifier: BSD-3-Clause */
/* The multi-producer single-consumer ring of kv_ring.h. */
#include "kv_ring.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int kv_ring_init(struct kv_ring *r, size_t capacity)
{
	size_t n = 2;
	while (n < capacity)
		n <<= 1;
	r->slots = calloc(n, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	r->mask = n - 1;
	/* slot i is free for the producer whose position is i */
	for (size_t i = 0; i < n; i++)
		atomic_init(&r->slots[i].seq, i);
	atomic_init(&r->head, 0);
	r->tail = 0;
	return 0;
}

void kv_ring_fini(struct kv_ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

int kv_ring_push(struct kv_ring *r, void *item)
{
	size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (;;) {
		struct kv_ring_slot *s = &r->slots[pos & r->mask];
		/* acquire: pairs with the consumer's release, so the slot is really free */
		size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		intptr_t diff = (intptr_t)seq - (intptr_t)pos;
		if (diff == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				s->item = item;
				/* release: the consumer sees the item once it sees the sequence */
				atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
				return 0;
			}
			/* pos was reloaded by the failed exchange */
		} else if (diff < 0) {
			return -1; /* the consumer has not freed this slot yet: full */
		} else {
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
		}
	}
}

void *kv_ring_pop(struct kv_ring *r)
{
	struct kv_ring_slot *s = &r->slots[r->tail & r->mask];
	/* acquire: pairs with the producer's release of the item */
	size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (seq != r->tail + 1)
		return NULL;
	void *item = s->item;
	/* release: the slot becomes free for the producer one lap later */
	atomic_store_explicit(&s->seq, r->tail + r->mask + 1, memory_order_release);
	r->tail++;
	return item;
}
