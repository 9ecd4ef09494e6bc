/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A device pulled out and put back while the SDK runs (the driver's hot-plug events,
 * docs/kv-sdk.md "Hot-plug").
 *
 * The SDK needs little of its own: while the device is out the driver answers -ENODEV, which
 * becomes KV_ERR_DD_NO_DEVICE for new calls (kv_result_from_errno), and commands that were
 * in flight come back with an error that kv_req_on_cpl reports as KV_ERR_DD_NO_DEVICE too.
 * When a device is back, sync queues are created again by their next call and async ones by
 * their completion thread (kv_queue_serve recovers a split queue with its submitters held
 * off), so the same handles and threads carry on; an async submission that meets its queue
 * before the rebuild waits for it. What is done here: the log lines, the read
 * cache emptied (the card back may have lost what a memory namespace held, a replacement has
 * other data), and the geometry read again when it differs. Asynchronous Events go to the
 * callback of kv_nvme_register_aer_callback.
 */
#include "lib/common/clock.h"
#include "kv_internal.h"
#include "kv_cache.h"

static void on_event(struct unvme_ctrlr *c, const struct unvme_event *ev, void *arg)
{
	(void)c;
	struct kv_dev *d = arg;
	if (ev->type == UNVME_EVENT_AER) {
		/* kv_nvme_register_aer_callback: result is the event's completion dword 0 */
		void (*cb)(void *, unsigned int, unsigned int) =
			atomic_load_explicit(&d->aer_cb, memory_order_acquire);
		if (cb)
			cb(d->aer_arg, ev->aer_dw0, 0);
		return;
	}
	if (ev->type == UNVME_EVENT_REMOVED) {
		kv_err("device %d '%s' was removed: its calls return KV_ERR_DD_NO_DEVICE until it "
		       "is back", d->idx, d->devid);
		return;
	}
	if (ev->type != UNVME_EVENT_ARRIVED)
		return;
	if (ev->status) {
		kv_err("device %d '%s': a device is back but could not be attached (errno %d)",
		       d->idx, d->devid, -ev->status);
		return;
	}
	/* async submissions wait a moment for their queue's rebuild (kv_submit.c) */
	atomic_store_explicit(&d->arrived_ms, mono_ms_coarse(), memory_order_release);
	if (d->state->cache)
		kv_cache_clear(d->state->cache);
	kv_dev_refresh_if_changed(d);
	kv_err("device %d '%s' is back (serial %s): its queues are created again at their next "
	       "use", d->idx, d->devid, ev->serial);
}

int kv_dev_watch(struct kv_dev *d)
{
	return unvme_ctrlr_add_event_cb(d->ctrlr, on_event, d);
}

void kv_dev_unwatch(struct kv_dev *d)
{
	unvme_ctrlr_remove_event_cb(d->ctrlr, on_event, d);
}
