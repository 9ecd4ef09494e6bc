/* SPDX-License-Identifier: BSD-3-Clause */
/* The transports this build enabled: meson passes their names as TRANSPORTS ("emu,ftl,..."). */
#ifndef UNVME_TEST_ENABLED_TRANSPORTS_H
#define UNVME_TEST_ENABLED_TRANSPORTS_H

#include <stdbool.h>
#include <string.h>

static inline bool transport_enabled(const char *name)
{
	char list[] = TRANSPORTS;
	for (char *save, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, name) == 0)
			return true;
	return false;
}

#endif
