/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transports: how the driver reaches a controller. A transport is a table of functions
 * registered by name. The register-based transports, the emulated PCIe slot
 * (pcie_emu_slot.c) and VFIO (pcie_vfio.c), fill register access and DMA mapping and share
 * the memory-ring queue pairs of qpair.c.
 *
 * NVMe over Fabrics transports (NVMe/TCP) keep the same queue pairs as the host's view of
 * each queue (trackers, command ids, split ownership, recovery) and add the qp_* operations,
 * NULL for PCIe: the transport carries what a PCIe device would read from the SQ ring (the
 * qpair's doorbell write sends the new entries) and writes completions into the CQ ring
 * (qp_pump, at the start of every poll), so the generic submit and poll paths are unchanged.
 * Registers are properties (Property Get/Set), reached through read32/write32 as before.
 *
 * Message-based transports (the kernel's NVMe driver through io_uring passthrough, kernel
 * block devices, regular files): somebody else runs the controller, so there are no
 * registers; the transport carries admin commands and queue-pair submissions itself
 * (struct unvme_msg_ops). The generic queue pair keeps the trackers (command ids, callbacks,
 * split-queue hand-over); the transport turns a command into its own message and gives
 * completions back through qpair_complete().
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
	const char *name;
	/* Does this transport serve the resolved address? */
	int (*matches)(const char *address);
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

	/* Makes a DMA region addressable by the device at iova (IOMMU programming). A
	 * message-based transport is told about DMA memory the same way (to register buffers). */
	int (*dma_map)(void *ctx, void *vaddr, uint64_t iova, size_t len);
	void (*dma_unmap)(void *ctx, uint64_t iova, size_t len);

	/* Optional: unvme_ctrlr_close is starting (stop background threads). */
	void (*quiesce)(struct unvme_ctrlr *ctrlr);

	/* Sharing a controller between processes (mp.h). A device that other processes can
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

	/* Fabrics queue pairs (NULL for PCIe). qp_init runs when a queue pair is allocated and
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

	/* Message-based transports only (NULL for register-based ones, whose register entries
	 * above are then unused). */
	const struct unvme_msg_ops *msg;
};

/* The transport serving a resolved address, or NULL with a message naming the address and
 * *err (may be NULL) the negative errno that says why (-ENODEV, -ENOENT for a missing path). */
const struct unvme_transport_ops *unvme_transport_find(const char *address, int *err);

extern const struct unvme_transport_ops unvme_transport_emu;
extern const struct unvme_transport_ops unvme_transport_vfio;
extern const struct unvme_transport_ops unvme_transport_ftl;    /* host FTL (lib/ftl) */
extern const struct unvme_transport_ops unvme_transport_hostkv; /* host KV engine (lib/hostkv) */
extern const struct unvme_transport_ops unvme_transport_tcp;
extern const struct unvme_transport_ops unvme_transport_uring_passthru;
extern const struct unvme_transport_ops unvme_transport_uring_block;
extern const struct unvme_transport_ops unvme_transport_uring_file;

#endif
