/* SPDX-License-Identifier: BSD-3-Clause */
/* What the host KV engine's tests share: opening a store on a device id with options. */
#ifndef UNVME_TEST_HKV_H
#define UNVME_TEST_HKV_H

#include <stdio.h>

#include "lib/hostkv/hkv_internal.h"

/* The engine on uri with the options string opts (NULL: none); NULL with err set on failure. */
static inline struct hkv *open_kv(const char *uri, const char *opts, char *err, size_t errlen)
{
	struct hkv_opts o;
	hkv_opts_default(&o);
	uint32_t nsid = 0;
	uint64_t zb = 0;
	if (opts && hkv_parse_opts(opts, &o, &nsid, &zb, err, errlen))
		return NULL;
	struct zdev *z;
	if (zdev_open(uri, nsid, zb, &z, err, errlen))
		return NULL;
	struct hkv *s;
	if (hkv_open(z, &o, &s, err, errlen))
		return NULL;
	return s;
}

static inline struct hkv *must_open(const char *uri, const char *opts)
{
	char err[512] = "";
	struct hkv *s = open_kv(uri, opts, err, sizeof(err));
	if (!s)
		fprintf(stderr, "  cannot open the KV engine on %s: %s\n", uri, err);
	return s;
}

#endif
