/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compatibility header: some samples of Samsung's uNVMe 2.0 SDK (sdk_perf_async) include the
 * original's internal "kvcache.h" only for the API and the system headers it pulled in. The
 * read cache itself is internal to this SDK (use_cache / "cache": "on"); this header gives
 * kv_types.h, kv_apis.h and those system headers, nothing more.
 */
#ifndef _KVCACHE_H_
#define _KVCACHE_H_

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_types.h"
#include "kv_apis.h"

#endif
