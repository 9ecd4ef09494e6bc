/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compatibility header: some samples of Samsung's uNVMe 2.0 SDK (sdk_perf_async) include the
 * original's internal "kvcache.h" only for the API it pulled in. The read cache itself is
 * internal to this SDK (use_cache / "cache": "on"); this header gives kv_types.h and
 * kv_apis.h, nothing more.
 */
#ifndef _KVCACHE_H_
#define _KVCACHE_H_

#include <pthread.h>
#include <stdint.h>

#include "kv_types.h"
#include "kv_apis.h"

#endif
