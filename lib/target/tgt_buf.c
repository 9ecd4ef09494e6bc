/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DMA buffers commands' data lives in, by power-of-two size class from 4 KiB.
 *
 * Ownership: a buffer belongs to one connection from the moment it takes it until the
 * connection ends; between its commands the connection keeps it on its own free lists. No
 * other connection, host or subsystem can be handed a buffer that still holds this one's
 * data: a buffer enters a connection zeroed (fresh from the allocator, or from its poller's
 * pool of buffers that ended connections left, zeroed when they were put there). Within a
 * connection a command's buffer is wholly written before the host sees it (tgt_xfer.c makes
 * the device's transfer the buffer's length; the target clears what a device may leave short).
 *
 * Memory: a connection holds at most conn_memory bytes of buffers and the target at most
 * memory bytes. A command that would go past either waits (CMD_WAIT_BUF: its connection stops
 * receiving, so TCP pushes back on the host) until a buffer comes back: one of its own
 * commands finishing, or, for the total, any; when the total runs short every poller gives
 * its pool back, and the free buffers of its connections that are not waiting themselves
 * (mem_pressure, asked again every 100 ms while a connection waits). A waiting connection
 * keeps its own free buffers: it is about to use them, and taking them would let memory drift
 * to connections whose hosts do not read, starving the one that does.
 */
#include <errno.h>
#include <string.h>

#include "lib/common/clock.h"
#include "tgt.h"

#define BUF_MIN_SHIFT 12

static int buf_class(uint32_t len)
{
	int cls = 0;
	while (cls < TGT_BUF_CLASSES - 1 && (1u << (BUF_MIN_SHIFT + cls)) < len)
		cls++;
	return (1u << (BUF_MIN_SHIFT + cls)) >= len ? cls : -1;
}

static uint32_t class_bytes(int cls)
{
	return 1u << (BUF_MIN_SHIFT + cls);
}

/* A free buffer's first bytes hold the next one of its list: cleared when it is taken (an
 * address of the target's must not reach a host in a reply). */
static void *pop(void **list)
{
	void *b = *list;
	if (b) {
		memcpy(list, b, sizeof(void *));
		memset(b, 0, sizeof(void *));
	}
	return b;
}

static void push(void **list, void *b)
{
	memcpy(b, list, sizeof(void *));
	*list = b;
}

static void give_back(struct unvme_target *t, void *b, uint32_t cap)
{
	unvme_dma_free(b);
	atomic_fetch_sub_explicit(&t->mem, cap, memory_order_relaxed);
}

/* Into the poller's pool, zeroed, or back to the allocator. */
static void to_pool(struct tgt_conn *c, void *b, uint32_t cap)
{
	struct tgt_bufpool *pool = c->p ? &c->p->pool : NULL;
	if (!pool || pool->bytes + cap > pool->limit || atomic_load(&c->t->mem_pressure) != c->p->pressure_seen) {
		give_back(c->t, b, cap);
		return;
	}
	memset(b, 0, cap);
	push(&pool->free[buf_class(cap)], b);
	pool->bytes += cap;
}

/* Frees the connection's idle buffers until want more bytes fit under its limit. */
static void shed(struct tgt_conn *c, uint64_t want, uint64_t limit)
{
	for (int cls = TGT_BUF_CLASSES - 1; cls >= 0 && c->bufs.owned + want > limit; cls--) {
		void *b;
		while (c->bufs.owned + want > limit && (b = pop(&c->bufs.free[cls]))) {
			c->bufs.owned -= class_bytes(cls);
			c->bufs.idle -= class_bytes(cls);
			if (c->rdma) /* registered for this connection's queue pair only */
				tgt_rdma_buf_gone(c, b);
			to_pool(c, b, class_bytes(cls));
		}
	}
}

static void pool_trim(struct unvme_target *t, struct tgt_bufpool *pool)
{
	for (int cls = 0; cls < TGT_BUF_CLASSES; cls++) {
		void *b;
		while ((b = pop(&pool->free[cls]))) {
			pool->bytes -= class_bytes(cls);
			give_back(t, b, class_bytes(cls));
		}
	}
}

int tgt_buf_get(struct tgt_conn *c, uint32_t len, void **buf, uint32_t *cap)
{
	struct unvme_target *t = c->t;
	int cls = buf_class(len);
	if (cls < 0)
		return -ENOMEM;
	uint32_t n = class_bytes(cls);
	*cap = n;
	void *b = pop(&c->bufs.free[cls]);
	if (b) {
		c->bufs.idle -= n;
		*buf = b;
		return 0;
	}
	/* one more buffer for this connection: within its limit? */
	uint64_t limit = t->cfg->lim.conn_memory;
	if (c->bufs.owned + n > limit) {
		shed(c, n, limit);
		if (c->bufs.owned + n > limit) {
			tgt_limit_hit(t, &t->lim_conn_mem, "host %s: a connection's data buffers reached "
				      "max_connection_memory_mb (%llu MiB): its commands wait",
				      c->peer, (unsigned long long)(limit >> 20));
			return -EAGAIN;
		}
	}
	struct tgt_bufpool *pool = c->p ? &c->p->pool : NULL;
	if (pool && (b = pop(&pool->free[cls]))) {
		pool->bytes -= n;
	} else {
		/* a new one: within the target's limit? */
		uint64_t total = t->cfg->lim.memory;
		if (atomic_load_explicit(&t->mem, memory_order_relaxed) + n > total) {
			if (pool)
				pool_trim(t, pool);
			shed(c, n, c->bufs.owned - c->bufs.idle); /* all its free buffers */
		}
		if (atomic_fetch_add_explicit(&t->mem, n, memory_order_relaxed) + n > total) {
			atomic_fetch_sub_explicit(&t->mem, n, memory_order_relaxed);
			uint64_t now = mono_ms_coarse();
			if (!c->mem_wait_ms || now - c->mem_wait_ms >= 100) {
				c->mem_wait_ms = now;
				atomic_fetch_add(&t->mem_pressure, 1);
			}
			tgt_limit_hit(t, &t->lim_mem, "the data buffers of all connections reached "
				      "max_memory_mb (%llu MiB): commands wait",
				      (unsigned long long)(total >> 20));
			return -EAGAIN;
		}
		b = unvme_dma_alloc(n, 4096);
		if (!b) {
			atomic_fetch_sub_explicit(&t->mem, n, memory_order_relaxed);
			return -ENOMEM;
		}
		/* the allocator's memory may have held anything: another connection's data */
		memset(b, 0, n);
	}
	c->bufs.owned += n;
	c->mem_wait_ms = 0;
	*buf = b;
	return 0;
}

void tgt_buf_put(struct tgt_conn *c, void *buf, uint32_t cap)
{
	if (!buf)
		return;
	push(&c->bufs.free[buf_class(cap)], buf);
	c->bufs.idle += cap;
}

void tgt_bufs_trim(struct tgt_conn *c)
{
	shed(c, 0, c->bufs.owned - c->bufs.idle);
}

void tgt_bufs_release(struct tgt_conn *c)
{
	shed(c, 0, 0);
	/* what is not idle was never put back: nothing else holds it (tgt_conn_free released
	 * every command), so this is only bookkeeping */
	c->bufs.owned = 0;
}

void tgt_bufpool_free(struct unvme_target *t, struct tgt_bufpool *pool)
{
	pool_trim(t, pool);
}
