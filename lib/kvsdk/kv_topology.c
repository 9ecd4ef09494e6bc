/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which devices, cores and queues exist, moving the calling thread between sync and async
 * cores, and waiting for async completions.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "kv_internal.h"

KV_API int kv_get_device_handles(int *nr_device, uint64_t *arr_handle)
{
	const char *fn = "kv_get_device_handles";
	struct kv_state *s = kv_enter(fn);
	if (!s)
		return KV_ERR_SDK_CLOSE;
	int rc = KV_SUCCESS;
	if (!nr_device || !arr_handle) {
		kv_err("%s: nr_device %p / arr_handle %p is NULL", fn, (void *)nr_device,
		       (void *)arr_handle);
		rc = KV_ERR_SDK_INVALID_PARAM;
	} else {
		/* every device, whatever its core_mask (the original listed only those with core 0) */
		for (int i = 0; i < s->ndevs; i++)
			arr_handle[i] = s->devs[i].handle;
		*nr_device = s->ndevs;
	}
	kv_leave();
	return rc;
}

KV_API int kv_get_devices_on_cpu(int core_id, int *nr_device, uint64_t *arr_handle)
{
	const char *fn = "kv_get_devices_on_cpu";
	struct kv_state *s = kv_enter(fn);
	if (!s)
		return KV_ERR_SDK_CLOSE;
	int rc = KV_SUCCESS;
	if (!nr_device || !arr_handle) {
		kv_err("%s: nr_device %p / arr_handle %p is NULL", fn, (void *)nr_device,
		       (void *)arr_handle);
		rc = KV_ERR_SDK_INVALID_PARAM;
	} else if (core_id < 0 || core_id >= MAX_CPU_CORES) {
		kv_err("%s: core %d is not 0..%d", fn, core_id, MAX_CPU_CORES - 1);
		rc = KV_ERR_SDK_INVALID_PARAM;
	} else {
		int n = 0;
		for (int i = 0; i < s->ndevs; i++)
			if (s->devs[i].opt.core_mask >> core_id & 1)
				arr_handle[n++] = s->devs[i].handle;
		*nr_device = n;
	}
	kv_leave();
	return rc;
}

KV_API int kv_get_cpus_on_device(uint64_t handle, int *nr_core, int *arr_core)
{
	const char *fn = "kv_get_cpus_on_device";
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, NULL, &d);
	if (rc)
		return rc;
	if (!nr_core || !arr_core) {
		kv_err("%s: nr_core %p / arr_core %p is NULL", fn, (void *)nr_core, (void *)arr_core);
		rc = KV_ERR_SDK_INVALID_PARAM;
	} else {
		for (int i = 0; i < d->nqueues; i++)
			arr_core[i] = d->queues[i].core;
		*nr_core = d->nqueues;
	}
	kv_leave();
	return rc;
}

/* 1 (sync) or 2 (async) for a core of the device's core_mask; KV_ERR_DD_INVALID_QUEUE_TYPE
 * for any other core. */
KV_API int kv_io_queue_type(uint64_t handle, int core_id)
{
	const char *fn = "kv_io_queue_type";
	struct kv_dev *d;
	int rc = kv_enter_dev(fn, handle, NULL, &d);
	if (rc)
		return rc;
	if (core_id < 0 || core_id >= MAX_CPU_CORES || !d->by_core[core_id]) {
		kv_err("%s: core %d is not in core_mask 0x%llx of device %d", fn, core_id,
		       (unsigned long long)d->opt.core_mask, d->idx);
		rc = KV_ERR_DD_INVALID_QUEUE_TYPE;
	} else {
		rc = d->by_core[core_id]->sync ? 1 : 2;
	}
	kv_leave();
	return rc;
}

KV_API int kv_get_dev_idx_on_handle(uint64_t handle)
{
	struct kv_dev *d;
	int rc = kv_enter_dev("kv_get_dev_idx_on_handle", handle, NULL, &d);
	if (rc)
		return rc;
	rc = d->idx;
	kv_leave();
	return rc;
}

/* Moves the calling thread to the first core of the wanted kind of device did; false when the
 * SDK is down, did is not a device, it has no such core, or the move is refused. */
static bool switch_to(int did, bool sync, const char *fn)
{
	struct kv_state *s = kv_enter(fn);
	if (!s)
		return false;
	bool ok = false;
	if (did < 0 || did >= s->ndevs) {
		kv_err("%s: device index %d is not 0..%d", fn, did, s->ndevs - 1);
	} else if (kv_in_cq_thread()) {
		kv_err("%s: a completion thread stays on its core", fn);
	} else {
		const struct kv_dev *d = &s->devs[did];
		int n = sync ? d->nsync : d->nasync;
		if (!n) {
			kv_err("%s: device %d has no %s core", fn, did, sync ? "sync" : "async");
		} else {
			int core = sync ? d->sync_cores[0] : d->async_cores[0];
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(core, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				kv_err("%s: cannot move to core %d: %s", fn, core, strerror(errno));
			else
				ok = true;
		}
	}
	kv_leave();
	return ok;
}

KV_API bool context_switch_async_to_sync(int did)
{
	return switch_to(did, true, "context_switch_async_to_sync");
}

KV_API bool context_switch_sync_to_async(int did)
{
	return switch_to(did, false, "context_switch_sync_to_async");
}

/* A queue with a completion thread is reaped by it, so "processing" the queue means waiting
 * until every async command accepted on it has been called back. A queue without one (LBA
 * mode with cq_thread_mask 0, as the original's mkfs and fuse ran) is reaped here, by the
 * caller, until nothing accepted on it is left. Inside a callback this returns at once:
 * waiting there would wait for itself. */
static void drain(struct kv_queue *q)
{
	unsigned spins = 0;
	while (!kv_queue_idle(q)) {
		if (kv_queue_try_poll(q))
			continue;
		if (++spins > 64)
			sched_yield();
	}
}

KV_API void kv_process_completion(uint64_t handle)
{
	struct kv_dev *d;
	if (kv_enter_dev("kv_process_completion", handle, NULL, &d))
		return;
	/* Asynchronous Events for kv_nvme_register_aer_callback, delivered on this thread */
	if (atomic_load_explicit(&d->aer_cb, memory_order_acquire))
		unvme_ctrlr_process_events(d->ctrlr);
	if (!kv_in_cq_thread()) {
		for (int i = 0; i < d->nqueues; i++)
			if (!d->queues[i].sync)
				drain(&d->queues[i]);
	}
	kv_leave();
}

/* queue_id: a core of the device's core_mask, whose queue is processed, as in the original;
 * MAX_CPU_CORES or more: the calling thread's core. */
KV_API void kv_process_completion_queue(uint64_t handle, uint32_t queue_id)
{
	const char *fn = "kv_process_completion_queue";
	struct kv_dev *d;
	if (kv_enter_dev(fn, handle, NULL, &d))
		return;
	if (queue_id >= MAX_CPU_CORES) {
		int cpu = sched_getcpu();
		queue_id = cpu < 0 ? 0 : (uint32_t)cpu;
	}
	struct kv_queue *q = queue_id < MAX_CPU_CORES ? d->by_core[queue_id] : NULL;
	if (!q)
		kv_err("%s: core %u has no queue on device %d (core_mask 0x%llx)", fn, queue_id, d->idx,
		       (unsigned long long)d->opt.core_mask);
	else if (!kv_in_cq_thread() && !q->sync)
		drain(q);
	kv_leave();
}
