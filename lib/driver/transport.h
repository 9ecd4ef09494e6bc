/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transports: how the driver reaches a controller. Each transport lives in a folder of its own
 * (lib/transport/<name>/, one meson option each) and registers itself (UNVME_TRANSPORT_REGISTER
 * below): a name, the device-id schemes it owns, its kind and a table of functions. The
 * registry (transport.c) finds the transport of an address and gives devid.c the schemes it
 * prints and accepts; nothing in the driver names a transport.
 *
 * Kinds (enum unvme_transport_kind), told apart by what the driver asks of the transport:
 *
 * REGISTERS: the emulated PCIe slot (lib/transport/emu) and VFIO (lib/transport/vfio) fill
 * register access and DMA mapping and share the memory-ring queue pairs of qpair.c.
 *
 * FABRICS: NVMe over Fabrics transports (NVMe/TCP) keep the same queue pairs as the host's view
 * of each queue (trackers, command ids, split ownership, recovery) and add the qp_* operations:
 * the transport carries what a PCIe device would read from the SQ ring (the qpair's doorbell
 * write sends the new entries) and writes completions into the CQ ring (qp_pump, at the start
 * of every poll), so the generic submit and poll paths are unchanged. Registers are properties
 * (Property Get/Set), reached through read32/write32 as before.
 *
 * MESSAGE: somebody else runs the controller (the kernel's NVMe driver through io_uring
 * passthrough, kernel block devices, regular files: lib/transport/uring), so there are no
 * registers; the transport carries admin commands and queue-pair submissions itself
 * (struct unvme_msg_ops). The generic queue pair keeps the trackers (command ids, callbacks,
 * split-queue hand-over); the transport turns a command into its own message and gives
 * completions back through qpair_complete().
 *
 * CLIENT: another process of ours runs the controller (lib/driver/mp/mp_client.c): its owner
 * carries out admin commands and creates the queues; the rings and doorbells are shared
 * memory. Never found by address (not registered): a wrapper's transport, chosen by its claim.
 *
 * Wrappers (struct unvme_transport_wrapper below) are layers on top of the core that take a
 * controller over at attach: multi-process (lib/driver/mp) asks, for a device other processes
 * may share, whether this process runs it (then it serves the others, following the
 * controller's lifecycle through events.c) or is a client of the process that does (then the
 * controller runs on the wrapper's CLIENT transport). The core names no wrapper.
 */
#ifndef UNVME_DRIVER_TRANSPORT_H
#define UNVME_DRIVER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unvme_ctrlr;
struct unvme_qpair;
struct nvme_sqe;
struct nvme_cqe;

/* A message-based transport's half of the work. Every function may assume the controller
 * was attached by this transport. */
struct unvme_msg_ops {
	/* One admin command, synchronously; buf is ordinary memory of len bytes, its direction
	 * the opcode's. Called under the controller's admin lock. Returns 0, a positive NVMe
	 * status (cpl filled as the device answered) or a negative errno with a message. */
	int (*admin)(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		     struct nvme_cqe *cpl);
	/* May the driver address namespace nsid (NULL: every active one)? A device id naming a
	 * single namespace (/dev/ng0n1) hides the others. */
	int (*ns_usable)(struct unvme_ctrlr *c, uint32_t nsid);
	/* unvme_ctrlr_reset: what reset means for this transport (the kernel's controller reset,
	 * nothing for a file). Queue pairs stay usable. */
	int (*reset)(struct unvme_ctrlr *c);

	/* Queue pairs. create sets qp->mctx; destroy runs once no command is outstanding. */
	int (*qp_create)(struct unvme_qpair *qp);
	void (*qp_destroy)(struct unvme_qpair *qp);
	/* Queues command cid (its tracker is already ACTIVE with its callback): 0, or a negative
	 * errno with a message when the command cannot be sent at all (nothing was queued). */
	int (*qp_submit)(struct unvme_qpair *qp, uint16_t cid, const struct nvme_sqe *cmd, void *buf,
			 size_t len);
	/* Sends what was queued (one system call for the burst). */
	void (*qp_ring)(struct unvme_qpair *qp);
	/* Rings, then reaps up to max completions (0: all) through qpair_complete(); returns the
	 * number reaped or a negative errno. */
	int (*qp_poll)(struct unvme_qpair *qp, uint32_t max);
};

struct unvme_transport_ops {
	/* Attaches to the device behind address, storing its handle in ctrlr->transport_ctx.
	 * Returns 0 or a negative errno with a message (unvme_fail). */
	int (*attach)(struct unvme_ctrlr *ctrlr, const char *address);
	void (*detach)(struct unvme_ctrlr *ctrlr);

	/* Controller registers (BAR0 for PCIe). Doorbells are registers too. A register write is
	 * a release: every store the caller made to host memory before it (SQEs, PRP lists) is
	 * visible to the device before the write, so a doorbell never overtakes its entries. */
	uint32_t (*read32)(void *ctx, uint32_t off);
	void (*write32)(void *ctx, uint32_t off, uint32_t val);
	uint64_t (*read64)(void *ctx, uint32_t off);
	void (*write64)(void *ctx, uint32_t off, uint64_t val);
	/* Optional: read32 for a recovery step (CC, CSTS), which must not wait for the device:
	 * a fabric's answers the last value known and asks in the background
	 * (lib/fabrics/nvmf_regs.h). NULL: read32, which does not wait (registers in BAR0). */
	uint32_t (*read32_nowait)(void *ctx, uint32_t off);

	/* Makes a DMA region addressable by the device at iova (IOMMU programming). A
	 * message-based transport is told about DMA memory the same way (to register buffers). */
	int (*dma_map)(void *ctx, void *vaddr, uint64_t iova, size_t len);
	void (*dma_unmap)(void *ctx, uint64_t iova, size_t len);

	/* Optional: unvme_ctrlr_close is starting (stop background threads). */
	void (*quiesce)(struct unvme_ctrlr *ctrlr);

	/* Sharing a controller between processes (lib/driver/mp/mp.h). A device that other processes can
	 * reach: share_doorbells hands out a descriptor whose pages from *off on (len bytes) are
	 * laid out like the doorbell area, where clients write their doorbells (a memfd the
	 * emulated device watches, with a wake word at *wake_off that the device may sleep on,
	 * MP_NO_WAKE when there is none; a VFIO device's BAR0 past its registers). A client's
	 * transport: the owner of the controller carries out its admin commands (admin, as
	 * unvme_msg_ops.admin; the transport then has no admin queue and brings up nothing),
	 * creates and deletes its I/O queues on its rings (queue_create sets the queue id the
	 * owner chose, qpair_set_qid) and maps its DMA memory, told where the pages are
	 * (dma_map_shared, instead of dma_map). */
	int (*share_doorbells)(void *ctx, int *fd, uint64_t *off, size_t *len, uint64_t *wake_off);
	/* Should the device at address live in a device process of its own (it outlives the
	 * processes that use it: an emulated device that is named or kept in files)? NULL: no,
	 * the first process that opens it runs it. */
	bool (*serve_apart)(const char *address);
	/* Does the platform keep the IOMMU's mappings when a card is replaced in the slot (the
	 * emulated slot does)? Then a client's memory stays mapped across a hot-plug and its
	 * session goes on; otherwise a removal ends every client's session. */
	bool iommu_outlives_card;
	int (*admin)(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
		     struct nvme_cqe *cpl);
	int (*queue_create)(struct unvme_qpair *qp);
	int (*queue_delete)(struct unvme_qpair *qp);
	int (*dma_map_shared)(void *ctx, void *vaddr, uint64_t iova, size_t len, int fd, uint64_t off);
	/* A client's, for the recovery inside a poll or submit, which must not wait for the
	 * owner: admin_async sends an admin command and returns (0, -EAGAIN to send it at a later
	 * step, or a negative errno with a message); cb(arg, completion) runs at the admin_reap
	 * (a recovery step) after the owner answered. admin_forget drops the callbacks whose arg
	 * lies in [lo, hi) (a queue pair being freed). queue_create_start asks the owner to
	 * create qp's queues again (0, -EAGAIN, or an error); queue_create_done answers
	 * -EINPROGRESS until it did, then queue_create's result, or -ESTALE when the queue it
	 * made went with a reset since (make it again). */
	int (*admin_async)(struct unvme_ctrlr *c, const struct nvme_sqe *cmd, void *buf, size_t len,
			   void (*cb)(void *arg, const struct nvme_cqe *cpl), void *arg);
	void (*admin_reap)(struct unvme_ctrlr *c);
	void (*admin_forget)(struct unvme_ctrlr *c, const void *lo, const void *hi);
	int (*queue_create_start)(struct unvme_qpair *qp);
	int (*queue_create_done)(struct unvme_qpair *qp);
	/* A client's: Asynchronous Events from the controller's owner (unvme_ctrlr_aer_enable),
	 * and an emulated card pulled out or put back in the owner's slot (unvme_emu_unplug,
	 * unvme_emu_plug). */
	int (*events_subscribe)(struct unvme_ctrlr *c);
	void (*events_poll)(struct unvme_ctrlr *c); /* takes in the notices that came */
	int (*card_unplug)(struct unvme_ctrlr *c);
	int (*card_plug)(struct unvme_ctrlr *c, const char *card);
	/* A client's unvme_ctrlr_reset: the owner resets the controller (0 once this process
	 * knows its queues are gone), or a negative errno with a message (-EPERM: it may not). */
	int (*ctrlr_reset)(struct unvme_ctrlr *c);
	/* A client's: is the process that ran the controller gone (its socket closed)? The
	 * device went with it, so a recovery is a removal. */
	bool (*orphaned)(struct unvme_ctrlr *c);

	/* Fabrics queue pairs (FABRICS transports only). qp_init runs when a queue pair is allocated and
	 * sets qp->bus / qp->write32 to the transport's queue and doorbell; qp_reset when its
	 * rings are rewound. qp_connect / qp_disconnect replace Create / Delete I/O SQ and CQ.
	 * qp_map sets the command's data pointer (for every command, also without data).
	 * qp_pump moves what arrived into the CQ ring and sends what is pending. */
	int (*qp_init)(struct unvme_qpair *qp);
	void (*qp_fini)(struct unvme_qpair *qp);
	void (*qp_reset)(struct unvme_qpair *qp);
	int (*qp_connect)(struct unvme_qpair *qp);
	void (*qp_disconnect)(struct unvme_qpair *qp);
	int (*qp_map)(struct unvme_qpair *qp, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len);
	void (*qp_pump)(struct unvme_qpair *qp);
	/* Optional (fabrics): qp_connect without waiting, for the recovery's rebuild inside a
	 * poll. qp_connect_start begins it (0, or an error at once); qp_connect_done answers
	 * -EINPROGRESS while it runs, then qp_connect's result. Meanwhile the queue's pump moves
	 * nothing and its doorbell is held back; qp_reset, qp_connect, qp_disconnect and
	 * qp_fini wait for it to end. */
	int (*qp_connect_start)(struct unvme_qpair *qp);
	int (*qp_connect_done)(struct unvme_qpair *qp);
	/* Optional: how long CSTS.RDY may take to become 1 after CC.EN = 1, when not CAP.TO (a
	 * fabric's CC.EN = 1 makes a new association, retried for ctrl_loss_tmo). */
	uint64_t (*enable_limit_ms)(struct unvme_ctrlr *c);

	/* MESSAGE transports only (their register entries above are unused). */
	const struct unvme_msg_ops *msg;
};

enum unvme_transport_kind {
	UNVME_TRANSPORT_REGISTERS, /* BAR0 and doorbells (emu, vfio) */
	UNVME_TRANSPORT_FABRICS,   /* rings kept, registers are properties, qp_* hooks (tcp) */
	UNVME_TRANSPORT_MESSAGE,   /* somebody else runs the controller (uring_*): msg */
	UNVME_TRANSPORT_CLIENT,    /* another process of ours runs it (a wrapper's): admin etc. */
};

struct unvme_transport {
	const char *name; /* unvme_ctrlr_transport() */
	/* Device-id prefixes this transport owns ("nvme-tcp://"), NULL-terminated; an address
	 * starting with one is never looked up as an alias. NULL: none. */
	const char *const *schemes;
	/* Optional: does an address without a scheme have this transport's shape (an absolute
	 * path)? Such an address is not looked up as an alias either. */
	bool (*shape)(const char *address);
	/* Optional: an address of this transport's shape that matches did not take: says why
	 * (unvme_fail) and returns the negative errno (-ENODEV, -ENOENT for a missing path). */
	int (*explain)(const char *address);
	enum unvme_transport_kind kind;
	/* Where its schemes appear in lists and when matching tries it (lower first). Matches are
	 * disjoint, so only the order of the printed scheme list depends on it. */
	int rank;
	/* Does this transport serve the resolved address? */
	int (*matches)(const char *address);
	const struct unvme_transport_ops *ops;
};

/* Adds t to the registry; a transport whose kind and functions disagree, or one too many,
 * stops the program with a message (a build mistake, found by the first test that runs). */
void unvme_transport_register(const struct unvme_transport *t);
/* Registers t before main runs (a constructor in t's own file). The library's pieces are
 * linked whole (meson.build: link_whole), so no linker drops a transport nobody names. The
 * earliest priority a program may use (101): a program linked statically whose own
 * constructor opens a device (tests/unit/driver/test_mp.c's children do) finds the registry
 * filled, as it does with libunvme.so, whose constructors run before the program's. */
#define UNVME_TRANSPORT_REGISTER(t)                                                           \
	__attribute__((constructor(101))) static void unvme_transport_register_##t(void)      \
	{                                                                                     \
		unvme_transport_register(&(t));                                               \
	}

/* A layer on top of the core that may take a controller over when it attaches (multi-process,
 * lib/driver/mp). Asked once the address's transport is known (c->transport, c->ops), before
 * its attach runs. */
struct unvme_transport_wrapper {
	const char *name;
	/* 0: not taken, the controller runs on its own transport as usual; 1: taken, *use is the
	 * transport it runs on from now on: left as it is (it runs here; the wrapper may follow
	 * its lifecycle, ctrlr_life_listen) or the wrapper's own (somebody else runs it); or a
	 * negative errno with a message (the open fails with it). */
	int (*claim)(struct unvme_ctrlr *c, const struct unvme_transport **use);
};

/* Adds w to the wrappers asked at every attach (in the order they registered); a wrapper
 * without a name or claim, or one too many, stops the program with a message. */
void unvme_transport_wrapper_register(const struct unvme_transport_wrapper *w);
/* Registers w before main runs, as UNVME_TRANSPORT_REGISTER does a transport (its piece is
 * linked whole with the transports: nothing names it). */
#define UNVME_TRANSPORT_WRAPPER_REGISTER(w)                                                   \
	__attribute__((constructor(101))) static void unvme_transport_wrapper_register_##w(void) \
	{                                                                                     \
		unvme_transport_wrapper_register(&(w));                                       \
	}
/* Asks the registered wrappers in turn whether one takes c (struct unvme_transport_wrapper):
 * the first that does decides *use; 0 when none does (*use unchanged), 1, or its negative
 * errno. */
int unvme_transport_wrap(struct unvme_ctrlr *c, const struct unvme_transport **use);

/* The transport serving a resolved address, or NULL with a message naming the address and
 * *err (may be NULL) the negative errno that says why (-ENODEV, -ENOENT for a missing path). */
const struct unvme_transport *unvme_transport_find(const char *address, int *err);
/* The registered transports in rank order: the i-th, NULL past the last. */
const struct unvme_transport *unvme_transport_at(size_t i);
/* The registered transport called name, or NULL. */
const struct unvme_transport *unvme_transport_by_name(const char *name);
/* Is address one a transport names by its scheme or shape (never an alias)? */
bool unvme_transport_claims(const char *address);
/* The registered schemes in rank order, joined by ", " ("emu://, nvme-tcp://, ..."). */
const char *unvme_transport_schemes(void);

/* The handle an attach stores for the controller it attached (ctrlr->transport_ctx), for
 * transports that see the driver only through this interface (the host targets, lib/hosttgt). */
void unvme_transport_ctx_set(struct unvme_ctrlr *ctrlr, void *ctx);
void *unvme_transport_ctx(const struct unvme_ctrlr *ctrlr);

#endif
