/* SPDX-License-Identifier: BSD-3-Clause */
/* The controller's registers over a fabrics association (nvmf_regs.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/common/env.h"
#include "lib/driver/ctrlr.h"
#include "nvmf_reconnect.h"
#include "nvmf_regs.h"

void nvmf_regs_init(struct nvmf_regs *r, struct unvme_ctrlr *c, struct nvmf_assoc *fab,
		    uint32_t ctrl_loss_tmo_ms, uint32_t reconnect_delay_ms,
		    const struct nvmf_regs_ops *ops, void *arg)
{
	*r = (struct nvmf_regs){.fab = fab, .c = c, .ctrl_loss_tmo_ms = ctrl_loss_tmo_ms,
				.reconnect_delay_ms = reconnect_delay_ms, .ops = ops, .arg = arg};
	pthread_mutex_init(&r->lock, NULL);
}

void nvmf_regs_fini(struct nvmf_regs *r)
{
	pthread_mutex_destroy(&r->lock);
}

void nvmf_regs_live(struct nvmf_regs *r, uint64_t cap, uint32_t vs)
{
	r->cap = cap;
	r->vs = vs;
	r->cc = 0;
	atomic_store(&r->assoc, NVMF_ASSOC_LIVE);
	r->ever_live = true;
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

static int attempt(void *arg)
{
	struct nvmf_regs *r = arg;
	return r->ops->connect(r->arg);
}

static bool closing(void *arg)
{
	struct nvmf_regs *r = arg;
	return atomic_load(&r->closing);
}

/* Reconnects after a loss, trying for ctrl_loss_tmo. */
static int reconnect(struct nvmf_regs *r)
{
	struct nvmf_reconnect policy = {.ctrl_loss_tmo_ms = r->ctrl_loss_tmo_ms,
					.reconnect_delay_ms = r->reconnect_delay_ms,
					.attempt = attempt,
					.closing = closing,
					.arg = r};
	int attempts = 0;
	int rc = nvmf_reconnect_run(&policy, &attempts);
	if (rc == 0)
		nvmf_report(r->c, "reconnected (controller %u, %d attempt%s)", r->fab->cntlid, attempts,
			    attempts == 1 ? "" : "s");
	else
		nvmf_report(r->c, "reconnecting failed after %d attempt%s: %s", attempts,
			    attempts == 1 ? "" : "s", unvme_errmsg());
	return rc;
}

uint32_t nvmf_regs_read32(struct nvmf_regs *r, uint32_t off)
{
	pthread_mutex_lock(&r->lock);
	uint32_t v = 0;
	int st = atomic_load(&r->assoc);
	if (off == NVME_REG_AQA) {
		v = r->aqa;
	} else if (st == NVMF_ASSOC_LIVE) {
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
		v = off == NVME_REG_CC ? r->cc : off == NVME_REG_VS ? r->vs : off == NVME_REG_AQA ? r->aqa : 0;
	else if (st == NVMF_ASSOC_DEAD)
		v = 0xffffffffu;
	pthread_mutex_unlock(&r->lock);
	return v;
}

uint64_t nvmf_regs_read64(struct nvmf_regs *r, uint32_t off)
{
	if (off == NVME_REG_CAP)
		return atomic_load(&r->assoc) == NVMF_ASSOC_DEAD ? UINT64_MAX : r->cap;
	if (off == NVME_REG_ASQ)
		return r->asq;
	if (off == NVME_REG_ACQ)
		return r->acq;
	pthread_mutex_lock(&r->lock);
	uint64_t v = 0;
	if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
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
	if (st != NVMF_ASSOC_LIVE) {
		int rc = r->ever_live ? reconnect(r) : r->ops->connect(r->arg);
		if (rc) {
			atomic_store(&r->assoc, NVMF_ASSOC_DEAD);
			return;
		}
	}
	if (nvmf_prop_set(r->fab, NVME_REG_CC, false, val) == 0)
		r->cc = val;
}

void nvmf_regs_write32(struct nvmf_regs *r, uint32_t off, uint32_t val)
{
	pthread_mutex_lock(&r->lock);
	if (off == NVME_REG_AQA)
		r->aqa = val; /* the admin queue is the connection: nothing to tell the controller */
	else if (off == NVME_REG_CC)
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
	pthread_mutex_lock(&r->lock);
	if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
		nvmf_prop_set(r->fab, off, true, val);
	pthread_mutex_unlock(&r->lock);
}

void nvmf_regs_keep_alive_tick(void *arg)
{
	struct nvmf_regs *r = arg;
	pthread_mutex_lock(&r->lock);
	if (atomic_load(&r->assoc) == NVMF_ASSOC_LIVE)
		nvmf_keep_alive(r->fab); /* a failure marks the association broken */
	pthread_mutex_unlock(&r->lock);
	struct unvme_ctrlr *c = r->c;
	if (c->failed && !c->gave_up && !atomic_load(&r->closing))
		ctrlr_recover_fatal(c);
}
