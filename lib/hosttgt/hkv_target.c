/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostkv://<device id>[?<options>]: the host KV engine on a zoned or conventional namespace of
 * another device, presented as a controller with one key-value namespace (the emulated
 * controller's KV command sets over the engine, ns=kvext). The KV SDK opens it like a KV SSD:
 * "dev_id": "hostkv://0000:00:04.0" in its JSON configuration, ssd_type "kv".
 * Options after the id's last '?' when the first key is one of op, gc, format, unit, nsid, zone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hw/emu/emu_device.h"
#include "lib/driver/errmsg.h"
#include "lib/hostkv/hkv.h"
#include "lib/hosttgt/hosttgt.h"

static int m_put(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, const uint8_t *val,
		 uint32_t len, uint32_t off, unsigned flags, bool durable)
{
	return hkv_put(ctx, ks, key, klen, val, len, off, flags, durable);
}

static int m_get(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, uint32_t off,
		 const struct iovec *iov, unsigned iovcnt, uint32_t max, uint32_t *size, uint32_t *copied)
{
	return hkv_get(ctx, ks, key, klen, off, iov, iovcnt, max, size, copied);
}

static int m_del(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, bool durable)
{
	return hkv_del(ctx, ks, key, klen, durable);
}

static bool m_exist(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen)
{
	return hkv_exist(ctx, ks, key, klen);
}

static int m_flush(void *ctx)
{
	return hkv_flush(ctx);
}

static int m_erase(void *ctx)
{
	return hkv_erase(ctx);
}

static void m_usage(void *ctx, struct emu_kv_usage *out)
{
	struct hkv_usage u;
	hkv_usage(ctx, &u);
	*out = (struct emu_kv_usage){ .capacity = u.capacity, .used = u.used, .nr_keys = u.nr_keys,
				      .nr_keys_ks = { u.nr_keys_ks[0], u.nr_keys_ks[1] },
				      .host_bytes = u.host_bytes, .media_bytes = u.media_bytes,
				      .compactions = u.gc_runs };
}

static int m_keys(void *ctx, uint8_t ks, bool (*filter)(const uint8_t *, uint8_t, const void *),
		  const void *arg, uint8_t **buf, size_t *len, size_t *count)
{
	return hkv_keys(ctx, ks, filter, arg, buf, len, count);
}

static void m_close(void *ctx)
{
	hkv_close(ctx);
}

static const struct emu_kv_media_ops hkv_media_ops = {
	.put = m_put,
	.get = m_get,
	.del = m_del,
	.exist = m_exist,
	.flush = m_flush,
	.erase = m_erase,
	.usage = m_usage,
	.keys = m_keys,
	.close = m_close,
};

static const char *const hkv_keys_list[] = { "op", "gc", "format", "unit", "nsid", "zone", NULL };

int hosttgt_hostkv_create(const char *address, struct emu_device **dev)
{
	const char *body = address + strlen(UNVME_HOSTKV_SCHEME);
	char inner[4096];
	const char *opt_str;
	if (!hosttgt_opts_split(body, hkv_keys_list, inner, sizeof(inner), &opt_str) || !inner[0])
		return unvme_fail(-EINVAL, "%s: expected hostkv://<device id>[?op=..&gc=..]", address);
	struct hkv_opts o;
	hkv_opts_default(&o);
	uint32_t nsid = 0;
	uint64_t zone_bytes = 0;
	char err[1024] = "";
	if (opt_str && hkv_parse_opts(opt_str, &o, &nsid, &zone_bytes, err, sizeof(err)))
		return unvme_fail(-EINVAL, "%s: %s", address, err);
	struct zdev *z;
	int rc = zdev_open(inner, nsid, zone_bytes, &z, err, sizeof(err));
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	struct hkv *s;
	rc = hkv_open(z, &o, &s, err, sizeof(err));
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	struct hkv_usage u;
	hkv_usage(s, &u);
	char uri[256];
	snprintf(uri, sizeof(uri), "emu://hostkv?ns=kvext:%" PRIu64 "&serial=HKV%016" PRIX64
		 "&model=uNVMe Host KV", u.capacity, hosttgt_hash(inner));
	struct emu_media m = { .kv_ops = &hkv_media_ops, .ctx = s };
	rc = emu_device_create_media(uri, &m, 1, dev, err, sizeof(err)); /* owns s now */
	if (rc)
		return unvme_fail(rc, "%s: %s", address, err);
	return 0;
}
