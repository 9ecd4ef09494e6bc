/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timeouts and recovery: one model for a command that never completes and for a controller
 * that reports a fatal status (CSTS.CFS, NVMe Base 2.0 9.5) or stops answering.
 *
 * Whatever happened, a queue pair that lost its queues on the device is "failed" and
 * "gone": the device will complete none of its outstanding commands and touches none of
 * their buffers any more. Its owner rebuilds it (qpair_rebuild): the queues are created again
 * on the device, then the commands that were outstanding complete with ABORTED_SQ_DELETION,
 * so their callbacks may submit again into the rebuilt queue. Nothing is lost: every command
 * submitted before the loss is completed exactly once, and a submission is either queued on
 * a working queue or refused.
 *
 * How a queue gets there:
 *   - Timeout (the poll's scan, every 10 ms): a command older than the queue's timeout gets an
 *     Abort; one still outstanding a timeout later (or that the Abort did not find) fences its
 *     queue: Delete I/O SQ and CQ, which guarantee that the device is done with it. A fence
 *     that the device refuses escalates to a controller reset.
 *   - Controller reset (ctrlr_recover_fatal for a fatal status, ctrlr_reset_auto for a
 *     controller that stopped answering an admin command or could not fence or re-create a
 *     queue): the thread that noticed marks every I/O queue pair failed, disables the
 *     controller (after CSTS.RDY = 0 it touches no host memory), marks them gone, gives the
 *     admin queue's commands back, enables it again and sets the number of queues. It touches
 *     no I/O queue pair's rings: each owner rebuilds its own at its next submit or poll.
 *
 * An unshared queue pair is rebuilt by its own poll or submit. A split one cannot be rebuilt
 * from one side (the submitter's tail belongs to another thread): its poller gives back what
 * the device will never complete, at every poll (submissions that raced the loss included),
 * and answers -EIO until the owner, with both sides stopped, calls unvme_qpair_recover.
 * While a reset is under way, submit answers -EAGAIN and poll reaps nothing. A controller
 * that cannot be enabled again, that went away (CSTS reads all ones), or that needs three
 * automatic resets within ten seconds stays failed: submit and poll answer -EIO and
 * unvme_ctrlr_reset is the way back; it is left disabled (or it is gone), so the queues'
 * commands are given back with an error all the same: nobody waits forever.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"

#define GIVE_UP_WINDOW_MS 10000

static void report(const struct unvme_ctrlr *c, const char *what)
{
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: %s\n", c->devid, what);
}

/* Three automatic resets within GIVE_UP_WINDOW_MS: the controller is not getting better. */
static bool too_often(struct unvme_ctrlr *c, uint64_t now)
{
	const size_t n = sizeof(c->recent_resets_ms) / sizeof(c->recent_resets_ms[0]);
	bool often = c->auto_resets >= n && now - c->recent_resets_ms[0] < GIVE_UP_WINDOW_MS;
	if (!often) {
		for (size_t i = 0; i + 1 < n; i++)
			c->recent_resets_ms[i] = c->recent_resets_ms[i + 1];
		c->recent_resets_ms[n - 1] = now;
	}
	return often;
}

static void mark_gone(struct unvme_ctrlr *c)
{
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next)
		atomic_store(&qp->gone, true);
}

static void give_up(struct unvme_ctrlr *c, const char *why, bool gone)
{
	c->gave_up = true;
	c->failed = 1;
	/* disabled, it stops touching host memory: then the commands can be given back. A
	 * device that went away while it was being reset (CSTS reads all ones: -ENODEV) is as
	 * gone as one found so before the reset. */
	int drc = gone ? 0 : ctrlr_disable(c);
	if (drc == 0 || drc == -ENODEV) {
		c->quiesced = true;
		mark_gone(c);
	}
	char msg[640];
	snprintf(msg, sizeof(msg), "%s; the controller stays failed (unvme_ctrlr_reset or close "
		 "it)", why);
	report(c, msg);
}

/* The reset itself; qp_lock held, c->resetting set. 0 or -EIO (gave up). */
static int reset_locked(struct unvme_ctrlr *c, const char *why)
{
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next)
		qp->failed = 1;
	char msg[768];
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT && c->ops->orphaned && c->ops->orphaned(c)) {
		/* the process that ran it, and the device with it, is gone: nothing touches our
		 * memory any more, so this is a removal (its watcher thread reports it too) */
		atomic_store(&c->removed, true);
		snprintf(msg, sizeof(msg), "%s: the process that runs the device is gone", why);
		give_up(c, msg, true);
		return -EIO;
	}
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT) {
		/* a client process: resetting is the server's. Its queues stay on the device
		 * until their owners destroy them (the server deletes them), so what is
		 * outstanding is not given back before */
		c->gave_up = true;
		c->failed = 1;
		snprintf(msg, sizeof(msg), "%s: %s, which alone may reset it", why, c->transport_info);
		report(c, msg);
		return -EIO;
	}
	uint32_t csts = reg_read32(c, NVME_REG_CSTS);
	if (csts == 0xffffffffu) {
		snprintf(msg, sizeof(msg), "%s: the device does not answer (CSTS reads all ones)", why);
		give_up(c, msg, true);
		return -EIO;
	}
	if (too_often(c, mono_ms_coarse())) {
		snprintf(msg, sizeof(msg), "%s: three automatic resets within 10 s", why);
		give_up(c, msg, false);
		return -EIO;
	}
	/* no admin command may use the admin queue while it is rewound */
	pthread_mutex_lock(&c->admin_lock);
	int rc = ctrlr_disable(c);
	if (rc == 0)
		mark_gone(c);
	qpair_fail_outstanding(c->admin, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	if (rc == 0)
		rc = ctrlr_enable(c);
	pthread_mutex_unlock(&c->admin_lock);
	if (rc == 0)
		rc = ctrlr_set_num_queues(c);
	if (rc) {
		snprintf(msg, sizeof(msg), "%s: the automatic reset failed: %s", why, unvme_errmsg());
		give_up(c, msg, false);
		return -EIO;
	}
	c->auto_resets++;
	atomic_fetch_add(&c->generation, 1);
	c->failed = 0;
	snprintf(msg, sizeof(msg), "%s: controller reset automatically (%u so far); commands in "
		 "flight complete with ABORTED_SQ_DELETION", why, c->auto_resets);
	report(c, msg);
	return 0;
}

void ctrlr_recover_fatal(struct unvme_ctrlr *c)
{
	if (ctrlr_qps_locked_here(c) || atomic_load(&c->resetting))
		return; /* inside a queue create, destroy or reset: that caller sees the failure */
	ctrlr_lock_qps(c);
	if (c->failed && !c->gave_up) {
		atomic_store(&c->resetting, true);
		(void)reset_locked(c, "controller fatal status (CSTS.CFS)");
		atomic_store(&c->resetting, false);
	}
	/* else: reset by another thread meanwhile, or hopeless */
	ctrlr_unlock_qps(c);
}

int ctrlr_reset_auto(struct unvme_ctrlr *c, const char *why)
{
	if (atomic_load(&c->resetting))
		return -EIO; /* from inside a reset (its own admin commands): that reset decides */
	bool mine = ctrlr_qps_locked_here(c);
	if (!mine)
		ctrlr_lock_qps(c);
	int rc = -EIO;
	if (!c->gave_up) {
		atomic_store(&c->resetting, true);
		rc = reset_locked(c, why);
		atomic_store(&c->resetting, false);
	}
	if (!mine)
		ctrlr_unlock_qps(c);
	return rc;
}

/* Is an answer to Delete I/O SQ/CQ proof that the queue is gone from the device? Deleted
 * now, or it did not exist (deleted behind the driver's back, for instance). */
static bool deleted(int rc)
{
	return rc == 0 || rc == NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
}

/*
 * The fence: the device must be done with the queue before its commands are given back,
 * whatever state it is in. Deleting the SQ stops it (outstanding commands complete or are
 * dropped), deleting the CQ stops its completions. Only a device that answers both (or says
 * the queue does not exist) is known to be done; otherwise the controller is reset, which
 * makes every queue gone. 0 when the queue is gone (by the delete or the reset).
 */
static int fence(struct unvme_qpair *qp, const char *why)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->failed = 1; /* first: no submission follows what the rebuild gives back */
	uint32_t gen = atomic_load(&c->generation);
	struct nvme_sqe cmd = { .opc = NVME_ADM_DELETE_SQ, .cdw10 = qp->qid };
	int sq = unvme_admin(c, &cmd, NULL, 0, NULL);
	cmd = (struct nvme_sqe){ .opc = NVME_ADM_DELETE_CQ, .cdw10 = qp->qid };
	int cq = unvme_admin(c, &cmd, NULL, 0, NULL);
	if (deleted(sq) && deleted(cq)) {
		atomic_store(&qp->gone, true);
		return 0;
	}
	if (atomic_load(&c->generation) != gen && !c->failed)
		return 0; /* a lost Delete reset the controller meanwhile: every queue is gone */
	char msg[320];
	snprintf(msg, sizeof(msg), "queue %u: %s, and the controller did not delete the queue "
		 "(SQ %d, CQ %d)", qp->qid, why, sq, cq);
	return ctrlr_reset_auto(c, msg);
}

/* Creates the queue again; a controller that refuses is reset once and asked again. */
static int recreate(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	for (int attempt = 0;; attempt++) {
		if (qp->qid > c->max_io_queues)
			return unvme_fail(-EIO, "queue %u: the controller grants only %u queues after "
					  "its reset", qp->qid, c->max_io_queues);
		qpair_reset_rings(qp);
		uint32_t gen = atomic_load(&c->generation);
		int rc = ctrlr_create_io_queues(c, qp);
		if (rc == 0 || attempt == 1 || c->failed)
			return rc;
		if (atomic_load(&c->generation) != gen)
			continue; /* a lost Create reset the controller meanwhile: try once more */
		char msg[640];
		snprintf(msg, sizeof(msg), "queue %u cannot be created again: %s", qp->qid,
			 unvme_errmsg());
		if (ctrlr_reset_auto(c, msg) != 0)
			return rc;
	}
}

int qpair_rebuild(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	if (qp->recovering || atomic_load(&c->resetting))
		return -EAGAIN; /* inside this rebuild, or the reset is not done */
	if (c->failed) {
		if (c->quiesced && unvme_qpair_outstanding(qp)) {
			/* the device touches no host memory any more: give the commands back */
			qp->recovering = true;
			qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
			qp->recovering = false;
		}
		if (atomic_load(&c->removed))
			return unvme_fail(-ENODEV, "%s: queue %u: the device was removed; I/O resumes "
					  "when a device is plugged in at its address", c->devid, qp->qid);
		return unvme_fail(-EIO, "queue %u: controller has failed; reset it", qp->qid);
	}
	qp->recovering = true;
	uint32_t gen = atomic_load(&c->generation);
	qpair_doom_outstanding(qp);
	int rc = recreate(qp);
	qp->recovering = false;
	if (rc) {
		/* the controller stays failed, disabled: nothing of this queue will complete */
		if (c->quiesced)
			qpair_complete_doomed(qp);
		return unvme_fail(-EIO, "queue %u: could not be created again: %s", qp->qid,
				  unvme_errmsg());
	}
	qp->generation = gen;
	atomic_store(&qp->gone, false);
	qp->failed = 0;
	/* the queue works again: callbacks of what it lost may submit into it */
	qpair_complete_doomed(qp);
	return 0;
}

void qpair_give_back_gone(struct unvme_qpair *qp)
{
	if (unvme_qpair_outstanding(qp) == 0)
		return;
	qp->recovering = true;
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	qp->recovering = false;
}

void qpair_scan_timeouts(struct unvme_qpair *qp, uint64_t now)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	qp->last_scan_ms = now;
	if (qp->qid == 0 || qp->recovering)
		return;
	if (ctrlr_fatal_now(c) || c->failed) {
		/* reset the controller from here; this queue is rebuilt at the end of the poll */
		ctrlr_recover_fatal(c);
		qp->failed = 1;
		return;
	}
	if (qp->failed || unvme_qpair_outstanding(qp) == 0)
		return;
	uint32_t ntrk = qp->depth - 1u;
	int late = -1;
	for (uint32_t cid = 0; cid < ntrk; cid++) {
		struct unvme_req *req = &qp->reqs[cid];
		uint8_t state = atomic_load_explicit(&req->state, memory_order_acquire);
		if (state == REQ_FREE)
			continue;
		if (req->seen_ms == 0) {
			req->seen_ms = now;
			continue;
		}
		if (now - req->seen_ms < qp->timeout_ms)
			continue;
		if (state == REQ_ACTIVE) {
			atomic_store_explicit(&req->state, REQ_ABORT_SENT, memory_order_release);
			req->seen_ms = now;
			bool aborted = false;
			if (unvme_abort(c, qp->qid, (uint16_t)cid, &aborted) != 0 || !aborted)
				late = (int)cid;
		} else if (state == REQ_ABORT_SENT) {
			late = (int)cid;
		}
	}
	if (late < 0)
		return;
	char why[96];
	snprintf(why, sizeof(why), "command %d got no completion within twice its %u ms timeout",
		 late, qp->timeout_ms);
	qp->recovering = true;
	int rc = fence(qp, why);
	qp->recovering = false;
	if (rc == 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "queue %u fenced: %s; its commands complete with "
			 "ABORTED_SQ_DELETION", qp->qid, why);
		report(c, msg);
	}
	/* An unshared queue is rebuilt at the end of this poll, a split one by its owner. */
}

UNVME_API int unvme_qpair_recover(struct unvme_qpair *qp)
{
	if (!qp)
		return unvme_fail(-EINVAL, "unvme_qpair_recover: no queue pair");
	if (!atomic_load(&qp->failed))
		return 0;
	return qpair_rebuild(qp);
}

UNVME_API uint32_t unvme_ctrlr_reset_count(const struct unvme_ctrlr *c)
{
	return atomic_load(&c->auto_resets);
}
