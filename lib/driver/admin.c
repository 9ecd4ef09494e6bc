/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands over the admin queue, serialised by a mutex so any thread may use them:
 *   - asynchronous (admin_submit_async): submitted with a callback and left on the queue;
 *     whoever polls the admin queue next reaps it. The recovery state machine (recovery.c)
 *     sends its Abort, Delete and Create commands so, from a queue pair's poll or submit,
 *     which therefore never waits for an admin command;
 *   - synchronous (unvme_admin): the asynchronous submission plus a wait that polls the
 *     admin queue and runs recovery steps, with a bounce buffer so callers may pass ordinary
 *     memory. Never entered from a queue pair's poll or submit (admin_waits_in_hot_path).
 * The data direction comes from the opcode itself (bits 1:0: 01b host to controller, 10b
 * controller to host, NVMe Base 2.0 figure "Opcodes for Admin Commands").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "errmsg.h"

static __thread char admin_me; /* its address names this thread */
static _Atomic uint32_t hot_admin_waits;

uint32_t admin_waits_in_hot_path(void)
{
	return atomic_load(&hot_admin_waits);
}

void ctrlr_admin_lock(struct unvme_ctrlr *c)
{
	pthread_mutex_lock(&c->admin_lock);
	atomic_store(&c->admin_owner, &admin_me);
}

int ctrlr_admin_trylock(struct unvme_ctrlr *c)
{
	if (ctrlr_admin_locked_here(c))
		return 0;
	if (pthread_mutex_trylock(&c->admin_lock) != 0)
		return -1;
	atomic_store(&c->admin_owner, &admin_me);
	return 1;
}

void ctrlr_admin_unlock(struct unvme_ctrlr *c)
{
	atomic_store(&c->admin_owner, NULL);
	pthread_mutex_unlock(&c->admin_lock);
}

bool ctrlr_admin_locked_here(const struct unvme_ctrlr *c)
{
	return atomic_load(&c->admin_owner) == &admin_me;
}

/* The reset's phases in which the admin queue is being rewound: nothing may be queued. */
static bool admin_queue_down(const struct unvme_ctrlr *c)
{
	uint8_t ph = atomic_load(&c->rec_phase);
	return ph == CTRLR_REC_DISABLING || ph == CTRLR_REC_ENABLING || ph == CTRLR_REC_GIVING_UP;
}

int admin_submit_async(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		       unvme_cmd_cb cb, void *arg)
{
	if (atomic_load(&c->removed))
		return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
	if (c->ops->admin_async) /* a client's owner answers it later (admin_reap, a step) */
		return c->ops->admin_async(c, cmd, buf, len, cb, arg);
	int lk = ctrlr_admin_trylock(c);
	if (lk < 0)
		return -EAGAIN; /* its holder polls the admin queue; the next step tries again */
	int rc;
	if (ctrlr_run_elsewhere(c)) {
		/* the kernel, or the process that runs the controller, carries it at once */
		struct nvme_sqe e = *cmd;
		struct nvme_cqe cpl = {0};
		rc = ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE ? c->ops->msg->admin(c, &e, buf, len, &cpl)
							       : c->ops->admin(c, &e, buf, len, &cpl);
		if (rc >= 0) {
			if (rc > 0 && !cpl.status)
				cpl.status = (uint16_t)(rc << 1);
			if (cb)
				cb(arg, &cpl);
			rc = 0;
		}
	} else if (admin_queue_down(c)) {
		rc = -EAGAIN;
	} else {
		rc = unvme_qpair_submit(c->admin, cmd, buf, len, cb, arg);
		if (rc == 0)
			unvme_qpair_ring(c->admin);
	}
	if (lk > 0)
		ctrlr_admin_unlock(c);
	return rc;
}

void admin_forget_args(struct unvme_ctrlr *c, const void *lo, const void *hi)
{
	struct unvme_qpair *aq = c->admin;
	for (uint32_t cid = 0; aq && cid + 1u < aq->depth; cid++) {
		struct unvme_req *r = &aq->reqs[cid];
		if (atomic_load(&r->state) != REQ_FREE && (const char *)r->arg >= (const char *)lo &&
		    (const char *)r->arg < (const char *)hi)
			r->cb = NULL;
	}
}

struct admin_wait {
	volatile int done;
	struct nvme_cqe cpl;
};

static void admin_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct admin_wait *w = arg;
	w->cpl = *cpl;
	w->done = 1;
}

#define DEFAULT_FORMAT_TIMEOUT_MS 600000u /* nvme-cli's format and sanitize wait as long */

uint32_t unvme_admin_limit_ms(const struct unvme_ctrlr *c, uint8_t opc)
{
	uint32_t t = c->opts.admin_timeout_ms;
	/* Format NVM and Sanitize rewrite whole namespaces before they complete: minutes on a
	 * large drive (and on QEMU's emulated one under TCG), where every other admin command
	 * is answered at once. admin_timeout_ms still bounds them from below. */
	if (opc == NVME_ADM_FORMAT_NVM || opc == NVME_ADM_SANITIZE) {
		uint32_t f = unvme_env_timeout_ms("UNVME_FORMAT_TIMEOUT_MS", DEFAULT_FORMAT_TIMEOUT_MS);
		if (t && t < f)
			t = f;
	}
	return t;
}

/* Submits cmd on the admin queue and waits for it (admin_lock held). *cid gets its command
 * id. On a failed wait the command may still be outstanding; its completion will not touch
 * this stack frame. */
static int run_locked(struct unvme_ctrlr *c, struct nvme_sqe *cmd, size_t len, struct nvme_cqe *cpl,
		      uint16_t *cid)
{
	struct admin_wait w = {0};
	int rc = admin_submit_async(c, cmd, len ? c->admin_buf : NULL, len, admin_cb, &w);
	if (rc == -EAGAIN)
		rc = unvme_fail(-EBUSY, "%s: admin queue full", c->devid);
	if (rc)
		return rc;
	*cid = c->admin->last_cid;
	/* A fabric's transport ends its own commands at the admin timeout (it closes the
	 * connection and the command completes with Command Aborted By Host, tcp_queue.c): this
	 * wait's limit is then only the last resort. */
	uint32_t t = unvme_admin_limit_ms(c, cmd->opc);
	rc = qpair_wait(c->admin, &w.done, c->admin->fabric && t ? 2 * t + 1000 : t);
	if (rc) {
		if (!w.done)
			c->admin->reqs[*cid].cb = NULL; /* w is on this stack */
		return rc;
	}
	*cpl = w.cpl;
	return 0;
}

/*
 * An admin command that got no completion in time (admin_lock held): Abort it (SQID 0), as
 * one does an I/O command, and wait for its tracker to come back. Returns true when it did;
 * false when the command is lost for good (the caller then resets the controller, which gives
 * every admin tracker back): an admin command that never completes must not hold its slot
 * for the rest of the process. An Asynchronous Event Request sent through here, which by
 * design completes only on an event, ends the same way.
 */
static bool abort_admin_locked(struct unvme_ctrlr *c, uint16_t cid)
{
	struct nvme_sqe ab = {0};
	ab.opc = NVME_ADM_ABORT;
	ab.cdw10 = (uint32_t)cid << 16; /* SQID 0 */
	struct nvme_cqe cpl;
	uint16_t abort_cid;
	if (run_locked(c, &ab, 0, &cpl, &abort_cid) != 0 || NVME_STATUS_FROM_CQE(cpl.status) ||
	    (cpl.dw0 & 1u))
		return false;
	/* aborted: its completion (Command Abort Requested) is posted with the Abort's */
	struct unvme_req *r = &c->admin->reqs[cid];
	for (int i = 0; i < 1000 && atomic_load(&r->state) != REQ_FREE; i++)
		if (unvme_qpair_poll(c->admin, 0) < 0)
			break;
	return atomic_load(&r->state) == REQ_FREE;
}

UNVME_API int unvme_admin(struct unvme_ctrlr *c, struct nvme_sqe *cmd, void *buf, size_t len,
			  struct nvme_cqe *cpl)
{
	if (!c || !cmd || (len && !buf))
		return unvme_fail(-EINVAL, "unvme_admin: controller, command and buffer are required");
	if (len > c->max_xfer && c->max_xfer)
		return unvme_fail(-EINVAL, "admin transfer of %zu bytes exceeds the controller's maximum "
				  "of %u", len, c->max_xfer);
	if (atomic_load(&c->removed))
		return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
	if (qpair_hot_depth) {
		/* a wait inside a queue pair's poll or submit's recovery step: the driver must
		 * never; counted for the test that proves it does not */
		atomic_fetch_add(&hot_admin_waits, 1);
	}
	ctrlr_admin_lock(c);
	/* an automatic reset is rewinding the admin queue: its steps run here until it is up
	 * again (each has its deadline). The lock is let go between them: a step may need
	 * qp_lock, whose holder (a queue create) may be waiting for this one */
	while (!ctrlr_run_elsewhere(c) && admin_queue_down(c)) {
		recovery_step(c, NULL, false, mono_ms_coarse());
		if (admin_queue_down(c)) {
			ctrlr_admin_unlock(c);
			sleep_us(1000);
			ctrlr_admin_lock(c);
		}
	}
	int rc = 0;
	if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE) {
		/* The transport carries it (the kernel's passthrough ioctl takes ordinary memory). */
		struct nvme_cqe local;
		struct nvme_cqe *out = cpl ? cpl : &local;
		memset(out, 0, sizeof(*out));
		rc = c->ops->msg->admin(c, cmd, buf, len, out);
		ctrlr_admin_unlock(c);
		return rc;
	}
	bool lost = false;
	if (len > c->admin_buf_len) {
		size_t want = len < 4096 ? 4096 : len;
		void *nb = unvme_dma_alloc(want, 4096);
		if (!nb) {
			rc = -ENOMEM;
			goto out;
		}
		unvme_dma_free(c->admin_buf);
		c->admin_buf = nb;
		c->admin_buf_len = want;
	}
	bool to_dev = (cmd->opc & 0x3u) == 0x1u || (cmd->opc & 0x3u) == 0x3u;
	bool from_dev = (cmd->opc & 0x2u) != 0;
	if (len) {
		if (to_dev)
			memcpy(c->admin_buf, buf, len);
		else
			memset(c->admin_buf, 0, len);
	}
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT) {
		/* a secondary process's primary runs it, on the data in our DMA memory */
		struct nvme_cqe done = {0};
		rc = c->ops->admin(c, cmd, c->admin_buf, len, &done);
		if (rc >= 0 && len && from_dev)
			memcpy(buf, c->admin_buf, len);
		if (cpl)
			*cpl = done;
		goto out;
	}
	struct nvme_cqe done;
	uint16_t cid = 0;
	rc = run_locked(c, cmd, len, &done, &cid);
	if (rc == -ETIMEDOUT) {
		bool fatal = ctrlr_fatal_now(c);
		bool aborted = !fatal && abort_admin_locked(c, cid);
		lost = !fatal && !aborted;
		rc = unvme_fail(rc, "%s: admin command 0x%02x got no completion within %u ms%s",
				c->devid, cmd->opc, unvme_admin_limit_ms(c, cmd->opc),
				fatal ? " (controller fatal status set)"
				      : aborted ? "; aborted" : "; the controller is reset");
		goto out;
	}
	if (rc) {
		(void)ctrlr_fatal_now(c);
		goto out;
	}
	cmd->cid = done.cid;
	if (len && from_dev)
		memcpy(buf, c->admin_buf, len);
	if (cpl)
		*cpl = done;
	rc = NVME_STATUS_FROM_CQE(done.status);
out:
	if (rc < 0 && atomic_load(&c->removed))
		rc = unvme_fail(-ENODEV, "%s: the device was removed while admin command 0x%02x "
				"was outstanding", c->devid, cmd->opc);
	ctrlr_admin_unlock(c);
	if (lost) {
		/* outside admin_lock: the reset takes it */
		char why[512], msg[600];
		snprintf(why, sizeof(why), "%s", unvme_errmsg());
		snprintf(msg, sizeof(msg), "admin command 0x%02x (CID %u) was lost (no completion, "
			 "Abort did not find it)", cmd->opc, cid);
		(void)ctrlr_reset_auto(c, msg);
		unvme_fail(rc, "%s", why);
	}
	return rc;
}

UNVME_API int unvme_identify(struct unvme_ctrlr *c, uint8_t cns, uint32_t nsid, uint8_t csi,
			     void *buf4096)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_IDENTIFY;
	cmd.nsid = nsid;
	cmd.cdw10 = cns;
	cmd.cdw11 = (uint32_t)csi << 24;
	return unvme_admin(c, &cmd, buf4096, 4096, NULL);
}

UNVME_API int unvme_get_log_page(struct unvme_ctrlr *c, uint8_t lid, uint32_t nsid, void *buf,
				 uint32_t len, uint64_t offset)
{
	if (len == 0 || len % 4 || offset % 4)
		return unvme_fail(-EINVAL, "log page length %u and offset %llu must be non-zero "
				  "multiples of 4", len, (unsigned long long)offset);
	struct nvme_sqe cmd = {0};
	uint32_t numd = len / 4 - 1;
	cmd.opc = NVME_ADM_GET_LOG_PAGE;
	cmd.nsid = nsid;
	cmd.cdw10 = lid | ((numd & 0xffffu) << 16);
	cmd.cdw11 = numd >> 16;
	cmd.cdw12 = (uint32_t)offset;
	cmd.cdw13 = (uint32_t)(offset >> 32);
	return unvme_admin(c, &cmd, buf, len, NULL);
}

UNVME_API int unvme_get_features(struct unvme_ctrlr *c, uint8_t fid, uint32_t nsid, uint32_t cdw11,
				 uint32_t *value)
{
	struct nvme_sqe cmd = {0};
	struct nvme_cqe cpl = {0};
	cmd.opc = NVME_ADM_GET_FEATURES;
	cmd.nsid = nsid;
	cmd.cdw10 = fid;
	cmd.cdw11 = cdw11;
	int rc = unvme_admin(c, &cmd, NULL, 0, &cpl);
	if (rc == 0 && value)
		*value = cpl.dw0;
	return rc;
}

UNVME_API int unvme_set_features(struct unvme_ctrlr *c, uint8_t fid, uint32_t nsid, uint32_t cdw11,
				 bool save, uint32_t *value)
{
	struct nvme_sqe cmd = {0};
	struct nvme_cqe cpl = {0};
	cmd.opc = NVME_ADM_SET_FEATURES;
	cmd.nsid = nsid;
	cmd.cdw10 = fid | (save ? NVME_FEAT_SAVE : 0);
	cmd.cdw11 = cdw11;
	int rc = unvme_admin(c, &cmd, NULL, 0, &cpl);
	if (rc == 0 && value)
		*value = cpl.dw0;
	return rc;
}

UNVME_API int unvme_format(struct unvme_ctrlr *c, uint32_t nsid, uint8_t lbaf, uint8_t ses)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_FORMAT_NVM;
	cmd.nsid = nsid;
	cmd.cdw10 = (lbaf & 0xfu) | (((uint32_t)ses & 0x7u) << 9) | (((uint32_t)lbaf >> 4 & 0x3u) << 12);
	int rc = unvme_admin(c, &cmd, NULL, 0, NULL);
	if (rc == 0)
		rc = unvme_ctrlr_refresh_ns(c);
	return rc;
}

UNVME_API int unvme_fw_download(struct unvme_ctrlr *c, const void *image, size_t len, uint32_t xfer)
{
	if (!image || len == 0)
		return unvme_fail(-EINVAL, "firmware image is empty");
	if (xfer == 0) {
		uint8_t fwug = c->id.fwug;
		xfer = (fwug && fwug != 0xff) ? (uint32_t)fwug * 4096u : 4096u;
	}
	if (xfer % 4 || xfer > c->max_xfer)
		return unvme_fail(-EINVAL, "firmware transfer size %u must be a multiple of 4 and at most "
				  "%u", xfer, c->max_xfer);
	const uint8_t *p = image;
	uint8_t *chunk = malloc(xfer);
	if (!chunk)
		return -ENOMEM;
	int rc = 0;
	for (size_t off = 0; off < len && rc == 0; off += xfer) {
		size_t n = len - off < xfer ? len - off : xfer;
		size_t padded = (n + 3) & ~(size_t)3; /* dword units; the image header says its length */
		memset(chunk, 0, padded);
		memcpy(chunk, p + off, n);
		struct nvme_sqe cmd = {0};
		cmd.opc = NVME_ADM_FW_DOWNLOAD;
		cmd.cdw10 = (uint32_t)(padded / 4 - 1);
		cmd.cdw11 = (uint32_t)(off / 4);
		rc = unvme_admin(c, &cmd, chunk, padded, NULL);
	}
	free(chunk);
	return rc;
}

UNVME_API int unvme_fw_commit(struct unvme_ctrlr *c, uint8_t slot, uint8_t action)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_FW_COMMIT;
	cmd.cdw10 = (slot & 0x7u) | (((uint32_t)action & 0x7u) << 3);
	int rc = unvme_admin(c, &cmd, NULL, 0, NULL);
	if (rc == 0 && action == NVME_FW_CA_ACTIVATE_NOW)
		unvme_identify(c, NVME_CNS_CTRL, 0, 0, &c->id);
	return rc;
}

UNVME_API int unvme_abort(struct unvme_ctrlr *c, uint16_t sqid, uint16_t cid, bool *aborted)
{
	struct nvme_sqe cmd = {0};
	struct nvme_cqe cpl = {0};
	cmd.opc = NVME_ADM_ABORT;
	cmd.cdw10 = sqid | ((uint32_t)cid << 16);
	int rc = unvme_admin(c, &cmd, NULL, 0, &cpl);
	if (aborted)
		*aborted = rc == 0 && !(cpl.dw0 & 1u);
	return rc;
}
