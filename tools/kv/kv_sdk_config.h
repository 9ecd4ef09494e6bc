/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting the SDK from the tools' command-line options. The tools write the configuration as
 * a temporary JSON file rather than filling a kv_sdk struct, because kv_sdk.dev_id holds only
 * 31 characters and emu:// URIs (with file paths) are usually longer. The file is removed as
 * soon as kv_sdk_init has read it.
 */
#ifndef KVTOOLS_SDK_CONFIG_H
#define KVTOOLS_SDK_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "kv_types.h"

struct kvt_dev_cfg {
	const char *devid;
	uint64_t core_mask;   /* 0: let the SDK choose (its resource scheduler) */
	uint64_t sync_mask;
	uint64_t cq_mask;
	uint32_t queue_depth; /* 0: the SDK's default */
};

struct kvt_sdk_cfg {
	int ssd_type;         /* KV_TYPE_SSD or LBA_TYPE_SSD */
	bool cache;
	uint32_t slab_mb;     /* 0: the SDK's default */
	int ndev;
	struct kvt_dev_cfg dev[NR_MAX_SSD];
};

/* The n-th CPU (0-based) this process may run on, wrapping around; 0 if none is known. */
int kvt_cpu(int n);
/* A one-core configuration for devid: sync on the first allowed CPU, or async on it with the
 * completion thread on the second one (on a one-CPU machine, async masks are left to the
 * SDK's resource scheduler). */
void kvt_cfg_single(struct kvt_sdk_cfg *cfg, const char *devid, bool async, uint32_t qd);
/* Writes cfg as JSON to a new temporary file; path receives its name. 0, or -1 with a
 * message on stderr prefixed by prog. */
int kvt_cfg_write(const struct kvt_sdk_cfg *cfg, const char *prog, char *path, size_t pathlen);
/* The tools print the SDK's reasons themselves: the library's own lines off, unless the user
 * asked for them (UNVME_LOG, unvme -v). Before any kv_sdk_init or kv_sdk_load_option. */
void kvt_quiet_library(void);
/* kv_sdk_init from a JSON file. On failure prints "prog: cannot initialize the SDK from
 * <path>: <result>: <reason>" with the SDK's own reason (kv_errmsg), and returns its code
 * (non-zero). Both starts print the reason themselves, so the library's own line is off. */
int kvt_sdk_start(const char *json_path, const char *prog);
/* Writes cfg to a temporary file, starts the SDK from it and removes the file. */
int kvt_sdk_start_cfg(const struct kvt_sdk_cfg *cfg, const char *prog);

#endif
