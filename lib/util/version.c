/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's version and build options (unvme.h), from the header meson generates. */
#include "unvme/unvme.h"
#include "unvme_build_config.h"

UNVME_API const char *unvme_version(void)
{
	return UNVME_BUILD_VERSION;
}

UNVME_API const char *unvme_build_options(void)
{
	return UNVME_BUILD_OPTIONS;
}
