/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated NVMe controller as the platform sees it: a card in a PCIe slot.
 *
 * This is the whole interface between the "hardware" (hw/emu) and the host side. The host
 * reaches the device only through BAR0 register reads and writes (including doorbells) and
 * through the IOMMU, which says which DMA addresses the device may touch. The device never
 * sees a driver structure; the driver never sees a device structure.
 */
#ifndef UNVME_EMU_DEVICE_H
#define UNVME_EMU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

struct emu_device;

/*
 * Creates (plugs in) a device described by an "emu://" URI; see docs/devices.md for the
 * grammar. On failure returns a negative errno and writes a one-line reason naming the bad
 * part of the URI or the file into err.
 */
int emu_device_create(const char *uri, struct emu_device **out, char *err, size_t errlen);

/* Unplugs the device: stops its engine, persists non-volatile state, closes backing files.
 * If the host never requested a shutdown (CC.SHN), the next power-on counts an unsafe shutdown. */
void emu_device_destroy(struct emu_device *dev);

/* Size of BAR0 in bytes (registers plus doorbells). */
size_t emu_bar0_size(const struct emu_device *dev);

/* MMIO. Offsets are bytes into BAR0; reads of undefined registers return 0, writes to
 * read-only or undefined registers are ignored, as on hardware. Thread safe: several host
 * threads may ring doorbells of different queues at once. */
uint32_t emu_mmio_read32(struct emu_device *dev, uint32_t off);
uint64_t emu_mmio_read64(struct emu_device *dev, uint32_t off);
void emu_mmio_write32(struct emu_device *dev, uint32_t off, uint32_t val);
void emu_mmio_write64(struct emu_device *dev, uint32_t off, uint64_t val);

/*
 * The IOMMU in front of the device. The host maps each DMA region before handing its bus
 * addresses (IOVAs) to the device; a data pointer outside every mapping makes the command
 * fail with Data Transfer Error, never a stray access. Thread safe against the device engine.
 * Returns 0, -EEXIST for an overlap, -ENOENT when unmapping something not mapped.
 */
int emu_iommu_map(struct emu_device *dev, void *vaddr, uint64_t iova, size_t len);
int emu_iommu_unmap(struct emu_device *dev, uint64_t iova, size_t len);

#endif
