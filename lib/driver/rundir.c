/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "rundir.h"

int unvme_rundir(char *out, size_t len)
{
	const char *env = getenv("UNVME_RUN_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;
	if (env && env[0])
		n = snprintf(out, len, "%s", env);
	else if (xdg && xdg[0] && stat(xdg, &st) == 0)
		n = snprintf(out, len, "%s/unvme", xdg);
	else if (geteuid() == 0 && stat("/run", &st) == 0)
		n = snprintf(out, len, "/run/unvme");
	else /* (a minimal system, an initramfs, may have no /run) */
		n = snprintf(out, len, "/tmp/unvme-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= len)
		return unvme_fail(-ENAMETOOLONG, "the run directory's path is too long");
	if (mkdir(out, 0700) != 0 && errno != EEXIST)
		return unvme_fail(-errno, "cannot create the run directory %s: %s", out, strerror(errno));
	if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
		return unvme_fail(-ENOTDIR, "the run directory %s is not a directory", out);
	if (st.st_uid != geteuid())
		return unvme_fail(-EPERM, "the run directory %s belongs to another user", out);
	return 0;
}
