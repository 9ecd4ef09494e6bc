/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftl://<device id>[?<FTL options>]: the host FTL on a zoned (or conventional) namespace of
 * another device, presented as a controller of its own with one NVM namespace. The FTL is the
 * media of an emulated controller (ns=ext), so every tool and the driver reach it through the
 * NVMe protocol exactly as any other device: unvme's I/O commands, unvme perf, the fio engine.
 *
 * The FTL options are what follows the id's last '?' when its first key is an FTL key (op,
 * gc, unit, format, ck, nsid, zone): "ftl://emu://z?ns=zns:1G:4096:/tmp/z.img?op=20&gc=cb".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hw/emu/emu_device.h"
#include "lib/driver/errmsg.h"
#include "lib/ftl/ftl.h"
#include "lib/hosttgt/hosttgt.h"

static uint16_t media_read(void *ctx, uint64_t off, const struct iovec *iov, unsigned n, uint32_t len)
{
	return ftl_read(ctx, off, iov, n, len);
}

static uint16_t media_write(void *ctx, uint64_t off, const struct iovec *iov, unsigned n,
			    uint32_t len, bool durable)
{
	return ftl_write(ctx, off, iov, n, len, durable);
}

static uint16_t media_zero(void *ctx, uint64_t off, uint64_t len, bool deallocate, bool durable)
{
	(void)deallocate; /* unmapped pages read as zeroes: both are a trim */
	return ftl_trim(ctx, off, len, durable);
}

static int media_flush(void *ctx)
{
	return ftl_flush(ctx);
}

static int media_erase(void *ctx)
{
	return ftl_erase(ctx);
}

static void media_close(void *ctx)
{
	ftl_close(ctx);
}

static const struct emu_media_ops ftl_media_ops = {
	.read = media_read,
	.write = media_write,
	.zero = media_zero,
	.flush = media_flush,
	.erase = media_erase,
	.close = media_close,
};

static const char *const ftl_keys[] = { "op", "gc", "unit", "format", "ck", "nsid", "zone", NULL };

int hosttgt_ftl_create(const char *address, struct emu_device **dev)
{
	const char *body = address + strlen(UNVME_FTL_SCHEME);
	char inner[4096];
	const char *opt_str;
	if (!hosttgt_opts_split(body, ftl_keys, inner, sizeof(inner), &opt_str) || !inner[0])
		return unvme_fail(-EINVAL, "%s: expected ftl://<device id>[?op=..&gc=..]", address);
	struct ftl_opts o;
	ftl_opts_default(&o);
	uint32_t nsid = 0;
	uint64_t zone_bytes = 0;
	char err[1024] = "";
	if (opt_str && ftl_parse_opts(opt_str, &o, &nsid, &zone_bytes, err, sizeof(err)))
		return unvme_fail(-EINVAL, "%s: %s", address, err);
	struct zdev *z;
	int rc = zdev_open(inner, nsid, zone_bytes, &z, err, sizeof(err));
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	struct ftl *f;
	rc = ftl_open(z, &o, &f, err, sizeof(err));
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	char uri[256];
	snprintf(uri, sizeof(uri), "emu://ftl?ns=ext:%" PRIu64 ":4096&serial=FTL%016" PRIX64
		 "&model=uNVMe Host FTL", ftl_capacity(f), hosttgt_hash(inner));
	struct emu_media m = { .ops = &ftl_media_ops, .ctx = f };
	rc = emu_device_create_media(uri, &m, 1, dev, err, sizeof(err)); /* owns f now */
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	return 0;
}
