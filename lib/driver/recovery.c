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
 * step, an admin wait, unvme_ctrlr_process_events). A multi-process client has no admin
 * queue: its commands are requests to the process that runs the controller, sent without
 * waiting (the transport's admin_async) and answered at a later step (admin_reap, at the top
 * of every step). No poll or submit enters an admin wait.
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
 *              running on a thread of its own, its result taken at a later step; a
 *              multi-process client's: CONNECT too, a request to the process that runs
 *              the controller, its reply taken at a later step);
 *              meanwhile submit may queue entries, nothing rings; when both completed (or
 *              the connection is made) the doorbell takes the tail and the lost commands
 *              complete with ABORTED_SQ_DELETION from the queue's own poll. A Create (a
 *              connect) the controller refuses wants a reset once; a second refusal is an
 *              error.
 *   The controller's (recovery_ctrlr.c; whichever thread holds the admin lock in a step),
 *   enum ctrlr_rec,
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
 *   way (CONNECT, above). On a live association a step waits for no command either (its
 *   CSTS is the value known, CC.EN = 0 is not waited for: lib/fabrics/nvmf_regs.h).
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

#define REC_RC_UNSENT (-0x7ffffffe) /* the state's command is not on the admin queue yet */

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

/* The transport that makes a queue without waiting (CONNECT): a fabric's connect, run on a
 * thread of its own, or a client's request to the process that runs the controller, answered
 * at a later step. Start: 0, -EAGAIN (start again at the next step) or an error; done:
 * -EINPROGRESS while it is under way, then the result. */
static int make_start(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	return ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT ? c->ops->queue_create_start(qp)
						       : c->ops->qp_connect_start(qp);
}

static int make_done(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	return ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT ? c->ops->queue_create_done(qp)
						       : c->ops->qp_connect_done(qp);
}

static bool made_off_the_step(const struct unvme_ctrlr *c)
{
	return (ctrlr_kind(c) == UNVME_TRANSPORT_FABRICS && c->ops->qp_connect_start) ||
	       (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT && c->ops->queue_create_start);
}

/* REBUILD's start: the device has no queue of this id any more. */
static int rebuild_start(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	if (qp->qid > c->max_io_queues)
		return unvme_fail(-EIO, "queue %u: the controller grants only %u queues after its "
				  "reset", qp->qid, c->max_io_queues);
	qpair_doom_outstanding(qp);
	qpair_reset_rings(qp);
	if (made_off_the_step(c)) {
		/* a fabric's queue is a connection, made on the transport's thread; a client's
		 * is created by the process that runs the controller when it reads the request:
		 * taken at a later step (CONNECT); submissions wait in the ring meanwhile */
		qp->rec_gen = atomic_load(&c->generation);
		int rc = make_start(c, qp);
		if (rc == -EAGAIN)
			return -EAGAIN; /* no room to send it now: at the next step */
		if (rc)
			return create_failed(c, qp, ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT
				? "the request to create it" : "the transport's connect", rc);
		hold_doorbell(qp);
		next_state(qp, QP_REC_CONNECT);
		return 0;
	}
	if (ctrlr_kind(c) != UNVME_TRANSPORT_REGISTERS) {
		/* a fabric's queue is a connection, a client's is created by the process that
		 * runs the controller: a transport that cannot do it off the step creates it
		 * (no admin queue of ours) */
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
				recovery_report(c, msg);
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
			rc = make_done(c, qp);
			if (rc == -EINPROGRESS)
				return 0; /* REBUILDING: entries may be queued */
			if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT) {
				/* a client's queue made after a reset it heard of meanwhile is not
				 * lost (the transport knows by the server's epochs); one made before
				 * it (-ESTALE), or refused while a reset was under way, is made
				 * again */
				if (rc == -ESTALE) {
					next_state(qp, QP_REC_NONE);
					continue;
				}
				if (rc && overtaken(c, qp))
					continue;
			} else if (overtaken(c, qp)) {
				continue; /* made for the association before: connected again */
			}
			if (rc)
				return create_failed(c, qp, ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT
					? "the process that runs the controller" : "the transport's connect", rc);
			rebuilt(qp, atomic_load(&c->generation));
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
	if (c->ops->admin_reap)
		c->ops->admin_reap(c); /* a client's: the answers that came to its requests */
	if (io && scan)
		scan_timeouts(c, qp, now);
	if (io && qp->fabric && c->failed && !c->gave_up && !atomic_load(&c->resetting)) {
		/* a connection of the association failed (its pump said so and delivered its
		 * commands' errors): reconnect, as after a fatal status */
		recovery_want_reset(c, "controller fatal status (CSTS.CFS)");
		qp->failed = 1;
	}
	recovery_ctrlr_step(c, now);
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
