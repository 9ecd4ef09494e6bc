/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transports: how the driver reaches a controller. A transport is a table of functions
 * registered by name. The register-based transports, the emulated PCIe slot
 * (pcie_emu_slot.c) and VFIO (pcie_vfio.c), fill register access and DMA mapping and share
 * the memory-ring queue pairs of qpair.c; message-based transports (io_uring passthrough,
 * NVMe/TCP) add queue-pair operations to this table, which stays NULL for the ring-based ones.
 */
#ifndef UNVME_DRIVER_TRANSPORT_H
#define UNVME_DRIVER_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct unvme_ctrlr;

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

	/* Makes a DMA region addressable by the device at iova (IOMMU programming). */
	int (*dma_map)(void *ctx, void *vaddr, uint64_t iova, size_t len);
	void (*dma_unmap)(void *ctx, uint64_t iova, size_t len);
};

/* The transport serving a resolved address, or NULL with a message naming the address. */
const struct unvme_transport_ops *unvme_transport_find(const char *address);

extern const struct unvme_transport_ops unvme_transport_emu;
extern const struct unvme_transport_ops unvme_transport_vfio;

#endif
