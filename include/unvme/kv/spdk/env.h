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

#ifdef __cplusplus
}
#endif
#endif
