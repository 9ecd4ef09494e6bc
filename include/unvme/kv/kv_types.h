/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Types and constants of the key-value SDK, API- and ABI-compatible with Samsung's uNVMe 2.0
 * SDK (release v20.05): programs written for it rebuild against this header unchanged. Field
 * order, sizes and values are those of the original; see docs/kv-sdk.md for behaviour.
 */
#ifndef _KV_TYPES_H_
#define _KV_TYPES_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KV_MIN_VALUE_LEN               (0)
#define KV_MAX_IO_VALUE_LEN            (2048 * 1024)
#define LBA_MAX_IO_VALUE_LEN           (2048 * 1024)
#define KV_MIN_KEY_LEN                 (4)
#define KV_MAX_KEY_LEN                 (255)
#define KV_ITERATE_READ_BUFFER_OFFSET  (4)
#define KV_ALIGNMENT_UNIT              (512)
#define KV_VALUE_LENGTH_ALIGNMENT_UNIT (4)
#define KV_ITERATE_READ_BUFFER_SIZE    (32 * 1024)
#define KV_MAX_ITERATE_HANDLE          (16)
#define DEV_ID_LEN                     (32)
#define NR_MAX_SSD                     (64)
#define MAX_CPU_CORES                  (64)
/* "any NUMA node" for kv_alloc_socket / kv_zalloc_socket */
#define SOCKET_ID_ANY                  (-1)
#define KV_ERR_INVALID_VALUE           (UINT64_MAX)
#define KV_INVALID_ITERATE_HANDLE      (0)

enum kv_sdk_init_types {
	KV_SDK_INIT_FROM_JSON = 0x00,
	KV_SDK_INIT_FROM_STR = 0x01,
};

enum kv_sdk_ssd_types {
	KV_TYPE_SSD = 0x00,
	LBA_TYPE_SSD = 0x01,
};

enum kv_cache_algorithm {
	CACHE_ALGORITHM_RADIX = 0x00,
};

enum kv_cache_reclaim {
	CACHE_RECLAIM_LRU = 0x00,
};

enum kv_slab_mm_alloc_policy {
	SLAB_MM_ALLOC_POSIX = 0x10,
	SLAB_MM_ALLOC_HUGE = 0x20,
};

enum kv_store_option {
	KV_STORE_DEFAULT = 0x00,
	KV_STORE_COMPRESSION = 0x01,
	KV_STORE_IDEMPOTENT = 0x02,
};

enum kv_retrieve_option {
	KV_RETRIEVE_DEFAULT = 0x00,
	KV_RETRIEVE_DECOMPRESSION = 0x01,
};

enum kv_delete_option {
	KV_DELETE_DEFAULT = 0x00,
	KV_DELETE_CHECK_IDEMPOTENT = 0x01,
};

enum kv_exist_option {
	KV_EXIST_DEFAULT = 0x00,
};

enum kv_format_option {
	KV_FORMAT_MAPDATA = 0x00,
	KV_FORMAT_USERDATA = 0x01,
};

enum kv_iterate_request_option {
	KV_ITERATE_REQUEST_DEFAULT = 0x00,
	KV_ITERATE_REQUEST_OPEN = 0x01,
	KV_ITERATE_REQUEST_CLOSE = 0x02,
};

enum kv_iterate_handle_type {
	KV_KEY_ITERATE = 0x01,
	KV_KEY_ITERATE_WITH_RETRIEVE = 0x02,
	KV_KEY_ITERATE_WITH_DELETE = 0x03,
};

enum kv_keyspace_id {
	KV_KEYSPACE_IODATA = 0x00,
	KV_KEYSPACE_METADATA = 0x01,
};

enum kv_iterate_read_option {
	KV_ITERATE_READ_DEFAULT = 0x00,
};

enum kv_sdk_iterate_status {
	ITERATE_HANDLE_CLOSED = 0x00,
	ITERATE_HANDLE_OPENED = 0x01,
};

/* The original names it enum kv_result; kv_result alone works too. */
typedef enum kv_result {
	KV_SUCCESS = 0,

	/* device */
	KV_ERR_INVALID_VALUE_SIZE = 0x01,
	KV_ERR_INVALID_VALUE_OFFSET = 0x02,
	KV_ERR_INVALID_KEY_SIZE = 0x03,
	KV_ERR_INVALID_OPTION = 0x04,
	KV_ERR_INVALID_KEYSPACE_ID = 0x05,
	KV_ERR_MISALIGNED_VALUE_SIZE = 0x08,
	KV_ERR_MISALIGNED_VALUE_OFFSET = 0x09,
	KV_ERR_MISALIGNED_KEY_SIZE = 0x0A,
	KV_ERR_NOT_EXIST_KEY = 0x10,
	KV_ERR_UNRECOVERED_ERROR = 0x11,
	KV_ERR_CAPACITY_EXCEEDED = 0x12,
	KV_ERR_IDEMPOTENT_STORE_FAIL = 0x80,
	KV_ERR_MAXIMUM_VALUE_SIZE_LIMIT_EXCEEDED = 0x81,

	/* iterate */
	KV_ERR_ITERATE_FAIL_TO_PROCESS_REQUEST = 0x90,
	KV_ERR_ITERATE_NO_AVAILABLE_HANDLE = 0x91,
	KV_ERR_ITERATE_HANDLE_ALREADY_OPENED = 0x92,
	KV_ERR_ITERATE_READ_EOF = 0x93,
	KV_ERR_ITERATE_REQUEST_FAIL = 0x94,
	KV_ERR_ITERATE_TCG_LOCKED = 0x95,
	KV_ERR_ITERATE_ERROR = 0x96,

	/* driver */
	KV_ERR_DD_NO_DEVICE = 0x100,
	KV_ERR_DD_INVALID_PARAM = 0x101,
	KV_ERR_DD_INVALID_QUEUE_TYPE = 0x102,
	KV_ERR_DD_NO_AVAILABLE_RESOURCE = 0x103,
	KV_ERR_DD_NO_AVAILABLE_QUEUE = 0x104,
	KV_ERR_DD_UNSUPPORTED_CMD = 0x105,
	KV_ERR_DD_ITERATE_COND_INVALID = 0x106,

	/* SDK */
	KV_ERR_SDK_OPEN = 0x200,
	KV_ERR_SDK_CLOSE = 0x201,
	KV_ERR_CACHE_NO_CACHED_KEY = 0x202,
	KV_ERR_CACHE_INVALID_PARAM = 0x203,
	KV_ERR_HEAP_ALLOC_FAILURE = 0x204,
	KV_ERR_SLAB_ALLOC_FAILURE = 0x205,
	KV_ERR_SDK_INVALID_PARAM = 0x206,

	/* other */
	KV_WRN_MORE = 0x300,
	KV_ERR_BUFFER = 0x301,
	KV_ERR_DECOMPRESSION = 0x302,
	KV_ERR_IO = 0x303,
} kv_result;

typedef struct {
	uint64_t core_mask;
	uint64_t sync_mask;
	uint64_t num_cq_threads;
	uint64_t cq_thread_mask;
	uint32_t queue_depth;
	uint32_t mem_size_mb;
} kv_nvme_io_options;

typedef struct {
	bool use_cache;
	int cache_algorithm;
	int cache_reclaim_policy;
	uint64_t slab_size;
	int slab_alloc_policy;
	int ssd_type;
	int submit_retry_interval;
	int nr_ssd;
	char dev_id[NR_MAX_SSD][DEV_ID_LEN];
	kv_nvme_io_options dd_options[NR_MAX_SSD];
	uint64_t dev_handle[NR_MAX_SSD];
	int log_level;
	char log_file[1024];
	pthread_mutex_t cb_cnt_mutex;
	uint64_t app_hugemem_size;
} kv_sdk;

typedef struct {
	void *key;
	uint16_t length;
} kv_key;

typedef struct {
	void *value;
	uint32_t length;
	uint32_t actual_value_size;
	uint32_t offset;
} kv_value;

typedef struct {
	/* Called as async_cb(kv_pair *or kv_iterate *, unsigned int result, unsigned int status).
	 * The empty parameter list is the original's; C++ callers cast. */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
	void (*async_cb)();
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif
	void *private_data;
	union {
		int store_option;
		int retrieve_option;
		int delete_option;
		int iterate_request_option;
		int iterate_read_option;
		int exist_option;
	} io_option;
} kv_param;

typedef struct {
	uint8_t keyspace_id;
	kv_key key;
	kv_value value;
	kv_param param;
} kv_pair;

typedef struct {
	uint32_t iterator;
	kv_pair kv;
} kv_iterate;

typedef struct {
	uint8_t handle_id;
	uint8_t status;
	uint8_t type;
	uint8_t keyspace_id;
	uint32_t prefix;
	uint32_t bitmask;
	uint8_t is_eof;
	uint8_t reserved[3];
} kv_iterate_handle_info;

#ifdef __cplusplus
}
#endif
#endif
