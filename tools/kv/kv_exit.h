/* SPDX-License-Identifier: BSD-3-Clause */
/* The KV tools' exit codes, the unvme tool's: 0 success, 1 a call failed or data did not
 * verify, 2 usage error, 3 the SDK could not be started (device or configuration). */
#ifndef KVTOOLS_EXIT_H
#define KVTOOLS_EXIT_H

enum { KVT_EXIT_OK = 0, KVT_EXIT_DEVICE = 1, KVT_EXIT_USAGE = 2, KVT_EXIT_HOST = 3 };

#endif
