/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packed list of keys as the KV iterators hand them out: {u8 length, key bytes} after each
 * other, grown by doubling. Both KV engines (the emulated device's, hw/emu/ns/kv_store.c, and
 * the host KV target's, lib/hostkv) build their key snapshots with it.
 */
#ifndef UNVME_COMMON_KEYLIST_H
#define UNVME_COMMON_KEYLIST_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct keylist {
	uint8_t *buf;
	size_t cap, used, count;
};

/* 0 or -ENOMEM. */
static inline int keylist_init(struct keylist *l)
{
	l->cap = 4096;
	l->used = l->count = 0;
	l->buf = malloc(l->cap);
	return l->buf ? 0 : -ENOMEM;
}

/* Appends one key: 0, or -ENOMEM (the list stays as it was). */
static inline int keylist_add(struct keylist *l, const uint8_t *key, uint8_t klen)
{
	if (l->used + 1 + klen > l->cap) {
		uint8_t *nb = realloc(l->buf, l->cap * 2);
		if (!nb)
			return -ENOMEM;
		l->buf = nb;
		l->cap *= 2;
	}
	l->buf[l->used] = klen;
	memcpy(l->buf + l->used + 1, key, klen);
	l->used += 1 + (size_t)klen;
	l->count++;
	return 0;
}

/* Hands the list over (rc 0) or frees it (rc < 0); returns rc. */
static inline int keylist_finish(struct keylist *l, int rc, uint8_t **buf, size_t *len, size_t *count)
{
	if (rc) {
		free(l->buf);
		return rc;
	}
	*buf = l->buf;
	*len = l->used;
	*count = l->count;
	return 0;
}

#endif
