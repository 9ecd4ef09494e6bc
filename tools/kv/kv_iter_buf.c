/* SPDX-License-Identifier: BSD-3-Clause */
/* Walking an iterate-read buffer without trusting a byte of it. */
#include <string.h>

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
