/* SPDX-License-Identifier: BSD-3-Clause */
/* The kv_result name table (kv_types.h), one entry per enumerator. */
#include <stdio.h>

#include "kv_types.h"
#include "kv_result_name.h"

#define NAME(x) { x, #x }

static const struct {
	int code;
	const char *name;
} names[] = {
	NAME(KV_SUCCESS),
	NAME(KV_ERR_INVALID_VALUE_SIZE),
	NAME(KV_ERR_INVALID_VALUE_OFFSET),
	NAME(KV_ERR_INVALID_KEY_SIZE),
	NAME(KV_ERR_INVALID_OPTION),
	NAME(KV_ERR_INVALID_KEYSPACE_ID),
	NAME(KV_ERR_MISALIGNED_VALUE_SIZE),
	NAME(KV_ERR_MISALIGNED_VALUE_OFFSET),
	NAME(KV_ERR_MISALIGNED_KEY_SIZE),
	NAME(KV_ERR_NOT_EXIST_KEY),
	NAME(KV_ERR_UNRECOVERED_ERROR),
	NAME(KV_ERR_CAPACITY_EXCEEDED),
	NAME(KV_ERR_IDEMPOTENT_STORE_FAIL),
	NAME(KV_ERR_MAXIMUM_VALUE_SIZE_LIMIT_EXCEEDED),
	NAME(KV_ERR_ITERATE_FAIL_TO_PROCESS_REQUEST),
	NAME(KV_ERR_ITERATE_NO_AVAILABLE_HANDLE),
	NAME(KV_ERR_ITERATE_HANDLE_ALREADY_OPENED),
	NAME(KV_ERR_ITERATE_READ_EOF),
	NAME(KV_ERR_ITERATE_REQUEST_FAIL),
	NAME(KV_ERR_ITERATE_TCG_LOCKED),
	NAME(KV_ERR_ITERATE_ERROR),
	NAME(KV_ERR_DD_NO_DEVICE),
	NAME(KV_ERR_DD_INVALID_PARAM),
	NAME(KV_ERR_DD_INVALID_QUEUE_TYPE),
	NAME(KV_ERR_DD_NO_AVAILABLE_RESOURCE),
	NAME(KV_ERR_DD_NO_AVAILABLE_QUEUE),
	NAME(KV_ERR_DD_UNSUPPORTED_CMD),
	NAME(KV_ERR_DD_ITERATE_COND_INVALID),
	NAME(KV_ERR_SDK_OPEN),
	NAME(KV_ERR_SDK_CLOSE),
	NAME(KV_ERR_CACHE_NO_CACHED_KEY),
	NAME(KV_ERR_CACHE_INVALID_PARAM),
	NAME(KV_ERR_HEAP_ALLOC_FAILURE),
	NAME(KV_ERR_SLAB_ALLOC_FAILURE),
	NAME(KV_ERR_SDK_INVALID_PARAM),
	NAME(KV_WRN_MORE),
	NAME(KV_ERR_BUFFER),
	NAME(KV_ERR_DECOMPRESSION),
	NAME(KV_ERR_IO),
};

const char *kvt_result_name(int result)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == result)
			return names[i].name;
	return NULL;
}

const char *kvt_result_str(int result, char *out, size_t outlen)
{
	const char *n = kvt_result_name(result);
	if (n)
		snprintf(out, outlen, "%s (0x%02X)", n, (unsigned)result);
	else
		snprintf(out, outlen, "unknown kv_result (0x%02X)", (unsigned)result);
	return out;
}
