/* SPDX-License-Identifier: BSD-3-Clause */
/* Environment switches shared by every part of the tree (internal). */
#ifndef UNVME_COMMON_ENV_H
#define UNVME_COMMON_ENV_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Whether the library's notices go to stderr (lib/util/log.c): only when the program asked
 * (unvme_set_log) or the user set UNVME_LOG to a non-empty value other than "0" (which wins
 * over UNVME_QUIET, the older switch).
 */
bool unvme_log_on(void);

/*
 * Whether a failure that ends an initialisation (kv_sdk_init) is printed on stderr besides
 * its message (kv_errmsg, unvme_errmsg): by default yes, as a storage engineer expects of a
 * program that cannot start; not when the program reports errors itself (unvme_set_log(0))
 * or the user silenced the library (UNVME_LOG=0, or UNVME_QUIET without UNVME_LOG).
 */
bool unvme_errors_on(void);
/* The program's own choice: -1 when it made none (the environment decides), else 0 or 1. */
int unvme_log_setting(void);

#endif
