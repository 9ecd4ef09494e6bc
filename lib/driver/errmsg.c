/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>

#include "unvme/unvme.h"
#include "errmsg.h"

static __thread char errbuf[512];

int unvme_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

void unvme_errmsg_clear(void)
{
	errbuf[0] = '\0';
}

UNVME_API const char *unvme_errmsg(void)
{
	return errbuf;
}
