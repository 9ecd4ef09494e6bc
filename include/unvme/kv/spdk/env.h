/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The original SDK's kv_apis.h includes "spdk/env.h", and its sample programs use the DMA
 * memory helpers declared here. Nothing of SPDK is needed: this header is the whole of it.
 */
#ifndef UNVME_KV_SPDK_ENV_H
#define UNVME_KV_SPDK_ENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KV_API
#if defined(UNVME_BUILDING_LIBRARY)
#define KV_API __attribute__((visibility("default")))
#else
#define KV_API
#endif
#endif

/* DMA-able memory (pinned, device-addressable), usable as key and value buffers. */
KV_API void *kv_zalloc(size_t size);
KV_API void *kv_alloc(size_t size);
KV_API void kv_free(void *ptr);
/* The same on a NUMA node: socket_id is a node number or SOCKET_ID_ANY (-1, kv_types.h).
 * DMA memory here is not node-bound, so any valid node gives ordinary kv_alloc memory; a
 * negative id other than SOCKET_ID_ANY is refused (NULL), as in the original. */
KV_API void *kv_alloc_socket(size_t size, int socket_id);
KV_API void *kv_zalloc_socket(size_t size, int socket_id);

#ifdef __cplusplus
}
#endif
#endif
