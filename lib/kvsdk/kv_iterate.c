/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key iterators of the KV SSD: open (up to 16 handles on the device), read in 32 KiB chunks
 * (sync or async, both decoding completion DW0 as the number of bytes filled), close, and the
 * handle table from log page 0xD0. Not available in LBA mode.
 *
 * kv_iterate_open returns a handle 1..16 or a kv_result. Codes 1..16 would read as handles, so
 * a device code in that range (invalid keyspace, option, ...) and the SDK's own checks of the
 * condition come back as KV_ERR_DD_ITERATE_COND_INVALID.
 */
#include <stdlib.h>
#include <string.h>

#include "kv_cache.h"
#include "kv_req.h"

static struct kv_req *new_req(struct kv_state *s, struct kv_dev *d, kv_pair *kv, enum kv_op op)
{
	struct kv_req *req = calloc(1, sizeof(*req));
	if (!req)
		return NULL;
	req->s = s;
	req->dev = d;
	req->op = op;
	req->kv = kv;
	req->cb_arg = kv;
	return req;
}

/* kv_enter_dev for a KV device: iterators do not exist in LBA mode. KV_SUCCESS (the caller
 * leaves) or a kv_result with nothing held. */
static int iter_enter(const char *fn, uint64_t handle, struct kv_state **s, struct kv_dev **d)
{
	int rc = kv_enter_dev(fn, handle, s, d);
	if (rc == KV_SUCCESS && (*d)->lba) {
		kv_err("%s: iterators are not supported in LBA mode", fn);
		kv_leave();
		rc = KV_ERR_DD_UNSUPPORTED_CMD;
	}
	return rc;
}

KV_API uint32_t kv_iterate_open(uint64_t handle, const uint8_t keyspace_id, const uint32_t bitmask,
				const uint32_t prefix, const uint8_t iterate_type)
{
	const char *fn = "kv_iterate_open";
	struct kv_state *s;
	struct kv_dev *d;
	uint32_t dw0 = 0;
	int rc = iter_enter(fn, handle, &s, &d);
	if (rc)
		return rc;
	rc = KV_ERR_DD_ITERATE_COND_INVALID;
	uint32_t inv = ~bitmask;
	if (keyspace_id > KV_KEYSPACE_METADATA) {
		kv_err("%s: keyspace_id %u is not 0 or 1", fn, keyspace_id);
		goto out;
	}
	if (iterate_type < KV_KEY_ITERATE || iterate_type > KV_KEY_ITERATE_WITH_DELETE) {
		kv_err("%s: iterate_type %u is not 1..3", fn, iterate_type);
		goto out;
	}
	if (inv & (inv + 1)) {
		kv_err("%s: bitmask 0x%08x is not a run of contiguous high bits", fn, bitmask);
		goto out;
	}
	kv_pair dummy;
	memset(&dummy, 0, sizeof(dummy));
	struct kv_req *req = new_req(s, d, &dummy, KV_OP_RAW);
	if (!req) {
		rc = KV_ERR_HEAP_ALLOC_FAILURE;
		goto out;
	}
	kv_cmd_iterate_open(&req->sqe, keyspace_id, bitmask, prefix, iterate_type);
	pthread_mutex_lock(&d->admin_lock);
	rc = kv_submit_sync(req, &dw0);
	if (rc == KV_SUCCESS) {
		uint32_t h = dw0 & 0xff;
		if (h < 1 || h > KV_MAX_ITERATE_HANDLE) {
			kv_err("%s: device returned handle %u, not 1..%d", fn, h, KV_MAX_ITERATE_HANDLE);
			rc = KV_ERR_ITERATE_ERROR;
		} else {
			atomic_store(&d->iter_type[h], iterate_type);
			rc = (int)h;
		}
	} else if (rc > 0 && rc <= KV_MAX_ITERATE_HANDLE) {
		kv_err("%s: device refused the condition (status 0x%x)", fn, rc);
		rc = KV_ERR_DD_ITERATE_COND_INVALID;
	}
	pthread_mutex_unlock(&d->admin_lock);
	if (rc > KV_MAX_ITERATE_HANDLE)
		kv_err("%s: keyspace %u prefix 0x%08x bitmask 0x%08x type %u failed: 0x%x", fn,
		       keyspace_id, prefix, bitmask, iterate_type, rc);
out:
	kv_leave();
	return (uint32_t)rc;
}

/* Closing is shared with kv_format_device, which closes every open handle first. */
int kv_iterator_close(struct kv_state *s, struct kv_dev *d, uint8_t iterator)
{
	kv_pair dummy;
	memset(&dummy, 0, sizeof(dummy));
	struct kv_req *req = new_req(s, d, &dummy, KV_OP_RAW);
	if (!req)
		return KV_ERR_HEAP_ALLOC_FAILURE;
	kv_cmd_iterate_close(&req->sqe, iterator);
	int rc = kv_submit_sync(req, NULL);
	if (rc == KV_SUCCESS)
		atomic_store(&d->iter_type[iterator], 0);
	return rc;
}

KV_API int kv_iterate_close(uint64_t handle, const uint8_t iterator)
{
	const char *fn = "kv_iterate_close";
	struct kv_state *s;
	struct kv_dev *d;
	int rc = iter_enter(fn, handle, &s, &d);
	if (rc)
		return rc;
	if (iterator < 1 || iterator > KV_MAX_ITERATE_HANDLE) {
		kv_err("%s: iterator %u is not 1..%d", fn, iterator, KV_MAX_ITERATE_HANDLE);
		rc = KV_ERR_SDK_INVALID_PARAM;
		goto out;
	}
	pthread_mutex_lock(&d->admin_lock);
	rc = kv_iterator_close(s, d, iterator);
	pthread_mutex_unlock(&d->admin_lock);
	if (rc)
		kv_err("%s: iterator %u: 0x%x", fn, iterator, rc);
out:
	kv_leave();
	return rc;
}

int kv_iterate_read_on(uint64_t handle, kv_iterate *it, bool async, int qid, const char *fn)
{
	if (!fn)
		fn = async ? "kv_iterate_read_async" : "kv_iterate_read";
	struct kv_state *s;
	struct kv_dev *d;
	int rc = iter_enter(fn, handle, &s, &d);
	if (rc)
		return rc;
	struct kv_queue *q = NULL; /* the SDK's choice */
	if (qid != KV_QID_ANY && !(q = kv_queue_by_id(d, qid, !async, fn, &rc)))
		goto out;
	rc = KV_ERR_SDK_INVALID_PARAM;
	if (!it) {
		kv_err("%s: it is NULL", fn);
		goto out;
	}
	if (it->iterator < 1 || it->iterator > KV_MAX_ITERATE_HANDLE) {
		kv_err("%s: iterator %u is not 1..%d", fn, it->iterator, KV_MAX_ITERATE_HANDLE);
		goto out;
	}
	if (!it->kv.value.value) {
		kv_err("%s: kv.value.value is NULL", fn);
		goto out;
	}
	if (async && !it->kv.param.async_cb) {
		kv_err("%s: kv.param.async_cb is NULL", fn);
		goto out;
	}
	if (it->kv.value.length != KV_ITERATE_READ_BUFFER_SIZE) {
		/* as the original: one chunk is exactly 32 KiB, and nothing was read */
		kv_err("%s: buffer of %u bytes; an iterator chunk is exactly %d", fn,
		       it->kv.value.length, KV_ITERATE_READ_BUFFER_SIZE);
		it->kv.value.length = 0;
		rc = KV_ERR_INVALID_VALUE_SIZE;
		goto out;
	}
	struct kv_req *req = new_req(s, d, &it->kv, KV_OP_ITER_READ);
	if (!req) {
		rc = KV_ERR_HEAP_ALLOC_FAILURE;
		goto out;
	}
	req->cb_arg = it;
	req->iterator = (uint8_t)it->iterator;
	req->data = kv_dma_get(s, KV_ITERATE_READ_BUFFER_SIZE);
	req->data_len = KV_ITERATE_READ_BUFFER_SIZE;
	if (!req->data) {
		kv_err("%s: no slab memory for a 32 KiB chunk", fn);
		free(req);
		rc = KV_ERR_SLAB_ALLOC_FAILURE;
		goto out;
	}
	uint8_t type = atomic_load(&d->iter_type[it->iterator]);
	if (!type) {
		/* opened by another process (or before a restart): the device's table says what
		 * it is, which decides how its reads are decoded */
		kv_iterate_handle_info info[KV_MAX_ITERATE_HANDLE];
		if (kv_iterator_table(d, info, KV_MAX_ITERATE_HANDLE) == KV_SUCCESS &&
		    info[it->iterator - 1].status == ITERATE_HANDLE_OPENED) {
			type = info[it->iterator - 1].type;
			atomic_store(&d->iter_type[it->iterator], type);
		}
	}
	if (s->cache && type != KV_KEY_ITERATE && type != KV_KEY_ITERATE_WITH_RETRIEVE)
		kv_cache_clear(s->cache); /* a delete iterator (or one unknown to us) removes keys */
	kv_cmd_build(req);
	if (async) {
		rc = kv_submit_async_on(q, req);
		free(req); /* its contents went to the queue, or were released */
	} else {
		rc = kv_submit_sync_on(q, req, NULL);
	}
out:
	kv_leave();
	return rc;
}

KV_API int kv_iterate_read(uint64_t handle, kv_iterate *it)
{
	return kv_iterate_read_on(handle, it, false, KV_QID_ANY, NULL);
}

KV_API int kv_iterate_read_async(uint64_t handle, kv_iterate *it)
{
	return kv_iterate_read_on(handle, it, true, KV_QID_ANY, NULL);
}

/* Log page 0xD0: 16 bytes per handle: id, status, type, keyspace, prefix, bitmask, is_eof. */
int kv_iterator_table(struct kv_dev *d, kv_iterate_handle_info *info, int n)
{
	struct nvme_kvv_iter_info t[NVME_KVV_MAX_ITERATORS];
	int st = unvme_get_log_page(d->ctrlr, NVME_KVV_LOG_ITER, 0xffffffffu, t, sizeof(t), 0);
	if (st) {
		/* an admin command: its statuses are NVMe's, not KV results (Invalid Log Page,
		 * SCT 1h SC 09h, says the device keeps no KV iterators) */
		kv_err("iterator info: log page 0xD0 of device %d: %s", d->idx,
		       st > 0 ? unvme_status_str(st, NVME_CSI_NVM) : unvme_errmsg());
		return st > 0 ? kv_result_from_status(st, false) : kv_result_from_errno(st);
	}
	for (int i = 0; i < n; i++) {
		memset(&info[i], 0, sizeof(info[i]));
		info[i].handle_id = t[i].handle;
		info[i].status = t[i].status;
		info[i].type = t[i].type;
		info[i].keyspace_id = t[i].keyspace;
		info[i].prefix = t[i].prefix;
		info[i].bitmask = t[i].bitmask;
		info[i].is_eof = t[i].is_eof;
	}
	return KV_SUCCESS;
}

KV_API int kv_iterate_info(uint64_t handle, kv_iterate_handle_info *info, int nr_handle)
{
	const char *fn = "kv_iterate_info";
	struct kv_state *s;
	struct kv_dev *d;
	int rc = iter_enter(fn, handle, &s, &d);
	if (rc)
		return rc;
	if (!info || nr_handle < 1) {
		kv_err("%s: info %p, nr_handle %d: need a buffer of 1..16 entries", fn, (void *)info,
		       nr_handle);
		rc = KV_ERR_SDK_INVALID_PARAM;
		goto out;
	}
	rc = kv_iterator_table(d, info, nr_handle > KV_MAX_ITERATE_HANDLE ? KV_MAX_ITERATE_HANDLE
									 : nr_handle);
out:
	kv_leave();
	return rc;
}
