/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery from a controller fatal status (CSTS.CFS, NVMe Base 2.0 9.5 "Controller Fatal
 * Status Condition"): the host resets the controller and brings its queues back.
 *
 * Queue pairs belong to their threads and take no locks, so the reset is split in two:
 *   1. The thread that notices the fatal status (a queue pair's timeout scan, every 10 ms of
 *      polling) resets the controller itself: it marks every I/O queue pair failed, disables
 *      the controller (after CSTS.RDY = 0 it touches no host memory), gives the admin queue's
 *      commands back, enables it again, sets the number of queues and bumps the controller's
 *      generation. It touches no I/O queue pair's rings.
 *   2. Each queue pair's owner, at its next submit or poll, finds its queue failed and rebuilds
 *      it: its outstanding commands complete with ABORTED_SQ_DELETION (their callbacks run on
 *      the owner's thread), the rings are rewound and the queues created again on the device.
 *      A split queue pair's two sides cannot do this alone: its owner stops both and calls
 *      unvme_qpair_recover.
 * While the reset is under way, submit answers -EAGAIN and poll reaps nothing. A controller
 * that cannot be enabled again, that went away (CSTS reads all ones), or that fails three
 * times within ten seconds stays failed: submit and poll answer -EIO and unvme_ctrlr_reset
 * is the way back. It is left disabled (or it is gone), so it touches no host memory, and the
 * queues' commands are given back with an error all the same: nobody waits forever.
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
	if (!unvme_env_quiet())
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

static void give_up(struct unvme_ctrlr *c, const char *why, bool gone)
{
	c->gave_up = true;
	c->failed = 1;
	/* disabled, it stops touching host memory: then the commands can be given back */
	if (gone || ctrlr_disable(c) == 0)
		c->quiesced = true;
	char msg[640];
	snprintf(msg, sizeof(msg), "controller fatal status: %s; the controller stays failed "
		 "(unvme_ctrlr_reset or close it)", why);
	report(c, msg);
}

void ctrlr_recover_fatal(struct unvme_ctrlr *c)
{
	pthread_mutex_lock(&c->qp_lock);
	if (!c->failed || c->gave_up) {
		pthread_mutex_unlock(&c->qp_lock); /* reset by another thread meanwhile, or hopeless */
		return;
	}
	atomic_store(&c->resetting, true);
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next)
		qp->failed = 1;
	uint32_t csts = reg_read32(c, NVME_REG_CSTS);
	if (csts == 0xffffffffu) {
		give_up(c, "the device does not answer (CSTS reads all ones)", true);
	} else if (too_often(c, mono_ms_coarse())) {
		give_up(c, "three automatic resets within 10 s", false);
	} else {
		/* no admin command may use the admin queue while it is rewound */
		pthread_mutex_lock(&c->admin_lock);
		int rc = ctrlr_disable(c);
		qpair_fail_outstanding(c->admin, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
		if (rc == 0)
			rc = ctrlr_enable(c);
		pthread_mutex_unlock(&c->admin_lock);
		if (rc == 0)
			rc = ctrlr_set_num_queues(c);
		if (rc) {
			char why[512];
			snprintf(why, sizeof(why), "the automatic reset failed: %s", unvme_errmsg());
			give_up(c, why, false);
		} else {
			c->auto_resets++;
			atomic_fetch_add(&c->generation, 1);
			c->failed = 0;
			char msg[160];
			snprintf(msg, sizeof(msg), "controller fatal status (CSTS.CFS): reset automatically "
				 "(%u so far); commands in flight complete with ABORTED_SQ_DELETION",
				 c->auto_resets);
			report(c, msg);
		}
	}
	atomic_store(&c->resetting, false);
	pthread_mutex_unlock(&c->qp_lock);
}

int qpair_rebuild(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	if (qp->recovering || atomic_load(&c->resetting))
		return -EAGAIN; /* a callback of the rebuild itself, or the reset is not done */
	uint32_t gen = atomic_load(&c->generation);
	if (c->failed || gen == qp->generation) {
		if (c->quiesced && unvme_qpair_outstanding(qp)) {
			/* the device touches no host memory any more: give the commands back */
			qp->recovering = true;
			qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
			qp->recovering = false;
		}
		return unvme_fail(-EIO, "queue %u: controller has failed; reset it", qp->qid);
	}
	qp->recovering = true;
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	qpair_reset_rings(qp);
	int rc = qp->qid <= c->max_io_queues ? ctrlr_create_io_queues(c, qp) : -EIO;
	qp->recovering = false;
	if (rc)
		return unvme_fail(-EIO, "queue %u: could not be created again after the reset: %s",
				  qp->qid, unvme_errmsg());
	qp->generation = gen;
	qp->failed = 0;
	return 0;
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
