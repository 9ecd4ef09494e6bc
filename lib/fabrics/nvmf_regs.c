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

int nvmf_regs_connect_first(struct nvmf_regs *r)
{
	pthread_mutex_lock(&r->lock);
	int rc = r->ops->connect(r->arg);
	if (rc == 0) {
		atomic_store(&r->assoc, NVMF_ASSOC_LIVE);
		r->ever_live = true;
	}
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
		/* Held by someone on the live association (a Property Get, a Keep Alive: one
		 * command), or by the connect thread that took it since: wait a little at a
		 * time, looking again whether it is the latter, never for a whole attempt. */
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
		if (csts & NVME_CSTS_RDY)
			return 0;
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
			atomic_store(&r->assoc, NVMF_ASSOC_LIVE);
			nvmf_report(r->c, "reconnected (controller %u, %d attempt%s)", r->fab->cntlid,
				    attempts, attempts == 1 ? "" : "s");
		} else if (atomic_load(&r->closing)) {
			if (rc == 0)
				r->ops->end(r->arg);
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD); /* nothing waits for it any more */
		} else if (atomic_load(&r->conn_cancel)) {
			if (rc == 0)
				r->ops->end(r->arg);
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

uint32_t nvmf_regs_read32(struct nvmf_regs *r, uint32_t off)
{
	if (off == NVME_REG_AQA)
		return atomic_load(&r->aqa);
	if (!nvmf_regs_enter(r))
		return connecting_read32(r, off);
	uint32_t v = 0;
	int st = atomic_load(&r->assoc);
	if (st == NVMF_ASSOC_LIVE) {
		uint64_t val = 0;
		if (nvmf_prop_get(r->fab, off, false, &val) == 0) {
			v = (uint32_t)val;
			if (off == NVME_REG_CC)
				r->cc = v;
		} else {
			st = atomic_load(&r->assoc);
		}
	}
	if (st == NVMF_ASSOC_BROKEN)
		v = off == NVME_REG_CSTS ? NVME_CSTS_CFS : off == NVME_REG_CC ? r->cc : off == NVME_REG_VS ? r->vs : 0;
	else if (st == NVMF_ASSOC_DOWN)
		v = off == NVME_REG_CC ? r->cc : off == NVME_REG_VS ? r->vs : 0;
	else if (st == NVMF_ASSOC_DEAD)
		v = 0xffffffffu;
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
	else if (st == NVMF_ASSOC_LIVE)
		nvmf_prop_get(r->fab, off, true, &v);
	pthread_mutex_unlock(&r->lock);
	return v;
}

static void write_cc(struct nvmf_regs *r, uint32_t val)
{
	int st = atomic_load(&r->assoc);
	if (!(val & NVME_CC_EN)) {
		if (st == NVMF_ASSOC_LIVE && (r->cc & NVME_CC_EN))
			nvmf_prop_set(r->fab, NVME_REG_CC, false, val); /* best effort: it ends anyway */
		if (st == NVMF_ASSOC_LIVE || st == NVMF_ASSOC_BROKEN) {
			r->ops->end(r->arg);
			atomic_store(&r->assoc, NVMF_ASSOC_DOWN);
		}
		r->cc = val;
		return;
	}
	if (st == NVMF_ASSOC_LIVE) {
		if (nvmf_prop_set(r->fab, NVME_REG_CC, false, val) == 0)
			r->cc = val;
		return;
	}
	if (!r->ever_live) {
		/* (no association was ever made: the transport's attach failed before) */
		if (r->ops->connect(r->arg)) {
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD);
			return;
		}
		atomic_store(&r->assoc, NVMF_ASSOC_LIVE);
		r->ever_live = true;
		if (nvmf_prop_set(r->fab, NVME_REG_CC, false, val) == 0)
			r->cc = val;
		return;
	}
	if (st == NVMF_ASSOC_BROKEN)
		r->ops->end(r->arg);
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
		nvmf_prop_set(r->fab, off, false, val);
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
		nvmf_prop_set(r->fab, off, true, val);
	pthread_mutex_unlock(&r->lock);
}

void nvmf_regs_keep_alive_tick(void *arg)
{
	struct nvmf_regs *r = arg;
	if (nvmf_regs_enter(r)) {
		if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
			nvmf_keep_alive(r->fab); /* a failure marks the association broken */
		pthread_mutex_unlock(&r->lock);
	}
	struct unvme_ctrlr *c = r->c;
	if (c->failed && !c->gave_up && !atomic_load(&r->closing))
		ctrlr_recover_fatal(c);
}
