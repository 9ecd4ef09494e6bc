/* SPDX-License-Identifier: BSD-3-Clause */
/* What the BlobFS commands (cmd_blobfs.c, cmd_fs.c) share. */
#ifndef UNVME_TOOL_CMD_BLOBFS_H
#define UNVME_TOOL_CMD_BLOBFS_H

#include <stdint.h>

#include "unvme/unvme.h"

/* The namespace nsid (0: the first active one) of devid, opened through the CLI. */
int cli_fs_ns(const char *cmd, const char *devid, uint32_t nsid, struct unvme_ns **out);
/* A BlobFS result as an exit code, printing blobfs_errmsg() on failure. */
int cli_fs_result(const char *cmd, int rc);

#endif
