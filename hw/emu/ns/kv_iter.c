/* SPDX-License-Identifier: BSD-3-Clause */
/* Vendor key iterators: see kv_iter.h for the guarantees. */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu.h"
#include "hw/emu/ns/kv_iter.h"

void kv_iters_init(struct kv_iters *its)
{
	memset(its, 0, sizeof(*its));
	pthread_mutex_init(&its->lock, NULL);
}

static void release(struct kv_iter *it)
{
	free(it->keys);
	memset(it, 0, sizeof(*it));
}

void kv_iters_close_all(struct kv_iters *its)
{
	pthread_mutex_lock(&its->lock);
	for (unsigned i = 0; i < NVME_KVV_MAX_ITERATORS; i++)
		release(&its->h[i]);
	pthread_mutex_unlock(&its->lock);
}

void kv_iters_destroy(struct kv_iters *its)
{
	kv_iters_close_all(its);
	pthread_mutex_destroy(&its->lock);
}

bool kv_iter_match(const uint8_t *key, uint8_t klen, uint32_t prefix, uint32_t mask)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < 4; i++)
		v = v << 8 | (i < klen ? key[i] : 0u);
	return (v & mask) == (prefix & mask);
}

struct match_arg {
	uint32_t prefix;
	uint32_t mask;
};

static bool filter(const uint8_t *key, uint8_t klen, const void *arg)
{
	const struct match_arg *m = arg;
	return kv_iter_match(key, klen, m->prefix, m->mask);
}

uint8_t kv_iter_open(struct kv_iters *its, struct kv_store *st, uint8_t ks, uint8_t type,
		     uint32_t prefix, uint32_t mask, uint8_t *handle)
{
	uint8_t sc = 0;
	pthread_mutex_lock(&its->lock);
	int free_slot = -1;
	for (unsigned i = 0; i < NVME_KVV_MAX_ITERATORS; i++) {
		const struct kv_iter *it = &its->h[i];
		if (!it->open) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (it->ks == ks && it->mask == mask && (it->prefix & mask) == (prefix & mask)) {
			sc = NVME_KVV_SC_ITER_ALREADY_OPEN;
			goto out;
		}
	}
	if (free_slot < 0) {
		sc = NVME_KVV_SC_ITER_NO_HANDLE;
		goto out;
	}
	struct kv_iter *it = &its->h[free_slot];
	struct match_arg m = { prefix, mask };
	size_t count;
	if (kv_store_keys(st, ks, filter, &m, &it->keys, &it->len, &count) != 0) {
		sc = NVME_KVV_SC_ITER_FAIL;
		goto out;
	}
	it->open = true;
	it->eof = false;
	it->type = type;
	it->ks = ks;
	it->prefix = prefix;
	it->mask = mask;
	it->pos = 0;
	*handle = (uint8_t)(free_slot + 1);
out:
	pthread_mutex_unlock(&its->lock);
	return sc;
}

static struct kv_iter *lookup(struct kv_iters *its, uint8_t handle)
{
	if (handle < 1 || handle > NVME_KVV_MAX_ITERATORS || !its->h[handle - 1].open)
		return NULL;
	return &its->h[handle - 1];
}

uint8_t kv_iter_close(struct kv_iters *its, uint8_t handle)
{
	pthread_mutex_lock(&its->lock);
	struct kv_iter *it = lookup(its, handle);
	if (it)
		release(it);
	pthread_mutex_unlock(&its->lock);
	return it ? 0 : NVME_KVV_SC_ITER_REQUEST_FAIL;
}

uint8_t kv_iter_read(struct kv_iters *its, struct kv_store *st, uint8_t handle, uint8_t *out,
		     uint32_t cap, uint32_t *filled, bool *deleted_any)
{
	pthread_mutex_lock(&its->lock);
	struct kv_iter *it = lookup(its, handle);
	if (!it) {
		pthread_mutex_unlock(&its->lock);
		*filled = 0;
		return NVME_KVV_SC_ITER_REQUEST_FAIL;
	}
	uint32_t used = 4, count = 0, deleted = 0;
	while (it->pos < it->len) {
		uint8_t klen = it->keys[it->pos];
		const uint8_t *key = it->keys + it->pos + 1;
		if (used + 4 + klen > cap)
			break;
		/* a key deleted since the open is skipped; with delete, the delete decides */
		bool present = it->type == KV_ITER_TYPE_KEY_DELETE
				       ? kv_store_del(st, it->ks, key, klen, false) == KV_OK
				       : kv_store_exist(st, it->ks, key, klen);
		if (present && it->type == KV_ITER_TYPE_KEY_DELETE)
			deleted++;
		if (present) {
			uint32_t l = klen;
			memcpy(out + used, &l, 4);
			memcpy(out + used + 4, key, klen);
			used += 4 + klen;
			count++;
		}
		it->pos += 1 + (size_t)klen;
	}
	memcpy(out, &count, 4);
	*filled = used;
	if (it->pos >= it->len)
		it->eof = true;
	bool eof = it->eof;
	pthread_mutex_unlock(&its->lock);
	/* the deletes went to the log one by one without a sync: the controller's group commit
	 * covers them all before the completion */
	if (deleted)
		*deleted_any = true;
	return eof ? NVME_KVV_SC_ITER_EOF : 0;
}

uint8_t kv_iter_type(struct kv_iters *its, uint8_t handle)
{
	pthread_mutex_lock(&its->lock);
	struct kv_iter *it = lookup(its, handle);
	uint8_t type = it ? it->type : 0;
	pthread_mutex_unlock(&its->lock);
	return type;
}

uint8_t kv_iter_read_pair(struct kv_iters *its, struct kv_store *st, uint8_t handle,
			  uint8_t *out, uint32_t cap, uint32_t *filled, uint32_t *dw0)
{
	*filled = 0;
	*dw0 = 0;
	pthread_mutex_lock(&its->lock);
	struct kv_iter *it = lookup(its, handle);
	if (!it || cap <= NVME_KVV_ITER_VALUE_OFFSET) {
		pthread_mutex_unlock(&its->lock);
		return NVME_KVV_SC_ITER_REQUEST_FAIL;
	}
	/* the value goes to the buffer as a host transfer would take it */
	struct emu_xfer x = { .nseg = 1, .len = cap - NVME_KVV_ITER_VALUE_OFFSET };
	x.seg[0].addr = out + NVME_KVV_ITER_VALUE_OFFSET;
	x.seg[0].len = x.len;
	while (it->pos < it->len) {
		uint8_t klen = it->keys[it->pos];
		const uint8_t *key = it->keys + it->pos + 1;
		it->pos += 1 + (size_t)klen;
		uint32_t size = 0, copied = 0;
		/* a key deleted since the open is skipped */
		if (kv_store_get(st, it->ks, key, klen, 0, &x, x.len, &size, &copied) != KV_OK)
			continue;
		memcpy(out, key, klen);
		*filled = NVME_KVV_ITER_VALUE_OFFSET + copied;
		*dw0 = (uint32_t)klen << 24 | copied;
		break;
	}
	if (it->pos >= it->len)
		it->eof = true;
	bool eof = it->eof;
	pthread_mutex_unlock(&its->lock);
	return eof ? NVME_KVV_SC_ITER_EOF : 0;
}

void kv_iter_info(struct kv_iters *its, struct nvme_kvv_iter_info out[NVME_KVV_MAX_ITERATORS])
{
	pthread_mutex_lock(&its->lock);
	for (unsigned i = 0; i < NVME_KVV_MAX_ITERATORS; i++) {
		const struct kv_iter *it = &its->h[i];
		memset(&out[i], 0, sizeof(out[i]));
		out[i].handle = (uint8_t)(i + 1);
		if (!it->open)
			continue;
		out[i].status = 1;
		out[i].type = it->type;
		out[i].keyspace = it->ks;
		out[i].prefix = it->prefix;
		out[i].bitmask = it->mask;
		out[i].is_eof = it->eof;
	}
	pthread_mutex_unlock(&its->lock);
}
