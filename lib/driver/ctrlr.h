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
};

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

/* ctrlr.c */
/* qp_lock with a record of which thread holds it: a reset started by an admin timeout on a
 * thread that already holds it (queue create, destroy, reset) must not take it again. */
void ctrlr_lock_qps(struct unvme_ctrlr *c);
void ctrlr_unlock_qps(struct unvme_ctrlr *c);
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
/* The controller of address open in this process, with a reference taken (give it back with
 * unvme_ctrlr_close), or NULL. */
struct unvme_ctrlr *ctrlr_open_find(const char *address);

/* recovery.c */
/* Resets a controller that reported a fatal status, from the thread that noticed it. Every
 * I/O queue pair is marked failed; each one's owner rebuilds it (qpair_rebuild). */
void ctrlr_recover_fatal(struct unvme_ctrlr *c);
/* The same reset for a controller that stopped answering without a fatal status (an admin
 * command lost for good, a queue that cannot be fenced or created again); why says what
 * happened. 0, or -EIO when the reset failed (the controller then stays failed). */
int ctrlr_reset_auto(struct unvme_ctrlr *c, const char *why);
/* A failed queue pair (after a controller reset or a fence): created again on the device,
 * then its commands from before complete with ABORTED_SQ_DELETION (their callbacks may
 * submit again: the queue works by then). 0; -EAGAIN while a reset is under way; -EIO when
 * the controller stays failed. Only by a thread that may touch both sides of the queue. */
int qpair_rebuild(struct unvme_qpair *qp);
/* The timeout scan of a poll (at most every 10 ms): Abort for a late command, a fence for one
 * late twice, a controller reset for a fatal status. */
void qpair_scan_timeouts(struct unvme_qpair *qp, uint64_t now_ms);
/* The poller of a failed split queue: gives back what the device will never complete. */
void qpair_give_back_gone(struct unvme_qpair *qp);

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
