/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver-level key-value API of Samsung's uNVMe 2.0 SDK (its "kvnvme.h"), for programs
 * written for it: the original's kv_perf and kv_nvme call it instead of kv_apis.h. Every
 * call names the I/O queue it uses (qid: the CPU core whose queue it is, as the original
 * numbered them; DEFAULT_IO_QUEUE_ID, -1, is the calling thread's core). Unlike the kv_*
 * calls, a call on a queue of the other kind (a sync call on an async queue, or the reverse)
 * is refused with KV_ERR_DD_INVALID_QUEUE_TYPE instead of moving the thread, and a core
 * without a queue of the device is KV_ERR_DD_INVALID_PARAM.
 *
 * The handles are those of kv_sdk_init (kv_get_device_handles, kv_sdk.dev_handle): this SDK
 * opens devices only through kv_sdk_init, so the original's kv_env_init, kv_nvme_init,
 * kv_nvme_open, kv_nvme_close and kv_nvme_finalize are not provided. Behaviour and
 * differences: docs/kv-sdk.md, "The driver-level API (kvnvme.h)".
 */
#ifndef _KVNVME_H_
#define _KVNVME_H_

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv_types.h"
#include "spdk/env.h"

/* kv_io_queue_type() / kv_nvme_io_queue_type() results */
#define SYNC_IO_QUEUE  1
#define ASYNC_IO_QUEUE 2

/* The original's shared-memory id and size for its multi-process driver; kept for programs
 * that name them (this SDK shares devices through the driver, docs/multi-process.md). */
#define KV_SHM_ID   0x1234
#define KV_MEM_SIZE 8192

#define DEFAULT_IO_QUEUE_DEPTH 256
#define DEFAULT_IO_QUEUE_ID    (-1)

/* The iterator read size of older samples (KV_ITERATE_READ_BUFFER_SIZE in kv_types.h). */
#ifndef KV_SSD_MAX_ITERATE_READ_LEN
#define KV_SSD_MAX_ITERATE_READ_LEN KV_ITERATE_READ_BUFFER_SIZE
#endif
#ifndef KV_SSD_MIN_ITERATE_READ_LEN
#define KV_SSD_MIN_ITERATE_READ_LEN KV_ITERATE_READ_BUFFER_SIZE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The callback shape of async calls (kv_param.async_cb): status is the command's status
 * code, equal to its kv_result; result is completion dword 0 (docs/kv-sdk.md). */
typedef void (*kv_cb_fn_t)(const kv_pair *kv, unsigned int result, unsigned int status);
/* An Asynchronous Event: result is its completion dword 0 (type bits 2:0, information 15:8,
 * log page 23:16), status 0. */
typedef void (*kv_aer_cb_fn_t)(void *aer_cb_arg, unsigned int result, unsigned int status);

typedef enum raw_cmd_type {
	ADMIN_CMD_TYPE,
	IO_CMD_TYPE,
} raw_cmd_type_t;

/* A submission queue entry as kv_nvme_submit_raw_cmd takes it (NVMe base specification,
 * Common Command Format): 64 bytes. The data pointer is set by the SDK from buf. */
typedef struct kv_nvme_cmd {
	uint16_t opc   : 8;   /* dword 0 */
	uint16_t fuse  : 2;
	uint16_t rsvd1 : 4;
	uint16_t psdt  : 2;
	uint16_t cid;
	uint32_t nsid;        /* dword 1 */
	uint32_t rsvd2;       /* dwords 2-3 */
	uint32_t rsvd3;
	uint64_t mptr;        /* dwords 4-5 */
	uint64_t prp1;        /* dwords 6-9 */
	uint64_t prp2;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
} kv_nvme_cmd_t;

typedef struct kv_nvme_cpl {
	uint32_t result; /* completion dword 0 */
	uint32_t status; /* the status code (SC), as the original reported it */
} kv_nvme_cpl_t;

/* ---- I/O on an explicit queue: 0 (KV_SUCCESS) or a kv_result. Sync calls need a sync
 * queue, _async calls an async one (KV_ERR_DD_INVALID_QUEUE_TYPE otherwise). ---- */
KV_API int kv_nvme_write(uint64_t handle, int qid, kv_pair *kv);
KV_API int kv_nvme_write_async(uint64_t handle, int qid, kv_pair *kv);
/* Append was never implemented by the original (KV_ERR_DD_UNSUPPORTED_CMD), nor here. */
KV_API int kv_nvme_append(uint64_t handle, int qid, kv_pair *kv);
KV_API int kv_nvme_read(uint64_t handle, int qid, kv_pair *kv);
KV_API int kv_nvme_read_async(uint64_t handle, int qid, kv_pair *kv);
KV_API int kv_nvme_delete(uint64_t handle, int qid, const kv_pair *kv);
KV_API int kv_nvme_delete_async(uint64_t handle, int qid, const kv_pair *kv);
/* 0 when the key exists, KV_ERR_NOT_EXIST_KEY when not. */
KV_API int kv_nvme_exist(uint64_t handle, int qid, const kv_pair *kv);
KV_API int kv_nvme_exist_async(uint64_t handle, int qid, const kv_pair *kv);
KV_API int kv_nvme_iterate_read(uint64_t handle, int qid, kv_iterate *it);
KV_API int kv_nvme_iterate_read_async(uint64_t handle, int qid, kv_iterate *it);

/* ---- iterators and admin commands (any thread) ---- */
/* A handle 1..16, or a kv_result (never 1..16: see kv_iterate_open). */
KV_API uint32_t kv_nvme_iterate_open(uint64_t handle, const uint8_t keyspace_id,
				     const uint32_t bitmask, const uint32_t prefix,
				     const uint8_t iterate_type);
KV_API int kv_nvme_iterate_close(uint64_t handle, const uint8_t iterator);
KV_API int kv_nvme_iterate_info(uint64_t handle, kv_iterate_handle_info *info, int nr_handle);
KV_API int kv_nvme_get_log_page(uint64_t handle, uint8_t log_id, void *buffer,
				uint32_t buffer_size);
/* erase_user_data: 0 the map only, 1 user data too (NVMe Format, Secure Erase Settings). */
KV_API int kv_nvme_format(uint64_t handle, int erase_user_data);
/* Raw commands: the SDK's admin queue, or (IO_CMD_TYPE) the sync queue of the calling
 * thread's core. buf (buf_len bytes, any memory) is both sent and received. A completion
 * to free() with free, or NULL when the command could not be sent. */
KV_API kv_nvme_cpl_t *kv_nvme_submit_raw_cmd(uint64_t handle, kv_nvme_cmd_t cmd, void *buf,
					     uint32_t buf_len, raw_cmd_type_t type);
/* Asynchronous Events of the device are delivered to aer_cb_fn by kv_nvme_process_completion
 * (and kv_process_completion) on the calling thread. 0, or a negative errno. */
KV_API int kv_nvme_register_aer_callback(uint64_t handle, kv_aer_cb_fn_t aer_cb_fn,
					 void *aer_cb_arg);

/* ---- queries; failures as the original reported them ---- */
KV_API int kv_nvme_is_dd_initialized(void);
/* SYNC_IO_QUEUE, ASYNC_IO_QUEUE, or -EINVAL for a core without a queue of the device. */
KV_API int kv_nvme_io_queue_type(uint64_t handle, int core_id);
/* The queue depth of the device's I/O queues; 0 on failure. */
KV_API uint16_t kv_nvme_get_io_queue_size(uint64_t handle);
/* Commands in flight on the queue of core_id (async queues; a sync queue's caller waits). */
KV_API uint16_t kv_nvme_get_current_qd(uint64_t handle, int core_id);
KV_API uint32_t kv_nvme_get_sector_size(uint64_t handle);  /* 0 on failure */
KV_API uint64_t kv_nvme_get_num_sectors(uint64_t handle);  /* 0 on failure */
KV_API uint64_t kv_nvme_get_total_size(uint64_t handle);   /* bytes; 0 on failure */
/* KV SSD: utilization in 1/100 percent; block SSD: bytes in use; 0 on failure. */
KV_API uint64_t kv_nvme_get_used_size(uint64_t handle);
KV_API uint64_t kv_nvme_get_waf(uint64_t handle);          /* tenths; KV_ERR_INVALID_VALUE on failure */
KV_API void kv_nvme_sdk_info(void);
KV_API void kv_nvme_process_completion(uint64_t handle);
KV_API void kv_nvme_process_completion_queue(uint64_t handle, uint32_t queue_id);

#ifdef __cplusplus
}
#endif
#endif
