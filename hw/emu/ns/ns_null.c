/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Null backend: a device that discards data. Reads leave the host buffer untouched, writes
 * are dropped, compares always match. Everything before the data moves still happens as on
 * the memory namespace: the command is checked (LBA range, MDTS), its PRPs are walked and
 * every page is translated through the IOMMU (nvm_io.c maps before calling a backend), so a
 * bad data pointer fails with the same status, and the I/O is counted. What null leaves out
 * is the copy itself: its per-I/O figure is the driver and the controller, DMA mapping
 * included, without the bytes (the memory namespace's figure adds them).
 */
#include <errno.h>
#include <stdlib.h>

#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"

static uint16_t null_read(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			  uint32_t len)
{
	(void)be, (void)off, (void)x, (void)len;
	return 0;
}

static uint16_t null_write(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			   uint32_t len, bool durable)
{
	(void)be, (void)off, (void)x, (void)len, (void)durable;
	return 0;
}

static uint16_t null_compare(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			     uint32_t len)
{
	(void)be, (void)off, (void)x, (void)len;
	return 0;
}

static uint16_t null_zero(struct emu_ns_backend *be, uint64_t off, uint64_t len, bool deallocate,
			  bool durable)
{
	(void)be, (void)off, (void)len, (void)deallocate, (void)durable;
	return 0;
}

static int null_flush(struct emu_ns_backend *be)
{
	(void)be;
	return 0;
}

static void null_destroy(struct emu_ns_backend *be)
{
	free(be);
}

static const struct emu_ns_backend_ops null_ops = {
	.read = null_read,
	.write = null_write,
	.compare = null_compare,
	.zero = null_zero,
	.flush = null_flush,
	.erase = null_flush, /* nothing stored, nothing to erase */
	.destroy = null_destroy,
};

int emu_ns_null_open(uint64_t capacity, struct emu_ns_backend **out, char *err, size_t errlen)
{
	struct emu_ns_backend *be = calloc(1, sizeof(*be));
	if (!be) {
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	be->ops = &null_ops;
	be->capacity = capacity;
	*out = be;
	return 0;
}
