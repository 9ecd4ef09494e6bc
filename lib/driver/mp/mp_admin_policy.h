/* SPDX-License-Identifier: BSD-3-Clause */
/* The admin commands a multi-process server runs for a client (mp_admin_policy.c). */
#ifndef UNVME_DRIVER_MP_ADMIN_POLICY_H
#define UNVME_DRIVER_MP_ADMIN_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"

/* May a client send cmd, whose data buffer holds len bytes? 0 with *xfer = the bytes the
 * command moves (the server's buffer for it), or -EPERM / -EOPNOTSUPP (not for a client) /
 * -EINVAL (a length the server will not run) with the reason in why. Ownership of the
 * queues an Abort or a Delete I/O queue names is the caller's to check. */
int mp_admin_check(const struct nvme_sqe *cmd, uint32_t len, uint32_t page_size,
		   uint32_t max_xfer, uint32_t *xfer, char *why, size_t whylen);

/* Clears what the device would take from the client as-is: the data and metadata pointers,
 * the fused and PSDT bits, the command id. */
void mp_admin_scrub(struct nvme_sqe *cmd);

#endif
