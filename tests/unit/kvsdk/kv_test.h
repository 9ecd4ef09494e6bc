/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the KV SDK tests: writing a JSON configuration to a temporary file and
 * bringing the SDK up on an emulated device.
 */
#ifndef KV_TEST_H
#define KV_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_apis.h"

static inline void kv_test_remove_configs(void);

/* Writes text to a fresh temporary file; returns its path (static storage, one per slot).
 * The files and the test log are removed at exit. */
static inline const char *kv_test_write_config(int slot, const char *fmt, ...)
{
	static char paths[8][64];
	static int cleanup_registered;
	if (!cleanup_registered++)
		atexit(kv_test_remove_configs);
	snprintf(paths[slot], sizeof(paths[slot]), "/tmp/kvsdk_test_%d_%d.json", (int)getpid(), slot);
	FILE *f = fopen(paths[slot], "w");
	if (!f)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	return paths[slot];
}

static inline void kv_test_remove_configs(void)
{
	for (int i = 0; i < 8; i++) {
		char p[64];
		snprintf(p, sizeof(p), "/tmp/kvsdk_test_%d_%d.json", (int)getpid(), i);
		unlink(p);
	}
	char log[64];
	snprintf(log, sizeof(log), "/tmp/kvsdk_test_%d.log", (int)getpid());
	unlink(log);
}

/* kv_sdk_init from JSON with one device; returns its handle or 0. */
static inline uint64_t kv_test_init(const char *devid, const char *ssd_type, const char *masks,
				    const char *extra)
{
	const char *path = kv_test_write_config(7,
		"{ \"ssd_type\": \"%s\", \"slab_size\": 64, \"slab_alloc_policy\": \"posix\", "
		"\"log_level\": 1, \"log_file\": \"/tmp/kvsdk_test_%d.log\" %s,\n"
		"  \"device_description\": { \"dev_id\": \"%s\" %s } }\n",
		ssd_type, (int)getpid(), extra ? extra : "", devid, masks ? masks : "");
	if (!path || kv_sdk_init(KV_SDK_INIT_FROM_JSON, (void *)path) != KV_SUCCESS)
		return 0;
	int n = 0;
	uint64_t h[NR_MAX_SSD];
	if (kv_get_device_handles(&n, h) != KV_SUCCESS || n != 1)
		return 0;
	return h[0];
}

static inline void kv_pair_init(kv_pair *kv, void *key, uint16_t klen, void *val, uint32_t vlen)
{
	memset(kv, 0, sizeof(*kv));
	kv->key.key = key;
	kv->key.length = klen;
	kv->value.value = val;
	kv->value.length = vlen;
}

#endif
