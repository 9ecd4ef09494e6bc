/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Store, retrieve, delete, exist and append, sync and async, on KV namespaces and in LBA mode.
 * Every call checks its arguments (each failure: a kv_result and a log line), copies key and
 * value through SDK-owned DMA memory (callers may pass malloc buffers), and follows the read
 * cache's ticket protocol (kv_cache.h) when the cache is on.
 */
#include <stdlib.h>
#include <string.h>

#include "kv_cache.h"
#include "kv_req.h"

static const char *const fn_names[][2] = {
	[KV_OP_STORE] = { "kv_store", "kv_store_async" },
	[KV_OP_RETRIEVE] = { "kv_retrieve", "kv_retrieve_async" },
	[KV_OP_DELETE] = { "kv_delete", "kv_delete_async" },
	[KV_OP_EXIST] = { "kv_exist", "kv_exist_async" },
};

static int check(const struct kv_dev *d, const kv_pair *kv, enum kv_op op, bool async,
		 const char *fn)
{
	if (!kv) {
		kv_err("%s: kv is NULL", fn);
		return KV_ERR_SDK_INVALID_PARAM;
	}
	if (kv->key.length < KV_MIN_KEY_LEN || kv->key.length > KV_MAX_KEY_LEN) {
		kv_err("%s: key length %u is not %d..%d", fn, kv->key.length, KV_MIN_KEY_LEN,
		       KV_MAX_KEY_LEN);
		return KV_ERR_INVALID_KEY_SIZE;
	}
	if (!kv->key.key) {
		kv_err("%s: key.key is NULL", fn);
		return KV_ERR_SDK_INVALID_PARAM;
	}
	if (async && !kv->param.async_cb) {
		kv_err("%s: param.async_cb is NULL", fn);
		return KV_ERR_SDK_INVALID_PARAM;
	}
	bool data = op == KV_OP_STORE || op == KV_OP_RETRIEVE;
	if (data && kv->value.length > KV_MAX_IO_VALUE_LEN) {
		kv_err("%s: value length %u exceeds %d", fn, kv->value.length, KV_MAX_IO_VALUE_LEN);
		return KV_ERR_INVALID_VALUE_SIZE;
	}
	if (data && kv->value.length && !kv->value.value) {
		kv_err("%s: value.value is NULL with length %u", fn, kv->value.length);
		return KV_ERR_SDK_INVALID_PARAM;
	}
	if (d->lba) {
		if (op == KV_OP_EXIST) {
			kv_err("%s: exist is not supported in LBA mode", fn);
			return KV_ERR_DD_UNSUPPORTED_CMD;
		}
		if (!kv->value.length) {
			kv_err("%s: LBA mode needs a value length of at least one sector (%u bytes)", fn,
			       d->sector_size);
			return KV_ERR_INVALID_VALUE_SIZE;
		}
		if (kv->value.length % d->sector_size) {
			kv_err("%s: value length %u is not a multiple of the sector size %u", fn,
			       kv->value.length, d->sector_size);
			return KV_ERR_MISALIGNED_VALUE_SIZE;
		}
		if (kv->value.offset % d->sector_size) {
			kv_err("%s: value offset %u is not a multiple of the sector size %u", fn,
			       kv->value.offset, d->sector_size);
			return KV_ERR_MISALIGNED_VALUE_OFFSET;
		}
		return KV_SUCCESS;
	}
	if (kv->keyspace_id > KV_KEYSPACE_METADATA) {
		kv_err("%s: keyspace_id %u is not 0 or 1", fn, kv->keyspace_id);
		return KV_ERR_INVALID_KEYSPACE_ID;
	}
	if (op == KV_OP_RETRIEVE && kv->value.length % KV_VALUE_LENGTH_ALIGNMENT_UNIT) {
		kv_err("%s: buffer length %u is not a multiple of %d", fn, kv->value.length,
		       KV_VALUE_LENGTH_ALIGNMENT_UNIT);
		return KV_ERR_MISALIGNED_VALUE_SIZE;
	}
	if (data && kv->value.offset % KV_ALIGNMENT_UNIT) {
		kv_err("%s: value offset %u is not a multiple of %d", fn, kv->value.offset,
		       KV_ALIGNMENT_UNIT);
		return KV_ERR_MISALIGNED_VALUE_OFFSET;
	}
	if (data && (kv->value.length + 3u) / 4u * 4u > d->max_xfer) {
		kv_err("%s: value length %u exceeds the controller's transfer limit %u", fn,
		       kv->value.length, d->max_xfer);
		return KV_ERR_INVALID_VALUE_SIZE;
	}
	return KV_SUCCESS;
}

/* A value buffer that is DMA memory already (kv_alloc, kv_zalloc) can go to the device as it
 * is, when the caller cannot touch it before the device is done: sync calls (they return
 * after the completion) and retrieves (the caller waits for the callback to read the value).
 * An async store returns while the command is in flight and a caller may reuse its buffer
 * at once, as the original allowed (it always copied): it is copied unless the configuration
 * opts in with "zero_copy" (docs/kv-sdk.md). The driver wants the buffer dword aligned and
 * inside one DMA mapping. */
static bool usable_as_is(const void *buf, size_t len)
{
	return ((uintptr_t)buf & 3u) == 0 && unvme_dma_contig(buf) >= len;
}

/* Fills *req (the caller's storage) with the command and its SDK buffers. KV_SUCCESS, or a
 * kv_result with nothing held. */
static int prepare(struct kv_state *s, struct kv_dev *d, kv_pair *kv, enum kv_op op, bool async,
		   const char *fn, struct kv_req *req)
{
	memset(req, 0, sizeof(*req));
	req->s = s;
	req->dev = d;
	req->op = op;
	req->lba = d->lba;
	req->kv = kv;
	req->cb_arg = kv;
	size_t len = 0;
	if (op == KV_OP_STORE)
		len = d->lba ? kv->value.length : (kv->value.length + 3u) / 4u * 4u;
	else if (op == KV_OP_RETRIEVE)
		len = kv->value.length;
	else if (op == KV_OP_DELETE && d->lba)
		len = 16; /* one Dataset Management range */
	if (len) {
		/* a store of whole dwords and any retrieve move exactly the caller's bytes */
		bool may_share = op == KV_OP_RETRIEVE || (op == KV_OP_STORE &&
							   (!async || s->cfg.zero_copy));
		if (may_share && len == kv->value.length && usable_as_is(kv->value.value, len)) {
			req->data = kv->value.value;
			req->data_is_callers = true;
		} else {
			req->data = kv_dma_get(s, len);
		}
		req->data_len = len;
	}
	if (!d->lba && kv->key.length > 16)
		req->keybuf = kv_dma_get(s, kv->key.length);
	if ((len && !req->data) || (!d->lba && kv->key.length > 16 && !req->keybuf)) {
		kv_err("%s: no slab memory for a %zu-byte value and a %u-byte key (slab_size %llu MB)",
		       fn, len, kv->key.length, (unsigned long long)(s->cfg.sdk.slab_size >> 20));
		kv_req_release(req);
		return KV_ERR_SLAB_ALLOC_FAILURE;
	}
	if (op == KV_OP_STORE && len && !req->data_is_callers) {
		memcpy(req->data, kv->value.value, kv->value.length);
		memset((uint8_t *)req->data + kv->value.length, 0, len - kv->value.length);
	}
	int rc = kv_cmd_build(req);
	if (rc) {
		kv_err("%s: command cannot be built (0x%x)", fn, rc);
		kv_req_release(req);
	}
	return rc;
}

int kv_io(uint64_t handle, kv_pair *kv, enum kv_op op, bool async, int qid, const char *fn)
{
	if (!fn)
		fn = fn_names[op][async];
	struct kv_state *s;
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, &s, &d);
	if (rc)
		return rc;
	struct kv_queue *q = NULL; /* the SDK's choice (kv_pick_queue) */
	if (qid != KV_QID_ANY && !(q = kv_queue_by_id(d, qid, !async, fn, &rc)))
		goto out;
	rc = check(d, kv, op, async, fn);
	if (rc)
		goto out;
	struct kv_cache *cache = s->cache;
	uint64_t ticket = 0;
	if (cache) {
		const void *key = kv->key.key;
		if (op == KV_OP_RETRIEVE) {
			uint32_t stored = 0, copied = 0;
			if (kv_cache_get(cache, kv->keyspace_id, key, kv->key.length, kv->value.offset,
					 kv->value.value, kv->value.length, &stored, &copied) == 0) {
				kv->value.length = copied;
				kv->value.actual_value_size = stored - kv->value.offset;
				kv_log(3, "%s: cache hit", fn);
				if (async)
					kv_call_back((kv_async_cb_fn)kv->param.async_cb, kv, stored,
						     KV_SUCCESS, 0);
				rc = KV_SUCCESS;
				goto out;
			}
		} else if (op == KV_OP_STORE || op == KV_OP_DELETE) {
			kv_cache_invalidate(cache, kv->keyspace_id, key, kv->key.length);
		}
		ticket = kv_cache_ticket(cache, kv->keyspace_id, key, kv->key.length);
	}
	/* An async request is built here and moves into a slot of its queue; a sync one lives on
	 * the heap, where the driver can keep it if its queue fails under the waiting caller. */
	struct kv_req local, *req = async ? &local : malloc(sizeof(*req));
	if (!req) {
		kv_err("%s: out of memory for a request", fn);
		rc = KV_ERR_HEAP_ALLOC_FAILURE;
		goto out;
	}
	rc = prepare(s, d, kv, op, async, fn, req);
	if (rc) {
		if (!async)
			free(req);
		goto out;
	}
	req->ticket = ticket;
	rc = async ? kv_submit_async_on(q, req) : kv_submit_sync_on(q, req, NULL);
out:
	kv_leave();
	return rc;
}

KV_API int kv_store(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_STORE, false, KV_QID_ANY, NULL);
}

KV_API int kv_store_async(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_STORE, true, KV_QID_ANY, NULL);
}

KV_API int kv_retrieve(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_RETRIEVE, false, KV_QID_ANY, NULL);
}

KV_API int kv_retrieve_async(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_RETRIEVE, true, KV_QID_ANY, NULL);
}

KV_API int kv_delete(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_DELETE, false, KV_QID_ANY, NULL);
}

KV_API int kv_delete_async(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_DELETE, true, KV_QID_ANY, NULL);
}

KV_API int kv_exist(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_EXIST, false, KV_QID_ANY, NULL);
}

KV_API int kv_exist_async(uint64_t handle, kv_pair *kv)
{
	return kv_io(handle, kv, KV_OP_EXIST, true, KV_QID_ANY, NULL);
}

/* Append existed in the wire protocol (0x83) but never in the original SDK's API: it always
 * answered "unsupported", and so does this one, after the usual checks. */
KV_API int kv_append(uint64_t handle, kv_pair *kv)
{
	struct kv_state *s = kv_enter("kv_append");
	if (!s)
		return KV_ERR_SDK_CLOSE;
	int rc = kv_dev_of(s, handle, "kv_append") ? KV_ERR_DD_UNSUPPORTED_CMD : KV_ERR_DD_NO_DEVICE;
	if (rc == KV_ERR_DD_UNSUPPORTED_CMD)
		kv_err("kv_append: not supported (kv %p)", (void *)kv);
	kv_leave();
	return rc;
}
