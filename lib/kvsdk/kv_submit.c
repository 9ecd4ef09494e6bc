/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Getting a prepared request to the device and back. Sync requests are run by the calling
 * thread on a sync queue (spin lock held while it polls: several threads may share a core's
 * queue). Async requests are submitted by the calling thread too, on its core's async queue,
 * a split queue pair: the caller writes the command, the completion thread that owns the
 * queue rings the doorbell at its next poll (so on the emulated device in inline mode the
 * device's work, which the doorbell write triggers, runs on the completion core), reaps it
 * and calls back. Only while that thread rests (idle, polling rarely) does the caller ring
 * for itself. Two cores share the work instead of one doing nearly all of it, and a command
 * crosses cores once.
 * A device with no queue of the wanted kind still serves the call (docs/kv-sdk.md,
 * "Thread model"):
 *   - sync call, no sync queue: handed to a completion thread like an async one, and waited for;
 *   - async call, no async queue: run on a sync queue, the callback called before returning.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/common/clock.h"
#include "lib/common/compiler.h"
#include "kv_cache.h"
#include "kv_req.h"

static const char *op_name(enum kv_op op)
{
	switch (op) {
	case KV_OP_STORE: return "store";
	case KV_OP_RETRIEVE: return "retrieve";
	case KV_OP_DELETE: return "delete";
	case KV_OP_EXIST: return "exist";
	case KV_OP_ITER_READ: return "iterate read";
	case KV_OP_RAW: return "iterate request or raw command";
	}
	return "?";
}

void kv_req_release(struct kv_req *req)
{
	if (!req->data_is_callers)
		kv_dma_put(req->s, req->data);
	kv_dma_put(req->s, req->keybuf);
	req->data = NULL;
	req->keybuf = NULL;
}

/* What the completion does to the caller's pair and to the cache (kv_cache.h protocol). */
static void apply_result(struct kv_req *req)
{
	kv_pair *kv = req->kv;
	struct kv_cache *cache = req->s->cache;
	bool ok = req->result == KV_SUCCESS;
	switch (req->op) {
	case KV_OP_RETRIEVE: {
		if (!ok)
			break;
		uint32_t actual;
		if (req->lba)
			actual = kv->value.length;
		else
			actual = req->dw0 > kv->value.offset ? req->dw0 - kv->value.offset : 0;
		uint32_t n = kv->value.length < actual ? kv->value.length : actual;
		if (n && !req->data_is_callers)
			memcpy(kv->value.value, req->data, n);
		kv->value.length = n;
		kv->value.actual_value_size = actual;
		if (cache && kv->value.offset == 0 && n == actual)
			kv_cache_fill(cache, req->ticket, kv->keyspace_id, kv->key.key, kv->key.length,
				      req->data, n);
		break;
	}
	case KV_OP_STORE:
		if (!cache)
			break;
		if (ok && kv->value.offset == 0)
			kv_cache_store(cache, req->ticket, kv->keyspace_id, kv->key.key, kv->key.length,
				       req->data, kv->value.length);
		else
			kv_cache_invalidate(cache, kv->keyspace_id, kv->key.key, kv->key.length);
		break;
	case KV_OP_DELETE:
		if (cache)
			kv_cache_invalidate(cache, kv->keyspace_id, kv->key.key, kv->key.length);
		break;
	case KV_OP_ITER_READ: {
		uint8_t type = atomic_load(&req->dev->iter_type[req->iterator]);
		if (cache && type != KV_KEY_ITERATE && type != KV_KEY_ITERATE_WITH_RETRIEVE)
			kv_cache_clear(cache);
		if (type == KV_KEY_ITERATE_WITH_RETRIEVE) {
			/* one pair: the key at byte 0, the value from byte 512; DW0 = key length
			 * << 24 | value bytes (the original's decoding for such iterators) */
			uint32_t klen = req->dw0 >> 24, vlen = req->dw0 & 0xffffffu;
			uint32_t n = klen ? NVME_KVV_ITER_VALUE_OFFSET + vlen : 0;
			if ((!ok && req->result != KV_ERR_ITERATE_READ_EOF) ||
			    n > KV_ITERATE_READ_BUFFER_SIZE || klen > KV_MAX_KEY_LEN)
				n = vlen = klen = 0;
			memcpy(kv->value.value, req->data, n);
			kv->key.length = (uint16_t)klen;
			kv->value.length = vlen;
			kv->value.actual_value_size = vlen;
			break;
		}
		/* key-only iterate: the keys are in the buffer, none in kv.key (the original's
		 * samples count keys from the buffer when key.length is 0) */
		kv->key.length = 0;
		if (!ok && req->result != KV_ERR_ITERATE_READ_EOF) {
			kv->value.length = 0;
			break;
		}
		/* DW0 is the number of bytes filled, for sync and async reads alike. */
		uint32_t n = req->dw0 < KV_ITERATE_READ_BUFFER_SIZE ? req->dw0
								    : KV_ITERATE_READ_BUFFER_SIZE;
		uint32_t count = 0;
		if (n >= KV_ITERATE_READ_BUFFER_OFFSET)
			memcpy(&count, req->data, sizeof(count));
		/* the end with no keys left (every read after the end, too) is an empty chunk,
		 * not a 4-byte count of zero */
		if (req->result == KV_ERR_ITERATE_READ_EOF && count == 0)
			n = 0;
		memcpy(kv->value.value, req->data, n);
		kv->value.length = n;
		kv->value.actual_value_size = n;
		req->dw0 = n; /* what the callback receives as result */
		break;
	}
	case KV_OP_RAW:
		/* kv_nvme_submit_raw_cmd: the buffer as the device left it (the data direction
		 * of a raw command is its own business); iterate requests carry no data */
		if (req->data && kv->value.value)
			memcpy(kv->value.value, req->data, req->data_len);
		break;
	default:
		break;
	}
}

static void finish(struct kv_req *req)
{
	apply_result(req);
	if (req->result != KV_SUCCESS && kv_log_level() >= 1 &&
	    !(req->op == KV_OP_EXIST && req->result == KV_ERR_NOT_EXIST_KEY) &&
	    !(req->op == KV_OP_ITER_READ && req->result == KV_ERR_ITERATE_READ_EOF))
		kv_err("%s on device %d failed: kv_result 0x%x%s%s", op_name(req->op), req->dev->idx,
		       req->result, req->status ? ", NVMe status " : "",
		       req->status ? unvme_status_str(req->status, req->lba ? NVME_CSI_NVM : NVME_CSI_KV)
				   : "");
	else
		kv_log(3, "%s on device %d: kv_result 0x%x", op_name(req->op), req->dev->idx,
		       req->result);
	kv_req_release(req);
	if (!req->async) {
		/* release: the waiter reads result, status and dw0 after it sees done */
		atomic_store_explicit(&req->done, true, memory_order_release);
		return;
	}
	struct kv_req_slot *slot = req->slot;
	kv_async_cb_fn cb = (kv_async_cb_fn)req->kv->param.async_cb;
	int result = req->result, status = req->status;
	uint32_t dw0 = req->dw0;
	void *arg = req->cb_arg;
	if (!slot)
		free(req);
	if (cb)
		kv_call_back(cb, arg, dw0, result, status);
	/* after the callback: kv_sdk_finalize waits for every slot to be free */
	if (slot)
		atomic_store_explicit(&slot->busy, false, memory_order_release);
}

void kv_req_on_cpl(void *arg, const struct nvme_cqe *cpl)
{
	struct kv_req *req = arg;
	if (!req->kv) {
		/* an abandoned sync request (its queue failed while the caller waited) */
		kv_req_release(req);
		free(req);
		return;
	}
	req->dw0 = cpl->dw0;
	req->status = NVME_STATUS_FROM_CQE(cpl->status);
	req->result = kv_result_from_status(req->status, !req->lba);
	/* given back because the device was pulled out: the original's no-device error */
	if (unlikely(req->status != 0) && unvme_ctrlr_is_removed(req->dev->ctrlr))
		req->result = KV_ERR_DD_NO_DEVICE;
	finish(req);
}

void kv_req_fail(struct kv_req *req, int result)
{
	req->result = result;
	req->status = 0;
	req->dw0 = 0;
	finish(req);
}

static _Thread_local int cb_nvme_status = -1;

void kv_call_back(kv_async_cb_fn cb, void *arg, uint32_t result, int kvr, int nvme_status)
{
	int outer = cb_nvme_status; /* a callback may run another one inline */
	cb_nvme_status = nvme_status;
	cb(arg, result, (unsigned)kvr);
	cb_nvme_status = outer;
}

KV_API int kv_async_nvme_status(void)
{
	return cb_nvme_status;
}


/* Runs req on sync queue q. Returns false when the queue failed while the command was
 * outstanding: the driver then keeps the request (freed at its completion, if one comes) and
 * *result says why. */
static bool run_on_sync_queue(struct kv_queue *q, struct kv_req *req, int *result)
{
	req->q = q;
	kv_queue_lock(q);
	int rc;
	while ((rc = unvme_qpair_submit(q->qp, &req->sqe, req->data, req->data_len, kv_req_on_cpl,
					req)) == -EAGAIN) {
		/* only commands left behind by a timeout can fill a sync queue: reap them */
		if (unvme_qpair_poll(q->qp, 0) < 0)
			break;
	}
	if (rc) {
		kv_queue_unlock(q);
		kv_err("%s: submission on queue %u failed: %s", op_name(req->op),
		       unvme_qpair_id(q->qp), unvme_errmsg());
		kv_req_fail(req, kv_result_from_errno(rc));
		*result = req->result;
		return true;
	}
	while (!atomic_load_explicit(&req->done, memory_order_acquire)) {
		int p = unvme_qpair_poll(q->qp, 0);
		/* a poll that fails may first have given this very command back (a removed
		 * device): then it is done, not abandoned */
		if (p < 0 && !atomic_load_explicit(&req->done, memory_order_acquire)) {
			*result = kv_result_from_errno(p);
			kv_err("%s: queue %u failed while waiting: %s", op_name(req->op),
			       unvme_qpair_id(q->qp), unvme_errmsg());
			req->kv = NULL; /* marks it abandoned, under the queue's lock */
			kv_queue_unlock(q);
			return false;
		}
	}
	kv_queue_unlock(q);
	*result = req->result;
	return true;
}

int kv_queue_slots_init(struct kv_queue *q, uint32_t n)
{
	q->slots = aligned_alloc(_Alignof(struct kv_req_slot), n * sizeof(*q->slots));
	if (!q->slots)
		return -1;
	memset(q->slots, 0, n * sizeof(*q->slots));
	q->nslots = n;
	for (uint32_t i = 0; i < n; i++)
		atomic_init(&q->slots[i].busy, false);
	return 0;
}

void kv_queue_slots_fini(struct kv_queue *q)
{
	free(q->slots);
	q->slots = NULL;
	q->nslots = 0;
}

bool kv_queue_idle(const struct kv_queue *q)
{
	for (uint32_t i = 0; i < q->nslots; i++)
		if (atomic_load_explicit(&q->slots[i].busy, memory_order_acquire))
			return false;
	return true;
}

/* A free slot of async queue q, marked busy, or NULL when all are; under q->lock. Slots come
 * back roughly in the order they were taken, so the walk from the last one taken is short. */
static struct kv_req_slot *take_slot(struct kv_queue *q)
{
	for (uint32_t i = 0; i < q->nslots; i++) {
		struct kv_req_slot *slot = &q->slots[q->next_slot];
		if (++q->next_slot == q->nslots)
			q->next_slot = 0;
		if (!atomic_load_explicit(&slot->busy, memory_order_acquire)) {
			atomic_store_explicit(&slot->busy, true, memory_order_relaxed);
			return slot;
		}
	}
	return NULL;
}

/*
 * Moves req into a slot of async queue q and submits it; the owning completion thread rings
 * (or the caller, while that thread rests) and completes it. While every slot is busy, waits per submit_retry_interval. On success req is
 * an empty shell for the caller to free and *out (may be NULL) is the request in its slot,
 * which an async completion may already have given back; on failure nothing was queued and
 * the caller still owns req and its buffers.
 */
/* A device plugged back in (kv_hotplug.c): its split queues answer -EIO until their poller
 * rebuilds them, which the completion thread does at its next poll (an ownerless queue: the
 * poll here). For REBUILD_WAIT_MS after the device's return a submission waits for that
 * rather than failing a command the queue will take a moment later. (After a controller
 * reset a submission still fails at once, as it always did.) */
#define REBUILD_WAIT_MS 2000u
static bool queue_being_rebuilt(struct kv_queue *q, int rc)
{
	uint64_t back = atomic_load_explicit(&q->dev->arrived_ms, memory_order_acquire);
	if (rc != -EIO || !back || unvme_ctrlr_is_failed(q->dev->ctrlr) ||
	    mono_ms_coarse() - back > REBUILD_WAIT_MS)
		return false;
	if (!kv_queue_try_poll(q))
		sched_yield();
	return true;
}

static int submit_on_async_queue(struct kv_queue *q, struct kv_req *req, struct kv_req **out)
{
	int interval = req->s->cfg.sdk.submit_retry_interval;
	bool polled_once = false;
	for (;;) {
		kv_queue_lock(q);
		struct kv_req_slot *slot = take_slot(q);
		if (slot) {
			struct kv_req *r = &slot->req;
			memcpy(r, req, sizeof(*r));
			r->q = q;
			r->slot = slot;
			if (out)
				*out = r;
			int rc;
			/* A free slot means a free tracker (trackers are given back before the
			 * callbacks that free slots): -EAGAIN can only be a passing moment. */
			while ((rc = unvme_qpair_submit(q->qp, &r->sqe, r->data, r->data_len,
							kv_req_on_cpl, r)) == -EAGAIN)
				cpu_relax();
			if (rc == 0) {
				/* The completion thread rings the doorbell at its next poll, taking
				 * the device's start off this core; one that rests polls rarely, so
				 * the command is rung here. The fence pairs with its announcement
				 * (cq_main): it sees this command in flight, or this sees it resting. */
				atomic_thread_fence(memory_order_seq_cst);
				if (!q->owner ||
				    atomic_load_explicit(&q->owner->resting, memory_order_relaxed))
					unvme_qpair_ring(q->qp);
			} else
				atomic_store_explicit(&slot->busy, false, memory_order_release);
			kv_queue_unlock(q);
			if (rc && queue_being_rebuilt(q, rc))
				continue;
			if (rc) {
				kv_err("%s: submission on async queue %u of device %d failed: %s",
				       op_name(req->op), unvme_qpair_id(q->qp), q->dev->idx,
				       unvme_errmsg());
				return kv_result_from_errno(rc);
			}
			return KV_SUCCESS;
		}
		kv_queue_unlock(q);
		/* A queue without a completion thread is drained by whoever waits on it (with
		 * no retries asked for, once). */
		if (kv_queue_try_poll(q) && (interval >= 0 || !polled_once)) {
			polled_once = true;
			continue;
		}
		/* A completion thread must not wait for itself to drain the queue. */
		if (interval < 0 || kv_in_cq_thread()) {
			kv_err("async queue of core %d on device %d is full (%u commands)", q->core,
			       q->dev->idx, q->nslots);
			return KV_ERR_DD_NO_AVAILABLE_QUEUE;
		}
		if (interval == 0)
			sched_yield();
		else
			usleep((useconds_t)interval);
	}
}

static void discard(struct kv_req *req)
{
	kv_req_release(req);
	free(req);
}

int kv_submit_sync(struct kv_req *req, uint32_t *dw0)
{
	return kv_submit_sync_on(NULL, req, dw0);
}

int kv_submit_sync_on(struct kv_queue *q, struct kv_req *req, uint32_t *dw0)
{
	if (!q)
		q = kv_pick_queue(req->dev, true);
	int result;
	req->async = false;
	atomic_init(&req->done, false);
	if (q->sync) {
		if (!run_on_sync_queue(q, req, &result))
			return result;
	} else if (kv_in_cq_thread()) {
		kv_err("%s: a synchronous call from an async callback needs a sync queue, and "
		       "device %d has none", op_name(req->op), req->dev->idx);
		discard(req);
		return KV_ERR_DD_INVALID_QUEUE_TYPE;
	} else {
		/* The async path with a waiter: the completion thread sets done instead of
		 * calling back; the slot is given back here. */
		struct kv_req *in_slot;
		int rc = submit_on_async_queue(q, req, &in_slot);
		if (rc) {
			discard(req);
			return rc;
		}
		free(req);
		unsigned spins = 0;
		while (!atomic_load_explicit(&in_slot->done, memory_order_acquire)) {
			if (kv_queue_try_poll(q))
				continue; /* no completion thread: this caller reaps */
			if (++spins > 256)
				sched_yield();
		}
		result = in_slot->result;
		if (dw0)
			*dw0 = in_slot->dw0;
		if (in_slot->status_out)
			*in_slot->status_out = in_slot->status;
		atomic_store_explicit(&in_slot->slot->busy, false, memory_order_release);
		return result;
	}
	if (dw0)
		*dw0 = req->dw0;
	if (req->status_out)
		*req->status_out = req->status;
	free(req);
	return result;
}

int kv_submit_async(struct kv_req *req)
{
	return kv_submit_async_on(NULL, req);
}

int kv_submit_async_on(struct kv_queue *q, struct kv_req *req)
{
	if (!q)
		q = kv_pick_queue(req->dev, false);
	atomic_init(&req->done, false);
	if (!q->sync) {
		req->async = true;
		int rc = submit_on_async_queue(q, req, NULL);
		if (rc)
			kv_req_release(req);
		return rc;
	}
	/* No async queue on this device: run it now and call back before returning, from the heap
	 * (a queue that fails under the waiting caller keeps the request). */
	struct kv_req *heap = malloc(sizeof(*heap));
	if (!heap) {
		kv_req_release(req);
		return KV_ERR_HEAP_ALLOC_FAILURE;
	}
	memcpy(heap, req, sizeof(*heap));
	req = heap;
	req->async = false;
	int result;
	if (!run_on_sync_queue(q, req, &result))
		return result;
	kv_async_cb_fn cb = (kv_async_cb_fn)req->kv->param.async_cb;
	int status = req->status;
	uint32_t dw0 = req->dw0;
	void *arg = req->cb_arg;
	free(req);
	if (cb)
		kv_call_back(cb, arg, dw0, result, status);
	return KV_SUCCESS;
}
