/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's registers over a fabrics association, for every fabrics transport: what
 * the driver's register-level bring-up (ctrlr.c) reads and writes, mapped onto the
 * association (NVMe/TCP's and NVMe/RDMA's alike):
 *   - writing CC.EN = 0 (disable, reset, shutdown's end) ends the association: the admin
 *     connection is closed and registers read as a disabled controller's;
 *   - the first association is made by the transport's attach (nvmf_regs_connect_first,
 *     synchronous: unvme_ctrlr_open may wait); writing CC.EN = 1 when there is none (after a
 *     loss, a reset) starts a connect thread and returns at once: it makes the association
 *     (the transport's connect: admin connection, Connect with controller id FFFFh,
 *     authentication, CAP and VS), sets CC by Property Set and waits for the controller's
 *     CSTS.RDY = 1, retrying every reconnect_delay for ctrl_loss_tmo (nvmf_reconnect.h).
 *     Meanwhile (CONNECTING) CSTS reads as a controller not ready yet (RDY = 0, no CFS), so
 *     the driver's recovery (recovery.c) checks it at each step and no poll waits for the
 *     network; when it succeeded CSTS reads the controller's (RDY = 1), when it gave up
 *     every register reads all ones. CC.EN = 0 written meanwhile stops it (at the end of
 *     the attempt under way), a later CC.EN = 1 lets it go on;
 *   - a connection that fails makes CSTS read CFS set (a fatal status), so the driver's
 *     recovery (recovery.c) resets the controller, which is exactly a reconnect, and every
 *     queue pair's owner connects its queue again; a reconnect that gave up makes every
 *     register read all ones (a controller that is gone).
 * Other registers are Property Get / Set on the admin queue. AQA, ASQ and ACQ mean nothing
 * over a fabric: writes are kept for reads, not sent.
 *
 * No recovery step waits for the network on a live association either. The lock that
 * serialises the admin queue is held only for moments, never while a command is in flight
 * (but by the connect thread, whose association reads CONNECTING meanwhile): the commands
 * of the association itself (Property Get / Set of a caller that may wait, Keep Alive) go
 * on the transport's own command id, sent, then reaped at each look with the lock let go
 * between looks (the admin queue's pump takes their answers too). A step reads CSTS with
 * nvmf_regs_read32_nowait: the value last known (the connect thread's RDY = 1), or a
 * Property Get started whose answer a later look takes; CC.EN = 0 on a live association
 * sends Property Set without waiting for its answer and ends the association at once.
 */
#ifndef UNVME_FABRICS_NVMF_REGS_H
#define UNVME_FABRICS_NVMF_REGS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nvmf_host.h"

struct unvme_ctrlr;

enum nvmf_assoc_state {
	NVMF_ASSOC_DOWN = 0, /* none (before the first, after a disable): reads as a disabled controller */
	NVMF_ASSOC_LIVE,     /* connected */
	NVMF_ASSOC_BROKEN,   /* a connection failed: CSTS reads CFS until the driver resets */
	NVMF_ASSOC_DEAD,     /* reconnecting failed for ctrl_loss_tmo: registers read all ones */
	NVMF_ASSOC_CONNECTING, /* the connect thread has the admin queue: reads as not ready */
};

/* The transport's half, called with regs.lock held (by the connect thread while the
 * association is CONNECTING: then nobody else touches the admin queue). */
struct nvmf_regs_ops {
	/* A new association: admin connection, Connect, then nvmf_regs_live with CAP and VS.
	 * 0, a negative errno or a positive NVMe status, with a message. */
	int (*connect)(void *arg);
	/* Ends the association's admin connection. */
	void (*end)(void *arg);
};

/* What the admin queue's own command id (the transport's, one command at a time) carries on
 * the live association (under lock). */
enum nvmf_slot {
	NVMF_SLOT_FREE = 0,
	NVMF_SLOT_CSTS,   /* a step's Property Get of CSTS: a later look takes its answer */
	NVMF_SLOT_WAITED, /* a command whose caller waits for it, the lock let go (slot_exec) */
	NVMF_SLOT_POSTED, /* Property Set CC.EN = 0 just before the association ends: not reaped */
};

struct nvmf_regs {
	pthread_mutex_t lock;     /* the admin queue and the cached registers; held for moments,
				     and by the connect thread during an attempt (nvmf_regs_enter) */
	_Atomic int assoc;        /* enum nvmf_assoc_state */
	bool ever_live;           /* a CC.EN = 1 after this is a reconnect: retry it */
	uint64_t cap;
	uint32_t vs, cc;
	uint32_t epoch;           /* moves on when an association ends or a new one is live */
	enum nvmf_slot slot;
	uint32_t csts;            /* CSTS last known of this association since CC was written */
	bool csts_known;
	_Atomic uint32_t aqa;     /* kept for reads, never sent */
	uint64_t asq, acq;
	struct nvmf_assoc *fab;
	struct unvme_ctrlr *c;
	_Atomic bool closing;     /* the controller is being closed: stop retrying */
	uint32_t ctrl_loss_tmo_ms, reconnect_delay_ms;
	uint32_t attempt_ms;      /* the longest one connect attempt may take (a bound) */
	const struct nvmf_regs_ops *ops;
	void *arg;
	/* the connect thread (CONNECTING). Its decision (live, down, dead) is made under lock;
	 * a CC write while it runs does not take the lock (the thread may hold it for an
	 * attempt): it sets conn_cc and conn_cancel, then looks whether the thread decided
	 * already (nvmf_regs_enter succeeds) and applies the write itself if so. */
	pthread_t conn_thread;
	bool conn_started;        /* a thread to join (under lock) */
	bool conn_ended;          /* it decided: no longer CONNECTING (under lock) */
	_Atomic bool conn_cancel; /* CC.EN = 0 was written meanwhile: stop */
	bool conn_saw_stop;       /* the thread's: its attempts stopped for conn_cancel */
	_Atomic uint32_t conn_cc; /* the CC it sets once connected; CC reads this meanwhile */
	pthread_cond_t conn_cv;   /* wakes its reconnect delay when it is to stop */
};

/* attempt_ms: how long one connect attempt may take at most (connect timeout and the
 * commands' timeouts), for the bound of nvmf_regs_enable_limit_ms. */
void nvmf_regs_init(struct nvmf_regs *r, struct unvme_ctrlr *c, struct nvmf_assoc *fab,
		    uint32_t ctrl_loss_tmo_ms, uint32_t reconnect_delay_ms, uint32_t attempt_ms,
		    const struct nvmf_regs_ops *ops, void *arg);
void nvmf_regs_fini(struct nvmf_regs *r);
/* The transport's connect made the association: its CAP and VS (the caller decides when it
 * is live). */
void nvmf_regs_live(struct nvmf_regs *r, uint64_t cap, uint32_t vs);
/* The first association, synchronously (the transport's attach): 0 and live, or the
 * connect's error with its message. */
int nvmf_regs_connect_first(struct nvmf_regs *r);
/* Closing: the connect thread stops after its attempt under way (the association then
 * reads as gone) and is joined. Call before the transport's state is freed. */
void nvmf_regs_stop(struct nvmf_regs *r);
/* How long CSTS.RDY may take to become 1 after CC.EN = 1: the connect thread's budget
 * (ctrl_loss_tmo, then at most one attempt, reconnect_delays and CAP.TO), a hang guard for
 * the driver's reset: the thread ends by itself before. */
uint64_t nvmf_regs_enable_limit_ms(const struct nvmf_regs *r);

/* Takes r->lock unless the connect thread has the association (CONNECTING): false then,
 * without waiting for it. The transport's admin doorbell and pump, and register accesses,
 * go through this, so a poll never waits for a connection being made. */
bool nvmf_regs_enter(struct nvmf_regs *r);

/* Before the transport rewinds its admin queue (the driver's ring rewound: unvme_ctrlr_open's
 * bring-up, a manual reset), lock held: waits, the lock let go meanwhile, until no command
 * of the association's own is in flight on a live association (a Keep Alive, another
 * caller's Property Get), whose answer would otherwise meet a queue that forgot it. Returns
 * at once when the association is not live (a recovery step's rewind: it ended it). */
void nvmf_regs_idle(struct nvmf_regs *r);

/* The register accesses of struct unvme_transport_ops (each takes the lock). read32 waits
 * for a live association's answer (Property Get), with the lock let go meanwhile. */
uint32_t nvmf_regs_read32(struct nvmf_regs *r, uint32_t off);
/* A recovery step's read (unvme_transport_ops.read32_nowait): never waits for the network.
 * CC is what the host wrote; CSTS the value last known of this association since CC was
 * written, else "not ready yet" (RDY = 0, no CFS) while a Property Get started here is in
 * flight (a later call takes its answer). Other registers as read32. */
uint32_t nvmf_regs_read32_nowait(struct nvmf_regs *r, uint32_t off);
uint64_t nvmf_regs_read64(struct nvmf_regs *r, uint32_t off);
void nvmf_regs_write32(struct nvmf_regs *r, uint32_t off, uint32_t val);
void nvmf_regs_write64(struct nvmf_regs *r, uint32_t off, uint64_t val);

/* A line about the association on stderr when the library log is on (unvme_set_log,
 * UNVME_LOG), naming the controller's device id. */
void nvmf_report(const struct unvme_ctrlr *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The keep-alive thread's tick (nvmf_keepalive.h, arg: the nvmf_regs): Keep Alive on a live
 * association (waited for without holding the lock), and the driver's recovery started
 * when the association broke while nothing else ran (as an I/O queue's poll would). */
void nvmf_regs_keep_alive_tick(void *arg);

#endif
