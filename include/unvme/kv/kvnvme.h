/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compatibility header for programs written for Samsung's uNVMe 2.0 SDK, whose samples say
 * #include "kvnvme.h" (the original's driver-level header). It declares the part of that
 * header this SDK provides: the system headers it pulled in, kv_types.h, the DMA memory
 * helpers (spdk/env.h) and the queue-type and iterator constants. The original's kv_nvme_*
 * driver calls are not provided (use the kv_* API of kv_apis.h, which it wrapped); see
 * docs/kv-sdk.md, "Differences from the original".
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

/* kv_io_queue_type() results */
#define SYNC_IO_QUEUE  1
#define ASYNC_IO_QUEUE 2

#define DEFAULT_IO_QUEUE_DEPTH 256
#define DEFAULT_IO_QUEUE_ID    (-1)

/* The iterator read size of older samples (KV_ITERATE_READ_BUFFER_SIZE in kv_types.h). */
#ifndef KV_SSD_MAX_ITERATE_READ_LEN
#define KV_SSD_MAX_ITERATE_READ_LEN KV_ITERATE_READ_BUFFER_SIZE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The callback shape of async calls (kv_param.async_cb): status is the command's status
 * code, equal to its kv_result; result is completion dword 0 (docs/kv-sdk.md). */
typedef void (*kv_cb_fn_t)(const kv_pair *kv, unsigned int result, unsigned int status);

#ifdef __cplusplus
}
#endif
#endif
