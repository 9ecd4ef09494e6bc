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

#endif
