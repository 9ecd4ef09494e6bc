/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's reset, one step at a time (recovery.c has the whole recovery model and the
 * queue pairs' machine; this file is the controller's machine, enum ctrlr_rec).
 *
 * Run by whichever thread holds the admin lock in a recovery step, started by the recovery
 * word's CTRLR_REC_WANT_RESET (a fatal status, a dead fabric association, a refused fence or
 * Create, an admin command lost for good):
 *   RESET    every I/O queue pair marked failed; CC.EN cleared; at the step that finds
 *            CSTS.RDY = 0 (the controller touches no host memory) every queue pair is gone,
 *            the admin queue's commands are given back and CC.EN is set again;
 *   REINIT   at the step that finds CSTS.RDY = 1: Set Features (Number of Queues); its
 *            completion ends the reset (generation moves on, failed clears).
 * CSTS.RDY is never waited for: each step checks it against a deadline (CAP.TO, or a fabric's
 * reconnect budget). Give-up (CSTS all ones, three automatic resets within ten seconds, a
 * failed step) disables the controller the same way and quiesces it. A step reads CC and
 * CSTS through read32_nowait where the transport has it: over a fabric a register read is a
 * command on the network, so the step takes the value last known (a Property Get is sent
 * when none is, its answer taken at a later step) and the next step looks again; CC.EN = 0
 * ends a fabric's association without waiting for the answer to its Property Set
 * (lib/fabrics/nvmf_regs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/common/env.h"
#include "ctrlr.h"
#include "errmsg.h"

#define GIVE_UP_WINDOW_MS 10000

void recovery_report(const struct unvme_ctrlr *c, const char *what)
{
	if (unvme_log_on())
		fprintf(stderr, "unvme: %s: %s\n", c->devid, what);
}

/* A register as a step reads it: never waiting for the device (a fabric answers with what
 * it knows and asks in the background; the next step looks again). */
static uint32_t step_read32(struct unvme_ctrlr *c, uint32_t off)
{
	if (c->ops->read32_nowait)
		return c->ops->read32_nowait(c->transport_ctx, off);
	return reg_read32(c, off);
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
	recovery_report(c, msg);
	c->rec_giveup_gone = gone;
	if (!gone) {
		uint32_t cc = step_read32(c, NVME_REG_CC);
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
		recovery_report(c, msg);
		reset_over(c);
		return 0;
	}
	uint32_t csts = step_read32(c, NVME_REG_CSTS);
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
	uint32_t cc = step_read32(c, NVME_REG_CC);
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
		recovery_report(c, msg);
		reset_over(c);
		return true;
	}
	switch (ph) {
	case CTRLR_REC_IDLE:
		if (!(atomic_load(&c->recovery) & CTRLR_REC_WANT_RESET))
			return false;
		return reset_start(c, now) == 0 && atomic_load(&c->rec_phase) != CTRLR_REC_IDLE;
	case CTRLR_REC_DISABLING:
		csts = step_read32(c, NVME_REG_CSTS);
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
		csts = step_read32(c, NVME_REG_CSTS);
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
		recovery_report(c, done);
		return true;
	}
	case CTRLR_REC_GIVING_UP: {
		bool gone = c->rec_giveup_gone;
		csts = gone ? 0xffffffffu : step_read32(c, NVME_REG_CSTS);
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
void recovery_ctrlr_step(struct unvme_ctrlr *c, uint64_t now)
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
		recovery_ctrlr_step(c, mono_ms_coarse());
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
UNVME_API uint32_t unvme_ctrlr_reset_count(const struct unvme_ctrlr *c)
{
	return atomic_load(&c->auto_resets);
}
