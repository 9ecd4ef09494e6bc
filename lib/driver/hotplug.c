/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot-plug: a device pulled out of its slot while the process uses it, and a device that
 * appears again at the same address.
 *
 * Removal is a controller that is gone for good, as recovery.c already knows it (CSTS reads
 * all ones): every queue pair is failed and gone, the controller failed and quiesced, so each
 * owner's next poll gives its outstanding commands back with ABORTED_SQ_DELETION (a split
 * queue's poller does so at every poll). What removal adds is the "removed" mark, which turns
 * the answers into -ENODEV with a message that says so, and the listeners' event. The slot
 * tells us once the card can no longer touch host memory, so nothing has to be disabled.
 *
 * Arrival re-attaches the handle by address, whatever card is there now (the same device or
 * a replacement with another serial number): the admin queue is given back and the card
 * initialised (disable, admin queue, enable), then Identify, Number of Queues and the
 * namespace scan run again (ns.c keeps the struct of a namespace that is still there). Every
 * queue pair stays failed: its owner creates it again on the card at its next submit or
 * poll (recovery.c's REBUILD), exactly as after a controller reset, so no thread's queue is touched
 * here. The doorbell stride and the page size are part of every queue pair's layout: a card
 * that differs in them is refused (the controller stays failed).
 */
#include <errno.h>
#include <stdio.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"

static void say(const struct unvme_ctrlr *c, const char *what)
{
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: %s\n", c->devid, what);
}

void ctrlr_hotplug_removing(struct unvme_ctrlr *c)
{
	/* first: a thread that finds the controller failed (registers all ones) while the card
	 * goes answers -ENODEV, not "failed, reset it" */
	atomic_store(&c->removed, true);
}

void ctrlr_hotplug_removed(struct unvme_ctrlr *c)
{
	ctrlr_lock_qps(c);
	/* the order matters to a poller that looks at the same time: it must find the
	 * controller quiesced once it finds it failed, or it would try to rebuild its queue */
	atomic_store(&c->removed, true);
	atomic_store(&c->quiesced, true);
	atomic_store(&c->gave_up, true);
	atomic_store(&c->failed, 1);
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		atomic_store(&qp->gone, true);
		atomic_store(&qp->failed, 1);
	}
	ctrlr_unlock_qps(c);
	ctrlr_life(c, CTRLR_LIFE_REMOVED, 0);
	say(c, "the device was removed: its commands complete with ABORTED_SQ_DELETION, new ones "
	    "fail with -ENODEV until it is back");
	ctrlr_emit(c, UNVME_EVENT_REMOVED, 0, 0, NULL);
}

/* The card in the slot now, from power-on to CSTS.RDY; qp_lock held. */
static int bring_up(struct unvme_ctrlr *c)
{
	uint64_t cap = reg_read64(c, NVME_REG_CAP);
	if (cap == UINT64_MAX)
		return unvme_fail(-ENODEV, "%s: the device does not answer (CAP reads all ones)",
				  c->devid);
	if (NVME_CAP_DSTRD(cap) != c->dstrd || (4096u << NVME_CAP_MPSMIN(cap)) != c->page_size)
		return unvme_fail(-EINVAL, "%s: the new device has another doorbell stride or page "
				  "size than the one it replaces; close and open it again", c->devid);
	c->cap = cap;
	c->vs = reg_read32(c, NVME_REG_VS);
	ctrlr_admin_lock(c);
	/* the old card took the admin commands in flight with it (their waiters saw -ENODEV) */
	qpair_fail_outstanding(c->admin, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	/* (events it reported before it went stay pending: they happened) */
	c->aer_outstanding = false;
	int rc = ctrlr_disable(c);
	if (rc == 0)
		rc = ctrlr_enable(c);
	ctrlr_admin_unlock(c);
	return rc;
}

int ctrlr_hotplug_arrived(struct unvme_ctrlr *c)
{
	ctrlr_lock_qps(c);
	/* submitters and pollers wait (-EAGAIN) until the queues can be created again; an
	 * automatic reset under way ends where it is (the card it was for is gone) */
	atomic_store(&c->resetting, true);
	recovery_abandon(c);
	/* a client's card is brought up by the process that runs it (its transport refreshed
	 * CAP and VS); this one only reads it again */
	int rc = ctrlr_run_elsewhere(c) ? 0 : bring_up(c);
	/* a card is in the slot, working or not: no longer "removed" */
	atomic_store(&c->removed, false);
	if (rc == 0) {
		c->failed = 0; /* admin commands may run (ctrlr_configure's own) */
		rc = ctrlr_configure(c);
	}
	atomic_fetch_add(&c->generation, 1);
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		atomic_store(&qp->gone, true);
		atomic_store(&qp->failed, 1); /* its owner creates it again */
	}
	char msg[640];
	if (rc == 0) {
		c->gave_up = false;
		c->quiesced = false;
		c->auto_resets = 0;
		int sn_len = (int)sizeof(c->id.sn);
		while (sn_len > 0 && (c->id.sn[sn_len - 1] == ' ' || c->id.sn[sn_len - 1] == '\0'))
			sn_len--;
		snprintf(msg, sizeof(msg), "a device is back at its address and attached (serial "
			 "%.*s); queue pairs are created again at their next use", sn_len, c->id.sn);
	} else {
		/* present but unusable: failed for good, as a reset that failed leaves it */
		c->failed = 1;
		c->gave_up = true;
		c->quiesced = true;
		snprintf(msg, sizeof(msg), "a device is back but could not be attached: %s",
			 unvme_errmsg());
	}
	ctrlr_unlock_qps(c);
	say(c, msg);
	ctrlr_life(c, CTRLR_LIFE_ARRIVED, rc);
	/* the listeners hear of the arrival before a submitter can find its queue lost: until
	 * then it is told to wait (-EAGAIN), so one that rebuilds its queues after an arrival
	 * (the KV SDK) never mistakes the rebuild for a failure */
	ctrlr_emit(c, UNVME_EVENT_ARRIVED, rc, 0, NULL);
	atomic_store(&c->resetting, false);
	return rc;
}
