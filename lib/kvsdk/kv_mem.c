/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory: the SDK's own per-I/O DMA buffers come from the slab (kv_slab.h) within slab_size;
 * the application's buffers (kv_alloc and friends) come straight from the driver, so they work
 * before kv_sdk_init and after kv_sdk_finalize, and a program freeing them late is not broken.
 */
#include <string.h>

#include "kv_internal.h"
#include "kv_slab.h"

void *kv_dma_get(struct kv_state *s, size_t size)
{
	(void)s;
	return kv_slab_alloc(size);
}

void kv_dma_put(struct kv_state *s, void *buf)
{
	(void)s;
	kv_slab_free(buf);
}

/* Page alignment: an application buffer may hold a 32 KiB iterator chunk or a 2 MiB value, and
 * callers of the original expected page-aligned memory. */
KV_API void *kv_alloc(size_t size)
{
	if (!size) {
		kv_err("kv_alloc: size 0");
		return NULL;
	}
	void *p = unvme_dma_alloc(size, 4096);
	if (!p)
		kv_err("kv_alloc: %zu bytes of DMA memory: %s", size, unvme_errmsg());
	return p;
}

KV_API void *kv_zalloc(size_t size)
{
	void *p = kv_alloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

KV_API void kv_free(void *ptr)
{
	unvme_dma_free(ptr);
}

/* DMA memory here is not bound to a NUMA node: any node (or SOCKET_ID_ANY) gets kv_alloc
 * memory. A negative id other than SOCKET_ID_ANY is refused, as the original did. */
KV_API void *kv_alloc_socket(size_t size, int socket_id)
{
	if (socket_id < 0 && socket_id != SOCKET_ID_ANY) {
		kv_err("kv_alloc_socket: socket_id %d is neither a node number nor SOCKET_ID_ANY",
		       socket_id);
		return NULL;
	}
	return kv_alloc(size);
}

KV_API void *kv_zalloc_socket(size_t size, int socket_id)
{
	void *p = kv_alloc_socket(size, socket_id);
	if (p)
		memset(p, 0, size);
	return p;
}
