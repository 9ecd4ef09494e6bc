/* SPDX-License-Identifier: BSD-3-Clause */
/* Walking an iterate-read buffer without trusting a byte of it, and reading one. */
#include <string.h>

#include "kv_apis.h"
#include "kv_iter_buf.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int kvt_iter_parse(const uint8_t *buf, uint32_t len,
		   void (*fn)(const uint8_t *key, uint32_t klen, void *arg), void *arg)
{
	if (len == 0)
		return 0; /* nothing transferred: no keys */
	if (len < 4)
		return -1;
	uint32_t count = le32(buf), pos = 4;
	for (uint32_t k = 0; k < count; k++) {
		if (len - pos < 4)
			return -1;
		uint32_t klen = le32(buf + pos);
		pos += 4;
		if (klen > len - pos)
			return -1;
		if (fn)
			fn(buf + pos, klen, arg);
		pos += klen;
	}
	return count > (uint32_t)0x7fffffff ? -1 : (int)count;
}

int kvt_iter_read(uint64_t handle, uint32_t iterator, uint8_t *buf, uint32_t *len)
{
	kv_iterate it;
	memset(&it, 0, sizeof(it));
	it.iterator = iterator;
	it.kv.keyspace_id = KV_KEYSPACE_IODATA;
	it.kv.value.value = buf;
	it.kv.value.length = KV_ITERATE_READ_BUFFER_SIZE;
	it.kv.param.io_option.iterate_read_option = KV_ITERATE_READ_DEFAULT;
	int rc = kv_iterate_read(handle, &it);
	*len = it.kv.value.length < KV_ITERATE_READ_BUFFER_SIZE ? it.kv.value.length
								: KV_ITERATE_READ_BUFFER_SIZE;
	return rc;
}
