/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key-value SDK API, compatible with Samsung's uNVMe 2.0 SDK (v20.05): the same functions
 * with the same signatures. Unlike the original, every failure also leaves a one-line reason
 * in the log (log_level >= 1) and kv_sdk_init fails on a broken configuration or a device
 * that cannot be opened. Behaviour, thread model and differences: docs/kv-sdk.md.
 */
#ifndef _KV_APIS_H_
#define _KV_APIS_H_

#include <stdbool.h>
#include <stdint.h>

#include "spdk/env.h"
#include "kv_types.h"

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

KV_API int kv_sdk_init(int init_from, void *option);
KV_API int kv_sdk_load_option(kv_sdk *sdk_opt, char *log_path);
KV_API int kv_sdk_finalize(void);
KV_API int kv_get_core_id(void);
KV_API uint64_t kv_get_total_size(uint64_t handle);
KV_API uint64_t kv_get_used_size(uint64_t handle);
KV_API uint64_t kv_get_waf(uint64_t handle);
KV_API uint32_t kv_get_sector_size(uint64_t handle);
KV_API uint64_t kv_get_num_sectors(uint64_t handle);
KV_API int kv_get_log_page(uint64_t handle, uint8_t log_id, void *buffer, uint32_t buffer_size);
KV_API int kv_store(uint64_t handle, kv_pair *kv);
KV_API int kv_store_async(uint64_t handle, kv_pair *kv);
KV_API int kv_retrieve(uint64_t handle, kv_pair *kv);
KV_API int kv_retrieve_async(uint64_t handle, kv_pair *kv);
KV_API int kv_delete(uint64_t handle, kv_pair *kv);
KV_API int kv_delete_async(uint64_t handle, kv_pair *kv);
KV_API int kv_exist(uint64_t handle, kv_pair *kv);
KV_API int kv_exist_async(uint64_t handle, kv_pair *kv);
KV_API int kv_append(uint64_t handle, kv_pair *kv);
KV_API uint32_t kv_iterate_open(uint64_t handle, const uint8_t keyspace_id, const uint32_t bitmask,
				const uint32_t prefix, const uint8_t iterate_type);
KV_API int kv_iterate_close(uint64_t handle, const uint8_t iterator);
KV_API int kv_iterate_read(uint64_t handle, kv_iterate *it);
KV_API int kv_iterate_read_async(uint64_t handle, kv_iterate *it);
KV_API int kv_iterate_info(uint64_t handle, kv_iterate_handle_info *info, int nr_handle);
KV_API int kv_format_device(uint64_t handle, int erase_user_data);
KV_API int kv_io_queue_type(uint64_t handle, int core_id);
KV_API int kv_get_devices_on_cpu(int core_id, int *nr_device, uint64_t *arr_handle);
KV_API int kv_get_device_handles(int *nr_device, uint64_t *arr_handle);
KV_API int kv_get_cpus_on_device(uint64_t handle, int *nr_core, int *arr_core);
KV_API int kv_is_sdk_initialized(void);
KV_API int kv_get_dev_idx_on_handle(uint64_t handle);
KV_API bool context_switch_async_to_sync(int did);
KV_API bool context_switch_sync_to_async(int did);
KV_API void kv_sdk_info(void);
KV_API void kv_process_completion(uint64_t handle);
KV_API void kv_process_completion_queue(uint64_t handle, uint32_t queue_id);

/* Not in the original. Async callbacks receive status = the command's status code, equal to
 * its kv_result (0x10 key does not exist, 0x93 end of iteration, ...), as the original
 * passed. Inside a callback this returns the full NVMe status of that completion,
 * (SCT << 8) | SC, e.g. 0x110 (0 for success and for failures that never reached the
 * device); outside one, -1. */
KV_API int kv_async_nvme_status(void);

#ifdef __cplusplus
}
#endif
#endif
