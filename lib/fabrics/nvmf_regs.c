/* SPDX-License-Identifier: BSD-3-Clause */
/* The controller's registers over a fabrics association (nvmf_regs.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/common/thread.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/errmsg.h"
#include "nvmf_reconnect.h"
#include "nvmf_regs.h"

void nvmf_regs_init(struct nvmf_regs *r, struct unvme_ctrlr *c, struct nvmf_assoc *fab,
		    uint32_t ctrl_loss_tmo_ms, uint32_t reconnect_delay_ms, uint32_t attempt_ms,
		    const struct nvmf_regs_ops *ops, void *arg)
{
	*r = (struct nvmf_regs){.fab = fab, .c = c, .ctrl_loss_tmo_ms = ctrl_loss_tmo_ms,
				.reconnect_delay_ms = reconnect_delay_ms, .attempt_ms = attempt_ms,
				.ops = ops, .arg = arg};
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->conn_cv, &ca);
	pthread_condattr_destroy(&ca);
}

void nvmf_regs_fini(struct nvmf_regs *r)
{
	nvmf_regs_stop(r);
	pthread_cond_destroy(&r->conn_cv);
	pthread_mutex_destroy(&r->lock);
}

void nvmf_regs_live(struct nvmf_regs *r, uint64_t cap, uint32_t vs)
{
	r->cap = cap;
	r->vs = vs;
	r->cc = 0;
}

void nvmf_report(const struct unvme_ctrlr *c, const char *fmt, ...)
{
	if (!unvme_log_on())
		return;
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "unvme: %s: %s\n", c->devid, msg);
}

/* ---- the association's changes, and its admin queue's own command id (lock held) ---- */

/* A new association is live: nothing of the old one's is in flight, no CSTS known of it yet
 * (the connect thread's enable tells it). */
static void assoc_live(struct nvmf_regs *r)
{
	r->epoch++;
	r->slot = NVMF_SLOT_FREE;
	r->csts_known = false;
	atomic_store(&r->assoc, NVMF_ASSOC_LIVE);
	r->ever_live = true;
}

/* Ends the association (its admin connection closed): what was in flight on it is lost, a
 * caller waiting for it sees the epoch move on. */
static void assoc_end(struct nvmf_regs *r)
{
	r->ops->end(r->arg);
	r->epoch++;
	r->slot = NVMF_SLOT_FREE;
	r->csts_known = false;
}

/* The answer of a step's CSTS Property Get taken, when it came (lock held). */
static void slot_settle(struct nvmf_regs *r)
{
	if (r->slot != NVMF_SLOT_CSTS)
		return;
	struct nvme_cqe cpl = {0};
	int rc = r->fab->ops->reap(r->fab->admin, &cpl, r->fab->timeout_ms);
	if (rc == -EINPROGRESS)
		return;
	r->slot = NVMF_SLOT_FREE;
	if (rc == 0) {
		r->csts = cpl.dw0;
		r->csts_known = true;
	}
	/* else a failed connection (the transport marked the association broken) or an NVMe
	 * status: the next look asks again */
}

/* Lets the lock go while a command is in flight and takes it back: from the connect thread
 * too (a synchronous caller may wait for its attempt; the epoch says what happened). */
static void pause_unlocked(struct nvmf_regs *r)
{
	pthread_mutex_unlock(&r->lock);
	sleep_us(100);
	pthread_mutex_lock(&r->lock);
}

static int ended(struct nvmf_regs *r)
{
	return unvme_fail(-ECONNRESET, "%s: the association ended while a command waited for it",
			  r->c->devid);
}

/*
 * A command without data on the live association's admin queue, on the transport's own
 * command id, for a caller that may wait (a register access of unvme_ctrlr_open, show-regs,
 * a manual reset; the keep-alive thread). Lock held on entry and on return, but not while
 * the command is in flight: the lock covers only moments, so a recovery step's access (the
 * admin queue's doorbell and pump, a CSTS read, the end of the association) never waits for
 * the network (nvmf_regs_enter). -ECONNRESET when the association ended meanwhile.
 */
static int slot_exec(struct nvmf_regs *r, struct nvme_sqe *cmd, struct nvme_cqe *cpl)
{
	const struct nvmf_queue_ops *ops = r->fab->ops;
	uint32_t epoch = r->epoch;
	uint64_t deadline = mono_ms_coarse() + r->fab->timeout_ms + mono_coarse_slack_ms();
	int rc;
	for (;;) {
		if (r->epoch != epoch || atomic_load(&r->assoc) != NVMF_ASSOC_LIVE)
			return ended(r);
		slot_settle(r);
		rc = r->slot == NVMF_SLOT_FREE ? ops->send(r->fab->admin, cmd) : -EAGAIN;
		if (rc != -EAGAIN)
			break;
		if (mono_ms_coarse() > deadline)
			return unvme_fail(-ETIMEDOUT, "%s: the admin queue did not take a command "
					  "within %u ms", r->c->devid, r->fab->timeout_ms);
		pause_unlocked(r); /* another thread's command is in flight there */
	}
	if (rc)
		return rc;
	r->slot = NVMF_SLOT_WAITED;
	while ((rc = ops->reap(r->fab->admin, cpl, r->fab->timeout_ms)) == -EINPROGRESS) {
		pause_unlocked(r);
		if (r->epoch != epoch)
			return ended(r); /* (its slot went with the association) */
	}
	r->slot = NVMF_SLOT_FREE;
	return rc;
}

void nvmf_regs_idle(struct nvmf_regs *r)
{
	uint32_t epoch = r->epoch;
	while (r->epoch == epoch && atomic_load(&r->assoc) == NVMF_ASSOC_LIVE) {
		slot_settle(r);
		if (r->slot == NVMF_SLOT_FREE)
			return;
		pause_unlocked(r); /* (its reap ends it at the admin timeout at the latest) */
	}
}

static int slot_prop_get(struct nvmf_regs *r, uint32_t off, bool wide, uint64_t *val)
{
	struct nvme_sqe cmd;
	nvmf_prop_get_cmd(&cmd, off, wide);
	struct nvme_cqe cpl = {0};
	int rc = slot_exec(r, &cmd, &cpl);
	return nvmf_prop_get_result(r->fab, off, wide, rc, &cpl, val);
}

static int slot_prop_set(struct nvmf_regs *r, uint32_t off, bool wide, uint64_t val)
{
	struct nvme_sqe cmd;
	nvmf_prop_set_cmd(&cmd, off, wide, val);
	int rc = slot_exec(r, &cmd, NULL);
	return nvmf_prop_set_result(r->fab, off, rc);
}

int nvmf_regs_connect_first(struct nvmf_regs *r)
{
	pthread_mutex_lock(&r->lock);
	int rc = r->ops->connect(r->arg);
	if (rc == 0)
		assoc_live(r);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

uint64_t nvmf_regs_enable_limit_ms(const struct nvmf_regs *r)
{
	uint64_t delay = r->reconnect_delay_ms ? r->reconnect_delay_ms : 100;
	/* (the driver's CAP, from the first association: r->cap is the connect thread's) */
	uint64_t cap_to = (uint64_t)(NVME_CAP_TO(r->c->cap) ? NVME_CAP_TO(r->c->cap) : 1) * 500u;
	/* an attempt may start just before ctrl_loss_tmo ends; then the controller has CAP.TO
	 * to become ready, and the driver's step may come a little late */
	return (uint64_t)r->ctrl_loss_tmo_ms + r->attempt_ms + delay + cap_to + 1000;
}

bool nvmf_regs_enter(struct nvmf_regs *r)
{
	for (;;) {
		if (atomic_load(&r->assoc) == NVMF_ASSOC_CONNECTING)
			return false;
		if (pthread_mutex_trylock(&r->lock) == 0) {
			if (atomic_load(&r->assoc) != NVMF_ASSOC_CONNECTING)
				return true;
			pthread_mutex_unlock(&r->lock);
			return false;
		}
		/* Held for a moment by someone on the live association (nobody holds it while a
		 * command is in flight: slot_exec), or by the connect thread that took it since:
		 * wait a little at a time, looking again whether it is the latter, never for a
		 * whole attempt. */
		struct timespec ts = clock_deadline_ms(CLOCK_REALTIME, 1);
		if (pthread_mutex_timedlock(&r->lock, &ts) == 0) {
			if (atomic_load(&r->assoc) != NVMF_ASSOC_CONNECTING)
				return true;
			pthread_mutex_unlock(&r->lock);
			return false;
		}
	}
}

/* ---- the connect thread (CONNECTING), lock held but while it waits between attempts ---- */

/* CC set on the new association, then CSTS.RDY = 1 within CAP.TO (NVMe Base 2.0 3.5.1). */
static int enable(struct nvmf_regs *r)
{
	int rc = nvmf_prop_set(r->fab, NVME_REG_CC, false, r->conn_cc);
	if (rc)
		return rc;
	uint64_t limit = (uint64_t)(NVME_CAP_TO(r->cap) ? NVME_CAP_TO(r->cap) : 1) * 500u;
	uint64_t deadline = mono_ms_coarse() + limit;
	unsigned delay = 100;
	for (;;) {
		uint64_t csts = 0;
		rc = nvmf_prop_get(r->fab, NVME_REG_CSTS, false, &csts);
		if (rc)
			return rc;
		if (csts & NVME_CSTS_CFS)
			return unvme_fail(-EIO, "the controller reported a fatal status (CSTS.CFS) "
					  "while enabling");
		if (csts & NVME_CSTS_RDY) {
			r->csts = (uint32_t)csts; /* a recovery step's read takes it (read32_nowait) */
			return 0;
		}
		if (mono_ms_coarse() > deadline)
			return unvme_fail(-ETIMEDOUT, "CSTS.RDY did not become 1 within CAP.TO "
					  "(%llu ms)", (unsigned long long)limit);
		sleep_us(delay);
		if (delay < 10000)
			delay *= 2;
	}
}

static int attempt(void *arg)
{
	struct nvmf_regs *r = arg;
	int rc = r->ops->connect(r->arg);
	if (rc)
		return rc;
	rc = enable(r);
	if (rc)
		r->ops->end(r->arg);
	return rc;
}

static bool stop_wanted(void *arg)
{
	struct nvmf_regs *r = arg;
	bool stop = atomic_load(&r->conn_cancel) || atomic_load(&r->closing);
	if (stop)
		r->conn_saw_stop = true;
	return stop;
}

/* Between attempts, the lock let go; in slices, so a stop whose wake-up came before the
 * wait (a CC write does not take the lock) is seen soon. */
static void pause_between(void *arg, uint32_t ms)
{
	struct nvmf_regs *r = arg;
	uint64_t until = mono_ms_coarse() + ms;
	while (!stop_wanted(r)) {
		uint64_t now = mono_ms_coarse();
		if (now >= until)
			return;
		uint64_t slice = until - now < 10 ? until - now : 10;
		struct timespec ts = clock_deadline_ms(CLOCK_MONOTONIC, slice);
		pthread_cond_timedwait(&r->conn_cv, &r->lock, &ts);
	}
}

static void *connect_main(void *arg)
{
	struct nvmf_regs *r = arg;
	struct nvmf_reconnect policy = {.ctrl_loss_tmo_ms = r->ctrl_loss_tmo_ms,
					.reconnect_delay_ms = r->reconnect_delay_ms,
					.attempt = attempt,
					.closing = stop_wanted,
					.pause = pause_between,
					.arg = r};
	pthread_mutex_lock(&r->lock);
	for (;;) {
		int attempts = 0;
		r->conn_saw_stop = false;
		int rc = nvmf_reconnect_run(&policy, &attempts);
		/* the decision, under the lock */
		if (rc == 0 && !stop_wanted(r)) {
			r->cc = atomic_load(&r->conn_cc);
			uint32_t csts = r->csts;
			assoc_live(r);
			r->csts = csts; /* enable's, just read: RDY = 1 */
			r->csts_known = true;
			nvmf_report(r->c, "reconnected (controller %u, %d attempt%s)", r->fab->cntlid,
				    attempts, attempts == 1 ? "" : "s");
		} else if (atomic_load(&r->closing)) {
			if (rc == 0)
				assoc_end(r);
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD); /* nothing waits for it any more */
		} else if (atomic_load(&r->conn_cancel)) {
			if (rc == 0)
				assoc_end(r);
			r->cc = atomic_load(&r->conn_cc);
			atomic_store(&r->assoc, NVMF_ASSOC_DOWN); /* disabled meanwhile */
		} else if (r->conn_saw_stop) {
			continue; /* stopped, then enabled again before this decision: go on */
		} else {
			nvmf_report(r->c, "reconnecting failed after %d attempt%s: %s", attempts,
				    attempts == 1 ? "" : "s", unvme_errmsg());
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD);
		}
		break;
	}
	r->conn_ended = true;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Joins a connect thread that has ended (lock held; it no longer takes the lock). */
static void reap(struct nvmf_regs *r)
{
	if (r->conn_started && r->conn_ended) {
		pthread_join(r->conn_thread, NULL);
		r->conn_started = false;
	}
}

/* CC.EN = 1 without an association: the connect thread makes one (lock held). */
static void connect_start(struct nvmf_regs *r, uint32_t cc)
{
	reap(r);
	if (atomic_load(&r->closing)) {
		atomic_store(&r->assoc, NVMF_ASSOC_DEAD); /* being closed: no new association */
		return;
	}
	atomic_store(&r->conn_cancel, false);
	atomic_store(&r->conn_cc, cc);
	r->cc = cc;
	r->conn_ended = false;
	atomic_store(&r->assoc, NVMF_ASSOC_CONNECTING);
	int rc = unvme_thread_start(&r->conn_thread, connect_main, r);
	if (rc) {
		nvmf_report(r->c, "cannot start a thread to reconnect (error %d)", rc);
		atomic_store(&r->assoc, NVMF_ASSOC_DEAD);
		return;
	}
	r->conn_started = true;
}

void nvmf_regs_stop(struct nvmf_regs *r)
{
	atomic_store(&r->closing, true);
	pthread_cond_broadcast(&r->conn_cv);
	pthread_mutex_lock(&r->lock); /* (the thread's attempt under way ends first) */
	bool started = r->conn_started;
	pthread_mutex_unlock(&r->lock);
	if (!started)
		return;
	pthread_join(r->conn_thread, NULL);
	pthread_mutex_lock(&r->lock);
	r->conn_started = false;
	pthread_mutex_unlock(&r->lock);
}

/* ---- register access ---- */

/* What a register reads while the connect thread has the association: a controller that is
 * not ready yet (CSTS 0: RDY = 0, no CFS), CC as written. */
static uint32_t connecting_read32(struct nvmf_regs *r, uint32_t off)
{
	return off == NVME_REG_CC ? atomic_load(&r->conn_cc) : 0;
}

/* What a register reads without a live association (st, lock held). */
static uint32_t offline_read32(struct nvmf_regs *r, uint32_t off, int st)
{
	switch (st) {
	case NVMF_ASSOC_BROKEN:
		return off == NVME_REG_CSTS ? NVME_CSTS_CFS : off == NVME_REG_CC ? r->cc
						: off == NVME_REG_VS ? r->vs : 0;
	case NVMF_ASSOC_DOWN:
		return off == NVME_REG_CC ? r->cc : off == NVME_REG_VS ? r->vs : 0;
	case NVMF_ASSOC_DEAD:
		return 0xffffffffu;
	case NVMF_ASSOC_CONNECTING:
		return connecting_read32(r, off); /* (a waiter took the lock between attempts) */
	default:
		return 0; /* live, but the Property Get failed */
	}
}

uint32_t nvmf_regs_read32(struct nvmf_regs *r, uint32_t off)
{
	if (off == NVME_REG_AQA)
		return atomic_load(&r->aqa);
	if (!nvmf_regs_enter(r))
		return connecting_read32(r, off);
	if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE) {
		uint64_t val = 0;
		if (slot_prop_get(r, off, false, &val) == 0 && atomic_load(&r->assoc) == NVMF_ASSOC_LIVE) {
			uint32_t v = (uint32_t)val;
			if (off == NVME_REG_CC)
				r->cc = v;
			if (off == NVME_REG_CSTS) {
				r->csts = v;
				r->csts_known = true;
			}
			pthread_mutex_unlock(&r->lock);
			return v;
		}
	}
	uint32_t v = offline_read32(r, off, atomic_load(&r->assoc));
	pthread_mutex_unlock(&r->lock);
	return v;
}

/* A step's CSTS: the last value known of this association since CC was last written (the
 * connect thread's, which saw RDY = 1; a Property Get's), without waiting. None known: a
 * Property Get is sent (when the queue's own command id is free), its answer taken by a later
 * look, and the controller reads as not ready yet meanwhile (RDY = 0, no CFS), which every
 * step takes as "look again at the next step" (each has its deadline). */
static uint32_t live_csts_nowait(struct nvmf_regs *r)
{
	slot_settle(r);
	if (atomic_load(&r->assoc) != NVMF_ASSOC_LIVE)
		return offline_read32(r, NVME_REG_CSTS, atomic_load(&r->assoc));
	if (r->csts_known)
		return r->csts;
	if (r->slot == NVMF_SLOT_FREE) {
		struct nvme_sqe cmd;
		nvmf_prop_get_cmd(&cmd, NVME_REG_CSTS, false);
		if (r->fab->ops->send(r->fab->admin, &cmd) == 0)
			r->slot = NVMF_SLOT_CSTS;
	}
	return 0;
}

uint32_t nvmf_regs_read32_nowait(struct nvmf_regs *r, uint32_t off)
{
	if (off != NVME_REG_CSTS && off != NVME_REG_CC)
		return nvmf_regs_read32(r, off);
	if (!nvmf_regs_enter(r))
		return connecting_read32(r, off);
	uint32_t v;
	int st = atomic_load(&r->assoc);
	if (st != NVMF_ASSOC_LIVE)
		v = offline_read32(r, off, st);
	else if (off == NVME_REG_CC)
		v = r->cc; /* the host's register: what it wrote */
	else
		v = live_csts_nowait(r);
	pthread_mutex_unlock(&r->lock);
	return v;
}

uint64_t nvmf_regs_read64(struct nvmf_regs *r, uint32_t off)
{
	if (off == NVME_REG_ASQ)
		return r->asq;
	if (off == NVME_REG_ACQ)
		return r->acq;
	if (!nvmf_regs_enter(r))
		return 0; /* CAP is the driver's since the first association; nothing else is read */
	uint64_t v = 0;
	int st = atomic_load(&r->assoc);
	if (off == NVME_REG_CAP)
		v = st == NVMF_ASSOC_DEAD ? UINT64_MAX : r->cap;
	else if (st == NVMF_ASSOC_LIVE && slot_prop_get(r, off, true, &v) != 0)
		v = 0;
	pthread_mutex_unlock(&r->lock);
	return v;
}

/*
 * CC.EN = 0 on a live association, which ends it: Property Set CC first, without waiting for
 * its answer. Safe, because the association is torn down right after (its admin connection
 * closed, every queue's connection with it): the target sees a controller disabled just
 * before its association goes away anyway (closing the admin connection ends the
 * association on its side too), and nothing on this host waits for the answer: the
 * connection that would carry it is gone, and the next association's admin queue starts
 * afresh (the transport's connect resets it). Best effort, as before: when the queue's own
 * command id is another's (a Keep Alive or a synchronous caller's Property Get in flight,
 * whose waiter then sees the association end), it is not sent; closing the connection tells
 * the target the same.
 */
static void disable_live(struct nvmf_regs *r, uint32_t val)
{
	slot_settle(r);
	if (r->slot == NVMF_SLOT_FREE && atomic_load(&r->assoc) == NVMF_ASSOC_LIVE) {
		struct nvme_sqe cmd;
		nvmf_prop_set_cmd(&cmd, NVME_REG_CC, false, val);
		if (r->fab->ops->send(r->fab->admin, &cmd) == 0)
			r->slot = NVMF_SLOT_POSTED; /* never reaped: assoc_end frees it */
	}
}

static void write_cc(struct nvmf_regs *r, uint32_t val)
{
	int st = atomic_load(&r->assoc);
	if (!(val & NVME_CC_EN)) {
		if (st == NVMF_ASSOC_LIVE && (r->cc & NVME_CC_EN))
			disable_live(r, val);
		st = atomic_load(&r->assoc);
		if (st == NVMF_ASSOC_LIVE || st == NVMF_ASSOC_BROKEN) {
			assoc_end(r);
			atomic_store(&r->assoc, NVMF_ASSOC_DOWN);
		}
		r->cc = val;
		return;
	}
	if (st == NVMF_ASSOC_LIVE) {
		/* (a caller that may wait: unvme_ctrlr_open's first association) */
		r->csts_known = false; /* CSTS follows CC */
		if (slot_prop_set(r, NVME_REG_CC, false, val) == 0)
			r->cc = val;
		return;
	}
	if (!r->ever_live) {
		/* (no association was ever made: the transport's attach failed before) */
		if (r->ops->connect(r->arg)) {
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD);
			return;
		}
		assoc_live(r);
		if (slot_prop_set(r, NVME_REG_CC, false, val) == 0)
			r->cc = val;
		return;
	}
	if (st == NVMF_ASSOC_BROKEN)
		assoc_end(r);
	connect_start(r, val);
}

/* CC written while the connect thread runs (it may hold the lock for an attempt: not
 * waited for). EN = 0 stops it, EN = 1 lets it go on with this CC; if it decided before it
 * could see this, the write applies to what it decided. */
static void write_cc_connecting(struct nvmf_regs *r, uint32_t val)
{
	atomic_store(&r->conn_cc, val);
	atomic_store(&r->conn_cancel, !(val & NVME_CC_EN));
	pthread_cond_broadcast(&r->conn_cv);
	if (!nvmf_regs_enter(r))
		return; /* it will see it */
	int st = atomic_load(&r->assoc);
	if ((val & NVME_CC_EN) ? st == NVMF_ASSOC_DOWN : st == NVMF_ASSOC_LIVE)
		write_cc(r, val); /* it decided on the write before this one */
	pthread_mutex_unlock(&r->lock);
}

void nvmf_regs_write32(struct nvmf_regs *r, uint32_t off, uint32_t val)
{
	if (off == NVME_REG_AQA) {
		atomic_store(&r->aqa, val); /* the admin queue is the connection: nothing to tell */
		return;
	}
	if (!nvmf_regs_enter(r)) {
		if (off == NVME_REG_CC)
			write_cc_connecting(r, val);
		return; /* no other register is written to a controller not there yet */
	}
	if (off == NVME_REG_CC)
		write_cc(r, val);
	else if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
		(void)slot_prop_set(r, off, false, val);
	pthread_mutex_unlock(&r->lock);
}

void nvmf_regs_write64(struct nvmf_regs *r, uint32_t off, uint64_t val)
{
	if (off == NVME_REG_ASQ) {
		r->asq = val;
		return;
	}
	if (off == NVME_REG_ACQ) {
		r->acq = val;
		return;
	}
	if (!nvmf_regs_enter(r))
		return;
	if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
		(void)slot_prop_set(r, off, true, val);
	pthread_mutex_unlock(&r->lock);
}

void nvmf_regs_keep_alive_tick(void *arg)
{
	struct nvmf_regs *r = arg;
	if (nvmf_regs_enter(r)) {
		if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE) {
			/* waited for with the lock let go (slot_exec): the admin queue's doorbell
			 * and pump, and recovery steps, go on meanwhile. A failure marks the
			 * association broken (the transport's). */
			struct nvme_sqe cmd;
			nvmf_keep_alive_cmd(&cmd);
			(void)slot_exec(r, &cmd, NULL);
		}
		pthread_mutex_unlock(&r->lock);
	}
	struct unvme_ctrlr *c = r->c;
	if (c->failed && !c->gave_up && !atomic_load(&r->closing))
		ctrlr_recover_fatal(c);
}
