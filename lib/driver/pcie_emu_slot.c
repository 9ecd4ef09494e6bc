/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCIe slot the emulated controller is plugged into. This file is the only place where
 * the driver meets hw/emu, and it meets only the card's external interface: BAR0 register
 * access and the platform IOMMU. Everything above it is the same code that drives hardware.
 */
#include <errno.h>
#include <string.h>

#include "hw/emu/emu_device.h"
#include "lib/ftl/target.h"
#include "ctrlr.h"
#include "devid.h"
#include "errmsg.h"
#include "transport.h"

static int emu_matches(const char *address)
{
	return unvme_addr_is_emu(address);
}

static int emu_attach(struct unvme_ctrlr *ctrlr, const char *address)
{
	char err[512] = "";
	struct emu_device *dev;
	int rc = emu_device_create(address, &dev, err, sizeof(err));
	if (rc)
		return unvme_fail(rc, "%s", err[0] ? err : strerror(-rc));
	ctrlr->transport_ctx = dev;
	return 0;
}

static void emu_detach(struct unvme_ctrlr *ctrlr)
{
	emu_device_destroy(ctrlr->transport_ctx);
	ctrlr->transport_ctx = NULL;
}

static uint32_t emu_read32(void *ctx, uint32_t off)
{
	return emu_mmio_read32(ctx, off);
}

static void emu_write32(void *ctx, uint32_t off, uint32_t val)
{
	emu_mmio_write32(ctx, off, val);
}

static uint64_t emu_read64(void *ctx, uint32_t off)
{
	return emu_mmio_read64(ctx, off);
}

static void emu_write64(void *ctx, uint32_t off, uint64_t val)
{
	emu_mmio_write64(ctx, off, val);
}

static int emu_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	return emu_iommu_map(ctx, vaddr, iova, len);
}

static void emu_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	emu_iommu_unmap(ctx, iova, len);
}

const struct unvme_transport_ops unvme_transport_emu = {
	.name = "emu",
	.matches = emu_matches,
	.attach = emu_attach,
	.detach = emu_detach,
	.read32 = emu_read32,
	.write32 = emu_write32,
	.read64 = emu_read64,
	.write64 = emu_write64,
	.dma_map = emu_dma_map,
	.dma_unmap = emu_dma_unmap,
};

/* Host targets (lib/ftl/target.h) are emulated controllers over media the host builds on
 * another device: the same slot, their own attach. */
static int ftl_matches(const char *address)
{
	return strncmp(address, UNVME_FTL_SCHEME, strlen(UNVME_FTL_SCHEME)) == 0;
}

static int hostkv_matches(const char *address)
{
	return strncmp(address, UNVME_HOSTKV_SCHEME, strlen(UNVME_HOSTKV_SCHEME)) == 0;
}

const struct unvme_transport_ops unvme_transport_ftl = {
	.name = "ftl",
	.matches = ftl_matches,
	.attach = unvme_ftl_attach,
	.detach = unvme_ftl_detach,
	.read32 = emu_read32,
	.write32 = emu_write32,
	.read64 = emu_read64,
	.write64 = emu_write64,
	.dma_map = emu_dma_map,
	.dma_unmap = emu_dma_unmap,
};

const struct unvme_transport_ops unvme_transport_hostkv = {
	.name = "hostkv",
	.matches = hostkv_matches,
	.attach = unvme_hostkv_attach,
	.detach = unvme_hostkv_detach,
	.read32 = emu_read32,
	.write32 = emu_write32,
	.read64 = emu_read64,
	.write64 = emu_write64,
	.dma_map = emu_dma_map,
	.dma_unmap = emu_dma_unmap,
};
