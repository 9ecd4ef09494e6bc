/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timeouts and recovery: one model for a command that never completes and for a controller
 * that reports a fatal status (CSTS.CFS, NVMe Base 2.0 9.5) or stops answering.
 *
 * Whatever happened, a queue pair that lost its queues on the device is "failed" and
 * "gone": the device will complete none of its outstanding commands and touches none of
 * their buffers any more. Its owner rebuilds it: the queues are created again on the device,
 * then the commands that were outstanding complete with ABORTED_SQ_DELETION, so their
 * callbacks may submit again into the rebuilt queue. Nothing is lost: every command
 * submitted before the loss is completed exactly once, and a submission is either queued on
 * a working (or rebuilding) queue or refused.
 *
 * Off the hot path: a queue pair's poll and submit only record what they find and take one
 * slow-path entry, recovery_step, which advances two state machines by what can be done
 * without waiting and returns. Their admin commands are asynchronous (admin_submit_async):
 * each state waits for one completion, reaped by whoever polls the admin queue next (a later
 * step, an admin wait, unvme_ctrlr_process_events). No poll or submit enters an admin wait.
 *
 *   The queue pair's (its owner's thread: the poller of a split queue, the one thread of an
 *   unshared one), enum qp_rec:
 *     ABORT    the 10 ms scan finds a command older than the queue's timeout: Abort sent
 *              (REQ_ABORT_SENT); a command still outstanding a timeout later, or one the
 *              Abort did not find, marks the queue failed and wants a fence;
 *     FENCE    Delete I/O SQ, then Delete I/O CQ, which guarantee that the device is done
 *              with the queue: deleted (or "no such queue") makes it gone; a fence the
 *              device refuses wants a controller reset;
 *     REBUILD  (REBUILDING) a gone queue: rings rewound, its doorbell held back, Create I/O
 *              CQ, then Create I/O SQ (a fabric's queue: CONNECT, the transport's connect
 *              running on a thread of its own, its result taken at a later step);
 *              meanwhile submit may queue entries, nothing rings; when both completed (or
 *              the connection is made) the doorbell takes the tail and the lost commands
 *              complete with ABORTED_SQ_DELETION from the queue's own poll. A Create (a
 *              connect) the controller refuses wants a reset once; a second refusal is an
 *              error.
 *   The controller's (whichever thread holds the admin lock in a step), enum ctrlr_rec,
 *   started by the recovery word's CTRLR_REC_WANT_RESET (a fatal status, a dead fabric
 *   association, a refused fence or Create, an admin command lost for good):
 *     RESET    every I/O queue pair marked failed; CC.EN cleared; at the step that finds
 *              CSTS.RDY = 0 (the controller touches no host memory) every queue pair is
 *              gone, the admin queue's commands are given back and CC.EN is set again;
 *     REINIT   at the step that finds CSTS.RDY = 1: Set Features (Number of Queues); its
 *              completion ends the reset (generation moves on, failed clears). Each queue
 *              pair's owner then rebuilds its own at its next submit or poll.
 *   CSTS.RDY is never waited for: each step checks it against a deadline (CAP.TO). Over a
 *   fabric CC.EN = 1 makes a new association on a thread of the fabrics layer (connect,
 *   Connect, authentication, Property Set CC, CSTS.RDY = 1; retried every reconnect_delay for
 *   ctrl_loss_tmo: lib/fabrics/nvmf_regs.h), CSTS reading "not ready" meanwhile: the
 *   deadline is then that reconnect budget. A fabric queue's connection is made the same
 *   way (CONNECT, above). What a step still sends over a fabric is a single command on a
 *   live association (the CSTS Property Get of a step that finds it live, the Property Set
 *   CC.EN = 0 of a reset that ends a live one), bounded by the admin timeout.
 *
 * A split queue pair cannot be rebuilt from one side (the submitter's tail belongs to another
 * thread): its poller fences it, gives back what the device will never complete, at every
 * poll (submissions that raced the loss included), and answers -EIO until the owner, with
 * both sides stopped, calls unvme_qpair_recover (which runs the same steps until the queue
 * works: an application's call, it may wait). While a reset or a fence is under way, submit
 * answers -EAGAIN and poll reaps nothing. A controller that cannot be enabled again, that
 * went away (CSTS reads all ones), or that needs three automatic resets within ten seconds
 * stays failed: submit and poll answer -EIO and unvme_ctrlr_reset is the way back; it is
 * left disabled (or it is gone), so the queues' commands are given back with an error all
 * the same: nobody waits forever. Callers that may wait (an application's queue create, a
 * device process's server, a fabric's keep-alive thread, an admin command lost) run the
 * steps to the end (recovery_run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"

#define GIVE_UP_WINDOW_MS 10000
#define REC_RC_UNSENT (-0x7ffffffe) /* the state's command is not on the admin queue yet */

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

/* qp_lock for a step that walks the queue pairs: held here already (a queue create's admin
 * wait), taken now (*mine), or busy (the step tries again later). */
static bool qps_try(struct unvme_ctrlr *c, bool *mine)
{
	*mine = false;
	if (ctrlr_qps_locked_here(c))
		return true;
	if (!ctrlr_trylock_qps(c))
		return false;
	*mine = true;
	return true;
}

static void mark_all(struct unvme_ctrlr *c, bool gone)
{
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		if (gone)
			atomic_store(&qp->gone, true);
		atomic_store(&qp->failed, 1);
	}
}

/* ---- the recovery word ---- */

void recovery_want_reset(struct unvme_ctrlr *c, const char *why)
{
	pthread_mutex_lock(&c->rec_lock);
	uint32_t gen = atomic_load(&c->generation);
	/* a request made before the last reset ended is that reset's (it decided): a new one
	 * replaces it */
	if (!(atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET) || c->rec_why_gen != gen) {
		snprintf(c->rec_why, sizeof(c->rec_why), "%s", why);
		c->rec_why_gen = gen;
	}
	atomic_fetch_or(&c->recovery, CTRLR_REC_WANT_RESET);
	pthread_mutex_unlock(&c->rec_lock);
}

/* ---- the controller's reset, one step at a time (admin lock held) ---- */

static void set_phase(struct unvme_ctrlr *c, enum ctrlr_rec ph, uint64_t deadline_ms)
{
	c->rec_deadline_ms = deadline_ms;
	atomic_store(&c->rec_phase, (uint8_t)ph);
}

static void reset_over(struct unvme_ctrlr *c)
{
	set_phase(c, CTRLR_REC_IDLE, 0);
	atomic_store(&c->resetting, false);
}

/* Failed for good. A controller still there is disabled first (GIVING_UP: then it touches no
 * host memory and the commands can be given back); one that is gone (CSTS all ones, or its
 * process) is quiesced at once. */
static void give_up(struct unvme_ctrlr *c, const char *why, bool gone, uint64_t now)
{
	c->gave_up = true;
	c->failed = 1;
	char msg[1024];
	snprintf(msg, sizeof(msg), "%.900s; the controller stays failed (unvme_ctrlr_reset or "
		 "close it)", why);
	report(c, msg);
	c->rec_giveup_gone = gone;
	if (!gone) {
		uint32_t cc = reg_read32(c, NVME_REG_CC);
		if (cc & NVME_CC_EN)
			reg_write32(c, NVME_REG_CC, cc & ~NVME_CC_EN);
	}
	set_phase(c, CTRLR_REC_GIVING_UP, now + ctrlr_ready_limit_ms(c));
}

static void failed_reset(struct unvme_ctrlr *c, const char *what, bool gone, uint64_t now)
{
	char msg[800];
	snprintf(msg, sizeof(msg), "%.500s: the automatic reset failed: %.250s", c->rec_cause, what);
	give_up(c, msg, gone, now);
}

static void reinit_done(void *arg, const struct nvme_cqe *cpl)
{
	struct unvme_ctrlr *c = arg;
	c->rec_reinit_dw0 = cpl->dw0;
	atomic_store(&c->rec_reinit_rc, NVME_STATUS_FROM_CQE(cpl->status));
}

/* IDLE with a reset wanted: 0 when it started (or ended at once), -EAGAIN to try later. */
static int reset_start(struct unvme_ctrlr *c, uint64_t now)
{
	if (atomic_load(&c->resetting))
		return -EAGAIN; /* a manual reset or a hot-plug arrival has the controller */
	pthread_mutex_lock(&c->rec_lock);
	bool stale = c->rec_why_gen != atomic_load(&c->generation);
	pthread_mutex_unlock(&c->rec_lock);
	if (c->gave_up || atomic_load(&c->removed) || stale) {
		atomic_fetch_and(&c->recovery, ~CTRLR_REC_WANT_RESET);
		return 0;
	}
	bool mine;
	if (!qps_try(c, &mine))
		return -EAGAIN;
	pthread_mutex_lock(&c->rec_lock);
	snprintf(c->rec_cause, sizeof(c->rec_cause), "%s", c->rec_why);
	atomic_fetch_and(&c->recovery, ~CTRLR_REC_WANT_RESET);
	pthread_mutex_unlock(&c->rec_lock);
	atomic_store(&c->resetting, true);
	mark_all(c, false); /* failed first: no submission follows what the rebuild gives back */
	if (mine)
		ctrlr_unlock_qps(c);
	char msg[900];
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT && c->ops->orphaned && c->ops->orphaned(c)) {
		/* the process that ran it, and the device with it, is gone: nothing touches our
		 * memory any more, so this is a removal (its watcher thread reports it too) */
		atomic_store(&c->removed, true);
		snprintf(msg, sizeof(msg), "%s: the process that runs the device is gone",
			 c->rec_cause);
		give_up(c, msg, true, now);
		return 0;
	}
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT) {
		/* a client process: resetting is the server's. Its queues stay on the device
		 * until their owners destroy them (the server deletes them), so what is
		 * outstanding is not given back before */
		c->gave_up = true;
		c->failed = 1;
		snprintf(msg, sizeof(msg), "%.480s: %.380s, which alone may reset it", c->rec_cause,
			 c->transport_info);
		report(c, msg);
		reset_over(c);
		return 0;
	}
	uint32_t csts = reg_read32(c, NVME_REG_CSTS);
	if (csts == 0xffffffffu) {
		snprintf(msg, sizeof(msg), "%s: the device does not answer (CSTS reads all ones)",
			 c->rec_cause);
		give_up(c, msg, true, now);
		return 0;
	}
	if (too_often(c, mono_ms_coarse())) {
		snprintf(msg, sizeof(msg), "%s: three automatic resets within 10 s", c->rec_cause);
		give_up(c, msg, false, now);
		return 0;
	}
	uint32_t cc = reg_read32(c, NVME_REG_CC);
	if (cc & NVME_CC_EN)
		reg_write32(c, NVME_REG_CC, cc & ~NVME_CC_EN);
	set_phase(c, CTRLR_REC_DISABLING, now + ctrlr_ready_limit_ms(c));
	return 0;
}

/* One step of the reset; false when nothing more can be done now. */
static bool ctrlr_advance(struct unvme_ctrlr *c, uint64_t now)
{
	uint32_t csts;
	bool mine;
	char msg[256];
	enum ctrlr_rec ph = (enum ctrlr_rec)atomic_load(&c->rec_phase);
	if (ph != CTRLR_REC_IDLE && ph != CTRLR_REC_GIVING_UP && atomic_load(&c->removed)) {
		/* The device is being taken away under the reset (an unbind, a PCIe removal):
		 * what a step waits for cannot come (a Set Features sent to a device whose bus
		 * mastering is off would wait out its limit). The reset ends here, failed; the
		 * commands are given back once the transport says the device touches nothing
		 * (ctrlr_hotplug_removed: the controller quiesced). A give-up under way finishes
		 * by itself: a removed device reads all ones, which quiesces it there (and an
		 * orphaned client's give-up, gone from the start, must quiesce it). */
		c->gave_up = true;
		c->failed = 1;
		snprintf(msg, sizeof(msg), "%.200s: the device was removed during the automatic "
			 "reset", c->rec_cause);
		report(c, msg);
		reset_over(c);
		return true;
	}
	switch (ph) {
	case CTRLR_REC_IDLE:
		if (!(atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET))
			return false;
		return reset_start(c, now) == 0 && atomic_load(&c->rec_phase) != CTRLR_REC_IDLE;
	case CTRLR_REC_DISABLING:
		csts = reg_read32(c, NVME_REG_CSTS);
		if (csts != 0xffffffffu && (csts & NVME_CSTS_RDY) && now <= c->rec_deadline_ms)
			return false;
		if (!qps_try(c, &mine))
			return false;
		if (csts != 0xffffffffu && !(csts & NVME_CSTS_RDY))
			mark_all(c, true); /* disabled: it touches none of their memory any more */
		if (mine)
			ctrlr_unlock_qps(c);
		/* every queue on the controller is gone, other processes' too */
		ctrlr_life(c, CTRLR_LIFE_QUEUES_LOST,
			   csts == 0xffffffffu ? -ENODEV : (csts & NVME_CSTS_RDY) ? -ETIMEDOUT : 0);
		qpair_fail_outstanding(c->admin, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
		if (csts == 0xffffffffu) {
			failed_reset(c, "the controller does not answer (CSTS reads all ones)", true,
				     now);
		} else if (csts & NVME_CSTS_RDY) {
			snprintf(msg, sizeof(msg), "CSTS.RDY did not become 0 within CAP.TO (%llu ms)",
				 (unsigned long long)ctrlr_ready_limit_ms(c));
			failed_reset(c, msg, false, now);
		} else {
			ctrlr_enable_start(c);
			/* (a fabric's CC.EN = 1 starts a new association off this thread, retried
			 * for ctrl_loss_tmo: its budget, not CAP.TO) */
			set_phase(c, CTRLR_REC_ENABLING, now + ctrlr_enable_limit_ms(c));
		}
		return true;
	case CTRLR_REC_ENABLING: {
		csts = reg_read32(c, NVME_REG_CSTS);
		if (csts == 0xffffffffu) {
			failed_reset(c, "the controller does not answer (CSTS reads all ones)", true,
				     now);
			return true;
		}
		if (csts & NVME_CSTS_CFS) {
			failed_reset(c, "the controller reported a fatal status (CSTS.CFS) while "
				     "enabling", false, now);
			return true;
		}
		if (!(csts & NVME_CSTS_RDY)) {
			if (now <= c->rec_deadline_ms)
				return false;
			snprintf(msg, sizeof(msg), "CSTS.RDY did not become 1 within %s (%llu ms)",
				 c->ops->enable_limit_ms ? "the reconnect budget" : "CAP.TO",
				 (unsigned long long)ctrlr_enable_limit_ms(c));
			failed_reset(c, msg, false, now);
			return true;
		}
		uint32_t limit = unvme_admin_limit_ms(c, NVME_ADM_SET_FEATURES);
		set_phase(c, CTRLR_REC_REINIT, limit ? now + 2ull * limit + 1000 : UINT64_MAX);
		atomic_store(&c->rec_reinit_rc, REC_RC_PENDING);
		struct nvme_sqe cmd = { .opc = NVME_ADM_SET_FEATURES, .cdw10 = NVME_FEAT_NUM_QUEUES,
					.cdw11 = ctrlr_num_queues_cdw11(c) };
		int rc = admin_submit_async(c, &cmd, NULL, 0, reinit_done, c);
		if (rc) {
			snprintf(msg, sizeof(msg), "Set Features (Number of Queues) could not be "
				 "submitted (%d)", rc);
			failed_reset(c, msg, false, now);
		}
		return true;
	}
	case CTRLR_REC_REINIT: {
		int rc = atomic_load(&c->rec_reinit_rc);
		if (rc == REC_RC_PENDING) {
			if (now <= c->rec_deadline_ms)
				return false;
			failed_reset(c, "Set Features (Number of Queues) got no completion", false,
				     now);
			return true;
		}
		if (rc) {
			snprintf(msg, sizeof(msg), "%s: Set Features (Number of Queues) failed: %s",
				 c->devid, unvme_status_str(rc, 0));
			failed_reset(c, msg, false, now);
			return true;
		}
		if (ctrlr_num_queues_granted(c, c->rec_reinit_dw0) != 0) {
			failed_reset(c, "no memory for the queue grant", false, now);
			return true;
		}
		c->auto_resets++;
		atomic_fetch_add(&c->generation, 1);
		c->failed = 0;
		reset_over(c);
		char done[768];
		snprintf(done, sizeof(done), "%.500s: controller reset automatically (%u so far); "
			 "commands in flight complete with ABORTED_SQ_DELETION", c->rec_cause,
			 c->auto_resets);
		report(c, done);
		return true;
	}
	case CTRLR_REC_GIVING_UP: {
		bool gone = c->rec_giveup_gone;
		csts = gone ? 0xffffffffu : reg_read32(c, NVME_REG_CSTS);
		bool off = csts == 0xffffffffu || !(csts & NVME_CSTS_RDY);
		if (!off && now <= c->rec_deadline_ms)
			return false;
		if (off) {
			if (!qps_try(c, &mine))
				return false;
			/* disabled (or gone), it stops touching host memory: the commands can
			 * be given back */
			c->quiesced = true;
			mark_all(c, true);
			if (mine)
				ctrlr_unlock_qps(c);
		}
		if (!gone)
			ctrlr_life(c, CTRLR_LIFE_QUEUES_LOST,
				   csts == 0xffffffffu ? -ENODEV : off ? 0 : -ETIMEDOUT);
		reset_over(c);
		return true;
	}
	}
	return false;
}

/* The controller's part of a step: the admin queue reaped, the reset advanced. */
static void ctrlr_step(struct unvme_ctrlr *c, uint64_t now)
{
	if (atomic_load(&c->rec_phase) == CTRLR_REC_IDLE &&
	    !(atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET) && !c->admin)
		return;
	int lk = ctrlr_admin_trylock(c);
	if (lk < 0)
		return; /* its holder's admin wait runs the steps meanwhile */
	uint8_t ph = atomic_load(&c->rec_phase);
	/* the completions of the asynchronous commands (ours, the queue pairs') */
	if (c->admin && !atomic_load(&c->removed) &&
	    (ph == CTRLR_REC_IDLE ? !atomic_load(&c->resetting) : ph == CTRLR_REC_REINIT))
		(void)unvme_qpair_poll(c->admin, 0);
	for (int i = 0; i < 8 && ctrlr_advance(c, now); i++)
		if (atomic_load(&c->rec_phase) == CTRLR_REC_REINIT && c->admin)
			(void)unvme_qpair_poll(c->admin, 0);
	if (lk > 0)
		ctrlr_admin_unlock(c);
}

void recovery_abandon(struct unvme_ctrlr *c)
{
	if (ctrlr_run_elsewhere(c) && atomic_load(&c->rec_phase) == CTRLR_REC_IDLE)
		return;
	int lk = ctrlr_admin_locked_here(c) ? 0 : 1;
	if (lk)
		ctrlr_admin_lock(c);
	atomic_fetch_and(&c->recovery, ~CTRLR_REC_WANT_RESET);
	set_phase(c, CTRLR_REC_IDLE, 0); /* resetting stays the caller's */
	if (lk)
		ctrlr_admin_unlock(c);
}

/* Is the controller's recovery done (nothing wanted, or nothing that can be done)? */
static bool ctrlr_settled(struct unvme_ctrlr *c)
{
	if (atomic_load(&c->rec_phase) != CTRLR_REC_IDLE)
		return false;
	if (!(atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET))
		return true;
	/* wanted, but a manual reset or an arrival has it, or it cannot start */
	return atomic_load(&c->resetting) || c->gave_up;
}

void recovery_run(struct unvme_ctrlr *c)
{
	while (!ctrlr_settled(c)) {
		ctrlr_step(c, mono_ms_coarse());
		if (!ctrlr_settled(c))
			sleep_us(500);
	}
}

void ctrlr_recover_fatal(struct unvme_ctrlr *c)
{
	if (atomic_load(&c->resetting) && atomic_load(&c->rec_phase) == CTRLR_REC_IDLE)
		return; /* inside a manual reset or an arrival: that caller sees the failure */
	if (c->failed && !c->gave_up)
		recovery_want_reset(c, "controller fatal status (CSTS.CFS)");
	recovery_run(c);
	/* else: reset by another thread meanwhile, or hopeless */
}

int ctrlr_reset_auto(struct unvme_ctrlr *c, const char *why)
{
	if (atomic_load(&c->resetting) && atomic_load(&c->rec_phase) == CTRLR_REC_IDLE)
		return -EIO; /* from inside a manual reset (its own admin commands): it decides */
	if (c->gave_up)
		return -EIO;
	uint32_t gen = atomic_load(&c->generation);
	recovery_want_reset(c, why);
	recovery_run(c);
	return !c->gave_up && atomic_load(&c->generation) != gen ? 0 : -EIO;
}

/* ---- a queue pair's recovery, one step at a time (its owner's thread) ---- */

/* Is an answer to Delete I/O SQ/CQ proof that the queue is gone from the device? Deleted
 * now, or it did not exist (deleted behind the driver's back, for instance). */
static bool deleted(int rc)
{
	return rc == 0 || rc == NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID);
}

/* The completion of a queue pair's recovery command: recorded for its owner's next step. */
static void qp_rec_done(void *arg, const struct nvme_cqe *cpl)
{
	struct unvme_qpair *qp = arg;
	atomic_store(&qp->rec_rc, NVME_STATUS_FROM_CQE(cpl->status));
}

static void abort_done(void *arg, const struct nvme_cqe *cpl)
{
	struct unvme_req *r = arg;
	bool hit = NVME_STATUS_FROM_CQE(cpl->status) == 0 && !(cpl->dw0 & 1u);
	atomic_store(&r->abort, hit ? REQ_ABORT_HIT : REQ_ABORT_MISS);
}

/* A rebuild holds the doorbell back: submissions may fill the ring, the device hears of
 * them once its queues exist again. */
static void doorbell_held(void *ctx, uint32_t off, uint32_t val)
{
	(void)ctx;
	(void)off;
	(void)val;
}

static void hold_doorbell(struct unvme_qpair *qp)
{
	if (!qp->held_write32) {
		qp->held_write32 = qp->write32;
		qp->write32 = doorbell_held;
	}
}

static void release_doorbell(struct unvme_qpair *qp)
{
	if (!qp->held_write32)
		return;
	qp->write32 = qp->held_write32;
	qp->held_write32 = NULL;
	uint16_t tail = qp->split ? atomic_load(&qp->sq_tail_pub) : qp->sq_tail;
	qp->unrung = 0;
	qp->rung_tail = tail;
	if (tail)
		qp->write32(qp->bus, qp->sq_db, tail);
}

/* The state's admin command: sent if it is not out yet; -EAGAIN until its completion came,
 * then its status (or the negative errno it could not be sent with). */
static int qp_cmd(struct unvme_ctrlr *c, struct unvme_qpair *qp, const struct nvme_sqe *cmd,
		  uint64_t now)
{
	int rc = atomic_load(&qp->rec_rc);
	if (rc == REC_RC_UNSENT) {
		qp->rec_gen = atomic_load(&c->generation);
		qp->rec_sent_ms = now;
		atomic_store(&qp->rec_rc, REC_RC_PENDING);
		int src = admin_submit_async(c, cmd, NULL, 0, qp_rec_done, qp);
		if (src == -EAGAIN) {
			atomic_store(&qp->rec_rc, REC_RC_UNSENT); /* admin lock or queue busy */
			return -EAGAIN;
		}
		if (src)
			atomic_store(&qp->rec_rc, src);
		rc = atomic_load(&qp->rec_rc);
	}
	if (rc != REC_RC_PENDING)
		return rc;
	uint32_t limit = unvme_admin_limit_ms(c, cmd->opc);
	if (limit && now - qp->rec_sent_ms > 2ull * limit + 1000 &&
	    atomic_load(&c->rec_phase) == CTRLR_REC_IDLE) {
		/* lost for good: the reset gives it back (ABORTED_SQ_DELETION) */
		char why[160];
		snprintf(why, sizeof(why), "queue %u: admin command 0x%02x of its recovery got no "
			 "completion within %u ms", qp->qid, cmd->opc, 2 * limit + 1000);
		recovery_want_reset(c, why);
		qp->rec_sent_ms = now;
	}
	return -EAGAIN;
}

/* The command answered while a reset was under way or after it: the queue is gone with all
 * the others and is rebuilt from the start. */
static bool overtaken(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	if (!atomic_load(&c->resetting) && atomic_load(&c->generation) == qp->rec_gen)
		return false;
	qp->rec = QP_REC_NONE;
	qp->fence_wanted = false;
	atomic_store(&qp->rec_rc, REC_RC_UNSENT);
	return true;
}

static void next_state(struct unvme_qpair *qp, enum qp_rec s)
{
	qp->rec = (uint8_t)s;
	atomic_store(&qp->rec_rc, REC_RC_UNSENT);
}

/* Gives back what a gone queue holds (the device will complete none of it). */
void qpair_give_back_gone(struct unvme_qpair *qp)
{
	if (unvme_qpair_outstanding(qp) == 0)
		return;
	qp->recovering = true;
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	qp->recovering = false;
}

/* The controller stays failed: -EIO (or -ENODEV), its commands given back once it is
 * quiesced. */
static int failed_for_good(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	/* Failed, but not decided yet: the device is being taken away (its transport says
	 * when it touches our memory no more), or the reset that a fatal status asked for is
	 * about to start. The poll that reports the error must be the one that gave the
	 * commands back, so not yet. */
	if (!c->quiesced && (atomic_load(&c->removed) ||
			     (!c->gave_up && (atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET))))
		return -EAGAIN;
	if (c->quiesced)
		qpair_give_back_gone(qp);
	if (atomic_load(&c->removed))
		return unvme_fail(-ENODEV, "%s: queue %u: the device was removed; I/O resumes when "
				  "a device is plugged in at its address", c->devid, qp->qid);
	return unvme_fail(-EIO, "queue %u: controller has failed; reset it", qp->qid);
}

/* The queue works again: the device hears of what was queued meanwhile, then what it lost
 * completes (the callbacks may submit into it). */
static void rebuilt(struct unvme_qpair *qp, uint32_t gen)
{
	qp->generation = gen;
	qp->create_attempt = 0;
	next_state(qp, QP_REC_NONE);
	atomic_store(&qp->gone, false);
	release_doorbell(qp);
	qp->failed = 0;
	qp->recovering = true;
	qpair_complete_doomed(qp);
	qp->recovering = false;
}

/* A Create the controller refused (or could not be sent): a reset, once; then an error. */
static int create_failed(struct unvme_ctrlr *c, struct unvme_qpair *qp, const char *what, int rc)
{
	next_state(qp, QP_REC_NONE);
	char msg[512];
	snprintf(msg, sizeof(msg), "queue %u cannot be created again: %s: %s", qp->qid, what,
		 rc > 0 ? unvme_status_str(rc, NVME_CSI_NVM) : unvme_errmsg());
	if (qp->create_attempt == 0 && !c->failed) {
		qp->create_attempt = 1;
		recovery_want_reset(c, msg);
		return -EAGAIN;
	}
	qp->create_attempt = 0;
	/* the controller stays failed, disabled: nothing of this queue will complete */
	if (c->quiesced)
		qpair_complete_doomed(qp);
	return unvme_fail(-EIO, "queue %u: could not be created again: %s", qp->qid, msg);
}

/* REBUILD's start: the device has no queue of this id any more. */
static int rebuild_start(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	if (qp->qid > c->max_io_queues)
		return unvme_fail(-EIO, "queue %u: the controller grants only %u queues after its "
				  "reset", qp->qid, c->max_io_queues);
	qpair_doom_outstanding(qp);
	qpair_reset_rings(qp);
	if (ctrlr_kind(c) == UNVME_TRANSPORT_FABRICS && c->ops->qp_connect_start) {
		/* a fabric's queue is a connection: made on the transport's thread, taken at a
		 * later step (CONNECT); submissions wait in the ring meanwhile */
		qp->rec_gen = atomic_load(&c->generation);
		int rc = c->ops->qp_connect_start(qp);
		if (rc)
			return create_failed(c, qp, "the transport's connect", rc);
		hold_doorbell(qp);
		next_state(qp, QP_REC_CONNECT);
		return 0;
	}
	if (ctrlr_kind(c) != UNVME_TRANSPORT_REGISTERS) {
		/* a fabric's queue is a connection, a client's is created by the process that
		 * runs the controller: the transport creates it (no admin queue of ours) */
		uint32_t gen = atomic_load(&c->generation);
		int rc = ctrlr_create_io_queues(c, qp);
		if (rc && atomic_load(&c->generation) != gen && !c->failed)
			return -EAGAIN; /* lost again meanwhile (another reset): at the next step */
		if (rc)
			return create_failed(c, qp, "the transport's create", rc);
		rebuilt(qp, gen);
		return 0;
	}
	hold_doorbell(qp);
	next_state(qp, QP_REC_CREATE_CQ);
	return 1;
}

/* A fence's Delete I/O SQ or CQ of the queue: -EAGAIN while it is unanswered, 1 when the
 * queue's recovery moved on meanwhile (go on from its new state), 0 with *st its answer. */
static int fence_delete(struct unvme_ctrlr *c, struct unvme_qpair *qp, uint8_t opc, uint64_t now,
			int *st)
{
	struct nvme_sqe cmd = { .opc = opc, .cdw10 = qp->qid };
	int rc = qp_cmd(c, qp, &cmd, now);
	if (rc == -EAGAIN)
		return -EAGAIN;
	if (overtaken(c, qp))
		return 1;
	*st = rc;
	return 0;
}

/*
 * Advances the queue pair's recovery (fence, rebuild) as far as it goes without waiting.
 * rebuild: the caller may rewind the rings (not a split queue's poller). 0 when the queue
 * works or is rebuilding, -EAGAIN while a fence or a reset is under way, or an error.
 */
static int qp_advance(struct unvme_ctrlr *c, struct unvme_qpair *qp, bool rebuild, uint64_t now)
{
	for (;;) {
		struct nvme_sqe cmd = {0};
		int rc;
		switch ((enum qp_rec)qp->rec) {
		case QP_REC_NONE:
			if (atomic_load(&c->resetting))
				return -EAGAIN;
			if (c->failed)
				return failed_for_good(c, qp);
			if (qp->fence_wanted && !atomic_load(&qp->gone)) {
				next_state(qp, QP_REC_FENCE_SQ);
				continue;
			}
			qp->fence_wanted = false;
			if (!atomic_load(&qp->failed))
				return 0;
			if (!atomic_load(&qp->gone))
				return -EAGAIN; /* the reset it waits for has not started yet */
			if (!rebuild) {
				qpair_give_back_gone(qp);
				return qpair_split_failed(qp);
			}
			rc = rebuild_start(c, qp);
			if (rc <= 0)
				return rc;
			continue;
		case QP_REC_FENCE_SQ:
			rc = fence_delete(c, qp, NVME_ADM_DELETE_SQ, now, &qp->fence_sq_rc);
			if (rc < 0)
				return rc;
			if (rc == 0)
				next_state(qp, QP_REC_FENCE_CQ);
			continue;
		case QP_REC_FENCE_CQ: {
			int st;
			rc = fence_delete(c, qp, NVME_ADM_DELETE_CQ, now, &st);
			if (rc < 0)
				return rc;
			if (rc > 0)
				continue;
			rc = st;
			next_state(qp, QP_REC_NONE);
			qp->fence_wanted = false;
			if (deleted(qp->fence_sq_rc) && deleted(rc)) {
				atomic_store(&qp->gone, true);
				char msg[256];
				snprintf(msg, sizeof(msg), "queue %u fenced: %s; its commands complete "
					 "with ABORTED_SQ_DELETION", qp->qid, qp->fence_why);
				report(c, msg);
				continue;
			}
			char why[320];
			snprintf(why, sizeof(why), "queue %u: %s, and the controller did not delete "
				 "the queue (SQ %d, CQ %d)", qp->qid, qp->fence_why, qp->fence_sq_rc, rc);
			recovery_want_reset(c, why);
			return -EAGAIN;
		}
		case QP_REC_CREATE_CQ:
			cmd.opc = NVME_ADM_CREATE_CQ;
			cmd.prp1 = qp->cq_iova;
			cmd.cdw10 = ((uint32_t)(qp->depth - 1) << 16) | qp->qid;
			cmd.cdw11 = NVME_CREATE_CQ_PC; /* polled: no interrupts */
			rc = qp_cmd(c, qp, &cmd, now);
			if (rc == -EAGAIN)
				return 0; /* REBUILDING: entries may be queued */
			if (overtaken(c, qp))
				continue;
			if (rc)
				return create_failed(c, qp, "Create I/O CQ", rc);
			next_state(qp, QP_REC_CREATE_SQ);
			continue;
		case QP_REC_CREATE_SQ:
			cmd.opc = NVME_ADM_CREATE_SQ;
			cmd.prp1 = qp->sq_iova;
			cmd.cdw10 = ((uint32_t)(qp->depth - 1) << 16) | qp->qid;
			cmd.cdw11 = ((uint32_t)qp->qid << 16) | NVME_CREATE_SQ_PC;
			rc = qp_cmd(c, qp, &cmd, now);
			if (rc == -EAGAIN)
				return 0;
			if (overtaken(c, qp))
				continue;
			if (rc) {
				/* its CQ goes again (nobody waits for the answer) */
				struct nvme_sqe del = { .opc = NVME_ADM_DELETE_CQ, .cdw10 = qp->qid };
				(void)admin_submit_async(c, &del, NULL, 0, NULL, NULL);
				return create_failed(c, qp, "Create I/O SQ", rc);
			}
			rebuilt(qp, qp->rec_gen);
			return 0;
		case QP_REC_CONNECT:
			rc = c->ops->qp_connect_done(qp);
			if (rc == -EINPROGRESS)
				return 0; /* REBUILDING: entries may be queued */
			if (overtaken(c, qp))
				continue; /* made for the association before: connected again */
			if (rc)
				return create_failed(c, qp, "the transport's connect", rc);
			rebuilt(qp, qp->rec_gen);
			return 0;
		}
		return -EIO;
	}
}

/* ABORT: the timeout scan of a poll (at most every 10 ms). Records; sends only Aborts. */
static void scan_timeouts(struct unvme_ctrlr *c, struct unvme_qpair *qp, uint64_t now)
{
	qp->last_scan_ms = now;
	if (qp->recovering)
		return;
	if (ctrlr_fatal_now(c) || c->failed) {
		/* the controller is reset by the next steps; this queue is rebuilt after it */
		if (!c->gave_up && !atomic_load(&c->resetting))
			recovery_want_reset(c, "controller fatal status (CSTS.CFS)");
		qp->failed = 1;
		return;
	}
	if (qp->failed || qp->fence_wanted || unvme_qpair_outstanding(qp) == 0)
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
		if (state == REQ_ABORT_SENT && atomic_load(&req->abort) == REQ_ABORT_MISS) {
			late = (int)cid; /* the Abort did not find it */
			continue;
		}
		if (now - req->seen_ms < qp->timeout_ms)
			continue;
		if (state == REQ_ACTIVE) {
			struct nvme_sqe ab = { .opc = NVME_ADM_ABORT,
					       .cdw10 = qp->qid | ((uint32_t)cid << 16) };
			atomic_store(&req->abort, REQ_ABORT_PENDING);
			int rc = admin_submit_async(c, &ab, NULL, 0, abort_done, req);
			if (rc == -EAGAIN)
				continue; /* the admin lock or queue is busy: at the next scan */
			atomic_store_explicit(&req->state, REQ_ABORT_SENT, memory_order_release);
			req->seen_ms = now;
			if (rc)
				late = (int)cid;
		} else if (state == REQ_ABORT_SENT) {
			late = (int)cid;
		}
	}
	if (late < 0)
		return;
	snprintf(qp->fence_why, sizeof(qp->fence_why), "command %d got no completion within "
		 "twice its %u ms timeout", late, qp->timeout_ms);
	qp->failed = 1; /* first: no submission follows what the rebuild gives back */
	qp->fence_wanted = true;
}

int recovery_step(struct unvme_ctrlr *c, struct unvme_qpair *qp, bool scan, uint64_t now)
{
	bool io = qp && qp->qid != 0 && !qp->msg;
	if (io && scan)
		scan_timeouts(c, qp, now);
	if (io && qp->fabric && c->failed && !c->gave_up && !atomic_load(&c->resetting)) {
		/* a connection of the association failed (its pump said so and delivered its
		 * commands' errors): reconnect, as after a fatal status */
		recovery_want_reset(c, "controller fatal status (CSTS.CFS)");
		qp->failed = 1;
	}
	ctrlr_step(c, now);
	if (!io || (!atomic_load(&qp->failed) && !qp->fence_wanted))
		return 0;
	return qp_advance(c, qp, !qp->split, now);
}

void qpair_recovery_forget(struct unvme_qpair *qp)
{
	next_state(qp, QP_REC_NONE);
	qp->fence_wanted = false;
	qp->create_attempt = 0;
	if (qp->held_write32) {
		qp->write32 = qp->held_write32;
		qp->held_write32 = NULL;
	}
}

void qpair_recovery_settle(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	while (qp->rec != QP_REC_NONE && !atomic_load(&c->removed)) {
		(void)recovery_step(c, qp, false, mono_ms_coarse());
		if (qp->rec != QP_REC_NONE)
			sleep_us(500);
	}
	if (qp->held_write32) {
		qp->write32 = qp->held_write32;
		qp->held_write32 = NULL;
	}
}

int qpair_rebuild(struct unvme_qpair *qp)
{
	struct unvme_ctrlr *c = qp->ctrlr;
	if (qp->recovering)
		return -EAGAIN; /* inside this rebuild */
	for (;;) {
		uint64_t now = mono_ms_coarse();
		(void)recovery_step(c, NULL, false, now);
		int rc = qp_advance(c, qp, true, now);
		if (rc == 0 && qp->rec == QP_REC_NONE)
			return 0;
		if (rc && rc != -EAGAIN)
			return rc;
		if (rc == -EAGAIN && atomic_load(&c->resetting))
			return -EAGAIN; /* the reset is not done: the poller's steps finish it */
		sleep_us(200);
	}
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
