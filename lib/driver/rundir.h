/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run directory: where processes that share devices meet (lock files, Unix sockets).
 * UNVME_RUN_DIR if set, else $XDG_RUNTIME_DIR/unvme, else /run/unvme for root, else
 * /tmp/unvme-<uid>; created with mode 0700 (one user's processes share with each other only).
 */
#ifndef UNVME_DRIVER_RUNDIR_H
#define UNVME_DRIVER_RUNDIR_H

#include <stddef.h>

/* The directory's path in out (created if missing): 0, or a negative errno with a message. */
int unvme_rundir(char *out, size_t len);

#endif
