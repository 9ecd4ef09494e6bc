/* SPDX-License-Identifier: BSD-3-Clause */
/* Environment switches shared by every part of the tree (internal). */
#ifndef UNVME_COMMON_ENV_H
#define UNVME_COMMON_ENV_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * UNVME_QUIET silences the library's notices on stderr (automatic resets, the no-hugepages
 * notice, SDK warnings): any non-empty value other than "0" does. Unset, empty or "0" keeps
 * them, so UNVME_QUIET=0 means what it says.
 */
static inline bool unvme_env_quiet(void)
{
	const char *v = getenv("UNVME_QUIET");
	return v && *v && strcmp(v, "0") != 0;
}

#endif
