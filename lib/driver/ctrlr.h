/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver's view of a controller, its namespaces and queue pairs (internal). */
#ifndef UNVME_DRIVER_CTRLR_H
#define UNVME_DRIVER_CTRLR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/common/clock.h"
#include "unvme/unvme.h"
#include "dma.h"
#include "transport.h"

#define REQ_NONE 0xffffu

enum req_state {
	REQ_FREE = 0,
	REQ_ACTIVE,
	REQ_ABORT_SENT, /* timed out once, Abort sent; a second timeout recovers the queue */
};

/* What the Abort of a late command answered (unvme_req.abort; written by the Abort's
 * completion, on whichever thread reaps the admin queue). */
enum req_abort {
	REQ_ABORT_PENDING = 0, /* sent, not answered yet */
	REQ_ABORT_HIT,         /* the controller found it: it completes on its own queue */
	REQ_ABORT_MISS,        /* not found, refused or lost: the queue is fenced */
};

/* One outstanding command; its index is the command id. */
struct unvme_req {
	unvme_cmd_cb cb;
	void *arg;
	uint64_t *prp_list;     /* one page, allocated the first time a transfer needs a list */
	uint64_t prp_list_iova;
	uint64_t seen_ms;       /* first timeout scan that saw it outstanding (0 = not yet) */
	uint16_t next_free;
	bool doomed;            /* outstanding when its queue was lost: completed by the recovery */
	/* enum req_state. Atomic for split queue pairs: the poller hands a tracker back to the
	 * submitter by storing REQ_FREE (release) after it has read cb and arg. */
	_Atomic uint8_t state;
	uint8_t opc;
	_Atomic uint8_t abort;  /* enum req_abort, while state is REQ_ABORT_SENT */
};

/* A queue pair's recovery (recovery.c), advanced by its owner's poll or submit one step at a
 * time; each state waits for one asynchronous admin command (or nothing). */
enum qp_rec {
	QP_REC_NONE,      /* working; or failed, waiting for a fence or the controller's reset */
	QP_REC_FENCE_SQ,  /* FENCE: Delete I/O SQ sent */
	QP_REC_FENCE_CQ,  /* FENCE: Delete I/O CQ sent */
	QP_REC_CREATE_CQ, /* REBUILD: rings rewound, doorbell held, Create I/O CQ sent */
	QP_REC_CREATE_SQ, /* REBUILD: Create I/O SQ sent */
	QP_REC_CONNECT,   /* REBUILD (fabrics): rings rewound, doorbell held, the transport connecting */
};

/* The controller's reset (recovery.c), advanced by whichever thread holds the admin lock in
 * a recovery step; CSTS.RDY is checked against a deadline at each step, never waited for. */
enum ctrlr_rec {
	CTRLR_REC_IDLE,
	CTRLR_REC_DISABLING, /* RESET: CC.EN cleared, until CSTS.RDY = 0 */
	CTRLR_REC_ENABLING,  /* RESET: admin queue given back, CC.EN set, until CSTS.RDY = 1 */
	CTRLR_REC_REINIT,    /* REINIT: Set Features (Number of Queues) sent */
	CTRLR_REC_GIVING_UP, /* failed for good: CC.EN cleared, until CSTS.RDY = 0 (quiesced) */
};

/* Bits of the controller's recovery word (unvme_ctrlr.recovery): what a poll or submit found,
 * for the next recovery step to act on. */
#define CTRLR_REC_WANT_RESET 1u /* a fatal status, a dead association, a refused fence or
				 * Create, an admin command lost: the controller is reset */

struct unvme_qpair {
	/* Hot, read-mostly: both sides of a split queue read these on every command. */
	struct nvme_sqe *sq;
	volatile struct nvme_cqe *cq;
	struct unvme_req *reqs;
	void (*write32)(void *ctx, uint32_t off, uint32_t val);
	union {
		void *bus;      /* register-based: the transport's register context */
		void *mctx;     /* message-based: the transport's queue (an io_uring, ...) */
	};
	/* Message-based transports: their queue-pair operations (NULL: memory rings, doorbells).
	 * Cached here so that the command path takes no lookup through the controller. */
	const struct unvme_msg_ops *msg;
	uint32_t sq_db;         /* doorbell offsets in BAR0 */
	uint32_t cq_db;
	uint32_t page_size;
	uint16_t depth;         /* ring entries; depth - 1 commands may be outstanding */
	bool split;
	_Atomic uint8_t failed;
	/* a fabrics transport's queue operations (transport.h), NULL for PCIe */
	const struct unvme_transport_ops *fabric;

	/* The submitter's, on a line of its own so that a split queue's poller does not pull it
	 * away on every command. nsubmitted and ncompleted are each written by one side only
	 * (a load and a store, no locked instruction): outstanding = nsubmitted - ncompleted. */
	_Alignas(64) _Atomic uint32_t nsubmitted;
	uint16_t sq_tail;
	uint16_t unrung;        /* submissions the device has not been told about */
	uint16_t free_head;     /* unshared queues: LIFO of free trackers (keeps them cache-hot) */
	uint16_t next_cid;      /* split queues: where the submitter looks for a free tracker */
	uint16_t last_cid;      /* of the latest submission, for synchronous waits */
	_Atomic uint16_t sq_tail_pub; /* split queues: the tail, for whichever side rings */
	struct dma_xlate_cache xlate; /* the chunk of the submitter's last buffer (dma.h) */

	/* The poller's. */
	_Alignas(64) _Atomic uint32_t ncompleted;
	uint16_t cq_head;
	uint16_t cq_head_rung;  /* the CQ head doorbell's value */
	uint32_t ncompleted_rung; /* ncompleted when it was written (cq_head_due) */
	uint8_t phase;
	uint8_t poll_depth;     /* > 1: a poll from a completion callback of this queue pair */
	uint32_t poll_count;
	uint32_t idle_polls;         /* outermost polls in a row that found nothing (the poller's) */
	/* Split queues: either side may ring, one at a time, so the doorbell never goes back. */
	atomic_flag ring_lock;
	uint16_t rung_tail;     /* under ring_lock */

	/* Cold. */
	_Alignas(64) struct unvme_ctrlr *ctrlr;
	uint16_t qid;
	bool recovering;          /* a recovery of this queue pair is running (its owner's thread) */
	/* Recovery (recovery.c), the owner's, except rec_rc: the pending admin command's status,
	 * stored by its completion (REC_RC_PENDING until then). */
	uint8_t rec;              /* enum qp_rec */
	bool fence_wanted;        /* a late command: fence the queue at the next step */
	uint8_t create_attempt;   /* a Create the controller refused resets it once */
	_Atomic int rec_rc;
	uint32_t rec_gen;         /* the controller's generation when the pending command went */
	uint64_t rec_sent_ms;     /* when it went (an admin command lost for good resets) */
	/* the transport's doorbell, while a rebuild holds it back (qp->write32 is then a no-op) */
	void (*held_write32)(void *ctx, uint32_t off, uint32_t val);
	int fence_sq_rc;          /* Delete I/O SQ's status, while Delete I/O CQ is out */
	char fence_why[96];
	/* The device no longer has this queue (deleted by a fence, or the controller was reset
	 * or stopped): nothing of it will complete or touch host memory any more, so what is
	 * outstanding can be given back. Set by the fencing poller or the resetting thread. */
	_Atomic bool gone;
	uint32_t generation;      /* the controller's, when its device queues were created */
	uint32_t timeout_ms;
	uint64_t last_scan_ms;
	uint64_t sq_iova;
	uint64_t cq_iova;
	struct unvme_qpair *next; /* in ctrlr->qpairs */
};

struct unvme_ns {
	struct unvme_ctrlr *ctrlr;
	uint32_t nsid;
	uint8_t csi;
	uint32_t lba_size;
	uint32_t lba_shift;
	uint64_t nlbas;
	struct nvme_id_ns id;
	struct unvme_zns_info zns; /* zoned namespaces (csi 2) only */
};

/* What happens to a controller, for the layers that wrap it (ctrlr_life_listen, events.c). */
enum ctrlr_life {
	CTRLR_LIFE_ATTACHED,    /* unvme_ctrlr_open brought it up (a listener's error fails the
				 * open with that errno) */
	CTRLR_LIFE_QUEUES_LOST, /* disabled (a reset starts, a card comes back): its I/O queues
				 * are gone, it touches no host memory (status: the disable's result) */
	CTRLR_LIFE_REMOVED,     /* its card left the slot and touches no host memory */
	CTRLR_LIFE_ARRIVED,     /* a card is back (status: 0 re-attached, or why it could not be) */
	CTRLR_LIFE_CLOSING,     /* unvme_ctrlr_close is detaching it (a listener may block) */
};
struct unvme_ctrlr;
/* A lifecycle listener: on the thread the event happened on; its return value counts for
 * CTRLR_LIFE_ATTACHED only (0, or a negative errno with a message). */
typedef int (*ctrlr_life_cb)(struct unvme_ctrlr *c, enum ctrlr_life ev, int status, void *arg);

struct unvme_ctrlr {
	const struct unvme_transport *transport; /* its name and kind; ops is transport->ops */
	const struct unvme_transport_ops *ops;
	void *transport_ctx;
	char transport_info[384];    /* how the transport reaches the device, for people */
	char *devid;                 /* as the first open gave it */
	char address[4352];          /* resolved: the key of the process's open controllers */
	uint32_t refs;               /* opens of this address not closed yet (ctrlr.c open_lock) */
	struct unvme_ctrlr *open_next;
	struct unvme_ctrlr_opts opts;
	struct dma_mapper mapper;
	bool mapper_registered;

	uint64_t cap;
	uint32_t vs;
	uint32_t dstrd;
	uint32_t page_size;
	uint32_t max_xfer;
	uint32_t xfer_limit;         /* the transport's own cap on a transfer (0: none) */
	uint32_t max_io_queues;
	struct nvme_id_ctrl id;

	pthread_mutex_t admin_lock;  /* serialises admin commands */
	struct unvme_qpair *admin;
	void *admin_buf;             /* bounce buffer for admin data, admin_buf_len bytes */
	size_t admin_buf_len;

	pthread_mutex_t qp_lock;     /* qpair list and qid allocation */
	struct unvme_qpair *qpairs;
	uint8_t *qid_used;           /* max_io_queues + 1 entries */
	uint16_t qid_last;           /* a fabric's last id taken: the next search starts after it */

	uint32_t nr_ns;
	struct unvme_ns **ns;        /* active namespaces, sorted by nsid */
	_Atomic int failed;          /* fatal status seen (any thread sets it) */

	/* Recovery from a fatal status (recovery.c). */
	_Atomic uint32_t generation; /* bumped by every reset: queue pairs older than it are stale */
	_Atomic bool resetting;      /* an automatic reset is under way */
	_Atomic bool gave_up;        /* an automatic reset failed or came too often: stay failed */
	_Atomic bool quiesced;       /* failed for good and touching no host memory (disabled, or
				      * gone: CSTS reads all ones): commands can be given back */
	_Atomic uint32_t auto_resets;
	uint64_t recent_resets_ms[3]; /* the last automatic resets, for the give-up rule */
	/* The recovery word (CTRLR_REC_* bits): set by any thread that finds a failure, acted on
	 * by the next recovery step. rec_why (under rec_lock) says why a reset was wanted. */
	_Atomic uint32_t recovery;
	pthread_mutex_t rec_lock;
	char rec_why[512];
	uint32_t rec_why_gen;        /* the generation it was wanted in (older: stale) */
	/* The reset's state machine: changed only under admin_lock. */
	_Atomic uint8_t rec_phase;   /* enum ctrlr_rec */
	uint64_t rec_deadline_ms;    /* for the CSTS.RDY change of DISABLING / ENABLING */
	char rec_cause[512];         /* the why of the reset under way */
	bool rec_giveup_gone;        /* GIVING_UP: gone already, nothing to disable */
	_Atomic int rec_reinit_rc;   /* Set Features' status (REC_RC_PENDING until it came) */
	uint32_t rec_reinit_dw0;
	/* The thread holding admin_lock (admin.c's lock functions), so that a recovery step run
	 * inside that thread's admin wait uses the lock it already has. */
	_Atomic(const void *) admin_owner;

	/* A wrapper's (transport.h): a descriptor it holds as long as the controller lives, closed
	 * when it is freed (multi-process: the lock file of the process that runs the controller,
	 * or a client's socket until its transport takes it over; -1: none); the multi-process
	 * server for the others (lib/driver/mp). */
	int wrap_fd;
	struct mp_server *mp;
	/* This process runs the controller for other processes too: it asks for every queue the
	 * controller has, theirs come out of its grant. */
	bool serves_others;
	uint32_t queue_grant;        /* a client: the I/O queues its server's controller granted */
	/* Lifecycle listeners (events.c): the layers that wrap the controller hear of it here
	 * instead of being called by name. Added while it attaches, read without a lock. */
	struct ctrlr_life_listener { ctrlr_life_cb cb; void *arg; } life[2];

	/* Hot-plug (hotplug.c): out of its slot between removal and a successful re-attach. */
	_Atomic bool removed;

	/* Event listeners and Asynchronous Event Requests (events.c). */
	pthread_mutex_t event_lock;  /* listeners; held while they are called */
	struct ctrlr_listener { unvme_event_cb cb; void *arg; } listeners[8];
	bool aer_enabled;            /* under admin_lock */
	bool aer_outstanding;        /* under admin_lock: one AER is on the admin queue */
	uint32_t aer_pending[8];     /* under admin_lock: DW0s reaped, not delivered yet */
	char aer_pending_sn[8][20];  /* the serial of the device that reported each */
	uint32_t nr_aer_pending;
};

/* Is the controller run by someone else: the kernel or nobody (a message-based transport) or
 * the primary process that shares it with this one? Then there is no admin queue of ours,
 * and nothing of the controller's to bring up, shut down or keep events on. */
static inline bool ctrlr_run_elsewhere(const struct unvme_ctrlr *c)
{
	return c->transport->kind == UNVME_TRANSPORT_MESSAGE ||
	       c->transport->kind == UNVME_TRANSPORT_CLIENT;
}

/* How the controller is reached (transport.h). */
static inline enum unvme_transport_kind ctrlr_kind(const struct unvme_ctrlr *c)
{
	return c->transport->kind;
}

/* The controller is reached through t from now on (attach, or a wrapper's claim making it a
 * client of the process that runs the device, transport.h). */
static inline void ctrlr_set_transport(struct unvme_ctrlr *c, const struct unvme_transport *t)
{
	c->transport = t;
	c->ops = t->ops;
}

/* qpair.c */
/* How many slow-path steps of a queue pair's poll or submit this thread is inside: an admin
 * wait must never start while it is not 0 (admin_waits_in_hot_path counts those that did).
 * Kept by the slow path only: the fast path takes no thread-local access (a library that is
 * loaded with dlopen, the fio engine, gets no static TLS). */
extern __thread uint32_t qpair_hot_depth;
int qpair_alloc(struct unvme_ctrlr *c, uint16_t qid, uint32_t depth, uint32_t timeout_ms,
		bool split, struct unvme_qpair **out);
void qpair_free(struct unvme_qpair *qp);
/* The queue id the device gave the queue pair (and its doorbells' offsets). */
void qpair_set_qid(struct unvme_qpair *qp, uint16_t qid);
/* Rewinds the rings to their power-on state (after a reset or before re-creation). */
void qpair_reset_rings(struct unvme_qpair *qp);
/* Completes every outstanding command locally with status (sct, sc). */
void qpair_fail_outstanding(struct unvme_qpair *qp, uint8_t sct, uint8_t sc);
/* Message-based transports: completes command cpl->cid, running its callback. A completion
 * for a command id that is not outstanding is dropped. */
void qpair_complete(struct unvme_qpair *qp, const struct nvme_cqe *cpl);
/* Marks every outstanding command doomed (the snapshot a recovery completes later), and
 * completes the doomed ones with ABORTED_SQ_DELETION. Only by the poller. */
void qpair_doom_outstanding(struct unvme_qpair *qp);
void qpair_complete_doomed(struct unvme_qpair *qp);
/* Polls until the command behind *done completes or timeout_ms passes, backing off (yield,
 * then sleeps of growing length) once the wait is long past a command's expected latency. */
int qpair_wait(struct unvme_qpair *qp, volatile int *done, uint32_t timeout_ms);
/* What a failed split queue answers: -EAGAIN during a reset, else -EIO (-ENODEV: removed)
 * with a message telling its owner to stop both sides and call unvme_qpair_recover. */
int qpair_split_failed(struct unvme_qpair *qp);

/* ctrlr.c */
/* qp_lock with a record of which thread holds it: a reset started by an admin timeout on a
 * thread that already holds it (queue create, destroy, reset) must not take it again. */
void ctrlr_lock_qps(struct unvme_ctrlr *c);
void ctrlr_unlock_qps(struct unvme_ctrlr *c);
bool ctrlr_trylock_qps(struct unvme_ctrlr *c); /* taken, or busy */
bool ctrlr_qps_locked_here(const struct unvme_ctrlr *c);
int ctrlr_enable(struct unvme_ctrlr *c);
int ctrlr_disable(struct unvme_ctrlr *c);
int ctrlr_create_io_queues(struct unvme_ctrlr *c, struct unvme_qpair *qp);
int ctrlr_delete_io_queues(struct unvme_ctrlr *c, struct unvme_qpair *qp);
/* Create I/O CQ and SQ qid on rings at those bus addresses / Delete I/O SQ and CQ qid: the
 * admin commands themselves (also for a client process's rings, mp_requests.c). */
int ctrlr_create_hw_queues(struct unvme_ctrlr *c, uint16_t qid, uint32_t depth, uint64_t sq_iova,
			   uint64_t cq_iova);
int ctrlr_delete_hw_queues(struct unvme_ctrlr *c, uint16_t qid);
/* Reads CSTS: a fatal status or a device gone (all ones) marks the controller failed. */
bool ctrlr_fatal_now(struct unvme_ctrlr *c);
/* The largest transfer of one command: MDTS (any value 0..255) within one PRP list page. */
uint32_t ctrlr_max_xfer_for(uint32_t page_size, uint8_t mdts);
/* Set Features (Number of Queues) and what the controller granted. */
int ctrlr_set_num_queues(struct unvme_ctrlr *c);
/* Number of Queues' cdw11 (the count asked for) and what a completion's dw0 granted. */
uint32_t ctrlr_num_queues_cdw11(const struct unvme_ctrlr *c);
int ctrlr_num_queues_granted(struct unvme_ctrlr *c, uint32_t dw0);
/* ctrlr_enable without its wait: the admin queue rewound and given, CC.EN set. */
void ctrlr_enable_start(struct unvme_ctrlr *c);
/* CAP.TO in milliseconds: how long CSTS.RDY may take to follow CC.EN. */
uint64_t ctrlr_ready_limit_ms(const struct unvme_ctrlr *c);
/* How long CSTS.RDY may take to become 1 after CC.EN = 1: CAP.TO, or the transport's (a
 * fabric's reconnect budget). */
uint64_t ctrlr_enable_limit_ms(const struct unvme_ctrlr *c);
/* The controller of address open in this process, with a reference taken (give it back with
 * unvme_ctrlr_close), or NULL. */
struct unvme_ctrlr *ctrlr_open_find(const char *address);

/* admin.c */
/* The admin lock (admin_lock) with a record of its holder: a recovery step inside the
 * holder's admin wait runs under the lock it has; elsewhere it only tries the lock. */
void ctrlr_admin_lock(struct unvme_ctrlr *c);
/* 1: taken (unlock it), 0: this thread holds it already, -1: another thread does */
int ctrlr_admin_trylock(struct unvme_ctrlr *c);
void ctrlr_admin_unlock(struct unvme_ctrlr *c);
bool ctrlr_admin_locked_here(const struct unvme_ctrlr *c);
/* Submits cmd on the admin queue and returns at once: cb(arg, cpl) runs on whichever thread
 * next polls the admin queue (an admin wait, unvme_ctrlr_process_events, a recovery step),
 * under the admin lock, so it may only record. buf (len bytes) is DMA memory the caller keeps
 * until then, or NULL. 0; -EAGAIN when the admin lock is another thread's or the queue is
 * full (try again at the next step); another negative errno with a message. A transport
 * without an admin queue of ours (another process or the kernel runs the controller) carries
 * it at once and cb runs before this returns. */
int admin_submit_async(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		       unvme_cmd_cb cb, void *arg);
/* Takes back cb from every admin command still outstanding whose arg lies in [lo, hi) (a
 * queue pair going away); the admin lock held. */
void admin_forget_args(struct unvme_ctrlr *c, const void *lo, const void *hi);
/* Synchronous admin calls (unvme_admin) entered on a thread inside the slow-path step of a
 * queue pair's poll or submit: none, by design (a unit test with a fake transport checks
 * it). */
uint32_t admin_waits_in_hot_path(void);

/* recovery.c (the queue pairs' machine) and recovery_ctrlr.c (the controller's) */
#define REC_RC_PENDING (-0x7fffffff) /* rec_rc, rec_reinit_rc: no completion yet */
/*
 * The one slow-path entry of a queue pair's poll and submit (qp: the caller's own; scan: the
 * 10 ms timeout scan is due, now_ms its clock), and of an admin wait (qp NULL): records what
 * it finds (late commands, a fatal status) and advances the queue pair's recovery and the
 * controller's reset by what can be done without waiting, then returns. For qp: 0 when it
 * works (or is being created again: entries may be queued, its doorbell is held until the
 * Create commands completed), -EAGAIN while a fence or a reset is under way, -EIO or -ENODEV
 * (with a message) when it cannot work until its owner or the application acts.
 */
int recovery_step(struct unvme_ctrlr *c, struct unvme_qpair *qp, bool scan, uint64_t now_ms);
/* The controller's part of a step (recovery_ctrlr.c): the admin queue reaped, the reset
 * advanced, when the admin lock can be had without waiting. */
void recovery_ctrlr_step(struct unvme_ctrlr *c, uint64_t now_ms);
/* Says what recovery did or found on stderr, when logging is on. */
void recovery_report(const struct unvme_ctrlr *c, const char *what);
/* Records that the controller must be reset (why says what happened, for the log). */
void recovery_want_reset(struct unvme_ctrlr *c, const char *why);
/* Drives the controller's recovery to its end (no reset wanted or under way), from a thread
 * that may wait: no queue pair's poll or submit. */
void recovery_run(struct unvme_ctrlr *c);
/* Ends the state machine where it is (admin lock taken): a manual reset or a hot-plug event
 * takes the controller over. */
void recovery_abandon(struct unvme_ctrlr *c);
/* Resets a controller that reported a fatal status, from a thread that may wait (an
 * application's queue create, a device process's server, a fabric's keep-alive thread). */
void ctrlr_recover_fatal(struct unvme_ctrlr *c);
/* The same reset for a controller that stopped answering without a fatal status (an admin
 * command lost for good); why says what happened. 0, or -EIO when the reset failed (the
 * controller then stays failed) or a manual reset is under way. */
int ctrlr_reset_auto(struct unvme_ctrlr *c, const char *why);
/* A failed queue pair, synchronously (unvme_qpair_recover: the owner of both sides of a split
 * queue, with both stopped): fenced if it must be, created again on the device, then its
 * commands from before complete with ABORTED_SQ_DELETION (their callbacks may submit again:
 * the queue works by then). 0; -EAGAIN while a reset is under way; -EIO when the controller
 * stays failed. */
int qpair_rebuild(struct unvme_qpair *qp);
/* The poller of a failed split queue: gives back what the device will never complete. */
void qpair_give_back_gone(struct unvme_qpair *qp);
/* Before a queue pair is destroyed (qp_lock held): its recovery's admin command outstanding,
 * if any, is answered (the queue is then working, or failed with none outstanding). */
void qpair_recovery_settle(struct unvme_qpair *qp);
/* A manual reset (its queue pairs' owners stopped) takes over: the queue pair's recovery
 * state is dropped and its doorbell given back. */
void qpair_recovery_forget(struct unvme_qpair *qp);

/* ctrlr.c: Identify, Number of Queues, namespaces (everything after CSTS.RDY). */
int ctrlr_configure(struct unvme_ctrlr *c);

/* hotplug.c: the slot of a device that was pulled out, or got a card again, tells the
 * driver (on the thread that unplugged or plugged it). */
void ctrlr_hotplug_removing(struct unvme_ctrlr *c); /* before the card goes */
void ctrlr_hotplug_removed(struct unvme_ctrlr *c);   /* once it touches nothing */
int ctrlr_hotplug_arrived(struct unvme_ctrlr *c);

/* events.c */
void ctrlr_events_init(struct unvme_ctrlr *c);
void ctrlr_events_fini(struct unvme_ctrlr *c);
/* Calls the listeners; sn (NULL: the controller's now) is the serial of the device the
 * event is about. */
void ctrlr_emit(struct unvme_ctrlr *c, enum unvme_event_type type, int status, uint32_t dw0,
		const char *sn);
/* Adds a lifecycle listener, while the controller attaches (a wrapper's claim): 0, or
 * -ENOSPC with a message. It stays until the controller is freed. */
int ctrlr_life_listen(struct unvme_ctrlr *c, ctrlr_life_cb cb, void *arg);
/* Tells the lifecycle listeners what happened, on the thread it happened on: 0, or the first
 * error a listener returned (CTRLR_LIFE_ATTACHED only; the later ones are not called). */
int ctrlr_life(struct unvme_ctrlr *c, enum ctrlr_life ev, int status);
/* A timeout from the environment (milliseconds, 1..86400000), else def; a bad value is
 * reported and ignored. */
uint32_t unvme_env_timeout_ms(const char *name, uint32_t def);
/* How long the admin path waits for a command of opcode opc: admin_timeout_ms, and for
 * Format NVM and Sanitize at least $UNVME_FORMAT_TIMEOUT_MS (default 10 minutes). */
uint32_t unvme_admin_limit_ms(const struct unvme_ctrlr *c, uint8_t opc);

/* Sends the Asynchronous Event Request again if enabled and none is outstanding (admin_lock
 * held; after an event, a reset or a re-attach). */
void ctrlr_aer_rearm_locked(struct unvme_ctrlr *c);

/* zns.c: reads the ZNS Identify data of a zoned namespace into ns->zns */
int zns_ns_fill(struct unvme_ctrlr *c, struct unvme_ns *ns);

/* ns.c */
int ns_scan(struct unvme_ctrlr *c);
void ns_free_all(struct unvme_ctrlr *c);

static inline uint32_t reg_read32(struct unvme_ctrlr *c, uint32_t off)
{
	return c->ops->read32(c->transport_ctx, off);
}
static inline void reg_write32(struct unvme_ctrlr *c, uint32_t off, uint32_t v)
{
	c->ops->write32(c->transport_ctx, off, v);
}
static inline uint64_t reg_read64(struct unvme_ctrlr *c, uint32_t off)
{
	return c->ops->read64(c->transport_ctx, off);
}
static inline void reg_write64(struct unvme_ctrlr *c, uint32_t off, uint64_t v)
{
	c->ops->write64(c->transport_ctx, off, v);
}

#endif
