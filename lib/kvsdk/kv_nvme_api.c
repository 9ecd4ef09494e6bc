/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The original SDK's driver-level API (kvnvme.h) on this SDK's devices: the handles of
 * kv_sdk_init, I/O on the queue a call names (qid: a core of the device's core_mask, negative
 * for the calling thread's core), never moving the thread. The I/O goes the kv_* calls' way
 * (argument checks, SDK-owned DMA buffers when the caller's are not DMA memory, the read
 * cache kept coherent), so the two APIs may be mixed on one device. Admin calls and queries
 * are the kv_* ones with the original's failure values. Each call is traced at
 * KVNVME_LOG_DEBUG (kv_trace.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kv_req.h"
#include "unvme/kv/kvnvme.h"

/* Negative queue ids all mean the calling thread's core (KV_QID_ANY is the SDK's choice). */
static int qid_of(int qid)
{
	return qid < 0 ? -1 : qid;
}

static int traced(const char *fn, uint64_t handle, int qid, int rc)
{
	kv_trace_print(KVNVME_LOG_DEBUG, __FILE__, __LINE__, fn, "handle 0x%llx qid %d: 0x%x",
		       (unsigned long long)handle, qid, (unsigned)rc);
	return rc;
}

static int io(const char *fn, uint64_t handle, int qid, const kv_pair *kv, enum kv_op op,
	      bool async)
{
	/* kv_io writes to the pair only for retrieves (value length and actual size) */
	return traced(fn, handle, qid, kv_io(handle, (kv_pair *)kv, op, async, qid_of(qid), fn));
}

KV_API int kv_nvme_write(uint64_t handle, int qid, kv_pair *kv)
{
	return io("kv_nvme_write", handle, qid, kv, KV_OP_STORE, false);
}

KV_API int kv_nvme_write_async(uint64_t handle, int qid, kv_pair *kv)
{
	return io("kv_nvme_write_async", handle, qid, kv, KV_OP_STORE, true);
}

KV_API int kv_nvme_read(uint64_t handle, int qid, kv_pair *kv)
{
	return io("kv_nvme_read", handle, qid, kv, KV_OP_RETRIEVE, false);
}

KV_API int kv_nvme_read_async(uint64_t handle, int qid, kv_pair *kv)
{
	return io("kv_nvme_read_async", handle, qid, kv, KV_OP_RETRIEVE, true);
}

KV_API int kv_nvme_delete(uint64_t handle, int qid, const kv_pair *kv)
{
	return io("kv_nvme_delete", handle, qid, kv, KV_OP_DELETE, false);
}

KV_API int kv_nvme_delete_async(uint64_t handle, int qid, const kv_pair *kv)
{
	return io("kv_nvme_delete_async", handle, qid, kv, KV_OP_DELETE, true);
}

KV_API int kv_nvme_exist(uint64_t handle, int qid, const kv_pair *kv)
{
	return io("kv_nvme_exist", handle, qid, kv, KV_OP_EXIST, false);
}

KV_API int kv_nvme_exist_async(uint64_t handle, int qid, const kv_pair *kv)
{
	return io("kv_nvme_exist_async", handle, qid, kv, KV_OP_EXIST, true);
}

KV_API int kv_nvme_append(uint64_t handle, int qid, kv_pair *kv)
{
	return traced("kv_nvme_append", handle, qid, kv_append(handle, kv));
}

KV_API int kv_nvme_iterate_read(uint64_t handle, int qid, kv_iterate *it)
{
	const char *fn = "kv_nvme_iterate_read";
	return traced(fn, handle, qid, kv_iterate_read_on(handle, it, false, qid_of(qid), fn));
}

KV_API int kv_nvme_iterate_read_async(uint64_t handle, int qid, kv_iterate *it)
{
	const char *fn = "kv_nvme_iterate_read_async";
	return traced(fn, handle, qid, kv_iterate_read_on(handle, it, true, qid_of(qid), fn));
}

KV_API uint32_t kv_nvme_iterate_open(uint64_t handle, const uint8_t keyspace_id,
				     const uint32_t bitmask, const uint32_t prefix,
				     const uint8_t iterate_type)
{
	uint32_t rc = kv_iterate_open(handle, keyspace_id, bitmask, prefix, iterate_type);
	return (uint32_t)traced("kv_nvme_iterate_open", handle, -1, (int)rc);
}

KV_API int kv_nvme_iterate_close(uint64_t handle, const uint8_t iterator)
{
	return traced("kv_nvme_iterate_close", handle, -1, kv_iterate_close(handle, iterator));
}

KV_API int kv_nvme_iterate_info(uint64_t handle, kv_iterate_handle_info *info, int nr_handle)
{
	return traced("kv_nvme_iterate_info", handle, -1, kv_iterate_info(handle, info, nr_handle));
}

KV_API int kv_nvme_get_log_page(uint64_t handle, uint8_t log_id, void *buffer,
				uint32_t buffer_size)
{
	return traced("kv_nvme_get_log_page", handle, -1,
		      kv_get_log_page(handle, log_id, buffer, buffer_size));
}

KV_API int kv_nvme_format(uint64_t handle, int erase_user_data)
{
	return traced("kv_nvme_format", handle, -1, kv_format_device(handle, erase_user_data));
}

/* A raw I/O command on the calling core's sync queue, through the request path (so the queue's
 * lock and a failing queue are handled as for every command): buf goes out in an SDK buffer
 * and the buffer's contents come back into it at the completion (kv_submit.c). */
static int raw_io(uint64_t handle, const struct nvme_sqe *sqe, void *buf, uint32_t len,
		  uint32_t *dw0, int *status)
{
	const char *fn = "kv_nvme_submit_raw_cmd";
	struct kv_state *s;
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, &s, &d);
	if (rc)
		return rc;
	kv_pair pair;
	memset(&pair, 0, sizeof(pair));
	pair.value.value = buf;
	pair.value.length = len;
	struct kv_queue *q = kv_queue_by_id(d, -1, true, fn, &rc);
	struct kv_req *req = q ? calloc(1, sizeof(*req)) : NULL;
	if (q && !req)
		rc = KV_ERR_HEAP_ALLOC_FAILURE;
	if (req) {
		req->s = s;
		req->dev = d;
		req->op = KV_OP_RAW;
		req->lba = d->lba;
		req->kv = &pair;
		req->cb_arg = &pair;
		req->sqe = *sqe;
		req->status_out = status;
		if (len && !(req->data = kv_dma_get(s, len))) {
			kv_err("%s: no slab memory for a %u-byte buffer", fn, len);
			free(req);
			rc = KV_ERR_SLAB_ALLOC_FAILURE;
		} else {
			req->data_len = len;
			if (len)
				memcpy(req->data, buf, len);
			rc = kv_submit_sync_on(q, req, dw0);
		}
	}
	kv_leave();
	return rc;
}

KV_API kv_nvme_cpl_t *kv_nvme_submit_raw_cmd(uint64_t handle, kv_nvme_cmd_t cmd, void *buf,
					     uint32_t buf_len, raw_cmd_type_t type)
{
	const char *fn = "kv_nvme_submit_raw_cmd";
	if ((type != ADMIN_CMD_TYPE && type != IO_CMD_TYPE) || (buf_len && !buf)) {
		kv_trace_print(KVNVME_LOG_ERR, __FILE__, __LINE__, fn,
			       "Invalid command type %d or buffer %p of %u bytes", (int)type, buf,
			       buf_len);
		return NULL;
	}
	_Static_assert(sizeof(kv_nvme_cmd_t) == sizeof(struct nvme_sqe), "an SQE is 64 bytes");
	struct nvme_sqe sqe;
	memcpy(&sqe, &cmd, sizeof(sqe));
	sqe.prp1 = sqe.prp2 = 0; /* the data pointer is the SDK's to fill */
	kv_nvme_cpl_t *cpl = calloc(1, sizeof(*cpl));
	if (!cpl)
		return NULL;
	int status = 0, rc;
	uint32_t dw0 = 0;
	if (type == ADMIN_CMD_TYPE) {
		struct kv_dev *d;
		rc = kv_enter_dev(fn, handle, NULL, &d);
		if (rc == KV_SUCCESS) {
			/* the driver copies buf through its own DMA buffer, both ways */
			struct nvme_cqe cqe;
			memset(&cqe, 0, sizeof(cqe));
			int st = unvme_admin(d->ctrlr, &sqe, buf, buf_len, &cqe);
			kv_leave();
			if (st < 0) {
				kv_err("%s: admin opcode 0x%02x: %s", fn, sqe.opc, unvme_errmsg());
				rc = kv_result_from_errno(st);
			} else {
				status = st;
				dw0 = cqe.dw0;
			}
		}
	} else {
		rc = raw_io(handle, &sqe, buf, buf_len, &dw0, &status);
		/* a completion that came back is a result, whatever its status */
		if (rc != KV_SUCCESS && status != 0)
			rc = KV_SUCCESS;
	}
	traced(fn, handle, -1, rc ? rc : status);
	if (rc != KV_SUCCESS) {
		free(cpl);
		return NULL;
	}
	cpl->result = dw0;
	cpl->status = (uint32_t)status & 0xffu; /* the status code, as the original gave it */
	return cpl;
}

KV_API int kv_nvme_register_aer_callback(uint64_t handle, kv_aer_cb_fn_t aer_cb_fn,
					 void *aer_cb_arg)
{
	const char *fn = "kv_nvme_register_aer_callback";
	struct kv_dev *d;
	if (kv_enter_dev(fn, handle, NULL, &d))
		return -ENODEV;
	int rc = 0;
	pthread_mutex_lock(&d->admin_lock);
	d->aer_arg = aer_cb_arg;
	atomic_store_explicit(&d->aer_cb, aer_cb_fn, memory_order_release);
	if (aer_cb_fn && !d->aer_enabled) {
		rc = unvme_ctrlr_aer_enable(d->ctrlr);
		if (rc)
			kv_err("%s: device %d: Asynchronous Events cannot be enabled: %s", fn, d->idx,
			       unvme_errmsg());
		else
			d->aer_enabled = true;
	}
	pthread_mutex_unlock(&d->admin_lock);
	kv_leave();
	return traced(fn, handle, -1, rc);
}

KV_API int kv_nvme_is_dd_initialized(void)
{
	return kv_is_sdk_initialized();
}

KV_API int kv_nvme_io_queue_type(uint64_t handle, int core_id)
{
	int rc = kv_io_queue_type(handle, core_id);
	return rc == SYNC_IO_QUEUE || rc == ASYNC_IO_QUEUE ? rc : -EINVAL;
}

KV_API uint16_t kv_nvme_get_io_queue_size(uint64_t handle)
{
	struct kv_dev *d;
	if (kv_enter_dev("kv_nvme_get_io_queue_size", handle, NULL, &d))
		return 0;
	uint16_t v = (uint16_t)d->opt.queue_depth;
	kv_leave();
	return v;
}

KV_API uint16_t kv_nvme_get_current_qd(uint64_t handle, int core_id)
{
	struct kv_dev *d;
	if (kv_enter_dev("kv_nvme_get_current_qd", handle, NULL, &d))
		return 0;
	uint16_t n = 0;
	const struct kv_queue *q = core_id >= 0 && core_id < MAX_CPU_CORES ? d->by_core[core_id]
									 : NULL;
	for (uint32_t i = 0; q && i < q->nslots; i++)
		n += atomic_load_explicit(&q->slots[i].busy, memory_order_relaxed);
	kv_leave();
	return n;
}

KV_API uint32_t kv_nvme_get_sector_size(uint64_t handle)
{
	uint32_t v = kv_get_sector_size(handle);
	return v == UINT32_MAX ? 0 : v;
}

KV_API uint64_t kv_nvme_get_num_sectors(uint64_t handle)
{
	uint64_t v = kv_get_num_sectors(handle);
	return v == KV_ERR_INVALID_VALUE ? 0 : v;
}

KV_API uint64_t kv_nvme_get_total_size(uint64_t handle)
{
	uint64_t v = kv_get_total_size(handle);
	return v == KV_ERR_INVALID_VALUE ? 0 : v;
}

KV_API uint64_t kv_nvme_get_used_size(uint64_t handle)
{
	uint64_t v = kv_get_used_size(handle);
	return v == KV_ERR_INVALID_VALUE ? 0 : v;
}

KV_API uint64_t kv_nvme_get_waf(uint64_t handle)
{
	return kv_get_waf(handle);
}

KV_API void kv_nvme_sdk_info(void)
{
	kv_sdk_info();
}

KV_API void kv_nvme_process_completion(uint64_t handle)
{
	kv_process_completion(handle);
}

KV_API void kv_nvme_process_completion_queue(uint64_t handle, uint32_t queue_id)
{
	kv_process_completion_queue(handle, queue_id);
}
