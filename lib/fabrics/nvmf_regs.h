/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's registers over a fabrics association, for every fabrics transport: what
 * the driver's register-level bring-up (ctrlr.c) reads and writes, mapped onto the
 * association (NVMe/TCP's and NVMe/RDMA's alike):
 *   - writing CC.EN = 0 (disable, reset, shutdown's end) ends the association: the admin
 *     connection is closed and registers read as a disabled controller's;
 *   - writing CC.EN = 1 when there is no association makes one (the transport's connect:
 *     admin connection, Connect with controller id FFFFh, authentication, CAP and VS), then
 *     Property Set CC; after a loss this retries for ctrl_loss_tmo (nvmf_reconnect.h);
 *   - a connection that fails makes CSTS read CFS set (a fatal status), so the driver's
 *     recovery (recovery.c) resets the controller, which is exactly a reconnect, and every
 *     queue pair's owner connects its queue again; a reconnect that gave up makes every
 *     register read all ones (a controller that is gone).
 * Other registers are Property Get / Set on the admin queue. AQA, ASQ and ACQ mean nothing
 * over a fabric: writes are kept for reads, not sent.
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
};

/* The transport's half, called with regs.lock held. */
struct nvmf_regs_ops {
	/* A new association: admin connection, Connect, then nvmf_regs_live with CAP and VS.
	 * 0, a negative errno or a positive NVMe status, with a message. */
	int (*connect)(void *arg);
	/* Ends the association's admin connection. */
	void (*end)(void *arg);
};

struct nvmf_regs {
	pthread_mutex_t lock;     /* the admin queue and the cached registers */
	_Atomic int assoc;        /* enum nvmf_assoc_state */
	bool ever_live;           /* a CC.EN = 1 after this is a reconnect: retry it */
	uint64_t cap;
	uint32_t vs, cc, aqa;
	uint64_t asq, acq;
	struct nvmf_assoc *fab;
	struct unvme_ctrlr *c;
	_Atomic bool closing;     /* the controller is being closed: stop retrying */
	uint32_t ctrl_loss_tmo_ms, reconnect_delay_ms;
	const struct nvmf_regs_ops *ops;
	void *arg;
};

void nvmf_regs_init(struct nvmf_regs *r, struct unvme_ctrlr *c, struct nvmf_assoc *fab,
		    uint32_t ctrl_loss_tmo_ms, uint32_t reconnect_delay_ms,
		    const struct nvmf_regs_ops *ops, void *arg);
void nvmf_regs_fini(struct nvmf_regs *r);
/* The transport's connect made the association: its CAP and VS. */
void nvmf_regs_live(struct nvmf_regs *r, uint64_t cap, uint32_t vs);

/* The register accesses of struct unvme_transport_ops (each takes the lock). */
uint32_t nvmf_regs_read32(struct nvmf_regs *r, uint32_t off);
uint64_t nvmf_regs_read64(struct nvmf_regs *r, uint32_t off);
void nvmf_regs_write32(struct nvmf_regs *r, uint32_t off, uint32_t val);
void nvmf_regs_write64(struct nvmf_regs *r, uint32_t off, uint64_t val);

/* A line about the association on stderr when the library log is on (unvme_set_log,
 * UNVME_LOG), naming the controller's device id. */
void nvmf_report(const struct unvme_ctrlr *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The keep-alive thread's tick (nvmf_keepalive.h, arg: the nvmf_regs): Keep Alive on a live
 * association, and the driver's recovery started when the association broke while nothing
 * else ran (as an I/O queue's poll would). */
void nvmf_regs_keep_alive_tick(void *arg);

#endif
