/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * External backend (ns=ext): the namespace's blocks live in media the device's creator
 * provides (emu_device.h), such as a host FTL built on a zoned namespace of another device.
 * The NVM executor checks every command as for any namespace; this file only turns host
 * transfers into iovecs and implements Compare with a read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/emu_device.h"
#include "hw/emu/ns/ns_backend.h"
#include "hw/emu/ns/ns_internal.h"

struct ns_ext {
	struct emu_ns_backend base;
	const struct emu_media_ops *ops;
	void *ctx;
};

static struct ns_ext *to_ext(struct emu_ns_backend *be)
{
	return (struct ns_ext *)be;
}

static uint16_t ext_read(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			 uint32_t len)
{
	struct iovec iov[EMU_XFER_MAX_SEGS];
	unsigned n = emu_xfer_iov(x, len, iov);
	return to_ext(be)->ops->read(to_ext(be)->ctx, off, iov, n, len);
}

static uint16_t ext_write(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			  uint32_t len, bool durable)
{
	struct iovec iov[EMU_XFER_MAX_SEGS];
	unsigned n = emu_xfer_iov(x, len, iov);
	return to_ext(be)->ops->write(to_ext(be)->ctx, off, iov, n, len, durable);
}

static uint16_t ext_compare(struct emu_ns_backend *be, uint64_t off, const struct emu_xfer *x,
			    uint32_t len)
{
	uint8_t *media = malloc(len);
	if (!media)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	struct iovec one = { .iov_base = media, .iov_len = len };
	uint16_t st = to_ext(be)->ops->read(to_ext(be)->ctx, off, &one, 1, len);
	const uint8_t *p = media;
	for (uint32_t i = 0; !st && i < x->nseg && len; i++) {
		uint32_t l = x->seg[i].len < len ? x->seg[i].len : len;
		if (memcmp(p, x->seg[i].addr, l) != 0)
			st = emu_ns_status(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, true);
		p += l;
		len -= l;
	}
	free(media);
	return st;
}

static uint16_t ext_zero(struct emu_ns_backend *be, uint64_t off, uint64_t len, bool deallocate,
			 bool durable)
{
	return to_ext(be)->ops->zero(to_ext(be)->ctx, off, len, deallocate, durable);
}

static int ext_flush(struct emu_ns_backend *be)
{
	return to_ext(be)->ops->flush(to_ext(be)->ctx);
}

static int ext_erase(struct emu_ns_backend *be)
{
	return to_ext(be)->ops->erase(to_ext(be)->ctx);
}

static void ext_destroy(struct emu_ns_backend *be)
{
	struct ns_ext *e = to_ext(be);
	e->ops->close(e->ctx);
	free(e);
}

static const struct emu_ns_backend_ops ext_ops = {
	.read = ext_read,
	.write = ext_write,
	.compare = ext_compare,
	.zero = ext_zero,
	.flush = ext_flush,
	.erase = ext_erase,
	.destroy = ext_destroy,
};

int emu_ns_ext_open(uint64_t capacity, const struct emu_media *media, struct emu_ns_backend **out,
		    char *err, size_t errlen)
{
	struct ns_ext *e = calloc(1, sizeof(*e));
	if (!e) {
		media->ops->close(media->ctx);
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->ops = media->ops;
	e->ctx = media->ctx;
	e->base.ops = &ext_ops;
	e->base.capacity = capacity;
	*out = &e->base;
	return 0;
}
