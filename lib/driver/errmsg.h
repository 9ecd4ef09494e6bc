/* SPDX-License-Identifier: BSD-3-Clause */
/* The thread-local "why did that fail" message behind unvme_errmsg(). */
#ifndef UNVME_DRIVER_ERRMSG_H
#define UNVME_DRIVER_ERRMSG_H

/* Records a reason for the calling thread's failure; returns err so callers can
 * `return unvme_fail(-EINVAL, "...")`. */
int unvme_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void unvme_errmsg_clear(void);

#endif
