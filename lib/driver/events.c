/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Events of a controller for the application: its listeners (hot-plug removal and arrival,
 * Asynchronous Events) and the Asynchronous Event Request the driver keeps outstanding. And
 * its lifecycle for the layers that wrap it (attached, queues lost to a reset, removed,
 * re-attached, closing: enum ctrlr_life): multi-process serves others from these events
 * instead of the core calling it by name.
 *
 * An AER completes only when the device has something to say, so it cannot go through the
 * synchronous admin path (which waits for its command under the admin lock). It is
 * submitted on the admin queue with a callback and left there; whoever polls the admin
 * queue next (any admin command's wait, or unvme_ctrlr_process_events) reaps it. The
 * callback runs under the admin lock, where no listener may be called (a listener that reads
 * the event's log page needs that lock): it only records DW0, and process_events delivers
 * the recorded events once the lock is released, then sends the request again.
 */
#include <errno.h>
#include <string.h>

#include "ctrlr.h"
#include "errmsg.h"

#define NR_LISTENERS (sizeof(((struct unvme_ctrlr *)0)->listeners) / sizeof(struct ctrlr_listener))
#define NR_PENDING (sizeof(((struct unvme_ctrlr *)0)->aer_pending) / sizeof(uint32_t))
#define NR_LIFE (sizeof(((struct unvme_ctrlr *)0)->life) / sizeof(struct ctrlr_life_listener))

void ctrlr_events_init(struct unvme_ctrlr *c)
{
	pthread_mutex_init(&c->event_lock, NULL);
}

void ctrlr_events_fini(struct unvme_ctrlr *c)
{
	pthread_mutex_destroy(&c->event_lock);
}

UNVME_API int unvme_ctrlr_add_event_cb(struct unvme_ctrlr *c, unvme_event_cb cb, void *arg)
{
	if (!c || !cb)
		return unvme_fail(-EINVAL, "unvme_ctrlr_add_event_cb: controller and callback are required");
	pthread_mutex_lock(&c->event_lock);
	int rc = -ENOSPC;
	for (size_t i = 0; i < NR_LISTENERS; i++) {
		if (c->listeners[i].cb == cb && c->listeners[i].arg == arg) {
			rc = -EEXIST;
			break;
		}
	}
	for (size_t i = 0; rc == -ENOSPC && i < NR_LISTENERS; i++) {
		if (!c->listeners[i].cb) {
			c->listeners[i] = (struct ctrlr_listener){ cb, arg };
			rc = 0;
		}
	}
	pthread_mutex_unlock(&c->event_lock);
	if (rc == -ENOSPC)
		return unvme_fail(rc, "%s: already %zu event listeners", c->devid, NR_LISTENERS);
	if (rc == -EEXIST)
		return unvme_fail(rc, "%s: this event listener is already registered", c->devid);
	return 0;
}

UNVME_API void unvme_ctrlr_remove_event_cb(struct unvme_ctrlr *c, unvme_event_cb cb, void *arg)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->event_lock);
	for (size_t i = 0; i < NR_LISTENERS; i++)
		if (c->listeners[i].cb == cb && c->listeners[i].arg == arg)
			c->listeners[i] = (struct ctrlr_listener){ NULL, NULL };
	pthread_mutex_unlock(&c->event_lock);
}

void ctrlr_emit(struct unvme_ctrlr *c, enum unvme_event_type type, int status, uint32_t dw0,
		const char *sn)
{
	struct unvme_event ev = { .type = type, .status = status, .aer_dw0 = dw0 };
	/* SN is space padded, not terminated */
	memcpy(ev.serial, sn ? sn : c->id.sn, sizeof(c->id.sn));
	size_t n = sizeof(c->id.sn);
	while (n && (ev.serial[n - 1] == ' ' || ev.serial[n - 1] == '\0'))
		n--;
	ev.serial[n] = '\0';
	/* held while the listeners run: one that is being removed is not called afterwards */
	pthread_mutex_lock(&c->event_lock);
	for (size_t i = 0; i < NR_LISTENERS; i++)
		if (c->listeners[i].cb)
			c->listeners[i].cb(c, &ev, c->listeners[i].arg);
	pthread_mutex_unlock(&c->event_lock);
}

int ctrlr_life_listen(struct unvme_ctrlr *c, ctrlr_life_cb cb, void *arg)
{
	/* (no lock: only an attach adds one, before any other thread knows the controller) */
	for (size_t i = 0; i < NR_LIFE; i++) {
		if (!c->life[i].cb) {
			c->life[i] = (struct ctrlr_life_listener){ cb, arg };
			return 0;
		}
	}
	return unvme_fail(-ENOSPC, "%s: already %zu lifecycle listeners", c->devid, NR_LIFE);
}

int ctrlr_life(struct unvme_ctrlr *c, enum ctrlr_life ev, int status)
{
	for (size_t i = 0; i < NR_LIFE && c->life[i].cb; i++) {
		int rc = c->life[i].cb(c, ev, status, c->life[i].arg);
		if (rc && ev == CTRLR_LIFE_ATTACHED)
			return rc;
	}
	return 0;
}

UNVME_API int unvme_ctrlr_is_removed(const struct unvme_ctrlr *c)
{
	return c && atomic_load(&c->removed) ? 1 : 0;
}

/* Runs on whichever thread polls the admin queue, under the admin lock. */
static void aer_done(void *arg, const struct nvme_cqe *cpl)
{
	struct unvme_ctrlr *c = arg;
	c->aer_outstanding = false;
	/* an error (aborted by a reset, the device's AER limit) just ends this request */
	if (NVME_STATUS_FROM_CQE(cpl->status) == 0 && c->nr_aer_pending < NR_PENDING) {
		/* the device may be replaced before the event is delivered: keep whose it is */
		memcpy(c->aer_pending_sn[c->nr_aer_pending], c->id.sn, sizeof(c->id.sn));
		c->aer_pending[c->nr_aer_pending++] = cpl->dw0;
	}
}

void ctrlr_aer_rearm_locked(struct unvme_ctrlr *c)
{
	if (!c->aer_enabled || c->aer_outstanding || c->failed || atomic_load(&c->removed) ||
	    !c->admin)
		return; /* (a client's events come from the process that runs the controller) */
	struct nvme_sqe cmd = { .opc = NVME_ADM_ASYNC_EVENT };
	if (unvme_qpair_submit(c->admin, &cmd, NULL, 0, aer_done, c) == 0) {
		c->aer_outstanding = true;
		unvme_qpair_ring(c->admin);
	}
}

UNVME_API int unvme_ctrlr_aer_enable(struct unvme_ctrlr *c)
{
	if (!c)
		return unvme_fail(-EINVAL, "unvme_ctrlr_aer_enable: no controller");
	if (c->ops->events_subscribe) {
		/* a client: the process that runs the controller keeps the request outstanding
		 * and tells its subscribers (lib/driver/mp/mp_client.c queues them in aer_pending) */
		if (atomic_load(&c->removed))
			return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
		/* enabled before the request: the events that waited for a subscriber come
		 * before its reply, and the notice reader may act on them first */
		ctrlr_admin_lock(c);
		bool was = c->aer_enabled;
		c->aer_enabled = true;
		ctrlr_admin_unlock(c);
		int rc = c->ops->events_subscribe(c);
		if (rc != 0) {
			ctrlr_admin_lock(c);
			c->aer_enabled = was;
			ctrlr_admin_unlock(c);
		}
		return rc;
	}
	if (ctrlr_run_elsewhere(c))
		return unvme_fail(-EOPNOTSUPP, "%s: the %s transport gives no admin queue of its own "
				  "to keep an Asynchronous Event Request on", c->devid, c->transport->name);
	if (atomic_load(&c->removed))
		return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
	ctrlr_admin_lock(c);
	c->aer_enabled = true;
	ctrlr_aer_rearm_locked(c);
	bool sent = c->aer_outstanding;
	ctrlr_admin_unlock(c);
	if (!sent)
		return unvme_fail(-EIO, "%s: the Asynchronous Event Request could not be submitted",
				  c->devid);
	return 0;
}

UNVME_API int unvme_ctrlr_process_events(struct unvme_ctrlr *c)
{
	if (!c)
		return unvme_fail(-EINVAL, "unvme_ctrlr_process_events: no controller");
	if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE)
		return 0;
	if (c->ops->events_poll)
		c->ops->events_poll(c); /* a client: the events its server sent */
	uint32_t got[NR_PENDING];
	char sn[NR_PENDING][20];
	uint32_t n = 0;
	ctrlr_admin_lock(c);
	/* events the device reported before it was pulled out are still delivered */
	bool removed = atomic_load(&c->removed);
	if (!removed && !atomic_load(&c->resetting) && c->admin)
		(void)unvme_qpair_poll(c->admin, 0);
	n = c->nr_aer_pending;
	memcpy(got, c->aer_pending, n * sizeof(got[0]));
	memcpy(sn, c->aer_pending_sn, n * sizeof(sn[0]));
	c->nr_aer_pending = 0;
	ctrlr_aer_rearm_locked(c);
	ctrlr_admin_unlock(c);
	for (uint32_t i = 0; i < n; i++)
		ctrlr_emit(c, UNVME_EVENT_AER, 0, got[i], sn[i]);
	if (removed && n == 0)
		return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
	return (int)n;
}
