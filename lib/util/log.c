/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether the library may print its notices on stderr (automatic resets, the no-hugepages
 * notice, SDK warnings, misuse such as freeing memory it did not allocate). A library must
 * not write on a program's stderr unasked, so they are off until the program calls
 * unvme_set_log(1) or the user sets UNVME_LOG; UNVME_QUIET, the older switch, still silences
 * them when the program has not decided (UNVME_LOG, the explicit ask, wins over it).
 * Errors that end an initialisation are the exception: printed unless silenced
 * (unvme_errors_on, lib/common/env.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/env.h"
#include "unvme/unvme.h"

/* -1: the environment decides; 0 or 1: the program did */
static atomic_int log_setting = -1;

UNVME_API void unvme_set_log(int on)
{
	atomic_store(&log_setting, on < 0 ? -1 : on ? 1 : 0);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

bool unvme_log_on(void)
{
	int s = atomic_load(&log_setting);
	if (s >= 0)
		return s == 1;
	/* UNVME_LOG asks; UNVME_QUIET (the older switch) can only say no, which is the default */
	return env_on("UNVME_LOG");
}

int unvme_log_setting(void)
{
	return atomic_load(&log_setting);
}

bool unvme_errors_on(void)
{
	int s = atomic_load(&log_setting);
	if (s >= 0)
		return s == 1;
	const char *v = getenv("UNVME_LOG");
	if (v && *v)
		return strcmp(v, "0") != 0;
	return !env_on("UNVME_QUIET");
}
